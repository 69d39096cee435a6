//! `ip route get` semantics: route types, backtracking, tos, multipath,
//! local delivery, input lookups. Expected values are what a 6.18 kernel
//! answered in a namespace for the same configuration.

mod common;

use common::*;
use fibre_fib::*;

fn fib() -> Fib {
    let mut fib = router(&["d0", "d1"]);
    addr(&mut fib, "d0", "10.0.0.1/24").unwrap();
    addr(&mut fib, "d1", "10.2.0.1/24").unwrap();
    addr(&mut fib, "d0", "2001:db8::1/64").unwrap();
    fib
}

#[test]
fn each_route_type() {
    let mut fib = fib();
    add(&mut fib, typed(RouteType::Blackhole, "10.99.0.0/16"));
    add(&mut fib, typed(RouteType::Unreachable, "10.98.0.0/16"));
    add(&mut fib, typed(RouteType::Prohibit, "10.97.0.0/16"));
    add(&mut fib, typed(RouteType::Throw, "10.96.0.0/16"));
    add(&mut fib, typed(RouteType::Blackhole, "2001:db8:99::/48"));
    add(&mut fib, typed(RouteType::Prohibit, "2001:db8:98::/48"));
    add(&mut fib, via("192.0.2.0/24", "10.0.0.9", None));
    assert_eq!(
        get_to(&fib, "10.99.0.1"),
        "RTNETLINK answers: Invalid argument"
    );
    assert_eq!(
        get_to(&fib, "10.98.0.1"),
        "RTNETLINK answers: No route to host"
    );
    assert_eq!(
        get_to(&fib, "10.97.0.1"),
        "RTNETLINK answers: Permission denied"
    );
    assert_eq!(
        get_to(&fib, "10.96.0.1"),
        "RTNETLINK answers: Network is unreachable"
    );
    assert_eq!(
        get_to(&fib, "2001:db8:99::1"),
        "RTNETLINK answers: Invalid argument"
    );
    assert_eq!(
        get_to(&fib, "2001:db8:98::1"),
        "RTNETLINK answers: Permission denied"
    );
    assert_eq!(
        get_to(&fib, "192.0.2.7"),
        "unicast dev d0 via 10.0.0.9 table main"
    );
    assert_eq!(get_to(&fib, "10.0.0.7"), "unicast dev d0 table main");
    // While no rule was added the kernel merges local into main: table main.
    assert_eq!(get_to(&fib, "10.0.0.1"), "local dev lo table main");
    assert_eq!(get_to(&fib, "10.0.0.255"), "broadcast dev d0 table main");
    assert_eq!(get_to(&fib, "2001:db8::1"), "local dev lo table local");
    assert_eq!(get_to(&fib, "2001:db8::5"), "unicast dev d0 table main");
    assert_eq!(
        get_to(&fib, "198.51.100.1"),
        "RTNETLINK answers: Network is unreachable"
    );
}

#[test]
fn prefsrc_and_local_answers() {
    let fib = fib();
    let a = fib.route_get(&RouteGetRequest::to(ip("10.0.0.7"))).unwrap();
    assert_eq!(a.prefsrc, Some(ip("10.0.0.1")));
    let a = fib.route_get(&RouteGetRequest::to(ip("10.0.0.1"))).unwrap();
    assert_eq!(
        (a.kind, a.dev.as_deref(), a.prefsrc),
        (RouteType::Local, Some("lo"), Some(ip("10.0.0.1")))
    );
    // Asked with a source, the answer carries no separate prefsrc.
    let mut req = RouteGetRequest::to(ip("10.0.0.200"));
    req.src = Some(ip("10.0.0.1"));
    assert_eq!(fib.route_get(&req).unwrap().prefsrc, None);
    // A source that is not ours: unreachable.
    req.src = Some(ip("10.9.9.9"));
    assert_eq!(get(&fib, req), "RTNETLINK answers: Network is unreachable");
    // 0.0.0.0 answers local on lo, keeping the asked destination.
    let a = fib.route_get(&RouteGetRequest::to(ip("0.0.0.0"))).unwrap();
    assert_eq!(
        (a.kind, a.dst, a.dev.as_deref()),
        (RouteType::Local, ip("0.0.0.0"), Some("lo"))
    );
}

