//! IPv4 headers (RFC 791): a checked [`Packet`] view and its [`Repr`].
//!
//! Validation follows Linux's `ip_rcv_core`: at least 20 bytes, IHL >= 5,
//! version 4, the whole IHL present, header checksum, then
//! `IHL*4 <= total length <= buffer length` (bytes past the total length are
//! link-layer padding and are not part of the payload). Options are checked
//! structurally (every option fits in the options area); their meaning is
//! left to the caller. The reserved flag bit is ignored, as Linux does.
//!
//! ```
//! use fibre_net::ipv4::{Packet, Repr};
//! use fibre_net::ip::Protocol;
//! let repr = Repr {
//!     src_addr: "192.0.2.1".parse().unwrap(),
//!     dst_addr: "198.51.100.2".parse().unwrap(),
//!     protocol: Protocol::Udp,
//!     payload_len: 4,
//!     ttl: 64,
//!     tos: 0,
//!     ident: 1,
//!     dont_frag: true,
//!     more_frags: false,
//!     frag_offset: 0,
//!     options: &[],
//! };
//! let mut buf = [0u8; 24];
//! repr.emit(&mut buf).unwrap();
//! let mut packet = Packet::new_checked(&mut buf[..]).unwrap();
//! assert!(packet.verify_checksum());
//! assert_eq!(packet.decrement_ttl(), Some(63));
//! assert!(packet.verify_checksum());
//! ```

use std::net::Ipv4Addr;

use crate::checksum;
use crate::ip::Protocol;
use crate::{Error, Result};

/// Length of the header without options.
pub const MIN_HEADER_LEN: usize = 20;
/// Length of the header with the most options (IHL 15).
pub const MAX_HEADER_LEN: usize = 60;
/// The largest IPv4 datagram.
pub const MAX_PACKET_LEN: usize = 65_535;

mod field {
    use core::ops::Range;
    pub const VER_IHL: usize = 0;
    pub const TOS: usize = 1;
    pub const LENGTH: Range<usize> = 2..4;
    pub const IDENT: Range<usize> = 4..6;
    pub const FLAGS_FRAG: Range<usize> = 6..8;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: Range<usize> = 10..12;
    pub const SRC: Range<usize> = 12..16;
    pub const DST: Range<usize> = 16..20;
}

const FLAG_RESERVED: u16 = 0x8000;
const FLAG_DONT_FRAG: u16 = 0x4000;
const FLAG_MORE_FRAGS: u16 = 0x2000;
const FRAG_OFFSET_MASK: u16 = 0x1fff;

