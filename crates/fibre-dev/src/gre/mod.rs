//! GRE tunnels (RFC 2784 with RFC 2890's key and sequence number) over
//! IPv4 (`gre`, `gretap`) and IPv6 (`ip6gre`, `ip6gretap`) underlays,
//! carrying IPv4 and IPv6, or Ethernet frames for the tap kinds.
//!
//! * [`GreConfig`]: a device name and fibre-fib's [`GreSpec`], parsed from
//!   `link add NAME type gre ...` by the configuration language (one
//!   grammar for files and this API), and validated against the router;
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
//! Packets over the tunnel MTU: IPv4 without DF is cut into fragments that
//! fit (as Linux's forwarding path does before its tunnel encapsulates;
//! the only transmit path that allocates, one buffer per extra fragment);
//! IPv4 with DF and IPv6 are dropped and [`crate::TxReport::path_mtu`]
//! gives the MTU for the ICMP error.
//!
//! Not implemented: fragmenting inner IPv4 packets that carry options (a
//! clean drop, [`crate::DropReason::FragmentationUnsupported`]); IPv6
//! extension headers before GRE on receipt (not claimed); ip6gre's default
//! encapsulation-limit option (frames are sent as with `encaplimit none`).

mod config;
mod decap;
mod demux;
mod fragment;
mod route_cache;
mod tunnel;

pub use config::{GreConfig, GreConfigError, GreKind, GreSpec, Inheritable};
pub use decap::{decapsulate, Decapsulated, RxPolicy};
pub(crate) use demux::match_score;
pub use demux::{peek_tunnel_key, TunnelKey};
pub use tunnel::{GreTunnel, TxMode, MAX_NESTING};
