//! The crafted input frames. Built here byte by byte (with a checksum of
//! our own, RFC 1071), not with fibre-net, so that the oracle shares no
//! code with what it checks.
//!
//! Each frame carries its id: its L4 payload starts with [`MAGIC`] and
//! the id (big-endian), found again in the forwarded frame, the first
//! fragment and any ICMP error quoting it; an IPv4 frame's IP ID is the
//! id's low 16 bits (fragments after the first carry no payload start);
//! ARP requests and neighbour solicitations come from the MAC
//! `02:ee:<id>`, to which the answer is sent.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::plan::{self, Plan, HOSTS};
use super::rng::Rng;

/// What starts every frame's L4 payload, before its id.
pub const MAGIC: [u8; 4] = [0xfb, b'F', b'W', b'D'];

/// The first byte pair of the source MAC of a frame that wants an
/// answer at link level (ARP, NS): the id follows.
pub const ID_MAC_PREFIX: [u8; 2] = [0x02, 0xee];

/// One input frame.
#[derive(Debug, Clone)]
pub struct Frame {
    /// Unique in the run.
    pub id: u32,
    /// What was meant by it (for reports).
    pub kind: String,
    /// The router link it arrives on: 0 (from the sender) or a
    /// receiver's (`rK`, injected on its peer).
    pub port: usize,
    /// The whole Ethernet frame, as injected.
    pub bytes: Vec<u8>,
}

/// RFC 1071 ones' complement sum of `data` folded with `initial`.
fn sum(data: &[u8], initial: u32) -> u32 {
    let mut total = initial;
    for pair in data.chunks(2) {
        let word = u32::from(pair[0]) << 8 | u32::from(*pair.get(1).unwrap_or(&0));
        total += word;
    }
    total
}

/// The Internet checksum of `data`, with `initial` (a pseudo-header sum).
pub fn checksum(data: &[u8], initial: u32) -> u16 {
    let mut total = sum(data, initial);
    while total > 0xffff {
        total = (total & 0xffff) + (total >> 16);
    }
    !(total as u16)
}

fn pseudo_sum(src: IpAddr, dst: IpAddr, protocol: u8, length: usize) -> u32 {
    let mut bytes = Vec::new();
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            bytes.extend(s.octets());
            bytes.extend(d.octets());
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            bytes.extend(s.octets());
            bytes.extend(d.octets());
        }
        _ => unreachable!("one family"),
    }
    bytes.extend([0, protocol]);
    bytes.extend((length as u32).to_be_bytes());
    sum(&bytes, 0)
}

/// An L4 segment (UDP 17, TCP 6, ICMP 1, ICMPv6 58) with its checksum
/// filled in, the payload `payload`.
fn l4(protocol: u8, src: IpAddr, dst: IpAddr, payload: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut seg = match protocol {
        17 => {
            let mut h = vec![0u8; 8];
            h[0..2].copy_from_slice(&(rng.range(1024, 65535) as u16).to_be_bytes());
            h[2..4].copy_from_slice(&(rng.range(1, 65535) as u16).to_be_bytes());
            h[4..6].copy_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
            h
        }
        6 => {
            let mut h = vec![0u8; 20];
            h[0..2].copy_from_slice(&(rng.range(1024, 65535) as u16).to_be_bytes());
            h[2..4].copy_from_slice(&(rng.range(1, 65535) as u16).to_be_bytes());
            h[4..8].copy_from_slice(&(rng.next_u64() as u32).to_be_bytes());
            h[12] = 5 << 4;
            h[13] = 0x02; // SYN
            h[14..16].copy_from_slice(&64240u16.to_be_bytes());
            h
        }
        // Echo request: type 8 (ICMP) or 128 (ICMPv6), code 0, id, seq.
        1 | 58 => {
            let mut h = vec![if protocol == 1 { 8 } else { 128 }, 0, 0, 0];
            h.extend((rng.below(65536) as u16).to_be_bytes());
            h.extend((rng.below(65536) as u16).to_be_bytes());
            h
        }
        _ => Vec::new(),
    };
    seg.extend_from_slice(payload);
    let (at, initial) = match protocol {
        17 => (6, pseudo_sum(src, dst, 17, seg.len())),
        6 => (16, pseudo_sum(src, dst, 6, seg.len())),
        1 => (2, 0),
        58 => (2, pseudo_sum(src, dst, 58, seg.len())),
        _ => return seg,
    };
    let mut c = checksum(&seg, initial);
    if protocol == 17 && c == 0 {
        c = 0xffff;
    }
    seg[at..at + 2].copy_from_slice(&c.to_be_bytes());
    seg
}

