//! The kernel's neighbour state transitions on a manual clock, each with
//! its timer values (defaults: retrans 1 s, delay_first_probe_time 5 s,
//! mcast_solicit 3, ucast_solicit 3, reachable time drawn from the seed).

mod common;

use common::*;
use fibre_fib::{config, NudState};
use fibre_neigh::{Action, FibRouter, IcmpError, NeighDrop, NeighSettings, NeighTable};

const PEER: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];

fn state(table: &NeighTable, link: u32, addr: &str) -> NudState {
    table.get(link, ip(addr)).map(|v| v.state).unwrap()
}

/// Puts 10.0.0.2 in REACHABLE at `now` through INCOMPLETE and a reply.
fn reachable_at(table: &mut NeighTable, router: &FibRouter, link: u32, now: u64) -> Vec<Action> {
    let own = router_mac(router, link);
    table.resolve(
        now,
        link,
        ip("10.0.0.2"),
        ipv4_packet("192.0.2.9", "10.0.0.2", 20),
        router,
    );
    let reply = arp(2, own, PEER, "10.0.0.2", own, "10.0.0.1");
    table.receive_arp(now, link, &reply, router)
}

fn router_mac(router: &FibRouter, link: u32) -> [u8; 6] {
    use fibre_neigh::Router;
    router.mac(link).unwrap()
}

#[test]
fn incomplete_solicits_three_times_then_fails_with_host_unreachable() {
    let fib = fib();
    let (router, link) = (FibRouter::new(&fib), v0(&fib));
    let own = router_mac(&router, link);
    let mut table = NeighTable::new(NeighSettings::default());
    let packet = ipv4_packet("192.0.2.9", "10.0.0.2", 60);
    let first = table.resolve(0, link, ip("10.0.0.2"), packet.clone(), &router);
    // The request is broadcast, from our address in the target's subnet.
    let expected = arp(1, [0xff; 6], own, "10.0.0.1", [0; 6], "10.0.0.2");
    assert_eq!(sent(&first), std::slice::from_ref(&expected));
    assert_eq!(state(&table, link, "10.0.0.2"), NudState::Incomplete);
    // Nothing before the retransmit time.
    assert!(table.tick(999, &router).is_empty());
    assert_eq!(
        sent(&table.tick(1_000, &router)),
        std::slice::from_ref(&expected)
    );
    assert_eq!(sent(&table.tick(2_000, &router)), [expected]);
    let last = table.tick(3_000, &router);
    assert_eq!(
        last,
        [Action::Unreachable {
            link,
            packet,
            icmp: IcmpError::HostUnreachable
        }]
    );
    assert_eq!(state(&table, link, "10.0.0.2"), NudState::Failed);
    assert_eq!(table.stats().res_failed, 1);
    // FAILED runs no timer.
    assert!(table.tick(60_000, &router).is_empty());
}

#[test]
fn ipv6_incomplete_solicits_the_solicited_node_group_and_fails_with_address_unreachable() {
    let fib = fib();
    let (router, link) = (FibRouter::new(&fib), v0(&fib));
    let mut table = NeighTable::new(NeighSettings::default());
    let packet = ipv6_packet("2001:db8:9::9", "2001:db8::2");
    let first = table.resolve(0, link, ip("2001:db8::2"), packet.clone(), &router);
    let frames = sent(&first);
    assert_eq!(frames.len(), 1);
    let ns = &frames[0];
    assert_eq!(&ns[..6], &[0x33, 0x33, 0xff, 0, 0, 2]);
    // To ff02::1:ff00:2, from our link-local address, hop limit 255.
    assert_eq!(&ns[14 + 24..14 + 40], &v6("ff02::1:ff00:2").octets());
    assert_eq!(&ns[14 + 8..14 + 10], &[0xfe, 0x80]);
    assert_eq!(ns[14 + 7], 255);
    for now in [1_000, 2_000] {
        assert_eq!(sent(&table.tick(now, &router)).len(), 1);
    }
    assert_eq!(
        table.tick(3_000, &router),
        [Action::Unreachable {
            link,
            packet,
            icmp: IcmpError::AddressUnreachable
        }]
    );
}

