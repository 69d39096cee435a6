//! GRE tunnels as devices of the worker: encapsulation of forwarded
//! packets (with and without key, checksum and sequence numbers, fixed and
//! inherited TTL and TOS), the tunnel MTU's ICMP errors, decapsulation and
//! forwarding of the inner packet, and GRE that no tunnel takes.
//!
//! Every expected frame is built here, byte by byte, from RFC 2784/2890
//! and RFC 791, never by the code under test. The kernel on this machine
//! has no GRE module, so the packet-level kernel oracle cannot check these
//! frames; what the kernel does is taken from its source (`ip_tunnel_xmit`,
//! `gre_build_header`, `tnl_update_pmtu`, `gre_rcv`, `ip_tunnel_rcv`).

mod common;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use common::*;
use fibre_base::DropReason;
use fibre_fib::LinkIndex;
use fibre_fwd::TunnelConfig;
use fibre_net::checksum;

/// The far ends of the tunnels: on p1, and beyond its gateway.
const REMOTE0: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 200);
const REMOTE1: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 201);
const REMOTE2: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 50);
const REMOTE0_MAC: [u8; 6] = [2, 0, 0, 0, 1, 0xc8];
const REMOTE1_MAC: [u8; 6] = [2, 0, 0, 0, 1, 0xc9];
/// The router's address on p1, the tunnels' local end.
const LOCAL: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 1);

/// gt0: plain, bound to 10.1.0.1; gt1: key 7, checksums and sequence
/// numbers; gt2: TTL 32, TOS 0x10, no local address (the underlay
/// route's source), its remote beyond p1's gateway.
const TUNNELS: &str = "link add gt0 type gre remote 10.1.0.200 local 10.1.0.1
link set gt0 up
route add 172.16.0.0/16 dev gt0
route add 2001:db8:500::/48 dev gt0
link add gt1 type gre remote 10.1.0.201 local 10.1.0.1 key 7 csum seq
link set gt1 up
route add 172.17.0.0/16 dev gt1
link add gt2 type gre remote 192.0.2.50 ttl 32 tos 0x10
link set gt2 up
route add 172.18.0.0/16 dev gt2
";

/// The test router with the three tunnels added to the worker, the
/// tunnels' remote ends resolved on p1; returns the tunnels' ifindexes.
fn tunnel_worker(extra: &str) -> (TestWorker, [LinkIndex; 3]) {
    let mut w = worker_with(&format!("{TUNNELS}{extra}"));
    let index = |w: &mut TestWorker, name: &str| {
        w.fib_mut()
            .links()
            .find(|l| l.name == name)
            .unwrap_or_else(|| panic!("{name} in the FIB"))
            .index
    };
    let links = [
        index(&mut w, "gt0"),
        index(&mut w, "gt1"),
        index(&mut w, "gt2"),
    ];
    for l in links {
        w.add_tunnel(TunnelConfig::new(l));
    }
    w.neighbours_mut()
        .insert(3, IpAddr::V4(REMOTE0), REMOTE0_MAC);
    w.neighbours_mut()
        .insert(3, IpAddr::V4(REMOTE1), REMOTE1_MAC);
    (w, links)
}

/// `packet` with its TTL one less and its header checksum recomputed.
fn forwarded4(packet: &[u8]) -> Vec<u8> {
    let mut p = packet.to_vec();
    p[8] -= 1;
    p[10..12].fill(0);
    let sum = checksum::checksum(&p[..20]);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    p
}

