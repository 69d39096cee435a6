//! One routing table of one family: an LPM index from prefix to a slot in
//! an arena of prefix entries, each holding that prefix's routes in the
//! kernel's order.
//!
//! The kernel's `fib_trie` keeps, per leaf, a list of aliases ordered by
//! TOS (descending) then priority (ascending); IPv6's `fib6_node` keeps its
//! routes ordered by metric. [`PrefixEntry::routes`] is that list; the
//! operations in `route_ops` decide where a new route goes.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::net::IpAddr;
use std::sync::Arc;

use ecow::EcoVec;
use fibre_lpm::{Key, Poptrie};
use fibre_rcu::TwoLevelChunks;

use crate::fib::Fib;
use crate::types::{Family, LinkIndex, Prefix, Protocol, Route, RouteType};

/// The routes of one prefix, in the kernel's order.
///
/// One cache line: a lookup reads the entry the LPM named, and with
/// [`PrefixEntry::single`] it needs nothing else (the routes and their paths
/// live in two more heap blocks, two more dependent cache misses). The
/// IPv6 data path reads the summary from the table's side array instead
/// (see [`FamilyTable::summary_at`]) and this line only without one.
///
/// Cloning one is shallow: the routes are one shared, reference-counted
/// vector, so the copy-on-write arena (whose chunk copies clone every
/// entry of a chunk, once per publication of a shared FIB) copies 64 bytes
/// and bumps one reference count per entry instead of allocating each
/// entry's routes and their paths again; a change copies that one entry's
/// routes if a published version shares them, and changes them in place
/// if none does ([`PrefixEntry::routes_mut`]), so a prefix that gains a
/// route per link (fe80::/64 on 10,000 links) grows by appends, not by a
/// copy of every route per link.
///
/// The vector is [`ecow::EcoVec`] (typst's, well kept, small): a pointer
/// to the elements and a length, like a slice, with the reference count
/// and capacity in front of the elements. So a reader's `&routes[0]` is
/// the pointer itself, the same one dependent load a `Vec` or an
/// `Arc<[Route]>` took (an `Arc<Vec<Route>>` would add one), and, unlike
/// an `Arc<[Route]>`, a vector no other version holds can grow in place.
#[derive(Debug, Clone)]
#[repr(align(64))]
pub(crate) struct PrefixEntry {
    /// The prefix all routes share.
    pub prefix: Prefix,
    /// What the data path reads of the one route with one live path,
    /// copied here; None for any other entry, and while the routes may have
    /// changed since it was made (see [`FamilyTable::settle`]).
    single: Option<SinglePath>,
    /// Routes in lookup (and dump) order, shared with every version's copy
    /// of this entry until one of them changes (see [`RoutesMut`]).
    pub routes: EcoVec<Route>,
}

// One line per entry: the summary must not push the routes onto a second one.
const _: () = assert!(
    std::mem::size_of::<PrefixEntry>() == 64,
    "a PrefixEntry is one cache line, so a lookup reads one line per entry; \
     if this fires, move the new field into `routes` (the Route) or shrink SinglePath"
);
const _: () = assert!(
    std::mem::size_of::<Option<PrefixEntry>>() == 64,
    "an arena slot (Option<PrefixEntry>) is one line too: the None must fit a niche; \
     if this fires, keep a niche-bearing field (the Arc's non-null pointer) in PrefixEntry"
);
// The routes' pointer is a fat one (address and length, no header to
// read first): a `Arc<Vec<Route>>` would add a dependent load per lookup.
const _: () = assert!(
    std::mem::size_of::<EcoVec<Route>>() == 2 * std::mem::size_of::<usize>(),
    "PrefixEntry::routes must be a pointer to the elements and a length, so that a lookup's \
     `&routes[0]` takes one dependent load; if this fires, store an `EcoVec<Route>` again"
);

/// An entry whose only route has one path, alive and on a device (and, for
/// IPv4, no TOS: it matches every flow's): what `select_v6` / `try_route`
/// and the data paths would read from that route and path. The route's
/// scope does not fit the line: IPv4 lookups use the summary only with a
/// flow of scope universe, which every route passes. Most prefixes of
/// a BGP table are such entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct SinglePath {
    /// The path's gateway of the entry's family as the data path reports it
    /// (0: none, or one of the other family); an IPv4 one in the last 4 bytes.
    gateway: [u8; 16],
    /// The path's device (entries with larger ifindexes get no summary).
    dev: u16,
    /// The route's cache class.
    pub cache_class: u16,
    /// The route's type.
    pub kind: RouteType,
    /// The route's protocol.
    pub protocol: Protocol,
}

// The side array's summaries: 22 bytes each, a few per table.
const _: () = assert!(
    std::mem::size_of::<SinglePath>() == 22,
    "SinglePath is 22 bytes so that it fits beside the prefix in PrefixEntry's line and the \
     side array stays small; if this fires, shrink the new field or move it to Route"
);

impl SinglePath {
    /// The summary of `routes` (one entry's), if they qualify.
    fn of(routes: &[Route]) -> Option<SinglePath> {
        let [route] = routes else {
            return None;
        };
        let [nh] = route.nexthops.as_slice() else {
            return None;
        };
        // A TOS route matches only some flows: left to the routes' own
        // path, as is a nat route that lo makes a reject one.
        if nh.flags.dead
            || route.tos != 0
            || crate::read::lookup::rejected_on_lo_v6(route.kind, route, 0)
        {
            return None;
        }
        let dev = u16::try_from(nh.dev?).ok()?;
        let gateway = match (route.family(), nh.gateway) {
            (Family::V6, Some(IpAddr::V6(g))) => g.octets(),
            (Family::V4, Some(IpAddr::V4(g))) => u128::from(u32::from(g)).to_be_bytes(),
            _ => [0; 16],
        };
        Some(SinglePath {
            gateway,
            dev,
            cache_class: route.cache_class,
            kind: route.kind,
            protocol: route.protocol,
        })
    }

    /// The path's device.
    #[inline]
    pub fn dev(&self) -> LinkIndex {
        LinkIndex::from(self.dev)
    }

    /// The path's IPv6 gateway as a host-order integer, 0 without one.
    #[inline]
    pub fn gateway_v6(&self) -> u128 {
        u128::from_be_bytes(self.gateway)
    }

    /// The path's IPv4 gateway in host order, 0 without one (or with an
    /// IPv6 one, which the IPv4 data path reports as none too).
    #[inline]
    pub fn gateway_v4(&self) -> u32 {
        u32::from_be_bytes([
            self.gateway[12],
            self.gateway[13],
            self.gateway[14],
            self.gateway[15],
        ])
    }
}

