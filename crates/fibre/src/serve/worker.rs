//! One forwarding worker thread: pinned to its core, polling its own
//! `AF_PACKET` socket on every port (one socket of each port's fanout
//! group) in bursts, transmitting what the worker queued, and handing what
//! is for the control side (ARP, neighbour discovery, packets waiting for
//! a neighbour) to the control thread. After each burst the FIB reader
//! and the neighbour reader report a quiescent state; while it waits for
//! frames the worker is offline, so a FIB publication never waits for an
//! idle worker.

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use fibre_fib::shared::FibReader;
use fibre_fib::LinkIndex;
use fibre_fwd::{PuntKind, Worker, BURST};
use fibre_io::{AfPacket, Port};
use fibre_neigh::NeighReader;

use super::STOP;

/// A frame for the control side, copied out of the worker's queue.
#[derive(Debug)]
pub struct PuntedFrame {
    /// Why the worker handed it over.
    pub kind: PuntKind,
    /// The link it came in on (`Neighbour`) or is to leave by (`Unresolved`).
    pub link: LinkIndex,
    /// `Unresolved`: the next hop to resolve.
    pub next_hop: Option<IpAddr>,
    /// The whole Ethernet frame.
    pub frame: Vec<u8>,
}

/// What a worker counts besides its forwarding counters, written only by
/// it (plain stores of its own running totals: no read-modify-write) and
/// read by the control thread.
#[derive(Debug, Default)]
pub struct WorkerExtras {
    /// Frames for the control side dropped because its queue was full.
    pub punts_lost: AtomicU64,
    /// Frames the kernel refused to transmit (a full device queue) or that
    /// failed to be queued (`EMSGSIZE`).
    pub tx_dropped: AtomicU64,
    /// Frames dropped before forwarding because they could not be lent
    /// whole: cut to the ring's block, or a segmentation offload's
    /// super-frame that could not be segmented (fibre-io segments TCP and
    /// UDP over IPv4 and IPv6; anything else is refused).
    pub truncated: AtomicU64,
    /// Ports no longer polled: their interface went away.
    pub ports_lost: AtomicU64,
    /// Super-frames from senders with segmentation offload, cut into
    /// segments before forwarding.
    pub segmented: AtomicU64,
    /// The segments they were cut into.
    pub segments: AtomicU64,
}

/// Everything one worker thread owns.
pub struct WorkerThread {
    /// The forwarding worker.
    pub worker: Worker<FibReader, NeighReader>,
    /// Its socket on each port, in port order.
    pub ports: Vec<AfPacket>,
    /// Where its punts go.
    pub punts: SyncSender<PuntedFrame>,
    /// Its extra counts.
    pub extras: Arc<WorkerExtras>,
    /// The CPU to pin it to.
    pub cpu: Option<usize>,
}

/// Pins the calling thread to `cpu` (`sched_setaffinity`).
fn pin_to(cpu: usize) -> std::io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes inside it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is below CPU_SETSIZE (checked by the caller's list,
    // which came from sched_getaffinity).
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` is a live cpu_set_t of the size given; 0 is this thread.
    let result = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) };
    if result < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The CPUs this process may run on (`sched_getaffinity`), in order.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: as in `pin_to`.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a live cpu_set_t of the size given; 0 is this thread.
    let result = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
    if result < 0 {
        return vec![0];
    }
    let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE; CPU_ISSET only reads `set`.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect();
    if cpus.is_empty() {
        vec![0]
    } else {
        cpus
    }
}

impl WorkerThread {
    /// Runs until [`STOP`]. An error receiving ends the worker (the
    /// control thread sees it finish and stops the router).
    pub fn run(mut self) -> Result<()> {
        if let Some(cpu) = self.cpu {
            pin_to(cpu).with_context(|| format!("pinning a worker to CPU {cpu}"))?;
        }
        let start = Instant::now();
        let mut punts_lost = 0u64;
        let mut tx_dropped = 0u64;
        let mut alive = vec![true; self.ports.len()];
        while !STOP.load(Ordering::Relaxed) {
            let now_ns = start.elapsed().as_nanos() as u64;
            let mut received = 0;
            let worker = &mut self.worker;
            for (i, port) in self.ports.iter_mut().enumerate() {
                received += port
                    .receive(BURST, &mut |frames| worker.receive_burst(i, frames, now_ns))
                    .context("receive")?;
            }
            for (i, port) in self.ports.iter_mut().enumerate() {
                self.worker.drain_port(i, |frame| {
                    if port.transmit(frame).is_err() {
                        tx_dropped += 1;
                    }
                });
            }
            let punts = &self.punts;
            self.worker.drain_punts(|p| {
                if p.kind == PuntKind::Local {
                    // No local stack: the worker counted it as punted.
                    return;
                }
                let copy = PuntedFrame {
                    kind: p.kind,
                    link: p.link,
                    next_hop: p.next_hop,
                    frame: p.frame.to_vec(),
                };
                if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) =
                    punts.try_send(copy)
                {
                    punts_lost += 1;
                }
            });
            for port in self.ports.iter_mut() {
                let queued_before = port.stats().send_dropped;
                if port.flush().is_err() {
                    tx_dropped += 1;
                }
                tx_dropped += port.stats().send_dropped - queued_before;
            }
            self.extras.punts_lost.store(punts_lost, Ordering::Relaxed);
            self.extras.tx_dropped.store(tx_dropped, Ordering::Relaxed);
            let truncated = self
                .ports
                .iter()
                .map(|p| p.stats().truncated + p.stats().gso_refused)
                .sum();
            self.extras.truncated.store(truncated, Ordering::Relaxed);
            let (segmented, segments) = self.ports.iter().fold((0, 0), |(a, b), p| {
                (a + p.stats().segmented, b + p.stats().segments)
            });
            self.extras.segmented.store(segmented, Ordering::Relaxed);
            self.extras.segments.store(segments, Ordering::Relaxed);
            if received == 0 {
                // Idle: a quiescent state for the neighbour readers'
                // domain, and offline for the FIB's while it waits.
                self.worker.neighbours_mut().quiescent();
                let _offline = self.worker.fib_mut().offline();
                let (indices, sockets): (Vec<usize>, Vec<&AfPacket>) = self
                    .ports
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| alive[*i])
                    .unzip();
                if sockets.is_empty() {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    continue;
                }
                if let Some(at) = fibre_io::wait_any(&sockets, 1).context("waiting for frames")? {
                    let port = indices[at];
                    let error = sockets[at].take_error();
                    // Down is not gone: the kernel resumes the socket when
                    // the interface comes back up (`packet_notifier`'s
                    // NETDEV_UP), and reading the error cleared it.
                    if error
                        .as_ref()
                        .is_none_or(|e| e.raw_os_error() == Some(libc::ENETDOWN))
                    {
                        continue;
                    }
                    let why = error.map_or("an error".to_string(), |e| e.to_string());
                    eprintln!(
                        "fibre serve: {}: port {port}: {why}; no longer polled",
                        std::thread::current().name().unwrap_or("worker")
                    );
                    alive[port] = false;
                    let lost = alive.iter().filter(|a| !**a).count() as u64;
                    self.extras.ports_lost.store(lost, Ordering::Relaxed);
                }
            }
        }
        Ok(())
    }
}
