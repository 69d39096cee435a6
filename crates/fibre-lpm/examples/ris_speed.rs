//! Build time, memory, lookup rate and update rate of the Poptrie engine on
//! the real RIS tables (RIPE NCC RIS, AS3333 view of 2026-05-11).
//!
//! `cargo run --release -p fibre-lpm --example ris_speed [-- GATEWAYS [lookups]]`
//! (`lookups`: skip the update replays).
//!
//! Values are next-hop ids: each prefix hashed onto GATEWAYS gateways
//! (default 64; the task's range is 16..256).

use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;
use std::time::Instant;

use fibre_lpm::{Key, Poptrie, Value};

fn data_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data")
        .join(name)
}

fn read_lines(name: &str) -> Vec<String> {
    let file = std::fs::File::open(data_file(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .map(|l| l.expect("readable gzip text"))
        .filter(|l| !l.trim().is_empty())
        .collect()
}

trait Family: Key {
    fn parse(text: &str) -> (Self, u8);
}

impl Family for u32 {
    fn parse(text: &str) -> (Self, u8) {
        let (a, l) = text.split_once('/').expect("PREFIX/LEN");
        (
            u32::from(a.parse::<Ipv4Addr>().expect("IPv4")),
            l.parse().expect("length"),
        )
    }
}

impl Family for u128 {
    fn parse(text: &str) -> (Self, u8) {
        let (a, l) = text.split_once('/').expect("PREFIX/LEN");
        (
            u128::from(a.parse::<Ipv6Addr>().expect("IPv6")),
            l.parse().expect("length"),
        )
    }
}

/// A well-mixed 64-bit hash (splitmix64 finaliser).
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn gateway<K: Key>(prefix: K, len: u8, salt: u64, gateways: u64) -> u64 {
    let x = prefix.to_u128();
    mix((x as u64) ^ mix((x >> 64) as u64 ^ u64::from(len) ^ salt.rotate_left(17))) % gateways
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }
}

fn rate(count: usize, secs: f64) -> String {
    format!("{:.1} M/s", count as f64 / secs / 1e6)
}

/// Seconds this thread has run on a CPU (Linux `schedstat`), so that rates
/// on a shared machine are not diluted by time spent waiting to be scheduled.
fn cpu_secs() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |ns| ns / 1e9)
}

/// Wall and on-CPU seconds of `f`.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let (wall, cpu) = (Instant::now(), cpu_secs());
    let out = f();
    (out, wall.elapsed().as_secs_f64(), cpu_secs() - cpu)
}

/// Times `rounds` passes of single and batched lookups over `addrs`.
fn lookup_rates<K: Key, V: Value>(t: &Poptrie<K, V>, addrs: &[K], rounds: usize) {
    let mut sink = 0usize;
    let (_, single, single_cpu) = timed(|| {
        for _ in 0..rounds {
            for &a in addrs {
                sink = sink.wrapping_add(t.lookup(a).is_some() as usize);
            }
        }
    });
    let mut out = [None; 4096];
    let (_, batched, batched_cpu) = timed(|| {
        for _ in 0..rounds {
            for chunk in addrs.chunks(4096) {
                let out = &mut out[..chunk.len()];
                t.lookup_batch(chunk, out);
                sink = sink.wrapping_add(out.iter().filter(|o| o.is_some()).count());
            }
        }
    });
    let total = addrs.len() * rounds;
    println!(
        "  lookups: single {} ({} on-CPU), batched {} ({} on-CPU); {} lookups, {:.1}% matched",
        rate(total, single),
        rate(total, single_cpu),
        rate(total, batched),
        rate(total, batched_cpu),
        total,
        sink as f64 / (2 * total) as f64 * 100.0
    );
    // The batch must agree with single lookups.
    for chunk in addrs.chunks(4096).take(64) {
        let out = &mut out[..chunk.len()];
        t.lookup_batch(chunk, out);
        for (&a, &o) in chunk.iter().zip(out.iter()) {
            assert_eq!(t.lookup(a), o, "batch and single disagree on {a:?}");
        }
    }
}

