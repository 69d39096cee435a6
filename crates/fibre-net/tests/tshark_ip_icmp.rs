//! IPv4 (options, fragments, a forwarded TTL), ICMPv4 and ICMPv6 messages,
//! and an Ethernet/ARP frame,
//! built by fibre-net, decoded by tshark, field by field; one corrupted
//! ICMP checksum per family must be flagged by both decoders.
//!
//! Without tshark on the PATH the test says so and passes.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use fibre_net::ip::{Protocol, PseudoHeader};
use fibre_net::pcap::{LinkType, PcapWriter};
use fibre_net::{icmpv4, icmpv6, ipv4, ipv6, udp, Error};
use serde_json::Value;

mod common;
use common::{ip_layers, layer, must, temp_pcap, tshark_json};

const A4: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 1);
const B4: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 9);
const A6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0xfe);
const B6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 9);
const ROUTER_ALERT: [u8; 4] = [0x94, 0x04, 0x00, 0x00];

fn v4_packet(protocol: Protocol, options: &[u8], frag: (bool, usize), upper: &[u8]) -> Vec<u8> {
    let repr = ipv4::Repr {
        src_addr: A4,
        dst_addr: B4,
        protocol,
        payload_len: upper.len(),
        ttl: 64,
        tos: 0,
        ident: 0x0101,
        dont_frag: !frag.0 && frag.1 == 0,
        more_frags: frag.0,
        frag_offset: frag.1,
        options,
    };
    let mut buf = vec![0u8; repr.header_len()];
    buf.extend_from_slice(upper);
    repr.emit(&mut buf).unwrap();
    buf
}

fn v6_packet(protocol: Protocol, upper: &[u8]) -> Vec<u8> {
    let repr = ipv6::Repr {
        src_addr: A6,
        dst_addr: B6,
        next_header: protocol,
        payload_len: upper.len(),
        hop_limit: 64,
        traffic_class: 0,
        flow_label: 0,
    };
    let mut buf = vec![0u8; ipv6::HEADER_LEN];
    buf.extend_from_slice(upper);
    repr.emit(&mut buf).unwrap();
    buf
}

/// An IPv4/UDP or IPv6/UDP packet, as an ICMP error would quote it.
fn quoted(v6: bool) -> Vec<u8> {
    let mut datagram = vec![0u8; udp::HEADER_LEN + 8];
    let (pseudo, src, dst) = if v6 {
        let (s, d) = (B6, Ipv6Addr::new(0x2001, 0xdb8, 1, 0, 0, 0, 0, 5));
        (
            PseudoHeader::V6 { src: s, dst: d },
            IpAddr::V6(s),
            IpAddr::V6(d),
        )
    } else {
        let (s, d) = (B4, Ipv4Addr::new(203, 0, 113, 5));
        (
            PseudoHeader::V4 { src: s, dst: d },
            IpAddr::V4(s),
            IpAddr::V4(d),
        )
    };
    udp::Repr {
        src_port: 33434,
        dst_port: 33435,
        payload_len: 8,
    }
    .emit(&mut datagram, &pseudo)
    .unwrap();
    match (src, dst) {
        (IpAddr::V4(src_addr), IpAddr::V4(dst_addr)) => {
            let repr = ipv4::Repr {
                src_addr,
                dst_addr,
                protocol: Protocol::Udp,
                payload_len: datagram.len(),
                ttl: 1,
                tos: 0,
                ident: 5,
                dont_frag: true,
                more_frags: false,
                frag_offset: 0,
                options: &[],
            };
            let mut buf = vec![0u8; 20];
            buf.extend_from_slice(&datagram);
            repr.emit(&mut buf).unwrap();
            buf
        }
        (IpAddr::V6(src_addr), IpAddr::V6(dst_addr)) => {
            let repr = ipv6::Repr {
                src_addr,
                dst_addr,
                next_header: Protocol::Udp,
                payload_len: datagram.len(),
                hop_limit: 1,
                traffic_class: 0,
                flow_label: 0,
            };
            let mut buf = vec![0u8; 40];
            buf.extend_from_slice(&datagram);
            repr.emit(&mut buf).unwrap();
            buf
        }
        _ => unreachable!("one family per header"),
    }
}

