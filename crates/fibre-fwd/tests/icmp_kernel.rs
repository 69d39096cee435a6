//! fibre's ICMP messages byte for byte against the Linux kernel's own.
//!
//! Three namespaces, `A — R — B`, joined by veth; R is a plain Linux
//! router (forwarding on, static neighbours, the routes of
//! [`ROUTER_CONFIG`], its link to B of MTU 1280). From A, an AF_PACKET
//! socket sends crafted Ethernet frames to R (TTL 1, too big with DF, to
//! unreachable, prohibit and blackhole routes and to no route, to R's
//! closed ports, pings, redirects, ICMP errors that must not be answered,
//! later fragments) and takes what R sends back. For each frame fibre
//! writes its message for the same packet, from the source fibre's FIB
//! (the same configuration) picks; the two must be equal in every byte
//! but the fields the kernel draws at random (the IPv4 identification,
//! hence the IPv4 header checksum, both checked valid; the IPv6 flow
//! label). Where the kernel sends nothing, fibre must refuse too.
//!
//! Then R's rate limits at their defaults, against [`RateLimiter`] fed
//! the same packets at the times they were sent: a flood of TTL 1 to one
//! destination (the kernel's 6 of 1000), route errors (`ip_error` and
//! `icmp_send` sharing one bucket), redirects (`ip_rt_send_redirect`),
//! IPv6 (`icmpv6_xrlim_allow`'s period scaled by the route's prefix
//! length), and the global bucket over many destinations.
//!
//! Needs root and `ip netns`; without them it says why and passes (fails
//! under `FIBRE_REQUIRE_TOOLS=1`). The namespaces are `fi<pid><a|r|b>`,
//! removed afterwards, also on failure. About two seconds.

use std::fs::File;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fibre_base::{Ipv4, Ipv6};
use fibre_fib::{config, Errno, Fib};
use fibre_fwd::icmp::{
    error_route_v4, error_route_v6, error_source_v6, record_route_on_input, write_echo_reply_v4,
    write_echo_reply_v6, write_echo_reply_v6_from, write_error_v4, write_error_v4_mtu,
    write_error_v6, Icmp4Error, Icmp6Error, RateLimitSettings, RateLimiter,
};
use fibre_net::checksum;

const TEST: &str = "icmp_kernel";

const MAC_A: [u8; 6] = [2, 0, 0x77, 0, 1, 2];
const MAC_RA: [u8; 6] = [2, 0, 0x77, 0, 1, 1];
const MAC_RB: [u8; 6] = [2, 0, 0x77, 0, 2, 1];
const MAC_B: [u8; 6] = [2, 0, 0x77, 0, 2, 2];
/// A host on A's link that R's route to 10.77.60.0/24 goes through, so
/// that A's packets there earn a redirect.
const MAC_GW: [u8; 6] = [2, 0, 0x77, 0, 1, 3];

/// R's addresses and routes, in `ip -batch` form, for both the kernel and
/// fibre's FIB (`R0` and `R1` stand for R's links to A and B).
const ROUTER_CONFIG: &str = "\
addr add 10.77.1.1/24 dev R0
addr add 10.77.2.1/24 dev R1
addr add fd77:1::1/64 dev R0 nodad
addr add fd77:2::1/64 dev R1 nodad
route add 10.77.60.0/24 via 10.77.1.3
route add unreachable 10.77.50.0/24
route add prohibit 10.77.51.0/24
route add blackhole 10.77.52.0/24
route add unreachable fd77:50::/64
route add prohibit fd77:51::/64
route add blackhole fd77:52::/64
addr add 10.77.1.254/24 dev R0
route add 10.77.70.0/24 via 10.77.1.2 src 10.77.2.1
route add 10.77.71.0/24 via 10.77.1.2
route add 10.77.72.0/24 via 10.77.1.2 mtu 300
route add fd77:8000::/17 via fd77:1::2
route add fd77:70::/64 via fd77:1::2 src fd77:2::1
route add fd77:71::/64 via fd77:1::2
";

/// The namespaces of one run; deleted on drop (their veths go with them).
struct Lab {
    a: String,
    r: String,
    b: String,
    a0: String,
    r0: String,
    r1: String,
}

impl Drop for Lab {
    fn drop(&mut self) {
        for ns in [&self.a, &self.r, &self.b] {
            let _ = Command::new("ip")
                .args(["netns", "del", ns])
                .stderr(Stdio::null())
                .status();
        }
    }
}

