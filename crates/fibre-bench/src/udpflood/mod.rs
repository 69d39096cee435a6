//! `fibre bench udpflood`: the experiment of "ipv4: percpu nh_rth_output
//! cache" (Eric Dumazet, 2012), run by [`engine`]: threads send UDP frames
//! whose output route
//! comes from a linux-3.5-like global cache, one shared cached route per
//! nexthop (the before), per-core cached routes (the after) or a borrowed
//! route with no reference count. This module only maps its result onto
//! the summary table.

use serde_json::json;

pub mod engine;

use engine::{run, UdpFloodParams};

use crate::experiment::{Context, Experiment};
use crate::report::ExperimentReport;
use crate::{figures, BenchError};

/// The experiment (in [`crate::registry`] as [`NAME`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct UdpfloodExperiment;

/// The experiment's name on the command line (`fibre bench udpflood`).
pub const NAME: &str = "udpflood";
/// One line on what it measures (`fibre bench --list`).
pub const ABOUT: &str =
    "UDP frames with a cached output route: global cache, shared, per-core, borrowed (percpu nh_rth_output, 2012)";

impl Experiment for UdpfloodExperiment {
    fn run(&self, ctx: &Context) -> Result<ExperimentReport, BenchError> {
        let defaults = UdpFloodParams::default();
        let params = UdpFloodParams {
            threads: ctx.threads,
            // Quick: ~0.2 s a case here; full: the crate's default, ~1 s.
            frames: if ctx.quick {
                defaults.frames / 5
            } else {
                defaults.frames
            },
            ..defaults
        };
        let result = run(&params).map_err(|e| BenchError::Failed {
            experiment: NAME,
            message: e.to_string(),
        })?;
        Ok(figures::report(
            "udpflood",
            result.render(),
            json!({
                "threads": params.threads,
                "frames": params.frames,
                "payload": params.payload,
            }),
            result.summary(),
        ))
    }
}
