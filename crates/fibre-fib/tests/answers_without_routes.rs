//! `ip route get` answers the kernel makes up without a FIB route (table 0)
//! and the sources it picks for them, and a zero `from`, each checked
//! against a 6.18 kernel in a namespace with the same links (lo up; ifb
//! links d0, d1, d2 up with the model's MACs 02:fb:00:00:00:0N; 10.0.0.1/24
//! and 2001:db8::1/64 on d0, 10.9.0.1/24 on d1; `-6 route add default dev
//! d0`). Found by the kernel differential test (kernel_diff).

mod common;

use common::*;
use fibre_fib::*;

fn fib() -> Fib {
    let mut fib = router(&["d0", "d1", "d2"]);
    addr(&mut fib, "d0", "10.0.0.1/24").unwrap();
    addr(&mut fib, "d0", "2001:db8::1/64").unwrap();
    addr(&mut fib, "d1", "10.9.0.1/24").unwrap();
    add(
        &mut fib,
        RouteSpec {
            metric: Some(1024),
            ..on("::/0", "d0")
        },
    );
    fib
}

fn request(dst: &str, src: Option<&str>, oif: Option<&str>) -> RouteGetRequest {
    RouteGetRequest {
        src: src.map(ip),
        oif: oif.map(String::from),
        ..RouteGetRequest::to(ip(dst))
    }
}

/// (type, dev, table, prefsrc) of an answer.
fn answer(fib: &Fib, req: RouteGetRequest) -> (String, String, TableId, Option<String>) {
    let a = fib.route_get(&req).unwrap();
    (
        a.kind.name().to_string(),
        a.dev.unwrap_or_default(),
        a.table,
        a.prefsrc.map(|p| p.to_string()),
    )
}

#[test]
fn table_zero_exactly_for_answers_without_a_fib_route() {
    let fib = fib();
    // `0.0.0.0`: local dev lo, no table key, fibmatch "No route to host".
    assert_eq!(answer(&fib, request("0.0.0.0", None, None)).2, TABLE_UNSPEC);
    // `255.255.255.255 oif d0`: broadcast dev d0, no table key.
    assert_eq!(
        answer(&fib, request("255.255.255.255", None, Some("d0"))).2,
        TABLE_UNSPEC
    );
    // `10.5.5.5 oif d2` with no IPv4 route: the on-link guess, no table key.
    let guessed = answer(&fib, request("10.5.5.5", None, Some("d2")));
    assert_eq!((guessed.1.as_str(), guessed.2), ("d2", TABLE_UNSPEC));
    // `10.0.0.7`: the connected route, table main (fibmatch finds it).
    assert_eq!(answer(&fib, request("10.0.0.7", None, None)).2, TABLE_MAIN);
    let fibmatch = RouteGetRequest {
        fibmatch: true,
        ..request("0.0.0.0", None, None)
    };
    assert_eq!(
        fib.route_get(&fibmatch).unwrap_err().to_string(),
        "RTNETLINK answers: No route to host"
    );
}

#[test]
fn a_zero_source_is_no_source() {
    let fib = fib();
    // `10.0.0.7 from 0.0.0.0`: {"dst":"10.0.0.7","dev":"d0","prefsrc":"10.0.0.1"} (no `from`).
    let a = fib
        .route_get(&request("10.0.0.7", Some("0.0.0.0"), None))
        .unwrap();
    assert_eq!(a.src, None);
    assert_eq!(a.prefsrc, Some(ip("10.0.0.1")));
    // `2001:db8::7 from ::`: prefsrc 2001:db8::1.
    let a = fib
        .route_get(&request("2001:db8::7", Some("::"), None))
        .unwrap();
    assert_eq!(a.prefsrc, Some(ip("2001:db8::1")));
}

#[test]
fn zero_destination_with_an_oif_takes_the_oif_address() {
    let fib = fib();
    let local = |oif: Option<&str>| answer(&fib, request("0.0.0.0", None, oif));
    // `0.0.0.0 oif d1`: local dev lo prefsrc 10.9.0.1.
    assert_eq!(
        local(Some("d1")),
        (
            "local".into(),
            "lo".into(),
            TABLE_UNSPEC,
            Some("10.9.0.1".into())
        )
    );
    // `0.0.0.0 oif d2` (no IPv4 address there): the first device's, lo's 127.0.0.1.
    assert_eq!(local(Some("d2")).3.as_deref(), Some("127.0.0.1"));
    // `0.0.0.0`: 127.0.0.1.
    assert_eq!(local(None).3.as_deref(), Some("127.0.0.1"));
}

#[test]
fn the_unspecified_ipv6_destination_prefers_the_smallest_scope() {
    let fib = fib();
    // `::` and `:: oif d0`: dev d0 prefsrc fe80::fb:ff:fe00:2 (d0's
    // link-local), not 2001:db8::1: `::` has scope -1, below link-local.
    for oif in [None, Some("d0")] {
        let a = answer(&fib, request("::", None, oif));
        assert_eq!(
            (a.1.as_str(), a.3.as_deref()),
            ("d0", Some("fe80::fb:ff:fe00:2"))
        );
    }
}

/// Which TOS bits rules see. Kernel-checked (6.18; d0 with 10.0.0.1/24 and
/// 2001:db8::1/64, `-4 rule add pref 100 tos 0x18 table 100`, `-6 rule add
/// pref 100 tos 0xb8 table 100`, prohibit routes for both subnets in table
/// 100): IPv4 tos 0x18, 0x38, 0xb8 are "Permission denied", 0x1c answers
/// (IPTOS_RT_MASK); IPv6 tos 0xb8 is "Permission denied", 0x18 and 0xbc
/// answer (the whole DSCP). Found by kernel_diff once IPv6 queries had tos.
#[test]
fn rules_see_the_rt_tos_bits_for_ipv4_and_the_dscp_for_ipv6() {
    let mut fib = fib();
    for (family, tos, dst) in [
        (Family::V4, 0x18, "10.0.0.0/24"),
        (Family::V6, 0xb8, "2001:db8::/64"),
    ] {
        let mut spec = rule_spec(family, RuleAction::Lookup(100));
        spec.priority = Some(100);
        spec.tos = tos;
        rule(&mut fib, spec).unwrap();
        add(
            &mut fib,
            RouteSpec {
                table: 100,
                ..typed(RouteType::Prohibit, dst)
            },
        );
    }
    let get = |dst: &str, tos: u8| {
        let req = RouteGetRequest {
            tos,
            ..RouteGetRequest::to(ip(dst))
        };
        fib.route_get(&req).map(|_| ()).map_err(|e| e.to_string())
    };
    let denied = Err("RTNETLINK answers: Permission denied".to_string());
    for tos in [0x18, 0x38, 0xb8] {
        assert_eq!(get("10.0.0.7", tos), denied, "IPv4 tos {tos:#x}");
    }
    assert_eq!(get("10.0.0.7", 0x1c), Ok(()));
    assert_eq!(get("2001:db8::7", 0xb8), denied);
    for tos in [0x18, 0xbc] {
        assert_eq!(get("2001:db8::7", tos), Ok(()), "IPv6 tos {tos:#x}");
    }
}
