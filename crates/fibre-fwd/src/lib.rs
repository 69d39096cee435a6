//! The forwarding plane of fibre: a worker that takes bursts of received
//! Ethernet frames and ends each one as forwarded, answered or dropped,
//! as a Linux router would (`ip_rcv`, `ip_route_input`, `ip_forward`,
//! `ip_output`; `ipv6_rcv`, `ip6_forward`), and the ICMP errors it sends
//! (`icmp_send`, `icmp6_send`).
//!
//! The worker has no sockets and no threads of its own: ports are given to
//! it, and the packet I/O backends live elsewhere. A burst's path:
//!
//! 1. `receive`: whom each frame is for (`eth_type_trans`: a frame for
//!    another station is `PACKET_OTHERHOST` and dropped), its EtherType
//!    (ARP to the control side, IPv4, IPv6, anything else dropped), the
//!    IP header's checks (`ip_rcv_core`, `ip6_rcv_core`);
//! 2. the FIB's input lookup for the whole burst, on one RCU snapshot
//!    ([`FibSource`]);
//! 3. `forward`: the answer's errors as ICMP (`ip_error`,
//!    `ip6_pkt_drop`), local delivery (echo answered, the rest punted),
//!    `ip_forward`/`ip6_forward`'s checks: TTL, MTU (fragmentation when DF
//!    is clear), redirects (IPv6's as `ndisc_send_redirect` writes them),
//!    source scope;
//! 4. `rewrite` and `output`: TTL or hop limit less one with the
//!    incremental checksum, the neighbour's MAC ([`Neighbours`]; a miss
//!    queues the packet for the control side to resolve), the output
//!    port's transmit queue.
//!
//! Every drop is counted under one [`DropReason`](fibre_base::DropReason)
//! in the worker's [`Counters`]; nothing allocates per packet.
//!
//! Not modelled (each dropped and counted, never sent differently): IPv4
//! source routes (`OptionsUnsupported`, as the kernel's default
//! `accept_source_route` 0 drops them; record route, timestamps, router
//! alert and CIPSO are compiled and forwarded as `ip_options_compile` and
//! `ip_forward_options` do).
//!
//! GRE tunnels (`type gre`, [`Worker::add_tunnel`]) are devices of the
//! worker: packets routed into one are encapsulated and leave by the
//! underlay's port in the same burst, GRE packets for the router are
//! decapsulated and their inner packets received on the tunnel; see the
//! `tunnel` module's docs for what the kernel does that is modelled and
//! what is not (ip6gre, the tap kinds). The kernel the oracle runs here
//! has no GRE module, so tunnels are tested against frames built in the
//! tests, not against the kernel.

pub mod icmp;

mod config;
mod counters;
mod forward;
mod fragment;
mod neighbours;
mod options;
mod output;
mod punt;
mod receive;
mod rewrite;
mod ring;
mod tunnel;
mod worker;

pub use config::{PortConfig, WorkerConfig};
pub use counters::{Counters, CountersReader};
pub use neighbours::{Neighbours, StaticNeighbours};
pub use punt::{Punt, PuntKind};
pub use rewrite::decrease_ttl;
pub use tunnel::{TunnelConfig, TunnelCounters};
pub use worker::{FibSource, Worker, BURST};
