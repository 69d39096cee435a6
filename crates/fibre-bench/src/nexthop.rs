//! Next hops for prefixes that come without them.
//!
//! The RIS files carry prefixes only. Each prefix gets one of `gateways`
//! next-hop ids, a pure function of the prefix, so every engine and every run
//! stores the same values:
//!
//! ```text
//! x  = address as u128 (host order); hi = x >> 64; lo = x & (2^64 - 1)
//! z  = lo XOR (hi rotated left by 32) XOR (len << 56)
//! id = splitmix64(z) mod gateways
//! splitmix64(z): z += 0x9e3779b97f4a7c15;
//!                z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
//!                z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
//!                z ^ (z >> 31)          (wrapping arithmetic)
//! ```

use fibre_lpm::Key;

/// A next-hop id: the value every engine stores for a prefix.
pub type NextHop = u16;

/// The splitmix64 output function: a bijective 64-bit mixer.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The next hop of `addr/len` among `gateways` (which must be at least 1).
///
/// ```
/// use fibre_bench::nexthop::next_hop_for;
/// let a = next_hop_for(0x0a00_0000u32, 8, 16);
/// assert!(a < 16);
/// assert_eq!(a, next_hop_for(0x0a00_0000u32, 8, 16)); // a function of the prefix
/// ```
pub fn next_hop_for<K: Key>(addr: K, len: u8, gateways: NextHop) -> NextHop {
    let x = addr.to_u128();
    let lo = x as u64;
    let hi = (x >> 64) as u64;
    let z = lo ^ hi.rotate_left(32) ^ (u64::from(len) << 56);
    (splitmix64(z) % u64::from(gateways.max(1))) as NextHop
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_published_sequence() {
        // splitmix64 seeded with 0: the state advances by the increment before
        // each output, so the first output is splitmix64(0) as written here.
        assert_eq!(splitmix64(0), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn next_hops_are_deterministic_in_range_and_spread() {
        let gateways = 16;
        let mut counts = [0u32; 16];
        for i in 0..16_000u32 {
            let addr = i << 8;
            let hop = next_hop_for(addr, 24, gateways);
            assert_eq!(hop, next_hop_for(addr, 24, gateways));
            counts[usize::from(hop)] += 1;
        }
        // 1,000 expected per gateway; a fair hash stays well inside 800..1200.
        for (gateway, count) in counts.iter().enumerate() {
            assert!((800..1200).contains(count), "gateway {gateway}: {count}");
        }
    }

    #[test]
    fn the_length_and_both_halves_of_ipv6_matter() {
        let gateways = u16::MAX;
        assert_ne!(
            next_hop_for(0x0a00_0000u32, 8, gateways),
            next_hop_for(0x0a00_0000u32, 9, gateways)
        );
        let a = 0x2001_0db8u128 << 96;
        assert_ne!(
            next_hop_for(a, 32, gateways),
            next_hop_for(a | 1, 128, gateways)
        );
        assert_eq!(next_hop_for(a, 32, 1), 0);
        // Zero gateways is treated as one rather than dividing by zero.
        assert_eq!(next_hop_for(a, 32, 0), 0);
    }
}
