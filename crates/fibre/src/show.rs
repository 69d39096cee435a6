//! `fibre route show`, `rule show`, `link show`, `addr show`.

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
                    let Some(token) = words.next() else {
                        bail!("\"table\": expected a table name, a number or \"all\", got end of line");
                    };
                    filter.table = if token == "all" {
                        None
                    } else {
                        Some(config::parse_table_id(token).with_context(|| {
                            format!("\"table\": expected local, main, default, all or a number from 0 to 4294967295, got \"{token}\"")
                        })?)
                    };
                }
                "type" => {
                    let Some(token) = words.next() else {
                        bail!("\"type\": expected a route type, got end of line");
                    };
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
    let mut list = Vec::new();
    for link in fib.links().filter(|l| how.only.is_none_or(|n| l.name == n)) {
        let stats = stats_of(link);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
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
