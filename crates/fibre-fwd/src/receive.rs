//! The receive checks before any route lookup, as the kernel makes them:
//! `eth_type_trans` (which station a frame is for, its EtherType), then
//! `ip_rcv_core` for IPv4 and `ip6_rcv_core` for IPv6. Each function only
//! reads the frame and answers what it found or why it is dropped.

use std::net::{Ipv4Addr, Ipv6Addr};

use fibre_base::DropReason;
use fibre_fib::{FlowKeyV4, FlowKeyV6};
use fibre_net::checksum;

/// Ethernet header length (the kernel's name for it).
pub(crate) use fibre_net::ethernet::HEADER_LEN as ETH_HLEN;

pub(crate) use fibre_net::ethernet::PacketType;

/// What a frame carries, by EtherType.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Payload {
    Ipv4,
    Ipv6,
    Arp,
    Other,
}

/// `eth_type_trans` for a frame received by a port with MAC `own`: whom it
/// is for and what it carries; `None` for a frame shorter than its header.
pub(crate) fn classify(frame: &[u8], own: [u8; 6]) -> Option<(PacketType, Payload)> {
    if frame.len() < ETH_HLEN {
        return None;
    }
    let dst = [frame[0], frame[1], frame[2], frame[3], frame[4], frame[5]];
    let kind = PacketType::of(dst, own);
    let payload = match u16::from_be_bytes([frame[12], frame[13]]) {
        0x0800 => Payload::Ipv4,
        0x86dd => Payload::Ipv6,
        0x0806 => Payload::Arp,
        _ => Payload::Other,
    };
    Some((kind, payload))
}

/// An IPv4 header that passed `ip_rcv_core`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ipv4Header {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    /// Header length in bytes.
    pub header_len: usize,
    /// The total length: the packet without the link layer's padding.
    pub total_len: usize,
    pub tos: u8,
    pub ttl: u8,
    pub protocol: u8,
    pub dont_fragment: bool,
    /// More fragments set or a fragment offset: not a whole datagram.
    pub fragment: bool,
    /// Non-zero fragment offset: not the datagram's first bytes.
    pub later_fragment: bool,
    /// The L4 ports of an unfragmented TCP or UDP packet (what the flow
    /// dissector gives `fib_multipath_hash` and port-matching rules).
    pub ports: Option<(u16, u16)>,
}

/// `ip_rcv_core` on `packet` (the frame after its Ethernet header): the
/// header fields, or why the kernel drops it. Order and reasons as the
/// kernel: shorter than a header, IHL below 5 or a version other than 4,
/// shorter than its IHL (`SKB_DROP_REASON_IP_INHDR`), a bad header checksum
/// (`IP_CSUM`), a total length beyond the frame (`PKT_TOO_SMALL`) or below
/// the header (`IP_INHDR`). Bytes past the total length are padding,
/// trimmed (`pskb_trim_rcsum`).
pub(crate) fn ipv4_header(packet: &[u8]) -> Result<Ipv4Header, DropReason> {
    if packet.len() < 20 {
        return Err(DropReason::BadIpHeader);
    }
    let version = packet[0] >> 4;
    let header_len = usize::from(packet[0] & 0x0f) * 4;
    if header_len < 20 || version != 4 {
        return Err(DropReason::BadIpHeader);
    }
    if packet.len() < header_len {
        return Err(DropReason::BadIpHeader);
    }
    if checksum::checksum(&packet[..header_len]) != 0 {
        return Err(DropReason::BadChecksum);
    }
    let total_len = usize::from(u16::from_be_bytes([packet[2], packet[3]]));
    if packet.len() < total_len {
        return Err(DropReason::Truncated);
    }
    if total_len < header_len {
        return Err(DropReason::BadIpHeader);
    }
    let flags_frag = u16::from_be_bytes([packet[6], packet[7]]);
    let fragment = flags_frag & 0x3fff != 0;
    let later_fragment = flags_frag & 0x1fff != 0;
    let protocol = packet[9];
    let ports = l4_ports(protocol, &packet[header_len..total_len]).filter(|_| !fragment);
    Ok(Ipv4Header {
        src: Ipv4Addr::new(packet[12], packet[13], packet[14], packet[15]),
        dst: Ipv4Addr::new(packet[16], packet[17], packet[18], packet[19]),
        header_len,
        total_len,
        tos: packet[1],
        ttl: packet[8],
        protocol,
        dont_fragment: flags_frag & 0x4000 != 0,
        fragment,
        later_fragment,
        ports,
    })
}

