//! The FIB shared between one writer and any number of lock-free reader
//! threads: read-copy-update over the whole [`Fib`] (tables, rules, links,
//! addresses and the LPM structures inside them).
//!
//! # Scheme: left-right copies over quiescent-state-based reclamation
//!
//! The writer keeps two copies of the FIB. One is *published* in a
//! [`fibre_rcu::RcuCell`]; readers look up in it. The writer applies a
//! batch of commands to the other (the *spare*), publishes the spare with
//! one pointer swap, and notes what the batch changed. Before its next
//! batch it waits for a grace period (every online reader has reported a
//! quiescent state since the swap, so none can still be reading the old
//! copy) and brings the old copy, which becomes the new spare, up to date:
//!
//! * after a batch of route commands only (the bulk of a BGP feed), it
//!   copies from the published copy the entries the batch changed (each
//!   table notes the prefixes whose routes it handed out mutably) and the
//!   few FIB-wide records a route command touches (table creation, cache
//!   classes, IPv4 host-scope gateways): about half the cost of applying
//!   the commands again, since resolving devices and gateways, checking
//!   the kernel's rules and placing each route among its prefix's others
//!   are skipped;
//! * after any other batch (links, addresses, rules, or a bulk change) it
//!   applies the same commands again. [`Fib::apply`] is deterministic, so
//!   replaying them, refused ones included (a refused IPv4 route add still
//!   creates its table, as in the kernel), leaves both copies identical.
//!
//! Why this and not a copy of the whole FIB per batch: copying a FIB with a
//! full IPv6 table (about 246,000 routes) takes tens of milliseconds, so
//! copy-on-write could not publish single updates promptly or sustain
//! 100,000 updates/s. Left-right costs exactly two copies of memory, and a
//! reader never pins more than that: a stalled reader holds the *writer*
//! up (reported, see below) rather than making memory grow.
//!
//! # Costs
//!
//! * A reader ([`FibReader::batch`]) pays, per batch of lookups: one
//!   relaxed load of its own slot, one acquire load of the published
//!   pointer, and one quiescent report (an acquire load of the domain epoch
//!   and, when it moved, one release store to the reader's own cache line).
//!   Per lookup: nothing but the lookup. No lock, no read-modify-write, no
//!   store to a shared line.
//! * The writer ([`FibWriter::apply_batch`]) pays, per batch: the grace
//!   period of the previous batch (usually already over: readers report
//!   every few microseconds), bringing the spare up to date with the
//!   previous batch, the batch itself, and one publication. A single
//!   update is visible to readers as soon as `apply_batch` returns;
//!   [`BatchReport::latency`] says how long that took.
//!
//! Measured by `fibre bench synflood --quick` (RIPE NCC RIS IPv6 table,
//! 246,175 routes, release build, 2-core VM, 2026-11-30):
//!
//! | | figure |
//! |---|---|
//! | writer alone, batches of 1,024 updates | 0.96-1.03 M updates/s (about 1 us each, both copies) |
//! | a single update, 2 packet threads: call until readers can see it | p50 5-6 us, p99 0.5 ms |
//! | a single update, 1 packet thread | p50 4 us, p99 25-30 us |
//! | 100,000 updates/s in batches of ~100, 2 packet threads | p50 160-190 us, p99 0.5-0.7 ms |
//!
//! The grace period lasts until every packet thread has finished its
//! current batch (some 10 us), so the writer naps rather than yields while
//! it waits: a yield would leave its core to a preempted packet thread for
//! the rest of a scheduler tick (4 ms here). A writer that falls behind
//! folds more updates into its next batch and keeps its rate.
//!
//! Publish batches, not single updates, when updates stream in: each
//! publication moves the readers to the other copy, whose lines are not in
//! their core's cache yet, and costs the writer a grace period. A writer
//! fed by a routing daemon should fold what arrives within a millisecond
//! or so into one batch ([`PublishPacer`] says when to publish; `fibre
//! bench synflood` uses it); an update after a quiet spell can go out at
//! once. So
//! paced, a writer replaying 100,000 IPv6 updates/s on a 2-core machine
//! beside two packet threads took 14-17 % of one core and the packet
//! threads kept 85-92 % of their rate with no writer.
//!
//! # Batches and refusals
//!
//! [`BatchMode::BestEffort`] applies every command, refuses the bad ones
//! one by one with the kernel's message ([`Refusal`]) and publishes exactly
//! the successful ones. [`BatchMode::AllOrNothing`] publishes nothing if
//! any command is refused (the spare copy is then rebuilt from the
//! published one, a full copy: refusals are expected to be rare).
//!
//! # Stalled readers
//!
//! A reader that stops reporting quiescent states is detected by the RCU
//! domain (a `tracing` warning, [`SharedFib::stats`]`.stalls_detected`, and
//! the callback given to [`FibWriterBuilder::on_stall`]). The writer waits
//! for it at most [`FibWriterBuilder::grace_timeout`], then refuses the
//! batch with [`WriteError::GracePeriodTimeout`] (nothing applied); the
//! memory the reader pins is the one old copy, never more (the stall
//! report's `pinned_versions` says whether it is pinned; its
//! `pinned_bytes` counts only the handle to the copy, not the copy, which
//! is as large as the published FIB).
//!
//! ```
//! use fibre_fib::shared::{BatchMode, FibWriter};
//! use fibre_fib::*;
//!
//! let mut writer = FibWriter::new(Fib::new());
//! let shared = writer.shared();
//! let mut reader = shared.reader(); // one per reading thread
//!
//! let link = Command::LinkAdd { name: "d0".into(), kind: LinkKind::Ifb, mtu: None };
//! let report = writer.apply_batch(&[link.clone(), link], BatchMode::BestEffort).unwrap();
//! assert_eq!(report.applied, 1);
//! assert_eq!(report.refused[0].error.to_string(), "RTNETLINK answers: File exists");
//!
//! let (version, has_d0) = reader.batch(|snap| (snap.version(), snap.fib().link_by_name("d0").is_some()));
//! assert_eq!((version, has_d0), (1, true));
//! ```

