//! The three strategies keep a multi-field invariant under concurrent reads
//! and writes (no reader sees half a write).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;

use fibre_bench::protect::{PerCpuLock, Protected, Rcu, RwLockProtected};

/// Two fields the writer always changes together.
#[derive(Clone, Debug, Default)]
struct Pair {
    left: u64,
    right: Vec<u64>,
}

fn hammer<P: Protected<Pair>>(shared: &P) {
    const WRITES: u64 = 2000;
    let done = AtomicBool::new(false);
    let reads = AtomicU64::new(0);
    thread::scope(|s| {
        for _ in 0..3 {
            let (done, reads) = (&done, &reads);
            s.spawn(move || {
                let mut reader = shared.reader();
                let mut last = 0;
                while !done.load(Ordering::Acquire) {
                    for _ in 0..8 {
                        let (left, right) = shared.read(&mut reader, |p| (p.left, p.right.clone()));
                        assert_eq!(right, vec![left; 3], "{}: torn pair", shared.name());
                        assert!(left >= last, "{}: went back in time", shared.name());
                        last = left;
                    }
                    reads.fetch_add(8, Ordering::Relaxed);
                    shared.quiescent(&mut reader);
                }
            });
        }
        while reads.load(Ordering::Relaxed) < 100 {
            thread::yield_now();
        }
        for value in 1..=WRITES {
            shared.write(|p| {
                p.left = value;
                p.right.clear();
                p.right.extend([value; 3]);
            });
        }
        done.store(true, Ordering::Release);
    });
    let mut reader = shared.reader();
    assert_eq!(shared.read(&mut reader, |p| p.left), WRITES);
}

fn start() -> Pair {
    Pair {
        left: 0,
        right: vec![0; 3],
    }
}

#[test]
fn rwlock_keeps_pairs_whole() {
    hammer(&RwLockProtected::new(start()));
}

#[test]
fn per_cpu_lock_keeps_pairs_whole() {
    // More readers (3) than slots (2): two share a slot's lock.
    let shared = PerCpuLock::with_slots(start(), 2);
    assert_eq!(shared.slots(), 2);
    hammer(&shared);
}

#[test]
fn rcu_keeps_pairs_whole_and_frees_old_versions() {
    let shared = Rcu::new(start());
    hammer(&shared);
    shared.cell().synchronize();
    assert_eq!(shared.domain().stats().pending_versions, 0);
}

#[test]
fn strategies_are_named_for_reports() {
    assert_eq!(RwLockProtected::new(0u8).name(), "rwlock");
    assert_eq!(PerCpuLock::new(0u8).name(), "percpu");
    assert_eq!(Rcu::new(0u8).name(), "rcu");
}
