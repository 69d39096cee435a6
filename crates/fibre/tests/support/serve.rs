//! What the `fibre serve` end-to-end tests share: the router namespace's
//! sysctls, the check that the test can run, pings from a host, and
//! stopping a router by SIGTERM to the pid the test started.
//!
//! Included by path beside `support/netns.rs` (as `netns`) and
//! `kernel_diff/process.rs` (as `process`).

use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use super::netns::Namespace;
use super::process;

/// The kernel of a router's namespace stays out of fibre's way: no IPv6 on
/// its interfaces (no DAD, no router solicitations), no forwarding.
pub const ROUTER_SYSCTLS: &[(&str, &str)] = &[
    ("net/ipv6/conf/all/disable_ipv6", "1"),
    ("net/ipv6/conf/default/disable_ipv6", "1"),
    ("net/ipv4/ip_forward", "0"),
];

/// Why the test cannot run here (not root, or one of `tools` missing).
pub fn unavailable_reason(tools: &[&str]) -> Option<String> {
    match fibre_testkit::effective_uid() {
        Some(0) => {}
        Some(uid) => return Some(format!("not root (effective uid {uid})")),
        None => return Some("cannot read the effective uid".into()),
    }
    fibre_testkit::missing_tool(tools)
}

/// iputils' `ping` in `host`, given at most 20 s.
pub fn ping(host: &Namespace, args: &[&str]) -> process::Finished {
    host.exec("ping", args, Duration::from_secs(20))
        .expect("ping runs")
}

/// SIGTERM to `router` (the pid the test started: `ip netns exec` execs
/// fibre in place), then its exit status; killed, reaped and a panic if
/// it has not stopped within 10 s.
pub fn stop_by_sigterm(router: &mut Child) -> ExitStatus {
    let pid = router.id().to_string();
    let _ = Command::new("kill").args(["-TERM", &pid]).status();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = router.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = router.kill();
            let _ = router.wait();
            panic!("fibre serve did not stop on SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
