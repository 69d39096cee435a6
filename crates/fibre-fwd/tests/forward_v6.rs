//! IPv6 through the worker, each expectation built by hand from
//! `ip6_rcv_core`, `ip6_forward` and `ip6_pkt_drop`.

mod common;

use std::net::Ipv6Addr;

use common::*;
use fibre_base::DropReason;
use fibre_fwd::PuntKind;

const HOST6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 1, 0, 0, 0, 0, 7);
const BEYOND6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0x100, 0, 0, 0, 0, 1);

/// `ip6_forward`: hop limit one less, the next hop's MAC, nothing else.
#[test]
fn a_good_packet_is_forwarded_with_hop_limit_less_one() {
    let mut w = worker();
    let packet = udp6(SENDER6, HOST6, 64, 100);
    receive(&mut w, P0, &frame6(&packet), 0);
    let out = sent(&mut w, P1);
    assert_eq!(out.len(), 1);
    assert_eq!(&out[0][..12], &[HOST_MAC, P1_MAC].concat()[..]);
    let mut expected = packet.clone();
    expected[7] = 63;
    assert_eq!(&out[0][14..], &expected[..]);
    // Through the gateway.
    receive(&mut w, P0, &frame6(&udp6(SENDER6, BEYOND6, 2, 0)), 0);
    let out = sent(&mut w, P1);
    assert_eq!((&out[0][..6], out[0][14 + 7]), (&GATEWAY_MAC[..], 1));
}

/// Hop limit 1: time exceeded (`ICMPV6_EXC_HOPLIMIT`), quoting the packet.
#[test]
fn hop_limit_one_is_answered_with_time_exceeded() {
    let mut w = worker();
    let packet = udp6(SENDER6, HOST6, 1, 20);
    receive(&mut w, P0, &frame6(&packet), 1_000_000_000);
    assert!(sent(&mut w, P1).is_empty());
    let back = sent(&mut w, P0);
    assert_eq!(back.len(), 1);
    assert_eq!(&back[0][..6], &SENDER_MAC);
    let (kind, code, _, quote) = icmp6(&back[0]);
    assert_eq!((kind, code), (3, 0));
    assert_eq!(quote, packet);
    assert_eq!(w.counters().drops(DropReason::TtlExceeded), 1);
}

/// `ip6_pkt_discard` answers unreachable routes and misses with no route
/// (code 0), `ip6_pkt_prohibit` with administratively prohibited (1); a
/// blackhole says nothing.
#[test]
fn each_route_type_gets_its_icmpv6_error() {
    let cases = [
        ("2001:db8:200::1", Some(0), DropReason::Unreachable),
        ("2001:db8:300::1", Some(1), DropReason::Prohibited),
        ("2001:db8:400::1", None, DropReason::InvalidRoute),
        ("2001:db8:999::1", Some(0), DropReason::Unreachable),
    ];
    for (dst, code, reason) in cases {
        let mut w = worker();
        let packet = udp6(SENDER6, dst.parse().unwrap(), 64, 20);
        receive(&mut w, P0, &frame6(&packet), 1_000_000_000);
        let back = sent(&mut w, P0);
        match code {
            Some(code) => {
                assert_eq!(back.len(), 1, "{dst}");
                let (kind, got, _, quote) = icmp6(&back[0]);
                assert_eq!((kind, got), (1, code), "{dst}");
                assert_eq!(quote, packet);
            }
            None => assert!(back.is_empty(), "{dst}"),
        }
        assert_eq!(w.counters().drops(reason), 1, "{dst}");
    }
}

/// Larger than the next hop's MTU (1400): packet too big with that MTU.
#[test]
fn too_big_is_answered_with_packet_too_big() {
    let mut w = worker();
    let packet = udp6(SENDER6, HOST6, 64, 1400 - 48 + 1);
    receive(&mut w, P0, &frame6(&packet), 1_000_000_000);
    assert!(sent(&mut w, P1).is_empty());
    let back = sent(&mut w, P0);
    assert_eq!(back.len(), 1);
    let (kind, code, mtu, _) = icmp6(&back[0]);
    assert_eq!((kind, code, u32::from_be_bytes(mtu)), (2, 0, 1400));
    assert_eq!(w.counters().drops(DropReason::TooBig), 1);
}

