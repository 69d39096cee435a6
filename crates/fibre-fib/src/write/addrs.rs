//! Addresses: `ip addr add|replace|del` and the routes the kernel makes for
//! them (`fib_add_ifaddr` for IPv4, addrconf for IPv6).
//!
//! Kernel-checked in a namespace (6.18):
//! - IPv4 `A/N` on a link: `local A` in table local (scope host, src A)
//!   whether or not the link is up; when up also `N`'s subnet in main
//!   (scope link, src A, the address' metric) unless `noprefixroute`, and
//!   `broadcast` for the subnet's last address when N < 31 plus for an
//!   explicit `brd`. No broadcast for the network address any more. /32
//!   makes only the local route; a `peer P/N` makes the route to P/N.
//! - An address in the subnet of an existing one (same mask) is secondary;
//!   its routes use the primary as `src`; deleting a primary deletes its
//!   secondaries (`promote_secondaries` is 0 in a new namespace).
//! - IPv6: `local A` in table local (metric 0) at once, `prefix/N` in main
//!   (proto kernel, metric 256 or the address' metric) only while the link
//!   is up, including for /128 and on lo (not for lo's own ::1); with a
//!   `peer P` the prefix is still the local address', and P/128 is routed
//!   too (even with `noprefixroute`). The list is ordered by scope, newest
//!   first.
//! - With forwarding on, each IPv6 address of an up link (link-local too)
//!   adds `anycast PREFIX::` (its subnet-router anycast address) in table
//!   local, on ifb even while the link is down (DAD completes at once on
//!   NOARP links); the model assumes forwarding on.

use std::net::IpAddr;

use crate::command::{AddrOp, AddressSpec};
use crate::error::{Errno, KernelError};
use crate::fib::Fib;
use crate::types::*;

/// The IPv6 "source scope" ranking the kernel sorts addresses by (higher first).
fn v6_scope_rank(scope: Scope) -> u8 {
    match scope {
        Scope::HOST => 1,
        Scope::LINK => 2,
        Scope::SITE => 5,
        _ => 14,
    }
}

fn v4_mask(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(len))
    }
}

fn v4(addr: &IpAddr) -> u32 {
    match addr {
        IpAddr::V4(a) => u32::from(*a),
        IpAddr::V6(_) => 0,
    }
}

/// A route the kernel makes itself (`fib_magic`).
fn kernel_route(
    table: TableId,
    kind: RouteType,
    dst: Prefix,
    dev: LinkIndex,
    prefsrc: Option<IpAddr>,
    metric: u32,
) -> Route {
    let scope = match (dst.family(), kind) {
        (Family::V6, _) => Scope::UNIVERSE,
        (Family::V4, RouteType::Local) => Scope::HOST,
        (Family::V4, _) => Scope::LINK,
    };
    Route {
        mtu_lock: false,
        metrics: Default::default(),
        table,
        dst,
        tos: 0,
        kind,
        protocol: Protocol::KERNEL,
        scope,
        metric,
        prefsrc,
        mtu: None,
        nexthops: vec![Nexthop {
            gateway: None,
            dev: Some(dev),
            weight: 1,
            flags: NexthopFlags::default(),
        }],
        cache_class: 0,
    }
}

/// The answer to adding an address already assigned: `replace` keeps it,
/// anything else is refused with `EEXIST` and the family's `message`.
fn already_assigned(op: AddrOp, message: &str) -> Result<(), KernelError> {
    if op == AddrOp::Replace {
        return Ok(());
    }
    Err(KernelError::with_extack(Errno::Exist, message))
}

/// `find_matching_ifa`: the address `held` is the one `asked` names when
/// the masks and local addresses are the same and `asked`'s IFA_ADDRESS
/// lies in `held`'s subnet (`addr add 10.1.0.1/24 remote 10.1.0.0/24` of
/// a held 10.1.0.1/24 is "Address already assigned", kernel-checked).
fn same_ifa(held: &Address, asked: &Address) -> bool {
    held.local == asked.local
        && held.prefix_len == asked.prefix_len
        && in_subnet(asked.peer.unwrap_or(asked.local), held)
}

