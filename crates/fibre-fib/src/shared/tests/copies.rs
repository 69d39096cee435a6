//! One working copy: after any stream of batches the writer's working copy
//! and the published version equal a plain FIB that applied the accepted
//! commands, and every version published earlier still answers as it did
//! when published (the working copy shares chunks with it, and writing to
//! them must copy them first).

use std::net::{IpAddr, Ipv6Addr};

use proptest::prelude::*;

use super::fixtures::*;
use crate::shared::{BatchMode, FibWriter};
use crate::*;

/// A random command over a small world (two links, a few prefixes and
/// gateways), so that refusals of every kind happen often.
fn command() -> impl Strategy<Value = Command> {
    let dev = prop::sample::select(vec!["d0", "d1", "d2"]);
    prop_oneof![
        (0u16..6, 2u16..6, 0u8..5).prop_map(|(n, g, op)| {
            let op = [
                RouteOp::Add,
                RouteOp::Replace,
                RouteOp::Append,
                RouteOp::Change,
                RouteOp::Prepend,
            ][usize::from(op)];
            route_via(op, dst(n), g)
        }),
        (0u16..6).prop_map(|n| route_del(dst(n))),
        (0u16..6, 1u16..4).prop_map(|(n, g)| {
            // Gateway 1 is our own address: refused as invalid.
            route_via(RouteOp::Add, dst(n), g)
        }),
        (dev.clone(), any::<bool>()).prop_map(|(d, up)| link_set(d, up)),
        dev.clone().prop_map(|d| Command::LinkAdd {
            name: d.into(),
            kind: LinkKind::Ifb,
            mtu: None
        }),
        dev.clone()
            .prop_map(|d| Command::LinkDel { name: d.into() }),
        (dev, 1u16..4, any::<bool>()).prop_map(|(d, host, add)| {
            let local = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, host));
            Command::Addr {
                op: if add { AddrOp::Add } else { AddrOp::Del },
                spec: addr_spec(d, local, 64),
            }
        }),
        (0u16..6, 1000u32..1003).prop_map(|(n, prio)| Command::Rule {
            op: RuleOp::Add,
            spec: RuleSpec {
                priority: Some(prio),
                from: Some(dst(n)),
                action: Some(RuleAction::Lookup(TABLE_MAIN)),
                ..RuleSpec::new(Family::V6)
            },
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn working_and_published_copies_equal_a_plain_fib(
        batches in prop::collection::vec(
            (prop::collection::vec(command(), 0..8), any::<bool>()),
            1..12,
        ),
    ) {
        let mut writer = FibWriter::new(router());
        let mut reader = writer.shared().reader();
        let mut plain = router();
        let mut version = 0;
        let mut kept = Vec::new();
        for (commands, all_or_nothing) in &batches {
            let mode = if *all_or_nothing { BatchMode::AllOrNothing } else { BatchMode::BestEffort };
            let mut candidate = plain.clone();
            let refused: Vec<usize> = commands
                .iter()
                .enumerate()
                .filter_map(|(i, c)| candidate.apply(c).is_err().then_some(i))
                .collect();
            let report = writer.apply_batch(commands, mode).unwrap();
            prop_assert_eq!(report.refused.iter().map(|r| r.index).collect::<Vec<_>>(), refused.clone());
            let publishes = !commands.is_empty() && (mode == BatchMode::BestEffort || refused.is_empty());
            if publishes {
                plain = candidate;
                version += 1;
                prop_assert_eq!(report.published, Some(version));
                kept.push((writer.fib().clone(), dump(&plain)));
            } else {
                prop_assert_eq!(report.published, None);
            }
            let seen = reader.batch(|s| (s.version(), dump(s.fib())));
            prop_assert_eq!(seen, (version, dump(&plain)));
            prop_assert!(local_index_agrees(&plain));
            // Clones of earlier versions: unchanged by later batches.
            for (old, old_dump) in &kept {
                prop_assert_eq!(&dump(old), old_dump);
            }
        }
        writer.sync().unwrap();
        let (published, working) = writer.published_and_working();
        prop_assert_eq!(dump(published), dump(working));
        prop_assert_eq!(dump(published), dump(&plain));
    }
}

/// The hashed set of our addresses holds exactly the addresses listed on
/// the links.
fn local_index_agrees(fib: &Fib) -> bool {
    let listed: std::collections::HashSet<IpAddr> = fib
        .addrs_v4
        .values()
        .chain(fib.addrs_v6.values())
        .flatten()
        .map(|a| a.local)
        .collect();
    listed.iter().all(|a| fib.is_local_address(a)) && fib.local_addrs.distinct() == listed.len()
}

/// The records a route command may change besides the routes themselves,
/// in an order that does not depend on hashing.
fn records(fib: &Fib) -> String {
    let tables: Vec<_> = fib
        .tables
        .iter()
        .map(|(id, t)| (*id, t.created_v4, t.created_v6))
        .collect();
    let mut gateways: Vec<String> = fib
        .host_scope_gateways
        .iter()
        .map(|k| format!("{k:?}"))
        .collect();
    gateways.sort();
    let classes: std::collections::BTreeMap<_, _> = fib.cache_classes.iter().collect();
    format!(
        "{tables:?}\n{}\n{}\n{gateways:?}\n{classes:?}\n",
        fib.table_seq, fib.custom_local_routes
    )
}

/// One `ip route` command over a small world of both families: prefixes
/// that share addresses (/0, /1, host routes), our own addresses as
/// gateways (IPv4: kept as host-scope gateways) and as sources, MTUs
/// (cache classes), other tables (created on first use, even by a refused
/// add) and types that go to table local.
fn route_line() -> impl Strategy<Value = String> {
    let op = prop::sample::select(vec!["add", "replace", "append", "prepend", "change", "del"]);
    let v4 = prop::sample::select(vec![
        "0.0.0.0/0",
        "0.0.0.0/1",
        "10.1.0.0/16",
        "10.1.0.0/24",
        "10.1.0.7",
        "198.51.100.0/24",
    ]);
    let v6 = prop::sample::select(vec![
        "::/0",
        "::/1",
        "2001:db8:f::/48",
        "2001:db8:f::/64",
        "2001:db8:f::7",
    ]);
    let via4 = prop::sample::select(vec![
        "via 192.0.2.1",
        "via 192.0.2.9",
        "via 192.0.2.9 dev d0",
        "dev d1",
        "",
    ]);
    let via6 = prop::sample::select(vec![
        "via 2001:db8::9",
        "via 2001:db8:1::9 dev d1",
        "via 2001:db8::1",
        "dev d0",
        "",
    ]);
    let extra = prop::sample::select(vec![
        "",
        "",
        "table 77",
        "table 78 metric 5",
        "mtu 1400",
        "mtu lock 1300",
        "metric 7",
        "src 192.0.2.1",
        "src 2001:db8::1",
    ]);
    let kind = prop::sample::select(vec!["", "", "", "unreachable", "blackhole", "local"]);
    (any::<bool>(), op, v4, v6, via4, via6, extra, kind).prop_map(
        |(ipv4, op, p4, p6, via4, via6, extra, kind)| {
            let (prefix, via) = if ipv4 { (p4, via4) } else { (p6, via6) };
            let via = match kind {
                "" => via,
                "local" => "dev d0",
                _ => "",
            };
            format!("route {op} {kind} {prefix} {via} {extra}")
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn route_batches_published_equal_a_plain_fib_that_applied_them(
        batches in prop::collection::vec(prop::collection::vec(route_line(), 1..10), 1..10),
    ) {
        let mut start = router();
        let v4 = Command::Addr { op: AddrOp::Add, spec: addr_spec("d0", "192.0.2.1".parse().unwrap(), 24) };
        start.apply(&v4).unwrap();
        let mut writer = FibWriter::new(start.clone());
        let mut reader = writer.shared().reader();
        let mut plain = start;
        for lines in &batches {
            let commands: Vec<Command> = lines.iter().filter_map(|l| command_line(l)).collect();
            for c in &commands {
                let _ = plain.apply(c);
            }
            writer.apply_batch(&commands, BatchMode::BestEffort).unwrap();
            reader.batch(|_| ());
            writer.sync().unwrap();
            let (published, working) = writer.published_and_working();
            prop_assert_eq!(dump(working), dump(&plain));
            prop_assert_eq!(dump(published), dump(&plain));
            prop_assert_eq!(records(working), records(&plain));
            prop_assert_eq!(records(published), records(&plain));
        }
        // The published version answers lookups as the working copy does.
        let (published, working) = writer.published_and_working();
        for probe in ["10.1.0.7", "10.1.0.9", "198.51.100.1", "192.0.2.1"] {
            let key = FlowKeyV4 { dst: probe.parse::<std::net::Ipv4Addr>().unwrap().into(), ..Default::default() };
            prop_assert_eq!(working.lookup_output_v4(&key), published.lookup_output_v4(&key));
        }
        for probe in ["2001:db8:f::7", "2001:db8:f::8", "1::", "2001:db8::1"] {
            let key = FlowKeyV6 { dst: probe.parse::<Ipv6Addr>().unwrap().into(), ..Default::default() };
            prop_assert_eq!(working.lookup_output_v6(&key), published.lookup_output_v6(&key));
        }
    }
}

/// A wider `ip route` command than [`route_line`]: every route type, table
/// local and main by name, IPv4 and IPv6 multipath (IPv6 paths join their
/// siblings and leave one by one), deletes naming paths (an IPv6 one may
/// remove a path and then be refused), TOS, protocols and metrics. The
/// paths come last: `nexthop` takes the rest of the line.
fn wide_route_line() -> impl Strategy<Value = String> {
    let op = prop::sample::select(vec![
        "add", "add", "replace", "append", "prepend", "change", "del", "del",
    ]);
    let v4 = prop::sample::select(vec![
        "0.0.0.0/0",
        "10.1.0.0/16",
        "10.1.0.7",
        "192.0.2.1",
        "192.0.2.255",
        "224.0.0.0/4",
    ]);
    let v6 = prop::sample::select(vec![
        "::/0",
        "2001:db8:f::/48",
        "2001:db8:f::/64",
        "2001:db8:f::7",
        "2001:db8::1",
        "ff00::/8",
    ]);
    let kind = prop::sample::select(vec![
        "",
        "",
        "",
        "unicast",
        "local",
        "broadcast",
        "anycast",
        "multicast",
        "unreachable",
        "prohibit",
        "blackhole",
        "throw",
    ]);
    let via4 = prop::sample::select(vec![
        "via 192.0.2.9",
        "via 192.0.2.1",
        "via 192.0.2.8 dev d0",
        "dev d1",
        "dev d0",
        "nexthop via 192.0.2.9 nexthop via 192.0.2.8",
        "nexthop via 192.0.2.9 weight 2 nexthop dev d1",
        "",
    ]);
    let via6 = prop::sample::select(vec![
        "via 2001:db8::9",
        "via 2001:db8::8",
        "via 2001:db8:1::9 dev d1",
        "dev d0",
        "nexthop via 2001:db8::9 nexthop via 2001:db8::8",
        "nexthop via 2001:db8::8 nexthop via 2001:db8::7",
        "nexthop via 2001:db8::9 nexthop via 2001:db8:1::9 dev d1",
        "",
    ]);
    let extra = prop::sample::select(vec![
        "",
        "",
        "table local",
        "table main",
        "table 77",
        "metric 7",
        "tos 0x10",
        "proto static",
        "scope link",
        "scope host",
        "mtu 1400",
        "src 192.0.2.1",
        "src 2001:db8::1",
    ]);
    (any::<bool>(), op, v4, v6, kind, via4, via6, extra).prop_map(
        |(ipv4, op, p4, p6, kind, via4, via6, extra)| {
            let (prefix, via) = if ipv4 { (p4, via4) } else { (p6, via6) };
            format!("route {op} {kind} {prefix} {extra} {via}")
        },
    )
}

/// A command that is not a route command: links going down and up (dead
/// and linkdown paths, flushed routes) and addresses coming and going
/// (their routes, host-scope gateways). A batch holding one is applied
/// again rather than copied.
fn other_line() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "link set d0 down",
        "link set d0 up",
        "link set d1 down",
        "link set d1 up",
        "addr add 192.0.2.1/24 dev d0",
        "addr del 192.0.2.1/24 dev d0",
        "addr add 10.1.0.1/16 dev d1",
    ])
    .prop_map(String::from)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Batches of every kind, in either mode: after each one the working
    /// copy and the published version equal a plain FIB that applied what
    /// was published, in routes, records and lookups, and every clone of an
    /// earlier version is unchanged.
    #[test]
    fn every_kind_of_route_batch_is_published_whole_and_old_versions_keep(
        batches in prop::collection::vec(
            (
                prop::collection::vec(
                    prop_oneof![8 => wide_route_line(), 1 => other_line()],
                    1..10,
                ),
                prop::bool::weighted(0.2),
            ),
            1..12,
        ),
    ) {
        let mut start = router();
        let v4 = Command::Addr { op: AddrOp::Add, spec: addr_spec("d0", "192.0.2.1".parse().unwrap(), 24) };
        start.apply(&v4).unwrap();
        let mut writer = FibWriter::new(start.clone());
        // A second writer with a listener, which waits for each batch's
        // grace period (its copies are compared too). No readers: that
        // wait would be held up by a reader reporting only between
        // batches.
        let mut heard_writer = FibWriter::new(start.clone());
        let heard = std::sync::Arc::new(Heard::default());
        heard_writer.add_listener(heard.clone());
        let mut plain = start;
        let mut kept = Vec::new();
        for (lines, all_or_nothing) in &batches {
            let before = routes_by_prefix(&plain);
            let commands: Vec<Command> = lines.iter().filter_map(|l| command_line(l)).collect();
            let mode = if *all_or_nothing { BatchMode::AllOrNothing } else { BatchMode::BestEffort };
            let mut candidate = plain.clone();
            let refused = commands.iter().filter(|c| candidate.apply(c).is_err()).count();
            let report = writer.apply_batch(&commands, mode).unwrap();
            heard_writer.apply_batch(&commands, mode).unwrap();
            if mode == BatchMode::BestEffort || refused == 0 {
                plain = candidate;
            }
            // The listeners heard of every prefix whose routes changed.
            let changes = std::mem::take(&mut *heard.0.lock().unwrap());
            if !changes.contains(&FibChange::Everything) {
                let after = routes_by_prefix(&plain);
                for prefix in before.keys().chain(after.keys()) {
                    if before.get(prefix) != after.get(prefix) {
                        prop_assert!(
                            changes.contains(&FibChange::Prefix(*prefix)),
                            "{:?} changed unheard: {:?}", prefix, changes
                        );
                    }
                }
            }
            if report.published.is_some() {
                // A clone of this version, checked after every later batch.
                kept.push((writer.fib().clone(), dump(writer.fib()), records(writer.fib())));
            }
            for (old, old_dump, old_records) in &kept {
                prop_assert_eq!(&dump(old), old_dump);
                prop_assert_eq!(&records(old), old_records);
            }

            writer.sync().unwrap();
            let (published, working) = writer.published_and_working();
            let (heard_published, heard_working) = heard_writer.published_and_working();
            for fib in [published, working, heard_published, heard_working] {
                prop_assert_eq!(dump(fib), dump(&plain));
                prop_assert_eq!(records(fib), records(&plain));
            }
            for fib in [published, working] {
                for probe in ["10.1.0.7", "10.1.0.9", "192.0.2.1", "192.0.2.255", "192.0.2.7", "224.0.0.1", "8.8.8.8"] {
                    let key = FlowKeyV4 { dst: probe.parse::<std::net::Ipv4Addr>().unwrap().into(), ..Default::default() };
                    prop_assert_eq!(fib.lookup_output_v4(&key), plain.lookup_output_v4(&key), "{}", probe);
                    let tos = FlowKeyV4 { tos: 0x10, ..key };
                    prop_assert_eq!(fib.lookup_output_v4(&tos), plain.lookup_output_v4(&tos), "{} tos", probe);
                }
                for probe in ["2001:db8:f::7", "2001:db8:f::8", "2001:db8:f:1::", "2001:db8::1", "ff02::1", "1::"] {
                    let key = FlowKeyV6 { dst: probe.parse::<Ipv6Addr>().unwrap().into(), ..Default::default() };
                    prop_assert_eq!(fib.lookup_output_v6(&key), plain.lookup_output_v6(&key), "{}", probe);
                }
                for probe in ["10.1.0.7", "192.0.2.1", "192.0.2.7", "224.0.0.1", "2001:db8:f::7", "2001:db8::1", "ff02::1"] {
                    let request = RouteGetRequest::to(probe.parse().unwrap());
                    prop_assert_eq!(
                        format!("{:?}", fib.route_get(&request)),
                        format!("{:?}", plain.route_get(&request)),
                        "{}", probe
                    );
                }
            }
        }
    }
}