/// Replays the update stream on a clone of `t`; `salt_per_update` gives
/// every announcement a fresh next hop (so none is a no-op).
fn replay<K: Family, V: Value + TryFrom<u64>>(
    t: &Poptrie<K, V>,
    updates: &[(bool, K, u8)],
    gateways: u64,
    salt_per_update: bool,
) {
    let mut t = t.clone();
    let before = t.stats();
    let (_, secs, cpu) = timed(|| {
        for (seq, &(announce, prefix, len)) in updates.iter().enumerate() {
            if announce {
                let salt = if salt_per_update { seq as u64 } else { 0 };
                let value = V::try_from(gateway(prefix, len, salt, gateways))
                    .ok()
                    .expect("fits");
                t.insert(prefix, len, value).expect("valid prefix");
            } else {
                t.remove(prefix, len).expect("valid prefix");
            }
        }
    });
    let after = t.stats();
    println!(
        "  replay ({}): {} updates in {:.3} s = {} ({} on-CPU); {} prefixes after; node slots {} -> {} ({} free), leaf slots {} -> {} ({} free), {:.2} B/prefix",
        if salt_per_update { "new next hop on every announce" } else { "stable next hops" },
        updates.len(),
        secs,
        rate(updates.len(), secs),
        rate(updates.len(), cpu),
        t.len(),
        before.node_slots,
        after.node_slots,
        after.free_node_slots,
        before.leaf_slots,
        after.leaf_slots,
        after.free_leaf_slots,
        t.lookup_bytes() as f64 / t.len() as f64
    );
}

fn run<K: Family>(
    name: &str,
    table: &str,
    updates: &str,
    gateways: u64,
    addrs: impl Fn(&[(K, u8)], &mut Rng) -> K,
) {
    let prefixes: Vec<(K, u8)> = read_lines(table).iter().map(|l| K::parse(l)).collect();
    let updates: Vec<(bool, K, u8)> = read_lines(updates)
        .iter()
        .map(|l| {
            let (kind, p) = l.split_once(' ').expect("KIND PREFIX");
            let (k, len) = K::parse(p);
            (kind == "A", k, len)
        })
        .collect();
    println!(
        "{name}: {} prefixes, {} updates, {gateways} gateways",
        prefixes.len(),
        updates.len()
    );

    let (t16, build, build_cpu) = timed(|| {
        Poptrie::<K, u16>::build(
            prefixes
                .iter()
                .map(|&(p, l)| (p, l, gateway(p, l, 0, gateways) as u16)),
        )
        .expect("valid table")
    });
    let s = t16.stats();
    println!(
        "  u16 values: build {:.3} s ({:.3} s on-CPU), lookup arrays {} bytes = {:.2} B/prefix (dir {}, nodes {}, leaves {})",
        build,
        build_cpu,
        t16.lookup_bytes(),
        t16.lookup_bytes() as f64 / prefixes.len() as f64,
        s.direct_entries,
        s.node_slots,
        s.leaf_slots
    );
    let (t32, build32, _) = timed(|| {
        Poptrie::<K, u32>::build(
            prefixes
                .iter()
                .map(|&(p, l)| (p, l, gateway(p, l, 0, gateways) as u32)),
        )
        .expect("valid table")
    });
    println!(
        "  u32 values: build {:.3} s, lookup arrays {} bytes = {:.2} B/prefix",
        build32,
        t32.lookup_bytes(),
        t32.lookup_bytes() as f64 / prefixes.len() as f64
    );
    let unique = Poptrie::<K, u32>::build(
        prefixes
            .iter()
            .enumerate()
            .map(|(i, &(p, l))| (p, l, i as u32)),
    )
    .expect("valid table");
    println!(
        "  u32 values unique per prefix (route ids): {:.2} B/prefix",
        unique.lookup_bytes() as f64 / prefixes.len() as f64
    );

    let mut rng = Rng(42);
    let addrs: Vec<K> = (0..1 << 22).map(|_| addrs(&prefixes, &mut rng)).collect();
    lookup_rates(&t16, &addrs, 4);

    if std::env::args().nth(2).as_deref() != Some("lookups") {
        replay(&t16, &updates, gateways, false);
        replay(&t16, &updates, gateways, true);
        clone_costs(&t16, &updates, gateways);
        short_prefix_updates(&t16);
    }
}

