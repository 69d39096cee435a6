//! `ip route add|replace|append|prepend|change|del`: building a route from
//! a request the way `fib_create_info` (IPv4) and `ip6_route_info_create`
//! (IPv6) do, with their refusals, and placing it among the routes of its
//! prefix as `fib_table_insert` / `fib6_add_rt2node` do.
//!
//! Kernel-checked refusals (6.18), as iproute2 prints them:
//! - duplicate `add`: `RTNETLINK answers: File exists`;
//! - IPv4 `change` of a missing route: `RTNETLINK answers: No such file or
//!   directory` (ENOENT, not ESRCH); IPv6: `Error: Can not replace route -
//!   no match found.`;
//! - `del` of a missing route: `RTNETLINK answers: No such process`; IPv4
//!   `del` in a table never created: `Error: FIB table does not exist.`;
//! - unreachable gateway: `Error: Nexthop has invalid gateway.` (IPv4),
//!   `RTNETLINK answers: No route to host` (IPv6);
//! - down device: `Error: Device for nexthop is not up.` (IPv4, no
//!   gateway), `Error: Nexthop device is not up.` (IPv4 onlink, IPv6);
//! - `src` not local: `Error: Invalid prefsrc address.` (IPv4),
//!   `Error: Invalid source address.` (IPv6);
//! - `dev X onlink` without gateway: `Error: Invalid flags for nexthop -
//!   PERVASIVE and ONLINK can not be set.`.

use std::hash::{Hash, Hasher};
use std::net::IpAddr;

use crate::command::{NexthopSpec, RouteOp, RouteSpec};
use crate::error::{Errno, KernelError};
use crate::fib::{Fib, HostGatewayKey};
use crate::read::lookup::Flow;
use crate::table::Table;
use crate::types::*;

/// `fib_metrics_match`: each metric a delete names (its value as given,
/// unconverted; a zero matches only an absent metric) is the route's.
fn metrics_match(given: &RouteMetrics, route: &Route) -> bool {
    given.entries().iter().all(|&(number, value)| {
        let kept = if number == RouteMetrics::LOCK {
            // The route's lock bits, mtu's among them.
            route.metrics.get(number).unwrap_or(0)
                | if route.mtu_lock {
                    1 << RouteMetrics::MTU
                } else {
                    0
                }
        } else {
            route.metrics.get(number).unwrap_or(0)
        };
        kept == value
    })
}

/// IPv6's default route metric (`IP6_RT_PRIO_USER`).
pub const IPV6_DEFAULT_METRIC: u32 = 1024;

/// True when two routes carry the same information (the kernel's shared
/// `fib_info` plus type): what makes an `append` a duplicate.
pub(crate) fn same_route(a: &Route, b: &Route) -> bool {
    a.table == b.table
        && a.dst == b.dst
        && a.tos == b.tos
        && a.kind == b.kind
        && a.protocol == b.protocol
        && a.scope == b.scope
        && a.metric == b.metric
        && a.prefsrc == b.prefsrc
        && a.mtu == b.mtu
        && a.mtu_lock == b.mtu_lock
        && a.metrics == b.metrics
        && same_nexthops(&a.nexthops, &b.nexthops)
}

/// A hash of what [`same_route`] compares (and nothing else), so that
/// routes it calls the same have the same fingerprint.
pub(crate) fn route_fingerprint(r: &Route) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    (r.table, r.dst, r.tos, r.kind, r.protocol, r.scope, r.metric).hash(&mut hasher);
    (r.prefsrc, r.mtu, r.mtu_lock).hash(&mut hasher);
    r.nexthops.len().hash(&mut hasher);
    for nh in &r.nexthops {
        (nh.gateway, nh.dev, nh.weight, nh.flags.onlink).hash(&mut hasher);
    }
    hasher.finish()
}

/// `fib6_add_rt2node` for a route the kernel adds itself (no request, so
/// no NLM_F_EXCL): a route of the same prefix and metric whose path leaves
/// by the same device and gateway (`rt6_duplicate_nexthop`) is a duplicate
/// whatever the two routes' types, so an address that is its own subnet's
/// anycast address gets only one of the `local` and `anycast` routes
/// (kernel-checked).
pub(crate) fn same_path_v6(a: &Route, b: &Route) -> bool {
    a.table == b.table && a.dst == b.dst && a.metric == b.metric && first_path(a) == first_path(b)
}

/// A hash of what [`same_path_v6`] compares.
pub(crate) fn path_fingerprint_v6(r: &Route) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    (r.table, r.dst, r.metric, first_path(r)).hash(&mut hasher);
    hasher.finish()
}

/// The device and gateway of a route's first path.
fn first_path(r: &Route) -> Option<(Option<LinkIndex>, Option<IpAddr>)> {
    r.nexthops.first().map(|nh| (nh.dev, nh.gateway))
}

fn same_nexthop(a: &Nexthop, b: &Nexthop) -> bool {
    a.gateway == b.gateway
        && a.dev == b.dev
        && a.weight == b.weight
        && a.flags.onlink == b.flags.onlink
}

fn same_nexthops(a: &[Nexthop], b: &[Nexthop]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_nexthop(x, y))
}

/// Whether a route's type refuses traffic (`fib_props[type].error`).
pub(crate) fn reject_errno(kind: RouteType) -> Option<Errno> {
    match kind {
        RouteType::Blackhole => Some(Errno::Inval),
        RouteType::Unreachable => Some(Errno::HostUnreach),
        RouteType::Prohibit => Some(Errno::Acces),
        _ => None,
    }
}

/// Whether a route's paths never carry RTNH_F_LINKDOWN: host-scope IPv4
/// routes (nh scope nowhere), IPv6 local routes and addrconf's anycast
/// ones (fib6_nh_init and fib6_ifdown skip RTF_LOCAL|RTF_ANYCAST; a
/// requested anycast route has neither, kernel-checked).
fn never_linkdown(route: &Route) -> bool {
    match route.family() {
        Family::V4 => route.scope == Scope::HOST,
        Family::V6 => route.kind == RouteType::Local || route.is_addrconf_anycast(),
    }
}

/// Whether a route type carries no path: the reject types and `throw`.
fn is_reject_type(kind: RouteType) -> bool {
    matches!(
        kind,
        RouteType::Blackhole | RouteType::Unreachable | RouteType::Prohibit | RouteType::Throw
    )
}

/// The paths a route command asks for, each with its resolved device; a
/// command naming none asks for one path with neither gateway nor device.
fn requested_paths(
    spec: &RouteSpec,
    devs: Vec<Option<LinkIndex>>,
) -> Vec<(NexthopSpec, Option<LinkIndex>)> {
    if spec.nexthops.is_empty() {
        vec![(
            NexthopSpec {
                gateway: None,
                dev: None,
                weight: 1,
                onlink: false,
            },
            None,
        )]
    } else {
        spec.nexthops.iter().cloned().zip(devs).collect()
    }
}

