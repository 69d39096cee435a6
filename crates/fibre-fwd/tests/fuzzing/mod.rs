//! The receive path of a burst on arbitrary bytes: how bytes become a
//! burst, the seeds to start from, and what must hold of whatever the
//! worker does with it. Shared by the libFuzzer target
//! (`fuzz/fuzz_targets/receive_burst.rs`) and the bounded run on stable
//! (`tests/fuzz_bounded.rs`), so that a failure found by either replays in
//! the other.

#![allow(dead_code)]

use std::net::Ipv4Addr;
use std::sync::OnceLock;

use fibre_fib::Fib;
use fibre_fwd::{StaticNeighbours, TunnelConfig, Worker, WorkerConfig, BURST};
use fibre_net::checksum;

use super::common::*;

/// Frames in one input at the most: two bursts' worth, so that the
/// worker's own cut into bursts is reached.
pub const MAX_FRAMES: usize = 2 * BURST;

/// One input: the port the burst arrives on (2 is no port of the
/// worker's), the time, and the frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// The receiving port, 0..=2.
    pub port: usize,
    /// Milliseconds since the worker started (the ICMP limiters' clock).
    pub now_ms: u16,
    /// The frames, each at most 65535 bytes.
    pub frames: Vec<Vec<u8>>,
}

/// Bytes as an input: byte 0 the port (mod 3), bytes 1-2 the time in ms
/// (big-endian), then frames, each a 2-byte big-endian length and that
/// many bytes (the last one cut at the end of the bytes), at most
/// [`MAX_FRAMES`] of them. Every byte string is an input.
pub fn decode(data: &[u8]) -> Input {
    let port = data.first().map_or(0, |&b| usize::from(b) % 3);
    let now_ms = match data.get(1..3) {
        Some(t) => u16::from_be_bytes([t[0], t[1]]),
        None => 0,
    };
    let mut frames = Vec::new();
    let mut rest = data.get(3..).unwrap_or(&[]);
    while rest.len() >= 2 && frames.len() < MAX_FRAMES {
        let len = usize::from(u16::from_be_bytes([rest[0], rest[1]]));
        let end = (2 + len).min(rest.len());
        frames.push(rest[2..end].to_vec());
        rest = &rest[end..];
    }
    Input {
        port,
        now_ms,
        frames,
    }
}

/// The bytes [`decode`] reads back as `input` (frames longer than 65535
/// bytes are cut).
pub fn encode(input: &Input) -> Vec<u8> {
    let mut out = vec![input.port as u8];
    out.extend_from_slice(&input.now_ms.to_be_bytes());
    for frame in input.frames.iter().take(MAX_FRAMES) {
        let frame = &frame[..frame.len().min(usize::from(u16::MAX))];
        out.extend_from_slice(&(frame.len() as u16).to_be_bytes());
        out.extend_from_slice(frame);
    }
    out
}

