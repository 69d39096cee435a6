//! The source address of an ICMP error, as the kernel picks it, from the
//! FIB's own answers. Nothing here allocates.

use std::net::{Ipv4Addr, Ipv6Addr};

use fibre_fib::{Fib, FlowKeyV4, FlowKeyV6, LinkIndex, RouteType};

/// `INADDR_DUMMY` (192.0.0.8, RFC 7600): `icmp_send`'s source when the
/// route back yields none.
pub const INADDR_DUMMY: Ipv4Addr = Ipv4Addr::new(192, 0, 0, 8);

/// What an ICMPv4 error takes from the route back to the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorRoute {
    /// The error's source address.
    pub source: Ipv4Addr,
    /// The route's MTU, which bounds the quote
    /// ([`write_error_v4_mtu`](super::write_error_v4_mtu)).
    pub mtu: usize,
}

/// The route of the ICMPv4 error `icmp_send` sends for `offending` (the
/// IPv4 packet, from its header): `icmp_route_lookup` looks up the route
/// back to the sender with the error's TOS. The source is the offending
/// packet's destination if that is one of the router's addresses (the
/// input route is local, `RTCF_LOCAL`), else, with
/// `icmp_errors_use_inbound_ifaddr` at its default 0, the one that route
/// picks ([`Fib::reply_route_v4`], what `ip route get SENDER` shows as
/// `src`), or [`INADDR_DUMMY`] where it has none. `None` where there is
/// no route back: the kernel sends nothing.
pub fn error_route_v4(fib: &Fib, offending: &[u8]) -> Option<ErrorRoute> {
    let header = offending.get(..20)?;
    let src = Ipv4Addr::new(header[12], header[13], header[14], header[15]);
    error_route_v4_to(fib, offending, src)
}

/// [`error_route_v4`] for an error sent to `to` rather than to the
/// offending packet's source (the first hop of a reversed source route).
pub(crate) fn error_route_v4_to(fib: &Fib, offending: &[u8], to: Ipv4Addr) -> Option<ErrorRoute> {
    let header = offending.get(..20)?;
    let dst = Ipv4Addr::new(header[16], header[17], header[18], header[19]);
    let tos = (header[1] & 0x1e) | 0xc0;
    let back = fib.reply_route_v4(to, tos).ok()?;
    let to_dst = FlowKeyV4 {
        dst: u32::from(dst),
        ..FlowKeyV4::default()
    };
    let local = fib
        .lookup_output_v4(&to_dst)
        .is_ok_and(|f| f.kind == RouteType::Local);
    let source = if local {
        dst
    } else {
        back.source.unwrap_or(INADDR_DUMMY)
    };
    Some(ErrorRoute {
        source,
        mtu: back.mtu as usize,
    })
}

/// The source of [`error_route_v4`].
pub fn error_source_v4(fib: &Fib, offending: &[u8]) -> Option<Ipv4Addr> {
    error_route_v4(fib, offending).map(|r| r.source)
}

/// What an ICMPv6 error takes from the route back to the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorRoute6 {
    /// The error's source address.
    pub source: Ipv6Addr,
    /// The route's prefix length, by which the per-destination rate
    /// limit scales its period
    /// ([`RateLimiter::allow_error_v6`](super::RateLimiter::allow_error_v6)).
    pub prefix_len: u8,
}

/// `rt6_need_strict`: a link-local unicast (fe80::/10) or multicast
/// address means something only with its link, so a message to it leaves
/// by the link named (`icmp6_send` sets `flowi6_oif` to `icmp6_iif` where
/// `__ipv6_addr_needs_scope_id` says so, which for the unicast addresses
/// an answer goes to is the same test; `icmpv6_echo_reply` always sets
/// it), and the lookup holds to it (`RT6_LOOKUP_F_IFACE`).
pub fn needs_scope_v6(addr: Ipv6Addr) -> bool {
    addr.is_multicast() || addr.is_unicast_link_local()
}

/// The prefix length of the `fe80::/64` route the kernel gives every
/// IPv6 device (`addrconf_add_linklocal` via `addrconf_prefix_route`),
/// which a message to a link-local address takes.
const LINK_LOCAL_PREFIX_LEN: u8 = 64;

