//! Input routes (`RouteCache::input`, IPv4 and IPv6): the answers of
//! `ip route get DST from SRC iif DEV`, one route per nexthop in its input
//! slot, shared by every input link and source, stale with the nexthop's
//! generation, and never mixed with the output routes of the same nexthop.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use fibre_base::{Ipv4, Ipv6, WorkerId};
use fibre_fib::{Errno, Fib, FlowKeyV4, RouteGetRequest, RouteType};
use fibre_route::exceptions::PmtuOutcome;
use fibre_route::route::flags;
use fibre_route::testbed::fib;
use fibre_route::{NexthopKey, RouteCache, SlotKind};

mod common;
use common::{apply, commands, wired};

/// lo, dummy0 (ifindex 2, 10.0.0.1/24, 198.51.100.0/24 via 10.0.0.2) and:
const D1: u32 = 3;
const LINES: &[&str] = &[
    "link add d1 type ifb",
    "link set d1 up",
    "addr add 10.1.0.1/24 dev d1",
    "addr add 2001:db8:1::1/64 dev dummy0 nodad",
    "addr add 2001:db8:2::1/64 dev d1 nodad",
    "route add 192.0.2.0/24 nexthop via 10.0.0.2 nexthop via 10.1.0.2",
    "route add 203.0.113.0/24 via 10.1.0.2 mtu 1400",
    "route add unreachable 203.0.113.64/26",
    "route add prohibit 203.0.113.128/26",
    "route add blackhole 203.0.113.192/26",
    "route add 2001:db8:f::/48 via 2001:db8:1::2",
    "route add 2001:db8:f2::/48 via 2001:db8:1::2 src 2001:db8:2::1",
    "route add unreachable 2001:db8:e::/48",
];

fn test_fib() -> Fib {
    let mut fib = fib().unwrap();
    for line in LINES {
        for command in commands(line) {
            fib.apply(&command).unwrap();
        }
    }
    fib
}

/// The FIB under a cache of its own in a fresh RCU domain.
fn cache() -> (fibre_rcu::Domain, RouteCache<Fib>) {
    let domain = fibre_rcu::Domain::new();
    let cache = RouteCache::new(&domain, test_fib(), 2);
    (domain, cache)
}

fn v4(s: &str) -> Ipv4Addr {
    s.parse().unwrap()
}

fn v6(s: &str) -> Ipv6Addr {
    s.parse().unwrap()
}

/// What the cache's input route says, in route_get's terms: (dev name,
/// gateway, type, MTU, source), or the errno.
type Seen = Result<(String, Option<IpAddr>, RouteType, u32, Option<IpAddr>), Errno>;

/// route_get's input answer in the same terms (the MTU a route without
/// one gets is its device's).
fn route_get(fib: &Fib, iif: u32, dst: IpAddr, src: IpAddr) -> Seen {
    let name = fib.link(iif).ok_or(Errno::NoDev)?.name.clone();
    let req = RouteGetRequest {
        src: Some(src),
        iif: Some(name),
        ..RouteGetRequest::to(dst)
    };
    let a = fib.route_get(&req).map_err(|e| e.errno)?;
    let dev = a.dev.unwrap();
    let dev_mtu = fib.link_by_name(&dev).unwrap().mtu;
    let mtu = a.mtu.unwrap_or(dev_mtu).min(dev_mtu);
    Ok((dev, a.gateway, a.kind, mtu, a.prefsrc))
}

