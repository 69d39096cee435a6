//! A `fibre follow --netns NAME --queries` process a test drives: each
//! query is a line on its stdin, each answer what it prints up to a line
//! ".". Its stderr is collected. Killed (by its pid) on drop. Needs
//! `netns.rs` as `netns`.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::Value;

use super::netns::Namespace;

/// How long one answer may take: the follower answers in milliseconds
/// once it has caught up, a resync of a few thousand routes in well under
/// a second; reaching it means it hangs.
const ANSWER_LIMIT: Duration = Duration::from_secs(30);

/// A running follower.
pub struct Follower {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
}

#[allow(dead_code)] // each test uses the parts it needs
impl Follower {
    /// Starts `fibre follow --netns NS --queries EXTRA...` and waits for its
    /// first answer (so the start's dump is over).
    pub fn start(ns: &Namespace, extra: &[&str]) -> Result<Follower, String> {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fibre"))
            .args(["follow", "--netns", ns.name(), "--queries"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start fibre follow: {e}"))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let mut err = child.stderr.take().expect("piped");
        let (send, lines) = channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let collected = Arc::clone(&stderr);
        thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                collected.lock().expect("not poisoned").push_str(&text);
            }
        });
        let mut follower = Follower {
            child,
            stdin,
            lines,
            stderr,
        };
        follower.query("link show")?;
        Ok(follower)
    }

    /// The answer to one fibre command (`-j route show table all`).
    pub fn query(&mut self, command: &str) -> Result<String, String> {
        writeln!(self.stdin, "{command}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("fibre follow's stdin: {e}; stderr: {}", self.stderr()))?;
        let mut answer = String::new();
        loop {
            match self.lines.recv_timeout(ANSWER_LIMIT) {
                Ok(line) if line == "." => return Ok(answer),
                Ok(line) => {
                    answer.push_str(&line);
                    answer.push('\n');
                }
                Err(e) => {
                    return Err(format!(
                        "no answer to {command:?} from fibre follow ({e}); stderr: {}",
                        self.stderr()
                    ))
                }
            }
        }
    }

    /// The answer to a command that either prints an answer or is
    /// refused (`route get`): `Ok(stdout)`, or `Err(message)` with the
    /// `RTNETLINK answers: ...` or `Error: ...` line it wrote on stderr.
    /// The follower writes that line before its `.`, but this side's
    /// stderr reader may not have collected it yet: waited for, up to 2 s.
    pub fn answer_or_refusal(&mut self, command: &str) -> Result<Result<String, String>, String> {
        let seen = self.stderr().len();
        let answer = self.query(command)?;
        if !answer.trim().is_empty() {
            return Ok(Ok(answer));
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        loop {
            let all = self.stderr();
            let refusal = all
                .get(seen..)
                .unwrap_or("")
                .lines()
                .find(|l| l.starts_with("RTNETLINK answers: ") || l.starts_with("Error: "));
            // A whole line: the reader may hold half of one.
            if let Some(line) = refusal.filter(|_| all.ends_with('\n')) {
                return Ok(Err(line.to_string()));
            }
            if std::time::Instant::now() > deadline {
                return Err(format!(
                    "fibre follow printed neither an answer nor a refusal for {command:?}; stderr since: {}",
                    all.get(seen..).unwrap_or("")
                ));
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Stops (SIGSTOP) or continues (SIGCONT) the follower, our own child,
    /// by its pid: stopped, it reads nothing while the kernel queues.
    pub fn signal(&self, signal: &str) -> Result<(), String> {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .map_err(|e| format!("kill {signal}: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("kill {signal} failed: {status}"))
        }
    }

    /// What it wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().expect("not poisoned").clone()
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        // Our own child, by its pid.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
