//! A copy-on-write array whose directory is itself copy-on-write: see
//! [`TwoLevelChunks`].

use std::fmt;
use std::ops::Index;

use fibre_base::CachePadded;

use crate::chunks::{Chunk, CowChunks, OutOfBounds};
use crate::sync::Arc;

/// One leaf: `N` elements on cache lines of their own, shared by every
/// version that has not changed it.
type Leaf<T, const N: usize> = Arc<Chunk<T, N>>;

/// A vector in copy-on-write leaves of `N` elements whose directory is a
/// [`CowChunks`] of leaf pointers in groups of `M`: a persistent array two
/// levels deep (path copying two levels, after Driscoll et al., "Making
/// data structures persistent", JCSS 1989).
///
/// [`CowChunks`] makes a publication cost one reference-count increment
/// per chunk (the directory's copy; the counts live in the chunks'
/// allocations, a cache miss each, paid again when the version is
/// dropped) and a write cost one chunk. Small chunks make writes cheap and
/// publications dear: with 64-entry chunks a full IPv6 table's arena is
/// 3,846 chunks, and a publication of one route change cost more than the
/// route change. Here a publication copies the top directory only (one
/// pointer per group of `M` leaves), and the first write to a leaf after
/// a publication copies its group (`M` pointers) and the leaf (`N`
/// elements). So with `L` leaves a publication costs `L / M` and a write
/// `M + N`, where one level cost `L` and `N`.
///
/// Readers pay one more dependent load than [`CowChunks`]: the group's
/// pointer, then the leaf's (the groups are small and usually cached),
/// then the element. Nothing a reader does writes anything.
///
/// Slots past [`len`](Self::len) in the last leaf hold the `fill` value
/// given to [`new`](Self::new), and [`at`](Self::at) past the end returns
/// it: reads never panic.
///
/// ```
/// use fibre_rcu::TwoLevelChunks;
/// let mut a: TwoLevelChunks<u32, 4, 2> = TwoLevelChunks::new(0);
/// a.resize(32, 1); // 8 leaves in 4 groups
/// let published = a.clone(); // copies 4 group pointers
/// a.set(0, 2).unwrap(); // copies group 0 (2 pointers) and leaf 0 (4 elements)
/// assert_eq!((a[0], published[0], *a.at(1000)), (2, 1, 0));
/// assert_eq!(a.leaves_shared_with(&published), 7);
/// ```
pub struct TwoLevelChunks<T: Clone, const N: usize, const M: usize> {
    /// The leaves, `M` to a group; past the last leaf, `fill_leaf`.
    groups: CowChunks<Leaf<T, N>, M>,
    len: usize,
    fill: T,
}

impl<T: Clone, const N: usize, const M: usize> TwoLevelChunks<T, N, M> {
    const SHIFT: u32 = {
        assert!(
            N.is_power_of_two() && N > 0,
            "TwoLevelChunks' leaf size N must be a power of two, so that an index splits into \
             leaf and slot by a shift and a mask; if this fires, pick a power of two for N"
        );
        N.trailing_zeros()
    };

    /// An empty array whose unused slots hold `fill`.
    pub fn new(fill: T) -> Self {
        let _ = Self::SHIFT;
        Self {
            groups: CowChunks::new(Self::leaf_of(&fill)),
            len: 0,
            fill,
        }
    }

    fn leaf_of(value: &T) -> Leaf<T, N> {
        Arc::new(CachePadded::new(std::array::from_fn(|_| value.clone())))
    }

    /// Elements in the array.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array has no element.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The element at `index`, if any.
    #[inline]
    pub fn get(&self, index: usize) -> Option<&T> {
        if index >= self.len {
            return None;
        }
        Some(self.at(index))
    }

    /// The element at `index` for a reader's hot path: the top directory's
    /// entry, the group's, then the element. Never panics: past the length
    /// it reads the `fill` value.
    ///
    /// ```
    /// use fibre_rcu::TwoLevelChunks;
    /// let mut a: TwoLevelChunks<u32, 4, 4> = TwoLevelChunks::new(9);
    /// a.extend([1, 2, 3]);
    /// assert_eq!((*a.at(2), *a.at(3), *a.at(1000)), (3, 9, 9));
    /// ```
    #[inline(always)]
    pub fn at(&self, index: usize) -> &T {
        &self.groups.at(index >> Self::SHIFT)[index & (N - 1)]
    }

    /// Where element `index` lives, for a prefetch hint: never faults, and
    /// null past the last leaf. Costs the directory loads of [`at`](Self::at).
    #[inline(always)]
    pub fn slot_ptr(&self, index: usize) -> *const T {
        self.groups
            .get(index >> Self::SHIFT)
            .map_or(std::ptr::null(), |leaf| {
                leaf.as_ptr().wrapping_add(index & (N - 1))
            })
    }