/// An IPv6 header that passed `ip6_rcv_core`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ipv6Header {
    pub src: Ipv6Addr,
    pub dst: Ipv6Addr,
    /// Header and payload: the packet without the link layer's padding.
    pub total_len: usize,
    pub traffic_class: u8,
    pub hop_limit: u8,
    pub next_header: u8,
    pub ports: Option<(u16, u16)>,
}

impl Ipv4Header {
    /// The FIB's lookup key of this packet (no mark or interface: the
    /// caller's form adds them).
    pub(crate) fn flow_key(&self) -> FlowKeyV4 {
        FlowKeyV4 {
            dst: u32::from(self.dst),
            src: u32::from(self.src),
            tos: self.tos,
            proto: self.protocol,
            sport: self.ports.map_or(0, |p| p.0),
            dport: self.ports.map_or(0, |p| p.1),
            ..FlowKeyV4::default()
        }
    }
}

impl Ipv6Header {
    /// The FIB's lookup key of this packet.
    pub(crate) fn flow_key(&self) -> FlowKeyV6 {
        FlowKeyV6 {
            dst: u128::from(self.dst),
            src: u128::from(self.src),
            tos: self.traffic_class,
            proto: self.next_header,
            sport: self.ports.map_or(0, |p| p.0),
            dport: self.ports.map_or(0, |p| p.1),
            ..FlowKeyV6::default()
        }
    }
}

/// `ip6_rcv_core` on `packet` (the frame after its Ethernet header) received
/// by a port that is not a loopback device: the header fields, or why the
/// kernel drops it. Shorter than a header: `IP_INHDR`; a version other than
/// 6: `UNHANDLED_PROTO`; a loopback source or destination, an
/// interface-local multicast destination, a multicast source (RFC 4291
/// sections 2.5.3, 2.7): `IP_INHDR`; a payload length
/// beyond the frame: `PKT_TOO_SMALL`. Bytes past it are padding, trimmed.
/// A zero payload length with a hop-by-hop header is what a jumbogram
/// carries (RFC 2675): `ip6_rcv_core` then trims nothing, and the packet
/// is all the frame holds after the Ethernet header, whether or not a
/// jumbo payload option follows (`ipv6_hop_jumbo` checks only packets
/// that have one; the oracle's hop-by-hop headers hold a PadN alone). A
/// hop-by-hop header shorter than 8 bytes or than its length field says
/// fails `ipv6_parse_hopopts`: `IP_INHDR`.
///
/// An IPv4-mapped source (`::ffff:a.b.c.d`) passes: the reference kernel
/// (6.18) forwards such packets, answers their echo requests and sends
/// them errors (kernel-checked by the forwarding oracle, seed 1: 164
/// frames), so its `ip6_rcv_core` refuses multicast sources, not mapped
/// ones.
pub(crate) fn ipv6_header(packet: &[u8]) -> Result<Ipv6Header, DropReason> {
    if packet.len() < 40 {
        return Err(DropReason::BadIpHeader);
    }
    if packet[0] >> 4 != 6 {
        return Err(DropReason::UnknownProtocol);
    }
    let mut src = [0u8; 16];
    src.copy_from_slice(&packet[8..24]);
    let mut dst = [0u8; 16];
    dst.copy_from_slice(&packet[24..40]);
    let (src, dst) = (Ipv6Addr::from(src), Ipv6Addr::from(dst));
    if src.is_loopback() || dst.is_loopback() {
        return Err(DropReason::MartianAddress);
    }
    // Interface-local scope (ff01::/16 and the like) never arrives from a wire.
    if dst.is_multicast() && dst.octets()[1] & 0x0f == 1 {
        return Err(DropReason::MartianAddress);
    }
    if src.is_multicast() {
        return Err(DropReason::MartianAddress);
    }
    let payload_len = usize::from(u16::from_be_bytes([packet[4], packet[5]]));
    let next_header = packet[6];
    let total_len = if payload_len == 0 && next_header == NEXTHDR_HOP {
        packet.len()
    } else {
        40 + payload_len
    };
    if packet.len() < total_len {
        return Err(DropReason::Truncated);
    }
    if next_header == NEXTHDR_HOP {
        // `ipv6_parse_hopopts`: 8 bytes, then the length the header gives.
        let whole = packet[..total_len]
            .get(41)
            .is_some_and(|&len| 40 + ((usize::from(len) + 1) << 3) <= total_len);
        if total_len < 48 || !whole {
            return Err(DropReason::BadIpHeader);
        }
    }
    Ok(Ipv6Header {
        src,
        dst,
        total_len,
        traffic_class: (u16::from_be_bytes([packet[0], packet[1]]) >> 4) as u8,
        hop_limit: packet[7],
        next_header,
        ports: l4_ports(next_header, &packet[40..total_len]),
    })
}

