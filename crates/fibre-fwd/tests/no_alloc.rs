//! Nothing allocates per frame: bursts of forwarded packets, ICMP errors,
//! fragments and neighbour misses, once the worker is made.

mod common;

use common::*;
use fibre_testkit::CountingAllocator;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Runs 20 bursts of `frames` (after one to warm up) and returns the
/// allocations they made.
fn allocations_over_bursts(w: &mut TestWorker, frames: &[Vec<u8>]) -> u64 {
    // Warm up: anything made on first use is made now.
    w.receive_burst(P0, frames, 0);
    let (mut sink, mut punted) = (0usize, 0usize);
    w.drain_port(P0, |f| sink += f.len());
    w.drain_port(P1, |f| sink += f.len());
    w.drain_punts(|p| punted += p.frame.len());
    let before = CountingAllocator::allocations();
    for round in 1..=20u64 {
        // Seconds apart, so that the rate limits let errors through.
        w.receive_burst(P0, frames, round * 2_000_000_000);
        w.drain_port(P0, |f| sink += f.len());
        w.drain_port(P1, |f| sink += f.len());
        w.drain_punts(|p| punted += p.frame.len());
    }
    let allocations = CountingAllocator::allocations() - before;
    assert!(sink > 0 || punted > 0);
    allocations
}

#[test]
fn forwarding_fragments_and_neighbour_misses_allocate_nothing() {
    let mut w = worker();
    let frames = vec![
        frame4(&udp4(SENDER, "10.1.0.7".parse().unwrap(), 64, false, 100)),
        frame4(&udp4(SENDER, "192.0.2.1".parse().unwrap(), 64, false, 100)),
        frame4(&udp4(SENDER, "10.1.0.7".parse().unwrap(), 64, false, 3000)),
        frame4(&udp4(SENDER, "10.1.0.99".parse().unwrap(), 64, false, 100)),
        frame4(&udp4(SENDER, "198.18.0.1".parse().unwrap(), 64, false, 100)),
        frame6(&udp6(SENDER6, "2001:db8:1::7".parse().unwrap(), 64, 100)),
        frame6(&udp6(SENDER6, "2001:db8:1::99".parse().unwrap(), 64, 100)),
    ];
    let allocations = allocations_over_bursts(&mut w, &frames);
    assert!(w.counters().fragments > 20 && w.counters().punted_unresolved > 20);
    assert_eq!(
        allocations,
        0,
        "allocations over 20 bursts of {} frames",
        frames.len()
    );
}

#[test]
fn icmp_errors_and_echo_replies_allocate_nothing() {
    let mut w = worker();
    let frames = vec![
        frame4(&udp4(SENDER, "10.1.0.7".parse().unwrap(), 64, false, 100)),
        frame4(&udp4(SENDER, "192.0.2.1".parse().unwrap(), 64, false, 100)),
        frame4(&udp4(SENDER, "10.1.0.7".parse().unwrap(), 1, false, 100)),
        frame4(&udp4(
            SENDER,
            "198.51.100.1".parse().unwrap(),
            64,
            false,
            100,
        )),
        frame4(&udp4(SENDER, "10.1.0.7".parse().unwrap(), 64, true, 2000)),
        frame4(&udp4(SENDER, "10.1.0.7".parse().unwrap(), 64, false, 3000)),
        frame4(&udp4(SENDER, "10.1.0.99".parse().unwrap(), 64, false, 100)),
        frame4(&ping4(SENDER, "10.0.0.1".parse().unwrap(), 64)),
        frame6(&udp6(SENDER6, "2001:db8:1::7".parse().unwrap(), 64, 100)),
        frame6(&udp6(SENDER6, "2001:db8:1::7".parse().unwrap(), 1, 100)),
        frame6(&udp6(SENDER6, "2001:db8:200::1".parse().unwrap(), 64, 100)),
        frame6(&udp6(SENDER6, "2001:db8:1::99".parse().unwrap(), 64, 100)),
    ];
    let allocations = allocations_over_bursts(&mut w, &frames);
    assert!(w.counters().icmp_errors > 20, "{:?}", w.counters());
    assert_eq!(
        allocations,
        0,
        "allocations over 20 bursts of {} frames",
        frames.len()
    );
}

/// `packet` with IPv4 `options` (a multiple of 4 bytes) after its header.
fn with_options(packet: &[u8], options: &[u8]) -> Vec<u8> {
    let header_len = 20 + options.len();
    let mut p = packet[..20].to_vec();
    p.extend_from_slice(options);
    p.extend_from_slice(&packet[20..]);
    p[0] = 0x40 | (header_len / 4) as u8;
    let total = p.len() as u16;
    p[2..4].copy_from_slice(&total.to_be_bytes());
    p[10..12].fill(0);
    let sum = fibre_net::checksum::checksum(&p[..header_len]);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    p
}

