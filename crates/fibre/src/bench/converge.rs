//! `fibre bench converge`: fibre following a kernel that a routing daemon
//! fills, against that kernel.
//!
//! BIRD A (namespace A) announces the RIS IPv4 table as static routes over
//! BGP to BIRD B (namespace B, over a veth pair), which installs them in
//! B's kernel; `fibre follow --netns B --queries --stats` follows B. From
//! BIRD A's start, one thread probes B's kernel and another fibre, each
//! every [`POLL_PAUSE`], until each holds every prefix: t_kernel, t_fibre,
//! and their ratio (fibre's target: no later than the kernel). Then BIRD A
//! replays the day of updates, in steps of reconfigured statics, and both
//! sides are probed alike until each holds BIRD A's final table; a fresh
//! follower reports, from `--stats`, the lag from each notification's
//! receipt to its publication (target: p99 under 10 ms).
//!
//! The probes are cheap and alike, so that measuring does not slow what
//! is measured: each asks its side for the size of its IPv4 main table,
//! answered by a walk of the table and nothing printed. Fibre answers the
//! follower's own `.count` query (see `crate::follow`), on the thread that
//! applies the notifications; the kernel answers a read of
//! `/proc/PID/net/fib_triestat` (PID: the follower, which lives in B),
//! a walk of its trie under RCU, beside BIRD's inserts. A side is done
//! when its table has grown by exactly the announced prefixes (each side
//! against its own count before BIRD A started); then, outside the timed
//! part, both sides' full IPv4 tables are compared with what BIRD A
//! announced, so a count that matches by chance cannot pass.
//!
//! SIGINT or SIGTERM while it runs ends it cleanly: the signal sets a flag
//! that every wait checks, and the error it returns drops the namespaces,
//! BIRDs and followers on the way out (a signal's default action would end
//! the process with none of that).
//!
//! The experiment lives in the `fibre` binary, not in `fibre-bench`: it
//! runs `fibre follow` itself (this executable), which the library cannot
//! name. It needs root, `ip` and BIRD 2 (`bird`, `birdc`) and so runs only
//! when named.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fibre_bench::data::{self, Prefix, Update};
use fibre_bench::{BenchError, Context, Experiment, ExperimentReport, Measurement};
use fibre_testkit::bgp::{self, static_config, BgpPair};
use fibre_testkit::follower::Follower;
use serde_json::json;

use crate::follow::COUNT_QUERY;

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
/// Pause between two probes of the same side.
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
        let signals = Interruption::catch()?;
        let outcome = self.measure(ctx, &announced, &updates);
        // Everything the run made is gone by now (dropped on the way out).
        if signals.caught() {
            return Err(failed(
                "interrupted by a signal; its namespaces, BIRDs and followers are removed",
            ));
        }
        outcome
    }
}

