//! The Poptrie engine: a RIB (control plane) and the lookup arrays built
//! from it (data plane). The design, the update scheme and what a concurrent
//! (RCU) reader needs from it are described in the crate documentation.

use imbl::OrdMap;

use crate::arrays::{chunk_bits, left_aligned, Entry, LookupArrays};
use crate::reference::check_prefix;
use crate::{Key, LpmError, Value};

/// The host bits of a `len`-bit prefix of `K`, as a plain `u128`.
fn host_mask<K: Key>(len: u32) -> u128 {
    !left_aligned(K::prefix_mask(len as u8)) >> (128 - u32::from(K::BITS))
}

/// The first address of top slot `top`.
fn top_start<K: Key>(top: usize) -> K {
    K::from_u128((top as u128) << (u32::from(K::BITS) - K::TOP_BITS))
}

/// Longest-prefix match table: a Poptrie over a persistent (`imbl`) RIB.
///
/// Cloning is cheap: the lookup arrays are copy-on-write chunks and the RIB
/// a persistent B-tree, so a clone copies the chunk directories (a few
/// thousand pointers for a full table) and shares everything else; each
/// later update on either side copies only the chunks it writes. That is
/// what lets a FIB publish a new version per batch by cloning its working
/// table.
///
/// ```
/// use fibre_lpm::Poptrie;
/// let mut t: Poptrie<u32, u16> = Poptrie::new();
/// t.insert(0xc0a8_0000, 16, 7).unwrap(); // 192.168.0.0/16
/// t.insert(0xc0a8_0100, 24, 9).unwrap(); // 192.168.1.0/24
/// assert_eq!(t.lookup(0xc0a8_0105), Some(9));
/// assert_eq!(t.lookup(0xc0a8_0205), Some(7));
/// let mut out = [None; 2];
/// t.lookup_batch(&[0xc0a8_0105, 0x0808_0808], &mut out);
/// assert_eq!(out, [Some(9), None]);
/// ```
pub struct Poptrie<K: Key, V: Value> {
    rib: OrdMap<(K, u8), V>,
    /// Stored prefixes per length, to probe only lengths in use.
    count_by_len: Vec<u32>,
    /// Prefixes whose value equals the arrays' "no route" mark.
    no_route_valued: usize,
    arrays: LookupArrays<K, V>,
    scratch: Vec<Entry<K, V>>,
    path: Vec<(u32, u32, u32)>,
}

impl<K: Key, V: Value> std::fmt::Debug for Poptrie<K, V> {
    /// The table's state; the per-update scratch buffers are left out (a
    /// clone starts them empty, so two equal tables print alike).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Poptrie")
            .field("rib", &self.rib)
            .field("count_by_len", &self.count_by_len)
            .field("no_route_valued", &self.no_route_valued)
            .field("arrays", &self.arrays)
            .finish_non_exhaustive()
    }
}

impl<K: Key, V: Value> Clone for Poptrie<K, V> {
    /// Shares the RIB and every lookup-array chunk: costs the chunk
    /// directories. The per-update scratch buffers start empty.
    fn clone(&self) -> Self {
        Self {
            rib: self.rib.clone(),
            count_by_len: self.count_by_len.clone(),
            no_route_valued: self.no_route_valued,
            arrays: self.arrays.clone(),
            scratch: Vec::new(),
            path: Vec::new(),
        }
    }
}

impl<K: Key, V: Value> Default for Poptrie<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

/// Sizes of the lookup arrays, for memory reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoptrieStats {
    /// Entries of the direct-pointing arrays, both levels (4 bytes each).
    pub direct_entries: usize,
    /// Node slots held (24 bytes each), free ones included.
    pub node_slots: usize,
    /// Node slots on the free lists.
    pub free_node_slots: usize,
    /// Copy-on-write chunks holding the direct-pointing arrays (both levels).
    pub direct_chunks: usize,
    /// Copy-on-write chunks of the node pool and of the per-node defaults.
    pub node_chunks: usize,
    /// Copy-on-write chunks of the leaf pool.
    pub leaf_chunks: usize,
    /// Leaf slots held (one value each), free ones included.
    pub leaf_slots: usize,
    /// Leaf slots on the free lists.
    pub free_leaf_slots: usize,
}

