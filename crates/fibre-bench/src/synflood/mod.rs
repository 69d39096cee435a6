//! `fibre bench synflood`: the experiment of "net ipv6: convert fib6_table
//! rwlock to a percpu lock" (Shaohua Li, 2017). Packet threads handle
//! "SYN" packets from random IPv6 sources to a server: per packet an input
//! route lookup (the SYN, received on the uplink) and an output route
//! lookup (the SYN-ACK back to the source), on the RIPE NCC RIS IPv6 table
//! with next hops assigned as in the lookup benchmark. The FIB is shared
//! three ways ([`strategy`]: `rwlock`, `percpu-lock`, `rcu`), each without
//! a writer and with a writer replaying the day of RIS IPv6 updates at
//! 100,000 updates/s and at full speed.
//!
//! Method: every case (strategy x packet threads x writer pace) runs for a
//! fixed window; the cases are interleaved and repeated, and the median run
//! is reported, so a disturbance from other work on the machine hits all
//! strategies alike. Packet rates are given per wall-clock second and per
//! on-CPU second (packets over each thread's CPU time, summed: the rate
//! with a core per thread, which leaves out time spent waiting for a core
//! on a busy machine). The writer's publication latency is from its write
//! call until readers can see the batch (for the locks: acquiring them and
//! applying the batch); at a fixed rate also from the oldest update of a
//! batch coming due.
//!
//! With as many packet threads as cores (the default), the writer thread
//! takes a core from a packet thread whenever it runs. The locks do not
//! mind (a preempted reader holds no lock between packets), but an RCU
//! grace period waits for that preempted thread to finish its batch, so
//! the RCU writer naps while it waits (see `fibre_fib::shared`); the
//! single-update case with one packet thread shows the latency with a core
//! to spare.

pub mod run;
pub mod setup;
pub mod strategy;

use std::time::{Duration, Instant};

use serde_json::json;

use crate::experiment::{Context, Experiment};
use crate::report::{format_value, ExperimentReport, Measurement};
use crate::table::{Align, Table};
use crate::timing::median;
use crate::{alloc_count, data, BenchError};

use run::{quantile, run_once, run_writer_alone, Pace, RunResult, Workload};
use strategy::{Strategy, StrategyKind};

/// The fixed writer rate, in updates per second.
pub const WRITER_RATE: f64 = 100_000.0;

/// A trickle of single updates (one per batch), for the latency of a lone
/// update.
pub const TRICKLE_RATE: f64 = 1_000.0;

/// The experiment (in [`crate::registry`] as [`NAME`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct SynfloodExperiment;

/// How long and how often, by mode.
struct Plan {
    window: Duration,
    runs: usize,
    sources_per_thread: usize,
    update_limit: Option<usize>,
}

impl Plan {
    fn for_mode(quick: bool) -> Plan {
        if quick {
            Plan {
                window: Duration::from_millis(120),
                runs: 3,
                sources_per_thread: 4096,
                update_limit: Some(150_000),
            }
        } else {
            Plan {
                window: Duration::from_millis(500),
                runs: 5,
                sources_per_thread: 16_384,
                update_limit: None,
            }
        }
    }
}

/// Million packets per wall second in one run.
fn run_mpps(run: &RunResult) -> f64 {
    run.packets as f64 / run.wall.as_secs_f64().max(1e-9) / 1e6
}

/// One measured case and its runs.
struct Case {
    strategy: usize,
    threads: usize,
    pace: Pace,
    runs: Vec<RunResult>,
}

impl Case {
    /// The median over the case's runs of `figure`.
    fn median_over_runs(&self, figure: impl Fn(&RunResult) -> f64) -> f64 {
        let figures: Vec<f64> = self.runs.iter().map(figure).collect();
        median(&figures)
    }

    fn mpps(&self) -> f64 {
        self.median_over_runs(run_mpps)
    }

    fn mpps_on_cpu(&self) -> f64 {
        self.median_over_runs(|r| r.packets_per_cpu_second / 1e6)
    }

