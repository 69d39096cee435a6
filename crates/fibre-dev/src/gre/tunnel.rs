//! A GRE tunnel device: batched encapsulation with or without a device
//! lock, and stateful decapsulation.
//!
//! # Lockless transmit (LLTX) and the `oseq` ordering guarantee
//!
//! In [`TxMode::Lltx`] any number of workers transmit through one tunnel at
//! once: the configuration is read-only, the underlay route is cached per
//! worker, statistics are per worker. The only shared write is the output
//! sequence counter when `oseq` is on: one `AtomicU32` alone on its cache
//! line (as Linux's `ip_tunnel.o_seqno` since it made GRE lockless), from
//! which each batch reserves its numbers with one `fetch_add`. Guarantee:
//! every packet gets a distinct number (until the 32-bit wrap); numbers
//! increase within a batch and across one worker's successive batches;
//! packets of different workers interleave on the wire in any order, so a
//! receiver with `iseq` may drop some of them as out of order, exactly as
//! with Linux's lockless GRE. Whoever needs one global wire order must send
//! through one worker (a locked transmit would serialize batches but still
//! not order the underlay's queues).
//!
//! `TxMode::Locked`, built only with the `baselines` feature (which only
//! fibre-bench enables: it is the measured "before" of its `greflood`
//! experiment, and a router never wants it), is a per-device mutex held for
//! the whole batch, underlay hand-off included, as `HARD_TX_LOCK` was held
//! around `ipgre_tunnel_xmit` before GRE became lockless (`NETIF_F_LLTX`);
//! its sequence counter is a plain integer under that lock.

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

use fibre_net::ethernet::{self, EtherType};
use fibre_net::ip::Protocol;
use fibre_net::{gre, ipv4, ipv6};

use fibre_base::CachePadded;
use fibre_fib::Family;

use super::config::{GreConfig, Inheritable};
use super::decap::{decapsulate, RxPolicy};
use super::fragment::fragment_ipv4;
use super::route_cache::RouteCache;
use crate::packet::{PacketBatch, Verdict};
use crate::registry::Registry;
use crate::route::{UnderlayRoute, UnderlayRoutes};
use crate::stats::{BatchCounts, DeviceStats};
use crate::{DropReason, WorkerId};

/// How a tunnel serializes transmitters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TxMode {
    /// One lock per device around each batch: the "before" of fibre-bench's
    /// `greflood`, built only with the `baselines` feature.
    #[cfg(feature = "baselines")]
    Locked,
    /// No lock: concurrent batches from any number of workers.
    Lltx,
}

/// The ECN field of a TOS/traffic-class byte, and its values (RFC 3168).
pub(crate) const ECN_MASK: u8 = 0b11;
pub(crate) const ECN_ECT0: u8 = 0b10;
pub(crate) const ECN_CE: u8 = 0b11;

/// Tunnels nested deeper than this are treated as a loop (Linux's
/// `XMIT_RECURSION_LIMIT` is 8; a GRE-in-GRE chain longer than 4 is a
/// misconfiguration in practice).
pub const MAX_NESTING: u8 = 4;

/// A counter alone on its cache line(s), so the workers that bump it do
/// not also evict each other's neighbouring data.
type PaddedCounter = CachePadded<AtomicU32>;

/// A GRE or ip6gre tunnel.
#[derive(Debug)]
pub struct GreTunnel {
    index: u32,
    config: GreConfig,
    mode: TxMode,
    mtu: AtomicU32,
    up: AtomicBool,
    routes: Arc<dyn UnderlayRoutes>,
    route_cache: RouteCache,
    /// `Locked` mode's device lock, guarding that mode's sequence counter.
    #[cfg(feature = "baselines")]
    tx_lock: std::sync::Mutex<u32>,
    oseq: PaddedCounter,
    /// Next sequence number expected on receipt (`iseq`); 0 = none seen.
    iseq_next: PaddedCounter,
    stats: DeviceStats,
}

/// The per-packet values fixed for one batch.
struct BatchPlan {
    src: IpAddr,
    mtu: usize,
    overhead: usize,
    /// Ethernet payload (gretap) rather than IP.
    tap: bool,
}

