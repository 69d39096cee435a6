//! Answers to one `route get` query, from either side, and the parser of
//! `ip -j -force -batch` output.
//!
//! Framing of `ip -j -force -batch -` (iproute2 6.1): every command that
//! succeeds writes one line to stdout, a JSON array holding one object;
//! every command that fails writes its message to stderr followed by
//! `Command failed -:N` (N = 1-based line of the batch). stdout and stderr
//! are separate pipes, so the failures' line numbers, not the interleaving,
//! put the answers back in order.

use std::collections::BTreeMap;
use std::net::IpAddr;

use serde_json::Value;

/// One path of an ECMP route, as `fibmatch` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    /// `gateway`.
    pub gateway: Option<IpAddr>,
    /// `dev`.
    pub dev: Option<String>,
    /// The path is marked `dead` (its device is down): never chosen.
    pub dead: bool,
}

/// A successful answer, reduced to the keys the comparison uses, plus the
/// raw JSON for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// `type`; absent in `ip -j` means `unicast`.
    pub kind: String,
    /// `dst` (an address, or a prefix in a `fibmatch` answer).
    pub dst: String,
    /// `gateway`.
    pub gateway: Option<IpAddr>,
    /// `dev`.
    pub dev: Option<String>,
    /// `table`; absent means the kernel reported main (or no table at all).
    pub table: String,
    /// `prefsrc`.
    pub prefsrc: Option<IpAddr>,
    /// `from`: the source asked for, echoed.
    pub from: Option<IpAddr>,
    /// `nexthops` of a multipath route (in `fibmatch` answers).
    pub paths: Vec<Path>,
    /// `metrics[0].mtu`: the route's MTU metric (or a PMTU exception's).
    pub mtu: Option<u64>,
    /// `cache`: the IPv4 route cache flags (`local`, `brd`, `mc`, ...).
    pub cache: Vec<String>,
    /// `flags`: the route flags ip prints (`rt_offload_failed` for IPv4
    /// multicast, `dead`, ...).
    pub flags: Vec<String>,
    /// `metric`, `protocol` and `pref` (IPv6 answers carry them).
    pub metric: Option<u64>,
    pub protocol: Option<String>,
    pub pref: Option<String>,
    /// The JSON object as printed.
    pub raw: String,
}

/// What one query got: an answer or the error text. Answers are made a
/// few thousand at a time and compared once, so the size gap between the
/// variants costs nothing worth a box at every match.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A route.
    Answer(Answer),
    /// A refusal, as the strerror text (`Network is unreachable`) or the
    /// kernel's extended-ack message without `Error: ` and the final period.
    Error(String),
}

impl Outcome {
    /// A one-line rendering for reports.
    pub fn render(&self) -> String {
        match self {
            Outcome::Answer(a) => a.raw.clone(),
            Outcome::Error(e) => format!("error: {e}"),
        }
    }

    /// A short class for grouping mismatches: `error(TEXT)` or `TYPE`.
    pub fn class(&self) -> String {
        match self {
            Outcome::Answer(a) => a.kind.clone(),
            Outcome::Error(e) => format!("error({e})"),
        }
    }
}

fn address(object: &serde_json::Map<String, Value>, key: &str) -> Result<Option<IpAddr>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => s
            .parse()
            .map(Some)
            .map_err(|_| format!("{key} is not an address: {s:?}")),
        Some(other) => Err(format!("{key} is not a string: {other}")),
    }
}

fn text(object: &serde_json::Map<String, Value>, key: &str) -> Option<String> {
    match object.get(key) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}