/// The payload: [`MAGIC`], the id, then `extra` filler bytes.
fn payload(id: u32, extra: usize) -> Vec<u8> {
    let mut p = MAGIC.to_vec();
    p.extend(id.to_be_bytes());
    p.extend((0..extra).map(|i| (i % 251) as u8));
    p
}

/// An IPv4 header (with `options`, padded to 4 bytes by the caller) and
/// checksum, then `body`.
#[allow(clippy::too_many_arguments)]
fn ipv4(
    id: u16,
    tos: u8,
    df: bool,
    ttl: u8,
    protocol: u8,
    src: Ipv4Addr,
    dst: Ipv4Addr,
    options: &[u8],
    body: &[u8],
) -> Vec<u8> {
    let ihl = 5 + options.len() / 4;
    let mut h = vec![0u8; 20];
    h[0] = 0x40 | ihl as u8;
    h[1] = tos;
    h[2..4].copy_from_slice(&((ihl * 4 + body.len()) as u16).to_be_bytes());
    h[4..6].copy_from_slice(&id.to_be_bytes());
    if df {
        h[6] = 0x40;
    }
    h[8] = ttl;
    h[9] = protocol;
    h[12..16].copy_from_slice(&src.octets());
    h[16..20].copy_from_slice(&dst.octets());
    h.extend_from_slice(options);
    let c = checksum(&h, 0);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h.extend_from_slice(body);
    h
}

/// Recomputes an IPv4 header's checksum after an edit.
fn refresh_ipv4_checksum(packet: &mut [u8]) {
    let ihl = usize::from(packet[0] & 0x0f) * 4;
    if ihl < 20 || ihl > packet.len() {
        return;
    }
    packet[10] = 0;
    packet[11] = 0;
    let c = checksum(&packet[..ihl], 0);
    packet[10..12].copy_from_slice(&c.to_be_bytes());
}

/// An IPv6 header, then `body` (whose first header is `next`).
fn ipv6(flow: u32, hop_limit: u8, next: u8, src: Ipv6Addr, dst: Ipv6Addr, body: &[u8]) -> Vec<u8> {
    let mut h = vec![0u8; 40];
    h[0..4].copy_from_slice(&(0x6000_0000 | (flow & 0xfffff)).to_be_bytes());
    h[4..6].copy_from_slice(&(body.len() as u16).to_be_bytes());
    h[6] = next;
    h[7] = hop_limit;
    h[8..24].copy_from_slice(&src.octets());
    h[24..40].copy_from_slice(&dst.octets());
    h.extend_from_slice(body);
    h
}

fn ethernet(dst: [u8; 6], src: [u8; 6], ethertype: u16, body: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(14 + body.len().max(46));
    f.extend(dst);
    f.extend(src);
    f.extend(ethertype.to_be_bytes());
    f.extend_from_slice(body);
    // The minimum frame (60 bytes without FCS), as a NIC would pad it.
    f.resize(f.len().max(60), 0);
    f
}

fn id_mac(id: u32) -> [u8; 6] {
    let b = id.to_be_bytes();
    [ID_MAC_PREFIX[0], ID_MAC_PREFIX[1], b[0], b[1], b[2], b[3]]
}

/// The Ethernet multicast MAC of an IPv6 multicast group (RFC 2464).
fn v6_multicast_mac(group: Ipv6Addr) -> [u8; 6] {
    let o = group.octets();
    [0x33, 0x33, o[12], o[13], o[14], o[15]]
}

/// A random address inside one of the plan's routes of that family.
fn in_some_route(rng: &mut Rng, plan: &Plan, v6: bool) -> Option<(u128, &'static str)> {
    let routes: Vec<_> = plan.routes.iter().filter(|r| r.v6 == v6).collect();
    if routes.is_empty() {
        return None;
    }
    let route = rng.pick(&routes);
    let bits = if v6 { 128 } else { 32 };
    let host_bits = bits - route.prefix.1;
    let host = if host_bits == 0 {
        0
    } else {
        rng.next_u128() & ((1u128 << host_bits) - 1)
    };
    Some((route.prefix.0 | host, route.kind))
}

fn host_number(rng: &mut Rng) -> u8 {
    rng.range(u64::from(*HOSTS.start()), u64::from(*HOSTS.end())) as u8
}

