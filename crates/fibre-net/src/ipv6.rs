//! IPv6 fixed headers (RFC 8200 §3): a checked [`Packet`] view and its
//! [`Repr`]. Extension headers are payload to this module.
//!
//! Validation follows Linux's `ipv6_rcv`: at least 40 bytes, version 6,
//! `40 + payload length <= buffer length` (bytes past it are link padding).
//! Jumbograms (payload length 0 with a hop-by-hop Jumbo option) are not
//! supported: a payload length of 0 means an empty payload.
//!
//! ```
//! use fibre_net::{ipv6::{Packet, Repr}, ip::Protocol};
//! let repr = Repr {
//!     src_addr: "2001:db8::1".parse().unwrap(),
//!     dst_addr: "2001:db8::2".parse().unwrap(),
//!     next_header: Protocol::Udp,
//!     payload_len: 8,
//!     hop_limit: 64,
//!     traffic_class: 0,
//!     flow_label: 0x12345,
//! };
//! let mut buf = [0u8; 48];
//! repr.emit(&mut buf).unwrap();
//! let mut packet = Packet::new_checked(&mut buf[..]).unwrap();
//! assert_eq!(packet.decrement_hop_limit(), Some(63));
//! assert_eq!(Repr::parse(&packet).unwrap(), Repr { hop_limit: 63, ..repr });
//! ```

use std::net::Ipv6Addr;

use crate::ip::Protocol;
use crate::{Error, Result};

/// Length of the fixed header.
pub const HEADER_LEN: usize = 40;
/// The largest payload without a jumbogram option.
pub const MAX_PAYLOAD_LEN: usize = 65_535;
/// The largest flow label (20 bits).
pub const MAX_FLOW_LABEL: u32 = 0xf_ffff;

mod field {
    use core::ops::Range;
    pub const VER_TC_FLOW: Range<usize> = 0..4;
    pub const LENGTH: Range<usize> = 4..6;
    pub const NEXT_HEADER: usize = 6;
    pub const HOP_LIMIT: usize = 7;
    pub const SRC: Range<usize> = 8..24;
    pub const DST: Range<usize> = 24..40;
}

packet_view! {
    /// A read/write view of an IPv6 packet whose lengths were checked.
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer` after checking version and payload length against it.
    ///
    /// ```
    /// use fibre_net::{ipv6::Packet, Error};
    /// let mut h = [0u8; 40];
    /// h[0] = 0x60;
    /// assert!(Packet::new_checked(&h[..]).is_ok());
    /// h[5] = 1; // payload length 1, but no byte follows
    /// assert_eq!(Packet::new_checked(&h[..]).unwrap_err(), Error::Truncated);
    /// h[0] = 0x40;
    /// assert_eq!(Packet::new_checked(&h[..]).unwrap_err(), Error::BadVersion);
    /// ```
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let data = buffer.as_ref();
        crate::at_least(data, HEADER_LEN)?;
        if data[0] >> 4 != 6 {
            return Err(Error::BadVersion);
        }
        let payload_len = usize::from(u16::from_be_bytes([data[4], data[5]]));
        if HEADER_LEN + payload_len > data.len() {
            return Err(Error::Truncated);
        }
        Ok(Packet { buffer })
    }

    fn first_word(&self) -> u32 {
        let b = &self.bytes()[field::VER_TC_FLOW];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }

    /// The version field (6 for every checked packet).
    pub fn version(&self) -> u8 {
        self.bytes()[0] >> 4
    }

    /// Traffic class (DSCP << 2 | ECN).
    pub fn traffic_class(&self) -> u8 {
        (self.first_word() >> 20) as u8
    }

    /// Flow label (20 bits).
    pub fn flow_label(&self) -> u32 {
        self.first_word() & MAX_FLOW_LABEL
    }

    /// Payload length (extension headers included).
    pub fn payload_len(&self) -> usize {
        let b = &self.bytes()[field::LENGTH];
        usize::from(u16::from_be_bytes([b[0], b[1]]))
    }

    /// The first header after the fixed header.
    pub fn next_header(&self) -> Protocol {
        Protocol::from(self.bytes()[field::NEXT_HEADER])
    }

    /// Hop limit.
    pub fn hop_limit(&self) -> u8 {
        self.bytes()[field::HOP_LIMIT]
    }

    /// Source address.
    pub fn src_addr(&self) -> Ipv6Addr {
        addr_at(self.bytes(), field::SRC.start)
    }

    /// Destination address.
    pub fn dst_addr(&self) -> Ipv6Addr {
        addr_at(self.bytes(), field::DST.start)
    }

    /// The payload: `payload_len` bytes after the fixed header.
    pub fn payload(&self) -> &[u8] {
        let end = (HEADER_LEN + self.payload_len()).min(self.bytes().len());
        &self.bytes()[HEADER_LEN..end]
    }
}

