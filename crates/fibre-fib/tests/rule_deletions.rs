//! Rule deletions and the kernel's fast paths, as Linux 6.18 answered them
//! in a network namespace:
//!
//! - IPv4: a successful `rule del` marks the rules custom, as an add does
//!   (`fib4_rule_delete` calls `fib_unmerge` and sets
//!   `fib_has_custom_rules`); from then on lookups follow the rules and
//!   local routes answer `table local`. A failed delete changes nothing.
//! - IPv6: only an add marks the rules custom (`fib6_rule_configure`);
//!   until then `fib6_rule_lookup` looks in local and then main whatever
//!   the rule list says, so deleting the default rules changes nothing.
//!
//! Every answer is checked on `route_get` (output and input form, and
//! `fibmatch`) and on the data path (the output and input batches of both
//! families, and a reader of `fibre_fib::shared`), which must agree.

use std::net::IpAddr;

use fibre_fib::shared::{BatchMode, FibWriter};
use fibre_fib::*;

/// d0 holds 192.0.2.1/24 and 2001:db8::1/64; d1 is a second link to come
/// in by (input lookups).
const BASE: &str = "link set lo up
link add d0 type ifb
link add d1 type ifb
link set d0 up
link set d1 up
addr add 192.0.2.1/24 dev d0
addr add 198.51.100.1/24 dev d1
addr add 2001:db8::1/64 dev d0
addr add 2001:db8:1::1/64 dev d1
";