#[test]
fn input_routes_answer_as_route_get_with_iif() {
    let (domain, cache) = cache();
    let fib = cache.source();
    let reader = domain.register();
    let guard = reader.read();
    let dsts = [
        "198.51.100.7",
        "192.0.2.7",
        "192.0.2.8",
        "203.0.113.5",
        "203.0.113.70",
        "203.0.113.130",
        "203.0.113.200",
        "10.0.0.1",
        "10.1.0.1",
        "10.0.0.255",
        "255.255.255.255",
        "10.0.0.7",
        "10.1.0.7",
        "8.8.8.8",
        "127.0.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "224.0.0.5",
    ];
    let srcs = [
        "10.0.0.9",
        "10.1.0.9",
        "10.0.0.1",
        "127.0.0.1",
        "224.0.0.1",
        "0.0.0.0",
    ];
    let mut answered = 0;
    for iif in [1, 2, D1, 99] {
        for d in dsts {
            for s in srcs {
                // Twice: a miss that builds the route, then a hit.
                for _ in 0..2 {
                    let seen: Seen = cache.input::<Ipv4>(&guard, iif, v4(d), v4(s)).map(|r| {
                        assert_ne!(r.flags & flags::INPUT, 0);
                        let dev = fib.link(r.dev).unwrap().name.clone();
                        (dev, r.gateway_addr(), r.kind(), r.mtu, r.src_addr())
                    });
                    let want = route_get(fib, iif, IpAddr::V4(v4(d)), IpAddr::V4(v4(s)));
                    assert_eq!(seen, want, "iif {iif} {d} from {s}");
                    answered += usize::from(seen.is_ok());
                }
            }
        }
    }
    assert!(answered > 100, "{answered}");
    // IPv6: forwarding, a route's own source, local delivery, rejects.
    let dsts6 = [
        "2001:db8:f::7",
        "2001:db8:f2::7",
        "2001:db8:e::7",
        "2001:db8:1::1",
        "2001:db8:2::7",
        "3fff::1",
    ];
    for iif in [2, D1, 99] {
        for d in dsts6 {
            for _ in 0..2 {
                let seen: Seen = cache
                    .input::<Ipv6>(&guard, iif, v6(d), v6("2001:db8:2::9"))
                    .map(|r| {
                        assert_eq!(r.flags & (flags::INPUT | flags::SRC_PER_FLOW), flags::INPUT);
                        let dev = fib.link(r.dev).unwrap().name.clone();
                        (dev, r.gateway_addr(), r.kind(), r.mtu, r.src_addr())
                    });
                let src = IpAddr::V6(v6("2001:db8:2::9"));
                let want = route_get(fib, iif, IpAddr::V6(v6(d)), src);
                assert_eq!(seen, want, "iif {iif} {d}");
            }
        }
    }
}

#[test]
fn one_input_route_per_nexthop_for_every_link_and_source() {
    let (domain, cache) = cache();
    let reader = domain.register();
    let guard = reader.read();
    let first = cache
        .input::<Ipv4>(&guard, 2, v4("198.51.100.7"), v4("10.0.0.9"))
        .unwrap();
    let again = cache
        .input::<Ipv4>(&guard, D1, v4("198.51.100.200"), v4("10.1.0.9"))
        .unwrap();
    assert!(first.is_cached() && again.is_cached());
    assert!(std::ptr::eq(&*first, &*again), "one route in the slot");
    assert_eq!(first.flags & flags::CACHED, flags::CACHED);
    assert_eq!(first.gateway_addr(), Some(IpAddr::from([10, 0, 0, 2])));
    // The output route of the same nexthop is another route: it carries
    // our source address, the input route none.
    let key = FlowKeyV4 {
        dst: u32::from(v4("198.51.100.7")),
        ..Default::default()
    };
    let out = cache
        .output::<Ipv4>(&guard, SlotKind::PerCore(WorkerId::new(0)), &key)
        .unwrap();
    assert!(!std::ptr::eq(&*first, &*out));
    assert_eq!(out.src_addr(), Some(IpAddr::from([10, 0, 0, 1])));
    assert_eq!((first.src_addr(), out.flags & flags::INPUT), (None, 0));
    // The input slot is the input path's alone.
    let refused = cache.output::<Ipv4>(&guard, SlotKind::Input, &key);
    assert_eq!(refused.unwrap_err(), Errno::Inval);
    // Another nexthop, another route.
    let other = cache
        .input::<Ipv4>(&guard, 2, v4("203.0.113.5"), v4("10.0.0.9"))
        .unwrap();
    assert!(!std::ptr::eq(&*first, &*other));
    assert_eq!((other.dev, other.mtu), (D1, 1400));
}

#[test]
fn input_routes_follow_route_changes_and_nexthop_generations() {
    let (mut writer, cache) = wired(test_fib());
    let mut reader = cache.domain().register();
    let input = |reader: &mut fibre_rcu::ReaderHandle| {
        let seen = {
            let guard = reader.read();
            cache
                .input::<Ipv4>(&guard, D1, v4("198.51.100.7"), v4("10.1.0.9"))
                .map(|r| (r.gateway_addr(), r.stamp, r.is_cached()))
        };
        reader.quiescent();
        seen
    };
    let (gw, stamp, cached) = input(&mut reader).unwrap();
    assert_eq!((gw, cached), (Some(IpAddr::from([10, 0, 0, 2])), true));
    assert_eq!(input(&mut reader).unwrap().1, stamp, "a hit");
    // The nexthop is invalidated (a neighbour or device change): the next
    // packet builds a fresh route.
    let nexthop = {
        let guard = reader.read();
        let r = cache
            .input::<Ipv4>(&guard, D1, v4("198.51.100.7"), v4("10.1.0.9"))
            .unwrap();
        let fwd = fibre_fib::Forward {
            gateway: u32::from(v4("10.0.0.2")),
            dev: 2,
            table: fibre_fib::TABLE_MAIN,
            kind: RouteType::Unicast,
            cache_class: fibre_fib::CACHE_CLASS_PLAIN,
        };
        assert_eq!(r.gateway_addr(), fwd.gateway_addr().map(IpAddr::V4));
        NexthopKey::of::<Ipv4>(&fwd)
    };
    reader.quiescent();
    assert!(cache.invalidate_nexthop(nexthop));
    let (_, restamped, cached) = input(&mut reader).unwrap();
    assert!(restamped > stamp && cached);
    // A link change flushes: stale again.
    {
        let _idle = reader.offline();
        apply(&mut writer, "link set d1 mtu 1400");
    }
    assert!(input(&mut reader).unwrap().1 > restamped);
    // The route changes: the next packet follows it at once.
    {
        let _idle = reader.offline();
        apply(&mut writer, "route replace 198.51.100.0/24 via 10.1.0.2");
    }
    assert_eq!(
        input(&mut reader).unwrap().0,
        Some(IpAddr::from([10, 1, 0, 2]))
    );
    {
        let _idle = reader.offline();
        apply(&mut writer, "route replace unreachable 198.51.100.0/24");
    }
    assert_eq!(input(&mut reader), Err(Errno::HostUnreach));
}

