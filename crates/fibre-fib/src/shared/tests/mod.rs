//! Tests of the shared FIB: concurrent readers against a writer, batch
//! reports, stalled readers, and the two copies staying identical.

mod batches;
mod copies;
pub(crate) mod fixtures;
mod stall;
mod stress;