#[test]
fn a_reply_makes_incomplete_reachable_and_releases_the_queue_in_order() {
    let fib = fib();
    let (router, link) = (FibRouter::new(&fib), v0(&fib));
    let own = router_mac(&router, link);
    let mut table = NeighTable::new(NeighSettings::default());
    let packets: Vec<Vec<u8>> = (0..3)
        .map(|i| ipv4_packet("192.0.2.9", "10.0.0.2", 20 + i))
        .collect();
    for p in &packets {
        table.resolve(10, link, ip("10.0.0.2"), p.clone(), &router);
    }
    let reply = arp(2, own, PEER, "10.0.0.2", own, "10.0.0.1");
    let released = table.receive_arp(500, link, &reply, &router);
    let expected: Vec<Action> = packets
        .into_iter()
        .map(|packet| Action::Release {
            link,
            mac: PEER,
            packet,
        })
        .collect();
    assert_eq!(released, expected);
    assert_eq!(state(&table, link, "10.0.0.2"), NudState::Reachable);
    assert_eq!(table.get(link, ip("10.0.0.2")).unwrap().lladdr, Some(PEER));
}

#[test]
fn reachable_unused_goes_stale_when_the_reachable_time_runs_out() {
    let fib = fib();
    let (router, link) = (FibRouter::new(&fib), v0(&fib));
    let mut table = NeighTable::new(NeighSettings::default());
    reachable_at(&mut table, &router, link, 0);
    let reachable = table.reachable_time(&ip("10.0.0.2"));
    assert!((15_000..45_000).contains(&reachable), "{reachable}");
    // The timer was armed at confirmation + reachable time; the last use
    // (the resolve at 0) is older than delay_first_probe_time by then.
    table.tick(reachable - 1, &router);
    assert_eq!(state(&table, link, "10.0.0.2"), NudState::Reachable);
    assert!(table.tick(reachable, &router).is_empty());
    assert_eq!(
        state(&table, link, "10.0.0.2"),
        NudState::Reachable,
        "on time, still within"
    );
    table.tick(reachable + 10, &router);
    assert_eq!(state(&table, link, "10.0.0.2"), NudState::Stale);
}

#[test]
fn reachable_used_lately_goes_to_delay_then_probe_with_unicast_probes_then_fails() {
    let fib = fib();
    let (router, link) = (FibRouter::new(&fib), v0(&fib));
    let own = router_mac(&router, link);
    let mut table = NeighTable::new(NeighSettings::default());
    reachable_at(&mut table, &router, link, 0);
    let reachable = table.reachable_time(&ip("10.0.0.2"));
    // Used 1 s before the reachable time runs out.
    table.used(reachable - 1_000, link, ip("10.0.0.2"), &router);
    table.tick(reachable + 10, &router);
    assert_eq!(state(&table, link, "10.0.0.2"), NudState::Delay);
    // DELAY for delay_first_probe_time, then PROBE with a unicast request.
    let t = reachable + 10 + 5_000;
    table.tick(t - 1, &router);
    assert_eq!(state(&table, link, "10.0.0.2"), NudState::Delay);
    let probe = table.tick(t, &router);
    assert_eq!(state(&table, link, "10.0.0.2"), NudState::Probe);
    let unicast = arp(1, PEER, own, "10.0.0.1", [0; 6], "10.0.0.2");
    assert_eq!(sent(&probe), std::slice::from_ref(&unicast));
    assert_eq!(
        sent(&table.tick(t + 1_000, &router)),
        std::slice::from_ref(&unicast)
    );
    assert_eq!(sent(&table.tick(t + 2_000, &router)), [unicast]);
    assert!(sent(&table.tick(t + 3_000, &router)).is_empty());
    assert_eq!(state(&table, link, "10.0.0.2"), NudState::Failed);
}

#[test]
fn probe_answered_by_a_unicast_reply_becomes_reachable_again() {
    let fib = fib();
    let (router, link) = (FibRouter::new(&fib), v0(&fib));
    let own = router_mac(&router, link);
    let mut table = NeighTable::new(NeighSettings::default());
    reachable_at(&mut table, &router, link, 0);
    let reachable = table.reachable_time(&ip("10.0.0.2"));
    table.used(reachable - 1_000, link, ip("10.0.0.2"), &router);
    table.tick(reachable + 10, &router);
    table.tick(reachable + 5_010, &router);
    assert_eq!(state(&table, link, "10.0.0.2"), NudState::Probe);
    let reply = arp(2, own, PEER, "10.0.0.2", own, "10.0.0.1");
    table.receive_arp(reachable + 5_200, link, &reply, &router);
    assert_eq!(state(&table, link, "10.0.0.2"), NudState::Reachable);
}

