//! A `fibre follow --netns NAME --queries` process a test drives
//! (`fibre_testkit::follower::Follower`, shared with `fibre bench
//! converge`, started on this crate's `fibre`), and the comparison of what
//! it answers with what the kernel shows. Needs `netns.rs` as `netns`.

#![allow(dead_code)] // each test uses the parts it needs

use std::path::Path;
use std::thread;
use std::time::Duration;

pub use fibre_testkit::follower::Follower;
use serde_json::Value;

use super::netns::Namespace;

/// Starts this crate's `fibre follow --netns NS --queries EXTRA...` and
/// waits for its first answer (so the start's dump is over).
pub fn start(ns: &Namespace, extra: &[&str]) -> Result<Follower, String> {
    Follower::start(Path::new(env!("CARGO_BIN_EXE_fibre")), ns.name(), extra)
}

/// Waits (up to 5 s) until the kernel has acted on every link change:
/// linkwatch reports carrier up to a second after a link comes up, and
/// only then does the kernel configure IPv6 and revive routes on it. A
/// link is settled when it is down, without carrier, or operationally up.
pub fn settle(ns: &Namespace) -> Result<(), String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let links = json(&ns.ip(&["-j", "link", "show"])?, "ip link show")?;
        let pending = links.as_array().into_iter().flatten().any(|link| {
            let flags = link["flags"].as_array().cloned().unwrap_or_default();
            let has = |f: &str| flags.iter().any(|v| v == f);
            let operstate = link["operstate"].as_str().unwrap_or("");
            has("UP") && !has("NO-CARRIER") && !matches!(operstate, "UP" | "UNKNOWN")
        });
        if !pending {
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            return Err(format!("links still settling after 5 s: {links}"));
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// The JSON an `ip -j`-style command printed.
fn json(text: &str, what: &str) -> Result<Value, String> {
    serde_json::from_str(text.trim()).map_err(|e| format!("{what} is not JSON ({e}): {text}"))
}

/// Panics, naming `what`, unless the follower shows what the kernel shows
/// for each of `commands` (see [`differences`]); the report is cut to its
/// first 40 lines, and the follower's stderr added.
pub fn assert_same(
    ns: &Namespace,
    follower: &mut Follower,
    commands: &[&str],
    strip: &[&str],
    what: &str,
) {
    match differences(ns, follower, commands, strip) {
        Ok(None) => {}
        Ok(Some(report)) => {
            let shown: Vec<&str> = report.lines().take(40).collect();
            panic!(
                "{what}: fibre differs from the kernel\n{}\nfibre's stderr: {}",
                shown.join("\n"),
                follower.stderr()
            )
        }
        Err(e) => panic!("{what}: {e}"),
    }
}

/// What the kernel and the follower show for each of `commands`
/// (`route show table all`, `rule show`, ...), as JSON, with `strip`'s
/// keys removed from the kernel's objects; the differences, if any, as
/// a report naming the objects each side has that the other lacks.
///
/// The kernel finishes some changes after `ip` returns (linkwatch's
/// carrier events, and the IPv6 configuration they start, come a moment
/// later), so a difference is looked at again, up to 2 s, before it is
/// reported: the follower must converge to the kernel's state, and must
/// stay there.
pub fn differences(
    ns: &Namespace,
    follower: &mut Follower,
    commands: &[&str],
    strip: &[&str],
) -> Result<Option<String>, String> {
    let mut report = None;
    for _ in 0..8 {
        settle(ns)?;
        report = differences_now(ns, follower, commands, strip)?;
        if report.is_none() {
            return Ok(None);
        }
        thread::sleep(Duration::from_millis(250));
    }
    Ok(report)
}

fn differences_now(
    ns: &Namespace,
    follower: &mut Follower,
    commands: &[&str],
    strip: &[&str],
) -> Result<Option<String>, String> {
    let mut report = String::new();
    for command in commands {
        let words: Vec<&str> = command.split(' ').collect();
        let mut kernel_args = vec!["-j"];
        kernel_args.extend(&words);
        let mut kernel = json(&ns.ip(&kernel_args)?, "ip's answer")?;
        if let Value::Array(items) = &mut kernel {
            for item in items.iter_mut() {
                if let Value::Object(map) = item {
                    for key in strip {
                        map.remove(*key);
                    }
                }
            }
        }
        let fibre = json(&follower.query(&format!("-j {command}"))?, "fibre's answer")?;
        if kernel != fibre {
            let (Value::Array(k), Value::Array(f)) = (&kernel, &fibre) else {
                report.push_str(&format!("{command}: kernel {kernel}\nfibre {fibre}\n"));
                continue;
            };
            report.push_str(&format!(
                "{command}: {} in the kernel, {} in fibre\n",
                k.len(),
                f.len()
            ));
            for item in k.iter().filter(|i| !f.contains(i)) {
                report.push_str(&format!("  kernel only: {item}\n"));
            }
            for item in f.iter().filter(|i| !k.contains(i)) {
                report.push_str(&format!("  fibre only:  {item}\n"));
            }
            if k.iter().all(|i| f.contains(i)) && f.iter().all(|i| k.contains(i)) {
                report.push_str("  (the same objects in another order)\n");
            }
        }
    }
    Ok((!report.is_empty()).then_some(report))
}