/// Reads one JSON answer: an object, or (as `ip -j` prints) an array
/// holding one object. `{"error": TEXT}` objects are refusals.
pub fn parse_json_answer(line: &str) -> Result<Outcome, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON ({e}): {line}"))?;
    let object = match &value {
        Value::Array(items) if items.len() == 1 => items[0].clone(),
        Value::Object(_) => value.clone(),
        _ => return Err(format!("expected one JSON object: {line}")),
    };
    let object = object
        .as_object()
        .ok_or_else(|| format!("expected a JSON object: {line}"))?;
    if let Some(error) = object.get("error") {
        let message = error
            .as_str()
            .ok_or_else(|| format!("error is not a string: {line}"))?;
        return Ok(Outcome::Error(normalise_error(message)));
    }
    let mut paths = Vec::new();
    if let Some(Value::Array(hops)) = object.get("nexthops") {
        for hop in hops {
            let hop = hop
                .as_object()
                .ok_or_else(|| format!("nexthop is not an object: {line}"))?;
            let dead =
                matches!(hop.get("flags"), Some(Value::Array(f)) if f.iter().any(|x| x == "dead"));
            paths.push(Path {
                gateway: address(hop, "gateway")?,
                dev: text(hop, "dev"),
                dead,
            });
        }
    }
    Ok(Outcome::Answer(Answer {
        kind: text(object, "type").unwrap_or_else(|| "unicast".into()),
        dst: text(object, "dst").unwrap_or_default(),
        gateway: address(object, "gateway")?,
        dev: text(object, "dev"),
        table: text(object, "table").unwrap_or_else(|| "main".into()),
        prefsrc: address(object, "prefsrc")?,
        from: address(object, "from")?,
        paths,
        mtu: object
            .get("metrics")
            .and_then(|m| m.get(0))
            .and_then(|m| m.get("mtu"))
            .and_then(Value::as_u64),
        cache: words(object, "cache"),
        flags: words(object, "flags"),
        metric: object.get("metric").and_then(Value::as_u64),
        protocol: text(object, "protocol"),
        pref: text(object, "pref"),
        raw: serde_json::to_string(&object).expect("a JSON map serialises"),
    }))
}