#[test]
fn stale_used_goes_to_delay_and_a_confirmation_within_it_makes_reachable() {
    let fib = fib();
    let (router, link) = (FibRouter::new(&fib), v0(&fib));
    let text = "neigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev v0 nud stale\n";
    let (fib2, _) = config::apply_str(&fib, "n.conf", text, false).unwrap();
    let mut table = NeighTable::from_fib(NeighSettings::default(), &fib2, 0);
    assert_eq!(state(&table, link, "10.0.0.2"), NudState::Stale);
    // STALE runs no timer.
    assert!(table.tick(100_000, &router).is_empty());
    let out = table.used(100_000, link, ip("10.0.0.2"), &router);
    assert!(out.is_empty(), "no probe yet: {out:?}");
    assert_eq!(state(&table, link, "10.0.0.2"), NudState::Delay);
    table.confirm(102_000, link, ip("10.0.0.2"));
    table.tick(105_000, &router);
    assert_eq!(state(&table, link, "10.0.0.2"), NudState::Reachable);
    // A packet through a STALE entry goes out at once (and starts DELAY).
    let mut other = NeighTable::from_fib(NeighSettings::default(), &fib2, 0);
    let packet = ipv4_packet("192.0.2.9", "10.0.0.2", 20);
    let out = other.resolve(7, link, ip("10.0.0.2"), packet.clone(), &router);
    assert_eq!(
        out,
        [Action::Release {
            link,
            mac: PEER,
            packet
        }]
    );
    assert_eq!(state(&other, link, "10.0.0.2"), NudState::Delay);
}

#[test]
fn static_entries_in_timer_states_move_on_at_once_as_the_kernels_do() {
    // `ip neigh add ... nud delay` shows PROBE at once: the timer is armed
    // at now and the entry's confirmation is long past.
    let fib = fib();
    let (router, link) = (FibRouter::new(&fib), v0(&fib));
    let text = "neigh add 10.0.0.6 lladdr 02:00:00:00:00:06 dev v0 nud probe\n\
                neigh add 10.0.0.7 lladdr 02:00:00:00:00:07 dev v0 nud delay\n\
                neigh add 10.0.0.8 lladdr 02:00:00:00:00:08 dev v0 nud reachable\n\
                neigh add 10.0.0.9 lladdr 02:00:00:00:00:09 dev v0 nud incomplete\n";
    let (fib2, _) = config::apply_str(&fib, "n.conf", text, false).unwrap();
    let mut table = NeighTable::from_fib(NeighSettings::default(), &fib2, 0);
    let probes = table.tick(0, &router);
    assert_eq!(state(&table, link, "10.0.0.6"), NudState::Probe);
    assert_eq!(state(&table, link, "10.0.0.7"), NudState::Probe);
    assert_eq!(state(&table, link, "10.0.0.8"), NudState::Reachable);
    // Admin INCOMPLETE runs no timer (__neigh_update leaves early).
    assert_eq!(state(&table, link, "10.0.0.9"), NudState::Incomplete);
    // One unicast probe each now: PROBE's first, and DELAY's on becoming PROBE.
    let probed: Vec<Vec<u8>> = sent(&probes).iter().map(|f| f[38..42].to_vec()).collect();
    assert_eq!(probed, [vec![10, 0, 0, 6], vec![10, 0, 0, 7]]);
    for now in [10, 1_000, 1_010, 2_000, 2_010, 3_000, 3_010, 4_010] {
        table.tick(now, &router);
    }
    assert_eq!(state(&table, link, "10.0.0.6"), NudState::Failed);
    assert_eq!(state(&table, link, "10.0.0.7"), NudState::Failed);
}

