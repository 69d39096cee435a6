//! Lines the accept/refuse differential (`crates/fibre/tests/accept_refuse.rs`)
//! found fibre judging unlike iproute2 6.1 and the kernel, each with what
//! `ip -force -batch` in a namespace set up like [`fib`] said of it: the
//! verdict, the message, and the routes after.

mod common;
#[path = "common/ip_namespace.rs"]
mod ip_namespace;

use common::*;
use fibre_fib::config::apply_str;
use fibre_fib::*;
use ip_namespace::*;

/// The routes to `dst` in table main, as [`show`] lists them.
fn routes_to(fib: &Fib, family: Family, dst: &str) -> Vec<String> {
    show(fib, family, TABLE_MAIN)
        .into_iter()
        .filter(|r| r.split(' ').nth(1) == Some(dst))
        .collect()
}

#[test]
fn ipv6_via_and_dev_beside_nexthops_fill_in_each_path() {
    // ip accepted it (ip6_route_multipath_add copies the request's fields
    // into each path): the path's own gateway wins.
    let fib = accepted(
        "-6 route add 2001:db8:5::/48 via 2001:db8:1::9 metric 0    nexthop via 2001:db8:1::5 dev fd0 weight 256",
    );
    assert_eq!(
        routes_to(&fib, Family::V6, "2001:db8:5::/48"),
        ["unicast 2001:db8:5::/48 via 2001:db8:1::5 dev fd0 proto boot scope global metric 1024"]
    );
    // A path without a gateway takes the request's, a path without a
    // device the request's device.
    let fib = accepted("route add 2001:db8:6::/48 via 2001:db8:1::9 nexthop dev fd0");
    assert_eq!(
        routes_to(&fib, Family::V6, "2001:db8:6::/48"),
        ["unicast 2001:db8:6::/48 via 2001:db8:1::9 dev fd0 proto boot scope global metric 1024"]
    );
    let fib = accepted(
        "route add 2001:db8:7::/48 dev fd0 nexthop via 2001:db8:1::5 nexthop via 2001:db8:1::6",
    );
    assert_eq!(
        routes_to(&fib, Family::V6, "2001:db8:7::/48"),
        ["unicast 2001:db8:7::/48 via 2001:db8:1::5 dev fd0 via 2001:db8:1::6 dev fd0 proto boot scope global metric 1024"]
    );
    // Without a gateway anywhere the paths are still device-only ones.
    refused_with(
        "route add 2001:db8:8::/48 dev fd0 nexthop dev fd0",
        "Device only routes can not be added for IPv6 using the multipath API",
    );
    // IPv4 still wants the request's fields to be the first path's.
    refused_with(
        "route add 10.21.0.0/16 via 10.1.0.5 nexthop dev fd0",
        "Nexthop gateway does not match RTA_GATEWAY or RTA_VIA",
    );
}

#[test]
fn ipv6_reject_routes_check_onlink_and_the_source_as_fib6_nh_init_does() {
    refused_with(
        "route prepend unreachable 2001:db8:20:1::1/128 proto zebra mtu lock 1400 onlink",
        "Nexthop device required for onlink",
    );
    refused_with(
        "route add unreachable 2001:db8:20:1::1/128 onlink dev fd2",
        "Nexthop device is not up",
    );
    // The reject route hangs off lo: ::1 is a source there, a global
    // address of any link is one everywhere, an unknown one nowhere.
    accepted("route add unreachable 2001:db8:20::/48 src ::1 dev fd0");
    accepted("route add blackhole 2001:db8:20::/48 src 2001:db8:2::1");
    refused_with(
        "route add prohibit 2001:db8:20::/48 src 2001:db8:9::1",
        "Invalid source address",
    );
}

#[test]
fn ipv6_host_and_link_scoped_sources_count_on_their_own_device_only() {
    // ipv6_chk_addr(net, src, dev, 0): ::1 is lo's alone.
    refused_with(
        "route a broadcast 2001:db8:20::/48 src ::1 dev fdv0",
        "Invalid source address",
    );
    refused_with(
        "route add 2001:db8:20::/48 src ::1 dev fdv0",
        "Invalid source address",
    );
    // A global address is a source on any link.
    let fib = accepted("route add 2001:db8:20::/48 src 2001:db8:1::1 dev fdv0");
    assert_eq!(
        routes_to(&fib, Family::V6, "2001:db8:20::/48"),
        ["unicast 2001:db8:20::/48 dev fdv0 proto boot scope global metric 1024 src 2001:db8:1::1"]
    );
}

#[test]
fn an_address_with_an_empty_peer_fails_the_kernels_policy() {
    // get_addr_1 reads any/all as no bytes (default as the family's
    // zeros); IFA_ADDRESS of none fails ifa_ipv4_policy and
    // ifa_ipv6_policy.
    for line in [
        "addr rep 127.0.0.1/32 remote all dev fd0",
        "addr add 10.1.0.7/24 peer any dev fd0",
        "addr add 2001:db8:1::7/64 peer all dev fd0",
        "addr add 10.1.0.7/24 peer any peer 10.1.0.9 dev fd0",
    ] {
        refused_with(line, "Error: Attribute failed policy validation.");
    }
    // A real peer and then an empty one is a duplicate to ipaddr_modify.
    refused_with(
        "addr add 10.1.0.7/24 peer 10.1.0.9 peer any dev fd0",
        "duplicate",
    );
    // iproute2's own refusals come first.
    refused_with(
        "addr add 10.1.0.7/24 peer any dev nosuch0",
        "Cannot find device \"nosuch0\"",
    );
}

#[test]
fn the_kernels_refusals_come_before_fibres_of_what_it_does_not_model() {
    for (line, ip_says) in [
        (
            "route append 198.51.100.0/24 dev fd2 realm 5",
            "Error: Device for nexthop is not up.",
        ),
        (
            "route append 198.51.100.0/24 src 10.1.0.5 dev fd0 prio 0 realm 5",
            "Error: Invalid prefsrc address.",
        ),
        (
            "route append  2001:db8:21::/48 expires    5",
            "RTNETLINK answers: No such device",
        ),
        (
            "rou change nat ff00::/8 onlink via 2001:db8:1::9",
            "Error: Nexthop device required for onlink.",
        ),
    ] {
        refused_with(line, ip_says);
    }
    // What the kernel would take is still refused, by fibre, saying why.
    refused_with(
        "route add 198.51.100.0/24 dev fd0 realm 5",
        "does not model \"realms\"",
    );
}

#[test]
fn an_ipv4_delete_compares_realms_only_beside_a_device_or_gateway() {
    // fib_nh_match: without dev or via the realms are not looked at.
    let fib = accepted("route add 10.20.0.0/16 dev fd0\nroute del 10.20.0.0/16 realm 5");
    assert!(routes_to(&fib, Family::V4, "10.20.0.0/16").is_empty());
    refused_with(
        "route add 10.20.0.0/16 dev fd0\nroute del 10.20.0.0/16 realm 5 mtu 1280",
        "RTNETLINK answers: No such process",
    );
    // Beside a device they are, and no route of fibre's has realms.
    refused_with(
        "route add 10.20.0.0/16 dev fd0\nroute del 10.20.0.0/16 realm 5 dev fd0",
        "RTNETLINK answers: No such process",
    );
    refused_with(
        "route add 10.20.0.0/16 dev fd0\nroute del 10.20.0.0/16 realm 5 dev fd0 table 77",
        "Error: FIB table does not exist.",
    );
}

