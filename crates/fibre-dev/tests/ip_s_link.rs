//! `format_ip_s_link` against the real `ip -s link show` (iproute2) of a
//! veth that carried traffic and an ifb, in network namespaces this test
//! creates and deletes. Skips (and says so) without `ip` or root.

use std::process::Command;

use fibre_dev::stats::{format_ip_s_link, format_ip_s_link_stats, IpLinkStats, LinkSummary};

fn ip(args: &[&str]) -> Option<String> {
    let out = Command::new("ip").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Deletes the namespaces when the test ends, passed or failed.
struct Namespaces(Vec<String>);
impl Drop for Namespaces {
    fn drop(&mut self) {
        for ns in &self.0 {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

fn numbers(line: &str) -> Vec<u64> {
    line.split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect()
}

/// The figures in a real `ip -s link show` block.
fn parse_stats(block: &str) -> IpLinkStats {
    let lines: Vec<&str> = block.lines().collect();
    let rx = numbers(lines[3]);
    let tx = numbers(lines[5]);
    IpLinkStats {
        rx_bytes: rx[0],
        rx_packets: rx[1],
        rx_errors: rx[2],
        rx_dropped: rx[3],
        rx_missed: rx[4],
        rx_mcast: rx[5],
        tx_bytes: tx[0],
        tx_packets: tx[1],
        tx_errors: tx[2],
        tx_dropped: tx[3],
        tx_carrier: tx[4],
        tx_collisions: tx[5],
    }
}

#[test]
fn statistics_lines_match_iproute2_byte_for_byte() {
    let pid = std::process::id();
    let (a, b) = (format!("fdev-a-{pid}"), format!("fdev-b-{pid}"));
    if ip(&["netns", "add", &a]).is_none() {
        fibre_testkit::unavailable(
            "ip_s_link",
            "cannot create network namespaces (needs root and iproute2)",
        );
        return;
    }
    let _cleanup = Namespaces(vec![a.clone(), b.clone()]);
    ip(&["netns", "add", &b]).expect("second namespace");
    let setup: [&[&str]; 7] = [
        &[
            "-n", &a, "link", "add", "fv0", "type", "veth", "peer", "name", "fv1", "netns", &b,
        ],
        &["-n", &a, "addr", "add", "10.213.0.1/24", "dev", "fv0"],
        &["-n", &b, "addr", "add", "10.213.0.2/24", "dev", "fv1"],
        &["-n", &a, "link", "set", "fv0", "up"],
        &["-n", &b, "link", "set", "fv1", "up"],
        &["-n", &a, "link", "add", "fifb", "type", "ifb"],
        &["-n", &a, "link", "set", "lo", "up"],
    ];
    for args in setup {
        ip(args).unwrap_or_else(|| panic!("ip {args:?} failed"));
    }
    // Traffic only between our own namespaces, bounded.
    // (bash's /dev/udp: no ping on minimal images).
    let _ = Command::new("ip")
        .args([
            "netns", "exec", &a, "bash", "-c",
            "for i in 1 2 3 4 5; do head -c 1200 /dev/zero > /dev/udp/10.213.0.2/9; sleep 0.05; done",
        ])
        .output();
    for dev in ["fv0", "fifb", "lo"] {
        let real = ip(&["-n", &a, "-s", "link", "show", "dev", dev]).expect("ip -s link show");
        let stats = parse_stats(&real);
        let real_stats: String = real.lines().skip(2).map(|l| format!("{l}\n")).collect();
        assert_eq!(format_ip_s_link_stats(&stats), real_stats, "{dev}:\n{real}");
        if dev == "fv0" {
            assert!(stats.tx_packets >= 3 && stats.tx_bytes > 3 * 1200, "{real}");
        }
        // The link line: same words in the same places.
        let first = real.lines().next().unwrap();
        let (index, rest) = first.split_once(": ").unwrap();
        let (name, rest) = rest.split_once(": ").unwrap();
        let flags = rest[1..rest.find('>').unwrap()].to_string();
        let words: Vec<&str> = rest.split_whitespace().collect();
        let ours = format_ip_s_link(
            &LinkSummary {
                index: index.parse().unwrap(),
                name: name.into(),
                flags,
                mtu: words[2].parse().unwrap(),
                state: match words[6] {
                    "UP" => "UP",
                    "DOWN" => "DOWN",
                    "UNKNOWN" => "UNKNOWN",
                    other => panic!("unexpected state {other}"),
                },
                link_line: real.lines().nth(1).unwrap().trim_start().into(),
            },
            &stats,
        );
        let our_words: Vec<&str> = ours.lines().next().unwrap().split_whitespace().collect();
        let real_words: Vec<&str> = first.split_whitespace().collect();
        // qdisc and qlen differ by device (noop/noqueue, ifb's qlen 32);
        // every other word must match.
        for (i, (o, r)) in our_words.iter().zip(&real_words).enumerate() {
            if real_words.get(i.wrapping_sub(1)) != Some(&"qdisc")
                && real_words.get(i.wrapping_sub(1)) != Some(&"qlen")
            {
                assert_eq!(o, r, "word {i} of {first}");
            }
        }
        assert_eq!(our_words.len(), real_words.len(), "{first}");
        assert_eq!(
            ours.lines().skip(1).collect::<Vec<_>>(),
            real.lines().skip(1).collect::<Vec<_>>()
        );
    }
}
