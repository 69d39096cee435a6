//! A burst lookup allocates nothing: output and input, both families, with
//! and without policy rules (IPv4's merged fast path, the rule walk with
//! goto, suppressors and several tables), bursts of 1 to 300 keys (across
//! chunk boundaries), counted by a global allocator wrapper on this thread.

use fibre_fib::{config, Errno, Fib, FlowKeyV4, FlowKeyV6, Forward, Forward6, RouteType};
use fibre_testkit::CountingAllocator;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

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
route add unreachable 192.0.2.128/25
route add throw 203.0.113.0/24
route add 2001:db8:f::/48 via 2001:db8::9
route add 2001:db8:e::/48 nexthop via 2001:db8::9 nexthop via 2001:db8:1::9
route add unreachable 2001:db8:d::/48
route add throw 2001:db8:c::/48
";

const RULES: &str = "rule add pref 10 goto 20
rule add pref 20 not fwmark 0xca6c table 51820
rule add pref 30 table main suppress_prefixlength 0
rule add pref 40 from 10.9.0.0/16 prohibit
-6 rule add pref 20 not fwmark 0xca6c table 51820
-6 rule add pref 30 table main suppress_prefixlength 0
route add default dev d1 table 51820
route add 203.0.113.0/24 via 10.1.0.9 table 51820
route add ::/0 dev d1 table 51820
";

fn fib(rules: bool) -> Fib {
    let text = if rules {
        format!("{CONFIG}{RULES}")
    } else {
        CONFIG.to_string()
    };
    config::apply_str(&Fib::new(), "t.conf", &text, false)
        .expect("the configuration applies")
        .0
}

fn keys(n: usize) -> (Vec<FlowKeyV4>, Vec<FlowKeyV6>) {
    let dsts4 = [
        0xc000_0207u32,
        0xc000_0290,
        0xc633_6409,
        0xcb00_7105,
        0x0a00_0001,
        0x0a00_00ff,
        0x0808_0808,
        0xffff_ffff,
        0,
    ];
    let dsts6 = [
        0x2001_0db8_000f_u128 << 80 | 7,
        0x2001_0db8_000e_u128 << 80 | 7,
        0x2001_0db8_000d_u128 << 80 | 7,
        0x2001_0db8_000c_u128 << 80 | 7,
        0x2001_0db8_u128 << 96 | 1,
        0x2a00_u128 << 112 | 1,
    ];
    let v4 = (0..n)
        .map(|i| FlowKeyV4 {
            dst: dsts4[i % dsts4.len()],
            src: [0x0a01_0009, 0x0a09_0101, 0][i % 3],
            mark: [0, 0xca6c][i % 2],
            proto: 17,
            sport: i as u16,
            dport: 53,
            ..Default::default()
        })
        .collect();
    let v6 = (0..n)
        .map(|i| FlowKeyV6 {
            dst: dsts6[i % dsts6.len()],
            src: [0, 0x2001_0db8_0001_u128 << 80 | 9][i % 2],
            mark: [0, 0xca6c][i % 2],
            proto: 6,
            sport: i as u16,
            dport: 443,
            ..Default::default()
        })
        .collect();
    (v4, v6)
}

#[test]
fn bursts_allocate_nothing() {
    for rules in [false, true] {
        let fib = fib(rules);
        for n in [1, 32, 96, 97, 256, 300] {
            let (v4, v6) = keys(n);
            let mut out4: Vec<Result<Forward, Errno>> = vec![Err(Errno::Inval); n];
            let mut out6: Vec<Result<Forward6, Errno>> = vec![Err(Errno::Inval); n];
            let mut want4 = out4.clone();
            let mut want6 = out6.clone();
            // The bursts below cover answers of every kind.
            fib.lookup_output_burst_v4(&v4, &mut out4);
            fib.lookup_output_batch_v4(&v4, &mut want4);
            assert_eq!(out4, want4, "rules {rules}, {n} keys");
            fib.lookup_output_burst_v6(&v6, &mut out6);
            fib.lookup_output_batch_v6(&v6, &mut want6);
            assert_eq!(out6, want6, "rules {rules}, {n} keys");
            if n >= 32 {
                assert!(out4
                    .iter()
                    .any(|r| r.is_ok_and(|f| f.kind == RouteType::Unicast)));
                assert!(out4.contains(&Err(Errno::HostUnreach)));
                assert!(out6.iter().any(|r| r.is_ok()) && out6.iter().any(|r| r.is_err()));
            }
            let before = CountingAllocator::allocations();
            for _ in 0..200 {
                fib.lookup_output_burst_v4(&v4, &mut out4);
                fib.lookup_output_burst_v6(&v6, &mut out6);
                for iif in [2, 3, 99] {
                    fib.lookup_input_burst_v4(iif, &v4, &mut out4);
                    fib.lookup_input_burst_v6(iif, &v6, &mut out6);
                }
            }
            assert_eq!(
                CountingAllocator::allocations() - before,
                0,
                "rules {rules}, {n} keys"
            );
        }
    }
}
