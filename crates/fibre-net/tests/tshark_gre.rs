//! GRE frames built by fibre-net, decoded by an independent implementation
//! (Wireshark's `tshark`), field by field.
//!
//! Every combination of outer family (IPv4, IPv6), inner family and GRE
//! flags (C, K, S) is written to a LINKTYPE_RAW pcap, plus frames with a
//! corrupted GRE checksum and a corrupted inner UDP checksum; a second,
//! Ethernet-linktype pcap carries transparent Ethernet bridging (0x6558).
//! tshark must see exactly the fields we meant, and our own parser must
//! agree with it on every frame, including which checksums are bad.
//!
//! Without tshark on the PATH the test says so and passes (CI installs it:
//! `apt-get install tshark`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use fibre_net::ethernet::{self, EtherType};
use fibre_net::ip::{Protocol, PseudoHeader};
use fibre_net::pcap::{LinkType, PcapWriter};
use fibre_net::{gre, ipv4, ipv6, udp, Error};
use serde_json::Value;

mod common;
use common::{field, ip_layers, layer, must, temp_pcap, tshark_json};

/// What one frame was built from, and so what a decoder must report.
#[derive(Debug, Clone)]
struct Expected {
    outer: (IpAddr, IpAddr),
    gre: gre::Repr,
    inner: (IpAddr, IpAddr),
    ports: (u16, u16),
    payload: Vec<u8>,
    /// Flip one payload byte after the GRE checksum was computed.
    corrupt_gre: bool,
    /// Flip the inner UDP checksum (and refill the GRE checksum over it).
    corrupt_udp: bool,
}

fn v4(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(192, 0, 2, last))
}

fn v6(last: u16) -> IpAddr {
    IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, last))
}

fn pseudo(src: IpAddr, dst: IpAddr) -> PseudoHeader {
    match (src, dst) {
        (IpAddr::V4(src), IpAddr::V4(dst)) => PseudoHeader::V4 { src, dst },
        (IpAddr::V6(src), IpAddr::V6(dst)) => PseudoHeader::V6 { src, dst },
        _ => panic!("mixed families in one header"),
    }
}

/// Writes an IP header for `(src, dst)` in front of `payload_len` bytes
/// already at `buf[header_len..]`; returns the header length.
fn emit_ip(buf: &mut [u8], (src, dst): (IpAddr, IpAddr), protocol: Protocol, payload_len: usize) {
    match (src, dst) {
        (IpAddr::V4(src_addr), IpAddr::V4(dst_addr)) => ipv4::Repr {
            src_addr,
            dst_addr,
            protocol,
            payload_len,
            ttl: 64,
            tos: 0,
            ident: 0x4242,
            dont_frag: true,
            more_frags: false,
            frag_offset: 0,
            options: &[],
        }
        .emit(buf)
        .unwrap(),
        (IpAddr::V6(src_addr), IpAddr::V6(dst_addr)) => ipv6::Repr {
            src_addr,
            dst_addr,
            next_header: protocol,
            payload_len,
            hop_limit: 64,
            traffic_class: 0,
            flow_label: 0,
        }
        .emit(buf)
        .unwrap(),
        _ => panic!("mixed families in one header"),
    }
}

fn ip_header_len(addr: IpAddr) -> usize {
    match addr {
        IpAddr::V4(_) => ipv4::MIN_HEADER_LEN,
        IpAddr::V6(_) => ipv6::HEADER_LEN,
    }
}

/// Inner IP/UDP packet, GRE in front of it, outer IP in front of that.
fn build(e: &Expected) -> Vec<u8> {
    let inner_ip_len = ip_header_len(e.inner.0);
    let udp_len = udp::HEADER_LEN + e.payload.len();
    let inner_len = inner_ip_len + udp_len;
    let outer_len = ip_header_len(e.outer.0);
    let gre_len = e.gre.header_len();
    let mut buf = vec![0u8; outer_len + gre_len + inner_len];
    let inner_at = outer_len + gre_len;
    let udp_at = inner_at + inner_ip_len;
    buf[udp_at + udp::HEADER_LEN..].copy_from_slice(&e.payload);
    udp::Repr {
        src_port: e.ports.0,
        dst_port: e.ports.1,
        payload_len: e.payload.len(),
    }
    .emit(&mut buf[udp_at..], &pseudo(e.inner.0, e.inner.1))
    .unwrap();
    if e.corrupt_udp {
        buf[udp_at + 7] ^= 0x01;
    }
    emit_ip(&mut buf[inner_at..], e.inner, Protocol::Udp, udp_len);
    let protocol = e.gre.protocol;
    let inner_protocol = if inner_ip_len == ipv4::MIN_HEADER_LEN {
        EtherType::Ipv4
    } else {
        EtherType::Ipv6
    };
    assert_eq!(protocol, inner_protocol, "test frames carry bare IP");
    e.gre.emit(&mut buf[outer_len..]).unwrap();
    if e.corrupt_gre {
        let last = buf.len() - 1;
        buf[last] ^= 0x01;
    }
    emit_ip(&mut buf, e.outer, Protocol::Gre, gre_len + inner_len);
    buf
}

