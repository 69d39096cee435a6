//! The router's random configuration, written once as `ip -batch` lines
//! that both sides are given: the kernel router runs them with
//! `ip -n ROUTER -batch -`, fibre parses them with its configuration
//! parser (`neigh` lines become fibre's static neighbour map).
//!
//! ```text
//!  sender ns            router ns                    receiver ns K
//!  s0 --------------- r0 10.0.0.1/24 2001:db8::1/64
//!                     rK 10.0.K.1/24 2001:db8:K::1/64 ----- cK
//! ```
//!
//! Every address a packet can be sent to on a link, by forwarding or as
//! an ICMP error, is a static neighbour (`nud permanent`): the sender's
//! hosts `10.0.0.2-9` and `2001:db8::2-9` (and `fe80::2-9`) on r0, the
//! hosts and gateways `10.0.K.2-9` and `2001:db8:K::2-9` on rK, so that
//! the kernel never solicits (dynamic neighbours are another test's):
//! no frame from a link-local source comes in on rK, where it would be
//! redirected to an `fe80::h` that is no neighbour there
//! (`same_link_source_v6` in `frames.rs`).
//! Routes leave only through gateways, never `dev rK` alone, for the same
//! reason. Nothing but the sender's own subnet is routed back out of r0:
//! IPv6 sends a redirect for that (`ip6_forward`, rate-limited per peer,
//! so timing-dependent; the frames that get one are counted out in
//! `frames.rs`, `same_link_v6`); IPv4's are off (`send_redirects` 0).
//!
//! The frames' sources are drawn from a block routed back to the sender
//! ([`SOURCES_V4`], [`SOURCES_V6`]), a fresh address for nearly every
//! frame: `ip_error` limits its unreachable errors per source
//! (`ip_rt_error_cost`, `ip_rt_error_burst`: 5, then one a second), and
//! those limits are global sysctls a namespace cannot turn off, so a
//! source used more than five times would make the run depend on time.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::rng::Rng;

/// Lowest and highest host number on every link that is a static
/// neighbour (hosts, gateways).
pub const HOSTS: std::ops::RangeInclusive<u8> = 2..=9;

/// The MTUs receiver links may get: equal to the sender's, smaller (so
/// that forwarded packets need fragmentation or are too big), and under
/// IPv6's minimum (1280: no IPv6 on that link, in the kernel and in
/// fibre's model alike).
const RECEIVER_MTUS: [u32; 4] = [1500, 1400, 1280, 1000];

/// One router link: r0 faces the sender, the others a receiver each.
#[derive(Debug, Clone)]
pub struct LinkPlan {
    /// `r0`, `r1`, ...
    pub name: String,
    /// The peer's name in its namespace: `s0` or `cK`.
    pub peer: String,
    /// The MTU of the router's end.
    pub mtu: u32,
    /// The router end's MAC: fibre's model MAC for the index its model
    /// gives this link (see [`model_index`]), so that both sides derive
    /// the same IPv6 link-local address.
    pub mac: [u8; 6],
    /// The peer's MAC (fixed, so that the neighbour lines can be written
    /// before the links exist).
    pub peer_mac: [u8; 6],
}

impl LinkPlan {
    /// IPv6 runs on it (IPV6_MIN_MTU).
    pub fn has_ipv6(&self) -> bool {
        self.mtu >= 1280
    }
}

/// A route's kind and where it leads, to pick destinations by.
#[derive(Debug, Clone)]
pub struct RoutePlan {
    /// `unicast`, `unreachable`, `prohibit`, `blackhole`, `throw`.
    pub kind: &'static str,
    /// Network address bits (IPv4 in the low 32 bits) and prefix length.
    pub prefix: (u128, u8),
    /// IPv6 or IPv4.
    pub v6: bool,
}

/// The whole configuration and what frames can be aimed at.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The seed it came from.
    pub seed: u64,
    /// r0 (the sender's) first, then the receivers'.
    pub links: Vec<LinkPlan>,
    /// `rp_filter` for `all` and every link (0, 1 or 2).
    pub rp_filter: u8,
    /// The lines fibre's model needs to have the links the kernel router
    /// has (veth pairs whose peers live in other namespaces there: here
    /// `pK`, in fibre's one namespace, up so that `rK` has carrier).
    pub model_lines: Vec<String>,
    /// The lines given to both: links' MTUs and state, addresses,
    /// neighbours, routes, rules.
    pub lines: Vec<String>,
    /// Routes made, to aim frames at.
    pub routes: Vec<RoutePlan>,
}

/// fibre's model index of router link `i` after [`Plan::model_lines`]:
/// `lo` is 1, each veth's peer is registered before it (`pK` 2K+2, `rK`
/// 2K+3), as `fibre-fib/src/write/links.rs` documents.
pub fn model_index(i: usize) -> u32 {
    2 * i as u32 + 3
}

