//! The three ways of sharing one [`Fib`] between packet threads and a
//! route writer. The lookups are the same code in all three; only the
//! protection around them differs.
//!
//! * `rwlock`: one reader/writer lock; each of a packet's two lookups
//!   takes it for reading (the kernel's IPv6 FIB before it became RCU, which
//!   takes a table's lock in every `fib6_table_lookup`).
//! * `percpu-lock`: one cache-padded lock per reader thread; each lookup
//!   takes its thread's lock, the writer takes them all (Shaohua Li's "net ipv6: convert
//!   fib6_table rwlock to a percpu lock", 2017).
//! * `rcu`: [`fibre_fib::shared`]: no lock; a batch of packets loads the
//!   published FIB once and reports a quiescent state after it.

use std::time::{Duration, Instant};

use crate::protect::{PerCpuLock, Protected, RwLockProtected};
use fibre_fib::shared::{BatchMode, FibReader, FibWriter, SharedFib};
use fibre_fib::{Command, Errno, Fib, Forward6, LinkIndex};

/// A per-CPU-lock reader's slot (the type is not exported by name).
type PerCpuReader = <PerCpuLock<Fib> as Protected<Fib>>::Reader;

use super::setup::Syn;

/// Which protection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrategyKind {
    /// One reader/writer lock.
    RwLock,
    /// A lock per reader thread.
    PerCpuLock,
    /// Read-copy-update ([`fibre_fib::shared`]).
    Rcu,
}

impl StrategyKind {
    /// All three, the baseline first.
    pub const ALL: [StrategyKind; 3] = [
        StrategyKind::RwLock,
        StrategyKind::PerCpuLock,
        StrategyKind::Rcu,
    ];

    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            StrategyKind::RwLock => "rwlock",
            StrategyKind::PerCpuLock => "percpu-lock",
            StrategyKind::Rcu => "rcu",
        }
    }
}

/// One FIB under one protection, with its writer side.
pub enum Strategy {
    /// One `RwLock<Fib>`.
    RwLock(RwLockProtected<Fib>),
    /// `PerCpuLock<Fib>` with one slot per reader thread.
    PerCpuLock(PerCpuLock<Fib>),
    /// The RCU-published FIB; the writer is taken by the writer thread.
    Rcu(SharedFib, FibWriter),
}

