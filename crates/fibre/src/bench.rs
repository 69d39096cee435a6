//! `fibre bench`: the experiments. SKELETON: being written.

/// Arguments of `fibre bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Which experiment (`lookup`, ...); all of them, quick, when absent.
    pub experiment: Option<String>,
}

/// Runs `fibre bench`.
pub fn run(args: BenchArgs) -> anyhow::Result<()> {
    let _ = args;
    anyhow::bail!("fibre bench: not built yet")
}
