//! Completing a partial TCP or UDP checksum. A local sender whose device
//! offloads transmit checksums (veth does by default) hands its frames over
//! `CHECKSUM_PARTIAL`: the checksum field holds only the folded
//! pseudo-header sum, and the device was to sum the rest. `AF_PACKET` flags
//! such frames `TP_STATUS_CSUMNOTREADY`; forwarded as they are, every
//! receiver would count them as checksum errors. This does what
//! `skb_checksum_help` does in software: the one's complement sum from the
//! transport header to the end of the packet, folded and complemented,
//! written into the field (a UDP result of 0 written as 0xffff, RFC 768).

use fibre_net::checksum;

const IPV4: [u8; 2] = [0x08, 0x00];
const IPV6: [u8; 2] = [0x86, 0xdd];
use fibre_net::ip::number::{TCP, UDP};

/// Completes the checksum of the TCP or UDP packet in `frame` (an
/// Ethernet frame, IPv4 or IPv6 with TCP or UDP right after the fixed
/// header); false, leaving the frame as it is, for anything else.
pub(crate) fn complete_partial(frame: &mut [u8]) -> bool {
    let (transport, protocol, end) = match frame.get(12..14) {
        Some(t) if t == IPV4 => {
            let Some(ip) = frame.get(14..34) else {
                return false;
            };
            let header = usize::from(ip[0] & 0x0f) * 4;
            let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
            (14 + header, ip[9], 14 + total)
        }
        Some(t) if t == IPV6 => {
            let Some(ip) = frame.get(14..54) else {
                return false;
            };
            let payload = usize::from(u16::from_be_bytes([ip[4], ip[5]]));
            (54, ip[6], 54 + payload)
        }
        _ => return false,
    };
    let field = match protocol {
        TCP => 16,
        UDP => 6,
        _ => return false,
    };
    if end > frame.len() || transport + field + 2 > end {
        return false;
    }
    let sum = checksum::checksum(&frame[transport..end]);
    let sum = if protocol == UDP && sum == 0 {
        0xffff
    } else {
        sum
    };
    frame[transport + field..transport + field + 2].copy_from_slice(&sum.to_be_bytes());
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use fibre_base::Ipv4;
    use std::net::Ipv4Addr;

    /// A UDP/IPv4 frame whose checksum field holds the folded pseudo-header
    /// sum, as a sender with transmit offload leaves it.
    fn partial_udp4(payload: &[u8]) -> Vec<u8> {
        let (src, dst) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
        let udp_len = 8 + payload.len();
        let mut f = vec![0u8; 14 + 20 + udp_len];
        f[12..14].copy_from_slice(&IPV4);
        f[14] = 0x45;
        f[16..18].copy_from_slice(&((20 + udp_len) as u16).to_be_bytes());
        f[22] = 64;
        f[23] = UDP;
        f[26..30].copy_from_slice(&src.octets());
        f[30..34].copy_from_slice(&dst.octets());
        f[34..36].copy_from_slice(&1234u16.to_be_bytes());
        f[36..38].copy_from_slice(&53u16.to_be_bytes());
        f[38..40].copy_from_slice(&(udp_len as u16).to_be_bytes());
        f[42..].copy_from_slice(payload);
        let pseudo = checksum::pseudo_header::<Ipv4>(src, dst, UDP, udp_len as u32);
        f[40..42].copy_from_slice(&pseudo.to_be_bytes());
        f
    }

    #[test]
    fn a_partial_udp_checksum_is_completed_to_the_full_one() {
        let mut frame = partial_udp4(b"hello, router");
        let src = Ipv4Addr::new(10, 0, 0, 1);
        let dst = Ipv4Addr::new(10, 0, 0, 2);
        assert!(complete_partial(&mut frame));
        let pseudo = checksum::pseudo_header::<Ipv4>(src, dst, UDP, 21);
        assert_eq!(checksum::add(pseudo, checksum::sum(&frame[34..])), 0xffff);
        // Anything else is left alone.
        let mut arp = vec![0u8; 42];
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert!(!complete_partial(&mut arp));
        let mut cut = partial_udp4(b"x");
        cut.truncate(40);
        let before = cut.clone();
        assert!(!complete_partial(&mut cut));
        assert_eq!(cut, before);
    }
}
