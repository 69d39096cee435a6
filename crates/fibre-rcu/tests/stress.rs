//! Readers and a writer hammer one cell: every value a reader sees must be a
//! version that was published, whole (no torn or freed data), never older
//! than one it saw before; every version must be dropped exactly once.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use fibre_rcu::{Domain, RcuCell};

const VERSIONS: u64 = 20_000;
const READERS: usize = 3;
const WORDS: usize = 7;

/// Marks a dropped version so that a reader that (wrongly) still reads it is
/// likely to notice even before the allocator reuses the memory.
const POISON: u64 = 0xDEAD_DEAD_DEAD_DEAD;

fn word(version: u64, index: usize) -> u64 {
    version.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (index as u64) << 56
}

#[derive(Clone)]
struct Version {
    number: u64,
    words: [u64; WORDS],
    tail: Vec<u64>,
    drops: Arc<Vec<AtomicU32>>,
}

impl Version {
    fn new(number: u64, drops: &Arc<Vec<AtomicU32>>) -> Self {
        Version {
            number,
            words: std::array::from_fn(|i| word(number, i)),
            tail: vec![number; 8],
            drops: Arc::clone(drops),
        }
    }

    /// Renumbers a clone (for clone-on-write updates).
    fn renumber(&mut self, number: u64) {
        self.number = number;
        self.words = std::array::from_fn(|i| word(number, i));
        self.tail.iter_mut().for_each(|w| *w = number);
    }

    fn check(&self) -> Result<u64, String> {
        let n = self.number;
        if n == POISON || n > VERSIONS {
            return Err(format!("read a freed or foreign version: number {n:#x}"));
        }
        for (i, &w) in self.words.iter().enumerate() {
            if w != word(n, i) {
                return Err(format!("torn version {n}: word {i} is {w:#x}"));
            }
        }
        if self.tail.iter().any(|&w| w != n) {
            return Err(format!("torn version {n}: heap tail {:?}", self.tail));
        }
        Ok(n)
    }
}