/// `route add 10.H.L.0/24 dev d0` for the `n`th /24 of 10/8.
fn slash24(n: u32) -> Command {
    command_line(&format!("route add 10.{}.{}.0/24 dev d0", n >> 8, n & 0xff)).unwrap()
}

#[test]
fn a_big_batch_then_a_small_one_are_each_published_whole() {
    // 16,385 prefixes in one batch (many chunks of every array rewritten),
    // then a small batch on top of it.
    let big: Vec<Command> = (0..16_385).map(slash24).collect();
    let mut writer = FibWriter::new(router());
    let mut reader = writer.shared().reader();
    let mut plain = router();
    for c in &big {
        plain.apply(c).unwrap();
    }
    writer.apply_batch(&big, BatchMode::BestEffort).unwrap();
    let after_big = writer.fib().clone();
    reader.batch(|_| ());
    // The next batch deletes one of them and adds one more.
    let small = [
        command_line("route del 10.0.7.0/24").unwrap(),
        slash24(20_000),
        command_line("route replace 10.0.8.0/24 dev d1").unwrap(),
    ];
    for c in &small {
        plain.apply(c).unwrap();
    }
    writer.apply_batch(&small, BatchMode::BestEffort).unwrap();
    // The clone of the big batch's version still answers as it did.
    let gone = FlowKeyV4 {
        dst: "10.0.7.1".parse::<std::net::Ipv4Addr>().unwrap().into(),
        ..Default::default()
    };
    assert!(after_big.lookup_output_v4(&gone).is_ok());
    assert!(writer.fib().lookup_output_v4(&gone).is_err());
    reader.batch(|_| ());
    writer.sync().unwrap();
    let (published, working) = writer.published_and_working();
    assert_eq!(dump(published), dump(&plain));
    assert_eq!(dump(working), dump(&plain));
    for probe in ["10.0.7.1", "10.0.8.1", "10.78.32.1", "10.64.0.1"] {
        let key = FlowKeyV4 {
            dst: probe.parse::<std::net::Ipv4Addr>().unwrap().into(),
            ..Default::default()
        };
        assert_eq!(working.lookup_output_v4(&key), plain.lookup_output_v4(&key));
        assert_eq!(
            published.lookup_output_v4(&key),
            plain.lookup_output_v4(&key)
        );
    }
}

