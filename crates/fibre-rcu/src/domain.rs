//! The grace-period domain: the global epoch and the registry of readers.

use std::fmt;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, SeqCst};
use std::time::{Duration, Instant};

use crate::reader::{ReaderHandle, ReaderSlot, OFFLINE};
use crate::stall::{Lag, LagCheck, StallCallback, StallReport};
use crate::sync::{fence, lock, Arc, AtomicU64, AtomicUsize, Backoff, Mutex};
use fibre_base::{CachePadded, WorkerId};

/// The first epoch; 0 is reserved for "offline" in reader slots.
const FIRST_EPOCH: u64 = 1;

/// How long a reader may sit on one epoch while a grace period waits before
/// it is reported, unless [`DomainBuilder::stall_after`] says otherwise.
pub const DEFAULT_STALL_AFTER: Duration = Duration::from_secs(1);

/// A set of readers and the grace periods they define.
///
/// Each reader thread [`register`](Domain::register)s once and gets a
/// [`ReaderHandle`]; between batches of reads it calls
/// [`ReaderHandle::quiescent`]. [`RcuCell`](crate::RcuCell)s created in the
/// domain free a replaced version once every online reader has reported a
/// quiescent state after the replacement. `Domain` is a cheap handle
/// (clone it freely).
///
/// ```
/// use fibre_rcu::{Domain, RcuCell};
/// let domain = Domain::new();
/// let cell = RcuCell::new(&domain, String::from("v1"));
/// let mut reader = domain.register();
/// {
///     let guard = reader.read();
///     assert_eq!(cell.read(&guard), "v1");
/// }
/// cell.publish(String::from("v2"));
/// assert_eq!(cell.pending().versions, 1); // the reader may still see "v1"
/// reader.quiescent(); // between batches: no borrow may be alive here
/// assert_eq!(cell.reclaim(), 1); // "v1" is freed
/// ```
#[derive(Clone)]
pub struct Domain {
    pub(crate) shared: Arc<DomainShared>,
}

/// Builds a [`Domain`] with non-default stall handling.
///
/// ```
/// use std::time::Duration;
/// use fibre_rcu::Domain;
/// let domain = Domain::builder()
///     .stall_after(Duration::from_millis(50))
///     .on_stall(|report| eprintln!("reader {} is stalled", report.reader_label))
///     .build();
/// assert_eq!(domain.stats().stalls_detected, 0);
/// ```
#[derive(Default)]
pub struct DomainBuilder {
    stall_after: Option<Duration>,
    on_stall: Option<StallCallback>,
}

impl DomainBuilder {
    /// Report a reader that has not reported a quiescent state for this long
    /// while a grace period waits on it (default [`DEFAULT_STALL_AFTER`]).
    pub fn stall_after(mut self, threshold: Duration) -> Self {
        self.stall_after = Some(threshold);
        self
    }

    /// Also call `callback` for every stall report (besides the `tracing`
    /// warning and the counter in [`DomainStats::stalls_detected`]). It runs
    /// on the writer's thread, which may hold the writer lock of the cell
    /// it was reclaiming: the callback may read [`Domain::stats`] but must
    /// not call writer methods of the domain's cells.
    pub fn on_stall(mut self, callback: impl Fn(&StallReport) + Send + Sync + 'static) -> Self {
        self.on_stall = Some(std::sync::Arc::new(callback));
        self
    }

    /// Creates the domain.
    pub fn build(self) -> Domain {
        Domain {
            shared: Arc::new(DomainShared {
                epoch: CachePadded::new(AtomicU64::new(FIRST_EPOCH)),
                registry: Mutex::new(Registry::default()),
                stall_after: self.stall_after.unwrap_or(DEFAULT_STALL_AFTER),
                on_stall: self.on_stall,
                counters: CachePadded::new(WriterCounters {
                    stalls_detected: AtomicU64::new(0),
                    pending_versions: AtomicUsize::new(0),
                    pending_bytes: AtomicUsize::new(0),
                }),
            }),
        }
    }
}

