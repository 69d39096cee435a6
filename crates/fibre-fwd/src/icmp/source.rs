//! The source address of an ICMP error, as the kernel picks it, from the
//! FIB's own answers. Nothing here allocates.

use std::net::{Ipv4Addr, Ipv6Addr};

use fibre_fib::{Fib, FlowKeyV4, LinkIndex, RouteType};

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

/// The route of the ICMPv6 error `icmp6_send` sends for `offending` (the
/// IPv6 packet, from its header) received on `in_link`. Its source is the
/// offending packet's destination if that is one of the router's
/// addresses (`ipv6_chk_addr` with the input device, not strict) and not
/// multicast; else the `prefsrc` of the route back to the sender if it
/// has one (`icmpv6_rt_has_prefsrc`); else `ipv6_dev_get_saddr` on the
/// input device towards the sender ([`Fib::select_source_v6`]); failing
/// that, the source the route back picks ([`Fib::reply_route_v6`]).
/// `None` where there is none (no route back, no address).
pub fn error_route_v6(fib: &Fib, offending: &[u8], in_link: LinkIndex) -> Option<ErrorRoute6> {
    let header = offending.get(..40)?;
    let addr = |at: usize| {
        let mut o = [0u8; 16];
        o.copy_from_slice(&header[at..at + 16]);
        Ipv6Addr::from(o)
    };
    let (src, dst) = (addr(8), addr(24));
    let back = fib.reply_route_v6(src).ok()?;
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
