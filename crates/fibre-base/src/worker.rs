//! Worker ids: which core is calling.

/// The id (`0..N`) of the worker (core) calling: the forwarding plane has
/// one per core, and everything kept per core is indexed by it — an RCU
/// reader's registration, a route cache's per-core output slot, a device's
/// statistics and tunnel route slot — so that workers never write a shared
/// cache line per packet. Two threads using the same id stay correct
/// (per-worker state is atomic or guarded), only slower.
///
/// ```
/// use fibre_base::WorkerId;
/// let w = WorkerId::new(3);
/// assert_eq!(w.index(), 3);
/// assert_eq!(w.to_string(), "worker 3");
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

impl std::fmt::Display for WorkerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "worker {}", self.0)
    }
}
