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
}

impl Key for u32 {
    const BITS: u8 = 32;
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
pub trait Value: Copy + Eq + Hash + Debug + Send + Sync + 'static {}
impl Value for u16 {}
impl Value for u32 {}
