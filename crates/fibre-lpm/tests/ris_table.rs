//! The full RIS tables (RIPE NCC RIS, AS3333, 2026-05-11) against the
//! reference: random addresses, the edges of many prefixes, then again
//! after replaying the start of the day's update stream.

use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;

use fibre_lpm::{Poptrie, ReferenceLpm};

fn lines(name: &str) -> Vec<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data")
        .join(name);
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .map(|l| l.unwrap())
        .collect()
}

fn parse(text: &str) -> (u32, u8) {
    let (a, l) = text.split_once('/').unwrap();
    (
        u32::from(a.parse::<Ipv4Addr>().unwrap()),
        l.parse().unwrap(),
    )
}

fn next_hop(prefix: u32, len: u8, salt: u32) -> u32 {
    (prefix ^ u32::from(len).rotate_left(27) ^ salt).wrapping_mul(0x9e37_79b1) >> 24
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as u32
    }
}

fn check(fast: &Poptrie<u32, u32>, oracle: &ReferenceLpm<u32, u32>, probes: &[u32]) {
    let mut batch = vec![None; probes.len()];
    fast.lookup_batch(probes, &mut batch);
    for (&a, &b) in probes.iter().zip(&batch) {
        let expected = oracle.lookup(a);
        assert_eq!(fast.lookup(a), expected, "lookup {}", Ipv4Addr::from(a));
        assert_eq!(b, expected, "batched lookup {}", Ipv4Addr::from(a));
    }
}

#[test]
fn full_ris_v4_table_matches_reference() {
    let table: Vec<(u32, u8)> = lines("ris-2026-05-11-as3333-v4.txt.gz")
        .iter()
        .map(|l| parse(l))
        .collect();
    assert!(table.len() > 1_000_000);
    let mut fast = Poptrie::build(table.iter().map(|&(p, l)| (p, l, next_hop(p, l, 0)))).unwrap();
    let mut oracle = ReferenceLpm::new();
    for &(p, l) in &table {
        oracle.insert(p, l, next_hop(p, l, 0)).unwrap();
    }
    assert_eq!(fast.len(), oracle.len());

    let mut rng = Rng(0x5eed);
    let mut probes: Vec<u32> = (0..200_000).map(|_| rng.next()).collect();
    for &(p, l) in table.iter().step_by(50) {
        let last = p | !(u32::MAX.checked_shl(32 - u32::from(l)).unwrap_or(0));
        probes.extend([p, p.wrapping_sub(1), last, last.wrapping_add(1)]);
    }
    check(&fast, &oracle, &probes);

    // The first 150k updates, announcements with a changed next hop so
    // that each one rebuilds part of the arrays.
    let updates = lines("ris-2026-05-11-as3333-v4-updates.txt.gz");
    let mut touched = Vec::new();
    for (seq, line) in updates.iter().take(150_000).enumerate() {
        let (kind, prefix) = line.split_once(' ').unwrap();
        let (p, l) = parse(prefix);
        if kind == "A" {
            let v = next_hop(p, l, seq as u32);
            assert_eq!(fast.insert(p, l, v), oracle.insert(p, l, v));
        } else {
            assert_eq!(fast.remove(p, l), oracle.remove(p, l));
        }
        if seq % 3 == 0 {
            touched.extend([p, p | 0xff, p.wrapping_sub(1)]);
        }
    }
    assert_eq!(fast.len(), oracle.len());
    probes.truncate(100_000);
    probes.extend(touched);
    check(&fast, &oracle, &probes);
}

fn parse6(text: &str) -> (u128, u8) {
    let (a, l) = text.split_once('/').unwrap();
    (
        u128::from(a.parse::<Ipv6Addr>().unwrap()),
        l.parse().unwrap(),
    )
}

fn next_hop6(prefix: u128, len: u8, salt: u32) -> u16 {
    next_hop((prefix >> 96) as u32 ^ (prefix >> 80) as u32, len, salt) as u16
}

#[test]
fn full_ris_v6_table_matches_reference() {
    let table: Vec<(u128, u8)> = lines("ris-2026-05-11-as3333-v6.txt.gz")
        .iter()
        .map(|l| parse6(l))
        .collect();
    let mut fast = Poptrie::build(table.iter().map(|&(p, l)| (p, l, next_hop6(p, l, 0)))).unwrap();
    let mut oracle = ReferenceLpm::new();
    for &(p, l) in &table {
        oracle.insert(p, l, next_hop6(p, l, 0)).unwrap();
    }
    assert_eq!(fast.len(), oracle.len());

    // Addresses inside every 5th prefix, at its edges and at random within.
    let mut rng = Rng(0x6eed);
    let mut probes = Vec::new();
    for &(p, l) in table.iter().step_by(5) {
        let host = !u128::MAX.checked_shl(128 - u32::from(l)).unwrap_or(0);
        let random =
            (u128::from(rng.next()) << 96 | u128::from(rng.next()) << 64) | u128::from(rng.next());
        probes.extend([
            p,
            p | host,
            (p | host).wrapping_add(1),
            p.wrapping_sub(1),
            p | (random & host),
        ]);
    }
    let check6 = |fast: &Poptrie<u128, u16>, oracle: &ReferenceLpm<u128, u16>, probes: &[u128]| {
        let mut batch = vec![None; probes.len()];
        fast.lookup_batch(probes, &mut batch);
        for (&a, &b) in probes.iter().zip(&batch) {
            let expected = oracle.lookup(a);
            assert_eq!(fast.lookup(a), expected, "lookup {}", Ipv6Addr::from(a));
            assert_eq!(b, expected, "batched lookup {}", Ipv6Addr::from(a));
        }
    };
    check6(&fast, &oracle, &probes);

    let updates = lines("ris-2026-05-11-as3333-v6-updates.txt.gz");
    let mut touched = Vec::new();
    for (seq, line) in updates.iter().take(60_000).enumerate() {
        let (kind, prefix) = line.split_once(' ').unwrap();
        let (p, l) = parse6(prefix);
        if kind == "A" {
            let v = next_hop6(p, l, seq as u32);
            assert_eq!(fast.insert(p, l, v), oracle.insert(p, l, v));
        } else {
            assert_eq!(fast.remove(p, l), oracle.remove(p, l));
        }
        if seq % 3 == 0 {
            touched.extend([p, p | 0xffff, p.wrapping_sub(1)]);
        }
    }
    assert_eq!(fast.len(), oracle.len());
    probes.truncate(30_000);
    probes.extend(touched);
    check6(&fast, &oracle, &probes);
}
