//! The route cache: per nexthop, one input route (forwarding) and one
//! output route per core (locally generated traffic), made on first use
//! and invalidated by generation numbers.
//!
//! * Slots are atomic pointers that own one reference each. A miss builds
//!   a route and installs it with one compare-and-swap; the loser of a race
//!   uses its route uncached (a [`RouteHandle::Held`]), as the kernel's
//!   `rt_cache_route` failure path does.
//! * A cached route is valid while its `stamp` equals its nexthop's
//!   generation. [`RouteCache::invalidate_nexthop`] and
//!   [`RouteCache::invalidate_device`] bump only the nexthops concerned;
//!   [`RouteCache::invalidate_prefix`] bumps only the prefix generations of
//!   the changed prefix and of the prefixes containing it (IPv6's
//!   `fn_sernum` scheme), which [`CachedDst`]s (sockets, tunnels) check.
//!   No global counter stales every cached route on every BGP update.
//! * A replaced route is not freed at once: a reader may still borrow it.
//!   Its slot's reference goes to an [`RcuCell`] whose old versions are
//!   freed a grace period later, so borrowing costs nothing.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use fibre_base::{CachePadded, Clock, Ipv4, Ipv6, WorkerId, CACHE_LINE};
use fibre_fib::burst::BURST_CHUNK;
use fibre_fib::shared::FibListener;
use fibre_fib::{Errno, FibChange, Prefix, TableId, CACHE_CLASS_UNSHARED};
use fibre_rcu::{Domain, RcuCell, ReadGuard};

use crate::exceptions::{clamp_pmtu, Exception, ExceptionConfig, ExceptionTable, PmtuOutcome};
use crate::family::CacheFamily;
use crate::held::HeldRoute;
use crate::route::{flags, Route};
use crate::source::{NexthopKey, RouteDetails, RouteSource};

/// One cache slot: owns one reference to the route it points to, or null.
type Slot = AtomicPtr<Route>;

/// A nexthop's cached routes and exceptions.
#[repr(C)]
#[derive(Debug)]
pub struct NexthopCache {
    key: NexthopKey,
    /// Read by every lookup, written on invalidation only: its own line.
    generation: CachePadded<AtomicU64>,
    input: CachePadded<Slot>,
    /// One output route for all cores: the kernel before "ipv4: percpu
    /// nh_rth_output cache" (Eric Dumazet, 2012), kept as the "before" of
    /// fibre-bench's udpflood experiment.
    #[cfg(feature = "baselines")]
    shared_output: CachePadded<Slot>,
    output: Box<[CachePadded<Slot>]>,
    exceptions: OnceLock<Mutex<ExceptionTable>>,
    /// False while the table is empty or absent, so that lookups on a
    /// nexthop without exceptions take no lock. Written under the table's
    /// lock only.
    has_exceptions: std::sync::atomic::AtomicBool,
}

// Each slot and the generation sit alone on a line (a prefetch pair on
// x86-64): a core replacing its route never invalidates another core's slot.
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(
        size_of::<CachePadded<Slot>>() == CACHE_LINE,
        "a route-cache slot must fill exactly one cache line: if this fires, \
         keep the slots in CachePadded"
    );
    assert!(
        offset_of!(NexthopCache, generation) % CACHE_LINE == 0,
        "NexthopCache::generation must start its own cache line: every lookup \
         reads it, and no slot a core replaces may share it; if this fires, \
         re-check the padding before generation"
    );
    assert!(
        offset_of!(NexthopCache, input) % CACHE_LINE == 0,
        "NexthopCache::input must start its own cache line: forwarding reads \
         it while output routes are replaced; if this fires, re-check the \
         padding before input"
    );
};
#[cfg(feature = "baselines")]
const _: () = assert!(
    std::mem::offset_of!(NexthopCache, shared_output) % CACHE_LINE == 0,
    "NexthopCache::shared_output must start its own cache line, so that the \
     before measures the shared route's count, not false sharing with its \
     neighbours; if this fires, re-check the padding before shared_output"
);

impl NexthopCache {
    fn new(key: NexthopKey, workers: usize) -> NexthopCache {
        NexthopCache {
            key,
            generation: CachePadded::new(AtomicU64::new(1)),
            input: CachePadded::new(AtomicPtr::new(std::ptr::null_mut())),
            #[cfg(feature = "baselines")]
            shared_output: CachePadded::new(AtomicPtr::new(std::ptr::null_mut())),
            output: (0..workers.max(1))
                .map(|_| CachePadded::new(AtomicPtr::new(std::ptr::null_mut())))
                .collect(),
            exceptions: OnceLock::new(),
            has_exceptions: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Its key.
    pub fn key(&self) -> NexthopKey {
        self.key
    }

    /// Its generation now.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    fn bump(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    fn exceptions_if_any(&self) -> Option<std::sync::MutexGuard<'_, ExceptionTable>> {
        self.exceptions
            .get()
            .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The table, made on first use, locked.
    fn exceptions_locked(
        &self,
        config: ExceptionConfig,
    ) -> std::sync::MutexGuard<'_, ExceptionTable> {
        self.exceptions
            .get_or_init(|| Mutex::new(ExceptionTable::new(config)))
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Records whether `table` (this nexthop's, locked) has entries.
    fn note_exceptions(&self, table: &ExceptionTable) {
        self.has_exceptions
            .store(!table.is_empty(), Ordering::Release);
    }
}

impl Drop for NexthopCache {
    fn drop(&mut self) {
        let slots = std::iter::once(&*self.input).chain(self.output.iter().map(|s| &**s));
        #[cfg(feature = "baselines")]
        let slots = slots.chain(std::iter::once(&*self.shared_output));
        for slot in slots {
            let p = slot.swap(std::ptr::null_mut(), Ordering::AcqRel);
            if !p.is_null() {
                // SAFETY: a non-null slot owns one reference, given up by
                // `into_raw` when it was installed; the nexthop is being
                // dropped after its grace period, so no reader borrows it.
                drop(unsafe { HeldRoute::from_raw(p) });
            }
        }
    }
}

/// A route from the cache: borrowed for the read section (no counter
/// touched), or held when it could not be cached (a lost install race, an
/// exception route).
#[derive(Debug)]
pub enum RouteHandle<'a> {
    /// Borrowed from a cache slot, valid for the read section.
    Borrowed(&'a Route),
    /// Held: a counted reference.
    Held(HeldRoute),
}

impl RouteHandle<'_> {
    /// Turns the handle into a held route, explicitly (one atomic add for
    /// a borrowed route, nothing for a held one).
    pub fn hold(self) -> Option<HeldRoute> {
        match self {
            RouteHandle::Borrowed(r) => r.hold(),
            RouteHandle::Held(h) => Some(h),
        }
    }

    /// True when borrowed from a cache slot.
    pub fn is_cached(&self) -> bool {
        matches!(self, RouteHandle::Borrowed(_))
    }
}

impl std::ops::Deref for RouteHandle<'_> {
    type Target = Route;
    #[inline]
    fn deref(&self) -> &Route {
        match self {
            RouteHandle::Borrowed(r) => r,
            RouteHandle::Held(h) => h,
        }
    }
}

/// Which slot of a nexthop a lookup uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotKind {
    /// The forwarding (input) route, one per nexthop: filled only by
    /// [`RouteCache::input`] and [`RouteCache::input_flow`] (the output
    /// calls refuse it).
    Input,
    /// This worker's output route (workers beyond the count the cache was
    /// made for share slots, modulo that count: still correct, since slots
    /// are installed by compare-and-swap, but no longer per core).
    PerCore(WorkerId),
    /// One output route shared by all workers: the "before" of
    /// fibre-bench's udpflood, built only with the `baselines` feature.
    #[cfg(feature = "baselines")]
    SharedOutput,
}

