//! `link` and `addr` lines judged as iproute2 6.1 (`ip -force -batch`) and
//! a 6.18 kernel judged them in a namespace set up like [`fib`]: the
//! verdict, the message, and the state after.

mod common;
#[path = "common/ip_namespace.rs"]
mod ip_namespace;

use common::*;
use fibre_fib::config::{apply_str, parse_words, tokenize};
use fibre_fib::*;
use ip_namespace::*;

fn parsed(line: &str) -> Vec<Command> {
    parse_words(&tokenize(line).unwrap()).unwrap_or_else(|e| panic!("{line:?}: {e}"))
}

#[test]
fn link_set_with_nothing_to_change_is_accepted() {
    for line in [
        "link set fd0",
        "link change fdv0",
        "link set dev fd2",
        "li s fd0 #no up",
    ] {
        let fib = accepted(line);
        assert!(fib.link_by_name("fd0").unwrap().up, "{line}");
    }
    assert_eq!(
        parsed("link set fd0"),
        [Command::LinkSet {
            name: "fd0".into(),
            up: None,
            mtu: None
        }]
    );
}

#[test]
fn link_set_finds_the_device_after_reading_the_line() {
    refused_with("link set fd6", "Cannot find device \"fd6\"");
    refused_with(
        "link set dev abcdefghijklmno",
        "Cannot find device \"abcdefghijklmno\"",
    );
    refused_with("link set fd6 up", "Cannot find device \"fd6\"");
    // A garbage word is found first, even after a name no device can have.
    refused_with(
        "link set a:b bogus",
        "Error: either \"dev\" is duplicate, or \"bogus\" is a garbage.",
    );
    refused_with(
        "link set nosuch bogus",
        "Error: either \"dev\" is duplicate, or \"bogus\" is a garbage.",
    );
}

#[test]
fn a_second_device_word_is_a_garbage_with_its_argument() {
    refused_with(
        "link set fd0 dev up",
        "Error: either \"dev\" is duplicate, or \"up\" is a garbage.",
    );
    refused_with(
        "link set fd1 dev \"\"",
        "Error: either \"dev\" is duplicate, or \"\" is a garbage.",
    );
    refused_with(
        "link set fd2 dev",
        "Command line is not complete. Try option \"help\"",
    );
    refused_with(
        "link set dev nosuch dev #no up",
        "Command line is not complete. Try option \"help\"",
    );
}

#[test]
fn abbreviations_are_the_keywords_ip_takes_them_for() {
    // `t` is txqueuelen, `d` dynamic, `m` master: before type, down and mtu.
    refused_with(
        "link add fd5 t gretap external local 10.3.0.1",
        "Error: argument \"gretap\" is wrong: Invalid \"txqueuelen\" value",
    );
    refused_with(
        "link add g1 d mtu 65536 type veth",
        "Error: argument of \"dynamic\" must be \"on\" or \"off\", not \"mtu\"",
    );
    // `ty`/`typ` are type.
    assert!(matches!(
        parsed("link add g2 ty dummy")[..],
        [Command::LinkAdd {
            kind: LinkKind::Dummy,
            ..
        }]
    ));
    // A word no keyword takes after the name.
    refused_with(
        "link add g2 TYPE dummy",
        "Error: either \"dev\" is duplicate, or \"TYPE\" is a garbage.",
    );
}

#[test]
fn dummy_and_ifb_ignore_the_words_after_the_kind() {
    for line in [
        "link add g2 type ifb x",
        "link add fd5 up down type dummy --",
    ] {
        let fib = accepted(line);
        let name = line.split(' ').nth(2).unwrap();
        assert!(fib.link_by_name(name).is_some(), "{line}");
    }
    // ... even `up`, which is the kind's there, not the link's.
    let fib = accepted("link add g1 type dummy up");
    assert!(!fib.link_by_name("g1").unwrap().up);
}

