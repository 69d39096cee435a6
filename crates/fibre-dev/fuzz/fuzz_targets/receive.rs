//! libFuzzer target: the whole GRE receive path, `Registry::receive_gre`,
//! over a registry of gre, ip6gre, gretap and ip6gretap tunnels configured
//! with keys, `icsum` and `iseq`, some of them shadowing others (exact
//! local beats wildcard).
//!
//! An input is a batch of frames. Each is either raw bytes or an inner
//! packet sent through the far end of one of the tunnels (a second
//! registry, so the frame starts out valid, fragments included), then
//! edited (bytes flipped, cut, padded) and optionally given back valid
//! checksums, so that mutations reach the checks behind the checksums.
//! Both registries are built afresh per input: `iseq` and `oseq` state
//! would otherwise make a crash depend on the inputs run before it.
//!
//! Beyond "never panics", the target checks what the receive contract
//! promises: every frame ends accepted (tagged with its tunnel) or dropped;
//! every drop by a tunnel is counted under its reason on that tunnel, and
//! only frames no tunnel claims go uncounted; each accepted frame went to
//! the most specific tunnel that matches it, which is up, whose stateless
//! checks accept it, and whose `iseq` order it keeps.
#![no_main]

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use fibre_dev::gre::{decapsulate, peek_tunnel_key, GreConfig, GreTunnel, TxMode};
use fibre_dev::route::{FixedRoutes, UnderlayRoute};
use fibre_dev::{DropReason, PacketBatch, PacketBuf, Registry, Verdict, WorkerId};
use fibre_net::ip::Protocol;
use fibre_net::{gre, ipv4, ipv6};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

/// The receiving side's tunnels: (ifindex, `ip link add` tokens).
const RECEIVERS: [(u32, &[&str]); 8] = [
    (
        10,
        &[
            "g_exact",
            "type",
            "gre",
            "remote",
            "192.0.2.1",
            "local",
            "192.0.2.2",
            "key",
            "7",
            "icsum",
            "iseq",
        ],
    ),
    // Same remote and key, any local: shadowed by g_exact while it is up.
    (
        11,
        &["g_wild", "type", "gre", "remote", "192.0.2.1", "key", "7"],
    ),
    (
        12,
        &[
            "g_plain",
            "type",
            "gre",
            "remote",
            "192.0.2.1",
            "local",
            "192.0.2.2",
        ],
    ),
    (
        13,
        &[
            "g_other",
            "type",
            "gre",
            "remote",
            "192.0.2.3",
            "key",
            "8",
            "icsum",
        ],
    ),
    (
        14,
        &[
            "g6",
            "type",
            "ip6gre",
            "remote",
            "2001:db8::1",
            "local",
            "2001:db8::2",
            "key",
            "9",
            "icsum",
            "iseq",
        ],
    ),
    (15, &["g6_plain", "type", "ip6gre", "remote", "2001:db8::1"]),
    (
        16,
        &[
            "tap",
            "type",
            "gretap",
            "remote",
            "192.0.2.1",
            "local",
            "192.0.2.2",
            "key",
            "7",
            "iseq",
        ],
    ),
    (
        17,
        &[
            "tap6",
            "type",
            "ip6gretap",
            "remote",
            "2001:db8::1",
            "local",
            "2001:db8::2",
            "icsum",
        ],
    ),
];