/// A GRE header (RFC 2784, RFC 2890) and `payload` of protocol `proto`:
/// C, K and S as given, the checksum over header and payload.
fn gre(csum: bool, key: Option<u32>, seq: Option<u32>, proto: u16, payload: &[u8]) -> Vec<u8> {
    let mut flags = 0u16;
    if csum {
        flags |= 0x8000;
    }
    if key.is_some() {
        flags |= 0x2000;
    }
    if seq.is_some() {
        flags |= 0x1000;
    }
    let mut g = Vec::new();
    g.extend_from_slice(&flags.to_be_bytes());
    g.extend_from_slice(&proto.to_be_bytes());
    if csum {
        g.extend_from_slice(&[0, 0, 0, 0]);
    }
    if let Some(key) = key {
        g.extend_from_slice(&key.to_be_bytes());
    }
    if let Some(seq) = seq {
        g.extend_from_slice(&seq.to_be_bytes());
    }
    g.extend_from_slice(payload);
    if csum {
        let sum = checksum::checksum(&g);
        g[4..6].copy_from_slice(&sum.to_be_bytes());
    }
    g
}

/// An outer IPv4 header (ID 0, DF, protocol 47) and `payload`.
fn outer4(src: Ipv4Addr, dst: Ipv4Addr, ttl: u8, tos: u8, payload: &[u8]) -> Vec<u8> {
    let total = 20 + payload.len();
    let mut p = vec![0x45, tos];
    p.extend_from_slice(&(total as u16).to_be_bytes());
    p.extend_from_slice(&[0, 0, 0x40, 0, ttl, 47, 0, 0]);
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    let sum = checksum::checksum(&p);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    p.extend_from_slice(payload);
    p
}

/// An Ethernet frame to `dst` from `src`.
fn ether(dst: [u8; 6], src: [u8; 6], ethertype: u16, packet: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(packet);
    f
}

#[test]
fn the_tunnels_take_the_kernels_default_mtu() {
    let (mut w, [gt0, gt1, gt2]) = tunnel_worker("");
    let mtu = |w: &mut TestWorker, l| w.fib_mut().link(l).unwrap().mtu;
    // `ip_tunnel_bind_dev`: p1's 1400 less 20 + the GRE header.
    assert_eq!(mtu(&mut w, gt0), 1400 - 24);
    assert_eq!(mtu(&mut w, gt1), 1400 - 36);
    assert_eq!(mtu(&mut w, gt2), 1400 - 24);
}

#[test]
fn a_forwarded_packet_is_encapsulated_and_leaves_by_the_underlay_port() {
    let (mut w, [gt0, ..]) = tunnel_worker("");
    let inner = udp4(SENDER, "172.16.0.5".parse().unwrap(), 64, true, 100);
    receive(&mut w, P0, &frame4(&inner), 0);
    let out = sent(&mut w, P1);
    // TTL inherited from the inner packet after `ip_forward` decremented
    // it; TOS 0; a bare GRE header for IPv4.
    let expected = ether(
        REMOTE0_MAC,
        P1_MAC,
        0x0800,
        &outer4(
            LOCAL,
            REMOTE0,
            63,
            0,
            &gre(false, None, None, 0x0800, &forwarded4(&inner)),
        ),
    );
    assert_eq!(out, vec![expected]);
    assert_eq!(w.counters().forwarded, 1);
    assert_eq!(w.tunnel_counters(gt0).unwrap().tx_packets, 1);
    assert!(sent(&mut w, P0).is_empty());
}

#[test]
fn key_checksum_and_sequence_numbers_are_sent_as_configured() {
    let (mut w, _) = tunnel_worker("");
    let first = udp4(SENDER, "172.17.0.5".parse().unwrap(), 64, true, 100);
    let second = udp4(SENDER, "172.17.9.9".parse().unwrap(), 10, false, 33);
    w.receive_burst(P0, &[frame4(&first), frame4(&second)], 0);
    let out = sent(&mut w, P1);
    let wrap = |inner: &[u8], seq: u32, ttl: u8| {
        ether(
            REMOTE1_MAC,
            P1_MAC,
            0x0800,
            &outer4(
                LOCAL,
                REMOTE1,
                ttl,
                0,
                &gre(true, Some(7), Some(seq), 0x0800, &forwarded4(inner)),
            ),
        )
    };
    // Sequence numbers from 0, one per packet (`gre_build_header`).
    assert_eq!(out, vec![wrap(&first, 0, 63), wrap(&second, 1, 9)]);
    receive(&mut w, P0, &frame4(&first), 1);
    assert_eq!(sent(&mut w, P1), vec![wrap(&first, 2, 63)]);
}

