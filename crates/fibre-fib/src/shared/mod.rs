//! The FIB shared between one writer and any number of lock-free reader
//! threads: read-copy-update over the whole [`Fib`] (tables, rules, links,
//! addresses and the LPM structures inside them).
//!
//! # Scheme: one working copy, each batch published as a clone of it
//!
//! The writer keeps one private *working* copy of the FIB. It applies a
//! batch of commands to it, then publishes `working.clone()` in a
//! [`fibre_rcu::RcuCell`] with one pointer swap; readers look up in the
//! published version. The version it replaced is retired and freed by the
//! cell once every online reader has reported a quiescent state since the
//! swap (quiescent-state-based reclamation, as the kernel's RCU and DPDK's
//! `rte_rcu_qsbr` beside `rte_lpm`). A reader therefore sees each batch
//! entirely or not at all: a route replace never shows no route, a
//! multipath change never half a group.
//!
//! The clone is meant to cost chunk directories, not routes: the large
//! arrays go on copy-on-write chunks ([`fibre_rcu::CowChunks`], a
//! fixed-size chunked form of Driscoll, Sarnak, Sleator and Tarjan's
//! persistent arrays, 1989) that the working copy and the published
//! versions share until the writer changes one, which it then copies, as
//! the kernel's `fib_trie` copies the path to a changed leaf. A version
//! then holds alone only what its batch rewrote, and readers stay on lines
//! they have cached. The LPM's lookup arrays and block pools are on
//! [`fibre_rcu::CowChunks`]; the tables' arenas and side arrays on
//! [`fibre_rcu::TwoLevelChunks`], whose directory is copy-on-write too, so
//! that a publication copies a pointer per 64 leaves rather than one per
//! leaf; each prefix's routes are one shared `ecow::EcoVec<Route>`, so that a
//! copied leaf clones reference counts, not routes. The writer-side maps
//! are persistent (`imbl`).
//!
//! # Memory bound
//!
//! At most [`FibWriterBuilder::max_pending`] retired versions (default
//! [`DEFAULT_MAX_PENDING`]) wait for their grace period at once. A batch
//! that would retire one more first waits for the oldest, at most
//! [`FibWriterBuilder::grace_timeout`], and is then refused with
//! [`WriteError::GracePeriodTimeout`] (nothing applied). So besides the
//! working copy and the published version, deferred versions hold at most
//! `max_pending` times what one version holds alone
//! ([`Fib::exclusive_bytes`], counted when it is retired;
//! [`SharedFib::stats`]`.pending_bytes` sums it), however fast the writer
//! and however long a reader stalls.
//!
//! # Costs
//!
//! * A reader ([`FibReader::batch`]) pays, per batch of lookups: one
//!   relaxed load of its own slot, one acquire load of the published
//!   pointer, and one quiescent report (an acquire load of the domain epoch
//!   and, when it moved, one release store to the reader's own cache line).
//!   Per lookup: nothing but the lookup. No lock, no read-modify-write, no
//!   store to a shared line.
//! * The writer ([`FibWriter::apply_batch`]) pays, per batch: the batch
//!   itself, one clone and one publication; it waits for a grace period
//!   only when `max_pending` versions are already pending (or, with a
//!   [`FibListener`], for its own batch's, so that the listener hears of
//!   it once no reader can see the old state). A single update is visible
//!   to readers as soon as `apply_batch` returns; [`BatchReport::latency`]
//!   says how long that took.
//!
//! The grace period lasts until every packet thread has finished its
//! current batch (some 10 us), so the writer naps rather than yields while
//! it waits: a yield would leave its core to a preempted packet thread for
//! the rest of a scheduler tick (4 ms here). A writer fed by a routing
//! daemon should fold what arrives within a millisecond or so into one
//! batch ([`PublishPacer`] says when to publish; `fibre bench synflood`
//! uses it).
//!
//! # Batches and refusals
//!
//! [`BatchMode::BestEffort`] applies every command, refuses the bad ones
//! one by one with the kernel's message ([`Refusal`]) and publishes exactly
//! the successful ones. [`BatchMode::AllOrNothing`] publishes nothing if
//! any command is refused (the working copy is then cloned back from the
//! published version).
//!
//! # Stalled readers
//!
//! A reader that stops reporting quiescent states is detected by the RCU
//! domain (a `tracing` warning, [`SharedFib::stats`]`.stalls_detected`, and
//! the callback given to [`FibWriterBuilder::on_stall`]). The writer waits
//! for it at most [`FibWriterBuilder::grace_timeout`], then refuses the
//! batch with [`WriteError::GracePeriodTimeout`] (nothing applied); the
//! memory the reader pins stays within the bound above (the stall
//! report's `pinned_versions` and `pinned_bytes` say how much).
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
/// to the version it published ([`FibWriter::fib`], and the source an
/// all-or-nothing refusal clones back from). Readers never touch the
/// `Arc`'s counts; they borrow through the cell.
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
    /// retired versions not yet past their grace period and the bytes they
    /// hold alone ([`Fib::exclusive_bytes`] of each, when retired).
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
