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

mod subject;

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;
use serde_json::json;

use crate::data::{self, Prefix, Update};
use crate::engines::{Engine, FibreEngine, PoptrieCrateEngine, PrefixTrieEngine, TreeBitmapEngine};
use crate::experiment::{Context, Experiment};
use crate::family::{Family, QueryKind};
use crate::nexthop::{next_hop_for, NextHop};
use crate::progress::Progress;
use crate::queries;
use crate::report::{format_value, ExperimentReport, Measurement};
use crate::table::{Align, Table};
use crate::timing::{self, Plan, Rate};
use crate::BenchError;
use subject::Subject;

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
    #[serde(serialize_with = "seconds")]
    pub replay_budget: Duration,
}

fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
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
    pub fn with_config(config: LookupConfig) -> Self {
        Self {
            config: Some(config),
        }
    }
}

/// The figures of one engine on one family. Rates are per second.
#[derive(Debug, Clone, Serialize)]
pub struct EngineFigures {
    /// The engine.
    pub engine: &'static str,
    /// fibre's own engine?
    pub fibre: bool,
    /// Seconds to insert the whole table into an empty engine (median of the builds).
    pub build_seconds: f64,
    /// The memory figure: `lookup_bytes()` for fibre, heap bytes for the peers.
    pub bytes: Option<usize>,
    /// Where [`EngineFigures::bytes`] comes from.
    pub bytes_source: &'static str,
    /// Heap bytes the build left allocated (counting allocator), every engine.
    pub heap_bytes: Option<usize>,
    /// [`EngineFigures::bytes`] over the table's prefixes.
    pub bytes_per_prefix: Option<f64>,
    /// One thread, one `lookup` per address.
    pub single_1t: Rate,
    /// One thread, `lookup_batch`; engines with a batched lookup only.
    pub batched_1t: Option<Rate>,
    /// All threads at once (batched where the engine has it).
    pub all_threads: Rate,
    /// The engine's best one-thread rate over the best peer's.
    pub ratio_to_best_peer: Option<f64>,
    /// Updates applied per second during the replay.
    pub updates_per_second: f64,
    /// Updates applied: all of them, unless the replay budget ran out.
    pub updates_applied: usize,
}

impl EngineFigures {
    /// The better of the single and batched one-thread rates.
    pub fn best_1t(&self) -> f64 {
        self.batched_1t
            .map_or(0.0, |r| r.median)
            .max(self.single_1t.median)
    }
}

/// The figures of one family.
#[derive(Debug, Clone, Serialize)]
pub struct FamilyFigures {
    /// "IPv4" or "IPv6".
    pub family: &'static str,
    /// Prefixes in the table.
    pub prefixes: usize,
    /// How the queries were drawn.
    pub query_kind: QueryKind,
    /// Queries per pass.
    pub queries: usize,
    /// Queries that matched some prefix.
    pub queries_matched: usize,
    /// Next-hop ids.
    pub gateways: u16,
    /// Threads of the all-threads figure.
    pub threads: usize,
    /// Updates replayed.
    pub updates: usize,
    /// Of which withdrawals.
    pub withdrawals: usize,
    /// Queries on which the engines disagreed (any is an error, so 0).
    pub disagreements: usize,
    /// The same after the replay.
    pub disagreements_after_updates: usize,
    /// The peer with the best one-thread rate.
    pub best_peer: Option<&'static str>,
    /// Per engine.
    pub engines: Vec<EngineFigures>,
}