/// A route's `mtu`, locked or not, holds forwarded packets.
/// Kernel-checked (veth namespaces): 1348-byte packets by routes with
/// `mtu 1300` and `mtu lock 1300` both get packet too big with 1300.
#[test]
fn a_route_mtu_holds_forwarded_packets_locked_or_not() {
    let mut w = worker();
    for dst in ["2001:db8:100:1::9", "2001:db8:100:2::9"] {
        let packet = udp6(SENDER6, dst.parse().unwrap(), 64, 1300);
        receive(&mut w, P0, &frame6(&packet), 1_000_000_000);
        assert!(sent(&mut w, P1).is_empty(), "{dst}");
        let back = sent(&mut w, P0);
        assert_eq!(back.len(), 1, "{dst}");
        let (kind, _, mtu, _) = icmp6(&back[0]);
        assert_eq!((kind, u32::from_be_bytes(mtu)), (2, 1300), "{dst}");
    }
    // Within it, forwarded.
    receive(
        &mut w,
        P0,
        &frame6(&udp6(
            SENDER6,
            "2001:db8:100:1::9".parse().unwrap(),
            64,
            1252,
        )),
        0,
    );
    assert_eq!(sent(&mut w, P1).len(), 1);
}

/// `ip6_forward`: a link-local source may not leave its link: "beyond
/// scope of source address" (`ICMPV6_NOT_NEIGHBOUR`), counted as an
/// address error. Kernel-checked (veth namespaces, `nstat`): one
/// `Ip6InAddrErrors` and one `Icmp6OutDestUnreachs`, nothing forwarded.
#[test]
fn a_link_local_source_is_not_forwarded() {
    let mut w = worker();
    let source: Ipv6Addr = "fe80::9".parse().unwrap();
    w.neighbours_mut().insert(2, source.into(), SENDER_MAC);
    let packet = udp6(source, HOST6, 64, 20);
    receive(&mut w, P0, &frame6(&packet), 1_000_000_000);
    assert!(sent(&mut w, P1).is_empty());
    assert_eq!(w.counters().drops(DropReason::AddressError), 1);
    let back = sent(&mut w, P0);
    assert_eq!(back.len(), 1, "{:?}", w.counters());
    let (kind, code, _, quote) = icmp6(&back[0]);
    assert_eq!((kind, code), (1, 2));
    assert_eq!(quote, packet);
}

/// A link-local destination reached from its own link goes back out of
/// it: the route is the link's own, and `ip6_forward`'s source checks
/// apply only to packets that leave by another link. Kernel-checked
/// (`nstat`: `Ip6OutForwDatagrams` one more; the kernel also sends a
/// redirect, which the worker does not).
#[test]
fn a_link_local_destination_on_its_own_link_is_forwarded_back() {
    let mut w = worker();
    let target: Ipv6Addr = "fe80::7".parse().unwrap();
    w.neighbours_mut().insert(2, target.into(), NEIGHBOUR_MAC);
    receive(&mut w, P0, &frame6(&udp6(SENDER6, target, 64, 20)), 0);
    let out = sent(&mut w, P0);
    assert_eq!(out.len(), 1, "{:?}", w.counters());
    assert_eq!((&out[0][..6], out[0][14 + 7]), (&NEIGHBOUR_MAC[..], 63));
}

/// `ip6_rcv_core`: version, loopback, multicast and v4-mapped sources,
/// truncation, each with its reason.
#[test]
fn malformed_and_martian_headers_are_dropped() {
    let good = udp6(SENDER6, HOST6, 64, 20);
    let mut version = good.clone();
    version[0] = 0x40;
    let mut long = good.clone();
    long[4..6].copy_from_slice(&200u16.to_be_bytes());
    let with_src = |src: &str| udp6(src.parse().unwrap(), HOST6, 64, 20);
    let cases = [
        (version, DropReason::UnknownProtocol),
        (long, DropReason::Truncated),
        (good[..39].to_vec(), DropReason::BadIpHeader),
        (with_src("::1"), DropReason::MartianAddress),
        (with_src("ff02::1"), DropReason::MartianAddress),
        (with_src("::ffff:10.0.0.9"), DropReason::MartianAddress),
        (
            udp6(SENDER6, "ff01::1".parse().unwrap(), 64, 20),
            DropReason::MartianAddress,
        ),
    ];
    for (packet, reason) in cases {
        let mut w = worker();
        receive(&mut w, P0, &frame6(&packet), 0);
        assert_eq!(w.counters().drops(reason), 1, "{reason:?}");
        assert_eq!(w.counters().total_drops(), 1);
    }
}

