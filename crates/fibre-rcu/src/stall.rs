//! Detecting readers that hold a grace period up.
//!
//! Readers never read a clock: reporting a quiescent state stays one
//! release store. The writer instead remembers, per reader, which epoch it
//! last saw in that reader's slot and when it first saw it. If a grace
//! period needs a later epoch and the slot has not moved for longer than the
//! domain's `stall_after`, the reader is reported once for that episode.

use std::sync::Arc as StdArc;
use std::time::{Duration, Instant};

/// What the writer knows about a reader that has not reported a quiescent
/// state for longer than the domain's stall threshold while a grace period
/// waited on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StallReport {
    /// The reader's id, as [`ReaderHandle::id`](crate::ReaderHandle::id) gives it.
    pub reader_id: u64,
    /// The worker the reader was registered for
    /// ([`Domain::register_worker`](crate::Domain::register_worker)), if any.
    pub worker: Option<fibre_base::WorkerId>,
    /// The name of the thread that registered the reader, or `reader-<id>`.
    pub reader_label: String,
    /// The last epoch the reader reported.
    pub observed_epoch: u64,
    /// The epoch the waiting grace period needs.
    pub needed_epoch: u64,
    /// How long the writer has seen the reader stuck on `observed_epoch`.
    pub stalled_for: Duration,
    /// Retired versions, over the whole domain, that cannot be freed yet.
    pub pinned_versions: usize,
    /// Bytes those versions hold (as the cells account them).
    pub pinned_bytes: usize,
}

/// A function called (on the writer's thread, with no lock held) for each
/// stall report.
pub type StallCallback = StdArc<dyn Fn(&StallReport) + Send + Sync>;

/// The writer's memory of one lagging reader.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lag {
    /// The slot value the writer saw.
    observed: u64,
    /// When the writer first saw the slot at `observed` while it was behind.
    since: Instant,
    /// Whether this episode has already been reported.
    reported: bool,
}

/// The outcome of checking one lagging reader.
pub(crate) enum LagCheck {
    /// Still within the threshold, or already reported.
    Waiting,
    /// Newly over the threshold: report it.
    Stalled { stalled_for: Duration },
}

impl Lag {
    /// Updates the memory with the slot value seen now and says whether the
    /// reader has just crossed the stall threshold.
    pub(crate) fn observe(
        lag: &mut Option<Lag>,
        observed: u64,
        now: Instant,
        stall_after: Duration,
    ) -> LagCheck {
        match lag {
            Some(known) if known.observed == observed => {
                let stalled_for = now.saturating_duration_since(known.since);
                if !known.reported && stalled_for >= stall_after {
                    known.reported = true;
                    LagCheck::Stalled { stalled_for }
                } else {
                    LagCheck::Waiting
                }
            }
            _ => {
                *lag = Some(Lag {
                    observed,
                    since: now,
                    reported: false,
                });
                LagCheck::Waiting
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_is_reported_once_per_episode_after_the_threshold() {
        let t0 = Instant::now();
        let after = Duration::from_millis(10);
        let mut lag = None;
        assert!(matches!(
            Lag::observe(&mut lag, 5, t0, after),
            LagCheck::Waiting
        ));
        assert!(matches!(
            Lag::observe(&mut lag, 5, t0 + Duration::from_millis(9), after),
            LagCheck::Waiting
        ));
        match Lag::observe(&mut lag, 5, t0 + Duration::from_millis(11), after) {
            LagCheck::Stalled { stalled_for } => assert_eq!(stalled_for, Duration::from_millis(11)),
            LagCheck::Waiting => panic!("not reported after the threshold"),
        }
        assert!(matches!(
            Lag::observe(&mut lag, 5, t0 + Duration::from_millis(50), after),
            LagCheck::Waiting
        ));
        // The reader moved on, then stuck again: a new episode.
        let t1 = t0 + Duration::from_millis(60);
        assert!(matches!(
            Lag::observe(&mut lag, 6, t1, after),
            LagCheck::Waiting
        ));
        assert!(matches!(
            Lag::observe(&mut lag, 6, t1 + after, after),
            LagCheck::Stalled { .. }
        ));
    }
}