impl Experiment for LookupExperiment {
    fn name(&self) -> &'static str {
        "lookup"
    }

    fn about(&self) -> &'static str {
        "LPM lookups/s, build time, bytes/prefix and update rate of fibre and peer crates on the RIS tables"
    }

    fn run(&self, ctx: &Context) -> Result<ExperimentReport, BenchError> {
        let config = self.config.clone().unwrap_or_else(|| {
            if ctx.quick {
                LookupConfig::quick()
            } else {
                LookupConfig::full()
            }
        });
        let dir = data::resolve_data_dir(ctx.data_dir.as_deref())?;
        let mut families = Vec::new();
        if ctx.ipv4 {
            families.push(run_family::<u32>(ctx, &config, &dir)?);
        }
        if ctx.ipv6 {
            families.push(run_family::<u128>(ctx, &config, &dir)?);
        }
        let mut text = String::new();
        let _ = writeln!(
            text,
            "lookup: longest-prefix match on a full table and a day of updates \
             (data: RIPE NCC RIS, bview 2026-05-11 00:00 UTC, peer AS3333)"
        );
        for family in &families {
            text.push('\n');
            text.push_str(&render_family(family, &config));
        }
        let measurements = families.iter().flat_map(headline).collect();
        Ok(ExperimentReport {
            experiment: self.name().to_string(),
            text,
            detail: json!({ "config": config, "families": families }),
            measurements,
        })
    }
}

/// Everything one family needs.
struct Inputs<K> {
    table: Vec<Prefix<K>>,
    next_hops: Vec<NextHop>,
    updates: Vec<Update<K>>,
    update_hops: Vec<NextHop>,
    queries: Vec<K>,
}

fn load<K: Family>(
    ctx: &Context,
    config: &LookupConfig,
    dir: &std::path::Path,
) -> Result<Inputs<K>, BenchError> {
    let table = data::load_table::<K>(&data::table_path::<K>(dir), &ctx.progress)?;
    let updates = data::load_updates::<K>(
        &data::updates_path::<K>(dir),
        config.update_limit,
        &ctx.progress,
    )?;
    let hop = |p: &Prefix<K>| next_hop_for(p.addr, p.len, ctx.gateways);
    let next_hops = table.iter().map(hop).collect();
    let update_hops = updates
        .iter()
        .map(|u| match u {
            Update::Announce(p) => hop(p),
            Update::Withdraw(_) => 0,
        })
        .collect();
    // Each family draws from its own stream of the seed.
    let seed = ctx.seed ^ u64::from(K::BITS);
    let queries = queries::for_kind(K::QUERY_KIND, &table, config.queries, seed);
    Ok(Inputs {
        table,
        next_hops,
        updates,
        update_hops,
        queries,
    })
}

/// Build statistics of one engine.
struct Built<K> {
    subject: Box<dyn Subject<K>>,
    build_seconds: f64,
    heap_bytes: Option<usize>,
}

fn build_engine<K: Family, E: Engine<K> + 'static>(
    inputs: &Inputs<K>,
    config: &LookupConfig,
    progress: &Progress,
) -> Result<Built<K>, BenchError> {
    let runs = config.build_runs.max(1);
    let mut seconds = Vec::with_capacity(runs);
    let mut last = None;
    for run in 0..runs {
        // Drop the previous build first, so that builds do not add up in memory.
        drop(last.take());
        let bar = progress.bar(
            inputs.table.len() as u64,
            format!("{} {}: build {}/{}", K::NAME, E::NAME, run + 1, runs),
        );
        let (built, heap) = crate::alloc_count::measure(|| {
            subject::build::<K, E>(&inputs.table, &inputs.next_hops, &bar)
        });
        bar.finish_and_clear();
        let (engine, took) = built?;
        seconds.push(took.as_secs_f64());
        last = Some((engine, heap));
    }
    let (engine, heap_bytes) = last.expect("at least one build");
    Ok(Built {
        subject: Box::new(engine),
        build_seconds: timing::median(&seconds),
        heap_bytes,
    })
}

