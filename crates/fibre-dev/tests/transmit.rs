//! Transmit behaviour: path MTU, headroom, state, loops, route changes,
//! sequence numbers under concurrency, and the FIB-backed resolver.

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::Arc;

use fibre_dev::gre::{GreConfig, GreConfigError, GreTunnel, TxMode};
use fibre_dev::route::{FixedRoutes, UnderlayRoute};
use fibre_dev::{
    DropReason, FibRoutes, PacketBatch, PacketBuf, Registry, RegistryError, Verdict, WorkerId,
};
use fibre_fib::{
    AddrOp, AddressSpec, Command, Fib, LinkKind, NexthopSpec, Prefix, Protocol, RouteOp, RouteSpec,
    RouteType, Scope, TunnelError, TABLE_MAIN,
};

mod common;
use common::{inner_udp, tunnel_pair, tunnel_pair_mode, TUNNEL, UNDERLAY};

fn v4_inner(len: usize, df: bool) -> Vec<u8> {
    let mut p = inner_udp(
        "10.0.0.1".parse().unwrap(),
        "10.0.0.2".parse().unwrap(),
        (1, 2),
        &vec![0u8; len - 28],
        64,
        0,
    );
    if !df {
        p[6] &= !0x40;
        p[10..12].fill(0);
        let c = fibre_net::checksum::checksum(&p[..20]);
        p[10..12].copy_from_slice(&c.to_be_bytes());
    }
    p
}

fn batch_of(packets: &[Vec<u8>], headroom: usize) -> PacketBatch {
    let mut batch = PacketBatch::with_capacity(packets.len());
    for packet in packets {
        let mut p = PacketBuf::new(headroom, 9000);
        p.load(packet).unwrap();
        batch.push(p);
    }
    batch
}

const V4: &[&str] = &[
    "t0",
    "type",
    "gre",
    "remote",
    "192.0.2.2",
    "local",
    "192.0.2.1",
    "key",
    "3",
];

#[test]
fn too_big_packets_are_refused_or_fragmented_as_the_kernel_does() {
    let (registry, receiver) = tunnel_pair(V4, 1400);
    let mtu = 1400 - 20 - 8;
    assert_eq!(registry.get(TUNNEL).unwrap().mtu(), mtu);
    let v6 = inner_udp(
        "2001:db8::1".parse().unwrap(),
        "2001:db8::2".parse().unwrap(),
        (1, 2),
        &vec![0u8; 1400],
        64,
        0,
    );
    let no_df = v4_inner(mtu as usize + 1, false);
    let mut with_options = v4_inner(mtu as usize + 4, false);
    with_options[0] = 0x46; // IHL 6: 4 bytes of options (NOPs would be 0x01)
    with_options[20..24].copy_from_slice(&[1, 1, 1, 0]);
    with_options[10..12].fill(0);
    let c = fibre_net::checksum::checksum(&with_options[..24]);
    with_options[10..12].copy_from_slice(&c.to_be_bytes());
    let packets = [
        v4_inner(mtu as usize, true),
        v4_inner(mtu as usize + 1, true),
        no_df.clone(),
        v6,
        with_options,
    ];
    let mut batch = batch_of(&packets, 64);
    let report = registry.transmit(TUNNEL, WorkerId::new(0), &mut batch);
    // The DF-clear packet went out as two fragments (the second appended).
    assert_eq!(
        (report.sent, report.dropped, report.path_mtu),
        (3, 3, Some(mtu))
    );
    let verdicts: Vec<Verdict> = batch.packets().iter().map(PacketBuf::verdict).collect();
    assert_eq!(
        verdicts,
        [
            Verdict::Sent,
            Verdict::Dropped(DropReason::TooBig),
            Verdict::Sent,
            Verdict::Dropped(DropReason::TooBig),
            Verdict::Dropped(DropReason::FragmentationUnsupported),
            Verdict::Sent,
        ]
    );
    let s = registry.get(TUNNEL).unwrap().stats().snapshot();
    assert_eq!(
        (
            s.drops(DropReason::TooBig),
            s.drops(DropReason::FragmentationUnsupported)
        ),
        (2, 1)
    );
    assert_eq!(s.ip_link_stats().tx_errors, 3);
    // Both fragments fit the underlay and decapsulate at the far end into
    // the original packet's fragments.
    let frames: Vec<Vec<u8>> = [2, 5]
        .iter()
        .map(|&i| batch.packets()[i].data().to_vec())
        .collect();
    assert!(frames.iter().all(|f| f.len() <= 1400));
    let mut rx = batch_of(&frames, 0);
    assert_eq!(receiver.receive(WorkerId::new(0), &mut rx), 2);
    // Fragment payloads are multiples of 8: (1372 - 20) & !7 = 1352.
    let mut payload = Vec::new();
    for (p, (offset, more)) in rx.packets().iter().zip([(0, true), (1352, false)]) {
        let ip = fibre_net::ipv4::Packet::new_checked(p.data()).unwrap();
        let repr = fibre_net::ipv4::Repr::parse(&ip).unwrap();
        assert_eq!(
            (repr.frag_offset, repr.more_frags, repr.ident),
            (offset, more, 7)
        );
        payload.extend_from_slice(ip.payload());
    }
    assert_eq!(payload, no_df[20..]);
    // A smaller route MTU later wins over the tunnel MTU.
    let mut batch = batch_of(&[v4_inner(1300, true)], 64);
    registry.get(TUNNEL).unwrap().set_mtu(1200);
    assert_eq!(
        registry
            .transmit(TUNNEL, WorkerId::new(0), &mut batch)
            .path_mtu,
        Some(1200)
    );
}

