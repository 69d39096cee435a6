//! Loom models of the publish / quiescent-state / reclaim protocol, and of
//! one array published at chunk granularity through it (`CowChunks`).
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p fibre-rcu --release --test loom
//! ```
//!
//! (Add `CARGO_TARGET_DIR=target/loom` to keep the normal build's artifacts.)
//!
//! Each version is a `Probe` holding a loom `UnsafeCell`: readers read it,
//! and its `Drop` writes it. Loom explores the interleavings (and the
//! weak-memory outcomes of the atomics) of a writer and a reader and fails
//! if any read is not ordered before the drop of the version it reads, i.e.
//! if a version could be freed while a reader still uses it.

#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;

use fibre_rcu::{CowChunks, Domain, RcuCell};

struct Probe {
    value: UnsafeCell<u64>,
}

impl Probe {
    fn new(value: u64) -> Self {
        Probe {
            value: UnsafeCell::new(value),
        }
    }

    fn get(&self) -> u64 {
        // SAFETY: loom checks that this read does not race with the write in
        // `drop`; that check is the point of the model.
        self.value.with(|v| unsafe { *v })
    }
}

impl Clone for Probe {
    fn clone(&self) -> Self {
        Probe::new(self.get())
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        // A write access, so loom flags any read not ordered before it.
        self.value.with_mut(|v| unsafe { *v = u64::MAX });
    }
}

/// Runs `f` under loom with at most `preemptions` forced context switches
/// per execution: bounded so the models finish in seconds. The protocol's
/// known failure modes (a missing fence at coming online or after the epoch
/// advance, a relaxed quiescent report, freeing before the grace period)
/// each show up within two preemptions; the bounds below leave margin.
fn model(preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(preemptions);
    builder.check(f);
}

/// A reader reads, reports, reads again; the writer publishes and waits
/// for a grace period, which frees the first version.
#[test]
fn synchronize_frees_a_version_only_after_the_reader_reports() {
    model(4, || {
        let domain = Domain::new();
        let cell = Arc::new(RcuCell::new(&domain, Probe::new(1)));
        let mut reader = domain.register();
        let reader_cell = Arc::clone(&cell);
        let reading = thread::spawn(move || {
            for _ in 0..2 {
                {
                    let guard = reader.read();
                    let seen = reader_cell.read(&guard).get();
                    assert!(seen == 1 || seen == 2, "read a freed version: {seen}");
                }
                reader.quiescent();
            }
        });
        cell.publish(Probe::new(2));
        cell.synchronize();
        assert_eq!(cell.pending().versions, 0);
        reading.join().unwrap();
    });
}

/// A reader parks and comes back online while the writer publishes and
/// reclaims without waiting: the version the reader reads after coming
/// online must not be freed under it (the fence pair in `come_online` /
/// `advance`).
#[test]
fn a_reader_coming_online_is_never_missed_by_reclaim() {
    model(4, || {
        let domain = Domain::new();
        let cell = Arc::new(RcuCell::new(&domain, Probe::new(1)));
        let mut reader = domain.register();
        let reader_cell = Arc::clone(&cell);
        let reading = thread::spawn(move || {
            drop(reader.offline());
            let guard = reader.read();
            let seen = reader_cell.read(&guard).get();
            assert!(seen == 1 || seen == 2, "read a freed version: {seen}");
        });
        cell.publish(Probe::new(2));
        cell.reclaim();
        reading.join().unwrap();
    });
}

/// Like the model above, but the reader leaks its `Offline` guard and
/// reports a quiescent state before reading: the read section must still
/// bring it online with the fence.
#[test]
fn a_reader_that_leaked_its_offline_guard_is_never_missed() {
    model(4, || {
        let domain = Domain::new();
        let cell = Arc::new(RcuCell::new(&domain, Probe::new(1)));
        let mut reader = domain.register();
        let reader_cell = Arc::clone(&cell);
        let reading = thread::spawn(move || {
            std::mem::forget(reader.offline());
            reader.quiescent();
            let guard = reader.read();
            let seen = reader_cell.read(&guard).get();
            assert!(seen == 1 || seen == 2, "read a freed version: {seen}");
        });
        cell.publish(Probe::new(2));
        cell.reclaim();
        reading.join().unwrap();
    });
}

