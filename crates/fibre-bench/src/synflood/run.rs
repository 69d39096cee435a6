//! One timed run: packet threads flood the FIB with SYNs while a writer
//! (optionally) replays route updates, for a fixed wall-clock window.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use fibre_fib::shared::{PublishPacer, DEFAULT_PUBLISH_INTERVAL};
use fibre_fib::{Command, LinkIndex};

use super::setup::Syn;
use super::strategy::{Strategy, WriteSide, BATCH};
use crate::timing::thread_cpu_time;

/// How the writer replays the updates during a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pace {
    /// No writer.
    Idle,
    /// This many updates per second, each batch holding what has come due.
    Rate(f64),
    /// As fast as it can, [`FULL_SPEED_BATCH`] updates per batch.
    FullSpeed,
}

/// Updates per batch of a full-speed writer (a burst, as after a BGP
/// session reset).
pub const FULL_SPEED_BATCH: usize = 1024;
/// The most updates a paced writer folds into one batch when it falls
/// behind (while a grace period lasts, say): large, so that the batches grow
/// with the delay and the writer keeps its rate; one publication per batch.
const MAX_PACED_BATCH: usize = 65_536;
/// The shortest time between two publications of a paced writer
/// ([`PublishPacer`]). Updates that come due meanwhile wait and go out
/// together: at 100,000 updates/s about 100 per batch, some 1,000 batches a
/// second. Without it the writer published whatever had come due as soon
/// as the last batch was out, some 2,800 batches of ~35 a second: each one
/// a wake-up taking a core from a packet thread, for RCU also a grace
/// period to wait for (naps, context switches) and a switch of the readers
/// to the other copy. An update after a quiet interval goes out at once
/// (the 1k/s trickle's updates are each published when due). Every
/// strategy is paced alike.
pub const PUBLISH_INTERVAL: Duration = DEFAULT_PUBLISH_INTERVAL;

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub struct RunResult {
    /// SYNs handled over all packet threads.
    pub packets: u64,
    /// From the first packet thread's start to the last one's end.
    pub wall: Duration,
    /// Sum over packet threads of packets per on-CPU second.
    pub packets_per_cpu_second: f64,
    /// Updates the writer applied (refused ones included).
    pub updates: u64,
    /// Updates the FIB refused (withdrawals of absent prefixes).
    pub refused: u64,
    /// The writer's wall time.
    pub writer_wall: Duration,
    /// The writer thread's CPU time (its wall time where the platform has
    /// no per-thread clock).
    pub writer_cpu: Duration,
    /// Per batch: from the write call until readers could see it.
    pub publish_latency: Vec<Duration>,
    /// Per paced batch: from its oldest update coming due until readers
    /// could see it (the pacing delay included).
    pub due_latency: Vec<Duration>,
    /// Batches the writer could not apply (RCU grace period timeouts).
    pub write_errors: Vec<String>,
}

/// The next `n` updates, wrapping around to the first (one slice, so
/// possibly fewer than `n` at the end of the day).
fn next_updates<'u>(updates: &'u [Command], cursor: &mut usize, n: usize) -> &'u [Command] {
    if *cursor >= updates.len() {
        *cursor = 0;
    }
    let end = (*cursor + n).min(updates.len());
    let slice = &updates[*cursor..end];
    *cursor = end;
    slice
}

struct ReaderSpan {
    packets: u64,
    start: Instant,
    end: Instant,
    cpu: Duration,
}

/// What the threads of a run work on.
#[derive(Clone, Copy)]
pub struct Workload<'a> {
    /// The link the SYNs arrive on.
    pub uplink: LinkIndex,
    /// Per packet thread, the SYNs it cycles through.
    pub syns: &'a [Vec<Syn>],
    /// The route updates the writer replays, wrapping around.
    pub updates: &'a [Command],
}

