//! The Internet checksum (RFC 1071) and its incremental update (RFC 1624).
//!
//! The ones'-complement sum does not depend on byte order (RFC 1071 §2(B)),
//! so [`sum`] adds the buffer as native-endian 64-bit words into a 128-bit
//! accumulator (no carry handling in the loop), folds once at the end, and
//! swaps the 16-bit result into network order. A naive word-by-word sum is
//! kept in the tests as the reference it is checked against.
//!
//! Sums returned here are *folded but not complemented*; the value written
//! into a checksum field is `!sum`. Sums of pieces can be combined with
//! [`add`] as long as every piece but the last starts at an even offset of
//! the checksummed message and has even length.

use fibre_base::IpFamily;

/// The folded ones'-complement sum of `data` read as big-endian 16-bit
/// words, an odd trailing byte padded with zero.
///
/// ```
/// // The example of RFC 1071 §3.
/// let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
/// assert_eq!(fibre_net::checksum::sum(&data), 0xddf2);
/// ```
pub fn sum(data: &[u8]) -> u16 {
    let mut acc: u128 = 0;
    let mut blocks = data.chunks_exact(32);
    for block in &mut blocks {
        // Four independent loads per iteration keep the adds pipelined.
        acc += u128::from(load_u64(&block[0..8]))
            + u128::from(load_u64(&block[8..16]))
            + u128::from(load_u64(&block[16..24]))
            + u128::from(load_u64(&block[24..32]));
    }
    let mut words = blocks.remainder().chunks_exact(8);
    for word in &mut words {
        acc += u128::from(load_u64(word));
    }
    // The tail (under 8 bytes) starts at a multiple of 8, so each piece
    // below stays in its 16-bit lanes; fixed-size loads avoid a memcpy call
    // for the common 20-byte IPv4 header.
    let mut tail = words.remainder();
    if let [a, b, c, d, rest @ ..] = tail {
        acc += u128::from(u32::from_ne_bytes([*a, *b, *c, *d]));
        tail = rest;
    }
    if let [a, b, rest @ ..] = tail {
        acc += u128::from(u16::from_ne_bytes([*a, *b]));
        tail = rest;
    }
    if let [a] = tail {
        // An odd last byte is the high byte of a zero-padded word.
        acc += u128::from(u16::from_ne_bytes([*a, 0]));
    }
    u16::from_be(fold_u128(acc))
}

/// The same sum as [`sum`], computed the straightforward way: one
/// big-endian 16-bit word at a time into a 32-bit accumulator, folding
/// when it could overflow.
///
/// This is the "before" that [`sum`] is measured against
/// (`cargo run --release -p fibre-net --example wire_bench`) and the
/// reference its tests compare with; use [`sum`].
///
/// ```
/// use fibre_net::checksum;
/// let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7, 0x42];
/// assert_eq!(checksum::sum_words(&data), checksum::sum(&data));
/// ```
pub fn sum_words(data: &[u8]) -> u16 {
    let mut acc: u32 = 0;
    let mut words = data.chunks_exact(2);
    for word in &mut words {
        acc += u32::from(u16::from_be_bytes([word[0], word[1]]));
        // Fold before a further 0xffff could overflow 32 bits.
        if acc > 0xffff_0000 {
            acc = (acc >> 16) + (acc & 0xffff);
        }
    }
    if let [last] = words.remainder() {
        acc += u32::from(*last) << 8;
    }
    fold_u32(acc)
}

/// The checksum field value for `data`: the complement of [`sum`].
///
/// ```
/// use fibre_net::checksum;
/// // A message whose checksum field holds this value sums to 0xffff.
/// let msg = [0x45, 0x00, 0x00, 0x14, 0x00, 0x00];
/// let c = checksum::checksum(&msg);
/// let mut with_csum = msg.to_vec();
/// with_csum.extend_from_slice(&c.to_be_bytes());
/// assert_eq!(checksum::sum(&with_csum), 0xffff);
/// ```
pub fn checksum(data: &[u8]) -> u16 {
    !sum(data)
}

/// Ones'-complement addition of two folded sums.
///
/// ```
/// use fibre_net::checksum;
/// let (a, b) = ([1u8, 2, 3, 4], [5u8, 6, 7]);
/// let whole = [1u8, 2, 3, 4, 5, 6, 7];
/// assert_eq!(checksum::add(checksum::sum(&a), checksum::sum(&b)), checksum::sum(&whole));
/// ```
pub fn add(a: u16, b: u16) -> u16 {
    fold_u32(u32::from(a) + u32::from(b))
}

