//! The grammar end to end on hand-made lines: iproute2's defaults, each
//! refusal's message, abbreviations and family rules.

use super::*;
use crate::command::*;
use crate::types::*;

fn words(line: &str) -> Vec<String> {
    tokenize(line).unwrap()
}

fn one(line: &str) -> Command {
    let mut cmds = parse_words(&words(line)).unwrap_or_else(|e| panic!("{line}: {e}"));
    assert_eq!(cmds.len(), 1, "{line}");
    cmds.remove(0)
}

/// The route of `line`, after the device lookups iproute2 makes first.
fn route(line: &str) -> (RouteOp, RouteSpec) {
    let mut cmds = parse_words(&words(line)).unwrap_or_else(|e| panic!("{line}: {e}"));
    let route = cmds.pop().expect("a command");
    assert!(
        cmds.iter().all(|c| matches!(c, Command::LookUp { .. })),
        "{line}: {cmds:?}"
    );
    match route {
        Command::Route { op, spec } => (op, spec),
        other => panic!("{line}: {other:?}"),
    }
}

fn rule(line: &str) -> RuleSpec {
    match one(line) {
        Command::Rule { spec, .. } => spec,
        other => panic!("{line}: {other:?}"),
    }
}

fn refusal(line: &str) -> String {
    parse_words(&words(line)).expect_err(line).to_string()
}

fn prefix(s: &str) -> Prefix {
    let (a, l) = s.split_once('/').unwrap();
    Prefix::new(a.parse().unwrap(), l.parse().unwrap()).unwrap()
}

// --- iproute2's defaults -------------------------------------------------

#[test]
fn add_defaults_table_main_proto_boot_unicast() {
    let (op, r) = route("route add 10.1.0.0/16 via 10.0.0.2");
    assert_eq!(op, RouteOp::Add);
    assert_eq!(r.table, TABLE_MAIN);
    assert_eq!(r.protocol, Protocol::BOOT);
    assert_eq!(r.kind, RouteType::Unicast);
    assert_eq!(r.scope, Scope::UNIVERSE);
    assert_eq!(r.metric, None);
    assert_eq!(r.dst, prefix("10.1.0.0/16"));
    assert!(!r.multipath);
    assert_eq!(
        r.nexthops,
        vec![NexthopSpec {
            gateway: Some("10.0.0.2".parse().unwrap()),
            dev: None,
            weight: 1,
            onlink: false
        }]
    );
}

#[test]
fn unicast_without_gateway_is_scope_link() {
    let (_, r) = route("route add 10.1.0.0/16 dev eth0");
    assert_eq!(r.scope, Scope::LINK);
    assert_eq!(r.nexthops[0].dev.as_deref(), Some("eth0"));
}

#[test]
fn local_broadcast_anycast_go_to_table_local() {
    let (_, r) = route("route add local 10.0.0.1 dev eth0");
    assert_eq!(
        (r.table, r.scope, r.kind),
        (TABLE_LOCAL, Scope::HOST, RouteType::Local)
    );
    let (_, r) = route("route add broadcast 10.0.0.255 dev eth0");
    assert_eq!((r.table, r.scope), (TABLE_LOCAL, Scope::LINK));
    let (_, r) = route("route add anycast 10.0.0.0/32 dev eth0");
    assert_eq!((r.table, r.scope), (TABLE_LOCAL, Scope::LINK));
    let (_, r) = route("route add multicast 224.0.0.0/4 dev eth0");
    assert_eq!((r.table, r.scope), (TABLE_MAIN, Scope::LINK));
}

#[test]
fn blackhole_and_friends_are_universe_in_main_without_paths() {
    for kind in ["blackhole", "unreachable", "prohibit", "throw"] {
        let (_, r) = route(&format!("route add {kind} 10.8.0.0/16"));
        assert_eq!(r.kind, RouteType::from_name(kind).unwrap());
        assert_eq!(
            (r.table, r.scope, r.protocol),
            (TABLE_MAIN, Scope::UNIVERSE, Protocol::BOOT)
        );
        assert!(r.nexthops.is_empty());
    }
}

#[test]
fn delete_defaults_are_wildcards() {
    let (op, r) = route("route del 10.1.0.0/16");
    assert_eq!(op, RouteOp::Del);
    assert_eq!(r.kind, RouteType::Unspec);
    assert_eq!(r.protocol, Protocol::UNSPEC);
    assert_eq!(r.scope, Scope::NOWHERE);
    assert_eq!(r.table, TABLE_MAIN);
    let (_, r) = route("route delete 10.1.0.0/16 via 10.0.0.2");
    assert_eq!(r.scope, Scope::NOWHERE);
    let (_, r) = route("route del local 10.0.0.1");
    assert_eq!((r.table, r.scope), (TABLE_LOCAL, Scope::HOST));
    let (_, r) = route("route del blackhole 10.8.0.0/16");
    assert_eq!(r.scope, Scope::NOWHERE);
}

#[test]
fn ipv6_scope_is_always_universe() {
    let (_, r) = route("route add 2001:db8::/32 dev eth0");
    assert_eq!(r.scope, Scope::UNIVERSE);
    let (_, r) = route("route del 2001:db8::/32");
    assert_eq!(r.scope, Scope::UNIVERSE);
}

#[test]
fn explicit_values_override_defaults() {
    let (op, r) = route(
        "route replace 10.21.0.0/16 via 10.0.0.2 metric 100 proto static src 10.0.0.1 \
         mtu lock 1400 table 100 scope 7 tos 0x10",
    );
    assert_eq!(op, RouteOp::Replace);
    assert_eq!(r.metric, Some(100));
    assert_eq!(r.protocol, Protocol::STATIC);
    assert_eq!(r.prefsrc, Some("10.0.0.1".parse().unwrap()));
    assert_eq!(r.mtu, Some(1400));
    assert_eq!(r.table, 100);
    assert_eq!(r.scope, Scope(7));
    assert_eq!(r.tos, 0x10);
}

#[test]
fn every_route_verb_and_abbreviation() {
    let cases = [
        ("route add", RouteOp::Add),
        ("ro a", RouteOp::Add),
        ("r add", RouteOp::Add),
        ("route replace", RouteOp::Replace),
        ("route r", RouteOp::Replace),
        ("route append", RouteOp::Append),
        ("route prepend", RouteOp::Prepend),
        ("route change", RouteOp::Change),
        ("route chg", RouteOp::Change),
        ("route del", RouteOp::Del),
        ("route delete", RouteOp::Del),
    ];
    for (head, want) in cases {
        let (op, _) = route(&format!("{head} 10.0.0.0/8 dev eth0"));
        assert_eq!(op, want, "{head}");
    }
}