fn icmp4(repr: icmpv4::Repr<'_>) -> Vec<u8> {
    let mut buf = vec![0u8; repr.buffer_len()];
    repr.emit(&mut buf).unwrap();
    buf
}

fn icmp6(repr: icmpv6::Repr<'_>) -> Vec<u8> {
    let mut buf = vec![0u8; repr.buffer_len()];
    repr.emit(&mut buf, A6, B6).unwrap();
    buf
}

/// A frame and the `(layer, field, value)` triples tshark must show.
struct Case {
    frame: Vec<u8>,
    expect: Vec<(&'static str, &'static str, String)>,
}

fn case(frame: Vec<u8>, expect: &[(&'static str, &'static str, &str)]) -> Case {
    Case {
        frame,
        expect: expect
            .iter()
            .map(|(l, f, v)| (*l, *f, v.to_string()))
            .collect(),
    }
}

fn cases() -> Vec<Case> {
    let q4 = quoted(false);
    let q6 = quoted(true);
    let mut cases = Vec::new();

    // Fragmentation needed, with a Router Alert option, then forwarded once.
    let mut frag_needed = v4_packet(
        Protocol::Icmp,
        &ROUTER_ALERT,
        (false, 0),
        &icmp4(icmpv4::Repr::DstUnreachable {
            reason: icmpv4::DstUnreachable::FragRequired,
            next_hop_mtu: 1400,
            data: &q4[..28],
        }),
    );
    let ttl = ipv4::Packet::new_checked(&mut frag_needed[..])
        .unwrap()
        .decrement_ttl();
    assert_eq!(ttl, Some(63));
    cases.push(case(
        frag_needed,
        &[
            ("ip", "ip.hdr_len", "24"),
            ("ip", "ip.ttl", "63"),
            ("ip", "ip.checksum.status", "1"),
            ("ip", "ip.flags.df", "1"),
            ("icmp", "icmp.type", "3"),
            ("icmp", "icmp.code", "4"),
            ("icmp", "icmp.mtu", "1400"),
            ("icmp", "icmp.checksum.status", "1"),
        ],
    ));
    cases.push(case(
        v4_packet(
            Protocol::Icmp,
            &[],
            (false, 0),
            &icmp4(icmpv4::Repr::EchoRequest {
                ident: 0x1234,
                seq_no: 7,
                data: b"abcdefgh",
            }),
        ),
        &[
            ("icmp", "icmp.type", "8"),
            ("icmp", "icmp.ident", "4660"),
            ("icmp", "icmp.seq", "7"),
            ("icmp", "icmp.checksum.status", "1"),
        ],
    ));
    cases.push(case(
        v4_packet(
            Protocol::Icmp,
            &[],
            (false, 0),
            &icmp4(icmpv4::Repr::TimeExceeded {
                reason: icmpv4::TimeExceeded::TtlExpired,
                data: &q4[..28],
            }),
        ),
        &[
            ("icmp", "icmp.type", "11"),
            ("icmp", "icmp.code", "0"),
            ("icmp", "icmp.checksum.status", "1"),
        ],
    ));
    cases.push(case(
        v4_packet(Protocol::Udp, &[], (true, 185 * 8), &[0x41; 16]),
        &[
            ("ip", "ip.flags.mf", "1"),
            ("ip", "ip.flags.df", "0"),
            ("ip", "ip.len", "36"),
            ("ip", "ip.checksum.status", "1"),
        ],
    ));
    cases.push(case(
        v6_packet(
            Protocol::Icmpv6,
            &icmp6(icmpv6::Repr::PacketTooBig {
                mtu: 1280,
                data: &q6[..48],
            }),
        ),
        &[
            ("icmpv6", "icmpv6.type", "2"),
            ("icmpv6", "icmpv6.mtu", "1280"),
            ("icmpv6", "icmpv6.checksum.status", "1"),
        ],
    ));
    cases.push(case(
        v6_packet(
            Protocol::Icmpv6,
            &icmp6(icmpv6::Repr::EchoReply {
                ident: 5,
                seq_no: 6,
                data: b"abc",
            }),
        ),
        &[
            ("icmpv6", "icmpv6.type", "129"),
            ("icmpv6", "icmpv6.echo.identifier", "0x0005"),
            ("icmpv6", "icmpv6.echo.sequence_number", "6"),
            ("icmpv6", "icmpv6.checksum.status", "1"),
        ],
    ));
    cases.push(case(
        v6_packet(
            Protocol::Icmpv6,
            &icmp6(icmpv6::Repr::DstUnreachable {
                reason: icmpv6::DstUnreachable::PortUnreachable,
                data: &q6[..48],
            }),
        ),
        &[
            ("icmpv6", "icmpv6.type", "1"),
            ("icmpv6", "icmpv6.code", "4"),
            ("icmpv6", "icmpv6.checksum.status", "1"),
        ],
    ));
    cases.push(case(
        v6_packet(
            Protocol::Icmpv6,
            &icmp6(icmpv6::Repr::TimeExceeded {
                reason: icmpv6::TimeExceeded::HopLimitExceeded,
                data: &q6[..48],
            }),
        ),
        &[
            ("icmpv6", "icmpv6.type", "3"),
            ("icmpv6", "icmpv6.code", "0"),
            ("icmpv6", "icmpv6.checksum.status", "1"),
        ],
    ));
    // Corrupt the last byte of an ICMP and an ICMPv6 echo.
    for (at, status_field) in [
        (1usize, "icmp.checksum.status"),
        (5, "icmpv6.checksum.status"),
    ] {
        let mut frame = cases[at].frame.clone();
        let last = frame.len() - 1;
        frame[last] ^= 0x20;
        let layer_name = if at == 1 { "icmp" } else { "icmpv6" };
        cases.push(case(frame, &[(layer_name, status_field, "0")]));
    }
    cases
}

