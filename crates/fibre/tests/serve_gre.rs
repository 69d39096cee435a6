//! Two `fibre serve` routers joined by a GRE tunnel (RFC 2784) over a veth
//! underlay: h1 -- [fibre A] == gre over veth == [fibre B] -- h2. The
//! hosts' kernels ping each other across both routers, so every echo is
//! encapsulated by one fibre worker and decapsulated by the other, both
//! ways; the kernel here has no GRE module, so nothing but fibre speaks
//! GRE in this test. Then a ping with TTL 2 dies in B (after A and the
//! tunnel), and B's time exceeded comes back through the tunnel.
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
use std::process::{Child, Stdio};

use netns::Namespace;
use serve::{ping, stop_by_sigterm, ROUTER_SYSCTLS};

const ROUTER_A: &str = "link add r0 type veth peer name x0
link set r0 up
addr add 10.0.1.1/24 dev r0
link add u0 type veth peer name y0
link set u0 up
addr add 192.0.2.1/30 dev u0
link add gt0 type gre remote 192.0.2.2 local 192.0.2.1 ttl 64
link set gt0 up
addr add 10.255.0.1/30 dev gt0
route add 10.0.2.0/24 via 10.255.0.2 dev gt0
";

const ROUTER_B: &str = "link add r1 type veth peer name x1
link set r1 up
addr add 10.0.2.1/24 dev r1
link add u1 type veth peer name y1
link set u1 up
addr add 192.0.2.2/30 dev u1
link add gt0 type gre remote 192.0.2.1 local 192.0.2.2 ttl 64
link set gt0 up
addr add 10.255.0.2/30 dev gt0
route add 10.0.1.0/24 via 10.255.0.1 dev gt0
";

/// h1 (10.0.1.2) -- r0 [A] u0 -- u1 [B] r1 -- h2 (10.0.2.2).
fn topology() -> Result<[Namespace; 4], String> {
    let host_sysctls = [("net/ipv6/conf/all/disable_ipv6", "1")];
    let h1 = Namespace::create("fsg", "h1", &host_sysctls)?;
    let a = Namespace::create("fsg", "a", ROUTER_SYSCTLS)?;
    let b = Namespace::create("fsg", "b", ROUTER_SYSCTLS)?;
    let h2 = Namespace::create("fsg", "h2", &host_sysctls)?;
    for (host, router, inside, outside, subnet) in
        [(&h1, &a, "h1", "r0", 1), (&h2, &b, "h2", "r1", 2)]
    {
        host.ip(&[
            "link", "add", inside, "type", "veth", "peer", "name", outside,
        ])?;
        host.ip(&["link", "set", outside, "netns", router.name()])?;
        host.ip(&["addr", "add", &format!("10.0.{subnet}.2/24"), "dev", inside])?;
        host.ip(&["link", "set", inside, "up"])?;
        host.ip(&[
            "route",
            "add",
            "default",
            "via",
            &format!("10.0.{subnet}.1"),
        ])?;
        router.ip(&["link", "set", outside, "up"])?;
    }
    a.ip(&["link", "add", "u0", "type", "veth", "peer", "name", "u1"])?;
    a.ip(&["link", "set", "u1", "netns", b.name()])?;
    a.ip(&["link", "set", "u0", "up"])?;
    b.ip(&["link", "set", "u1", "up"])?;
    Ok([h1, a, b, h2])
}

/// Starts `fibre serve` in `router` on `ports` with `config`; returns it
/// once it says it forwards, with its stderr to read the rest of.
fn serve(
    router: &Namespace,
    dir: &std::path::Path,
    name: &str,
    config: &str,
    ports: [&str; 2],
) -> (Child, BufReader<std::process::ChildStderr>) {
    let path = dir.join(format!("{name}.conf"));
    std::fs::write(&path, config).unwrap();
    let socket = dir.join(format!("{name}.sock"));
    let mut child = router
        .command(
            env!("CARGO_BIN_EXE_fibre"),
            &[
                "--config",
                path.to_str().unwrap(),
                "serve",
                "--port",
                ports[0],
                "--port",
                ports[1],
                "--workers",
                "1",
                "--seconds",
                "60",
                "--socket",
                socket.to_str().unwrap(),
            ],
        )
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("fibre serve starts");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    assert!(first.contains("forwarding on"), "{name}: {first}");
    (child, stderr)
}

/// SIGTERM to the pid we started; its exit status and the rest of stderr.
fn stop(mut child: Child, mut stderr: BufReader<std::process::ChildStderr>) -> String {
    let status = stop_by_sigterm(&mut child);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert!(status.success(), "fibre serve exit: {status:?}\n{rest}");
    rest
}

#[test]
fn two_fibre_routers_forward_through_a_gre_tunnel_between_them() {
    if let Some(reason) = serve::unavailable_reason(&["ip", "ping"]) {
        fibre_testkit::unavailable(
            "two_fibre_routers_forward_through_a_gre_tunnel_between_them",
            &reason,
        );
        return;
    }
    let [h1, a, b, h2] = topology().expect("the namespaces are made");
    let dir = std::env::temp_dir().join(format!("fibre-serve-gre-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (router_a, stderr_a) = serve(&a, &dir, "a", ROUTER_A, ["r0", "u0"]);
    let (router_b, stderr_b) = serve(&b, &dir, "b", ROUTER_B, ["u1", "r1"]);

    let across = ping(&h1, &["-c", "3", "-i", "0.2", "-W", "2", "10.0.2.2"]);
    let back = ping(&h2, &["-c", "2", "-i", "0.2", "-W", "2", "10.0.1.2"]);
    let far_end = ping(&h1, &["-c", "1", "-W", "2", "10.255.0.2"]);
    let ttl_2 = ping(&h1, &["-c", "1", "-W", "2", "-t", "2", "10.0.2.2"]);

    let rest_a = stop(router_a, stderr_a);
    let rest_b = stop(router_b, stderr_b);
    let _ = std::fs::remove_dir_all(&dir);
    drop((h1, a, b, h2));
    let routers = format!("fibre A: {rest_a}\nfibre B: {rest_b}");
    assert!(
        across.stdout.contains("3 packets transmitted, 3 received"),
        "h1 -> h2 through the tunnel: {}{}\n{routers}",
        across.stdout,
        across.stderr
    );
    assert!(
        back.stdout.contains("2 packets transmitted, 2 received"),
        "h2 -> h1 through the tunnel: {}\n{routers}",
        back.stdout
    );
    assert!(
        far_end.stdout.contains("1 received"),
        "h1 -> B's tunnel address: {}\n{routers}",
        far_end.stdout
    );
    assert!(
        ttl_2.stdout.contains("From 10.255.0.2") && ttl_2.stdout.contains("Time to live exceeded"),
        "TTL 2 dies in B, whose error comes back through the tunnel: {}\n{routers}",
        ttl_2.stdout
    );
}
