//! ICMPv6 messages as `icmp6_send` and `icmpv6_echo_reply`
//! (net/ipv6/icmp.c) build them.

use std::net::Ipv6Addr;

use fibre_base::Ipv6;
use fibre_net::checksum;
use fibre_net::ip::number::ICMPV6;
use fibre_net::ip::Protocol;
use fibre_net::ipv6;

use super::kinds::{Icmp6Error, Unsent};

/// The hop limit of the kernel's ICMPv6 messages: `ip6_sk_dst_hoplimit`
/// with the socket's -1 takes the route's `hoplimit` metric or the
/// device's `hop_limit`, 64 by default.
pub const REPLY_HOP_LIMIT: u8 = 64;

/// An ICMPv6 error fits the minimum IPv6 MTU (RFC 4443 section 2.4 (c)):
/// `icmp6_send` quotes at most `IPV6_MIN_MTU - sizeof(ipv6hdr) -
/// sizeof(icmp6hdr)` bytes.
pub const MAX_ERROR_LEN: usize = 1280;

const HEADER: usize = ipv6::HEADER_LEN;
const ICMP_HEADER: usize = fibre_net::icmpv6::HEADER_LEN;

/// `ICMPV6_INFOMSG_MASK`: types with the high bit set are informational.
const INFO_MSG_MASK: u8 = 0x80;

/// The bytes of `packet` the kernel's `skb` holds after `ipv6_rcv`
/// trimmed it to the payload length; untrimmed where a zero payload
/// length comes with a hop-by-hop header (a jumbogram's, RFC 2675: see
/// `ip6_rcv_core`).
fn packet_len(packet: &[u8]) -> Result<usize, Unsent> {
    const NEXTHDR_HOP: u8 = 0;
    if packet.len() < HEADER || packet[0] >> 4 != 6 {
        return Err(Unsent::Truncated);
    }
    let payload = usize::from(u16::from_be_bytes([packet[4], packet[5]]));
    if payload == 0 && packet[6] == NEXTHDR_HOP {
        return Ok(packet.len());
    }
    Ok((HEADER + payload).min(packet.len()))
}

fn addr_at(packet: &[u8], at: usize) -> Ipv6Addr {
    let mut octets = [0u8; 16];
    octets.copy_from_slice(&packet[at..at + 16]);
    Ipv6Addr::from(octets)
}

/// Where the upper-layer header starts, skipping extension headers as
/// `ipv6_skip_exthdr` does: hop-by-hop, routing, destination options,
/// authentication, and a first fragment's header. Returns the offset and
/// the next header, and the fragment offset field seen (0 if none);
/// `None` where the chain cannot be read or ends in "no next header".
fn skip_extension_headers(packet: &[u8]) -> Option<(usize, u8, u16)> {
    use fibre_net::ip::number::{
        AUTH, DEST_OPTS, FRAGMENT, HOP_BY_HOP, NO_NEXT_HEADER as NO_NEXT, ROUTING,
    };
    let mut next = packet[6];
    let mut at = HEADER;
    let mut frag_off = 0u16;
    while matches!(
        next,
        HOP_BY_HOP | ROUTING | FRAGMENT | AUTH | NO_NEXT | DEST_OPTS
    ) {
        if next == NO_NEXT {
            return None;
        }
        let header = packet.get(at..at + 2)?;
        let len = if next == FRAGMENT {
            let field = packet.get(at + 2..at + 4)?;
            frag_off = u16::from_be_bytes([field[0], field[1]]);
            if frag_off & !0x7 != 0 {
                // A later fragment: the chain stops at its header.
                return Some((at, next, frag_off));
            }
            8
        } else if next == AUTH {
            (usize::from(header[1]) + 2) << 2
        } else {
            (usize::from(header[1]) + 1) << 3
        };
        next = header[0];
        at += len;
    }
    Some((at, next, frag_off))
}

/// `is_ineligible`: true if `packet` (cut at its length) is an ICMPv6
/// error, or an ICMPv6 packet too short to show its type that is not a
/// later fragment.
fn is_ineligible(packet: &[u8]) -> bool {
    let Some((at, next, frag_off)) = skip_extension_headers(packet) else {
        return false;
    };
    if next != ICMPV6 {
        return false;
    }
    match packet.get(at) {
        None => frag_off == 0,
        Some(&kind) => kind & INFO_MSG_MASK == 0,
    }
}

