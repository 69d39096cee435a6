//! The ICMP path allocates nothing per packet: choosing an error's
//! source from the FIB, writing the error or echo reply, and the rate
//! limiter, for both families, once the limiter is made.

use std::net::{Ipv4Addr, Ipv6Addr};

use fibre_base::Ipv6;
use fibre_fib::{config, Fib};
use fibre_fwd::icmp::{
    error_source_v4, error_source_v6, write_echo_reply_v4, write_echo_reply_v6, write_error_v4,
    write_error_v6, Icmp4Error, Icmp6Error, RateLimitSettings, RateLimiter,
};
use fibre_net::checksum;
use fibre_testkit::CountingAllocator;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const CONFIG: &str = "\
link add r0 type ifb
link set r0 up
link add r1 type ifb
link set r1 up
addr add 10.77.1.1/24 dev r0
addr add 10.77.2.1/24 dev r1
addr add fd77:1::1/64 dev r0 nodad
addr add fd77:2::1/64 dev r1 nodad
route add 10.77.70.0/24 via 10.77.1.2 src 10.77.2.1
route add fd77:70::/64 via fd77:1::2 src fd77:2::1
";

fn fib() -> Fib {
    let parsed = config::parse_str("alloc.conf", CONFIG);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let mut fib = Fib::new();
    for s in &parsed.statements {
        fib.apply(&s.command).unwrap();
    }
    fib
}

fn v4(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, body: &[u8]) -> Vec<u8> {
    let mut p = vec![0x45, 0, 0, 0, 0, 1, 0, 0, 1, protocol, 0, 0];
    p[2..4].copy_from_slice(&((20 + body.len()) as u16).to_be_bytes());
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    let sum = checksum::checksum(&p);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    p.extend_from_slice(body);
    p
}

fn v6(src: Ipv6Addr, dst: Ipv6Addr, next: u8, body: &[u8]) -> Vec<u8> {
    let mut p = vec![0x60, 0, 0, 0, 0, 0, next, 1];
    p[4..6].copy_from_slice(&(body.len() as u16).to_be_bytes());
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    p.extend_from_slice(body);
    p
}

#[test]
fn choosing_writing_and_limiting_icmp_allocates_nothing() {
    let fib = fib();
    let r0 = fib.link_by_name("r0").unwrap().index;
    let mut limiter = RateLimiter::new(RateLimitSettings::default());
    let far4 = Ipv4Addr::new(10, 77, 2, 2);
    let far6: Ipv6Addr = "fd77:2::2".parse().unwrap();
    let router6: Ipv6Addr = "fd77:1::1".parse().unwrap();
    let senders4 = [Ipv4Addr::new(10, 77, 1, 2), Ipv4Addr::new(10, 77, 70, 5)];
    let senders6: [Ipv6Addr; 2] = ["fd77:1::2".parse().unwrap(), "fd77:70::5".parse().unwrap()];
    let udp4: Vec<Vec<u8>> = senders4
        .iter()
        .map(|s| v4(*s, far4, 17, &[0; 100]))
        .collect();
    let udp6: Vec<Vec<u8>> = senders6
        .iter()
        .map(|s| v6(*s, far6, 17, &[0; 100]))
        .collect();
    let mut ping4 = vec![8u8, 0, 0, 0, 0, 1, 0, 1, 9, 9];
    let sum = checksum::checksum(&ping4);
    ping4[2..4].copy_from_slice(&sum.to_be_bytes());
    let ping4 = v4(senders4[0], Ipv4Addr::new(10, 77, 1, 1), 1, &ping4);
    let mut ping6 = vec![128u8, 0, 0, 0, 0, 1, 0, 1, 9, 9];
    let pseudo = checksum::pseudo_header::<Ipv6>(senders6[0], router6, 58, ping6.len() as u32);
    let sum = !checksum::add(pseudo, checksum::sum(&ping6));
    ping6[2..4].copy_from_slice(&sum.to_be_bytes());
    let ping6 = v6(senders6[0], router6, 58, &ping6);
    let mut out = vec![0u8; 2048];

    let before = CountingAllocator::allocations();
    let mut sent = 0usize;
    for round in 0..1000u64 {
        let now = round * 1_000_000;
        for (packet, sender) in udp4.iter().zip(senders4) {
            let source = error_source_v4(&fib, packet).unwrap();
            let error = Icmp4Error::TimeExceeded;
            if limiter.allow_error_v4(now, sender, &error) {
                sent += write_error_v4(packet, error, source, &mut out).unwrap();
            }
            let unreachable = Icmp4Error::HostUnreachable;
            if limiter.allow_error_v4(now, sender, &unreachable) {
                sent += write_error_v4(packet, unreachable, source, &mut out).unwrap();
            }
        }
        for (packet, sender) in udp6.iter().zip(senders6) {
            let source = error_source_v6(&fib, packet, r0).unwrap();
            let error = Icmp6Error::PacketTooBig { mtu: 1280 };
            if limiter.allow_error_v6(now, sender, &error, 64) {
                sent += write_error_v6(packet, error, source, &mut out).unwrap();
            }
        }
        sent += write_echo_reply_v4(&ping4, &mut out).unwrap();
        sent += write_echo_reply_v6(&ping6, &mut out).unwrap();
    }
    let allocations = CountingAllocator::allocations() - before;
    assert!(sent > 0);
    assert_eq!(
        allocations, 0,
        "the ICMP path allocated {allocations} times"
    );
}
