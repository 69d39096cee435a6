//! The published pointer: one current version readers load, retired
//! versions the writer frees after a grace period.

use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;
use std::num::NonZeroUsize;
use std::ops::{Deref, DerefMut};
use std::ptr::{self, NonNull};
use std::sync::atomic::Ordering::{AcqRel, Acquire};

use crate::domain::{Domain, DomainShared};
use crate::reader::ReadGuard;
use crate::sync::{lock, Arc, AtomicPtr, Backoff, Mutex, MutexGuard};
use fibre_base::CachePadded;

/// A value readers load without locks while one writer at a time replaces
/// it (read-copy-update).
///
/// Readers: [`read`](RcuCell::read) is one acquire load of the current
/// pointer. Writers (serialized by an internal mutex that readers never
/// touch): [`publish`](RcuCell::publish) a whole new version,
/// [`update`](RcuCell::update) a clone in place, or batch many changes in a
/// [`WriteBatch`] from [`write`](RcuCell::write). The replaced version is
/// retired and freed once every online reader of the domain has reported a
/// quiescent state: polled by each publication and by
/// [`reclaim`](RcuCell::reclaim), or waited for by
/// [`synchronize`](RcuCell::synchronize).
///
/// ```
/// use std::thread;
/// use fibre_rcu::{Domain, RcuCell};
/// let domain = Domain::new();
/// let table = RcuCell::new(&domain, vec![10u32]);
/// thread::scope(|s| {
///     let mut reader = domain.register();
///     let table = &table;
///     s.spawn(move || {
///         for _ in 0..100 {
///             assert!(!table.read(&reader.read()).is_empty());
///             reader.quiescent();
///         }
///     });
///     table.update(|t| t.push(20));
/// });
/// table.synchronize();
/// assert_eq!(table.pending().versions, 0);
/// ```
pub struct RcuCell<T> {
    hot: CachePadded<Hot<T>>,
    writer: Mutex<WriterState<T>>,
    options: CellOptions<T>,
    /// The cell owns `T`s: sending the cell sends them, sharing it shares
    /// `&T` with readers.
    _owns: PhantomData<T>,
}

/// What readers touch, alone on its cache lines: the writer's mutex and
/// retire list live elsewhere, so writer bookkeeping never invalidates the
/// line every lookup reads.
#[repr(C)]
struct Hot<T> {
    /// Always a pointer from `Box::into_raw`, owned by the cell.
    current: AtomicPtr<T>,
    domain: Arc<DomainShared>,
}

#[cfg(not(loom))]
const _: () = {
    assert!(
        std::mem::offset_of!(Hot<u8>, current) == 0,
        "the published pointer must be the first word of the hot line, the \
         one load every read makes: if this fires, put Hot::current back \
         first (Hot is repr(C))"
    );
    assert!(
        std::mem::size_of::<CachePadded<Hot<u8>>>() == fibre_base::CACHE_LINE,
        "a cell's hot fields (pointer and domain) must fit one cache line of \
         their own: every read loads them, the writer's bookkeeping must not \
         share the line; if this fires, Hot grew past CACHE_LINE"
    );
};

struct WriterState<T> {
    retired: VecDeque<Retired<T>>,
    pending_bytes: usize,
}

/// A version no longer published, waiting for its grace period.
struct Retired<T> {
    /// From `Box::into_raw`; readers may still be reading it.
    version: NonNull<T>,
    /// Free once every online reader has reported this epoch.
    safe_at: u64,
    bytes: usize,
}

// SAFETY: a `Retired<T>` owns its version (it was unpublished, and only the
// retire list frees it), so sending it to another thread sends a `T`.
unsafe impl<T: Send> Send for Retired<T> {}

/// Options of one cell, set with [`CellBuilder`].
struct CellOptions<T> {
    max_pending: Option<NonZeroUsize>,
    heap_bytes: Option<fn(&T) -> usize>,
}

/// Builds an [`RcuCell`] with a bound on pending versions or a memory
/// account.
///
/// ```
/// use std::num::NonZeroUsize;
/// use fibre_rcu::{Domain, RcuCell};
/// let domain = Domain::new();
/// let cell = RcuCell::builder(&domain)
///     .max_pending(NonZeroUsize::new(4).unwrap())
///     .heap_bytes(|v: &Vec<u64>| v.capacity() * 8)
///     .build(vec![0u64; 1000]);
/// let reader = domain.register(); // never reports: versions stay pinned
/// cell.publish(vec![1; 1000]);
/// let pending = cell.pending();
/// assert_eq!(pending.versions, 1);
/// assert!(pending.bytes >= 8000);
/// drop(reader);
/// assert_eq!(cell.reclaim(), 1);
/// ```
pub struct CellBuilder<'d, T> {
    domain: &'d Domain,
    options: CellOptions<T>,
}

