//! A wrapper that gives a value cache lines of its own.

use std::ops::{Deref, DerefMut};

/// Bytes one [`CacheAligned`] value is aligned (and so padded) to.
///
/// 128 on x86-64: Intel's adjacent-line ("spatial") prefetcher fetches cache
/// lines in 64-byte pairs, so two values on neighbouring 64-byte lines still
/// ping-pong between cores; aarch64 gets 128 too because several of its
/// cores (Apple M-series, Neoverse with 128-byte prefetch) behave the same.
/// Other targets use the plain 64-byte line.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub const CACHE_LINE: usize = 128;
/// Bytes one [`CacheAligned`] value is aligned (and so padded) to.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub const CACHE_LINE: usize = 64;

/// `T` on cache lines of its own, so that writes to it never invalidate a
/// line that holds anything else (no false sharing).
///
/// ```
/// use fibre_rcu::{CacheAligned, CACHE_LINE};
/// let counters: Vec<CacheAligned<u64>> = (0..4).map(|_| CacheAligned::new(0)).collect();
/// let a = &*counters[0] as *const u64 as usize;
/// let b = &*counters[1] as *const u64 as usize;
/// assert_eq!(b - a, CACHE_LINE);
/// ```
#[cfg_attr(
    any(target_arch = "x86_64", target_arch = "aarch64"),
    repr(C, align(128))
)]
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    repr(C, align(64))
)]
#[derive(Debug, Default)]
pub struct CacheAligned<T> {
    value: T,
}

const _: () = assert!(std::mem::align_of::<CacheAligned<u8>>() == CACHE_LINE);
const _: () = assert!(std::mem::size_of::<CacheAligned<u64>>() == CACHE_LINE);

impl<T> CacheAligned<T> {
    /// Wraps `value`.
    pub const fn new(value: T) -> Self {
        CacheAligned { value }
    }

    /// Unwraps the value.
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T> Deref for CacheAligned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for CacheAligned<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}
