//! The burst lookups answer exactly what the per-key lookups answer, for
//! random FIBs (both families, every route type, throw, multipath, TOS,
//! several tables, policy rules with every selector, `not`, goto, nop,
//! reject actions and suppressors, or no rule at all: IPv4's merged fast
//! path) and random bursts of keys, output and input, across chunk
//! boundaries.

use fibre_fib::burst::BURST_CHUNK;
use fibre_fib::{config, Errno, Fib, FlowKeyV4, FlowKeyV6, Forward, Forward6};
use proptest::prelude::*;

/// Links d0 (up), d1 (up), d2 (down), lo up; each with IPv4 and IPv6 addresses.
const BASE: &str = "link set lo up
link add d0 type ifb
link set d0 up
link add d1 type ifb
link set d1 up
link add d2 type ifb
addr add 10.0.0.1/24 dev d0
addr add 10.1.0.1/24 dev d1
addr add 10.2.0.1/24 dev d2
addr add 2001:db8::1/64 dev d0
addr add 2001:db8:1::1/64 dev d1
";

const PREFIXES_V4: [&str; 9] = [
    "192.0.2.0/24",
    "192.0.2.128/25",
    "198.51.100.0/24",
    "203.0.113.0/24",
    "0.0.0.0/0",
    "10.0.0.0/16",
    "192.0.2.7/32",
    "10.0.0.255/32",
    "203.0.113.64/26",
];

const PREFIXES_V6: [&str; 8] = [
    "2001:db8:f::/48",
    "2001:db8:f:1::/64",
    "2001:db8:e::/48",
    "::/0",
    "2001:db8::/32",
    "2001:db8:f::7/128",
    "2001:db8:e:5::/64",
    "2001:db8:1::/56",
];

const TABLES: [&str; 4] = ["main", "100", "200", "local"];

/// One route of kind `kind` for `p` in table `t`; `six` picks the
/// family's gateways and the kinds only it has (IPv4: broadcast, TOS, our
/// own address as gateway, `src`; IPv6: anycast, a link-local gateway,
/// metrics).
fn route(six: bool, kind: u8, p: &str, t: &str) -> String {
    let (g0, g1) = if six {
        ("2001:db8::9", "2001:db8:1::9")
    } else {
        ("10.0.0.9", "10.1.0.9")
    };
    let body = match (kind, six) {
        (0, _) => format!("{p} via {g0}"),
        (1, _) => format!("{p} via {g1} dev d1"),
        (2, _) => format!("{p} dev d1"),
        (3, _) => format!("unreachable {p}"),
        (4, _) => format!("prohibit {p}"),
        (5, _) => format!("blackhole {p}"),
        (6, _) => format!("throw {p}"),
        (7, _) => format!("local {p} dev lo"),
        (8, false) => format!("broadcast {p} dev d0"),
        (8, true) => format!("anycast {p} dev d0"),
        // The table before the paths: `nexthop` takes the rest of the line.
        (9, _) => {
            return format!("route add {p} table {t} nexthop via {g0} nexthop via {g1} weight 3")
        }
        (10, false) => format!("{p} tos 0x10 via {g1}"),
        (10, true) => format!("{p} via fe80::9 dev d1"),
        (11, false) => format!("{p} via 10.0.0.1"),
        (11, true) => format!("{p} via {g0} metric 5"),
        (12, _) => format!("multicast {p} dev d1"),
        (13, false) => format!("{p} via {g0} src 10.0.0.1 mtu 1400"),
        (13, true) => format!("{p} via {g1} dev d1 metric 5"),
        (14, _) => format!("{p} dev d2"),
        _ => format!("{p} via {g1} dev d1 metric 7"),
    };
    format!("route add {body} table {t}")
}

