//! The packet-level kernel oracle for the forwarding plane.
//!
//! A Linux kernel router in a network namespace, joined by veth pairs to
//! a sender namespace and one receiver namespace per further link
//! (`forward_oracle/topology.rs`), is given a random configuration
//! written once as `ip -batch` lines (`forward_oracle/plan.rs`: links'
//! MTUs, addresses, static neighbours, unicast/unreachable/prohibit/
//! blackhole/throw routes, rules). Crafted frames (`forward_oracle/frames.rs`:
//! good UDP/TCP/ICMP to routed, local, unroutable and martian
//! destinations, TTL and hop limit 0/1/2, DF and too big, fragments,
//! bad checksums, versions, IHLs and lengths, truncations, IPv4 options,
//! IPv6 extension headers, ARP requests and neighbour solicitations)
//! are injected on the sender's veth with an AF_PACKET socket, and what
//! comes out of every router link is captured on its peer
//! (`forward_oracle/wire.rs`). Each output is matched to its input by
//! the id the input carries and compared field by field
//! (`forward_oracle/compare.rs`, `forward_oracle/dissect.rs`: the fields
//! the kernel randomises in packets it makes itself are named there and
//! masked, nothing else).
//!
//! Tests: the oracle against itself (two kernel runs of the same frames
//! give the same outputs, modulo the masked fields: what is masked is
//! all that varies, and the capture loses nothing); and the kernel
//! against fibre's forwarding worker (`forward_oracle/fibre_side.rs`)
//! over random seeds and the corpus of cases that once differed
//! (`tests/forward_corpus/*.case`).
//!
//! Needs root and `ip` (iproute2) with network namespaces and veth.
//! Without them it prints why and passes; `FIBRE_REQUIRE_TOOLS=1`
//! (CI) turns that into a failure.
//!
//! Settings (environment):
//! - `FIBRE_FWD_ORACLE_SEED`: the seed (default: from the clock; printed);
//! - `FIBRE_FWD_ORACLE_FRAMES` (10000): frames per family;
//! - `FIBRE_FWD_ORACLE_TIME_LIMIT` (100): seconds after which no new run
//!   starts;
//! - `FIBRE_FWD_ORACLE_SHOW` (8): differences shown in detail.

#[path = "forward_oracle/compare.rs"]
mod compare;
#[path = "forward_oracle/dissect.rs"]
mod dissect;
#[path = "forward_oracle/frames.rs"]
mod frames;
#[path = "support/netns.rs"]
mod netns;
#[path = "forward_oracle/plan.rs"]
mod plan;
#[path = "kernel_diff/process.rs"]
mod process;
#[path = "kernel_diff/rng.rs"]
mod rng;
#[path = "forward_oracle/topology.rs"]
mod topology;
#[path = "forward_oracle/wire.rs"]
mod wire;

use std::time::{Duration, Instant};

use compare::{Attributor, Outputs};
use frames::Frame;
use plan::Plan;
use topology::Topology;

/// The first id of IPv6 frames (IPv4's start at 1).
const FIRST_V6_ID: u32 = 1 << 24;

/// How long the capture waits after the last frame for nothing more to
/// come, and at most.
const QUIET: Duration = Duration::from_millis(300);
const CAPTURE_LIMIT: Duration = Duration::from_secs(10);

/// The test's knobs, from the environment.
#[derive(Debug, Clone)]
struct Settings {
    seed: u64,
    frames: usize,
    show: usize,
}

fn settings() -> Settings {
    let clock = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_secs());
    Settings {
        seed: fibre_testkit::env_number("FIBRE_FWD_ORACLE_SEED", clock),
        frames: fibre_testkit::env_number("FIBRE_FWD_ORACLE_FRAMES", 10_000) as usize,
        show: fibre_testkit::env_number("FIBRE_FWD_ORACLE_SHOW", 8) as usize,
    }
}

