//! `fibre route show`, `rule show`, `link show`, `addr show`, `neigh show`.

use std::io::Write;

use std::sync::Arc;

use anyhow::{bail, Context, Result};
use fibre_dev::gre::TxMode;
use fibre_dev::stats::IpLinkStats;
use fibre_dev::{FibRoutes, Registry};
use fibre_fib::{config, Family, Fib, Link, RouteType, TableId, TABLE_MAIN};
use serde_json::Value;

use crate::format::addr::{link_addresses_json, link_addresses_text};
use crate::format::cache::{cache_json, cache_text};
use crate::format::link::{link_json, link_text, LinkExtras};
use crate::format::neigh::{neigh_json, neigh_text};
use crate::format::route::{route_json, route_text, RouteStyle};
use crate::format::rule::{rule_json, rule_text, RuleContext};
use crate::icmp::Learned;

/// The selector of `route show`: `[table T|all] [type T]`, or `cache`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteFilter {
    /// One table, or every table (`all`) when None.
    pub table: Option<TableId>,
    /// Only routes of this type.
    pub kind: Option<RouteType>,
    /// `cache`: the route cache's exceptions instead of FIB routes.
    pub cache: bool,
}

/// iproute2's `NEXT_ARG`: the word after `keyword`, or the error for a
/// line that ends first (`expected` says what was wanted; `tail` is what
/// `ip` adds, if the command's errors quote it).
fn value_after<'a>(
    words: &mut impl Iterator<Item = &'a str>,
    keyword: &str,
    expected: &str,
    tail: &str,
) -> Result<&'a str> {
    words
        .next()
        .with_context(|| format!("\"{keyword}\": expected {expected}, got end of line{tail}"))
}

/// What `ip neigh` adds to a line that ends before a keyword's value.
const INCOMPLETE: &str = " (Command line is not complete. Try option \"help\")";

impl RouteFilter {
    /// Reads `route show`'s words.
    pub fn parse(words: &[String]) -> Result<RouteFilter> {
        let mut filter = RouteFilter {
            table: Some(TABLE_MAIN),
            kind: None,
            cache: false,
        };
        let mut words = words.iter().map(String::as_str);
        while let Some(word) = words.next() {
            match word {
                "table" => {
                    let token =
                        value_after(&mut words, "table", "a table name, a number or \"all\"", "")?;
                    filter.table = if token == "all" {
                        None
                    } else {
                        Some(config::parse_table_id(token).with_context(|| {
                            format!("\"table\": expected local, main, default, all or a number from 0 to 4294967295, got \"{token}\"")
                        })?)
                    };
                }
                "type" => {
                    let token = value_after(&mut words, "type", "a route type", "")?;
                    filter.kind = Some(RouteType::from_name(token).with_context(|| {
                        format!("\"type\": expected unicast, local, broadcast, anycast, multicast, blackhole, unreachable, prohibit or throw, got \"{token}\"")
                    })?);
                }
                "cache" => filter.cache = true,
                other => {
                    bail!("\"route show\": expected table T, type T or cache, got \"{other}\"")
                }
            }
        }
        if filter.cache && (filter.kind.is_some() || filter.table != Some(TABLE_MAIN)) {
            bail!("\"route show cache\": table and type selectors do not apply to the route cache");
        }
        Ok(filter)
    }
}

/// `ip route show`: `family` when given; otherwise IPv4, or both families
/// for `table all` (as `ip` does when no family is given).
pub fn routes(
    fib: &Fib,
    family: Option<Family>,
    filter: &RouteFilter,
    json: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let style = RouteStyle {
        show_table: filter.table.is_none(),
    };
    let families: &[Family] = match (family, filter.table) {
        (Some(Family::V4), _) => &[Family::V4],
        (Some(Family::V6), _) => &[Family::V6],
        (None, None) => &[Family::V4, Family::V6],
        (None, Some(_)) => &[Family::V4],
    };
    let routes = families
        .iter()
        .flat_map(|f| fib.routes(*f, filter.table))
        .filter(|r| filter.kind.is_none() || filter.kind == Some(r.kind));
    if json {
        let list: Vec<Value> = routes.map(|r| route_json(fib, r, style)).collect();
        writeln!(out, "{}", Value::Array(list))?;
    } else {
        for route in routes {
            out.write_all(route_text(fib, route, style).as_bytes())?;
        }
    }
    Ok(())
}

