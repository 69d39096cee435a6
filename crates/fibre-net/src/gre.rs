//! GRE, version 0 (RFC 2784 with the key and sequence number of RFC 2890).
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! |C|R|K|S|s|Recur|  Flags  | Ver |         Protocol Type         |
//! |      Checksum (optional)      |       Reserved1 (Optional)    |
//! |                         Key (optional)                        |
//! |                 Sequence Number (Optional)                    |
//! ```
//!
//! # What is accepted: Linux, not the letter of RFC 2784
//!
//! RFC 2784 says a receiver MUST discard a packet with any of bits 1-5 set
//! unless it implements RFC 1701 (bits 2 and 3 became K and S in RFC 2890),
//! and MUST ignore bits 6-12. Linux (`gre_parse_header`, net/ipv4/gre_demux.c)
//! drops only a non-zero version or the routing bit R (bit 1), and ignores
//! the strict-source-route bit, the recursion control and the other flag
//! bits, as an RFC 1701 receiver would. This module follows Linux:
//!
//! * version != 0 → [`Error::BadVersion`] (version 1 is PPTP's enhanced GRE);
//! * R set → [`Error::GreRoutingPresent`] (no source-route entries are parsed);
//! * too short for the header the C/K/S flags announce → [`Error::Truncated`];
//! * C set and the checksum over header and payload fails → [`Error::BadChecksum`];
//! * bits 4-12 and Reserved1 are ignored on receipt (available through
//!   [`Packet::reserved0`] for a caller that wants the strict RFC 2784 rule)
//!   and always sent as zero.
//!
//! The protocol type is not judged here: the tunnel decides what it carries.
//! Linux's WCCP special case (protocol 0x883E rewritten to IPv4) is not
//! reproduced.
//!
//! ```
//! use fibre_net::{gre, ethernet::EtherType};
//! let repr = gre::Repr { csum: true, key: Some(0xdead_beef), seq: Some(42), protocol: EtherType::Ipv6 };
//! assert_eq!(repr.header_len(), 16);
//! let mut buf = [0u8; 16 + 5];
//! buf[16..].copy_from_slice(b"inner");
//! repr.emit(&mut buf).unwrap();
//! let packet = gre::Packet::new_checked(&buf[..]).unwrap();
//! assert_eq!(gre::Repr::parse(&packet).unwrap(), repr);
//! assert_eq!(packet.payload(), b"inner");
//! ```

use crate::checksum;
use crate::ethernet::EtherType;
use crate::{Error, Result};

/// Length of the header with no optional fields.
pub const BASE_HEADER_LEN: usize = 4;
/// Length of the header with checksum, key and sequence number.
pub const MAX_HEADER_LEN: usize = 16;

const FLAG_CSUM: u16 = 0x8000;
const FLAG_ROUTING: u16 = 0x4000;
const FLAG_KEY: u16 = 0x2000;
const FLAG_SEQ: u16 = 0x1000;
/// Strict source route, recursion control and the reserved flag bits
/// (bits 4-12): ignored on receipt, as Linux does.
const RESERVED0_MASK: u16 = 0x0ff8;
const VERSION_MASK: u16 = 0x0007;

/// Header length implied by the flags word (version 0, no routing).
fn header_len_for(flags: u16) -> usize {
    BASE_HEADER_LEN
        + 4 * usize::from(flags & FLAG_CSUM != 0)
        + 4 * usize::from(flags & FLAG_KEY != 0)
        + 4 * usize::from(flags & FLAG_SEQ != 0)
}

