//! The router every FIB experiment builds: one uplink (`wan0`) behind
//! which every gateway sits, a table of prefixes imported into table main
//! through it. `fib` and `synflood` add their own links and rules.

use fibre_fib::{Fib, LinkIndex, NexthopSpec, Prefix, TABLE_MAIN};

use crate::BenchError;

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
