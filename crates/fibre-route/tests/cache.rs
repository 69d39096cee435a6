//! The route cache against today's FIB: reuse, precise invalidation,
//! exceptions and their bad inputs, and concurrent use.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::Ordering;
use std::sync::RwLock;

use fibre_base::Clock;
use fibre_base::{Ipv4, WorkerId};
use fibre_fib::{FlowKeyV4, RouteOp, TABLE_MAIN};
use fibre_rcu::Domain;
use fibre_route::exceptions::{format_cache_line, ExceptionConfig, PmtuOutcome};
use fibre_route::route::flags;
use fibre_route::testbed::{fib, prefix, route_via, DUMMY_IFINDEX};
use fibre_route::{NexthopKey, RouteCache, SlotKind};

fn key(a: [u8; 4]) -> FlowKeyV4 {
    FlowKeyV4 {
        dst: u32::from_be_bytes(a),
        ..Default::default()
    }
}

/// The test FIB plus 203.0.113.0/24 via 10.0.0.3 (a second nexthop).
fn two_nexthop_cache(
    domain: &Domain,
) -> (
    RouteCache<RwLock<fibre_fib::Fib>>,
    std::sync::Arc<std::sync::atomic::AtomicU64>,
) {
    let mut f = fib().unwrap();
    f.apply(&route_via(
        prefix([203, 0, 113, 0], 24),
        [10, 0, 0, 3],
        None,
        RouteOp::Add,
    ))
    .unwrap();
    let (clock, time) = Clock::manual();
    let cache =
        RouteCache::with_options(domain, RwLock::new(f), 2, ExceptionConfig::default(), clock);
    (cache, time)
}

fn nh(gw: [u8; 4]) -> NexthopKey {
    NexthopKey {
        family: 4,
        table: TABLE_MAIN,
        dev: DUMMY_IFINDEX,
        gateway: u128::from(u32::from_be_bytes(gw)),
        class: fibre_fib::CACHE_CLASS_PLAIN,
        kind: fibre_fib::RouteType::Unicast,
    }
}

#[test]
fn a_cached_route_is_reused_per_core_and_not_shared_across_cores() {
    let domain = Domain::new();
    let (cache, _) = two_nexthop_cache(&domain);
    let reader = domain.register();
    let guard = reader.read();
    let k = key([198, 51, 100, 7]);
    let a = cache
        .output::<Ipv4>(&guard, SlotKind::PerCore(WorkerId::new(0)), &k)
        .unwrap();
    let b = cache
        .output::<Ipv4>(
            &guard,
            SlotKind::PerCore(WorkerId::new(0)),
            &key([198, 51, 100, 8]),
        )
        .unwrap();
    let c = cache
        .output::<Ipv4>(&guard, SlotKind::PerCore(WorkerId::new(1)), &k)
        .unwrap();
    assert!(a.is_cached() && b.is_cached() && c.is_cached());
    assert!(std::ptr::eq(&*a, &*b), "same nexthop, same core: one route");
    assert!(!std::ptr::eq(&*a, &*c), "another core has its own route");
    assert_eq!(a.gateway_addr(), Some(IpAddr::from([10, 0, 0, 2])));
    assert_eq!(a.src_addr(), Some(IpAddr::from([10, 0, 0, 1])));
    assert_eq!((a.dev, a.mtu), (DUMMY_IFINDEX, 1500));
    assert!(a.flags & flags::CACHED != 0);
    // Borrowing touched no counter: only the slot's reference.
    assert_eq!(a.ref_count(), 1);
}