/// Runs `threads` packet threads (thread `i` cycling through
/// `work.syns[i]`) and the writer at `pace` for `window`; `cursor` is
/// where the writer resumes in `work.updates`.
pub fn run_once(
    strategy: &mut Strategy,
    work: Workload<'_>,
    threads: usize,
    pace: Pace,
    window: Duration,
    cursor: &mut usize,
) -> RunResult {
    let Workload {
        uplink,
        syns,
        updates,
    } = work;
    let (read_side, mut write_side) = strategy.split();
    let stop = AtomicBool::new(false);
    let writing = pace != Pace::Idle && !updates.is_empty();
    let barrier = Barrier::new(threads + 1 + usize::from(writing));
    let mut result = RunResult::default();
    std::thread::scope(|scope| {
        let readers: Vec<_> = (0..threads)
            .map(|i| {
                let (stop, barrier) = (&stop, &barrier);
                let mine = &syns[i % syns.len()];
                scope.spawn(move || {
                    let mut reader = read_side.reader();
                    let mut digest = 0u64;
                    let mut packets = 0u64;
                    barrier.wait();
                    let cpu_start = thread_cpu_time();
                    let start = Instant::now();
                    'flood: loop {
                        for chunk in mine.chunks(BATCH) {
                            if stop.load(Ordering::Relaxed) {
                                break 'flood;
                            }
                            digest = digest.wrapping_add(reader.handle_batch(uplink, chunk));
                            packets += chunk.len() as u64;
                        }
                    }
                    let end = Instant::now();
                    std::hint::black_box(digest);
                    let cpu = match (cpu_start, thread_cpu_time()) {
                        (Some(a), Some(b)) if b > a => b - a,
                        _ => end - start,
                    };
                    ReaderSpan {
                        packets,
                        start,
                        end,
                        cpu,
                    }
                })
            })
            .collect();
        let writer = writing.then(|| {
            let (stop, barrier) = (&stop, &barrier);
            let cursor = &mut *cursor;
            let write_side = &mut write_side;
            scope.spawn(move || {
                barrier.wait();
                write_loop(write_side, updates, cursor, pace, stop)
            })
        });
        barrier.wait();
        std::thread::sleep(window);
        stop.store(true, Ordering::Relaxed);
        let spans: Vec<ReaderSpan> = readers
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect();
        result.packets = spans.iter().map(|s| s.packets).sum();
        let start = spans.iter().map(|s| s.start).min();
        let end = spans.iter().map(|s| s.end).max();
        if let (Some(start), Some(end)) = (start, end) {
            result.wall = end - start;
        }
        result.packets_per_cpu_second = spans
            .iter()
            .map(|s| s.packets as f64 / s.cpu.as_secs_f64().max(1e-9))
            .sum();
        if let Some(writer) = writer {
            let w = writer
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            result.updates = w.updates;
            result.refused = w.refused;
            result.writer_wall = w.wall;
            result.writer_cpu = w.cpu;
            result.publish_latency = w.publish_latency;
            result.due_latency = w.due_latency;
            result.write_errors = w.errors;
        }
    });
    result
}

/// Runs the writer alone (no packet threads) for `window`, at `pace`
/// ([`Pace::Idle`] reads as full speed: a run without readers or writer
/// measures nothing). A paced run shows the writer's CPU per update when
/// each batch holds one update or a few (at 1,000 updates/s, one batch
/// per update): the publication's fixed cost, which a full-speed batch of
/// [`FULL_SPEED_BATCH`] spreads thin.
pub fn run_writer_alone(
    strategy: &mut Strategy,
    window: Duration,
    pace: Pace,
    updates: &[Command],
    cursor: &mut usize,
) -> RunResult {
    let pace = match pace {
        Pace::Idle => Pace::FullSpeed,
        paced => paced,
    };
    let (_, mut write_side) = strategy.split();
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let stop = &stop;
        let writer = scope.spawn(|| write_loop(&mut write_side, updates, cursor, pace, stop));
        std::thread::sleep(window);
        stop.store(true, Ordering::Relaxed);
        let w = writer
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        RunResult {
            updates: w.updates,
            refused: w.refused,
            writer_wall: w.wall,
            writer_cpu: w.cpu,
            publish_latency: w.publish_latency,
            write_errors: w.errors,
            ..RunResult::default()
        }
    })
}

