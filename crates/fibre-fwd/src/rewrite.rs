//! The forwarded packet's own rewrite: the TTL or hop limit one less, the
//! IPv4 header checksum patched rather than recomputed (RFC 1624), exactly
//! as the kernel's `ip_decrease_ttl` patches it. (The Ethernet header is
//! written where the frame is queued, `Core::put`.)

/// `ip_decrease_ttl` on the IPv4 header at the start of `header`: TTL
/// minus one (the caller has checked it is above 1), and the checksum
/// updated for the 16-bit word TTL|protocol dropping by 0x0100: adding
/// 0x0100 to the stored (complemented) sum with an end-around carry, the
/// kernel's RFC 1624 update, which never yields 0xffff and so always equals
/// a checksum recomputed from scratch.
///
/// ```
/// let mut h = [0x45, 0, 0, 20, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
/// let sum = fibre_net::checksum::checksum(&h);
/// h[10..12].copy_from_slice(&sum.to_be_bytes());
/// fibre_fwd::decrease_ttl(&mut h);
/// assert_eq!(h[8], 63);
/// assert_eq!(fibre_net::checksum::checksum(&h), 0);
/// ```
pub fn decrease_ttl(header: &mut [u8]) {
    let check = u32::from(u16::from_be_bytes([header[10], header[11]])) + 0x0100;
    let check = (check + u32::from(check >= 0xffff)) as u16;
    header[10..12].copy_from_slice(&check.to_be_bytes());
    header[8] -= 1;
}

/// `ip6_forward`'s `hdr->hop_limit--` on the IPv6 header at the start of
/// `header` (IPv6 has no header checksum).
pub(crate) fn decrease_hop_limit(header: &mut [u8]) {
    header[7] -= 1;
}

#[cfg(test)]
mod tests {
    use super::*;
    use fibre_net::checksum;
    use proptest::prelude::*;

    proptest! {
        /// The incremental update equals the checksum recomputed over the
        /// rewritten header, for any header and any TTL above 1.
        #[test]
        fn the_incremental_checksum_equals_a_recomputed_one(
            mut header in prop::array::uniform20(any::<u8>()),
            ttl in 2u8..=255,
        ) {
            header[0] = 0x45;
            header[8] = ttl;
            header[10..12].fill(0);
            let sum = checksum::checksum(&header);
            header[10..12].copy_from_slice(&sum.to_be_bytes());
            let mut patched = header;
            decrease_ttl(&mut patched);
            let mut recomputed = header;
            recomputed[8] = ttl - 1;
            recomputed[10..12].fill(0);
            let sum = checksum::checksum(&recomputed);
            recomputed[10..12].copy_from_slice(&sum.to_be_bytes());
            prop_assert_eq!(patched, recomputed);
        }
    }

    #[test]
    fn the_hop_limit_drops_by_one() {
        let mut h = [0u8; 40];
        h[7] = 2;
        decrease_hop_limit(&mut h);
        assert_eq!(h[7], 1);
    }
}
