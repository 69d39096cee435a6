//! Throughput measurement: warm up, then time several runs of whole passes
//! over a batch of work with [`Instant`], and keep the median.
//!
//! A run repeats passes until it has lasted at least [`Plan::min_run`]
//! (always at least one pass), so short passes are timed over many
//! repetitions and clock overhead vanishes. The median of [`Plan::runs`]
//! runs resists a run disturbed by another process.

use std::sync::Barrier;
use std::time::{Duration, Instant};

/// How long and how often to measure.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Plan {
    /// Timed runs; the median is reported.
    pub runs: usize,
    /// Shortest duration of one run.
    #[serde(with = "seconds")]
    pub min_run: Duration,
    /// Untimed passes run first, for at least this long (at least one pass).
    #[serde(with = "seconds")]
    pub warm_up: Duration,
}

/// Durations in JSON as seconds (`serde(with = ...)`).
pub(crate) mod seconds {
    use std::time::Duration;
    pub fn serialize<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
}

impl Plan {
    /// `fibre bench --quick`: 3 runs of at least 60 ms.
    pub const QUICK: Plan = Plan {
        runs: 3,
        min_run: Duration::from_millis(60),
        warm_up: Duration::from_millis(20),
    };
    /// The full benchmark: 7 runs of at least 300 ms.
    pub const FULL: Plan = Plan {
        runs: 7,
        min_run: Duration::from_millis(300),
        warm_up: Duration::from_millis(100),
    };
    /// The plan for `quick` or full mode.
    ///
    /// ```
    /// use fibre_bench::timing::Plan;
    /// assert_eq!(Plan::for_mode(true), Plan::QUICK);
    /// assert!(Plan::FULL.runs > Plan::QUICK.runs);
    /// ```
    pub fn for_mode(quick: bool) -> Plan {
        if quick {
            Plan::QUICK
        } else {
            Plan::FULL
        }
    }
}

/// The median of `values` (the mean of the middle two for an even count); 0 when empty.
///
/// ```
/// assert_eq!(fibre_bench::timing::median(&[3.0, 1.0, 2.0]), 2.0);
/// assert_eq!(fibre_bench::timing::median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
/// ```
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// A rate measured over several runs: the median, the slowest and fastest
/// run (their distance shows how steady the machine was), and the median
/// rate per second the measuring threads spent on a CPU.
///
/// Wall-clock rates are what a user sees; on a machine shared with other
/// work they also count the time the threads waited for a core. The on-CPU
/// rate leaves that out: work over the thread's CPU time
/// (`CLOCK_THREAD_CPUTIME_ID`), summed over threads for a parallel run, so
/// it estimates the rate with a core per thread. It still pays for caches
/// other processes evict.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Rate {
    /// The median run's operations per second.
    pub median: f64,
    /// The slowest run's.
    pub low: f64,
    /// The fastest run's.
    pub high: f64,
    /// The median run's operations per on-CPU second.
    pub on_cpu: f64,
}

impl Rate {
    /// The rate of runs that did `rates` operations per second, and
    /// `on_cpu` per on-CPU second.
    ///
    /// ```
    /// let r = fibre_bench::timing::Rate::of(&[3.0, 1.0, 2.0], &[4.0, 6.0, 5.0]);
    /// assert_eq!((r.median, r.low, r.high, r.on_cpu), (2.0, 1.0, 3.0, 5.0));
    /// ```
    pub fn of(rates: &[f64], on_cpu: &[f64]) -> Rate {
        Rate {
            median: median(rates),
            low: rates.iter().copied().reduce(f64::min).unwrap_or(0.0),
            high: rates.iter().copied().reduce(f64::max).unwrap_or(0.0),
            on_cpu: median(on_cpu),
        }
    }

    /// The median in millions per second.
    pub fn millions(&self) -> f64 {
        self.median / 1e6
    }

