//! The engine of `fibre bench greflood`: T threads × N UDP frames of 200 bytes through
//! one GRE tunnel to a dummy underlay, for each transmit strategy, at every
//! thread count from 1 to T.
//!
//! The question it answers is the one of Linux's lockless GRE transmit
//! (`NETIF_F_LLTX`, 2010): how much does a per-device transmit lock cost
//! when several cores send through one tunnel, and what does `oseq` (a
//! shared sequence counter) take back?
//!
//! ```
//! use fibre_bench::greflood::engine::{run, GreFloodParams, Strategy};
//! let result = run(&GreFloodParams { threads: 2, frames_per_thread: 2_000, batch: 32,
//!                                    strategies: Strategy::ALL.to_vec(), repeats: 1 }).unwrap();
//! assert_eq!(result.rows.len(), 4 * 2);
//! assert!(result.rows.iter().all(|r| r.packets == r.threads as u64 * 2_000));
//! ```

use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use fibre_net::ip::{Protocol, PseudoHeader};
use fibre_net::{ipv4, udp};

use fibre_dev::gre::{GreConfig, TxMode};
use fibre_dev::route::{FixedRoutes, UnderlayRoute, UnderlayRoutes};
use fibre_dev::{PacketBatch, PacketBuf, Registry, Verdict, WorkerId, MAX_WORKERS};

use crate::figures::{SummaryFigure, Sweep, SweepRow};
use crate::timing::thread_cpu_time;

/// Size of every inner frame (IPv4 + UDP + payload), as in the lockless
/// GRE transmit's measurement.
pub const FRAME_LEN: usize = 200;

/// The tunnel's remote: what [`Underlay::routes`] must resolve.
pub const REMOTE: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 2);

/// Where the tunnel's frames go: the resolver of its underlay route and
/// the devices involved. The resolver is shared by every measurement (each
/// builds a fresh tunnel, whose per-worker route cache starts empty).
///
/// ```
/// use std::net::IpAddr;
/// use fibre_bench::greflood::engine::{Underlay, REMOTE};
/// use fibre_dev::WorkerId;
/// let fixed = Underlay::fixed();
/// let route = fixed.routes.resolve(WorkerId::new(0), IpAddr::V4(REMOTE), None).unwrap();
/// assert_eq!(route.oif, fixed.oif);
/// ```
#[derive(Debug, Clone)]
pub struct Underlay {
    /// Resolves [`REMOTE`] to a route leaving by `oif` with a source
    /// address and an MTU of at least 232 (a frame plus its headers).
    pub routes: Arc<dyn UnderlayRoutes>,
    /// ifindex of the dummy device the route leaves by.
    pub oif: u32,
    /// ifindex the tunnel gets (not `oif`).
    pub tunnel: u32,
}

impl Underlay {
    /// A fixed table: [`REMOTE`] via ifindex 1 from 192.0.2.1, MTU 1500;
    /// the tunnel is ifindex 2.
    pub fn fixed() -> Underlay {
        let routes = Arc::new(FixedRoutes::new());
        routes.set(
            IpAddr::V4(REMOTE),
            UnderlayRoute {
                oif: 1,
                gateway: None,
                src: Some(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1))),
                mtu: 1500,
            },
        );
        Underlay {
            routes,
            oif: 1,
            tunnel: 2,
        }
    }
}

/// A transmit strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Per-device lock, no sequence numbers.
    Locked,
    /// No lock, no sequence numbers.
    Lltx,
    /// Per-device lock, sequence numbers under it.
    LockedOseq,
    /// No lock, sequence numbers from one atomic counter.
    LltxOseq,
}

impl Strategy {
    /// Every strategy, baseline first.
    pub const ALL: [Strategy; 4] = [
        Strategy::Locked,
        Strategy::Lltx,
        Strategy::LockedOseq,
        Strategy::LltxOseq,
    ];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Locked => "locked",
            Strategy::Lltx => "lltx",
            Strategy::LockedOseq => "locked+oseq",
            Strategy::LltxOseq => "lltx+oseq",
        }
    }

    /// Parses a name.
    pub fn from_name(name: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|s| s.name() == name)
    }

    fn mode(self) -> TxMode {
        match self {
            Strategy::Locked | Strategy::LockedOseq => TxMode::Locked,
            Strategy::Lltx | Strategy::LltxOseq => TxMode::Lltx,
        }
    }

    fn oseq(self) -> bool {
        matches!(self, Strategy::LockedOseq | Strategy::LltxOseq)
    }
}

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GreFloodParams {
    /// Largest thread count; every count from 1 to it is measured.
    pub threads: usize,
    /// Frames each thread sends.
    pub frames_per_thread: u64,
    /// Frames per transmit call.
    pub batch: usize,
    /// Strategies, in report order.
    pub strategies: Vec<Strategy>,
    /// Measurements of each (strategy, threads) pair; the median is kept.
    /// Rounds go through every pair in turn, so a burst of load from
    /// elsewhere falls on all strategies alike.
    pub repeats: usize,
}