/// One policy rule of family `six` (the `-6` prefix) and kind `kind`,
/// priority `pref`, pointing at table `t`, with `p` / `q` for selectors.
fn rule(six: bool, kind: u8, pref: u32, t: &str, p: &str, aux: u32) -> String {
    let fam = if six { "-6 " } else { "" };
    let body = match kind {
        0 => format!("from {p} table {t}"),
        1 => format!("to {p} table {t}"),
        2 => format!("iif d0 table {t}"),
        3 => format!("iif lo table {t}"),
        4 => format!("oif d1 table {t}"),
        5 => format!("fwmark 1 table {t}"),
        6 => "not fwmark 0xca6c table 200".to_string(),
        7 => "table main suppress_prefixlength 0".to_string(),
        8 => format!("table {t} suppress_prefixlength {}", aux % 65),
        9 => format!("table {t} suppress_ifgroup 0"),
        10 => format!("tos 0x10 table {t}"),
        11 => format!("goto {}", pref + aux % 300),
        12 => "nop".to_string(),
        13 => format!("to {p} blackhole"),
        14 => format!("from {p} unreachable"),
        15 => "fwmark 0x1/0x1 prohibit".to_string(),
        16 => format!("not to {p} table {t}"),
        17 => format!("iif d1 oif d0 table {t}"),
        _ => format!("table {t}"),
    };
    format!("{fam}rule add pref {pref} {body}")
}

/// A configuration line: a route of either family, or a rule.
#[derive(Debug, Clone)]
enum Line {
    V4(u8, usize, usize),
    V6(u8, usize, usize),
    Rule(bool, u8, u32, usize, usize, u32),
}

fn line() -> impl Strategy<Value = Line> {
    prop_oneof![
        4 => (0u8..16, 0..PREFIXES_V4.len(), 0..TABLES.len()).prop_map(|(k, p, t)| Line::V4(k, p, t)),
        4 => (0u8..16, 0..PREFIXES_V6.len(), 0..TABLES.len()).prop_map(|(k, p, t)| Line::V6(k, p, t)),
        2 => (any::<bool>(), 0u8..19, 1u32..1000, 0..3usize, 0..9usize, any::<u32>())
            .prop_map(|(s, k, pref, t, p, aux)| Line::Rule(s, k, pref, t, p, aux)),
    ]
}

fn text_of(lines: &[Line]) -> String {
    let mut text = BASE.to_string();
    for l in lines {
        let s = match *l {
            Line::V4(k, p, t) => route(false, k, PREFIXES_V4[p], TABLES[t]),
            Line::V6(k, p, t) => route(true, k, PREFIXES_V6[p], TABLES[t]),
            Line::Rule(six, k, pref, t, p, aux) => {
                let prefix = if six {
                    PREFIXES_V6[p % PREFIXES_V6.len()]
                } else {
                    PREFIXES_V4[p]
                };
                rule(six, k, pref, TABLES[t], prefix, aux)
            }
        };
        text.push_str(&s);
        text.push('\n');
    }
    text
}

/// The FIB of `BASE` and `lines`, refused lines skipped (as `-force`).
fn fib_of(lines: &[Line]) -> Fib {
    config::apply_str(&Fib::new(), "burst.conf", &text_of(lines), true)
        .expect("every generated line parses")
        .0
}

const DSTS_V4: [u32; 16] = [
    0xc000_0207, // 192.0.2.7
    0xc000_02c8, // 192.0.2.200
    0xc000_0250, // 192.0.2.80
    0xc633_6409, // 198.51.100.9
    0xcb00_7105, // 203.0.113.5
    0xcb00_7150, // 203.0.113.80
    0x0a00_0001, // 10.0.0.1
    0x0a00_00ff, // 10.0.0.255
    0x0a00_0007, // 10.0.0.7
    0x0a01_0007, // 10.1.0.7
    0x0a02_0001, // 10.2.0.1
    0xffff_ffff, // 255.255.255.255
    0x0000_0000, // 0.0.0.0
    0x7f00_0001, // 127.0.0.1
    0xe000_0001, // 224.0.0.1
    0x0808_0808, // 8.8.8.8
];

const SRCS_V4: [u32; 8] = [
    0x0a00_0009, // 10.0.0.9
    0x0a01_0009, // 10.1.0.9
    0x0a00_0001, // 10.0.0.1 (ours)
    0,
    0x7f00_0001,
    0xc000_0205, // 192.0.2.5
    0xc633_6407, // 198.51.100.7
    0x0a00_00ff, // 10.0.0.255
];