#[test]
fn fixed_ttl_and_tos_keep_the_inner_ecn_and_the_underlay_goes_by_its_gateway() {
    let (mut w, _) = tunnel_worker("");
    let mut inner = udp4(SENDER, "172.18.0.5".parse().unwrap(), 64, true, 20);
    inner[1] = 0x03; // CE
    inner[10..12].fill(0);
    let sum = checksum::checksum(&inner[..20]);
    inner[10..12].copy_from_slice(&sum.to_be_bytes());
    receive(&mut w, P0, &frame4(&inner), 0);
    // TOS 0x10 with ECT(0) for the inner CE (RFC 6040), TTL 32, from
    // the underlay route's source, to the gateway's MAC.
    let expected = ether(
        GATEWAY_MAC,
        P1_MAC,
        0x0800,
        &outer4(
            LOCAL,
            REMOTE2,
            32,
            0x12,
            &gre(false, None, None, 0x0800, &forwarded4(&inner)),
        ),
    );
    assert_eq!(sent(&mut w, P1), vec![expected]);
}

#[test]
fn ipv6_rides_an_ipv4_tunnel_with_its_hop_limit_as_the_outer_ttl() {
    let (mut w, _) = tunnel_worker("");
    let dst: Ipv6Addr = "2001:db8:500::5".parse().unwrap();
    let inner = udp6(SENDER6, dst, 40, 50);
    receive(&mut w, P0, &frame6(&inner), 0);
    let mut hopped = inner.clone();
    hopped[7] = 39;
    let expected = ether(
        REMOTE0_MAC,
        P1_MAC,
        0x0800,
        &outer4(
            LOCAL,
            REMOTE0,
            39,
            0,
            &gre(false, None, None, 0x86dd, &hopped),
        ),
    );
    assert_eq!(sent(&mut w, P1), vec![expected]);
}

#[test]
fn a_df_packet_over_the_tunnel_mtu_gets_fragmentation_needed_with_it() {
    let (mut w, _) = tunnel_worker("");
    // 1377 bytes through gt0 (MTU 1376): `ip_forward` answers, quoting
    // the packet as received.
    let inner = udp4(SENDER, "172.16.0.5".parse().unwrap(), 64, true, 1377 - 28);
    receive(&mut w, P0, &frame4(&inner), 0);
    assert!(sent(&mut w, P1).is_empty());
    let back = sent(&mut w, P0);
    assert_eq!(back.len(), 1);
    assert_eq!(&back[0][..6], &SENDER_MAC);
    assert_eq!(ipv4_dst(&back[0]), SENDER);
    let (kind, code, rest, quote) = icmp4(&back[0]);
    assert_eq!((kind, code), (3, 4));
    assert_eq!(rest, [0, 0, 0x05, 0x60], "next-hop MTU 1376");
    assert_eq!(&quote[..], &inner[..quote.len()]);
    assert_eq!(w.counters().drops(DropReason::TooBig), 1);
    // One byte less fits.
    let fits = udp4(SENDER, "172.16.0.5".parse().unwrap(), 64, true, 1376 - 28);
    receive(&mut w, P0, &frame4(&fits), 1);
    let out = sent(&mut w, P1);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].len(), 14 + 1400);
}

