//! Policy routing: wg-quick's rules, goto/nop/throw, rule actions,
//! selectors and suppressors, as a 6.18 kernel answered them.

mod common;

use common::*;
use fibre_fib::*;

fn fib() -> Fib {
    let mut fib = router(&["d0", "wg0"]);
    addr(&mut fib, "d0", "10.0.0.1/24").unwrap();
    addr(&mut fib, "wg0", "10.66.0.2/32").unwrap();
    add(&mut fib, via("default", "10.0.0.254", None));
    fib
}

fn get_mark(fib: &Fib, dst: &str, mark: u32) -> String {
    let mut req = RouteGetRequest::to(ip(dst));
    req.mark = mark;
    get(fib, req)
}

#[test]
fn wg_quick() {
    // wg-quick: `ip rule add not fwmark 51820 table 51820` then
    // `ip rule add table main suppress_prefixlength 0`, default route in 51820.
    let mut fib = fib();
    add(
        &mut fib,
        RouteSpec {
            table: 51820,
            ..on("0.0.0.0/0", "wg0")
        },
    );
    let mut not_mark = rule_spec(Family::V4, RuleAction::Lookup(51820));
    not_mark.invert = true;
    not_mark.fwmark = Some((51820, u32::MAX));
    rule(&mut fib, not_mark).unwrap();
    let mut suppress = rule_spec(Family::V4, RuleAction::Lookup(TABLE_MAIN));
    suppress.suppress_prefixlength = Some(0);
    rule(&mut fib, suppress).unwrap();
    let prios: Vec<u32> = fib.rules(Family::V4).iter().map(|r| r.priority).collect();
    assert_eq!(prios, [0, 32764, 32765, 32766, 32767]);
    // Tunnel traffic: the main default is suppressed, table 51820 takes it.
    assert_eq!(get_mark(&fib, "8.8.8.8", 0), "unicast dev wg0 table 51820");
    // The tunnel's own packets (marked) use the real default route.
    assert_eq!(
        get_mark(&fib, "8.8.8.8", 51820),
        "unicast dev d0 via 10.0.0.254 table main"
    );
    // Connected subnets are longer than /0: not suppressed.
    assert_eq!(get_mark(&fib, "10.0.0.7", 0), "unicast dev d0 table main");
    // With the tables unmerged, local answers name table local.
    assert_eq!(get_mark(&fib, "10.0.0.1", 0), "local dev lo table local");
}

#[test]
fn throw_goes_on_with_the_next_rule() {
    let mut fib = fib();
    add(
        &mut fib,
        RouteSpec {
            table: 100,
            ..typed(RouteType::Throw, "203.0.113.192/26")
        },
    );
    add(
        &mut fib,
        RouteSpec {
            table: 100,
            ..via("203.0.113.224/27", "10.0.0.7", None)
        },
    );
    add(
        &mut fib,
        RouteSpec {
            table: 101,
            ..via("203.0.113.192/26", "10.0.0.5", None)
        },
    );
    rule(
        &mut fib,
        RuleSpec {
            priority: Some(100),
            ..rule_spec(Family::V4, RuleAction::Lookup(100))
        },
    )
    .unwrap();
    rule(
        &mut fib,
        RuleSpec {
            priority: Some(101),
            ..rule_spec(Family::V4, RuleAction::Lookup(101))
        },
    )
    .unwrap();
    assert_eq!(
        get_to(&fib, "203.0.113.200"),
        "unicast dev d0 via 10.0.0.5 table 101"
    );
    assert_eq!(
        get_to(&fib, "203.0.113.230"),
        "unicast dev d0 via 10.0.0.7 table 100"
    );
}

#[test]
fn goto_nop_and_unresolved_goto() {
    let mut fib = fib();
    add(
        &mut fib,
        RouteSpec {
            table: 200,
            ..via("198.18.0.0/15", "10.0.0.8", None)
        },
    );
    // 10: goto 30 skips 20 (a prohibit); 30 looks up 200.
    rule(
        &mut fib,
        RuleSpec {
            priority: Some(10),
            ..rule_spec(Family::V4, RuleAction::Goto(30))
        },
    )
    .unwrap();
    rule(
        &mut fib,
        RuleSpec {
            priority: Some(20),
            ..rule_spec(Family::V4, RuleAction::Prohibit)
        },
    )
    .unwrap();
    rule(
        &mut fib,
        RuleSpec {
            priority: Some(30),
            ..rule_spec(Family::V4, RuleAction::Lookup(200))
        },
    )
    .unwrap();
    assert_eq!(
        get_to(&fib, "198.18.1.1"),
        "unicast dev d0 via 10.0.0.8 table 200"
    );
    // Remove the target: the goto is unresolved and skipped, so 20 prohibits.
    fib.apply(&Command::Rule {
        op: RuleOp::Del,
        spec: RuleSpec {
            priority: Some(30),
            action: None,
            ..rule_spec(Family::V4, RuleAction::Nop)
        },
    })
    .unwrap();
    assert_eq!(
        get_to(&fib, "198.18.1.1"),
        "RTNETLINK answers: Permission denied"
    );
    rule(
        &mut fib,
        RuleSpec {
            priority: Some(5),
            ..rule_spec(Family::V4, RuleAction::Nop)
        },
    )
    .unwrap();
    assert_eq!(
        get_to(&fib, "198.18.1.1"),
        "RTNETLINK answers: Permission denied"
    );
}

