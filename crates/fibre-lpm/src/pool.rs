//! A pool of equally typed slots handed out in contiguous blocks of 1..=64,
//! addressed by `u32` index, whose freed blocks are coalesced and reused.

use std::collections::{BTreeMap, BTreeSet};

/// Largest block a node asks for: one slot per child or leaf of a node.
pub(crate) const MAX_BLOCK: u32 = 64;

/// Contiguous blocks of `T` in one `Vec`, with a best-fit free list.
///
/// Freed blocks merge with free neighbours (and a free run reaching the end
/// shrinks the pool), and a request takes the smallest free block that fits,
/// splitting it. So under churn the pool stays near its live size instead of
/// growing with every update.
#[derive(Debug, Clone)]
pub(crate) struct BlockPool<T: Copy> {
    slots: Vec<T>,
    /// Free blocks by start: start -> length.
    free_by_start: BTreeMap<u32, u32>,
    /// Free blocks by (length, start), for best fit.
    free_by_size: BTreeSet<(u32, u32)>,
    free_slots: usize,
    fill: T,
}

impl<T: Copy> BlockPool<T> {
    /// An empty pool whose fresh slots start as `fill`.
    pub fn new(fill: T) -> Self {
        Self {
            slots: Vec::new(),
            free_by_start: BTreeMap::new(),
            free_by_size: BTreeSet::new(),
            free_slots: 0,
            fill,
        }
    }

    /// A block of `n` (1..=64) slots, not shared with any live block.
    ///
    /// # Panics
    /// If `n` is 0 or over 64, or the pool would pass 2^30 slots (indexes
    /// must fit the 30 bits a direct-pointing entry leaves beside its tags).
    pub fn alloc(&mut self, n: u32) -> u32 {
        assert!((1..=MAX_BLOCK).contains(&n), "block size {n} out of 1..=64");
        if let Some(&(size, start)) = self.free_by_size.range((n, 0)..).next() {
            self.free_by_size.remove(&(size, start));
            self.free_by_start.remove(&start);
            self.free_slots -= size as usize;
            if size > n {
                // The rest cannot touch another free block: it was coalesced.
                self.insert_free(start + n, size - n);
            }
            return start;
        }
        let start = self.slots.len();
        assert!(
            start + (n as usize) < (1usize << 30),
            "LPM pool exceeds 2^30 slots"
        );
        self.slots.resize(start + n as usize, self.fill);
        start as u32
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
            self.slots.truncate(start as usize);
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

    /// All slots, live and free.
    #[inline(always)]
    pub fn slots(&self) -> &[T] {
        &self.slots
    }

    /// All slots, live and free, for writing freshly allocated blocks.
    #[inline(always)]
    pub fn slots_mut(&mut self) -> &mut [T] {
        &mut self.slots
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
    #[should_panic(expected = "out of 1..=64")]
    fn oversized_blocks_are_refused() {
        BlockPool::new(0u8).alloc(65);
    }
}
