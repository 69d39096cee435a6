//! The data-path lookup: a batch of IPv4 (or IPv6) flow keys resolved to
//! (type, device, gateway, table) with no allocation, the same semantics as
//! `ip route get` (rules, backtracking, throw, reject types, multipath),
//! and the kernel's merged local+main fast path while no rule exists.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::error::Errno;
use crate::fib::Fib;
use crate::read::lookup::{FibResult, Flow, Found6, LOOPBACK_IFINDEX};
use crate::read::route_get::kind_by_dst_v4;
use crate::table::SinglePath;
use crate::types::*;

/// One IPv4 flow to route, as a forwarding plane has it: addresses in host
/// order, 0 for "unset".
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct FlowKeyV4 {
    /// Destination address.
    pub dst: u32,
    /// Source address (0: unspecified).
    pub src: u32,
    /// Required output interface (0: any).
    pub oif: LinkIndex,
    /// Firewall mark.
    pub mark: u32,
    /// L4 source port.
    pub sport: u16,
    /// L4 destination port.
    pub dport: u16,
    /// TOS byte.
    pub tos: u8,
    /// L4 protocol.
    pub proto: u8,
    /// Padding to a multiple of 4 bytes; keep zero.
    pub _pad: [u8; 2],
}

const _: () = assert!(
    std::mem::size_of::<FlowKeyV4>() == 24 && std::mem::align_of::<FlowKeyV4>() == 4,
    "FlowKeyV4 is a public 24-byte record (a burst of 96 keys is 36 lines); \
     if this fires, use the padding for the new field or widen `_pad` to keep a multiple of 4"
);

/// Where a flow goes.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Forward {
    /// Gateway in host order; 0 when the destination is on link.
    pub gateway: u32,
    /// Output device (1, `lo`, for local delivery).
    pub dev: LinkIndex,
    /// Table of the matched route.
    pub table: TableId,
    /// Route type: unicast, local, broadcast, multicast, anycast.
    pub kind: RouteType,
    /// The matched route's [`Route::cache_class`](crate::Route::cache_class)
    /// ([`CACHE_CLASS_PLAIN`] without a route).
    pub cache_class: u16,
}

const _: () = assert!(
    std::mem::size_of::<Forward>() <= 16,
    "an IPv4 answer fits 16 bytes, four to a cache line of the caller's answer array; \
     if this fires, narrow the new field or return it beside the answer"
);

impl Forward {
    /// The gateway as an address, if any.
    pub fn gateway_addr(&self) -> Option<Ipv4Addr> {
        (self.gateway != 0).then(|| Ipv4Addr::from(self.gateway))
    }
}

impl Fib {
    /// Resolves each key of `keys` into the same position of `out`: where
    /// the flow goes, or the errno the kernel would answer (blackhole:
    /// `Inval`, unreachable: `HostUnreach`, prohibit: `Acces`, nothing:
    /// `NetUnreach`). Allocates nothing.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let mut fib = Fib::new();
    /// fib.apply(&Command::LinkAdd { name: "d0".into(), kind: LinkKind::Ifb, mtu: None }).unwrap();
    /// fib.apply(&Command::LinkSet { name: "d0".into(), up: Some(true), mtu: None }).unwrap();
    /// fib.apply(&Command::Addr { op: AddrOp::Add, spec: AddressSpec {
    ///     dev: "d0".into(), local: "10.0.0.1".parse().unwrap(), prefix_len: 24, peer: None,
    ///     broadcast: None, scope: None, noprefixroute: false, metric: None, label: None, mngtmpaddr: false } }).unwrap();
    /// let keys = [
    ///     FlowKeyV4 { dst: u32::from_be_bytes([10, 0, 0, 9]), ..Default::default() },
    ///     FlowKeyV4 { dst: u32::from_be_bytes([192, 0, 2, 1]), ..Default::default() },
    /// ];
    /// let mut out = [Err(Errno::Inval); 2];
    /// fib.lookup_output_batch_v4(&keys, &mut out);
    /// assert_eq!(out[0].unwrap().dev, 2);
    /// assert_eq!(out[1], Err(Errno::NetUnreach));
    /// ```
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn lookup_output_batch_v4(&self, keys: &[FlowKeyV4], out: &mut [Result<Forward, Errno>]) {
        assert_eq!(
            keys.len(),
            out.len(),
            "lookup_output_batch_v4: slices differ in length"
        );
        for (key, slot) in keys.iter().zip(out.iter_mut()) {
            *slot = self.lookup_output_v4(key);
        }
    }

