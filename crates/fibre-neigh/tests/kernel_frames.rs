//! fibre's ARP and neighbour-discovery frames, byte for byte against the
//! ones the Linux kernel sends in the same situation.
//!
//! Two namespaces joined by a veth: R (the kernel router: `v0` with
//! 10.0.0.1/24 and 2001:db8::1/64, forwarding on) and H (`v1`, where a
//! python3 AF_PACKET socket sends a crafted frame and captures what R
//! sends back for half a second). Four cases: R's ARP reply to a request
//! for 10.0.0.1, its NA to an NS for 2001:db8::1, and the ARP request and
//! NS it sends itself when a ping from R needs 10.0.0.2 / 2001:db8::2.
//! The same frames are fed to (or asked of) fibre's table with R's real
//! MAC, and every byte must be equal.
//!
//! Needs root, `ip netns`, python3 and ping; without them it says why and
//! passes (fails under `FIBRE_REQUIRE_TOOLS=1`). Namespaces are named
//! `fibre-neigh-<pid>-{r,h}` and deleted afterwards, also on failure.

mod common;

use std::collections::HashMap;
use std::process::{Command, Stdio};

use common::*;
use fibre_fib::{config, Fib};
use fibre_neigh::{FibRouter, NeighSettings, NeighTable};

const HOST_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];

/// Sends the frame given in hex on an interface, optionally runs a
/// command meanwhile, and prints every frame received in 0.5 s, in hex.
const CAPTURE: &str = r#"
import socket, sys, time, subprocess, select
dev, frame = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((dev, 0))
if frame:
    s.send(bytes.fromhex(frame))
