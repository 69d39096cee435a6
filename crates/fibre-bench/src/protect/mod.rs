//! Three ways to protect one shared `T` that many threads read and one
//! thread occasionally changes, behind one trait so a benchmark can compare
//! them on the same workload: a reader/writer lock and a per-CPU lock, the
//! "befores" of "net ipv6: convert fib6_table rwlock to a percpu lock"
//! (Shaohua Li, 2017), written here over std, and RCU, a thin adapter over
//! `fibre_rcu`'s public API (the answer the kernel took instead).

mod per_cpu;
mod rcu;
mod rw_lock;

pub use per_cpu::PerCpuLock;
pub use rcu::Rcu;
pub use rw_lock::RwLockProtected;

/// Shared, read-mostly data with one protection strategy.
///
/// Each reading thread makes its own [`Reader`](Protected::Reader) once and
/// passes it to every [`read`](Protected::read); between batches it calls
/// [`quiescent`](Protected::quiescent) (a no-op for the lock-based
/// strategies, the quiescent-state report for RCU).
///
/// ```
/// use fibre_bench::protect::{PerCpuLock, Protected, Rcu, RwLockProtected};
///
/// fn sum_twice<P: Protected<Vec<u32>>>(shared: &P) -> u32 {
///     let mut reader = shared.reader();
///     let first = shared.read(&mut reader, |v| v.iter().sum::<u32>());
///     shared.quiescent(&mut reader);
///     shared.write(|v| v.push(1));
///     let second = shared.read(&mut reader, |v| v.iter().sum::<u32>());
///     first + second
/// }
///
/// assert_eq!(sum_twice(&RwLockProtected::new(vec![1, 2])), 7);
/// assert_eq!(sum_twice(&PerCpuLock::new(vec![1, 2])), 7);
/// assert_eq!(sum_twice(&Rcu::new(vec![1, 2])), 7);
/// ```
pub trait Protected<T>: Send + Sync {
    /// Per-thread reader state.
    type Reader: Send;

    /// A short name for reports ("rwlock", "percpu", "rcu").
    fn name(&self) -> &'static str;

    /// Makes the calling thread's reader state.
    fn reader(&self) -> Self::Reader;

    /// Runs `f` on the current value.
    fn read<R>(&self, reader: &mut Self::Reader, f: impl FnOnce(&T) -> R) -> R;

    /// Tells the strategy that `reader` holds nothing between batches.
    fn quiescent(&self, reader: &mut Self::Reader);

    /// Changes the value; readers see all of `f`'s changes or none of them.
    fn write<R>(&self, f: impl FnOnce(&mut T) -> R) -> R;
}
