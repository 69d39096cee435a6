//! The decoders under fuzz and the invariants they must keep, shared by
//! the libFuzzer targets (`fuzz_targets/`) and the bounded soak test
//! (`tests/soak.rs`), so both run exactly the same code.
//!
//! Any panic is a finding: parsing must refuse bad input with an error, and
//! whatever parses must re-emit to something that parses the same. Each
//! entry point returns the [`reached`] bits of the layers that parsed, so
//! the soak test can show that its inputs get past the checksums.

use fibre_net::ethernet::EtherType;
use fibre_net::ip::{Protocol, PseudoHeader};
use fibre_net::{gre, icmpv4, icmpv6, ipv4, ipv6, udp};

/// Which layers parsed (a bit set).
pub mod reached {
    /// An IPv4 header parsed (outer or tunnelled).
    pub const IPV4: u32 = 1 << 0;
    /// An IPv6 header parsed.
    pub const IPV6: u32 = 1 << 1;
    /// A UDP datagram parsed, checksum verified.
    pub const UDP: u32 = 1 << 2;
    /// An ICMPv4 message parsed.
    pub const ICMPV4: u32 = 1 << 3;
    /// An ICMPv6 message parsed.
    pub const ICMPV6: u32 = 1 << 4;
    /// A GRE header parsed.
    pub const GRE: u32 = 1 << 5;
    /// A GRE header with a verified checksum parsed.
    pub const GRE_CSUM: u32 = 1 << 6;
    /// An IP packet inside GRE parsed.
    pub const TUNNELLED: u32 = 1 << 7;
}

/// Bytes as a GRE header plus payload (an outer IP payload), as they are
/// and again with the checksums (GRE's and the tunnelled packet's) repaired.
pub fn gre(data: &[u8]) -> u32 {
    let mut repaired = data.to_vec();
    repair_gre(&mut repaired);
    decode_gre(data) | decode_gre(&repaired)
}

fn decode_gre(data: &[u8]) -> u32 {
    let Ok(packet) = gre::Packet::new_checked(data) else {
        return 0;
    };
    assert!(packet.header_len() <= data.len());
    assert_eq!(packet.header_len() + packet.payload().len(), data.len());
    assert_eq!(packet.version(), 0);
    let Ok(repr) = gre::Repr::parse(&packet) else {
        assert!(packet.checksum_present(), "only a checksum can fail here");
        return 0;
    };
    assert_eq!(repr.header_len(), packet.header_len());
    // Re-emit over the same payload: it must parse to the same meaning, and
    // be byte-identical when the ignored bits were zero.
    let mut out = data.to_vec();
    repr.emit(&mut out)
        .expect("a parsed header fits where it came from");
    let again = gre::Packet::new_checked(&out[..]).expect("emitted GRE is well formed");
    assert_eq!(gre::Repr::parse(&again), Ok(repr));
    if packet.reserved0() == 0 && packet.reserved1().unwrap_or(0) == 0 {
        let same_csum_encoding = packet.checksum() == again.checksum();
        // 0x0000 and 0xffff are both a valid checksum for some messages.
        if same_csum_encoding {
            assert_eq!(out, data);
        }
    }
    let csum = if repr.csum { reached::GRE_CSUM } else { 0 };
    reached::GRE | csum | inner(repr.protocol, packet.payload())
}

/// Bytes as an IPv4 or IPv6 packet (chosen by the version nibble), as
/// they are and again with every checksum repaired, so that mutations reach
/// the layers behind the checksums instead of stopping at the first one.
pub fn ip(data: &[u8]) -> u32 {
    let mut repaired = data.to_vec();
    repair_ip(&mut repaired);
    decode_ip(data) | decode_ip(&repaired)
}

fn decode_ip(data: &[u8]) -> u32 {
    match data.first().map(|b| b >> 4) {
        Some(4) => ip4(data),
        Some(6) => ip6(data),
        _ => {
            assert!(ipv4::Packet::new_checked(data).is_err());
            assert!(ipv6::Packet::new_checked(data).is_err());
            0
        }
    }
}

fn inner(protocol: EtherType, payload: &[u8]) -> u32 {
    let found = match protocol {
        EtherType::Ipv4 => ip4(payload),
        EtherType::Ipv6 => ip6(payload),
        _ => 0,
    };
    if found & (reached::IPV4 | reached::IPV6) != 0 {
        found | reached::TUNNELLED
    } else {
        found
    }
}

fn ip4(data: &[u8]) -> u32 {
    let Ok(packet) = ipv4::Packet::new_checked(data) else {
        return 0;
    };
    assert!(packet.header_len() <= packet.total_len() && packet.total_len() <= data.len());
    let Ok(repr) = ipv4::Repr::parse(&packet) else {
        return 0;
    };
    assert_eq!(repr.total_len(), packet.total_len());
    let mut out = data[..repr.total_len()].to_vec();
    repr.emit(&mut out).expect("a parsed header re-emits");
    let again = ipv4::Packet::new_checked(&out[..]).expect("emitted IPv4 is well formed");
    assert_eq!(ipv4::Repr::parse(&again), Ok(repr));
    if !packet.reserved_flag() && packet.checksum() == again.checksum() {
        assert_eq!(out, &data[..repr.total_len()]);
    }
    // Forwarding: the incremental checksum update must keep the header valid.
    let mut forwarded = out.clone();
    let mut fwd = ipv4::Packet::new_checked(&mut forwarded[..]).expect("still well formed");
    if fwd.decrement_ttl().is_some() {
        assert!(fwd.verify_checksum(), "RFC 1624 update broke the checksum");
    }
    if packet.frag_offset() != 0 {
        return reached::IPV4; // no upper-layer header in a non-first fragment
    }
    let pseudo = PseudoHeader::V4 {
        src: repr.src_addr,
        dst: repr.dst_addr,
    };
    reached::IPV4 | upper(repr.protocol, pseudo, packet.payload())
}

