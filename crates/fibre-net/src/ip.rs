//! What IPv4 and IPv6 share: protocol numbers and the pseudo-header that
//! UDP and ICMPv6 checksums cover.

use std::net::{Ipv4Addr, Ipv6Addr};

use fibre_base::{Ipv4, Ipv6};

use crate::checksum;

/// Protocol numbers as headers carry them (IANA's "Assigned Internet
/// Protocol Numbers"), for code that matches raw header bytes; [`Protocol`]
/// converts from and to them.
pub mod number {
    /// IPv6 hop-by-hop options (RFC 8200).
    pub const HOP_BY_HOP: u8 = 0;
    /// ICMP for IPv4.
    pub const ICMP: u8 = 1;
    /// IPv4 in IP.
    pub const IPV4: u8 = 4;
    /// TCP.
    pub const TCP: u8 = 6;
    /// UDP.
    pub const UDP: u8 = 17;
    /// IPv6 in IP.
    pub const IPV6: u8 = 41;
    /// IPv6 routing header.
    pub const ROUTING: u8 = 43;
    /// IPv6 fragment header.
    pub const FRAGMENT: u8 = 44;
    /// GRE.
    pub const GRE: u8 = 47;
    /// IPsec authentication header.
    pub const AUTH: u8 = 51;
    /// ICMP for IPv6.
    pub const ICMPV6: u8 = 58;
    /// No next header (IPv6).
    pub const NO_NEXT_HEADER: u8 = 59;
    /// IPv6 destination options.
    pub const DEST_OPTS: u8 = 60;
}

/// An IP protocol number (IPv4 protocol field, IPv6 next header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Protocol {
    /// 0: IPv6 hop-by-hop options.
    HopByHop,
    /// 1: ICMP for IPv4.
    Icmp,
    /// 4: IPv4 in IP.
    Ipv4,
    /// 6: TCP.
    Tcp,
    /// 17: UDP.
    Udp,
    /// 41: IPv6 in IP.
    Ipv6,
    /// 47: GRE.
    Gre,
    /// 58: ICMP for IPv6.
    Icmpv6,
    /// 59: no next header.
    NoNextHeader,
    /// Any other value, kept as is.
    Unknown(u8),
}

impl From<u8> for Protocol {
    fn from(value: u8) -> Self {
        match value {
            number::HOP_BY_HOP => Protocol::HopByHop,
            number::ICMP => Protocol::Icmp,
            number::IPV4 => Protocol::Ipv4,
            number::TCP => Protocol::Tcp,
            number::UDP => Protocol::Udp,
            number::IPV6 => Protocol::Ipv6,
            number::GRE => Protocol::Gre,
            number::ICMPV6 => Protocol::Icmpv6,
            number::NO_NEXT_HEADER => Protocol::NoNextHeader,
            other => Protocol::Unknown(other),
        }
    }
}

impl From<Protocol> for u8 {
    fn from(value: Protocol) -> Self {
        match value {
            Protocol::HopByHop => number::HOP_BY_HOP,
            Protocol::Icmp => number::ICMP,
            Protocol::Ipv4 => number::IPV4,
            Protocol::Tcp => number::TCP,
            Protocol::Udp => number::UDP,
            Protocol::Ipv6 => number::IPV6,
            Protocol::Gre => number::GRE,
            Protocol::Icmpv6 => number::ICMPV6,
            Protocol::NoNextHeader => number::NO_NEXT_HEADER,
            Protocol::Unknown(other) => other,
        }
    }
}

/// The addresses an upper-layer checksum covers (with protocol and length).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PseudoHeader {
    /// Carried over IPv4.
    V4 {
        /// Source address.
        src: Ipv4Addr,
        /// Destination address.
        dst: Ipv4Addr,
    },
    /// Carried over IPv6.
    V6 {
        /// Source address.
        src: Ipv6Addr,
        /// Destination address (the final one, if a routing header is present).
        dst: Ipv6Addr,
    },
}

impl PseudoHeader {
    /// The folded (uncomplemented) sum of the pseudo-header for an
    /// upper-layer message of `length` bytes.
    ///
    /// ```
    /// use fibre_net::ip::{Protocol, PseudoHeader};
    /// let v4 = PseudoHeader::V4 { src: "10.0.0.1".parse().unwrap(), dst: "10.0.0.2".parse().unwrap() };
    /// assert_eq!(v4.sum(Protocol::Udp, 8), 0x141c);
    /// ```
    pub fn sum(&self, protocol: Protocol, length: u32) -> u16 {
        match *self {
            // An IPv4 upper-layer length never exceeds 16 bits; callers
            // have validated it against the IPv4 total length.
            PseudoHeader::V4 { src, dst } => {
                checksum::pseudo_header::<Ipv4>(src, dst, protocol.into(), u32::from(length as u16))
            }
            PseudoHeader::V6 { src, dst } => {
                checksum::pseudo_header::<Ipv6>(src, dst, protocol.into(), length)
            }
        }
    }

    /// True for IPv6.
    pub fn is_v6(&self) -> bool {
        matches!(self, PseudoHeader::V6 { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_numbers_round_trip() {
        for v in 0..=u8::MAX {
            assert_eq!(u8::from(Protocol::from(v)), v);
        }
        assert_eq!(Protocol::from(47), Protocol::Gre);
    }
}
