//! The lookup arrays (direct-pointing array, node pool, leaf pool) and how
//! subtrees are built into them, published and retired.

use std::marker::PhantomData;

use fibre_rcu::CowChunks;

use crate::node::{mask_through, Node, DIRECT_LEAF, INLINE_NO_ROUTE, STRIDE, WIDE_LEAF};
use crate::pool::{BlockPool, COW_CHUNK};
use crate::{Key, Value};

/// The direct-pointing entry for "no route".
pub(crate) const NO_ROUTE_ENTRY: u32 = DIRECT_LEAF | INLINE_NO_ROUTE;

/// Entries per copy-on-write chunk of the direct-pointing arrays (4 KiB of
/// `u32`): the IPv4 top array is 256 of them, an IPv6 second-level chunk
/// (4,096 entries) four.
pub(crate) const DIRECT_CHUNK: usize = 4096;

/// The direct-pointing arrays' storage.
pub(crate) type DirectArray = CowChunks<u32, DIRECT_CHUNK>;

/// A prefix as the builders see it.
pub(crate) type Entry<K, V> = (K, u8, V);

/// What lookups read, plus the per-node bookkeeping updates need.
#[derive(Debug, Clone)]
pub(crate) struct LookupArrays<K: Key, V: Value> {
    /// One entry per value of the top `K::TOP_BITS` bits: either
    /// `DIRECT_LEAF | value` (31-bit inline leaf), or, when `TOP_BITS` is
    /// `DIRECT_BITS`, the index of a root node; else (two levels) the
    /// number of a chunk, or `WIDE_LEAF | index` of a one-slot leaf block for
    /// a value too wide to inline with nothing longer below.
    /// Empty until the first prefix arrives (reads then see "no route"), so
    /// that an unused table costs nothing.
    pub dir: DirectArray,
    /// Second-level direct pointing (only when `TOP_BITS < DIRECT_BITS`):
    /// chunk `c` is the `chunk_len::<K>()` entries from `c * chunk_len`, one per
    /// value of the next `DIRECT_BITS - TOP_BITS` bits, each an inline leaf
    /// or a root node index. A top slot has a chunk exactly while it needs
    /// one: prefixes longer than `TOP_BITS` below it, or a value too wide to
    /// inline.
    pub chunks: DirectArray,
    /// Chunk numbers free for reuse, and those unlinked by the last update.
    free_chunks: Vec<u32>,
    retired_chunks: Vec<u32>,
    pub nodes: BlockPool<Node>,
    /// Control plane, parallel to `nodes`: the value a node's range inherits
    /// from shorter prefixes, so that a subtree can be rebuilt on its own.
    pub node_default: CowChunks<V, COW_CHUNK>,
    pub leaves: BlockPool<V>,
    /// Blocks unlinked by the update in progress, released at its end.
    retired_nodes: Vec<(u32, u32)>,
    retired_leaves: Vec<(u32, u32)>,
    /// Whether the CPU counts bits in one instruction (checked once).
    pub has_popcnt: bool,
    _key: PhantomData<K>,
}

/// Bits of the second direct-pointing level (0: one level only).
#[inline(always)]
pub(crate) const fn chunk_bits<K: Key>() -> u32 {
    K::DIRECT_BITS - K::TOP_BITS
}

/// Entries per chunk of the second level.
#[inline(always)]
pub(crate) const fn chunk_len<K: Key>() -> usize {
    1 << chunk_bits::<K>()
}

/// The key left-aligned in 128 bits, so one bit extractor serves all widths.
#[inline]
pub(crate) fn left_aligned<K: Key>(k: K) -> u128 {
    k.to_u128() << (128 - u32::from(K::BITS))
}

/// `width` bits of a left-aligned key from `offset` (< 128).
#[inline]
fn bits(a: u128, offset: u32, width: u32) -> u32 {
    ((a << offset) >> (128 - width)) as u32
}

