//! Microbenchmarks of one lookup pass on the RIS IPv4 table (RIPE NCC RIS),
//! fibre and the peer crates side by side: `cargo bench -p fibre-bench`.
//! `fibre bench lookup` is the full experiment; this is the quick loop for
//! working on the engine, with divan's statistics.

use std::hint::black_box;
use std::sync::LazyLock;

use divan::counter::ItemsCount;
use divan::Bencher;
use fibre_bench::data::{self, Prefix};
use fibre_bench::engines::{
    Engine, FibreEngine, PoptrieCrateEngine, PrefixTrieEngine, TreeBitmapEngine,
};
use fibre_bench::nexthop::{next_hop_for, NextHop};
use fibre_bench::progress::Progress;
use fibre_bench::queries;

/// Addresses per pass: uniformly random IPv4 addresses.
const QUERIES: usize = 1 << 16;
/// Addresses per `lookup_batch` call, as in `fibre bench lookup`.
const BURST: usize = 256;

struct Table {
    prefixes: Vec<Prefix<u32>>,
    next_hops: Vec<NextHop>,
    queries: Vec<u32>,
}

static TABLE: LazyLock<Table> = LazyLock::new(|| {
    let dir = data::resolve_data_dir(None).unwrap_or_else(|e| panic!("{e}"));
    let prefixes = data::load_table::<u32>(&data::table_path::<u32>(&dir), &Progress::new(false))
        .unwrap_or_else(|e| panic!("{e}"));
    let next_hops = prefixes
        .iter()
        .map(|p| next_hop_for(p.addr, p.len, 16))
        .collect();
    Table {
        prefixes,
        next_hops,
        queries: queries::uniform(QUERIES, 1),
    }
});

fn built<E: Engine<u32>>() -> E {
    let t = &*TABLE;
    E::bulk_build(&t.prefixes, &t.next_hops).unwrap_or_else(|| {
        let mut e = E::empty();
        for (p, hop) in t.prefixes.iter().zip(&t.next_hops) {
            e.insert(*p, *hop).unwrap_or_else(|m| panic!("{p}: {m}"));
        }
        e
    })
}

fn single_pass<E: Engine<u32>>(bencher: Bencher) {
    let engine = built::<E>();
    let queries = &TABLE.queries;
    bencher.counter(ItemsCount::new(queries.len())).bench(|| {
        for addr in queries {
            black_box(engine.lookup(*addr));
        }
    });
}

#[divan::bench]
fn fibre_single(bencher: Bencher) {
    single_pass::<FibreEngine<u32>>(bencher);
}

#[divan::bench]
fn fibre_batched(bencher: Bencher) {
    let engine = built::<FibreEngine<u32>>();
    let queries = &TABLE.queries;
    let mut out = vec![None; BURST];
    bencher
        .counter(ItemsCount::new(queries.len()))
        .bench_local(|| {
            for burst in queries.chunks(BURST) {
                engine.lookup_batch(burst, &mut out[..burst.len()]);
                black_box(&mut out);
            }
        });
}

#[divan::bench]
fn prefix_trie_single(bencher: Bencher) {
    single_pass::<PrefixTrieEngine<u32>>(bencher);
}

#[divan::bench]
fn poptrie_crate_single(bencher: Bencher) {
    single_pass::<PoptrieCrateEngine<u32>>(bencher);
}

#[divan::bench]
fn treebitmap_single(bencher: Bencher) {
    single_pass::<TreeBitmapEngine<u32>>(bencher);
}

fn main() {
    divan::main();
}
