//! `fibre serve` with several workers and `fibre ctl`, end to end: hosts
//! in namespaces of their own, joined by veth pairs to a router namespace
//! where fibre (not the kernel: it has no addresses there and does not
//! forward) routes between them. The hosts' kernels are the oracle: their
//! `ping` (IPv4 and IPv6, both ways), a TCP transfer they checksum,
//! `tracepath`'s path MTU, and the router namespace's interface counters.
//!
//! The hosts keep veth's default offloads (TSO/GSO and transmit checksum
//! on): their TCP reaches fibre as 64 KiB super-frames, which fibre-io
//! segments as the kernel's `skb_gso_segment` would.
//!
//! Needs root, `ip`, iputils' `ping` and `tracepath`, `ethtool` (to see
//! that the hosts' segmentation offload is on), `python3` (the TCP ends and
//! the UDP flows) and util-linux's `setpriv` (a client of another uid); without them each test says why and
//! passes, and `FIBRE_REQUIRE_TOOLS=1` (CI) makes that a failure. Every
//! test makes and deletes its own namespaces (a prefix of its own), and
//! its traffic is bounded in count and time.

#[path = "support/netns.rs"]
mod netns;
#[path = "kernel_diff/process.rs"]
mod process;
#[path = "support/serve.rs"]
mod serve;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use netns::Namespace;
use serde_json::Value;
use serve::{ping, stop_by_sigterm, ROUTER_SYSCTLS};

const FIBRE: &str = env!("CARGO_BIN_EXE_fibre");

/// The router's configuration: three links, IPv4 and IPv6 on the first
/// two, and 10.9.0.1 (an address of h2) reached through r1.
const CONFIG: &str = "link add r0 type veth peer name x0
link set x0 up
link set r0 up
addr add 10.0.1.1/24 dev r0
addr add fd00:1::1/64 dev r0
link add r1 type veth peer name x1
link set x1 up
link set r1 up
addr add 10.0.2.1/24 dev r1
addr add fd00:2::1/64 dev r1
link add r2 type veth peer name x2
link set x2 up
link set r2 up
addr add 10.0.3.1/24 dev r2
route add 10.9.0.1/32 via 10.0.2.2
";

/// Hosts: no duplicate address detection to wait for, and h2 takes
/// packets for 10.9.0.1 on either of its links.
const HOST_SYSCTLS: &[(&str, &str)] = &[
    ("net/ipv6/conf/all/accept_dad", "0"),
    ("net/ipv6/conf/default/accept_dad", "0"),
    ("net/ipv4/conf/all/rp_filter", "0"),
    ("net/ipv4/conf/default/rp_filter", "0"),
];

/// How the veth pairs are made.
#[derive(Clone, Copy)]
struct Links {
    /// `numrxqueues`/`numtxqueues` of each pair (1: veth's default).
    queues: u32,
    /// The MTU of r1 and h2's end of it.
    r1_mtu: u32,
}