#[test]
fn link_refusals_iproute2_and_the_kernel_give_first() {
    for (line, ip_says) in [
        // vxlan_validate: IFLA_MTU before the missing options.
        (
            "link a fdv5 \t mtu +5 type vxlan",
            "Error: MTU must be between 68 and 65535.",
        ),
        (
            "link add fdv5 mtu 70000 type vxlan",
            "Error: MTU must be between 68 and 65535.",
        ),
        (
            "link add fdv5 mtu 1500 type vxlan",
            "Error: Required attributes not provided to perform the operation.",
        ),
        // The peer's own iplink_parse.
        (
            "link add fd1 ty veth peer fdv5 mtu",
            "Command line is not complete. Try option \"help\"",
        ),
        (
            "link add fd1 type veth peer fdv5 1500",
            "Error: either \"dev\" is duplicate, or \"1500\" is a garbage.",
        ),
        (
            "link add fd0  up type veth peer name fdv6 1500",
            "both \"name\" and \"dev\" cannot be used when creating devices.",
        ),
        // veth_validate, before the name is found taken.
        (
            "link add g1 mtu -1 type veth",
            "RTNETLINK answers: Invalid argument",
        ),
        (
            "link add fd0 mtu 5 type veth",
            "RTNETLINK answers: Invalid argument",
        ),
        (
            "link add g1 mtu 65536 type veth peer fdv6",
            "RTNETLINK answers: Invalid argument",
        ),
        (
            "link add fd0 mtu 5 type veth peer name fdv6 up",
            "RTNETLINK answers: Invalid argument",
        ),
        // __rtnl_newlink's EEXIST before the peer is opened.
        (
            "li add fd0 down type veth peer name fdv6 up",
            "RTNETLINK answers: File exists",
        ),
        (
            "link add g1 type veth peer name fdv6 up",
            "RTNETLINK answers: Transport endpoint is not connected",
        ),
        // gre_parse_opt's usage for what it does not know.
        (
            "link add name fdv5 type gre remote 1.2.3 up",
            "Usage: ... gre",
        ),
    ] {
        refused_with(line, ip_says);
    }
}

#[test]
fn a_table_past_255_stays_the_requests_whatever_table_follows() {
    // RTA_TABLE and FRA_TABLE are read over rtm_table and frh.table.
    let fib = accepted(
        "route add 10.9.0.0/16 dev fd0 table 300 table 100\n\
         route add 10.8.0.0/16 dev fd0 table 100 table 300\n\
         route add 10.7.0.0/16 dev fd0 table 300 table 400",
    );
    assert_eq!(show(&fib, Family::V4, 300).len(), 2);
    assert_eq!(show(&fib, Family::V4, 400).len(), 1);
    assert!(show(&fib, Family::V4, 100).is_empty());
    let fib = accepted("-6 rule ad table 4294967295 suppress_prefixlength 32 table 100");
    let rule = &fib.rules(Family::V6)[1];
    assert_eq!(rule.action, RuleAction::Lookup(4_294_967_295));
}

#[test]
fn ipv6_deletes_find_the_table_and_the_null_entry_first() {
    // ip6_route_del: fib6_get_table; IPv4's table 250 is not IPv6's.
    refused_with(
        "route add 10.6.0.0/16 dev fd0 table 250\n-6 route del 2001:db8:10::/48 table 250",
        "Error: FIB table does not exist.",
    );
    refused_with(
        "route del to 2001:db8:10::/48\ttable 200",
        "Error: FIB table does not exist.",
    );
    // A refused add made it (fib6_new_table before the paths' checks).
    let (_, refusals) = apply_str(
        &fib(),
        "t.conf",
        "-6 route add 2001:db8:10::/48 via 2001:db8:9::1 table 250\n\
         -6 route del 2001:db8:10::/48 table 250",
        true,
    )
    .unwrap();
    let refusals: Vec<String> = refusals.iter().map(|d| d.to_string()).collect();
    assert_eq!(
        refusals,
        [
            "t.conf:1: RTNETLINK answers: No route to host",
            "t.conf:2: RTNETLINK answers: No such process"
        ]
    );
    // fib6_null_entry's gateway is ::.
    refused_with(
        "route del local ::/0 \t via \t ::",
        "RTNETLINK answers: No such file or directory",
    );
    refused_with(
        "route del ::/0 via ::1",
        "RTNETLINK answers: No such process",
    );
}

#[test]
fn ipv6_reject_routes_with_several_paths_repeat_the_first() {
    let fib = accepted("route add prohibit 2001:db8:44::/48 nexthop via 2001:db8:1::9 dev fd0");
    assert_eq!(routes_to(&fib, Family::V6, "2001:db8:44::/48").len(), 1);
    refused_with(
        "route add prohibit 2001:db8:45::/48 nexthop via 2001:db8:1::9 dev fd0 nexthop via 2001:db8:1::8 dev fd0",
        "RTNETLINK answers: File exists",
    );
    refused_with(
        "route change prohibit  ff00::/8 nexthop\tvia 2001:db8:1::1 dev fdv0 nexthop via 2001:db8:2::9 weight 7",
        "RTNETLINK answers: File exists",
    );
}

#[test]
fn ipv6_adds_without_an_ipv6_gateway_where_one_is_needed() {
    // rtm_to_fib6_config and rtm_to_fib6_multipath_config, before any
    // path is looked at (fd2 is down).
    refused_with(
        "route add ::ffff:10.20.0.0/112 nexthop dev fd2 nexthop via 2001:db8:2::9",
        "Error: Device only routes can not be added for IPv6 using the multipath API.",
    );
    refused_with(
        "route add 2001:db8:22::/48 nexthop via inet 192.0.2.1 dev fd0",
        "Error: Device only routes can not be added for IPv6 using the multipath API.",
    );
    refused_with(
        "route add 2001:db8:21::/48 proto 0x10\tvia inet 192.0.2.1 table 100 metric 1024",
        "Error: IPv6 does not support RTA_VIA attribute.",
    );
    // The request's own gateway counts for a path without one.
    let fib = accepted(
        "route add 2001:db8:23::/48 via 2001:db8:1::9 nexthop dev fd0 nexthop via 2001:db8:1::8 dev fd0",
    );
    assert_eq!(routes_to(&fib, Family::V6, "2001:db8:23::/48").len(), 1);
}

#[test]
fn every_label_and_a_default_peer_as_the_kernel_reads_them() {
    refused_with(
        "-4 addr add 10.1.0.2/0    remote 10.2.0.9 label fd0:abcdefghijklmn label fdv0:x dev fdv0",
        "Error: Attribute failed policy validation.",
    );
    let fib = accepted("addr ad 2001:db8:2::7/48 peer default dev fd2");
    let added = fib
        .addresses(Some(Family::V6))
        .into_iter()
        .find(|a| a.local == ip("2001:db8:2::7"))
        .expect("2001:db8:2::7 added");
    assert_eq!((added.prefix_len, added.peer), (48, None));
    refused_with(
        "addr add 2001:db8:2::7/48 peer default peer 2001:db8:2::8 dev fd2",
        "duplicate",
    );
    refused_with(
        "addr add 10.1.0.255 remote default dev a:b",
        "Cannot find device \"a:b\"",
    );
    // A veth's peer whose name is taken, before the peer is opened.
    refused_with(
        "link add fd6 type veth peer name fdv0 up",
        "RTNETLINK answers: File exists",
    );
}

#[test]
fn lo_keeps_its_inet6_dev_below_1280_and_via_colons_is_no_gateway() {
    let fib = accepted("link set lo mtu 1000\naddr add 2001:db8:7::1/64 dev lo");
    assert!(fib
        .addresses(Some(Family::V6))
        .iter()
        .any(|a| a.local == ip("2001:db8:7::1")));
    refused_with(
        "link set fd0 mtu 1000\naddr add 2001:db8:7::1/64 dev fd0",
        "RTNETLINK answers: Invalid argument",
    );
    // ip6_route_del: `via ::` is the gateway of a path without one.
    let fib = accepted("route del broadcast ff00::/8 dev fd0    via ::");
    assert!(show(&fib, Family::V6, TABLE_LOCAL)
        .iter()
        .all(|r| !(r.contains("ff00::/8") && r.contains("dev fd0"))));
    refused_with(
        "route del ff00::/8 dev fd0 via 2001:db8:1::9 table local",
        "RTNETLINK answers: No such process",
    );
}

#[test]
fn a_requests_dev_beside_paths_with_their_own_is_still_looked_up() {
    refused_with(
        "route prepend    broadcast 2001:db8:5::/48 dev \t fd6 nexthop via ff02::1 dev lo onlink",
        "Cannot find device \"fd6\"",
    );
}