/// `rtm_to_fib6_config`'s refusals of an IPv6 add, before any table or
/// path is looked at: a gateway of another family (iproute2 sends it as
/// RTA_VIA) and, in `rtm_to_fib6_multipath_config`, a path without an
/// IPv6 gateway (RTA_GATEWAY; RTA_VIA is none).
fn check_request_v6(spec: &RouteSpec) -> Result<(), KernelError> {
    let v6_gateway = |nh: &NexthopSpec| matches!(nh.gateway, Some(IpAddr::V6(_)));
    if spec.multipath {
        if !spec.nexthops.iter().all(v6_gateway) {
            return Err(KernelError::with_extack(
                Errno::Inval,
                "Device only routes can not be added for IPv6 using the multipath API",
            ));
        }
    } else if spec
        .nexthops
        .iter()
        .any(|nh| nh.gateway.is_some() && !v6_gateway(nh))
    {
        return Err(KernelError::with_extack(
            Errno::Inval,
            "IPv6 does not support RTA_VIA attribute",
        ));
    }
    Ok(())
}

/// Where a new route goes among the routes of its prefix.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Before the first route with the same TOS and metric or later.
    First,
    /// After the last route with the same TOS and metric.
    Last,
}

/// The position for `r` among routes sorted by TOS (descending) then metric.
fn position(routes: &[Route], r: &Route, place: Place) -> usize {
    routes
        .iter()
        .position(|x| {
            x.tos < r.tos
                || (x.tos == r.tos
                    && match place {
                        Place::First => x.metric >= r.metric,
                        Place::Last => x.metric > r.metric,
                    })
        })
        .unwrap_or(routes.len())
}

fn effective_table(table: TableId) -> TableId {
    if table == TABLE_UNSPEC {
        TABLE_MAIN
    } else {
        table
    }
}

/// A checked path, not dead: what every nexthop check of both families
/// builds once the device and gateway have passed.
fn live_nexthop(
    gateway: Option<IpAddr>,
    dev: LinkIndex,
    weight: u16,
    onlink: bool,
    linkdown: bool,
) -> Nexthop {
    Nexthop {
        gateway,
        dev: Some(dev),
        weight,
        flags: NexthopFlags {
            onlink,
            dead: false,
            linkdown,
        },
    }
}

