//! ICMPv4 messages as `icmp_send` and `icmp_reply` (net/ipv4/icmp.c)
//! build them: the IPv4 header of the reply, the ICMP header and the
//! quote of the offending packet.

use std::net::Ipv4Addr;

use fibre_net::checksum;
use fibre_net::ip::Protocol;
use fibre_net::ipv4;

use super::kinds::{Icmp4Error, Unsent};
use super::options::{echo, recorded};
use crate::options::Compiled;

/// The TTL of the kernel's ICMP replies: its ICMP socket leaves `uc_ttl`
/// at -1, so `ip_select_ttl` takes the route's `hoplimit` metric or else
/// `sysctl_ip_default_ttl`, 64.
pub const REPLY_TTL: u8 = 64;

/// `icmp_send` quotes so much that the whole error stays within 576 bytes
/// (RFC 1812 section 4.3.2.3): `room = min(dst_mtu, 576)`.
pub const MAX_ERROR_LEN: usize = 576;

/// `IPTOS_PREC_INTERNETCONTROL`: the precedence `icmp_send` gives errors.
const PREC_INTERNETCONTROL: u8 = 0xc0;
/// `IPTOS_TOS_MASK`: the old TOS bits `RT_TOS` keeps of the offending
/// packet's TOS byte.
const TOS_MASK: u8 = 0x1e;
/// `NR_ICMP_TYPES`: types above it are taken for errors (`icmp_send`:
/// "Assume any unknown ICMP type is an error").
const NR_ICMP_TYPES: u8 = 18;

/// `icmp_pointers[type].error`: the ICMP types that are errors
/// (destination unreachable, source quench, redirect, time exceeded,
/// parameter problem), and types 1, 2, 6, 7, 9 and 10, which the kernel
/// does not handle (`icmp_discard`) and its table marks as errors too.
fn is_error_type(icmp_type: u8) -> bool {
    matches!(icmp_type, 1..=7 | 9..=12) || icmp_type > NR_ICMP_TYPES
}

/// The IPv4 header of `packet`: its length, total length (bounded by the
/// bytes there are), source and destination.
struct Offending {
    header_len: usize,
    len: usize,
}

fn offending_v4(packet: &[u8]) -> Result<Offending, Unsent> {
    if packet.len() < ipv4::MIN_HEADER_LEN || packet[0] >> 4 != 4 {
        return Err(Unsent::Truncated);
    }
    let header_len = usize::from(packet[0] & 0x0f) * 4;
    if header_len < ipv4::MIN_HEADER_LEN || header_len > packet.len() {
        return Err(Unsent::Truncated);
    }
    let total = usize::from(u16::from_be_bytes([packet[2], packet[3]]));
    Ok(Offending {
        header_len,
        // `skb->len` after `ip_rcv_core` trimmed the padding.
        len: total.clamp(header_len, packet.len()),
    })
}

fn addr_at(packet: &[u8], at: usize) -> Ipv4Addr {
    Ipv4Addr::new(packet[at], packet[at + 1], packet[at + 2], packet[at + 3])
}

/// True if the source cannot name one node: such packets are martians
/// (`ip_route_input_slow`'s `martian_source`: multicast, limited
/// broadcast, 0.0.0.0, loopback) and never reach `icmp_send`. The rest of
/// 0.0.0.0/8 is unicast since "ipv4: Allow 0.0.0.0/8 as a valid address
/// range" (Linux 5.3): the kernel answers those sources (`ip route get
/// DST from 0.1.2.3 iif DEV` routes; `from 0.0.0.0` is EINVAL).
fn is_martian_source(src: Ipv4Addr) -> bool {
    src.is_multicast() || src.is_broadcast() || src.is_unspecified() || src.is_loopback()
}

/// Writes the IPv4 header (with `options`) of an ICMP message of
/// `icmp_len` bytes already in place after it, then the ICMP checksum.
/// The IP ID is fibre's own (the kernel's is `ip_select_ident`'s hash
/// with a random key: a field the oracle masks); DF is clear, as the
/// kernel's ICMP socket has `IP_PMTUDISC_DONT`.
fn finish_v4(
    out: &mut [u8],
    options: &[u8],
    icmp_len: usize,
    tos: u8,
    src: Ipv4Addr,
    dst: Ipv4Addr,
) -> Result<usize, Unsent> {
    let header_len = ipv4::MIN_HEADER_LEN + options.len();
    let total = header_len + icmp_len;
    let icmp = out
        .get_mut(header_len..total)
        .ok_or(Unsent::BufferTooSmall)?;
    icmp[2..4].fill(0);
    let sum = checksum::checksum(icmp);
    icmp[2..4].copy_from_slice(&sum.to_be_bytes());
    let repr = ipv4::Repr {
        src_addr: src,
        dst_addr: dst,
        protocol: Protocol::Icmp,
        payload_len: icmp_len,
        ttl: REPLY_TTL,
        tos,
        ident: sum,
        dont_frag: false,
        more_frags: false,
        frag_offset: 0,
        options,
    };
    // Echoed options are well formed and within 40 bytes, the total
    // within 65535: the header always encodes.
    repr.emit(&mut out[..total])
        .map_err(|_| Unsent::BufferTooSmall)?;
    Ok(total)
}