#[test]
fn rule_actions_answer_like_the_kernel() {
    let mut fib = fib();
    let to = |p: &str, action| RuleSpec {
        to: Some(prefix(p)),
        priority: Some(5),
        ..rule_spec(Family::V4, action)
    };
    rule(&mut fib, to("10.77.0.0/16", RuleAction::Unreachable)).unwrap();
    rule(&mut fib, to("10.78.0.0/16", RuleAction::Prohibit)).unwrap();
    rule(&mut fib, to("10.79.0.0/16", RuleAction::Blackhole)).unwrap();
    // A rule's unreachable is ENETUNREACH (a route's is EHOSTUNREACH).
    assert_eq!(
        get_to(&fib, "10.77.0.1"),
        "RTNETLINK answers: Network is unreachable"
    );
    assert_eq!(
        get_to(&fib, "10.78.0.1"),
        "RTNETLINK answers: Permission denied"
    );
    assert_eq!(
        get_to(&fib, "10.79.0.1"),
        "RTNETLINK answers: Invalid argument"
    );
}

#[test]
fn selectors() {
    let mut fib = fib();
    add(
        &mut fib,
        RouteSpec {
            table: 300,
            ..via("0.0.0.0/0", "10.0.0.30", None)
        },
    );
    // iif lo matches locally generated traffic.
    rule(
        &mut fib,
        RuleSpec {
            priority: Some(50),
            iif: Some("lo".into()),
            from: Some(prefix("10.0.0.1/32")),
            ..rule_spec(Family::V4, RuleAction::Lookup(300))
        },
    )
    .unwrap();
    let mut req = RouteGetRequest::to(ip("8.8.4.4"));
    req.src = Some(ip("10.0.0.1"));
    assert_eq!(
        get(&fib, req.clone()),
        "unicast dev d0 via 10.0.0.30 table 300"
    );
    req.src = None;
    assert_eq!(get(&fib, req), "unicast dev d0 via 10.0.0.254 table main");
    // fwmark with a mask, tos, and a rule naming a missing device (never matches).
    rule(
        &mut fib,
        RuleSpec {
            priority: Some(60),
            fwmark: Some((0x10, 0xf0)),
            ..rule_spec(Family::V4, RuleAction::Lookup(300))
        },
    )
    .unwrap();
    assert_eq!(
        get_mark(&fib, "8.8.4.4", 0x1f),
        "unicast dev d0 via 10.0.0.30 table 300"
    );
    assert_eq!(
        get_mark(&fib, "8.8.4.4", 0x20),
        "unicast dev d0 via 10.0.0.254 table main"
    );
    rule(
        &mut fib,
        RuleSpec {
            priority: Some(70),
            iif: Some("nosuch".into()),
            ..rule_spec(Family::V4, RuleAction::Prohibit)
        },
    )
    .unwrap();
    assert_eq!(
        get_to(&fib, "8.8.4.4"),
        "unicast dev d0 via 10.0.0.254 table main"
    );
    let mut tos = RouteGetRequest::to(ip("8.8.4.4"));
    rule(
        &mut fib,
        RuleSpec {
            priority: Some(80),
            tos: 0x10,
            ..rule_spec(Family::V4, RuleAction::Blackhole)
        },
    )
    .unwrap();
    tos.tos = 0x10;
    assert_eq!(get(&fib, tos), "RTNETLINK answers: Invalid argument");
}

