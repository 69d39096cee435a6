//! The hand-off between `fibre follow`'s receiving and applying threads:
//! group commit. The receiving thread adds each datagram's commands to
//! the batch still open at the tail, and the applying thread, whenever it
//! is free, takes everything gathered so far as one batch. A batch thus
//! closes when the applier is idle, or once it holds [`BATCH_TIME`]'s
//! worth of the applier's work, not at a count: while notifications
//! trickle in, each is published on its own as soon as the applier is
//! free; in a burst, what arrived while the applier applied the previous
//! batch becomes the next, so publications (a fixed cost each) grow
//! fewer as the load grows, and no batch ever waits behind another.
//!
//! The channel of whole batches this replaced (two batches of up to 512
//! datagrams between the threads) let a datagram wait for the batch being
//! applied, the two queued ahead of it, and then its own: in a burst
//! that BIRD writes faster than the FIB's writer applies, `fibre bench
//! converge` measured 20-67 ms spent queued in it on a loaded 2-core
//! machine, most of the announcement's lag; in the replay, batches of one
//! or two datagrams queued behind one another, and one of them preempted
//! for a few milliseconds held up the rest.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use anyhow::{bail, Result};

use super::Delivery;

/// How long the applier may take over one batch, by its own measure of
/// what a command costs it ([`BatchBudget`]): once the commands gathered
/// would take longer, the receiving thread waits for the applier to take
/// them, and the socket's receive buffer absorbs what arrives meanwhile
/// (an overrun there resyncs). A batch's apply time is the lag's unit: a
/// datagram received while the applier works waits for the rest of that
/// batch and then for its own, so in a burst the lag is about two batch
/// times. A bound in time holds where a bound in commands would not: a
/// command costs some 8 us to apply in a large batch, but from 20 to over
/// 100 us, preemptions included, while BIRD and other work share a 2-core
/// machine (`fibre bench converge`: batches of 256 commands took 1 to
/// 40 ms there).
/// Shorter batches lowered the lag further but cost convergence (more
/// publications, each with its fixed cost and the copy-on-write it
/// restarts): fibre held the full table 1.004-1.024x the kernel's time
/// with 0.5 ms (4 runs), 1.01x or more in 6 of 8 runs with a fixed 32
/// commands, and 0.997-1.018x with 1 ms, on 50,000 routes. On a million
/// a publication costs some 160 us, and 1 ms batches held the table
/// 1.04-1.06x the kernel's time against 1.03x with the 512-datagram
/// batches before (docs/BENCHMARKS.md).
pub const BATCH_TIME: Duration = Duration::from_millis(1);

/// The fewest commands a full batch holds, however slow the applier
/// measures itself (each batch pays a publication), and the fewest a
/// batch needs for its cost to count in the measure (below it the
/// publication's fixed cost dominates).
pub const MIN_BATCH_COMMANDS: usize = 16;

/// The most commands a batch holds, however fast the applier: bounds the
/// memory gathered between the threads.
pub const MAX_BATCH_COMMANDS: usize = 512;

/// What a command is assumed to cost before the applier has measured a
/// batch: what one costs in a large batch (see [`BATCH_TIME`]).
const FIRST_COST: Duration = Duration::from_micros(8);

/// The applier's measure of what a command costs it (applying and
/// publishing, preemptions included), a moving average over its batches,
/// and from it how many commands fill [`BATCH_TIME`].
#[derive(Debug, Clone, Copy)]
pub struct BatchBudget {
    nanos_per_command: f64,
}

impl Default for BatchBudget {
    fn default() -> BatchBudget {
        BatchBudget {
            nanos_per_command: FIRST_COST.as_nanos() as f64,
        }
    }
}

impl BatchBudget {
    /// A batch of `commands` applied and published in `took`.
    pub fn record(&mut self, commands: usize, took: Duration) {
        if commands < MIN_BATCH_COMMANDS {
            return;
        }
        let cost = took.as_nanos() as f64 / commands as f64;
        // An eighth of each new batch: a single preemption moves the
        // bound, but a few batches at the new cost are needed to set it.
        self.nanos_per_command += (cost - self.nanos_per_command) / 8.0;
    }

    /// The commands one batch may gather.
    pub fn limit(&self) -> usize {
        let fit = BATCH_TIME.as_nanos() as f64 / self.nanos_per_command.max(1.0);
        (fit as usize).clamp(MIN_BATCH_COMMANDS, MAX_BATCH_COMMANDS)
    }
}

/// At most this many deliveries wait (queries and dumps besides batches),
/// so that query lines read faster than they are answered cannot grow
/// memory without bound either.
const MAX_DELIVERIES: usize = 16;