impl Drop for Version {
    fn drop(&mut self) {
        if let Some(count) = self.drops.get(self.number as usize) {
            count.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: `self.number` is a plain field of a live `&mut self`; the
        // volatile write keeps the poisoning from being optimised away as a
        // dead store before deallocation.
        unsafe { std::ptr::write_volatile(&mut self.number, POISON) };
        self.tail.iter_mut().for_each(|w| *w = POISON);
    }
}

#[test]
fn readers_see_only_whole_published_versions_and_each_version_drops_once() {
    let drops: Arc<Vec<AtomicU32>> = Arc::new((0..=VERSIONS).map(|_| AtomicU32::new(0)).collect());
    let domain = Domain::new();
    let cell = RcuCell::builder(&domain)
        .heap_bytes(|v: &Version| v.tail.capacity() * 8)
        .build(Version::new(0, &drops));
    // The highest version number the writer has started publishing.
    let announced = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let reads = AtomicU64::new(0);

    thread::scope(|s| {
        for reader_index in 0..READERS {
            let mut reader = domain.register();
            let (cell, announced, done, reads) = (&cell, &announced, &done, &reads);
            s.spawn(move || {
                let mut last_seen = 0;
                let mut batches = 0u64;
                while !done.load(Ordering::Acquire) {
                    {
                        let guard = reader.read();
                        for _ in 0..16 {
                            let seen = cell.read(&guard).check().unwrap();
                            assert!(seen >= last_seen, "went back from {last_seen} to {seen}");
                            let ceiling = announced.load(Ordering::Acquire);
                            assert!(seen <= ceiling, "saw {seen} before {ceiling} was announced");
                            last_seen = seen;
                        }
                    }
                    reads.fetch_add(16, Ordering::Relaxed);
                    batches += 1;
                    reader.quiescent();
                    // Reader 0 parks now and then: offline/online under load.
                    if reader_index == 0 && batches.is_multiple_of(64) {
                        let _parked = reader.offline();
                        thread::sleep(Duration::from_micros(50));
                    }
                }
            });
        }

        // Let every reader get going, so the writes overlap the reads.
        while reads.load(Ordering::Relaxed) < 1000 * READERS as u64 {
            thread::yield_now();
        }
        let reads_before_writing = reads.load(Ordering::Relaxed);
        for number in 1..=VERSIONS {
            announced.store(number, Ordering::Release);
            match number % 4 {
                0 => cell.publish(Version::new(number, &drops)),
                1 => cell.update(|v| v.renumber(number)),
                2 => {
                    let mut batch = cell.write();
                    batch.renumber(number);
                    batch.tail.push(number);
                    batch.tail.pop();
                    batch.publish();
                }
                _ => {
                    cell.publish(Version::new(number, &drops));
                    if number % 256 == 3 {
                        cell.synchronize();
                        assert_eq!(cell.pending().versions, 0);
                    }
                }
            }
            if number % 8 == 0 {
                cell.reclaim();
            }
        }
        let reads_while_writing = reads.load(Ordering::Relaxed) - reads_before_writing;
        done.store(true, Ordering::Release);
        assert!(reads_while_writing > 0, "no read overlapped the writes");
    });

    // All readers are gone (their handles dropped with their threads).
    cell.synchronize();
    assert_eq!(cell.pending().versions, 0);
    assert_eq!(domain.stats().pending_versions, 0);
    assert_eq!(domain.stats().pending_bytes, 0);
    for number in 0..VERSIONS {
        assert_eq!(
            drops[number as usize].load(Ordering::Relaxed),
            1,
            "version {number} was dropped a wrong number of times"
        );
    }
    // The current version is the last one; it drops with the cell.
    assert_eq!(drops[VERSIONS as usize].load(Ordering::Relaxed), 0);
    drop(cell);
    assert_eq!(drops[VERSIONS as usize].load(Ordering::Relaxed), 1);
}

#[test]
fn a_cell_dropped_with_pending_versions_frees_them_all_once() {
    let drops: Arc<Vec<AtomicU32>> = Arc::new((0..=3).map(|_| AtomicU32::new(0)).collect());
    let domain = Domain::new();
    let reader = domain.register(); // never reports: everything stays pending
    let cell = RcuCell::new(&domain, Version::new(0, &drops));
    for number in 1..=3 {
        cell.publish(Version::new(number, &drops));
    }
    assert_eq!(cell.pending().versions, 3);
    assert_eq!(domain.stats().pending_versions, 3);
    drop(cell);
    assert!(drops.iter().all(|d| d.load(Ordering::Relaxed) == 1));
    assert_eq!(domain.stats().pending_versions, 0);
    drop(reader);
}

#[test]
fn concurrent_writers_are_serialized_and_lose_no_update() {
    const PER_WRITER: u64 = 500;
    let domain = Domain::new();
    let cell = RcuCell::new(&domain, 0u64);
    let writers_done = AtomicU32::new(0);
    thread::scope(|s| {
        for _ in 0..2 {
            let (cell, writers_done) = (&cell, &writers_done);
            s.spawn(move || {
                for i in 0..PER_WRITER {
                    if i % 2 == 0 {
                        cell.update(|v| *v += 1);
                    } else {
                        let mut batch = cell.write();
                        *batch += 1;
                        batch.publish();
                    }
                }
                writers_done.fetch_add(1, Ordering::Release);
            });
        }
        let mut reader = domain.register();
        let mut last = 0;
        while writers_done.load(Ordering::Acquire) < 2 {
            let seen = *cell.read(&reader.read());
            assert!(seen >= last, "went back from {last} to {seen}");
            last = seen;
            reader.quiescent();
        }
    });
    let reader = domain.register();
    assert_eq!(*cell.read(&reader.read()), 2 * PER_WRITER);
    drop(reader);
    cell.synchronize();
    assert_eq!(cell.pending().versions, 0);
}
