//! ICMP for IPv4 (RFC 792, RFC 1191): echo, destination unreachable
//! (including fragmentation needed with the next-hop MTU) and time
//! exceeded.
//!
//! Error messages quote the invoking packet; like Linux's `icmp_unreach`,
//! [`Repr::parse`] insists the quote holds at least a full IPv4 header and
//! refuses destination-unreachable codes above 15. Other message types are
//! [`Error::Unrecognized`].
//!
//! ```
//! use fibre_net::icmpv4::{DstUnreachable, Packet, Repr};
//! let quoted = [0x45u8; 28]; // the invoking packet's header and 8 bytes
//! let repr = Repr::DstUnreachable { reason: DstUnreachable::FragRequired, next_hop_mtu: 1400, data: &quoted };
//! let mut buf = [0u8; 36];
//! repr.emit(&mut buf).unwrap();
//! let packet = Packet::new_checked(&buf[..]).unwrap();
//! assert_eq!(packet.next_hop_mtu(), 1400);
//! assert_eq!(Repr::parse(&packet).unwrap(), repr);
//! ```

use crate::checksum;
use crate::ipv4;
use crate::{Error, Result};

/// Length of the ICMP header (type, code, checksum, four type-specific bytes).
pub const HEADER_LEN: usize = 8;

/// The most of the invoking packet an error message should quote: the
/// whole ICMP datagram stays within 576 bytes (RFC 1812 §4.3.2.3), as
/// Linux's `icmp_send` does: 576 - 20 (IPv4 header) - 8 (ICMP header).
pub const MAX_ERROR_QUOTE: usize = 576 - 20 - HEADER_LEN;

/// Message types handled here.
pub mod msg_type {
    /// Echo reply.
    pub const ECHO_REPLY: u8 = 0;
    /// Destination unreachable.
    pub const DST_UNREACHABLE: u8 = 3;
    /// Echo request.
    pub const ECHO_REQUEST: u8 = 8;
    /// Time exceeded.
    pub const TIME_EXCEEDED: u8 = 11;
}

/// Destination-unreachable codes (RFC 792, RFC 1122, RFC 1812).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DstUnreachable {
    /// 0.
    NetUnreachable = 0,
    /// 1.
    HostUnreachable = 1,
    /// 2.
    ProtoUnreachable = 2,
    /// 3.
    PortUnreachable = 3,
    /// 4: fragmentation needed and DF set; carries the next-hop MTU.
    FragRequired = 4,
    /// 5.
    SrcRouteFailed = 5,
    /// 6.
    DstNetUnknown = 6,
    /// 7.
    DstHostUnknown = 7,
    /// 8.
    SrcHostIsolated = 8,
    /// 9.
    NetProhibited = 9,
    /// 10.
    HostProhibited = 10,
    /// 11.
    NetUnreachToS = 11,
    /// 12.
    HostUnreachToS = 12,
    /// 13.
    CommProhibited = 13,
    /// 14.
    HostPrecedenceViolation = 14,
    /// 15.
    PrecedenceCutoff = 15,
}

impl DstUnreachable {
    const ALL: [DstUnreachable; 16] = [
        DstUnreachable::NetUnreachable,
        DstUnreachable::HostUnreachable,
        DstUnreachable::ProtoUnreachable,
        DstUnreachable::PortUnreachable,
        DstUnreachable::FragRequired,
        DstUnreachable::SrcRouteFailed,
        DstUnreachable::DstNetUnknown,
        DstUnreachable::DstHostUnknown,
        DstUnreachable::SrcHostIsolated,
        DstUnreachable::NetProhibited,
        DstUnreachable::HostProhibited,
        DstUnreachable::NetUnreachToS,
        DstUnreachable::HostUnreachToS,
        DstUnreachable::CommProhibited,
        DstUnreachable::HostPrecedenceViolation,
        DstUnreachable::PrecedenceCutoff,
    ];

    /// The code for a wire value; `None` above 15 (Linux drops those).
    pub fn from_code(code: u8) -> Option<DstUnreachable> {
        Self::ALL.get(usize::from(code)).copied()
    }
}