/// Our own reading of a frame's ICMP checksum: Ok, or the error.
fn our_icmp(frame: &[u8]) -> Option<Result<(), Error>> {
    match frame[0] >> 4 {
        4 => {
            let ip = ipv4::Packet::new_checked(frame).unwrap();
            ipv4::Repr::parse(&ip).unwrap();
            if ip.protocol() != Protocol::Icmp {
                return None;
            }
            let p = icmpv4::Packet::new_checked(ip.payload()).unwrap();
            Some(icmpv4::Repr::parse(&p).map(|_| ()))
        }
        _ => {
            let ip = ipv6::Packet::new_checked(frame).unwrap();
            let p = icmpv6::Packet::new_checked(ip.payload()).unwrap();
            Some(icmpv6::Repr::parse(&p, ip.src_addr(), ip.dst_addr()).map(|_| ()))
        }
    }
}

fn first<'a>(frame: &'a Value, name: &str) -> &'a Value {
    layer(frame, name)
        .first()
        .copied()
        .unwrap_or_else(|| panic!("tshark shows no {name} layer"))
}

#[test]
fn tshark_decodes_ip_and_icmp_as_built() {
    let cases = cases();
    let path = temp_pcap("ip-icmp");
    let mut w = PcapWriter::new(Vec::new(), LinkType::Raw).unwrap();
    for (i, c) in cases.iter().enumerate() {
        w.write_packet(Duration::from_secs(i as u64), &c.frame)
            .unwrap();
    }
    std::fs::write(&path, w.into_inner()).unwrap();
    let Some(decoded) = tshark_json(&path) else {
        std::fs::remove_file(&path).unwrap();
        return;
    };
    assert_eq!(decoded.len(), cases.len());
    for (i, (c, d)) in cases.iter().zip(&decoded).enumerate() {
        for (layer_name, key, value) in &c.expect {
            assert_eq!(
                must(first(d, layer_name), key),
                value,
                "frame {}: {layer_name} {key}",
                i + 1
            );
        }
        // The outer addresses, whatever tshark decodes inside the quote.
        let outer = ip_layers(d)[0];
        let expect_outer = if c.frame[0] >> 4 == 4 {
            (IpAddr::V4(A4), IpAddr::V4(B4))
        } else {
            (IpAddr::V6(A6), IpAddr::V6(B6))
        };
        assert_eq!(outer, expect_outer, "frame {}", i + 1);
        // Our parser agrees with tshark on every ICMP checksum.
        if let Some(ours) = our_icmp(&c.frame) {
            let status = c
                .expect
                .iter()
                .find(|(_, k, _)| k.ends_with("checksum.status") && k.starts_with("icmp"))
                .map(|(_, _, v)| v.as_str());
            match status {
                Some("0") => assert_eq!(ours, Err(Error::BadChecksum), "frame {}", i + 1),
                _ => assert_eq!(ours, Ok(()), "frame {}", i + 1),
            }
        }
    }
    // The fragment: tshark 4.0 shows the offset in 8-byte units, newer
    // versions may show bytes; accept either, nothing else.
    let frag = first(&decoded[3], "ip");
    let offset = must(frag, "ip.frag_offset");
    assert!(
        offset == "185" || offset == "1480",
        "fragment offset {offset}"
    );
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn tshark_decodes_arp_as_built() {
    use fibre_net::{arp, ethernet};
    let mac = |last| ethernet::Address([0x02, 0, 0, 0, 0, last]);
    let mut frame = vec![0u8; ethernet::HEADER_LEN + arp::ETHERNET_IPV4_LEN];
    ethernet::Repr {
        dst_addr: ethernet::Address::BROADCAST,
        src_addr: mac(1),
        ethertype: ethernet::EtherType::Arp,
    }
    .emit(&mut frame)
    .unwrap();
    arp::Repr {
        operation: arp::Operation::Reply,
        source_hardware_addr: mac(1),
        source_protocol_addr: Ipv4Addr::new(192, 0, 2, 2),
        target_hardware_addr: mac(9),
        target_protocol_addr: Ipv4Addr::new(192, 0, 2, 1),
    }
    .emit(&mut frame[ethernet::HEADER_LEN..])
    .unwrap();
    let path = temp_pcap("arp");
    let mut w = PcapWriter::new(Vec::new(), LinkType::Ethernet).unwrap();
    w.write_packet(Duration::ZERO, &frame).unwrap();
    std::fs::write(&path, w.into_inner()).unwrap();
    let Some(decoded) = tshark_json(&path) else {
        std::fs::remove_file(&path).unwrap();
        return;
    };
    let eth = first(&decoded[0], "eth");
    assert_eq!(must(eth, "eth.dst"), "ff:ff:ff:ff:ff:ff");
    assert_eq!(must(eth, "eth.type"), "0x0806");
    let a = first(&decoded[0], "arp");
    for (key, value) in [
        ("arp.hw.type", "1"),
        ("arp.proto.type", "0x0800"),
        ("arp.opcode", "2"),
        ("arp.src.hw_mac", "02:00:00:00:00:01"),
        ("arp.src.proto_ipv4", "192.0.2.2"),
        ("arp.dst.hw_mac", "02:00:00:00:00:09"),
        ("arp.dst.proto_ipv4", "192.0.2.1"),
    ] {
        assert_eq!(must(a, key), value, "{key}");
    }
    std::fs::remove_file(&path).unwrap();
}
