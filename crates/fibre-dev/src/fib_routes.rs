//! [`UnderlayRoutes`] over the FIB (`fibre_fib::Fib::route_get`).

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;

use fibre_fib::{Command, Fib, KernelError, RouteGetRequest, RouteType};

use crate::route::{RouteError, UnderlayRoute, UnderlayRoutes};
use crate::WorkerId;

/// The FIB as a tunnel's underlay resolver. Changes go through
/// [`FibRoutes::apply`], which bumps the generation so tunnels re-resolve.
///
/// ```
/// use fibre_dev::{FibRoutes, route::UnderlayRoutes};
/// use fibre_fib::*;
/// let routes = FibRoutes::new(Fib::new());
/// routes.apply(&Command::LinkAdd { name: "d0".into(), kind: LinkKind::Dummy, mtu: Some(1400) }).unwrap();
/// routes.apply(&Command::LinkSet { name: "d0".into(), up: Some(true), mtu: None }).unwrap();
/// routes.apply(&Command::Addr { op: AddrOp::Add, spec: AddressSpec {
///     dev: "d0".into(), local: "10.0.0.1".parse().unwrap(), prefix_len: 24, peer: None,
///     broadcast: None, scope: None, noprefixroute: false, metric: None, label: None, mngtmpaddr: false } }).unwrap();
/// let r = routes.resolve(fibre_dev::WorkerId::new(0), "10.0.0.7".parse().unwrap(), None).unwrap();
/// assert_eq!(r.mtu, 1400);
/// assert_eq!(r.src, Some("10.0.0.1".parse().unwrap()));
/// ```
#[derive(Debug)]
pub struct FibRoutes {
    fib: RwLock<Fib>,
    generation: AtomicU64,
}

impl FibRoutes {
    /// Wraps a FIB.
    pub fn new(fib: Fib) -> FibRoutes {
        FibRoutes {
            fib: RwLock::new(fib),
            generation: AtomicU64::new(1),
        }
    }

    /// Applies a change to the FIB and invalidates every cached route.
    pub fn apply(&self, cmd: &Command) -> Result<(), KernelError> {
        let mut fib = self.fib.write().unwrap_or_else(|e| e.into_inner());
        let result = fib.apply(cmd);
        // Bumped even on refusal: cheap, and a partial change stays safe.
        self.generation.fetch_add(1, Ordering::Release);
        result
    }

    /// Runs `f` with read access to the FIB (e.g. for validation).
    pub fn with_fib<R>(&self, f: impl FnOnce(&Fib) -> R) -> R {
        f(&self.fib.read().unwrap_or_else(|e| e.into_inner()))
    }
}

impl UnderlayRoutes for FibRoutes {
    fn resolve(
        &self,
        _worker: WorkerId,
        dst: IpAddr,
        src: Option<IpAddr>,
    ) -> Result<UnderlayRoute, RouteError> {
        let fib = self.fib.read().unwrap_or_else(|e| e.into_inner());
        let mut request = RouteGetRequest::to(dst);
        request.src = src;
        let answer = fib
            .route_get(&request)
            .map_err(|_| RouteError::Unreachable(dst))?;
        if answer.kind != RouteType::Unicast && answer.kind != RouteType::Local {
            return Err(RouteError::Unreachable(dst));
        }
        let dev = answer.dev.ok_or(RouteError::Unreachable(dst))?;
        let link = fib
            .link_by_name(&dev)
            .ok_or_else(|| RouteError::UnknownDevice {
                dst,
                dev: dev.clone(),
            })?;
        Ok(UnderlayRoute {
            oif: link.index,
            gateway: answer.gateway,
            src: answer.prefsrc.or(src),
            mtu: answer.mtu.unwrap_or(link.mtu),
        })
    }

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }
}
