//! rtnetlink messages to and from fibre's FIB [`Command`](fibre_fib::Command)s,
//! without I/O: the parsing half of a follower that keeps a FIB equal to a
//! Linux network namespace's routing state (`fibre follow`).
//!
//! - [`wire`]: netlink framing, bounds-checked (messages, attributes) and
//!   a [`wire::Builder`] for requests;
//! - [`message`]: links, addresses, routes (multipath, `RTA_NH_ID`),
//!   rules, neighbours and nexthop objects (RTM_NEWNEXTHOP/DELNEXTHOP);
//! - [`Translator`]: those messages as the commands the kernel applied,
//!   ifindexes resolved, and the withdrawals the kernel makes without a
//!   notification (the routes over a deleted nexthop object);
//! - [`request`]: the dump requests a follower sends.
//!
//! Why our own parser rather than `netlink-packet-route`: that crate (0.34
//! here) refuses RTM_NEWNEXTHOP ("Unknown message type: 104") and a
//! follower has to read nexthop objects, which FRR uses for every route;
//! parsing the few headers and attributes the FIB models is a few hundred
//! lines, keeps one error type with the attribute's name and size, and
//! gives the fuzzer one small surface. The sockets (`libc`) live in the
//! binary (`crates/fibre/src/follow.rs`), so this crate does no I/O.
//!
//! ```
//! use fibre_netlink::{message, wire, Origin, Translator};
//! // RTM_NEWLINK for ifindex 1 (lo, up), as the kernel sends it.
//! let mut b = wire::Builder::new(message::RTM_NEWLINK, 0, 0);
//! let mut ifinfo = [0u8; 16];
//! ifinfo[4..8].copy_from_slice(&1i32.to_ne_bytes());
//! ifinfo[8..12].copy_from_slice(&(message::IFF_UP | message::IFF_LOOPBACK | message::IFF_RUNNING).to_ne_bytes());
//! b.header(&ifinfo).attr(3, b"lo\0").attr_u32(4, 65536);
//! let bytes = b.finish();
//! let mut commands = Vec::new();
//! let mut translator = Translator::new();
//! for raw in wire::messages(&bytes) {
//!     let parsed = message::parse(&raw.unwrap()).unwrap();
//!     translator.translate(&parsed, Origin::Dump, &mut commands);
//! }
//! let mut fib = fibre_fib::Fib::following_kernel();
//! for c in &commands { fib.apply(c).unwrap(); }
//! assert!(fib.link(1).unwrap().up);
//! ```

pub mod message;
pub mod request;
mod translate;
pub mod wire;

pub use translate::{route_op, Origin, Translator};