fn cases() -> Vec<Expected> {
    let mut cases = Vec::new();
    let mut n: u16 = 0;
    for outer_v6 in [false, true] {
        for inner_v6 in [false, true] {
            for flags in 0..8u8 {
                n += 1;
                let outer = if outer_v6 {
                    (v6(1), v6(2))
                } else {
                    (v4(1), v4(2))
                };
                let inner = if inner_v6 {
                    (v6(0x100 + n), v6(0x200 + n))
                } else {
                    (
                        IpAddr::V4(Ipv4Addr::new(10, 0, n as u8, 1)),
                        IpAddr::V4(Ipv4Addr::new(10, 1, n as u8, 2)),
                    )
                };
                cases.push(Expected {
                    outer,
                    gre: gre::Repr {
                        csum: flags & 1 != 0,
                        key: (flags & 2 != 0).then_some(0xfe00_0000 | u32::from(n)),
                        seq: (flags & 4 != 0).then_some(u32::from(n) * 1000),
                        protocol: if inner_v6 {
                            EtherType::Ipv6
                        } else {
                            EtherType::Ipv4
                        },
                    },
                    inner,
                    ports: (10_000 + n, 20_000 + n),
                    // Odd lengths exercise the checksums' padding.
                    payload: (0..(5 + n)).map(|i| i as u8).collect(),
                    corrupt_gre: false,
                    corrupt_udp: false,
                });
            }
        }
    }
    // Corrupted checksums, one frame per outer family.
    for base in [cases[7].clone(), cases[31].clone()] {
        cases.push(Expected {
            corrupt_gre: true,
            ..base.clone()
        });
        cases.push(Expected {
            corrupt_udp: true,
            ..base
        });
    }
    cases
}

/// What our own parser makes of a frame: the GRE repr (or error) and, if
/// GRE parsed, the inner UDP repr (or error).
fn our_decode(frame: &[u8]) -> (Result<gre::Repr, Error>, Option<Result<udp::Repr, Error>>) {
    let gre_bytes = match frame[0] >> 4 {
        4 => {
            let p = ipv4::Packet::new_checked(frame).unwrap();
            ipv4::Repr::parse(&p).unwrap();
            p.payload().to_vec()
        }
        _ => ipv6::Packet::new_checked(frame).unwrap().payload().to_vec(),
    };
    let g = gre::Packet::new_checked(&gre_bytes[..]).unwrap();
    let repr = match gre::Repr::parse(&g) {
        Ok(r) => r,
        Err(e) => return (Err(e), None),
    };
    let inner = g.payload();
    let (ph, udp_bytes) = match repr.protocol {
        EtherType::Ipv4 => {
            let p = ipv4::Packet::new_checked(inner).unwrap();
            ipv4::Repr::parse(&p).unwrap();
            (
                PseudoHeader::V4 {
                    src: p.src_addr(),
                    dst: p.dst_addr(),
                },
                p.payload().to_vec(),
            )
        }
        _ => {
            let p = ipv6::Packet::new_checked(inner).unwrap();
            (
                PseudoHeader::V6 {
                    src: p.src_addr(),
                    dst: p.dst_addr(),
                },
                p.payload().to_vec(),
            )
        }
    };
    let u = udp::Packet::new_checked(&udp_bytes[..]).unwrap();
    (Ok(repr), Some(udp::Repr::parse(&u, &ph)))
}

fn bit(b: bool) -> &'static str {
    if b {
        "1"
    } else {
        "0"
    }
}

