//! What the route cache needs from the FIB, as a trait, with an adapter
//! over today's [`Fib`].
//!
//! The FIB's data-path answer ([`Forward`]) has no stable nexthop id, so
//! the cache keys nexthops by (table, device, gateway) ([`NexthopKey`]),
//! and asks for the rest of a route (preferred source, MTU, matched
//! prefix) only on a cache miss, through [`RouteSource::describe_v4`].

use std::net::{IpAddr, Ipv4Addr};
use std::sync::RwLock;

use fibre_fib::{Errno, FlowKeyV4, Forward, Prefix, RouteGetRequest, RouteType, TableId};

use crate::route::{kind_code, RouteData};

/// A nexthop's identity as the cache sees it: until the FIB exports a
/// stable nexthop id, (table, output device, gateway).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NexthopKey {
    /// Table of the route that chose this nexthop.
    pub table: TableId,
    /// Output device (ifindex).
    pub dev: u32,
    /// Gateway as an integer key (IPv4 in the low 32 bits); 0: on link.
    pub gateway: u128,
}

impl NexthopKey {
    /// The key of an IPv4 lookup answer.
    ///
    /// ```
    /// use fibre_fib::{Forward, RouteType};
    /// use fibre_route::NexthopKey;
    /// let k = NexthopKey::of_v4(&Forward { gateway: 0x0a00_0002, dev: 2, table: 254, kind: RouteType::Unicast });
    /// assert_eq!((k.table, k.dev, k.gateway), (254, 2, 0x0a00_0002));
    /// ```
    pub fn of_v4(fwd: &Forward) -> NexthopKey {
        NexthopKey {
            table: fwd.table,
            dev: fwd.dev,
            gateway: u128::from(fwd.gateway),
        }
    }
}

/// What a cache miss learns about a flow's route beyond [`Forward`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteDetails {
    /// The route's data (device, gateway, source, MTU, type).
    pub data: RouteData,
    /// The FIB prefix that matched (for per-prefix invalidation).
    pub matched: Prefix,
}

/// What the route cache needs from a FIB.
pub trait RouteSource: Send + Sync {
    /// The data-path output lookup (no allocation expected).
    fn lookup_v4(&self, key: &FlowKeyV4) -> Result<Forward, Errno>;
    /// The full route for a flow whose lookup answered `fwd` (called on
    /// cache misses only: may be slow).
    fn describe_v4(&self, key: &FlowKeyV4, fwd: &Forward) -> Result<RouteDetails, Errno>;
    /// The MTU of device `dev`, if it exists.
    fn device_mtu(&self, dev: u32) -> Option<u32>;
}

impl RouteSource for fibre_fib::Fib {
    fn lookup_v4(&self, key: &FlowKeyV4) -> Result<Forward, Errno> {
        self.lookup_output_v4(key)
    }

    fn describe_v4(&self, key: &FlowKeyV4, fwd: &Forward) -> Result<RouteDetails, Errno> {
        let dst = IpAddr::V4(Ipv4Addr::from(key.dst));
        let mut req = RouteGetRequest::to(dst);
        req.src = (key.src != 0).then(|| IpAddr::V4(Ipv4Addr::from(key.src)));
        req.mark = key.mark;
        req.tos = key.tos;
        req.oif = if key.oif != 0 {
            Some(self.link(key.oif).ok_or(Errno::NoDev)?.name.clone())
        } else {
            None
        };
        let answer = self.route_get(&req).map_err(|e| e.errno)?;
        let dev_mtu = self.device_mtu(fwd.dev).ok_or(Errno::NoDev)?;
        let mut data = RouteData::new(
            fwd.dev,
            fwd.gateway_addr().map(IpAddr::V4),
            answer.prefsrc,
            answer.mtu.unwrap_or(dev_mtu).min(dev_mtu),
        );
        data.family = 4;
        data.kind = kind_code(fwd.kind);
        if fwd.kind == RouteType::Local {
            data.flags |= crate::route::flags::LOCAL;
        }
        Ok(RouteDetails {
            data,
            matched: answer.route.dst,
        })
    }

    fn device_mtu(&self, dev: u32) -> Option<u32> {
        self.link(dev).map(|l| l.mtu)
    }
}

/// A FIB that changes while the cache runs: readers take the read lock
/// (fine for tests and control paths; the data path wants `SharedFib`).
impl RouteSource for RwLock<fibre_fib::Fib> {
    fn lookup_v4(&self, key: &FlowKeyV4) -> Result<Forward, Errno> {
        self.read()
            .unwrap_or_else(|e| e.into_inner())
            .lookup_output_v4(key)
    }

    fn describe_v4(&self, key: &FlowKeyV4, fwd: &Forward) -> Result<RouteDetails, Errno> {
        self.read()
            .unwrap_or_else(|e| e.into_inner())
            .describe_v4(key, fwd)
    }

    fn device_mtu(&self, dev: u32) -> Option<u32> {
        self.read()
            .unwrap_or_else(|e| e.into_inner())
            .device_mtu(dev)
    }
}