/// The far ends, one per receiver (same order): addresses swapped, and
/// sending what the receiver wants (or, for the wildcards, what their
/// shadowing tunnel refuses).
const SENDERS: [&[&str]; 8] = [
    &[
        "s_exact",
        "type",
        "gre",
        "remote",
        "192.0.2.2",
        "local",
        "192.0.2.1",
        "key",
        "7",
        "csum",
        "seq",
    ],
    &[
        "s_wild",
        "type",
        "gre",
        "remote",
        "192.0.2.2",
        "local",
        "192.0.2.1",
        "key",
        "7",
    ],
    &[
        "s_plain",
        "type",
        "gre",
        "remote",
        "192.0.2.2",
        "local",
        "192.0.2.1",
    ],
    &[
        "s_other",
        "type",
        "gre",
        "remote",
        "192.0.2.2",
        "local",
        "192.0.2.3",
        "key",
        "8",
        "csum",
    ],
    &[
        "s6",
        "type",
        "ip6gre",
        "remote",
        "2001:db8::2",
        "local",
        "2001:db8::1",
        "key",
        "9",
        "csum",
        "seq",
    ],
    &[
        "s6_plain",
        "type",
        "ip6gre",
        "remote",
        "2001:db8::2",
        "local",
        "2001:db8::1",
    ],
    &[
        "stap",
        "type",
        "gretap",
        "remote",
        "192.0.2.2",
        "local",
        "192.0.2.1",
        "key",
        "7",
        "seq",
    ],
    &[
        "stap6",
        "type",
        "ip6gretap",
        "remote",
        "2001:db8::2",
        "local",
        "2001:db8::1",
        "csum",
    ],
];

/// ifindex of the dummy device in both registries (never a tunnel).
const UNDERLAY: u32 = 1;
/// ifindex of the first sender tunnel.
const FIRST_SENDER: u32 = 20;
/// Room per buffer: jumbo-sized, so padding edits have space.
const ROOM: usize = 9_216;
/// Frames per batch at most (a NIC burst).
const MAX_FRAMES: usize = 64;

#[derive(Debug, Arbitrary)]
struct Input {
    /// Bit i set: receiver i is down.
    down: u8,
    frames: Vec<Frame>,
}

#[derive(Debug, Arbitrary)]
enum Frame {
    /// Bytes as they arrive, checksums optionally repaired.
    Raw { bytes: Vec<u8>, repair: bool },
    /// An inner packet sent by sender `from`, then edited.
    Sent {
        from: u8,
        inner: Inner,
        edits: Vec<Edit>,
        repair: bool,
    },
}

/// What a sender is given to encapsulate.
#[derive(Debug, Arbitrary)]
enum Inner {
    Ipv4 { tos: u8, dont_frag: bool, len: u16 },
    Ipv6 { traffic_class: u8, len: u16 },
    Bytes(Vec<u8>),
}

#[derive(Debug, Arbitrary)]
enum Edit {
    Xor { at: u16, value: u8 },
    Set { at: u16, value: u8 },
    Cut(u16),
    Pad(Vec<u8>),
}

fuzz_target!(|input: Input| {
    run(&input);
});

fn run(input: &Input) {
    let receiver = receivers();
    for (i, (index, _)) in RECEIVERS.iter().enumerate() {
        if input.down & (1 << i) != 0 {
            receiver.get(*index).unwrap().set_up(false);
        }
    }
    let sender = senders();
    let frames: Vec<Vec<u8>> = input
        .frames
        .iter()
        .flat_map(|f| build(&sender, f))
        .take(MAX_FRAMES)
        .collect();
    let mut batch = PacketBatch::with_capacity(frames.len());
    for f in &frames {
        let mut p = PacketBuf::new(0, ROOM);
        p.load(f).expect("frames are cut to ROOM");
        batch.push(p);
    }
    let before = snapshot(&receiver);
    let mut owners = vec![99; 3];
    let report = receiver.receive_gre(WorkerId::new(0), &mut batch, &mut owners);
    let after = snapshot(&receiver);
    check(&receiver, &frames, &batch, &owners, report, &before, &after);
}

/// The receiving registry: a dummy device and the receivers.
fn receivers() -> Registry {
    let mut registry = Registry::new(1);
    registry.add_dummy(UNDERLAY, "eth0", 1500).unwrap();
    let routes = Arc::new(FixedRoutes::new());
    for (index, tokens) in RECEIVERS {
        let config = GreConfig::parse(tokens).expect("fixed config parses");
        registry
            .add_gre(index, config, routes.clone(), TxMode::Lltx)
            .unwrap();
    }
    registry
}

