//! The namespaces: a sender, the router (a plain Linux kernel) and one
//! receiver per further router link, joined by veth pairs, all named
//! `fibre-fwd-<pid>-<role>` and deleted on drop (also on panic).
//!
//! The sender and receivers are no hosts: no addresses and IPv6 off, so
//! that their kernels send nothing of their own (no router solicitation,
//! MLD or port unreachable) into the capture. The router forwards with
//! the ICMP rate limits off (`icmp_ratelimit` 0, `icmp_msgs_per_sec` and
//! `icmp_msgs_burst` far above any run, IPv6 `icmp/ratelimit` 0), so that
//! every error the kernel would send is sent and a run is deterministic;
//! IPv4 redirects off (`send_redirects` 0: `ip_rt_send_redirect` backs off
//! by time); DAD off.

use std::time::Duration;

use super::netns::Namespace;
use super::plan::{mac_text, Plan};

/// The prefix of every namespace this test makes.
const PREFIX: &str = "fibre-fwd";

/// Topologies made by this process so far: tests run in parallel threads
/// of one process, so each topology's names carry its own number
/// (`fibre-fwd-<pid>-<n><role>`).
static TOPOLOGIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The sender's and receivers' settings: nothing of their own on the wire.
const HOST_SYSCTLS: &[(&str, &str)] = &[
    ("net/ipv6/conf/all/disable_ipv6", "1"),
    ("net/ipv6/conf/default/disable_ipv6", "1"),
];

/// A router link as the kernel made it.
#[derive(Debug, Clone)]
pub struct KernelLink {
    /// Its name (`rK`).
    pub name: String,
    /// Its MAC, read back from the kernel.
    pub mac: [u8; 6],
    /// Its MTU, read back.
    pub mtu: u32,
}

/// The namespaces, deleted on drop.
#[derive(Debug)]
pub struct Topology {
    /// Where frames are injected, on `s0`.
    pub sender: Namespace,
    /// The kernel router.
    pub router: Namespace,
    /// Receiver K-1 holds `cK`, the peer of router link `rK`.
    pub receivers: Vec<Namespace>,
    /// The router's links, `r0` first, as the kernel reports them.
    pub links: Vec<KernelLink>,
}

impl Topology {
    /// Makes the namespaces and links and loads the plan into the router;
    /// every line must be accepted.
    pub fn build(plan: &Plan) -> Result<Topology, String> {
        let rp = plan.rp_filter.to_string();
        let router_sysctls: Vec<(&str, &str)> = vec![
            ("net/ipv4/ip_forward", "1"),
            ("net/ipv4/conf/all/rp_filter", &rp),
            ("net/ipv4/conf/default/rp_filter", &rp),
            ("net/ipv4/conf/all/send_redirects", "0"),
            ("net/ipv4/conf/default/send_redirects", "0"),
            ("net/ipv4/icmp_ratelimit", "0"),
            ("net/ipv4/icmp_msgs_per_sec", "100000000"),
            ("net/ipv4/icmp_msgs_burst", "100000000"),
            ("net/ipv6/icmp/ratelimit", "0"),
            ("net/ipv6/conf/all/forwarding", "1"),
            ("net/ipv6/conf/default/forwarding", "1"),
            ("net/ipv6/conf/all/accept_dad", "0"),
            ("net/ipv6/conf/default/accept_dad", "0"),
        ];
        let n = TOPOLOGIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let sender = Namespace::create(PREFIX, &format!("{n}s"), HOST_SYSCTLS)?;
        let router = Namespace::create(PREFIX, &format!("{n}r"), &router_sysctls)?;
        let mut receivers = Vec::new();
        for k in 1..plan.links.len() {
            receivers.push(Namespace::create(
                PREFIX,
                &format!("{n}c{k}"),
                HOST_SYSCTLS,
            )?);
        }
        let mut topology = Topology {
            sender,
            router,
            receivers,
            links: Vec::new(),
        };
        for (k, link) in plan.links.iter().enumerate() {
            let peer_ns = if k == 0 {
                &topology.sender
            } else {
                &topology.receivers[k - 1]
            };
            let mac = mac_text(link.mac);
            let peer_mac = mac_text(link.peer_mac);
            topology.router.ip(&[
                "link",
                "add",
                &link.name,
                "address",
                &mac,
                "type",
                "veth",
                "peer",
                "name",
                &link.peer,
                "address",
                &peer_mac,
                "netns",
                peer_ns.name(),
            ])?;
            peer_ns.ip(&["link", "set", &link.peer, "up"])?;
        }
        topology.router.batch(&plan.lines)?;
        topology.links = plan
            .links
            .iter()
            .map(|l| topology.read_link(&l.name))
            .collect::<Result<_, _>>()?;
        for (planned, made) in plan.links.iter().zip(&topology.links) {
            if planned.mac != made.mac || planned.mtu != made.mtu {
                return Err(format!(
                    "router link {}: the kernel has MAC {} MTU {}, the plan {} {}",
                    made.name,
                    mac_text(made.mac),
                    made.mtu,
                    mac_text(planned.mac),
                    planned.mtu
                ));
            }
        }
        topology.wait_for_carrier(plan)?;
        Ok(topology)
    }

    /// A router link's index, MAC and MTU, from `ip -j link show`.
    fn read_link(&self, name: &str) -> Result<KernelLink, String> {
        let shown = self.router.ip(&["-j", "link", "show", "dev", name])?;
        let json: serde_json::Value = serde_json::from_str(shown.trim())
            .map_err(|e| format!("ip -j link show {name}: {e}"))?;
        let link = &json[0];
        let mac_text = link["address"].as_str().unwrap_or("");
        let mut mac = [0u8; 6];
        for (byte, part) in mac.iter_mut().zip(mac_text.split(':')) {
            *byte =
                u8::from_str_radix(part, 16).map_err(|e| format!("{name} MAC {mac_text}: {e}"))?;
        }
        Ok(KernelLink {
            name: name.to_string(),
            mac,
            mtu: link["mtu"].as_u64().unwrap_or(0) as u32,
        })
    }

    /// Waits (at most 5 s) until every router link is `UP` with carrier
    /// (`LOWER_UP`): a veth's carrier follows its peer's state.
    fn wait_for_carrier(&self, plan: &Plan) -> Result<(), String> {
        for _ in 0..500 {
            let shown = self.router.ip(&["-j", "link", "show"])?;
            let json: serde_json::Value =
                serde_json::from_str(shown.trim()).map_err(|e| format!("ip -j link show: {e}"))?;
            let ready = plan.links.iter().all(|l| {
                json.as_array().into_iter().flatten().any(|j| {
                    j["ifname"] == l.name.as_str()
                        && j["flags"]
                            .as_array()
                            .is_some_and(|f| f.iter().any(|x| x == "LOWER_UP"))
                })
            });
            if ready {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Err("router links without carrier after 5 s".to_string())
    }

    /// Where the peer of router link `k` lives.
    pub fn peer_namespace(&self, k: usize) -> &Namespace {
        if k == 0 {
            &self.sender
        } else {
            &self.receivers[k - 1]
        }
    }
}