impl ConvergeExperiment {
    fn measure(
        &self,
        ctx: &Context,
        announced: &BTreeSet<String>,
        updates: &[Update<u32>],
    ) -> Result<ExperimentReport, BenchError> {
        let pair = BgpPair::create("fbconv").map_err(failed)?;
        Interruption::check()?;
        let _bird_b = pair.start_b().map_err(failed)?;

        // The full table.
        let mut follower = start_follower(&self.fibre, &pair)?;
        let kernel = KernelTable::of(&follower);
        let (kernel_base, fibre_base) = (kernel.count()?, fibre_count(&mut follower)?);
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
        let (t_kernel, t_fibre) = probe_both(
            started,
            || {
                let have = kernel.count()?.saturating_sub(kernel_base);
                bar.set_position(have as u64);
                Ok(have == announced.len())
            },
            || Ok(fibre_count(&mut follower)?.saturating_sub(fibre_base) == announced.len()),
        )?;
        bar.finish_and_clear();
        if kernel_bird_routes(&pair)? != *announced
            || fibre_bird_routes(&mut follower)? != *announced
        {
            return Err(failed(
                "the table sizes matched but the prefixes do not: the probe is wrong",
            ));
        }
        // What one probe of each side costs on the full table, now idle.
        let probe_kernel = median_time(|| kernel.count().map(drop))?;
        let probe_fibre = median_time(|| fibre_count(&mut follower).map(drop))?;
        let announce_stats = finish(follower)?;

        // The day of updates, through BIRD A.
        let mut follower = start_follower(&self.fibre, &pair)?;
        let kernel = KernelTable::of(&follower);
        let mut current = announced.clone();
        let step = updates.len().div_ceil(REPLAY_STEPS).max(1);
        let bar = ctx
            .progress
            .bar(updates.len() as u64, "converge: update replay");
        let mut changes = 0usize;
        let replay_started = Instant::now();
        for chunk in updates.chunks(step) {
            Interruption::check()?;
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
        // A size can match on the way (as many withdrawn as announced):
        // only the prefixes themselves end a side's wait.
        let (replay_kernel, replay_fibre) = probe_both(
            replay_started,
            || {
                Ok(kernel.count()?.saturating_sub(kernel_base) == current.len()
                    && kernel_bird_routes(&pair)? == current)
            },
            || {
                Ok(
                    fibre_count(&mut follower)?.saturating_sub(fibre_base) == current.len()
                        && fibre_bird_routes(&mut follower)? == current,
                )
            },
        )?;
        bar.finish_and_clear();
        let replay_stats = finish(follower)?;

        let ratio = t_fibre.as_secs_f64() / t_kernel.as_secs_f64();
        let replay_ratio = replay_fibre.as_secs_f64() / replay_kernel.as_secs_f64();
        let rate = changes as f64 / replay_fibre.as_secs_f64();
        let text = format!(
            "converge: {n} IPv4 prefixes from BIRD A's start, over BGP to BIRD B\n  \
             B's kernel holds all:  {k:.3} s\n  \
             fibre holds all:       {f:.3} s ({ratio:.3}x the kernel's; fibre {d:+.1} ms)\n  \
             follow (announcement): {announce_stats}\n\
             update replay: {u} updates in {steps} reconfigurations, {changes} route changes\n  \
             B's kernel held BIRD A's final table after {rk:.3} s, fibre after {rf:.3} s \
             ({replay_ratio:.3}x): {rate:.0} changes/s followed\n  \
             follow (replay):       {replay_stats}\n\
             (each side probed every {poll} ms for the size of its IPv4 main table, one probe \
             {pk:.2} ms for the kernel, {pf:.2} ms for fibre on the full table; target: fibre no \
             later than the kernel, lag p99 under 10 ms)\n",
            pk = probe_kernel.as_secs_f64() * 1e3,
            pf = probe_fibre.as_secs_f64() * 1e3,
            n = announced.len(),
            k = t_kernel.as_secs_f64(),
            f = t_fibre.as_secs_f64(),
            d = (t_fibre.as_secs_f64() - t_kernel.as_secs_f64()) * 1e3,
            u = updates.len(),
            steps = updates.len().div_ceil(step),
            rk = replay_kernel.as_secs_f64(),
            rf = replay_fibre.as_secs_f64(),
            poll = POLL_PAUSE.as_millis(),
        );
        let measurements = vec![
            Measurement::new("IPv4 table in B's kernel", t_kernel.as_secs_f64(), "s"),
            Measurement::new("IPv4 table in fibre", t_fibre.as_secs_f64(), "s")
                .with_ratio(ratio, "the kernel's"),
            Measurement::new("update replay followed", rate, "changes/s")
                .with_ratio(replay_ratio, "the kernel's time"),
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
            "replay_kernel_s": replay_kernel.as_secs_f64(),
            "replay_s": replay_fibre.as_secs_f64(),
            "replay_fibre_over_kernel": replay_ratio,
            "changes_per_s": rate,
            "replay_follow": replay_stats.json(),
            "poll_pause_ms": POLL_PAUSE.as_millis() as u64,
            "probe_kernel_ms": probe_kernel.as_secs_f64() * 1e3,
            "probe_fibre_ms": probe_fibre.as_secs_f64() * 1e3,
            "probe": "IPv4 main table size: fibre's .count query, the kernel's fib_triestat",
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

/// Probes the kernel (on a thread of its own) and fibre (on this one)
/// until each says done; the time since `started` at which each did.
fn probe_both(
    started: Instant,
    kernel_done: impl FnMut() -> Result<bool, BenchError> + Send,
    fibre_done: impl FnMut() -> Result<bool, BenchError>,
) -> Result<(Duration, Duration), BenchError> {
    std::thread::scope(|scope| {
        let kernel = scope.spawn(|| poll_until(started, kernel_done));
        let fibre = poll_until(started, fibre_done);
        let kernel = kernel
            .join()
            .unwrap_or_else(|_| Err(failed("the kernel's probe panicked")));
        Ok((kernel?, fibre?))
    })
}

/// The median time of 9 calls of `probe`.
fn median_time(mut probe: impl FnMut() -> Result<(), BenchError>) -> Result<Duration, BenchError> {
    let mut times = Vec::with_capacity(9);
    for _ in 0..9 {
        let started = Instant::now();
        probe()?;
        times.push(started.elapsed());
    }
    times.sort();
    Ok(times[times.len() / 2])
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
        Interruption::check()?;
        if started.elapsed() > CONVERGE_LIMIT {
            return Err(failed(format!(
                "not converged after {} s",
                CONVERGE_LIMIT.as_secs()
            )));
        }
        std::thread::sleep(POLL_PAUSE);
    }
}

/// `fibre follow --netns B --queries --stats`, this executable.
fn start_follower(fibre: &std::path::Path, pair: &BgpPair) -> Result<Follower, BenchError> {
    Follower::start(fibre, pair.b.name(), &["--stats"]).map_err(failed)
}

/// Ends the follower and reads its `--stats` line.
fn finish(follower: Follower) -> Result<FollowStats, BenchError> {
    let stderr = follower.finish().map_err(failed)?;
    stderr
        .lines()
        .find_map(FollowStats::parse)
        .ok_or_else(|| failed(format!("no stats line from fibre follow: {stderr}")))
}

/// The routes of fibre's IPv4 main table: `.count`'s first number.
fn fibre_count(follower: &mut Follower) -> Result<usize, BenchError> {
    let answer = follower.query(COUNT_QUERY).map_err(failed)?;
    parse_count(&answer).ok_or_else(|| failed(format!("{COUNT_QUERY} answered {answer:?}")))
}

/// `ipv4 N ipv6 M` → N.
fn parse_count(answer: &str) -> Option<usize> {
    let mut words = answer.split_whitespace();
    (words.next()? == "ipv4").then_some(())?;
    words.next()?.parse().ok()
}

/// The IPv4 prefixes of protocol bird that fibre holds (a whole dump:
/// outside the timed part, or once the size already matches).
fn fibre_bird_routes(follower: &mut Follower) -> Result<BTreeSet<String>, BenchError> {
    let shown = follower.query("-4 route show").map_err(failed)?;
    Ok(first_words(
        shown.lines().filter(|line| line.contains(" proto bird ")),
    ))
}

/// The IPv4 prefixes of protocol bird in B's kernel (a whole dump, as
/// for fibre).
fn kernel_bird_routes(pair: &BgpPair) -> Result<BTreeSet<String>, BenchError> {
    let shown = pair
        .b
        .ip(&["-4", "route", "show", "proto", "bird"])
        .map_err(failed)?;
    Ok(first_words(shown.lines()))
}

/// The first word of each line: the prefix of each route `ip` lists.
fn first_words<'a>(lines: impl Iterator<Item = &'a str>) -> BTreeSet<String> {
    lines
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// B's kernel's IPv4 main table, sized through the follower's view of
/// `/proc/net` (the follower's only thread lives in B).
struct KernelTable {
    triestat: PathBuf,
}

impl KernelTable {
    fn of(follower: &Follower) -> KernelTable {
        KernelTable {
            triestat: PathBuf::from(format!("/proc/{}/net/fib_triestat", follower.pid())),
        }
    }

    /// The `Prefixes:` of fib_triestat's `Main:` table: the routes
    /// (fib aliases) of the trie that holds table main (merged with
    /// local while no rule was added, the same count for each probe).
    fn count(&self) -> Result<usize, BenchError> {
        let text = std::fs::read_to_string(&self.triestat)
            .map_err(|e| failed(format!("cannot read {}: {e}", self.triestat.display())))?;
        main_prefixes(&text).ok_or_else(|| {
            failed(format!(
                "no Main table's Prefixes in {}: {text}",
                self.triestat.display()
            ))
        })
    }
}

/// `Prefixes:` in the `Main:` section of `/proc/net/fib_triestat`.
fn main_prefixes(triestat: &str) -> Option<usize> {
    let mut in_main = false;
    for line in triestat.lines() {
        if !line.starts_with(char::is_whitespace) {
            in_main = line.trim_end() == "Main:";
            continue;
        }
        if let Some(n) = line.trim().strip_prefix("Prefixes:").filter(|_| in_main) {
            return n.trim().parse().ok();
        }
    }
    None
}

/// Set by SIGINT or SIGTERM while [`Interruption`] is caught.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    INTERRUPTED.store(true, Ordering::Relaxed);
}

/// SIGINT and SIGTERM turned into a flag for as long as this lives (the
/// previous actions are put back on drop), so that a run stopped by them
/// still removes what it made. `fibre bench forward` uses it too.
pub(super) struct Interruption {
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

impl Interruption {
    const SIGNALS: [libc::c_int; 2] = [libc::SIGINT, libc::SIGTERM];

    pub(super) fn catch() -> Result<Interruption, BenchError> {
        INTERRUPTED.store(false, Ordering::Relaxed);
        let mut guard = Interruption {
            previous: Vec::new(),
        };
        for signal in Self::SIGNALS {
            // SAFETY: sigaction is plain data; all zeroes is a valid
            // value (an empty mask, no flags) before the fields are set.
            let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            // SAFETY: as above; filled by sigaction(2).
            let mut previous: libc::sigaction = unsafe { std::mem::zeroed() };
            // SAFETY: both pointers are to valid sigaction values for the
            // call; the handler only stores to an atomic, which is
            // async-signal-safe.
            let rc = unsafe { libc::sigaction(signal, &action, &mut previous) };
            if rc != 0 {
                return Err(failed(format!(
                    "sigaction({signal}): {}",
                    std::io::Error::last_os_error()
                )));
            }
            guard.previous.push((signal, previous));
        }
        Ok(guard)
    }

    /// Whether a signal came since [`Interruption::catch`].
    pub(super) fn caught(&self) -> bool {
        INTERRUPTED.load(Ordering::Relaxed)
    }

    /// Whether a signal came while caught, for waits that return their
    /// own experiment's error.
    pub(super) fn signalled() -> bool {
        INTERRUPTED.load(Ordering::Relaxed)
    }

    /// An error once a signal came, for the waits to return.
    fn check() -> Result<(), BenchError> {
        if INTERRUPTED.load(Ordering::Relaxed) {
            Err(failed("interrupted by a signal"))
        } else {
            Ok(())
        }
    }
}

impl Drop for Interruption {
    fn drop(&mut self) {
        for (signal, previous) in &self.previous {
            // SAFETY: `previous` is what sigaction(2) returned for
            // `signal`; a null pointer asks for no old action.
            unsafe { libc::sigaction(*signal, previous, std::ptr::null_mut()) };
        }
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
    fn the_probes_answers_read_back() {
        assert_eq!(parse_count("ipv4 50003 ipv6 2\n"), Some(50003));
        assert_eq!(parse_count("ipv6 2 ipv4 50003\n"), None);
        assert_eq!(parse_count(""), None);
        let triestat = "Basic info: size of leaf: 48 bytes, size of tnode: 40 bytes.
Main:
\tAver depth:     2.42
\tLeaves:         7
\tPrefixes:       9
\tInternal nodes: 5
Null ptrs: 11
Local:
\tPrefixes:       7
";
        assert_eq!(main_prefixes(triestat), Some(9));
        assert_eq!(main_prefixes(&triestat.replace("Main:", "Id 100:")), None);
    }

    #[test]
    fn a_signal_while_caught_is_seen_and_the_old_action_is_restored() {
        let guard = Interruption::catch().expect("sigaction");
        assert!(!guard.caught());
        // SAFETY: raise(3) delivers SIGTERM to this thread, whose action
        // is now the flag's handler (it does not end the process).
        assert_eq!(unsafe { libc::raise(libc::SIGTERM) }, 0);
        assert!(guard.caught());
        assert!(Interruption::check().is_err());
        drop(guard);
        // SAFETY: sigaction is plain data; all zeroes is a valid value.
        let mut now: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: a null new action only reads the current one into `now`.
        let rc = unsafe { libc::sigaction(libc::SIGTERM, std::ptr::null(), &mut now) };
        assert_eq!(rc, 0);
        assert_ne!(
            now.sa_sigaction,
            on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t
        );
        INTERRUPTED.store(false, Ordering::Relaxed);
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
