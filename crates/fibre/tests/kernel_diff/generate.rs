//! The seeded random configuration and query generator.
//!
//! A configuration is `ip -batch` text without the leading `ip`: a few `ifb`
//! links (some never up, some taken down late), nested IPv4/IPv6 addresses,
//! routes of every type in several tables (duplicates with other metrics and
//! TOS, ECMP, onlink, replace/append/del), and policy rules including
//! wg-quick's pair. Some lines are meant to be refused: both sides must
//! refuse the same ones, and `-force` skips them.
//!
//! Queries follow `ip route get`'s grammar without `route get`: the input
//! form `DST from SRC iif DEV [mark M] [tos T] [ipproto P sport S dport D]`
//! and the output form `DST [from SRC] [oif DEV] [mark M] [tos T] [ipproto
//! P sport S dport D]`, with destinations picked at
//! and around the edges of every configured prefix.

use std::net::IpAddr;

use super::addr;
use super::rng::Rng;

/// Tables routes and rules use, besides main.
const TABLES: &[&str] = &["100", "101", "200", "51820", "main", "local", "default"];
/// TOS values routes, rules and queries use.
const TOS_VALUES: &[u8] = &[0x04, 0x08, 0x10, 0x18];
/// IPv6 traffic classes for queries and rules: the IPv4 values and DSCPs
/// beyond the old TOS bits (IPv6 rules match the whole DSCP).
const TCLASS_VALUES: &[u8] = &[0x04, 0x08, 0x10, 0x18, 0x20, 0xb8];
/// Transport protocols a query may name, with ports (the kernel namespace
/// hashes ECMP flows by L4, fibre's answer must still be a live path).
const IPPROTOS: &[&str] = &["tcp", "udp", "sctp", "icmp", "ipv6-icmp"];
/// Ports rules select and queries ask about, so that some meet.
const PORTS: &[u32] = &[22, 53, 80, 443, 8080];
/// Rules' port ranges (`sport`/`dport`), around [`PORTS`].
const PORT_RANGES: &[&str] = &["53", "80-443", "1-1024", "8000-8100"];
/// Rules' uid ranges, and the uids queries ask for.
const UID_RANGES: &[&str] = &["0-0", "5-10", "1000-2000"];
const UIDS: &[u32] = &[0, 7, 1500];
/// wg-quick's firewall mark and table.
const WG_MARK: u32 = 51820;

/// A prefix as (an address in it, length).
type Pfx = (IpAddr, u32);

/// One generated test case: the configuration and the queries to ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// Configuration lines (`ip -batch` syntax, no leading `ip`).
    pub config: Vec<String>,
    /// Queries (`ip route get` arguments).
    pub queries: Vec<String>,
}

/// What the generator has configured so far, to aim later lines and the
/// queries at it.
#[derive(Debug, Default)]
struct Plan {
    /// (name, admin up) of every link.
    links: Vec<(String, bool)>,
    /// Links that are veth ends (their carrier follows the peer).
    veths: Vec<String>,
    /// (local address, prefix length, link index) per family.
    addrs: Vec<(IpAddr, u32, usize)>,
    /// Prefixes worth aiming queries at (subnets, routes, rule selectors).
    prefixes: Vec<Pfx>,
    /// Gateways used in routes.
    gateways: Vec<IpAddr>,
    /// Rule source prefixes.
    rule_sources: Vec<Pfx>,
    /// Firewall marks rules test.
    marks: Vec<u32>,
    /// (IPv6?, tos) pairs rules test.
    toses: Vec<(bool, u8)>,
    /// Route lines written so far (for `del` and duplicates).
    route_lines: Vec<String>,
}

