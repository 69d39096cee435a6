//! Answer-by-answer comparison of the kernel and fibre.
//!
//! Compared: the outcome (answer or refusal); for refusals the error text;
//! for answers `type`, `table` (as `ip -j route get` prints it: absent means
//! main or table 0, and the kernel reports main for local-table routes until
//! a custom rule unmerges the tables; a table 0 fibre names is checked
//! against the kernel's `fibmatch` and called `table0-shown`), `gateway` and
//! `dev`. When the kernel's matching route (`fibmatch`) is multipath,
//! fibre's (gateway, dev) must be one of its live paths instead (the kernel
//! hashes flows with a seed drawn at random per namespace; a path whose
//! gateway resolved through a local route is answered without `gateway`).
//! The matched routes themselves (`fibmatch` on both sides) are compared by
//! type, prefix, table and paths (`fibmatch-*` fields). `prefsrc` is
//! compared on the same path but, unless `FIBRE_DIFF_STRICT_PREFSRC=1`, only
//! reported as a note; an IPv6 source that fibre leaves out because it is
//! the one asked for is called `prefsrc-v6-echo-hidden` (the kernel prints
//! it). `dst` (the kernel echoes the address asked for) is only noted too.
//! The IPv4 `cache` flags (on the same path) and the route `flags` are
//! compared as lists, and an IPv6 answer's `metric`, `protocol` and
//! `pref`. Other echoed keys (`from`, `iif`, `mark`, `uid`) are not.

use std::collections::HashSet;
use std::net::IpAddr;

use super::answer::{Answer, Outcome};
use super::kernel::KernelReply;

/// How one query came out.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Verdict {
    /// Fields that differ (failures).
    pub fields: Vec<&'static str>,
    /// Differences only noted (prefsrc, unless strict).
    pub notes: Vec<&'static str>,
}

impl Verdict {
    /// True when nothing that counts differs.
    pub fn agrees(&self) -> bool {
        self.fields.is_empty()
    }
}

/// Compares fibre's outcome with the kernel's reply.
///
/// `locals` are the gateways the kernel resolves through a local route: an
/// ECMP path whose gateway is one of them is answered without `gateway`.
pub fn compare(
    kernel: &KernelReply,
    fibre: &Outcome,
    strict_prefsrc: bool,
    locals: &LocalCover,
) -> Verdict {
    let mut verdict = Verdict::default();
    match (&kernel.answer, fibre) {
        (Outcome::Error(k), Outcome::Error(f)) => {
            if k != f {
                verdict.fields.push("error");
            }
        }
        (Outcome::Error(_), Outcome::Answer(_)) | (Outcome::Answer(_), Outcome::Error(_)) => {
            verdict.fields.push("outcome");
        }
        (Outcome::Answer(k), Outcome::Answer(f)) => {
            if k.kind != f.kind {
                verdict.fields.push("type");
            }
            // `ip` prints no table key for table 0 (RT_TABLE_UNSPEC: the
            // answer came from no FIB route, e.g. an on-link guess for
            // `oif`, 255.255.255.255, 0.0.0.0) as for main; the kernel's
            // `fibmatch` tells them apart: it finds no route for table 0.
            // A table 0 shown by fibre is named apart (a display slip) when
            // the kernel also used no FIB route.
            if f.table == "unspec" {
                let kernel_table_zero = matches!(kernel.route, Outcome::Error(_));
                verdict
                    .fields
                    .push(if kernel_table_zero && k.table == "main" {
                        "table0-shown"
                    } else {
                        "table"
                    });
            } else if k.table != f.table {
                verdict.fields.push("table");
            }
            match live_paths(&kernel.route, locals) {
                Some(paths) => {
                    let same_as_kernel = k.gateway == f.gateway && k.dev == f.dev;
                    if !same_as_kernel
                        && !paths
                            .iter()
                            .any(|(gw, dev)| *gw == f.gateway && *dev == f.dev)
                    {
                        verdict.fields.push("nexthop");
                    }
                }
                None => {
                    if k.gateway != f.gateway {
                        verdict.fields.push("gateway");
                    }
                    if k.dev != f.dev {
                        verdict.fields.push("dev");
                    }
                }
            }
            if k.dst != f.dst {
                verdict.notes.push("dst");
            }
            if k.mtu != f.mtu {
                verdict.fields.push("mtu");
            }
            // The cache flags follow the path (`redirect`: out the way it
            // came in): compared when both took the same one (a multipath
            // route may hash a flow onto another path on each side).
            if k.cache != f.cache && k.gateway == f.gateway && k.dev == f.dev {
                verdict.fields.push("cache");
            }
            if k.flags != f.flags {
                verdict.fields.push("flags");
            }
            if (&k.metric, &k.protocol, &k.pref) != (&f.metric, &f.protocol, &f.pref) {
                verdict.fields.push("metric-protocol-pref");
            }
            // The source follows the path: only compared on the same one.
            // An answer without its gateway (a broadcast, a path via a
            // local address) names a multipath route's path only when no
            // other live path shares its device.
            let paths_on_dev = match &kernel.route {
                Outcome::Answer(Answer { paths, .. }) => {
                    paths.iter().filter(|p| !p.dead && p.dev == k.dev).count()
                }
                Outcome::Error(_) => 0,
            };
            let path_named = k.gateway.is_some() || paths_on_dev <= 1;
            let same_path = path_named && k.gateway == f.gateway && k.dev == f.dev;
            if same_path && k.prefsrc != f.prefsrc {
                // IPv6 prints the source it chose even when it is the one
                // asked for (IPv4 leaves it out): named apart, it is the
                // CLI's display, not the model's choice.
                let v6_echo_hidden = f.prefsrc.is_none()
                    && k.prefsrc.is_some_and(|p| p.is_ipv6() && k.from == Some(p));
                let field = if v6_echo_hidden {
                    "prefsrc-v6-echo-hidden"
                } else {
                    "prefsrc"
                };
                if strict_prefsrc {
                    verdict.fields.push(field);
                } else {
                    verdict.notes.push(field);
                }
            }
        }
    }
    verdict
}