    /// This median over `other`'s (0 when `other` measured nothing).
    ///
    /// ```
    /// use fibre_bench::timing::Rate;
    /// let (a, b, none) = (Rate::of(&[3e6], &[3e6]), Rate::of(&[1e6], &[1e6]), Rate::of(&[0.0], &[0.0]));
    /// assert_eq!((a.millions(), a.over(&b), a.over(&none)), (3.0, 3.0, 0.0));
    /// ```
    pub fn over(&self, other: &Rate) -> f64 {
        if other.median > 0.0 {
            self.median / other.median
        } else {
            0.0
        }
    }
}

/// What one thread did in one run.
struct Span {
    work: u64,
    start: Instant,
    end: Instant,
    on_cpu: Duration,
}

impl Span {
    fn per_second(&self) -> f64 {
        self.work as f64 / (self.end - self.start).as_secs_f64().max(1e-12)
    }
    fn per_cpu_second(&self) -> f64 {
        self.work as f64 / self.on_cpu.as_secs_f64().max(1e-12)
    }
}

/// This thread's CPU time, when the system tells it.
pub(crate) fn thread_cpu_time() -> Option<Duration> {
    cpu_time::ThreadTime::try_now()
        .ok()
        .map(|t| t.as_duration())
}

/// Repeats `pass` for at least `min` (at least once); returns the work done
/// (the sum of what `pass` returned), when it started and ended, and the CPU
/// time it took (the wall time where CPU time is not available).
fn repeat(min: Duration, mut pass: impl FnMut() -> u64) -> Span {
    let cpu_start = thread_cpu_time();
    let start = Instant::now();
    let mut work = 0;
    loop {
        work += pass();
        let end = Instant::now();
        if end - start >= min {
            let on_cpu = match (cpu_start, thread_cpu_time()) {
                (Some(a), Some(b)) if b > a => b - a,
                _ => end - start,
            };
            return Span {
                work,
                start,
                end,
                on_cpu,
            };
        }
    }
}

/// Operations per second of `pass` on this thread: `pass` does one pass and
/// returns how many operations it did.
///
/// ```
/// use fibre_bench::timing::{rate, Plan};
/// use std::time::Duration;
/// let plan = Plan { runs: 3, min_run: Duration::from_millis(1), warm_up: Duration::ZERO };
/// let per_second = rate(&plan, || { std::hint::black_box((0..1000u64).sum::<u64>()); 1000 });
/// assert!(per_second.median > 0.0 && per_second.on_cpu > 0.0);
/// ```
pub fn rate(plan: &Plan, mut pass: impl FnMut() -> u64) -> Rate {
    repeat(plan.warm_up, &mut pass);
    let spans: Vec<Span> = (0..plan.runs.max(1))
        .map(|_| repeat(plan.min_run, &mut pass))
        .collect();
    let wall: Vec<f64> = spans.iter().map(Span::per_second).collect();
    let cpu: Vec<f64> = spans.iter().map(Span::per_cpu_second).collect();
    Rate::of(&wall, &cpu)
}

/// Operations per second of `threads` threads working at once: thread `i`
/// repeats `pass(i)` (one pass over its own share of the work, returning the
/// operations done). A run's rate is all threads' work over the time from the
/// first thread's start to the last one's end; its on-CPU rate is the sum of
/// each thread's work over its own CPU time.
pub fn rate_parallel(plan: &Plan, threads: usize, pass: impl Fn(usize) -> u64 + Sync) -> Rate {
    let threads = threads.max(1);
    let one_run = |min: Duration| -> (f64, f64) {
        let (_, spans) = released_together(threads, |i| repeat(min, || pass(i)));
        let work: u64 = spans.iter().map(|s| s.work).sum();
        let start = spans.iter().map(|s| s.start).min();
        let end = spans.iter().map(|s| s.end).max();
        let wall = match (start, end) {
            (Some(start), Some(end)) if end > start => work as f64 / (end - start).as_secs_f64(),
            _ => 0.0,
        };
        (wall, spans.iter().map(Span::per_cpu_second).sum())
    };
    one_run(plan.warm_up);
    let runs: Vec<(f64, f64)> = (0..plan.runs.max(1))
        .map(|_| one_run(plan.min_run))
        .collect();
    let wall: Vec<f64> = runs.iter().map(|r| r.0).collect();
    let cpu: Vec<f64> = runs.iter().map(|r| r.1).collect();
    Rate::of(&wall, &cpu)
}

