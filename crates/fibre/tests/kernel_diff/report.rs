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
    /// What differs.
    pub verdict: Verdict,
    /// Grouping key.
    pub cause: String,
}

/// One case's results.
#[derive(Debug, Clone, Default)]
pub struct CaseOutcome {
    /// Configuration lines the kernel refused.
    pub refusals: Vec<Refusal>,
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

    /// True when this cause was already seen.
    pub fn has_cause(&self, cause: &str) -> bool {
        self.causes.contains_key(cause)
    }

    /// Adds a case's counts (its mismatches are added one by one).
    pub fn add_case(&mut self, outcome: &CaseOutcome) {
        self.compared += outcome.compared;
        self.mismatches += outcome.mismatches.len();
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
            "\n=== kernel_diff {title}: {} answers compared, {} differ ===",
            self.compared, self.mismatches
        );
        let mut causes: Vec<_> = self.causes.iter().collect();
        causes.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
        for (cause, (count, example)) in causes {
            eprintln!("  {count:5} x {cause}\n          e.g. {example}");
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
        for (number, line) in related_lines(config, &mismatch.kernel) {
            eprintln!("    config {number:3}: {line}");
        }
    }
    if outcome.mismatches.len() > show {
        eprintln!("  ... and {} more", outcome.mismatches.len() - show);
    }
}