fn ip6(data: &[u8]) -> u32 {
    let Ok(packet) = ipv6::Packet::new_checked(data) else {
        return 0;
    };
    let repr = ipv6::Repr::parse(&packet).expect("a checked IPv6 header always parses");
    let mut out = data[..repr.total_len()].to_vec();
    repr.emit(&mut out).expect("a parsed header re-emits");
    assert_eq!(out, &data[..repr.total_len()]);
    let pseudo = PseudoHeader::V6 {
        src: repr.src_addr,
        dst: repr.dst_addr,
    };
    reached::IPV6 | upper(repr.next_header, pseudo, packet.payload())
}

fn upper(protocol: Protocol, pseudo: PseudoHeader, payload: &[u8]) -> u32 {
    match (protocol, pseudo) {
        (Protocol::Udp, _) => udp_datagram(pseudo, payload),
        (Protocol::Icmp, _) => icmp4(payload),
        (Protocol::Icmpv6, PseudoHeader::V6 { src, dst }) => icmp6(src, dst, payload),
        (Protocol::Gre, _) => decode_gre(payload),
        _ => 0,
    }
}

fn udp_datagram(pseudo: PseudoHeader, data: &[u8]) -> u32 {
    let Ok(packet) = udp::Packet::new_checked(data) else {
        return 0;
    };
    let Ok(repr) = udp::Repr::parse(&packet, &pseudo) else {
        return 0;
    };
    let mut out = data[..packet.len()].to_vec();
    repr.emit(&mut out, &pseudo)
        .expect("a parsed header re-emits");
    let again = udp::Packet::new_checked(&out[..]).expect("emitted UDP is well formed");
    assert_eq!(udp::Repr::parse(&again, &pseudo), Ok(repr));
    reached::UDP
}

fn icmp4(data: &[u8]) -> u32 {
    let Ok(packet) = icmpv4::Packet::new_checked(data) else {
        return 0;
    };
    let Ok(repr) = icmpv4::Repr::parse(&packet) else {
        return 0;
    };
    let mut out = vec![0u8; repr.buffer_len()];
    repr.emit(&mut out).expect("sized by buffer_len");
    let again = icmpv4::Packet::new_checked(&out[..]).expect("emitted ICMP is well formed");
    assert_eq!(icmpv4::Repr::parse(&again), Ok(repr));
    reached::ICMPV4
}

fn icmp6(src: std::net::Ipv6Addr, dst: std::net::Ipv6Addr, data: &[u8]) -> u32 {
    let Ok(packet) = icmpv6::Packet::new_checked(data) else {
        return 0;
    };
    let Ok(repr) = icmpv6::Repr::parse(&packet, src, dst) else {
        return 0;
    };
    let mut out = vec![0u8; repr.buffer_len()];
    repr.emit(&mut out, src, dst).expect("sized by buffer_len");
    let again = icmpv6::Packet::new_checked(&out[..]).expect("emitted ICMPv6 is well formed");
    assert_eq!(icmpv6::Repr::parse(&again, src, dst), Ok(repr));
    reached::ICMPV6
}

/// Recomputes the checksums of an IP packet from the innermost layer out
/// (UDP, ICMP, tunnelled packets, GRE, then the IPv4 header).
pub fn repair_ip(data: &mut [u8]) {
    match data.first().map(|b| b >> 4) {
        Some(4) => {
            let Ok(mut packet) = ipv4::Packet::new_checked(&mut *data) else {
                return;
            };
            let pseudo = PseudoHeader::V4 {
                src: packet.src_addr(),
                dst: packet.dst_addr(),
            };
            let protocol = packet.protocol();
            if packet.frag_offset() == 0 {
                repair_upper(protocol, pseudo, packet.payload_mut());
            }
            packet.fill_checksum();
        }
        Some(6) => {
            let Ok(mut packet) = ipv6::Packet::new_checked(&mut *data) else {
                return;
            };
            let pseudo = PseudoHeader::V6 {
                src: packet.src_addr(),
                dst: packet.dst_addr(),
            };
            let protocol = packet.next_header();
            repair_upper(protocol, pseudo, packet.payload_mut());
        }
        _ => {}
    }
}

fn repair_upper(protocol: Protocol, pseudo: PseudoHeader, payload: &mut [u8]) {
    match protocol {
        Protocol::Udp => {
            if let Ok(mut packet) = udp::Packet::new_checked(payload) {
                packet.fill_checksum(&pseudo);
            }
        }
        Protocol::Icmp => {
            if let Ok(mut packet) = icmpv4::Packet::new_checked(payload) {
                packet.fill_checksum();
            }
        }
        Protocol::Icmpv6 => {
            if let (Ok(mut packet), PseudoHeader::V6 { src, dst }) =
                (icmpv6::Packet::new_checked(payload), pseudo)
            {
                packet.fill_checksum(src, dst);
            }
        }
        Protocol::Gre => repair_gre(payload),
        _ => {}
    }
}

/// Repairs the tunnelled packet, then the GRE checksum over it.
pub fn repair_gre(data: &mut [u8]) {
    if let Ok(mut packet) = gre::Packet::new_checked(data) {
        if matches!(packet.protocol(), EtherType::Ipv4 | EtherType::Ipv6) {
            repair_ip(packet.payload_mut());
        }
        packet.fill_checksum();
    }
}