struct WriterRun {
    updates: u64,
    refused: u64,
    wall: Duration,
    cpu: Duration,
    publish_latency: Vec<Duration>,
    due_latency: Vec<Duration>,
    errors: Vec<String>,
}

fn write_loop(
    side: &mut WriteSide<'_>,
    updates: &[Command],
    cursor: &mut usize,
    pace: Pace,
    stop: &AtomicBool,
) -> WriterRun {
    let mut run = WriterRun {
        updates: 0,
        refused: 0,
        wall: Duration::ZERO,
        cpu: Duration::ZERO,
        publish_latency: Vec::new(),
        due_latency: Vec::new(),
        errors: Vec::new(),
    };
    let start = Instant::now();
    let cpu_start = thread_cpu_time();
    let mut pacer = PublishPacer::new(PUBLISH_INTERVAL);
    while !stop.load(Ordering::Relaxed) && !updates.is_empty() {
        let (n, due_at) = match pace {
            Pace::Idle => break,
            Pace::FullSpeed => (FULL_SPEED_BATCH, None),
            Pace::Rate(per_second) => {
                let now = Instant::now();
                let due = ((now - start).as_secs_f64() * per_second) as u64;
                let pending = due.saturating_sub(run.updates) as usize;
                if pending == 0 {
                    // Until the next update comes due.
                    let next = Duration::from_secs_f64((run.updates + 1) as f64 / per_second);
                    std::thread::sleep((start + next).saturating_duration_since(now));
                    continue;
                }
                if let Some(wait) = pacer.wait(now) {
                    std::thread::sleep(wait);
                    continue;
                }
                // The oldest pending update, number `run.updates` from 0,
                // came due when `due` passed it.
                let oldest = Duration::from_secs_f64((run.updates + 1) as f64 / per_second);
                (pending.min(MAX_PACED_BATCH), Some(start + oldest))
            }
        };
        let batch = next_updates(updates, cursor, n);
        match side.apply(batch) {
            Ok(written) => {
                pacer.published(Instant::now());
                run.updates += batch.len() as u64;
                run.refused += written.refused as u64;
                run.publish_latency.push(written.latency);
                if let Some(due_at) = due_at {
                    run.due_latency.push(due_at.elapsed());
                }
            }
            Err(message) => {
                // Give the stalled readers a moment; the batch is retried.
                *cursor -= batch.len();
                run.errors.push(message);
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
    run.wall = start.elapsed();
    run.cpu = match (cpu_start, thread_cpu_time()) {
        (Some(a), Some(b)) if b > a => b - a,
        _ => run.wall,
    };
    run
}

/// The `q`-quantile (0..=1) of `samples`, by the nearest rank; zero when empty.
///
/// ```
/// use std::time::Duration;
/// use fibre_bench::synflood::run::quantile;
/// let ms = |n| Duration::from_millis(n);
/// let mut samples: Vec<_> = (1..=100).map(ms).collect();
/// assert_eq!(quantile(&mut samples, 0.5), ms(50));
/// assert_eq!(quantile(&mut samples, 0.99), ms(99));
/// assert_eq!(quantile(&mut [], 0.5), Duration::ZERO);
/// ```
pub fn quantile(samples: &mut [Duration], q: f64) -> Duration {
    if samples.is_empty() {
        return Duration::ZERO;
    }
    samples.sort_unstable();
    let rank = (q.clamp(0.0, 1.0) * samples.len() as f64).ceil() as usize;
    samples[rank.clamp(1, samples.len()) - 1]
}