#[test]
fn invalidating_a_nexthop_stales_exactly_its_routes() {
    let domain = Domain::new();
    let (cache, _) = two_nexthop_cache(&domain);
    let mut reader = domain.register();
    let (a0, b0) = {
        let g = reader.read();
        let a = cache
            .output::<Ipv4>(
                &g,
                SlotKind::PerCore(WorkerId::new(0)),
                &key([198, 51, 100, 7]),
            )
            .unwrap();
        let b = cache
            .output::<Ipv4>(
                &g,
                SlotKind::PerCore(WorkerId::new(0)),
                &key([203, 0, 113, 7]),
            )
            .unwrap();
        (a.hold().unwrap(), b.hold().unwrap())
    };
    reader.quiescent();
    assert!(cache.invalidate_nexthop(nh([10, 0, 0, 2])));
    assert!(!cache.invalidate_nexthop(nh([10, 0, 0, 99])));
    let g = reader.read();
    let a1 = cache
        .output::<Ipv4>(
            &g,
            SlotKind::PerCore(WorkerId::new(0)),
            &key([198, 51, 100, 7]),
        )
        .unwrap();
    let b1 = cache
        .output::<Ipv4>(
            &g,
            SlotKind::PerCore(WorkerId::new(0)),
            &key([203, 0, 113, 7]),
        )
        .unwrap();
    assert!(
        !std::ptr::eq(&*a0, &*a1),
        "the invalidated nexthop's route was rebuilt"
    );
    assert!(std::ptr::eq(&*b0, &*b1), "the other nexthop's route stayed");
    // The old route lives on while held: our reference, plus the slot's,
    // which waits in the retire cell for a grace period (and, being the
    // latest retired, until the next retirement).
    assert_eq!(a0.ref_count(), 2);
    assert_eq!(b0.ref_count(), 2, "ours and the slot's");
    assert_eq!(a0.mtu, 1500);
}

#[test]
fn a_forgotten_nexthop_releases_its_routes_after_the_grace_period() {
    let domain = Domain::new();
    let (cache, _) = two_nexthop_cache(&domain);
    let mut reader = domain.register();
    let kept = {
        let g = reader.read();
        let r = cache
            .output::<Ipv4>(
                &g,
                SlotKind::PerCore(WorkerId::new(0)),
                &key([198, 51, 100, 7]),
            )
            .unwrap();
        cache
            .output::<Ipv4>(
                &g,
                SlotKind::PerCore(WorkerId::new(0)),
                &key([203, 0, 113, 7]),
            )
            .unwrap();
        r.hold().unwrap()
    };
    assert_eq!(cache.nexthop_count(), 2);
    assert_eq!(kept.ref_count(), 2, "ours and the slot's");
    assert!(cache.forget_nexthop(nh([10, 0, 0, 2])));
    assert!(!cache.forget_nexthop(nh([10, 0, 0, 2])));
    assert_eq!(cache.nexthop_count(), 1);
    // The reader has not reported yet: the entry (and its slot's
    // reference) must survive.
    assert_eq!(kept.ref_count(), 2);
    reader.quiescent();
    // The next publication polls the retire list.
    cache.forget_nexthop(nh([10, 0, 0, 3]));
    assert_eq!(
        kept.ref_count(),
        1,
        "the slot's reference went with the entry"
    );
}

#[test]
fn a_guard_of_another_domain_is_refused_not_trusted() {
    let domain = Domain::new();
    let (cache, _) = two_nexthop_cache(&domain);
    let other = Domain::new();
    let stranger = other.register();
    let g = stranger.read();
    let err = cache
        .output::<Ipv4>(
            &g,
            SlotKind::PerCore(WorkerId::new(0)),
            &key([198, 51, 100, 7]),
        )
        .unwrap_err();
    assert_eq!(err, fibre_fib::Errno::Inval);
    assert_eq!(
        cache.update_pmtu_v4(&g, Ipv4Addr::new(198, 51, 100, 7), 1400),
        PmtuOutcome::NoRoute
    );
}

#[test]
fn invalidating_a_device_stales_every_nexthop_through_it() {
    let domain = Domain::new();
    let (cache, _) = two_nexthop_cache(&domain);
    let mut reader = domain.register();
    {
        let g = reader.read();
        cache
            .output::<Ipv4>(
                &g,
                SlotKind::PerCore(WorkerId::new(0)),
                &key([198, 51, 100, 7]),
            )
            .unwrap();
        cache
            .output::<Ipv4>(
                &g,
                SlotKind::PerCore(WorkerId::new(0)),
                &key([203, 0, 113, 7]),
            )
            .unwrap();
    }
    reader.quiescent();
    assert_eq!(cache.invalidate_device(DUMMY_IFINDEX), 2);
    assert_eq!(cache.invalidate_device(77), 0);
}

