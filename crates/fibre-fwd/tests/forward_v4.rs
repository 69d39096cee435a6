//! IPv4 through the worker, packet by packet, each expectation built by
//! hand from the kernel's code path (cited per test).

mod common;

use std::net::Ipv4Addr;

use common::*;
use fibre_base::DropReason;
use fibre_fib::RpFilter;
use fibre_fwd::{PortConfig, PuntKind, Worker, WorkerConfig};
use fibre_net::checksum;

const HOST: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 7);
const BEYOND: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 50);

/// `ip_forward`: TTL one less (`ip_decrease_ttl`, the checksum patched),
/// the frame from p1's MAC to the next hop's, the rest untouched.
#[test]
fn a_good_packet_is_forwarded_with_ttl_less_one() {
    let mut w = worker();
    let packet = udp4(SENDER, HOST, 64, false, 100);
    receive(&mut w, P0, &frame4(&packet), 0);
    let out = sent(&mut w, P1);
    assert_eq!(out.len(), 1);
    let f = &out[0];
    assert_eq!(&f[..6], &HOST_MAC);
    assert_eq!(&f[6..12], &P1_MAC);
    assert_eq!(&f[12..14], &[0x08, 0x00]);
    let mut expected = packet.clone();
    expected[8] = 63;
    expected[10..12].fill(0);
    let sum = checksum::checksum(&expected[..20]);
    expected[10..12].copy_from_slice(&sum.to_be_bytes());
    assert_eq!(&f[14..], &expected[..]);
    assert_eq!(w.counters().forwarded, 1);
    assert_eq!(w.counters().total_drops(), 0);
    assert!(sent(&mut w, P0).is_empty());
}

/// Through a gateway: the next hop is the gateway, not the destination.
#[test]
fn a_routed_packet_goes_to_the_gateways_mac() {
    let mut w = worker();
    receive(&mut w, P0, &frame4(&udp4(SENDER, BEYOND, 9, false, 10)), 0);
    let out = sent(&mut w, P1);
    assert_eq!(out.len(), 1);
    assert_eq!(&out[0][..6], &GATEWAY_MAC);
    assert_eq!(out[0][14 + 8], 8);
}

/// Ethernet padding after the total length is not forwarded
/// (`ip_rcv_core`'s `pskb_trim_rcsum`).
#[test]
fn padding_is_trimmed() {
    let mut w = worker();
    let packet = udp4(SENDER, HOST, 64, false, 0);
    let mut f = frame4(&packet);
    f.resize(60, 0xee);
    receive(&mut w, P0, &f, 0);
    let out = sent(&mut w, P1);
    assert_eq!(out[0].len(), 14 + packet.len());
}

