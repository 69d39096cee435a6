//! What the route cache needs from the FIB, as a trait, with an adapter
//! over today's [`Fib`].
//!
//! The FIB's data-path answer ([`Forward`](fibre_fib::Forward)) has no stable nexthop id, so
//! the cache keys nexthops by (table, device, gateway, cache class)
//! ([`NexthopKey`]), and asks for the rest of a route (preferred source,
//! MTU, matched prefix) only on a cache miss, through
//! [`RouteSource::describe`]. Both families through one code path, over
//! [`CacheFamily`].

use std::net::{IpAddr, Ipv6Addr};
use std::sync::RwLock;

use fibre_fib::shared::SharedFib;
use fibre_fib::{Errno, Fib, Prefix, RouteGetRequest, RouteType, TableId};
use fibre_rcu::ReadGuard;

use crate::family::CacheFamily;
use crate::route::{kind_code, RouteData};

/// A nexthop's identity as the cache sees it: until the FIB exports a
/// stable nexthop id, (family, table, output device, gateway).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NexthopKey {
    /// 4 or 6 (IPv4 and IPv6 tables share ids, and on-link nexthops of
    /// both families share gateway 0).
    pub family: u8,
    /// Table of the route that chose this nexthop.
    pub table: TableId,
    /// Output device (ifindex).
    pub dev: u32,
    /// Gateway as an integer key (IPv4 in the low 32 bits); 0: on link.
    pub gateway: u128,
    /// The route's cache class ([`fibre_fib::Route::cache_class`]): routes
    /// through one gateway with different `src` or `mtu` do not share.
    pub class: u16,
    /// The answer's type (unicast, local, broadcast, multicast...): an
    /// on-link multicast answer and a unicast one leave by the same device
    /// with no gateway, but are different routes.
    pub kind: RouteType,
}

impl NexthopKey {
    /// The key of a lookup answer of family `I`.
    ///
    /// ```
    /// use fibre_base::Ipv4;
    /// use fibre_fib::{Forward, RouteType};
    /// use fibre_route::NexthopKey;
    /// let fwd = Forward { gateway: 0x0a00_0002, dev: 2, table: 254, kind: RouteType::Unicast, cache_class: 3 };
    /// let k = NexthopKey::of::<Ipv4>(&fwd);
    /// assert_eq!((k.family, k.table, k.dev, k.gateway, k.class), (4, 254, 2, 0x0a00_0002, 3));
    /// ```
    #[inline]
    pub fn of<I: CacheFamily>(fwd: &I::Forward) -> NexthopKey {
        I::nexthop(fwd)
    }
}

/// What a cache miss learns about a flow's route beyond [`Forward`](fibre_fib::Forward).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteDetails {
    /// The route's data (device, gateway, source, MTU, type).
    pub data: RouteData,
    /// The FIB prefix that matched (for per-prefix invalidation).
    pub matched: Prefix,
}

/// What the route cache needs from a FIB, for either family `I`. Every
/// call runs inside a read section of the cache's RCU domain (`guard`): a
/// FIB published by RCU ([`SharedFib`]) is read through it with no lock
/// and no counter.
pub trait RouteSource: Send + Sync {
    /// The data-path output lookup (no allocation expected).
    fn lookup<I: CacheFamily>(
        &self,
        guard: &ReadGuard<'_>,
        key: &I::FlowKey,
    ) -> Result<I::Forward, Errno>;
    /// The full route for a flow whose lookup answered `fwd` (called on
    /// cache misses only: may be slow).
    fn describe<I: CacheFamily>(
        &self,
        guard: &ReadGuard<'_>,
        key: &I::FlowKey,
        fwd: &I::Forward,
    ) -> Result<RouteDetails, Errno>;
    /// The source address for an IPv6 flow leaving by `dev` (RFC 6724, as
    /// `ip -6 route get` picks it). IPv6 only: IPv4 picks the source per
    /// nexthop (the kernel's `nh_saddr`), so its routes carry it, while
    /// IPv6 picks it per destination after the lookup (`ipv6_dev_get_saddr`
    /// in `ip6_route_output_flags`' callers).
    fn select_source_v6(
        &self,
        guard: &ReadGuard<'_>,
        dev: u32,
        dst: Ipv6Addr,
    ) -> Result<Option<Ipv6Addr>, Errno>;
    /// The data-path input lookup for a packet received on link `iif`
    /// (`ip route get DST from SRC iif DEV`; no allocation expected): local
    /// delivery and broadcasts answer with device 1 (`lo`).
    fn lookup_input<I: CacheFamily>(
        &self,
        guard: &ReadGuard<'_>,
        iif: u32,
        key: &I::FlowKey,
    ) -> Result<I::Forward, Errno>;
    /// The full input route for a packet whose input lookup answered
    /// `fwd` (cache misses only: may be slow).
    fn describe_input<I: CacheFamily>(
        &self,
        guard: &ReadGuard<'_>,
        iif: u32,
        key: &I::FlowKey,
        fwd: &I::Forward,
    ) -> Result<RouteDetails, Errno>;
    /// [`RouteSource::lookup`] of each of `keys` into `out` (slices of one
    /// length), in one read of the FIB; no allocation expected. By default
    /// one key at a time.
    fn lookup_burst<I: CacheFamily>(
        &self,
        guard: &ReadGuard<'_>,
        keys: &[I::FlowKey],
        out: &mut [Result<I::Forward, Errno>],
    ) {
        for (key, answer) in keys.iter().zip(out) {
            *answer = self.lookup::<I>(guard, key);
        }
    }
    /// [`RouteSource::lookup_input`] of each of `keys` received on `iif`
    /// into `out` (slices of one length); no allocation expected. By
    /// default one key at a time.
    fn lookup_input_burst<I: CacheFamily>(
        &self,
        guard: &ReadGuard<'_>,
        iif: u32,
        keys: &[I::FlowKey],
        out: &mut [Result<I::Forward, Errno>],
    ) {
        for (key, answer) in keys.iter().zip(out) {
            *answer = self.lookup_input::<I>(guard, iif, key);
        }
    }
}

