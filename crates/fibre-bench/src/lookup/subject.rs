//! An engine under test, built and ready: the measurements the lookup
//! experiment takes of it, compiled per engine type behind one object-safe
//! trait, so the experiment can hold different engines in one list while
//! each timed loop calls its engine's `lookup` directly.

use std::hint::black_box;
use std::time::Duration;

use indicatif::ProgressBar;

use crate::data::{Prefix, Update};
use crate::engines::Engine;
use crate::family::Family;
use crate::nexthop::NextHop;
use crate::timing::{self, Plan, Rate};
use crate::BenchError;

/// Prefixes inserted between two looks at the clock and the progress bar.
const BUILD_CHUNK: usize = 1 << 14;
/// Updates applied between two looks at the clock, the budget and the
/// progress bar: small, as a slow engine may take seconds for this many.
const REPLAY_CHUNK: usize = 1 << 10;

/// A built engine and what can be measured of it.
pub(crate) trait Subject<K: Family>: Send + Sync {
    /// The engine's name.
    fn name(&self) -> &'static str;
    /// fibre's own engine?
    fn is_fibre(&self) -> bool;
    /// Does the engine have its own batched lookup?
    fn native_batch(&self) -> bool;
    /// The engine's own account of its lookup structure's bytes.
    fn lookup_bytes(&self) -> Option<usize>;
    /// The answer to every query, one `lookup` each.
    fn answers(&self, queries: &[K]) -> Vec<Option<NextHop>>;
    /// The answer to every query, by `lookup_batch` over bursts of `batch`.
    fn answers_batched(&self, queries: &[K], batch: usize) -> Vec<Option<NextHop>>;
    /// Lookups per second, one `lookup` per address, this thread.
    fn rate_single(&self, plan: &Plan, queries: &[K]) -> Rate;
    /// Lookups per second, `lookup_batch` over bursts of `batch`, this thread.
    fn rate_batched(&self, plan: &Plan, queries: &[K], batch: usize) -> Rate;
    /// Lookups per second of `threads` threads, each on its own slice of
    /// `queries`; batched in bursts of `batch` when given.
    fn rate_parallel(
        &self,
        plan: &Plan,
        threads: usize,
        queries: &[K],
        batch: Option<usize>,
    ) -> Rate;
    /// Applies `updates` in order (an announce's next hop is in `next_hops`)
    /// until they are done or `budget` is spent; returns how many were
    /// applied and the time spent applying them, bookkeeping excluded.
    fn replay(
        &mut self,
        updates: &[Update<K>],
        next_hops: &[NextHop],
        budget: Duration,
        bar: &ProgressBar,
    ) -> Result<(usize, Duration), BenchError>;
}

/// Builds an `E` holding `table` (prefix `i` maps to `next_hops[i]`), by
/// its bulk build if it has one, else by inserts; returns it and the time
/// spent building, bookkeeping between chunks of inserts excluded.
pub(crate) fn build<K: Family, E: Engine<K>>(
    table: &[Prefix<K>],
    next_hops: &[NextHop],
    bar: &ProgressBar,
) -> Result<(E, Duration), BenchError> {
    if let (Some(engine), took) = timing::time(|| E::bulk_build(table, next_hops)) {
        bar.inc(table.len() as u64);
        return Ok((engine, took));
    }
    let mut engine = E::empty();
    let mut spent = Duration::ZERO;
    for (prefixes, hops) in table.chunks(BUILD_CHUNK).zip(next_hops.chunks(BUILD_CHUNK)) {
        let (result, took) = timing::time(|| {
            for (prefix, hop) in prefixes.iter().zip(hops) {
                engine
                    .insert(*prefix, *hop)
                    .map_err(|message| (*prefix, message))?;
            }
            Ok(())
        });
        result.map_err(refused_by::<E, K>)?;
        spent += took;
        bar.inc(prefixes.len() as u64);
    }
    Ok((engine, spent))
}

fn pass_single<K: Family, E: Engine<K>>(engine: &E, queries: &[K]) -> u64 {
    for addr in queries {
        black_box(engine.lookup(*addr));
    }
    queries.len() as u64
}

