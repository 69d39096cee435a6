//! `fibre bench greflood`: the experiment of "ip_gre: lockless xmit" (Eric
//! Dumazet, 2010), run by [`engine`]: threads send 200-byte UDP frames through one
//! GRE tunnel to a dummy underlay, with the tunnel's transmit `locked` (a
//! per-device lock: the before) or lockless (`lltx`: the after), each with
//! and without output sequence numbers (`oseq`). The tunnel resolves its
//! underlay through the route cache over a FIB, as a router's tunnel does
//! ([`underlay`]). Otherwise this module only maps the result onto the
//! summary table.

use std::sync::Arc;

use serde_json::json;

pub mod engine;

use engine::{run_over, GreFloodParams, Underlay};
use fibre_fib::{config, Fib};
use fibre_route::RouteCache;

use crate::experiment::{Context, Experiment};
use crate::report::ExperimentReport;
use crate::{figures, BenchError};

/// The experiment (in [`crate::registry`] as [`NAME`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct GrefloodExperiment;

/// The experiment's name on the command line (`fibre bench greflood`).
pub const NAME: &str = "greflood";
/// One line on what it measures (`fibre bench --list`).
pub const ABOUT: &str =
    "UDP frames through one GRE tunnel: locked vs lockless transmit, with and without oseq (ip_gre lockless xmit, 2010)";

impl Experiment for GrefloodExperiment {
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
        let failed = |message: String| BenchError::Failed {
            experiment: NAME,
            message,
        };
        let underlay = underlay(params.threads).map_err(failed)?;
        let result = run_over(&params, &underlay).map_err(|e| failed(e.to_string()))?;
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

/// The FIB of the experiment: the dummy underlay `dummy0` with
/// 192.0.2.1/24, whose one connected route leads to the tunnel's remote
/// 192.0.2.2, and the tunnel `gf0` itself (a dummy here, as the FIB only
/// needs its ifindex). The tunnel resolves through a route cache with one
/// per-core slot per thread.
///
/// ```
/// use std::net::IpAddr;
/// use fibre_bench::greflood::engine::REMOTE;
/// use fibre_dev::WorkerId;
/// let underlay = fibre_bench::greflood::underlay(2).unwrap();
/// let route = underlay.routes.resolve(WorkerId::new(1), IpAddr::V4(REMOTE), None).unwrap();
/// assert_eq!((route.oif, route.mtu), (underlay.oif, 1500));
/// assert_eq!(route.src, Some("192.0.2.1".parse().unwrap()));
/// ```
pub fn underlay(threads: usize) -> Result<Underlay, String> {
    let text = "\
link add dummy0 type dummy
link set dummy0 up
link add gf0 type dummy
addr add 192.0.2.1/24 dev dummy0
";
    let (fib, _) = config::apply_str(&Fib::new(), "greflood", text, false)
        .map_err(|e| format!("greflood's FIB: {e}"))?;
    let index = |name: &str| fib.link_by_name(name).map(|l| l.index);
    let (Some(oif), Some(tunnel)) = (index("dummy0"), index("gf0")) else {
        return Err("greflood's FIB lacks dummy0 or gf0".into());
    };
    let domain = fibre_rcu::Domain::new();
    let cache = RouteCache::new(&domain, fib, threads);
    Ok(Underlay {
        routes: Arc::new(cache),
        oif,
        tunnel,
    })
}