#[test]
fn a_more_specific_route_stales_held_routes_under_it_and_no_others() {
    let domain = Domain::new();
    let (cache, time) = two_nexthop_cache(&domain);
    let mut reader = domain.register();
    let (inside, outside) = {
        let g = reader.read();
        (
            cache
                .hold_output::<Ipv4>(&g, WorkerId::new(0), &key([198, 51, 100, 7]))
                .unwrap(),
            cache
                .hold_output::<Ipv4>(&g, WorkerId::new(0), &key([203, 0, 113, 7]))
                .unwrap(),
        )
    };
    reader.quiescent();
    let now = time.load(Ordering::Relaxed);
    assert!(inside.is_valid(now) && outside.is_valid(now));
    assert_eq!(
        inside.matched(),
        (TABLE_MAIN, prefix([198, 51, 100, 0], 24))
    );
    // ip route add 198.51.100.0/25 via 10.0.0.3: the /24 is an ancestor.
    let more_specific = prefix([198, 51, 100, 0], 25);
    cache
        .source()
        .write()
        .unwrap()
        .apply(&route_via(more_specific, [10, 0, 0, 3], None, RouteOp::Add))
        .unwrap();
    assert_eq!(cache.invalidate_prefix(TABLE_MAIN, more_specific), 1);
    assert!(!inside.is_valid(now), "198.51.100.7 may now take the /25");
    assert!(outside.is_valid(now), "203.0.113.0/24 is unrelated");
    // Re-resolving finds the new route.
    let g = reader.read();
    let again = cache
        .hold_output::<Ipv4>(&g, WorkerId::new(0), &key([198, 51, 100, 7]))
        .unwrap();
    assert_eq!(again.matched().1, more_specific);
    assert_eq!(
        again.route().gateway_addr(),
        Some(IpAddr::from([10, 0, 0, 3]))
    );
}

#[test]
fn a_pmtu_exception_is_carried_by_its_destination_only_and_expires() {
    let domain = Domain::new();
    let (cache, time) = two_nexthop_cache(&domain);
    let mut reader = domain.register();
    let dst = Ipv4Addr::new(198, 51, 100, 7);
    {
        let g = reader.read();
        assert_eq!(
            cache.update_pmtu_v4(&g, dst, 1400),
            PmtuOutcome::Recorded(1400)
        );
        let r = cache
            .output::<Ipv4>(&g, SlotKind::PerCore(WorkerId::new(0)), &key(dst.octets()))
            .unwrap();
        assert!(!r.is_cached());
        assert_eq!(r.mtu, 1400);
        assert!(r.flags & flags::PMTU != 0);
        assert_eq!(r.expires_ms, 600_000);
        let other = cache
            .output::<Ipv4>(
                &g,
                SlotKind::PerCore(WorkerId::new(0)),
                &key([198, 51, 100, 8]),
            )
            .unwrap();
        assert!(other.is_cached());
        assert_eq!(other.mtu, 1500);
    }
    reader.quiescent();
    time.store(13_000, Ordering::Relaxed);
    let (nk, e) = cache.exception_for_v4(dst).unwrap();
    assert_eq!(nk, nh([10, 0, 0, 2]));
    assert_eq!(
        format_cache_line(&e, 13_000),
        "cache expires 587sec mtu 1400"
    );
    assert_eq!(cache.exceptions().len(), 1);
    // The same MTU again: not rewritten while more than half its life is
    // left, refreshed after (as __ip_rt_update_pmtu).
    {
        let g = reader.read();
        assert_eq!(
            cache.update_pmtu_v4(&g, dst, 1400),
            PmtuOutcome::Recorded(1400)
        );
        assert_eq!(cache.exception_for_v4(dst).unwrap().1.expires_ms, 600_000);
        time.store(400_000, Ordering::Relaxed);
        cache.update_pmtu_v4(&g, dst, 1400);
        assert_eq!(cache.exception_for_v4(dst).unwrap().1.expires_ms, 1_000_000);
    }
    reader.quiescent();
    time.store(1_000_000, Ordering::Relaxed);
    assert!(cache.exception_for_v4(dst).is_none());
    let g = reader.read();
    let r = cache
        .output::<Ipv4>(&g, SlotKind::PerCore(WorkerId::new(0)), &key(dst.octets()))
        .unwrap();
    assert_eq!(r.mtu, 1500);
    assert!(r.is_cached(), "back on the nexthop's cached route");
}