/// `ip route show cache` of one family: the exceptions `learned` holds
/// (none without `--icmp`, as on a router that received no ICMP error).
pub fn cache(
    fib: &Fib,
    learned: Option<&Learned>,
    family: Family,
    json: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let entries = learned.map(|l| l.exceptions(family)).unwrap_or_default();
    if json {
        let list: Vec<Value> = entries
            .iter()
            .map(|(key, dst, info)| cache_json(fib, key, *dst, info))
            .collect();
        writeln!(out, "{}", Value::Array(list))?;
    } else {
        for (key, dst, info) in &entries {
            out.write_all(cache_text(fib, key, *dst, info).as_bytes())?;
        }
    }
    Ok(())
}

/// `ip rule show` of one family.
pub fn rules(fib: &Fib, family: Family, json: bool, out: &mut dyn Write) -> Result<()> {
    let device_exists = |name: &str| fib.link_by_name(name).is_some();
    let priority_exists = |priority: u32| fib.rules(family).iter().any(|r| r.priority == priority);
    let context = RuleContext {
        device_exists: &device_exists,
        priority_exists: &priority_exists,
    };
    if json {
        let list: Vec<Value> = fib
            .rules(family)
            .iter()
            .map(|r| rule_json(r, context))
            .collect();
        writeln!(out, "{}", Value::Array(list))?;
    } else {
        for rule in fib.rules(family) {
            out.write_all(rule_text(rule, context).as_bytes())?;
        }
    }
    Ok(())
}

/// `ip`'s refusal of a device it does not know.
fn check_device(fib: &Fib, only: Option<&str>) -> Result<()> {
    match only {
        Some(name) if fib.link_by_name(name).is_none() => {
            bail!("Device \"{name}\" does not exist.")
        }
        _ => Ok(()),
    }
}

/// What `link show` prints besides the links themselves.
#[derive(Debug, Clone, Copy, Default)]
pub struct LinkShow<'a> {
    /// `[dev] NAME`: only this device.
    pub only: Option<&'a str>,
    /// `-j`.
    pub json: bool,
    /// `-d`: each kind's options.
    pub details: bool,
    /// `-s`: each device's statistics.
    pub stats: bool,
}

/// `ip link show`. With `-s` the statistics come from a device registry
/// built from the FIB's links (every GRE link a tunnel made from its
/// spec), as a data plane would run them; in a one-shot command the
/// devices are fresh, so every counter is zero.
pub fn links(fib: &Fib, how: LinkShow<'_>, out: &mut dyn Write) -> Result<()> {
    check_device(fib, how.only)?;
    let registry = if how.stats {
        let routes = Arc::new(FibRoutes::new(fib.clone()));
        Some(
            Registry::from_fib(fib, routes, 1, TxMode::Lltx)
                .context("building the devices for link statistics")?,
        )
    } else {
        None
    };
    let stats_of = |link: &Link| -> Option<IpLinkStats> {
        let device = registry.as_ref()?.get(link.index)?;
        Some(device.stats().snapshot().ip_link_stats())
    };
    links_with(fib, how, &stats_of, out)
}

/// `ip link show` with each link's statistics from `stats_of` (with `-s`):
/// a running router's interfaces (`fibre ctl -s link show`).
pub fn links_with(
    fib: &Fib,
    how: LinkShow<'_>,
    stats_of: &dyn Fn(&Link) -> Option<IpLinkStats>,
    out: &mut dyn Write,
) -> Result<()> {
    check_device(fib, how.only)?;
    let mut list = Vec::new();
    for link in fib.links().filter(|l| how.only.is_none_or(|n| l.name == n)) {
        let stats = if how.stats { stats_of(link) } else { None };
        let extras = LinkExtras {
            details: how.details,
            stats: stats.as_ref(),
        };
        if how.json {
            list.push(Value::Object(link_json(link, extras)));
        } else {
            out.write_all(link_text(link, extras).as_bytes())?;
        }
    }
    if how.json {
        writeln!(out, "{}", Value::Array(list))?;
    }
    Ok(())
}

