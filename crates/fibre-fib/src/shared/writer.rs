//! The one writer of a shared FIB: batches applied to its private working
//! copy, each published as a cheap clone of it (copy-on-write chunks shared
//! with the previous version), old versions freed after their grace period.

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fibre_rcu::{Domain, RcuCell, StallReport, DEFAULT_STALL_AFTER};

use super::report::{BatchMode, BatchReport, Refusal, WriteError};
use super::{Published, SharedFib, Snapshot};
use crate::command::Command;
use crate::fib::Fib;
use crate::write::change::FibChange;

/// How long [`FibWriter::apply_batch`] waits, by default, for a grace
/// period before refusing a batch with [`WriteError::GracePeriodTimeout`].
pub const DEFAULT_GRACE_TIMEOUT: Duration = Duration::from_secs(5);

/// How many published versions, by default, may wait for their grace
/// period at once before [`FibWriter::apply_batch`] waits for the oldest
/// (see [`FibWriterBuilder::max_pending`]).
pub const DEFAULT_MAX_PENDING: NonZeroUsize = NonZeroUsize::new(4).expect("4 is not zero");

/// Polls of a grace period spent spinning before the writer naps.
const SPIN_ROUNDS: u32 = 6;

/// The longest a writer naps between two polls of a grace period: short,
/// because readers usually report within microseconds, and a nap adds to
/// the publication latency.
const MAX_NAP: Duration = Duration::from_micros(100);

type StallHook = Arc<dyn Fn(&StallReport) + Send + Sync>;

/// Something that keeps answers derived from the FIB (a route cache) and
/// must hear what each published batch changed.
///
/// [`FibWriter`] calls [`fib_changed`](FibListener::fib_changed) on its
/// own thread twice per batch: when the batch is published, and once the
/// batch's grace period is over. After the second call no reader can still
/// be looking at the state before the batch, so an answer derived from
/// the FIB afterwards is derived from the new state: a listener that marks
/// its entries stale (by bumping a generation) never keeps an entry built
/// from the old state as valid. The first call bounds how long the old
/// answers last if the grace period times out (a stalled reader); the
/// second then comes after the next grace period that ends.
pub trait FibListener: Send + Sync {
    /// `changes`: one per applied command, and one per refused route
    /// command (which may have changed its prefix before refusing), in
    /// order (duplicates possible).
    fn fib_changed(&self, changes: &[FibChange]);
}

/// Options of a [`FibWriter`]: stall detection and how long to wait for a
/// grace period.
///
/// ```
/// use std::time::Duration;
/// use fibre_fib::{shared::FibWriter, Fib};
/// let writer = FibWriter::builder()
///     .stall_after(Duration::from_millis(100))
///     .grace_timeout(Duration::from_secs(1))
///     .on_stall(|report| eprintln!("reader {} stalled", report.reader_label))
///     .build(Fib::new());
/// assert_eq!(writer.version(), 0);
/// ```
#[must_use]
pub struct FibWriterBuilder {
    stall_after: Duration,
    grace_timeout: Duration,
    max_pending: NonZeroUsize,
    on_stall: Option<StallHook>,
}

impl FibWriterBuilder {
    /// A reader that has not reported for this long while the writer waits
    /// for it is reported as stalled (default: fibre-rcu's
    /// [`DEFAULT_STALL_AFTER`]).
    pub fn stall_after(mut self, threshold: Duration) -> Self {
        self.stall_after = threshold;
        self
    }

    /// How long a batch waits for a grace period before it is refused
    /// (default [`DEFAULT_GRACE_TIMEOUT`]).
    pub fn grace_timeout(mut self, timeout: Duration) -> Self {
        self.grace_timeout = timeout;
        self
    }

    /// At most `limit` old versions wait for their grace period at once
    /// (default [`DEFAULT_MAX_PENDING`]): a batch that would retire one
    /// more waits for the oldest to be freed first, and is refused with
    /// [`WriteError::GracePeriodTimeout`] if that takes longer than the
    /// grace timeout. Each pending version holds only the chunks it no
    /// longer shares with the published one, so the memory a stalled reader
    /// pins is bounded by `limit` times what one batch rewrites.
    pub fn max_pending(mut self, limit: NonZeroUsize) -> Self {
        self.max_pending = limit;
        self
    }

