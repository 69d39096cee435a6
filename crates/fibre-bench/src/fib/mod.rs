//! `fibre bench fib`: the FIB's data path on the full RIS tables, one key
//! at a time (the per-key loop, `lookup_output_batch_v4` and its kin)
//! against bursts (`lookup_output_burst_v4` and its kin: the LPM's
//! lockstep walk for the whole burst, table by table in rule order), with
//! the raw LPM's batched rate on the same addresses beside them as the
//! ceiling.
//!
//! For each family the experiment loads the full table into table main of
//! a [`Fib`] (every prefix via one of `--gateways` gateways on the uplink,
//! as the lookup experiment assigns them), draws the lookup experiment's
//! addresses, and times, on 1 thread and on all threads:
//!
//! - the output form (`ip route get DST mark M`) and the input form
//!   (`ip route get DST from SRC iif wan0`), per key and in bursts;
//! - first with the default rules (IPv4: the kernel's merged local+main
//!   fast path; IPv6: local, main), then with wg-quick's rules in front
//!   (`not fwmark 0xca6c table 51820`, `table main suppress_prefixlength
//!   0`, a default route in table 51820), half the keys carrying the mark.
//!
//! Before timing, every burst's answers are checked against the per-key
//! answers; a difference stops the run.

pub(crate) mod setup;

use std::fmt::Write as _;

use fibre_fib::{Errno, Fib};
use serde::Serialize;
use serde_json::json;

use crate::data;
use crate::experiment::{Context, Experiment};
use crate::queries;
use crate::report::{format_value, ExperimentReport, Measurement};
use crate::router;
use crate::table::{Align, Table};
use crate::timing::{self, Plan, Rate};
use crate::BenchError;

pub use setup::{FibFamily, Form};

/// How much work the experiment does.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FibConfig {
    /// Keys looked up per family (split among threads for the all-cores figures).
    pub queries: usize,
    /// Keys per burst (a forwarding worker's receive burst).
    pub burst: usize,
    /// How lookups are timed.
    pub plan: Plan,
}

impl FibConfig {
    /// `--quick`: 64 Ki keys.
    pub fn quick() -> Self {
        Self {
            queries: 1 << 16,
            burst: 256,
            plan: Plan::QUICK,
        }
    }

    /// The full run: 1 Mi keys.
    pub fn full() -> Self {
        Self {
            queries: 1 << 20,
            burst: 256,
            plan: Plan::FULL,
        }
    }
}

/// The experiment; its work follows the mode unless a config is given.
#[derive(Debug, Clone, Default)]
pub struct FibExperiment {
    config: Option<FibConfig>,
}

impl FibExperiment {
    /// The experiment with a fixed amount of work, whatever the mode.
    pub fn with_config(config: FibConfig) -> Self {
        Self {
            config: Some(config),
        }
    }
}

/// Per-key or burst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// One lookup per key: the before.
    PerKey,
    /// The burst API.
    Burst,
}

/// The rates of one case (family, rules, form).
#[derive(Debug, Clone, Serialize)]
pub struct CaseFigures {
    /// "default rules" or "wg-quick rules".
    pub rules: &'static str,
    /// "output" or "input".
    pub form: &'static str,
    /// Per key, 1 thread.
    pub per_key: Rate,
    /// Bursts, 1 thread.
    pub burst: Rate,
    /// Per key, all threads.
    pub per_key_all: Rate,
    /// Bursts, all threads.
    pub burst_all: Rate,
}

/// One family's figures.
#[derive(Debug, Clone, Serialize)]
pub struct FamilyFigures {
    /// "IPv4" or "IPv6".
    pub family: &'static str,
    /// Prefixes in table main.
    pub prefixes: usize,
    /// The raw LPM's `lookup_batch` on the same addresses, 1 thread.
    pub lpm_batched: Rate,
    /// The same, all threads.
    pub lpm_batched_all: Rate,
    /// The raw LPM's single `lookup`, 1 thread.
    pub lpm_single: Rate,
    /// Every case.
    pub cases: Vec<CaseFigures>,
}

