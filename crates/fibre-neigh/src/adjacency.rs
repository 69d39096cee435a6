//! The workers' view of the neighbour table: an adjacency table (link and
//! address to MAC) published by RCU, read with no lock and no write to a
//! line another core writes; and the one thing a worker tells the control
//! side, through a ring of its own: that it used an entry.
//!
//! Why the report: the kernel moves a STALE entry to DELAY (and on to
//! PROBE, unicast probes, REACHABLE or FAILED) when a packet is sent
//! through it (`neigh_event_send` from `neigh_resolve_output`), and a
//! REACHABLE entry whose reachable time ran out goes to DELAY rather than
//! STALE when it was used within `delay_first_probe_time`. The state
//! machine runs on the control side, so each worker pushes "used (link,
//! address)" into its own bounded single-producer ring ([`UseRing`]): the
//! worker writes only the ring's slots and its tail (its own cache lines),
//! the control side only the head. An entry is reported at most once per
//! burst (between two [`NeighReader::quiescent`] calls, for the first 32
//! entries of a burst), and only when the report can matter (STALE,
//! REACHABLE, DELAY). A full ring drops the report and counts it: a lost
//! report only delays a confirmation until the next use, as a lost packet
//! would. The control side drains the rings ([`NeighPublisher::drain_uses`])
//! before its timers run, so a use is seen at most one drain late.

use std::cell::Cell;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use fibre_base::CachePadded;
use fibre_fib::NudState;
use fibre_rcu::{Domain, RcuCell, ReaderHandle};

use crate::router::Router;
use crate::table::{Action, NeighTable};

/// What a worker needs to send to a neighbour: its MAC, and the state
/// the entry had when it was published.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Adjacency {
    /// The neighbour's MAC (the frame's destination).
    pub mac: [u8; 6],
    /// The entry's state when published (always `NUD_VALID`).
    pub state: NudState,
    /// The entry's position in its published table (for the reader's
    /// per-burst report filter).
    slot: u32,
}

impl Adjacency {
    /// Whether the control side wants to hear that this entry was used.
    fn report_use(&self) -> bool {
        matches!(
            self.state,
            NudState::Stale | NudState::Reachable | NudState::Delay
        )
    }
}

/// The hash of the published table, read per packet: foldhash's fast
/// hash (a folded multiply per word, a few nanoseconds for a link and an
/// address, where std's SipHash-1-3 spends tens), seeded at random per
/// table. Its keys are resolved neighbours only (at most `gc_thresh3` per
/// family plus the static ones), which a sender cannot pick alone.
type KeyHash = foldhash::fast::RandomState;

/// The published table: every entry with a usable address.
#[derive(Debug, Clone, Default)]
pub struct AdjacencyTable {
    map: HashMap<(u32, IpAddr), Adjacency, KeyHash>,
}

impl AdjacencyTable {
    /// The table of `neigh`'s usable entries.
    pub fn of(neigh: &NeighTable) -> Self {
        let mut map = HashMap::with_capacity_and_hasher(neigh.entries.len(), Default::default());
        for (slot, view) in neigh.entries().filter(|v| v.lladdr.is_some()).enumerate() {
            if let Some(mac) = view.lladdr {
                map.insert(
                    (view.link, view.addr),
                    Adjacency {
                        mac,
                        state: view.state,
                        slot: slot as u32,
                    },
                );
            }
        }
        AdjacencyTable { map }
    }

    /// The adjacency of `addr` on `link`.
    pub fn get(&self, link: u32, addr: IpAddr) -> Option<Adjacency> {
        self.map.get(&(link, addr)).copied()
    }