/// Compares the FIB routes the two sides matched (`route get fibmatch`):
/// the refusal text, or the route's type, prefix, table and paths (gateway,
/// device and whether dead; in order, as both list them in the route's
/// order). Returns the fields that differ, prefixed `fibmatch-`.
pub fn compare_fibmatch(kernel: &Outcome, fibre: &Outcome) -> Vec<&'static str> {
    let mut fields = Vec::new();
    match (kernel, fibre) {
        (Outcome::Error(k), Outcome::Error(f)) => {
            if k != f {
                fields.push("fibmatch-error");
            }
        }
        (Outcome::Error(_), Outcome::Answer(_)) | (Outcome::Answer(_), Outcome::Error(_)) => {
            fields.push("fibmatch-outcome");
        }
        (Outcome::Answer(k), Outcome::Answer(f)) => {
            if k.kind != f.kind {
                fields.push("fibmatch-type");
            }
            if k.dst != f.dst {
                fields.push("fibmatch-dst");
            }
            if k.table != f.table {
                fields.push("fibmatch-table");
            }
            let paths = |a: &Answer| -> Vec<(Option<IpAddr>, Option<String>, bool)> {
                if a.paths.is_empty() {
                    vec![(a.gateway, a.dev.clone(), false)]
                } else {
                    a.paths
                        .iter()
                        .map(|p| (p.gateway, p.dev.clone(), p.dead))
                        .collect()
                }
            };
            // IPv6 lists the siblings from the one its hash chose (a
            // rotation of the route's order; kernel-checked), IPv4 in the
            // route's order.
            let (kp, fp) = (paths(k), paths(f));
            let v6 = k.dst.contains(':') || kp.iter().any(|p| p.0.is_some_and(|g| g.is_ipv6()));
            let same = if v6 && kp.len() == fp.len() {
                (0..kp.len().max(1)).any(|turn| {
                    let mut turned = fp.clone();
                    turned.rotate_left(turn % fp.len().max(1));
                    turned == kp
                })
            } else {
                kp == fp
            };
            if !same {
                fields.push("fibmatch-paths");
            }
        }
    }
    fields
}

