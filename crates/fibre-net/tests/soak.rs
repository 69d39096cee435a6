//! Millions of mutated packets through the decoders, without a fuzzer.
//!
//! Runs exactly the harness of the cargo-fuzz targets
//! (`fuzz/harness.rs`), which needs nightly; this test needs nothing. Seeds
//! are well-formed frames built with our own `emit` (every GRE flag
//! combination over IPv4 and IPv6, UDP, ICMP, ICMPv6); each input is a seed
//! with random bit flips, byte overwrites, truncation or extension, or
//! pure random bytes. The harness decodes each input as it is and with its
//! checksums repaired, so mutations reach the layers behind checksums.
//!
//! `FIBRE_NET_SOAK_INPUTS` sets the number of inputs (default 300 000 per
//! target, a few seconds); run millions with
//! `FIBRE_NET_SOAK_INPUTS=5000000 cargo test --release -p fibre-net --test soak`.

#[path = "../fuzz/harness.rs"]
mod harness;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use fibre_net::ethernet::EtherType;
use fibre_net::ip::{Protocol, PseudoHeader};
use fibre_net::{gre, icmpv4, icmpv6, ipv4, ipv6, udp};

use fibre_testkit::SplitMix64 as Rng;

fn ip_packet(src: IpAddr, dst: IpAddr, protocol: Protocol, upper: &[u8]) -> Vec<u8> {
    match (src, dst) {
        (IpAddr::V4(src_addr), IpAddr::V4(dst_addr)) => {
            let repr = ipv4::Repr {
                src_addr,
                dst_addr,
                protocol,
                payload_len: upper.len(),
                ttl: 9,
                tos: 0,
                ident: 7,
                dont_frag: false,
                more_frags: false,
                frag_offset: 0,
                options: &[0x94, 0x04, 0, 0],
            };
            let mut buf = vec![0u8; repr.header_len()];
            buf.extend_from_slice(upper);
            repr.emit(&mut buf).unwrap();
            buf
        }
        (IpAddr::V6(src_addr), IpAddr::V6(dst_addr)) => {
            let repr = ipv6::Repr {
                src_addr,
                dst_addr,
                next_header: protocol,
                payload_len: upper.len(),
                hop_limit: 9,
                traffic_class: 0,
                flow_label: 1,
            };
            let mut buf = vec![0u8; ipv6::HEADER_LEN];
            buf.extend_from_slice(upper);
            repr.emit(&mut buf).unwrap();
            buf
        }
        _ => unreachable!("one family per header"),
    }
}

fn udp_packet(src: IpAddr, dst: IpAddr) -> Vec<u8> {
    let pseudo = match (src, dst) {
        (IpAddr::V4(src), IpAddr::V4(dst)) => PseudoHeader::V4 { src, dst },
        (IpAddr::V6(src), IpAddr::V6(dst)) => PseudoHeader::V6 { src, dst },
        _ => unreachable!("one family per header"),
    };
    let mut datagram = vec![0u8; udp::HEADER_LEN];
    datagram.extend_from_slice(b"soak payload");
    udp::Repr {
        src_port: 5,
        dst_port: 6,
        payload_len: 12,
    }
    .emit(&mut datagram, &pseudo)
    .unwrap();
    ip_packet(src, dst, Protocol::Udp, &datagram)
}

fn seeds() -> Vec<Vec<u8>> {
    let a4 = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));
    let b4 = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 2));
    let a6 = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1));
    let b6 = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2));
    let mut seeds = vec![udp_packet(a4, b4), udp_packet(a6, b6)];

    let quote4 = udp_packet(a4, b4);
    let mut icmp = vec![0u8; 8 + 28];
    icmpv4::Repr::DstUnreachable {
        reason: icmpv4::DstUnreachable::FragRequired,
        next_hop_mtu: 1400,
        data: &quote4[..28],
    }
    .emit(&mut icmp)
    .unwrap();
    seeds.push(ip_packet(b4, a4, Protocol::Icmp, &icmp));

    let (IpAddr::V6(s6), IpAddr::V6(d6)) = (b6, a6) else {
        unreachable!()
    };
    let quote6 = udp_packet(a6, b6);
    let mut icmp6 = vec![0u8; 8 + 48];
    icmpv6::Repr::PacketTooBig {
        mtu: 1280,
        data: &quote6[..48],
    }
    .emit(&mut icmp6, s6, d6)
    .unwrap();
    seeds.push(ip_packet(b6, a6, Protocol::Icmpv6, &icmp6));

    for (outer, inner) in [((a4, b4), (a6, b6)), ((a6, b6), (a4, b4))] {
        for flags in 0..8u8 {
            let tunnelled = udp_packet(inner.0, inner.1);
            let repr = gre::Repr {
                csum: flags & 1 != 0,
                key: (flags & 2 != 0).then_some(42),
                seq: (flags & 4 != 0).then_some(43),
                protocol: if inner.0.is_ipv4() {
                    EtherType::Ipv4
                } else {
                    EtherType::Ipv6
                },
            };
            let mut g = vec![0u8; repr.header_len()];
            g.extend_from_slice(&tunnelled);
            repr.emit(&mut g).unwrap();
            seeds.push(ip_packet(outer.0, outer.1, Protocol::Gre, &g));
        }
    }
    seeds
}

