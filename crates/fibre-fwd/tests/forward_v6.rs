//! IPv6 through the worker, each expectation built by hand from
//! `ip6_rcv_core`, `ip6_forward` and `ip6_pkt_drop`.

mod common;

use std::net::Ipv6Addr;

use common::*;
use fibre_base::DropReason;
use fibre_fwd::PuntKind;
use fibre_testkit::CountingAllocator;

// Counts per thread: the other tests here do not disturb
// `ipv6_answers_allocate_nothing`.
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

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
/// (`nstat`: `Ip6OutForwDatagrams` one more), after a redirect to the
/// sender naming the destination itself as the better first hop
/// (`ndisc_send_redirect`; see `redirects_as_ndisc_sends_them`).
#[test]
fn a_link_local_destination_on_its_own_link_is_forwarded_back() {
    let mut w = worker();
    let target: Ipv6Addr = "fe80::7".parse().unwrap();
    w.neighbours_mut().insert(2, target.into(), NEIGHBOUR_MAC);
    receive(&mut w, P0, &frame6(&udp6(SENDER6, target, 64, 20)), 0);
    let out = sent(&mut w, P0);
    assert_eq!(out.len(), 2, "{:?}", w.counters());
    assert_eq!((&out[0][..6], out[0][14 + 40]), (&SENDER_MAC[..], 137));
    assert_eq!((&out[1][..6], out[1][14 + 7]), (&NEIGHBOUR_MAC[..], 63));
}

