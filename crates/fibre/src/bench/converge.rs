//! `fibre bench converge`: fibre following a kernel that a routing daemon
//! fills, against that kernel.
//!
//! BIRD A (namespace A) announces the RIS IPv4 table as static routes over
//! BGP to BIRD B (namespace B, over a veth pair), which installs them in
//! B's kernel; `fibre follow --netns B --queries` follows B. From BIRD A's
//! start, one thread polls B's kernel (`ip -4 route show proto bird`) and
//! another polls fibre (`-4 route show` on its stdin, the lines of proto bird) until each
//! holds every prefix: t_kernel, t_fibre, and their ratio (fibre's target:
//! no later than the kernel). Then BIRD A replays the day of updates, in
//! steps of reconfigured statics, and a fresh follower reports the rate of
//! route changes it followed and, from `--stats`, the lag from each
//! notification's receipt to its publication (target: p99 under 10 ms).
//!
//! The experiment lives in the `fibre` binary, not in `fibre-bench`: it
//! runs `fibre follow` itself (this executable), which the library cannot
//! name. It needs root, `ip` and BIRD 2 (`bird`, `birdc`) and so runs only
//! when named.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fibre_bench::data::{self, Prefix, Update};
use fibre_bench::{BenchError, Context, Experiment, ExperimentReport, Measurement};
use fibre_testkit::bgp::{self, static_config, BgpPair};
use serde_json::json;

/// The name on the command line.
pub const NAME: &str = "converge";
/// One line on what it measures.
pub const ABOUT: &str = "full-table convergence behind BIRD against the kernel, then the update replay's rate and follow lag (root, bird2)";

/// Prefixes announced in quick mode.
const QUICK_PREFIXES: usize = 50_000;
/// Updates replayed in quick mode.
const QUICK_UPDATES: usize = 20_000;
/// Steps the replay is cut into: each is one `birdc configure`.
const REPLAY_STEPS: usize = 20;
/// How long the table may take to reach B's kernel and fibre.
const CONVERGE_LIMIT: Duration = Duration::from_secs(300);
/// Pause between two polls of the same side.
const POLL_PAUSE: Duration = Duration::from_millis(10);

/// The experiment; `fibre` is the executable that follows.
pub struct ConvergeExperiment {
    /// The `fibre` executable run as `fibre follow`.
    pub fibre: PathBuf,
    /// Prefixes announced (the first of the table); quick or full when `None`.
    pub prefixes: Option<usize>,
    /// Updates replayed; quick or the whole day when `None`.
    pub updates: Option<usize>,
}

fn failed(message: impl Into<String>) -> BenchError {
    BenchError::Failed {
        experiment: NAME,
        message: message.into(),
    }
}

