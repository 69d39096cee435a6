//! Read-copy-update for fibre: readers that never lock, never do an atomic
//! read-modify-write and never write a shared cache line, while one writer
//! at a time publishes new versions of a value.
//!
//! This is quiescent-state-based reclamation (QSBR), the scheme of DPDK's
//! `rte_rcu_qsbr` and of VPP's worker barrier:
//!
//! * A [`Domain`] holds a global epoch and the registered readers. Each
//!   reader has a slot on cache lines of its own.
//! * A reader thread ([`ReaderHandle`]) opens read sections
//!   ([`ReaderHandle::read`], free) in which [`RcuCell::read`] costs one
//!   acquire load. Between batches (say, every 32 packets) it reports a
//!   quiescent state ([`ReaderHandle::quiescent`]): it copies the global
//!   epoch into its own slot with one release store. The borrow checker
//!   enforces that no reference read in a section survives the report.
//!   A reader that blocks goes [`offline`](ReaderHandle::offline) first, so
//!   it does not hold up grace periods.
//! * A writer replaces an [`RcuCell`]'s version ([`RcuCell::publish`],
//!   [`RcuCell::update`], or a [`WriteBatch`] for many changes at once):
//!   one pointer swap, then the epoch advances. The old version is freed
//!   when every online reader has reported that epoch, either polled
//!   ([`RcuCell::reclaim`], and on every publication) or waited for
//!   ([`RcuCell::synchronize`], [`Domain::synchronize`]).
//! * A reader that does not report for longer than
//!   [`DomainBuilder::stall_after`] while a grace period waits is reported
//!   (a `tracing` warning, [`DomainStats::stalls_detected`] and an optional
//!   callback, each with the versions and bytes it pins). A cell can bound
//!   its pending versions ([`CellBuilder::max_pending`]).
//!
//! ```
//! use fibre_rcu::{Domain, RcuCell};
//! let domain = Domain::new();
//! let table = RcuCell::new(&domain, vec![("10.0.0.0/8", 1)]);
//! let mut reader = domain.register();
//!
//! // Reader, per batch:
//! let hits = {
//!     let guard = reader.read();
//!     table.read(&guard).len()
//! };
//! reader.quiescent();
//! assert_eq!(hits, 1);
//!
//! // Writer:
//! table.update(|t| t.push(("192.0.2.0/24", 2)));
//! assert_eq!(table.pending().versions, 1); // the reader has not reported yet
//! reader.quiescent();
//! assert_eq!(table.reclaim(), 1);
//! ```
//!
//! # Costs
//!
//! * Read: one acquire load of the cell's pointer (a plain load on x86-64)
//!   and a comparison of the guard's domain with the cell's (both on
//!   read-only lines) per [`RcuCell::read`]; one relaxed load of the
//!   reader's own slot per read section. Nothing is written.
//! * Quiescent report: one acquire load of the domain epoch and, when it
//!   changed, one release store to the reader's own cache line.
//! * Publication latency, measured by `examples/publish_latency.rs` (one
//!   reader reporting every 32 reads, 5,000 rounds, release build; four runs
//!   on a 2-core development VM with a load average of 5-6 from other
//!   builds, so ranges; the maxima, tens of milliseconds, are the reader
//!   being descheduled):
//!
//!   | step | p50 | p99 |
//!   |---|---|---|
//!   | `publish` (swap, epoch advance, fence, one reclaim poll) | 0.23-0.61 us | 0.38-0.87 us |
//!   | publish until the reader has read the new version | 0.32-0.90 us | 0.6-7 us |
//!   | publish until `synchronize` freed the old version | 0.49-1.54 us | 2.5-16 us |
//!   | `write` + 10,000 edits + `publish`, 100,000 x `u64` (the clone dominates) | 48-59 us | - |
//!
//!   Readers see a publication at their next pointer load; the grace
//!   period lasts until the slowest online reader finishes its batch.
//!
//! # Checking the protocol
//!
//! `tests/loom.rs` models publish, quiescent reports, offline/online and
//! reclamation under [loom](https://docs.rs/loom), which explores the
//! interleavings and memory orderings of a small scenario:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p fibre-rcu --release --test loom
//! ```
//!
//! (about 20 s of models after the build; prefix `CARGO_TARGET_DIR=target/loom`
//! to keep the normal build's artifacts). Each model fails if the protocol is
//! weakened: no fence when a reader comes online, no fence after the epoch
//! advance, a relaxed quiescent store, or a report that brings an offline
//! reader online. One more model publishes a [`CowChunks`] array batch by
//! batch and fails if a chunk a batch replaced were freed, or written in
//! place, while a reader could still read it.
//!
//! Miri (nightly, `rustup component add --toolchain nightly miri rust-src`)
//! runs the tests that drive the `unsafe` code through readers, writers,
//! offline readers and reclamation: `MIRIFLAGS=-Zmiri-disable-isolation
//! cargo +nightly miri test -p fibre-rcu --lib --test offline` (and
//! `-p fibre-bench --test protect` for the adapter over [`RcuCell`]; 10 tests, no undefined behaviour found on 2026-11-30; about 3
//! minutes). The stress and proptest suites are too slow under Miri; loom
//! covers the protocol.

mod cell;
mod chunks;
mod domain;
mod reader;
mod stall;
mod sync;
mod two_level;

pub use cell::{Backpressure, CellBuilder, Pending, RcuCell, WriteBatch, WrongDomain};
pub use chunks::{CowChunks, OutOfBounds};
pub use domain::{Domain, DomainBuilder, DomainStats, GracePeriodTimeout, DEFAULT_STALL_AFTER};
pub use reader::{Offline, ReadGuard, ReaderHandle};
pub use stall::{StallCallback, StallReport};
pub use two_level::TwoLevelChunks;
