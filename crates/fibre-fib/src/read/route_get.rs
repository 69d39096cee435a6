//! `ip route get`: the output path (`ip_route_output_key_hash_rcu`,
//! `ip6_route_output`) and the input path (`ip_route_input_slow`,
//! `ip6_route_input`) over the FIB, with forwarding enabled and
//! `rp_filter` 0.
//!
//! Kernel-checked answers (6.18): a local destination answers `local ...
//! dev lo`; while no IPv4 rule was ever added or deleted, local routes report table
//! main (the kernel merges local into main); a rule's `unreachable` is
//! "Network is unreachable"; an input lookup from one of our own addresses,
//! or with no source, is "Invalid argument" (martian source).

use std::net::{IpAddr, Ipv4Addr};

use crate::command::{RouteAnswer, RouteGetRequest};
use crate::error::{Errno, KernelError};
use crate::fib::{Fib, HostGatewayKey};
use crate::read::lookup::{FibResult, Flow, LOOPBACK_IFINDEX};
use crate::read::multipath::{flow_hash, select_path, FlowHashInput, MultipathHashPolicy};
use crate::types::*;

fn err(e: Errno) -> KernelError {
    KernelError::new(e)
}

fn v4(a: &IpAddr) -> Ipv4Addr {
    match a {
        IpAddr::V4(v) => *v,
        IpAddr::V6(_) => Ipv4Addr::UNSPECIFIED,
    }
}

/// `ipv4_is_zeronet`: only 0.0.0.0 since Linux 5.3 made 0/8 unicast.
fn is_zeronet(a: &Ipv4Addr) -> bool {
    a.is_unspecified()
}