/// h1 (10.0.1.2, fd00:1::2) -- r0 [fibre] r1 -- h2 (10.0.2.2, fd00:2::2,
/// 10.9.0.1 on lo), and r2 -- h2's second link (10.0.3.2).
fn topology(prefix: &str, links: Links) -> Result<[Namespace; 3], String> {
    let h1 = Namespace::create(prefix, "h1", HOST_SYSCTLS)?;
    let r = Namespace::create(prefix, "r", ROUTER_SYSCTLS)?;
    let h2 = Namespace::create(prefix, "h2", HOST_SYSCTLS)?;
    let queues = links.queues.to_string();
    let pairs = [
        (&h1, "h1", "r0", 1, true),
        (&h2, "h2", "r1", 2, true),
        (&h2, "h2b", "r2", 3, false),
    ];
    for (host, inside, outside, subnet, default) in pairs {
        host.ip(&[
            "link",
            "add",
            inside,
            "numrxqueues",
            &queues,
            "numtxqueues",
            &queues,
            "type",
            "veth",
            "peer",
            "name",
            outside,
            "numrxqueues",
            &queues,
            "numtxqueues",
            &queues,
        ])?;
        if outside == "r1" {
            let mtu = links.r1_mtu.to_string();
            host.ip(&["link", "set", inside, "mtu", &mtu])?;
            host.ip(&["link", "set", outside, "mtu", &mtu])?;
        }
        host.ip(&["link", "set", outside, "netns", r.name()])?;
        host.ip(&["addr", "add", &format!("10.0.{subnet}.2/24"), "dev", inside])?;
        host.ip(&["link", "set", inside, "up"])?;
        if default {
            host.ip(&[
                "addr",
                "add",
                &format!("fd00:{subnet}::2/64"),
                "dev",
                inside,
                "nodad",
            ])?;
            host.ip(&[
                "route",
                "add",
                "default",
                "via",
                &format!("10.0.{subnet}.1"),
            ])?;
            host.ip(&[
                "-6",
                "route",
                "add",
                "default",
                "via",
                &format!("fd00:{subnet}::1"),
            ])?;
        }
        r.ip(&["link", "set", outside, "up"])?;
    }
    h2.ip(&["addr", "add", "10.9.0.1/32", "dev", "lo"])?;
    h2.ip(&["link", "set", "lo", "up"])?;
    Ok([h1, r, h2])
}

/// The topology for test `test` (namespaces prefixed `prefix`), or `None`
/// when this machine cannot run it (the reason said).
fn hosts(test: &str, prefix: &str, links: Links) -> Option<[Namespace; 3]> {
    if let Some(reason) =
        serve::unavailable_reason(&["ip", "ping", "tracepath", "python3", "ethtool", "setpriv"])
    {
        fibre_testkit::unavailable(test, &reason);
        return None;
    }
    Some(topology(prefix, links).expect("the namespaces are made"))
}

/// A running `fibre serve` in the router namespace, stopped by SIGTERM to
/// its pid when dropped.
struct Router {
    child: Child,
    socket: PathBuf,
    dir: PathBuf,
    stderr: BufReader<std::process::ChildStderr>,
}