/// `opt_unrec`: the option a parameter problem points at asks for an
/// error even to a multicast destination (its two high bits are 10).
fn option_demands_error(packet: &[u8], pointer: u32) -> bool {
    usize::try_from(pointer)
        .ok()
        .and_then(|at| packet.get(at))
        .is_none_or(|&option| option & 0xc0 == 0x80)
}

/// A flow label for a message of the router's own, standing in for the
/// kernel's automatic one (`ip6_make_flowlabel`: the flow's hash with a
/// key chosen at boot, so a field the oracle masks): a hash of the
/// addresses, never zero.
fn flow_label(src: Ipv6Addr, dst: Ipv6Addr) -> u32 {
    let mixed =
        (u128::from(src) ^ u128::from(dst).rotate_left(64)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let label = ((mixed >> 64) as u32) & ipv6::MAX_FLOW_LABEL;
    label.max(1)
}

/// Writes the IPv6 header of an ICMPv6 message of `icmp_len` bytes
/// already in `out[40..]`, then its checksum over the pseudo-header.
fn finish_v6(
    out: &mut [u8],
    icmp_len: usize,
    traffic_class: u8,
    src: Ipv6Addr,
    dst: Ipv6Addr,
) -> Result<usize, Unsent> {
    let header = Header6 {
        traffic_class,
        hop_limit: REPLY_HOP_LIMIT,
        flow_label: flow_label(src, dst),
        src,
        dst,
    };
    finish_icmpv6(out, icmp_len, &header)
}

/// The IPv6 header fields of an ICMPv6 message the router sends.
pub(super) struct Header6 {
    pub traffic_class: u8,
    pub hop_limit: u8,
    pub flow_label: u32,
    pub src: Ipv6Addr,
    pub dst: Ipv6Addr,
}

/// Writes `header` before the ICMPv6 message of `icmp_len` bytes already
/// in `out[40..]`, then the message's checksum over the pseudo-header;
/// returns the packet's length.
pub(super) fn finish_icmpv6(
    out: &mut [u8],
    icmp_len: usize,
    header: &Header6,
) -> Result<usize, Unsent> {
    let total = HEADER + icmp_len;
    let icmp = out.get_mut(HEADER..total).ok_or(Unsent::BufferTooSmall)?;
    icmp[2..4].fill(0);
    let pseudo = checksum::pseudo_header::<Ipv6>(header.src, header.dst, ICMPV6, icmp_len as u32);
    let sum = !checksum::add(pseudo, checksum::sum(icmp));
    icmp[2..4].copy_from_slice(&sum.to_be_bytes());
    let repr = ipv6::Repr {
        src_addr: header.src,
        dst_addr: header.dst,
        next_header: Protocol::Icmpv6,
        payload_len: icmp_len,
        hop_limit: header.hop_limit,
        traffic_class: header.traffic_class,
        flow_label: header.flow_label,
    };
    repr.emit(&mut out[..total])
        .map_err(|_| Unsent::BufferTooSmall)?;
    Ok(total)
}

/// Writes into `out` the whole IPv6 packet `icmp6_send` sends for
/// `offending` (the IPv6 packet as received, from its header; time
/// exceeded and packet too big quote the hop limit as it arrived, as
/// `ip6_forward` sends them before decrementing), from `source` (see
/// [`error_source_v6`](super::error_source_v6)) to the offending packet's
/// source: traffic class 0, hop limit 64, and as much of the offending
/// packet as fits 1280 bytes. Returns its length, or why the kernel sends
/// nothing: a multicast destination (except packet too big and parameter
/// problems about options that demand an answer), an unspecified or
/// multicast source, an ICMPv6 error (`is_ineligible`). Unlike IPv4,
/// later fragments are answered.
///
/// The caller has already dropped frames not sent to the router's MAC
/// (`skb->pkt_type != PACKET_HOST` counts as a multicast destination).
///
/// ```
/// use fibre_fwd::icmp::{write_error_v6, Icmp6Error};
/// let mut packet = vec![0x60, 0, 0, 0, 0, 8, 17, 1];
/// packet.extend_from_slice(&"2001:db8:1::2".parse::<std::net::Ipv6Addr>().unwrap().octets());
/// packet.extend_from_slice(&"2001:db8:2::2".parse::<std::net::Ipv6Addr>().unwrap().octets());
/// packet.extend_from_slice(&[0x30, 0x39, 0, 53, 0, 8, 0, 0]);
/// let mut out = [0u8; 1280];
/// let len = write_error_v6(&packet, Icmp6Error::TimeExceeded, "2001:db8:1::1".parse().unwrap(), &mut out).unwrap();
/// assert_eq!(len, 40 + 8 + 48);
/// assert_eq!((out[6], out[7]), (58, 64));
/// assert_eq!(&out[40..42], &[3, 0]);
/// assert_eq!(&out[48..len], &packet[..]);
/// ```
pub fn write_error_v6(
    offending: &[u8],
    error: Icmp6Error,
    source: Ipv6Addr,
    out: &mut [u8],
) -> Result<usize, Unsent> {
    let len = packet_len(offending)?;
    let offending = &offending[..len];
    let (src, dst) = (addr_at(offending, 8), addr_at(offending, 24));
    if dst.is_multicast() {
        let answered = match error {
            Icmp6Error::PacketTooBig { .. } => true,
            Icmp6Error::ParameterProblem { code: 2, pointer } => {
                option_demands_error(offending, pointer)
            }
            _ => false,
        };
        if !answered {
            return Err(Unsent::MulticastDestination);
        }
    }
    if src.is_unspecified() || src.is_multicast() {
        return Err(Unsent::NonUnicastSource);
    }
    if is_ineligible(offending) {
        return Err(Unsent::IcmpError);
    }
    let quote = len.min(MAX_ERROR_LEN - HEADER - ICMP_HEADER);
    let icmp_len = ICMP_HEADER + quote;
    if out.len() < HEADER + icmp_len {
        return Err(Unsent::BufferTooSmall);
    }
    let (kind, code, rest) = error.wire();
    let icmp = &mut out[HEADER..HEADER + icmp_len];
    icmp[0] = kind;
    icmp[1] = code;
    icmp[4..8].copy_from_slice(&rest);
    icmp[ICMP_HEADER..].copy_from_slice(&offending[..quote]);
    finish_v6(out, icmp_len, 0, source, src)
}

/// Writes into `out` the echo reply `icmpv6_echo_reply` sends for
/// `request` (an IPv6 packet carrying an ICMPv6 echo request to one of
/// the router's unicast addresses, after any hop-by-hop or destination
/// options): from the address pinged, the request's traffic class, hop
/// limit 64, the request's ICMPv6 header with type 129 and all its data.
/// Returns its length, or why there is none: not an echo request with a
/// valid checksum, a fragment (reassembled first), a multicast source; to
/// a multicast address the kernel answers from a selected source:
/// [`write_echo_reply_v6_from`]. An unspecified source is answered, to
/// `::`: `icmpv6_rcv` and `icmpv6_echo_reply` do not look at the source
/// (kernel-checked by the forwarding oracle: with a default route, the
/// reply leaves by it).
///
/// A reply longer than the route's MTU is written whole; the kernel
/// fragments it (`ip6_append_data`): the caller does.
pub fn write_echo_reply_v6(request: &[u8], out: &mut [u8]) -> Result<usize, Unsent> {
    let len = packet_len(request)?;
    let dst = addr_at(request, 24);
    if dst.is_multicast() {
        return Err(Unsent::MulticastDestination);
    }
    write_echo_reply_v6_from(&request[..len], dst, out)
}

/// Where the walk of a packet's extension headers on local delivery ends
/// (`ip6_input_finish` handing each header to its handler).
enum InputChain {
    /// At an upper-layer header (or one the walk does not read on).
    Upper { at: usize, next: u8 },
    /// At a fragment header cut short.
    FragmentCut { at: usize },
    /// Anything else: a fragment for reassembly, a header cut short that
    /// its handler drops silently, an authentication header (IPsec's).
    Other,
}

/// [`InputChain`] of `packet` (an IPv6 packet as trimmed, from its header):
/// hop-by-hop first only (`ipv6_parse_hopopts` in `ip6_rcv_core`), then
/// destination options and routing headers (`ipv6_destopt_rcv`,
/// `ipv6_rthdr_rcv`: dropped if cut short), an atomic fragment's header
/// (`ipv6_frag_rcv`: neither offset nor more fragments, passed over).
fn input_chain(packet: &[u8]) -> InputChain {
    use fibre_net::ip::number::{AUTH, DEST_OPTS, FRAGMENT, HOP_BY_HOP, ROUTING};
    const FRAGMENT_HEADER: usize = 8;
    /// `IP6_OFFSET | IP6_MF`.
    const NOT_ATOMIC: u16 = 0xfff9;
    let (mut next, mut at) = (packet[6], HEADER);
    loop {
        match next {
            FRAGMENT => {
                let Some(header) = packet.get(at..at + FRAGMENT_HEADER) else {
                    return InputChain::FragmentCut { at };
                };
                if u16::from_be_bytes([header[2], header[3]]) & NOT_ATOMIC != 0 {
                    return InputChain::Other;
                }
                (next, at) = (header[0], at + FRAGMENT_HEADER);
            }
            HOP_BY_HOP | ROUTING | DEST_OPTS if next != HOP_BY_HOP || at == HEADER => {
                let Some(header) = packet.get(at..at + 2) else {
                    return InputChain::Other;
                };
                let end = at + ((usize::from(header[1]) + 1) << 3);
                // A routing header with segments left is the router's to
                // act on (`ipv6_rthdr_rcv`), not passed over.
                let segments_left = packet.get(at + 3).copied().unwrap_or(0);
                if end > packet.len() || (next == ROUTING && segments_left != 0) {
                    return InputChain::Other;
                }
                (next, at) = (header[0], end);
            }
            HOP_BY_HOP | AUTH => return InputChain::Other,
            _ => return InputChain::Upper { at, next },
        }
    }
}

/// Where a fragment header of `packet` (an IPv6 packet to the router, from
/// its header) starts if it is cut short: `ipv6_frag_rcv` cannot pull its
/// 8 bytes and answers a parameter problem, erroneous header field, that
/// points at it (`icmpv6_param_prob(skb, ICMPV6_HDR_FIELD,
/// skb_network_header_len(skb))`). The headers before it must be whole
/// ([`input_chain`]); `None` where there is no such header.
pub fn cut_fragment_header_v6(packet: &[u8]) -> Option<u32> {
    let len = packet_len(packet).ok()?;
    match input_chain(&packet[..len]) {
        InputChain::FragmentCut { at } => u32::try_from(at).ok(),
        _ => None,
    }
}

/// True if `packet` (an IPv6 packet, from its header) carries an ICMPv6
/// echo request after the extension headers local delivery walks
/// ([`input_chain`]: hop-by-hop, destination options, routing, an atomic
/// fragment's header); its checksum is [`write_echo_reply_v6_from`]'s to
/// check. Behind an authentication header it is IPsec's, not answered.
pub fn is_echo_request_v6(packet: &[u8]) -> bool {
    let Ok(len) = packet_len(packet) else {
        return false;
    };
    match input_chain(&packet[..len]) {
        InputChain::Upper { at, next: ICMPV6 } => {
            packet[..len].get(at) == Some(&fibre_net::icmpv6::msg_type::ECHO_REQUEST)
        }
        _ => false,
    }
}

/// [`write_echo_reply_v6`] from `source`: for a request to a multicast
/// address, the address `ipv6_dev_get_saddr` picks.
pub fn write_echo_reply_v6_from(
    request: &[u8],
    source: Ipv6Addr,
    out: &mut [u8],
) -> Result<usize, Unsent> {
    let len = packet_len(request)?;
    let request = &request[..len];
    let (src, dst) = (addr_at(request, 8), addr_at(request, 24));
    if src.is_multicast() {
        return Err(Unsent::NonUnicastSource);
    }
    let Some((at, next, frag_off)) = skip_extension_headers(request) else {
        return Err(Unsent::NotEchoRequest);
    };
    if next != ICMPV6 || frag_off != 0 {
        return Err(Unsent::NotEchoRequest);
    }
    // The last extension header may claim more bytes than the packet has.
    let Some(icmp_in) = request.get(at..) else {
        return Err(Unsent::NotEchoRequest);
    };
    let pseudo = checksum::pseudo_header::<Ipv6>(src, dst, ICMPV6, icmp_in.len() as u32);
    if icmp_in.len() < ICMP_HEADER
        || icmp_in[0] != fibre_net::icmpv6::msg_type::ECHO_REQUEST
        || checksum::add(pseudo, checksum::sum(icmp_in)) != 0xffff
    {
        return Err(Unsent::NotEchoRequest);
    }
    if out.len() < HEADER + icmp_in.len() {
        return Err(Unsent::BufferTooSmall);
    }
    let icmp = &mut out[HEADER..HEADER + icmp_in.len()];
    icmp.copy_from_slice(icmp_in);
    icmp[0] = fibre_net::icmpv6::msg_type::ECHO_REPLY;
    let traffic_class = (u16::from_be_bytes([request[0], request[1]]) >> 4) as u8;
    finish_v6(out, icmp_in.len(), traffic_class, source, src)
}