/// A FIB the cache can read inside a read section: the one
/// [`RouteSource`] implementation serves every way of holding a [`Fib`].
pub trait FibAccess: Send + Sync {
    /// Runs `f` on the FIB as of now.
    ///
    /// # Errors
    /// `Inval` if the FIB cannot be read under `guard` (an RCU-published
    /// FIB and a guard of another domain).
    fn with_fib<R>(&self, guard: &ReadGuard<'_>, f: impl FnOnce(&Fib) -> R) -> Result<R, Errno>;
}

/// A FIB owned by the cache (tests, a FIB that never changes).
impl FibAccess for Fib {
    fn with_fib<R>(&self, _: &ReadGuard<'_>, f: impl FnOnce(&Fib) -> R) -> Result<R, Errno> {
        Ok(f(self))
    }
}

/// A FIB that changes while the cache runs, behind a lock (tests and
/// control paths; the data path wants [`SharedFib`]).
impl FibAccess for RwLock<Fib> {
    fn with_fib<R>(&self, _: &ReadGuard<'_>, f: impl FnOnce(&Fib) -> R) -> Result<R, Errno> {
        Ok(f(&self.read().unwrap_or_else(|e| e.into_inner())))
    }
}

/// The RCU-published FIB: read with no lock under the caller's guard,
/// which must come from [`SharedFib::domain`] (make the cache in that
/// domain).
impl FibAccess for SharedFib {
    fn with_fib<R>(&self, guard: &ReadGuard<'_>, f: impl FnOnce(&Fib) -> R) -> Result<R, Errno> {
        let snapshot = self.snapshot(guard).map_err(|_| Errno::Inval)?;
        Ok(f(snapshot.fib()))
    }
}

impl<F: FibAccess> RouteSource for F {
    #[inline]
    fn lookup<I: CacheFamily>(
        &self,
        guard: &ReadGuard<'_>,
        key: &I::FlowKey,
    ) -> Result<I::Forward, Errno> {
        self.with_fib(guard, |fib| I::lookup_output(fib, key))?
    }

    fn describe<I: CacheFamily>(
        &self,
        guard: &ReadGuard<'_>,
        key: &I::FlowKey,
        fwd: &I::Forward,
    ) -> Result<RouteDetails, Errno> {
        self.with_fib(guard, |fib| describe_output::<I>(fib, key, fwd))?
    }

    fn select_source_v6(
        &self,
        guard: &ReadGuard<'_>,
        dev: u32,
        dst: Ipv6Addr,
    ) -> Result<Option<Ipv6Addr>, Errno> {
        self.with_fib(guard, |fib| fib.select_source_v6(dev, dst))
    }

    #[inline]
    fn lookup_input<I: CacheFamily>(
        &self,
        guard: &ReadGuard<'_>,
        iif: u32,
        key: &I::FlowKey,
    ) -> Result<I::Forward, Errno> {
        self.with_fib(guard, |fib| I::lookup_input(fib, iif, key))?
    }

    fn describe_input<I: CacheFamily>(
        &self,
        guard: &ReadGuard<'_>,
        iif: u32,
        key: &I::FlowKey,
        fwd: &I::Forward,
    ) -> Result<RouteDetails, Errno> {
        self.with_fib(guard, |fib| describe_received::<I>(fib, iif, key, fwd))?
    }

    /// The FIB's burst ([`fibre_fib::Fib::lookup_output_burst_v4`]) under
    /// one read of the FIB.
    fn lookup_burst<I: CacheFamily>(
        &self,
        guard: &ReadGuard<'_>,
        keys: &[I::FlowKey],
        out: &mut [Result<I::Forward, Errno>],
    ) {
        if let Err(e) = self.with_fib(guard, |fib| I::lookup_output_burst(fib, keys, out)) {
            out.fill(Err(e));
        }
    }

