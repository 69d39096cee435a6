//! A pool of equally typed slots handed out in contiguous blocks of 1..=64,
//! addressed by `u32` index, whose freed blocks are coalesced and reused.
//! No block straddles a multiple of [`POOL_CHUNK`], so that the pool can be
//! stored in fixed chunks (never moving, or copied on write one chunk at a
//! time) and a node's children or leaves still read as one slice.

use fibre_rcu::CowChunks;
use imbl::{OrdMap, OrdSet};

/// Largest block a node asks for: one slot per child or leaf of a node.
pub(crate) const MAX_BLOCK: u32 = 64;

/// Slots per chunk a block never straddles: a multiple of [`MAX_BLOCK`]
/// (6 KiB of nodes, 1 KiB of `u32` leaves), large enough that the padding
/// a block skipped to the next chunk leaves behind (reused by smaller
/// blocks) stays a small share of the pool.
pub(crate) const POOL_CHUNK: u32 = 256;

const _: () = assert!(
    POOL_CHUNK.is_power_of_two() && POOL_CHUNK.is_multiple_of(MAX_BLOCK),
    "POOL_CHUNK must be a power of two and hold whole blocks of MAX_BLOCK; \
     if this fires, pick a multiple of 64"
);

/// Slots per copy-on-write chunk of the pools: a multiple of
/// [`POOL_CHUNK`], so that no block straddles one either and a node's
/// children or leaves stay one slice of one chunk.
pub(crate) const COW_CHUNK: usize = 1024;

const _: () = assert!(
    COW_CHUNK.is_power_of_two() && COW_CHUNK.is_multiple_of(POOL_CHUNK as usize),
    "COW_CHUNK must be a power of two and a multiple of POOL_CHUNK, so that no \
     block straddles a copy-on-write chunk; if this fires, pick a multiple of 256"
);

/// Where a block of `n` slots fits inside the free run `start..start + len`
/// without crossing a chunk boundary: the run's start, or the first chunk
/// boundary inside it.
fn aligned_fit(start: u32, len: u32, n: u32) -> Option<u32> {
    let chunk_end = (start / POOL_CHUNK + 1) * POOL_CHUNK;
    let at = if start + n <= chunk_end {
        start
    } else {
        chunk_end
    };
    (at + n <= start + len).then_some(at)
}

/// Contiguous blocks of `T` in copy-on-write chunks of [`POOL_CHUNK`]
/// slots ([`CowChunks`]), with a best-fit free list.
///
/// A clone shares every chunk and the free lists (persistent `imbl` maps,
/// shared until one side changes): it costs the chunk directory. A write
/// to a shared chunk copies that chunk once.
///
/// Freed blocks merge with free neighbours (and a free run reaching the end
/// shrinks the pool), and a request takes the smallest free block that fits,
/// splitting it. So under churn the pool stays near its live size instead of
/// growing with every update.
#[derive(Debug, Clone)]
pub(crate) struct BlockPool<T: Copy + std::fmt::Debug> {
    slots: CowChunks<T, COW_CHUNK>,
    /// Free blocks by start: start -> length.
    free_by_start: OrdMap<u32, u32>,
    /// Free blocks by (length, start), for best fit.
    free_by_size: OrdSet<(u32, u32)>,
    free_slots: usize,
    fill: T,
}

impl<T: Copy + std::fmt::Debug> BlockPool<T> {
    /// An empty pool whose fresh slots start as `fill`.
    pub fn new(fill: T) -> Self {
        Self {
            slots: CowChunks::new(fill),
            free_by_start: OrdMap::new(),
            free_by_size: OrdSet::new(),
            free_slots: 0,
            fill,
        }
    }

