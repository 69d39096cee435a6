//! Batch reports: refusals one by one with the kernel's message, and the
//! published state exactly the accepted commands (or nothing).

use super::fixtures::*;
use crate::shared::{BatchMode, FibWriter};
use crate::*;

/// A batch with an accepted add, a duplicate, a delete of a missing route,
/// an invalid gateway (our own address) and an accepted replace.
fn mixed_batch() -> Vec<Command> {
    vec![
        route_via(RouteOp::Add, dst(1), 9),
        route_via(RouteOp::Add, dst(1), 8),
        route_del(dst(2)),
        route_via(RouteOp::Add, dst(3), 1),
        route_via(RouteOp::Replace, dst(4), 7),
    ]
}

/// The kernel's refusals of `mixed_batch` when applied one by one to a
/// plain FIB, and that FIB.
fn reference() -> (Fib, Vec<(usize, String)>) {
    let mut fib = router();
    let refusals = apply_one_by_one(&mut fib, &mixed_batch());
    (fib, refusals)
}

#[test]
fn best_effort_refuses_one_by_one_and_publishes_exactly_the_rest() {
    let (expected, expected_refusals) = reference();
    let mut writer = FibWriter::new(router());
    let mut reader = writer.shared().reader();
    let report = writer
        .apply_batch(&mixed_batch(), BatchMode::BestEffort)
        .unwrap();
    let refusals = refusals(&report);
    assert_eq!(refusals, expected_refusals);
    assert_eq!(
        refusals.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    assert_eq!(refusals[0].1, "RTNETLINK answers: File exists");
    assert_eq!(refusals[1].1, "RTNETLINK answers: No such process");
    assert!(refusals[2].1.starts_with("Error: "), "{}", refusals[2].1);
    assert_eq!((report.published, report.applied), (Some(1), 2));
    let seen = reader.batch(|s| (s.version(), dump(s.fib())));
    assert_eq!(seen, (1, dump(&expected)));
}

#[test]
fn all_or_nothing_publishes_nothing_when_one_command_is_refused() {
    let (_, expected_refusals) = reference();
    let before = dump(&router());
    let mut writer = FibWriter::new(router());
    let mut reader = writer.shared().reader();
    let report = writer
        .apply_batch(&mixed_batch(), BatchMode::AllOrNothing)
        .unwrap();
    let refusals = refusals(&report);
    assert_eq!(refusals, expected_refusals);
    assert_eq!(report.published, None);
    assert_eq!(reader.batch(|s| (s.version(), dump(s.fib()))), (0, before));

    // The working copy was restored too: the next batch builds on version 0.
    let good = [route_via(RouteOp::Add, dst(1), 9)];
    let report = writer.apply_batch(&good, BatchMode::AllOrNothing).unwrap();
    assert_eq!(report.published, Some(1));
    // The reader reports (its next batch), so the grace period can end.
    assert_eq!(reader.batch(|s| s.version()), 1);
    writer.sync().unwrap();
    let (published, working) = writer.published_and_working();
    assert_eq!(dump(published), dump(working));
    let mut expected = router();
    expected.apply(&good[0]).unwrap();
    assert_eq!(dump(published), dump(&expected));
}

#[test]
fn an_empty_batch_publishes_nothing() {
    let mut writer = FibWriter::new(router());
    let report = writer.apply_batch(&[], BatchMode::BestEffort).unwrap();
    assert_eq!((report.published, report.applied), (None, 0));
    assert_eq!(writer.version(), 0);
}

#[test]
fn a_batch_whose_commands_all_fail_keeps_the_kernels_traces() {
    // A refused IPv4 route add still creates its table: the published
    // state must have it, and so must the replayed copy.
    let mut writer = FibWriter::new(router());
    let bad = Command::Route {
        op: RouteOp::Add,
        spec: RouteSpec {
            mtu_lock: false,
            metrics: Default::default(),
            table: 77,
            dst: Prefix::new("10.9.0.0".parse().unwrap(), 16).unwrap(),
            tos: 0,
            kind: RouteType::Unicast,
            protocol: Protocol::BOOT,
            scope: Scope::UNIVERSE,
            metric: None,
            prefsrc: None,
            mtu: None,
            nexthops: vec![NexthopSpec {
                gateway: Some("192.0.2.1".parse().unwrap()),
                dev: None,
                weight: 1,
                onlink: false,
            }],
            multipath: false,
        },
    };
    let mut reference = router();
    let want = reference.apply(&bad).unwrap_err();
    let report = writer.apply_batch(&[bad], BatchMode::BestEffort).unwrap();
    assert_eq!(report.refused[0].error, want);
    writer.sync().unwrap();
    let (published, working) = writer.published_and_working();
    assert_eq!(dump(published), dump(&reference));
    assert_eq!(dump(working), dump(&reference));
    // The empty table shows only in a later delete's error: both copies
    // must give the reference's.
    let probe = route_del(Prefix::new("10.9.0.0".parse().unwrap(), 16).unwrap());
    let Command::Route { op, mut spec } = probe else {
        unreachable!("route_del builds a route command")
    };
    spec.table = 77;
    let probe = Command::Route { op, spec };
    let want = reference.clone().apply(&probe).unwrap_err();
    let mut without_table = router();
    assert_ne!(
        without_table.apply(&probe).unwrap_err(),
        want,
        "the probe must tell a created table from none"
    );
    assert_eq!(published.clone().apply(&probe).unwrap_err(), want);
    assert_eq!(working.clone().apply(&probe).unwrap_err(), want);
}

#[test]
fn a_refused_route_command_that_changed_its_prefix_is_heard() {
    // `ip -6 route del P nexthop via A nexthop via C` removes the path via
    // A, then refuses the one via C (no such path) with "No such process",
    // as the kernel's ip6_route_multipath_del does: the command is refused
    // but the routes of P changed, so a route cache must hear of P.
    let line = |l: &str| command_line(l).unwrap();
    let add = line("route add 2001:db8:f::/64 nexthop via 2001:db8::9 nexthop via 2001:db8::8");
    let del = line("route del 2001:db8:f::/64 nexthop via 2001:db8::9 nexthop via 2001:db8::7");
    let heard = std::sync::Arc::new(Heard::default());
    let mut writer = FibWriter::new(router());
    writer.add_listener(heard.clone());
    writer.apply_batch(&[add], BatchMode::BestEffort).unwrap();
    heard.0.lock().unwrap().clear();
    let before = dump(writer.fib());
    let report = writer.apply_batch(&[del], BatchMode::BestEffort).unwrap();
    assert_eq!(report.refused.len(), 1, "{report:?}");
    assert_eq!(report.published, Some(2));
    assert_ne!(dump(writer.fib()), before, "the path via ::9 went");
    let prefix = Prefix::new("2001:db8:f::".parse().unwrap(), 64).unwrap();
    assert!(
        heard.0.lock().unwrap().contains(&FibChange::Prefix(prefix)),
        "{:?}",
        heard.0.lock().unwrap()
    );
}
