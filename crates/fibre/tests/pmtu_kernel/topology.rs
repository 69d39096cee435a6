//! The three namespaces: host A, router R, host C, joined by veth pairs.
//!
//! ```text
//!  A                       R                          C
//!  a0 ---------------- ra                             (MTU 1500)
//!  10.0.1.2/24             10.0.1.1/24
//!  2001:db8:1::2/64        2001:db8:1::1/64
//!                          rc ------------------- c0  (MTU 1300)
//!                          10.0.2.1/24            10.0.2.2/24
//!                          2001:db8:2::1/64       2001:db8:2::2/64
//!                          rd ------------------- c1  (MTU 500, IPv4 only:
//!                          10.0.3.1/24            10.0.3.2/24   IPv6 needs 1280)
//! ```
//!
//! A sends 1428-byte (IPv4) and 1448-byte (IPv6) pings with DF towards C;
//! R cannot forward them and answers with fragmentation-needed (MTU 1300
//! and 500) and packet-too-big (MTU 1300). A's kernel records the route
//! exceptions: 1300, and 552 locked for the 500 (its `min_pmtu` clamp).

use std::time::Duration;

use super::kernel;
use super::netns::Namespace;

/// Set in every namespace before any link exists, so that every link
/// inherits them. Forwarding is on everywhere because fibre's model is a
/// router (`fibre-fib/src/write/links.rs`): host A must be one too for its
/// answers to be comparable. DAD is off so that IPv6 addresses work at
/// once, and rp_filter off as in kernel_diff's namespaces.
const SYSCTLS: &[(&str, &str)] = &[
    ("net/ipv4/ip_forward", "1"),
    ("net/ipv4/conf/all/rp_filter", "0"),
    ("net/ipv4/conf/default/rp_filter", "0"),
    ("net/ipv6/conf/all/forwarding", "1"),
    ("net/ipv6/conf/default/forwarding", "1"),
    ("net/ipv6/conf/all/accept_dad", "0"),
    ("net/ipv6/conf/default/accept_dad", "0"),
];

/// The namespace `fibre-pmtu-<pid>-<role>`, with [`SYSCTLS`].
pub fn namespace(role: &str) -> Result<Namespace, String> {
    Namespace::create("fibre-pmtu", role, SYSCTLS)
}

/// A's link towards R.
pub const A_DEV: &str = "a0";

/// The index fibre's model gives `a0` when told [`A_LINK_MODEL`]: `lo` is
/// 1, a veth's peer is registered before it (2), then `a0` (3). The
/// kernel's `a0` gets the MAC fibre's model derives from that index, so
/// that both sides have the same IPv6 link-local address.
const A_MODEL_INDEX: u32 = 3;

/// How fibre is told about A's link, which the kernel gets from R's side
/// (a veth whose peer `ra` lives in R, up there).
const A_LINK_MODEL: &[&str] = &["link add a0 type veth peer name ra", "link set ra up"];

/// A's configuration, given to A's kernel (`ip -batch`) and to fibre alike.
const A_CONFIG: &[&str] = &[
    "link set lo up",
    "link set a0 up",
    "addr add 10.0.1.2/24 dev a0",
    "addr add 2001:db8:1::2/64 dev a0 nodad",
    "route add default via 10.0.1.1",
    "route add default via 2001:db8:1::1",
];

const R_CONFIG: &[&str] = &[
    "link set lo up",
    "link set ra up",
    "link set rc up",
    "link set rd up",
    "addr add 10.0.1.1/24 dev ra",
    "addr add 2001:db8:1::1/64 dev ra nodad",
    "addr add 10.0.2.1/24 dev rc",
    "addr add 2001:db8:2::1/64 dev rc nodad",
    "addr add 10.0.3.1/24 dev rd",
];

const C_CONFIG: &[&str] = &[
    "link set lo up",
    "link set c0 up",
    "link set c1 up",
    "addr add 10.0.2.2/24 dev c0",
    "addr add 2001:db8:2::2/64 dev c0 nodad",
    "addr add 10.0.3.2/24 dev c1",
    "route add default via 10.0.2.1",
    "route add default via 2001:db8:2::1",
];