/// Kernel-checked (6.18): a reject route keeps the request's `onlink`
/// (fib_nh_init copies the flags into IPv4's one path; fib6_nh_init sets
/// it before fib6_is_reject hangs the route off lo), and ip shows it:
/// `blackhole 10.50.0.0/16 onlink`, `blackhole 2001:db8:20::/48 dev lo
/// metric 1024 onlink pref medium`. Without it there is no flag, and an
/// IPv4 reject route has no path.
#[test]
fn reject_routes_keep_onlink() {
    let fib = accepted(
        "route add blackhole 10.50.0.0/16 onlink\n\
         route add unreachable 10.51.0.0/16\n\
         -6 route add blackhole 2001:db8:20::/48 scope 253 nexthop via ff02::1 dev lo onlink\n\
         -6 route add prohibit 2001:db8:23::/48 dev fd0 onlink\n\
         -6 route add blackhole 2001:db8:24::/48",
    );
    let onlink = |family: Family, dst: &str| -> Vec<bool> {
        fib.routes(family, Some(TABLE_MAIN))
            .into_iter()
            .find(|r| r.dst == prefix(dst))
            .unwrap_or_else(|| panic!("{dst} not installed"))
            .nexthops
            .iter()
            .map(|n| n.flags.onlink)
            .collect()
    };
    assert_eq!(onlink(Family::V4, "10.50.0.0/16"), [true]);
    assert_eq!(onlink(Family::V4, "10.51.0.0/16"), [] as [bool; 0]);
    assert_eq!(onlink(Family::V6, "2001:db8:20::/48"), [true]);
    assert_eq!(onlink(Family::V6, "2001:db8:23::/48"), [true]);
    assert_eq!(onlink(Family::V6, "2001:db8:24::/48"), [false]);
    // Still a blackhole, deleted by its destination and type.
    assert_eq!(
        get_to(&fib, "10.50.1.1"),
        get_to(&accepted("route add blackhole 10.50.0.0/16"), "10.50.1.1")
    );
    let fib = accepted("route add blackhole 10.50.0.0/16 onlink\nroute del blackhole 10.50.0.0/16");
    assert!(routes_to(&fib, Family::V4, "10.50.0.0/16").is_empty());
}

/// Kernel-checked (6.18): `mtu 0` is no MTU metric (ip_metrics_convert
/// keeps the zero, rtnetlink_put_metrics reports only values that are not
/// zero), but a locked one is still shown, `mtu lock 0`; both families.
#[test]
fn an_mtu_of_zero_is_no_mtu_unless_locked() {
    let fib = accepted(
        "route add 10.77.0.0/16 dev fd0 mtu 00\n\
         route replace 224.0.0.0/4 mtu 0 oif fd0 table unspec metric 10\n\
         route add 10.79.0.0/16 dev fd0 mtu lock 0\n\
         -6 route add 2001:db8:77::/64 dev fd0 mtu 0\n\
         -6 route add 2001:db8:79::/64 dev fd0 mtu lock 0",
    );
    let mtu = |family: Family, dst: &str| {
        let r = fib
            .routes(family, Some(TABLE_MAIN))
            .into_iter()
            .find(|r| r.dst == prefix(dst))
            .unwrap_or_else(|| panic!("{dst} not installed"));
        (r.mtu, r.mtu_lock)
    };
    assert_eq!(mtu(Family::V4, "10.77.0.0/16"), (None, false));
    assert_eq!(mtu(Family::V4, "224.0.0.0/4"), (None, false));
    assert_eq!(mtu(Family::V4, "10.79.0.0/16"), (Some(0), true));
    assert_eq!(mtu(Family::V6, "2001:db8:77::/64"), (None, false));
    assert_eq!(mtu(Family::V6, "2001:db8:79::/64"), (Some(0), true));
}

/// Kernel-checked (6.18): `addr add 224.0.0.0/4 dev lo` gets lo's local
/// prefix route `local 224.0.0.0/4 dev lo table local ... src 224.0.0.0`:
/// fib_valid_prefsrc takes a local route's own destination as its source
/// whatever its length, though inet_addr_type calls the address multicast.
#[test]
fn a_multicast_prefix_on_lo_gets_its_local_route() {
    let fib = accepted("link set lo up\naddr add 224.0.0.0/4 dev lo");
    let local = show(&fib, Family::V4, TABLE_LOCAL);
    assert!(
        local
            .iter()
            .any(|r| r.starts_with("local 224.0.0.0/4 dev lo")),
        "{local:?}"
    );
    assert!(
        local
            .iter()
            .any(|r| r.starts_with("local 224.0.0.0 dev lo")),
        "{local:?}"
    );
}

/// iproute2 6.1's ipaddr_modify reads any prefix of `help` (`h`, `he`,
/// ...) where it reads the local address as a request for its usage,
/// before it refuses a second address.
#[test]
fn help_where_an_address_goes_prints_the_address_usage() {
    for line in [
        "addr del 10.1.0.2/31 broadcast 10.1.0.255 h dev lo",
        "-4 addr del 127.0.0.1/024 h dev lo",
        "addr add local he dev fd0",
        "addr add help",
    ] {
        refused_with(
            line,
            "Usage: ip address {add|change|replace} IFADDR dev IFNAME [ LIFETIME ]",
        );
    }
    // The empty word is no prefix to matches(), `home` a flag, not help.
    refused_with(
        "addr add 10.1.0.1/31 \"\" dev fdv0",
        "Error: either \"local\" is duplicate, or \"\" is a garbage.",
    );
    accepted("addr add 10.1.0.9/24 home dev fd0");
}

/// Kernel-checked (6.18), each line's answer after the base:
/// fib_create_info checks the type's scope before fib_get_nhs compares a
/// device beside the nexthops; rtm_to_fib6_config refuses RTA_VIA on a
/// delete too; `default` of a known family is its all-zero address.
#[test]
fn kernel_order_of_scope_via_and_default_address_refusals() {
    refused_with(
        "route replace xresolve 010.20.0.0/16 oif lo nexthop via 10.1.0.3 dev fd0 nexthop via 10.1.0.4 dev fd0",
        "Error: Invalid scope.",
    );
    refused_with(
        "route add local 10.20.0.0/16 scope link dev lo nexthop via 10.1.0.3 dev fd0",
        "Error: Invalid scope.",
    );
    refused_with(
        "-6 route del default onlink via inet 10.2.0.9",
        "Error: IPv6 does not support RTA_VIA attribute.",
    );
    refused_with("-6 addr r default dev lo", "Error: ipv6: Invalid address.");
    refused_with(
        "-4 addr del default dev lo",
        "Error: ipv4: Address not found.",
    );
    refused_with(
        "-6 addr del default dev lo",
        "Error: ipv6: address not found.",
    );
    refused_with(
        "addr add default dev lo",
        "RTNETLINK answers: Operation not supported",
    );
    // 0.0.0.0/32: __inet_insert_ifa drops it, the request succeeds.
    let fib = accepted("-4 addr add default dev lo");
    assert_eq!(
        fib.addresses(Some(Family::V4)).len(),
        ip_namespace::fib().addresses(Some(Family::V4)).len()
    );
}

/// Kernel-checked (6.18): `brd -` and `brd +` come from the peer as
/// written, at its length (ipaddr_modify's `brd = peer`): with `remote
/// 0.0.0.0/0` the broadcast address is 0.0.0.0 and makes no route.
#[test]
fn broadcast_rules_start_from_the_peer() {
    let fib =
        accepted("addr replace 198.51.100.0/24 brd - preference 256 remote 0.0.0.0/0 dev fd0");
    let local = show(&fib, Family::V4, TABLE_LOCAL);
    assert!(
        !local.iter().any(|r| r.starts_with("broadcast 198.51.100")),
        "{local:?}"
    );
    let fib = accepted("addr add 10.7.0.1/24 peer 10.9.0.0/16 brd + dev fd0");
    let local = show(&fib, Family::V4, TABLE_LOCAL);
    assert!(
        local
            .iter()
            .any(|r| r.starts_with("broadcast 10.9.255.255 dev fd0")),
        "{local:?}"
    );
}