/// A held route with the generations it was valid for: what a socket or a
/// tunnel keeps between packets, checked with [`CachedDst::is_valid`].
#[derive(Debug)]
pub struct CachedDst {
    route: HeldRoute,
    nexthop: Arc<NexthopCache>,
    nexthop_seen: u64,
    prefix: Arc<AtomicU64>,
    prefix_seen: u64,
    matched: Prefix,
    table: TableId,
}

impl CachedDst {
    /// The route.
    pub fn route(&self) -> &HeldRoute {
        &self.route
    }

    /// The FIB prefix the destination matched.
    pub fn matched(&self) -> (TableId, Prefix) {
        (self.table, self.matched)
    }

    /// True while neither the nexthop nor the matched prefix (nor any more
    /// specific prefix added under it) changed, and no expiry passed.
    pub fn is_valid(&self, now_ms: u64) -> bool {
        self.nexthop.generation() == self.nexthop_seen
            && self.prefix.load(Ordering::Acquire) == self.prefix_seen
            && !self.route.is_expired(now_ms)
    }
}

/// Nexthop keys come from configuration, not from packets, so the map
/// needs no keyed (DoS-resistant) hash: a multiply-xor hash costs a few
/// nanoseconds per packet where SipHash costs about twenty.
#[derive(Debug, Default, Clone, Copy)]
pub struct NexthopHasher(u64);

impl std::hash::Hasher for NexthopHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_u128(&mut self, n: u128) {
        self.write_u64(n as u64);
        self.write_u64((n >> 64) as u64);
    }
}

type NexthopMap =
    HashMap<NexthopKey, Arc<NexthopCache>, std::hash::BuildHasherDefault<NexthopHasher>>;

/// The route cache over a FIB.
///
/// ```
/// use fibre_fib::*;
/// use fibre_route::{RouteCache, SlotKind};
/// let mut fib = Fib::new();
/// fib.apply(&Command::LinkAdd { name: "d0".into(), kind: LinkKind::Ifb, mtu: None }).unwrap();
/// fib.apply(&Command::LinkSet { name: "d0".into(), up: Some(true), mtu: None }).unwrap();
/// fib.apply(&Command::Addr { op: AddrOp::Add, spec: AddressSpec {
///     dev: "d0".into(), local: "10.0.0.1".parse().unwrap(), prefix_len: 24, peer: None,
///     broadcast: None, scope: None, noprefixroute: false, metric: None, label: None, mngtmpaddr: false } }).unwrap();
/// let domain = fibre_rcu::Domain::new();
/// let cache = RouteCache::new(&domain, fib, 2);
/// let mut reader = domain.register();
/// let key = FlowKeyV4 { dst: u32::from_be_bytes([10, 0, 0, 9]), ..Default::default() };
/// {
///     let guard = reader.read();
///     let first = cache.output::<fibre_base::Ipv4>(&guard, SlotKind::PerCore(fibre_base::WorkerId::new(0)), &key).unwrap();
///     assert!(first.is_cached());
///     assert_eq!(first.src_addr(), Some("10.0.0.1".parse().unwrap()));
///     assert_eq!(first.mtu, 1500);
/// }
/// reader.quiescent();
/// ```
pub struct RouteCache<S> {
    source: S,
    domain: Domain,
    workers: usize,
    nexthops: RcuCell<NexthopMap>,
    /// Slot references replaced by readers wait here for a grace period
    /// (each publish retires the previous one).
    retired: RcuCell<Option<HeldRoute>>,
    /// Generations of the FIB prefixes held destinations matched, per
    /// table, ordered so that the prefixes inside one can be found.
    prefixes: Mutex<PrefixGenerations>,
    exception_config: ExceptionConfig,
    clock: Clock,
    /// Bumped by every invalidation: the coarse "something changed" that
    /// `fibre_dev`'s `UnderlayRoutes::generation` asks for.
    changes: AtomicU64,
}

impl<S> std::fmt::Debug for RouteCache<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RouteCache")
            .field("workers", &self.workers)
            .finish_non_exhaustive()
    }
}

impl<S: RouteSource> RouteCache<S> {
    /// A cache with `workers` per-core output slots per nexthop, default
    /// exception settings and a monotonic clock.
    pub fn new(domain: &Domain, source: S, workers: usize) -> RouteCache<S> {
        Self::with_options(
            domain,
            source,
            workers,
            ExceptionConfig::default(),
            Clock::monotonic(),
        )
    }