/// Generates the case for `seed` with `queries` queries: the same seed
/// always gives the same case (see the tests below for what a case holds).
pub fn case(seed: u64, queries: usize) -> Case {
    let mut rng = Rng::new(seed);
    let mut plan = Plan::default();
    let mut config = Vec::new();
    links(&mut rng, &mut plan, &mut config);
    addresses(&mut rng, &mut plan, &mut config);
    let route_count = rng.range(12, 30) as usize;
    for _ in 0..route_count {
        let v6 = rng.chance(45);
        let line = route(&mut rng, &mut plan, v6);
        plan.route_lines.push(line.clone());
        config.push(line);
    }
    if rng.chance(45) {
        wg_quick(&mut rng, &mut plan, &mut config);
    }
    let rule_count = rng.range(0, 8) as usize;
    let mut rules_added = Vec::new();
    for _ in 0..rule_count {
        let v6 = rng.chance(40);
        let line = rule(&mut rng, &mut plan, v6);
        rules_added.push(line.clone());
        config.push(line);
    }
    if rng.chance(35) {
        rule_deletions(&mut rng, &rules_added, &mut config);
    }
    if rng.chance(15) {
        // A link going down late flushes its routes and kills its nexthops.
        let index = rng.below(plan.links.len() as u64) as usize;
        config.push(format!("link set {} down", plan.links[index].0));
        plan.links[index].1 = false;
    }
    let queries = (0..queries).map(|_| query(&mut rng, &plan)).collect();
    Case { config, queries }
}

fn links(rng: &mut Rng, plan: &mut Plan, config: &mut Vec<String>) {
    // A new namespace's `lo` is down; a host's is up. Mostly the latter.
    if rng.chance(92) {
        config.push("link set lo up".to_string());
    }
    let count = rng.range(2, 4) as usize;
    for index in 0..count {
        let name = format!("fd{index}");
        config.push(format!("link add {name} type ifb"));
        let up = index == 0 || rng.chance(80);
        plan.links.push((name, up));
    }
    if rng.chance(15) {
        // A veth pair: up with the peer down is up without carrier, so
        // its routes are `linkdown` but still used.
        config.push("link add fdv0 type veth peer name fdv1".to_string());
        let peer_up = rng.chance(50);
        plan.links.push(("fdv0".to_string(), true));
        plan.links.push(("fdv1".to_string(), peer_up));
        plan.veths.extend(["fdv0".to_string(), "fdv1".to_string()]);
    }
    for (name, up) in &plan.links {
        if *up {
            config.push(format!("link set {name} up"));
        }
    }
}

fn addresses(rng: &mut Rng, plan: &mut Plan, config: &mut Vec<String>) {
    for index in 0..plan.links.len() {
        let name = plan.links[index].0.clone();
        for _ in 0..rng.range(1, 4) {
            let (addr, len) = ipv4_address(rng, index, plan);
            push_address(rng, plan, config, &name, index, addr, len);
        }
        // No IPv6 on veths: without carrier their addresses stay
        // tentative (DAD waits for the link), a timing matter.
        let v6_count = if plan.veths.contains(&name) {
            0
        } else {
            rng.range(1, 3)
        };
        for _ in 0..v6_count {
            let (addr, len) = ipv6_address(rng, index, plan);
            push_address(rng, plan, config, &name, index, addr, len);
        }
    }
}

fn push_address(
    rng: &mut Rng,
    plan: &mut Plan,
    config: &mut Vec<String>,
    dev: &str,
    index: usize,
    addr: IpAddr,
    len: u32,
) {
    let mut line = format!("addr add {addr}/{len} dev {dev}");
    if rng.chance(5) {
        line.push_str(" noprefixroute");
    } else if rng.chance(8) {
        line.push_str(&format!(" metric {}", rng.pick(&[5u32, 50, 300])));
    }
    config.push(line);
    plan.addrs.push((addr, len, index));
    plan.prefixes.push((addr, len));
}