#[test]
fn kinds_fibre_does_not_model_are_refused_with_ips_words() {
    refused_with(
        "link add fd6 type vxlan",
        "Error: Required attributes not provided to perform the operation.",
    );
    refused_with(
        "link add fdv5 type vxlan 0",
        "vxlan: unknown command \"0\"?",
    );
    refused_with(
        "link add g2 down up type dum 'q'",
        "Garbage instead of arguments \"q ...\". Try \"ip link help\".",
    );
    refused_with("link add g2 type dum", "Error: Unknown device type.");
    refused_with(
        "link add g5 type veth bogus",
        "Usage: ip link <options> type veth [peer <options>]",
    );
}

#[test]
fn a_refused_link_add_leaves_no_up_or_down_behind() {
    // fd2 exists and is down: the add is refused, and its `up` is not applied.
    let (fib, refusals) = forced("link add fd2 up type dummy\n");
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert!(refusals[0].contains("File exists"), "{refusals:?}");
    assert!(!fib.link_by_name("fd2").unwrap().up);
    let (fib, _) = forced("link add fd0 down type dummy\n");
    assert!(fib.link_by_name("fd0").unwrap().up);
}

#[test]
fn link_del_takes_the_words_link_set_takes() {
    let fib = accepted("link del fd2 up");
    assert!(fib.link_by_name("fd2").is_none());
    refused_with(
        "link del fd2 bogus",
        "Error: either \"dev\" is duplicate, or \"bogus\" is a garbage.",
    );
}

#[test]
fn addr_verbs_are_do_ipaddrs() {
    refused_with(
        "addr creat 2001:db8:1::1/64 dev fd0",
        "Command \"creat\" is unknown, try \"ip address help\".",
    );
    refused_with(
        "-4 addr ADD 10.5.0.0/16 dev lo",
        "Command \"ADD\" is unknown, try \"ip address help\".",
    );
    // `change`/`chg`: a replace for both kernels, which create a missing address.
    for line in [
        "addr chg 2001:db8:1::2/48 dev fdv0 anycast 2001:db8:1::",
        "addr change 10.1.0.1/24 dev fd0",
        "addr ch 10.7.0.1/24 dev fd0",
    ] {
        let [Command::Addr { op, .. }] = &parsed(line)[..] else {
            panic!("{line}");
        };
        assert_eq!(*op, AddrOp::Replace, "{line}");
        accepted(line);
    }
}

#[test]
fn addr_words_ip_6_1_does_not_know_are_the_local_address() {
    // iproute2 6.1's ipaddr_modify has no `proto`: it is a second local.
    refused_with(
        "addr a 10.1.0.1/16 proto 2001:db8:1:: dev fd2",
        "Error: either \"local\" is duplicate, or \"proto\" is a garbage.",
    );
}

#[test]
fn anycast_is_read_and_ignored() {
    refused_with(
        "addr del 10.20.0.0/16 anycast 2001:db8:1:: dev fd0",
        "inet address is expected rather than \"2001:db8:1::\"",
    );
    refused_with(
        "address ad 2001:db8:1::1/128 anycast 2001:db8:1:: dev fd0",
        "ipv6: address already assigned",
    );
    refused_with(
        "addr del 2001:db8:1::2/0 anycast 2001:db8:1:: dev fd0",
        "ipv6: address not found",
    );
    let fib = accepted("addr add 10.1.0.7/24 anycast 10.1.0.9 dev fd0");
    assert!(fib
        .addresses(None)
        .iter()
        .any(|a| a.local == ip("10.1.0.7")));
}

#[test]
fn an_ipv6_peer_routes_the_local_prefix_and_the_peer_host() {
    // Kernel-checked: `2001:db8:20::1 peer 2001:db8:2::9` is a /128 with a
    // route to each; with `noprefixroute` only the peer's.
    let fib = accepted("addr add 2001:db8:20::1 peer 2001:db8:2::9 dev fdv0 preferred_lft 100");
    let main = show(&fib, Family::V6, TABLE_MAIN);
    for dst in ["2001:db8:20::1", "2001:db8:2::9"] {
        assert!(
            main.iter()
                .any(|r| r.starts_with(&format!("unicast {dst} dev fdv0 "))),
            "{dst}: {main:?}"
        );
    }
    let fib = accepted("addr add 2001:db8:20::1/64 peer 2001:db8:2::9/64 dev fdv0 noprefixroute");
    let main = show(&fib, Family::V6, TABLE_MAIN);
    assert!(main
        .iter()
        .any(|r| r.starts_with("unicast 2001:db8:2::9 dev fdv0 ")));
    assert!(
        !main.iter().any(|r| r.contains("2001:db8:20::")),
        "{main:?}"
    );
}

