//! `route get` answers compared between a namespace's kernel and a
//! `fibre follow` of it, as the kernel differential test compares them
//! (kernel_diff's `compare.rs`: outcome, error text, type, table, path,
//! mtu, flags, and the matched route by `fibmatch`; `prefsrc` only noted
//! unless `FIBRE_DIFF_STRICT_PREFSRC=1`).
//!
//! The queries are drawn from the kernel's own routes at the time of the
//! check: an address inside each chosen prefix, or just outside it (one
//! below its first address, one past its last), in both families; some
//! from one of the namespace's addresses, some as input from a neighbour
//! on an up link (`from PEER iif DEV`), some out an up link (`oif DEV`),
//! some with a firewall mark the rules select. Not drawn: multicast and IPv6 link-local destinations
//! (the kernel needs an output device to choose among links for those;
//! kernel_diff leaves them out too).
//!
//! Needs `follower.rs`, `netns.rs`, and kernel_diff's `answer.rs`,
//! `compare.rs`, `kernel.rs` and `process.rs` as modules of those names.

use std::net::IpAddr;
use std::thread;
use std::time::Duration;

use fibre_testkit::SplitMix64;
use serde_json::Value;

use super::answer::{self, Outcome};
use super::compare::{self, LocalCover};
use super::follower::{settle, Follower};
use super::kernel;
use super::netns::Namespace;

/// A prefix as the kernel shows it: its first address and length, in a
/// family of `bits` (32 or 128) bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Prefix {
    first: u128,
    len: u32,
    bits: u32,
}

impl Prefix {
    /// `default`, `10.1.0.0/16`, `10.1.0.1` or `2001:db8::/48`.
    fn parse(dst: &str, v6: bool) -> Option<Prefix> {
        let bits = if v6 { 128 } else { 32 };
        if dst == "default" {
            return Some(Prefix {
                first: 0,
                len: 0,
                bits,
            });
        }
        let (address, len) = match dst.split_once('/') {
            Some((a, l)) => (a, l.parse().ok()?),
            None => (dst, bits),
        };
        let first = match address.parse::<IpAddr>().ok()? {
            IpAddr::V4(a) if !v6 => u128::from(u32::from(a)),
            IpAddr::V6(a) if v6 => u128::from(a),
            _ => return None,
        };
        Some(Prefix { first, len, bits })
    }

    /// The host bits' mask.
    fn host_mask(&self) -> u128 {
        let host = self.bits - self.len;
        if host >= 128 {
            u128::MAX
        } else {
            (1u128 << host) - 1
        }
    }

    fn address(&self, value: u128) -> IpAddr {
        if self.bits == 32 {
            IpAddr::V4((value as u32).into())
        } else {
            IpAddr::V6(value.into())
        }
    }

    /// An address inside, or just outside, the prefix.
    fn pick(&self, rng: &mut SplitMix64) -> IpAddr {
        let family_mask = if self.bits == 32 {
            u128::from(u32::MAX)
        } else {
            u128::MAX
        };
        let random = (u128::from(rng.next()) << 64) | u128::from(rng.next());
        let value = match rng.below(4) {
            0 => self.first.wrapping_sub(1),
            1 => (self.first | self.host_mask()).wrapping_add(1),
            _ => self.first | (random & self.host_mask()),
        };
        self.address(value & family_mask)
    }
}

/// Multicast and IPv6 link-local addresses: not asked (see the module).
fn not_asked(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(a) => a.is_multicast(),
        IpAddr::V6(a) => a.is_multicast() || (a.segments()[0] & 0xffc0) == 0xfe80,
    }
}

/// What the queries are drawn from: the kernel's routes, addresses, up
/// links and rule marks.
struct Material {
    prefixes: Vec<Prefix>,
    /// (address, prefix length, link) of each address that is not link-local.
    addresses: Vec<(IpAddr, u32, String)>,
    /// Links that are up, other than lo.
    up_links: Vec<String>,
    /// The firewall marks the rules select (with their masks applied).
    marks: Vec<u32>,
}

fn json(text: &str, what: &str) -> Result<Value, String> {
    serde_json::from_str(text.trim()).map_err(|e| format!("{what} is not JSON ({e}): {text}"))
}

fn items(value: &Value) -> impl Iterator<Item = &serde_json::Map<String, Value>> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
}

