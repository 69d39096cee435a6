//! What a tunnel needs from the route cache: resolve the underlay route to
//! its remote, and tell when resolved routes may have gone stale.

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::WorkerId;

/// A resolved underlay route: where an encapsulated packet leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnderlayRoute {
    /// ifindex of the output device.
    pub oif: u32,
    /// Next hop, when not directly connected.
    pub gateway: Option<IpAddr>,
    /// Source address the route prefers.
    pub src: Option<IpAddr>,
    /// Path MTU (route `mtu` metric, else the output device's MTU).
    pub mtu: u32,
}

/// Why no underlay route could be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    /// No route (or an unreachable/prohibit/blackhole one).
    #[error("no route to {0}")]
    Unreachable(IpAddr),
    /// The route names a device the resolver does not know.
    #[error("route to {dst} leaves by unknown device {dev}")]
    UnknownDevice {
        /// The destination asked for.
        dst: IpAddr,
        /// The device named.
        dev: String,
    },
}

/// The interface a tunnel needs from the route cache (`fibre_route::RouteCache`).
///
/// `resolve` may be slow (a FIB lookup, a lock): tunnels call it once per
/// worker per [`UnderlayRoutes::generation`], never per packet.
/// `generation` must be cheap and must change whenever a previous answer
/// may have become wrong.
///
/// `worker` is the worker the tunnel resolves for, so that a per-core
/// resolver (`fibre_route::RouteCache`) fills that worker's slot and
/// workers never share a written cache line; resolvers without per-worker
/// state ignore it. A tunnel being created resolves as worker 0.
///
/// ```
/// use std::net::IpAddr;
/// use fibre_dev::route::{RouteError, UnderlayRoute, UnderlayRoutes};
/// use fibre_dev::WorkerId;
/// /// Everything leaves by device 2.
/// struct OneWay;
/// impl UnderlayRoutes for OneWay {
///     fn resolve(&self, _: WorkerId, _: IpAddr, src: Option<IpAddr>) -> Result<UnderlayRoute, RouteError> {
///         Ok(UnderlayRoute { oif: 2, gateway: None, src, mtu: 1500 })
///     }
///     fn generation(&self) -> u64 { 1 }
/// }
/// let dst = "192.0.2.2".parse().unwrap();
/// assert_eq!(OneWay.resolve(WorkerId::new(3), dst, None).unwrap().oif, 2);
/// ```
pub trait UnderlayRoutes: Send + Sync {
    /// The route to `dst`, from `src` when given, as `worker` sees it.
    fn resolve(
        &self,
        worker: WorkerId,
        dst: IpAddr,
        src: Option<IpAddr>,
    ) -> Result<UnderlayRoute, RouteError>;
    /// Changes whenever routes change.
    fn generation(&self) -> u64;
}

impl std::fmt::Debug for dyn UnderlayRoutes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UnderlayRoutes(generation {})", self.generation())
    }
}

/// A fixed table of routes, for tests and benchmarks: exact destinations
/// mapped to routes, with a generation bumped on every change.
///
/// ```
/// use fibre_dev::route::{FixedRoutes, UnderlayRoute, UnderlayRoutes};
/// use fibre_dev::WorkerId;
/// let routes = FixedRoutes::new();
/// let dst = "192.0.2.2".parse().unwrap();
/// let w = WorkerId::new(0);
/// assert!(routes.resolve(w, dst, None).is_err());
/// let g = routes.generation();
/// routes.set(dst, UnderlayRoute { oif: 2, gateway: None, src: None, mtu: 1500 });
/// assert_eq!(routes.resolve(w, dst, None).unwrap().oif, 2);
/// assert_ne!(routes.generation(), g);
/// ```
#[derive(Debug, Default)]
pub struct FixedRoutes {
    routes: std::sync::RwLock<Vec<(IpAddr, UnderlayRoute)>>,
    generation: AtomicU64,
}

impl FixedRoutes {
    /// An empty table.
    pub fn new() -> FixedRoutes {
        FixedRoutes::default()
    }

    /// Sets (or replaces) the route to `dst`.
    pub fn set(&self, dst: IpAddr, route: UnderlayRoute) {
        let mut routes = self.routes.write().unwrap_or_else(|e| e.into_inner());
        routes.retain(|(d, _)| *d != dst);
        routes.push((dst, route));
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// Removes the route to `dst`.
    pub fn remove(&self, dst: IpAddr) {
        let mut routes = self.routes.write().unwrap_or_else(|e| e.into_inner());
        routes.retain(|(d, _)| *d != dst);
        self.generation.fetch_add(1, Ordering::Release);
    }
}

impl UnderlayRoutes for FixedRoutes {
    fn resolve(
        &self,
        _worker: WorkerId,
        dst: IpAddr,
        _src: Option<IpAddr>,
    ) -> Result<UnderlayRoute, RouteError> {
        let routes = self.routes.read().unwrap_or_else(|e| e.into_inner());
        routes
            .iter()
            .find(|(d, _)| *d == dst)
            .map(|(_, r)| *r)
            .ok_or(RouteError::Unreachable(dst))
    }

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }
}