/// The IPv4 destinations frames are aimed at, and whether each is the
/// router's own (local delivery).
fn destination_v4(rng: &mut Rng, plan: &Plan) -> (Ipv4Addr, &'static str) {
    let links = plan.links.len();
    match rng.below(100) {
        0..=44 => match in_some_route(rng, plan, false) {
            Some((a, kind)) => (Ipv4Addr::from(a as u32), kind),
            None => (Ipv4Addr::new(192, 0, 2, 1), "unrouted"),
        },
        45..=59 => (
            plan::host_v4(rng.range(1, links as u64 - 1) as usize, host_number(rng)),
            "receiver",
        ),
        60..=64 => (plan::host_v4(0, host_number(rng)), "sender-subnet"),
        65..=76 => (plan::router_v4(rng.below(links as u64) as usize), "router"),
        77..=86 => (Ipv4Addr::new(192, 0, 2, rng.below(256) as u8), "unrouted"),
        _ => {
            let martians = [
                Ipv4Addr::new(0, 0, 0, 0),
                Ipv4Addr::new(127, 0, 0, 1),
                Ipv4Addr::new(240, 0, 0, 1),
                Ipv4Addr::new(255, 255, 255, 255),
                Ipv4Addr::new(10, 0, 0, 255),
                Ipv4Addr::new(169, 254, 1, 1),
            ];
            (*rng.pick(&martians), "martian-dst")
        }
    }
}

/// 16 bits no other frame of the run has: the id's low 16 bits times an
/// odd constant (a bijection of 16-bit numbers), so that sources spread
/// over their block yet never repeat.
fn unique16(id: u32) -> u32 {
    u32::from((id as u16).wrapping_mul(0x9e37))
}

/// An IPv4 source no other frame of the run uses: the kernel's ICMP
/// limits are kept per source in one `inet_peer`, whose tokens an error
/// sent with `icmp_ratelimit` 0 empties, after which `ip_error` stays
/// silent for the next second (`ip_rt_error_cost`, a global sysctl a
/// namespace cannot change): a source used twice would make the run
/// depend on time.
fn source_v4(rng: &mut Rng, plan: &Plan, id: u32) -> (Ipv4Addr, &'static str) {
    let block = plan::SOURCES_V4;
    let unique = unique16(id);
    match rng.below(100) {
        0..=79 => (Ipv4Addr::from(block.0 | unique), ""),
        80..=87 => {
            // Inside a routed prefix of at most 16 bits, its host part
            // unique.
            let wide: Vec<_> = plan
                .routes
                .iter()
                .filter(|r| !r.v6 && r.prefix.1 <= 16)
                .collect();
            if wide.is_empty() {
                (Ipv4Addr::from(block.0 | unique), "")
            } else {
                let route = rng.pick(&wide);
                (Ipv4Addr::from(route.prefix.0 as u32 | unique), "src-routed")
            }
        }
        // Martian sources, unique where their block allows (the kernel
        // answers some of them through `ip_error`); the broadcast and the
        // router's own address it refuses before any answer.
        _ => {
            let martians = [
                Ipv4Addr::from(unique << 8 | 1),
                Ipv4Addr::from(0x7f00_0000 | unique << 8 | 1),
                Ipv4Addr::from(0xe000_0000 | unique << 8 | 1),
                Ipv4Addr::from(0xf000_0000 | unique << 8 | 1),
                Ipv4Addr::new(255, 255, 255, 255),
                plan::router_v4(0),
            ];
            (*rng.pick(&martians), "martian-src")
        }
    }
}

fn ttl(rng: &mut Rng) -> u8 {
    *rng.pick(&[0, 1, 1, 2, 2, 64, 64, 64, 64, 64, 64, 255])
}

/// The Ethernet destination for an IPv4 destination: the router's MAC,
/// broadcast or the group's multicast MAC, and now and then another
/// host's (the router must ignore it).
fn eth_dst_v4(rng: &mut Rng, plan: &Plan, dst: Ipv4Addr) -> ([u8; 6], &'static str) {
    if rng.chance(3) {
        return ([0x02, 0x11, 0x22, 0x33, 0x44, 0x55], "otherhost");
    }
    if dst.is_multicast() {
        let o = dst.octets();
        return ([0x01, 0x00, 0x5e, o[1] & 0x7f, o[2], o[3]], "");
    }
    if dst.is_broadcast() || rng.chance(2) {
        return ([0xff; 6], "eth-broadcast");
    }
    (plan.links[0].mac, "")
}