/// An IPv4 address on link `index`: mostly in the link's own 10.N/16,
/// sometimes in another link's (the same subnet on two links), nested by
/// the mix of lengths.
fn ipv4_address(rng: &mut Rng, index: usize, plan: &Plan) -> (IpAddr, u32) {
    let base = if rng.chance(85) || plan.links.len() < 2 {
        index
    } else {
        rng.below(plan.links.len() as u64) as usize
    };
    let len = *rng.pick(&[16u32, 20, 24, 24, 24, 25, 28, 30, 31, 32]);
    let third = *rng.pick(&[0u32, 0, 1, 5, 128]);
    let host = rng.range(1, 254) as u32;
    let value = (10 << 24) | ((base as u32 + 1) << 16) | (third << 8) | host;
    (addr::from_int(false, u128::from(value)), len)
}

/// An IPv6 address on link `index`, in 2001:db8:N::/48.
fn ipv6_address(rng: &mut Rng, index: usize, plan: &Plan) -> (IpAddr, u32) {
    let base = if rng.chance(85) || plan.links.len() < 2 {
        index
    } else {
        rng.below(plan.links.len() as u64) as usize
    };
    let len = *rng.pick(&[48u32, 56, 64, 64, 64, 65, 120, 127, 128]);
    let subnet = u128::from(*rng.pick(&[0u16, 0, 1, 0x80]));
    let host = u128::from(rng.range(1, 0xffff));
    let value = (0x2001_0db8u128 << 96) | ((base as u128 + 1) << 80) | (subnet << 64) | host;
    (addr::from_int(true, value), len)
}

/// A destination prefix: the defaults, test-net ranges, sub- and
/// super-prefixes of what is already configured (nesting and duplicates).
fn destination(rng: &mut Rng, plan: &Plan, v6: bool) -> Pfx {
    let same_family: Vec<Pfx> = plan
        .prefixes
        .iter()
        .copied()
        .filter(|(a, _)| a.is_ipv6() == v6)
        .collect();
    let roll = rng.below(100);
    if roll < 8 {
        return (addr::from_int(v6, 0), 0);
    }
    if roll < 50 && !same_family.is_empty() {
        let (base, len) = *rng.pick(&same_family);
        let max = addr::width(v6);
        let new_len = match rng.below(3) {
            0 => len,
            1 => (len + rng.range(1, 8) as u32).min(max),
            _ => len.saturating_sub(rng.range(1, 8) as u32),
        };
        let host = rng.next_u128();
        let inside = addr::with_host(base, len, host);
        return (addr::first(inside, new_len), new_len);
    }
    if v6 {
        let len = *rng.pick(&[32u32, 40, 48, 48, 56, 64, 96, 128]);
        let value = (0x2001_0db8u128 << 96)
            | (u128::from(rng.range(0xf0, 0xf3) as u16) << 80)
            | rng.next_u128() >> 48;
        let a = addr::from_int(true, value);
        (addr::first(a, len), len)
    } else {
        let len = *rng.pick(&[8u32, 12, 15, 16, 20, 24, 24, 26, 30, 32]);
        let value = (198u32 << 24) | (18 << 16) | (rng.below(1 << 17) as u32);
        let a = addr::from_int(false, u128::from(value));
        (addr::first(a, len), len)
    }
}

/// A gateway: mostly a neighbour inside a configured subnet, sometimes a
/// local address or an address nothing reaches (both refused).
fn gateway(rng: &mut Rng, plan: &Plan, v6: bool) -> (IpAddr, Option<usize>) {
    let candidates: Vec<(IpAddr, u32, usize)> = plan
        .addrs
        .iter()
        .copied()
        .filter(|(a, _, _)| a.is_ipv6() == v6)
        .collect();
    let roll = rng.below(100);
    if roll < 80 && !candidates.is_empty() {
        let (a, len, link) = *rng.pick(&candidates);
        let host = rng.range(1, 300) as u128;
        return (addr::with_host(a, len, host), Some(link));
    }
    if roll < 88 && !candidates.is_empty() {
        let (a, _, link) = *rng.pick(&candidates);
        return (a, Some(link));
    }
    let value = if v6 {
        (0x2001_0db8u128 << 96) | (0xeeu128 << 80) | u128::from(rng.next_u64() as u16)
    } else {
        u128::from((172u32 << 24) | (16 << 16) | rng.below(1 << 12) as u32)
    };
    (addr::from_int(v6, value), None)
}

