//! An array in copy-on-write chunks, published by RCU one chunk at a time:
//! see [`CowChunks`].

use std::fmt;
use std::ops::Index;

use fibre_base::CachePadded;

use crate::sync::Arc;

/// One chunk: `N` elements on cache lines of their own.
pub(crate) type Chunk<T, const N: usize> = CachePadded<[T; N]>;

// `Arc`'s allocation is its two counts, then the value at the value's
// alignment: a chunk aligned to a whole line keeps the counts (which the
// writer increments at every publication) off the lines readers read.
const _: () = assert!(
    std::mem::align_of::<Chunk<u8, 1>>() >= fibre_base::CACHE_LINE
        && 2 * std::mem::size_of::<usize>() <= fibre_base::CACHE_LINE,
    "a CowChunks chunk must be aligned to a cache line so that the Arc's counts sit on a \
     line of their own; if this fires, wrap the chunk in CachePadded again"
);

/// A vector stored as copy-on-write chunks: the building block for
/// publishing one large array by RCU at the granularity of what changed.
///
/// Left-right (two full copies, see `fibre_fib::shared`) and whole-value
/// copy-on-write ([`RcuCell::update`](crate::RcuCell::update)) both pay for
/// the whole array at each publication: left-right in memory (two copies)
/// and in cold caches (readers move to the other copy), copy-on-write in
/// time (a 16 MB FIB arena copied per batch). [`CowChunks`] splits the
/// array into fixed chunks of `N` elements, each behind an [`Arc`]:
///
/// * a version readers see is a [`CowChunks`] published in an
///   [`RcuCell`](crate::RcuCell); cloning one (what the writer does once
///   per publication) copies only the directory of chunk pointers, one
///   pointer and one reference-count increment per chunk;
/// * the writer mutates its working copy through
///   [`get_mut`](CowChunks::get_mut) and friends: a chunk no published
///   version holds (reference count 1, i.e. made since the last
///   publication) is changed in place; a shared one is copied first, once
///   per publication, so each batch costs one chunk copy per chunk it
///   touches (the persistent arrays of Driscoll et al., "Making data
///   structures persistent", JCSS 1989, with path copying one level deep);
/// * a replaced chunk stays alive as long as a version that holds it does:
///   the retired version is freed after its grace period by the cell, and
///   its drop releases the chunks only it held. No reader ever touches a
///   reference count: readers borrow the version through their read
///   section and index into it.
///
/// Memory: one copy of the array, plus per version still waiting for its
/// grace period the chunks the next batch replaced and that version's
/// directory ([`CowChunks::exclusive_bytes`] counts what one version alone
/// holds). With the cell's [`max_pending`](crate::CellBuilder::max_pending)
/// bound `P` and at most `C` chunks changed per batch, the memory beyond
/// one copy is at most `P * (C * chunk_bytes + directory_bytes)`: a stalled
/// reader makes the writer wait or refuse ([`RcuCell::try_publish`]) rather
/// than grow it. `tests/cow_chunks.rs` checks that bound with a writer at
/// full speed and with a stalled reader.
///
/// Layout: each chunk's elements start on a cache line ([`CachePadded`]) of
/// their own, away from the `Arc`'s counts that the writer increments at
/// each publication, so those increments never invalidate a line readers
/// read. A lookup costs one more dependent load than a flat `Vec` (the
/// directory entry, usually cached: 8 bytes per chunk).
///
/// Measured by `examples/cow_chunks_cost.rs` (262,144 entries of 64 bytes,
/// 16 MiB, in chunks of 64; release build, 2-core VM with a load average
/// of 2-4.5 from other builds, three runs, 2026-12-02):
///
/// | | figure |
/// |---|---|
/// | publication (directory clone, 4,096 chunks) | 23-25 us (a whole `Vec` copy: 1.2-1.3 ms, 51-53x; 5.3 ms in a fourth, busier run) |
/// | a batch of 1 / 100 / 1,024 random writes after a publication | 0.6-0.7 / 56-60 / 397-490 us |
/// | the same with chunks of 256 (16 KiB, 1,024 chunks; the fourth run) | publication 5.3 us; writes 2.0 / 140 / 970 us |
/// | one thread's random reads, against a flat `Vec` | 0.79x, 1.18x, 0.96x (noise dominates) |
/// | 2 readers beside a writer asked for 1,000 single-write batches/s | one copy: all of them; left-right: 47-76 a second (each waits for a grace period) |
/// | 2 readers beside a full-speed writer, batches of 100 | one copy 1,058-1,873 batches/s; left-right 52-180 |
///
/// The readers' rates in those runs (0.5-1.26x their writer-free ones for
/// both schemes) moved with the other builds' load more than with the
/// scheme, so they are not claimed here. The publication cost grows with
/// the chunk count (about 5-6 ns a chunk, paid again when the version is
/// dropped), a write with the chunk's bytes: pick `N` for the write rate
/// (chunks of 256 entries quarter the publication and double a single
/// write), or use [`TwoLevelChunks`](crate::TwoLevelChunks), whose
/// copy-on-write directory makes a publication grow with the chunk count
/// over the group size, for one more (cached) load per read.
///
/// [`RcuCell::try_publish`]: crate::RcuCell::try_publish
///
/// ```
/// use fibre_rcu::{CowChunks, Domain, RcuCell};
/// let domain = Domain::new();
/// let mut work: CowChunks<u32, 64> = CowChunks::new(0);
/// work.resize(1000, 7);
/// let cell = RcuCell::new(&domain, work.clone());
/// let mut reader = domain.register();
///
/// // Writer: change one element, publish. Only its chunk is copied.
/// *work.get_mut(999).unwrap() = 8;
/// assert_eq!(work.chunks_shared_with(cell.read(&reader.read())), 15);
/// cell.publish(work.clone());
///
/// let seen = cell.read(&reader.read())[999];
/// reader.quiescent();
/// assert_eq!(seen, 8);
/// ```
///
/// # Layout of the array
///
/// A growable array of `T` in copy-on-write chunks of `N` elements (a power
/// of two); cloning it shares every chunk.
///
/// Slots past [`len`](CowChunks::len) in the last chunk hold the `fill`
/// value given to [`new`](CowChunks::new) (so a chunk is always whole).
///
/// ```
/// use fibre_rcu::CowChunks;
/// let mut a: CowChunks<u64, 4> = CowChunks::new(0);
/// a.extend([1, 2, 3, 4, 5]);
/// let b = a.clone(); // shares both chunks
/// a.set(0, 10).unwrap(); // copies the first chunk only
/// assert_eq!((a[0], b[0]), (10, 1));
/// assert_eq!(a.chunks_shared_with(&b), 1);
/// ```
pub struct CowChunks<T: Clone, const N: usize> {
    chunks: Vec<Arc<Chunk<T, N>>>,
    len: usize,
    fill: T,
}

