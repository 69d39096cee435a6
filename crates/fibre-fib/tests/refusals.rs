//! Every refusal with the exact text iproute2 printed for it on a 6.18
//! kernel in a namespace.

mod common;

use common::*;
use fibre_fib::*;

fn fib() -> Fib {
    let mut fib = router(&["d0", "d1"]);
    fib.apply(&Command::LinkAdd {
        name: "d2".into(),
        kind: LinkKind::Ifb,
        mtu: None,
    })
    .unwrap();
    addr(&mut fib, "d0", "10.0.0.1/24").unwrap();
    addr(&mut fib, "d0", "2001:db8::1/64").unwrap();
    fib
}

/// Sends a request that must be refused; checks that nothing changed and
/// returns the message.
fn refused(fib: &mut Fib, op: RouteOp, spec: RouteSpec) -> String {
    let snapshot = |fib: &Fib| -> Vec<Route> {
        let mut all: Vec<Route> = fib.routes(Family::V4, None).into_iter().cloned().collect();
        all.extend(fib.routes(Family::V6, None).into_iter().cloned());
        all
    };
    let before = snapshot(fib);
    let e = route(fib, op, spec).unwrap_err().to_string();
    assert_eq!(
        before,
        snapshot(fib),
        "a refused request changed the routes"
    );
    e
}

#[test]
fn duplicate_add() {
    let mut fib = fib();
    add(&mut fib, via("10.5.0.0/16", "10.0.0.5", None));
    assert_eq!(
        refused(&mut fib, RouteOp::Add, via("10.5.0.0/16", "10.0.0.6", None)),
        "RTNETLINK answers: File exists"
    );
    add(&mut fib, via("2001:db8:5::/48", "2001:db8::7", None));
    // IPv6: same prefix and metric, another gateway: still File exists for add.
    assert_eq!(
        refused(
            &mut fib,
            RouteOp::Add,
            via("2001:db8:5::/48", "2001:db8::8", None)
        ),
        "RTNETLINK answers: File exists"
    );
}

#[test]
fn change_and_del_of_missing_routes() {
    let mut fib = fib();
    assert_eq!(
        refused(&mut fib, RouteOp::Change, on("10.6.0.0/16", "d0")),
        "RTNETLINK answers: No such file or directory"
    );
    assert_eq!(
        refused(&mut fib, RouteOp::Del, spec("10.6.0.0/16")),
        "RTNETLINK answers: No such process"
    );
    assert_eq!(
        refused(&mut fib, RouteOp::Change, on("2001:db8:66::/48", "d0")),
        "Error: Can not replace route - no match found."
    );
    assert_eq!(
        refused(&mut fib, RouteOp::Del, spec("2001:db8:77::/48")),
        "RTNETLINK answers: No such process"
    );
    assert_eq!(
        refused(
            &mut fib,
            RouteOp::Del,
            RouteSpec {
                table: 777,
                ..spec("10.0.0.0/8")
            }
        ),
        "Error: FIB table does not exist."
    );
}

#[test]
fn fresh_namespace_has_no_ipv4_main_table() {
    let mut fib = Fib::new();
    assert_eq!(
        refused(&mut fib, RouteOp::Del, spec("10.0.0.0/8")),
        "Error: FIB table does not exist."
    );
}