impl Router {
    fn start(r: &Namespace, name: &str, workers: u32) -> Router {
        let dir = std::env::temp_dir().join(format!("fibre-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("router.conf");
        std::fs::write(&config, CONFIG).unwrap();
        let socket = dir.join("ctl.sock");
        let workers = workers.to_string();
        let mut child = r
            .command(
                FIBRE,
                &[
                    "--config",
                    config.to_str().unwrap(),
                    "serve",
                    "--port",
                    "r0",
                    "--port",
                    "r1",
                    "--port",
                    "r2",
                    "--workers",
                    &workers,
                    "--socket",
                    socket.to_str().unwrap(),
                    "--seconds",
                    "120",
                ],
            )
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("fibre serve starts");
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        stderr.read_line(&mut first).unwrap();
        assert!(
            first.contains("forwarding on r0, r1, r2 with"),
            "fibre serve: {first}"
        );
        Router {
            child,
            socket,
            dir,
            stderr,
        }
    }

    /// `fibre [FLAGS] ctl LINE...` against this router.
    fn ctl(&self, flags: &[&str], lines: &[&str]) -> process::Finished {
        let mut command = Command::new(FIBRE);
        command
            .args(flags)
            .args(["ctl", "--socket", self.socket.to_str().unwrap()])
            .args(lines);
        process::run(command, "", Duration::from_secs(20)).expect("fibre ctl runs")
    }

    /// `ctl -j LINE`, parsed.
    fn ctl_json(&self, line: &str) -> Value {
        let done = self.ctl(&["-j"], &[line]);
        assert_eq!(done.code, Some(0), "ctl -j {line}: {}", done.stderr);
        serde_json::from_str(&done.stdout)
            .unwrap_or_else(|e| panic!("{line}: {e}: {}", done.stdout))
    }

    /// SIGTERM, then the exit status and what it printed.
    fn stop(mut self) -> (std::process::ExitStatus, String) {
        let status = stop_by_sigterm(&mut self.child);
        let mut rest = String::new();
        self.stderr.read_to_string(&mut rest).unwrap();
        let _ = std::fs::remove_dir_all(&self.dir);
        (status, rest)
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let pid = self.child.id().to_string();
            let _ = Command::new("kill").args(["-TERM", &pid]).status();
            std::thread::sleep(Duration::from_millis(200));
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn all_received(done: &process::Finished, count: u32) -> bool {
    done.stdout
        .contains(&format!("{count} packets transmitted, {count} received"))
}

/// The kernel's counter `direction.field` (`tx.packets`, `rx.bytes`) of
/// the router namespace's `dev`.
fn link_counter(r: &Namespace, dev: &str, direction: &str, field: &str) -> u64 {
    let out = r.ip(&["-s", "-j", "link", "show", dev]).unwrap();
    let v: Value = serde_json::from_str(&out).unwrap();
    v[0]["stats64"][direction][field].as_u64().unwrap()
}

/// The kernel's count of packets the router namespace's `dev` sent.
fn tx_packets(r: &Namespace, dev: &str) -> u64 {
    link_counter(r, dev, "tx", "packets")
}

#[test]
fn ping_both_ways_over_two_workers_and_ctl_reads_the_state() {
    let Some([h1, r, h2]) = hosts(
        "ping_both_ways_over_two_workers",
        "fsc1",
        Links {
            queues: 1,
            r1_mtu: 1500,
        },
    ) else {
        return;
    };
    let router = Router::start(&r, "ctl-ping", 2);
    let pings = [
        (&h1, "10.0.2.2", "h1 -> h2"),
        (&h2, "10.0.1.2", "h2 -> h1"),
        (&h1, "fd00:2::2", "h1 -> h2 (IPv6)"),
        (&h2, "fd00:1::2", "h2 -> h1 (IPv6)"),
    ];
    for (host, to, what) in pings {
        let done = ping(host, &["-c", "3", "-i", "0.2", "-W", "2", to]);
        assert!(
            all_received(&done, 3),
            "{what} across fibre: {}{}",
            done.stdout,
            done.stderr
        );
    }

    // The live neighbour table holds both hosts, each family.
    let neigh = router.ctl(&[], &["neigh show", "-6 neigh show"]);
    assert_eq!(neigh.code, Some(0), "{}", neigh.stderr);
    for (addr, dev) in [
        ("10.0.1.2", "r0"),
        ("10.0.2.2", "r1"),
        ("fd00:1::2", "r0"),
        ("fd00:2::2", "r1"),
    ] {
        assert!(
            neigh
                .stdout
                .lines()
                .any(|l| l.starts_with(&format!("{addr} dev {dev} lladdr "))),
            "{addr} in neigh show:\n{}",
            neigh.stdout
        );
    }
    // The workers' counters, summed: 12 echo requests and 12 replies.
    let workers = router.ctl_json("workers show");
    let listed = workers["workers"].as_array().unwrap();
    assert_eq!(listed.len(), 2, "{workers}");
    let sum = |field: &str| -> u64 { listed.iter().map(|w| w[field].as_u64().unwrap()).sum() };
    assert_eq!(
        Some(sum("forwarded")),
        workers["total"]["forwarded"].as_u64()
    );
    // The first packet to each host waits for its neighbour (punted, then
    // sent by the control thread); every other one is forwarded.
    let carried = sum("forwarded") + sum("punted_unresolved");
    assert!(carried >= 24, "forwarded or resolved {carried}: {workers}");

    // Configuration through ctl, answered as ip -batch answers.
    let added = router.ctl(
        &[],
        &[
            "route add 10.8.0.0/16 via 10.0.2.2",
            "route add 10.8.0.0/16 via 10.0.2.2",
            "route add 10.7.0.0/16 via 10.0.2.2",
        ],
    );
    assert_eq!(added.code, Some(1), "{added:?}");
    assert_eq!(
        added.stderr,
        "RTNETLINK answers: File exists\nCommand failed ctl:2\n"
    );
    let shown = router.ctl(
        &[],
        &["route show", "route get 10.8.1.1", "route get 10.7.1.1"],
    );
    assert!(
        shown.stdout.contains("10.8.0.0/16 via 10.0.2.2 dev r1"),
        "{}",
        shown.stdout
    );
    assert!(!shown.stdout.contains("10.7.0.0/16"), "{}", shown.stdout);
    assert!(
        shown.stderr.contains("Network is unreachable") && shown.stderr.contains("ctl:3"),
        "{}",
        shown.stderr
    );
    // Neighbours through ctl reach the live table.
    let added = router.ctl(
        &[],
        &[
            "neigh add 10.0.2.99 lladdr 02:00:00:00:00:99 dev r1",
            "neigh show dev r1",
        ],
    );
    assert_eq!(added.code, Some(0), "{}", added.stderr);
    assert!(
        added
            .stdout
            .contains("10.0.2.99 lladdr 02:00:00:00:00:99 PERMANENT"),
        "{}",
        added.stdout
    );
    let deleted = router.ctl(&[], &["neigh del 10.0.2.99 dev r1", "neigh show dev r1"]);
    assert_eq!(deleted.code, Some(0), "{}", deleted.stderr);
    assert!(!deleted.stdout.contains("10.0.2.99"), "{}", deleted.stdout);

    // Only root and the router's user: the file is 0600, and behind it
    // SO_PEERCRED refuses another uid even where the file lets it connect.
    let mode = std::fs::metadata(&router.socket).unwrap().permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o600
    );
    let as_nobody = |socket: &str| {
        let mut command = Command::new("setpriv");
        command.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            FIBRE,
            "ctl",
            "--socket",
            socket,
            "route show",
        ]);
        process::run(command, "", Duration::from_secs(20)).expect("setpriv runs")
    };
    let socket = router.socket.to_str().unwrap();
    let denied = as_nobody(socket);
    assert_eq!(denied.code, Some(1), "{denied:?}");
    assert!(
        denied.stderr.contains("Permission denied"),
        "{}",
        denied.stderr
    );
    std::fs::set_permissions(
        &router.socket,
        std::os::unix::fs::PermissionsExt::from_mode(0o666),
    )
    .unwrap();
    let refused = as_nobody(socket);
    assert_eq!(refused.code, Some(1), "{refused:?}");
    assert!(
        refused
            .stderr
            .contains("uid 65534 may not use this control socket"),
        "{}",
        refused.stderr
    );
    assert!(refused.stdout.is_empty(), "{}", refused.stdout);

    let bad = router.ctl(&[], &["route add 10.6.0.0/16 via"]);
    assert_eq!(bad.code, Some(1));
    assert!(bad.stderr.contains("\"via\""), "{}", bad.stderr);
    assert!(
        bad.stderr.ends_with("Command failed ctl:1\n"),
        "{}",
        bad.stderr
    );

    // A client that connects and never sends does not wedge the router,
    // garbage is refused, and so is an oversize request.
    let silent = UnixStream::connect(&router.socket).unwrap();
    let mut garbage = UnixStream::connect(&router.socket).unwrap();
    garbage.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    garbage.shutdown(std::net::Shutdown::Write).unwrap();
    let mut refusal = String::new();
    garbage.read_to_string(&mut refusal).unwrap();
    assert!(refusal.contains("not a fibre ctl request"), "{refusal}");
    let mut oversize = UnixStream::connect(&router.socket).unwrap();
    oversize
        .set_write_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut header = b"fibre-ctl 1\n".to_vec();
    header.resize(2 << 20, b'#');
    let _ = oversize.write_all(&header);
    let mut refusal = String::new();
    let _ = oversize.read_to_string(&mut refusal);
    assert!(refusal.contains("request longer than"), "{refusal}");
    let after = ping(&h1, &["-c", "2", "-i", "0.2", "-W", "2", "10.0.2.2"]);
    assert!(
        all_received(&after, 2),
        "with a silent client: {}",
        after.stdout
    );
    let answered = router.ctl(&[], &["route get 10.0.2.2"]);
    assert_eq!(answered.code, Some(0), "{}", answered.stderr);
    drop(silent);

    // An interface that goes down and up, then disappears, while fibre
    // forwards: the other ports go on, the router answers, and it stops
    // cleanly.
    r.ip(&["link", "set", "r2", "down"]).unwrap();
    r.ip(&["link", "set", "r2", "up"]).unwrap();
    r.ip(&["link", "del", "r2"]).unwrap();
    let after = ping(&h1, &["-c", "2", "-i", "0.2", "-W", "2", "10.0.2.2"]);
    assert!(all_received(&after, 2), "r2 gone: {}", after.stdout);
    let still = router.ctl(&[], &["workers show"]);
    assert_eq!(still.code, Some(0), "{}", still.stderr);

    let (status, rest) = router.stop();
    assert!(status.success(), "fibre serve exit: {status:?}\n{rest}");
    assert!(rest.contains("stopped; received"), "{rest}");
}

/// h2's receiver: the byte count and SHA-256 of what arrived.
const RECEIVER: &str = r#"
import hashlib, socket, sys
l = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET)
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind((sys.argv[1], 5001))
l.listen(1)
l.settimeout(30)
print("listening", flush=True)
c, _ = l.accept()
c.settimeout(30)
h, n = hashlib.sha256(), 0
while True:
    b = c.recv(1 << 16)
    if not b:
        break
    h.update(b)
    n += len(b)
