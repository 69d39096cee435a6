//! The summary figures that the engines of `udpflood`, `refcnt` and
//! `greflood` return, mapped onto [`Measurement`] rows.

use serde_json::json;

use crate::report::{ExperimentReport, Measurement};

/// One figure for a benchmark summary table.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryFigure {
    /// The case, e.g. `greflood lltx 2 thread(s)`.
    pub name: String,
    /// The figure.
    pub value: f64,
    /// Its unit.
    pub unit: &'static str,
    /// The ratio to another figure, and that figure's name.
    pub ratio_to: Option<(f64, String)>,
}

/// One summary row per figure, with its ratio where it has one.
pub fn measurements(figures: Vec<SummaryFigure>) -> Vec<Measurement> {
    figures
        .into_iter()
        .map(|f| {
            let m = Measurement::new(f.name, f.value, f.unit);
            match f.ratio_to {
                Some((ratio, to)) => m.with_ratio(ratio, to),
                None => m,
            }
        })
        .collect()
}

/// A report made of an experiment's rendered table and its summary figures;
/// `detail` carries the parameters the run used.
pub fn report(
    experiment: &'static str,
    text: String,
    detail: serde_json::Value,
    figures: Vec<SummaryFigure>,
) -> ExperimentReport {
    let measurements = measurements(figures);
    ExperimentReport {
        experiment: experiment.into(),
        text,
        detail: json!({ "parameters": detail, "summary": measurements }),
        measurements,
    }
}