    /// Called on the writer's thread for each stall report (besides the
    /// domain's `tracing` warning and counter).
    pub fn on_stall(mut self, callback: impl Fn(&StallReport) + Send + Sync + 'static) -> Self {
        self.on_stall = Some(Arc::new(callback));
        self
    }

    /// The writer, publishing `fib` as version 0; `fib` becomes the
    /// writer's working copy, and the published version is a clone of it
    /// that shares all its chunks.
    pub fn build(self, fib: Fib) -> FibWriter {
        let mut domain = Domain::builder().stall_after(self.stall_after);
        if let Some(hook) = self.on_stall {
            domain = domain.on_stall(move |report| hook(report));
        }
        let domain = domain.build();
        let current = Arc::new(Snapshot {
            version: 0,
            fib: fib.clone(),
        });
        let cell = RcuCell::builder(&domain)
            .max_pending(self.max_pending)
            .heap_bytes(|snapshot: &Arc<Snapshot>| snapshot.fib.exclusive_bytes())
            .build(Arc::clone(&current));
        FibWriter {
            published: Arc::new(Published { domain, cell }),
            working: fib,
            current,
            max_pending: self.max_pending,
            grace_timeout: self.grace_timeout,
            listeners: Vec::new(),
            unnotified: Vec::new(),
        }
    }
}

/// The only writer of a shared FIB. Not `Clone`: writes are serialized by
/// `&mut self`. See the [module docs](super) for the scheme.
///
/// ```
/// use fibre_fib::{shared::{BatchMode, FibWriter}, *};
/// let mut writer = FibWriter::new(Fib::new());
/// let mut reader = writer.shared().reader();
/// let add = Command::LinkAdd { name: "d0".into(), kind: LinkKind::Ifb, mtu: None };
/// let up = Command::LinkSet { name: "d0".into(), up: Some(true), mtu: None };
/// let report = writer.apply_batch(&[add, up], BatchMode::AllOrNothing).unwrap();
/// assert_eq!(report.published, Some(1));
/// assert!(reader.batch(|s| s.fib().link_by_name("d0").unwrap().up));
/// ```
pub struct FibWriter {
    published: Arc<Published>,
    /// The writer's private copy: batches are applied here, then a clone
    /// of it is published. Equal to `current.fib` between batches.
    working: Fib,
    /// The version in the cell (the writer's own reference to it).
    current: Arc<Snapshot>,
    max_pending: NonZeroUsize,
    grace_timeout: Duration,
    listeners: Vec<Arc<dyn FibListener>>,
    /// Changes published but not yet told to the listeners after their
    /// grace period (it timed out): told after the next one ends.
    unnotified: Vec<FibChange>,
}

impl FibWriter {
    /// A writer with the default options, publishing `fib` as version 0.
    pub fn new(fib: Fib) -> Self {
        Self::builder().build(fib)
    }

    /// Options: stall threshold and callback, grace period timeout.
    pub fn builder() -> FibWriterBuilder {
        FibWriterBuilder {
            stall_after: DEFAULT_STALL_AFTER,
            grace_timeout: DEFAULT_GRACE_TIMEOUT,
            max_pending: DEFAULT_MAX_PENDING,
            on_stall: None,
        }
    }

    /// A handle for making readers.
    pub fn shared(&self) -> SharedFib {
        SharedFib {
            published: Arc::clone(&self.published),
        }
    }

