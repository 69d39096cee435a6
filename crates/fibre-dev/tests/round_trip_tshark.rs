//! Every flag combination, over IPv4 and IPv6 underlays, carrying IPv4 and
//! IPv6: frames the tunnel sends are decoded by tshark (an independent
//! decoder) field by field, and decapsulated by the far end back to the
//! exact inner packet.

use std::net::IpAddr;
use std::time::Duration;

use fibre_dev::{PacketBatch, PacketBuf, Verdict, WorkerId};
use fibre_net::pcap::{LinkType, PcapWriter};

mod common;
use common::{field, inner_udp, layer, must, temp_pcap, tshark_json, tunnel_pair, TUNNEL};

#[derive(Debug, Clone)]
struct Case {
    tokens: Vec<String>,
    outer: (IpAddr, IpAddr),
    ttl: u8,
    tos: u8,
    key: Option<u32>,
    csum: bool,
    seq: Option<u32>,
    inner: Vec<u8>,
    inner_ttl: u8,
}

const PACKETS_PER_CASE: u32 = 3;

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let mut n = 0u16;
    for outer_v6 in [false, true] {
        // 0: IPv4, 1: IPv6, 2: Ethernet carrying IPv4 (gretap/ip6gretap).
        for payload_kind in 0..3u8 {
            let (inner_v6, tap) = (payload_kind == 1, payload_kind == 2);
            for flags in 0..8u8 {
                n += 1;
                let (local, remote): (IpAddr, IpAddr) = if outer_v6 {
                    (
                        "2001:db8::1".parse().unwrap(),
                        "2001:db8::2".parse().unwrap(),
                    )
                } else {
                    ("192.0.2.1".parse().unwrap(), "192.0.2.2".parse().unwrap())
                };
                let kind = match (outer_v6, tap) {
                    (false, false) => "gre",
                    (true, false) => "ip6gre",
                    (false, true) => "gretap",
                    (true, true) => "ip6gretap",
                };
                let key = (flags & 1 != 0).then_some(0xa000_0000 | u32::from(n));
                let csum = flags & 2 != 0;
                let seq = flags & 4 != 0;
                let mut tokens: Vec<String> = [
                    "t0",
                    "type",
                    kind,
                    "remote",
                    &remote.to_string(),
                    "local",
                    &local.to_string(),
                ]
                .iter()
                .map(|s| s.to_string())
                .collect();
                // Alternate fixed and inherited TTL, fixed TOS.
                let inner_ttl = 40 + n as u8;
                let ttl = if n.is_multiple_of(2) {
                    tokens.extend(["ttl".into(), "33".into()]);
                    33
                } else if outer_v6 || tap {
                    // ip6gre's default, and what a tap's "inherit" falls back to.
                    64
                } else {
                    inner_ttl
                };
                tokens.extend(["tos".into(), "b8".into()]);
                if let Some(k) = key {
                    tokens.extend(["key".into(), k.to_string()]);
                }
                if csum {
                    tokens.push("csum".into());
                }
                if seq {
                    tokens.push("seq".into());
                }
                let (isrc, idst): (IpAddr, IpAddr) = if inner_v6 {
                    (
                        format!("2001:db8:1::{n}").parse().unwrap(),
                        format!("2001:db8:2::{n}").parse().unwrap(),
                    )
                } else {
                    (
                        format!("10.1.0.{n}").parse().unwrap(),
                        format!("10.2.0.{n}").parse().unwrap(),
                    )
                };
                let payload: Vec<u8> = (0..(7 + n)).map(|i| i as u8 ^ 0x5a).collect();
                out.push(Case {
                    tokens,
                    outer: (local, remote),
                    ttl,
                    tos: 0xb8,
                    key,
                    csum,
                    seq: seq.then_some(0),
                    inner: {
                        let ip =
                            inner_udp(isrc, idst, (1000 + n, 2000 + n), &payload, inner_ttl, 0);
                        if tap {
                            let mut frame = vec![
                                0x02, 0, 0, 0, 0xaa, 0x02, 0x02, 0, 0, 0, 0xaa, 0x01, 0x08, 0x00,
                            ];
                            frame.extend_from_slice(&ip);
                            frame
                        } else {
                            ip
                        }
                    },
                    inner_ttl,
                });
            }
        }
    }
    out
}

