//! Ethernet II frames (no 802.1Q tag, no FCS): a [`Frame`] view and its
//! [`Repr`].
//!
//! ```
//! use fibre_net::ethernet::{Address, EtherType, Frame, Repr};
//! let repr = Repr {
//!     dst_addr: Address::BROADCAST,
//!     src_addr: Address([0x02, 0, 0, 0, 0, 1]),
//!     ethertype: EtherType::Ipv4,
//! };
//! let mut buf = [0u8; 14 + 4];
//! repr.emit(&mut buf).unwrap();
//! let frame = Frame::new_checked(&buf[..]).unwrap();
//! assert_eq!(Repr::parse(&frame).unwrap(), repr);
//! assert_eq!(frame.payload().len(), 4);
//! ```

use core::fmt;

use crate::{Error, Result};

/// Length of the Ethernet II header: destination, source, EtherType.
pub const HEADER_LEN: usize = 14;

mod field {
    use core::ops::Range;
    pub const DST: Range<usize> = 0..6;
    pub const SRC: Range<usize> = 6..12;
    pub const ETHERTYPE: Range<usize> = 12..14;
}

/// A 48-bit MAC address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Address(pub [u8; 6]);

impl Address {
    /// `ff:ff:ff:ff:ff:ff`.
    pub const BROADCAST: Address = Address([0xff; 6]);

    /// True for a group address (the I/G bit, including broadcast).
    ///
    /// ```
    /// use fibre_net::ethernet::Address;
    /// assert!(Address::BROADCAST.is_multicast());
    /// assert!(!Address([0x02, 0, 0, 0, 0, 1]).is_multicast());
    /// ```
    pub fn is_multicast(&self) -> bool {
        self.0[0] & 0x01 != 0
    }

    /// True for a locally administered address (the U/L bit).
    pub fn is_local(&self) -> bool {
        self.0[0] & 0x02 != 0
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

/// An EtherType (also GRE's protocol type field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EtherType {
    /// 0x0800.
    Ipv4,
    /// 0x0806.
    Arp,
    /// 0x86DD.
    Ipv6,
    /// 0x6558, Transparent Ethernet Bridging (an Ethernet frame inside GRE).
    TransparentEthernet,
    /// Any other value, kept as is.
    Unknown(u16),
}

impl From<u16> for EtherType {
    fn from(value: u16) -> Self {
        match value {
            0x0800 => EtherType::Ipv4,
            0x0806 => EtherType::Arp,
            0x86dd => EtherType::Ipv6,
            0x6558 => EtherType::TransparentEthernet,
            other => EtherType::Unknown(other),
        }
    }
}

impl From<EtherType> for u16 {
    fn from(value: EtherType) -> Self {
        match value {
            EtherType::Ipv4 => 0x0800,
            EtherType::Arp => 0x0806,
            EtherType::Ipv6 => 0x86dd,
            EtherType::TransparentEthernet => 0x6558,
            EtherType::Unknown(other) => other,
        }
    }
}

/// Whom a received frame is addressed to, as `eth_type_trans` sets
/// `skb->pkt_type` for a port whose MAC address is `own`.
///
/// ```
/// use fibre_net::ethernet::PacketType;
/// let own = [0x02, 0, 0, 0, 0, 1];
/// assert_eq!(PacketType::of(own, own), PacketType::Host);
/// assert_eq!(PacketType::of([0xff; 6], own), PacketType::Broadcast);
/// assert_eq!(PacketType::of([0x33, 0x33, 0, 0, 0, 1], own), PacketType::Multicast);
/// assert_eq!(PacketType::of([0x02, 0, 0, 0, 0, 2], own), PacketType::OtherHost);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PacketType {
    /// The port's own address (`PACKET_HOST`).
    Host,
    /// ff:ff:ff:ff:ff:ff (`PACKET_BROADCAST`).
    Broadcast,
    /// Any other group address (`PACKET_MULTICAST`). A veth or software
    /// port has no multicast filter: every group reaches the stack.
    Multicast,
    /// Another station's address (`PACKET_OTHERHOST`).
    OtherHost,
}

impl PacketType {
    /// The type of a frame to `dst` received by a port with address `own`.
    pub fn of(dst: [u8; 6], own: [u8; 6]) -> PacketType {
        if dst == own {
            PacketType::Host
        } else if dst == [0xff; 6] {
            PacketType::Broadcast
        } else if dst[0] & 1 != 0 {
            PacketType::Multicast
        } else {
            PacketType::OtherHost
        }
    }
}

