//! Links: `ip link add|set|del` with the kernel's index allocation, admin
//! state, carrier and the effects of up/down on addresses and routes.
//!
//! Model decisions (kernel-checked in a namespace unless noted):
//! - ifindexes are handed out upwards and never reused (the kernel's cyclic
//!   `xa_alloc_cyclic` from the last one given);
//! - a veth pair is two links, the peer registered first (lower index);
//!   carrier only when both ends are up; dummy and ifb have carrier when up;
//! - `lo` coming up gets 127.0.0.1/8 and ::1/128 (going down, it loses
//!   ::1 with its other IPv6 addresses);
//! - a link coming up with carrier (for a veth: once both ends are up) gets
//!   an IPv6 link-local address from its MAC (EUI-64).
//!   The kernel's MACs for ifb/veth are random; the model derives a stable
//!   MAC from the ifindex (`02:fb:00:IDX`), so the link-local address differs
//!   from the kernel's but its routes (`fe80::/64`, `local fe80::...`,
//!   `multicast ff00::/8`) are the same;
//! - a link with an MTU under 1280 has no IPv6: lowering the MTU removes its
//!   IPv6 addresses and routes (raising it brings the link-local back), an
//!   IPv6 address add is "Invalid argument", a route through it "No such
//!   device";
//! - a link going down keeps its IPv4 addresses and their `local` routes,
//!   loses every other route through it, and loses all its IPv6 addresses
//!   (`keep_addr_on_down` is 0).
//!
//! GRE tunnels (not kernel-checked: this kernel has no GRE module; from the
//! kernel's source): the default MTU is computed once, when the tunnel is
//! made, from the device the route to `remote` leaves by
//! ([`GreSpec::default_mtu`]); a second tunnel with the same type, local,
//! remote and input key is "File exists"; a tunnel has carrier once up
//! (operstate UNKNOWN) and gets a link-local address like any other link
//! (the kernel derives gre's from its IPv4 address; the routes are the
//! same).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::command::{KernelLink, RouteGetRequest};
use crate::error::{Errno, KernelError};
use crate::fib::Fib;
use crate::types::*;
use crate::write::gre::GreSpec;

/// IPV6_MIN_MTU: below it the kernel turns IPv6 off on a link.
const IPV6_MIN_MTU: u32 = 1280;
/// `inetdev_valid_mtu`: below 68 the kernel turns IPv4 off on a link.
const IPV4_MIN_MTU: u32 = 68;

/// IFNAMSIZ - 1: the longest name the kernel takes.
const MAX_NAME_LEN: usize = 15;

/// The MAC the model gives a link (the kernel's is random for ifb and veth).
pub(crate) fn model_mac(index: LinkIndex) -> [u8; 6] {
    let b = index.to_be_bytes();
    [0x02, 0xfb, b[0], b[1], b[2], b[3]]
}

/// The EUI-64 link-local address of a MAC (RFC 4291 appendix A).
pub(crate) fn link_local_of(mac: [u8; 6]) -> Ipv6Addr {
    let mut b = [0u8; 16];
    b[0] = 0xfe;
    b[1] = 0x80;
    b[8] = mac[0] ^ 0x02;
    b[9] = mac[1];
    b[10] = mac[2];
    b[11] = 0xff;
    b[12] = 0xfe;
    b[13] = mac[3];
    b[14] = mac[4];
    b[15] = mac[5];
    Ipv6Addr::from(b)
}

fn check_name(name: &str) -> Result<(), KernelError> {
    if name.is_empty()
        || name.len() > MAX_NAME_LEN
        || name.contains(['/', ':'])
        || name.contains(char::is_whitespace)
    {
        // iproute2 refuses before sending: "Error: argument \"X\" is wrong: \"name\" not a valid ifname".
        return Err(KernelError {
            errno: Errno::Inval,
            extack: Some(format!(
                "Error: argument \"{name}\" is wrong: \"name\" not a valid ifname"
            )),
            from_iproute2: true,
        });
    }
    Ok(())
}

