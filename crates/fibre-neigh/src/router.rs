//! What the neighbour code asks of the router it runs for: its MACs and
//! its addresses. The FIB has the addresses; the MACs come from whoever
//! owns the ports ([`FibRouter`] takes them, or the model's `02:fb:<ifindex>`).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use fibre_fib::{Family, Fib, RouteGetRequest, RouteType, Scope};
use fibre_net::ethernet::{EtherType, Frame, PacketType, HEADER_LEN};

/// The router's side of ARP and neighbour discovery.
pub trait Router {
    /// The MAC of `link` (None: no such link; nothing is sent or answered).
    fn mac(&self, link: u32) -> Option<[u8; 6]>;
    /// Whether `link` resolves neighbours at all: not a NOARP device
    /// (loopback, dummy, ifb), whose `arp_rcv`/`ndisc_rcv` drop everything.
    fn resolves(&self, link: u32) -> bool;
    /// `ip_route_input_noref(tip, sip, dev)` gives an RTN_LOCAL route:
    /// an ARP request from `sip` on `link` asks for one of our addresses.
    fn arp_target_is_ours(&self, link: u32, tip: Ipv4Addr, sip: Ipv4Addr) -> bool;
    /// `inet_addr_type_dev_table(dev, addr)`.
    fn ipv4_addr_type(&self, link: u32, addr: Ipv4Addr) -> RouteType;
    /// `inet_select_addr(dev, dst, RT_SCOPE_LINK)`: the source of an ARP
    /// request for `target` (0.0.0.0 when the router has none).
    fn ipv4_source(&self, link: u32, target: Ipv4Addr) -> Ipv4Addr;
    /// `ipv6_get_ifaddr(addr, dev, strict)`: `addr` is ours on `link`.
    fn ipv6_is_ours_on(&self, link: u32, addr: Ipv6Addr) -> bool;
    /// `ipv6_get_lladdr(dev)`: the link-local address of `link`.
    fn ipv6_link_local(&self, link: u32) -> Option<Ipv6Addr>;
    /// `group` is the solicited-node group of one of our addresses on
    /// `link` (joined by `addrconf_join_solict`).
    fn ipv6_joined_solicited_node(&self, link: u32, group: Ipv6Addr) -> bool;
    /// IPv6 `forwarding` on `link` (the NA's router flag).
    fn ipv6_forwarding(&self, link: u32) -> bool;
}

/// A [`Router`] read from a [`Fib`], with the MACs of its links (the
/// model's `02:fb:<ifindex>` for links not in `macs`).
///
/// ```
/// use fibre_fib::{config, Fib};
/// use fibre_neigh::{FibRouter, Router};
/// let (fib, _) = config::apply_str(&Fib::new(), "r.conf",
///     "link add v0 type veth peer name v1\nlink set v0 up\naddr add 10.0.0.1/24 dev v0\n", false).unwrap();
/// let router = FibRouter::new(&fib);
/// let v0 = fib.link_by_name("v0").unwrap().index;
/// assert_eq!(router.mac(v0), Some([0x02, 0xfb, 0, 0, 0, v0 as u8]));
/// assert!(router.arp_target_is_ours(v0, "10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap()));
/// assert_eq!(router.ipv4_source(v0, "10.0.0.9".parse().unwrap()), "10.0.0.1".parse::<std::net::Ipv4Addr>().unwrap());
/// ```
#[derive(Debug, Clone)]
pub struct FibRouter<'a> {
    fib: &'a Fib,
    macs: HashMap<u32, [u8; 6]>,
}

impl<'a> FibRouter<'a> {
    /// The router of `fib` with the model's MACs.
    pub fn new(fib: &'a Fib) -> Self {
        FibRouter {
            fib,
            macs: HashMap::new(),
        }
    }

    /// The same router with the real MACs of some links.
    pub fn with_macs(fib: &'a Fib, macs: HashMap<u32, [u8; 6]>) -> Self {
        FibRouter { fib, macs }
    }
}