    /// How many adjacencies it holds.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// A bounded single-producer, single-consumer ring of use reports: one per
/// worker. The producer (the worker) writes the slots and `tail`, the
/// consumer (the control side) `head`; each on cache lines of its own.
#[derive(Debug)]
pub struct UseRing {
    slots: Box<[[AtomicU64; 3]]>,
    tail: CachePadded<AtomicUsize>,
    lost: CachePadded<AtomicU64>,
    head: CachePadded<AtomicUsize>,
}

impl UseRing {
    /// A ring of `capacity` reports (at least 1).
    pub fn new(capacity: usize) -> Self {
        let slots = (0..capacity.max(1))
            .map(|_| [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)])
            .collect();
        UseRing {
            slots,
            tail: CachePadded::new(AtomicUsize::new(0)),
            lost: CachePadded::new(AtomicU64::new(0)),
            head: CachePadded::new(AtomicUsize::new(0)),
        }
    }

    /// Producer side: reports a use; false (and counted) when full. Only
    /// one thread may push (the reader that owns the ring).
    fn push(&self, link: u32, addr: IpAddr) -> bool {
        let tail = self.tail.load(Ordering::Relaxed);
        let head = self.head.load(Ordering::Acquire);
        if tail.wrapping_sub(head) >= self.slots.len() {
            // A plain store: only this producer writes the counter.
            let lost = self.lost.load(Ordering::Relaxed);
            self.lost.store(lost + 1, Ordering::Relaxed);
            return false;
        }
        let (family, bits) = match addr {
            IpAddr::V4(a) => (0u64, u128::from(u32::from(a))),
            IpAddr::V6(a) => (1u64, u128::from(a)),
        };
        let slot = &self.slots[tail % self.slots.len()];
        slot[0].store(u64::from(link) | (family << 32), Ordering::Relaxed);
        slot[1].store((bits >> 64) as u64, Ordering::Relaxed);
        slot[2].store(bits as u64, Ordering::Relaxed);
        self.tail.store(tail.wrapping_add(1), Ordering::Release);
        true
    }

    /// Consumer side: takes every report queued so far.
    fn drain(&self, mut each: impl FnMut(u32, IpAddr)) {
        let mut head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Acquire);
        while head != tail {
            let slot = &self.slots[head % self.slots.len()];
            let word = slot[0].load(Ordering::Relaxed);
            let bits = (u128::from(slot[1].load(Ordering::Relaxed)) << 64)
                | u128::from(slot[2].load(Ordering::Relaxed));
            let addr = if word >> 32 == 0 {
                IpAddr::V4((bits as u32).into())
            } else {
                IpAddr::V6(bits.into())
            };
            each(word as u32, addr);
            head = head.wrapping_add(1);
        }
        self.head.store(head, Ordering::Release);
    }

    /// Reports dropped because the ring was full.
    pub fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }
}

/// How many reports one worker's ring holds.
pub const USE_RING_CAPACITY: usize = 1024;

/// The entries a reader remembers having reported in the current burst.
const REPORTED_PER_BURST: usize = 32;

/// The control side's end: publishes the adjacency table and drains the
/// workers' use reports.
#[derive(Debug)]
pub struct NeighPublisher {
    domain: Domain,
    cell: Arc<RcuCell<AdjacencyTable>>,
    rings: Vec<Arc<UseRing>>,
}

impl NeighPublisher {
    /// A publisher in `domain` (share the FIB's, so that a worker's
    /// quiescent reports serve both), with an empty table.
    pub fn new(domain: &Domain) -> Self {
        NeighPublisher {
            domain: domain.clone(),
            cell: Arc::new(RcuCell::new(domain, AdjacencyTable::default())),
            rings: Vec::new(),
        }
    }

    /// Publishes `table`'s usable entries when they changed since the last
    /// publication; returns whether it published.
    pub fn publish(&self, table: &mut NeighTable) -> bool {
        if !table.changed {
            return false;
        }
        table.changed = false;
        self.cell.publish(AdjacencyTable::of(table));
        true
    }

