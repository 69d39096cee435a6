//! The kernel oracle for packets whose next hop never answers: a router
//! namespace forwards to next hops on a link whose peer has no address,
//! so ARP and neighbour solicitation go unanswered; with `mcast_solicit`
//! 1 and `retrans_time_ms` 100 the neighbour goes FAILED after one probe
//! and `neigh_invalidate` hands each queued packet to the family's
//! `error_report` (`arp_error_report`: ICMP host unreachable;
//! `ndisc_error_report`: ICMPv6 address unreachable), through
//! `icmp_send`'s and `icmp6_send`'s rate limits (left at the kernel's
//! defaults here, so that the per-destination burst of 6 shows) and
//! source selection.
//!
//! fibre's side is the same configuration, a worker whose neighbours are
//! the router's static ones, and a `fibre_neigh::NeighTable` with the
//! same settings as the control side: the worker punts the unresolved
//! packets, the table queues them and, on its timer, gives them up
//! (`Action::Unreachable`), and the worker answers each with
//! [`fibre_fwd::Worker::resolution_failed`]. What leaves the router
//! towards the sender is compared byte by byte, in order, with the fields
//! the kernel randomises masked: the IPv4 identification (and the header
//! checksum over it) and the IPv6 flow label.
//!
//! The cases: UDP past the per-destination burst; TCP and ICMP echo; a
//! record route option (compiled again on the queued header, so the
//! quote holds one more address); a packet fragmented on the way out (the
//! first fragment earns the error, the second none); a later fragment
//! (none); the on-link next hop and one behind a gateway.
//!
//! Needs root and `ip`; without them it prints why and passes
//! (`FIBRE_REQUIRE_TOOLS=1` fails instead).

#[path = "support/netns.rs"]
mod netns;
#[path = "kernel_diff/process.rs"]
mod process;
#[path = "forward_oracle/wire.rs"]
#[allow(dead_code)] // the oracle's wire: one port here, its number unread
mod wire;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use fibre_fib::{config, Fib, RpFilter};
use fibre_fwd::icmp::RateLimitSettings;
use fibre_fwd::{PortConfig, PuntKind, StaticNeighbours, Worker, WorkerConfig};
use fibre_neigh::{Action, FibRouter, NeighSettings, NeighTable};
use netns::Namespace;

const PREFIX: &str = "fibre-unres";
const R0_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const R1_MAC: [u8; 6] = [0x02, 0, 0, 0, 1, 0x01];
const S0_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x09];
const D1_MAC: [u8; 6] = [0x02, 0, 0, 0, 1, 0x09];
/// The router's neighbour settings on the dead-end link, both families.
const RETRANS_MS: u64 = 100;
const MCAST_SOLICIT: u32 = 1;