impl PrefixEntry {
    /// The summary of an entry whose one route has one live path.
    #[inline]
    pub fn single(&self) -> Option<&SinglePath> {
        self.single.as_ref()
    }

    /// The routes, for a change: changed in place when no other version
    /// holds them, else copied at the first change (a look that changes
    /// nothing keeps sharing them). Callers clear the entry's summary
    /// first (see [`FamilyTable::settle`]).
    pub fn routes_mut(&mut self) -> RoutesMut<'_> {
        RoutesMut {
            stored: &mut self.routes,
        }
    }

    /// Applies `keep` to every route, dropping those it returns false
    /// for. When no other version holds the routes, they are changed in
    /// place; when one does, they are copied, and the copy is kept only if
    /// `keep` changed or dropped a route: a bulk change (a link going
    /// down, which visits every route) copies no entry it leaves alone.
    pub fn retain_routes(&mut self, keep: &mut impl FnMut(&mut Route) -> bool) {
        if self.routes.is_unique() {
            self.routes.retain(keep);
            return;
        }
        let mut copy = self.routes.to_vec();
        copy.retain_mut(keep);
        if copy[..] != self.routes[..] {
            self.routes = EcoVec::from(copy);
        }
    }
}

/// An entry's routes handed out for change (copy-on-write per entry, see
/// [`PrefixEntry::routes_mut`]); versions published before keep theirs.
pub(crate) struct RoutesMut<'a> {
    stored: &'a mut EcoVec<Route>,
}

impl RoutesMut<'_> {
    /// Inserts `route` at `index`, shifting the later ones.
    pub fn insert(&mut self, index: usize, route: Route) {
        self.stored.insert(index, route);
    }

    /// Removes and returns the route at `index`.
    pub fn remove(&mut self, index: usize) -> Route {
        self.stored.remove(index)
    }
}

#[cfg(test)]
impl RoutesMut<'_> {
    /// Appends `route`.
    pub fn push(&mut self, route: Route) {
        self.stored.push(route);
    }

    /// Removes the last route.
    pub fn pop(&mut self) -> Option<Route> {
        self.stored.pop()
    }

    /// Removes every route.
    pub fn clear(&mut self) {
        self.stored.clear();
    }
}

impl std::ops::Deref for RoutesMut<'_> {
    type Target = [Route];

    fn deref(&self) -> &[Route] {
        self.stored
    }
}

impl std::ops::DerefMut for RoutesMut<'_> {
    fn deref_mut(&mut self) -> &mut [Route] {
        self.stored.make_mut()
    }
}

/// The prefixes of one family in one table.
#[derive(Debug, Clone)]
pub(crate) struct FamilyTable<K: Key> {
    /// Prefix -> arena slot.
    index: Poptrie<K, u32>,
    /// Arena of prefix entries; `None` slots are free. On copy-on-write
    /// leaves under a copy-on-write directory, so that a clone (one per
    /// publication of a shared FIB) copies the top of the directory, and a
    /// change after it copies only the leaf and group it touches (see
    /// [`ENTRY_LEAF`]).
    entries: TwoLevelChunks<Option<PrefixEntry>, ENTRY_LEAF, ENTRY_GROUP>,
    /// Per slot of `entries` (same length): 1 + the index in `summaries`
    /// of the entry's [`PrefixEntry::single`], 0 for none. The IPv6 data
    /// path reads this instead of the entry: 2 bytes a slot (0.5 MB for a
    /// full table, mostly cache resident) instead of the entry's 64-byte
    /// line, a cache miss per lookup with a 16 MB arena.
    /// On copy-on-write leaves of 1,024 slots (2 KiB) for the same reason
    /// as `entries`.
    summary_of: TwoLevelChunks<u16, SUMMARY_LEAF, SUMMARY_GROUP>,
    /// The distinct summaries `summary_of` names: few (one per gateway,
    /// device, type and class), so at most [`MAX_SUMMARIES`]; an entry whose
    /// summary does not fit any more has none there (only slower).
    /// Shared between clones (copied whole when a new summary is filed,
    /// which is rare: the list is short and only grows).
    summaries: Arc<Vec<SinglePath>>,
    /// `summaries` -> its index, to file each distinct summary once.
    summary_ids: Arc<HashMap<SinglePath, u16, BuildHasherDefault<KeyHasher>>>,
    /// Free slots of `entries`, reused first (a persistent vector: a clone
    /// shares it).
    free: imbl::Vector<u32>,
    /// The full-length prefixes (/32, /128) of `index` -> their slots. Such
    /// a prefix is the longest match of its one address, found here by one
    /// hash probe instead of a walk down every level of the LPM (18 nodes
    /// for an IPv6 /128: what an input lookup to one of our addresses
    /// cost in table local). Shared between clones and copied whole when
    /// a host prefix comes or goes: a lookup reads it through one pointer,
    /// as fast as a map of its own.
    hosts: Arc<HashMap<K, u32, BuildHasherDefault<KeyHasher>>>,
    /// Every prefix of `index` -> its slot. Only the writer uses it:
    /// finding a prefix's entry is one probe of a hash trie (a few cache
    /// misses) instead of a search of the LPM's RIB, done two to four times
    /// per route command. A persistent map (imbl's HAMT, Bagwell's "Ideal
    /// Hash Trees", 2001), so that a clone shares it and a change copies
    /// one path.
    exact: imbl::GenericHashMap<
        Prefix,
        u32,
        BuildHasherDefault<KeyHasher>,
        imbl::shared_ptr::DefaultSharedPtr,
    >,
    /// The slot whose routes were last handed out mutably: its summary
    /// was cleared then and is made again by the next `&mut` call.
    unsettled: Option<u32>,
    /// Every entry was handed out mutably (`entries_mut`).
    all_unsettled: bool,
    /// Per slot holding many routes: a fingerprint of each of its routes
    /// (more is harmless), so that [`FamilyTable::insert_unless_same`]
    /// knows a route is new without comparing it with every route there.
    /// Dropped for a slot whose routes are handed out mutably. Shared
    /// between clones and copied on change: only slots with many routes
    /// have fingerprints, so they are few.
    fingerprints: Arc<HashMap<u32, Fingerprints, BuildHasherDefault<KeyHasher>>>,
}