impl Default for GreFloodParams {
    fn default() -> Self {
        GreFloodParams {
            threads: 2,
            frames_per_thread: 2_000_000,
            batch: 32,
            strategies: Strategy::ALL.to_vec(),
            repeats: 5,
        }
    }
}

/// Why the experiment could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GreFloodError {
    /// A parameter out of range.
    #[error("invalid greflood parameter: {0}")]
    InvalidParameter(String),
    /// Frames were lost where none should be (a bug, reported not hidden).
    #[error("{strategy} with {threads} threads sent {sent} of {expected} frames")]
    Lost {
        /// Strategy name.
        strategy: &'static str,
        /// Thread count.
        threads: usize,
        /// Frames sent.
        sent: u64,
        /// Frames expected.
        expected: u64,
    },
}

/// One measurement: a strategy at a thread count.
#[derive(Debug, Clone, PartialEq)]
pub struct GreFloodRow {
    /// The strategy.
    pub strategy: Strategy,
    /// Threads sending at once.
    pub threads: usize,
    /// Frames sent in all.
    pub packets: u64,
    /// Wall-clock seconds from the common start to the last thread's end.
    pub seconds: f64,
    /// Millions of frames per second (wall clock).
    pub mpps: f64,
    /// CPU seconds the sending threads used, together. Below
    /// `threads × seconds` when threads waited: for a lock, or for a core
    /// taken by another process.
    pub cpu_seconds: f64,
}

impl SweepRow for GreFloodRow {
    type Case = Strategy;
    fn case(&self) -> (Strategy, usize) {
        (self.strategy, self.threads)
    }
}

/// Every row of one run, strategy-major.
pub type GreFloodResult = Sweep<GreFloodParams, GreFloodRow>;

impl GreFloodResult {
    /// Rate of `strategy` over the rate of `locked`, at `threads`.
    pub fn ratio_to_locked(&self, strategy: Strategy, threads: usize) -> Option<f64> {
        let base = self.row(Strategy::Locked, threads)?.mpps;
        let this = self.row(strategy, threads)?.mpps;
        (base > 0.0).then(|| this / base)
    }

    /// How many cores the senders had on average (CPU seconds over wall
    /// seconds): below the thread count, the run was short of cores (other
    /// load, or threads asleep on a lock) and its wall-clock rate says so.
    pub fn parallelism(&self, strategy: Strategy, threads: usize) -> Option<f64> {
        let r = self.row(strategy, threads)?;
        (r.seconds > 0.0).then(|| r.cpu_seconds / r.seconds)
    }

    /// Rate at `threads` over the same strategy's rate with 1 thread.
    pub fn scaling(&self, strategy: Strategy, threads: usize) -> Option<f64> {
        let one = self.row(strategy, 1)?.mpps;
        let this = self.row(strategy, threads)?.mpps;
        (one > 0.0).then(|| this / one)
    }

    /// The figures for a benchmark summary, one per row: name, Mpps, and
    /// the ratio to `locked` at the same thread count (none for `locked`
    /// itself). `fibre bench` maps each onto its `Measurement`.
    ///
    /// ```
    /// use fibre_bench::greflood::engine::{run, GreFloodParams, Strategy};
    /// let r = run(&GreFloodParams { threads: 1, frames_per_thread: 1_000, batch: 8,
    ///                               strategies: vec![Strategy::Locked, Strategy::Lltx], repeats: 1 }).unwrap();
    /// let figures = r.summary();
    /// assert_eq!(figures[1].name, "greflood lltx 1 thread(s)");
    /// assert_eq!(figures[1].ratio_to.as_ref().unwrap().1, "greflood locked 1 thread(s)");
    /// ```
    pub fn summary(&self) -> Vec<SummaryFigure> {
        let name = |s: Strategy, t: usize| format!("greflood {} {t} thread(s)", s.name());
        self.rows
            .iter()
            .map(|r| SummaryFigure {
                name: name(r.strategy, r.threads),
                value: r.mpps,
                unit: "Mpps",
                ratio_to: (r.strategy != Strategy::Locked)
                    .then(|| self.ratio_to_locked(r.strategy, r.threads))
                    .flatten()
                    .map(|ratio| (ratio, name(Strategy::Locked, r.threads))),
            })
            .collect()
    }

