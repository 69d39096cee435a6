//! Malformed frames are dropped and counted under their reason, never a
//! panic; then millions of random and mutated frames through the decoder.

use fibre_dev::gre::{decapsulate, GreTunnel, RxPolicy};
use fibre_dev::{DropReason, PacketBatch, PacketBuf, Verdict, WorkerId};
use fibre_net::checksum;

mod common;
use common::{inner_udp, tunnel_pair, TUNNEL};

/// A valid frame from a tunnel with key 7, csum and seq (IPv4 underlay).
fn good_frame() -> (Vec<u8>, GreTunnel) {
    frame_with_inner_tos(0)
}

/// [`good_frame`] around an inner packet with this TOS byte.
fn frame_with_inner_tos(tos: u8) -> (Vec<u8>, GreTunnel) {
    let tokens = [
        "t0",
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
    ];
    let (registry, receiver) = tunnel_pair(&tokens, 1500);
    let inner = inner_udp(
        "10.0.0.1".parse().unwrap(),
        "10.0.0.2".parse().unwrap(),
        (1, 2),
        b"payload!",
        64,
        tos,
    );
    let mut batch = PacketBatch::with_capacity(1);
    let mut p = PacketBuf::new(64, 2048);
    p.load(&inner).unwrap();
    batch.push(p);
    assert_eq!(
        registry.transmit(TUNNEL, WorkerId::new(0), &mut batch).sent,
        1
    );
    (batch.packets()[0].data().to_vec(), receiver)
}

/// Refills the outer IPv4 header checksum after an edit.
fn fix_ip_checksum(frame: &mut [u8]) {
    frame[10..12].fill(0);
    let c = checksum::checksum(&frame[..20]);
    frame[10..12].copy_from_slice(&c.to_be_bytes());
}

/// Refills the GRE checksum (header at 20, C set) after an edit.
fn fix_gre_checksum(frame: &mut [u8]) {
    frame[24..26].fill(0);
    let c = checksum::checksum(&frame[20..]);
    frame[24..26].copy_from_slice(&c.to_be_bytes());
}

fn receive_one(receiver: &GreTunnel, frame: &[u8]) -> Verdict {
    let mut batch = PacketBatch::with_capacity(1);
    let mut p = PacketBuf::new(0, 4096);
    p.load(frame).unwrap();
    batch.push(p);
    receiver.receive(WorkerId::new(0), &mut batch);
    batch.packets()[0].verdict()
}

#[test]
fn each_malformation_is_dropped_under_its_reason() {
    let (good, receiver) = good_frame();
    type Edit = fn(&mut Vec<u8>);
    let cases: Vec<(&str, Edit, DropReason)> = vec![
        (
            "truncated inside GRE header",
            |f| {
                f.truncate(30);
                f[2..4].copy_from_slice(&30u16.to_be_bytes());
                fix_ip_checksum(f)
            },
            DropReason::Truncated,
        ),
        (
            "truncated below outer header",
            |f| f.truncate(12),
            DropReason::Truncated,
        ),
        (
            "outer length beyond buffer",
            |f| {
                let n = f.len() as u16 + 4;
                f[2..4].copy_from_slice(&n.to_be_bytes());
                fix_ip_checksum(f)
            },
            DropReason::Truncated,
        ),
        (
            "outer length below header",
            |f| {
                f[2..4].copy_from_slice(&10u16.to_be_bytes());
                fix_ip_checksum(f)
            },
            DropReason::BadOuterHeader,
        ),
        (
            "outer checksum wrong",
            |f| f[10] ^= 0xff,
            DropReason::BadOuterHeader,
        ),
        (
            "bad checksum",
            |f| {
                let last = f.len() - 1;
                f[last] ^= 1
            },
            DropReason::BadChecksum,
        ),
        (
            "checksum field wrong",
            |f| f[24] ^= 0x10,
            DropReason::BadChecksum,
        ),
        (
            "wrong key",
            |f| {
                f[31] = 8;
                fix_gre_checksum(f)
            },
            DropReason::KeyMismatch,
        ),
        (
            "no key",
            |f| {
                remove_word(f, 28, 0x20);
            },
            DropReason::KeyMismatch,
        ),
        (
            "version 1",
            |f| {
                f[21] |= 1;
                fix_gre_checksum(f)
            },
            DropReason::BadVersion,
        ),
        (
            "routing bit",
            |f| {
                f[20] |= 0x40;
                fix_gre_checksum(f)
            },
            DropReason::RoutingPresent,
        ),
        (
            "no checksum although icsum",
            |f| {
                remove_word(f, 24, 0x80);
            },
            DropReason::ChecksumMissing,
        ),
        (
            "no sequence number although iseq",
            |f| {
                remove_word(f, 32, 0x10);
            },
            DropReason::SeqMissing,
        ),
        (
            "protocol not IP",
            |f| {
                f[22..24].copy_from_slice(&0x6558u16.to_be_bytes());
                fix_gre_checksum(f)
            },
            DropReason::UnknownProtocol,
        ),
        (
            "protocol says IPv6, packet is IPv4",
            |f| {
                f[22..24].copy_from_slice(&0x86ddu16.to_be_bytes());
                fix_gre_checksum(f)
            },
            DropReason::UnknownProtocol,
        ),
        (
            "wrong source",
            |f| {
                f[15] = 9;
                fix_ip_checksum(f)
            },
            DropReason::NotForTunnel,
        ),
        (
            "not GRE",
            |f| {
                f[9] = 17;
                fix_ip_checksum(f)
            },
            DropReason::NotForTunnel,
        ),
        (
            "outer fragment",
            |f| {
                f[6] = 0x20;
                fix_ip_checksum(f)
            },
            DropReason::BadOuterHeader,
        ),
        ("not IP at all", |f| f[0] = 0x15, DropReason::BadOuterHeader),
    ];
    let mut expected = [0u64; DropReason::COUNT];
    for (what, edit, reason) in cases {
        let mut frame = good.clone();
        edit(&mut frame);
        assert_eq!(
            receive_one(&receiver, &frame),
            Verdict::Dropped(reason),
            "{what}"
        );
        expected[reason.index()] += 1;
    }
    let stats = receiver.stats().snapshot();
    assert_eq!(stats.drops, expected);
    assert_eq!(stats.rx_packets, 0);
    // Reserved flag bits are ignored, as Linux does; the frame is accepted.
    let mut frame = good.clone();
    frame[20] |= 0x08;
    fix_gre_checksum(&mut frame);
    assert_eq!(receive_one(&receiver, &frame), Verdict::Pending);
    // A down tunnel receives nothing.
    receiver.set_up(false);
    assert_eq!(
        receive_one(&receiver, &good),
        Verdict::Dropped(DropReason::NotForTunnel)
    );
}