fn mac_text(mac: [u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The lines both the kernel router and fibre load.
fn shared_lines() -> Vec<String> {
    [
        "link set lo up",
        "link set r1 mtu 1280",
        "link set r0 up",
        "link set r1 up",
        "addr add 10.0.0.1/24 dev r0",
        "addr add 10.1.0.1/24 dev r1",
        "addr add fd00::1/64 dev r0 nodad",
        "addr add fd00:1::1/64 dev r1 nodad",
        "route add 198.51.100.0/24 via 10.1.0.9",
        "route add 2001:db8:9::/48 via fd00:1::9",
    ]
    .iter()
    .map(|l| l.to_string())
    .collect()
}

/// The senders, static neighbours of the router on r0.
fn senders() -> Vec<IpAddr> {
    ["10.0.0.9", "10.0.0.10", "fd00::9", "fd00::10"]
        .iter()
        .map(|a| a.parse().unwrap())
        .collect()
}

fn ipv4_frame(src: Ipv4Addr, dst: Ipv4Addr, proto: u8, options: &[u8], payload: &[u8]) -> Vec<u8> {
    ipv4_fragment(src, dst, proto, options, payload, 0, 7)
}

/// An IPv4 frame to the router's r0: `flags_offset` as the header's
/// 16-bit field (DF 0x4000, MF 0x2000, offset in 8-byte units), `id`.
fn ipv4_fragment(
    src: Ipv4Addr,
    dst: Ipv4Addr,
    proto: u8,
    options: &[u8],
    payload: &[u8],
    flags_offset: u16,
    id: u16,
) -> Vec<u8> {
    let header_len = 20 + options.len();
    assert_eq!(header_len % 4, 0, "options must fill 32-bit words");
    let total = header_len + payload.len();
    let mut f = Vec::with_capacity(14 + total);
    f.extend_from_slice(&R0_MAC);
    f.extend_from_slice(&S0_MAC);
    f.extend_from_slice(&[0x08, 0x00]);
    f.push(0x40 | (header_len / 4) as u8);
    f.push(0);
    f.extend_from_slice(&(total as u16).to_be_bytes());
    f.extend_from_slice(&id.to_be_bytes());
    f.extend_from_slice(&flags_offset.to_be_bytes());
    f.extend_from_slice(&[64, proto, 0, 0]);
    f.extend_from_slice(&src.octets());
    f.extend_from_slice(&dst.octets());
    f.extend_from_slice(options);
    let sum = fibre_net::checksum::checksum(&f[14..14 + header_len]);
    f[24..26].copy_from_slice(&sum.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

fn ipv6_frame(src: Ipv6Addr, dst: Ipv6Addr, next: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(54 + payload.len());
    f.extend_from_slice(&R0_MAC);
    f.extend_from_slice(&S0_MAC);
    f.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0]);
    f.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    f.extend_from_slice(&[next, 64]);
    f.extend_from_slice(&src.octets());
    f.extend_from_slice(&dst.octets());
    f.extend_from_slice(payload);
    f
}

/// A UDP header and `len` bytes of data (its checksum left zero: the
/// router does not check it when forwarding).
fn udp(sport: u16, len: usize) -> Vec<u8> {
    let mut u = Vec::with_capacity(8 + len);
    u.extend_from_slice(&sport.to_be_bytes());
    u.extend_from_slice(&9u16.to_be_bytes());
    u.extend_from_slice(&((8 + len) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend((0..len).map(|i| i as u8));
    u
}

fn tcp_syn(sport: u16) -> Vec<u8> {
    let mut t = vec![0u8; 20];
    t[..2].copy_from_slice(&sport.to_be_bytes());
    t[2..4].copy_from_slice(&80u16.to_be_bytes());
    t[12] = 5 << 4;
    t[13] = 0x02;
    t
}

fn echo(icmp_type: u8, ident: u16) -> Vec<u8> {
    let mut e = vec![icmp_type, 0, 0, 0];
    e.extend_from_slice(&ident.to_be_bytes());
    e.extend_from_slice(&[0, 1]);
    e.extend_from_slice(b"fibre unresolved");
    let sum = fibre_net::checksum::checksum(&e);
    e[2..4].copy_from_slice(&sum.to_be_bytes());
    e
}

/// The IPv4 frames: all to next hops on r1 that never answer.
fn frames_v4() -> Vec<Vec<u8>> {
    let a = Ipv4Addr::new(10, 0, 0, 9);
    let b = Ipv4Addr::new(10, 0, 0, 10);
    let behind = Ipv4Addr::new(198, 51, 100, 5);
    let on_link = Ipv4Addr::new(10, 1, 0, 7);
    let mut frames = Vec::new();
    // Past the per-destination burst (6 errors, then limited).
    for i in 0..8 {
        frames.push(ipv4_frame(a, behind, 17, &[], &udp(4000 + i, 32)));
    }
    // Record route with room for two more: forwarding writes r1's address,
    // the failure's compile writes one more before the quote.
    let rr = [7, 15, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    frames.push(ipv4_frame(b, on_link, 17, &rr, &udp(5000, 16)));
    frames.push(ipv4_frame(b, behind, 6, &[], &tcp_syn(5001)));
    frames.push(ipv4_frame(b, behind, 1, &[], &echo(8, 77)));
    // 1400 bytes, DF clear, over r1's MTU of 1280: two fragments queued.
    frames.push(ipv4_fragment(b, on_link, 17, &[], &udp(5002, 1372), 0, 99));
    // A later fragment: `icmp_send` answers none.
    frames.push(ipv4_fragment(b, behind, 17, &[], &[0xab; 64], 0x0010, 100));
    frames
}

fn frames_v6() -> Vec<Vec<u8>> {
    let a: Ipv6Addr = "fd00::9".parse().unwrap();
    let b: Ipv6Addr = "fd00::10".parse().unwrap();
    let behind: Ipv6Addr = "2001:db8:9::5".parse().unwrap();
    let on_link: Ipv6Addr = "fd00:1::7".parse().unwrap();
    let mut frames = Vec::new();
    for i in 0..8 {
        frames.push(ipv6_frame(a, behind, 17, &udp(4000 + i, 32)));
    }
    frames.push(ipv6_frame(b, on_link, 17, &udp(5000, 900)));
    frames.push(ipv6_frame(b, behind, 6, &tcp_syn(5001)));
    frames.push(ipv6_frame(b, behind, 58, &echo(128, 77)));
    frames
}

/// True when namespaces can be made here; else says why (failing under
/// `FIBRE_REQUIRE_TOOLS=1`).
fn available(test: &str) -> bool {
    if fibre_testkit::effective_uid() != Some(0) {
        fibre_testkit::unavailable(test, "needs root (network namespaces, AF_PACKET)");
        return false;
    }
    if let Some(missing) = fibre_testkit::missing_tool(&["ip"]) {
        fibre_testkit::unavailable(test, &missing);
        return false;
    }
    true
}

/// The sender, the router and the silent peer, linked and configured.
/// (Each namespace lives as long as its field.)
struct Topology {
    sender: Namespace,
    _router: Namespace,
    _silent: Namespace,
}

fn build(role: &str) -> Result<Topology, String> {
    let retrans = RETRANS_MS.to_string();
    let solicit = MCAST_SOLICIT.to_string();
    let router_sysctls = [
        ("net/ipv4/ip_forward", "1"),
        ("net/ipv4/conf/all/rp_filter", "0"),
        ("net/ipv4/conf/default/rp_filter", "0"),
        ("net/ipv4/conf/all/send_redirects", "0"),
        ("net/ipv4/conf/default/send_redirects", "0"),
        ("net/ipv6/conf/all/forwarding", "1"),
        ("net/ipv6/conf/default/forwarding", "1"),
        ("net/ipv6/conf/all/accept_dad", "0"),
        ("net/ipv6/conf/default/accept_dad", "0"),
    ];
    // Per device: a namespace has no `neigh/default` here.
    let neigh_sysctls = [
        ("net/ipv4/neigh/r1/mcast_solicit", solicit.as_str()),
        ("net/ipv4/neigh/r1/retrans_time_ms", retrans.as_str()),
        ("net/ipv6/neigh/r1/mcast_solicit", solicit.as_str()),
        ("net/ipv6/neigh/r1/retrans_time_ms", retrans.as_str()),
    ];
    let quiet_host = [
        ("net/ipv6/conf/all/disable_ipv6", "1"),
        ("net/ipv6/conf/default/disable_ipv6", "1"),
    ];
    let sender = Namespace::create(PREFIX, &format!("{role}s"), &quiet_host)?;
    let router = Namespace::create(PREFIX, &format!("{role}r"), &router_sysctls)?;
    let silent = Namespace::create(PREFIX, &format!("{role}d"), &quiet_host)?;
    for (name, mac, peer, peer_mac, ns) in [
        ("r0", R0_MAC, "s0", S0_MAC, &sender),
        ("r1", R1_MAC, "d1", D1_MAC, &silent),
    ] {
        router.ip(&[
            "link",
            "add",
            name,
            "address",
            &mac_text(mac),
            "type",
            "veth",
            "peer",
            "name",
            peer,
            "address",
            &mac_text(peer_mac),
            "netns",
            ns.name(),
        ])?;
        ns.ip(&["link", "set", peer, "up"])?;
    }
    router.set_sysctls(&neigh_sysctls)?;
    let mut lines = shared_lines();
    for addr in senders() {
        lines.push(format!(
            "neigh add {addr} lladdr {} dev r0 nud permanent",
            mac_text(S0_MAC)
        ));
    }
    router.batch(&lines)?;
    // The carrier follows the peer: wait until both router links have it.
    for _ in 0..500 {
        let shown = router.ip(&["link", "show"])?;
        if shown.matches("LOWER_UP").count() >= 3 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(Topology {
        sender,
        _router: router,
        _silent: silent,
    })
}

/// What the kernel router sent towards the sender for `frames`, in order,
/// with the frames of its own it sends unasked (MLD, router and neighbour
/// solicitations to groups) left out.
fn kernel_run(t: &Topology, frames: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, String> {
    let wire = wire::Wire::new(
        vec![wire::open(&t.sender.path(), "s0")?],
        vec![wire::open(&t.sender.path(), "s0")?],
    );
    let injected: Vec<(usize, &[u8])> = frames.iter().map(|f| (0, f.as_slice())).collect();
    // Resolution fails RETRANS_MS after the first packet; then the errors.
    let quiet = Duration::from_millis(RETRANS_MS * 4);
    let captured = wire.run(&injected, quiet, Duration::from_secs(5))?;
    Ok(captured
        .into_iter()
        .map(|(_, c)| c.bytes)
        .filter(|f| !is_unasked(f))
        .collect())
}

/// A frame the router sends of its own accord: to a group MAC.
fn is_unasked(frame: &[u8]) -> bool {
    frame.first().is_some_and(|b| b & 1 == 1)
}

/// fibre's worker and neighbour table, as the kernel router is set up.
fn fibre_run(frames: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, String> {
    let model = "link add r0 type veth peer name p0\nlink set p0 up\n\
                 link add r1 type veth peer name p1\nlink set p1 up\n";
    let text: String = model.to_string()
        + &shared_lines()
            .iter()
            .map(|l| format!("{l}\n"))
            .collect::<String>();
    let (fib, _) = config::apply_str(&Fib::new(), "unresolved.conf", &text, false)
        .map_err(|e| format!("fibre refused the configuration: {e}"))?;
    let r0 = fib.link_by_name("r0").ok_or("no r0")?.index;
    let r1 = fib.link_by_name("r1").ok_or("no r1")?.index;
    let mut neighbours = StaticNeighbours::default();
    for addr in senders() {
        neighbours.insert(r0, addr, S0_MAC);
    }
    let mut ports = [PortConfig::new(r0, R0_MAC), PortConfig::new(r1, R1_MAC)];
    for p in &mut ports {
        p.rp_filter = RpFilter::Off;
        p.send_redirects = false;
    }
    let config = WorkerConfig {
        icmp: RateLimitSettings::default(),
        ..WorkerConfig::default()
    };
    let settings = NeighSettings {
        mcast_solicit: MCAST_SOLICIT,
        retrans_time_ms: RETRANS_MS,
        ..NeighSettings::default()
    };
    let macs = [(r0, R0_MAC), (r1, R1_MAC)].into_iter().collect();
    let router = FibRouter::with_macs(&fib, macs);
    let mut table = NeighTable::from_fib(settings, &fib, 0);
    let mut worker = Worker::new(fib.clone(), neighbours, &ports, config);
    let mut actions: Vec<Action> = Vec::new();
    let start_ms = 1_000u64;
    for (i, frame) in frames.iter().enumerate() {
        let now_ms = start_ms + i as u64 / 10;
        worker.receive_burst(0, &[frame.as_slice()], now_ms * 1_000_000);
        worker.drain_punts(|p| {
            if let (PuntKind::Unresolved, Some(next_hop), Some(packet)) =
                (p.kind, p.next_hop, p.frame.get(14..))
            {
                actions.extend(table.resolve(now_ms, p.link, next_hop, packet.to_vec(), &router));
            }
        });
    }
    let mut sent = Vec::new();
    worker.drain_port(0, |f| sent.push(f.to_vec()));
    worker.drain_port(1, |_| {});
    // The neighbour timers, millisecond by millisecond, until all is done.
    let mut now_ms = start_ms;
    while now_ms < start_ms + 10 * RETRANS_MS {
        now_ms += 1;
        actions.extend(table.tick(now_ms, &router));
        for action in actions.drain(..) {
            if let Action::Unreachable { link, packet, .. } = action {
                worker.resolution_failed(link, &packet, now_ms * 1_000_000);
            }
        }
        worker.drain_port(0, |f| sent.push(f.to_vec()));
        worker.drain_port(1, |_| {});
    }
    Ok(sent)
}

/// Masks what the kernel randomises: IPv4's identification and the
/// header checksum over it; IPv6's flow label.
fn masked(frame: &[u8]) -> Vec<u8> {
    let mut f = frame.to_vec();
    match f.get(12..14) {
        Some([0x08, 0x00]) if f.len() >= 34 => {
            f[18..20].fill(0);
            f[24..26].fill(0);
        }
        Some([0x86, 0xdd]) if f.len() >= 54 => {
            f[15] &= 0xf0;
            f[16..18].fill(0);
        }
        _ => {}
    }
    f
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The destination of the packet an error quotes: its neighbour's queue.
/// Each queue's errors come in its order, but two neighbours that fail in
/// the same jiffy may have theirs in either order.
fn quoted_destination(frame: &[u8]) -> Vec<u8> {
    let at = match frame.get(12..14) {
        Some([0x08, 0x00]) => 14 + usize::from(frame[14] & 0x0f) * 4 + 8 + 16,
        _ => 14 + 40 + 8 + 24,
    };
    frame.get(at..at + 4).unwrap_or_default().to_vec()
}

fn compare(family: &str, frames: &[Vec<u8>], expect_errors: usize) {
    let topology = build(family).expect("topology");
    let mut kernel = kernel_run(&topology, frames).expect("kernel run");
    drop(topology);
    let mut fibre = fibre_run(frames).expect("fibre run");
    kernel.sort_by_key(|f| quoted_destination(f));
    fibre.sort_by_key(|f| quoted_destination(f));
    let mut report = String::new();
    for (i, pair) in kernel.iter().zip(&fibre).enumerate() {
        let (k, f) = (masked(pair.0), masked(pair.1));
        if k != f {
            let at = k.iter().zip(&f).position(|(a, b)| a != b).unwrap_or(0);
            report.push_str(&format!(
                "output {i}: first difference at byte {at}\n kernel {}\n fibre  {}\n",
                hex(&k),
                hex(&f)
            ));
        }
    }
    if kernel.len() != fibre.len() {
        report.push_str(&format!(
            "the kernel sent {} frames, fibre {}\n kernel: {:?}\n fibre: {:?}\n",
            kernel.len(),
            fibre.len(),
            kernel.iter().map(|f| hex(f)).collect::<Vec<_>>(),
            fibre.iter().map(|f| hex(f)).collect::<Vec<_>>()
        ));
    }
    assert!(
        report.is_empty(),
        "{family}: fibre differs from the kernel:\n{report}"
    );
    // The test means something only if errors came at all, and limited.
    assert_eq!(
        kernel.len(),
        expect_errors,
        "{family}: the kernel sent an unexpected number of errors"
    );
}

#[test]
fn resolution_failures_get_the_kernels_host_unreachable() {
    if !available("resolution_failures_get_the_kernels_host_unreachable") {
        return;
    }
    // 6 of the 8 from 10.0.0.9 (the burst); from 10.0.0.10 the record
    // route, TCP, echo and the first of the two fragments (the later
    // fragment sent as one gets none).
    compare("v4", &frames_v4(), 6 + 4);
}

#[test]
fn resolution_failures_get_the_kernels_address_unreachable() {
    if !available("resolution_failures_get_the_kernels_address_unreachable") {
        return;
    }
    compare("v6", &frames_v6(), 6 + 3);
}
