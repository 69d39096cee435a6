//! ICMPv6 (RFC 4443): echo, destination unreachable, packet too big and
//! time exceeded. The checksum covers the IPv6 pseudo-header and is
//! mandatory.
//!
//! Error messages quote the invoking packet; like Linux's
//! `icmpv6_notify`, [`Repr::parse`] insists the quote holds at least a full
//! IPv6 header. Codes are kept as received (Linux does not judge them);
//! other message types (neighbour discovery, MLD, parameter problem) are
//! [`Error::Unrecognized`] here.
//!
//! ```
//! use fibre_net::icmpv6::{Packet, Repr};
//! let (src, dst) = ("2001:db8::fe".parse().unwrap(), "2001:db8::9".parse().unwrap());
//! let quoted = [0x60u8; 48];
//! let repr = Repr::PacketTooBig { mtu: 1280, data: &quoted };
//! let mut buf = [0u8; 56];
//! repr.emit(&mut buf, src, dst).unwrap();
//! let packet = Packet::new_checked(&buf[..]).unwrap();
//! assert_eq!(Repr::parse(&packet, src, dst).unwrap(), repr);
//! ```

use std::net::Ipv6Addr;

use fibre_base::Ipv6;

use crate::checksum;
use crate::ip::Protocol;
use crate::ipv6;
use crate::{Error, Result};

/// Length of the ICMPv6 header (type, code, checksum, four type-specific bytes).
pub const HEADER_LEN: usize = 8;

/// The most of the invoking packet an error message may quote: the whole
/// ICMPv6 packet must not exceed the minimum IPv6 MTU (RFC 4443 §2.4(c)):
/// 1280 - 40 (IPv6 header) - 8 (ICMPv6 header).
pub const MAX_ERROR_QUOTE: usize = 1280 - 40 - HEADER_LEN;

/// Message types handled here.
pub mod msg_type {
    /// Destination unreachable.
    pub const DST_UNREACHABLE: u8 = 1;
    /// Packet too big.
    pub const PACKET_TOO_BIG: u8 = 2;
    /// Time exceeded.
    pub const TIME_EXCEEDED: u8 = 3;
    /// Echo request.
    pub const ECHO_REQUEST: u8 = 128;
    /// Echo reply.
    pub const ECHO_REPLY: u8 = 129;
}

/// Destination-unreachable codes (RFC 4443 §3.1, RFC 6554).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DstUnreachable {
    /// 0.
    NoRoute,
    /// 1.
    AdminProhibited,
    /// 2.
    BeyondScope,
    /// 3.
    AddrUnreachable,
    /// 4.
    PortUnreachable,
    /// 5.
    FailedPolicy,
    /// 6.
    RejectRoute,
    /// Any other code, kept as is.
    Other(u8),
}

impl From<u8> for DstUnreachable {
    fn from(code: u8) -> Self {
        match code {
            0 => DstUnreachable::NoRoute,
            1 => DstUnreachable::AdminProhibited,
            2 => DstUnreachable::BeyondScope,
            3 => DstUnreachable::AddrUnreachable,
            4 => DstUnreachable::PortUnreachable,
            5 => DstUnreachable::FailedPolicy,
            6 => DstUnreachable::RejectRoute,
            other => DstUnreachable::Other(other),
        }
    }
}

impl From<DstUnreachable> for u8 {
    fn from(reason: DstUnreachable) -> Self {
        match reason {
            DstUnreachable::NoRoute => 0,
            DstUnreachable::AdminProhibited => 1,
            DstUnreachable::BeyondScope => 2,
            DstUnreachable::AddrUnreachable => 3,
            DstUnreachable::PortUnreachable => 4,
            DstUnreachable::FailedPolicy => 5,
            DstUnreachable::RejectRoute => 6,
            DstUnreachable::Other(other) => other,
        }
    }
}

/// Time-exceeded codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeExceeded {
    /// 0: hop limit exceeded in transit.
    HopLimitExceeded,
    /// 1: fragment reassembly time exceeded.
    FragReassemblyExceeded,
    /// Any other code, kept as is.
    Other(u8),
}

impl From<u8> for TimeExceeded {
    fn from(code: u8) -> Self {
        match code {
            0 => TimeExceeded::HopLimitExceeded,
            1 => TimeExceeded::FragReassemblyExceeded,
            other => TimeExceeded::Other(other),
        }
    }
}

impl From<TimeExceeded> for u8 {
    fn from(reason: TimeExceeded) -> Self {
        match reason {
            TimeExceeded::HopLimitExceeded => 0,
            TimeExceeded::FragReassemblyExceeded => 1,
            TimeExceeded::Other(other) => other,
        }
    }
}

