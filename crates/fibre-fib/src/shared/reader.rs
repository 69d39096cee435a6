//! A reader thread's access to the published FIB.

use std::sync::Arc;

use fibre_rcu::{Offline, ReaderHandle};

use super::{Published, Snapshot};

/// One thread's lock-free access to the published FIB: registered in the
/// RCU domain, it reads the current [`Snapshot`] once per batch and reports
/// a quiescent state after it. `Send`, so it can be made on one thread and
/// moved to the worker that uses it; not `Sync` (one per thread).
///
/// ```
/// use fibre_fib::{shared::FibWriter, Fib};
/// let writer = FibWriter::new(Fib::new());
/// let mut reader = writer.shared().reader();
/// let links = reader.batch(|snap| snap.fib().links().count());
/// assert_eq!(links, 1); // lo
/// ```
pub struct FibReader {
    published: Arc<Published>,
    handle: ReaderHandle,
}

impl FibReader {
    pub(super) fn new(published: Arc<Published>) -> Self {
        let handle = published.domain.register();
        Self { published, handle }
    }

    /// Runs one batch of lookups on the current snapshot, then reports a
    /// quiescent state: nothing read in `lookups` can outlive it (the
    /// borrow checker sees to it), so the writer may reuse the snapshot's
    /// memory once every reader has reported. The whole batch sees one
    /// version: a change published meanwhile shows in the next batch.
    ///
    /// Cost: one acquire load of the published pointer and the report (a
    /// load and, when the epoch moved, one store to this reader's own cache
    /// line). Keep batches short (tens of packets): the writer's next batch
    /// waits for every reader's current one.
    ///
    /// A forwarding worker runs its receive burst here, so that the whole
    /// burst ([`Fib::lookup_output_burst_v4`](crate::Fib::lookup_output_burst_v4)
    /// and its kin) reads one snapshot:
    ///
    /// ```
    /// use fibre_fib::{shared::{BatchMode, FibWriter}, config, Errno, Fib, FlowKeyV4};
    /// let (fib, _) = config::apply_str(&Fib::new(), "r.conf",
    ///     "link add d0 type ifb\nlink set d0 up\naddr add 10.0.0.1/24 dev d0\n", false).unwrap();
    /// let writer = FibWriter::new(fib);
    /// let mut reader = writer.shared().reader();
    /// let keys = [FlowKeyV4 { dst: u32::from_be_bytes([10, 0, 0, 7]), ..Default::default() }; 32];
    /// let mut out = [Err(Errno::Inval); 32];
    /// reader.batch(|snap| snap.fib().lookup_output_burst_v4(&keys, &mut out));
    /// assert!(out.iter().all(|r| r.is_ok_and(|f| f.dev == 2)));
    /// ```
    pub fn batch<R>(&mut self, lookups: impl FnOnce(&Snapshot) -> R) -> R {
        let result = {
            let guard = self.handle.read();
            let snapshot: &Snapshot = self.published.cell.read(&guard);
            lookups(snapshot)
        };
        self.handle.quiescent();
        result
    }

    /// Takes this reader offline until the returned guard drops: call it
    /// before blocking (sleeping, waiting for packets) so that the writer
    /// does not wait for, or report as stalled, a reader that reads nothing.
    ///
    /// ```
    /// use fibre_fib::{shared::{BatchMode, FibWriter}, Command, Fib};
    /// let mut writer = FibWriter::new(Fib::new());
    /// let mut reader = writer.shared().reader();
    /// let idle = reader.offline();
    /// for _ in 0..3 {
    ///     // Each batch waits for the previous one's grace period: an
    ///     // offline reader does not hold it up.
    ///     writer.apply_batch(&[Command::LinkDel { name: "x".into() }], BatchMode::BestEffort).unwrap();
    /// }
    /// drop(idle);
    /// assert_eq!(reader.batch(|s| s.version()), 3);
    /// ```
    pub fn offline(&mut self) -> Offline<'_> {
        self.handle.offline()
    }

    /// The reader's id in stall reports.
    pub fn id(&self) -> u64 {
        self.handle.id()
    }
}

impl std::fmt::Debug for FibReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FibReader")
            .field("id", &self.handle.id())
            .finish_non_exhaustive()
    }
}
