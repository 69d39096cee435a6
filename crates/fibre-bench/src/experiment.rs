//! The experiment registry, and one run of one or all experiments.

use std::path::PathBuf;
use std::time::SystemTime;

use serde_json::json;

use crate::alloc_count;
use crate::lookup::LookupExperiment;
use crate::progress::Progress;
use crate::report::{summary_table, ExperimentReport};
use crate::BenchError;

/// What the command line asks for.
#[derive(Debug, Clone)]
pub struct Options {
    /// Smaller query counts and shorter runs.
    pub quick: bool,
    /// Threads for the all-cores figures; all available cores when `None`.
    pub threads: Option<usize>,
    /// The directory of the RIS files; found automatically when `None`.
    pub data_dir: Option<PathBuf>,
    /// Draw progress bars (on stderr, only when it is a terminal).
    pub progress: bool,
    /// Next-hop ids to spread the prefixes over.
    pub gateways: u16,
    /// Seed of every random choice.
    pub seed: u64,
    /// Run the IPv4 cases.
    pub ipv4: bool,
    /// Run the IPv6 cases.
    pub ipv6: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            quick: false,
            threads: None,
            data_dir: None,
            progress: true,
            gateways: 16,
            seed: 0x5eed_f1b7e,
            ipv4: true,
            ipv6: true,
        }
    }
}

/// What every experiment runs with.
#[derive(Debug, Clone)]
pub struct Context {
    /// Quick mode.
    pub quick: bool,
    /// Threads for the all-cores figures (at least 1).
    pub threads: usize,
    /// `--data`, when given.
    pub data_dir: Option<PathBuf>,
    /// Progress bars.
    pub progress: Progress,
    /// Next-hop ids to spread prefixes over (at least 1).
    pub gateways: u16,
    /// Seed of every random choice.
    pub seed: u64,
    /// Run the IPv4 cases.
    pub ipv4: bool,
    /// Run the IPv6 cases.
    pub ipv6: bool,
}

impl Context {
    /// Checks `options` and fills in the defaults.
    ///
    /// ```
    /// use fibre_bench::{Context, Options};
    /// let ctx = Context::from_options(&Options { threads: Some(3), ..Options::default() }).unwrap();
    /// assert_eq!(ctx.threads, 3);
    /// assert!(Context::from_options(&Options { gateways: 0, ..Options::default() }).is_err());
    /// ```
    pub fn from_options(options: &Options) -> Result<Self, BenchError> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = options.threads.unwrap_or(cores);
        if threads == 0 || threads > 1024 {
            return Err(BenchError::InvalidOption(format!(
                "--threads {threads}: give 1 to 1024 (this machine has {cores} cores)"
            )));
        }
        if options.gateways == 0 {
            return Err(BenchError::InvalidOption(
                "--gateways 0: give at least 1 next hop".into(),
            ));
        }
        if !options.ipv4 && !options.ipv6 {
            return Err(BenchError::InvalidOption(
                "neither IPv4 nor IPv6 chosen: nothing to measure".into(),
            ));
        }
        Ok(Self {
            ipv4: options.ipv4,
            ipv6: options.ipv6,
            quick: options.quick,
            threads,
            data_dir: options.data_dir.clone(),
            progress: Progress::new(options.progress),
            gateways: options.gateways,
            seed: options.seed,
        })
    }
}

impl Context {
    /// `given` work, or the mode's: `quick()` with `--quick`, else `full()`.
    pub fn work<C: Clone>(&self, given: &Option<C>, quick: fn() -> C, full: fn() -> C) -> C {
        given
            .clone()
            .unwrap_or_else(|| if self.quick { quick() } else { full() })
    }

    /// `v4`'s result and `v6`'s, for the families asked for (`-4`, `-6`),
    /// IPv4 first.
    pub fn per_family<T>(
        &self,
        v4: impl FnOnce() -> Result<T, BenchError>,
        v6: impl FnOnce() -> Result<T, BenchError>,
    ) -> Result<Vec<T>, BenchError> {
        let mut families = Vec::new();
        if self.ipv4 {
            families.push(v4()?);
        }
        if self.ipv6 {
            families.push(v6()?);
        }
        Ok(families)
    }
}

/// An experiment of `fibre bench`.
///
/// A new experiment implements this, states its `NAME` and `ABOUT` in its
/// module and is added to [`registry`]; its
/// [`ExperimentReport::measurements`] then join the summary table.
pub trait Experiment {
    /// Runs it.
    fn run(&self, ctx: &Context) -> Result<ExperimentReport, BenchError>;
}

/// An experiment as `fibre bench` knows it.
pub struct Registered {
    /// The name given on the command line (`lookup`).
    pub name: &'static str,
    /// One line on what it measures.
    pub about: &'static str,
    /// The experiment.
    pub experiment: Box<dyn Experiment>,
    /// Runs only when named (`fibre bench converge`), never in a run of
    /// every experiment: it needs what a plain `fibre bench` must not
    /// assume (root, a routing daemon).
    pub only_when_named: bool,
}

impl Registered {
    /// `experiment`, known as `name`.
    pub fn new(
        name: &'static str,
        about: &'static str,
        experiment: impl Experiment + 'static,
    ) -> Self {
        Self {
            name,
            about,
            experiment: Box::new(experiment),
            only_when_named: false,
        }
    }

