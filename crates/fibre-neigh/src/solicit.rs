//! The families' `solicit` operations: `arp_solicit` (net/ipv4/arp.c) and
//! `ndisc_solicit` (net/ipv6/ndisc.c), with the source address each picks.

use std::net::IpAddr;

use fibre_fib::RouteType;
use fibre_net::arp::Operation;

use crate::frames::{
    arp_frame, nd_frame, solicited_node, NaFlags, NdMessage, NDISC_NEIGHBOUR_SOLICITATION,
};
use crate::router::Router;

/// The frame soliciting `key`'s neighbour: unicast to `unicast` when given
/// (a probe of a known address), else broadcast (ARP) or to the
/// solicited-node group (ND). `packet_source` is the source of the newest
/// queued packet: used when it is one of ours (`arp_announce` 0;
/// `ipv6_chk_addr` on the device), else the device's own choice.
pub(crate) fn solicitation(
    key: (u32, IpAddr),
    unicast: Option<[u8; 6]>,
    packet_source: Option<IpAddr>,
    router: &dyn Router,
) -> Option<Vec<u8>> {
    let (link, target) = key;
    let mac = router.mac(link)?;
    match target {
        IpAddr::V4(target) => {
            let source = match packet_source {
                Some(IpAddr::V4(src)) if router.ipv4_addr_type(link, src) == RouteType::Local => {
                    src
                }
                _ => router.ipv4_source(link, target),
            };
            Some(arp_frame(
                Operation::Request,
                target,
                source,
                unicast,
                mac,
                None,
            ))
        }
        IpAddr::V6(target) => {
            let source = match packet_source {
                Some(IpAddr::V6(src)) if router.ipv6_is_ours_on(link, src) => src,
                // ndisc_send_ns: the link-local address, else `::`.
                _ => router
                    .ipv6_link_local(link)
                    .unwrap_or(std::net::Ipv6Addr::UNSPECIFIED),
            };
            let (dst_mac, dst) = match unicast {
                Some(ha) => (ha, target),
                None => {
                    let group = solicited_node(target);
                    let mac = fibre_fib::multicast_mac(&IpAddr::V6(group))?;
                    (mac, group)
                }
            };
            // ndisc_send_ns: our MAC as source link-layer address unless
            // the source is `::` (RFC 4861 section 7.2.2).
            let ns = NdMessage {
                kind: NDISC_NEIGHBOUR_SOLICITATION,
                flags: NaFlags::default(),
                target,
                lladdr: (!source.is_unspecified()).then_some(mac),
            };
            Some(nd_frame(dst_mac, mac, source, dst, &ns))
        }
    }
}