#[test]
fn an_ipv6_address_on_lo_has_its_prefix_route() {
    let fib = accepted("addr replace 2001:db8:2::1/128 label other dev lo");
    let main = show(&fib, Family::V6, TABLE_MAIN);
    assert!(
        main.iter()
            .any(|r| r.starts_with("unicast 2001:db8:2::1 dev lo proto kernel")),
        "{main:?}"
    );
    // ::1, which lo gets by itself, has none.
    assert!(
        !main.iter().any(|r| r.starts_with("unicast ::1 ")),
        "{main:?}"
    );
}

#[test]
fn a_second_mtu_after_minus_one_is_no_duplicate() {
    // iplink_parse keeps -1 for "no mtu yet"; the kernel takes the last.
    let fib = accepted("lin set dev fd2 mtu -1\tmtu  5");
    assert_eq!(fib.link_by_name("fd2").unwrap().mtu, 5);
    refused_with(
        "link set fd2 mtu 1500 mtu 5",
        "Error: duplicate \"mtu\": \"5\" is the second value.",
    );
}

#[test]
fn lo_going_down_loses_its_ipv6_and_gets_it_back() {
    let local = |fib: &Fib| show(fib, Family::V6, TABLE_LOCAL);
    let fib = accepted("link set lo down");
    assert!(
        !local(&fib).iter().any(|r| r.contains(" ::1 ")),
        "{:?}",
        local(&fib)
    );
    let fib = accepted("link set lo down\nlink set lo up");
    assert!(local(&fib)
        .iter()
        .any(|r| r.starts_with("local ::1 dev lo")));
}

#[test]
fn an_address_that_is_its_subnets_anycast_address_gets_one_route() {
    // fib6_add_rt2node: the anycast route of 2001:db8:1:: on fd2 duplicates
    // the local one (same device and metric), so only that one is there.
    let fib = accepted("addr add 2001:db8:1::/64 nodad dev fd2");
    let local = show(&fib, Family::V6, TABLE_LOCAL);
    assert!(
        local
            .iter()
            .any(|r| r.starts_with("local 2001:db8:1:: dev fd2")),
        "{local:?}"
    );
    assert!(
        !local
            .iter()
            .any(|r| r.starts_with("anycast 2001:db8:1:: dev fd2")),
        "{local:?}"
    );
    // fd0's own anycast 2001:db8:1:: (from 2001:db8:1::1/64) stays.
    assert!(local
        .iter()
        .any(|r| r.starts_with("anycast 2001:db8:1:: dev fd0")));
    // On lo an address gets its subnet's anycast route like anywhere.
    let fib = accepted("addr replace 2001:db8:20::1/48 dev lo");
    let local = show(&fib, Family::V6, TABLE_LOCAL);
    assert!(
        local
            .iter()
            .any(|r| r.starts_with("anycast 2001:db8:20:: dev lo")),
        "{local:?}"
    );
}

