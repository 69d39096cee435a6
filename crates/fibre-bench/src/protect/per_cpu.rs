//! The per-CPU lock of Shaohua Li's "net ipv6: convert fib6_table rwlock to
//! a percpu lock" (net-next, August 2017; declined in favour of RCU): one
//! lock per CPU; a reader takes only its own, a writer takes them all.

use std::cell::UnsafeCell;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{PoisonError, RwLock, RwLockWriteGuard};

use super::Protected;
use fibre_base::CachePadded;

/// `T` guarded by one cache-padded lock per reader slot.
///
/// A reader locks only its own slot's lock (an atomic read-modify-write, but
/// on a line no other core touches, so it does not bounce); a writer locks
/// every slot in index order. Readers are assigned slots round-robin as
/// they call [`reader`](Protected::reader); with more readers than slots
/// they share a slot's lock in read mode.
///
/// ```
/// use fibre_bench::protect::{PerCpuLock, Protected};
/// let shared = PerCpuLock::with_slots(7, 2);
/// let mut a = shared.reader();
/// let mut b = shared.reader();
/// shared.write(|v| *v *= 6);
/// assert_eq!(shared.read(&mut a, |v| *v) + shared.read(&mut b, |v| *v), 84);
/// ```
pub struct PerCpuLock<T> {
    locks: Box<[CachePadded<RwLock<()>>]>,
    next_slot: AtomicUsize,
    value: UnsafeCell<T>,
}

// SAFETY: `value` is only read while one slot lock is held in read mode and
// only written while every slot lock is held in write mode, so the cell is
// never written while it is read or written elsewhere: sharing the structure
// shares `&T` between threads (needs `T: Sync`) and lets any thread's write
// replace or drop parts of `T` (needs `T: Send`).
unsafe impl<T: Send + Sync> Sync for PerCpuLock<T> {}

/// A reader's slot in a [`PerCpuLock`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerCpuReader {
    slot: usize,
}

impl<T> PerCpuLock<T> {
    /// Protects `value` with one lock per available CPU.
    pub fn new(value: T) -> Self {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::with_slots(value, cpus)
    }

    /// Protects `value` with `slots` locks (at least one).
    pub fn with_slots(value: T, slots: usize) -> Self {
        let locks = (0..slots.max(1))
            .map(|_| CachePadded::new(RwLock::new(())))
            .collect();
        PerCpuLock {
            locks,
            next_slot: AtomicUsize::new(0),
            value: UnsafeCell::new(value),
        }
    }

    /// How many slot locks there are.
    pub fn slots(&self) -> usize {
        self.locks.len()
    }
}

impl<T: Send + Sync> Protected<T> for PerCpuLock<T> {
    type Reader = PerCpuReader;

    fn name(&self) -> &'static str {
        "percpu"
    }

    fn reader(&self) -> PerCpuReader {
        PerCpuReader {
            slot: self.next_slot.fetch_add(1, Relaxed) % self.locks.len(),
        }
    }

    fn read<R>(&self, reader: &mut PerCpuReader, f: impl FnOnce(&T) -> R) -> R {
        // Read guards never poison; a poisoned lock means a writer panicked,
        // and the baseline keeps serving what its closure left.
        // A reader made by another `PerCpuLock` may hold a slot past the end;
        // any one lock excludes writers, so it falls back to the first.
        let lock = self.locks.get(reader.slot).unwrap_or(&self.locks[0]);
        let _held = lock.read().unwrap_or_else(PoisonError::into_inner);
        // SAFETY: a slot lock is held in read mode, so no writer (which holds
        // all of them in write mode) can be mutating `value`.
        f(unsafe { &*self.value.get() })
    }

    fn quiescent(&self, _reader: &mut PerCpuReader) {}

    fn write<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        // In index order, so two writers cannot deadlock; readers hold at
        // most one lock each, so they cannot close a cycle either.
        let _held: Vec<RwLockWriteGuard<'_, ()>> = self
            .locks
            .iter()
            .map(|lock| lock.write().unwrap_or_else(PoisonError::into_inner))
            .collect();
        // SAFETY: every slot lock is held in write mode, so no reader holds a
        // reference into `value` and no other writer runs.
        f(unsafe { &mut *self.value.get() })
    }
}

impl<T: fmt::Debug> fmt::Debug for PerCpuLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PerCpuLock")
            .field("slots", &self.locks.len())
            .finish_non_exhaustive()
    }
}