impl Fib {
    pub(crate) fn route_apply(&mut self, op: RouteOp, spec: &RouteSpec) -> Result<(), KernelError> {
        let mut spec = spec.clone();
        spec.table = effective_table(spec.table);
        for nh in &mut spec.nexthops {
            // rtm_to_fib_config, fib_get_nhs: an IPv4 gateway of 0.0.0.0 sets
            // no gateway family, so the path has no gateway. An IPv6 route
            // refuses it as RTA_VIA (rtm_to_fib6_config, kernel-checked).
            let v4_route = spec.dst.family() == Family::V4;
            if v4_route && nh.gateway == Some(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED)) {
                nh.gateway = None;
            }
        }
        match (op, spec.dst.family()) {
            (RouteOp::Del, Family::V4) => self.route_del_v4(&spec),
            (RouteOp::Del, Family::V6) => self.route_del_v6(&spec),
            (op, Family::V4) => {
                // inet_rtm_newroute creates the table before validating the
                // route, so even a refused add leaves it behind (a later
                // delete then answers "No such process").
                self.create_table(spec.table, Family::V4);
                let route = self.build_route_v4(&spec)?;
                let host_gateways: Vec<HostGatewayKey> = route
                    .nexthops
                    .iter()
                    .filter(|nh| !nh.flags.onlink)
                    .filter(|nh| {
                        // The path's scope is that of the route its gateway
                        // resolved through: host for one of our addresses.
                        nh.gateway.is_some_and(|g| {
                            self.resolve_gateway_v4(g, nh.dev, route.table, route.scope)
                                .is_ok_and(|res| res.route.scope >= Scope::HOST)
                        })
                    })
                    .filter_map(|nh| HostGatewayKey::of(&route, nh))
                    .collect();
                let keys: Vec<HostGatewayKey> = route
                    .nexthops
                    .iter()
                    .filter_map(|nh| HostGatewayKey::of(&route, nh))
                    .collect();
                self.route_insert_v4(op, route)?;
                for k in keys {
                    self.host_scope_gateways.remove(&k);
                }
                self.host_scope_gateways.extend(host_gateways);
                Ok(())
            }
            (op, Family::V6) => {
                check_request_v6(&spec)?;
                // ip6_route_info_create makes the table (fib6_new_table)
                // before it checks the paths, so a refused add leaves it too.
                self.create_table(spec.table, Family::V6);
                let route = self.build_route_v6(&spec)?;
                self.route_insert_v6(op, route)
            }
        }
    }

    /// Validates a request into the route the kernel would store.
    pub(crate) fn build_route(&self, spec: &RouteSpec) -> Result<Route, KernelError> {
        let mut spec = spec.clone();
        spec.table = effective_table(spec.table);
        match spec.dst.family() {
            Family::V4 => self.build_route_v4(&spec),
            Family::V6 => self.build_route_v6(&spec),
        }
    }

    /// Places a validated route as `op` does.
    pub(crate) fn insert_route(&mut self, op: RouteOp, route: Route) -> Result<(), KernelError> {
        match route.family() {
            Family::V4 => self.route_insert_v4(op, route),
            Family::V6 => self.route_insert_v6(op, route),
        }
    }

    /// The devices a request names, resolved (iproute2 resolves names first).
    fn resolve_nexthop_devs(
        &self,
        spec: &RouteSpec,
    ) -> Result<Vec<Option<LinkIndex>>, KernelError> {
        spec.nexthops
            .iter()
            .map(|nh| nh.dev.as_deref().map(|d| self.resolve_dev(d)).transpose())
            .collect()
    }

    /// `fib_create_info`: validates an IPv4 request and resolves its nexthops.
    fn build_route_v4(&self, spec: &RouteSpec) -> Result<Route, KernelError> {
        let devs = self.resolve_nexthop_devs(spec)?;
        if spec.tos & 0x03 != 0 {
            return Err(KernelError::with_extack(
                Errno::Inval,
                "Invalid dsfield (tos): ECN bits must be 0",
            ));
        }
        if let Some(IpAddr::V6(_)) = spec.prefsrc {
            return Err(KernelError::new(Errno::Inval));
        }
        let kind = spec.kind;
        let min_scope = match kind {
            RouteType::Local => Scope::HOST,
            RouteType::Broadcast | RouteType::Anycast => Scope::LINK,
            _ => Scope::UNIVERSE,
        };
        if kind == RouteType::Unspec {
            return Err(KernelError::with_extack(Errno::Inval, "Invalid route type"));
        }
        if min_scope > spec.scope {
            return Err(KernelError::with_extack(Errno::Inval, "Invalid scope"));
        }
        if spec.multipath && spec.nexthops.is_empty() {
            return Err(KernelError::new(Errno::Inval));
        }
        let mut route = Route {
            table: spec.table,
            dst: spec.dst,
            tos: spec.tos,
            kind,
            protocol: spec.protocol,
            scope: spec.scope,
            metric: spec.metric.unwrap_or(0),
            prefsrc: spec.prefsrc,
            mtu: kept_mtu(spec),
            mtu_lock: spec.mtu_lock && spec.mtu.is_some(),
            metrics: spec.metrics.kept(),
            nexthops: Vec::new(),
            cache_class: 0,
        };
        if is_reject_type(kind) {
            if spec
                .nexthops
                .iter()
                .any(|n| n.gateway.is_some() || n.dev.is_some())
                || spec.multipath
            {
                return Err(KernelError::with_extack(
                    Errno::Inval,
                    "Gateway, device and multipath can not be specified for this route type",
                ));
            }
            if spec.nexthops.first().is_some_and(|n| n.onlink) {
                // fib_nh_init copies the request's flags into the path a
                // reject route still has (fib_info's one fib_nh), and ip
                // shows them: `blackhole 10.50.0.0/16 onlink`
                // (kernel-checked). A path without gateway or device is
                // how this model holds it; other reject routes have none.
                route.nexthops.push(Nexthop {
                    gateway: None,
                    dev: None,
                    weight: 1,
                    flags: NexthopFlags {
                        onlink: true,
                        ..NexthopFlags::default()
                    },
                });
            }
            return Ok(route);
        }
        if spec.scope > Scope::HOST {
            return Err(KernelError::with_extack(Errno::Inval, "Invalid scope"));
        }
        let requested = requested_paths(spec, devs);
        for (nh, dev) in &requested {
            // (A host-scope route's paths never reach fib_check_nh: its
            // own checks come first, kernel-checked.)
            if spec.scope != Scope::HOST
                && nh.gateway.is_none()
                && !nh.onlink
                && dev.is_some_and(|d| self.ipv4_off.contains(&d))
            {
                // fib_check_nh_nongw: no in_device on the link, after its
                // refusal of `onlink` without a gateway (kernel-checked:
                // `route replace 10.5.0.0/16 onlink dev D` on a link of MTU
                // 0 is "Invalid flags for nexthop - PERVASIVE and ONLINK
                // can not be set", seed 1796593012170497452). A gateway
                // path is judged by its gateway (kernel-checked: on a link
                // whose MTU is under 68, `via G dev D` is "Nexthop has
                // invalid gateway", `via G dev D onlink` is taken).
                return Err(KernelError::new(Errno::NoDev));
            }
            if let Some(IpAddr::V6(_)) = nh.gateway {
                // IPv6 gateways for IPv4 routes (RFC 5549) are out of this model.
                return Err(KernelError::new(Errno::Inval));
            }
            if nh.weight == 0 || nh.weight > 256 {
                return Err(KernelError::new(Errno::Inval));
            }
        }
        if spec.scope == Scope::HOST {
            if requested.len() != 1 {
                return Err(KernelError::with_extack(
                    Errno::Inval,
                    "Route with host scope can not have multiple nexthops",
                ));
            }
            let (nh, dev) = &requested[0];
            if nh.gateway.is_some() {
                return Err(KernelError::with_extack(
                    Errno::Inval,
                    "Route with host scope can not have a gateway",
                ));
            }
            let Some(dev) = dev else {
                return Err(KernelError::new(Errno::NoDev));
            };
            // A host-scope path is never LINKDOWN (fib_create_info skips the check).
            route
                .nexthops
                .push(live_nexthop(None, *dev, nh.weight, nh.onlink, false));
        } else {
            for (nh, dev) in &requested {
                route
                    .nexthops
                    .push(self.check_nexthop_v4(nh, *dev, spec.table, spec.scope)?);
            }
        }
        if let Some(src) = route.prefsrc {
            if !self.valid_prefsrc_v4(&route, src) {
                return Err(KernelError::with_extack(
                    Errno::Inval,
                    "Invalid prefsrc address",
                ));
            }
        }
        Ok(route)
    }

    /// The route a gateway resolves through (`fib_check_nh_v4_gw`): the
    /// route's own table first unless it is main, then the full lookup,
    /// only routes of scope link or narrower, restricted to `dev`.
    fn resolve_gateway_v4(
        &self,
        gw: IpAddr,
        dev: Option<LinkIndex>,
        table: TableId,
        scope: Scope,
    ) -> Result<crate::read::lookup::FibResult<'_>, KernelError> {
        let flow = Flow {
            dst: gw,
            scope: Scope(scope.0.saturating_add(1).max(Scope::LINK.0)),
            oif: dev.unwrap_or(0),
            ..Flow::output(gw)
        };
        let found = if table != TABLE_MAIN {
            self.lookup_in_table(table, &flow).ok()
        } else {
            None
        };
        match found {
            Some(r) => Ok(r),
            None => self
                .fib_lookup(&flow)
                .map_err(|_| KernelError::with_extack(Errno::Inval, "Nexthop has invalid gateway")),
        }
    }

    /// The link a nexthop leaves by, which must be named (else `missing`,
    /// whose errno and message differ by caller as the kernel's do) and up
    /// (else `NetDown` with `down_message`).
    fn up_nexthop_link(
        &self,
        dev: Option<LinkIndex>,
        missing: impl FnOnce() -> KernelError,
        down_message: &str,
    ) -> Result<(LinkIndex, &Link), KernelError> {
        let Some(dev) = dev else {
            return Err(missing());
        };
        let link = &self.links[&dev];
        if !link.up {
            return Err(KernelError::with_extack(Errno::NetDown, down_message));
        }
        Ok((dev, link))
    }

    /// `fib_check_nh`: the gateway must be reachable on link (or `onlink`),
    /// the device up.
    fn check_nexthop_v4(
        &self,
        nh: &NexthopSpec,
        dev: Option<LinkIndex>,
        table: TableId,
        scope: Scope,
    ) -> Result<Nexthop, KernelError> {
        let Some(gw) = nh.gateway else {
            if nh.onlink {
                return Err(KernelError::with_extack(
                    Errno::Inval,
                    "Invalid flags for nexthop - PERVASIVE and ONLINK can not be set",
                ));
            }
            // fib_check_nh_nongw: no device is a bare ENODEV
            // (inetdev_by_index finds nothing), a down one is refused.
            let (dev, link) = self.up_nexthop_link(
                dev,
                || KernelError::new(Errno::NoDev),
                "Device for nexthop is not up",
            )?;
            return Ok(live_nexthop(None, dev, nh.weight, false, !link.carrier));
        };
        if nh.onlink {
            if scope >= Scope::LINK {
                return Err(KernelError::with_extack(
                    Errno::Inval,
                    "Nexthop has invalid scope",
                ));
            }
            let (dev, link) = self.up_nexthop_link(
                dev,
                || KernelError::with_extack(Errno::NoDev, "Nexthop device required for onlink"),
                "Nexthop device is not up",
            )?;
            if self.addr_type_v4_on_dev(&gw, dev) != RouteType::Unicast {
                return Err(KernelError::with_extack(
                    Errno::Inval,
                    "Nexthop has invalid gateway",
                ));
            }
            return Ok(live_nexthop(Some(gw), dev, nh.weight, true, !link.carrier));
        }
        let res = self.resolve_gateway_v4(gw, dev, table, scope)?;
        if res.kind != RouteType::Unicast && res.kind != RouteType::Local {
            return Err(KernelError::with_extack(
                Errno::Inval,
                "Nexthop has invalid gateway",
            ));
        }
        let Some(out_dev) = res.nexthop().and_then(|n| n.dev) else {
            return Err(KernelError::with_extack(
                Errno::Inval,
                "No egress device for nexthop gateway",
            ));
        };
        let link = &self.links[&out_dev];
        if !link.up {
            return Err(KernelError::new(Errno::NetDown));
        }
        Ok(live_nexthop(
            Some(gw),
            out_dev,
            nh.weight,
            false,
            !link.carrier,
        ))
    }

    /// `inet_addr_type_dev_table`: the type of an address in the device's
    /// local table. The kernel passes no device down, so one of our
    /// addresses on any link counts (an onlink gateway may not be ours).
    pub(crate) fn addr_type_v4_on_dev(&self, addr: &IpAddr, _dev: LinkIndex) -> RouteType {
        self.addr_type_v4(addr, TABLE_LOCAL, None)
    }

    /// `inet_addr_type_table`: the type of the route an address hits in a table.
    pub(crate) fn addr_type_v4(
        &self,
        addr: &IpAddr,
        table: TableId,
        dev: Option<LinkIndex>,
    ) -> RouteType {
        let IpAddr::V4(a) = addr else {
            return RouteType::Unicast;
        };
        if a.is_unspecified() || a.is_broadcast() {
            return RouteType::Broadcast;
        }
        if a.is_multicast() {
            return RouteType::Multicast;
        }
        let flow = Flow::output(*addr);
        match self.lookup_in_table(table, &flow) {
            Ok(res) => {
                let nh_dev = res.route.nexthops.first().and_then(|n| n.dev);
                if dev.is_none() || dev == nh_dev {
                    res.kind
                } else {
                    RouteType::Unicast
                }
            }
            Err(_) => RouteType::Unicast,
        }
    }

    /// `fib_valid_prefsrc`: a local route's own (non-zero) destination
    /// address is a valid source whatever the length, so that an address
    /// `inet_addr_type_table` never calls local (224.0.0.0/4 on lo: it
    /// says multicast) still gets lo's `local 224.0.0.0/4` prefix route.
    fn valid_prefsrc_v4(&self, route: &Route, src: IpAddr) -> bool {
        if route.kind == RouteType::Local
            && !route.dst.addr().is_unspecified()
            && route.dst.addr() == src
        {
            return true;
        }
        let table = if route.table == TABLE_LOCAL {
            TABLE_MAIN
        } else {
            route.table
        };
        let mut t = self.addr_type_v4(&src, table, None);
        if t != RouteType::Local && table != TABLE_LOCAL {
            t = self.addr_type_v4(&src, TABLE_LOCAL, None);
        }
        t == RouteType::Local
    }

    /// `fib_table_insert`.
    fn route_insert_v4(&mut self, op: RouteOp, route: Route) -> Result<(), KernelError> {
        let mut route = route;
        route.cache_class = self.cache_class(route.prefsrc, route.mtu, route.mtu_lock);
        let (create, excl, replace, append) = match op {
            RouteOp::Add => (true, true, false, false),
            RouteOp::Replace => (true, false, true, false),
            RouteOp::Change => (false, false, true, false),
            RouteOp::Append => (true, false, false, true),
            RouteOp::Prepend => (true, false, false, false),
            RouteOp::Del => unreachable!("deletes are handled apart"),
        };
        let existing = self
            .tables
            .get(&route.table)
            .and_then(|t| t.get(&route.dst))
            .map(|e| e.routes.clone())
            .unwrap_or_default();
        let group: Vec<usize> = existing
            .iter()
            .enumerate()
            .filter(|(_, r)| r.tos == route.tos && r.metric == route.metric)
            .map(|(i, _)| i)
            .collect();
        let mut at = position(&existing, &route, Place::First);
        if let Some(&first) = group.first() {
            if excl {
                return Err(KernelError::new(Errno::Exist));
            }
            let matching = group.iter().copied().find(|&i| {
                let r = &existing[i];
                r.kind == route.kind && same_route(r, &route)
            });
            if replace {
                if let Some(m) = matching {
                    return if m == first {
                        Ok(())
                    } else {
                        Err(KernelError::new(Errno::Exist))
                    };
                }
                self.note_custom_local(&route);
                let t = self.tables.get_mut(&route.table).expect("exists");
                let dst = route.dst;
                t.routes_mut(&dst)[first] = route;
                return Ok(());
            }
            if matching.is_some() {
                return Err(KernelError::new(Errno::Exist));
            }
            at = if append {
                group.last().expect("non-empty") + 1
            } else {
                first
            };
        }
        if !create {
            return Err(KernelError::new(Errno::NoEnt));
        }
        self.note_custom_local(&route);
        let t = self.create_table(route.table, Family::V4);
        t.routes_mut(&route.dst).insert(at, route);
        Ok(())
    }

    fn note_custom_local(&mut self, route: &Route) {
        if route.kind == RouteType::Local && route.protocol != Protocol::KERNEL {
            self.custom_local_routes = true;
        }
    }

    /// `fib_table_delete`.
    fn route_del_v4(&mut self, spec: &RouteSpec) -> Result<(), KernelError> {
        let devs = self.resolve_nexthop_devs(spec)?;
        let Some(table) = self
            .tables
            .get(&spec.table)
            .filter(|t| t.exists(Family::V4))
        else {
            return Err(KernelError::with_extack(
                Errno::Srch,
                "FIB table does not exist",
            ));
        };
        let Some(entry) = table.get(&spec.dst) else {
            return Err(KernelError::new(Errno::Srch));
        };
        let victim = entry.routes.iter().position(|r| {
            r.tos == spec.tos
                && (spec.kind == RouteType::Unspec || r.kind == spec.kind)
                && (spec.scope == Scope::NOWHERE || r.scope == spec.scope)
                && (spec.prefsrc.is_none() || r.prefsrc == spec.prefsrc)
                && (spec.protocol == Protocol::UNSPEC || r.protocol == spec.protocol)
                && spec.metric.is_none_or(|m| m == 0 || m == r.metric)
                // fib_metrics_match: RTAX_MTU as given against the
                // route's, which is 0 when it has none (`mtu 0` matches it).
                && spec.mtu.is_none_or(|m| r.mtu.unwrap_or(0) == m)
                && metrics_match(&spec.metrics, r)
                && nexthops_match_v4(spec, &devs, r)
        });
        let Some(i) = victim else {
            return Err(KernelError::new(Errno::Srch));
        };
        let t = self.tables.get_mut(&spec.table).expect("checked");
        t.routes_mut(&spec.dst).remove(i);
        t.prune(&spec.dst);
        Ok(())
    }

    /// `ip6_route_info_create` + `fib6_nh_init`: validates an IPv6 request.
    fn build_route_v6(&self, spec: &RouteSpec) -> Result<Route, KernelError> {
        check_request_v6(spec)?;
        let devs = self.resolve_nexthop_devs(spec)?;
        let metric = match spec.metric {
            None | Some(0) => IPV6_DEFAULT_METRIC,
            Some(m) => m,
        };
        if spec.kind == RouteType::Unspec {
            return Err(KernelError::with_extack(Errno::Inval, "Invalid route type"));
        }
        let mut route = Route {
            table: spec.table,
            dst: spec.dst,
            tos: 0,
            kind: spec.kind,
            // ip6_route_info_create: RTPROT_UNSPEC becomes RTPROT_BOOT
            // (kernel-checked: `proto 0` shows no proto; IPv4 keeps unspec).
            protocol: if spec.protocol == Protocol::UNSPEC {
                Protocol::BOOT
            } else {
                spec.protocol
            },
            scope: Scope::UNIVERSE,
            metric,
            prefsrc: spec.prefsrc,
            mtu: kept_mtu(spec),
            mtu_lock: spec.mtu_lock && spec.mtu.is_some(),
            metrics: spec.metrics.kept(),
            nexthops: Vec::new(),
            cache_class: 0,
        };
        let requested = requested_paths(spec, devs);
        if is_reject_type(spec.kind) {
            // fib6_nh_init runs for reject routes too: the device (which
            // must have IPv6) and `onlink`'s checks come before
            // fib6_is_reject hangs the route off the loopback device, the
            // device ip6_route_info_create then checks the source against.
            // ip6_route_multipath_add takes each path so; every one is lo
            // without a gateway, so a second one repeats the first
            // (ip6_route_info_append: "File exists", kernel-checked).
            for (index, (nh, dev)) in requested.iter().enumerate() {
                if dev.is_some_and(|d| !self.has_inet6_dev(d)) {
                    return Err(KernelError::new(Errno::NoDev));
                }
                if nh.onlink {
                    self.up_nexthop_link(
                        *dev,
                        || {
                            KernelError::with_extack(
                                Errno::Inval,
                                "Nexthop device required for onlink",
                            )
                        },
                        "Nexthop device is not up",
                    )?;
                }
                self.check_prefsrc_v6(route.prefsrc, LOOPBACK_INDEX)?;
                if index > 0 {
                    return Err(KernelError::new(Errno::Exist));
                }
            }
            // fib6_nh_init sets RTNH_F_ONLINK before fib6_is_reject: the
            // loopback path keeps the first path's `onlink` (kernel-checked).
            let onlink = requested.first().is_some_and(|(nh, _)| nh.onlink);
            route.nexthops.push(Nexthop {
                gateway: None,
                dev: Some(LOOPBACK_INDEX),
                weight: 1,
                flags: NexthopFlags {
                    onlink,
                    ..NexthopFlags::default()
                },
            });
            return Ok(route);
        }
        // ip6_route_multipath_add takes the paths one at a time: each is
        // validated (ip6_route_info_create: the path, then the source), then
        // compared with the paths before it (ip6_route_info_append). The
        // first failure in that order is the answer, so a repeated path
        // is "File exists" even when a later path is unreachable.
        for (index, (nh, dev)) in requested.iter().enumerate() {
            let nexthop = self.check_nexthop_v6(nh, *dev, spec)?;
            if index == 0 {
                self.check_prefsrc_v6(route.prefsrc, nexthop.dev.unwrap_or(LOOPBACK_INDEX))?;
            }
            let repeats = route
                .nexthops
                .iter()
                .any(|m| m.gateway == nexthop.gateway && m.dev == nexthop.dev);
            if repeats {
                return Err(KernelError::new(Errno::Exist));
            }
            route.nexthops.push(nexthop);
        }
        Ok(route)
    }

    /// `ip6_route_info_create`: a preferred source must be one of ours, as
    /// `ipv6_chk_addr(net, src, dev, 0)` finds it: on any link, but for a
    /// host- or link-scoped address (`::1`, `fe80::/10`, whose scope
    /// `ipv6_addr_scope` gives by the address alone) only on `dev`, the
    /// path's device.
    fn check_prefsrc_v6(&self, prefsrc: Option<IpAddr>, dev: LinkIndex) -> Result<(), KernelError> {
        let Some(src) = prefsrc else {
            return Ok(());
        };
        let IpAddr::V6(src6) = src else {
            return Err(KernelError::with_extack(
                Errno::Inval,
                "Invalid source address",
            ));
        };
        let scoped = src6.is_loopback() || (src6.segments()[0] & 0xffc0) == 0xfe80;
        let found = if scoped {
            self.addrs_of_v6(dev).iter().any(|a| a.local == src)
        } else {
            self.is_local_address(&src)
        };
        if found {
            Ok(())
        } else {
            Err(KernelError::with_extack(
                Errno::Inval,
                "Invalid source address",
            ))
        }
    }

    /// `fib6_nh_init` / `ip6_validate_gw`.
    fn check_nexthop_v6(
        &self,
        nh: &NexthopSpec,
        dev: Option<LinkIndex>,
        spec: &RouteSpec,
    ) -> Result<Nexthop, KernelError> {
        if nh.weight == 0 || nh.weight > 256 {
            return Err(KernelError::new(Errno::Inval));
        }
        if dev.is_some_and(|d| !self.has_inet6_dev(d)) {
            // fib6_nh_init: no inet6_dev on a link without IPv6.
            return Err(KernelError::new(Errno::NoDev));
        }
        if nh.onlink {
            self.up_nexthop_link(
                dev,
                || KernelError::with_extack(Errno::Inval, "Nexthop device required for onlink"),
                "Nexthop device is not up",
            )?;
        }
        let mut dev = dev;
        if let Some(gw) = nh.gateway {
            let IpAddr::V6(gw6) = gw else {
                return Err(KernelError::new(Errno::Inval));
            };
            let link_local = (gw6.segments()[0] & 0xffc0) == 0xfe80;
            if let Some(d) = dev {
                let on_dev = self.addrs_of_v6(d).iter().any(|a| a.local == gw);
                if on_dev || (!link_local && self.is_local_address(&gw)) {
                    return Err(KernelError::with_extack(
                        Errno::Inval,
                        "Gateway can not be a local address",
                    ));
                }
            }
            if !link_local {
                if gw6.is_multicast() || gw6.is_unspecified() {
                    return Err(KernelError::with_extack(
                        Errno::Inval,
                        "Invalid gateway address",
                    ));
                }
                if nh.onlink {
                    self.check_gateway_onlink_v6(&gw, dev.expect("checked above"))?;
                } else {
                    dev = Some(self.check_gateway_v6(&gw, dev, spec.table)?);
                }
            }
            let Some(d) = dev else {
                return Err(KernelError::with_extack(
                    Errno::Inval,
                    "Egress device not specified",
                ));
            };
            if matches!(self.links[&d].kind, LinkKind::Loopback) {
                return Err(KernelError::with_extack(
                    Errno::Inval,
                    "Egress device can not be loopback device for this route",
                ));
            }
            if self.is_local_address(&gw) {
                return Err(KernelError::with_extack(
                    Errno::Inval,
                    "Gateway can not be a local address",
                ));
            }
        }
        let (d, link) = self.up_nexthop_link(
            dev,
            || KernelError::new(Errno::NoDev),
            "Nexthop device is not up",
        )?;
        // fib6_nh_init: RTF_LOCAL routes never take LINKDOWN; a request's
        // anycast route has no RTF_ANYCAST and does (kernel-checked:
        // `route add anycast 2001:db8:5::/48 dev fdv0` without carrier is
        // linkdown, seed 1796591314164075810).
        let local_like = spec.kind == RouteType::Local;
        Ok(live_nexthop(
            nh.gateway,
            d,
            nh.weight,
            nh.onlink,
            !local_like && !link.carrier,
        ))
    }

    /// `ip6_route_check_nh`: the gateway must be on a connected route.
    fn check_gateway_v6(
        &self,
        gw: &IpAddr,
        dev: Option<LinkIndex>,
        table: TableId,
    ) -> Result<LinkIndex, KernelError> {
        let unreach = KernelError::new(Errno::HostUnreach);
        let flow = Flow {
            oif: dev.unwrap_or(0),
            ..Flow::output(*gw)
        }
        .with_v6_output_dev();
        let usable = |res: &crate::read::lookup::FibResult<'_>| {
            let nh = res.nexthop()?;
            if reject_errno(res.kind).is_some()
                || res.kind == RouteType::Throw
                || nh.gateway.is_some()
            {
                return None;
            }
            let d = nh.dev?;
            if dev.is_some_and(|want| want != d) {
                return None;
            }
            // fib6_is_reject: a unicast route through the loopback is a
            // reject route to ip6_route_check_nh (kernel-checked: a gateway
            // covered only by lo's `default dev lo` prefix route is "No
            // route to host").
            if res.kind == RouteType::Unicast
                && self
                    .links
                    .get(&d)
                    .is_some_and(|l| matches!(l.kind, LinkKind::Loopback))
            {
                return None;
            }
            Some(d)
        };
        if let Some(t) = self.tables.get(&table) {
            if let Ok(res) = self.table_lookup(t, table, &flow) {
                if let Some(d) = usable(&res) {
                    return Ok(d);
                }
            }
        }
        let res = self
            .fib6_lookup_for_gateway(&flow)
            .map_err(|_| unreach.clone())?;
        usable(&res).ok_or(unreach)
    }

    /// `ip6_route_check_nh_onlink`.
    fn check_gateway_onlink_v6(&self, gw: &IpAddr, dev: LinkIndex) -> Result<(), KernelError> {
        // ip6_nh_lookup_table without RT6_LOOKUP_F_IFACE: the device is a
        // preference, the lowest metric still wins.
        let flow = Flow {
            oif: dev,
            v6_dev: dev,
            v6_strict: false,
            ..Flow::output(*gw)
        };
        let Some(t) = self.tables.get(&TABLE_MAIN) else {
            return Ok(());
        };
        if let Ok(res) = self.table_lookup(t, TABLE_MAIN, &flow) {
            let is_reject = reject_errno(res.kind).is_some() || res.kind == RouteType::Throw;
            let nh_dev = res.nexthop().and_then(|n| n.dev);
            if !is_reject
                && !res.route.dst.is_default()
                && (res.kind != RouteType::Unicast || nh_dev != Some(dev))
            {
                return Err(KernelError::with_extack(
                    Errno::Inval,
                    "Nexthop has invalid gateway or device mismatch",
                ));
            }
        }
        Ok(())
    }

    /// `fib6_add_rt2node`: IPv6 routes sorted by metric; gateway routes of
    /// the same metric become ECMP siblings (one multipath route here).
    fn route_insert_v6(&mut self, op: RouteOp, route: Route) -> Result<(), KernelError> {
        let mut route = route;
        route.cache_class = self.cache_class(route.prefsrc, route.mtu, route.mtu_lock);
        // ip6_route_multipath_add inserts the paths one by one: a path that
        // repeats an earlier one of the same request is a duplicate.
        let repeats = route.nexthops.iter().enumerate().any(|(i, n)| {
            route.nexthops[..i]
                .iter()
                .any(|m| m.gateway == n.gateway && m.dev == n.dev)
        });
        if repeats {
            return Err(KernelError::new(Errno::Exist));
        }
        let ecmp_able = |r: &Route| {
            r.kind == RouteType::Unicast && r.nexthops.iter().all(|n| n.gateway.is_some())
        };
        let existing = self
            .tables
            .get(&route.table)
            .and_then(|t| t.get(&route.dst))
            .map(|e| e.routes.clone())
            .unwrap_or_default();
        let same_metric: Vec<usize> = existing
            .iter()
            .enumerate()
            .filter(|(_, r)| r.metric == route.metric)
            .map(|(i, _)| i)
            .collect();
        let seq = self.next_table_seq();
        match op {
            RouteOp::Add if !same_metric.is_empty() => Err(KernelError::new(Errno::Exist)),
            RouteOp::Replace | RouteOp::Change => {
                let target = same_metric
                    .iter()
                    .copied()
                    .find(|&i| ecmp_able(&existing[i]) == ecmp_able(&route))
                    .or(same_metric.first().copied());
                let t = self.tables.entry(route.table).or_default();
                match target {
                    Some(i) => {
                        let dst = route.dst;
                        t.routes_mut(&dst)[i] = route;
                        Ok(())
                    }
                    None if op == RouteOp::Replace => {
                        t.create(Family::V6, seq);
                        let mut routes = t.routes_mut(&route.dst);
                        let at = position(&routes, &route, Place::Last);
                        routes.insert(at, route);
                        Ok(())
                    }
                    // fib6_add_1 finds no node for the prefix: its extack. The
                    // tree's root (::/0) is always there, and a node with
                    // routes of other metrics too: fib6_add_rt2node's bare
                    // ENOENT.
                    None if existing.is_empty() && route.dst.len() > 0 => {
                        Err(KernelError::with_extack(
                            Errno::NoEnt,
                            "Can not replace route - no match found",
                        ))
                    }
                    None => Err(KernelError::new(Errno::NoEnt)),
                }
            }
            _ => {
                // add (no same metric), append, prepend.
                for &i in &same_metric {
                    let r = &existing[i];
                    let dup = route.nexthops.iter().any(|n| {
                        r.nexthops
                            .iter()
                            .any(|m| m.gateway == n.gateway && m.dev == n.dev)
                    });
                    if dup {
                        return Err(KernelError::new(Errno::Exist));
                    }
                }
                let sibling_of = if ecmp_able(&route) {
                    same_metric
                        .iter()
                        .copied()
                        .find(|&i| ecmp_able(&existing[i]))
                } else {
                    None
                };
                let t = self.tables.entry(route.table).or_default();
                t.create(Family::V6, seq);
                let mut routes = t.routes_mut(&route.dst);
                match sibling_of {
                    Some(i) => routes[i].nexthops.extend(route.nexthops),
                    None => {
                        let at = position(&routes, &route, Place::Last);
                        routes.insert(at, route);
                    }
                }
                Ok(())
            }
        }
    }

    /// `ip6_route_del`: the first route (or, with a gateway, the one path)
    /// matching the given dev/gateway/metric/protocol.
    fn route_del_v6(&mut self, spec: &RouteSpec) -> Result<(), KernelError> {
        // rtm_to_fib6_config refuses RTA_VIA (a gateway of another family)
        // for a delete as for an add; a path's RTA_VIA inside
        // RTA_MULTIPATH is not looked at there.
        if !spec.multipath
            && spec
                .nexthops
                .iter()
                .any(|nh| matches!(nh.gateway, Some(IpAddr::V4(_))))
        {
            return Err(KernelError::with_extack(
                Errno::Inval,
                "IPv6 does not support RTA_VIA attribute",
            ));
        }
        let devs = self.resolve_nexthop_devs(spec)?;
        let wanted: Vec<(Option<IpAddr>, Option<LinkIndex>)> = if spec.nexthops.is_empty() {
            vec![(None, None)]
        } else {
            spec.nexthops
                .iter()
                .zip(&devs)
                .map(|(n, d)| (n.gateway, *d))
                .collect()
        };
        let mut result = Ok(());
        for (gw, dev) in wanted {
            if let Err(e) = self.route_del_v6_one(spec, gw, dev) {
                result = Err(e);
            }
        }
        result
    }

    fn route_del_v6_one(
        &mut self,
        spec: &RouteSpec,
        gw: Option<IpAddr>,
        dev: Option<LinkIndex>,
    ) -> Result<(), KernelError> {
        let srch = KernelError::new(Errno::Srch);
        // ip6_route_del: fib6_get_table first; main and local always exist
        // (fib6_tables_init), the others once a route was asked for there.
        let table_exists = matches!(spec.table, TABLE_MAIN | TABLE_LOCAL)
            || self
                .tables
                .get(&spec.table)
                .is_some_and(|t| t.exists(Family::V6));
        if !table_exists {
            return Err(KernelError::with_extack(
                Errno::Srch,
                "FIB table does not exist",
            ));
        }
        let has_routes = self
            .tables
            .get(&spec.table)
            .and_then(|t| t.get(&spec.dst))
            .is_some_and(|entry| !entry.routes.is_empty());
        if !has_routes && spec.dst.len() == 0 {
            // fib6_locate finds the tree's root for ::/0, whose only route
            // without a default one is fib6_null_entry (dev lo, proto
            // kernel, metric ~0) in every table (fib6_new_table roots each
            // at it; kernel-checked in table 100): if it passes
            // ip6_route_del's filters,
            // __ip6_del_rt refuses to delete it with ENOENT.
            let loopback = self.link_by_name("lo").map(|l| l.index);
            let null_entry_matches = spec.metric.is_none_or(|m| m == 0 || m == u32::MAX)
                && (spec.protocol == Protocol::UNSPEC || spec.protocol == Protocol::KERNEL)
                && dev.is_none_or(|d| Some(d) == loopback)
                // Its gateway is :: (kernel-checked: `via ::` matches it).
                && gw.is_none_or(|g| g.is_unspecified());
            return Err(if null_entry_matches {
                KernelError::new(Errno::NoEnt)
            } else {
                srch
            });
        }
        let Some(table) = self.tables.get_mut(&spec.table) else {
            return Err(srch);
        };
        if table.get(&spec.dst).is_none() {
            return Err(srch);
        }
        let mut routes = table.routes_mut(&spec.dst);
        let mut hit = None;
        'outer: for (ri, r) in routes.iter().enumerate() {
            if spec.metric.is_some_and(|m| m != 0 && m != r.metric) {
                continue;
            }
            if spec.protocol != Protocol::UNSPEC && spec.protocol != r.protocol {
                continue;
            }
            for (ni, n) in r.nexthops.iter().enumerate() {
                if dev.is_some_and(|d| n.dev != Some(d)) {
                    continue;
                }
                // ip6_route_del compares the gateway given with the path's
                // fib_nh_gw6, which is :: on a path without one.
                if let Some(g) = gw {
                    if n.gateway.unwrap_or(Family::V6.unspecified()) != g {
                        continue;
                    }
                }
                hit = Some((ri, ni));
                break 'outer;
            }
        }
        let Some((ri, ni)) = hit else {
            table.prune(&spec.dst);
            return Err(srch);
        };
        if gw.is_some() && routes[ri].nexthops.len() > 1 {
            routes[ri].nexthops.remove(ni);
        } else {
            routes.remove(ri);
        }
        table.prune(&spec.dst);
        Ok(())
    }

    /// `fib_new_table`: the table of `id` for `family`, created if needed.
    /// While IPv4 has no rules, creating table local creates main first
    /// (local is merged into it), so a delete in main then finds a table.
    pub(crate) fn create_table(&mut self, id: TableId, family: Family) -> &mut Table {
        if family == Family::V4 && id == TABLE_LOCAL && !self.custom_rules_v4 {
            let exists = self
                .tables
                .get(&TABLE_MAIN)
                .is_some_and(|t| t.exists(Family::V4));
            if !exists {
                let seq = self.next_table_seq();
                self.tables
                    .entry(TABLE_MAIN)
                    .or_default()
                    .create(Family::V4, seq);
            }
        }
        let seq = self.next_table_seq();
        let t = self.tables.entry(id).or_default();
        t.create(family, seq);
        t
    }

    /// `fib_magic(RTM_NEWROUTE)` with NLM_F_CREATE|NLM_F_APPEND: adds a
    /// route the kernel makes unless an identical one is there.
    pub(crate) fn add_kernel_route(&mut self, route: Route) {
        let mut route = route;
        route.cache_class = self.cache_class(route.prefsrc, route.mtu, route.mtu_lock);
        // fib_check_nh / fib6_nh_init: a path on a link without carrier is
        // LINKDOWN from the start (kernel-checked: `local A dev X` on a
        // down link shows no linkdown).
        let local_like = never_linkdown(&route);
        for nh in route.nexthops.iter_mut() {
            let carrier = nh
                .dev
                .and_then(|d| self.links.get(&d))
                .is_some_and(|l| l.carrier);
            nh.flags.linkdown = !local_like && !carrier;
        }
        if let Some(src) = route.prefsrc {
            // fib_create_info -> fib_valid_prefsrc, whose refusal fib_magic
            // ignores: a source that table local does not call local (an
            // address that is another link's broadcast address) leaves the
            // address with its local route only (kernel-checked).
            if route.family() == Family::V4 && !self.valid_prefsrc_v4(&route, src) {
                return;
            }
        }
        let t = self.create_table(route.table, route.family());
        let dst = route.dst;
        // Place::Last: after the routes of the same TOS and metric.
        let order = |r: &Route| (std::cmp::Reverse(r.tos), r.metric);
        match dst.family() {
            Family::V4 => t.insert_unless_same(&dst, route, same_route, route_fingerprint, order),
            Family::V6 => {
                t.insert_unless_same(&dst, route, same_path_v6, path_fingerprint_v6, order)
            }
        };
    }

    /// Removes a route identical to `route`, if present.
    pub(crate) fn remove_exact_route(&mut self, route: &Route) {
        if let Some(t) = self.tables.get_mut(&route.table) {
            if t.get(&route.dst).is_none() {
                return;
            }
            let mut routes = t.routes_mut(&route.dst);
            if let Some(i) = routes.iter().position(|r| same_route(r, route)) {
                routes.remove(i);
            }
            t.prune(&route.dst);
        }
    }

    /// Applies `f` to every route of every table, dropping routes for which
    /// it returns false.
    pub(crate) fn retain_routes(&mut self, mut f: impl FnMut(&mut Route) -> bool) {
        for t in self.tables.values_mut() {
            for e in t.v4.entries_mut() {
                e.retain_routes(&mut f);
            }
            for e in t.v6.entries_mut() {
                e.retain_routes(&mut f);
            }
            t.v4.prune_all();
            t.v6.prune_all();
        }
    }

    /// `fib_sync_down_dev` + flush: routes through a link that went down
    /// (or away) die; multipath routes lose the path and die with the last.
    /// Host-scope (local) IPv4 routes survive a plain down.
    ///
    /// A link without an in_device (MTU under 68) keeps its IPv4 routes
    /// down: fib_netdev_event returns before fib_disable_ip when
    /// `__in_dev_get_rtnl` finds none, for every event but UNREGISTER.
    /// Kernel-checked (6.18): `route add 10.9.0.0/16 dev fd1` then `link
    /// set fd1 mtu 67 down` keeps `10.9.0.0/16 dev fd1 scope link`.
    pub(crate) fn flush_routes_of_dev(&mut self, index: LinkIndex, unregister: bool) {
        let keeps_ipv4 = !unregister && self.ipv4_off.contains(&index);
        self.retain_routes(|r| {
            if !r.nexthops.iter().any(|n| n.dev == Some(index)) {
                return true;
            }
            if keeps_ipv4 && r.family() == Family::V4 {
                return true;
            }
            if !unregister {
                // Host-scope IPv4 routes (local addresses) outlive a down link;
                // IPv6 local routes go with their addresses, not here.
                let v4_host = r.family() == Family::V4 && r.scope == Scope::HOST;
                let v6_local = r.family() == Family::V6
                    && r.kind == RouteType::Local
                    && r.protocol == Protocol::KERNEL;
                if v4_host || v6_local {
                    return true;
                }
            }
            if r.nexthops.len() == 1 || (unregister && r.family() == Family::V4) {
                return false;
            }
            if unregister {
                // IPv6 siblings are separate routes: only the one through the link goes.
                r.nexthops.retain(|n| n.dev != Some(index));
                return true;
            }
            for n in r.nexthops.iter_mut() {
                if n.dev == Some(index) {
                    n.flags.dead = true;
                }
            }
            !r.nexthops.iter().all(|n| n.flags.dead)
        });
    }

    /// `fib_sync_down_dev(dev, NETDEV_DOWN, force)`: every IPv4 path
    /// through the link dies, host scope included (force makes the scope
    /// checked `-1`); a multipath route keeps its other paths, marked as
    /// they were, and dies with its last live one.
    pub(crate) fn flush_v4_routes_of_dev_forced(&mut self, index: LinkIndex) {
        self.retain_routes(|r| {
            if r.family() != Family::V4 || !r.nexthops.iter().any(|n| n.dev == Some(index)) {
                return true;
            }
            for n in r.nexthops.iter_mut() {
                if n.dev == Some(index) {
                    // NETDEV_DOWN falls through to NETDEV_CHANGE's flag.
                    n.flags.dead = true;
                    n.flags.linkdown = true;
                }
            }
            r.nexthops.len() > 1 && !r.nexthops.iter().all(|n| n.flags.dead)
        });
    }

    /// `fib_sync_up(dev, RTNH_F_DEAD)` on an IPv4 address added to an up
    /// link: its dead IPv4 paths live again, and lose `linkdown` when the
    /// link has carrier.
    pub(crate) fn revive_v4_nexthops_of_dev(&mut self, index: LinkIndex, carrier: bool) {
        self.retain_routes(|r| {
            if r.family() == Family::V4 {
                for n in r.nexthops.iter_mut() {
                    if n.dev == Some(index) && n.flags.dead {
                        n.flags.dead = false;
                        if carrier {
                            n.flags.linkdown = false;
                        }
                    }
                }
            }
            true
        });
    }

    /// Every IPv6 route through a link goes (IPv6 turned off on it); multipath
    /// routes lose that path.
    pub(crate) fn flush_routes_of_dev_v6(&mut self, index: LinkIndex) {
        self.flush_family_routes_of_dev(index, Family::V6);
    }

    /// Every route of `family` through a link goes (that family turned off
    /// on it, local routes included); multipath routes lose that path.
    pub(crate) fn flush_family_routes_of_dev(&mut self, index: LinkIndex, family: Family) {
        self.retain_routes(|r| {
            if r.family() != family || !r.nexthops.iter().any(|n| n.dev == Some(index)) {
                return true;
            }
            r.nexthops.retain(|n| n.dev != Some(index));
            !r.nexthops.is_empty()
        });
    }

    /// `fib_sync_up`: dead paths through a link that came up live again.
    /// Not IPv4's on a link without an in_device (see
    /// [`Fib::flush_routes_of_dev`]: fib_netdev_event does nothing there).
    pub(crate) fn revive_nexthops_of_dev(&mut self, index: LinkIndex) {
        let keeps_ipv4 = self.ipv4_off.contains(&index);
        self.retain_routes(|r| {
            if keeps_ipv4 && r.family() == Family::V4 {
                return true;
            }
            for n in r.nexthops.iter_mut() {
                if n.dev == Some(index) {
                    n.flags.dead = false;
                }
            }
            true
        });
    }

    /// Sets or clears RTNH_F_LINKDOWN on paths through a link; not on
    /// IPv4's through a link without an in_device (see
    /// [`Fib::flush_routes_of_dev`]).
    pub(crate) fn set_linkdown_flags(&mut self, index: LinkIndex, linkdown: bool) {
        let keeps_ipv4 = self.ipv4_off.contains(&index);
        self.retain_routes(|r| {
            if keeps_ipv4 && r.family() == Family::V4 {
                return true;
            }
            let local_like = never_linkdown(r);
            for n in r.nexthops.iter_mut() {
                if n.dev == Some(index) && !local_like {
                    n.flags.linkdown = linkdown;
                }
            }
            true
        });
    }

    /// `fib_sync_down_addr`: IPv4 routes of table main preferring a
    /// vanished source die; it skips every fib_info of another table
    /// (`fi->fib_tb_id != tb_id`; kernel-checked: after `addr del` or
    /// `link del` of the source's link, `10.20.0.0/16 dev lo table 100 src
    /// S` stays, as do table default's and local's, seed
    /// 1796594542185636496).
    pub(crate) fn flush_routes_with_prefsrc(&mut self, addr: &IpAddr) {
        if !matches!(addr, IpAddr::V4(_)) {
            return;
        }
        self.retain_routes(|r| r.table != TABLE_MAIN || r.prefsrc != Some(*addr));
    }
}