/// A snapshot of a domain's state, for monitoring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DomainStats {
    /// The current epoch; it advances once per publication or synchronize.
    pub epoch: u64,
    /// Readers registered (online or not).
    pub readers_registered: usize,
    /// Readers currently online (their quiescent states gate reclamation).
    pub readers_online: usize,
    /// Stall reports issued so far.
    pub stalls_detected: u64,
    /// Retired versions, over all cells of the domain, not yet freed.
    pub pending_versions: usize,
    /// Bytes those versions hold.
    pub pending_bytes: usize,
}

/// A grace period did not end in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("grace period for epoch {needed_epoch} still waits on {blocking_readers} reader(s) after {waited:?}")]
pub struct GracePeriodTimeout {
    /// The epoch every online reader had to reach.
    pub needed_epoch: u64,
    /// Online readers that had not reached it.
    pub blocking_readers: usize,
    /// How long the call waited.
    pub waited: Duration,
}

pub(crate) struct DomainShared {
    /// Advanced by writers (one RMW per publication); read by readers once
    /// per quiescent report. On its own lines so that the registry mutex and
    /// the counters, written only by writers, do not invalidate it.
    epoch: CachePadded<AtomicU64>,
    registry: Mutex<Registry>,
    stall_after: Duration,
    on_stall: Option<StallCallback>,
    counters: CachePadded<WriterCounters>,
}

/// Counters only writers touch.
struct WriterCounters {
    stalls_detected: AtomicU64,
    pending_versions: AtomicUsize,
    pending_bytes: AtomicUsize,
}

#[derive(Default)]
struct Registry {
    readers: Vec<Registered>,
    next_id: u64,
}

struct Registered {
    id: u64,
    worker: Option<WorkerId>,
    label: String,
    slot: Arc<ReaderSlot>,
    lag: Option<Lag>,
}

/// What one pass over the reader slots found.
pub(crate) struct Scan {
    /// The smallest epoch an online reader has reported (`u64::MAX` if no
    /// reader is online).
    pub(crate) min_observed: u64,
    /// Online readers behind the epoch the scan was asked about.
    pub(crate) behind: usize,
}

impl Domain {
    /// A domain with the default stall threshold and no stall callback.
    pub fn new() -> Self {
        DomainBuilder::default().build()
    }

    /// Starts building a domain with custom stall handling.
    pub fn builder() -> DomainBuilder {
        DomainBuilder::default()
    }

    /// Registers the calling thread as a reader, online from now on.
    ///
    /// The handle may be moved to the thread that will use it; its label (in
    /// stall reports) is the name of the thread that registered it.
    ///
    /// ```
    /// use fibre_rcu::Domain;
    /// let domain = Domain::new();
    /// let reader = domain.register();
    /// assert_eq!(domain.stats().readers_online, 1);
    /// drop(reader); // unregisters
    /// assert_eq!(domain.stats().readers_registered, 0);
    /// ```
    pub fn register(&self) -> ReaderHandle {
        self.register_as(None)
    }

    /// Registers the calling thread as the reader of `worker` (the core it
    /// forwards for), online from now on: the handle and its stall reports
    /// name the worker, the same [`WorkerId`] the route cache's per-core
    /// slots and the devices' statistics are indexed by.
    ///
    /// ```
    /// use fibre_base::WorkerId;
    /// use fibre_rcu::Domain;
    /// let domain = Domain::new();
    /// let reader = domain.register_worker(WorkerId::new(3));
    /// assert_eq!(reader.worker(), Some(WorkerId::new(3)));
    /// assert_eq!(domain.register().worker(), None);
    /// ```
    pub fn register_worker(&self, worker: WorkerId) -> ReaderHandle {
        self.register_as(Some(worker))
    }

