//! The differences a run found, grouped by kind for a person: the line,
//! ip's verdict and message, fibre's; most frequent groups first.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One line on which fibre and ip/the kernel differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// `link`, `addr`, `route`, `rule` or `gre` (a GRE line judged by
    /// parsers only), or `base`.
    pub family: String,
    /// `verdict` (accepted or refused differently), `state` (the same
    /// verdict, a different FIB after it) or `fibre failed`.
    pub class: String,
    /// The generated line.
    pub line: String,
    /// The generated lines applied before it (after the base).
    pub context: Vec<String>,
    /// What ip/the kernel did.
    pub kernel: String,
    /// What fibre did.
    pub fibre: String,
    /// For a state difference: which show or query differs.
    pub what: String,
    /// Where it was found (seed and chunk, or a corpus file).
    pub origin: String,
}

/// `accepted`, or `refused (MESSAGE)`.
pub fn side(message: &Option<String>) -> String {
    match message {
        Some(m) => format!("refused: {m}"),
        None => "accepted".into(),
    }
}

/// A message with its specifics (quoted tokens, numbers) blanked, so that
/// the same refusal of different tokens groups together.
fn sketch(message: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    for c in message.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                if quoted {
                    out.push_str("\"…\"");
                }
            }
            _ if quoted => {}
            c if c.is_ascii_digit() => {
                if !out.ends_with('N') {
                    out.push('N');
                }
            }
            c => out.push(c),
        }
    }
    out.chars().take(110).collect()
}

impl Finding {
    /// The group a finding belongs to.
    pub fn group(&self) -> String {
        match self.class.as_str() {
            "verdict" => {
                let accepted = |s: &str| s == "accepted";
                let message = if !accepted(&self.kernel) {
                    &self.kernel
                } else {
                    &self.fibre
                };
                let who = match (accepted(&self.kernel), accepted(&self.fibre)) {
                    (true, false) => "ip accepts, fibre refuses",
                    (false, true) => "ip refuses, fibre accepts",
                    _ => "both refuse, fibre without ip's message",
                };
                if accepted(&self.kernel) || accepted(&self.fibre) {
                    format!("{}: {who}: {}", self.family, sketch(message))
                } else {
                    format!(
                        "{}: {who}: ip {}",
                        self.family,
                        sketch(self.kernel.trim_start_matches("refused: "))
                    )
                }
            }
            "state" => format!(
                "{}: same verdict, different state: {}",
                self.family,
                self.what.split(" (").next().unwrap_or("")
            ),
            other => format!("{}: {other}: {}", self.family, sketch(&self.fibre)),
        }
    }
}

/// Findings grouped: (group, findings), most frequent first.
pub fn grouped(findings: &[Finding]) -> Vec<(String, Vec<&Finding>)> {
    let mut groups: BTreeMap<String, Vec<&Finding>> = BTreeMap::new();
    for finding in findings {
        groups.entry(finding.group()).or_default().push(finding);
    }
    let mut groups: Vec<_> = groups.into_iter().collect();
    groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    groups
}

/// Counts by family.
pub fn by_family(findings: &[Finding]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for finding in findings {
        *counts.entry(finding.family.clone()).or_default() += 1;
    }
    counts
}

fn example(text: &mut String, finding: &Finding) {
    let _ = writeln!(text, "  - line: `{}`", finding.line.replace('\t', "\\t"));
    if !finding.context.is_empty() {
        let shown: Vec<&str> = finding
            .context
            .iter()
            .rev()
            .take(4)
            .map(String::as_str)
            .collect();
        let _ = writeln!(
            text,
            "    after {} generated line(s), the last: `{}`",
            finding.context.len(),
            shown.into_iter().rev().collect::<Vec<_>>().join("` ; `")
        );
    }
    if !finding.what.is_empty() {
        let _ = writeln!(text, "    differs: {}", finding.what);
    }
    let _ = writeln!(text, "    ip:    {}", finding.kernel);
    let _ = writeln!(text, "    fibre: {}", finding.fibre);
    let _ = writeln!(text, "    ({})", finding.origin);
}

/// A listing for stderr or a Markdown file: totals, then each group with
/// up to `examples` examples.
/// `lines` counts the generated lines of each family (empty: not known).
pub fn render(
    title: &str,
    findings: &[Finding],
    examples: usize,
    lines: &BTreeMap<String, usize>,
) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "## {title}: {} differences\n", findings.len());
    let found = by_family(findings);
    let families: std::collections::BTreeSet<&String> = found.keys().chain(lines.keys()).collect();
    for family in families {
        let count = found.get(family).copied().unwrap_or(0);
        match lines.get(family) {
            Some(n) => {
                let _ = writeln!(
                    text,
                    "- {family}: {count} differences in {n} generated lines"
                );
            }
            None => {
                let _ = writeln!(text, "- {family}: {count} differences");
            }
        }
    }
    let _ = writeln!(text);
    for (group, members) in grouped(findings) {
        let _ = writeln!(text, "### {} x {group}\n", members.len());
        for finding in members.iter().take(examples) {
            example(&mut text, finding);
        }
        let _ = writeln!(text);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(family: &str, kernel: &str, fibre: &str, line: &str) -> Finding {
        Finding {
            family: family.into(),
            class: "verdict".into(),
            line: line.into(),
            context: Vec::new(),
            kernel: kernel.into(),
            fibre: fibre.into(),
            what: String::new(),
            origin: "test".into(),
        }
    }

    #[test]
    fn the_same_refusal_of_other_tokens_groups_together() {
        let a = finding(
            "route",
            "accepted",
            "refused: \"tab\": expected a prefix, got \"100\"",
            "route add 10.20.0.0/16 dev fd0 tab 100",
        );
        let b = finding(
            "route",
            "accepted",
            "refused: \"tabl\": expected a prefix, got \"200\"",
            "route add 10.21.0.0/16 dev fd0 tabl 200",
        );
        let c = finding(
            "rule",
            "refused: File exists",
            "accepted",
            "rule add pref 5",
        );
        assert_eq!(a.group(), b.group());
        assert_ne!(a.group(), c.group());
        let all = [c.clone(), a, b];
        let groups = grouped(&all);
        assert_eq!(groups[0].1.len(), 2);
        assert_eq!(by_family(&[c]).get("rule"), Some(&1));
        assert_eq!(sketch("a \"x\" 4294967296 b"), "a \"…\" N b");
    }
}