#[test]
fn headroom_state_worker_and_garbage_are_counted() {
    let (registry, _) = tunnel_pair(V4, 1500);
    let tunnel = registry.get(TUNNEL).unwrap();
    let cases: [(Vec<u8>, usize, WorkerId, bool, DropReason); 5] = [
        (
            v4_inner(100, true),
            20,
            WorkerId::new(0),
            true,
            DropReason::NoHeadroom,
        ),
        (
            v4_inner(100, true),
            64,
            WorkerId::new(2),
            true,
            DropReason::InvalidWorker,
        ),
        (
            v4_inner(100, true),
            64,
            WorkerId::new(0),
            false,
            DropReason::DeviceDown,
        ),
        (
            vec![0x15; 40],
            64,
            WorkerId::new(0),
            true,
            DropReason::BadInnerPacket,
        ),
        (
            vec![0x45; 10],
            64,
            WorkerId::new(0),
            true,
            DropReason::BadInnerPacket,
        ),
    ];
    for (packet, headroom, worker, up, reason) in cases {
        tunnel.set_up(up);
        let before = tunnel.stats().snapshot().drops(reason);
        let mut batch = batch_of(&[packet], headroom);
        let report = registry.transmit(TUNNEL, worker, &mut batch);
        assert_eq!((report.sent, report.dropped), (0, 1), "{reason:?}");
        assert_eq!(batch.packets()[0].verdict(), Verdict::Dropped(reason));
        assert_eq!(
            tunnel.stats().snapshot().drops(reason),
            before + 1,
            "{reason:?}"
        );
        // Nothing was half-written in front of a refused packet.
        assert_eq!(batch.packets()[0].headroom(), headroom);
    }
    // The underlay going down is counted there.
    tunnel.set_up(true);
    registry.get(UNDERLAY).unwrap().set_up(false);
    let mut batch = batch_of(&[v4_inner(100, true)], 64);
    assert_eq!(
        registry
            .transmit(TUNNEL, WorkerId::new(0), &mut batch)
            .dropped,
        1
    );
    assert_eq!(
        registry
            .get(UNDERLAY)
            .unwrap()
            .stats()
            .snapshot()
            .drops(DropReason::DeviceDown),
        1
    );
}

