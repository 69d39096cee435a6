//! The worker with the control side's neighbour table (`fibre-neigh`)
//! instead of a fixed map: a static `neigh` line of the configuration is
//! used as soon as it is published; a next hop without an entry is punted,
//! solicited by ARP, learnt from the reply and used by the next packet, as
//! the kernel's `neigh_resolve_output` and `arp_process` do.

use std::net::Ipv4Addr;

use fibre_fib::{config, Fib};
use fibre_fwd::{PortConfig, PuntKind, Worker, WorkerConfig};
use fibre_neigh::{Action, FibRouter, NeighPublisher, NeighSettings, NeighTable, Router};

/// A UDP packet from 10.0.0.9 (behind port 0) to `dst`, TTL 64, in a frame
/// to `port_mac`.
fn udp_frame(port_mac: [u8; 6], dst: Ipv4Addr) -> Vec<u8> {
    let mut frame = vec![0u8; 14 + 28];
    frame[..6].copy_from_slice(&port_mac);
    frame[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 9]);
    frame[12..14].copy_from_slice(&[0x08, 0x00]);
    frame[14..30].copy_from_slice(&[0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 9]);
    frame[30..34].copy_from_slice(&dst.octets());
    let sum = fibre_net::checksum::checksum(&frame[14..34]);
    frame[24..26].copy_from_slice(&sum.to_be_bytes());
    frame
}

/// An ARP reply from `sender` at `sender_mac` to the router's `target` at
/// `target_mac`.
fn arp_reply(
    sender_mac: [u8; 6],
    sender: Ipv4Addr,
    target_mac: [u8; 6],
    target: Ipv4Addr,
) -> Vec<u8> {
    let mut frame = Vec::with_capacity(42);
    frame.extend_from_slice(&target_mac);
    frame.extend_from_slice(&sender_mac);
    frame.extend_from_slice(&[0x08, 0x06, 0, 1, 0x08, 0x00, 6, 4, 0, 2]);
    frame.extend_from_slice(&sender_mac);
    frame.extend_from_slice(&sender.octets());
    frame.extend_from_slice(&target_mac);
    frame.extend_from_slice(&target.octets());
    frame
}

#[test]
fn published_neighbours_are_used_and_a_miss_is_resolved_by_arp() {
    let (fib, _) = config::apply_str(
        &Fib::new(),
        "r.conf",
        "link add p0 type veth peer name q0\nlink set p0 up\naddr add 10.0.0.1/24 dev p0\n\
         link add p1 type veth peer name q1\nlink set p1 up\naddr add 10.1.0.1/24 dev p1\n\
         neigh add 10.1.0.7 lladdr 02:00:00:00:01:07 dev p1 nud permanent\n",
        false,
    )
    .unwrap();
    let (p0, p1) = (
        fib.link_by_name("p0").unwrap().index,
        fib.link_by_name("p1").unwrap().index,
    );
    let router = FibRouter::new(&fib);
    let (mac0, mac1) = (router.mac(p0).unwrap(), router.mac(p1).unwrap());
    let mut table = NeighTable::from_fib(NeighSettings::default(), &fib, 0);
    let domain = fibre_rcu::Domain::new();
    let mut publisher = NeighPublisher::new(&domain);
    let reader = publisher.reader();
    publisher.publish(&mut table);
    let ports = [PortConfig::new(p0, mac0), PortConfig::new(p1, mac1)];
    let mut worker = Worker::new(&fib, reader, &ports, WorkerConfig::default());

    // The static entry: forwarded to its MAC at once.
    worker.receive_burst(0, &[udp_frame(mac0, Ipv4Addr::new(10, 1, 0, 7))], 0);
    let mut sent = Vec::new();
    worker.drain_port(1, |f| sent.push(f.to_vec()));
    assert_eq!(sent.len(), 1);
    assert_eq!(
        &sent[0][..12],
        &[2, 0, 0, 0, 1, 7, mac1[0], mac1[1], mac1[2], mac1[3], mac1[4], mac1[5]]
    );

    // No entry for 10.1.0.8: the worker punts the packet with its next hop.
    let unknown = Ipv4Addr::new(10, 1, 0, 8);
    worker.receive_burst(0, &[udp_frame(mac0, unknown)], 0);
    let mut punted = Vec::new();
    worker.drain_punts(|p| punted.push((p.kind, p.link, p.next_hop, p.frame.to_vec())));
    assert_eq!(punted.len(), 1);
    let (kind, link, next_hop, frame) = &punted[0];
    assert_eq!(
        (*kind, *link, *next_hop),
        (PuntKind::Unresolved, p1, Some(unknown.into()))
    );

    // The control side queues it and asks by ARP (a broadcast request).
    let actions = table.resolve(10, p1, unknown.into(), frame[14..].to_vec(), &router);
    let request = actions
        .iter()
        .find_map(|a| match a {
            Action::Send { link, frame } if *link == p1 => Some(frame.clone()),
            _ => None,
        })
        .expect("an ARP request");
    assert_eq!(&request[..6], &[0xff; 6]);
    assert_eq!(&request[12..14], &[0x08, 0x06]);
    assert_eq!(&request[38..42], &unknown.octets());

    // The reply releases the queued packet to the new MAC ...
    let learnt = [2, 0, 0, 0, 1, 8];
    let reply = arp_reply(learnt, unknown, mac1, Ipv4Addr::new(10, 1, 0, 1));
    let actions = table.receive_arp(20, p1, &reply, &router);
    let released: Vec<_> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Release { link, mac, packet } => Some((*link, *mac, packet.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(released.len(), 1);
    assert_eq!((released[0].0, released[0].1), (p1, learnt));
    assert_eq!(
        released[0].2[8], 63,
        "the worker had already decreased the TTL"
    );

    // ... and once published, the worker forwards the next packet itself.
    publisher.publish(&mut table);
    worker.receive_burst(0, &[udp_frame(mac0, unknown)], 30);
    let mut sent = Vec::new();
    worker.drain_port(1, |f| sent.push(f.to_vec()));
    let reasons: Vec<_> = worker
        .counters()
        .drop_reasons()
        .filter(|&(_, n)| n > 0)
        .collect();
    let mut punts = Vec::new();
    worker.drain_punts(|p| punts.push((p.kind, p.next_hop)));
    assert_eq!(
        sent.len(),
        1,
        "dropped {reasons:?}, punted {punts:?}, table {:?}",
        table.get(p1, unknown.into())
    );
    assert_eq!(&sent[0][..6], &learnt);
    assert_eq!(worker.counters().forwarded, 2);
}