    fn updates_per_second(&self) -> f64 {
        self.median_over_runs(|r| r.updates as f64 / r.writer_wall.as_secs_f64().max(1e-9))
    }

    /// The writer thread's CPU time per update, in microseconds (median
    /// run): what a publication scheme costs the machine.
    fn writer_cpu_per_update(&self) -> f64 {
        self.median_over_runs(|r| micros(r.writer_cpu) / (r.updates.max(1) as f64))
    }

    /// The writer thread's CPU time over its wall time (median run): the
    /// share of one core it took.
    fn writer_core_share(&self) -> f64 {
        self.median_over_runs(|r| {
            r.writer_cpu.as_secs_f64() / r.writer_wall.as_secs_f64().max(1e-9)
        })
    }

    /// p50 and p99 over every batch of every run.
    fn latency(&self, due: bool) -> (Duration, Duration) {
        let mut all: Vec<Duration> = self
            .runs
            .iter()
            .flat_map(|r| {
                if due {
                    &r.due_latency
                } else {
                    &r.publish_latency
                }
            })
            .copied()
            .collect();
        (quantile(&mut all, 0.5), quantile(&mut all, 0.99))
    }

    fn write_errors(&self) -> usize {
        self.runs.iter().map(|r| r.write_errors.len()).sum()
    }

    fn pace_name(&self) -> String {
        match self.pace {
            Pace::Idle if self.threads == 0 => "-".into(),
            Pace::Idle => "none".into(),
            Pace::Rate(r) => format!("{}k/s", r / 1000.0),
            Pace::FullSpeed if self.threads == 0 => "alone, full speed".into(),
            Pace::FullSpeed => "full speed".into(),
        }
    }
}

