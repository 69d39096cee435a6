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
//! The registry holds [`lookup::LookupExperiment`] (fibre's LPM engine
//! against the crates `prefix-trie`, `poptrie` and
//! `ip_network_table-deps-treebitmap` on the RIPE NCC RIS tables) and the
//! [`fib::FibExperiment`] (the FIB's data path per key against bursts,
//! the raw LPM beside them), and the experiments of the route cache, the devices and RCU: [`udpflood`],
//! [`refcnt`], [`greflood`] and [`synflood`]. Each keeps its engine here
//! (`udpflood::engine`, ...) and measures an optimisation of the libraries
//! against its "before": written here over the libraries' public API where
//! it can be (the global route cache of linux-3.5, the refcount layouts,
//! the lock-based [`protect`] strategies), or, where the before has to live
//! inside a library struct (the route cache's shared output slot, the locked
//! GRE transmit), built into the library by its `baselines` cargo feature,
//! which only this crate enables, so that a router built from the libraries
//! never carries them.
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
pub mod fib;
pub mod figures;
pub mod forward;
pub mod greflood;
pub mod lookup;
pub mod nexthop;
pub mod progress;
pub mod protect;
pub mod queries;
pub mod refcnt;
pub mod report;
pub mod router;
pub mod synflood;
pub mod table;
pub mod timing;
pub mod udpflood;

pub use error::BenchError;
pub use experiment::{registry, run, Context, Experiment, Options, Registered, RunOutcome};
pub use report::{ExperimentReport, Measurement, Ratio};