#[test]
fn gateways_and_devices() {
    let mut fib = fib();
    assert_eq!(
        refused(&mut fib, RouteOp::Add, via("10.5.0.0/16", "10.9.9.9", None)),
        "Error: Nexthop has invalid gateway."
    );
    assert_eq!(
        refused(&mut fib, RouteOp::Add, on("10.8.0.0/16", "d2")),
        "Error: Device for nexthop is not up."
    );
    assert_eq!(
        refused(
            &mut fib,
            RouteOp::Add,
            via("10.8.0.0/16", "10.0.0.3", Some("d2"))
        ),
        "Error: Nexthop has invalid gateway."
    );
    let mut onlink = via("10.8.0.0/16", "10.0.0.3", Some("d2"));
    onlink.nexthops[0].onlink = true;
    assert_eq!(
        refused(&mut fib, RouteOp::Add, onlink),
        "Error: Nexthop device is not up."
    );
    let mut pervasive = on("10.8.0.0/16", "d0");
    pervasive.nexthops[0].onlink = true;
    assert_eq!(
        refused(&mut fib, RouteOp::Add, pervasive),
        "Error: Invalid flags for nexthop - PERVASIVE and ONLINK can not be set."
    );
    assert_eq!(
        refused(&mut fib, RouteOp::Add, on("10.8.0.0/16", "nosuch")),
        "Cannot find device \"nosuch\""
    );
    // IPv6 gateway checks answer with a bare errno.
    assert_eq!(
        refused(
            &mut fib,
            RouteOp::Add,
            via("2001:db8:5::/48", "2001:db9::77", None)
        ),
        "RTNETLINK answers: No route to host"
    );
    assert_eq!(
        refused(
            &mut fib,
            RouteOp::Add,
            via("2001:db8:5::/48", "2001:db8::77", Some("d2"))
        ),
        "RTNETLINK answers: No route to host"
    );
    assert_eq!(
        refused(&mut fib, RouteOp::Add, on("2001:db8:5::/48", "d2")),
        "Error: Nexthop device is not up."
    );
}

#[test]
fn onlink_gateway_is_not_checked_for_reachability() {
    let mut fib = fib();
    let mut onlink = via("10.5.0.0/16", "10.9.9.9", Some("d0"));
    onlink.nexthops[0].onlink = true;
    add(&mut fib, onlink);
    assert_eq!(
        get_to(&fib, "10.5.1.1"),
        "unicast dev d0 via 10.9.9.9 table main"
    );
}

#[test]
fn prefsrc_must_be_local() {
    let mut fib = fib();
    let bad = RouteSpec {
        prefsrc: Some(ip("10.9.9.9")),
        ..on("10.7.0.0/16", "d0")
    };
    assert_eq!(
        refused(&mut fib, RouteOp::Add, bad),
        "Error: Invalid prefsrc address."
    );
    // 127.0.0.1 is local (lo is up): accepted, as the kernel did.
    add(
        &mut fib,
        RouteSpec {
            prefsrc: Some(ip("127.0.0.1")),
            ..on("10.9.0.0/16", "d0")
        },
    );
    let bad6 = RouteSpec {
        prefsrc: Some(ip("2001:db8::99")),
        ..on("2001:db8:6::/48", "d0")
    };
    assert_eq!(
        refused(&mut fib, RouteOp::Add, bad6),
        "Error: Invalid source address."
    );
    add(
        &mut fib,
        RouteSpec {
            prefsrc: Some(ip("2001:db8::1")),
            ..on("2001:db8:6::/48", "d0")
        },
    );
}

#[test]
fn reject_types_take_no_paths() {
    let mut fib = fib();
    let bad = RouteSpec {
        nexthops: vec![hop(None, Some("d0"))],
        ..typed(RouteType::Blackhole, "10.99.0.0/16")
    };
    assert_eq!(
        refused(&mut fib, RouteOp::Add, bad),
        "Error: Gateway, device and multipath can not be specified for this route type."
    );
}

#[test]
fn addresses() {
    let mut fib = fib();
    assert_eq!(
        addr(&mut fib, "d0", "10.0.0.1/24").unwrap_err().to_string(),
        "Error: ipv4: Address already assigned."
    );
    assert_eq!(
        addr(&mut fib, "d0", "2001:db8::1/64")
            .unwrap_err()
            .to_string(),
        "Error: ipv6: address already assigned."
    );
    let mut link_scope = addr_spec("d0", "10.0.0.2/24");
    link_scope.scope = Some(Scope::LINK);
    let e = fib
        .apply(&Command::Addr {
            op: AddrOp::Add,
            spec: link_scope,
        })
        .unwrap_err();
    assert_eq!(e.to_string(), "Error: ipv4: Invalid scope value.");
    let e = fib
        .apply(&Command::Addr {
            op: AddrOp::Del,
            spec: addr_spec("d0", "10.7.0.1/24"),
        })
        .unwrap_err();
    assert_eq!(e.to_string(), "Error: ipv4: Address not found.");
}