/// The value each of the `2^width` units of `width` bits after `offset`
/// inherits from the prefixes of `pfx` (all inside one range of `offset`
/// bits, none shorter than `offset`) no longer than `offset + width`,
/// over `default`: shorter prefixes painted first, longer ones over them.
fn paint_units<K: Key, V: Value>(
    pfx: &[Entry<K, V>],
    offset: u32,
    width: u32,
    default: V,
) -> Vec<V> {
    let deepest = offset + width;
    let mut units = vec![default; 1usize << width];
    let mut short: Vec<Entry<K, V>> = pfx
        .iter()
        .copied()
        .filter(|&(_, l, _)| u32::from(l) <= deepest)
        .collect();
    short.sort_by_key(|&(_, l, _)| l);
    for (prefix, len, value) in short {
        let first = bits(left_aligned(prefix), offset, width) as usize;
        let count = 1usize << (deepest - u32::from(len));
        units[first..first + count].fill(value);
    }
    units
}

/// How many prefixes at the start of `pfx` (sorted by address) have `unit`
/// as their `width` bits after `offset`.
fn run_len<K: Key, V: Value>(pfx: &[Entry<K, V>], offset: u32, width: u32, unit: u32) -> usize {
    pfx.iter()
        .take_while(|&&(k, _, _)| bits(left_aligned(k), offset, width) == unit)
        .count()
}

/// The inline direct-pointing entry for a leaf value, if it fits 31 bits.
#[inline]
fn inline_leaf<V: Value>(v: V) -> Option<u32> {
    if v == V::NO_ROUTE {
        Some(DIRECT_LEAF | INLINE_NO_ROUTE)
    } else if v.to_u32() < INLINE_NO_ROUTE {
        Some(DIRECT_LEAF | v.to_u32())
    } else {
        None
    }
}

impl<K: Key, V: Value> LookupArrays<K, V> {
    /// Arrays that answer "no route" everywhere.
    pub fn new() -> Self {
        Self {
            dir: CowChunks::new(NO_ROUTE_ENTRY),
            chunks: CowChunks::new(NO_ROUTE_ENTRY),
            free_chunks: Vec::new(),
            retired_chunks: Vec::new(),
            nodes: BlockPool::new(Node::default()),
            node_default: CowChunks::new(V::NO_ROUTE),
            leaves: BlockPool::new(V::NO_ROUTE),
            retired_nodes: Vec::new(),
            retired_leaves: Vec::new(),
            has_popcnt: detect_popcnt(),
            _key: PhantomData,
        }
    }

    /// Allocates the direct-pointing array ("no route" everywhere) if the
    /// table has not had one yet.
    pub fn ensure_dir(&mut self) {
        if self.dir.is_empty() {
            self.dir.resize(1usize << K::TOP_BITS, NO_ROUTE_ENTRY);
        }
    }

    /// The direct-pointing entry of `slot`, a value of the top
    /// `K::DIRECT_BITS` bits, through the chunk when its top slot has one
    /// ("no route" before the array exists).
    #[inline(always)]
    pub fn entry(&self, slot: usize) -> u32 {
        if self.dir.is_empty() {
            return NO_ROUTE_ENTRY;
        }
        let top = *self.dir.at(slot >> chunk_bits::<K>());
        if chunk_bits::<K>() == 0 || top & (DIRECT_LEAF | WIDE_LEAF) != 0 {
            top
        } else {
            *self
                .chunks
                .at(top as usize * chunk_len::<K>() + (slot & (chunk_len::<K>() - 1)))
        }
    }

    /// Whether top slot `top` points to a chunk.
    pub fn has_chunk(&self, top: usize) -> bool {
        chunk_bits::<K>() > 0 && self.dir[top] & (DIRECT_LEAF | WIDE_LEAF) == 0
    }

    /// The top entry for a range that holds `value` everywhere: inline when
    /// it fits, else a fresh one-slot leaf block.
    pub fn top_leaf(&mut self, value: V) -> u32 {
        inline_leaf(value).unwrap_or_else(|| {
            let index = self.leaves.alloc(1);
            self.leaves.set(index, value);
            WIDE_LEAF | index
        })
    }