const DSTS_V6: [u128; 12] = [
    0x2001_0db8_000f_0000_0000_0000_0000_0007,
    0x2001_0db8_000f_0001_0000_0000_0000_0005,
    0x2001_0db8_000e_0005_0000_0000_0000_0001,
    0x2001_0db8_000e_0000_0000_0000_0000_0001,
    0x2001_0db8_0000_0000_0000_0000_0000_0001,
    0x2001_0db8_0000_0000_0000_0000_0000_0007,
    0x2001_0db8_0001_0000_0000_0000_0000_0001,
    0x2001_0db8_0001_0000_0000_0000_0000_0009,
    0xfe80_0000_0000_0000_0000_0000_0000_0001,
    0xff02_0000_0000_0000_0000_0000_0000_0001,
    0x0000_0000_0000_0000_0000_0000_0000_0001,
    0x2a00_0000_0000_0000_0000_0000_0000_0001,
];

const SRCS_V6: [u128; 5] = [
    0,
    0x2001_0db8_0000_0000_0000_0000_0000_0009,
    0x2001_0db8_0001_0000_0000_0000_0000_0001,
    0x2001_0db8_000f_0000_0000_0000_0000_0005,
    0xfe80_0000_0000_0000_0000_0000_0000_0009,
];

/// A key's fields, drawn: destination and source (from the pools or
/// anywhere), oif, mark, TOS, protocol and ports.
type Draw = (usize, u32, usize, u32, u8, u8, u8, u16);

fn draw() -> impl Strategy<Value = Draw> {
    (
        0usize..20,
        any::<u32>(),
        0usize..10,
        0u32..5,
        prop::sample::select(vec![0u32, 1, 0xca6c, 3]),
        prop::sample::select(vec![0u8, 0x10, 0x14, 0xb8]),
        prop::sample::select(vec![0u8, 6, 17]),
        any::<u16>(),
    )
        .prop_map(|(d, r, s, oif, mark, tos, proto, port)| {
            (d, r, s, oif, mark as u8, tos, proto, port)
        })
}

fn key_v4(&(d, r, s, oif, mark, tos, proto, port): &Draw) -> FlowKeyV4 {
    let mark = [0u32, 1, 0xca6c, 3][usize::from(mark) % 4];
    FlowKeyV4 {
        dst: DSTS_V4.get(d).copied().unwrap_or(r),
        src: SRCS_V4.get(s).copied().unwrap_or(r.rotate_left(7)),
        oif,
        mark,
        tos,
        proto,
        sport: port,
        dport: port.rotate_left(3),
        ..Default::default()
    }
}

fn key_v6(&(d, r, s, oif, mark, tos, proto, port): &Draw) -> FlowKeyV6 {
    let mark = [0u32, 1, 0xca6c, 3][usize::from(mark) % 4];
    let random = (0x2001_0db8_u128 << 96) | (u128::from(r) << 64) | u128::from(r);
    FlowKeyV6 {
        dst: DSTS_V6.get(d).copied().unwrap_or(random),
        src: SRCS_V6.get(s).copied().unwrap_or(random ^ 0xff),
        oif,
        mark,
        tos,
        proto,
        sport: port,
        dport: port.rotate_left(3),
        ..Default::default()
    }
}

/// Both paths' answers for one family and form.
fn compare<K, A: Copy + PartialEq + std::fmt::Debug>(
    keys: &[K],
    per_key: impl Fn(&[K], &mut [Result<A, Errno>]),
    burst: impl Fn(&[K], &mut [Result<A, Errno>]),
    what: &str,
) -> Result<(), TestCaseError> {
    let mut want = vec![Err(Errno::Perm); keys.len()];
    let mut got = vec![Err(Errno::Srch); keys.len()];
    per_key(keys, &mut want);
    burst(keys, &mut got);
    for (i, (w, g)) in want.iter().zip(&got).enumerate() {
        prop_assert_eq!(w, g, "{} key {}", what, i);
    }
    Ok(())
}