    /// A block of `n` (1..=64) slots, not shared with any live block and
    /// inside one chunk of [`POOL_CHUNK`] slots.
    ///
    /// # Panics
    /// If `n` is 0 or over 64, or the pool would pass 2^30 slots (indexes
    /// must fit the 30 bits a direct-pointing entry leaves beside its tags).
    pub fn alloc(&mut self, n: u32) -> u32 {
        assert!((1..=MAX_BLOCK).contains(&n), "block size {n} out of 1..=64");
        // Best fit among the free runs that hold `n` slots inside one chunk:
        // the smallest run first, so a run too fragmented by a boundary is
        // passed over only for a larger one.
        let fit = self
            .free_by_size
            .range((n, 0)..)
            .find_map(|&(size, start)| aligned_fit(start, size, n).map(|at| (size, start, at)));
        if let Some((size, start, at)) = fit {
            self.remove_free(start, size);
            // What is left on either side cannot touch another free run:
            // runs are coalesced.
            if at > start {
                self.insert_free(start, at - start);
            }
            if at + n < start + size {
                self.insert_free(at + n, start + size - at - n);
            }
            return at;
        }
        let end = self.slots.len();
        assert!(
            end + ((MAX_BLOCK + POOL_CHUNK) as usize) < (1usize << 30),
            "LPM pool exceeds 2^30 slots"
        );
        let end = end as u32;
        let at = aligned_fit(end, u32::MAX - end, n).expect("an unbounded run fits");
        self.slots.resize((at + n) as usize, self.fill);
        if at > end {
            // The rest of the last chunk: free for smaller blocks. It ends
            // where the new block starts, so it cannot touch another run,
            // except one ending at `end`, which would have been shrunk off.
            self.insert_free(end, at - end);
        }
        at
    }

    /// Returns a block handed out by [`BlockPool::alloc`].
    pub fn release(&mut self, start: u32, n: u32) {
        debug_assert!(n >= 1);
        debug_assert!(start as usize + n as usize <= self.slots.len());
        let (mut start, mut n) = (start, n);
        if let Some((&before, &before_len)) = self.free_by_start.range(..start).next_back() {
            debug_assert!(before + before_len <= start, "double free at {start}");
            if before + before_len == start {
                self.remove_free(before, before_len);
                start = before;
                n += before_len;
            }
        }
        if let Some(&after_len) = self.free_by_start.get(&(start + n)) {
            self.remove_free(start + n, after_len);
            n += after_len;
        }
        if (start + n) as usize == self.slots.len() {
            self.slots.resize(start as usize, self.fill);
        } else {
            self.insert_free(start, n);
        }
    }

    fn insert_free(&mut self, start: u32, n: u32) {
        self.free_by_start.insert(start, n);
        self.free_by_size.insert((n, start));
        self.free_slots += n as usize;
    }

    fn remove_free(&mut self, start: u32, n: u32) {
        self.free_by_start.remove(&start);
        self.free_by_size.remove(&(n, start));
        self.free_slots -= n as usize;
    }

    /// Slot `index`, for a lookup: one directory load, then the slot (the
    /// fill value past the pool, never a panic).
    #[inline(always)]
    pub fn at(&self, index: usize) -> &T {
        self.slots.at(index)
    }

    /// The block `start..start + n` handed out by [`BlockPool::alloc`], as
    /// one slice (a block never straddles a chunk).
    pub fn block(&self, start: u32, n: u32) -> &[T] {
        self.slots.run(start as usize, n as usize)
    }

    /// The block `start..start + n`, for writing (its chunk is copied
    /// first if a clone shares it).
    pub fn block_mut(&mut self, start: u32, n: u32) -> &mut [T] {
        self.slots.run_mut(start as usize, n as usize)
    }

    /// Stores `value` in slot `index` (copying its chunk if shared).
    ///
    /// # Panics
    /// Past the pool's last chunk: the arrays only write slots they
    /// allocated.
    pub fn set(&mut self, index: u32, value: T) {
        self.block_mut(index, 1)[0] = value;
    }

    /// The copy-on-write chunks themselves, for sharing reports.
    pub fn chunks(&self) -> &CowChunks<T, COW_CHUNK> {
        &self.slots
    }