fn check_mtu(kind: &LinkKind, mtu: u32) -> Result<(), KernelError> {
    // dev_validate_mtu: ETH_MIN_MTU 68 for veth, 0 for lo, dummy and ifb
    // (whose max_mtu 0 means no maximum). The MTU is an int there: past
    // INT_MAX it is negative, less than any minimum.
    let (min, max) = match kind {
        LinkKind::Loopback | LinkKind::Dummy | LinkKind::Ifb => (0, i32::MAX as u32),
        LinkKind::Gre(spec) => (GreSpec::MIN_MTU, spec.max_mtu()),
        _ => (ETH_MIN_MTU, ETH_MAX_MTU),
    };
    if mtu < min || mtu > i32::MAX as u32 {
        return Err(KernelError::with_extack(
            Errno::Inval,
            "mtu less than device minimum",
        ));
    }
    if mtu > max {
        return Err(KernelError::with_extack(
            Errno::Inval,
            "mtu greater than device maximum",
        ));
    }
    Ok(())
}

impl Fib {
    fn allocate_ifindex(&mut self) -> LinkIndex {
        let mut next = self.last_ifindex;
        loop {
            next = if next >= i32::MAX as u32 { 1 } else { next + 1 };
            if !self.links.contains_key(&next) {
                self.last_ifindex = next;
                return next;
            }
        }
    }

    pub(crate) fn link_add(
        &mut self,
        name: &str,
        kind: &LinkKind,
        mtu: Option<u32>,
    ) -> Result<(), KernelError> {
        check_name(name)?;
        if matches!(kind, LinkKind::Loopback) {
            return Err(KernelError::new(Errno::OpNotSupp));
        }
        if self.link_by_name(name).is_some() {
            return Err(KernelError::new(Errno::Exist));
        }
        let mtu = match kind {
            LinkKind::Gre(spec) => {
                // ip_tunnel_find / ip6gre_tunnel_find: one tunnel per
                // (type, local, remote, ikey), or receipt would be ambiguous.
                let clash = self.links.values().any(|l| match &l.kind {
                    LinkKind::Gre(other) => other.same_endpoints(spec),
                    _ => false,
                });
                if clash {
                    return Err(KernelError::new(Errno::Exist));
                }
                mtu.unwrap_or_else(|| spec.default_mtu(self.tunnel_underlay_mtu(spec)))
            }
            _ => mtu.unwrap_or(1500),
        };
        check_mtu(kind, mtu)?;
        let mut kind = kind.clone();
        if let LinkKind::Veth { peer } = &mut kind {
            // veth_newlink: a peer the request names (VETH_INFO_PEER, which
            // iproute2 sends for any `peer` clause) is made from its own
            // attributes, so with no MTU of its own it gets ether_setup's
            // 1500; only a peer the request does not describe takes the
            // link's (kernel-checked: `link add a mtu 68 type veth peer b`
            // gives b 1500, `link add c mtu 1400 type veth` gives veth0 1400).
            let peer_mtu = if peer == crate::config::link::VETH_PEER_TEMPLATE {
                mtu
            } else {
                1500
            };
            check_name(peer)?;
            // veth_newlink: a peer without a name is "veth%d", registered
            // first, so `link add veth0 type veth` makes the peer veth0 and
            // then finds its own name taken (kernel-checked: File exists).
            *peer = self.allocate_name(peer)?;
            if peer == name || self.link_by_name(peer).is_some() {
                return Err(KernelError::new(Errno::Exist));
            }
            let peer_index = self.allocate_ifindex();
            self.link_names.insert(peer.clone(), peer_index);
            self.links.insert(
                peer_index,
                Link {
                    index: peer_index,
                    name: peer.clone(),
                    kind: LinkKind::Veth { peer: name.into() },
                    mtu: peer_mtu,
                    up: false,
                    carrier: false,
                },
            );
        }
        let index = self.allocate_ifindex();
        self.link_names.insert(name.to_string(), index);
        self.links.insert(
            index,
            Link {
                index,
                name: name.into(),
                kind,
                mtu,
                up: false,
                carrier: false,
            },
        );
        Ok(())
    }