    fn register_as(&self, worker: Option<WorkerId>) -> ReaderHandle {
        let label = std::thread::current().name().map(str::to_owned);
        let slot = Arc::new(ReaderSlot::new());
        let id = {
            let mut registry = lock(&self.shared.registry);
            let id = registry.next_id;
            registry.next_id += 1;
            registry.readers.push(Registered {
                id,
                worker,
                label: label.unwrap_or_else(|| match worker {
                    Some(worker) => worker.to_string(),
                    None => format!("reader-{id}"),
                }),
                slot: Arc::clone(&slot),
                lag: None,
            });
            id
        };
        let handle = ReaderHandle::new(Arc::clone(&self.shared), slot, id, worker);
        handle.slot().come_online(&self.shared);
        handle
    }

    /// Waits until every reader that is online now has reported a quiescent
    /// state (or gone offline), backing off from spinning to sleeping.
    ///
    /// Must not be called while the calling thread holds an online
    /// [`ReaderHandle`] of this domain that it does not report on: that
    /// reader would wait for itself (the stall detector reports it).
    ///
    /// ```
    /// use std::thread;
    /// use fibre_rcu::Domain;
    /// let domain = Domain::new();
    /// let mut reader = domain.register();
    /// thread::scope(|s| {
    ///     let waiting = s.spawn(|| domain.synchronize());
    ///     while !waiting.is_finished() {
    ///         reader.quiescent(); // the grace period ends at a report
    ///     }
    /// });
    /// ```
    pub fn synchronize(&self) {
        let needed = self.shared.advance();
        let mut backoff = Backoff::new();
        while self.shared.scan(needed).min_observed < needed {
            backoff.wait();
        }
    }

    /// Like [`synchronize`](Domain::synchronize) but gives up after
    /// `timeout`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fibre_rcu::Domain;
    /// let domain = Domain::new();
    /// let _reader = domain.register(); // online, and never reports
    /// let err = domain.synchronize_timeout(Duration::from_millis(5)).unwrap_err();
    /// assert_eq!(err.blocking_readers, 1);
    /// ```
    pub fn synchronize_timeout(&self, timeout: Duration) -> Result<(), GracePeriodTimeout> {
        let started = Instant::now();
        let needed = self.shared.advance();
        let mut backoff = Backoff::new();
        loop {
            let scan = self.shared.scan(needed);
            if scan.min_observed >= needed {
                return Ok(());
            }
            let waited = started.elapsed();
            if waited >= timeout {
                return Err(GracePeriodTimeout {
                    needed_epoch: needed,
                    blocking_readers: scan.behind,
                    waited,
                });
            }
            backoff.wait();
        }
    }

    /// A snapshot of the domain's counters.
    ///
    /// ```
    /// use fibre_rcu::{Domain, RcuCell};
    /// let domain = Domain::new();
    /// let cell = RcuCell::new(&domain, [0u8; 64]);
    /// let _reader = domain.register();
    /// cell.publish([1; 64]);
    /// let stats = domain.stats();
    /// assert_eq!((stats.readers_online, stats.pending_versions), (1, 1));
    /// assert_eq!(stats.pending_bytes, 64);
    /// ```
    pub fn stats(&self) -> DomainStats {
        let shared = &self.shared;
        let (registered, online) = {
            let registry = lock(&shared.registry);
            let online = registry
                .readers
                .iter()
                .filter(|r| r.slot.observed() != OFFLINE)
                .count();
            (registry.readers.len(), online)
        };
        DomainStats {
            epoch: shared.epoch.load(Acquire),
            readers_registered: registered,
            readers_online: online,
            stalls_detected: shared.counters.stalls_detected.load(Relaxed),
            pending_versions: shared.counters.pending_versions.load(Relaxed),
            pending_bytes: shared.counters.pending_bytes.load(Relaxed),
        }
    }
}

impl Default for Domain {
    fn default() -> Self {
        Domain::new()
    }
}