/// `inet_ifa_match`: the request's IFA_ADDRESS (its peer, or its local
/// address) lies in the address's subnet, as its own IFA_ADDRESS (peer or
/// local) and mask give it: `addr del 10.1.0.1/24 remote 10.1.0.0/24`
/// deletes 10.1.0.1/24 (kernel-checked).
fn in_subnet(wanted: IpAddr, a: &Address) -> bool {
    (v4(&wanted) ^ v4(&a.peer.unwrap_or(a.local))) & v4_mask(a.prefix_len) == 0
}

impl Fib {
    pub(crate) fn addr_apply(&mut self, op: AddrOp, spec: &AddressSpec) -> Result<(), KernelError> {
        let index = self.resolve_dev(&spec.dev)?;
        let family = Family::of(&spec.local);
        if spec.prefix_len > family.bits() {
            return Err(KernelError::new(Errno::Inval));
        }
        match (op, family) {
            (AddrOp::Del, Family::V4) => self.addr_del_v4(index, spec, true),
            (AddrOp::DelAnyLength, Family::V4) => self.addr_del_v4(index, spec, false),
            (AddrOp::Del | AddrOp::DelAnyLength, Family::V6) => self.addr_del_v6(index, spec),
            (op, Family::V4) => {
                if self.ipv4_off.contains(&index) {
                    // rtm_to_ifaddr: no in_device on the link.
                    return Err(KernelError::new(Errno::NoBufs));
                }
                let addr = self.address_from_spec(index, spec);
                // IPv4 is the same address only with the same prefix and peer
                // (inet_insert_ifa); IPv6 by its local address alone (ipv6_add_addr).
                let exists = self
                    .addrs_v4
                    .get(&index)
                    .into_iter()
                    .flatten()
                    .any(|a| same_ifa(a, &addr));
                if exists {
                    already_assigned(op, "ipv4: Address already assigned")?;
                    self.addr_modify_v4(index, &addr);
                    return Ok(());
                }
                self.addr_insert_v4(index, addr)
            }
            (op, Family::V6) => {
                let is_loopback_link = self
                    .link(index)
                    .is_some_and(|l| matches!(l.kind, LinkKind::Loopback));
                // The length of the address the link already holds, if
                // it does (ipv6_get_ifaddr matches the address alone).
                let held_len = self
                    .addrs_v6
                    .get(&index)
                    .into_iter()
                    .flatten()
                    .find(|a| a.local == spec.local)
                    .map(|a| a.prefix_len);
                let new_address = held_len.is_none();
                if !self.has_inet6_dev(index) {
                    // No inet6_dev on a link whose MTU is under 1280:
                    // inet6_rtm_newaddr's ipv6_find_idev fails first
                    // (kernel-checked: `addr replace ::/0`, `addr add
                    // ::1/128` and a mngtmpaddr /48 on a link of MTU 1000
                    // are each "Invalid argument", seed 1796591588231232631).
                    return Err(KernelError::new(Errno::Inval));
                }
                if new_address && spec.mngtmpaddr && spec.prefix_len != 64 {
                    // inet6_addr_add, before it looks at the device:
                    // temporary addresses are made from a /64.
                    return Err(KernelError::with_extack(
                        Errno::Inval,
                        "ipv6: address with \"mngtmpaddr\" flag must have a prefix length of 64",
                    ));
                }
                if new_address {
                    // inet6_addr_add -> addrconf_add_dev, before
                    // ipv6_add_addr's refusals below.
                    self.add_dev_multicast_route_v6(index);
                }
                if spec.local.is_unspecified() {
                    // ipv6_add_addr: IPV6_ADDR_ANY is no address to assign.
                    return Err(KernelError::with_extack(
                        Errno::AddrNotAvail,
                        "ipv6: Invalid address",
                    ));
                }
                if spec.local.is_loopback() && !is_loopback_link {
                    // ipv6_add_addr: ::1 only on a loopback device.
                    return Err(KernelError::with_extack(
                        Errno::AddrNotAvail,
                        "ipv6: Cannot assign loopback address on this device",
                    ));
                }
                let addr = self.address_from_spec(index, spec);
                if let Some(held_len) = held_len {
                    already_assigned(op, "ipv6: address already assigned")?;
                    // inet6_addr_modify keeps the held length, and checks
                    // the flag against it, without a message
                    // (kernel-checked: `replace 2001:db8:3::1/64
                    // mngtmpaddr` of a held /48 is "Invalid argument", of
                    // a held /64 at /48 accepted).
                    if spec.mngtmpaddr && held_len != 64 {
                        return Err(KernelError::new(Errno::Inval));
                    }
                    self.addr_modify_v6(index, addr, spec.metric);
                    return Ok(());
                }
                self.addr_insert_v6(index, addr)
            }
        }
    }