#[test]
fn suppress_prefixlength_and_ifgroup() {
    let mut fib = fib();
    add(
        &mut fib,
        RouteSpec {
            table: 400,
            ..on("0.0.0.0/0", "wg0")
        },
    );
    rule(
        &mut fib,
        RuleSpec {
            priority: Some(10),
            suppress_prefixlength: Some(24),
            ..rule_spec(Family::V4, RuleAction::Lookup(TABLE_MAIN))
        },
    )
    .unwrap();
    rule(
        &mut fib,
        RuleSpec {
            priority: Some(20),
            ..rule_spec(Family::V4, RuleAction::Lookup(400))
        },
    )
    .unwrap();
    // The /24 is suppressed by "<= 24": table 400 answers.
    assert_eq!(get_to(&fib, "10.0.0.7"), "unicast dev wg0 table 400");
    // Every link is in group 0: suppress_ifgroup 0 suppresses every answer with a device.
    let mut fib = self::fib();
    add(
        &mut fib,
        RouteSpec {
            table: 400,
            ..on("0.0.0.0/0", "wg0")
        },
    );
    rule(
        &mut fib,
        RuleSpec {
            priority: Some(10),
            suppress_ifgroup: Some(0),
            ..rule_spec(Family::V4, RuleAction::Lookup(TABLE_MAIN))
        },
    )
    .unwrap();
    rule(
        &mut fib,
        RuleSpec {
            priority: Some(20),
            suppress_ifgroup: Some(0),
            ..rule_spec(Family::V4, RuleAction::Lookup(400))
        },
    )
    .unwrap();
    rule(
        &mut fib,
        RuleSpec {
            priority: Some(30),
            ..rule_spec(Family::V4, RuleAction::Lookup(400))
        },
    )
    .unwrap();
    assert_eq!(get_to(&fib, "10.0.0.7"), "unicast dev wg0 table 400");
}

#[test]
fn ipv6_rules() {
    let mut fib = fib();
    addr(&mut fib, "d0", "2001:db8::1/64").unwrap();
    add(
        &mut fib,
        RouteSpec {
            table: 100,
            ..via("2001:db8:f0::/48", "2001:db8::9", None)
        },
    );
    rule(
        &mut fib,
        RuleSpec {
            from: Some(prefix("2001:db8::/64")),
            ..rule_spec(Family::V6, RuleAction::Lookup(100))
        },
    )
    .unwrap();
    assert_eq!(
        fib.rules(Family::V6)
            .iter()
            .map(|r| r.priority)
            .collect::<Vec<_>>(),
        [0, 32765, 32766]
    );
    let mut req = RouteGetRequest::to(ip("2001:db8:f0::1"));
    req.src = Some(ip("2001:db8::1"));
    assert_eq!(
        get(&fib, req.clone()),
        "unicast dev d0 via 2001:db8::9 table 100"
    );
    req.src = None;
    assert_eq!(get(&fib, req), "RTNETLINK answers: Network is unreachable");
}

#[test]
fn duplicate_rules_compare_only_the_given_selectors() {
    // Kernel-checked: `-6 rule add pref 1000 lookup local` after
    // `-6 rule add pref 1000 to 2001:db8:f0:8800::/56 lookup local` is
    // "File exists" (rule_exists ignores selectors the new rule leaves out).
    let mut fib = fib();
    let with_to = RuleSpec {
        priority: Some(1000),
        to: Some(prefix("2001:db8:f0:8800::/56")),
        ..rule_spec(Family::V6, RuleAction::Lookup(TABLE_LOCAL))
    };
    rule(&mut fib, with_to).unwrap();
    let bare = RuleSpec {
        priority: Some(1000),
        ..rule_spec(Family::V6, RuleAction::Lookup(TABLE_LOCAL))
    };
    assert_eq!(
        rule(&mut fib, bare).unwrap_err().to_string(),
        "RTNETLINK answers: File exists"
    );
    // Another table at the same priority is a different rule.
    let other = RuleSpec {
        priority: Some(1000),
        ..rule_spec(Family::V6, RuleAction::Lookup(100))
    };
    rule(&mut fib, other).unwrap();
}

#[test]
fn a_rule_added_without_protocol_keeps_unspec() {
    // Linux 6.18: `ip rule add table 100`, then `ip -d rule show` prints
    // "32765: from all lookup 100 proto unspec"; the defaults say "proto kernel".
    let mut fib = fib();
    rule(&mut fib, rule_spec(Family::V4, RuleAction::Lookup(100))).unwrap();
    let protocols: Vec<_> = fib
        .rules(Family::V4)
        .iter()
        .map(|r| (r.priority, r.protocol))
        .collect();
    assert_eq!(
        protocols,
        vec![
            (0, Protocol::KERNEL),
            (32765, Protocol::UNSPEC),
            (32766, Protocol::KERNEL),
            (32767, Protocol::KERNEL)
        ]
    );
}