packet_view! {
    /// A read/write view of a version-0 GRE header and its payload, whose
    /// length was checked against the flags.
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer` (the GRE header and payload, i.e. the outer IP
    /// payload) after checking version, routing bit and length, in Linux's
    /// order.
    ///
    /// ```
    /// use fibre_net::{gre::Packet, Error};
    /// assert_eq!(Packet::new_checked(&[0x00, 0x00, 0x08][..]).unwrap_err(), Error::Truncated);
    /// assert_eq!(Packet::new_checked(&[0x40, 0x00, 0x08, 0x00][..]).unwrap_err(), Error::GreRoutingPresent);
    /// // C and K announce 12 bytes of header.
    /// assert_eq!(Packet::new_checked(&[0xa0, 0x00, 0x08, 0x00, 0, 0, 0, 0][..]).unwrap_err(), Error::Truncated);
    /// ```
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let data = buffer.as_ref();
        crate::at_least(data, BASE_HEADER_LEN)?;
        let flags = u16::from_be_bytes([data[0], data[1]]);
        if flags & VERSION_MASK != 0 {
            return Err(Error::BadVersion);
        }
        if flags & FLAG_ROUTING != 0 {
            return Err(Error::GreRoutingPresent);
        }
        if data.len() < header_len_for(flags) {
            return Err(Error::Truncated);
        }
        Ok(Packet { buffer })
    }

    fn flags(&self) -> u16 {
        self.be16(0)
    }

    fn u32_at(&self, at: usize) -> u32 {
        let b = &self.bytes()[at..at + 4];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }

    fn key_offset(&self) -> usize {
        BASE_HEADER_LEN + 4 * usize::from(self.checksum_present())
    }

    fn seq_offset(&self) -> usize {
        self.key_offset() + 4 * usize::from(self.key_present())
    }

    /// C: the checksum and Reserved1 words are present.
    pub fn checksum_present(&self) -> bool {
        self.flags() & FLAG_CSUM != 0
    }

    /// K: the key word is present.
    pub fn key_present(&self) -> bool {
        self.flags() & FLAG_KEY != 0
    }

    /// S: the sequence number word is present.
    pub fn seq_present(&self) -> bool {
        self.flags() & FLAG_SEQ != 0
    }

    /// Bits 4-12 of the flags word (strict source route, recursion
    /// control, reserved flags) in place, i.e. masked with `0x0ff8`. Ignored
    /// by [`Repr::parse`], as Linux does; RFC 2784 would have bits 4 and 5
    /// (`0x0c00`) discarded.
    pub fn reserved0(&self) -> u16 {
        self.flags() & RESERVED0_MASK
    }

    /// The version (0 for every checked packet).
    pub fn version(&self) -> u8 {
        (self.flags() & VERSION_MASK) as u8
    }

    /// The protocol type of the payload.
    pub fn protocol(&self) -> EtherType {
        EtherType::from(self.be16(2))
    }

    /// The checksum field, if present.
    pub fn checksum(&self) -> Option<u16> {
        self.checksum_present().then(|| self.be16(4))
    }

    /// The Reserved1 field (follows the checksum), if present.
    pub fn reserved1(&self) -> Option<u16> {
        self.checksum_present().then(|| self.be16(6))
    }

    /// The key, if present.
    pub fn key(&self) -> Option<u32> {
        self.key_present().then(|| self.u32_at(self.key_offset()))
    }

    /// The sequence number, if present.
    pub fn seq(&self) -> Option<u32> {
        self.seq_present().then(|| self.u32_at(self.seq_offset()))
    }

    /// Header length in bytes: 4, plus 4 for each of C, K, S.
    pub fn header_len(&self) -> usize {
        header_len_for(self.flags())
    }

    /// Everything after the header.
    pub fn payload(&self) -> &[u8] {
        &self.bytes()[self.header_len()..]
    }

    /// True if no checksum is present, or if it verifies over the header
    /// and the payload.
    pub fn verify_checksum(&self) -> bool {
        !self.checksum_present() || checksum::sum(self.bytes()) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// The payload, writable (refill the checksum afterwards if present).
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let start = self.header_len();
        &mut self.buffer.as_mut()[start..]
    }

    /// Sets the key of a packet that has one; returns false otherwise.
    /// The checksum, if present, must be refilled afterwards.
    pub fn set_key(&mut self, key: u32) -> bool {
        if !self.key_present() {
            return false;
        }
        let at = self.key_offset();
        self.buffer.as_mut()[at..at + 4].copy_from_slice(&key.to_be_bytes());
        true
    }

    /// Sets the sequence number of a packet that has one; returns false
    /// otherwise. The checksum, if present, must be refilled afterwards.
    pub fn set_seq(&mut self, seq: u32) -> bool {
        if !self.seq_present() {
            return false;
        }
        let at = self.seq_offset();
        self.buffer.as_mut()[at..at + 4].copy_from_slice(&seq.to_be_bytes());
        true
    }

    /// Recomputes the checksum over header and payload, if one is present.
    pub fn fill_checksum(&mut self) {
        if !self.checksum_present() {
            return;
        }
        let data = self.buffer.as_mut();
        data[4..6].fill(0);
        let value = checksum::checksum(data);
        data[4..6].copy_from_slice(&value.to_be_bytes());
    }
}