impl Router for FibRouter<'_> {
    fn mac(&self, link: u32) -> Option<[u8; 6]> {
        self.fib.link(link)?;
        Some(
            self.macs
                .get(&link)
                .copied()
                .unwrap_or_else(|| self.fib.link_mac(link)),
        )
    }

    fn resolves(&self, link: u32) -> bool {
        use fibre_fib::LinkKind;
        self.fib.link(link).is_some_and(|l| {
            l.up && !matches!(l.kind, LinkKind::Loopback | LinkKind::Dummy | LinkKind::Ifb)
        })
    }

    fn arp_target_is_ours(&self, link: u32, tip: Ipv4Addr, sip: Ipv4Addr) -> bool {
        let Some(dev) = self.fib.link(link) else {
            return false;
        };
        let mut req = RouteGetRequest::to(IpAddr::V4(tip));
        req.src = Some(IpAddr::V4(sip));
        req.iif = Some(dev.name.clone());
        self.fib
            .route_get(&req)
            .is_ok_and(|answer| answer.kind == RouteType::Local)
    }

    fn ipv4_addr_type(&self, link: u32, addr: Ipv4Addr) -> RouteType {
        self.fib.arp_addr_type(addr, link)
    }

    fn ipv4_source(&self, link: u32, target: Ipv4Addr) -> Ipv4Addr {
        let primaries = |on: Option<u32>| {
            self.fib
                .addresses(Some(Family::V4))
                .into_iter()
                .filter(move |a| on.is_none_or(|l| a.link == l) && !a.secondary)
        };
        // inet_select_addr: the first primary address of the device of at
        // most link scope whose subnet holds the target, else its first
        // such address; else the first of another device that is neither
        // link nor host scope (`in_dev_select_addr`).
        let mut first = None;
        for a in primaries(Some(link)).filter(|a| a.scope.0 <= Scope::LINK.0) {
            let IpAddr::V4(local) = a.local else { continue };
            let mask = u32::MAX
                .checked_shl(32 - u32::from(a.prefix_len))
                .unwrap_or(0);
            if u32::from(local) & mask == u32::from(target) & mask {
                return local;
            }
            first.get_or_insert(local);
        }
        if let Some(local) = first {
            return local;
        }
        primaries(None)
            .filter(|a| a.scope != Scope::LINK && a.scope.0 <= Scope::LINK.0)
            .find_map(|a| match a.local {
                IpAddr::V4(local) => Some(local),
                IpAddr::V6(_) => None,
            })
            .unwrap_or(Ipv4Addr::UNSPECIFIED)
    }

    fn ipv6_is_ours_on(&self, link: u32, addr: Ipv6Addr) -> bool {
        self.fib
            .addresses(Some(Family::V6))
            .iter()
            .any(|a| a.link == link && a.local == IpAddr::V6(addr))
    }

    fn ipv6_link_local(&self, link: u32) -> Option<Ipv6Addr> {
        self.fib
            .addresses(Some(Family::V6))
            .iter()
            .filter(|a| a.link == link)
            .find_map(|a| match a.local {
                IpAddr::V6(v6) if v6.segments()[0] & 0xffc0 == 0xfe80 => Some(v6),
                _ => None,
            })
    }

    fn ipv6_joined_solicited_node(&self, link: u32, group: Ipv6Addr) -> bool {
        self.fib
            .addresses(Some(Family::V6))
            .iter()
            .filter(|a| a.link == link)
            .any(|a| match a.local {
                IpAddr::V6(v6) => crate::frames::solicited_node(v6) == group,
                IpAddr::V4(_) => false,
            })
    }

    fn ipv6_forwarding(&self, _link: u32) -> bool {
        // The FIB models a router: forwarding is on everywhere.
        true
    }
}

/// A frame received on a link that resolves neighbours, as `arp_rcv` and
/// `ipv6_rcv` take it before looking inside: whole, of the EtherType
/// asked for, and not addressed to another station.
pub(crate) struct Received<'a> {
    /// The Ethernet payload.
    pub payload: &'a [u8],
    /// The link's own MAC address.
    pub own: [u8; 6],
    /// How the frame was addressed.
    pub pkt_type: PacketType,
}

/// `frame`, received on `link`, if the neighbour code should look inside
/// it: the link exists and resolves, and the frame carries `ethertype`
/// to us, to the broadcast address or to a group.
pub(crate) fn received<'a>(
    router: &dyn Router,
    link: u32,
    frame: &'a [u8],
    ethertype: EtherType,
) -> Option<Received<'a>> {
    let own = router.mac(link)?;
    if !router.resolves(link) {
        return None;
    }
    let eth = Frame::new_checked(frame).ok()?;
    let pkt_type = PacketType::of(eth.dst_addr().0, own);
    if eth.ethertype() != ethertype || pkt_type == PacketType::OtherHost {
        return None;
    }
    Some(Received {
        payload: &frame[HEADER_LEN..],
        own,
        pkt_type,
    })
}
