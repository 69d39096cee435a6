//! The neighbour table and its state machine (net/core/neighbour.c):
//! `__neigh_update` ([`NeighTable::update`]), `neigh_timer_handler`
//! ([`NeighTable::tick`]), `__neigh_event_send` ([`NeighTable::resolve`],
//! [`NeighTable::used`]), `neigh_alloc` with `neigh_forced_gc` (the bound),
//! `neigh_periodic_work` (collection of stale entries) and
//! `neigh_invalidate` with the families' `error_report`.
//!
//! Time is milliseconds passed in by the caller; nothing here sleeps or
//! reads a clock. Every step returns what it wants done as [`Action`]s.

use std::collections::{BTreeMap, VecDeque};
use std::net::IpAddr;

use fibre_fib::{Fib, LinkIndex, NudState};

use crate::router::Router;
use crate::settings::{NeighSettings, SeededRandom};

/// What a step of the control side wants done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Send this complete Ethernet frame on `link` (a solicitation, an ARP
    /// reply, a neighbour advertisement).
    Send {
        /// The link.
        link: u32,
        /// The frame, Ethernet header first.
        frame: Vec<u8>,
    },
    /// A packet that waited for its neighbour: send it on `link` to `mac`
    /// (the queue's packets come out in arrival order).
    Release {
        /// The link.
        link: u32,
        /// The neighbour's MAC: the frame's destination.
        mac: [u8; 6],
        /// The IP packet as queued.
        packet: Vec<u8>,
    },
    /// Resolution failed: the packet is dropped and its source gets the
    /// ICMP error named (`arp_error_report`: host unreachable;
    /// `ndisc_error_report`: address unreachable; both through
    /// `dst_link_failure`).
    Unreachable {
        /// The link the neighbour was on.
        link: u32,
        /// The IP packet as queued.
        packet: Vec<u8>,
        /// The error to send for it.
        icmp: IcmpError,
    },
    /// A packet dropped without an ICMP error.
    Dropped {
        /// The link.
        link: u32,
        /// The IP packet.
        packet: Vec<u8>,
        /// Why.
        reason: NeighDrop,
    },
}

/// The ICMP error for a packet whose neighbour could not be resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IcmpError {
    /// ICMP destination unreachable, code 1 (host unreachable).
    HostUnreachable,
    /// ICMPv6 destination unreachable, code 3 (address unreachable).
    AddressUnreachable,
}

/// Why a packet was dropped without an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NeighDrop {
    /// The oldest of a full pending queue (`SKB_DROP_REASON_NEIGH_QUEUEFULL`).
    QueueFull,
    /// No entry could be made: the table is full (`NEIGH_CREATEFAIL`).
    TableFull,
    /// The neighbour is FAILED and nothing would solicit it
    /// (`mcast_solicit` + `app_solicit` is 0: `NEIGH_FAILED`).
    Failed,
    /// The link does not resolve neighbours or is unknown.
    NoLink,
}

/// Counters (`struct neigh_statistics`, what `ip -s ntable` shows).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NeighStats {
    /// Entries made.
    pub allocs: u64,
    /// Entries freed.
    pub destroys: u64,
    /// Resolutions that failed.
    pub res_failed: u64,
    /// Packets dropped from full pending queues (`unres_discards`).
    pub unres_discards: u64,
    /// Entries refused because the table was full (`table_fulls`).
    pub table_fulls: u64,
    /// Forced collections run.
    pub forced_gc_runs: u64,
    /// Use reports from workers dropped because a ring was full.
    pub use_reports_lost: u64,
}

/// One entry (`struct neighbour`).
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub state: NudState,
    pub ha: [u8; 6],
    pub router: bool,
    /// `confirmed`; None: longer ago than any window (the kernel sets
    /// `jiffies - 2 * base_reachable_time`).
    pub confirmed: Option<u64>,
    pub updated: u64,
    pub used: u64,
    pub probes: u32,
    pub timer: Option<u64>,
    pub queue: VecDeque<Vec<u8>>,
    pub queue_bytes: usize,
    /// Made by hand or with a permanent state: not subject to collection
    /// (`exempt_from_gc`).
    pub exempt: bool,
    /// Creation order (the kernel's `gc_list` order).
    pub seq: u64,
}

