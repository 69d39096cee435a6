//! The FIB: links, addresses, routes, policy rules and lookups with the
//! Linux kernel's semantics, spoken in iproute2's vocabulary.
//!
//! The data model mirrors what iproute2 sends the kernel over rtnetlink:
//! a [`Command`] is one resolved request (iproute2's defaults already
//! applied: table main, proto boot, scope by type), and [`Fib::apply`]
//! plays the kernel's part: it validates, refuses with the kernel's message
//! ([`KernelError`]) or changes the state. Lookups answer like
//! `fib_lookup()` / `ip route get` ([`Fib::route_get`]); the data path uses
//! [`Fib::lookup_output_batch_v4`]; [`Fib::import`] loads large tables.
//!
//! ```
//! use fibre_fib::*;
//! let mut fib = Fib::new();
//! fib.apply(&Command::LinkAdd { name: "d0".into(), kind: LinkKind::Ifb, mtu: None }).unwrap();
//! fib.apply(&Command::LinkSet { name: "d0".into(), up: Some(true), mtu: None }).unwrap();
//! fib.apply(&Command::Addr { op: AddrOp::Add, spec: AddressSpec {
//!     dev: "d0".into(), local: "10.0.0.1".parse().unwrap(), prefix_len: 24, peer: None,
//!     broadcast: None, scope: None, noprefixroute: false, metric: None, label: None, mngtmpaddr: false } }).unwrap();
//! let via = NexthopSpec { gateway: Some("10.0.0.9".parse().unwrap()), dev: None, weight: 1, onlink: false };
//! fib.apply(&Command::Route { op: RouteOp::Add, spec: RouteSpec {
//!     table: TABLE_MAIN, dst: Prefix::default_route(Family::V4), tos: 0, kind: RouteType::Unicast,
//!     protocol: Protocol::BOOT, scope: Scope::UNIVERSE, metric: None, prefsrc: None, mtu: None, mtu_lock: false, metrics: Default::default(),
//!     nexthops: vec![via], multipath: false } }).unwrap();
//! let a = fib.route_get(&RouteGetRequest::to("192.0.2.1".parse().unwrap())).unwrap();
//! assert_eq!(a.gateway, Some("10.0.0.9".parse().unwrap()));
//! assert_eq!(a.dev.as_deref(), Some("d0"));
//! ```

// No unsafe code here: everything unsafe lives in the crates that need it
// (fibre-rcu, fibre-lpm, fibre-route, fibre-dev), each block with its SAFETY.
#![forbid(unsafe_code)]

pub mod command;
pub mod config;
pub mod error;
pub mod fib;
pub mod lines;
mod local_addrs;
mod read;
pub mod shared;
mod table;
pub mod types;
mod write;

// The public paths of the modules that moved into `read/` and `write/`.
pub use read::reply_source::ReplyRoute;
pub use read::{batch, burst, multipath};
pub use write::gre;

pub use batch::{FlowKeyV4, FlowKeyV6, Forward, Forward6};
pub use command::*;
pub use error::*;
pub use fib::{Fib, FibSettings};
pub use gre::{GreKind, GreSpec, Inheritable, TunnelError, UnderlayHop};
pub use multipath::MultipathHashPolicy;
pub use read::input_batch_v4::ALL_HOSTS_V4;
pub use read::route_get::RpFilter;
pub use types::*;
pub use write::change::FibChange;
pub use write::import::ImportError;
pub use write::neighs::{multicast_mac, Neighbour, NudState, GC_THRESH3};
pub use write::route_ops::IPV6_DEFAULT_METRIC;
