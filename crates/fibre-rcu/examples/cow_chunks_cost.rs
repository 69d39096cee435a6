//! What publishing one FIB-sized array at chunk granularity costs, beside
//! left-right (two full copies) and a plain `Vec` as the baselines.
//!
//! ```text
//! cargo run -p fibre-rcu --release --example cow_chunks_cost -- [--readers N] [--seconds S]
//! ```
//!
//! The array is 262,144 entries of 64 bytes (16 MiB: the size of the IPv6
//! FIB's prefix-entry arena with the RIS table). It prints:
//! * the writer's costs, with chunks of 64 and of 256 entries (4 and 16
//!   KiB): one publication (`CowChunks` clone: the chunk directory; a `Vec`
//!   clone: whole-value copy-on-write), and a batch of 1, 100 or 1,024
//!   writes to random entries after a publication (each first write to a
//!   chunk copies it);
//! * one thread's random reads, `Vec` against `CowChunks` (the extra
//!   dependent load of the directory);
//! * N readers' lookups/s reading a hot set of 16,384 entries scattered over
//!   the array, in read sections of 32 lookups, with no writer, beside a
//!   writer publishing 1,000 single-entry batches a second, and beside a
//!   writer publishing batches of 100 as fast as it can; for `CowChunks`
//!   published by `RcuCell` and for a left-right pair (the writer applies
//!   each batch to the spare, publishes it, waits for the grace period and
//!   applies the batch to the other copy), each rate beside its own
//!   writer-free one.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use fibre_rcu::{CowChunks, Domain, RcuCell};
use fibre_testkit::SplitMix64;

mod common;

const ENTRIES: usize = 1 << 18;
const CHUNK: usize = 64;
const HOT: usize = 1 << 14;
const SECTION: usize = 32;

type Entry = [u64; 8];
type Chunked = CowChunks<Entry, CHUNK>;

struct Settings {
    readers: usize,
    seconds: u64,
}

