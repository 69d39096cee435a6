//! `fibre bench forward-core`: the forwarding worker (`fibre-fwd`) on the
//! full RIS tables, frames in memory: how many received frames per second
//! one worker turns into rewritten frames on its output port, in bursts
//! and one frame at a time (the "before": the same worker handed each
//! frame alone, so each pays the FIB lookup, the checks and the transmit
//! queue's bookkeeping by itself), and with every thread running a worker
//! of its own over the same FIB.
//!
//! The router: the uplink `wan0` with every prefix of the table via one of
//! `--gateways` gateways on it (as the FIB experiment builds it), the
//! neighbours of those gateways resolved, and a LAN port `lan0` the frames
//! arrive on: the smallest UDP frames (60 bytes for IPv4, the 64-byte
//! minimum less the FCS; 70 for IPv6), from hosts of the LAN to addresses
//! drawn inside the table's prefixes, TTL 64. Every frame must come out of
//! the uplink: a worker that forwards fewer stops the run. The raw LPM's
//! batched rate over the same destinations, in the same run, is printed
//! beside it as the ceiling of one lookup per frame.

mod frames;

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use fibre_fib::Fib;
use fibre_fwd::{PortConfig, StaticNeighbours, Worker, WorkerConfig, BURST};
use serde::Serialize;
use serde_json::json;

use crate::data;
use crate::experiment::{Context, Experiment};
use crate::fib::setup::{self as fib_setup, FibFamily};
use crate::queries;
use crate::report::{format_value, ExperimentReport, Measurement};
use crate::router::{self, fib_error};
use crate::table::{Align, Table};
use crate::timing::{self, Plan, Rate};
use crate::BenchError;

pub use frames::{LAN, LAN_MAC, WAN_MAC};

/// The experiment's name on the command line (`fibre bench forward-core`).
pub const NAME: &str = "forward-core";
/// One line on what it measures (`fibre bench --list`).
pub const ABOUT: &str = "the forwarding worker on the RIS tables, frames in memory: bursts against one frame at a time, 1 and all workers, the raw LPM beside it";

/// How much work the experiment does.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForwardConfig {
    /// Distinct frames per family (each worker sends all of them).
    pub frames: usize,
    /// How the passes are timed.
    pub plan: Plan,
}

impl ForwardConfig {
    /// `--quick`: 16 Ki frames.
    pub fn quick() -> Self {
        Self {
            frames: 1 << 14,
            plan: Plan::QUICK,
        }
    }

    /// The full benchmark: 64 Ki frames.
    pub fn full() -> Self {
        Self {
            frames: 1 << 16,
            plan: Plan::FULL,
        }
    }
}

/// The experiment (in [`crate::registry`] as [`NAME`]).
#[derive(Debug, Clone, Default)]
pub struct ForwardExperiment {
    config: Option<ForwardConfig>,
}

impl ForwardExperiment {
    /// The experiment with a fixed amount of work, whatever the mode.
    pub fn with_config(config: ForwardConfig) -> Self {
        Self {
            config: Some(config),
        }
    }
}

/// One family's figures.
#[derive(Debug, Clone, Serialize)]
pub struct FamilyFigures {
    /// "IPv4" or "IPv6".
    pub family: &'static str,
    /// Prefixes in table main.
    pub prefixes: usize,
    /// Bytes per frame received.
    pub frame_len: usize,
    /// One worker, each frame handed to it alone.
    pub one_at_a_time: Rate,
    /// One worker, bursts of [`BURST`].
    pub burst: Rate,
    /// A worker per thread, bursts.
    pub burst_all: Rate,
    /// The raw LPM's `lookup_batch` over the frames' destinations, 1 thread.
    pub lpm_batched: Rate,
}

impl Experiment for ForwardExperiment {
    fn run(&self, ctx: &Context) -> Result<ExperimentReport, BenchError> {
        let config = ctx.work(&self.config, ForwardConfig::quick, ForwardConfig::full);
        let dir = data::resolve_data_dir(ctx.data_dir.as_deref())?;
        let families = ctx.per_family(
            || run_family::<u32>(ctx, &config, &dir),
            || run_family::<u128>(ctx, &config, &dir),
        )?;
        let mut text = String::new();
        let _ = writeln!(
            text,
            "forward-core: received frames forwarded per second by fibre-fwd's worker on the full \
             RIS tables, frames in memory (M frames/s and ns per frame, median; bursts of {BURST}; \
             \"all\": a worker on each of {} threads)",
            ctx.threads
        );
        let mut table = Table::new(&[
            ("family", Align::Left),
            ("prefixes", Align::Right),
            ("one at a time", Align::Right),
            ("burst", Align::Right),
            ("ns/frame", Align::Right),
            ("burst/one", Align::Right),
            ("burst all", Align::Right),
            ("all/1", Align::Right),
            ("raw LPM batched", Align::Right),
        ]);
        for f in &families {
            table.row(vec![
                f.family.into(),
                f.prefixes.to_string(),
                format_value(f.one_at_a_time.millions()),
                format_value(f.burst.millions()),
                format!("{:.0}", 1e9 / f.burst.median.max(1.0)),
                format!("{:.2}x", f.burst.over(&f.one_at_a_time)),
                format_value(f.burst_all.millions()),
                format!("{:.2}x", f.burst_all.over(&f.burst)),
                format_value(f.lpm_batched.millions()),
            ]);
        }
        text.push_str(&table.render());
        let measurements = families
            .iter()
            .flat_map(|f| headline(f, ctx.threads))
            .collect();
        Ok(ExperimentReport {
            experiment: NAME.to_string(),
            text,
            detail: json!({ "config": config, "threads": ctx.threads, "families": families }),
            measurements,
        })
    }
}

