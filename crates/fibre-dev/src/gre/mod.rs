//! GRE tunnels (RFC 2784 with RFC 2890's key and sequence number) over
//! IPv4 (`gre`, `gretap`) and IPv6 (`ip6gre`, `ip6gretap`) underlays,
//! carrying IPv4 and IPv6, or Ethernet frames for the tap kinds.
//!
//! * [`GreConfig`]: `link add NAME type gre ...` parsed as iproute2 spells
//!   it, and validated against the router;
//! * [`GreTunnel`]: the device; transmit encapsulates a batch in place
//!   (see its module docs for lockless transmit and `oseq` ordering),
//!   receive decapsulates with key, checksum and `iseq` checks;
//! * [`decapsulate`]: the stateless receive checks, shared with the fuzz
//!   target;
//! * [`peek_tunnel_key`]: what [`crate::Registry::receive_gre`] uses to
//!   find the tunnel a frame belongs to.
//!
//! ECN follows RFC 6040 as Linux does: the outer ECN field copies the
//! inner one (CE sent as ECT(0)); on receipt an outer CE is copied into an
//! ECN-capable inner header and drops a Not-ECT one.
//!
//! Not implemented: outer fragmentation of DF-clear IPv4 packets larger
//! than the path MTU (a clean drop,
//! [`crate::DropReason::FragmentationUnsupported`]); IPv6 extension headers
//! before GRE on receipt (not claimed); ip6gre's default
//! encapsulation-limit option (frames are sent as with `encaplimit none`).

mod config;
mod decap;
mod demux;
mod route_cache;
mod tunnel;

pub use config::{GreConfig, GreConfigError, GreKind, Inheritable};
pub use decap::{decapsulate, Decapsulated, RxPolicy};
pub(crate) use demux::match_score;
pub use demux::{peek_tunnel_key, TunnelKey};
pub use tunnel::{GreTunnel, TxMode, MAX_NESTING};