#[test]
fn backtracking_over_tos_and_scope() {
    let mut fib = fib();
    add(&mut fib, via("10.1.0.0/16", "10.2.0.9", None));
    add(
        &mut fib,
        RouteSpec {
            tos: 0x08,
            ..via("10.5.0.0/16", "10.2.0.9", None)
        },
    );
    add(&mut fib, via("10.0.0.0/8", "10.0.0.9", None));
    assert_eq!(
        get_to(&fib, "10.1.2.3"),
        "unicast dev d1 via 10.2.0.9 table main"
    );
    // The /16 only takes tos 8: tos 0 backtracks to the /8.
    assert_eq!(
        get_to(&fib, "10.5.2.3"),
        "unicast dev d0 via 10.0.0.9 table main"
    );
    let mut req = RouteGetRequest::to(ip("10.5.2.3"));
    req.tos = 0x08;
    assert_eq!(get(&fib, req), "unicast dev d1 via 10.2.0.9 table main");
    // oif restricts the paths: the /16 via d1 does not fit oif d0, the /8 does.
    let mut req = RouteGetRequest::to(ip("10.1.2.3"));
    req.oif = Some("d0".into());
    assert_eq!(get(&fib, req), "unicast dev d0 via 10.0.0.9 table main");
}

#[test]
fn oif_without_any_route_assumes_on_link() {
    let fib = fib();
    let mut req = RouteGetRequest::to(ip("198.51.100.1"));
    req.oif = Some("d1".into());
    let a = fib.route_get(&req).unwrap();
    assert_eq!(
        (a.dev.as_deref(), a.gateway, a.table),
        (Some("d1"), None, TABLE_UNSPEC)
    );
    req.fibmatch = true;
    assert_eq!(get(&fib, req), "RTNETLINK answers: No route to host");
}

#[test]
fn gateway_that_is_our_own_address_is_not_used() {
    // Kernel: `route add 10.9.0.0/16 via 10.0.0.1` (10.0.0.1 is ours) answers without gateway.
    let mut fib = fib();
    add(&mut fib, via("10.9.0.0/16", "10.0.0.1", None));
    assert_eq!(get_to(&fib, "10.9.9.9"), "unicast dev d0 table main");
}

#[test]
fn multipath_follows_weights_and_hash_policy() {
    let mut fib = fib();
    let mut mp = RouteSpec {
        nexthops: vec![
            hop(Some("10.0.0.7"), Some("d0")),
            hop(Some("10.2.0.4"), Some("d1")),
        ],
        multipath: true,
        ..spec("198.51.100.0/24")
    };
    mp.nexthops[0].weight = 1;
    mp.nexthops[1].weight = 3;
    add(&mut fib, mp);
    let mut count = [0u32; 2];
    for i in 0..=255u8 {
        for j in [1u8, 77, 200] {
            let mut req = RouteGetRequest::to(ip(&format!("198.51.100.{i}")));
            req.src = Some(ip("10.0.0.1"));
            req.sport = Some(u16::from(j));
            let a = fib.route_get(&req).unwrap();
            count[usize::from(a.dev.as_deref() == Some("d1"))] += 1;
            // L3 policy: the port does not matter.
            let mut other = req.clone();
            other.sport = Some(4242);
            assert_eq!(fib.route_get(&other).unwrap().dev, a.dev);
        }
    }
    let share = f64::from(count[1]) / f64::from(count[0] + count[1]);
    assert!((share - 0.75).abs() < 0.06, "weight-3 share {share}");
    // L4 policy: ports move flows between paths.
    let mut s = fib.settings();
    s.multipath_hash_policy_v4 = MultipathHashPolicy::L4;
    fib.set_settings(s);
    let devs: std::collections::HashSet<Option<String>> = (0..64u16)
        .map(|p| {
            let mut req = RouteGetRequest::to(ip("198.51.100.9"));
            req.ipproto = Some(17);
            req.sport = Some(p);
            req.dport = Some(53);
            fib.route_get(&req).unwrap().dev
        })
        .collect();
    assert_eq!(devs.len(), 2);
}

