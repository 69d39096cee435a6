//! Bulk import of many prefixes sharing few nexthops (`fibre route import`):
//! each distinct nexthop is validated once as `ip route add` would, then
//! each prefix is inserted with `add` semantics (a prefix already routed at
//! that metric is refused with "File exists").

use crate::command::{NexthopSpec, RouteOp, RouteSpec};
use crate::error::{Errno, KernelError};
use crate::fib::Fib;
use crate::types::*;

/// Why an import stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("route {index} ({prefix}): {error}")]
pub struct ImportError {
    /// 0-based position of the refused route in the input.
    pub index: usize,
    /// Its prefix.
    pub prefix: Prefix,
    /// The kernel's refusal.
    pub error: KernelError,
}

impl Fib {
    /// Adds one unicast route per prefix to `table` (proto boot, the
    /// family's default metric), the nexthop of each given as in
    /// `ip route add PREFIX via GW dev DEV`. Returns the number of routes
    /// added. On a refusal it stops and reports which route; the routes
    /// before it stay (apply to a clone for all-or-nothing).
    ///
    /// ```
    /// use fibre_fib::*;
    /// let mut fib = Fib::new();
    /// fib.apply(&Command::LinkAdd { name: "d0".into(), kind: LinkKind::Ifb, mtu: None }).unwrap();
    /// fib.apply(&Command::LinkSet { name: "d0".into(), up: Some(true), mtu: None }).unwrap();
    /// let nh = NexthopSpec { gateway: None, dev: Some("d0".into()), weight: 1, onlink: false };
    /// let routes = (0..256u32).map(|i| {
    ///     let p = Prefix::new(std::net::Ipv4Addr::from((10 << 24) | (i << 8)).into(), 24).unwrap();
    ///     (p, nh.clone())
    /// });
    /// assert_eq!(fib.import(TABLE_MAIN, routes).unwrap(), 256);
    /// assert_eq!(fib.routes(Family::V4, Some(TABLE_MAIN)).len(), 256);
    /// ```
    pub fn import(
        &mut self,
        table: TableId,
        routes: impl IntoIterator<Item = (Prefix, NexthopSpec)>,
    ) -> Result<usize, ImportError> {
        let res = self.import_routes(table, routes);
        // As after `apply`: the last prefix imported gets its summary now.
        self.settle_tables();
        res
    }

    fn import_routes(
        &mut self,
        table: TableId,
        routes: impl IntoIterator<Item = (Prefix, NexthopSpec)>,
    ) -> Result<usize, ImportError> {
        // Few distinct paths in practice: a short list beats hashing the specs.
        let mut validated: Vec<(NexthopSpec, Route)> = Vec::new();
        let mut count = 0;
        for (index, (prefix, nh)) in routes.into_iter().enumerate() {
            let fail = |error: KernelError| ImportError {
                index,
                prefix,
                error,
            };
            let family = prefix.family();
            if nh.gateway.is_some_and(|g| Family::of(&g) != family) {
                return Err(fail(KernelError::new(Errno::Inval)));
            }
            let known = validated
                .iter()
                .find(|(spec, r)| *spec == nh && r.family() == family);
            let template = match known {
                Some((_, r)) => r.clone(),
                _ => {
                    // Validate the path once, on a probe prefix, as `ip route add` would.
                    let spec = RouteSpec {
                        mtu_lock: false,
                        metrics: Default::default(),
                        table,
                        dst: prefix,
                        tos: 0,
                        kind: RouteType::Unicast,
                        protocol: Protocol::BOOT,
                        scope: if nh.gateway.is_some() {
                            Scope::UNIVERSE
                        } else {
                            Scope::LINK
                        },
                        metric: None,
                        prefsrc: None,
                        mtu: None,
                        nexthops: vec![nh.clone()],
                        multipath: false,
                    };
                    let r = self.build_route(&spec).map_err(fail)?;
                    validated.push((nh.clone(), r.clone()));
                    r
                }
            };
            let route = Route {
                dst: prefix,
                ..template
            };
            self.insert_route(RouteOp::Add, route).map_err(fail)?;
            count += 1;
        }
        Ok(count)
    }
}