packet_view! {
    /// A read/write view of an IPv4 packet whose lengths were checked.
    ///
    /// All accessors are loads at fixed offsets of a buffer known to be long
    /// enough; none can panic. If a setter later makes the length fields
    /// disagree with the buffer, [`Packet::options`] and [`Packet::payload`]
    /// are clamped to the buffer rather than panicking.
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer` after checking version, IHL and total length against it.
    ///
    /// ```
    /// use fibre_net::{ipv4::Packet, Error};
    /// let mut h = [0u8; 20];
    /// h[0] = 0x45;
    /// h[3] = 20; // total length
    /// assert!(Packet::new_checked(&h[..]).is_ok());
    /// h[0] = 0x44; // IHL 4
    /// assert_eq!(Packet::new_checked(&h[..]).unwrap_err(), Error::BadHeaderLength);
    /// h[0] = 0x65; // version 6
    /// assert_eq!(Packet::new_checked(&h[..]).unwrap_err(), Error::BadVersion);
    /// ```
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let data = buffer.as_ref();
        crate::at_least(data, MIN_HEADER_LEN)?;
        let header_len = usize::from(data[field::VER_IHL] & 0x0f) * 4;
        if header_len < MIN_HEADER_LEN {
            return Err(Error::BadHeaderLength);
        }
        if data[field::VER_IHL] >> 4 != 4 {
            return Err(Error::BadVersion);
        }
        if data.len() < header_len {
            return Err(Error::Truncated);
        }
        let total_len = usize::from(u16::from_be_bytes([data[2], data[3]]));
        if total_len > data.len() {
            return Err(Error::Truncated);
        }
        if total_len < header_len {
            return Err(Error::BadLength);
        }
        Ok(Packet { buffer })
    }

    /// The version field (4 for every checked packet).
    pub fn version(&self) -> u8 {
        self.bytes()[field::VER_IHL] >> 4
    }

    /// Header length in bytes (IHL * 4).
    pub fn header_len(&self) -> usize {
        usize::from(self.bytes()[field::VER_IHL] & 0x0f) * 4
    }

    /// The type-of-service byte (DSCP << 2 | ECN).
    pub fn tos(&self) -> u8 {
        self.bytes()[field::TOS]
    }

    /// Differentiated services code point.
    pub fn dscp(&self) -> u8 {
        self.tos() >> 2
    }

    /// Explicit congestion notification bits.
    pub fn ecn(&self) -> u8 {
        self.tos() & 0x03
    }

    /// Total length: header plus payload.
    pub fn total_len(&self) -> usize {
        usize::from(self.be16(field::LENGTH.start))
    }

    /// Identification.
    pub fn ident(&self) -> u16 {
        self.be16(field::IDENT.start)
    }

    /// The reserved ("evil") flag bit; ignored on receipt.
    pub fn reserved_flag(&self) -> bool {
        self.be16(field::FLAGS_FRAG.start) & FLAG_RESERVED != 0
    }

    /// Don't fragment.
    pub fn dont_frag(&self) -> bool {
        self.be16(field::FLAGS_FRAG.start) & FLAG_DONT_FRAG != 0
    }

    /// More fragments follow.
    pub fn more_frags(&self) -> bool {
        self.be16(field::FLAGS_FRAG.start) & FLAG_MORE_FRAGS != 0
    }

    /// Fragment offset in bytes.
    pub fn frag_offset(&self) -> usize {
        usize::from(self.be16(field::FLAGS_FRAG.start) & FRAG_OFFSET_MASK) * 8
    }

    /// True if this is a fragment (offset non-zero or more fragments follow).
    pub fn is_fragment(&self) -> bool {
        self.be16(field::FLAGS_FRAG.start) & (FLAG_MORE_FRAGS | FRAG_OFFSET_MASK) != 0
    }

    /// Time to live.
    pub fn ttl(&self) -> u8 {
        self.bytes()[field::TTL]
    }

    /// The payload's protocol.
    pub fn protocol(&self) -> Protocol {
        Protocol::from(self.bytes()[field::PROTOCOL])
    }

    /// The header checksum field.
    pub fn checksum(&self) -> u16 {
        self.be16(field::CHECKSUM.start)
    }

    /// Source address.
    pub fn src_addr(&self) -> Ipv4Addr {
        let b = &self.bytes()[field::SRC];
        Ipv4Addr::new(b[0], b[1], b[2], b[3])
    }

    /// Destination address.
    pub fn dst_addr(&self) -> Ipv4Addr {
        let b = &self.bytes()[field::DST];
        Ipv4Addr::new(b[0], b[1], b[2], b[3])
    }

    /// The raw options bytes (empty when IHL is 5).
    pub fn options(&self) -> &[u8] {
        let end = self.header_len().min(self.bytes().len());
        &self.bytes()[MIN_HEADER_LEN.min(end)..end]
    }

    /// The payload: from the end of the header to the total length.
    pub fn payload(&self) -> &[u8] {
        let (start, end) = self.payload_range();
        &self.bytes()[start..end]
    }

    /// True if the header checksum verifies.
    pub fn verify_checksum(&self) -> bool {
        let end = self.header_len().min(self.bytes().len());
        checksum::sum(&self.bytes()[..end]) == 0xffff
    }

    /// Everything [`Repr::parse`] checks beyond `new_checked` (header
    /// checksum, options structure, fragment within 65535 bytes), without
    /// building a `Repr`: for a forwarding path that holds the buffer
    /// mutably and rewrites the header in place afterwards.
    ///
    /// ```
    /// use fibre_net::ipv4::Packet;
    /// let mut h = [0x45, 0, 0, 20, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
    /// let mut p = Packet::new_checked(&mut h[..]).unwrap();
    /// p.fill_checksum();
    /// p.validate().unwrap();
    /// assert_eq!(p.decrement_ttl(), Some(63));
    /// ```
    pub fn validate(&self) -> Result<()> {
        if !self.verify_checksum() {
            return Err(Error::BadChecksum);
        }
        check_options(self.options())?;
        if self.frag_offset() + self.total_len() > MAX_PACKET_LEN {
            return Err(Error::BadFragment);
        }
        Ok(())
    }

    fn payload_range(&self) -> (usize, usize) {
        let len = self.bytes().len();
        let end = self.total_len().min(len);
        (self.header_len().min(end), end)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_u16_at(&mut self, range: core::ops::Range<usize>, value: u16) {
        self.buffer.as_mut()[range].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets the type-of-service byte.
    pub fn set_tos(&mut self, tos: u8) {
        self.buffer.as_mut()[field::TOS] = tos;
    }

    /// Sets the identification.
    pub fn set_ident(&mut self, ident: u16) {
        self.set_u16_at(field::IDENT, ident);
    }

    /// Sets the TTL (the checksum is not updated; see [`Packet::decrement_ttl`]).
    pub fn set_ttl(&mut self, ttl: u8) {
        self.buffer.as_mut()[field::TTL] = ttl;
    }

    /// Sets the source address.
    pub fn set_src_addr(&mut self, addr: Ipv4Addr) {
        self.buffer.as_mut()[field::SRC].copy_from_slice(&addr.octets());
    }

    /// Sets the destination address.
    pub fn set_dst_addr(&mut self, addr: Ipv4Addr) {
        self.buffer.as_mut()[field::DST].copy_from_slice(&addr.octets());
    }

    /// Sets the checksum field verbatim.
    pub fn set_checksum(&mut self, value: u16) {
        self.set_u16_at(field::CHECKSUM, value);
    }

    /// Recomputes the header checksum from scratch.
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let end = self.header_len().min(self.bytes().len());
        let value = checksum::checksum(&self.bytes()[..end]);
        self.set_checksum(value);
    }

    /// Decrements the TTL for forwarding and patches the checksum
    /// incrementally (RFC 1624) instead of recomputing it.
    ///
    /// Returns the new TTL, or `None` (and leaves the header untouched)
    /// when the TTL is 0 or 1: such a packet must not be forwarded and the
    /// caller answers with ICMP time exceeded, as Linux's `ip_forward` does.
    ///
    /// ```
    /// use fibre_net::ipv4::Packet;
    /// let mut h = [0x45, 0, 0, 20, 0, 0, 0, 0, 1, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
    /// let mut p = Packet::new_checked(&mut h[..]).unwrap();
    /// p.fill_checksum();
    /// assert_eq!(p.decrement_ttl(), None);
    /// assert_eq!(p.ttl(), 1);
    /// ```
    pub fn decrement_ttl(&mut self) -> Option<u8> {
        let ttl = self.ttl();
        if ttl <= 1 {
            return None;
        }
        let protocol = self.bytes()[field::PROTOCOL];
        let old = u16::from_be_bytes([ttl, protocol]);
        let new = u16::from_be_bytes([ttl - 1, protocol]);
        let updated = checksum::update_u16(self.checksum(), old, new);
        self.set_ttl(ttl - 1);
        self.set_checksum(updated);
        Some(ttl - 1)
    }

    /// The payload, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let (start, end) = self.payload_range();
        &mut self.buffer.as_mut()[start..end]
    }
}