impl GreTunnel {
    /// A tunnel with ifindex `index` for `workers` workers (clamped to
    /// 1..=[`crate::MAX_WORKERS`]). Its MTU is the
    /// underlay route's MTU minus the headers (1500 minus the headers when
    /// the remote is not routable yet, as Linux assumes Ethernet). Refuses
    /// a route to the remote that leaves through `index` itself.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use fibre_dev::gre::{GreConfig, GreTunnel, TxMode};
    /// use fibre_dev::route::{FixedRoutes, UnderlayRoute};
    /// let routes = Arc::new(FixedRoutes::new());
    /// routes.set("192.0.2.2".parse().unwrap(), UnderlayRoute { oif: 2, gateway: None,
    ///     src: Some("192.0.2.1".parse().unwrap()), mtu: 1500 });
    /// let config = GreConfig::parse(&["gt0", "type", "gre", "remote", "192.0.2.2", "key", "1"]).unwrap();
    /// let tunnel = GreTunnel::new(5, config, routes, TxMode::Lltx, 4).unwrap();
    /// assert_eq!(tunnel.mtu(), 1500 - 20 - 8);
    /// ```
    pub fn new(
        index: u32,
        config: GreConfig,
        routes: Arc<dyn UnderlayRoutes>,
        mode: TxMode,
        workers: usize,
    ) -> Result<GreTunnel, super::GreConfigError> {
        let workers = workers.clamp(1, crate::MAX_WORKERS);
        // Resolved as worker 0: creation runs on the control path, and a
        // per-core resolver only needs some slot for this one answer.
        let underlay = routes
            .resolve(WorkerId::new(0), config.spec.remote, config.spec.local)
            .ok();
        if underlay.is_some_and(|r| r.oif == index) {
            return Err(fibre_fib::TunnelError::UnderlayLoop {
                name: config.name.clone(),
                remote: config.spec.remote,
            }
            .into());
        }
        let underlay_mtu = underlay.map_or(1500, |r| r.mtu);
        let mtu = clamp_mtu(underlay_mtu, &config);
        Ok(GreTunnel {
            index,
            mode,
            mtu: AtomicU32::new(mtu as u32),
            up: AtomicBool::new(true),
            routes,
            route_cache: RouteCache::new(workers),
            #[cfg(feature = "baselines")]
            tx_lock: std::sync::Mutex::new(0),
            oseq: PaddedCounter::default(),
            iseq_next: PaddedCounter::default(),
            stats: DeviceStats::new(workers),
            config,
        })
    }

    /// ifindex.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The configuration.
    pub fn config(&self) -> &GreConfig {
        &self.config
    }

    /// The transmit mode.
    pub fn mode(&self) -> TxMode {
        self.mode
    }

    /// The tunnel MTU (inner packet size).
    pub fn mtu(&self) -> u32 {
        self.mtu.load(Ordering::Relaxed)
    }

    /// Sets the tunnel MTU.
    pub fn set_mtu(&self, mtu: u32) {
        self.mtu.store(mtu, Ordering::Relaxed);
    }

