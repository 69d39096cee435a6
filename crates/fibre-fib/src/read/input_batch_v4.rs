//! The data-path input lookup for IPv4: what `ip route get DST from SRC
//! iif DEV` answers (`ip_route_input_slow`, forwarding on, rp_filter 0),
//! for a batch of received packets, allocating nothing. A router asks it
//! per packet: deliver locally, forward, or drop (and with which errno).

use std::net::{IpAddr, Ipv4Addr};

use crate::error::Errno;
use crate::fib::Fib;
use crate::read::batch::{FlowKeyV4, Forward};
use crate::read::lookup::{FibResult, Flow, LOOPBACK_IFINDEX};
use crate::read::route_get::SourceCheck;
use crate::types::*;

/// The unspecified address: `brd_input` validates a broadcast's source
/// against it instead of the destination.
const ZERO: IpAddr = IpAddr::V4(Ipv4Addr::UNSPECIFIED);

impl Fib {
    /// Resolves each packet of `keys`, all received on link `iif`, into the
    /// same position of `out`, as `ip route get DST from SRC iif DEV` does
    /// ([`Fib::route_get`] with `iif`): local delivery answers with `dev` 1
    /// (`lo`) and type `local`, a broadcast with `lo` and type `broadcast`,
    /// the all-hosts group (224.0.0.1) on an up link with `lo` and type
    /// `multicast`, forwarding with the output device and gateway. Any
    /// other multicast group, a martian source or
    /// destination (multicast, limited broadcast or loopback source, zero
    /// or loopback destination, a source that is one of our addresses)
    /// answers `Inval`, a miss `NetUnreach`, a reject route its errno
    /// (unreachable: `HostUnreach`, prohibit: `Acces`, blackhole: `Inval`).
    /// A key's `oif` is ignored (an input lookup has none); an `iif` that
    /// is no link answers `NoDev` for every key. Allocates nothing.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let mut fib = Fib::new();
    /// fib.apply(&Command::LinkAdd { name: "d0".into(), kind: LinkKind::Ifb, mtu: None }).unwrap();
    /// fib.apply(&Command::LinkSet { name: "d0".into(), up: Some(true), mtu: None }).unwrap();
    /// fib.apply(&Command::Addr { op: AddrOp::Add, spec: AddressSpec {
    ///     dev: "d0".into(), local: "10.0.0.1".parse().unwrap(), prefix_len: 24, peer: None,
    ///     broadcast: None, scope: None, noprefixroute: false, metric: None, label: None, mngtmpaddr: false } }).unwrap();
    /// let peer = u32::from_be_bytes([10, 0, 0, 9]);
    /// let keys = [
    ///     // To us: delivered locally, on lo.
    ///     FlowKeyV4 { dst: u32::from_be_bytes([10, 0, 0, 1]), src: peer, ..Default::default() },
    ///     // To a neighbour on d0: forwarded.
    ///     FlowKeyV4 { dst: u32::from_be_bytes([10, 0, 0, 7]), src: peer, ..Default::default() },
    ///     // Claiming to come from us: a martian.
    ///     FlowKeyV4 { dst: u32::from_be_bytes([10, 0, 0, 7]), src: u32::from_be_bytes([10, 0, 0, 1]), ..Default::default() },
    /// ];
    /// let mut out = [Err(Errno::Inval); 3];
    /// fib.lookup_input_batch_v4(2, &keys, &mut out);
    /// assert_eq!((out[0].unwrap().kind, out[0].unwrap().dev), (RouteType::Local, 1));
    /// assert_eq!((out[1].unwrap().kind, out[1].unwrap().dev), (RouteType::Unicast, 2));
    /// assert_eq!(out[2], Err(Errno::Inval));
    /// ```
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn lookup_input_batch_v4(
        &self,
        iif: LinkIndex,
        keys: &[FlowKeyV4],
        out: &mut [Result<Forward, Errno>],
    ) {
        self.input_batch(iif, keys, out, Fib::lookup_input_v4);
    }