/// True when namespaces and veths can be made here; otherwise says why
/// `test` cannot run (and fails under `FIBRE_REQUIRE_TOOLS=1`).
fn available(test: &str) -> bool {
    if fibre_testkit::effective_uid() != Some(0) {
        fibre_testkit::unavailable(test, "needs root (network namespaces, AF_PACKET)");
        return false;
    }
    if let Some(missing) = fibre_testkit::missing_tool(&["ip"]) {
        fibre_testkit::unavailable(test, &missing);
        return false;
    }
    let probe = netns::Namespace::create("fibre-fwd", "probe", &[]).and_then(|ns| {
        ns.ip(&["link", "add", "pa", "type", "veth", "peer", "name", "pb"])
            .map(drop)
    });
    if let Err(why) = probe {
        fibre_testkit::unavailable(test, &format!("cannot make a namespace with veths: {why}"));
        return false;
    }
    true
}

/// Both families' frames for a plan, interleaved (IPv4 ids from 1, IPv6
/// from [`FIRST_V6_ID`]).
fn all_frames(plan: &Plan, count: usize, seed: u64) -> Vec<Frame> {
    let v4 = frames::frames(plan, false, count, seed, 1);
    let v6 = frames::frames(plan, true, count, seed, FIRST_V6_ID);
    let mut all = Vec::with_capacity(v4.len() + v6.len());
    let mut v6 = v6.into_iter();
    for f in v4 {
        all.push(f);
        all.extend(v6.next());
    }
    all.extend(v6);
    all
}

/// Runs `frames` through a fresh kernel router built from `plan`.
fn kernel_outputs(plan: &Plan, frames: &[Frame]) -> Result<Outputs, String> {
    let topology = Topology::build(plan)?;
    let sender = topology.sender.path();
    let inject = wire::open(&sender, &plan.links[0].peer)?;
    let mut captures = vec![wire::open(&sender, &plan.links[0].peer)?];
    for k in 1..plan.links.len() {
        captures.push(wire::open(
            &topology.peer_namespace(k).path(),
            &plan.links[k].peer,
        )?);
    }
    let wire = wire::Wire::new(inject, captures);
    let bytes: Vec<Vec<u8>> = frames.iter().map(|f| f.bytes.clone()).collect();
    let captured = wire.run(&bytes, QUIET, CAPTURE_LIMIT)?;
    Ok(compare::attribute(
        &Attributor::new(frames),
        captured.into_iter().map(|(_, c)| (c.port, c.bytes)),
    ))
}

/// How many inputs got outputs, and how many outputs, for the report.
fn summary(outputs: &Outputs) -> String {
    let frames: usize = outputs.by_id.values().map(Vec::len).sum();
    format!(
        "{} inputs answered or forwarded, {frames} output frames, {} unattributed, {} MLD/RS chatter dropped",
        outputs.by_id.len(),
        outputs.unattributed.len(),
        outputs.chatter
    )
}

/// The oracle against itself: two kernel routers built from the same
/// plan, given the same frames, send the same frames out, but for the
/// masked fields. This is what makes a kernel-vs-fibre difference mean
/// something: the capture is complete and deterministic.
#[test]
fn two_kernel_runs_agree() {
    if !available("forward_oracle") {
        return;
    }
    let settings = settings();
    let seed = settings.seed;
    let count = settings.frames.min(2000);
    eprintln!(
        "forward_oracle: seed {seed} (FIBRE_FWD_ORACLE_SEED={seed}), {count} frames per family"
    );
    let plan = plan::plan(seed);
    let frames = all_frames(&plan, count, seed);
    let started = Instant::now();
    let first = kernel_outputs(&plan, &frames).unwrap_or_else(|e| panic!("{e}"));
    let elapsed = started.elapsed();
    let second = kernel_outputs(&plan, &frames).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "forward_oracle: kernel run 1 {:?}: {}; run 2: {}",
        elapsed,
        summary(&first),
        summary(&second)
    );
    let differences = compare::compare(&frames, &first, &second);
    let report = compare::report(
        &differences,
        &frames,
        ("run1", &first),
        ("run2", &second),
        settings.show,
    );
    eprintln!("{report}");
    assert!(
        differences.is_empty(),
        "seed {} ({} lines, after fibre's link model {:?}): two kernel runs differ on {} frames:\n{report}",
        plan.seed,
        plan.lines.len(),
        plan.model_lines,
        differences.len()
    );
    assert!(
        first.by_id.len() > frames.len() / 10,
        "seed {seed}: only {} of {} frames got any output: the capture is broken",
        first.by_id.len(),
        frames.len()
    );
    assert!(
        first.unattributed.is_empty(),
        "seed {seed}: outputs without an input id:\n{report}"
    );
}
