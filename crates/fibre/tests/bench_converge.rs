//! `fibre bench converge` end to end in quick mode on a tiny table: BIRD A
//! announces 300 RIS prefixes to BIRD B, fibre follows B's kernel, then
//! 500 updates are replayed; the JSON report must hold every figure, the
//! namespaces must be gone afterwards; a run stopped by SIGINT must fail
//! saying so and leave no namespace, BIRD or follower behind. Without root
//! or BIRD the bench must say so and exit non-zero, which is checked
//! everywhere (with an empty PATH).
//!
//! Needs root, `ip` and BIRD 2 for the run; without them it says why and
//! passes, and `FIBRE_REQUIRE_TOOLS=1` makes that a failure.

#![cfg(feature = "bench-converge")]

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

const PREFIXES: u64 = 300;

/// `fibre ARGS --updates 500`, our child, its outputs piped.
fn spawn_bench(args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_fibre"))
        .args(args)
        .args(["--updates", "500"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("fibre runs")
}

#[test]
fn converge_runs_in_quick_mode_on_a_tiny_table() {
    if let Some(reason) = fibre_testkit::bgp::unavailable_reason() {
        fibre_testkit::unavailable("converge_runs_in_quick_mode_on_a_tiny_table", &reason);
        return;
    }
    let prefixes = PREFIXES.to_string();
    let child = spawn_bench(&[
        "-j",
        "bench",
        "converge",
        "--quick",
        "--prefixes",
        &prefixes,
    ]);
    let pid = child.id();
    let out = child.wait_with_output().expect("fibre ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "fibre bench converge: {stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let detail = &report["experiments"][0]["detail"];
    assert_eq!(report["experiments"][0]["experiment"], "converge");
    assert_eq!(detail["prefixes"], PREFIXES, "{detail}");
    let positive = |key: &str| {
        let v = detail[key].as_f64().unwrap_or(0.0);
        assert!(v > 0.0, "{key} = {v} in {detail}");
    };
    positive("t_kernel_s");
    positive("t_fibre_s");
    positive("replay_s");
    positive("replay_kernel_s");
    positive("changes_per_s");
    // Every announced prefix reached fibre as a notification.
    let announced = detail["announce_follow"]["notifications"].as_u64().unwrap();
    assert!(announced >= PREFIXES, "{detail}");
    // The replay changed routes, and fibre followed at least as many.
    let changes = detail["route_changes"].as_u64().unwrap();
    let followed = detail["replay_follow"]["notifications"].as_u64().unwrap();
    assert!(changes > 0 && followed >= changes, "{detail}");
    assert_eq!(report["summary"].as_array().map(Vec::len), Some(5));
    // The namespaces the bench made are deleted.
    let list = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(!list.contains(&format!("fbconv-{pid}-")), "{list}");
}

#[test]
fn converge_without_its_tools_says_so_and_fails() {
    let empty = std::env::temp_dir().join(format!("fibre-empty-path-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_fibre"))
        .args(["bench", "converge", "--quick"])
        .env("PATH", &empty)
        .output()
        .expect("fibre runs");
    let _ = std::fs::remove_dir(&empty);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("needs root, ip and BIRD 2"),
        "the reason is given: {stderr}"
    );
}

#[test]
fn a_plain_bench_list_marks_converge_as_run_only_when_named() {
    let out = Command::new(env!("CARGO_BIN_EXE_fibre"))
        .args(["bench", "--list"])
        .output()
        .expect("fibre runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("converge "))
        .unwrap_or_else(|| panic!("converge listed: {text}"));
    assert!(line.ends_with("(only when named)"), "{line}");
}

/// Whether some process's command line contains `needle` (a BIRD whose
/// configuration is in the run's scratch directory, a follower of its
/// namespace).
fn a_process_mentions(needle: &str) -> Option<String> {
    let entries = std::fs::read_dir("/proc").ok()?;
    entries.flatten().find_map(|entry| {
        let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        text.contains(needle).then_some(text)
    })
}

#[test]
fn converge_stopped_by_sigint_removes_what_it_made() {
    if let Some(reason) = fibre_testkit::bgp::unavailable_reason() {
        fibre_testkit::unavailable("converge_stopped_by_sigint_removes_what_it_made", &reason);
        return;
    }
    // Large enough to be still running when the namespaces appear.
    let child = spawn_bench(&["bench", "converge", "--quick", "--prefixes", "20000"]);
    let pid = child.id();
    let made = format!("fbconv-{pid}-b");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let list = Command::new("ip").args(["netns", "list"]).output().unwrap();
        if String::from_utf8_lossy(&list.stdout).contains(&made) {
            break;
        }
        assert!(Instant::now() < deadline, "{made} never appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Our own child, by its pid.
    let status = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let out = child.wait_with_output().expect("fibre ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "an interrupted run fails: {stderr}");
    assert!(stderr.contains("interrupted by a signal"), "{stderr}");
    let list = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(!list.contains(&format!("fbconv-{pid}-")), "{list}");
    let scratch = format!("fibre-fbconv-{pid}");
    assert_eq!(a_process_mentions(&scratch), None, "a BIRD is left");
    assert_eq!(a_process_mentions(&made), None, "a follower is left");
}