fn material(ns: &Namespace) -> Result<Material, String> {
    let mut prefixes = Vec::new();
    for (flag, v6) in [("-4", false), ("-6", true)] {
        let routes = json(
            &ns.ip(&[flag, "-j", "route", "show", "table", "all"])?,
            "ip route show",
        )?;
        for route in items(&routes) {
            let Some(dst) = route.get("dst").and_then(Value::as_str) else {
                continue;
            };
            if let Some(prefix) = Prefix::parse(dst, v6) {
                if !not_asked(prefix.address(prefix.first)) {
                    prefixes.push(prefix);
                }
            }
        }
    }
    let mut addresses = Vec::new();
    for link in items(&json(&ns.ip(&["-j", "addr", "show"])?, "ip addr show")?) {
        let name = link.get("ifname").and_then(Value::as_str).unwrap_or("");
        for info in link.get("addr_info").into_iter().flat_map(|a| {
            a.as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_object)
        }) {
            let local = info
                .get("local")
                .and_then(Value::as_str)
                .and_then(|a| a.parse::<IpAddr>().ok());
            let len = info.get("prefixlen").and_then(Value::as_u64);
            if let (Some(local), Some(len)) = (local, len) {
                if !not_asked(local) {
                    addresses.push((local, len as u32, name.to_string()));
                }
            }
        }
    }
    let links = json(&ns.ip(&["-j", "link", "show"])?, "ip link show")?;
    let up_links = items(&links)
        .filter(|l| {
            l.get("flags")
                .and_then(Value::as_array)
                .is_some_and(|f| f.iter().any(|x| x == "UP"))
        })
        .filter_map(|l| l.get("ifname").and_then(Value::as_str))
        .filter(|name| *name != "lo")
        .map(str::to_string)
        .collect();
    let mut marks = Vec::new();
    for flag in ["-4", "-6"] {
        let rules = json(&ns.ip(&[flag, "-j", "rule", "show"])?, "ip rule show")?;
        for rule in items(&rules) {
            let number = |key: &str| {
                rule.get(key)
                    .and_then(Value::as_str)
                    .and_then(|t| u32::from_str_radix(t.trim_start_matches("0x"), 16).ok())
            };
            if let Some(mark) = number("fwmark") {
                marks.push(mark & number("fwmask").unwrap_or(u32::MAX));
            }
        }
    }
    Ok(Material {
        prefixes,
        addresses,
        up_links,
        marks,
    })
}

/// `count` queries (`route get` arguments) drawn from the kernel's state.
fn queries(material: &Material, rng: &mut SplitMix64, count: usize) -> Vec<String> {
    let mut drawn = Vec::with_capacity(count);
    while drawn.len() < count && !material.prefixes.is_empty() {
        let prefix = material.prefixes[rng.below(material.prefixes.len())];
        let destination = prefix.pick(rng);
        if not_asked(destination) {
            continue;
        }
        let v6 = destination.is_ipv6();
        let same_family: Vec<&(IpAddr, u32, String)> = material
            .addresses
            .iter()
            .filter(|(a, _, _)| a.is_ipv6() == v6)
            .collect();
        let mut query = destination.to_string();
        match rng.below(10) {
            0 | 1 if !same_family.is_empty() => {
                let (own, _, _) = same_family[rng.below(same_family.len())];
                query.push_str(&format!(" from {own}"));
            }
            2 | 3 => {
                // A neighbour on an up link with an address of this family
                // (the kernel checks the source against that link).
                let links: Vec<&&(IpAddr, u32, String)> = same_family
                    .iter()
                    .filter(|(_, _, link)| material.up_links.contains(link))
                    .collect();
                if let Some((own, len, link)) = links.get(rng.below(links.len().max(1))).copied() {
                    let subnet = Prefix::parse(&format!("{own}/{len}"), v6)
                        .map(|p| Prefix {
                            first: p.first & !p.host_mask(),
                            ..p
                        })
                        .expect("an address of its own family");
                    let peer = subnet.address(subnet.first | (1 + (rng.next() as u128 % 8)));
                    query.push_str(&format!(" from {peer} iif {link}"));
                }
            }
            5 if !material.up_links.is_empty() => {
                let link = &material.up_links[rng.below(material.up_links.len())];
                query.push_str(&format!(" oif {link}"));
            }
            4 if !material.marks.is_empty() => {
                let mark = material.marks[rng.below(material.marks.len())];
                query.push_str(&format!(" mark {mark}"));
            }
            _ => {}
        }
        drawn.push(query);
    }
    drawn
}

/// fibre's outcome for one `route get` command.
fn fibre_outcome(follower: &mut Follower, command: &str) -> Result<Outcome, String> {
    match follower.answer_or_refusal(command)? {
        Ok(text) => answer::parse_json_answer(text.trim()),
        Err(message) => Ok(Outcome::Error(answer::normalise_error(&message))),
    }
}

