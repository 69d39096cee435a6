//! Neighbours for fibre: ARP (RFC 826) and IPv6 neighbour discovery (RFC
//! 4861) as the Linux kernel keeps them, following net/core/neighbour.c
//! (the table and its state machine), net/ipv4/arp.c and net/ipv6/ndisc.c.
//!
//! * [`NeighTable`]: entries by (link, address) in the kernel's NUD states
//!   (INCOMPLETE, REACHABLE, STALE, DELAY, PROBE, FAILED, NOARP,
//!   PERMANENT) with its transitions (`__neigh_update`,
//!   `neigh_timer_handler`, `__neigh_event_send`) and defaults
//!   ([`NeighSettings`]), on a clock the caller passes in (milliseconds);
//!   bounded as the kernel bounds it: per family by `gc_thresh3` entries
//!   (a forced collection first, then refusal), per entry by `unres_qlen`
//!   pending packets (the oldest dropped, counted).
//! * The control side's steps are functions returning [`Action`]s (frames
//!   to send, queued packets released, packets dropped with the ICMP
//!   error to send): [`NeighTable::resolve`] for a packet a worker could not
//!   send, [`NeighTable::receive_arp`], [`NeighTable::receive_ndisc`],
//!   [`NeighTable::tick`] for the timers, [`NeighTable::used`].
//! * The router's addresses come from the FIB, its MACs from the caller
//!   ([`Router`], [`FibRouter`]); static entries from the FIB's `neigh`
//!   commands ([`NeighTable::from_fib`]).
//! * The workers' view: [`NeighPublisher`] publishes an [`AdjacencyTable`]
//!   by RCU; each worker reads it through its own [`NeighReader`], with no
//!   lock and no shared write, and reports uses through a ring of its own
//!   (see the [`adjacency`] module for why and how).
//!
//! ```
//! use fibre_fib::{config, Fib, NudState};
//! use fibre_neigh::{Action, FibRouter, NeighSettings, NeighTable};
//! let (fib, _) = config::apply_str(&Fib::new(), "r.conf",
//!     "link add v0 type veth peer name v1\nlink set v0 up\nlink set v1 up\naddr add 10.0.0.1/24 dev v0\n", false).unwrap();
//! let router = FibRouter::new(&fib);
//! let v0 = fib.link_by_name("v0").unwrap().index;
//! let mut table = NeighTable::new(NeighSettings::default());
//! // A packet for 10.0.0.2 waits; an ARP request goes out at once.
//! let packet = vec![0x45; 20];
//! let actions = table.resolve(0, v0, "10.0.0.2".parse().unwrap(), packet, &router);
//! assert!(matches!(&actions[..], [Action::Send { link, .. }] if *link == v0));
//! assert_eq!(table.get(v0, "10.0.0.2".parse().unwrap()).unwrap().state, NudState::Incomplete);
//! // Three requests a second apart, then FAILED: the packet gets its ICMP error.
//! let mut sent = 1;
//! for now in [1_000, 2_000, 3_000] {
//!     for action in table.tick(now, &router) {
//!         match action {
//!             Action::Send { .. } => sent += 1,
//!             Action::Unreachable { icmp, .. } => assert_eq!(icmp, fibre_neigh::IcmpError::HostUnreachable),
//!             other => panic!("{other:?}"),
//!         }
//!     }
//! }
//! assert_eq!(sent, 3);
//! assert_eq!(table.get(v0, "10.0.0.2".parse().unwrap()).unwrap().state, NudState::Failed);
//! ```
//!
//! Not modelled: proxy ARP and proxy NDP, anycast addresses, `arp_accept`,
//! `arp_ignore`, `arp_filter`, `arp_announce` other than 0, the user-space
//! daemon of `app_solicit`, `mcast_resolicit` probes other than counted,
//! duplicate address detection of our own addresses (we answer others'),
//! router advertisements and redirects, `NTF_EXT_LEARNED`/`NTF_MANAGED`,
//! per-link parameters (one set per table), and the jiffies granularity
//! (times are milliseconds). Collection frees entries not "held": the
//! kernel's reference count is modelled as "has a timer running".

// No unsafe code here: the ring is built from atomics.
#![forbid(unsafe_code)]

pub mod adjacency;
mod arp;
mod frames;
mod ndisc;
mod router;
mod settings;
mod solicit;
mod table;

pub use adjacency::{Adjacency, AdjacencyTable, NeighPublisher, NeighReader, UseRing};
pub use frames::{solicited_node, NaFlags};
pub use router::{FibRouter, Router};
pub use settings::NeighSettings;
pub use table::{Action, IcmpError, NeighDrop, NeighStats, NeighTable, NeighView};

use std::net::IpAddr;

/// The source address of an IP packet (IPv4 or IPv6 by its version), if
/// it is long enough to have one.
pub(crate) fn packet_source(packet: &[u8]) -> Option<IpAddr> {
    match packet.first()? >> 4 {
        4 if packet.len() >= 20 => {
            let b: [u8; 4] = packet[12..16].try_into().ok()?;
            Some(IpAddr::from(b))
        }
        6 if packet.len() >= 40 => {
            let b: [u8; 16] = packet[8..24].try_into().ok()?;
            Some(IpAddr::from(b))
        }
        _ => None,
    }
}