    /// The element at `index`, mutably: its group and its leaf are copied
    /// first if another copy of the array (a published version) holds them.
    ///
    /// # Errors
    /// [`OutOfBounds`] past the length.
    pub fn get_mut(&mut self, index: usize) -> Result<&mut T, OutOfBounds> {
        if index >= self.len {
            return Err(OutOfBounds {
                index,
                len: self.len,
            });
        }
        Ok(&mut self.leaf_mut(index >> Self::SHIFT)[index & (N - 1)])
    }

    /// Stores `value` at `index` (copying what is shared); returns the value
    /// it replaced.
    ///
    /// # Errors
    /// [`OutOfBounds`] past the length; nothing changes then.
    pub fn set(&mut self, index: usize, value: T) -> Result<T, OutOfBounds> {
        self.get_mut(index)
            .map(|slot| std::mem::replace(slot, value))
    }

    /// Appends `value`, starting a new leaf when the last one is full.
    pub fn push(&mut self, value: T) {
        let slot = self.len & (N - 1);
        if slot == 0 {
            let fresh = Self::leaf_of(&self.fill);
            self.groups.push(fresh);
        }
        let last = self.groups.len() - 1;
        self.leaf_mut(last)[slot] = value;
        self.len += 1;
    }

    /// Grows to `len` with copies of `value`, or shrinks to `len`. Whole new
    /// leaves share one allocation (copied on their first write), so
    /// growing by a million costs one leaf and the pointers.
    pub fn resize(&mut self, len: usize, value: T) {
        if len < self.len {
            let leaves = len.div_ceil(N);
            let fill_leaf = Self::leaf_of(&self.fill);
            self.groups.resize(leaves, fill_leaf);
            let keep = len & (N - 1);
            if keep != 0 {
                let fill = self.fill.clone();
                self.leaf_mut(leaves - 1)[keep..].fill(fill);
            }
            self.len = len;
            return;
        }
        while self.len < len && self.len & (N - 1) != 0 {
            self.push(value.clone());
        }
        let whole = (len - self.len) / N;
        if whole > 0 {
            let shared = Self::leaf_of(&value);
            self.groups.resize(self.groups.len() + whole, shared);
            self.len += whole * N;
        }
        while self.len < len {
            self.push(value.clone());
        }
    }

    /// The elements in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.groups
            .iter()
            .flat_map(|leaf| leaf.iter())
            .take(self.len)
    }

    /// The elements in order, mutably: every group and leaf another copy
    /// shares is copied first (a bulk change touches all of them anyway).
    ///
    /// ```
    /// use fibre_rcu::TwoLevelChunks;
    /// let mut a: TwoLevelChunks<u32, 2, 2> = TwoLevelChunks::new(0);
    /// a.extend([1, 2, 3, 4, 5]);
    /// let b = a.clone();
    /// a.iter_mut().for_each(|x| *x *= 10);
    /// assert_eq!(a.iter().copied().collect::<Vec<_>>(), [10, 20, 30, 40, 50]);
    /// assert_eq!(b.iter().copied().collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
    /// ```
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> + '_ {
        let len = self.len;
        self.groups
            .iter_mut()
            .flat_map(|leaf| unique_leaf(leaf).iter_mut())
            .take(len)
    }

    /// How many leaves (at the same positions) this array shares with
    /// `other`: not copied since they were cloned apart.
    pub fn leaves_shared_with(&self, other: &Self) -> usize {
        self.groups
            .iter()
            .zip(other.groups.iter())
            .filter(|(a, b)| Arc::ptr_eq(a, b))
            .count()
    }

    /// Bytes of the leaves and groups this array shares with `other` (at
    /// the same positions): what keeping both costs less than two copies.
    pub fn shared_bytes_with(&self, other: &Self) -> usize {
        self.leaves_shared_with(other) * Self::leaf_bytes()
            + self.groups.shared_bytes_with(&other.groups)
    }

    /// Bytes this copy alone holds: its directory, the groups no other copy
    /// shares, and the leaves only those groups hold (what freeing this
    /// copy would give back). Not counted: heap memory the elements own.
    pub fn exclusive_bytes(&self) -> usize {
        let leaves: usize = self
            .groups
            .chunk_refs()
            .filter(|(_, unique)| *unique)
            .map(|(group, _)| group.iter().filter(|l| Arc::strong_count(l) == 1).count())
            .sum();
        self.groups.exclusive_bytes() + leaves * Self::leaf_bytes()
    }

    /// Bytes of the whole array as if nothing were shared.
    pub fn total_bytes(&self) -> usize {
        self.groups.total_bytes() + self.groups.len() * Self::leaf_bytes()
    }

    /// Bytes of one leaf's allocation (elements and the `Arc`'s counts).
    pub const fn leaf_bytes() -> usize {
        CowChunks::<T, N>::chunk_bytes()
    }

    /// Leaf `leaf`, made unique to this copy (its group first).
    fn leaf_mut(&mut self, leaf: usize) -> &mut [T; N] {
        match self.groups.get_mut(leaf) {
            Ok(shared) => unique_leaf(shared),
            Err(_) => unreachable!("callers pass a leaf below the group array's length"),
        }
    }
}