    fn address_from_spec(&self, index: LinkIndex, spec: &AddressSpec) -> Address {
        let family = Family::of(&spec.local);
        let scope = spec.scope.unwrap_or(match spec.local {
            IpAddr::V4(a) if a.is_loopback() => Scope::HOST,
            IpAddr::V6(a) if a.is_loopback() => Scope::HOST,
            IpAddr::V6(a) if (a.segments()[0] & 0xffc0) == 0xfe80 => Scope::LINK,
            _ => Scope::UNIVERSE,
        });
        Address {
            link: index,
            local: spec.local,
            prefix_len: spec.prefix_len,
            // extract_addr (IPv6) and inet_fill_ifaddr (IPv4): a peer equal
            // to the local address is none (kernel-checked: `add
            // 2001:db8:20::/48 remote 2001:db8:20::/48` routes no peer).
            peer: spec.peer.filter(|peer| *peer != spec.local),
            broadcast: spec.broadcast,
            scope,
            secondary: false,
            noprefixroute: spec.noprefixroute,
            // addrconf_prefix_route: an IPv6 metric of 0 is the default 256.
            metric: match (family, spec.metric) {
                (Family::V6, None | Some(0)) => 256,
                (Family::V4, None) => 0,
                (_, Some(metric)) => metric,
            },
            label: spec.label.clone(),
        }
    }

    /// `__inet_insert_ifa`: secondary detection, list position, routes.
    pub(crate) fn addr_insert_v4(
        &mut self,
        index: LinkIndex,
        mut addr: Address,
    ) -> Result<(), KernelError> {
        if addr.local.is_unspecified() {
            // __inet_insert_ifa: an address of 0.0.0.0 is dropped, and the
            // request succeeds.
            return Ok(());
        }
        let list = self.addrs_v4.entry(index).or_default();
        let mask = v4_mask(addr.prefix_len);
        let subnet = v4(&addr.peer.unwrap_or(addr.local)) & mask;
        let mut last_primary = 0;
        for (i, other) in list.iter().enumerate() {
            if !other.secondary && addr.scope <= other.scope {
                last_primary = i + 1;
            }
            let other_subnet = v4(&other.peer.unwrap_or(other.local)) & v4_mask(other.prefix_len);
            if other.prefix_len == addr.prefix_len && other_subnet == subnet {
                if other.scope != addr.scope {
                    return Err(KernelError::with_extack(
                        Errno::Inval,
                        "ipv4: Invalid scope value",
                    ));
                }
                addr.secondary = true;
            }
        }
        let at = if addr.secondary {
            list.len()
        } else {
            last_primary
        };
        list.insert(at, addr.clone());
        self.local_addrs.added(&addr.local);
        self.add_ifaddr_routes_v4(index, &addr);
        // fib_inetaddr_event (NETDEV_UP): paths the last address's
        // departure killed come back (fib_sync_up needs the link up).
        if let Some(link) = self.link(index).filter(|l| l.up) {
            let carrier = link.carrier;
            self.revive_v4_nexthops_of_dev(index, carrier);
        }
        Ok(())
    }

    /// `inet_rtm_newaddr` replacing an address it found: a metric other
    /// than the held one (none given is 0) moves the prefix route to it
    /// (fib_modify_prefix_metric; kernel-checked: `addr replace
    /// 10.20.0.1/20 priority 65536` of 10.20.0.1/20 shows the route with
    /// metric 65536).
    fn addr_modify_v4(&mut self, index: LinkIndex, asked: &Address) {
        let Some(held) = self
            .addrs_v4
            .get(&index)
            .and_then(|list| list.iter().find(|a| same_ifa(a, asked)))
            .cloned()
        else {
            return;
        };
        if held.metric == asked.metric {
            return;
        }
        let before = self.ifaddr_routes_v4(index, &held);
        if let Some(a) = self.addrs_v4.get_mut(&index).and_then(|list| {
            list.iter_mut().find(|a| {
                a.local == held.local && a.prefix_len == held.prefix_len && a.peer == held.peer
            })
        }) {
            a.metric = asked.metric;
        }
        let changed = Address {
            metric: asked.metric,
            ..held
        };
        let after = self.ifaddr_routes_v4(index, &changed);
        for r in before.iter().filter(|r| !after.contains(r)) {
            self.remove_exact_route(r);
        }
        for r in after.into_iter().filter(|r| !before.contains(r)) {
            self.add_kernel_route(r);
        }
    }

