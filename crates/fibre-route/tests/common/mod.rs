//! What the tests that wire the cache to a published FIB share: commands
//! from `ip` lines, a writer with the cache listening, batches applied.

use std::sync::Arc;

use fibre_fib::config::parse_words;
use fibre_fib::shared::{BatchMode, FibWriter, SharedFib};
use fibre_fib::{Command, Fib};
use fibre_route::RouteCache;

/// The commands of one `ip` line (`route add ...`), which must parse.
pub fn commands(line: &str) -> Vec<Command> {
    let words: Vec<String> = line.split_whitespace().map(String::from).collect();
    parse_words(&words).unwrap()
}

/// `fib` published by a writer, and a cache over it in the FIB's domain
/// (two workers) that hears every batch.
pub fn wired(fib: Fib) -> (FibWriter, Arc<RouteCache<SharedFib>>) {
    let mut writer = FibWriter::new(fib);
    let shared = writer.shared();
    let cache = Arc::new(RouteCache::new(shared.domain(), shared.clone(), 2));
    writer.add_listener(cache.clone());
    (writer, cache)
}

/// Applies one `ip` line as a batch, which must be taken whole.
pub fn apply(writer: &mut FibWriter, line: &str) {
    let report = writer
        .apply_batch(&commands(line), BatchMode::AllOrNothing)
        .unwrap();
    assert!(report.refused.is_empty(), "{line}: {:?}", report.refused);
}
