//! The source of a message the router originates in answer to a packet
//! (an ICMP error, an echo reply): `ip_route_output_key` with no source
//! (`__ip_route_output_key`: the route's `prefsrc`, else `inet_select_addr`
//! on the output device) and the IPv6 pieces `icmp6_send` asks for
//! (`ipv6_chk_addr`, `rt6_get_prefsrc`). The same answers as
//! [`Fib::route_get`]'s `src`, without building a [`RouteAnswer`](crate::RouteAnswer):
//! nothing here allocates, so a forwarding worker may call it per packet.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::error::Errno;
use crate::fib::Fib;
use crate::read::lookup::Flow;
use crate::types::*;

/// `IPPROTO_ICMP` and `IPPROTO_ICMPV6`: the protocol of the flows looked up.
const IPPROTO_ICMP: u8 = 1;
const IPPROTO_ICMPV6: u8 = 58;

/// The MTU of `lo`.
const LOOPBACK_MTU: u32 = 65_536;

/// The route a reply leaves by, as the ICMP code reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplyRoute<A> {
    /// The source address chosen, if any.
    pub source: Option<A>,
    /// The route's own preferred source (`src`), if it has one.
    pub prefsrc: Option<A>,
    /// The route's MTU (`dst_mtu`).
    pub mtu: u32,
    /// The prefix length of the route (`rt6i_dst.plen`, by which
    /// `icmpv6_xrlim_allow` scales its period).
    pub prefix_len: u8,
}

impl Fib {
    /// The source address `ip_route_output_key` picks for a locally
    /// originated ICMP flow to `dst` with TOS `tos` and no source: the
    /// destination itself when the route is local, else the route's
    /// `prefsrc`, else `inet_select_addr` on the chosen path's device;
    /// `Ok(None)` where that finds no address. `Err` is the lookup's error
    /// (no route back: the kernel sends nothing).
    ///
    /// ```
    /// use fibre_fib::*;
    /// let mut fib = Fib::new();
    /// for line in ["link add d0 type ifb", "link set d0 up", "addr add 10.0.0.1/24 dev d0",
    ///              "route add 192.0.2.0/24 via 10.0.0.9 src 10.0.0.1"] {
    ///     let words: Vec<String> = line.split(' ').map(String::from).collect();
    ///     for c in config::parse_words(&words).unwrap() { fib.apply(&c).unwrap(); }
    /// }
    /// let to = |d: &str| fib.output_source_v4(d.parse().unwrap(), 0);
    /// assert_eq!(to("10.0.0.7"), Ok(Some("10.0.0.1".parse().unwrap())));
    /// assert_eq!(to("192.0.2.5"), Ok(Some("10.0.0.1".parse().unwrap())));
    /// assert_eq!(to("198.51.100.1"), Err(Errno::NetUnreach));
    /// ```
    pub fn output_source_v4(&self, dst: Ipv4Addr, tos: u8) -> Result<Option<Ipv4Addr>, Errno> {
        self.reply_route_v4(dst, tos).map(|r| r.source)
    }

    /// [`Fib::output_source_v4`] with the MTU of the route found
    /// (`ipv4_mtu`: the route's `mtu` metric, else its device's; a locked
    /// metric on a route through a gateway at most 576), which bounds how
    /// much of a packet an ICMP error quotes (`icmp_send`'s `room`).
    ///
    /// ```
    /// use fibre_fib::*;
    /// let mut fib = Fib::new();
    /// for line in ["link add d0 type ifb", "link set d0 up", "addr add 10.0.0.1/24 dev d0",
    ///              "route add 192.0.2.0/24 via 10.0.0.9 mtu 300"] {
    ///     let words: Vec<String> = line.split(' ').map(String::from).collect();
    ///     for c in config::parse_words(&words).unwrap() { fib.apply(&c).unwrap(); }
    /// }
    /// assert_eq!(fib.reply_route_v4("192.0.2.5".parse().unwrap(), 0).unwrap().mtu, 300);
    /// assert_eq!(fib.reply_route_v4("10.0.0.5".parse().unwrap(), 0).unwrap().mtu, 1500);
    /// ```
    pub fn reply_route_v4(&self, dst: Ipv4Addr, tos: u8) -> Result<ReplyRoute<Ipv4Addr>, Errno> {
        self.route_from_v4(dst, tos, IPPROTO_ICMP)
    }