    /// One key of [`Fib::lookup_input_batch_v4`], for a link `iif` known
    /// to exist: route_get's `input_v4` without the answer's text.
    fn lookup_input_v4(&self, iif: LinkIndex, key: &FlowKeyV4) -> Result<Forward, Errno> {
        match self.input_flow_v4(iif, key) {
            Ok(flow) => self.input_answer_v4(iif, key, &flow, self.fib_lookup(&flow)),
            Err(answer) => answer,
        }
    }

    /// What [`Fib::lookup_input_v4`] asks `fib_lookup` for `key` received
    /// on `iif`, or (`Err`) its answer where it needs no lookup (multicast,
    /// limited broadcast, martians). Shared with the burst.
    #[inline(always)]
    pub(crate) fn input_flow_v4(
        &self,
        iif: LinkIndex,
        key: &FlowKeyV4,
    ) -> Result<Flow, Result<Forward, Errno>> {
        let dst = Ipv4Addr::from(key.dst);
        let src = Ipv4Addr::from(key.src);
        let tos = key.tos & 0x1c;
        if dst.is_multicast() {
            return Err(self
                .multicast_input_v4(iif, dst, src, tos)
                .map(|()| on_lo(RouteType::Multicast, TABLE_UNSPEC, CACHE_CLASS_PLAIN)));
        }
        if src.is_multicast() || src.is_broadcast() {
            return Err(Err(Errno::Inval));
        }
        let src_ip = IpAddr::V4(src);
        if dst.is_broadcast() || (key.src == 0 && key.dst == 0) {
            // Limited broadcast needs no route (table 0, no route class).
            if key.src != 0 {
                let check = SourceCheck {
                    src: src_ip,
                    dst: ZERO,
                    tos,
                    oif: 0,
                    iif,
                };
                if let Err(e) = self.validate_source_v4(&check) {
                    return Err(Err(e));
                }
            }
            return Err(Ok(on_lo(
                RouteType::Broadcast,
                TABLE_UNSPEC,
                CACHE_CLASS_PLAIN,
            )));
        }
        if key.src == 0 || key.dst == 0 || dst.is_loopback() || src.is_loopback() {
            return Err(Err(Errno::Inval));
        }
        Ok(Flow {
            src: Some(src_ip),
            iif,
            mark: key.mark,
            tos,
            proto: key.proto,
            sport: key.sport,
            dport: key.dport,
            ..Flow::output(IpAddr::V4(dst))
        })
    }