#[test]
fn dead_path_is_skipped_and_revived() {
    let mut fib = fib();
    add(
        &mut fib,
        RouteSpec {
            nexthops: vec![
                hop(Some("10.0.0.7"), Some("d0")),
                hop(Some("10.2.0.4"), Some("d1")),
            ],
            multipath: true,
            ..spec("198.51.100.0/24")
        },
    );
    set_up(&mut fib, "d1", false);
    let route = fib
        .routes(Family::V4, Some(TABLE_MAIN))
        .into_iter()
        .find(|r| r.dst == prefix("198.51.100.0/24"))
        .unwrap();
    assert!(route.nexthops[1].flags.dead);
    for i in 0..32u8 {
        assert_eq!(
            get_to(&fib, &format!("198.51.100.{i}")),
            "unicast dev d0 via 10.0.0.7 table main"
        );
    }
    set_up(&mut fib, "d1", true);
    let route = fib
        .routes(Family::V4, Some(TABLE_MAIN))
        .into_iter()
        .find(|r| r.dst == prefix("198.51.100.0/24"))
        .unwrap();
    assert!(!route.nexthops[1].flags.dead);
}

#[test]
fn ipv6_append_makes_ecmp_siblings() {
    let mut fib = fib();
    add(&mut fib, via("2001:db8:5::/48", "2001:db8::7", None));
    route(
        &mut fib,
        RouteOp::Append,
        via("2001:db8:5::/48", "2001:db8::8", None),
    )
    .unwrap();
    let r: Vec<&Route> = fib
        .routes(Family::V6, Some(TABLE_MAIN))
        .into_iter()
        .filter(|r| r.dst == prefix("2001:db8:5::/48"))
        .collect();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].metric, IPV6_DEFAULT_METRIC);
    let gws: Vec<_> = r[0]
        .nexthops
        .iter()
        .map(|n| n.gateway.unwrap().to_string())
        .collect();
    assert_eq!(gws, ["2001:db8::7", "2001:db8::8"]);
    // Deleting with a gateway removes that path only.
    route(
        &mut fib,
        RouteOp::Del,
        via("2001:db8:5::/48", "2001:db8::7", None),
    )
    .unwrap();
    assert_eq!(
        get_to(&fib, "2001:db8:5::1"),
        "unicast dev d0 via 2001:db8::8 table main"
    );
}

#[test]
fn ipv4_append_prepend_replace_positions() {
    let mut fib = fib();
    add(&mut fib, on("10.50.0.0/16", "d0"));
    route(&mut fib, RouteOp::Append, on("10.50.0.0/16", "d1")).unwrap();
    assert_eq!(get_to(&fib, "10.50.0.1"), "unicast dev d0 table main");
    route(
        &mut fib,
        RouteOp::Prepend,
        via("10.50.0.0/16", "10.2.0.5", None),
    )
    .unwrap();
    assert_eq!(
        get_to(&fib, "10.50.0.1"),
        "unicast dev d1 via 10.2.0.5 table main"
    );
    // Replace swaps the first route of the (tos, metric) group.
    route(
        &mut fib,
        RouteOp::Replace,
        via("10.50.0.0/16", "10.0.0.5", None),
    )
    .unwrap();
    assert_eq!(
        get_to(&fib, "10.50.0.1"),
        "unicast dev d0 via 10.0.0.5 table main"
    );
    assert_eq!(
        fib.routes(Family::V4, Some(TABLE_MAIN))
            .iter()
            .filter(|r| r.dst == prefix("10.50.0.0/16"))
            .count(),
        3
    );
    // An identical append is a duplicate.
    assert_eq!(
        route(&mut fib, RouteOp::Append, on("10.50.0.0/16", "d1"))
            .unwrap_err()
            .to_string(),
        "RTNETLINK answers: File exists"
    );
}

