//! `ip route show cache`: the route cache's path MTU exceptions, one
//! cloned route each, as iproute2 prints the kernel's dump.

use std::fmt::Write;
use std::net::IpAddr;

use fibre_fib::{Family, Fib, Protocol, RouteGetRequest};
use fibre_route::NexthopKey;
use serde_json::{json, Map, Value};

use super::get::CacheInfo;
use super::DeviceNames;

/// The nexthop's gateway as an address of `family`, if it has one.
fn gateway(key: &NexthopKey, family: Family) -> Option<IpAddr> {
    match (key.gateway, family) {
        (0, _) => None,
        (g, Family::V4) => Some(IpAddr::from((g as u32).to_be_bytes())),
        (g, Family::V6) => Some(IpAddr::from(g.to_be_bytes())),
    }
}

/// The metric and protocol of the FIB route an IPv6 exception clones.
fn parent_v6(fib: &Fib, dst: IpAddr) -> Option<(u32, Protocol)> {
    let answer = fib.route_get(&RouteGetRequest::to(dst)).ok()?;
    Some((answer.route.metric, answer.route.protocol))
}

/// One exception as `ip route show cache` prints it: IPv4 on two lines
/// (`DST via GW dev DEV ` then `    cache expires Nsec mtu M `), IPv6 on
/// one (the clone keeps its parent's protocol and metric).
pub fn cache_text(fib: &Fib, key: &NexthopKey, dst: IpAddr, info: &CacheInfo) -> String {
    let family = Family::of(&dst);
    let mut out = format!("{dst} ");
    if let Some(gw) = gateway(key, family) {
        let _ = write!(out, "via {gw} ");
    }
    let _ = write!(out, "dev {} ", fib.dev_name(key.dev));
    let lock = if info.mtu_locked { "lock " } else { "" };
    match family {
        Family::V4 => {
            let _ = write!(
                out,
                "\n    cache expires {}sec mtu {lock}{} ",
                info.expires_sec, info.mtu
            );
        }
        Family::V6 => {
            if let Some((metric, protocol)) = parent_v6(fib, dst) {
                if protocol != Protocol::BOOT {
                    let _ = write!(out, "proto {} ", protocol.name());
                }
                let _ = write!(out, "metric {metric} ");
            }
            let _ = write!(
                out,
                "expires {}sec mtu {lock}{} pref medium",
                info.expires_sec, info.mtu
            );
        }
    }
    out.push('\n');
    out
}

/// One exception as an `ip -j route show cache` object.
pub fn cache_json(fib: &Fib, key: &NexthopKey, dst: IpAddr, info: &CacheInfo) -> Value {
    let family = Family::of(&dst);
    let mut obj = Map::new();
    obj.insert("dst".into(), json!(dst.to_string()));
    if let Some(gw) = gateway(key, family) {
        obj.insert("gateway".into(), json!(gw.to_string()));
    }
    obj.insert("dev".into(), json!(fib.dev_name(key.dev)));
    if family == Family::V6 {
        if let Some((metric, protocol)) = parent_v6(fib, dst) {
            if protocol != Protocol::BOOT {
                obj.insert("protocol".into(), json!(protocol.name()));
            }
            obj.insert("metric".into(), json!(metric));
        }
    }
    obj.insert("flags".into(), json!([]));
    if family == Family::V4 {
        obj.insert("cache".into(), json!([]));
    }
    obj.insert("expires".into(), json!(info.expires_sec));
    obj.insert("metrics".into(), json!([{ "mtu": info.mtu }]));
    if family == Family::V6 {
        obj.insert("pref".into(), json!("medium"));
    }
    Value::Object(obj)
}