/// More link, address and rule commands than [`other_line`], refused often.
fn other_wide_line() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "link set d0 down",
        "link set d0 up",
        "link set d1 down",
        "link set d9 up",
        "link set d1 mtu 1200",
        "link set d1 mtu 1500",
        "link add d0 type ifb",
        "link add d2 type ifb",
        "link del d2",
        "link del d9",
        "addr add 192.0.2.1/24 dev d0",
        "addr del 192.0.2.1/24 dev d0",
        "addr del 192.0.2.1/24 dev d1",
        "addr add 10.1.0.1/16 dev d1",
        "addr add 2001:db8::1/64 dev d0",
        "addr add 2001:db8:5::1/64 dev d1",
        "addr del 2001:db8:5::1/64 dev d1",
        "addr add 2001:db8:5::1/64 dev d9",
        "rule add from 10.1.0.0/16 lookup 77 priority 100",
        "rule del priority 100",
        "rule del priority 101",
    ])
    .prop_map(String::from)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// The writer tells its listeners of refused route commands (they may
    /// have changed their prefix) but of no other refused command: those
    /// must leave everything a lookup or a dump shows as it was.
    #[test]
    fn a_refused_command_other_than_a_route_command_changes_nothing(
        lines in prop::collection::vec(
            prop_oneof![2 => wide_route_line(), 3 => other_wide_line()],
            1..40,
        ),
    ) {
        let mut fib = router();
        for line in &lines {
            let Some(command) = command_line(line) else { continue };
            let before = (dump(&fib), records(&fib));
            let refused = fib.apply(&command).is_err();
            if refused && !matches!(command, Command::Route { .. }) {
                prop_assert_eq!((dump(&fib), records(&fib)), before, "{}", line);
            }
        }
    }
}
