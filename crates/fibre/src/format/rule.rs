//! `ip rule show` lines (iproute2's `print_rule`).

use std::fmt::Write;
use std::net::IpAddr;

use fibre_fib::{Prefix, Protocol, RouteType, Rule, RuleAction, TABLE_UNSPEC};
use serde_json::{json, Map, Value};

use super::{addr_len, dsfield};

/// Whether a device of this name exists now (rules may name absent ones:
/// `ip` marks them `[detached]`).
pub type DeviceExists<'a> = &'a dyn Fn(&str) -> bool;

/// Whether a rule of this priority is in the rule's family now: a goto to
/// a priority no rule has is `[unresolved]` (`FIB_RULE_UNRESOLVED`).
pub type PriorityExists<'a> = &'a dyn Fn(u32) -> bool;

/// What `ip rule show` needs to know beyond the rule itself.
#[derive(Clone, Copy)]
pub struct RuleContext<'a> {
    /// See [`DeviceExists`].
    pub device_exists: DeviceExists<'a>,
    /// See [`PriorityExists`].
    pub priority_exists: PriorityExists<'a>,
}

/// A selector as the kernel keeps it: the address as given, the length.
fn selector(addr: IpAddr, prefix: &Prefix) -> String {
    addr_len(addr, prefix.len())
}

/// `ip rule` omits the protocol when it is unspec or kernel.
fn shows_protocol(protocol: Protocol) -> bool {
    protocol != Protocol::UNSPEC && protocol != Protocol::KERNEL
}

/// C's `%#llx`, which `print_0xhex` uses: no `0x` before a zero.
fn c_hex(value: u32) -> String {
    if value == 0 {
        "0".into()
    } else {
        format!("{value:#x}")
    }
}

/// `rtnl_rtrealm_n2a` with iproute2's shipped `rt_realms` (0 is `cosmos`).
fn realm_name(realm: u32) -> String {
    if realm == 0 {
        "cosmos".into()
    } else {
        realm.to_string()
    }
}

/// `rtnl_rtntype_n2a`: how `ip rule` names an action number it has no
/// word of its own for.
fn action_number_name(number: u8) -> String {
    match number {
        0 => "none".into(),
        10 => "nat".into(),
        11 => "xresolve".into(),
        n => match RouteType::from_number(n) {
            Some(kind) => kind.name().into(),
            None => n.to_string(),
        },
    }
}

/// RTN_NAT as a rule action: the kernel keeps no gateway, so `ip` shows
/// `masquerade`.
const ACTION_NAT: u8 = 10;