    /// Administratively up.
    pub fn is_up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }

    /// Sets the administrative state.
    pub fn set_up(&self, up: bool) {
        self.up.store(up, Ordering::Relaxed);
    }

    /// Statistics.
    pub fn stats(&self) -> &DeviceStats {
        &self.stats
    }

    /// Encapsulates the batch's pending packets in place and hands the
    /// survivors to the underlay device found in `registry`. Every refused
    /// packet is marked and counted here. Returns the path MTU to report
    /// (ICMP "fragmentation needed"/"packet too big") when a packet was too
    /// big, here or in a nested tunnel.
    pub(crate) fn transmit(
        &self,
        registry: &Registry,
        worker: WorkerId,
        batch: &mut PacketBatch,
        depth: u8,
    ) -> Option<u32> {
        match self.mode {
            TxMode::Lltx => self.transmit_with(registry, worker, batch, depth, None),
            #[cfg(feature = "baselines")]
            TxMode::Locked => {
                // Held across the underlay hand-off too, as HARD_TX_LOCK was.
                let mut seq = self.tx_lock.lock().unwrap_or_else(|e| e.into_inner());
                self.transmit_with(registry, worker, batch, depth, Some(&mut seq))
            }
        }
    }

    fn transmit_with(
        &self,
        registry: &Registry,
        worker: WorkerId,
        batch: &mut PacketBatch,
        depth: u8,
        locked_seq: Option<&mut u32>,
    ) -> Option<u32> {
        let (route, path_mtu) = self.encapsulate_with(worker, batch, depth, locked_seq);
        let nested_mtu =
            route.and_then(|r| registry.transmit_nested(r.oif, worker, batch, depth + 1));
        path_mtu.or(nested_mtu)
    }

    fn encapsulate_with(
        &self,
        worker: WorkerId,
        batch: &mut PacketBatch,
        depth: u8,
        locked_seq: Option<&mut u32>,
    ) -> (Option<UnderlayRoute>, Option<u32>) {
        let mut counts = BatchCounts::default();
        let refuse_all = |batch: &mut PacketBatch, counts: &mut BatchCounts, reason| {
            for p in batch.pending_mut() {
                p.set_verdict(Verdict::Dropped(reason));
                counts.drop(reason);
            }
        };
        let plan = if worker.index() >= self.stats.workers() {
            Err(DropReason::InvalidWorker)
        } else if !self.is_up() {
            Err(DropReason::DeviceDown)
        } else if depth >= MAX_NESTING {
            Err(DropReason::TunnelLoop)
        } else {
            self.plan(worker)
        };
        let (route, plan) = match plan {
            Ok(ok) => ok,
            Err(reason) => {
                refuse_all(batch, &mut counts, reason);
                self.stats.add(worker, &counts);
                return (None, None);
            }
        };
        // Pass 1: decide, so the batch reserves exactly its sequence numbers.
        let mut path_mtu = None;
        let mut survivors = 0u32;
        // Extra fragments (slow path; an empty Vec does not allocate).
        let mut extras = Vec::new();
        for p in batch.pending_mut() {
            let fit = check_inner(p.data(), p.headroom(), &plan).and_then(|fit| match fit {
                Fit::Whole => Ok(0),
                Fit::Fragment => {
                    let headroom = p.headroom();
                    let more = fragment_ipv4(p, plan.mtu, headroom)?;
                    let count = more.len() as u32;
                    extras.extend(more);
                    Ok(count)
                }
            });
            match fit {
                Ok(fragments) => survivors += 1 + fragments,
                Err(reason) => {
                    if reason == DropReason::TooBig {
                        path_mtu = Some(plan.mtu as u32);
                    }
                    p.set_verdict(Verdict::Dropped(reason));
                    counts.drop(reason);
                }
            }
        }
        for fragment in extras {
            batch.push(fragment);
        }
        let mut seq = match (self.config.spec.oseq, locked_seq) {
            (false, _) => None,
            (true, Some(counter)) => {
                let first = *counter;
                *counter = counter.wrapping_add(survivors);
                Some(first)
            }
            (true, None) => Some(self.oseq.fetch_add(survivors, Ordering::Relaxed)),
        };
        // Pass 2: write the headers in front of each survivor.
        for p in batch.pending_mut() {
            let inner_len = p.len();
            match self.encapsulate_one(p, &plan, seq) {
                Ok(()) => {
                    counts.tx_packets += 1;
                    counts.tx_bytes += inner_len as u64;
                }
                Err(reason) => {
                    p.set_verdict(Verdict::Dropped(reason));
                    counts.drop(reason);
                }
            }
            seq = seq.map(|s| s.wrapping_add(1));
        }
        self.stats.add(worker, &counts);
        (Some(route), path_mtu)
    }

    fn plan(&self, worker: WorkerId) -> Result<(UnderlayRoute, BatchPlan), DropReason> {
        let route = self
            .route_cache
            .get(
                worker,
                &*self.routes,
                self.config.spec.remote,
                self.config.spec.local,
            )
            .ok_or(DropReason::NoRoute)?;
        if route.oif == self.index {
            // Sending it would only come back here: drop, as Linux does,
            // rather than recurse to the nesting limit.
            return Err(DropReason::UnderlayLoop);
        }
        let src = self
            .config
            .spec
            .local
            .or(route.src)
            .ok_or(DropReason::NoRoute)?;
        let overhead = self.config.overhead();
        let mtu = (self.mtu() as usize).min(clamp_mtu(route.mtu, &self.config));
        let tap = self.config.spec.kind.is_tap();
        Ok((
            route,
            BatchPlan {
                src,
                mtu,
                overhead,
                tap,
            },
        ))
    }

    fn encapsulate_one(
        &self,
        p: &mut crate::PacketBuf,
        plan: &BatchPlan,
        seq: Option<u32>,
    ) -> Result<(), DropReason> {
        let inner = p.data();
        let (protocol, inner_ttl, inner_tos) = match inner[0] >> 4 {
            // An Ethernet frame has no TTL or TOS to inherit: Linux's
            // defaults (64, 0) stand in.
            _ if plan.tap => (EtherType::TransparentEthernet, 64, 0),
            4 => (EtherType::Ipv4, inner[8], inner[1]),
            _ => (EtherType::Ipv6, inner[7], (inner[0] << 4) | (inner[1] >> 4)),
        };
        let inner_len = inner.len();
        let ttl = match self.config.spec.ttl {
            Inheritable::Inherit => inner_ttl,
            Inheritable::Fixed(t) => t,
        };
        let tos = match self.config.spec.tos {
            Inheritable::Inherit => inner_tos,
            Inheritable::Fixed(t) => t,
        };
        // RFC 6040 normal mode, as Linux's INET_ECN_encapsulate: the outer
        // ECN field copies the inner one, CE becoming ECT(0). An Ethernet
        // payload has no ECN field (inner_tos is 0 there).
        let tos = (tos & !ECN_MASK)
            | match inner_tos & ECN_MASK {
                ECN_CE => ECN_ECT0,
                ecn => ecn,
            };
        let gre_repr = gre::Repr {
            csum: self.config.spec.ocsum,
            key: self.config.spec.okey,
            seq,
            protocol,
        };
        let gre_len = gre_repr.header_len();
        let outer_len = plan.overhead - gre_len;
        let data = match p.push_front(plan.overhead) {
            Some(_) => p.data_mut(),
            None => return Err(DropReason::NoHeadroom),
        };
        gre_repr
            .emit(&mut data[outer_len..])
            .map_err(|_| DropReason::BadInnerPacket)?;
        let emitted = match (plan.src, self.config.spec.remote) {
            (IpAddr::V4(src_addr), IpAddr::V4(dst_addr)) => ipv4::Repr {
                src_addr,
                dst_addr,
                protocol: Protocol::Gre,
                payload_len: gre_len + inner_len,
                ttl,
                tos,
                // DF is set (pmtudisc, Linux's default), so the
                // identification may be constant (RFC 6864 atomic datagrams):
                // no shared per-packet counter.
                ident: 0,
                dont_frag: true,
                more_frags: false,
                frag_offset: 0,
                options: &[],
            }
            .emit(data),
            (IpAddr::V6(src_addr), IpAddr::V6(dst_addr)) => ipv6::Repr {
                src_addr,
                dst_addr,
                next_header: Protocol::Gre,
                payload_len: gre_len + inner_len,
                hop_limit: ttl,
                traffic_class: tos,
                flow_label: 0,
            }
            .emit(data),
            _ => return Err(DropReason::NoRoute),
        };
        emitted.map_err(|_| DropReason::BadInnerPacket)
    }

    /// The receive policy of this tunnel.
    pub fn rx_policy(&self) -> RxPolicy {
        RxPolicy {
            local: self.config.spec.local,
            remote: self.config.spec.remote,
            ikey: self.config.spec.ikey,
            icsum: self.config.spec.icsum,
            iseq: self.config.spec.iseq,
            tap: self.config.spec.kind.is_tap(),
        }
    }

    /// Decapsulates the batch's pending packets in place: each accepted one
    /// is left pending with its inner packet as data; each refused one is
    /// marked and counted by reason. Returns how many were accepted.
    ///
    /// With `iseq`, a packet whose sequence number is before the next
    /// expected one is dropped as [`DropReason::OutOfOrder`] (Linux's rule:
    /// the first packet, or any after a gap, is accepted).
    pub fn receive(&self, worker: WorkerId, batch: &mut PacketBatch) -> usize {
        let mut counts = BatchCounts::default();
        let policy = self.rx_policy();
        let mut accepted = 0;
        for p in batch.pending_mut() {
            accepted += usize::from(self.receive_one(&policy, p, &mut counts));
        }
        self.stats.add(worker, &counts);
        accepted
    }

    /// One packet of [`GreTunnel::receive`]; counts go to `counts`, which
    /// the caller adds to the statistics once per batch.
    pub(crate) fn receive_one(
        &self,
        policy: &RxPolicy,
        p: &mut crate::PacketBuf,
        counts: &mut BatchCounts,
    ) -> bool {
        let result = if self.is_up() {
            decapsulate(policy, p.data())
        } else {
            // Linux's tunnel lookup skips devices that are down.
            Err(DropReason::NotForTunnel)
        };
        let result = result.and_then(|d| match d.seq {
            Some(seq) if policy.iseq && !self.accept_seq(seq) => Err(DropReason::OutOfOrder),
            _ => Ok(d),
        });
        match result {
            Ok(d) => {
                p.pull_front(d.header_len);
                p.truncate(d.inner_len);
                if d.set_ce {
                    mark_ce(p.data_mut());
                }
                counts.rx_packets += 1;
                counts.rx_bytes += d.inner_len as u64;
                true
            }
            Err(reason) => {
                p.set_verdict(Verdict::Dropped(reason));
                counts.drop(reason);
                false
            }
        }
    }

    fn accept_seq(&self, seq: u32) -> bool {
        let next = &*self.iseq_next;
        let mut expected = next.load(Ordering::Acquire);
        loop {
            if expected != 0 && (seq.wrapping_sub(expected) as i32) < 0 {
                return false;
            }
            match next.compare_exchange_weak(
                expected,
                seq.wrapping_add(1),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => expected = now,
            }
        }
    }
}