/// Kernel-checked (6.18): an IPv6 request's `dev` beside nexthops that all
/// name their own device is looked up by iproute2 (before the paths) and
/// then unused by ip6_route_multipath_add; the paths are judged as the
/// kernel judges them.
#[test]
fn an_ipv6_device_no_path_takes_is_only_looked_up() {
    refused_with(
        "route rep 2001:db8:20:1::/64 dev fdv0 via 2001:db8:2::9 nexthop via 2001:db8:1::1 dev fd0 weight 0x10",
        "Error: Gateway can not be a local address.",
    );
    refused_with(
        "route add 2001:db8:20::/48 dev fd9 nexthop via 2001:db8:2::5 dev fd8",
        "Cannot find device \"fd9\"",
    );
    refused_with(
        "route add 2001:db8:20::/48 dev fd9 nexthop via 2001:db8:1::5 dev fd0",
        "Cannot find device \"fd9\"",
    );
    let fib = accepted("route add 2001:db8:20::/48 dev fd2 nexthop via 2001:db8:1::5 dev fd0");
    assert_eq!(
        routes_to(&fib, Family::V6, "2001:db8:20::/48"),
        ["unicast 2001:db8:20::/48 via 2001:db8:1::5 dev fd0 proto boot scope global metric 1024"]
    );
}

/// Kernel-checked (6.18): inet_rtm_deladdr matches IFA_ADDRESS (the peer,
/// or the local address) against an address's subnet (inet_ifa_match), so
/// a peer in the subnet deletes it and a local address does not delete an
/// address that has a peer; without an in_device (MTU under 68) it is
/// "ipv4: Device not found", without an inet6_dev (under 1280)
/// inet6_addr_del's "ipv6: IPv6 is disabled on this device".
#[test]
fn address_deletions_match_as_the_kernel_does() {
    let fib = accepted("addr del 10.1.0.1/024 brd + remote 10.1.0.0/24 dev fd0");
    assert!(fib
        .addresses(Some(Family::V4))
        .iter()
        .all(|a| a.local != ip("10.1.0.1")));
    refused_with(
        "addr add 10.9.0.1 peer 10.9.0.2 dev fd0\naddr del 10.9.0.1/32 dev fd0",
        "Error: ipv4: Address not found.",
    );
    accepted("addr add 10.8.0.1/24 peer 10.7.0.0/24 dev fd0\naddr del 10.8.0.1/24 peer 10.7.0.99/24 dev fd0");
    refused_with(
        "link set fd0 mtu 67\naddr del 10.1.0.1/24 dev fd0",
        "Error: ipv4: Device not found.",
    );
    refused_with(
        "link set fd0 mtu 1000\naddr del 2001:db8:1::1/64 dev fd0",
        "Error: ipv6: IPv6 is disabled on this device.",
    );
}

/// Kernel-checked (6.18): fib_nh_match compares a delete's `via`/`dev`
/// with the route's first path and never reads its nexthop clauses.
#[test]
fn an_ipv4_delete_with_via_beside_nexthops_matches_the_first_path() {
    let route = "route add 10.12.0.0/16 nexthop via 10.1.0.9 nexthop via 10.1.0.8\n";
    let fib = accepted(&format!(
        "{route}route del 10.12.0.0/16 via 10.1.0.9 nexthop via 10.2.0.7"
    ));
    assert!(routes_to(&fib, Family::V4, "10.12.0.0/16").is_empty());
    refused_with(
        &format!("{route}route del 10.12.0.0/16 via 10.1.0.8 nexthop via 10.1.0.9"),
        "No such process",
    );
    refused_with(
        &format!("{route}route del 10.12.0.0/16 via 10.1.0.9 nexthop via 10.1.0.7 dev fd7"),
        "Cannot find device \"fd7\"",
    );
}

/// Kernel-checked (6.18): with lo's MTU under 68 lo has no in_device, and
/// __mkroute_output refuses local delivery, which leaves by lo (-EINVAL),
/// even for a local route on another link.
#[test]
fn local_delivery_without_ipv4_on_lo_is_invalid() {
    let fib = accepted("link set lo up\naddr add 127.0.0.1/16 dev fd0\nlink set lo mtu 67 up");
    assert_eq!(
        get_to(&fib, "127.0.0.1"),
        "RTNETLINK answers: Invalid argument"
    );
    assert_eq!(
        get_to(&fib, "10.1.0.1"),
        "RTNETLINK answers: Invalid argument"
    );
    assert!(get_to(&fib, "10.1.0.7").contains("dev fd0"));
    let fib = accepted("link set lo up");
    assert!(get_to(&fib, "10.1.0.1").contains("local"));
}

/// Kernel-checked (6.18): ip6_route_info_create makes `proto 0` boot (IPv4
/// keeps unspec); rtm_to_fib_config sets no gateway family for `via
/// 0.0.0.0`, so beside nexthops it is compared with nothing; a second
/// `fwmark` replaces the mark and keeps a mask given before (nla_parse
/// keeps the last FRA_FWMARK, FRA_FWMASK stays).
#[test]
fn protocol_zero_zero_gateways_and_repeated_fwmarks() {
    let fib = accepted(
        "route add 10.30.0.0/16 dev fd0 proto 0\n\
         -6 route add multicast 2001:db8:31::/48 dev fd0 proto 0\n\
         route replace 10.20.1.0/24 via 0.0.0.0 nexthop via 10.1.0.1",
    );
    let protocol = |family: Family, dst: &str| {
        fib.routes(family, Some(TABLE_MAIN))
            .into_iter()
            .find(|r| r.dst == prefix(dst))
            .unwrap_or_else(|| panic!("{dst} not installed"))
            .protocol
    };
    assert_eq!(protocol(Family::V4, "10.30.0.0/16"), Protocol::UNSPEC);
    assert_eq!(protocol(Family::V6, "2001:db8:31::/48"), Protocol::BOOT);
    assert_eq!(
        routes_to(&fib, Family::V4, "10.20.1.0/24"),
        ["unicast 10.20.1.0/24 via 10.1.0.1 dev fd0 proto boot scope global metric 0"]
    );
    let marks = |text: &str| -> Vec<Option<(u32, u32)>> {
        accepted(text)
            .rules(Family::V4)
            .iter()
            .filter(|r| r.priority == 99)
            .map(|r| r.fwmark)
            .collect()
    };
    assert_eq!(
        marks("rule add fwmark 0x10/0xff fwmark 010 pref 99"),
        [Some((8, 0xff))]
    );
    assert_eq!(
        marks("rule add fwmark 0x10 fwmark 7 pref 99"),
        [Some((7, u32::MAX))]
    );
}

/// Kernel-checked (6.18): fib_nl2rule checks an address's size before the
/// goto, so an IPv6 `from` on an IPv4 rule is refused as such first.
#[test]
fn a_rules_address_family_comes_before_its_goto() {
    refused_with(
        "rul del from 2001:db8:5::/48 lookup 100 goto 200 no",
        "Error: Invalid source address.",
    );
    refused_with(
        "rule add to 2001:db8:5::/48 goto 200 pref 10",
        "Error: Invalid dst address.",
    );
}

/// fib_props gives nat scope nowhere, and iproute2 gives it scope host:
/// beside nexthops the scope is refused first, as for xresolve.
#[test]
fn an_ipv4_nat_beside_nexthops_is_an_invalid_scope() {
    refused_with(
        "route add nat 10.20.0.0/16 dev fd0 nexthop via 10.1.0.3 dev fd2",
        "Error: Invalid scope.",
    );
}

/// Kernel-checked (6.18): `via inet 0.0.0.0` is no gateway on an IPv4
/// route but RTA_VIA on an IPv6 one; IPv4's RTAX_LOCK gathers the locks of
/// every `mtu` word; an IPv4 `addr replace` of a held address moves its
/// prefix route to the metric asked (0 when none is).
#[test]
fn zero_gateways_repeated_mtus_and_replaced_address_metrics() {
    refused_with(
        "route add 2001:db8:21::/48 dev fd0 via inet 0.0.0.0",
        "Error: IPv6 does not support RTA_VIA attribute.",
    );
    let fib = accepted("-6 route add multicast 2001:db8:20::/48 mtu lock 0 dev fd0 mtu 1280");
    let r = fib
        .routes(Family::V6, Some(TABLE_MAIN))
        .into_iter()
        .find(|r| r.dst == prefix("2001:db8:20::/48"))
        .unwrap();
    assert_eq!((r.mtu, r.mtu_lock), (Some(1280), true));
    let metric_of_subnet = |text: &str| {
        accepted(text)
            .routes(Family::V4, Some(TABLE_MAIN))
            .into_iter()
            .find(|r| r.dst == prefix("10.1.0.0/24"))
            .map(|r| r.metric)
    };
    assert_eq!(
        metric_of_subnet("addr replace 10.1.0.1/24 priority 65536 dev fd0"),
        Some(65536)
    );
    assert_eq!(
        metric_of_subnet(
            "addr replace 10.1.0.1/24 priority 9 dev fd0\naddr replace 10.1.0.1/24 dev fd0"
        ),
        Some(0)
    );
}