fn fib_with(lines: &str) -> Fib {
    let text = format!("{BASE}{lines}");
    let (fib, diagnostics) =
        config::apply_str(&Fib::new(), "t.conf", &text, false).unwrap_or_else(|e| panic!("{e}"));
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    fib
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// `kind dev DEV table T` of an answer, or the error text.
fn summary(res: Result<RouteAnswer, KernelError>) -> String {
    match res {
        Ok(a) => format!(
            "{} dev {} table {}",
            a.kind.name(),
            a.dev.unwrap_or_default(),
            table_name(a.table)
        ),
        Err(e) => e.to_string(),
    }
}

/// `ip route get DST`.
fn get(fib: &Fib, dst: &str) -> String {
    summary(fib.route_get(&RouteGetRequest::to(ip(dst))))
}

/// `ip route get fibmatch DST`: the matched route's type and table.
fn get_fibmatch(fib: &Fib, dst: &str) -> String {
    let mut req = RouteGetRequest::to(ip(dst));
    req.fibmatch = true;
    match fib.route_get(&req) {
        Ok(a) => format!("{} table {}", a.route.kind.name(), table_name(a.table)),
        Err(e) => e.to_string(),
    }
}

/// `ip route get DST from SRC iif d1`.
fn get_input(fib: &Fib, dst: &str, src: &str) -> String {
    let mut req = RouteGetRequest::to(ip(dst));
    req.src = Some(ip(src));
    req.iif = Some("d1".into());
    summary(fib.route_get(&req))
}

fn index(fib: &Fib, name: &str) -> LinkIndex {
    fib.link_by_name(name).unwrap().index
}

/// A data-path answer in `summary`'s words.
fn forward_summary(fib: &Fib, res: Result<(RouteType, LinkIndex, TableId), Errno>) -> String {
    match res {
        Ok((kind, dev, table)) => format!(
            "{} dev {} table {}",
            kind.name(),
            fib.link(dev).map(|l| l.name.clone()).unwrap_or_default(),
            table_name(table)
        ),
        Err(e) => KernelError::new(e).to_string(),
    }
}

/// The output data path's answer for `dst` (either family).
fn forward(fib: &Fib, dst: &str) -> String {
    let res = match ip(dst) {
        IpAddr::V4(a) => {
            let keys = [FlowKeyV4 {
                dst: u32::from(a),
                ..Default::default()
            }];
            let mut out = [Err(Errno::Inval)];
            fib.lookup_output_batch_v4(&keys, &mut out);
            out[0].map(|f| (f.kind, f.dev, f.table))
        }
        IpAddr::V6(a) => {
            let keys = [FlowKeyV6 {
                dst: u128::from(a),
                ..Default::default()
            }];
            let mut out = [Err(Errno::Inval)];
            fib.lookup_output_batch_v6(&keys, &mut out);
            out[0].map(|f| (f.kind, f.dev, f.table))
        }
    };
    forward_summary(fib, res)
}

/// The input data path's answer for `dst` from `src` coming in on d1.
fn forward_input(fib: &Fib, dst: &str, src: &str) -> String {
    let iif = index(fib, "d1");
    let res = match (ip(dst), ip(src)) {
        (IpAddr::V4(d), IpAddr::V4(s)) => {
            let keys = [FlowKeyV4 {
                dst: u32::from(d),
                src: u32::from(s),
                ..Default::default()
            }];
            let mut out = [Err(Errno::Inval)];
            fib.lookup_input_batch_v4(iif, &keys, &mut out);
            out[0].map(|f| (f.kind, f.dev, f.table))
        }
        (IpAddr::V6(d), IpAddr::V6(s)) => {
            let keys = [FlowKeyV6 {
                dst: u128::from(d),
                src: u128::from(s),
                ..Default::default()
            }];
            let mut out = [Err(Errno::Inval)];
            fib.lookup_input_batch_v6(iif, &keys, &mut out);
            out[0].map(|f| (f.kind, f.dev, f.table))
        }
        _ => panic!("mixed families"),
    };
    forward_summary(fib, res)
}

/// The same configuration applied through `fibre_fib::shared`, the
/// lookup made by a reader of the published copy.
fn shared_forward(lines: &str, dst: &str) -> String {
    let text = format!("{BASE}{lines}");
    let parsed = config::parse_str("t.conf", &text);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let commands: Vec<Command> = parsed.statements.into_iter().map(|s| s.command).collect();
    let mut writer = FibWriter::new(Fib::new());
    // The base in one batch and each rule command in its own, so that
    // both copies of the left-right pair see the flags set.
    let base = commands.len() - lines.lines().count();
    writer
        .apply_batch(&commands[..base], BatchMode::AllOrNothing)
        .unwrap();
    for command in &commands[base..] {
        writer
            .apply_batch(std::slice::from_ref(command), BatchMode::AllOrNothing)
            .unwrap();
    }
    // A reader registered now: an online one would hold the grace periods
    // of the batches above up.
    let mut reader = writer.shared().reader();
    reader.batch(|snapshot| forward(snapshot.fib(), dst))
}

/// Every way of asking: route_get (plain and fibmatch) and both data paths
/// (direct and shared) must give `expected` for an output lookup of `dst`.
fn assert_output(lines: &str, dst: &str, expected: &str) {
    let fib = fib_with(lines);
    assert_eq!(get(&fib, dst), expected, "route get {dst} after {lines:?}");
    assert_eq!(forward(&fib, dst), expected, "output batch {dst}");
    assert_eq!(shared_forward(lines, dst), expected, "shared {dst}");
    let kind_and_table = match expected.split_once(" dev ") {
        Some((kind, rest)) => format!("{kind} table {}", rest.rsplit(' ').next().unwrap()),
        None => expected.to_string(),
    };
    assert_eq!(
        get_fibmatch(&fib, dst),
        kind_and_table,
        "route get fibmatch {dst}"
    );
}

/// The input form (`iif d1 from SRC`) on route_get and the input batch.
fn assert_input(lines: &str, dst: &str, src: &str, expected: &str) {
    let fib = fib_with(lines);
    assert_eq!(get_input(&fib, dst, src), expected, "route get {dst} iif");
    assert_eq!(forward_input(&fib, dst, src), expected, "input batch {dst}");
}

#[test]
fn merged_tables_answer_as_main_before_any_rule_change() {
    assert_output("", "192.0.2.1", "local dev lo table main");
    assert_output("", "192.0.2.5", "unicast dev d0 table main");
    assert_input("", "192.0.2.1", "198.51.100.9", "local dev lo table main");
}

#[test]
fn deleting_the_local_rule_unmerges_and_main_answers() {
    // Kernel: `rule del pref 0`, then `route get 192.0.2.1` is
    // "192.0.2.1 dev d0 src 192.0.2.1": table local is no longer looked in.
    let del = "rule del pref 0\n";
    assert_output(del, "192.0.2.1", "unicast dev d0 table main");
    assert_output(del, "192.0.2.5", "unicast dev d0 table main");
    assert_input(
        del,
        "192.0.2.1",
        "198.51.100.9",
        "unicast dev d0 table main",
    );
}

#[test]
fn deleting_the_main_rule_makes_main_unreachable() {
    // Kernel: "RTNETLINK answers: Network is unreachable" for 192.0.2.5,
    // while the local rule still answers with table local.
    let del = "rule del pref 32766\n";
    assert_output(
        del,
        "192.0.2.5",
        "RTNETLINK answers: Network is unreachable",
    );
    assert_output(del, "192.0.2.1", "local dev lo table local");
    assert_input(del, "192.0.2.1", "198.51.100.9", "local dev lo table local");
}

#[test]
fn deleting_the_default_table_rule_unmerges_too() {
    // Kernel: after `rule del pref 32767` local answers name table local.
    let del = "rule del pref 32767\n";
    assert_output(del, "192.0.2.1", "local dev lo table local");
    assert_output(del, "192.0.2.5", "unicast dev d0 table main");
}

#[test]
fn an_added_rule_deleted_again_leaves_the_tables_unmerged() {
    let lines = "rule add pref 10 lookup 100\nrule del pref 10\n";
    assert_output(lines, "192.0.2.1", "local dev lo table local");
    // Deleted and added back: the same rules as new, but unmerged.
    let lines = "rule del pref 0\nrule add pref 0 lookup local\n";
    assert_output(lines, "192.0.2.1", "local dev lo table local");
    assert_input(
        lines,
        "192.0.2.1",
        "198.51.100.9",
        "local dev lo table local",
    );
}

#[test]
fn a_failed_delete_changes_nothing() {
    // Kernel: "RTNETLINK answers: No such file or directory" and the
    // answer stays the merged one.
    let err = config::apply_str(&fib_with(""), "t.conf", "rule del pref 5\n", false).unwrap_err();
    assert!(
        err.to_string()
            .contains("RTNETLINK answers: No such file or directory"),
        "{err}"
    );
    let (fib, diagnostics) =
        config::apply_str(&fib_with(""), "t.conf", "rule del pref 5\n", true).unwrap();
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(get(&fib, "192.0.2.1"), "local dev lo table main");
}

#[test]
fn ipv6_deletions_keep_the_fast_path() {
    // Kernel: after `-6 rule del pref 32766` (and even with no rule left)
    // main still answers: `fib6_rule_lookup` reads no rule until one is added.
    for lines in [
        "-6 rule del pref 32766\n",
        "-6 rule del pref 0\n",
        "-6 rule del pref 32766\n-6 rule del pref 0\n",
    ] {
        assert_output(lines, "2001:db8::5", "unicast dev d0 table main");
        assert_output(lines, "2001:db8::1", "local dev lo table local");
        assert_input(
            lines,
            "2001:db8::5",
            "2001:db8:1::9",
            "unicast dev d0 table main",
        );
    }
    // An IPv4 rule change does not end IPv6's fast path.
    let lines = "rule add pref 10 lookup 100\n-6 rule del pref 32766\n";
    assert_output(lines, "2001:db8::5", "unicast dev d0 table main");
}

#[test]
fn an_ipv6_add_ends_the_fast_path_for_good() {
    // Kernel: `-6 rule add pref 10 goto 20` (unresolved) then deleting
    // main: "Network is unreachable"; an added rule deleted again leaves
    // the rules in charge.
    for lines in [
        "-6 rule add pref 10 goto 20\n-6 rule del pref 32766\n",
        "-6 rule add pref 5 unreachable\n-6 rule del pref 5\n-6 rule del pref 32766\n",
    ] {
        assert_output(
            lines,
            "2001:db8::5",
            "RTNETLINK answers: Network is unreachable",
        );
        assert_output(lines, "2001:db8::1", "local dev lo table local");
    }
    // A refused add (table 0 is "Invalid table" for IPv6) sets nothing.
    let (fib, diagnostics) = config::apply_str(
        &fib_with(""),
        "t.conf",
        "-6 rule add lookup 0\n-6 rule del pref 32766\n",
        true,
    )
    .unwrap();
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(get(&fib, "2001:db8::5"), "unicast dev d0 table main");
}

#[test]
fn an_ipv6_add_does_not_unmerge_ipv4() {
    assert_output(
        "-6 rule add pref 10 lookup 100\n",
        "192.0.2.1",
        "local dev lo table main",
    );
}