fn parse(args: impl Iterator<Item = String>) -> Result<Settings, String> {
    let (mut readers, mut seconds) = (2, 2);
    common::parse_counts(
        args,
        &mut [("--readers", &mut readers), ("--seconds", &mut seconds)],
    )?;
    Ok(Settings {
        readers,
        seconds: seconds as u64,
    })
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

/// Median time of `run` over `rounds` calls, each after `prepare`; what
/// `run` returns is dropped after the clock stops.
fn time<S, R>(
    rounds: usize,
    mut prepare: impl FnMut() -> S,
    mut run: impl FnMut(S) -> R,
) -> Duration {
    let samples = (0..rounds)
        .map(|_| {
            let state = prepare();
            let started = Instant::now();
            let result = run(state);
            let elapsed = started.elapsed();
            drop(result);
            elapsed
        })
        .collect();
    median(samples)
}

/// The writer's costs with chunks of `N` entries: one publication (and a
/// whole copy for comparison), and batches of writes after one.
fn writer_costs<const N: usize>(flat: &[Entry]) {
    let mut chunked: CowChunks<Entry, N> = CowChunks::new([0; 8]);
    chunked.extend(flat.iter().copied());
    let publish = time(200, || (), |()| std::hint::black_box(chunked.clone()));
    let copy = time(20, || (), |()| std::hint::black_box(flat.to_vec()));
    println!(
        "chunks of {N} entries ({} KiB, {} chunks): publication {:.1} us (a whole Vec copy {:.0} us, {:.0}x)",
        N * std::mem::size_of::<Entry>() / 1024,
        chunked.chunk_count(),
        publish.as_secs_f64() * 1e6,
        copy.as_secs_f64() * 1e6,
        copy.as_secs_f64() / publish.as_secs_f64()
    );
    for writes in [1usize, 100, 1024] {
        let mut rng = SplitMix64(writes as u64 + 1);
        // Each round's copy shares every chunk with `chunked`, as a working
        // copy does with the version just published.
        let batch = time(
            100,
            || chunked.clone(),
            |mut work| {
                for _ in 0..writes {
                    let index = rng.below(ENTRIES);
                    work.get_mut(index).expect("in bounds")[0] += 1;
                }
                work
            },
        );
        println!(
            "  a batch of {writes} random writes after a publication (chunk copies): {:.1} us",
            batch.as_secs_f64() * 1e6
        );
    }
}

fn read_costs(chunked: &Chunked, flat: &[Entry]) {
    const READS: usize = 4_000_000;
    let rate = |read: &dyn Fn(usize) -> u64| {
        let mut rng = SplitMix64(7);
        let started = Instant::now();
        let mut sum = 0u64;
        for _ in 0..READS {
            sum = sum.wrapping_add(read(rng.below(ENTRIES)));
        }
        std::hint::black_box(sum);
        READS as f64 / started.elapsed().as_secs_f64() / 1e6
    };
    let vec_rate = rate(&|i| flat[i][1]);
    let chunk_rate = rate(&|i| chunked[i][1]);
    println!(
        "one thread, random reads over 16 MiB: Vec {vec_rate:.1} M/s, CowChunks {chunk_rate:.1} M/s ({:.2}x)",
        chunk_rate / vec_rate
    );
}

/// How the writer behaves during a reader measurement.
#[derive(Clone, Copy, PartialEq)]
enum Writer {
    None,
    /// Single-entry batches at this many per second.
    Paced(u32),
    /// Batches of 100 back to back.
    FullSpeed,
}

/// Lookups per second of `readers` threads reading `hot` from `cell` in
/// sections of [`SECTION`], beside `writer` calling `write_batch`; and the
/// batches written.
#[allow(clippy::too_many_arguments)]
fn reader_rate<V: Send + Sync>(
    cell: &RcuCell<V>,
    domain: &Domain,
    hot: &[u32],
    settings: &Settings,
    read: fn(&V, usize) -> u64,
    writer: Writer,
    mut write_batch: impl FnMut(&[usize]),
) -> (f64, u64) {
    let stop = AtomicBool::new(false);
    let lookups = AtomicU64::new(0);
    let duration = Duration::from_secs(settings.seconds);
    let mut batches = 0u64;
    let started = Instant::now();
    thread::scope(|s| {
        for _ in 0..settings.readers {
            let mut reader = domain.register();
            let (stop, lookups) = (&stop, &lookups);
            s.spawn(move || {
                let mut done = 0u64;
                let mut sink = 0u64;
                while !stop.load(Relaxed) {
                    for section in hot.chunks(SECTION) {
                        sink = sink.wrapping_add({
                            let guard = reader.read();
                            let version = cell.read(&guard);
                            section
                                .iter()
                                .map(|&i| read(version, i as usize))
                                .sum::<u64>()
                        });
                        reader.quiescent();
                    }
                    done += hot.len() as u64;
                }
                std::hint::black_box(sink);
                lookups.fetch_add(done, Relaxed);
            });
        }
        let mut rng = SplitMix64(99);
        let mut indexes = Vec::new();
        while started.elapsed() < duration {
            match writer {
                Writer::None => thread::sleep(Duration::from_millis(10)),
                Writer::Paced(per_second) => {
                    let due = started + Duration::from_secs(1) * batches as u32 / per_second;
                    if let Some(wait) = due.checked_duration_since(Instant::now()) {
                        thread::sleep(wait);
                    }
                    indexes.clear();
                    indexes.push(rng.below(ENTRIES));
                    write_batch(&indexes);
                    batches += 1;
                }
                Writer::FullSpeed => {
                    indexes.clear();
                    indexes.extend((0..100).map(|_| rng.below(ENTRIES)));
                    write_batch(&indexes);
                    batches += 1;
                }
            }
        }
        stop.store(true, Relaxed);
    });
    let elapsed = started.elapsed().as_secs_f64();
    (lookups.load(Relaxed) as f64 / elapsed / 1e6, batches)
}

fn bump(copy: &mut [Entry], indexes: &[usize]) {
    for &index in indexes {
        copy[index][1] += 1;
    }
}

/// The reader rates of one copy in chunks, for each writer.
fn one_copy(initial: &Chunked, hot: &[u32], settings: &Settings, writer: Writer) -> (f64, u64) {
    let domain = Domain::new();
    let cell = RcuCell::new(&domain, initial.clone());
    let mut work = initial.clone();
    reader_rate(
        &cell,
        &domain,
        hot,
        settings,
        |v: &Chunked, i| v[i][1],
        writer,
        |indexes| {
            for &index in indexes {
                work.get_mut(index).expect("in bounds")[1] += 1;
            }
            cell.publish(work.clone());
        },
    )
}

/// The reader rates of a left-right pair, for each writer: the writer
/// applies each batch to the spare, publishes it, and before the next one
/// waits for the grace period and applies the batch to the other copy.
fn left_right(initial: &[Entry], hot: &[u32], settings: &Settings, writer: Writer) -> (f64, u64) {
    let domain = Domain::new();
    let mut active = Arc::new(initial.to_vec());
    let mut spare = Arc::new(initial.to_vec());
    let cell = RcuCell::new(&domain, Arc::clone(&active));
    let mut behind: Vec<usize> = Vec::new();
    reader_rate(
        &cell,
        &domain,
        hot,
        settings,
        |v: &Arc<Vec<Entry>>, i| v[i][1],
        writer,
        |indexes| {
            while Arc::get_mut(&mut spare).is_none() {
                cell.reclaim();
                std::hint::spin_loop();
            }
            let copy = Arc::get_mut(&mut spare).expect("unique: checked above");
            bump(copy, &behind);
            bump(copy, indexes);
            cell.publish(Arc::clone(&spare));
            std::mem::swap(&mut active, &mut spare);
            behind.clear();
            behind.extend_from_slice(indexes);
        },
    )
}

fn main() -> ExitCode {
    let settings = match parse(std::env::args().skip(1)) {
        Ok(settings) => settings,
        Err(message) => {
            eprintln!("cow_chunks_cost: {message}");
            return ExitCode::FAILURE;
        }
    };
    let flat: Vec<Entry> = (0..ENTRIES as u64).map(|i| [i; 8]).collect();
    let mut chunked: Chunked = CowChunks::new([0; 8]);
    chunked.extend(flat.iter().copied());
    writer_costs::<CHUNK>(&flat);
    writer_costs::<{ 4 * CHUNK }>(&flat);
    read_costs(&chunked, &flat);

    let mut rng = SplitMix64(3);
    let hot: Vec<u32> = (0..HOT).map(|_| rng.below(ENTRIES) as u32).collect();
    println!(
        "{} readers, hot set of {HOT} entries, sections of {SECTION}, {} s per run (M lookups/s, ratio to writer-free):",
        settings.readers, settings.seconds
    );
    for (name, run) in [
        (
            "one copy (CowChunks)",
            &(|w| one_copy(&chunked, &hot, &settings, w)) as &dyn Fn(Writer) -> (f64, u64),
        ),
        ("left-right (2 copies)", &|w| {
            left_right(&flat, &hot, &settings, w)
        }),
    ] {
        let (free, _) = run(Writer::None);
        let (paced, paced_batches) = run(Writer::Paced(1000));
        let (full, full_batches) = run(Writer::FullSpeed);
        println!(
            "  {name}: writer-free {free:.1}; 1k batches/s {paced:.1} ({:.2}x, {paced_batches} batches); \
             full speed {full:.1} ({:.2}x, {:.0} batches/s of 100)",
            paced / free,
            full / free,
            full_batches as f64 / settings.seconds as f64
        );
    }
    ExitCode::SUCCESS
}
