//! ARP for IPv4 over Ethernet (RFC 826): a checked [`Packet`] view and its
//! [`Repr`].
//!
//! The view accepts any hardware/protocol address sizes the header
//! announces; [`Repr::parse`] models only Ethernet (1) / IPv4 (0x0800)
//! with 6- and 4-byte addresses, as Linux's `arp_rcv` does for Ethernet
//! devices, and refuses other pairs as [`Error::Unrecognized`].
//!
//! ```
//! use fibre_net::arp::{Operation, Packet, Repr};
//! use fibre_net::ethernet::Address;
//! let repr = Repr {
//!     operation: Operation::Request,
//!     source_hardware_addr: Address([0x02, 0, 0, 0, 0, 1]),
//!     source_protocol_addr: "192.0.2.2".parse().unwrap(),
//!     target_hardware_addr: Address([0; 6]),
//!     target_protocol_addr: "192.0.2.1".parse().unwrap(),
//! };
//! let mut buf = [0u8; 28];
//! repr.emit(&mut buf).unwrap();
//! assert_eq!(Repr::parse(&Packet::new_checked(&buf[..]).unwrap()).unwrap(), repr);
//! ```

use std::net::Ipv4Addr;

use crate::ethernet::{Address, EtherType};
use crate::{Error, Result};

/// Length of the fixed part (before the addresses).
pub const FIXED_LEN: usize = 8;
/// Length of an Ethernet/IPv4 ARP packet.
pub const ETHERNET_IPV4_LEN: usize = 28;

const HTYPE_ETHERNET: u16 = 1;

/// The ARP operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// 1: who has the target protocol address?
    Request,
    /// 2: the source has it.
    Reply,
    /// Any other value, kept as is.
    Unknown(u16),
}

impl From<u16> for Operation {
    fn from(value: u16) -> Self {
        match value {
            1 => Operation::Request,
            2 => Operation::Reply,
            other => Operation::Unknown(other),
        }
    }
}

impl From<Operation> for u16 {
    fn from(value: Operation) -> Self {
        match value {
            Operation::Request => 1,
            Operation::Reply => 2,
            Operation::Unknown(other) => other,
        }
    }
}

packet_view! {
    /// A read/write view of an ARP packet whose address fields fit the buffer.
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer` (the Ethernet payload; padding after it is fine)
    /// after checking the announced address lengths fit.
    ///
    /// ```
    /// use fibre_net::{arp::Packet, Error};
    /// let fixed = [0, 1, 8, 0, 6, 4, 0, 1];
    /// assert_eq!(Packet::new_checked(&fixed[..]).unwrap_err(), Error::Truncated);
    /// ```
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let data = buffer.as_ref();
        crate::at_least(data, FIXED_LEN)?;
        let addresses = 2 * (usize::from(data[4]) + usize::from(data[5]));
        if data.len() < FIXED_LEN + addresses {
            return Err(Error::Truncated);
        }
        Ok(Packet { buffer })
    }

    /// Hardware type (1 for Ethernet).
    pub fn hardware_type(&self) -> u16 {
        self.be16(0)
    }

    /// Protocol type (an EtherType; IPv4 for ARP proper).
    pub fn protocol_type(&self) -> EtherType {
        EtherType::from(self.be16(2))
    }

    /// Hardware address length.
    pub fn hardware_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[4])
    }

    /// Protocol address length.
    pub fn protocol_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[5])
    }

    /// The operation.
    pub fn operation(&self) -> Operation {
        Operation::from(self.be16(6))
    }

    fn field(&self, index: usize) -> &[u8] {
        let (h, p) = (self.hardware_len(), self.protocol_len());
        let (start, len) = match index {
            0 => (FIXED_LEN, h),
            1 => (FIXED_LEN + h, p),
            2 => (FIXED_LEN + h + p, h),
            _ => (FIXED_LEN + 2 * h + p, p),
        };
        &self.buffer.as_ref()[start..start + len]
    }

    /// Sender hardware address, raw.
    pub fn source_hardware_addr(&self) -> &[u8] {
        self.field(0)
    }

    /// Sender protocol address, raw.
    pub fn source_protocol_addr(&self) -> &[u8] {
        self.field(1)
    }

    /// Target hardware address, raw.
    pub fn target_hardware_addr(&self) -> &[u8] {
        self.field(2)
    }

    /// Target protocol address, raw.
    pub fn target_protocol_addr(&self) -> &[u8] {
        self.field(3)
    }
}

/// The meaning of an Ethernet/IPv4 ARP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Request or reply.
    pub operation: Operation,
    /// Sender MAC address.
    pub source_hardware_addr: Address,
    /// Sender IPv4 address.
    pub source_protocol_addr: Ipv4Addr,
    /// Target MAC address (zero in a request).
    pub target_hardware_addr: Address,
    /// Target IPv4 address.
    pub target_protocol_addr: Ipv4Addr,
}

fn mac(bytes: &[u8]) -> Address {
    let mut out = [0u8; 6];
    out.copy_from_slice(bytes);
    Address(out)
}

