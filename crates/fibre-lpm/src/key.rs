//! Key and value types the LPM engines accept.

use std::fmt::Debug;
use std::hash::Hash;

/// An address used as an LPM key: `u32` (IPv4) or `u128` (IPv6), host order,
/// the most significant bit is the first bit of the address.
pub trait Key: Copy + Eq + Ord + Hash + Debug + Default + Send + Sync + 'static {
    /// Width of the key in bits (32 or 128).
    const BITS: u8;
    /// The key widened to `u128`, left-aligned is NOT applied: plain value.
    fn to_u128(self) -> u128;
    /// The inverse of [`Key::to_u128`]; truncates.
    fn from_u128(v: u128) -> Self;
    /// Mask that keeps the first `len` bits (`len` may be 0..=BITS).
    fn prefix_mask(len: u8) -> Self;
    /// Bitwise and.
    fn and(self, other: Self) -> Self;

    /// Bits of the address consumed by direct pointing in
    /// [`crate::Poptrie`]: the first node level starts here.
    #[doc(hidden)]
    const DIRECT_BITS: u32;

    /// Bits indexing the top direct-pointing array. When smaller than
    /// `DIRECT_BITS`, a top entry may point to a chunk of
    /// `2^(DIRECT_BITS - TOP_BITS)` second-level entries instead.
    #[doc(hidden)]
    const TOP_BITS: u32;

    /// Lookups [`crate::Poptrie::lookup_batch`] walks in lockstep (at most
    /// 64): enough to overlap the cache misses of a level, few enough that
    /// their prefetches fit the CPU's outstanding-miss buffers.
    #[doc(hidden)]
    const BATCH_LANES: usize;

    /// `width` (1..=32) bits of the key starting `offset` bits from the most
    /// significant end; bits past the end of the key read as zero.
    /// `offset` must be below 128.
    #[doc(hidden)]
    fn bits_at(self, offset: u32, width: u32) -> u32;
}

impl Key for u32 {
    const BITS: u8 = 32;
    // 18 + 6 = 24: the /24s (63% of a full table) and everything from /19
    // end in the first node level, so an /18 with more-specifics costs one
    // node. On the RIS table that is 69k nodes, against 317k with 16 bits
    // (where /23 and /24 split the 16..22 level); the 1 MiB array costs
    // about 1 byte per prefix and one read.
    const DIRECT_BITS: u32 = 18;
    // One level: the 1 MiB array already costs about 1 byte per prefix.
    const TOP_BITS: u32 = 18;
    // Measured on the RIS table (AMD EPYC): 48 and 64 lanes within noise
    // (130-150 M/s batched), 16 clearly slower.
    const BATCH_LANES: usize = 48;
    #[inline(always)]
    fn bits_at(self, offset: u32, width: u32) -> u32 {
        // Left-align in 64 bits so that offsets up to 34 read zero padding.
        (((u64::from(self) << 32) << offset) >> (64 - width)) as u32
    }
    #[inline]
    fn to_u128(self) -> u128 {
        self as u128
    }
    #[inline]
    fn from_u128(v: u128) -> Self {
        v as u32
    }
    #[inline]
    fn prefix_mask(len: u8) -> Self {
        if len == 0 {
            0
        } else {
            u32::MAX << (32 - u32::from(len))
        }
    }
    #[inline]
    fn and(self, other: Self) -> Self {
        self & other
    }
}

