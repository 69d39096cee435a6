//! Unit tests of the writers and the rate limiter against the kernel's
//! rules, each named after the check it follows.

use std::net::{Ipv4Addr, Ipv6Addr};

use fibre_base::Ipv6;
use fibre_net::checksum;
use proptest::prelude::*;

use super::*;

const ROUTER4: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);
const SENDER4: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 2);
const FAR4: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 2);

/// An IPv4 packet from `src` to `dst` with `payload` (`protocol`), TTL 1,
/// header checksum filled, `options` after the fixed header.
fn packet_v4(
    src: Ipv4Addr,
    dst: Ipv4Addr,
    protocol: u8,
    options: &[u8],
    payload: &[u8],
) -> Vec<u8> {
    let header_len = 20 + options.len();
    let total = header_len + payload.len();
    let mut p = vec![
        0x40 | (header_len / 4) as u8,
        0x28,
        0,
        0,
        0x12,
        0x34,
        0x40,
        0,
        1,
        protocol,
        0,
        0,
    ];
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    p.extend_from_slice(options);
    let sum = checksum::checksum(&p);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    p.extend_from_slice(payload);
    p
}

fn udp_v4(len: usize) -> Vec<u8> {
    let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
    packet_v4(SENDER4, FAR4, 17, &[], &payload)
}

fn error_v4(offending: &[u8], error: Icmp4Error) -> Result<Vec<u8>, Unsent> {
    let mut out = vec![0u8; 2048];
    let n = write_error_v4(offending, error, ROUTER4, &mut out)?;
    out.truncate(n);
    Ok(out)
}

const ROUTER6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 1, 0, 0, 0, 0, 1);
const SENDER6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 1, 0, 0, 0, 0, 2);
const FAR6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 2, 0, 0, 0, 0, 2);

fn packet_v6(src: Ipv6Addr, dst: Ipv6Addr, next: u8, payload: &[u8]) -> Vec<u8> {
    let mut p = vec![0x6b, 0x80, 0, 0x05, 0, 0, next, 1];
    p[4..6].copy_from_slice(&(payload.len() as u16).to_be_bytes());
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    p.extend_from_slice(payload);
    p
}

fn error_v6(offending: &[u8], error: Icmp6Error) -> Result<Vec<u8>, Unsent> {
    let mut out = vec![0u8; 2048];
    let n = write_error_v6(offending, error, ROUTER6, &mut out)?;
    out.truncate(n);
    Ok(out)
}

fn icmpv6_sums_to_ffff(packet: &[u8]) -> bool {
    let src = Ipv6Addr::from(<[u8; 16]>::try_from(&packet[8..24]).unwrap());
    let dst = Ipv6Addr::from(<[u8; 16]>::try_from(&packet[24..40]).unwrap());
    let icmp = &packet[40..];
    let pseudo = checksum::pseudo_header::<Ipv6>(src, dst, 58, icmp.len() as u32);
    checksum::add(pseudo, checksum::sum(icmp)) == 0xffff
}

#[test]
fn time_exceeded_v4_has_the_kernels_header_and_quotes_the_packet_as_received() {
    let offending = udp_v4(40);
    let out = error_v4(&offending, Icmp4Error::TimeExceeded).unwrap();
    assert_eq!(out.len(), 20 + 8 + offending.len());
    // TOS: RT_TOS(0x28) | IPTOS_PREC_INTERNETCONTROL.
    assert_eq!(out[1], 0x08 | 0xc0);
    // DF clear (IP_PMTUDISC_DONT), TTL 64, ICMP.
    assert_eq!((out[6], out[7], out[8], out[9]), (0, 0, 64, 1));
    assert_eq!(&out[12..16], &ROUTER4.octets());
    assert_eq!(&out[16..20], &SENDER4.octets());
    assert_eq!(checksum::sum(&out[..20]), 0xffff);
    assert_eq!(checksum::sum(&out[20..]), 0xffff);
    assert_eq!(&out[20..22], &[11, 0]);
    assert_eq!(&out[24..28], &[0; 4]);
    assert_eq!(&out[28..], &offending[..]);
}