/// fibre's model MAC of a link index (`model_mac` in
/// `fibre-fib/src/write/links.rs`: `02:fb` and the index, big-endian).
pub fn model_mac(index: u32) -> [u8; 6] {
    let b = index.to_be_bytes();
    [0x02, 0xfb, b[0], b[1], b[2], b[3]]
}

/// `aa:bb:..`.
pub fn mac_text(mac: [u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The router's IPv4 address on link `k`.
pub fn router_v4(k: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, k as u8, 1)
}

/// The router's IPv6 address on link `k`.
pub fn router_v6(k: usize) -> Ipv6Addr {
    Ipv6Addr::new(0x2001, 0xdb8, k as u16, 0, 0, 0, 0, 1)
}

/// Host `h` on link `k` (IPv4).
pub fn host_v4(k: usize, h: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, k as u8, h)
}

/// Host `h` on link `k` (IPv6).
pub fn host_v6(k: usize, h: u8) -> Ipv6Addr {
    Ipv6Addr::new(0x2001, 0xdb8, k as u16, 0, 0, 0, 0, u16::from(h))
}

/// The link-local address the sender's host `h` uses (a static
/// neighbour on r0, for errors answering link-local sources).
pub fn sender_link_local(h: u8) -> Ipv6Addr {
    Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, u16::from(h))
}

/// The block the frames' IPv4 sources come from, routed back via the
/// sender's host 2 (`route add 100.64.0.0/16 via 10.0.0.2`).
pub const SOURCES_V4: (u32, u8) = (0x6440_0000, 16);
/// The IPv6 one (`route add 2001:db8:4000::/64 via 2001:db8::2`).
pub const SOURCES_V6: (u128, u8) = (0x2001_0db8_4000_0000_0000_0000_0000_0000, 64);

/// IPv4 routes are drawn inside 172.16.0.0/12, IPv6 ones inside
/// 2001:db8:8000::/33: nothing else the plan uses overlaps them.
const POOL_V4: (u128, u8) = (0xac10_0000, 12);
const POOL_V6: (u128, u8) = (0x2001_0db8_8000_0000_0000_0000_0000_0000, 33);

/// A random prefix of length `len` inside `pool`.
fn prefix_in(rng: &mut Rng, pool: (u128, u8), len: u8, bits: u8) -> u128 {
    let span = len - pool.1;
    let chosen = if span == 0 {
        0
    } else {
        rng.next_u128() & ((1u128 << span) - 1)
    };
    pool.0 | (chosen << (bits - len))
}

fn render_prefix(prefix: (u128, u8), v6: bool) -> String {
    if v6 {
        format!("{}/{}", Ipv6Addr::from(prefix.0), prefix.1)
    } else {
        format!("{}/{}", Ipv4Addr::from(prefix.0 as u32), prefix.1)
    }
}