    /// The value `slot` inherits from prefixes of at most `DIRECT_BITS`.
    pub fn slot_default(&self, slot: usize) -> V {
        let entry = self.entry(slot);
        if entry & DIRECT_LEAF != 0 {
            V::from_inline(entry & !DIRECT_LEAF)
        } else if chunk_bits::<K>() > 0 && entry & WIDE_LEAF != 0 {
            *self.leaves.at((entry & !WIDE_LEAF) as usize)
        } else {
            self.node_default[entry as usize]
        }
    }

    /// Bytes of everything lookups read (free pool slots included).
    pub fn bytes(&self) -> usize {
        (self.dir.len() + self.chunks.len()) * std::mem::size_of::<u32>()
            + self.nodes.len() * std::mem::size_of::<Node>()
            + self.leaves.len() * std::mem::size_of::<V>()
    }

    /// Stores node `index` and the value its range inherits.
    fn set_node(&mut self, index: u32, node: Node, default: V) {
        self.nodes.set(index, node);
        self.set_node_default(index, default);
    }

    fn set_node_default(&mut self, index: u32, default: V) {
        // `alloc_nodes` keeps `node_default` as long as the node pool, so
        // an index the pool handed out is always in bounds.
        self.node_default
            .set(index as usize, default)
            .expect("node_default is kept as long as the node pool");
    }

    /// Stores top entry `top`; returns the one it replaced.
    fn set_dir(&mut self, top: usize, entry: u32) -> u32 {
        self.dir
            .set(top, entry)
            .expect("top entries are written only after ensure_dir")
    }

    /// Stores second-level entry `at`; returns the one it replaced.
    fn set_chunk_entry(&mut self, at: usize, entry: u32) -> u32 {
        self.chunks
            .set(at, entry)
            .expect("second-level entries are written only in allocated chunks")
    }

    /// Bytes of chunks shared with `other`, array by array.
    pub fn shared_bytes_with(&self, other: &Self) -> usize {
        self.dir.shared_bytes_with(&other.dir)
            + self.chunks.shared_bytes_with(&other.chunks)
            + self.nodes.chunks().shared_bytes_with(other.nodes.chunks())
            + self.node_default.shared_bytes_with(&other.node_default)
            + self
                .leaves
                .chunks()
                .shared_bytes_with(other.leaves.chunks())
    }

    /// Bytes this copy alone holds: directories and unshared chunks.
    pub fn exclusive_bytes(&self) -> usize {
        self.dir.exclusive_bytes()
            + self.chunks.exclusive_bytes()
            + self.nodes.chunks().exclusive_bytes()
            + self.node_default.exclusive_bytes()
            + self.leaves.chunks().exclusive_bytes()
    }

    /// Bytes of every chunk, shared or not (directories excluded).
    pub fn chunk_bytes_total(&self) -> usize {
        self.dir.chunk_count() * DirectArray::chunk_bytes()
            + self.chunks.chunk_count() * DirectArray::chunk_bytes()
            + self.nodes.chunks().chunk_count() * CowChunks::<Node, COW_CHUNK>::chunk_bytes()
            + self.node_default.chunk_count() * CowChunks::<V, COW_CHUNK>::chunk_bytes()
            + self.leaves.chunks().chunk_count() * CowChunks::<V, COW_CHUNK>::chunk_bytes()
    }

    fn alloc_nodes(&mut self, n: u32) -> u32 {
        let start = self.nodes.alloc(n);
        if self.node_default.len() < self.nodes.len() {
            self.node_default.resize(self.nodes.len(), V::NO_ROUTE);
        }
        start
    }