/// The next header value of a hop-by-hop options header.
const NEXTHDR_HOP: u8 = 0;

/// The source and destination ports of a TCP (6) or UDP (17) header at
/// the start of `l4`, if whole enough to hold them.
fn l4_ports(protocol: u8, l4: &[u8]) -> Option<(u16, u16)> {
    match protocol {
        6 | 17 if l4.len() >= 4 => Some((
            u16::from_be_bytes([l4[0], l4[1]]),
            u16::from_be_bytes([l4[2], l4[3]]),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(total_len: u16) -> Vec<u8> {
        let mut h = vec![
            0x45, 0, 0, 0, 0, 1, 0, 0, 64, 17, 0, 0, 10, 0, 0, 9, 192, 0, 2, 7,
        ];
        h[2..4].copy_from_slice(&total_len.to_be_bytes());
        let c = checksum::checksum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        h.resize(usize::from(total_len).max(20), 0);
        h
    }

    #[test]
    fn ipv4_checks_come_in_the_kernels_order() {
        let good = header(28);
        assert_eq!(ipv4_header(&good).unwrap().total_len, 28);
        // Padding after the total length is trimmed.
        let mut padded = good.clone();
        padded.resize(46, 0);
        assert_eq!(ipv4_header(&padded).unwrap().total_len, 28);
        assert_eq!(ipv4_header(&good[..19]), Err(DropReason::BadIpHeader));
        let mut v6 = good.clone();
        v6[0] = 0x65;
        assert_eq!(ipv4_header(&v6), Err(DropReason::BadIpHeader));
        let mut ihl4 = good.clone();
        ihl4[0] = 0x44;
        assert_eq!(ipv4_header(&ihl4), Err(DropReason::BadIpHeader));
        let mut bad_sum = good.clone();
        bad_sum[10] ^= 1;
        assert_eq!(ipv4_header(&bad_sum), Err(DropReason::BadChecksum));
        // Checksum is checked before the length (a truncated frame whose
        // header checks is PKT_TOO_SMALL).
        assert_eq!(ipv4_header(&good[..27]), Err(DropReason::Truncated));
        let short = header(19);
        assert_eq!(ipv4_header(&short), Err(DropReason::BadIpHeader));
    }

    #[test]
    fn frames_are_classified_by_destination_mac() {
        let own = [2, 0, 0, 0, 0, 1];
        let mut f = [0u8; 14];
        f[..6].copy_from_slice(&own);
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        assert_eq!(classify(&f, own), Some((PacketType::Host, Payload::Ipv4)));
        f[..6].copy_from_slice(&[0xff; 6]);
        assert_eq!(classify(&f, own).unwrap().0, PacketType::Broadcast);
        f[..6].copy_from_slice(&[0x33, 0x33, 0, 0, 0, 1]);
        assert_eq!(classify(&f, own).unwrap().0, PacketType::Multicast);
        f[..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        f[12..14].copy_from_slice(&[0x88, 0xcc]);
        assert_eq!(
            classify(&f, own),
            Some((PacketType::OtherHost, Payload::Other))
        );
        assert_eq!(classify(&f[..13], own), None);
    }
}