print(n, h.hexdigest(), flush=True)
c.close()
"#;

/// h1's sender: SIZE seeded pseudo-random bytes, paced (64 KiB every
/// 10 ms) so that the transfer lasts while the route changes.
const SENDER: &str = r#"
import hashlib, random, socket, sys, time
n = int(sys.argv[2])
data = random.Random(7).randbytes(n)
print(n, hashlib.sha256(data).hexdigest(), flush=True)
s = socket.create_connection((sys.argv[1], 5001), timeout=30)
for i in range(0, n, 1 << 16):
    s.sendall(data[i:i + (1 << 16)])
    time.sleep(0.01)
s.shutdown(socket.SHUT_WR)
s.recv(1)
s.close()
"#;

/// A TCP transfer of SIZE bytes from h1's SENDER to h2's RECEIVER at `to`.
struct Transfer {
    sender: Child,
    receiver: Child,
    receiver_out: BufReader<std::process::ChildStdout>,
}

impl Transfer {
    /// Starts the receiver, waits until it listens, starts the sender.
    fn start(h1: &Namespace, h2: &Namespace, to: &str, size: usize) -> Transfer {
        let mut receiver = h2
            .command("python3", &["-c", RECEIVER, to])
            .stdout(Stdio::piped())
            .spawn()
            .expect("the receiver starts");
        let mut line = String::new();
        let mut receiver_out = BufReader::new(receiver.stdout.take().unwrap());
        receiver_out.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "listening");
        let sender = h1
            .command("python3", &["-c", SENDER, to, &size.to_string()])
            .stdout(Stdio::piped())
            .spawn()
            .expect("the sender starts");
        Transfer {
            sender,
            receiver,
            receiver_out,
        }
    }

    /// Waits for both ends; asserts that what arrived is what was sent
    /// (length and SHA-256), all `size` bytes of it.
    fn finish(mut self, size: usize, what: &str) {
        let sent = wait_for(&mut self.sender, Duration::from_secs(60), "the sender");
        self.receiver.stdout = Some(self.receiver_out.into_inner());
        let received = wait_for(&mut self.receiver, Duration::from_secs(30), "the receiver");
        assert_eq!(sent.trim(), received.trim(), "what arrived {what} differs");
        assert!(sent.starts_with(&format!("{size} ")), "sender: {sent}");
    }
}

