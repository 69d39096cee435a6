//! What ARP and neighbour advertisements may and may not teach the table
//! (`arp_process` with `arp_accept` 0, `ndisc_recv_na` with
//! `accept_untracked_na` 0), and the answers for our own addresses.

mod common;

use common::*;
use fibre_fib::NudState;
use fibre_neigh::{Action, FibRouter, NeighSettings, NeighTable, Router};

const PEER: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
const ATTACKER: [u8; 6] = [0x02, 0xba, 0xd0, 0, 0, 1];

fn setup() -> (fibre_fib::Fib, u32) {
    let fib = fib();
    let link = v0(&fib);
    (fib, link)
}

#[test]
fn an_unsolicited_arp_reply_creates_no_entry() {
    let (fib, link) = setup();
    let router = FibRouter::new(&fib);
    let own = router.mac(link).unwrap();
    let mut table = NeighTable::new(NeighSettings::default());
    let reply = arp(2, own, ATTACKER, "10.0.0.66", own, "10.0.0.1");
    assert!(table.receive_arp(0, link, &reply, &router).is_empty());
    assert_eq!(table.entries().count(), 0);
    // Nor a gratuitous ARP (request or reply) for an address we do not know.
    let garp = arp(1, [0xff; 6], ATTACKER, "10.0.0.67", [0; 6], "10.0.0.67");
    assert!(table.receive_arp(0, link, &garp, &router).is_empty());
    let garp_reply = arp(2, [0xff; 6], ATTACKER, "10.0.0.68", ATTACKER, "10.0.0.68");
    assert!(table.receive_arp(0, link, &garp_reply, &router).is_empty());
    assert_eq!(table.entries().count(), 0);
}

#[test]
fn an_arp_claiming_our_own_address_is_neither_learned_nor_answered() {
    let (fib, link) = setup();
    let router = FibRouter::new(&fib);
    let own = router.mac(link).unwrap();
    let mut table = NeighTable::new(NeighSettings::default());
    for frame in [
        // A gratuitous ARP for our address.
        arp(1, [0xff; 6], ATTACKER, "10.0.0.1", [0; 6], "10.0.0.1"),
        arp(2, [0xff; 6], ATTACKER, "10.0.0.1", ATTACKER, "10.0.0.1"),
        // A request "from" our address for another of the subnet's.
        arp(1, [0xff; 6], ATTACKER, "10.0.0.1", [0; 6], "10.0.0.9"),
        // A reply "from" our address to us.
        arp(2, own, ATTACKER, "10.0.0.1", own, "10.0.0.1"),
        // A request for us from our own address: the input route's source
        // check fails, so no answer either.
        arp(1, [0xff; 6], ATTACKER, "10.0.0.1", [0; 6], "10.0.0.1"),
    ] {
        assert!(table.receive_arp(0, link, &frame, &router).is_empty());
    }
    assert_eq!(table.entries().count(), 0);
}

#[test]
fn a_request_for_us_is_answered_and_teaches_the_sender_stale() {
    let (fib, link) = setup();
    let router = FibRouter::new(&fib);
    let own = router.mac(link).unwrap();
    let mut table = NeighTable::new(NeighSettings::default());
    let request = arp(1, [0xff; 6], PEER, "10.0.0.2", [0; 6], "10.0.0.1");
    let out = table.receive_arp(0, link, &request, &router);
    // arp_create: to the sender's MAC, our MAC twice, the target's fields
    // the sender's.
    assert_eq!(
        sent(&out),
        [arp(2, PEER, own, "10.0.0.1", PEER, "10.0.0.2")]
    );
    assert_eq!(
        table.get(link, ip("10.0.0.2")).unwrap().state,
        NudState::Stale
    );
    // A request for an address that is not ours: no answer, nothing made.
    let other = arp(1, [0xff; 6], PEER, "10.0.0.3", [0; 6], "10.0.0.77");
    assert!(table.receive_arp(0, link, &other, &router).is_empty());
    assert!(table.get(link, ip("10.0.0.3")).is_none());
    // Duplicate address detection (sender 0.0.0.0): answered to the MAC.
    let dad = arp(1, [0xff; 6], PEER, "0.0.0.0", [0; 6], "10.0.0.1");
    let out = table.receive_arp(0, link, &dad, &router);
    assert_eq!(sent(&out), [arp(2, PEER, own, "10.0.0.1", PEER, "0.0.0.0")]);
    // A frame for another host is ignored.
    let elsewhere = arp(1, ATTACKER, PEER, "10.0.0.2", [0; 6], "10.0.0.1");
    assert!(table.receive_arp(0, link, &elsewhere, &router).is_empty());
}

