//! Refusals in iproute2's order where it looks devices up as it reads a
//! line (`ll_name_to_index`: a nexthop's `dev`, `master`, a GRE tunnel's
//! `dev`, and once the line is read a route's or an address' `dev`), and
//! where the kernel's refusal comes only after all of iproute2's (a prefix
//! with host bits); plus the kernel's answers for IPv6 routes the tree's
//! root stands for, for `::` as an address or a peer, and for 0.0.0.0 and
//! `::` as an address or a preferred source.
//!
//! Each expectation is what `ip -force -batch` printed in a namespace
//! (iproute2 6.1 on this machine's kernel) for the same line after the
//! same configuration.

use fibre_fib::config::apply_str;
use fibre_fib::{Family, Fib, TABLE_LOCAL, TABLE_MAIN};

/// Two dummy links up with an address each, as the lines below assume.
const BASE: &str = "link add fd0 type dummy\nlink set fd0 up\naddr add 10.1.0.1/24 dev fd0\n\
                    addr add 2001:db8:1::1/64 dev fd0\nlink add fd1 type dummy\nlink set fd1 up\n";

/// The refusal of the last of `lines` after [`BASE`] (under `force`, as
/// the differential test applies lines), or `None` when it is accepted.
fn refusal(lines: &str) -> Option<String> {
    let text = format!("{BASE}{lines}\n");
    let (_, skipped) =
        apply_str(&Fib::new(), "t.conf", &text, true).unwrap_or_else(|e| panic!("{lines}: {e}"));
    let last = text.lines().count();
    assert!(
        skipped.iter().all(|d| d.line == last),
        "{lines}: a line before the last was refused: {skipped:?}"
    );
    skipped.first().map(|d| d.message.clone())
}

fn assert_refused(line: &str, want: &str) {
    let got = refusal(line).unwrap_or_else(|| panic!("{line}: accepted, want {want:?}"));
    assert!(got.contains(want), "{line}\n got: {got}\nwant: {want}");
}

fn fib_after(line: &str) -> Fib {
    let text = format!("{BASE}{line}\n");
    apply_str(&Fib::new(), "t.conf", &text, false)
        .unwrap_or_else(|e| panic!("{line}: {e}"))
        .0
}

#[test]
fn a_missing_master_is_refused_before_the_rest_of_the_line() {
    // iplink_parse: `m` is master, looked up at once.
    assert_refused(
        "link set fd1 m 9000 up",
        "argument \"9000\" is wrong: Device does not exist",
    );
    assert_refused(
        "link add fd5 m 00 type dummy",
        "argument \"00\" is wrong: Device does not exist",
    );
    // ... before the device the line names, looked up once it is read.
    assert_refused(
        "link set fd6 master 1280",
        "argument \"1280\" is wrong: Device does not exist",
    );
    // An existing master: the line is read on, the device is looked up,
    // and then do_setlink finds no ndo_add_slave on a dummy.
    assert_refused("link set fd6 master fd0", "Cannot find device \"fd6\"");
    assert_refused("link set fd1 master fd0", "Operation not supported");
    assert_refused(
        "link set fd1 master fd0 bogus",
        "either \"dev\" is duplicate, or \"bogus\" is a garbage",
    );
    // A new link takes its name first (EEXIST), then its master.
    assert_refused("link add fd1 master fd0 type dummy", "File exists");
    assert_refused(
        "link add fd7 master fd0 type dummy",
        "Operation not supported",
    );
    // No fibre device has a master, so `nomaster` changes nothing.
    assert_eq!(refusal("link set fd1 nomaster"), None);
    assert_refused(
        "link set fd1 vrf blue",
        "argument \"blue\" is wrong: Not a valid VRF name",
    );
}

#[test]
fn a_missing_nexthop_device_is_refused_where_ip_reads_it() {
    assert_refused(
        "route add 10.20.0.0/16 nexthop via 10.1.0.5 nexthop via 10.1.0.5 dev fd6 weight 257",
        "Cannot find device \"fd6\" Error: cannot parse nexthop",
    );
    // A bad weight before the missing device is ip's refusal.
    assert_refused(
        "route add 10.20.0.0/16 nexthop via 10.1.0.5 weight 257 dev fd6",
        "argument \"257\" is wrong: \"weight\" is invalid",
    );
    // The route's own `dev` is looked up before the nexthops are read.
    assert_refused(
        "route replace 10.20.0.0/16 dev fd6 onlink nexthop dev fd0",
        "Cannot find device \"fd6\"",
    );
}