    /// The primary address a secondary one hangs off (itself when primary).
    fn primary_of(&self, index: LinkIndex, addr: &Address) -> Option<Address> {
        if !addr.secondary {
            return Some(addr.clone());
        }
        let mask = v4_mask(addr.prefix_len);
        let subnet = v4(&addr.peer.unwrap_or(addr.local)) & mask;
        self.addrs_v4
            .get(&index)?
            .iter()
            .find(|p| {
                !p.secondary
                    && p.prefix_len == addr.prefix_len
                    && v4(&p.peer.unwrap_or(p.local)) & mask == subnet
            })
            .cloned()
    }

    /// The routes `fib_add_ifaddr` makes for an IPv4 address in the link's current state.
    fn ifaddr_routes_v4(&self, index: LinkIndex, addr: &Address) -> Vec<Route> {
        self.ifaddr_routes_v4_as(index, addr, self.links[&index].up)
    }

    /// The routes `fib_add_ifaddr` makes for `addr` on a link that is up
    /// (`up`) or down.
    fn ifaddr_routes_v4_as(&self, index: LinkIndex, addr: &Address, up: bool) -> Vec<Route> {
        let Some(prim) = self.primary_of(index, addr) else {
            return Vec::new();
        };
        let src = Some(prim.local);
        let link = &self.links[&index];
        let mut out = vec![kernel_route(
            TABLE_LOCAL,
            RouteType::Local,
            Prefix::host(addr.local),
            index,
            src,
            0,
        )];
        if !up {
            return out;
        }
        if let Some(brd) = addr.broadcast {
            if u32::from(brd) != 0 && u32::from(brd) != u32::MAX {
                out.push(kernel_route(
                    TABLE_LOCAL,
                    RouteType::Broadcast,
                    Prefix::host(IpAddr::V4(brd)),
                    index,
                    src,
                    0,
                ));
            }
        }
        let mask = v4_mask(addr.prefix_len);
        let prefix = v4(&addr.peer.unwrap_or(addr.local)) & mask;
        // ipv4_is_zeronet is only 0.0.0.0 since Linux 5.3 (0/8 became unicast).
        let is_zeronet = prefix == 0;
        if !is_zeronet && !addr.secondary && (prefix != v4(&addr.local) || addr.prefix_len < 32) {
            let dst = Prefix::containing(IpAddr::V4(prefix.into()), addr.prefix_len);
            if !addr.noprefixroute {
                let (table, kind) = if matches!(link.kind, LinkKind::Loopback) {
                    (TABLE_LOCAL, RouteType::Local)
                } else {
                    (TABLE_MAIN, RouteType::Unicast)
                };
                out.push(kernel_route(table, kind, dst, index, src, addr.metric));
            }
            if addr.prefix_len < 31 {
                out.push(kernel_route(
                    TABLE_LOCAL,
                    RouteType::Broadcast,
                    Prefix::host(IpAddr::V4((prefix | !mask).into())),
                    index,
                    src,
                    0,
                ));
            }
        }
        out
    }

    pub(crate) fn add_ifaddr_routes_v4(&mut self, index: LinkIndex, addr: &Address) {
        for r in self.ifaddr_routes_v4(index, addr) {
            self.add_kernel_route(r);
        }
    }