packet_view! {
    /// A read/write view of an ICMPv6 message at least [`HEADER_LEN`] long.
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer` (the upper-layer payload of the IPv6 packet) after
    /// checking its length.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        crate::at_least(buffer.as_ref(), HEADER_LEN)?;
        Ok(Packet { buffer })
    }

    /// Message type.
    pub fn msg_type(&self) -> u8 {
        self.buffer.as_ref()[0]
    }

    /// Message code.
    pub fn code(&self) -> u8 {
        self.buffer.as_ref()[1]
    }

    /// The checksum field.
    pub fn checksum(&self) -> u16 {
        self.be16(2)
    }

    /// Echo identifier (bytes 4-5).
    pub fn echo_ident(&self) -> u16 {
        self.be16(4)
    }

    /// Echo sequence number (bytes 6-7).
    pub fn echo_seq_no(&self) -> u16 {
        self.be16(6)
    }

    /// MTU of a packet-too-big message (bytes 4-7).
    pub fn mtu(&self) -> u32 {
        (u32::from(self.be16(4)) << 16) | u32::from(self.be16(6))
    }

    /// Everything after the 8-byte header.
    pub fn data(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }

    /// True if the checksum (with the pseudo-header) verifies.
    pub fn verify_checksum(&self, src: Ipv6Addr, dst: Ipv6Addr) -> bool {
        self.sum(src, dst) == 0xffff
    }

    fn sum(&self, src: Ipv6Addr, dst: Ipv6Addr) -> u16 {
        let bytes = self.buffer.as_ref();
        let pseudo =
            checksum::pseudo_header::<Ipv6>(src, dst, Protocol::Icmpv6.into(), bytes.len() as u32);
        checksum::add(pseudo, checksum::sum(bytes))
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Recomputes the checksum (with the pseudo-header).
    pub fn fill_checksum(&mut self, src: Ipv6Addr, dst: Ipv6Addr) {
        self.buffer.as_mut()[2..4].fill(0);
        let value = !self.sum(src, dst);
        self.buffer.as_mut()[2..4].copy_from_slice(&value.to_be_bytes());
    }
}

/// The meaning of an ICMPv6 message; data is borrowed from the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Repr<'a> {
    /// Echo request (type 128).
    EchoRequest {
        /// Identifier.
        ident: u16,
        /// Sequence number.
        seq_no: u16,
        /// Echo data.
        data: &'a [u8],
    },
    /// Echo reply (type 129).
    EchoReply {
        /// Identifier.
        ident: u16,
        /// Sequence number.
        seq_no: u16,
        /// Echo data.
        data: &'a [u8],
    },
    /// Destination unreachable (type 1).
    DstUnreachable {
        /// The code.
        reason: DstUnreachable,
        /// The quoted invoking packet: its IPv6 header and some payload.
        data: &'a [u8],
    },
    /// Packet too big (type 2; the code is sent as 0 and ignored on receipt).
    PacketTooBig {
        /// The MTU of the next-hop link.
        mtu: u32,
        /// The quoted invoking packet.
        data: &'a [u8],
    },
    /// Time exceeded (type 3).
    TimeExceeded {
        /// The code.
        reason: TimeExceeded,
        /// The quoted invoking packet.
        data: &'a [u8],
    },
}

impl<'a> Repr<'a> {
    /// Reads a checked message: verifies the checksum against the IPv6
    /// source and destination, the type, and that an error message quotes
    /// at least an IPv6 header.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(
        packet: &Packet<&'a T>,
        src: Ipv6Addr,
        dst: Ipv6Addr,
    ) -> Result<Repr<'a>> {
        if !packet.verify_checksum(src, dst) {
            return Err(Error::BadChecksum);
        }
        let bytes: &'a [u8] = packet.buffer.as_ref();
        let data = &bytes[HEADER_LEN..];
        let quoted = || {
            if data.len() < ipv6::HEADER_LEN {
                Err(Error::Truncated)
            } else {
                Ok(data)
            }
        };
        match packet.msg_type() {
            msg_type::ECHO_REQUEST if packet.code() == 0 => Ok(Repr::EchoRequest {
                ident: packet.echo_ident(),
                seq_no: packet.echo_seq_no(),
                data,
            }),
            msg_type::ECHO_REPLY if packet.code() == 0 => Ok(Repr::EchoReply {
                ident: packet.echo_ident(),
                seq_no: packet.echo_seq_no(),
                data,
            }),
            msg_type::DST_UNREACHABLE => Ok(Repr::DstUnreachable {
                reason: packet.code().into(),
                data: quoted()?,
            }),
            msg_type::PACKET_TOO_BIG => Ok(Repr::PacketTooBig {
                mtu: packet.mtu(),
                data: quoted()?,
            }),
            msg_type::TIME_EXCEEDED => Ok(Repr::TimeExceeded {
                reason: packet.code().into(),
                data: quoted()?,
            }),
            _ => Err(Error::Unrecognized),
        }
    }

    fn data(&self) -> &'a [u8] {
        match *self {
            Repr::EchoRequest { data, .. }
            | Repr::EchoReply { data, .. }
            | Repr::DstUnreachable { data, .. }
            | Repr::PacketTooBig { data, .. }
            | Repr::TimeExceeded { data, .. } => data,
        }
    }

    /// Length of the message: header plus data.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.data().len()
    }

    /// Writes the whole message (header, copied data, checksum over the
    /// pseudo-header of `src` → `dst`) into the front of `buf`.
    pub fn emit(&self, buf: &mut [u8], src: Ipv6Addr, dst: Ipv6Addr) -> Result<()> {
        let len = self.buffer_len();
        if len > u32::MAX as usize {
            return Err(Error::Unencodable);
        }
        if buf.len() < len {
            return Err(Error::Truncated);
        }
        let buf = &mut buf[..len];
        let (kind, code, rest): (u8, u8, [u8; 4]) = match *self {
            Repr::EchoRequest { ident, seq_no, .. } => {
                (msg_type::ECHO_REQUEST, 0, echo_words(ident, seq_no))
            }
            Repr::EchoReply { ident, seq_no, .. } => {
                (msg_type::ECHO_REPLY, 0, echo_words(ident, seq_no))
            }
            Repr::DstUnreachable { reason, .. } => {
                (msg_type::DST_UNREACHABLE, reason.into(), [0; 4])
            }
            Repr::PacketTooBig { mtu, .. } => (msg_type::PACKET_TOO_BIG, 0, mtu.to_be_bytes()),
            Repr::TimeExceeded { reason, .. } => (msg_type::TIME_EXCEEDED, reason.into(), [0; 4]),
        };
        buf[0] = kind;
        buf[1] = code;
        buf[4..8].copy_from_slice(&rest);
        buf[HEADER_LEN..].copy_from_slice(self.data());
        Packet { buffer: buf }.fill_checksum(src, dst);
        Ok(())
    }
}

fn echo_words(ident: u16, seq_no: u16) -> [u8; 4] {
    let (a, b) = (ident.to_be_bytes(), seq_no.to_be_bytes());
    [a[0], a[1], b[0], b[1]]
}

// Packet is its buffer, free to pass by value.
assert_layout!(view Packet);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn addr(s: &str) -> Ipv6Addr {
        s.parse().unwrap()
    }

    /// ICMPv6 parts of scapy 2.8 packets (outer IPv6 headers stripped):
    /// `IPv6(src='2001:db8::1', dst='2001:db8::2')/ICMPv6EchoRequest(id=4660,
    /// seq=7, data=b'abcdefgh')`, and from `2001:db8::fe` to `2001:db8::9`
    /// `ICMPv6PacketTooBig(mtu=1280)`, `ICMPv6DestUnreach(code=3)`,
    /// `ICMPv6TimeExceeded(code=0)`, each quoting the same 48 bytes.
    const ECHO: [u8; 16] = [
        0x80, 0x00, 0x80, 0x6f, 0x12, 0x34, 0x00, 0x07, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67,
        0x68,
    ];
    const QUOTE: [u8; 48] = [
        0x60, 0x00, 0x00, 0x00, 0x00, 0x18, 0x11, 0x01, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x82, 0x9a, 0x82, 0x9b, 0x00,
        0x18, 0x9f, 0x07,
    ];
    const PTB_HEADER: [u8; 8] = [0x02, 0x00, 0x2b, 0x24, 0x00, 0x00, 0x05, 0x00];
    const UNREACH_HEADER: [u8; 8] = [0x01, 0x03, 0x31, 0x21, 0x00, 0x00, 0x00, 0x00];
    const TIME_EXCEEDED_HEADER: [u8; 8] = [0x03, 0x00, 0x2f, 0x24, 0x00, 0x00, 0x00, 0x00];

    fn with_quote(header: [u8; 8]) -> Vec<u8> {
        let mut v = header.to_vec();
        v.extend_from_slice(&QUOTE);
        v
    }

    fn reemit(repr: &Repr<'_>, src: Ipv6Addr, dst: Ipv6Addr) -> Vec<u8> {
        let mut out = vec![0u8; repr.buffer_len()];
        repr.emit(&mut out, src, dst).unwrap();
        out
    }

    #[test]
    fn parses_and_reproduces_captured_messages() {
        let (s, d) = (addr("2001:db8::1"), addr("2001:db8::2"));
        let repr = Repr::parse(&Packet::new_checked(&ECHO[..]).unwrap(), s, d).unwrap();
        assert_eq!(
            repr,
            Repr::EchoRequest {
                ident: 0x1234,
                seq_no: 7,
                data: b"abcdefgh"
            }
        );
        assert_eq!(reemit(&repr, s, d), ECHO);
        // The pseudo-header matters (swapping src and dst would not: the
        // sum commutes).
        assert_eq!(
            Repr::parse(
                &Packet::new_checked(&ECHO[..]).unwrap(),
                s,
                addr("2001:db8::3")
            ),
            Err(Error::BadChecksum)
        );

        let (s, d) = (addr("2001:db8::fe"), addr("2001:db8::9"));
        for (header, expect) in [
            (
                PTB_HEADER,
                Repr::PacketTooBig {
                    mtu: 1280,
                    data: &QUOTE,
                },
            ),
            (
                UNREACH_HEADER,
                Repr::DstUnreachable {
                    reason: DstUnreachable::AddrUnreachable,
                    data: &QUOTE,
                },
            ),
            (
                TIME_EXCEEDED_HEADER,
                Repr::TimeExceeded {
                    reason: TimeExceeded::HopLimitExceeded,
                    data: &QUOTE,
                },
            ),
        ] {
            let bytes = with_quote(header);
            let packet = Packet::new_checked(&bytes[..]).unwrap();
            let repr = Repr::parse(&packet, s, d).unwrap();
            assert_eq!(repr, expect);
            assert_eq!(reemit(&repr, s, d), bytes);
        }
    }

    #[test]
    fn malformed_messages_are_refused() {
        let (s, d) = (addr("2001:db8::fe"), addr("2001:db8::9"));
        crate::assert_prefixes_truncated(&PTB_HEADER, HEADER_LEN, |b| {
            Packet::new_checked(b).map(drop)
        });
        let good = with_quote(PTB_HEADER);
        for bit in 0..good.len() * 8 {
            let mut b = good.clone();
            b[bit / 8] ^= 0x80 >> (bit % 8);
            let packet = Packet::new_checked(&b[..]).unwrap();
            assert_eq!(Repr::parse(&packet, s, d), Err(Error::BadChecksum));
        }
        for cut in 0..ipv6::HEADER_LEN {
            let mut b = good.clone();
            b.truncate(HEADER_LEN + cut);
            let mut packet = Packet::new_checked(&mut b[..]).unwrap();
            packet.fill_checksum(s, d);
            let packet = Packet::new_checked(&b[..]).unwrap();
            assert_eq!(Repr::parse(&packet, s, d), Err(Error::Truncated));
        }
        for (kind, code) in [(4u8, 0u8), (135, 0), (128, 1), (129, 5), (0, 0)] {
            let mut b = good.clone();
            b[0] = kind;
            b[1] = code;
            let mut packet = Packet::new_checked(&mut b[..]).unwrap();
            packet.fill_checksum(s, d);
            let packet = Packet::new_checked(&b[..]).unwrap();
            assert_eq!(Repr::parse(&packet, s, d), Err(Error::Unrecognized));
        }
        let repr = Repr::EchoReply {
            ident: 1,
            seq_no: 2,
            data: b"xyz",
        };
        assert_eq!(repr.emit(&mut [0u8; 10], s, d), Err(Error::Truncated));
    }

    #[test]
    fn codes_round_trip() {
        for code in 0..=u8::MAX {
            assert_eq!(u8::from(DstUnreachable::from(code)), code);
            assert_eq!(u8::from(TimeExceeded::from(code)), code);
        }
    }

    proptest! {
        #[test]
        fn parse_never_panics(mut data in proptest::collection::vec(any::<u8>(), 0..80),
                              kind in prop::sample::select(vec![1u8, 2, 3, 128, 129, 135]), fix in any::<bool>(),
                              s in any::<u128>(), d in any::<u128>()) {
            let (s, d) = (Ipv6Addr::from(s), Ipv6Addr::from(d));
            if data.len() >= HEADER_LEN && fix {
                data[0] = kind;
                if kind >= 128 || kind == 2 {
                    data[1] = 0;
                }
                Packet::new_checked(&mut data[..]).unwrap().fill_checksum(s, d);
            }
            if let Ok(packet) = Packet::new_checked(&data[..]) {
                if let Ok(repr) = Repr::parse(&packet, s, d) {
                    // emit(parse(x)) == x, except the unused bytes of errors.
                    let mut expect = data.clone();
                    if matches!(repr, Repr::DstUnreachable { .. } | Repr::TimeExceeded { .. }) {
                        expect[4..8].fill(0);
                        Packet::new_checked(&mut expect[..]).unwrap().fill_checksum(s, d);
                    }
                    prop_assert_eq!(reemit(&repr, s, d), expect);
                }
            }
        }
    }
}