#[test]
fn a_missing_route_or_address_device_comes_before_the_kernels_refusals() {
    // The kernel's ECN check (rtm_to_fib_config) comes after iproute2's `nodev`.
    assert_refused(
        "-4 route add 10.20.0.0/16 dev fd6 tos ff",
        "Cannot find device \"fd6\"",
    );
    assert_refused(
        "-4 route add 10.20.0.0/16 dev fd0 tos ff",
        "Invalid dsfield (tos): ECN bits must be 0",
    );
    // The kernel's IFA_LABEL policy and iproute2's lifetime checks come
    // after `nodev` in ipaddr_modify.
    assert_refused(
        "addr add 10.20.0.1/16 dev fd6 label fd0:abcdefghijklmn",
        "Cannot find device \"fd6\"",
    );
    assert_refused(
        "addr add 10.20.0.1/16 dev fd0 label fd0:abcdefghijklmn",
        "Attribute failed policy validation",
    );
    assert_refused(
        "addr replace 2001:db8:1::1/0 valid_lft 100 dev fd6",
        "Cannot find device \"fd6\"",
    );
    assert_refused(
        "addr add fe80::9/0 dev fd6 autojoin",
        "Cannot find device \"fd6\"",
    );
}

#[test]
fn host_bits_are_the_kernels_refusal_after_iproute2s() {
    assert_refused(
        "route add 10.20.1.0/16 src 192.0.2.1 dev dev fd0",
        "either \"to\" is duplicate, or \"fd0\" is a garbage",
    );
    assert_refused(
        "route add 10.20.1.0/16 nexthop via 10.1.0.5 weight 257",
        "argument \"257\" is wrong: \"weight\" is invalid",
    );
    assert_refused(
        "route add 10.20.1.0/16 dev fd0",
        "Invalid prefix for given prefix length",
    );
}

#[test]
fn the_ipv6_root_answers_enoent() {
    // fib6_locate finds the root for ::/0; its fib6_null_entry passes
    // ip6_route_del's filters and __ip6_del_rt refuses it.
    assert_refused("route del ::/0", "No such file or directory");
    assert_refused(
        "route del ::/0 src 2001:db8:1::5",
        "No such file or directory",
    );
    assert_refused("route del ::/0 dev lo", "No such file or directory");
    // A filter the null entry fails: ESRCH.
    assert_refused(
        "-6 route del ::/0 proto kernel",
        "No such file or directory",
    );
    assert_refused("route del ::/0 dev fd0", "No such process");
    assert_refused("-6 route del ::/0 proto boot", "No such process");
    assert_refused("route del ::/0 metric 1024", "No such process");
    assert_refused("route del ::/0 via 2001:db8:1::9", "No such process");
    assert_refused("route del 2001:db8:9::/48", "No such process");
    // fib6_add_rt2node at the root: a bare ENOENT, no extack.
    let got = refusal("-6 route change default dev fd0").expect("refused");
    assert_eq!(got, "RTNETLINK answers: No such file or directory");
    // ... and at a node with routes of another metric.
    let text =
        "route add 2001:db8:9::/48 dev fd0 metric 5\n-6 route change 2001:db8:9::/48 dev fd0";
    let got = refusal(text).expect("refused");
    assert_eq!(got, "RTNETLINK answers: No such file or directory");
    // No node at all: fib6_add_1's message.
    assert_refused(
        "-6 route change 2001:db8:9::/48 dev fd0",
        "Can not replace route - no match found",
    );
}

