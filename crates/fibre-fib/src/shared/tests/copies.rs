//! Left-right: after any stream of batches the two copies are identical,
//! and equal to a plain FIB that applied the accepted commands.

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
                family: Family::V6,
                priority: Some(prio),
                invert: false,
                from: Some(dst(n)),
                to: None,
                iif: None,
                oif: None,
                fwmark: None,
                tos: 0,
                action: Some(RuleAction::Lookup(TABLE_MAIN)),
                suppress_prefixlength: None,
                suppress_ifgroup: None,
                protocol: None,
            },
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn copies_stay_identical_and_equal_to_a_plain_fib(
        batches in prop::collection::vec(
            (prop::collection::vec(command(), 0..8), any::<bool>()),
            1..12,
        ),
    ) {
        let mut writer = FibWriter::new(router());
        let mut reader = writer.shared().reader();
        let mut plain = router();
        let mut version = 0;
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
            } else {
                prop_assert_eq!(report.published, None);
            }
            let seen = reader.batch(|s| (s.version(), dump(s.fib())));
            prop_assert_eq!(seen, (version, dump(&plain)));
        }
        writer.sync().unwrap();
        let (active, spare) = writer.copies();
        prop_assert_eq!(dump(active), dump(spare));
        prop_assert_eq!(dump(active), dump(&plain));
    }
}