    /// A cache with explicit exception settings and clock.
    pub fn with_options(
        domain: &Domain,
        source: S,
        workers: usize,
        exception_config: ExceptionConfig,
        clock: Clock,
    ) -> RouteCache<S> {
        RouteCache {
            source,
            domain: domain.clone(),
            workers: workers.max(1),
            nexthops: RcuCell::new(domain, NexthopMap::default()),
            retired: RcuCell::new(domain, None),
            prefixes: Mutex::new(PrefixGenerations::new()),
            exception_config,
            clock,
            changes: AtomicU64::new(0),
        }
    }

    /// The FIB behind the cache.
    pub fn source(&self) -> &S {
        &self.source
    }

    /// The RCU domain readers must be registered with.
    pub fn domain(&self) -> &Domain {
        &self.domain
    }

    /// The cache's clock now (ms).
    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// How many invalidations the cache has seen: changes whenever any
    /// cached answer may have become wrong (coarse; per-route validity is
    /// [`CachedDst::is_valid`]).
    pub fn change_count(&self) -> u64 {
        self.changes.load(Ordering::Acquire)
    }

    /// The nexthop entry for `key`, made on first use.
    ///
    /// # Errors
    /// `Inval` if `guard` belongs to a reader of another RCU domain than
    /// the cache's (its quiescent states would not protect the routes).
    pub fn nexthop<'a>(
        &'a self,
        guard: &'a ReadGuard<'_>,
        key: NexthopKey,
    ) -> Result<&'a Arc<NexthopCache>, Errno> {
        let map = self.nexthops.try_read(guard).map_err(|_| Errno::Inval)?;
        if let Some(nh) = map.get(&key) {
            return Ok(nh);
        }
        let workers = self.workers;
        self.nexthops.update(|m| {
            m.entry(key)
                .or_insert_with(|| Arc::new(NexthopCache::new(key, workers)));
        });
        // The update above published a map holding `key` (a concurrent
        // `forget_nexthop` may have removed it again: then report it gone).
        let map = self.nexthops.try_read(guard).map_err(|_| Errno::Inval)?;
        map.get(&key).ok_or(Errno::NetUnreach)
    }

    /// The output route for a flow of family `I` (`Ipv4`, `Ipv6`), from
    /// `slot` of its nexthop (or from an exception for its destination),
    /// as the kernel's `ip_route_output_key_hash_rcu` and
    /// `ip6_route_output_flags` give it. `slot` is an output slot:
    /// [`SlotKind::Input`] answers `Inval`, since the input slot holds the
    /// routes of [`RouteCache::input`] (without a source of ours, and typed
    /// for the input path).
    ///
    /// Per packet on a hit: the FIB lookup, one map probe, one load of the
    /// slot and one of the generation, nothing written.
    pub fn output<'a, I: CacheFamily>(
        &'a self,
        guard: &'a ReadGuard<'_>,
        slot: SlotKind,
        key: &I::FlowKey,
    ) -> Result<RouteHandle<'a>, Errno> {
        if slot == SlotKind::Input {
            return Err(Errno::Inval);
        }
        let fwd = self.source.lookup::<I>(guard, key)?;
        self.output_of::<I>(guard, slot, key, fwd)
    }

    /// [`RouteCache::output`] for a burst of flows: the FIB's burst lookup
    /// ([`RouteSource::lookup_burst`]) for all of `keys` at once, a chunk
    /// of [`fibre_fib::burst::BURST_CHUNK`] keys at a time, then each
    /// key's route from its nexthop's slot or exception as
    /// [`RouteCache::output`] gives it: `out[i]` is what `output` answers
    /// for `keys[i]`. Allocates nothing beyond what `output` would for the
    /// same keys (the FIB's answers wait on the stack).
    ///
    /// # Errors
    /// `Inval`, with `out` untouched, for [`SlotKind::Input`] (as `output`)
    /// or when `keys` and `out` differ in length.
    pub fn output_burst<'a, I: CacheFamily>(
        &'a self,
        guard: &'a ReadGuard<'_>,
        slot: SlotKind,
        keys: &[I::FlowKey],
        out: &mut [Result<RouteHandle<'a>, Errno>],
    ) -> Result<(), Errno> {
        if slot == SlotKind::Input {
            return Err(Errno::Inval);
        }
        self.burst::<I>(
            keys,
            out,
            |keys, fwds| self.source.lookup_burst::<I>(guard, keys, fwds),
            |key, fwd| self.output_of::<I>(guard, slot, key, fwd),
        )
    }

    /// The output route of `key` once its FIB lookup answered `fwd`.
    #[inline(always)]
    fn output_of<'a, I: CacheFamily>(
        &'a self,
        guard: &'a ReadGuard<'_>,
        slot: SlotKind,
        key: &I::FlowKey,
        fwd: I::Forward,
    ) -> Result<RouteHandle<'a>, Errno> {
        let flow = I::flow(key);
        // `move`: the miss path gets its own copy of the answer, so `fwd`
        // never has its address taken and stays in registers on the hit
        // path (taken, it was copied through memory in unaligned pieces,
        // and read back across them: 6-19 % more per frame in `fibre
        // bench udpflood`).
        self.route_via(
            guard,
            slot,
            NexthopKey::of::<I>(&fwd),
            flow.dst.into(),
            flow.src.map(Into::into),
            move || self.source.describe::<I>(guard, key, &fwd),
        )
    }

    /// A burst: `lookup` answers a chunk of keys into the FIB answers kept
    /// on the stack, then `route` turns each key's answer into its route.
    fn burst<'a, I: CacheFamily>(
        &'a self,
        keys: &[I::FlowKey],
        out: &mut [Result<RouteHandle<'a>, Errno>],
        lookup: impl Fn(&[I::FlowKey], &mut [Result<I::Forward, Errno>]),
        route: impl Fn(&I::FlowKey, I::Forward) -> Result<RouteHandle<'a>, Errno>,
    ) -> Result<(), Errno> {
        if keys.len() != out.len() {
            return Err(Errno::Inval);
        }
        let mut answers = [Err(Errno::Inval); BURST_CHUNK];
        for (keys, out) in keys.chunks(BURST_CHUNK).zip(out.chunks_mut(BURST_CHUNK)) {
            let answers = &mut answers[..keys.len()];
            lookup(keys, answers);
            for ((key, answer), routed) in keys.iter().zip(answers.iter()).zip(out) {
                *routed = answer.and_then(|fwd| route(key, fwd));
            }
        }
        Ok(())
    }

    /// The input route for a packet of family `I` from `src` to `dst`
    /// received on link `iif`: what the kernel's `ip_route_input_noref`
    /// (`ip6_route_input`) gives the forwarding plane, with the answers of
    /// `ip route get DST from SRC iif DEV`
    /// ([`fibre_fib::Fib::lookup_input_batch_v4`],
    /// [`fibre_fib::Fib::lookup_input_batch_v6`]). Forwarding answers
    /// with the nexthop's input route (type unicast, the output device and
    /// gateway, no source, flag [`INPUT`](flags::INPUT)); local delivery
    /// and broadcasts with a route to `lo` (ifindex 1, flag
    /// [`LOCAL`](flags::LOCAL)); a martian, a miss or a reject route with
    /// its errno (blackhole and martians `Inval`, unreachable
    /// `HostUnreach`, prohibit `Acces`, no route `NetUnreach`; no such
    /// `iif`: `NoDev`).
    ///
    /// One input route per nexthop, for every input link and source, as
    /// the kernel's `nhc_rth_input`: cached in its [`SlotKind::Input`]
    /// slot, stale when the nexthop's generation moves (the same
    /// invalidations as the output routes), with the nexthop's exceptions
    /// for `dst` applied (a path MTU learnt applies to forwarded packets
    /// too). The FIB lookup runs per packet, so a route change is seen at
    /// once. Per packet on a hit: that lookup, one map probe, two loads.
    ///
    /// IPv6 delivers locally (our addresses, and the anycast addresses
    /// addrconf makes) on `lo`; its input route carries its `src` when it
    /// names one, else none; a zero `src` is the unspecified address (a DAD
    /// probe's).
    ///
    /// ```
    /// use fibre_base::{Ipv4, Ipv6};
    /// use fibre_fib::*;
    /// use fibre_route::{route::flags, RouteCache};
    /// let mut fib = Fib::new();
    /// fib.apply(&Command::LinkAdd { name: "d0".into(), kind: LinkKind::Ifb, mtu: None }).unwrap();
    /// fib.apply(&Command::LinkSet { name: "d0".into(), up: Some(true), mtu: None }).unwrap();
    /// fib.apply(&Command::Addr { op: AddrOp::Add, spec: AddressSpec {
    ///     dev: "d0".into(), local: "10.0.0.1".parse().unwrap(), prefix_len: 24, peer: None,
    ///     broadcast: None, scope: None, noprefixroute: false, metric: None, label: None, mngtmpaddr: false } }).unwrap();
    /// let domain = fibre_rcu::Domain::new();
    /// let cache = RouteCache::new(&domain, fib, 1);
    /// let mut reader = domain.register();
    /// {
    ///     let guard = reader.read();
    ///     let peer = "10.0.0.9".parse().unwrap();
    ///     // Forwarded to a neighbour on d0 (ifindex 2), from the input slot.
    ///     let fwd = cache.input::<Ipv4>(&guard, 2, "10.0.0.7".parse().unwrap(), peer).unwrap();
    ///     assert!(fwd.is_cached() && fwd.flags & flags::INPUT != 0);
    ///     assert_eq!((fwd.dev, fwd.kind()), (2, RouteType::Unicast));
    ///     // Ours: delivered locally, on lo.
    ///     let local = cache.input::<Ipv4>(&guard, 2, "10.0.0.1".parse().unwrap(), peer).unwrap();
    ///     assert_eq!((local.dev, local.kind()), (1, RouteType::Local));
    ///     // From our own address: a martian.
    ///     let ours = "10.0.0.1".parse().unwrap();
    ///     assert_eq!(cache.input::<Ipv4>(&guard, 2, "10.0.0.7".parse().unwrap(), ours).unwrap_err(), Errno::Inval);
    ///     // No IPv6 route to 3fff::1.
    ///     let nowhere = cache.input::<Ipv6>(&guard, 2, "3fff::1".parse().unwrap(), "2001:db8::9".parse().unwrap());
    ///     assert_eq!(nowhere.unwrap_err(), Errno::NetUnreach);
    /// }
    /// reader.quiescent();
    /// ```
    pub fn input<'a, I: CacheFamily>(
        &'a self,
        guard: &'a ReadGuard<'_>,
        iif: u32,
        dst: I::Addr,
        src: I::Addr,
    ) -> Result<RouteHandle<'a>, Errno> {
        self.input_flow::<I>(guard, iif, &I::flow_key(dst, Some(src)))
    }

    /// [`RouteCache::input`] for a packet's whole flow key: its TOS, mark
    /// and L4 fields steer policy rules and the multipath hash as they do
    /// the kernel's (`ip_route_input_rcu`, `ip6_route_input_lookup`;
    /// `key.oif` is ignored).
    pub fn input_flow<'a, I: CacheFamily>(
        &'a self,
        guard: &'a ReadGuard<'_>,
        iif: u32,
        key: &I::FlowKey,
    ) -> Result<RouteHandle<'a>, Errno> {
        let fwd = self.source.lookup_input::<I>(guard, iif, key)?;
        self.input_of::<I>(guard, iif, key, fwd)
    }

    /// [`RouteCache::input_flow`] for a burst of packets received on
    /// `iif`: the FIB's input burst ([`RouteSource::lookup_input_burst`])
    /// for all of `keys`, then each key's input route as `input_flow`
    /// gives it (`out[i]` for `keys[i]`). Allocates nothing beyond what
    /// `input_flow` would for the same keys.
    ///
    /// # Errors
    /// `Inval`, with `out` untouched, when `keys` and `out` differ in
    /// length.
    pub fn input_burst<'a, I: CacheFamily>(
        &'a self,
        guard: &'a ReadGuard<'_>,
        iif: u32,
        keys: &[I::FlowKey],
        out: &mut [Result<RouteHandle<'a>, Errno>],
    ) -> Result<(), Errno> {
        self.burst::<I>(
            keys,
            out,
            |keys, fwds| self.source.lookup_input_burst::<I>(guard, iif, keys, fwds),
            |key, fwd| self.input_of::<I>(guard, iif, key, fwd),
        )
    }

    /// The input route of `key` once its FIB input lookup answered `fwd`.
    #[inline(always)]
    fn input_of<'a, I: CacheFamily>(
        &'a self,
        guard: &'a ReadGuard<'_>,
        iif: u32,
        key: &I::FlowKey,
        fwd: I::Forward,
    ) -> Result<RouteHandle<'a>, Errno> {
        self.route_via(
            guard,
            SlotKind::Input,
            NexthopKey::of::<I>(&fwd),
            I::flow(key).dst.into(),
            None,
            // `move`, as in `output_of`.
            move || self.source.describe_input::<I>(guard, iif, key, &fwd),
        )
    }

    /// The source address of an IPv6 flow sent by `route` (from
    /// [`RouteCache::output`]): the route's own when it names one, else
    /// picked for this destination (flag
    /// [`SRC_PER_FLOW`](crate::route::flags::SRC_PER_FLOW)), as the kernel
    /// picks it after its route lookup. `None`: no address to send from.
    pub fn source_v6(
        &self,
        guard: &ReadGuard<'_>,
        route: &Route,
        dst: Ipv6Addr,
    ) -> Result<Option<Ipv6Addr>, Errno> {
        if route.flags & flags::SRC_PER_FLOW == 0 {
            return Ok(match route.src_addr() {
                Some(IpAddr::V6(a)) => Some(a),
                _ => None,
            });
        }
        self.source.select_source_v6(guard, route.dev, dst)
    }

    /// The cached route in `slot` of nexthop `nk` for destination `dst`;
    /// `describe` builds a route on a miss. An output flow that names its
    /// source (`src`: a bound socket, a tunnel with `local`) gets a route
    /// of its own with that source, uncached: a slot serves every flow
    /// through the nexthop, so its route carries the nexthop's source.
    /// Hold it ([`RouteCache::hold_output`]) rather than ask per packet.
    /// Input routes pass no `src` (the packet's is not ours to send from).
    fn route_via<'a>(
        &'a self,
        guard: &'a ReadGuard<'_>,
        slot: SlotKind,
        nk: NexthopKey,
        dst: IpAddr,
        src: Option<IpAddr>,
        describe: impl Fn() -> Result<RouteDetails, Errno>,
    ) -> Result<RouteHandle<'a>, Errno> {
        let nh = self.nexthop(guard, nk)?;
        let route = if src.is_some() || nk.class == CACHE_CLASS_UNSHARED {
            // Unshared classes: the FIB ran out of classes, so the key
            // cannot tell this route's src/mtu from another's.
            let mut data = describe()?.data;
            data.stamp = nh.generation();
            if let Some(src) = src {
                data.src = fibre_fib::addr_key(&src);
                data.flags &= !flags::SRC_PER_FLOW;
            }
            if slot == SlotKind::Input {
                data.flags |= flags::INPUT;
            }
            RouteHandle::Held(HeldRoute::new(data))
        } else {
            Self::cached_route(&self.retired, nh, slot, describe)?
        };
        match self.live_exception(nh, dst) {
            None => Ok(route),
            Some(exception) => {
                // The nexthop's route with the exception applied: no FIB
                // call per packet, only a copy of its line.
                let mut data = *route.data();
                apply_exception(&mut data, &exception);
                Ok(RouteHandle::Held(HeldRoute::new(data)))
            }
        }
    }

    /// The route in `slot` of `nh`, rebuilt with `describe` when missing
    /// or stale. `nh` must be borrowed from the nexthop map under a read
    /// guard: `'a` is then no longer than that read section, which is what
    /// makes lending a slot's route for `'a` sound.
    fn cached_route<'a>(
        retired: &RcuCell<Option<HeldRoute>>,
        nh: &'a NexthopCache,
        slot: SlotKind,
        describe: impl Fn() -> Result<RouteDetails, Errno>,
    ) -> Result<RouteHandle<'a>, Errno> {
        let slot_ref: &Slot = match slot {
            SlotKind::Input => &nh.input,
            #[cfg(feature = "baselines")]
            SlotKind::SharedOutput => &nh.shared_output,
            SlotKind::PerCore(w) => &nh.output[w.index() % nh.output.len()],
        };
        let current = slot_ref.load(Ordering::Acquire);
        let generation = nh.generation();
        if !current.is_null() {
            // SAFETY: a non-null slot owns a reference; a replaced route's
            // reference is released only a grace period after the swap,
            // and the caller's guard keeps this read section open for 'a
            // (`nh: &'a` was read under it).
            let route = unsafe { &*current };
            if route.stamp == generation {
                return Ok(RouteHandle::Borrowed(route));
            }
        }
        // Miss or stale: build with the generation read before building, so
        // an invalidation racing with us leaves the new route stale too.
        let mut data = describe()?.data;
        data.stamp = generation;
        data.flags |= flags::CACHED;
        if slot == SlotKind::Input {
            data.flags |= flags::INPUT;
        }
        let fresh = HeldRoute::new(data).into_raw();
        match slot_ref.compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire) {
            Ok(old) => {
                if !old.is_null() {
                    // SAFETY: we swapped `old` out, so we own the slot's
                    // reference to it.
                    let old = unsafe { HeldRoute::from_raw(old) };
                    retired.publish(Some(old));
                }
                // SAFETY: the slot owns `fresh` now; if another reader
                // replaces it, the release waits for our grace period.
                Ok(RouteHandle::Borrowed(unsafe { &*fresh }))
            }
            Err(_) => {
                // Lost the race: use our route uncached.
                // SAFETY: `fresh` was not installed; we still own it.
                let mut held = unsafe { HeldRoute::from_raw(fresh) };
                strip_cached(&mut held);
                Ok(RouteHandle::Held(held))
            }
        }
    }

    /// The live exception of `dst` on `nh`, if it has any.
    fn live_exception(&self, nh: &NexthopCache, dst: IpAddr) -> Option<Exception> {
        if !nh.has_exceptions.load(Ordering::Acquire) {
            return None;
        }
        let mut table = nh.exceptions_if_any()?;
        let now = self.clock.now_ms();
        let found = table.get(dst, now);
        if found.is_none() && table.expire_if_due(now) > 0 {
            nh.note_exceptions(&table);
        }
        found
    }

    /// A held route for a flow plus the generations it depends on: what a
    /// socket or tunnel caches; check it with [`CachedDst::is_valid`].
    pub fn hold_output<I: CacheFamily>(
        &self,
        guard: &ReadGuard<'_>,
        worker: WorkerId,
        key: &I::FlowKey,
    ) -> Result<CachedDst, Errno> {
        let fwd = self.source.lookup::<I>(guard, key)?;
        let details = self.source.describe::<I>(guard, key, &fwd)?;
        let table = I::forward(&fwd).table;
        let prefix = self.prefix_generation(table, details.matched);
        let prefix_seen = prefix.load(Ordering::Acquire);
        let nh = Arc::clone(self.nexthop(guard, NexthopKey::of::<I>(&fwd))?);
        let nexthop_seen = nh.generation();
        let route = self
            .output::<I>(guard, SlotKind::PerCore(worker), key)?
            .hold()
            .ok_or(Errno::NetUnreach)?;
        Ok(CachedDst {
            route,
            nexthop: nh,
            nexthop_seen,
            prefix,
            prefix_seen,
            matched: details.matched,
            table,
        })
    }

    fn prefix_generation(&self, table: TableId, prefix: Prefix) -> Arc<AtomicU64> {
        let mut map = self.prefixes.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(
            map.entry(table)
                .or_default()
                .entry(prefix)
                .or_insert_with(|| Arc::new(AtomicU64::new(1))),
        )
    }

    /// A nexthop changed (or went): its cached routes are stale from now
    /// on and its exceptions are dropped. Other nexthops' routes stay
    /// valid. Returns false if no route through it was ever cached.
    pub fn invalidate_nexthop(&self, key: NexthopKey) -> bool {
        self.changes.fetch_add(1, Ordering::AcqRel);
        let mut reader = self.domain.register();
        let found = {
            let guard = reader.read();
            match self.nexthops.read(&guard).get(&key) {
                Some(nh) => {
                    nh.bump();
                    if let Some(mut t) = nh.exceptions_if_any() {
                        t.remove_where(|_| true);
                        nh.note_exceptions(&t);
                    }
                    true
                }
                None => false,
            }
        };
        reader.quiescent();
        found
    }

    /// A nexthop is gone for good (its last route deleted): invalidates it
    /// and removes its entry, so that its cached routes and exceptions are
    /// freed once no reader can see them (a grace period; sooner for none,
    /// later if a [`CachedDst`] still holds the entry). Returns false if it
    /// had no entry.
    pub fn forget_nexthop(&self, key: NexthopKey) -> bool {
        if !self.invalidate_nexthop(key) {
            return false;
        }
        self.nexthops.update(|m| m.remove(&key)).is_some()
    }

    /// How many nexthops have an entry.
    pub fn nexthop_count(&self) -> usize {
        self.nexthop_keys().len()
    }

    /// A device changed (down, MTU, address): every nexthop through it is
    /// invalidated. Returns how many.
    pub fn invalidate_device(&self, ifindex: u32) -> usize {
        let keys = self.nexthop_keys();
        keys.into_iter()
            .filter(|k| k.dev == ifindex)
            .filter(|k| self.invalidate_nexthop(*k))
            .count()
    }

    /// The route for `prefix` in `table` was added, changed or deleted:
    /// held routes whose destination matched `prefix` or a prefix that
    /// contains it become stale (a more specific route may now win), others
    /// stay valid; exceptions for destinations inside `prefix` are dropped.
    /// Returns how many prefix generations were bumped.
    pub fn invalidate_prefix(&self, table: TableId, prefix: Prefix) -> usize {
        self.changes.fetch_add(1, Ordering::AcqRel);
        let bumped = {
            let map = self.prefixes.lock().unwrap_or_else(|e| e.into_inner());
            map.get(&table).map_or(0, |t| bump_ancestors(t, prefix))
        };
        self.drop_exceptions_under(prefix, Some(table));
        bumped
    }

    /// Drops the exceptions for destinations inside `prefix` on nexthops
    /// of `table` (of every table when None).
    fn drop_exceptions_under(&self, prefix: Prefix, table: Option<TableId>) {
        let mut reader = self.domain.register();
        {
            let guard = reader.read();
            for nh in self.nexthops.read(&guard).values() {
                if table.is_some_and(|t| nh.key.table != t) {
                    continue;
                }
                if let Some(mut t) = nh.exceptions_if_any() {
                    t.remove_where(|e| prefix.contains(&e.dst));
                    nh.note_exceptions(&t);
                }
            }
        }
        reader.quiescent();
    }

    /// A route for `prefix` changed in some table, with policy rules in
    /// play: held routes whose matched prefix contains `prefix` or lies
    /// inside it, in any table, become stale, and exceptions inside it are
    /// dropped. Inside it too, because a table the rules visit first wins
    /// over a later one whatever the prefix lengths (a /8 added to table
    /// 100 takes 10.1.1.5 from main's 10.1.1.0/24). Returns how many prefix
    /// generations were bumped.
    pub fn invalidate_prefix_everywhere(&self, prefix: Prefix) -> usize {
        self.changes.fetch_add(1, Ordering::AcqRel);
        let bumped = {
            let map = self.prefixes.lock().unwrap_or_else(|e| e.into_inner());
            map.values()
                .map(|t| bump_ancestors(t, prefix) + bump_inside(t, prefix))
                .sum()
        };
        self.drop_exceptions_under(prefix, None);
        bumped
    }

    /// Every cached route and every held route's check goes stale (links,
    /// addresses or rules changed: any answer may differ), as the kernel's
    /// IPv4 cache flush does; exceptions stay (a path MTU learnt is still
    /// true of the path), each checked against the FIB again when used.
    pub fn flush(&self) {
        self.changes.fetch_add(1, Ordering::AcqRel);
        {
            let map = self.prefixes.lock().unwrap_or_else(|e| e.into_inner());
            for generation in map.values().flat_map(|t| t.values()) {
                generation.fetch_add(1, Ordering::AcqRel);
            }
        }
        let mut reader = self.domain.register();
        {
            let guard = reader.read();
            for nh in self.nexthops.read(&guard).values() {
                nh.bump();
            }
        }
        reader.quiescent();
    }

    fn nexthop_keys(&self) -> Vec<NexthopKey> {
        let mut reader = self.domain.register();
        let keys = {
            let guard = reader.read();
            self.nexthops.read(&guard).keys().copied().collect()
        };
        reader.quiescent();
        keys
    }

    /// The nexthop a flow from `src` (when given: rules may select by
    /// source) to `dst` routes through now, and its route's details.
    fn resolve_flow<'a>(
        &'a self,
        guard: &'a ReadGuard<'_>,
        dst: IpAddr,
        src: Option<IpAddr>,
    ) -> Result<(&'a Arc<NexthopCache>, RouteDetails), Errno> {
        match dst {
            IpAddr::V4(d) => self.resolve_flow_of::<Ipv4>(guard, d, src),
            IpAddr::V6(d) => self.resolve_flow_of::<Ipv6>(guard, d, src),
        }
    }

    /// [`RouteCache::resolve_flow`] for family `I` (a `src` of the other
    /// family is left out).
    fn resolve_flow_of<'a, I: CacheFamily>(
        &'a self,
        guard: &'a ReadGuard<'_>,
        dst: I::Addr,
        src: Option<IpAddr>,
    ) -> Result<(&'a Arc<NexthopCache>, RouteDetails), Errno> {
        let key = I::flow_key(dst, src.and_then(I::from_ip));
        let fwd = self.source.lookup::<I>(guard, &key)?;
        let details = self.source.describe::<I>(guard, &key, &fwd)?;
        Ok((self.nexthop(guard, NexthopKey::of::<I>(&fwd))?, details))
    }

    /// An ICMP fragmentation-needed (IPv4) or packet-too-big (IPv6) report
    /// for `dst`, fed by the forwarding plane: clamped as the kernel does
    /// ([`clamp_pmtu`]), recorded as an exception on the nexthop `dst`
    /// routes through now.
    pub fn update_pmtu(&self, guard: &ReadGuard<'_>, dst: IpAddr, mtu: u32) -> PmtuOutcome {
        self.update_pmtu_from(guard, dst, None, mtu)
    }

    /// [`RouteCache::update_pmtu`] for the flow the ICMP error quotes, from
    /// `src` to `dst`: the kernel's `ipv4_update_pmtu` builds its flow from
    /// the quoted header, so with rules that select by source the
    /// exception lands on the nexthop that flow uses.
    pub fn update_pmtu_from(
        &self,
        guard: &ReadGuard<'_>,
        dst: IpAddr,
        src: Option<IpAddr>,
        mtu: u32,
    ) -> PmtuOutcome {
        let Ok((nh, details)) = self.resolve_flow(guard, dst, src) else {
            return PmtuOutcome::NoRoute;
        };
        if details.data.flags & flags::MTU_LOCKED != 0 {
            return PmtuOutcome::Locked;
        }
        let now = self.clock.now_ms();
        let config = self.exception_config;
        let mut table = nh.exceptions_locked(config);
        let existing = table.get(dst, now);
        if existing.is_some_and(|e| e.mtu_locked) {
            return PmtuOutcome::Locked;
        }
        let current = existing
            .map(|e| e.pmtu)
            .filter(|m| *m != 0)
            .unwrap_or(details.data.mtu);
        let outcome = clamp_pmtu(dst, mtu, current, config.min_pmtu_v4);
        // The same MTU again refreshes the exception only once it is half
        // expired (__ip_rt_update_pmtu), so a flood of reports does not
        // keep rewriting it.
        let fresh = existing.is_some_and(|e| {
            outcome == PmtuOutcome::Recorded(e.pmtu)
                && e.expires_ms.saturating_sub(now) > config.expires_ms / 2
        });
        if fresh {
            return outcome;
        }
        match outcome {
            PmtuOutcome::Recorded(m) => table.set_pmtu(dst, m, now),
            PmtuOutcome::RecordedLocked(m) => table.set_pmtu_locked(dst, m, now),
            _ => return outcome,
        }
        nh.note_exceptions(&table);
        outcome
    }

    /// [`RouteCache::update_pmtu`] for an IPv4 destination.
    pub fn update_pmtu_v4(&self, guard: &ReadGuard<'_>, dst: Ipv4Addr, mtu: u32) -> PmtuOutcome {
        self.update_pmtu(guard, IpAddr::V4(dst), mtu)
    }

    /// An ICMP redirect for `dst` to `gateway` (IPv4), recorded as an
    /// exception on the nexthop `dst` routes through. Refused (false)
    /// when `dst` does not route, or the new gateway is unspecified,
    /// multicast, broadcast or `dst` itself (the kernel's
    /// `__ip_do_redirect`). IPv4 only: IPv6 learns redirects from
    /// Neighbour Discovery (`rt6_do_redirect`, RFC 4861 section 8), with
    /// other checks (the new gateway must be link-local), not modelled here.
    pub fn redirect_v4(&self, guard: &ReadGuard<'_>, dst: Ipv4Addr, gateway: Ipv4Addr) -> bool {
        if gateway.is_unspecified()
            || gateway.is_multicast()
            || gateway.is_broadcast()
            || gateway == dst
        {
            return false;
        }
        let key = Ipv4::flow_key(dst, None);
        let Ok(fwd) = self.source.lookup::<Ipv4>(guard, &key) else {
            return false;
        };
        let Ok(nh) = self.nexthop(guard, NexthopKey::of::<Ipv4>(&fwd)) else {
            return false;
        };
        let config = self.exception_config;
        let now = self.clock.now_ms();
        let mut table = nh.exceptions_locked(config);
        table.set_redirect(IpAddr::V4(dst), IpAddr::V4(gateway), now);
        nh.note_exceptions(&table);
        true
    }

    /// Every live exception with its nexthop (`ip route show cache`).
    pub fn exceptions(&self) -> Vec<(NexthopKey, Exception)> {
        let now = self.clock.now_ms();
        let mut reader = self.domain.register();
        let mut all = Vec::new();
        {
            let guard = reader.read();
            for nh in self.nexthops.read(&guard).values() {
                if let Some(t) = nh.exceptions_if_any() {
                    all.extend(t.entries(now).into_iter().map(|e| (nh.key, e)));
                }
            }
        }
        reader.quiescent();
        all.sort_by_key(|(k, e)| (*k, e.dst));
        all
    }

    /// The live exception for `dst`, if any, with its nexthop (for the
    /// `cache` line of `ip route get`).
    pub fn exception_for(&self, dst: IpAddr) -> Option<(NexthopKey, Exception)> {
        self.exception_for_flow(dst, None)
    }

    /// The live exception for `dst` on the nexthop a flow from `src` (when
    /// given) uses.
    pub fn exception_for_flow(
        &self,
        dst: IpAddr,
        src: Option<IpAddr>,
    ) -> Option<(NexthopKey, Exception)> {
        let mut reader = self.domain.register();
        let found = {
            let guard = reader.read();
            self.resolve_flow(&guard, dst, src)
                .ok()
                .and_then(|(nh, _)| self.live_exception(nh, dst).map(|e| (nh.key, e)))
        };
        reader.quiescent();
        found
    }

    /// [`RouteCache::exception_for`] an IPv4 destination.
    pub fn exception_for_v4(&self, dst: Ipv4Addr) -> Option<(NexthopKey, Exception)> {
        self.exception_for(IpAddr::V4(dst))
    }

    /// Bytes held by all exception tables now.
    pub fn exception_bytes(&self) -> usize {
        let mut reader = self.domain.register();
        let bytes = {
            let guard = reader.read();
            self.nexthops
                .read(&guard)
                .values()
                .filter_map(|nh| nh.exceptions_if_any().map(|t| t.heap_bytes()))
                .sum()
        };
        reader.quiescent();
        bytes
    }
}