/// One rule as `ip rule show` prints it (iproute2 6.1's `print_rule`,
/// field by field in its order), newline included.
pub fn rule_text(rule: &Rule, context: RuleContext<'_>) -> String {
    let mut out = format!("{}:\t", rule.priority);
    if rule.invert {
        out.push_str("not ");
    }
    match (&rule.from, rule.from_addr()) {
        (Some(p), Some(addr)) => {
            let _ = write!(out, "from {}", selector(addr, p));
        }
        _ => out.push_str("from all"),
    }
    if let (Some(p), Some(addr)) = (&rule.to, rule.to_addr()) {
        let _ = write!(out, " to {}", selector(addr, p));
    }
    if rule.tos != 0 {
        let _ = write!(out, " tos {}", dsfield(rule.tos));
    }
    if let Some((mark, mask)) = rule.fwmark {
        if mask == u32::MAX {
            let _ = write!(out, " fwmark {}", c_hex(mark));
        } else {
            let _ = write!(out, " fwmark {}/{}", c_hex(mark), c_hex(mask));
        }
    }
    for (word, dev) in [("iif", &rule.iif), ("oif", &rule.oif)] {
        if let Some(dev) = dev {
            let _ = write!(out, " {word} {dev}");
            if !(context.device_exists)(dev) {
                out.push_str(" [detached]");
            }
        }
    }
    if rule.l3mdev {
        out.push_str(" lookup [l3mdev-table]");
    }
    if let Some((start, end)) = rule.uid_range {
        let _ = write!(out, " uidrange {start}-{end}");
    }
    if rule.ip_proto != 0 {
        let _ = write!(
            out,
            " ipproto {}",
            fibre_fib::config::ip_protocol_name(rule.ip_proto)
        );
    }
    for (word, range) in [("sport", rule.sport_range), ("dport", rule.dport_range)] {
        match range {
            Some((start, end)) if start == end => {
                let _ = write!(out, " {word} {start}");
            }
            Some((start, end)) => {
                let _ = write!(out, " {word} {start}-{end}");
            }
            None => {}
        }
    }
    if rule.tun_id != 0 {
        let _ = write!(out, " tun_id {}", rule.tun_id);
    }
    let table = rule.table();
    if table != TABLE_UNSPEC {
        let _ = write!(out, " lookup {}", fibre_fib::table_name(table));
        if let Some(len) = rule.suppress_prefixlength {
            let _ = write!(out, " suppress_prefixlength {len}");
        }
        if let Some(group) = rule.suppress_ifgroup {
            let _ = write!(out, " suppress_ifgroup {}", group_name(group));
        }
    }
    if rule.realms != 0 {
        let (from, to) = (rule.realms >> 16, rule.realms & 0xffff);
        if from != 0 {
            let _ = write!(out, " realms {}/{}", realm_name(from), realm_name(to));
        } else {
            let _ = write!(out, " realms {}", realm_name(to));
        }
    }
    match rule.action {
        RuleAction::Lookup(_) => {}
        RuleAction::Goto(target) => {
            let _ = write!(out, " goto {target}");
            if !(context.priority_exists)(target) {
                out.push_str(" [unresolved]");
            }
        }
        RuleAction::Nop => out.push_str(" nop"),
        RuleAction::Blackhole => out.push_str(" blackhole"),
        RuleAction::Unreachable => out.push_str(" unreachable"),
        RuleAction::Prohibit => out.push_str(" prohibit"),
        RuleAction::Other(ACTION_NAT) => out.push_str(" masquerade"),
        RuleAction::Other(number) => {
            let _ = write!(out, " {}", action_number_name(number));
        }
    }
    if shows_protocol(rule.protocol) {
        let _ = write!(out, " proto {}", rule.protocol.name());
    }
    out.push('\n');
    out
}

