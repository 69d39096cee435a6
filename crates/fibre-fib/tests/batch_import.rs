//! The data-path batch lookup agrees with `route_get`; bulk import.

mod common;

use std::net::Ipv4Addr;

use common::*;
use fibre_fib::*;
use proptest::prelude::*;

/// A router with connected subnets and a mix of route types and tables.
fn config(routes: &[(u32, u8, u8, u8)], with_rules: bool) -> Fib {
    let mut fib = router(&["d0", "d1"]);
    addr(&mut fib, "d0", "10.0.0.1/24").unwrap();
    addr(&mut fib, "d1", "10.2.0.1/24").unwrap();
    for &(addr, len, kind, table) in routes {
        let p = Prefix::containing(Ipv4Addr::from(addr).into(), len);
        let table = [TABLE_MAIN, 100, TABLE_MAIN][usize::from(table % 3)];
        let dst = format!("{}/{}", p.addr(), p.len());
        let spec = match kind % 6 {
            0 => via(&dst, "10.0.0.9", None),
            1 => via(&dst, "10.2.0.9", None),
            2 => on(&dst, "d1"),
            3 => typed(RouteType::Blackhole, &dst),
            4 => typed(RouteType::Throw, &dst),
            _ => RouteSpec {
                nexthops: vec![
                    hop(Some("10.0.0.7"), Some("d0")),
                    hop(Some("10.2.0.7"), Some("d1")),
                ],
                multipath: true,
                ..spec(&dst)
            },
        };
        let _ = route(&mut fib, RouteOp::Add, RouteSpec { table, ..spec });
    }
    if with_rules {
        rule(
            &mut fib,
            RuleSpec {
                priority: Some(100),
                ..rule_spec(Family::V4, RuleAction::Lookup(100))
            },
        )
        .unwrap();
    }
    fib
}

proptest! {
    #[test]
    fn batch_agrees_with_route_get(
        routes in prop::collection::vec((any::<u32>(), 0u8..=32, any::<u8>(), any::<u8>()), 0..40),
        dsts in prop::collection::vec(any::<u32>(), 1..64),
        with_rules in any::<bool>(),
    ) {
        let fib = config(&routes, with_rules);
        // Aim half of the queries inside configured prefixes.
        let keys: Vec<FlowKeyV4> = dsts
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let dst = match routes.get(i % routes.len().max(1)) {
                    Some((a, len, _, _)) if i % 2 == 0 => {
                        let mask = if *len == 0 { 0 } else { u32::MAX << (32 - u32::from(*len)) };
                        (a & mask) | (d & !mask)
                    }
                    _ => *d,
                };
                FlowKeyV4 { dst, ..Default::default() }
            })
            .collect();
        let mut out = vec![Err(Errno::Inval); keys.len()];
        fib.lookup_output_batch_v4(&keys, &mut out);
        for (k, got) in keys.iter().zip(&out) {
            let want = fib.route_get(&RouteGetRequest::to(Ipv4Addr::from(k.dst).into()));
            match (got, want) {
                (Ok(f), Ok(a)) => {
                    prop_assert_eq!(Some(fib.link(f.dev).unwrap().name.clone()), a.dev);
                    prop_assert_eq!(f.gateway_addr().map(std::net::IpAddr::V4), a.gateway);
                    prop_assert_eq!(f.table, a.table);
                    prop_assert_eq!(f.kind, a.kind);
                }
                (Err(e), Err(w)) => prop_assert_eq!(*e, w.errno),
                (g, w) => prop_assert!(false, "{}: batch {:?}, route_get {:?}", Ipv4Addr::from(k.dst), g, w),
            }
        }
    }
}

#[test]
fn import_many_prefixes() {
    let mut fib = router(&["d0"]);
    addr(&mut fib, "d0", "10.0.0.1/24").unwrap();
    let nh = hop(Some("10.0.0.9"), None);
    let routes = (0..50_000u32).map(|i| {
        let p = Prefix::new(Ipv4Addr::from(0x2000_0000 + (i << 8)).into(), 24).unwrap();
        (p, nh.clone())
    });
    assert_eq!(fib.import(TABLE_MAIN, routes).unwrap(), 50_000);
    assert_eq!(
        get_to(&fib, "32.0.1.5"),
        "unicast dev d0 via 10.0.0.9 table main"
    );
    // A duplicate is refused with its position.
    let again = vec![
        (prefix("198.51.100.0/24"), nh.clone()),
        (prefix("32.0.1.0/24"), nh.clone()),
    ];
    let e = fib.import(TABLE_MAIN, again).unwrap_err();
    assert_eq!(
        (e.index, e.error.to_string()),
        (1, "RTNETLINK answers: File exists".to_string())
    );
    // An unusable path is refused once, at the first route using it.
    let bad = vec![(prefix("203.0.113.0/24"), hop(Some("192.0.2.1"), None))];
    let e = fib.import(TABLE_MAIN, bad).unwrap_err();
    assert_eq!(e.error.to_string(), "Error: Nexthop has invalid gateway.");
}

proptest! {
    #[test]
    fn batch_v6_agrees_with_route_get(
        routes in prop::collection::vec((any::<u64>(), 16u8..=64, any::<u8>()), 0..24),
        dsts in prop::collection::vec(any::<u64>(), 1..48),
    ) {
        let mut fib = router(&["d0", "d1"]);
        addr(&mut fib, "d0", "2001:db8::1/64").unwrap();
        addr(&mut fib, "d1", "2001:db8:1::1/64").unwrap();
        let base = u128::from(ip6("2001:db8::"));
        for &(bits, len, kind) in &routes {
            let p = Prefix::containing(std::net::Ipv6Addr::from(base | (u128::from(bits) << 32)).into(), len);
            let dst = format!("{}/{}", p.addr(), p.len());
            let spec = match kind % 5 {
                0 => via(&dst, "2001:db8::9", None),
                1 => via(&dst, "2001:db8:1::9", None),
                2 => on(&dst, "d1"),
                3 => typed(RouteType::Unreachable, &dst),
                _ => RouteSpec {
                    nexthops: vec![hop(Some("2001:db8::7"), Some("d0")), hop(Some("2001:db8:1::7"), Some("d1"))],
                    multipath: true,
                    ..spec(&dst)
                },
            };
            let _ = route(&mut fib, RouteOp::Add, spec);
        }
        let keys: Vec<FlowKeyV6> = dsts
            .iter()
            .map(|d| FlowKeyV6 { dst: base | (u128::from(*d) << 32) | 5, ..Default::default() })
            .collect();
        let mut out = vec![Err(Errno::Inval); keys.len()];
        fib.lookup_output_batch_v6(&keys, &mut out);
        for (k, got) in keys.iter().zip(&out) {
            let want = fib.route_get(&RouteGetRequest::to(std::net::Ipv6Addr::from(k.dst).into()));
            match (got, want) {
                (Ok(f), Ok(a)) => {
                    prop_assert_eq!(Some(fib.link(f.dev).unwrap().name.clone()), a.dev);
                    let gw = (f.gateway != 0).then(|| std::net::IpAddr::V6(f.gateway.into()));
                    prop_assert_eq!(gw, a.gateway);
                    prop_assert_eq!((f.table, f.kind), (a.table, a.kind));
                }
                (Err(e), Err(w)) => prop_assert_eq!(*e, w.errno),
                (g, w) => prop_assert!(false, "batch {:?}, route_get {:?}", g, w),
            }
        }
    }
}

fn ip6(s: &str) -> std::net::Ipv6Addr {
    s.parse().unwrap()
}