/// A read/write view of an Ethernet II frame whose length was checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Frame<T> {
    /// Wraps `buffer` after checking it holds at least a header.
    ///
    /// ```
    /// use fibre_net::{ethernet::Frame, Error};
    /// assert_eq!(Frame::new_checked(&[0u8; 13][..]).unwrap_err(), Error::Truncated);
    /// ```
    pub fn new_checked(buffer: T) -> Result<Frame<T>> {
        if buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        Ok(Frame { buffer })
    }

    /// Gives the buffer back.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Destination MAC address.
    pub fn dst_addr(&self) -> Address {
        Address(self.array6(field::DST.start))
    }

    /// Source MAC address.
    pub fn src_addr(&self) -> Address {
        Address(self.array6(field::SRC.start))
    }

    /// The EtherType of the payload.
    pub fn ethertype(&self) -> EtherType {
        let b = &self.buffer.as_ref()[field::ETHERTYPE];
        EtherType::from(u16::from_be_bytes([b[0], b[1]]))
    }

    /// Everything after the header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }

    fn array6(&self, at: usize) -> [u8; 6] {
        let mut out = [0u8; 6];
        out.copy_from_slice(&self.buffer.as_ref()[at..at + 6]);
        out
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Frame<T> {
    /// Sets the destination MAC address.
    pub fn set_dst_addr(&mut self, addr: Address) {
        self.buffer.as_mut()[field::DST].copy_from_slice(&addr.0);
    }

    /// Sets the source MAC address.
    pub fn set_src_addr(&mut self, addr: Address) {
        self.buffer.as_mut()[field::SRC].copy_from_slice(&addr.0);
    }

    /// Sets the EtherType.
    pub fn set_ethertype(&mut self, ethertype: EtherType) {
        let v: u16 = ethertype.into();
        self.buffer.as_mut()[field::ETHERTYPE].copy_from_slice(&v.to_be_bytes());
    }

    /// The payload, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[HEADER_LEN..]
    }
}

/// The meaning of an Ethernet II header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Destination MAC address.
    pub dst_addr: Address,
    /// Source MAC address.
    pub src_addr: Address,
    /// What the payload is.
    pub ethertype: EtherType,
}

impl Repr {
    /// Reads the header of a checked frame.
    pub fn parse<T: AsRef<[u8]>>(frame: &Frame<T>) -> Result<Repr> {
        Ok(Repr {
            dst_addr: frame.dst_addr(),
            src_addr: frame.src_addr(),
            ethertype: frame.ethertype(),
        })
    }

    /// The header length: always [`HEADER_LEN`].
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header into the first [`HEADER_LEN`] bytes of `buf`,
    /// leaving the payload after it untouched.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        if buf.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let mut frame = Frame { buffer: buf };
        frame.set_dst_addr(self.dst_addr);
        frame.set_src_addr(self.src_addr);
        frame.set_ethertype(self.ethertype);
        Ok(())
    }
}

// Frame is its buffer; Repr stays well inside a cache line.
assert_layout!(view Frame, repr within 16);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The first 20 bytes of a broadcast ARP request built by scapy 2.8:
    /// `Ether(dst='ff:ff:ff:ff:ff:ff', src='52:54:00:12:34:56')/ARP(psrc='192.0.2.2', pdst='192.0.2.1')`.
    const ARP_FRAME: [u8; 20] = [
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x52, 0x54, 0x00, 0x12, 0x34, 0x56, 0x08, 0x06, 0x00,
        0x01, 0x08, 0x00, 0x06, 0x04,
    ];

    #[test]
    fn parses_captured_frame() {
        let frame = Frame::new_checked(&ARP_FRAME[..]).unwrap();
        let repr = Repr::parse(&frame).unwrap();
        assert_eq!(repr.dst_addr, Address::BROADCAST);
        assert_eq!(repr.src_addr.to_string(), "52:54:00:12:34:56");
        assert_eq!(repr.ethertype, EtherType::Arp);
        assert_eq!(frame.payload(), &ARP_FRAME[14..]);
    }

    #[test]
    fn every_truncation_is_an_error() {
        crate::assert_prefixes_truncated(&ARP_FRAME, HEADER_LEN, |b| {
            Frame::new_checked(b).map(drop)
        });
        let mut short = [0u8; HEADER_LEN - 1];
        let repr = Repr::parse(&Frame::new_checked(&ARP_FRAME[..]).unwrap()).unwrap();
        assert_eq!(repr.emit(&mut short), Err(Error::Truncated));
    }

    #[test]
    fn ethertype_round_trips() {
        for v in [0x0800u16, 0x0806, 0x86dd, 0x6558, 0x88cc, 0] {
            assert_eq!(u16::from(EtherType::from(v)), v);
        }
    }

    proptest! {
        #[test]
        fn parse_never_panics_and_round_trips(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(frame) = Frame::new_checked(&data[..]) {
                let repr = Repr::parse(&frame).unwrap();
                let mut out = data.clone();
                out[..HEADER_LEN].fill(0);
                repr.emit(&mut out).unwrap();
                prop_assert_eq!(out, data);
            }
        }
    }
}