/// One rule as `ip -j rule show` prints it (`print_rule`'s JSON keys).
pub fn rule_json(rule: &Rule, context: RuleContext<'_>) -> Value {
    let mut obj = Map::new();
    obj.insert("priority".into(), json!(rule.priority));
    if rule.invert {
        obj.insert("not".into(), Value::Null);
    }
    match (&rule.from, rule.from_addr()) {
        (Some(p), Some(addr)) => {
            obj.insert("src".into(), json!(addr.to_string()));
            if p.len() != p.family().bits() {
                obj.insert("srclen".into(), json!(p.len()));
            }
        }
        _ => {
            obj.insert("src".into(), json!("all"));
        }
    }
    if let (Some(p), Some(addr)) = (&rule.to, rule.to_addr()) {
        obj.insert("dst".into(), json!(addr.to_string()));
        if p.len() != p.family().bits() {
            obj.insert("dstlen".into(), json!(p.len()));
        }
    }
    if rule.tos != 0 {
        obj.insert("tos".into(), json!(dsfield(rule.tos)));
    }
    if let Some((mark, mask)) = rule.fwmark {
        obj.insert("fwmark".into(), json!(c_hex(mark)));
        if mask != u32::MAX {
            obj.insert("fwmask".into(), json!(c_hex(mask)));
        }
    }
    for (word, dev) in [("iif", &rule.iif), ("oif", &rule.oif)] {
        if let Some(dev) = dev {
            obj.insert(word.into(), json!(dev));
            if !(context.device_exists)(dev) {
                obj.insert(format!("{word}_detached"), Value::Null);
            }
        }
    }
    if rule.l3mdev {
        obj.insert("l3mdev".into(), Value::Null);
    }
    if let Some((start, end)) = rule.uid_range {
        obj.insert("uid_start".into(), json!(start));
        obj.insert("uid_end".into(), json!(end));
    }
    if rule.ip_proto != 0 {
        obj.insert(
            "ipproto".into(),
            json!(fibre_fib::config::ip_protocol_name(rule.ip_proto)),
        );
    }
    for (word, range) in [("sport", rule.sport_range), ("dport", rule.dport_range)] {
        match range {
            Some((start, end)) if start == end => {
                obj.insert(word.into(), json!(start));
            }
            Some((start, end)) => {
                obj.insert(format!("{word}_start"), json!(start));
                obj.insert(format!("{word}_end"), json!(end));
            }
            None => {}
        }
    }
    if rule.tun_id != 0 {
        obj.insert("tun_id".into(), json!(rule.tun_id));
    }
    let table = rule.table();
    if table != TABLE_UNSPEC {
        obj.insert("table".into(), json!(fibre_fib::table_name(table)));
        if let Some(len) = rule.suppress_prefixlength {
            obj.insert("suppress_prefixlen".into(), json!(len));
        }
        if let Some(group) = rule.suppress_ifgroup {
            obj.insert("suppress_ifgroup".into(), json!(group_name(group)));
        }
    }
    if rule.realms != 0 {
        let (from, to) = (rule.realms >> 16, rule.realms & 0xffff);
        if from != 0 {
            obj.insert("flow_from".into(), json!(realm_name(from)));
        }
        obj.insert("flow_to".into(), json!(realm_name(to)));
    }
    match rule.action {
        RuleAction::Lookup(_) => {}
        RuleAction::Goto(target) => {
            obj.insert("goto".into(), json!(target));
            if !(context.priority_exists)(target) {
                obj.insert("unresolved".into(), Value::Null);
            }
        }
        RuleAction::Nop => {
            obj.insert("nop".into(), Value::Null);
        }
        RuleAction::Other(ACTION_NAT) => {
            obj.insert("masquerade".into(), Value::Null);
        }
        RuleAction::Blackhole => {
            obj.insert("action".into(), json!("blackhole"));
        }
        RuleAction::Unreachable => {
            obj.insert("action".into(), json!("unreachable"));
        }
        RuleAction::Prohibit => {
            obj.insert("action".into(), json!("prohibit"));
        }
        RuleAction::Other(number) => {
            obj.insert("action".into(), json!(action_number_name(number)));
        }
    }
    if shows_protocol(rule.protocol) {
        obj.insert("protocol".into(), json!(rule.protocol.name()));
    }
    Value::Object(obj)
}