    /// `experiment`, known as `name`, run only when named.
    ///
    /// ```
    /// use fibre_bench::{Context, Experiment, ExperimentReport, Registered};
    /// struct Nothing;
    /// impl Experiment for Nothing {
    ///     fn run(&self, _: &Context) -> Result<ExperimentReport, fibre_bench::BenchError> {
    ///         unreachable!("not named")
    ///     }
    /// }
    /// let options = fibre_bench::Options { progress: false, ..Default::default() };
    /// let only = Registered::only_when_named("nothing", "runs only when named", Nothing);
    /// let outcome = fibre_bench::experiment::run_experiments(&options, None, vec![only]).unwrap();
    /// assert!(outcome.reports.is_empty());
    /// ```
    pub fn only_when_named(
        name: &'static str,
        about: &'static str,
        experiment: impl Experiment + 'static,
    ) -> Self {
        Self {
            only_when_named: true,
            ..Self::new(name, about, experiment)
        }
    }
}

/// Every experiment, in the order `fibre bench` runs them.
///
/// ```
/// let names: Vec<_> = fibre_bench::registry().iter().map(|e| e.name).collect();
/// assert!(names.contains(&"lookup"));
/// ```
pub fn registry() -> Vec<Registered> {
    use crate::{fib, forward, greflood, lookup, refcnt, synflood, udpflood};
    vec![
        Registered::new(lookup::NAME, lookup::ABOUT, LookupExperiment::default()),
        Registered::new(fib::NAME, fib::ABOUT, fib::FibExperiment::default()),
        Registered::new(
            forward::NAME,
            forward::ABOUT,
            forward::ForwardExperiment::default(),
        ),
        Registered::new(
            synflood::NAME,
            synflood::ABOUT,
            synflood::SynfloodExperiment,
        ),
        Registered::new(
            udpflood::NAME,
            udpflood::ABOUT,
            udpflood::UdpfloodExperiment,
        ),
        Registered::new(refcnt::NAME, refcnt::ABOUT, refcnt::RefcntExperiment),
        Registered::new(
            greflood::NAME,
            greflood::ABOUT,
            greflood::GrefloodExperiment,
        ),
    ]
}

/// The outcome of [`run`]: the reports, and how they were made.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// When the run started.
    pub started: SystemTime,
    /// Quick mode.
    pub quick: bool,
    /// Threads of the all-cores figures.
    pub threads: usize,
    /// Whether the counting allocator was installed (peers' memory figures).
    pub counting_allocator: bool,
    /// One per experiment run.
    pub reports: Vec<ExperimentReport>,
}

impl RunOutcome {
    /// Every report's text, then the summary table.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for report in &self.reports {
            out.push_str(&report.text);
            out.push('\n');
        }
        out.push_str(&format!(
            "Summary ({} mode, {} threads, {}):\n",
            if self.quick { "quick" } else { "full" },
            self.threads,
            humantime::format_rfc3339_seconds(self.started)
        ));
        out.push_str(&summary_table(&self.reports));
        out.push_str(
            "ratio: the figure over the other's; above 1 is better for rates, \
             worse for bytes and seconds.\n",
        );
        if let Some(load) = load_average() {
            out.push_str(&format!(
                "load average at the end: {load} on {} cores (other work disturbs the figures)\n",
                cores()
            ));
        }
        out
    }

    /// One JSON document: the machine, the mode, every report and the summary rows.
    pub fn to_json(&self) -> serde_json::Value {
        let summary: Vec<serde_json::Value> = self
            .reports
            .iter()
            .flat_map(|r| {
                r.measurements
                    .iter()
                    .map(move |m| json!({ "experiment": r.experiment, "measurement": m }))
            })
            .collect();
        json!({
            "fibre_bench": env!("CARGO_PKG_VERSION"),
            "started": humantime::format_rfc3339_seconds(self.started).to_string(),
            "mode": if self.quick { "quick" } else { "full" },
            "threads": self.threads,
            "machine": machine(),
            "counting_allocator": self.counting_allocator,
            "experiments": self.reports,
            "summary": summary,
        })
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The 1-minute load average (Linux), to judge how busy the machine was.
fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next().map(str::to_string)
}

/// The cores, CPU model and load of this machine, as far as it tells.
fn machine() -> serde_json::Value {
    let cores = cores();
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, model)| model.trim().to_string())
        });
    json!({
        "cores": cores,
        "cpu": cpu,
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
        "load_average_1min_at_end": load_average(),
    })
}

/// Runs the experiment named `which`, or all of them when `None`.
pub fn run(options: &Options, which: Option<&str>) -> Result<RunOutcome, BenchError> {
    run_experiments(options, which, registry())
}

/// [`run`] over a given list of experiments (tests use this with small inputs).
pub fn run_experiments(
    options: &Options,
    which: Option<&str>,
    experiments: Vec<Registered>,
) -> Result<RunOutcome, BenchError> {
    let ctx = Context::from_options(options)?;
    let chosen: Vec<&Registered> = match which {
        None => experiments.iter().filter(|e| !e.only_when_named).collect(),
        Some(name) => {
            let found = experiments.iter().find(|e| e.name == name);
            match found {
                Some(e) => vec![e],
                None => {
                    let known = experiments
                        .iter()
                        .map(|e| format!("{} ({})", e.name, e.about))
                        .collect::<Vec<_>>()
                        .join(", ");
                    return Err(BenchError::UnknownExperiment {
                        name: name.to_string(),
                        known,
                    });
                }
            }
        }
    };
    let started = SystemTime::now();
    let reports = chosen
        .into_iter()
        .map(|e| e.experiment.run(&ctx))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RunOutcome {
        started,
        quick: ctx.quick,
        threads: ctx.threads,
        counting_allocator: alloc_count::is_installed(),
        reports,
    })
}
