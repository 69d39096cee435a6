//! The figures the lookup experiment reports, per engine and per family.

use serde::Serialize;

use crate::family::QueryKind;
use crate::timing::Rate;

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

    /// The same per on-CPU second.
    pub fn best_1t_on_cpu(&self) -> f64 {
        self.batched_1t
            .map_or(0.0, |r| r.on_cpu)
            .max(self.single_1t.on_cpu)
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
    /// Peers that could not be measured, and why.
    pub unavailable: Vec<Unavailable>,
}

/// A peer engine left out of the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Unavailable {
    /// The engine.
    pub engine: &'static str,
    /// Why: its build's error, or its panic message.
    pub reason: String,
}