/// Device group 0 is `default` (iproute2's `rtnl_group_n2a`).
fn group_name(group: u32) -> String {
    if group == 0 {
        "default".into()
    } else {
        group.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fibre_fib::{Family, TABLE_LOCAL, TABLE_MAIN};

    fn rule(priority: u32, action: RuleAction) -> Rule {
        Rule {
            family: Family::V4,
            priority,
            invert: false,
            from: None,
            to: None,
            iif: None,
            oif: None,
            fwmark: None,
            tos: 0,
            action,
            suppress_prefixlength: None,
            suppress_ifgroup: None,
            protocol: Protocol::KERNEL,
            table_beside_action: 0,
            l3mdev: false,
            uid_range: None,
            ip_proto: 0,
            sport_range: None,
            dport_range: None,
            tun_id: 0,
            realms: 0,
            written_addrs: (None, None),
        }
    }

    fn prefix(s: &str) -> Prefix {
        let (a, l) = s.split_once('/').unwrap();
        Prefix::new(a.parse().unwrap(), l.parse().unwrap()).unwrap()
    }

    /// Only eth0 exists, and only rules of priority 32766.
    const ONLY_ETH0: RuleContext<'static> = RuleContext {
        device_exists: &|name| name == "eth0",
        priority_exists: &|priority| priority == 32766,
    };

    // Expected strings are iproute2 6.1's output for the same rules.

    #[test]
    fn default_rules() {
        let r = rule(0, RuleAction::Lookup(TABLE_LOCAL));
        assert_eq!(rule_text(&r, ONLY_ETH0), "0:\tfrom all lookup local\n");
        assert_eq!(
            rule_json(&r, ONLY_ETH0).to_string(),
            r#"{"priority":0,"src":"all","table":"local"}"#
        );
    }

    #[test]
    fn every_selector() {
        let mut r = rule(10, RuleAction::Lookup(100));
        r.from = Some(prefix("10.0.0.0/8"));
        r.to = Some(prefix("10.1.0.0/16"));
        r.fwmark = Some((5, u32::MAX));
        r.iif = Some("eth9".into());
        r.oif = Some("eth0".into());
        r.suppress_ifgroup = Some(3);
        r.protocol = Protocol::STATIC;
        assert_eq!(
            rule_text(&r, ONLY_ETH0),
            "10:\tfrom 10.0.0.0/8 to 10.1.0.0/16 fwmark 0x5 iif eth9 [detached] oif eth0 lookup 100 suppress_ifgroup 3 proto static\n"
        );
        assert_eq!(
            rule_json(&r, ONLY_ETH0).to_string(),
            r#"{"priority":10,"src":"10.0.0.0","srclen":8,"dst":"10.1.0.0","dstlen":16,"fwmark":"0x5","iif":"eth9","iif_detached":null,"oif":"eth0","table":"100","suppress_ifgroup":"3","protocol":"static"}"#
        );
    }

    #[test]
    fn actions_and_inversion() {
        let mut r = rule(200, RuleAction::Goto(32766));
        r.invert = true;
        r.to = Some(prefix("10.0.0.0/8"));
        r.iif = Some("eth0".into());
        assert_eq!(
            rule_text(&r, ONLY_ETH0),
            "200:\tnot from all to 10.0.0.0/8 iif eth0 goto 32766\n"
        );
        assert_eq!(
            rule_json(&r, ONLY_ETH0).to_string(),
            r#"{"priority":200,"not":null,"src":"all","dst":"10.0.0.0","dstlen":8,"iif":"eth0","goto":32766}"#
        );
        let mut r = rule(400, RuleAction::Blackhole);
        r.tos = 0x10;
        assert_eq!(
            rule_text(&r, ONLY_ETH0),
            "400:\tfrom all tos 0x10 blackhole\n"
        );
        assert_eq!(
            rule_json(&r, ONLY_ETH0).to_string(),
            r#"{"priority":400,"src":"all","tos":"0x10","action":"blackhole"}"#
        );
        let mut r = rule(100, RuleAction::Lookup(100));
        r.fwmark = Some((0x10, 0xff));
        assert_eq!(
            rule_text(&r, ONLY_ETH0),
            "100:\tfrom all fwmark 0x10/0xff lookup 100\n"
        );
        let mut r = rule(300, RuleAction::Lookup(TABLE_MAIN));
        r.from = Some(prefix("10.0.0.0/8"));
        r.suppress_prefixlength = Some(0);
        assert_eq!(
            rule_text(&r, ONLY_ETH0),
            "300:\tfrom 10.0.0.0/8 lookup main suppress_prefixlength 0\n"
        );
        assert_eq!(
            rule_json(&r, ONLY_ETH0).to_string(),
            r#"{"priority":300,"src":"10.0.0.0","srclen":8,"table":"main","suppress_prefixlen":0}"#
        );
    }
}
