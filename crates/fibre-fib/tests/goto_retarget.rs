//! Where a `goto` points once its target rule is deleted, as Linux 6.18
//! answered in a network namespace: `fib_nl_delrule` moves every goto that
//! pointed at the deleted rule to the next rule of the same priority (the
//! one after it in the list), else leaves it `[unresolved]`; and
//! `fib_nl_newrule` resolves every unresolved goto to a new rule of the
//! priority it names. The rule list is followed on `route_get`.

use std::net::IpAddr;

use fibre_fib::*;

/// d0 routes 10.9.0.0/16 in tables 100, 101 and 102; 100: goto 200.
const BASE: &str = "link add d0 type dummy
link set d0 up
addr add 10.0.0.1/24 dev d0
route add 10.9.0.0/16 dev d0 table 100
route add 10.9.0.0/16 dev d0 table 101
route add 10.9.0.0/16 dev d0 table 102
rule add pref 100 goto 200
";

/// The table `route get 10.9.1.1` answers from after `lines`, or the error.
fn table_after(lines: &str) -> String {
    let text = format!("{BASE}{lines}");
    let (fib, skipped) =
        config::apply_str(&Fib::new(), "t.conf", &text, false).unwrap_or_else(|e| panic!("{e}"));
    assert!(skipped.is_empty(), "{skipped:?}");
    let dst: IpAddr = "10.9.1.1".parse().unwrap();
    match fib.route_get(&RouteGetRequest::to(dst)) {
        Ok(answer) => table_name(answer.table),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_goto_follows_the_next_rule_of_its_priority() {
    let two = "rule add pref 200 lookup 100\nrule add pref 200 lookup 101\n";
    assert_eq!(table_after(two), "100");
    // The target goes: the goto takes the next rule at 200.
    assert_eq!(
        table_after(&format!("{two}rule del pref 200 lookup 100\n")),
        "101"
    );
    // A rule added at 200 goes after 101, and the goto stays on 101 until
    // that is deleted too; then it takes the one after it.
    let later = format!(
        "{two}rule del pref 200 lookup 100\nrule add pref 200 lookup 102\n\
         rule add pref 150 fwmark 9 lookup 101\n"
    );
    assert_eq!(table_after(&later), "101");
    assert_eq!(
        table_after(&format!("{later}rule del pref 200 lookup 101\n")),
        "102"
    );
}

#[test]
fn an_unresolved_goto_takes_a_new_rule_of_its_priority() {
    let gone = "rule add pref 200 lookup 100\nrule del pref 200\n";
    // Unresolved: the goto is skipped, and main has no 10.9/16.
    assert_eq!(
        table_after(gone),
        "RTNETLINK answers: Network is unreachable"
    );
    assert_eq!(
        table_after(&format!("{gone}rule add pref 200 lookup 101\n")),
        "101"
    );
}