mod pacer;
mod reader;
mod report;
mod writer;

#[cfg(test)]
mod tests;
/// Request builders the shared-FIB tests also lend to other modules' tests.
#[cfg(test)]
pub(crate) use tests::fixtures as tests_support;

use std::sync::Arc;

use fibre_rcu::{Domain, DomainStats, RcuCell, ReadGuard, WrongDomain};

use crate::fib::Fib;

pub use pacer::{PublishPacer, DEFAULT_PUBLISH_INTERVAL};
pub use reader::FibReader;
pub use report::{BatchMode, BatchReport, Refusal, WriteError};
pub use writer::{
    FibListener, FibWriter, FibWriterBuilder, DEFAULT_GRACE_TIMEOUT, DEFAULT_MAX_PENDING,
};

/// One published state of the FIB and its version number (0 for the
/// state the writer was made with, then one more per publication).
#[derive(Debug, Clone)]
pub struct Snapshot {
    version: u64,
    fib: Fib,
}

impl Snapshot {
    /// The version: readers see versions in increasing order.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The FIB as of this version.
    pub fn fib(&self) -> &Fib {
        &self.fib
    }
}

/// What the writer and the readers share: the RCU domain the readers
/// register in, and the cell holding the published copy.
///
/// The cell holds an `Arc` so that the writer can keep its own reference
/// to the copy it published: when the grace period ends the cell drops its
/// reference and the writer's becomes unique, so the old copy is reused
/// (the replay target) instead of freed. Readers never touch the `Arc`'s
/// counts; they borrow through the cell.
struct Published {
    domain: Domain,
    cell: RcuCell<Arc<Snapshot>>,
}

/// A handle on the published FIB, for making readers and watching the
/// RCU domain. Cheap to clone; `Send + Sync`.
///
/// ```
/// use fibre_fib::{shared::FibWriter, Fib};
/// let writer = FibWriter::new(Fib::new());
/// let shared = writer.shared();
/// let reader = shared.reader();
/// assert_eq!(shared.stats().readers_online, 1);
/// drop(reader);
/// assert_eq!(shared.stats().readers_registered, 0);
/// ```
#[derive(Clone)]
pub struct SharedFib {
    published: Arc<Published>,
}

impl SharedFib {
    /// Registers the calling thread as a reader (online from now on). Make
    /// one per thread; a reader must report between batches, which
    /// [`FibReader::batch`] does, or go [`offline`](FibReader::offline)
    /// before it blocks.
    pub fn reader(&self) -> FibReader {
        FibReader::new(Arc::clone(&self.published))
    }

    /// The RCU domain the readers register in: other read-mostly state
    /// that lives beside the FIB (the route cache) joins it, so that one
    /// read section and one quiescent report per batch cover both.
    pub fn domain(&self) -> &Domain {
        &self.published.domain
    }

    /// The published FIB as seen from a read section of this FIB's domain
    /// (a [`ReaderHandle`](fibre_rcu::ReaderHandle) from
    /// [`SharedFib::domain`]), for code that holds its own reader rather
    /// than a [`FibReader`]; valid until that reader's next quiescent
    /// report.
    ///
    /// # Errors
    /// [`WrongDomain`] if `guard` belongs to another domain.
    ///
    /// ```
    /// use fibre_fib::{shared::FibWriter, Fib};
    /// let writer = FibWriter::new(Fib::new());
    /// let shared = writer.shared();
    /// let mut reader = shared.domain().register();
    /// let links = {
    ///     let guard = reader.read();
    ///     shared.snapshot(&guard).unwrap().fib().links().count()
    /// };
    /// reader.quiescent();
    /// assert_eq!(links, 1);
    /// assert!(shared.snapshot(&fibre_rcu::Domain::new().register().read()).is_err());
    /// ```
    pub fn snapshot<'g>(&'g self, guard: &'g ReadGuard<'_>) -> Result<&'g Snapshot, WrongDomain> {
        self.published.cell.try_read(guard).map(|s| &**s)
    }

    /// The RCU domain's counters: readers online, stalls detected so far,
    /// retired versions not yet past their grace period.
    pub fn stats(&self) -> DomainStats {
        self.published.domain.stats()
    }
}

impl std::fmt::Debug for SharedFib {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedFib")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}