impl<T> CellBuilder<'_, T> {
    /// Keep at most `limit` retired versions: a publication that would retire
    /// one more first waits for a grace period ([`RcuCell::publish`]) or is
    /// refused ([`RcuCell::try_publish`]). Unbounded by default.
    pub fn max_pending(mut self, limit: NonZeroUsize) -> Self {
        self.options.max_pending = Some(limit);
        self
    }

    /// Count `heap_bytes(version)` on top of `size_of::<T>()` in the memory
    /// that retired versions pin ([`RcuCell::pending`], stall reports).
    pub fn heap_bytes(mut self, heap_bytes: fn(&T) -> usize) -> Self {
        self.options.heap_bytes = Some(heap_bytes);
        self
    }

    /// Creates the cell, publishing `value` as its first version.
    pub fn build(self, value: T) -> RcuCell<T> {
        RcuCell {
            hot: CachePadded::new(Hot {
                current: AtomicPtr::new(Box::into_raw(Box::new(value))),
                domain: Arc::clone(&self.domain.shared),
            }),
            writer: Mutex::new(WriterState {
                retired: VecDeque::new(),
                pending_bytes: 0,
            }),
            options: self.options,
            _owns: PhantomData,
        }
    }
}

/// Retired versions a cell has not freed yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pending {
    /// How many.
    pub versions: usize,
    /// Their `size_of::<T>()` plus the cell's heap-bytes account.
    pub bytes: usize,
}

/// [`RcuCell::try_publish`] found the cell at its bound of pending versions.
///
/// The refused value is handed back in `value`.
#[derive(Debug, thiserror::Error)]
#[error("{pending} retired versions still wait for a grace period (bound {limit})")]
pub struct Backpressure<T> {
    /// The value that was not published.
    pub value: T,
    /// Versions pending.
    pub pending: usize,
    /// The cell's bound.
    pub limit: usize,
}

/// The guard handed to [`RcuCell::read`] belongs to another domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the read guard belongs to a different RCU domain than the cell")]
pub struct WrongDomain;

impl<T> RcuCell<T> {
    /// A cell in `domain` whose first version is `value`.
    pub fn new(domain: &Domain, value: T) -> Self {
        Self::builder(domain).build(value)
    }

