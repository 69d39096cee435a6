//! `fibre --icmp CAPTURE`: path MTU reports in a pcap become route cache
//! exceptions that `route get` and `route show cache` show; reports the
//! kernel would not use are not used; bad captures are refused.
//! (The kernel's own answers for the same reports are checked in
//! `pmtu_kernel.rs`.)

use std::net::{Ipv4Addr, Ipv6Addr};
use std::process::{Command, Output};
use std::time::Duration;

use fibre_net::pcap::{LinkType, PcapWriter};
use fibre_net::{icmpv4, icmpv6, ipv4, ipv6};

#[path = "support/scratch.rs"]
mod scratch;
use scratch::Scratch;

const CONFIG: &str = "\
link add eth0 type ifb
link set eth0 up
addr add 10.0.0.1/24 dev eth0
addr add 2001:db8::1/64 dev eth0 nodad
route add 198.51.100.0/24 via 10.0.0.2
route add 203.0.113.0/24 via 10.0.0.3
route add 2001:db8:100::/48 via 2001:db8::2
";

fn fibre(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fibre"))
        .args(args)
        .output()
        .expect("run fibre")
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "fibre failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn ethernet(ethertype: u16, ip: &[u8]) -> Vec<u8> {
    let mut frame = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];
    frame.extend_from_slice(&ethertype.to_be_bytes());
    frame.extend_from_slice(ip);
    frame
}

/// An IPv4 header (20 bytes) for `total_len` bytes of `protocol` in all.
fn ipv4_header(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, total_len: usize) -> Vec<u8> {
    let mut h = vec![0u8; total_len.max(20)];
    h[0] = 0x45;
    h[2..4].copy_from_slice(&(total_len as u16).to_be_bytes());
    h[6] = 0x40;
    h[8] = 64;
    h[9] = protocol;
    h[12..16].copy_from_slice(&src.octets());
    h[16..20].copy_from_slice(&dst.octets());
    ipv4::Packet::new_checked(&mut h[..])
        .unwrap()
        .fill_checksum();
    h.truncate(20);
    h
}

/// What `gateway` sends back when our packet `from -> to` is too big for
/// its next hop (`mtu`), to `reply_to`.
fn frag_needed(
    gateway: Ipv4Addr,
    reply_to: Ipv4Addr,
    from: Ipv4Addr,
    to: Ipv4Addr,
    mtu: u16,
) -> Vec<u8> {
    let mut quoted = ipv4_header(from, to, 1, 1500);
    quoted.extend_from_slice(&[8, 0, 0, 0, 0, 1, 0, 1]);
    let mut icmp = vec![3, 4, 0, 0, 0, 0];
    icmp.extend_from_slice(&mtu.to_be_bytes());
    icmp.extend_from_slice(&quoted);
    icmpv4::Packet::new_checked(&mut icmp[..])
        .unwrap()
        .fill_checksum();
    let mut ip = ipv4_header(gateway, reply_to, 1, 20 + icmp.len());
    ip.extend_from_slice(&icmp);
    ethernet(0x0800, &ip)
}

fn packet_too_big(
    gateway: Ipv6Addr,
    reply_to: Ipv6Addr,
    from: Ipv6Addr,
    to: Ipv6Addr,
    mtu: u32,
) -> Vec<u8> {
    let mut quoted = vec![0u8; 40];
    quoted[0] = 0x60;
    quoted[4..6].copy_from_slice(&1400u16.to_be_bytes());
    quoted[6] = 58;
    quoted[7] = 64;
    quoted[8..24].copy_from_slice(&from.octets());
    quoted[24..40].copy_from_slice(&to.octets());
    quoted.extend_from_slice(&[128, 0, 0, 0, 0, 1, 0, 1]);
    let mut icmp = vec![2, 0, 0, 0];
    icmp.extend_from_slice(&mtu.to_be_bytes());
    icmp.extend_from_slice(&quoted);
    icmpv6::Packet::new_checked(&mut icmp[..])
        .unwrap()
        .fill_checksum(gateway, reply_to);
    let mut ip = vec![0u8; 40];
    ip[0] = 0x60;
    ip[4..6].copy_from_slice(&(icmp.len() as u16).to_be_bytes());
    ip[6] = 58;
    ip[7] = 64;
    ip[8..24].copy_from_slice(&gateway.octets());
    ip[24..40].copy_from_slice(&reply_to.octets());
    ip.extend_from_slice(&icmp);
    assert!(ipv6::Packet::new_checked(&ip[..]).is_ok());
    ethernet(0x86dd, &ip)
}

