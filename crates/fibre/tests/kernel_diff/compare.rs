//! Answer-by-answer comparison of the kernel and fibre.
//!
//! Compared: the outcome (answer or refusal); for refusals the error text;
//! for answers `type`, `table` (as `ip -j route get` prints it: absent means
//! main, and the kernel reports main for local-table routes until a custom
//! rule unmerges the tables), `gateway` and `dev`. When the kernel's
//! matching route (`fibmatch`) is multipath, fibre's (gateway, dev) must be
//! one of its live paths (or the kernel's own choice: a path whose gateway
//! is a local address is answered without `gateway`) instead: the kernel
//! hashes flows with a seed drawn at random per namespace. `prefsrc` is compared but, unless
//! `FIBRE_DIFF_STRICT_PREFSRC=1`, only reported as a note: IPv6 source
//! selection (RFC 6724) is a later piece of work. `dst` (the kernel echoes
//! the address asked for) is only noted too. Other echoed keys (`from`,
//! `iif`, `mark`) and details (`uid`, `cache`, `flags`, `metric`, `pref`,
//! `protocol`) are not compared.

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
/// `locals` are the addresses the configuration put on links: an ECMP path
/// whose gateway is one of them is answered without `gateway`.
pub fn compare(
    kernel: &KernelReply,
    fibre: &Outcome,
    strict_prefsrc: bool,
    locals: &HashSet<IpAddr>,
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
            if k.table != f.table {
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
            // The source follows the path: only compared on the same one.
            let same_path = k.gateway == f.gateway && k.dev == f.dev;
            if same_path && k.prefsrc != f.prefsrc {
                if strict_prefsrc {
                    verdict.fields.push("prefsrc");
                } else {
                    verdict.notes.push("prefsrc");
                }
            }
        }
    }
    verdict
}

/// The live (gateway, dev) paths of a multipath `fibmatch` route.
/// (A gateway that is a local address is dropped, as the kernel's answer
/// drops it: the path's scope is host, so it "uses no gateway".)
fn live_paths(
    route: &Outcome,
    locals: &HashSet<IpAddr>,
) -> Option<Vec<(Option<IpAddr>, Option<String>)>> {
    match route {
        Outcome::Answer(Answer { paths, .. }) if paths.len() > 1 => Some(
            paths
                .iter()
                .filter(|p| !p.dead)
                .map(|p| {
                    let gateway = p.gateway.filter(|g| !locals.contains(g));
                    (gateway, p.dev.clone())
                })
                .collect(),
        ),
        _ => None,
    }
}

