//! `fibre bench forward` end to end in its tiny form: 20,000 frames
//! offered to each router. Both the kernel and `fibre serve` must deliver
//! packets to hostB, the JSON report must hold each router's figures, and
//! the namespaces must be gone afterwards. Without root or its tools the
//! bench must say so and exit non-zero, which is checked everywhere (with
//! an empty PATH). No figure is compared with a speed: that is the bench's
//! output, not a test's.
//!
//! Needs root, `ip`, trafgen (netsniff-ng), nft, ethtool and taskset for
//! the run; without them it says why and passes, and
//! `FIBRE_REQUIRE_TOOLS=1` makes that a failure.

#![cfg(feature = "bench-converge")]

use std::process::Command;

use serde_json::Value;

const PACKETS: u64 = 20_000;

fn unavailable_reason() -> Option<String> {
    match fibre_testkit::effective_uid() {
        Some(0) => {}
        Some(uid) => return Some(format!("not root (effective uid {uid})")),
        None => return Some("cannot read the effective uid".into()),
    }
    fibre_testkit::missing_tool(&["ip", "trafgen", "nft", "ethtool", "taskset"])
}

#[test]
fn forward_runs_in_its_tiny_form_and_both_routers_deliver() {
    if let Some(reason) = unavailable_reason() {
        fibre_testkit::unavailable(
            "forward_runs_in_its_tiny_form_and_both_routers_deliver",
            &reason,
        );
        return;
    }
    let packets = PACKETS.to_string();
    let child = Command::new(env!("CARGO_BIN_EXE_fibre"))
        .args(["-j", "bench", "forward", "--quick", "--packets", &packets])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("fibre runs");
    let pid = child.id();
    let out = child.wait_with_output().expect("fibre ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "fibre bench forward: {stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(report["experiments"][0]["experiment"], "forward");
    let detail = &report["experiments"][0]["detail"];
    assert_eq!(detail["packets"], PACKETS, "{detail}");
    let routers = detail["routers"].as_array().expect("a row per router");
    assert!(routers.len() >= 2, "{detail}");
    assert!(
        routers[0]["router"].as_str().unwrap().starts_with("kernel"),
        "{detail}"
    );
    assert!(
        routers[1]["router"]
            .as_str()
            .unwrap()
            .starts_with("fibre serve"),
        "{detail}"
    );
    for row in routers {
        let offered = row["offered"].as_u64().unwrap();
        let delivered = row["delivered"].as_u64().unwrap();
        // hostA's TX counter: every frame trafgen was asked for left.
        assert!(offered >= PACKETS, "{row}");
        assert!(delivered > 0 && delivered <= offered, "{row}");
        assert!(row["delivered_pps"].as_f64().unwrap() > 0.0, "{row}");
        let loss = row["loss_percent"].as_f64().unwrap();
        assert!((0.0..100.0).contains(&loss), "{row}");
    }
    // fibre's own count agrees with what it says it forwarded, and its
    // CPU time was read.
    let fibre = &routers[1];
    let closing = fibre["closing"].as_str().expect("fibre's closing line");
    assert!(closing.contains("forwarded"), "{closing}");
    assert!(fibre["cpu_seconds"].as_f64().is_some(), "{fibre}");
    // A summary row (delivered and loss) per router.
    assert_eq!(
        report["summary"].as_array().map(Vec::len),
        Some(2 * routers.len())
    );
    let list = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(!list.contains(&format!("fbfwd-{pid}-")), "{list}");
}

#[test]
fn forward_without_its_tools_says_so_and_fails() {
    let empty = std::env::temp_dir().join(format!("fibre-empty-path-fwd-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_fibre"))
        .args(["bench", "forward", "--quick"])
        .env("PATH", &empty)
        .output()
        .expect("fibre runs");
    let _ = std::fs::remove_dir(&empty);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("needs root, ip, trafgen"),
        "the reason is given: {stderr}"
    );
}

#[test]
fn a_plain_bench_list_marks_forward_as_run_only_when_named() {
    let out = Command::new(env!("CARGO_BIN_EXE_fibre"))
        .args(["bench", "--list"])
        .output()
        .expect("fibre runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("forward "))
        .unwrap_or_else(|| panic!("forward listed: {text}"));
    assert!(line.ends_with("(only when named)"), "{line}");
}

/// Whether some process's command line contains `needle` (a trafgen
/// reading the run's scratch directory, a fibre serve of its namespace).
fn a_process_mentions(needle: &str) -> Option<String> {
    let entries = std::fs::read_dir("/proc").ok()?;
    entries.flatten().find_map(|entry| {
        let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        text.contains(needle).then_some(text)
    })
}

#[test]
fn forward_stopped_by_sigint_removes_what_it_made() {
    if let Some(reason) = unavailable_reason() {
        fibre_testkit::unavailable("forward_stopped_by_sigint_removes_what_it_made", &reason);
        return;
    }
    // Far more frames than it sends before the signal: trafgen is still
    // running when it comes.
    let child = Command::new(env!("CARGO_BIN_EXE_fibre"))
        .args(["bench", "forward", "--quick", "--packets", "100000000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("fibre runs");
    let pid = child.id();
    let scratch = format!("fibre-fbfwd-{pid}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while a_process_mentions(&format!("{scratch}/udp64.trafgen")).is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "trafgen never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
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
    assert!(!list.contains(&format!("fbfwd-{pid}-")), "{list}");
    assert_eq!(a_process_mentions(&scratch), None, "a process is left");
    assert!(
        !std::env::temp_dir().join(&scratch).exists(),
        "the scratch directory is left"
    );
}
