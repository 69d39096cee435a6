//! Static neighbours: `ip neigh add|replace|change|del|flush` as the
//! kernel's `neigh_add` and `neigh_delete` (net/core/neighbour.c) carry
//! them out, with the administrative part of `__neigh_update`, and the
//! entries the kernel creates first (`arp_constructor`, net/ipv4/arp.c;
//! `ndisc_constructor`, net/ipv6/ndisc.c).
//!
//! The FIB keeps what an administrator asked for, as the kernel holds it
//! right after the request: state, link-layer address and router flag.
//! The state machine that moves entries on (timers, probes, learning from
//! ARP and neighbour discovery) is the `fibre-neigh` crate's, which seeds
//! its table from these entries ([`Fib::neighbours`]).
//!
//! A link's neighbours go with it, as the kernel's notifiers take them:
//! all of them when it goes down or away (`neigh_ifdown`, from
//! `fib_disable_ip`/`arp_ifdown` and `ndisc_netdev_event`), all but the
//! permanent ones when it loses carrier (`neigh_carrier_down`).
//!
//! As in the kernel, a refused `add`/`replace` of a new address without a
//! link-layer address leaves the entry it made (state NONE, listed by
//! `ip neigh show nud all`, taken by a later `change`, `flush`ed).
//!
//! Not modelled: proxy entries (`proxy`), `extern_learn`, `managed`,
//! `use`, `protocol`; neighbours on GRE devices without Ethernet (their
//! link-layer address is the underlay's IP address). The forced garbage
//! collection of a full table (`neigh_forced_gc`) frees FAILED and NOARP
//! entries; the kernel also frees entries not updated for 5 s, which a
//! configuration applied at once never has.

use std::net::{IpAddr, Ipv4Addr};

use crate::command::{NeighOp, NeighSpec};
use crate::error::{Errno, KernelError};
use crate::fib::Fib;
use crate::types::{Family, LinkIndex, LinkKind, RouteType, TABLE_LOCAL};
use crate::write::gre::GreKind;
use crate::write::links::model_mac;

/// A neighbour's state, the kernel's `NUD_*` bits (include/uapi/linux/neighbour.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NudState {
    /// `NUD_NONE` (0): just created, nothing known.
    None,
    /// `NUD_INCOMPLETE`: a solicitation is out, no answer yet.
    Incomplete,
    /// `NUD_REACHABLE`: confirmed within the reachable time.
    Reachable,
    /// `NUD_STALE`: known, not confirmed lately.
    Stale,
    /// `NUD_DELAY`: used while stale; waiting for upper-layer confirmation.
    Delay,
    /// `NUD_PROBE`: unicast probes are out.
    Probe,
    /// `NUD_FAILED`: resolution failed.
    Failed,
    /// `NUD_NOARP`: needs no resolution (multicast, NOARP devices).
    Noarp,
    /// `NUD_PERMANENT`: set by hand, never changes by itself.
    Permanent,
}

impl NudState {
    /// Every state in the order of its `NUD_*` bit.
    pub const ALL: [NudState; 9] = [
        NudState::None,
        NudState::Incomplete,
        NudState::Reachable,
        NudState::Stale,
        NudState::Delay,
        NudState::Probe,
        NudState::Failed,
        NudState::Noarp,
        NudState::Permanent,
    ];

    /// The `NUD_*` value.
    ///
    /// ```
    /// use fibre_fib::NudState;
    /// assert_eq!(NudState::Permanent.bits(), 0x80);
    /// assert_eq!(NudState::from_bits(0x04), Some(NudState::Stale));
    /// assert_eq!(NudState::from_bits(0x03), None);
    /// ```
    pub const fn bits(self) -> u8 {
        match self {
            NudState::None => 0x00,
            NudState::Incomplete => 0x01,
            NudState::Reachable => 0x02,
            NudState::Stale => 0x04,
            NudState::Delay => 0x08,
            NudState::Probe => 0x10,
            NudState::Failed => 0x20,
            NudState::Noarp => 0x40,
            NudState::Permanent => 0x80,
        }
    }

    /// The state of a `NUD_*` value (one bit, or 0).
    pub fn from_bits(bits: u8) -> Option<NudState> {
        NudState::ALL.into_iter().find(|s| s.bits() == bits)
    }