/// Writes into `out` the whole IPv4 packet `icmp_send` sends for
/// `offending` (the IPv4 packet as the router received it, from its
/// header: for time exceeded, fragmentation needed and the route errors
/// with the TTL as it arrived, for a redirect after `ip_decrease_ttl`, as
/// `ip_forward` calls them), from `source` (see
/// [`error_source_v4`](super::error_source_v4)) to the offending packet's
/// source (or, for a packet with a source route, the first hop of the
/// route reversed, which the source must then be chosen for). Returns its
/// length, or why the kernel sends nothing.
///
/// The reply route's MTU is taken as at least 576 (any Ethernet); see
/// [`write_error_v4_mtu`] for a smaller one. The caller has already
/// dropped what `icmp_send` checks outside the packet: frames not sent
/// to the router's own MAC (`skb->pkt_type != PACKET_HOST`) and packets
/// whose input route is a broadcast (`RTCF_BROADCAST`); the rate limits
/// are [`RateLimiter`](super::RateLimiter)'s.
///
/// ```
/// use fibre_fwd::icmp::{write_error_v4, Icmp4Error};
/// // A UDP packet with TTL 1 from 10.0.1.2 to 10.0.2.2.
/// let mut packet = [0x45, 0, 0, 28, 0, 1, 0, 0, 1, 17, 0, 0, 10, 0, 1, 2, 10, 0, 2, 2,
///                   0x30, 0x39, 0, 53, 0, 8, 0, 0];
/// let sum = fibre_net::checksum::checksum(&packet[..20]);
/// packet[10..12].copy_from_slice(&sum.to_be_bytes());
/// let mut out = [0u8; 576];
/// let len = write_error_v4(&packet, Icmp4Error::TimeExceeded, "10.0.1.1".parse().unwrap(), &mut out).unwrap();
/// assert_eq!(len, 20 + 8 + 28);
/// assert_eq!(&out[12..20], &[10, 0, 1, 1, 10, 0, 1, 2]);
/// assert_eq!(&out[20..22], &[11, 0]);
/// assert_eq!(&out[28..len], &packet[..]);
/// ```
pub fn write_error_v4(
    offending: &[u8],
    error: Icmp4Error,
    source: Ipv4Addr,
    out: &mut [u8],
) -> Result<usize, Unsent> {
    write_error_v4_mtu(offending, error, source, MAX_ERROR_LEN, out)
}

/// [`write_error_v4`] for a reply route of MTU `reply_mtu` (`icmp_send`'s
/// `room = dst_mtu(&rt->dst)`, capped at 576).
///
/// The options echoed are those the input path's `ip_options_compile`
/// recorded, found by compiling the held packet's options again (see
/// [`record_route_on_input`](super::record_route_on_input)).
pub fn write_error_v4_mtu(
    offending: &[u8],
    error: Icmp4Error,
    source: Ipv4Addr,
    reply_mtu: usize,
    out: &mut [u8],
) -> Result<usize, Unsent> {
    let off = offending_v4(offending)?;
    let options = recorded(offending, off.header_len);
    write_error_v4_recorded(offending, &options, error, source, reply_mtu, out)
}

/// [`write_error_v4_mtu`] for a packet whose options the input path
/// compiled into `options` (`IPCB(skb)->opt`, what `icmp_send` echoes).
pub(crate) fn write_error_v4_recorded(
    offending: &[u8],
    options: &Compiled,
    error: Icmp4Error,
    source: Ipv4Addr,
    reply_mtu: usize,
    out: &mut [u8],
) -> Result<usize, Unsent> {
    let off = offending_v4(offending)?;
    let (src, dst) = (addr_at(offending, 12), addr_at(offending, 16));
    if dst.is_multicast() || dst.is_broadcast() {
        return Err(Unsent::MulticastDestination);
    }
    let frag = u16::from_be_bytes([offending[6], offending[7]]);
    if frag & 0x1fff != 0 {
        return Err(Unsent::NotFirstFragment);
    }
    if offending[9] == u8::from(Protocol::Icmp) {
        // `skb_header_pointer` on the inner type: no type byte, no error.
        match offending[..off.len].get(off.header_len) {
            Some(&inner) if !is_error_type(inner) => {}
            _ => return Err(Unsent::IcmpError),
        }
    }
    if is_martian_source(src) {
        return Err(Unsent::NonUnicastSource);
    }
    let options = echo(offending, options)?;
    // `icmp_route_lookup`: to the reversed source route's first hop, if any.
    let to = options.first_hop.unwrap_or(src);
    let options = options.with_addresses(source, src);
    let options = options.bytes();
    // `room` as `icmp_send` counts it, echoed options included.
    let room = reply_mtu.min(MAX_ERROR_LEN) as isize
        - (ipv4::MIN_HEADER_LEN + options.len()) as isize
        - fibre_net::icmpv4::HEADER_LEN as isize;
    if room <= ipv4::MIN_HEADER_LEN as isize {
        return Err(Unsent::NoRoom);
    }
    let quote = off.len.min(room as usize);
    let icmp_len = fibre_net::icmpv4::HEADER_LEN + quote;
    let header_len = ipv4::MIN_HEADER_LEN + options.len();
    let total = header_len + icmp_len;
    if out.len() < total {
        return Err(Unsent::BufferTooSmall);
    }
    let (kind, code, rest) = error.wire();
    let icmp = &mut out[header_len..total];
    icmp[0] = kind;
    icmp[1] = code;
    icmp[4..8].copy_from_slice(&rest);
    icmp[8..].copy_from_slice(&offending[..quote]);
    let tos = (offending[1] & TOS_MASK) | PREC_INTERNETCONTROL;
    finish_v4(out, options, icmp_len, tos, source, to)
}