fn wait_for(child: &mut Child, limit: Duration, what: &str) -> String {
    let deadline = Instant::now() + limit;
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    out
}

#[test]
fn tcp_transfer_arrives_intact_across_a_route_replace() {
    let Some([h1, r, h2]) = hosts(
        "tcp_transfer_across_a_route_replace",
        "fsc2",
        Links {
            queues: 1,
            r1_mtu: 1500,
        },
    ) else {
        return;
    };
    let router = Router::start(&r, "ctl-tcp", 2);
    let size = 8 << 20;
    let transfer = Transfer::start(&h1, &h2, "10.9.0.1", size);
    let (r1_before, r2_before) = (tx_packets(&r, "r1"), tx_packets(&r, "r2"));
    // Once the transfer runs through r1, move it to r2.
    let deadline = Instant::now() + Duration::from_secs(10);
    while tx_packets(&r, "r1") < r1_before + 100 {
        assert!(Instant::now() < deadline, "the transfer never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let asked = Instant::now();
    let replaced = router.ctl(&[], &["route replace 10.9.0.1/32 via 10.0.3.2"]);
    let replace_took = asked.elapsed();
    assert_eq!(replaced.code, Some(0), "{}", replaced.stderr);
    let r2_at_replace = tx_packets(&r, "r2");
    let asked = Instant::now();
    let workers = router.ctl(&["-j"], &["workers show"]);
    let show_took = asked.elapsed();
    assert_eq!(
        workers.code,
        Some(0),
        "ctl while forwarding: {}",
        workers.stderr
    );
    eprintln!(
        "while forwarding: route replace answered in {replace_took:?}, workers show in {show_took:?}"
    );
    transfer.finish(size, "across the replace");
    let r2_after = tx_packets(&r, "r2");
    assert!(
        r2_at_replace >= r2_before && r2_after > r2_at_replace + 100,
        "after the replace the transfer leaves by r2: r2 sent {r2_before} -> {r2_at_replace} -> {r2_after}"
    );
    let (status, rest) = router.stop();
    assert!(status.success(), "fibre serve exit: {status:?}\n{rest}");
}

/// The kernel's receive counters of the router namespace's `dev`:
/// (packets, bytes).
fn rx_counters(r: &Namespace, dev: &str) -> (u64, u64) {
    (
        link_counter(r, dev, "rx", "packets"),
        link_counter(r, dev, "rx", "bytes"),
    )
}

#[test]
fn tcp_from_a_sender_with_segmentation_offload_arrives_intact() {
    let Some([h1, r, h2]) = hosts(
        "tcp_from_a_sender_with_segmentation_offload",
        "fsc5",
        Links {
            queues: 1,
            r1_mtu: 1500,
        },
    ) else {
        return;
    };
    // veth's defaults, which this test is about: TSO and GSO on.
    let features = h1
        .exec("ethtool", &["-k", "h1"], Duration::from_secs(10))
        .expect("ethtool runs");
    for feature in [
        "tcp-segmentation-offload: on",
        "generic-segmentation-offload: on",
    ] {
        assert!(
            features.stdout.contains(feature),
            "h1 has {feature}: {}",
            features.stdout
        );
    }
    let router = Router::start(&r, "ctl-gso", 1);
    for to in ["10.0.2.2", "fd00:2::2"] {
        let (packets_before, bytes_before) = rx_counters(&r, "r0");
        Transfer::start(&h1, &h2, to, 4 << 20).finish(4 << 20, &format!("at {to}"));
        // The sender did hand the router super-frames: more bytes per
        // frame than a 1500-byte MTU allows.
        let (packets, bytes) = rx_counters(&r, "r0");
        let (packets, bytes) = (packets - packets_before, bytes - bytes_before);
        assert!(
            bytes > packets * 1514,
            "to {to}: r0 received {bytes} bytes in {packets} frames: no super-frames"
        );
    }
    // The router says so: super-frames cut into more segments.
    let shown = router.ctl_json("workers show");
    let worker = &shown["workers"][0];
    let (frames, segments) = (
        worker["gso_segmented"].as_u64().unwrap_or(0),
        worker["gso_segments"].as_u64().unwrap_or(0),
    );
    assert!(
        frames > 0 && segments > frames,
        "workers show: {frames} super-frames into {segments} segments: {shown}"
    );
    let (status, rest) = router.stop();
    assert!(status.success(), "fibre serve exit: {status:?}\n{rest}");
}

#[test]
fn tracepath_finds_the_smaller_mtu_behind_fibre() {
    let Some([h1, r, _h2]) = hosts(
        "tracepath_finds_the_smaller_mtu",
        "fsc3",
        Links {
            queues: 1,
            r1_mtu: 1400,
        },
    ) else {
        return;
    };
    let router = Router::start(&r, "ctl-mtu", 1);
    for (args, what) in [
        (["-n", "-m", "4", "10.0.2.2"], "IPv4: fragmentation needed"),
        (["-n", "-m", "4", "fd00:2::2"], "IPv6: packet too big"),
    ] {
        let done = h1
            .exec("tracepath", &args, Duration::from_secs(30))
            .expect("tracepath runs");
        assert!(
            done.stdout.contains("pmtu 1400"),
            "{what} from fibre: {}{}",
            done.stdout,
            done.stderr
        );
        assert!(done.stdout.contains("reached"), "{what}: {}", done.stdout);
    }
    let (status, rest) = router.stop();
    assert!(status.success(), "fibre serve exit: {status:?}\n{rest}");
}

/// UDP datagrams from h1 to h2's discard port, one flow per source port.
const FLOWS: &str = r#"
import socket, sys, time
for port in range(40000, 40000 + int(sys.argv[2])):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", port))
    for _ in range(10):
        s.sendto(b"x" * 64, (sys.argv[1], 9))
    s.close()
    time.sleep(0.005)
"#;

#[test]
fn flows_spread_across_the_workers_of_a_multi_queue_veth() {
    let Some([h1, r, h2]) = hosts(
        "flows_spread_across_the_workers",
        "fsc4",
        Links {
            queues: 2,
            r1_mtu: 1500,
        },
    ) else {
        return;
    };
    let router = Router::start(&r, "ctl-spread", 2);
    // Resolve h2 first, so that every datagram is forwarded by a worker.
    let first = ping(&h1, &["-c", "1", "-W", "2", "10.0.2.2"]);
    assert!(all_received(&first, 1), "{}", first.stdout);
    let flows = 32;
    let done = h1
        .exec(
            "python3",
            &["-c", FLOWS, "10.0.2.2", &flows.to_string()],
            Duration::from_secs(30),
        )
        .expect("the flows are sent");
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    std::thread::sleep(Duration::from_millis(200));
    let workers = router.ctl_json("workers show");
    let received: Vec<u64> = workers["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["received"].as_u64().unwrap())
        .collect();
    // 32 flows hashed over two sockets: all on one has odds of 2^-31.
    assert!(
        received.iter().all(|&n| n >= 10),
        "each worker takes some of {flows} flows: {received:?}"
    );
    let total = workers["total"]["forwarded"].as_u64().unwrap();
    assert!(total >= flows * 10, "forwarded {total}: {workers}");
    drop(h2);
    let (status, rest) = router.stop();
    assert!(status.success(), "fibre serve exit: {status:?}\n{rest}");
}
