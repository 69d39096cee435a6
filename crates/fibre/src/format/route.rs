//! `ip route show` lines (iproute2's `print_route` for FIB entries).

use std::fmt::Write;

use fibre_fib::{Family, Nexthop, Protocol, Route, RouteMetrics, RouteType, Scope, TABLE_MAIN};
use serde_json::{json, Map, Value};

use super::{dsfield, nexthop_flag_words, DeviceNames};

/// How a route list was selected: `ip` names the table only when it
/// listed more than one (`table all`).
#[derive(Debug, Clone, Copy)]
pub struct RouteStyle {
    /// Print `table T` for routes outside main.
    pub show_table: bool,
}

/// One route as `ip route show` prints it, newline included.
pub fn route_text(names: &dyn DeviceNames, route: &Route, style: RouteStyle) -> String {
    let mut out = String::new();
    if route.kind != RouteType::Unicast {
        let _ = write!(out, "{} ", route.kind.name());
    }
    let _ = write!(out, "{} ", route.dst);
    if route.tos != 0 {
        let _ = write!(out, "tos {} ", dsfield(route.tos));
    }
    let single = single_path(route);
    if let Some(nh) = single {
        path_text(names, route, nh, &mut out);
    }
    if style.show_table && route.table != TABLE_MAIN {
        let _ = write!(out, "table {} ", fibre_fib::table_name(route.table));
    }
    if route.protocol != Protocol::BOOT {
        let _ = write!(out, "proto {} ", route.protocol.name());
    }
    if route.scope != Scope::UNIVERSE {
        let _ = write!(out, "scope {} ", route.scope.name());
    }
    if let Some(src) = route.prefsrc {
        let _ = write!(out, "src {src} ");
    }
    if has_metric(route) {
        let _ = write!(out, "metric {} ", route.metric);
    }
    if let Some(nh) = single {
        for word in nexthop_flag_words(&nh.flags) {
            let _ = write!(out, "{word} ");
        }
    }
    if let Some(mtu) = route.mtu {
        let lock = if route.mtu_lock { "lock " } else { "" };
        let _ = write!(out, "mtu {lock}{mtu} ");
    }
    for (number, value, locked) in route.metrics.shown() {
        let lock = if locked { "lock " } else { "" };
        let _ = write!(
            out,
            "{} {lock}{} ",
            RouteMetrics::name(number),
            metric_text(number, value)
        );
    }
    if route.family() == Family::V6 {
        // RTA_PREF comes before RTA_MULTIPATH's lines (kernel-checked with
        // iproute2 6.1: `metric 1024 pref medium`, then the nexthops).
        out.push_str("pref medium");
    }
    if single.is_none() && !route.nexthops.is_empty() {
        for nh in &route.nexthops {
            out.push_str("\n\tnexthop ");
            path_text(names, route, nh, &mut out);
            let _ = write!(out, "weight {} ", nh.weight);
            for word in nexthop_flag_words(&nh.flags) {
                let _ = write!(out, "{word} ");
            }
        }
    }
    out.push('\n');
    out
}

/// A time metric in milliseconds as `print_rta_metrics` shows it (rtt is
/// kept in eighths, rttvar in quarters); any other metric as it is.
fn metric_millis(number: u8, value: u32) -> u32 {
    match number {
        RouteMetrics::RTT => value / 8,
        RouteMetrics::RTTVAR => value / 4,
        _ => value,
    }
}

/// A metric's value as `print_rta_metrics` prints it: times as `5ms` or,
/// from a second on, `%g` seconds (`1.5s`); `features` by name.
fn metric_text(number: u8, value: u32) -> String {
    match number {
        RouteMetrics::RTT | RouteMetrics::RTTVAR | RouteMetrics::RTO_MIN => {
            let millis = metric_millis(number, value);
            if millis >= 1000 {
                format!("{}s", printf_g(f64::from(millis) / 1e3))
            } else {
                format!("{millis}ms")
            }
        }
        RouteMetrics::FEATURES => {
            let rest = value & !1;
            match (value & 1 != 0, rest != 0) {
                (true, false) => "ecn".to_string(),
                (true, true) => format!("ecn {value:#x}"),
                _ => format!("{value:#x}"),
            }
        }
        _ => value.to_string(),
    }
}