#[test]
fn the_ipv4_quote_stops_at_576_bytes_and_at_the_reply_routes_mtu() {
    // 548 bytes of quote fill 576 exactly; a byte more is cut.
    for (len, quoted) in [
        (547 - 20, 547),
        (548 - 20, 548),
        (549 - 20, 548),
        (1472, 548),
        (0, 20),
    ] {
        let offending = udp_v4(len);
        let out = error_v4(&offending, Icmp4Error::HostUnreachable).unwrap();
        assert_eq!(out.len(), 28 + quoted, "offending of {}", offending.len());
        assert_eq!(&out[28..], &offending[..quoted]);
    }
    let offending = udp_v4(1000);
    let mut out = [0u8; 600];
    // room = 68 - 20 - 8 = 40 > 20.
    assert_eq!(
        write_error_v4_mtu(
            &offending,
            Icmp4Error::FragmentationNeeded { mtu: 68 },
            ROUTER4,
            68,
            &mut out
        ),
        Ok(68)
    );
    assert_eq!(
        (&out[20..22], &out[24..28]),
        (&[3u8, 4][..], &[0u8, 0, 0, 68][..])
    );
    // room = 48 - 28 = 20: not more than a header, nothing sent.
    assert_eq!(
        write_error_v4_mtu(
            &offending,
            Icmp4Error::HostUnreachable,
            ROUTER4,
            48,
            &mut out
        ),
        Err(Unsent::NoRoom)
    );
    // Padding past the total length is not quoted (ip_rcv_core trims it).
    let mut padded = udp_v4(2);
    padded.extend_from_slice(&[0xee; 10]);
    assert_eq!(
        error_v4(&padded, Icmp4Error::TimeExceeded).unwrap().len(),
        28 + 22
    );
}

#[test]
fn every_ipv4_error_has_its_type_code_and_word() {
    let gw = Ipv4Addr::new(10, 0, 1, 9);
    for (error, head) in [
        (Icmp4Error::TimeExceeded, [11, 0, 0, 0, 0, 0]),
        (Icmp4Error::NetUnreachable, [3, 0, 0, 0, 0, 0]),
        (Icmp4Error::HostUnreachable, [3, 1, 0, 0, 0, 0]),
        (Icmp4Error::ProtocolUnreachable, [3, 2, 0, 0, 0, 0]),
        (Icmp4Error::PortUnreachable, [3, 3, 0, 0, 0, 0]),
        (
            Icmp4Error::FragmentationNeeded { mtu: 1400 },
            [3, 4, 0, 0, 0x05, 0x78],
        ),
        (Icmp4Error::AdminProhibited, [3, 13, 0, 0, 0, 0]),
        (Icmp4Error::Redirect { gateway: gw }, [5, 1, 10, 0, 1, 9]),
        (
            Icmp4Error::ParameterProblem { pointer: 20 },
            [12, 0, 20, 0, 0, 0],
        ),
    ] {
        let out = error_v4(&udp_v4(8), error).unwrap();
        assert_eq!(&out[20..22], &head[..2], "{error:?}");
        assert_eq!(&out[24..28], &head[2..], "{error:?}");
        assert_eq!(checksum::sum(&out[20..]), 0xffff);
    }
    use fibre_fib::Errno;
    assert_eq!(
        Icmp4Error::for_route_error(Errno::HostUnreach),
        Some(Icmp4Error::HostUnreachable)
    );
    assert_eq!(
        Icmp4Error::for_route_error(Errno::NetUnreach),
        Some(Icmp4Error::NetUnreachable)
    );
    assert_eq!(
        Icmp4Error::for_route_error(Errno::Acces),
        Some(Icmp4Error::AdminProhibited)
    );
    assert_eq!(Icmp4Error::for_route_error(Errno::Inval), None);
    assert_eq!(
        Icmp6Error::for_route_error(Errno::HostUnreach),
        Some(Icmp6Error::NoRoute)
    );
    assert_eq!(
        Icmp6Error::for_route_error(Errno::Acces),
        Some(Icmp6Error::AdminProhibited)
    );
    assert_eq!(Icmp6Error::for_route_error(Errno::Inval), None);
}