/// The sending registry: the senders over a dummy underlay.
fn senders() -> Registry {
    let routes = Arc::new(FixedRoutes::new());
    for remote in ["192.0.2.2", "2001:db8::2"] {
        let route = UnderlayRoute {
            oif: UNDERLAY,
            gateway: None,
            src: None,
            mtu: 1500,
        };
        routes.set(remote.parse().unwrap(), route);
    }
    let mut registry = Registry::new(1);
    registry.add_dummy(UNDERLAY, "eth0", 1500).unwrap();
    for (i, tokens) in SENDERS.iter().enumerate() {
        let config = GreConfig::parse(tokens).expect("fixed config parses");
        registry
            .add_gre(
                FIRST_SENDER + i as u32,
                config,
                routes.clone(),
                TxMode::Lltx,
            )
            .unwrap();
    }
    registry
}

/// The frames one [`Frame`] stands for (several when the sender
/// fragments, none when it refuses the inner packet).
fn build(sender: &Registry, frame: &Frame) -> Vec<Vec<u8>> {
    let (mut frames, edits, repair) = match frame {
        Frame::Raw { bytes, repair } => (vec![bytes.clone()], &[][..], *repair),
        Frame::Sent {
            from,
            inner,
            edits,
            repair,
        } => {
            let index = FIRST_SENDER + u32::from(*from) % SENDERS.len() as u32;
            (send(sender, index, inner), &edits[..], *repair)
        }
    };
    for f in &mut frames {
        for edit in edits {
            apply(f, edit);
        }
        if repair {
            repair_frame(f);
        }
        f.truncate(ROOM);
    }
    frames
}

/// What tunnel `index` puts on the wire for `inner`.
fn send(sender: &Registry, index: u32, inner: &Inner) -> Vec<Vec<u8>> {
    let packet = inner_packet(inner);
    let mut batch = PacketBatch::with_capacity(1);
    let mut p = PacketBuf::new(128, ROOM);
    if p.load(&packet).is_err() {
        return Vec::new();
    }
    batch.push(p);
    let report = sender.transmit(index, WorkerId::new(0), &mut batch);
    assert_eq!(report.sent + report.dropped, batch.len(), "{report:?}");
    batch
        .packets()
        .iter()
        .filter(|p| p.verdict() == Verdict::Sent)
        .map(|p| p.data().to_vec())
        .collect()
}

/// A well-formed IPv4/IPv6 packet (UDP-numbered, zero payload), or the
/// bytes as given.
fn inner_packet(inner: &Inner) -> Vec<u8> {
    match *inner {
        Inner::Ipv4 {
            tos,
            dont_frag,
            len,
        } => {
            let payload_len = usize::from(len) % 3000;
            let mut buf = vec![0u8; ipv4::MIN_HEADER_LEN + payload_len];
            ipv4::Repr {
                src_addr: Ipv4Addr::new(10, 0, 0, 1),
                dst_addr: Ipv4Addr::new(10, 0, 0, 2),
                protocol: Protocol::Udp,
                payload_len,
                ttl: 64,
                tos,
                ident: len,
                dont_frag,
                more_frags: false,
                frag_offset: 0,
                options: &[],
            }
            .emit(&mut buf)
            .expect("sized for it");
            buf
        }
        Inner::Ipv6 { traffic_class, len } => {
            let payload_len = usize::from(len) % 3000;
            let mut buf = vec![0u8; ipv6::HEADER_LEN + payload_len];
            ipv6::Repr {
                src_addr: Ipv6Addr::new(0x2001, 0xdb8, 9, 0, 0, 0, 0, 1),
                dst_addr: Ipv6Addr::new(0x2001, 0xdb8, 9, 0, 0, 0, 0, 2),
                next_header: Protocol::Udp,
                payload_len,
                hop_limit: 64,
                traffic_class,
                flow_label: 0,
            }
            .emit(&mut buf)
            .expect("sized for it");
            buf
        }
        Inner::Bytes(ref bytes) => bytes.clone(),
    }
}