/// Kernel-checked (6.18): find_matching_ifa takes a peer in the held
/// address's subnet as that address; an empty IFA_LOCAL (`default` with no
/// family) before the address fails the policy whatever follows; a link
/// losing IPv4 (MTU under 68) with no address keeps its routes.
#[test]
fn matching_addresses_empty_locals_and_ipv4_off_without_addresses() {
    refused_with(
        "a add 10.1.0.1/24 label fd0 dev fd0 remote 10.1.0.0/24",
        "Error: ipv4: Address already assigned.",
    );
    refused_with(
        "addre add local default 0 dev fd0",
        "Error: Attribute failed policy validation.",
    );
    let fib = accepted("link set fd2 up\nroute add default dev fd2\nlink set fd2 mtu 8");
    let main = show(&fib, Family::V4, TABLE_MAIN);
    assert!(main.iter().any(|r| r.contains(" dev fd2")), "{main:?}");
    // ...which __mkroute_output then refuses: fd2 has no in_device.
    assert_eq!(
        get_to(&fib, "8.8.8.8"),
        "RTNETLINK answers: Invalid argument"
    );
}

/// Kernel-checked (6.18): extract_addr takes IFA_ADDRESS as a peer only
/// when it differs from IFA_LOCAL, so `remote` equal to the address adds
/// no peer route.
#[test]
fn a_peer_equal_to_the_local_address_is_none() {
    let fib = accepted("a add 2001:db8:20::/48 remote 2001:db8:20::/48 dev fd0");
    let main = show(&fib, Family::V6, TABLE_MAIN);
    assert!(
        !main
            .iter()
            .any(|r| r.starts_with("unicast 2001:db8:20:: dev")),
        "{main:?}"
    );
    assert!(fib
        .addresses(Some(Family::V6))
        .iter()
        .any(|a| a.local == ip("2001:db8:20::") && a.peer.is_none()));
}

#[test]
fn an_ipv4_delete_of_an_unmodelled_type_finds_the_table_first() {
    // inet_rtm_delroute: fib_get_table before fib_table_delete compares
    // the type (ip: `Error: FIB table does not exist.`, then `RTNETLINK
    // answers: No such process` once the table is there).
    refused_with(
        "route del xresolve 10.0.0.0/8 table 77",
        "FIB table does not exist",
    );
    refused_with(
        "route del nat 10.0.0.0/8 table 77",
        "FIB table does not exist",
    );
    refused_with("route del xresolve 10.0.0.0/8", "No such process");
    refused_with(
        "route add 10.0.0.0/8 dev fd0 table 77\nroute del xresolve 10.0.0.0/8 table 77",
        "No such process",
    );
    // A device lookup still comes first, and the prefix's host bits
    // (fib_valid_key_len) before the table and the type.
    refused_with(
        "route del xresolve 10.0.0.0/8 dev nosuch table 78",
        "Cannot find device \"nosuch\"",
    );
    for line in [
        "route del xresolve 10.20.1.0/16 table 77",
        "route delete xresolve 10.20.1.0/16 dsfield 0x04",
        "route replace nat 10.20.1.0/16 dev fd0",
        "route add xresolve 10.20.1.0/16",
    ] {
        refused_with(line, "Invalid prefix for given prefix length");
    }
}

#[test]
fn an_ipv6_default_delete_meets_the_null_entry_in_every_table() {
    // fib6_new_table roots every table at fib6_null_entry: once table 100
    // exists, `del ::/0` there is ENOENT as in main, unless its filters
    // (dev, metric) pass the null entry by (ESRCH).
    let base = "-6 route add 2001:db8:9::/48 dev fd0 table 100\n";
    refused_with("-6 route del ::/0 table 100", "FIB table does not exist");
    refused_with(
        &format!("{base}-6 route del ::/0 table 100"),
        "No such file or directory",
    );
    refused_with(
        &format!("{base}-6 route del default table 0144"),
        "No such file or directory",
    );
    refused_with(
        &format!("{base}-6 route del ::/0 table 100 dev lo"),
        "No such file or directory",
    );
    refused_with(
        &format!("{base}-6 route del ::/0 table 100 dev fd0"),
        "No such process",
    );
    refused_with(
        &format!("{base}-6 route del ::/0 table 100 metric 5"),
        "No such process",
    );
}

#[test]
fn an_ipv6_replace_giving_a_held_address_a_peer_routes_the_peers_prefix() {
    // inet6_addr_modify: addrconf_prefix_route(&ifp->peer_addr,
    // ifp->prefix_len, ...), where inet6_addr_add routes the peer's /128;
    // a new peer's old prefix route goes first, a replace without a peer
    // keeps the address' (kernel-checked).
    let peer_routes = |fib: &Fib| -> Vec<String> {
        show(fib, Family::V6, TABLE_MAIN)
            .into_iter()
            .filter(|r| r.contains("2001:db8:5:") || r.contains("2001:db8:6:"))
            .collect()
    };
    let replace = "addr replace 2001:db8:1::1/64 peer 2001:db8:5::9 dev fd0\n";
    let fib = accepted(replace);
    assert_eq!(
        peer_routes(&fib),
        ["unicast 2001:db8:5::/64 dev fd0 proto kernel scope global metric 256"]
    );
    let fib = accepted(&format!(
        "{replace}addr replace 2001:db8:1::1/64 peer 2001:db8:6::1 dev fd0 metric 7\n\
         addr replace 2001:db8:1::1/64 dev fd0"
    ));
    assert_eq!(
        peer_routes(&fib),
        ["unicast 2001:db8:6::/64 dev fd0 proto kernel scope global metric 7"]
    );
    // An add's peer is still routed as a /128.
    let fib = accepted("addr add 2001:db8:3::1/64 peer 2001:db8:5::9 dev fd0");
    assert_eq!(
        peer_routes(&fib),
        ["unicast 2001:db8:5::9 dev fd0 proto kernel scope global metric 256"]
    );
}

#[test]
fn an_ipv6_replace_restores_a_deleted_prefix_route_but_not_a_local_one() {
    // inet6_addr_modify: "prefix route could have been deleted; if so
    // restore it", at the held length and metric; the local route is not
    // made again (kernel-checked, seed 1796431676134644721).
    let held = "addr add 2001:db8:7::1/64 dev fd0 metric 5\n\
                -6 route del 2001:db8:7::/64 metric 5\n\
                -6 route del local 2001:db8:7::1 table local\n";
    let fib = accepted(&format!("{held}-6 addr replace 2001:db8:7::1 dev fd0"));
    let ours = |table| -> Vec<String> {
        show(&fib, Family::V6, table)
            .into_iter()
            .filter(|r| r.contains("2001:db8:7::"))
            .collect()
    };
    assert_eq!(
        ours(TABLE_MAIN),
        ["unicast 2001:db8:7::/64 dev fd0 proto kernel scope global metric 5"]
    );
    assert!(
        !ours(TABLE_LOCAL).iter().any(|r| r.starts_with("local ")),
        "{:?}",
        ours(TABLE_LOCAL)
    );
}

