//! A reader that stops reporting while grace periods wait is detected and
//! reported with the memory it pins; a cell can bound what it pins.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use fibre_rcu::{Domain, RcuCell, StallReport};

/// Polls `condition` for up to ten seconds (generous: the machine is shared).
fn eventually(mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if condition() {
            return true;
        }
        thread::sleep(Duration::from_millis(1));
    }
    false
}

#[test]
fn a_stalled_reader_is_reported_with_the_versions_it_pins() {
    let reports: Arc<Mutex<Vec<StallReport>>> = Arc::default();
    let sink = Arc::clone(&reports);
    let domain = Domain::builder()
        .stall_after(Duration::from_millis(20))
        .on_stall(move |report| sink.lock().unwrap().push(report.clone()))
        .build();
    let cell = RcuCell::builder(&domain)
        .heap_bytes(|v: &Vec<u8>| v.capacity())
        .build(vec![0u8; 4096]);

    let (release, released) = mpsc::channel::<()>();
    let (registered, ready) = mpsc::channel::<u64>();
    let stuck = {
        let domain = domain.clone();
        thread::Builder::new()
            .name("stuck-reader".into())
            .spawn(move || {
                let mut reader = domain.register();
                registered.send(reader.id()).unwrap();
                // Online, and not reporting, until told to.
                released.recv().unwrap();
                reader.quiescent();
            })
            .unwrap()
    };
    let stuck_id = ready.recv().unwrap();

    for fill in 1..=3u8 {
        cell.publish(vec![fill; 4096]);
    }
    assert!(
        eventually(|| {
            cell.reclaim();
            domain.stats().stalls_detected >= 1
        }),
        "the stalled reader was never reported"
    );
    let expected_bytes = 3 * (std::mem::size_of::<Vec<u8>>() + 4096);
    assert_eq!(cell.pending().versions, 3);
    assert_eq!(cell.pending().bytes, expected_bytes);
    assert_eq!(domain.stats().pending_versions, 3);
    assert_eq!(domain.stats().pending_bytes, expected_bytes);
    {
        let reports = reports.lock().unwrap();
        assert_eq!(
            reports.len(),
            1,
            "one report per stall episode: {reports:?}"
        );
        let report = &reports[0];
        assert_eq!(report.reader_id, stuck_id);
        assert_eq!(report.reader_label, "stuck-reader");
        assert!(report.stalled_for >= Duration::from_millis(20));
        assert!(report.observed_epoch < report.needed_epoch);
        assert_eq!(report.pinned_versions, 3);
        assert_eq!(report.pinned_bytes, expected_bytes);
    }
    // Still stuck: polling again does not report the same episode twice.
    thread::sleep(Duration::from_millis(30));
    cell.reclaim();
    assert_eq!(domain.stats().stalls_detected, 1);

    release.send(()).unwrap();
    stuck.join().unwrap();
    cell.synchronize();
    assert_eq!(cell.pending().versions, 0);
    assert_eq!(domain.stats().pending_bytes, 0);
}

#[test]
fn synchronize_timeout_names_the_blocking_reader_and_reports_the_stall() {
    let domain = Domain::builder()
        .stall_after(Duration::from_millis(5))
        .build();
    let mut reader = domain.register();
    assert!(
        eventually(|| {
            let err = domain
                .synchronize_timeout(Duration::from_millis(20))
                .unwrap_err();
            assert_eq!(err.blocking_readers, 1);
            assert!(err.waited >= Duration::from_millis(20));
            domain.stats().stalls_detected >= 1
        }),
        "a reader stuck for longer than the threshold was not reported"
    );
    assert_eq!(domain.stats().stalls_detected, 1, "one report per episode");
    reader.quiescent();
    domain
        .synchronize_timeout(Duration::from_millis(1))
        .unwrap_err();
    // Reporting after the call began is what ends a grace period.
    let done = AtomicBool::new(false);
    thread::scope(|s| {
        s.spawn(|| {
            domain.synchronize();
            done.store(true, Ordering::Release);
        });
        while !done.load(Ordering::Acquire) {
            reader.quiescent();
            thread::yield_now();
        }
    });
}

#[test]
fn a_reader_that_keeps_reporting_is_never_reported() {
    // Generous: only a reader descheduled for this long would be reported.
    let domain = Domain::builder()
        .stall_after(Duration::from_secs(2))
        .build();
    let cell = RcuCell::new(&domain, 0u64);
    let done = AtomicBool::new(false);
    thread::scope(|s| {
        let mut reader = domain.register();
        let (cell, done) = (&cell, &done);
        s.spawn(move || {
            while !done.load(Ordering::Acquire) {
                std::hint::black_box(cell.read(&reader.read()));
                reader.quiescent();
            }
        });
        for value in 1..=50 {
            cell.publish(value);
            cell.synchronize();
        }
        done.store(true, Ordering::Release);
    });
    assert_eq!(domain.stats().stalls_detected, 0);
}

#[test]
fn a_bounded_cell_blocks_publication_until_a_grace_period_frees_room() {
    let domain = Domain::new();
    let cell = RcuCell::builder(&domain)
        .max_pending(NonZeroUsize::new(2).unwrap())
        .build(0u32);
    let mut reader = domain.register();
    cell.publish(1);
    cell.publish(2);
    assert_eq!(cell.pending().versions, 2);
    let refused = cell.try_publish(3).unwrap_err();
    assert_eq!((refused.value, refused.pending, refused.limit), (3, 2, 2));

    let published = AtomicBool::new(false);
    thread::scope(|s| {
        s.spawn(|| {
            cell.publish(3); // blocks: two versions pending, bound two
            published.store(true, Ordering::Release);
        });
        thread::sleep(Duration::from_millis(50));
        assert!(
            !published.load(Ordering::Acquire),
            "publish ignored the bound"
        );
        reader.quiescent();
        assert!(eventually(|| published.load(Ordering::Acquire)));
    });
    assert_eq!(cell.read(&reader.read()), &3);
    assert!(cell.pending().versions <= 2);
}

/// Collects the level and message of every event.
#[derive(Default)]
struct EventLog {
    events: Mutex<Vec<(tracing::Level, String)>>,
}

struct MessageOf<'a>(&'a mut String);

impl tracing::field::Visit for MessageOf<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        use std::fmt::Write;
        let _ = write!(self.0, "{}={:?} ", field.name(), value);
    }
}

impl tracing::Subscriber for EventLog {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut text = String::new();
        event.record(&mut MessageOf(&mut text));
        self.events
            .lock()
            .unwrap()
            .push((*event.metadata().level(), text));
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn a_stall_is_logged_as_a_tracing_warning() {
    let log = Arc::new(EventLog::default());
    let domain = Domain::builder()
        .stall_after(Duration::from_millis(5))
        .build();
    let reader = domain.register();
    tracing::subscriber::with_default(Arc::clone(&log), || {
        assert!(eventually(|| {
            let _ = domain.synchronize_timeout(Duration::from_millis(10));
            domain.stats().stalls_detected >= 1
        }));
    });
    let events = log.events.lock().unwrap();
    let warnings: Vec<_> = events
        .iter()
        .filter(|(level, _)| *level == tracing::Level::WARN)
        .collect();
    assert_eq!(warnings.len(), 1, "{events:?}");
    let text = &warnings[0].1;
    assert!(
        text.contains("has not reported a quiescent state"),
        "{text}"
    );
    assert!(
        text.contains(&format!("reader_id={}", reader.id())),
        "{text}"
    );
    assert!(text.contains("pinned_versions=0"), "{text}");
}
