//! GRE receive: everything about one frame that needs no tunnel state.
//!
//! Kept a pure function of (policy, bytes) so the fuzz target and the soak
//! test drive exactly what the tunnel runs.

use std::net::IpAddr;

use fibre_net::ethernet::{self, EtherType};
use fibre_net::ip::Protocol;
use fibre_net::{gre, ipv4, ipv6, Error};

use super::tunnel::{ECN_CE, ECN_MASK};
use crate::DropReason;

/// What a tunnel accepts on receipt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxPolicy {
    /// Outer destination required (any of ours when `None`).
    pub local: Option<IpAddr>,
    /// Outer source required.
    pub remote: IpAddr,
    /// Key required (`None`: packets carrying a key are refused, as Linux's
    /// tunnel lookup finds no keyless match for them).
    pub ikey: Option<u32>,
    /// A checksum is required.
    pub icsum: bool,
    /// A sequence number is required (ordering is the tunnel's job).
    pub iseq: bool,
    /// Ethernet payload (gretap) expected rather than IP.
    pub tap: bool,
}

/// A frame that passed every stateless check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decapsulated {
    /// Bytes of outer IP and GRE header in front of the inner packet.
    pub header_len: usize,
    /// Length of the inner packet (trailing padding after the outer
    /// packet's length is excluded).
    pub inner_len: usize,
    /// Inner protocol (IPv4, IPv6, or transparent Ethernet for a tap).
    pub protocol: EtherType,
    /// Sequence number, if carried.
    pub seq: Option<u32>,
    /// The outer header says Congestion Experienced and the inner packet is
    /// ECN-capable: the receiver must mark the inner packet CE (RFC 6040).
    pub set_ce: bool,
}

/// A tunnel's outer header: anything but a short buffer is a bad outer
/// header, whatever part of it was wrong.
fn outer_error(e: Error) -> DropReason {
    match DropReason::from(e) {
        DropReason::Truncated => DropReason::Truncated,
        _ => DropReason::BadOuterHeader,
    }
}

/// Checks an outer IP + GRE frame against `policy`, in Linux's order:
/// outer header, addresses and protocol, GRE version/routing/length,
/// checksum, key, then the inner protocol. Returns where the inner packet
/// starts, or the one reason it is dropped. Never panics, whatever the
/// bytes.
///
/// ```
/// use fibre_dev::gre::{decapsulate, RxPolicy};
/// use fibre_dev::DropReason;
/// let policy = RxPolicy { local: None, remote: "192.0.2.2".parse().unwrap(), ikey: None,
///                         icsum: false, iseq: false, tap: false };
/// assert_eq!(decapsulate(&policy, &[0x45, 0, 0]), Err(DropReason::Truncated));
/// ```
pub fn decapsulate(policy: &RxPolicy, frame: &[u8]) -> Result<Decapsulated, DropReason> {
    let (src, dst, protocol, header_len, payload, outer_ecn) = match frame.first().map(|b| b >> 4) {
        Some(4) => {
            let packet = ipv4::Packet::new_checked(frame).map_err(outer_error)?;
            let repr = ipv4::Repr::parse(&packet).map_err(outer_error)?;
            if repr.more_frags || repr.frag_offset != 0 {
                // No reassembly here: a fragment is not a whole GRE packet.
                return Err(DropReason::BadOuterHeader);
            }
            let header_len = packet.header_len();
            (
                IpAddr::V4(repr.src_addr),
                IpAddr::V4(repr.dst_addr),
                repr.protocol,
                header_len,
                frame
                    .get(header_len..header_len + repr.payload_len)
                    .ok_or(DropReason::Truncated)?,
                repr.tos & ECN_MASK,
            )
        }
        Some(6) => {
            let packet = ipv6::Packet::new_checked(frame).map_err(outer_error)?;
            let payload_len = packet.payload_len();
            (
                IpAddr::V6(packet.src_addr()),
                IpAddr::V6(packet.dst_addr()),
                packet.next_header(),
                ipv6::HEADER_LEN,
                frame
                    .get(ipv6::HEADER_LEN..ipv6::HEADER_LEN + payload_len)
                    .ok_or(DropReason::Truncated)?,
                packet.traffic_class() & ECN_MASK,
            )
        }
        Some(_) => return Err(DropReason::BadOuterHeader),
        None => return Err(DropReason::Truncated),
    };
    // IPv6 extension headers are not walked: GRE must follow directly.
    if protocol != Protocol::Gre
        || src != policy.remote
        || policy.local.is_some_and(|local| local != dst)
    {
        return Err(DropReason::NotForTunnel);
    }
    // The GRE header: version, routing bit or length (a short one).
    let packet = gre::Packet::new_checked(payload).map_err(|e| match DropReason::from(e) {
        reason @ (DropReason::BadVersion | DropReason::RoutingPresent) => reason,
        _ => DropReason::Truncated,
    })?;
    let repr = gre::Repr::parse(&packet).map_err(|_| DropReason::BadChecksum)?;
    if policy.icsum && !repr.csum {
        return Err(DropReason::ChecksumMissing);
    }
    if repr.key != policy.ikey {
        return Err(DropReason::KeyMismatch);
    }
    if policy.iseq && repr.seq.is_none() {
        return Err(DropReason::SeqMissing);
    }
    let inner = packet.payload();
    if policy.tap || repr.protocol == EtherType::TransparentEthernet {
        if !policy.tap || repr.protocol != EtherType::TransparentEthernet {
            return Err(DropReason::UnknownProtocol);
        }
        if inner.len() < ethernet::HEADER_LEN {
            return Err(DropReason::Truncated);
        }
        return Ok(Decapsulated {
            header_len: header_len + packet.header_len(),
            inner_len: inner.len(),
            protocol: repr.protocol,
            seq: repr.seq,
            // No ECN field to carry the mark in an Ethernet payload.
            set_ce: false,
        });
    }
    let (version, min_len) = match repr.protocol {
        EtherType::Ipv4 => (4, ipv4::MIN_HEADER_LEN),
        EtherType::Ipv6 => (6, ipv6::HEADER_LEN),
        _ => return Err(DropReason::UnknownProtocol),
    };
    match inner.first() {
        Some(first) if first >> 4 != version => return Err(DropReason::UnknownProtocol),
        _ if inner.len() < min_len => return Err(DropReason::Truncated),
        _ => {}
    }
    // RFC 6040 decapsulation, as Linux's INET_ECN_decapsulate: CE over a
    // Not-ECT inner packet cannot be passed on, so the packet is dropped;
    // CE over an ECN-capable one is copied in.
    let inner_ecn = if version == 4 {
        inner[1] & ECN_MASK
    } else {
        (inner[1] >> 4) & ECN_MASK
    };
    let outer_ce = outer_ecn == ECN_CE;
    if outer_ce && inner_ecn == 0 {
        return Err(DropReason::EcnCeOnNotEct);
    }
    Ok(Decapsulated {
        header_len: header_len + packet.header_len(),
        inner_len: inner.len(),
        protocol: repr.protocol,
        seq: repr.seq,
        set_ce: outer_ce && inner_ecn != ECN_CE,
    })
}