    /// Starts building a cell with options.
    pub fn builder(domain: &Domain) -> CellBuilder<'_, T> {
        CellBuilder {
            domain,
            options: CellOptions {
                max_pending: None,
                heap_bytes: None,
            },
        }
    }

    /// The current version, for as long as the read section lasts.
    ///
    /// # Panics
    ///
    /// If `guard` comes from a reader of another domain (that reader's
    /// quiescent states would not protect this cell); [`try_read`] reports
    /// it as an error instead.
    ///
    /// [`try_read`]: RcuCell::try_read
    ///
    /// ```
    /// use fibre_rcu::{Domain, RcuCell};
    /// let domain = Domain::new();
    /// let cell = RcuCell::new(&domain, [1u8, 2, 3]);
    /// let reader = domain.register();
    /// let guard = reader.read();
    /// let first = cell.read(&guard);
    /// cell.publish([4, 5, 6]); // `first` stays valid: it is only retired
    /// assert_eq!(first, &[1, 2, 3]);
    /// assert_eq!(cell.read(&guard), &[4, 5, 6]);
    /// ```
    #[inline]
    pub fn read<'a>(&'a self, guard: &'a ReadGuard<'_>) -> &'a T {
        match self.try_read(guard) {
            Ok(value) => value,
            Err(err) => panic!("{err}"),
        }
    }

    /// The current version, or [`WrongDomain`] if `guard` belongs to a
    /// reader of another domain.
    ///
    /// ```
    /// use fibre_rcu::{Domain, RcuCell, WrongDomain};
    /// let (ours, theirs) = (Domain::new(), Domain::new());
    /// let cell = RcuCell::new(&ours, 7);
    /// let stranger = theirs.register();
    /// assert_eq!(cell.try_read(&stranger.read()), Err(WrongDomain));
    /// ```
    #[inline]
    pub fn try_read<'a>(&'a self, guard: &'a ReadGuard<'_>) -> Result<&'a T, WrongDomain> {
        if !ptr::eq(guard.domain, &*self.hot.domain) {
            return Err(WrongDomain);
        }
        let current = self.hot.current.load(Acquire);
        // SAFETY: `current` came from `Box::into_raw` and is freed only after
        // being unpublished and a grace period has ended. The guard borrows
        // an online `ReaderHandle` of this cell's domain (checked above), so
        // the handle cannot report a quiescent state or go offline (both take
        // `&mut`) while the returned reference lives; any grace period that
        // began after the load therefore waits for this reader. The acquire
        // load pairs with the writer's release swap, so the pointee's
        // initialisation is visible. The reference also borrows `self`, and
        // the cell frees nothing but on `&self` writer calls or on drop.
        Ok(unsafe { &*current })
    }

    /// Replaces the current version with `value` and retires the old one;
    /// frees whatever retired versions are already past their grace period.
    ///
    /// Blocks (backing off) only if the cell has a
    /// [`max_pending`](CellBuilder::max_pending) bound and is at it.
    ///
    /// ```
    /// use fibre_rcu::{Domain, RcuCell};
    /// let domain = Domain::new();
    /// let cell = RcuCell::new(&domain, "v1");
    /// cell.publish("v2"); // no reader online: "v1" is freed at once
    /// assert_eq!(cell.pending().versions, 0);
    /// ```
    pub fn publish(&self, value: T) {
        let mut state = lock(&self.writer);
        self.wait_below_bound(&mut state);
        self.swap_and_retire(&mut state, Box::new(value));
    }

    /// Like [`publish`](RcuCell::publish) but, at the pending bound, hands
    /// the value back instead of waiting.
    ///
    /// ```
    /// use std::num::NonZeroUsize;
    /// use fibre_rcu::{Domain, RcuCell};
    /// let domain = Domain::new();
    /// let cell = RcuCell::builder(&domain).max_pending(NonZeroUsize::MIN).build(1);
    /// let mut reader = domain.register();
    /// cell.try_publish(2).unwrap(); // version 1 is now pending
    /// let refused = cell.try_publish(3).unwrap_err();
    /// assert_eq!(refused.value, 3);
    /// reader.quiescent();
    /// cell.try_publish(3).unwrap();
    /// ```
    pub fn try_publish(&self, value: T) -> Result<(), Backpressure<T>> {
        let mut state = lock(&self.writer);
        if let Some(limit) = self.options.max_pending {
            self.reclaim_locked(&mut state);
            if state.retired.len() >= limit.get() {
                return Err(Backpressure {
                    value,
                    pending: state.retired.len(),
                    limit: limit.get(),
                });
            }
        }
        self.swap_and_retire(&mut state, Box::new(value));
        Ok(())
    }

    /// Frees the retired versions whose grace period has ended, without
    /// waiting; returns how many. Also checks for stalled readers.
    ///
    /// ```
    /// use fibre_rcu::{Domain, RcuCell};
    /// let domain = Domain::new();
    /// let cell = RcuCell::new(&domain, 1);
    /// let mut reader = domain.register();
    /// cell.publish(2);
    /// assert_eq!(cell.reclaim(), 0); // the reader may still hold 1
    /// reader.quiescent();
    /// assert_eq!(cell.reclaim(), 1);
    /// ```
    pub fn reclaim(&self) -> usize {
        let mut state = lock(&self.writer);
        self.reclaim_locked(&mut state)
    }

    /// Waits (backing off) until every version retired before the call has
    /// been freed, i.e. until every online reader has reported a quiescent
    /// state since the newest retirement. Returns at once if nothing is
    /// pending.
    ///
    /// Blocks forever if the calling thread holds an online reader of the
    /// domain that does not report; the stall detector reports it.
    ///
    /// ```
    /// use std::thread;
    /// use fibre_rcu::{Domain, RcuCell};
    /// let domain = Domain::new();
    /// let cell = RcuCell::new(&domain, 1);
    /// let mut reader = domain.register();
    /// cell.publish(2);
    /// thread::scope(|s| {
    ///     s.spawn(|| cell.synchronize()); // waits for the report below
    ///     reader.quiescent();
    /// });
    /// assert_eq!(cell.pending().versions, 0);
    /// ```
    pub fn synchronize(&self) {
        let mut state = lock(&self.writer);
        let mut backoff = Backoff::new();
        // The writer mutex is held, so nothing new is retired meanwhile.
        loop {
            self.reclaim_locked(&mut state);
            if state.retired.is_empty() {
                return;
            }
            backoff.wait();
        }
    }

    /// Retired versions not yet freed.
    pub fn pending(&self) -> Pending {
        let state = lock(&self.writer);
        Pending {
            versions: state.retired.len(),
            bytes: state.pending_bytes,
        }
    }

    /// The current version, mutably: no reader can hold it while `self` is
    /// exclusively borrowed.
    ///
    /// ```
    /// use fibre_rcu::{Domain, RcuCell};
    /// let domain = Domain::new();
    /// let mut cell = RcuCell::new(&domain, vec![1]);
    /// cell.get_mut().push(2); // in place, no copy
    /// assert_eq!(cell.read(&domain.register().read()), &[1, 2]);
    /// ```
    pub fn get_mut(&mut self) -> &mut T {
        // SAFETY: `&mut self` rules out every `&self` borrow, so no read
        // guard reference into the cell is alive, and `current` is a valid,
        // owned `Box` pointer.
        unsafe { &mut *self.hot.current.load(Acquire) }
    }

    /// Frees every retired version right away (returns how many): with
    /// `self` borrowed exclusively no reader can hold a reference into the
    /// cell.
    ///
    /// ```
    /// use fibre_rcu::{Domain, RcuCell};
    /// let domain = Domain::new();
    /// let mut cell = RcuCell::new(&domain, 1);
    /// let stuck = domain.register(); // never reports
    /// cell.publish(2);
    /// assert_eq!(cell.reclaim_all(), 1);
    /// # drop(stuck);
    /// ```
    pub fn reclaim_all(&mut self) -> usize {
        let mut state = lock(&self.writer);
        let freed = state.retired.len();
        let bytes = state.pending_bytes;
        while let Some(retired) = state.retired.pop_front() {
            // SAFETY: the version came from `Box::into_raw`, is no longer
            // published, and no reader reference into the cell can exist
            // while `self` is exclusively borrowed.
            drop(unsafe { Box::from_raw(retired.version.as_ptr()) });
        }
        state.pending_bytes = 0;
        self.hot.domain.remove_pending(freed, bytes);
        freed
    }

    fn bytes_of(&self, version: &T) -> usize {
        std::mem::size_of::<T>() + self.options.heap_bytes.map_or(0, |f| f(version))
    }

    fn wait_below_bound(&self, state: &mut MutexGuard<'_, WriterState<T>>) {
        let Some(limit) = self.options.max_pending else {
            return;
        };
        let mut backoff = Backoff::new();
        loop {
            self.reclaim_locked(state);
            if state.retired.len() < limit.get() {
                return;
            }
            backoff.wait();
        }
    }

    fn swap_and_retire(&self, state: &mut WriterState<T>, value: Box<T>) {
        let old = self.hot.current.swap(Box::into_raw(value), AcqRel);
        let safe_at = self.hot.domain.advance();
        // SAFETY: `old` came from `Box::into_raw` and is valid until freed by
        // the retire list, which only happens after this call; the writer
        // mutex (held) excludes any other writer from freeing it.
        let bytes = self.bytes_of(unsafe { &*old });
        state.retired.push_back(Retired {
            // `Box::into_raw` never returns null.
            version: NonNull::new(old).expect("published pointers are never null"),
            safe_at,
            bytes,
        });
        state.pending_bytes += bytes;
        self.hot.domain.add_pending(1, bytes);
        self.reclaim_locked(state);
    }

    fn reclaim_locked(&self, state: &mut WriterState<T>) -> usize {
        let Some(oldest) = state.retired.front() else {
            return 0;
        };
        let safe = self.hot.domain.safe_epoch(oldest.safe_at);
        let mut freed = 0;
        let mut bytes = 0;
        while state.retired.front().is_some_and(|r| r.safe_at <= safe) {
            let Some(retired) = state.retired.pop_front() else {
                break;
            };
            freed += 1;
            bytes += retired.bytes;
            state.pending_bytes -= retired.bytes;
            // SAFETY: the version was unpublished before the epoch advanced
            // to `safe_at`, and every online reader has since reported an
            // epoch >= `safe_at` (or was offline, or came online after the
            // swap was visible to it; see `DomainShared::advance`). So no
            // reader still holds a reference into it, and it came from
            // `Box::into_raw` and is freed exactly once (popped here).
            drop(unsafe { Box::from_raw(retired.version.as_ptr()) });
        }
        self.hot.domain.remove_pending(freed, bytes);
        freed
    }
}

