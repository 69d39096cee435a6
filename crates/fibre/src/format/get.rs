//! `ip route get` answers (iproute2's `print_route` for a cloned route).

use std::fmt::Write;

use fibre_fib::{Family, KernelError, Protocol, RouteAnswer, RouteType, TABLE_MAIN, TABLE_UNSPEC};
use serde_json::{json, Map, Value};

use super::route::{route_json, route_text, RouteStyle};
use super::DeviceNames;

/// How `fibmatch` answers print: the FIB route, table named when not main.
const FIBMATCH: RouteStyle = RouteStyle { show_table: true };

/// What a route cache exception adds to an answer (a path MTU learnt from
/// ICMP): the kernel reports the cloned route's expiry (`RTA_CACHEINFO`)
/// and its MTU metric, locked when raised to the floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheInfo {
    /// Seconds until the exception lapses (as `ip` divides jiffies by HZ).
    pub expires_sec: u64,
    /// The path MTU.
    pub mtu: u32,
    /// `mtu lock N`: raised to `min_pmtu` and locked.
    pub mtu_locked: bool,
}

/// The answer as `ip route get` prints it (IPv4: two lines, the second
/// `    cache ...`; IPv6: one), newline included. (The commands answer
/// through [`answer_text_cached`]; this short form serves the tests.)
#[cfg(test)]
pub fn answer_text(
    names: &dyn DeviceNames,
    answer: &RouteAnswer,
    uid: u32,
    fibmatch: bool,
) -> String {
    answer_text_cached(names, answer, uid, fibmatch, None)
}

/// `mtu N ` or `mtu lock N ` (iproute2's `print_rta_metrics`).
fn mtu_text(out: &mut String, mtu: u32, locked: bool) {
    let lock = if locked { "lock " } else { "" };
    let _ = write!(out, "mtu {lock}{mtu} ");
}

/// The path MTU shown: the exception's, else the route's own.
fn shown_mtu(answer: &RouteAnswer, cache: Option<&CacheInfo>) -> Option<(u32, bool)> {
    match cache {
        Some(c) => Some((c.mtu, c.mtu_locked)),
        None => answer.mtu.map(|m| (m, answer.route.mtu_lock)),
    }
}

/// [`answer_text`] for a destination with a route cache exception, as the
/// kernel answers once it holds one (`cache expires 599sec mtu 1300`).
pub fn answer_text_cached(
    names: &dyn DeviceNames,
    answer: &RouteAnswer,
    uid: u32,
    fibmatch: bool,
    cache: Option<&CacheInfo>,
) -> String {
    if fibmatch {
        return route_text(names, &answer.route, FIBMATCH);
    }
    let v6 = Family::of(&answer.dst) == Family::V6;
    let mut out = String::new();
    if answer.kind != RouteType::Unicast {
        let _ = write!(out, "{} ", answer.kind.name());
    }
    let _ = write!(out, "{} ", answer.dst);
    match answer.src {
        Some(src) => {
            let _ = write!(out, "from {src} ");
        }
        None if v6 => out.push_str("from :: "),
        None => {}
    }
    if let Some(gw) = answer.gateway {
        if Family::of(&gw) != Family::of(&answer.dst) {
            let _ = write!(out, "via inet6 {gw} ");
        } else {
            let _ = write!(out, "via {gw} ");
        }
    }
    if let Some(dev) = &answer.dev {
        let _ = write!(out, "dev {dev} ");
    }
    if shows_table(answer) {
        let _ = write!(out, "table {} ", fibre_fib::table_name(answer.table));
    }
    if v6 && answer.route.protocol != Protocol::BOOT {
        // IPv6 answers are the FIB entry itself, not a clone: ip prints its protocol.
        let _ = write!(out, "proto {} ", answer.route.protocol.name());
    }
    if let Some(prefsrc) = shown_prefsrc(answer) {
        let _ = write!(out, "src {prefsrc} ");
    }
    if v6 {
        let _ = write!(out, "metric {} ", answer.route.metric);
    }
    for flag in route_flags(answer) {
        let _ = write!(out, "{flag} ");
    }
    // The kernel echoes a query's mark for IPv4 only (`rt_fill_info()`
    // puts RTA_MARK; IPv6's `rt6_fill_node()` has none).
    if answer.mark != 0 && !v6 {
        // iproute2 prints marks below 16 in decimal, the rest in hex.
        if answer.mark < 16 {
            let _ = write!(out, "mark {} ", answer.mark);
        } else {
            let _ = write!(out, "mark {:#x} ", answer.mark);
        }
    }
    if v6 {
        cache_tail(&mut out, answer, cache);
        out.push_str("pref medium\n");
        return out;
    }
    if answer.iif.is_none() {
        let _ = write!(out, "uid {uid} ");
    }
    out.push_str("\n    cache ");
    let flags = cache_flags(answer);
    if !flags.is_empty() {
        let _ = write!(out, "<{}> ", flags.join(","));
    }
    cache_tail(&mut out, answer, cache);
    out.push('\n');
    out
}

