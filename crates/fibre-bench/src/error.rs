//! Why a benchmark run stopped.

use std::path::PathBuf;

/// An error of `fibre bench`: every variant says what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A file could not be opened or read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A line of a data file does not parse.
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line number, from 1.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// The RIS data files are not where they were looked for.
    #[error(
        "routing data not found (tried {tried}); pass --data DIR, the directory that holds \
         the ris-2026-05-11-as3333-*.txt.gz files (data/ in the fibre repository)"
    )]
    DataNotFound {
        /// The paths tried, comma separated.
        tried: String,
    },
    /// An engine refused a prefix of the data.
    #[error("{engine} refused {prefix}: {message}")]
    Engine {
        /// The engine.
        engine: &'static str,
        /// The prefix, as text.
        prefix: String,
        /// What it said.
        message: String,
    },
    /// The engines gave different answers: the figures would compare unlike work.
    #[error(
        "{family}: the engines disagree on {count} of {total} queries {when}; first: {examples}"
    )]
    Disagreement {
        /// "IPv4" or "IPv6".
        family: &'static str,
        /// Queries on which not every engine gave the same answer.
        count: usize,
        /// Queries checked.
        total: usize,
        /// "on the full table" or "after the update replay".
        when: &'static str,
        /// A few of them, with each engine's answer.
        examples: String,
    },
    /// No experiment has that name.
    #[error("unknown experiment {name:?}; the experiments are: {known}")]
    UnknownExperiment {
        /// The name asked for.
        name: String,
        /// The names there are, comma separated.
        known: String,
    },
    /// An option is out of range.
    #[error("invalid option: {0}")]
    InvalidOption(String),
    /// An experiment from another crate could not run.
    #[error("{experiment}: {message}")]
    Failed {
        /// The experiment.
        experiment: &'static str,
        /// Its error, as text.
        message: String,
    },
}