fn apply(frame: &mut Vec<u8>, edit: &Edit) {
    match edit {
        Edit::Xor { at, value } | Edit::Set { at, value } if !frame.is_empty() => {
            let at = usize::from(*at) % frame.len();
            if matches!(edit, Edit::Xor { .. }) {
                frame[at] ^= value;
            } else {
                frame[at] = *value;
            }
        }
        Edit::Cut(len) => frame.truncate(usize::from(*len)),
        Edit::Pad(bytes) => frame.extend_from_slice(bytes),
        _ => {}
    }
}

/// Refills the GRE checksum (when present) and the outer IPv4 header
/// checksum, innermost first.
fn repair_frame(frame: &mut [u8]) {
    match frame.first().map(|b| b >> 4) {
        Some(4) => {
            let Ok(mut packet) = ipv4::Packet::new_checked(&mut *frame) else {
                return;
            };
            if packet.protocol() == Protocol::Gre {
                if let Ok(mut g) = gre::Packet::new_checked(packet.payload_mut()) {
                    g.fill_checksum();
                }
            }
            packet.fill_checksum();
        }
        Some(6) => {
            let Ok(mut packet) = ipv6::Packet::new_checked(&mut *frame) else {
                return;
            };
            if packet.next_header() == Protocol::Gre {
                if let Ok(mut g) = gre::Packet::new_checked(packet.payload_mut()) {
                    g.fill_checksum();
                }
            }
        }
        _ => {}
    }
}

/// Per device (by position in the registry): received packets, bytes and
/// drops by reason.
fn snapshot(registry: &Registry) -> Vec<(u32, fibre_dev::stats::StatsSnapshot)> {
    registry
        .iter()
        .map(|d| (d.index(), d.stats().snapshot()))
        .collect()
}