/// The folded sum of the pseudo-header of family `I`: source,
/// destination, protocol (IPv6: next header) and upper-layer length.
/// IPv4 (RFC 768/793) lays these out as zero, protocol, 16-bit length;
/// IPv6 (RFC 8200 section 8.1) as 32-bit length, three zero bytes, next
/// header. A ones'-complement sum is the same in any order of its 16-bit
/// words and zero bytes add nothing, so one sum serves both layouts (an
/// IPv4 length fits 16 bits: its upper word is zero).
///
/// ```
/// use fibre_base::{Ipv4, Ipv6};
/// use fibre_net::checksum::pseudo_header;
/// let s = pseudo_header::<Ipv4>("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap(), 17, 8);
/// // 0x0a00 + 0x0001 + 0x0a00 + 0x0002 + 0x0011 + 0x0008
/// assert_eq!(s, 0x141c);
/// let s = pseudo_header::<Ipv6>("::1".parse().unwrap(), "::2".parse().unwrap(), 58, 8);
/// assert_eq!(s, 1 + 2 + 58 + 8);
/// ```
pub fn pseudo_header<I: IpFamily<Bits: Into<u128>>>(
    src: I::Addr,
    dst: I::Addr,
    protocol: u8,
    length: u32,
) -> u16 {
    let words = |addr: I::Addr| -> u64 {
        let bits: u128 = I::to_bits(addr).into();
        (0..8).map(|i| ((bits >> (16 * i)) & 0xffff) as u64).sum()
    };
    let total = words(src)
        + words(dst)
        + u64::from(length >> 16)
        + u64::from(length & 0xffff)
        + u64::from(protocol);
    fold_u64(total)
}

/// The checksum field after one 16-bit word of the message changes from
/// `old` to `new`, without touching the rest of the message (RFC 1624,
/// equation 3: `HC' = ~(~HC + ~m + m')`).
///
/// ```
/// use fibre_net::checksum;
/// // An IPv4 header: TTL 64, protocol 17. Decrement TTL in place.
/// let mut h = [0x45, 0, 0, 0x1c, 0, 0, 0x40, 0, 0x40, 0x11, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
/// let c = checksum::checksum(&h);
/// h[10..12].copy_from_slice(&c.to_be_bytes());
/// let old = u16::from_be_bytes([h[8], h[9]]);
/// h[8] -= 1;
/// let new = u16::from_be_bytes([h[8], h[9]]);
/// let updated = checksum::update_u16(c, old, new);
/// h[10..12].copy_from_slice(&updated.to_be_bytes());
/// assert_eq!(checksum::sum(&h), 0xffff);
/// ```
pub fn update_u16(checksum: u16, old: u16, new: u16) -> u16 {
    !fold_u32(u32::from(!checksum) + u32::from(!old) + u32::from(new))
}

/// [`update_u16`] for a 32-bit field (e.g. an address rewritten by NAT).
///
/// ```
/// use fibre_net::checksum;
/// let mut msg = [0x12, 0x34, 10, 0, 0, 1, 0x56, 0x78];
/// let c = checksum::checksum(&msg);
/// msg[2..6].copy_from_slice(&[192, 0, 2, 7]);
/// let c2 = checksum::update_u32(c, 0x0a00_0001, 0xc000_0207);
/// assert_eq!(c2, checksum::checksum(&msg));
/// ```
pub fn update_u32(checksum: u16, old: u32, new: u32) -> u16 {
    let c = update_u16(checksum, (old >> 16) as u16, (new >> 16) as u16);
    update_u16(c, old as u16, new as u16)
}

fn load_u64(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(bytes);
    u64::from_ne_bytes(word)
}

fn fold_u128(acc: u128) -> u16 {
    // acc < 2^128 and each step at least halves the width, carries included.
    let folded = (acc >> 64) + (acc & u128::from(u64::MAX));
    let folded = (folded >> 64) + (folded & u128::from(u64::MAX));
    fold_u64(folded as u64)
}

fn fold_u64(acc: u64) -> u16 {
    let folded = (acc >> 32) + (acc & 0xffff_ffff);
    let folded = (folded >> 32) + (folded & 0xffff_ffff);
    fold_u32(folded as u32)
}