impl<K: Key, V: Value> Poptrie<K, V> {
    /// An empty table.
    ///
    /// ```
    /// let t = fibre_lpm::Poptrie::<u128, u32>::new();
    /// assert!(t.is_empty());
    /// assert_eq!(t.lookup(1), None);
    /// ```
    pub fn new() -> Self {
        Self {
            rib: OrdMap::new(),
            count_by_len: vec![0; usize::from(K::BITS) + 1],
            no_route_valued: 0,
            arrays: LookupArrays::new(),
            scratch: Vec::new(),
            path: Vec::new(),
        }
    }

    /// Builds a table from `(prefix, length, value)` in any order, much
    /// faster than inserting one by one. A prefix given twice keeps its last
    /// value. Fails on the first malformed prefix.
    ///
    /// ```
    /// use fibre_lpm::{LpmError, Poptrie};
    /// let t = Poptrie::<u32, u32>::build([(0x0a00_0000, 8, 1), (0, 0, 2)]).unwrap();
    /// assert_eq!((t.lookup(0x0a01_0101), t.lookup(0x0b00_0000)), (Some(1), Some(2)));
    /// assert_eq!(
    ///     Poptrie::<u32, u32>::build([(0x0a00_0001, 8, 1)]).unwrap_err(),
    ///     LpmError::HostBitsSet { len: 8 }
    /// );
    /// ```
    pub fn build<I: IntoIterator<Item = (K, u8, V)>>(prefixes: I) -> Result<Self, LpmError> {
        let mut all: Vec<Entry<K, V>> = Vec::new();
        for (prefix, len, value) in prefixes {
            check_prefix(prefix, len)?;
            all.push((prefix, len, value));
        }
        // Stable, so that among duplicates the last given stays last.
        all.sort_by_key(|&(k, l, _)| (k, l));
        all.dedup_by(|later, kept| {
            let same = (later.0, later.1) == (kept.0, kept.1);
            if same {
                kept.2 = later.2;
            }
            same
        });

        let mut table = Self::new();
        for &(_, len, value) in &all {
            table.count_by_len[usize::from(len)] += 1;
            if value == V::NO_ROUTE {
                table.no_route_valued += 1;
            }
        }

        table.arrays.ensure_dir();
        table.arrays.build_all(&all);
        table.rib = all.into_iter().map(|(k, l, v)| ((k, l), v)).collect();
        Ok(table)
    }

    /// Stores `value` for `prefix/len`; returns the value it replaced.
    ///
    /// ```
    /// let mut t = fibre_lpm::Poptrie::<u32, u16>::new();
    /// assert_eq!(t.insert(0x0a00_0000, 8, 1), Ok(None));
    /// assert_eq!(t.insert(0x0a00_0000, 8, 2), Ok(Some(1)));
    /// assert!(t.insert(0x0a00_0000, 33, 2).is_err());
    /// ```
    pub fn insert(&mut self, prefix: K, len: u8, value: V) -> Result<Option<V>, LpmError> {
        check_prefix(prefix, len)?;
        let old = self.rib.insert((prefix, len), value);
        match old {
            Some(old_value) if old_value == value => return Ok(old),
            Some(old_value) => {
                if old_value == V::NO_ROUTE {
                    self.no_route_valued -= 1;
                }
            }
            None => self.count_by_len[usize::from(len)] += 1,
        }
        if value == V::NO_ROUTE {
            self.no_route_valued += 1;
        }
        self.refresh(prefix, len, old, Some(value));
        Ok(old)
    }