fn addr_at(data: &[u8], at: usize) -> Ipv6Addr {
    let mut octets = [0u8; 16];
    octets.copy_from_slice(&data[at..at + 16]);
    Ipv6Addr::from(octets)
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the hop limit.
    pub fn set_hop_limit(&mut self, hop_limit: u8) {
        self.buffer.as_mut()[field::HOP_LIMIT] = hop_limit;
    }

    /// Sets the source address.
    pub fn set_src_addr(&mut self, addr: Ipv6Addr) {
        self.buffer.as_mut()[field::SRC].copy_from_slice(&addr.octets());
    }

    /// Sets the destination address.
    pub fn set_dst_addr(&mut self, addr: Ipv6Addr) {
        self.buffer.as_mut()[field::DST].copy_from_slice(&addr.octets());
    }

    /// Decrements the hop limit for forwarding (IPv6 has no header
    /// checksum). Returns the new value, or `None` (header untouched) when
    /// it is 0 or 1: the caller answers with ICMPv6 time exceeded, as
    /// Linux's `ip6_forward` does.
    pub fn decrement_hop_limit(&mut self) -> Option<u8> {
        let hop_limit = self.hop_limit();
        if hop_limit <= 1 {
            return None;
        }
        self.set_hop_limit(hop_limit - 1);
        Some(hop_limit - 1)
    }

    /// The payload, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = (HEADER_LEN + self.payload_len()).min(self.bytes().len());
        &mut self.buffer.as_mut()[HEADER_LEN..end]
    }
}

/// The meaning of an IPv6 fixed header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Source address.
    pub src_addr: Ipv6Addr,
    /// Destination address.
    pub dst_addr: Ipv6Addr,
    /// The first header after the fixed header.
    pub next_header: Protocol,
    /// Payload length in bytes.
    pub payload_len: usize,
    /// Hop limit.
    pub hop_limit: u8,
    /// Traffic class.
    pub traffic_class: u8,
    /// Flow label (20 bits).
    pub flow_label: u32,
}

impl Repr {
    /// Reads a checked packet (all checks were done by `new_checked`).
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<Repr> {
        Ok(Repr {
            src_addr: packet.src_addr(),
            dst_addr: packet.dst_addr(),
            next_header: packet.next_header(),
            payload_len: packet.payload_len(),
            hop_limit: packet.hop_limit(),
            traffic_class: packet.traffic_class(),
            flow_label: packet.flow_label(),
        })
    }

    /// The header length: always [`HEADER_LEN`].
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Header plus payload.
    pub const fn total_len(&self) -> usize {
        HEADER_LEN + self.payload_len
    }

    /// Writes the header into the front of `buf`; the payload must already
    /// follow it, so `buf` must hold at least [`Repr::total_len`] bytes.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        if self.payload_len > MAX_PAYLOAD_LEN || self.flow_label > MAX_FLOW_LABEL {
            return Err(Error::Unencodable);
        }
        if buf.len() < self.total_len() {
            return Err(Error::Truncated);
        }
        let first = (6u32 << 28) | (u32::from(self.traffic_class) << 20) | self.flow_label;
        buf[field::VER_TC_FLOW].copy_from_slice(&first.to_be_bytes());
        buf[field::LENGTH].copy_from_slice(&(self.payload_len as u16).to_be_bytes());
        buf[field::NEXT_HEADER] = self.next_header.into();
        buf[field::HOP_LIMIT] = self.hop_limit;
        buf[field::SRC].copy_from_slice(&self.src_addr.octets());
        buf[field::DST].copy_from_slice(&self.dst_addr.octets());
        Ok(())
    }
}

