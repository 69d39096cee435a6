//! What a run found, printed for a person: each case's mismatches with the
//! query, both answers, the kernel's matching route and the configuration
//! lines behind it; a tally of causes at the end.

use std::collections::BTreeMap;

use super::answer::Outcome;
use super::compare::Verdict;
use super::kernel::{KernelReply, Refusal};

/// One answer that differs.
#[derive(Debug, Clone)]
pub struct Mismatch {
    /// 0-based index of the query in its case.
    pub index: usize,
    /// The query.
    pub query: String,
    /// The kernel's reply.
    pub kernel: KernelReply,
    /// fibre's answer.
    pub fibre: Outcome,
    /// fibre's `fibmatch` answer.
    pub fibre_route: Outcome,
    /// What differs.
    pub verdict: Verdict,
    /// Grouping key.
    pub cause: String,
}

/// A configuration line one side refused and the other did not, or
/// refused with another message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusalDifference {
    /// 1-based line.
    pub line: usize,
    /// The kernel's message, `None` when it took the line.
    pub kernel: Option<String>,
    /// fibre's message, `None` when it took the line.
    pub fibre: Option<String>,
}

impl RefusalDifference {
    fn side(message: &Option<String>) -> String {
        match message {
            Some(m) => format!("refused ({m})"),
            None => "accepted".into(),
        }
    }

    /// A grouping key: what kind of line, and what each side did.
    pub fn cause(&self, config: &[String]) -> String {
        let text = config.get(self.line - 1).map(String::as_str).unwrap_or("");
        let words: Vec<&str> = text
            .split_whitespace()
            .filter(|w| !w.starts_with('-'))
            .take(2)
            .collect();
        format!(
            "config `{}`: kernel {} / fibre {}",
            words.join(" "),
            Self::side(&self.kernel),
            Self::side(&self.fibre)
        )
    }
}

/// The lines the two sides refused differently: one side only, or
/// messages where fibre's does not contain the kernel's.
pub fn refusal_differences(kernel: &[Refusal], fibre: &[Refusal]) -> Vec<RefusalDifference> {
    let by_line = |refusals: &[Refusal]| -> BTreeMap<usize, String> {
        refusals
            .iter()
            .map(|r| (r.line, r.message.clone()))
            .collect()
    };
    let (kernel, fibre) = (by_line(kernel), by_line(fibre));
    let lines: std::collections::BTreeSet<usize> =
        kernel.keys().chain(fibre.keys()).copied().collect();
    lines
        .into_iter()
        .filter(|line| match (kernel.get(line), fibre.get(line)) {
            // fibre may say more than iproute2 about a line it cannot
            // parse, as long as it says what iproute2 says too.
            (Some(k), Some(f)) => !f.contains(k.as_str()),
            (k, f) => k != f,
        })
        .map(|line| RefusalDifference {
            line,
            kernel: kernel.get(&line).cloned(),
            fibre: fibre.get(&line).cloned(),
        })
        .collect()
}

/// One case's results.
#[derive(Debug, Clone, Default)]
pub struct CaseOutcome {
    /// Configuration lines the kernel refused.
    pub refusals: Vec<Refusal>,
    /// Configuration lines refused differently by the two sides.
    pub refusal_differences: Vec<RefusalDifference>,
    /// Answers compared.
    pub compared: usize,
    /// Answers that differ.
    pub mismatches: Vec<Mismatch>,
    /// Noted (non-failing) differences by field.
    pub notes: BTreeMap<String, usize>,
}

/// Totals over many cases.
#[derive(Debug, Default)]
pub struct Tally {
    /// Answers compared.
    pub compared: usize,
    /// Answers that differ.
    pub mismatches: usize,
    /// Configuration lines refused differently.
    pub refusal_mismatches: usize,
    /// Cases that could not be run (fibre or `ip` failed), with why.
    pub failures: Vec<String>,
    /// Count and first example (origin, query) per cause.
    causes: BTreeMap<String, (usize, String)>,
    /// Kernel refusals of configuration lines by message.
    refusals: BTreeMap<String, usize>,
    /// Noted differences by field.
    notes: BTreeMap<String, usize>,
}

impl Tally {
    /// Counts a mismatch.
    pub fn add_mismatch(&mut self, origin: &str, mismatch: &Mismatch) {
        let entry = self
            .causes
            .entry(mismatch.cause.clone())
            .or_insert_with(|| {
                (
                    0,
                    format!("{origin} query {}: {}", mismatch.index + 1, mismatch.query),
                )
            });
        entry.0 += 1;
    }

    /// Records a case that could not be run at all.
    pub fn add_failure(&mut self, origin: &str, why: &str) {
        eprintln!("kernel_diff {origin}: COULD NOT RUN: {why}");
        self.failures.push(format!("{origin}: {why}"));
    }

    /// True when nothing differed and every case ran.
    pub fn clean(&self) -> bool {
        self.mismatches == 0 && self.refusal_mismatches == 0 && self.failures.is_empty()
    }

    /// True when this cause was already seen.
    pub fn has_cause(&self, cause: &str) -> bool {
        self.causes.contains_key(cause)
    }

    /// Adds a case's counts (its answer mismatches are added one by one).
    pub fn add_case(&mut self, origin: &str, config: &[String], outcome: &CaseOutcome) {
        self.compared += outcome.compared;
        self.mismatches += outcome.mismatches.len();
        self.refusal_mismatches += outcome.refusal_differences.len();
        for difference in &outcome.refusal_differences {
            let entry = self
                .causes
                .entry(difference.cause(config))
                .or_insert_with(|| (0, format!("{origin} config line {}", difference.line)));
            entry.0 += 1;
        }
        for refusal in &outcome.refusals {
            *self.refusals.entry(refusal.message.clone()).or_default() += 1;
        }
        for (field, count) in &outcome.notes {
            *self.notes.entry(field.clone()).or_default() += count;
        }
    }