/// The (gateway, dev) answers a multipath `fibmatch` route's live paths
/// allow. A gateway that is a local address is dropped, as the kernel's
/// answer drops it: the path's scope is host, so it "uses no gateway". A
/// gateway inside a user `local` route may be either way: whether it
/// resolved through that route depends on the route's table and on the
/// order of the lines, which this comparison does not follow.
fn live_paths(
    route: &Outcome,
    locals: &LocalCover,
) -> Option<Vec<(Option<IpAddr>, Option<String>)>> {
    match route {
        Outcome::Answer(Answer { paths, .. }) if paths.len() > 1 => Some(
            paths
                .iter()
                .filter(|p| !p.dead)
                .flat_map(|p| {
                    let dev = p.dev.clone();
                    match p.gateway {
                        Some(g) if locals.addresses.contains(&g) => vec![(None, dev)],
                        Some(g) if locals.in_local_route(g) => {
                            vec![(Some(g), dev.clone()), (None, dev)]
                        }
                        gateway => vec![(gateway, dev)],
                    }
                })
                .collect(),
        ),
        _ => None,
    }
}

/// What makes a gateway resolve through a local route (host scope) in the
/// kernel: an address on a link, or a user `local` route covering it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LocalCover {
    /// Addresses on links (their table-local `local` routes).
    pub addresses: HashSet<IpAddr>,
    /// IPv4 prefixes of `route add local` lines the kernel took (any table:
    /// an approximation, a nexthop's gateway is resolved in its route's
    /// table and then by the rules). Checked against the kernel: a path via
    /// 10.1.1.37 with `local 10.1.1.32/28` in main is answered without the
    /// gateway. IPv6 paths keep their gateway (no nexthop scope there).
    pub routes: Vec<(IpAddr, u32)>,
}

impl LocalCover {
    /// True when `gateway` is inside one of the local routes.
    pub fn in_local_route(&self, gateway: IpAddr) -> bool {
        self.routes.iter().any(|&(prefix, len)| {
            gateway.is_ipv4() && prefix.is_ipv4() && super::addr::first(gateway, len) == prefix
        })
    }
}

/// The addresses `addr add` lines the kernel took put on links (less those
/// `addr del` took away), and the prefixes of the `local` routes it took:
/// `refused` holds the 1-based lines it refused.
pub fn local_addresses(config: &[String], refused: &[usize]) -> LocalCover {
    let mut locals = LocalCover::default();
    for (index, line) in config.iter().enumerate() {
        if refused.contains(&(index + 1)) {
            continue;
        }
        let words: Vec<&str> = line
            .split_whitespace()
            .skip_while(|w| *w == "-4" || *w == "-6")
            .collect();
        match words.as_slice() {
            [object, verb, rest @ ..] if matches!(*object, "addr" | "address" | "a") => {
                let address = rest
                    .first()
                    .and_then(|w| w.split('/').next())
                    .and_then(|a| a.parse::<IpAddr>().ok());
                match (*verb, address) {
                    ("add" | "replace", Some(a)) => {
                        locals.addresses.insert(a);
                    }
                    ("del" | "delete", Some(a)) => {
                        locals.addresses.remove(&a);
                    }
                    _ => {}
                }
            }
            [object, "add" | "replace" | "append", "local", prefix, ..]
                if matches!(*object, "route" | "r" | "ro") =>
            {
                if let Some(local) = parse_prefix(prefix).filter(|(a, _)| a.is_ipv4()) {
                    locals.routes.push(local);
                }
            }
            _ => {}
        }
    }
    locals
}

/// `10.1.1.32/28` or a bare address (a host prefix), normalised to its
/// first address.
fn parse_prefix(text: &str) -> Option<(IpAddr, u32)> {
    let (address, len) = match text.split_once('/') {
        Some((a, l)) => (a.parse::<IpAddr>().ok()?, l.parse::<u32>().ok()?),
        None => {
            let a: IpAddr = text.parse().ok()?;
            (a, super::addr::width(a.is_ipv6()))
        }
    };
    (len <= super::addr::width(address.is_ipv6())).then(|| (super::addr::first(address, len), len))
}

/// A short name for a mismatch, for file names: `v4-input-gateway+dev`.
pub fn label(query: &str, verdict: &Verdict) -> String {
    format!(
        "{}-{}-{}",
        family(query),
        form(query),
        verdict.fields.join("+")
    )
}