fn check_all(fib: &Fib, draws: &[Draw], iif: u32) -> Result<(), TestCaseError> {
    let v4: Vec<FlowKeyV4> = draws.iter().map(key_v4).collect();
    let v6: Vec<FlowKeyV6> = draws.iter().map(key_v6).collect();
    compare::<_, Forward>(
        &v4,
        |k, o| fib.lookup_output_batch_v4(k, o),
        |k, o| fib.lookup_output_burst_v4(k, o),
        "output v4",
    )?;
    compare::<_, Forward6>(
        &v6,
        |k, o| fib.lookup_output_batch_v6(k, o),
        |k, o| fib.lookup_output_burst_v6(k, o),
        "output v6",
    )?;
    compare::<_, Forward>(
        &v4,
        |k, o| fib.lookup_input_batch_v4(iif, k, o),
        |k, o| fib.lookup_input_burst_v4(iif, k, o),
        "input v4",
    )?;
    compare::<_, Forward6>(
        &v6,
        |k, o| fib.lookup_input_batch_v6(iif, k, o),
        |k, o| fib.lookup_input_burst_v6(iif, k, o),
        "input v6",
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    /// Random FIBs and bursts (up to three chunks): the same answer per key.
    #[test]
    fn bursts_answer_as_the_per_key_path(
        lines in prop::collection::vec(line(), 0..40),
        draws in prop::collection::vec(draw(), 1..(3 * BURST_CHUNK)),
        iif in 1u32..6,
    ) {
        let fib = fib_of(&lines);
        check_all(&fib, &draws, iif)?;
    }

    /// With the wg-quick rules in front (`not fwmark 0xca6c table 51820`,
    /// `table main suppress_prefixlength 0`) and a default route in 51820.
    #[test]
    fn bursts_answer_as_the_per_key_path_behind_wg_quick_rules(
        lines in prop::collection::vec(line(), 0..24),
        draws in prop::collection::vec(draw(), 1..200),
        iif in 1u32..6,
    ) {
        let mut text = text_of(&lines);
        for six in ["", "-6 "] {
            text.push_str(&format!("{six}rule add not fwmark 0xca6c table 51820\n"));
            text.push_str(&format!("{six}rule add table main suppress_prefixlength 0\n"));
        }
        text.push_str("route add default dev d1 table 51820\nroute add ::/0 dev d1 table 51820\n");
        let fib = config::apply_str(&Fib::new(), "wg.conf", &text, true).expect("parses").0;
        check_all(&fib, &draws, iif)?;
    }
}

/// Every generated line parses (a typo would silently shrink what the
/// properties cover: `-force` skips refused lines, parse errors too), and
/// every kind applies to some FIB.
#[test]
fn every_generated_line_parses_and_applies() {
    let mut lines = Vec::new();
    for k in 0..16 {
        lines.push(Line::V4(k, 0, 0));
        lines.push(Line::V6(k, 0, 1));
    }
    for k in 0..19 {
        lines.push(Line::Rule(k % 2 == 0, k, 100 + u32::from(k), 1, 2, 50));
    }
    for l in lines {
        let text = text_of(std::slice::from_ref(&l));
        let parsed = config::parse_str("one.conf", &text);
        assert!(
            parsed.diagnostics.is_empty(),
            "{l:?}: {:?}",
            parsed.diagnostics
        );
        let (_, skipped) = config::apply_str(&Fib::new(), "one.conf", &text, true).expect("parses");
        // Only the routes through the down link d2 are refused.
        let down = matches!(l, Line::V4(14, ..) | Line::V6(14, ..));
        assert_eq!(skipped.len(), usize::from(down), "{l:?}: {skipped:?}");
    }
}

/// An input burst on a link that does not exist answers `NoDev`, as the
/// per-key batch does; an empty burst is fine.
#[test]
fn input_bursts_on_a_missing_link_and_empty_bursts() {
    let fib = fib_of(&[]);
    let keys = [FlowKeyV4 {
        dst: 0xc000_0207,
        src: 0x0a00_0009,
        ..Default::default()
    }];
    let mut out = [Ok(Forward {
        gateway: 0,
        dev: 0,
        table: 0,
        kind: fibre_fib::RouteType::Unicast,
        cache_class: 0,
    })];
    fib.lookup_input_burst_v4(99, &keys, &mut out);
    assert_eq!(out[0], Err(Errno::NoDev));
    fib.lookup_output_burst_v4(&[], &mut []);
    fib.lookup_input_burst_v6(2, &[], &mut []);
}