/// A packet thread's access under one strategy.
pub enum Reader<'a> {
    /// The shared lock.
    RwLock(&'a RwLockProtected<Fib>),
    /// The locks, and this thread's slot among them.
    PerCpuLock(&'a PerCpuLock<Fib>, PerCpuReader),
    /// The thread's registration in the RCU domain.
    Rcu(FibReader),
}

/// Packets a reader handles per batch (between two quiescent reports).
pub const BATCH: usize = 32;

/// The SYN's input lookup (received on `uplink`), folded into a digest so
/// that the work cannot be optimised away.
#[inline]
fn input_lookup(fib: &Fib, uplink: LinkIndex, syn: &Syn) -> u64 {
    let mut input: [Result<Forward6, Errno>; 1] = [Err(Errno::Inval)];
    fib.lookup_input_batch_v6(uplink, std::slice::from_ref(&syn.input), &mut input);
    digest(&input[0])
}

/// The SYN-ACK's output lookup, folded likewise.
#[inline]
fn output_lookup(fib: &Fib, syn: &Syn) -> u64 {
    digest(&fib.lookup_output_v6(&syn.reply)).rotate_left(17)
}

/// One SYN: the input lookup and the SYN-ACK's output lookup.
#[inline]
fn handle_syn(fib: &Fib, uplink: LinkIndex, syn: &Syn) -> u64 {
    input_lookup(fib, uplink, syn) ^ output_lookup(fib, syn)
}

fn digest(answer: &Result<Forward6, Errno>) -> u64 {
    match answer {
        Ok(f) => (f.gateway as u64) ^ u64::from(f.dev) << 48 ^ u64::from(f.table),
        Err(e) => *e as u64,
    }
}

impl Strategy {
    /// `fib` under `kind`, for up to `readers` packet threads.
    pub fn new(kind: StrategyKind, fib: Fib, readers: usize) -> Strategy {
        match kind {
            StrategyKind::RwLock => Strategy::RwLock(RwLockProtected::new(fib)),
            StrategyKind::PerCpuLock => {
                Strategy::PerCpuLock(PerCpuLock::with_slots(fib, readers.max(1)))
            }
            StrategyKind::Rcu => {
                let writer = FibWriter::new(fib);
                Strategy::Rcu(writer.shared(), writer)
            }
        }
    }

    /// The reader side (shareable between threads) and the writer side.
    pub fn split(&mut self) -> (ReadSide<'_>, WriteSide<'_>) {
        match self {
            Strategy::RwLock(lock) => (ReadSide::RwLock(lock), WriteSide::RwLock(lock)),
            Strategy::PerCpuLock(lock) => (ReadSide::PerCpuLock(lock), WriteSide::PerCpuLock(lock)),
            Strategy::Rcu(shared, writer) => (ReadSide::Rcu(shared), WriteSide::Rcu(writer)),
        }
    }
}

/// What packet threads share.
#[derive(Clone, Copy)]
pub enum ReadSide<'a> {
    /// See [`Strategy::RwLock`].
    RwLock(&'a RwLockProtected<Fib>),
    /// See [`Strategy::PerCpuLock`].
    PerCpuLock(&'a PerCpuLock<Fib>),
    /// See [`Strategy::Rcu`].
    Rcu(&'a SharedFib),
}

impl<'a> ReadSide<'a> {
    /// The calling thread's reader (an RCU reader is online until dropped).
    pub fn reader(&self) -> Reader<'a> {
        match *self {
            ReadSide::RwLock(lock) => Reader::RwLock(lock),
            ReadSide::PerCpuLock(lock) => Reader::PerCpuLock(lock, lock.reader()),
            ReadSide::Rcu(shared) => Reader::Rcu(shared.reader()),
        }
    }
}

impl Reader<'_> {
    /// Handles `syns` (at most [`BATCH`]): the locks are taken per lookup,
    /// twice per packet, as the kernel's `fib6_table_lookup` takes its
    /// table's lock for each lookup (the SYN's input route, then the
    /// SYN-ACK's output route; the kernel takes it once more per table its
    /// rules visit); RCU loads the FIB once for the batch and reports a
    /// quiescent state after it.
    #[inline]
    pub fn handle_batch(&mut self, uplink: LinkIndex, syns: &[Syn]) -> u64 {
        match self {
            Reader::RwLock(lock) => syns.iter().fold(0u64, |sum, syn| {
                let input = lock.read(&mut (), |fib| input_lookup(fib, uplink, syn));
                let output = lock.read(&mut (), |fib| output_lookup(fib, syn));
                sum.wrapping_add(input ^ output)
            }),
            Reader::PerCpuLock(lock, slot) => syns.iter().fold(0u64, |sum, syn| {
                let input = lock.read(slot, |fib| input_lookup(fib, uplink, syn));
                let output = lock.read(slot, |fib| output_lookup(fib, syn));
                sum.wrapping_add(input ^ output)
            }),
            Reader::Rcu(reader) => reader.batch(|snapshot| {
                let fib = snapshot.fib();
                syns.iter().fold(0u64, |sum, syn| {
                    sum.wrapping_add(handle_syn(fib, uplink, syn))
                })
            }),
        }
    }
}

/// The route writer's side.
pub enum WriteSide<'a> {
    /// See [`Strategy::RwLock`].
    RwLock(&'a RwLockProtected<Fib>),
    /// See [`Strategy::PerCpuLock`].
    PerCpuLock(&'a PerCpuLock<Fib>),
    /// See [`Strategy::Rcu`].
    Rcu(&'a mut FibWriter),
}

/// What one write did.
pub struct Written {
    /// From the call until readers could see the batch.
    pub latency: Duration,
    /// Commands the FIB refused (withdrawals of absent prefixes, say).
    pub refused: usize,
}

impl WriteSide<'_> {
    /// Applies `commands` as one batch, each refused command skipped; the
    /// locks are held for the whole batch, RCU publishes it once.
    pub fn apply(&mut self, commands: &[Command]) -> Result<Written, String> {
        let started = Instant::now();
        let apply_all = |fib: &mut Fib| commands.iter().filter(|c| fib.apply(c).is_err()).count();
        let refused = match self {
            WriteSide::RwLock(lock) => lock.write(apply_all),
            WriteSide::PerCpuLock(lock) => lock.write(apply_all),
            WriteSide::Rcu(writer) => {
                let report = writer
                    .apply_batch(commands, BatchMode::BestEffort)
                    .map_err(|e| e.to_string())?;
                return Ok(Written {
                    latency: report.latency,
                    refused: report.refused.len(),
                });
            }
        };
        Ok(Written {
            latency: started.elapsed(),
            refused,
        })
    }
}