/// `neigh_update`'s flags (`NEIGH_UPDATE_F_*`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct UpdateFlags {
    pub override_: bool,
    pub weak_override: bool,
    pub override_isrouter: bool,
    pub isrouter: bool,
    pub admin: bool,
}

/// One entry as it is shown (`ip neigh show`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeighView {
    /// The link.
    pub link: u32,
    /// The address.
    pub addr: IpAddr,
    /// The state.
    pub state: NudState,
    /// The MAC when the state is valid.
    pub lladdr: Option<[u8; 6]>,
    /// `NTF_ROUTER`.
    pub router: bool,
}

/// The ARP and ND tables of one router: entries by (link, address).
#[derive(Debug, Clone)]
pub struct NeighTable {
    pub(crate) settings: NeighSettings,
    rng: SeededRandom,
    pub(crate) entries: BTreeMap<(u32, IpAddr), Entry>,
    /// The reachable time now in force, per family (IPv4, IPv6).
    reachable_time: [u64; 2],
    last_rand: u64,
    next_gc: u64,
    last_flush: [u64; 2],
    seq: u64,
    pub(crate) stats: NeighStats,
    /// Entries changed since the workers' view was last built.
    pub(crate) changed: bool,
    /// Entries subject to collection per family (`gc_entries`).
    collectable: [usize; 2],
    /// The time of the last forced collection that freed nothing, and
    /// whether an entry has stopped running a timer since (only then can a
    /// second one at the same time free something).
    empty_gc_at: Option<u64>,
    timer_stopped: bool,
}

fn family_index(addr: &IpAddr) -> usize {
    usize::from(addr.is_ipv6())
}

impl NeighTable {
    /// An empty table.
    pub fn new(settings: NeighSettings) -> Self {
        let mut rng = SeededRandom::new(settings.seed);
        let reachable_time = [
            rng.reach_time(settings.base_reachable_time_ms),
            rng.reach_time(settings.base_reachable_time_ms),
        ];
        NeighTable {
            settings,
            rng,
            entries: BTreeMap::new(),
            reachable_time,
            last_rand: 0,
            next_gc: settings.gc_interval_ms,
            last_flush: [0; 2],
            seq: 0,
            stats: NeighStats::default(),
            changed: true,
            collectable: [0; 2],
            empty_gc_at: None,
            timer_stopped: false,
        }
    }

    /// A table holding the FIB's static entries as the kernel holds them
    /// right after the requests at `now` (`neigh_add`'s `__neigh_update`
    /// arms the timers of REACHABLE, DELAY and PROBE); run [`tick`](Self::tick)
    /// to move them on.
    pub fn from_fib(settings: NeighSettings, fib: &Fib, now: u64) -> Self {
        let mut table = NeighTable::new(settings);
        for n in fib.neighbours() {
            table.install_admin(now, n.link, n.addr, n.state, n.ha, n.router);
        }
        table
    }

    /// The settings.
    pub fn settings(&self) -> &NeighSettings {
        &self.settings
    }

    /// The counters.
    pub fn stats(&self) -> NeighStats {
        self.stats
    }

    /// The reachable time in force for `addr`'s family (drawn again every
    /// 300 s, as `neigh_periodic_work` does).
    pub fn reachable_time(&self, addr: &IpAddr) -> u64 {
        self.reachable_time[family_index(addr)]
    }