#[test]
fn replies_within_locktime_do_not_move_an_entry_but_gratuitous_arp_does() {
    let (fib, link) = setup();
    let router = FibRouter::new(&fib);
    let own = router.mac(link).unwrap();
    let mut table = NeighTable::new(NeighSettings::default());
    table.resolve(
        0,
        link,
        ip("10.0.0.2"),
        ipv4_packet("192.0.2.1", "10.0.0.2", 20),
        &router,
    );
    table.receive_arp(
        100,
        link,
        &arp(2, own, PEER, "10.0.0.2", own, "10.0.0.1"),
        &router,
    );
    assert_eq!(table.get(link, ip("10.0.0.2")).unwrap().lladdr, Some(PEER));
    // A second reply (another proxy) 500 ms later: the first stays.
    table.receive_arp(
        600,
        link,
        &arp(2, own, ATTACKER, "10.0.0.2", own, "10.0.0.1"),
        &router,
    );
    assert_eq!(table.get(link, ip("10.0.0.2")).unwrap().lladdr, Some(PEER));
    // After locktime it moves (and a unicast reply makes it REACHABLE).
    table.receive_arp(
        1_200,
        link,
        &arp(2, own, ATTACKER, "10.0.0.2", own, "10.0.0.1"),
        &router,
    );
    let view = table.get(link, ip("10.0.0.2")).unwrap();
    assert_eq!(
        (view.lladdr, view.state),
        (Some(ATTACKER), NudState::Reachable)
    );
    // A gratuitous ARP overrides within locktime, and says only STALE.
    table.receive_arp(
        1_300,
        link,
        &arp(1, [0xff; 6], PEER, "10.0.0.2", [0; 6], "10.0.0.2"),
        &router,
    );
    let view = table.get(link, ip("10.0.0.2")).unwrap();
    assert_eq!((view.lladdr, view.state), (Some(PEER), NudState::Stale));
}

#[test]
fn a_static_entry_is_never_moved_by_arp_or_na() {
    let (fib, link) = setup();
    let text = "neigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev v0\nneigh add 2001:db8::2 lladdr 02:00:00:00:00:02 dev v0\n";
    let (fib, _) = fibre_fib::config::apply_str(&fib, "n.conf", text, false).unwrap();
    let router = FibRouter::new(&fib);
    let own = router.mac(link).unwrap();
    let mut table = NeighTable::from_fib(NeighSettings::default(), &fib, 0);
    table.receive_arp(
        5_000,
        link,
        &arp(1, [0xff; 6], ATTACKER, "10.0.0.2", [0; 6], "10.0.0.2"),
        &router,
    );
    let na = nd(
        136,
        own,
        ATTACKER,
        "2001:db8::2",
        "2001:db8::1",
        0x20,
        "2001:db8::2",
        Some((2, ATTACKER)),
        255,
    );
    table.receive_ndisc(5_000, link, &na, &router);
    for addr in ["10.0.0.2", "2001:db8::2"] {
        let view = table.get(link, ip(addr)).unwrap();
        assert_eq!(
            (view.lladdr, view.state),
            (Some(PEER), NudState::Permanent),
            "{addr}"
        );
    }
}

#[test]
fn an_unsolicited_na_creates_no_entry_and_one_for_our_address_is_ignored() {
    let (fib, link) = setup();
    let router = FibRouter::new(&fib);
    let own = router.mac(link).unwrap();
    let mut table = NeighTable::new(NeighSettings::default());
    let all_nodes = [0x33, 0x33, 0, 0, 0, 1];
    let unsolicited = nd(
        136,
        all_nodes,
        ATTACKER,
        "2001:db8::66",
        "ff02::1",
        0x20,
        "2001:db8::66",
        Some((2, ATTACKER)),
        255,
    );
    assert!(table
        .receive_ndisc(0, link, &unsolicited, &router)
        .is_empty());
    let solicited = nd(
        136,
        own,
        ATTACKER,
        "2001:db8::67",
        "2001:db8::1",
        0x60,
        "2001:db8::67",
        Some((2, ATTACKER)),
        255,
    );
    assert!(table.receive_ndisc(0, link, &solicited, &router).is_empty());
    let ours = nd(
        136,
        all_nodes,
        ATTACKER,
        "2001:db8::1",
        "ff02::1",
        0x20,
        "2001:db8::1",
        Some((2, ATTACKER)),
        255,
    );
    assert!(table.receive_ndisc(0, link, &ours, &router).is_empty());
    assert_eq!(table.entries().count(), 0);
}