/// Deliveries not yet applied, in order, each batch merged into a batch
/// just before it.
#[derive(Default)]
pub struct Pending {
    deliveries: VecDeque<Delivery>,
    /// The commands of the batches in `deliveries`.
    commands: usize,
}

impl Pending {
    /// Whether `delivery` must wait for the applier to take what is
    /// pending: it would take the pending commands past `limit` (see
    /// [`BatchBudget::limit`]) or the deliveries past [`MAX_DELIVERIES`].
    /// Never when nothing is pending, so that a datagram whose commands
    /// alone pass the bound still goes, as a batch of its own.
    pub fn full_for(&self, delivery: &Delivery, limit: usize) -> bool {
        if self.deliveries.is_empty() {
            return false;
        }
        let (commands, joins) = match (delivery, self.deliveries.back()) {
            (Delivery::Batch { commands, .. }, Some(Delivery::Batch { .. })) => {
                (commands.len(), true)
            }
            (Delivery::Batch { commands, .. }, _) => (commands.len(), false),
            _ => (0, false),
        };
        self.commands + commands > limit || (!joins && self.deliveries.len() >= MAX_DELIVERIES)
    }

    /// Adds `delivery` at the end; a batch after a batch joins it.
    pub fn push(&mut self, delivery: Delivery) {
        let Delivery::Batch { commands, received } = delivery else {
            self.deliveries.push_back(delivery);
            return;
        };
        self.commands += commands.len();
        if let Some(Delivery::Batch {
            commands: open,
            received: times,
        }) = self.deliveries.back_mut()
        {
            open.extend(commands);
            times.extend(received);
        } else {
            self.deliveries
                .push_back(Delivery::Batch { commands, received });
        }
    }

    /// Everything pending, in order; nothing is left.
    pub fn take(&mut self) -> VecDeque<Delivery> {
        self.commands = 0;
        std::mem::take(&mut self.deliveries)
    }

    fn is_empty(&self) -> bool {
        self.deliveries.is_empty()
    }
}

/// [`Pending`] shared by the two threads.
pub struct Handoff {
    state: Mutex<State>,
    /// The applier waits here for something to take.
    ready: Condvar,
    /// The receiver waits here for room.
    room: Condvar,
}

struct State {
    pending: Pending,
    /// The applier's [`BatchBudget::limit`] as of its last take.
    limit: usize,
    /// Who waits, so that the other wakes it (a futex call) only then:
    /// in a burst the receiver adds each datagram without a system call.
    applier_waits: bool,
    receiver_waits: bool,
    /// Set by either side once it stops: the applier then takes what is
    /// left and ends, the receiver's next send fails.
    closed: bool,
}

/// Waits on `condvar` with the waiting side's flag, `waits`, set meanwhile.
fn wait<'a>(
    condvar: &Condvar,
    mut state: MutexGuard<'a, State>,
    waits: fn(&mut State) -> &mut bool,
) -> MutexGuard<'a, State> {
    *waits(&mut state) = true;
    let mut state = condvar.wait(state).unwrap_or_else(PoisonError::into_inner);
    *waits(&mut state) = false;
    state
}

impl Default for Handoff {
    fn default() -> Handoff {
        Handoff {
            state: Mutex::new(State {
                pending: Pending::default(),
                limit: BatchBudget::default().limit(),
                applier_waits: false,
                receiver_waits: false,
                closed: false,
            }),
            ready: Condvar::new(),
            room: Condvar::new(),
        }
    }
}

impl Handoff {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Neither side panics while holding the lock (nothing in it can),
        // and the state is whole between its statements anyway.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The receiver's side: adds `delivery`, first waiting for room while
    /// the pending deliveries are full; an error once the applier stopped.
    pub fn send(&self, delivery: Delivery) -> Result<()> {
        let mut state = self.lock();
        while !state.closed && state.pending.full_for(&delivery, state.limit) {
            state = wait(&self.room, state, |s| &mut s.receiver_waits);
        }
        if state.closed {
            bail!("the applying thread stopped");
        }
        state.pending.push(delivery);
        if state.applier_waits {
            self.ready.notify_one();
        }
        Ok(())
    }

    /// The applier's side: everything pending, waiting until something
    /// is; `None` once the handoff is closed and nothing is left. `limit`
    /// bounds the batches gathered from now on.
    pub fn take(&self, limit: usize) -> Option<VecDeque<Delivery>> {
        let mut state = self.lock();
        state.limit = limit;
        loop {
            if !state.pending.is_empty() {
                let taken = state.pending.take();
                if state.receiver_waits {
                    self.room.notify_one();
                }
                return Some(taken);
            }
            if state.closed {
                return None;
            }
            state = wait(&self.ready, state, |s| &mut s.applier_waits);
        }
    }