/// `ip addr show`; with a family, only links holding addresses of it.
pub fn addresses(
    fib: &Fib,
    only: Option<&str>,
    family: Option<Family>,
    json: bool,
    out: &mut dyn Write,
) -> Result<()> {
    check_device(fib, only)?;
    let all = fib.addresses(family);
    let mut list = Vec::new();
    for link in fib.links().filter(|l| only.is_none_or(|n| l.name == n)) {
        let mine: Vec<_> = all
            .iter()
            .copied()
            .filter(|a| a.link == link.index)
            .collect();
        if family.is_some() && mine.is_empty() {
            continue;
        }
        if json {
            list.push(link_addresses_json(link, &mine));
        } else {
            out.write_all(link_addresses_text(link, &mine).as_bytes())?;
        }
    }
    if json {
        writeln!(out, "{}", Value::Array(list))?;
    }
    Ok(())
}

/// The selector of `neigh show` (`ipneigh_list_or_flush`): `dev DEV`,
/// `nud STATE|all` (repeatable), `[to] PREFIX`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeighFilter {
    /// `dev DEV`.
    pub dev: Option<String>,
    /// The `NUD_*` bits shown (0x100 stands for NUD_NONE); by default all
    /// but NOARP (and NONE).
    pub states: u32,
    /// `[to] PREFIX`.
    pub prefix: Option<fibre_fib::Prefix>,
}

impl NeighFilter {
    /// Reads `neigh show`'s words.
    pub fn parse(words: &[String]) -> Result<NeighFilter> {
        let mut filter = NeighFilter {
            dev: None,
            states: 0xff & !u32::from(fibre_fib::NudState::Noarp.bits()),
            prefix: None,
        };
        let mut state_given = false;
        let mut words = words.iter().map(String::as_str);
        while let Some(word) = words.next() {
            match word {
                "dev" => {
                    let dev = value_after(&mut words, "dev", "a device name", INCOMPLETE)?;
                    if filter.dev.is_some() {
                        bail!("\"dev\": expected one device, got \"{dev}\" (Error: duplicate \"dev\": \"{dev}\" is the second value.)");
                    }
                    filter.dev = Some(dev.to_string());
                }
                "nud" => {
                    let token = value_after(&mut words, "nud", "a state or all", INCOMPLETE)?;
                    if !state_given {
                        state_given = true;
                        filter.states = 0;
                    }
                    let bits = match config::parse_nud_state(token) {
                        Some(fibre_fib::NudState::None) => 0x100,
                        Some(state) => u32::from(state.bits()),
                        None if token == "all" => !0,
                        None => bail!("\"nud\": expected a state or all, got \"{token}\" (Error: argument \"{token}\" is wrong: nud state is bad)"),
                    };
                    filter.states |= bits;
                }
                _ => {
                    let token = if word == "to" {
                        value_after(&mut words, "to", "a prefix", INCOMPLETE)?
                    } else {
                        word
                    };
                    filter.prefix = Some(neigh_prefix(token).with_context(|| {
                        format!("\"neigh show\": expected dev DEV, nud STATE or a prefix, got \"{token}\" (Error: argument \"{token}\" is wrong: to value is invalid)")
                    })?);
                }
            }
        }
        Ok(filter)
    }

    fn shows(&self, entry: &fibre_neigh::NeighView, family: Option<Family>) -> bool {
        let bits = match entry.state {
            fibre_fib::NudState::None => 0,
            state => u32::from(state.bits()),
        };
        // print_neigh: a NONE entry only when NONE (0x100) is asked for.
        let state_ok = if bits == 0 {
            self.states & 0x100 != 0
        } else {
            self.states & bits != 0
        };
        let family_ok = family.is_none_or(|f| Family::of(&entry.addr) == f);
        let prefix_ok = self.prefix.is_none_or(|p| p.contains(&entry.addr));
        state_ok && family_ok && prefix_ok
    }
}

