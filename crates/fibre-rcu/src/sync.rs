//! The synchronisation primitives the crate is built on.
//!
//! Normal builds use `std`; `--cfg loom` swaps in loom's instrumented
//! versions so that `tests/loom.rs` can explore every interleaving of the
//! publish / quiescent-state / reclaim protocol.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicPtr, AtomicU64, AtomicUsize};
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Mutex, MutexGuard};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicPtr, AtomicU64, AtomicUsize};
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Mutex, MutexGuard};

/// Locks `mutex`, ignoring poisoning.
///
/// Every structure behind the crate's mutexes is left consistent at each
/// point where a panic could unwind (a user's closure never runs with one of
/// them half-updated), so a poisoned lock carries no broken invariant and
/// refusing to continue would only turn one panic into many.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    #[cfg(loom)]
    {
        mutex
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
    #[cfg(not(loom))]
    {
        mutex
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Waits a little longer on each call: spin first (a grace period is
/// usually over within a few microseconds when readers report often), then
/// yield, then sleep up to a millisecond so a writer blocked on a slow
/// reader does not burn a core.
pub(crate) struct Backoff {
    step: u32,
}

impl Backoff {
    pub(crate) fn new() -> Self {
        Backoff { step: 0 }
    }

    pub(crate) fn wait(&mut self) {
        #[cfg(loom)]
        {
            // Loom needs every spin loop to yield so it can schedule the
            // thread the loop is waiting on.
            loom::thread::yield_now();
        }
        #[cfg(not(loom))]
        {
            const SPIN_STEPS: u32 = 6;
            const YIELD_STEPS: u32 = 10;
            if self.step < SPIN_STEPS {
                for _ in 0..(1u32 << self.step) {
                    std::hint::spin_loop();
                }
            } else if self.step < YIELD_STEPS {
                std::thread::yield_now();
            } else {
                let exponent = (self.step - YIELD_STEPS).min(10);
                let micros = (1u64 << exponent).min(1000);
                std::thread::sleep(std::time::Duration::from_micros(micros));
            }
        }
        self.step = self.step.saturating_add(1);
    }
}