#[test]
fn a_veth_without_a_peer_name_gets_the_kernels() {
    let fib = accepted("link add fd5 type veth\nlink add fd6 type veth");
    let peer = |name: &str| match &fib.link_by_name(name).unwrap().kind {
        LinkKind::Veth { peer } => peer.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!((peer("fd5"), peer("fd6")), ("veth0".into(), "veth1".into()));
    assert_eq!(peer("veth0"), "fd5");
    // veth0 as the link's own name: the peer takes it first.
    refused_with("link add veth0 type veth", "File exists");
    refused_with("l add fd0 up type veth", "File exists");
}

#[test]
fn broadcast_is_read_as_ipaddr_modify_reads_it() {
    // An IPv6 broadcast is sent and ignored; `+`/`-` are refused only when
    // adding.
    accepted("addr add 2001:db8:5::1/64 broadcast 2001:db8::ff dev fd0");
    refused_with(
        "addr add 2001:db8:6::1/64 brd + dev fd0",
        "Broadcast can be set only for IPv4 addresses",
    );
    refused_with(
        "addr del 2001:db8:20::1/0 broadcast - peer 2001:db8:3::1 dev fd0",
        "ipv6: address not found",
    );
    refused_with(
        "addr del 2001:db8:1::2/0 dev fdv0 broadcast 2001:db8::ff preferred_lft 255",
        "ipv6: address not found",
    );
}

#[test]
fn autojoin_and_multicast_addresses() {
    refused_with(
        "addr add 10.1.0.2/32 autojoin dev fd0",
        "autojoin needs multicast address",
    );
    refused_with(
        "-6 addr ad ff00::/8 dev lo",
        "Error: ipv6: Cannot assign multicast address without \"IFA_F_MCAUTOJOIN\" flag.",
    );
    // Warnings come first, as on iproute2's standard error.
    refused_with(
        "addr del 10.2.0.1/16 scope host home autojoin dev fd0",
        "Warning: home option can be set only for IPv6 addresses autojoin needs multicast address",
    );
    refused_with(
        "addr replace 127.0.0.1/30 tentative anycast 2001:db8:1:: dev fdv0",
        "Warning: tentative option is not mutable from userspace Error: inet address is expected rather than \"2001:db8:1::\".",
    );
    // Only a warning, without a refusal.
    accepted("addr add 10.9.0.1/24 home dev fd0");
}

#[test]
fn the_addr_device_is_looked_up_after_the_line() {
    refused_with(
        "addr ad 2001:db8:20::1/48 dev abcdefghijklmnop bogus",
        "Error: either \"local\" is duplicate, or \"bogus\" is a garbage.",
    );
    refused_with(
        "addr add 2001:db8:20::1/48 dev a:b",
        "Cannot find device \"a:b\"",
    );
    refused_with(
        "addr add 2001:db8:20::1/48 dev fd9",
        "Cannot find device \"fd9\"",
    );
}

#[test]
fn an_ipv6_metric_of_zero_is_the_default() {
    let fib = accepted("addre add 2001:db8:2::1/128 priority 0 dev\tfd0");
    let main = show(&fib, Family::V6, TABLE_MAIN);
    assert!(
        main.iter()
            .any(|r| r
                .starts_with("unicast 2001:db8:2::1 dev fd0 proto kernel scope global metric 256")),
        "{main:?}"
    );
}

#[test]
fn a_peer_without_a_length_makes_a_host_address() {
    // ipaddr_modify: the prefix length is the peer's (32 here), not /024's 20.
    let fib = accepted("address add 10.2.0.1/024 peer 255.255.255.255 dev fd0");
    let main = show(&fib, Family::V4, TABLE_MAIN);
    assert!(
        main.iter()
            .any(|r| r.starts_with("unicast 255.255.255.255 dev fd0")),
        "{main:?}"
    );
    assert!(!main.iter().any(|r| r.contains("/20")), "{main:?}");
}

#[test]
fn an_address_that_is_another_links_broadcast_gets_only_its_local_route() {
    // fib_valid_prefsrc: table local calls 10.1.0.255 broadcast (fd0's), so
    // the prefix and broadcast routes with that source are not made.
    let fib = accepted("addr add 10.1.0.255/16 dev fdv0");
    let main = show(&fib, Family::V4, TABLE_MAIN);
    let local = show(&fib, Family::V4, TABLE_LOCAL);
    assert!(!main.iter().any(|r| r.contains("dev fdv0")), "{main:?}");
    assert!(
        local
            .iter()
            .any(|r| r.starts_with("local 10.1.0.255 dev fdv0")),
        "{local:?}"
    );
    assert!(
        !local
            .iter()
            .any(|r| r.starts_with("broadcast 10.1.255.255")),
        "{local:?}"
    );
    // Any other address of that link gets all three.
    let fib = accepted("addr add 10.7.0.255/24 dev fdv0");
    assert!(show(&fib, Family::V4, TABLE_MAIN)
        .iter()
        .any(|r| r.starts_with("unicast 10.7.0.0/24 dev fdv0")));
}

#[test]
fn lo_under_1280_has_no_ipv6() {
    let has_loopback = |fib: &Fib| {
        show(fib, Family::V6, TABLE_LOCAL)
            .iter()
            .any(|r| r.starts_with("local ::1 dev lo"))
    };
    assert!(!has_loopback(&accepted("link set lo mtu 68")));
    assert!(!has_loopback(&accepted(
        "link set lo down\nlink set lo up mtu 68"
    )));
    // Raised again, lo gets ::1 back only when it next comes up.
    assert!(!has_loopback(&accepted(
        "link set lo mtu 68\nlink set lo mtu 1500"
    )));
    assert!(has_loopback(&accepted(
        "link set lo mtu 68\nlink set lo mtu 1500\nlink set lo down\nlink set lo up"
    )));
}

#[test]
fn default_as_the_local_address_is_an_empty_one() {
    // get_prefix takes default/any/all as an address of no bytes; the
    // kernel then refuses the request, by its family.
    refused_with(
        "-6 addr del any dev fd0",
        "Error: Attribute failed policy validation.",
    );
    refused_with(
        "-4 addr del all priority 10 dev fd2",
        "Error: Attribute failed policy validation.",
    );
    refused_with(
        "addr del default dev fd2",
        "RTNETLINK answers: Operation not supported",
    );
    refused_with(
        "-6 addre del default dev \t a:b",
        "Cannot find device \"a:b\"",
    );
    // Of no bytes, it is no duplicate for the next word to replace.
    refused_with(
        "addr add default optimistic dev dev    lo",
        "Warning: optimistic option can be set only for IPv6 addresses Error: any valid prefix is expected rather than \"lo\".",
    );
}

#[test]
fn mngtmpaddr_needs_a_64() {
    let message = "Error: ipv6: address with \"mngtmpaddr\" flag must have a prefix length of 64.";
    refused_with("addr add 2001:db8:20::1/48 mngtmpaddr dev fdv0", message);
    refused_with(
        "\taddr add 2001:db8:20::1 dev fdv0 priority 0 mngtmpaddr",
        message,
    );
    accepted("addr add 2001:db8:20::1/64 mngtmpaddr dev fdv0");
    // On an IPv4 line it is only warned about.
    accepted("addr add 10.9.0.1/24 mngtmpaddr dev fd0");
}

#[test]
fn replacing_an_ipv6_address_changes_its_metric_and_prefix_route() {
    // inet6_addr_modify: the /64 stays, its route takes the new metric.
    let fib = accepted("-6 addr replace 2001:db8:1::1/128 priority 10 dev fd0");
    let main = show(&fib, Family::V6, TABLE_MAIN);
    assert!(
        main.iter().any(|r| r
            .starts_with("unicast 2001:db8:1::/64 dev fd0 proto kernel scope global metric 10")),
        "{main:?}"
    );
    assert!(!main
        .iter()
        .any(|r| r.contains("2001:db8:1::/64 dev fd0 proto kernel scope global metric 256")));
    // noprefixroute takes the route away; a replace without it brings it back.
    let fib = accepted("addr replace 2001:db8:1::1/64 noprefixroute dev fd0");
    assert!(!show(&fib, Family::V6, TABLE_MAIN)
        .iter()
        .any(|r| r.contains("2001:db8:1::/64")));
    let fib = accepted("addr replace 2001:db8:1::1/64 noprefixroute dev fd0\naddr replace 2001:db8:1::1/64 dev fd0");
    assert!(show(&fib, Family::V6, TABLE_MAIN)
        .iter()
        .any(|r| r.starts_with("unicast 2001:db8:1::/64 dev fd0")));
}

#[test]
fn words_after_a_veth_peer_are_the_peers() {
    refused_with(
        "link add name fd6 type veth peer name fdv6 up",
        "RTNETLINK answers: Transport endpoint is not connected",
    );
    assert!(apply_str(
        &fib(),
        "t.conf",
        "link add fd6 type veth peer name fdv6 mtu 1400",
        false
    )
    .is_err());
}

/// Kernel-checked (6.18): deleting fd0's only IPv4 address takes every
/// IPv4 route through fd0 with it, gateways, device routes and local
/// routes alike (`fib_disable_ip` with force), a multipath route keeps
/// its other path marked `dead linkdown` until an address comes back;
/// fd0's ARP entries go, its IPv6 ones stay. With another address left
/// on fd0 the routes stay.
#[test]
fn the_last_ipv4_address_takes_the_links_ipv4_routes() {
    let base = "addr add 10.3.0.1/24 dev fdv0\n\
                route add 10.11.0.0/16 via 10.1.0.9\n\
                route add 10.12.0.0/16 dev fd0 table 100\n\
                route add local 10.14.0.1 dev fd0\n\
                route add 10.13.0.0/16 nexthop via 10.1.0.9 nexthop via 10.3.0.9\n\
                -6 route add 2001:db8:20::/48 dev fd0\n\
                neigh add 10.1.0.7 lladdr 02:00:00:00:00:01 dev fd0\n\
                neigh add 2001:db8:1::7 lladdr 02:00:00:00:00:01 dev fd0\n";
    let fib = accepted(&format!("{base}addr del 10.1.0.1 dev fd0"));
    let main = show(&fib, Family::V4, TABLE_MAIN);
    assert!(!main.iter().any(|r| r.contains("10.11.0.0")), "{main:?}");
    assert!(show(&fib, Family::V4, 100).is_empty());
    assert!(!show(&fib, Family::V4, TABLE_LOCAL)
        .iter()
        .any(|r| r.contains("10.14.0.1")));
    let multipath = fib
        .routes(Family::V4, Some(TABLE_MAIN))
        .into_iter()
        .find(|r| r.dst == prefix("10.13.0.0/16"))
        .expect("the multipath route keeps its other path");
    let flags: Vec<(bool, bool)> = multipath
        .nexthops
        .iter()
        .map(|n| (n.flags.dead, n.flags.linkdown))
        .collect();
    assert_eq!(flags, [(true, true), (false, false)]);
    assert!(show(&fib, Family::V6, TABLE_MAIN)
        .iter()
        .any(|r| r.contains("2001:db8:20::/48 dev fd0")));
    let neighbours: Vec<std::net::IpAddr> = fib.neighbours().map(|n| n.addr).collect();
    assert_eq!(neighbours, [ip("2001:db8:1::7")]);

    // An address back on the up link revives the dead path.
    let fib = accepted(&format!(
        "{base}addr del 10.1.0.1/24 dev fd0\naddr add 10.1.0.1/24 dev fd0"
    ));
    let multipath = fib
        .routes(Family::V4, Some(TABLE_MAIN))
        .into_iter()
        .find(|r| r.dst == prefix("10.13.0.0/16"))
        .unwrap();
    assert!(multipath
        .nexthops
        .iter()
        .all(|n| !n.flags.dead && !n.flags.linkdown));

    // Another address still on fd0: only its own routes go.
    let fib = accepted(&format!(
        "{base}addr add 10.5.0.1/24 dev fd0\naddr del 10.1.0.1/24 dev fd0"
    ));
    assert!(show(&fib, Family::V4, TABLE_MAIN)
        .iter()
        .any(|r| r.contains("10.11.0.0/16 via 10.1.0.9 dev fd0")));
    assert_eq!(show(&fib, Family::V4, 100).len(), 1);
}

/// Kernel-checked (6.18), in the kernel's order: rtnl_newlink's parse of
/// the request (a new name of 16 bytes fails IFLA_IFNAME's policy), then
/// the kind's validate (veth's MTU: bare EINVAL; vxlan's required id),
/// then veth_newlink's parse of the peer's name.
#[test]
fn a_new_links_name_policy_then_the_kinds_checks_then_the_peers() {
    refused_with(
        "link add fd6 mtu 0x10 up type veth peer abcdefghijklmnop",
        "RTNETLINK answers: Invalid argument",
    );
    refused_with(
        "link add fd6 type veth peer abcdefghijklmnop",
        "Error: Attribute failed policy validation.",
    );
    refused_with(
        "link add abcdefghijklmnop type vxlan",
        "Error: Attribute failed policy validation.",
    );
    refused_with(
        "link add abcdefghijklmnop mtu 10 type veth",
        "Error: Attribute failed policy validation.",
    );
    refused_with(
        "link add a:b type vxlan",
        "Error: Required attributes not provided to perform the operation.",
    );
}
