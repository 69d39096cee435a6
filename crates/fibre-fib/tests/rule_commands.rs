//! `rule add|del` lines accepted and refused as iproute2 6.1 and Linux
//! 6.18 did in a network namespace (`ip -batch`), with their messages.

use fibre_fib::*;

/// The FIB after `lines`, or every refusal's text.
fn apply(lines: &str) -> Result<Fib, String> {
    let text = format!("link add d0 type ifb\n{lines}\n");
    config::apply_str(&Fib::new(), "t.conf", &text, false)
        .map(|(fib, _)| fib)
        .map_err(|e| e.to_string())
}

fn refusal(lines: &str) -> String {
    match apply(lines) {
        Ok(_) => panic!("accepted: {lines}"),
        Err(e) => e,
    }
}

/// The rules the lines added, as (priority, action), defaults left out.
fn added(lines: &str, family: Family) -> Vec<(u32, RuleAction)> {
    let fib = apply(lines).unwrap_or_else(|e| panic!("{lines}: {e}"));
    fib.rules(family)
        .iter()
        .filter(|r| r.protocol != Protocol::KERNEL)
        .map(|r| (r.priority, r.action))
        .collect()
}

/// The one rule the line added.
fn only_rule(line: &str, family: Family) -> Rule {
    let fib = apply(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    let mut added = fib
        .rules(family)
        .iter()
        .filter(|r| r.protocol != Protocol::KERNEL);
    let rule = added.next().expect("a rule").clone();
    assert!(added.next().is_none());
    rule
}

#[test]
fn bare_add_and_del_are_refused() {
    // ip: `"ip rule del" requires arguments.`, then "Command failed".
    for (line, verb) in [
        ("rule del", "del"),
        ("-6 rule del", "del"),
        ("rule add", "add"),
        ("-6 rule add", "add"),
    ] {
        let e = refusal(line);
        assert!(
            e.contains(&format!("(\"ip rule {verb}\" requires arguments.)")),
            "{line}: {e}"
        );
    }
    // Nothing was deleted: the local rule is still there.
    assert_eq!(apply("").unwrap().rules(Family::V4)[0].priority, 0);
}

#[test]
fn table_zero_takes_the_first_free_table() {
    // Kernel: `rule add lookup 0` shows `lookup 1`, the next `lookup 2`
    // (fib_empty_table); `unicast` without a table is the same request.
    assert_eq!(
        added("rule add lookup 0\nrule add pref 10 table 0", Family::V4),
        [(10, RuleAction::Lookup(2)), (32765, RuleAction::Lookup(1))]
    );
    assert_eq!(
        added(
            "link set d0 up\nroute add 10.0.0.0/8 dev d0 table 1\nrule add unicast",
            Family::V4
        ),
        [(32765, RuleAction::Lookup(2))]
    );
    // IPv6: "Error: Invalid table."
    assert!(refusal("-6 rule add lookup 0").contains("Error: Invalid table."));
}

#[test]
fn delete_with_table_zero_matches_any_rule() {
    // Kernel: `rule del lookup 0` deleted the first rule, pref 0.
    let fib = apply("rule del lookup 0").unwrap();
    let prios: Vec<u32> = fib.rules(Family::V4).iter().map(|r| r.priority).collect();
    assert_eq!(prios, [32766, 32767]);
}

#[test]
fn abbreviations_resolve_in_iproute2_order() {
    assert_eq!(only_rule("rule add p 5 lookup 100", Family::V4).priority, 5);
    assert_eq!(
        only_rule("rule add prio 5 lookup 100", Family::V4).priority,
        5
    );
    assert_eq!(
        only_rule("rule add d 0x10 lookup 100", Family::V4).tos,
        0x10
    );
    assert_eq!(
        only_rule("rule add s 5 lookup main", Family::V4).suppress_prefixlength,
        Some(5)
    );
    assert_eq!(
        only_rule("rule add suppress_i 5 lookup main", Family::V4).suppress_ifgroup,
        Some(5)
    );
    for (line, action) in [
        ("rule add n", RuleAction::Nop),
        ("rule add b", RuleAction::Nop), // broadcast (RTN_BROADCAST 3 is FR_ACT_NOP)
        ("rule add brd", RuleAction::Nop),
        ("rule add 3", RuleAction::Nop),
        ("rule add bl", RuleAction::Blackhole),
        ("rule add type 6", RuleAction::Blackhole),
        ("rule add u", RuleAction::Unreachable),
        ("rule add proh", RuleAction::Prohibit),
        ("rule add g 40000", RuleAction::Goto(40000)),
        // The action is the type; the table is kept apart from it.
        ("rule add goto 40000 lookup 100", RuleAction::Goto(40000)),
        ("rule add lookup 100 goto 40000", RuleAction::Goto(40000)),
        ("rule add blackhole lookup 100", RuleAction::Blackhole),
    ] {
        assert_eq!(only_rule(line, Family::V4).action, action, "{line}");
    }
    // `pr` and `pro` are `preference`/`protocol` with no value.
    assert!(refusal("rule add pr").contains("(Command line is not complete. Try option \"help\")"));
    // `local` is RTN_LOCAL, 2: the kernel's goto without a target.
    assert!(refusal("rule add local").contains("(Error: Missing goto target for action goto.)"));
    assert!(refusal("rule add l 256")
        .contains("(Error: argument \"l\" is wrong: Failed to parse rule type)"));
}

#[test]
fn numbers_and_their_messages() {
    assert!(refusal("rule add pref 4294967296 lookup 100")
        .contains("(Error: argument \"4294967296\" is wrong: preference value is invalid)"));
    assert!(refusal("rule add goto x").contains("(Error: argument \"x\" is wrong: invalid target)"));
    assert!(refusal("rule add fwmark 5/ lookup 100")
        .contains("(Error: argument \"\" is wrong: fwmask value is invalid)"));
    assert!(refusal("rule add tos 256 lookup 100")
        .contains("(Error: argument \"256\" is wrong: TOS value is invalid)"));
    // suppress_prefixlength: any non-negative int for ip and the kernel.
    assert_eq!(
        only_rule("rule add suppress_prefixlength 129 lookup main", Family::V4)
            .suppress_prefixlength,
        Some(129)
    );
    assert!(refusal("rule add suppress_prefixlength -1 lookup main")
        .contains("(Error: argument \"-1\" is wrong: suppress_prefixlength value is invalid)"));
    assert_eq!(
        only_rule("rule add suppress_prefixlength 256 lookup main", Family::V4)
            .suppress_prefixlength,
        Some(256)
    );
    // suppress_ifgroup: strtol into an int; 4294967296 wraps to group 0.
    assert_eq!(
        only_rule(
            "rule add suppress_ifgroup 4294967296 lookup main",
            Family::V4
        )
        .suppress_ifgroup,
        Some(0)
    );
    assert!(refusal("rule add suppress_ifgroup 2147483648 lookup main")
        .contains("(Error: argument \"2147483648\" is wrong: Invalid \"suppress_ifgroup\" value)"));
}

#[test]
fn tos_names_and_the_ipv4_tos_bits() {
    // `EF` is rt_dsfield's 0xb8, not hexadecimal 0xef.
    assert_eq!(
        only_rule("-6 rule add tos EF lookup 100", Family::V6).tos,
        0xb8
    );
    assert_eq!(
        only_rule("-6 rule add tos 0xfc lookup 100", Family::V6).tos,
        0xfc
    );
    // IPv4 rules take the old TOS bits only: "Error: Invalid tos."
    for line in [
        "rule add tos EF lookup 100",
        "rule add tos CS1 lookup 100",
        "rule add tos 0xfc lookup 100",
    ] {
        assert!(refusal(line).contains("Error: Invalid tos."), "{line}");
    }
    assert!(refusal("rule add tos 0x01 lookup 100")
        .contains("Error: Invalid dsfield (tos): ECN bits must be 0."));
}

#[test]
fn fwmark_masks_as_the_kernel_keeps_them() {
    assert_eq!(
        only_rule("rule add fwmark 0 lookup 100", Family::V4).fwmark,
        None
    );
    assert_eq!(
        only_rule("rule add fwmark 5 lookup 100", Family::V4).fwmark,
        Some((5, u32::MAX))
    );
    assert_eq!(
        only_rule("rule add fwmark 5/0 lookup 100", Family::V4).fwmark,
        Some((5, 0))
    );
}

#[test]
fn addresses_do_not_change_the_family() {
    // Without -6 the request is IPv4, which the kernel refuses.
    assert!(refusal("rule add from 2001:db8::/32 lookup 100")
        .contains("Error: Invalid source address."));
    assert!(refusal("rule add to 2001:db8::/32 lookup 100").contains("Error: Invalid dst address."));
    assert!(
        refusal("rule add from 10.0.0.0/8 to 2001:db8::/32 lookup 100")
            .contains("Error: Invalid dst address.")
    );
    // A zero length sends no address: every source.
    assert_eq!(
        only_rule("rule add from ::/0 lookup 100", Family::V4).from,
        None
    );
    // With -6 an IPv4 prefix is iproute2's refusal.
    assert!(refusal("-6 rule add from 10.0.0.0/8 lookup 100")
        .contains("(Error: inet6 prefix is expected rather than \"10.0.0.0/8\".)"));
}

#[test]
fn protocol_tells_an_added_rule_from_a_default_one() {
    // Kernel: `pref 0 lookup local` is a second rule 0 (proto unspec);
    // with `protocol kernel` it is the default one: "File exists".
    assert_eq!(
        added("rule add pref 0 lookup local", Family::V4),
        [(0, RuleAction::Lookup(TABLE_LOCAL))]
    );
    assert!(refusal("rule add protocol kernel pref 0 lookup local")
        .contains("RTNETLINK answers: File exists"));
}

#[test]
fn every_selector_ip_sends_is_kept() {
    // ip takes these and the kernel keeps them (kernel-checked; their
    // shows are in the fibre crate's tests/rule_show_parity.rs).
    for line in [
        "rule add uidrange 1-2",
        "rule add ipproto tcp lookup 100",
        "rule add sport 80 lookup 100",
        "rule add dport 80-90 lookup 100",
        "rule add l3mdev",
        "rule add realms 5 lookup 100",
        "rule add tun_id 5 lookup 100",
        "rule add t 5 lookup 100",
        "rule add nat 10.0.0.1",
        "rule add throw",
        "rule add anycast",
    ] {
        only_rule(line, Family::V4);
    }
}