/// One ping from A that R must refuse, and what ping must then report.
#[derive(Debug, Clone, Copy)]
pub struct Probe {
    /// Destination in C.
    pub dst: &'static str,
    /// `-6` or nothing.
    pub family: Option<&'static str>,
    /// What ping prints about R's ICMP error.
    pub error: &'static str,
    /// The MTU in that error, as tshark reads it from the capture.
    pub mtu: u32,
}

/// The pings, 1400 bytes of payload each, with DF.
pub const PROBES: &[Probe] = &[
    Probe {
        dst: "10.0.2.2",
        family: None,
        error: "Frag needed and DF set (mtu = 1300)",
        mtu: 1300,
    },
    Probe {
        dst: "10.0.3.2",
        family: None,
        error: "Frag needed and DF set (mtu = 500)",
        mtu: 500,
    },
    Probe {
        dst: "2001:db8:2::2",
        family: Some("-6"),
        error: "Packet too big: mtu=1300",
        mtu: 1300,
    },
];

/// What A captures: its echo requests and the errors they get, nothing
/// else (neither neighbour discovery nor MLD, whose packets come and go
/// with timing), so that exactly [`CAPTURED`] packets come.
pub const CAPTURE_FILTER: &str = "icmp[icmptype] == icmp-echo or icmp[icmptype] == icmp-unreach \
    or icmp6[icmp6type] == icmp6-echo or icmp6[icmp6type] == icmp6-packettoobig";

/// Packets A captures: each probe's echo request and R's error.
pub const CAPTURED: usize = 2 * PROBES.len();

/// Limit for one ping: `-W 1` bounds its wait, this the whole process.
const PING_LIMIT: Duration = Duration::from_secs(10);

/// The namespaces, deleted on drop.
#[derive(Debug)]
pub struct Topology {
    /// Host A, where the capture and the kernel's answers are taken.
    pub a: Namespace,
    /// Router R.
    pub r: Namespace,
    /// Host C.
    pub c: Namespace,
}

impl Topology {
    /// Makes the namespaces, links and addresses.
    pub fn build() -> Result<Topology, String> {
        let topology = Topology {
            a: namespace("a")?,
            r: namespace("r")?,
            c: namespace("c")?,
        };
        let (a, r, c) = (&topology.a, &topology.r, &topology.c);
        let a_mac = kernel::model_mac(A_MODEL_INDEX);
        r.ip(&[
            "link",
            "add",
            "ra",
            "type",
            "veth",
            "peer",
            "name",
            "a0",
            "address",
            &a_mac,
            "netns",
            a.name(),
        ])?;
        for (here, there, mtu) in [("rc", "c0", "1300"), ("rd", "c1", "500")] {
            r.ip(&[
                "link",
                "add",
                here,
                "mtu",
                mtu,
                "type",
                "veth",
                "peer",
                "name",
                there,
                "mtu",
                mtu,
                "netns",
                c.name(),
            ])?;
        }
        a.batch(A_CONFIG)?;
        r.batch(R_CONFIG)?;
        c.batch(C_CONFIG)?;
        Ok(topology)
    }

    /// Sends every [`PROBES`] ping from A and checks that R refused it
    /// with the expected error (so that A's kernel has its exception).
    pub fn provoke(&self) -> Result<(), String> {
        for probe in PROBES {
            let mut args: Vec<&str> = probe.family.into_iter().collect();
            args.extend(["-M", "do", "-s", "1400", "-c", "1", "-W", "1", probe.dst]);
            let done = self.a.exec("ping", &args, PING_LIMIT)?;
            if !done.stdout.contains(probe.error) {
                return Err(format!(
                    "ping {} from A: expected R's \"{}\", got (exit {:?}):\n{}{}",
                    args.join(" "),
                    probe.error,
                    done.code,
                    done.stdout,
                    done.stderr
                ));
            }
        }
        Ok(())
    }
}

/// A's configuration as fibre is told it: [`A_LINK_MODEL`], then what
/// A's kernel was given.
pub fn host_config() -> Vec<String> {
    A_LINK_MODEL
        .iter()
        .chain(A_CONFIG)
        .map(|l| (*l).to_string())
        .collect()
}