/// The meaning of a version-0 GRE header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// C: carry a checksum over header and payload.
    pub csum: bool,
    /// K: the key, if any.
    pub key: Option<u32>,
    /// S: the sequence number, if any.
    pub seq: Option<u32>,
    /// The payload's protocol type (0x0800, 0x86DD, 0x6558, ...).
    pub protocol: EtherType,
}

impl Repr {
    /// Reads a checked packet, verifying the checksum when C is set.
    ///
    /// ```
    /// use fibre_net::{gre, Error};
    /// // C set, checksum field wrong.
    /// let bytes = [0x80, 0x00, 0x08, 0x00, 0x12, 0x34, 0x00, 0x00];
    /// let packet = gre::Packet::new_checked(&bytes[..]).unwrap();
    /// assert_eq!(gre::Repr::parse(&packet).unwrap_err(), Error::BadChecksum);
    /// ```
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<Repr> {
        if !packet.verify_checksum() {
            return Err(Error::BadChecksum);
        }
        Ok(Repr {
            csum: packet.checksum_present(),
            key: packet.key(),
            seq: packet.seq(),
            protocol: packet.protocol(),
        })
    }

    /// Header length in bytes: 4, plus 4 for each of checksum, key, seq.
    pub const fn header_len(&self) -> usize {
        BASE_HEADER_LEN
            + if self.csum { 4 } else { 0 }
            + if self.key.is_some() { 4 } else { 0 }
            + if self.seq.is_some() { 4 } else { 0 }
    }

    /// Writes the header into the front of `buf`, whose remainder is the
    /// payload already in place, then fills the checksum (over header and
    /// payload) if `csum` is set. `buf` must end where the payload ends.
    ///
    /// ```
    /// use fibre_net::{gre, ethernet::EtherType, Error};
    /// let repr = gre::Repr { csum: false, key: Some(1), seq: None, protocol: EtherType::TransparentEthernet };
    /// let mut buf = [0u8; 8];
    /// repr.emit(&mut buf).unwrap();
    /// assert_eq!(buf, [0x20, 0x00, 0x65, 0x58, 0, 0, 0, 1]);
    /// assert_eq!(repr.emit(&mut buf[..7]), Err(Error::Truncated));
    /// ```
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        let header_len = self.header_len();
        if buf.len() < header_len {
            return Err(Error::Truncated);
        }
        let mut flags = 0u16;
        if self.csum {
            flags |= FLAG_CSUM;
        }
        if self.key.is_some() {
            flags |= FLAG_KEY;
        }
        if self.seq.is_some() {
            flags |= FLAG_SEQ;
        }
        let protocol: u16 = self.protocol.into();
        buf[0..2].copy_from_slice(&flags.to_be_bytes());
        buf[2..4].copy_from_slice(&protocol.to_be_bytes());
        let mut at = BASE_HEADER_LEN;
        if self.csum {
            buf[at..at + 4].fill(0);
            at += 4;
        }
        if let Some(key) = self.key {
            buf[at..at + 4].copy_from_slice(&key.to_be_bytes());
            at += 4;
        }
        if let Some(seq) = self.seq {
            buf[at..at + 4].copy_from_slice(&seq.to_be_bytes());
        }
        if self.csum {
            let value = checksum::checksum(buf);
            buf[4..6].copy_from_slice(&value.to_be_bytes());
        }
        Ok(())
    }
}

