//! An rcuref-style reference count: references minus one, taken with an
//! unconditional add whose previous value's sign is checked, dropped with
//! a release subtraction and an acquire fence on the last one.
//!
//! Kept free of the rest of the crate so that `tests/loom.rs` can model it
//! (built with `--cfg loom`, it uses loom's atomics).

#[cfg(loom)]
use loom::sync::atomic::{fence, AtomicI64, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{fence, AtomicI64, Ordering};

/// References minus one: 0 is one reference, negative is dead.
#[derive(Debug)]
pub struct RefCount(AtomicI64);

impl Default for RefCount {
    fn default() -> Self {
        RefCount::new()
    }
}

impl RefCount {
    /// One reference.
    pub fn new() -> RefCount {
        RefCount(AtomicI64::new(0))
    }

    /// Takes a reference; false (and nothing taken) if the count had
    /// already dropped below one.
    #[inline]
    pub fn get(&self) -> bool {
        // Relaxed as in rcuref_get(): the caller already has the object
        // alive (a reference or a read section), it only adds one more.
        let old = self.0.fetch_add(1, Ordering::Relaxed);
        if old < 0 {
            self.0.fetch_sub(1, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Drops a reference; true when it was the last one.
    #[inline]
    pub fn put(&self) -> bool {
        // Release orders this owner's accesses before the count drop; the
        // acquire fence orders the caller's free after every other owner's.
        let old = self.0.fetch_sub(1, Ordering::Release);
        if old == 0 {
            fence(Ordering::Acquire);
            return true;
        }
        false
    }

    /// References now.
    pub fn count(&self) -> i64 {
        self.0.load(Ordering::Relaxed) + 1
    }
}