#[test]
fn a_refused_request_changes_nothing() {
    let mut fib = fib();
    let before: Vec<Route> = fib.routes(Family::V4, None).into_iter().cloned().collect();
    let multipath = RouteSpec {
        nexthops: vec![
            hop(Some("10.0.0.5"), Some("d0")),
            hop(Some("10.9.9.9"), Some("d0")),
        ],
        multipath: true,
        ..spec("10.5.0.0/16")
    };
    assert!(route(&mut fib, RouteOp::Add, multipath).is_err());
    let after: Vec<Route> = fib.routes(Family::V4, None).into_iter().cloned().collect();
    assert_eq!(before, after);
}

#[test]
fn tos_with_ecn_bits() {
    // Kernel-checked: `route add 10.5.0.0/16 dev d0 tos 0x03` and `rule add tos 0x03 table 5`.
    let mut fib = fib();
    let e = refused(
        &mut fib,
        RouteOp::Add,
        RouteSpec {
            tos: 0x03,
            ..on("10.5.0.0/16", "d0")
        },
    );
    assert_eq!(e, "Error: Invalid dsfield (tos): ECN bits must be 0.");
    let e = rule(
        &mut fib,
        RuleSpec {
            tos: 0x03,
            ..rule_spec(Family::V4, RuleAction::Lookup(5))
        },
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Error: Invalid dsfield (tos): ECN bits must be 0."
    );
    // tos 0x20 (CS1) is taken but never matches: lookups mask the tos with 0x1c.
    add(
        &mut fib,
        RouteSpec {
            tos: 0x20,
            ..on("10.6.0.0/16", "d0")
        },
    );
    let mut req = RouteGetRequest::to(ip("10.6.0.1"));
    req.tos = 0x20;
    assert_eq!(get(&fib, req), "RTNETLINK answers: Network is unreachable");
}

/// IPv6 multipath paths are validated and compared one at a time, in the
/// request's order: the first failure is the answer. Kernel-checked (6.18,
/// d0 up with 2001:db8::1/64, d1 up without addresses):
/// - `nexthop via 2001:db8::5 dev d0 nexthop via 2001:db8::5 dev d0 nexthop via 2001:db8:ee::1 dev d1`: File exists;
/// - the repeat after the unreachable path: No route to host;
/// - `src 2001:db8::99 nexthop via 2001:db8::5 dev d0 nexthop via 2001:db8:ee::1 dev d1`: Invalid source address
///   (the source is checked after the first path);
/// - the same with the paths swapped: No route to host.
///
/// Found by kernel_diff (seed 237): fibre answered No route to host for the first.
#[test]
fn ipv6_multipath_refusals_follow_the_path_order() {
    let mut fib = fib();
    let multipath = |paths: &[(&str, &str)], src: Option<&str>| RouteSpec {
        nexthops: paths
            .iter()
            .map(|(gw, dev)| hop(Some(gw), Some(dev)))
            .collect(),
        multipath: true,
        prefsrc: src.map(ip),
        ..spec("2001:db8:5::/48")
    };
    let near = ("2001:db8::5", "d0");
    let unreachable = ("2001:db8:ee::1", "d1");
    assert_eq!(
        refused(
            &mut fib,
            RouteOp::Add,
            multipath(&[near, near, unreachable], None)
        ),
        "RTNETLINK answers: File exists"
    );
    assert_eq!(
        refused(
            &mut fib,
            RouteOp::Add,
            multipath(&[near, unreachable, near], None)
        ),
        "RTNETLINK answers: No route to host"
    );
    assert_eq!(
        refused(
            &mut fib,
            RouteOp::Add,
            multipath(&[near, unreachable], Some("2001:db8::99"))
        ),
        "Error: Invalid source address."
    );
    assert_eq!(
        refused(
            &mut fib,
            RouteOp::Add,
            multipath(&[unreachable, near], Some("2001:db8::99"))
        ),
        "RTNETLINK answers: No route to host"
    );
}