impl Experiment for ConvergeExperiment {
    fn run(&self, ctx: &Context) -> Result<ExperimentReport, BenchError> {
        if let Some(why) = bgp::unavailable_reason() {
            return Err(failed(format!(
                "needs root, ip and BIRD 2 (bird, birdc; Debian's bird2): {why}"
            )));
        }
        let dir = data::resolve_data_dir(ctx.data_dir.as_deref())?;
        let table: Vec<Prefix<u32>> =
            data::load_table(&data::table_path::<u32>(&dir), &ctx.progress)?;
        let wanted = self.prefixes.unwrap_or(if ctx.quick {
            QUICK_PREFIXES
        } else {
            usize::MAX
        });
        let announced: BTreeSet<String> = table.iter().take(wanted).map(ip_text).collect();
        let update_limit = self.updates.or(ctx.quick.then_some(QUICK_UPDATES));
        let updates: Vec<Update<u32>> = data::load_updates(
            &data::updates_path::<u32>(&dir),
            update_limit,
            &ctx.progress,
        )?;
        let pair = BgpPair::create("fbconv").map_err(failed)?;
        let _bird_b = pair.start_b().map_err(failed)?;

        // The full table.
        let mut follower = Follower::start(&self.fibre, pair.b.name())?;
        let started = Instant::now();
        let bird_a = pair
            .start_a(&static_config(
                &announced.iter().cloned().collect::<Vec<_>>(),
                &[],
            ))
            .map_err(failed)?;
        let bar = ctx
            .progress
            .bar(announced.len() as u64, "converge: B's kernel");
        let (kernel, fibre) = std::thread::scope(|scope| {
            let kernel = scope.spawn(|| {
                poll_until(started, || {
                    let have = pair.kernel_bird_routes("-4").map_err(failed)?;
                    bar.set_position(have as u64);
                    Ok(have == announced.len())
                })
            });
            let fibre = poll_until(started, || {
                Ok(follower.bird_routes()?.len() == announced.len())
            });
            (
                kernel
                    .join()
                    .unwrap_or_else(|_| Err(failed("the kernel poll panicked"))),
                fibre,
            )
        });
        bar.finish_and_clear();
        let (t_kernel, t_fibre) = (kernel?, fibre?);
        let announce_stats = follower.finish()?;

        // The day of updates, through BIRD A.
        let mut follower = Follower::start(&self.fibre, pair.b.name())?;
        let mut current = announced.clone();
        let step = updates.len().div_ceil(REPLAY_STEPS).max(1);
        let bar = ctx
            .progress
            .bar(updates.len() as u64, "converge: update replay");
        let mut changes = 0usize;
        let replay_started = Instant::now();
        for chunk in updates.chunks(step) {
            let before = current.clone();
            for update in chunk {
                match update {
                    Update::Announce(p) => current.insert(ip_text(p)),
                    Update::Withdraw(p) => current.remove(&ip_text(p)),
                };
            }
            changes += before.symmetric_difference(&current).count();
            bird_a
                .reconfigure(&static_config(
                    &current.iter().cloned().collect::<Vec<_>>(),
                    &[],
                ))
                .map_err(failed)?;
            bar.inc(chunk.len() as u64);
        }
        let replay = poll_until(replay_started, || Ok(follower.bird_routes()? == current))?;
        bar.finish_and_clear();
        let replay_stats = follower.finish()?;

        let ratio = t_fibre.as_secs_f64() / t_kernel.as_secs_f64();
        let rate = changes as f64 / replay.as_secs_f64();
        let text = format!(
            "converge: {n} IPv4 prefixes from BIRD A's start, over BGP to BIRD B\n  \
             B's kernel holds all:  {k:.3} s\n  \
             fibre answers all:     {f:.3} s ({ratio:.3}x the kernel's; fibre {d:+.1} ms)\n  \
             follow (announcement): {announce_stats}\n\
             update replay: {u} updates in {steps} reconfigurations, {changes} route changes\n  \
             fibre matched BIRD A's final table after {r:.3} s: {rate:.0} changes/s followed\n  \
             follow (replay):       {replay_stats}\n\
             (each side polled every {poll} ms with a whole dump; target: fibre no later than \
             the kernel, lag p99 under 10 ms)\n",
            n = announced.len(),
            k = t_kernel.as_secs_f64(),
            f = t_fibre.as_secs_f64(),
            d = (t_fibre.as_secs_f64() - t_kernel.as_secs_f64()) * 1e3,
            u = updates.len(),
            steps = updates.len().div_ceil(step),
            r = replay.as_secs_f64(),
            poll = POLL_PAUSE.as_millis(),
        );
        let measurements = vec![
            Measurement::new("IPv4 table in B's kernel", t_kernel.as_secs_f64(), "s"),
            Measurement::new("IPv4 table in fibre", t_fibre.as_secs_f64(), "s")
                .with_ratio(ratio, "the kernel's"),
            Measurement::new("update replay followed", rate, "changes/s"),
            Measurement::new("follow lag p50 (replay)", replay_stats.p50_us, "us"),
            Measurement::new("follow lag p99 (replay)", replay_stats.p99_us, "us")
                .with_ratio(replay_stats.p99_us / 10_000.0, "the 10 ms target"),
        ];
        let detail = json!({
            "prefixes": announced.len(),
            "t_kernel_s": t_kernel.as_secs_f64(),
            "t_fibre_s": t_fibre.as_secs_f64(),
            "fibre_over_kernel": ratio,
            "announce_follow": announce_stats.json(),
            "updates": updates.len(),
            "replay_steps": updates.len().div_ceil(step),
            "route_changes": changes,
            "replay_s": replay.as_secs_f64(),
            "changes_per_s": rate,
            "replay_follow": replay_stats.json(),
            "poll_pause_ms": POLL_PAUSE.as_millis() as u64,
        });
        Ok(ExperimentReport {
            experiment: NAME.into(),
            text,
            detail,
            measurements,
        })
    }
}

/// A prefix as `ip` prints it: a /32 without its length.
fn ip_text(prefix: &Prefix<u32>) -> String {
    let text = prefix.to_string();
    match text.strip_suffix("/32") {
        Some(host) => host.to_string(),
        None => text,
    }
}

/// Calls `done` until it says true; the time since `started` then.
fn poll_until(
    started: Instant,
    mut done: impl FnMut() -> Result<bool, BenchError>,
) -> Result<Duration, BenchError> {
    loop {
        if done()? {
            return Ok(started.elapsed());
        }
        if started.elapsed() > CONVERGE_LIMIT {
            return Err(failed(format!(
                "not converged after {} s",
                CONVERGE_LIMIT.as_secs()
            )));
        }
        std::thread::sleep(POLL_PAUSE);
    }
}

/// `fibre follow --netns B --queries --stats`, our child, killed by pid on drop.
struct Follower {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
}

/// How long one answer may take before the follower counts as hung.
const ANSWER_LIMIT: Duration = Duration::from_secs(60);

