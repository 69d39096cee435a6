//! The reader side: a per-thread handle, its slot, and read guards.

use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};

use fibre_base::{CachePadded, WorkerId};

use crate::domain::{Domain, DomainShared};
use crate::sync::{fence, Arc, AtomicU64};

/// The slot value of a reader that is offline (epochs start at 1).
pub(crate) const OFFLINE: u64 = 0;

/// One reader's quiescent-state report: the epoch it last observed, or
/// [`OFFLINE`].
///
/// Only its reader writes it (plain stores, never a read-modify-write);
/// writers read it during grace periods. It fills whole cache lines
/// ([`CachePadded`]) so that two readers' reports never share a line.
pub(crate) struct ReaderSlot {
    observed: CachePadded<AtomicU64>,
}

#[cfg(not(loom))]
const _: () = assert!(
    std::mem::align_of::<ReaderSlot>() == fibre_base::CACHE_LINE
        && std::mem::size_of::<ReaderSlot>() == fibre_base::CACHE_LINE,
    "a reader's quiescent-state slot must fill exactly one cache line: \
     writers scan it while its reader stores to it, so a neighbour on the \
     line would bounce with every report; if this fires, re-check \
     ReaderSlot's padding"
);

impl ReaderSlot {
    pub(crate) fn new() -> Self {
        ReaderSlot {
            observed: CachePadded::new(AtomicU64::new(OFFLINE)),
        }
    }

    /// The reader's last report, for writers. Acquire: everything the reader
    /// did before the report (in particular its loads of published pointers)
    /// happens before what the writer does after seeing it (freeing).
    pub(crate) fn observed(&self) -> u64 {
        self.observed.load(Acquire)
    }

    /// Marks the reader online at the current epoch.
    ///
    /// The SeqCst fence is the reader's half of a store-buffering pair with
    /// the fence in `DomainShared::advance`: without it the reader could load
    /// a pointer the writer is about to free while the writer's scan still
    /// sees this slot offline. Coming online is rare (registration, end of a
    /// parked period), so the fence costs nothing per read.
    #[cold]
    pub(crate) fn come_online(&self, domain: &DomainShared) {
        self.observed.store(domain.current_epoch(), Release);
        fence(SeqCst);
    }

    /// Whether the reader marked itself offline. Only the reader writes its
    /// slot, so a relaxed load reads back its own last store.
    #[inline]
    fn is_offline(&self) -> bool {
        self.observed.load(Relaxed) == OFFLINE
    }

    /// Marks the reader offline. Release: its earlier reads happen before a
    /// writer that sees the slot offline frees anything.
    pub(crate) fn go_offline(&self) {
        self.observed.store(OFFLINE, Release);
    }

    /// Reports a quiescent state: copy the current epoch into the slot.
    ///
    /// An offline reader stays offline: going online needs the fence of
    /// `come_online`, which its next read section issues.
    #[inline]
    fn report(&self, domain: &DomainShared) {
        // Only this reader writes the slot, so a relaxed load reads back its
        // own last store.
        let last = self.observed.load(Relaxed);
        if last == OFFLINE {
            return;
        }
        let epoch = domain.current_epoch();
        // Skipping an unchanged store keeps the line clean (and shared with
        // a scanning writer) when nothing was published.
        if last != epoch {
            self.observed.store(epoch, Release);
        }
    }
}

/// A registered reader: the right to read [`RcuCell`](crate::RcuCell)s of
/// one domain, and the duty to report quiescent states.
///
/// Obtained from [`Domain::register`]. Reads happen through a [`ReadGuard`]
/// from [`read`](ReaderHandle::read); references obtained through the guard
/// cannot outlive it, and [`quiescent`](ReaderHandle::quiescent) takes
/// `&mut self`, so the compiler refuses to report a quiescent state while
/// any reference is still alive. Dropping the handle unregisters the reader.
///
/// ```
/// use fibre_rcu::{Domain, RcuCell};
/// let domain = Domain::new();
/// let routes = RcuCell::new(&domain, vec![1, 2, 3]);
/// let mut reader = domain.register();
/// for _batch in 0..3 {
///     {
///         let guard = reader.read();
///         let total: i32 = routes.read(&guard).iter().sum();
///         assert_eq!(total, 6);
///     } // the guard, and every reference read through it, ends here
///     reader.quiescent();
/// }
/// ```
pub struct ReaderHandle {
    shared: Arc<DomainShared>,
    slot: Arc<ReaderSlot>,
    id: u64,
    worker: Option<WorkerId>,
}

impl ReaderHandle {
    pub(crate) fn new(
        shared: Arc<DomainShared>,
        slot: Arc<ReaderSlot>,
        id: u64,
        worker: Option<WorkerId>,
    ) -> Self {
        ReaderHandle {
            shared,
            slot,
            id,
            worker,
        }
    }