/// [`CowChunks::set`] or [`CowChunks::get_mut`] was given an index at or
/// past the length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("index {index} is out of bounds for a length of {len}")]
pub struct OutOfBounds {
    /// The index asked for.
    pub index: usize,
    /// The length at the time.
    pub len: usize,
}

impl<T: Clone, const N: usize> CowChunks<T, N> {
    const SHIFT: u32 = {
        assert!(
            N.is_power_of_two() && N > 0,
            "CowChunks' chunk size N must be a power of two, so that an index splits into \
             chunk and slot by a shift and a mask; if this fires, pick a power of two for N \
             (16, 64, 256...)"
        );
        N.trailing_zeros()
    };

    /// An empty array whose unused slots hold `fill`.
    pub fn new(fill: T) -> Self {
        let _ = Self::SHIFT;
        Self {
            chunks: Vec::new(),
            len: 0,
            fill,
        }
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

    /// The element at `index`, if any. Two dependent loads: the chunk's
    /// pointer in the directory, then the element.
    #[inline]
    pub fn get(&self, index: usize) -> Option<&T> {
        if index >= self.len {
            return None;
        }
        let chunk = self.chunks.get(index >> Self::SHIFT)?;
        chunk.get(index & (N - 1))
    }

    /// The element at `index`, for a reader's hot path: one load of the
    /// chunk's pointer from the directory (usually cached), then the
    /// element. Never panics: an index past [`len`](Self::len) reads the
    /// `fill` value (inside the last chunk its slot holds it; past the last
    /// chunk the array's own `fill` is returned). The slot is masked into
    /// the chunk, so the only check is the directory's, and its miss path
    /// is a value rather than a panic: with a panic path the LPM's single
    /// lookups ran at 0.52x of a flat `Vec`, with this one at 0.92x
    /// (`fibre-lpm/examples/ris_speed.rs`, IPv4).
    ///
    /// ```
    /// use fibre_rcu::CowChunks;
    /// let mut a: CowChunks<u32, 4> = CowChunks::new(9);
    /// a.extend([1, 2, 3]);
    /// assert_eq!((*a.at(2), *a.at(3), *a.at(1000)), (3, 9, 9));
    /// ```
    #[inline(always)]
    pub fn at(&self, index: usize) -> &T {
        match self.chunks.get(index >> Self::SHIFT) {
            Some(chunk) => &chunk[index & (N - 1)],
            None => &self.fill,
        }
    }

    /// Where element `index` lives, for a prefetch hint: never faults, and
    /// null past the last chunk. Costs the directory load of [`at`](Self::at).
    #[inline(always)]
    pub fn slot_ptr(&self, index: usize) -> *const T {
        self.chunks
            .get(index >> Self::SHIFT)
            .map_or(std::ptr::null(), |chunk| {
                chunk.as_ptr().wrapping_add(index & (N - 1))
            })
    }

    /// Chunk `chunk` whole (elements past the length hold `fill`).
    ///
    /// # Panics
    /// Past the last chunk.
    #[inline(always)]
    pub fn chunk(&self, chunk: usize) -> &[T; N] {
        &self.chunks[chunk]
    }

    /// Elements `start..start + len`, which must lie inside one chunk (the
    /// layout the LPM's block pools keep), as one slice.
    ///
    /// # Panics
    /// If the range crosses a chunk boundary or passes the last chunk.
    #[inline(always)]
    pub fn run(&self, start: usize, len: usize) -> &[T] {
        let slot = start & (N - 1);
        &self.chunks[start >> Self::SHIFT][slot..slot + len]
    }

    /// [`run`](Self::run), mutably: the chunk is copied first if shared.
    ///
    /// # Panics
    /// If the range crosses a chunk boundary or passes the last chunk.
    pub fn run_mut(&mut self, start: usize, len: usize) -> &mut [T] {
        let slot = start & (N - 1);
        &mut self.chunk_mut(start >> Self::SHIFT)[slot..slot + len]
    }

    /// The element at `index`, mutably: its chunk is copied first if any
    /// other copy of the array (a published version) still holds it.
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
        let chunk = self.chunk_mut(index >> Self::SHIFT);
        Ok(&mut chunk[index & (N - 1)])
    }