    /// One key of [`Fib::lookup_output_batch_v4`]: `ip route get`'s
    /// output path, except that a source address only feeds rules and the
    /// multipath hash (it is not checked to be one of ours).
    pub fn lookup_output_v4(&self, key: &FlowKeyV4) -> Result<Forward, Errno> {
        match self.output_flow_v4(key) {
            Ok(flow) => self.output_answer_v4(key, &flow, self.fib_lookup(&flow)),
            Err(answer) => answer,
        }
    }

    /// What [`Fib::lookup_output_v4`] asks `fib_lookup` for `key`, or
    /// (`Err`) its answer where it needs no lookup. Shared with the burst.
    #[inline(always)]
    pub(crate) fn output_flow_v4(&self, key: &FlowKeyV4) -> Result<Flow, Result<Forward, Errno>> {
        if key.dst == 0 {
            // A lookup for 0.0.0.0 is local delivery on lo.
            return Err(Ok(Forward {
                gateway: 0,
                dev: LOOPBACK_IFINDEX,
                table: TABLE_UNSPEC,
                kind: RouteType::Local,
                cache_class: CACHE_CLASS_PLAIN,
            }));
        }
        let dst = IpAddr::V4(Ipv4Addr::from(key.dst));
        let flow = Flow {
            src: (key.src != 0).then(|| IpAddr::V4(Ipv4Addr::from(key.src))),
            oif: key.oif,
            mark: key.mark,
            tos: key.tos & 0x1c,
            proto: key.proto,
            sport: key.sport,
            dport: key.dport,
            ..Flow::output(dst)
        };
        if key.oif != 0 && !self.links.get(&key.oif).is_some_and(|l| l.up) {
            return Err(Err(Errno::NetUnreach));
        }
        Ok(flow)
    }