    /// Tells `listener` what every batch published from now on changed.
    /// With a listener, [`apply_batch`](FibWriter::apply_batch) returns
    /// only after its batch's grace period (so that the listener hears of
    /// it before the writer goes on); without one it returns right after
    /// publishing.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use fibre_fib::{shared::{BatchMode, FibListener, FibWriter}, *};
    /// #[derive(Default)]
    /// struct Heard(Mutex<Vec<FibChange>>);
    /// impl FibListener for Heard {
    ///     fn fib_changed(&self, changes: &[FibChange]) {
    ///         self.0.lock().unwrap().extend_from_slice(changes);
    ///     }
    /// }
    /// let heard = Arc::new(Heard::default());
    /// let mut writer = FibWriter::new(Fib::new());
    /// writer.add_listener(heard.clone());
    /// let add = Command::LinkAdd { name: "d0".into(), kind: LinkKind::Ifb, mtu: None };
    /// writer.apply_batch(&[add.clone(), add], BatchMode::BestEffort).unwrap();
    /// // One change, heard when published and after the grace period; the
    /// // refused duplicate changed nothing.
    /// assert_eq!(*heard.0.lock().unwrap(), [FibChange::Everything, FibChange::Everything]);
    /// ```
    pub fn add_listener(&mut self, listener: Arc<dyn FibListener>) {
        self.listeners.push(listener);
    }

    /// The published FIB, as readers see it now.
    pub fn fib(&self) -> &Fib {
        &self.current.fib
    }

    /// The published version.
    pub fn version(&self) -> u64 {
        self.current.version
    }

    /// Applies `commands` in order and publishes the result as one new
    /// version (see [`BatchMode`] for refused commands). Readers see the
    /// state before the batch or after it, never a part of it.
    ///
    /// Waits first for the previous batch's grace period (at most the
    /// builder's `grace_timeout`; readers report between their batches, so
    /// this is usually over at once). On timeout nothing is applied and the
    /// batch can be retried.
    ///
    /// ```
    /// use fibre_fib::{shared::{BatchMode, FibWriter}, *};
    /// let mut writer = FibWriter::new(Fib::new());
    /// let add = |name: &str| Command::LinkAdd { name: name.into(), kind: LinkKind::Ifb, mtu: None };
    /// let batch = [add("a"), add("a"), add("b")];
    ///
    /// let report = writer.apply_batch(&batch, BatchMode::AllOrNothing).unwrap();
    /// assert_eq!((report.published, report.refused[0].index), (None, 1));
    /// assert!(writer.fib().link_by_name("a").is_none());
    ///
    /// let report = writer.apply_batch(&batch, BatchMode::BestEffort).unwrap();
    /// assert_eq!((report.published, report.applied), (Some(1), 2));
    /// assert!(writer.fib().link_by_name("b").is_some());
    /// ```
    pub fn apply_batch(
        &mut self,
        commands: &[Command],
        mode: BatchMode,
    ) -> Result<BatchReport, WriteError> {
        let started = Instant::now();
        if commands.is_empty() {
            return Ok(BatchReport {
                published: None,
                applied: 0,
                refused: Vec::new(),
                latency: started.elapsed(),
            });
        }
        if !self.unnotified.is_empty() {
            // The listeners still have to hear that the old state is gone.
            self.wait_for_grace(0)?;
        }
        // Room for one more pending version before anything is applied, so
        // that a refused batch leaves the working copy as published.
        self.wait_for_grace(self.max_pending.get() - 1)?;
        let version = self.current.version + 1;
        let mut refused = Vec::new();
        for (index, command) in commands.iter().enumerate() {
            if let Err(error) = self.working.apply(command) {
                refused.push(Refusal { index, error });
            }
        }
        let applied = commands.len() - refused.len();
        if mode == BatchMode::AllOrNothing && !refused.is_empty() {
            // No undo in the FIB: the published version is cloned back
            // (chunk directories only, the chunks are shared).
            self.working = self.current.fib.clone();
            return Ok(BatchReport {
                published: None,
                applied,
                refused,
                latency: started.elapsed(),
            });
        }
        self.current = Arc::new(Snapshot {
            version,
            fib: self.working.clone(),
        });
        // Below the bound (waited for above, and this is the only writer):
        // `publish` does not block.
        self.published.cell.publish(Arc::clone(&self.current));
        let latency = started.elapsed();
        if !self.listeners.is_empty() {
            // A refused route command is heard too: it may have changed
            // its prefix before refusing (an IPv6 multipath delete removes
            // the paths it found, then refuses the one it did not, as the
            // kernel does), and a cache that missed it would keep answers
            // through a deleted path. Other refused commands are taken at
            // `Fib::apply`'s word: they changed nothing visible.
            let mut refusals = refused.iter().map(|r| r.index).peekable();
            let changes: Vec<FibChange> = commands
                .iter()
                .enumerate()
                .filter(|(index, command)| {
                    refusals.next_if_eq(index).is_none() || matches!(command, Command::Route { .. })
                })
                .map(|(_, command)| FibChange::of(command))
                .collect();
            for listener in &self.listeners {
                listener.fib_changed(&changes);
            }
            self.unnotified.extend(changes);
            // The grace period of this batch, waited for now so that the
            // listeners hear of it again once no reader can see the old
            // state. On a timeout they hear of it after the next grace
            // period instead; the batch itself is published either way.
            let _ = self.wait_for_grace(0);
        }
        Ok(BatchReport {
            published: Some(version),
            applied,
            refused,
            latency,
        })
    }