// Packet is its buffer; Repr stays well inside a cache line.
assert_layout!(view Packet, repr within 48);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// scapy 2.8: `IPv6(tc=184, fl=74565, hlim=64, src='2001:db8::1',
    /// dst='2001:db8::2')/UDP(sport=40000, dport=53)/Raw(load=b'hello')`.
    const UDP: [u8; 53] = [
        0x6b, 0x81, 0x23, 0x45, 0x00, 0x0d, 0x11, 0x40, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x9c, 0x40, 0x00, 0x35, 0x00,
        0x0d, 0xc4, 0x17, 0x68, 0x65, 0x6c, 0x6c, 0x6f,
    ];

    #[test]
    fn parses_captured_packet() {
        let packet = Packet::new_checked(&UDP[..]).unwrap();
        let repr = Repr::parse(&packet).unwrap();
        assert_eq!(repr.src_addr, "2001:db8::1".parse::<Ipv6Addr>().unwrap());
        assert_eq!(repr.dst_addr, "2001:db8::2".parse::<Ipv6Addr>().unwrap());
        assert_eq!(repr.next_header, Protocol::Udp);
        assert_eq!(
            (
                repr.traffic_class,
                repr.flow_label,
                repr.hop_limit,
                repr.payload_len
            ),
            (0xb8, 0x12345, 64, 13)
        );
        assert_eq!(packet.payload(), &UDP[40..]);
        let mut out = UDP;
        out[..40].fill(0);
        repr.emit(&mut out).unwrap();
        assert_eq!(out, UDP);
    }

    #[test]
    fn malformed_packets_are_refused() {
        crate::assert_prefixes_truncated(&UDP, UDP.len(), |b| Packet::new_checked(b).map(drop));
        for version in [0u8, 4, 5, 7, 15] {
            let mut b = UDP;
            b[0] = (version << 4) | (b[0] & 0x0f);
            assert_eq!(Packet::new_checked(&b[..]).unwrap_err(), Error::BadVersion);
        }
        let repr = Repr::parse(&Packet::new_checked(&UDP[..]).unwrap()).unwrap();
        let mut buf = [0u8; 100];
        assert_eq!(
            Repr {
                flow_label: 1 << 20,
                ..repr
            }
            .emit(&mut buf),
            Err(Error::Unencodable)
        );
        assert_eq!(
            Repr {
                payload_len: 65_536,
                ..repr
            }
            .emit(&mut buf),
            Err(Error::Unencodable)
        );
        assert_eq!(repr.emit(&mut buf[..52]), Err(Error::Truncated));
    }

    #[test]
    fn hop_limit_stops_at_one() {
        let mut b = UDP;
        b[7] = 2;
        let mut packet = Packet::new_checked(&mut b[..]).unwrap();
        assert_eq!(packet.decrement_hop_limit(), Some(1));
        assert_eq!(packet.decrement_hop_limit(), None);
        assert_eq!(packet.hop_limit(), 1);
    }

    proptest! {
        #[test]
        fn parse_never_panics_and_round_trips(mut data in proptest::collection::vec(any::<u8>(), 0..80), fix in any::<bool>()) {
            if fix && data.len() >= HEADER_LEN {
                data[0] = 0x60 | (data[0] & 0x0f);
                let payload_len = (data.len() - HEADER_LEN) as u16;
                data[4..6].copy_from_slice(&payload_len.to_be_bytes());
            }
            if let Ok(packet) = Packet::new_checked(&data[..]) {
                let repr = Repr::parse(&packet).unwrap();
                let _ = packet.payload();
                let mut out = data.clone();
                out[..HEADER_LEN].fill(0);
                repr.emit(&mut out).unwrap();
                prop_assert_eq!(out, data);
            }
        }
    }
}