#[test]
fn the_pending_queue_keeps_the_newest_unres_qlen_packets() {
    let fib = fib();
    let (router, link) = (FibRouter::new(&fib), v0(&fib));
    let mut table = NeighTable::new(NeighSettings::default());
    let mut dropped = Vec::new();
    for i in 0..150u16 {
        let mut p = ipv4_packet("192.0.2.9", "10.0.0.2", 40);
        p[4..6].copy_from_slice(&i.to_be_bytes());
        for a in table.resolve(0, link, ip("10.0.0.2"), p, &router) {
            if let Action::Dropped { packet, reason, .. } = a {
                assert_eq!(reason, NeighDrop::QueueFull);
                dropped.push(u16::from_be_bytes([packet[4], packet[5]]));
            }
        }
    }
    assert_eq!(table.queued_packets(), 101);
    assert_eq!(dropped, (0..49).collect::<Vec<_>>(), "the oldest go first");
    assert_eq!(table.stats().unres_discards, 49);
    // And by bytes: 212992 bytes hold 14 packets of 15000 bytes.
    let mut big = NeighTable::new(NeighSettings::default());
    for _ in 0..20 {
        big.resolve(
            0,
            link,
            ip("10.0.0.3"),
            ipv4_packet("192.0.2.9", "10.0.0.3", 15_000),
            &router,
        );
    }
    assert_eq!(big.queued_packets(), 14);
}

#[test]
fn without_solicitations_an_unresolved_neighbour_fails_at_once() {
    let fib = fib();
    let (router, link) = (FibRouter::new(&fib), v0(&fib));
    let settings = NeighSettings {
        mcast_solicit: 0,
        ..NeighSettings::default()
    };
    let mut table = NeighTable::new(settings);
    let out = table.resolve(
        0,
        link,
        ip("10.0.0.2"),
        ipv4_packet("192.0.2.9", "10.0.0.2", 20),
        &router,
    );
    assert!(matches!(
        &out[..],
        [Action::Dropped {
            reason: NeighDrop::Failed,
            ..
        }]
    ));
    assert_eq!(state(&table, link, "10.0.0.2"), NudState::Failed);
}

#[test]
fn unused_stale_entries_are_collected_after_gc_stale_time_beyond_gc_thresh1() {
    let fib = fib();
    let (router, link) = (FibRouter::new(&fib), v0(&fib));
    let mut text = String::new();
    for i in 0..200 {
        text += &format!(
            "neigh add 10.0.0.{} lladdr 02:00:00:00:00:01 dev v0 nud stale\n",
            i + 2
        );
    }
    text += "neigh add 10.0.1.1 lladdr 02:00:00:00:00:01 dev v0\n";
    // The IPv6 table is another table, below its gc_thresh1: kept.
    text += "neigh add 2001:db8::2 lladdr 02:00:00:00:00:01 dev v0 nud stale\n";
    let (fib2, _) = config::apply_str(&fib, "n.conf", &text, false).unwrap();
    let mut table = NeighTable::from_fib(NeighSettings::default(), &fib2, 0);
    table.tick(45_000, &router);
    assert_eq!(table.entries().count(), 202, "not yet gc_stale_time");
    table.tick(60_000, &router);
    // Only the permanent one is left of the ARP table.
    let left: Vec<_> = table.entries().map(|v| (v.addr, v.state)).collect();
    assert_eq!(
        left,
        [
            (ip("10.0.1.1"), NudState::Permanent),
            (ip("2001:db8::2"), NudState::Stale)
        ]
    );
    let _ = link;
}

#[test]
fn ipv6_probes_are_unicast_to_the_cached_address() {
    let fib = fib();
    let (router, link) = (FibRouter::new(&fib), v0(&fib));
    let text = "neigh add 2001:db8::2 lladdr 02:00:00:00:00:02 dev v0 nud delay\n";
    let (fib2, _) = config::apply_str(&fib, "n.conf", text, false).unwrap();
    let mut table = NeighTable::from_fib(NeighSettings::default(), &fib2, 0);
    let probes = sent(&table.tick(0, &router));
    assert_eq!(state(&table, link, "2001:db8::2"), NudState::Probe);
    assert_eq!(probes.len(), 1);
    let ns = &probes[0];
    // To the neighbour's MAC and address, not the group; with our MAC.
    assert_eq!(&ns[..6], &PEER);
    assert_eq!(&ns[14 + 24..14 + 40], &v6("2001:db8::2").octets());
    assert_eq!(ns[14 + 40], 135);
    assert_eq!(ns.len(), 14 + 40 + 32);
}