#[test]
fn default_takes_the_family_of_the_gateway() {
    let (_, r) = route("route add default via 2001:db8::1");
    assert_eq!(r.dst, Prefix::default_route(Family::V6));
    let (_, r) = route("route add default dev eth0");
    assert_eq!(r.dst, Prefix::default_route(Family::V4));
    let (_, r) = route("-6 route add default dev eth0");
    assert_eq!(r.dst, Prefix::default_route(Family::V6));
    let (_, r) = route("route add to unicast any via 10.0.0.1");
    assert_eq!(r.dst, Prefix::default_route(Family::V4));
}

#[test]
fn multipath_nexthops() {
    let (_, r) = route(
        "route add 10.20.0.0/16 nexthop via 10.0.0.2 dev eth0 weight 2 nexthop via 10.0.0.3 onlink",
    );
    assert!(r.multipath);
    assert_eq!(r.scope, Scope::UNIVERSE);
    assert_eq!(r.nexthops.len(), 2);
    assert_eq!(r.nexthops[0].weight, 2);
    assert_eq!(r.nexthops[0].dev.as_deref(), Some("eth0"));
    assert_eq!(r.nexthops[1].weight, 1);
    assert!(r.nexthops[1].onlink);
    let (_, r) = route("route add 10.0.0.0/8 nexthop dev eth0 weight 256");
    assert_eq!(r.nexthops[0].weight, 256);
}

#[test]
fn ipv4_route_via_an_ipv6_gateway() {
    let (_, r) = route("route add 10.41.0.0/16 via inet6 fe80::1 dev eth0");
    assert_eq!(r.nexthops[0].gateway, Some("fe80::1".parse().unwrap()));
    assert_eq!(r.dst.family(), Family::V4);
}

#[test]
fn abbreviated_ipv4_prefixes() {
    let (_, r) = route("route add 10/8 dev eth0");
    assert_eq!(r.dst, prefix("10.0.0.0/8"));
}

// --- links and addresses ---------------------------------------------------

#[test]
fn link_commands() {
    assert_eq!(
        one("link add eth0 type veth peer name eth1"),
        Command::LinkAdd {
            name: "eth0".into(),
            kind: LinkKind::Veth {
                peer: "eth1".into()
            },
            mtu: None
        }
    );
    assert_eq!(
        one("l add name d0 mtu 9000 type dummy"),
        Command::LinkAdd {
            name: "d0".into(),
            kind: LinkKind::Dummy,
            mtu: Some(9000)
        }
    );
    assert_eq!(
        one("link set dev eth0 up mtu 1400"),
        Command::LinkSet {
            name: "eth0".into(),
            up: Some(true),
            mtu: Some(1400)
        }
    );
    assert_eq!(
        one("link del ifb0"),
        Command::LinkDel {
            name: "ifb0".into()
        }
    );
    let cmds = parse_words(&words("link add i0 up type ifb")).unwrap();
    assert_eq!(cmds.len(), 2);
    assert!(matches!(&cmds[1], Command::LinkSet { up: Some(true), .. }));
}

#[test]
fn addresses_with_ignored_ipv6_keywords() {
    let Command::Addr { op, spec } =
        one("addr add 2001:db8::1/64 dev eth0 nodad valid_lft forever preferred_lft forever")
    else {
        panic!()
    };
    assert_eq!(op, AddrOp::Add);
    assert_eq!(spec.prefix_len, 64);
    assert_eq!(spec.dev, "eth0");
    assert_eq!(spec.scope, None);
}

#[test]
fn address_broadcast_plus_and_peer() {
    let Command::Addr { spec, .. } = one("a add 10.0.1.1/24 brd + dev eth1 label eth1:x metric 5")
    else {
        panic!()
    };
    assert_eq!(spec.broadcast, Some("10.0.1.255".parse().unwrap()));
    assert_eq!(spec.label.as_deref(), Some("eth1:x"));
    assert_eq!(spec.metric, Some(5));
    let Command::Addr { spec, .. } = one("address add 10.0.0.1 peer 10.0.0.2/32 dev ppp0") else {
        panic!()
    };
    assert_eq!(spec.peer, Some("10.0.0.2".parse().unwrap()));
    assert_eq!(spec.prefix_len, 32);
    let Command::Addr { op, spec } = one("addr del 10.0.0.1/24 dev eth0 noprefixroute") else {
        panic!()
    };
    assert_eq!(op, AddrOp::Del);
    assert!(spec.noprefixroute);
}

// --- rules -------------------------------------------------------------------

#[test]
fn rule_add_defaults_to_lookup_main_ipv4() {
    let r = rule("rule add from 10.0.0.0/8");
    assert_eq!(r.family, Family::V4);
    assert_eq!(r.action, Some(RuleAction::Lookup(TABLE_MAIN)));
    assert_eq!(r.from, Some(prefix("10.0.0.0/8")));
    assert_eq!(r.priority, None);
    let r = rule("rule add pref 5 from all lookup 100");
    assert_eq!(r.from, None);
    assert_eq!(r.priority, Some(5));
    assert_eq!(r.action, Some(RuleAction::Lookup(100)));
}

#[test]
fn rule_delete_leaves_action_open() {
    let Command::Rule { op, spec } = one("ru del pref 100") else {
        panic!()
    };
    assert_eq!(op, RuleOp::Del);
    assert_eq!(spec.action, None);
}

#[test]
fn rule_family_from_flag_or_addresses() {
    assert_eq!(rule("-6 rule add lookup 100").family, Family::V6);
    // iproute2 sends AF_INET unless told -6 (the kernel then refuses the
    // IPv6 address: "Invalid dst address").
    assert_eq!(
        rule("rule add to 2001:db8::/32 lookup 100").family,
        Family::V4
    );
    assert_eq!(rule("rule add lookup 100").family, Family::V4);
}