/// Wall time of a set of threads run together ([`run_threads`]) and the CPU
/// time each used.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadTimes {
    /// From the common start to the last thread's end.
    pub wall: Duration,
    /// CPU time per thread, in thread order (its wall time where the system
    /// does not tell CPU time).
    pub cpu: Vec<Duration>,
}

impl ThreadTimes {
    /// All threads' CPU time together.
    pub fn cpu_total(&self) -> Duration {
        self.cpu.iter().sum()
    }
}

/// Runs `body(i)` once on each of `threads` threads released together (a
/// start barrier); returns the wall time of the whole set, each thread's
/// CPU time (the machine is shared, so CPU time is the figure that survives
/// other load) and each body's result.
///
/// ```
/// use fibre_bench::timing::run_threads;
/// let (times, results) = run_threads(2, |i| i * 10);
/// assert_eq!((results, times.cpu.len()), (vec![0, 10], 2));
/// ```
pub fn run_threads<R: Send>(
    threads: usize,
    body: impl Fn(usize) -> R + Sync,
) -> (ThreadTimes, Vec<R>) {
    let (start, results) = released_together(threads, |i| {
        let (cpu0, wall0) = (thread_cpu_time(), Instant::now());
        let r = body(i);
        let cpu = match (cpu0, thread_cpu_time()) {
            (Some(a), Some(b)) if b >= a => b - a,
            _ => wall0.elapsed(),
        };
        (cpu, r)
    });
    let wall = start.elapsed();
    let (cpu, results) = results.into_iter().unzip();
    (ThreadTimes { wall, cpu }, results)
}

/// Runs `body(i)` on each of `threads` scoped threads, released together
/// by a start barrier; returns when they were released and each result in
/// thread order, once all have ended (a thread's panic is resumed here).
fn released_together<R: Send>(
    threads: usize,
    body: impl Fn(usize) -> R + Sync,
) -> (Instant, Vec<R>) {
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let barrier = &barrier;
                let body = &body;
                s.spawn(move || {
                    barrier.wait();
                    body(i)
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        let results = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect();
        (start, results)
    })
}

/// Runs `step` once and returns how long it took.
pub fn time<T>(step: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let value = step();
    (value, start.elapsed())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    const TINY: Plan = Plan {
        runs: 3,
        min_run: Duration::from_millis(2),
        warm_up: Duration::from_millis(1),
    };

    #[test]
    fn a_run_lasts_at_least_min_run_and_counts_every_pass() {
        let mut passes = 0u64;
        let span = repeat(Duration::from_millis(5), || {
            passes += 1;
            10
        });
        assert!(span.end - span.start >= Duration::from_millis(5));
        assert_eq!(span.work, passes * 10);
        assert!(span.on_cpu > Duration::ZERO);
    }

    #[test]
    fn a_slow_pass_still_runs_once() {
        let mut passes = 0;
        repeat(Duration::ZERO, || {
            passes += 1;
            1
        });
        assert_eq!(passes, 1);
    }

    #[test]
    fn rates_are_work_over_time() {
        // A pass of 1,000 operations that sleeps 1 ms cannot exceed 1,000,000/s.
        let r = rate(&TINY, || {
            std::thread::sleep(Duration::from_millis(1));
            1000
        });
        assert!(r.median > 0.0 && r.high <= 1_000_000.0, "{r:?}");
        // Sleeping takes no CPU: the on-CPU rate is far above the wall one.
        assert!(r.on_cpu > r.high, "{r:?}");
        assert!(r.low <= r.median && r.median <= r.high, "{r:?}");
    }

    #[test]
    fn every_thread_does_its_share() {
        let seen = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];
        let r = rate_parallel(&TINY, 3, |i| {
            seen[i].fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(Duration::from_micros(200));
            1
        });
        assert!(r.median > 0.0);
        assert!(seen.iter().all(|s| s.load(Ordering::Relaxed) > 0));
    }
}