/// Two publications with deferred (polled) reclamation while the reader
/// reports between reads.
#[test]
fn deferred_reclaim_respects_quiescent_reports() {
    model(4, || {
        let domain = Domain::new();
        let cell = Arc::new(RcuCell::new(&domain, Probe::new(1)));
        let mut reader = domain.register();
        let reader_cell = Arc::clone(&cell);
        let reading = thread::spawn(move || {
            let mut last = 0;
            for _ in 0..2 {
                {
                    let guard = reader.read();
                    let seen = reader_cell.read(&guard).get();
                    assert!((1..=3).contains(&seen), "read a freed version: {seen}");
                    assert!(seen >= last);
                    last = seen;
                }
                reader.quiescent();
            }
        });
        cell.publish(Probe::new(2));
        cell.publish(Probe::new(3));
        cell.reclaim();
        reading.join().unwrap();
    });
}

/// Two readers, one of which parks and resumes, against a writer that
/// publishes twice and waits for a grace period.
#[test]
fn two_readers_one_parking_against_synchronize() {
    model(2, || {
        let domain = Domain::new();
        let cell = Arc::new(RcuCell::new(&domain, Probe::new(1)));
        let mut steady = domain.register();
        let mut parking = domain.register();
        let steady_cell = Arc::clone(&cell);
        let parking_cell = Arc::clone(&cell);
        let steady_thread = thread::spawn(move || {
            let seen = steady_cell.read(&steady.read()).get();
            assert!((1..=3).contains(&seen), "read a freed version: {seen}");
            steady.quiescent();
        });
        let parking_thread = thread::spawn(move || {
            drop(parking.offline());
            let seen = parking_cell.read(&parking.read()).get();
            assert!((1..=3).contains(&seen), "read a freed version: {seen}");
        });
        cell.publish(Probe::new(2));
        cell.reclaim();
        cell.publish(Probe::new(3));
        cell.synchronize();
        steady_thread.join().unwrap();
        parking_thread.join().unwrap();
    });
}

/// One copy published at chunk granularity (`CowChunks`): the writer
/// changes one element in each of two chunks (each copied, since the
/// published version holds it), publishes, reclaims without waiting, then
/// changes the first chunk again and publishes and waits. A reader reading
/// one element of each chunk per section must see both from one version
/// (never half a batch) and never a chunk freed, or written in place, under
/// it: loom flags a `Probe` read not ordered before the drop that replaced
/// or freed it.
#[test]
fn chunks_replaced_by_a_batch_are_freed_only_after_the_grace_period() {
    model(3, || {
        let domain = Domain::new();
        let mut work: CowChunks<Probe, 2> = CowChunks::new(Probe::new(0));
        for _ in 0..4 {
            work.push(Probe::new(1));
        }
        let cell = Arc::new(RcuCell::new(&domain, work.clone()));
        let mut reader = domain.register();
        let reader_cell = Arc::clone(&cell);
        let reading = thread::spawn(move || {
            for _ in 0..2 {
                {
                    let guard = reader.read();
                    let version = reader_cell.read(&guard);
                    let (first, last) = (version[0].get(), version[3].get());
                    assert!(
                        first == last || (first, last) == (3, 2),
                        "half a batch: {first}, {last}"
                    );
                    assert!((1..=3).contains(&first), "read a freed element: {first}");
                }
                reader.quiescent();
            }
        });
        work.set(0, Probe::new(2)).unwrap();
        work.set(3, Probe::new(2)).unwrap();
        cell.publish(work.clone());
        cell.reclaim();
        work.set(0, Probe::new(3)).unwrap();
        cell.publish(work.clone());
        cell.synchronize();
        assert_eq!(cell.pending().versions, 0);
        reading.join().unwrap();
    });
}
