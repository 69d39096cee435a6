//! What every layer of fibre shares, each fact in one place:
//!
//! * [`CACHE_LINE`] and [`CachePadded`]: the size false sharing is avoided
//!   at, per target, and the wrapper that gives a value lines of its own;
//! * [`WorkerId`]: which core (worker) is calling, the index of per-core
//!   state everywhere (RCU readers, route-cache slots, device statistics);
//! * [`DropReason`]: why a packet was dropped, one taxonomy for the wire
//!   formats, the devices and the forwarding plane (after Linux's
//!   `enum skb_drop_reason`, include/net/dropreason-core.h);
//! * [`IpFamily`] with [`Ipv4`] and [`Ipv6`]: the IP family as a type, so
//!   that code for both families is written once (netstack3's `I: Ip`);
//! * [`Clock`]: milliseconds, real or set by hand, for everything that
//!   expires (route exceptions now, neighbours and ICMP rate limits later).
//!
//! This crate depends on nothing of ours, so that the lowest layer can use it.
//!
//! ```
//! use fibre_base::{CachePadded, Clock, DropReason, WorkerId, CACHE_LINE};
//! let per_worker: Vec<CachePadded<u64>> = (0..2).map(|_| CachePadded::new(0)).collect();
//! assert_eq!(std::mem::size_of_val(&per_worker[0]), CACHE_LINE);
//! assert_eq!(WorkerId::new(1).index(), 1);
//! assert_eq!(DropReason::NoRoute.name(), "no_route");
//! let (clock, hand) = Clock::manual();
//! hand.store(5, std::sync::atomic::Ordering::Relaxed);
//! assert_eq!(clock.now_ms(), 5);
//! ```

// No unsafe code here: everything unsafe lives in the crates that need it
// (fibre-rcu, fibre-lpm, fibre-route, fibre-dev), each block with its SAFETY.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod cache_line;
mod clock;
mod dense_enum;
mod drop_reason;
mod family;
mod worker;

pub use cache_line::{CachePadded, CACHE_LINE};
pub use clock::Clock;
pub use drop_reason::{DropClass, DropReason};
pub use family::{IpFamily, Ipv4, Ipv6};
pub use worker::WorkerId;