    /// The word `ip neigh show` prints (`nud_state_n2a`; empty for NONE).
    pub const fn name(self) -> &'static str {
        match self {
            NudState::None => "",
            NudState::Incomplete => "INCOMPLETE",
            NudState::Reachable => "REACHABLE",
            NudState::Stale => "STALE",
            NudState::Delay => "DELAY",
            NudState::Probe => "PROBE",
            NudState::Failed => "FAILED",
            NudState::Noarp => "NOARP",
            NudState::Permanent => "PERMANENT",
        }
    }

    /// `NUD_VALID`: the link-layer address may be used.
    pub const fn is_valid(self) -> bool {
        matches!(
            self,
            NudState::Permanent
                | NudState::Noarp
                | NudState::Reachable
                | NudState::Probe
                | NudState::Stale
                | NudState::Delay
        )
    }

    /// `NUD_CONNECTED`: the address needs no confirmation.
    pub const fn is_connected(self) -> bool {
        matches!(
            self,
            NudState::Permanent | NudState::Noarp | NudState::Reachable
        )
    }

    /// `NUD_IN_TIMER`: the state runs a timer.
    pub const fn in_timer(self) -> bool {
        matches!(
            self,
            NudState::Incomplete | NudState::Reachable | NudState::Delay | NudState::Probe
        )
    }
}

/// A neighbour entry as the FIB holds it (`struct neighbour`'s
/// administrative part).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neighbour {
    /// The link.
    pub link: LinkIndex,
    /// The key: the neighbour's address (0.0.0.0 for any IPv4 neighbour
    /// on a loopback device, as `arp_constructor` keys it).
    pub addr: IpAddr,
    /// State.
    pub state: NudState,
    /// The link-layer address held (`neigh->ha`); shown and used only
    /// while the state is valid ([`Neighbour::lladdr`]).
    pub ha: [u8; 6],
    /// `NTF_ROUTER`.
    pub router: bool,
}

impl Neighbour {
    /// The link-layer address when the state makes it usable: the kernel
    /// reports `NDA_LLADDR` only then (`neigh_fill_info`).
    pub fn lladdr(&self) -> Option<[u8; 6]> {
        self.state.is_valid().then_some(self.ha)
    }
}

/// `gc_thresh3`: the most entries subject to garbage collection one table
/// (one family) holds; permanent ones do not count (`neigh_alloc`).
pub const GC_THRESH3: usize = 1024;

/// The multicast MAC of an IP multicast address (`arp_mc_map` with
/// `ip_eth_mc_map`, RFC 1112 section 6.4; `ndisc_mc_map` with
/// `ipv6_eth_mc_map`, RFC 2464 section 7).
///
/// ```
/// use fibre_fib::multicast_mac;
/// assert_eq!(multicast_mac(&"224.129.2.3".parse().unwrap()), Some([1, 0, 0x5e, 1, 2, 3]));
/// assert_eq!(multicast_mac(&"ff02::1:ff00:2".parse().unwrap()), Some([0x33, 0x33, 0xff, 0, 0, 2]));
/// assert_eq!(multicast_mac(&"10.0.0.1".parse().unwrap()), None);
/// ```
pub fn multicast_mac(addr: &IpAddr) -> Option<[u8; 6]> {
    match addr {
        IpAddr::V4(a) if a.is_multicast() => {
            let o = a.octets();
            Some([0x01, 0x00, 0x5e, o[1] & 0x7f, o[2], o[3]])
        }
        IpAddr::V6(a) if a.is_multicast() => {
            let o = a.octets();
            Some([0x33, 0x33, o[12], o[13], o[14], o[15]])
        }
        _ => None,
    }
}

