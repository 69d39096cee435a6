//! Worker ids: the caller's per-core identity.

/// Most workers a device keeps per-worker state for. Per-worker slots are
/// 128 bytes or more, so this bounds a device's statistics to a few hundred KiB.
pub const MAX_WORKERS: usize = 1024;

/// The id (`0..N`) of the worker (core) calling a device. The forwarding
/// plane has one per core; each worker owns its statistics and route-cache
/// slot in every device, so workers never write a shared cache line per
/// packet. Two threads using the same id stay correct (counters are atomic,
/// the route-cache slot is guarded), only slower.
///
/// ```
/// use fibre_dev::WorkerId;
/// let w = WorkerId::new(3);
/// assert_eq!(w.index(), 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorkerId(u32);

impl WorkerId {
    /// Worker number `index`.
    pub const fn new(index: u32) -> WorkerId {
        WorkerId(index)
    }

    /// The number, for indexing per-worker slots.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}
