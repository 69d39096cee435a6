//! The data-path input lookup for IPv6: what `ip -6 route get DST from SRC
//! iif DEV` answers (`ip6_route_input`), for a batch of received packets,
//! allocating nothing. A server answering a SYN does one of these per
//! packet (is the destination ours?) before the output lookup of its reply.

use std::net::{IpAddr, Ipv6Addr};

use crate::error::Errno;
use crate::fib::Fib;
use crate::read::batch::{FlowKeyV6, Forward6};
use crate::read::lookup::Flow;
use crate::types::*;

impl Fib {
    /// Resolves each packet of `keys`, all received on link `iif`, into the
    /// same position of `out`, as the kernel's IPv6 input path would: local
    /// delivery answers with `dev` 1 (`lo`) and the route type, forwarding
    /// with the output device and gateway, a miss or a reject route with its
    /// errno. A key's `oif` is ignored (an input lookup has none). An `iif`
    /// that is no link answers `NoDev` for every key. Allocates nothing.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let mut fib = Fib::new();
    /// fib.apply(&Command::LinkAdd { name: "d0".into(), kind: LinkKind::Ifb, mtu: None }).unwrap();
    /// fib.apply(&Command::LinkSet { name: "d0".into(), up: Some(true), mtu: None }).unwrap();
    /// fib.apply(&Command::Addr { op: AddrOp::Add, spec: AddressSpec {
    ///     dev: "d0".into(), local: "2001:db8::1".parse().unwrap(), prefix_len: 64, peer: None,
    ///     broadcast: None, scope: None, noprefixroute: false, metric: None, label: None, mngtmpaddr: false } }).unwrap();
    /// let ours: std::net::Ipv6Addr = "2001:db8::1".parse().unwrap();
    /// let peer: std::net::Ipv6Addr = "2001:db8::9".parse().unwrap();
    /// let keys = [FlowKeyV6 { dst: u128::from(ours), src: u128::from(peer), ..Default::default() }];
    /// let mut out = [Err(Errno::Inval)];
    /// fib.lookup_input_batch_v6(2, &keys, &mut out);
    /// assert_eq!(out[0].unwrap().kind, RouteType::Local);
    /// assert_eq!(out[0].unwrap().dev, 1);
    /// ```
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn lookup_input_batch_v6(
        &self,
        iif: LinkIndex,
        keys: &[FlowKeyV6],
        out: &mut [Result<Forward6, Errno>],
    ) {
        self.input_batch(iif, keys, out, Fib::lookup_input_v6);
    }

    /// What both families' input batches do around each key's `lookup`:
    /// check the slices, answer `NoDev` for all when `iif` is no link.
    /// Always inlined, so `lookup` is a direct call as if written here.
    #[inline(always)]
    pub(crate) fn input_batch<K, A: Copy>(
        &self,
        iif: LinkIndex,
        keys: &[K],
        out: &mut [Result<A, Errno>],
        lookup: impl Fn(&Fib, LinkIndex, &K) -> Result<A, Errno>,
    ) {
        assert_eq!(
            keys.len(),
            out.len(),
            "input batch lookup: slices differ in length"
        );
        if !self.links.contains_key(&iif) {
            out.fill(Err(Errno::NoDev));
            return;
        }
        for (key, slot) in keys.iter().zip(out.iter_mut()) {
            *slot = lookup(self, iif, key);
        }
    }

    /// One key of [`Fib::lookup_input_batch_v6`], for a link `iif` known to exist.
    fn lookup_input_v6(&self, iif: LinkIndex, key: &FlowKeyV6) -> Result<Forward6, Errno> {
        let flow = input_flow_v6(iif, key);
        self.answer_v6(&flow, self.fib_lookup_v6_data(&flow))
    }
}

/// What [`Fib::lookup_input_batch_v6`] asks the data path's lookup for
/// `key` received on `iif`. Shared with the burst.
#[inline(always)]
pub(crate) fn input_flow_v6(iif: LinkIndex, key: &FlowKeyV6) -> Flow {
    Flow {
        src: (key.src != 0).then(|| IpAddr::V6(Ipv6Addr::from(key.src))),
        mark: key.mark,
        tos: key.tos & 0x1c,
        proto: key.proto,
        sport: key.sport,
        dport: key.dport,
        ..Flow::output(IpAddr::V6(Ipv6Addr::from(key.dst)))
    }
    .with_v6_input_dev(iif)
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv6Addr};

    use proptest::prelude::*;

    use crate::shared::tests_support::{route_via, router};
    use crate::*;

    proptest! {
        /// The batch input lookup answers as `ip -6 route get DST from SRC iif DEV`.
        #[test]
        fn input_batch_agrees_with_route_get(
            routes in prop::collection::vec((any::<u16>(), 2u16..9, any::<bool>()), 0..16),
            packets in prop::collection::vec((any::<u16>(), any::<u16>(), 0u8..4), 1..32),
            iif in 1u32..5,
        ) {
            let mut fib = router();
            for &(n, gateway, unreachable) in &routes {
                let mut cmd = route_via(RouteOp::Add, crate::shared::tests_support::dst(n % 8), gateway);
                if unreachable {
                    if let Command::Route { spec, .. } = &mut cmd {
                        spec.kind = RouteType::Unreachable;
                        spec.nexthops.clear();
                    }
                }
                let _ = fib.apply(&cmd);
            }
            // Destinations: routed prefixes, our own addresses, link-local, nowhere.
            let dst_of = |n: u16, kind: u8| -> Ipv6Addr {
                match kind {
                    0 => Ipv6Addr::new(0x2001, 0xdb8, 0xf, n % 8, 0, 0, 0, 7),
                    1 => Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1 + n % 2),
                    2 => Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 1 + n % 4),
                    _ => Ipv6Addr::new(0x3fff, n, 0, 0, 0, 0, 0, 1),
                }
            };
            let keys: Vec<FlowKeyV6> = packets
                .iter()
                .map(|&(n, src, kind)| FlowKeyV6 {
                    dst: u128::from(dst_of(n, kind)),
                    src: u128::from(Ipv6Addr::new(0x2001, 0xdb8, 0xe, src, 0, 0, 0, 5)),
                    ..Default::default()
                })
                .collect();
            let mut out = vec![Err(Errno::Inval); keys.len()];
            fib.lookup_input_batch_v6(iif, &keys, &mut out);
            let iif_name = fib.link(iif).map(|l| l.name.clone());
            for (k, got) in keys.iter().zip(&out) {
                let Some(name) = &iif_name else {
                    prop_assert_eq!(*got, Err(Errno::NoDev));
                    continue;
                };
                let request = RouteGetRequest {
                    src: Some(IpAddr::V6(k.src.into())),
                    iif: Some(name.clone()),
                    ..RouteGetRequest::to(IpAddr::V6(k.dst.into()))
                };
                match (got, fib.route_get(&request)) {
                    (Ok(f), Ok(a)) => {
                        prop_assert_eq!(Some(fib.link(f.dev).unwrap().name.clone()), a.dev);
                        let gw = (f.gateway != 0).then(|| IpAddr::V6(f.gateway.into()));
                        prop_assert_eq!(gw, a.gateway);
                        prop_assert_eq!((f.table, f.kind), (a.table, a.kind));
                    }
                    (Err(e), Err(w)) => prop_assert_eq!(*e, w.errno),
                    (g, w) => prop_assert!(false, "batch {:?}, route_get {:?}", g, w),
                }
            }
        }
    }
}