impl Follower {
    fn start(fibre: &PathBuf, netns: &str) -> Result<Follower, BenchError> {
        let mut child = Command::new(fibre)
            .args(["follow", "--netns", netns, "--queries", "--stats"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| failed(format!("cannot start {} follow: {e}", fibre.display())))?;
        let stdout = child.stdout.take().expect("piped");
        let stderr_pipe = child.stderr.take().expect("piped");
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let collected = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines() {
                let Ok(line) = line else { break };
                let mut all = collected.lock().unwrap_or_else(|e| e.into_inner());
                all.push_str(&line);
                all.push('\n');
            }
        });
        let mut follower = Follower {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
        };
        // The first answer comes after the start's dump.
        follower.query("link show")?;
        Ok(follower)
    }

    fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn query(&mut self, command: &str) -> Result<String, BenchError> {
        let stdin = self.stdin.as_mut().expect("open until finish");
        writeln!(stdin, "{command}")
            .and_then(|()| stdin.flush())
            .map_err(|e| failed(format!("fibre follow's stdin: {e}; {}", self.stderr())))?;
        let mut answer = String::new();
        loop {
            match self.lines.recv_timeout(ANSWER_LIMIT) {
                Ok(line) if line == "." => return Ok(answer),
                Ok(line) => {
                    answer.push_str(&line);
                    answer.push('\n');
                }
                Err(e) => {
                    return Err(failed(format!(
                        "no answer to {command:?} from fibre follow ({e}); stderr: {}",
                        self.stderr()
                    )))
                }
            }
        }
    }

    /// The IPv4 prefixes of protocol bird that fibre answers.
    fn bird_routes(&mut self) -> Result<BTreeSet<String>, BenchError> {
        Ok(self
            .query("-4 route show")?
            .lines()
            .filter(|l| l.contains(" proto bird "))
            .filter_map(|l| l.split_whitespace().next())
            .map(str::to_string)
            .collect())
    }

    /// Closes stdin, waits for the exit and reads `--stats`' line.
    fn finish(mut self) -> Result<FollowStats, BenchError> {
        drop(self.stdin.take());
        let deadline = Instant::now() + ANSWER_LIMIT;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL_PAUSE),
                _ => return Err(failed("fibre follow did not exit when its stdin closed")),
            }
        }
        // The stderr reader may still be on the last line.
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let text = self.stderr();
            if let Some(stats) = text.lines().find_map(FollowStats::parse) {
                return Ok(stats);
            }
            if Instant::now() > deadline {
                return Err(failed(format!("no stats line from fibre follow: {text}")));
            }
            std::thread::sleep(POLL_PAUSE);
        }
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `fibre follow --stats`' line, read back.
#[derive(Debug, Clone, PartialEq)]
struct FollowStats {
    line: String,
    notifications: u64,
    batches: u64,
    p50_us: f64,
    p99_us: f64,
    max_us: f64,
}

impl FollowStats {
    /// `fibre follow: stats: N notifications in B batches; receipt to
    /// publication p50 X us, p99 Y us, max Z us; R resyncs`.
    fn parse(line: &str) -> Option<FollowStats> {
        let rest = line.strip_prefix("fibre follow: stats: ")?;
        let words: Vec<&str> = rest
            .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
            .filter(|w| !w.is_empty())
            .collect();
        let after = |key: &str| -> Option<f64> {
            let at = words.iter().position(|w| *w == key)?;
            words.get(at + 1)?.parse().ok()
        };
        Some(FollowStats {
            line: rest.to_string(),
            notifications: words.first()?.parse().ok()?,
            batches: after("in")? as u64,
            p50_us: after("p50")?,
            p99_us: after("p99")?,
            max_us: after("max")?,
        })
    }

    fn json(&self) -> serde_json::Value {
        json!({
            "notifications": self.notifications,
            "batches": self.batches,
            "p50_us": self.p50_us,
            "p99_us": self.p99_us,
            "max_us": self.max_us,
        })
    }
}

impl std::fmt::Display for FollowStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stats_line_reads_back() {
        let line = "fibre follow: stats: 1200 notifications in 7 batches; receipt to publication p50 31.5 us, p99 880.0 us, max 1024.2 us; 0 resyncs";
        let stats = FollowStats::parse(line).expect("parses");
        assert_eq!((stats.notifications, stats.batches), (1200, 7));
        assert_eq!(
            (stats.p50_us, stats.p99_us, stats.max_us),
            (31.5, 880.0, 1024.2)
        );
        assert_eq!(FollowStats::parse("fibre follow: something else"), None);
    }

    #[test]
    fn a_host_route_is_written_as_ip_writes_it() {
        assert_eq!(
            ip_text(&Prefix {
                addr: 0x0a00_0001,
                len: 32
            }),
            "10.0.0.1"
        );
        assert_eq!(
            ip_text(&Prefix {
                addr: 0x0a00_0000,
                len: 8
            }),
            "10.0.0.0/8"
        );
    }
}