/// The largest inner packet for an underlay MTU, kept within the outer
/// header's 16-bit length.
fn clamp_mtu(underlay_mtu: u32, config: &GreConfig) -> usize {
    let overhead = config.overhead();
    let outer_max = match config.spec.kind.family() {
        Family::V4 => ipv4::MAX_PACKET_LEN,
        Family::V6 => ipv6::HEADER_LEN + ipv6::MAX_PAYLOAD_LEN,
    };
    // A tap's MTU counts the frame's payload, as an Ethernet MTU does.
    let ethernet = if config.spec.kind.is_tap() {
        ethernet::HEADER_LEN
    } else {
        0
    };
    (underlay_mtu as usize)
        .min(outer_max)
        .saturating_sub(overhead + ethernet)
}

/// How an inner packet will be sent.
enum Fit {
    /// As it is, in one outer packet.
    Whole,
    /// Cut into IPv4 fragments first, each in its own outer packet.
    Fragment,
}

/// Whether an inner packet can be sent, and how.
fn check_inner(inner: &[u8], headroom: usize, plan: &BatchPlan) -> Result<Fit, DropReason> {
    if plan.tap {
        if inner.len() < ethernet::HEADER_LEN {
            return Err(DropReason::BadInnerPacket);
        }
        if inner.len() > plan.mtu + ethernet::HEADER_LEN {
            return Err(DropReason::TooBig);
        }
        return if headroom < plan.overhead {
            Err(DropReason::NoHeadroom)
        } else {
            Ok(Fit::Whole)
        };
    }
    let (min_len, may_fragment) = match inner.first().map(|b| b >> 4) {
        Some(4) if inner.len() >= ipv4::MIN_HEADER_LEN => {
            (ipv4::MIN_HEADER_LEN, inner[6] & 0x40 == 0)
        }
        Some(6) if inner.len() >= ipv6::HEADER_LEN => (ipv6::HEADER_LEN, false),
        _ => return Err(DropReason::BadInnerPacket),
    };
    debug_assert!(inner.len() >= min_len);
    if headroom < plan.overhead {
        return Err(DropReason::NoHeadroom);
    }
    if inner.len() > plan.mtu {
        // IPv4 without DF is cut to the tunnel MTU, as Linux's forwarding
        // path does before its tunnel sees it; anything else is refused
        // with the MTU to report.
        return if may_fragment {
            Ok(Fit::Fragment)
        } else {
            Err(DropReason::TooBig)
        };
    }
    Ok(Fit::Whole)
}

/// Sets Congestion Experienced on an inner IPv4 or IPv6 header that
/// [`decapsulate`] found ECN-capable (refilling the IPv4 checksum).
fn mark_ce(inner: &mut [u8]) {
    match inner.first().map(|b| b >> 4) {
        Some(4) => {
            inner[1] |= ECN_CE;
            if let Ok(mut packet) = ipv4::Packet::new_checked(inner) {
                packet.fill_checksum();
            }
        }
        Some(6) => inner[1] |= ECN_CE << 4,
        _ => {}
    }
}