    /// Waits until every old version has been freed (every reader has
    /// moved to the published one) and tells the listeners what they have
    /// not heard after a grace period yet: for a writer about to go idle.
    ///
    /// ```
    /// use fibre_fib::{shared::{BatchMode, FibWriter}, Command, Fib};
    /// let mut writer = FibWriter::new(Fib::new());
    /// writer.apply_batch(&[Command::LinkDel { name: "x".into() }], BatchMode::BestEffort).unwrap();
    /// writer.sync().unwrap();
    /// assert_eq!(writer.shared().stats().pending_versions, 0);
    /// ```
    pub fn sync(&mut self) -> Result<(), WriteError> {
        self.wait_for_grace(0)
    }

    /// Polls the cell until at most `pending` old versions wait for their
    /// grace period; when none does, tells the listeners what they have
    /// not heard after a grace period yet. Spins, then naps at most
    /// [`MAX_NAP`] between polls; each poll also lets the domain detect and
    /// report stalled readers.
    fn wait_for_grace(&mut self, pending: usize) -> Result<(), WriteError> {
        let started = Instant::now();
        let mut round = 0u32;
        loop {
            self.published.cell.reclaim();
            let waiting = self.published.cell.pending().versions;
            if waiting <= pending {
                if waiting == 0 && !self.unnotified.is_empty() {
                    for listener in &self.listeners {
                        listener.fib_changed(&self.unnotified);
                    }
                    self.unnotified.clear();
                }
                return Ok(());
            }
            if started.elapsed() >= self.grace_timeout {
                // One last full scan names the readers still behind; the
                // scan itself waits nothing, the batch waited since `started`.
                if let Err(mut timeout) = self.published.domain.synchronize_timeout(Duration::ZERO)
                {
                    timeout.waited = started.elapsed();
                    return Err(timeout.into());
                }
                continue;
            }
            if round < SPIN_ROUNDS {
                (0..1u32 << round).for_each(|_| std::hint::spin_loop());
            } else {
                // Sleep rather than yield: a yield hands the core to a
                // preempted reader for the rest of a scheduler tick
                // (milliseconds) before the writer runs again, while a
                // sleeper is woken, and preempts, when its nap ends.
                let exponent = (round - SPIN_ROUNDS).min(16);
                std::thread::sleep(MAX_NAP.min(Duration::from_micros(1 << exponent)));
            }
            round = round.saturating_add(1);
        }
    }

    /// The published version and the writer's working copy: for tests that
    /// check they stay equal between batches.
    #[cfg(test)]
    pub(super) fn published_and_working(&self) -> (&Fib, &Fib) {
        (&self.current.fib, &self.working)
    }
}

impl std::fmt::Debug for FibWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FibWriter")
            .field("version", &self.current.version)
            .field("unnotified", &self.unnotified.len())
            .finish_non_exhaustive()
    }
}