/// `ip_forward`'s `too_many_hops`: TTL 1 (and 0) earns time exceeded,
/// quoting the packet as received, from the input link's address.
#[test]
fn ttl_one_is_answered_with_time_exceeded() {
    for ttl in [0u8, 1] {
        let mut w = worker();
        let packet = udp4(SENDER, HOST, ttl, false, 20);
        receive(&mut w, P0, &frame4(&packet), 1_000_000_000);
        assert!(sent(&mut w, P1).is_empty());
        let back = sent(&mut w, P0);
        assert_eq!(back.len(), 1, "TTL {ttl}");
        let f = &back[0];
        assert_eq!((&f[..6], &f[6..12]), (&SENDER_MAC[..], &P0_MAC[..]));
        let (kind, code, _, quote) = icmp4(f);
        assert_eq!((kind, code), (11, 0));
        assert_eq!(quote, packet);
        assert_eq!(ipv4_src(f), Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(ipv4_dst(f), SENDER);
        assert_eq!(w.counters().drops(DropReason::TtlExceeded), 1);
        assert_eq!(w.counters().icmp_errors, 1);
    }
}

/// `ip_error`: unreachable is host unreachable, prohibit is
/// administratively prohibited (`ICMP_PKT_FILTERED`), no route is net
/// unreachable, a blackhole says nothing.
#[test]
fn each_route_type_gets_its_icmp_error() {
    let cases = [
        ("198.51.100.1", Some(1), DropReason::Unreachable),
        ("203.0.113.1", Some(13), DropReason::Prohibited),
        ("198.18.0.1", None, DropReason::InvalidRoute),
        ("8.8.8.8", Some(0), DropReason::Unreachable),
    ];
    for (dst, code, reason) in cases {
        let mut w = worker();
        let packet = udp4(SENDER, dst.parse().unwrap(), 64, false, 20);
        receive(&mut w, P0, &frame4(&packet), 1_000_000_000);
        let back = sent(&mut w, P0);
        match code {
            Some(code) => {
                assert_eq!(back.len(), 1, "{dst}");
                let (kind, got, _, quote) = icmp4(&back[0]);
                assert_eq!((kind, got), (3, code), "{dst}");
                assert_eq!(quote, packet);
            }
            None => assert!(back.is_empty(), "{dst}: a blackhole is silent"),
        }
        assert_eq!(w.counters().drops(reason), 1, "{dst}");
        assert!(sent(&mut w, P1).is_empty());
    }
}

/// `ip_forward`: DF set and larger than the next hop's MTU (p1: 1400):
/// fragmentation needed carrying that MTU, nothing forwarded.
#[test]
fn df_and_too_big_is_refused_with_the_next_hop_mtu() {
    let mut w = worker();
    let packet = udp4(SENDER, HOST, 64, true, 1400 - 28 + 1);
    receive(&mut w, P0, &frame4(&packet), 1_000_000_000);
    assert!(sent(&mut w, P1).is_empty());
    let back = sent(&mut w, P0);
    assert_eq!(back.len(), 1);
    let (kind, code, rest, quote) = icmp4(&back[0]);
    assert_eq!((kind, code), (3, 4));
    assert_eq!(u16::from_be_bytes([rest[2], rest[3]]), 1400);
    assert_eq!(quote[..], packet[..quote.len()]);
    assert_eq!(w.counters().drops(DropReason::TooBig), 1);
    // Exactly the MTU passes.
    let fits = udp4(SENDER, HOST, 64, true, 1400 - 28);
    receive(&mut w, P0, &frame4(&fits), 1_000_000_000);
    assert_eq!(sent(&mut w, P1).len(), 1);
}

/// `ip_dst_mtu_maybe_forward(dst, true)`: a route's `mtu` metric, locked
/// or not, comes before the device's MTU. Kernel-checked (veth
/// namespaces): a 1350-byte DF packet by a route with `mtu 1300` gets
/// "frag needed" with 1300.
#[test]
fn a_routes_mtu_metric_is_the_next_hops_mtu() {
    let mut w = worker();
    let packet = udp4(
        SENDER,
        "192.0.2.200".parse().unwrap(),
        64,
        true,
        1300 - 28 + 1,
    );
    receive(&mut w, P0, &frame4(&packet), 1_000_000_000);
    let back = sent(&mut w, P0);
    assert_eq!(back.len(), 1);
    let (kind, code, rest, _) = icmp4(&back[0]);
    assert_eq!(
        (kind, code, u16::from_be_bytes([rest[2], rest[3]])),
        (3, 4, 1300)
    );
    // The same size by a route without the metric passes (p1: 1400).
    let packet = udp4(SENDER, BEYOND, 64, true, 1300 - 28 + 1);
    receive(&mut w, P0, &frame4(&packet), 1_000_000_000);
    assert_eq!(sent(&mut w, P1).len(), 1);
}

/// `ip_fragment` (DF clear): fragments of at most the MTU, each with the
/// decremented TTL, that reassemble to the forwarded packet.
#[test]
fn df_clear_and_too_big_is_fragmented() {
    let mut w = worker();
    let packet = udp4(SENDER, HOST, 64, false, 3000);
    receive(&mut w, P0, &frame4(&packet), 0);
    let out = sent(&mut w, P1);
    assert_eq!(
        out.len(),
        3,
        "3028 bytes in 1400: 1376 + 1376 + 276 payload"
    );
    let mut payload = Vec::new();
    for (i, f) in out.iter().enumerate() {
        assert_eq!(&f[..6], &HOST_MAC);
        let ip = &f[14..];
        assert!(ip.len() <= 1400);
        assert_eq!(checksum::checksum(&ip[..20]), 0);
        assert_eq!(ip[8], 63, "TTL");
        assert_eq!(&ip[4..6], &[0x12, 0x34], "ID");
        let flags = u16::from_be_bytes([ip[6], ip[7]]);
        assert_eq!(usize::from(flags & 0x1fff) * 8, payload.len());
        assert_eq!(flags & 0x2000 != 0, i < 2, "MF on all but the last");
        payload.extend_from_slice(&ip[20..]);
    }
    assert_eq!(payload, packet[20..]);
    assert_eq!(w.counters().forwarded, 1);
    assert_eq!(w.counters().fragments, 3);
}

/// `ip_rcv_core`'s checks, each its own reason; none answers.
#[test]
fn malformed_headers_are_dropped_with_their_reasons() {
    let good = udp4(SENDER, HOST, 64, false, 20);
    let reseal = |mut p: Vec<u8>| {
        p[10..12].fill(0);
        let hl = (usize::from(p[0] & 0x0f) * 4).clamp(20, p.len());
        let sum = checksum::checksum(&p[..hl]);
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        p
    };
    let mut bad_checksum = good.clone();
    bad_checksum[10] ^= 0xff;
    let mut version = good.clone();
    version[0] = 0x55;
    let mut ihl = good.clone();
    ihl[0] = 0x44;
    let mut long = good.clone();
    long[2..4].copy_from_slice(&100u16.to_be_bytes());
    let mut short = good.clone();
    short[2..4].copy_from_slice(&19u16.to_be_bytes());
    let cases = [
        (bad_checksum, DropReason::BadChecksum),
        (reseal(version), DropReason::BadIpHeader),
        (reseal(ihl), DropReason::BadIpHeader),
        (reseal(long), DropReason::Truncated),
        (reseal(short), DropReason::BadIpHeader),
        (good[..19].to_vec(), DropReason::BadIpHeader),
    ];
    for (packet, reason) in cases {
        let mut w = worker();
        receive(&mut w, P0, &frame4(&packet), 0);
        assert_eq!(w.counters().drops(reason), 1, "{reason:?}");
        assert_eq!(w.counters().total_drops(), 1);
        assert!(sent(&mut w, P0).is_empty() && sent(&mut w, P1).is_empty());
    }
    // A frame too short for its Ethernet header.
    let mut w = worker();
    receive(&mut w, P0, &[0u8; 13], 0);
    assert_eq!(w.counters().drops(DropReason::Truncated), 1);
}

/// `eth_type_trans` marks a frame for another MAC `PACKET_OTHERHOST`,
/// which `ip_rcv_core` drops; an unknown EtherType has no handler.
#[test]
fn frames_not_for_us_and_unknown_ethertypes_are_dropped() {
    let mut w = worker();
    let packet = udp4(SENDER, HOST, 64, false, 20);
    receive(
        &mut w,
        P0,
        &frame([2, 0, 0, 0, 0, 0x55], 0x0800, &packet),
        0,
    );
    assert_eq!(w.counters().drops(DropReason::OtherHost), 1);
    receive(&mut w, P0, &frame(P0_MAC, 0x88cc, &packet), 0);
    assert_eq!(w.counters().drops(DropReason::UnknownProtocol), 1);
    // A unicast packet in a broadcast frame is routed but not forwarded
    // (`ip_forward`: `pkt_type != PACKET_HOST`).
    receive(&mut w, P0, &frame([0xff; 6], 0x0800, &packet), 0);
    assert_eq!(w.counters().drops(DropReason::NotUnicastFrame), 1);
    assert!(sent(&mut w, P1).is_empty());
}

/// ARP goes to the control side as received.
#[test]
fn arp_is_punted() {
    let mut w = worker();
    let arp = frame([0xff; 6], 0x0806, &[0u8; 28]);
    receive(&mut w, P0, &arp, 0);
    let p = punts(&mut w);
    assert_eq!(p, vec![(PuntKind::Neighbour, P0, None, arp)]);
    assert_eq!(w.counters().punted_neighbour, 1);
}

/// No neighbour for the next hop: the rewritten packet waits for the
/// control side, with the next hop to resolve (`__neigh_event_send`).
#[test]
fn a_neighbour_miss_is_punted_with_its_next_hop() {
    let mut w = worker();
    let packet = udp4(SENDER, "10.1.0.99".parse().unwrap(), 64, false, 20);
    receive(&mut w, P0, &frame4(&packet), 0);
    assert!(sent(&mut w, P1).is_empty());
    let p = punts(&mut w);
    assert_eq!(p.len(), 1);
    let (kind, port, next_hop, f) = &p[0];
    assert_eq!((*kind, *port), (PuntKind::Unresolved, P1));
    assert_eq!(*next_hop, Some("10.1.0.99".parse().unwrap()));
    assert_eq!(&f[..6], &[0; 6]);
    assert_eq!(&f[6..12], &P1_MAC);
    assert_eq!(f[14 + 8], 63);
    assert_eq!(w.counters().punted_unresolved, 1);
}

/// The unresolved queue is bounded: beyond it packets are dropped and
/// counted (`unres_qlen`).
#[test]
fn the_unresolved_queue_is_bounded() {
    let small = WorkerConfig {
        unresolved_queue_len: 4,
        ..config()
    };
    let mut w = Worker::new(fib(), neighbours(), &ports(), small);
    let frames: Vec<Vec<u8>> = (0..10u8)
        .map(|i| {
            frame4(&udp4(
                SENDER,
                Ipv4Addr::new(10, 1, 0, 100 + i),
                64,
                false,
                20,
            ))
        })
        .collect();
    w.receive_burst(P0, &frames, 0);
    assert_eq!(w.counters().punted_unresolved, 4);
    assert_eq!(w.counters().drops(DropReason::NeighbourQueueFull), 6);
}

/// `icmp_echo`: a ping to the router is answered from the address pinged.
#[test]
fn a_ping_to_the_router_is_answered() {
    let mut w = worker();
    let request = ping4(SENDER, "10.1.0.1".parse().unwrap(), 64);
    receive(&mut w, P0, &frame4(&request), 0);
    let back = sent(&mut w, P0);
    assert_eq!(back.len(), 1);
    let (kind, code, rest, data) = icmp4(&back[0]);
    assert_eq!((kind, code), (0, 0));
    assert_eq!(rest, [0x42, 0x42, 0, 1]);
    assert_eq!(data, request[28..]);
    assert_eq!(ipv4_src(&back[0]), "10.1.0.1".parse::<Ipv4Addr>().unwrap());
    assert_eq!(ipv4_dst(&back[0]), SENDER);
    assert_eq!(w.counters().answered, 1);
}

/// Other packets for the router go to the control side.
#[test]
fn local_packets_other_than_pings_are_punted() {
    let mut w = worker();
    let f = frame4(&udp4(SENDER, "10.0.0.1".parse().unwrap(), 64, false, 20));
    receive(&mut w, P0, &f, 0);
    assert_eq!(punts(&mut w), vec![(PuntKind::Local, P0, None, f)]);
}

/// `__mkroute_input` marks a packet leaving by the link it came in on,
/// from a directly reachable sender, and `ip_forward` sends a host
/// redirect (`ip_rt_send_redirect`) before the packet leaves; its quote
/// has the decremented TTL.
#[test]
fn out_the_way_it_came_earns_a_redirect() {
    let mut w = worker();
    let to = Ipv4Addr::new(10, 0, 0, 7);
    let packet = udp4(SENDER, to, 64, false, 20);
    receive(&mut w, P0, &frame4(&packet), 1_000_000_000);
    let out = sent(&mut w, P0);
    assert_eq!(out.len(), 2, "the redirect, then the packet");
    let (kind, code, gateway, quote) = icmp4(&out[0]);
    assert_eq!((kind, code), (5, 1));
    assert_eq!(gateway, to.octets());
    assert_eq!(quote[8], 63);
    assert_eq!(&out[0][..6], &SENDER_MAC);
    assert_eq!(&out[1][..6], &NEIGHBOUR_MAC);
    assert_eq!(out[1][14 + 8], 63);
    // send_redirects off: forwarded alone.
    let mut quiet = ports();
    quiet[0].send_redirects = false;
    let mut w = Worker::new(fib(), neighbours(), &quiet, config());
    receive(&mut w, P0, &frame4(&packet), 1_000_000_000);
    assert_eq!(sent(&mut w, P0).len(), 1);
}

/// rp_filter 1 (strict): a source whose route back leaves by another link
/// is refused (`__fib_validate_source`'s `e_rpf`); 2 (loose) takes it, but
/// refuses a source with no route back at all (`last_resort`). Kernel-
/// checked (veth namespaces, `ip route get DST from SRC iif r0` for each
/// `rp_filter`): 0 takes both sources, 1 neither, 2 only the routed one.
#[test]
fn rp_filter_strict_and_loose_refuse_as_the_kernel() {
    let routed_elsewhere = udp4("10.1.0.50".parse().unwrap(), BEYOND, 64, false, 20);
    let unrouted = udp4("100.64.0.1".parse().unwrap(), BEYOND, 64, false, 20);
    let cases = [
        (RpFilter::Off, [1, 1]),
        (RpFilter::Strict, [0, 0]),
        (RpFilter::Loose, [1, 0]),
    ];
    for (mode, forwarded) in cases {
        let mut p = ports();
        p[0].rp_filter = mode;
        let mut w = Worker::new(fib(), neighbours(), &p, config());
        for (packet, expected) in [&routed_elsewhere, &unrouted].into_iter().zip(forwarded) {
            receive(&mut w, P0, &frame4(packet), 0);
            assert_eq!(sent(&mut w, P1).len(), expected, "{mode:?}");
        }
        assert_eq!(
            w.counters().drops(DropReason::RpFilter),
            2 - forwarded.iter().sum::<usize>() as u64
        );
    }
}

/// A martian source (one of our own addresses) is dropped silently.
#[test]
fn a_source_of_ours_is_a_martian() {
    let mut w = worker();
    receive(
        &mut w,
        P0,
        &frame4(&udp4("10.1.0.1".parse().unwrap(), HOST, 64, false, 20)),
        0,
    );
    assert_eq!(w.counters().drops(DropReason::InvalidRoute), 1);
    assert!(sent(&mut w, P0).is_empty() && sent(&mut w, P1).is_empty());
}

/// A port whose link is down receives nothing; a port index beyond the
/// ports neither.
#[test]
fn a_down_or_unknown_port_receives_nothing() {
    let (fib, _) =
        fibre_fib::config::apply_str(&fib(), "down.conf", "link set p0 down\n", false).unwrap();
    let mut w = Worker::new(fib, neighbours(), &ports(), config());
    receive(&mut w, P0, &frame4(&udp4(SENDER, HOST, 64, false, 20)), 0);
    assert_eq!(w.counters().drops(DropReason::PortDown), 1);
    receive(&mut w, 7, &frame4(&udp4(SENDER, HOST, 64, false, 20)), 0);
    assert_eq!(w.counters().drops(DropReason::PortDown), 2);
}

/// The counters add up: every frame ends in exactly one count, and a
/// reader on another handle sees them after the burst.
#[test]
fn counters_account_for_every_frame() {
    let mut w = worker();
    let reader = w.counters_reader();
    let frames = vec![
        frame4(&udp4(SENDER, HOST, 64, false, 20)),
        frame4(&udp4(SENDER, HOST, 1, false, 20)),
        frame4(&udp4(SENDER, "10.1.0.99".parse().unwrap(), 64, false, 20)),
        frame4(&ping4(SENDER, "10.0.0.1".parse().unwrap(), 64)),
        frame4(&udp4(SENDER, "10.0.0.1".parse().unwrap(), 64, false, 20)),
        frame([0xff; 6], 0x0806, &[0u8; 28]),
        frame(
            [2, 0, 0, 0, 0, 0x55],
            0x0800,
            &udp4(SENDER, HOST, 64, false, 20),
        ),
    ];
    w.receive_burst(P0, &frames, 1_000_000_000);
    let c = reader.read();
    assert_eq!(c, *w.counters());
    assert_eq!(c.received, 7);
    assert_eq!(
        (
            c.forwarded,
            c.answered,
            c.punted_unresolved,
            c.punted_local,
            c.punted_neighbour
        ),
        (1, 1, 1, 1, 1)
    );
    assert_eq!(c.drops(DropReason::TtlExceeded), 1);
    assert_eq!(c.drops(DropReason::OtherHost), 1);
    assert_eq!(
        c.forwarded
            + c.answered
            + c.punted_unresolved
            + c.punted_local
            + c.punted_neighbour
            + c.total_drops(),
        c.received
    );
    assert_eq!(c.icmp_errors, 1);
}

/// A route by a link that is not one of the worker's ports is dropped,
/// counted (a tunnel, or a device given to another worker).
#[test]
fn a_route_by_a_link_without_a_port_is_no_output() {
    // Only p0 is the worker's: packets routed to p1 have no port to leave by.
    let mut w = Worker::new(fib(), neighbours(), &[PortConfig::new(2, P0_MAC)], config());
    receive(&mut w, P0, &frame4(&udp4(SENDER, HOST, 64, false, 20)), 0);
    assert_eq!(w.counters().drops(DropReason::NoOutputPort), 1);
}

/// `packet` with IPv4 options `options` (a multiple of 4 bytes) inserted
/// after the fixed header, lengths and checksum made again.
fn with_options(packet: &[u8], options: &[u8]) -> Vec<u8> {
    let mut p = packet[..20].to_vec();
    p.extend_from_slice(options);
    p.extend_from_slice(&packet[20..]);
    p[0] = 0x40 | ((20 + options.len()) / 4) as u8;
    let total = p.len() as u16;
    p[2..4].copy_from_slice(&total.to_be_bytes());
    p[10..12].fill(0);
    let hl = 20 + options.len();
    let sum = checksum::checksum(&p[..hl]);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    p
}

/// `ip_options_compile` accepts no-operation, router alert and types it
/// does not know, and `ip_forward` forwards them unchanged but for the
/// TTL; bytes after end-of-list become end-of-list, the checksum made
/// again. Kernel-checked (veth namespaces, `nstat`): an unknown option
/// (0x9e) and a router alert are forwarded (`IpForwDatagrams`).
#[test]
fn harmless_options_are_forwarded() {
    let plain = udp4(SENDER, HOST, 64, false, 20);
    for options in [&[1u8, 1, 1, 0][..], &[148, 4, 0, 0], &[0x9e, 4, 7, 7]] {
        let mut w = worker();
        let packet = with_options(&plain, options);
        receive(&mut w, P0, &frame4(&packet), 0);
        let out = sent(&mut w, P1);
        assert_eq!(out.len(), 1, "{options:?}: {:?}", w.counters());
        let ip = &out[0][14..];
        assert_eq!(&ip[20..24], options);
        assert_eq!((ip[8], checksum::checksum(&ip[..24])), (63, 0));
    }
    let mut w = worker();
    receive(&mut w, P0, &frame4(&with_options(&plain, &[0, 1, 9, 9])), 0);
    let out = sent(&mut w, P1);
    assert_eq!(&out[0][14 + 20..14 + 24], &[0, 0, 0, 0]);
    assert_eq!(checksum::checksum(&out[0][14..14 + 24]), 0);
}

/// A malformed option drops the packet before any forwarding decision
/// (TTL 1 too: no time exceeded), with a parameter problem pointing at it
/// (`ip_options_compile`'s `pp_ptr`, sent by `ip_options_compile`
/// itself). Kernel-checked (`nstat`): a bad option length with TTL 1, and
/// a 2-byte router alert, each add one `IpInHdrErrors` and one
/// `IcmpOutParmProbs`, no time exceeded.
#[test]
fn a_malformed_option_drops_the_packet() {
    let plain = udp4(SENDER, HOST, 1, false, 20);
    for (options, pointer) in [(&[1u8, 0x9e, 9, 0][..], 21u8), (&[148, 2, 1, 0], 21)] {
        let mut w = worker();
        receive(
            &mut w,
            P0,
            &frame4(&with_options(&plain, options)),
            1_000_000_000,
        );
        assert!(sent(&mut w, P1).is_empty());
        assert_eq!(
            w.counters().drops(DropReason::BadIpHeader),
            1,
            "{options:?}"
        );
        assert_eq!(w.counters().drops(DropReason::TtlExceeded), 0);
        let back = sent(&mut w, P0);
        assert_eq!(back.len(), 1, "{options:?}");
        let (kind, code, rest, _) = icmp4(&back[0]);
        assert_eq!((kind, code, rest[0]), (12, 0, pointer));
        // Nothing recorded before the error: the reply has no options.
        assert_eq!(back[0][14], 0x45);
    }
}

/// The options are compiled once the input route is known, whatever it
/// is: an unreachable, prohibit or blackhole route (`ip_error`), or none,
/// still meets `ip_rcv_options` first, and a malformed option earns a
/// parameter problem instead of the route's error (the forwarding
/// oracle's kernel, seed 1: a blackhole, no route, a throw route).
#[test]
fn a_malformed_option_is_answered_before_the_routes_error() {
    // The oracle's record route of 7 bytes in 4 bytes of options.
    let options = [7u8, 7, 4, 0];
    for dst in ["198.51.100.1", "203.0.113.1", "198.18.0.1", "8.8.8.8"] {
        let mut w = worker();
        let packet = with_options(&udp4(SENDER, dst.parse().unwrap(), 64, false, 20), &options);
        receive(&mut w, P0, &frame4(&packet), 1_000_000_000);
        let back = sent(&mut w, P0);
        assert_eq!(back.len(), 1, "{dst}");
        let (kind, code, rest, quote) = icmp4(&back[0]);
        assert_eq!((kind, code, rest[0]), (12, 0, 20), "{dst}");
        assert_eq!(quote, packet, "{dst}");
        assert_eq!(w.counters().drops(DropReason::BadIpHeader), 1, "{dst}");
    }
    // A martian (here a loopback destination) is refused by the route
    // lookup itself, before any option is looked at.
    let mut w = worker();
    let martian = with_options(
        &udp4(SENDER, Ipv4Addr::new(127, 0, 0, 9), 64, false, 20),
        &options,
    );
    receive(&mut w, P0, &frame4(&martian), 1_000_000_000);
    assert!(sent(&mut w, P0).is_empty());
    assert_eq!(w.counters().drops(DropReason::InvalidRoute), 1);
}

/// An empty record route of two slots, as the forwarding oracle sends it.
const RECORD_ROUTE: [u8; 12] = [7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];

/// Record route on a forwarded packet: `ip_options_compile` records the
/// router's address for the sender (`fib_compute_spec_dst`) and moves the
/// pointer on, then `ip_forward_options` writes the outgoing route's
/// source there instead (`ip_rt_get_source`) and makes the checksum
/// again. The forwarding oracle's kernel, seed 1 frame 67: the pointer 8
/// and the output link's address in the first slot.
#[test]
fn record_route_records_the_outgoing_address() {
    let mut w = worker();
    let packet = with_options(&udp4(SENDER, HOST, 64, false, 20), &RECORD_ROUTE);
    receive(&mut w, P0, &frame4(&packet), 0);
    let out = sent(&mut w, P1);
    assert_eq!(out.len(), 1, "{:?}", w.counters());
    let ip = &out[0][14..];
    assert_eq!(&ip[20..32], &[7, 11, 8, 10, 1, 0, 1, 0, 0, 0, 0, 0]);
    assert_eq!((ip[8], checksum::checksum(&ip[..32])), (63, 0));
    assert_eq!(&ip[32..], &packet[32..]);
}

/// An error about a packet with a record route quotes it as the router
/// holds it, the address recorded on input and the checksum stale (the
/// kernel remakes it only on output), and echoes the option with the
/// error's source in the next slot (`__ip_options_echo`,
/// `ip_options_build`). The forwarding oracle's kernel, seed 1 frame
/// 1253 (a prohibit route): reply options `07 0b 0c` and the router's
/// address twice, quote `07 0b 08` and that address once.
#[test]
fn an_error_about_a_record_route_quotes_and_echoes_it() {
    for (dst, ttl, kind) in [("203.0.113.1", 64, 3), ("10.1.0.7", 1, 11)] {
        let mut w = worker();
        let packet = with_options(
            &udp4(SENDER, dst.parse().unwrap(), ttl, false, 20),
            &RECORD_ROUTE,
        );
        receive(&mut w, P0, &frame4(&packet), 1_000_000_000);
        let back = sent(&mut w, P0);
        assert_eq!(back.len(), 1, "{dst}: {:?}", w.counters());
        let ip = &back[0][14..];
        assert_eq!(ip[0], 0x48, "{dst}");
        assert_eq!(&ip[20..32], &[7, 11, 12, 10, 0, 0, 1, 10, 0, 0, 1, 0]);
        let (got, _, _, quote) = icmp4(&back[0]);
        assert_eq!(got, kind);
        assert_eq!(&quote[20..32], &[7, 11, 8, 10, 0, 0, 1, 0, 0, 0, 0, 0]);
        assert_eq!(&quote[..10], &packet[..10]);
        assert_eq!(&quote[10..12], &packet[10..12], "the checksum as it came");
        assert_ne!(checksum::checksum(&quote[..32]), 0);
    }
}

/// `ip_rcv_options`: a source-routed packet is dropped unless
/// `accept_source_route` is on for "all" and the device, and "all" is 0
/// by default; the route error is not sent either.
#[test]
fn a_source_route_is_dropped() {
    for dst in [HOST, Ipv4Addr::new(198, 51, 100, 1)] {
        let mut w = worker();
        let packet = with_options(
            &udp4(SENDER, dst, 64, false, 20),
            &[131, 7, 4, 10, 1, 0, 7, 0],
        );
        receive(&mut w, P0, &frame4(&packet), 1_000_000_000);
        assert!(sent(&mut w, P1).is_empty());
        assert!(sent(&mut w, P0).is_empty());
        assert_eq!(w.counters().drops(DropReason::OptionsUnsupported), 1);
    }
}

/// An error to a subnet's broadcast address (a packet claiming to come
/// from 10.0.0.255) leaves in a broadcast frame: the route back is a
/// broadcast route, whose neighbour `arp_constructor` makes NUD_NOARP
/// with the device's broadcast address. The forwarding oracle's kernel,
/// seed 1 frames 667 and 951.
#[test]
fn an_error_to_a_subnet_broadcast_source_is_broadcast() {
    let mut w = worker();
    let packet = udp4(
        Ipv4Addr::new(10, 0, 0, 255),
        "198.51.100.1".parse().unwrap(),
        64,
        false,
        20,
    );
    receive(&mut w, P0, &frame4(&packet), 1_000_000_000);
    let back = sent(&mut w, P0);
    assert_eq!(back.len(), 1, "{:?}", w.counters());
    assert_eq!(&back[0][..6], &[0xff; 6]);
    assert_eq!(icmp4(&back[0]).0, 3);
}

/// A record route whose sender has no route back: `fib_compute_spec_dst`
/// looks it up without a protocol, which a rule prohibits here, and
/// records `inet_select_addr` of the input device
/// ([`fibre_fib::Fib::spec_dst_v4`]): p0's 10.0.0.1, where the ICMP
/// route back (which the rule lets through) leaves by p1 from 10.1.0.1.
/// Kernel-checked by the forwarding oracle's crafted case
/// `ipv4-crafted-rr-no-route-back`.
#[test]
fn a_record_route_without_a_route_back_records_the_input_address() {
    let mut w = worker_with("rule add not ipproto icmp prohibit pref 800\n");
    let from = "192.0.2.5".parse().unwrap();
    let packet = with_options(&udp4(from, HOST, 64, false, 20), &RECORD_ROUTE);
    receive(&mut w, P0, &frame4(&packet), 1_000_000_000);
    let back = sent(&mut w, P1);
    assert_eq!(back.len(), 1, "{:?}", w.counters());
    assert_eq!(ipv4_src(&back[0]), Ipv4Addr::new(10, 1, 0, 1));
    let (kind, code, _, quote) = icmp4(&back[0]);
    assert_eq!((kind, code), (3, 13));
    assert_eq!(&quote[20..32], &[7, 11, 8, 10, 0, 0, 1, 0, 0, 0, 0, 0]);
}