    /// `dev_alloc_name`: a name with `%d` in it is the first it makes with
    /// a number there that no link has (`__dev_alloc_name`: one `%d` and no
    /// other `%`, else EINVAL); any other name is itself.
    fn allocate_name(&self, template: &str) -> Result<String, KernelError> {
        let Some(at) = template.find('%') else {
            return Ok(template.to_string());
        };
        let (head, tail) = (&template[..at], &template[at + 1..]);
        let Some(tail) = tail.strip_prefix('d').filter(|t| !t.contains('%')) else {
            return Err(KernelError::new(Errno::Inval));
        };
        (0..32768)
            .map(|n| format!("{head}{n}{tail}"))
            .take_while(|name| name.len() <= MAX_NAME_LEN)
            .find(|name| self.link_by_name(name).is_none())
            // ENFILE, which fibre's errors do not name: no name is left.
            .ok_or_else(|| KernelError::new(Errno::Inval))
    }

    /// The MTU of the device the route to a tunnel's remote leaves by, as
    /// the kernel looks it up when the tunnel is made (from `local`, so a
    /// `local` that is not ours finds nothing, as `ip_route_output_key`
    /// refuses it); `None` without such a route.
    fn tunnel_underlay_mtu(&self, spec: &GreSpec) -> Option<u32> {
        if !spec.mtu_follows_route() {
            return None;
        }
        let mut request = RouteGetRequest::to(spec.remote);
        request.src = spec.local;
        let answer = self.route_get(&request).ok()?;
        self.link_by_name(answer.dev.as_deref()?).map(|l| l.mtu)
    }

    pub(crate) fn link_set(
        &mut self,
        name: &str,
        up: Option<bool>,
        mtu: Option<u32>,
    ) -> Result<(), KernelError> {
        let index = self.resolve_dev(name)?;
        if let Some(mtu) = mtu {
            check_mtu(&self.links[&index].kind, mtu)?;
            let had_ipv6 = self.ipv6_enabled(index);
            self.links.get_mut(&index).expect("resolved").mtu = mtu;
            // NETDEV_CHANGEMTU: IPv4 goes under 68 (inetdev_destroy) and
            // comes back, without addresses, at 68 or more (inetdev_init).
            if mtu < IPV4_MIN_MTU {
                if self.ipv4_off.insert(index) {
                    self.ipv4_off_link(index);
                }
            } else {
                self.ipv4_off.remove(&index);
            }
            // NETDEV_CHANGEMTU: IPv6 goes under 1280 and comes back above it.
            match (had_ipv6, self.ipv6_enabled(index)) {
                (true, false) => self.ipv6_off(index),
                (false, true) if self.links[&index].up => self.ipv6_up(index),
                _ => {}
            }
        }
        match up {
            Some(true) if !self.links[&index].up => self.link_up(index),
            Some(false) if self.links[&index].up => self.link_down(index),
            _ => {}
        }
        Ok(())
    }