/// `route get` names TCP, UDP and its family's ICMP only. Kernel-checked
/// (6.18): `10.0.0.7 ipproto sctp`, `10.0.0.7 ipproto ipv6-icmp` and
/// `2001:db8::7 ipproto icmp` are "Error: Unsupported ip proto."; `ipproto
/// icmp` (IPv4), `ipv6-icmp` (IPv6), `tcp` and `udp` answer. Found by
/// kernel_diff once its queries named protocols.
#[test]
fn route_get_with_an_unsupported_ip_proto() {
    let fib = fib();
    let get = |dst: &str, proto: u8| {
        let req = RouteGetRequest {
            ipproto: Some(proto),
            sport: Some(1000),
            dport: Some(80),
            ..RouteGetRequest::to(ip(dst))
        };
        fib.route_get(&req).map(|_| ()).map_err(|e| e.to_string())
    };
    let unsupported = Err("Error: Unsupported ip proto.".to_string());
    assert_eq!(get("10.0.0.7", 132), unsupported);
    assert_eq!(get("10.0.0.7", 58), unsupported);
    assert_eq!(get("2001:db8::7", 1), unsupported);
    assert_eq!(get("2001:db8::7", 132), unsupported);
    for proto in [1, 6, 17] {
        assert_eq!(get("10.0.0.7", proto), Ok(()), "ipproto {proto}");
    }
    for proto in [58, 6, 17] {
        assert_eq!(get("2001:db8::7", proto), Ok(()), "ipproto {proto}");
    }
}

/// A gateway the route's own table leaves to `fib6_lookup`, where a throw
/// route is a reject. Kernel-checked (6.18; ifb fd0 up with
/// 2001:db8:1:80::6824/127, `route add throw 2001:db8::/40 table local`):
/// `route add default table local metric 2048 via 2001:db8:1:80::6825` is
/// "No route to host", with or without a custom rule; `route add
/// 2001:db8:77::/48 via 2001:db8:1:80::6825` (main resolves it) is taken.
/// Found by kernel_diff (seed 1063).
#[test]
fn ipv6_gateway_behind_a_throw_in_its_table() {
    let mut fib = router(&["fd0"]);
    addr(&mut fib, "fd0", "2001:db8:1:80::6824/127").unwrap();
    add(
        &mut fib,
        RouteSpec {
            table: TABLE_LOCAL,
            metric: Some(256),
            ..typed(RouteType::Throw, "2001:db8::/40")
        },
    );
    let local_default = || RouteSpec {
        table: TABLE_LOCAL,
        metric: Some(2048),
        ..via("::/0", "2001:db8:1:80::6825", None)
    };
    assert_eq!(
        refused(&mut fib, RouteOp::Add, local_default()),
        "RTNETLINK answers: No route to host"
    );
    add(
        &mut fib,
        via("2001:db8:77::/48", "2001:db8:1:80::6825", None),
    );
    let mut custom = rule_spec(Family::V6, RuleAction::Lookup(100));
    custom.priority = Some(100);
    custom.fwmark = Some((7, u32::MAX));
    rule(&mut fib, custom).unwrap();
    assert_eq!(
        refused(&mut fib, RouteOp::Add, local_default()),
        "RTNETLINK answers: No route to host"
    );
    add(
        &mut fib,
        via("2001:db8:78::/48", "2001:db8:1:80::6825", None),
    );
}