/// `leaf`, copied first if another group holds it.
fn unique_leaf<T: Clone, const N: usize>(leaf: &mut Leaf<T, N>) -> &mut [T; N] {
    if Arc::get_mut(leaf).is_none() {
        // A published version holds it: copy, once per publication.
        *leaf = Arc::new(CachePadded::new((***leaf).clone()));
    }
    match Arc::get_mut(leaf) {
        Some(unique) => unique,
        None => unreachable!("a leaf just made is held once"),
    }
}

impl<T: Clone, const N: usize, const M: usize> Clone for TwoLevelChunks<T, N, M> {
    /// Shares every group: copies the top directory only.
    fn clone(&self) -> Self {
        Self {
            groups: self.groups.clone(),
            len: self.len,
            fill: self.fill.clone(),
        }
    }
}

impl<T: Clone, const N: usize, const M: usize> Index<usize> for TwoLevelChunks<T, N, M> {
    type Output = T;

    /// # Panics
    /// Past the length, like a slice.
    #[inline]
    fn index(&self, index: usize) -> &T {
        match self.get(index) {
            Some(value) => value,
            None => panic!(
                "index {index} is out of bounds for a length of {}",
                self.len
            ),
        }
    }
}

impl<T: Clone, const N: usize, const M: usize> Extend<T> for TwoLevelChunks<T, N, M> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, values: I) {
        for value in values {
            self.push(value);
        }
    }
}

impl<T: Clone + PartialEq, const N: usize, const M: usize> PartialEq for TwoLevelChunks<T, N, M> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<T: Clone + fmt::Debug, const N: usize, const M: usize> fmt::Debug for TwoLevelChunks<T, N, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_write_copies_its_group_and_leaf_once_per_clone() {
        let mut a: TwoLevelChunks<u32, 4, 4> = TwoLevelChunks::new(0);
        a.extend(0..64); // 16 leaves, 4 groups
        let published = a.clone();
        a.set(1, 100).unwrap();
        let group = a.groups.chunk(0).as_ptr();
        let leaf = Arc::as_ptr(&a.groups.chunk(0)[0]);
        a.set(2, 101).unwrap();
        a.set(5, 102).unwrap(); // leaf 1, same group
        assert_eq!(a.groups.chunk(0).as_ptr(), group, "group copied twice");
        assert_eq!(
            Arc::as_ptr(&a.groups.chunk(0)[0]),
            leaf,
            "leaf copied twice"
        );
        assert_eq!(a.leaves_shared_with(&published), 14);
        assert_eq!(a.groups.chunks_shared_with(&published.groups), 3);
        assert_eq!(
            published.iter().copied().collect::<Vec<_>>(),
            (0..64).collect::<Vec<_>>()
        );
        assert_eq!((a[1], a[2], a[5], a[6]), (100, 101, 102, 6));
    }

    #[test]
    fn exclusive_bytes_count_what_only_this_copy_holds() {
        let mut a: TwoLevelChunks<u64, 8, 4> = TwoLevelChunks::new(0);
        a.resize(8 * 4 * 3, 1); // 12 leaves sharing one allocation, 3 groups
        let b = a.clone();
        let (before, before_b) = (a.exclusive_bytes(), b.exclusive_bytes());
        a.set(0, 2).unwrap();
        // Group 0 and leaf 0 are a's own now.
        let group = CowChunks::<Leaf<u64, 8>, 4>::chunk_bytes();
        let leaf = TwoLevelChunks::<u64, 8, 4>::leaf_bytes();
        assert_eq!(a.exclusive_bytes(), before + group + leaf);
        // b's group 0 is its own too now (a copied away from it); its leaves are shared.
        assert_eq!(b.exclusive_bytes(), before_b + group);
    }

    #[test]
    fn resize_shares_whole_new_leaves_and_keeps_fill_past_the_end() {
        let mut a: TwoLevelChunks<u32, 4, 2> = TwoLevelChunks::new(7);
        a.resize(2, 1);
        a.resize(19, 3);
        assert_eq!(
            a.iter().copied().collect::<Vec<_>>(),
            [1, 1, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3]
        );
        assert_eq!((*a.at(19), *a.at(20), *a.at(1 << 20)), (7, 7, 7));
        a.set(8, 9).unwrap();
        assert_eq!(
            (a[4], a[8], a[12]),
            (3, 9, 3),
            "a shared leaf was written through"
        );
        a.resize(6, 0);
        assert_eq!(a.iter().copied().collect::<Vec<_>>(), [1, 1, 3, 3, 3, 3]);
        assert_eq!((*a.at(6), *a.at(7), *a.at(8)), (7, 7, 7));
        assert_eq!(a.get(6), None);
    }
}