    /// [`Command::KernelLink`]: the kernel's announcement of a link.
    pub(crate) fn kernel_link(&mut self, announced: &KernelLink) -> Result<(), KernelError> {
        check_name(&announced.name)?;
        let index = announced.index;
        if self
            .link_by_name(&announced.name)
            .is_some_and(|l| l.index != index)
        {
            // Another ifindex holds the name: the follower missed a rename
            // or a deletion, which only a resync repairs.
            return Err(KernelError::new(Errno::Exist));
        }
        match self.links.get_mut(&index) {
            None => {
                self.links.insert(
                    index,
                    Link {
                        index,
                        name: announced.name.clone(),
                        kind: announced.kind.clone(),
                        mtu: announced.mtu,
                        up: false,
                        carrier: false,
                    },
                );
                self.link_names.insert(announced.name.clone(), index);
                self.last_ifindex = self.last_ifindex.max(index);
            }
            Some(link) if link.name != announced.name => {
                let old = std::mem::replace(&mut link.name, announced.name.clone());
                self.link_names.remove(&old);
                self.link_names.insert(announced.name.clone(), index);
            }
            Some(_) => {}
        }
        self.announced_carrier.insert(index, announced.carrier);
        let link = &self.links[&index];
        let (was_up, had_carrier, mtu) = (link.up, link.carrier, link.mtu);
        if mtu != announced.mtu {
            self.link_set(&announced.name, None, Some(announced.mtu))?;
        }
        match (was_up, announced.up) {
            (false, true) => self.link_up(index),
            (true, false) => self.link_down(index),
            (true, true) if had_carrier != announced.carrier => {
                // NETDEV_CHANGE: carrier came or went on an up link.
                for gained in self.refresh_carrier(index) {
                    if self.ipv6_enabled(gained) {
                        self.ipv6_link_ready(gained);
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    pub(crate) fn link_del(&mut self, name: &str) -> Result<(), KernelError> {
        let index = self.resolve_dev(name)?;
        let link = self.links[&index].clone();
        if matches!(link.kind, LinkKind::Loopback) {
            return Err(KernelError::new(Errno::OpNotSupp));
        }
        let mut gone = vec![index];
        if let LinkKind::Veth { peer } = &link.kind {
            if let Some(p) = self.link_by_name(peer) {
                gone.push(p.index);
            }
        }
        for index in gone {
            if self.links[&index].up {
                self.link_down(index);
            }
            // Unregister: every remaining route through it goes, local ones too.
            self.remove_addresses_of(index);
            self.flush_routes_of_dev(index, true);
            self.neighbours_ifdown(index);
            if let Some(link) = self.links.remove(&index) {
                self.link_names.remove(&link.name);
            }
            self.been_up.remove(&index);
            self.announced_carrier.remove(&index);
        }
        Ok(())
    }

    /// Whether a link has carrier given its kind and its peer's state (or,
    /// followed, the kernel's word).
    fn carrier_of(&self, index: LinkIndex) -> bool {
        let link = &self.links[&index];
        if !link.up {
            return false;
        }
        if let Some(&carrier) = self.announced_carrier.get(&index) {
            return carrier;
        }
        match &link.kind {
            LinkKind::Veth { peer } => self.link_by_name(peer).is_some_and(|p| p.up),
            _ => true,
        }
    }

    /// Updates the carrier of the link `index` and of its veth peer, the
    /// only links whose carrier its up or down can change ([`Fib::carrier_of`]);
    /// returns those that gained it, in index order.
    fn refresh_carrier(&mut self, index: LinkIndex) -> Vec<LinkIndex> {
        let mut affected = vec![index];
        if let LinkKind::Veth { peer } = &self.links[&index].kind {
            affected.extend(self.link_by_name(peer).map(|p| p.index));
        }
        affected.sort_unstable();
        let mut gained = Vec::new();
        for index in affected {
            let carrier = self.carrier_of(index);
            let link = self.links.get_mut(&index).expect("listed");
            if link.carrier != carrier {
                link.carrier = carrier;
                if !carrier {
                    self.neighbours_carrier_down(index);
                }
                // A link never up has no path that could carry the flag.
                if self.been_up.contains(&index) {
                    self.set_linkdown_flags(index, !carrier);
                }
                if carrier {
                    gained.push(index);
                }
            }
        }
        gained
    }

    fn link_up(&mut self, index: LinkIndex) {
        self.links.get_mut(&index).expect("caller resolved").up = true;
        // Until it is marked, the link counts as never up: its own paths
        // are left alone (see `Fib::been_up`).
        let first_up = !self.been_up.contains(&index);
        let gained = self.refresh_carrier(index);
        // NETDEV_CHANGE on a veth peer already up: addrconf now sees the
        // link ready and configures it.
        for other in gained.into_iter().filter(|&i| i != index) {
            if self.ipv6_enabled(other) {
                self.ipv6_link_ready(other);
            }
        }
        // fib_sync_up: multipath nexthops through this link come alive
        // again (none is dead before its first up).
        if !first_up {
            self.revive_nexthops_of_dev(index);
        }
        self.been_up.insert(index);
        let is_loopback = matches!(self.links[&index].kind, LinkKind::Loopback);
        if is_loopback && !self.follows_kernel {
            // inetdev/addrconf give lo its addresses when it first comes up;
            // inetdev_event's NETDEV_UP needs an in_device, none while the
            // MTU is under 68 (kernel-checked: `link set lo up mtu 67`
            // after `link set lo down` leaves lo without 127.0.0.1: the
            // MTU is set before the flags).
            let has_in_device = !self.ipv4_off.contains(&index);
            if has_in_device && self.addrs_v4.get(&index).is_none_or(|v| v.is_empty()) {
                let _ = self.addr_insert_v4(index, loopback_v4());
            }
            // init_loopback, which needs an inet6_dev: none under 1280
            // (kernel-checked: `link set lo up mtu 68` leaves lo without ::1,
            // and raising the MTU again brings it back only at the next up).
            if self.ipv6_enabled(index) && self.addrs_v6.get(&index).is_none_or(|v| v.is_empty()) {
                let _ = self.addr_insert_v6(index, loopback_v6());
            }
        }
        // fib_add_ifaddr for every IPv4 address (NETDEV_UP).
        let v4: Vec<Address> = self.addrs_v4.get(&index).cloned().unwrap_or_default();
        for a in &v4 {
            self.add_ifaddr_routes_v4(index, a);
        }
        if self.ipv6_enabled(index) {
            self.ipv6_up(index);
        }
    }

    /// IPv6 runs on a link whose MTU is at least 1280 (IPV6_MIN_MTU), lo too.
    /// Whether the link has an `inet6_dev`, which addresses and routes
    /// need: while IPv6 is on, and on lo always, whose own the kernel keeps
    /// below 1280 (`addrconf_ifdown(dev, dev != net->loopback_dev)`;
    /// kernel-checked: lo at MTU 1000 takes 2001:db8:1::1/64).
    pub(crate) fn has_inet6_dev(&self, index: LinkIndex) -> bool {
        self.ipv6_enabled(index)
            || self
                .links
                .get(&index)
                .is_some_and(|l| matches!(l.kind, LinkKind::Loopback))
    }

    pub(crate) fn ipv6_enabled(&self, index: LinkIndex) -> bool {
        self.links
            .get(&index)
            .is_some_and(|l| l.mtu >= IPV6_MIN_MTU)
    }

    /// addrconf on an up link: prefix routes of the addresses kept while
    /// down; with carrier, the rest (see [`Fib::ipv6_link_ready`]).
    fn ipv6_up(&mut self, index: LinkIndex) {
        self.add_addr_routes_v6_of(index);
        if self.links[&index].carrier {
            self.ipv6_link_ready(index);
        }
    }

    /// addrconf_dev_config, once `addrconf_link_ready` (up with carrier:
    /// a veth whose peer is down waits): the link-local address (with
    /// fe80::/64) and ff00::/8. Kernel-checked: `v0` up with its peer down
    /// has no IPv6 address and no route; the peer coming up gives both.
    fn ipv6_link_ready(&mut self, index: LinkIndex) {
        if self.follows_kernel {
            // The kernel announces the link-local address it made (and
            // with it fe80::/64); the multicast route comes with the link.
            if !matches!(self.links[&index].kind, LinkKind::Loopback) {
                self.add_multicast_route_v6(index);
            }
            return;
        }
        if !matches!(self.links[&index].kind, LinkKind::Loopback) {
            let ll = link_local_of(model_mac(index));
            let present = self
                .addrs_v6
                .get(&index)
                .is_some_and(|v| v.iter().any(|a| a.local == IpAddr::V6(ll)));
            if present {
                return;
            }
            let _ = self.addr_insert_v6(
                index,
                Address {
                    link: index,
                    local: IpAddr::V6(ll),
                    prefix_len: 64,
                    peer: None,
                    broadcast: None,
                    scope: Scope::LINK,
                    secondary: false,
                    noprefixroute: false,
                    metric: 256,
                    label: None,
                },
            );
            self.add_multicast_route_v6(index);
        }
    }

    /// addrconf_ifdown for an MTU under 1280: the link loses its IPv6
    /// addresses and every IPv6 route through it.
    fn ipv6_off(&mut self, index: LinkIndex) {
        let v6: Vec<Address> = self.addrs_v6.remove(&index).unwrap_or_default();
        for a in &v6 {
            self.local_addrs.removed(&a.local);
            self.remove_addr_routes_v6(index, a);
        }
        self.flush_routes_of_dev_v6(index);
    }

    /// `inetdev_destroy`: the link's IPv4 addresses go, and with the last
    /// one every IPv4 route through it (`fib_disable_ip` with force: local
    /// and broadcast routes too; a multipath route loses that path).
    fn ipv4_off_link(&mut self, index: LinkIndex) {
        let v4 = self.addrs_v4.remove(&index).unwrap_or_default();
        for a in &v4 {
            self.local_addrs.removed(&a.local);
        }
        for a in &v4 {
            if !self.is_local_address(&a.local) {
                self.flush_routes_with_prefsrc(&a.local);
            }
        }
        // The routes go with the last address (fib_inetaddr_event's
        // fib_disable_ip): a link that had none keeps its routes
        // (kernel-checked: `default dev fd1` outlives `link set fd1 mtu 8`).
        if !v4.is_empty() {
            self.flush_family_routes_of_dev(index, Family::V4);
        }
    }

    fn link_down(&mut self, index: LinkIndex) {
        self.links.get_mut(&index).expect("caller resolved").up = false;
        // Carrier lost by a peer leaves its IPv6 configuration alone
        // (NETDEV_CHANGE without link_ready only marks routes linkdown).
        let _ = self.refresh_carrier(index);
        // addrconf_ifdown: IPv6 addresses go (keep_addr_on_down = 0), on lo
        // ::1 too (kernel-checked: a down lo has no IPv6 address or route;
        // coming up gives it ::1 again).
        let v6: Vec<Address> = self.addrs_v6.remove(&index).unwrap_or_default();
        for a in &v6 {
            self.local_addrs.removed(&a.local);
            self.remove_addr_routes_v6(index, a);
        }
        // fib_disable_ip: routes through the link die, host-scope (local) ones stay.
        self.flush_routes_of_dev(index, false);
        // arp_ifdown and ndisc_netdev_event (NETDEV_DOWN): neigh_ifdown.
        self.neighbours_ifdown(index);
    }
}

fn loopback_v4() -> Address {
    Address {
        link: 1,
        local: IpAddr::V4(Ipv4Addr::LOCALHOST),
        prefix_len: 8,
        peer: None,
        broadcast: None,
        scope: Scope::HOST,
        secondary: false,
        noprefixroute: false,
        metric: 0,
        label: Some("lo".into()),
    }
}

fn loopback_v6() -> Address {
    Address {
        link: 1,
        local: IpAddr::V6(Ipv6Addr::LOCALHOST),
        prefix_len: 128,
        peer: None,
        broadcast: None,
        scope: Scope::HOST,
        secondary: false,
        noprefixroute: false,
        metric: 256,
        label: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Command;

    fn add(fib: &mut Fib, name: &str, kind: LinkKind) {
        fib.apply(&Command::LinkAdd {
            name: name.into(),
            kind,
            mtu: None,
        })
        .unwrap();
    }

    #[test]
    fn indexes_go_upwards_and_are_not_reused() {
        let mut fib = Fib::new();
        add(&mut fib, "a", LinkKind::Ifb);
        add(&mut fib, "b", LinkKind::Dummy);
        fib.apply(&Command::LinkDel { name: "b".into() }).unwrap();
        add(&mut fib, "c", LinkKind::Ifb);
        let idx: Vec<(String, u32)> = fib.links().map(|l| (l.name.clone(), l.index)).collect();
        assert_eq!(idx, [("lo".into(), 1), ("a".into(), 2), ("c".into(), 4)]);
    }

    #[test]
    fn a_veth_gets_its_link_local_address_once_it_has_carrier() {
        // Kernel-checked (6.18): `v0` up with `v1` down has no IPv6 address
        // and no route (addrconf waits for the link to be ready); `v1` up
        // gives v0 its link-local, fe80::/64 and multicast ff00::/8; `v1`
        // down again leaves them (linkdown).
        let mut fib = Fib::new();
        add(&mut fib, "v0", LinkKind::Veth { peer: "v1".into() });
        let set = |fib: &mut Fib, n: &str, up: bool| {
            fib.apply(&Command::LinkSet {
                name: n.into(),
                up: Some(up),
                mtu: None,
            })
            .unwrap()
        };
        let v0 = fib.link_by_name("v0").unwrap().index;
        let v6_of = |fib: &Fib| -> Vec<IpAddr> {
            fib.addrs_v6
                .get(&v0)
                .map(|v| v.iter().map(|a| a.local).collect())
                .unwrap_or_default()
        };
        let v6_routes_of = |fib: &Fib| {
            fib.routes(Family::V6, None)
                .iter()
                .filter(|r| r.nexthops.iter().any(|n| n.dev == Some(v0)))
                .count()
        };
        set(&mut fib, "v0", true);
        assert!(v6_of(&fib).is_empty());
        assert_eq!(v6_routes_of(&fib), 0);
        set(&mut fib, "v1", true);
        let link_local = IpAddr::V6(link_local_of(model_mac(v0)));
        assert_eq!(v6_of(&fib), vec![link_local]);
        // fe80::/64, local fe80::..., multicast ff00::/8, and with
        // forwarding on (as the model assumes) anycast fe80::.
        assert_eq!(v6_routes_of(&fib), 4);
        set(&mut fib, "v1", false);
        assert_eq!(v6_of(&fib), vec![link_local]);
        set(&mut fib, "v1", true);
        assert_eq!(v6_of(&fib), vec![link_local], "not added twice");
    }

    #[test]
    fn veth_peer_first_and_carrier_needs_both_ends() {
        let mut fib = Fib::new();
        add(&mut fib, "v0", LinkKind::Veth { peer: "v1".into() });
        assert_eq!(fib.link_by_name("v1").unwrap().index, 2);
        assert_eq!(fib.link_by_name("v0").unwrap().index, 3);
        let set = |fib: &mut Fib, n: &str| {
            fib.apply(&Command::LinkSet {
                name: n.into(),
                up: Some(true),
                mtu: None,
            })
            .unwrap()
        };
        set(&mut fib, "v0");
        assert!(!fib.link_by_name("v0").unwrap().carrier);
        set(&mut fib, "v1");
        assert!(fib.link_by_name("v0").unwrap().carrier);
        assert!(fib.link_by_name("v1").unwrap().carrier);
        fib.apply(&Command::LinkDel { name: "v1".into() }).unwrap();
        assert_eq!(fib.links().count(), 1, "deleting one end deletes both");
    }

    #[test]
    fn refusals() {
        let mut fib = Fib::new();
        add(&mut fib, "a", LinkKind::Ifb);
        let dup = fib
            .apply(&Command::LinkAdd {
                name: "a".into(),
                kind: LinkKind::Dummy,
                mtu: None,
            })
            .unwrap_err();
        assert_eq!(dup.to_string(), "RTNETLINK answers: File exists");
        let missing = fib
            .apply(&Command::LinkSet {
                name: "zz".into(),
                up: Some(true),
                mtu: None,
            })
            .unwrap_err();
        assert_eq!(missing.to_string(), "Cannot find device \"zz\"");
        // ifb takes any MTU from 0; -1 (u32::MAX on the wire) is an int
        // below it.
        let small = fib
            .apply(&Command::LinkSet {
                name: "a".into(),
                up: None,
                mtu: Some(u32::MAX),
            })
            .unwrap_err();
        assert_eq!(small.to_string(), "Error: mtu less than device minimum.");
    }

    fn load(text: &str) -> Result<Fib, String> {
        crate::config::apply_str(&Fib::new(), "t.conf", text, false)
            .map(|(fib, _)| fib)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn tunnel_mtu_follows_the_underlay_route_when_made() {
        let fib = load(
            "link add eth0 mtu 9000 type dummy\nlink set eth0 up\naddr add 192.0.2.1/24 dev eth0\n\
             addr add 2001:db8::1/64 dev eth0\n\
             link add g1 type gre remote 192.0.2.2 key 5\n\
             link add g2 type gre remote 198.51.100.2\n\
             link add g3 type gretap remote 192.0.2.3\n\
             link add g4 type ip6gre remote 2001:db8::2 local 2001:db8::1\n\
             link add g5 type ip6gre remote 2001:db8::3\n\
             link add g6 mtu 1280 type gre remote 192.0.2.4\n",
        )
        .unwrap();
        let mtu = |n: &str| fib.link_by_name(n).unwrap().mtu;
        // Routed over the 9000-byte eth0: 9000 - 20 - 8 (key).
        assert_eq!(mtu("g1"), 8972);
        // No route to 198.51.100.2: ETH_DATA_LEN - 24.
        assert_eq!(mtu("g2"), 1476);
        assert_eq!(mtu("g3"), 9000 - 24 - 14);
        // ip6gre with local: routed, less the encapsulation limit option.
        assert_eq!(mtu("g4"), 9000 - 44 - 8);
        // ip6gre without local does not look the route up.
        assert_eq!(mtu("g5"), 1448);
        assert_eq!(mtu("g6"), 1280);
    }

    #[test]
    fn tunnel_mtu_bounds_and_endpoint_clashes() {
        let mut fib = Fib::new();
        let gre = |remote: &str, key: Option<u32>| {
            let mut spec = GreSpec::new(crate::GreKind::Gre, remote.parse().unwrap());
            spec.ikey = key;
            spec.okey = key;
            LinkKind::Gre(spec)
        };
        let add = |fib: &mut Fib, name: &str, kind: LinkKind, mtu: Option<u32>| {
            fib.apply(&Command::LinkAdd {
                name: name.into(),
                kind,
                mtu,
            })
            .map_err(|e| e.to_string())
        };
        assert_eq!(
            add(&mut fib, "g0", gre("192.0.2.2", None), Some(65512)).unwrap_err(),
            "Error: mtu greater than device maximum."
        );
        assert_eq!(
            add(&mut fib, "g0", gre("192.0.2.2", None), Some(67)).unwrap_err(),
            "Error: mtu less than device minimum."
        );
        add(&mut fib, "g0", gre("192.0.2.2", None), Some(65511)).unwrap();
        assert_eq!(
            add(&mut fib, "g1", gre("192.0.2.2", None), None).unwrap_err(),
            "RTNETLINK answers: File exists"
        );
        // Another input key tells them apart.
        add(&mut fib, "g1", gre("192.0.2.2", Some(1)), None).unwrap();
        let set_mtu = |fib: &mut Fib, mtu| {
            fib.apply(&Command::LinkSet {
                name: "g1".into(),
                up: Some(true),
                mtu: Some(mtu),
            })
            .map_err(|e| e.to_string())
        };
        // 65535 - 20 - 8 (key).
        assert!(set_mtu(&mut fib, 65508).is_err());
        set_mtu(&mut fib, 65507).unwrap();
        let g1 = fib.link_by_name("g1").unwrap();
        assert!(g1.up && g1.carrier, "a tunnel has carrier once up");
    }

    #[test]
    fn carrier_flags_follow_a_peer_coming_up_for_the_first_time() {
        let mut fib = Fib::new();
        let text =
            "link add va type veth peer name vb\nlink set va up\naddr add 10.0.0.1/24 dev va\n";
        for statement in crate::config::parse_str("t", text).statements {
            fib.apply(&statement.command).unwrap();
        }
        let subnet_linkdown = |fib: &Fib| {
            fib.routes(Family::V4, Some(TABLE_MAIN))
                .iter()
                .find(|r| r.dst.to_string() == "10.0.0.0/24")
                .map(|r| r.nexthops[0].flags.linkdown)
        };
        // va is up without carrier: its subnet route is LINKDOWN until vb,
        // never up before, comes up and gives va carrier.
        assert_eq!(subnet_linkdown(&fib), Some(true));
        let set = |fib: &mut Fib, name: &str, up: bool| {
            fib.apply(&Command::LinkSet {
                name: name.into(),
                up: Some(up),
                mtu: None,
            })
            .unwrap()
        };
        set(&mut fib, "vb", true);
        assert_eq!(subnet_linkdown(&fib), Some(false));
        set(&mut fib, "vb", false);
        assert_eq!(subnet_linkdown(&fib), Some(true));
        set(&mut fib, "vb", true);
        assert_eq!(subnet_linkdown(&fib), Some(false));
    }

    #[test]
    fn link_local_is_eui64() {
        let ll = link_local_of([0x5e, 0x5d, 0x17, 0x8b, 0x44, 0x41]);
        // Kernel-checked: MAC 5e:5d:17:8b:44:41 gave fe80::5c5d:17ff:fe8b:4441.
        assert_eq!(ll.to_string(), "fe80::5c5d:17ff:fe8b:4441");
    }
}
