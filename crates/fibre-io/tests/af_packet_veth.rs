//! AF_PACKET ports on a veth pair inside a namespace this test makes:
//! frames sent on one end arrive whole and in order on the other, through
//! the receive ring's blocks and the transmit batches; the kernel's own
//! sends with checksum and segmentation offload arrive completed and
//! segmented.
//!
//! Needs root and `ip`; without them it says why and passes, and
//! `FIBRE_REQUIRE_TOOLS=1` (CI) makes that a failure.

use std::os::fd::AsRawFd;
use std::process::Command;
use std::time::{Duration, Instant};

use fibre_io::{AfPacket, AfPacketConfig, Port};

/// A local experimental EtherType (IEEE 802 "local experimental 1"): the
/// kernel's own frames on the link (MLD, router solicitations) are told
/// apart by it.
const ETHERTYPE: [u8; 2] = [0x88, 0xb5];

/// A namespace holding the veth pair `a0`-`a1`, deleted when dropped.
struct Namespace(String);

impl Namespace {
    /// `fibre-io-<pid>-<role>`: tests run in parallel in one process.
    fn new(role: &str) -> Option<Self> {
        let name = format!("fibre-io-{}-{role}", std::process::id());
        let ip = |args: &[&str]| {
            Command::new("ip")
                .args(args)
                .status()
                .is_ok_and(|s| s.success())
        };
        if !ip(&["netns", "add", &name]) {
            return None;
        }
        let ns = Namespace(name);
        let n = ns.0.as_str();
        let made = ip(&[
            "-n", n, "link", "add", "a0", "type", "veth", "peer", "name", "a1",
        ]) && ip(&["-n", n, "link", "set", "a0", "up"])
            && ip(&["-n", n, "link", "set", "a1", "up"]);
        made.then_some(ns)
    }

    /// `ip -n NAME ARGS`, which must succeed.
    fn ip(&self, args: &[&str]) {
        let status = Command::new("ip")
            .args(["-n", &self.0])
            .args(args)
            .status()
            .expect("ip runs");
        assert!(status.success(), "ip -n {} {args:?}", self.0);
    }

    /// Gives a0 address `local`/24 and a static neighbour `peer`, so that
    /// the namespace's own kernel sends IP out of a0 towards a1.
    fn local_sender(&self, local: &str, peer: &str) {
        self.ip(&["addr", "add", &format!("{local}/24"), "dev", "a0"]);
        let neighbour = [
            "neigh",
            "add",
            peer,
            "lladdr",
            "02:00:00:00:00:02",
            "dev",
            "a0",
        ];
        self.ip(&neighbour);
    }

    /// Runs `f` on a thread that entered the namespace (sockets opened
    /// there stay in it).
    fn run<R: Send + 'static>(&self, f: impl FnOnce() -> R + Send + 'static) -> R {
        let path = format!("/run/netns/{}", self.0);
        std::thread::spawn(move || {
            let file = std::fs::File::open(&path).expect("the namespace's file opens");
            // SAFETY: a valid namespace descriptor; only this thread moves.
            let entered = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(entered, 0, "setns: {}", std::io::Error::last_os_error());
            f()
        })
        .join()
        .expect("the namespace thread finishes")
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

fn test_frame(seq: u16, len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[..6].copy_from_slice(&[0xff; 6]);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
    f[12..14].copy_from_slice(&ETHERTYPE);
    f[14..16].copy_from_slice(&seq.to_be_bytes());
    for (i, b) in f[16..].iter_mut().enumerate() {
        *b = (i as u8) ^ (seq as u8);
    }
    f
}

/// Receives on `port` until `count` test frames came or 5 s passed,
/// `max` at a time.
fn receive_test_frames(port: &mut AfPacket, count: usize, max: usize) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while got.len() < count && Instant::now() < deadline {
        port.wait(50).expect("poll");
        port.receive(max, &mut |frames| {
            assert!(frames.len() <= max, "{} frames lent at once", frames.len());
            got.extend(
                frames
                    .iter()
                    .filter(|f| f.len() >= 16 && f[12..14] == ETHERTYPE)
                    .map(|f| f.to_vec()),
            );
        })
        .expect("receive");
    }
    got
}

fn namespace(test: &str, role: &str) -> Option<Namespace> {
    let ns = Namespace::new(role);
    if ns.is_none() {
        fibre_testkit::unavailable(
            test,
            "needs root and ip (iproute2) with network namespaces and veth",
        );
    }
    ns
}