    /// [`Fib::reply_route_v4`] for a flow of protocol `proto` (0 for the
    /// lookups that name none, as `fib_compute_spec_dst`'s).
    pub(crate) fn route_from_v4(
        &self,
        dst: Ipv4Addr,
        tos: u8,
        proto: u8,
    ) -> Result<ReplyRoute<Ipv4Addr>, Errno> {
        let as_v4 = |a: IpAddr| match a {
            IpAddr::V4(a) => Some(a),
            IpAddr::V6(_) => None,
        };
        let flow = Flow {
            tos: tos & 0x1c,
            proto,
            ..Flow::output(IpAddr::V4(dst))
        };
        let res = self.fib_lookup(&flow)?;
        let route = res.route;
        let prefsrc = route.prefsrc.and_then(as_v4);
        let prefix_len = route.dst.len();
        if res.kind == RouteType::Local {
            return Ok(ReplyRoute {
                source: Some(prefsrc.unwrap_or(dst)),
                prefsrc,
                mtu: route.mtu.unwrap_or(LOOPBACK_MTU),
                prefix_len,
            });
        }
        let nh = self.choose_path(&res, &flow).ok_or(Errno::NetUnreach)?;
        let dev = nh.dev.ok_or(Errno::NetUnreach)?;
        let source = prefsrc.or_else(|| {
            self.select_addr_v4(dev, nh.gateway, route.scope)
                .and_then(as_v4)
        });
        let mut mtu = route.mtu.unwrap_or_else(|| self.link_mtu(dev));
        if route.mtu_lock && self.used_gateway_v4(route, nh).is_some() {
            mtu = mtu.min(576);
        }
        Ok(ReplyRoute {
            source,
            prefsrc,
            mtu,
            prefix_len,
        })
    }

    /// `ipv6_chk_addr(net, addr, dev, 0)`: `addr` is an address of `dev`,
    /// or of any link when it is not link-local or loopback in scope.
    pub fn is_own_address_v6(&self, addr: Ipv6Addr, dev: LinkIndex) -> bool {
        let link_scoped = addr.is_loopback() || (addr.segments()[0] & 0xffc0) == 0xfe80;
        if !link_scoped {
            return self.is_local_address(&IpAddr::V6(addr));
        }
        self.addrs_of_v6(dev)
            .iter()
            .any(|a| a.local == IpAddr::V6(addr))
    }

    /// The IPv6 output route to `dst` for an ICMPv6 flow without a source:
    /// its `prefsrc` (`rt6_get_prefsrc`, what `icmpv6_rt_has_prefsrc`
    /// asks), the source the output path picks on its device
    /// (`ip6_route_get_saddr`: that `prefsrc`, else the device's best
    /// address for `dst`), its MTU and prefix length. `Err` is the
    /// lookup's error.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let mut fib = Fib::new();
    /// for line in ["link add d0 type ifb", "link set d0 up", "addr add 2001:db8::1/64 dev d0 nodad",
    ///              "route add 2001:db8:5::/48 via 2001:db8::9 src 2001:db8::1"] {
    ///     let words: Vec<String> = line.split(' ').map(String::from).collect();
    ///     for c in config::parse_words(&words).unwrap() { fib.apply(&c).unwrap(); }
    /// }
    /// let back = fib.reply_route_v6("2001:db8:5::7".parse().unwrap()).unwrap();
    /// assert_eq!((back.prefsrc, back.prefix_len), (Some("2001:db8::1".parse().unwrap()), 48));
    /// let back = fib.reply_route_v6("2001:db8::7".parse().unwrap()).unwrap();
    /// assert_eq!((back.prefsrc, back.source, back.prefix_len), (None, Some("2001:db8::1".parse().unwrap()), 64));
    /// ```
    pub fn reply_route_v6(&self, dst: Ipv6Addr) -> Result<ReplyRoute<Ipv6Addr>, Errno> {
        let as_v6 = |a: IpAddr| match a {
            IpAddr::V6(a) => Some(a),
            IpAddr::V4(_) => None,
        };
        let flow = Flow {
            proto: IPPROTO_ICMPV6,
            ..Flow::output(IpAddr::V6(dst))
        }
        .with_v6_output_dev();
        let res = self.fib_lookup(&flow)?;
        let route = res.route;
        let prefsrc = route.prefsrc.and_then(as_v6);
        let dev = if res.kind == RouteType::Local {
            res.nexthop().and_then(|n| n.dev)
        } else {
            let nh = self.choose_path(&res, &flow).ok_or(Errno::NetUnreach)?;
            Some(nh.dev.ok_or(Errno::NetUnreach)?)
        };
        let source = prefsrc.or_else(|| self.select_addr_v6(dev, &IpAddr::V6(dst)).and_then(as_v6));
        let dev_mtu = dev.map_or(LOOPBACK_MTU, |d| self.link_mtu(d));
        Ok(ReplyRoute {
            source,
            prefsrc,
            mtu: route.mtu.unwrap_or(dev_mtu),
            prefix_len: route.dst.len(),
        })
    }

    /// A link's MTU (0 for a link that is gone).
    fn link_mtu(&self, dev: LinkIndex) -> u32 {
        self.links.get(&dev).map_or(0, |l| l.mtu)
    }
}
