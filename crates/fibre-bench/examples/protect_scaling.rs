//! Reads per second of a trivial lookup under each protection strategy, on
//! 1..=N reader threads, optionally with a writer changing the data.
//!
//! ```text
//! cargo run -p fibre-bench --release --example protect_scaling -- [--threads N] [--millis MS] [--write-every-us US]
//! ```
//!
//! No assertion on speed: the figures depend on the machine (and on what
//! else runs on it).

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use fibre_bench::protect::{PerCpuLock, Protected, Rcu, RwLockProtected};

/// Reads between two quiescent-state reports (RCU) — a packet batch.
const BATCH: u64 = 32;
/// Entries in the table the readers look up (a power of two, so a key is
/// reduced with a mask).
const TABLE: usize = 1024;
const _: () = assert!(
    TABLE.is_power_of_two(),
    "TABLE must be a power of two: readers reduce a key with `& (TABLE - 1)`, \
     which otherwise skips entries; if this fires, pick a power of two"
);

/// The shared data: a small lookup table.
#[derive(Clone)]
struct Table {
    next_hop: Vec<u32>,
}

struct Settings {
    max_threads: usize,
    per_point: Duration,
    write_every: Option<Duration>,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Settings, String> {
    let mut settings = Settings {
        max_threads: thread::available_parallelism().map_or(1, |n| n.get()),
        per_point: Duration::from_millis(300),
        write_every: None,
    };
    while let Some(flag) = args.next() {
        let mut number = |name: &str| -> Result<u64, String> {
            let text = args.next().ok_or(format!("{name} needs a number"))?;
            text.parse::<u64>()
                .map_err(|e| format!("{name} {text:?}: {e}"))
        };
        match flag.as_str() {
            "--threads" => {
                let n = number("--threads")?;
                if n == 0 {
                    return Err("--threads must be at least 1".into());
                }
                settings.max_threads = usize::try_from(n).map_err(|e| e.to_string())?;
            }
            "--millis" => settings.per_point = Duration::from_millis(number("--millis")?.max(1)),
            "--write-every-us" => {
                settings.write_every = Some(Duration::from_micros(number("--write-every-us")?))
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(settings)
}

/// Runs `threads` readers for `per_point`; returns reads per second.
fn measure<P: Protected<Table>>(shared: &P, threads: usize, settings: &Settings) -> f64 {
    let stop = AtomicBool::new(false);
    let total = AtomicU64::new(0);
    let started = Instant::now();
    thread::scope(|s| {
        for seed in 0..threads {
            let (stop, total) = (&stop, &total);
            s.spawn(move || {
                let mut reader = shared.reader();
                let mut key = seed as u32;
                let mut reads = 0u64;
                let mut checksum = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..BATCH {
                        key = key.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                        // A mask, not `%`: a division per read would
                        // drown the difference between the strategies.
                        checksum ^=
                            shared.read(&mut reader, |t| t.next_hop[key as usize & (TABLE - 1)]);
                    }
                    reads += BATCH;
                    shared.quiescent(&mut reader);
                }
                std::hint::black_box(checksum);
                total.fetch_add(reads, Ordering::Relaxed);
            });
        }
        let deadline = started + settings.per_point;
        let mut round = 0u32;
        while Instant::now() < deadline {
            match settings.write_every {
                Some(every) => {
                    round = round.wrapping_add(1);
                    shared.write(|t| {
                        let slot = round as usize % t.next_hop.len();
                        t.next_hop[slot] = round;
                    });
                    thread::sleep(every);
                }
                None => thread::sleep(deadline.saturating_duration_since(Instant::now())),
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    total.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

fn run<P: Protected<Table>>(shared: &P, settings: &Settings) {
    for threads in 1..=settings.max_threads {
        let rate = measure(shared, threads, settings);
        println!(
            "{:<7} {threads:>7} {:>14.0} {:>14.0}",
            shared.name(),
            rate,
            rate / threads as f64
        );
    }
}

fn main() -> ExitCode {
    let settings = match parse(std::env::args().skip(1)) {
        Ok(settings) => settings,
        Err(problem) => {
            eprintln!("protect_scaling: {problem}");
            eprintln!("usage: protect_scaling [--threads N] [--millis MS] [--write-every-us US]");
            return ExitCode::from(2);
        }
    };
    let table = Table {
        next_hop: (0..TABLE as u32).collect(),
    };
    println!(
        "# {} ms per point, batch {BATCH} reads, writer: {}",
        settings.per_point.as_millis(),
        settings.write_every.map_or("none".to_string(), |d| format!(
            "every {} us",
            d.as_micros()
        ))
    );
    println!(
        "{:<7} {:>7} {:>14} {:>14}",
        "kind", "threads", "reads/s", "per thread"
    );
    run(&RwLockProtected::new(table.clone()), &settings);
    run(&PerCpuLock::new(table.clone()), &settings);
    run(&Rcu::new(table), &settings);
    ExitCode::SUCCESS
}