#[test]
fn a_tunnel_mtu_beyond_its_underlay_is_caught_by_the_path_mtu_check() {
    // gt0 set to 1450 while p1 carries 1400: `tnl_update_pmtu` answers a
    // DF packet with 1400 - 24, quoting it with the TTL one less.
    let (mut w, _) = tunnel_worker("link set gt0 mtu 1450\n");
    let inner = udp4(SENDER, "172.16.0.5".parse().unwrap(), 64, true, 1420 - 28);
    receive(&mut w, P0, &frame4(&inner), 0);
    assert!(sent(&mut w, P1).is_empty());
    let back = sent(&mut w, P0);
    assert_eq!(back.len(), 1);
    let (kind, code, rest, quote) = icmp4(&back[0]);
    assert_eq!((kind, code, rest), (3, 4, [0, 0, 0x05, 0x60]));
    let decremented = forwarded4(&inner);
    assert_eq!(&quote[..], &decremented[..quote.len()]);
    // Without DF it is dropped too (the outer packet, DF set, would not
    // leave), without an answer.
    let no_df = udp4(SENDER, "172.16.0.5".parse().unwrap(), 64, false, 1420 - 28);
    receive(&mut w, P0, &frame4(&no_df), 1);
    assert!(sent(&mut w, P0).is_empty() && sent(&mut w, P1).is_empty());
    assert_eq!(w.counters().drops(DropReason::TooBig), 2);
}

#[test]
fn a_packet_without_df_is_fragmented_to_the_tunnel_mtu_then_encapsulated() {
    let (mut w, _) = tunnel_worker("");
    let inner = udp4(SENDER, "172.16.0.5".parse().unwrap(), 64, false, 3000);
    receive(&mut w, P0, &frame4(&inner), 0);
    let out = sent(&mut w, P1);
    // 3028 bytes in fragments of at most 1376: 1352 + 1352 + 304 of
    // payload (multiples of 8 but the last).
    assert_eq!(out.len(), 3);
    let mut payload = Vec::new();
    for (i, f) in out.iter().enumerate() {
        let outer = &f[14..];
        assert_eq!(&outer[9..10], &[47]);
        assert_eq!(checksum::checksum(&outer[..20]), 0);
        assert!(outer.len() <= 1400);
        let fragment = &outer[24..];
        assert_eq!(&outer[20..24], &[0, 0, 0x08, 0x00]);
        let offset = usize::from(u16::from_be_bytes([fragment[6], fragment[7]]) & 0x1fff) * 8;
        assert_eq!(offset, payload.len(), "fragment {i}");
        assert_eq!(fragment[8], 63);
        payload.extend_from_slice(&fragment[20..]);
    }
    assert_eq!(&payload[..], &inner[20..]);
    assert_eq!(w.counters().fragments, 3);
}

#[test]
fn gre_for_the_router_is_decapsulated_and_its_inner_packet_forwarded() {
    let (mut w, [gt0, ..]) = tunnel_worker("");
    // From a host behind the tunnel to 10.0.0.7 on p0.
    let inner = udp4(
        "172.16.0.9".parse().unwrap(),
        "10.0.0.7".parse().unwrap(),
        64,
        false,
        60,
    );
    let outer = outer4(
        REMOTE0,
        LOCAL,
        64,
        0,
        &gre(false, None, None, 0x0800, &inner),
    );
    receive(&mut w, P1, &ether(P1_MAC, REMOTE0_MAC, 0x0800, &outer), 0);
    let expected = ether(NEIGHBOUR_MAC, P0_MAC, 0x0800, &forwarded4(&inner));
    assert_eq!(sent(&mut w, P0), vec![expected]);
    assert_eq!(w.tunnel_counters(gt0).unwrap().rx_packets, 1);
    assert_eq!(w.counters().forwarded, 1);
    assert_eq!(outcomes(w.counters()), w.counters().received);
}