fn pass_batched<K: Family, E: Engine<K>>(
    engine: &E,
    queries: &[K],
    out: &mut [Option<NextHop>],
) -> u64 {
    for burst in queries.chunks(out.len()) {
        let out = &mut out[..burst.len()];
        engine.lookup_batch(burst, out);
        black_box(out);
    }
    queries.len() as u64
}

/// The slice of `queries` thread `index` of `threads` works on.
fn share<K>(queries: &[K], threads: usize, index: usize) -> &[K] {
    let per_thread = queries.len().div_ceil(threads.max(1));
    let start = (per_thread * index).min(queries.len());
    &queries[start..(start + per_thread).min(queries.len())]
}

impl<K: Family, E: Engine<K>> Subject<K> for E {
    fn name(&self) -> &'static str {
        E::NAME
    }
    fn is_fibre(&self) -> bool {
        E::IS_FIBRE
    }
    fn native_batch(&self) -> bool {
        E::NATIVE_BATCH
    }
    fn lookup_bytes(&self) -> Option<usize> {
        Engine::lookup_bytes(self)
    }
    fn answers(&self, queries: &[K]) -> Vec<Option<NextHop>> {
        queries.iter().map(|a| self.lookup(*a)).collect()
    }
    fn answers_batched(&self, queries: &[K], batch: usize) -> Vec<Option<NextHop>> {
        let mut out = vec![None; queries.len()];
        for (burst, slots) in queries
            .chunks(batch.max(1))
            .zip(out.chunks_mut(batch.max(1)))
        {
            self.lookup_batch(burst, slots);
        }
        out
    }
    fn rate_single(&self, plan: &Plan, queries: &[K]) -> Rate {
        timing::rate(plan, || pass_single(self, queries))
    }
    fn rate_batched(&self, plan: &Plan, queries: &[K], batch: usize) -> Rate {
        let mut out = vec![None; batch.max(1)];
        timing::rate(plan, || pass_batched(self, queries, &mut out))
    }
    fn rate_parallel(
        &self,
        plan: &Plan,
        threads: usize,
        queries: &[K],
        batch: Option<usize>,
    ) -> Rate {
        timing::rate_parallel(plan, threads, |i| {
            let mine = share(queries, threads, i);
            match batch {
                // One burst buffer per pass: a few hundred bytes, against
                // passes of many thousand lookups.
                Some(batch) => pass_batched(self, mine, &mut vec![None; batch.max(1)]),
                None => pass_single(self, mine),
            }
        })
    }
    fn replay(
        &mut self,
        updates: &[Update<K>],
        next_hops: &[NextHop],
        budget: Duration,
        bar: &ProgressBar,
    ) -> Result<(usize, Duration), BenchError> {
        let mut spent = Duration::ZERO;
        let mut applied = 0;
        for (chunk, hops) in updates
            .chunks(REPLAY_CHUNK)
            .zip(next_hops.chunks(REPLAY_CHUNK))
        {
            if spent >= budget {
                break;
            }
            let (result, took) = timing::time(|| {
                for (update, hop) in chunk.iter().zip(hops) {
                    match update {
                        Update::Announce(p) => self.insert(*p, *hop).map_err(|m| (*p, m))?,
                        Update::Withdraw(p) => self.remove(*p).map_err(|m| (*p, m))?,
                    }
                }
                Ok(())
            });
            result.map_err(refused_by::<E, K>)?;
            spent += took;
            applied += chunk.len();
            bar.inc(chunk.len() as u64);
        }
        Ok((applied, spent))
    }
}

/// Engine `E`'s refusal of a prefix, as the benchmark reports it.
fn refused_by<E: Engine<K>, K: Family>((prefix, message): (Prefix<K>, String)) -> BenchError {
    BenchError::Engine {
        engine: E::NAME,
        prefix: prefix.to_string(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_the_queries_once() {
        let queries: Vec<u32> = (0..10).collect();
        let parts: Vec<&[u32]> = (0..3).map(|i| share(&queries, 3, i)).collect();
        assert_eq!(parts, [&[0, 1, 2, 3][..], &[4, 5, 6, 7], &[8, 9]]);
        // More threads than queries: the late threads get nothing, not a panic.
        assert!(share(&queries[..1], 4, 3).is_empty());
    }
}
