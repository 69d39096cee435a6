//! `fibre follow --stats` counts what it applied: after a known number of
//! route notifications (an `ip -batch` of /24s over a veth), the
//! line it prints on exit names at least that many notifications, at
//! least one batch, and lag quantiles in order (p50 <= p99 <= max). A
//! burst queued while the follower is stopped (SIGSTOP, our own child by
//! its pid) is applied in batches of at most 512 commands (however fast
//! the follower measures itself), and all of it before the next query's
//! answer.
//!
//! Needs root and `ip`; without them it says why and passes, and
//! `FIBRE_REQUIRE_TOOLS=1` (CI) makes that a failure.

#[path = "support/follower.rs"]
mod follower;
#[path = "support/netns.rs"]
mod netns;

use netns::Namespace;

const ROUTES: usize = 300;
/// The burst: more than four batches' worth.
const BURST: usize = 2100;
/// The follower's largest batch (`MAX_BATCH_COMMANDS` in
/// src/follow/handoff.rs; one command per route notification).
const MAX_BATCH: usize = 512;

fn unavailable_reason() -> Option<String> {
    match fibre_testkit::effective_uid() {
        Some(0) => {}
        Some(uid) => return Some(format!("not root (effective uid {uid})")),
        None => return Some("cannot read the effective uid".into()),
    }
    fibre_testkit::missing_tool(&["ip", "kill"])
}

fn routes(range: std::ops::Range<usize>) -> Vec<String> {
    range
        .map(|i| {
            format!(
                "route add 10.{}.{}.0/24 via 10.0.0.2",
                100 + i / 256,
                i % 256
            )
        })
        .collect()
}

/// The number after `word` in `line` ("p50 12.5 us" -> 12.5).
fn number_after(line: &str, word: &str) -> f64 {
    let rest = line
        .split_once(word)
        .unwrap_or_else(|| panic!("no {word:?} in {line:?}"))
        .1;
    rest.trim_start()
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number after {word:?} in {line:?}"))
}

#[test]
fn follow_stats_count_the_notifications_applied() {
    if let Some(reason) = unavailable_reason() {
        fibre_testkit::unavailable("follow_stats_count_the_notifications_applied", &reason);
        return;
    }
    let ns = Namespace::create("ffstats", "b", &[]).expect("namespace");
    ns.batch(&[
        "link add d0 type veth peer name d1",
        "link set d1 up",
        "link set d0 up",
        "addr add 10.0.0.1/24 dev d0",
    ])
    .expect("a veth pair");
    let mut f = follower::start(&ns, &["--stats"]).expect("fibre follow starts");
    ns.batch(&routes(0..ROUTES)).expect("routes");
    // Answered after every notification queued before it was read.
    let shown = f.query("route show").expect("route show");
    assert!(shown.lines().count() > ROUTES, "{shown}");

    let stderr = f.finish().expect("fibre follow ends when its stdin closes");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("fibre follow: stats: "))
        .unwrap_or_else(|| panic!("no stats line in {stderr:?}"));
    let notifications = number_after(line, "stats:");
    assert!(notifications >= ROUTES as f64, "{line}");
    assert!(number_after(line, "notifications in") >= 1.0, "{line}");
    let (p50, p99, max) = (
        number_after(line, "p50"),
        number_after(line, "p99"),
        number_after(line, "max"),
    );
    assert!(p50 <= p99 && p99 <= max && max > 0.0, "{line}");

    // The burst, queued whole while a fresh follower is stopped.
    let mut f = follower::start(&ns, &["--stats"]).expect("fibre follow starts");
    let before = f.query(".count").expect(".count");
    f.signal("-STOP").expect("SIGSTOP");
    let burst = ns.batch(&routes(ROUTES..ROUTES + BURST));
    f.signal("-CONT").expect("SIGCONT");
    burst.expect("the burst");
    let after = f.query(".count").expect(".count");
    let ipv4 = |answer: &str| -> usize {
        answer
            .split_whitespace()
            .nth(1)
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!(".count answered {answer:?}"))
    };
    assert_eq!(ipv4(&after), ipv4(&before) + BURST, "{before} then {after}");

    let stderr = f.finish().expect("fibre follow ends when its stdin closes");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("fibre follow: stats: "))
        .unwrap_or_else(|| panic!("no stats line in {stderr:?}"));
    assert!(number_after(line, "stats:") >= BURST as f64, "{line}");
    assert!(
        number_after(line, "notifications in") >= BURST.div_ceil(MAX_BATCH) as f64,
        "the burst in batches of at most {MAX_BATCH}: {line}"
    );
}
