//! Bytes allocated by a piece of code, counted by a wrapping global allocator.
//!
//! Peer crates do not say how much memory their tables take in a comparable
//! way, so the lookup experiment builds each table inside [`measure`] and
//! reports the heap bytes still live when the build returns: everything the
//! table owns (nodes, values, the crate's own bookkeeping), minus what was
//! freed again. Only the thread that opened the window is counted, so other
//! threads allocating meanwhile do not disturb the figure (and a build that
//! allocates on helper threads would be undercounted; none of ours does).
//!
//! Counting happens only when a binary installs the allocator:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOCATOR: fibre_bench::alloc_count::CountingAllocator =
//!     fibre_bench::alloc_count::CountingAllocator;
//! ```
//!
//! Outside a [`measure`] window it costs one relaxed load per allocation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};
use std::sync::Mutex;

/// The system allocator, counting live bytes while a [`measure`] window is open.
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingAllocator;

/// Set by the first allocation that goes through [`CountingAllocator`].
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// True while a [`measure`] window is open on some thread: spares the
/// thread-local look-up otherwise.
static COUNTING: AtomicBool = AtomicBool::new(false);
/// Bytes allocated minus bytes freed while counting.
static NET_BYTES: AtomicIsize = AtomicIsize::new(0);
/// One window at a time.
static WINDOW: Mutex<()> = Mutex::new(());

thread_local! {
    /// True on the thread whose [`measure`] window is open. A `const`
    /// initialised `Cell<bool>` needs no allocation and no destructor, so
    /// the allocator may read it.
    static COUNTING_HERE: Cell<bool> = const { Cell::new(false) };
}

#[inline]
fn note(delta: isize) {
    if !INSTALLED.load(Ordering::Relaxed) {
        INSTALLED.store(true, Ordering::Relaxed);
    }
    if COUNTING.load(Ordering::Relaxed) && COUNTING_HERE.try_with(Cell::get).unwrap_or(false) {
        NET_BYTES.fetch_add(delta, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards its arguments unchanged to `System`, which
// implements `GlobalAlloc` correctly; the bookkeeping around the calls only
// touches atomics and never allocates, so it cannot recurse into the allocator.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `alloc`'s contract; we pass it on unchanged.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            note(layout.size() as isize);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            note(layout.size() as isize);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, i.e. from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        note(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from `System` with `layout`; the caller upholds the rest.
        let new_ptr = unsafe { System.realloc(ptr, layout, new_size) };
        if !new_ptr.is_null() {
            note(new_size as isize - layout.size() as isize);
        }
        new_ptr
    }
}

/// Whether this process's global allocator is [`CountingAllocator`].
///
/// ```
/// // Doctests do not install it.
/// assert!(!fibre_bench::alloc_count::is_installed());
/// ```
pub fn is_installed() -> bool {
    drop(black_box(Box::new(black_box(0u64))));
    INSTALLED.load(Ordering::Relaxed)
}

/// Runs `build` and returns what it returns, with the heap bytes it left
/// allocated; `None` when the counting allocator is not installed.
///
/// ```
/// let (v, bytes) = fibre_bench::alloc_count::measure(|| vec![0u8; 4096]);
/// assert_eq!(v.len(), 4096);
/// assert_eq!(bytes, None); // not installed in doctests
/// ```
pub fn measure<T>(build: impl FnOnce() -> T) -> (T, Option<usize>) {
    if !is_installed() {
        return (build(), None);
    }
    if COUNTING_HERE.with(Cell::get) {
        // A window inside an open one on this thread: the outer window holds
        // the lock and keeps counting; read the counter around `build`.
        let before = NET_BYTES.load(Ordering::Relaxed);
        let value = build();
        let after = NET_BYTES.load(Ordering::Relaxed);
        return (value, Some(after.saturating_sub(before).max(0) as usize));
    }
    let _window = WINDOW
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let before = NET_BYTES.load(Ordering::Relaxed);
    COUNTING_HERE.with(|here| here.set(true));
    COUNTING.store(true, Ordering::SeqCst);
    let value = build();
    COUNTING.store(false, Ordering::SeqCst);
    COUNTING_HERE.with(|here| here.set(false));
    let after = NET_BYTES.load(Ordering::Relaxed);
    (value, Some(after.saturating_sub(before).max(0) as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[global_allocator]
    static ALLOCATOR: CountingAllocator = CountingAllocator;

    #[test]
    fn counts_what_stays_allocated() {
        assert!(is_installed());
        let (kept, bytes) = measure(|| {
            let scratch = vec![1u8; 1 << 20];
            drop(black_box(scratch));
            vec![2u64; 1 << 17]
        });
        let bytes = bytes.expect("installed");
        // 1 MiB kept; the 1 MiB scratch was freed. Only this thread counts,
        // so other tests allocating meanwhile do not show.
        assert_eq!(bytes, 1 << 20);
        assert_eq!(kept.len(), 1 << 17);
    }

    #[test]
    fn windows_nest() {
        let ((inner, inner_bytes), outer_bytes) = measure(|| {
            let first = vec![0u8; 1000];
            let (second, bytes) = measure(|| vec![0u8; 3000]);
            ((first, second), bytes)
        });
        assert_eq!(inner_bytes, Some(3000));
        assert_eq!(outer_bytes, Some(4000));
        assert_eq!(inner.0.len() + inner.1.len(), 4000);
    }

    #[test]
    fn other_threads_are_not_counted() {
        let (_, bytes) = measure(|| {
            std::thread::spawn(|| black_box(vec![0u8; 1 << 20]))
                .join()
                .expect("helper thread")
        });
        // The helper's megabyte is not counted; the thread handle's own
        // bookkeeping, made on this thread, is small.
        assert!(bytes.expect("installed") < 1 << 16);
    }

    #[test]
    fn realloc_and_zeroed_allocations_are_counted() {
        let (kept, bytes) = measure(|| {
            let mut v: Vec<u8> = Vec::with_capacity(16);
            v.resize(300_000, 0);
            v.shrink_to_fit();
            let zeroed = vec![0u32; 50_000];
            (v, zeroed)
        });
        assert_eq!(bytes, Some(500_000));
        assert_eq!(kept.0.len() + kept.1.len(), 350_000);
    }
}
