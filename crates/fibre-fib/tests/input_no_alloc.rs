//! The data-path input lookups allocate nothing per packet, on every
//! branch (local delivery, broadcast, forwarding, multipath, rejects,
//! martians, source validation through the rules): counted by a global
//! allocator wrapper, on this thread only.

use std::net::{Ipv4Addr, Ipv6Addr};

use fibre_fib::{config, Errno, Fib, FlowKeyV4, FlowKeyV6, Forward, Forward6};
use fibre_testkit::CountingAllocator;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn allocations() -> u64 {
    CountingAllocator::allocations()
}

const CONFIG: &str = "link set lo up
link add d0 type ifb
link set d0 up
link add d1 type ifb
link set d1 up
addr add 10.0.0.1/24 dev d0
addr add 10.1.0.1/24 dev d1
addr add 2001:db8::1/64 dev d0
addr add 2001:db8:1::1/64 dev d1
route add 192.0.2.0/24 via 10.0.0.9
route add 198.51.100.0/24 nexthop via 10.0.0.9 nexthop via 10.1.0.9
route add 203.0.113.0/24 via 10.0.0.1
route add unreachable 192.0.2.128/25
route add prohibit 192.0.2.64/26
route add broadcast 192.0.2.32/27 dev d0
route add 2001:db8:f::/48 via 2001:db8::9
route add 2001:db8:e::/48 nexthop via 2001:db8::9 nexthop via 2001:db8:1::9
route add unreachable 2001:db8:d::/48
";

/// With `rules`, a policy rule too: lookups and source validation go
/// through the rules instead of the merged local+main fast path.
fn fib(rules: bool) -> Fib {
    let text = if rules {
        format!("{CONFIG}rule add from 10.9.0.0/16 table 100\nroute add 192.0.2.0/24 table 100 via 10.1.0.9\n")
    } else {
        CONFIG.to_string()
    };
    config::apply_str(&Fib::new(), "t.conf", &text, false)
        .expect("the configuration applies")
        .0
}

fn keys_v4() -> Vec<FlowKeyV4> {
    let dsts = [
        "192.0.2.7",
        "192.0.2.130",
        "192.0.2.70",
        "192.0.2.40",
        "198.51.100.9",
        "203.0.113.5",
        "10.0.0.1",
        "10.0.0.255",
        "10.1.0.7",
        "255.255.255.255",
        "8.8.8.8",
        "127.0.0.1",
    ];
    let srcs = ["10.1.0.9", "10.9.1.1", "10.0.0.1", "10.1.0.255", "0.0.0.0"];
    let mut keys = Vec::new();
    for (i, d) in dsts.iter().enumerate() {
        for s in srcs {
            keys.push(FlowKeyV4 {
                dst: u32::from(d.parse::<Ipv4Addr>().unwrap()),
                src: u32::from(s.parse::<Ipv4Addr>().unwrap()),
                proto: 17,
                sport: 1000 + i as u16,
                dport: 53,
                ..Default::default()
            });
        }
    }
    keys
}

fn keys_v6() -> Vec<FlowKeyV6> {
    let dsts = [
        "2001:db8:f::7",
        "2001:db8:e::7",
        "2001:db8:d::7",
        "2001:db8::1",
        "2001:db8::9",
        "fe80::1",
        "3fff::1",
    ];
    dsts.iter()
        .enumerate()
        .map(|(i, d)| FlowKeyV6 {
            dst: u128::from(d.parse::<Ipv6Addr>().unwrap()),
            src: u128::from("2001:db8:1::9".parse::<Ipv6Addr>().unwrap()),
            proto: 6,
            sport: 2000 + i as u16,
            dport: 443,
            ..Default::default()
        })
        .collect()
}

#[test]
fn input_lookups_allocate_nothing_per_packet() {
    for rules in [false, true] {
        let fib = fib(rules);
        let v4 = keys_v4();
        let v6 = keys_v6();
        let mut out4: Vec<Result<Forward, Errno>> = vec![Err(Errno::Inval); v4.len()];
        let mut out6: Vec<Result<Forward6, Errno>> = vec![Err(Errno::Inval); v6.len()];
        // The answers cover every kind of outcome, so that the count below
        // is over every branch.
        fib.lookup_input_batch_v4(3, &v4, &mut out4);
        let kinds = |k| out4.iter().any(|r| r.is_ok_and(|f| f.kind == k));
        assert!(kinds(fibre_fib::RouteType::Unicast) && kinds(fibre_fib::RouteType::Local));
        assert!(kinds(fibre_fib::RouteType::Broadcast));
        for e in [
            Errno::Inval,
            Errno::HostUnreach,
            Errno::Acces,
            Errno::NetUnreach,
        ] {
            assert!(
                out4.contains(&Err(e)),
                "rules {rules}: no {e:?} in {out4:?}"
            );
        }
        let before = allocations();
        for _ in 0..1000 {
            for iif in [2, 3, 99] {
                fib.lookup_input_batch_v4(iif, &v4, &mut out4);
                fib.lookup_input_batch_v6(iif, &v6, &mut out6);
            }
        }
        assert_eq!(allocations() - before, 0, "rules {rules}");
    }
}