/// Asks `count` queries drawn with `seed` of both the kernel and the
/// follower, on the same state; the disagreements, if any, as a report
/// (query, fields, both answers). Queries are drawn afresh and asked
/// again, up to 2 s, while they disagree: the kernel finishes some link
/// changes after `ip` returns (see [`super::follower::differences`]).
pub fn differences(
    ns: &Namespace,
    follower: &mut Follower,
    seed: u64,
    count: usize,
) -> Result<Option<String>, String> {
    let strict_prefsrc = fibre_testkit::env_number("FIBRE_DIFF_STRICT_PREFSRC", 0) != 0;
    let mut report = None;
    for _ in 0..8 {
        settle(ns)?;
        let material = material(ns)?;
        let queries = queries(&material, &mut SplitMix64(seed), count);
        if queries.is_empty() {
            return Err("the kernel shows no route to draw queries from".into());
        }
        report = differences_now(ns, follower, &material, &queries, strict_prefsrc)?;
        if report.is_none() {
            return Ok(None);
        }
        thread::sleep(Duration::from_millis(250));
    }
    Ok(report)
}

fn differences_now(
    ns: &Namespace,
    follower: &mut Follower,
    material: &Material,
    queries: &[String],
    strict_prefsrc: bool,
) -> Result<Option<String>, String> {
    let replies = kernel::ask_in(ns.name(), queries)?;
    let locals = LocalCover {
        addresses: material.addresses.iter().map(|(a, _, _)| *a).collect(),
        routes: Vec::new(),
    };
    let mut report = String::new();
    let mut differing = 0;
    for (query, kernel) in queries.iter().zip(&replies) {
        let fibre = fibre_outcome(follower, &format!("-j route get {query}"))?;
        let fibre_route = fibre_outcome(follower, &format!("-j route get fibmatch {query}"))?;
        let mut verdict = compare::compare(kernel, &fibre, strict_prefsrc, &locals);
        verdict
            .fields
            .extend(compare::compare_fibmatch(&kernel.route, &fibre_route));
        if !verdict.agrees() {
            differing += 1;
            report.push_str(&format!(
                "route get {query}: {}\n  kernel: {}\n  fibre:  {}\n  kernel fibmatch: {}\n  fibre fibmatch:  {}\n",
                verdict.fields.join(", "),
                kernel.answer.render(),
                fibre.render(),
                kernel.route.render(),
                fibre_route.render()
            ));
        }
    }
    Ok((differing > 0).then(|| {
        format!(
            "{differing} of {} route get answers differ\n{report}",
            queries.len()
        )
    }))
}

/// Panics, naming `what`, unless fibre answers `count` queries (drawn
/// with `seed`) as the kernel does; the report is cut to its first 40
/// lines, and the follower's stderr added.
pub fn assert_same_answers(
    ns: &Namespace,
    follower: &mut Follower,
    seed: u64,
    count: usize,
    what: &str,
) {
    match differences(ns, follower, seed, count) {
        Ok(None) => {}
        Ok(Some(report)) => {
            let shown: Vec<&str> = report.lines().take(40).collect();
            panic!(
                "{what}: fibre's route get answers differ from the kernel's\n{}\nfibre's stderr: {}",
                shown.join("\n"),
                follower.stderr()
            )
        }
        Err(e) => panic!("{what}: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pick is inside the prefix or the address next to one end.
    #[test]
    fn picks_fall_inside_or_next_to_the_prefix() {
        let mut rng = SplitMix64(7);
        for (dst, v6, low, high) in [
            ("10.1.0.0/16", false, "10.0.255.255", "10.2.0.0"),
            ("10.1.2.3", false, "10.1.2.2", "10.1.2.4"),
            (
                "2001:db8::/48",
                true,
                "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff",
                "2001:db8:1::",
            ),
        ] {
            let prefix = Prefix::parse(dst, v6).expect("a prefix");
            let (low, high): (IpAddr, IpAddr) = (low.parse().unwrap(), high.parse().unwrap());
            let mut ends = (false, false);
            for _ in 0..200 {
                let picked = prefix.pick(&mut rng);
                assert!(low <= picked && picked <= high, "{dst}: {picked}");
                ends.0 |= picked == low;
                ends.1 |= picked == high;
            }
            assert_eq!(ends, (true, true), "{dst}: both neighbours are asked");
        }
    }

    /// `default` covers the whole family, and its neighbours wrap within it.
    #[test]
    fn the_default_route_picks_stay_in_the_family() {
        let mut rng = SplitMix64(3);
        let v4 = Prefix::parse("default", false).expect("default");
        assert!((0..200).all(|_| v4.pick(&mut rng).is_ipv4()));
        assert_eq!(Prefix::parse("10.1.0.0/16", true), None, "wrong family");
        assert_eq!(Prefix::parse("multicast", false), None);
    }
}