    /// Stores `value` at `index` (copying its chunk if shared); returns the
    /// value it replaced.
    ///
    /// # Errors
    /// [`OutOfBounds`] past the length; nothing changes then.
    pub fn set(&mut self, index: usize, value: T) -> Result<T, OutOfBounds> {
        self.get_mut(index)
            .map(|slot| std::mem::replace(slot, value))
    }

    /// Appends `value`, starting a new chunk when the last one is full.
    pub fn push(&mut self, value: T) {
        let slot = self.len & (N - 1);
        if slot == 0 {
            let fill = &self.fill;
            self.chunks
                .push(Arc::new(CachePadded::new(std::array::from_fn(|_| {
                    fill.clone()
                }))));
        }
        let last = self.chunks.len() - 1;
        self.chunk_mut(last)[slot] = value;
        self.len += 1;
    }

    /// Removes and returns the last element (its slot goes back to `fill`;
    /// an emptied chunk is dropped from this copy, and not copied first if
    /// a published version shares it).
    pub fn pop(&mut self) -> Option<T> {
        let index = self.len.checked_sub(1)?;
        let slot = index & (N - 1);
        self.len = index;
        if slot == 0 {
            let mut chunk = self.chunks.pop()?;
            return Some(match get_mut(&mut chunk) {
                Some(unique) => std::mem::replace(&mut unique[0], self.fill.clone()),
                None => chunk[0].clone(),
            });
        }
        let fill = self.fill.clone();
        let last = self.chunks.len() - 1;
        Some(std::mem::replace(&mut self.chunk_mut(last)[slot], fill))
    }