/// A route the kernel made up for an answer without a FIB route (on-link
/// assumption, limited broadcast, ...).
fn synthetic_route(dst: IpAddr, kind: RouteType, dev: LinkIndex) -> Route {
    Route {
        mtu_lock: false,
        metrics: Default::default(),
        table: TABLE_UNSPEC,
        dst: Prefix::host(dst),
        tos: 0,
        kind,
        protocol: Protocol::UNSPEC,
        scope: Scope::UNIVERSE,
        metric: 0,
        prefsrc: None,
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

/// The FIB's answer to `ip route get`.
pub(crate) fn route_get(fib: &Fib, req: &RouteGetRequest) -> Result<RouteAnswer, KernelError> {
    // inet_rtm_getroute / inet6_rtm_getroute: a zero RTA_SRC is the same
    // as none (kernel-checked: `10.3.1.0 from 0.0.0.0` answers with a
    // prefsrc and no `from`).
    check_ipproto(req)?;
    let unspecified_src = req.src.is_some_and(|s| s.is_unspecified());
    let normalised;
    let req = if unspecified_src {
        normalised = RouteGetRequest {
            src: None,
            ..req.clone()
        };
        &normalised
    } else {
        req
    };
    if let Some(src) = req.src {
        if Family::of(&src) != Family::of(&req.dst) {
            return Err(err(Errno::Inval));
        }
    }
    let oif = req.oif.as_deref().map(|n| fib.resolve_dev(n)).transpose()?;
    let iif = req.iif.as_deref().map(|n| fib.resolve_dev(n)).transpose()?;
    let answer = match (iif, Family::of(&req.dst)) {
        (Some(iif), Family::V4) => input_v4(fib, req, iif)?,
        (Some(iif), Family::V6) => input_v6(fib, req, iif)?,
        (None, Family::V4) => output_v4(fib, req, oif.unwrap_or(0))?,
        (None, Family::V6) => output_v6(fib, req, oif.unwrap_or(0))?,
    };
    if req.fibmatch {
        if answer.route.table == TABLE_UNSPEC {
            return Err(err(Errno::HostUnreach));
        }
        return Ok(as_fibmatch(answer));
    }
    Ok(answer)
}

/// `rtm_getroute_parse_ip_proto`: a query may name TCP, UDP and ICMP of its
/// family only. Kernel-checked: `route get 10.0.0.7 ipproto sctp` and `-6
/// route get 2001:db8::7 ipproto icmp` are "Error: Unsupported ip proto.".
fn check_ipproto(req: &RouteGetRequest) -> Result<(), KernelError> {
    const TCP: u8 = 6;
    const UDP: u8 = 17;
    const ICMP: u8 = 1;
    const ICMPV6: u8 = 58;
    let supported = matches!(
        (req.ipproto, Family::of(&req.dst)),
        (None | Some(TCP | UDP), _) | (Some(ICMP), Family::V4) | (Some(ICMPV6), Family::V6)
    );
    if supported {
        Ok(())
    } else {
        Err(KernelError::with_extack(
            Errno::OpNotSupp,
            "Unsupported ip proto",
        ))
    }
}

/// The matched route as `fibmatch` reports it: in the table the lookup
/// reported (main for a local-table route while the tables are merged)
/// and, for IPv4, with the answer's type (`fri.type = rt->rt_type`: a
/// broadcast destination under a `local` route reports `broadcast`).
/// Kernel-checked: `route add local 0.0.0.0/0 dev fd2` then `route get
/// fibmatch 255.255.255.255` gives `{"type":"broadcast","dst":"default",
/// "dev":"fd2","scope":"host"}` (no table key).
fn as_fibmatch(mut answer: RouteAnswer) -> RouteAnswer {
    answer.route.table = answer.table;
    if Family::of(&answer.dst) == Family::V4 {
        answer.route.kind = answer.kind;
    }
    answer
}

/// The TOS bits a lookup sees: IPv4 keeps IPTOS_RT_MASK (0x1c), IPv6 the
/// whole DSCP (`ip6_dscp`). Kernel-checked: rule `tos 0x18` matches IPv4
/// queries with tos 0x18, 0x38 and 0xb8, not 0x1c; IPv6 rule `tos 0xb8`
/// matches tos 0xb8 only (not 0x18 nor 0xbc).
pub(crate) fn lookup_tos(dst: &IpAddr, tos: u8) -> u8 {
    match Family::of(dst) {
        Family::V4 => tos & 0x1c,
        Family::V6 => tos & 0xfc,
    }
}

/// `IPPROTO_UDP`.
const IPPROTO_UDP: u8 = 17;
/// `IPPROTO_TCP`.
const IPPROTO_TCP: u8 = 6;

/// The output flow of a query. `inet_rtm_getroute` asks about a UDP packet
/// unless told another protocol (kernel-checked: a rule `ipproto udp
/// prohibit` refuses a plain IPv4 `route get`), `inet6_rtm_getroute` about
/// none; both take the caller's uid (root's, 0) when none is given.
fn flow_of(req: &RouteGetRequest, oif: LinkIndex) -> Flow {
    let default_proto = match Family::of(&req.dst) {
        Family::V4 => IPPROTO_UDP,
        Family::V6 => 0,
    };
    Flow {
        src: req.src,
        oif,
        mark: req.mark,
        tos: lookup_tos(&req.dst, req.tos),
        proto: req.ipproto.unwrap_or(default_proto),
        sport: req.sport.unwrap_or(0),
        dport: req.dport.unwrap_or(0),
        uid: req.uid.unwrap_or(0),
        ..Flow::output(req.dst)
    }
}

impl Fib {
    /// The gateway an IPv4 path really uses (`rt_uses_gateway`): not one
    /// that resolved to our own address when the route was made.
    pub(crate) fn used_gateway_v4(&self, route: &Route, nh: &Nexthop) -> Option<IpAddr> {
        let gw = nh.gateway?;
        if self.host_scope_gateways.is_empty() {
            return Some(gw);
        }
        let key = HostGatewayKey::of(route, nh)?;
        (!self.host_scope_gateways.contains(&key)).then_some(gw)
    }

    /// The path of a result after multipath selection: IPv4 hashes only
    /// without an oif (`fib_select_path`); IPv6 always hashes and keeps the
    /// hashed path unless a strict oif rules it out (`fib6_select_path`).
    pub(crate) fn choose_path<'a>(&self, res: &FibResult<'a>, flow: &Flow) -> Option<&'a Nexthop> {
        let paths = &res.route.nexthops;
        let family = res.route.family();
        let hashes = paths.len() > 1 && (family == Family::V6 || flow.oif == 0);
        if hashes {
            let policy = match family {
                Family::V4 => self.settings.multipath_hash_policy_v4,
                Family::V6 => self.settings.multipath_hash_policy_v6,
            };
            let l4 = policy == MultipathHashPolicy::L4;
            let input = FlowHashInput {
                src: flow.src.unwrap_or(family.unspecified()),
                dst: flow.dst,
                proto: if l4 { flow.proto } else { 0 },
                sport: if l4 { flow.sport } else { 0 },
                dport: if l4 { flow.dport } else { 0 },
            };
            let hash = flow_hash(&input, policy, self.settings.multipath_hash_seed);
            if let Some(nh) = select_path(paths, hash).and_then(|i| paths.get(i)) {
                let strict = match family {
                    Family::V4 => false,
                    Family::V6 => flow.v6_strict,
                };
                if !(strict && nh.dev != Some(flow.v6_dev)) {
                    return Some(nh);
                }
            }
        }
        res.nexthop()
    }

    /// `fib_validate_source` with rp_filter 0: `Err` for a martian
    /// source; `Ok(true)` when the full check ran and found the source
    /// directly reachable through the input device `iif` (the reverse
    /// route's path has no gateway, or one that is our own address:
    /// `nhc_scope >= RT_SCOPE_HOST`). That positive answer is what makes the
    /// kernel mark a forwarded packet that leaves by the device it came in
    /// on for an ICMP redirect (`__mkroute_input`; `ip` prints `redirect`).
    pub(crate) fn validate_source_v4(&self, check: &SourceCheck) -> Result<bool, Errno> {
        match self.source_check_flow_v4(check) {
            Ok(flow) => self.source_check_verdict_v4(check, flow, self.fib_lookup(&flow)),
            Err(verdict) => verdict,
        }
    }

    /// The reverse lookup [`Fib::validate_source_v4`] makes for `check`,
    /// or (`Err`) its verdict where it needs none (the address check).
    #[inline(always)]
    pub(crate) fn source_check_flow_v4(
        &self,
        check: &SourceCheck,
    ) -> Result<Flow, Result<bool, Errno>> {
        let fast = check.iif != check.oif;
        if fast && !self.custom_local_routes && !self.custom_rules_v4 {
            return Err(if self.is_local_address(&check.src) {
                Err(Errno::Inval)
            } else {
                Ok(false)
            });
        }
        Ok(reverse_flow_v4(check))
    }

    /// [`Fib::validate_source_v4`]'s verdict once the reverse lookup of
    /// `flow` (made by [`Fib::source_check_flow_v4`]) answered `res`.
    pub(crate) fn source_check_verdict_v4<'a>(
        &'a self,
        check: &SourceCheck,
        flow: Flow,
        res: Result<FibResult<'a>, Errno>,
    ) -> Result<bool, Errno> {
        self.source_verdict_v4(check, flow, res, RpFilter::Off)
    }

    /// `__fib_validate_source` once the reverse lookup of `flow` answered
    /// `res`, with reverse path filter `rp_filter`: without a route back
    /// (or with no address on the input link) the source passes only with
    /// the filter off; strict mode also refuses a route back by another
    /// link (both refusals are `EXDEV`, `SKB_DROP_REASON_IP_RPFILTER`).
    fn source_verdict_v4<'a>(
        &'a self,
        check: &SourceCheck,
        mut flow: Flow,
        res: Result<FibResult<'a>, Errno>,
        rp_filter: RpFilter,
    ) -> Result<bool, Errno> {
        let iif = check.iif;
        let last_resort = match rp_filter {
            RpFilter::Off => Ok(false),
            RpFilter::Strict | RpFilter::Loose => Err(Errno::XDev),
        };
        let res = match res {
            Err(_) => return last_resort,
            Ok(res) if res.kind != RouteType::Unicast => return Err(Errno::Inval),
            Ok(res) => res,
        };
        let direct = |res: &FibResult<'_>| {
            res.nexthop()
                .is_some_and(|nh| self.used_gateway_v4(res.route, nh).is_none())
        };
        if res.route.nexthops.iter().any(|nh| nh.dev == Some(iif)) {
            return Ok(direct(&res));
        }
        if self.addrs_of_v4(iif).is_empty() {
            return last_resort;
        }
        if rp_filter == RpFilter::Strict {
            return Err(Errno::XDev);
        }
        // The source's route by way of the input device.
        flow.oif = iif;
        Ok(self
            .fib_lookup(&flow)
            .is_ok_and(|res| res.kind == RouteType::Unicast && direct(&res)))
    }
}