/// The addresses `addr add` lines the kernel took put on links (less those
/// `addr del` took away): `refused` holds the 1-based lines it refused.
pub fn local_addresses(config: &[String], refused: &[usize]) -> HashSet<IpAddr> {
    let mut locals = HashSet::new();
    for (index, line) in config.iter().enumerate() {
        if refused.contains(&(index + 1)) {
            continue;
        }
        let words: Vec<&str> = line
            .split_whitespace()
            .skip_while(|w| *w == "-4" || *w == "-6")
            .collect();
        if !matches!(words.first(), Some(&"addr" | &"address" | &"a")) {
            continue;
        }
        let address = words
            .get(2)
            .and_then(|w| w.split('/').next())
            .and_then(|a| a.parse::<IpAddr>().ok());
        match (words.get(1), address) {
            (Some(&"add" | &"replace"), Some(a)) => {
                locals.insert(a);
            }
            (Some(&"del" | &"delete"), Some(a)) => {
                locals.remove(&a);
            }
            _ => {}
        }
    }
    locals
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
        assert!(compare(&k, &same, true, &HashSet::new()).agrees());
        let other = parse_json_answer(r#"{"dst":"10.9.0.5","type":"local","gateway":"10.1.0.8","dev":"fd1","prefsrc":"10.1.0.2"}"#).unwrap();
        let v = compare(&k, &other, false, &HashSet::new());
        assert_eq!(v.fields, vec!["type", "table", "gateway", "dev"]);
        assert!(v.notes.is_empty(), "prefsrc is not compared across paths");
        let other_source = parse_json_answer(r#"{"dst":"10.9.0.5","gateway":"10.1.0.7","dev":"fd0","table":"100","prefsrc":"10.1.0.2"}"#).unwrap();
        let v = compare(&k, &other_source, false, &HashSet::new());
        assert!(v.agrees());
        assert_eq!(v.notes, vec!["prefsrc"]);
        assert_eq!(
            compare(&k, &other_source, true, &HashSet::new()).fields,
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
            &HashSet::new()
        )
        .agrees());
        assert_eq!(
            compare(
                &k,
                &Outcome::Error("Network is unreachable".into()),
                false,
                &HashSet::new()
            )
            .fields,
            vec!["error"]
        );
        let answer = parse_json_answer(r#"{"dst":"1.2.3.4","dev":"fd0"}"#).unwrap();
        assert_eq!(
            compare(&k, &answer, false, &HashSet::new()).fields,
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
        assert!(compare(&k, &other_path, false, &HashSet::new()).agrees());
        let dead_path =
            parse_json_answer(r#"{"dst":"198.51.100.1","gateway":"10.3.0.9","dev":"fd2"}"#)
                .unwrap();
        assert_eq!(
            compare(&k, &dead_path, false, &HashSet::new()).fields,
            vec!["nexthop"]
        );
        let crossed =
            parse_json_answer(r#"{"dst":"198.51.100.1","gateway":"10.2.3.4","dev":"fd0"}"#)
                .unwrap();
        assert_eq!(
            compare(&k, &crossed, false, &HashSet::new()).fields,
            vec!["nexthop"]
        );
        // The kernel drops a gateway that is one of its own addresses.
        let k_local_gw = reply(
            r#"[{"dst":"198.51.100.1","dev":"fd0"}]"#,
            r#"[{"dst":"198.51.100.0/24","nexthops":[{"gateway":"10.1.0.7","dev":"fd0","flags":[]},{"gateway":"10.2.3.4","dev":"fd1","flags":[]}]}]"#,
        );
        let no_gateway = parse_json_answer(r#"{"dst":"198.51.100.1","dev":"fd0"}"#).unwrap();
        assert!(compare(&k_local_gw, &no_gateway, false, &HashSet::new()).agrees());
        // ... and fibre may choose the other path with a local gateway.
        let k_other = reply(
            r#"[{"dst":"198.51.100.1","gateway":"10.2.3.4","dev":"fd1"}]"#,
            r#"[{"dst":"198.51.100.0/24","nexthops":[{"gateway":"10.1.0.7","dev":"fd0","flags":[]},{"gateway":"10.2.3.4","dev":"fd1","flags":[]}]}]"#,
        );
        let locals: HashSet<IpAddr> = ["10.1.0.7".parse().unwrap()].into();
        assert!(compare(&k_other, &no_gateway, false, &locals).agrees());
        assert!(!compare(&k_other, &no_gateway, false, &HashSet::new()).agrees());
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
        assert_eq!(locals, expected);
    }

    #[test]
    fn causes_name_family_form_and_classes() {
        let k = KernelReply {
            answer: Outcome::Error("Invalid argument".into()),
            route: Outcome::Error("Invalid argument".into()),
        };
        let f = Outcome::Error("Network is unreachable".into());
        let v = compare(&k, &f, false, &HashSet::new());
        assert_eq!(
            cause("2001:db8::1 from 2001:db8::2 iif fd0", &k, &f, &v),
            "v6 input: error differs; kernel error(Invalid argument) / fibre error(Network is unreachable)"
        );
        assert_eq!(
            label("2001:db8::1 from 2001:db8::2 iif fd0", &v),
            "v6-input-error"
        );
    }
}
