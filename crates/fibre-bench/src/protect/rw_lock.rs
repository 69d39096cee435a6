//! The "before": one reader/writer lock around the data.

use std::sync::{PoisonError, RwLock};

use super::Protected;

/// `T` behind one `std::sync::RwLock`: every read does an atomic
/// read-modify-write on the same lock word, so the line holding it bounces
/// between all reading cores (`fib6_table`'s rwlock before it became RCU).
///
/// ```
/// use fibre_bench::protect::{Protected, RwLockProtected};
/// let shared = RwLockProtected::new(5);
/// let mut reader = shared.reader();
/// shared.write(|v| *v += 1);
/// assert_eq!(shared.read(&mut reader, |v| *v), 6);
/// ```
#[derive(Debug, Default)]
pub struct RwLockProtected<T> {
    lock: RwLock<T>,
}

impl<T> RwLockProtected<T> {
    /// Protects `value`.
    pub fn new(value: T) -> Self {
        RwLockProtected {
            lock: RwLock::new(value),
        }
    }
}

impl<T: Send + Sync> Protected<T> for RwLockProtected<T> {
    type Reader = ();

    fn name(&self) -> &'static str {
        "rwlock"
    }

    fn reader(&self) {}

    fn read<R>(&self, _reader: &mut (), f: impl FnOnce(&T) -> R) -> R {
        // A writer that panicked left whatever its closure had done; the
        // baseline keeps serving that value rather than failing every read.
        let value = self.lock.read().unwrap_or_else(PoisonError::into_inner);
        f(&value)
    }

    fn quiescent(&self, _reader: &mut ()) {}

    fn write<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut value = self.lock.write().unwrap_or_else(PoisonError::into_inner);
        f(&mut value)
    }
}
