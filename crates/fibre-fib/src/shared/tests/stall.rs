//! A reader that stops reporting is detected and reported, the writer
//! gives up on it instead of waiting forever, and the memory it pins stays
//! within the writer's bound of pending versions.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::fixtures::*;
use crate::shared::{BatchMode, FibWriter, WriteError};
use crate::*;

#[test]
fn a_stalled_reader_is_reported_and_the_batch_refused_until_it_reports() {
    let reports = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&reports);
    let mut writer = FibWriter::builder()
        .stall_after(Duration::from_millis(1))
        .grace_timeout(Duration::from_millis(300))
        .max_pending(NonZeroUsize::MIN)
        .on_stall(move |_| {
            counted.fetch_add(1, Ordering::Relaxed);
        })
        .build(router());
    let shared = writer.shared();
    let mut stuck = shared.reader();
    let first = [route_via(RouteOp::Add, dst(1), 9)];
    assert_eq!(
        writer
            .apply_batch(&first, BatchMode::BestEffort)
            .unwrap()
            .published,
        Some(1)
    );
    // Version 0 stays pinned: the reader has not reported since.
    assert_eq!(shared.stats().pending_versions, 1);

    let second = [route_via(RouteOp::Replace, dst(1), 8)];
    let err = writer
        .apply_batch(&second, BatchMode::BestEffort)
        .unwrap_err();
    let WriteError::GracePeriodTimeout(timeout) = &err;
    assert_eq!(timeout.blocking_readers, 1);
    // The message says how long the batch waited, not the last scan.
    assert!(timeout.waited >= Duration::from_millis(300), "{err}");
    assert!(err
        .to_string()
        .starts_with("FIB batch not applied: grace period"));
    assert!(shared.stats().stalls_detected >= 1);
    assert!(reports.load(Ordering::Relaxed) >= 1);
    assert_eq!(writer.version(), 1, "nothing of the refused batch applied");
    // However long the reader stalls, what it pins stays the one old version:
    // every further batch is refused, none retires another version.
    for _ in 0..2 {
        assert!(writer.apply_batch(&second, BatchMode::BestEffort).is_err());
        assert_eq!(shared.stats().pending_versions, 1);
    }

    // Once it reports, the same batch goes through.
    assert_eq!(stuck.batch(|s| s.version()), 1);
    let report = writer.apply_batch(&second, BatchMode::BestEffort).unwrap();
    assert_eq!(report.published, Some(2));
    assert_eq!(stuck.batch(|s| s.version()), 2);
}

/// A writer publishing as fast as it can beside a reader that never
/// reports: at most `max_pending` old versions wait, each holding only what
/// its batch rewrote, then batches are refused until the reader reports.
#[test]
fn deferred_versions_stay_within_the_bound_under_a_full_speed_writer() {
    const BOUND: usize = 3;
    let mut start = router();
    for n in 0..2_000u32 {
        let line = format!(
            "route add 2001:db8:{:x}:{:x}::/64 via 2001:db8::2 dev d0",
            n >> 8,
            n & 0xff
        );
        start.apply(&command_line(&line).unwrap()).unwrap();
    }
    let whole = start.exclusive_bytes();
    let mut writer = FibWriter::builder()
        .grace_timeout(Duration::from_millis(20))
        .max_pending(NonZeroUsize::new(BOUND).unwrap())
        .build(start);
    let shared = writer.shared();
    let mut stuck = shared.reader();
    let mut published = 0;
    for k in 0..2 * BOUND as u16 {
        match writer.apply_batch(
            &[route_via(RouteOp::Replace, dst(1), 2 + k % 6)],
            BatchMode::BestEffort,
        ) {
            Ok(report) => {
                assert!(report.published.is_some());
                published += 1;
            }
            Err(WriteError::GracePeriodTimeout(timeout)) => assert_eq!(timeout.blocking_readers, 1),
        }
        let stats = shared.stats();
        assert!(stats.pending_versions <= BOUND, "{stats:?}");
    }
    assert_eq!(published, BOUND);
    let stats = shared.stats();
    assert_eq!(stats.pending_versions, BOUND);
    // What the versions pin: at most what each holds alone, counted when
    // it was retired, so at most the bound times one FIB.
    assert!(
        stats.pending_bytes <= BOUND * whole,
        "{} pinned, the FIB is {whole}",
        stats.pending_bytes
    );
    assert_eq!(stuck.batch(|s| s.version()), BOUND as u64);
    writer.sync().unwrap();
    assert_eq!(shared.stats().pending_versions, 0);
}