/// One IPv4 frame of a random kind.
fn frame_v4(rng: &mut Rng, plan: &Plan, id: u32) -> Frame {
    let (dst, dst_kind) = destination_v4(rng, plan);
    let (src, src_kind) = source_v4(rng, plan, id);
    let mut kind = vec![dst_kind.to_string()];
    if !src_kind.is_empty() {
        kind.push(src_kind.to_string());
    }
    if rng.chance(4) {
        return arp_request(rng, plan, id);
    }
    let protocol = *rng.pick(&[17, 17, 17, 6, 1, 1]);
    let large = rng.chance(12);
    let extra = if large {
        rng.range(900, 1400) as usize
    } else {
        rng.range(0, 120) as usize
    };
    let body = l4(
        protocol,
        IpAddr::V4(src),
        IpAddr::V4(dst),
        &payload(id, extra),
        rng,
    );
    let df = if large {
        rng.chance(50)
    } else {
        rng.chance(80)
    };
    let ttl = ttl(rng);
    let options: Vec<u8> = match rng.below(100) {
        0..=3 => vec![1, 1, 1, 0],                      // NOP NOP NOP EOL
        4..=5 => vec![7, 7, 4, 0], // record route, room for 1 address: 7 bytes, then EOL
        6 => vec![7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0], // record route, 2 slots
        7 => vec![0x94, 4, 0, 0],  // router alert
        _ => Vec::new(),
    };
    if !options.is_empty() {
        kind.push("options".into());
    }
    let tos = if rng.chance(10) {
        rng.below(256) as u8
    } else {
        0
    };
    kind.push(format!(
        "proto {protocol} ttl {ttl}{}{} {src} > {dst}",
        if df { " df" } else { "" },
        if large { " large" } else { "" }
    ));
    let mut packet = ipv4(id as u16, tos, df, ttl, protocol, src, dst, &options, &body);
    // Input fragments, forwarded as they are (never to the router: the
    // kernel would hold them for reassembly, then time them out).
    if dst_kind != "router" && rng.chance(3) {
        let offset: u16 = *rng.pick(&[0u16, 1, 185]);
        let flags = if offset == 0 || rng.chance(50) {
            0x2000
        } else {
            0
        };
        packet[6..8].copy_from_slice(&(flags | offset).to_be_bytes());
        refresh_ipv4_checksum(&mut packet);
        kind.push(format!("fragment off {offset}"));
    }
    let mut trailer = 0;
    match rng.below(100) {
        0..=2 => {
            packet[10] ^= 0x5a;
            kind.push("bad-checksum".into());
        }
        3 => {
            packet[0] = (packet[0] & 0x0f) | (*rng.pick(&[0u8, 4, 5, 6, 15]) << 4);
            if packet[0] >> 4 != 4 {
                refresh_ipv4_checksum(&mut packet);
            }
            kind.push("bad-version".into());
        }
        4 => {
            packet[0] = 0x40 | *rng.pick(&[0u8, 3, 4, 6, 15]);
            refresh_ipv4_checksum(&mut packet);
            kind.push("bad-ihl".into());
        }
        5 => {
            let len = u16::from_be_bytes([packet[2], packet[3]]);
            let wrong = *rng.pick(&[0u16, 19, 20, len - 1, len + 1, len + 100, 65535]);
            packet[2..4].copy_from_slice(&wrong.to_be_bytes());
            refresh_ipv4_checksum(&mut packet);
            kind.push(format!("bad-total-length {wrong}"));
        }
        6 => {
            let cut = rng.range(1, packet.len() as u64 - 1) as usize;
            packet.truncate(cut);
            kind.push(format!("truncated to {cut}"));
        }
        7..=8 => {
            trailer = rng.range(1, 30) as usize;
            kind.push(format!("trailer {trailer}"));
        }
        _ => {}
    }
    packet.extend((0..trailer).map(|i| i as u8 ^ 0xa5));
    let (eth_dst, eth_kind) = eth_dst_v4(rng, plan, dst);
    if !eth_kind.is_empty() {
        kind.push(eth_kind.into());
    }
    let mut frame = Frame {
        id,
        kind: format!("ipv4 {}", kind.join(" ")),
        port: 0,
        bytes: ethernet(eth_dst, plan.links[0].peer_mac, 0x0800, &packet),
    };
    // A tenth arrive from a receiver's side instead: traffic that enters
    // by another link than its source's route (rp_filter 1 drops it),
    // or leaves by the link it came in on. IPv4 only: IPv6's go back
    // out with a redirect, rate-limited per destination by time
    // (`ip6_forward`), so they come in counted (`same_link_v6`); IPv4's
    // redirects are off.
    // (Only a frame that fits the receiver link's MTU: a veth delivers
    // nothing longer to its peer, `is_skb_forwardable`.)
    let k = rng.range(1, plan.links.len().max(2) as u64 - 1) as usize;
    if plan.links.len() > 1
        && rng.chance(10)
        && frame.bytes.len() <= plan.links[k].mtu as usize + 14
    {
        if frame.bytes[0..6] == plan.links[0].mac {
            frame.bytes[0..6].copy_from_slice(&plan.links[k].mac);
        }
        frame.bytes[6..12].copy_from_slice(&plan.links[k].peer_mac);
        frame.port = k;
        frame.kind.push_str(&format!(" via r{k}"));
    }
    frame
}

