//! `fibre bench`: the experiments of the `fibre-bench` crate.
//!
//! `fibre bench` runs every experiment in quick mode and ends with one
//! summary table; `fibre bench lookup` runs one, in full unless `--quick`.
//! `fibre bench converge` (root and BIRD 2) runs only when named; it is
//! registered here rather than in `fibre-bench` because it runs this
//! executable as `fibre follow` (see `converge`), and only with the
//! `bench-converge` feature (on by default), which links fibre-testkit.
//! `fibre bench forward` (root, trafgen, nft) likewise: it runs this
//! executable as `fibre serve` against the kernel (see `forward`).
//! Figures go to stdout (text, or one JSON document with the global
//! `--json`); progress bars go to stderr when it is a terminal.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context as _;
use fibre_bench::alloc_count::CountingAllocator;
use fibre_bench::{Options, Registered};

#[cfg(feature = "bench-converge")]
mod converge;
#[cfg(feature = "bench-converge")]
mod forward;

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
    /// converge: announce only the first N prefixes of the IPv4 table
    /// [default: 50,000 with --quick, else all]; forward: load the first N
    /// into both routers for a second pass [default: none with --quick,
    /// else all].
    #[arg(long, value_name = "N")]
    pub prefixes: Option<usize>,
    /// converge: replay only the first N updates of the day
    /// [default: 20,000 with --quick, else all].
    #[arg(long, value_name = "N")]
    pub updates: Option<usize>,
    /// forward: frames offered to each router
    /// [default: 300,000 with --quick, else 3,000,000].
    #[arg(long, value_name = "N")]
    pub packets: Option<u64>,
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
        for experiment in registry(&args)? {
            let when = if experiment.only_when_named {
                " (only when named)"
            } else {
                ""
            };
            writeln!(stdout, "{:<10} {}{when}", experiment.name, experiment.about)?;
        }
        return Ok(());
    }
    let options = options_of(&args);
    let outcome = fibre_bench::experiment::run_experiments(
        &options,
        args.experiment.as_deref(),
        registry(&args)?,
    )
    .context("fibre bench")?;
    if args.json {
        // Through `Display` (`{:#}` is serde_json's pretty form), so that a
        // closed pipe reaches `main` as the `io::Error` it is.
        writeln!(stdout, "{:#}", outcome.to_json())?;
    } else {
        write!(stdout, "{}", outcome.to_text())?;
    }
    Ok(())
}

/// The library's experiments, then those of this binary.
fn registry(args: &BenchArgs) -> anyhow::Result<Vec<Registered>> {
    #[allow(unused_mut)] // without the bench-converge feature, nothing is added
    let mut experiments = fibre_bench::registry();
    #[cfg(not(feature = "bench-converge"))]
    let _ = args;
    #[cfg(feature = "bench-converge")]
    experiments.push(Registered::only_when_named(
        converge::NAME,
        converge::ABOUT,
        converge::ConvergeExperiment {
            fibre: std::env::current_exe().context("cannot find the fibre executable")?,
            prefixes: args.prefixes,
            updates: args.updates,
        },
    ));
    #[cfg(feature = "bench-converge")]
    experiments.push(Registered::only_when_named(
        forward::NAME,
        forward::ABOUT,
        forward::ForwardExperiment {
            fibre: std::env::current_exe().context("cannot find the fibre executable")?,
            packets: args.packets,
            prefixes: args.prefixes,
        },
    ));
    Ok(experiments)
}

/// The run's options: quick when no experiment is named; both families
/// unless `-4` or `-6` picks one.
fn options_of(args: &BenchArgs) -> Options {
    let both = !args.ipv4 && !args.ipv6;
    Options {
        quick: args.quick || args.experiment.is_none(),
        threads: args.threads,
        data_dir: args.data.clone(),
        progress: true,
        gateways: args.gateways,
        seed: args.seed,
        ipv4: args.ipv4 || both,
        ipv6: args.ipv6 || both,
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    /// The globals `fibre` defines that `bench` reads, around `BenchArgs`.
    #[derive(Debug, Parser)]
    struct Cli {
        #[arg(short = 'j', long = "json", global = true)]
        json: bool,
        #[arg(short = '4', global = true)]
        ipv4: bool,
        #[arg(short = '6', global = true)]
        ipv6: bool,
        #[command(subcommand)]
        command: Command,
    }

    #[derive(Debug, clap::Subcommand)]
    enum Command {
        Bench(BenchArgs),
    }

    fn parse(line: &[&str]) -> BenchArgs {
        let cli = Cli::try_parse_from(std::iter::once("fibre").chain(line.iter().copied()))
            .unwrap_or_else(|e| panic!("{line:?}: {e}"));
        let Command::Bench(args) = cli.command;
        args
    }

    #[test]
    fn no_experiment_means_everything_quick_on_both_families() {
        let options = options_of(&parse(&["bench"]));
        assert!(options.quick && options.ipv4 && options.ipv6);
        assert_eq!(options.gateways, Options::default().gateways);
    }

    #[test]
    fn a_named_experiment_runs_in_full_unless_quick() {
        assert!(!options_of(&parse(&["bench", "lookup"])).quick);
        assert!(options_of(&parse(&["bench", "lookup", "--quick"])).quick);
    }

    #[test]
    fn globals_before_or_after_bench_reach_it() {
        let args = parse(&["-j", "bench", "lookup", "-4"]);
        assert!(args.json);
        let options = options_of(&args);
        assert!(options.ipv4 && !options.ipv6);
        let args = parse(&[
            "bench",
            "-6",
            "--threads",
            "3",
            "--data",
            "/d",
            "--gateways",
            "64",
        ]);
        let options = options_of(&args);
        assert!(!options.ipv4 && options.ipv6);
        assert_eq!(options.threads, Some(3));
        assert_eq!(
            options.data_dir.as_deref(),
            Some(std::path::Path::new("/d"))
        );
        assert_eq!(options.gateways, 64);
    }
}