#[test]
fn rule_selectors_and_actions() {
    let r = rule(
        "rule add not to 10.0.0.0/8 iif eth0 oif eth1 fwmark 0x10/0xff tos 10 goto 32766 \
         pref 200 protocol static",
    );
    assert!(r.invert);
    assert_eq!(r.fwmark, Some((0x10, 0xff)));
    assert_eq!(r.tos, 0x10);
    assert_eq!(r.action, Some(RuleAction::Goto(32766)));
    assert_eq!(r.iif.as_deref(), Some("eth0"));
    assert_eq!(r.oif.as_deref(), Some("eth1"));
    assert_eq!(r.protocol, Some(Protocol::STATIC));
    assert_eq!(rule("rule add fwmark 7").fwmark, Some((7, u32::MAX)));
    let r = rule("rule add from 10.0.0.0/8 suppress_prefixlength 0 suppress_ifgroup default");
    assert_eq!(r.suppress_prefixlength, Some(0));
    assert_eq!(r.suppress_ifgroup, Some(0));
    for (word, action) in [
        ("blackhole", RuleAction::Blackhole),
        ("unreachable", RuleAction::Unreachable),
        ("prohibit", RuleAction::Prohibit),
        ("nop", RuleAction::Nop),
    ] {
        assert_eq!(
            rule(&format!("rule add tos 0x10 {word}")).action,
            Some(action)
        );
    }
}

#[test]
fn rule_selectors_keep_the_kernel_mask_not_the_host_bits() {
    // The kernel stores `from 10.0.0.1/8` and matches it as 10.0.0.0/8.
    assert_eq!(
        rule("rule add from 10.0.0.1/8").from,
        Some(prefix("10.0.0.0/8"))
    );
}

// --- refusals: one test each, with the message ------------------------------

#[test]
fn refuses_malformed_gateway() {
    assert_eq!(
        refusal("route add 10.2.0.0/16 via 10.0.0.300"),
        "\"via\": expected an IPv4 address, got \"10.0.0.300\" \
         (Error: inet address is expected rather than \"10.0.0.300\".)"
    );
}

#[test]
fn refuses_gateway_of_the_other_family() {
    assert_eq!(
        refusal("route add 2001:db8::/32 via 10.0.0.2"),
        "\"via\": expected an IPv6 address, got \"10.0.0.2\" \
         (Error: inet6 address is expected rather than \"10.0.0.2\".)"
    );
}

#[test]
fn refuses_host_bits_with_the_kernel_message() {
    assert_eq!(
        refusal("route add 10.3.0.1/16 via 10.0.0.2"),
        "\"to\": expected a prefix without host bits (10.3.0.1/16 has host bits set \
         (expected 10.3.0.0/16)), got \"10.3.0.1/16\" \
         (Error: Invalid prefix for given prefix length.)"
    );
}

#[test]
fn refuses_unknown_table_name() {
    assert_eq!(
        refusal("route add 10.4.0.0/16 via 10.0.0.2 table foo"),
        "\"table\": expected a table: local, main, default or a number from 0 to 4294967295, \
         got \"foo\" (Error: argument \"foo\" is wrong: \"table\" value is invalid)"
    );
    assert!(refusal("route add 10.4.0.0/16 dev x table all").contains("got \"all\""));
}

#[test]
fn refuses_table_out_of_range() {
    assert!(
        refusal("route add 10.12.0.0/16 via 10.0.0.2 table 4294967296")
            .ends_with("(Error: argument \"4294967296\" is wrong: \"table\" value is invalid)")
    );
}

#[test]
fn refuses_metric_out_of_range_and_negative() {
    assert_eq!(
        refusal("route add 10.5.0.0/16 via 10.0.0.2 metric 4294967296"),
        "\"metric\": expected a number from 0 to 4294967295, got \"4294967296\" \
         (Error: argument \"4294967296\" is wrong: \"metric\" value is invalid)"
    );
    assert!(refusal("route add 10.42.0.0/16 metric -1 dev eth0").contains("got \"-1\""));
}

#[test]
fn refuses_weight_out_of_range() {
    assert_eq!(
        refusal("route add 10.9.0.0/16 nexthop via 10.0.0.2 weight 300"),
        "\"weight\": expected a weight from 1 to 256, got \"300\" \
         (Error: argument \"300\" is wrong: \"weight\" is invalid)"
    );
    assert!(refusal("route add 10.9.0.0/16 nexthop via 10.0.0.2 weight 0").contains("got \"0\""));
}

#[test]
fn refuses_mtu_out_of_range() {
    assert_eq!(
        refusal("route add 10.10.0.0/16 dev eth0 mtu 4294967296"),
        "\"mtu\": expected a number from 0 to 4294967295, got \"4294967296\" \
         (Error: argument \"4294967296\" is wrong: \"mtu\" value is invalid)"
    );
    assert!(refusal("link set eth0 mtu 99999999999")
        .ends_with("(Error: argument \"99999999999\" is wrong: Invalid \"mtu\" value)"));
}

#[test]
fn refuses_unknown_keyword() {
    let msg = refusal("route add 10.6.0.0/16 via 10.0.0.2 frob");
    assert!(
        msg.starts_with("\"route\": expected a prefix, \"default\""),
        "{msg}"
    );
    assert!(
        msg.ends_with(
            "got \"frob\" (Error: either \"to\" is duplicate, or \"frob\" is a garbage.)"
        ),
        "{msg}"
    );
}

#[test]
fn refuses_truncated_lines() {
    assert_eq!(
        refusal("route add"),
        "\"route\": expected a destination prefix or \"default\", got end of line \
         (Command line is not complete. Try option \"help\")"
    );
    assert_eq!(
        refusal("route add 10.11.0.0/16 via"),
        "\"via\": expected an IPv4 address, got end of line \
         (Command line is not complete. Try option \"help\")"
    );
    assert_eq!(
        refusal("route"),
        "\"route\": expected a command such as add, del, replace or set, got end of line"
    );
    assert!(refusal("rule add goto").contains("\"goto\": expected a number"));
    assert!(refusal("route add 10.0.0.0/8 nexthop").contains("got end of line"));
}

#[test]
fn refuses_prefix_length_too_long() {
    assert_eq!(
        refusal("route add 10.7.0.0/33 dev eth0"),
        "\"to\": expected a prefix such as 10.0.0.0/8 or 2001:db8::/32, got \"10.7.0.0/33\" \
         (Error: any valid prefix is expected rather than \"10.7.0.0/33\".)"
    );
}