/// Where `icmp_send` sends its error about `offending` (the packet as the
/// router holds it, its options compiled into `options`): the first hop
/// of the reversed source route it echoes (`icmp_route_lookup`'s
/// `faddr`), else the packet's source. The route back, its source address
/// and the rate limit are those of this destination.
pub(crate) fn error_destination_v4(offending: &[u8], options: &Compiled) -> Option<Ipv4Addr> {
    let src = addr_at(offending.get(..20)?, 12);
    if options.srr == 0 {
        return Some(src);
    }
    Some(echo(offending, options).ok()?.first_hop.unwrap_or(src))
}

/// Writes into `out` the echo reply `icmp_echo` / `icmp_reply` send for
/// `request` (an IPv4 packet carrying an ICMP echo request to one of the
/// router's addresses): from the address pinged to the sender, the
/// request's TOS byte, TTL 64, DF clear, the request's ICMP header with
/// type 0 and all of its data. Returns its length, or why there is none:
/// not an echo request with a valid checksum (`icmp_rcv` drops bad
/// checksums), a fragment (the kernel reassembles first: `ip_defrag`),
/// to a multicast or broadcast address (`icmp_echo_ignore_broadcasts`
/// defaults to 1), or with options fibre does not echo (a prespecified
/// timestamp that took the time, see `ip_options_echo`).
///
/// A reply longer than the route's MTU is written whole; the kernel
/// sends it in fragments (`ip_append_data`, DF clear): the caller
/// fragments it.
pub fn write_echo_reply_v4(request: &[u8], out: &mut [u8]) -> Result<usize, Unsent> {
    let req = offending_v4(request)?;
    let options = recorded(request, req.header_len);
    write_echo_reply_v4_recorded(request, &request[..req.header_len], &options, out)
}

/// [`write_echo_reply_v4`] for a request whose options the input path
/// compiled into `options`, changing its header into `held_header` (the
/// options the reply echoes are read there).
pub(crate) fn write_echo_reply_v4_recorded(
    request: &[u8],
    held_header: &[u8],
    options: &Compiled,
    out: &mut [u8],
) -> Result<usize, Unsent> {
    let req = offending_v4(request)?;
    if request[9] != u8::from(Protocol::Icmp) {
        return Err(Unsent::NotEchoRequest);
    }
    let frag = u16::from_be_bytes([request[6], request[7]]);
    if frag & 0x3fff != 0 {
        return Err(Unsent::NotEchoRequest);
    }
    let (src, dst) = (addr_at(request, 12), addr_at(request, 16));
    if dst.is_multicast() || dst.is_broadcast() {
        return Err(Unsent::NotEchoRequest);
    }
    if is_martian_source(src) {
        return Err(Unsent::NonUnicastSource);
    }
    let icmp_in = &request[req.header_len..req.len];
    if icmp_in.len() < fibre_net::icmpv4::HEADER_LEN
        || icmp_in[0] != fibre_net::icmpv4::msg_type::ECHO_REQUEST
        || checksum::sum(icmp_in) != 0xffff
    {
        return Err(Unsent::NotEchoRequest);
    }
    let options = echo(held_header, options)?;
    // `icmp_reply`: to the reversed source route's first hop, if any.
    let to = options.first_hop.unwrap_or(src);
    let options = options.with_addresses(dst, src);
    let options = options.bytes();
    let header_len = ipv4::MIN_HEADER_LEN + options.len();
    let total = header_len + icmp_in.len();
    if total > ipv4::MAX_PACKET_LEN {
        return Err(Unsent::NotEchoRequest);
    }
    if out.len() < total {
        return Err(Unsent::BufferTooSmall);
    }
    let icmp = &mut out[header_len..total];
    icmp.copy_from_slice(icmp_in);
    icmp[0] = fibre_net::icmpv4::msg_type::ECHO_REPLY;
    finish_v4(out, options, icmp_in.len(), request[1], dst, to)
}