/// The reverse lookup `__fib_validate_source` makes for `check`: the
/// route to the source, from the destination, as if received by the
/// device the packet leaves by (`lo` for local delivery).
fn reverse_flow_v4(check: &SourceCheck) -> Flow {
    Flow {
        dst: check.src,
        src: Some(check.dst).filter(|d| !d.is_unspecified()),
        iif: if check.oif != 0 {
            check.oif
        } else {
            crate::read::lookup::LOOPBACK_IFINDEX
        },
        tos: check.tos,
        ..Flow::output(check.src)
    }
}

/// Reverse path filtering of received IPv4 packets, a link's
/// `net.ipv4.conf.DEV.rp_filter` (the kernel uses the larger of the link's
/// and `all`'s, `IN_DEV_RPFILTER`): RFC 3704's strict and loose modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RpFilter {
    /// 0: no check beyond the martian source (the kernel's default).
    #[default]
    Off,
    /// 1: the route back to the source must leave by the input link.
    Strict,
    /// 2: some route back to the source must exist.
    Loose,
}

impl Fib {
    /// `fib_validate_source` for a packet of `key` received on `iif` that
    /// the input lookup answered `answer` (a local, broadcast, multicast
    /// or forwarded one), with reverse path filter `rp_filter` on `iif`:
    /// `Err(Inval)` for a martian source, `Err(XDev)` for one the filter
    /// refuses, else `Ok(direct)`, where `direct` says the full check ran
    /// and found the source directly reachable through `iif`. A forwarded
    /// packet leaving by `iif` from a direct source is one the kernel sends
    /// an ICMP redirect for (`__mkroute_input`'s `RTCF_DOREDIRECT`, with
    /// `send_redirects` on). With the filter off the verdict is the one the
    /// input lookups already applied.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let (fib, _) = config::apply_str(&Fib::new(), "r.conf",
    ///     "link add d0 type ifb\nlink set d0 up\nlink add d1 type ifb\nlink set d1 up\n\
    ///      addr add 10.0.0.1/24 dev d0\naddr add 10.1.0.1/24 dev d1\n", false).unwrap();
    /// // From 10.1.0.9 (reached by d1) to 10.1.0.7, received on d0.
    /// let key = FlowKeyV4 { dst: u32::from_be_bytes([10, 1, 0, 7]),
    ///     src: u32::from_be_bytes([10, 1, 0, 9]), ..Default::default() };
    /// let mut out = [Err(Errno::Inval)];
    /// fib.lookup_input_batch_v4(2, &[key], &mut out);
    /// let answer = out[0].unwrap();
    /// assert_eq!(fib.input_source_check_v4(2, &key, &answer, RpFilter::Off), Ok(false));
    /// assert_eq!(fib.input_source_check_v4(2, &key, &answer, RpFilter::Loose), Ok(false));
    /// assert_eq!(fib.input_source_check_v4(2, &key, &answer, RpFilter::Strict), Err(Errno::XDev));
    /// ```
    pub fn input_source_check_v4(
        &self,
        iif: LinkIndex,
        key: &crate::FlowKeyV4,
        answer: &crate::Forward,
        rp_filter: RpFilter,
    ) -> Result<bool, Errno> {
        let to_us = answer.kind != RouteType::Unicast;
        let zero_dst = matches!(answer.kind, RouteType::Broadcast | RouteType::Multicast);
        let check = SourceCheck {
            src: IpAddr::V4(Ipv4Addr::from(key.src)),
            dst: IpAddr::V4(if zero_dst {
                Ipv4Addr::UNSPECIFIED
            } else {
                Ipv4Addr::from(key.dst)
            }),
            tos: key.tos & 0x1c,
            oif: if to_us { 0 } else { answer.dev },
            iif,
        };
        if rp_filter == RpFilter::Off {
            return self.validate_source_v4(&check);
        }
        // A filter always makes the full check (`fib_validate_source`).
        let flow = reverse_flow_v4(&check);
        self.source_verdict_v4(&check, flow, self.fib_lookup(&flow), rp_filter)
    }
}