    /// Entries in the order fibre shows them (IPv4 before IPv6, by link
    /// and address within each).
    pub fn entries(&self) -> impl Iterator<Item = NeighView> + '_ {
        let view = |((link, addr), e): (&(u32, IpAddr), &Entry)| NeighView {
            link: *link,
            addr: *addr,
            state: e.state,
            lladdr: e.state.is_valid().then_some(e.ha),
            router: e.router,
        };
        let v4 = self.entries.iter().filter(|(k, _)| k.1.is_ipv4()).map(view);
        let v6 = self.entries.iter().filter(|(k, _)| k.1.is_ipv6()).map(view);
        v4.chain(v6)
    }

    /// One entry.
    pub fn get(&self, link: u32, addr: IpAddr) -> Option<NeighView> {
        self.entries().find(|v| v.link == link && v.addr == addr)
    }

    /// Entries per family that collection may free (`gc_entries`).
    fn gc_entries(&self, family: usize) -> usize {
        self.collectable[family]
    }

    /// How many packets wait in pending queues, over all entries.
    pub fn queued_packets(&self) -> usize {
        self.entries.values().map(|e| e.queue.len()).sum()
    }

    /// Brings an administrative request the FIB has just applied (`ip neigh
    /// add|replace|change|del|flush` on a running router) to this table:
    /// for one address, the entry the FIB now holds for it installed as
    /// `neigh_add` leaves it, or the table's entry removed when the FIB holds
    /// none (`neigh_delete`); for a flush (`addr` `None`), the link's
    /// entries removed but for PERMANENT and NOARP ones, as
    /// `ipneigh_list_or_flush` spares them. Packets queued on a removed
    /// entry are dropped with it.
    ///
    /// ```
    /// use fibre_fib::{config, Fib};
    /// use fibre_neigh::{NeighSettings, NeighTable};
    /// let (fib, _) = config::apply_str(&Fib::new(), "r.conf", "link add v0 type veth peer name v1\n", false).unwrap();
    /// let mut table = NeighTable::from_fib(NeighSettings::default(), &fib, 0);
    /// let (fib, _) = config::apply_str(&fib, "ctl", "neigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev v0\n", false).unwrap();
    /// let v0 = fib.link_by_name("v0").unwrap().index;
    /// let addr = "10.0.0.2".parse().unwrap();
    /// table.admin_request(5, &fib, v0, Some(addr));
    /// assert_eq!(table.get(v0, addr).unwrap().lladdr, Some([2, 0, 0, 0, 0, 2]));
    /// let (fib, _) = config::apply_str(&fib, "ctl", "neigh del 10.0.0.2 dev v0\n", false).unwrap();
    /// table.admin_request(6, &fib, v0, Some(addr));
    /// assert!(table.get(v0, addr).is_none());
    /// ```
    pub fn admin_request(&mut self, now: u64, fib: &Fib, link: LinkIndex, addr: Option<IpAddr>) {
        let Some(addr) = addr else {
            let doomed: Vec<(u32, IpAddr)> = self
                .entries
                .iter()
                .filter(|((l, _), e)| {
                    *l == link && !matches!(e.state, NudState::Permanent | NudState::Noarp)
                })
                .map(|(key, _)| *key)
                .collect();
            for (l, a) in doomed {
                self.remove_entry(l, a);
            }
            return;
        };
        match fib.neighbours().find(|n| n.link == link && n.addr == addr) {
            Some(n) => self.install_admin(now, n.link, n.addr, n.state, n.ha, n.router),
            None => self.remove_entry(link, addr),
        }
    }

    /// Removes one entry, keeping the collection counts.
    fn remove_entry(&mut self, link: LinkIndex, addr: IpAddr) {
        if let Some(old) = self.entries.remove(&(link, addr)) {
            if !old.exempt {
                self.collectable[family_index(&addr)] -= 1;
            }
            self.changed = true;
        }
    }

    /// Installs an entry as an administrative request leaves it.
    fn install_admin(
        &mut self,
        now: u64,
        link: LinkIndex,
        addr: IpAddr,
        state: NudState,
        ha: [u8; 6],
        router: bool,
    ) {
        // An invalid state (INCOMPLETE) leaves __neigh_update before any
        // timer is armed.
        let timer = if state.in_timer() && state.is_valid() {
            Some(if state == NudState::Reachable {
                now + self.reachable_time(&addr)
            } else {
                now
            })
        } else {
            None
        };
        self.seq += 1;
        let exempt = state == NudState::Permanent;
        if !exempt {
            self.collectable[family_index(&addr)] += 1;
        }
        if let Some(old) = self.entries.remove(&(link, addr)) {
            if !old.exempt {
                self.collectable[family_index(&addr)] -= 1;
            }
        }
        self.entries.insert(
            (link, addr),
            Entry {
                state,
                ha,
                router,
                confirmed: state.is_connected().then_some(now),
                updated: now,
                used: now,
                probes: 0,
                timer,
                queue: VecDeque::new(),
                queue_bytes: 0,
                exempt,
                seq: self.seq,
            },
        );
        self.changed = true;
    }

    /// `neigh_lookup`, or with `create` `__neigh_create` (`neigh_alloc`'s
    /// bound: past `gc_thresh3`, or past `gc_thresh2` 5 s after the last
    /// forced collection, collect first; still past `gc_thresh3`, refuse).
    /// Returns whether the entry exists after.
    pub(crate) fn lookup_or_create(
        &mut self,
        now: u64,
        link: u32,
        addr: IpAddr,
        create: bool,
    ) -> bool {
        if self.entries.contains_key(&(link, addr)) {
            return true;
        }
        if !create {
            return false;
        }
        let family = family_index(&addr);
        let entries = self.gc_entries(family);
        if entries >= self.settings.gc_thresh3
            || (entries >= self.settings.gc_thresh2 && now > self.last_flush[family] + 5_000)
        {
            let freed = self.forced_gc(now, family);
            if freed == 0 && entries >= self.settings.gc_thresh3 {
                self.stats.table_fulls += 1;
                return false;
            }
        }
        // arp_constructor / ndisc_constructor: multicast needs no resolution.
        let (state, ha) = match fibre_fib::multicast_mac(&addr) {
            Some(mac) => (NudState::Noarp, mac),
            None => (NudState::None, [0; 6]),
        };
        self.seq += 1;
        self.stats.allocs += 1;
        self.collectable[family] += 1;
        self.entries.insert(
            (link, addr),
            Entry {
                state,
                ha,
                router: false,
                confirmed: None,
                updated: now,
                used: now,
                probes: 0,
                timer: None,
                queue: VecDeque::new(),
                queue_bytes: 0,
                exempt: false,
                seq: self.seq,
            },
        );
        self.changed = true;
        true
    }

    /// `neigh_forced_gc`: frees, oldest first, entries nothing holds (no
    /// timer running) that are FAILED, NOARP, multicast or not updated in
    /// the last 5 s, until the table is down to `gc_thresh2`.
    fn forced_gc(&mut self, now: u64, family: usize) -> usize {
        // Nothing stopped its timer since a fruitless run at this same
        // time: nothing new could be freed (this keeps a flood of new
        // destinations from scanning the full table per packet).
        if self.empty_gc_at == Some(now) && !self.timer_stopped {
            return 0;
        }
        self.timer_stopped = false;
        self.stats.forced_gc_runs += 1;
        let max_clean = self
            .gc_entries(family)
            .saturating_sub(self.settings.gc_thresh2);
        let mut candidates: Vec<(u64, (u32, IpAddr))> = self
            .entries
            .iter()
            .filter(|(k, e)| {
                family_index(&k.1) == family
                    && !e.exempt
                    && e.timer.is_none()
                    && (matches!(e.state, NudState::Failed | NudState::Noarp)
                        || k.1.is_multicast()
                        || now.saturating_sub(e.updated) > 5_000)
            })
            .map(|(k, e)| (e.seq, *k))
            .collect();
        candidates.sort_unstable();
        let mut freed = 0;
        for (_, key) in candidates.into_iter().take(max_clean.max(1)) {
            self.remove(key);
            freed += 1;
        }
        self.last_flush[family] = now;
        self.empty_gc_at = (freed == 0).then_some(now);
        freed
    }

    fn remove(&mut self, key: (u32, IpAddr)) {
        if let Some(e) = self.entries.remove(&key) {
            if !e.exempt {
                self.collectable[family_index(&key.1)] -= 1;
            }
            self.stats.destroys += 1;
            self.changed = true;
        }
    }

    /// `neigh_update` (`__neigh_update`) of an existing entry; returns
    /// false where the kernel returns an error.
    pub(crate) fn update(
        &mut self,
        now: u64,
        key: (u32, IpAddr),
        lladdr: Option<[u8; 6]>,
        mut new: NudState,
        flags: UpdateFlags,
        out: &mut Vec<Action>,
    ) -> bool {
        let reachable = self.reachable_time(&key.1);
        let Some(e) = self.entries.get_mut(&key) else {
            return false;
        };
        let old = e.state;
        if !flags.admin && matches!(old, NudState::Noarp | NudState::Permanent) {
            return false;
        }
        if !new.is_valid() {
            e.timer = None;
            e.state = new;
            self.changed = true;
            self.timer_stopped = true;
            if matches!(old, NudState::Incomplete | NudState::Probe) && new == NudState::Failed {
                self.invalidate(key, out);
            }
            return true;
        }
        // Compare the new address with the cached one.
        let lladdr = match lladdr {
            Some(mac) => mac,
            None if old.is_valid() => e.ha,
            None => return false,
        };
        let same = old.is_valid() && lladdr == e.ha;
        if new.is_connected() {
            e.confirmed = Some(now);
        }
        let mut update_isrouter = flags.override_isrouter;
        let mut lladdr = lladdr;
        if old.is_valid() {
            if !same && !flags.override_ {
                update_isrouter = false;
                if flags.weak_override && old.is_connected() {
                    lladdr = e.ha;
                    new = NudState::Stale;
                } else {
                    return true;
                }
            } else if same && new == NudState::Stale && !flags.admin {
                new = old;
            }
        }
        let address_changes = lladdr != e.ha || !old.is_valid();
        if new != old || address_changes {
            e.updated = now;
        }
        if new != old {
            e.timer = None;
            self.timer_stopped = true;
            if new == NudState::Probe {
                e.probes = 0;
            }
            if new.in_timer() {
                e.timer = Some(if new == NudState::Reachable {
                    now + reachable
                } else {
                    now
                });
            }
            e.state = new;
        }
        if address_changes {
            e.ha = lladdr;
            if !new.is_connected() {
                e.confirmed = None;
            }
        }
        if update_isrouter {
            e.router = flags.isrouter;
        }
        self.changed = true;
        if new != old && !old.is_valid() {
            // The queue goes out now that the address is known.
            let mac = e.ha;
            let link = key.0;
            while let Some(packet) = e.queue.pop_front() {
                out.push(Action::Release { link, mac, packet });
            }
            e.queue_bytes = 0;
        }
        true
    }

    /// `neigh_invalidate`: every queued packet gets the family's error.
    fn invalidate(&mut self, key: (u32, IpAddr), out: &mut Vec<Action>) {
        self.stats.res_failed += 1;
        let icmp = if key.1.is_ipv4() {
            IcmpError::HostUnreachable
        } else {
            IcmpError::AddressUnreachable
        };
        if let Some(e) = self.entries.get_mut(&key) {
            while let Some(packet) = e.queue.pop_front() {
                out.push(Action::Unreachable {
                    link: key.0,
                    packet,
                    icmp,
                });
            }
            e.queue_bytes = 0;
        }
    }

    /// `neigh_max_probes`.
    fn max_probes(&self, state: NudState) -> u32 {
        let s = &self.settings;
        s.ucast_solicit
            + s.app_solicit
            + if state == NudState::Probe {
                s.mcast_resolicit
            } else {
                s.mcast_solicit
            }
    }

    /// A packet the worker could not send because `addr` on `link` has no
    /// usable entry (`neigh_resolve_output` -> `__neigh_event_send`): the
    /// entry is made if need be, and the packet either goes out at once
    /// (the entry is usable after all), waits (INCOMPLETE: the oldest
    /// queued packets make room, counted) with a solicitation sent, or is
    /// dropped.
    pub fn resolve(
        &mut self,
        now: u64,
        link: u32,
        addr: IpAddr,
        packet: Vec<u8>,
        router: &dyn Router,
    ) -> Vec<Action> {
        let mut out = Vec::new();
        if router.mac(link).is_none() {
            out.push(Action::Dropped {
                link,
                packet,
                reason: NeighDrop::NoLink,
            });
            return out;
        }
        if !self.lookup_or_create(now, link, addr, true) {
            out.push(Action::Dropped {
                link,
                packet,
                reason: NeighDrop::TableFull,
            });
            return out;
        }
        self.event_send(now, (link, addr), Some(packet), router, &mut out);
        out
    }

    /// A worker used `addr` on `link` (see [`crate::UseRing`]):
    /// `neigh_event_send` without a packet. A STALE entry starts its
    /// confirmation (DELAY, then PROBE); any entry records the use.
    pub fn used(&mut self, now: u64, link: u32, addr: IpAddr, router: &dyn Router) -> Vec<Action> {
        let mut out = Vec::new();
        if self.entries.contains_key(&(link, addr)) {
            self.event_send(now, (link, addr), None, router, &mut out);
        }
        out
    }

    /// An upper layer confirmed the neighbour (`neigh_confirm`, as TCP's
    /// acknowledgements do through `dst_confirm_neigh`).
    pub fn confirm(&mut self, now: u64, link: u32, addr: IpAddr) {
        if let Some(e) = self.entries.get_mut(&(link, addr)) {
            e.confirmed = Some(now);
        }
    }

    /// `neigh_event_send_probe` with `immediate_ok`.
    fn event_send(
        &mut self,
        now: u64,
        key: (u32, IpAddr),
        packet: Option<Vec<u8>>,
        router: &dyn Router,
        out: &mut Vec<Action>,
    ) {
        let settings = self.settings;
        let Some(e) = self.entries.get_mut(&key) else {
            return;
        };
        e.used = now;
        if matches!(
            e.state,
            NudState::Permanent
                | NudState::Noarp
                | NudState::Reachable
                | NudState::Delay
                | NudState::Probe
        ) {
            if let Some(packet) = packet {
                out.push(Action::Release {
                    link: key.0,
                    mac: e.ha,
                    packet,
                });
            }
            return;
        }
        let mut immediate_probe = false;
        if !matches!(e.state, NudState::Stale | NudState::Incomplete) {
            if settings.mcast_solicit + settings.app_solicit > 0 {
                e.probes = settings.ucast_solicit;
                e.state = NudState::Incomplete;
                e.updated = now;
                immediate_probe = true;
                e.timer = Some(now + settings.retrans_time_ms.max(10));
                self.changed = true;
            } else {
                e.state = NudState::Failed;
                e.updated = now;
                self.changed = true;
                self.timer_stopped = true;
                if let Some(packet) = packet {
                    out.push(Action::Dropped {
                        link: key.0,
                        packet,
                        reason: NeighDrop::Failed,
                    });
                }
                return;
            }
        } else if e.state == NudState::Stale {
            e.state = NudState::Delay;
            e.updated = now;
            e.timer = Some(now + settings.delay_first_probe_time_ms);
            self.changed = true;
        }
        match (e.state, packet) {
            (NudState::Incomplete, Some(packet)) => {
                // Room for the packet: the oldest go (`unres_discards`).
                while !e.queue.is_empty()
                    && (e.queue_bytes + packet.len() > settings.unres_qlen_bytes
                        || e.queue.len() + 1 > settings.unres_qlen)
                {
                    if let Some(old) = e.queue.pop_front() {
                        e.queue_bytes -= old.len();
                        self.stats.unres_discards += 1;
                        out.push(Action::Dropped {
                            link: key.0,
                            packet: old,
                            reason: NeighDrop::QueueFull,
                        });
                    }
                }
                e.queue_bytes += packet.len();
                e.queue.push_back(packet);
            }
            (_, Some(packet)) => {
                // DELAY (was STALE): the address is used meanwhile.
                out.push(Action::Release {
                    link: key.0,
                    mac: e.ha,
                    packet,
                });
            }
            (_, None) => {}
        }
        if immediate_probe {
            self.probe(now, key, router, out);
        }
    }

    /// `neigh_probe`: a solicitation (with the newest queued packet, whose
    /// source the family's `solicit` may use), one more probe counted.
    fn probe(&mut self, _now: u64, key: (u32, IpAddr), router: &dyn Router, out: &mut Vec<Action>) {
        let settings = self.settings;
        let Some(e) = self.entries.get_mut(&key) else {
            return;
        };
        let probes = e.probes;
        e.probes += 1;
        let newest_source = e.queue.back().and_then(|p| crate::packet_source(p));
        let ha = e.ha;
        // probes < ucast_solicit: unicast to the cached address; then
        // app_solicit (no daemon: nothing sent); then broadcast/multicast.
        let unicast = if probes < settings.ucast_solicit {
            Some(ha)
        } else if probes < settings.ucast_solicit + settings.app_solicit {
            return;
        } else {
            None
        };
        if let Some(frame) = crate::solicit::solicitation(key, unicast, newest_source, router) {
            out.push(Action::Send { link: key.0, frame });
        }
    }

    /// Runs every timer due at `now` (`neigh_timer_handler`) and the
    /// periodic collection (`neigh_periodic_work`), in key order.
    pub fn tick(&mut self, now: u64, router: &dyn Router) -> Vec<Action> {
        let mut out = Vec::new();
        let due: Vec<(u32, IpAddr)> = self
            .entries
            .iter()
            .filter(|(_, e)| e.timer.is_some_and(|t| t <= now))
            .map(|(k, _)| *k)
            .collect();
        for key in due {
            self.timer_handler(now, key, router, &mut out);
        }
        if now >= self.last_rand + 300_000 {
            self.last_rand = now;
            for family in 0..2 {
                self.reachable_time[family] =
                    self.rng.reach_time(self.settings.base_reachable_time_ms);
            }
        }
        if now >= self.next_gc {
            self.next_gc = now + self.settings.gc_interval_ms;
            self.periodic_gc(now);
        }
        out
    }

    /// The time of the next timer, if any runs (for a caller that sleeps).
    pub fn next_timer(&self) -> Option<u64> {
        self.entries.values().filter_map(|e| e.timer).min()
    }

    fn timer_handler(
        &mut self,
        now: u64,
        key: (u32, IpAddr),
        router: &dyn Router,
        out: &mut Vec<Action>,
    ) {
        let settings = self.settings;
        let reachable = self.reachable_time(&key.1);
        let max_probes_incomplete = self.max_probes(NudState::Incomplete);
        let max_probes_probe = self.max_probes(NudState::Probe);
        let Some(e) = self.entries.get_mut(&key) else {
            return;
        };
        let state = e.state;
        e.timer = None;
        self.timer_stopped = true;
        if !state.in_timer() {
            return;
        }
        let retrans = settings.retrans_time_ms.max(10);
        let mut next = now + 1_000;
        let within = |since: Option<u64>, window: u64| since.is_some_and(|t| now <= t + window);
        match state {
            NudState::Reachable => {
                if within(e.confirmed, reachable) {
                    next = e.confirmed.map_or(now, |c| c + reachable);
                } else if now <= e.used + settings.delay_first_probe_time_ms {
                    e.state = NudState::Delay;
                    e.updated = now;
                    next = now + settings.delay_first_probe_time_ms;
                } else {
                    e.state = NudState::Stale;
                    e.updated = now;
                }
            }
            NudState::Delay => {
                if within(e.confirmed, settings.delay_first_probe_time_ms) {
                    e.state = NudState::Reachable;
                    e.updated = now;
                    next = e.confirmed.map_or(now, |c| c + reachable);
                } else {
                    e.state = NudState::Probe;
                    e.updated = now;
                    e.probes = 0;
                    next = now + retrans;
                }
            }
            _ => next = now + retrans,
        }
        self.changed = true;
        let max = if e.state == NudState::Probe {
            max_probes_probe
        } else {
            max_probes_incomplete
        };
        if matches!(e.state, NudState::Incomplete | NudState::Probe) && e.probes >= max {
            e.state = NudState::Failed;
            self.invalidate(key, out);
            return;
        }
        if e.state.in_timer() {
            e.timer = Some(next.max(now + 10));
        }
        if matches!(e.state, NudState::Incomplete | NudState::Probe) {
            self.probe(now, key, router, out);
        }
    }

    /// `neigh_periodic_work`: in a table (family) of at least `gc_thresh1` entries, frees
    /// those nothing holds that are FAILED or unused for `gc_stale_time`
    /// (permanent ones and those with a timer stay).
    fn periodic_gc(&mut self, now: u64) {
        let stale = self.settings.gc_stale_time_ms;
        let mut per_family = [0usize; 2];
        for key in self.entries.keys() {
            per_family[family_index(&key.1)] += 1;
        }
        let busy = per_family.map(|n| n >= self.settings.gc_thresh1);
        let gone: Vec<(u32, IpAddr)> = self
            .entries
            .iter_mut()
            .filter_map(|(k, e)| {
                if !busy[family_index(&k.1)] || e.state == NudState::Permanent || e.state.in_timer()
                {
                    return None;
                }
                if let Some(c) = e.confirmed {
                    if e.used < c && c <= now {
                        e.used = c;
                    }
                }
                (e.state == NudState::Failed || now >= e.used + stale).then_some(*k)
            })
            .collect();
        for key in gone {
            self.remove(key);
        }
    }
}
