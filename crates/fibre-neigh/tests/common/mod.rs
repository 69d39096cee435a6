//! A router for the neighbour tests and frame builders.

#![allow(dead_code)]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use fibre_fib::{config, Fib};
use fibre_neigh::Action;

/// lo up; veth v0 (10.0.0.1/24, 2001:db8::1/64) with its peer v1 up.
pub fn fib() -> Fib {
    let text = "link set lo up\n\
                link add v0 type veth peer name v1\n\
                link set v0 up\n\
                link set v1 up\n\
                addr add 10.0.0.1/24 dev v0\n\
                addr add 2001:db8::1/64 dev v0\n";
    config::apply_str(&Fib::new(), "r.conf", text, false)
        .unwrap()
        .0
}

pub fn v0(fib: &Fib) -> u32 {
    fib.link_by_name("v0").unwrap().index
}

pub fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

pub fn v4(s: &str) -> Ipv4Addr {
    s.parse().unwrap()
}

pub fn v6(s: &str) -> Ipv6Addr {
    s.parse().unwrap()
}

/// A minimal IPv4 packet from `src` to `dst` of `len` bytes.
pub fn ipv4_packet(src: &str, dst: &str, len: usize) -> Vec<u8> {
    let mut p = vec![0u8; len.max(20)];
    p[0] = 0x45;
    let total = p.len() as u16;
    p[2..4].copy_from_slice(&total.to_be_bytes());
    p[8] = 64;
    p[9] = 17;
    p[12..16].copy_from_slice(&v4(src).octets());
    p[16..20].copy_from_slice(&v4(dst).octets());
    p
}

/// A minimal IPv6 packet from `src` to `dst`.
pub fn ipv6_packet(src: &str, dst: &str) -> Vec<u8> {
    let mut p = vec![0u8; 48];
    p[0] = 0x60;
    p[5] = 8;
    p[6] = 17;
    p[7] = 64;
    p[8..24].copy_from_slice(&v6(src).octets());
    p[24..40].copy_from_slice(&v6(dst).octets());
    p
}

/// An Ethernet ARP frame.
pub fn arp(op: u16, eth_dst: [u8; 6], sha: [u8; 6], sip: &str, tha: [u8; 6], tip: &str) -> Vec<u8> {
    let mut f = Vec::with_capacity(42);
    f.extend_from_slice(&eth_dst);
    f.extend_from_slice(&sha);
    f.extend_from_slice(&[0x08, 0x06, 0, 1, 0x08, 0, 6, 4]);
    f.extend_from_slice(&op.to_be_bytes());
    f.extend_from_slice(&sha);
    f.extend_from_slice(&v4(sip).octets());
    f.extend_from_slice(&tha);
    f.extend_from_slice(&v4(tip).octets());
    f
}

/// The ones'-complement checksum of an ICMPv6 body.
fn icmpv6_checksum(src: Ipv6Addr, dst: Ipv6Addr, body: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut add = |bytes: &[u8]| {
        for pair in bytes.chunks(2) {
            let word = u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]);
            sum += u32::from(word);
        }
    };
    add(&src.octets());
    add(&dst.octets());
    add(&(body.len() as u32).to_be_bytes());
    add(&[0, 0, 0, 58]);
    add(body);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// An NS (135) or NA (136) in a frame; `option` is (type, MAC).
#[allow(clippy::too_many_arguments)]
pub fn nd(
    kind: u8,
    eth_dst: [u8; 6],
    eth_src: [u8; 6],
    src: &str,
    dst: &str,
    flags: u8,
    target: &str,
    option: Option<(u8, [u8; 6])>,
    hop_limit: u8,
) -> Vec<u8> {
    let (src, dst) = (v6(src), v6(dst));
    let mut body = vec![kind, 0, 0, 0, flags, 0, 0, 0];
    body.extend_from_slice(&v6(target).octets());
    if let Some((t, mac)) = option {
        body.extend_from_slice(&[t, 1]);
        body.extend_from_slice(&mac);
    }
    let c = icmpv6_checksum(src, dst, &body);
    body[2..4].copy_from_slice(&c.to_be_bytes());
    let mut f = Vec::new();
    f.extend_from_slice(&eth_dst);
    f.extend_from_slice(&eth_src);
    f.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0]);
    f.extend_from_slice(&(body.len() as u16).to_be_bytes());
    f.push(58);
    f.push(hop_limit);
    f.extend_from_slice(&src.octets());
    f.extend_from_slice(&dst.octets());
    f.extend_from_slice(&body);
    f
}

/// The frames among `actions`.
pub fn sent(actions: &[Action]) -> Vec<Vec<u8>> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send { frame, .. } => Some(frame.clone()),
            _ => None,
        })
        .collect()
}
