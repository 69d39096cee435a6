//! The engine of `fibre bench udpflood`: the experiment of the per-CPU output route
//! cache (Eric Dumazet, "ipv4: percpu nh_rth_output cache", 2012:
//! 24 x 1,000,000 frames to a dummy device, 5.24 s before, 2.06 s after,
//! 6.60 s on linux-3.5).
//!
//! `threads` threads each send `frames` UDP frames to their own flow; all
//! flows share one nexthop. Per frame: an output route lookup, a hold of
//! the route (except `noref`), the IPv4/UDP header built with the route's
//! source address and checked against its MTU, a transmit to a dummy
//! device (per-worker counters, added every 32 frames), the release.
//!
//! Strategies, in one run:
//! * `global-cache`: a linux-3.5-like global hash of routes keyed by flow,
//!   each with a reference count and use/last-use fields written per
//!   lookup (no FIB lookup: that cache skipped it).
//! * `shared`: the FIB, then one cached output route per nexthop for all
//!   cores (one reference count for everybody): the "before".
//! * `percpu`: the FIB, then this core's cached output route: the "after".
//! * `noref`: like `percpu` but the route is borrowed, no counter touched.

use std::collections::HashMap;
use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicU64, Ordering};

use fibre_base::{DropReason, Ipv4, WorkerId};
use fibre_dev::stats::{BatchCounts, DeviceStats};
use fibre_fib::{config, Errno, Fib, FlowKeyV4};
use fibre_rcu::{Domain, RcuCell};
use fibre_route::{HeldRoute, Route, RouteCache, RouteSource, SlotKind};

use crate::figures::{SummaryFigure, Sweep, SweepRow};
use crate::timing::run_threads;

/// How a frame gets its route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// linux-3.5's global route cache.
    GlobalCache,
    /// One cached output route per nexthop, shared refcount (before).
    Shared,
    /// Per-core cached output routes (after).
    PerCpu,
    /// Per-core cached routes, borrowed: no refcount.
    NoRef,
}

impl Strategy {
    /// Every strategy, in report order.
    pub const ALL: [Strategy; 4] = [
        Strategy::GlobalCache,
        Strategy::Shared,
        Strategy::PerCpu,
        Strategy::NoRef,
    ];

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::GlobalCache => "global-cache",
            Strategy::Shared => "shared",
            Strategy::PerCpu => "percpu",
            Strategy::NoRef => "noref",
        }
    }

    /// The strategy named `name`.
    ///
    /// ```
    /// use fibre_bench::udpflood::engine::Strategy;
    /// assert_eq!(Strategy::from_name("percpu"), Some(Strategy::PerCpu));
    /// assert_eq!(Strategy::from_name("nope"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// Parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdpFloodParams {
    /// Most threads; every count from 1 to this is run.
    pub threads: usize,
    /// Frames per thread.
    pub frames: u64,
    /// UDP payload bytes.
    pub payload: usize,
    /// Strategies to run.
    pub strategies: Vec<Strategy>,
}

impl Default for UdpFloodParams {
    fn default() -> Self {
        UdpFloodParams {
            threads: 2,
            frames: 10_000_000,
            payload: 18,
            strategies: Strategy::ALL.to_vec(),
        }
    }
}

/// Why the experiment could not run.
#[derive(Debug, thiserror::Error)]
pub enum UdpFloodError {
    /// Zero threads or frames.
    #[error(
        "udpflood needs at least one thread and one frame (got {threads} threads, {frames} frames)"
    )]
    Empty {
        /// Threads asked for.
        threads: usize,
        /// Frames asked for.
        frames: u64,
    },
    /// The payload does not fit a frame under the device MTU.
    #[error("a {0}-byte UDP payload does not fit a 1500-byte MTU")]
    PayloadTooLarge(usize),
    /// The experiment's FIB could not be built.
    #[error("building udpflood's FIB: {0}")]
    Fib(String),
    /// A frame found no route.
    #[error("route lookup failed: {}", .0.message())]
    Lookup(Errno),
}

/// One strategy at one thread count.
#[derive(Debug, Clone, PartialEq)]
pub struct UdpFloodRow {
    /// Strategy.
    pub strategy: Strategy,
    /// Threads.
    pub threads: usize,
    /// Frames sent in all.
    pub frames: u64,
    /// Wall seconds.
    pub seconds: f64,
    /// CPU seconds of all threads together.
    pub cpu_seconds: f64,
    /// Frames the dummy device counted.
    pub transmitted: u64,
}

impl SweepRow for UdpFloodRow {
    type Case = Strategy;
    fn case(&self) -> (Strategy, usize) {
        (self.strategy, self.threads)
    }
}