/// RFC 6040 on receipt: CE over Not-ECT is dropped, CE over ECT is copied
/// into the inner header (whose checksum stays valid).
#[test]
fn congestion_marks_follow_rfc_6040() {
    for (inner_ecn, expected) in [(0u8, None), (1, Some(3)), (2, Some(3)), (3, Some(3))] {
        let (mut frame, receiver) = frame_with_inner_tos(0x20 | inner_ecn);
        assert_eq!(
            frame[1] & 3,
            if inner_ecn == 3 { 2 } else { inner_ecn },
            "encapsulation copies ECN, CE as ECT(0)"
        );
        frame[1] |= 3; // CE on the way
        fix_ip_checksum(&mut frame);
        let mut batch = PacketBatch::with_capacity(1);
        let mut p = PacketBuf::new(0, 4096);
        p.load(&frame).unwrap();
        batch.push(p);
        receiver.receive(WorkerId::new(0), &mut batch);
        let p = &batch.packets()[0];
        match expected {
            None => assert_eq!(p.verdict(), Verdict::Dropped(DropReason::EcnCeOnNotEct)),
            Some(ecn) => {
                assert_eq!(p.verdict(), Verdict::Pending);
                assert_eq!(p.data()[1], 0x20 | ecn);
                let inner = fibre_net::ipv4::Packet::new_checked(p.data()).unwrap();
                assert!(inner.verify_checksum(), "inner checksum refilled");
            }
        }
    }
}

/// Removes the 4-byte GRE word at `at`, clears `flag` in the first flags
/// byte, fixes the lengths and checksums.
fn remove_word(frame: &mut Vec<u8>, at: usize, flag: u8) {
    frame.drain(at..at + 4);
    frame[20] &= !flag;
    let len = frame.len() as u16;
    frame[2..4].copy_from_slice(&len.to_be_bytes());
    fix_ip_checksum(frame);
    if frame[20] & 0x80 != 0 {
        fix_gre_checksum(frame);
    }
}