/// An ARP request (RFC 826) from `02:ee:<id>`, for one of the router's
/// addresses or another.
fn arp_request(rng: &mut Rng, plan: &Plan, id: u32) -> Frame {
    let target = match rng.below(4) {
        0 | 1 => plan::router_v4(0),
        2 => plan::router_v4(rng.below(plan.links.len() as u64) as usize),
        _ => plan::host_v4(0, 200),
    };
    // A small pool of asking addresses: each ask makes (or refreshes) a
    // neighbour entry in the router, never beyond its table's bounds.
    let sender_ip = plan::host_v4(0, 100 + rng.below(20) as u8);
    let mac = id_mac(id);
    let mut arp = vec![0, 1, 8, 0, 6, 4, 0, 1];
    arp.extend(mac);
    arp.extend(sender_ip.octets());
    arp.extend([0u8; 6]);
    arp.extend(target.octets());
    let dst = if rng.chance(80) {
        [0xff; 6]
    } else {
        plan.links[0].mac
    };
    Frame {
        id,
        kind: format!("arp who-has {target} tell {sender_ip}"),
        port: 0,
        bytes: ethernet(dst, mac, 0x0806, &arp),
    }
}

fn destination_v6(rng: &mut Rng, plan: &Plan) -> (Ipv6Addr, &'static str) {
    let v6_links: Vec<usize> = (0..plan.links.len())
        .filter(|&k| plan.links[k].has_ipv6())
        .collect();
    let receivers: Vec<usize> = v6_links.iter().copied().filter(|&k| k > 0).collect();
    match rng.below(100) {
        0..=44 => match in_some_route(rng, plan, true) {
            Some((a, kind)) => (Ipv6Addr::from(a), kind),
            None => (
                Ipv6Addr::new(0x2001, 0xdb8, 0xffff, 0, 0, 0, 0, 1),
                "unrouted",
            ),
        },
        45..=59 if !receivers.is_empty() => (
            plan::host_v6(*rng.pick(&receivers), host_number(rng)),
            "receiver",
        ),
        60..=71 => (plan::router_v6(*rng.pick(&v6_links)), "router"),
        72..=74 => (link_local_of(plan.links[0].mac), "router-link-local"),
        75..=86 => (
            Ipv6Addr::new(0x2001, 0xdb8, 0xffff, rng.below(65536) as u16, 0, 0, 0, 1),
            "unrouted",
        ),
        _ => {
            let martians = [
                Ipv6Addr::LOCALHOST,
                Ipv6Addr::UNSPECIFIED,
                Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1),
                Ipv6Addr::new(0xff0e, 0, 0, 0, 0, 0, 0, 0x101),
                Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0x0a00, 0x0102),
            ];
            (*rng.pick(&martians), "martian-dst")
        }
    }
}

fn source_v6(rng: &mut Rng, plan: &Plan) -> (Ipv6Addr, &'static str) {
    let block = plan::SOURCES_V6;
    match rng.below(100) {
        0..=79 => (
            Ipv6Addr::from(block.0 | (rng.next_u128() & ((1 << (128 - block.1)) - 1))),
            "",
        ),
        80..=84 => (plan::sender_link_local(host_number(rng)), "src-link-local"),
        85..=89 => match in_some_route(rng, plan, true) {
            Some((a, _)) => (Ipv6Addr::from(a), "src-routed"),
            None => (Ipv6Addr::from(block.0 | 1), ""),
        },
        _ => {
            let martians = [
                Ipv6Addr::LOCALHOST,
                Ipv6Addr::UNSPECIFIED,
                Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1),
                plan::router_v6(0),
                Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0x0a00, 0x0002),
            ];
            (*rng.pick(&martians), "martian-src")
        }
    }
}