/// The route back to `dst` of a message answering a packet received on
/// `in_link`: its `prefsrc`, the source `ip6_route_get_saddr` picks on its
/// device, its prefix length. Bound to the input link (`bound`: an echo
/// reply without a source, whose lookup `ip6_route_output_flags` makes
/// strict to its `flowi6_oif`; or to an address that needs a scope,
/// [`needs_scope_v6`]) it is a route by that link or none, its source
/// `ipv6_dev_get_saddr` on it (the kernel's `fe80::/64` routes have no
/// `prefsrc`, and a bound lookup's answer does not carry one); else the
/// route [`Fib::reply_route_v6`] finds.
fn route_back_v6(fib: &Fib, dst: Ipv6Addr, in_link: LinkIndex, bound: bool) -> Option<RouteBack6> {
    if bound || needs_scope_v6(dst) {
        let key = FlowKeyV6 {
            dst: u128::from(dst),
            oif: in_link,
            proto: IPPROTO_ICMPV6,
            ..FlowKeyV6::default()
        };
        let route = fib.lookup_output_v6(&key).ok()?;
        if route.dev != in_link {
            return None;
        }
        return Some(RouteBack6 {
            prefsrc: None,
            source: fib.select_source_v6(in_link, dst),
            prefix_len: LINK_LOCAL_PREFIX_LEN,
        });
    }
    let back = fib.reply_route_v6(dst).ok()?;
    Some(RouteBack6 {
        prefsrc: back.prefsrc,
        source: back.source,
        prefix_len: back.prefix_len,
    })
}

/// What [`route_back_v6`] found.
struct RouteBack6 {
    prefsrc: Option<Ipv6Addr>,
    source: Option<Ipv6Addr>,
    /// For the rate limit of errors; a bound route is taken to be the
    /// `fe80::/64` one (errors are bound only to link-local senders).
    prefix_len: u8,
}

const IPPROTO_ICMPV6: u8 = 58;

/// The address at byte `at` of an IPv6 header.
fn addr_at(header: &[u8], at: usize) -> Ipv6Addr {
    let mut o = [0u8; 16];
    o.copy_from_slice(&header[at..at + 16]);
    Ipv6Addr::from(o)
}

/// The route of the ICMPv6 error `icmp6_send` sends for `offending` (the
/// IPv6 packet, from its header) received on `in_link`. Its source is the
/// offending packet's destination if that is one of the router's
/// addresses (`ipv6_chk_addr` with the input device, not strict) and not
/// multicast; else the `prefsrc` of the route back to the sender if it
/// has one (`icmpv6_rt_has_prefsrc`); else `ipv6_dev_get_saddr` on the
/// input device towards the sender ([`Fib::select_source_v6`]); failing
/// that, the source the route back picks. The route back to a link-local
/// sender is the input link's ([`needs_scope_v6`]), and the source the
/// input link's link-local address. `None` where there is none (no route
/// back, no address).
pub fn error_route_v6(fib: &Fib, offending: &[u8], in_link: LinkIndex) -> Option<ErrorRoute6> {
    let header = offending.get(..40)?;
    let (src, dst) = (addr_at(header, 8), addr_at(header, 24));
    let back = route_back_v6(fib, src, in_link, false)?;
    let source = if !dst.is_multicast() && fib.is_own_address_v6(dst, in_link) {
        dst
    } else {
        back.prefsrc
            .or_else(|| fib.select_source_v6(in_link, src))
            .or(back.source)?
    };
    Some(ErrorRoute6 {
        source,
        prefix_len: back.prefix_len,
    })
}

/// The source of [`error_route_v6`].
pub fn error_source_v6(fib: &Fib, offending: &[u8], in_link: LinkIndex) -> Option<Ipv6Addr> {
    error_route_v6(fib, offending, in_link).map(|r| r.source)
}

/// The source of the echo reply `icmpv6_echo_reply` sends for `request`
/// (an IPv6 packet, from its header) received on `in_link`: the address
/// pinged when it is unicast (`ipv6_unicast_destination`); to a multicast
/// address none is given, the route back must leave by the input link
/// (`flowi6_oif` is `icmp6_iif`, strict without a source), and
/// `ip6_dst_lookup_tail` takes `ipv6_dev_get_saddr` on it. `None` where
/// there is none: no route back by that link (kernel-checked by the
/// forwarding oracle, seed 1: a ping to `ff02::1` from `::ffff:10.0.0.2`,
/// routed back by a default route on another link, is not answered).
pub fn echo_source_v6(fib: &Fib, request: &[u8], in_link: LinkIndex) -> Option<Ipv6Addr> {
    let header = request.get(..40)?;
    let (src, dst) = (addr_at(header, 8), addr_at(header, 24));
    if !dst.is_multicast() {
        return Some(dst);
    }
    let back = route_back_v6(fib, src, in_link, true)?;
    back.prefsrc.or(back.source)
}
