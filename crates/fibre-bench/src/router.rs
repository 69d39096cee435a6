//! The router every FIB experiment builds: one uplink (`wan0`) behind
//! which every gateway sits, a table of prefixes imported into table main
//! through it. `fib` and `synflood` add their own links and rules. Beside
//! it, the raw LPM on the same table, the ceiling `fib` and `forward-core`
//! compare the router's lookups with.

use fibre_fib::{Fib, LinkIndex, NexthopSpec, Prefix, TABLE_MAIN};
use fibre_lpm::Poptrie;

use crate::family::Family;
use crate::BenchError;

/// The raw LPM on `table`'s prefixes, each with its index as value.
pub fn raw_lpm<K: Family>(table: &[crate::data::Prefix<K>]) -> Result<Poptrie<K, u32>, BenchError> {
    Poptrie::build(
        table
            .iter()
            .enumerate()
            .map(|(i, p)| (p.addr, p.len, i as u32)),
    )
    .map_err(|e| BenchError::Engine {
        engine: "fibre-lpm",
        prefix: String::new(),
        message: e.to_string(),
    })
}

/// One pass of [`Poptrie::lookup_batch`] over `dsts` in bursts of `burst`;
/// returns the lookups made.
pub fn lpm_batched_pass<K: Family>(lpm: &Poptrie<K, u32>, dsts: &[K], burst: usize) -> u64 {
    let mut out = vec![None; burst];
    for chunk in dsts.chunks(burst) {
        let out = &mut out[..chunk.len()];
        lpm.lookup_batch(chunk, out);
        std::hint::black_box(&out);
    }
    dsts.len() as u64
}

/// The link every packet arrives on and every gateway sits behind.
pub const UPLINK: &str = "wan0";

/// A FIB refusal as the benchmarks report it.
pub fn fib_error(prefix: impl ToString, message: impl ToString) -> BenchError {
    BenchError::Engine {
        engine: "fibre-fib",
        prefix: prefix.to_string(),
        message: message.to_string(),
    }
}

/// Imports `routes` into table main of `fib` (whose [`UPLINK`] exists)
/// and returns the FIB with the uplink's index.
pub fn import_routes(
    mut fib: Fib,
    routes: Vec<(Prefix, NexthopSpec)>,
) -> Result<(Fib, LinkIndex), BenchError> {
    fib.import(TABLE_MAIN, routes)
        .map_err(|e| fib_error(e.prefix, e.error))?;
    let uplink = fib
        .link_by_name(UPLINK)
        .map(|l| l.index)
        .ok_or_else(|| fib_error(UPLINK, "the uplink vanished"))?;
    Ok((fib, uplink))
}