fn family(query: &str) -> &'static str {
    if query.split_whitespace().next().unwrap_or("").contains(':') {
        "v6"
    } else {
        "v4"
    }
}

fn form(query: &str) -> &'static str {
    if query.contains(" iif ") {
        "input"
    } else {
        "output"
    }
}

/// A grouping key for a mismatch: family, form, what differs, and the two
/// outcome classes.
pub fn cause(query: &str, kernel: &KernelReply, fibre: &Outcome, verdict: &Verdict) -> String {
    format!(
        "{} {}: {} differs; kernel {} / fibre {}",
        family(query),
        form(query),
        verdict.fields.join("+"),
        kernel.answer.class(),
        fibre.class()
    )
}

#[cfg(test)]
mod tests {
    use super::super::answer::parse_json_answer;
    use super::*;

    fn reply(answer: &str, route: &str) -> KernelReply {
        KernelReply {
            answer: parse_json_answer(answer).unwrap(),
            route: parse_json_answer(route).unwrap(),
        }
    }

    const PLAIN_ROUTE: &str = r#"[{"dst":"10.0.0.0/8","gateway":"10.1.0.7","dev":"fd0"}]"#;

    #[test]
    fn equal_answers_agree_and_each_field_is_caught() {
        let k = reply(
            r#"[{"dst":"10.9.0.5","gateway":"10.1.0.7","dev":"fd0","table":"100","prefsrc":"10.1.0.1"}]"#,
            PLAIN_ROUTE,
        );
        let same = parse_json_answer(r#"{"dst":"10.9.0.5","gateway":"10.1.0.7","dev":"fd0","table":"100","prefsrc":"10.1.0.1"}"#).unwrap();
        assert!(compare(&k, &same, true, &LocalCover::default()).agrees());
        let other = parse_json_answer(r#"{"dst":"10.9.0.5","type":"local","gateway":"10.1.0.8","dev":"fd1","prefsrc":"10.1.0.2"}"#).unwrap();
        let v = compare(&k, &other, false, &LocalCover::default());
        assert_eq!(v.fields, vec!["type", "table", "gateway", "dev"]);
        assert!(v.notes.is_empty(), "prefsrc is not compared across paths");
        let other_source = parse_json_answer(r#"{"dst":"10.9.0.5","gateway":"10.1.0.7","dev":"fd0","table":"100","prefsrc":"10.1.0.2"}"#).unwrap();
        let v = compare(&k, &other_source, false, &LocalCover::default());
        assert!(v.agrees());
        assert_eq!(v.notes, vec!["prefsrc"]);
        assert_eq!(
            compare(&k, &other_source, true, &LocalCover::default()).fields,
            vec!["prefsrc"]
        );
    }

    #[test]
    fn errors_compare_by_text_and_against_answers() {
        let k = KernelReply {
            answer: Outcome::Error("No route to host".into()),
            route: Outcome::Error("No route to host".into()),
        };
        assert!(compare(
            &k,
            &Outcome::Error("No route to host".into()),
            false,
            &LocalCover::default()
        )
        .agrees());
        assert_eq!(
            compare(
                &k,
                &Outcome::Error("Network is unreachable".into()),
                false,
                &LocalCover::default()
            )
            .fields,
            vec!["error"]
        );
        let answer = parse_json_answer(r#"{"dst":"1.2.3.4","dev":"fd0"}"#).unwrap();
        assert_eq!(
            compare(&k, &answer, false, &LocalCover::default()).fields,
            vec!["outcome"]
        );
    }

    #[test]
    fn ecmp_answers_must_be_one_of_the_live_paths() {
        let k = reply(
            r#"[{"dst":"198.51.100.1","gateway":"10.1.0.7","dev":"fd0"}]"#,
            r#"[{"dst":"198.51.100.0/24","nexthops":[{"gateway":"10.1.0.7","dev":"fd0","flags":[]},{"gateway":"10.2.3.4","dev":"fd1","flags":[]},{"gateway":"10.3.0.9","dev":"fd2","flags":["dead","linkdown"]}]}]"#,
        );
        let other_path =
            parse_json_answer(r#"{"dst":"198.51.100.1","gateway":"10.2.3.4","dev":"fd1"}"#)
                .unwrap();
        assert!(compare(&k, &other_path, false, &LocalCover::default()).agrees());
        let dead_path =
            parse_json_answer(r#"{"dst":"198.51.100.1","gateway":"10.3.0.9","dev":"fd2"}"#)
                .unwrap();
        assert_eq!(
            compare(&k, &dead_path, false, &LocalCover::default()).fields,
            vec!["nexthop"]
        );
        let crossed =
            parse_json_answer(r#"{"dst":"198.51.100.1","gateway":"10.2.3.4","dev":"fd0"}"#)
                .unwrap();
        assert_eq!(
            compare(&k, &crossed, false, &LocalCover::default()).fields,
            vec!["nexthop"]
        );
        // The kernel drops a gateway that is one of its own addresses.
        let k_local_gw = reply(
            r#"[{"dst":"198.51.100.1","dev":"fd0"}]"#,
            r#"[{"dst":"198.51.100.0/24","nexthops":[{"gateway":"10.1.0.7","dev":"fd0","flags":[]},{"gateway":"10.2.3.4","dev":"fd1","flags":[]}]}]"#,
        );
        let no_gateway = parse_json_answer(r#"{"dst":"198.51.100.1","dev":"fd0"}"#).unwrap();
        assert!(compare(&k_local_gw, &no_gateway, false, &LocalCover::default()).agrees());
        // ... and fibre may choose the other path with a local gateway.
        let k_other = reply(
            r#"[{"dst":"198.51.100.1","gateway":"10.2.3.4","dev":"fd1"}]"#,
            r#"[{"dst":"198.51.100.0/24","nexthops":[{"gateway":"10.1.0.7","dev":"fd0","flags":[]},{"gateway":"10.2.3.4","dev":"fd1","flags":[]}]}]"#,
        );
        let locals = LocalCover {
            addresses: ["10.1.0.7".parse().unwrap()].into(),
            ..LocalCover::default()
        };
        assert!(compare(&k_other, &no_gateway, false, &locals).agrees());
        // A user `local` route covering the gateway does the same
        // (corpus case v4-output-nexthop-b493b6677c2b6b5f).
        let covered = LocalCover {
            routes: vec![("10.1.0.0".parse().unwrap(), 29)],
            ..LocalCover::default()
        };
        assert!(compare(&k_other, &no_gateway, false, &covered).agrees());
        let with_gateway =
            parse_json_answer(r#"{"dst":"198.51.100.1","gateway":"10.1.0.7","dev":"fd0"}"#)
                .unwrap();
        assert!(
            compare(&k_other, &with_gateway, false, &covered).agrees(),
            "the local route may have come after the multipath one"
        );
        assert!(!compare(&k_other, &no_gateway, false, &LocalCover::default()).agrees());
    }

    #[test]
    fn local_addresses_follow_the_lines_the_kernel_took() {
        let config: Vec<String> = [
            "link add fd0 type ifb",
            "addr add 10.0.0.1/24 dev fd0",
            "addr add 10.0.0.2/24 dev fd0",
            "-6 addr add 2001:db8::1/64 dev fd0",
            "addr add 10.0.0.3/24 dev fd0",
            "addr del 10.0.0.2/24 dev fd0",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let locals = local_addresses(&config, &[5]);
        let expected: HashSet<IpAddr> = ["10.0.0.1", "2001:db8::1"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        assert_eq!(locals.addresses, expected);
        assert!(locals.routes.is_empty());
    }

    #[test]
    fn causes_name_family_form_and_classes() {
        let k = KernelReply {
            answer: Outcome::Error("Invalid argument".into()),
            route: Outcome::Error("Invalid argument".into()),
        };
        let f = Outcome::Error("Network is unreachable".into());
        let v = compare(&k, &f, false, &LocalCover::default());
        assert_eq!(
            cause("2001:db8::1 from 2001:db8::2 iif fd0", &k, &f, &v),
            "v6 input: error differs; kernel error(Invalid argument) / fibre error(Network is unreachable)"
        );
        assert_eq!(
            label("2001:db8::1 from 2001:db8::2 iif fd0", &v),
            "v6-input-error"
        );
    }

    #[test]
    fn local_routes_cover_ipv4_gateways_inside_them() {
        let config: Vec<String> = [
            "route add local 10.1.1.32/28 dev fd0",
            "route add local 10.9.0.1 dev fd0 table 100",
            "-6 route add local 2001:db8::/64 dev fd0",
            "route add local 10.7.0.0/16 dev fd0",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let locals = local_addresses(&config, &[4]);
        let covered = |a: &str| locals.in_local_route(a.parse().unwrap());
        assert!(covered("10.1.1.37"));
        assert!(!covered("10.1.1.48"));
        assert!(covered("10.9.0.1"));
        assert!(!covered("10.9.0.2"));
        assert!(!covered("2001:db8::5"), "IPv6 gateways keep their gateway");
        assert!(!covered("10.7.0.1"), "refused line");
    }

    #[test]
    fn table_zero_shown_is_a_cause_of_its_own() {
        let answer = r#"[{"dst":"10.1.5.224","dev":"fd1","prefsrc":"10.2.0.72"}]"#;
        let no_fib_route = KernelReply {
            answer: parse_json_answer(answer).unwrap(),
            route: Outcome::Error("No route to host".into()),
        };
        let f_unspec = parse_json_answer(
            r#"{"dst":"10.1.5.224","dev":"fd1","table":"unspec","prefsrc":"10.2.0.72"}"#,
        )
        .unwrap();
        let f_main =
            parse_json_answer(r#"{"dst":"10.1.5.224","dev":"fd1","prefsrc":"10.2.0.72"}"#).unwrap();
        let none = LocalCover::default();
        assert_eq!(
            compare(&no_fib_route, &f_unspec, true, &none).fields,
            vec!["table0-shown"]
        );
        assert!(
            compare(&no_fib_route, &f_main, true, &none).agrees(),
            "table 0 and main print alike"
        );
        let main_route = reply(answer, r#"[{"dst":"10.1.0.0/16","dev":"fd1"}]"#);
        assert_eq!(
            compare(&main_route, &f_unspec, true, &none).fields,
            vec!["table"],
            "the kernel found a route in main"
        );
        assert!(compare(&main_route, &f_main, true, &none).agrees());
    }

    #[test]
    fn an_ipv6_source_hidden_because_it_was_asked_for_is_a_cause_of_its_own() {
        let k = reply(
            r#"[{"dst":"2001:db8:1::d9","from":"2001:db8:1::6d26","dev":"fd0","prefsrc":"2001:db8:1::6d26"}]"#,
            r#"[{"dst":"2001:db8:1::/64","dev":"fd0"}]"#,
        );
        let hidden =
            parse_json_answer(r#"{"dst":"2001:db8:1::d9","from":"2001:db8:1::6d26","dev":"fd0"}"#)
                .unwrap();
        let none = LocalCover::default();
        assert_eq!(
            compare(&k, &hidden, true, &none).fields,
            vec!["prefsrc-v6-echo-hidden"]
        );
        let other = parse_json_answer(
            r#"{"dst":"2001:db8:1::d9","from":"2001:db8:1::6d26","dev":"fd0","prefsrc":"2001:db8:1::1"}"#,
        )
        .unwrap();
        assert_eq!(compare(&k, &other, true, &none).fields, vec!["prefsrc"]);
    }

    #[test]
    fn a_broadcast_over_a_multipath_route_names_no_path_for_its_source() {
        let route = r#"[{"type":"broadcast","dst":"default","nexthops":[{"gateway":"10.2.5.24","dev":"fd1","flags":[]},{"gateway":"10.2.0.29","dev":"fd1","flags":[]},{"gateway":"10.1.5.171","dev":"fd0","flags":[]}]}]"#;
        let k = reply(
            r#"[{"type":"broadcast","dst":"255.255.255.255","dev":"fd1","prefsrc":"10.2.5.198"}]"#,
            route,
        );
        let f = parse_json_answer(
            r#"{"type":"broadcast","dst":"255.255.255.255","dev":"fd1","prefsrc":"10.2.0.163"}"#,
        )
        .unwrap();
        let none = LocalCover::default();
        assert!(compare(&k, &f, true, &none).agrees());
        // The only path on fd0: its source is compared.
        let k0 = reply(
            r#"[{"type":"broadcast","dst":"255.255.255.255","dev":"fd0","prefsrc":"10.1.5.19"}]"#,
            route,
        );
        let f0 = parse_json_answer(
            r#"{"type":"broadcast","dst":"255.255.255.255","dev":"fd0","prefsrc":"10.1.5.20"}"#,
        )
        .unwrap();
        assert_eq!(compare(&k0, &f0, true, &none).fields, vec!["prefsrc"]);
        // Two paths on one device via local addresses: both are answered
        // without a gateway, so the answer names neither (seed 1057).
        let via_locals = r#"[{"dst":"198.19.20.0/23","nexthops":[{"gateway":"10.1.5.45","dev":"fd0","flags":[]},{"gateway":"10.1.1.160","dev":"fd0","flags":[]}]}]"#;
        let k_locals = reply(
            r#"[{"dst":"198.19.20.149","dev":"fd0","prefsrc":"10.1.5.45"}]"#,
            via_locals,
        );
        let f_locals =
            parse_json_answer(r#"{"dst":"198.19.20.149","dev":"fd0","prefsrc":"10.1.1.160"}"#)
                .unwrap();
        let locals = LocalCover {
            addresses: ["10.1.5.45".parse().unwrap(), "10.1.1.160".parse().unwrap()].into(),
            ..LocalCover::default()
        };
        assert!(compare(&k_locals, &f_locals, true, &locals).agrees());
    }

    #[test]
    fn fibmatch_routes_compare_by_type_prefix_table_and_paths() {
        let parse = |s: &str| parse_json_answer(s).unwrap();
        let ecmp = r#"[{"dst":"198.18.0.0/15","flags":[],"nexthops":[{"gateway":"10.1.0.5","dev":"fd0","weight":1,"flags":[]},{"gateway":"10.2.0.5","dev":"fd1","weight":1,"flags":["dead","linkdown"]}]}]"#;
        assert!(compare_fibmatch(&parse(ecmp), &parse(ecmp)).is_empty());
        let alive = ecmp.replace(r#"["dead","linkdown"]"#, "[]");
        assert_eq!(
            compare_fibmatch(&parse(ecmp), &parse(&alive)),
            vec!["fibmatch-paths"]
        );
        let single = r#"{"dst":"198.18.0.0/16","gateway":"10.1.0.5","dev":"fd0","table":"100"}"#;
        assert_eq!(
            compare_fibmatch(&parse(ecmp), &parse(single)),
            vec!["fibmatch-dst", "fibmatch-table", "fibmatch-paths"]
        );
        let v6 = r#"[{"dst":"default","nexthops":[{"gateway":"2001:db8::cc","dev":"fd0","flags":[]},{"gateway":"2001:db8::3c","dev":"fd0","flags":[]},{"gateway":"2001:db8::dd","dev":"fd1","flags":[]}]}]"#;
        let v6_turned = r#"{"dst":"default","nexthops":[{"gateway":"2001:db8::dd","dev":"fd1","flags":[]},{"gateway":"2001:db8::cc","dev":"fd0","flags":[]},{"gateway":"2001:db8::3c","dev":"fd0","flags":[]}]}"#;
        let v6_swapped = r#"{"dst":"default","nexthops":[{"gateway":"2001:db8::3c","dev":"fd0","flags":[]},{"gateway":"2001:db8::cc","dev":"fd0","flags":[]},{"gateway":"2001:db8::dd","dev":"fd1","flags":[]}]}"#;
        assert!(compare_fibmatch(&parse(v6), &parse(v6_turned)).is_empty());
        assert_eq!(
            compare_fibmatch(&parse(v6), &parse(v6_swapped)),
            vec!["fibmatch-paths"]
        );
        let unreachable = Outcome::Error("Network is unreachable".into());
        assert_eq!(
            compare_fibmatch(&unreachable, &parse(single)),
            vec!["fibmatch-outcome"]
        );
        assert_eq!(
            compare_fibmatch(&unreachable, &Outcome::Error("No route to host".into())),
            vec!["fibmatch-error"]
        );
    }
}