    /// `inet_rtm_deladdr`: the first address with the local address and,
    /// when given, the label; with `IFA_ADDRESS` (`by_length`) also the
    /// length and peer.
    fn addr_del_v4(
        &mut self,
        index: LinkIndex,
        spec: &AddressSpec,
        by_length: bool,
    ) -> Result<(), KernelError> {
        if self.ipv4_off.contains(&index) {
            // inet_rtm_deladdr: inetdev_by_index finds no in_device (an MTU
            // under 68 took it).
            return Err(KernelError::with_extack(
                Errno::NoDev,
                "ipv4: Device not found",
            ));
        }
        let list = self.addrs_v4.get(&index).cloned().unwrap_or_default();
        // An address added without a label carries the device's name.
        let dev_name = self.link(index).map(|l| l.name.clone()).unwrap_or_default();
        let found = list.iter().position(|a| {
            a.local == spec.local
                && spec
                    .label
                    .as_ref()
                    .is_none_or(|wanted| a.label.as_deref().unwrap_or(&dev_name) == wanted.as_str())
                && (!by_length
                    || a.prefix_len == spec.prefix_len
                        && in_subnet(spec.peer.unwrap_or(spec.local), a))
        });
        let Some(pos) = found else {
            return Err(KernelError::with_extack(
                Errno::AddrNotAvail,
                "ipv4: Address not found",
            ));
        };
        let victim = list[pos].clone();
        let mut gone = vec![victim.clone()];
        if !victim.secondary {
            // promote_secondaries = 0: the primary takes its secondaries with it.
            let mask = v4_mask(victim.prefix_len);
            let subnet = v4(&victim.peer.unwrap_or(victim.local)) & mask;
            gone.extend(
                list.iter()
                    .filter(|a| {
                        a.secondary
                            && a.prefix_len == victim.prefix_len
                            && v4(&a.peer.unwrap_or(a.local)) & mask == subnet
                    })
                    .cloned(),
            );
        }
        // Routes of the departing addresses, computed while they are still
        // listed, and as on an up link: fib_del_ifaddr deletes them by
        // fib_magic whatever the link's state, and a host-scope one made
        // while the link was up outlived its going down (lo's `local
        // 127.0.0.0/8`; kernel-checked 6.18: `addr del 127.0.0.1 dev lo`
        // on a down lo with another address deletes it).
        let routes: Vec<Route> = gone
            .iter()
            .flat_map(|a| self.ifaddr_routes_v4_as(index, a, true))
            .collect();
        let list = self.addrs_v4.get_mut(&index).expect("found above");
        list.retain(|a| {
            !gone
                .iter()
                .any(|g| g.local == a.local && g.prefix_len == a.prefix_len)
        });
        for a in &gone {
            self.local_addrs.removed(&a.local);
        }
        self.drop_unowned_kernel_routes(&routes);
        for a in &gone {
            if !self.is_local_address(&a.local) {
                // fib_sync_down_addr: routes preferring a vanished source die.
                self.flush_routes_with_prefsrc(&a.local);
            }
        }
        if self.addrs_v4.get(&index).is_none_or(|l| l.is_empty()) {
            // fib_inetaddr_event (NETDEV_DOWN): the last address gone,
            // fib_disable_ip(dev, NETDEV_DOWN, force) kills every IPv4
            // path through the link, whatever its scope, and arp_ifdown
            // empties its ARP table; the link itself stays up.
            self.flush_v4_routes_of_dev_forced(index);
            crate::fib::retain_ord(&mut self.neighbours, |_, n| {
                n.link != index || !n.addr.is_ipv4()
            });
        }
        Ok(())
    }

    /// Removes each of `routes` unless an address still present makes it.
    fn drop_unowned_kernel_routes(&mut self, routes: &[Route]) {
        let mut still_made: Vec<Route> = Vec::new();
        let all: Vec<(LinkIndex, Address)> = self
            .addrs_v4
            .iter()
            .flat_map(|(i, v)| v.iter().map(move |a| (*i, a.clone())))
            .collect();
        for (i, a) in &all {
            still_made.extend(self.ifaddr_routes_v4(*i, a));
        }
        for r in routes {
            if !still_made
                .iter()
                .any(|m| crate::write::route_ops::same_route(m, r))
            {
                self.remove_exact_route(r);
            }
        }
    }