/// What [`FamilyTable::fingerprints`] knows of one slot's routes.
#[derive(Debug, Clone)]
struct Fingerprints {
    /// A fingerprint of each route.
    prints: HashSet<u64, BuildHasherDefault<KeyHasher>>,
    /// Whether the routes are in the order `insert_unless_same` was given.
    in_order: bool,
}

/// From how many routes a slot keeps [`FamilyTable::fingerprints`]: below
/// it, comparing with each route costs less than the set.
const FINGERPRINTED_FROM: usize = 16;

/// The most distinct summaries a [`FamilyTable`] files for its side array
/// (what a `u16` index with 0 for "none" can name). They are forgotten
/// only when every entry is summarized again (`entries_mut`), so churn
/// through many gateways fills them; entries then just get no side copy.
const MAX_SUMMARIES: usize = u16::MAX as usize;

/// Entries per leaf of [`FamilyTable::entries`], and leaves per group of
/// its directory: a route change after a publication copies one leaf (64
/// entries, 4 KiB, each entry's clone one reference-count increment of
/// its route list) and one group (64 leaf pointers), and a publication
/// copies one pointer per group: 62 for a full IPv6 table (246k
/// prefixes), 256 for IPv4 (1M). With one level of 256-entry chunks a
/// full-speed batch of 1,024 random changes copied two thirds of the
/// IPv6 arena, and a publication 960 pointers (their counts a cache miss
/// each, again when the version is dropped).
const ENTRY_LEAF: usize = 64;
const ENTRY_GROUP: usize = 64;

/// Slots per leaf of [`FamilyTable::summary_of`] (2 KiB leaves) and leaves
/// per group.
const SUMMARY_LEAF: usize = 1024;
const SUMMARY_GROUP: usize = 64;

impl<K: Key> Default for FamilyTable<K> {
    fn default() -> Self {
        Self {
            index: Poptrie::new(),
            entries: TwoLevelChunks::new(None),
            summary_of: TwoLevelChunks::new(0),
            summaries: Arc::default(),
            summary_ids: Arc::default(),
            free: imbl::Vector::new(),
            hosts: Arc::default(),
            exact: imbl::GenericHashMap::default(),
            unsettled: None,
            all_unsettled: false,
            fingerprints: Arc::default(),
        }
    }
}

fn key_of<K: Key>(prefix: &Prefix) -> K {
    K::from_u128(prefix.key())
}

impl<K: Key> FamilyTable<K> {
    /// Makes the summaries cleared by earlier `&mut` calls again: their
    /// borrows have ended, since this takes `&mut self`. Until then the
    /// entries have none, so a lookup takes the routes' own path (the same
    /// answer, only slower).
    fn settle(&mut self) {
        if let Some(slot) = self.unsettled.take() {
            self.summarize(slot);
        }
        if std::mem::take(&mut self.all_unsettled) {
            // Every summary is made again: the filed ones are renumbered,
            // dropping those no entry uses any more.
            self.summaries = Arc::default();
            self.summary_ids = Arc::default();
            for slot in 0..self.entries.len() as u32 {
                self.summarize(slot);
            }
        }
    }

    /// Makes the summary of the entry at `slot` (if live) and its copy in
    /// the side array.
    fn summarize(&mut self, slot: u32) {
        let Some(Some(e)) = self.entries.get(slot as usize) else {
            return;
        };
        let single = SinglePath::of(&e.routes);
        if e.single != single {
            if let Ok(Some(e)) = self.entries.get_mut(slot as usize) {
                e.single = single;
            }
        }
        let id = match single {
            None => 0,
            Some(s) => match self.summary_ids.get(&s) {
                Some(&i) => i + 1,
                None if self.summaries.len() < MAX_SUMMARIES => {
                    let i = self.summaries.len() as u16;
                    Arc::make_mut(&mut self.summaries).push(s);
                    Arc::make_mut(&mut self.summary_ids).insert(s, i);
                    i + 1
                }
                None => 0,
            },
        };
        if self.summary_of.get(slot as usize) != Some(&id) {
            let _ = self.summary_of.set(slot as usize, id);
        }
    }

    /// The slot of exactly this prefix.
    fn slot_of(&self, prefix: &Prefix) -> Option<u32> {
        self.exact.get(prefix).copied()
    }

    /// The live entry at `slot`, mutably (its chunk copied first if a
    /// clone shares it).
    fn live_mut(&mut self, slot: u32) -> &mut PrefixEntry {
        match self.entries.get_mut(slot as usize) {
            Ok(Some(entry)) => entry,
            _ => unreachable!("the index points at live slots"),
        }
    }

    /// Forgets the fingerprints of `slot` (its routes may change), without
    /// copying the shared map when it has none for it.
    fn forget_fingerprints(&mut self, slot: u32) {
        if self.fingerprints.contains_key(&slot) {
            Arc::make_mut(&mut self.fingerprints).remove(&slot);
        }
    }

    /// The entry of exactly this prefix.
    pub fn get(&self, prefix: &Prefix) -> Option<&PrefixEntry> {
        let slot = self.slot_of(prefix)?;
        self.entry_at(slot)
    }