    /// [`Fib::lookup_output_v4`]'s answer for `key` once `fib_lookup` of
    /// its `flow` answered `res`. Shared with the burst.
    #[inline(always)]
    pub(crate) fn output_answer_v4<'a>(
        &'a self,
        key: &FlowKeyV4,
        flow: &Flow,
        res: Result<FibResult<'a>, Errno>,
    ) -> Result<Forward, Errno> {
        let by_dst = kind_by_dst_v4(&Ipv4Addr::from(key.dst));
        let res = match res {
            Ok(res) => res,
            // With an oif and no route the kernel assumes the destination on link.
            Err(_) if key.oif != 0 => {
                return Ok(Forward {
                    gateway: 0,
                    dev: key.oif,
                    table: TABLE_UNSPEC,
                    kind: by_dst.unwrap_or(RouteType::Unicast),
                    cache_class: CACHE_CLASS_PLAIN,
                })
            }
            Err(e) => return Err(e),
        };
        if let Some(s) = res.single {
            if let Some(fwd) = self.single_path_answer_v4(s, res.table, by_dst) {
                return Ok(fwd);
            }
        }
        if res.kind == RouteType::Local {
            return Ok(Forward {
                gateway: 0,
                dev: LOOPBACK_IFINDEX,
                table: res.table,
                kind: by_dst.unwrap_or(RouteType::Local),
                cache_class: res.route.cache_class,
            });
        }
        let nh = self.choose_path(&res, flow).ok_or(Errno::NetUnreach)?;
        let kind = by_dst.unwrap_or(res.kind);
        let on_link = kind == RouteType::Broadcast
            || (kind == RouteType::Multicast && res.route.dst.len() < 4);
        let gateway = match self.used_gateway_v4(res.route, nh) {
            Some(IpAddr::V4(g)) if !on_link => u32::from(g),
            _ => 0,
        };
        Ok(Forward {
            gateway,
            dev: nh.dev.ok_or(Errno::NetUnreach)?,
            table: res.table,
            kind,
            cache_class: res.route.cache_class,
        })
    }

    /// What the code after it in [`Fib::lookup_output_v4`] answers for a
    /// route that is its entry's only one with one live path (no hashing:
    /// that path), from the copy in the table's entry instead of the route;
    /// None where that needs the route itself: a multicast answer (on link
    /// for a route shorter than /4) and a gateway while some resolved to
    /// our own address (`used_gateway_v4`).
    #[inline(always)]
    fn single_path_answer_v4(
        &self,
        s: &SinglePath,
        table: TableId,
        by_dst: Option<RouteType>,
    ) -> Option<Forward> {
        if s.kind == RouteType::Local {
            return Some(Forward {
                gateway: 0,
                dev: LOOPBACK_IFINDEX,
                table,
                kind: by_dst.unwrap_or(RouteType::Local),
                cache_class: s.cache_class,
            });
        }
        let kind = by_dst.unwrap_or(s.kind);
        let gateway = match kind {
            RouteType::Multicast => return None,
            RouteType::Broadcast => 0,
            _ => match s.gateway_v4() {
                0 => 0,
                g if self.host_scope_gateways.is_empty() => g,
                _ => return None,
            },
        };
        Some(Forward {
            gateway,
            dev: s.dev(),
            table,
            kind,
            cache_class: s.cache_class,
        })
    }

    /// The IPv6 counterpart of [`Fib::lookup_output_batch_v4`]: each key
    /// into the same position of `out`, allocating nothing.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let mut fib = Fib::new();
    /// fib.apply(&Command::LinkAdd { name: "d0".into(), kind: LinkKind::Ifb, mtu: None }).unwrap();
    /// fib.apply(&Command::LinkSet { name: "d0".into(), up: Some(true), mtu: None }).unwrap();
    /// fib.apply(&Command::Addr { op: AddrOp::Add, spec: AddressSpec {
    ///     dev: "d0".into(), local: "2001:db8::1".parse().unwrap(), prefix_len: 64, peer: None,
    ///     broadcast: None, scope: None, noprefixroute: false, metric: None, label: None, mngtmpaddr: false } }).unwrap();
    /// let on_link: std::net::Ipv6Addr = "2001:db8::9".parse().unwrap();
    /// let keys = [FlowKeyV6 { dst: u128::from(on_link), ..Default::default() }];
    /// let mut out = [Err(Errno::Inval)];
    /// fib.lookup_output_batch_v6(&keys, &mut out);
    /// assert_eq!(out[0].unwrap().dev, 2);
    /// ```
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn lookup_output_batch_v6(&self, keys: &[FlowKeyV6], out: &mut [Result<Forward6, Errno>]) {
        assert_eq!(
            keys.len(),
            out.len(),
            "lookup_output_batch_v6: slices differ in length"
        );
        for (key, slot) in keys.iter().zip(out.iter_mut()) {
            *slot = self.lookup_output_v6(key);
        }
    }

    /// One key of [`Fib::lookup_output_batch_v6`]: `ip -6 route get`'s
    /// output path without the source address choice.
    pub fn lookup_output_v6(&self, key: &FlowKeyV6) -> Result<Forward6, Errno> {
        let flow = output_flow_v6(key);
        self.answer_v6(&flow, self.fib_lookup_v6_data(&flow))
    }

    /// The answer of [`Fib::lookup_output_v6`] and of the IPv6 input
    /// lookup once the data path's lookup of `flow` answered `found`: the
    /// kernel answers both the same way (`ip6_pol_route` serves output and
    /// input). Shared with the burst; always inlined, so that each caller
    /// gets its own copy of the code (an out-of-line helper measured 5-7%
    /// slower per key on both IPv6 batch paths).
    #[inline(always)]
    pub(crate) fn answer_v6<'a>(
        &'a self,
        flow: &Flow,
        found: Result<Found6<'a>, Errno>,
    ) -> Result<Forward6, Errno> {
        let res = match found? {
            Found6::Single { single, table, .. } => return Ok(single_path_answer(single, table)),
            Found6::Full(res) => res,
        };
        if let Some(s) = res.single {
            return Ok(single_path_answer(s, res.table));
        }
        let on_lo = res.kind == RouteType::Local
            || (res.kind == RouteType::Anycast && res.route.protocol == Protocol::KERNEL);
        if on_lo {
            return Ok(Forward6 {
                gateway: 0,
                dev: LOOPBACK_IFINDEX,
                table: res.table,
                kind: res.kind,
                cache_class: res.route.cache_class,
            });
        }
        let nh = self.choose_path(&res, flow).ok_or(Errno::NetUnreach)?;
        let gateway = match nh.gateway {
            Some(IpAddr::V6(g)) => u128::from(g),
            _ => 0,
        };
        Ok(Forward6 {
            gateway,
            dev: nh.dev.ok_or(Errno::NetUnreach)?,
            table: res.table,
            kind: res.kind,
            cache_class: res.route.cache_class,
        })
    }
}

/// What [`Fib::lookup_output_v6`] asks the data path's lookup for `key`.
/// Shared with the burst.
#[inline(always)]
pub(crate) fn output_flow_v6(key: &FlowKeyV6) -> Flow {
    Flow {
        src: (key.src != 0).then(|| IpAddr::V6(Ipv6Addr::from(key.src))),
        oif: key.oif,
        mark: key.mark,
        // The DSCP, as route_get's lookup sees it.
        tos: key.tos & 0xfc,
        proto: key.proto,
        sport: key.sport,
        dport: key.dport,
        ..Flow::output(IpAddr::V6(Ipv6Addr::from(key.dst)))
    }
    .with_v6_output_dev()
}