/// The experiment's name on the command line (`fibre bench fib`).
pub const NAME: &str = "fib";
/// One line on what it measures (`fibre bench --list`).
pub const ABOUT: &str =
    "FIB lookups/s per key against bursts (output and input, default and wg-quick rules) on the RIS tables, the raw LPM beside them";

impl Experiment for FibExperiment {
    fn run(&self, ctx: &Context) -> Result<ExperimentReport, BenchError> {
        let config = ctx.work(&self.config, FibConfig::quick, FibConfig::full);
        let dir = data::resolve_data_dir(ctx.data_dir.as_deref())?;
        let families = ctx.per_family(
            || run_family::<u32>(ctx, &config, &dir),
            || run_family::<u128>(ctx, &config, &dir),
        )?;
        let mut text = String::new();
        let _ = writeln!(
            text,
            "fib: the FIB's data path per key and in bursts of {} on the full RIS tables \
             (M lookups/s, median; {} threads for \"all\")",
            config.burst, ctx.threads
        );
        for f in &families {
            text.push('\n');
            text.push_str(&render(f));
        }
        let measurements = families.iter().flat_map(headline).collect();
        Ok(ExperimentReport {
            experiment: NAME.to_string(),
            text,
            detail: json!({ "config": config, "threads": ctx.threads, "families": families }),
            measurements,
        })
    }
}

fn render(f: &FamilyFigures) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} prefixes; raw LPM: single {} M/s, batched {} M/s (1 thread), {} M/s (all)",
        f.family,
        f.prefixes,
        format_value(f.lpm_single.millions()),
        format_value(f.lpm_batched.millions()),
        format_value(f.lpm_batched_all.millions()),
    );
    let mut table = Table::new(&[
        ("rules", Align::Left),
        ("form", Align::Left),
        ("per key", Align::Right),
        ("burst", Align::Right),
        ("burst/per key", Align::Right),
        ("burst/LPM", Align::Right),
        ("per key all", Align::Right),
        ("burst all", Align::Right),
        ("ratio all", Align::Right),
    ]);
    for c in &f.cases {
        table.row(vec![
            c.rules.to_string(),
            c.form.to_string(),
            format_value(c.per_key.millions()),
            format_value(c.burst.millions()),
            format!("{:.2}x", c.burst.over(&c.per_key)),
            format!("{:.2}x", c.burst.over(&f.lpm_batched)),
            format_value(c.per_key_all.millions()),
            format_value(c.burst_all.millions()),
            format!("{:.2}x", c.burst_all.over(&c.per_key_all)),
        ]);
    }
    out.push_str(&table.render());
    out
}

/// The summary rows: each case's burst rate against its per-key rate,
/// and the default-rules output burst against the raw LPM.
fn headline(f: &FamilyFigures) -> Vec<Measurement> {
    let per_key = f
        .cases
        .iter()
        .map(|c| (c, "1 thread", &c.per_key, "per key"));
    let lpm = f
        .cases
        .first()
        .map(|c| (c, "vs raw LPM", &f.lpm_batched, "LPM lookup_batch"));
    per_key
        .chain(lpm)
        .map(|(c, against, base, to)| {
            Measurement::rate_over(
                format!("{} {} burst, {}, {against}", f.family, c.form, c.rules),
                &c.burst,
                "M lookups/s",
                base,
                to,
            )
        })
        .collect()
}