    /// The routes of exactly this prefix, created empty when absent.
    pub fn routes_mut(&mut self, prefix: &Prefix) -> RoutesMut<'_> {
        let slot = self.slot_to_change(prefix);
        // The caller may change the routes: their fingerprints are made again.
        self.forget_fingerprints(slot);
        self.live_mut(slot).routes_mut()
    }

    /// Adds `route` to the routes of `prefix` (created when absent) after
    /// every route whose `order` is not greater than its own (before the
    /// first greater one), unless a route `same` as it is there; true when
    /// added. `fingerprint` must give routes that are `same` equal values.
    ///
    /// An entry with many routes (the kernel's routes of a prefix every link
    /// has, such as fe80::/64, one per link) keeps their fingerprints, so a
    /// new route is compared only with routes whose fingerprint it shares,
    /// and whether the routes are in `order`, so its place is found by
    /// bisection: the same place a scan from the front finds.
    pub fn insert_unless_same<O: Ord>(
        &mut self,
        prefix: &Prefix,
        route: Route,
        same: impl Fn(&Route, &Route) -> bool,
        fingerprint: impl Fn(&Route) -> u64,
        order: impl Fn(&Route) -> O,
    ) -> bool {
        let slot = self.slot_to_change(prefix);
        let fingerprints = &mut self.fingerprints;
        let entry = match self.entries.get_mut(slot as usize) {
            Ok(Some(entry)) => entry,
            _ => unreachable!("the index points at live slots"),
        };
        let routes = &entry.routes[..];
        let key = order(&route);
        let scan = |routes: &[Route]| {
            routes
                .iter()
                .position(|r| order(r) > key)
                .unwrap_or(routes.len())
        };
        let at = if routes.len() < FINGERPRINTED_FROM {
            if routes.iter().any(|r| same(r, &route)) {
                return false;
            }
            scan(routes)
        } else {
            let known = Arc::make_mut(fingerprints)
                .entry(slot)
                .or_insert_with(|| Fingerprints {
                    prints: routes.iter().map(&fingerprint).collect(),
                    in_order: routes.windows(2).all(|w| order(&w[0]) <= order(&w[1])),
                });
            let print = fingerprint(&route);
            if known.prints.contains(&print) && routes.iter().any(|r| same(r, &route)) {
                return false;
            }
            known.prints.insert(print);
            if known.in_order {
                // Inserting before the first greater route keeps the order.
                routes.partition_point(|r| order(r) <= key)
            } else {
                scan(routes)
            }
        };
        entry.routes_mut().insert(at, route);
        true
    }

    /// The slot of `prefix`, made when absent, its summary cleared (its
    /// routes are about to change).
    fn slot_to_change(&mut self, prefix: &Prefix) -> u32 {
        self.settle();
        let slot = match self.slot_of(prefix) {
            Some(slot) => slot,
            None => {
                let entry = PrefixEntry {
                    prefix: *prefix,
                    single: None,
                    routes: EcoVec::new(),
                };
                let slot = match self.free.pop_back() {
                    Some(slot) => {
                        let _ = self.entries.set(slot as usize, Some(entry));
                        slot
                    }
                    None => {
                        self.entries.push(Some(entry));
                        self.summary_of.push(0);
                        (self.entries.len() - 1) as u32
                    }
                };
                let key = key_of::<K>(prefix);
                self.index
                    .insert(key, prefix.len(), slot)
                    .expect("a Prefix is always a valid LPM key");
                if prefix.len() == K::BITS {
                    Arc::make_mut(&mut self.hosts).insert(key, slot);
                }
                self.exact.insert(*prefix, slot);
                slot
            }
        };
        self.unsettled = Some(slot);
        self.live_mut(slot).single = None;
        if self.summary_of.get(slot as usize) != Some(&0) {
            let _ = self.summary_of.set(slot as usize, 0);
        }
        slot
    }

    /// Drops the entry of `prefix` when it holds no route any more.
    pub fn prune(&mut self, prefix: &Prefix) {
        self.settle();
        if let Some(slot) = self.slot_of(prefix) {
            let empty = self.entry_at(slot).is_none_or(|e| e.routes.is_empty());
            if empty {
                let key = key_of::<K>(prefix);
                let _ = self.index.remove(key, prefix.len());
                if prefix.len() == K::BITS {
                    Arc::make_mut(&mut self.hosts).remove(&key);
                }
                self.exact.remove(prefix);
                let _ = self.entries.set(slot as usize, None);
                let _ = self.summary_of.set(slot as usize, 0);
                self.forget_fingerprints(slot);
                self.free.push_back(slot);
            }
        }
    }

    /// Entries whose prefix contains `addr`, longest first (for backtracking).
    pub fn matches(&self, addr: K) -> impl Iterator<Item = &PrefixEntry> + '_ {
        self.index
            .matches(addr)
            .filter_map(move |(_, _, slot)| self.entry_at(slot))
    }

    /// The entry of the longest prefix containing `addr` (the LPM fast path).
    #[inline]
    pub fn longest(&self, addr: K) -> Option<&PrefixEntry> {
        self.entry_at(self.longest_slot(addr)?)
    }

    /// The slot of the longest prefix containing `addr`: what
    /// [`FamilyTable::longest`] reads, without reading the entry.
    #[inline]
    pub fn longest_slot(&self, addr: K) -> Option<u32> {
        if !self.hosts.is_empty() {
            if let Some(&slot) = self.hosts.get(&addr) {
                return Some(slot);
            }
        }
        self.index.lookup(addr)
    }

    /// [`FamilyTable::longest_slot`] of every address of `addrs` into the
    /// same position of `out`: each full-length prefix found by its hash
    /// probe, every other address walked down the LPM together with the
    /// rest ([`Poptrie::lookup_batch`]'s lockstep walk, whose cache misses
    /// overlap). The same answers as one `longest_slot` per address;
    /// allocates nothing.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn longest_slots(&self, addrs: &[K], out: &mut [Option<u32>]) {
        assert_eq!(
            addrs.len(),
            out.len(),
            "longest_slots: slices differ in length"
        );
        if self.hosts.is_empty() {
            self.index.lookup_batch(addrs, out);
            return;
        }
        // The addresses no host prefix answers, walked in groups of this many.
        const GROUP: usize = 64;
        let mut walk = [K::default(); GROUP];
        let mut walked = [None; GROUP];
        let mut at = [0usize; GROUP];
        for (addrs, out) in addrs.chunks(GROUP).zip(out.chunks_mut(GROUP)) {
            let mut n = 0;
            for (i, (addr, slot)) in addrs.iter().zip(out.iter_mut()).enumerate() {
                match self.hosts.get(addr) {
                    Some(&host) => *slot = Some(host),
                    None => {
                        walk[n] = *addr;
                        at[n] = i;
                        n += 1;
                    }
                }
            }
            self.index.lookup_batch(&walk[..n], &mut walked[..n]);
            for (&i, &slot) in at[..n].iter().zip(&walked[..n]) {
                out[i] = slot;
            }
        }
    }

    /// Starts fetching the entry at `slot` (a hint, for a burst that reads
    /// the entries of many slots next: their cache misses then overlap
    /// instead of coming one after another).
    #[inline(always)]
    pub fn prefetch_entry(&self, slot: u32) {
        fibre_lpm::prefetch(self.entries.slot_ptr(slot as usize));
    }

    /// Starts fetching the side array's word for `slot` (see
    /// [`FamilyTable::prefetch_entry`]).
    #[inline(always)]
    pub fn prefetch_summary(&self, slot: u32) {
        fibre_lpm::prefetch(self.summary_of.slot_ptr(slot as usize));
    }

    /// The entry at `slot` (None for a free one).
    #[inline]
    pub fn entry_at(&self, slot: u32) -> Option<&PrefixEntry> {
        self.entries.at(slot as usize).as_ref()
    }

    /// The entry at `slot`'s [`PrefixEntry::single`], from the side array:
    /// the same summary (or None where the side array had no room for it),
    /// without reading the entry.
    #[inline]
    pub fn summary_at(&self, slot: u32) -> Option<&SinglePath> {
        match *self.summary_of.at(slot as usize) {
            0 => None,
            id => Some(&self.summaries[usize::from(id) - 1]),
        }
    }

    /// Every live entry, in no particular order.
    pub fn entries(&self) -> impl Iterator<Item = &PrefixEntry> + '_ {
        self.entries.iter().flatten()
    }

    /// Every live entry, mutable, in no particular order.
    pub fn entries_mut(&mut self) -> impl Iterator<Item = &mut PrefixEntry> + '_ {
        self.settle();
        self.all_unsettled = true;
        // The caller may change any entry's routes (a rare bulk change).
        let len = self.summary_of.len();
        self.summary_of = TwoLevelChunks::new(0);
        self.summary_of.resize(len, 0);
        self.fingerprints = Arc::default();
        for e in self.entries.iter_mut().flatten() {
            e.single = None;
        }
        self.entries.iter_mut().flatten()
    }

    /// Drops entries left empty by a bulk change (e.g. a link going away).
    pub fn prune_all(&mut self) {
        self.settle();
        let empty: Vec<Prefix> = self
            .entries()
            .filter(|e| e.routes.is_empty())
            .map(|e| e.prefix)
            .collect();
        for prefix in empty {
            self.prune(&prefix);
        }
    }

    /// Bytes this table holds that no clone of it shares: what dropping
    /// it would free, of its lookup arrays and its arena with the side
    /// array (the routes' own heap and the writer's indexes not counted):
    /// the chunks of each that no other version shares, and their
    /// directories.
    pub fn exclusive_bytes(&self) -> usize {
        self.index.exclusive_bytes()
            + self.entries.exclusive_bytes()
            + self.summary_of.exclusive_bytes()
    }

    /// Bytes of chunks (lookup arrays, arena, side array) this table
    /// shares with `other`, a clone of it or of a clone.
    #[cfg(test)]
    pub fn shared_bytes_with(&self, other: &Self) -> usize {
        self.index.shared_bytes_with(&other.index)
            + self.entries.shared_bytes_with(&other.entries)
            + self.summary_of.shared_bytes_with(&other.summary_of)
    }

    /// Bytes of every chunk of the lookup arrays, arena and side array,
    /// shared or not: what a private copy of them costs.
    #[cfg(test)]
    pub fn chunk_bytes(&self) -> usize {
        self.index.chunk_bytes() + self.entries.total_bytes() + self.summary_of.total_bytes()
    }

    /// Number of prefixes held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.index.len()
    }
}

