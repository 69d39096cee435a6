//! A refused multipath replace leaves nothing half-published: refused at
//! any one of its paths, or at any command of the batch around it, readers
//! see the old group whole (all-or-nothing: nothing published at all;
//! best-effort: exactly what a plain FIB applying the commands one by one
//! shows), and readers looking up while such batches stream in always see
//! one whole group, never none and never a mix.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::atomic::{AtomicBool, Ordering};

use super::fixtures::*;
use crate::shared::{BatchMode, FibWriter};
use crate::*;

/// The multipath prefix the tests replace: `dst(0)`, 2001:db8:f::/64.
const PREFIX: &str = "2001:db8:f::/64";
/// A gateway the kernel refuses: one of our own addresses (on `d0`).
const OURS: u16 = 1;

fn gateway(n: u16) -> IpAddr {
    Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, n).into()
}

/// `ip -6 route OP PREFIX nexthop via 2001:db8::G ...`, one path per gateway.
fn group(op: &str, prefix: &str, gateways: &[u16]) -> Command {
    let paths: String = gateways
        .iter()
        .map(|g| format!(" nexthop via {}", gateway(*g)))
        .collect();
    command_line(&format!("route {op} {prefix}{paths}")).expect("a well-formed route line")
}

/// The gateways of `prefix`'s routes in table main, in order.
fn gateways_of(fib: &Fib, prefix: Prefix) -> Vec<IpAddr> {
    fib.routes(Family::V6, Some(TABLE_MAIN))
        .into_iter()
        .filter(|route| route.dst == prefix)
        .flat_map(|route| route.nexthops.iter().filter_map(|nh| nh.gateway))
        .collect()
}

/// A router with `PREFIX` routed over gateways ::2 and ::3.
fn start() -> Fib {
    let mut fib = router();
    fib.apply(&group("add", PREFIX, &[2, 3])).unwrap();
    fib
}

/// Applies `batch` to a writer over `start()` in `mode`; checks the
/// refusals against a plain FIB applying it command by command, and what a
/// reader sees against that FIB (best-effort) or the start (all-or-nothing).
fn check_batch(batch: &[Command], mode: BatchMode) {
    let mut plain = start();
    let expected_refusals = apply_one_by_one(&mut plain, batch);
    assert!(
        !expected_refusals.is_empty(),
        "the batch must hold a refusal: {batch:?}"
    );
    let mut writer = FibWriter::new(start());
    let mut reader = writer.shared().reader();
    let report = writer.apply_batch(batch, mode).unwrap();
    let refusals = refusals(&report);
    assert_eq!(refusals, expected_refusals);
    let expected = match mode {
        BatchMode::AllOrNothing => {
            assert_eq!(report.published, None);
            dump(&start())
        }
        BatchMode::BestEffort => {
            assert_eq!(report.published, Some(1));
            dump(&plain)
        }
    };
    assert_eq!(
        reader.batch(|s| dump(s.fib())),
        expected,
        "{mode:?} {batch:?}"
    );
    // The writer's own next batch builds on what was published.
    reader.batch(|_| ());
    writer.sync().unwrap();
    let (published, working) = writer.published_and_working();
    assert_eq!(dump(published), dump(working));
}

#[test]
fn a_multipath_replace_refused_at_any_path_changes_nothing() {
    let prefix = dst(0);
    let new_paths = [4, 5, 6, 7];
    for bad in 0..new_paths.len() {
        let mut paths = new_paths;
        paths[bad] = OURS;
        let replace = group("replace", PREFIX, &paths);
        // The kernel builds every path before it changes the prefix
        // (ip6_route_multipath_add): a refused path leaves the old group.
        let mut plain = start();
        let error = plain.apply(&replace).unwrap_err().to_string();
        assert!(error.starts_with("Error: "), "{error}");
        assert_eq!(gateways_of(&plain, prefix), [gateway(2), gateway(3)]);
        for mode in [BatchMode::AllOrNothing, BatchMode::BestEffort] {
            check_batch(std::slice::from_ref(&replace), mode);
        }
    }
}

#[test]
fn a_refusal_at_any_command_of_a_multipath_batch_publishes_nothing_or_exactly_the_rest() {
    let good = [
        group("replace", PREFIX, &[4, 5, 6]),
        group("add", "2001:db8:f:1::/64", &[2, 3]),
        group("replace", "2001:db8:f:2::/64", &[5, 6]),
        group("replace", PREFIX, &[7, 8]),
    ];
    let refused = group("replace", PREFIX, &[9, OURS]);
    for at in 0..=good.len() {
        let mut batch = good.to_vec();
        batch.insert(at, refused.clone());
        for mode in [BatchMode::AllOrNothing, BatchMode::BestEffort] {
            check_batch(&batch, mode);
        }
    }
}

#[test]
fn readers_see_one_whole_group_while_replaces_and_refusals_stream_in() {
    let prefix = dst(0);
    let groups: [&[u16]; 2] = [&[2, 3], &[4, 5, 6]];
    let allowed: Vec<BTreeSet<IpAddr>> = groups
        .iter()
        .map(|g| g.iter().map(|n| gateway(*n)).collect())
        .collect();
    let mut writer = FibWriter::new(start());
    let shared = writer.shared();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        for reader_number in 0..2u128 {
            let mut reader = shared.reader();
            let (done, allowed) = (&done, &allowed);
            s.spawn(move || {
                let mut batches = 0u32;
                while !done.load(Ordering::Relaxed) || batches < 10 {
                    let (paths, answer) = reader.batch(|snap| {
                        let key = FlowKeyV6 {
                            dst: inside(0),
                            src: reader_number + u128::from(batches),
                            ..Default::default()
                        };
                        (
                            gateways_of(snap.fib(), prefix),
                            snap.fib().lookup_output_v6(&key),
                        )
                    });
                    let paths: BTreeSet<IpAddr> = paths.into_iter().collect();
                    assert!(allowed.contains(&paths), "a group half replaced: {paths:?}");
                    let answer = answer.expect("a replaced route never answers no route");
                    let via = IpAddr::from(Ipv6Addr::from(answer.gateway));
                    assert!(paths.contains(&via), "answered via {via}, group {paths:?}");
                    batches += 1;
                }
            });
        }
        for round in 0..150usize {
            let target = groups[(round + 1) % 2];
            let mut refused = target.to_vec();
            refused[round % target.len()] = OURS;
            let (batch, mode) = match round % 3 {
                0 => (
                    vec![group("replace", PREFIX, target)],
                    BatchMode::BestEffort,
                ),
                1 => (
                    vec![
                        group("replace", PREFIX, target),
                        group("replace", PREFIX, &refused),
                    ],
                    BatchMode::BestEffort,
                ),
                _ => (
                    vec![
                        group("replace", PREFIX, target),
                        group("replace", PREFIX, &refused),
                    ],
                    BatchMode::AllOrNothing,
                ),
            };
            let report = writer.apply_batch(&batch, mode).unwrap();
            assert_eq!(
                report.refused.len(),
                usize::from(round % 3 != 0),
                "{report:?}"
            );
        }
        done.store(true, Ordering::Relaxed);
    });
}