#[test]
fn local_delivery_and_broadcasts_are_routes_to_lo() {
    let (domain, cache) = cache();
    let reader = domain.register();
    let guard = reader.read();
    let lo_mtu = cache.source().link(1).unwrap().mtu;
    for (dst, kind) in [
        ("10.0.0.1", RouteType::Local),
        ("10.1.0.1", RouteType::Local),
        ("10.0.0.255", RouteType::Broadcast),
        ("255.255.255.255", RouteType::Broadcast),
    ] {
        for iif in [2, D1] {
            let r = cache
                .input::<Ipv4>(&guard, iif, v4(dst), v4("10.0.0.9"))
                .unwrap();
            assert_eq!(
                (r.dev, r.kind(), r.gateway_addr()),
                (1, kind, None),
                "{dst}"
            );
            assert_eq!(
                r.flags & (flags::LOCAL | flags::INPUT),
                flags::LOCAL | flags::INPUT
            );
            assert_eq!(r.mtu, lo_mtu);
            assert!(r.is_cached(), "{dst}");
        }
    }
    let r = cache
        .input::<Ipv6>(&guard, 2, v6("2001:db8:2::1"), v6("2001:db8:1::9"))
        .unwrap();
    assert_eq!((r.dev, r.kind()), (1, RouteType::Local));
    assert_ne!(r.flags & flags::LOCAL, 0);
}

#[test]
fn rejects_and_martians_answer_their_errnos_and_cache_nothing() {
    let (domain, cache) = cache();
    let reader = domain.register();
    let guard = reader.read();
    let peer = v4("10.0.0.9");
    let cases = [
        (2, "203.0.113.70", peer, Errno::HostUnreach),
        (2, "203.0.113.130", peer, Errno::Acces),
        (2, "203.0.113.200", peer, Errno::Inval),
        (2, "8.8.8.8", peer, Errno::NetUnreach),
        // From one of our addresses, from loopback, to loopback.
        (2, "198.51.100.7", v4("10.1.0.1"), Errno::Inval),
        (2, "198.51.100.7", v4("127.0.0.1"), Errno::Inval),
        (2, "127.0.0.1", peer, Errno::Inval),
        (99, "198.51.100.7", peer, Errno::NoDev),
    ];
    for (iif, dst, src, errno) in cases {
        let got = cache.input::<Ipv4>(&guard, iif, v4(dst), src);
        assert_eq!(got.unwrap_err(), errno, "{dst} from {src} iif {iif}");
    }
    let got = cache.input::<Ipv6>(&guard, 2, v6("2001:db8:e::7"), v6("2001:db8:1::9"));
    assert_eq!(got.unwrap_err(), Errno::HostUnreach);
    assert_eq!(cache.nexthop_count(), 0);
}

#[test]
fn a_path_mtu_learnt_applies_to_forwarded_packets() {
    let (domain, cache) = cache();
    let reader = domain.register();
    let guard = reader.read();
    let dst = v4("198.51.100.7");
    let outcome = cache.update_pmtu_v4(&guard, dst, 1300);
    assert_eq!(outcome, PmtuOutcome::Recorded(1300));
    let r = cache
        .input::<Ipv4>(&guard, D1, dst, v4("10.1.0.9"))
        .unwrap();
    assert_eq!((r.mtu, r.flags & flags::PMTU), (1300, flags::PMTU));
    assert!(!r.is_cached(), "the exception's copy");
    // Other destinations through the nexthop keep the route's MTU.
    let other = cache
        .input::<Ipv4>(&guard, D1, v4("198.51.100.8"), v4("10.1.0.9"))
        .unwrap();
    assert_eq!(other.mtu, 1500);
    assert!(other.is_cached());
}