/// Hashes the host addresses of [`FamilyTable::hosts`] (and the summaries
/// of [`FamilyTable::summary_ids`], only when a table changes): one multiply,
/// folded so that both the low bits (the bucket) and the high ones (the
/// tag) depend on every bit of the address. SipHash, the default, costs
/// more than the probe; the keys are the FIB's own prefixes, not chosen by
/// whoever sends the packets.
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl KeyHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        let product = u128::from(self.0 ^ word) * 0x9e37_79b9_7f4a_7c15;
        self.0 = (product as u64) ^ ((product >> 64) as u64);
    }
}

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.mix(u64::from(n));
    }

    #[inline]
    fn write_u128(&mut self, n: u128) {
        self.mix(n as u64 ^ ((n >> 64) as u64).rotate_left(29));
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

impl Fib {
    /// Bytes of route tables (lookup arrays, arenas) this FIB holds that
    /// no clone of it shares: what dropping this version would free once
    /// a newer one is published. The small FIB-wide records (links,
    /// addresses, rules) are not counted.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let mut fib = Fib::new();
    /// let empty = fib.exclusive_bytes();
    /// fib.apply(&Command::LinkAdd { name: "d0".into(), kind: LinkKind::Dummy, mtu: None }).unwrap();
    /// fib.apply(&Command::LinkSet { name: "d0".into(), up: Some(true), mtu: None }).unwrap();
    /// for n in 0..256 {
    ///     let words = config::tokenize(&format!("route add 10.{n}.0.0/16 dev d0")).unwrap();
    ///     for command in config::parse_words(&words).unwrap() {
    ///         fib.apply(&command).unwrap();
    ///     }
    /// }
    /// assert!(fib.exclusive_bytes() > empty);
    /// ```
    pub fn exclusive_bytes(&self) -> usize {
        self.tables
            .values()
            .map(|t| t.v4.exclusive_bytes() + t.v6.exclusive_bytes())
            .sum()
    }

    /// Bytes of route-table chunks this FIB shares with `other` (a clone
    /// of it, or of a clone), table by table: what keeping both versions
    /// costs less than two copies.
    #[cfg(test)]
    pub(crate) fn shared_bytes_with(&self, other: &Fib) -> usize {
        self.tables
            .iter()
            .filter_map(|(id, t)| Some((t, other.tables.get(id)?)))
            .map(|(t, o)| t.v4.shared_bytes_with(&o.v4) + t.v6.shared_bytes_with(&o.v6))
            .sum()
    }

    /// Bytes of every route-table chunk of this FIB, shared or not.
    #[cfg(test)]
    pub(crate) fn table_chunk_bytes(&self) -> usize {
        self.tables
            .values()
            .map(|t| t.v4.chunk_bytes() + t.v6.chunk_bytes())
            .sum()
    }

    /// Makes the summaries that the last change cleared again (see
    /// [`FamilyTable::settle`]): called once a change is complete, so that
    /// the entries it touched are back on the fast lookup path at once
    /// instead of at the next change.
    pub(crate) fn settle_tables(&mut self) {
        for t in self.tables.values_mut() {
            t.v4.settle();
            t.v6.settle();
        }
    }
}

/// One routing table: both families.
#[derive(Debug, Clone, Default)]
pub(crate) struct Table {
    /// IPv4 prefixes.
    pub v4: FamilyTable<u32>,
    /// IPv6 prefixes.
    pub v6: FamilyTable<u128>,
    /// Creation order of the IPv4 table (the kernel lists newer tables of a hash bucket first).
    pub created_v4: Option<u64>,
    /// Creation order of the IPv6 table.
    pub created_v6: Option<u64>,
}

impl Table {
    /// True when this family's table exists in the kernel's sense (created by a route add).
    pub fn exists(&self, family: Family) -> bool {
        match family {
            Family::V4 => self.created_v4.is_some(),
            Family::V6 => self.created_v6.is_some(),
        }
    }

    /// Marks the family's table as created (first route added to it).
    pub fn create(&mut self, family: Family, seq: u64) {
        let slot = match family {
            Family::V4 => &mut self.created_v4,
            Family::V6 => &mut self.created_v6,
        };
        slot.get_or_insert(seq);
    }

    /// The routes of exactly `prefix`, if any.
    pub fn get(&self, prefix: &Prefix) -> Option<&PrefixEntry> {
        match prefix.family() {
            Family::V4 => self.v4.get(prefix),
            Family::V6 => self.v6.get(prefix),
        }
    }

    /// The routes of exactly `prefix`, created empty when absent.
    pub fn routes_mut(&mut self, prefix: &Prefix) -> RoutesMut<'_> {
        match prefix.family() {
            Family::V4 => self.v4.routes_mut(prefix),
            Family::V6 => self.v6.routes_mut(prefix),
        }
    }

    /// [`FamilyTable::insert_unless_same`] in the family of `prefix`.
    pub fn insert_unless_same<O: Ord>(
        &mut self,
        prefix: &Prefix,
        route: Route,
        same: impl Fn(&Route, &Route) -> bool,
        fingerprint: impl Fn(&Route) -> u64,
        order: impl Fn(&Route) -> O,
    ) -> bool {
        match prefix.family() {
            Family::V4 => self
                .v4
                .insert_unless_same(prefix, route, same, fingerprint, order),
            Family::V6 => self
                .v6
                .insert_unless_same(prefix, route, same, fingerprint, order),
        }
    }

    /// Drops the entry of `prefix` if empty.
    pub fn prune(&mut self, prefix: &Prefix) {
        match prefix.family() {
            Family::V4 => self.v4.prune(prefix),
            Family::V6 => self.v6.prune(prefix),
        }
    }

    /// How many routes one family's entries hold (in no order).
    pub fn route_count(&self, family: Family) -> usize {
        match family {
            Family::V4 => self.v4.entries().map(|e| e.routes.len()).sum(),
            Family::V6 => self.v6.entries().map(|e| e.routes.len()).sum(),
        }
    }

    /// Every entry of one family in the kernel's dump order.
    ///
    /// IPv4 (`fib_trie`): by address, and for one address the longer
    /// prefix first. IPv6 (`fib6_walk`, a post-order walk of the radix
    /// tree): a prefix comes after every prefix it contains, so the order is
    /// by last address of the prefix, longer first on ties.
    pub fn dump_order(&self, family: Family) -> Vec<&PrefixEntry> {
        match family {
            Family::V4 => {
                let mut v: Vec<&PrefixEntry> = self.v4.entries().collect();
                v.sort_by_key(|e| (e.prefix.key(), std::cmp::Reverse(e.prefix.len())));
                v
            }
            Family::V6 => {
                let mut v: Vec<&PrefixEntry> = self.v6.entries().collect();
                v.sort_by_key(|e| (last_address(&e.prefix), std::cmp::Reverse(e.prefix.len())));
                v
            }
        }
    }
}