/// Time-exceeded codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum TimeExceeded {
    /// 0: TTL exceeded in transit.
    TtlExpired = 0,
    /// 1: fragment reassembly time exceeded.
    FragExpired = 1,
}

packet_view! {
    /// A read/write view of an ICMP message at least [`HEADER_LEN`] long.
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer` (the IPv4 payload) after checking its length.
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

    /// Next-hop MTU of a fragmentation-needed message (bytes 6-7, RFC 1191).
    pub fn next_hop_mtu(&self) -> u16 {
        self.be16(6)
    }

    /// Everything after the 8-byte header.
    pub fn data(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }

    /// True if the checksum over the whole message verifies.
    pub fn verify_checksum(&self) -> bool {
        checksum::sum(self.buffer.as_ref()) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Recomputes the checksum over the whole message.
    pub fn fill_checksum(&mut self) {
        let data = self.buffer.as_mut();
        data[2..4].fill(0);
        let value = checksum::checksum(data);
        data[2..4].copy_from_slice(&value.to_be_bytes());
    }
}

/// The meaning of an ICMP message; data is borrowed from the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Repr<'a> {
    /// Echo request (type 8).
    EchoRequest {
        /// Identifier.
        ident: u16,
        /// Sequence number.
        seq_no: u16,
        /// Echo data.
        data: &'a [u8],
    },
    /// Echo reply (type 0).
    EchoReply {
        /// Identifier.
        ident: u16,
        /// Sequence number.
        seq_no: u16,
        /// Echo data.
        data: &'a [u8],
    },
    /// Destination unreachable (type 3).
    DstUnreachable {
        /// The code.
        reason: DstUnreachable,
        /// Next-hop MTU (meaningful for `FragRequired`, else 0).
        next_hop_mtu: u16,
        /// The quoted invoking packet: its IPv4 header and some payload.
        data: &'a [u8],
    },
    /// Time exceeded (type 11).
    TimeExceeded {
        /// The code.
        reason: TimeExceeded,
        /// The quoted invoking packet: its IPv4 header and some payload.
        data: &'a [u8],
    },
}

impl<'a> Repr<'a> {
    /// Reads a checked message: verifies the checksum, the type and code,
    /// and that an error message quotes at least an IPv4 header.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&'a T>) -> Result<Repr<'a>> {
        if !packet.verify_checksum() {
            return Err(Error::BadChecksum);
        }
        let bytes: &'a [u8] = packet.buffer.as_ref();
        let data = &bytes[HEADER_LEN..];
        let quoted = || {
            if data.len() < ipv4::MIN_HEADER_LEN {
                Err(Error::Truncated)
            } else {
                Ok(data)
            }
        };
        match (packet.msg_type(), packet.code()) {
            (msg_type::ECHO_REQUEST, 0) => Ok(Repr::EchoRequest {
                ident: packet.echo_ident(),
                seq_no: packet.echo_seq_no(),
                data,
            }),
            (msg_type::ECHO_REPLY, 0) => Ok(Repr::EchoReply {
                ident: packet.echo_ident(),
                seq_no: packet.echo_seq_no(),
                data,
            }),
            (msg_type::DST_UNREACHABLE, code) => {
                let reason = DstUnreachable::from_code(code).ok_or(Error::Unrecognized)?;
                Ok(Repr::DstUnreachable {
                    reason,
                    next_hop_mtu: packet.next_hop_mtu(),
                    data: quoted()?,
                })
            }
            (msg_type::TIME_EXCEEDED, code) => {
                let reason = match code {
                    0 => TimeExceeded::TtlExpired,
                    1 => TimeExceeded::FragExpired,
                    _ => return Err(Error::Unrecognized),
                };
                Ok(Repr::TimeExceeded {
                    reason,
                    data: quoted()?,
                })
            }
            _ => Err(Error::Unrecognized),
        }
    }

    fn data(&self) -> &'a [u8] {
        match *self {
            Repr::EchoRequest { data, .. }
            | Repr::EchoReply { data, .. }
            | Repr::DstUnreachable { data, .. }
            | Repr::TimeExceeded { data, .. } => data,
        }
    }

    /// Length of the message: header plus data.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.data().len()
    }

    /// Writes the whole message (header, copied data, checksum) into the
    /// front of `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        let len = self.buffer_len();
        if buf.len() < len {
            return Err(Error::Truncated);
        }
        let buf = &mut buf[..len];
        let (kind, code, rest): (u8, u8, [u8; 4]) = match *self {
            Repr::EchoRequest { ident, seq_no, .. } => {
                (msg_type::ECHO_REQUEST, 0, words(ident, seq_no))
            }
            Repr::EchoReply { ident, seq_no, .. } => {
                (msg_type::ECHO_REPLY, 0, words(ident, seq_no))
            }
            Repr::DstUnreachable {
                reason,
                next_hop_mtu,
                ..
            } => (
                msg_type::DST_UNREACHABLE,
                reason as u8,
                words(0, next_hop_mtu),
            ),
            Repr::TimeExceeded { reason, .. } => (msg_type::TIME_EXCEEDED, reason as u8, [0; 4]),
        };
        buf[0] = kind;
        buf[1] = code;
        buf[4..8].copy_from_slice(&rest);
        buf[HEADER_LEN..].copy_from_slice(self.data());
        Packet { buffer: buf }.fill_checksum();
        Ok(())
    }
}