#[test]
fn input_lookups() {
    let fib = fib();
    let input = |dst: &str, src: Option<&str>, iif: &str| {
        let mut req = RouteGetRequest::to(ip(dst));
        req.src = src.map(ip);
        req.iif = Some(iif.into());
        get(&fib, req)
    };
    // Kernel (forwarding on, rp_filter 0):
    assert_eq!(
        input("10.0.0.5", Some("10.2.0.7"), "d1"),
        "unicast dev d0 table main"
    );
    assert_eq!(
        input("10.0.0.1", Some("10.2.0.7"), "d1"),
        "local dev lo table main"
    );
    assert_eq!(
        input("10.0.0.5", Some("10.0.0.1"), "d1"),
        "RTNETLINK answers: Invalid argument"
    );
    assert_eq!(
        input("10.0.0.5", None, "d1"),
        "RTNETLINK answers: Invalid argument"
    );
    assert_eq!(
        input("127.0.0.1", Some("10.2.0.7"), "d1"),
        "RTNETLINK answers: Invalid argument"
    );
    assert_eq!(
        input("1.1.1.1", Some("10.2.0.7"), "d1"),
        "RTNETLINK answers: Network is unreachable"
    );
    assert_eq!(
        input("10.0.0.255", Some("10.2.0.7"), "d1"),
        "broadcast dev lo table main"
    );
    assert_eq!(
        input("2001:db8::5", Some("2001:db8:1::7"), "d1"),
        "unicast dev d0 table main"
    );
    assert_eq!(
        input("2001:db8::1", Some("2001:db8:1::7"), "d1"),
        "local dev lo table local"
    );
}

#[test]
fn clones_are_independent() {
    let fib = fib();
    let mut copy = fib.clone();
    add(&mut copy, via("192.0.2.0/24", "10.0.0.9", None));
    assert_eq!(
        get_to(&fib, "192.0.2.1"),
        "RTNETLINK answers: Network is unreachable"
    );
    assert_eq!(
        get_to(&copy, "192.0.2.1"),
        "unicast dev d0 via 10.0.0.9 table main"
    );
}

#[test]
fn veth_without_carrier_marks_paths_linkdown_but_keeps_using_them() {
    // ignore_routes_with_linkdown is 0: a linkdown path still routes.
    let mut fib = router(&[]);
    fib.apply(&Command::LinkAdd {
        name: "v0".into(),
        kind: LinkKind::Veth { peer: "v1".into() },
        mtu: None,
    })
    .unwrap();
    set_up(&mut fib, "v0", true);
    addr(&mut fib, "v0", "10.9.0.1/24").unwrap();
    let connected = |fib: &Fib| {
        fib.routes(Family::V4, Some(TABLE_MAIN))
            .into_iter()
            .find(|r| r.dst == prefix("10.9.0.0/24"))
            .cloned()
            .unwrap()
    };
    assert!(connected(&fib).nexthops[0].flags.linkdown);
    assert_eq!(get_to(&fib, "10.9.0.7"), "unicast dev v0 table main");
    set_up(&mut fib, "v1", true);
    assert!(!connected(&fib).nexthops[0].flags.linkdown);
    set_up(&mut fib, "v1", false);
    assert!(connected(&fib).nexthops[0].flags.linkdown);
}

#[test]
fn ipv6_source_may_live_on_a_down_ifb() {
    // Kernel-checked: 2001:db8:2:1::1924/64 on a down ifb still answers
    // `anycast 2001:db8:2:1:: dev lo ... src 2001:db8:2:1::1924`.
    let mut fib = router(&["d0"]);
    fib.apply(&Command::LinkAdd {
        name: "d2".into(),
        kind: LinkKind::Ifb,
        mtu: None,
    })
    .unwrap();
    addr(&mut fib, "d0", "2001:db8:3::1/64").unwrap();
    addr(&mut fib, "d2", "2001:db8:2:1::1924/64").unwrap();
    let a = fib
        .route_get(&RouteGetRequest::to(ip("2001:db8:2:1::")))
        .unwrap();
    assert_eq!((a.kind, a.dev.as_deref()), (RouteType::Anycast, Some("lo")));
    assert_eq!(a.prefsrc, Some(ip("2001:db8:2:1::1924")));
}