#[test]
fn icmp_mtus_are_clamped_or_ignored_never_trusted() {
    let domain = Domain::new();
    let (cache, _) = two_nexthop_cache(&domain);
    let reader = domain.register();
    let g = reader.read();
    let dst = Ipv4Addr::new(198, 51, 100, 9);
    assert_eq!(cache.update_pmtu_v4(&g, dst, 9000), PmtuOutcome::NotSmaller);
    assert!(cache.exception_for_v4(dst).is_none());
    // The path's own MTU: recorded, as Linux records it (old_mtu < mtu is
    // the only refusal).
    assert_eq!(
        cache.update_pmtu_v4(&g, dst, 1500),
        PmtuOutcome::Recorded(1500)
    );
    assert_eq!(cache.exception_for_v4(dst).unwrap().1.pmtu, 1500);
    // Below the floor, even below IPv4's 68: raised to 552 and locked.
    assert_eq!(
        cache.update_pmtu_v4(&g, dst, 40),
        PmtuOutcome::RecordedLocked(552)
    );
    // The floor is locked: later reports are ignored until it lapses.
    assert_eq!(cache.update_pmtu_v4(&g, dst, 1000), PmtuOutcome::Locked);
    assert_eq!(cache.update_pmtu_v4(&g, dst, 400), PmtuOutcome::Locked);
    let (_, e) = cache.exception_for_v4(dst).unwrap();
    assert_eq!((e.pmtu, e.mtu_locked), (552, true));
    assert_eq!(
        format_cache_line(&e, cache.now_ms()),
        "cache expires 600sec mtu lock 552"
    );
    let route = cache
        .output::<Ipv4>(
            &g,
            SlotKind::PerCore(WorkerId::new(0)),
            &key([198, 51, 100, 9]),
        )
        .unwrap();
    assert_eq!(route.mtu, 552);
    assert_ne!(route.flags & flags::MTU_LOCKED, 0);
    assert_eq!(
        cache.update_pmtu_v4(&g, Ipv4Addr::new(192, 0, 2, 1), 1400),
        PmtuOutcome::NoRoute
    );
}

#[test]
fn exceptions_for_destinations_that_no_longer_route_are_dropped() {
    let domain = Domain::new();
    let (cache, _) = two_nexthop_cache(&domain);
    let mut reader = domain.register();
    {
        let g = reader.read();
        cache.update_pmtu_v4(&g, Ipv4Addr::new(198, 51, 100, 7), 1400);
        cache.update_pmtu_v4(&g, Ipv4Addr::new(203, 0, 113, 7), 1400);
        assert!(cache.redirect_v4(
            &g,
            Ipv4Addr::new(203, 0, 113, 8),
            Ipv4Addr::new(10, 0, 0, 9)
        ));
        assert!(!cache.redirect_v4(&g, Ipv4Addr::new(203, 0, 113, 8), Ipv4Addr::UNSPECIFIED));
        let r = cache
            .output::<Ipv4>(
                &g,
                SlotKind::PerCore(WorkerId::new(1)),
                &key([203, 0, 113, 8]),
            )
            .unwrap();
        assert_eq!(r.gateway_addr(), Some(IpAddr::from([10, 0, 0, 9])));
        assert!(r.flags & flags::REDIRECTED != 0);
    }
    reader.quiescent();
    assert_eq!(cache.exceptions().len(), 3);
    let gone = prefix([198, 51, 100, 0], 24);
    cache
        .source()
        .write()
        .unwrap()
        .apply(&route_via(gone, [10, 0, 0, 2], None, RouteOp::Del))
        .unwrap();
    cache.invalidate_prefix(TABLE_MAIN, gone);
    let left = cache.exceptions();
    assert_eq!(left.len(), 2);
    assert!(left.iter().all(|(_, e)| !gone.contains(&e.dst)));
}