impl Fib {
    /// The neighbour entries in the order fibre shows them: IPv4 (the ARP
    /// table) before IPv6 (the ND table), as the kernel dumps its tables;
    /// within a table by link, then address (the kernel dumps in the order
    /// of its hash buckets, which a random key seeds per boot).
    pub fn neighbours(&self) -> impl Iterator<Item = &Neighbour> + '_ {
        let v4 = self.neighbours.values().filter(|n| n.addr.is_ipv4());
        let v6 = self.neighbours.values().filter(|n| n.addr.is_ipv6());
        v4.chain(v6)
    }

    /// The MAC the model gives a link (`02:fb:<ifindex>`; lo's is zero).
    pub fn link_mac(&self, index: LinkIndex) -> [u8; 6] {
        match self.links.get(&index).map(|l| &l.kind) {
            Some(LinkKind::Loopback) => [0; 6],
            _ => model_mac(index),
        }
    }

    /// `ip neigh add|replace|change|del|flush`.
    pub(crate) fn neigh_apply(&mut self, op: NeighOp, spec: &NeighSpec) -> Result<(), KernelError> {
        let link = self.resolve_dev(&spec.dev)?;
        let kind = self.links[&link].kind.clone();
        if op == NeighOp::Flush {
            // ipneigh_list_or_flush: every entry of the device whose state
            // is in `~(NUD_PERMANENT | NUD_NOARP)`, NONE too (that filter
            // has the 0x100 bit that stands for it).
            crate::fib::retain_ord(&mut self.neighbours, |_, n| {
                n.link != link || matches!(n.state, NudState::Permanent | NudState::Noarp)
            });
            return Ok(());
        }
        if let LinkKind::Gre(gre) = &kind {
            if matches!(gre.kind, GreKind::Gre | GreKind::Ip6Gre) {
                return Err(KernelError::with_extack(
                    Errno::OpNotSupp,
                    "fibre does not model neighbours on GRE devices without Ethernet",
                ));
            }
        }
        let Some(addr) = spec.addr else {
            // (The parser requires one, as iproute2 does.)
            return Err(KernelError::with_extack(
                Errno::Inval,
                "Network address not specified",
            ));
        };
        // arp_constructor keys an IPv4 entry on a loopback device 0.0.0.0,
        // after neigh_add's lookup by the address asked for: only 0.0.0.0
        // finds it (so del and change of any other address are -ENOENT),
        // and ___neigh_create, meeting the rekeyed entry, returns it for
        // the update (so add and replace of any address change it).
        let rekeyed = matches!((addr, &kind), (IpAddr::V4(_), LinkKind::Loopback));
        let key_addr = if rekeyed {
            IpAddr::V4(Ipv4Addr::UNSPECIFIED)
        } else {
            addr
        };
        let key = (link, key_addr);
        let found = if !rekeyed || addr.is_unspecified() {
            self.neighbours.get(&key).cloned()
        } else {
            None
        };
        if op == NeighOp::Del {
            // neigh_delete: -ENOENT for a missing entry.
            return match found {
                Some(_) => {
                    self.neighbours.remove(&key);
                    Ok(())
                }
                None => Err(KernelError::new(Errno::NoEnt)),
            };
        }
        // neigh_add: a link-layer address shorter than the device's.
        let lladdr = match &spec.lladdr {
            Some(bytes) if bytes.len() < 6 => {
                return Err(KernelError::with_extack(
                    Errno::Inval,
                    "Invalid link address",
                ))
            }
            Some(bytes) => Some([bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5]]),
            None => None,
        };
        let old = match found {
            Some(_) if op == NeighOp::Add => return Err(KernelError::new(Errno::Exist)),
            Some(existing) => existing,
            None if op == NeighOp::Change => return Err(KernelError::new(Errno::NoEnt)),
            None => match self.neighbours.get(&key) {
                Some(rekeyed_entry) => rekeyed_entry.clone(),
                None => {
                    if spec.state != NudState::Permanent
                        && self.collectable_entries(addr) >= GC_THRESH3
                    {
                        // neigh_alloc: forced GC, then "neighbor table overflow".
                        self.forced_gc(Family::of(&addr));
                        if self.collectable_entries(addr) >= GC_THRESH3 {
                            return Err(KernelError::new(Errno::NoBufs));
                        }
                    }
                    self.constructed(link, &kind, key_addr)
                }
            },
        };
        match admin_update(old.clone(), lladdr, spec.state, spec.router) {
            Ok(updated) => {
                self.neighbours.insert(key, updated);
                Ok(())
            }
            Err(err) => {
                // The kernel keeps the entry it made for the request (NONE)
                // when the update refuses it (kernel-checked: a later add of
                // the address is "File exists", a change is accepted).
                self.neighbours.entry(key).or_insert(old);
                Err(err)
            }
        }
    }

    /// Entries of `addr`'s table that garbage collection may free.
    fn collectable_entries(&self, addr: IpAddr) -> usize {
        self.neighbours
            .values()
            .filter(|n| n.addr.is_ipv4() == addr.is_ipv4() && n.state != NudState::Permanent)
            .count()
    }

    /// `neigh_forced_gc`: frees the FAILED and NOARP entries of a table.
    fn forced_gc(&mut self, family: Family) {
        crate::fib::retain_ord(&mut self.neighbours, |_, n| {
            Family::of(&n.addr) != family || !matches!(n.state, NudState::Failed | NudState::Noarp)
        });
    }

    /// A new entry as the table's constructor leaves it, before the
    /// request's update: `arp_constructor` and `ndisc_constructor` make an
    /// entry that needs no resolution NOARP with the address it needs
    /// (multicast: the mapped MAC; a NOARP or loopback device: its own;
    /// IPv4 broadcast: the broadcast MAC), any other NONE.
    fn constructed(&self, link: LinkIndex, kind: &LinkKind, addr: IpAddr) -> Neighbour {
        let noarp_device = matches!(kind, LinkKind::Loopback | LinkKind::Dummy | LinkKind::Ifb);
        let ha = if let Some(mac) = multicast_mac(&addr) {
            Some(mac)
        } else if noarp_device {
            Some(self.link_mac(link))
        } else if addr.is_ipv4() && self.addr_type_for_arp(&addr, link) == RouteType::Broadcast {
            Some([0xff; 6])
        } else {
            None
        };
        Neighbour {
            link,
            addr,
            state: if ha.is_some() {
                NudState::Noarp
            } else {
                NudState::None
            },
            ha: ha.unwrap_or([0; 6]),
            router: false,
        }
    }

    /// `inet_addr_type_dev_table(dev, addr)` as ARP asks it: the type of
    /// `addr`'s route in the local table, every address a broadcast one
    /// while there is no local table (see [`Fib::neighbours`]' constructors).
    pub fn arp_addr_type(&self, addr: Ipv4Addr, link: LinkIndex) -> RouteType {
        self.addr_type_for_arp(&IpAddr::V4(addr), link)
    }

    /// `inet_addr_type_dev_table` as `arp_constructor` asks it: with no
    /// local table yet (no local route was ever made) every address is a
    /// broadcast one (`__inet_dev_addr_type` starts from RTN_BROADCAST).
    fn addr_type_for_arp(&self, addr: &IpAddr, link: LinkIndex) -> RouteType {
        let has_local = self
            .tables
            .get(&TABLE_LOCAL)
            .is_some_and(|t| t.exists(Family::V4))
            || (!self.custom_rules_v4
                && self
                    .tables
                    .get(&crate::types::TABLE_MAIN)
                    .is_some_and(|t| t.exists(Family::V4)));
        if !has_local {
            return RouteType::Broadcast;
        }
        self.addr_type_v4_on_dev(addr, link)
    }

    /// `neigh_ifdown`: every neighbour of a link that goes down or away.
    pub(crate) fn neighbours_ifdown(&mut self, link: LinkIndex) {
        crate::fib::retain_ord(&mut self.neighbours, |_, n| n.link != link);
    }

    /// `neigh_carrier_down`: a link that lost carrier keeps only its
    /// permanent neighbours.
    pub(crate) fn neighbours_carrier_down(&mut self, link: LinkIndex) {
        crate::fib::retain_ord(&mut self.neighbours, |_, n| {
            n.link != link || n.state == NudState::Permanent
        });
    }
}

/// The administrative path of `__neigh_update` (`NEIGH_UPDATE_F_ADMIN |
/// NEIGH_UPDATE_F_OVERRIDE | NEIGH_UPDATE_F_OVERRIDE_ISROUTER`): an invalid
/// state is taken as is (the router flag untouched: the kernel leaves
/// before `neigh_update_is_router`); a valid one needs a link-layer
/// address, given or already held ("No link layer address given"), and
/// takes the request's router flag.
fn admin_update(
    mut entry: Neighbour,
    lladdr: Option<[u8; 6]>,
    state: NudState,
    router: bool,
) -> Result<Neighbour, KernelError> {
    if state.is_valid() {
        match lladdr {
            Some(mac) => entry.ha = mac,
            None if entry.state.is_valid() => {}
            None => {
                return Err(KernelError::with_extack(
                    Errno::Inval,
                    "No link layer address given",
                ))
            }
        }
        entry.router = router;
    }
    entry.state = state;
    Ok(entry)
}