#[test]
fn decapsulated_packets_pass_the_tunnels_key_checksum_and_sequence_checks() {
    let (mut w, [_, gt1, _]) = tunnel_worker("");
    let inner = udp4(
        "172.17.0.9".parse().unwrap(),
        "10.0.0.7".parse().unwrap(),
        64,
        false,
        20,
    );
    let arrive = |w: &mut TestWorker, g: Vec<u8>, from: Ipv4Addr, mac: [u8; 6]| {
        let outer = outer4(from, LOCAL, 64, 0, &g);
        receive(w, P1, &ether(P1_MAC, mac, 0x0800, &outer), 0);
        sent(w, P0).len()
    };
    // Sequence 5, then 3 (out of order), then 6.
    for (seq, forwarded) in [(5, 1), (3, 0), (6, 1)] {
        let g = gre(true, Some(7), Some(seq), 0x0800, &inner);
        assert_eq!(
            arrive(&mut w, g, REMOTE1, REMOTE1_MAC),
            forwarded,
            "seq {seq}"
        );
    }
    assert_eq!(w.counters().drops(DropReason::OutOfOrder), 1);
    // No sequence number, no checksum: refused by the tunnel.
    assert_eq!(
        arrive(
            &mut w,
            gre(true, Some(7), None, 0x0800, &inner),
            REMOTE1,
            REMOTE1_MAC
        ),
        0
    );
    assert_eq!(w.counters().drops(DropReason::SeqMissing), 1);
    assert_eq!(
        arrive(
            &mut w,
            gre(false, Some(7), Some(9), 0x0800, &inner),
            REMOTE1,
            REMOTE1_MAC
        ),
        0
    );
    assert_eq!(w.counters().drops(DropReason::ChecksumMissing), 1);
    // A wrong checksum: dropped before any tunnel is looked for, silently.
    let mut bad = gre(true, Some(7), Some(10), 0x0800, &inner);
    bad[4] ^= 0xff;
    assert_eq!(arrive(&mut w, bad, REMOTE1, REMOTE1_MAC), 0);
    assert_eq!(w.counters().drops(DropReason::BadChecksum), 1);
    // A checksum gt0 does not expect (`ip_tunnel_rcv` wants them equal).
    assert_eq!(
        arrive(
            &mut w,
            gre(true, None, None, 0x0800, &inner),
            REMOTE0,
            REMOTE0_MAC
        ),
        0
    );
    assert_eq!(w.counters().drops(DropReason::BadChecksum), 2);
    assert_eq!(w.tunnel_counters(gt1).unwrap().rx_packets, 2);
    assert!(sent(&mut w, P1).is_empty(), "no ICMP for any of these");
}

#[test]
fn gre_no_tunnel_takes_is_answered_with_port_unreachable() {
    let (mut w, _) = tunnel_worker("");
    let inner = udp4(
        "172.16.0.9".parse().unwrap(),
        "10.0.0.7".parse().unwrap(),
        64,
        false,
        20,
    );
    // From a remote no tunnel has (10.1.0.7), and from gt1's remote with
    // a key it does not take: `gre_rcv` sends port unreachable.
    let unknown = [
        (
            Ipv4Addr::new(10, 1, 0, 7),
            HOST_MAC,
            gre(false, None, None, 0x0800, &inner),
        ),
        (
            REMOTE1,
            REMOTE1_MAC,
            gre(true, Some(8), Some(1), 0x0800, &inner),
        ),
    ];
    for (from, mac, g) in unknown {
        let outer = outer4(from, LOCAL, 64, 0, &g);
        receive(&mut w, P1, &ether(P1_MAC, mac, 0x0800, &outer), 0);
        let back = sent(&mut w, P1);
        assert_eq!(back.len(), 1, "from {from}");
        assert_eq!(&back[0][..6], &mac);
        assert_eq!((ipv4_src(&back[0]), ipv4_dst(&back[0])), (LOCAL, from));
        let (kind, code, rest, quote) = icmp4(&back[0]);
        assert_eq!((kind, code, rest), (3, 3, [0; 4]));
        assert_eq!(&quote[..], &outer[..quote.len()]);
        assert!(sent(&mut w, P0).is_empty());
    }
    assert_eq!(w.counters().drops(DropReason::NotForTunnel), 2);
    // A bad GRE version is dropped without an answer.
    let mut v1 = gre(false, None, None, 0x0800, &inner);
    v1[1] = 1;
    let outer = outer4(REMOTE0, LOCAL, 64, 0, &v1);
    receive(&mut w, P1, &ether(P1_MAC, REMOTE0_MAC, 0x0800, &outer), 0);
    assert!(sent(&mut w, P1).is_empty());
    assert_eq!(w.counters().drops(DropReason::BadVersion), 1);
}