/// Checks that every option fits: EOL ends the list, NOP is one byte, any
/// other option has a length byte of at least 2 that stays inside `options`.
fn check_options(options: &[u8]) -> Result<()> {
    let mut at = 0;
    while at < options.len() {
        match options[at] {
            0 => return Ok(()),
            1 => at += 1,
            _ => {
                let len = usize::from(*options.get(at + 1).ok_or(Error::BadOption)?);
                if len < 2 || at + len > options.len() {
                    return Err(Error::BadOption);
                }
                at += len;
            }
        }
    }
    Ok(())
}

/// The meaning of an IPv4 header. Options are borrowed raw bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr<'a> {
    /// Source address.
    pub src_addr: Ipv4Addr,
    /// Destination address.
    pub dst_addr: Ipv4Addr,
    /// The payload's protocol.
    pub protocol: Protocol,
    /// Payload length in bytes (total length minus header length).
    pub payload_len: usize,
    /// Time to live.
    pub ttl: u8,
    /// Type of service (DSCP << 2 | ECN).
    pub tos: u8,
    /// Identification.
    pub ident: u16,
    /// Don't fragment.
    pub dont_frag: bool,
    /// More fragments follow.
    pub more_frags: bool,
    /// Fragment offset in bytes (a multiple of 8).
    pub frag_offset: usize,
    /// Raw options: a multiple of 4 bytes, at most 40.
    pub options: &'a [u8],
}

