//! The route cache as the underlay resolver of `fibre_dev`'s GRE tunnels
//! ([`UnderlayRoutes`]): a tunnel resolves its remote once per worker per
//! generation and keeps the answer.

use std::net::IpAddr;

use fibre_base::{IpFamily, Ipv4, Ipv6};
use fibre_dev::route::{RouteError, UnderlayRoute, UnderlayRoutes};
use fibre_dev::WorkerId;

use crate::cache::{RouteCache, RouteHandle, SlotKind};
use crate::family::CacheFamily;
use crate::source::RouteSource;

/// The route cache as a tunnel's underlay resolver, IPv4 and IPv6 alike.
///
/// ```
/// use std::net::IpAddr;
/// use fibre_dev::{route::UnderlayRoutes, WorkerId};
/// use fibre_route::{testbed, RouteCache};
/// let domain = fibre_rcu::Domain::new();
/// let cache = RouteCache::new(&domain, testbed::fib().unwrap(), 2);
/// let route = cache.resolve(WorkerId::new(1), "198.51.100.9".parse().unwrap(), None).unwrap();
/// assert_eq!((route.oif, route.mtu), (testbed::DUMMY_IFINDEX, 1500));
/// assert_eq!(route.src, Some(IpAddr::from(testbed::LOCAL_ADDR)));
/// ```
impl<S: RouteSource> UnderlayRoutes for RouteCache<S> {
    /// The output route to `dst` (from `src`), with any PMTU or redirect
    /// exception applied, taken from `worker`'s per-core slot of its
    /// nexthop (filled on a miss), so tunnels on different workers never
    /// write one slot.
    fn resolve(
        &self,
        worker: WorkerId,
        dst: IpAddr,
        src: Option<IpAddr>,
    ) -> Result<UnderlayRoute, RouteError> {
        let slot = SlotKind::PerCore(worker);
        // A tunnel resolves once per generation, on its control path: a
        // reader registered for this one read section is cheap enough.
        let mut reader = self.domain().register();
        let answer = {
            let guard = reader.read();
            let route = |r: &RouteHandle<'_>, src: Option<IpAddr>| UnderlayRoute {
                oif: r.dev,
                gateway: r.gateway_addr(),
                src,
                mtu: r.mtu,
            };
            match dst {
                IpAddr::V4(d) => {
                    let key = Ipv4::flow_key(d, src.and_then(Ipv4::from_ip));
                    self.output::<Ipv4>(&guard, slot, &key)
                        .map(|r| route(&r, r.src_addr()))
                }
                IpAddr::V6(d) => {
                    let key = Ipv6::flow_key(d, src.and_then(Ipv6::from_ip));
                    // Apart from IPv4's: IPv6 picks the source per
                    // destination after the lookup (`ipv6_dev_get_saddr`),
                    // IPv4 per nexthop (`nh_saddr`), so its route has it.
                    self.output::<Ipv6>(&guard, slot, &key).and_then(|r| {
                        let src = self.source_v6(&guard, &r, d)?;
                        Ok(route(&r, src.map(IpAddr::V6)))
                    })
                }
            }
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
    use std::sync::{Arc, RwLock};

    use fibre_dev::gre::{GreConfig, GreConfigError, TxMode};
    use fibre_dev::{DropReason, PacketBatch, PacketBuf, Registry, TxReport, Verdict};
    use fibre_fib::{config, Fib, Prefix, TunnelError, TABLE_MAIN};
    use fibre_net::ipv6;

    use super::*;
    use crate::testbed;

    const W0: WorkerId = WorkerId::new(0);

    #[test]
    fn a_tunnel_resolves_its_remote_and_sees_invalidations() {
        let domain = fibre_rcu::Domain::new();
        let cache = RouteCache::new(&domain, testbed::fib().unwrap(), 1);
        let remote: IpAddr = "198.51.100.20".parse().unwrap();
        let route = cache.resolve(W0, remote, None).unwrap();
        assert_eq!(route.oif, testbed::DUMMY_IFINDEX);
        assert_eq!(route.gateway, Some(IpAddr::from(testbed::GATEWAY)));
        assert_eq!(route.src, Some(IpAddr::from(testbed::LOCAL_ADDR)));
        assert_eq!(route.mtu, 1500);
        let g = cache.generation();
        cache.invalidate_device(testbed::DUMMY_IFINDEX);
        assert_ne!(cache.generation(), g);
        assert!(cache
            .resolve(W0, "192.0.2.1".parse().unwrap(), None)
            .is_err());
        assert!(cache
            .resolve(W0, "2001:db8::1".parse().unwrap(), None)
            .is_err());
    }

    /// Two uplinks with IPv6 addresses, and 2001:db8:99::/48 (where the
    /// tunnel's remote lives) via the first one with a 1400-byte path MTU;
    /// `gt0` stands for the tunnel in the FIB (as Linux's FIB knows the
    /// tunnel device), so that routes can point into it.
    fn uplinks() -> Fib {
        let text = "\
link add eth0 type dummy
link set eth0 up
link add eth1 type dummy
link set eth1 up
link add gt0 type dummy
link set gt0 up
addr add 2001:db8:1::1/64 dev eth0
addr add 2001:db8:2::1/64 dev eth1
route add 2001:db8:99::/48 via 2001:db8:1::2 mtu 1400
";
        let (fib, skipped) = config::apply_str(&Fib::new(), "uplinks", text, false).unwrap();
        assert!(skipped.is_empty(), "{skipped:?}");
        fib
    }

    fn index(fib: &RwLock<Fib>, name: &str) -> u32 {
        fib.read().unwrap().link_by_name(name).unwrap().index
    }

    /// Applies `line` to the cache's FIB, then tells the cache, as the FIB
    /// writer will: the prefix changed.
    fn change(cache: &RouteCache<RwLock<Fib>>, line: &str) {
        let mut fib = cache.source().write().unwrap();
        *fib = config::apply_str(&fib, "change", line, false).unwrap().0;
        drop(fib);
        cache.invalidate_prefix(TABLE_MAIN, remote_prefix());
    }

    /// 2001:db8:99::/48, the only prefix the tests change.
    fn remote_prefix() -> Prefix {
        Prefix::new("2001:db8:99::".parse().unwrap(), 48).unwrap()
    }

    /// The registry of the test: eth0 and eth1 as dummies at their FIB
    /// ifindexes, and ip6gre `gt0` (remote 2001:db8:99::7, no local) at
    /// its FIB ifindex, resolving its underlay through `cache`.
    fn registry(cache: &Arc<RouteCache<RwLock<Fib>>>) -> Result<Registry, GreConfigError> {
        let fib = cache.source();
        let mut registry = Registry::new(2);
        for dev in ["eth0", "eth1"] {
            registry.add_dummy(index(fib, dev), dev, 1500).unwrap();
        }
        let config = GreConfig::parse(&["gt0", "type", "ip6gre", "remote", "2001:db8:99::7"])?;
        let routes: Arc<dyn UnderlayRoutes> = cache.clone();
        match registry.add_gre(index(fib, "gt0"), config, routes, TxMode::Lltx) {
            Ok(()) => Ok(registry),
            Err(fibre_dev::RegistryError::Gre(e)) => Err(e),
            Err(e) => panic!("{e}"),
        }
    }

    /// An IPv6 packet of `len` bytes (no payload protocol needed here).
    fn send(registry: &Registry, worker: WorkerId, len: usize) -> (TxReport, Vec<u8>) {
        let mut inner = vec![0u8; len];
        inner[0] = 0x60;
        inner[4..6].copy_from_slice(&((len - ipv6::HEADER_LEN) as u16).to_be_bytes());
        inner[6] = 59; // no next header
        inner[7] = 64;
        let mut p = PacketBuf::new(128, 2048);
        p.load(&inner).unwrap();
        let mut batch = PacketBatch::with_capacity(1);
        batch.push(p);
        let gt0 = registry.by_name("gt0").unwrap().index();
        let report = registry.transmit(gt0, worker, &mut batch);
        (report, batch.packets()[0].data().to_vec())
    }

    fn tx_packets(registry: &Registry, dev: &str) -> u64 {
        registry.by_name(dev).unwrap().stats().snapshot().tx_packets
    }

    fn outer_src(frame: &[u8]) -> IpAddr {
        IpAddr::V6(ipv6::Packet::new_checked(frame).unwrap().src_addr())
    }

    /// The frames each uplink sent: (eth0, eth1).
    fn uplinks_tx(registry: &Registry) -> (u64, u64) {
        (tx_packets(registry, "eth0"), tx_packets(registry, "eth1"))
    }

    /// A packet one byte over `path_mtu` is refused, and `path_mtu` is
    /// what the report gives the sender.
    fn assert_refused_over(registry: &Registry, path_mtu: u32) {
        let (report, _) = send(registry, W0, path_mtu as usize + 1);
        assert_eq!((report.dropped, report.path_mtu), (1, Some(path_mtu)));
    }

    #[test]
    fn an_ip6gre_tunnel_takes_its_underlay_from_the_cache_and_follows_route_changes() {
        let domain = fibre_rcu::Domain::new();
        let cache = Arc::new(RouteCache::new(&domain, RwLock::new(uplinks()), 2));
        let registry = registry(&cache).unwrap();
        let gt0 = registry.by_name("gt0").unwrap();
        // The route's MTU less IPv6 (40) and GRE (4), as Linux sizes it.
        assert_eq!(gt0.mtu(), 1400 - 44);

        let (report, frame) = send(&registry, W0, 100);
        assert_eq!(report.sent, 1);
        assert_eq!(frame.len(), 40 + 4 + 100);
        let outer = ipv6::Packet::new_checked(&frame[..]).unwrap();
        assert_eq!(outer.next_header(), fibre_net::ip::Protocol::Gre);
        assert_eq!(
            IpAddr::V6(outer.dst_addr()),
            "2001:db8:99::7".parse::<IpAddr>().unwrap()
        );
        // No `local`: the source is the one the route prefers.
        assert_eq!(
            outer_src(&frame),
            "2001:db8:1::1".parse::<IpAddr>().unwrap()
        );
        assert_eq!(uplinks_tx(&registry), (1, 0));
        // Over the path MTU: refused with the MTU to report.
        assert_refused_over(&registry, 1356);

        // The remote moves behind eth1 (smaller MTU). Until the cache is
        // told, the tunnel keeps its answer (no lookup per batch)...
        let line = "route replace 2001:db8:99::/48 via 2001:db8:2::2 mtu 1300\n";
        {
            let mut fib = cache.source().write().unwrap();
            *fib = config::apply_str(&fib, "change", line, false).unwrap().0;
        }
        assert_eq!(send(&registry, W0, 100).0.sent, 1);
        assert_eq!(tx_packets(&registry, "eth0"), 2);
        // ...and once told, both workers re-resolve, each into its own slot.
        cache.invalidate_prefix(TABLE_MAIN, remote_prefix());
        for worker in [W0, WorkerId::new(1)] {
            let (report, frame) = send(&registry, worker, 100);
            assert_eq!(report.sent, 1);
            assert_eq!(
                outer_src(&frame),
                "2001:db8:2::1".parse::<IpAddr>().unwrap()
            );
        }
        assert_eq!(uplinks_tx(&registry), (2, 2));
        // The new path MTU applies at once: 1300 - 44.
        assert_refused_over(&registry, 1256);
        assert_eq!(send(&registry, W0, 1256).0.sent, 1);
    }

    #[test]
    fn an_underlay_route_into_the_tunnel_itself_is_dropped_and_counted() {
        let domain = fibre_rcu::Domain::new();
        let cache = Arc::new(RouteCache::new(&domain, RwLock::new(uplinks()), 1));
        // Routed into itself at creation: refused outright.
        change(&cache, "route replace 2001:db8:99::/48 dev gt0\n");
        let err = registry(&cache).unwrap_err();
        assert!(
            matches!(
                err,
                GreConfigError::Tunnel(TunnelError::UnderlayLoop { .. })
            ),
            "{err}"
        );

        // Created while the route led elsewhere, then turned into itself.
        change(&cache, "route replace 2001:db8:99::/48 via 2001:db8:1::2\n");
        let registry = registry(&cache).unwrap();
        assert_eq!(send(&registry, W0, 100).0.sent, 1);
        change(&cache, "route replace 2001:db8:99::/48 dev gt0\n");
        let mut batch = PacketBatch::with_capacity(3);
        for _ in 0..3 {
            let mut header = [0u8; ipv6::HEADER_LEN];
            header[..8].copy_from_slice(&[0x60, 0, 0, 0, 0, 0, 59, 64]);
            let mut p = PacketBuf::new(128, 2048);
            p.load(&header).unwrap();
            batch.push(p);
        }
        let gt0 = registry.by_name("gt0").unwrap();
        let report = registry.transmit(gt0.index(), W0, &mut batch);
        assert_eq!((report.sent, report.dropped), (0, 3));
        for p in batch.packets() {
            assert_eq!(p.verdict(), Verdict::Dropped(DropReason::UnderlayLoop));
            // Dropped before any header was added: no recursion happened.
            assert_eq!(p.headroom(), 128);
        }
        let stats = gt0.stats().snapshot();
        assert_eq!(stats.drops(DropReason::UnderlayLoop), 3);
        assert_eq!(stats.drops(DropReason::TunnelLoop), 0);
        let link = stats.ip_link_stats();
        assert_eq!(
            (link.tx_packets, link.tx_errors, link.tx_collisions),
            (1, 3, 3)
        );
        assert_eq!(tx_packets(&registry, "eth0"), 1);
    }
}