fn link_name(rng: &mut Rng, plan: &Plan, preferred: Option<usize>) -> String {
    match preferred {
        Some(index) if rng.chance(85) => plan.links[index].0.clone(),
        _ => rng.pick(&plan.links).0.clone(),
    }
}

/// One route line.
fn route(rng: &mut Rng, plan: &mut Plan, v6: bool) -> String {
    if !plan.route_lines.is_empty() && rng.chance(6) {
        return deletion(rng, plan);
    }
    let op = match rng.below(100) {
        0..=79 => "add",
        80..=86 => "replace",
        87..=93 => "append",
        _ => "prepend",
    };
    let kind = match rng.below(100) {
        0..=54 => "unicast",
        55..=62 => "local",
        63..=67 => "broadcast",
        68..=74 => "blackhole",
        75..=81 => "unreachable",
        82..=88 => "prohibit",
        _ => "throw",
    };
    let (dst_addr, len) = destination(rng, plan, v6);
    plan.prefixes.push((dst_addr, len));
    let mut line = format!("route {op} ");
    if kind != "unicast" || rng.chance(5) {
        line.push_str(kind);
        line.push(' ');
    }
    line.push_str(&if len == 0 && rng.chance(50) {
        "default".to_string()
    } else {
        addr::prefix_text(dst_addr, len)
    });
    if !v6 && rng.chance(12) {
        line.push_str(&format!(" tos 0x{:02x}", rng.pick(TOS_VALUES)));
    }
    if rng.chance(45) {
        line.push_str(&format!(" table {}", rng.pick(TABLES)));
    }
    if rng.chance(40) {
        let metric = if v6 {
            *rng.pick(&[1u32, 256, 1024, 2048])
        } else {
            *rng.pick(&[0u32, 1, 5, 10, 100])
        };
        line.push_str(&format!(" metric {metric}"));
    }
    match kind {
        "unicast" => line.push_str(&unicast_nexthops(rng, plan, v6)),
        "local" | "broadcast" => {
            let dev = link_name(rng, plan, None);
            line.push_str(&format!(" dev {dev}"));
        }
        _ => {}
    }
    if kind == "unicast" && rng.chance(8) {
        let locals: Vec<IpAddr> = plan
            .addrs
            .iter()
            .map(|(a, _, _)| *a)
            .filter(|a| a.is_ipv6() == v6)
            .collect();
        if !locals.is_empty() {
            line.push_str(&format!(" src {}", rng.pick(&locals)));
        }
    }
    if kind == "unicast" && rng.chance(10) {
        let lock = if rng.chance(50) { "lock " } else { "" };
        let mtu = if v6 {
            *rng.pick(&[1280u32, 1400, 1500, 9000])
        } else {
            *rng.pick(&[576u32, 1280, 1400, 1500, 9000])
        };
        line.push_str(&format!(" mtu {lock}{mtu}"));
    }
    line
}

/// `via GW [dev D] [onlink]`, `dev D`, or ECMP `nexthop ... nexthop ...`.
fn unicast_nexthops(rng: &mut Rng, plan: &mut Plan, v6: bool) -> String {
    let roll = rng.below(100);
    if roll < 28 {
        let paths = rng.range(2, 3);
        let mut text = String::new();
        for _ in 0..paths {
            let (gw, link) = gateway(rng, plan, v6);
            plan.gateways.push(gw);
            let dev = link_name(rng, plan, link);
            text.push_str(&format!(" nexthop via {gw} dev {dev}"));
            if rng.chance(70) {
                text.push_str(&format!(" weight {}", rng.range(1, 5)));
            }
        }
        return text;
    }
    if roll < 40 {
        return format!(" dev {}", link_name(rng, plan, None));
    }
    let (gw, link) = gateway(rng, plan, v6);
    plan.gateways.push(gw);
    let onlink = rng.chance(12);
    if onlink || rng.chance(55) {
        let dev = link_name(rng, plan, link);
        let flag = if onlink { " onlink" } else { "" };
        format!(" via {gw} dev {dev}{flag}")
    } else {
        format!(" via {gw}")
    }
}

