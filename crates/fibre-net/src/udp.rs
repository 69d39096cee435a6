//! UDP (RFC 768) with its checksum over the IPv4 or IPv6 pseudo-header.
//!
//! Validation follows Linux's `__udp4_lib_rcv`/`__udp6_lib_rcv`: at least
//! 8 bytes, `8 <= length field <= buffer` (bytes past the length field are
//! ignored), checksum verified. A zero checksum means "none" over IPv4 and
//! is refused over IPv6 (RFC 8200 §8.1).
//!
//! ```
//! use fibre_net::{udp, ip::PseudoHeader};
//! let pseudo = PseudoHeader::V6 { src: "2001:db8::1".parse().unwrap(), dst: "2001:db8::2".parse().unwrap() };
//! let repr = udp::Repr { src_port: 40000, dst_port: 53, payload_len: 5 };
//! let mut buf = [0u8; 13];
//! buf[8..].copy_from_slice(b"hello");
//! repr.emit(&mut buf, &pseudo).unwrap();
//! let packet = udp::Packet::new_checked(&buf[..]).unwrap();
//! assert_eq!(udp::Repr::parse(&packet, &pseudo).unwrap(), repr);
//! assert_eq!(packet.payload(), b"hello");
//! ```

use crate::checksum;
use crate::ip::{Protocol, PseudoHeader};
use crate::{Error, Result};

/// Length of the UDP header.
pub const HEADER_LEN: usize = 8;

mod field {
    use core::ops::Range;
    pub const SRC_PORT: Range<usize> = 0..2;
    pub const DST_PORT: Range<usize> = 2..4;
    pub const LENGTH: Range<usize> = 4..6;
    pub const CHECKSUM: Range<usize> = 6..8;
}

packet_view! {
    /// A read/write view of a UDP datagram whose length field was checked.
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer` (the IP payload) after checking the length field.
    ///
    /// ```
    /// use fibre_net::{udp::Packet, Error};
    /// assert_eq!(Packet::new_checked(&[0, 1, 0, 2, 0, 7, 0, 0][..]).unwrap_err(), Error::BadLength);
    /// assert_eq!(Packet::new_checked(&[0, 1, 0, 2, 0, 9, 0, 0][..]).unwrap_err(), Error::Truncated);
    /// ```
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let data = buffer.as_ref();
        crate::at_least(data, HEADER_LEN)?;
        let len = usize::from(u16::from_be_bytes([data[4], data[5]]));
        if len < HEADER_LEN {
            return Err(Error::BadLength);
        }
        if len > data.len() {
            return Err(Error::Truncated);
        }
        Ok(Packet { buffer })
    }

    /// Source port.
    pub fn src_port(&self) -> u16 {
        self.be16(field::SRC_PORT.start)
    }

    /// Destination port.
    pub fn dst_port(&self) -> u16 {
        self.be16(field::DST_PORT.start)
    }

    /// The length field: header plus payload.
    pub fn len(&self) -> usize {
        usize::from(self.be16(field::LENGTH.start))
    }

    /// Never true for a checked packet (the length is at least 8).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The checksum field (0: none, IPv4 only).
    pub fn checksum(&self) -> u16 {
        self.be16(field::CHECKSUM.start)
    }

    /// The payload, up to the length field.
    pub fn payload(&self) -> &[u8] {
        let end = self.len().min(self.buffer.as_ref().len());
        &self.buffer.as_ref()[HEADER_LEN.min(end)..end]
    }

    /// True if the checksum verifies against `pseudo`; a zero checksum
    /// verifies over IPv4 (no checksum) and fails over IPv6.
    pub fn verify_checksum(&self, pseudo: &PseudoHeader) -> bool {
        if self.checksum() == 0 {
            return !pseudo.is_v6();
        }
        self.sum(pseudo) == 0xffff
    }

    fn sum(&self, pseudo: &PseudoHeader) -> u16 {
        let end = self.len().min(self.buffer.as_ref().len());
        let header = pseudo.sum(Protocol::Udp, end as u32);
        checksum::add(header, checksum::sum(&self.buffer.as_ref()[..end]))
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the source port (refill the checksum afterwards).
    pub fn set_src_port(&mut self, port: u16) {
        self.buffer.as_mut()[field::SRC_PORT].copy_from_slice(&port.to_be_bytes());
    }

    /// Sets the destination port (refill the checksum afterwards).
    pub fn set_dst_port(&mut self, port: u16) {
        self.buffer.as_mut()[field::DST_PORT].copy_from_slice(&port.to_be_bytes());
    }

    /// Recomputes the checksum; a computed 0 is sent as 0xffff (RFC 768).
    pub fn fill_checksum(&mut self, pseudo: &PseudoHeader) {
        self.buffer.as_mut()[field::CHECKSUM].fill(0);
        let value = match !self.sum(pseudo) {
            0 => 0xffff,
            v => v,
        };
        self.buffer.as_mut()[field::CHECKSUM].copy_from_slice(&value.to_be_bytes());
    }

    /// The payload, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = self.len().min(self.buffer.as_ref().len());
        &mut self.buffer.as_mut()[HEADER_LEN.min(end)..end]
    }
}

