//! The read side: single and batched lookups over [`LookupArrays`].
//!
//! Each lookup is one direct-pointing read (two for IPv6 under a /12 with
//! longer prefixes), then one node per 6 bits, then one leaf. Batches walk up to [`Key::BATCH_LANES`] (at most [`LANES`])
//! addresses in lockstep, one level
//! per round, prefetching every lane's next node before reading any of them,
//! so the cache misses of the lanes overlap instead of queueing.

use crate::arrays::{chunk_bits, chunk_len, LookupArrays, NO_ROUTE_ENTRY};
use crate::node::{ones_through, Node, DIRECT_LEAF, STRIDE, WIDE_LEAF};
use crate::{Key, Value};

/// Most addresses a batch can walk together: one bit each in a `u64` mask.
/// How many it does walk is the key's [`Key::BATCH_LANES`].
pub(crate) const LANES: usize = 64;
const _: () = assert!(
    <u32 as Key>::BATCH_LANES <= LANES && <u128 as Key>::BATCH_LANES <= LANES,
    "a key's BATCH_LANES must not exceed LANES: the lockstep walk keeps one \
     bit per lane in a u64 mask and LANES-long scratch arrays on the stack; \
     if this fires, lower the key's BATCH_LANES to at most LANES (64)"
);

/// Hints the CPU to pull the cache line holding `item` into L1. Safe for
/// any pointer, dangling or null included: a prefetch never faults nor
/// changes memory. Public so that a caller walking a batch of this LPM's
/// answers (the FIB's bursts: the entries the slots name) can overlap its
/// own misses the same way.
#[inline(always)]
pub fn prefetch<T>(item: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults and never changes
    // memory, whatever the address; SSE is part of the x86_64 baseline.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(item.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

impl<K: Key, V: Value> LookupArrays<K, V> {
    /// The leaf of the longest match for `addr`; [`Value::NO_ROUTE`] when
    /// none (or when the matching prefix holds that value).
    #[inline]
    pub fn lookup_leaf(&self, addr: K) -> V {
        #[cfg(target_arch = "x86_64")]
        if self.has_popcnt {
            // SAFETY: `has_popcnt` is true only if the CPU reported the
            // feature at construction.
            return unsafe { self.lookup_leaf_popcnt(addr) };
        }
        self.walk(addr)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn lookup_leaf_popcnt(&self, addr: K) -> V {
        self.walk(addr)
    }

    /// The walk itself, inlined into each feature-specific wrapper so that
    /// `count_ones` becomes one `popcnt` where the CPU has it.
    #[inline(always)]
    fn walk(&self, addr: K) -> V {
        let entry = self.entry(addr.bits_at(0, K::DIRECT_BITS) as usize);
        if entry & DIRECT_LEAF != 0 {
            return V::from_inline(entry & !DIRECT_LEAF);
        }
        if chunk_bits::<K>() > 0 && entry & WIDE_LEAF != 0 {
            return *self.leaves.at((entry & !WIDE_LEAF) as usize);
        }
        let nodes = &self.nodes;
        let mut node = nodes.at(entry as usize);
        let mut offset = K::DIRECT_BITS;
        let mut child = addr.bits_at(offset, STRIDE);
        while node.vector & (1u64 << child) != 0 {
            let index = node.base1 + ones_through(node.vector, child) - 1;
            node = nodes.at(index as usize);
            offset += STRIDE;
            child = addr.bits_at(offset, STRIDE);
        }
        let index = node.base0 + ones_through(node.leafvec, child) - 1;
        *self.leaves.at(index as usize)
    }

    /// Leaves for up to [`LANES`] addresses of `addrs` into `out` (same
    /// length); `next` are the addresses of the following call, whose first
    /// reads are prefetched meanwhile.
    pub fn lookup_batch_leaves(&self, addrs: &[K], out: &mut [V], next: &[K]) {
        debug_assert_eq!(addrs.len(), out.len());
        #[cfg(target_arch = "x86_64")]
        if self.has_popcnt {
            // SAFETY: `has_popcnt` is true only if the CPU reported the
            // feature at construction.
            unsafe { self.lookup_batch_popcnt(addrs, out, next) };
            return;
        }
        self.lockstep(addrs, out, next);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn lookup_batch_popcnt(&self, addrs: &[K], out: &mut [V], next: &[K]) {
        self.lockstep(addrs, out, next);
    }

    /// Up to [`LANES`] lookups, advanced together one level at a time.
    /// Lanes still walking and lanes waiting on their leaf are bit masks, so
    /// each round visits only live lanes without a list to maintain. The
    /// direct-pointing entries of the `next` chunk are prefetched while this
    /// one walks, and a lane's leaf is read a round after it was prefetched.
    #[inline(always)]
    fn lockstep(&self, addrs: &[K], out: &mut [V], next: &[K]) {
        debug_assert!(addrs.len() <= LANES && out.len() == addrs.len());
        let dir = &self.dir;
        let chunks = &self.chunks;
        let nodes = &self.nodes;
        let leaves = &self.leaves;
        // Per lane: the top slot, the chunk entry, the node, then the leaf.
        let mut at = [0u32; LANES];
        for (at, addr) in at.iter_mut().zip(addrs) {
            *at = addr.bits_at(0, K::TOP_BITS);
            prefetch(dir.slot_ptr(*at as usize));
        }

        // Per lane, the node or leaf it reads next, found (one directory
        // load) when it is prefetched, so the read a round later does not
        // go through the chunk directory again.
        let mut node_at: [&Node; LANES] = [nodes.at(0); LANES];
        let mut leaf_at: [&V; LANES] = [leaves.at(0); LANES];
        let mut walking = 0u64;
        let mut chunked = 0u64;
        for (lane, (at, out)) in at.iter_mut().zip(out.iter_mut()).enumerate() {
            let entry = if dir.is_empty() {
                NO_ROUTE_ENTRY
            } else {
                *dir.at(*at as usize)
            };
            if entry & DIRECT_LEAF != 0 {
                *out = V::from_inline(entry & !DIRECT_LEAF);
            } else if chunk_bits::<K>() == 0 {
                node_at[lane] = nodes.at(entry as usize);
                prefetch(node_at[lane]);
                walking |= 1u64 << lane;
            } else if entry & WIDE_LEAF != 0 {
                *out = *leaves.at((entry & !WIDE_LEAF) as usize);
            } else {
                let low = addrs[lane].bits_at(K::TOP_BITS, chunk_bits::<K>());
                *at = entry * chunk_len::<K>() as u32 + low;
                prefetch(chunks.slot_ptr(*at as usize));
                chunked |= 1u64 << lane;
            }
        }
        for addr in next {
            let slot = addr.bits_at(0, K::TOP_BITS) as usize;
            prefetch(dir.slot_ptr(slot));
        }
        while chunked != 0 {
            let lane = chunked.trailing_zeros() as usize;
            chunked &= chunked - 1;
            let entry = *chunks.at(at[lane] as usize);
            if entry & DIRECT_LEAF != 0 {
                out[lane] = V::from_inline(entry & !DIRECT_LEAF);
            } else {
                node_at[lane] = nodes.at(entry as usize);
                prefetch(node_at[lane]);
                walking |= 1u64 << lane;
            }
        }

        let mut leafed = 0u64;
        let mut offset = K::DIRECT_BITS;
        while walking != 0 {
            while leafed != 0 {
                let lane = leafed.trailing_zeros() as usize;
                leafed &= leafed - 1;
                out[lane] = *leaf_at[lane];
            }
            let mut lanes = walking;
            while lanes != 0 {
                let lane = lanes.trailing_zeros() as usize;
                lanes &= lanes - 1;
                let node = node_at[lane];
                let child = addrs[lane].bits_at(offset, STRIDE);
                if node.vector & (1u64 << child) != 0 {
                    let index = node.base1 + ones_through(node.vector, child) - 1;
                    node_at[lane] = nodes.at(index as usize);
                    prefetch(node_at[lane]);
                } else {
                    let index = node.base0 + ones_through(node.leafvec, child) - 1;
                    leaf_at[lane] = leaves.at(index as usize);
                    prefetch(leaf_at[lane]);
                    walking &= !(1u64 << lane);
                    leafed |= 1u64 << lane;
                }
            }
            offset += STRIDE;
        }
        while leafed != 0 {
            let lane = leafed.trailing_zeros() as usize;
            leafed &= leafed - 1;
            out[lane] = *leaf_at[lane];
        }
    }
}
