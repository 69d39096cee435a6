//! `fibre follow` behind a real routing daemon: namespaces A and B joined
//! by a veth pair, a BIRD in each, BGP sessions between them over IPv4 and
//! IPv6; BIRD A announces static routes (2,000 IPv4 /24s and 500 IPv6 /48s
//! in a random order per seed), BIRD B installs them in B's kernel, and
//! fibre follows B. After each scenario (the full announcement, a part
//! withdrawn, a BGP session flap, the link down) fibre's `route show table
//! all -j` equals the kernel's in B, and so do the answers to `route get`
//! queries drawn from B's routes (see `support/route_get.rs`).
//!
//! Needs root, `ip` and BIRD 2 (`bird`, `birdc`; Debian's `bird2`); without
//! them it says why and passes, and `FIBRE_REQUIRE_TOOLS=1` (CI) makes that
//! a failure. The daemons are our own children, stopped by pid (and told
//! to go down first).

#[path = "kernel_diff/addr.rs"]
#[allow(dead_code)] // shared with kernel_diff.rs; this test uses a part
mod addr;
#[path = "kernel_diff/answer.rs"]
#[allow(dead_code)]
mod answer;
#[path = "kernel_diff/compare.rs"]
#[allow(dead_code)]
mod compare;
#[path = "support/follower.rs"]
mod follower;
#[path = "kernel_diff/kernel.rs"]
#[allow(dead_code)]
mod kernel;
#[path = "support/netns.rs"]
mod netns;
#[path = "kernel_diff/process.rs"]
mod process;
#[path = "support/route_get.rs"]
mod route_get;

use std::time::{Duration, Instant};

use fibre_testkit::bgp::{static_config, unavailable_reason, BgpPair};
use fibre_testkit::SplitMix64;
use follower::{assert_same, Follower};
use netns::Namespace;

/// What is compared after each scenario.
const SHOWN: &[&str] = &["route show table all"];

/// `route get` queries asked of both after each scenario.
const QUERIES: usize = 200;

/// The tables, then the `route get` answers, of the follower and B's kernel.
fn check(b: &Namespace, follower: &mut Follower, seed: u64, what: &str) {
    let what = format!("seed {seed}: {what}");
    assert_same(b, follower, SHOWN, &[], &what);
    route_get::assert_same_answers(b, follower, seed, QUERIES, &what);
}

const V4_ROUTES: usize = 2000;
const V6_ROUTES: usize = 500;

/// BIRD A's configuration: the statics `v4` and `v6` (indexes into the
/// prefix pools).
fn config_a(v4: &[usize], v6: &[usize]) -> String {
    let v4: Vec<String> = v4
        .iter()
        .map(|i| format!("10.{}.{}.0/24", 100 + i / 256, i % 256))
        .collect();
    let v6: Vec<String> = v6
        .iter()
        .map(|i| format!("2001:db8:{:x}::/48", 0x1000 + i))
        .collect();
    static_config(&v4, &v6)
}

/// Waits until B's kernel holds `v4` and `v6` routes of protocol bird.
fn wait_for_kernel(pair: &BgpPair, v4: usize, v6: usize, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let count = |flag: &str| pair.kernel_bird_routes(flag).unwrap_or(usize::MAX);
        let (have4, have6) = (count("-4"), count("-6"));
        if (have4, have6) == (v4, v6) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: B's kernel has {have4} IPv4 and {have6} IPv6 BIRD routes after 60 s, expected {v4} and {v6}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn shuffled(n: usize, rng: &mut SplitMix64) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        v.swap(i, rng.below(i + 1));
    }
    v
}

#[test]
fn follow_matches_the_kernel_behind_bird() {
    if let Some(reason) = unavailable_reason() {
        fibre_testkit::unavailable("follow_matches_the_kernel_behind_bird", &reason);
        return;
    }
    let seeds = fibre_testkit::env_number("FIBRE_FOLLOW_BIRD_SEEDS", 2);
    for seed in 1..=seeds {
        run_seed(seed);
    }
}

fn run_seed(seed: u64) {
    let pair = BgpPair::create(&format!("ffb{seed}")).expect("namespaces A and B");
    let b = &pair.b;

    let mut f = follower::start(b, &[]).expect("fibre follow starts");
    let mut rng = SplitMix64(seed);
    let v4 = shuffled(V4_ROUTES, &mut rng);
    let v6 = shuffled(V6_ROUTES, &mut rng);
    let bird_b = pair.start_b().expect("BIRD B starts");
    let bird_a = pair.start_a(&config_a(&v4, &v6)).expect("BIRD A starts");
    wait_for_kernel(&pair, V4_ROUTES, V6_ROUTES, "the full announcement");
    check(b, &mut f, seed, "the full announcement");

    // A part withdrawn: a random quarter of each family.
    let kept4 = &v4[V4_ROUTES / 4..];
    let kept6 = &v6[V6_ROUTES / 4..];
    bird_a
        .reconfigure(&config_a(kept4, kept6))
        .expect("BIRD A reconfigured");
    wait_for_kernel(&pair, kept4.len(), kept6.len(), "a part withdrawn");
    check(b, &mut f, seed, "a part withdrawn");

    // The IPv4 session flaps.
    bird_a.birdc(&["disable", "p4"]).expect("p4 disabled");
    wait_for_kernel(&pair, 0, kept6.len(), "the IPv4 session down");
    check(b, &mut f, seed, "the IPv4 session down");
    bird_a.birdc(&["enable", "p4"]).expect("p4 enabled");
    wait_for_kernel(&pair, kept4.len(), kept6.len(), "the IPv4 session back");
    check(b, &mut f, seed, "the IPv4 session back");

    // The link goes down under the daemons: the kernel drops the routes
    // over it without a notification.
    b.ip(&["link", "set", "b0", "down"]).expect("link down");
    check(b, &mut f, seed, "the link down");
    drop(bird_a);
    drop(bird_b);
}
