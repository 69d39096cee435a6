//! What the worker asks of the neighbour table: the link-layer address of a
//! next hop, read without a lock once per packet. The table itself (ARP, ND,
//! their states and timers) lives on the control side; a miss sends the
//! packet there ([`crate::PuntKind::Unresolved`]).

use std::collections::HashMap;
use std::net::IpAddr;

use fibre_fib::LinkIndex;

/// A read-only view of resolved neighbours (`neigh_lookup` of the kernel's
/// `arp_tbl`/`nd_tbl` for a `NUD_VALID` entry): the MAC address of `addr`
/// on `link`, or `None` when it is not resolved. Called per forwarded
/// packet: it must not block, lock or allocate.
pub trait Neighbours {
    /// The MAC address of neighbour `addr` on link `link`, if resolved.
    fn lookup(&self, link: LinkIndex, addr: IpAddr) -> Option<[u8; 6]>;

    /// Called after each burst: a published table's reader reports its
    /// quiescent state here (between bursts, as the FIB's reader does).
    fn burst_done(&mut self) {}
}

impl<T: Neighbours + ?Sized> Neighbours for &T {
    fn lookup(&self, link: LinkIndex, addr: IpAddr) -> Option<[u8; 6]> {
        (**self).lookup(link, addr)
    }
}

impl<T: Neighbours + ?Sized> Neighbours for std::sync::Arc<T> {
    fn lookup(&self, link: LinkIndex, addr: IpAddr) -> Option<[u8; 6]> {
        (**self).lookup(link, addr)
    }
}

/// The control side's published neighbour table (`fibre-neigh`): resolved
/// entries read without a lock; a use of a STALE entry is reported to the
/// control side through the reader's own ring, which starts the kernel's
/// DELAY/PROBE confirmation; the reader is quiescent after each burst.
impl Neighbours for fibre_neigh::NeighReader {
    fn lookup(&self, link: LinkIndex, addr: IpAddr) -> Option<[u8; 6]> {
        fibre_neigh::NeighReader::lookup(self, link, addr).map(|adjacency| adjacency.mac)
    }

    fn burst_done(&mut self) {
        self.quiescent();
    }
}

/// A fixed set of neighbours (`ip neigh add ... nud permanent`), for tests
/// and for routers whose neighbours are all static.
///
/// ```
/// use fibre_fwd::{Neighbours, StaticNeighbours};
/// let mut table = StaticNeighbours::default();
/// table.insert(2, "10.0.0.9".parse().unwrap(), [2, 0, 0, 0, 0, 9]);
/// assert_eq!(table.lookup(2, "10.0.0.9".parse().unwrap()), Some([2, 0, 0, 0, 0, 9]));
/// assert_eq!(table.lookup(3, "10.0.0.9".parse().unwrap()), None);
/// ```
#[derive(Debug, Clone, Default)]
pub struct StaticNeighbours {
    /// Hashed as the published table is (foldhash, a random seed): a
    /// lookup per forwarded packet.
    entries: HashMap<(LinkIndex, IpAddr), [u8; 6], foldhash::fast::RandomState>,
}

impl StaticNeighbours {
    /// Adds or replaces neighbour `addr` on `link`.
    pub fn insert(&mut self, link: LinkIndex, addr: IpAddr, mac: [u8; 6]) {
        self.entries.insert((link, addr), mac);
    }

    /// Removes neighbour `addr` on `link`.
    pub fn remove(&mut self, link: LinkIndex, addr: IpAddr) {
        self.entries.remove(&(link, addr));
    }
}

impl Neighbours for StaticNeighbours {
    fn lookup(&self, link: LinkIndex, addr: IpAddr) -> Option<[u8; 6]> {
        self.entries.get(&(link, addr)).copied()
    }
}