    /// Grows to `len` with copies of `value`, or shrinks to `len`, a whole
    /// chunk at a time: chunks wholly past `len` are dropped (never copied,
    /// even when shared), new ones are made whole, and only a partly kept
    /// or partly filled last chunk is written slot by slot.
    pub fn resize(&mut self, len: usize, value: T) {
        if len < self.len {
            self.chunks.truncate(len.div_ceil(N));
            let keep = len & (N - 1);
            if keep != 0 {
                let end = (self.len - (len - keep)).min(N);
                let fill = self.fill.clone();
                let last = self.chunks.len() - 1;
                self.chunk_mut(last)[keep..end].fill(fill);
            }
            self.len = len;
            return;
        }
        while self.len < len && self.len & (N - 1) != 0 {
            self.push(value.clone());
        }
        while len - self.len >= N {
            self.chunks
                .push(Arc::new(CachePadded::new(std::array::from_fn(|_| {
                    value.clone()
                }))));
            self.len += N;
        }
        while self.len < len {
            self.push(value.clone());
        }
    }

    /// The elements in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.chunks
            .iter()
            .flat_map(|chunk| chunk.iter())
            .take(self.len)
    }

    /// The elements in order, mutably: every chunk another copy shares is
    /// copied first (a bulk change touches all of them anyway).
    ///
    /// ```
    /// use fibre_rcu::CowChunks;
    /// let mut a: CowChunks<u32, 4> = CowChunks::new(0);
    /// a.extend([1, 2, 3, 4, 5]);
    /// let b = a.clone();
    /// a.iter_mut().for_each(|x| *x *= 10);
    /// assert_eq!(a.iter().copied().collect::<Vec<_>>(), [10, 20, 30, 40, 50]);
    /// assert_eq!(b.iter().copied().collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
    /// ```
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> + '_ {
        let len = self.len;
        for chunk in 0..self.chunks.len() {
            self.chunk_mut(chunk);
        }
        self.chunks
            .iter_mut()
            .flat_map(|chunk| {
                get_mut(chunk)
                    .expect("chunk_mut just made every chunk this copy's own")
                    .iter_mut()
            })
            .take(len)
    }

    /// How many chunks (at the same positions) this array shares with
    /// `other`, i.e. were not copied since they were cloned apart.
    pub fn chunks_shared_with(&self, other: &Self) -> usize {
        self.chunks
            .iter()
            .zip(&other.chunks)
            .filter(|(a, b)| Arc::ptr_eq(a, b))
            .count()
    }

    /// Bytes of the chunks this array shares with `other` (at the same
    /// positions): what keeping both costs less than two full copies.
    ///
    /// ```
    /// use fibre_rcu::CowChunks;
    /// let mut a: CowChunks<u64, 8> = CowChunks::new(0);
    /// a.resize(32, 1);
    /// let b = a.clone();
    /// a.set(0, 2).unwrap();
    /// assert_eq!(a.shared_bytes_with(&b), 3 * CowChunks::<u64, 8>::chunk_bytes());
    /// ```
    pub fn shared_bytes_with(&self, other: &Self) -> usize {
        self.chunks_shared_with(other) * Self::chunk_bytes()
    }

    /// Chunks in this copy.
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Bytes of one chunk's allocation (elements and the `Arc`'s counts,
    /// padded to a cache line).
    pub const fn chunk_bytes() -> usize {
        // ArcInner: two counts, then the chunk at its (cache-line) alignment.
        std::mem::size_of::<Chunk<T, N>>() + std::mem::align_of::<Chunk<T, N>>()
    }

    /// Bytes this copy alone holds: its directory and the chunks no other
    /// copy shares (what freeing this copy would give back). Not counted:
    /// heap memory the elements themselves own.
    pub fn exclusive_bytes(&self) -> usize {
        let unique = self
            .chunks
            .iter()
            .filter(|chunk| Arc::strong_count(chunk) == 1)
            .count();
        self.directory_bytes() + unique * Self::chunk_bytes()
    }

    /// Every chunk, with whether this copy alone holds it.
    pub(crate) fn chunk_refs(&self) -> impl Iterator<Item = (&[T; N], bool)> + '_ {
        self.chunks
            .iter()
            .map(|chunk| (&***chunk, Arc::strong_count(chunk) == 1))
    }

    /// Bytes of the whole array as if nothing were shared: directory and
    /// every chunk.
    pub fn total_bytes(&self) -> usize {
        self.directory_bytes() + self.chunks.len() * Self::chunk_bytes()
    }

    fn directory_bytes(&self) -> usize {
        self.chunks.capacity() * std::mem::size_of::<Arc<Chunk<T, N>>>()
    }

    /// Chunk `chunk`, made unique to this copy first (copied if shared).
    fn chunk_mut(&mut self, chunk: usize) -> &mut [T; N] {
        let shared = &mut self.chunks[chunk];
        if get_mut(shared).is_none() {
            // Someone else (a published version) holds it: copy, once.
            *shared = Arc::new(CachePadded::new((***shared).clone()));
        }
        match get_mut(shared) {
            Some(unique) => unique,
            None => unreachable!("a chunk just made is held once"),
        }
    }
}

