//! The workers' view: published adjacencies read without allocating, use
//! reports that start a STALE entry's confirmation, and rings that drop
//! (and count) what they cannot hold.

mod common;

use std::thread;

use common::*;
use fibre_fib::{config, NudState};
use fibre_neigh::{FibRouter, NeighPublisher, NeighSettings, NeighTable};
use fibre_testkit::CountingAllocator;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn static_fib(lines: &str) -> fibre_fib::Fib {
    config::apply_str(&fib(), "n.conf", lines, false).unwrap().0
}

#[test]
fn lookups_allocate_nothing_and_see_each_publication() {
    let fib = static_fib(
        "neigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev v0\n\
         neigh add 2001:db8::2 lladdr 02:00:00:00:00:22 dev v0 nud stale\n\
         neigh add 10.0.0.3 dev v0 lladdr 02:00:00:00:00:03 nud failed\n",
    );
    let (router, link) = (FibRouter::new(&fib), v0(&fib));
    let mut table = NeighTable::from_fib(NeighSettings::default(), &fib, 0);
    let domain = fibre_rcu::Domain::new();
    let mut publisher = NeighPublisher::new(&domain);
    let mut reader = publisher.reader();
    assert!(publisher.publish(&mut table));
    assert!(!publisher.publish(&mut table), "nothing changed");
    let (a, b, c) = (ip("10.0.0.2"), ip("2001:db8::2"), ip("10.0.0.3"));
    let before = CountingAllocator::allocations();
    let mut macs = [[0u8; 6]; 3];
    for _ in 0..1_000 {
        macs[0] = reader.lookup(link, a).unwrap().mac;
        macs[1] = reader.lookup(link, b).unwrap().mac;
        assert!(
            reader.lookup(link, c).is_none(),
            "FAILED has no usable address"
        );
        assert!(reader.lookup(link + 1, a).is_none());
        reader.quiescent();
    }
    assert_eq!(
        CountingAllocator::allocations(),
        before,
        "lookups allocated"
    );
    assert_eq!(macs[..2], [[2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 0x22]]);
    // The STALE entry's use, reported once per burst, moves it to DELAY.
    publisher.drain_uses(1_000, &mut table, &router);
    assert_eq!(table.get(link, b).unwrap().state, NudState::Delay);
    assert!(publisher.publish(&mut table));
    assert_eq!(reader.lookup(link, b).unwrap().state, NudState::Delay);
    assert_eq!(reader.lost_reports(), 0);
}

#[test]
fn a_worker_on_another_thread_reads_while_the_control_side_publishes() {
    let fib = static_fib("neigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev v0 nud stale\n");
    let link = v0(&fib);
    let mut table = NeighTable::from_fib(NeighSettings::default(), &fib, 0);
    let domain = fibre_rcu::Domain::new();
    let mut publisher = NeighPublisher::new(&domain);
    let mut reader = publisher.reader();
    publisher.publish(&mut table);
    let worker = thread::spawn(move || {
        let mut seen = 0u64;
        for _ in 0..20_000 {
            if reader.lookup(link, "10.0.0.2".parse().unwrap()).is_some() {
                seen += 1;
            }
            reader.quiescent();
        }
        seen
    });
    let router = FibRouter::new(&fib);
    for now in 0..200u64 {
        publisher.drain_uses(now * 10, &mut table, &router);
        table.tick(now * 10, &router);
        publisher.publish(&mut table);
    }
    let seen = worker.join().unwrap();
    assert_eq!(
        seen, 20_000,
        "a valid entry stays readable through every publication"
    );
}

#[test]
fn a_full_ring_drops_and_counts_reports() {
    let fib = static_fib("neigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev v0 nud stale\n");
    let link = v0(&fib);
    let mut table = NeighTable::from_fib(NeighSettings::default(), &fib, 0);
    let domain = fibre_rcu::Domain::new();
    let mut publisher = NeighPublisher::new(&domain);
    let mut reader = publisher.reader();
    publisher.publish(&mut table);
    for _ in 0..(fibre_neigh::adjacency::USE_RING_CAPACITY + 10) {
        reader.lookup(link, ip("10.0.0.2"));
        reader.quiescent();
    }
    assert_eq!(reader.lost_reports(), 10);
    publisher.drain_uses(5, &mut table, &FibRouter::new(&fib));
    assert_eq!(table.stats().use_reports_lost, 10);
}