impl<'a> Repr<'a> {
    /// Reads a checked packet: verifies the header checksum, the options'
    /// structure, and that a fragment ends within 65535 bytes.
    ///
    /// ```
    /// use fibre_net::{ipv4::{Packet, Repr}, Error};
    /// let mut h = [0x45, 0, 0, 20, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
    /// assert_eq!(Repr::parse(&Packet::new_checked(&h[..]).unwrap()).unwrap_err(), Error::BadChecksum);
    /// Packet::new_checked(&mut h[..]).unwrap().fill_checksum();
    /// assert_eq!(Repr::parse(&Packet::new_checked(&h[..]).unwrap()).unwrap().ttl, 64);
    /// ```
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&'a T>) -> Result<Repr<'a>> {
        packet.validate()?;
        // Borrow the options from the underlying buffer, not from `packet`.
        let data: &'a [u8] = packet.buffer.as_ref();
        let options = &data[MIN_HEADER_LEN..packet.header_len()];
        let payload_len = packet.total_len() - packet.header_len();
        Ok(Repr {
            src_addr: packet.src_addr(),
            dst_addr: packet.dst_addr(),
            protocol: packet.protocol(),
            payload_len,
            ttl: packet.ttl(),
            tos: packet.tos(),
            ident: packet.ident(),
            dont_frag: packet.dont_frag(),
            more_frags: packet.more_frags(),
            frag_offset: packet.frag_offset(),
            options,
        })
    }

    /// Header length in bytes, options included.
    pub fn header_len(&self) -> usize {
        MIN_HEADER_LEN + self.options.len()
    }

    /// Header plus payload.
    pub fn total_len(&self) -> usize {
        self.header_len() + self.payload_len
    }

    /// Writes the header (checksum filled) into the front of `buf`; the
    /// payload must already follow it, so `buf` must hold at least
    /// [`Repr::total_len`] bytes. Options must be a multiple of 4 bytes, at
    /// most 40, and structurally valid, or the result is
    /// [`Error::Unencodable`].
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        if !self.options.len().is_multiple_of(4)
            || self.options.len() > MAX_HEADER_LEN - MIN_HEADER_LEN
            || check_options(self.options).is_err()
        {
            // Refuse what our own parse (and Linux) would drop.
            return Err(Error::Unencodable);
        }
        if self.total_len() > MAX_PACKET_LEN
            || !self.frag_offset.is_multiple_of(8)
            || self.frag_offset / 8 > usize::from(FRAG_OFFSET_MASK)
        {
            return Err(Error::Unencodable);
        }
        if buf.len() < self.total_len() {
            return Err(Error::Truncated);
        }
        let header_len = self.header_len();
        buf[field::VER_IHL] = 0x40 | (header_len / 4) as u8;
        buf[field::TOS] = self.tos;
        buf[field::LENGTH].copy_from_slice(&(self.total_len() as u16).to_be_bytes());
        buf[field::IDENT].copy_from_slice(&self.ident.to_be_bytes());
        let mut flags_frag = (self.frag_offset / 8) as u16;
        if self.dont_frag {
            flags_frag |= FLAG_DONT_FRAG;
        }
        if self.more_frags {
            flags_frag |= FLAG_MORE_FRAGS;
        }
        buf[field::FLAGS_FRAG].copy_from_slice(&flags_frag.to_be_bytes());
        buf[field::TTL] = self.ttl;
        buf[field::PROTOCOL] = self.protocol.into();
        buf[field::SRC].copy_from_slice(&self.src_addr.octets());
        buf[field::DST].copy_from_slice(&self.dst_addr.octets());
        buf[MIN_HEADER_LEN..header_len].copy_from_slice(self.options);
        buf[field::CHECKSUM].copy_from_slice(&[0, 0]);
        let value = checksum::checksum(&buf[..header_len]);
        buf[field::CHECKSUM].copy_from_slice(&value.to_be_bytes());
        Ok(())
    }
}