    pub(crate) fn slot(&self) -> &ReaderSlot {
        &self.slot
    }

    /// Opens a read section: the guard proves, to the compiler, that the
    /// reader is online and not reporting. Its only cost is one relaxed load
    /// of the reader's own slot (a cache line no other core writes), which
    /// brings the reader back online if an [`Offline`] guard was leaked with
    /// `mem::forget` instead of dropped.
    #[inline]
    pub fn read(&self) -> ReadGuard<'_> {
        if self.slot.is_offline() {
            self.slot.come_online(&self.shared);
        }
        ReadGuard {
            domain: &self.shared,
            _not_send: PhantomData,
        }
    }

    /// Reports a quiescent state: this reader holds no reference into any
    /// cell of the domain. Call it between batches; a grace period ends when
    /// every online reader has called it (or gone offline) since the grace
    /// period began.
    ///
    /// One acquire load of the domain's epoch and at most one release store
    /// to this reader's own cache line; no read-modify-write, no fence.
    ///
    /// Reporting while a reference is still alive does not compile:
    ///
    /// ```compile_fail,E0502
    /// use fibre_rcu::{Domain, RcuCell};
    /// let domain = Domain::new();
    /// let cell = RcuCell::new(&domain, 1u32);
    /// let mut reader = domain.register();
    /// let guard = reader.read();
    /// let value = cell.read(&guard);
    /// reader.quiescent(); // error: `reader` is still borrowed by `guard`
    /// println!("{value}");
    /// ```
    #[inline]
    pub fn quiescent(&mut self) {
        self.slot.report(&self.shared);
    }

    /// Takes the reader offline until the returned guard is dropped, e.g.
    /// while its thread blocks or sleeps: an offline reader does not hold up
    /// grace periods. The guard borrows the handle mutably, so nothing can be
    /// read while offline.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fibre_rcu::Domain;
    /// let domain = Domain::new();
    /// let mut reader = domain.register();
    /// {
    ///     let _parked = reader.offline();
    ///     // A grace period does not wait for a parked reader.
    ///     domain.synchronize_timeout(Duration::from_secs(5)).unwrap();
    /// }
    /// // Online again: the reader now holds grace periods up until it reports.
    /// assert!(domain.synchronize_timeout(Duration::from_millis(5)).is_err());
    /// reader.quiescent();
    /// ```
    ///
    /// Reading while offline does not compile:
    ///
    /// ```compile_fail,E0502
    /// use fibre_rcu::{Domain, RcuCell};
    /// let domain = Domain::new();
    /// let cell = RcuCell::new(&domain, 1u32);
    /// let mut reader = domain.register();
    /// let parked = reader.offline();
    /// let guard = reader.read(); // error: `reader` is mutably borrowed
    /// drop(parked);
    /// ```
    pub fn offline(&mut self) -> Offline<'_> {
        self.slot.go_offline();
        Offline { handle: self }
    }

    /// This reader's id (unique within its domain; used in stall reports).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The worker this reader reads for, when registered with
    /// [`Domain::register_worker`].
    pub fn worker(&self) -> Option<WorkerId> {
        self.worker
    }

    /// The domain the reader belongs to.
    pub fn domain(&self) -> Domain {
        Domain {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl Drop for ReaderHandle {
    fn drop(&mut self) {
        self.slot.go_offline();
        self.shared.unregister(self.id);
    }
}

impl fmt::Debug for ReaderHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReaderHandle")
            .field("id", &self.id)
            .field("observed_epoch", &self.slot.observed())
            .finish()
    }
}

/// A read section of one reader. References read through it (with
/// [`RcuCell::read`](crate::RcuCell::read)) live no longer than the guard.
///
/// Deliberately `!Send`: a read section belongs to the thread whose reader
/// reports for it.
///
/// ```
/// use fibre_rcu::{Domain, RcuCell};
/// let domain = Domain::new();
/// let (names, ports) = (RcuCell::new(&domain, "eth0"), RcuCell::new(&domain, 80u16));
/// let reader = domain.register();
/// let guard = reader.read(); // one section covers every cell of the domain
/// assert_eq!((*names.read(&guard), *ports.read(&guard)), ("eth0", 80));
/// ```
pub struct ReadGuard<'h> {
    pub(crate) domain: &'h DomainShared,
    _not_send: PhantomData<*const ()>,
}

impl fmt::Debug for ReadGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadGuard").finish_non_exhaustive()
    }
}

/// A reader taken offline by [`ReaderHandle::offline`]; dropping it brings
/// the reader back online.
pub struct Offline<'h> {
    handle: &'h mut ReaderHandle,
}

impl Drop for Offline<'_> {
    fn drop(&mut self) {
        self.handle.slot.come_online(&self.handle.shared);
    }
}

impl fmt::Debug for Offline<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Offline")
            .field("reader_id", &self.handle.id)
            .finish()
    }
}
