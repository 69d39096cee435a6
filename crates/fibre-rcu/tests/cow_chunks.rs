//! `CowChunks` against a model: every published version keeps the contents
//! it had when published whatever the writer does afterwards, a batch copies
//! exactly the chunks it touches, readers beside a full-speed writer see each
//! batch entirely or not at all, and the memory held by versions waiting for
//! their grace period stays within its stated bound, with a writer at full
//! speed and with a stalled reader.

use std::cell::Cell;
use std::collections::BTreeSet;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use fibre_rcu::{CowChunks, Domain, RcuCell};
use proptest::prelude::*;

const N: usize = 8;

#[derive(Debug, Clone)]
enum Op {
    Set(usize, u32),
    Push(u32),
    Pop,
    Publish,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..200usize, any::<u32>()).prop_map(|(i, v)| Op::Set(i, v)),
        3 => any::<u32>().prop_map(Op::Push),
        1 => Just(Op::Pop),
        1 => Just(Op::Publish),
    ]
}

proptest! {
    /// The working copy and every version cloned from it ("published")
    /// equal their plain-`Vec` models at the end, and after each batch the
    /// working copy shares with the last version exactly the chunks the
    /// batch did not touch.
    #[test]
    fn versions_are_persistent_and_copies_are_per_chunk(ops in prop::collection::vec(op(), 0..300)) {
        let mut work: CowChunks<u32, N> = CowChunks::new(u32::MAX);
        let mut model: Vec<u32> = Vec::new();
        let mut versions: Vec<(CowChunks<u32, N>, Vec<u32>)> = Vec::new();
        // Chunks written since the last version was taken.
        let mut touched = BTreeSet::new();
        for op in ops {
            match op {
                Op::Set(i, v) => {
                    let result = work.set(i, v);
                    if i < model.len() {
                        prop_assert_eq!(result, Ok(std::mem::replace(&mut model[i], v)));
                        touched.insert(i / N);
                    } else {
                        prop_assert!(result.is_err());
                    }
                }
                Op::Push(v) => {
                    touched.insert(model.len() / N);
                    work.push(v);
                    model.push(v);
                }
                Op::Pop => {
                    if let Some(&last) = model.last() {
                        touched.insert((model.len() - 1) / N);
                        prop_assert_eq!(work.pop(), Some(last));
                        model.pop();
                    } else {
                        prop_assert_eq!(work.pop(), None);
                    }
                }
                Op::Publish => {
                    if let Some((last, _)) = versions.last() {
                        let both = work.chunk_count().min(last.chunk_count());
                        let untouched = (0..both).filter(|c| !touched.contains(c)).count();
                        prop_assert_eq!(work.chunks_shared_with(last), untouched);
                    }
                    versions.push((work.clone(), model.clone()));
                    touched.clear();
                }
            }
            prop_assert_eq!(work.len(), model.len());
        }
        prop_assert_eq!(work.iter().copied().collect::<Vec<_>>(), model);
        for (version, model) in &versions {
            prop_assert_eq!(version.iter().copied().collect::<Vec<_>>(), model.clone());
            for (i, value) in model.iter().enumerate() {
                prop_assert_eq!(version[i], *value);
            }
            prop_assert_eq!(version.get(model.len()), None);
        }
    }
}

