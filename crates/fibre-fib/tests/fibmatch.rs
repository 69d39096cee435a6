//! `ip route get fibmatch`: the matched FIB route as the kernel reports it,
//! checked against a 6.18 kernel in a namespace (ifb d0 up, 10.0.0.1/24 on
//! it, `route add local 0.0.0.0/0 dev d0`, `route add 198.16.0.0/12 table
//! local via 10.0.0.5 dev d0`). Found by the kernel differential test once
//! it asked fibre for `fibmatch` too.

mod common;

use common::*;
use fibre_fib::*;

fn fib() -> Fib {
    let mut fib = router(&["d0"]);
    addr(&mut fib, "d0", "10.0.0.1/24").unwrap();
    add(
        &mut fib,
        RouteSpec {
            table: TABLE_LOCAL,
            kind: RouteType::Local,
            scope: Scope::HOST,
            ..on("0.0.0.0/0", "d0")
        },
    );
    add(
        &mut fib,
        RouteSpec {
            table: TABLE_LOCAL,
            ..via("198.16.0.0/12", "10.0.0.5", Some("d0"))
        },
    );
    fib
}

/// (type, prefix, table) of the route `fibmatch DST` reports.
fn fibmatch(fib: &Fib, dst: &str) -> (RouteType, String, TableId) {
    let req = RouteGetRequest {
        fibmatch: true,
        ..RouteGetRequest::to(ip(dst))
    };
    let a = fib.route_get(&req).unwrap();
    (a.route.kind, a.route.dst.to_string(), a.route.table)
}

#[test]
fn the_route_is_reported_in_the_table_and_with_the_type_of_the_answer() {
    let mut fib = fib();
    // {"type":"broadcast","dst":"default","dev":"d0","scope":"host"}: the
    // answer's type, and main (no table key) while local and main merge.
    assert_eq!(
        fibmatch(&fib, "255.255.255.255"),
        (RouteType::Broadcast, "default".into(), TABLE_MAIN)
    );
    // {"dst":"198.16.0.0/12","gateway":"10.0.0.5","dev":"d0"}.
    assert_eq!(
        fibmatch(&fib, "198.16.0.1"),
        (RouteType::Unicast, "198.16.0.0/12".into(), TABLE_MAIN)
    );
    assert_eq!(fibmatch(&fib, "10.0.0.1").2, TABLE_MAIN);
    // After `rule add pref 100 fwmark 9 table 100` the tables are apart:
    // {"dst":"198.16.0.0/12",...,"table":"local"}, and 10.0.0.1's local
    // route says table local too.
    let mut spec = rule_spec(Family::V4, RuleAction::Lookup(100));
    spec.priority = Some(100);
    spec.fwmark = Some((9, u32::MAX));
    rule(&mut fib, spec).unwrap();
    assert_eq!(fibmatch(&fib, "198.16.0.1").2, TABLE_LOCAL);
    assert_eq!(
        fibmatch(&fib, "10.0.0.1"),
        (RouteType::Local, "10.0.0.1".into(), TABLE_LOCAL)
    );
}