    /// Slots held (live and free).
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Slots sitting in free blocks.
    pub fn free_slots(&self) -> usize {
        self.free_slots
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_blocks_are_reused_before_growing() {
        let mut p = BlockPool::new(0u8);
        let a = p.alloc(4);
        let b = p.alloc(2);
        assert_eq!((a, b, p.len()), (0, 4, 6));
        p.release(a, 4);
        assert_eq!(p.free_slots(), 4);
        assert_eq!(p.alloc(4), 0);
        assert_eq!((p.len(), p.free_slots()), (6, 0));
    }

    #[test]
    fn larger_free_blocks_are_split_best_fit() {
        let mut p = BlockPool::new(0u8);
        let a = p.alloc(64);
        let _guard = p.alloc(1);
        let b = p.alloc(8);
        let _guard2 = p.alloc(1);
        p.release(a, 64);
        p.release(b, 8);
        assert_eq!(p.alloc(3), b, "the 8-block fits best");
        assert_eq!(p.alloc(5), b + 3);
        assert_eq!(p.alloc(61), 0);
        assert_eq!(p.free_slots(), 3);
    }

    #[test]
    fn neighbours_coalesce_and_the_tail_shrinks() {
        let mut p = BlockPool::new(0u8);
        let blocks: Vec<u32> = (0..4).map(|_| p.alloc(10)).collect();
        let _guard = p.alloc(1);
        p.release(blocks[0], 10);
        p.release(blocks[2], 10);
        p.release(blocks[1], 10);
        assert_eq!(p.free_slots(), 30);
        assert_eq!(p.alloc(30), 0, "three neighbours merged into one block");
        p.release(0, 30);
        p.release(blocks[3], 10);
        p.release(40, 1);
        assert_eq!((p.len(), p.free_slots()), (0, 0));
    }

    #[test]
    fn a_block_that_would_straddle_a_chunk_starts_the_next_one() {
        let mut p = BlockPool::new(0u8);
        let first = p.alloc(64);
        for _ in 0..2 {
            p.alloc(64);
        }
        let small = p.alloc(60);
        assert_eq!((first, small), (0, 192));
        // 4 slots left in chunk 0: a block of 5 goes to chunk 1, the 4 stay
        // free for a smaller one.
        assert_eq!(p.alloc(5), POOL_CHUNK);
        assert_eq!(p.free_slots(), 4);
        assert_eq!(p.alloc(4), 252);
        assert_eq!(p.free_slots(), 0);
    }

    #[test]
    fn a_free_run_across_a_boundary_serves_blocks_on_either_side() {
        let mut p = BlockPool::new(0u8);
        let blocks: Vec<u32> = (0..11).map(|_| p.alloc(32)).collect();
        for &block in &blocks[5..10] {
            p.release(block, 32);
        }
        // One free run, 160..320, across the boundary at 256: a 64 fits at
        // its start, the next only from the boundary on, and the 32 slots
        // between serve a 32.
        assert_eq!(p.free_slots(), 160);
        assert_eq!(p.alloc(64), 160);
        assert_eq!(p.alloc(64), 256);
        assert_eq!(p.alloc(32), 224);
        assert_eq!(p.free_slots(), 0);
    }

    #[test]
    #[should_panic(expected = "out of 1..=64")]
    fn oversized_blocks_are_refused() {
        BlockPool::new(0u8).alloc(65);
    }

    proptest::proptest! {
        /// Any sequence of allocations and releases: live blocks never
        /// overlap, never straddle a chunk, and live plus free slots are
        /// the pool's length.
        #[test]
        fn blocks_stay_inside_one_chunk(ops in proptest::collection::vec((1u32..=64, proptest::bool::ANY, 0usize..64), 0..400)) {
            let mut p = BlockPool::new(0u8);
            let mut live: Vec<(u32, u32)> = Vec::new();
            for (n, release, pick) in ops {
                if release && !live.is_empty() {
                    let (start, len) = live.swap_remove(pick % live.len());
                    p.release(start, len);
                } else {
                    let start = p.alloc(n);
                    proptest::prop_assert_eq!(start / POOL_CHUNK, (start + n - 1) / POOL_CHUNK);
                    live.push((start, n));
                }
                let mut sorted = live.clone();
                sorted.sort_unstable();
                for pair in sorted.windows(2) {
                    proptest::prop_assert!(pair[0].0 + pair[0].1 <= pair[1].0, "{:?} overlap", pair);
                }
                let held: usize = live.iter().map(|&(_, n)| n as usize).sum();
                proptest::prop_assert_eq!(held + p.free_slots(), p.len());
            }
        }
    }
}