/// What publishing by clone costs the writer: one clone of the full table
/// (the median of 9), one insert right after a clone (it copies the chunks
/// it writes), and the update replay with a clone taken ("published") every
/// 1,024 updates and the one before it dropped, as a FIB publishing per
/// batch would.
fn clone_costs<K: Family, V: Value + TryFrom<u64>>(
    t: &Poptrie<K, V>,
    updates: &[(bool, K, u8)],
    gateways: u64,
) {
    let mut clones: Vec<f64> = (0..9)
        .map(|_| timed(|| std::hint::black_box(t.clone())).1)
        .collect();
    clones.sort_by(f64::total_cmp);
    let mut work = t.clone();
    let _published = work.clone();
    let (prefix, len) = updates
        .iter()
        .find(|u| u.0)
        .map_or((K::from_u128(0), 0), |u| (u.1, u.2));
    let value = V::try_from(1).ok().expect("fits");
    let (_, first_insert, _) = timed(|| work.insert(prefix, len, value).expect("valid"));

    let mut work = t.clone();
    let mut published = work.clone();
    let (_, secs, cpu) = timed(|| {
        for (seq, &(announce, prefix, len)) in updates.iter().enumerate() {
            if seq % 1024 == 0 {
                published = work.clone();
            }
            if announce {
                let value = V::try_from(gateway(prefix, len, 0, gateways))
                    .ok()
                    .expect("fits");
                work.insert(prefix, len, value).expect("valid prefix");
            } else {
                work.remove(prefix, len).expect("valid prefix");
            }
        }
    });
    std::hint::black_box(&published);
    println!(
        "  clones: one clone {:.1} us (median of 9), first insert after a clone {:.1} us; replay with a clone every 1,024 updates: {} ({} on-CPU)",
        clones[4] * 1e6,
        first_insert * 1e6,
        rate(updates.len(), secs),
        rate(updates.len(), cpu),
    );
}

/// The worst updates: a default route, and a /8, added and withdrawn on the
/// full table (each touches every direct-pointing slot below it).
fn short_prefix_updates<K: Family>(t: &Poptrie<K, u16>) {
    let mut t = t.clone();
    let eight = K::from_u128(0x0a << (u32::from(K::BITS) - 8));
    let mut report = Vec::new();
    for (what, prefix, len) in [("default route", K::from_u128(0), 0u8), ("/8", eight, 8)] {
        let (_, add, _) = timed(|| t.insert(prefix, len, 7).expect("valid"));
        let (_, del, _) = timed(|| t.remove(prefix, len).expect("valid"));
        report.push(format!(
            "{what}: add {:.1} ms, withdraw {:.1} ms",
            add * 1e3,
            del * 1e3
        ));
    }
    println!("  short prefixes on the full table: {}", report.join("; "));
}

fn main() {
    let gateways: u64 = std::env::args()
        .nth(1)
        .map_or(64, |g| g.parse().expect("GATEWAYS"));
    println!("RIPE NCC RIS data, AS3333 view of 2026-05-11");
    run::<u32>(
        "IPv4 (uniformly random addresses)",
        "ris-2026-05-11-as3333-v4.txt.gz",
        "ris-2026-05-11-as3333-v4-updates.txt.gz",
        gateways,
        |_, rng| rng.next() as u32,
    );
    run::<u128>(
        "IPv6 (addresses inside random table prefixes)",
        "ris-2026-05-11-as3333-v6.txt.gz",
        "ris-2026-05-11-as3333-v6-updates.txt.gz",
        gateways,
        |prefixes, rng| {
            let (p, l) = prefixes[(rng.next() % prefixes.len() as u64) as usize];
            let host =
                (u128::from(rng.next()) << 64 | u128::from(rng.next())) & !u128::prefix_mask(l);
            p | host
        },
    );
}