fn fold_u32(acc: u32) -> u16 {
    let folded = (acc >> 16) + (acc & 0xffff);
    let folded = (folded >> 16) + (folded & 0xffff);
    folded as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// RFC 1071 taken literally: big-endian words into a wide accumulator.
    fn reference_sum(data: &[u8]) -> u16 {
        let mut acc: u64 = 0;
        for pair in data.chunks(2) {
            let hi = u64::from(pair[0]) << 8;
            let lo = pair.get(1).copied().map_or(0, u64::from);
            acc += hi | lo;
        }
        while acc > 0xffff {
            acc = (acc >> 16) + (acc & 0xffff);
        }
        acc as u16
    }

    #[test]
    fn rfc1071_example() {
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(sum(&data), 0xddf2);
        assert_eq!(checksum(&data), !0xddf2);
    }

    #[test]
    fn empty_and_odd_lengths() {
        assert_eq!(sum(&[]), 0);
        assert_eq!(sum(&[0xab]), 0xab00);
        // 0xabcd + 0xef00 = 0x1_9acd, end-around carry gives 0x9ace.
        assert_eq!(sum(&[0xab, 0xcd, 0xef]), 0x9ace);
    }

    #[test]
    fn all_ones_never_overflows() {
        let data = vec![0xffu8; 65_537];
        assert_eq!(sum(&data), reference_sum(&data));
        assert_eq!(sum_words(&data), reference_sum(&data));
        // -0 plus the padded odd byte 0xff00.
        assert_eq!(sum(&data), 0xff00);
        assert_eq!(sum(&data[..65_536]), 0xffff);
    }

    proptest! {
        #[test]
        fn fast_sum_matches_reference(data in proptest::collection::vec(any::<u8>(), 0..1600), skip in 0usize..8) {
            // Misaligned starts exercise every load alignment.
            let slice = &data[skip.min(data.len())..];
            prop_assert_eq!(sum(slice), reference_sum(slice));
        }

        #[test]
        fn baseline_matches_reference(data in proptest::collection::vec(any::<u8>(), 0..1600)) {
            prop_assert_eq!(sum_words(&data), reference_sum(&data));
        }

        #[test]
        fn split_sums_add_up(data in proptest::collection::vec(any::<u8>(), 0..600), cut in 0usize..300) {
            let cut = (cut * 2).min(data.len() & !1);
            prop_assert_eq!(add(sum(&data[..cut]), sum(&data[cut..])), sum(&data));
        }

        #[test]
        fn incremental_update_matches_recompute(mut data in proptest::collection::vec(any::<u8>(), 2..64), at in 0usize..32, new in any::<u16>()) {
            let at = (at * 2) % (data.len() & !1);
            let before = checksum(&data);
            let old = u16::from_be_bytes([data[at], data[at + 1]]);
            data[at..at + 2].copy_from_slice(&new.to_be_bytes());
            let updated = update_u16(before, old, new);
            // Equal as ones'-complement numbers: 0x0000 and 0xffff are both zero.
            let full = checksum(&data);
            prop_assert!(updated == full || (updated | full == 0xffff && updated & full == 0),
                "updated {updated:#06x} recomputed {full:#06x}");
        }

        #[test]
        fn pseudo_headers_match_byte_sums(s in any::<u32>(), d in any::<u32>(), p in any::<u8>(), l in any::<u16>(),
                                          s6 in any::<u128>(), d6 in any::<u128>(), l6 in any::<u32>()) {
            let mut v4 = Vec::new();
            v4.extend_from_slice(&s.to_be_bytes());
            v4.extend_from_slice(&d.to_be_bytes());
            v4.extend_from_slice(&[0, p]);
            v4.extend_from_slice(&l.to_be_bytes());
            prop_assert_eq!(pseudo_header::<fibre_base::Ipv4>(s.into(), d.into(), p, l.into()), reference_sum(&v4));
            let mut v6 = Vec::new();
            v6.extend_from_slice(&s6.to_be_bytes());
            v6.extend_from_slice(&d6.to_be_bytes());
            v6.extend_from_slice(&l6.to_be_bytes());
            v6.extend_from_slice(&[0, 0, 0, p]);
            prop_assert_eq!(pseudo_header::<fibre_base::Ipv6>(s6.into(), d6.into(), p, l6), reference_sum(&v6));
        }
    }
}