/// C's `%g`: six significant digits, trailing zeros dropped, an exponent
/// from 1e6 on.
fn printf_g(x: f64) -> String {
    let exponent = x.abs().log10().floor() as i32;
    if x != 0.0 && !(-4..6).contains(&exponent) {
        let mantissa = format!("{:.5}", x / 10f64.powi(exponent));
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        return format!(
            "{mantissa}e{}{:02}",
            if exponent < 0 { '-' } else { '+' },
            exponent.abs()
        );
    }
    let decimals = (5 - exponent).max(0) as usize;
    let fixed = format!("{x:.decimals$}");
    if fixed.contains('.') {
        fixed
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        fixed
    }
}

/// One route as `ip -j route show` prints it.
pub fn route_json(names: &dyn DeviceNames, route: &Route, style: RouteStyle) -> Value {
    let mut obj = Map::new();
    if route.kind != RouteType::Unicast {
        obj.insert("type".into(), json!(route.kind.name()));
    }
    obj.insert("dst".into(), json!(route.dst.to_string()));
    if route.tos != 0 {
        obj.insert("tos".into(), json!(dsfield(route.tos)));
    }
    let single = single_path(route);
    if let Some(nh) = single {
        path_json(names, route, nh, &mut obj);
    }
    if style.show_table && route.table != TABLE_MAIN {
        obj.insert("table".into(), json!(fibre_fib::table_name(route.table)));
    }
    if route.protocol != Protocol::BOOT {
        obj.insert("protocol".into(), json!(route.protocol.name()));
    }
    if route.scope != Scope::UNIVERSE {
        obj.insert("scope".into(), json!(route.scope.name()));
    }
    if let Some(src) = route.prefsrc {
        obj.insert("prefsrc".into(), json!(src.to_string()));
    }
    if has_metric(route) {
        obj.insert("metric".into(), json!(route.metric));
    }
    let flags = single
        .map(|nh| nexthop_flag_words(&nh.flags))
        .unwrap_or_default();
    obj.insert("flags".into(), json!(flags));
    if route.mtu.is_some() || route.metrics.shown().next().is_some() {
        let mut metrics = Map::new();
        if let Some(mtu) = route.mtu {
            metrics.insert("mtu".into(), json!(mtu));
        }
        for (number, value, _) in route.metrics.shown() {
            match number {
                RouteMetrics::FEATURES if value & 1 != 0 => {
                    metrics.insert("ecn".into(), Value::Null);
                }
                RouteMetrics::FEATURES => {
                    metrics.insert("features".into(), json!(format!("{value:#x}")));
                }
                _ => {
                    metrics.insert(
                        RouteMetrics::name(number).into(),
                        json!(metric_millis(number, value)),
                    );
                }
            }
        }
        obj.insert("metrics".into(), json!([Value::Object(metrics)]));
    }
    if single.is_none() && !route.nexthops.is_empty() {
        let paths: Vec<Value> = route
            .nexthops
            .iter()
            .map(|nh| {
                let mut path = Map::new();
                path_json(names, route, nh, &mut path);
                path.insert("weight".into(), json!(nh.weight));
                path.insert("flags".into(), json!(nexthop_flag_words(&nh.flags)));
                Value::Object(path)
            })
            .collect();
        obj.insert("nexthops".into(), Value::Array(paths));
    }
    if route.family() == Family::V6 {
        obj.insert("pref".into(), json!("medium"));
    }
    Value::Object(obj)
}

/// The one path of a route that the kernel reports without RTA_MULTIPATH.
fn single_path(route: &Route) -> Option<&Nexthop> {
    match route.nexthops.as_slice() {
        [only] => Some(only),
        _ => None,
    }
}

/// IPv4 sends RTA_PRIORITY only when non-zero; IPv6 always.
fn has_metric(route: &Route) -> bool {
    route.family() == Family::V6 || route.metric != 0
}

/// `via [inet6] GW dev D ` of one path.
pub(crate) fn path_text(names: &dyn DeviceNames, route: &Route, nh: &Nexthop, out: &mut String) {
    if let Some(gw) = nh.gateway {
        if Family::of(&gw) != route.family() {
            let _ = write!(out, "via inet6 {gw} ");
        } else {
            let _ = write!(out, "via {gw} ");
        }
    }
    if let Some(dev) = nh.dev {
        let _ = write!(out, "dev {} ", names.dev_name(dev));
    }
}