/// The cache information both families end with: the exception's expiry,
/// then RTA_IIF (which `rt_fill_info()` and `rt6_fill_node()` put for an
/// input lookup; iproute2's `print_route()` prints it after the cache
/// info, before the metrics), then the MTU.
fn cache_tail(out: &mut String, answer: &RouteAnswer, cache: Option<&CacheInfo>) {
    if let Some(c) = cache {
        let _ = write!(out, "expires {}sec ", c.expires_sec);
    }
    if let Some(iif) = &answer.iif {
        let _ = write!(out, "iif {iif} ");
    }
    if let Some((mtu, locked)) = shown_mtu(answer, cache) {
        mtu_text(out, mtu, locked);
    }
}

/// The answer on one line, for `fibre lookup`: the text form (with its
/// route cache exception, if any) with the `cache` line joined and the
/// trailing blanks trimmed.
pub fn answer_line(
    names: &dyn DeviceNames,
    answer: &RouteAnswer,
    uid: u32,
    fibmatch: bool,
    cache: Option<&CacheInfo>,
) -> String {
    let text = answer_text_cached(names, answer, uid, fibmatch, cache);
    text.split(['\n', '\t'])
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The answer as one `ip -j route get` object. (The commands answer
/// through [`answer_json_cached`]; this short form serves the tests.)
#[cfg(test)]
pub fn answer_json(
    names: &dyn DeviceNames,
    answer: &RouteAnswer,
    uid: u32,
    fibmatch: bool,
) -> Value {
    answer_json_cached(names, answer, uid, fibmatch, None)
}

/// [`answer_json`] with a route cache exception (`"expires"`, the path
/// MTU in `"metrics"`; iproute2 prints `lock` in text only).
pub fn answer_json_cached(
    names: &dyn DeviceNames,
    answer: &RouteAnswer,
    uid: u32,
    fibmatch: bool,
    cache: Option<&CacheInfo>,
) -> Value {
    if fibmatch {
        return route_json(names, &answer.route, FIBMATCH);
    }
    let v6 = Family::of(&answer.dst) == Family::V6;
    let mut obj = Map::new();
    if answer.kind != RouteType::Unicast {
        obj.insert("type".into(), json!(answer.kind.name()));
    }
    obj.insert("dst".into(), json!(answer.dst.to_string()));
    match answer.src {
        Some(src) => {
            obj.insert("from".into(), json!(src.to_string()));
        }
        None if v6 => {
            obj.insert("from".into(), json!("::"));
        }
        None => {}
    }
    if let Some(gw) = answer.gateway {
        if Family::of(&gw) != Family::of(&answer.dst) {
            obj.insert(
                "via".into(),
                json!({ "family": "inet6", "host": gw.to_string() }),
            );
        } else {
            obj.insert("gateway".into(), json!(gw.to_string()));
        }
    }
    if let Some(dev) = &answer.dev {
        obj.insert("dev".into(), json!(dev));
    }
    if shows_table(answer) {
        obj.insert("table".into(), json!(fibre_fib::table_name(answer.table)));
    }
    if v6 && answer.route.protocol != Protocol::BOOT {
        obj.insert("protocol".into(), json!(answer.route.protocol.name()));
    }
    if let Some(prefsrc) = shown_prefsrc(answer) {
        obj.insert("prefsrc".into(), json!(prefsrc.to_string()));
    }
    if v6 {
        obj.insert("metric".into(), json!(answer.route.metric));
    }
    obj.insert("flags".into(), json!(route_flags(answer)));
    if answer.mark != 0 && !v6 {
        obj.insert("mark".into(), json!(answer.mark));
    }
    if !v6 {
        if answer.iif.is_none() {
            obj.insert("uid".into(), json!(uid));
        }
        obj.insert("cache".into(), json!(cache_flags(answer)));
    }
    if let Some(c) = cache {
        obj.insert("expires".into(), json!(c.expires_sec));
    }
    if let Some(iif) = &answer.iif {
        obj.insert("iif".into(), json!(iif));
    }
    if let Some((mtu, _)) = shown_mtu(answer, cache) {
        obj.insert("metrics".into(), json!([{ "mtu": mtu }]));
    }
    if v6 {
        obj.insert("pref".into(), json!("medium"));
    }
    Value::Object(obj)
}

/// `{"dst": ..., "error": ...}` for a refused or malformed query.
pub fn error_json(dst: Option<&str>, message: &str) -> Value {
    json!({ "dst": dst, "error": message })
}

/// The kernel's words for a refusal, without `RTNETLINK answers: `.
pub fn kernel_message(err: &KernelError) -> String {
    match &err.extack {
        Some(extack) => extack.clone(),
        None => err.errno.message().to_string(),
    }
}

/// `ip` names the table unless it is main; an answer made without a FIB
/// route (`oif` to a device no route covers) has table 0, which `ip`
/// does not print either (checked against Linux 6.x and iproute2 6.1).
fn shows_table(answer: &RouteAnswer) -> bool {
    answer.table != TABLE_MAIN && answer.table != TABLE_UNSPEC
}

/// IPv4: the kernel omits RTA_PREFSRC when it equals the source asked for;
/// IPv6 always carries it (checked against Linux 6.18 by kernel_diff).
fn shown_prefsrc(answer: &RouteAnswer) -> Option<std::net::IpAddr> {
    match Family::of(&answer.dst) {
        // The kernel always reports the IPv6 source it chose.
        Family::V6 => answer.prefsrc,
        Family::V4 => answer.prefsrc.filter(|p| Some(*p) != answer.src),
    }
}

/// The IPv4 route cache flags `ip` prints in `<...>` (RTCF_LOCAL,
/// RTCF_BROADCAST, RTCF_MULTICAST). A multicast route is also local when
/// the router is a member of the group: every up IPv4 link joins the
/// all-hosts group 224.0.0.1 (`ip_mc_up`), and fibre models no other
/// joins (an input lookup of another group is refused before this).
fn cache_flags(answer: &RouteAnswer) -> Vec<&'static str> {
    let mut flags = match answer.kind {
        RouteType::Local => vec!["local"],
        RouteType::Broadcast => vec!["local", "brd"],
        RouteType::Multicast if answer.dst == std::net::IpAddr::V4(fibre_fib::ALL_HOSTS_V4) => {
            vec!["local", "mc"]
        }
        RouteType::Multicast => vec!["mc"],
        _ => vec![],
    };
    // __mkroute_output: an output route leaving by the loopback device is
    // local (kernel-checked: `route add 10.20.1.0/24 dev lo` and `route
    // add anycast 0.0.0.0/0 dev lo` answer `cache <local>`), but a
    // multicast one loses RTCF_LOCAL again unless lo is a member of the
    // group (ip_check_mc_rcu; kernel-checked: `route add multicast
    // 10.20.0.0/16 via 127.0.0.1` answers `cache <mc>`).
    let by_lo = answer.dev.as_deref() == Some("lo") && answer.kind != RouteType::Multicast;
    if answer.iif.is_none() && by_lo && !flags.contains(&"local") {
        flags.insert(0, "local");
    }
    if answer.redirect {
        flags.push("redirect");
    }
    flags
}

/// The route flags `ip` prints after the source: the kernel returns its
/// IPv4 cache flags in the high bits of `rtm_flags`, and RTCF_MULTICAST
/// (0x20000000) is the bit iproute2 decodes as RTM_F_OFFLOAD_FAILED, so
/// every IPv4 multicast answer shows `rt_offload_failed` (checked against
/// Linux 6.18 with iproute2 6.1).
fn route_flags(answer: &RouteAnswer) -> Vec<&'static str> {
    let v4 = Family::of(&answer.dst) == Family::V4;
    if v4 && answer.kind == RouteType::Multicast {
        vec!["rt_offload_failed"]
    } else {
        vec![]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::fixtures::{names, path, route_to};
    use fibre_fib::{Errno, Prefix, Protocol, TABLE_LOCAL};

    fn answer(dst: &str, gw: Option<&str>, dev: &str, prefsrc: Option<&str>) -> RouteAnswer {
        let dst: std::net::IpAddr = dst.parse().unwrap();
        RouteAnswer {
            kind: RouteType::Unicast,
            dst,
            src: None,
            table: TABLE_MAIN,
            gateway: gw.map(|g| g.parse().unwrap()),
            dev: Some(dev.to_string()),
            prefsrc: prefsrc.map(|p| p.parse().unwrap()),
            iif: None,
            mark: 0,
            mtu: None,
            redirect: false,
            route: route_to(Prefix::containing(dst, 16), vec![path(gw, Some(3), 1)]),
        }
    }

    // Expected strings are iproute2 6.1's output for the same answers.

    #[test]
    fn plain_output_lookup() {
        let a = answer("10.1.0.5", Some("10.0.0.2"), "eth0", Some("10.0.0.1"));
        assert_eq!(
            answer_text(&names(), &a, 0, false),
            "10.1.0.5 via 10.0.0.2 dev eth0 src 10.0.0.1 uid 0 \n    cache \n"
        );
        assert_eq!(
            answer_json(&names(), &a, 0, false).to_string(),
            r#"{"dst":"10.1.0.5","gateway":"10.0.0.2","dev":"eth0","prefsrc":"10.0.0.1","flags":[],"uid":0,"cache":[]}"#
        );
        assert_eq!(
            answer_line(&names(), &a, 0, false, None),
            "10.1.0.5 via 10.0.0.2 dev eth0 src 10.0.0.1 uid 0 cache"
        );
    }

    #[test]
    fn local_and_broadcast_answers() {
        let mut a = answer("10.0.0.1", None, "lo", Some("10.0.0.1"));
        a.kind = RouteType::Local;
        a.table = TABLE_LOCAL;
        assert_eq!(
            answer_text(&names(), &a, 0, false),
            "local 10.0.0.1 dev lo table local src 10.0.0.1 uid 0 \n    cache <local> \n"
        );
        assert_eq!(
            answer_json(&names(), &a, 0, false).to_string(),
            r#"{"type":"local","dst":"10.0.0.1","dev":"lo","table":"local","prefsrc":"10.0.0.1","flags":[],"uid":0,"cache":["local"]}"#
        );
        a.kind = RouteType::Broadcast;
        a.dst = "10.0.0.255".parse().unwrap();
        a.dev = Some("eth0".into());
        assert_eq!(
            answer_text(&names(), &a, 0, false),
            "broadcast 10.0.0.255 dev eth0 table local src 10.0.0.1 uid 0 \n    cache <local,brd> \n"
        );
    }

    #[test]
    fn multicast_answers_as_ip_prints_them() {
        // Goldens: `ip route get` in a namespace (Linux 6.18, iproute2 6.1)
        // with 10.0.0.1/24 on eth0: the all-hosts group is local (every up
        // link joins it), others are not; ip decodes RTCF_MULTICAST as
        // rt_offload_failed.
        let mut a = answer("239.1.2.3", None, "eth0", Some("10.0.0.1"));
        a.kind = RouteType::Multicast;
        assert_eq!(
            answer_text(&names(), &a, 0, false),
            "multicast 239.1.2.3 dev eth0 src 10.0.0.1 rt_offload_failed uid 0 \n    cache <mc> \n"
        );
        assert_eq!(
            answer_json(&names(), &a, 0, false).to_string(),
            r#"{"type":"multicast","dst":"239.1.2.3","dev":"eth0","prefsrc":"10.0.0.1","flags":["rt_offload_failed"],"uid":0,"cache":["mc"]}"#
        );
        a.dst = "224.0.0.1".parse().unwrap();
        a.dev = Some("lo".into());
        a.prefsrc = None;
        a.src = Some("10.0.0.9".parse().unwrap());
        a.iif = Some("eth0".into());
        assert_eq!(
            answer_text(&names(), &a, 0, false),
            "multicast 224.0.0.1 from 10.0.0.9 dev lo rt_offload_failed \n    cache <local,mc> iif eth0 \n"
        );
        assert_eq!(
            answer_json(&names(), &a, 0, false).to_string(),
            r#"{"type":"multicast","dst":"224.0.0.1","from":"10.0.0.9","dev":"lo","flags":["rt_offload_failed"],"cache":["local","mc"],"iif":"eth0"}"#
        );
        // An output by lo of a `multicast` route to a unicast address: lo
        // is no member of that group, so not local (kernel-checked).
        a.dst = "10.20.200.1".parse().unwrap();
        a.iif = None;
        assert_eq!(cache_flags(&a), ["mc"]);
    }

    #[test]
    fn from_mark_uid_and_mtu() {
        let mut a = answer("10.1.0.5", Some("10.0.0.2"), "eth0", Some("10.0.0.1"));
        a.src = Some("10.0.0.1".parse().unwrap());
        assert_eq!(
            answer_text(&names(), &a, 0, false),
            "10.1.0.5 from 10.0.0.1 via 10.0.0.2 dev eth0 uid 0 \n    cache \n"
        );
        a.src = None;
        a.mark = 5;
        assert_eq!(
            answer_text(&names(), &a, 7, false),
            "10.1.0.5 via 10.0.0.2 dev eth0 src 10.0.0.1 mark 5 uid 7 \n    cache \n"
        );
        assert_eq!(
            answer_json(&names(), &a, 0, false).to_string(),
            r#"{"dst":"10.1.0.5","gateway":"10.0.0.2","dev":"eth0","prefsrc":"10.0.0.1","flags":[],"mark":5,"uid":0,"cache":[]}"#
        );
        a.mark = 17;
        assert!(answer_text(&names(), &a, 0, false).contains(" mark 0x11 uid 0 "));
        a.mark = 10;
        assert!(answer_text(&names(), &a, 0, false).contains(" mark 10 uid 0 "));
        let mut a = answer("10.30.0.1", None, "eth0", Some("10.0.0.1"));
        a.mtu = Some(1400);
        assert_eq!(
            answer_text(&names(), &a, 0, false),
            "10.30.0.1 dev eth0 src 10.0.0.1 uid 0 \n    cache mtu 1400 \n"
        );
        assert_eq!(
            answer_json(&names(), &a, 0, false).to_string(),
            r#"{"dst":"10.30.0.1","dev":"eth0","prefsrc":"10.0.0.1","flags":[],"uid":0,"cache":[],"metrics":[{"mtu":1400}]}"#
        );
    }

    #[test]
    fn answers_without_a_fib_route_print_no_table() {
        let mut a = answer("10.1.0.5", None, "eth1", Some("10.0.1.1"));
        a.table = TABLE_UNSPEC;
        assert_eq!(
            answer_text(&names(), &a, 0, false),
            "10.1.0.5 dev eth1 src 10.0.1.1 uid 0 \n    cache \n"
        );
    }

    #[test]
    fn prefsrc_equal_to_from_is_hidden_for_ipv4_only() {
        // Linux 6.18: `ip route get 10.1.0.5 from 10.0.0.1` prints no src;
        // `ip -6 route get 2001:db8:1::5 from 2001:db8::1` prints it.
        let mut v4 = answer("10.1.0.5", Some("10.0.0.2"), "eth0", Some("10.0.0.1"));
        v4.src = v4.prefsrc;
        assert_eq!(shown_prefsrc(&v4), None);
        let mut v6 = answer("2001:db8:1::5", None, "eth0", Some("2001:db8::1"));
        v6.src = v6.prefsrc;
        assert_eq!(shown_prefsrc(&v6), v6.prefsrc);
    }

    #[test]
    fn input_lookup() {
        let mut a = answer("10.1.0.5", Some("10.0.0.2"), "eth0", None);
        a.src = Some("10.0.1.2".parse().unwrap());
        a.iif = Some("eth1".into());
        assert_eq!(
            answer_text(&names(), &a, 0, false),
            "10.1.0.5 from 10.0.1.2 via 10.0.0.2 dev eth0 \n    cache iif eth1 \n"
        );
        assert_eq!(
            answer_json(&names(), &a, 0, false).to_string(),
            r#"{"dst":"10.1.0.5","from":"10.0.1.2","gateway":"10.0.0.2","dev":"eth0","flags":[],"cache":[],"iif":"eth1"}"#
        );
    }

    #[test]
    fn ipv6_answer() {
        let mut a = answer(
            "2001:db8:1::5",
            Some("2001:db8::2"),
            "eth0",
            Some("2001:db8::1"),
        );
        a.route.metric = 1024;
        assert_eq!(
            answer_text(&names(), &a, 0, false),
            "2001:db8:1::5 from :: via 2001:db8::2 dev eth0 src 2001:db8::1 metric 1024 pref medium\n"
        );
        assert_eq!(
            answer_json(&names(), &a, 0, false).to_string(),
            r#"{"dst":"2001:db8:1::5","from":"::","gateway":"2001:db8::2","dev":"eth0","prefsrc":"2001:db8::1","metric":1024,"flags":[],"pref":"medium"}"#
        );
        a.route.protocol = Protocol::STATIC;
        a.route.metric = 5;
        assert_eq!(
            answer_text(&names(), &a, 0, false),
            "2001:db8:1::5 from :: via 2001:db8::2 dev eth0 proto static src 2001:db8::1 metric 5 pref medium\n"
        );
    }

    #[test]
    fn fibmatch_prints_the_fib_route() {
        let a = answer("10.1.0.5", Some("10.0.0.2"), "eth0", Some("10.0.0.1"));
        assert_eq!(
            answer_text(&names(), &a, 0, true),
            "10.1.0.0/16 via 10.0.0.2 dev eth0 \n"
        );
        assert_eq!(
            answer_json(&names(), &a, 0, true).to_string(),
            r#"{"dst":"10.1.0.0/16","gateway":"10.0.0.2","dev":"eth0","flags":[]}"#
        );
    }

    #[test]
    fn errors_in_json() {
        let err = KernelError::new(Errno::NetUnreach);
        assert_eq!(
            error_json(Some("10.9.9.9"), &kernel_message(&err)).to_string(),
            r#"{"dst":"10.9.9.9","error":"Network is unreachable"}"#
        );
        let err = KernelError::with_extack(Errno::Inval, "Invalid prefix for given prefix length");
        assert_eq!(
            kernel_message(&err),
            "Invalid prefix for given prefix length"
        );
    }
}
