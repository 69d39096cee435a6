//! The cache-line size false sharing is avoided at, and the wrapper that
//! gives a value lines of its own. The per-target sizes are crossbeam-utils'
//! `CachePadded` ones (crossbeam-utils/src/cache_padded.rs), for the same
//! reasons:
//!
//! * 128 on x86-64: since Sandy Bridge, Intel's spatial (adjacent-line)
//!   prefetcher pulls 64-byte lines in aligned 128-byte pairs, so two values
//!   on neighbouring 64-byte lines still bounce between cores (Intel 64 and
//!   IA-32 Architectures Optimization Reference Manual, "Data Prefetching");
//! * 128 on aarch64 and arm64ec (big cores such as Apple's M-series have
//!   128-byte lines and Neoverse prefetches pairs) and on powerpc64
//!   (128-byte lines);
//! * 256 on s390x (256-byte lines);
//! * 32 on arm, mips, sparc and hexagon, 16 on m68k;
//! * 64 everywhere else.

use std::ops::{Deref, DerefMut};

/// Writes [`CACHE_LINE`] and [`CachePadded`] from one per-target table, so
/// that the constant and the `repr(align)` (which needs a literal) cannot
/// disagree.
macro_rules! per_target_cache_line {
    ($( [$($arch:literal),+] => $size:literal, )+ else => $default:literal $(,)?) => {
        $(
            /// Bytes a [`CachePadded`] value is aligned (and so padded) to on
            /// this target: how far apart two values written by different
            /// cores must be.
            #[cfg(any($(target_arch = $arch),+))]
            pub const CACHE_LINE: usize = $size;
        )+
        /// Bytes a [`CachePadded`] value is aligned (and so padded) to on
        /// this target: how far apart two values written by different cores
        /// must be.
        #[cfg(not(any($($(target_arch = $arch),+),+)))]
        pub const CACHE_LINE: usize = $default;

        /// `T` on cache lines of its own ([`CACHE_LINE`] aligned and padded),
        /// so that writes to it never invalidate a line that holds anything
        /// else.
        ///
        /// ```
        /// use fibre_base::{CachePadded, CACHE_LINE};
        /// let counters: Vec<CachePadded<u64>> = (0..4).map(|_| CachePadded::new(0)).collect();
        /// let a = &*counters[0] as *const u64 as usize;
        /// let b = &*counters[1] as *const u64 as usize;
        /// assert_eq!(b - a, CACHE_LINE);
        /// ```
        $( #[cfg_attr(any($(target_arch = $arch),+), repr(C, align($size)))] )+
        #[cfg_attr(not(any($($(target_arch = $arch),+),+)), repr(C, align($default)))]
        #[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Hash)]
        pub struct CachePadded<T> {
            value: T,
        }
    };
}

per_target_cache_line! {
    ["x86_64", "aarch64", "arm64ec", "powerpc64"] => 128,
    ["s390x"] => 256,
    ["arm", "mips", "mips32r6", "mips64", "mips64r6", "sparc", "hexagon"] => 32,
    ["m68k"] => 16,
    else => 64,
}

const _: () = assert!(
    std::mem::align_of::<CachePadded<u8>>() == CACHE_LINE,
    "CachePadded's repr(align) and CACHE_LINE disagree for this target: \
     if this fires, give both the same per-target list"
);
const _: () = assert!(
    std::mem::size_of::<CachePadded<u64>>() == CACHE_LINE,
    "a CachePadded word must fill exactly one cache line: if this fires, \
     re-check CachePadded's repr"
);

impl<T> CachePadded<T> {
    /// Wraps `value`.
    pub const fn new(value: T) -> Self {
        CachePadded { value }
    }

    /// Unwraps the value.
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T> Deref for CachePadded<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for CachePadded<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<T> From<T> for CachePadded<T> {
    fn from(value: T) -> Self {
        CachePadded::new(value)
    }
}
