//! `fibre bench greflood`: seed 001's experiment, run by
//! [`fibre_dev::greflood`]: threads send 200-byte UDP frames through one
//! GRE tunnel to a dummy underlay, with the tunnel's transmit `locked` (a
//! per-device lock: the before) or lockless (`lltx`: the after), each with
//! and without output sequence numbers (`oseq`). This module only maps its
//! result onto the summary table.

use serde_json::json;

use fibre_dev::greflood::{run, GreFloodParams};

use crate::experiment::{Context, Experiment};
use crate::report::{ExperimentReport, Measurement};
use crate::BenchError;

/// The experiment.
///
/// ```
/// use fibre_bench::Experiment;
/// assert_eq!(fibre_bench::greflood::GrefloodExperiment.name(), "greflood");
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct GrefloodExperiment;

impl GrefloodExperiment {
    /// Frames per thread: seconds of work in full mode, a fraction of one in quick mode.
    fn params(ctx: &Context) -> GreFloodParams {
        let defaults = GreFloodParams::default();
        GreFloodParams {
            threads: ctx.threads,
            frames_per_thread: if ctx.quick {
                defaults.frames_per_thread
            } else {
                defaults.frames_per_thread * 5
            },
            repeats: if ctx.quick { 3 } else { defaults.repeats },
            ..defaults
        }
    }
}

impl Experiment for GrefloodExperiment {
    fn name(&self) -> &'static str {
        "greflood"
    }

    fn about(&self) -> &'static str {
        "UDP frames through one GRE tunnel: locked vs lockless transmit, with and without oseq (seed 001)"
    }

    fn run(&self, ctx: &Context) -> Result<ExperimentReport, BenchError> {
        let params = Self::params(ctx);
        let result = run(&params).map_err(|e| BenchError::Failed {
            experiment: "greflood",
            message: e.to_string(),
        })?;
        let measurements = result
            .summary()
            .into_iter()
            .map(|f| {
                let m = Measurement::new(f.name, f.value, f.unit);
                match f.ratio_to {
                    Some((ratio, to)) => m.with_ratio(ratio, to),
                    None => m,
                }
            })
            .collect();
        let rows: Vec<_> = result
            .rows
            .iter()
            .map(|r| {
                json!({
                    "strategy": r.strategy.name(),
                    "threads": r.threads,
                    "packets": r.packets,
                    "seconds": r.seconds,
                    "mpps": r.mpps,
                    "cpu_seconds": r.cpu_seconds,
                })
            })
            .collect();
        Ok(ExperimentReport {
            experiment: "greflood".into(),
            text: result.render(),
            detail: json!({
                "frames_per_thread": params.frames_per_thread,
                "batch": params.batch,
                "repeats": params.repeats,
                "rows": rows,
            }),
            measurements,
        })
    }
}