/// The meaning of a UDP header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Payload length in bytes.
    pub payload_len: usize,
}

impl Repr {
    /// Reads a checked packet, verifying its checksum against `pseudo`.
    ///
    /// ```
    /// use fibre_net::{udp, ip::PseudoHeader, Error};
    /// let v6 = PseudoHeader::V6 { src: "::1".parse().unwrap(), dst: "::2".parse().unwrap() };
    /// let bytes = [0, 1, 0, 2, 0, 8, 0, 0]; // checksum 0
    /// let packet = udp::Packet::new_checked(&bytes[..]).unwrap();
    /// assert_eq!(udp::Repr::parse(&packet, &v6).unwrap_err(), Error::ZeroUdpChecksum);
    /// ```
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>, pseudo: &PseudoHeader) -> Result<Repr> {
        if packet.checksum() == 0 && pseudo.is_v6() {
            return Err(Error::ZeroUdpChecksum);
        }
        if !packet.verify_checksum(pseudo) {
            return Err(Error::BadChecksum);
        }
        Ok(Repr {
            src_port: packet.src_port(),
            dst_port: packet.dst_port(),
            payload_len: packet.len() - HEADER_LEN,
        })
    }

    /// The header length: always [`HEADER_LEN`].
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header into the front of `buf`, whose next `payload_len`
    /// bytes are the payload already in place, and fills the checksum.
    pub fn emit(&self, buf: &mut [u8], pseudo: &PseudoHeader) -> Result<()> {
        let len = HEADER_LEN + self.payload_len;
        if len > usize::from(u16::MAX) {
            return Err(Error::Unencodable);
        }
        if buf.len() < len {
            return Err(Error::Truncated);
        }
        let buf = &mut buf[..len];
        buf[field::SRC_PORT].copy_from_slice(&self.src_port.to_be_bytes());
        buf[field::DST_PORT].copy_from_slice(&self.dst_port.to_be_bytes());
        buf[field::LENGTH].copy_from_slice(&(len as u16).to_be_bytes());
        let mut packet = Packet { buffer: buf };
        packet.fill_checksum(pseudo);
        Ok(())
    }
}