    /// Removes `prefix/len`; returns its value if it was stored.
    ///
    /// ```
    /// let mut t = fibre_lpm::Poptrie::<u32, u16>::new();
    /// t.insert(0x0a00_0000, 8, 1).unwrap();
    /// assert_eq!(t.remove(0x0a00_0000, 8), Ok(Some(1)));
    /// assert_eq!(t.remove(0x0a00_0000, 8), Ok(None));
    /// assert_eq!(t.lookup(0x0a00_0001), None);
    /// ```
    pub fn remove(&mut self, prefix: K, len: u8) -> Result<Option<V>, LpmError> {
        check_prefix(prefix, len)?;
        let old = self.rib.remove(&(prefix, len));
        if let Some(old_value) = old {
            self.count_by_len[usize::from(len)] -= 1;
            if old_value == V::NO_ROUTE {
                self.no_route_valued -= 1;
            }
            self.refresh(prefix, len, old, None);
        }
        Ok(old)
    }

    /// The value stored for exactly `prefix/len`.
    ///
    /// ```
    /// let mut t = fibre_lpm::Poptrie::<u32, u16>::new();
    /// t.insert(0x0a00_0000, 8, 1).unwrap();
    /// assert_eq!((t.get(0x0a00_0000, 8), t.get(0x0a00_0000, 9)), (Some(1), None));
    /// ```
    pub fn get(&self, prefix: K, len: u8) -> Option<V> {
        self.rib.get(&(prefix, len)).copied()
    }

    /// The value of the longest prefix containing `addr`.
    ///
    /// ```
    /// let mut t = fibre_lpm::Poptrie::<u128, u32>::new();
    /// t.insert(0x2001_0db8 << 96, 32, 5).unwrap();
    /// assert_eq!(t.lookup((0x2001_0db8 << 96) | 1), Some(5));
    /// assert_eq!(t.lookup(1), None);
    /// ```
    #[inline]
    pub fn lookup(&self, addr: K) -> Option<V> {
        let leaf = self.arrays.lookup_leaf(addr);
        if leaf != V::NO_ROUTE {
            Some(leaf)
        } else {
            self.confirm_no_route(addr)
        }
    }

    /// Looks up every address of `addrs` into the same position of `out`,
    /// overlapping the memory accesses of a few dozen lookups at a time.
    ///
    /// ```
    /// let t = fibre_lpm::Poptrie::<u32, u32>::build([(0x0a00_0000, 8, 3)]).unwrap();
    /// let mut out = [None; 3];
    /// t.lookup_batch(&[0x0a00_0001, 0x0b00_0001, 0x0aff_ffff], &mut out);
    /// assert_eq!(out, [Some(3), None, Some(3)]);
    /// ```
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn lookup_batch(&self, addrs: &[K], out: &mut [Option<V>]) {
        assert_eq!(
            addrs.len(),
            out.len(),
            "lookup_batch: slices differ in length"
        );
        use crate::lookup::LANES;
        let mut leaves = [V::NO_ROUTE; LANES];
        let mut start = 0;
        while start < addrs.len() {
            let end = addrs.len().min(start + K::BATCH_LANES);
            let next = &addrs[end..addrs.len().min(end + K::BATCH_LANES)];
            let (a, o) = (&addrs[start..end], &mut out[start..end]);
            let leaves = &mut leaves[..a.len()];
            self.arrays.lookup_batch_leaves(a, leaves, next);
            for ((slot, &leaf), &addr) in o.iter_mut().zip(leaves.iter()).zip(a) {
                *slot = if leaf != V::NO_ROUTE {
                    Some(leaf)
                } else {
                    self.confirm_no_route(addr)
                };
            }
            start = end;
        }
    }

    /// The arrays said "no route": true unless some prefix holds the mark.
    #[inline(always)]
    fn confirm_no_route(&self, addr: K) -> Option<V> {
        if self.no_route_valued == 0 {
            None
        } else {
            self.lookup_in_rib(addr)
        }
    }

