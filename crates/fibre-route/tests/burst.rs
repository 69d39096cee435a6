//! The route cache's bursts (`RouteCache::output_burst`,
//! `RouteCache::input_burst`) answer as the per-key calls do, key for key:
//! both families, misses (first use), hits, uncached answers (a flow that
//! names its source), errnos (unreachable, prohibit, no route, martians,
//! no such link), path MTU exceptions, and after invalidations; bursts of
//! 1 to 300 keys cross the FIB's chunk boundaries. And a burst allocates
//! nothing on hits, counted by a global allocator wrapper on this thread.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use fibre_base::{Clock, Ipv4, Ipv6, WorkerId};
use fibre_fib::{config, Errno, Fib, FlowKeyV4, FlowKeyV6};
use fibre_rcu::{Domain, ReadGuard};
use fibre_route::exceptions::ExceptionConfig;
use fibre_route::family::CacheFamily;
use fibre_route::route::RouteData;
use fibre_route::{RouteCache, RouteHandle, SlotKind};
use fibre_testkit::CountingAllocator;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const CONFIG: &str = "link set lo up
link add d0 type ifb
link set d0 up
link add d1 type ifb
link set d1 up
addr add 10.0.0.1/24 dev d0
addr add 10.1.0.1/24 dev d1
addr add 2001:db8::1/64 dev d0
addr add 2001:db8:1::1/64 dev d1
route add 192.0.2.0/24 via 10.0.0.9
route add 198.51.100.0/24 via 10.1.0.9 mtu 1400
route add unreachable 192.0.2.128/25
route add prohibit 203.0.113.0/24
route add 2001:db8:f::/48 via 2001:db8::9
route add 2001:db8:e::/48 via 2001:db8:1::9 mtu 1400
route add unreachable 2001:db8:d::/48
";

fn fib() -> Fib {
    config::apply_str(&Fib::new(), "burst.conf", CONFIG, false)
        .unwrap()
        .0
}

/// A cache over the test FIB with a clock that stands still, so that two
/// caches given the same calls hold the same exceptions.
fn cache(domain: &Domain) -> RouteCache<Fib> {
    RouteCache::with_options(
        domain,
        fib(),
        2,
        ExceptionConfig::default(),
        Clock::manual().0,
    )
}

/// What a caller can see of an answer: the route's line and whether it is
/// borrowed from a slot.
/// (`Errno::Srch`, which the cache never answers, marks a slot unwritten.)
fn seen(answer: &Result<RouteHandle<'_>, Errno>) -> Result<(RouteData, bool), Errno> {
    answer
        .as_ref()
        .map(|r| (*r.data(), r.is_cached()))
        .map_err(|e| *e)
}

/// IPv4 flows: gateways of two nexthops (one with an MTU), on link, our
/// own address, broadcast, unreachable, prohibit, no route, and some that
/// name their source or output device.
fn keys_v4(n: usize) -> Vec<FlowKeyV4> {
    let dsts: [[u8; 4]; 9] = [
        [192, 0, 2, 7],
        [198, 51, 100, 3],
        [10, 0, 0, 5],
        [10, 0, 0, 1],
        [10, 0, 0, 255],
        [192, 0, 2, 200],
        [203, 0, 113, 1],
        [100, 64, 0, 1],
        [10, 1, 0, 7],
    ];
    (0..n)
        .map(|i| {
            let d = dsts[i % dsts.len()];
            let mut key = FlowKeyV4 {
                dst: u32::from_be_bytes([d[0], d[1], d[2], d[3].wrapping_add((i / 9) as u8 % 3)]),
                ..Default::default()
            };
            match i % 7 {
                3 => key.src = u32::from(Ipv4Addr::new(10, 0, 0, 1)),
                5 => key.oif = 3,
                _ => {}
            }
            key
        })
        .collect()
}

/// IPv6 flows, as [`keys_v4`].
fn keys_v6(n: usize) -> Vec<FlowKeyV6> {
    let dsts = [
        "2001:db8:f::7",
        "2001:db8:e::3",
        "2001:db8::5",
        "2001:db8::1",
        "2001:db8:d::1",
        "3fff::1",
        "2001:db8:1::7",
    ];
    (0..n)
        .map(|i| {
            let d: Ipv6Addr = dsts[i % dsts.len()].parse().unwrap();
            let mut key = FlowKeyV6 {
                dst: u128::from(d) + (i / 7 % 3) as u128,
                ..Default::default()
            };
            match i % 5 {
                2 => key.src = u128::from("2001:db8::1".parse::<Ipv6Addr>().unwrap()),
                4 => key.oif = 3,
                _ => {}
            }
            key
        })
        .collect()
}

