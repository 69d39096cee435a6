//! Tests of the shared FIB: concurrent readers against a writer, batch
//! reports, refused multipath changes, stalled readers, and the two copies
//! staying identical.

mod batches;
mod copies;
pub(crate) mod fixtures;
mod refusals;
mod sharing;
mod stall;
mod stress;