/// What `fib_validate_source` is asked: is `src`, of a packet to `dst`
/// received on `iif` (and leaving by `oif`, 0 for local delivery), a
/// source the packet may come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SourceCheck {
    /// The packet's source.
    pub src: IpAddr,
    /// Its destination (the unspecified address for a broadcast).
    pub dst: IpAddr,
    /// Its TOS.
    pub tos: u8,
    /// The device it leaves by; 0 for local delivery.
    pub oif: LinkIndex,
    /// The device it arrived on.
    pub iif: LinkIndex,
}

/// What an answer says beyond the request.
struct Hop {
    kind: RouteType,
    route: Route,
    table: TableId,
    gateway: Option<IpAddr>,
    dev: LinkIndex,
    prefsrc: Option<IpAddr>,
    iif: Option<LinkIndex>,
}

fn answer(fib: &Fib, req: &RouteGetRequest, hop: Hop) -> RouteAnswer {
    RouteAnswer {
        kind: hop.kind,
        dst: req.dst,
        src: req.src,
        table: hop.table,
        gateway: hop.gateway,
        dev: Some(fib.dev_name(hop.dev)),
        prefsrc: hop.prefsrc,
        iif: hop.iif.map(|i| fib.dev_name(i)),
        mark: req.mark,
        mtu: hop.route.mtu,
        redirect: false,
        route: hop.route,
    }
}

