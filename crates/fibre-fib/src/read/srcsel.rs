//! Source address selection: `inet_select_addr` for IPv4 and a reduced
//! `ipv6_dev_get_saddr` (RFC 6724) for IPv6.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

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

    /// `inet_select_addr(dev, dst, scope)` for IPv4: the source the kernel
    /// falls back on where a lookup finds no route, as
    /// `fib_compute_spec_dst` does for a record route or timestamp option
    /// whose sender has no route back (the input device's address), and
    /// `ip_rt_get_source` for a forwarded one (the output device's). A
    /// primary address of `dev` with a scope no narrower than `scope`,
    /// the first on `dst`'s subnet, else its first; else the first fitting
    /// address of any device (`in_dev_select_addr`). Reads the address
    /// lists in place: nothing allocates, so a worker may call it per
    /// packet.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let mut fib = Fib::new();
    /// for line in ["link add d0 type ifb", "link set d0 up",
    ///              "addr add 10.0.0.1/24 dev d0", "addr add 10.9.0.1/24 dev d0",
    ///              "link add d1 type ifb", "link set d1 up"] {
    ///     let words: Vec<String> = line.split(' ').map(String::from).collect();
    ///     for c in config::parse_words(&words).unwrap() { fib.apply(&c).unwrap(); }
    /// }
    /// let pick = |dev, dst: &str| fib.select_source_v4(dev, dst.parse().unwrap(), Scope::UNIVERSE);
    /// assert_eq!(pick(2, "10.9.0.7"), Some("10.9.0.1".parse().unwrap()));
    /// assert_eq!(pick(2, "203.0.113.9"), Some("10.0.0.1".parse().unwrap()));
    /// // d1 has none: another device's.
    /// assert_eq!(pick(3, "203.0.113.9"), Some("10.0.0.1".parse().unwrap()));
    /// ```
    pub fn select_source_v4(
        &self,
        dev: LinkIndex,
        dst: Ipv4Addr,
        scope: Scope,
    ) -> Option<Ipv4Addr> {
        match self.select_addr_v4(dev, Some(IpAddr::V4(dst)), scope) {
            Some(IpAddr::V4(a)) => Some(a),
            _ => None,
        }
    }

    /// `fib_compute_spec_dst` for a packet from `src` with TOS `tos` on
    /// device `dev` (`skb->dev`) whose route is not local (the caller
    /// answers the destination itself for a local one): the address a
    /// record route or timestamp option records for the router. The
    /// route back to `src` is looked up as the kernel does (input from
    /// `lo`, the packet's DSCP, no protocol, so a rule on `ipproto`
    /// does not match it) and gives its `prefsrc`, else its next hop's
    /// address (`fib_result_prefsrc`); where there is no route back, or
    /// `src` is 0.0.0.0 (not looked up; link scope),
    /// [`Fib::select_source_v4`] on `dev`. `None` where even that finds
    /// no address. Nothing allocates.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let mut fib = Fib::new();
    /// for line in ["link add d0 type ifb", "link set d0 up", "addr add 10.0.0.1/24 dev d0",
    ///              "link add d1 type ifb", "link set d1 up", "addr add 10.1.0.1/24 dev d1",
    ///              "route add 172.16.0.0/12 via 10.1.0.9",
    ///              "rule add not ipproto icmp prohibit pref 800"] {
    ///     let words: Vec<String> = line.split(' ').map(String::from).collect();
    ///     for c in config::parse_words(&words).unwrap() { fib.apply(&c).unwrap(); }
    /// }
    /// let src: std::net::Ipv4Addr = "172.16.0.5".parse().unwrap();
    /// // The ICMP route back leaves by d1; the protocol-less lookup is
    /// // prohibited, so the input device's address is recorded.
    /// assert_eq!(fib.output_source_v4(src, 0), Ok(Some("10.1.0.1".parse().unwrap())));
    /// assert_eq!(fib.spec_dst_v4(2, src, 0), Some("10.0.0.1".parse().unwrap()));
    /// ```
    pub fn spec_dst_v4(&self, dev: LinkIndex, src: Ipv4Addr, tos: u8) -> Option<Ipv4Addr> {
        // `ipv4_is_zeronet` is 0.0.0.0 alone since 0.0.0.0/8 became
        // unicast (Linux 5.3; kernel-checked by the forwarding oracle,
        // seed 41: from 0.235.73.1 the route back was looked up).
        let scope = if src.is_unspecified() {
            Scope::LINK
        } else {
            match self.route_from_v4(src, tos, 0) {
                Ok(route) => return route.source,
                Err(_) => Scope::UNIVERSE,
            }
        };
        self.select_source_v4(dev, src, scope)
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
