//! The route cache as the underlay resolver of `fibre_dev`'s GRE tunnels
//! ([`UnderlayRoutes`]): a tunnel resolves its remote once per worker per
//! generation and keeps the answer.

use std::net::IpAddr;

use fibre_dev::route::{RouteError, UnderlayRoute, UnderlayRoutes};
use fibre_fib::FlowKeyV4;

use crate::cache::{RouteCache, SlotKind};
use crate::source::RouteSource;

impl<S: RouteSource> UnderlayRoutes for RouteCache<S> {
    /// The IPv4 output route to `dst` (from `src`), with any PMTU or
    /// redirect exception applied. IPv6 underlays are not resolved yet (the
    /// FIB's IPv6 output batch lookup has no adapter here): `Unreachable`.
    fn resolve(&self, dst: IpAddr, src: Option<IpAddr>) -> Result<UnderlayRoute, RouteError> {
        let IpAddr::V4(dst4) = dst else {
            return Err(RouteError::Unreachable(dst));
        };
        let key = FlowKeyV4 {
            dst: u32::from(dst4),
            src: match src {
                Some(IpAddr::V4(s)) => u32::from(s),
                _ => 0,
            },
            ..Default::default()
        };
        let mut reader = self.domain().register();
        let answer = {
            let guard = reader.read();
            self.output_v4(&guard, SlotKind::PerCore(0), &key)
                .map(|r| UnderlayRoute {
                    oif: r.dev,
                    gateway: r.gateway_addr(),
                    src: r.src_addr(),
                    mtu: r.mtu,
                })
                .map_err(|_| RouteError::Unreachable(dst))
        };
        reader.quiescent();
        answer
    }

    fn generation(&self) -> u64 {
        self.change_count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testbed;

    #[test]
    fn a_tunnel_resolves_its_remote_and_sees_invalidations() {
        let domain = fibre_rcu::Domain::new();
        let cache = RouteCache::new(&domain, testbed::fib().unwrap(), 1);
        let remote: IpAddr = "198.51.100.20".parse().unwrap();
        let route = cache.resolve(remote, None).unwrap();
        assert_eq!(route.oif, testbed::DUMMY_IFINDEX);
        assert_eq!(route.gateway, Some(IpAddr::from(testbed::GATEWAY)));
        assert_eq!(route.src, Some(IpAddr::from(testbed::LOCAL_ADDR)));
        assert_eq!(route.mtu, 1500);
        let g = cache.generation();
        cache.invalidate_device(testbed::DUMMY_IFINDEX);
        assert_ne!(cache.generation(), g);
        assert!(cache.resolve("192.0.2.1".parse().unwrap(), None).is_err());
        assert!(cache.resolve("2001:db8::1".parse().unwrap(), None).is_err());
    }
}
