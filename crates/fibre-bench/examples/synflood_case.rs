//! One case of `fibre bench synflood`, run once for as long as asked: for
//! profiling (`perf record`) or for comparing two builds case by case,
//! which the full experiment, interleaving 24 cases, does not allow.
//!
//! ```text
//! cargo run --release -p fibre-bench --example synflood_case -- STRATEGY THREADS WRITER SECONDS
//!   STRATEGY  rwlock | percpu-lock | rcu
//!   THREADS   packet threads (0: the writer alone, at WRITER's pace)
//!   WRITER    updates per second, 0 for none, "full" for full speed
//!             (with THREADS 0, 0 means full speed too)
//!   SECONDS   how long to run
//! ```
//!
//! Prints one line: packets per wall-clock and per on-CPU second, the
//! writer's rate, its share of a core and its CPU time per update.

use std::process::ExitCode;
use std::time::Duration;

use fibre_bench::data;
use fibre_bench::progress::Progress;
use fibre_bench::synflood::run::{run_once, run_writer_alone, Pace, Workload};
use fibre_bench::synflood::setup;
use fibre_bench::synflood::strategy::{Strategy, StrategyKind};

/// Sources per packet thread and updates loaded, as in quick mode.
const SOURCES_PER_THREAD: usize = 4096;
const UPDATE_LIMIT: usize = 150_000;
/// The default seed of `fibre bench`.
const SEED: u64 = 25_482_435_454;
const GATEWAYS: u16 = 16;

const USAGE: &str = "usage: synflood_case STRATEGY THREADS WRITER SECONDS \
                     (STRATEGY: rwlock|percpu-lock|rcu; WRITER: updates/s, 0 or full)";

struct Args {
    kind: StrategyKind,
    threads: usize,
    pace: Pace,
    window: Duration,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let [kind, threads, writer, seconds] = args else {
        return Err(format!("expected 4 arguments, got {}", args.len()));
    };
    let kind = StrategyKind::ALL
        .into_iter()
        .find(|k| k.name() == kind)
        .ok_or_else(|| format!("unknown strategy {kind:?}"))?;
    let threads = threads
        .parse()
        .map_err(|_| format!("THREADS: expected a count, got {threads:?}"))?;
    let pace = match writer.as_str() {
        "full" => Pace::FullSpeed,
        "0" => Pace::Idle,
        rate => match rate.parse::<f64>() {
            Ok(r) if r > 0.0 && r.is_finite() => Pace::Rate(r),
            _ => {
                return Err(format!(
                    "WRITER: expected updates/s, 0 or full, got {rate:?}"
                ))
            }
        },
    };
    let window = match seconds.parse::<f64>() {
        Ok(s) if s > 0.0 && s <= 3600.0 => Duration::from_secs_f64(s),
        _ => return Err(format!("SECONDS: expected 0 < s <= 3600, got {seconds:?}")),
    };
    Ok(Args {
        kind,
        threads,
        pace,
        window,
    })
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse(&argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("synflood_case: {e}\n{USAGE}");
            return ExitCode::from(1);
        }
    };
    match run(&args) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("synflood_case: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> Result<String, fibre_bench::BenchError> {
    let dir = data::resolve_data_dir(None)?;
    let setup::Flood {
        fib,
        uplink,
        syns,
        commands,
        ..
    } = setup::flood(
        &dir,
        &setup::FloodPlan {
            threads: args.threads,
            sources_per_thread: SOURCES_PER_THREAD,
            update_limit: Some(UPDATE_LIMIT),
            gateways: GATEWAYS,
            seed: SEED,
        },
        &Progress::new(false),
    )?;
    let mut strategy = Strategy::new(args.kind, fib, args.threads);
    let mut cursor = 0;
    let r = if args.threads == 0 {
        run_writer_alone(
            &mut strategy,
            args.window,
            args.pace,
            &commands,
            &mut cursor,
        )
    } else {
        let work = Workload {
            uplink,
            syns: &syns,
            updates: &commands,
        };
        run_once(
            &mut strategy,
            work,
            args.threads,
            args.pace,
            args.window,
            &mut cursor,
        )
    };
    let per = |n: f64, d: Duration| n / d.as_secs_f64().max(1e-9);
    Ok(format!(
        "{} threads={} packets: {:.2} Mpps, {:.2} Mpps on-CPU; writer: {:.0} updates/s, {:.1} % of a core, {:.2} us CPU per update",
        args.kind.name(),
        args.threads,
        per(r.packets as f64, r.wall) / 1e6,
        r.packets_per_cpu_second / 1e6,
        per(r.updates as f64, r.writer_wall),
        100.0 * r.writer_cpu.as_secs_f64() / r.writer_wall.as_secs_f64().max(1e-9),
        r.writer_cpu.as_secs_f64() * 1e6 / r.updates.max(1) as f64,
    ))
}