fn check(
    registry: &Registry,
    frames: &[Vec<u8>],
    batch: &PacketBatch,
    owners: &[u32],
    report: fibre_dev::RxReport,
    before: &[(u32, fibre_dev::stats::StatsSnapshot)],
    after: &[(u32, fibre_dev::stats::StatsSnapshot)],
) {
    assert_eq!(owners.len(), frames.len(), "one owner per frame");
    assert_eq!(
        report.accepted + report.dropped + report.unmatched,
        frames.len(),
        "{report:?}"
    );
    let mut dropped_by_reason = [0u64; DropReason::COUNT];
    // (ifindex, packets, bytes) accepted, and the last accepted sequence
    // number per tunnel.
    let mut accepted: Vec<(u32, u64, u64)> = Vec::new();
    let mut last_seq: Vec<(u32, u32)> = Vec::new();
    for ((p, frame), &owner) in batch.packets().iter().zip(frames).zip(owners) {
        match p.verdict() {
            Verdict::Dropped(reason) => {
                assert_eq!(owner, 0, "a dropped frame has no owner");
                dropped_by_reason[reason.index()] += 1;
            }
            Verdict::Pending => {
                let tunnel = registry
                    .get(owner)
                    .and_then(|d| d.as_gre())
                    .unwrap_or_else(|| panic!("accepted by {owner}, not a tunnel"));
                let seq = check_accepted(registry, tunnel, frame, p.data());
                match accepted.iter_mut().find(|(i, _, _)| *i == owner) {
                    Some(entry) => {
                        entry.1 += 1;
                        entry.2 += p.len() as u64;
                    }
                    None => accepted.push((owner, 1, p.len() as u64)),
                }
                if let (true, Some(seq)) = (tunnel.config().iseq, seq) {
                    if let Some((_, last)) = last_seq.iter_mut().find(|(i, _)| *i == owner) {
                        assert!(
                            (seq.wrapping_sub(last.wrapping_add(1)) as i32) >= 0,
                            "iseq accepted {seq} after {last}"
                        );
                        *last = seq;
                    } else {
                        last_seq.push((owner, seq));
                    }
                }
            }
            Verdict::Sent => panic!("receive marked a frame sent"),
        }
    }
    assert_eq!(
        report.dropped + report.unmatched,
        dropped_by_reason.iter().sum::<u64>() as usize
    );
    // Every drop but the unclaimed frames is counted on a device, under
    // its reason; nothing else is counted.
    let mut counted = [0u64; DropReason::COUNT];
    for ((index, b), (index_after, a)) in before.iter().zip(after) {
        assert_eq!(index, index_after);
        for r in DropReason::ALL {
            counted[r.index()] += a.drops(r) - b.drops(r);
        }
        let (_, packets, bytes) = accepted
            .iter()
            .find(|(i, _, _)| i == index)
            .copied()
            .unwrap_or((*index, 0, 0));
        assert_eq!(
            a.rx_packets - b.rx_packets,
            packets,
            "rx_packets of {index}"
        );
        assert_eq!(a.rx_bytes - b.rx_bytes, bytes, "rx_bytes of {index}");
        assert_eq!((a.tx_packets, a.tx_bytes), (b.tx_packets, b.tx_bytes));
        if registry.get(*index).unwrap().as_gre().is_none() {
            assert_eq!(a, b, "device {index} is no tunnel");
        }
    }
    let mut expected = dropped_by_reason;
    expected[DropReason::NotForTunnel.index()] -= report.unmatched as u64;
    assert_eq!(counted, expected, "drops by reason, devices vs verdicts");
}

/// An accepted frame: `tunnel` is up, is the most specific match, its
/// stateless checks accept the frame, and the packet left is the frame's
/// inner packet. Returns the frame's sequence number.
fn check_accepted(
    registry: &Registry,
    tunnel: &GreTunnel,
    frame: &[u8],
    inner: &[u8],
) -> Option<u32> {
    assert!(tunnel.is_up(), "a down tunnel accepted a frame");
    let key = peek_tunnel_key(frame).expect("an accepted frame has a tunnel key");
    let config = tunnel.config();
    assert_eq!(
        (key.src, key.key, key.tap),
        (config.remote, config.ikey, config.kind.is_tap())
    );
    match config.local {
        Some(local) => assert_eq!(local, key.dst),
        None => {
            // A wildcard wins only when no exact tunnel that is up matches.
            let exact = registry.iter().filter_map(|d| d.as_gre()).any(|t| {
                let c = t.config();
                t.is_up()
                    && c.local == Some(key.dst)
                    && (c.remote, c.ikey, c.kind.is_tap()) == (key.src, key.key, key.tap)
            });
            assert!(!exact, "{} shadowed by an exact tunnel", config.name);
        }
    }
    let d = decapsulate(&tunnel.rx_policy(), frame).expect("the tunnel's checks accept it");
    assert_eq!(d.inner_len, inner.len());
    let original = &frame[d.header_len..d.header_len + d.inner_len];
    if d.set_ce {
        // Only the ECN bits (and the IPv4 checksum) may differ.
        let ecn = match inner[0] >> 4 {
            4 => inner[1] & 3,
            _ => (inner[1] >> 4) & 3,
        };
        assert_eq!(ecn, 3, "CE copied in");
        // mark_ce refills the checksum of a header that checks out whole.
        if let (4, Ok(p)) = (inner[0] >> 4, ipv4::Packet::new_checked(inner)) {
            assert!(p.verify_checksum(), "inner IPv4 checksum refilled");
        }
    } else {
        assert_eq!(original, inner);
    }
    d.seq
}