#[test]
fn frames_cross_a_veth_pair_whole_and_in_order() {
    let Some(ns) = namespace("frames_cross_a_veth_pair_whole_and_in_order", "order") else {
        return;
    };
    ns.run(|| {
        let config = AfPacketConfig {
            // Room for every frame sent (about 4 blocks' worth), so that
            // none is dropped while the test is not reading.
            block_size: 1 << 16,
            blocks: 16,
            tx_batch: 16,
            ..AfPacketConfig::default()
        };
        let mut a0 = AfPacket::open("a0", config).expect("a0 opens");
        let mut a1 = AfPacket::open("a1", config).expect("a1 opens");
        // 300 frames of sizes 60..1514: more than one transmit batch, more
        // than one ring block, received 7 at a time so that blocks are
        // left and resumed part-way.
        let sent: Vec<Vec<u8>> = (0..300u16)
            .map(|i| test_frame(i, 60 + usize::from(i) * 97 % 1455))
            .collect();
        for chunk in sent.chunks(50) {
            for f in chunk {
                a0.transmit(f).expect("queued");
            }
            a0.flush().expect("flushed");
        }
        let got = receive_test_frames(&mut a1, sent.len(), 7);
        assert_eq!(got.len(), sent.len(), "frames received");
        assert!(got == sent, "the frames arrive whole and in order");
        let (s0, s1) = (a0.stats(), a1.stats());
        assert_eq!((s0.sent, s0.send_dropped), (300, 0));
        assert!(s1.received >= 300 && s1.truncated == 0, "{s1:?}");
        // And back, in one call that takes everything.
        for f in &sent[..20] {
            a1.transmit(f).expect("queued");
        }
        a1.flush().expect("flushed");
        assert!(receive_test_frames(&mut a0, 20, 256) == sent[..20]);
    });
}

#[test]
fn a_missing_interface_and_oversized_frames_are_refused() {
    let Some(ns) = namespace(
        "a_missing_interface_and_oversized_frames_are_refused",
        "refused",
    ) else {
        return;
    };
    ns.run(|| {
        let error = AfPacket::open("nosuch0", AfPacketConfig::default()).unwrap_err();
        assert_eq!(error.to_string(), "Cannot find device \"nosuch0\"");
        let bad = AfPacketConfig {
            block_size: 5000,
            ..AfPacketConfig::default()
        };
        assert!(AfPacket::open("a0", bad).is_err());
        let mut a0 = AfPacket::open("a0", AfPacketConfig::default()).expect("a0 opens");
        assert!(a0.transmit(&vec![0u8; 1519]).is_err());
        assert_eq!(a0.flush().expect("nothing to flush"), 0);
    });
}

#[test]
fn partial_udp_checksums_from_a_local_sender_are_completed() {
    let Some(ns) = namespace(
        "partial_udp_checksums_from_a_local_sender_are_completed",
        "csum",
    ) else {
        return;
    };
    // The kernel sends UDP out of a0 with transmit checksum offload (veth's
    // default), so a1 receives it CHECKSUM_PARTIAL.
    ns.local_sender("10.9.0.1", "10.9.0.2");
    ns.run(|| {
        let mut a1 = AfPacket::open("a1", AfPacketConfig::default()).expect("a1 opens");
        let socket = std::net::UdpSocket::bind("10.9.0.1:0").expect("a UDP socket");
        socket
            .send_to(b"a partial checksum, completed", "10.9.0.2:9")
            .expect("sent");
        let mut udp = None;
        let deadline = Instant::now() + Duration::from_secs(5);
        while udp.is_none() && Instant::now() < deadline {
            a1.wait(50).expect("poll");
            a1.receive(64, &mut |frames| {
                udp = udp.take().or_else(|| {
                    frames
                        .iter()
                        .find(|f| f.len() > 42 && f[12..14] == [8, 0] && f[23] == 17)
                        .map(|f| f.to_vec())
                });
            })
            .expect("receive");
        }
        let frame = udp.expect("the UDP datagram arrives");
        let stats = a1.stats();
        assert_eq!(stats.partial_checksums, 1, "{stats:?}");
        // The one's complement sum over the pseudo-header and the datagram.
        let sum = ones_complement(&[&frame[26..34], &[0, 17], &frame[38..40], &frame[34..]]);
        assert_eq!(sum, 0xffff, "the UDP checksum is whole");
    });
}

/// Receives on `port` for up to 5 s until `count` UDP/IPv4 frames to port
/// 9 came.
fn receive_udp_to_discard(port: &mut AfPacket, count: usize) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while got.len() < count && Instant::now() < deadline {
        port.wait(50).expect("poll");
        port.receive(64, &mut |frames| {
            got.extend(
                frames
                    .iter()
                    .filter(|f| f.len() > 42 && f[12..14] == [8, 0] && f[23] == 17)
                    .filter(|f| f[36..38] == 9u16.to_be_bytes())
                    .map(|f| f.to_vec()),
            );
        })
        .expect("receive");
    }
    got
}

