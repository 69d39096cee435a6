//! `fibre follow` survives a burst past its receive buffer: the kernel
//! drops notifications (the follower's read fails with ENOBUFS) and the
//! follower resyncs by dump. With the smallest receive buffer the kernel
//! allows (`--rcvbuf 1`) and the follower stopped (SIGSTOP, our own child
//! by its pid) while `ip -batch` installs thousands of routes, the overrun
//! is certain; after SIGCONT fibre's `route show table all -j` must equal
//! the kernel's, and its stderr must say it resynced (else the test would
//! not have tested the overrun). Then a withdrawal of part of them and a
//! link down while stopped, and a burst while it runs.
//!
//! Needs root and `ip`; without them it says why and passes, and
//! `FIBRE_REQUIRE_TOOLS=1` (CI) makes that a failure.

#[path = "support/follower.rs"]
mod follower;
#[path = "support/netns.rs"]
mod netns;
#[path = "kernel_diff/process.rs"]
mod process;

use follower::assert_same;
use netns::Namespace;

const SHOWN: &[&str] = &["route show table all", "rule show"];

/// A message the follower prints on each overrun (with --verbose).
const OVERRUN: &str = "ENOBUFS";

fn unavailable_reason() -> Option<String> {
    match fibre_testkit::effective_uid() {
        Some(0) => {}
        Some(uid) => return Some(format!("not root (effective uid {uid})")),
        None => return Some("cannot read the effective uid".into()),
    }
    fibre_testkit::missing_tool(&["ip", "kill"])
}

fn routes(range: std::ops::Range<usize>, verb: &str) -> Vec<String> {
    range
        .map(|i| {
            format!(
                "route {verb} 10.{}.{}.0/24 via 10.0.0.2",
                100 + i / 256,
                i % 256
            )
        })
        .collect()
}

fn routes_v6(range: std::ops::Range<usize>, verb: &str) -> Vec<String> {
    range
        .map(|i| {
            format!(
                "-6 route {verb} 2001:db8:{:x}::/48 via 2001:db8::2",
                0x100 + i
            )
        })
        .collect()
}

#[test]
fn follow_resyncs_after_an_overrun() {
    if let Some(reason) = unavailable_reason() {
        fibre_testkit::unavailable("follow_resyncs_after_an_overrun", &reason);
        return;
    }
    let b = Namespace::create(
        "ffo",
        "b",
        &[
            ("net/ipv4/ip_forward", "1"),
            ("net/ipv6/conf/all/forwarding", "1"),
            ("net/ipv6/conf/default/forwarding", "1"),
            ("net/ipv6/conf/all/accept_dad", "0"),
            ("net/ipv6/conf/default/accept_dad", "0"),
        ],
    )
    .expect("namespace B");
    let a = Namespace::create("ffo", "a", &[]).expect("namespace A");
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
        "-6 addr add 2001:db8::1/64 dev v0",
    ])
    .expect("addresses");
    a.ip(&["link", "set", "p0", "up"]).expect("peer up");

    let mut f = follower::start(&b, &["--rcvbuf", "1", "--verbose"]).expect("fibre follow starts");
    assert_same(&b, &mut f, SHOWN, &[], "the start");

    f.signal("-STOP").expect("stop the follower");
    let mut burst = routes(0..4000, "add");
    burst.extend(routes_v6(0..1000, "add"));
    let installed = b.batch(&burst);
    f.signal("-CONT").expect("continue the follower");
    installed.expect("the burst");
    assert_same(
        &b,
        &mut f,
        SHOWN,
        &[],
        "a burst of 5,000 routes past the receive buffer",
    );
    assert!(
        f.stderr().contains(OVERRUN),
        "the burst did not overrun the receive buffer, so nothing was tested; stderr: {}",
        f.stderr()
    );

    f.signal("-STOP").expect("stop the follower");
    let mut withdrawal = routes(1000..3000, "del");
    withdrawal.extend(routes_v6(0..500, "del"));
    withdrawal.push("rule add from 10.0.0.0/24 table 100 pref 100".into());
    let withdrawn = b.batch(&withdrawal);
    f.signal("-CONT").expect("continue the follower");
    withdrawn.expect("the withdrawal");
    assert_same(
        &b,
        &mut f,
        SHOWN,
        &[],
        "2,500 routes withdrawn and a rule added while stopped",
    );

    // Running, small buffer: it may or may not overrun; either way it
    // must end equal.
    b.batch(&routes(4000..7000, "add")).expect("a second burst");
    assert_same(
        &b,
        &mut f,
        SHOWN,
        &[],
        "a burst of 3,000 routes while following",
    );

    b.ip(&["link", "set", "v0", "down"]).expect("link down");
    assert_same(
        &b,
        &mut f,
        SHOWN,
        &[],
        "the link down (its routes withdrawn without notifications)",
    );
}