    /// Builds the node covering bits `offset..offset + 6` of a range whose
    /// prefixes longer than `offset` are `pfx` (sorted by address, then
    /// length) and whose shorter covering prefixes give `default`. Children
    /// and leaves go into fresh blocks; the node itself is returned for the
    /// caller to place.
    pub fn build_node(&mut self, pfx: &[Entry<K, V>], offset: u32, default: V) -> Node {
        let mut paint = [default; 64];
        let mut runs = [(0u32, 0u32); 64];
        let mut vector = 0u64;
        let deep = offset + STRIDE;
        let mut i = 0;
        while i < pfx.len() {
            let (key, len, value) = pfx[i];
            let len = u32::from(len);
            let child = bits(left_aligned(key), offset, STRIDE);
            if len <= deep {
                // Sorted order puts containers before what they contain, so
                // painting in order leaves the longest match on each child.
                let first = child as usize;
                paint[first..first + (1usize << (deep - len))].fill(value);
                i += 1;
            } else {
                // Prefixes below one child are contiguous in sorted order.
                let start = i;
                while i < pfx.len()
                    && u32::from(pfx[i].1) > deep
                    && bits(left_aligned(pfx[i].0), offset, STRIDE) == child
                {
                    i += 1;
                }
                vector |= 1u64 << child;
                runs[child as usize] = (start as u32, i as u32);
            }
        }

        let mut leafvec = 0u64;
        let mut leaf_values = [default; 64];
        let mut leaf_count = 0usize;
        let mut previous: Option<V> = None;
        for (child, &value) in paint.iter().enumerate() {
            if vector & (1u64 << child) != 0 || previous == Some(value) {
                continue;
            }
            leafvec |= 1u64 << child;
            leaf_values[leaf_count] = value;
            leaf_count += 1;
            previous = Some(value);
        }
        let base0 = if leaf_count > 0 {
            let base = self.leaves.alloc(leaf_count as u32);
            self.leaves
                .block_mut(base, leaf_count as u32)
                .copy_from_slice(&leaf_values[..leaf_count]);
            base
        } else {
            0
        };

        let child_count = vector.count_ones();
        let base1 = if child_count > 0 {
            self.alloc_nodes(child_count)
        } else {
            0
        };
        let mut rest = vector;
        let mut slot = base1;
        while rest != 0 {
            let child = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let (start, end) = runs[child];
            let node = self.build_node(&pfx[start as usize..end as usize], deep, paint[child]);
            self.set_node(slot, node, paint[child]);
            slot += 1;
        }
        Node {
            vector,
            leafvec,
            base0,
            base1,
        }
    }

    /// Builds the whole direct-pointing structure from every prefix
    /// (sorted by address, then length, without duplicates) into an
    /// allocated, empty top array.
    pub fn build_all(&mut self, all: &[Entry<K, V>]) {
        let defaults = paint_units(all, 0, K::TOP_BITS, V::NO_ROUTE);
        let long: Vec<Entry<K, V>> = all
            .iter()
            .copied()
            .filter(|&(_, l, _)| u32::from(l) > K::TOP_BITS)
            .collect();
        let mut start = 0;
        for (top, &default) in defaults.iter().enumerate() {
            let end = start + run_len(&long[start..], 0, K::TOP_BITS, top as u32);
            let below = &long[start..end];
            let entry = if chunk_bits::<K>() == 0 {
                self.build_slot_entry(below, default)
            } else {
                self.build_top_entry(below, default)
            };
            self.set_dir(top, entry);
            start = end;
        }
    }

    /// The top entry for a range whose prefixes longer than `TOP_BITS` are
    /// `below` and whose shorter ones give `default`: an inline leaf when it
    /// can be, else a fresh chunk.
    fn build_top_entry(&mut self, below: &[Entry<K, V>], default: V) -> u32 {
        if below.is_empty() {
            return self.top_leaf(default);
        }
        let defaults = paint_units(below, K::TOP_BITS, chunk_bits::<K>(), default);
        let deep: Vec<Entry<K, V>> = below
            .iter()
            .copied()
            .filter(|&(_, l, _)| u32::from(l) > K::DIRECT_BITS)
            .collect();
        let mut entries = vec![NO_ROUTE_ENTRY; chunk_len::<K>()];
        let mut start = 0;
        for (low, &default) in defaults.iter().enumerate() {
            let end = start + run_len(&deep[start..], K::TOP_BITS, chunk_bits::<K>(), low as u32);
            entries[low] = self.build_slot_entry(&deep[start..end], default);
            start = end;
        }
        self.build_chunk(&entries)
    }

    /// The direct-pointing entry for one slot: an inline leaf when nothing
    /// longer than the slot is stored and the value fits, else a root node
    /// in a fresh block.
    pub fn build_slot_entry(&mut self, pfx: &[Entry<K, V>], default: V) -> u32 {
        if pfx.is_empty() {
            if let Some(entry) = inline_leaf(default) {
                return entry;
            }
        }
        let node = self.build_node(pfx, K::DIRECT_BITS, default);
        let index = self.alloc_nodes(1);
        self.set_node(index, node, default);
        index
    }