    /// [`Fib::lookup_input_v4`]'s answer once `fib_lookup` of `flow` (made
    /// by [`Fib::input_flow_v4`]) answered `res`.
    #[inline(always)]
    pub(crate) fn input_answer_v4<'a>(
        &'a self,
        iif: LinkIndex,
        key: &FlowKeyV4,
        flow: &Flow,
        res: Result<FibResult<'a>, Errno>,
    ) -> Result<Forward, Errno> {
        match self.input_answer_unchecked_v4(iif, key, flow, res) {
            (answer, None) => answer,
            (answer, Some(check)) => self.validate_source_v4(&check).and(answer),
        }
    }

    /// [`Fib::input_answer_v4`] before its source validation: the answer,
    /// and the check (`fib_validate_source`) that still gates it, if any:
    /// a failed check answers its errno instead. The burst makes every
    /// key's check together. Shared with the burst.
    #[inline(always)]
    pub(crate) fn input_answer_unchecked_v4<'a>(
        &'a self,
        iif: LinkIndex,
        key: &FlowKeyV4,
        flow: &Flow,
        res: Result<FibResult<'a>, Errno>,
    ) -> (Result<Forward, Errno>, Option<SourceCheck>) {
        let src = IpAddr::V4(Ipv4Addr::from(key.src));
        let tos = flow.tos;
        let check = |dst: IpAddr, oif: LinkIndex| {
            Some(SourceCheck {
                src,
                dst,
                tos,
                oif,
                iif,
            })
        };
        let res = match res {
            Ok(res) => res,
            Err(e) => return (Err(e), None),
        };
        // The entry's summary spares reading the route (a cache miss).
        let class = match res.single {
            Some(s) => s.cache_class,
            None => res.route.cache_class,
        };
        match res.kind {
            RouteType::Broadcast => (
                Ok(on_lo(RouteType::Broadcast, res.table, class)),
                check(ZERO, 0),
            ),
            RouteType::Local => (
                Ok(on_lo(RouteType::Local, res.table, class)),
                check(flow.dst, 0),
            ),
            RouteType::Unicast => {
                let single = res
                    .single
                    // A gateway that may be our own address needs the route
                    // (`used_gateway_v4`); without one, the summary says all.
                    .filter(|s| s.gateway_v4() == 0 || self.host_scope_gateways.is_empty());
                let path = match single {
                    Some(s) => Ok((s.dev(), s.gateway_v4())),
                    None => self
                        .choose_path(&res, flow)
                        .ok_or(Errno::NetUnreach)
                        .and_then(|nh| {
                            let gateway = match self.used_gateway_v4(res.route, nh) {
                                Some(IpAddr::V4(g)) => u32::from(g),
                                // None, or an IPv6 gateway (`via inet6`): the
                                // IPv4 answer has no field for it, as on output.
                                _ => 0,
                            };
                            Ok((nh.dev.ok_or(Errno::NetUnreach)?, gateway))
                        }),
                };
                let (dev, gateway) = match path {
                    Ok(path) => path,
                    Err(e) => return (Err(e), None),
                };
                let answer = Forward {
                    gateway,
                    dev,
                    table: res.table,
                    kind: RouteType::Unicast,
                    cache_class: class,
                };
                (Ok(answer), check(flow.dst, dev))
            }
            // Multicast, anycast, nat... routes: `ip_route_input_slow`'s
            // martian destination.
            _ => (Err(Errno::Inval), None),
        }
    }
}

/// The all-hosts group, which every link joins while it is up (`ip_mc_up`):
/// the one multicast group fibre's router is a member of, so the one whose
/// routes are also local (`ip` prints `cache <local,mc>`).
///
/// ```
/// assert_eq!(fibre_fib::ALL_HOSTS_V4.to_string(), "224.0.0.1");
/// ```
pub const ALL_HOSTS_V4: Ipv4Addr = Ipv4Addr::new(224, 0, 0, 1);

impl Fib {
    /// `ip_route_input_rcu` for a multicast destination `dst`, which it
    /// takes before every other check: a group the input link is a member
    /// of is delivered locally (type multicast on `lo`, no table), once
    /// `ip_mc_validate_source` accepts the source; any other group is
    /// `Inval` (with no multicast routing daemon nothing is forwarded).
    /// fibre models no `ip maddr` joins, so the only group is all-hosts,
    /// 224.0.0.1, joined by every link while it is up. Kernel-checked (6.18,
    /// ifb links): 224.0.0.1 from a peer, from 0.0.0.0 or from a subnet
    /// broadcast is `multicast ... dev lo` on an up link (one without an
    /// address too); on a down link, from one of our addresses, from
    /// 127.0.0.1 or 224.0.0.2, and 224.0.0.5 or 239.1.2.3 from anywhere,
    /// "Invalid argument".
    pub(crate) fn multicast_input_v4(
        &self,
        iif: LinkIndex,
        dst: Ipv4Addr,
        src: Ipv4Addr,
        tos: u8,
    ) -> Result<(), Errno> {
        let joined = dst == ALL_HOSTS_V4 && self.links.get(&iif).is_some_and(|l| l.up);
        if !joined || src.is_multicast() || src.is_broadcast() || src.is_loopback() {
            return Err(Errno::Inval);
        }
        // A zero source is refused only for groups outside 224.0.0.0/24
        // (but IGMP); all-hosts is inside, so only a real source is checked.
        if src.is_unspecified() {
            return Ok(());
        }
        let check = SourceCheck {
            src: IpAddr::V4(src),
            dst: ZERO,
            tos,
            oif: 0,
            iif,
        };
        self.validate_source_v4(&check).map(drop)
    }
}

