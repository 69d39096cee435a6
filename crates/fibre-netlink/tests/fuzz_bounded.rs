//! The parser and translator on hostile bytes, for a bounded time on
//! stable: real-shaped seeds (each message type a follower reads), then
//! random mutations of them (byte changes, cuts, insertions, seeds
//! spliced together). Every input must be parsed or refused with an error,
//! never a panic, and the commands it translates to must be applied or
//! refused by a FIB, never a panic.
//!
//! Settings: `FIBRE_FUZZ_SECONDS` (2), `FIBRE_FUZZ_SEED` (from the clock,
//! printed). A failure prints the input as hex.

use std::time::{Duration, Instant};

use fibre_fib::Fib;
use fibre_netlink::message::{self, *};
use fibre_netlink::wire::{messages, Builder, NLM_F_CREATE, NLM_F_EXCL};
use fibre_netlink::{Origin, Translator};
use fibre_testkit::SplitMix64 as Rng;

fn ifinfo(index: i32, flags: u32) -> [u8; 16] {
    let mut h = [0u8; 16];
    h[4..8].copy_from_slice(&index.to_ne_bytes());
    h[8..12].copy_from_slice(&flags.to_ne_bytes());
    h
}

fn link(index: i32, name: &str, kind: &str) -> Vec<u8> {
    let mut b = Builder::new(RTM_NEWLINK, 0, 0);
    b.header(&ifinfo(index, IFF_UP | IFF_RUNNING))
        .attr(3, format!("{name}\0").as_bytes())
        .attr_u32(4, 1500)
        .nest(18)
        .attr(1, format!("{kind}\0").as_bytes())
        .end_nest();
    b.finish()
}

fn addr(family: u8, index: u32, local: &[u8], len: u8) -> Vec<u8> {
    let mut b = Builder::new(RTM_NEWADDR, 0, 0);
    let mut h = [family, len, 0, 0, 0, 0, 0, 0];
    h[4..8].copy_from_slice(&index.to_ne_bytes());
    b.header(&h).attr(1, local).attr(2, local).attr_u32(8, 0);
    b.finish()
}

fn rtmsg(family: u8, dst_len: u8) -> [u8; 12] {
    // table main, proto boot, scope universe, unicast.
    [family, dst_len, 0, 0, 254, 3, 0, 1, 0, 0, 0, 0]
}

fn route_v4() -> Vec<u8> {
    let mut b = Builder::new(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, 0);
    b.header(&rtmsg(AF_INET, 16))
        .attr(1, &[10, 9, 0, 0])
        .attr(5, &[10, 0, 0, 2])
        .attr_u32(4, 2)
        .attr_u32(15, 254)
        .nest(8)
        .attr_u32(2, 1400)
        .end_nest();
    b.finish()
}

fn route_multipath_v4() -> Vec<u8> {
    let mut b = Builder::new(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, 0);
    b.header(&rtmsg(AF_INET, 16)).attr(1, &[10, 13, 0, 0]);
    let mut paths = Vec::new();
    for (gw, oif, hops) in [([10u8, 0, 0, 2], 2u32, 1u8), ([10, 1, 0, 2], 3, 0)] {
        paths.extend_from_slice(&16u16.to_ne_bytes());
        paths.push(0);
        paths.push(hops);
        paths.extend_from_slice(&oif.to_ne_bytes());
        paths.extend_from_slice(&8u16.to_ne_bytes());
        paths.extend_from_slice(&5u16.to_ne_bytes());
        paths.extend_from_slice(&gw);
    }
    b.attr(9, &paths);
    b.finish()
}