    /// A table: strategy, threads, seconds, Mpps, ratio to locked, scaling.
    pub fn render(&self) -> String {
        let mut out = format!(
            "greflood: {} frame(s) of {FRAME_LEN} bytes per thread through one GRE tunnel (key) to a dummy underlay, batches of {}\n",
            self.params.frames_per_thread, self.params.batch
        );
        out.push_str("strategy      threads   seconds      Mpps  x locked  scaling   cpu-s  cores  cpu-ns/frame\n");
        for r in &self.rows {
            let ratio = self
                .ratio_to_locked(r.strategy, r.threads)
                .map_or("-".to_string(), |v| format!("{v:.2}"));
            let scaling = self
                .scaling(r.strategy, r.threads)
                .map_or("-".to_string(), |v| format!("{v:.2}"));
            let cores = self.parallelism(r.strategy, r.threads).unwrap_or(0.0);
            let cpu_ns = r.cpu_seconds * 1e9 / r.packets.max(1) as f64;
            out.push_str(&format!(
                "{:<12} {:>8} {:>9.3} {:>9.3} {:>9} {:>8} {:>7.3} {:>6.2} {:>13.1}\n",
                r.strategy.name(),
                r.threads,
                r.seconds,
                r.mpps,
                ratio,
                scaling,
                r.cpu_seconds,
                cores,
                cpu_ns
            ));
        }
        out
    }
}

/// The 200-byte IPv4/UDP frame every thread sends (DF set).
pub fn frame() -> [u8; FRAME_LEN] {
    let mut buf = [0u8; FRAME_LEN];
    let (src, dst) = (Ipv4Addr::new(10, 1, 0, 1), Ipv4Addr::new(10, 2, 0, 1));
    let udp_len = FRAME_LEN - ipv4::MIN_HEADER_LEN;
    for (i, b) in buf[ipv4::MIN_HEADER_LEN + udp::HEADER_LEN..]
        .iter_mut()
        .enumerate()
    {
        *b = i as u8;
    }
    let udp_repr = udp::Repr {
        src_port: 4000,
        dst_port: 5000,
        payload_len: udp_len - udp::HEADER_LEN,
    };
    // Both emits only fail on a buffer too short, which FRAME_LEN is not.
    let _ = udp_repr.emit(
        &mut buf[ipv4::MIN_HEADER_LEN..],
        &PseudoHeader::V4 { src, dst },
    );
    let _ = ipv4::Repr {
        src_addr: src,
        dst_addr: dst,
        protocol: Protocol::Udp,
        payload_len: udp_len,
        ttl: 64,
        tos: 0,
        ident: 1,
        dont_frag: true,
        more_frags: false,
        frag_offset: 0,
        options: &[],
    }
    .emit(&mut buf);
    buf
}

fn setup(
    strategy: Strategy,
    workers: usize,
    underlay: &Underlay,
) -> Result<Registry, GreFloodError> {
    let bad = |e: String| GreFloodError::InvalidParameter(e);
    let remote = REMOTE.to_string();
    let mut tokens = vec!["gf0", "type", "gre", "remote", &remote, "key", "1"];
    if strategy.oseq() {
        tokens.push("oseq");
    }
    let config = GreConfig::parse(&tokens).map_err(|e| bad(e.to_string()))?;
    let mut registry = Registry::new(workers);
    registry
        .add_dummy(underlay.oif, "dummy0", 1500)
        .map_err(|e| bad(e.to_string()))?;
    registry
        .add_gre(
            underlay.tunnel,
            config,
            underlay.routes.clone(),
            strategy.mode(),
        )
        .map_err(|e| bad(e.to_string()))?;
    Ok(registry)
}