/// An answer delivered on `lo` (local, broadcast, multicast): no gateway.
#[inline]
fn on_lo(kind: RouteType, table: TableId, cache_class: u16) -> Forward {
    Forward {
        gateway: 0,
        dev: LOOPBACK_IFINDEX,
        table,
        kind,
        cache_class,
    }
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr};

    use proptest::prelude::*;

    use crate::config::parse_str;
    use crate::*;

    /// Links d0 (10.0.0.1/24) and d1 (10.1.0.1/24) up, d2 (10.2.0.1/24)
    /// down, lo up (with 127.0.0.1/8, which bringing it up adds).
    const BASE: &str = "link set lo up\n\
        link add d0 type ifb\nlink set d0 up\nlink add d1 type ifb\nlink set d1 up\n\
        link add d2 type ifb\naddr add 10.0.0.1/24 dev d0\naddr add 10.1.0.1/24 dev d1\n\
        addr add 10.2.0.1/24 dev d2\n";

    const PREFIXES: [&str; 8] = [
        "192.0.2.0/24",
        "192.0.2.128/25",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "0.0.0.0/0",
        "10.0.0.0/16",
        "192.0.2.7/32",
        "10.0.0.255/32",
    ];

    /// One configuration line of kind `kind` for prefix `p`: every route
    /// type, multipath, TOS, our own address as gateway, other tables and
    /// the rules that reach them, custom local routes.
    fn line(kind: u8, p: &str) -> String {
        match kind {
            0 => format!("route add {p} via 10.0.0.9"),
            1 => format!("route add {p} via 10.1.0.9 dev d1"),
            2 => format!("route add {p} dev d1"),
            3 => format!("route add unreachable {p}"),
            4 => format!("route add prohibit {p}"),
            5 => format!("route add blackhole {p}"),
            6 => format!("route add throw {p}"),
            7 => format!("route add local {p} dev lo"),
            8 => format!("route add broadcast {p} dev d0"),
            9 => format!("route add {p} nexthop via 10.0.0.9 nexthop via 10.1.0.9"),
            10 => format!("route add {p} tos 0x10 via 10.1.0.9"),
            11 => format!("route add {p} via 10.0.0.1"),
            12 => format!("route add {p} table 100 via 10.1.0.9"),
            13 => format!("route add {p} via 10.0.0.9 src 10.0.0.1 mtu 1400"),
            14 => format!("route add multicast {p} dev d1"),
            15 => "rule add from 10.9.0.0/16 table 100".to_string(),
            16 => "rule add iif d1 table 100".to_string(),
            17 => "rule add fwmark 1 table 100".to_string(),
            18 => format!("rule add to {p} prohibit"),
            _ => format!("route add {p} dev d2"),
        }
    }

    const DSTS: [&str; 18] = [
        "192.0.2.7",
        "192.0.2.200",
        "198.51.100.9",
        "203.0.113.5",
        "10.0.0.1",
        "10.0.0.255",
        "10.0.0.7",
        "10.1.0.1",
        "10.2.0.1",
        "255.255.255.255",
        "0.0.0.0",
        "127.0.0.1",
        "224.0.0.5",
        "8.8.8.8",
        "10.0.0.0",
        "10.1.0.9",
        "10.1.0.7",
        "224.0.0.1",
    ];

    /// Sources: peers, our own addresses, martians, and subnet broadcasts
    /// (not ours, but a reverse lookup answers `broadcast`: only the full
    /// source validation, taken when the packet would leave by its input
    /// link, refuses them).
    const SRCS: [&str; 13] = [
        "10.0.0.9",
        "10.1.0.9",
        "10.0.0.1",
        "0.0.0.0",
        "127.0.0.1",
        "224.0.0.1",
        "255.255.255.255",
        "10.9.1.1",
        "192.0.2.5",
        "198.51.100.7",
        "10.2.0.1",
        "10.0.0.255",
        "10.1.0.255",
    ];

    fn addr(s: &str) -> u32 {
        u32::from(s.parse::<Ipv4Addr>().unwrap())
    }

    /// The FIB of `BASE` plus `lines`, refused lines skipped (as `-force`).
    fn fib_of(lines: &[(u8, usize)]) -> Fib {
        let mut text = BASE.to_string();
        for &(kind, p) in lines {
            text += &line(kind, PREFIXES[p % PREFIXES.len()]);
            text.push('\n');
        }
        let parsed = parse_str("t.conf", &text);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let mut fib = Fib::new();
        for s in &parsed.statements {
            let _ = fib.apply(&s.command);
        }
        fib
    }

    /// The same FIB with every entry's single-path summary dropped, so that
    /// lookups take the routes' own path.
    fn without_summaries(fib: &Fib) -> Fib {
        let mut slow = fib.clone();
        for t in slow.tables.values_mut() {
            t.v4.entries_mut().for_each(drop);
        }
        slow
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// The batch input lookup answers as `ip route get DST from SRC
        /// iif DEV` (whose answers kernel_diff checks against Linux), with
        /// or without the entries' summaries.
        #[test]
        fn input_batch_v4_agrees_with_route_get(
            lines in prop::collection::vec((0u8..20, 0usize..8), 0..14),
            packets in prop::collection::vec(
                (0..DSTS.len(), 0..SRCS.len(), prop::sample::select(vec![0u8, 0x10, 0x14]),
                 0u32..2, prop::sample::select(vec![0u8, 6, 17]), any::<u16>()),
                1..24),
            iif in 1u32..6,
        ) {
            let fib = fib_of(&lines);
            let slow = without_summaries(&fib);
            let keys: Vec<FlowKeyV4> = packets
                .iter()
                .map(|&(d, s, tos, mark, proto, port)| FlowKeyV4 {
                    dst: addr(DSTS[d]),
                    src: addr(SRCS[s]),
                    tos,
                    mark,
                    proto,
                    sport: port,
                    dport: port.rotate_left(3),
                    // Ignored by an input lookup.
                    oif: 3,
                    ..Default::default()
                })
                .collect();
            let mut out = vec![Err(Errno::Inval); keys.len()];
            fib.lookup_input_batch_v4(iif, &keys, &mut out);
            let mut slow_out = vec![Err(Errno::Inval); keys.len()];
            slow.lookup_input_batch_v4(iif, &keys, &mut slow_out);
            prop_assert_eq!(&out, &slow_out);
            let iif_name = fib.link(iif).map(|l| l.name.clone());
            for (k, got) in keys.iter().zip(&out) {
                let Some(name) = &iif_name else {
                    prop_assert_eq!(*got, Err(Errno::NoDev));
                    continue;
                };
                let request = RouteGetRequest {
                    src: Some(IpAddr::V4(k.src.into())),
                    iif: Some(name.clone()),
                    tos: k.tos,
                    mark: k.mark,
                    ipproto: (k.proto != 0).then_some(k.proto),
                    sport: (k.proto != 0).then_some(k.sport),
                    dport: (k.proto != 0).then_some(k.dport),
                    ..RouteGetRequest::to(IpAddr::V4(k.dst.into()))
                };
                let want = fib.route_get(&request);
                match (got, &want) {
                    (Ok(f), Ok(a)) => {
                        prop_assert_eq!(Some(fib.link(f.dev).unwrap().name.clone()), a.dev.clone());
                        let gw = match a.gateway {
                            Some(IpAddr::V4(g)) => u32::from(g),
                            _ => 0,
                        };
                        prop_assert_eq!(f.gateway, gw, "{:?}", k);
                        prop_assert_eq!((f.table, f.kind), (a.table, a.kind), "{:?}", k);
                        prop_assert_eq!(f.cache_class, a.route.cache_class, "{:?}", k);
                    }
                    (Err(e), Err(w)) => prop_assert_eq!(*e, w.errno, "{:?}", k),
                    (g, w) => prop_assert!(false, "{:?}: batch {:?}, route_get {:?}", k, g, w),
                }
            }
        }
    }

    /// Every line kind of the random configurations parses (a typo would
    /// silently shrink what the property above covers) and most apply.
    #[test]
    fn every_line_kind_parses_and_applies() {
        for kind in 0..20 {
            let text = format!("{BASE}{}\n", line(kind, "192.0.2.0/24"));
            let parsed = parse_str("t.conf", &text);
            assert!(
                parsed.diagnostics.is_empty(),
                "{kind}: {:?}",
                parsed.diagnostics
            );
            let mut fib = Fib::new();
            let refused = parsed
                .statements
                .iter()
                .filter(|s| fib.apply(&s.command).is_err())
                .count();
            // Only the route through the down link d2 is refused.
            assert_eq!(refused, usize::from(kind == 19), "kind {kind}");
        }
    }

    /// The answers the kernel gives (kernel_diff checked) for the common
    /// cases, spelled out.
    #[test]
    fn input_answers_by_case() {
        let fib = fib_of(&[(0, 0), (3, 2), (4, 3), (5, 6)]);
        let key = |d: &str, s: &str| FlowKeyV4 {
            dst: addr(d),
            src: addr(s),
            ..Default::default()
        };
        let cases = [
            (
                key("192.0.2.9", "10.1.0.9"),
                Ok((RouteType::Unicast, 2, "10.0.0.9")),
            ),
            (
                key("10.0.0.1", "10.1.0.9"),
                Ok((RouteType::Local, 1, "0.0.0.0")),
            ),
            (
                key("10.0.0.255", "10.1.0.9"),
                Ok((RouteType::Broadcast, 1, "0.0.0.0")),
            ),
            (
                key("255.255.255.255", "10.1.0.9"),
                Ok((RouteType::Broadcast, 1, "0.0.0.0")),
            ),
            (key("198.51.100.1", "10.1.0.9"), Err(Errno::HostUnreach)),
            (key("203.0.113.1", "10.1.0.9"), Err(Errno::Acces)),
            (key("192.0.2.7", "10.1.0.9"), Err(Errno::Inval)),
            (key("8.8.8.8", "10.1.0.9"), Err(Errno::NetUnreach)),
            // Martians: our own source, loopback, zero.
            (key("192.0.2.9", "10.0.0.1"), Err(Errno::Inval)),
            (key("192.0.2.9", "127.0.0.1"), Err(Errno::Inval)),
            (key("127.0.0.1", "10.1.0.9"), Err(Errno::Inval)),
            (key("192.0.2.9", "0.0.0.0"), Err(Errno::Inval)),
            (key("192.0.2.9", "224.0.0.1"), Err(Errno::Inval)),
        ];
        for (k, want) in cases {
            let mut out = [Err(Errno::Inval)];
            fib.lookup_input_batch_v4(3, &[k], &mut out);
            let got = out[0].map(|f| (f.kind, f.dev, Ipv4Addr::from(f.gateway).to_string()));
            let want = want.map(|(kind, dev, gw)| (kind, dev, gw.to_string()));
            assert_eq!(got, want, "{k:?}");
        }
        let mut out = [Ok(on_lo_probe())];
        fib.lookup_input_batch_v4(99, &[key("192.0.2.9", "10.1.0.9")], &mut out);
        assert_eq!(out[0], Err(Errno::NoDev));
    }

    /// Multicast destinations on input, as Linux 6.18 answered them in a
    /// network namespace (ifb links; `ip -j route get 224.0.0.1 from SRC
    /// iif DEV`): only the all-hosts group, on an up link, from a source
    /// `ip_mc_validate_source` accepts; `multicast ... dev lo`, no table.
    #[test]
    fn multicast_input_as_the_kernel_answers() {
        let mut fib = fib_of(&[]);
        // d2 up without an address (it joins all-hosts too), d3 down.
        let more = "link set d2 up\naddr del 10.2.0.1/24 dev d2\nlink add d3 type ifb\n";
        for s in &parse_str("t.conf", more).statements {
            fib.apply(&s.command).unwrap();
        }
        let multicast = || Ok((RouteType::Multicast, "lo".to_string()));
        let cases = [
            ("224.0.0.1", "10.0.0.9", "d0", multicast()),
            ("224.0.0.1", "0.0.0.0", "d0", multicast()),
            ("224.0.0.1", "10.0.0.255", "d0", multicast()),
            ("224.0.0.1", "10.5.0.9", "d0", multicast()),
            ("224.0.0.1", "10.0.0.9", "d2", multicast()),
            ("224.0.0.1", "10.0.0.9", "lo", multicast()),
            // d3 is down: not a member.
            ("224.0.0.1", "10.0.0.9", "d3", Err(Errno::Inval)),
            ("224.0.0.1", "10.0.0.1", "d0", Err(Errno::Inval)),
            ("224.0.0.1", "127.0.0.1", "d0", Err(Errno::Inval)),
            ("224.0.0.1", "224.0.0.2", "d0", Err(Errno::Inval)),
            ("224.0.0.5", "10.0.0.9", "d0", Err(Errno::Inval)),
            ("239.1.2.3", "10.0.0.9", "d0", Err(Errno::Inval)),
        ];
        for (dst, src, iif, want) in cases {
            assert_multicast_answer(&fib, dst, src, iif, want);
        }
        // A custom local route makes its sources ours: refused.
        let local = parse_str("t.conf", "route add local 10.5.0.0/16 dev lo\n");
        fib.apply(&local.statements[0].command).unwrap();
        assert_multicast_answer(&fib, "224.0.0.1", "10.5.0.9", "d0", Err(Errno::Inval));
    }

    /// route_get and the batch both answer `want` (type and device) for
    /// `dst from src iif iif`, with no table and no gateway.
    fn assert_multicast_answer(
        fib: &Fib,
        dst: &str,
        src: &str,
        iif: &str,
        want: Result<(RouteType, String), Errno>,
    ) {
        let request = RouteGetRequest {
            src: Some(src.parse().unwrap()),
            iif: Some(iif.to_string()),
            ..RouteGetRequest::to(dst.parse().unwrap())
        };
        let got = fib
            .route_get(&request)
            .map(|a| {
                assert_eq!((a.table, a.gateway), (TABLE_UNSPEC, None));
                (a.kind, a.dev.unwrap())
            })
            .map_err(|e| e.errno);
        assert_eq!(got, want, "{dst} from {src} iif {iif}");
        let key = FlowKeyV4 {
            dst: addr(dst),
            src: addr(src),
            ..Default::default()
        };
        let mut out = [Err(Errno::NoDev)];
        let index = fib.link_by_name(iif).unwrap().index;
        fib.lookup_input_batch_v4(index, &[key], &mut out);
        let batch = out[0].map(|f| (f.kind, fib.link(f.dev).unwrap().name.clone()));
        assert_eq!(batch, want, "batch: {dst} from {src} iif {iif}");
    }

    fn on_lo_probe() -> Forward {
        super::on_lo(RouteType::Local, TABLE_MAIN, CACHE_CLASS_PLAIN)
    }
}
