//! `fibre bench lookup`: fibre's LPM against peer crates on the RIS tables.
//!
//! For each family (IPv4, IPv6) the experiment loads the full table and the
//! day of updates, gives every prefix a next hop
//! ([`crate::nexthop::next_hop_for`]), builds every engine from the same
//! prefixes in the same order, and then:
//!
//! 1. checks that every engine gives the same answer to every query (and
//!    fibre's batched lookup the same as its single one); any disagreement
//!    stops the run with an error, as the figures would compare unlike work;
//! 2. times lookups: one thread with single `lookup` calls, one thread with
//!    `lookup_batch` over bursts (fibre only: the peers have no batched
//!    lookup), and all threads at once, each on its own slice of the queries;
//! 3. replays the updates on top of the full table (`A` inserts, `W`
//!    removes), then checks agreement again.
//!
//! Memory: fibre reports `lookup_bytes()`, the bytes its lookups read; the
//! peers give no comparable figure, so theirs is the heap their build left
//! allocated, counted by [`crate::alloc_count`] (fibre's heap total is
//! reported beside it).

mod figures;
mod render;
mod run;
mod subject;

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;
use serde_json::json;

use crate::data;
use crate::experiment::{Context, Experiment};
use crate::report::ExperimentReport;
use crate::timing::Plan;
use crate::BenchError;

pub use figures::{EngineFigures, FamilyFigures, Unavailable};

/// How much work the lookup experiment does.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LookupConfig {
    /// Addresses looked up per family (split among threads for the all-cores figure).
    pub queries: usize,
    /// Updates replayed per family; the whole day when `None`.
    pub update_limit: Option<usize>,
    /// How lookups are timed.
    pub plan: Plan,
    /// Builds per engine; the median build time is reported.
    pub build_runs: usize,
    /// Addresses per `lookup_batch` call (a receive burst).
    pub batch: usize,
    /// Time an engine may spend on the update replay; a slower engine's
    /// rate is taken over the updates it applied by then.
    #[serde(with = "crate::timing::seconds")]
    pub replay_budget: Duration,
}

impl LookupConfig {
    /// `--quick`: 256 Ki queries, the first 200,000 updates, one build.
    pub fn quick() -> Self {
        Self {
            queries: 1 << 18,
            update_limit: Some(200_000),
            plan: Plan::QUICK,
            build_runs: 1,
            batch: 256,
            replay_budget: Duration::from_secs(3),
        }
    }

    /// The full run: 2 Mi queries, every update, median of 3 builds.
    pub fn full() -> Self {
        Self {
            queries: 1 << 21,
            update_limit: None,
            plan: Plan::FULL,
            build_runs: 3,
            batch: 256,
            replay_budget: Duration::from_secs(10),
        }
    }
}

/// The lookup experiment; its work follows the mode unless a config is given.
#[derive(Debug, Clone, Default)]
pub struct LookupExperiment {
    config: Option<LookupConfig>,
}

impl LookupExperiment {
    /// The experiment with a fixed amount of work, whatever the mode.
    ///
    /// ```no_run
    /// use fibre_bench::experiment::run_experiments;
    /// use fibre_bench::lookup::{self, LookupConfig, LookupExperiment};
    /// use fibre_bench::{Options, Registered};
    /// let few = LookupConfig { queries: 10_000, ..LookupConfig::quick() };
    /// let experiment = LookupExperiment::with_config(few);
    /// let experiments = vec![Registered::new(lookup::NAME, lookup::ABOUT, experiment)];
    /// let outcome = run_experiments(&Options::default(), Some("lookup"), experiments).unwrap();
    /// print!("{}", outcome.to_text());
    /// ```
    pub fn with_config(config: LookupConfig) -> Self {
        Self {
            config: Some(config),
        }
    }
}

/// The experiment's name on the command line (`fibre bench lookup`).
pub const NAME: &str = "lookup";
/// One line on what it measures (`fibre bench --list`).
pub const ABOUT: &str =
    "LPM lookups/s, build time, bytes/prefix and update rate of fibre and peer crates on the RIS tables";

impl Experiment for LookupExperiment {
    fn run(&self, ctx: &Context) -> Result<ExperimentReport, BenchError> {
        let config = ctx.work(&self.config, LookupConfig::quick, LookupConfig::full);
        let dir = data::resolve_data_dir(ctx.data_dir.as_deref())?;
        let families = ctx.per_family(
            || run::run_family::<u32>(ctx, &config, &dir),
            || run::run_family::<u128>(ctx, &config, &dir),
        )?;
        let mut text = String::new();
        let _ = writeln!(
            text,
            "lookup: longest-prefix match on a full table and a day of updates \
             (data: RIPE NCC RIS, bview 2026-05-11 00:00 UTC, peer AS3333)"
        );
        for family in &families {
            text.push('\n');
            text.push_str(&render::render_family(family, &config));
        }
        let measurements = families.iter().flat_map(render::headline).collect();
        Ok(ExperimentReport {
            experiment: NAME.to_string(),
            text,
            detail: json!({ "config": config, "families": families }),
            measurements,
        })
    }
}