/// `answer` marked for an ICMP redirect (RTCF_DOREDIRECT) when `redirect`.
fn with_redirect(redirect: bool, mut answer: RouteAnswer) -> RouteAnswer {
    answer.redirect = redirect;
    answer
}

/// The path multipath selection picks for `res` and the device it leaves
/// by; a route with neither answers `NetUnreach`, on every family and path.
fn chosen_path<'a>(
    fib: &Fib,
    res: &FibResult<'a>,
    flow: &Flow,
) -> Result<(&'a Nexthop, LinkIndex), KernelError> {
    let nh = fib
        .choose_path(res, flow)
        .ok_or_else(|| err(Errno::NetUnreach))?;
    let dev = nh.dev.ok_or_else(|| err(Errno::NetUnreach))?;
    Ok((nh, dev))
}

/// `__mkroute_output`: a loopback source may only leave by a loopback device.
fn loopback_source_check(
    fib: &Fib,
    src: Option<Ipv4Addr>,
    dev: LinkIndex,
) -> Result<(), KernelError> {
    let to_lo = fib
        .links
        .get(&dev)
        .is_some_and(|l| matches!(l.kind, LinkKind::Loopback));
    if src.is_some_and(|s| s.is_loopback()) && !to_lo {
        return Err(err(Errno::Inval));
    }
    Ok(())
}

/// `__mkroute_output` types limited broadcast and multicast by the
/// destination, whatever the route said; None for any other destination.
#[inline]
pub(crate) fn kind_by_dst_v4(dst: &Ipv4Addr) -> Option<RouteType> {
    if dst.is_broadcast() {
        Some(RouteType::Broadcast)
    } else if dst.is_multicast() {
        Some(RouteType::Multicast)
    } else {
        None
    }
}

/// The preferred source an IPv4 output answer shows: the one chosen, unless
/// the request named its own.
fn shown_source(req: &RouteGetRequest, chosen: Option<Ipv4Addr>) -> Option<IpAddr> {
    if req.src.is_none() {
        chosen.map(IpAddr::V4)
    } else {
        None
    }
}

/// An IPv4 output answer no FIB route gave (table 0, no gateway): `kind`
/// to `route_dst` through a route made up for it on `dev`.
fn routeless_answer(
    fib: &Fib,
    req: &RouteGetRequest,
    kind: RouteType,
    route_dst: IpAddr,
    dev: LinkIndex,
    prefsrc: Option<IpAddr>,
) -> RouteAnswer {
    let hop = Hop {
        kind,
        route: synthetic_route(route_dst, kind, dev),
        table: TABLE_UNSPEC,
        gateway: None,
        dev,
        prefsrc,
        iif: None,
    };
    answer(fib, req, hop)
}