#[test]
fn na_updates_follow_rfc_4861_section_7_2_5() {
    let (fib, link) = setup();
    let router = FibRouter::new(&fib);
    let own = router.mac(link).unwrap();
    let mut table = NeighTable::new(NeighSettings::default());
    let packet = ipv6_packet("2001:db8:9::9", "2001:db8::2");
    table.resolve(0, link, ip("2001:db8::2"), packet.clone(), &router);
    // Without a target link-layer address an INCOMPLETE entry ignores it.
    let bare = nd(
        136,
        own,
        PEER,
        "2001:db8::2",
        "2001:db8::1",
        0x60,
        "2001:db8::2",
        None,
        255,
    );
    assert!(table.receive_ndisc(10, link, &bare, &router).is_empty());
    // Hop limit other than 255: ignored.
    let far = nd(
        136,
        own,
        PEER,
        "2001:db8::2",
        "2001:db8::1",
        0x60,
        "2001:db8::2",
        Some((2, PEER)),
        64,
    );
    assert!(table.receive_ndisc(10, link, &far, &router).is_empty());
    // A solicited NA to a group is refused.
    let grouped = nd(
        136,
        [0x33, 0x33, 0, 0, 0, 1],
        PEER,
        "2001:db8::2",
        "ff02::1",
        0x60,
        "2001:db8::2",
        Some((2, PEER)),
        255,
    );
    assert!(table.receive_ndisc(10, link, &grouped, &router).is_empty());
    assert_eq!(
        table.get(link, ip("2001:db8::2")).unwrap().state,
        NudState::Incomplete
    );
    // Solicited, router flag: REACHABLE, router, the packet released.
    let good = nd(
        136,
        own,
        PEER,
        "2001:db8::2",
        "2001:db8::1",
        0xc0,
        "2001:db8::2",
        Some((2, PEER)),
        255,
    );
    let out = table.receive_ndisc(20, link, &good, &router);
    assert_eq!(
        out,
        [Action::Release {
            link,
            mac: PEER,
            packet
        }]
    );
    let view = table.get(link, ip("2001:db8::2")).unwrap();
    assert_eq!(
        (view.state, view.router, view.lladdr),
        (NudState::Reachable, true, Some(PEER))
    );
    // A different address without override: REACHABLE demoted to STALE,
    // address kept.
    let other = nd(
        136,
        own,
        ATTACKER,
        "2001:db8::2",
        "2001:db8::1",
        0x40,
        "2001:db8::2",
        Some((2, ATTACKER)),
        255,
    );
    table.receive_ndisc(30, link, &other, &router);
    let view = table.get(link, ip("2001:db8::2")).unwrap();
    assert_eq!(
        (view.state, view.lladdr, view.router),
        (NudState::Stale, Some(PEER), true)
    );
    // With override: the address moves; the router flag follows R.
    let moved = nd(
        136,
        own,
        ATTACKER,
        "2001:db8::2",
        "2001:db8::1",
        0x60,
        "2001:db8::2",
        Some((2, ATTACKER)),
        255,
    );
    table.receive_ndisc(40, link, &moved, &router);
    let view = table.get(link, ip("2001:db8::2")).unwrap();
    assert_eq!(
        (view.state, view.lladdr, view.router),
        (NudState::Reachable, Some(ATTACKER), false)
    );
}

#[test]
fn an_ns_for_us_is_answered_and_teaches_the_sender_stale() {
    let (fib, link) = setup();
    let router = FibRouter::new(&fib);
    let own = router.mac(link).unwrap();
    let mut table = NeighTable::new(NeighSettings::default());
    let ns = nd(
        135,
        [0x33, 0x33, 0xff, 0, 0, 1],
        PEER,
        "2001:db8::2",
        "ff02::1:ff00:1",
        0,
        "2001:db8::1",
        Some((1, PEER)),
        255,
    );
    let out = table.receive_ndisc(0, link, &ns, &router);
    let frames = sent(&out);
    assert_eq!(frames.len(), 1, "{out:?}");
    let na = &frames[0];
    assert_eq!(&na[..12], &[PEER, own].concat()[..]);
    // From the target to the solicitor, R|S|O, with our MAC as option.
    assert_eq!(&na[14 + 8..14 + 24], &v6("2001:db8::1").octets());
    assert_eq!(&na[14 + 24..14 + 40], &v6("2001:db8::2").octets());
    assert_eq!(na[54], 136);
    assert_eq!(na[58], 0xe0);
    assert_eq!(&na[78..86], &[&[2u8, 1][..], &own[..]].concat()[..]);
    // The sender's entry: STALE, then DELAY as the NA went out through it.
    assert_eq!(
        table.get(link, ip("2001:db8::2")).unwrap().state,
        NudState::Delay
    );
    // A unicast NS (a probe) is answered without override or option.
    let probe = nd(
        135,
        own,
        PEER,
        "2001:db8::2",
        "2001:db8::1",
        0,
        "2001:db8::1",
        Some((1, PEER)),
        255,
    );
    let frames = sent(&table.receive_ndisc(100, link, &probe, &router));
    assert_eq!(frames[0][58], 0xc0);
    assert_eq!(frames[0].len(), 14 + 40 + 24);
    // An NS for an address that is not ours: nothing.
    let other = nd(
        135,
        [0x33, 0x33, 0xff, 0, 0, 9],
        PEER,
        "2001:db8::2",
        "ff02::1:ff00:9",
        0,
        "2001:db8::9",
        Some((1, PEER)),
        255,
    );
    assert!(table.receive_ndisc(200, link, &other, &router).is_empty());
}