/// The EUI-64 link-local address of a MAC (RFC 4291 appendix A).
pub fn link_local_of(mac: [u8; 6]) -> Ipv6Addr {
    Ipv6Addr::from([
        0xfe,
        0x80,
        0,
        0,
        0,
        0,
        0,
        0,
        mac[0] ^ 2,
        mac[1],
        mac[2],
        0xff,
        0xfe,
        mac[3],
        mac[4],
        mac[5],
    ])
}

/// One IPv6 frame of a random kind.
/// One IPv6 frame in [`SAME_LINK_EVERY`] (two ids of each run of them)
/// comes from a receiver's side, to a host on that same link:
/// `ip6_forward` sends it back out and, when its source is on the link
/// too (the first id), a redirect naming the destination
/// (`ndisc_send_redirect`); from a source routed back elsewhere (the
/// second), none ("destination is not a neighbour"). Chosen by id, hosts
/// in turn, so that no source or destination comes near the redirect
/// limits' burst of six in a run (after it, one a second: timing).
/// The second id's source is never link-local ([`same_link_source_v6`]).
const SAME_LINK_EVERY: u32 = 613;

/// The source of a same-link frame's second id: one of [`source_v6`]'s,
/// but a link-local one is replaced by a fresh address of the sender's
/// block. A link-local source is on-link on every link, so
/// `ndisc_send_redirect` finds no gateway on the route back and
/// redirects it on rK, where no `fe80::h` is a neighbour: the kernel
/// solicits it (an output that carries no input's id) and fibre's worker
/// punts it as unresolved. Whether it does at all is a matter of time:
/// the redirect's per-source limit (one a second) shares its peer entry
/// with every ICMP error sent to the same `fe80::h` for r0's
/// `src-link-local` frames, each of which empties it (`icmp/ratelimit`
/// 0). Seed 1796420978 drew `fe80::8` (frame 16777811).
fn same_link_source_v6(rng: &mut Rng, plan: &Plan) -> Ipv6Addr {
    let (src, _) = source_v6(rng, plan);
    if !src.is_unicast_link_local() {
        return src;
    }
    let block = plan::SOURCES_V6;
    Ipv6Addr::from(block.0 | (rng.next_u128() & ((1 << (128 - block.1)) - 1)))
}

fn same_link_v6(rng: &mut Rng, plan: &Plan, id: u32) -> Option<Frame> {
    if id % SAME_LINK_EVERY > 1 {
        return None;
    }
    let links: Vec<usize> = (1..plan.links.len())
        .filter(|&k| plan.links[k].has_ipv6())
        .collect();
    if links.is_empty() {
        return None;
    }
    let n = id / SAME_LINK_EVERY;
    let k = links[n as usize % links.len()];
    let hosts = u32::from(plan::HOSTS.end() - plan::HOSTS.start() + 1);
    let host = |i: u32| plan::host_v6(k, plan::HOSTS.start() + (i % hosts) as u8);
    let dst = host(n + 3);
    let (src, what) = if id.is_multiple_of(SAME_LINK_EVERY) {
        (host(n), "redirect")
    } else {
        (same_link_source_v6(rng, plan), "same-link")
    };
    let segment = l4(17, IpAddr::V6(src), IpAddr::V6(dst), &payload(id, 20), rng);
    // Never expiring: a time exceeded empties the source's peer bucket
    // (`icmp/ratelimit` 0), and whether its next redirect, 8 * 613 frames
    // later, finds a second's refill would depend on the run's speed (the
    // worker's clock is 10 us a frame, the kernel's its own).
    let hop_limit = 64;
    let packet = ipv6(id & 0xfffff, hop_limit, 17, src, dst, &segment);
    Some(Frame {
        id,
        kind: format!("ipv6 {what} via r{k} hlim {hop_limit} {src} > {dst}"),
        port: k,
        bytes: ethernet(plan.links[k].mac, plan.links[k].peer_mac, 0x86dd, &packet),
    })
}