/// `ip_route_output_key_hash_rcu` + `__mkroute_output`.
fn output_v4(fib: &Fib, req: &RouteGetRequest, oif: LinkIndex) -> Result<RouteAnswer, KernelError> {
    let dst = v4(&req.dst);
    let mut flow = flow_of(req, oif);
    let saddr = req.src.map(|s| v4(&s)).filter(|s| !s.is_unspecified());
    if let Some(s) = saddr {
        if s.is_multicast() || s.is_broadcast() || is_zeronet(&s) {
            return Err(err(Errno::Inval));
        }
        // __ip_dev_find: the device holding the source address.
        let Some(src_dev) = fib.dev_of_local_v4(&IpAddr::V4(s)) else {
            return Err(err(Errno::NetUnreach));
        };
        if oif == 0 && (dst.is_multicast() || dst.is_broadcast()) {
            // "Special hack": multicast and limited broadcast leave by the source's device.
            // Only limited broadcast and multicast destinations get here.
            let kind = kind_by_dst_v4(&dst).unwrap_or(RouteType::Multicast);
            return Ok(routeless_answer(fib, req, kind, req.dst, src_dev, None));
        }
    }
    if oif != 0 {
        let link = &fib.links[&oif];
        if !link.up {
            return Err(err(Errno::NetUnreach));
        }
        let local_mc = (u32::from(dst) & 0xffff_ff00) == 0xe000_0000;
        if local_mc || dst.is_broadcast() {
            let s = saddr.or_else(|| fib.select_addr_v4(oif, None, Scope::LINK).map(|a| v4(&a)));
            loopback_source_check(fib, s, oif)?;
            // Only limited broadcast and multicast destinations get here.
            let kind = kind_by_dst_v4(&dst).unwrap_or(RouteType::Multicast);
            let prefsrc = shown_source(req, s);
            return Ok(routeless_answer(fib, req, kind, req.dst, oif, prefsrc));
        }
    }
    if dst.is_unspecified() {
        // With an oif the source is that device's (RT_SCOPE_HOST: any
        // scope), then any device's; with none at all, 127.0.0.1.
        let oif_source = || {
            (oif != 0)
                .then(|| fib.select_addr_v4(oif, None, Scope::HOST))
                .flatten()
                .map(|a| v4(&a))
        };
        let s = saddr.or_else(oif_source).unwrap_or(Ipv4Addr::LOCALHOST);
        let prefsrc = shown_source(req, Some(s));
        return Ok(routeless_answer(
            fib,
            req,
            RouteType::Local,
            IpAddr::V4(s),
            LOOPBACK_IFINDEX,
            prefsrc,
        ));
    }
    flow.src = saddr.map(IpAddr::V4);
    let res = match fib.fib_lookup(&flow) {
        Ok(res) => res,
        Err(e) => {
            if oif != 0 {
                // "Apparently, routing tables are wrong. Assume, that the destination is on link."
                let s =
                    saddr.or_else(|| fib.select_addr_v4(oif, None, Scope::LINK).map(|a| v4(&a)));
                loopback_source_check(fib, s, oif)?;
                let prefsrc = shown_source(req, s);
                return Ok(routeless_answer(
                    fib,
                    req,
                    RouteType::Unicast,
                    req.dst,
                    oif,
                    prefsrc,
                ));
            }
            return Err(err(e));
        }
    };
    if res.kind == RouteType::Local {
        if fib.ipv4_off.contains(&LOOPBACK_IFINDEX) {
            // __mkroute_output: local delivery leaves by lo, and lo without
            // an in_device (its MTU under 68) is -EINVAL (kernel-checked).
            return Err(err(Errno::Inval));
        }
        let kind = kind_by_dst_v4(&dst).unwrap_or(RouteType::Local);
        let s = saddr.or(res.route.prefsrc.map(|p| v4(&p))).unwrap_or(dst);
        let prefsrc = shown_source(req, Some(s));
        return Ok(output_answer(fib, req, &res, kind, None, 1, prefsrc));
    }
    let (nh, dev) = chosen_path(fib, &res, &flow)?;
    if fib.ipv4_off.contains(&dev) {
        // __mkroute_output: no in_device on the way out (kernel-checked:
        // `default dev fd1` after `link set fd1 mtu 8` is Invalid argument).
        return Err(err(Errno::Inval));
    }
    let s = match saddr {
        Some(s) => Some(s),
        None => res.route.prefsrc.map(|p| v4(&p)).or_else(|| {
            fib.select_addr_v4(dev, nh.gateway, res.route.scope)
                .map(|a| v4(&a))
        }),
    };
    loopback_source_check(fib, s, dev)?;
    let kind = match kind_by_dst_v4(&dst) {
        Some(kind) => kind,
        None if is_zeronet(&dst) => return Err(err(Errno::Inval)),
        None => res.kind,
    };
    // __mkroute_output: "If multicast route do not exist use default one,
    // but do not gateway in this case": a multicast answer from a route of
    // /3 or shorter drops the route's fib_info, so neither its gateway nor
    // its metrics reach the answer (kernel-checked: `route prepend
    // multicast 0.0.0.0/0 dev fd1 mtu 4294967295` answers without an
    // mtu, seed 1796591473663879165). Broadcasts go on link.
    let fib_info_dropped = kind == RouteType::Multicast && res.route.dst.len() < 4;
    let gateway = if kind == RouteType::Broadcast || fib_info_dropped {
        None
    } else {
        fib.used_gateway_v4(res.route, nh)
    };
    let prefsrc = shown_source(req, s);
    let mut answer = output_answer(fib, req, &res, kind, gateway, dev, prefsrc);
    if fib_info_dropped {
        answer.mtu = None;
    }
    Ok(answer)
}