/// The summary rows: bursts against one frame at a time, all workers
/// against one, and the burst rate against the raw LPM's.
fn headline(f: &FamilyFigures, threads: usize) -> Vec<Measurement> {
    let mut rows = vec![
        Measurement::rate_over(
            format!("{} forward burst, 1 worker", f.family),
            &f.burst,
            "M frames/s",
            &f.one_at_a_time,
            "one at a time",
        ),
        Measurement::rate_over(
            format!("{} forward burst, 1 worker, vs raw LPM", f.family),
            &f.burst,
            "M frames/s",
            &f.lpm_batched,
            "LPM lookup_batch",
        ),
    ];
    if threads > 1 {
        rows.push(Measurement::rate_over(
            format!("{} forward burst, {threads} workers", f.family),
            &f.burst_all,
            "M frames/s",
            &f.burst,
            "1 worker",
        ));
    }
    rows
}

/// One family: the router, its frames, a check that the worker forwards
/// them all, then the timings.
fn run_family<K: FibFamily + frames::FrameFamily>(
    ctx: &Context,
    config: &ForwardConfig,
    dir: &std::path::Path,
) -> Result<FamilyFigures, BenchError> {
    let table = data::load_table::<K>(&data::table_path::<K>(dir), &ctx.progress)?;
    let seed = ctx.seed ^ u64::from(K::BITS) ^ 0xf0d;
    let dsts = queries::inside_prefixes(&table, config.frames, seed);
    let (fib, uplink) = fib_setup::router::<K>(&table, ctx.gateways)?;
    let (fib, lan) = frames::add_lan::<K>(fib)?;
    let fib = Arc::new(fib);
    let frames = frames::udp_frames::<K>(&dsts, seed);
    let plan = &config.plan;
    let threads = ctx.threads;

    let lpm = router::raw_lpm(&table)?;
    let lpm_batched = timing::rate(plan, || router::lpm_batched_pass(&lpm, &dsts, BURST));
    drop(lpm);

    let make_worker = || {
        let mut neighbours = StaticNeighbours::default();
        for hop in 0..ctx.gateways {
            neighbours.insert(uplink, K::gateway(hop), frames::gateway_mac(hop));
        }
        let ports = [
            PortConfig::new(lan, LAN_MAC),
            PortConfig::new(uplink, WAN_MAC),
        ];
        Worker::new(
            Arc::clone(&fib),
            neighbours,
            &ports,
            WorkerConfig::default(),
        )
    };
    // Port 0 is the LAN, port 1 the uplink.
    let pass = |worker: &mut Worker<Arc<Fib>, StaticNeighbours>, burst: usize| -> u64 {
        let before = worker.counters().forwarded;
        for chunk in frames.chunks(burst) {
            worker.receive_burst(0, chunk, 0);
            worker.drain_port(1, |frame| {
                std::hint::black_box(frame);
            });
        }
        worker.counters().forwarded - before
    };
    let mut worker = make_worker();
    let forwarded = pass(&mut worker, BURST);
    if forwarded != frames.len() as u64 {
        let reasons: Vec<String> = worker
            .counters()
            .drop_reasons()
            .filter(|&(_, n)| n > 0)
            .map(|(reason, n)| format!("{} {n}", reason.name()))
            .collect();
        return Err(fib_error(
            format!("{} frames", K::NAME),
            format!(
                "the worker forwarded {forwarded} of {} (dropped: {})",
                frames.len(),
                reasons.join(", ")
            ),
        ));
    }
    let one_at_a_time = timing::rate(plan, || pass(&mut worker, 1));
    let burst = timing::rate(plan, || pass(&mut worker, BURST));
    let workers: Vec<Mutex<_>> = (0..threads).map(|_| Mutex::new(make_worker())).collect();
    let burst_all = timing::rate_parallel(plan, threads, |i| {
        // Each thread locks only its own worker: no contention.
        let mut worker = workers[i].lock().unwrap_or_else(|e| e.into_inner());
        pass(&mut worker, BURST)
    });
    Ok(FamilyFigures {
        family: K::NAME,
        prefixes: table.len(),
        frame_len: frames.first().map_or(0, Vec::len),
        one_at_a_time,
        burst,
        burst_all,
        lpm_batched,
    })
}