#[test]
fn refuses_malformed_local_address() {
    assert!(refusal("addr add 10.0.0.400/24 dev eth0").ends_with(
        "got \"10.0.0.400/24\" (Error: any valid prefix is expected rather than \"10.0.0.400/24\".)"
    ));
}

#[test]
fn refuses_address_without_device() {
    assert_eq!(
        refusal("addr add 10.9.9.9/24"),
        "\"addr\": expected dev NAME, got end of line \
         (Not enough information: \"dev\" argument is required.)"
    );
}

#[test]
fn refuses_ipv6_broadcast() {
    assert!(refusal("-6 addr add 2001:db8::5/64 brd + dev eth0")
        .ends_with("(Broadcast can be set only for IPv4 addresses)"));
}

#[test]
fn refuses_bad_scope_and_protocol() {
    assert!(refusal("route add 10.16.0.0/16 via 10.0.0.2 scope foo")
        .ends_with("(Error: argument \"foo\" is wrong: invalid \"scope\" value)"));
    assert!(refusal("route add 10.15.0.0/16 via 10.0.0.2 proto foo")
        .ends_with("(Error: argument \"foo\" is wrong: \"protocol\" value is invalid)"));
    assert!(refusal("route add 10.15.0.0/16 via 10.0.0.2 proto 256").contains("got \"256\""));
}

#[test]
fn refuses_bad_tos() {
    assert!(refusal("route add 10.14.0.0/16 via 10.0.0.2 tos 0x100")
        .ends_with("(Error: argument \"0x100\" is wrong: \"tos\" value is invalid)"));
    assert!(refusal("route add 10.0.0.0/8 via 10.0.0.2 tos 16")
        .ends_with("(Error: Invalid dsfield (tos): ECN bits must be 0.)"));
}

#[test]
fn refuses_garbage_after_nexthops() {
    assert!(refusal("route add 10.40.0.0/16 nexthop via 10.0.0.2 frob")
        .ends_with("(Error: \"nexthop\" or end of line is expected instead of \"frob\")"));
}

#[test]
fn refuses_unsupported_route_keywords_and_types() {
    assert!(refusal("route add 10.0.0.0/8 dev eth0 realms 5").contains("got \"realms\""));
    assert!(refusal("route add nat 10.0.0.0/8 via 1.2.3.4").contains("got \"nat\""));
    assert!(
        refusal("route add 10.0.0.0/8 via 10.0.0.1 nexthop via 10.0.0.2")
            .contains("either via/dev/onlink or nexthop clauses, not both")
    );
}

#[test]
fn refuses_bad_rule_words() {
    assert_eq!(
        refusal("rule add from 1.2.3.0/24 lookup foo"),
        "\"lookup\": expected a table: local, main, default or a number from 0 to 4294967295, \
         got \"foo\" (Error: argument \"foo\" is wrong: invalid table ID)"
    );
    assert!(refusal("rule add fwmark 0xzz lookup 5")
        .ends_with("(Error: argument \"0xzz\" is wrong: fwmark value is invalid)"));
    assert!(refusal("rule add fwmark 1/0xzz lookup 5")
        .ends_with("(Error: argument \"0xzz\" is wrong: fwmask value is invalid)"));
    assert!(refusal("rule add pref 5000 frob")
        .ends_with("(Error: argument \"frob\" is wrong: Failed to parse rule type)"));
    assert!(
        refusal("rule add suppress_prefixlength 2147483648").ends_with(
            "(Error: argument \"2147483648\" is wrong: suppress_prefixlength value is invalid)"
        )
    );
    // `from 10.0.0.0/8 to 2001:db8::/32` parses (iproute2 sends it); the
    // kernel refuses it: see tests/rule_commands.rs.
}

#[test]
fn refuses_bad_link_words() {
    assert!(refusal("link set eth0 frob")
        .ends_with("(Error: either \"dev\" is duplicate, or \"frob\" is a garbage.)"));
    assert!(
        refusal("link add x2").ends_with("(Not enough information: \"type\" argument is required)")
    );
    assert!(refusal("link add x1 type bogus").ends_with("(Error: Unknown device type.)"));
    // veth_newlink names a peer left unnamed "veth%d" (the first free vethN).
    assert!(parse_words(&words("link add v0 type veth")).is_ok());
    assert!(refusal("link add averyveryverylongname0 type dummy")
        .contains("a device name of 1 to 15 bytes"));
    // iplink_modify sends a request that changes nothing; the FIB finds the device.
    assert!(parse_words(&words("link set eth0")).is_ok());
}

#[test]
fn refuses_unknown_objects_and_verbs() {
    assert_eq!(
        refusal("frob add x"),
        "\"ip\": expected an object: link, addr, route, rule or neigh, got \"frob\" \
         (Object \"frob\" is unknown, try \"ip help\".)"
    );
    assert!(refusal("ntable show").contains("fibre does not model \"ntable\""));
    assert!(
        refusal("route show").ends_with("(Command \"show\" is unknown, try \"ip route help\".)")
    );
    assert!(refusal("route test 10.0.0.0/8").contains("got \"test\""));
}

// --- files -------------------------------------------------------------------

#[test]
fn parse_str_collects_every_bad_line() {
    let text = "# comment\n\nroute add 10.0.0.0/8 dev eth0\nroute add 10.0.0.0/33 dev x\nrule add lookup foo\n";
    let parsed = parse_str("t.conf", text);
    assert_eq!(parsed.statements.len(), 1);
    assert_eq!(parsed.statements[0].line, 3);
    let lines: Vec<usize> = parsed.diagnostics.iter().map(|d| d.line).collect();
    assert_eq!(lines, [4, 5]);
    assert!(parsed.diagnostics[0]
        .to_string()
        .starts_with("t.conf:4: \"to\""));
}

#[test]
fn crlf_lines_parse() {
    let parsed = parse_str("t", "route add 10.0.0.0/8 dev eth0\r\n");
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
}

