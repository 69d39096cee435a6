//! `ip rule show` lines (iproute2's `print_rule`).

use std::fmt::Write;

use fibre_fib::{Prefix, Protocol, Rule, RuleAction};
use serde_json::{json, Map, Value};

use super::{addr_len, dsfield};

/// Whether a device of this name exists now (rules may name absent ones:
/// `ip` marks them `[detached]`).
pub type DeviceExists<'a> = &'a dyn Fn(&str) -> bool;

fn selector(prefix: &Prefix) -> String {
    addr_len(prefix.addr(), prefix.len())
}

/// `ip rule` omits the protocol when it is unspec or kernel.
fn shows_protocol(protocol: Protocol) -> bool {
    protocol != Protocol::UNSPEC && protocol != Protocol::KERNEL
}

/// One rule as `ip rule show` prints it, newline included.
pub fn rule_text(rule: &Rule, exists: DeviceExists<'_>) -> String {
    let mut out = format!("{}:\t", rule.priority);
    if rule.invert {
        out.push_str("not ");
    }
    match &rule.from {
        Some(p) => {
            let _ = write!(out, "from {}", selector(p));
        }
        None => out.push_str("from all"),
    }
    if let Some(p) = &rule.to {
        let _ = write!(out, " to {}", selector(p));
    }
    if rule.tos != 0 {
        let _ = write!(out, " tos {}", dsfield(rule.tos));
    }
    if let Some((mark, mask)) = rule.fwmark {
        if mask == u32::MAX {
            let _ = write!(out, " fwmark {mark:#x}");
        } else {
            let _ = write!(out, " fwmark {mark:#x}/{mask:#x}");
        }
    }
    for (word, dev) in [("iif", &rule.iif), ("oif", &rule.oif)] {
        if let Some(dev) = dev {
            let _ = write!(out, " {word} {dev}");
            if !exists(dev) {
                out.push_str(" [detached]");
            }
        }
    }
    match rule.action {
        RuleAction::Lookup(table) => {
            let _ = write!(out, " lookup {}", fibre_fib::table_name(table));
            if let Some(len) = rule.suppress_prefixlength {
                let _ = write!(out, " suppress_prefixlength {len}");
            }
            if let Some(group) = rule.suppress_ifgroup {
                let _ = write!(out, " suppress_ifgroup {}", group_name(group));
            }
        }
        RuleAction::Goto(target) => {
            let _ = write!(out, " goto {target}");
        }
        RuleAction::Nop => out.push_str(" nop"),
        RuleAction::Blackhole => out.push_str(" blackhole"),
        RuleAction::Unreachable => out.push_str(" unreachable"),
        RuleAction::Prohibit => out.push_str(" prohibit"),
    }
    if shows_protocol(rule.protocol) {
        let _ = write!(out, " proto {}", rule.protocol.name());
    }
    out.push('\n');
    out
}

/// One rule as `ip -j rule show` prints it.
pub fn rule_json(rule: &Rule, exists: DeviceExists<'_>) -> Value {
    let mut obj = Map::new();
    obj.insert("priority".into(), json!(rule.priority));
    if rule.invert {
        obj.insert("not".into(), Value::Null);
    }
    match &rule.from {
        Some(p) => {
            obj.insert("src".into(), json!(p.addr().to_string()));
            if p.len() != p.family().bits() {
                obj.insert("srclen".into(), json!(p.len()));
            }
        }
        None => {
            obj.insert("src".into(), json!("all"));
        }
    }
    if let Some(p) = &rule.to {
        obj.insert("dst".into(), json!(p.addr().to_string()));
        if p.len() != p.family().bits() {
            obj.insert("dstlen".into(), json!(p.len()));
        }
    }
    if rule.tos != 0 {
        obj.insert("tos".into(), json!(dsfield(rule.tos)));
    }
    if let Some((mark, mask)) = rule.fwmark {
        obj.insert("fwmark".into(), json!(format!("{mark:#x}")));
        if mask != u32::MAX {
            obj.insert("fwmask".into(), json!(format!("{mask:#x}")));
        }
    }
    for (word, dev) in [("iif", &rule.iif), ("oif", &rule.oif)] {
        if let Some(dev) = dev {
            obj.insert(word.into(), json!(dev));
            if !exists(dev) {
                obj.insert(format!("{word}_detached"), Value::Null);
            }
        }
    }
    match rule.action {
        RuleAction::Lookup(table) => {
            obj.insert("table".into(), json!(fibre_fib::table_name(table)));
            if let Some(len) = rule.suppress_prefixlength {
                obj.insert("suppress_prefixlen".into(), json!(len));
            }
            if let Some(group) = rule.suppress_ifgroup {
                obj.insert("suppress_ifgroup".into(), json!(group_name(group)));
            }
        }
        RuleAction::Goto(target) => {
            obj.insert("goto".into(), json!(target));
        }
        RuleAction::Nop => {
            obj.insert("action".into(), json!("nop"));
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
        }
    }

    fn prefix(s: &str) -> Prefix {
        let (a, l) = s.split_once('/').unwrap();
        Prefix::new(a.parse().unwrap(), l.parse().unwrap()).unwrap()
    }

    const ONLY_ETH0: &dyn Fn(&str) -> bool = &|name| name == "eth0";

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