    /// Prints the totals.
    pub fn print(&self, title: &str) {
        eprintln!(
            "\n=== kernel_diff {title}: {} answers compared, {} differ; {} configuration lines refused differently ===",
            self.compared, self.mismatches, self.refusal_mismatches
        );
        let mut causes: Vec<_> = self.causes.iter().collect();
        causes.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
        for (cause, (count, example)) in causes {
            eprintln!("  {count:5} x {cause}\n          e.g. {example}");
        }
        for failure in &self.failures {
            eprintln!("  could not run: {failure}");
        }
        if !self.notes.is_empty() {
            eprintln!("  noted, not failing: {:?}", self.notes);
        }
        if !self.refusals.is_empty() {
            eprintln!(
                "  configuration lines the kernel refused, by message: {:?}",
                self.refusals
            );
        }
    }
}

/// The configuration lines worth showing next to a mismatch: those naming
/// the prefix of the kernel's matching route, and every rule.
fn related_lines(config: &[String], kernel: &KernelReply) -> Vec<(usize, String)> {
    let prefix = match &kernel.route {
        Outcome::Answer(route) => route.dst.clone(),
        Outcome::Error(_) => String::new(),
    };
    let names: Vec<String> = if prefix == "default" {
        vec!["default".into(), "0.0.0.0/0".into(), "::/0".into()]
    } else if prefix.is_empty() {
        Vec::new()
    } else {
        vec![prefix]
    };
    // A host route's dst is a bare address; its line may be `addr add A/LEN`.
    let names_word = |word: &str| {
        let address = word.split('/').next().unwrap_or(word);
        names
            .iter()
            .any(|n| n == word || (!n.contains('/') && n == address))
    };
    config
        .iter()
        .enumerate()
        .filter(|(_, line)| {
            let words: Vec<&str> = line.split_whitespace().collect();
            words.iter().any(|w| names_word(w)) || words.contains(&"rule")
        })
        .map(|(i, line)| (i + 1, line.clone()))
        .collect()
}

/// Prints one case's mismatches (at most `show` in detail).
pub fn print_case(origin: &str, config: &[String], outcome: &CaseOutcome, show: usize) {
    for difference in outcome.refusal_differences.iter().take(show) {
        eprintln!(
            "kernel_diff {origin}: config line {} `{}`: kernel {}, fibre {}",
            difference.line,
            config
                .get(difference.line - 1)
                .map(String::as_str)
                .unwrap_or(""),
            RefusalDifference::side(&difference.kernel),
            RefusalDifference::side(&difference.fibre)
        );
    }
    if outcome.mismatches.is_empty() {
        eprintln!(
            "kernel_diff {origin}: {} answers agree ({} config lines, {} refused by the kernel)",
            outcome.compared,
            config.len(),
            outcome.refusals.len()
        );
        return;
    }
    eprintln!(
        "\n--- kernel_diff {origin}: {} of {} answers differ ({} config lines; kernel refused lines {:?}) ---",
        outcome.mismatches.len(),
        outcome.compared,
        config.len(),
        outcome.refusals.iter().map(|r| r.line).collect::<Vec<_>>()
    );
    for mismatch in outcome.mismatches.iter().take(show) {
        eprintln!("  query {}: {}", mismatch.index + 1, mismatch.query);
        eprintln!("    differs:      {}", mismatch.verdict.fields.join(", "));
        eprintln!("    kernel:       {}", mismatch.kernel.answer.render());
        eprintln!("    fibre:        {}", mismatch.fibre.render());
        eprintln!("    kernel route: {}", mismatch.kernel.route.render());
        eprintln!("    fibre route:  {}", mismatch.fibre_route.render());
        for (number, line) in related_lines(config, &mismatch.kernel) {
            eprintln!("    config {number:3}: {line}");
        }
    }
    if outcome.mismatches.len() > show {
        eprintln!("  ... and {} more", outcome.mismatches.len() - show);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(line: usize, message: &str) -> Refusal {
        Refusal {
            line,
            message: message.into(),
        }
    }

    #[test]
    fn refusals_differ_by_line_and_by_message() {
        let kernel = [
            refusal(3, "File exists"),
            refusal(5, "No route to host"),
            refusal(
                7,
                "\"nexthop\" or end of line is expected instead of \"src\"",
            ),
        ];
        let fibre = [
            refusal(3, "File exists"),
            refusal(5, "Network is unreachable"),
            refusal(7, "\"nexthop\": expected via (Error: \"nexthop\" or end of line is expected instead of \"src\")"),
            refusal(9, "Invalid argument"),
        ];
        let differences = refusal_differences(&kernel, &fibre);
        assert_eq!(differences.len(), 2);
        assert_eq!(differences[0].line, 5);
        assert_eq!(differences[1].kernel, None);
        let config: Vec<String> = (1..=9)
            .map(|n| format!("-4 route add {n}.0.0.0/8 dev fd0"))
            .collect();
        assert_eq!(
            differences[1].cause(&config),
            "config `route add`: kernel accepted / fibre refused (Invalid argument)"
        );
        assert!(refusal_differences(&kernel, &kernel).is_empty());
    }
}