fn check_frame(i: usize, e: &Expected, bytes: &[u8], decoded: &Value) {
    let ctx = format!("frame {} {e:?}", i + 1);
    let g = layer(decoded, "gre");
    assert_eq!(g.len(), 1, "{ctx}");
    let g = g[0];
    assert_eq!(must(g, "gre.flags.checksum"), bit(e.gre.csum), "{ctx}");
    assert_eq!(must(g, "gre.flags.key"), bit(e.gre.key.is_some()), "{ctx}");
    assert_eq!(
        must(g, "gre.flags.sequence_number"),
        bit(e.gre.seq.is_some()),
        "{ctx}"
    );
    assert_eq!(must(g, "gre.flags.routing"), "0", "{ctx}");
    assert_eq!(must(g, "gre.flags.version"), "0", "{ctx}");
    let proto: u16 = e.gre.protocol.into();
    assert_eq!(must(g, "gre.proto"), format!("0x{proto:04x}"), "{ctx}");
    assert_eq!(
        field(g, "gre.key").map(str::to_owned),
        e.gre.key.map(|k| format!("0x{k:08x}")),
        "{ctx}"
    );
    assert_eq!(
        field(g, "gre.sequence_number").map(str::to_owned),
        e.gre.seq.map(|s| s.to_string()),
        "{ctx}"
    );
    let (ours_gre, ours_udp) = our_decode(bytes);
    if e.gre.csum {
        let status = must(g, "gre.checksum.status");
        // Wireshark: 0 bad, 1 good.
        assert_eq!(status, if e.corrupt_gre { "0" } else { "1" }, "{ctx}");
        let gre_at = ip_header_len(e.outer.0);
        let wire = u16::from_be_bytes([bytes[gre_at + 4], bytes[gre_at + 5]]);
        assert_eq!(must(g, "gre.checksum"), format!("0x{wire:04x}"), "{ctx}");
    }
    if e.corrupt_gre {
        assert_eq!(ours_gre, Err(Error::BadChecksum), "{ctx}");
        return;
    }
    assert_eq!(ours_gre, Ok(e.gre), "{ctx}");

    assert_eq!(ip_layers(decoded), vec![e.outer, e.inner], "{ctx}");
    let u = layer(decoded, "udp");
    assert_eq!(u.len(), 1, "{ctx}");
    let u = u[0];
    assert_eq!(must(u, "udp.srcport"), e.ports.0.to_string(), "{ctx}");
    assert_eq!(must(u, "udp.dstport"), e.ports.1.to_string(), "{ctx}");
    assert_eq!(
        must(u, "udp.length"),
        (udp::HEADER_LEN + e.payload.len()).to_string(),
        "{ctx}"
    );
    let status = must(u, "udp.checksum.status");
    assert_eq!(status, if e.corrupt_udp { "0" } else { "1" }, "{ctx}");
    let expect_udp = if e.corrupt_udp {
        Err(Error::BadChecksum)
    } else {
        Ok(udp::Repr {
            src_port: e.ports.0,
            dst_port: e.ports.1,
            payload_len: e.payload.len(),
        })
    };
    assert_eq!(ours_udp, Some(expect_udp), "{ctx}");
    let payload_hex: Vec<String> = e.payload.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(must(u, "udp.payload"), payload_hex.join(":"), "{ctx}");
}

#[test]
fn tshark_decodes_every_gre_combination_as_built() {
    let cases = cases();
    let frames: Vec<Vec<u8>> = cases.iter().map(build).collect();
    let path = temp_pcap("gre-raw");
    let file = std::fs::File::create(&path).unwrap();
    let mut w = PcapWriter::new(std::io::BufWriter::new(file), LinkType::Raw).unwrap();
    for (i, f) in frames.iter().enumerate() {
        w.write_packet(Duration::from_millis(i as u64), f).unwrap();
    }
    drop(w.into_inner());
    let Some(decoded) = tshark_json(&path) else {
        std::fs::remove_file(&path).unwrap();
        return;
    };
    assert_eq!(decoded.len(), cases.len());
    for (i, ((e, bytes), d)) in cases.iter().zip(&frames).zip(&decoded).enumerate() {
        check_frame(i, e, bytes, d);
    }
    std::fs::remove_file(&path).unwrap();
    eprintln!(
        "tshark agreed on {} GRE frames ({} with corrupted checksums)",
        cases.len(),
        cases
            .iter()
            .filter(|c| c.corrupt_gre || c.corrupt_udp)
            .count()
    );
}