/// How [`answers`] asks the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asked {
    /// `output` / `input_flow`, one key at a time.
    PerKey,
    /// `output_burst` / `input_burst`, all keys at once.
    Burst,
}

/// The answers for `keys` from `slot` (the input slot: received on `iif`),
/// asked as `asked` says.
fn answers<'a, I: CacheFamily>(
    cache: &'a RouteCache<Fib>,
    guard: &'a ReadGuard<'_>,
    (slot, iif): (SlotKind, u32),
    keys: &[I::FlowKey],
    asked: Asked,
) -> Vec<Result<(RouteData, bool), Errno>> {
    if asked == Asked::PerKey {
        return keys
            .iter()
            .map(|key| match slot {
                SlotKind::Input => seen(&cache.input_flow::<I>(guard, iif, key)),
                _ => seen(&cache.output::<I>(guard, slot, key)),
            })
            .collect();
    }
    let mut out: Vec<Result<RouteHandle<'_>, Errno>> =
        (0..keys.len()).map(|_| Err(Errno::Srch)).collect();
    match slot {
        SlotKind::Input => cache.input_burst::<I>(guard, iif, keys, &mut out),
        _ => cache.output_burst::<I>(guard, slot, keys, &mut out),
    }
    .unwrap();
    out.iter().map(seen).collect()
}

/// Runs the same calls on two caches, one per key and one in bursts, and
/// on the burst's cache per key again: misses, hits, an exception, an
/// invalidation. Counts the kinds of answers into `seen_kinds`.
fn same_answers<I: CacheFamily>(
    keys: &[I::FlowKey],
    slot: SlotKind,
    iif: u32,
    pmtu_dst: IpAddr,
    seen_kinds: &mut AnswerKinds,
) {
    let domain = Domain::new();
    let (one, many) = (cache(&domain), cache(&domain));
    let reader = domain.register();
    let guard = reader.read();
    for round in 0..4 {
        match round {
            2 => {
                for c in [&one, &many] {
                    c.update_pmtu(&guard, pmtu_dst, 1280);
                }
            }
            3 => {
                for c in [&one, &many] {
                    c.flush();
                }
            }
            _ => {}
        }
        let expected = answers::<I>(&one, &guard, (slot, iif), keys, Asked::PerKey);
        let got = answers::<I>(&many, &guard, (slot, iif), keys, Asked::Burst);
        for (i, (e, g)) in expected.iter().zip(&got).enumerate() {
            assert_eq!(e, g, "round {round}, key {i}: {:?}", keys[i]);
        }
        // The burst's cache answers the same per key (hits now).
        let again = answers::<I>(&many, &guard, (slot, iif), keys, Asked::PerKey);
        assert_eq!(again, got);
        for answer in &got {
            match answer {
                Err(_) => seen_kinds.errnos += 1,
                Ok((_, true)) => seen_kinds.cached += 1,
                Ok((_, false)) => seen_kinds.held += 1,
            }
        }
    }
}

/// How many answers of each kind a sweep compared: each must be met, or
/// the comparison proves less than it claims.
#[derive(Debug, Default)]
struct AnswerKinds {
    errnos: usize,
    cached: usize,
    held: usize,
}

impl AnswerKinds {
    fn assert_all_met(&self) {
        assert!(
            self.errnos > 0 && self.cached > 0 && self.held > 0,
            "{self:?}"
        );
    }
}

#[test]
fn output_bursts_answer_as_per_key_output() {
    let worker = SlotKind::PerCore(WorkerId::new(1));
    let (mut v4, mut v6) = (AnswerKinds::default(), AnswerKinds::default());
    for n in [1, 9, 95, 96, 97, 300] {
        let pmtu_v4 = "192.0.2.7".parse().unwrap();
        same_answers::<Ipv4>(&keys_v4(n), worker, 0, pmtu_v4, &mut v4);
        let pmtu_v6 = "2001:db8:f::7".parse().unwrap();
        same_answers::<Ipv6>(&keys_v6(n), worker, 0, pmtu_v6, &mut v6);
    }
    v4.assert_all_met();
    v6.assert_all_met();
}

