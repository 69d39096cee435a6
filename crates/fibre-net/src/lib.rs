//! Wire formats for the fibre data path.
//!
//! One module per protocol, each in the same shape (after smoltcp's
//! `wire`): a `Packet<T: AsRef<[u8]>>` (or `Frame`) typed view over a byte
//! buffer whose `new_checked` validates the lengths once, so accessors are
//! plain loads that cannot panic; setters when `T: AsMut<[u8]>`; and a
//! `Repr`, the parsed meaning, with `parse` (which verifies checksums and
//! semantics) and `emit` (which writes a header in front of a payload that
//! is already in the buffer). Nothing here allocates; every failure is an
//! [`Error`] variant, never a panic.
//!
//! ```
//! use fibre_net::{gre, ip::Protocol, ipv4, ethernet::EtherType};
//! // An IPv4 packet carrying GRE (key 7) around a 4-byte payload.
//! let gre_repr = gre::Repr { csum: true, key: Some(7), seq: None, protocol: EtherType::Ipv4 };
//! let ip_repr = ipv4::Repr {
//!     src_addr: "192.0.2.1".parse().unwrap(), dst_addr: "192.0.2.2".parse().unwrap(),
//!     protocol: Protocol::Gre, payload_len: gre_repr.header_len() + 4, ttl: 64, tos: 0,
//!     ident: 0, dont_frag: true, more_frags: false, frag_offset: 0, options: &[],
//! };
//! let mut buf = vec![0u8; ip_repr.total_len()];
//! buf[ip_repr.header_len() + gre_repr.header_len()..].copy_from_slice(b"ping");
//! gre_repr.emit(&mut buf[ip_repr.header_len()..]).unwrap();
//! ip_repr.emit(&mut buf).unwrap();
//!
//! let ip = ipv4::Packet::new_checked(&buf[..]).unwrap();
//! let outer = ipv4::Repr::parse(&ip).unwrap();
//! assert_eq!(outer.protocol, Protocol::Gre);
//! let g = gre::Packet::new_checked(ip.payload()).unwrap();
//! assert_eq!(gre::Repr::parse(&g).unwrap(), gre_repr);
//! assert_eq!(g.payload(), b"ping");
//! ```

pub mod checksum;
mod error;
pub mod ethernet;
pub mod gre;
pub mod icmpv4;
pub mod icmpv6;
pub mod ip;
pub mod ipv4;
pub mod ipv6;
pub mod pcap;
pub mod udp;

pub use error::{Error, Result};