impl Key for u128 {
    const BITS: u8 = 128;
    // Two levels of direct pointing, 12 + 12 bits, then 6-bit nodes:
    // 24 + 6 * 4 = 48, so the dominant /48s (45% of a full table) end on a
    // level boundary after four nodes instead of the six that 12-bit direct
    // pointing needed (each node level costs 2-3 ns per batched lookup). The
    // top array is 16 KiB; a 16 KiB chunk of second-level entries exists
    // only under the /12s that hold longer prefixes: 12 on the RIS table
    // (0.8 byte per prefix), where one 24-bit array would take 64 MiB.
    const DIRECT_BITS: u32 = 24;
    const TOP_BITS: u32 = 12;
    // Seven dependent reads per /48 lookup keep more prefetches in flight per
    // lane than IPv4's three. On the RIS table (AMD EPYC, ~24-entry miss
    // buffers): 64 lanes 42-44 M/s batched, 24 lanes 45-48 M/s with one
    // direct level; with two, 16 / 24 / 32 lanes 46-50 / 53-55 / 52-53 M/s.
    const BATCH_LANES: usize = 24;
    #[inline(always)]
    fn bits_at(self, offset: u32, width: u32) -> u32 {
        // Real prefixes end by /64, so nearly every read stays in the high
        // half, where one 64-bit shift pair beats a 128-bit one.
        if offset + width <= 64 {
            ((((self >> 64) as u64) << offset) >> (64 - width)) as u32
        } else {
            ((self << offset) >> (128 - width)) as u32
        }
    }
    #[inline]
    fn to_u128(self) -> u128 {
        self
    }
    #[inline]
    fn from_u128(v: u128) -> Self {
        v
    }
    #[inline]
    fn prefix_mask(len: u8) -> Self {
        if len == 0 {
            0
        } else {
            u128::MAX << (128 - u32::from(len))
        }
    }
    #[inline]
    fn and(self, other: Self) -> Self {
        self & other
    }
}

/// A value stored for a prefix: a small id.
///
/// Every value is accepted, including `MAX`: the lookup arrays use `MAX` as
/// their "no route" mark, and while some prefix holds `MAX` lookups that land
/// on the mark take a slower path through the RIB to tell the two apart.
pub trait Value: Copy + Eq + Hash + Debug + Send + Sync + 'static {
    /// The mark for "no route" in the lookup arrays (`MAX`).
    #[doc(hidden)]
    const NO_ROUTE: Self;
    /// The value widened to `u32`.
    #[doc(hidden)]
    fn to_u32(self) -> u32;
    /// Decodes a 31-bit inline leaf of the direct-pointing array, where
    /// `0x7fff_ffff` stands for [`Value::NO_ROUTE`].
    #[doc(hidden)]
    fn from_inline(bits: u32) -> Self;
}

impl Value for u16 {
    const NO_ROUTE: Self = u16::MAX;
    #[inline(always)]
    fn to_u32(self) -> u32 {
        u32::from(self)
    }
    #[inline(always)]
    fn from_inline(bits: u32) -> Self {
        // 0x7fff_ffff truncates to u16::MAX, the mark itself.
        bits as u16
    }
}

impl Value for u32 {
    const NO_ROUTE: Self = u32::MAX;
    #[inline(always)]
    fn to_u32(self) -> u32 {
        self
    }
    #[inline(always)]
    fn from_inline(bits: u32) -> Self {
        if bits == 0x7fff_ffff {
            u32::MAX
        } else {
            bits
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_at_reads_from_the_top_and_pads_with_zeros() {
        let a: u32 = 0xc0a8_0155; // 192.168.1.85
        assert_eq!(a.bits_at(0, 16), 0xc0a8);
        assert_eq!(a.bits_at(16, 6), 0x01 >> 2);
        assert_eq!(a.bits_at(28, 6), 0x5 << 2);
        let b: u128 = 0x2001_0db8_u128 << 96;
        assert_eq!(b.bits_at(0, 18), 0x2001 << 2);
        assert_eq!(b.bits_at(0, 12), 0x200);
        assert_eq!(b.bits_at(12, 12), 0x10d);
        assert_eq!(b.bits_at(0, 24), 0x20_010d);
        assert_eq!(b.bits_at(122, 6), 0);
        assert_eq!(u128::MAX.bits_at(126, 6), 0b11_0000);
        let c: u128 = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
        assert_eq!(c.bits_at(58, 6), 0x2f);
        assert_eq!(c.bits_at(60, 6), 0xf << 2 | 0x3);
        assert_eq!(c.bits_at(62, 6), 0b11_1111);
        assert_eq!(c.bits_at(64, 6), 0xfe >> 2);
    }

    #[test]
    fn inline_leaves_decode_no_route() {
        assert_eq!(u16::from_inline(0x7fff_ffff), u16::NO_ROUTE);
        assert_eq!(u32::from_inline(0x7fff_ffff), u32::NO_ROUTE);
        assert_eq!(u32::from_inline(7), 7);
        assert_eq!(u16::from_inline(7), 7);
    }
}