/// Good frames of every kind the worker tells apart, one burst each: the
/// starting points of the search.
pub fn seeds() -> Vec<Input> {
    let v4 = |d: &str| -> Ipv4Addr { d.parse().unwrap() };
    let v6 = |d: &str| -> std::net::Ipv6Addr { d.parse().unwrap() };
    let mut frames4 = vec![
        frame4(&udp4(SENDER, v4("192.0.2.9"), 64, false, 18)),
        frame4(&udp4(SENDER, v4("192.0.2.200"), 1, true, 18)),
        frame4(&udp4(SENDER, v4("192.0.2.9"), 64, true, 2000)),
        frame4(&udp4(SENDER, v4("192.0.2.130"), 64, false, 1400)),
        frame4(&udp4(SENDER, v4("198.51.100.3"), 64, false, 18)),
        frame4(&udp4(SENDER, v4("203.0.113.3"), 64, false, 18)),
        frame4(&udp4(SENDER, v4("198.18.0.1"), 64, false, 18)),
        frame4(&udp4(SENDER, v4("10.1.0.7"), 64, false, 18)),
        frame4(&udp4(SENDER, v4("10.1.0.99"), 64, false, 18)),
        frame4(&udp4(SENDER, v4("10.0.0.7"), 64, false, 18)),
        frame4(&udp4(SENDER, v4("255.255.255.255"), 64, false, 18)),
        frame4(&ping4(SENDER, v4("10.0.0.1"), 64)),
        frame4(&ping4(SENDER, v4("10.1.0.1"), 1)),
    ];
    // Record route (type 7, length 11, pointer 4, two slots) on a
    // forwarded packet: options are read and rewritten on the way.
    let mut options = udp4(SENDER, v4("192.0.2.9"), 64, false, 18);
    options.splice(20..20, [7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    options[0] = 0x48;
    let total = options.len() as u16;
    options[2..4].copy_from_slice(&total.to_be_bytes());
    options[10..12].fill(0);
    let sum = checksum::checksum(&options[..32]);
    options[10..12].copy_from_slice(&sum.to_be_bytes());
    frames4.push(frame4(&options));
    let frames6 = vec![
        frame6(&udp6(SENDER6, v6("2001:db8:100::9"), 64, 18)),
        frame6(&udp6(SENDER6, v6("2001:db8:100:1::9"), 64, 1400)),
        frame6(&udp6(SENDER6, v6("2001:db8:100::9"), 1, 18)),
        frame6(&udp6(SENDER6, v6("2001:db8:200::1"), 64, 18)),
        frame6(&udp6(SENDER6, v6("2001:db8:300::1"), 64, 18)),
        frame6(&udp6(SENDER6, v6("2001:db8:400::1"), 64, 18)),
        frame6(&udp6(SENDER6, v6("2001:db8:1::7"), 64, 18)),
        frame6(&udp6(SENDER6, v6("2001:db8:1::99"), 64, 18)),
        frame6(&udp6(SENDER6, v6("2001:db8::1"), 64, 18)),
        frame6(&udp6(SENDER6, v6("ff02::1"), 64, 18)),
    ];
    // An ARP request for the router's address on p0.
    let mut arp = vec![0, 1, 8, 0, 6, 4, 0, 1];
    arp.extend_from_slice(&SENDER_MAC);
    arp.extend_from_slice(&SENDER.octets());
    arp.extend_from_slice(&[0; 6]);
    arp.extend_from_slice(&[10, 0, 0, 1]);
    let arp = frame([0xff; 6], 0x0806, &arp);
    // Into the tunnels, and out of them.
    let into_tunnels = vec![
        frame4(&udp4(SENDER, v4("172.16.0.9"), 64, true, 18)),
        frame4(&udp4(SENDER, v4("172.17.0.9"), 64, false, 1400)),
        frame4(&udp4(SENDER, v4("172.17.0.9"), 64, true, 1400)),
        frame6(&udp6(SENDER6, v6("2001:db8:500::9"), 64, 18)),
    ];
    let inner = udp4(v4("172.16.0.9"), v4("10.0.0.7"), 64, false, 18);
    let inner6 = udp6(v6("2001:db8:500::9"), v6("2001:db8::7"), 64, 18);
    let from_tunnels = vec![
        gre_frame(v4("10.1.0.200"), None, None, &inner),
        gre_frame(v4("10.1.0.200"), None, None, &inner6),
        gre_frame(v4("10.1.0.201"), Some(7), Some(1), &inner),
        gre_frame(v4("10.1.0.201"), Some(7), Some(0), &inner),
        gre_frame(v4("10.1.0.7"), None, None, &inner),
    ];
    vec![
        Input {
            port: 0,
            now_ms: 0,
            frames: frames4.clone(),
        },
        Input {
            port: 0,
            now_ms: 0,
            frames: into_tunnels,
        },
        Input {
            port: 1,
            now_ms: 0,
            frames: from_tunnels,
        },
        Input {
            port: 0,
            now_ms: 1000,
            frames: frames6.clone(),
        },
        Input {
            port: 1,
            now_ms: 5,
            frames: frames4.into_iter().chain(frames6).chain([arp]).collect(),
        },
    ]
}

/// Two GRE tunnels over p1 (a plain one, and one with key, checksums
/// and sequence numbers), run by the worker: encapsulation and
/// decapsulation are fuzzed with the rest.
const TUNNELS: &str = "link add gt0 type gre remote 10.1.0.200 local 10.1.0.1
link set gt0 up
route add 172.16.0.0/16 dev gt0
route add 2001:db8:500::/48 dev gt0
link add gt1 type gre remote 10.1.0.201 local 10.1.0.1 key 7 csum seq
link set gt1 up
route add 172.17.0.0/16 dev gt1
";

/// The test router's FIB with [`TUNNELS`], built once.
fn fib() -> &'static Fib {
    static FIB: OnceLock<Fib> = OnceLock::new();
    FIB.get_or_init(|| {
        let text = format!("{}{TUNNELS}", super::common::CONFIG);
        fibre_fib::config::apply_str(&Fib::new(), "router.conf", &text, false)
            .expect("the fuzzed router's configuration applies")
            .0
    })
}

/// A GRE packet from `src` to the router's 10.1.0.1 carrying `inner`
/// (flags and fields as given, the checksum left for the worker to
/// refuse or accept), in a frame to p1.
fn gre_frame(src: Ipv4Addr, key: Option<u32>, seq: Option<u32>, inner: &[u8]) -> Vec<u8> {
    let proto: u16 = if inner[0] >> 4 == 6 { 0x86dd } else { 0x0800 };
    let mut g = vec![0u8, 0];
    g.extend_from_slice(&proto.to_be_bytes());
    if key.is_some() || seq.is_some() {
        // C, K and S: checksum, key and sequence number.
        g[0] = 0xb0;
        g.extend_from_slice(&[0; 4]);
        g.extend_from_slice(&key.unwrap_or(0).to_be_bytes());
        g.extend_from_slice(&seq.unwrap_or(0).to_be_bytes());
    }
    g.extend_from_slice(inner);
    if g[0] & 0x80 != 0 {
        let sum = checksum::checksum(&g);
        g[4..6].copy_from_slice(&sum.to_be_bytes());
    }
    let mut p = udp4(src, Ipv4Addr::new(10, 1, 0, 1), 64, true, 0);
    p.truncate(20);
    p[9] = 47;
    p.extend_from_slice(&g);
    let total = p.len() as u16;
    p[2..4].copy_from_slice(&total.to_be_bytes());
    p[10..12].fill(0);
    let sum = checksum::checksum(&p[..20]);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    frame(P1_MAC, 0x0800, &p)
}

/// The test router's worker with the tunnels of [`TUNNELS`].
fn tunnel_worker(config: WorkerConfig) -> Worker<&'static Fib, StaticNeighbours> {
    let mut n = neighbours();
    n.insert(3, "10.1.0.200".parse().unwrap(), [2, 0, 0, 0, 1, 0xc8]);
    n.insert(3, "10.1.0.201".parse().unwrap(), [2, 0, 0, 0, 1, 0xc9]);
    let mut worker = Worker::new(fib(), n, &ports(), config);
    for name in ["gt0", "gt1"] {
        let link = fib().links().find(|l| l.name == name).map(|l| l.index);
        worker.add_tunnel(TunnelConfig::new(link.expect("the tunnel is in the FIB")));
    }
    worker
}

