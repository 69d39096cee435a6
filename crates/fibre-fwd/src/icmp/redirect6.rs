//! The IPv6 redirect (RFC 4861 section 4.5) as `ndisc_send_redirect`
//! (net/ipv6/ndisc.c) builds it: a neighbour discovery message, not an
//! `icmp6_send` error, so its header and limits are its own.

use std::net::Ipv6Addr;

use fibre_net::ipv6;

use super::kinds::Unsent;
use super::v6::{finish_icmpv6, Header6};

/// `NDISC_REDIRECT`.
const NDISC_REDIRECT: u8 = 137;
/// `ND_OPT_TARGET_LL_ADDR` and `ND_OPT_REDIRECT_HDR`.
const ND_OPT_TARGET_LL_ADDR: u8 = 2;
const ND_OPT_REDIRECT_HDR: u8 = 4;
/// The neighbour discovery socket's hop limit (RFC 4861 section 4.5:
/// 255, which receivers check).
const NDISC_HOP_LIMIT: u8 = 255;
/// `sizeof(struct rd_msg)`: the ICMPv6 header, target and destination.
const RD_MSG_LEN: usize = 8 + 16 + 16;
/// The target link-layer address option for Ethernet
/// (`ndisc_opt_addr_space`: type, length, six bytes).
const TLLAO_LEN: usize = 8;
const IPV6_MIN_MTU: usize = 1280;

/// Writes into `out` the IPv6 packet of the redirect `ndisc_send_redirect`
/// sends about `packet` (the IPv6 packet being forwarded, as received:
/// its hop limit not yet decremented) from `source` (the input link's
/// link-local address, `ipv6_get_lladdr`) to the packet's source: target
/// `target` (the better first hop: the route's gateway, or the
/// destination itself when it is on the link), destination the packet's;
/// the target link-layer address option when its neighbour is valid
/// (`target_mac`); then the redirected header option with as much of the
/// packet as fits 1280 bytes, in whole 8-byte units (`rd_len`: the
/// option's 8 bytes plus the packet, rounded down). Hop limit 255,
/// traffic class and flow label 0 (`ip6_nd_hdr`). Returns its length.
///
/// ```
/// use fibre_fwd::icmp::write_redirect_v6;
/// let mut packet = vec![0x60, 0, 0, 0, 0, 8, 17, 64];
/// packet.extend_from_slice(&"2001:db8:1::2".parse::<std::net::Ipv6Addr>().unwrap().octets());
/// packet.extend_from_slice(&"2001:db8:1::3".parse::<std::net::Ipv6Addr>().unwrap().octets());
/// packet.extend_from_slice(&[0x30, 0x39, 0, 53, 0, 8, 0, 0]);
/// let mut out = [0u8; 1280];
/// let target = "2001:db8:1::3".parse().unwrap();
/// let len = write_redirect_v6(&packet, target, Some([2, 0, 0, 0, 0, 3]),
///     "fe80::1".parse().unwrap(), &mut out).unwrap();
/// // Header, redirect, target link-layer address, redirected header (48 + 8).
/// assert_eq!(len, 40 + 40 + 8 + 56);
/// assert_eq!((out[6], out[7]), (58, 255));
/// assert_eq!(out[40], 137);
/// assert_eq!(&out[80..88], &[2, 1, 2, 0, 0, 0, 0, 3]);
/// assert_eq!(&out[88..90], &[4, 7]);
/// assert_eq!(&out[96..len], &packet[..]);
/// ```
pub fn write_redirect_v6(
    packet: &[u8],
    target: Ipv6Addr,
    target_mac: Option<[u8; 6]>,
    source: Ipv6Addr,
    out: &mut [u8],
) -> Result<usize, Unsent> {
    const HEADER: usize = ipv6::HEADER_LEN;
    let addr = |at: usize| -> Result<Ipv6Addr, Unsent> {
        let bytes: [u8; 16] = packet
            .get(at..at + 16)
            .and_then(|b| b.try_into().ok())
            .ok_or(Unsent::Truncated)?;
        Ok(Ipv6Addr::from(bytes))
    };
    let (to, destination) = (addr(8)?, addr(24)?);
    let options = if target_mac.is_some() { TLLAO_LEN } else { 0 };
    let rd_len = (IPV6_MIN_MTU - HEADER - RD_MSG_LEN - options).min(packet.len() + 8) & !7;
    let icmp_len = RD_MSG_LEN + options + rd_len;
    let icmp = out
        .get_mut(HEADER..HEADER + icmp_len)
        .ok_or(Unsent::BufferTooSmall)?;
    icmp[..8].copy_from_slice(&[NDISC_REDIRECT, 0, 0, 0, 0, 0, 0, 0]);
    icmp[8..24].copy_from_slice(&target.octets());
    icmp[24..40].copy_from_slice(&destination.octets());
    let mut at = RD_MSG_LEN;
    if let Some(mac) = target_mac {
        icmp[at..at + 2].copy_from_slice(&[ND_OPT_TARGET_LL_ADDR, 1]);
        icmp[at + 2..at + 8].copy_from_slice(&mac);
        at += TLLAO_LEN;
    }
    // `ndisc_fill_redirect_hdr_option`: type, length in 8-byte units, six
    // reserved bytes, then `rd_len - 8` bytes of the packet.
    icmp[at..at + 8].copy_from_slice(&[ND_OPT_REDIRECT_HDR, (rd_len / 8) as u8, 0, 0, 0, 0, 0, 0]);
    icmp[at + 8..at + rd_len].copy_from_slice(&packet[..rd_len - 8]);
    let header = Header6 {
        traffic_class: 0,
        hop_limit: NDISC_HOP_LIMIT,
        flow_label: 0,
        src: source,
        dst: to,
    };
    finish_icmpv6(out, icmp_len, &header)
}
