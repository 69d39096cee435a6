//! The route cache over the RCU-published FIB: one RCU domain for both,
//! the FIB's writer telling the cache what each batch changed, and routes
//! with their own source address or MTU never lending them to other
//! routes through the same gateway.

use std::net::{IpAddr, Ipv4Addr};

use fibre_base::{Ipv4, Ipv6, WorkerId};
use fibre_fib::{Fib, FlowKeyV4, RouteOp};
use fibre_route::exceptions::PmtuOutcome;
use fibre_route::testbed::{fib, prefix, route_via};
use fibre_route::{RouteCache, SlotKind};

mod common;
use common::{apply, commands, wired};

fn key(a: [u8; 4]) -> FlowKeyV4 {
    FlowKeyV4 {
        dst: u32::from_be_bytes(a),
        ..Default::default()
    }
}

/// The testbed FIB plus `lines`, under a cache of its own (one worker) in
/// a fresh RCU domain.
fn cache_with(lines: &[&str]) -> (fibre_rcu::Domain, RouteCache<Fib>) {
    let mut fib = fib().unwrap();
    for line in lines {
        for command in commands(line) {
            fib.apply(&command).unwrap();
        }
    }
    let domain = fibre_rcu::Domain::new();
    let cache = RouteCache::new(&domain, fib, 1);
    (domain, cache)
}

#[test]
fn the_cache_reads_the_published_fib_in_its_own_domain() {
    let (mut writer, cache) = wired(fib().unwrap());
    let mut reader = cache.domain().register();
    {
        let guard = reader.read();
        let route = cache
            .output::<Ipv4>(
                &guard,
                SlotKind::PerCore(WorkerId::new(0)),
                &key([198, 51, 100, 7]),
            )
            .unwrap();
        assert!(route.is_cached());
        assert_eq!(route.gateway_addr(), Some(IpAddr::from([10, 0, 0, 2])));
    }
    reader.quiescent();
    // A guard of another domain cannot read the FIB (it would not protect it).
    let other = fibre_rcu::Domain::new();
    let mut stranger = other.register();
    {
        let guard = stranger.read();
        assert!(cache
            .output::<Ipv4>(
                &guard,
                SlotKind::PerCore(WorkerId::new(0)),
                &key([198, 51, 100, 7])
            )
            .is_err());
    }
    stranger.quiescent();
    // The writer's changes are seen through the cache once published (the
    // reader is offline while the writer waits, as a blocked worker would be).
    {
        let _idle = reader.offline();
        apply(&mut writer, "route replace 198.51.100.0/24 via 10.0.0.9");
    }
    let guard = reader.read();
    let route = cache
        .output::<Ipv4>(
            &guard,
            SlotKind::PerCore(WorkerId::new(0)),
            &key([198, 51, 100, 7]),
        )
        .unwrap();
    assert_eq!(route.gateway_addr(), Some(IpAddr::from([10, 0, 0, 9])));
}

#[test]
fn a_route_change_stales_exactly_the_held_routes_it_affects() {
    let mut fib = fib().unwrap();
    fib.apply(&route_via(
        prefix([203, 0, 113, 0], 24),
        [10, 0, 0, 3],
        None,
        RouteOp::Add,
    ))
    .unwrap();
    let (mut writer, cache) = wired(fib);
    let mut reader = cache.domain().register();
    let (in_changed, elsewhere) = {
        let guard = reader.read();
        (
            cache
                .hold_output::<Ipv4>(&guard, WorkerId::new(0), &key([198, 51, 100, 7]))
                .unwrap(),
            cache
                .hold_output::<Ipv4>(&guard, WorkerId::new(0), &key([203, 0, 113, 7]))
                .unwrap(),
        )
    };
    reader.quiescent();
    let now = cache.now_ms();
    assert!(in_changed.is_valid(now) && elsewhere.is_valid(now));
    {
        let _idle = reader.offline();
        // A more specific route under 198.51.100.0/24, in another table:
        // with policy rules it could win, so it stales the held route too.
        apply(
            &mut writer,
            "route add 198.51.100.0/25 via 10.0.0.4 table 100",
        );
    }
    assert!(!in_changed.is_valid(now), "the prefix changed under it");
    assert!(elsewhere.is_valid(now), "203.0.113.0/24 did not change");
    {
        let _idle = reader.offline();
        apply(&mut writer, "addr add 10.0.5.1/24 dev dummy0");
    }
    assert!(!elsewhere.is_valid(now), "an address change flushes");
}