/// Prefix generations of one table, by prefix.
type TablePrefixes = std::collections::BTreeMap<Prefix, Arc<AtomicU64>>;
/// Prefix generations by table.
type PrefixGenerations = std::collections::BTreeMap<TableId, TablePrefixes>;

/// Bumps `prefix` and every tracked prefix containing it; returns how many.
fn bump_ancestors(table: &TablePrefixes, prefix: Prefix) -> usize {
    let mut bumped = 0;
    for len in 0..=prefix.len() {
        if let Some(g) = table.get(&Prefix::containing(prefix.addr(), len)) {
            g.fetch_add(1, Ordering::AcqRel);
            bumped += 1;
        }
    }
    bumped
}

/// Bumps every tracked prefix strictly inside `prefix`; returns how many.
/// Prefixes order by address then length, so they all lie between
/// `prefix` and the host prefix of its last address.
fn bump_inside(table: &TablePrefixes, prefix: Prefix) -> usize {
    let last = Prefix::host(last_address(&prefix));
    let mut bumped = 0;
    for (p, g) in table.range(prefix..=last) {
        if p.len() > prefix.len() && prefix.contains(&p.addr()) {
            g.fetch_add(1, Ordering::AcqRel);
            bumped += 1;
        }
    }
    bumped
}

/// The highest address inside `prefix`.
fn last_address(prefix: &Prefix) -> IpAddr {
    match prefix.addr() {
        IpAddr::V4(a) => {
            let host_bits = u32::MAX.checked_shr(u32::from(prefix.len())).unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(a) | host_bits))
        }
        IpAddr::V6(a) => {
            let host_bits = u128::MAX.checked_shr(u32::from(prefix.len())).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(a) | host_bits))
        }
    }
}