#[test]
fn refuses_binary_and_empty_files() {
    // Through the one reader of configuration files (`load`, on
    // `LineReader`): empty and binary files refused, naming the line of
    // the first bad byte; what ip never reads (after a NUL or in a
    // comment, as `getcmdline` cuts it) is no error.
    let dir = std::env::temp_dir().join(format!("fibre-config-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let load_file = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        load(&crate::Fib::new(), &path, false)
    };
    let err = load_file("empty.conf", b"").unwrap_err().to_string();
    assert!(err.ends_with("empty.conf: the file is empty; expected ip -batch lines such as \"route add 10.0.0.0/8 dev eth0\""), "{err}");
    let err = load_file(
        "bin.conf",
        b"link add x type dummy\n\x7fELF\x02\x01\xff\x00\x01",
    )
    .unwrap_err()
    .to_string();
    assert!(err.ends_with("bin.conf:2: not a text file (invalid UTF-8 at offset 28); expected ip -batch lines in UTF-8"), "{err}");
    let err = load_file("latin1.conf", b"link add caf\xe9 type dummy\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("latin1.conf:1: not a text file (invalid UTF-8 at offset 12)"),
        "{err}"
    );
    let (fib, _) = load_file(
        "comment.conf",
        b"link add d0 type dummy # caf\xe9\nlink add d1 type dummy\x00\xff\n",
    )
    .unwrap();
    assert!(fib.link_by_name("d0").is_some() && fib.link_by_name("d1").is_some());
    let err = load(&crate::Fib::new(), &dir.join("missing.conf"), false)
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing.conf: cannot read"), "{err}");
    let (fib, skipped) = load_file("ok.conf", b"link add d0 type dummy\n").unwrap();
    assert!(skipped.is_empty() && fib.link_by_name("d0").is_some());
    std::fs::remove_dir_all(&dir).unwrap();
}

// --- route get ------------------------------------------------------------------

#[test]
fn route_get_every_keyword() {
    let q = parse_route_get(
        &words("to 10.1.0.5 from 10.0.1.2 iif eth1 oif eth0 mark 5 tos 10 ipproto tcp sport 5 dport 80 fibmatch uid 7"),
        None,
    )
    .unwrap();
    let r = q.request;
    assert_eq!(r.dst.to_string(), "10.1.0.5");
    assert_eq!(r.src, Some("10.0.1.2".parse().unwrap()));
    assert_eq!(r.iif.as_deref(), Some("eth1"));
    assert_eq!(r.oif.as_deref(), Some("eth0"));
    assert_eq!(
        (r.mark, r.tos, r.ipproto, r.sport, r.dport),
        (5, 0x10, Some(6), Some(5), Some(80))
    );
    assert!(r.fibmatch);
    assert_eq!(q.uid, 7);
    let q = parse_route_get(&words("fibmatch 2001:db8::1"), None).unwrap();
    assert!(q.request.fibmatch);
    assert_eq!(
        q.request,
        RouteGetRequest {
            fibmatch: true,
            ..RouteGetRequest::to("2001:db8::1".parse().unwrap())
        }
    );
}

#[test]
fn route_get_refusals() {
    let get = |line: &str| parse_route_get(&words(line), None).unwrap_err().to_string();
    assert_eq!(get(""), "\"route get\": expected a destination address, got end of line (need at least a destination address)");
    assert!(get("10.0.0.300")
        .ends_with("(Error: any valid prefix is expected rather than \"10.0.0.300\".)"));
    assert!(get("10.1.0.5 frob").contains("got \"frob\""));
    assert!(get("10.1.0.5 mark 0x1g")
        .ends_with("(Error: argument \"0x1g\" is wrong: invalid mark value)"));
    assert!(get("10.1.0.5 tos 300")
        .ends_with("(Error: argument \"300\" is wrong: TOS value is invalid)"));
    assert!(get("10.1.0.5 ipproto foo")
        .ends_with("(Error: argument \"foo\" is wrong: Invalid \"ipproto\" value)"));
    assert!(get("10.1.0.5 sport 65536").contains("got \"65536\""));
    assert!(get("10.1.0.5/24")
        .contains("Warning: /24 as prefix is invalid, only /32 (or none) is supported."));
    assert!(get("10.1.0.5 vrf red").contains("got \"vrf\""));
    assert!(get("10.1.0.5 from 2001:db8::1").contains("got \"2001:db8::1\""));
    assert!(parse_route_get(&words("10.1.0.5"), Some(Family::V6)).is_err());
}

// --- no input panics ------------------------------------------------------------

mod never_panics {
    use super::super::*;
    use proptest::prelude::*;

    /// Words the grammar knows, plus values good and bad, so random lines
    /// reach deep into every branch.
    const VOCABULARY: &[&str] = &[
        "-4",
        "-6",
        "route",
        "ro",
        "r",
        "rule",
        "ru",
        "addr",
        "a",
        "link",
        "l",
        "add",
        "del",
        "replace",
        "append",
        "prepend",
        "change",
        "set",
        "default",
        "all",
        "to",
        "via",
        "inet",
        "inet6",
        "dev",
        "src",
        "metric",
        "table",
        "proto",
        "scope",
        "mtu",
        "lock",
        "tos",
        "onlink",
        "nexthop",
        "weight",
        "from",
        "iif",
        "oif",
        "fwmark",
        "pref",
        "lookup",
        "goto",
        "not",
        "blackhole",
        "unreachable",
        "prohibit",
        "throw",
        "local",
        "broadcast",
        "nop",
        "type",
        "dummy",
        "ifb",
        "veth",
        "peer",
        "name",
        "up",
        "down",
        "brd",
        "+",
        "-",
        "peer",
        "label",
        "suppress_prefixlength",
        "suppress_ifgroup",
        "main",
        "255",
        "0",
        "4294967296",
        "0x10",
        "0x10/0xff",
        "10.0.0.0/8",
        "10.0.0.1",
        "10.0.0.1/33",
        "10/8",
        "::/0",
        "2001:db8::/32",
        "2001:db8::1",
        "fe80::1/64",
        "eth0",
        "x",
        "#",
        "\"q",
        "mark",
        "fibmatch",
        "uid",
        "sport",
        "ipproto",
        "tcp",
        "",
    ];

    fn line() -> impl Strategy<Value = Vec<String>> {
        prop::collection::vec(prop::sample::select(VOCABULARY), 0..12)
            .prop_map(|words| words.into_iter().map(String::from).collect())
    }

    proptest! {
        #[test]
        fn parse_words_refuses_or_parses(words in line()) {
            let _ = parse_words(&words);
        }

        #[test]
        fn route_get_refuses_or_parses(words in line()) {
            let _ = parse_route_get(&words, None);
            let _ = parse_route_get(&words, Some(crate::types::Family::V6));
        }

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
            let _ = parse_str("p", &text);
        }
    }
}