fn frame_v6(rng: &mut Rng, plan: &Plan, id: u32) -> Frame {
    if let Some(frame) = same_link_v6(rng, plan, id) {
        return frame;
    }
    if rng.chance(4) {
        return neighbour_solicitation(rng, plan, id);
    }
    let (dst, dst_kind) = destination_v6(rng, plan);
    let (src, src_kind) = source_v6(rng, plan);
    let mut kind = vec![dst_kind.to_string()];
    if !src_kind.is_empty() {
        kind.push(src_kind.to_string());
    }
    let protocol = *rng.pick(&[17u8, 17, 17, 6, 58, 58]);
    let large = rng.chance(12);
    let extra = if large {
        rng.range(1000, 1400) as usize
    } else {
        rng.range(0, 120) as usize
    };
    let segment = l4(
        protocol,
        IpAddr::V6(src),
        IpAddr::V6(dst),
        &payload(id, extra),
        rng,
    );
    // Extension headers before it (RFC 8200 section 4).
    let (next, body) = match rng.below(100) {
        0..=3 => {
            kind.push("hop-by-hop".into());
            let mut h = vec![protocol, 0, 1, 4, 0, 0, 0, 0]; // PadN
            h.extend(&segment);
            (0u8, h)
        }
        4..=6 => {
            kind.push("destination-options".into());
            let mut h = vec![protocol, 0, 1, 4, 0, 0, 0, 0];
            h.extend(&segment);
            (60u8, h)
        }
        7..=8 => {
            kind.push("atomic-fragment".into());
            let mut h = vec![protocol, 0, 0, 0];
            h.extend(id.to_be_bytes());
            h.extend(&segment);
            (44u8, h)
        }
        _ => (protocol, segment),
    };
    let hop_limit = ttl(rng);
    kind.push(format!(
        "next {next} proto {protocol} hlim {hop_limit}{} {src} > {dst}",
        if large { " large" } else { "" }
    ));
    // The id again, for a packet whose payload the kernel trims away (a
    // payload length of 0 forwards a bare header).
    let flow = id & 0xfffff;
    let mut packet = ipv6(flow, hop_limit, next, src, dst, &body);
    let mut trailer = 0;
    match rng.below(100) {
        0..=1 => {
            packet[0] = (packet[0] & 0x0f) | (*rng.pick(&[0u8, 4, 5, 7, 15]) << 4);
            kind.push("bad-version".into());
        }
        2..=3 => {
            let len = u16::from_be_bytes([packet[4], packet[5]]);
            let wrong = *rng.pick(&[0u16, len.saturating_sub(1), len + 1, len + 100, 65535]);
            packet[4..6].copy_from_slice(&wrong.to_be_bytes());
            kind.push(format!("bad-payload-length {wrong}"));
        }
        4 => {
            let cut = rng.range(1, packet.len() as u64 - 1) as usize;
            packet.truncate(cut);
            kind.push(format!("truncated to {cut}"));
        }
        5..=6 => {
            trailer = rng.range(1, 30) as usize;
            kind.push(format!("trailer {trailer}"));
        }
        _ => {}
    }
    packet.extend((0..trailer).map(|i| i as u8 ^ 0xa5));
    let eth_dst = if rng.chance(3) {
        kind.push("otherhost".into());
        [0x02, 0x11, 0x22, 0x33, 0x44, 0x55]
    } else if dst.is_multicast() {
        v6_multicast_mac(dst)
    } else {
        plan.links[0].mac
    };
    Frame {
        id,
        kind: format!("ipv6 {}", kind.join(" ")),
        port: 0,
        bytes: ethernet(eth_dst, plan.links[0].peer_mac, 0x86dd, &packet),
    }
}

/// A neighbour solicitation (RFC 4861 section 4.3) for one of the
/// router's addresses on r0 (or another), from a small pool of sender
/// addresses, with the source link-layer option `02:ee:<id>`.
fn neighbour_solicitation(rng: &mut Rng, plan: &Plan, id: u32) -> Frame {
    let target = match rng.below(4) {
        0 | 1 => plan::router_v6(0),
        2 => link_local_of(plan.links[0].mac),
        _ => plan::host_v6(0, 200),
    };
    let src = plan::host_v6(0, 100 + rng.below(20) as u8);
    let t = target.octets();
    let group = Ipv6Addr::from([
        0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, t[13], t[14], t[15],
    ]);
    let mac = id_mac(id);
    let mut icmp = vec![135, 0, 0, 0, 0, 0, 0, 0];
    icmp.extend(t);
    icmp.extend([1, 1]);
    icmp.extend(mac);
    let c = checksum(
        &icmp,
        pseudo_sum(IpAddr::V6(src), IpAddr::V6(group), 58, icmp.len()),
    );
    icmp[2..4].copy_from_slice(&c.to_be_bytes());
    let packet = ipv6(0, 255, 58, src, group, &icmp);
    Frame {
        id,
        kind: format!("ipv6 neighbour solicitation who-has {target} from {src}"),
        port: 0,
        bytes: ethernet(v6_multicast_mac(group), mac, 0x86dd, &packet),
    }
}