/// One thread's loop: refill the batch (rewind, no copy) and transmit.
/// Returns the frames sent and this thread's CPU time.
fn flood_timed(
    registry: &Registry,
    tunnel: u32,
    worker: WorkerId,
    frames: u64,
    batch_len: usize,
) -> (u64, Duration) {
    let cpu_start = thread_cpu_time();
    let template = frame();
    let mut batch = PacketBatch::with_capacity(batch_len);
    for _ in 0..batch_len {
        let mut p = PacketBuf::new(64, 2048);
        // 200 bytes always fit 2048.
        let _ = p.load(&template);
        batch.push(p);
    }
    let mut sent = 0u64;
    let mut left = frames;
    while left > 0 {
        let n = (left as usize).min(batch_len);
        for p in &mut batch.packets_mut()[..n] {
            let _ = p.rewind(FRAME_LEN);
        }
        for p in &mut batch.packets_mut()[n..] {
            p.set_verdict(Verdict::Sent);
        }
        registry.transmit(tunnel, worker, &mut batch);
        // Only the first n were loaded this round; the rest were marked
        // done above so the devices skip them.
        sent += batch.packets()[..n]
            .iter()
            .filter(|p| p.verdict() == Verdict::Sent)
            .count() as u64;
        left -= n as u64;
    }
    let cpu = match (cpu_start, thread_cpu_time()) {
        (Some(a), Some(b)) if b >= a => b - a,
        _ => Duration::ZERO,
    };
    (sent, cpu)
}

fn measure(
    strategy: Strategy,
    threads: usize,
    params: &GreFloodParams,
    underlay: &Underlay,
) -> Result<GreFloodRow, GreFloodError> {
    let registry = setup(strategy, threads, underlay)?;
    let barrier = Barrier::new(threads + 1);
    let (sent, elapsed, cpu) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (registry, barrier) = (&registry, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    let out = flood_timed(
                        registry,
                        underlay.tunnel,
                        WorkerId::new(t as u32),
                        params.frames_per_thread,
                        params.batch,
                    );
                    (out, Instant::now())
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        let mut sent = 0;
        let mut cpu = Duration::ZERO;
        let mut end = start;
        for handle in handles {
            if let Ok(((s, c), e)) = handle.join() {
                sent += s;
                cpu += c;
                end = end.max(e);
            }
        }
        (sent, end - start, cpu)
    });
    let expected = threads as u64 * params.frames_per_thread;
    if sent != expected {
        return Err(GreFloodError::Lost {
            strategy: strategy.name(),
            threads,
            sent,
            expected,
        });
    }
    let seconds = elapsed.max(Duration::from_nanos(1)).as_secs_f64();
    Ok(GreFloodRow {
        strategy,
        threads,
        packets: sent,
        seconds,
        mpps: sent as f64 / seconds / 1e6,
        cpu_seconds: cpu.as_secs_f64(),
    })
}

/// Runs every strategy at 1..=threads threads over [`Underlay::fixed`].
pub fn run(params: &GreFloodParams) -> Result<GreFloodResult, GreFloodError> {
    run_over(params, &Underlay::fixed())
}

/// Runs every strategy at 1..=threads threads, the tunnel resolving its
/// underlay through `underlay` (`fibre bench greflood` passes the route
/// cache over a FIB). The route is checked once before measuring, so a
/// resolver that cannot reach [`REMOTE`] is an error, not a run of drops.
pub fn run_over(
    params: &GreFloodParams,
    underlay: &Underlay,
) -> Result<GreFloodResult, GreFloodError> {
    if params.threads == 0 || params.threads > MAX_WORKERS {
        return Err(GreFloodError::InvalidParameter(format!(
            "threads {}: give 1 to {}",
            params.threads, MAX_WORKERS
        )));
    }
    if params.frames_per_thread == 0 {
        return Err(GreFloodError::InvalidParameter(
            "frames per thread 0: give at least 1".into(),
        ));
    }
    if params.batch == 0 || params.batch > 1024 {
        return Err(GreFloodError::InvalidParameter(format!(
            "batch {}: give 1 to 1024",
            params.batch
        )));
    }
    if params.strategies.is_empty() {
        return Err(GreFloodError::InvalidParameter("no strategy chosen".into()));
    }
    if params.repeats == 0 || params.repeats > 1000 {
        return Err(GreFloodError::InvalidParameter(format!(
            "repeats {}: give 1 to 1000",
            params.repeats
        )));
    }
    check_underlay(underlay)?;
    let pairs: Vec<(Strategy, usize)> = params
        .strategies
        .iter()
        .flat_map(|&s| (1..=params.threads).map(move |t| (s, t)))
        .collect();
    // Warm-up: one short pass per strategy (page faults, frequency ramp).
    for &strategy in &params.strategies {
        let short = GreFloodParams {
            frames_per_thread: params.frames_per_thread.min(100_000),
            ..params.clone()
        };
        measure(strategy, 1, &short, underlay)?;
    }
    let mut samples: Vec<Vec<GreFloodRow>> = vec![Vec::new(); pairs.len()];
    for _ in 0..params.repeats {
        for (i, &(strategy, threads)) in pairs.iter().enumerate() {
            samples[i].push(measure(strategy, threads, params, underlay)?);
        }
    }
    let rows = samples
        .into_iter()
        .map(|mut runs| {
            runs.sort_by(|a, b| a.mpps.total_cmp(&b.mpps));
            runs.swap_remove(runs.len() / 2)
        })
        .collect();
    Ok(GreFloodResult {
        params: params.clone(),
        rows,
    })
}