/// GRE tunnels that loop through one another, and refusals placed on the
/// line that broke the tunnel rather than on its `link add`.
mod tunnel_loops {
    use super::*;
    use std::net::IpAddr;

    fn load_onto(base: &Fib, text: &str, force: bool) -> Result<(Fib, Vec<String>), String> {
        apply_str(base, "t.conf", text, force)
            .map(|(fib, d)| (fib, d.iter().map(ToString::to_string).collect()))
            .map_err(|e| e.to_string())
    }

    fn load(text: &str, force: bool) -> Result<(Fib, Vec<String>), String> {
        load_onto(&Fib::new(), text, force)
    }

    /// Lines 1-3: eth0 with 192.0.2.1/24 and a default route out of it.
    const UNDERLAY: &str = "link add eth0 up type dummy\naddr add 192.0.2.1/24 dev eth0\nroute add default via 192.0.2.254\n";

    /// The device and gateway `route get DST [from SRC]` answers.
    fn via(fib: &Fib, dst: &str, src: Option<&str>) -> (String, Option<IpAddr>) {
        let mut request = RouteGetRequest::to(dst.parse().unwrap());
        request.src = src.map(|s| s.parse().unwrap());
        let answer = fib.route_get(&request).unwrap();
        (answer.dev.unwrap(), answer.gateway)
    }

    fn dev(name: &str) -> (String, Option<IpAddr>) {
        (name.to_string(), None)
    }

    fn uplink() -> (String, Option<IpAddr>) {
        ("eth0".to_string(), Some("192.0.2.254".parse().unwrap()))
    }

    const LOOP_EXPECTED: &str = "the tunnels would loop (expected the route to one of these remotes over a link that is not one of these tunnels)";

    /// g1 (line 4) over g2 (line 5); line 6 routes g2's remote into g1,
    /// line 7 g1's into g2 and closes the loop.
    fn two_tunnel_loop() -> String {
        format!(
            "{UNDERLAY}link add g1 up type gre remote 10.0.0.2 local 192.0.2.1\n\
             link add g2 up type gre remote 10.0.0.1 local 192.0.2.1\n\
             route add 10.0.0.1 dev g1\n\
             route add 10.0.0.2 dev g2\n"
        )
    }