#[test]
fn lo_coming_up_below_68_gets_no_ipv4_address() {
    // do_setlink sets the MTU before the flags; under 68 inetdev_destroy
    // took lo's in_device, and inetdev_event's NETDEV_UP needs one
    // (ip: no IPv4 route left, `route get 127.0.0.1` unreachable).
    let loopback_routes = |fib: &Fib| -> Vec<String> {
        show(fib, Family::V4, TABLE_LOCAL)
            .into_iter()
            .filter(|r| r.contains("127."))
            .collect()
    };
    let fib = accepted("link set lo down\nlink set lo up mtu 67");
    assert_eq!(loopback_routes(&fib), Vec::<String>::new());
    // At 68 or more again, the next up gives lo 127.0.0.1 back.
    let fib = accepted(
        "link set lo down\nlink set lo up mtu 67\nlink set lo mtu 1500 down\nlink set lo up",
    );
    assert!(
        loopback_routes(&fib)
            .iter()
            .any(|r| r.starts_with("local 127.0.0.1 ")),
        "{:?}",
        loopback_routes(&fib)
    );
}

#[test]
fn an_address_already_assigned_comes_before_mngtmpaddrs_length() {
    // inet6_rtm_newaddr finds the held address (EEXIST) before
    // inet6_addr_add checks mngtmpaddr's /64.
    refused_with(
        "addr add 2001:db8:1::1 dev fd0 mngtmpaddr",
        "ipv6: address already assigned",
    );
    refused_with(
        "addr add 2001:db8:1::2 dev fd0 mngtmpaddr",
        "address with \"mngtmpaddr\" flag must have a prefix length of 64",
    );
}

#[test]
fn a_replace_checks_mngtmpaddr_against_the_held_length() {
    // inet6_addr_modify keeps the held length and checks the flag against
    // it, with no message (kernel-checked, seed 1796590760321612631).
    let fib = accepted("-6 addr replace 2001:db8:1::1/48 mngtmpaddr dev fd0");
    assert!(
        show(&fib, Family::V6, TABLE_MAIN)
            .iter()
            .any(|r| r.starts_with("unicast 2001:db8:1::/64 dev fd0")),
        "the held /64 stays"
    );
    refused_with(
        "addr add 2001:db8:7::1/48 dev fd0\n-6 addr replace 2001:db8:7::1/64 mngtmpaddr dev fd0",
        "Invalid argument",
    );
    // An address not held is added, at the length asked, checked before
    // ipv6_add_addr refuses a multicast one (seed 1796591449279883733).
    for line in [
        "-6 addr replace 2001:db8:7::1/48 mngtmpaddr dev fd0",
        "addr replace ff00::/8 mngtmpaddr dev lo",
    ] {
        refused_with(
            line,
            "address with \"mngtmpaddr\" flag must have a prefix length of 64",
        );
    }
    refused_with(
        "addr replace ff00::/64 mngtmpaddr dev lo",
        "Cannot assign multicast address",
    );
}

#[test]
fn a_peer_given_on_a_down_link_gets_no_host_route_when_it_comes_up() {
    // ip -batch, kernel 6.18, accept_dad 0: the peer's /128 is made when
    // DAD completes, at the add; on a down link it is not made, and
    // `link set up` restores only the address' own prefix route.
    let fib = accepted(
        "addr add local fe80::9/0 remote 2001:db8:1::5 dev fd2\n\
         addr add 2001:db8:9::9 peer 2001:db8:1::6 dev fd2\n\
         link set dev fd2 up",
    );
    assert_eq!(
        routes_to(&fib, Family::V6, "2001:db8:1::5"),
        Vec::<String>::new()
    );
    assert_eq!(
        routes_to(&fib, Family::V6, "2001:db8:1::6"),
        Vec::<String>::new()
    );
    assert_eq!(
        routes_to(&fib, Family::V6, "2001:db8:9::9"),
        ["unicast 2001:db8:9::9 dev fd2 proto kernel scope global metric 256"]
    );
    // On an up link the add makes it.
    let fib = accepted(
        "link set dev fd2 up\n\
         addr add 2001:db8:9::9 peer 2001:db8:1::6 dev fd2",
    );
    assert_eq!(
        routes_to(&fib, Family::V6, "2001:db8:1::6"),
        ["unicast 2001:db8:1::6 dev fd2 proto kernel scope global metric 256"]
    );
}

#[test]
fn an_ipv4_multipath_delete_matches_the_routes_paths_only() {
    // ip -batch, kernel 6.18 (fib_nh_match walks the route's paths).
    let base = "route add 10.20.0.0/16 dev fdv0\n";
    // The request's first path is empty: it matches; the rest are unread.
    let fib = accepted(&format!(
        "{base}-4 route del 10.20/16 nexthop nexthop via 10.3.0.1 dev fd0 nexthop dev fdv0"
    ));
    assert_eq!(
        routes_to(&fib, Family::V4, "10.20.0.0/16"),
        Vec::<String>::new()
    );
    let two =
        "route add 10.21.0.0/16 nexthop via 10.1.0.5 weight 1 nexthop via 10.1.0.6 weight 1\n";
    // Other weights and a third path: still the route.
    let fib = accepted(&format!(
        "{two}route del 10.21.0.0/16 nexthop via 10.1.0.5 weight 3 nexthop via 10.1.0.6 weight 2 nexthop via 10.1.0.7"
    ));
    assert_eq!(
        routes_to(&fib, Family::V4, "10.21.0.0/16"),
        Vec::<String>::new()
    );
    // Fewer paths than the route's: No such process.
    refused_with(
        &format!("{two}route del 10.21.0.0/16 nexthop via 10.1.0.5"),
        "No such process",
    );
    // A path that differs: No such process.
    refused_with(
        &format!("{two}route del 10.21.0.0/16 nexthop via 10.1.0.5 nexthop via 10.1.0.7"),
        "No such process",
    );
    // A lone `onlink` before the paths is rtm_flags, not a first path to
    // compare: the paths are (seed 1796423570224130157).
    refused_with(
        "route add 10.9.0.0/16 via 10.1.0.5\n\
         route del 10.9.0.0/16 onlink nexthop via 10.2.0.9 dev fd0 onlink nexthop via 10.1.0.1",
        "No such process",
    );
}

#[test]
fn an_ipv6_address_on_an_up_link_without_carrier_routes_multicast() {
    // ip -batch, kernel 6.18: inet6_addr_add -> addrconf_add_dev ->
    // addrconf_add_mroute, which a down link refuses.
    let multicast_on = |fib: &Fib, dev: &str| {
        show(fib, Family::V6, TABLE_LOCAL)
            .iter()
            .filter(|r| r.starts_with("multicast ff00::/8 ") && r.contains(&format!(" dev {dev} ")))
            .count()
    };
    let fib = accepted(
        "link add dev fdv5 up type veth peer name fdv6\n\
         addr add fe80::9/48 priority 10 remote default dev fdv5",
    );
    assert_eq!(multicast_on(&fib, "fdv5"), 1);
    // Refused by ipv6_add_addr after addrconf_add_dev: the route stays.
    let fib = apply_str(
        &ip_namespace::fib(),
        "t.conf",
        "link add dev fdv5 up type veth peer name fdv6\naddr add ::1/128 dev fdv5",
        true,
    )
    .expect("--force reports the refusal and applies the rest")
    .0;
    assert_eq!(multicast_on(&fib, "fdv5"), 1);
    // A down link: none, and none for the peer without an address.
    let fib = accepted(
        "link add dev fdv5 type veth peer name fdv6\n\
         addr add 2001:db8:9::9/48 dev fdv5",
    );
    assert_eq!(multicast_on(&fib, "fdv5"), 0);
    assert_eq!(multicast_on(&fib, "fdv6"), 0);
    // Carrier later: still one.
    let fib = accepted(
        "link add dev fdv5 up type veth peer name fdv6\n\
         addr add 2001:db8:9::9/48 dev fdv5\n\
         link set fdv6 up",
    );
    assert_eq!(multicast_on(&fib, "fdv5"), 1);
}

#[test]
fn an_l3mdev_rules_table_is_iproute2s_by_the_last_word_and_the_kernels_by_fra_table() {
    // ip 6.1 against kernel 6.18: iprule_modify checks the last table
    // word, fib_nl2rule the FRA_TABLE a table past 255 was sent as.
    refused_with(
        "rule add l3mdev table 4294967295 lookup unspec",
        "l3mdev and table are mutually exclusive",
    );
    refused_with(
        "rule add l3mdev table 300 lookup 0",
        "l3mdev and table are mutually exclusive",
    );
    for line in [
        "rule add l3mdev table 100",
        "rule add l3mdev table 300 lookup 5",
        "rule add l3mdev table 5 lookup 300",
    ] {
        refused_with(line, "table can not be specified for l3mdev rules");
    }
    accepted("rule add l3mdev lookup unspec");
    accepted("rule add l3mdev table 0");
}

