//! The forwarding plane of fibre: a worker that takes bursts of received
//! Ethernet frames and ends each one as forwarded, answered or dropped,
//! as a Linux router would (`ip_rcv`, `ip_route_input`, `ip_forward`,
//! `ip_output`; `ipv6_rcv`, `ip6_forward`), and the ICMP errors it sends
//! (`icmp_send`, `icmp6_send`).
//!
//! The worker has no sockets and no threads of its own: ports are given to
//! it, and the packet I/O backends live elsewhere.

pub mod icmp;