/// Compares every engine's answers with the first engine's.
fn disagreements<K: Family>(
    family: &'static str,
    when: &'static str,
    queries: &[K],
    answers: &[(&'static str, Vec<Option<NextHop>>)],
) -> Result<usize, BenchError> {
    let Some((_, reference)) = answers.first() else {
        return Ok(0);
    };
    let differing: Vec<usize> = (0..queries.len())
        .filter(|&i| answers.iter().any(|(_, a)| a[i] != reference[i]))
        .collect();
    if differing.is_empty() {
        return Ok(0);
    }
    let examples = differing
        .iter()
        .take(3)
        .map(|&i| {
            let each = answers
                .iter()
                .map(|(name, a)| format!("{name}={:?}", a[i]))
                .collect::<Vec<_>>()
                .join(" ");
            format!("{}: {each}", queries[i].format_addr())
        })
        .collect::<Vec<_>>()
        .join("; ");
    Err(BenchError::Disagreement {
        family,
        count: differing.len(),
        total: queries.len(),
        when,
        examples,
    })
}

/// Every engine's answers to `queries`, and the batched ones of engines that batch.
fn all_answers<'a, K: Family>(
    subjects: impl Iterator<Item = &'a dyn Subject<K>>,
    queries: &[K],
    batch: usize,
) -> Vec<(&'static str, Vec<Option<NextHop>>)> {
    let mut answers = Vec::new();
    for s in subjects {
        answers.push((s.name(), s.answers(queries)));
        if s.native_batch() {
            answers.push((s.name(), s.answers_batched(queries, batch)));
        }
    }
    answers
}

/// A family and the engines compared on it. The peers' crates bound their
/// key types by their own traits, which `u32` and `u128` meet but a generic
/// key does not, so the list is spelled out once per key type.
trait Compared: Family {
    fn build_all(
        inputs: &Inputs<Self>,
        config: &LookupConfig,
        progress: &Progress,
    ) -> Result<Vec<Built<Self>>, BenchError>;
}

macro_rules! compared {
    ($($key:ty),*) => {$(
        impl Compared for $key {
            fn build_all(
                inputs: &Inputs<Self>,
                config: &LookupConfig,
                progress: &Progress,
            ) -> Result<Vec<Built<Self>>, BenchError> {
                Ok(vec![
                    build_engine::<$key, FibreEngine<$key>>(inputs, config, progress)?,
                    build_engine::<$key, PrefixTrieEngine<$key>>(inputs, config, progress)?,
                    build_engine::<$key, PoptrieCrateEngine<$key>>(inputs, config, progress)?,
                    build_engine::<$key, TreeBitmapEngine<$key>>(inputs, config, progress)?,
                ])
            }
        }
    )*};
}

compared!(u32, u128);

fn run_family<K: Compared>(
    ctx: &Context,
    config: &LookupConfig,
    dir: &std::path::Path,
) -> Result<FamilyFigures, BenchError> {
    let inputs = load::<K>(ctx, config, dir)?;
    let progress = &ctx.progress;
    let mut engines = K::build_all(&inputs, config, progress)?;

    let answers = all_answers(
        engines.iter().map(|e| e.subject.as_ref()),
        &inputs.queries,
        config.batch,
    );
    let disagreed = disagreements(K::NAME, "on the full table", &inputs.queries, &answers)?;
    let queries_matched = answers
        .first()
        .map_or(0, |(_, a)| a.iter().filter(|x| x.is_some()).count());
    drop(answers);

    let plan = &config.plan;
    let timings = engines.len() * 3;
    let bar = progress.bar(timings as u64, format!("{} timing lookups", K::NAME));
    let mut rates = Vec::new();
    for e in &engines {
        let s = &e.subject;
        let single = s.rate_single(plan, &inputs.queries);
        bar.inc(1);
        let batched = s
            .native_batch()
            .then(|| s.rate_batched(plan, &inputs.queries, config.batch));
        bar.inc(1);
        let batch = s.native_batch().then_some(config.batch);
        let all = s.rate_parallel(plan, ctx.threads, &inputs.queries, batch);
        bar.inc(1);
        rates.push((single, batched, all));
    }
    bar.finish_and_clear();

    let mut update_rates = Vec::new();
    for e in &mut engines {
        let bar = progress.bar(
            inputs.updates.len() as u64,
            format!("{} {}: replaying updates", K::NAME, e.subject.name()),
        );
        let (applied, spent) = e.subject.replay(
            &inputs.updates,
            &inputs.update_hops,
            config.replay_budget,
            &bar,
        )?;
        bar.finish_and_clear();
        update_rates.push((applied as f64 / spent.as_secs_f64().max(1e-9), applied));
    }
    // Engines cut short by the budget hold another state: compare the rest.
    let complete = engines
        .iter()
        .zip(&update_rates)
        .filter(|(_, (_, applied))| *applied == inputs.updates.len())
        .map(|(e, _)| e.subject.as_ref());
    let answers = all_answers(complete, &inputs.queries, config.batch);
    let disagreed_after = disagreements(
        K::NAME,
        "after the update replay",
        &inputs.queries,
        &answers,
    )?;

    let prefixes = inputs.table.len();
    let mut figures: Vec<EngineFigures> = engines
        .iter()
        .zip(rates)
        .zip(update_rates)
        .map(
            |((e, (single, batched, all)), (updates_per_second, updates_applied))| {
                let (bytes, bytes_source) = match e.subject.lookup_bytes() {
                    Some(b) => (Some(b), "lookup_bytes()"),
                    None if e.heap_bytes.is_some() => (e.heap_bytes, "counting allocator"),
                    None => (None, "unavailable (counting allocator not installed)"),
                };
                EngineFigures {
                    engine: e.subject.name(),
                    fibre: e.subject.is_fibre(),
                    build_seconds: e.build_seconds,
                    bytes,
                    bytes_source,
                    heap_bytes: e.heap_bytes,
                    bytes_per_prefix: bytes
                        .filter(|_| prefixes > 0)
                        .map(|b| b as f64 / prefixes as f64),
                    single_1t: single,
                    batched_1t: batched,
                    all_threads: all,
                    ratio_to_best_peer: None,
                    updates_per_second,
                    updates_applied,
                }
            },
        )
        .collect();
    let best_peer = figures
        .iter()
        .filter(|f| !f.fibre)
        .max_by(|a, b| a.best_1t().total_cmp(&b.best_1t()))
        .map(|f| (f.engine, f.best_1t()));
    if let Some((_, best)) = best_peer.filter(|(_, best)| *best > 0.0) {
        for f in &mut figures {
            f.ratio_to_best_peer = Some(f.best_1t() / best);
        }
    }
    Ok(FamilyFigures {
        family: K::NAME,
        prefixes,
        query_kind: K::QUERY_KIND,
        queries: inputs.queries.len(),
        queries_matched,
        gateways: ctx.gateways,
        threads: ctx.threads,
        updates: inputs.updates.len(),
        withdrawals: inputs
            .updates
            .iter()
            .filter(|u| matches!(u, Update::Withdraw(_)))
            .count(),
        disagreements: disagreed,
        disagreements_after_updates: disagreed_after,
        best_peer: best_peer.map(|(name, _)| name),
        engines: figures,
    })
}

fn millions(per_second: f64) -> String {
    format_value(per_second / 1e6)
}

fn render_family(f: &FamilyFigures, config: &LookupConfig) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} prefixes, next hops hashed onto {} gateways; {} {}, {} matched; \
         bursts of {}; {} updates replayed ({} withdrawals); engines agreed on every query \
         before and after the replay",
        f.family,
        f.prefixes,
        f.gateways,
        f.queries,
        f.query_kind.describe(),
        f.queries_matched,
        config.batch,
        f.updates,
        f.withdrawals,
    );
    let threads_title = format!("{} thr M/s", f.threads);
    let mut table = Table::new(&[
        ("engine", Align::Left),
        ("build s", Align::Right),
        ("B/prefix", Align::Right),
        ("1 thr single M/s", Align::Right),
        ("1 thr batch M/s", Align::Right),
        (threads_title.as_str(), Align::Right),
        ("vs best peer", Align::Right),
        ("updates M/s", Align::Right),
    ]);
    for e in &f.engines {
        table.row(vec![
            e.engine.to_string(),
            format_value(e.build_seconds),
            e.bytes_per_prefix.map_or("n/a".into(), format_value),
            millions(e.single_1t.median),
            e.batched_1t.map_or("-".into(), |r| millions(r.median)),
            millions(e.all_threads.median),
            e.ratio_to_best_peer
                .map_or("-".into(), |r| format!("{r:.2}x")),
            if e.updates_applied < f.updates {
                format!("{}*", millions(e.updates_per_second))
            } else {
                millions(e.updates_per_second)
            },
        ]);
    }
    out.push_str(&table.render());
    for e in f.engines.iter().filter(|e| e.updates_applied < f.updates) {
        let _ = writeln!(
            out,
            "* {}: the replay budget of {} s ran out after {} of the {} updates; its rate is \
             over those, and it sat out the agreement check after the replay.",
            e.engine,
            config.replay_budget.as_secs_f64(),
            e.updates_applied,
            f.updates
        );
    }
    if let Some(fibre) = f.engines.iter().find(|e| e.fibre) {
        let heap = fibre.heap_bytes.map_or("n/a".into(), |b| {
            format_value(b as f64 / f.prefixes.max(1) as f64)
        });
        let _ = writeln!(
            out,
            "B/prefix: fibre = lookup_bytes() (its whole heap: {heap} B/prefix); peers = heap \
             their build left allocated (counting allocator). vs best peer: best 1-thread rate \
             over {}'s.",
            f.best_peer.unwrap_or("the best peer")
        );
    }
    out
}