#[test]
fn a_link_without_ipv4_keeps_its_ipv4_routes_down() {
    // ip -batch, kernel 6.18: under MTU 68 the link has no in_device, and
    // fib_netdev_event ignores its NETDEV_DOWN.
    let fib = accepted(
        "link set fd2 up\n\
         route add 10.9.0.0/16 dev fd2\n\
         link set fd2 mtu 67 down",
    );
    assert_eq!(
        routes_to(&fib, Family::V4, "10.9.0.0/16"),
        ["unicast 10.9.0.0/16 dev fd2 proto boot scope link metric 0"]
    );
    // With IPv4 on, down takes it.
    let fib = accepted(
        "link set fd2 up\n\
         route add 10.9.0.0/16 dev fd2\n\
         link set fd2 down",
    );
    assert_eq!(
        routes_to(&fib, Family::V4, "10.9.0.0/16"),
        Vec::<String>::new()
    );
}

#[test]
fn deleting_los_address_while_lo_is_down_takes_its_local_prefix_route() {
    // ip -batch, kernel 6.18: `local 127.0.0.0/8` (host scope) outlives lo
    // going down, and fib_del_ifaddr deletes it with the address even
    // while another address keeps lo's routes from the last-address flush
    // and another link's 127.0.0.1 keeps them from fib_sync_down_addr.
    let local_on_lo = |fib: &Fib, dst: &str| {
        show(fib, Family::V4, TABLE_LOCAL)
            .iter()
            .filter(|r| r.starts_with(&format!("local {dst} ")) && r.contains(" dev lo "))
            .count()
    };
    let fib = accepted(
        "link set lo up\n\
         link set lo down\n\
         addr add 10.20.0.1/24 dev lo",
    );
    assert_eq!(local_on_lo(&fib, "127.0.0.0/8"), 1);
    let fib = accepted(
        "link set lo up\n\
         link set lo down\n\
         addr add 127.0.0.1/24 dev fd2\n\
         addr add 10.20.0.1/24 dev lo\n\
         addr del 127.0.0.1/8 dev lo",
    );
    assert_eq!(local_on_lo(&fib, "127.0.0.0/8"), 0);
    assert_eq!(local_on_lo(&fib, "10.20.0.1"), 1);
}

#[test]
fn an_ipv6_routes_missing_device_is_iproute2s_refusal_before_the_kernels() {
    // ip 6.1 against kernel 6.18: iproute_modify's nodev, before the
    // request is sent (rtm_to_fib6_config's RTA_VIA refusal).
    for line in [
        "route add unreachable ::/0 via inet 1.2.3 dev .. dev fdv6 prot 99",
        "route add ::/0 via inet 1.2.3.4 dev fdv6",
    ] {
        refused_with(line, "Cannot find device \"fdv6\"");
    }
    refused_with(
        "route add ::/0 via inet 1.2.3.4 dev fd0",
        "IPv6 does not support RTA_VIA attribute",
    );
}

#[test]
fn an_ipv4_delete_with_mtu_0_matches_a_route_without_an_mtu() {
    // ip -batch, kernel 6.18 (fib_metrics_match compares RTAX_MTU with the
    // route's metric, 0 when unset; seed 1796431347292567740).
    let fib = accepted("route add 10.11.0.0/16 via 10.1.0.5\nroute de 10.11.0.0/16 mtu 00");
    assert_eq!(
        routes_to(&fib, Family::V4, "10.11.0.0/16"),
        Vec::<String>::new()
    );
    refused_with(
        "route add 10.11.0.0/16 via 10.1.0.5\nroute del 10.11.0.0/16 mtu 1400",
        "No such process",
    );
}

#[test]
fn a_named_veth_peer_keeps_the_default_mtu() {
    // ip -batch, kernel 6.18 (veth_newlink builds a described peer from
    // its own attributes; seed 1796431347292567740).
    let fib = accepted(
        "link add fd5 mtu 68 type veth peer fdv5\n\
         addr add 2001:db8:20::1/0 dev fdv5",
    );
    let mtu = |name: &str| fib.links().find(|l| l.name == name).map(|l| l.mtu);
    assert_eq!((mtu("fd5"), mtu("fdv5")), (Some(68), Some(1500)));
    // A peer the request does not describe takes the link's MTU.
    let fib = accepted("link add fd6 mtu 1400 type veth");
    let mtu = |name: &str| fib.links().find(|l| l.name == name).map(|l| l.mtu);
    assert_eq!((mtu("fd6"), mtu("veth0")), (Some(1400), Some(1400)));
}

#[test]
fn a_multicast_answer_from_a_route_of_slash_3_or_shorter_has_no_metrics() {
    // __mkroute_output drops the fib_info of a multicast route shorter
    // than /4: no mtu in the answer, still in fibmatch's route; a /4 keeps
    // it (kernel-checked, seed 1796591473663879165).
    let mtu_of = |text: &str, fibmatch: bool| {
        let fib = accepted(text);
        let req = RouteGetRequest {
            fibmatch,
            ..RouteGetRequest::to(ip("10.10.1.1"))
        };
        let answer = fib.route_get(&req).unwrap();
        assert_eq!(answer.kind, RouteType::Multicast, "{text}");
        (answer.mtu, answer.route.mtu)
    };
    let short = "route prepend multicast 0.0.0.0/0 dev fd0 mtu 4294967295";
    assert_eq!(mtu_of(short, false).0, None);
    assert_eq!(mtu_of(short, true).1, Some(65520));
    let four = "route prepend multicast 0.0.0.0/4 dev fd0 mtu 1400";
    assert_eq!(mtu_of(four, false).0, Some(1400));
}

#[test]
fn a_link_without_ipv6_refuses_every_ipv6_address_first() {
    // inet6_rtm_newaddr: ipv6_find_idev fails on a link whose MTU is under
    // 1280 (EINVAL, no message) before ipv6_add_addr's refusals and
    // inet6_addr_add's mngtmpaddr check (kernel-checked, seed
    // 1796591588231232631).
    for line in [
        "addr replace ::/0 dev fd2",
        "addr add ::1/128 dev fd2",
        "-6 addr add 2001:db8:1::1/48 mngtmpaddr dev fd2",
    ] {
        let text = format!("link set fd2 mtu 1000 up\n{line}");
        refused_with(&text, "Invalid argument");
    }
}

#[test]
fn a_requested_ipv6_anycast_route_takes_linkdown_as_addrconfs_do_not() {
    // rtm_to_fib6_config gives a requested anycast route no RTF_ANYCAST,
    // so fib6_nh_init marks it LINKDOWN on a link without carrier, on add
    // and when the carrier goes (kernel-checked, seed 1796591314164075810).
    let linkdown = |fib: &Fib, dst: &str| {
        fib.routes(Family::V6, Some(TABLE_LOCAL))
            .iter()
            .find(|r| r.dst.to_string() == dst)
            .unwrap_or_else(|| panic!("no route to {dst}"))
            .nexthops[0]
            .flags
            .linkdown
    };
    let fib = accepted(
        "link add fdv5 type veth peer name fdv6\nlink set fdv5 up\n\
         route add anycast 2001:db8:5::/48 dev fdv5",
    );
    assert!(linkdown(&fib, "2001:db8:5::/48"));
    let fib = accepted(
        "link add fdv5 type veth peer name fdv6\nlink set fdv5 up\nlink set fdv6 up\n\
         route add anycast 2001:db8:5::/48 dev fdv5\naddr add 2001:db8:6::1/64 dev fdv5\n\
         link set fdv6 down",
    );
    assert!(linkdown(&fib, "2001:db8:5::/48"));
    assert!(!linkdown(&fib, "2001:db8:6::"), "addrconf's anycast route");
}

