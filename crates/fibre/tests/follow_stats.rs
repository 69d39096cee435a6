//! `fibre follow --stats` counts what it applied: after a known number of
//! route notifications (an `ip -batch` of /24s over a veth), the
//! line it prints on exit names at least that many notifications, at
//! least one batch, and lag quantiles in order (p50 <= p99 <= max).
//!
//! Needs root and `ip`; without them it says why and passes, and
//! `FIBRE_REQUIRE_TOOLS=1` (CI) makes that a failure.

#[path = "support/netns.rs"]
mod netns;
#[path = "kernel_diff/process.rs"]
mod process;

use std::io::{BufRead, BufReader, Lines, Read, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use netns::Namespace;

const ROUTES: usize = 300;

fn unavailable_reason() -> Option<String> {
    match fibre_testkit::effective_uid() {
        Some(0) => {}
        Some(uid) => return Some(format!("not root (effective uid {uid})")),
        None => return Some("cannot read the effective uid".into()),
    }
    fibre_testkit::missing_tool(&["ip"])
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

/// Sends `query` and reads its answer, up to the line ".".
fn ask(stdin: &mut ChildStdin, lines: &mut Lines<BufReader<ChildStdout>>, query: &str) -> String {
    writeln!(stdin, "{query}").expect("a query is written");
    stdin.flush().expect("the query is sent");
    let mut answer = String::new();
    loop {
        match lines.next() {
            Some(Ok(line)) if line == "." => return answer,
            Some(Ok(line)) => {
                answer.push_str(&line);
                answer.push('\n');
            }
            other => panic!("fibre follow ended before answering {query:?}: {other:?}"),
        }
    }
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
    let mut child = Command::new(env!("CARGO_BIN_EXE_fibre"))
        .args(["follow", "--netns", ns.name(), "--queries", "--stats"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fibre follow starts");
    let mut stdin = child.stdin.take().expect("piped");
    let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
    // Answered once the start's dump is over.
    ask(&mut stdin, &mut lines, "link show");
    let routes: Vec<String> = (0..ROUTES)
        .map(|i| {
            format!(
                "route add 10.{}.{}.0/24 via 10.0.0.2",
                100 + i / 256,
                i % 256
            )
        })
        .collect();
    ns.batch(&routes).expect("routes");
    // Answered after every notification queued before it was read.
    let shown = ask(&mut stdin, &mut lines, "route show");
    assert!(shown.lines().count() > ROUTES, "{shown}");
    // Closing stdin ends it; killed (our own child, by pid) if it hangs.
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("fibre follow still runs 30 s after its stdin closed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("piped")
        .read_to_string(&mut stderr)
        .expect("stderr is read");
    assert!(status.success(), "exit {status}: {stderr}");
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
}