/// The strings of array `key` (none when absent).
fn words(object: &serde_json::Map<String, Value>, key: &str) -> Vec<String> {
    match object.get(key) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// `RTNETLINK answers: X` becomes `X`; `Error: X.` becomes `X`; anything
/// else (iproute2's own complaints) stays as it is.
pub fn normalise_error(message: &str) -> String {
    let message = message.trim();
    if let Some(rest) = message.strip_prefix("RTNETLINK answers: ") {
        return rest.trim().to_string();
    }
    if let Some(rest) = message.strip_prefix("Error: ") {
        return rest.trim().trim_end_matches('.').to_string();
    }
    message.to_string()
}

/// The failed batch lines and their messages, from `ip -force -batch -`'s stderr.
pub fn parse_failures(stderr: &str) -> Result<BTreeMap<usize, String>, String> {
    let mut failures = BTreeMap::new();
    let mut pending: Vec<&str> = Vec::new();
    for line in stderr.lines() {
        if let Some(rest) = line.strip_prefix("Command failed ") {
            let number = rest
                .rsplit(':')
                .next()
                .and_then(|n| n.trim().parse::<usize>().ok())
                .ok_or_else(|| format!("unreadable failure line: {line}"))?;
            let message = pending.join(" ");
            failures.insert(number, normalise_error(&message));
            pending.clear();
        } else if !line.trim().is_empty() {
            pending.push(line);
        }
    }
    Ok(failures)
}

/// The message after the last `Command failed` line: what `ip` said
/// before it gave up on a batch.
pub fn unfinished_message(stderr: &str) -> String {
    let tail = stderr
        .lines()
        .rev()
        .take_while(|l| !l.starts_with("Command failed "))
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>();
    let message: Vec<&str> = tail.into_iter().rev().collect();
    normalise_error(&message.join(" "))
}

/// Puts a batch's answers back in order: `lines` commands were run.
pub fn parse_batch(stdout: &str, stderr: &str, lines: usize) -> Result<Vec<Outcome>, String> {
    let failures = parse_failures(stderr)?;
    let mut successes = stdout.lines().filter(|l| !l.trim().is_empty());
    let mut outcomes = Vec::with_capacity(lines);
    for number in 1..=lines {
        match failures.get(&number) {
            Some(message) => outcomes.push(Outcome::Error(message.clone())),
            None => {
                let line = successes.next().ok_or_else(|| {
                    format!("ip printed fewer answers than commands (missing line {number}); stderr: {stderr}")
                })?;
                outcomes.push(parse_json_answer(line)?);
            }
        }
    }
    if let Some(extra) = successes.next() {
        return Err(format!(
            "ip printed more answers than commands, e.g. {extra}"
        ));
    }
    Ok(outcomes)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Captured from iproute2 6.1 on Linux 6.18 (`ip -n NS -j -force -batch -`).
    const STDOUT: &str = r#"[{"dst":"10.1.0.5","dev":"fd0","prefsrc":"10.1.0.1","flags":[],"uid":0,"cache":[]}]
[{"type":"local","dst":"10.1.0.1","from":"10.1.0.5","dev":"lo","table":"local","flags":[],"cache":["local"],"iif":"fd0"}]
[{"dst":"2001:db8:200::/48","metric":1024,"flags":[],"pref":"medium","nexthops":[{"gateway":"2001:db8:1::7","dev":"fd0","weight":2,"flags":[]},{"gateway":"2001:db8:2::4","dev":"fd1","weight":1,"flags":["dead","linkdown"]}]}]
"#;
    const STDERR: &str = "RTNETLINK answers: Invalid argument\nCommand failed -:2\nError: Nexthop has invalid gateway.\nCommand failed -:4\n";

    #[test]
    fn batch_answers_are_put_back_in_order() {
        let outcomes = parse_batch(STDOUT, STDERR, 5).unwrap();
        assert_eq!(outcomes.len(), 5);
        let Outcome::Answer(first) = &outcomes[0] else {
            panic!("{outcomes:?}")
        };
        assert_eq!(first.kind, "unicast");
        assert_eq!(first.table, "main");
        assert_eq!(first.dev.as_deref(), Some("fd0"));
        assert_eq!(first.gateway, None);
        assert_eq!(first.prefsrc, Some("10.1.0.1".parse().unwrap()));
        assert_eq!(outcomes[1], Outcome::Error("Invalid argument".into()));
        let Outcome::Answer(local) = &outcomes[2] else {
            panic!()
        };
        assert_eq!(
            (local.kind.as_str(), local.table.as_str()),
            ("local", "local")
        );
        assert_eq!(
            outcomes[3],
            Outcome::Error("Nexthop has invalid gateway".into())
        );
        let Outcome::Answer(ecmp) = &outcomes[4] else {
            panic!()
        };
        assert_eq!(ecmp.paths.len(), 2);
        assert_eq!(
            ecmp.paths[0].gateway,
            Some("2001:db8:1::7".parse().unwrap())
        );
        assert!(!ecmp.paths[0].dead);
        assert!(ecmp.paths[1].dead);
    }

    #[test]
    fn miscounted_batches_are_refused_not_guessed() {
        assert!(parse_batch(STDOUT, STDERR, 4).is_err());
        assert!(parse_batch(STDOUT, STDERR, 6).is_err());
        assert!(parse_batch("not json\n", "", 1).is_err());
    }

    #[test]
    fn fibre_objects_and_error_objects_are_read() {
        let ok = parse_json_answer(
            r#"{"dst":"8.8.8.8","gateway":"10.0.0.1","dev":"fd0","table":"100"}"#,
        )
        .unwrap();
        let Outcome::Answer(a) = ok else { panic!() };
        assert_eq!(a.table, "100");
        assert_eq!(a.gateway, Some("10.0.0.1".parse().unwrap()));
        let err =
            parse_json_answer(r#"{"dst":"8.8.8.8","error":"Network is unreachable"}"#).unwrap();
        assert_eq!(err, Outcome::Error("Network is unreachable".into()));
        assert!(parse_json_answer(r#"{"dst":"8.8.8.8","gateway":"nonsense"}"#).is_err());
    }

    #[test]
    fn the_message_ip_gave_up_with_is_found() {
        let stderr = "Error: Device for nexthop is not up.\nCommand failed -:3\nCannot find device \"fd1\"\nError: cannot parse nexthop\n";
        assert_eq!(
            unfinished_message(stderr),
            "Cannot find device \"fd1\" Error: cannot parse nexthop"
        );
        assert_eq!(unfinished_message("Command failed -:1\n"), "");
    }

    #[test]
    fn error_texts_are_normalised() {
        assert_eq!(
            normalise_error("RTNETLINK answers: No route to host"),
            "No route to host"
        );
        assert_eq!(
            normalise_error("Error: Device for nexthop is not up."),
            "Device for nexthop is not up"
        );
        assert_eq!(
            normalise_error("Cannot find device \"x\""),
            "Cannot find device \"x\""
        );
    }
}