    /// Adds an IPv6 address in the kernel's list order and its routes.
    pub(crate) fn addr_insert_v6(
        &mut self,
        index: LinkIndex,
        addr: Address,
    ) -> Result<(), KernelError> {
        let list = self.addrs_v6.entry(index).or_default();
        let rank = v6_scope_rank(addr.scope);
        let at = list
            .iter()
            .position(|a| rank >= v6_scope_rank(a.scope))
            .unwrap_or(list.len());
        list.insert(at, addr.clone());
        self.local_addrs.added(&addr.local);
        for r in self.addr_routes_v6(index, &addr) {
            self.add_kernel_route(r);
        }
        Ok(())
    }

    /// `inet6_addr_modify` (a replace of an address the link has): the
    /// length and the local address stay, the metric changes when one
    /// other than 0 is given and `noprefixroute` is as now asked, and the
    /// prefix route follows (`modify_prefix_route`: made, given the new
    /// metric, or deleted). Kernel-checked: `replace 2001:db8:1::1/128
    /// priority 10` of a /64 leaves the /64 route with metric 10.
    ///
    /// A peer given (one other than the address' own) becomes the
    /// address' peer, and its prefix at the address' length is routed
    /// (the modify's `addrconf_prefix_route(&ifp->peer_addr,
    /// ifp->prefix_len, ...)`, where an add routes the peer's /128): the
    /// old peer's prefix route is deleted first (`cleanup_prefix_route`
    /// with `del_peer`). Host routes to a peer are left as they are
    /// (`ipv6_ifa_notify(0, ifp)` makes none). Kernel-checked: `replace
    /// 2001:db8:1::1/64 peer 2001:db8:5::9` of a held address adds
    /// 2001:db8:5::/64 and no 2001:db8:5::9/128; a replace without a
    /// peer keeps the one the address has.
    fn addr_modify_v6(&mut self, index: LinkIndex, asked: Address, metric: Option<u32>) {
        let Some(list) = self.addrs_v6.get_mut(&index) else {
            return;
        };
        let Some(held) = list.iter_mut().find(|a| a.local == asked.local) else {
            return;
        };
        let old = held.clone();
        if let Some(metric) = metric.filter(|m| *m != 0) {
            held.metric = metric;
        }
        held.noprefixroute = asked.noprefixroute;
        let peer_changed = asked.peer.is_some() && asked.peer != old.peer;
        if peer_changed {
            held.peer = asked.peer;
        }
        let new = held.clone();
        let without_peer = |a: &Address| Address {
            peer: None,
            ..a.clone()
        };
        let before = self.addr_routes_v6(index, &without_peer(&old));
        let after = self.addr_routes_v6(index, &without_peer(&new));
        for r in before.iter().filter(|r| !after.contains(r)) {
            self.remove_exact_route(r);
        }
        for r in after.iter().filter(|r| !before.contains(r)) {
            self.add_kernel_route(r.clone());
        }
        // "prefix route could have been deleted; if so restore it": a
        // prefix route the address should have and no gateway-less route
        // by the link to its prefix (`modify_prefix_route` found none) is
        // made again; a deleted local route is not (`ipv6_ifa_notify(0,
        // ..)` adds none). Kernel-checked: `route del 2001:db8:1::/64`,
        // then `addr replace 2001:db8:1::1 dev fd0` of the held /64 routes
        // the /64 again, with the address' metric, linkdown without carrier.
        let prefix = Prefix::containing(new.local, new.prefix_len);
        if let Some(route) = after
            .into_iter()
            .find(|r| r.table == TABLE_MAIN && r.dst == prefix && r.kind == RouteType::Unicast)
        {
            if self.peer_prefix_route(index, &prefix).is_none() {
                self.add_kernel_route(route);
            }
        }
        if !self.links[&index].up {
            return;
        }
        let routed_peer = |a: &Address| a.peer.filter(|peer| !peer.is_unspecified());
        if let (true, Some(old_peer)) = (peer_changed, routed_peer(&old)) {
            let old_route = Prefix::containing(old_peer, old.prefix_len);
            if let Some(route) = self.peer_prefix_route(index, &old_route) {
                self.remove_exact_route(&route);
            }
        }
        if new.noprefixroute {
            return;
        }
        if let Some(peer) = routed_peer(&new) {
            // modify_prefix_route(.., true): the route found is given the
            // new metric; none found (or none before: `had_prefixroute`
            // false) is made.
            let dst = Prefix::containing(peer, new.prefix_len);
            let held_route = self.peer_prefix_route(index, &dst);
            if held_route.as_ref().is_some_and(|r| r.metric == new.metric) {
                return;
            }
            if let Some(route) = held_route {
                self.remove_exact_route(&route);
            }
            self.add_kernel_route(kernel_route(
                TABLE_MAIN,
                RouteType::Unicast,
                dst,
                index,
                None,
                new.metric,
            ));
        }
    }

