//! The match of one policy rule against a flow (`fib_rule_match`,
//! `fib4_rule_match`, `fib6_rule_match`), asked for each rule a lookup
//! walks.

use std::net::IpAddr;

use crate::fib::Fib;
use crate::read::lookup::Flow;
use crate::types::*;

fn prefix_holds(p: &Option<Prefix>, addr: Option<IpAddr>, family: Family) -> bool {
    match p {
        None => true,
        Some(p) => p.contains(&addr.unwrap_or(family.unspecified())),
    }
}

/// The `from` selector. IPv6 (`fib6_rule_match`): a rule with a source
/// prefix never matches a flow without a source address.
fn source_matches(rule: &Rule, flow: &Flow, family: Family) -> bool {
    let no_source = flow.src.is_none_or(|s| s.is_unspecified());
    if family == Family::V6 && no_source && rule.from.is_some_and(|p| p.len() > 0) {
        return false;
    }
    prefix_holds(&rule.from, flow.src, family)
}

fn iface_matches(fib: &Fib, name: &Option<String>, index: LinkIndex) -> bool {
    match name {
        None => true,
        // A rule naming a missing device never matches (its ifindex is -1).
        Some(n) => fib.link_by_name(n).is_some_and(|l| l.index == index),
    }
}

/// `fib_rule_port_inrange` for a rule's port range, if it has one.
fn port_matches(range: Option<(u16, u16)>, port: u16) -> bool {
    range.is_none_or(|(start, end)| (start..=end).contains(&port))
}

/// `fib_rule_match`, then `fib4_rule_match` / `fib6_rule_match`: the
/// selectors, then `not`. A `tun_id` rule never matches (fibre's flows have
/// no tunnel metadata), nor an `l3mdev` one (no flow has an L3 master
/// device: `l3mdev_fib_rule_match`).
pub(crate) fn rule_matches(fib: &Fib, rule: &Rule, flow: &Flow) -> bool {
    let family = Family::of(&flow.dst);
    let matched = iface_matches(fib, &rule.iif, flow.iif)
        && (rule.oif.is_none() || iface_matches(fib, &rule.oif, flow.oif))
        && rule
            .fwmark
            .is_none_or(|(mark, mask)| (mark ^ flow.mark) & mask == 0)
        && rule.tun_id == 0
        && !rule.l3mdev
        && rule
            .uid_range
            .is_none_or(|(start, end)| (start..=end).contains(&flow.uid))
        && source_matches(rule, flow, family)
        && prefix_holds(&rule.to, Some(flow.dst), family)
        && (rule.tos == 0 || rule.tos == flow.tos)
        && (rule.ip_proto == 0 || rule.ip_proto == flow.proto)
        && port_matches(rule.sport_range, flow.sport)
        && port_matches(rule.dport_range, flow.dport);
    matched != rule.invert
}
