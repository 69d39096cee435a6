//! `fibre follow` exits with a clear error when the namespace it follows
//! is deleted (`ip netns del`) under it, rather than following, silently
//! and forever, a namespace nothing else can reach; and likewise when the
//! name is deleted and added again, so that it names another namespace.
//!
//! Needs root and `ip`; without them it says why and passes, and
//! `FIBRE_REQUIRE_TOOLS=1` (CI) makes that a failure. The follower is our
//! own child, killed by its pid if it does not exit in time.

#[path = "support/netns.rs"]
mod netns;
#[path = "kernel_diff/process.rs"]
mod process;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use netns::Namespace;

/// The follower checks its namespace at least once a second; a few
/// seconds more cover a loaded machine.
const EXIT_LIMIT: Duration = Duration::from_secs(15);

fn unavailable_reason() -> Option<String> {
    match fibre_testkit::effective_uid() {
        Some(0) => {}
        Some(uid) => return Some(format!("not root (effective uid {uid})")),
        None => return Some("cannot read the effective uid".into()),
    }
    fibre_testkit::missing_tool(&["ip"])
}

/// `fibre follow --netns NAME --queries`, once it has answered a first
/// query (its start's dump is over); its stdin is kept open so that only
/// the namespace's end can end it.
fn start_follower(ns: &Namespace) -> (Child, std::process::ChildStdin) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fibre"))
        .args(["follow", "--netns", ns.name(), "--queries"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fibre follow starts");
    let mut stdin = child.stdin.take().expect("piped");
    writeln!(stdin, "link show").expect("a query is written");
    stdin.flush().expect("the query is sent");
    let stdout = child.stdout.take().expect("piped");
    let mut lines = BufReader::new(stdout).lines();
    loop {
        match lines.next() {
            Some(Ok(line)) if line == "." => break,
            Some(Ok(_)) => {}
            other => panic!("fibre follow ended before its first answer: {other:?}"),
        }
    }
    (child, stdin)
}

/// Waits for the follower to exit; its status and stderr. Kills it (our
/// child, by pid) if it does not exit within [`EXIT_LIMIT`].
fn wait_for_exit(mut child: Child, what: &str) -> (std::process::ExitStatus, String) {
    let deadline = Instant::now() + EXIT_LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: fibre follow still runs {EXIT_LIMIT:?} after its namespace went");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("piped")
        .read_to_string(&mut stderr)
        .expect("stderr is read");
    (status, stderr)
}

#[test]
fn follow_exits_when_its_namespace_is_deleted_or_replaced() {
    if let Some(reason) = unavailable_reason() {
        fibre_testkit::unavailable(
            "follow_exits_when_its_namespace_is_deleted_or_replaced",
            &reason,
        );
        return;
    }
    let ns = Namespace::create("ffgone", "b", &[]).expect("namespace");
    let name = ns.name().to_string();
    let (child, _stdin) = start_follower(&ns);
    // Dropping the namespace runs `ip netns del`.
    drop(ns);
    let (status, stderr) = wait_for_exit(child, "deleted");
    assert!(!status.success(), "deleted: exit {status}, stderr {stderr}");
    assert!(
        stderr.contains(&format!("--netns {name}: the namespace was deleted")),
        "deleted: stderr {stderr:?}"
    );

    // Deleted and added again: the name now names a new namespace.
    let ns = Namespace::create("ffgone", "b", &[]).expect("namespace");
    let (child, _stdin) = start_follower(&ns);
    netns::ip_ok(&["netns", "del", ns.name()], "").expect("ip netns del");
    netns::ip_ok(&["netns", "add", ns.name()], "").expect("ip netns add");
    let (status, stderr) = wait_for_exit(child, "replaced");
    assert!(
        !status.success(),
        "replaced: exit {status}, stderr {stderr}"
    );
    assert!(
        stderr.contains("now names another namespace"),
        "replaced: stderr {stderr:?}"
    );
    drop(ns);
}
