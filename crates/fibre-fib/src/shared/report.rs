//! What a batch of writes did, and why a batch could not be applied.

use std::time::Duration;

use fibre_rcu::GracePeriodTimeout;

use crate::error::KernelError;

/// How a batch treats refused commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchMode {
    /// Apply every command that the kernel accepts; refuse the others one
    /// by one. The published state holds exactly the accepted ones.
    BestEffort,
    /// Publish the batch only if every command is accepted; otherwise
    /// publish nothing.
    AllOrNothing,
}

/// One refused command of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Its position in the batch (0-based).
    pub index: usize,
    /// The kernel's refusal (`to_string()` prints iproute2's line).
    pub error: KernelError,
}

/// What [`FibWriter::apply_batch`](super::FibWriter::apply_batch) did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchReport {
    /// The version readers see from now on, or `None` when nothing was
    /// published (an empty batch, or an all-or-nothing batch with a refusal).
    pub published: Option<u64>,
    /// Commands accepted (and published, unless `published` is `None`).
    pub applied: usize,
    /// Commands refused, in batch order, each with the kernel's message.
    pub refused: Vec<Refusal>,
    /// From the call until the new version was published (readers load it
    /// from their next batch on): the previous batch's grace period and
    /// replay, this batch, and the pointer swap.
    pub latency: Duration,
}

impl BatchReport {
    /// Whether every command was accepted.
    ///
    /// ```
    /// use fibre_fib::{shared::{BatchMode, FibWriter}, Command, Fib};
    /// let mut writer = FibWriter::new(Fib::new());
    /// let bad = Command::LinkDel { name: "eth9".into() };
    /// let report = writer.apply_batch(&[bad], BatchMode::AllOrNothing).unwrap();
    /// assert!(!report.all_applied());
    /// assert_eq!(report.published, None);
    /// assert_eq!(report.refused[0].error.to_string(), "Cannot find device \"eth9\"");
    /// ```
    pub fn all_applied(&self) -> bool {
        self.refused.is_empty()
    }
}

/// Why a batch was not applied at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// A reader did not report a quiescent state in time, so the previous
    /// version's copy could not be reused; nothing of the batch was applied.
    /// The domain has reported the reader as stalled; retry later.
    #[error("FIB batch not applied: {0}")]
    GracePeriodTimeout(#[from] GracePeriodTimeout),
}