/// What both IPv6 data paths answer for a route that is its entry's only
/// one and has one live path (no hashing: that path), from the copy in the
/// table's entry instead of the route. Always inlined, so that sharing it
/// costs nothing (the general tail below is written out twice: a shared
/// helper measured slower there).
#[inline(always)]
pub(crate) fn single_path_answer(s: &SinglePath, table: TableId) -> Forward6 {
    let on_lo = s.kind == RouteType::Local
        || (s.kind == RouteType::Anycast && s.protocol == Protocol::KERNEL);
    let (gateway, dev) = if on_lo {
        (0, LOOPBACK_IFINDEX)
    } else {
        (s.gateway_v6(), s.dev())
    };
    Forward6 {
        gateway,
        dev,
        table,
        kind: s.kind,
        cache_class: s.cache_class,
    }
}

/// One IPv6 flow to route: addresses as host-order integers, 0 for unset.
// Kept apart from FlowKeyV4 (not one generic key): each is a fixed public record (24 B/align 4, 48 B/align 16).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct FlowKeyV6 {
    /// Destination address.
    pub dst: u128,
    /// Source address (0: unspecified).
    pub src: u128,
    /// Required output interface (0: any).
    pub oif: LinkIndex,
    /// Firewall mark.
    pub mark: u32,
    /// L4 source port.
    pub sport: u16,
    /// L4 destination port.
    pub dport: u16,
    /// Traffic class.
    pub tos: u8,
    /// L4 protocol.
    pub proto: u8,
    /// Padding; keep zero.
    pub _pad: [u8; 2],
}

const _: () = assert!(
    std::mem::size_of::<FlowKeyV6>() == 48 && std::mem::align_of::<FlowKeyV6>() == 16,
    "FlowKeyV6 is a public 48-byte record aligned for its u128 addresses; \
     if this fires, use the padding for the new field or widen `_pad` to keep a multiple of 16"
);

/// Where an IPv6 flow goes.
// Kept apart from Forward, as the keys are: a fixed public record per family (u32 vs u128 gateway).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Forward6 {
    /// Gateway as a host-order integer; 0 when the destination is on link.
    pub gateway: u128,
    /// Output device (1, `lo`, for local delivery).
    pub dev: LinkIndex,
    /// Table of the matched route.
    pub table: TableId,
    /// Route type.
    pub kind: RouteType,
    /// The matched route's [`Route::cache_class`](crate::Route::cache_class).
    pub cache_class: u16,
}