/// `gateway`/`via` and `dev` of one path in JSON.
pub(crate) fn path_json(
    names: &dyn DeviceNames,
    route: &Route,
    nh: &Nexthop,
    obj: &mut Map<String, Value>,
) {
    if let Some(gw) = nh.gateway {
        if Family::of(&gw) != route.family() {
            obj.insert(
                "via".into(),
                json!({ "family": "inet6", "host": gw.to_string() }),
            );
        } else {
            obj.insert("gateway".into(), json!(gw.to_string()));
        }
    }
    if let Some(dev) = nh.dev {
        obj.insert("dev".into(), json!(names.dev_name(dev)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::fixtures::{names, path, route_to};
    use fibre_fib::{Prefix, TABLE_LOCAL};

    fn route(dst: &str, nexthops: Vec<Nexthop>) -> Route {
        let (a, l) = dst.split_once('/').unwrap();
        route_to(
            Prefix::new(a.parse().unwrap(), l.parse().unwrap()).unwrap(),
            nexthops,
        )
    }

    /// A route the kernel adds for 10.0.0.1 on eth0 (`fib_add_ifaddr`):
    /// protocol kernel, the address as preferred source.
    fn ifaddr_route(dst: &str, scope: Scope) -> Route {
        let mut r = route(dst, vec![path(None, Some(3), 1)]);
        r.protocol = Protocol::KERNEL;
        r.scope = scope;
        r.prefsrc = Some("10.0.0.1".parse().unwrap());
        r
    }

    /// `ip route show`'s line and `ip -j route show`'s object for `r`.
    fn assert_shown(r: &Route, style: RouteStyle, text: &str, json: &str) {
        assert_eq!(route_text(&names(), r, style), text);
        assert_eq!(route_json(&names(), r, style).to_string(), json);
    }

    const MAIN_ONLY: RouteStyle = RouteStyle { show_table: false };
    const ALL: RouteStyle = RouteStyle { show_table: true };

    // Expected strings are `ip route show` / `ip -j route show` output of
    // iproute2 6.1 on Linux for the same routes.

    #[test]
    fn connected_route() {
        let mut r = ifaddr_route("10.0.0.0/24", Scope::LINK);
        assert_shown(
            &r,
            MAIN_ONLY,
            "10.0.0.0/24 dev eth0 proto kernel scope link src 10.0.0.1 \n",
            r#"{"dst":"10.0.0.0/24","dev":"eth0","protocol":"kernel","scope":"link","prefsrc":"10.0.0.1","flags":[]}"#,
        );
        r.nexthops[0].flags.linkdown = true;
        r.metric = 5;
        assert_eq!(
            route_text(&names(), &r, MAIN_ONLY),
            "10.0.0.0/24 dev eth0 proto kernel scope link src 10.0.0.1 metric 5 linkdown \n"
        );
    }

    #[test]
    fn gateway_route_with_metric_and_mtu() {
        let mut r = route("10.21.0.0/16", vec![path(Some("10.0.0.2"), Some(3), 1)]);
        r.protocol = Protocol::STATIC;
        r.prefsrc = Some("10.0.0.1".parse().unwrap());
        r.metric = 100;
        r.mtu = Some(1400);
        assert_shown(
            &r,
            MAIN_ONLY,
            "10.21.0.0/16 via 10.0.0.2 dev eth0 proto static src 10.0.0.1 metric 100 mtu 1400 \n",
            r#"{"dst":"10.21.0.0/16","gateway":"10.0.0.2","dev":"eth0","protocol":"static","prefsrc":"10.0.0.1","metric":100,"flags":[],"metrics":[{"mtu":1400}]}"#,
        );
    }

    #[test]
    fn multipath_route() {
        let r = route(
            "10.20.0.0/16",
            vec![
                path(Some("10.0.0.2"), Some(3), 2),
                path(Some("10.0.0.3"), Some(3), 1),
            ],
        );
        assert_shown(
            &r,
            MAIN_ONLY,
            "10.20.0.0/16 \n\tnexthop via 10.0.0.2 dev eth0 weight 2 \n\tnexthop via 10.0.0.3 dev eth0 weight 1 \n",
            r#"{"dst":"10.20.0.0/16","flags":[],"nexthops":[{"gateway":"10.0.0.2","dev":"eth0","weight":2,"flags":[]},{"gateway":"10.0.0.3","dev":"eth0","weight":1,"flags":[]}]}"#,
        );
    }

    #[test]
    fn typed_routes_and_tables() {
        let mut r = route("10.8.0.0/16", vec![]);
        r.kind = RouteType::Blackhole;
        assert_shown(
            &r,
            MAIN_ONLY,
            "blackhole 10.8.0.0/16 \n",
            r#"{"type":"blackhole","dst":"10.8.0.0/16","flags":[]}"#,
        );
        let mut r = ifaddr_route("10.0.0.1/32", Scope::HOST);
        r.kind = RouteType::Local;
        r.table = TABLE_LOCAL;
        assert_shown(
            &r,
            ALL,
            "local 10.0.0.1 dev eth0 table local proto kernel scope host src 10.0.0.1 \n",
            r#"{"type":"local","dst":"10.0.0.1","dev":"eth0","table":"local","protocol":"kernel","scope":"host","prefsrc":"10.0.0.1","flags":[]}"#,
        );
        let mut r = route("10.23.0.0/16", vec![path(Some("10.0.0.2"), Some(3), 1)]);
        r.table = 100;
        assert_eq!(
            route_text(&names(), &r, ALL),
            "10.23.0.0/16 via 10.0.0.2 dev eth0 table 100 \n"
        );
        assert_eq!(
            route_text(&names(), &r, MAIN_ONLY),
            "10.23.0.0/16 via 10.0.0.2 dev eth0 \n"
        );
    }

    #[test]
    fn ipv6_routes_always_print_metric_and_pref() {
        let mut r = route(
            "2001:db8:1::/48",
            vec![path(Some("2001:db8::2"), Some(3), 1)],
        );
        r.metric = 1024;
        assert_shown(
            &r,
            MAIN_ONLY,
            "2001:db8:1::/48 via 2001:db8::2 dev eth0 metric 1024 pref medium\n",
            r#"{"dst":"2001:db8:1::/48","gateway":"2001:db8::2","dev":"eth0","metric":1024,"flags":[],"pref":"medium"}"#,
        );
    }

    #[test]
    fn ipv6_multipath_routes_print_pref_before_their_nexthops() {
        let mut r = route(
            "2001:db8:9::/48",
            vec![
                path(Some("fe80::1"), Some(3), 1),
                path(Some("fe80::2"), Some(3), 3),
            ],
        );
        r.metric = 1024;
        assert_eq!(
            route_text(&names(), &r, MAIN_ONLY),
            "2001:db8:9::/48 metric 1024 pref medium\n\
             \tnexthop via fe80::1 dev eth0 weight 1 \n\
             \tnexthop via fe80::2 dev eth0 weight 3 \n"
        );
    }

    #[test]
    fn default_route_and_onlink_and_ipv6_gateway() {
        let mut r = route("0.0.0.0/0", vec![path(Some("10.0.0.7"), Some(3), 1)]);
        r.nexthops[0].flags.onlink = true;
        assert_eq!(
            route_text(&names(), &r, MAIN_ONLY),
            "default via 10.0.0.7 dev eth0 onlink \n"
        );
        let r = route("10.41.0.0/16", vec![path(Some("fe80::1"), Some(3), 1)]);
        assert_shown(
            &r,
            MAIN_ONLY,
            "10.41.0.0/16 via inet6 fe80::1 dev eth0 \n",
            r#"{"dst":"10.41.0.0/16","via":{"family":"inet6","host":"fe80::1"},"dev":"eth0","flags":[]}"#,
        );
    }

    #[test]
    fn unknown_device_index_prints_like_ip() {
        let r = route("10.0.0.0/8", vec![path(None, Some(9), 1)]);
        assert_eq!(route_text(&names(), &r, MAIN_ONLY), "10.0.0.0/8 dev if9 \n");
    }
}