fn ipv4(bytes: &[u8]) -> Ipv4Addr {
    Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3])
}

impl Repr {
    /// Reads a checked packet; only Ethernet/IPv4 is modelled.
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<Repr> {
        if packet.hardware_type() != HTYPE_ETHERNET
            || packet.protocol_type() != EtherType::Ipv4
            || packet.hardware_len() != 6
            || packet.protocol_len() != 4
        {
            return Err(Error::Unrecognized);
        }
        Ok(Repr {
            operation: packet.operation(),
            source_hardware_addr: mac(packet.source_hardware_addr()),
            source_protocol_addr: ipv4(packet.source_protocol_addr()),
            target_hardware_addr: mac(packet.target_hardware_addr()),
            target_protocol_addr: ipv4(packet.target_protocol_addr()),
        })
    }

    /// Length of the packet: always [`ETHERNET_IPV4_LEN`].
    pub const fn buffer_len(&self) -> usize {
        ETHERNET_IPV4_LEN
    }

    /// Writes the packet into the first [`ETHERNET_IPV4_LEN`] bytes of `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        if buf.len() < ETHERNET_IPV4_LEN {
            return Err(Error::Truncated);
        }
        let ptype: u16 = EtherType::Ipv4.into();
        let operation: u16 = self.operation.into();
        buf[0..2].copy_from_slice(&HTYPE_ETHERNET.to_be_bytes());
        buf[2..4].copy_from_slice(&ptype.to_be_bytes());
        buf[4] = 6;
        buf[5] = 4;
        buf[6..8].copy_from_slice(&operation.to_be_bytes());
        buf[8..14].copy_from_slice(&self.source_hardware_addr.0);
        buf[14..18].copy_from_slice(&self.source_protocol_addr.octets());
        buf[18..24].copy_from_slice(&self.target_hardware_addr.0);
        buf[24..28].copy_from_slice(&self.target_protocol_addr.octets());
        Ok(())
    }
}

// Packet is its buffer; Repr stays well inside a cache line.
assert_layout!(view Packet, repr within 32);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The ARP part of scapy 2.8's `Ether(dst='ff:ff:ff:ff:ff:ff',
    /// src='52:54:00:12:34:56')/ARP(hwsrc='52:54:00:12:34:56',
    /// psrc='192.0.2.2', pdst='192.0.2.1')`.
    const REQUEST: [u8; 28] = [
        0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x52, 0x54, 0x00, 0x12, 0x34, 0x56, 0xc0,
        0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0, 0x00, 0x02, 0x01,
    ];

    #[test]
    fn parses_and_reproduces_captured_request() {
        let packet = Packet::new_checked(&REQUEST[..]).unwrap();
        let repr = Repr::parse(&packet).unwrap();
        assert_eq!(repr.operation, Operation::Request);
        assert_eq!(
            repr.source_hardware_addr,
            Address([0x52, 0x54, 0, 0x12, 0x34, 0x56])
        );
        assert_eq!(repr.source_protocol_addr, Ipv4Addr::new(192, 0, 2, 2));
        assert_eq!(repr.target_hardware_addr, Address([0; 6]));
        assert_eq!(repr.target_protocol_addr, Ipv4Addr::new(192, 0, 2, 1));
        let mut out = [0u8; 28];
        repr.emit(&mut out).unwrap();
        assert_eq!(out, REQUEST);
    }

    #[test]
    fn malformed_packets_are_refused() {
        crate::assert_prefixes_truncated(&REQUEST, REQUEST.len(), |b| {
            Packet::new_checked(b).map(drop)
        });
        for (at, value) in [(1usize, 6u8), (2, 0x86), (4, 8), (5, 16)] {
            let mut b = REQUEST.to_vec();
            b[at] = value;
            b.resize(64, 0);
            let packet = Packet::new_checked(&b[..]).unwrap();
            assert_eq!(Repr::parse(&packet), Err(Error::Unrecognized), "byte {at}");
        }
        let repr = Repr::parse(&Packet::new_checked(&REQUEST[..]).unwrap()).unwrap();
        assert_eq!(repr.emit(&mut [0u8; 27]), Err(Error::Truncated));
    }

    #[test]
    fn operations_round_trip() {
        for v in [0u16, 1, 2, 3, 0xffff] {
            assert_eq!(u16::from(Operation::from(v)), v);
        }
    }

    proptest! {
        #[test]
        fn parse_never_panics_and_round_trips(data in proptest::collection::vec(any::<u8>(), 0..64), fix in any::<bool>()) {
            let mut data = data;
            if fix && data.len() >= ETHERNET_IPV4_LEN {
                data[..6].copy_from_slice(&[0, 1, 8, 0, 6, 4]);
            }
            if let Ok(packet) = Packet::new_checked(&data[..]) {
                let _ = (packet.source_hardware_addr(), packet.target_protocol_addr());
                if let Ok(repr) = Repr::parse(&packet) {
                    let mut out = data.clone();
                    out[..ETHERNET_IPV4_LEN].fill(0);
                    repr.emit(&mut out).unwrap();
                    prop_assert_eq!(out, data);
                }
            }
        }
    }
}