/// The answer of an output lookup that found `res`: its route and table,
/// leaving by `dev` (`lo` for local delivery), no input link.
fn output_answer(
    fib: &Fib,
    req: &RouteGetRequest,
    res: &FibResult<'_>,
    kind: RouteType,
    gateway: Option<IpAddr>,
    dev: LinkIndex,
    prefsrc: Option<IpAddr>,
) -> RouteAnswer {
    let hop = Hop {
        kind,
        route: res.route.clone(),
        table: res.table,
        gateway,
        dev,
        prefsrc,
        iif: None,
    };
    answer(fib, req, hop)
}

/// `ip_route_input_slow` with forwarding on and rp_filter 0.
fn input_v4(fib: &Fib, req: &RouteGetRequest, iif: LinkIndex) -> Result<RouteAnswer, KernelError> {
    let dst = v4(&req.dst);
    let src = req.src.map(|s| v4(&s)).unwrap_or(Ipv4Addr::UNSPECIFIED);
    let martian = || err(Errno::Inval);
    if dst.is_multicast() {
        // ip_route_input_rcu: before the slow path, a group we joined or nothing.
        fib.multicast_input_v4(iif, dst, src, req.tos & 0x1c)
            .map_err(err)?;
        let route = synthetic_route(req.dst, RouteType::Multicast, LOOPBACK_IFINDEX);
        let hop = Hop {
            kind: RouteType::Multicast,
            route,
            table: TABLE_UNSPEC,
            gateway: None,
            dev: LOOPBACK_IFINDEX,
            prefsrc: None,
            iif: Some(iif),
        };
        return Ok(answer(fib, req, hop));
    }
    if src.is_multicast() || src.is_broadcast() {
        return Err(martian());
    }
    let broadcast_answer = |table: TableId, route: Option<Route>| {
        let route = route.unwrap_or_else(|| synthetic_route(req.dst, RouteType::Broadcast, 1));
        answer(
            fib,
            req,
            Hop {
                kind: RouteType::Broadcast,
                route,
                table,
                gateway: None,
                dev: 1,
                prefsrc: None,
                iif: Some(iif),
            },
        )
    };
    if dst.is_broadcast() || (src.is_unspecified() && dst.is_unspecified()) {
        if !src.is_unspecified() {
            // brd_input validates with a zero destination.
            let zero = IpAddr::V4(Ipv4Addr::UNSPECIFIED);
            fib.validate_source_v4(&SourceCheck {
                src: IpAddr::V4(src),
                dst: zero,
                tos: req.tos & 0x1c,
                oif: 0,
                iif,
            })
            .map_err(err)?;
        }
        return Ok(broadcast_answer(TABLE_UNSPEC, None));
    }
    if is_zeronet(&src) || is_zeronet(&dst) || dst.is_loopback() || src.is_loopback() {
        return Err(martian());
    }
    let mut flow = flow_of(req, 0);
    flow.iif = iif;
    flow.src = Some(IpAddr::V4(src));
    // The query becomes a packet (`inet_rtm_getroute_build_skb`) that
    // `ip_route_input_slow` routes as the namespace's root's, whatever uid
    // was asked (kernel-checked: `uid 4294967294` still matches `uidrange
    // 0-0`); only a TCP or UDP header carries the ports.
    flow.uid = 0;
    if flow.proto != IPPROTO_TCP && flow.proto != IPPROTO_UDP {
        flow.sport = 0;
        flow.dport = 0;
    }
    let res = fib.fib_lookup(&flow).map_err(err)?;
    let src_ip = IpAddr::V4(src);
    match res.kind {
        RouteType::Broadcast => {
            // brd_input validates with a zero destination.
            let zero = IpAddr::V4(Ipv4Addr::UNSPECIFIED);
            fib.validate_source_v4(&SourceCheck {
                src: src_ip,
                dst: zero,
                tos: flow.tos,
                oif: 0,
                iif,
            })
            .map_err(err)?;
            Ok(broadcast_answer(res.table, Some(res.route.clone())))
        }
        RouteType::Local => {
            fib.validate_source_v4(&SourceCheck {
                src: src_ip,
                dst: req.dst,
                tos: flow.tos,
                oif: 0,
                iif,
            })
            .map_err(err)?;
            Ok(answer(
                fib,
                req,
                Hop {
                    kind: RouteType::Local,
                    route: res.route.clone(),
                    table: res.table,
                    gateway: None,
                    dev: 1,
                    prefsrc: None,
                    iif: Some(iif),
                },
            ))
        }
        RouteType::Unicast => {
            let (nh, dev) = chosen_path(fib, &res, &flow)?;
            let direct_source = fib
                .validate_source_v4(&SourceCheck {
                    src: src_ip,
                    dst: req.dst,
                    tos: flow.tos,
                    oif: dev,
                    iif,
                })
                .map_err(err)?;
            // send_redirects and shared_media are on by default: out the
            // way it came in, from a directly reachable source.
            let redirect = dev == iif && direct_source;
            Ok(with_redirect(
                redirect,
                answer(
                    fib,
                    req,
                    Hop {
                        kind: RouteType::Unicast,
                        route: res.route.clone(),
                        table: res.table,
                        gateway: fib.used_gateway_v4(res.route, nh),
                        dev,
                        prefsrc: None,
                        iif: Some(iif),
                    },
                ),
            ))
        }
        _ => Err(martian()),
    }
}