    /// A reader for one worker, with a ring of its own.
    pub fn reader(&mut self) -> NeighReader {
        let ring = Arc::new(UseRing::new(USE_RING_CAPACITY));
        self.rings.push(Arc::clone(&ring));
        NeighReader {
            cell: Arc::clone(&self.cell),
            handle: self.domain.register(),
            ring,
            reported: Default::default(),
            reported_len: Cell::new(0),
        }
    }

    /// Takes every worker's use reports into `table` (see the module
    /// documentation), returning what the table wants done.
    pub fn drain_uses(&self, now: u64, table: &mut NeighTable, router: &dyn Router) -> Vec<Action> {
        let mut out = Vec::new();
        let mut lost = 0;
        for ring in &self.rings {
            ring.drain(|link, addr| out.extend(table.used(now, link, addr, router)));
            lost += ring.lost();
        }
        table.stats.use_reports_lost = lost;
        out
    }
}

/// One worker's lock-free view of the adjacency table (`Send`, not
/// `Sync`: one per worker thread).
///
/// ```
/// use fibre_fib::{config, Fib};
/// use fibre_neigh::{FibRouter, NeighPublisher, NeighSettings, NeighTable};
/// let (fib, _) = config::apply_str(&Fib::new(), "r.conf",
///     "link add v0 type veth peer name v1\nneigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev v0 nud stale\n", false).unwrap();
/// let mut table = NeighTable::from_fib(NeighSettings::default(), &fib, 0);
/// let domain = fibre_rcu::Domain::new();
/// let mut publisher = NeighPublisher::new(&domain);
/// let mut reader = publisher.reader();
/// publisher.publish(&mut table);
/// let v0 = fib.link_by_name("v0").unwrap().index;
/// let adj = reader.lookup(v0, "10.0.0.2".parse().unwrap()).unwrap();
/// assert_eq!(adj.mac, [2, 0, 0, 0, 0, 2]);
/// reader.quiescent();
/// // The worker's use of a STALE entry starts its confirmation.
/// publisher.drain_uses(1_000, &mut table, &FibRouter::new(&fib));
/// assert_eq!(table.get(v0, "10.0.0.2".parse().unwrap()).unwrap().state, fibre_fib::NudState::Delay);
/// ```
pub struct NeighReader {
    cell: Arc<RcuCell<AdjacencyTable>>,
    handle: ReaderHandle,
    ring: Arc<UseRing>,
    reported: [Cell<u32>; REPORTED_PER_BURST],
    reported_len: Cell<usize>,
}

impl NeighReader {
    /// The adjacency of `addr` on `link`, if resolved; reports the use when
    /// the control side needs it (at most once per entry per burst). No
    /// lock, no allocation, no read-modify-write; the only writes go to
    /// this reader's own ring and fields.
    pub fn lookup(&self, link: u32, addr: IpAddr) -> Option<Adjacency> {
        let adjacency = {
            let guard = self.handle.read();
            self.cell.read(&guard).get(link, addr)
        }?;
        if adjacency.report_use() && !self.reported_this_burst(adjacency.slot) {
            self.ring.push(link, addr);
        }
        Some(adjacency)
    }

    /// Remembers `slot` as reported; true if it already was.
    fn reported_this_burst(&self, slot: u32) -> bool {
        let len = self.reported_len.get();
        if self.reported[..len].iter().any(|s| s.get() == slot) {
            return true;
        }
        if len < REPORTED_PER_BURST {
            self.reported[len].set(slot);
            self.reported_len.set(len + 1);
        }
        false
    }

    /// Ends a burst: a quiescent state for the RCU domain, and a fresh
    /// per-burst report filter.
    pub fn quiescent(&mut self) {
        self.reported_len.set(0);
        self.handle.quiescent();
    }

    /// Reports this reader's ring dropped.
    pub fn lost_reports(&self) -> u64 {
        self.ring.lost()
    }
}

impl std::fmt::Debug for NeighReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NeighReader")
            .field("id", &self.handle.id())
            .finish_non_exhaustive()
    }
}