    /// The FIB's input burst ([`fibre_fib::Fib::lookup_input_burst_v4`])
    /// under one read of the FIB.
    fn lookup_input_burst<I: CacheFamily>(
        &self,
        guard: &ReadGuard<'_>,
        iif: u32,
        keys: &[I::FlowKey],
        out: &mut [Result<I::Forward, Errno>],
    ) {
        if let Err(e) = self.with_fib(guard, |fib| I::lookup_input_burst(fib, iif, keys, out)) {
            out.fill(Err(e));
        }
    }
}

/// `ip route get` for a flow, and the route data it implies.
fn describe(
    fib: &Fib,
    req: RouteGetRequest,
    dev: u32,
    gateway: Option<IpAddr>,
    kind: RouteType,
) -> Result<RouteDetails, Errno> {
    let answer = fib.route_get(&req).map_err(|e| e.errno)?;
    let dev_mtu = fib.link(dev).map(|l| l.mtu).ok_or(Errno::NoDev)?;
    let input = req.iif.is_some();
    // IPv4 picks the source per nexthop (the kernel's nh_saddr), so it can
    // be cached with it; IPv6 picks it per destination unless the route
    // names one. An input route sends nothing from us: it carries what
    // route_get's input answer shows (none for IPv4, the route's `src`
    // for IPv6).
    let per_flow_src = !input && req.dst.is_ipv6() && answer.route.prefsrc.is_none();
    let src = if per_flow_src { None } else { answer.prefsrc };
    let mut data = RouteData::new(
        dev,
        gateway,
        src,
        answer.mtu.unwrap_or(dev_mtu).min(dev_mtu),
    );
    data.family = if req.dst.is_ipv6() { 6 } else { 4 };
    if per_flow_src {
        data.flags |= crate::route::flags::SRC_PER_FLOW;
    }
    if answer.route.mtu_lock {
        data.flags |= crate::route::flags::MTU_LOCKED;
    }
    data.kind = kind_code(kind);
    // Input answers on lo (local, broadcast, IPv6 anycast) are delivered
    // to this host too (the kernel's RTCF_LOCAL).
    if kind == RouteType::Local || (input && dev == LOOPBACK) {
        data.flags |= crate::route::flags::LOCAL;
    }
    Ok(RouteDetails {
        data,
        matched: answer.route.dst,
    })
}

/// The device local delivery answers with.
const LOOPBACK: u32 = 1;

fn oif_name(fib: &Fib, oif: u32) -> Result<Option<String>, Errno> {
    if oif == 0 {
        return Ok(None);
    }
    Ok(Some(fib.link(oif).ok_or(Errno::NoDev)?.name.clone()))
}

/// `ip route get DST from SRC iif DEV [tos mark ipproto sport dport]`
/// for a received packet: what [`Fib::lookup_input_batch_v4`] answered,
/// with the rest of the route.
fn input_request(
    fib: &Fib,
    iif: u32,
    dst: IpAddr,
    src: Option<IpAddr>,
) -> Result<RouteGetRequest, Errno> {
    let mut req = RouteGetRequest::to(dst);
    req.src = src;
    req.iif = Some(fib.link(iif).ok_or(Errno::NoDev)?.name.clone());
    Ok(req)
}

/// The L4 fields of a key as `ip route get` takes them (rules may select
/// by them): only for the protocols it accepts (TCP, UDP, the family's
/// ICMP), since it refuses others ("Unsupported ip proto") where the data
/// path routes them all; for those the lookup's own answer stands.
fn l4_fields(req: &mut RouteGetRequest, proto: u8, sport: u16, dport: u16) {
    let icmp = if req.dst.is_ipv6() { 58 } else { 1 };
    if matches!(proto, 6 | 17) || proto == icmp {
        req.ipproto = Some(proto);
        req.sport = Some(sport);
        req.dport = Some(dport);
    }
}

/// [`RouteSource::describe_input`] over a [`Fib`]: `ip route get DST
/// from SRC iif DEV` with the packet's mark, TOS and L4 fields.
fn describe_received<I: CacheFamily>(
    fib: &Fib,
    iif: u32,
    key: &I::FlowKey,
    fwd: &I::Forward,
) -> Result<RouteDetails, Errno> {
    let flow = I::flow(key);
    let src = I::received_source(key).map(Into::into);
    let mut req = input_request(fib, iif, flow.dst.into(), src)?;
    req.mark = flow.mark;
    req.tos = flow.tos;
    l4_fields(&mut req, flow.proto, flow.sport, flow.dport);
    let fwd = I::forward(fwd);
    describe(fib, req, fwd.dev, fwd.gateway.map(Into::into), fwd.kind)
}

/// [`RouteSource::describe`] over a [`Fib`]: `ip route get DST [from SRC]
/// [oif DEV]` with the flow's mark and TOS.
fn describe_output<I: CacheFamily>(
    fib: &Fib,
    key: &I::FlowKey,
    fwd: &I::Forward,
) -> Result<RouteDetails, Errno> {
    let flow = I::flow(key);
    let mut req = RouteGetRequest::to(flow.dst.into());
    req.src = flow.src.map(Into::into);
    req.mark = flow.mark;
    req.tos = flow.tos;
    req.oif = oif_name(fib, flow.oif)?;
    let fwd = I::forward(fwd);
    describe(fib, req, fwd.dev, fwd.gateway.map(Into::into), fwd.kind)
}