/// Sends a case's packets; returns the frames as they left the tunnel.
fn send(case: &Case) -> (Vec<Vec<u8>>, fibre_dev::gre::GreTunnel) {
    let tokens: Vec<&str> = case.tokens.iter().map(String::as_str).collect();
    let (registry, receiver) = tunnel_pair(&tokens, 1500);
    let mut batch = PacketBatch::with_capacity(PACKETS_PER_CASE as usize);
    for _ in 0..PACKETS_PER_CASE {
        let mut p = PacketBuf::new(64, 2048);
        p.load(&case.inner).unwrap();
        batch.push(p);
    }
    let report = registry.transmit(TUNNEL, WorkerId::new(1), &mut batch);
    assert_eq!(report.sent, PACKETS_PER_CASE as usize, "{:?}", case.tokens);
    let frames = batch.packets().iter().map(|p| p.data().to_vec()).collect();
    (frames, receiver)
}

#[test]
fn far_end_recovers_every_inner_packet() {
    for case in cases() {
        let (frames, receiver) = send(&case);
        let mut batch = PacketBatch::with_capacity(frames.len());
        for f in &frames {
            let mut p = PacketBuf::new(0, 2048);
            p.load(f).unwrap();
            batch.push(p);
        }
        assert_eq!(
            receiver.receive(WorkerId::new(0), &mut batch),
            frames.len(),
            "{:?}",
            case.tokens
        );
        for p in batch.packets() {
            assert_eq!(p.verdict(), Verdict::Pending);
            assert_eq!(p.data(), &case.inner[..], "{:?}", case.tokens);
        }
        let stats = receiver.stats().snapshot();
        assert_eq!(stats.rx_packets, u64::from(PACKETS_PER_CASE));
        assert_eq!(
            stats.rx_bytes,
            u64::from(PACKETS_PER_CASE) * case.inner.len() as u64
        );
        // With iseq, replaying the same frames is out of order now.
        if case.seq.is_some() {
            for (p, f) in batch.packets_mut().iter_mut().zip(&frames) {
                p.load(f).unwrap();
            }
            assert_eq!(receiver.receive(WorkerId::new(0), &mut batch), 0);
            let stats = receiver.stats().snapshot();
            assert_eq!(
                stats.drops(fibre_dev::DropReason::OutOfOrder),
                u64::from(PACKETS_PER_CASE)
            );
        }
    }
}