#[test]
fn icmp_send_sends_nothing_where_the_kernel_does_not() {
    let te = Icmp4Error::TimeExceeded;
    // Shorter than a header.
    assert_eq!(error_v4(&udp_v4(8)[..19], te), Err(Unsent::Truncated));
    // Not IPv4, or an IHL past the bytes.
    let mut v = udp_v4(8);
    v[0] = 0x65;
    assert_eq!(error_v4(&v, te), Err(Unsent::Truncated));
    let mut v = udp_v4(8);
    v[0] = 0x4f;
    assert_eq!(error_v4(&v, te), Err(Unsent::Truncated));
    // A later fragment; the first fragment (MF, offset 0) is answered.
    let mut v = udp_v4(8);
    v[6..8].copy_from_slice(&[0x20, 0x01]);
    assert_eq!(error_v4(&v, te), Err(Unsent::NotFirstFragment));
    v[6..8].copy_from_slice(&[0x20, 0x00]);
    assert!(error_v4(&v, te).is_ok());
    // To multicast or limited broadcast.
    for dst in [Ipv4Addr::new(224, 0, 0, 5), Ipv4Addr::BROADCAST] {
        let v = packet_v4(SENDER4, dst, 17, &[], &[0; 8]);
        assert_eq!(error_v4(&v, te), Err(Unsent::MulticastDestination));
    }
    // From a source that is no single node.
    for src in [
        Ipv4Addr::UNSPECIFIED,
        Ipv4Addr::new(224, 1, 2, 3),
        Ipv4Addr::BROADCAST,
        Ipv4Addr::LOCALHOST,
    ] {
        let v = packet_v4(src, FAR4, 17, &[], &[0; 8]);
        assert_eq!(error_v4(&v, te), Err(Unsent::NonUnicastSource), "{src}");
    }
    // The rest of 0.0.0.0/8 is unicast (Linux 5.3 on) and answered.
    let v = packet_v4(Ipv4Addr::new(0, 1, 2, 3), FAR4, 17, &[], &[0; 8]);
    assert!(error_v4(&v, te).is_ok());
    // ICMP errors (and unknown types) are not answered; queries are. The
    // types below 18 the kernel does not handle are errors too
    // (`icmp_pointers`); the
    // forwarding oracle's kernel, seeds 3 and 5: no parameter problem
    // about an echo whose IHL of 6 puts type 9 or 1 where the type is read.
    for (kind, sent) in [
        (0u8, true),
        (8, true),
        (13, true),
        (14, true),
        (18, true),
        (1, false),
        (2, false),
        (6, false),
        (7, false),
        (9, false),
        (10, false),
        (3, false),
        (4, false),
        (5, false),
        (11, false),
        (12, false),
        (19, false),
        (255, false),
    ] {
        let v = packet_v4(SENDER4, FAR4, 1, &[], &[kind, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(error_v4(&v, te).is_ok(), sent, "ICMP type {kind}");
    }
    // ICMP without a type byte.
    let v = packet_v4(SENDER4, FAR4, 1, &[], &[]);
    assert_eq!(error_v4(&v, te), Err(Unsent::IcmpError));
    // A source route no hop of which was visited is not echoed.
    for options in [
        &[131u8, 7, 4, 10, 0, 0, 9, 0][..],
        &[137, 7, 4, 10, 0, 0, 9, 0],
    ] {
        let v = packet_v4(SENDER4, FAR4, 17, options, &[0; 8]);
        let out = error_v4(&v, te).unwrap();
        assert_eq!((out[0], &out[16..20]), (0x45, &SENDER4.octets()[..]));
    }
    // Malformed options: what `ip_options_compile` recorded before the
    // error is echoed (a parameter problem's options), here nothing, then
    // the first of two record routes.
    for (options, echoed) in [
        (&[7u8, 7, 3, 0, 0, 0, 0, 0][..], &[][..]),
        (&[7, 9, 4, 0, 0, 0, 0, 0], &[]),
        (&[7, 3, 4, 7, 3, 4, 0, 0], &[7, 3, 4, 0]),
    ] {
        let v = packet_v4(SENDER4, FAR4, 17, options, &[0; 8]);
        let out = error_v4(&v, Icmp4Error::ParameterProblem { pointer: 20 }).unwrap();
        let header_len = usize::from(out[0] & 0x0f) * 4;
        assert_eq!(&out[20..header_len], echoed, "{options:?}");
    }
    let alert = [148, 4, 0, 0];
    let v = packet_v4(SENDER4, FAR4, 17, &alert, &[0; 8]);
    let out = error_v4(&v, te).unwrap();
    assert_eq!(out[0], 0x45, "no options in the reply");
    assert_eq!(&out[28..], &v[..]);
    // A short buffer.
    assert_eq!(
        write_error_v4(&udp_v4(8), te, ROUTER4, &mut [0u8; 55]),
        Err(Unsent::BufferTooSmall)
    );
}

/// `__ip_options_echo` reverses a source route's visited hops, the last
/// of them the reply's destination (`faddr`), the sender in the last slot
/// (`ip_options_build`), and leaves out a first hop naming the sender
/// itself. The forwarding oracle's kernel, seed 14 frame 7395: a
/// parameter problem about an option after a strict source route of
/// eight hops goes to the eighth, seven reversed and the sender echoed.
#[test]
fn a_source_route_is_echoed_reversed_and_followed_back() {
    let problem = Icmp4Error::ParameterProblem { pointer: 32 };
    let v = packet_v4(
        SENDER4,
        FAR4,
        17,
        &[131, 11, 12, 10, 0, 0, 7, 10, 0, 9, 9, 0],
        &[0; 8],
    );
    let out = error_v4(&v, problem).unwrap();
    assert_eq!(&out[16..20], &[10, 0, 9, 9]);
    assert_eq!(&out[20..32], &[131, 11, 4, 10, 0, 0, 7, 10, 0, 1, 2, 0]);
    let v = packet_v4(
        SENDER4,
        FAR4,
        17,
        &[137, 11, 12, 10, 0, 1, 2, 10, 0, 9, 9, 0],
        &[0; 8],
    );
    let out = error_v4(&v, problem).unwrap();
    assert_eq!(&out[16..20], &[10, 0, 9, 9]);
    assert_eq!(&out[20..28], &[137, 7, 4, 10, 0, 1, 2, 0]);
}

#[test]
fn record_route_is_echoed_with_the_replys_source() {
    // A record route with room for two, one used by the input path: the
    // reply copies it, moves the pointer on and records its source.
    let rr = [1, 7, 11, 8, 10, 0, 1, 1, 0, 0, 0, 0];
    let v = packet_v4(SENDER4, FAR4, 17, &rr, &[0; 8]);
    let out = error_v4(&v, Icmp4Error::TimeExceeded).unwrap();
    assert_eq!(out[0], 0x48);
    assert_eq!(&out[20..32], &[7, 11, 12, 10, 0, 1, 1, 10, 0, 1, 1, 0]);
    assert_eq!(checksum::sum(&out[..32]), 0xffff);
    assert_eq!(&out[32..34], &[11, 0]);
    assert_eq!(&out[40..], &v[..]);
    // 576 - 32 - 8 bytes of quote.
    let big = packet_v4(SENDER4, FAR4, 17, &rr, &[0; 1000]);
    assert_eq!(error_v4(&big, Icmp4Error::TimeExceeded).unwrap().len(), 576);
    // A full record route is copied as it is.
    let full = [7, 7, 8, 1, 2, 3, 4, 0];
    let v = packet_v4(SENDER4, FAR4, 17, &full, &[0; 8]);
    let out = error_v4(&v, Icmp4Error::TimeExceeded).unwrap();
    assert_eq!(&out[20..28], &[7, 7, 8, 1, 2, 3, 4, 0]);
    // The input path's part.
    let mut p = packet_v4(
        SENDER4,
        FAR4,
        17,
        &[1, 7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0],
        &[0; 8],
    );
    assert!(record_route_on_input(&mut p, ROUTER4));
    assert_eq!(&p[20..32], &rr);
    let mut full = packet_v4(SENDER4, FAR4, 17, &full, &[0; 8]);
    assert!(!record_route_on_input(&mut full, ROUTER4));
}

/// A timestamp with room is echoed with its pointer moved on by the
/// reply's own entry (`__ip_options_echo`), the time of day written there
/// (`ip_options_build`); one with an address first takes the reply's
/// source. CIPSO is copied as it is.
#[test]
fn timestamps_and_cipso_are_echoed() {
    // As held: the input path took one time already (pointer 9).
    let ts = [68, 12, 9, 0, 0, 0, 0, 1, 0, 0, 0, 0];
    let v = packet_v4(SENDER4, FAR4, 17, &ts, &[0; 8]);
    let out = error_v4(&v, Icmp4Error::TimeExceeded).unwrap();
    assert_eq!(out[0], 0x48);
    assert_eq!(&out[20..28], &[68, 12, 13, 0, 0, 0, 0, 1]);
    let time = u32::from_be_bytes([out[28], out[29], out[30], out[31]]);
    assert!(time < 86_400_000, "milliseconds since midnight: {time}");
    // Address and timestamp, room for one more pair.
    let ts = [
        68, 20, 13, 1, 10, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
    ];
    let v = packet_v4(SENDER4, FAR4, 17, &ts, &[0; 8]);
    let out = error_v4(&v, Icmp4Error::TimeExceeded).unwrap();
    assert_eq!(
        &out[20..36],
        &[68, 20, 21, 1, 10, 0, 1, 1, 0, 0, 0, 1, 10, 0, 1, 1]
    );
    // CIPSO (refused on input without a domain of interpretation: only a
    // parameter problem quotes it).
    let cipso = [134, 8, 0, 0, 0, 1, 0, 0];
    let v = packet_v4(SENDER4, FAR4, 17, &cipso, &[0; 8]);
    let out = error_v4(&v, Icmp4Error::ParameterProblem { pointer: 22 }).unwrap();
    assert_eq!(&out[20..28], &cipso);
}

#[test]
fn echo_reply_v4_is_the_request_turned_round() {
    let mut icmp = vec![8, 0, 0, 0, 0x12, 0x34, 0, 7];
    icmp.extend_from_slice(b"abcdefghijklmnop");
    let sum = checksum::checksum(&icmp);
    icmp[2..4].copy_from_slice(&sum.to_be_bytes());
    let request = packet_v4(SENDER4, ROUTER4, 1, &[], &icmp);
    let mut out = [0u8; 128];
    let n = write_echo_reply_v4(&request, &mut out).unwrap();
    assert_eq!(n, request.len());
    let reply = &out[..n];
    assert_eq!(reply[1], request[1], "the request's TOS byte");
    assert_eq!((reply[6], reply[8]), (0, 64));
    assert_eq!(&reply[12..16], &ROUTER4.octets());
    assert_eq!(&reply[16..20], &SENDER4.octets());
    assert_eq!(checksum::sum(&reply[..20]), 0xffff);
    assert_eq!(checksum::sum(&reply[20..]), 0xffff);
    assert_eq!(reply[20], 0);
    assert_eq!(&reply[24..], &icmp[4..]);
    // A bad checksum, a non-echo, a fragment, a broadcast: no reply.
    let mut bad = request.clone();
    bad[30] ^= 1;
    assert_eq!(
        write_echo_reply_v4(&bad, &mut out),
        Err(Unsent::NotEchoRequest)
    );
    let mut frag = request.clone();
    frag[6] = 0x20;
    assert_eq!(
        write_echo_reply_v4(&frag, &mut out),
        Err(Unsent::NotEchoRequest)
    );
    let bcast = packet_v4(SENDER4, Ipv4Addr::BROADCAST, 1, &[], &icmp);
    assert_eq!(
        write_echo_reply_v4(&bcast, &mut out),
        Err(Unsent::NotEchoRequest)
    );
    let udp = packet_v4(SENDER4, ROUTER4, 17, &[], &icmp);
    assert_eq!(
        write_echo_reply_v4(&udp, &mut out),
        Err(Unsent::NotEchoRequest)
    );
}

#[test]
fn the_ipv6_quote_stops_at_1280_bytes() {
    for (payload, quoted) in [(8, 48), (1232 - 40, 1232), (1232 - 39, 1232), (1452, 1232)] {
        let offending = packet_v6(SENDER6, FAR6, 17, &vec![7u8; payload]);
        let out = error_v6(&offending, Icmp6Error::PacketTooBig { mtu: 1280 }).unwrap();
        assert_eq!(out.len(), 48 + quoted, "payload {payload}");
        assert!(out.len() <= 1280);
        assert_eq!(&out[48..], &offending[..quoted]);
        assert_eq!(&out[40..42], &[2, 0]);
        assert_eq!(&out[44..48], &[0, 0, 0x05, 0x00]);
        assert!(icmpv6_sums_to_ffff(&out));
        // Traffic class 0, hop limit 64, from the router to the sender.
        assert_eq!((out[0], out[1] & 0xf0, out[6], out[7]), (0x60, 0, 58, 64));
        assert_eq!(&out[8..24], &ROUTER6.octets());
        assert_eq!(&out[24..40], &SENDER6.octets());
    }
}

#[test]
fn icmp6_send_sends_nothing_where_the_kernel_does_not() {
    let te = Icmp6Error::TimeExceeded;
    let udp = packet_v6(SENDER6, FAR6, 17, &[0; 8]);
    assert_eq!(error_v6(&udp[..39], te), Err(Unsent::Truncated));
    // To multicast: only packet too big and options that demand it.
    let mc: Ipv6Addr = "ff0e::1".parse().unwrap();
    let to_mc = packet_v6(SENDER6, mc, 17, &[0; 8]);
    assert_eq!(error_v6(&to_mc, te), Err(Unsent::MulticastDestination));
    assert!(error_v6(&to_mc, Icmp6Error::PacketTooBig { mtu: 1280 }).is_ok());
    // Destination options with option type 0x80 (answer even multicast) at 42.
    let opts = [17u8, 0, 0x80, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let to_mc_opt = packet_v6(SENDER6, mc, 60, &opts);
    let pp = |pointer| Icmp6Error::ParameterProblem { code: 2, pointer };
    assert!(error_v6(&to_mc_opt, pp(42)).is_ok());
    assert_eq!(
        error_v6(&to_mc_opt, pp(43)),
        Err(Unsent::MulticastDestination)
    );
    // From unspecified or multicast.
    for src in [Ipv6Addr::UNSPECIFIED, mc] {
        let v = packet_v6(src, FAR6, 17, &[0; 8]);
        assert_eq!(error_v6(&v, te), Err(Unsent::NonUnicastSource));
    }
    // ICMPv6 errors are not answered (also behind extension headers);
    // informational messages are.
    for (kind, sent) in [
        (128u8, true),
        (129, true),
        (135, true),
        (1, false),
        (2, false),
        (3, false),
        (4, false),
        (127, false),
    ] {
        let v = packet_v6(SENDER6, FAR6, 58, &[kind, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(error_v6(&v, te).is_ok(), sent, "type {kind}");
        let mut hbh = vec![58u8, 0, 1, 4, 0, 0, 0, 0];
        hbh.extend_from_slice(&[kind, 0, 0, 0, 0, 0, 0, 0]);
        let v = packet_v6(SENDER6, FAR6, 0, &hbh);
        assert_eq!(
            error_v6(&v, te).is_ok(),
            sent,
            "type {kind} after hop-by-hop"
        );
    }
    // ICMPv6 cut before its type: not answered, unless a later fragment.
    let v = packet_v6(SENDER6, FAR6, 58, &[]);
    assert_eq!(error_v6(&v, te), Err(Unsent::IcmpError));
    let later = packet_v6(
        SENDER6,
        FAR6,
        44,
        &[58, 0, 0x00, 0x08, 0, 0, 0, 1, 1, 0, 0, 0],
    );
    assert!(error_v6(&later, te).is_ok(), "a later fragment is answered");
    let first = packet_v6(
        SENDER6,
        FAR6,
        44,
        &[58, 0, 0x00, 0x01, 0, 0, 0, 1, 1, 0, 0, 0],
    );
    assert_eq!(error_v6(&first, te), Err(Unsent::IcmpError));
    // "No next header" ends the chain: answered.
    let none = packet_v6(SENDER6, FAR6, 59, &[]);
    assert!(error_v6(&none, te).is_ok());
}

#[test]
fn echo_reply_v6_keeps_the_traffic_class_and_turns_the_request_round() {
    let mut icmp = vec![128, 0, 0, 0, 0xbe, 0xef, 0, 1];
    icmp.extend_from_slice(b"0123456789");
    let pseudo = checksum::pseudo_header::<Ipv6>(SENDER6, ROUTER6, 58, icmp.len() as u32);
    let sum = !checksum::add(pseudo, checksum::sum(&icmp));
    icmp[2..4].copy_from_slice(&sum.to_be_bytes());
    let request = packet_v6(SENDER6, ROUTER6, 58, &icmp);
    let mut out = [0u8; 256];
    let n = write_echo_reply_v6(&request, &mut out).unwrap();
    let reply = &out[..n];
    assert_eq!(n, request.len());
    // Traffic class 0xb8 as in the request.
    assert_eq!(((reply[0] & 0x0f) << 4) | (reply[1] >> 4), 0xb8);
    assert_eq!(reply[7], 64);
    assert_eq!(&reply[8..24], &ROUTER6.octets());
    assert_eq!(&reply[24..40], &SENDER6.octets());
    assert_eq!(reply[40], 129);
    assert_eq!(&reply[44..], &icmp[4..]);
    assert!(icmpv6_sums_to_ffff(reply));
    let mut bad = request.clone();
    bad[50] ^= 1;
    assert_eq!(
        write_echo_reply_v6(&bad, &mut out),
        Err(Unsent::NotEchoRequest)
    );
    let mc = packet_v6(SENDER6, "ff02::1".parse().unwrap(), 58, &icmp);
    assert_eq!(
        write_echo_reply_v6(&mc, &mut out),
        Err(Unsent::MulticastDestination)
    );
}

#[test]
fn an_echo_request_whose_extension_header_overruns_the_packet_is_not_answered() {
    // A hop-by-hop header announcing 8 bytes in a 2-byte payload, then
    // ICMPv6: the chain points past the end of the packet.
    let request = packet_v6(SENDER6, ROUTER6, 0, &[58, 0]);
    let mut out = [0u8; 256];
    assert_eq!(
        write_echo_reply_v6(&request, &mut out),
        Err(Unsent::NotEchoRequest)
    );
    // `is_ineligible` cannot read the ICMPv6 type either: an ICMPv6
    // packet too short to show its type is treated as an error.
    assert!(error_v6(&request, Icmp6Error::TimeExceeded).is_err());
}

fn secs(s: f64) -> u64 {
    (s * 1e9) as u64
}

#[test]
fn a_thousand_time_exceeded_to_one_destination_in_11_ms_send_six() {
    let mut limiter = RateLimiter::new(RateLimitSettings::default());
    let dst = SENDER4;
    let sent = (0..1000u64)
        .filter(|i| limiter.allow_error_v4(secs(3.0) + i * 11_000, dst, &Icmp4Error::TimeExceeded))
        .count();
    assert_eq!(sent, 6);
    // One period later one more; after six periods a full burst again.
    assert!(limiter.allow_error_v4(secs(4.02), dst, &Icmp4Error::TimeExceeded));
    assert!(!limiter.allow_error_v4(secs(4.02), dst, &Icmp4Error::TimeExceeded));
    let later = (0..10)
        .filter(|_| limiter.allow_error_v4(secs(20.0), dst, &Icmp4Error::TimeExceeded))
        .count();
    assert_eq!(later, 6, "six periods of tokens, one period a message");
}

/// `inet_peer_xrlim_allow` sends while the bucket holds at least one
/// period (`token >= timeout`): with `icmp_ratelimit` 0 every message
/// passes, as the kernel router of the forwarding oracle shows.
#[test]
fn a_zero_period_limits_nothing() {
    let settings = RateLimitSettings {
        icmp_ratelimit_ms: 0,
        icmpv6_ratelimit_ms: 0,
        icmp_msgs_per_sec: 100_000_000,
        icmp_msgs_burst: 100_000_000,
        ..RateLimitSettings::default()
    };
    let mut limiter = RateLimiter::new(settings);
    let now = secs(2.0);
    let v4 = (0..200)
        .filter(|_| limiter.allow_error_v4(now, SENDER4, &Icmp4Error::TimeExceeded))
        .count();
    let v6 = (0..200)
        .filter(|_| limiter.allow_error_v6(now, SENDER6, &Icmp6Error::TimeExceeded, 64))
        .count();
    assert_eq!((v4, v6), (200, 200));
}

#[test]
fn unlimited_types_pass_and_limited_ones_stop() {
    let mut limiter = RateLimiter::new(RateLimitSettings::default());
    let now = secs(1.0);
    for _ in 0..1000 {
        assert!(limiter.allow_error_v4(
            now,
            SENDER4,
            &Icmp4Error::FragmentationNeeded { mtu: 1400 }
        ));
        assert!(limiter.allow_v4(now, SENDER4, 0, 0), "echo reply");
        assert!(limiter.allow_error_v6(now, SENDER6, &Icmp6Error::PacketTooBig { mtu: 1280 }, 64));
        assert!(limiter.allow_v6(now, SENDER6, 129, 64), "echo reply");
    }
    let port = (0..100)
        .filter(|_| limiter.allow_v4(now, SENDER4, 3, 3))
        .count();
    assert_eq!(port, 6);
}

#[test]
fn ip_error_and_icmp_send_share_one_bucket_per_destination() {
    let mut limiter = RateLimiter::new(RateLimitSettings::default());
    // ip_error: 5 s of tokens, one second each; then icmp_send's own
    // bucket of the same peer takes its second: two per burst.
    let sent = (0..100)
        .filter(|_| limiter.allow_error_v4(secs(2.0), SENDER4, &Icmp4Error::HostUnreachable))
        .count();
    assert_eq!(sent, 2);
}

#[test]
fn redirects_back_off_and_stop_after_nine() {
    let mut limiter = RateLimiter::new(RateLimitSettings::default());
    let redirect = Icmp4Error::Redirect { gateway: FAR4 };
    let mut sent = Vec::new();
    // One packet every 4 ms (one jiffy) for 30 s.
    for tick in 0..7500u64 {
        let now = secs(1.0) + tick * 4_000_000;
        if limiter.allow_error_v4(now, SENDER4, &redirect) {
            sent.push(tick);
        }
    }
    assert_eq!(sent.len(), 9, "{sent:?}");
    // Waits of more than load << n jiffies (load = HZ/50 = 5).
    for (n, pair) in sent.windows(2).enumerate() {
        assert_eq!(pair[1] - pair[0], (5u64 << (n + 1)) + 1, "{sent:?}");
    }
}

/// Checks that, under `settings`, a time exceeded to one IPv6
/// destination behind a route of each prefix length has the period (in
/// jiffies of 4 ms) paired with it: a burst of 6 (the full bucket), then
/// one a period after.
fn assert_ipv6_periods(settings: RateLimitSettings, periods: [(u8, u64); 3]) {
    for (plen, period_jiffies) in periods {
        let mut limiter = RateLimiter::new(settings);
        let now = secs(5.0);
        let burst = (0..100)
            .filter(|_| limiter.allow_v6(now, SENDER6, 3, plen))
            .count();
        assert_eq!(burst, 6, "/{plen}");
        let jiffy = 4_000_000;
        let last = now + period_jiffies * jiffy;
        assert!(!limiter.allow_v6(last - jiffy, SENDER6, 3, plen), "/{plen}");
        assert!(limiter.allow_v6(last, SENDER6, 3, plen), "/{plen}");
    }
}

#[test]
fn ipv6_periods_are_100_ms_whatever_the_route() {
    assert_ipv6_periods(RateLimitSettings::default(), [(128, 25), (64, 25), (0, 25)]);
}

#[test]
fn older_kernels_ipv6_periods_shrink_for_wider_routes() {
    let settings = RateLimitSettings {
        icmpv6_ratelimit_ms: 1000,
        icmpv6_scale_by_prefix: true,
        ..RateLimitSettings::default()
    };
    assert_ipv6_periods(settings, [(128, 250), (64, 62), (0, 15)]);
}

#[test]
fn the_global_bucket_holds_a_burst_and_about_a_thousand_a_second() {
    let mut limiter = RateLimiter::new(RateLimitSettings::default());
    // 20,000 distinct destinations in one instant: the burst of 50
    // credits, spent 0, 1 or 2 at a time.
    let burst = (0..20_000u32)
        .filter(|i| limiter.allow_v4(secs(1.0), Ipv4Addr::from(0x0a00_0000 + i), 11, 0))
        .count();
    assert!((30..=90).contains(&burst), "{burst}");
    // 10 s of 100,000 errors a second to distinct destinations.
    let sent = (0..1_000_000u64)
        .filter(|i| {
            limiter.allow_v4(
                secs(2.0) + i * 10_000,
                Ipv4Addr::from(0x0b00_0000 + *i as u32),
                11,
                0,
            )
        })
        .count();
    assert!((9_000..=11_500).contains(&sent), "{sent} in 10 s");
}

#[test]
fn the_destination_table_stays_within_its_capacity() {
    let settings = RateLimitSettings {
        peers: 1024,
        ..RateLimitSettings::default()
    };
    let mut limiter = RateLimiter::new(settings);
    for i in 0..1_000_000u32 {
        limiter.allow_v4(
            u64::from(i) * 1_000_000,
            Ipv4Addr::from(i.wrapping_mul(2_654_435_761)),
            11,
            0,
        );
    }
    assert_eq!(limiter.capacity(), 1024);
    assert_eq!(limiter.tracked_destinations(), 1024);
    // A destination evicted long ago starts over with a full bucket, as
    // a fresh inet_peer does.
    let now = secs(2_000.0);
    let burst = (0..10)
        .filter(|_| limiter.allow_v4(now, Ipv4Addr::new(10, 0, 0, 1), 11, 0))
        .count();
    assert_eq!(burst, 6);
}

proptest! {
    #[test]
    fn every_error_and_reply_has_valid_checksums(
        payload in proptest::collection::vec(any::<u8>(), 0..1600),
        tos in any::<u8>(),
        which in 0usize..9,
        mtu in 68u16..9000,
    ) {
        let mut v4 = packet_v4(SENDER4, FAR4, 17, &[], &payload);
        v4[1] = tos;
        v4[10..12].fill(0);
        let sum = checksum::checksum(&v4[..20]);
        v4[10..12].copy_from_slice(&sum.to_be_bytes());
        let errors4 = [
            Icmp4Error::TimeExceeded, Icmp4Error::NetUnreachable, Icmp4Error::HostUnreachable,
            Icmp4Error::AdminProhibited, Icmp4Error::FragmentationNeeded { mtu },
            Icmp4Error::PortUnreachable, Icmp4Error::ProtocolUnreachable,
            Icmp4Error::Redirect { gateway: FAR4 }, Icmp4Error::ParameterProblem { pointer: 1 },
        ];
        let out = error_v4(&v4, errors4[which]).unwrap();
        prop_assert!(out.len() <= 576);
        prop_assert_eq!(checksum::sum(&out[..20]), 0xffff);
        prop_assert_eq!(checksum::sum(&out[20..]), 0xffff);
        let errors6 = [
            Icmp6Error::NoRoute, Icmp6Error::AdminProhibited, Icmp6Error::BeyondScope,
            Icmp6Error::AddressUnreachable, Icmp6Error::PortUnreachable, Icmp6Error::RejectRoute,
            Icmp6Error::PacketTooBig { mtu: u32::from(mtu) }, Icmp6Error::TimeExceeded,
            Icmp6Error::ParameterProblem { code: 0, pointer: 6 },
        ];
        let v6 = packet_v6(SENDER6, FAR6, 17, &payload);
        let out = error_v6(&v6, errors6[which]).unwrap();
        prop_assert!(out.len() <= 1280);
        prop_assert!(icmpv6_sums_to_ffff(&out));

        let mut echo = vec![8u8, 0, 0, 0, 1, 2, 3, 4];
        echo.extend_from_slice(&payload);
        let sum = checksum::checksum(&echo);
        echo[2..4].copy_from_slice(&sum.to_be_bytes());
        let request = packet_v4(SENDER4, ROUTER4, 1, &[], &echo);
        let mut buf = vec![0u8; 2048];
        let n = write_echo_reply_v4(&request, &mut buf).unwrap();
        prop_assert_eq!(checksum::sum(&buf[..20]), 0xffff);
        prop_assert_eq!(checksum::sum(&buf[20..n]), 0xffff);
    }
}