/// Neighbour discovery goes to the control side.
#[test]
fn neighbour_solicitations_are_punted() {
    let mut w = worker();
    let mut ns = udp6(SENDER6, "ff02::1:ff00:1".parse().unwrap(), 255, 24);
    ns[6] = 58;
    ns[40] = 135;
    let f = frame([0x33, 0x33, 0xff, 0, 0, 1], 0x86dd, &ns);
    receive(&mut w, P0, &f, 0);
    let p = punts(&mut w);
    assert_eq!(p.len(), 1, "{:?}", w.counters());
    assert_eq!((p[0].0, p[0].1), (PuntKind::Neighbour, P0));
}

/// An echo request to the router is answered from the address pinged.
#[test]
fn a_ping_to_the_router_is_answered() {
    let mut w = worker();
    let mut ping = udp6(SENDER6, "2001:db8::1".parse().unwrap(), 64, 8);
    ping[6] = 58;
    ping[40..48].copy_from_slice(&[128, 0, 0, 0, 0, 7, 0, 1]);
    let mut pseudo = Vec::new();
    pseudo.extend_from_slice(&ping[8..40]);
    pseudo.extend_from_slice(&16u32.to_be_bytes());
    pseudo.extend_from_slice(&[0, 0, 0, 58]);
    pseudo.extend_from_slice(&ping[40..]);
    let sum = fibre_net::checksum::checksum(&pseudo);
    ping[42..44].copy_from_slice(&sum.to_be_bytes());
    receive(&mut w, P0, &frame6(&ping), 0);
    let back = sent(&mut w, P0);
    assert_eq!(back.len(), 1, "{:?}", w.counters());
    let (kind, _, rest, _) = icmp6(&back[0]);
    assert_eq!((kind, rest), (129, [0, 7, 0, 1]));
    assert_eq!(w.counters().answered, 1);
}

/// A miss on the next hop's neighbour waits for the control side.
#[test]
fn a_neighbour_miss_is_punted() {
    let mut w = worker();
    receive(
        &mut w,
        P0,
        &frame6(&udp6(SENDER6, "2001:db8:1::99".parse().unwrap(), 64, 20)),
        0,
    );
    let p = punts(&mut w);
    assert_eq!(p.len(), 1);
    assert_eq!(
        (p[0].0, p[0].2),
        (
            PuntKind::Unresolved,
            Some("2001:db8:1::99".parse().unwrap())
        )
    );
}

/// The errors come from the address on the sender's side, for packet too
/// big as for time exceeded, even where the output link's address would
/// win the source selection for the output device. Kernel-checked (6.x,
/// veth namespaces): sender fd00::9, router fd00::1 on its side and
/// 2001:db8:1::1 towards the destination: `ping -t 1` and `ping -s 1400
/// -M do` both get their error from fd00::1.
#[test]
fn errors_come_from_the_senders_side() {
    let config_text = "link add p0 type ifb\nlink set p0 up\nlink set p0 mtu 9000\n\
        addr add fd00::1/64 dev p0\nlink add p1 type ifb\nlink set p1 up\n\
        link set p1 mtu 1400\naddr add 2001:db8:1::1/64 dev p1\n";
    let (fib, _) =
        fibre_fib::config::apply_str(&fibre_fib::Fib::new(), "ula.conf", config_text, false)
            .unwrap();
    let sender: Ipv6Addr = "fd00::9".parse().unwrap();
    let mut n = neighbours();
    n.insert(2, sender.into(), SENDER_MAC);
    let mut w = fibre_fwd::Worker::new(fib, n, &ports(), config());
    for packet in [udp6(sender, HOST6, 1, 20), udp6(sender, HOST6, 64, 1400)] {
        receive(&mut w, P0, &frame6(&packet), 1_000_000_000);
        let back = sent(&mut w, P0);
        assert_eq!(back.len(), 1, "{:?}", w.counters());
        assert_eq!(
            fibre_fwd_test_src6(&back[0]),
            "fd00::1".parse::<Ipv6Addr>().unwrap(),
            "hop limit {}",
            packet[7]
        );
    }
}

fn fibre_fwd_test_src6(frame: &[u8]) -> Ipv6Addr {
    let mut a = [0u8; 16];
    a.copy_from_slice(&frame[14 + 8..14 + 24]);
    Ipv6Addr::from(a)
}
