//! A router for the worker's tests: two ports, their neighbours, and
//! frames built by hand.

#![allow(dead_code)]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use fibre_fib::{config, Fib};
use fibre_fwd::{Counters, PortConfig, Punt, PuntKind, StaticNeighbours, Worker, WorkerConfig};
use fibre_net::checksum;

/// p0 (ifindex 2): MTU 9000, 10.0.0.1/24, 2001:db8::1/64; p1 (3): 10.1.0.1/24,
/// 2001:db8:1::1/64, MTU 1400; routes of every type beyond p1.
pub const CONFIG: &str = "link set lo up
link add p0 type ifb
link set p0 up
link set p0 mtu 9000
addr add 10.0.0.1/24 dev p0
addr add 2001:db8::1/64 dev p0
link add p1 type ifb
link set p1 up
link set p1 mtu 1400
addr add 10.1.0.1/24 dev p1
addr add 2001:db8:1::1/64 dev p1
route add 192.0.2.0/24 via 10.1.0.254
route add 192.0.2.128/25 via 10.1.0.254 mtu 1300
route add unreachable 198.51.100.0/24
route add prohibit 203.0.113.0/24
route add blackhole 198.18.0.0/15
route add 2001:db8:100::/48 via 2001:db8:1::fe
route add 2001:db8:100:1::/64 via 2001:db8:1::fe mtu 1300
route add 2001:db8:100:2::/64 via 2001:db8:1::fe mtu lock 1300
route add unreachable 2001:db8:200::/48
route add prohibit 2001:db8:300::/48
route add blackhole 2001:db8:400::/48
";

pub const P0: usize = 0;
pub const P1: usize = 1;
pub const P0_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
pub const P1_MAC: [u8; 6] = [2, 0, 0, 0, 1, 1];
/// The sender, on p0.
pub const SENDER_MAC: [u8; 6] = [2, 0, 0, 0, 0, 9];
pub const SENDER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 9);
pub const SENDER6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 9);
/// The gateway beyond p1, and a host on p1.
pub const GATEWAY_MAC: [u8; 6] = [2, 0, 0, 0, 1, 0xfe];
pub const HOST_MAC: [u8; 6] = [2, 0, 0, 0, 1, 7];
/// A second host on p0.
pub const NEIGHBOUR_MAC: [u8; 6] = [2, 0, 0, 0, 0, 7];

pub fn fib() -> Fib {
    config::apply_str(&Fib::new(), "router.conf", CONFIG, false)
        .expect("the test router's configuration applies")
        .0
}

/// The test router with `extra` configuration lines after [`CONFIG`].
pub fn worker_with(extra: &str) -> TestWorker {
    let text = format!("{CONFIG}{extra}");
    let fib = config::apply_str(&Fib::new(), "router.conf", &text, false)
        .expect("the test router's configuration applies")
        .0;
    Worker::new(fib, neighbours(), &ports(), config())
}

pub fn neighbours() -> StaticNeighbours {
    let mut n = StaticNeighbours::default();
    n.insert(2, IpAddr::V4(SENDER), SENDER_MAC);
    n.insert(2, "10.0.0.7".parse().unwrap(), NEIGHBOUR_MAC);
    n.insert(3, "10.1.0.254".parse().unwrap(), GATEWAY_MAC);
    n.insert(3, "10.1.0.7".parse().unwrap(), HOST_MAC);
    n.insert(2, IpAddr::V6(SENDER6), SENDER_MAC);
    n.insert(3, "2001:db8:1::fe".parse().unwrap(), GATEWAY_MAC);
    n.insert(3, "2001:db8:1::7".parse().unwrap(), HOST_MAC);
    n
}

pub fn ports() -> [PortConfig; 2] {
    [PortConfig::new(2, P0_MAC), PortConfig::new(3, P1_MAC)]
}

pub type TestWorker = Worker<Fib, StaticNeighbours>;

/// Room for p0's 9000-byte packets, short queues.
pub fn config() -> WorkerConfig {
    WorkerConfig {
        max_mtu: 9000,
        tx_queue_len: 64,
        ..WorkerConfig::default()
    }
}

pub fn worker() -> TestWorker {
    Worker::new(fib(), neighbours(), &ports(), config())
}

/// An IPv4 packet from `src` to `dst`: UDP 1000 -> 2000 with
/// `payload_len` bytes of payload, TTL `ttl`, DF as given, ID 0x1234.
pub fn udp4(src: Ipv4Addr, dst: Ipv4Addr, ttl: u8, df: bool, payload_len: usize) -> Vec<u8> {
    let total = 20 + 8 + payload_len;
    let mut p = vec![0u8; total];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[4..6].copy_from_slice(&0x1234u16.to_be_bytes());
    if df {
        p[6] = 0x40;
    }
    p[8] = ttl;
    p[9] = 17;
    p[12..16].copy_from_slice(&src.octets());
    p[16..20].copy_from_slice(&dst.octets());
    let sum = checksum::checksum(&p[..20]);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    p[20..22].copy_from_slice(&1000u16.to_be_bytes());
    p[22..24].copy_from_slice(&2000u16.to_be_bytes());
    p[24..26].copy_from_slice(&((8 + payload_len) as u16).to_be_bytes());
    for (i, b) in p[28..].iter_mut().enumerate() {
        *b = i as u8;
    }
    p
}

