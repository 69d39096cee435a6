//! What an experiment hands back, and the summary table every run ends with.

use serde::Serialize;

use crate::table::{Align, Table};
use crate::timing::Rate;

/// A figure compared to another: `value` times `to`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ratio {
    /// The quotient (this figure over the other).
    pub value: f64,
    /// What it is compared to, in words ("best peer (prefix-trie)").
    pub to: String,
}

/// One headline figure of an experiment: a row of the summary table.
///
/// ```
/// use fibre_bench::{Measurement, Ratio};
/// let m = Measurement::new("IPv4 fibre, 1 thread, batched", 123.4, "M lookups/s")
///     .with_ratio(3.2, "best peer (poptrie)");
/// assert_eq!(m.figure(), "123 M lookups/s");
/// assert_eq!(m.ratio_text(), "3.20x best peer (poptrie)");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measurement {
    /// The case measured.
    pub name: String,
    /// The figure.
    pub value: f64,
    /// Its unit.
    pub unit: String,
    /// The comparison that gives it meaning, if any.
    pub ratio_to: Option<Ratio>,
}

impl Measurement {
    /// A figure without comparison.
    pub fn new(name: impl Into<String>, value: f64, unit: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            value,
            unit: unit.into(),
            ratio_to: None,
        }
    }

    /// The same figure compared to something: `ratio` times `to`.
    pub fn with_ratio(mut self, ratio: f64, to: impl Into<String>) -> Self {
        self.ratio_to = Some(Ratio {
            value: ratio,
            to: to.into(),
        });
        self
    }

    /// `rate` in millions of `unit` a second, compared with `base` (named
    /// `to`) by [`Rate::over`].
    pub fn rate_over(
        name: impl Into<String>,
        rate: &Rate,
        unit: impl Into<String>,
        base: &Rate,
        to: impl Into<String>,
    ) -> Self {
        Self::new(name, rate.millions(), unit).with_ratio(rate.over(base), to)
    }

    /// The value with about three significant digits, and the unit.
    pub fn figure(&self) -> String {
        format!("{} {}", format_value(self.value), self.unit)
    }

    /// "3.20x best peer (poptrie)", or empty without a ratio.
    pub fn ratio_text(&self) -> String {
        self.ratio_to
            .as_ref()
            .map(|r| format!("{:.2}x {}", r.value, r.to))
            .unwrap_or_default()
    }
}

/// A number with about three significant digits: 1234 -> "1234", 12.34 -> "12.3", 0.1234 -> "0.123".
pub fn format_value(value: f64) -> String {
    let magnitude = value.abs();
    if !value.is_finite() {
        value.to_string()
    } else if magnitude >= 100.0 || magnitude == 0.0 {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else if magnitude >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

/// Everything one experiment produced.
#[derive(Debug, Clone, Serialize)]
pub struct ExperimentReport {
    /// The experiment's name (`lookup`).
    pub experiment: String,
    /// The detailed human-readable report.
    #[serde(skip)]
    pub text: String,
    /// The detailed machine-readable report.
    pub detail: serde_json::Value,
    /// The headline figures, for the summary table.
    pub measurements: Vec<Measurement>,
}

/// The summary table: one row per measurement of every report, with the
/// columns experiment, case, figure and ratio.
///
/// ```
/// use fibre_bench::report::{summary_table, ExperimentReport};
/// use fibre_bench::Measurement;
/// let report = ExperimentReport {
///     experiment: "lookup".into(),
///     text: String::new(),
///     detail: serde_json::Value::Null,
///     measurements: vec![Measurement::new("IPv4 fibre build", 0.12, "s")],
/// };
/// let text = summary_table(&[report]);
/// assert!(text.lines().nth(2).unwrap().starts_with("lookup      IPv4 fibre build"));
/// ```
pub fn summary_table(reports: &[ExperimentReport]) -> String {
    let mut table = Table::new(&[
        ("experiment", Align::Left),
        ("case", Align::Left),
        ("figure", Align::Right),
        ("ratio", Align::Left),
    ]);
    for report in reports {
        for m in &report.measurements {
            table.row(vec![
                report.experiment.clone(),
                m.name.clone(),
                m.figure(),
                m.ratio_text(),
            ]);
        }
    }
    table.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_about_three_digits() {
        assert_eq!(format_value(1234.5), "1234");
        assert_eq!(format_value(123.45), "123");
        assert_eq!(format_value(12.345), "12.3");
        assert_eq!(format_value(1.2345), "1.23");
        assert_eq!(format_value(0.12345), "0.123");
        assert_eq!(format_value(0.0), "0");
    }

    #[test]
    fn the_summary_has_one_row_per_measurement_of_every_experiment() {
        let reports = vec![
            ExperimentReport {
                experiment: "lookup".into(),
                text: String::new(),
                detail: serde_json::Value::Null,
                measurements: vec![
                    Measurement::new("IPv4 fibre 1 thread", 150.0, "M lookups/s")
                        .with_ratio(4.0, "best peer (poptrie)"),
                    Measurement::new("IPv4 fibre memory", 4.5, "B/prefix"),
                ],
            },
            ExperimentReport {
                experiment: "synflood".into(),
                text: String::new(),
                detail: serde_json::Value::Null,
                measurements: vec![Measurement::new("16 threads", 29.8, "s")],
            },
        ];
        let text = summary_table(&reports);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert_eq!(
            lines[0],
            "experiment  case                          figure  ratio"
        );
        assert_eq!(
            lines[2],
            "lookup      IPv4 fibre 1 thread  150 M lookups/s  4.00x best peer (poptrie)"
        );
        assert_eq!(lines[3], "lookup      IPv4 fibre memory      4.50 B/prefix");
        assert_eq!(lines[4], "synflood    16 threads                    29.8 s");
    }
}