fn mutate(rng: &mut Rng, seed: &[u8], out: &mut Vec<u8>) {
    out.clear();
    if rng.below(16) == 0 {
        let len = rng.below(128);
        out.extend((0..len).map(|_| rng.next() as u8));
        return;
    }
    out.extend_from_slice(seed);
    for _ in 0..=rng.below(4) {
        match rng.below(5) {
            0 | 1 if !out.is_empty() => {
                let at = rng.below(out.len());
                out[at] ^= 1 << rng.below(8);
            }
            2 if !out.is_empty() => {
                let at = rng.below(out.len());
                out[at] = rng.next() as u8;
            }
            3 => {
                let len = rng.below(out.len() + 1);
                out.truncate(len);
            }
            _ => out.extend((0..rng.below(16)).map(|_| rng.next() as u8)),
        }
    }
}

fn inputs() -> usize {
    std::env::var("FIBRE_NET_SOAK_INPUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300_000)
}

/// Where GRE starts in an IP seed (the harness's GRE entry point expects
/// the outer IP payload).
fn gre_part(packet: &[u8]) -> Option<&[u8]> {
    match packet[0] >> 4 {
        4 => {
            let p = ipv4::Packet::new_checked(packet).ok()?;
            (p.protocol() == Protocol::Gre).then(|| &packet[p.header_len()..])
        }
        _ => {
            let p = ipv6::Packet::new_checked(packet).ok()?;
            (p.next_header() == Protocol::Gre).then(|| &packet[ipv6::HEADER_LEN..])
        }
    }
}

#[test]
fn seeds_decode_cleanly() {
    // The seeds themselves are valid: the harness decodes them fully.
    for seed in seeds() {
        let packet_ok = match seed[0] >> 4 {
            4 => ipv4::Repr::parse(&ipv4::Packet::new_checked(&seed[..]).unwrap()).is_ok(),
            _ => ipv6::Packet::new_checked(&seed[..]).is_ok(),
        };
        assert!(packet_ok);
        let bits = harness::ip(&seed);
        assert_ne!(
            bits & harness::reached::IPV4 | bits & harness::reached::IPV6,
            0
        );
        assert!(
            bits & (harness::reached::UDP | harness::reached::ICMPV4 | harness::reached::ICMPV6)
                != 0,
            "seed {seed:02x?} reached only {bits:#b}"
        );
    }
}

/// How many inputs reached each layer (indexed by bit of `harness::reached`).
fn tally(counts: &mut [usize; 8], bits: u32) {
    for (bit, count) in counts.iter_mut().enumerate() {
        *count += usize::from(bits & (1 << bit) != 0);
    }
}

const LAYERS: [&str; 8] = [
    "ipv4",
    "ipv6",
    "udp",
    "icmpv4",
    "icmpv6",
    "gre",
    "gre+csum",
    "tunnelled ip",
];

/// Fails unless every named layer was reached by at least 1% of the
/// inputs: a soak that stops at the first checksum would test nothing.
fn assert_depth(name: &str, n: usize, counts: &[usize; 8], required: &[u32]) {
    let report: Vec<String> = LAYERS
        .iter()
        .zip(counts)
        .map(|(layer, c)| format!("{layer} {c}"))
        .collect();
    eprintln!(
        "{name} harness: {n} mutated inputs, no panic; parsed: {}",
        report.join(", ")
    );
    for &bit in required {
        let count = counts[bit.trailing_zeros() as usize];
        assert!(
            count * 100 >= n,
            "{name}: only {count} of {n} inputs reached {}",
            LAYERS[bit.trailing_zeros() as usize]
        );
    }
}

#[test]
fn ip_decoders_survive_mutated_inputs() {
    let seeds = seeds();
    let mut rng = Rng(0x5eed_0001);
    let mut buf = Vec::new();
    let n = inputs();
    let mut counts = [0usize; 8];
    for _ in 0..n {
        let seed = &seeds[rng.below(seeds.len())];
        mutate(&mut rng, seed, &mut buf);
        tally(&mut counts, harness::ip(&buf));
    }
    use harness::reached::*;
    assert_depth(
        "ip",
        n,
        &counts,
        &[IPV4, IPV6, UDP, ICMPV4, ICMPV6, GRE, GRE_CSUM, TUNNELLED],
    );
}

#[test]
fn gre_decoder_survives_mutated_inputs() {
    let seeds: Vec<Vec<u8>> = seeds()
        .iter()
        .filter_map(|s| gre_part(s).map(<[u8]>::to_vec))
        .collect();
    assert_eq!(seeds.len(), 16);
    let mut rng = Rng(0x5eed_0002);
    let mut buf = Vec::new();
    let n = inputs();
    let mut counts = [0usize; 8];
    for _ in 0..n {
        let seed = &seeds[rng.below(seeds.len())];
        mutate(&mut rng, seed, &mut buf);
        tally(&mut counts, harness::gre(&buf));
    }
    use harness::reached::*;
    assert_depth("gre", n, &counts, &[GRE, GRE_CSUM, TUNNELLED, UDP]);
}
