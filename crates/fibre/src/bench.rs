//! `fibre bench`: the experiments of the `fibre-bench` crate.
//!
//! `fibre bench` runs every experiment in quick mode and ends with one
//! summary table; `fibre bench lookup` runs one, in full unless `--quick`.
//! Figures go to stdout (text, or one JSON document with the global
//! `--json`); progress bars go to stderr when it is a terminal.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context as _;
use fibre_bench::alloc_count::CountingAllocator;
use fibre_bench::Options;

/// Counts the heap bytes of the peers' tables in the lookup experiment. Outside
/// a measurement it costs each allocation one relaxed atomic load.
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Arguments of `fibre bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Which experiment (`lookup`); every one, in quick mode, when absent.
    pub experiment: Option<String>,
    /// Smaller query counts and shorter runs (about a minute for everything).
    #[arg(long)]
    pub quick: bool,
    /// Threads for the all-cores figures [default: every core].
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Directory of the RIS data files [default: the repository's data/].
    #[arg(long = "data", value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// Next-hop ids the prefixes are hashed onto.
    #[arg(long, value_name = "N", default_value_t = Options::default().gateways)]
    pub gateways: u16,
    /// Seed of the random query sets.
    #[arg(long, value_name = "N", default_value_t = Options::default().seed)]
    pub seed: u64,
    /// List the experiments and exit.
    #[arg(long)]
    pub list: bool,
    /// One JSON document instead of text (the global `-j/--json`).
    #[arg(from_global)]
    pub json: bool,
    /// Only the IPv4 cases (the global `-4`).
    #[arg(from_global)]
    pub ipv4: bool,
    /// Only the IPv6 cases (the global `-6`).
    #[arg(from_global)]
    pub ipv6: bool,
}

/// Runs `fibre bench`.
pub fn run(args: BenchArgs) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    if args.list {
        for experiment in fibre_bench::registry() {
            writeln!(stdout, "{:<10} {}", experiment.name(), experiment.about())?;
        }
        return Ok(());
    }
    let both = !args.ipv4 && !args.ipv6;
    let options = Options {
        quick: args.quick || args.experiment.is_none(),
        threads: args.threads,
        data_dir: args.data,
        progress: true,
        gateways: args.gateways,
        seed: args.seed,
        ipv4: args.ipv4 || both,
        ipv6: args.ipv6 || both,
    };
    let outcome = fibre_bench::run(&options, args.experiment.as_deref()).context("fibre bench")?;
    if args.json {
        serde_json::to_writer_pretty(&mut stdout, &outcome.to_json())?;
        writeln!(stdout)?;
    } else {
        write!(stdout, "{}", outcome.to_text())?;
    }
    Ok(())
}