/// The configuration for `seed`, with `receivers` (1 to 3) receiver
/// links when given, else a random number of them.
pub fn plan(seed: u64) -> Plan {
    let mut rng = Rng::new(seed);
    let receivers = rng.range(1, 3) as usize;
    let mut links = Vec::new();
    for i in 0..=receivers {
        let mtu = if i == 0 {
            1500
        } else {
            *rng.pick(&RECEIVER_MTUS)
        };
        links.push(LinkPlan {
            name: format!("r{i}"),
            peer: if i == 0 {
                "s0".to_string()
            } else {
                format!("c{i}")
            },
            mtu,
            mac: model_mac(model_index(i)),
            peer_mac: [0x02, 0xfc, 0, 0, 0, i as u8],
        });
    }
    let rp_filter = rng.below(3) as u8;
    let mut lines = vec!["link set lo up".to_string()];
    for link in &links {
        if link.mtu != 1500 {
            lines.push(format!("link set {} mtu {}", link.name, link.mtu));
        }
        lines.push(format!("link set {} up", link.name));
    }
    for (k, link) in links.iter().enumerate() {
        lines.push(format!("addr add {}/24 dev {}", router_v4(k), link.name));
        if link.has_ipv6() {
            lines.push(format!(
                "addr add {}/64 dev {} nodad",
                router_v6(k),
                link.name
            ));
        }
    }
    for (k, link) in links.iter().enumerate() {
        let mac = mac_text(link.peer_mac);
        for h in HOSTS {
            lines.push(format!(
                "neigh add {} lladdr {mac} dev {} nud permanent",
                host_v4(k, h),
                link.name
            ));
            if link.has_ipv6() {
                lines.push(format!(
                    "neigh add {} lladdr {mac} dev {} nud permanent",
                    host_v6(k, h),
                    link.name
                ));
            }
            if k == 0 {
                lines.push(format!(
                    "neigh add {} lladdr {mac} dev {} nud permanent",
                    sender_link_local(h),
                    link.name
                ));
            }
        }
    }
    lines.push(format!(
        "route add {}/{} via {}",
        Ipv4Addr::from(SOURCES_V4.0),
        SOURCES_V4.1,
        host_v4(0, 2)
    ));
    lines.push(format!(
        "route add {}/{} via {}",
        Ipv6Addr::from(SOURCES_V6.0),
        SOURCES_V6.1,
        host_v6(0, 2)
    ));
    let mut routes = Vec::new();
    let v6_receivers: Vec<usize> = (1..links.len()).filter(|&k| links[k].has_ipv6()).collect();
    for v6 in [false, true] {
        if v6 && v6_receivers.is_empty() {
            continue;
        }
        let (pool, bits, lengths) = if v6 {
            (POOL_V6, 128, (36, 64))
        } else {
            (POOL_V4, 32, (12, 28))
        };
        let count = rng.range(15, 30);
        for _ in 0..count {
            let len = rng.range(lengths.0, lengths.1) as u8;
            let prefix = (prefix_in(&mut rng, pool, len, bits), len);
            let kind = match rng.below(100) {
                0..=54 => "unicast",
                55..=66 => "unreachable",
                67..=78 => "prohibit",
                79..=90 => "blackhole",
                _ => "throw",
            };
            let text = render_prefix(prefix, v6);
            let line = if kind == "unicast" {
                let k = if v6 {
                    *rng.pick(&v6_receivers)
                } else {
                    rng.range(1, receivers as u64) as usize
                };
                let gateway = rng.range(u64::from(*HOSTS.start()), u64::from(*HOSTS.end())) as u8;
                let via = if v6 {
                    host_v6(k, gateway).to_string()
                } else {
                    host_v4(k, gateway).to_string()
                };
                format!("route add {text} via {via}")
            } else {
                format!("route add {kind} {text}")
            };
            if !lines.contains(&line)
                && !routes
                    .iter()
                    .any(|r: &RoutePlan| r.prefix == prefix && r.v6 == v6)
            {
                lines.push(line);
                routes.push(RoutePlan { kind, prefix, v6 });
            }
        }
        // A default route half the time: without it, destinations
        // outside every prefix have no route (net unreachable).
        if rng.chance(50) {
            let k = if v6 {
                *rng.pick(&v6_receivers)
            } else {
                rng.range(1, receivers as u64) as usize
            };
            let via = if v6 {
                host_v6(k, 2).to_string()
            } else {
                host_v4(k, 2).to_string()
            };
            lines.push(format!("route add default via {via}"));
        }
        // A table of its own for an eighth of the sources, where
        // `throw` sends the lookup on to the next rule, and a prohibit
        // rule for a 32nd of them.
        // `ip rule` takes its family from `-6`, not from the address.
        let flag = if v6 { "-6 " } else { "" };
        let (from, prohibited) = if v6 {
            (
                "2001:db8:4000:0:e000::/67".to_string(),
                "2001:db8:4000:0:c000::/69".to_string(),
            )
        } else {
            ("100.64.224.0/19".to_string(), "100.64.192.0/21".to_string())
        };
        lines.push(format!("{flag}rule add from {from} lookup 100 pref 1000"));
        if rng.chance(50) {
            lines.push(format!(
                "{flag}rule add from {prohibited} prohibit pref 900"
            ));
        }
        for r in routes
            .iter()
            .filter(|r| r.v6 == v6)
            .take(6)
            .cloned()
            .collect::<Vec<_>>()
        {
            let text = render_prefix(r.prefix, v6);
            let kind = *rng.pick(&["throw", "blackhole", "unreachable"]);
            lines.push(format!("route add {kind} {text} table 100"));
        }
    }
    let mut plan = Plan::from_parts(seed, links, rp_filter, lines);
    plan.routes = routes;
    plan
}

impl Plan {
    /// A plan of these links, rp_filter and lines (no routes to aim at),
    /// with fibre's link model lines for the links.
    pub fn from_parts(seed: u64, links: Vec<LinkPlan>, rp_filter: u8, lines: Vec<String>) -> Plan {
        let mut model_lines = Vec::new();
        for (i, link) in links.iter().enumerate() {
            model_lines.push(format!("link add {} type veth peer name p{i}", link.name));
            model_lines.push(format!("link set p{i} up"));
        }
        Plan {
            seed,
            links,
            rp_filter,
            model_lines,
            lines,
            routes: Vec::new(),
        }
    }
}