#[test]
fn a_tunnel_the_worker_does_not_run_is_no_device_of_it() {
    // The FIB has the tunnels, the worker was given none of them: packets
    // routed to them are dropped, and GRE goes to the control side as
    // any protocol the worker has no handler for.
    let mut w = worker_with(TUNNELS);
    w.neighbours_mut()
        .insert(3, IpAddr::V4(REMOTE0), REMOTE0_MAC);
    let inner = udp4(SENDER, "172.16.0.5".parse().unwrap(), 64, true, 20);
    receive(&mut w, P0, &frame4(&inner), 0);
    assert_eq!(w.counters().drops(DropReason::NoOutputPort), 1);
    let g = gre(false, None, None, 0x0800, &inner);
    let outer = outer4(REMOTE0, LOCAL, 64, 0, &g);
    let f = ether(P1_MAC, REMOTE0_MAC, 0x0800, &outer);
    receive(&mut w, P1, &f, 0);
    assert!(sent(&mut w, P1).is_empty() && sent(&mut w, P0).is_empty());
    let punted = punts(&mut w);
    assert_eq!(punted.len(), 1);
    assert_eq!(punted[0].3, f);
    // Given gt1 alone, the worker runs ip_gre: GRE gt0 would take is
    // dropped (no device of this worker's), without port unreachable.
    let gt1 = w.fib_mut().links().find(|l| l.name == "gt1").unwrap().index;
    w.add_tunnel(TunnelConfig::new(gt1));
    receive(&mut w, P1, &f, 1);
    assert!(sent(&mut w, P1).is_empty() && punts(&mut w).is_empty());
    assert_eq!(w.counters().drops(DropReason::UnknownProtocol), 1);
}

#[test]
fn an_expired_inner_packet_is_answered_back_through_the_tunnel() {
    let (mut w, [gt0, ..]) = tunnel_worker("");
    let sender: Ipv4Addr = "172.16.0.9".parse().unwrap();
    let inner = udp4(sender, "10.0.0.7".parse().unwrap(), 1, false, 20);
    let outer = outer4(
        REMOTE0,
        LOCAL,
        64,
        0,
        &gre(false, None, None, 0x0800, &inner),
    );
    receive(&mut w, P1, &ether(P1_MAC, REMOTE0_MAC, 0x0800, &outer), 0);
    assert!(sent(&mut w, P0).is_empty());
    // Time exceeded, routed to 172.16.0.9 by gt0: encapsulated to the
    // remote end, out of p1.
    let back = sent(&mut w, P1);
    assert_eq!(back.len(), 1);
    let f = &back[0];
    assert_eq!(&f[..6], &REMOTE0_MAC);
    let outer_back = &f[14..];
    assert_eq!(checksum::checksum(&outer_back[..20]), 0);
    assert_eq!(&outer_back[9..10], &[47]);
    assert_eq!(&outer_back[12..20], &[10, 1, 0, 1, 10, 1, 0, 200]);
    assert_eq!(&outer_back[20..24], &[0, 0, 0x08, 0x00]);
    // The ICMP error inside, in a stand-in Ethernet frame for `icmp4`.
    let error = ether(P0_MAC, SENDER_MAC, 0x0800, &outer_back[24..]);
    assert_eq!(ipv4_dst(&error), sender);
    let (kind, code, _, quote) = icmp4(&error);
    assert_eq!((kind, code), (11, 0));
    assert_eq!(&quote[..], &inner[..quote.len()]);
    // Outer TTL inherited from the error's own (64).
    assert_eq!(outer_back[8], error[14 + 8]);
    let t = w.tunnel_counters(gt0).unwrap();
    assert_eq!((t.rx_packets, t.tx_packets), (1, 1));
}