#[test]
fn ipv4_options_allocate_nothing() {
    let mut w = worker();
    let record_route = [7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let timestamp = [68, 12, 5, 1, 0, 0, 0, 0, 0, 0, 0, 0];
    let host = "10.1.0.7".parse().unwrap();
    let frames = vec![
        // Forwarded, fragmented, expired, refused by its route, malformed,
        // timestamped, and pinged, each with options to compile and echo.
        frame4(&with_options(
            &udp4(SENDER, host, 64, false, 100),
            &record_route,
        )),
        frame4(&with_options(
            &udp4(SENDER, host, 64, false, 3000),
            &record_route,
        )),
        frame4(&with_options(
            &udp4(SENDER, host, 1, false, 100),
            &record_route,
        )),
        frame4(&with_options(
            &udp4(SENDER, "198.51.100.1".parse().unwrap(), 64, false, 100),
            &record_route,
        )),
        frame4(&with_options(
            &udp4(SENDER, host, 64, false, 100),
            &[7, 7, 4, 0],
        )),
        frame4(&with_options(
            &udp4(SENDER, host, 1, false, 100),
            &timestamp,
        )),
        frame4(&with_options(
            &ping4(SENDER, "10.0.0.1".parse().unwrap(), 64),
            &record_route,
        )),
    ];
    let allocations = allocations_over_bursts(&mut w, &frames);
    assert!(
        w.counters().icmp_errors > 20 && w.counters().fragments > 20,
        "{:?}",
        w.counters()
    );
    assert_eq!(
        allocations,
        0,
        "allocations over 20 bursts of {} frames",
        frames.len()
    );
}

#[test]
fn errors_for_failed_resolutions_allocate_nothing() {
    let mut w = worker();
    let record_route = [7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let unresolved = "10.1.0.99".parse().unwrap();
    let frames = vec![
        frame4(&udp4(SENDER, unresolved, 64, false, 100)),
        frame4(&with_options(
            &udp4(SENDER, unresolved, 64, false, 100),
            &record_route,
        )),
        frame4(&udp4(SENDER, unresolved, 64, false, 3000)),
        frame6(&udp6(SENDER6, "2001:db8:1::99".parse().unwrap(), 64, 100)),
    ];
    // The punted packets, kept where nothing allocates: the control side
    // queues them, then gives them up.
    let mut held = [[0u8; 1600]; 8];
    let mut lens = [(0u32, 0usize); 8];
    let mut sink = 0usize;
    let mut round = |w: &mut TestWorker, now_ns: u64| {
        w.receive_burst(P0, &frames, now_ns);
        let mut n = 0;
        w.drain_punts(|p| {
            let packet = &p.frame[14..];
            if n < held.len() && packet.len() <= held[n].len() {
                held[n][..packet.len()].copy_from_slice(packet);
                lens[n] = (p.link, packet.len());
                n += 1;
            }
        });
        for (packet, &(link, len)) in held.iter().zip(&lens).take(n) {
            w.resolution_failed(link, &packet[..len], now_ns + 1_000_000);
        }
        w.drain_port(P0, |f| sink += f.len());
        w.drain_port(P1, |f| sink += f.len());
        n
    };
    assert!(round(&mut w, 0) >= frames.len());
    let before = CountingAllocator::allocations();
    for i in 1..=20u64 {
        round(&mut w, i * 2_000_000_000);
    }
    let allocations = CountingAllocator::allocations() - before;
    assert!(w.counters().icmp_errors > 20 * 3, "{:?}", w.counters());
    assert_eq!(
        allocations, 0,
        "allocations over 20 rounds of failed resolutions"
    );
}

#[test]
fn a_record_route_without_a_route_back_allocates_nothing() {
    // `fib_compute_spec_dst`'s lookup (no protocol) is prohibited, the
    // ICMP route back is not: the fallback, `Fib::spec_dst_v4` and
    // `Fib::select_source_v4`, runs for every packet.
    let mut w = worker_with("rule add not ipproto icmp prohibit pref 800\n");
    let record_route = [7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let frames = vec![frame4(&with_options(
        &udp4(
            "192.0.2.5".parse().unwrap(),
            "10.1.0.7".parse().unwrap(),
            64,
            false,
            100,
        ),
        &record_route,
    ))];
    let allocations = allocations_over_bursts(&mut w, &frames);
    assert!(w.counters().icmp_errors >= 20, "{:?}", w.counters());
    assert_eq!(allocations, 0, "allocations over 20 bursts");
}

#[test]
fn ipv6_redirects_allocate_nothing() {
    // Out the link it came in on, to an on-link host: a redirect
    // (`ndisc_send_redirect`) each round, then the packet.
    let mut w = worker();
    let on_link: std::net::Ipv6Addr = "2001:db8::7".parse().unwrap();
    w.neighbours_mut().insert(2, on_link.into(), NEIGHBOUR_MAC);
    let frames = vec![frame6(&udp6(SENDER6, on_link, 64, 100))];
    let allocations = allocations_over_bursts(&mut w, &frames);
    assert!(
        w.counters().icmp_errors >= 20 && w.counters().forwarded >= 20,
        "{:?}",
        w.counters()
    );
    assert_eq!(allocations, 0, "allocations over 20 bursts");
}

/// A GRE packet (no key, checksum or sequence number) from `src` to `dst`
/// carrying `inner`, in a frame to p1 from `mac`.
fn gre_frame(src: &str, dst: &str, mac: [u8; 6], inner: &[u8]) -> Vec<u8> {
    let total = 20 + 4 + inner.len();
    let mut p = vec![0x45, 0];
    p.extend_from_slice(&(total as u16).to_be_bytes());
    p.extend_from_slice(&[0, 0, 0x40, 0, 64, 47, 0, 0]);
    p.extend_from_slice(&src.parse::<std::net::Ipv4Addr>().unwrap().octets());
    p.extend_from_slice(&dst.parse::<std::net::Ipv4Addr>().unwrap().octets());
    let sum = fibre_net::checksum::checksum(&p);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    p.extend_from_slice(&[0, 0, 0x08, 0x00]);
    p.extend_from_slice(inner);
    let mut f = frame(P1_MAC, 0x0800, &p);
    f[6..12].copy_from_slice(&mac);
    f
}

#[test]
fn tunnel_encapsulation_decapsulation_and_their_errors_allocate_nothing() {
    let mut w = worker_with(
        "link add gt0 type gre remote 10.1.0.200 local 10.1.0.1
link set gt0 up
route add 172.16.0.0/16 dev gt0
link add gt1 type gre remote 10.1.0.201 local 10.1.0.1 key 7 csum seq
link set gt1 up
route add 172.17.0.0/16 dev gt1
",
    );
    for name in ["gt0", "gt1"] {
        let link = w.fib_mut().links().find(|l| l.name == name).unwrap().index;
        w.add_tunnel(fibre_fwd::TunnelConfig::new(link));
    }
    w.neighbours_mut()
        .insert(3, "10.1.0.200".parse().unwrap(), [2, 0, 0, 0, 1, 0xc8]);
    w.neighbours_mut()
        .insert(3, "10.1.0.201".parse().unwrap(), [2, 0, 0, 0, 1, 0xc9]);
    let into_tunnels = vec![
        frame4(&udp4(SENDER, "172.16.0.5".parse().unwrap(), 64, true, 100)),
        frame4(&udp4(SENDER, "172.17.0.5".parse().unwrap(), 64, true, 100)),
        // Fragmented to the tunnel's MTU, and too big for it with DF.
        frame4(&udp4(
            SENDER,
            "172.16.0.5".parse().unwrap(),
            64,
            false,
            3000,
        )),
        frame4(&udp4(SENDER, "172.17.0.5".parse().unwrap(), 64, true, 2000)),
    ];
    let inner = udp4(
        "172.16.0.9".parse().unwrap(),
        "10.0.0.7".parse().unwrap(),
        64,
        false,
        60,
    );
    let from_tunnels = vec![
        // Decapsulated and forwarded; from nobody's tunnel (port
        // unreachable).
        gre_frame("10.1.0.200", "10.1.0.1", [2, 0, 0, 0, 1, 0xc8], &inner),
        gre_frame("10.1.0.7", "10.1.0.1", [2, 0, 0, 0, 1, 7], &inner),
    ];
    let mut sink = 0usize;
    let mut round = |w: &mut TestWorker, now_ns: u64| {
        w.receive_burst(P0, &into_tunnels, now_ns);
        w.receive_burst(P1, &from_tunnels, now_ns);
        w.drain_port(P0, |f| sink += f.len());
        w.drain_port(P1, |f| sink += f.len());
        w.drain_punts(|p| sink += p.frame.len());
    };
    round(&mut w, 0);
    let before = CountingAllocator::allocations();
    for i in 1..=20u64 {
        round(&mut w, i * 2_000_000_000);
    }
    let allocations = CountingAllocator::allocations() - before;
    let c = w.counters();
    assert!(
        c.forwarded >= 21 * 4 && c.fragments >= 21 * 3 && c.icmp_errors >= 21 * 2,
        "{c:?}"
    );
    assert_eq!(c.drops(fibre_base::DropReason::NotForTunnel), 21);
    assert_eq!(
        allocations, 0,
        "allocations over 20 rounds of tunnel traffic"
    );
}