impl<T: Clone> RcuCell<T> {
    /// Clones the current version, lets `change` edit the clone, publishes
    /// it and returns what `change` returned (clone-on-write). For many
    /// changes at once use [`write`](RcuCell::write).
    ///
    /// ```
    /// use fibre_rcu::{Domain, RcuCell};
    /// let domain = Domain::new();
    /// let cell = RcuCell::new(&domain, vec![1]);
    /// let len = cell.update(|v| { v.push(2); v.len() });
    /// assert_eq!(len, 2);
    /// let reader = domain.register();
    /// assert_eq!(cell.read(&reader.read()), &[1, 2]);
    /// ```
    pub fn update<R>(&self, change: impl FnOnce(&mut T) -> R) -> R {
        let mut batch = self.write();
        let result = change(&mut batch);
        batch.publish();
        result
    }

    /// Starts a batch: a private clone of the current version that the
    /// caller edits through `DerefMut` and publishes once with
    /// [`WriteBatch::publish`]. Other writers of this cell wait until the
    /// batch is published or dropped; readers are never blocked. (The same
    /// thread must not call another writer method of this cell while it
    /// holds the batch: the writer mutex is not re-entrant.)
    ///
    /// ```
    /// use fibre_rcu::{Domain, RcuCell};
    /// let domain = Domain::new();
    /// let cell = RcuCell::new(&domain, Vec::<u32>::new());
    /// let mut batch = cell.write();
    /// for i in 0..1000 {
    ///     batch.push(i);
    /// }
    /// batch.publish(); // readers see all 1000 changes at once
    /// let reader = domain.register();
    /// assert_eq!(cell.read(&reader.read()).len(), 1000);
    /// ```
    pub fn write(&self) -> WriteBatch<'_, T> {
        let state = lock(&self.writer);
        // SAFETY: the writer mutex is held; only a holder of it unpublishes
        // or frees versions, so the current version stays valid while we
        // clone it.
        let next = unsafe { &*self.hot.current.load(Acquire) }.clone();
        WriteBatch {
            cell: self,
            state,
            next: Box::new(next),
        }
    }
}