if len(sys.argv) > 3:
    subprocess.Popen(sys.argv[3:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
end = time.time() + 0.5
while time.time() < end:
    r, _, _ = select.select([s], [], [], max(0.0, end - time.time()))
    if not r:
        break
    data, addr = s.recvfrom(65535)
    if addr[2] != socket.PACKET_OUTGOING:
        print(data.hex())
"#;

struct Lab {
    r: String,
    h: String,
}

impl Drop for Lab {
    fn drop(&mut self) {
        for ns in [&self.r, &self.h] {
            let _ = Command::new("ip")
                .args(["netns", "del", ns])
                .stderr(Stdio::null())
                .status();
        }
    }
}

fn run(args: &[&str]) -> String {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .expect("run a tool");
    assert!(
        out.status.success(),
        "{}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl Lab {
    fn new() -> Lab {
        let pid = std::process::id();
        let lab = Lab {
            r: format!("fibre-neigh-{pid}-r"),
            h: format!("fibre-neigh-{pid}-h"),
        };
        let (r, h) = (lab.r.as_str(), lab.h.as_str());
        run(&["ip", "netns", "add", r]);
        run(&["ip", "netns", "add", h]);
        run(&[
            "ip", "-n", r, "link", "add", "v0", "type", "veth", "peer", "name", "v1", "netns", h,
        ]);
        for (ns, dev) in [(r, "v0"), (h, "v1")] {
            run(&[
                "ip",
                "netns",
                "exec",
                ns,
                "sysctl",
                "-qw",
                "net.ipv6.conf.all.forwarding=1",
            ]);
            run(&[
                "ip",
                "netns",
                "exec",
                ns,
                "sysctl",
                "-qw",
                &format!("net.ipv6.conf.{dev}.accept_dad=0"),
            ]);
        }
        run(&[
            "ip",
            "-n",
            h,
            "link",
            "set",
            "v1",
            "address",
            "02:00:00:00:00:02",
        ]);
        run(&["ip", "-n", r, "link", "set", "lo", "up"]);
        run(&["ip", "-n", r, "link", "set", "v0", "up"]);
        run(&["ip", "-n", h, "link", "set", "v1", "up"]);
        run(&["ip", "-n", r, "addr", "add", "10.0.0.1/24", "dev", "v0"]);
        run(&[
            "ip",
            "-n",
            r,
            "addr",
            "add",
            "2001:db8::1/64",
            "dev",
            "v0",
            "nodad",
        ]);
        lab
    }

    /// R's MAC (random, the kernel's).
    fn router_mac(&self) -> [u8; 6] {
        let text = run(&["ip", "-n", &self.r, "-br", "link", "show", "v0"]);
        let mac = text.split_whitespace().nth(2).expect("a MAC");
        let bytes: Vec<u8> = mac
            .split(':')
            .map(|b| u8::from_str_radix(b, 16).unwrap())
            .collect();
        bytes.try_into().unwrap()
    }

    /// What R sends to H while H sends `frame` (and R runs `command`).
    fn exchange(&self, frame: &[u8], command: &[&str]) -> Vec<Vec<u8>> {
        let hex: String = frame.iter().map(|b| format!("{b:02x}")).collect();
        let mut args = vec![
            "ip", "netns", "exec", &self.h, "python3", "-c", CAPTURE, "v1", &hex,
        ];
        let prefixed: Vec<String>;
        if !command.is_empty() {
            prefixed = ["ip", "netns", "exec", &self.r]
                .iter()
                .map(|s| s.to_string())
                .chain(command.iter().map(|s| s.to_string()))
                .collect();
            args.extend(prefixed.iter().map(String::as_str));
        }
        run(&args)
            .lines()
            .map(|line| {
                (0..line.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&line[i..i + 2], 16).unwrap())
                    .collect()
            })
            .collect()
    }
}

/// The same router in fibre, with R's MAC on v0.
fn fibre_router() -> Fib {
    let text = "link set lo up\n\
                link add v0 type veth peer name v1\n\
                link set v0 up\nlink set v1 up\n\
                addr add 10.0.0.1/24 dev v0\n\
                addr add 2001:db8::1/64 dev v0\n";
    config::apply_str(&Fib::new(), "r.conf", text, false)
        .unwrap()
        .0
}

fn is_arp(frame: &[u8], op: u8) -> bool {
    frame.len() >= 42 && frame[12..14] == [0x08, 0x06] && frame[21] == op
}

fn is_nd(frame: &[u8], kind: u8) -> bool {
    frame.len() >= 78 && frame[12..14] == [0x86, 0xdd] && frame[20] == 58 && frame[54] == kind
}

#[test]
fn arp_and_nd_frames_match_the_kernels_byte_for_byte() {
    let test = "arp_and_nd_frames_match_the_kernels_byte_for_byte";
    if let Some(missing) = fibre_testkit::missing_tool(&["ip", "python3", "ping", "sysctl"]) {
        return fibre_testkit::unavailable(test, &missing);
    }
    if fibre_testkit::effective_uid() != Some(0) {
        return fibre_testkit::unavailable(test, "needs root for network namespaces");
    }
    let lab = Lab::new();
    let kernel_mac = lab.router_mac();
    let fib = fibre_router();
    let link = v0(&fib);
    let router = FibRouter::with_macs(&fib, HashMap::from([(link, kernel_mac)]));

    // 1. An ARP request for 10.0.0.1: the reply.
    let request = arp(1, [0xff; 6], HOST_MAC, "10.0.0.2", [0; 6], "10.0.0.1");
    let kernel: Vec<Vec<u8>> = lab
        .exchange(&request, &[])
        .into_iter()
        .filter(|f| is_arp(f, 2))
        .collect();
    let mut table = NeighTable::new(NeighSettings::default());
    let ours = sent(&table.receive_arp(0, link, &request, &router));
    assert_eq!(kernel.len(), 1, "the kernel's ARP replies: {kernel:02x?}");
    assert_eq!(ours, kernel, "ARP reply");

    // 2. An NS for 2001:db8::1 to its solicited-node group: the NA.
    let ns = nd(
        135,
        [0x33, 0x33, 0xff, 0, 0, 1],
        HOST_MAC,
        "2001:db8::2",
        "ff02::1:ff00:1",
        0,
        "2001:db8::1",
        Some((1, HOST_MAC)),
        255,
    );
    let kernel: Vec<Vec<u8>> = lab
        .exchange(&ns, &[])
        .into_iter()
        .filter(|f| is_nd(f, 136))
        .collect();
    let ours: Vec<Vec<u8>> = sent(&table.receive_ndisc(0, link, &ns, &router));
    assert_eq!(kernel.len(), 1, "the kernel's NAs: {kernel:02x?}");
    assert_eq!(ours, kernel, "neighbour advertisement");

    // 3. R pings 10.0.0.9 (unknown): its ARP request.
    let kernel: Vec<Vec<u8>> = lab
        .exchange(&[], &["ping", "-c", "1", "-W", "1", "10.0.0.9"])
        .into_iter()
        .filter(|f| is_arp(f, 1))
        .collect();
    let ping = ipv4_packet("10.0.0.1", "10.0.0.9", 84);
    let ours = sent(&table.resolve(0, link, ip("10.0.0.9"), ping, &router));
    assert!(!kernel.is_empty(), "the kernel sent no ARP request");
    assert_eq!(ours, kernel[..1], "ARP request");

    // 4. R pings 2001:db8::9: its NS, from the packet's (our) source.
    let kernel: Vec<Vec<u8>> = lab
        .exchange(&[], &["ping", "-6", "-c", "1", "-W", "1", "2001:db8::9"])
        .into_iter()
        .filter(|f| is_nd(f, 135))
        .collect();
    let ping = ipv6_packet("2001:db8::1", "2001:db8::9");
    let ours = sent(&table.resolve(0, link, ip("2001:db8::9"), ping, &router));
    assert!(!kernel.is_empty(), "the kernel sent no NS");
    assert_eq!(ours, kernel[..1], "neighbour solicitation");
}