#[test]
fn tshark_decodes_transparent_ethernet_over_gre() {
    // Ethernet / IPv4 / GRE(key, 0x6558) / Ethernet / IPv4 / UDP.
    let outer_mac = ethernet::Repr {
        dst_addr: ethernet::Address([0x02, 0, 0, 0, 0, 2]),
        src_addr: ethernet::Address([0x02, 0, 0, 0, 0, 1]),
        ethertype: EtherType::Ipv4,
    };
    let inner_mac = ethernet::Repr {
        dst_addr: ethernet::Address([0x02, 0xaa, 0, 0, 0, 2]),
        src_addr: ethernet::Address([0x02, 0xaa, 0, 0, 0, 1]),
        ethertype: EtherType::Ipv4,
    };
    let gre_repr = gre::Repr {
        csum: true,
        key: Some(77),
        seq: Some(5),
        protocol: EtherType::TransparentEthernet,
    };
    let inner_ips = (v4(10), v4(11));
    let payload = b"bridged";
    let udp_len = udp::HEADER_LEN + payload.len();
    let inner_frame_len = ethernet::HEADER_LEN + ipv4::MIN_HEADER_LEN + udp_len;
    let gre_at = ethernet::HEADER_LEN + ipv4::MIN_HEADER_LEN;
    let inner_at = gre_at + gre_repr.header_len();
    let mut buf = vec![0u8; inner_at + inner_frame_len];
    let udp_at = inner_at + ethernet::HEADER_LEN + ipv4::MIN_HEADER_LEN;
    buf[udp_at + udp::HEADER_LEN..].copy_from_slice(payload);
    udp::Repr {
        src_port: 4789,
        dst_port: 4790,
        payload_len: payload.len(),
    }
    .emit(&mut buf[udp_at..], &pseudo(inner_ips.0, inner_ips.1))
    .unwrap();
    emit_ip(
        &mut buf[inner_at + ethernet::HEADER_LEN..],
        inner_ips,
        Protocol::Udp,
        udp_len,
    );
    inner_mac.emit(&mut buf[inner_at..]).unwrap();
    gre_repr.emit(&mut buf[gre_at..]).unwrap();
    emit_ip(
        &mut buf[ethernet::HEADER_LEN..],
        (v4(1), v4(2)),
        Protocol::Gre,
        gre_repr.header_len() + inner_frame_len,
    );
    outer_mac.emit(&mut buf).unwrap();

    let path = temp_pcap("gre-eth");
    let mut w = PcapWriter::new(Vec::new(), LinkType::Ethernet).unwrap();
    w.write_packet(Duration::ZERO, &buf).unwrap();
    std::fs::write(&path, w.into_inner()).unwrap();
    let Some(decoded) = tshark_json(&path) else {
        std::fs::remove_file(&path).unwrap();
        return;
    };
    assert_eq!(decoded.len(), 1);
    let d = &decoded[0];
    let eth = layer(d, "eth");
    assert_eq!(eth.len(), 2, "outer and bridged Ethernet headers");
    assert_eq!(must(eth[0], "eth.src"), "02:00:00:00:00:01");
    assert_eq!(must(eth[1], "eth.dst"), "02:aa:00:00:00:02");
    let g = layer(d, "gre")[0];
    assert_eq!(must(g, "gre.proto"), "0x6558");
    assert_eq!(must(g, "gre.key"), "0x0000004d");
    assert_eq!(must(g, "gre.sequence_number"), "5");
    assert_eq!(must(g, "gre.checksum.status"), "1");
    assert_eq!(ip_layers(d), vec![(v4(1), v4(2)), inner_ips]);
    assert_eq!(must(layer(d, "udp")[0], "udp.checksum.status"), "1");

    // Our parser reads the same frame the same way.
    let frame = ethernet::Frame::new_checked(&buf[..]).unwrap();
    let ip = ipv4::Packet::new_checked(frame.payload()).unwrap();
    let g = gre::Packet::new_checked(ip.payload()).unwrap();
    assert_eq!(gre::Repr::parse(&g).unwrap(), gre_repr);
    let inner = ethernet::Frame::new_checked(g.payload()).unwrap();
    assert_eq!(ethernet::Repr::parse(&inner).unwrap(), inner_mac);
    std::fs::remove_file(&path).unwrap();
}
