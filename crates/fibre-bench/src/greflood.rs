//! `fibre bench greflood`: seed 001's experiment, run by
//! [`fibre_dev::greflood`]: threads send 200-byte UDP frames through one
//! GRE tunnel to a dummy underlay, with the tunnel's transmit `locked` (a
//! per-device lock: the before) or lockless (`lltx`: the after), each with
//! and without output sequence numbers (`oseq`). This module only maps its
//! result onto the summary table.

use serde_json::json;

use fibre_dev::greflood::{run, GreFloodParams};

use crate::experiment::{Context, Experiment};
use crate::report::ExperimentReport;
use crate::{figures, BenchError};

/// The experiment.
///
/// ```
/// use fibre_bench::Experiment;
/// assert_eq!(fibre_bench::greflood::GrefloodExperiment.name(), "greflood");
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct GrefloodExperiment;

impl Experiment for GrefloodExperiment {
    fn name(&self) -> &'static str {
        "greflood"
    }

    fn about(&self) -> &'static str {
        "UDP frames through one GRE tunnel: locked vs lockless transmit, with and without oseq (seed 001)"
    }

    fn run(&self, ctx: &Context) -> Result<ExperimentReport, BenchError> {
        let defaults = GreFloodParams::default();
        let params = GreFloodParams {
            threads: ctx.threads,
            // Quick: ~0.1 s a case here; full: five times that.
            frames_per_thread: if ctx.quick {
                defaults.frames_per_thread
            } else {
                defaults.frames_per_thread * 5
            },
            repeats: if ctx.quick { 3 } else { defaults.repeats },
            ..defaults
        };
        let result = run(&params).map_err(|e| BenchError::Failed {
            experiment: "greflood",
            message: e.to_string(),
        })?;
        Ok(figures::report(
            "greflood",
            result.render(),
            json!({
                "threads": params.threads,
                "frames_per_thread": params.frames_per_thread,
                "batch": params.batch,
                "repeats": params.repeats,
            }),
            result.summary(),
        ))
    }
}