    /// Either side's end (see [`State::closed`]).
    pub fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
        self.room.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Instant;

    fn batch(n: usize) -> Delivery {
        let commands = (0..n)
            .map(|i| fibre_fib::Command::LinkDel {
                name: format!("d{i}"),
            })
            .collect();
        Delivery::Batch {
            commands,
            received: vec![(Instant::now(), n as u64)],
        }
    }

    /// (commands, datagrams) of each batch; `None` for anything else.
    fn shape(taken: &VecDeque<Delivery>) -> Vec<Option<(usize, usize)>> {
        taken
            .iter()
            .map(|d| match d {
                Delivery::Batch { commands, received } => Some((commands.len(), received.len())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn batches_merge_up_to_the_bound_and_a_query_keeps_its_place() {
        let limit = 40;
        let mut pending = Pending::default();
        assert!(!pending.full_for(&batch(limit + 5), limit));
        pending.push(batch(3));
        pending.push(batch(4));
        pending.push(Delivery::Query(vec!["show".into()]));
        pending.push(batch(2));
        assert!(pending.full_for(&batch(limit - 8), limit));
        assert!(!pending.full_for(&batch(limit - 9), limit));
        let taken = pending.take();
        assert_eq!(shape(&taken), [Some((7, 2)), None, Some((2, 1))]);
        assert!(pending.is_empty() && !pending.full_for(&batch(limit), limit));
        for _ in 0..MAX_DELIVERIES {
            pending.push(Delivery::Query(vec![".count".into()]));
        }
        assert!(pending.full_for(&Delivery::Query(vec![".count".into()]), limit));
        assert!(pending.full_for(&batch(1), limit));
    }

    #[test]
    fn the_budget_fits_the_batch_time_to_the_measured_cost() {
        let mut budget = BatchBudget::default();
        let first = budget.limit();
        assert_eq!(
            first,
            (BATCH_TIME.as_nanos() / FIRST_COST.as_nanos()) as usize
        );
        // Batches too small to measure leave it alone.
        budget.record(MIN_BATCH_COMMANDS - 1, Duration::from_secs(1));
        assert_eq!(budget.limit(), first);
        // A slow applier gathers less, down to the floor...
        for _ in 0..100 {
            budget.record(100, Duration::from_millis(10));
        }
        assert_eq!(budget.limit(), MIN_BATCH_COMMANDS);
        // ...and a fast one more, up to the ceiling.
        for _ in 0..200 {
            budget.record(1000, Duration::from_micros(100));
        }
        assert_eq!(budget.limit(), MAX_BATCH_COMMANDS);
        for _ in 0..200 {
            budget.record(100, BATCH_TIME * 2);
        }
        let half = 50;
        assert!(budget.limit().abs_diff(half) <= 1, "{}", budget.limit());
    }

    /// While the applier is busy, what the receiver sends gathers into
    /// one batch, and the receiver waits once the bound is reached; the
    /// applier takes it all when it comes back, and what is left after
    /// the receiver closes.
    #[test]
    fn a_busy_applier_takes_what_gathered_and_the_receiver_waits_at_the_bound() {
        let limit = BatchBudget::default().limit();
        let handoff = Handoff::default();
        let sent = AtomicUsize::new(0);
        let mut takes = Vec::new();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for _ in 0..limit * 2 {
                    handoff.send(batch(1)).unwrap();
                    sent.fetch_add(1, Ordering::SeqCst);
                }
                handoff.close();
            });
            // The applier is "busy" until the receiver has filled the
            // bound and had to stop.
            while sent.load(Ordering::SeqCst) < limit {
                std::thread::sleep(Duration::from_millis(1));
            }
            std::thread::sleep(Duration::from_millis(20));
            assert_eq!(sent.load(Ordering::SeqCst), limit);
            while let Some(taken) = handoff.take(limit) {
                takes.push(shape(&taken));
            }
        });
        assert_eq!(
            takes[0],
            [Some((limit, limit))],
            "the first take is the whole gathered batch"
        );
        let total: usize = takes.iter().flatten().flatten().map(|(c, _)| c).sum();
        assert_eq!(total, limit * 2);
        assert!(takes.iter().all(|t| t.len() == 1));
        assert!(handoff.take(limit).is_none());
    }

    #[test]
    fn a_send_after_the_applier_stopped_fails() {
        let handoff = Handoff::default();
        handoff.send(batch(1)).unwrap();
        handoff.close();
        assert!(handoff.send(batch(1)).is_err());
        // What was sent before the close is still taken.
        assert_eq!(handoff.take(1).map(|t| shape(&t)), Some(vec![Some((1, 1))]));
        assert!(handoff.take(1).is_none());
    }
}