/// An ICMP echo request from `src` to `dst`.
pub fn ping4(src: Ipv4Addr, dst: Ipv4Addr, ttl: u8) -> Vec<u8> {
    let mut p = udp4(src, dst, ttl, false, 8);
    p[9] = 1;
    p[10..12].fill(0);
    let sum = checksum::checksum(&p[..20]);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    p[20..28].copy_from_slice(&[8, 0, 0, 0, 0x42, 0x42, 0, 1]);
    let sum = checksum::checksum(&p[20..]);
    p[22..24].copy_from_slice(&sum.to_be_bytes());
    p
}

/// An IPv6 UDP packet from `src` to `dst`, hop limit `hops`.
pub fn udp6(src: Ipv6Addr, dst: Ipv6Addr, hops: u8, payload_len: usize) -> Vec<u8> {
    let len = 8 + payload_len;
    let mut p = vec![0u8; 40 + len];
    p[0] = 0x60;
    p[4..6].copy_from_slice(&(len as u16).to_be_bytes());
    p[6] = 17;
    p[7] = hops;
    p[8..24].copy_from_slice(&src.octets());
    p[24..40].copy_from_slice(&dst.octets());
    p[40..42].copy_from_slice(&1000u16.to_be_bytes());
    p[42..44].copy_from_slice(&2000u16.to_be_bytes());
    p[44..46].copy_from_slice(&(len as u16).to_be_bytes());
    for (i, b) in p[48..].iter_mut().enumerate() {
        *b = i as u8;
    }
    p
}

/// `packet` in an Ethernet frame to `dst_mac` from the sender.
pub fn frame(dst_mac: [u8; 6], ethertype: u16, packet: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(14 + packet.len());
    f.extend_from_slice(&dst_mac);
    f.extend_from_slice(&SENDER_MAC);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(packet);
    f
}

pub fn frame4(packet: &[u8]) -> Vec<u8> {
    frame(P0_MAC, 0x0800, packet)
}

pub fn frame6(packet: &[u8]) -> Vec<u8> {
    frame(P0_MAC, 0x86dd, packet)
}

/// The counts a received frame can end in, summed: equal to `received`
/// when every frame ended in exactly one.
pub fn outcomes(c: &Counters) -> u64 {
    c.forwarded
        + c.answered
        + c.punted_local
        + c.punted_neighbour
        + c.punted_unresolved
        + c.total_drops()
}

/// Everything queued on `port`, drained.
pub fn sent(worker: &mut TestWorker, port: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    worker.drain_port(port, |f| out.push(f.to_vec()));
    out
}

/// Everything punted, drained: (kind, port, next hop, frame).
pub fn punts(worker: &mut TestWorker) -> Vec<(PuntKind, usize, Option<IpAddr>, Vec<u8>)> {
    let mut out = Vec::new();
    worker.drain_punts(|p: Punt<'_>| out.push((p.kind, p.port, p.next_hop, p.frame.to_vec())));
    out
}

/// Runs one frame through a fresh burst at time `now_ns`.
pub fn receive(worker: &mut TestWorker, port: usize, frame: &[u8], now_ns: u64) {
    worker.receive_burst(port, &[frame], now_ns);
}

/// The ICMP message (type, code, the 4 bytes after the checksum, the
/// quote) of an IPv4 frame, checking its IP and ICMP checksums.
pub fn icmp4(frame: &[u8]) -> (u8, u8, [u8; 4], Vec<u8>) {
    assert_eq!(&frame[12..14], &[0x08, 0x00], "an IPv4 frame");
    let ip = &frame[14..];
    let hl = usize::from(ip[0] & 0x0f) * 4;
    assert_eq!(checksum::checksum(&ip[..hl]), 0, "IP header checksum");
    assert_eq!(ip[9], 1, "ICMP");
    let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
    let icmp = &ip[hl..total];
    assert_eq!(checksum::checksum(icmp), 0, "ICMP checksum");
    (
        icmp[0],
        icmp[1],
        [icmp[4], icmp[5], icmp[6], icmp[7]],
        icmp[8..].to_vec(),
    )
}

/// The ICMPv6 message (type, code, 4 bytes, quote) of an IPv6 frame,
/// checking its checksum over the pseudo-header.
pub fn icmp6(frame: &[u8]) -> (u8, u8, [u8; 4], Vec<u8>) {
    assert_eq!(&frame[12..14], &[0x86, 0xdd], "an IPv6 frame");
    let ip = &frame[14..];
    assert_eq!(ip[6], 58, "ICMPv6");
    let len = usize::from(u16::from_be_bytes([ip[4], ip[5]]));
    let icmp = &ip[40..40 + len];
    let mut pseudo = Vec::new();
    pseudo.extend_from_slice(&ip[8..40]);
    pseudo.extend_from_slice(&(len as u32).to_be_bytes());
    pseudo.extend_from_slice(&[0, 0, 0, 58]);
    pseudo.extend_from_slice(icmp);
    assert_eq!(checksum::checksum(&pseudo), 0, "ICMPv6 checksum");
    (
        icmp[0],
        icmp[1],
        [icmp[4], icmp[5], icmp[6], icmp[7]],
        icmp[8..].to_vec(),
    )
}

pub fn ipv4_src(frame: &[u8]) -> Ipv4Addr {
    Ipv4Addr::new(frame[26], frame[27], frame[28], frame[29])
}

pub fn ipv4_dst(frame: &[u8]) -> Ipv4Addr {
    Ipv4Addr::new(frame[30], frame[31], frame[32], frame[33])
}