    /// `addrconf_get_prefix_route`: the gateway-less route to `dst` by the
    /// link in table main, whatever its metric.
    fn peer_prefix_route(&self, index: LinkIndex, dst: &Prefix) -> Option<Route> {
        self.tables
            .get(&TABLE_MAIN)?
            .get(dst)?
            .routes
            .iter()
            .find(|r| {
                r.nexthops.len() == 1
                    && r.nexthops[0].dev == Some(index)
                    && r.nexthops[0].gateway.is_none()
            })
            .cloned()
    }

    /// The routes addrconf makes for an IPv6 address in the link's current state.
    fn addr_routes_v6(&self, index: LinkIndex, addr: &Address) -> Vec<Route> {
        let link = &self.links[&index];
        let mut out = vec![kernel_route(
            TABLE_LOCAL,
            RouteType::Local,
            Prefix::host(addr.local),
            index,
            None,
            0,
        )];
        let is_loopback = matches!(link.kind, LinkKind::Loopback);
        // init_loopback gives lo its ::1 without a prefix route; an address
        // added by request gets one on any link, lo too (inet6_addr_add ->
        // addrconf_prefix_route), kernel-checked.
        let own_loopback = is_loopback && addr.local == IpAddr::V6(std::net::Ipv6Addr::LOCALHOST);
        if link.up && !own_loopback {
            if !addr.noprefixroute {
                // Of the local address, whatever the peer.
                out.push(kernel_route(
                    TABLE_MAIN,
                    RouteType::Unicast,
                    Prefix::containing(addr.local, addr.prefix_len),
                    index,
                    None,
                    addr.metric,
                ));
            }
            if let Some(peer) = addr.peer.filter(|peer| !peer.is_unspecified()) {
                // __ipv6_ifa_notify: a host route to the peer, whatever the
                // length given with it (kernel-checked: `peer P/64` routes P/128),
                // unless the peer is `::` (`ipv6_addr_any`).
                out.push(kernel_route(
                    TABLE_MAIN,
                    RouteType::Unicast,
                    Prefix::host(peer),
                    index,
                    None,
                    addr.metric,
                ));
            }
        }
        // addrconf_join_anycast: with forwarding on (the model's setting) the
        // subnet-router anycast address of each address once DAD is done,
        // which on ifb (NOARP) is at once, even while the link is down; on
        // lo too (kernel-checked).
        let subnet_router = Prefix::containing(addr.local, addr.prefix_len).addr();
        if addr.prefix_len < 127 && !subnet_router.is_unspecified() {
            out.push(kernel_route(
                TABLE_LOCAL,
                RouteType::Anycast,
                Prefix::host(subnet_router),
                index,
                None,
                0,
            ));
        }
        out
    }

    /// `addrconf_add_dev` of an IPv6 address add: `addrconf_add_mroute`
    /// routes `ff00::/8` on any link but a loopback one, which the route's
    /// `fib6_nh_init` refuses (ENETDOWN, ignored) on a link that is down.
    /// So an up link without carrier, which has no IPv6 configuration yet
    /// (see `ipv6_link_ready`), gets its multicast route (linkdown) from
    /// its first address. Kernel-checked (6.18): `link add fdv0 up type
    /// veth peer name fdv1` then `addr add 2001:db8::9/48 dev fdv0` routes
    /// `multicast ff00::/8 dev fdv0 table local ... linkdown`; on a down
    /// link nothing.
    fn add_dev_multicast_route_v6(&mut self, index: LinkIndex) {
        let Some(link) = self.links.get(&index) else {
            return;
        };
        if link.up && !matches!(link.kind, LinkKind::Loopback) {
            self.add_multicast_route_v6(index);
        }
    }