/// Makes `data` carry an exception: its MTU, its redirected gateway, its
/// expiry.
fn apply_exception(data: &mut crate::route::RouteData, e: &Exception) {
    if e.pmtu != 0 && e.pmtu < data.mtu {
        data.mtu = e.pmtu;
        data.flags |= flags::PMTU;
        if e.mtu_locked {
            data.flags |= flags::MTU_LOCKED;
        }
    }
    if let Some(gw) = e.gateway {
        data.gateway = fibre_fib::addr_key(&gw);
        data.flags |= flags::GATEWAY | flags::REDIRECTED;
    }
    data.expires_ms = e.expires_ms;
    data.flags &= !flags::CACHED;
}

/// A route that lost its install race is not cached: clear the flag.
fn strip_cached(held: &mut HeldRoute) {
    // The route is ours alone (count 1, never published), but `Route`
    // data is immutable once made; rebuild rather than mutate.
    let mut data = *held.data();
    data.flags &= !flags::CACHED;
    *held = HeldRoute::new(data);
}

/// The cache hears of every batch its FIB's writer publishes
/// ([`fibre_fib::shared::FibWriter::add_listener`]): a route change stales
/// the routes that matched its prefix or a prefix containing it and drops
/// the exceptions under it; anything else flushes.
impl<S: RouteSource> FibListener for RouteCache<S> {
    fn fib_changed(&self, changes: &[FibChange]) {
        if changes.contains(&FibChange::Everything) {
            self.flush();
            return;
        }
        let mut seen = std::collections::HashSet::new();
        for change in changes {
            if let FibChange::Prefix(prefix) = change {
                if seen.insert(*prefix) {
                    self.invalidate_prefix_everywhere(*prefix);
                }
            }
        }
    }
}