impl UdpFloodRow {
    /// Million frames per wall second.
    pub fn mpps(&self) -> f64 {
        self.frames as f64 / self.seconds / 1e6
    }

    /// CPU nanoseconds per frame (immune to other load on the machine,
    /// except for cache effects).
    pub fn cpu_ns_per_frame(&self) -> f64 {
        self.cpu_seconds * 1e9 / self.frames as f64
    }

    /// Cores actually used on average: CPU seconds over wall seconds (the
    /// shared machine often leaves fewer than `threads`, and then threads
    /// take turns instead of contending).
    pub fn parallelism(&self) -> f64 {
        self.cpu_seconds / self.seconds
    }

    /// Million frames per second if each thread had its core alone:
    /// threads / (CPU ns per frame).
    pub fn mpps_per_cpu(&self) -> f64 {
        self.threads as f64 * 1e3 / self.cpu_ns_per_frame()
    }
}

/// A run's rows, strategy-major.
pub type UdpFloodResult = Sweep<UdpFloodParams, UdpFloodRow>;

impl UdpFloodResult {
    /// Throughput (per CPU time) of `strategy` over `shared` at `threads`.
    pub fn ratio_to_shared(&self, strategy: Strategy, threads: usize) -> Option<f64> {
        self.ratio(
            (strategy, threads),
            (Strategy::Shared, threads),
            UdpFloodRow::mpps_per_cpu,
        )
    }

    /// Throughput (per CPU time) at `threads` over 1 thread.
    pub fn scaling(&self, strategy: Strategy, threads: usize) -> Option<f64> {
        self.ratio(
            (strategy, threads),
            (strategy, 1),
            UdpFloodRow::mpps_per_cpu,
        )
    }

    /// Wall-clock throughput at `threads` over 1 thread.
    pub fn wall_scaling(&self, strategy: Strategy, threads: usize) -> Option<f64> {
        self.ratio((strategy, threads), (strategy, 1), UdpFloodRow::mpps)
    }

    /// The figures for `fibre bench`'s summary: per strategy at the most
    /// threads, Mpps per CPU with the ratio to `shared`.
    pub fn summary(&self) -> Vec<SummaryFigure> {
        let t = self.params.threads;
        self.params
            .strategies
            .iter()
            .filter_map(|s| {
                let row = self.row(*s, t)?;
                Some(SummaryFigure {
                    name: format!("udpflood {} {t} thread(s)", s.name()),
                    value: row.mpps_per_cpu(),
                    unit: "Mpps (per CPU time)",
                    ratio_to: self
                        .ratio_to_shared(*s, t)
                        .filter(|_| *s != Strategy::Shared)
                        .map(|r| (r, format!("udpflood shared {t} thread(s)"))),
                })
            })
            .collect()
    }

    /// The table printed by `fibre bench udpflood`.
    pub fn render(&self) -> String {
        let mut out = format!(
            "udpflood: {} frame(s) per thread, {}-byte payload, dummy device\n\
             {:<13} {:>3} {:>8} {:>8} {:>8} {:>6} {:>9} {:>10} {:>9} {:>9}\n",
            self.params.frames,
            self.params.payload,
            "strategy",
            "T",
            "wall s",
            "Mpps",
            "cpu s",
            "cores",
            "ns/frame",
            "Mpps/cpu",
            "x shared",
            "scaling"
        );
        for r in &self.rows {
            let ratio = self
                .ratio_to_shared(r.strategy, r.threads)
                .map_or("-".to_string(), |x| format!("{x:.2}"));
            let scaling = self
                .scaling(r.strategy, r.threads)
                .map_or("-".to_string(), |x| format!("{x:.2}"));
            out.push_str(&format!(
                "{:<13} {:>3} {:>8.3} {:>8.2} {:>8.3} {:>6.2} {:>9.1} {:>10.2} {:>9} {:>9}\n",
                r.strategy.name(),
                r.threads,
                r.seconds,
                r.mpps(),
                r.cpu_seconds,
                r.parallelism(),
                r.cpu_ns_per_frame(),
                r.mpps_per_cpu(),
                ratio,
                scaling
            ));
        }
        out
    }
}

/// One entry of the linux-3.5-like global cache.
struct GlobalEntry {
    key: FlowKeyV4,
    route: HeldRoute,
}

/// linux-3.5's route cache, reduced to its data-path cost: a global hash
/// of routes keyed by the whole flow, read under RCU, a hold per lookup
/// plus `dst_use()`'s plain writes of `__use` and `lastuse`.
struct GlobalCache {
    buckets: RcuCell<Vec<Vec<std::sync::Arc<GlobalEntry>>>>,
    uses: AtomicU64,
    lastuse: AtomicU64,
}

const GLOBAL_BUCKETS: usize = 1024;