/// One family: load, build, check, time.
fn run_family<K: FibFamily>(
    ctx: &Context,
    config: &FibConfig,
    dir: &std::path::Path,
) -> Result<FamilyFigures, BenchError> {
    let table = data::load_table::<K>(&data::table_path::<K>(dir), &ctx.progress)?;
    let seed = ctx.seed ^ u64::from(K::BITS) ^ 0xf1b;
    let dsts = queries::for_kind(K::QUERY_KIND, &table, config.queries, seed);
    let srcs = queries::for_kind(K::QUERY_KIND, &table, config.queries, seed ^ 1);
    let (mut fib, uplink) = setup::router::<K>(&table, ctx.gateways)?;
    let keys = setup::keys::<K>(&dsts, &srcs, seed);
    let burst = config.burst.max(1);
    let plan = &config.plan;
    let threads = ctx.threads;

    // The raw LPM on the same prefixes and addresses: the ceiling.
    let lpm = router::raw_lpm(&table)?;
    let lpm_pass = |share: &[K]| router::lpm_batched_pass(&lpm, share, burst);
    let lpm_batched = timing::rate(plan, || lpm_pass(&dsts));
    let lpm_batched_all =
        timing::rate_parallel(plan, threads, |i| lpm_pass(share(&dsts, i, threads)));
    let lpm_single = timing::rate(plan, || {
        for &d in &dsts {
            std::hint::black_box(lpm.lookup(d));
        }
        dsts.len() as u64
    });
    drop(lpm);

    let mut cases = Vec::new();
    for rules in ["default rules", "wg-quick rules"] {
        if rules == "wg-quick rules" {
            setup::add_wg_quick_rules::<K>(&mut fib)?;
        }
        for (form_name, form) in [("output", Form::Output), ("input", Form::Input(uplink))] {
            check_agreement::<K>(&fib, form, &keys, burst)?;
            let pass = |mode: Mode, share: &[K::FlowKey]| -> u64 {
                let mut out = vec![Err(Errno::Inval); burst];
                for chunk in share.chunks(burst) {
                    let out = &mut out[..chunk.len()];
                    K::lookup(&fib, form, mode, chunk, out);
                    std::hint::black_box(&out);
                }
                share.len() as u64
            };
            let per_key = timing::rate(plan, || pass(Mode::PerKey, &keys));
            let burst_rate = timing::rate(plan, || pass(Mode::Burst, &keys));
            let per_key_all = timing::rate_parallel(plan, threads, |i| {
                pass(Mode::PerKey, share(&keys, i, threads))
            });
            let burst_all = timing::rate_parallel(plan, threads, |i| {
                pass(Mode::Burst, share(&keys, i, threads))
            });
            cases.push(CaseFigures {
                rules,
                form: form_name,
                per_key,
                burst: burst_rate,
                per_key_all,
                burst_all,
            });
        }
    }
    Ok(FamilyFigures {
        family: K::NAME,
        prefixes: table.len(),
        lpm_batched,
        lpm_batched_all,
        lpm_single,
        cases,
    })
}

/// Thread `i`'s share of `all` among `threads`.
fn share<T>(all: &[T], i: usize, threads: usize) -> &[T] {
    let per = all.len().div_ceil(threads.max(1));
    let start = (i * per).min(all.len());
    &all[start..(start + per).min(all.len())]
}

/// Stops the run if a burst answers any key otherwise than the per-key path.
fn check_agreement<K: FibFamily>(
    fib: &Fib,
    form: Form,
    keys: &[K::FlowKey],
    burst: usize,
) -> Result<(), BenchError> {
    let mut want = vec![Err(Errno::Inval); burst];
    let mut got = vec![Err(Errno::Inval); burst];
    for (n, chunk) in keys.chunks(burst).enumerate() {
        let (want, got) = (&mut want[..chunk.len()], &mut got[..chunk.len()]);
        K::lookup(fib, form, Mode::PerKey, chunk, want);
        K::lookup(fib, form, Mode::Burst, chunk, got);
        if let Some(i) = (0..chunk.len()).find(|&i| want[i] != got[i]) {
            return Err(BenchError::Engine {
                engine: "fibre-fib burst",
                prefix: format!("{:?}", chunk[i]),
                message: format!(
                    "key {}: burst answered {:?}, per key {:?}",
                    n * burst + i,
                    got[i],
                    want[i]
                ),
            });
        }
    }
    Ok(())
}