#[test]
fn a_udp_super_frame_from_a_local_sender_is_lent_as_its_segments() {
    let Some(ns) = namespace(
        "a_udp_super_frame_from_a_local_sender_is_lent_as_its_segments",
        "uso",
    ) else {
        return;
    };
    ns.local_sender("10.9.1.1", "10.9.1.2");
    ns.run(|| {
        // Two sockets on a1 see the same frame: one as the kernel hands it
        // over, one segmented.
        let whole = AfPacketConfig {
            vnet_header: false,
            ..AfPacketConfig::default()
        };
        let mut raw = AfPacket::open("a1", whole).expect("a1 opens");
        let mut segmented = AfPacket::open("a1", AfPacketConfig::default()).expect("a1 opens");
        let socket = std::net::UdpSocket::bind("10.9.1.1:0").expect("a UDP socket");
        // UDP segmentation offload (UDP_SEGMENT, Linux 4.18): one send of
        // 3500 bytes leaves as one super-frame that veth carries whole.
        const SOL_UDP: libc::c_int = 17;
        const UDP_SEGMENT: libc::c_int = 103;
        let gso_size: libc::c_int = 1000;
        // SAFETY: a live int of the size given; the kernel only reads it.
        let set = unsafe {
            libc::setsockopt(
                socket.as_raw_fd(),
                SOL_UDP,
                UDP_SEGMENT,
                (&gso_size as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        assert_eq!(set, 0, "UDP_SEGMENT: {}", std::io::Error::last_os_error());
        let data: Vec<u8> = (0..3500u32).map(|i| (i * 13 + i / 256) as u8).collect();
        socket.send_to(&data, "10.9.1.2:9").expect("sent");

        let frames = receive_udp_to_discard(&mut raw, 1);
        assert_eq!(frames.len(), 1, "the kernel hands over one frame");
        assert_eq!(frames[0].len(), 14 + 20 + 8 + 3500, "a super-frame");
        assert_eq!(raw.stats().segmented, 0);

        let segments = receive_udp_to_discard(&mut segmented, 4);
        let stats = segmented.stats();
        assert_eq!(
            (stats.segmented, stats.segments, stats.gso_refused),
            (1, 4, 0),
            "{stats:?}"
        );
        let lengths: Vec<usize> = segments.iter().map(|s| s.len() - 42).collect();
        assert_eq!(lengths, [1000, 1000, 1000, 500]);
        let mut joined = Vec::new();
        let first_id = u16::from_be_bytes([segments[0][18], segments[0][19]]);
        for (i, s) in segments.iter().enumerate() {
            assert_eq!(
                u16::from_be_bytes([s[18], s[19]]),
                first_id.wrapping_add(i as u16)
            );
            assert_eq!(
                usize::from(u16::from_be_bytes([s[16], s[17]])),
                s.len() - 14
            );
            assert_eq!(
                usize::from(u16::from_be_bytes([s[38], s[39]])),
                s.len() - 34
            );
            assert_eq!(ones_complement(&[&s[14..34]]), 0xffff, "IPv4 header {i}");
            let length = (s.len() - 34) as u16;
            let pseudo = [0, 17, (length >> 8) as u8, length as u8];
            assert_eq!(
                ones_complement(&[&s[26..34], &pseudo, &s[34..]]),
                0xffff,
                "UDP checksum of segment {i}"
            );
            joined.extend_from_slice(&s[42..]);
        }
        assert_eq!(joined, data);

        // Segments count toward a receive's `max`: three super-frames of
        // four, taken with max 5, lend two of them (8 frames) in calls of
        // at most 5, and leave the third for the next receive.
        for _ in 0..3 {
            socket.send_to(&data, "10.9.1.2:9").expect("sent");
        }
        std::thread::sleep(Duration::from_millis(100));
        let mut calls = Vec::new();
        let lent = segmented
            .receive(5, &mut |frames| calls.push(frames.len()))
            .expect("receive");
        assert!(calls.iter().all(|&c| c <= 5), "{calls:?}");
        assert_eq!(lent, calls.iter().sum::<usize>());
        assert!(
            (5..=8).contains(&lent),
            "lent {lent} with max 5 ({calls:?}): {:?}",
            segmented.stats()
        );
        let rest = receive_udp_to_discard(&mut segmented, 12 - lent);
        assert_eq!(segmented.stats().segmented, 4, "{:?}", segmented.stats());
        assert!(!rest.is_empty());
    });
}

/// The folded one's complement sum of `parts` (each of even length but
/// the last), computed word by word.
fn ones_complement(parts: &[&[u8]]) -> u32 {
    let mut sum: u32 = parts
        .iter()
        .flat_map(|p| p.chunks(2))
        .map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum
}
