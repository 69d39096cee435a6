//! `fibre monitor --netns NAME [route] [rule]` and `fibre route monitor
//! --netns NAME`: the changes of a followed namespace's FIB printed as
//! `ip monitor` prints them: a route or rule that appeared as `ip route
//! show` / `ip rule show` print it, one that went with `Deleted ` before
//! it; with `-j`, one JSON object a line (the `-j route show` object, with
//! `"deleted": true` for one that went: `ip -j monitor` prints text).
//!
//! The changes are those of fibre's FIB after each batch of notifications
//! (and after a resync), found by comparing the state before and after:
//! so the withdrawals the kernel makes without a notification (routes
//! over a link that went down, over a deleted nexthop object) are printed
//! too, which `ip monitor` cannot show; a route whose flags changed (a
//! path turned `linkdown`) is printed as deleted and added again. The
//! comparison walks the whole FIB per batch: this is a tool to watch a
//! router, not a feed at the rate of a full table.
//!
//! ```text
//! fibre monitor --netns B route rule
//! fibre -j route monitor --netns B --seconds 10
//! ```

use std::collections::HashMap;
use std::io::Write;

use anyhow::Result;
use clap::Args;
use fibre_fib::{Family, Fib};
use serde_json::Value;

use crate::format::route::{route_json, route_text, RouteStyle};
use crate::format::rule::{rule_json, rule_text, RuleContext};

/// `fibre monitor`'s options.
#[derive(Debug, Args)]
pub struct MonitorArgs {
    /// The network namespace to follow (see `fibre follow`).
    #[arg(long = "netns", value_name = "NAME")]
    pub netns: String,
    /// Stop after this many seconds (0: until SIGINT).
    #[arg(long = "seconds", default_value_t = 0)]
    pub seconds: u64,
    /// The event socket's receive buffer in bytes (SO_RCVBUFFORCE).
    #[arg(long = "rcvbuf", default_value_t = 64 << 20)]
    pub rcvbuf: usize,
    /// What to print: route, rule (all of them when none is given).
    #[arg(value_name = "OBJECT")]
    pub objects: Vec<String>,
}

/// What a monitor prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watch {
    /// One JSON object a line.
    pub json: bool,
    /// Route changes.
    pub routes: bool,
    /// Rule changes.
    pub rules: bool,
}

impl Watch {
    /// The objects named on the command line (`route`, `rule`; none: all).
    pub fn of(objects: &[String], json: bool) -> Result<Watch> {
        let mut watch = Watch {
            json,
            routes: objects.is_empty(),
            rules: objects.is_empty(),
        };
        for object in objects {
            match object.as_str() {
                "route" | "r" | "ro" => watch.routes = true,
                "rule" | "ru" => watch.rules = true,
                other => anyhow::bail!(
                    "monitor: expected route or rule, got \"{other}\" (links, addresses, \
                     neighbours and nexthop objects are not printed yet)"
                ),
            }
        }
        Ok(watch)
    }
}

/// One printed object: its text line (its identity) and its JSON.
type Printed = (String, Value);

/// Prints what changed from `before` to `after`: what went first, then
/// what came, each in the order `show` lists them.
pub fn print_changes(watch: Watch, before: &Fib, after: &Fib, out: &mut dyn Write) -> Result<()> {
    let mut went = Vec::new();
    let mut came = Vec::new();
    if watch.routes {
        let (old, new) = (routes(before), routes(after));
        difference(&old, &new, &mut went);
        difference(&new, &old, &mut came);
    }
    if watch.rules {
        let (old, new) = (rules(before), rules(after));
        difference(&old, &new, &mut went);
        difference(&new, &old, &mut came);
    }
    for ((text, mut json), deleted) in went
        .into_iter()
        .map(|p| (p, true))
        .chain(came.into_iter().map(|p| (p, false)))
    {
        if watch.json {
            if let (Value::Object(map), true) = (&mut json, deleted) {
                map.insert("deleted".into(), Value::Bool(true));
            }
            writeln!(out, "{json}")?;
        } else {
            let prefix = if deleted { "Deleted " } else { "" };
            write!(out, "{prefix}{text}")?;
            if !text.ends_with('\n') {
                writeln!(out)?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// The items of `from` that `other` lacks, counting repeats.
fn difference(from: &[Printed], other: &[Printed], into: &mut Vec<Printed>) {
    let mut left: HashMap<&str, usize> = HashMap::new();
    for (text, _) in other {
        *left.entry(text.as_str()).or_insert(0) += 1;
    }
    for item in from {
        match left.get_mut(item.0.as_str()) {
            Some(n) if *n > 0 => *n -= 1,
            _ => into.push(item.clone()),
        }
    }
}

fn routes(fib: &Fib) -> Vec<Printed> {
    let style = RouteStyle { show_table: true };
    [Family::V4, Family::V6]
        .iter()
        .flat_map(|&f| fib.routes(f, None))
        .map(|r| (route_text(fib, r, style), route_json(fib, r, style)))
        .collect()
}

fn rules(fib: &Fib) -> Vec<Printed> {
    let mut all = Vec::new();
    for family in [Family::V4, Family::V6] {
        let device_exists = |name: &str| fib.link_by_name(name).is_some();
        let priority_exists =
            |priority: u32| fib.rules(family).iter().any(|r| r.priority == priority);
        let context = RuleContext {
            device_exists: &device_exists,
            priority_exists: &priority_exists,
        };
        all.extend(
            fib.rules(family)
                .iter()
                .map(|r| (rule_text(r, context), rule_json(r, context))),
        );
    }
    all
}