#[test]
fn a_deleted_route_takes_its_exceptions_with_it() {
    let (mut writer, cache) = wired(fib().unwrap());
    let mut reader = cache.domain().register();
    let dst = Ipv4Addr::new(198, 51, 100, 7);
    {
        let guard = reader.read();
        assert_eq!(
            cache.update_pmtu_v4(&guard, dst, 1400),
            PmtuOutcome::Recorded(1400)
        );
    }
    reader.quiescent();
    assert!(cache.exception_for_v4(dst).is_some());
    {
        let _idle = reader.offline();
        // Routes elsewhere leave it alone.
        apply(&mut writer, "route add 192.0.2.0/24 via 10.0.0.3");
    }
    assert_eq!(cache.exception_for_v4(dst).unwrap().1.pmtu, 1400);
    {
        let _idle = reader.offline();
        apply(&mut writer, "route del 198.51.100.0/24");
        apply(&mut writer, "route add 198.51.100.0/24 via 10.0.0.2");
    }
    assert!(cache.exception_for_v4(dst).is_none());
}

#[test]
fn routes_through_one_gateway_keep_their_own_source_and_mtu() {
    let (domain, cache) = cache_with(&[
        // Two subnets on one device: both on link (gateway 0), each with
        // its own source address.
        "addr add 10.0.1.1/24 dev dummy0",
        // Through the testbed's gateway 10.0.0.2: one route with an MTU,
        // one with a preferred source, one plain (198.51.100.0/24).
        "route add 192.0.2.0/24 via 10.0.0.2 mtu 1400",
        "route add 203.0.113.0/24 via 10.0.0.2 src 10.0.1.1",
    ]);
    let reader = domain.register();
    let guard = reader.read();
    let get = |a: [u8; 4]| {
        let r = cache
            .output::<Ipv4>(&guard, SlotKind::PerCore(WorkerId::new(0)), &key(a))
            .unwrap();
        (r.src_addr().unwrap(), r.mtu)
    };
    let v4 = |a: [u8; 4]| IpAddr::from(a);
    // Each answer twice: the second comes from the cache.
    for _ in 0..2 {
        assert_eq!(get([10, 0, 0, 9]), (v4([10, 0, 0, 1]), 1500));
        assert_eq!(get([10, 0, 1, 9]), (v4([10, 0, 1, 1]), 1500));
        assert_eq!(get([198, 51, 100, 7]), (v4([10, 0, 0, 1]), 1500));
        assert_eq!(get([192, 0, 2, 7]), (v4([10, 0, 0, 1]), 1400));
        assert_eq!(get([203, 0, 113, 7]), (v4([10, 0, 1, 1]), 1500));
    }
}

#[test]
fn an_ipv6_source_is_picked_per_destination_unless_the_route_names_one() {
    let (domain, cache) = cache_with(&[
        "addr add 2001:db8:1::1/64 dev dummy0 nodad",
        "addr add 2001:db8:2::1/64 dev dummy0 nodad",
        "route add 2001:db8::/32 via 2001:db8:1::2",
        "route add 2001:db8:f2::/48 via 2001:db8:1::2 src 2001:db8:2::1",
    ]);
    let reader = domain.register();
    let guard = reader.read();
    let source = |dst: &str| {
        let dst: std::net::Ipv6Addr = dst.parse().unwrap();
        let key = fibre_fib::FlowKeyV6 {
            dst: u128::from(dst),
            ..Default::default()
        };
        let route = cache
            .output::<Ipv6>(&guard, SlotKind::PerCore(WorkerId::new(0)), &key)
            .unwrap();
        cache
            .source_v6(&guard, &route, dst)
            .unwrap()
            .unwrap()
            .to_string()
    };
    // One nexthop, two flows: the longest matching prefix picks each one's
    // source (RFC 6724 rule 8), cached route or not.
    for _ in 0..2 {
        assert_eq!(source("2001:db8:1:ff::7"), "2001:db8:1::1");
        assert_eq!(source("2001:db8:2:ff::7"), "2001:db8:2::1");
        assert_eq!(source("2001:db8:f2::7"), "2001:db8:2::1");
    }
}

#[test]
fn a_route_replaced_through_the_same_gateway_with_new_metrics_is_seen_at_once() {
    let (mut writer, cache) = wired(fib().unwrap());
    let mut reader = cache.domain().register();
    let mtu = |reader: &mut fibre_rcu::ReaderHandle| {
        let m = {
            let guard = reader.read();
            let route = cache
                .output::<Ipv4>(
                    &guard,
                    SlotKind::PerCore(WorkerId::new(0)),
                    &key([198, 51, 100, 7]),
                )
                .unwrap();
            route.mtu
        };
        reader.quiescent();
        m
    };
    assert_eq!(mtu(&mut reader), 1500);
    let generation = cache.change_count();
    {
        let _idle = reader.offline();
        // The kernel makes a new fib_info (a new nexthop) for new metrics;
        // here the route's cache class changes with them.
        apply(
            &mut writer,
            "route replace 198.51.100.0/24 via 10.0.0.2 mtu 1300",
        );
    }
    assert_eq!(mtu(&mut reader), 1300);
    assert_ne!(cache.change_count(), generation, "tunnels re-resolve");
}

