//! The experiments behind `fibre bench`.
//!
//! Each experiment implements [`Experiment`]: it runs against a [`Context`]
//! (quick or full mode, thread count, where the data lives, whether to draw
//! progress bars) and returns an [`ExperimentReport`]: a human-readable text
//! section, a machine-readable JSON detail, and a list of headline
//! [`Measurement`] rows. [`run`] runs one experiment or all of them and
//! collects their rows into one summary table, so an experiment added to
//! [`registry`] joins that table without further wiring.
//!
//! Today the registry holds [`lookup::LookupExperiment`]: fibre's LPM engine
//! against the crates `prefix-trie`, `poptrie` and
//! `ip_network_table-deps-treebitmap` on the RIPE NCC RIS tables.
//!
//! ```no_run
//! use fibre_bench::{Options, run};
//! let options = Options { quick: true, ..Options::default() };
//! let outcome = run(&options, Some("lookup")).unwrap();
//! println!("{}", outcome.to_text());
//! ```
//!
//! Peers' memory is measured with [`alloc_count::CountingAllocator`], which
//! only counts once a binary installs it as its `#[global_allocator]`
//! (the `fibre` binary does); without it those figures read "n/a".

#![warn(missing_docs)]

pub mod alloc_count;
pub mod data;
pub mod engines;
pub mod error;
pub mod experiment;
pub mod family;
pub mod figures;
pub mod greflood;
pub mod lookup;
pub mod nexthop;
pub mod progress;
pub mod queries;
pub mod refcnt;
pub mod report;
pub mod synflood;
pub mod table;
pub mod timing;
pub mod udpflood;

pub use error::BenchError;
pub use experiment::{registry, run, Context, Experiment, Options, RunOutcome};
pub use report::{ExperimentReport, Measurement, Ratio};