/// `ADDR[/LEN]` as `get_prefix` reads a `neigh show` selector.
fn neigh_prefix(token: &str) -> Option<fibre_fib::Prefix> {
    let (addr, len) = match token.split_once('/') {
        Some((addr, len)) => (addr, Some(len.parse::<u8>().ok()?)),
        None => (token, None),
    };
    let addr: std::net::IpAddr = addr.parse().ok()?;
    let bits = Family::of(&addr).bits();
    let len = len.unwrap_or(bits);
    (len <= bits).then(|| fibre_fib::Prefix::containing(addr, len))
}

/// `ip neigh show`: the FIB's static neighbours as the kernel holds them
/// just after the configuration is applied (a table seeded from them and
/// its timers run once at that instant, so `nud delay` shows PROBE as in
/// the kernel). The kernel lists in its hash order, which a random seed
/// chooses per boot; fibre lists IPv4 before IPv6, each by link and
/// address.
pub fn neighbours(
    fib: &Fib,
    family: Option<Family>,
    filter: &NeighFilter,
    json: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let router = fibre_neigh::FibRouter::new(fib);
    let mut table =
        fibre_neigh::NeighTable::from_fib(fibre_neigh::NeighSettings::default(), fib, 0);
    let _ = table.tick(0, &router);
    neighbour_table(fib, &table, family, filter, json, out)
}

/// `ip neigh show` of `table`: a running router's live ARP and ND entries
/// (`fibre ctl neigh show`).
pub fn neighbour_table(
    fib: &Fib,
    table: &fibre_neigh::NeighTable,
    family: Option<Family>,
    filter: &NeighFilter,
    json: bool,
    out: &mut dyn Write,
) -> Result<()> {
    if let Some(dev) = &filter.dev {
        if fib.link_by_name(dev).is_none() {
            bail!("Cannot find device \"{dev}\"");
        }
    }
    let only = filter
        .dev
        .as_deref()
        .and_then(|d| fib.link_by_name(d))
        .map(|l| l.index);
    let entries = table
        .entries()
        .filter(|e| only.is_none_or(|l| e.link == l) && filter.shows(e, family));
    let show_dev = only.is_none();
    if json {
        let list: Vec<Value> = entries.map(|e| neigh_json(fib, &e, show_dev)).collect();
        writeln!(out, "{}", Value::Array(list))?;
    } else {
        for entry in entries {
            out.write_all(neigh_text(fib, &entry, show_dev).as_bytes())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_keyword_at_the_end_of_the_line_names_what_it_wanted() {
        let route = |line: &str| RouteFilter::parse(&words(line)).unwrap_err().to_string();
        let neigh = |line: &str| NeighFilter::parse(&words(line)).unwrap_err().to_string();
        assert_eq!(
            route("table"),
            "\"table\": expected a table name, a number or \"all\", got end of line"
        );
        assert_eq!(
            route("type"),
            "\"type\": expected a route type, got end of line"
        );
        assert_eq!(
            neigh("dev"),
            "\"dev\": expected a device name, got end of line (Command line is not complete. Try option \"help\")"
        );
        assert_eq!(
            neigh("dev eth0 nud"),
            "\"nud\": expected a state or all, got end of line (Command line is not complete. Try option \"help\")"
        );
        assert_eq!(
            neigh("to"),
            "\"to\": expected a prefix, got end of line (Command line is not complete. Try option \"help\")"
        );
    }

    #[test]
    fn route_filter_words() {
        assert_eq!(
            RouteFilter::parse(&[]).unwrap(),
            RouteFilter {
                table: Some(TABLE_MAIN),
                kind: None,
                cache: false,
            }
        );
        assert_eq!(RouteFilter::parse(&words("table all")).unwrap().table, None);
        assert_eq!(
            RouteFilter::parse(&words("table local")).unwrap().table,
            Some(255)
        );
        assert_eq!(
            RouteFilter::parse(&words("type blackhole")).unwrap().kind,
            Some(RouteType::Blackhole)
        );
        let err = RouteFilter::parse(&words("table foo"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("got \"foo\""), "{err}");
        assert!(RouteFilter::parse(&words("type")).is_err());
        assert!(RouteFilter::parse(&words("frob")).is_err());
    }
}
