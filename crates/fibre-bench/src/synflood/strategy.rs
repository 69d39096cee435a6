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
//!   published FIB once, looks the batch up as two bursts (the SYNs' input
//!   lookups, then the SYN-ACKs' output lookups: `Fib::lookup_input_burst_v6`,
//!   `Fib::lookup_output_burst_v6`) and reports a quiescent state after it.
//! * `rcu-per-key`: the same, with the two lookups of each packet one after
//!   the other (the per-key batch calls): the "before" of the bursts.

use std::time::{Duration, Instant};

use crate::protect::{PerCpuLock, Protected, RwLockProtected};
use fibre_fib::shared::{BatchMode, FibReader, FibWriter, SharedFib};
use fibre_fib::{Command, Errno, Fib, FlowKeyV6, Forward6, LinkIndex};

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
    /// Read-copy-update ([`fibre_fib::shared`]), each batch looked up as
    /// bursts.
    Rcu,
    /// Read-copy-update with the per-key loop: [`StrategyKind::Rcu`]'s
    /// "before".
    RcuPerKey,
}

impl StrategyKind {
    /// The three protections, the baseline first: every case runs them.
    pub const PROTECTIONS: [StrategyKind; 3] = [
        StrategyKind::RwLock,
        StrategyKind::PerCpuLock,
        StrategyKind::Rcu,
    ];

    /// Every strategy: the protections, then the bursts' "before" (which
    /// runs without a writer only).
    pub const ALL: [StrategyKind; 4] = [
        StrategyKind::RwLock,
        StrategyKind::PerCpuLock,
        StrategyKind::Rcu,
        StrategyKind::RcuPerKey,
    ];

    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            StrategyKind::RwLock => "rwlock",
            StrategyKind::PerCpuLock => "percpu-lock",
            StrategyKind::Rcu => "rcu",
            StrategyKind::RcuPerKey => "rcu-per-key",
        }
    }
}

/// One FIB under one protection, with its writer side.
pub enum Strategy {
    /// One `RwLock<Fib>`.
    RwLock(RwLockProtected<Fib>),
    /// `PerCpuLock<Fib>` with one slot per reader thread.
    PerCpuLock(PerCpuLock<Fib>),
    /// The RCU-published FIB; the writer is taken by the writer thread;
    /// how readers look their batches up.
    Rcu(SharedFib, FibWriter, Lookups),
}

/// A packet thread's access under one strategy.
pub enum Reader<'a> {
    /// The shared lock.
    RwLock(&'a RwLockProtected<Fib>),
    /// The locks, and this thread's slot among them.
    PerCpuLock(&'a PerCpuLock<Fib>, PerCpuReader),
    /// The thread's registration in the RCU domain, and whether it looks
    /// a batch up as bursts.
    Rcu(FibReader, Lookups),
}

/// How an RCU reader looks a batch of packets up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookups {
    /// Two bursts: the input lookups, then the output lookups.
    Burst,
    /// Each packet's two lookups, one packet after the other.
    PerKey,
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

/// The batch's SYNs as two bursts (inputs, then replies), folded as
/// [`handle_syn`] folds each packet, so both give the same digest.
#[inline]
fn handle_burst(fib: &Fib, uplink: LinkIndex, syns: &[Syn]) -> u64 {
    let n = syns.len().min(BATCH);
    let mut inputs = [FlowKeyV6::default(); BATCH];
    let mut replies = [FlowKeyV6::default(); BATCH];
    for (k, syn) in syns[..n].iter().enumerate() {
        inputs[k] = syn.input;
        replies[k] = syn.reply;
    }
    let mut input_answers = [Err(Errno::Inval); BATCH];
    let mut reply_answers = [Err(Errno::Inval); BATCH];
    fib.lookup_input_burst_v6(uplink, &inputs[..n], &mut input_answers[..n]);
    fib.lookup_output_burst_v6(&replies[..n], &mut reply_answers[..n]);
    input_answers[..n]
        .iter()
        .zip(&reply_answers[..n])
        .fold(0u64, |sum, (input, reply)| {
            sum.wrapping_add(digest(input) ^ digest(reply).rotate_left(17))
        })
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
            StrategyKind::Rcu | StrategyKind::RcuPerKey => {
                let writer = FibWriter::new(fib);
                let lookups = if kind == StrategyKind::Rcu {
                    Lookups::Burst
                } else {
                    Lookups::PerKey
                };
                Strategy::Rcu(writer.shared(), writer, lookups)
            }
        }
    }

    /// The reader side (shareable between threads) and the writer side.
    pub fn split(&mut self) -> (ReadSide<'_>, WriteSide<'_>) {
        match self {
            Strategy::RwLock(lock) => (ReadSide::RwLock(lock), WriteSide::RwLock(lock)),
            Strategy::PerCpuLock(lock) => (ReadSide::PerCpuLock(lock), WriteSide::PerCpuLock(lock)),
            Strategy::Rcu(shared, writer, lookups) => {
                (ReadSide::Rcu(shared, *lookups), WriteSide::Rcu(writer))
            }
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
    Rcu(&'a SharedFib, Lookups),
}

impl<'a> ReadSide<'a> {
    /// The calling thread's reader (an RCU reader is online until dropped).
    pub fn reader(&self) -> Reader<'a> {
        match *self {
            ReadSide::RwLock(lock) => Reader::RwLock(lock),
            ReadSide::PerCpuLock(lock) => Reader::PerCpuLock(lock, lock.reader()),
            ReadSide::Rcu(shared, lookups) => Reader::Rcu(shared.reader(), lookups),
        }
    }
}

impl Reader<'_> {
    /// Handles `syns` (at most [`BATCH`]): the locks are taken per lookup,
    /// twice per packet, as the kernel's `fib6_table_lookup` takes its
    /// table's lock for each lookup (the SYN's input route, then the
    /// SYN-ACK's output route; the kernel takes it once more per table its
    /// rules visit); RCU loads the FIB once for the batch, looks it up (as
    /// bursts, or key by key) and reports a quiescent state after it.
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
            Reader::Rcu(reader, Lookups::Burst) => {
                reader.batch(|snapshot| handle_burst(snapshot.fib(), uplink, syns))
            }
            Reader::Rcu(reader, Lookups::PerKey) => reader.batch(|snapshot| {
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

#[cfg(test)]
mod tests {
    use super::super::setup::{router, syns};
    use super::*;
    use crate::data;

    /// The bursts do the per-key loop's work: the same answers, so the
    /// same digest, for a batch of SYNs from routed and unrouted sources.
    #[test]
    fn a_burst_answers_what_the_per_key_loop_answers() {
        let table: Vec<data::Prefix<u128>> = ["2a00::/12", "2a01:4f8::/32", "2001:db8:1::/48"]
            .iter()
            .map(|t| data::parse_prefix(t).unwrap())
            .collect();
        let (fib, uplink) = router(&table, 16).unwrap();
        let sources: Vec<u128> = (0..BATCH as u128)
            .map(|i| match i % 3 {
                0 => 0x2a01_04f8 << 96 | i,
                1 => 0x2a0f << 112 | i << 40,
                _ => 0x3fff << 112 | i,
            })
            .collect();
        let batch = syns(&sources, 7);
        let per_key = batch.iter().fold(0u64, |sum, syn| {
            sum.wrapping_add(handle_syn(&fib, uplink, syn))
        });
        assert_eq!(handle_burst(&fib, uplink, &batch), per_key);
        assert_ne!(per_key, 0);
    }
}