    /// `ff00::/8` in table local for a link that came up.
    pub(crate) fn add_multicast_route_v6(&mut self, index: LinkIndex) {
        let dst = Prefix::new("ff00::".parse().expect("literal"), 8).expect("literal");
        self.add_kernel_route(kernel_route(
            TABLE_LOCAL,
            RouteType::Multicast,
            dst,
            index,
            None,
            256,
        ));
    }

    pub(crate) fn remove_addr_routes_v6(&mut self, index: LinkIndex, addr: &Address) {
        // Without the address listed, compute what it made as if it were there.
        let routes = self.addr_routes_v6(index, addr);
        for r in routes {
            let still = self.addrs_v6.iter().any(|(i, v)| {
                v.iter().any(|a| {
                    self.addr_routes_v6(*i, a)
                        .iter()
                        .any(|m| crate::write::route_ops::same_route(m, &r))
                })
            });
            if !still {
                self.remove_exact_route(&r);
            }
        }
    }

    /// Re-adds the prefix routes of a link's IPv6 addresses (link came up).
    ///
    /// Not the host routes to their peers: `__ipv6_ifa_notify` adds those
    /// when DAD completes (`RTM_NEWADDR`), and with DAD off (the model's
    /// namespace: `accept_dad` 0) or on a NOARP link that is at the add,
    /// while the link was down, so the route was not made; coming up,
    /// `fixup_permanent_addr` restores only the address' own prefix route.
    /// Kernel-checked (6.18): `addr add 2001:db8:9::9 peer 2001:db8:1::5
    /// dev fd2` on a down ifb or veth, then `link set fd2 up`, routes
    /// 2001:db8:9::9 and not 2001:db8:1::5.
    pub(crate) fn add_addr_routes_v6_of(&mut self, index: LinkIndex) {
        let v6: Vec<Address> = self.addrs_v6.get(&index).cloned().unwrap_or_default();
        for a in &v6 {
            let without_peer = Address {
                peer: None,
                ..a.clone()
            };
            for r in self.addr_routes_v6(index, &without_peer) {
                self.add_kernel_route(r);
            }
        }
    }

    fn addr_del_v6(&mut self, index: LinkIndex, spec: &AddressSpec) -> Result<(), KernelError> {
        if !self.has_inet6_dev(index) {
            // inet6_addr_del: no inet6_dev (an MTU under 1280 took it).
            return Err(KernelError::with_extack(
                Errno::NxIo,
                "ipv6: IPv6 is disabled on this device",
            ));
        }
        let list = self.addrs_v6.get(&index).cloned().unwrap_or_default();
        let Some(pos) = list
            .iter()
            .position(|a| a.local == spec.local && a.prefix_len == spec.prefix_len)
        else {
            // inet6_addr_del: NL_SET_ERR_MSG_MOD(extack, "address not found").
            return Err(KernelError::with_extack(
                Errno::AddrNotAvail,
                "ipv6: address not found",
            ));
        };
        let victim = list[pos].clone();
        self.addrs_v6
            .get_mut(&index)
            .expect("found above")
            .remove(pos);
        self.local_addrs.removed(&victim.local);
        self.remove_addr_routes_v6(index, &victim);
        Ok(())
    }

    /// Drops every address of a link (unregister), with their routes.
    pub(crate) fn remove_addresses_of(&mut self, index: LinkIndex) {
        let v4 = self.addrs_v4.remove(&index).unwrap_or_default();
        let v6 = self.addrs_v6.remove(&index).unwrap_or_default();
        for a in v4.iter().chain(v6.iter()) {
            self.local_addrs.removed(&a.local);
        }
        for a in v4.iter().chain(v6.iter()) {
            if !self.is_local_address(&a.local) {
                self.flush_routes_with_prefsrc(&a.local);
            }
        }
    }

    /// True when an address is configured on any link.
    pub(crate) fn is_local_address(&self, addr: &IpAddr) -> bool {
        self.local_addrs.contains(addr)
    }

    /// The IPv4 addresses of a link in list order.
    pub(crate) fn addrs_of_v4(&self, index: LinkIndex) -> &[Address] {
        self.addrs_v4.get(&index).map_or(&[], |v| v.as_slice())
    }

    /// The IPv6 addresses of a link in list order.
    pub fn addrs_of_v6(&self, index: LinkIndex) -> &[Address] {
        self.addrs_v6.get(&index).map_or(&[], |v| v.as_slice())
    }
}