/// `count` UDP packets with TTL 1 from one source (the sender's block's
/// first address) to one receiver host, ids from `first_id` up: each
/// asks for a time exceeded to the same destination, which only the
/// ICMP rate limits can refuse.
pub fn ttl_one_burst(plan: &Plan, count: usize, first_id: u32) -> Vec<Frame> {
    let mut rng = Rng::new(u64::from(first_id));
    let src = Ipv4Addr::from(plan::SOURCES_V4.0 | 1);
    let dst = plan::host_v4(1, 2);
    (0..count)
        .map(|i| {
            let id = first_id + i as u32;
            let body = l4(
                17,
                IpAddr::V4(src),
                IpAddr::V4(dst),
                &payload(id, 16),
                &mut rng,
            );
            let packet = ipv4(id as u16, 0, true, 1, 17, src, dst, &[], &body);
            Frame {
                id,
                kind: format!("ipv4 ttl-one-burst proto 17 ttl 1 {src} > {dst}"),
                port: 0,
                bytes: ethernet(plan.links[0].mac, plan.links[0].peer_mac, 0x0800, &packet),
            }
        })
        .collect()
}

/// `count` frames of one family for `plan`, ids from `first_id` up,
/// all drawn from `seed`.
pub fn frames(plan: &Plan, v6: bool, count: usize, seed: u64, first_id: u32) -> Vec<Frame> {
    let mut rng = Rng::new(seed ^ if v6 { 0x6666 } else { 0x4444 });
    (0..count)
        .map(|i| {
            let id = first_id + i as u32;
            if v6 {
                frame_v6(&mut rng, plan, id)
            } else {
                frame_v4(&mut rng, plan, id)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checksum_is_rfc_1071s() {
        // The IPv4 header of RFC 1071's worked example family: a header
        // whose checksum field holds its checksum sums to zero.
        let mut header = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        let c = checksum(&header, 0);
        assert_eq!(c, 0xb861);
        header[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(checksum(&header, 0), 0);
    }

    /// A same-link frame from a link-local source asks the router for a
    /// redirect to a host that is no neighbour on that link (seed
    /// 1796420978 drew one, frame 16777811); the other same-link frames
    /// still come.
    #[test]
    fn same_link_frames_never_come_from_a_link_local_source() {
        let mut same_link = 0;
        for seed in [1_796_420_978, 30, 64] {
            let plan = plan::plan(seed);
            for f in frames(&plan, true, 10_000, seed, 1 << 24) {
                if f.port == 0 || f.bytes[12..14] != [0x86, 0xdd] {
                    continue;
                }
                same_link += 1;
                let src: [u8; 16] = f.bytes[22..38].try_into().unwrap();
                assert!(
                    !Ipv6Addr::from(src).is_unicast_link_local(),
                    "seed {seed}: frame {} ({}) from a link-local source",
                    f.id,
                    f.kind
                );
            }
        }
        assert!(same_link > 20, "only {same_link} same-link frames");
    }

    #[test]
    fn frames_are_reproducible_unique_and_checksummed() {
        let plan = plan::plan(9);
        let a = frames(&plan, false, 500, 9, 1);
        let b = frames(&plan, false, 500, 9, 1);
        assert!(a.iter().zip(&b).all(|(x, y)| x.bytes == y.bytes));
        let mut sources = std::collections::HashSet::new();
        for f in &a {
            if f.bytes[12..14] != [8, 0] || f.kind.contains("bad") || f.kind.contains("truncated") {
                continue;
            }
            let ihl = usize::from(f.bytes[14] & 0x0f) * 4;
            assert_eq!(checksum(&f.bytes[14..14 + ihl], 0), 0, "{}", f.kind);
            if !f.kind.contains("martian-src") {
                assert!(
                    sources.insert(f.bytes[26..30].to_vec()),
                    "source reused: {}",
                    f.kind
                );
            }
        }
        assert!(sources.len() > 300, "{}", sources.len());
    }
}