fn route_v6_via() -> Vec<u8> {
    let mut b = Builder::new(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, 0);
    let mut dst = [0u8; 16];
    dst[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    let mut via = vec![AF_INET6, 0];
    let mut gw = dst;
    gw[15] = 2;
    via.extend_from_slice(&gw);
    b.header(&rtmsg(AF_INET6, 32))
        .attr(1, &dst)
        .attr(18, &via)
        .attr_u32(4, 2)
        .attr_u32(6, 1024);
    b.finish()
}

fn route_nhid() -> Vec<u8> {
    let mut b = Builder::new(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, 0);
    b.header(&rtmsg(AF_INET, 16))
        .attr(1, &[10, 30, 0, 0])
        .attr_u32(30, 10);
    b.finish()
}

fn rule() -> Vec<u8> {
    let mut b = Builder::new(RTM_NEWRULE, 0, 0);
    b.header(&[AF_INET, 0, 24, 0, 100, 0, 0, 1, 0, 0, 0, 0])
        .attr(2, &[10, 0, 0, 0])
        .attr_u32(6, 100)
        .attr_u32(15, 100)
        .attr_u32(10, 0x10)
        .attr_u32(16, 0xff)
        .attr(3, b"v0\0")
        .attr(20, &[0, 0, 0, 0, 9, 0, 0, 0]);
    b.finish()
}

fn neigh() -> Vec<u8> {
    let mut b = Builder::new(RTM_NEWNEIGH, 0, 0);
    let mut h = [AF_INET, 0, 0, 0, 2, 0, 0, 0, 0x80, 0, 0, 0];
    h[4..8].copy_from_slice(&2u32.to_ne_bytes());
    b.header(&h)
        .attr(1, &[10, 0, 0, 7])
        .attr(2, &[2, 0, 0, 0, 0, 7]);
    b.finish()
}

fn nexthop(id: u32, oif: Option<u32>, gw: Option<[u8; 4]>, group: &[(u32, u8)]) -> Vec<u8> {
    let mut b = Builder::new(RTM_NEWNEXTHOP, 0, 0);
    b.header(&[AF_INET, 0, 3, 0, 0, 0, 0, 0]).attr_u32(1, id);
    if let Some(oif) = oif {
        b.attr_u32(5, oif);
    }
    if let Some(gw) = gw {
        b.attr(6, &gw);
    }
    if !group.is_empty() {
        let mut g = Vec::new();
        for (member, weight) in group {
            g.extend_from_slice(&member.to_ne_bytes());
            g.extend_from_slice(&[*weight, 0, 0, 0]);
        }
        b.attr(2, &g);
    }
    b.finish()
}

fn del_nexthop(id: u32) -> Vec<u8> {
    let mut b = Builder::new(RTM_DELNEXTHOP, 0, 0);
    b.header(&[AF_INET, 0, 3, 0, 0, 0, 0, 0]).attr_u32(1, id);
    b.finish()
}

/// One namespace's worth of messages, in the order a follower meets them.
fn seeds() -> Vec<Vec<u8>> {
    let setup = [
        link(1, "lo", "lo"),
        link(2, "v0", "veth"),
        link(3, "v1", "veth"),
        addr(AF_INET, 2, &[10, 0, 0, 1], 24),
        addr(AF_INET, 3, &[10, 1, 0, 1], 24),
    ]
    .concat();
    let mut v6 = [0u8; 16];
    v6[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    v6[15] = 1;
    let objects = [
        nexthop(1, Some(3), Some([10, 1, 0, 2]), &[]),
        nexthop(2, Some(3), Some([10, 1, 0, 3]), &[]),
        nexthop(10, None, None, &[(1, 0), (2, 4)]),
        route_nhid(),
        del_nexthop(2),
        del_nexthop(1),
    ]
    .concat();
    vec![
        [setup.clone(), route_v4(), route_multipath_v4()].concat(),
        [setup.clone(), addr(AF_INET6, 2, &v6, 64), route_v6_via()].concat(),
        [setup.clone(), rule(), neigh()].concat(),
        [setup, objects].concat(),
    ]
}

/// Parses, translates and applies everything in `input`; never panics.
fn check(input: &[u8]) -> usize {
    let mut translator = Translator::new();
    let mut fib = Fib::following_kernel();
    let mut commands = Vec::new();
    let mut parsed = 0;
    for raw in messages(input) {
        let Ok(raw) = raw else { break };
        let Ok(message) = message::parse(&raw) else {
            continue;
        };
        parsed += 1;
        commands.clear();
        translator.translate(&message, Origin::Notification(raw.flags), &mut commands);
        for command in &commands {
            let _ = fib.apply(command);
        }
    }
    parsed
}

#[test]
fn the_seeds_parse_whole_and_build_the_state_they_describe() {
    let seeds = seeds();
    for (i, seed) in seeds.iter().enumerate() {
        let count = messages(seed).count();
        assert_eq!(check(seed), count, "seed {i}: every message parses");
    }
    // The nexthop seed: the route over group 10 went with its last member.
    let mut translator = Translator::new();
    let mut fib = Fib::following_kernel();
    let mut commands = Vec::new();
    for raw in messages(&seeds[3]) {
        let raw = raw.unwrap();
        translator.translate(
            &message::parse(&raw).unwrap(),
            Origin::Notification(raw.flags),
            &mut commands,
        );
    }
    for command in &commands {
        fib.apply(command)
            .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    }
    let prefix = fibre_fib::Prefix::new("10.30.0.0".parse().unwrap(), 16).unwrap();
    let routes = fib.routes(fibre_fib::Family::V4, Some(fibre_fib::TABLE_MAIN));
    assert!(
        routes.iter().all(|r| r.dst != prefix),
        "10.30.0.0/16 left with its nexthops"
    );
    assert!(translator.nexthops().is_empty());
    // The multipath seed: two paths, weights 2 and 1.
    let mut translator = Translator::new();
    commands.clear();
    for raw in messages(&seeds[0]) {
        let raw = raw.unwrap();
        translator.translate(&message::parse(&raw).unwrap(), Origin::Dump, &mut commands);
    }
    let mut fib = Fib::following_kernel();
    for command in &commands {
        fib.apply(command)
            .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    }
    let prefix = fibre_fib::Prefix::new("10.13.0.0".parse().unwrap(), 16).unwrap();
    let routes = fib.routes(fibre_fib::Family::V4, Some(fibre_fib::TABLE_MAIN));
    let multipath = routes
        .iter()
        .find(|r| r.dst == prefix)
        .expect("the multipath route");
    let weights: Vec<u16> = multipath.nexthops.iter().map(|n| n.weight).collect();
    assert_eq!(weights, [2, 1]);
}

fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>, other: &[u8]) {
    match rng.below(5) {
        0 | 1 => {
            for _ in 0..=rng.below(8) {
                let at = rng.below(bytes.len());
                if let Some(b) = bytes.get_mut(at) {
                    *b = rng.next() as u8;
                }
            }
        }
        2 => {
            let at = rng.below(bytes.len());
            bytes.truncate(at);
        }
        3 => {
            let at = rng.below(bytes.len() + 1);
            let fill: Vec<u8> = (0..rng.below(16) + 1).map(|_| rng.next() as u8).collect();
            bytes.splice(at..at, fill);
        }
        _ => {
            let at = rng.below(bytes.len() + 1);
            let from = rng.below(other.len());
            let to = (from + rng.below(64) + 1).min(other.len());
            bytes.splice(at..at, other[from..to].iter().copied());
        }
    }
}

#[test]
fn mutated_messages_are_refused_or_applied_never_a_panic() {
    let seconds = fibre_testkit::env_number("FIBRE_FUZZ_SECONDS", 2);
    let seed = match std::env::var("FIBRE_FUZZ_SEED") {
        Ok(s) => s.trim().parse().expect("FIBRE_FUZZ_SEED is a number"),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
    };
    eprintln!("FIBRE_FUZZ_SEED={seed}");
    let mut rng = Rng(seed);
    let seeds = seeds();
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut runs = 0u64;
    while Instant::now() < deadline || runs < 100 {
        let mut input = seeds[rng.below(seeds.len())].clone();
        let other = &seeds[rng.below(seeds.len())];
        for _ in 0..=rng.below(4) {
            mutate(&mut rng, &mut input, other);
        }
        let hex: String = input.iter().map(|b| format!("{b:02x}")).collect();
        let outcome = std::panic::catch_unwind(|| check(&input));
        assert!(outcome.is_ok(), "panicked on input {hex}");
        runs += 1;
    }
    eprintln!("{runs} mutated inputs");
}