#[test]
fn loops_are_refused_at_creation_and_counted_at_run_time() {
    let routes = Arc::new(FixedRoutes::new());
    let remote: IpAddr = "192.0.2.2".parse().unwrap();
    let via = |oif| UnderlayRoute {
        oif,
        gateway: None,
        src: Some("192.0.2.1".parse().unwrap()),
        mtu: 1500,
    };
    routes.set(remote, via(2));
    let config = GreConfig::parse(V4).unwrap();
    let err = GreTunnel::new(2, config.clone(), routes.clone(), TxMode::Lltx, 1).unwrap_err();
    assert_eq!(
        err,
        GreConfigError::Tunnel(TunnelError::UnderlayLoop {
            name: "t0".into(),
            remote
        })
    );
    assert!(err.to_string().contains("would loop"));

    // Created while the route was elsewhere, then the route turns into it.
    routes.set(remote, via(1));
    let mut registry = Registry::new(1);
    registry.add_dummy(1, "under0", 1500).unwrap();
    registry
        .add_gre(2, config, routes.clone(), TxMode::Lltx)
        .unwrap();
    routes.set(remote, via(2));
    let mut batch = batch_of(&[v4_inner(100, true)], 512);
    assert_eq!(
        registry.transmit(2, WorkerId::new(0), &mut batch).dropped,
        1
    );
    let stats = registry.get(2).unwrap().stats().snapshot();
    assert_eq!(stats.drops(DropReason::UnderlayLoop), 1);
    // `ip -s link` shows it as Linux does: a TX error and a collision.
    let link = stats.ip_link_stats();
    assert_eq!((link.tx_errors, link.tx_collisions), (1, 1));

    // Two tunnels routed through each other: bounded by the nesting limit.
    let other = GreConfig::parse(&[
        "t1",
        "type",
        "gre",
        "remote",
        "198.51.100.2",
        "local",
        "198.51.100.1",
    ])
    .unwrap();
    routes.set("198.51.100.2".parse().unwrap(), via(2));
    registry
        .add_gre(3, other, routes.clone(), TxMode::Lltx)
        .unwrap();
    routes.set(remote, via(3));
    let mut batch = batch_of(&[v4_inner(100, true)], 512);
    let report = registry.transmit(2, WorkerId::new(0), &mut batch);
    assert_eq!((report.sent, report.dropped), (0, 1));
    let loops: u64 = [2, 3]
        .iter()
        .map(|&i| {
            registry
                .get(i)
                .unwrap()
                .stats()
                .snapshot()
                .drops(DropReason::TunnelLoop)
        })
        .sum();
    assert_eq!(loops, 1, "one at the nesting limit");
    // Each of the 4 nesting levels (t0 with key: 28 bytes, t1: 24) added
    // its headers before the limit stopped it.
    assert_eq!(batch.packets()[0].headroom(), 512 - 2 * (28 + 24));
}

#[test]
fn route_changes_are_picked_up_without_per_packet_lookups() {
    let routes = Arc::new(FixedRoutes::new());
    let remote: IpAddr = "192.0.2.2".parse().unwrap();
    let via = |oif| UnderlayRoute {
        oif,
        gateway: None,
        src: Some("192.0.2.1".parse().unwrap()),
        mtu: 1500,
    };
    routes.set(remote, via(1));
    let mut registry = Registry::new(1);
    registry.add_dummy(1, "a0", 1500).unwrap();
    registry.add_dummy(5, "b0", 1500).unwrap();
    registry
        .add_gre(
            2,
            GreConfig::parse(V4).unwrap(),
            routes.clone(),
            TxMode::Lltx,
        )
        .unwrap();
    let tx = |registry: &Registry| {
        registry.transmit(
            2,
            WorkerId::new(0),
            &mut batch_of(&[v4_inner(100, true)], 64),
        )
    };
    assert_eq!(tx(&registry).sent, 1);
    routes.set(remote, via(5));
    assert_eq!(tx(&registry).sent, 1);
    assert_eq!(registry.get(5).unwrap().stats().snapshot().tx_packets, 1);
    routes.remove(remote);
    assert_eq!(tx(&registry).dropped, 1);
    assert_eq!(
        registry
            .get(2)
            .unwrap()
            .stats()
            .snapshot()
            .drops(DropReason::NoRoute),
        1
    );
    assert_eq!(
        registry.add_dummy(5, "c0", 1500),
        Err(RegistryError::IndexInUse(5))
    );
    assert_eq!(
        registry.add_dummy(6, "a0", 1500),
        Err(RegistryError::NameInUse("a0".into()))
    );
    assert_eq!(
        registry.add_dummy(0, "z0", 1500),
        Err(RegistryError::ZeroIndex)
    );
}