/// xorshift64*: a fixed-seed generator (no dependency needed for noise).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// `FIBRE_DEV_SOAK_INPUTS` inputs (default 2 million): half random bytes
/// behind a plausible outer header, half mutations of valid frames. The
/// decoder must never panic, and whatever it accepts must lie inside the
/// frame.
#[test]
fn decoder_survives_millions_of_random_and_mutated_inputs() {
    let inputs: u64 = std::env::var("FIBRE_DEV_SOAK_INPUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000_000);
    let (good, _) = good_frame();
    // The far end of `good_frame`'s tunnel, and a keyless tap on it.
    let policies = [
        RxPolicy {
            local: Some("192.0.2.2".parse().unwrap()),
            remote: "192.0.2.1".parse().unwrap(),
            ikey: Some(7),
            icsum: true,
            iseq: true,
            tap: false,
        },
        RxPolicy {
            local: None,
            remote: "192.0.2.1".parse().unwrap(),
            ikey: None,
            icsum: false,
            iseq: false,
            tap: true,
        },
    ];
    let mut rng = Rng(0x5eed_1234_abcd_9876);
    let mut buf = vec![0u8; 256];
    let mut accepted = 0u64;
    for i in 0..inputs {
        let mut policy = &policies[(i & 1) as usize];
        let len;
        if i % 4 < 2 {
            len = (rng.next() % 120) as usize;
            for b in buf[..len].iter_mut() {
                *b = rng.next() as u8;
            }
            if len > 0 && i % 8 < 4 {
                buf[0] = 0x45; // mostly IPv4-looking
            }
        } else {
            // Mutations of a valid frame, judged by the policy it was made
            // for; every other one gets its checksums refilled so the
            // mutation reaches the checks behind them (key, protocol,
            // inner header, ECN).
            policy = &policies[0];
            len = good.len()
                - rng.next().is_multiple_of(4) as usize * (rng.next() as usize % good.len());
            buf[..len].copy_from_slice(&good[..len]);
            let mutations = rng.next() % 4; // 0: the frame as sent
            for _ in 0..mutations {
                let at = rng.next() as usize % len.max(1);
                if len > 0 {
                    buf[at] ^= 1 << (rng.next() % 8);
                }
            }
            if i % 8 >= 6 && len >= 36 {
                fix_ip_checksum(&mut buf[..len]);
                if buf[20] & 0x80 != 0 {
                    fix_gre_checksum(&mut buf[..len]);
                }
            }
        }
        if let Ok(d) = decapsulate(policy, &buf[..len]) {
            assert!(d.header_len + d.inner_len <= len);
            accepted += 1;
        }
    }
    // Some inputs must get all the way through, or the deep checks were
    // never reached.
    assert!(accepted > inputs / 100, "{accepted} of {inputs} accepted");
    eprintln!("{inputs} inputs, {accepted} accepted");
}

/// Random inner packets through every tunnel kind's transmit path (with
/// fragmentation for DF-clear IPv4): each ends sent or dropped, never a
/// panic, and what was sent decapsulates at the far end.
#[test]
fn transmit_survives_random_inner_packets() {
    let kinds: [&[&str]; 4] = [
        &[
            "t0",
            "type",
            "gre",
            "remote",
            "192.0.2.2",
            "local",
            "192.0.2.1",
            "key",
            "1",
            "csum",
            "seq",
        ],
        &[
            "t0",
            "type",
            "ip6gre",
            "remote",
            "2001:db8::2",
            "local",
            "2001:db8::1",
            "ttl",
            "inherit",
            "tos",
            "inherit",
        ],
        &[
            "t0",
            "type",
            "gretap",
            "remote",
            "192.0.2.2",
            "local",
            "192.0.2.1",
        ],
        &[
            "t0",
            "type",
            "gre",
            "remote",
            "192.0.2.2",
            "local",
            "192.0.2.1",
            "tos",
            "inherit",
        ],
    ];
    let mut rng = Rng(0x0dd_5eed);
    for tokens in kinds {
        let (registry, receiver) = tunnel_pair(tokens, 700);
        let (mut sent, mut fragmented) = (0, 0);
        for round in 0..20_000u32 {
            let len = (rng.next() % 1600) as usize;
            let mut bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            if len > 0 && round % 2 == 0 {
                bytes[0] = if round % 4 == 0 { 0x45 } else { 0x60 };
            }
            if len >= 20 && round % 8 == 0 {
                // A well-formed IPv4 header, DF clear, so fragmentation runs.
                bytes[2..4].copy_from_slice(&(len as u16).to_be_bytes());
                bytes[6] = 0;
                bytes[7] = 0;
                fix_ip_checksum(&mut bytes);
            }
            let mut batch = PacketBatch::with_capacity(1);
            let mut p = PacketBuf::new(128, 2048);
            p.load(&bytes).unwrap();
            batch.push(p);
            let report = registry.transmit(TUNNEL, WorkerId::new(0), &mut batch);
            assert_eq!(report.sent + report.dropped, batch.len());
            sent += report.sent;
            fragmented += usize::from(batch.len() > 1);
            for p in batch.packets() {
                if p.verdict() != Verdict::Sent {
                    continue;
                }
                let mut rx = PacketBatch::with_capacity(1);
                let mut frame = PacketBuf::new(0, 2048);
                frame.load(p.data()).unwrap();
                rx.push(frame);
                // Sequence numbers only grow here, so iseq accepts them all.
                assert_eq!(
                    receiver.receive(WorkerId::new(0), &mut rx),
                    1,
                    "{tokens:?} round {round}"
                );
            }
        }
        // The paths behind the checks were reached.
        assert!(sent > 1_000, "{tokens:?}: {sent} sent");
        if !tokens.contains(&"gretap") {
            assert!(fragmented > 100, "{tokens:?}: {fragmented} fragmented");
        }
    }
}