/// What must hold of a frame the worker queued on a port whose MAC is
/// `mac` and MTU `mtu`: whole, from that MAC, an IP packet within the
/// MTU with a valid IPv4 header checksum and a TTL or hop limit left.
fn check_sent(frame: &[u8], mac: [u8; 6], mtu: usize) -> Result<(), String> {
    if frame.len() < 14 || frame[6..12] != mac {
        return Err(format!(
            "a frame of {} bytes not from {mac:02x?}",
            frame.len()
        ));
    }
    let ip = &frame[14..];
    match u16::from_be_bytes([frame[12], frame[13]]) {
        0x0800 => {
            let header = usize::from(ip.first().copied().unwrap_or(0) & 0x0f) * 4;
            if ip.len() < 20 || ip[0] >> 4 != 4 || header < 20 || header > ip.len() {
                return Err("an IPv4 frame without a whole header".into());
            }
            let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
            if total < header || total > ip.len() || total > mtu {
                return Err(format!("IPv4 total length {total} (MTU {mtu})"));
            }
            if checksum::checksum(&ip[..header]) != 0 {
                return Err("an IPv4 header checksum that does not sum".into());
            }
            if ip[8] == 0 {
                return Err("an IPv4 packet sent with TTL 0".into());
            }
        }
        0x86dd => {
            if ip.len() < 40 || ip[0] >> 4 != 6 {
                return Err("an IPv6 frame without a whole header".into());
            }
            let total = 40 + usize::from(u16::from_be_bytes([ip[4], ip[5]]));
            if total > ip.len() || total > mtu {
                return Err(format!("IPv6 packet length {total} (MTU {mtu})"));
            }
            if ip[7] == 0 {
                return Err("an IPv6 packet sent with hop limit 0".into());
            }
        }
        other => return Err(format!("a frame of EtherType {other:#06x}")),
    }
    Ok(())
}

/// Runs `input` through a fresh worker on the test router, twice (the
/// second burst 1 s later, so that the limiters and queues carry state),
/// and checks: every frame ends in exactly one count, what is queued on a
/// port is a whole IP frame from that port within its MTU, punts name a
/// port of the worker's. A panic is the other failure.
pub fn check(input: &Input) -> Result<(), String> {
    // The control side's queues as short as a burst: a fresh worker per
    // input (so that an input replays alone) zeroes every slot it holds.
    let config = WorkerConfig {
        unresolved_queue_len: BURST,
        control_queue_len: BURST,
        ..config()
    };
    let mut worker = tunnel_worker(config);
    let mtus = [9000, 1400];
    let frames = &input.frames;
    for round in 0..2u64 {
        let now_ns = u64::from(input.now_ms) * 1_000_000 + round * 1_000_000_000;
        worker.receive_burst(input.port, frames, now_ns);
        let c = *worker.counters();
        let received = (round + 1) * frames.len() as u64;
        if c.received != received || outcomes(&c) != received {
            return Err(format!("{received} frames received, counted {c:?}"));
        }
        for (port, config) in ports().iter().enumerate() {
            let mut bad = None;
            worker.drain_port(port, |f| {
                if bad.is_none() {
                    bad = check_sent(f, config.mac, mtus[port]).err();
                }
            });
            if let Some(bad) = bad {
                return Err(format!("port {port}: {bad}"));
            }
        }
        let mut bad_punt = None;
        worker.drain_punts(|p| {
            if p.port >= mtus.len() || p.frame.is_empty() {
                bad_punt = Some(format!(
                    "a punt from port {} of {} bytes",
                    p.port,
                    p.frame.len()
                ));
            }
        });
        if let Some(bad) = bad_punt {
            return Err(bad);
        }
    }
    Ok(())
}