fn capture(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut w = PcapWriter::new(Vec::new(), LinkType::Ethernet).unwrap();
    for (i, f) in frames.iter().enumerate() {
        w.write_packet(Duration::from_secs(1_700_000_000 + i as u64), f)
            .unwrap();
    }
    w.into_inner()
}

const ME: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const GW: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

/// `expires NNNsec` with NNN just under 600, replaced by `expires Xsec`.
fn normalize(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("expires ") {
        out.push_str(&rest[..at + 8]);
        rest = &rest[at + 8..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let secs: u32 = digits.parse().expect("seconds after expires");
        assert!((590..=600).contains(&secs), "expires {secs}sec");
        out.push('X');
        rest = &rest[digits.len()..];
    }
    out.push_str(rest);
    out
}

#[test]
fn path_mtu_reports_show_in_route_get_and_route_show_cache() {
    let dir = Scratch::new("icmp", "pmtu");
    let config = dir.file_arg("router.conf", CONFIG.as_bytes());
    let dst = Ipv4Addr::new(198, 51, 100, 7);
    let v6 = |s: &str| s.parse::<Ipv6Addr>().unwrap();
    // The first report arrives in a QinQ frame (802.1ad outer tag, 802.1Q
    // inner tag).
    let mut qinq = frag_needed(GW, ME, ME, dst, 1300);
    qinq.splice(12..12, [0x88, 0xa8, 0, 10, 0x81, 0x00, 0, 20]);
    let pcap = dir.file_arg(
        "icmp.pcap",
        &capture(&[
            qinq,
            // Below min_pmtu: raised to 552 and locked.
            frag_needed(GW, ME, ME, Ipv4Addr::new(198, 51, 100, 8), 400),
            packet_too_big(
                v6("2001:db8::2"),
                v6("2001:db8::1"),
                v6("2001:db8::1"),
                v6("2001:db8:100::7"),
                1280,
            ),
        ]),
    );
    let get = |dst: &str| {
        stdout(&fibre(&[
            "--config", &config, "--icmp", &pcap, "route", "get", dst,
        ]))
    };
    assert_eq!(
        normalize(&get("198.51.100.7")),
        "198.51.100.7 via 10.0.0.2 dev eth0 src 10.0.0.1 uid 0 \n    cache expires Xsec mtu 1300 \n"
    );
    assert_eq!(
        normalize(&get("198.51.100.8")),
        "198.51.100.8 via 10.0.0.2 dev eth0 src 10.0.0.1 uid 0 \n    cache expires Xsec mtu lock 552 \n"
    );
    // Other destinations through the same nexthop carry nothing.
    assert_eq!(
        get("198.51.100.9"),
        "198.51.100.9 via 10.0.0.2 dev eth0 src 10.0.0.1 uid 0 \n    cache \n"
    );
    assert_eq!(
        normalize(&get("2001:db8:100::7")),
        "2001:db8:100::7 from :: via 2001:db8::2 dev eth0 src 2001:db8::1 metric 1024 expires Xsec mtu 1280 pref medium\n"
    );
    let show = stdout(&fibre(&[
        "--config", &config, "--icmp", &pcap, "route", "show", "cache",
    ]));
    assert_eq!(
        normalize(&show),
        "198.51.100.7 via 10.0.0.2 dev eth0 \n    cache expires Xsec mtu 1300 \n\
         198.51.100.8 via 10.0.0.2 dev eth0 \n    cache expires Xsec mtu lock 552 \n"
    );
    let show6 = stdout(&fibre(&[
        "--config", &config, "--icmp", &pcap, "-6", "route", "show", "cache",
    ]));
    assert_eq!(
        normalize(&show6),
        "2001:db8:100::7 via 2001:db8::2 dev eth0 metric 1024 expires Xsec mtu 1280 pref medium\n"
    );
    let json = stdout(&fibre(&[
        "--config",
        &config,
        "--icmp",
        &pcap,
        "-j",
        "route",
        "get",
        "198.51.100.7",
    ]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v[0]["metrics"][0]["mtu"], 1300);
    assert!((590..=600).contains(&v[0]["expires"].as_u64().unwrap()));
    // Without --icmp the router has learnt nothing.
    assert_eq!(
        stdout(&fibre(&["--config", &config, "route", "show", "cache"])),
        ""
    );
}

#[test]
fn reports_the_kernel_would_not_use_are_not_used() {
    let dir = Scratch::new("icmp", "unused");
    let config = dir.file_arg("router.conf", CONFIG.as_bytes());
    let dst = Ipv4Addr::new(198, 51, 100, 7);
    let mut bad_checksum = frag_needed(GW, ME, ME, dst, 1300);
    let last = bad_checksum.len() - 1;
    bad_checksum[last] ^= 0xff;
    let stranger = Ipv4Addr::new(10, 0, 0, 77);
    let pcap = dir.file_arg(
        "icmp.pcap",
        &capture(&[
            bad_checksum,
            // Addressed to someone else.
            frag_needed(GW, stranger, stranger, dst, 1300),
            // Quoting a packet we did not send.
            frag_needed(GW, ME, stranger, dst, 1300),
            // Not smaller than the path's MTU: accepted, changes nothing.
            frag_needed(GW, ME, ME, dst, 9000),
        ]),
    );
    let out = fibre(&[
        "--config", &config, "--icmp", &pcap, "route", "show", "cache",
    ]);
    assert_eq!(stdout(&out), "");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("3 ICMP error(s) not used"), "{stderr}");
}

#[test]
fn bad_captures_are_refused_with_the_file_and_the_packet() {
    let dir = Scratch::new("icmp", "bad");
    let config = dir.file_arg("router.conf", CONFIG.as_bytes());
    let pcapng = dir.file_arg(
        "x.pcapng",
        b"\x0a\x0d\x0d\x0a\x1c\x00\x00\x00\x4d\x3c\x2b\x1a",
    );
    let out = fibre(&[
        "--config", &config, "--icmp", &pcapng, "route", "show", "cache",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("x.pcapng") && stderr.contains("editcap -F pcap"),
        "{stderr}"
    );
    let good = capture(&[frag_needed(
        GW,
        ME,
        ME,
        Ipv4Addr::new(198, 51, 100, 7),
        1300,
    )]);
    let cut = dir.file_arg("cut.pcap", &good[..good.len() - 5]);
    let out = fibre(&[
        "--config", &config, "--icmp", &cut, "route", "show", "cache",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cut.pcap: packet 1") && stderr.contains("truncated packet data"),
        "{stderr}"
    );
    let missing = dir.path().join("absent.pcap");
    let out = fibre(&[
        "--config",
        &config,
        "--icmp",
        missing.to_str().unwrap(),
        "route",
        "show",
        "cache",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("absent.pcap"));
}

#[test]
fn a_report_lands_on_the_nexthop_its_quoted_flow_uses() {
    let dir = Scratch::new("icmp", "bysrc");
    let config = format!(
        "{CONFIG}link add eth1 type ifb\nlink set eth1 up\naddr add 10.7.0.1/24 dev eth1\n\
         route add 198.51.100.0/24 via 10.7.0.2 table 100\nrule add from 10.7.0.0/24 table 100 pref 100\n"
    );
    let config = dir.file_arg("router.conf", config.as_bytes());
    let me2 = Ipv4Addr::new(10, 7, 0, 1);
    let dst = Ipv4Addr::new(198, 51, 100, 7);
    let pcap = dir.file_arg(
        "icmp.pcap",
        &capture(&[frag_needed(Ipv4Addr::new(10, 7, 0, 2), me2, me2, dst, 1300)]),
    );
    let get = |extra: &[&str]| {
        let mut args = vec![
            "--config",
            &config,
            "--icmp",
            &pcap,
            "route",
            "get",
            "198.51.100.7",
        ];
        args.extend_from_slice(extra);
        stdout(&fibre(&args))
    };
    assert_eq!(
        normalize(&get(&["from", "10.7.0.1"])),
        "198.51.100.7 from 10.7.0.1 via 10.7.0.2 dev eth1 table 100 uid 0 \n    cache expires Xsec mtu 1300 \n"
    );
    // The flow without that source goes by eth0: no exception there.
    assert_eq!(
        get(&[]),
        "198.51.100.7 via 10.0.0.2 dev eth0 src 10.0.0.1 uid 0 \n    cache \n"
    );
}

#[test]
fn quotes_too_short_and_cut_captures_are_counted_not_used() {
    let dir = Scratch::new("icmp", "short");
    let config = dir.file_arg("router.conf", CONFIG.as_bytes());
    let dst = Ipv4Addr::new(198, 51, 100, 7);
    // A quoted header claiming 8 bytes (IHL 2): the kernel drops it.
    let mut short_ihl = frag_needed(GW, ME, ME, dst, 1300);
    let quoted_at = 14 + 20 + 8;
    short_ihl[quoted_at] = 0x42;
    let icmp_at = 14 + 20;
    short_ihl[icmp_at + 2] = 0;
    short_ihl[icmp_at + 3] = 0;
    let sum = !fibre_net::checksum::sum(&short_ihl[icmp_at..]);
    short_ihl[icmp_at + 2..icmp_at + 4].copy_from_slice(&sum.to_be_bytes());
    let checked = icmpv4::Packet::new_checked(&short_ihl[icmp_at..]).unwrap();
    assert!(checked.verify_checksum(), "only the IHL is wrong");
    // A report cut by the capture's snapshot length.
    let cut = frag_needed(GW, ME, ME, dst, 1300)[..50].to_vec();
    let pcap = dir.file_arg("icmp.pcap", &capture(&[short_ihl, cut]));
    let out = fibre(&[
        "--config", &config, "--icmp", &pcap, "route", "show", "cache",
    ]);
    assert_eq!(stdout(&out), "");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("2 ICMP error(s) not used"), "{stderr}");
}

#[test]
fn lookup_answers_with_the_exceptions_route_get_shows() {
    let dir = Scratch::new("icmp", "lookup");
    let config = dir.file_arg("router.conf", CONFIG.as_bytes());
    let dst = Ipv4Addr::new(198, 51, 100, 7);
    let pcap = dir.file_arg("icmp.pcap", &capture(&[frag_needed(GW, ME, ME, dst, 1300)]));
    let run = |json: bool, queries: &str| {
        let mut args = vec!["--config", &config, "--icmp", &pcap];
        if json {
            args.push("-j");
        }
        args.push("lookup");
        let mut child = Command::new(env!("CARGO_BIN_EXE_fibre"))
            .args(&args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run fibre");
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), queries.as_bytes()).unwrap();
        stdout(&child.wait_with_output().unwrap())
    };
    let lines = run(false, "198.51.100.7\n198.51.100.9\n198.51.100.7 fibmatch\n");
    let lines: Vec<String> = lines.lines().map(normalize).collect();
    assert_eq!(
        lines,
        [
            "198.51.100.7 via 10.0.0.2 dev eth0 src 10.0.0.1 uid 0 cache expires Xsec mtu 1300",
            "198.51.100.9 via 10.0.0.2 dev eth0 src 10.0.0.1 uid 0 cache",
            "198.51.100.0/24 via 10.0.0.2 dev eth0",
        ]
    );
    let json = run(true, "198.51.100.7\n");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["metrics"][0]["mtu"], 1300);
    assert!((590..=600).contains(&v["expires"].as_u64().unwrap()));
}
