//! The cache's IPv6 path, and IPv4/IPv6 nexthops kept apart.

use std::net::IpAddr;

use fibre_base::{Ipv4, Ipv6, WorkerId};
use fibre_fib::*;
use fibre_rcu::Domain;
use fibre_route::exceptions::PmtuOutcome;
use fibre_route::route::flags;
use fibre_route::{RouteCache, SlotKind};

fn v6(s: &str) -> u128 {
    u128::from(s.parse::<std::net::Ipv6Addr>().unwrap())
}

fn dual_stack_fib() -> Fib {
    let mut fib = fibre_route::testbed::fib().unwrap();
    fib.apply(&Command::Addr {
        op: AddrOp::Add,
        spec: AddressSpec::new("dummy0", "2001:db8::1".parse().unwrap(), 64),
    })
    .unwrap();
    fib.apply(&Command::Route {
        op: RouteOp::Add,
        spec: RouteSpec {
            mtu_lock: false,
            metrics: Default::default(),
            table: TABLE_MAIN,
            dst: Prefix::new("2001:db8:100::".parse().unwrap(), 48).unwrap(),
            tos: 0,
            kind: RouteType::Unicast,
            protocol: Protocol::BOOT,
            scope: Scope::UNIVERSE,
            metric: None,
            prefsrc: None,
            mtu: None,
            nexthops: vec![NexthopSpec {
                gateway: Some("2001:db8::2".parse().unwrap()),
                dev: None,
                weight: 1,
                onlink: false,
            }],
            multipath: false,
        },
    })
    .unwrap();
    fib
}

#[test]
fn ipv6_routes_are_cached_per_nexthop_and_apart_from_ipv4() {
    let domain = Domain::new();
    let cache = RouteCache::new(&domain, dual_stack_fib(), 1);
    let reader = domain.register();
    let g = reader.read();
    let remote = FlowKeyV6 {
        dst: v6("2001:db8:100::7"),
        ..Default::default()
    };
    let r = cache
        .output::<Ipv6>(&g, SlotKind::PerCore(WorkerId::new(0)), &remote)
        .unwrap();
    assert!(r.is_cached());
    assert_eq!(r.gateway_addr(), Some("2001:db8::2".parse().unwrap()));
    // IPv6 picks the source per destination (the route names none).
    assert_eq!(r.src_addr(), None);
    assert_ne!(r.flags & fibre_route::route::flags::SRC_PER_FLOW, 0);
    let src = cache.source_v6(&g, &r, "2001:db8:100::7".parse().unwrap());
    assert_eq!(src, Ok(Some("2001:db8::1".parse().unwrap())));
    assert_eq!(r.family, 6);
    // On-link destinations of both families: same table, device and
    // gateway 0, but different nexthops (different sources).
    let on_link6 = FlowKeyV6 {
        dst: v6("2001:db8::9"),
        ..Default::default()
    };
    let on_link4 = FlowKeyV4 {
        dst: u32::from_be_bytes([10, 0, 0, 9]),
        ..Default::default()
    };
    let a = cache
        .output::<Ipv6>(&g, SlotKind::PerCore(WorkerId::new(0)), &on_link6)
        .unwrap();
    let b = cache
        .output::<Ipv4>(&g, SlotKind::PerCore(WorkerId::new(0)), &on_link4)
        .unwrap();
    assert!(!std::ptr::eq(&*a, &*b));
    let src = cache.source_v6(&g, &a, "2001:db8::9".parse().unwrap());
    assert_eq!(src, Ok(Some("2001:db8::1".parse().unwrap())));
    assert_eq!(b.src_addr(), Some(IpAddr::from([10, 0, 0, 1])));
}

#[test]
fn ipv6_packet_too_big_is_floored_at_1280() {
    let domain = Domain::new();
    let cache = RouteCache::new(&domain, dual_stack_fib(), 1);
    let reader = domain.register();
    let g = reader.read();
    let dst: IpAddr = "2001:db8:100::7".parse().unwrap();
    assert_eq!(
        cache.update_pmtu(&g, dst, 1000),
        PmtuOutcome::Recorded(1280)
    );
    assert_eq!(cache.update_pmtu(&g, dst, 1400), PmtuOutcome::NotSmaller);
    assert_eq!(cache.exception_for(dst).unwrap().1.pmtu, 1280);
    let key = FlowKeyV6 {
        dst: v6("2001:db8:100::7"),
        ..Default::default()
    };
    let r = cache
        .output::<Ipv6>(&g, SlotKind::PerCore(WorkerId::new(0)), &key)
        .unwrap();
    assert_eq!(r.mtu, 1280);
    assert!(r.flags & flags::PMTU != 0);
    assert_eq!(
        cache.update_pmtu(&g, "2001:db8:200::1".parse().unwrap(), 1300),
        PmtuOutcome::NoRoute
    );
}