thread_local! {
    /// `Counted` elements alive on this thread: the writer's thread makes and
    /// frees every element (readers only read), so this counts chunks' worth
    /// of memory exactly.
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

/// An element that counts its live copies.
#[derive(Debug)]
struct Counted(u64);

impl Counted {
    fn new(value: u64) -> Self {
        LIVE.with(|live| live.set(live.get() + 1));
        Counted(value)
    }
}

impl Clone for Counted {
    fn clone(&self) -> Self {
        LIVE.with(|live| live.set(live.get() + 1));
        Counted(self.0)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        LIVE.with(|live| live.set(live.get() - 1));
    }
}

fn live_elements() -> usize {
    LIVE.with(|live| usize::try_from(live.get()).expect("more drops than copies"))
}

const ELEMENTS: usize = 4096;
const CHUNK: usize = 64;
const CHUNKS: usize = ELEMENTS / CHUNK;
const TOTAL: u64 = 1_000 * ELEMENTS as u64;
/// Versions allowed to wait for their grace period.
const MAX_PENDING: usize = 4;
/// Chunks one batch touches at most: a transfer between two elements.
const CHUNKS_PER_BATCH: usize = 2;

/// Elements alive at most: one copy, plus per pending version the chunks
/// the batch after it replaced, plus the working copy's chunks of a batch
/// not yet published, plus one `fill` per copy (pending ones, the
/// published one, the working copy and a refused version in hand).
const LIVE_BOUND: usize = ELEMENTS + (MAX_PENDING + 1) * CHUNKS_PER_BATCH * CHUNK + MAX_PENDING + 3;

type Array = CowChunks<Counted, CHUNK>;

fn start() -> Array {
    let mut work = CowChunks::new(Counted::new(0));
    for _ in 0..ELEMENTS {
        work.push(Counted::new(1_000));
    }
    work
}

/// One batch: moves `amount` from one element to another (two chunks
/// apart), so a version's sum is `TOTAL` unless a reader sees half a batch.
fn transfer(work: &mut Array, round: usize) {
    let from = (round * 7919) % ELEMENTS;
    let to = (from + ELEMENTS / 2 + round % CHUNK) % ELEMENTS;
    let moved = ((round % 5) as u64).min(work[from].0);
    work.get_mut(from).unwrap().0 -= moved;
    work.get_mut(to).unwrap().0 += moved;
}

fn exclusive_bytes(version: &Array) -> usize {
    version.exclusive_bytes()
}

/// The writer's working copy, the cell publishing it with at most
/// `MAX_PENDING` versions waiting (each counted by what it alone holds),
/// and the bytes of one directory.
fn publish_start(domain: &Domain) -> (Array, RcuCell<Array>, usize) {
    let work = start();
    let directory_bytes = work.total_bytes() - CHUNKS * Array::chunk_bytes();
    let cell = RcuCell::builder(domain)
        .max_pending(NonZeroUsize::new(MAX_PENDING).unwrap())
        .heap_bytes(exclusive_bytes)
        .build(work.clone());
    (work, cell, directory_bytes)
}

/// The bound the module docs state: beyond one copy, at most
/// `MAX_PENDING * (CHUNKS_PER_BATCH * chunk_bytes + directory_bytes)`.
fn pending_bound(directory_bytes: usize) -> usize {
    MAX_PENDING * (CHUNKS_PER_BATCH * Array::chunk_bytes() + directory_bytes)
}

#[test]
fn memory_stays_bounded_beside_full_speed_writer_and_readers_see_whole_batches() {
    let domain = Domain::new();
    let (mut work, cell, directory_bytes) = publish_start(&domain);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..2 {
            let mut reader = domain.register();
            let (cell, stop) = (&cell, &stop);
            s.spawn(move || {
                let mut sections = 0u64;
                while !stop.load(Relaxed) || sections < 100 {
                    let sum: u64 = {
                        let guard = reader.read();
                        cell.read(&guard).iter().map(|c| c.0).sum()
                    };
                    assert_eq!(sum, TOTAL, "a reader saw half a batch");
                    reader.quiescent();
                    sections += 1;
                }
            });
        }
        let mut worst_pending = 0;
        let mut worst_live = 0;
        for round in 0..3_000 {
            transfer(&mut work, round);
            cell.publish(work.clone());
            let pending = cell.pending();
            assert!(pending.versions <= MAX_PENDING);
            worst_pending = worst_pending.max(pending.bytes);
            worst_live = worst_live.max(live_elements());
        }
        stop.store(true, Relaxed);
        assert!(
            worst_live <= LIVE_BOUND,
            "live elements {worst_live} past the bound {LIVE_BOUND} (one copy: {ELEMENTS})"
        );
        assert!(
            worst_pending
                <= pending_bound(directory_bytes) + MAX_PENDING * std::mem::size_of::<Array>(),
            "pending bytes {worst_pending} past the bound {}",
            pending_bound(directory_bytes)
        );
        eprintln!(
            "full-speed writer: at most {worst_pending} bytes pending (bound {}), \
             {worst_live} elements live (one copy: {ELEMENTS})",
            pending_bound(directory_bytes)
        );
    });
    cell.synchronize();
    assert_eq!(cell.pending().versions, 0);
    // Published and working copies share every chunk: one copy is left.
    assert_eq!(live_elements(), ELEMENTS + 1 + 1);
}

