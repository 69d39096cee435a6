//! How long publication takes, and how long until readers see it and the
//! old version is freed.
//!
//! ```text
//! cargo run -p fibre-rcu --release --example publish_latency -- [--readers N] [--rounds R]
//! ```
//!
//! Measures, with N reader threads reading in batches of 32 and reporting a
//! quiescent state after each batch:
//! * `publish`: the writer's cost of `RcuCell::publish` (pointer swap, epoch
//!   advance, one reclaim poll);
//! * `visible`: from just before `publish` until every reader has read the
//!   new version;
//! * `grace`: from just before `publish` until `synchronize` returned (the
//!   old version is freed);
//! * `batch`: `RcuCell::write` + 10,000 edits + `publish` on a 100,000-entry
//!   table (clone-on-write: the clone dominates).

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use fibre_base::CachePadded;
use fibre_rcu::{Domain, RcuCell};

mod common;

const BATCH: usize = 32;

struct Settings {
    readers: usize,
    rounds: usize,
}

fn parse(args: impl Iterator<Item = String>) -> Result<Settings, String> {
    let mut readers =
        thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1));
    let mut rounds = 2000;
    common::parse_counts(
        args,
        &mut [("--readers", &mut readers), ("--rounds", &mut rounds)],
    )?;
    Ok(Settings { readers, rounds })
}

/// p50, p99 and max of `samples`, as a line.
fn summary(name: &str, samples: &mut [Duration]) -> String {
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    format!(
        "{name:<8} n={:<6} p50 {:>9.2?} p99 {:>9.2?} max {:>9.2?}",
        samples.len(),
        at(0.5),
        at(0.99),
        samples[samples.len() - 1]
    )
}

fn main() -> ExitCode {
    let settings = match parse(std::env::args().skip(1)) {
        Ok(settings) => settings,
        Err(problem) => {
            eprintln!("publish_latency: {problem}");
            eprintln!("usage: publish_latency [--readers N] [--rounds R]");
            return ExitCode::from(2);
        }
    };
    let domain = Domain::new();
    let cell = RcuCell::new(&domain, 0u64);
    // The newest version each reader has seen, one cache line per reader.
    let seen: Vec<CachePadded<AtomicU64>> = (0..settings.readers)
        .map(|_| CachePadded::new(AtomicU64::new(0)))
        .collect();
    let stop = AtomicBool::new(false);
    let (mut publish, mut visible, mut grace) = (Vec::new(), Vec::new(), Vec::new());

    thread::scope(|s| {
        for index in 0..settings.readers {
            let mut reader = domain.register();
            let (cell, seen, stop) = (&cell, &seen, &stop);
            s.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let mut newest = 0;
                    {
                        let guard = reader.read();
                        for _ in 0..BATCH {
                            newest = newest.max(*cell.read(&guard));
                        }
                    }
                    seen[index].store(newest, Ordering::Release);
                    reader.quiescent();
                }
            });
        }
        for version in 1..=settings.rounds as u64 {
            let started = Instant::now();
            cell.publish(version);
            publish.push(started.elapsed());
            while seen.iter().any(|s| s.load(Ordering::Acquire) < version) {
                std::hint::spin_loop();
            }
            visible.push(started.elapsed());
            cell.synchronize();
            grace.push(started.elapsed());
        }
        stop.store(true, Ordering::Relaxed);
    });

    println!(
        "# {} readers, batches of {BATCH} reads, {} rounds",
        settings.readers, settings.rounds
    );
    println!("{}", summary("publish", &mut publish));
    println!("{}", summary("visible", &mut visible));
    println!("{}", summary("grace", &mut grace));

    let table = RcuCell::new(&domain, (0..100_000u64).collect::<Vec<_>>());
    let mut batch_times = Vec::new();
    for round in 0..50u64 {
        let started = Instant::now();
        let mut batch = table.write();
        for edit in 0..10_000u64 {
            let slot = (edit * 7919 + round) as usize % batch.len();
            batch[slot] = edit;
        }
        batch.publish();
        batch_times.push(started.elapsed());
    }
    println!("{}", summary("batch", &mut batch_times));
    ExitCode::SUCCESS
}
