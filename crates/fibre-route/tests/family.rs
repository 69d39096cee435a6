//! The cache written once for both families (`CacheFamily`): the same
//! generic code holds, checks and answers IPv4 and IPv6 routes, and the
//! one input rule the kernel keeps apart per family stays apart.

use std::net::IpAddr;

use fibre_base::{IpFamily, Ipv4, Ipv6, WorkerId};
use fibre_fib::{Errno, Fib, RouteType};
use fibre_route::route::flags;
use fibre_route::testbed::{self, DUMMY_IFINDEX};
use fibre_route::{CacheFamily, NexthopKey, RouteCache};

mod common;
use common::{apply, commands, wired};

const W0: WorkerId = WorkerId::new(0);

/// The test bed (10.0.0.1/24 on dummy0, 198.51.100.0/24 via 10.0.0.2)
/// with 2001:db8::1/64 on dummy0 and 2001:db8:100::/48 via 2001:db8::2.
fn dual_stack() -> Fib {
    let mut fib = testbed::fib().unwrap();
    for line in [
        "addr add 2001:db8::1/64 dev dummy0",
        "route add 2001:db8:100::/48 via 2001:db8::2",
    ] {
        for command in commands(line) {
            fib.apply(&command).unwrap();
        }
    }
    fib
}

fn addr<I: IpFamily>(text: &str) -> I::Addr {
    I::from_ip(text.parse::<IpAddr>().unwrap()).unwrap()
}

/// A held route to `dst` (through `gateway`) goes stale when `route`, a
/// more specific prefix under the one it matched, is added, whatever the
/// family.
fn a_held_route_goes_stale_with_its_prefix<I: CacheFamily>(dst: &str, gateway: &str, route: &str) {
    let (mut writer, cache) = wired(dual_stack());
    let mut reader = cache.domain().register();
    let held = {
        let guard = reader.read();
        let key = I::flow_key(addr::<I>(dst), None);
        cache.hold_output::<I>(&guard, W0, &key).unwrap()
    };
    reader.quiescent();
    assert_eq!(held.route().gateway_addr(), Some(gateway.parse().unwrap()));
    assert_eq!(held.route().family, I::VERSION);
    let now = cache.now_ms();
    assert!(held.is_valid(now), "{}: fresh", I::NAME);
    {
        let _idle = reader.offline();
        apply(&mut writer, route);
    }
    assert!(!held.is_valid(now), "{}: {route} is more specific", I::NAME);
}

#[test]
fn held_routes_of_both_families_go_stale_with_their_prefix() {
    a_held_route_goes_stale_with_its_prefix::<Ipv4>(
        "198.51.100.7",
        "10.0.0.2",
        "route add 198.51.100.0/25 via 10.0.0.3",
    );
    a_held_route_goes_stale_with_its_prefix::<Ipv6>(
        "2001:db8:100::7",
        "2001:db8::2",
        "route add 2001:db8:100::/64 via 2001:db8::3",
    );
}

/// One function serves both families' output and input: the same nexthop
/// key for the FIB's answer, the output route in a per-core slot, the
/// input route in the input slot.
fn output_and_input_share_the_nexthop<I: CacheFamily>(dst: &str, peer: &str) {
    let domain = fibre_rcu::Domain::new();
    let cache = RouteCache::new(&domain, dual_stack(), 1);
    let mut reader = domain.register();
    {
        let guard = reader.read();
        let key = I::flow_key(addr::<I>(dst), None);
        let out = cache
            .output::<I>(&guard, fibre_route::SlotKind::PerCore(W0), &key)
            .unwrap();
        let input = cache
            .input::<I>(&guard, DUMMY_IFINDEX, addr::<I>(dst), addr::<I>(peer))
            .unwrap();
        assert!(out.is_cached() && input.is_cached(), "{}", I::NAME);
        assert_eq!(out.flags & flags::INPUT, 0);
        assert_ne!(input.flags & flags::INPUT, 0);
        assert_eq!((out.dev, out.gateway), (input.dev, input.gateway));
        assert_eq!(out.kind(), RouteType::Unicast);
        let fwd = I::lookup_output(&dual_stack(), &key).unwrap();
        let nexthop = NexthopKey::of::<I>(&fwd);
        assert_eq!(nexthop.family, I::VERSION);
        assert_eq!(nexthop.dev, DUMMY_IFINDEX);
        assert_eq!(cache.nexthop_count(), 1, "{}: one nexthop", I::NAME);
    }
    reader.quiescent();
}

#[test]
fn output_and_input_routes_of_both_families_come_from_one_nexthop() {
    output_and_input_share_the_nexthop::<Ipv4>("198.51.100.7", "10.0.0.9");
    output_and_input_share_the_nexthop::<Ipv6>("2001:db8:100::7", "2001:db8::9");
}

/// The rule kept apart (`CacheFamily::received_source`): a received
/// packet with a zero source is a martian to IPv4 (`ip_route_input_slow`:
/// `ipv4_is_zeronet(saddr)`), but for the limited broadcast DHCP sends
/// from 0.0.0.0; to IPv6 it is a packet from `::`, which a DAD probe
/// (RFC 4862) is, and delivered.
#[test]
fn a_zero_source_is_judged_per_family_on_input() {
    let domain = fibre_rcu::Domain::new();
    let cache = RouteCache::new(&domain, dual_stack(), 1);
    let mut reader = domain.register();
    {
        let guard = reader.read();
        let zero4 = Ipv4::UNSPECIFIED;
        let ours4 = addr::<Ipv4>("10.0.0.1");
        assert_eq!(
            cache
                .input::<Ipv4>(&guard, DUMMY_IFINDEX, ours4, zero4)
                .unwrap_err(),
            Errno::Inval
        );
        let dhcp = cache
            .input::<Ipv4>(
                &guard,
                DUMMY_IFINDEX,
                addr::<Ipv4>("255.255.255.255"),
                zero4,
            )
            .unwrap();
        assert_eq!((dhcp.dev, dhcp.kind()), (1, RouteType::Broadcast));
        let ours6 = addr::<Ipv6>("2001:db8::1");
        let dad = cache
            .input::<Ipv6>(&guard, DUMMY_IFINDEX, ours6, Ipv6::UNSPECIFIED)
            .unwrap();
        assert_eq!((dad.dev, dad.kind()), (1, RouteType::Local));
    }
    reader.quiescent();
}