impl<T> Drop for RcuCell<T> {
    fn drop(&mut self) {
        self.reclaim_all();
        let current = self.hot.current.load(Acquire);
        // SAFETY: `&mut self` (we are being dropped) rules out any reader
        // reference into the cell; `current` came from `Box::into_raw` and is
        // freed only here.
        drop(unsafe { Box::from_raw(current) });
    }
}

impl<T: fmt::Debug> fmt::Debug for RcuCell<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.writer);
        // SAFETY: the writer mutex is held, so the current version cannot be
        // unpublished or freed while we format it.
        let current = unsafe { &*self.hot.current.load(Acquire) };
        f.debug_struct("RcuCell")
            .field("current", current)
            .field("pending_versions", &state.retired.len())
            .finish()
    }
}

/// The next version of an [`RcuCell`], private to the writer until
/// [`publish`](WriteBatch::publish)ed. Dropping it without publishing
/// discards the changes.
pub struct WriteBatch<'c, T> {
    cell: &'c RcuCell<T>,
    state: MutexGuard<'c, WriterState<T>>,
    next: Box<T>,
}

impl<T> WriteBatch<'_, T> {
    /// Makes the batch the current version (one pointer swap) and retires
    /// the previous one.
    pub fn publish(self) {
        let WriteBatch {
            cell,
            mut state,
            next,
        } = self;
        cell.wait_below_bound(&mut state);
        cell.swap_and_retire(&mut state, next);
    }
}

impl<T> Deref for WriteBatch<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.next
    }
}

impl<T> DerefMut for WriteBatch<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.next
    }
}

impl<T: fmt::Debug> fmt::Debug for WriteBatch<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("WriteBatch").field(&self.next).finish()
    }
}
