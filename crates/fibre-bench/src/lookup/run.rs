//! One family's run: load, build every engine, check agreement, time, replay.

use std::path::Path;

use crate::data::{self, Prefix, Update};
use crate::engines::{Engine, FibreEngine, PoptrieCrateEngine, PrefixTrieEngine, TreeBitmapEngine};
use crate::experiment::Context;
use crate::family::Family;
use crate::nexthop::{next_hop_for, NextHop};
use crate::progress::Progress;
use crate::queries;
use crate::timing;
use crate::BenchError;

use super::figures::{EngineFigures, FamilyFigures, Unavailable};
use super::subject::{self, Subject};
use super::LookupConfig;

/// Everything one family needs.
pub(super) struct Inputs<K> {
    table: Vec<Prefix<K>>,
    next_hops: Vec<NextHop>,
    updates: Vec<Update<K>>,
    update_hops: Vec<NextHop>,
    queries: Vec<K>,
}

fn load<K: Family>(
    ctx: &Context,
    config: &LookupConfig,
    dir: &Path,
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
pub(super) struct Built<K> {
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
pub(super) trait Compared: Family {
    /// Every engine built; a peer whose build failed or panicked is left out
    /// and listed with the reason (fibre's failure is an error).
    fn build_all(
        inputs: &Inputs<Self>,
        config: &LookupConfig,
        progress: &Progress,
    ) -> Result<(Vec<Built<Self>>, Vec<Unavailable>), BenchError>;
}

/// Builds the peer `E`, or says why it could not be built: a peer crate's
/// error or panic must not stop the comparison of the others.
fn build_peer<K: Family, E: Engine<K> + 'static>(
    inputs: &Inputs<K>,
    config: &LookupConfig,
    progress: &Progress,
    built: &mut Vec<Built<K>>,
    unavailable: &mut Vec<Unavailable>,
) {
    let attempt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        build_engine::<K, E>(inputs, config, progress)
    }));
    let reason = match attempt {
        Ok(Ok(engine)) => return built.push(engine),
        Ok(Err(error)) => error.to_string(),
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".into());
            format!("its build panicked: {message}")
        }
    };
    unavailable.push(Unavailable {
        engine: E::NAME,
        reason,
    });
}

macro_rules! compared {
    ($($key:ty),*) => {$(
        impl Compared for $key {
            fn build_all(
                inputs: &Inputs<Self>,
                config: &LookupConfig,
                progress: &Progress,
            ) -> Result<(Vec<Built<Self>>, Vec<Unavailable>), BenchError> {
                let mut built = vec![build_engine::<$key, FibreEngine<$key>>(inputs, config, progress)?];
                let mut unavailable = Vec::new();
                let (b, u) = (&mut built, &mut unavailable);
                build_peer::<$key, PrefixTrieEngine<$key>>(inputs, config, progress, b, u);
                build_peer::<$key, PoptrieCrateEngine<$key>>(inputs, config, progress, b, u);
                build_peer::<$key, TreeBitmapEngine<$key>>(inputs, config, progress, b, u);
                Ok((built, unavailable))
            }
        }
    )*};
}

compared!(u32, u128);

pub(super) fn run_family<K: Compared>(
    ctx: &Context,
    config: &LookupConfig,
    dir: &Path,
) -> Result<FamilyFigures, BenchError> {
    let inputs = load::<K>(ctx, config, dir)?;
    let progress = &ctx.progress;
    let (mut engines, unavailable) = K::build_all(&inputs, config, progress)?;

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
        unavailable,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A peer whose insert panics or fails, as a broken crate might.
    struct Broken<const PANICS: bool>;

    impl<const PANICS: bool> Engine<u32> for Broken<PANICS> {
        const NAME: &'static str = "broken";
        fn empty() -> Self {
            Broken
        }
        fn insert(&mut self, _: Prefix<u32>, _: NextHop) -> Result<(), String> {
            if PANICS {
                panic!("deliberately broken");
            }
            Err("refuses everything".into())
        }
        fn remove(&mut self, _: Prefix<u32>) -> Result<(), String> {
            Ok(())
        }
        fn lookup(&self, _: u32) -> Option<NextHop> {
            None
        }
    }

    #[test]
    fn a_broken_peer_is_left_out_with_its_reason() {
        let inputs = Inputs {
            table: vec![Prefix {
                addr: 0x0a00_0000u32,
                len: 8,
            }],
            next_hops: vec![1],
            updates: Vec::new(),
            update_hops: Vec::new(),
            queries: vec![0x0a01_0101],
        };
        let config = LookupConfig::quick();
        let progress = Progress::new(false);
        let (mut built, mut unavailable) = (Vec::new(), Vec::new());
        build_peer::<u32, Broken<true>>(&inputs, &config, &progress, &mut built, &mut unavailable);
        build_peer::<u32, Broken<false>>(&inputs, &config, &progress, &mut built, &mut unavailable);
        build_peer::<u32, PrefixTrieEngine<u32>>(
            &inputs,
            &config,
            &progress,
            &mut built,
            &mut unavailable,
        );
        assert_eq!(built.len(), 1);
        assert_eq!(built[0].subject.name(), "prefix-trie");
        assert_eq!(unavailable.len(), 2);
        assert!(
            unavailable[0]
                .reason
                .contains("panicked: deliberately broken"),
            "{:?}",
            unavailable[0]
        );
        assert!(
            unavailable[1].reason.contains("refuses everything"),
            "{:?}",
            unavailable[1]
        );
    }

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
}
