//! Running a measured set of threads: a start barrier, wall time for the
//! whole set and each thread's own CPU time (the machine is shared, so
//! CPU time is the figure that survives other load).

use std::sync::Barrier;
use std::time::{Duration, Instant};

/// Wall time of the run and the CPU time each thread used.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadTimes {
    /// From the common start to the last thread's end.
    pub wall: Duration,
    /// CPU time per thread, in thread order.
    pub cpu: Vec<Duration>,
}

impl ThreadTimes {
    /// All threads' CPU time together.
    pub fn cpu_total(&self) -> Duration {
        self.cpu.iter().sum()
    }
}

/// Runs `body(i)` on `threads` threads released together; returns the
/// times and each body's result.
pub fn run_threads<R: Send>(
    threads: usize,
    body: impl Fn(usize) -> R + Sync,
) -> (ThreadTimes, Vec<R>) {
    let barrier = Barrier::new(threads + 1);
    let (wall, results) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let barrier = &barrier;
                let body = &body;
                s.spawn(move || {
                    barrier.wait();
                    let cpu0 = cpu_time::ThreadTime::now();
                    let r = body(i);
                    (cpu0.elapsed(), r)
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        let results: Vec<(Duration, R)> = handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(r) => r,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect();
        (start.elapsed(), results)
    });
    let (cpu, results) = results.into_iter().unzip();
    (ThreadTimes { wall, cpu }, results)
}