// Packet is its buffer, free to pass by value.
assert_layout!(view Packet);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// scapy 2.8: `IP(tos=184, id=4660, flags=2, ttl=64, src='192.0.2.1',
    /// dst='198.51.100.2')/UDP(sport=40000, dport=53)/Raw(load=b'hello')`.
    const UDP_DF: [u8; 33] = [
        0x45, 0xb8, 0x00, 0x21, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x3b, 0xa9, 0xc0, 0x00, 0x02,
        0x01, 0xc6, 0x33, 0x64, 0x02, 0x9c, 0x40, 0x00, 0x35, 0x00, 0x0d, 0x33, 0x55, 0x68, 0x65,
        0x6c, 0x6c, 0x6f,
    ];

    /// scapy 2.8: `IP(options=[IPOption_Router_Alert()], id=7, ttl=1,
    /// src='192.0.2.1', dst='198.51.100.2')/UDP(sport=1, dport=2)/Raw(load=b'x')`.
    const ROUTER_ALERT: [u8; 33] = [
        0x46, 0x00, 0x00, 0x21, 0x00, 0x07, 0x00, 0x00, 0x01, 0x11, 0x38, 0x8a, 0xc0, 0x00, 0x02,
        0x01, 0xc6, 0x33, 0x64, 0x02, 0x94, 0x04, 0x00, 0x00, 0x00, 0x01, 0x00, 0x02, 0x00, 0x09,
        0x9b, 0xa1, 0x78,
    ];

    /// scapy 2.8: `IP(id=99, flags=1, frag=185, ttl=9, proto=17,
    /// src='192.0.2.1', dst='198.51.100.2')/Raw(load=b'A'*16)`.
    const FRAGMENT: [u8; 36] = [
        0x45, 0x00, 0x00, 0x24, 0x00, 0x63, 0x20, 0xb9, 0x09, 0x11, 0xa4, 0x76, 0xc0, 0x00, 0x02,
        0x01, 0xc6, 0x33, 0x64, 0x02, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41,
        0x41, 0x41, 0x41, 0x41, 0x41, 0x41,
    ];

    fn parse(bytes: &[u8]) -> Result<Repr<'_>> {
        Repr::parse(&Packet::new_checked(bytes)?)
    }

    fn emit_to_vec(repr: &Repr<'_>, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![0u8; repr.header_len()];
        out.extend_from_slice(payload);
        repr.emit(&mut out).unwrap();
        out
    }

    #[test]
    fn parses_captured_udp_with_df() {
        let repr = parse(&UDP_DF).unwrap();
        assert_eq!(repr.src_addr, Ipv4Addr::new(192, 0, 2, 1));
        assert_eq!(repr.dst_addr, Ipv4Addr::new(198, 51, 100, 2));
        assert_eq!(repr.protocol, Protocol::Udp);
        assert_eq!((repr.ttl, repr.tos, repr.ident), (64, 0xb8, 0x1234));
        assert!(repr.dont_frag && !repr.more_frags);
        assert_eq!(repr.payload_len, 13);
        assert_eq!(emit_to_vec(&repr, &UDP_DF[20..]), UDP_DF);
        let packet = Packet::new_checked(&UDP_DF[..]).unwrap();
        assert_eq!((packet.dscp(), packet.ecn()), (46, 0));
    }

    #[test]
    fn parses_captured_options_and_fragment() {
        let repr = parse(&ROUTER_ALERT).unwrap();
        assert_eq!(repr.options, &[0x94, 0x04, 0x00, 0x00]);
        assert_eq!(repr.header_len(), 24);
        assert_eq!(emit_to_vec(&repr, &ROUTER_ALERT[24..]), ROUTER_ALERT);

        let repr = parse(&FRAGMENT).unwrap();
        assert!(repr.more_frags && !repr.dont_frag);
        assert_eq!(repr.frag_offset, 185 * 8);
        assert!(Packet::new_checked(&FRAGMENT[..]).unwrap().is_fragment());
        assert_eq!(emit_to_vec(&repr, &FRAGMENT[20..]), FRAGMENT);
    }

    #[test]
    fn link_padding_is_not_payload() {
        let mut padded = UDP_DF.to_vec();
        padded.extend_from_slice(&[0; 13]);
        let packet = Packet::new_checked(&padded[..]).unwrap();
        assert_eq!(packet.payload(), &UDP_DF[20..]);
    }

    #[test]
    fn every_truncation_is_an_error() {
        for bytes in [&UDP_DF[..], &ROUTER_ALERT[..], &FRAGMENT[..]] {
            crate::assert_prefixes_truncated(bytes, bytes.len(), |b| {
                Packet::new_checked(b).map(drop)
            });
        }
    }

    #[test]
    fn malformed_headers_have_their_own_errors() {
        let mut b = UDP_DF;
        b[0] = 0x55;
        assert_eq!(Packet::new_checked(&b[..]).unwrap_err(), Error::BadVersion);
        for ihl in 0..5 {
            b[0] = 0x40 | ihl;
            assert_eq!(
                Packet::new_checked(&b[..]).unwrap_err(),
                Error::BadHeaderLength
            );
        }
        // IHL 6 needs 24 bytes of header: total length 20 is too small.
        let mut b = ROUTER_ALERT;
        b[3] = 20;
        assert_eq!(Packet::new_checked(&b[..]).unwrap_err(), Error::BadLength);
        b[3] = 34;
        assert_eq!(Packet::new_checked(&b[..]).unwrap_err(), Error::Truncated);
        // Any flipped bit in the header breaks the checksum.
        for bit in 0..160 {
            let mut b = UDP_DF;
            b[bit / 8] ^= 0x80 >> (bit % 8);
            if let Ok(packet) = Packet::new_checked(&b[..]) {
                assert_eq!(Repr::parse(&packet).unwrap_err(), Error::BadChecksum);
            }
        }
    }

    #[test]
    fn malformed_options_are_refused() {
        for (options, ok) in [
            ([0x94, 0x04, 0x00, 0x00], true),
            ([0x01, 0x01, 0x01, 0x00], true),
            ([0x00, 0xff, 0xff, 0xff], true), // after EOL, bytes are padding
            ([0x94, 0x05, 0x00, 0x00], false),
            ([0x94, 0x01, 0x00, 0x00], false),
            ([0x01, 0x01, 0x01, 0x07], false),
        ] {
            let mut b = ROUTER_ALERT;
            b[20..24].copy_from_slice(&options);
            let mut packet = Packet::new_checked(&mut b[..]).unwrap();
            packet.fill_checksum();
            let packet = Packet::new_checked(&b[..]).unwrap();
            assert_eq!(
                Repr::parse(&packet).map(|_| ()),
                if ok { Ok(()) } else { Err(Error::BadOption) },
                "{options:02x?}"
            );
        }
    }

    #[test]
    fn fragment_past_64k_is_refused() {
        let mut b = FRAGMENT;
        b[6..8].copy_from_slice(&(0x2000u16 | 8189).to_be_bytes());
        Packet::new_checked(&mut b[..]).unwrap().fill_checksum();
        assert_eq!(
            Repr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap_err(),
            Error::BadFragment
        );
    }

    #[test]
    fn emit_refuses_what_it_cannot_encode() {
        let base = parse(&UDP_DF).unwrap();
        let mut buf = [0u8; 100];
        let odd = [1u8, 1, 1];
        for bad in [
            Repr {
                options: &odd,
                ..base
            },
            Repr {
                options: &[1; 44],
                ..base
            },
            Repr {
                frag_offset: 3,
                ..base
            },
            Repr {
                payload_len: 65_516,
                ..base
            },
        ] {
            assert_eq!(bad.emit(&mut buf), Err(Error::Unencodable));
        }
        assert_eq!(base.emit(&mut buf[..32]), Err(Error::Truncated));
    }

    #[test]
    fn ttl_decrement_keeps_checksum_valid_at_every_ttl() {
        for ttl in 2..=255u8 {
            for tos in [0u8, 0xff] {
                let mut b = UDP_DF;
                b[1] = tos;
                b[8] = ttl;
                let mut packet = Packet::new_checked(&mut b[..]).unwrap();
                packet.fill_checksum();
                assert_eq!(packet.decrement_ttl(), Some(ttl - 1));
                assert!(packet.verify_checksum(), "ttl {ttl} tos {tos}");
            }
        }
        let mut b = UDP_DF;
        b[8] = 0;
        assert_eq!(
            Packet::new_checked(&mut b[..]).unwrap().decrement_ttl(),
            None
        );
    }

    /// Arbitrary bytes made into a plausible header: version 4, a length
    /// inside the buffer, a valid checksum.
    fn repaired(mut data: Vec<u8>, ihl: u8) -> Vec<u8> {
        let header_len = usize::from(ihl) * 4;
        data.resize(data.len().max(header_len), 0);
        data[0] = 0x40 | ihl;
        let total = data.len().min(MAX_PACKET_LEN) as u16;
        data[2..4].copy_from_slice(&total.to_be_bytes());
        data[6] &= !0x80; // reserved flag: not carried by Repr
        data[10..12].fill(0);
        let c = checksum::checksum(&data[..header_len]);
        data[10..12].copy_from_slice(&c.to_be_bytes());
        data
    }

    proptest! {
        #[test]
        fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok(packet) = Packet::new_checked(&data[..]) {
                let _ = Repr::parse(&packet);
                let _ = (packet.payload(), packet.options(), packet.verify_checksum());
            }
        }

        #[test]
        fn emit_of_parse_round_trips(data in proptest::collection::vec(any::<u8>(), 20..120), ihl in 5u8..=15) {
            let data = repaired(data, ihl);
            match parse(&data) {
                Ok(repr) => prop_assert_eq!(emit_to_vec(&repr, &data[repr.header_len()..]), data),
                Err(e) => prop_assert!(matches!(e, Error::BadOption | Error::BadFragment), "{e:?}"),
            }
        }

        #[test]
        fn parse_of_emit_round_trips(src in any::<u32>(), dst in any::<u32>(), proto in any::<u8>(), ttl in any::<u8>(),
                                     tos in any::<u8>(), ident in any::<u16>(), df in any::<bool>(), mf in any::<bool>(),
                                     frag in 0usize..8000, payload in proptest::collection::vec(any::<u8>(), 0..64)) {
            let repr = Repr {
                src_addr: src.into(), dst_addr: dst.into(), protocol: proto.into(), payload_len: payload.len(),
                ttl, tos, ident, dont_frag: df, more_frags: mf, frag_offset: frag * 8, options: &[1, 1, 1, 0],
            };
            let bytes = emit_to_vec(&repr, &payload);
            prop_assert_eq!(parse(&bytes).unwrap(), repr);
            let packet = Packet::new_checked(&bytes[..]).unwrap();
            prop_assert_eq!(packet.payload(), &payload[..]);
        }
    }
}
