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

/// Completes the partial checksum a `virtio_net_hdr` with
/// `VIRTIO_NET_HDR_F_NEEDS_CSUM` describes, as `skb_checksum_help` does:
/// the sum from `start` to the end of the IP packet (the frame's end when
/// it is not IPv4 or IPv6) written, folded and complemented, at
/// `start + offset` (a 0 written as 0xffff, `CSUM_MANGLED_0`); false,
/// leaving the frame as it is, when the offsets do not fit the packet.
pub(crate) fn complete_at(frame: &mut [u8], start: usize, offset: usize) -> bool {
    let end = ip_end(frame).unwrap_or(frame.len()).min(frame.len());
    if start + offset + 2 > end {
        return false;
    }
    let sum = match checksum::checksum(&frame[start..end]) {
        0 => 0xffff,
        sum => sum,
    };
    frame[start + offset..start + offset + 2].copy_from_slice(&sum.to_be_bytes());
    true
}

/// Where the IPv4 or IPv6 packet in Ethernet frame `frame` ends, by its
/// length field.
fn ip_end(frame: &[u8]) -> Option<usize> {
    match frame.get(12..14)? {
        t if t == IPV4 => {
            let length = frame.get(16..18)?;
            Some(14 + usize::from(u16::from_be_bytes([length[0], length[1]])))
        }
        t if t == IPV6 => {
            let ip = frame.get(14..54)?;
            Some(54 + usize::from(u16::from_be_bytes([ip[4], ip[5]])))
        }
        _ => None,
    }
}

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

#[cfg(test)]
mod needs_csum_tests {
    use super::*;

    #[test]
    fn a_needs_csum_header_completes_the_checksum_where_it_says() {
        // A UDP/IPv4 frame with the pseudo-header sum in its field, and
        // two bytes of Ethernet padding past the IP packet.
        let mut frame = vec![0u8; 14 + 20 + 8 + 5 + 2];
        frame[12..14].copy_from_slice(&IPV4);
        frame[14] = 0x45;
        frame[16..18].copy_from_slice(&33u16.to_be_bytes());
        frame[23] = UDP;
        frame[26..30].copy_from_slice(&[10, 0, 0, 1]);
        frame[30..34].copy_from_slice(&[10, 0, 0, 2]);
        frame[38..40].copy_from_slice(&13u16.to_be_bytes());
        frame[42..47].copy_from_slice(b"hello");
        frame[47..49].copy_from_slice(&[0xaa, 0xbb]);
        let pseudo = checksum::add(checksum::sum(&frame[26..34]), 17 + 13);
        frame[40..42].copy_from_slice(&pseudo.to_be_bytes());
        assert!(complete_at(&mut frame, 34, 6));
        let whole = checksum::add(
            checksum::add(checksum::sum(&frame[26..34]), 17 + 13),
            checksum::sum(&frame[34..47]),
        );
        assert_eq!(whole, 0xffff);
        // Offsets past the packet: refused, nothing written.
        let before = frame.clone();
        assert!(!complete_at(&mut frame, 34, 20));
        assert!(!complete_at(&mut frame, 100, 0));
        assert_eq!(frame, before);
    }
}
