//! A `fibre follow --netns NAME --queries` process that a test or `fibre
//! bench converge` drives: each query is a line on its stdin, each answer
//! what it prints up to a line ".". Its stderr is collected. Killed (by
//! its pid, our own child) on drop; [`Follower::finish`] instead closes
//! its stdin and waits for it to exit, for `--stats`' last line.
//!
//! The executable is the caller's to name: a test of the `fibre` crate
//! passes `env!("CARGO_BIN_EXE_fibre")`, the bench its own executable.
//!
//! ```no_run
//! use std::path::Path;
//! use fibre_testkit::follower::Follower;
//! let mut f = Follower::start(Path::new("target/release/fibre"), "B", &["--stats"]).unwrap();
//! let routes = f.query("-4 route show").unwrap();
//! let stderr = f.finish().unwrap(); // ends with the stats line
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How long one answer may take: the follower answers in milliseconds
/// once it has caught up, a dump of a full table in about a second;
/// reaching it means it hangs.
pub const ANSWER_LIMIT: Duration = Duration::from_secs(60);

/// A running follower.
pub struct Follower {
    child: Child,
    /// `None` once [`Follower::finish`] closed it.
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
}

impl Follower {
    /// Starts `FIBRE follow --netns NETNS --queries EXTRA...` and waits for
    /// its first answer (so the start's dump is over).
    pub fn start(fibre: &Path, netns: &str, extra: &[&str]) -> Result<Follower, String> {
        let mut child = Command::new(fibre)
            .args(["follow", "--netns", netns, "--queries"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {} follow: {e}", fibre.display()))?;
        let stdin = child.stdin.take();
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
                collected
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push_str(&text);
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

    /// The follower's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The answer to one fibre command (`-j route show table all`).
    pub fn query(&mut self, command: &str) -> Result<String, String> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(format!("{command:?}: fibre follow's stdin is closed"));
        };
        if let Err(e) = writeln!(stdin, "{command}").and_then(|()| stdin.flush()) {
            return Err(format!(
                "fibre follow's stdin: {e}; stderr: {}",
                self.stderr()
            ));
        }
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
        let deadline = Instant::now() + Duration::from_secs(2);
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
            if Instant::now() > deadline {
                return Err(format!(
                    "fibre follow printed neither an answer nor a refusal for {command:?}; stderr since: {}",
                    all.get(seen..).unwrap_or("")
                ));
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Stops (`-STOP`) or continues (`-CONT`) the follower, our own child,
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
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Closes its stdin, which ends it, waits (up to [`ANSWER_LIMIT`]) for
    /// its exit and returns its whole stderr (with `--stats`, the stats
    /// line is the last); an error if it does not exit or exits failing.
    pub fn finish(mut self) -> Result<String, String> {
        drop(self.stdin.take());
        let deadline = Instant::now() + ANSWER_LIMIT;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(5)),
                Ok(None) => return Err("fibre follow did not exit when its stdin closed".into()),
                Err(e) => return Err(format!("waiting for fibre follow: {e}")),
            }
        };
        // The reader sees the pipe close once the process is gone; what
        // it has not appended yet comes within moments.
        let deadline = Instant::now() + Duration::from_secs(2);
        while Arc::strong_count(&self.stderr) > 1 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        let stderr = self.stderr();
        if !status.success() {
            return Err(format!("fibre follow exited with {status}: {stderr}"));
        }
        Ok(stderr)
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        // Our own child, by its pid (a no-op once it has exited and been
        // waited for).
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