/// `ip6_rcv_core`: version, loopback and multicast sources, truncation,
/// a hop-by-hop header cut short, each with its reason.
#[test]
fn malformed_and_martian_headers_are_dropped() {
    let good = udp6(SENDER6, HOST6, 64, 20);
    let mut version = good.clone();
    version[0] = 0x40;
    let mut long = good.clone();
    long[4..6].copy_from_slice(&200u16.to_be_bytes());
    let with_src = |src: &str| udp6(src.parse().unwrap(), HOST6, 64, 20);
    // A hop-by-hop header that says it is 11 * 8 bytes long, in 36.
    let mut overlong_hop_by_hop = with_extension(&good, 0, None);
    overlong_hop_by_hop[41] = 10;
    let cases = [
        (version, DropReason::UnknownProtocol),
        (long, DropReason::Truncated),
        (good[..39].to_vec(), DropReason::BadIpHeader),
        (with_src("::1"), DropReason::MartianAddress),
        (with_src("ff02::1"), DropReason::MartianAddress),
        (hop_by_hop(&good, 0)[..46].to_vec(), DropReason::BadIpHeader),
        (overlong_hop_by_hop, DropReason::BadIpHeader),
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

/// `packet` behind an extension header of type `kind` (0 hop-by-hop, 60
/// destination options: a PadN of 4; 44: an atomic fragment's header),
/// its payload length field set to `payload_len` (`None`: the right one).
fn with_extension(packet: &[u8], kind: u8, payload_len: Option<u16>) -> Vec<u8> {
    let mut out = packet[..40].to_vec();
    out[6] = kind;
    let header: [u8; 8] = if kind == 44 {
        [packet[6], 0, 0, 0, 0, 0, 0x12, 0x34]
    } else {
        [packet[6], 0, 1, 4, 0, 0, 0, 0]
    };
    out.extend_from_slice(&header);
    out.extend_from_slice(&packet[40..]);
    let len = payload_len.unwrap_or((out.len() - 40) as u16);
    out[4..6].copy_from_slice(&len.to_be_bytes());
    out
}

/// `packet` behind a hop-by-hop header, its payload length `payload_len`.
fn hop_by_hop(packet: &[u8], payload_len: u16) -> Vec<u8> {
    with_extension(packet, 0, Some(payload_len))
}

/// An ICMPv6 echo request from `src` to `dst` with `data` bytes of data,
/// id 7 sequence 1, its checksum right.
fn ping6(src: Ipv6Addr, dst: Ipv6Addr, data: usize) -> Vec<u8> {
    let mut ping = udp6(src, dst, 64, data);
    ping[6] = 58;
    ping[40..48].copy_from_slice(&[128, 0, 0, 0, 0, 7, 0, 1]);
    set_icmp6_checksum(&mut ping, 40);
    ping
}

/// Writes the ICMPv6 checksum of the message at `at` of `packet`.
fn set_icmp6_checksum(packet: &mut [u8], at: usize) {
    let len = packet.len() - at;
    packet[at + 2..at + 4].fill(0);
    let mut pseudo = Vec::new();
    pseudo.extend_from_slice(&packet[8..40]);
    pseudo.extend_from_slice(&(len as u32).to_be_bytes());
    pseudo.extend_from_slice(&[0, 0, 0, 58]);
    pseudo.extend_from_slice(&packet[at..]);
    let sum = fibre_net::checksum::checksum(&pseudo);
    packet[at + 2..at + 4].copy_from_slice(&sum.to_be_bytes());
}

/// The destination address of an IPv6 frame.
fn dst6(frame: &[u8]) -> Ipv6Addr {
    let mut a = [0u8; 16];
    a.copy_from_slice(&frame[14 + 24..14 + 40]);
    Ipv6Addr::from(a)
}

/// A worker for `extra` configuration lines after the common ones.
fn worker_with(extra: &str) -> common::TestWorker {
    let text = format!("{CONFIG}{extra}");
    let (fib, _) =
        fibre_fib::config::apply_str(&fibre_fib::Fib::new(), "router.conf", &text, false).unwrap();
    fibre_fwd::Worker::new(fib, neighbours(), &ports(), config())
}

/// The link-local address the FIB gives link `link`: the EUI-64 one (RFC
/// 4291 appendix A) of its model MAC, `02:fb` and the index.
fn link_local_of(link: u32) -> Ipv6Addr {
    let i = link.to_be_bytes();
    Ipv6Addr::from([
        0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0xfb, i[0], 0xff, 0xfe, i[1], i[2], i[3],
    ])
}

/// An IPv4-mapped source passes `ip6_rcv_core` on the reference kernel
/// (6.18): forwarded, and answered with errors. Kernel-checked by the
/// forwarding oracle (seed 1: `::ffff:10.0.0.2` forwarded, and sent time
/// exceeded and unreachable errors by a default route).
#[test]
fn an_ipv4_mapped_source_is_forwarded_and_answered() {
    let mapped: Ipv6Addr = "::ffff:10.0.0.9".parse().unwrap();
    let mut w = worker_with("route add default via 2001:db8:1::fe\n");
    receive(&mut w, P0, &frame6(&udp6(mapped, HOST6, 64, 20)), 0);
    let out = sent(&mut w, P1);
    assert_eq!(out.len(), 1, "{:?}", w.counters());
    assert_eq!(out[0][14 + 7], 63);
    receive(
        &mut w,
        P0,
        &frame6(&udp6(mapped, HOST6, 1, 20)),
        1_000_000_000,
    );
    let back = sent(&mut w, P1);
    assert_eq!(back.len(), 1, "{:?}", w.counters());
    assert_eq!((icmp6(&back[0]).0, dst6(&back[0])), (3, mapped));
}

/// Errors and echo replies to a link-local source leave by the link it
/// came in on (`icmp6_send` and `icmpv6_echo_reply` route with
/// `flowi6_oif` the input device), from that link's link-local address
/// for an error (`ipv6_dev_get_saddr`) and from the address pinged for a
/// reply, whichever link's `fe80::/64` a lookup without the device would
/// take. Kernel-checked by the forwarding oracle (seed 1: errors from
/// r0's `fe80::fb:ff:fe00:3` and replies from `2001:db8:3::1`, out of r0).
#[test]
fn answers_to_a_link_local_source_leave_by_its_link() {
    for (port, mac) in [(P0, P0_MAC), (P1, P1_MAC)] {
        let source: Ipv6Addr = "fe80::9".parse().unwrap();
        let mut w = worker();
        w.neighbours_mut()
            .insert(ports()[port].link, source.into(), SENDER_MAC);
        let to_host = if port == P0 { HOST6 } else { SENDER6 };
        let packet = udp6(source, to_host, 1, 20);
        receive(&mut w, port, &frame(mac, 0x86dd, &packet), 1_000_000_000);
        let back = sent(&mut w, port);
        assert_eq!(back.len(), 1, "port {port}: {:?}", w.counters());
        assert_eq!(icmp6(&back[0]).0, 3);
        assert_eq!(
            fibre_fwd_test_src6(&back[0]),
            link_local_of(ports()[port].link)
        );
        let pinged: Ipv6Addr = "2001:db8:1::1".parse().unwrap();
        let ping = ping6(source, pinged, 8);
        receive(&mut w, port, &frame(mac, 0x86dd, &ping), 2_000_000_000);
        let back = sent(&mut w, port);
        assert_eq!(back.len(), 1, "port {port}: {:?}", w.counters());
        assert_eq!(icmp6(&back[0]).0, 129);
        assert_eq!(
            (fibre_fwd_test_src6(&back[0]), dst6(&back[0])),
            (pinged, source)
        );
    }
}

/// An echo request to all-nodes is answered (`icmpv6_echo_reply`, from the
/// source `ip6_route_get_saddr` picks for the route back); to a group the
/// link has not joined it is discarded (`ip6_mc_input`). Kernel-checked
/// by the forwarding oracle (seed 1: `ff02::1` answered from
/// `2001:db8::1`, `ff0e::101` not).
#[test]
fn an_echo_request_to_a_group_is_answered_if_joined() {
    let mut w = worker();
    let all_nodes: Ipv6Addr = "ff02::1".parse().unwrap();
    let ping = ping6(SENDER6, all_nodes, 8);
    receive(
        &mut w,
        P0,
        &frame([0x33, 0x33, 0, 0, 0, 1], 0x86dd, &ping),
        0,
    );
    let back = sent(&mut w, P0);
    assert_eq!(back.len(), 1, "{:?}", w.counters());
    assert_eq!(icmp6(&back[0]).0, 129);
    let router: Ipv6Addr = "2001:db8::1".parse().unwrap();
    assert_eq!(
        (fibre_fwd_test_src6(&back[0]), dst6(&back[0])),
        (router, SENDER6)
    );
    // The solicited-node group of the router's address is joined too.
    let solicited: Ipv6Addr = "ff02::1:ff00:1".parse().unwrap();
    let ping = ping6(SENDER6, solicited, 8);
    receive(
        &mut w,
        P0,
        &frame([0x33, 0x33, 0xff, 0, 0, 1], 0x86dd, &ping),
        0,
    );
    assert_eq!(sent(&mut w, P0).len(), 1, "{:?}", w.counters());
    let global: Ipv6Addr = "ff0e::101".parse().unwrap();
    let ping = ping6(SENDER6, global, 8);
    receive(
        &mut w,
        P0,
        &frame([0x33, 0x33, 0, 0, 1, 1], 0x86dd, &ping),
        0,
    );
    assert!(sent(&mut w, P0).is_empty());
    assert!(punts(&mut w).is_empty());
    assert_eq!(w.counters().drops(DropReason::InvalidRoute), 1);
}

/// An echo request behind hop-by-hop, destination options or an atomic
/// fragment's header is answered: `ip6_input_finish` walks them before
/// ICMPv6 sees the request. The reply carries the ICMPv6 message alone.
/// Kernel-checked by the forwarding oracle (seed 1).
#[test]
fn an_echo_request_behind_extension_headers_is_answered() {
    for kind in [0u8, 60, 44] {
        let mut w = worker();
        let ping = ping6(SENDER6, "2001:db8::1".parse().unwrap(), 8);
        let wrapped = with_extension(&ping, kind, None);
        receive(&mut w, P0, &frame6(&wrapped), 0);
        let back = sent(&mut w, P0);
        assert_eq!(back.len(), 1, "next header {kind}: {:?}", w.counters());
        let (kind_out, _, rest, _) = icmp6(&back[0]);
        assert_eq!((kind_out, rest), (129, [0, 7, 0, 1]), "next header {kind}");
        assert_eq!(back[0].len(), 14 + ping.len());
    }
}

/// Behind an authentication header an echo request is IPsec's (no
/// security association here: not answered), and behind a routing header
/// with segments left it is the routing header's to act on
/// (`ipv6_rthdr_rcv`): both go to the control side, unanswered; with no
/// segments left the routing header is passed over and the request
/// answered.
#[test]
fn an_echo_request_behind_ah_or_a_live_routing_header_is_not_answered() {
    let ping = ping6(SENDER6, "2001:db8::1".parse().unwrap(), 8);
    let behind = |kind: u8, header: [u8; 8]| {
        let mut out = ping[..40].to_vec();
        out[6] = kind;
        out.extend_from_slice(&header);
        out.extend_from_slice(&ping[40..]);
        let len = (out.len() - 40) as u16;
        out[4..6].copy_from_slice(&len.to_be_bytes());
        out
    };
    // AH: payload length 0 means (0 + 2) * 4 = 8 bytes (RFC 4302).
    let ah = behind(51, [58, 0, 0, 0, 0, 0, 0, 1]);
    let live_route = behind(43, [58, 0, 0, 1, 0, 0, 0, 0]);
    let spent_route = behind(43, [58, 0, 0, 0, 0, 0, 0, 0]);
    for (packet, answered) in [(ah, false), (live_route, false), (spent_route, true)] {
        let mut w = worker();
        receive(&mut w, P0, &frame6(&packet), 0);
        let back = sent(&mut w, P0);
        assert_eq!(back.len(), usize::from(answered), "{:?}", w.counters());
        assert_eq!(punts(&mut w).len(), usize::from(!answered));
    }
}

/// An echo request from `::` is answered, to `::`, by the route that
/// covers it: `icmpv6_rcv` and `icmpv6_echo_reply` do not look at the
/// source. Kernel-checked by the forwarding oracle (seed 1: the reply
/// left by the default route).
#[test]
fn an_echo_request_from_the_unspecified_address_is_answered() {
    let mut w = worker_with("route add default via 2001:db8:1::fe\n");
    let ping = ping6(Ipv6Addr::UNSPECIFIED, "2001:db8::1".parse().unwrap(), 8);
    receive(&mut w, P0, &frame6(&ping), 0);
    let back = sent(&mut w, P1);
    assert_eq!(back.len(), 1, "{:?}", w.counters());
    assert_eq!(
        (icmp6(&back[0]).0, dst6(&back[0])),
        (129, Ipv6Addr::UNSPECIFIED)
    );
}

/// An echo reply larger than its route's MTU leaves in fragments, as
/// `ip6_append_data` and `ip6_fragment` cut the kernel's own packets:
/// `((mtu - 40) & ~7) - 8` payload bytes in each but the last, a fragment
/// header after the IPv6 header. Kernel-checked by the forwarding oracle
/// (seed 1: a 1385-byte reply by a 1400-byte link in 1400 and 33 bytes).
#[test]
fn a_large_echo_reply_leaves_in_fragments() {
    let mut w = worker();
    let far: Ipv6Addr = "2001:db8:100:5::9".parse().unwrap();
    let ping = ping6(far, "2001:db8::1".parse().unwrap(), 1400);
    receive(&mut w, P0, &frame6(&ping), 0);
    let back = sent(&mut w, P1);
    assert_eq!(back.len(), 2, "{:?}", w.counters());
    let chunk = ((1400 - 40) & !7) - 8;
    assert_eq!(back[0].len(), 14 + 40 + 8 + chunk);
    assert_eq!(back[1].len(), 14 + 40 + 8 + (ping.len() - 40 - chunk));
    let mut whole = Vec::new();
    for (i, f) in back.iter().enumerate() {
        let ip = &f[14..];
        assert_eq!(ip[6], 44);
        assert_eq!(
            usize::from(u16::from_be_bytes([ip[4], ip[5]])),
            ip.len() - 40
        );
        assert_eq!(ip[40], 58);
        let field = u16::from_be_bytes([ip[42], ip[43]]);
        assert_eq!(
            (usize::from(field & !7), field & 1),
            (i * chunk, u16::from(i == 0))
        );
        assert_eq!(&ip[44..48], &back[0][14 + 44..14 + 48]);
        whole.extend_from_slice(&ip[48..]);
    }
    assert_eq!(whole[0], 129);
    assert_eq!(&whole[8..], &ping[48..]);
    assert_eq!(w.counters().fragments, 2);
}

/// A hop-by-hop header with a zero payload length (a jumbogram's, RFC
/// 2675) trims nothing: the packet is the whole frame, forwarded as it
/// came but for the hop limit (`ip6_rcv_core` skips the length checks;
/// `ipv6_hop_jumbo` runs only for a jumbo payload option). Kernel-checked
/// by the forwarding oracle (seed 2: such a packet to the router is
/// answered by its TCP, and forwarded ones leave whole).
#[test]
fn a_hop_by_hop_header_with_payload_length_zero_is_the_whole_frame() {
    let mut w = worker();
    let packet = hop_by_hop(&udp6(SENDER6, HOST6, 64, 20), 0);
    receive(&mut w, P0, &frame6(&packet), 0);
    let out = sent(&mut w, P1);
    assert_eq!(out.len(), 1, "{:?}", w.counters());
    let mut expected = packet.clone();
    expected[7] = 63;
    assert_eq!(&out[0][14..], &expected[..]);
}

/// A packet to the router whose fragment header is cut short by its
/// payload length is answered with a parameter problem, erroneous header
/// field, pointing at that header (`ipv6_frag_rcv`: `icmpv6_param_prob`
/// with the network header's length) and quoting what the payload length
/// keeps. Kernel-checked by the forwarding oracle (seed 9: an atomic
/// fragment with payload length 0, answered with pointer 40 and a
/// 40-byte quote).
#[test]
fn a_fragment_header_cut_short_is_a_parameter_problem() {
    // UDP behind it: a cut header before ICMPv6 would make the packet
    // look like an ICMPv6 one too short for its type, which
    // `is_ineligible` answers with nothing.
    let udp = udp6(SENDER6, "2001:db8::1".parse().unwrap(), 64, 8);
    for payload_len in [0u16, 4] {
        let mut w = worker();
        let packet = with_extension(&udp, 44, Some(payload_len));
        receive(&mut w, P0, &frame6(&packet), 1_000_000_000);
        let back = sent(&mut w, P0);
        assert_eq!(
            back.len(),
            1,
            "payload length {payload_len}: {:?}",
            w.counters()
        );
        let (kind, code, pointer, quote) = icmp6(&back[0]);
        assert_eq!((kind, code, u32::from_be_bytes(pointer)), (4, 0, 40));
        assert_eq!(quote, packet[..40 + usize::from(payload_len)]);
        assert_eq!(w.counters().drops(DropReason::BadIpHeader), 1);
        assert!(punts(&mut w).is_empty());
    }
}

/// The answers above (to link-local senders, to groups, behind extension
/// headers, in fragments; errors to mapped sources) allocate nothing once
/// the worker is made, as the rest of the worker (`tests/no_alloc.rs`).
#[test]
fn ipv6_answers_allocate_nothing() {
    let mut w = worker_with("route add default via 2001:db8:1::fe\n");
    let link_local: Ipv6Addr = "fe80::9".parse().unwrap();
    w.neighbours_mut().insert(2, link_local.into(), SENDER_MAC);
    let router: Ipv6Addr = "2001:db8::1".parse().unwrap();
    let frames = vec![
        frame6(&udp6(link_local, HOST6, 1, 20)),
        frame6(&ping6(link_local, router, 8)),
        frame(
            [0x33, 0x33, 0, 0, 0, 1],
            0x86dd,
            &ping6(SENDER6, "ff02::1".parse().unwrap(), 8),
        ),
        frame6(&with_extension(&ping6(SENDER6, router, 8), 60, None)),
        frame6(&ping6("2001:db8:100:5::9".parse().unwrap(), router, 1400)),
        frame6(&udp6("::ffff:10.0.0.9".parse().unwrap(), HOST6, 1, 20)),
        frame6(&hop_by_hop(&udp6(SENDER6, HOST6, 64, 20), 0)),
    ];
    let drain = |w: &mut common::TestWorker| {
        let mut sent = 0;
        w.drain_port(P0, |_| sent += 1);
        w.drain_port(P1, |_| sent += 1);
        w.drain_punts(|_| sent += 1);
        sent
    };
    w.receive_burst(P0, &frames, 0);
    drain(&mut w);
    let before = CountingAllocator::allocations();
    let mut sent = 0;
    for round in 1..=20u64 {
        w.receive_burst(P0, &frames, round * 2_000_000_000);
        sent += drain(&mut w);
    }
    let allocations = CountingAllocator::allocations() - before;
    // Each round: an error, three replies, one in two fragments, an error
    // to the mapped source, a forwarded packet.
    assert_eq!(sent, 20 * 8, "{:?}", w.counters());
    assert_eq!(allocations, 0);
}

/// `ip6_forward` -> `ndisc_send_redirect` for a packet that leaves by the
/// link it came in on, checked field by field against what ndisc.c
/// builds: from the link's link-local address (`ipv6_get_lladdr`) to the
/// sender, hop limit 255, traffic class and flow label 0 (`ip6_nd_hdr`);
/// type 137, target the destination itself (on-link), destination; the
/// target's link-layer address option (its neighbour is valid); the
/// redirected header option (type 4, length in 8-byte units, six
/// reserved bytes) with the packet as received (hop limit not yet
/// decremented), cut to whole 8-byte units; a valid checksum. Then the
/// packet is forwarded. Six to one destination at once, then one a
/// second (`inet_peer_xrlim_allow(peer, 1*HZ)`); a global gateway as
/// target (not link-local) gets none.
#[test]
fn redirects_as_ndisc_sends_them() {
    let mut w = worker();
    let fib = fib();
    let link_local = fib
        .addrs_of_v6(2)
        .iter()
        .find_map(|a| match a.local {
            std::net::IpAddr::V6(l) if l.segments()[0] == 0xfe80 => Some(l),
            _ => None,
        })
        .expect("p0 has a link-local address");
    let on_link: Ipv6Addr = "2001:db8::7".parse().unwrap();
    w.neighbours_mut().insert(2, on_link.into(), NEIGHBOUR_MAC);
    // 21 bytes of UDP data: the packet (69 bytes) is not a multiple of 8.
    let packet = udp6(SENDER6, on_link, 64, 21);
    receive(&mut w, P0, &frame6(&packet), 1_000_000_000);
    let out = sent(&mut w, P0);
    assert_eq!(out.len(), 2, "{:?}", w.counters());
    let (rd, forwarded) = (&out[0], &out[1]);
    assert_eq!(&rd[..12], &[SENDER_MAC, P0_MAC].concat()[..]);
    let ip = &rd[14..];
    assert_eq!(&ip[..4], &[0x60, 0, 0, 0], "traffic class and flow label 0");
    assert_eq!((ip[6], ip[7]), (58, 255));
    assert_eq!(&ip[8..24], &link_local.octets());
    assert_eq!(&ip[24..40], &SENDER6.octets());
    let icmp = &ip[40..];
    assert_eq!(usize::from(u16::from_be_bytes([ip[4], ip[5]])), icmp.len());
    assert_eq!((icmp[0], icmp[1], &icmp[4..8]), (137, 0, &[0u8; 4][..]));
    assert_eq!(&icmp[8..24], &on_link.octets(), "target: the destination");
    assert_eq!(&icmp[24..40], &on_link.octets());
    assert_eq!(&icmp[40..48], &[&[2u8, 1][..], &NEIGHBOUR_MAC].concat()[..]);
    let rd_len = (packet.len() + 8) & !7;
    assert_eq!(icmp.len(), 48 + rd_len);
    assert_eq!(&icmp[48..56], &[4, (rd_len / 8) as u8, 0, 0, 0, 0, 0, 0]);
    assert_eq!(&icmp[56..], &packet[..rd_len - 8]);
    let pseudo = fibre_net::checksum::pseudo_header::<fibre_base::Ipv6>(
        link_local,
        SENDER6,
        58,
        icmp.len() as u32,
    );
    assert_eq!(
        fibre_net::checksum::add(pseudo, fibre_net::checksum::sum(icmp)),
        0xffff
    );
    assert_eq!(
        (&forwarded[..6], forwarded[14 + 7]),
        (&NEIGHBOUR_MAC[..], 63)
    );

    // Five more to the same destination at once, then limited; a second
    // later, one more.
    let redirects = |w: &mut TestWorker, now_ns: u64| {
        receive(w, P0, &frame6(&packet), now_ns);
        sent(w, P0).iter().filter(|f| f[14 + 40] == 137).count()
    };
    let burst: usize = (0..6).map(|_| redirects(&mut w, 1_000_000_000)).sum();
    assert_eq!(burst, 5);
    assert_eq!(redirects(&mut w, 2_000_000_000), 1);
    assert_eq!(redirects(&mut w, 2_000_000_000), 0);

    // Through a global gateway on the same link: forwarded, no redirect.
    let mut w = worker_with("route add 2001:db8:500::/48 via 2001:db8::7\n");
    w.neighbours_mut().insert(2, on_link.into(), NEIGHBOUR_MAC);
    let far = udp6(SENDER6, "2001:db8:500::1".parse().unwrap(), 64, 21);
    receive(&mut w, P0, &frame6(&far), 1_000_000_000);
    let out = sent(&mut w, P0);
    assert_eq!(out.len(), 1, "{:?}", w.counters());
    assert_eq!(&out[0][..6], &NEIGHBOUR_MAC);
}