/// The family's rows of the summary table: fibre's figures, each against the
/// peer that does best on it.
fn headline(f: &FamilyFigures) -> Vec<Measurement> {
    let Some(fibre) = f.engines.iter().find(|e| e.fibre) else {
        return Vec::new();
    };
    let peers: Vec<&EngineFigures> = f.engines.iter().filter(|e| !e.fibre).collect();
    let best_peer_by = |key: &dyn Fn(&EngineFigures) -> Option<f64>, higher_is_better: bool| {
        peers
            .iter()
            .filter_map(|p| key(p).map(|v| (p.engine, v)))
            .filter(|(_, v)| *v > 0.0)
            .reduce(|a, b| {
                if (b.1 > a.1) == higher_is_better {
                    b
                } else {
                    a
                }
            })
    };
    let fam = f.family;
    let mut rows = Vec::new();
    let with_peer = |m: Measurement, value: f64, peer: Option<(&str, f64)>| match peer {
        Some((name, peer_value)) => m.with_ratio(value / peer_value, format!("best peer ({name})")),
        None => m,
    };
    let peer_1t = best_peer_by(&|p| Some(p.best_1t()), true);
    if let Some(batched) = fibre.batched_1t.map(|r| r.median) {
        rows.push(with_peer(
            Measurement::new(
                format!("{fam} fibre 1 thread batched"),
                batched / 1e6,
                "M lookups/s",
            ),
            batched,
            peer_1t,
        ));
    }
    rows.push(with_peer(
        Measurement::new(
            format!("{fam} fibre 1 thread single"),
            fibre.single_1t.median / 1e6,
            "M lookups/s",
        ),
        fibre.single_1t.median,
        peer_1t,
    ));
    let mut all = Measurement::new(
        format!("{fam} fibre {} threads", f.threads),
        fibre.all_threads.median / 1e6,
        "M lookups/s",
    );
    if fibre.best_1t() > 0.0 {
        all = all.with_ratio(fibre.all_threads.median / fibre.best_1t(), "fibre 1 thread");
    }
    rows.push(all);
    if let Some(bpp) = fibre.bytes_per_prefix {
        rows.push(with_peer(
            Measurement::new(format!("{fam} fibre memory"), bpp, "B/prefix"),
            bpp,
            best_peer_by(&|p| p.bytes_per_prefix, false),
        ));
    }
    rows.push(with_peer(
        Measurement::new(format!("{fam} fibre build"), fibre.build_seconds, "s"),
        fibre.build_seconds,
        best_peer_by(&|p| Some(p.build_seconds), false),
    ));
    rows.push(with_peer(
        Measurement::new(
            format!("{fam} fibre update replay"),
            fibre.updates_per_second / 1e6,
            "M updates/s",
        ),
        fibre.updates_per_second,
        best_peer_by(&|p| Some(p.updates_per_second), true),
    ));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disagreements_are_counted_and_shown() {
        let queries = [0x0a00_0001u32, 0x0a00_0002, 0x0a00_0003];
        let same = vec![Some(1), None, Some(2)];
        let agreeing = [("a", same.clone()), ("b", same.clone())];
        assert_eq!(
            disagreements("IPv4", "now", &queries, &agreeing).unwrap(),
            0
        );
        assert_eq!(disagreements::<u32>("IPv4", "now", &[], &[]).unwrap(), 0);

        let differing = [("a", same.clone()), ("b", vec![Some(1), Some(3), None])];
        let error = disagreements("IPv4", "now", &queries, &differing).unwrap_err();
        match &error {
            BenchError::Disagreement { count, total, .. } => assert_eq!((*count, *total), (2, 3)),
            other => panic!("{other}"),
        }
        let text = error.to_string();
        assert!(text.contains("10.0.0.2: a=None b=Some(3)"), "{text}");
    }

    #[test]
    fn headline_rows_compare_fibre_with_the_best_peer_of_each_figure() {
        let engine = |name, fibre, rate: f64, bytes: f64, build, updates| EngineFigures {
            engine: name,
            fibre,
            build_seconds: build,
            bytes: Some(1),
            bytes_source: "test",
            heap_bytes: None,
            bytes_per_prefix: Some(bytes),
            single_1t: Rate::of(&[rate]),
            batched_1t: fibre.then_some(Rate::of(&[rate * 2.0])),
            all_threads: Rate::of(&[rate * 3.0]),
            ratio_to_best_peer: None,
            updates_per_second: updates,
            updates_applied: 10,
        };
        let family = FamilyFigures {
            family: "IPv4",
            prefixes: 10,
            query_kind: QueryKind::Uniform,
            queries: 10,
            queries_matched: 5,
            gateways: 16,
            threads: 2,
            updates: 10,
            withdrawals: 1,
            disagreements: 0,
            disagreements_after_updates: 0,
            best_peer: Some("fast"),
            engines: vec![
                engine("fibre", true, 100e6, 4.0, 0.5, 1e6),
                engine("fast", false, 50e6, 20.0, 0.2, 2e6),
                engine("small", false, 10e6, 8.0, 1.0, 4e6),
            ],
        };
        let rows = headline(&family);
        let row = |name: &str| rows.iter().find(|m| m.name == name).unwrap();
        assert_eq!(row("IPv4 fibre 1 thread batched").value, 200.0);
        assert_eq!(
            row("IPv4 fibre 1 thread batched").ratio_text(),
            "4.00x best peer (fast)"
        );
        assert_eq!(
            row("IPv4 fibre 1 thread single").ratio_text(),
            "2.00x best peer (fast)"
        );
        assert_eq!(
            row("IPv4 fibre 2 threads").ratio_text(),
            "1.50x fibre 1 thread"
        );
        assert_eq!(
            row("IPv4 fibre memory").ratio_text(),
            "0.50x best peer (small)"
        );
        assert_eq!(
            row("IPv4 fibre build").ratio_text(),
            "2.50x best peer (fast)"
        );
        assert_eq!(
            row("IPv4 fibre update replay").ratio_text(),
            "0.25x best peer (small)"
        );
        assert_eq!(rows.len(), 6);
    }
}