/// The MTU metric a route keeps: ip_metrics_convert stores `mtu 0` as
/// no value, and the kernel reports only values that are not zero
/// (rtnetlink_put_metrics), so `mtu 0` is shown as nothing; a locked one
/// is still shown (`mtu lock 0`: print_rta_metrics prints locked metrics
/// without a value), as [`RouteMetrics::shown`] does for the others.
fn kept_mtu(spec: &RouteSpec) -> Option<u32> {
    spec.mtu.filter(|&mtu| mtu != 0 || spec.mtu_lock)
}

/// `fib_nh_match`: the request's paths against a route's.
///
/// With `RTA_MULTIPATH` the kernel walks the route's paths, each against
/// the request's next one (`for_nexthops(fi)`): a request with fewer paths
/// runs out (`!rtnh_ok` is -EINVAL, no match), the paths a request has
/// beyond the route's are never looked at, a path without a device or a
/// gateway matches any, and weights (`rtnh_hops`) are not compared.
/// Kernel-checked (6.18): after `route add P dev d0`, `route del P nexthop
/// nexthop via G dev d1` deletes it; a two-path route is deleted by its
/// paths with other weights or with a third path after them, not by its
/// first path alone.
fn nexthops_match_v4(spec: &RouteSpec, devs: &[Option<LinkIndex>], r: &Route) -> bool {
    if spec.multipath {
        if spec.nexthops.len() < r.nexthops.len() {
            return false;
        }
        return r
            .nexthops
            .iter()
            .zip(spec.nexthops.iter().zip(devs))
            .all(|(have, (want, dev))| {
                dev.is_none_or(|d| have.dev == Some(d))
                    && want.gateway.is_none_or(|g| have.gateway == Some(g))
            });
    }
    let Some(want) = spec.nexthops.first() else {
        return true;
    };
    let dev = devs.first().copied().flatten();
    if dev.is_none() && want.gateway.is_none() {
        return true;
    }
    let Some(have) = r.nexthops.first() else {
        return false;
    };
    dev.is_none_or(|d| have.dev == Some(d)) && want.gateway.is_none_or(|g| have.gateway == Some(g))
}