fn run(args: &[&str]) -> Result<(), String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| format!("{}: {e}", args[0]))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn mac(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The config with R's link names in place of `R0`/`R1`.
fn router_config(lab: &Lab) -> String {
    ROUTER_CONFIG.replace("R0", &lab.r0).replace("R1", &lab.r1)
}

fn lab() -> Result<Lab, String> {
    if let Some(missing) = fibre_testkit::missing_tool(&["ip"]) {
        return Err(missing);
    }
    if fibre_testkit::effective_uid() != Some(0) {
        return Err("needs root for network namespaces".into());
    }
    let tag = format!("fi{}", std::process::id() % 100_000);
    let lab = Lab {
        a: format!("{tag}a"),
        r: format!("{tag}r"),
        b: format!("{tag}b"),
        a0: format!("{tag}a0"),
        r0: format!("{tag}r0"),
        r1: format!("{tag}r1"),
    };
    run(&["ip", "netns", "add", &lab.a])
        .map_err(|e| format!("cannot create network namespaces: {e}"))?;
    run(&["ip", "netns", "add", &lab.r])?;
    run(&["ip", "netns", "add", &lab.b])?;
    // R's link-local addresses usable at once: no duplicate address
    // detection on the links made below.
    for setting in [
        "net.ipv6.conf.all.accept_dad=0",
        "net.ipv6.conf.default.accept_dad=0",
    ] {
        run(&["ip", "netns", "exec", &lab.r, "sysctl", "-q", "-w", setting])?;
    }
    let b0 = format!("{tag}b0");
    let (a, r, b) = (lab.a.as_str(), lab.r.as_str(), lab.b.as_str());
    run(&[
        "ip",
        "-n",
        a,
        "link",
        "add",
        &lab.a0,
        "address",
        &mac(MAC_A),
        "type",
        "veth",
        "peer",
        "name",
        &lab.r0,
        "address",
        &mac(MAC_RA),
        "netns",
        r,
    ])?;
    run(&[
        "ip",
        "-n",
        b,
        "link",
        "add",
        &b0,
        "address",
        &mac(MAC_B),
        "type",
        "veth",
        "peer",
        "name",
        &lab.r1,
        "address",
        &mac(MAC_RB),
        "netns",
        r,
    ])?;
    for (ns, dev) in [(a, lab.a0.as_str()), (r, &lab.r0), (r, &lab.r1), (b, &b0)] {
        run(&["ip", "-n", ns, "link", "set", dev, "up"])?;
        run(&["ip", "-n", ns, "link", "set", "lo", "up"])?;
    }
    run(&["ip", "-n", r, "link", "set", &lab.r1, "mtu", "1280"])?;
    run(&["ip", "-n", b, "link", "set", &b0, "mtu", "1280"])?;
    run(&["ip", "-n", a, "addr", "add", "10.77.1.2/24", "dev", &lab.a0])?;
    run(&["ip", "-n", b, "addr", "add", "10.77.2.2/24", "dev", &b0])?;
    let batch = std::env::temp_dir().join(format!("{tag}-router.batch"));
    let mut text = router_config(&lab);
    // Static neighbours: nothing waits on resolution, nothing is solicited.
    for (addr, dev, m) in [
        ("10.77.1.2", &lab.r0, MAC_A),
        ("10.77.1.3", &lab.r0, MAC_GW),
        ("10.77.2.2", &lab.r1, MAC_B),
        ("fd77:1::2", &lab.r0, MAC_A),
        ("fd77:2::2", &lab.r1, MAC_B),
        ("fe80::2", &lab.r0, MAC_A),
    ] {
        text.push_str(&format!(
            "neigh add {addr} lladdr {} dev {dev} nud permanent\n",
            mac(m)
        ));
    }
    // The rate limit tests' senders (20-140) and the random route errors'
    // (150-249), one source each, all at A.
    for host in (20..=140).chain(150..=249) {
        text.push_str(&format!(
            "neigh add 10.77.1.{host} lladdr {} dev {} nud permanent\n",
            mac(MAC_A),
            lab.r0
        ));
    }
    for host in [0x20, 0x21] {
        text.push_str(&format!(
            "neigh add fd77:1::{host:x} lladdr {} dev {} nud permanent\n",
            mac(MAC_A),
            lab.r0
        ));
    }
    std::fs::write(&batch, text).map_err(|e| e.to_string())?;
    let applied = run(&["ip", "-n", r, "-batch", &batch.to_string_lossy()]);
    let _ = std::fs::remove_file(&batch);
    applied?;
    for setting in [
        "net.ipv4.ip_forward=1",
        "net.ipv6.conf.all.forwarding=1",
        // The messages first, unlimited; the limits are tested after.
        "net.ipv4.icmp_ratemask=0",
        "net.ipv6.icmp.ratemask=255",
    ] {
        run(&["ip", "netns", "exec", r, "sysctl", "-q", "-w", setting])?;
    }
    Ok(lab)
}

/// fibre's FIB with R's configuration (links as ifb), and the link-local
/// addresses the kernel gave R's links from their MACs (EUI-64).
fn router_fib(lab: &Lab) -> Fib {
    let text = format!(
        "link add {r0} type ifb\nlink set {r0} up\nlink add {r1} type ifb\nlink set {r1} up\n\
         addr add fe80::77ff:fe00:101/64 dev {r0} nodad\naddr add fe80::77ff:fe00:201/64 dev {r1} nodad\n{}",
        router_config(lab),
        r0 = lab.r0,
        r1 = lab.r1
    );
    let parsed = config::parse_str("router.conf", &text);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let mut fib = Fib::new();
    for s in &parsed.statements {
        fib.apply(&s.command)
            .expect("the router configuration applies");
    }
    fib
}

/// An AF_PACKET socket on one link of a namespace: whole Ethernet frames
/// out, incoming frames for this host (`PACKET_HOST`) in.
struct PacketSocket {
    fd: OwnedFd,
    ifindex: i32,
}

impl PacketSocket {
    /// Moves the calling thread into namespace `ns` (`setns` changes only
    /// the calling thread's network namespace) and opens the socket on
    /// `dev` there.
    fn open_in(ns: &str, dev: &str) -> io::Result<PacketSocket> {
        let netns = File::open(format!("/var/run/netns/{ns}"))?;
        // SAFETY: setns with a valid namespace file descriptor, which stays
        // open for the call; it affects only this thread.
        if unsafe { libc::setns(netns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let all = (libc::ETH_P_ALL as u16).to_be();
        // SAFETY: a plain socket(2) call; the result is checked.
        let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, i32::from(all)) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a new descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let name = std::ffi::CString::new(dev).map_err(io::Error::other)?;
        // SAFETY: `name` is a NUL-terminated string that outlives the call.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) } as i32;
        if ifindex == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: sockaddr_ll is plain data; all-zero is a valid start.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = all;
        addr.sll_ifindex = ifindex;
        // SAFETY: `addr` is a sockaddr_ll of the size passed.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&raw const addr).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        let timeout = libc::timeval {
            tv_sec: 0,
            tv_usec: 5_000,
        };
        // SAFETY: SO_RCVTIMEO takes a timeval of the size passed.
        let rc = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&raw const timeout).cast(),
                std::mem::size_of::<libc::timeval>() as u32,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(PacketSocket { fd, ifindex })
    }

    fn send(&self, frame: &[u8]) -> io::Result<()> {
        // SAFETY: sockaddr_ll is plain data; all-zero is a valid start.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_ifindex = self.ifindex;
        addr.sll_halen = 6;
        addr.sll_addr[..6].copy_from_slice(&frame[..6]);
        // SAFETY: `frame` is valid for its length; `addr` is a sockaddr_ll
        // of the size passed.
        let sent = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                frame.as_ptr().cast(),
                frame.len(),
                0,
                (&raw const addr).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        if sent as usize == frame.len() {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// The next incoming frame for this host, or `None` after the
    /// socket's short timeout.
    fn recv(&self) -> Option<Vec<u8>> {
        self.recv_with(0)
    }

    /// [`PacketSocket::recv`] without waiting.
    fn recv_now(&self) -> Option<Vec<u8>> {
        self.recv_with(libc::MSG_DONTWAIT)
    }

    fn recv_with(&self, flags: i32) -> Option<Vec<u8>> {
        let mut buf = vec![0u8; 2048];
        loop {
            // SAFETY: sockaddr_ll is plain data; all-zero is a valid start.
            let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            // SAFETY: `buf` is writable for its length; `addr`/`len` are a
            // sockaddr_ll and its size.
            let n = unsafe {
                libc::recvfrom(
                    self.fd.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    flags,
                    (&raw mut addr).cast(),
                    &raw mut len,
                )
            };
            if n < 0 {
                return None;
            }
            if addr.sll_pkttype == libc::PACKET_HOST {
                buf.truncate(n as usize);
                return Some(buf);
            }
        }
    }
}

/// The IP packet of `frame` if it is an ICMP or ICMPv6 message other than
/// neighbour discovery and MLD.
fn icmp_packet(frame: &[u8]) -> Option<&[u8]> {
    let ip = frame.get(14..)?;
    match (frame.get(12..14)?, ip.first()? >> 4) {
        ([0x08, 0x00], 4) if ip.get(9) == Some(&1) => Some(ip),
        ([0x86, 0xdd], 6) if ip.get(6) == Some(&58) => {
            let kind = *ip.get(40)?;
            (!(130..=143).contains(&kind)).then_some(ip)
        }
        _ => None,
    }
}

fn frame(ip: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(14 + ip.len());
    f.extend_from_slice(&MAC_RA);
    f.extend_from_slice(&MAC_A);
    f.extend_from_slice(if ip[0] >> 4 == 4 {
        &[0x08, 0x00]
    } else {
        &[0x86, 0xdd]
    });
    f.extend_from_slice(ip);
    f
}

/// An IPv4 packet; checksums (header, UDP, ICMP) filled.
#[allow(clippy::too_many_arguments)]
fn v4(
    src: &str,
    dst: &str,
    ttl: u8,
    tos: u8,
    flags_frag: u16,
    protocol: u8,
    body: &[u8],
) -> Vec<u8> {
    let (s, d): (Ipv4Addr, Ipv4Addr) = (src.parse().unwrap(), dst.parse().unwrap());
    let total = 20 + body.len();
    let mut p = vec![0x45, tos, 0, 0, 0x4a, 0x11, 0, 0, ttl, protocol, 0, 0];
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[6..8].copy_from_slice(&flags_frag.to_be_bytes());
    p.extend_from_slice(&s.octets());
    p.extend_from_slice(&d.octets());
    let sum = checksum::checksum(&p);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    let mut body = body.to_vec();
    match protocol {
        17 if body.len() >= 8 => {
            body[6..8].fill(0);
            let pseudo = checksum::pseudo_header::<Ipv4>(s, d, 17, body.len() as u32);
            let sum = !checksum::add(pseudo, checksum::sum(&body));
            body[6..8].copy_from_slice(&if sum == 0 { 0xffff } else { sum }.to_be_bytes());
        }
        1 if body.len() >= 4 => {
            body[2..4].fill(0);
            let sum = checksum::checksum(&body);
            body[2..4].copy_from_slice(&sum.to_be_bytes());
        }
        _ => {}
    }
    p.extend_from_slice(&body);
    p
}

/// [`v4`] with IP options (a multiple of 4 bytes) after the header.
fn v4_options(src: &str, dst: &str, ttl: u8, options: &[u8], protocol: u8, body: &[u8]) -> Vec<u8> {
    let plain = v4(src, dst, ttl, 0, 0, protocol, body);
    let mut p = plain[..20].to_vec();
    p[0] = 0x40 | ((20 + options.len()) / 4) as u8;
    p[2..4].copy_from_slice(&((plain.len() + options.len()) as u16).to_be_bytes());
    p.extend_from_slice(options);
    p[10..12].fill(0);
    let sum = checksum::checksum(&p);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    p.extend_from_slice(&plain[20..]);
    p
}

/// An IPv6 packet; the UDP or ICMPv6 checksum (of an upper layer right
/// after the fixed header) filled.
fn v6(src: &str, dst: &str, hop_limit: u8, tclass: u8, next: u8, body: &[u8]) -> Vec<u8> {
    let (s, d): (Ipv6Addr, Ipv6Addr) = (src.parse().unwrap(), dst.parse().unwrap());
    let first = (6u32 << 28) | (u32::from(tclass) << 20) | 0x1_2345;
    let mut p = first.to_be_bytes().to_vec();
    p.extend_from_slice(&(body.len() as u16).to_be_bytes());
    p.extend_from_slice(&[next, hop_limit]);
    p.extend_from_slice(&s.octets());
    p.extend_from_slice(&d.octets());
    let mut body = body.to_vec();
    let at = match next {
        17 if body.len() >= 8 => Some(6),
        58 if body.len() >= 4 => Some(2),
        _ => None,
    };
    if let Some(at) = at {
        body[at..at + 2].fill(0);
        let pseudo = checksum::pseudo_header::<Ipv6>(s, d, next, body.len() as u32);
        let sum = !checksum::add(pseudo, checksum::sum(&body));
        body[at..at + 2].copy_from_slice(&sum.to_be_bytes());
    }
    p.extend_from_slice(&body);
    p
}

fn udp(len: usize) -> Vec<u8> {
    let mut b = vec![0x9c, 0x40, 0x82, 0x9a, 0, 0, 0, 0];
    b[4..6].copy_from_slice(&(len as u16).to_be_bytes());
    b.extend((8..len).map(|i| (i * 7) as u8));
    b
}

fn echo(kind: u8, len: usize) -> Vec<u8> {
    echo_seq(kind, len, 9)
}

fn echo_seq(kind: u8, len: usize, seq: u16) -> Vec<u8> {
    let mut b = vec![kind, 0, 0, 0, 0x42, 0x42, 0, 0];
    b[6..8].copy_from_slice(&seq.to_be_bytes());
    b.extend((8..len).map(|i| i as u8));
    b
}

/// What R should do with a case's packet, as fibre models it.
enum Expect {
    Error4(Icmp4Error),
    /// An error for the packet as `ip_forward` left it: TTL decremented.
    Error4Forwarded(Icmp4Error),
    Echo4,
    /// A request fibre's echo writer must refuse, as the kernel answers
    /// none.
    NoEcho4,
    Error6(Icmp6Error),
    Echo6,
    /// An echo reply to a request for a group: from the source the route
    /// back picks.
    Echo6Selected,
    /// No message: fibre's writer for this error must refuse (or, with
    /// `None`, no error is due at all).
    Silent4(Option<Icmp4Error>),
    Silent6(Option<Icmp6Error>),
}

struct Case {
    name: String,
    packet: Vec<u8>,
    expect: Expect,
}

fn cases() -> Vec<Case> {
    use Expect::*;
    let (a, b) = ("10.77.1.2", "10.77.2.2");
    let (a6, b6) = ("fd77:1::2", "fd77:2::2");
    let mut icmp_error_inside = vec![11, 0, 0, 0, 0, 0, 0, 0];
    icmp_error_inside.extend_from_slice(&v4(b, a, 1, 0, 0, 17, &udp(8)));
    let mut icmp6_error_inside = vec![3, 0, 0, 0, 0, 0, 0, 0];
    icmp6_error_inside.extend_from_slice(&v6(b6, a6, 1, 0, 17, &udp(8)));
    vec![
        Case {
            name: "v4 udp ttl 1".into(),
            packet: v4(a, b, 1, 0, 0, 17, &udp(40)),
            expect: Error4(Icmp4Error::TimeExceeded),
        },
        Case {
            name: "v4 udp ttl 0, tos 0xff, DF".into(),
            packet: v4(a, b, 0, 0xff, 0x4000, 17, &udp(8)),
            expect: Error4(Icmp4Error::TimeExceeded),
        },
        Case {
            name: "v4 tos 0xb9 ttl 1".into(),
            packet: v4(a, b, 1, 0xb9, 0, 17, &udp(100)),
            expect: Error4(Icmp4Error::TimeExceeded),
        },
        Case {
            name: "v4 ttl 1, 547 bytes".into(),
            packet: v4(a, b, 1, 0, 0, 17, &udp(527)),
            expect: Error4(Icmp4Error::TimeExceeded),
        },
        Case {
            name: "v4 ttl 1, 548 bytes".into(),
            packet: v4(a, b, 1, 0, 0, 17, &udp(528)),
            expect: Error4(Icmp4Error::TimeExceeded),
        },
        Case {
            name: "v4 ttl 1, 1400 bytes: quote cut at 576".into(),
            packet: v4(a, b, 1, 0, 0, 17, &udp(1380)),
            expect: Error4(Icmp4Error::TimeExceeded),
        },
        Case {
            name: "v4 echo request ttl 1".into(),
            packet: v4(a, b, 1, 0, 0, 1, &echo(8, 64)),
            expect: Error4(Icmp4Error::TimeExceeded),
        },
        Case {
            name: "v4 first fragment ttl 1".into(),
            packet: v4(a, b, 1, 0, 0x2000, 17, &udp(64)),
            expect: Error4(Icmp4Error::TimeExceeded),
        },
        Case {
            name: "v4 later fragment ttl 1".into(),
            packet: v4(a, b, 1, 0, 0x2004, 17, &udp(64)),
            expect: Silent4(Some(Icmp4Error::TimeExceeded)),
        },
        Case {
            name: "v4 icmp error ttl 1".into(),
            packet: v4(a, b, 1, 0, 0, 1, &icmp_error_inside),
            expect: Silent4(Some(Icmp4Error::TimeExceeded)),
        },
        Case {
            name: "v4 DF too big".into(),
            packet: v4(a, b, 64, 0x10, 0x4000, 17, &udp(1380)),
            expect: Error4(Icmp4Error::FragmentationNeeded { mtu: 1280 }),
        },
        Case {
            name: "v4 unreachable route".into(),
            packet: v4(a, "10.77.50.9", 64, 0, 0, 17, &udp(30)),
            expect: Error4(Icmp4Error::HostUnreachable),
        },
        Case {
            name: "v4 prohibit route, ttl 1".into(),
            packet: v4(a, "10.77.51.9", 1, 0, 0, 17, &udp(30)),
            expect: Error4(Icmp4Error::AdminProhibited),
        },
        Case {
            name: "v4 no route".into(),
            packet: v4(a, "10.99.0.1", 64, 0, 0, 17, &udp(30)),
            expect: Error4(Icmp4Error::NetUnreachable),
        },
        Case {
            name: "v4 blackhole route".into(),
            packet: v4(a, "10.77.52.9", 64, 0, 0, 17, &udp(30)),
            expect: Silent4(Icmp4Error::for_route_error(Errno::Inval)),
        },
        Case {
            name: "v4 closed port of R's far address".into(),
            packet: v4(a, "10.77.2.1", 64, 0, 0, 17, &udp(20)),
            expect: Error4(Icmp4Error::PortUnreachable),
        },
        Case {
            name: "v4 unknown protocol to R".into(),
            packet: v4(a, "10.77.1.1", 64, 0, 0, 253, &[1, 2, 3, 4]),
            expect: Error4(Icmp4Error::ProtocolUnreachable),
        },
        Case {
            name: "v4 ping R".into(),
            packet: v4(a, "10.77.1.1", 64, 0, 0, 1, &echo(8, 64)),
            expect: Echo4,
        },
        Case {
            name: "v4 ping R's far address, tos 0x2e".into(),
            packet: v4(a, "10.77.2.1", 64, 0x2e, 0x4000, 1, &echo(8, 200)),
            expect: Echo4,
        },
        Case {
            name: "v4 redirect".into(),
            packet: v4(a, "10.77.60.5", 64, 0, 0, 17, &udp(30)),
            expect: Error4Forwarded(Icmp4Error::Redirect {
                gateway: "10.77.1.3".parse().unwrap(),
            }),
        },
        Case {
            name: "v4 ttl 1 from behind a route with src".into(),
            packet: v4("10.77.70.5", b, 1, 0, 0, 17, &udp(20)),
            expect: Error4(Icmp4Error::TimeExceeded),
        },
        Case {
            name: "v4 ttl 1 from behind a gateway".into(),
            packet: v4("10.77.71.5", b, 1, 0, 0, 17, &udp(20)),
            expect: Error4(Icmp4Error::TimeExceeded),
        },
        Case {
            name: "v4 ttl 1, 1000 bytes, from behind a route of MTU 300".into(),
            packet: v4("10.77.72.5", b, 1, 0, 0, 17, &udp(980)),
            expect: Error4(Icmp4Error::TimeExceeded),
        },
        Case {
            name: "v4 ping R, from behind a route of MTU 300".into(),
            packet: v4("10.77.72.5", "10.77.1.1", 64, 0, 0, 1, &echo(8, 100)),
            expect: Echo4,
        },
        Case {
            name: "v4 ttl 1 with a router alert option".into(),
            packet: v4_options(a, b, 1, &[148, 4, 0, 0], 17, &udp(20)),
            expect: Error4(Icmp4Error::TimeExceeded),
        },
        Case {
            name: "v4 ping R with a router alert option and NOPs".into(),
            packet: v4_options(
                a,
                "10.77.1.1",
                64,
                &[1, 1, 148, 4, 0, 0, 1, 0],
                1,
                &echo(8, 40),
            ),
            expect: Echo4,
        },
        Case {
            name: "v4 ping R's secondary address".into(),
            packet: v4(a, "10.77.1.254", 64, 0, 0, 1, &echo(8, 40)),
            expect: Echo4,
        },
        Case {
            name: "v4 closed port of R's secondary address".into(),
            packet: v4(a, "10.77.1.254", 64, 0, 0, 17, &udp(20)),
            expect: Error4(Icmp4Error::PortUnreachable),
        },
        Case {
            name: "v6 hop limit 1 from behind a route with src".into(),
            packet: v6("fd77:70::5", b6, 1, 0, 17, &udp(20)),
            expect: Error6(Icmp6Error::TimeExceeded),
        },
        Case {
            name: "v6 hop limit 1 from behind a gateway".into(),
            packet: v6("fd77:71::5", b6, 1, 0, 17, &udp(20)),
            expect: Error6(Icmp6Error::TimeExceeded),
        },
        Case {
            name: "v6 from a link-local source".into(),
            packet: v6("fe80::2", b6, 64, 0, 17, &udp(20)),
            expect: Error6(Icmp6Error::BeyondScope),
        },
        Case {
            name: "v6 hop limit 1 behind hop-by-hop options".into(),
            packet: v6(
                a6,
                b6,
                1,
                0,
                0,
                &[&[17u8, 0, 1, 4, 0, 0, 0, 0][..], &udp(20)].concat(),
            ),
            expect: Error6(Icmp6Error::TimeExceeded),
        },
        Case {
            name: "v6 later fragment hop limit 1".into(),
            packet: v6(
                a6,
                b6,
                1,
                0,
                44,
                &[&[17u8, 0, 0, 0x08, 0, 0, 0, 7][..], &[0x55; 32]].concat(),
            ),
            expect: Error6(Icmp6Error::TimeExceeded),
        },
        Case {
            name: "v6 first fragment of an icmp error, hop limit 1".into(),
            packet: v6(
                a6,
                b6,
                1,
                0,
                44,
                &[&[58u8, 0, 0, 0x01, 0, 0, 0, 8][..], &icmp6_error_inside].concat(),
            ),
            expect: Silent6(Some(Icmp6Error::TimeExceeded)),
        },
        Case {
            name: "v4 ttl 1 with a record route".into(),
            packet: v4_options(
                a,
                b,
                1,
                &[1, 7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0],
                17,
                &udp(20),
            ),
            expect: Error4(Icmp4Error::TimeExceeded),
        },
        Case {
            name: "v4 ttl 1 with a full record route and a router alert".into(),
            packet: v4_options(
                a,
                b,
                1,
                &[7, 7, 8, 1, 2, 3, 4, 1, 148, 4, 0, 0],
                17,
                &udp(600),
            ),
            expect: Error4(Icmp4Error::TimeExceeded),
        },
        Case {
            name: "v4 unreachable route with a record route".into(),
            packet: v4_options(
                a,
                "10.77.50.3",
                64,
                &[7, 15, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                17,
                &udp(600),
            ),
            expect: Error4(Icmp4Error::HostUnreachable),
        },
        Case {
            name: "v4 ping R's far address with a record route".into(),
            packet: v4_options(
                a,
                "10.77.2.1",
                64,
                &[1, 7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0],
                1,
                &echo(8, 16),
            ),
            expect: Echo4,
        },
        Case {
            name: "v6 unknown next header to R".into(),
            packet: v6(a6, "fd77:1::1", 64, 0, 253, &[1, 2, 3, 4, 5, 6, 7, 8]),
            expect: Error6(Icmp6Error::ParameterProblem {
                code: 1,
                pointer: 6,
            }),
        },
        Case {
            name: "v6 hop-by-hop option that must be answered, forwarded".into(),
            packet: v6(
                a6,
                b6,
                64,
                0,
                0,
                &[&[17u8, 0, 0x80, 1, 0, 1, 1, 0][..], &udp(20)].concat(),
            ),
            expect: Error6(Icmp6Error::ParameterProblem {
                code: 2,
                pointer: 42,
            }),
        },
        Case {
            name: "v6 hop-by-hop option that must be answered, to all nodes".into(),
            packet: v6(
                a6,
                "ff02::1",
                64,
                0,
                0,
                &[&[17u8, 0, 0x80, 1, 0, 1, 1, 0][..], &udp(20)].concat(),
            ),
            expect: Error6(Icmp6Error::ParameterProblem {
                code: 2,
                pointer: 42,
            }),
        },
        Case {
            name: "v6 hop-by-hop option to skip, hop limit 1".into(),
            packet: v6(
                a6,
                b6,
                1,
                0,
                0,
                &[&[17u8, 0, 0x1e, 1, 0, 1, 1, 0][..], &udp(20)].concat(),
            ),
            expect: Error6(Icmp6Error::TimeExceeded),
        },
        Case {
            name: "v6 ping all nodes".into(),
            packet: v6(a6, "ff02::1", 64, 0x20, 58, &echo(128, 56)),
            expect: Echo6Selected,
        },
        Case {
            name: "v4 ping the limited broadcast".into(),
            packet: v4(a, "255.255.255.255", 64, 0, 0, 1, &echo(8, 56)),
            expect: NoEcho4,
        },
        Case {
            name: "v4 ping with a bad checksum".into(),
            packet: {
                let mut p = v4(a, "10.77.1.1", 64, 0, 0, 1, &echo(8, 56));
                p[30] ^= 0xff;
                p
            },
            expect: NoEcho4,
        },
        Case {
            name: "v6 udp hop limit 1".into(),
            packet: v6(a6, b6, 1, 0, 17, &udp(40)),
            expect: Error6(Icmp6Error::TimeExceeded),
        },
        Case {
            name: "v6 hop limit 0, tclass 0xff".into(),
            packet: v6(a6, b6, 0, 0xff, 17, &udp(8)),
            expect: Error6(Icmp6Error::TimeExceeded),
        },
        Case {
            name: "v6 hop limit 1, 1280 bytes".into(),
            packet: v6(a6, b6, 1, 0, 17, &udp(1232)),
            expect: Error6(Icmp6Error::TimeExceeded),
        },
        Case {
            name: "v6 hop limit 1, 1400 bytes: quote cut at 1280".into(),
            packet: v6(a6, b6, 1, 0, 17, &udp(1352)),
            expect: Error6(Icmp6Error::TimeExceeded),
        },
        Case {
            name: "v6 echo request hop limit 1".into(),
            packet: v6(a6, b6, 1, 0, 58, &echo(128, 64)),
            expect: Error6(Icmp6Error::TimeExceeded),
        },
        Case {
            name: "v6 icmp error hop limit 1".into(),
            packet: v6(a6, b6, 1, 0, 58, &icmp6_error_inside),
            expect: Silent6(Some(Icmp6Error::TimeExceeded)),
        },
        Case {
            name: "v6 too big".into(),
            packet: v6(a6, b6, 64, 0, 17, &udp(1300)),
            expect: Error6(Icmp6Error::PacketTooBig { mtu: 1280 }),
        },
        Case {
            name: "v6 unreachable route".into(),
            packet: v6(a6, "fd77:50::9", 64, 0, 17, &udp(30)),
            expect: Error6(Icmp6Error::NoRoute),
        },
        Case {
            name: "v6 prohibit route".into(),
            packet: v6(a6, "fd77:51::9", 64, 0, 17, &udp(30)),
            expect: Error6(Icmp6Error::AdminProhibited),
        },
        Case {
            name: "v6 no route".into(),
            packet: v6(a6, "fd77:99::1", 64, 0, 17, &udp(30)),
            expect: Error6(Icmp6Error::NoRoute),
        },
        Case {
            name: "v6 blackhole route".into(),
            packet: v6(a6, "fd77:52::9", 64, 0, 17, &udp(30)),
            expect: Silent6(Icmp6Error::for_route_error(Errno::Inval)),
        },
        Case {
            name: "v6 closed port of R's far address".into(),
            packet: v6(a6, "fd77:2::1", 64, 0, 17, &udp(20)),
            expect: Error6(Icmp6Error::PortUnreachable),
        },
        Case {
            name: "v6 ping R, tclass 0xb9".into(),
            packet: v6(a6, "fd77:1::1", 64, 0xb9, 58, &echo(128, 64)),
            expect: Echo6,
        },
        Case {
            name: "v6 ping R's far address".into(),
            packet: v6(a6, "fd77:2::1", 64, 0, 58, &echo(128, 300)),
            expect: Echo6,
        },
    ]
}

/// The IPv4 packet as R holds it once its input path compiled the
/// options: a record route has R's `spec_dst` (the destination if it is
/// R's, else the source of R's route back to the sender).
fn as_received(fib: &Fib, packet: &[u8]) -> Vec<u8> {
    let mut held = packet.to_vec();
    if packet[0] >> 4 == 4 {
        let addr =
            |at: usize| Ipv4Addr::new(packet[at], packet[at + 1], packet[at + 2], packet[at + 3]);
        let dst = addr(16);
        let to_dst = fibre_fib::FlowKeyV4 {
            dst: u32::from(dst),
            ..Default::default()
        };
        let local = fib
            .lookup_output_v4(&to_dst)
            .is_ok_and(|f| f.kind == fibre_fib::RouteType::Local);
        let spec_dst = if local {
            Some(dst)
        } else {
            fib.output_source_v4(addr(12), packet[1]).ok().flatten()
        };
        if let Some(spec_dst) = spec_dst {
            record_route_on_input(&mut held, spec_dst);
        }
    }
    held
}

/// fibre's message for a case, or `None` where it sends none.
fn fibre_answer(fib: &Fib, in_link: u32, case: &Case) -> Option<Vec<u8>> {
    let mut out = vec![0u8; 2048];
    let held = as_received(fib, &case.packet);
    let p = &held;
    let written = match case.expect {
        Expect::Error4(e) => {
            let back = error_route_v4(fib, p)?;
            write_error_v4_mtu(p, e, back.source, back.mtu, &mut out)
        }
        Expect::Error4Forwarded(e) => {
            let mut forwarded = p.clone();
            let mut view = fibre_net::ipv4::Packet::new_checked(&mut forwarded[..]).unwrap();
            view.decrement_ttl()?;
            let back = error_route_v4(fib, &forwarded)?;
            write_error_v4_mtu(&forwarded, e, back.source, back.mtu, &mut out)
        }
        Expect::Echo4 | Expect::NoEcho4 => write_echo_reply_v4(p, &mut out),
        Expect::Error6(e) => {
            let source = error_source_v6(fib, p, in_link)?;
            write_error_v6(p, e, source, &mut out)
        }
        Expect::Echo6 => write_echo_reply_v6(p, &mut out),
        Expect::Echo6Selected => {
            let sender = Ipv6Addr::from(<[u8; 16]>::try_from(&p[8..24]).unwrap());
            let source = fib.reply_route_v6(sender).ok()?.source?;
            write_echo_reply_v6_from(p, source, &mut out)
        }
        Expect::Silent4(Some(e)) => write_error_v4(p, e, "10.77.1.1".parse().unwrap(), &mut out),
        Expect::Silent6(Some(e)) => write_error_v6(p, e, "fd77:1::1".parse().unwrap(), &mut out),
        Expect::Silent4(None) | Expect::Silent6(None) => return None,
    };
    let n = written.ok()?;
    out.truncate(n);
    Some(out)
}

/// The message with the fields the kernel randomises cleared: the IPv4
/// identification and, as it covers it, the header checksum (after
/// checking it); the IPv6 flow label.
fn masked(packet: &[u8]) -> Vec<u8> {
    let mut p = packet.to_vec();
    if p[0] >> 4 == 4 {
        let header_len = usize::from(p[0] & 0x0f) * 4;
        assert_eq!(
            checksum::sum(&p[..header_len]),
            0xffff,
            "IPv4 header checksum of {p:02x?}"
        );
        p[4..6].fill(0);
        p[10..12].fill(0);
    } else {
        p[1] &= 0xf0;
        p[2..4].fill(0);
    }
    p
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .chunks(16)
        .map(|row| {
            row.iter()
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n    ")
}

/// Sends each case's frame and gathers R's ICMP answers to it.
fn exchange(sock: &PacketSocket, packets: &[Vec<u8>], settle: Duration) -> Vec<Vec<Vec<u8>>> {
    packets
        .iter()
        .map(|packet| {
            while sock.recv().is_some() {}
            sock.send(&frame(packet)).expect("send a frame from A");
            let deadline = Instant::now() + settle;
            let mut answers = Vec::new();
            while Instant::now() < deadline {
                if let Some(f) = sock.recv() {
                    if let Some(ip) = icmp_packet(&f) {
                        answers.push(ip.to_vec());
                    }
                }
            }
            answers
        })
        .collect()
}

/// Sends `packets` as fast as the socket takes them and counts R's ICMP
/// answers, returning the count and each packet's send time since
/// `origin`, in nanoseconds.
fn flood(
    sock: &PacketSocket,
    packets: &[Vec<u8>],
    settle: Duration,
    origin: Instant,
) -> (usize, Vec<u64>) {
    paced_flood(sock, packets, Duration::ZERO, settle, origin)
}

/// [`flood`] with the packets sent `gap` apart.
fn paced_flood(
    sock: &PacketSocket,
    packets: &[Vec<u8>],
    gap: Duration,
    settle: Duration,
    origin: Instant,
) -> (usize, Vec<u64>) {
    while sock.recv().is_some() {}
    let mut times = Vec::with_capacity(packets.len());
    let mut answers = 0;
    for p in packets {
        times.push(origin.elapsed().as_nanos() as u64);
        sock.send(&frame(p)).expect("send a frame from A");
        let next = Instant::now() + gap;
        while Instant::now() < next {
            if let Some(f) = sock.recv_now() {
                answers += usize::from(icmp_packet(&f).is_some());
            }
        }
    }
    let deadline = Instant::now() + settle;
    while Instant::now() < deadline {
        if let Some(f) = sock.recv() {
            answers += usize::from(icmp_packet(&f).is_some());
        }
    }
    (answers, times)
}

/// A small deterministic generator for the random cases (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// The tag a random case carries (IPv4: its identification; IPv6: the
/// low 16 bits of its flow label; echo requests: also the sequence
/// number), by which R's answers are matched to it.
fn tag_of(index: usize) -> u16 {
    0x8000 | index as u16
}

/// The tag of the case an answer of R belongs to.
fn answer_tag(answer: &[u8]) -> Option<u16> {
    let word = |b: &[u8], at: usize| Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]));
    if answer[0] >> 4 == 4 {
        let icmp = answer.get(20..)?;
        match icmp.first()? {
            0 => word(icmp, 6),
            _ => word(icmp, 8 + 4),
        }
    } else {
        let icmp = answer.get(40..)?;
        match icmp.first()? {
            129 => word(icmp, 6),
            _ => word(icmp, 8 + 2),
        }
    }
}

/// `count` random cases from `seed`: TTL or hop limit 0-2 towards B with
/// random sizes, TOS and protocols; every kind of route error; DF too big
/// and packet too big; pings and closed ports of R's addresses. Route
/// errors come from many IPv4 sources, as `ip_error` limits each to a
/// burst of five.
fn random_cases(seed: u64, count: usize) -> Vec<Case> {
    let mut rng = Rng(seed | 1);
    (0..count)
        .map(|index| {
            let tag = tag_of(index);
            let ipv6 = rng.below(2) == 1;
            let kind = rng.below(7);
            let size = rng.below(1460) as usize;
            let tos = *rng.pick(&[0u8, 0x10, 0x2e, 0xb9, 0xff, 0x03]);
            let ttl = rng.below(3) as u8;
            // Only expiring packets go to hosts other than B itself: R
            // would try to resolve them, and answer "unreachable" seconds
            // later.
            let to_b = if ttl <= 1 { rng.below(250) + 2 } else { 2 };
            let body = |rng: &mut Rng, protocol: u8, size: usize, ipv6: bool| match protocol {
                1 | 58 => echo_seq(if ipv6 { 128 } else { 8 }, size.max(8), tag),
                17 => udp(size.max(8)),
                _ => (0..size).map(|_| rng.next() as u8).collect(),
            };
            let (name, packet, expect) = if !ipv6 {
                let protocol = *rng.pick(&[17u8, 1, 6, 253]);
                let source = format!("10.77.1.{}", 150 + rng.below(100));
                match kind {
                    0 | 1 => {
                        let df = if rng.below(2) == 0 { 0x4000 } else { 0 };
                        let first_fragment = if rng.below(8) == 0 { 0x2000 } else { 0 };
                        let b = body(&mut rng, protocol, size, false);
                        let p = v4(
                            "10.77.1.2",
                            &format!("10.77.2.{to_b}"),
                            ttl,
                            tos,
                            df | first_fragment,
                            protocol,
                            &b,
                        );
                        let expect = if ttl <= 1 {
                            Expect::Error4(Icmp4Error::TimeExceeded)
                        } else if p.len() > 1280 && df != 0 {
                            Expect::Error4(Icmp4Error::FragmentationNeeded { mtu: 1280 })
                        } else {
                            Expect::Silent4(None)
                        };
                        ("v4 towards B", p, expect)
                    }
                    2 => {
                        let (net, errno) = *rng.pick(&[
                            (50, Errno::HostUnreach),
                            (51, Errno::Acces),
                            (52, Errno::Inval),
                        ]);
                        let b = body(&mut rng, protocol, size, false);
                        let p = v4(
                            &source,
                            &format!("10.77.{net}.{to_b}"),
                            ttl.max(1),
                            tos,
                            0,
                            protocol,
                            &b,
                        );
                        let expect = match Icmp4Error::for_route_error(errno) {
                            Some(e) => Expect::Error4(e),
                            None => Expect::Silent4(None),
                        };
                        ("v4 route error", p, expect)
                    }
                    3 => {
                        let b = body(&mut rng, protocol, size, false);
                        (
                            "v4 no route",
                            v4(
                                &source,
                                &format!("10.{}.0.1", 100 + rng.below(100)),
                                64,
                                tos,
                                0,
                                protocol,
                                &b,
                            ),
                            Expect::Error4(Icmp4Error::NetUnreachable),
                        )
                    }
                    4 | 5 => {
                        let dst = *rng.pick(&["10.77.1.1", "10.77.2.1", "10.77.1.254"]);
                        let b = echo_seq(8, size.clamp(8, 1400), tag);
                        (
                            "v4 ping R",
                            v4("10.77.1.2", dst, ttl, tos, 0, 1, &b),
                            Expect::Echo4,
                        )
                    }
                    _ => {
                        let dst = *rng.pick(&["10.77.1.1", "10.77.2.1"]);
                        (
                            "v4 closed port",
                            v4("10.77.1.2", dst, 64, tos, 0, 17, &udp(size.max(8))),
                            Expect::Error4(Icmp4Error::PortUnreachable),
                        )
                    }
                }
            } else {
                let protocol = *rng.pick(&[17u8, 58, 6, 253]);
                match kind {
                    0 | 1 => {
                        let b = body(&mut rng, protocol, size, true);
                        let p = v6(
                            "fd77:1::2",
                            &format!("fd77:2::{to_b:x}"),
                            ttl,
                            tos,
                            protocol,
                            &b,
                        );
                        let expect = if ttl <= 1 {
                            Expect::Error6(Icmp6Error::TimeExceeded)
                        } else if p.len() > 1280 {
                            Expect::Error6(Icmp6Error::PacketTooBig { mtu: 1280 })
                        } else {
                            Expect::Silent6(None)
                        };
                        ("v6 towards B", p, expect)
                    }
                    2 | 3 => {
                        let (net, errno) = *rng.pick(&[
                            (0x50, Errno::HostUnreach),
                            (0x51, Errno::Acces),
                            (0x52, Errno::Inval),
                            (0x99, Errno::NetUnreach),
                        ]);
                        let b = body(&mut rng, protocol, size, true);
                        let p = v6(
                            "fd77:1::2",
                            &format!("fd77:{net:x}::{to_b:x}"),
                            ttl.max(1),
                            tos,
                            protocol,
                            &b,
                        );
                        let expect = match Icmp6Error::for_route_error(errno) {
                            Some(e) => Expect::Error6(e),
                            None => Expect::Silent6(None),
                        };
                        ("v6 route error", p, expect)
                    }
                    4 | 5 => {
                        let dst = *rng.pick(&["fd77:1::1", "fd77:2::1"]);
                        let b = echo_seq(128, size.clamp(8, 1400), tag);
                        (
                            "v6 ping R",
                            v6("fd77:1::2", dst, ttl.max(1), tos, 58, &b),
                            Expect::Echo6,
                        )
                    }
                    _ => {
                        let dst = *rng.pick(&["fd77:1::1", "fd77:2::1"]);
                        (
                            "v6 closed port",
                            v6("fd77:1::2", dst, 64, tos, 17, &udp(size.max(8))),
                            Expect::Error6(Icmp6Error::PortUnreachable),
                        )
                    }
                }
            };
            let mut packet = packet;
            if packet[0] >> 4 == 4 {
                packet[4..6].copy_from_slice(&tag.to_be_bytes());
                packet[10..12].fill(0);
                let sum = checksum::checksum(&packet[..20]);
                packet[10..12].copy_from_slice(&sum.to_be_bytes());
            } else {
                packet[2..4].copy_from_slice(&tag.to_be_bytes());
            }
            Case {
                name: format!(
                    "random {index} ({name}, {} bytes, seed {seed:#x})",
                    packet.len()
                ),
                packet,
                expect,
            }
        })
        .collect()
}

/// Sends the random cases' frames `gap` apart and sorts R's answers to
/// them by their tags; also gives each frame's send time (nanoseconds
/// since the first).
fn paced_exchange(
    sock: &PacketSocket,
    packets: &[Vec<u8>],
    gap: Duration,
) -> (Vec<Vec<Vec<u8>>>, Vec<u64>) {
    while sock.recv().is_some() {}
    let mut answers = vec![Vec::new(); packets.len()];
    let mut times = Vec::with_capacity(packets.len());
    let start = Instant::now();
    let take = |f: Vec<u8>, answers: &mut Vec<Vec<Vec<u8>>>| {
        // B's own answers to what R forwarded come back through R.
        let from_b = |ip: &[u8]| {
            ip.get(12..16) == Some(&[10, 77, 2, 2][..])
                || ip.get(8..24) == Some(&"fd77:2::2".parse::<Ipv6Addr>().unwrap().octets()[..])
        };
        if let Some(ip) = icmp_packet(&f).filter(|ip| !from_b(ip)) {
            let index = answer_tag(ip)
                .filter(|t| t & 0x8000 != 0)
                .map(|t| usize::from(t & 0x7fff));
            if let Some(slot) = index.and_then(|i| answers.get_mut(i)) {
                slot.push(ip.to_vec());
            }
        }
    };
    for p in packets {
        times.push(start.elapsed().as_nanos() as u64);
        sock.send(&frame(p)).expect("send a frame from A");
        let next = Instant::now() + gap;
        while Instant::now() < next {
            if let Some(f) = sock.recv_now() {
                take(f, &mut answers);
            }
        }
    }
    let deadline = Instant::now() + Duration::from_millis(200);
    while Instant::now() < deadline {
        if let Some(f) = sock.recv() {
            take(f, &mut answers);
        }
    }
    (answers, times)
}

#[test]
fn fibres_icmp_messages_are_the_kernels() {
    let lab = match lab() {
        Ok(lab) => lab,
        Err(why) => return fibre_testkit::unavailable(TEST, &why),
    };
    let fib = router_fib(&lab);
    let in_link = fib.link_by_name(&lab.r0).unwrap().index;
    let cases = cases();
    let packets: Vec<Vec<u8>> = cases.iter().map(|c| c.packet.clone()).collect();
    let seed = fibre_testkit::env_number("FIBRE_ICMP_SEED", 0x1c3f_0013);
    let random = random_cases(
        seed,
        fibre_testkit::env_number("FIBRE_ICMP_CASES", 2000) as usize,
    );
    let random_packets: Vec<Vec<u8>> = random.iter().map(|c| c.packet.clone()).collect();
    let (ns, dev) = (lab.a.clone(), lab.a0.clone());
    let r = lab.r.clone();
    let report = std::thread::spawn(move || -> Result<_, String> {
        let sock =
            PacketSocket::open_in(&ns, &dev).map_err(|e| format!("AF_PACKET in {ns}: {e}"))?;
        let answers = exchange(&sock, &packets, Duration::from_millis(60));
        let (random_answers, random_times) =
            paced_exchange(&sock, &random_packets, Duration::from_micros(150));
        // The limits at the kernel's defaults.
        for setting in [
            "net.ipv4.icmp_ratemask=6168",
            "net.ipv6.icmp.ratemask=0-1,3-127",
        ] {
            run(&["ip", "netns", "exec", &r, "sysctl", "-q", "-w", setting])?;
        }
        let settle = Duration::from_millis(150);
        let te: Vec<_> = (0..1000)
            .map(|_| v4("10.77.1.20", "10.77.2.2", 1, 0, 0, 17, &udp(8)))
            .collect();
        let unreachable: Vec<_> = (0..20)
            .map(|_| v4("10.77.1.21", "10.77.50.1", 64, 0, 0, 17, &udp(8)))
            .collect();
        let redirect: Vec<_> = (0..20)
            .map(|_| v4("10.77.1.22", "10.77.60.1", 64, 0, 0, 17, &udp(8)))
            .collect();
        let te6: Vec<_> = (0..1000)
            .map(|_| v6("fd77:1::20", "fd77:2::2", 1, 0, 17, &udp(8)))
            .collect();
        let te6_wide: Vec<_> = (0..300)
            .map(|_| v6("fd77:8000::1", "fd77:2::2", 1, 0, 17, &udp(8)))
            .collect();
        let global: Vec<_> = (30..=140)
            .map(|h| v4(&format!("10.77.1.{h}"), "10.77.2.2", 1, 0, 0, 17, &udp(8)))
            .collect();
        let origin = Instant::now();
        let floods = [
            flood(&sock, &te, settle, origin),
            flood(&sock, &unreachable, settle, origin),
            flood(&sock, &redirect, settle, origin),
            flood(&sock, &te6, settle, origin),
            flood(&sock, &global, settle, origin),
            paced_flood(&sock, &te6_wide, Duration::from_millis(2), settle, origin),
        ];
        Ok((answers, (random_answers, random_times), floods))
    })
    .join()
    .expect("the socket thread");
    let (answers, (random_answers, random_times), floods) = match report {
        Ok(r) => r,
        Err(why) => panic!("{TEST}: {why}"),
    };

    let mut differences = Vec::new();
    // While the cases run, R's masks limit nothing, so only `ip_error`'s
    // own per-source bucket stops route errors: the random cases' many
    // route errors pass through it at the times they were sent.
    let mut case_limiter = RateLimiter::new(RateLimitSettings {
        icmp_ratemask: 0,
        icmpv6_ratemask: [0, 0, 0, 1 << 63],
        ..RateLimitSettings::default()
    });
    let fixed_times = vec![None; cases.len()];
    let times = fixed_times
        .into_iter()
        .chain(random_times.iter().map(|t| Some(*t)));
    let all = cases.iter().chain(&random);
    let answered = answers.iter().chain(&random_answers);
    for ((case, kernel), sent_at) in all.zip(answered).zip(times) {
        let limited = match (&case.expect, sent_at) {
            (Expect::Error4(e), Some(t)) => {
                let sender = Ipv4Addr::new(
                    case.packet[12],
                    case.packet[13],
                    case.packet[14],
                    case.packet[15],
                );
                !case_limiter.allow_error_v4(t, sender, e)
            }
            _ => false,
        };
        let ours = if limited {
            None
        } else {
            fibre_answer(&fib, in_link, case)
        };
        match (kernel.as_slice(), ours) {
            ([], None) => {}
            ([k], Some(o)) if masked(k) == masked(&o) => {}
            (k, o) => differences.push(format!(
                "{}:\n  kernel ({} messages):\n    {}\n  fibre:\n    {}",
                case.name,
                k.len(),
                k.iter()
                    .map(|m| hex(m))
                    .collect::<Vec<_>>()
                    .join("\n    --\n    "),
                o.as_deref().map_or("nothing".into(), hex)
            )),
        }
    }

    // The same floods through fibre's limiter at the kernel's defaults.
    let mut limiter = RateLimiter::new(RateLimitSettings::default());
    let base = 10_000_000_000u64;
    let count = |limiter: &mut RateLimiter,
                 times: &[u64],
                 allow: &dyn Fn(&mut RateLimiter, u64, usize) -> bool| {
        times
            .iter()
            .enumerate()
            .filter(|(i, t)| allow(limiter, base + **t, *i))
            .count()
    };
    let a20: Ipv4Addr = "10.77.1.20".parse().unwrap();
    let a21: Ipv4Addr = "10.77.1.21".parse().unwrap();
    let a22: Ipv4Addr = "10.77.1.22".parse().unwrap();
    let a6: Ipv6Addr = "fd77:1::20".parse().unwrap();
    let te6 = v6("fd77:1::20", "fd77:2::2", 1, 0, 17, &udp(8));
    let back6 = error_route_v6(&fib, &te6, in_link).expect("a route back to fd77:1::20");
    assert_eq!(back6.prefix_len, 64);
    let models = [
        count(&mut limiter, &floods[0].1, &|l, t, _| {
            l.allow_error_v4(t, a20, &Icmp4Error::TimeExceeded)
        }),
        count(&mut limiter, &floods[1].1, &|l, t, _| {
            l.allow_error_v4(t, a21, &Icmp4Error::HostUnreachable)
        }),
        count(&mut limiter, &floods[2].1, &|l, t, _| {
            l.allow_error_v4(
                t,
                a22,
                &Icmp4Error::Redirect {
                    gateway: "10.77.1.3".parse().unwrap(),
                },
            )
        }),
        // The route back to fd77:1::20 is R's /64.
        count(&mut limiter, &floods[3].1, &|l, t, _| {
            l.allow_error_v6(t, a6, &Icmp6Error::TimeExceeded, back6.prefix_len)
        }),
    ];
    let names = [
        "1000 TTL 1 to one destination",
        "20 to an unreachable route",
        "20 redirects",
        "1000 hop limit 1 to one destination",
    ];
    for ((name, model), (kernel, _)) in names.iter().zip(models).zip(&floods) {
        if model != *kernel {
            differences.push(format!(
                "rate limit, {name}: kernel sent {kernel}, fibre {model}"
            ));
        }
    }
    // The global bucket, in the same limiter as the floods before (the
    // kernel's is one per namespace, shared by both families): 111
    // sources at once, each its own destination. It holds 50 credits
    // and, its last refill long past, refills once they are spent; each
    // message costs 0, 1 or 2 credits at random (`icmp_global_consume`),
    // so the counts vary by about ten around each other.
    let model = count(&mut limiter, &floods[4].1, &|l, t, i| {
        l.allow_error_v4(
            t,
            Ipv4Addr::new(10, 77, 1, 30 + i as u8),
            &Icmp4Error::TimeExceeded,
        )
    });
    let kernel = floods[4].0;
    // Hop limit 1 from behind R's /17, 300 packets a few ms apart: the
    // period is `icmp/ratelimit`, 100 ms, whatever the prefix (older
    // kernels shifted it by the prefix length: 31 jiffies here, 4 or 5
    // fewer errors), so 5 of the first burst, one a jiffy later and one
    // each period after. The kernel's tick starts at an unknown phase of
    // fibre's clock: within one.
    let wide = v6("fd77:8000::1", "fd77:2::2", 1, 0, 17, &udp(8));
    let back_wide = error_route_v6(&fib, &wide, in_link).expect("a route back to fd77:8000::1");
    assert_eq!(back_wide.prefix_len, 17);
    let a_wide: Ipv6Addr = "fd77:8000::1".parse().unwrap();
    let model_wide = count(&mut limiter, &floods[5].1, &|l, t, _| {
        l.allow_error_v6(t, a_wide, &Icmp6Error::TimeExceeded, back_wide.prefix_len)
    });
    if floods[5].0.abs_diff(model_wide) > 1 {
        differences.push(format!(
            "rate limit, 300 hop limit 1 behind a /17: kernel sent {}, fibre {model_wide}",
            floods[5].0
        ));
    }
    if kernel.abs_diff(model) > 30 || kernel.max(model) >= 111 {
        differences.push(format!(
            "global bucket: of 111, kernel sent {kernel}, fibre {model}"
        ));
    }
    eprintln!(
        "{TEST}: {} cases and {} random ones (seed {seed:#x}); floods: kernel {:?} over {:?} us, global bucket kernel {kernel} fibre {model}, behind a /17 fibre {model_wide}",
        cases.len(),
        random.len(),
        floods.iter().map(|f| f.0).collect::<Vec<_>>(),
        floods.iter().map(|f| f.1.last().copied().unwrap_or(0) / 1000).collect::<Vec<_>>()
    );
    assert!(
        differences.is_empty(),
        "{} differences from the kernel:\n{}",
        differences.len(),
        differences.join("\n")
    );
    drop(lab);
}
