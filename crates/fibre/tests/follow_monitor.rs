//! `fibre monitor` prints a followed namespace's changes as `ip monitor`
//! does: each route and rule that came as `ip route show` / `ip rule
//! show` print it (read from the kernel here, so the comparison is with
//! iproute2's own text), each that went with `Deleted `; and also the
//! routes the kernel withdrew without a notification (a link down), which
//! `ip monitor` cannot show. `-j route monitor` prints the same routes as
//! `ip -j route show` objects.
//!
//! Needs root and `ip`; without them it says why and passes, and
//! `FIBRE_REQUIRE_TOOLS=1` (CI) makes that a failure.

#[path = "support/netns.rs"]
mod netns;
#[path = "kernel_diff/process.rs"]
mod process;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::thread;
use std::time::Duration;

use netns::Namespace;

/// A monitor process, killed (our own child, by pid) on drop.
struct Monitor {
    child: Child,
    lines: Receiver<String>,
}

impl Monitor {
    fn start(ns: &Namespace, args: &[&str]) -> Monitor {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fibre"))
            .args(args)
            .args(["--netns", ns.name(), "--seconds", "60"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("fibre monitor starts");
        let (send, lines) = channel();
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let ready = send.clone();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = send.send(line);
            }
        });
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.starts_with("fibre monitor: following") {
                    let _ = ready.send("READY".into());
                }
            }
        });
        let monitor = Monitor { child, lines };
        assert_eq!(monitor.next(), "READY", "the monitor says when it follows");
        monitor
    }

    fn next(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(20))
            .expect("a line from fibre monitor within 20 s")
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn unavailable_reason() -> Option<String> {
    match fibre_testkit::effective_uid() {
        Some(0) => {}
        Some(uid) => return Some(format!("not root (effective uid {uid})")),
        None => return Some("cannot read the effective uid".into()),
    }
    fibre_testkit::missing_tool(&["ip"])
}

#[test]
fn fibre_monitor_prints_changes_as_ip_monitor() {
    if let Some(reason) = unavailable_reason() {
        fibre_testkit::unavailable("fibre_monitor_prints_changes_as_ip_monitor", &reason);
        return;
    }
    // No IPv6 in B: its link-local configuration, a moment after the link
    // comes up, would print lines of its own among the ones checked.
    let no_ipv6 = [
        ("net/ipv6/conf/all/disable_ipv6", "1"),
        ("net/ipv6/conf/default/disable_ipv6", "1"),
    ];
    let b = Namespace::create("ffm", "b", &no_ipv6).expect("namespace B");
    let a = Namespace::create("ffm", "a", &[]).expect("namespace A");
    b.ip(&[
        "link",
        "add",
        "v0",
        "type",
        "veth",
        "peer",
        "name",
        "p0",
        "netns",
        a.name(),
    ])
    .expect("veth");
    b.batch(&[
        "link set lo up",
        "link set v0 up",
        "addr add 10.0.0.1/24 dev v0",
    ])
    .expect("setup");
    a.ip(&["link", "set", "p0", "up"]).expect("peer up");
    let text = Monitor::start(&b, &["monitor", "route", "rule"]);
    let json = Monitor::start(&b, &["-j", "route", "monitor"]);

    b.ip(&[
        "route",
        "add",
        "10.77.0.0/16",
        "via",
        "10.0.0.2",
        "proto",
        "static",
    ])
    .expect("add");
    let shown = b.ip(&["route", "show", "10.77.0.0/16"]).expect("show");
    let shown_json = b
        .ip(&["-j", "route", "show", "10.77.0.0/16"])
        .expect("show -j");
    assert_eq!(text.next(), shown.trim_end_matches('\n'));
    let object: serde_json::Value = serde_json::from_str(&json.next()).expect("a JSON line");
    let kernel: serde_json::Value = serde_json::from_str(&shown_json).expect("ip's JSON");
    assert_eq!(object, kernel[0]);

    b.ip(&[
        "rule",
        "add",
        "from",
        "10.5.0.0/16",
        "table",
        "7",
        "pref",
        "77",
    ])
    .expect("rule");
    let rule = b.ip(&["rule", "show", "pref", "77"]).expect("rule show");
    assert_eq!(text.next(), rule.trim_end_matches('\n'));
    b.ip(&["rule", "del", "pref", "77"]).expect("rule del");
    assert_eq!(
        text.next(),
        format!("Deleted {}", rule.trim_end_matches('\n'))
    );

    // The link down withdraws 10.77.0.0/16 and the subnet's route with no
    // RTM_DELROUTE for them; the monitor shows both going.
    let subnet = b.ip(&["route", "show", "10.0.0.0/24"]).expect("show");
    b.ip(&["link", "set", "v0", "down"]).expect("down");
    let mut went = vec![text.next(), text.next()];
    went.sort();
    let mut expected = vec![
        format!("Deleted {}", subnet.trim_end_matches('\n')),
        format!("Deleted {}", shown.trim_end_matches('\n')),
    ];
    expected.sort();
    assert_eq!(went, expected);
    let gone: serde_json::Value = serde_json::from_str(&json.next()).expect("a JSON line");
    assert_eq!(gone["deleted"], true);
}