/// A `del` of an earlier route: the whole spec, or only its selector part.
fn deletion(rng: &mut Rng, plan: &Plan) -> String {
    let earlier = rng.pick(&plan.route_lines).clone();
    let mut words: Vec<&str> = earlier.split_whitespace().collect();
    words[1] = "del";
    if rng.chance(50) {
        if let Some(cut) = words
            .iter()
            .position(|w| *w == "via" || *w == "dev" || *w == "nexthop")
        {
            words.truncate(cut);
        }
    }
    words.join(" ")
}

/// wg-quick's policy: a table 51820 default route and the two rules.
fn wg_quick(rng: &mut Rng, plan: &mut Plan, config: &mut Vec<String>) {
    let dev = link_name(rng, plan, None);
    plan.marks.push(WG_MARK);
    config.push(format!("route add 0.0.0.0/0 dev {dev} table {WG_MARK}"));
    config.push(format!("-4 rule add not fwmark {WG_MARK} table {WG_MARK}"));
    config.push("-4 rule add table main suppress_prefixlength 0".to_string());
    if rng.chance(60) {
        config.push(format!("route add ::/0 dev {dev} table {WG_MARK}"));
        config.push(format!("-6 rule add not fwmark {WG_MARK} table {WG_MARK}"));
        config.push("-6 rule add table main suppress_prefixlength 0".to_string());
    }
}

/// One policy rule.
fn rule(rng: &mut Rng, plan: &mut Plan, v6: bool) -> String {
    let mut line = String::new();
    if v6 {
        line.push_str("-6 ");
    } else if rng.chance(60) {
        line.push_str("-4 ");
    }
    line.push_str("rule add");
    let priority = if rng.chance(60) {
        Some(*rng.pick(&[100u32, 200, 300, 400, 500, 1000, 32000, 32765]))
    } else {
        None
    };
    if rng.chance(10) {
        line.push_str(" not");
    }
    if let Some(p) = priority {
        line.push_str(&format!(" pref {p}"));
    }
    if rng.chance(35) {
        let (a, len) = destination(rng, plan, v6);
        let len = if len == 0 { 8 } else { len };
        plan.rule_sources.push((a, len));
        line.push_str(&format!(" from {}", addr::prefix_text(a, len)));
    }
    if rng.chance(35) {
        let (a, len) = destination(rng, plan, v6);
        plan.prefixes.push((a, len));
        line.push_str(&format!(" to {}", addr::prefix_text(a, len)));
    }
    if rng.chance(15) {
        let dev = if rng.chance(15) {
            "lo".to_string()
        } else {
            link_name(rng, plan, None)
        };
        line.push_str(&format!(" iif {dev}"));
    }
    if rng.chance(10) {
        line.push_str(&format!(" oif {}", link_name(rng, plan, None)));
    }
    if rng.chance(25) {
        let mark = rng.range(1, 0x30) as u32;
        plan.marks.push(mark);
        if rng.chance(50) {
            line.push_str(&format!(
                " fwmark 0x{mark:x}/0x{:x}",
                rng.pick(&[0xffu32, 0xf0, 0x0f])
            ));
        } else {
            line.push_str(&format!(" fwmark {mark}"));
        }
    }
    if rng.chance(10) {
        let values = if v6 { TCLASS_VALUES } else { TOS_VALUES };
        let tos = *rng.pick(values);
        plan.toses.push((v6, tos));
        line.push_str(&format!(" tos 0x{tos:02x}"));
    }
    // The L4 and uid selectors (fib4_rule_match, fib6_rule_match,
    // fib_rule_match), which queries' ipproto, ports and uid meet.
    if rng.chance(8) {
        line.push_str(&format!(" ipproto {}", rng.pick(&["tcp", "udp", "icmp"])));
    }
    if rng.chance(8) {
        line.push_str(&format!(" sport {}", rng.pick(PORT_RANGES)));
    }
    if rng.chance(8) {
        line.push_str(&format!(" dport {}", rng.pick(PORT_RANGES)));
    }
    if rng.chance(8) {
        line.push_str(&format!(" uidrange {}", rng.pick(UID_RANGES)));
    }
    match rng.below(100) {
        0..=54 => line.push_str(&format!(" lookup {}", rng.pick(TABLES))),
        55..=64 => {
            let target = priority.unwrap_or(100) + *rng.pick(&[1u32, 50, 100, 500]);
            line.push_str(&format!(" goto {target}"));
        }
        65..=69 => line.push_str(" blackhole"),
        70..=74 => line.push_str(" unreachable"),
        75..=79 => line.push_str(" prohibit"),
        80..=89 => line.push_str(&format!(
            " table main suppress_prefixlength {}",
            rng.pick(&[0u32, 8, 16, 24, 48, 64])
        )),
        _ => line.push_str(" nop"),
    }
    line
}

