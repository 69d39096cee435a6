//! `fibre bench refcnt`: the experiment of "net: Cache align dst refcnt"
//! (Tom Herbert, commit 5635c10d976716), run by [`engine`]: reader threads read a route's MTU and device
//! while other threads hold and release it, with the reference count on
//! the read-mostly cache line (the before) or alone on its own line (the
//! after). This module only maps its result onto the summary table.

use serde_json::json;

pub mod engine;

use engine::{run, RefcntParams};

use crate::experiment::{Context, Experiment};
use crate::report::ExperimentReport;
use crate::{figures, BenchError};

/// The experiment (in [`crate::registry`] as [`NAME`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct RefcntExperiment;

/// The experiment's name on the command line (`fibre bench refcnt`).
pub const NAME: &str = "refcnt";
/// One line on what it measures (`fibre bench --list`).
pub const ABOUT: &str =
    "route readers beside reference-count writers: counter on the read-mostly line vs its own (cache-aligned dst refcnt)";

impl Experiment for RefcntExperiment {
    fn run(&self, ctx: &Context) -> Result<ExperimentReport, BenchError> {
        let defaults = RefcntParams::default();
        let params = RefcntParams {
            threads: ctx.threads,
            reads: if ctx.quick {
                defaults.reads / 5
            } else {
                defaults.reads
            },
        };
        let result = run(&params).map_err(|e| BenchError::Failed {
            experiment: NAME,
            message: e.to_string(),
        })?;
        Ok(figures::report(
            "refcnt",
            result.render(),
            json!({ "threads": params.threads, "reads": params.reads }),
            result.summary(),
        ))
    }
}