// Packet is its buffer; Repr stays well inside a cache line.
assert_layout!(view Packet, repr within 16);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn v4() -> PseudoHeader {
        PseudoHeader::V4 {
            src: Ipv4Addr::new(192, 0, 2, 1),
            dst: Ipv4Addr::new(198, 51, 100, 2),
        }
    }

    fn v6() -> PseudoHeader {
        PseudoHeader::V6 {
            src: "2001:db8::1".parse().unwrap(),
            dst: "2001:db8::2".parse().unwrap(),
        }
    }

    /// UDP parts of scapy 2.8 packets `IP(src='192.0.2.1',
    /// dst='198.51.100.2')/UDP(sport=40000, dport=53)/b'hello'` and the same
    /// over `IPv6(src='2001:db8::1', dst='2001:db8::2')`.
    const OVER_V4: [u8; 13] = [
        0x9c, 0x40, 0x00, 0x35, 0x00, 0x0d, 0x33, 0x55, 0x68, 0x65, 0x6c, 0x6c, 0x6f,
    ];
    const OVER_V6: [u8; 13] = [
        0x9c, 0x40, 0x00, 0x35, 0x00, 0x0d, 0xc4, 0x17, 0x68, 0x65, 0x6c, 0x6c, 0x6f,
    ];

    #[test]
    fn parses_and_reproduces_captured_datagrams() {
        for (bytes, pseudo) in [(OVER_V4, v4()), (OVER_V6, v6())] {
            let packet = Packet::new_checked(&bytes[..]).unwrap();
            let repr = Repr::parse(&packet, &pseudo).unwrap();
            assert_eq!(
                repr,
                Repr {
                    src_port: 40000,
                    dst_port: 53,
                    payload_len: 5
                }
            );
            let mut out = bytes;
            out[..8].fill(0);
            repr.emit(&mut out, &pseudo).unwrap();
            assert_eq!(out, bytes);
            // The wrong pseudo-header fails.
            let other = if pseudo.is_v6() { v4() } else { v6() };
            assert_eq!(Repr::parse(&packet, &other), Err(Error::BadChecksum));
        }
    }

    #[test]
    fn malformed_datagrams_are_refused() {
        crate::assert_prefixes_truncated(&OVER_V4, OVER_V4.len(), |b| {
            Packet::new_checked(b).map(drop)
        });
        for field_len in 0..8u8 {
            let mut b = OVER_V4;
            b[5] = field_len;
            assert_eq!(Packet::new_checked(&b[..]).unwrap_err(), Error::BadLength);
        }
        for byte in 0..OVER_V4.len() {
            let mut b = OVER_V4;
            b[byte] ^= 0x10;
            if let Ok(packet) = Packet::new_checked(&b[..]) {
                assert_eq!(Repr::parse(&packet, &v4()), Err(Error::BadChecksum));
            }
        }
        // Checksum 0: "none" over IPv4, forbidden over IPv6.
        let mut b = OVER_V4;
        b[6..8].fill(0);
        let packet = Packet::new_checked(&b[..]).unwrap();
        assert!(Repr::parse(&packet, &v4()).is_ok());
        assert_eq!(Repr::parse(&packet, &v6()), Err(Error::ZeroUdpChecksum));
    }

    #[test]
    fn computed_zero_is_sent_as_all_ones() {
        // Pick a payload word that makes the sum 0xffff, i.e. checksum 0.
        let repr = Repr {
            src_port: 1,
            dst_port: 2,
            payload_len: 2,
        };
        let mut buf = [0u8; 10];
        repr.emit(&mut buf, &v4()).unwrap();
        let c = u16::from_be_bytes([buf[6], buf[7]]);
        // Adding `c` to the payload word moves the checksum to zero.
        buf[8..10].copy_from_slice(&c.to_be_bytes());
        repr.emit(&mut buf, &v4()).unwrap();
        assert_eq!(&buf[6..8], &[0xff, 0xff]);
        let packet = Packet::new_checked(&buf[..]).unwrap();
        assert!(Repr::parse(&packet, &v4()).is_ok());
    }

    proptest! {
        #[test]
        fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Ok(packet) = Packet::new_checked(&data[..]) {
                let _ = Repr::parse(&packet, &v4());
                let _ = Repr::parse(&packet, &v6());
                let _ = packet.payload();
            }
        }

        #[test]
        fn round_trips(src in any::<u16>(), dst in any::<u16>(), payload in proptest::collection::vec(any::<u8>(), 0..64),
                       a in any::<u32>(), b in any::<u128>(), extra in 0usize..4) {
            for pseudo in [PseudoHeader::V4 { src: a.into(), dst: Ipv4Addr::BROADCAST },
                           PseudoHeader::V6 { src: Ipv6Addr::from(b), dst: Ipv6Addr::LOCALHOST }] {
                let repr = Repr { src_port: src, dst_port: dst, payload_len: payload.len() };
                let mut buf = vec![0u8; HEADER_LEN];
                buf.extend_from_slice(&payload);
                buf.extend(std::iter::repeat_n(0xee, extra)); // trailing bytes are not the datagram
                repr.emit(&mut buf, &pseudo).unwrap();
                let packet = Packet::new_checked(&buf[..]).unwrap();
                prop_assert_eq!(Repr::parse(&packet, &pseudo).unwrap(), repr);
                prop_assert_eq!(packet.payload(), &payload[..]);
                let mut again = buf.clone();
                again[..HEADER_LEN].fill(0);
                repr.emit(&mut again, &pseudo).unwrap();
                prop_assert_eq!(again, buf);
            }
        }
    }
}