impl fmt::Debug for Domain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Domain")
            .field("stall_after", &self.shared.stall_after)
            .field("stats", &self.stats())
            .finish()
    }
}

impl DomainShared {
    /// The epoch readers copy into their slot when they report.
    #[inline]
    pub(crate) fn current_epoch(&self) -> u64 {
        self.epoch.load(Acquire)
    }

    /// Starts a grace period: every version unpublished before this call is
    /// safe to free once every online reader has reported the returned
    /// epoch.
    ///
    /// The release half of the increment makes the writer's earlier swap of
    /// a cell's pointer visible to any reader that reads the new epoch; the
    /// SeqCst fence pairs with the one a reader issues when it comes online
    /// (see `ReaderSlot::come_online`): either the writer's later slot scan
    /// sees that reader online, or the reader's first pointer load sees the
    /// swap.
    pub(crate) fn advance(&self) -> u64 {
        let needed = self.epoch.fetch_add(1, AcqRel) + 1;
        fence(SeqCst);
        needed
    }

    /// Reads every reader's slot; tracks (and reports) readers that are
    /// behind `needed` for longer than the stall threshold.
    pub(crate) fn scan(&self, needed: u64) -> Scan {
        let now = Instant::now();
        let mut reports = Vec::new();
        let mut result = Scan {
            min_observed: u64::MAX,
            behind: 0,
        };
        {
            let mut registry = lock(&self.registry);
            for reader in &mut registry.readers {
                let observed = reader.slot.observed();
                if observed == OFFLINE {
                    reader.lag = None;
                    continue;
                }
                result.min_observed = result.min_observed.min(observed);
                if observed >= needed {
                    reader.lag = None;
                    continue;
                }
                result.behind += 1;
                if let LagCheck::Stalled { stalled_for } =
                    Lag::observe(&mut reader.lag, observed, now, self.stall_after)
                {
                    reports.push(StallReport {
                        reader_id: reader.id,
                        worker: reader.worker,
                        reader_label: reader.label.clone(),
                        observed_epoch: observed,
                        needed_epoch: needed,
                        stalled_for,
                        pinned_versions: self.counters.pending_versions.load(Relaxed),
                        pinned_bytes: self.counters.pending_bytes.load(Relaxed),
                    });
                }
            }
        }
        for report in &reports {
            self.counters.stalls_detected.fetch_add(1, Relaxed);
            tracing::warn!(
                reader_id = report.reader_id,
                worker = report.worker.map(|w| w.index()),
                reader = %report.reader_label,
                observed_epoch = report.observed_epoch,
                needed_epoch = report.needed_epoch,
                stalled_ms = report.stalled_for.as_millis() as u64,
                pinned_versions = report.pinned_versions,
                pinned_bytes = report.pinned_bytes,
                "RCU reader has not reported a quiescent state; retired versions stay pinned"
            );
            if let Some(callback) = &self.on_stall {
                callback(report);
            }
        }
        result
    }

    /// The newest epoch that every online reader has reached: a version
    /// retired at an epoch no later than this is unreachable. `needed` is the
    /// epoch the oldest waiting version needs (for stall tracking).
    pub(crate) fn safe_epoch(&self, needed: u64) -> u64 {
        let scan = self.scan(needed);
        scan.min_observed.min(self.current_epoch())
    }

    pub(crate) fn unregister(&self, id: u64) {
        lock(&self.registry).readers.retain(|r| r.id != id);
    }

    pub(crate) fn add_pending(&self, versions: usize, bytes: usize) {
        self.counters.pending_versions.fetch_add(versions, Relaxed);
        self.counters.pending_bytes.fetch_add(bytes, Relaxed);
    }

    pub(crate) fn remove_pending(&self, versions: usize, bytes: usize) {
        self.counters.pending_versions.fetch_sub(versions, Relaxed);
        self.counters.pending_bytes.fetch_sub(bytes, Relaxed);
    }
}