/// One to three rule deletions: of default rules (an IPv4 delete unmerges
/// local from main for good, `fib4_rule_delete`; an IPv6 one leaves
/// `fib6_rule_lookup`'s local-then-main fast path until a rule is added)
/// and of rules added above (the add's own words, so some miss a rule
/// deleted already: both sides must refuse those alike).
fn rule_deletions(rng: &mut Rng, added: &[String], config: &mut Vec<String>) {
    for _ in 0..rng.range(1, 3) {
        let line = if !added.is_empty() && rng.chance(40) {
            rng.pick(added).replacen("rule add", "rule del", 1)
        } else if rng.chance(40) {
            format!("-6 rule del pref {}", rng.pick(&[0u32, 32766]))
        } else {
            let family = if rng.chance(50) { "-4 " } else { "" };
            format!("{family}rule del pref {}", rng.pick(&[0u32, 32766, 32767]))
        };
        config.push(line);
    }
}

/// An address worth asking about: the edges of configured prefixes, just
/// outside them, local addresses, gateways, or anything at all.
fn destination_address(rng: &mut Rng, plan: &Plan, v6: bool) -> IpAddr {
    for _ in 0..8 {
        let candidate = raw_destination(rng, plan, v6);
        if !addr::is_multicast(candidate) {
            return candidate;
        }
    }
    if v6 {
        "2001:db8::1".parse().expect("literal")
    } else {
        "192.0.2.1".parse().expect("literal")
    }
}

fn raw_destination(rng: &mut Rng, plan: &Plan, v6: bool) -> IpAddr {
    let prefixes: Vec<Pfx> = plan
        .prefixes
        .iter()
        .chain(&plan.rule_sources)
        .copied()
        .filter(|(a, _)| a.is_ipv6() == v6)
        .collect();
    let roll = rng.below(100);
    if roll < 60 && !prefixes.is_empty() {
        let (a, len) = *rng.pick(&prefixes);
        return match rng.below(7) {
            0 => addr::first(a, len),
            1 => addr::last(a, len),
            2 => addr::offset(addr::first(a, len), 1),
            3 => addr::offset(addr::last(a, len), -1),
            4 => addr::offset(addr::first(a, len), -1),
            5 => addr::offset(addr::last(a, len), 1),
            _ => addr::with_host(a, len, rng.next_u128()),
        };
    }
    let locals: Vec<IpAddr> = plan
        .addrs
        .iter()
        .map(|(a, _, _)| *a)
        .filter(|a| a.is_ipv6() == v6)
        .collect();
    if roll < 75 && !locals.is_empty() {
        return *rng.pick(&locals);
    }
    let gateways: Vec<IpAddr> = plan
        .gateways
        .iter()
        .copied()
        .filter(|a| a.is_ipv6() == v6)
        .collect();
    if roll < 85 && !gateways.is_empty() {
        return *rng.pick(&gateways);
    }
    if roll < 88 {
        let specials: &[&str] = if v6 {
            &["::1", "::", "2001:db8::1"]
        } else {
            &["127.0.0.1", "0.0.0.0", "255.255.255.255", "127.1.2.3"]
        };
        return rng.pick(specials).parse().expect("literal");
    }
    addr::from_int(v6, rng.next_u128())
}

