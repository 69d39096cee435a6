//! Running a child process with a time limit, feeding its stdin and
//! collecting stdout and stderr without the pipes filling up: how the
//! tests and `fibre bench converge` run `ip`, `birdc` and the tools they
//! compare with.
//!
//! ```
//! use std::process::Command;
//! use std::time::Duration;
//! let cat = Command::new("cat");
//! let done = fibre_testkit::process::run(cat, "hello\n", Duration::from_secs(10)).unwrap();
//! assert_eq!((done.code, done.stdout.as_str()), (Some(0), "hello\n"));
//! ```

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// What a finished process left.
#[derive(Debug, Clone)]
pub struct Finished {
    /// Exit code (`None` when killed by a signal or by the time limit).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs `command` with `input` on its stdin; kills it after `limit`.
pub fn run(mut command: Command, input: &str, limit: Duration) -> Result<Finished, String> {
    let describe = format!("{command:?}");
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {describe}: {e}"))?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = input.to_owned();
    let writer = thread::spawn(move || {
        // A child that exits early closes the pipe; that is its answer, not ours to report.
        let _ = stdin.write_all(input.as_bytes());
    });
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let out_reader = thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err_reader = thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("waiting for {describe}: {e}")),
        }
    };
    let _ = writer.join();
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    match status {
        Some(status) => Ok(Finished {
            code: status.code(),
            stdout,
            stderr,
        }),
        None => Err(format!("{describe} ran past {limit:?}; killed")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feeds_stdin_and_collects_both_streams() {
        let mut c = Command::new("sh");
        c.args(["-c", "cat; echo oops >&2; exit 3"]);
        let f = run(c, "hello\n", Duration::from_secs(10)).unwrap();
        assert_eq!(f.code, Some(3));
        assert_eq!(f.stdout, "hello\n");
        assert_eq!(f.stderr, "oops\n");
    }

    #[test]
    fn kills_a_process_past_its_limit() {
        let mut c = Command::new("sleep");
        c.arg("5");
        let started = Instant::now();
        let e = run(c, "", Duration::from_millis(100)).unwrap_err();
        assert!(e.contains("killed"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(4));
    }
}
