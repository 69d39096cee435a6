//! Received frames find their tunnel as Linux's `ip_tunnel_lookup` does.

use std::sync::Arc;

use fibre_dev::gre::{GreConfig, TxMode};
use fibre_dev::route::FixedRoutes;
use fibre_dev::{DropReason, PacketBatch, PacketBuf, Registry, RxReport, Verdict, WorkerId};

mod common;
use common::{inner_udp, tunnel_pair, TUNNEL};

/// A frame as the far end `tokens` would send it.
fn frame_from(tokens: &[&str]) -> Vec<u8> {
    let (registry, _) = tunnel_pair(tokens, 1500);
    let v6 = tokens.contains(&"ip6gre");
    let inner = if v6 {
        inner_udp(
            "2001:db8:9::1".parse().unwrap(),
            "2001:db8:9::2".parse().unwrap(),
            (5, 6),
            b"six",
            9,
            0,
        )
    } else {
        inner_udp(
            "10.9.0.1".parse().unwrap(),
            "10.9.0.2".parse().unwrap(),
            (5, 6),
            b"four",
            9,
            0,
        )
    };
    let mut batch = PacketBatch::with_capacity(1);
    let mut p = PacketBuf::new(64, 2048);
    p.load(&inner).unwrap();
    batch.push(p);
    assert_eq!(
        registry.transmit(TUNNEL, WorkerId::new(0), &mut batch).sent,
        1
    );
    batch.packets()[0].data().to_vec()
}

#[test]
fn frames_go_to_the_most_specific_matching_tunnel() {
    let routes = Arc::new(FixedRoutes::new());
    let mut registry = Registry::new(1);
    let tunnels: [(u32, &[&str]); 5] = [
        (
            11,
            &[
                "exact",
                "type",
                "gre",
                "remote",
                "192.0.2.2",
                "local",
                "192.0.2.1",
                "key",
                "1",
            ],
        ),
        (
            12,
            &["wild", "type", "gre", "remote", "192.0.2.2", "key", "1"],
        ),
        (
            13,
            &[
                "nokey",
                "type",
                "gre",
                "remote",
                "192.0.2.2",
                "local",
                "192.0.2.1",
            ],
        ),
        (
            14,
            &[
                "six",
                "type",
                "ip6gre",
                "remote",
                "2001:db8::2",
                "local",
                "2001:db8::1",
            ],
        ),
        (
            15,
            &[
                "tap",
                "type",
                "gretap",
                "remote",
                "192.0.2.2",
                "local",
                "192.0.2.1",
            ],
        ),
    ];
    for (index, tokens) in tunnels {
        registry
            .add_gre(
                index,
                GreConfig::parse(tokens).unwrap(),
                routes.clone(),
                TxMode::Lltx,
            )
            .unwrap();
    }
    let frames = [
        frame_from(&[
            "s",
            "type",
            "gre",
            "remote",
            "192.0.2.1",
            "local",
            "192.0.2.2",
            "key",
            "1",
        ]),
        frame_from(&[
            "s",
            "type",
            "gre",
            "remote",
            "192.0.2.7",
            "local",
            "192.0.2.2",
            "key",
            "1",
        ]),
        frame_from(&[
            "s",
            "type",
            "gre",
            "remote",
            "192.0.2.1",
            "local",
            "192.0.2.2",
        ]),
        frame_from(&[
            "s",
            "type",
            "gre",
            "remote",
            "192.0.2.1",
            "local",
            "192.0.2.2",
            "key",
            "2",
        ]),
        frame_from(&[
            "s",
            "type",
            "ip6gre",
            "remote",
            "2001:db8::1",
            "local",
            "2001:db8::2",
        ]),
        vec![0x45, 0, 0, 20],
        // Claimed by `exact`, then refused there: its checksum is wrong.
        {
            let mut f = frame_from(&[
                "s",
                "type",
                "gre",
                "remote",
                "192.0.2.1",
                "local",
                "192.0.2.2",
                "key",
                "1",
                "csum",
            ]);
            let last = f.len() - 1;
            f[last] ^= 1;
            f
        },
        // Ethernet over GRE: only the gretap tunnel takes it, not `nokey`
        // with the same addresses.
        frame_from(&[
            "s",
            "type",
            "gretap",
            "remote",
            "192.0.2.1",
            "local",
            "192.0.2.2",
        ]),
    ];
    let mut batch = PacketBatch::with_capacity(frames.len());
    for f in &frames {
        let mut p = PacketBuf::new(0, 2048);
        p.load(f).unwrap();
        batch.push(p);
    }
    let mut owners = Vec::new();
    let report = registry.receive_gre(WorkerId::new(0), &mut batch, &mut owners);
    assert_eq!(
        report,
        RxReport {
            accepted: 5,
            dropped: 1,
            unmatched: 2
        }
    );
    assert_eq!(owners, [11, 12, 13, 0, 14, 0, 0, 15]);
    // Linux's gretap MTU over a 1500-byte underlay: 1500 - 20 - 4 - 14.
    assert_eq!(registry.get(15).unwrap().mtu(), 1462);
    let verdicts: Vec<Verdict> = batch.packets().iter().map(PacketBuf::verdict).collect();
    assert_eq!(verdicts[3], Verdict::Dropped(DropReason::NotForTunnel));
    assert_eq!(verdicts[6], Verdict::Dropped(DropReason::BadChecksum));
    assert_eq!(
        &batch.packets()[4].data()[24..40],
        &"2001:db8:9::2"
            .parse::<std::net::Ipv6Addr>()
            .unwrap()
            .octets()
    );
    let stats = |i| registry.get(i).unwrap().stats().snapshot();
    assert_eq!(
        (
            stats(11).rx_packets,
            stats(11).drops(DropReason::BadChecksum)
        ),
        (1, 1)
    );
    assert_eq!(
        (
            stats(12).rx_packets,
            stats(13).rx_packets,
            stats(14).rx_packets
        ),
        (1, 1, 1)
    );
    // A tunnel that is down claims nothing: the wildcard takes over.
    registry.get(11).unwrap().set_up(false);
    let mut batch = PacketBatch::with_capacity(1);
    let mut p = PacketBuf::new(0, 2048);
    p.load(&frames[0]).unwrap();
    batch.push(p);
    registry.receive_gre(WorkerId::new(0), &mut batch, &mut owners);
    assert_eq!(owners, [12]);
}