/// A source address for an input lookup: random, inside a rule's `from`,
/// or (martian) a local address.
fn input_source(rng: &mut Rng, plan: &Plan, v6: bool) -> IpAddr {
    let sources: Vec<Pfx> = plan
        .rule_sources
        .iter()
        .copied()
        .filter(|(a, _)| a.is_ipv6() == v6)
        .collect();
    let roll = rng.below(100);
    let candidate = if roll < 30 && !sources.is_empty() {
        let (a, len) = *rng.pick(&sources);
        addr::with_host(a, len, rng.next_u128())
    } else if roll < 50 {
        destination_address(rng, plan, v6)
    } else if v6 {
        addr::from_int(
            true,
            (0x2001_0db8u128 << 96) | (0xaau128 << 80) | u128::from(rng.next_u64()),
        )
    } else {
        addr::from_int(
            false,
            u128::from((100u32 << 24) | rng.below(1 << 22) as u32),
        )
    };
    if addr::is_multicast(candidate) {
        addr::from_int(
            v6,
            if v6 {
                0x2001_0db8_00aa << 80
            } else {
                0x6400_0001
            },
        )
    } else {
        candidate
    }
}

/// One query, input or output form.
fn query(rng: &mut Rng, plan: &Plan) -> String {
    let v6 = rng.chance(50);
    let dst = destination_address(rng, plan, v6);
    let mut text = dst.to_string();
    if rng.chance(40) {
        let src = input_source(rng, plan, v6);
        let iif = if rng.chance(10) {
            "lo".to_string()
        } else {
            rng.pick(&plan.links).0.clone()
        };
        text.push_str(&format!(" from {src} iif {iif}"));
    } else {
        let locals: Vec<IpAddr> = plan
            .addrs
            .iter()
            .map(|(a, _, _)| *a)
            .filter(|a| a.is_ipv6() == v6)
            .collect();
        let roll = rng.below(100);
        if roll < 35 && !locals.is_empty() {
            text.push_str(&format!(" from {}", rng.pick(&locals)));
        } else if roll < 45 {
            text.push_str(&format!(" from {}", input_source(rng, plan, v6)));
        }
        if rng.chance(20) {
            text.push_str(&format!(" oif {}", rng.pick(&plan.links).0));
        }
    }
    if rng.chance(25) {
        let mark = if !plan.marks.is_empty() && rng.chance(80) {
            *rng.pick(&plan.marks)
        } else {
            rng.range(1, 0xff) as u32
        };
        text.push_str(&format!(" mark {mark}"));
    }
    if rng.chance(10) {
        // Mostly a value a rule of the family tests, else any.
        let tested: Vec<u8> = plan
            .toses
            .iter()
            .filter(|(family_v6, _)| *family_v6 == v6)
            .map(|(_, tos)| *tos)
            .collect();
        let values = if v6 { TCLASS_VALUES } else { TOS_VALUES };
        let tos = if !tested.is_empty() && rng.chance(60) {
            *rng.pick(&tested)
        } else {
            *rng.pick(values)
        };
        text.push_str(&format!(" tos 0x{tos:02x}"));
    }
    if rng.chance(15) {
        let mut port = || {
            if rng.chance(60) {
                u64::from(*rng.pick(PORTS))
            } else {
                rng.range(1, 0xffff)
            }
        };
        let (sport, dport) = (port(), port());
        text.push_str(&format!(
            " ipproto {} sport {sport} dport {dport}",
            rng.pick(IPPROTOS),
        ));
    }
    if rng.chance(15) {
        text.push_str(&format!(" uid {}", rng.pick(UIDS)));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_case() {
        assert_eq!(case(11, 50), case(11, 50));
        assert_ne!(case(11, 50), case(12, 50));
    }

    #[test]
    fn cases_have_links_addresses_routes_and_the_asked_query_count() {
        for seed in 0..20 {
            let c = case(seed, 40);
            assert_eq!(c.queries.len(), 40);
            assert!(c
                .config
                .iter()
                .any(|l| l.starts_with("link add fd0 type ifb")));
            assert!(c.config.iter().any(|l| l.starts_with("addr add")));
            assert!(c.config.iter().filter(|l| l.starts_with("route ")).count() >= 12);
            for q in &c.queries {
                let dst: IpAddr = q.split_whitespace().next().unwrap().parse().unwrap();
                assert!(!dst.is_multicast(), "multicast destination in {q:?}");
            }
        }
    }

    #[test]
    fn across_seeds_every_feature_the_brief_asks_for_appears() {
        let mut text = String::new();
        for seed in 0..60 {
            text.push_str(&case(seed, 100).config.join("\n"));
            text.push_str(&case(seed, 100).queries.join("\n"));
        }
        for needle in [
            "route add local ",
            "route add broadcast ",
            "route add blackhole ",
            "route add unreachable ",
            "route add prohibit ",
            "route add throw ",
            " onlink",
            " nexthop via ",
            " weight ",
            " metric ",
            " tos 0x",
            " table 100",
            "default",
            "route del ",
            "route replace ",
            "route append ",
            "-4 rule add not fwmark 51820 table 51820",
            "-4 rule add table main suppress_prefixlength 0",
            "-6 rule add",
            "-6 rule del pref ",
            "rule del pref 0",
            "rule del pref 32766",
            "rule del pref 32767",
            "-4 rule del ",
            " goto ",
            " iif ",
            " oif ",
            " fwmark 0x",
            " blackhole",
            " prohibit",
            " not",
            "link set fd",
            "link set lo up",
            " down",
            "type veth peer name fdv1",
            " mark ",
            " ipproto tcp",
            " sport ",
            " dport ",
            " uidrange ",
            " uid ",
            " ipproto tcp sport ",
            " dport ",
        ] {
            assert!(text.contains(needle), "no {needle:?} in 60 seeds");
        }
        let v6_with_tos = text.lines().any(|l| {
            l.split_whitespace().next().is_some_and(|w| w.contains(':')) && l.contains(" tos 0x")
        });
        assert!(v6_with_tos, "no IPv6 query with tos in 60 seeds");
        assert!(text.contains("-6 rule add") && text.contains(" tos 0xb8"));
    }

    #[test]
    fn query_families_are_consistent() {
        for seed in 0..20 {
            for q in case(seed, 100).queries {
                let words: Vec<&str> = q.split_whitespace().collect();
                let dst: IpAddr = words[0].parse().unwrap();
                if let Some(i) = words.iter().position(|w| *w == "from") {
                    let src: IpAddr = words[i + 1].parse().unwrap();
                    assert_eq!(src.is_ipv6(), dst.is_ipv6(), "{q}");
                }
                if let Some(i) = words.iter().position(|w| *w == "tos") {
                    let tos = u8::from_str_radix(words[i + 1].trim_start_matches("0x"), 16);
                    assert!(tos.is_ok_and(|t| t & 0x03 == 0), "ECN bits in {q}");
                }
            }
        }
    }
}