/// IPv6 routes whose answer leaves by `lo` (`ip6_rt_get_dev_rcu`): local
/// routes, and anycast routes made by addrconf (RTF_ANYCAST); an anycast
/// route added by hand keeps its device.
fn delivered_on_lo(res: &FibResult<'_>) -> bool {
    res.kind == RouteType::Local || res.route.is_addrconf_anycast()
}

/// `ip6_route_output`.
fn output_v6(fib: &Fib, req: &RouteGetRequest, oif: LinkIndex) -> Result<RouteAnswer, KernelError> {
    let flow = flow_of(req, oif).with_v6_output_dev();
    let res = fib.fib_lookup(&flow).map_err(err)?;
    // Without a `src` on the route, the output path picks one on the device.
    answer_v6(fib, req, &res, &flow, None, |dev| {
        fib.select_addr_v6(dev, &req.dst)
    })
}

/// `ip6_route_input`. The answer shows a preferred source only when the
/// route has one (`src` on the route).
fn input_v6(fib: &Fib, req: &RouteGetRequest, iif: LinkIndex) -> Result<RouteAnswer, KernelError> {
    let mut flow = flow_of(req, 0).with_v6_input_dev(iif);
    // inet6_rtm_getroute: an input query without a uid has none
    // (INVALID_UID), which no `uidrange` holds (kernel-checked).
    flow.uid = req.uid.unwrap_or(u32::MAX);
    let res = fib.fib_lookup(&flow).map_err(err)?;
    answer_v6(fib, req, &res, &flow, Some(iif), |_| None)
}

/// The IPv6 answer once the FIB matched `res` for `flow`, shared by the
/// output and input paths: they differ only in the flow, the `iif` they
/// report, and the preferred source when the route has none, which
/// `fallback_source` gives for the device the answer leaves by (the
/// route's own device when it is delivered on `lo`).
fn answer_v6(
    fib: &Fib,
    req: &RouteGetRequest,
    res: &FibResult<'_>,
    flow: &Flow,
    iif: Option<LinkIndex>,
    fallback_source: impl FnOnce(Option<LinkIndex>) -> Option<IpAddr>,
) -> Result<RouteAnswer, KernelError> {
    let (gateway, dev, source_dev) = if delivered_on_lo(res) {
        // ip6_rt_copy_init keeps the path's gateway on the route it makes
        // for lo (kernel-checked: `route prepend local 2001:db8:9::/48 via
        // 2001:db8:1::9` answers `via 2001:db8:1::9 dev lo`, output and
        // input alike, seed 1796592769961927267).
        let nh = res.nexthop();
        (
            nh.and_then(|n| n.gateway),
            LOOPBACK_IFINDEX,
            nh.and_then(|n| n.dev),
        )
    } else {
        let (nh, dev) = chosen_path(fib, res, flow)?;
        (nh.gateway, dev, Some(dev))
    };
    let prefsrc = res.route.prefsrc.or_else(|| fallback_source(source_dev));
    Ok(answer(
        fib,
        req,
        Hop {
            kind: res.kind,
            route: res.route.clone(),
            table: res.table,
            gateway,
            dev,
            prefsrc,
            iif,
        },
    ))
}