    #[test]
    fn a_loop_through_two_tunnels_is_refused_on_the_line_that_closes_it() {
        let err = load(&two_tunnel_loop(), false).unwrap_err();
        assert_eq!(
            err,
            format!(
                "t.conf:7: the routes to the remotes of tunnels g1 -> g2 -> g1 go round: \
                 remote 10.0.0.2 of g1 leaves through g2 (route 10.0.0.2), \
                 remote 10.0.0.1 of g2 leaves through g1 (route 10.0.0.1); {LOOP_EXPECTED} \
                 [after this line; g1 is added at line 4, g2 at line 5]\n\
                 nothing applied (1 error)"
            )
        );
        // The same loop closed by the other route first: still one
        // refusal, on the line that comes last, going round from g1.
        let swapped = format!(
            "{UNDERLAY}link add g2 up type gre remote 10.0.0.1\n\
             link add g1 up type gre remote 10.0.0.2\n\
             route add 10.0.0.2 dev g2\n\
             route add 10.0.0.1 dev g1\n"
        );
        let err = load(&swapped, false).unwrap_err();
        assert!(
            err.starts_with(
                "t.conf:7: the routes to the remotes of tunnels g1 -> g2 -> g1 go round"
            ),
            "{err}"
        );
        assert!(
            err.ends_with(
                "[after this line; g1 is added at line 5, g2 at line 4]\nnothing applied (1 error)"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_loop_through_three_tunnels_closed_by_a_rule_names_each_route() {
        let text = format!(
            "{UNDERLAY}link add g1 up type gre remote 10.0.0.2\n\
             link add g2 up type gre remote 10.0.0.3\n\
             link add g3 up type gre remote 10.0.0.1\n\
             route add 10.0.0.2 dev g2\n\
             route add 10.0.0.3 dev g3\n\
             route add 10.0.0.1 dev g1 table 100\n\
             rule add to 10.0.0.1 lookup 100 pref 100\n"
        );
        let err = load(&text, false).unwrap_err();
        assert_eq!(
            err,
            format!(
                "t.conf:10: the routes to the remotes of tunnels g1 -> g2 -> g3 -> g1 go round: \
                 remote 10.0.0.2 of g1 leaves through g2 (route 10.0.0.2), \
                 remote 10.0.0.3 of g2 leaves through g3 (route 10.0.0.3), \
                 remote 10.0.0.1 of g3 leaves through g1 (route 10.0.0.1 table 100); {LOOP_EXPECTED} \
                 [after this line; g1 is added at line 4, g2 at line 5, g3 at line 6]\n\
                 nothing applied (1 error)"
            )
        );
        // Without the rule, g3's remote leaves by the default route.
        let open = text.replace("rule add to 10.0.0.1 lookup 100 pref 100\n", "");
        let (fib, _) = load(&open, false).unwrap();
        assert_eq!(via(&fib, "10.0.0.1", None), uplink());
    }

    #[test]
    fn a_loop_that_opens_and_closes_again_is_placed_where_it_last_closed() {
        let text = format!(
            "{UNDERLAY}link add g1 up type gre remote 10.0.0.2\n\
             route add 10.0.0.1 dev g1\n\
             link add g2 up type gre remote 10.0.0.1\n\
             route add 10.0.0.2 dev g2\n\
             link set g2 down\n\
             link set g2 up\n\
             route add 10.0.0.2 dev g2\n"
        );
        // Line 7 closes the loop, `link set g2 down` takes the route into
        // g2 away and opens it, line 10 closes it again: that is the line
        // to change (line 7 alone would be undone by line 8).
        let err = load(&text, false).unwrap_err();
        assert!(
            err.starts_with("t.conf:10: the routes to the remotes of tunnels g1 -> g2 -> g1"),
            "{err}"
        );
        assert!(
            err.contains("[after this line; g1 is added at line 4, g2 at line 6]"),
            "{err}"
        );
    }

    #[test]
    fn tunnels_over_tunnels_that_end_on_a_real_link_are_accepted() {
        // g1 over g2 over g3 over eth0, and a network behind g1.
        let text = format!(
            "{UNDERLAY}link add g3 up type gre remote 198.51.100.3 local 192.0.2.1\n\
             addr add 10.3.0.1/30 dev g3\n\
             link add g2 up type gre remote 10.3.0.2\n\
             addr add 10.2.0.1/30 dev g2\n\
             link add g1 up type gre remote 10.2.0.2 key 7\n\
             route add 10.9.0.0/16 dev g1\n"
        );
        let (fib, skipped) = load(&text, false).unwrap();
        assert!(skipped.is_empty(), "{skipped:?}");
        assert_eq!(via(&fib, "10.9.1.1", None), dev("g1"));
        assert_eq!(via(&fib, "10.2.0.2", None), dev("g2"));
        assert_eq!(via(&fib, "10.3.0.2", None), dev("g3"));
        assert_eq!(via(&fib, "198.51.100.3", Some("192.0.2.1")), uplink());
        // The same chain with g3's remote sent back into g1: a loop of
        // three, placed on that route.
        let looped = format!("{text}route add 198.51.100.3 dev g1\n");
        let err = load(&looped, false).unwrap_err();
        assert!(
            err.starts_with(
                "t.conf:10: the routes to the remotes of tunnels g1 -> g2 -> g3 -> g1 go round: \
                 remote 10.2.0.2 of g1 leaves through g2 (route 10.2.0.0/30), \
                 remote 10.3.0.2 of g2 leaves through g3 (route 10.3.0.0/30), \
                 remote 198.51.100.3 of g3 leaves through g1 (route 198.51.100.3);"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_tunnel_leading_into_a_loop_it_is_not_part_of_is_not_refused_apart() {
        // g0 over g1, while g1 and g2 carry each other: one refusal, for
        // the loop; once it is skipped, g0 is fine as well.
        let text = format!(
            "{}link add g0 up type gre remote 10.0.0.9\nroute add 10.0.0.9 dev g1\n",
            two_tunnel_loop()
        );
        let err = load(&text, false).unwrap_err();
        assert!(
            err.starts_with("t.conf:7: the routes to the remotes of tunnels g1 -> g2 -> g1"),
            "{err}"
        );
        assert!(err.ends_with("nothing applied (1 error)"), "{err}");
        let (fib, skipped) = load(&text, true).unwrap();
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert!(skipped[0].starts_with("t.conf:7: "), "{skipped:?}");
        assert_eq!(via(&fib, "10.0.0.9", None), dev("g1"));
        assert_eq!(via(&fib, "10.0.0.2", Some("192.0.2.1")), uplink());
    }

    #[test]
    fn force_skips_the_line_that_closes_a_loop_and_applies_the_rest() {
        let text = format!("{}route add 10.7.0.0/16 dev g2\n", two_tunnel_loop());
        let (fib, skipped) = load(&text, true).unwrap();
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert!(
            skipped[0].starts_with(
                "t.conf:7: the routes to the remotes of tunnels g1 -> g2 -> g1 go round"
            ),
            "{skipped:?}"
        );
        // Everything but line 7: both tunnels, g2's remote into g1, and
        // the route after the skipped line.
        assert!(fib.link_by_name("g1").is_some() && fib.link_by_name("g2").is_some());
        assert_eq!(via(&fib, "10.0.0.1", Some("192.0.2.1")), dev("g1"));
        assert_eq!(via(&fib, "10.0.0.2", Some("192.0.2.1")), uplink());
        assert_eq!(via(&fib, "10.7.1.1", None), dev("g2"));
    }

    #[test]
    fn deleting_the_local_address_is_blamed_on_the_addr_del() {
        let text = format!(
            "{UNDERLAY}link add gre1 up type gre remote 198.51.100.2 local 192.0.2.1\n\
             route add 10.9.0.0/16 dev gre1\n\
             addr del 192.0.2.1/24 dev eth0\n"
        );
        assert_eq!(
            load(&text, false).unwrap_err(),
            "t.conf:6: local address 192.0.2.1 of tunnel gre1 is not configured on this router \
             (expected one of its addresses; add it with \"addr add 192.0.2.1/LEN dev DEV\") \
             [after this line; gre1 is added at line 4]\nnothing applied (1 error)"
        );
        // With force, the addr del is what is skipped: the address stays.
        let (fib, skipped) = load(&text, true).unwrap();
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert!(skipped[0].starts_with("t.conf:6: local address 192.0.2.1"));
        assert!(fib
            .addresses(Some(Family::V4))
            .iter()
            .any(|a| a.local.to_string() == "192.0.2.1"));
        assert_eq!(via(&fib, "10.9.0.1", None), dev("gre1"));
    }

    #[test]
    fn a_local_address_added_late_then_deleted_is_blamed_on_the_deletion() {
        let text = format!(
            "{UNDERLAY}link add gre1 type gre remote 198.51.100.2 local 192.0.2.9\n\
             addr add 192.0.2.9/32 dev eth0\n\
             route add 10.9.0.0/16 via 192.0.2.254\n\
             addr del 192.0.2.9/32 dev eth0\n"
        );
        let err = load(&text, false).unwrap_err();
        assert!(
            err.starts_with("t.conf:7: local address 192.0.2.9 of tunnel gre1"),
            "{err}"
        );
        // Never added at all: the tunnel's own line, without a note.
        let text = text
            .replace("addr add 192.0.2.9/32 dev eth0\n", "")
            .replace("addr del 192.0.2.9/32 dev eth0\n", "");
        let err = load(&text, false).unwrap_err();
        assert!(
            err.starts_with("t.conf:4: local address 192.0.2.9 of tunnel gre1"),
            "{err}"
        );
        assert!(!err.contains("[after this line"), "{err}");
    }

    #[test]
    fn a_route_deleted_or_a_link_taken_down_that_sends_the_remote_into_the_tunnel_is_blamed() {
        // The default leads into gre1 from line 5 on; the host route of
        // line 6 keeps the remote out, until line 7 deletes it.
        let base = "link add eth0 up type dummy\naddr add 192.0.2.1/24 dev eth0\nlink add eth1 up type dummy\n";
        let text = format!(
            "{base}link add gre1 up type gre remote 198.51.100.2\n\
             route add default dev gre1\n\
             route add 198.51.100.2 via 192.0.2.254\n\
             route del 198.51.100.2 via 192.0.2.254\n"
        );
        let err = load(&text, false).unwrap_err();
        assert_eq!(
            err,
            "t.conf:7: the route to remote 198.51.100.2 leaves through gre1 itself: the tunnel would loop \
             (expected a route to 198.51.100.2 over another link) [after this line; gre1 is added at line 4]\n\
             nothing applied (1 error)"
        );
        let (fib, skipped) = load(&text, true).unwrap();
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert_eq!(via(&fib, "198.51.100.2", None), uplink());
        // Taking eth0 down takes its routes with it.
        let text = text.replace(
            "route del 198.51.100.2 via 192.0.2.254\n",
            "link set eth0 down\n",
        );
        let err = load(&text, false).unwrap_err();
        assert!(
            err.starts_with(
                "t.conf:7: the route to remote 198.51.100.2 leaves through gre1 itself"
            ),
            "{err}"
        );
    }

    #[test]
    fn one_line_that_breaks_two_tunnels_is_refused_for_each_and_skipped_once() {
        let text = format!(
            "{UNDERLAY}link add gre1 up type gre remote 198.51.100.2 local 192.0.2.1\n\
             link add gre2 up type gre remote 198.51.100.3 local 192.0.2.1\n\
             addr del 192.0.2.1/24 dev eth0\n\
             link add gre3 up type gre remote 198.51.100.4\n"
        );
        let err = load(&text, false).unwrap_err();
        assert!(
            err.starts_with("t.conf:6: local address 192.0.2.1 of tunnel gre1"),
            "{err}"
        );
        assert!(
            err.contains("\nt.conf:6: local address 192.0.2.1 of tunnel gre2"),
            "{err}"
        );
        assert!(
            err.ends_with("[after this line; gre2 is added at line 5]\nnothing applied (2 errors)"),
            "{err}"
        );
        let (fib, skipped) = load(&text, true).unwrap();
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        for name in ["gre1", "gre2", "gre3"] {
            assert!(fib.link_by_name(name).is_some(), "{name}");
        }
    }

    #[test]
    fn refusals_are_judged_against_the_fib_the_file_is_applied_to() {
        let (base, _) = load(
            &format!("{UNDERLAY}link add g1 up type gre remote 10.0.0.2 local 192.0.2.1\n"),
            false,
        )
        .unwrap();
        // A later file breaking a tunnel it did not add is refused too,
        // and says where the tunnel comes from.
        let err = load_onto(
            &base,
            "route add 10.5.0.0/16 via 192.0.2.254\naddr del 192.0.2.1/24 dev eth0\n",
            false,
        )
        .unwrap_err();
        assert!(
            err.starts_with("t.conf:2: local address 192.0.2.1 of tunnel g1"),
            "{err}"
        );
        assert!(
            err.contains("[after this line; g1 from before this file]"),
            "{err}"
        );
        // A loop the FIB already had (built here without the loader's
        // checks) is not the next file's doing.
        let mut looped = base.clone();
        for line in [
            "link add g2 up type gre remote 10.0.0.1",
            "route add 10.0.0.1 dev g1",
            "route add 10.0.0.2 dev g2",
        ] {
            for command in parse_words(&words(line)).unwrap() {
                looped.apply(&command).unwrap();
            }
        }
        let (fib, skipped) =
            load_onto(&looped, "route add 10.5.0.0/16 via 192.0.2.254\n", false).unwrap();
        assert!(skipped.is_empty());
        assert_eq!(via(&fib, "10.5.0.1", None), uplink());
        // ...but opening it and closing it again is.
        let err = load_onto(
            &looped,
            "route del 10.0.0.2 dev g2\nroute add 10.0.0.2 dev g2\n",
            false,
        )
        .unwrap_err();
        assert!(
            err.starts_with("t.conf:2: the routes to the remotes of tunnels g1 -> g2 -> g1"),
            "{err}"
        );
        assert!(
            err.contains("[after this line; g1 from before this file, g2 from before this file]"),
            "{err}"
        );
    }

    /// One line of a random tunnel configuration: three tunnels whose
    /// remotes are 10.0.0.1-3, routes into them, and the address and link
    /// changes that can open or close their loops.
    fn tunnel_line() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let n = || 1..=3u8;
        prop_oneof![
            (n(), n()).prop_map(|(t, r)| format!(
                "link add g{t} up type gre remote 10.0.0.{r} local 192.0.2.1"
            )),
            (n(), n()).prop_map(|(r, t)| format!("route add 10.0.0.{r} dev g{t}")),
            (n(), n()).prop_map(|(r, t)| format!("route del 10.0.0.{r} dev g{t}")),
            n().prop_map(|t| format!("route replace default dev g{t}")),
            n().prop_map(|t| format!("link set g{t} down")),
            n().prop_map(|t| format!("link set g{t} up")),
            n().prop_map(|t| format!("link del g{t}")),
            Just("addr del 192.0.2.1/24 dev eth0".to_string()),
            Just("addr add 192.0.2.1/24 dev eth0".to_string()),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// With `-force` whatever is loaded has no tunnel that does not
        /// fit, and without it the file loads exactly when `-force` would
        /// skip nothing, or is refused on lines of the file.
        #[test]
        fn loaded_tunnels_always_fit(lines in proptest::collection::vec(tunnel_line(), 1..12)) {
            let text = format!("{UNDERLAY}{}\n", lines.join("\n"));
            let (fib, skipped) = load(&text, true).unwrap();
            for link in fib.links() {
                if let LinkKind::Gre(spec) = &link.kind {
                    let fits = spec.check_against(&link.name, &fib);
                    proptest::prop_assert!(fits.is_ok(), "{text}\n{fits:?}");
                }
            }
            match load(&text, false) {
                Ok(_) => proptest::prop_assert!(skipped.is_empty(), "{text}\n{skipped:?}"),
                Err(err) => {
                    proptest::prop_assert!(!skipped.is_empty(), "{text}\n{err}");
                    let last = text.lines().count();
                    for diagnostic in err.lines().filter(|l| l.starts_with("t.conf:")) {
                        let line: usize = diagnostic["t.conf:".len()..].split(':').next().unwrap().parse().unwrap();
                        proptest::prop_assert!((4..=last).contains(&line), "{text}\n{err}");
                    }
                }
            }
        }
    }
}