/// The underlay leads to `oif`, not into the tunnel, with room for a frame.
fn check_underlay(underlay: &Underlay) -> Result<(), GreFloodError> {
    let bad = |e: String| GreFloodError::InvalidParameter(e);
    if underlay.oif == underlay.tunnel {
        return Err(bad(format!(
            "underlay ifindex {} is the tunnel's own",
            underlay.oif
        )));
    }
    let route = underlay
        .routes
        .resolve(WorkerId::new(0), IpAddr::V4(REMOTE), None)
        .map_err(|e| bad(format!("underlay: {e}")))?;
    // 20 (IPv4) + 8 (GRE with key) + 4 (oseq) around each frame.
    let needed = FRAME_LEN as u32 + 32;
    if route.oif != underlay.oif || route.src.is_none() || route.mtu < needed {
        return Err(bad(format!(
            "underlay route to {REMOTE} is {route:?}: want ifindex {}, a source and MTU >= {needed}",
            underlay.oif
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_is_a_valid_200_byte_udp_packet() {
        let f = frame();
        let ip = ipv4::Packet::new_checked(&f[..]).unwrap();
        let repr = ipv4::Repr::parse(&ip).unwrap();
        assert_eq!(repr.total_len(), FRAME_LEN);
        let u = udp::Packet::new_checked(ip.payload()).unwrap();
        let pseudo = PseudoHeader::V4 {
            src: repr.src_addr,
            dst: repr.dst_addr,
        };
        assert!(udp::Repr::parse(&u, &pseudo).is_ok());
    }

    #[test]
    fn bad_parameters_are_refused() {
        for params in [
            GreFloodParams {
                threads: 0,
                ..GreFloodParams::default()
            },
            GreFloodParams {
                frames_per_thread: 0,
                ..GreFloodParams::default()
            },
            GreFloodParams {
                batch: 0,
                ..GreFloodParams::default()
            },
            GreFloodParams {
                strategies: vec![],
                ..GreFloodParams::default()
            },
            GreFloodParams {
                repeats: 0,
                ..GreFloodParams::default()
            },
        ] {
            assert!(matches!(
                run(&params),
                Err(GreFloodError::InvalidParameter(_))
            ));
        }
    }

    #[test]
    fn an_underlay_that_cannot_carry_the_flood_is_refused() {
        let quick = GreFloodParams {
            threads: 1,
            frames_per_thread: 10,
            repeats: 1,
            ..GreFloodParams::default()
        };
        let unroutable = Underlay {
            routes: Arc::new(FixedRoutes::new()),
            ..Underlay::fixed()
        };
        let into_itself = Underlay {
            tunnel: 1,
            ..Underlay::fixed()
        };
        let elsewhere = Underlay {
            oif: 3,
            ..Underlay::fixed()
        };
        for underlay in [unroutable, into_itself, elsewhere] {
            let err = run_over(&quick, &underlay).unwrap_err();
            assert!(matches!(err, GreFloodError::InvalidParameter(_)), "{err}");
        }
        assert_eq!(run_over(&quick, &Underlay::fixed()).unwrap().rows.len(), 4);
    }

    #[test]
    fn every_frame_is_counted_on_tunnel_and_underlay() {
        let underlay = Underlay::fixed();
        let registry = setup(Strategy::LltxOseq, 2, &underlay).unwrap();
        std::thread::scope(|s| {
            for t in 0..2 {
                let registry = &registry;
                let tunnel = underlay.tunnel;
                s.spawn(move || flood_timed(registry, tunnel, WorkerId::new(t), 1_001, 32));
            }
        });
        let tunnel = registry.get(underlay.tunnel).unwrap().stats().snapshot();
        let dummy = registry.get(underlay.oif).unwrap().stats().snapshot();
        assert_eq!(
            (tunnel.tx_packets, tunnel.tx_bytes),
            (2_002, 2_002 * FRAME_LEN as u64)
        );
        assert_eq!(dummy.tx_packets, 2_002);
        assert_eq!(dummy.tx_bytes, 2_002 * (FRAME_LEN as u64 + 20 + 12));
        assert!(Strategy::ALL
            .iter()
            .all(|s| Strategy::from_name(s.name()) == Some(*s)));
    }
}