impl GlobalCache {
    fn new(domain: &Domain) -> GlobalCache {
        GlobalCache {
            buckets: RcuCell::new(domain, vec![Vec::new(); GLOBAL_BUCKETS]),
            uses: AtomicU64::new(0),
            lastuse: AtomicU64::new(0),
        }
    }

    /// linux-3.5's cache key: (daddr, saddr, tos, oif, mark); no ports.
    fn same_key(a: &FlowKeyV4, b: &FlowKeyV4) -> bool {
        (a.dst, a.src, a.tos, a.oif, a.mark) == (b.dst, b.src, b.tos, b.oif, b.mark)
    }

    fn bucket(key: &FlowKeyV4) -> usize {
        let h = (u64::from(key.dst) << 32 | u64::from(key.src))
            ^ (u64::from(key.oif) << 8 | u64::from(key.tos))
            ^ u64::from(key.mark).rotate_left(17);
        (h.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 54) as usize % GLOBAL_BUCKETS
    }

    fn lookup<S: RouteSource>(
        &self,
        guard: &fibre_rcu::ReadGuard<'_>,
        source: &S,
        key: &FlowKeyV4,
        now: u64,
    ) -> Result<HeldRoute, Errno> {
        let b = Self::bucket(key);
        if let Some(e) = self.buckets.read(guard)[b]
            .iter()
            .find(|e| Self::same_key(&e.key, key))
        {
            // dst_use(): a hold and two plain (non-atomic in C) writes.
            let held = e.route.clone();
            self.uses
                .store(self.uses.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            self.lastuse.store(now, Ordering::Relaxed);
            return Ok(held);
        }
        let fwd = source.lookup::<Ipv4>(guard, key)?;
        let data = source.describe::<Ipv4>(guard, key, &fwd)?.data;
        let route = HeldRoute::new(data);
        let held = route.clone();
        let entry = std::sync::Arc::new(GlobalEntry { key: *key, route });
        self.buckets.update(|t| t[b].push(entry));
        Ok(held)
    }
}

/// Writes the IPv4 and UDP headers of a frame to `dst` from the route's
/// source; returns the frame length, or `None` if it exceeds the route's
/// MTU (the frame is dropped, as `ip_append_data` would fragment or fail).
fn build_frame(buf: &mut [u8], route: &Route, key: &FlowKeyV4, payload: usize) -> Option<usize> {
    let total = 20 + 8 + payload;
    if total > route.mtu as usize || total > buf.len() {
        return None;
    }
    let src = route.src as u32;
    let ip = &mut buf[..20];
    ip[0] = 0x45;
    ip[1] = key.tos;
    ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    ip[4..6].copy_from_slice(&[0, 0]);
    ip[6..8].copy_from_slice(&[0x40, 0]); // DF
    ip[8] = 64;
    ip[9] = 17;
    ip[10..12].copy_from_slice(&[0, 0]);
    ip[12..16].copy_from_slice(&src.to_be_bytes());
    ip[16..20].copy_from_slice(&key.dst.to_be_bytes());
    let sum = fibre_net::checksum::checksum(ip);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    let udp = &mut buf[20..28];
    udp[0..2].copy_from_slice(&key.sport.to_be_bytes());
    udp[2..4].copy_from_slice(&key.dport.to_be_bytes());
    udp[4..6].copy_from_slice(&((8 + payload) as u16).to_be_bytes());
    // Checksum 0 ("none", valid over IPv4): the dummy device offloads it,
    // as the kernel's dummy (NETIF_F_HW_CSUM) does.
    udp[6..8].copy_from_slice(&[0, 0]);
    Some(total)
}

/// The flow of thread `t`: as in the percpu nh_rth_output measurement, every sender aims
/// at one destination (one 3.5 cache entry, one nexthop); ports differ.
fn flow(t: usize) -> FlowKeyV4 {
    FlowKeyV4 {
        dst: u32::from(Ipv4Addr::new(198, 51, 100, 1)),
        sport: 1024 + t as u16,
        dport: 9,
        proto: 17,
        ..Default::default()
    }
}

const BATCH: u64 = 32;

fn flood_one<S: RouteSource>(
    strategy: Strategy,
    threads: usize,
    params: &UdpFloodParams,
    cache: &RouteCache<S>,
    global: &GlobalCache,
    device: &DeviceStats,
) -> Result<UdpFloodRow, UdpFloodError> {
    let domain = cache.domain();
    let (times, results) = run_threads(threads, |t| -> Result<(), Errno> {
        let worker = WorkerId::new(t as u32);
        let mut reader = domain.register_worker(worker);
        let key = flow(t);
        let mut buf = [0u8; 1500];
        let mut counts = BatchCounts::default();
        let own_slot = SlotKind::PerCore(worker);
        let mut sent = 0;
        while sent < params.frames {
            let n = BATCH.min(params.frames - sent);
            {
                let guard = reader.read();
                for _ in 0..n {
                    let len = match strategy {
                        Strategy::NoRef => {
                            let route = cache.output::<Ipv4>(&guard, own_slot, &key)?;
                            build_frame(&mut buf, &route, &key, params.payload)
                        }
                        Strategy::PerCpu | Strategy::Shared => {
                            let slot = if strategy == Strategy::PerCpu {
                                own_slot
                            } else {
                                SlotKind::SharedOutput
                            };
                            let route = cache
                                .output::<Ipv4>(&guard, slot, &key)?
                                .hold()
                                .ok_or(Errno::NetUnreach)?;
                            build_frame(&mut buf, &route, &key, params.payload)
                        }
                        Strategy::GlobalCache => {
                            let route = global.lookup(&guard, cache.source(), &key, sent)?;
                            build_frame(&mut buf, &route, &key, params.payload)
                        }
                    };
                    match len {
                        Some(len) => {
                            black_box(&buf[..len]);
                            counts.tx_packets += 1;
                            counts.tx_bytes += len as u64;
                        }
                        None => counts.drop(DropReason::TooBig),
                    }
                }
            }
            reader.quiescent();
            device.add(worker, &counts);
            counts = BatchCounts::default();
            sent += n;
        }
        Ok(())
    });
    for r in results {
        r.map_err(UdpFloodError::Lookup)?;
    }
    Ok(UdpFloodRow {
        strategy,
        threads,
        frames: params.frames * threads as u64,
        seconds: times.wall.as_secs_f64(),
        cpu_seconds: times.cpu_total().as_secs_f64(),
        transmitted: 0,
    })
}

/// Runs every strategy at every thread count from 1 to `params.threads`.
///
/// ```
/// use fibre_bench::udpflood::engine::{run, Strategy, UdpFloodParams};
/// let result = run(&UdpFloodParams { threads: 2, frames: 2_000, ..Default::default() }).unwrap();
/// let row = result.row(Strategy::PerCpu, 2).unwrap();
/// assert_eq!((row.frames, row.transmitted), (4_000, 4_000));
/// assert!(result.render().contains("noref"));
/// ```
pub fn run(params: &UdpFloodParams) -> Result<UdpFloodResult, UdpFloodError> {
    if params.threads == 0 || params.frames == 0 {
        return Err(UdpFloodError::Empty {
            threads: params.threads,
            frames: params.frames,
        });
    }
    if 28 + params.payload > 1500 {
        return Err(UdpFloodError::PayloadTooLarge(params.payload));
    }
    let fib = fib()?;
    let domain = Domain::new();
    let cache = RouteCache::new(&domain, fib, params.threads);
    let mut rows = Vec::new();
    let mut seen: HashMap<Strategy, ()> = HashMap::new();
    for &strategy in &params.strategies {
        if seen.insert(strategy, ()).is_some() {
            continue;
        }
        for threads in 1..=params.threads {
            let global = GlobalCache::new(&domain);
            let device = DeviceStats::new(params.threads);
            let mut row = flood_one(strategy, threads, params, &cache, &global, &device)?;
            row.transmitted = device.snapshot().tx_packets;
            rows.push(row);
        }
    }
    Ok(UdpFloodResult {
        params: params.clone(),
        rows,
    })
}

/// The source address frames of [`run`] carry (for checks).
pub fn source_address() -> IpAddr {
    IpAddr::from(LOCAL_ADDR)
}

/// The address of `dummy0` in the experiment's FIB.
const LOCAL_ADDR: [u8; 4] = [10, 0, 0, 1];

/// The experiment's FIB: one device `dummy0` (MTU 1500) with 10.0.0.1/24,
/// and 198.51.100.0/24 via 10.0.0.2, so every flow to 198.51.100.x shares
/// one nexthop.
///
/// ```
/// let fib = fibre_bench::udpflood::engine::fib().unwrap();
/// let key = fibre_fib::FlowKeyV4 { dst: u32::from_be_bytes([198, 51, 100, 7]), ..Default::default() };
/// let fwd = fib.lookup_output_v4(&key).unwrap();
/// assert_eq!(fwd.gateway, u32::from_be_bytes([10, 0, 0, 2]));
/// ```
pub fn fib() -> Result<Fib, UdpFloodError> {
    let text = "\
link add dummy0 type dummy
link set dummy0 up
addr add 10.0.0.1/24 dev dummy0
route add 198.51.100.0/24 via 10.0.0.2
";
    let (fib, _) = config::apply_str(&Fib::new(), "udpflood", text, false)
        .map_err(|e| UdpFloodError::Fib(e.to_string()))?;
    Ok(fib)
}