#[test]
fn a_stalled_reader_makes_the_writer_refuse_rather_than_hold_more_memory() {
    let domain = Domain::new();
    let (mut work, cell, directory_bytes) = publish_start(&domain);
    let mut stalled = domain.register();
    let guard_sum: u64 = {
        let guard = stalled.read();
        cell.read(&guard).iter().map(|c| c.0).sum()
    };
    assert_eq!(guard_sum, TOTAL);
    // The reader never reports from here on: every version stays pinned.
    let mut refused = 0;
    let mut published = 0;
    let mut candidate = None;
    for round in 0..1_000 {
        let version = match candidate.take() {
            Some(waiting) => waiting,
            None => {
                transfer(&mut work, round);
                work.clone()
            }
        };
        match cell.try_publish(version) {
            Ok(()) => published += 1,
            Err(backpressure) => {
                refused += 1;
                candidate = Some(backpressure.value);
            }
        }
        let pending = cell.pending();
        assert!(pending.versions <= MAX_PENDING);
        assert!(
            pending.bytes
                <= pending_bound(directory_bytes) + MAX_PENDING * std::mem::size_of::<Array>()
        );
        let live = live_elements();
        assert!(
            live <= LIVE_BOUND,
            "round {round}: {live} elements live, bound {LIVE_BOUND}"
        );
    }
    assert_eq!(published, MAX_PENDING);
    assert_eq!(refused, 1_000 - MAX_PENDING);
    eprintln!(
        "stalled reader: {} versions, {} bytes pinned (bound {}); {refused} publications refused",
        cell.pending().versions,
        cell.pending().bytes,
        pending_bound(directory_bytes)
    );
    stalled.quiescent();
    assert_eq!(cell.reclaim(), MAX_PENDING);
    // The refused version goes out now, and once the reader reports again
    // only one copy is left.
    cell.try_publish(candidate.expect("the last attempt was refused"))
        .unwrap();
    stalled.quiescent();
    assert_eq!(cell.reclaim(), 1);
    assert_eq!(live_elements(), ELEMENTS + 1 + 1);
}

proptest! {
    /// `resize` (whole chunks at a time) and the read paths the LPM uses
    /// (`at`, `run`, `chunk`, `slot_ptr`) agree with a plain `Vec` whose
    /// slots past the length hold the fill value, with a clone taken before
    /// each resize left untouched.
    #[test]
    fn resize_and_reads_agree_with_a_vec(sizes in prop::collection::vec((0..100usize, any::<u8>()), 1..20)) {
        const FILL: u8 = 0xee;
        let mut a: CowChunks<u8, N> = CowChunks::new(FILL);
        let mut model: Vec<u8> = Vec::new();
        for (len, value) in sizes {
            let before = a.clone();
            let before_model = model.clone();
            a.resize(len, value);
            model.resize(len, value);
            prop_assert_eq!(a.len(), len);
            prop_assert_eq!(a.chunk_count(), len.div_ceil(N));
            prop_assert!(a.iter().eq(model.iter()));
            let padded = a.chunk_count() * N;
            for index in 0..padded {
                let expected = model.get(index).copied().unwrap_or(FILL);
                prop_assert_eq!(*a.at(index), expected, "slot {}", index);
                prop_assert_eq!(a.chunk(index / N)[index % N], expected);
                prop_assert_eq!(a.slot_ptr(index), a.at(index) as *const u8);
            }
            prop_assert!(a.slot_ptr(padded).is_null());
            prop_assert_eq!(*a.at(padded), FILL);
            if padded > 0 {
                prop_assert_eq!(a.run(padded - N, N), a.chunk(a.chunk_count() - 1).as_slice());
            }
            prop_assert!(before.iter().eq(before_model.iter()));
            prop_assert_eq!(
                a.shared_bytes_with(&before),
                a.chunks_shared_with(&before) * CowChunks::<u8, N>::chunk_bytes()
            );
        }
    }
}

#[test]
fn run_mut_copies_a_shared_chunk_once() {
    let mut a: CowChunks<u32, N> = CowChunks::new(0);
    a.resize(3 * N, 1);
    let published = a.clone();
    a.run_mut(N + 2, 4).fill(5);
    assert_eq!(a.chunks_shared_with(&published), 2);
    assert_eq!(a.run(N, N), [1, 1, 5, 5, 5, 5, 1, 1]);
    assert_eq!(published.run(N, N), [1; N]);
}

#[test]
#[should_panic]
fn a_run_across_a_chunk_boundary_panics() {
    let mut a: CowChunks<u32, N> = CowChunks::new(0);
    a.resize(2 * N, 1);
    let _ = a.run(N - 1, 2);
}