    /// The longest match from the RIB, for when a prefix holds `V::MAX`.
    #[cold]
    #[inline(never)]
    fn lookup_in_rib(&self, addr: K) -> Option<V> {
        self.matches(addr).next().map(|(_, _, v)| v)
    }

    /// Every stored prefix containing `addr`, longest first.
    ///
    /// ```
    /// let mut t = fibre_lpm::Poptrie::<u32, u16>::new();
    /// t.insert(0, 0, 1).unwrap();
    /// t.insert(0x0a00_0000, 8, 2).unwrap();
    /// let m: Vec<_> = t.matches(0x0a01_0101).collect();
    /// assert_eq!(m, vec![(0x0a00_0000, 8, 2), (0, 0, 1)]);
    /// ```
    pub fn matches(&self, addr: K) -> impl Iterator<Item = (K, u8, V)> + '_ {
        (0..=K::BITS).rev().filter_map(move |len| {
            if self.count_by_len[usize::from(len)] == 0 {
                return None;
            }
            let prefix = addr.and(K::prefix_mask(len));
            self.rib.get(&(prefix, len)).map(|&v| (prefix, len, v))
        })
    }

    /// Number of stored prefixes.
    pub fn len(&self) -> usize {
        self.rib.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.rib.is_empty()
    }

    /// Every stored prefix, ordered by (address, length).
    ///
    /// ```
    /// let t = fibre_lpm::Poptrie::<u32, u16>::build([(0x0a00_0000, 16, 2), (0x0a00_0000, 8, 1)]).unwrap();
    /// let all: Vec<_> = t.iter().collect();
    /// assert_eq!(all, vec![(0x0a00_0000, 8, 1), (0x0a00_0000, 16, 2)]);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (K, u8, V)> + '_ {
        self.rib.iter().map(|(&(k, l), &v)| (k, l, v))
    }

    /// Bytes of the structure that lookups read: the direct-pointing array
    /// and the node and leaf pools (including their free blocks).
    ///
    /// ```
    /// let t = fibre_lpm::Poptrie::<u32, u16>::new();
    /// assert_eq!(t.lookup_bytes(), 0); // nothing until the first prefix
    /// let t = fibre_lpm::Poptrie::<u32, u16>::build([(0, 0, 1)]).unwrap();
    /// assert_eq!(t.lookup_bytes(), 4 << 18); // just the direct-pointing array
    /// ```
    pub fn lookup_bytes(&self) -> usize {
        self.arrays.bytes()
    }

    /// Pool sizes, free space included, for memory reports.
    ///
    /// ```
    /// let t = fibre_lpm::Poptrie::<u32, u16>::build([(0x0a00_0000, 24, 1)]).unwrap();
    /// let s = t.stats();
    /// assert_eq!((s.direct_entries, s.free_node_slots), (1 << 18, 0));
    /// assert_eq!((s.node_slots, s.leaf_slots), (1, 2)); // one node, two leaf runs
    /// ```
    pub fn stats(&self) -> PoptrieStats {
        PoptrieStats {
            direct_entries: self.arrays.dir.len() + self.arrays.chunks.len(),
            node_slots: self.arrays.nodes.len(),
            free_node_slots: self.arrays.nodes.free_slots(),
            direct_chunks: self.arrays.dir.chunk_count() + self.arrays.chunks.chunk_count(),
            node_chunks: self.arrays.nodes.chunks().chunk_count()
                + self.arrays.node_default.chunk_count(),
            leaf_chunks: self.arrays.leaves.chunks().chunk_count(),
            leaf_slots: self.arrays.leaves.len(),
            free_leaf_slots: self.arrays.leaves.free_slots(),
        }
    }

    /// Bytes of lookup-array chunks this table shares with `other` (a clone
    /// of it, or a clone of a clone): what holding both costs less than two
    /// full copies. The RIB (shared too, node by node) is not counted.
    ///
    /// ```
    /// let mut t = fibre_lpm::Poptrie::<u32, u16>::build([(0x0a00_0000, 24, 1)]).unwrap();
    /// let published = t.clone();
    /// assert_eq!(t.shared_bytes_with(&published), t.chunk_bytes());
    /// t.insert(0x0b00_0000, 8, 2).unwrap(); // copies one chunk of the top array
    /// assert!(t.shared_bytes_with(&published) < t.chunk_bytes());
    /// assert!(t.exclusive_bytes() < t.chunk_bytes() / 10);
    /// ```
    pub fn shared_bytes_with(&self, other: &Self) -> usize {
        self.arrays.shared_bytes_with(&other.arrays)
    }

    /// Bytes of lookup arrays this table holds alone (chunk directories and
    /// the chunks no other clone shares): what dropping it would free.
    pub fn exclusive_bytes(&self) -> usize {
        self.arrays.exclusive_bytes()
    }

    /// Bytes of every lookup-array chunk, shared or not (the chunk
    /// directories excluded): what a fully private copy's chunks cost.
    pub fn chunk_bytes(&self) -> usize {
        self.arrays.chunk_bytes_total()
    }

    /// Brings the lookup arrays in line with the RIB after `prefix/len`
    /// changed there from `before` to `after` (its values, if stored).
    fn refresh(&mut self, prefix: K, len: u8, before: Option<V>, after: Option<V>) {
        self.arrays.ensure_dir();
        if u32::from(len) <= K::DIRECT_BITS {
            self.refresh_slots(prefix, len, before, after);
        } else {
            self.refresh_node(prefix, u32::from(len));
        }
        if chunk_bits::<K>() > 0 && u32::from(len) > K::TOP_BITS && after.is_none() {
            self.drop_chunk_if_unneeded(prefix.bits_at(0, K::TOP_BITS) as usize);
        }
    }

    /// A prefix of at most `DIRECT_BITS` changed. The units it covers (top
    /// slots if it is at most `TOP_BITS` long, else slots) that no longer
    /// prefix up to the unit's width shadows inherited its value (or, when
    /// absent, that of the next shorter prefix covering it); they inherit
    /// the new one now.
    fn refresh_slots(&mut self, prefix: K, len: u8, before: Option<V>, after: Option<V>) {
        let shorter = self
            .matches(prefix)
            .find(|&(_, l, _)| l < len)
            .map(|(_, _, v)| v);
        let old = before.or(shorter).unwrap_or(V::NO_ROUTE);
        let new = after.or(shorter).unwrap_or(V::NO_ROUTE);
        if old == new {
            return;
        }
        let width = if u32::from(len) <= K::TOP_BITS {
            K::TOP_BITS
        } else {
            K::DIRECT_BITS
        };
        let (first, shadowed) = self.shadowed_units(prefix, len, width);
        for (offset, shadowed) in shadowed.into_iter().enumerate() {
            if shadowed {
                continue;
            }
            if width == K::DIRECT_BITS {
                self.rebuild_slot(first + offset, new);
            } else {
                self.repaint_top(first + offset, new);
            }
        }
    }

    /// The first unit of `width` bits inside `prefix/len`, and for each unit
    /// from there whether a stored prefix longer than `len` and at most
    /// `width` long covers it.
    fn shadowed_units(&self, prefix: K, len: u8, width: u32) -> (usize, Vec<bool>) {
        let first = prefix.bits_at(0, width) as usize;
        let count = 1usize << (width - u32::from(len));
        let mut shadowed = vec![false; count];
        let end = K::from_u128(prefix.to_u128() | host_mask::<K>(u32::from(len)));
        for (&(key, l), _) in self.rib.range((prefix, len + 1)..=(end, width as u8)) {
            if u32::from(l) <= width {
                let from = key.bits_at(0, width) as usize - first;
                shadowed[from..from + (1usize << (width - u32::from(l)))].fill(true);
            }
        }
        (first, shadowed)
    }

    /// Top slot `top` now inherits `default` from prefixes of at most
    /// `TOP_BITS`: an inline leaf when nothing longer is stored below and the
    /// value fits, else its chunk's slots that nothing longer shadows.
    fn repaint_top(&mut self, top: usize, default: V) {
        if chunk_bits::<K>() == 0 {
            self.rebuild_slot(top, default);
            return;
        }
        let start = top_start::<K>(top);
        if !self.has_longer_below(start, K::TOP_BITS) {
            let entry = self.arrays.top_leaf(default);
            self.arrays.publish_top(top, entry);
            return;
        }
        let (first, shadowed) = self.shadowed_units(start, K::TOP_BITS as u8, K::DIRECT_BITS);
        for (offset, shadowed) in shadowed.into_iter().enumerate() {
            if !shadowed {
                self.rebuild_slot(first + offset, default);
            }
        }
    }

    /// After a prefix longer than `TOP_BITS` went: folds the chunk of top
    /// slot `top` back into one leaf if nothing longer than `TOP_BITS` is
    /// left below it (its entries then all hold that value).
    fn drop_chunk_if_unneeded(&mut self, top: usize) {
        let start = top_start::<K>(top);
        if !self.arrays.has_chunk(top) || self.has_longer_below(start, K::TOP_BITS) {
            return;
        }
        let default = self
            .matches(start)
            .find(|&(_, l, _)| u32::from(l) <= K::TOP_BITS)
            .map_or(V::NO_ROUTE, |(_, _, v)| v);
        let entry = self.arrays.top_leaf(default);
        self.arrays.publish_top(top, entry);
    }

    /// Whether the RIB holds a prefix longer than `offset` inside
    /// `start/offset`.
    fn has_longer_below(&self, start: K, offset: u32) -> bool {
        let end = K::from_u128(start.to_u128() | host_mask::<K>(offset));
        self.rib
            .range((start, offset as u8 + 1)..=(end, K::BITS))
            .next()
            .is_some()
    }

    /// Rebuilds one direct-pointing slot from the RIB, under `default`.
    fn rebuild_slot(&mut self, slot: usize, default: V) {
        let start = K::from_u128((slot as u128) << (u32::from(K::BITS) - K::DIRECT_BITS));
        self.collect_below(start, K::DIRECT_BITS);
        let entry = self.arrays.build_slot_entry(&self.scratch, default);
        self.arrays.publish_slot(slot, entry);
    }

    /// A prefix longer than `DIRECT_BITS` changed: rebuild the deepest node
    /// strictly containing it that still has prefixes below it.
    fn refresh_node(&mut self, prefix: K, len: u32) {
        let slot = prefix.bits_at(0, K::DIRECT_BITS) as usize;
        let mut path = std::mem::take(&mut self.path);
        self.arrays.path_to(slot, prefix, len, &mut path);
        let mut done = false;
        for &(index, offset, parent) in path.iter().rev() {
            self.collect_below(prefix.and(K::prefix_mask(offset as u8)), offset);
            if self.scratch.is_empty() {
                continue;
            }
            if parent == u32::MAX {
                let default = self.arrays.slot_default(slot);
                let entry = self.arrays.build_slot_entry(&self.scratch, default);
                self.arrays.publish_slot(slot, entry);
            } else {
                let default = self.arrays.node_default[index as usize];
                let node = self.arrays.build_node(&self.scratch, offset, default);
                self.arrays.publish_child(parent, index, node, default);
            }
            done = true;
            break;
        }
        self.path = path;
        if !done {
            let default = self.arrays.slot_default(slot);
            self.rebuild_slot(slot, default);
        }
    }

    /// Puts into `scratch` the stored prefixes inside `start/offset` that are
    /// longer than `offset`, in (address, length) order.
    fn collect_below(&mut self, start: K, offset: u32) {
        self.scratch.clear();
        let end = K::from_u128(start.to_u128() | host_mask::<K>(offset));
        let low = (start, offset as u8 + 1);
        let high = (end, K::BITS);
        self.scratch
            .extend(self.rib.range(low..=high).map(|(&(k, l), &v)| (k, l, v)));
    }
}