fn words(hi: u16, lo: u16) -> [u8; 4] {
    let (a, b) = (hi.to_be_bytes(), lo.to_be_bytes());
    [a[0], a[1], b[0], b[1]]
}

// Packet is its buffer, free to pass by value.
assert_layout!(view Packet);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// ICMP parts of scapy 2.8 packets (outer IPv4 headers stripped):
    /// `ICMP(type=8, id=4660, seq=7)/b'abcdefgh'`;
    /// `ICMP(type=3, code=4, nexthopmtu=1400)/<28 quoted bytes>`;
    /// `ICMP(type=11, code=0)/<the same 28 bytes>`.
    const ECHO: [u8; 16] = [
        0x08, 0x00, 0x54, 0x2f, 0x12, 0x34, 0x00, 0x07, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67,
        0x68,
    ];
    const QUOTE: [u8; 28] = [
        0x45, 0x00, 0x00, 0x3c, 0x00, 0x05, 0x40, 0x00, 0x01, 0x11, 0x13, 0x6a, 0xc6, 0x33, 0x64,
        0x09, 0xcb, 0x00, 0x71, 0x05, 0x82, 0x9a, 0x82, 0x9b, 0x00, 0x28, 0x94, 0x25,
    ];
    const FRAG_NEEDED_HEADER: [u8; 8] = [0x03, 0x04, 0x5e, 0x00, 0x00, 0x00, 0x05, 0x78];
    const TIME_EXCEEDED_HEADER: [u8; 8] = [0x0b, 0x00, 0x5b, 0x7c, 0x00, 0x00, 0x00, 0x00];

    fn with_quote(header: [u8; 8]) -> Vec<u8> {
        let mut v = header.to_vec();
        v.extend_from_slice(&QUOTE);
        v
    }

    fn reemit(repr: &Repr<'_>) -> Vec<u8> {
        let mut out = vec![0u8; repr.buffer_len()];
        repr.emit(&mut out).unwrap();
        out
    }

    /// `bytes` parse as `want`, and `want` emits `bytes` again.
    fn assert_round_trip(bytes: &[u8], want: Repr<'_>) {
        let packet = Packet::new_checked(bytes).unwrap();
        assert_eq!(Repr::parse(&packet).unwrap(), want);
        assert_eq!(reemit(&want), bytes);
    }

    #[test]
    fn parses_and_reproduces_captured_messages() {
        assert_round_trip(
            &ECHO,
            Repr::EchoRequest {
                ident: 0x1234,
                seq_no: 7,
                data: b"abcdefgh",
            },
        );
        assert_round_trip(
            &with_quote(FRAG_NEEDED_HEADER),
            Repr::DstUnreachable {
                reason: DstUnreachable::FragRequired,
                next_hop_mtu: 1400,
                data: &QUOTE,
            },
        );
        assert_round_trip(
            &with_quote(TIME_EXCEEDED_HEADER),
            Repr::TimeExceeded {
                reason: TimeExceeded::TtlExpired,
                data: &QUOTE,
            },
        );
    }

    #[test]
    fn malformed_messages_are_refused() {
        crate::assert_prefixes_truncated(&ECHO, HEADER_LEN, |b| Packet::new_checked(b).map(drop));
        // Any bit flip breaks the checksum.
        for bit in 0..ECHO.len() * 8 {
            let mut b = ECHO;
            b[bit / 8] ^= 0x80 >> (bit % 8);
            let packet = Packet::new_checked(&b[..]).unwrap();
            assert_eq!(Repr::parse(&packet), Err(Error::BadChecksum));
        }
        // A quote shorter than an IPv4 header (checksum refilled).
        for cut in 0..ipv4::MIN_HEADER_LEN {
            let mut b = with_quote(FRAG_NEEDED_HEADER);
            b.truncate(HEADER_LEN + cut);
            let mut packet = Packet::new_checked(&mut b[..]).unwrap();
            packet.fill_checksum();
            let packet = Packet::new_checked(&b[..]).unwrap();
            assert_eq!(Repr::parse(&packet), Err(Error::Truncated));
        }
        // Unknown codes and types.
        for (kind, code) in [(3u8, 16u8), (11, 2), (8, 1), (0, 9), (5, 0), (13, 0)] {
            let mut b = with_quote(FRAG_NEEDED_HEADER);
            b[0] = kind;
            b[1] = code;
            let mut packet = Packet::new_checked(&mut b[..]).unwrap();
            packet.fill_checksum();
            let packet = Packet::new_checked(&b[..]).unwrap();
            assert_eq!(
                Repr::parse(&packet),
                Err(Error::Unrecognized),
                "{kind}/{code}"
            );
        }
        let repr = Repr::EchoReply {
            ident: 1,
            seq_no: 2,
            data: b"xyz",
        };
        assert_eq!(repr.emit(&mut [0u8; 10]), Err(Error::Truncated));
    }

    #[test]
    fn every_unreachable_code_round_trips() {
        for code in 0..16u8 {
            let reason = DstUnreachable::from_code(code).unwrap();
            assert_eq!(reason as u8, code);
            let repr = Repr::DstUnreachable {
                reason,
                next_hop_mtu: 0,
                data: &QUOTE,
            };
            let bytes = reemit(&repr);
            assert_eq!(
                Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()).unwrap(),
                repr
            );
        }
        assert_eq!(DstUnreachable::from_code(16), None);
    }

    proptest! {
        #[test]
        fn parse_never_panics(mut data in proptest::collection::vec(any::<u8>(), 0..64), kind in prop::sample::select(vec![0u8, 3, 8, 11, 42]), fix in any::<bool>()) {
            if data.len() >= HEADER_LEN && fix {
                data[0] = kind;
                data[1] %= 17;
                Packet::new_checked(&mut data[..]).unwrap().fill_checksum();
            }
            if let Ok(packet) = Packet::new_checked(&data[..]) {
                if let Ok(repr) = Repr::parse(&packet) {
                    // emit(parse(x)) == x, except the unused bytes 4-5 of errors.
                    let mut expect = data.clone();
                    if matches!(repr, Repr::DstUnreachable { .. } | Repr::TimeExceeded { .. }) {
                        expect[4..6].fill(0);
                        if matches!(repr, Repr::TimeExceeded { .. }) {
                            expect[6..8].fill(0);
                        }
                        Packet::new_checked(&mut expect[..]).unwrap().fill_checksum();
                    }
                    prop_assert_eq!(reemit(&repr), expect);
                }
            }
        }
    }
}