#[test]
fn input_bursts_answer_as_per_key_input() {
    let (mut v4, mut v6) = (AnswerKinds::default(), AnswerKinds::default());
    for n in [1, 9, 97, 300] {
        // Received on d0 from a neighbour, from ourselves (martians), and
        // on a link that does not exist.
        for (src, iif) in [([10, 0, 0, 9], 2), ([10, 0, 0, 1], 2), ([10, 0, 0, 9], 99)] {
            let mut keys = keys_v4(n);
            keys.iter_mut()
                .for_each(|k| k.src = u32::from(Ipv4Addr::from(src)));
            let pmtu = "192.0.2.7".parse().unwrap();
            same_answers::<Ipv4>(&keys, SlotKind::Input, iif, pmtu, &mut v4);
        }
        let mut keys = keys_v6(n);
        let neighbour: Ipv6Addr = "2001:db8::9".parse().unwrap();
        keys.iter_mut().for_each(|k| k.src = u128::from(neighbour));
        let pmtu = "2001:db8:f::7".parse().unwrap();
        same_answers::<Ipv6>(&keys, SlotKind::Input, 2, pmtu, &mut v6);
    }
    v4.assert_all_met();
    v6.assert_all_met();
}

#[test]
fn a_burst_refuses_the_input_slot_and_slices_of_two_lengths() {
    let domain = Domain::new();
    let cache = cache(&domain);
    let reader = domain.register();
    let guard = reader.read();
    let keys = keys_v4(3);
    let mut out: Vec<Result<RouteHandle<'_>, Errno>> = vec![Err(Errno::Srch), Err(Errno::Srch)];
    let worker = SlotKind::PerCore(WorkerId::new(0));
    assert_eq!(
        cache.output_burst::<Ipv4>(&guard, worker, &keys, &mut out),
        Err(Errno::Inval)
    );
    assert_eq!(
        cache.input_burst::<Ipv4>(&guard, 2, &keys, &mut out),
        Err(Errno::Inval)
    );
    let mut out: Vec<_> = (0..3).map(|_| Err(Errno::Srch)).collect();
    assert_eq!(
        cache.output_burst::<Ipv4>(&guard, SlotKind::Input, &keys, &mut out),
        Err(Errno::Inval)
    );
    // Refused: nothing written.
    assert!(out.iter().all(|a| matches!(a, Err(Errno::Srch))));
}

/// Cached destinations only (no flow naming its source, no exception: those
/// answers are held copies, allocated as per key).
fn cached_keys_v4(n: usize) -> Vec<FlowKeyV4> {
    (0..n)
        .map(|i| FlowKeyV4 {
            dst: u32::from(if i % 2 == 0 {
                Ipv4Addr::new(192, 0, 2, (i % 100) as u8 + 1)
            } else {
                Ipv4Addr::new(198, 51, 100, (i % 100) as u8 + 1)
            }),
            ..Default::default()
        })
        .collect()
}

#[test]
fn bursts_of_hits_allocate_nothing() {
    let domain = Domain::new();
    let cache = cache(&domain);
    let reader = domain.register();
    let guard = reader.read();
    let worker = SlotKind::PerCore(WorkerId::new(0));
    let v4 = cached_keys_v4(300);
    let v6: Vec<FlowKeyV6> = (0..300u128)
        .map(|i| FlowKeyV6 {
            dst: u128::from("2001:db8:f::".parse::<Ipv6Addr>().unwrap()) + i,
            ..Default::default()
        })
        .collect();
    let mut out: Vec<Result<RouteHandle<'_>, Errno>> = (0..300).map(|_| Err(Errno::Srch)).collect();
    let mut input: Vec<FlowKeyV4> = v4.clone();
    input
        .iter_mut()
        .for_each(|k| k.src = u32::from(Ipv4Addr::new(10, 0, 0, 9)));
    // Fill the slots and the nexthop map first.
    cache
        .output_burst::<Ipv4>(&guard, worker, &v4, &mut out)
        .unwrap();
    cache
        .output_burst::<Ipv6>(&guard, worker, &v6, &mut out)
        .unwrap();
    cache
        .input_burst::<Ipv4>(&guard, 2, &input, &mut out)
        .unwrap();
    for n in [1, 96, 97, 300] {
        let before = CountingAllocator::allocations();
        cache
            .output_burst::<Ipv4>(&guard, worker, &v4[..n], &mut out[..n])
            .unwrap();
        cache
            .output_burst::<Ipv6>(&guard, worker, &v6[..n], &mut out[..n])
            .unwrap();
        cache
            .input_burst::<Ipv4>(&guard, 2, &input[..n], &mut out[..n])
            .unwrap();
        assert_eq!(CountingAllocator::allocations(), before, "burst of {n}");
        assert!(out[..n]
            .iter()
            .all(|r| r.as_ref().is_ok_and(|r| r.is_cached())));
    }
}