/// `Arc::get_mut` for std's and loom's `Arc` alike.
fn get_mut<T>(arc: &mut Arc<T>) -> Option<&mut T> {
    Arc::get_mut(arc)
}

impl<T: Clone, const N: usize> Clone for CowChunks<T, N> {
    /// Shares every chunk: copies the directory only.
    fn clone(&self) -> Self {
        Self {
            chunks: self.chunks.clone(),
            len: self.len,
            fill: self.fill.clone(),
        }
    }
}

impl<T: Clone, const N: usize> Index<usize> for CowChunks<T, N> {
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

impl<T: Clone, const N: usize> Extend<T> for CowChunks<T, N> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, values: I) {
        for value in values {
            self.push(value);
        }
    }
}

impl<T: Clone + PartialEq, const N: usize> PartialEq for CowChunks<T, N> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<T: Clone + fmt::Debug, const N: usize> fmt::Debug for CowChunks<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn chunk_data_starts_on_its_own_cache_line() {
        let mut a: CowChunks<u8, 16> = CowChunks::new(0);
        a.push(1);
        a.push(2);
        let data = a.chunks[0].as_ptr() as usize;
        assert_eq!(data % fibre_base::CACHE_LINE, 0);
        assert_eq!(&a[0] as *const u8 as usize, data);
    }

    #[test]
    fn iter_mut_copies_shared_chunks_and_leaves_the_clone_alone() {
        let mut a: CowChunks<u32, 4> = CowChunks::new(0);
        a.extend(0..10);
        let b = a.clone();
        for x in a.iter_mut() {
            *x += 100;
        }
        assert_eq!(
            a.iter().copied().collect::<Vec<_>>(),
            (100..110).collect::<Vec<_>>()
        );
        assert_eq!(
            b.iter().copied().collect::<Vec<_>>(),
            (0..10).collect::<Vec<_>>()
        );
        assert_eq!(a.chunks_shared_with(&b), 0);
        // Slots past the length keep the fill value.
        assert_eq!(*a.at(10), 0);
        // Unshared now: a second pass copies nothing.
        let before: Vec<*const u32> = (0..3).map(|c| a.chunk(c).as_ptr()).collect();
        a.iter_mut().for_each(|x| *x += 1);
        let after: Vec<*const u32> = (0..3).map(|c| a.chunk(c).as_ptr()).collect();
        assert_eq!(before, after);
    }

    #[test]
    fn a_write_copies_only_its_chunk_once_per_clone() {
        let mut a: CowChunks<u32, 8> = CowChunks::new(0);
        a.extend(0..64);
        let published = a.clone();
        a.set(3, 100).unwrap();
        a.set(5, 101).unwrap();
        let first = Arc::as_ptr(&a.chunks[0]);
        a.set(7, 102).unwrap();
        assert_eq!(Arc::as_ptr(&a.chunks[0]), first, "copied twice");
        assert_eq!(a.chunks_shared_with(&published), 7);
        assert_eq!(
            published.iter().copied().collect::<Vec<_>>(),
            (0..64).collect::<Vec<_>>()
        );
        assert_eq!((a[3], a[5], a[7], a[8]), (100, 101, 102, 8));
    }

    #[test]
    fn out_of_bounds_is_an_error_and_changes_nothing() {
        let mut a: CowChunks<u32, 4> = CowChunks::new(9);
        a.extend([1, 2, 3]);
        assert_eq!(a.set(3, 5), Err(OutOfBounds { index: 3, len: 3 }));
        assert_eq!(a.get(3), None);
        assert_eq!(a.len(), 3);
        assert_eq!(
            OutOfBounds { index: 3, len: 3 }.to_string(),
            "index 3 is out of bounds for a length of 3"
        );
    }

    #[test]
    fn popping_a_shared_chunk_empty_does_not_copy_it() {
        let mut a: CowChunks<u32, 4> = CowChunks::new(0);
        a.extend(1..=5);
        let published = a.clone();
        assert_eq!(a.pop(), Some(5));
        assert_eq!((a.chunk_count(), a.chunks_shared_with(&published)), (1, 1));
        assert_eq!(
            published.iter().copied().collect::<Vec<_>>(),
            [1, 2, 3, 4, 5]
        );
        assert_eq!(a.pop(), Some(4));
        assert_eq!(a.chunks_shared_with(&published), 0, "a partial pop copies");
    }

    #[test]
    fn pop_refills_and_drops_emptied_chunks() {
        let mut a: CowChunks<u32, 4> = CowChunks::new(0);
        a.extend(1..=5);
        assert_eq!(a.chunk_count(), 2);
        assert_eq!(a.pop(), Some(5));
        assert_eq!(a.chunk_count(), 1);
        a.push(6);
        assert_eq!(a[4], 6);
        a.resize(2, 0);
        assert_eq!(a.iter().copied().collect::<Vec<_>>(), [1, 2]);
        a.resize(4, 0);
        assert_eq!(a.iter().copied().collect::<Vec<_>>(), [1, 2, 0, 0]);
    }

    #[test]
    fn exclusive_bytes_count_what_only_one_copy_holds() {
        let mut a: CowChunks<u64, 16> = CowChunks::new(0);
        a.resize(160, 1);
        let b = a.clone();
        let directory = b.total_bytes() - 10 * CowChunks::<u64, 16>::chunk_bytes();
        assert_eq!(b.exclusive_bytes(), directory);
        a.set(0, 2).unwrap();
        a.set(20, 2).unwrap();
        assert_eq!(
            b.exclusive_bytes(),
            directory + 2 * CowChunks::<u64, 16>::chunk_bytes()
        );
        assert!(CowChunks::<u64, 16>::chunk_bytes() >= 128 + 16);
    }
}