#[test]
fn a_pmtu_flood_through_the_cache_keeps_memory_bounded() {
    let domain = Domain::new();
    let (cache, _) = two_nexthop_cache(&domain);
    // A default route, so that every flooded destination routes.
    cache
        .source()
        .write()
        .unwrap()
        .apply(&route_via(
            prefix([0, 0, 0, 0], 0),
            [10, 0, 0, 2],
            None,
            RouteOp::Add,
        ))
        .unwrap();
    let mut reader = domain.register();
    let bound =
        fibre_route::exceptions::ExceptionTable::new(ExceptionConfig::default()).max_bytes();
    let mut recorded = 0;
    for i in 0..100_000u32 {
        let dst = Ipv4Addr::from(u32::from_be_bytes([100, 64, 0, 0]) + i);
        let outcome = {
            let g = reader.read();
            cache.update_pmtu_v4(&g, dst, 1400)
        };
        reader.quiescent();
        if outcome == PmtuOutcome::Recorded(1400) {
            recorded += 1;
        }
    }
    assert_eq!(recorded, 100_000);
    let live = cache.exceptions().len();
    assert!(live > 2048 && live <= 2048 * 9, "{live} entries");
    assert!(cache.exception_bytes() <= bound);
}

#[test]
fn concurrent_lookups_holds_and_invalidations_leave_balanced_counts() {
    let domain = Domain::new();
    let (cache, _) = two_nexthop_cache(&domain);
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        for t in 0..2 {
            let (cache, domain, stop) = (&cache, &domain, &stop);
            s.spawn(move || {
                let mut reader = domain.register();
                let mut kept = Vec::new();
                for i in 0..20_000u32 {
                    {
                        let g = reader.read();
                        let dst = if i % 2 == 0 {
                            [198, 51, 100, 7]
                        } else {
                            [203, 0, 113, 7]
                        };
                        // With the `baselines` feature every third lookup
                        // takes the one slot all cores share.
                        #[cfg(feature = "baselines")]
                        let slot = if i % 3 == 0 {
                            SlotKind::SharedOutput
                        } else {
                            SlotKind::PerCore(WorkerId::new(t))
                        };
                        #[cfg(not(feature = "baselines"))]
                        let slot = SlotKind::PerCore(WorkerId::new(t));
                        let r = cache.output::<Ipv4>(&g, slot, &key(dst)).unwrap();
                        assert_eq!(r.mtu, 1500);
                        if i % 7 == 0 {
                            kept.push(r.hold().unwrap());
                        }
                    }
                    reader.quiescent();
                    if kept.len() > 16 {
                        kept.clear();
                    }
                }
                for h in &kept {
                    assert_eq!(h.dev, DUMMY_IFINDEX);
                }
                stop.store(true, Ordering::Relaxed);
            });
        }
        let (cache, stop) = (&cache, &stop);
        s.spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                cache.invalidate_nexthop(nh([10, 0, 0, 2]));
                cache.invalidate_device(DUMMY_IFINDEX);
                std::thread::yield_now();
            }
        });
    });
    // Every slot's route is referenced by its slot alone.
    let reader = domain.register();
    let g = reader.read();
    for slot in [
        SlotKind::PerCore(WorkerId::new(0)),
        SlotKind::PerCore(WorkerId::new(1)),
        #[cfg(feature = "baselines")]
        SlotKind::SharedOutput,
    ] {
        let r = cache
            .output::<Ipv4>(&g, slot, &key([198, 51, 100, 7]))
            .unwrap();
        assert_eq!(r.ref_count(), 1);
    }
}