/// Sequence numbers from concurrent workers: all distinct, contiguous,
/// increasing per worker, in both modes.
#[test]
fn oseq_numbers_are_unique_and_ordered_per_worker() {
    for mode in [
        TxMode::Lltx,
        #[cfg(feature = "baselines")]
        TxMode::Locked,
    ] {
        let tokens = [
            "t0",
            "type",
            "gre",
            "remote",
            "192.0.2.2",
            "local",
            "192.0.2.1",
            "oseq",
        ];
        let (registry, _) = tunnel_pair_mode(&tokens, 1500, mode);
        const THREADS: u32 = 2;
        const BATCHES: usize = 500;
        let per_worker: Vec<Vec<u32>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..THREADS)
                .map(|w| {
                    let registry = &registry;
                    s.spawn(move || {
                        let inner = v4_inner(100, true);
                        let mut seqs = Vec::new();
                        let mut batch = batch_of(&vec![inner; 16], 64);
                        for _ in 0..BATCHES {
                            for p in batch.packets_mut() {
                                p.rewind(100).unwrap();
                            }
                            registry.transmit(TUNNEL, WorkerId::new(w), &mut batch);
                            for p in batch.packets() {
                                let d = p.data();
                                seqs.push(u32::from_be_bytes([d[24], d[25], d[26], d[27]]));
                            }
                        }
                        seqs
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut all = HashSet::new();
        for seqs in &per_worker {
            assert!(
                seqs.windows(2).all(|w| w[0] < w[1]),
                "{mode:?}: increasing per worker"
            );
            all.extend(seqs.iter().copied());
        }
        let total = THREADS as usize * BATCHES * 16;
        assert_eq!(all.len(), total, "{mode:?}: distinct");
        assert_eq!(
            all.iter().max(),
            Some(&(total as u32 - 1)),
            "{mode:?}: contiguous from 0"
        );
    }
}

fn fib_with_underlay() -> Fib {
    let mut fib = Fib::new();
    fib.apply(&Command::LinkAdd {
        name: "eth0".into(),
        kind: LinkKind::Dummy,
        mtu: Some(1400),
    })
    .unwrap();
    fib.apply(&Command::LinkSet {
        name: "eth0".into(),
        up: Some(true),
        mtu: None,
    })
    .unwrap();
    fib.apply(&Command::Addr {
        op: AddrOp::Add,
        spec: AddressSpec::new("eth0", "192.0.2.1".parse().unwrap(), 24),
    })
    .unwrap();
    fib
}

#[test]
fn fib_backed_tunnel_validates_and_sends() {
    let fib = fib_with_underlay();
    let eth0 = fib.link_by_name("eth0").unwrap().index;
    let bad_local = GreConfig::parse(&[
        "gt0",
        "type",
        "gre",
        "remote",
        "192.0.2.2",
        "local",
        "192.0.2.99",
    ])
    .unwrap();
    assert_eq!(
        bad_local.validate(&fib),
        Err(GreConfigError::Tunnel(TunnelError::LocalNotOnRouter {
            name: "gt0".into(),
            local: "192.0.2.99".parse().unwrap()
        }))
    );
    let config = GreConfig::parse(&[
        "gt0",
        "type",
        "gre",
        "remote",
        "192.0.2.2",
        "local",
        "192.0.2.1",
        "csum",
    ])
    .unwrap();
    config.validate(&fib).unwrap();

    let routes = Arc::new(FibRoutes::new(fib));
    let mut registry = Registry::new(1);
    registry.add_dummy(eth0, "eth0", 1400).unwrap();
    registry
        .add_gre(100, config.clone(), routes.clone(), TxMode::Lltx)
        .unwrap();
    assert_eq!(registry.get(100).unwrap().mtu(), 1400 - 20 - 8);
    let mut batch = batch_of(&[v4_inner(100, true)], 64);
    assert_eq!(registry.transmit(100, WorkerId::new(0), &mut batch).sent, 1);
    assert_eq!(registry.get(eth0).unwrap().stats().snapshot().tx_packets, 1);

    // A route to the remote through a link named like the tunnel: a loop.
    routes
        .apply(&Command::LinkAdd {
            name: "gt0".into(),
            kind: LinkKind::Dummy,
            mtu: None,
        })
        .unwrap();
    routes
        .apply(&Command::LinkSet {
            name: "gt0".into(),
            up: Some(true),
            mtu: None,
        })
        .unwrap();
    let via_tunnel = RouteSpec {
        mtu_lock: false,
        metrics: Default::default(),
        table: TABLE_MAIN,
        dst: Prefix::host("192.0.2.2".parse().unwrap()),
        tos: 0,
        kind: RouteType::Unicast,
        protocol: Protocol::BOOT,
        scope: Scope::LINK,
        metric: None,
        prefsrc: None,
        mtu: None,
        nexthops: vec![NexthopSpec {
            gateway: None,
            dev: Some("gt0".into()),
            weight: 1,
            onlink: false,
        }],
        multipath: false,
    };
    routes
        .apply(&Command::Route {
            op: RouteOp::Add,
            spec: via_tunnel,
        })
        .unwrap();
    let err = routes.with_fib(|fib| config.validate(fib)).unwrap_err();
    assert!(
        matches!(
            err,
            GreConfigError::Tunnel(TunnelError::UnderlayLoop { .. })
        ),
        "{err}"
    );
    // The running tunnel sees the new route (generation changed) and
    // sends by the new link, which the registry does not have: dropped.
    let mut batch = batch_of(&[v4_inner(100, true)], 64);
    assert_eq!(
        registry.transmit(100, WorkerId::new(0), &mut batch).dropped,
        1
    );
}

/// A NIC-queue stand-in outside the crate: keeps what it is given.
#[derive(Debug)]
struct CapturePort {
    stats: fibre_dev::stats::DeviceStats,
    frames: std::sync::Mutex<Vec<Vec<u8>>>,
}

impl fibre_dev::Port for CapturePort {
    fn index(&self) -> u32 {
        7
    }
    fn name(&self) -> &str {
        "cap0"
    }
    fn device_type(&self) -> fibre_dev::DeviceType {
        fibre_dev::DeviceType::Other("capture")
    }
    fn mtu(&self) -> u32 {
        1500
    }
    fn set_mtu(&self, _mtu: u32) {}
    fn is_up(&self) -> bool {
        true
    }
    fn set_up(&self, _up: bool) {}
    fn stats(&self) -> &fibre_dev::stats::DeviceStats {
        &self.stats
    }
    fn transmit(&self, _worker: WorkerId, batch: &mut PacketBatch) {
        let mut frames = self.frames.lock().unwrap();
        for p in batch.pending_mut() {
            frames.push(p.data().to_vec());
            p.set_verdict(Verdict::Sent);
        }
    }
    fn receive(&self, _worker: WorkerId, _batch: &mut PacketBatch) -> usize {
        0
    }
    fn link_info(&self) -> (&'static str, String) {
        (
            "BROADCAST,MULTICAST",
            "link/ether 02:00:00:00:00:07 brd ff:ff:ff:ff:ff:ff".into(),
        )
    }
}

#[test]
fn a_tunnel_sends_through_a_port_from_outside_the_crate() {
    let routes = Arc::new(FixedRoutes::new());
    routes.set(
        "192.0.2.2".parse().unwrap(),
        UnderlayRoute {
            oif: 7,
            gateway: None,
            src: Some("192.0.2.1".parse().unwrap()),
            mtu: 1500,
        },
    );
    let mut registry = Registry::new(1);
    let port = CapturePort {
        stats: fibre_dev::stats::DeviceStats::new(1),
        frames: Default::default(),
    };
    registry.add_port(Box::new(port)).unwrap();
    registry
        .add_gre(8, GreConfig::parse(V4).unwrap(), routes, TxMode::Lltx)
        .unwrap();
    let mut batch = batch_of(&[v4_inner(100, true), v4_inner(60, true)], 64);
    assert_eq!(registry.transmit(8, WorkerId::new(0), &mut batch).sent, 2);
    let text = registry.format_ip_s_link();
    assert!(
        text.contains("7: cap0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500"),
        "{text}"
    );
    assert!(
        text.contains("8: t0: <POINTOPOINT,NOARP,UP,LOWER_UP> mtu 1472"),
        "{text}"
    );
    assert!(
        text.contains("    link/gre 192.0.2.1 peer 192.0.2.2\n"),
        "{text}"
    );
    let Some(fibre_dev::Device::Port(port)) = registry.get(7) else {
        panic!("port 7")
    };
    assert_eq!(port.device_type(), fibre_dev::DeviceType::Other("capture"));
    // The tunnel's statistics count inner bytes, as Linux's do.
    let s = registry.get(8).unwrap().stats().snapshot();
    assert_eq!((s.tx_packets, s.tx_bytes), (2, 160));
}
