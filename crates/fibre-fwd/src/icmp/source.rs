//! The source address of an ICMP error, as the kernel picks it, from the
//! FIB's own answers.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use fibre_fib::{Family, Fib, FlowKeyV4, LinkIndex, RouteGetRequest, RouteType};

/// `INADDR_DUMMY` (192.0.0.8, RFC 7600): `icmp_send`'s source when the
/// route back yields none.
pub const INADDR_DUMMY: Ipv4Addr = Ipv4Addr::new(192, 0, 0, 8);

/// The source of the ICMPv4 error `icmp_send` sends for `offending` (the
/// IPv4 packet, from its header): its destination if that is one of the
/// router's addresses (`RTCF_LOCAL`), else, with
/// `icmp_errors_use_inbound_ifaddr` at its default 0, the source the
/// output route back to the sender picks (`icmp_route_lookup`:
/// `ip_route_output_key_hash` with no source, what `ip route get SENDER`
/// shows as `src`), or [`INADDR_DUMMY`] where that has none. `None` where
/// there is no route back: the kernel sends nothing.
///
/// The route back is looked up with the error's TOS (`icmp_send` passes
/// it), so TOS-selective rules and routes are honoured.
pub fn error_source_v4(fib: &Fib, offending: &[u8]) -> Option<Ipv4Addr> {
    if offending.len() < 20 {
        return None;
    }
    let addr = |at: usize| {
        Ipv4Addr::new(
            offending[at],
            offending[at + 1],
            offending[at + 2],
            offending[at + 3],
        )
    };
    let (src, dst) = (addr(12), addr(16));
    let to_dst = FlowKeyV4 {
        dst: u32::from(dst),
        ..FlowKeyV4::default()
    };
    if fib
        .lookup_output_v4(&to_dst)
        .is_ok_and(|f| f.kind == RouteType::Local)
    {
        return Some(dst);
    }
    let mut back = RouteGetRequest::to(IpAddr::V4(src));
    back.tos = (offending[1] & 0x1e) | 0xc0;
    let answer = fib.route_get(&back).ok()?;
    match answer.prefsrc {
        Some(IpAddr::V4(chosen)) => Some(chosen),
        _ => Some(INADDR_DUMMY),
    }
}

/// The source of the ICMPv6 error `icmp6_send` sends for `offending`
/// (the IPv6 packet, from its header) received on `in_link`: its
/// destination if that is one of the router's addresses (`ipv6_chk_addr`
/// with the input device, not strict: an address on `in_link`, or a
/// global one on any link) and not multicast; else the `prefsrc` of the
/// route back to the sender if it has one (`icmpv6_rt_has_prefsrc`);
/// else `ipv6_dev_get_saddr` on the input device towards the sender
/// ([`Fib::select_source_v6`]); failing that, the source the route back
/// picks. `None` where there is none.
pub fn error_source_v6(fib: &Fib, offending: &[u8], in_link: LinkIndex) -> Option<Ipv6Addr> {
    if offending.len() < 40 {
        return None;
    }
    let addr = |at: usize| {
        let mut o = [0u8; 16];
        o.copy_from_slice(&offending[at..at + 16]);
        Ipv6Addr::from(o)
    };
    let (src, dst) = (addr(8), addr(24));
    if !dst.is_multicast() {
        let ours = fib
            .addresses(Some(Family::V6))
            .into_iter()
            .any(|a| a.local == IpAddr::V6(dst) && (a.link == in_link || !is_link_scoped(dst)));
        if ours {
            return Some(dst);
        }
    }
    let back = fib.route_get(&RouteGetRequest::to(IpAddr::V6(src))).ok();
    if let Some(IpAddr::V6(pref)) = back.as_ref().and_then(|a| a.route.prefsrc) {
        return Some(pref);
    }
    if let Some(chosen) = fib.select_source_v6(in_link, src) {
        return Some(chosen);
    }
    match back.and_then(|a| a.prefsrc) {
        Some(IpAddr::V6(chosen)) => Some(chosen),
        _ => None,
    }
}

/// Link-local (fe80::/10) or loopback: addresses `ipv6_chk_addr` matches
/// only on their own device (`IFA_LINK`, `IFA_HOST` scopes).
fn is_link_scoped(addr: Ipv6Addr) -> bool {
    addr.is_loopback() || (addr.segments()[0] & 0xffc0) == 0xfe80
}