    /// Publishes `entry` for `slot` with one aligned store, then retires the
    /// subtree it replaced. A slot whose top entry is an inline leaf first
    /// gets a fresh chunk holding that leaf everywhere, `entry` in place,
    /// published by the store of its number into the top entry.
    pub fn publish_slot(&mut self, slot: usize, entry: u32) {
        let old = if chunk_bits::<K>() == 0 {
            self.set_dir(slot, entry)
        } else {
            let top = slot >> chunk_bits::<K>();
            let low = slot & (chunk_len::<K>() - 1);
            let old_top = self.dir[top];
            if old_top & (DIRECT_LEAF | WIDE_LEAF) != 0 {
                let chunk = if old_top & DIRECT_LEAF != 0 {
                    self.alloc_chunk(old_top)
                } else {
                    // Each slot needs its own subtree for a wide value.
                    let value = *self.leaves.at((old_top & !WIDE_LEAF) as usize);
                    let chunk = self.alloc_chunk(NO_ROUTE_ENTRY);
                    let start = chunk as usize * chunk_len::<K>();
                    for at in start..start + chunk_len::<K>() {
                        let entry = self.build_slot_entry(&[], value);
                        self.set_chunk_entry(at, entry);
                    }
                    chunk
                };
                let at = chunk as usize * chunk_len::<K>() + low;
                let replaced = self.set_chunk_entry(at, entry);
                self.set_dir(top, chunk);
                self.retire_entry(replaced);
                self.retire_top_leaf(old_top);
                self.reclaim();
                return;
            }
            let at = self.dir[top] as usize * chunk_len::<K>() + low;
            self.set_chunk_entry(at, entry)
        };
        self.retire_entry(old);
        self.reclaim();
    }

    /// Publishes `entry` (from [`Self::top_leaf`]) for top slot `top` with
    /// one store, then retires what it replaced: a wide leaf, or a chunk and
    /// every subtree below it.
    pub fn publish_top(&mut self, top: usize, entry: u32) {
        let old = self.set_dir(top, entry);
        if old & (DIRECT_LEAF | WIDE_LEAF) != 0 {
            self.retire_top_leaf(old);
        } else {
            let start = old as usize * chunk_len::<K>();
            for at in start..start + chunk_len::<K>() {
                self.retire_entry(self.chunks[at]);
            }
            self.retired_chunks.push(old);
        }
        self.reclaim();
    }

    /// Queues the leaf block of a replaced wide top entry.
    fn retire_top_leaf(&mut self, old: u32) {
        if old & DIRECT_LEAF == 0 && old & WIDE_LEAF != 0 {
            self.retired_leaves.push((old & !WIDE_LEAF, 1));
        }
    }

    /// Queues the subtree of a replaced slot entry (nothing for a leaf).
    fn retire_entry(&mut self, old: u32) {
        if old & DIRECT_LEAF == 0 {
            let node = *self.nodes.at(old as usize);
            self.retired_nodes.push((old, 1));
            self.retire_below(node);
        }
    }

    /// A chunk with every entry set to `fill`, from the free list if any.
    fn alloc_chunk(&mut self, fill: u32) -> u32 {
        let chunk = match self.free_chunks.pop() {
            Some(chunk) => chunk,
            None => {
                let chunk = self.chunks.len() / chunk_len::<K>();
                assert!(
                    chunk < WIDE_LEAF as usize,
                    "LPM chunk numbers exceed 30 bits"
                );
                self.chunks
                    .resize(self.chunks.len() + chunk_len::<K>(), NO_ROUTE_ENTRY);
                chunk as u32
            }
        };
        let start = chunk as usize * chunk_len::<K>();
        for at in start..start + chunk_len::<K>() {
            self.set_chunk_entry(at, fill);
        }
        chunk
    }

