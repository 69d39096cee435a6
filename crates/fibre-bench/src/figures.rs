//! The summary figures that the engines of `udpflood`, `refcnt` and
//! `greflood` return, mapped onto [`Measurement`] rows, and the [`Sweep`]
//! of rows each engine's run is.

use serde_json::json;

use crate::report::{ExperimentReport, Measurement};

/// A row of an engine's [`Sweep`]: one case (a strategy, a layout) at one
/// thread count.
pub trait SweepRow {
    /// What the engine compares (its strategies or layouts).
    type Case: Copy + PartialEq;
    /// The row's case and thread count.
    fn case(&self) -> (Self::Case, usize);
}

/// An engine's run: the parameters it ran with and its rows, case-major,
/// thread counts ascending.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep<P, R> {
    /// Parameters it ran with.
    pub params: P,
    /// One row per case and thread count.
    pub rows: Vec<R>,
}

impl<P, R: SweepRow> Sweep<P, R> {
    /// The row of `case` at `threads`.
    pub fn row(&self, case: R::Case, threads: usize) -> Option<&R> {
        self.rows.iter().find(|r| r.case() == (case, threads))
    }

    /// `figure` of the row of `case` over `figure` of the row of `base`,
    /// each a (case, threads) pair; none when either row is missing.
    pub fn ratio(
        &self,
        (case, threads): (R::Case, usize),
        (base, base_threads): (R::Case, usize),
        figure: impl Fn(&R) -> f64,
    ) -> Option<f64> {
        Some(figure(self.row(case, threads)?) / figure(self.row(base, base_threads)?))
    }
}

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