#[test]
fn the_unspecified_ipv6_address_is_no_address_and_no_peer() {
    assert_refused("addr add ::/0 dev fd1", "ipv6: Invalid address");
    assert_refused("-6 addr replace ::/64 dev fd1", "ipv6: Invalid address");
    // A peer of `::` gets no host route (__ipv6_ifa_notify: ipv6_addr_any).
    let fib = fib_after("addr add 2001:db8:2::1/48 remote :: dev fd1");
    let routes = fib.routes(Family::V6, Some(TABLE_MAIN));
    let shown: Vec<String> = routes.iter().map(|r| r.dst.to_string()).collect();
    assert!(shown.iter().any(|d| d == "2001:db8:2::1"), "{shown:?}");
    assert!(!shown.iter().any(|d| d == "::"), "{shown:?}");
}

#[test]
fn gre_devices_are_looked_up_as_ip_reads_them() {
    assert_refused(
        "link add g1 type gre dev nosuch remote 192.0.2.1",
        "Cannot find device \"nosuch\"",
    );
    assert_refused(
        "link add g1 type gretap dev keys 1.2.3.4 remote 192.0.2.1",
        "Cannot find device \"keys\"",
    );
    // pmtudisc is Linux's default, and the only behaviour fibre models.
    assert_eq!(
        refusal("link add g1 type gre pmtudisc remote 192.0.2.1"),
        None
    );
    assert_eq!(refusal("link add g1 type gre p remote 192.0.2.1"), None);
}

#[test]
fn vxlan_options_without_their_value_are_incomplete() {
    assert_refused(
        "link add fdv1 type vxlan dev",
        "Command line is not complete. Try option \"help\"",
    );
    assert_refused(
        "link add fdv1 type vxlan up",
        "vxlan: unknown command \"up\"?",
    );
}

#[test]
fn zero_addresses_are_no_address() {
    // __inet_insert_ifa drops an IPv4 address of 0.0.0.0 and succeeds.
    let fib = fib_after("addr add 0.0.0.0/0 dev fd1");
    let addrs = fib.addresses(Some(Family::V4));
    assert!(addrs.iter().all(|a| !a.local.is_unspecified()), "{addrs:?}");
    let local = fib.routes(Family::V4, Some(TABLE_LOCAL));
    assert!(
        !local.iter().any(|r| r.dst.addr().is_unspecified()),
        "{local:?}"
    );
    // fib_create_info keeps no prefsrc of 0.0.0.0, nor ip6_route_info_create of ::.
    let fib = fib_after(
        "route add 10.11.0.0/16 src 0.0.0.0 via 10.1.0.9\nroute add 2001:db8:7::/48 src :: dev fd0",
    );
    let main = fib.routes(Family::V4, Some(TABLE_MAIN));
    let route = main
        .iter()
        .find(|r| r.dst.to_string() == "10.11.0.0/16")
        .expect("added");
    assert_eq!(route.prefsrc, None);
    let main6 = fib.routes(Family::V6, Some(TABLE_MAIN));
    assert!(main6.iter().all(|r| r.prefsrc.is_none()), "{main6:?}");
    // gre_parse_opt: a multicast remote wants a local address.
    assert_refused(
        "link add g1 type gretap remote 224.0.0.1",
        "A broadcast tunnel requires a source address.",
    );
    assert_refused(
        "link add g1 type gre remote 224.0.0.1 local any",
        "A broadcast tunnel requires a source address.",
    );
}

#[test]
fn an_ipv6_delete_ignores_expires_and_pref() {
    // ip6_route_del compares neither: the route goes.
    let fib = fib_after(
        "route add 2001:db8:20::/48 dev fd0\nroute del 2001:db8:20::/48 expires 5 pref high",
    );
    let main6 = fib.routes(Family::V6, Some(TABLE_MAIN));
    assert!(
        !main6
            .iter()
            .any(|r| r.dst.to_string() == "2001:db8:20::/48"),
        "{main6:?}"
    );
    assert_refused("route del 2001:db8:20::/48 expires 5", "No such process");
}

#[test]
fn an_existing_name_comes_before_an_unknown_kind() {
    // __rtnl_newlink: EEXIST, then "Unknown device type".
    assert_refused("link add fd0 type dum", "File exists");
    assert_refused("link add lo type dum", "File exists");
    assert_refused("link add fd5 type dum", "Unknown device type");
}