#[test]
fn tshark_decodes_every_field_as_sent() {
    let cases = cases();
    let path = temp_pcap("round-trip");
    let mut writer = PcapWriter::new(std::fs::File::create(&path).unwrap(), LinkType::Raw).unwrap();
    let mut expected = Vec::new();
    for case in &cases {
        let (frames, _) = send(case);
        for (i, f) in frames.iter().enumerate() {
            writer
                .write_packet(Duration::from_secs(1_700_000_000), f)
                .unwrap();
            expected.push((case.clone(), i as u32));
        }
    }
    // Controls: a GRE checksum and an inner UDP checksum broken on
    // purpose, so a decoder that never says "bad" fails this test.
    let csum_case = cases
        .iter()
        .find(|c| c.csum && c.outer.0.is_ipv4())
        .unwrap();
    let (mut bad_gre, _) = send(csum_case);
    let last = bad_gre[0].len() - 1;
    bad_gre[0][last] ^= 1;
    writer
        .write_packet(Duration::from_secs(1_700_000_001), &bad_gre[0])
        .unwrap();
    let plain_case = cases
        .iter()
        .find(|c| !c.csum && c.outer.0.is_ipv4() && c.inner[0] >> 4 == 4)
        .unwrap();
    let (mut bad_udp, _) = send(plain_case);
    let udp_checksum_at = bad_udp[0].len() - plain_case.inner.len() + 20 + 6;
    bad_udp[0][udp_checksum_at] ^= 1;
    writer
        .write_packet(Duration::from_secs(1_700_000_002), &bad_udp[0])
        .unwrap();
    drop(writer.into_inner());
    let Some(mut decoded) = tshark_json(&path) else {
        std::fs::remove_file(&path).ok();
        return;
    };
    assert_eq!(decoded.len(), expected.len() + 2);
    let bad_udp_frame = decoded.pop().unwrap();
    let bad_gre_frame = decoded.pop().unwrap();
    // tshark's checksum status: 0 bad, 1 good, 2 unverified.
    assert_eq!(
        must(layer(&bad_gre_frame, "gre")[0], "gre.checksum.status"),
        "0"
    );
    assert_eq!(
        must(layer(&bad_udp_frame, "udp")[0], "udp.checksum.status"),
        "0"
    );
    for (frame, (case, i)) in decoded.iter().zip(&expected) {
        let ctx = format!("{:?} packet {i}", case.tokens);
        let (local, remote) = case.outer;
        // Outer header.
        if local.is_ipv4() {
            let ip = layer(frame, "ip")[0];
            assert_eq!(must(ip, "ip.src"), local.to_string(), "{ctx}");
            assert_eq!(must(ip, "ip.dst"), remote.to_string(), "{ctx}");
            assert_eq!(must(ip, "ip.proto"), "47", "{ctx}");
            assert_eq!(must(ip, "ip.ttl"), case.ttl.to_string(), "{ctx}");
            assert_eq!(
                must(ip, "ip.dsfield"),
                format!("0x{:02x}", case.tos),
                "{ctx}"
            );
            assert_eq!(must(ip, "ip.flags.df"), "1", "{ctx}");
            assert_eq!(
                must(ip, "ip.checksum.status"),
                "1",
                "{ctx}: outer IPv4 checksum"
            );
            assert_eq!(
                must(ip, "ip.len"),
                (20 + gre_len(case) + case.inner.len()).to_string(),
                "{ctx}"
            );
        } else {
            let ip = layer(frame, "ipv6")[0];
            assert_eq!(must(ip, "ipv6.src"), local.to_string(), "{ctx}");
            assert_eq!(must(ip, "ipv6.dst"), remote.to_string(), "{ctx}");
            assert_eq!(must(ip, "ipv6.nxt"), "47", "{ctx}");
            assert_eq!(must(ip, "ipv6.hlim"), case.ttl.to_string(), "{ctx}");
            assert_eq!(
                must(ip, "ipv6.tclass"),
                format!("0x{:08x}", case.tos),
                "{ctx}"
            );
            assert_eq!(
                must(ip, "ipv6.plen"),
                (gre_len(case) + case.inner.len()).to_string(),
                "{ctx}"
            );
        }
        // GRE.
        let g = layer(frame, "gre")[0];
        let bit = |b: bool| if b { "1" } else { "0" };
        assert_eq!(must(g, "gre.flags.checksum"), bit(case.csum), "{ctx}");
        assert_eq!(must(g, "gre.flags.key"), bit(case.key.is_some()), "{ctx}");
        assert_eq!(
            must(g, "gre.flags.sequence_number"),
            bit(case.seq.is_some()),
            "{ctx}"
        );
        assert_eq!(must(g, "gre.flags.version"), "0", "{ctx}");
        let tap = case.inner[0] == 0x02;
        let inner_v6 = case.inner[0] >> 4 == 6;
        let proto = match (tap, inner_v6) {
            (true, _) => "0x6558",
            (false, true) => "0x86dd",
            (false, false) => "0x0800",
        };
        assert_eq!(must(g, "gre.proto"), proto, "{ctx}");
        if tap {
            let eth = layer(frame, "eth")[0];
            assert_eq!(must(eth, "eth.dst"), "02:00:00:00:aa:02", "{ctx}");
            assert_eq!(must(eth, "eth.src"), "02:00:00:00:aa:01", "{ctx}");
            assert_eq!(must(eth, "eth.type"), "0x0800", "{ctx}");
        }
        assert_eq!(
            field(g, "gre.key").map(str::to_owned),
            case.key.map(|k| format!("0x{k:08x}")),
            "{ctx}"
        );
        assert_eq!(
            field(g, "gre.sequence_number").map(str::to_owned),
            case.seq.map(|s| (s + i).to_string()),
            "{ctx}"
        );
        if case.csum {
            assert_eq!(must(g, "gre.checksum.status"), "1", "{ctx}: GRE checksum");
        }
        // Inner packet and its UDP checksum.
        let inner_ip = if inner_v6 { "ipv6" } else { "ip" };
        let inner_layers = layer(frame, inner_ip);
        let inner = inner_layers.last().unwrap();
        let ttl_field = if inner_v6 { "ipv6.hlim" } else { "ip.ttl" };
        assert_eq!(must(inner, ttl_field), case.inner_ttl.to_string(), "{ctx}");
        let u = layer(frame, "udp")[0];
        assert_eq!(
            must(u, "udp.length"),
            (case.inner.len() - if inner_v6 { 40 } else { 20 } - if tap { 14 } else { 0 })
                .to_string(),
            "{ctx}"
        );
        assert_eq!(
            must(u, "udp.checksum.status"),
            "1",
            "{ctx}: inner UDP checksum"
        );
    }
    std::fs::remove_file(&path).ok();
}

fn gre_len(case: &Case) -> usize {
    4 + 4 * usize::from(case.csum)
        + 4 * usize::from(case.key.is_some())
        + 4 * usize::from(case.seq.is_some())
}