const _: () = assert!(
    std::mem::size_of::<Forward6>() <= 32,
    "an IPv6 answer fits 32 bytes, two to a cache line of the caller's answer array; \
     if this fires, narrow the new field or return it beside the answer"
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_str;

    /// A FIB from an `ip -batch` configuration.
    fn fib_of(text: &str) -> Fib {
        let parsed = parse_str("t.conf", text);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let mut fib = Fib::new();
        for s in &parsed.statements {
            fib.apply(&s.command)
                .unwrap_or_else(|e| panic!("line {}: {e:?}", s.line));
        }
        fib
    }

    #[test]
    fn the_ipv4_summary_answers_what_the_routes_answer() {
        let fast = fib_of(
            "link add d0 type ifb\nlink set d0 up\nlink add d1 type ifb\nlink set d1 up\n\
             link set lo up\n\
             addr add 10.0.0.1/24 dev d0\naddr add 10.2.0.1/24 dev d1\n\
             route add 192.0.2.0/24 via 10.0.0.9\n\
             route add 198.51.100.0/24 via 10.2.0.9 dev d1\n\
             route add 198.51.100.128/25 dev d1 scope link\n\
             route add 203.0.113.0/24 via 10.0.0.1\n\
             route add 203.0.113.64/26 tos 0x10 via 10.2.0.9\n\
             route add blackhole 100.64.0.0/10\n\
             route add unreachable 100.64.1.0/24\n\
             route add throw 100.64.2.0/24\n\
             route add default via 10.2.0.9\n\
             route add 0.0.0.0/2 via 10.0.0.9 dev d0\n\
             route add 239.0.0.0/8 via 10.0.0.9\n",
        );
        // The same FIB with every summary cleared: the routes' own path.
        let mut slow = fast.clone();
        for t in slow.tables.values_mut() {
            t.v4.entries_mut().for_each(drop);
        }
        // Every entry has its summary once `apply` returns, the one of the
        // route added last too.
        let main = &fast.tables[&TABLE_MAIN].v4;
        for p in ["192.0.2.0/24", "239.0.0.0/8"] {
            let (a, l) = p.split_once('/').unwrap();
            let p = Prefix::new(a.parse().unwrap(), l.parse().unwrap()).unwrap();
            assert!(main.get(&p).unwrap().single().is_some(), "{p:?}");
            let slow_main = &slow.tables[&TABLE_MAIN].v4;
            assert!(slow_main.get(&p).unwrap().single().is_none());
        }
        // A gateway that is our own address is then no gateway.
        assert!(!fast.host_scope_gateways.is_empty());
        let dsts = [
            "192.0.2.7",
            "198.51.100.5",
            "198.51.100.200",
            "203.0.113.5",
            "203.0.113.70",
            "100.64.0.1",
            "100.64.1.1",
            "100.64.2.1",
            "10.0.0.1",
            "10.0.0.255",
            "10.0.0.7",
            "10.2.0.7",
            "255.255.255.255",
            "224.0.0.5",
            "239.1.2.3",
            "8.8.8.8",
            "127.0.0.1",
        ];
        for d in dsts {
            let dst = u32::from(d.parse::<Ipv4Addr>().unwrap());
            for oif in [0, 1, 2, 3] {
                for tos in [0, 0x10] {
                    let key = FlowKeyV4 {
                        dst,
                        oif,
                        tos,
                        ..Default::default()
                    };
                    assert_eq!(
                        fast.lookup_output_v4(&key),
                        slow.lookup_output_v4(&key),
                        "{d} oif {oif} tos {tos:#x}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_ipv6_side_array_answers_what_the_routes_answer() {
        let fast = fib_of(
            "link add d0 type ifb\nlink set d0 up\nlink add d1 type ifb\nlink set d1 up\n\
             link set lo up\n\
             addr add 2001:db8::1/64 dev d0\naddr add 2001:db8:2::1/64 dev d1\n\
             route add 2001:db8:10::/48 via 2001:db8::9\n\
             route add 2001:db8:11::/48 via fe80::9 dev d1\n\
             route add 2001:db8:11:1::/64 via 2001:db8::9\n\
             route add 2001:db8:11:1::/64 via 2001:db8:2::9 metric 5\n\
             route add blackhole 2001:db8:20::/48\n\
             route add unreachable 2001:db8:21::/48\n\
             route add throw 2001:db8:22::/48\n\
             route add anycast 2001:db8:23:: dev d0 proto kernel\n\
             route add default via 2001:db8:2::9\n\
             route add 2001:db8:30::/48 via 2001:db8::9 table 100\n\
             route add 2001:db8:30:1::/64 via 2001:db8:2::9 table 100\n\
             route add throw 2001:db8:31::/48 table 100\n\
             -6 rule add to 2001:db8:30::/44 lookup 100 suppress_prefixlength 48 priority 10\n\
             rule add iif lo lookup 100 priority 20\n",
        );
        // The same FIB with every summary cleared: the routes' own path.
        let mut slow = fast.clone();
        for t in slow.tables.values_mut() {
            t.v6.entries_mut().for_each(drop);
        }
        let dsts = [
            "2001:db8:10::5",
            "2001:db8:11::5",
            "2001:db8:11:1::5",
            "2001:db8:20::1",
            "2001:db8:21::1",
            "2001:db8:22::1",
            "2001:db8:23::",
            "2001:db8:30::7",
            "2001:db8:30:1::7",
            "2001:db8:31::7",
            "2001:db8::1",
            "2001:db8::7",
            "fe80::1",
            "ff02::1",
            "::1",
            "2a00::1",
        ];
        for d in dsts {
            let dst = u128::from(d.parse::<Ipv6Addr>().unwrap());
            for oif in [0, 1, 2, 3] {
                for src in [0, 1] {
                    let key = FlowKeyV6 {
                        dst,
                        oif,
                        src,
                        ..Default::default()
                    };
                    assert_eq!(
                        fast.lookup_output_v6(&key),
                        slow.lookup_output_v6(&key),
                        "{d} oif {oif} src {src}"
                    );
                }
            }
            for iif in [1, 2, 3] {
                let keys = [FlowKeyV6 {
                    dst,
                    src: 0x2001_0db8_0002_u128 << 80 | 7,
                    ..Default::default()
                }];
                let (mut a, mut b) = ([Err(Errno::Inval)], [Err(Errno::Inval)]);
                fast.lookup_input_batch_v6(iif, &keys, &mut a);
                slow.lookup_input_batch_v6(iif, &keys, &mut b);
                assert_eq!(a, b, "{d} iif {iif}");
            }
        }
    }
}