#[test]
fn a_route_in_a_table_the_rules_visit_first_stales_more_specific_held_routes() {
    let (mut writer, cache) = wired(fib().unwrap());
    apply(&mut writer, "rule add pref 100 table 100");
    let mut reader = cache.domain().register();
    let held = {
        let guard = reader.read();
        cache
            .hold_output::<Ipv4>(&guard, WorkerId::new(0), &key([198, 51, 100, 7]))
            .unwrap()
    };
    reader.quiescent();
    let now = cache.now_ms();
    assert!(held.is_valid(now));
    {
        let _idle = reader.offline();
        // Shorter than main's 198.51.100.0/24, but table 100 comes first.
        apply(&mut writer, "route add 198.0.0.0/8 via 10.0.0.3 table 100");
    }
    assert!(
        !held.is_valid(now),
        "table 100 now answers for 198.51.100.7"
    );
    let guard = reader.read();
    let route = cache
        .output::<Ipv4>(
            &guard,
            SlotKind::PerCore(WorkerId::new(0)),
            &key([198, 51, 100, 7]),
        )
        .unwrap();
    assert_eq!(route.gateway_addr(), Some(IpAddr::from([10, 0, 0, 3])));
}

#[test]
fn a_flow_that_names_its_source_gets_it_and_does_not_lend_it() {
    let (domain, cache) = cache_with(&["addr add 10.0.1.1/24 dev dummy0"]);
    let reader = domain.register();
    let guard = reader.read();
    let from = |src: [u8; 4]| FlowKeyV4 {
        src: u32::from_be_bytes(src),
        ..key([198, 51, 100, 7])
    };
    let named = cache
        .output::<Ipv4>(
            &guard,
            SlotKind::PerCore(WorkerId::new(0)),
            &from([10, 0, 1, 1]),
        )
        .unwrap();
    assert!(!named.is_cached());
    assert_eq!(named.src_addr(), Some(IpAddr::from([10, 0, 1, 1])));
    let plain = cache
        .output::<Ipv4>(
            &guard,
            SlotKind::PerCore(WorkerId::new(0)),
            &key([198, 51, 100, 8]),
        )
        .unwrap();
    assert!(plain.is_cached());
    assert_eq!(plain.src_addr(), Some(IpAddr::from([10, 0, 0, 1])));
}

#[test]
fn answers_of_different_types_through_one_device_are_different_routes() {
    let (domain, cache) = cache_with(&[
        "route add default via 10.0.0.2",
        "route add 10.5.0.0/16 dev dummy0",
    ]);
    let reader = domain.register();
    let guard = reader.read();
    let kind = |a: [u8; 4]| {
        let r = cache
            .output::<Ipv4>(&guard, SlotKind::PerCore(WorkerId::new(0)), &key(a))
            .unwrap();
        (r.kind(), r.gateway_addr())
    };
    for _ in 0..2 {
        assert_eq!(
            kind([224, 1, 2, 3]),
            (fibre_fib::RouteType::Multicast, None)
        );
        assert_eq!(kind([10, 5, 0, 9]), (fibre_fib::RouteType::Unicast, None));
    }
}

#[test]
fn a_route_with_mtu_lock_ignores_path_mtu_reports() {
    let (domain, cache) = cache_with(&["route add 192.0.2.0/24 via 10.0.0.2 mtu lock 1400"]);
    let reader = domain.register();
    let guard = reader.read();
    let dst = Ipv4Addr::new(192, 0, 2, 7);
    assert_eq!(cache.update_pmtu_v4(&guard, dst, 1300), PmtuOutcome::Locked);
    let route = cache
        .output::<Ipv4>(
            &guard,
            SlotKind::PerCore(WorkerId::new(0)),
            &key(dst.octets()),
        )
        .unwrap();
    assert_eq!(route.mtu, 1400);
    assert_ne!(route.flags & fibre_route::route::flags::MTU_LOCKED, 0);
    // The same gateway without the lock is another route.
    assert_eq!(
        cache.update_pmtu_v4(&guard, Ipv4Addr::new(198, 51, 100, 7), 1300),
        PmtuOutcome::Recorded(1300)
    );
}