#[test]
fn an_ipv6_local_answer_keeps_its_routes_gateway() {
    // ip6_rt_copy_init keeps the gateway on the route it makes for lo
    // (kernel-checked, seed 1796592769961927267).
    let fib = accepted("-6 route prepend local 2001:db8:9::/48 via 2001:db8:1::9");
    let output = fib
        .route_get(&RouteGetRequest::to(ip("2001:db8:9::1")))
        .unwrap();
    let input = fib
        .route_get(&RouteGetRequest {
            src: Some(ip("2001:db8:1::7")),
            iif: Some("fdv0".into()),
            ..RouteGetRequest::to(ip("2001:db8:9::1"))
        })
        .unwrap();
    for answer in [output, input] {
        assert_eq!(answer.gateway, Some(ip("2001:db8:1::9")));
        assert_eq!(answer.dev.as_deref(), Some("lo"));
    }
}

#[test]
fn ipv6_nat_and_xresolve_routes_route_as_unicast_under_their_own_type() {
    // rtm_to_fib6_config sets no flag for either type: fib6 routes them as
    // unicast and reports the type; iproute2 puts nat in table local
    // (kernel-checked, seeds 1796592920431233384, 1796591344067379728).
    let fib = accepted(
        "route add nat 2001:db8:5::/48 via 2001:db8:1::9\n\
         route add xresolve 2001:db8:7::/48 via 2001:db8:1::9",
    );
    assert!(show(&fib, Family::V6, TABLE_LOCAL)
        .iter()
        .any(|r| r.starts_with("nat 2001:db8:5::/48 via 2001:db8:1::9 dev fd0")));
    assert!(show(&fib, Family::V6, TABLE_MAIN)
        .iter()
        .any(|r| r.starts_with("xresolve 2001:db8:7::/48 via 2001:db8:1::9 dev fd0")));
    for (dst, kind) in [
        ("2001:db8:5::1", RouteType::Nat),
        ("2001:db8:7::1", RouteType::XResolve),
    ] {
        let answer = fib.route_get(&RouteGetRequest::to(ip(dst))).unwrap();
        assert_eq!(answer.kind, kind);
        assert_eq!(answer.gateway, Some(ip("2001:db8:1::9")));
        assert_eq!(answer.dev.as_deref(), Some("fd0"));
    }
    // IPv4 still refuses both, with the kernel's message.
    refused_with("route add nat 10.9.0.0/16 via 10.1.0.9", "Invalid scope");
}

#[test]
fn an_ipv6_lookup_rule_makes_its_table() {
    // fib6_rule_configure -> fib6_new_table: a delete in the rule's table
    // finds the table and no route, also once the rule is gone
    // (kernel-checked, seed 1796592973894125790).
    refused_with("-6 route del ff00::/8 table 88", "FIB table does not exist");
    for rule in [
        "-6 rule add from 2001:db8::/32 table 88",
        "-6 rule add from 2001:db8::/32 table 88\n-6 rule del from 2001:db8::/32 table 88",
    ] {
        let text = format!("{rule}\n-6 route del ff00::/8 table 88");
        refused_with(&text, "No such process");
    }
}

#[test]
fn onlink_without_a_gateway_is_refused_before_a_missing_in_device() {
    // fib_check_nh_nongw refuses the flags before it looks for the link's
    // in_device (kernel-checked on a link of MTU 0, seed
    // 1796593012170497452).
    let down_to_zero = "link set fd2 up\nlink set fd2 mtu 0\n";
    refused_with(
        &format!("{down_to_zero}route replace 10.5.0.0/16 tos 0x10 onlink dev fd2"),
        "Invalid flags for nexthop - PERVASIVE and ONLINK can not be set",
    );
    refused_with(
        &format!("{down_to_zero}route replace 10.5.0.0/16 dev fd2"),
        "No such device",
    );
}

#[test]
fn host_bits_of_an_ipv4_prefix_are_refused_before_its_paths_are_judged() {
    // fib_table_insert checks the prefix before fib_create_info judges the
    // type's scope and fib_get_nhs the paths (kernel-checked, seed
    // 1796594091508302741).
    for line in [
        "route append xresolve 10.20.1.0/16 priority 0xffffffff onlink nexthop via 255.255.255.255",
        "route add 10.20.1.0/16 dev fd0 nexthop via 10.1.0.9 dev fdv0",
        "route add 10.20.1.0/16 via 10.1.0.8 nexthop via 10.1.0.9",
    ] {
        refused_with(line, "Invalid prefix for given prefix length");
    }
}

#[test]
fn only_table_mains_routes_die_with_their_vanished_source() {
    // fib_sync_down_addr skips fib_infos of other tables (kernel-checked,
    // seed 1796594542185636496).
    let routes = "route add 10.20.0.0/16 dev lo table main src 10.1.0.1\n\
                  route add 10.20.0.0/16 dev lo table 100 src 10.1.0.1\n\
                  route add 10.20.0.0/16 dev lo table default src 10.1.0.1\n";
    for gone in ["addr del 10.1.0.1/24 dev fd0", "link del fd0"] {
        let fib = accepted(&format!("{routes}{gone}"));
        let held = |table| {
            show(&fib, Family::V4, table)
                .iter()
                .any(|r| r.contains("10.20.0.0/16"))
        };
        assert!(!held(TABLE_MAIN), "{gone}");
        assert!(held(100) && held(253), "{gone}");
    }
}

#[test]
fn an_ipv6_nat_or_xresolve_route_through_lo_refuses_lookups() {
    // fib6_is_reject makes it a reject route, whose error is its type's
    // (fib6_prop: EINVAL); a unicast one through lo answers
    // (kernel-checked, seed 1796592920431233384).
    let fib = accepted(
        "-6 route add 2001:db8:7::/48 dev lo\n\
         route add xresolve 2001:db8:8::/48 dev lo\n\
         route add nat 2001:db8:9::/48 dev lo table main",
    );
    assert!(fib
        .route_get(&RouteGetRequest::to(ip("2001:db8:7::1")))
        .is_ok());
    for dst in ["2001:db8:8::1", "2001:db8:9::1"] {
        let refusal = fib.route_get(&RouteGetRequest::to(ip(dst))).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "RTNETLINK answers: Invalid argument",
            "{dst}"
        );
    }
}

#[test]
fn the_requests_device_is_looked_up_before_the_nexthops_devices() {
    // iproute_modify looks the request's `dev` up before parse_nexthops
    // reads the paths, whether or not a path takes it (kernel-checked,
    // seed 1796596192418753366).
    for line in [
        "route add 2001:db8:20::/48 dev fd6 nexthop via 2001:db8:1::5 dev nosuch nexthop via 2001:db8:1::5",
        "route add 10.20.0.0/16 dev fd6 nexthop via 10.1.0.5 dev nosuch nexthop via 10.1.0.6",
    ] {
        let refusal = match apply_str(&fib(), "t.conf", line, false) {
            Ok(_) => panic!("{line:?} was accepted"),
            Err(e) => e.to_string(),
        };
        assert!(refusal.contains("Cannot find device \"fd6\""), "{line}: {refusal}");
        assert!(!refusal.contains("nosuch"), "{line}: {refusal}");
    }
    refused_with(
        "route add 2001:db8:20::/48 dev fd0 nexthop via 2001:db8:1::5 dev nosuch nexthop via 2001:db8:1::5",
        "Cannot find device \"nosuch\"",
    );
}

#[test]
fn via_0_0_0_0_is_no_gateway_to_an_ipv4_delete() {
    // rtm_to_fib_config sets no gateway family for RTA_GATEWAY 0.0.0.0, so
    // fib_nh_match compares the nexthops and ignores the realms
    // (kernel-checked, seeds 1796597255568130383, 1796597333683886652).
    let route = "route add 10.9.0.0/16 via 10.1.0.5\n";
    refused_with(
        &format!(
            "{route}-4 route del 10.9.0.0/16 via 0.0.0.0 nexthop via 10.1.0.9 dev fd0 weight 1"
        ),
        "No such process",
    );
    let fib = accepted(&format!("{route}route del 10.9.0.0/16 realm 5 via 0.0.0.0"));
    assert!(routes_to(&fib, Family::V4, "10.9.0.0/16").is_empty());
}
