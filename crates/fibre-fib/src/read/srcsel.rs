//! Source address selection: `inet_select_addr` for IPv4 and a reduced
//! `ipv6_dev_get_saddr` (RFC 6724) for IPv6.

use std::net::{IpAddr, Ipv6Addr};

use crate::fib::Fib;
use crate::types::*;

/// RFC 4291 scope of an IPv6 address as the kernel ranks it
/// (`__ipv6_addr_src_scope`): 1 node-local, 2 link, 5 site, 14 global, and
/// -1 (`__IPV6_ADDR_SCOPE_INVALID`) for `::`, below every source's scope.
fn v6_scope(a: &Ipv6Addr) -> i32 {
    if a.is_unspecified() {
        -1
    } else if a.is_loopback() {
        1
    } else if a.is_multicast() {
        i32::from(a.octets()[1] & 0x0f)
    } else if (a.segments()[0] & 0xffc0) == 0xfe80 {
        2
    } else if (a.segments()[0] & 0xffc0) == 0xfec0 {
        5
    } else {
        14
    }
}

fn common_prefix_len(a: &Ipv6Addr, b: &Ipv6Addr) -> u8 {
    (u128::from(*a) ^ u128::from(*b)).leading_zeros() as u8
}

impl Fib {
    /// `__ip_dev_find`: the device an IPv4 address is configured on, else
    /// the device of the local route covering it.
    pub(crate) fn dev_of_local_v4(&self, addr: &IpAddr) -> Option<LinkIndex> {
        let configured = self
            .addrs_v4
            .iter()
            .find(|(_, v)| v.iter().any(|a| a.local == *addr))
            .map(|(i, _)| *i);
        configured.or_else(|| {
            let res = self
                .lookup_in_table(TABLE_LOCAL, &crate::read::lookup::Flow::output(*addr))
                .ok()?;
            (res.kind == RouteType::Local).then(|| res.nexthop().and_then(|n| n.dev))?
        })
    }

    /// `inet_select_addr(dev, dst, scope)`: a primary address of the device
    /// with a scope no narrower than `scope`, preferring one on `dst`'s
    /// subnet; else the first fitting address of any device.
    pub(crate) fn select_addr_v4(
        &self,
        dev: LinkIndex,
        dst: Option<IpAddr>,
        scope: Scope,
    ) -> Option<IpAddr> {
        let mut first = None;
        for a in self.addrs_of_v4(dev) {
            if a.secondary || a.scope.min(Scope::HOST) > scope {
                continue;
            }
            let on_subnet = dst.is_some_and(|d| {
                Prefix::containing(a.peer.unwrap_or(a.local), a.prefix_len).contains(&d)
            });
            if dst.is_none() || on_subnet {
                return Some(a.local);
            }
            first.get_or_insert(a.local);
        }
        if first.is_some() {
            return first;
        }
        // in_dev_select_addr over every device, lo first.
        self.links.keys().find_map(|index| {
            self.addrs_of_v4(*index)
                .iter()
                .find(|a| !a.secondary && a.scope != Scope::LINK && a.scope <= scope)
                .map(|a| a.local)
        })
    }

    /// The source address the FIB would pick for an IPv6 flow to `dst`
    /// leaving by `dev` (what `ip -6 route get` reports as `src` for a route
    /// without `prefsrc`), with the limits of [`Fib`]'s reduced RFC 6724.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let mut fib = Fib::new();
    /// for line in ["link add d0 type ifb", "link set d0 up",
    ///              "addr add 2001:db8:1::1/64 dev d0 nodad", "addr add 2001:db8:2::1/64 dev d0 nodad"] {
    ///     let words: Vec<String> = line.split(' ').map(String::from).collect();
    ///     for c in config::parse_words(&words).unwrap() { fib.apply(&c).unwrap(); }
    /// }
    /// let pick = |dst: &str| fib.select_source_v6(2, dst.parse().unwrap()).unwrap().to_string();
    /// assert_eq!(pick("2001:db8:2::7"), "2001:db8:2::1");
    /// assert_eq!(pick("2001:db8:1::7"), "2001:db8:1::1");
    /// ```
    pub fn select_source_v6(&self, dev: LinkIndex, dst: Ipv6Addr) -> Option<Ipv6Addr> {
        match self.select_addr_v6(Some(dev), &IpAddr::V6(dst)) {
            Some(IpAddr::V6(a)) => Some(a),
            _ => None,
        }
    }

    /// A reduced RFC 6724 source selection: same address, then scope fit,
    /// then the outgoing device, then the longest matching prefix (capped at
    /// the address' prefix length). Addresses of down links count: on ifb
    /// (NOARP) duplicate address detection completes at once, up or not.
    pub(crate) fn select_addr_v6(&self, dev: Option<LinkIndex>, dst: &IpAddr) -> Option<IpAddr> {
        let IpAddr::V6(d) = dst else {
            return None;
        };
        let dst_scope = v6_scope(d);
        let oif_only = dev.is_some() && (d.is_multicast() || dst_scope <= 2);
        let mut best: Option<((bool, i32, bool, u8), IpAddr)> = None;
        for (index, addrs) in &self.addrs_v6 {
            if oif_only && Some(*index) != dev {
                continue;
            }
            for a in addrs {
                let IpAddr::V6(c) = a.local else { continue };
                let s = v6_scope(&c);
                let scope_score = if s >= dst_scope { -s } else { s - 128 };
                let prefix = common_prefix_len(&c, d).min(a.prefix_len);
                let score = (c == *d, scope_score, Some(*index) == dev, prefix);
                if best.as_ref().is_none_or(|(b, _)| score > *b) {
                    best = Some((score, a.local));
                }
            }
        }
        best.map(|(_, a)| a)
    }
}