/// The highest address inside an IPv6 prefix (as a u128).
fn last_address(prefix: &Prefix) -> u128 {
    let host_bits = 128 - u32::from(prefix.len());
    let host_mask = if host_bits == 128 {
        u128::MAX
    } else {
        (1u128 << host_bits) - 1
    };
    prefix.key() | host_mask
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::*;

    fn route(dst: &str) -> Route {
        let (a, l) = dst.split_once('/').unwrap();
        Route {
            mtu_lock: false,
            metrics: Default::default(),
            table: TABLE_MAIN,
            dst: Prefix::new(a.parse().unwrap(), l.parse().unwrap()).unwrap(),
            tos: 0,
            kind: RouteType::Unicast,
            protocol: Protocol::BOOT,
            scope: Scope::LINK,
            metric: 0,
            prefsrc: None,
            mtu: None,
            nexthops: vec![],
            cache_class: 0,
        }
    }

    fn dump(t: &Table, f: Family) -> Vec<String> {
        t.dump_order(f)
            .iter()
            .map(|e| format!("{}/{}", e.prefix.addr(), e.prefix.len()))
            .collect()
    }

    #[test]
    fn ipv4_dump_is_by_address_then_longer_first() {
        // Kernel-checked: `ip route` printed 10.0.0.0/24 before 10.0.0.0/8.
        let mut t = Table::default();
        for p in ["10.0.0.0/8", "0.0.0.0/0", "10.0.0.0/24", "10.0.0.128/25"] {
            let r = route(p);
            t.routes_mut(&r.dst).push(r);
        }
        assert_eq!(
            dump(&t, Family::V4),
            ["0.0.0.0/0", "10.0.0.0/24", "10.0.0.0/8", "10.0.0.128/25"]
        );
    }

    #[test]
    fn ipv6_dump_is_post_order() {
        // Kernel-checked: `ip -6 route` printed /127, /64, 1::/48, ffff::/48, /32, default.
        let mut t = Table::default();
        for p in [
            "::/0",
            "2001:db8::/32",
            "2001:db8:1::/48",
            "2001:db8:ffff::/48",
            "2001:db8::/127",
            "2001:db8::/64",
        ] {
            let r = route(p);
            t.routes_mut(&r.dst).push(r);
        }
        assert_eq!(
            dump(&t, Family::V6),
            [
                "2001:db8::/127",
                "2001:db8::/64",
                "2001:db8:1::/48",
                "2001:db8:ffff::/48",
                "2001:db8::/32",
                "::/0"
            ]
        );
    }

    #[test]
    fn prune_frees_and_reuses_slots() {
        let mut t: FamilyTable<u32> = FamilyTable::default();
        let a = route("10.0.0.0/8");
        t.routes_mut(&a.dst).push(a.clone());
        t.routes_mut(&a.dst).clear();
        t.prune(&a.dst);
        assert_eq!(t.len(), 0);
        assert!(t.get(&a.dst).is_none());
        let b = route("10.1.0.0/16");
        t.routes_mut(&b.dst).push(b.clone());
        assert_eq!(t.entries.len(), 1, "the freed slot is reused");
        assert_eq!(t.matches(0x0a01_0001).count(), 1);
    }

    fn via(dst: &str, gateway: &str, dev: LinkIndex) -> Route {
        Route {
            nexthops: vec![Nexthop {
                gateway: Some(gateway.parse().unwrap()),
                dev: Some(dev),
                weight: 1,
                flags: NexthopFlags::default(),
            }],
            ..route(dst)
        }
    }

    /// The side array holds each slot's summary (none for a free slot).
    fn assert_side_array_agrees<K: Key>(t: &FamilyTable<K>) {
        assert_eq!(t.summary_of.len(), t.entries.len());
        for slot in 0..t.entries.len() as u32 {
            let want = t.entry_at(slot).and_then(|e| e.single());
            assert_eq!(t.summary_at(slot), want, "slot {slot}");
        }
    }

    #[test]
    fn a_summary_follows_the_routes_and_is_never_stale() {
        let mut t: FamilyTable<u128> = FamilyTable::default();
        let a = via("2001:db8::/32", "fe80::1", 3);
        let key = a.dst.key();
        t.routes_mut(&a.dst).push(a.clone());
        assert!(
            t.longest(key).unwrap().single().is_none(),
            "handed out, not yet settled"
        );
        t.prune(&a.dst);
        assert_side_array_agrees(&t);
        let s = *t
            .longest(key)
            .unwrap()
            .single()
            .expect("one route, one live path");
        assert_eq!((s.dev(), s.gateway_v6()), (3, 0xfe80u128 << 112 | 1));
        // A second route: no summary.
        t.routes_mut(&a.dst)
            .push(via("2001:db8::/32", "fe80::2", 4));
        t.prune(&a.dst);
        assert_side_array_agrees(&t);
        assert!(t.longest(key).unwrap().single().is_none());
        t.routes_mut(&a.dst).pop();
        t.prune(&a.dst);
        assert_side_array_agrees(&t);
        assert_eq!(t.longest(key).unwrap().single(), Some(&s));
        // A path marked dead through entries_mut: cleared at once, not made again.
        for e in t.entries_mut() {
            e.routes_mut()[0].nexthops[0].flags.dead = true;
        }
        assert!(t.longest(key).unwrap().single().is_none());
        t.prune_all();
        assert_side_array_agrees(&t);
        assert!(t.longest(key).unwrap().single().is_none());
    }

    #[test]
    fn an_ipv4_summary_has_the_gateway_and_no_tos() {
        let mut t4: FamilyTable<u32> = FamilyTable::default();
        let b = via("10.0.0.0/8", "192.0.2.1", 3);
        t4.routes_mut(&b.dst).push(b.clone());
        t4.prune(&b.dst);
        let s = *t4
            .get(&b.dst)
            .unwrap()
            .single()
            .expect("one route, one path");
        assert_eq!((s.dev(), s.gateway_v4()), (3, 0xc000_0201));
        // An IPv6 gateway (`via inet6`) is no IPv4 one: the data path shows none.
        t4.routes_mut(&b.dst)[0].nexthops[0].gateway = Some("fe80::1".parse().unwrap());
        t4.prune(&b.dst);
        assert_eq!(t4.get(&b.dst).unwrap().single().unwrap().gateway_v4(), 0);
        // A TOS route matches only some flows: no summary.
        t4.routes_mut(&b.dst)[0].tos = 0x10;
        t4.prune(&b.dst);
        assert!(t4.get(&b.dst).unwrap().single().is_none());
        // Nor for a route without a device.
        let mut c = route("10.9.0.0/16");
        c.nexthops = vec![Nexthop {
            gateway: None,
            dev: None,
            weight: 1,
            flags: NexthopFlags::default(),
        }];
        t4.routes_mut(&c.dst).push(c.clone());
        t4.prune(&c.dst);
        assert!(t4.get(&c.dst).unwrap().single().is_none());
    }

    #[test]
    fn the_side_array_files_a_bounded_number_of_summaries() {
        let mut t: FamilyTable<u128> = FamilyTable::default();
        // One more distinct gateway than the side array can name.
        let n = MAX_SUMMARIES as u32 + 1;
        let dst = |i: u32| format!("2001:db8:{:x}:{:x}::/64", i >> 16, i & 0xffff);
        for i in 0..n {
            let r = via(&dst(i), &format!("fe80::{:x}:{:x}", i >> 16, i & 0xffff), 3);
            t.routes_mut(&r.dst).push(r);
        }
        t.prune(&via(&dst(0), "fe80::1", 3).dst);
        let last = t.slot_of(&via(&dst(n - 1), "fe80::1", 3).dst).unwrap();
        assert!(t.entry_at(last).unwrap().single().is_some());
        assert!(
            t.summary_at(last).is_none(),
            "no room left: only the entry has it"
        );
        // The same summary again is filed once.
        let twin = via("2001:db9::/64", "fe80::1", 3);
        t.routes_mut(&twin.dst).push(twin.clone());
        t.prune(&twin.dst);
        assert_eq!(t.summaries.len(), MAX_SUMMARIES);
        assert!(t.summary_at(t.slot_of(&twin.dst).unwrap()).is_some());
        // Summarizing every entry again drops the unused ones: room again.
        for i in 0..2 {
            let p = via(&dst(i), "fe80::1", 3).dst;
            t.routes_mut(&p).clear();
            t.prune(&p);
        }
        t.entries_mut().for_each(drop);
        t.prune_all();
        assert!(t.summary_at(last).is_some());
        assert_side_array_agrees(&t);
    }

    /// Inserts a route for each prefix of `prefixes` into an empty table,
    /// checks each finds its own entry, then removes the one at `removed`
    /// and checks the others still find theirs. Returns the table.
    fn insert_then_remove_one<K: Key>(prefixes: &[&str], removed: usize) -> FamilyTable<K> {
        let mut t: FamilyTable<K> = FamilyTable::default();
        let routes: Vec<Route> = prefixes.iter().map(|p| route(p)).collect();
        for r in &routes {
            t.routes_mut(&r.dst).push(r.clone());
        }
        for r in &routes {
            assert_eq!(t.get(&r.dst).unwrap().prefix, r.dst);
        }
        t.routes_mut(&routes[removed].dst).clear();
        t.prune(&routes[removed].dst);
        assert!(t.get(&routes[removed].dst).is_none());
        for (i, r) in routes.iter().enumerate().filter(|&(i, _)| i != removed) {
            assert_eq!(
                t.get(&r.dst).unwrap().prefix,
                r.dst,
                "after removing {removed}, {i}"
            );
        }
        t
    }

    #[test]
    fn prefixes_sharing_an_address_keep_their_own_entries() {
        // ::/0, ::/1, ::/127 and ::/128 share the address 0; 2001:db8::/32
        // and /33 share theirs: the marker bit keeps them apart.
        let v6 = [
            "::/0",
            "::/1",
            "::/127",
            "::/128",
            "2001:db8::/32",
            "2001:db8::/33",
        ];
        let t = insert_then_remove_one::<u128>(&v6, 1);
        assert_eq!(t.len(), 5);
        assert_eq!(t.exact.len(), 5);
        let v4 = ["0.0.0.0/0", "0.0.0.0/1", "0.0.0.0/31", "0.0.0.0/32"];
        insert_then_remove_one::<u32>(&v4, 0);
    }

    #[test]
    fn host_prefixes_are_found_by_their_address_and_forgotten_when_pruned() {
        let mut t: FamilyTable<u128> = FamilyTable::default();
        let host = route("2001:db8::80/128");
        let net = route("2001:db8::/64");
        for r in [&net, &host] {
            t.routes_mut(&r.dst).push(r.clone());
        }
        let addr = host.dst.key();
        assert_eq!(t.longest(addr).unwrap().prefix, host.dst);
        assert_eq!(t.longest(addr + 1).unwrap().prefix, net.dst);
        t.routes_mut(&host.dst).clear();
        t.prune(&host.dst);
        assert!(t.hosts.is_empty());
        assert_eq!(t.longest(addr).unwrap().prefix, net.dst);
        let mut t4: FamilyTable<u32> = FamilyTable::default();
        let h4 = route("192.0.2.1/32");
        t4.routes_mut(&h4.dst).push(h4.clone());
        assert_eq!(t4.longest(0xc000_0201).unwrap().prefix, h4.dst);
        assert!(t4.longest(0xc000_0202).is_none());
    }

    /// One change a route command makes to a family table.
    #[derive(Debug, Clone)]
    enum Op {
        /// Adds a route (metric `n`) to prefix `p`.
        Push(usize, u32),
        /// Removes the first route of `p`, then prunes.
        Pop(usize),
        /// Hands out `p`'s routes without changing them (a refused
        /// command's look), then prunes: no entry may be left behind.
        Look(usize),
        /// Ends a batch: a clone of the table is taken as a snapshot.
        Snapshot,
    }

    /// Prefixes that share addresses and hash buckets: /0, /31, /32 and
    /// others over a few addresses.
    fn universe() -> Vec<Prefix> {
        let mut out = Vec::new();
        for addr in [0u32, 0x0a00_0000, 0x0a00_0001, 0x0a00_0100, 0xffff_fffe] {
            for len in [0u8, 1, 8, 24, 31, 32] {
                out.push(Prefix::containing(
                    std::net::Ipv4Addr::from(addr).into(),
                    len,
                ));
            }
        }
        out.sort_by_key(|p| (p.key(), p.len()));
        out.dedup();
        out
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            4 => (0usize..64, 0u32..3).prop_map(|(p, m)| Op::Push(p, m)),
            3 => (0usize..64).prop_map(Op::Pop),
            1 => (0usize..64).prop_map(Op::Look),
            1 => Just(Op::Snapshot),
        ]
    }

    /// `t` holds exactly `model`'s routes (by metric), in every index: the
    /// exact one, the hosts, the LPM and the side array.
    fn table_is_model(
        t: &FamilyTable<u32>,
        model: &std::collections::BTreeMap<Prefix, Vec<u32>>,
        universe: &[Prefix],
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        use proptest::prelude::*;
        assert_side_array_agrees(t);
        prop_assert_eq!(t.len(), model.len());
        prop_assert_eq!(t.exact.len(), model.len());
        prop_assert_eq!(t.entries().count(), model.len());
        prop_assert_eq!(
            t.hosts.len(),
            model.keys().filter(|p| p.len() == 32).count()
        );
        for p in universe {
            let got = t.get(p).map(|e| {
                assert_eq!(e.prefix, *p);
                e.routes.iter().map(|r| r.metric).collect::<Vec<_>>()
            });
            prop_assert_eq!(got.as_ref(), model.get(p), "{:?}", p);
            let addr = p.key() as u32;
            for probe in [addr, addr | 1] {
                let want = model
                    .keys()
                    .filter(|q| q.contains(&std::net::Ipv4Addr::from(probe).into()))
                    .max_by_key(|q| q.len());
                prop_assert_eq!(t.longest(probe).map(|e| e.prefix), want.copied());
            }
        }
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]

        /// The exact index, the host index and the LPM agree with a plain
        /// map through slot reuse and growth; a clone taken after a batch
        /// keeps that batch's answers whatever the table does next (the
        /// clone shares chunks with the table until one of them writes).
        #[test]
        fn the_indexes_and_clones_agree_with_a_plain_map(
            ops in proptest::collection::vec(op(), 1..300),
        ) {
            let universe = universe();
            let mut t: FamilyTable<u32> = FamilyTable::default();
            let mut model: std::collections::BTreeMap<Prefix, Vec<u32>> = Default::default();
            let mut snapshot: FamilyTable<u32> = FamilyTable::default();
            let mut snapshot_model = model.clone();
            let ops = ops.into_iter().chain([Op::Snapshot]);
            for op in ops {
                match op {
                    Op::Push(i, metric) => {
                        let p = universe[i % universe.len()];
                        let dst = format!("{}/{}", p.addr(), p.len());
                        // Some with one path, so that entries get summaries.
                        let mut r = match metric % 3 {
                            0 => route(&dst),
                            g => via(&dst, &format!("192.0.2.{g}"), 1 + metric % 2),
                        };
                        r.metric = metric;
                        t.routes_mut(&p).push(r);
                        model.entry(p).or_default().push(metric);
                    }
                    Op::Pop(i) => {
                        let p = universe[i % universe.len()];
                        if t.get(&p).is_some() {
                            let mut routes = t.routes_mut(&p);
                            if !routes.is_empty() {
                                routes.remove(0);
                            }
                            t.prune(&p);
                            let m = model.get_mut(&p).expect("the model has it");
                            m.remove(0);
                            if m.is_empty() {
                                model.remove(&p);
                            }
                            }
                    }
                    Op::Look(i) => {
                        let p = universe[i % universe.len()];
                        let _ = t.routes_mut(&p);
                        t.prune(&p);
                    }
                    Op::Snapshot => {
                        t.settle();
                        snapshot = t.clone();
                        snapshot_model = model.clone();
                    }
                }
                // After every change: the table is the model, and the last
                // snapshot is still its model.
                table_is_model(&t, &model, &universe)?;
                table_is_model(&snapshot, &snapshot_model, &universe)?;
            }
        }
    }
}

#[cfg(test)]
#[path = "table_insert_tests.rs"]
mod insert_tests;
