//! Reader threads look up while a writer publishes: every answer a reader
//! gets must equal the answer of one published version, whole (no batch
//! half applied), a route being replaced never answers "no route", and at
//! most one old version waits for its grace period at any time.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use super::fixtures::*;
use crate::shared::{BatchMode, FibWriter};
use crate::*;

const READERS: usize = 3;
const BATCHES: u16 = 200;

/// Probes: destinations inside `dst(0)` and `dst(1)` (only ever replaced,
/// together), and `dst(2)` (added and deleted in turn).
fn probes() -> [FlowKeyV6; 3] {
    [0, 1, 2].map(|n| FlowKeyV6 {
        dst: inside(n),
        ..Default::default()
    })
}

type Answers = [Result<Forward6, Errno>; 3];

fn answers(fib: &Fib) -> Answers {
    let mut out = [Err(Errno::Inval); 3];
    fib.lookup_output_batch_v6(&probes(), &mut out);
    out
}

/// The writer's batch number `k`: both replaced routes move to one gateway
/// (a reader seeing them differ saw half a batch); `dst(2)` comes and goes;
/// every fifth batch is an all-or-nothing batch with a refused duplicate,
/// which must never become visible.
fn batch(k: u16) -> (Vec<Command>, BatchMode) {
    let gateway = 2 + k % 6;
    let mut commands = vec![
        route_via(RouteOp::Replace, dst(0), gateway),
        route_via(RouteOp::Replace, dst(1), gateway),
    ];
    if k & 1 == 0 {
        commands.push(route_via(RouteOp::Add, dst(2), gateway));
    } else {
        commands.push(route_del(dst(2)));
    }
    if k % 5 == 4 {
        commands.push(route_via(RouteOp::Add, dst(0), 9));
        (commands, BatchMode::AllOrNothing)
    } else {
        (commands, BatchMode::BestEffort)
    }
}

#[test]
fn every_answer_is_one_published_versions_answer() {
    let mut fib = router();
    fib.apply(&route_via(RouteOp::Add, dst(0), 2)).unwrap();
    fib.apply(&route_via(RouteOp::Add, dst(1), 2)).unwrap();
    let mut writer = FibWriter::new(fib);
    let shared = writer.shared();
    // Answers of each published version, indexed by version.
    let published = Mutex::new(vec![answers(writer.fib())]);
    let done = AtomicBool::new(false);
    let started = AtomicUsize::new(0);

    let observations: Vec<Vec<(u64, Answers)>> = std::thread::scope(|s| {
        let readers: Vec<_> = (0..READERS)
            .map(|_| {
                let mut reader = shared.reader();
                let (done, started) = (&done, &started);
                s.spawn(move || {
                    let mut seen = Vec::new();
                    let mut last = u64::MAX;
                    let mut batches = 0u64;
                    let keys = probes();
                    loop {
                        let finished = done.load(Ordering::Acquire);
                        let (version, got) = reader.batch(|snap| {
                            let mut out = [Err(Errno::Inval); 3];
                            snap.fib().lookup_output_batch_v6(&keys, &mut out);
                            (snap.version(), out)
                        });
                        if batches == 0 {
                            started.fetch_add(1, Ordering::Release);
                        }
                        batches += 1;
                        if version != last || batches & 7 == 0 {
                            seen.push((version, got));
                            last = version;
                        }
                        if finished {
                            return seen;
                        }
                    }
                })
            })
            .collect();
        while started.load(Ordering::Acquire) < READERS {
            std::thread::yield_now();
        }
        for k in 0..BATCHES {
            let (commands, mode) = batch(k);
            let report = writer.apply_batch(&commands, mode).unwrap();
            // Deferred frees stay bounded beside a writer at full speed:
            // at most the writer's bound of old versions wait for a grace period.
            let pending = shared.stats().pending_versions;
            let bound = crate::shared::DEFAULT_MAX_PENDING.get();
            assert!(
                pending <= bound,
                "{pending} versions pending after batch {k}"
            );
            if let Some(version) = report.published {
                let mut published = published.lock().unwrap();
                assert_eq!(version as usize, published.len());
                published.push(answers(writer.fib()));
            }
        }
        done.store(true, Ordering::Release);
        readers.into_iter().map(|r| r.join().unwrap()).collect()
    });

    let published = published.into_inner().unwrap();
    assert_eq!(published.len(), 1 + usize::from(BATCHES) * 4 / 5);
    let last_version = (published.len() - 1) as u64;
    for seen in &observations {
        assert!(!seen.is_empty());
        let mut previous = 0;
        for (version, got) in seen {
            assert!(*version >= previous, "versions go backwards");
            previous = *version;
            let want = &published[*version as usize];
            assert_eq!(got, want, "version {version}");
            let (a, b) = (got[0].unwrap(), got[1].unwrap());
            assert_eq!(a.gateway, b.gateway, "half a batch seen");
        }
        // A batch begun after the writer finished sees its last version.
        assert_eq!(previous, last_version);
    }
}