#[test]
fn the_tunnels_rp_filter_judges_the_inner_source() {
    let (mut w, [gt0, ..]) = tunnel_worker("");
    // A second worker with strict rp_filter on gt0.
    let mut strict = worker_with(TUNNELS);
    strict.add_tunnel(TunnelConfig {
        rp_filter: fibre_fib::RpFilter::Strict,
        ..TunnelConfig::new(gt0)
    });
    // 10.0.0.50 is reached by p0, not gt0: strict mode drops it, the
    // default forwards it.
    let inner = udp4(
        "10.0.0.50".parse().unwrap(),
        "10.0.0.7".parse().unwrap(),
        64,
        false,
        20,
    );
    let outer = outer4(
        REMOTE0,
        LOCAL,
        64,
        0,
        &gre(false, None, None, 0x0800, &inner),
    );
    let f = ether(P1_MAC, REMOTE0_MAC, 0x0800, &outer);
    receive(&mut strict, P1, &f, 0);
    assert!(sent(&mut strict, P0).is_empty());
    assert_eq!(strict.counters().drops(DropReason::RpFilter), 1);
    receive(&mut w, P1, &f, 0);
    assert_eq!(sent(&mut w, P0).len(), 1);
    // From behind the tunnel the strict check passes.
    let inner = udp4(
        "172.16.0.9".parse().unwrap(),
        "10.0.0.7".parse().unwrap(),
        64,
        false,
        20,
    );
    let outer = outer4(
        REMOTE0,
        LOCAL,
        64,
        0,
        &gre(false, None, None, 0x0800, &inner),
    );
    receive(
        &mut strict,
        P1,
        &ether(P1_MAC, REMOTE0_MAC, 0x0800, &outer),
        0,
    );
    assert_eq!(sent(&mut strict, P0).len(), 1);
}

#[test]
fn inner_packets_for_the_router_are_answered_or_punted_from_the_tunnel() {
    let (mut w, [gt0, ..]) = tunnel_worker("");
    let sender: Ipv4Addr = "172.16.0.9".parse().unwrap();
    let wrap = |inner: &[u8]| {
        let outer = outer4(
            REMOTE0,
            LOCAL,
            64,
            0,
            &gre(false, None, None, 0x0800, inner),
        );
        ether(P1_MAC, REMOTE0_MAC, 0x0800, &outer)
    };
    // UDP to 10.0.0.1: the control side's, from gt0 by p1.
    let udp = udp4(sender, "10.0.0.1".parse().unwrap(), 64, false, 20);
    receive(&mut w, P1, &wrap(&udp), 0);
    let punted = punts(&mut w);
    assert_eq!(punted.len(), 1);
    let (kind, port, _, frame) = &punted[0];
    assert_eq!((*kind, *port), (fibre_fwd::PuntKind::Local, P1));
    assert_eq!(&frame[..14], &wrap(&udp)[..14]);
    assert_eq!(&frame[14..], &udp[..]);
    let mut links = Vec::new();
    w.receive_burst(P1, &[wrap(&udp)], 1);
    w.drain_punts(|p| links.push(p.link));
    assert_eq!(links, vec![gt0]);
    // A ping of 10.0.0.1: answered back into the tunnel.
    receive(
        &mut w,
        P1,
        &wrap(&ping4(sender, "10.0.0.1".parse().unwrap(), 64)),
        2,
    );
    let back = sent(&mut w, P1);
    assert_eq!(back.len(), 1);
    let reply = &back[0][14 + 24..];
    assert_eq!(&back[0][14 + 16..14 + 20], &REMOTE0.octets());
    assert_eq!(reply[9], 1);
    assert_eq!(&reply[12..20], &[10, 0, 0, 1, 172, 16, 0, 9]);
    assert_eq!(reply[20], 0, "echo reply");
    assert_eq!(w.counters().answered, 1);
}