/// The heap each strategy holds, against one plain FIB's.
fn memory_text(
    strategies: &[(StrategyKind, Strategy)],
    heap: &[Option<usize>],
    plain_fib_bytes: Option<usize>,
) -> String {
    let Some(plain) = plain_fib_bytes else {
        return "Memory: not measured (the counting allocator is not installed).\n".into();
    };
    let mut text = format!(
        "Memory (heap as built): one plain FIB {:.1} MB;",
        plain as f64 / 1e6
    );
    for ((kind, _), bytes) in strategies.iter().zip(heap) {
        if let Some(bytes) = bytes {
            let share = *bytes as f64 / (plain.max(1) as f64);
            text.push_str(&format!(
                " {} {:.1} MB ({share:.2}x)",
                kind.name(),
                *bytes as f64 / 1e6
            ));
        }
    }
    text.push('\n');
    text
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The experiment's name on the command line (`fibre bench synflood`).
pub const NAME: &str = "synflood";
/// One line on what it measures (`fibre bench --list`).
pub const ABOUT: &str =
    "SYN flood: IPv6 input + output route lookup per packet, rwlock vs per-CPU lock vs RCU, with a route writer";

impl Experiment for SynfloodExperiment {
    fn run(&self, ctx: &Context) -> Result<ExperimentReport, BenchError> {
        let plan = Plan::for_mode(ctx.quick);
        let dir = data::resolve_data_dir(ctx.data_dir.as_deref())?;
        let setup_started = Instant::now();
        let setup::Flood {
            routes,
            fib,
            fib_bytes,
            uplink,
            syns,
            commands,
        } = setup::flood(
            &dir,
            &setup::FloodPlan {
                threads: ctx.threads,
                sources_per_thread: plan.sources_per_thread,
                update_limit: plan.update_limit,
                gateways: ctx.gateways,
                seed: ctx.seed,
            },
            &ctx.progress,
        )?;
        // Each strategy's heap: the FIB it starts from plus what it adds
        // (its copies, locks, reader slots), measured as it is built from a
        // clone (`None` without the counting allocator). The clone shares
        // the FIB's arenas and arrays, so what a strategy adds is only what
        // it does not share: a second full copy shows as one FIB more.
        let mut heap = Vec::new();
        let mut strategies: Vec<(StrategyKind, Strategy)> = StrategyKind::ALL
            .iter()
            .map(|&kind| {
                let (strategy, bytes) =
                    alloc_count::measure(|| Strategy::new(kind, fib.clone(), ctx.threads));
                heap.push(bytes.zip(fib_bytes).map(|(own, plain)| plain + own));
                (kind, strategy)
            })
            .collect();
        let plain_fib_bytes = fib_bytes;
        drop(fib);
        let protections = StrategyKind::PROTECTIONS.len();
        let setup_time = setup_started.elapsed();

        // Every case, in the order they are interleaved.
        let mut cases = Vec::new();
        for threads in 1..=ctx.threads {
            for strategy in 0..strategies.len() {
                cases.push((strategy, threads, Pace::Idle));
            }
        }
        for pace in [
            Pace::Rate(TRICKLE_RATE),
            Pace::Rate(WRITER_RATE),
            Pace::FullSpeed,
        ] {
            for strategy in 0..protections {
                cases.push((strategy, ctx.threads, pace));
            }
        }
        // The writer with a core of its own (one packet thread fewer than
        // cores), as on that patch's 56-CPU server where it is one thread of
        // many: single updates (the grace period then waits for no
        // preempted packet thread) and the 100k/s replay.
        if ctx.threads > 1 {
            for strategy in 0..protections {
                cases.push((strategy, 1, Pace::Rate(TRICKLE_RATE)));
                cases.push((strategy, 1, Pace::Rate(WRITER_RATE)));
            }
        }
        for strategy in 0..protections {
            cases.push((strategy, 0, Pace::FullSpeed));
        }
        let mut cases: Vec<Case> = cases
            .into_iter()
            .map(|(strategy, threads, pace)| Case {
                strategy,
                threads,
                pace,
                runs: Vec::new(),
            })
            .collect();
        let mut cursors = vec![0usize; strategies.len()];
        let work = Workload {
            uplink,
            syns: &syns,
            updates: &commands,
        };
        let bar = ctx
            .progress
            .bar((plan.runs * cases.len()) as u64, "synflood");
        for _ in 0..plan.runs {
            for case in cases.iter_mut() {
                let strategy = &mut strategies[case.strategy].1;
                let cursor = &mut cursors[case.strategy];
                let result = if case.threads == 0 {
                    run_writer_alone(strategy, plan.window, Pace::FullSpeed, &commands, cursor)
                } else {
                    run_once(strategy, work, case.threads, case.pace, plan.window, cursor)
                };
                case.runs.push(result);
                bar.inc(1);
            }
        }
        bar.finish_and_clear();

        let find = |kind: StrategyKind, threads: usize, pace: Pace| {
            cases.iter().find(|c| {
                strategies[c.strategy].0 == kind && c.threads == threads && c.pace == pace
            })
        };
        let mpps = |kind, threads, pace| find(kind, threads, pace).map_or(0.0, Case::mpps);
        let mpps_cpu =
            |kind, threads, pace| find(kind, threads, pace).map_or(0.0, Case::mpps_on_cpu);
        let t = ctx.threads;
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };

        let mut text = format!(
            "synflood: IPv6 SYNs to one server, per packet an input lookup (SYN) and an output \
             lookup (SYN-ACK), {} routes (RIPE NCC RIS {}), {} next hops; {} runs of {} ms per \
             case, interleaved, median; setup {:.1} s\n\n",
            routes,
            data::SNAPSHOT,
            ctx.gateways,
            plan.runs,
            plan.window.as_millis(),
            setup_time.as_secs_f64(),
        );
        let mut rows = Table::new(&[
            ("strategy", Align::Left),
            ("threads", Align::Right),
            ("writer", Align::Left),
            ("Mpps", Align::Right),
            ("on-CPU Mpps", Align::Right),
            ("x rwlock", Align::Right),
            ("updates/s", Align::Right),
            ("writer CPU", Align::Right),
            ("publish p50/p99 us", Align::Right),
            ("due->visible p50/p99 us", Align::Right),
        ]);
        let mut detail_cases = Vec::new();
        for case in &cases {
            let kind = strategies[case.strategy].0;
            let (p50, p99) = case.latency(false);
            let (d50, d99) = case.latency(true);
            let writes = case.pace != Pace::Idle;
            let baseline = mpps(StrategyKind::RwLock, case.threads, case.pace);
            rows.row(vec![
                kind.name().into(),
                case.threads.to_string(),
                case.pace_name(),
                if case.threads > 0 {
                    format_value(case.mpps())
                } else {
                    "-".into()
                },
                if case.threads > 0 {
                    format_value(case.mpps_on_cpu())
                } else {
                    "-".into()
                },
                if case.threads > 0 {
                    format!("{:.2}", ratio(case.mpps(), baseline))
                } else {
                    "-".into()
                },
                if writes {
                    format_value(case.updates_per_second())
                } else {
                    "-".into()
                },
                if writes {
                    format!(
                        "{:.0}% {:.2} us",
                        100.0 * case.writer_core_share(),
                        case.writer_cpu_per_update()
                    )
                } else {
                    "-".into()
                },
                if writes {
                    format!("{:.1}/{:.1}", micros(p50), micros(p99))
                } else {
                    "-".into()
                },
                if matches!(case.pace, Pace::Rate(_)) {
                    format!("{:.1}/{:.1}", micros(d50), micros(d99))
                } else {
                    "-".into()
                },
            ]);
            detail_cases.push(json!({
                "strategy": kind.name(),
                "threads": case.threads,
                "writer": case.pace_name(),
                "mpps": case.mpps(),
                "mpps_on_cpu": case.mpps_on_cpu(),
                "updates_per_second": writes.then(|| case.updates_per_second()),
                "updates_refused": case.runs.iter().map(|r| r.refused).sum::<u64>(),
                "writer_cpu_us_per_update": writes.then(|| case.writer_cpu_per_update()),
                "writer_core_share": writes.then(|| case.writer_core_share()),
                "publish_latency_us": writes.then(|| json!({"p50": micros(p50), "p99": micros(p99)})),
                "due_to_visible_latency_us": matches!(case.pace, Pace::Rate(_))
                    .then(|| json!({"p50": micros(d50), "p99": micros(d99)})),
                "write_errors": case.write_errors(),
                "runs_mpps": case.runs.iter().map(run_mpps).collect::<Vec<_>>(),
            }));
        }
        text.push_str(&rows.render());
        let errors: usize = cases.iter().map(Case::write_errors).sum();
        if errors > 0 {
            text.push_str(&format!(
                "{errors} writer batches waited too long for a grace period and were retried\n"
            ));
        }
        text.push_str(
            "Locks are taken per lookup, twice per packet (the kernel takes its table lock in \
             every fib6_table_lookup); RCU loads the FIB once per batch of 32 packets, looks the \
             batch up as two bursts (rcu-per-key: each packet's two lookups in turn, the per-key \
             \"before\", run without a writer only) and reports a quiescent state after it. \
             Writer CPU: the share of one core the writer thread took, and its CPU time per \
             update (RCU applies each batch to its one working copy, copying first the leaves and \
             chunks a published version shares, then publishes a clone of it).\n",
        );
        text.push_str(&memory_text(&strategies, &heap, plain_fib_bytes));

        // Headline rows for the summary table.
        let (rw, pc, rcu) = (
            StrategyKind::RwLock,
            StrategyKind::PerCpuLock,
            StrategyKind::Rcu,
        );
        let idle = Pace::Idle;
        let paced = Pace::Rate(WRITER_RATE);
        let plural = |n: usize| if n == 1 { "thread" } else { "threads" };
        // A packet rate compared with another.
        let vs = |name: String, value: f64, base: f64, to: &str| {
            Measurement::new(name, value, "Mpps").with_ratio(ratio(value, base), to)
        };
        // `case`'s publication latency, median and 99th percentile.
        let percentiles =
            |measurements: &mut Vec<Measurement>, what: &str, suffix: &str, case: &Case| {
                let (p50, p99) = case.latency(false);
                for (p, latency) in [("p50", p50), ("p99", p99)] {
                    let name = format!("{what} {p}{suffix}");
                    measurements.push(Measurement::new(name, micros(latency), "us"));
                }
            };
        let mut measurements = Vec::new();
        for kind in [rw, pc, rcu] {
            let name = format!("{} {t} {}", kind.name(), plural(t));
            measurements.push(if kind == rw {
                Measurement::new(name, mpps(kind, t, idle), "Mpps")
            } else {
                vs(name, mpps(kind, t, idle), mpps(rw, t, idle), "rwlock")
            });
        }
        measurements.push(vs(
            format!("rcu {t} {} on-CPU", plural(t)),
            mpps_cpu(rcu, t, idle),
            mpps_cpu(rw, t, idle),
            "rwlock on-CPU",
        ));
        if t > 1 {
            measurements.push(Measurement::new(
                format!("rcu {t} threads scaling"),
                ratio(mpps(rcu, t, idle), mpps(rcu, 1, idle)),
                "x 1 thread",
            ));
            measurements.push(Measurement::new(
                format!("rcu {t} threads scaling on-CPU"),
                ratio(mpps_cpu(rcu, t, idle), mpps_cpu(rcu, 1, idle)),
                "x 1 thread",
            ));
        }
        measurements.push(vs(
            format!("rcu {t} {}, writer 100k/s", plural(t)),
            mpps(rcu, t, paced),
            mpps(rcu, t, idle),
            "no writer",
        ));
        measurements.push(vs(
            format!("rcu {t} {}, writer 100k/s, on-CPU", plural(t)),
            mpps_cpu(rcu, t, paced),
            mpps_cpu(rcu, t, idle),
            "no writer on-CPU",
        ));
        if t > 1 {
            // The writer on its own core: what the readers lose to the
            // writer's work itself rather than to sharing their cores.
            for kind in [rcu, rw] {
                measurements.push(vs(
                    format!("{} 1 thread, writer 100k/s on its own core", kind.name()),
                    mpps(kind, 1, paced),
                    mpps(kind, 1, idle),
                    "no writer",
                ));
            }
        }
        measurements.push(vs(
            "rcu bursts 1 thread".into(),
            mpps(rcu, 1, idle),
            mpps(StrategyKind::RcuPerKey, 1, idle),
            "per key",
        ));
        let rcu_heap = heap[StrategyKind::ALL
            .iter()
            .position(|&k| k == rcu)
            .unwrap_or(0)];
        if let (Some(bytes), Some(plain)) = (rcu_heap, plain_fib_bytes) {
            measurements.push(
                Measurement::new("rcu memory", bytes as f64 / 1e6, "MB")
                    .with_ratio(ratio(bytes as f64, plain as f64), "one plain FIB"),
            );
        }
        if let Some(case) = find(rcu, t, paced) {
            measurements.push(Measurement::new(
                "rcu writer CPU per update, 100k/s",
                case.writer_cpu_per_update(),
                "us",
            ));
            percentiles(&mut measurements, "rcu publication", ", 100k/s", case);
        }
        if let Some(case) = find(rcu, t, Pace::Rate(TRICKLE_RATE)) {
            percentiles(&mut measurements, "rcu single-update publication", "", case);
        }
        if let Some(case) = find(rcu, 1, Pace::Rate(TRICKLE_RATE)).filter(|_| t > 1) {
            percentiles(
                &mut measurements,
                "rcu single-update publication",
                ", 1 thread",
                case,
            );
        }
        if let Some(alone) = find(rcu, 0, Pace::FullSpeed) {
            measurements.push(Measurement::new(
                "rcu writer alone",
                alone.updates_per_second(),
                "updates/s",
            ));
        }
        if let Some(full) = find(rcu, t, Pace::FullSpeed) {
            measurements.push(Measurement::new(
                format!("rcu writer with {t} {}", plural(t)),
                full.updates_per_second(),
                "updates/s",
            ));
        }

        Ok(ExperimentReport {
            experiment: NAME.into(),
            text,
            detail: json!({
                "routes": routes,
                "updates_loaded": commands.len(),
                "gateways": ctx.gateways,
                "window_ms": plan.window.as_millis() as u64,
                "runs": plan.runs,
                "setup_seconds": setup_time.as_secs_f64(),
                "writer_rate": WRITER_RATE,
                "trickle_rate": TRICKLE_RATE,
                "full_speed_batch": run::FULL_SPEED_BATCH,
                "reader_batch": strategy::BATCH,
                "plain_fib_bytes": plain_fib_bytes,
                "strategy_bytes": StrategyKind::ALL
                    .iter()
                    .zip(&heap)
                    .map(|(kind, bytes)| json!({ "strategy": kind.name(), "bytes": bytes }))
                    .collect::<Vec<_>>(),
                "cases": detail_cases,
            }),
            measurements,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::path::Path;

    use flate2::write::GzEncoder;
    use flate2::Compression;

    use super::*;
    use crate::Options;

    fn write_gz(path: &Path, lines: &[String]) {
        let mut gz = GzEncoder::new(std::fs::File::create(path).unwrap(), Compression::fast());
        for line in lines {
            writeln!(gz, "{line}").unwrap();
        }
        gz.finish().unwrap();
    }

    /// The experiment runs end to end on a small table: every case has
    /// runs, packets were handled, the writer replayed updates, and the
    /// headline rows join the summary.
    #[test]
    fn runs_on_a_small_table() {
        let dir = tempfile::tempdir().unwrap();
        let snapshot = data::SNAPSHOT;
        write_gz(
            &dir.path().join(format!("{snapshot}-v4.txt.gz")),
            &["10.0.0.0/8".into()],
        );
        let prefixes: Vec<String> = (0..300u32)
            .map(|i| format!("2a{:02x}:{:x}::/32", i % 256, i + 1))
            .collect();
        write_gz(&dir.path().join(format!("{snapshot}-v6.txt.gz")), &prefixes);
        let updates: Vec<String> = prefixes
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{} {p}", if i % 3 == 0 { "W" } else { "A" }))
            .collect();
        write_gz(
            &dir.path().join(format!("{snapshot}-v6-updates.txt.gz")),
            &updates,
        );
        let options = Options {
            quick: true,
            threads: Some(2),
            data_dir: Some(dir.path().to_path_buf()),
            progress: false,
            ..Options::default()
        };
        let outcome = crate::run(&options, Some("synflood")).unwrap();
        let report = &outcome.reports[0];
        let cases = report.detail["cases"].as_array().unwrap();
        // 3 protections x (1 and 2 threads idle, 1k/s, 100k/s, full speed,
        // 1k/s and 100k/s with 1 thread, alone), and the bursts' per-key
        // "before" idle with 1 and 2 threads.
        assert_eq!(cases.len(), 26);
        for case in cases {
            if case["threads"] != 0 {
                assert!(case["mpps"].as_f64().unwrap() > 0.0, "{case}");
            }
            if case["writer"] != "none" {
                assert!(case["updates_per_second"].as_f64().unwrap() > 0.0, "{case}");
            }
        }
        let names: Vec<&str> = report
            .measurements
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert!(names.contains(&"rcu 2 threads"), "{names:?}");
        assert!(names.contains(&"rcu writer alone"), "{names:?}");
        assert!(names.contains(&"rcu bursts 1 thread"), "{names:?}");
        assert!(
            names.contains(&"rcu 1 thread, writer 100k/s on its own core"),
            "{names:?}"
        );
        assert!(outcome.to_text().contains("synflood    rcu 2 threads"));
    }
}