// Packet is its buffer; Repr stays well inside a cache line.
assert_layout!(view Packet, repr within 24);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The GRE part (outer IPv4 header stripped) of scapy 2.8:
    /// `IP(id=3, src='192.0.2.1', dst='192.0.2.2')/GRE(chksum_present=1,
    /// key_present=1, seqnum_present=1, proto=2048, key=3735928559,
    /// sequence_number=42)/IP(id=4, src='10.0.0.1', dst='10.0.0.2')/
    /// UDP(sport=1000, dport=2000)/Raw(load=b'ping')`.
    const GRE_CKS: [u8; 48] = [
        0xb0, 0x00, 0x08, 0x00, 0xbe, 0x57, 0x00, 0x00, 0xde, 0xad, 0xbe, 0xef, 0x00, 0x00, 0x00,
        0x2a, 0x45, 0x00, 0x00, 0x20, 0x00, 0x04, 0x00, 0x00, 0x40, 0x11, 0x66, 0xc7, 0x0a, 0x00,
        0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0x03, 0xe8, 0x07, 0xd0, 0x00, 0x0c, 0x01, 0x4b, 0x70,
        0x69, 0x6e, 0x67,
    ];

    /// The first bytes of the GRE part of scapy 2.8:
    /// `IPv6(src='2001:db8::1', dst='2001:db8::2')/GRE(proto=34525)/IPv6(...)`.
    const GRE_PLAIN_V6: [u8; 8] = [0x00, 0x00, 0x86, 0xdd, 0x60, 0x00, 0x00, 0x00];

    fn all_reprs() -> impl Iterator<Item = Repr> {
        (0..8u8).flat_map(|bits| {
            [
                EtherType::Ipv4,
                EtherType::Ipv6,
                EtherType::TransparentEthernet,
            ]
            .into_iter()
            .map(move |protocol| Repr {
                csum: bits & 1 != 0,
                key: (bits & 2 != 0).then_some(0x0102_0304),
                seq: (bits & 4 != 0).then_some(0xfffe_fdfc),
                protocol,
            })
        })
    }

    #[test]
    fn parses_captured_frames() {
        let packet = Packet::new_checked(&GRE_CKS[..]).unwrap();
        assert_eq!(
            Repr::parse(&packet).unwrap(),
            Repr {
                csum: true,
                key: Some(0xdead_beef),
                seq: Some(42),
                protocol: EtherType::Ipv4
            }
        );
        assert_eq!(packet.checksum(), Some(0xbe57));
        assert_eq!(packet.reserved1(), Some(0));
        assert_eq!(packet.payload(), &GRE_CKS[16..]);

        let packet = Packet::new_checked(&GRE_PLAIN_V6[..]).unwrap();
        let repr = Repr::parse(&packet).unwrap();
        assert_eq!(
            repr,
            Repr {
                csum: false,
                key: None,
                seq: None,
                protocol: EtherType::Ipv6
            }
        );
        assert_eq!(
            (packet.checksum(), packet.key(), packet.seq()),
            (None, None, None)
        );
    }

    #[test]
    fn emit_reproduces_captured_bytes() {
        let repr = Repr::parse(&Packet::new_checked(&GRE_CKS[..]).unwrap()).unwrap();
        let mut out = GRE_CKS;
        out[..16].fill(0xaa);
        repr.emit(&mut out).unwrap();
        assert_eq!(out, GRE_CKS);
    }

    #[test]
    fn every_combination_round_trips_and_truncations_fail() {
        for repr in all_reprs() {
            let mut buf = vec![0x5a; repr.header_len() + 11];
            repr.emit(&mut buf).unwrap();
            let packet = Packet::new_checked(&buf[..]).unwrap();
            assert_eq!(Repr::parse(&packet).unwrap(), repr);
            assert_eq!(packet.header_len(), repr.header_len());
            assert_eq!(packet.payload(), &[0x5a; 11]);
            crate::assert_prefixes_truncated(&buf, repr.header_len(), |b| {
                Packet::new_checked(b).map(drop)
            });
        }
    }

    #[test]
    fn checksum_covers_every_byte() {
        let repr = Repr {
            csum: true,
            key: Some(9),
            seq: Some(10),
            protocol: EtherType::Ipv4,
        };
        let mut buf = [0x33u8; 16 + 9];
        repr.emit(&mut buf).unwrap();
        for byte in 0..buf.len() {
            for flip in [0x01u8, 0x80] {
                let mut bad = buf;
                bad[byte] ^= flip;
                match Packet::new_checked(&bad[..]) {
                    Ok(packet) if packet.checksum_present() && packet.reserved0() == 0 => {
                        assert_eq!(Repr::parse(&packet), Err(Error::BadChecksum), "byte {byte}");
                    }
                    // Flipping a flag bit changes the layout or the version.
                    _ => assert!(byte < 2, "byte {byte}"),
                }
            }
        }
    }

    #[test]
    fn version_and_routing_follow_linux() {
        for version in 1..8u8 {
            let bytes = [0x00, version, 0x08, 0x00];
            assert_eq!(
                Packet::new_checked(&bytes[..]).unwrap_err(),
                Error::BadVersion
            );
        }
        let bytes = [0x40, 0x00, 0x08, 0x00, 0, 0, 0, 0];
        assert_eq!(
            Packet::new_checked(&bytes[..]).unwrap_err(),
            Error::GreRoutingPresent
        );
        // Strict source route, recursion control and flag bits are ignored.
        for reserved in [0x0800u16, 0x0700, 0x00f8, 0x0ff8] {
            let bytes = [(reserved >> 8) as u8, reserved as u8, 0x08, 0x00];
            let packet = Packet::new_checked(&bytes[..]).unwrap();
            assert_eq!(packet.reserved0(), reserved);
            assert_eq!(Repr::parse(&packet).unwrap().protocol, EtherType::Ipv4);
        }
        // Reserved1 is ignored too, but covered by the checksum.
        let mut buf = [0u8; 8];
        let mut packet = Packet::new_checked(&mut buf[..]).unwrap();
        assert!(!packet.set_key(1) && !packet.set_seq(1));
        buf[0] = 0x80;
        buf[6] = 0x12;
        let mut packet = Packet::new_checked(&mut buf[..]).unwrap();
        packet.fill_checksum();
        let packet = Packet::new_checked(&buf[..]).unwrap();
        assert_eq!(packet.reserved1(), Some(0x1200));
        assert!(Repr::parse(&packet).unwrap().csum);
    }

    #[test]
    fn setters_update_key_and_seq_in_place() {
        let repr = Repr {
            csum: true,
            key: Some(1),
            seq: Some(2),
            protocol: EtherType::Ipv6,
        };
        let mut buf = [0u8; 20];
        repr.emit(&mut buf).unwrap();
        let mut packet = Packet::new_checked(&mut buf[..]).unwrap();
        assert!(packet.set_key(0xaabb_ccdd) && packet.set_seq(7));
        packet.payload_mut().fill(0xee);
        assert!(!packet.verify_checksum());
        packet.fill_checksum();
        let packet = Packet::new_checked(&buf[..]).unwrap();
        let parsed = Repr::parse(&packet).unwrap();
        assert_eq!((parsed.key, parsed.seq), (Some(0xaabb_ccdd), Some(7)));
    }

    proptest! {
        #[test]
        fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Ok(packet) = Packet::new_checked(&data[..]) {
                let _ = Repr::parse(&packet);
                let _ = (packet.payload(), packet.checksum(), packet.key(), packet.seq(), packet.reserved1());
            }
        }

        #[test]
        fn emit_of_parse_round_trips(mut data in proptest::collection::vec(any::<u8>(), 16..64)) {
            // Make the flags word acceptable and what Repr carries: version
            // 0, no routing, no reserved bits; then a valid checksum.
            data[0] &= 0xb0;
            data[1] = 0;
            let mut packet = Packet::new_checked(&mut data[..]).unwrap();
            if packet.checksum_present() {
                packet.buffer[6..8].fill(0);
                packet.fill_checksum();
            }
            let packet = Packet::new_checked(&data[..]).unwrap();
            let repr = Repr::parse(&packet).unwrap();
            let mut out = data.clone();
            out[..repr.header_len()].fill(0);
            repr.emit(&mut out).unwrap();
            prop_assert_eq!(out, data);
        }

        #[test]
        fn parse_of_emit_round_trips(csum in any::<bool>(), key in any::<Option<u32>>(), seq in any::<Option<u32>>(),
                                     protocol in any::<u16>(), payload in proptest::collection::vec(any::<u8>(), 0..64)) {
            let repr = Repr { csum, key, seq, protocol: protocol.into() };
            let mut buf = vec![0u8; repr.header_len()];
            buf.extend_from_slice(&payload);
            repr.emit(&mut buf).unwrap();
            let packet = Packet::new_checked(&buf[..]).unwrap();
            prop_assert_eq!(Repr::parse(&packet).unwrap(), repr);
            prop_assert_eq!(packet.payload(), &payload[..]);
        }
    }
}
