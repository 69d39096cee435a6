//! `fibre serve` forwards real packets: two hosts in namespaces of their
//! own, joined by veth pairs to a third namespace where fibre (not the
//! kernel: it has no addresses there and does not forward) is the router
//! on AF_PACKET ports. The hosts' kernels must find fibre by ARP, ping
//! across it, ping it, and hear its time exceeded; SIGTERM then stops it
//! cleanly.
//!
//! Needs root, `ip` and iputils' `ping`; without them it says why and
//! passes, and `FIBRE_REQUIRE_TOOLS=1` (CI) makes that a failure.

#[path = "support/netns.rs"]
mod netns;
#[path = "kernel_diff/process.rs"]
mod process;
#[path = "support/serve.rs"]
mod serve;

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use netns::Namespace;
use serve::{ping, stop_by_sigterm, ROUTER_SYSCTLS};

const CONFIG: &str = "link add r0 type veth peer name x0
link set r0 up
addr add 10.0.1.1/24 dev r0
link add r1 type veth peer name x1
link set r1 up
addr add 10.0.2.1/24 dev r1
";

/// h1 (10.0.1.2) -- r0 [fibre] r1 -- h2 (10.0.2.2).
fn topology() -> Result<[Namespace; 3], String> {
    let host_sysctls = [("net/ipv6/conf/all/disable_ipv6", "1")];
    let h1 = Namespace::create("fsv", "h1", &host_sysctls)?;
    let r = Namespace::create("fsv", "r", ROUTER_SYSCTLS)?;
    let h2 = Namespace::create("fsv", "h2", &host_sysctls)?;
    for (host, inside, outside, subnet) in [(&h1, "h1", "r0", 1), (&h2, "h2", "r1", 2)] {
        host.ip(&[
            "link", "add", inside, "type", "veth", "peer", "name", outside,
        ])?;
        host.ip(&["link", "set", outside, "netns", r.name()])?;
        host.ip(&["addr", "add", &format!("10.0.{subnet}.2/24"), "dev", inside])?;
        host.ip(&["link", "set", inside, "up"])?;
        host.ip(&[
            "route",
            "add",
            "default",
            "via",
            &format!("10.0.{subnet}.1"),
        ])?;
        r.ip(&["link", "set", outside, "up"])?;
    }
    Ok([h1, r, h2])
}

#[test]
fn fibre_serve_forwards_between_two_namespaces() {
    if let Some(reason) = serve::unavailable_reason(&["ip", "ping"]) {
        fibre_testkit::unavailable("fibre_serve_forwards_between_two_namespaces", &reason);
        return;
    }
    let [h1, r, h2] = topology().expect("the namespaces are made");
    let dir = std::env::temp_dir().join(format!("fibre-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("router.conf");
    std::fs::write(&config, CONFIG).unwrap();
    let mut router = r
        .command(
            env!("CARGO_BIN_EXE_fibre"),
            &[
                "--config",
                config.to_str().unwrap(),
                "serve",
                "--port",
                "r0",
                "--port",
                "r1",
                "--seconds",
                "60",
                "--socket",
                dir.join("ctl.sock").to_str().unwrap(),
            ],
        )
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("fibre serve starts");
    let mut stderr = BufReader::new(router.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    assert!(first.contains("forwarding on r0, r1"), "{first}");

    let across = ping(&h1, &["-c", "3", "-i", "0.2", "-W", "2", "10.0.2.2"]);
    let to_router = ping(&h2, &["-c", "1", "-W", "2", "10.0.2.1"]);
    let ttl_1 = ping(&h1, &["-c", "1", "-W", "2", "-t", "1", "10.0.2.2"]);
    // Nobody has 10.0.2.99: after mcast_solicit (3) ARP requests a
    // retrans_time (1 s) apart, the router gives up and answers the
    // queued echo request with host unreachable (`arp_error_report`).
    let unresolved = ping(&h1, &["-c", "1", "-W", "8", "10.0.2.99"]);

    let status = stop_by_sigterm(&mut router);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    drop(h2);

    assert!(
        across.stdout.contains("3 packets transmitted, 3 received"),
        "h1 -> h2 across fibre: {}{}\nfibre: {rest}",
        across.stdout,
        across.stderr
    );
    assert!(
        to_router.stdout.contains("1 received"),
        "h2 -> fibre's own address: {}",
        to_router.stdout
    );
    assert!(
        ttl_1.stdout.contains("From 10.0.1.1") && ttl_1.stdout.contains("Time to live exceeded"),
        "TTL 1 through fibre: {}",
        ttl_1.stdout
    );
    assert!(
        unresolved.stdout.contains("From 10.0.1.1")
            && unresolved.stdout.contains("Destination Host Unreachable"),
        "h1 -> 10.0.2.99, which nobody has: {}\nfibre: {rest}",
        unresolved.stdout
    );
    assert!(status.success(), "fibre serve exit: {status:?}\n{rest}");
    assert!(rest.contains("stopped; received"), "{rest}");
}