    /// Fills a fresh chunk with `entries` (one per chunk slot, in order) and
    /// returns the top entry that points to it.
    pub fn build_chunk(&mut self, entries: &[u32]) -> u32 {
        debug_assert_eq!(entries.len(), chunk_len::<K>());
        let chunk = self.alloc_chunk(NO_ROUTE_ENTRY);
        let start = chunk as usize * chunk_len::<K>();
        for (at, &entry) in (start..).zip(entries) {
            self.set_chunk_entry(at, entry);
        }
        chunk
    }

    /// Replaces child node `child` of `parent` by `node`: copies the
    /// parent's block of children into a fresh block with `node` in place,
    /// publishes it with one aligned store of `parent.base1`, then retires the
    /// old block and everything below the old child.
    pub fn publish_child(&mut self, parent: u32, child: u32, node: Node, default: V) {
        let parent_node = *self.nodes.at(parent as usize);
        let count = parent_node.child_count();
        let old_base = parent_node.base1;
        let old_child = *self.nodes.at(child as usize);
        let new_base = self.alloc_nodes(count);
        // The old and new blocks may share a chunk; copy through the stack.
        let mut siblings = [Node::default(); 64];
        siblings[..count as usize].copy_from_slice(self.nodes.block(old_base, count));
        siblings[(child - old_base) as usize] = node;
        self.nodes
            .block_mut(new_base, count)
            .copy_from_slice(&siblings[..count as usize]);
        for i in 0..count {
            let inherited = if old_base + i == child {
                default
            } else {
                self.node_default[(old_base + i) as usize]
            };
            self.set_node_default(new_base + i, inherited);
        }
        let mut parent_node = parent_node;
        parent_node.base1 = new_base;
        self.nodes.set(parent, parent_node);
        self.retired_nodes.push((old_base, count));
        self.retire_below(old_child);
        self.reclaim();
    }

    /// Queues every block reachable from `node` (not `node` itself).
    fn retire_below(&mut self, node: Node) {
        let leaves = node.leaf_count();
        if leaves > 0 {
            self.retired_leaves.push((node.base0, leaves));
        }
        let children = node.child_count();
        if children > 0 {
            self.retired_nodes.push((node.base1, children));
            for i in node.base1..node.base1 + children {
                let child = *self.nodes.at(i as usize);
                self.retire_below(child);
            }
        }
    }

    /// Returns the blocks unlinked by this update to the pools at once. No
    /// grace period is needed: a concurrent reader reads a published clone,
    /// never this working copy, and the clone keeps its own copy of every
    /// chunk the writer changes from here on (copy-on-write), so reusing a
    /// block can never change what a reader sees. The lists only collect a
    /// subtree's blocks before any is released (a release may shrink the
    /// pool under a block still to be read).
    fn reclaim(&mut self) {
        for (start, n) in self.retired_nodes.drain(..) {
            self.nodes.release(start, n);
        }
        for (start, n) in self.retired_leaves.drain(..) {
            self.leaves.release(start, n);
        }
        self.free_chunks.append(&mut self.retired_chunks);
    }

    /// Walks from the root of `slot` towards `key` and records, outermost
    /// first, every node whose range strictly contains a prefix of `len`
    /// bits: `(node index, node offset, parent index or u32::MAX)`.
    pub fn path_to(&self, slot: usize, key: K, len: u32, path: &mut Vec<(u32, u32, u32)>) {
        path.clear();
        let entry = self.entry(slot);
        if entry & DIRECT_LEAF != 0 || (chunk_bits::<K>() > 0 && entry & WIDE_LEAF != 0) {
            return;
        }
        let (mut index, mut offset, mut parent) = (entry, K::DIRECT_BITS, u32::MAX);
        loop {
            path.push((index, offset, parent));
            if offset + STRIDE >= len {
                return;
            }
            let node = *self.nodes.at(index as usize);
            let child = key.bits_at(offset, STRIDE);
            if node.vector & (1u64 << child) == 0 {
                return;
            }
            parent = index;
            index = node.base1 + (node.vector & mask_through(child)).count_ones() - 1;
            offset += STRIDE;
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn detect_popcnt() -> bool {
    std::arch::is_x86_feature_detected!("popcnt")
}

#[cfg(not(target_arch = "x86_64"))]
fn detect_popcnt() -> bool {
    false
}
