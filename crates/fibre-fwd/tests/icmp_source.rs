//! The allocation-free source choices the ICMP writers use
//! (`Fib::output_source_v4`, `Fib::reply_route_v6`) give what
//! `ip route get` gives (`Fib::route_get`'s `src`, itself checked against
//! the kernel elsewhere), over a FIB with preferred sources, secondary
//! addresses, multipath, TOS routes and rules, for arbitrary destinations.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use fibre_fib::{config, Fib, RouteGetRequest};
use proptest::prelude::*;

const CONFIG: &str = "\
link add r0 type ifb
link set r0 up
link add r1 type ifb
link set r1 up
link add r2 type ifb
link set r2 up
addr add 10.1.0.1/24 dev r0
addr add 10.1.0.201/24 dev r0
addr add 10.2.0.1/16 dev r1
addr add 10.3.0.1/24 dev r2
addr add 192.0.2.1/32 dev r2
addr add 2001:db8:1::1/64 dev r0 nodad
addr add 2001:db8:2::1/64 dev r1 nodad
addr add 2001:db8:3::1/64 dev r2 nodad
route add 172.16.0.0/12 via 10.1.0.9 src 10.2.0.1
route add 172.20.0.0/16 nexthop via 10.1.0.9 nexthop via 10.2.0.9
route add 198.51.100.0/24 tos 0x10 via 10.3.0.9
route add 198.51.100.0/24 via 10.2.0.9
route add 203.0.113.0/24 dev r2 src 192.0.2.1
route add unreachable 100.64.0.0/10
route add table 50 default via 10.3.0.9
rule add from all tos 0x08 lookup 50
route add 2001:db8:70::/48 via 2001:db8:1::9 src 2001:db8:3::1
route add 2001:db8:71::/48 via 2001:db8:2::9
route add 2001:db8:72::/48 nexthop via 2001:db8:1::9 nexthop via 2001:db8:2::9
route add unreachable 2001:db8:73::/48
";

/// The FIB, built once for all cases.
fn shared() -> &'static Fib {
    static FIB: std::sync::OnceLock<Fib> = std::sync::OnceLock::new();
    FIB.get_or_init(fib)
}

fn fib() -> Fib {
    let parsed = config::parse_str("source.conf", CONFIG);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let mut fib = Fib::new();
    for s in &parsed.statements {
        fib.apply(&s.command).unwrap();
    }
    fib
}

/// A v4 destination somewhere the configuration routes (or does not).
fn v4_dst() -> impl Strategy<Value = Ipv4Addr> {
    let nets = [
        0x0a01_0000u32,
        0x0a02_0000,
        0x0a03_0000,
        0xac10_0000,
        0xac14_0000,
        0xc633_6400,
        0xcb00_7100,
        0x6440_0000,
        0x0808_0800,
        0xc000_0200,
    ];
    (0..nets.len(), any::<u16>())
        .prop_map(move |(i, low)| Ipv4Addr::from(nets[i] | u32::from(low & 0xff)))
}

fn v6_dst() -> impl Strategy<Value = Ipv6Addr> {
    let nets: [u128; 7] = [
        0x2001_0db8_0001 << 80,
        0x2001_0db8_0002 << 80,
        0x2001_0db8_0003 << 80,
        0x2001_0db8_0070 << 80,
        0x2001_0db8_0071 << 80,
        0x2001_0db8_0072 << 80,
        0x2001_0db8_0073 << 80,
    ];
    (0..nets.len(), any::<u64>())
        .prop_map(move |(i, low)| Ipv6Addr::from(nets[i] | u128::from(low)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn v4_sources_are_route_gets(dst in v4_dst(), tos in prop::sample::select(vec![0u8, 0x08, 0x10, 0xc0, 0xd0, 0xc8])) {
        let fib = shared();
        let mut req = RouteGetRequest::to(IpAddr::V4(dst));
        req.tos = tos;
        req.ipproto = Some(1);
        let expected = fib.route_get(&req).map(|a| a.prefsrc).map_err(|e| e.to_string());
        let got = fib.output_source_v4(dst, tos).map(|s| s.map(IpAddr::V4)).map_err(|e| format!("RTNETLINK answers: {}", e.message()));
        prop_assert_eq!(got, expected, "to {} tos {:#x}", dst, tos);
    }

    #[test]
    fn v6_sources_are_route_gets(dst in v6_dst()) {
        let fib = shared();
        let mut req = RouteGetRequest::to(IpAddr::V6(dst));
        req.ipproto = Some(58);
        match (fib.route_get(&req), fib.reply_route_v6(dst)) {
            (Ok(answer), Ok(back)) => {
                prop_assert_eq!(back.prefsrc.map(IpAddr::V6), answer.route.prefsrc, "to {}", dst);
                prop_assert_eq!(back.source.map(IpAddr::V6), answer.prefsrc, "to {}", dst);
                prop_assert_eq!(back.prefix_len, answer.route.dst.len(), "to {}", dst);
            }
            (Err(e), Err(errno)) => prop_assert_eq!(e.to_string(), format!("RTNETLINK answers: {}", errno.message())),
            (a, b) => prop_assert!(false, "to {}: route get {:?}, reply_route_v6 {:?}", dst, a.map(|a| a.prefsrc), b),
        }
    }
}

#[test]
fn own_addresses_v6_follow_ipv6_chk_addr() {
    let mut fib = fib();
    for line in ["addr add fe80::1/64 dev r0 nodad"] {
        let words: Vec<String> = line.split(' ').map(String::from).collect();
        for c in config::parse_words(&words).unwrap() {
            fib.apply(&c).unwrap();
        }
    }
    let r0 = fib.link_by_name("r0").unwrap().index;
    let r1 = fib.link_by_name("r1").unwrap().index;
    let global: Ipv6Addr = "2001:db8:1::1".parse().unwrap();
    let link_local: Ipv6Addr = "fe80::1".parse().unwrap();
    // A global address counts on any link, a link-local one only on its own.
    assert!(fib.is_own_address_v6(global, r0) && fib.is_own_address_v6(global, r1));
    assert!(fib.is_own_address_v6(link_local, r0));
    assert!(!fib.is_own_address_v6(link_local, r1));
    assert!(!fib.is_own_address_v6("2001:db8:1::2".parse().unwrap(), r0));
}
