//! The worker: a burst of frames received on one port, from the Ethernet
//! header to a transmit queue, the control side or a counted drop, in the
//! kernel's order (`eth_type_trans`, `ip_rcv_core`/`ip6_rcv_core`, the
//! input route lookup for the whole burst, `ip_forward`/`ip6_forward`,
//! `ip_output`). The FIB is read once per burst (one RCU snapshot, then a
//! quiescent report); nothing allocates after the worker is made.

use std::sync::Arc;

use fibre_base::DropReason;
use fibre_fib::shared::FibReader;
use fibre_fib::{Errno, Fib, FlowKeyV4, FlowKeyV6, Forward, Forward6, LinkIndex};

use crate::config::{PortConfig, WorkerConfig};
use crate::counters::{Counters, CountersReader, CountersWriter};
use crate::icmp::RateLimiter;
use crate::neighbours::Neighbours;
use crate::punt::{Punt, PuntKind, PuntQueue};
use crate::receive::{self, Ipv4Header, Ipv6Header, PacketType, Payload, ETH_HLEN};
use crate::ring::FrameRing;
use crate::tunnel::{Tunnel, TunnelConfig, TunnelCounters};

/// A VLAN tag's length, which a port's frames may carry beyond its MTU.
pub(crate) const VLAN_HLEN: usize = 4;

/// Frames looked up together: one FIB burst (the FIB cuts longer ones into
/// chunks of its own).
pub const BURST: usize = 64;

/// Where a worker reads the FIB: once per burst, on one version of it.
pub trait FibSource {
    /// Runs `f` on the current FIB; a shared reader reports its quiescent
    /// state afterwards ([`FibReader::batch`]).
    fn with_fib<R>(&mut self, f: impl FnOnce(&Fib) -> R) -> R;
}

impl FibSource for FibReader {
    fn with_fib<R>(&mut self, f: impl FnOnce(&Fib) -> R) -> R {
        self.batch(|snapshot| f(snapshot.fib()))
    }
}

impl FibSource for Fib {
    fn with_fib<R>(&mut self, f: impl FnOnce(&Fib) -> R) -> R {
        f(self)
    }
}

impl FibSource for Arc<Fib> {
    fn with_fib<R>(&mut self, f: impl FnOnce(&Fib) -> R) -> R {
        f(self)
    }
}

impl FibSource for &Fib {
    fn with_fib<R>(&mut self, f: impl FnOnce(&Fib) -> R) -> R {
        f(self)
    }
}

/// One forwarding worker: its ports (each with a transmit queue), the FIB
/// it reads, the neighbours it asks, the queues to the control side, its
/// ICMP rate limits and its counters. No sockets, no threads: the caller
/// hands it received frames ([`Worker::receive_burst`]) and drains what
/// it queued ([`Worker::drain_port`], [`Worker::drain_punts`]).
///
/// ```
/// use fibre_fib::{config, Fib};
/// use fibre_fwd::{PortConfig, StaticNeighbours, Worker, WorkerConfig};
///
/// let (fib, _) = config::apply_str(&Fib::new(), "r.conf",
///     "link add p0 type ifb\nlink set p0 up\naddr add 10.0.0.1/24 dev p0\n\
///      link add p1 type ifb\nlink set p1 up\naddr add 10.1.0.1/24 dev p1\n", false).unwrap();
/// let (p0, p1) = ([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 1, 1]);
/// let mut neighbours = StaticNeighbours::default();
/// neighbours.insert(3, "10.1.0.7".parse().unwrap(), [2, 0, 0, 0, 1, 7]);
/// let ports = [PortConfig::new(2, p0), PortConfig::new(3, p1)];
/// let mut worker = Worker::new(fib, neighbours, &ports, WorkerConfig::default());
///
/// // A UDP packet from 10.0.0.9 (on p0) to 10.1.0.7 (on p1), TTL 64.
/// let mut frame = vec![0u8; 14 + 28];
/// frame[..6].copy_from_slice(&p0);
/// frame[12..14].copy_from_slice(&[0x08, 0x00]);
/// frame[14..34].copy_from_slice(&[0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0,
///     10, 0, 0, 9, 10, 1, 0, 7]);
/// let sum = fibre_net::checksum::checksum(&frame[14..34]);
/// frame[24..26].copy_from_slice(&sum.to_be_bytes());
///
/// worker.receive_burst(0, &[&frame], 0);
/// let mut sent = Vec::new();
/// worker.drain_port(1, |f| sent.push(f.to_vec()));
/// assert_eq!(sent.len(), 1);
/// assert_eq!(&sent[0][..12], &[2, 0, 0, 0, 1, 7, 2, 0, 0, 0, 1, 1]);
/// assert_eq!(sent[0][14 + 8], 63); // TTL
/// assert_eq!(worker.counters().forwarded, 1);
/// ```
pub struct Worker<F, N> {
    fib: F,
    neighbours: N,
    core: Core,
}

impl<F: std::fmt::Debug, N> std::fmt::Debug for Worker<F, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("fib", &self.fib)
            .field("ports", &self.core.ports.len())
            .field("counters", &self.core.counters)
            .finish_non_exhaustive()
    }
}

/// A port and its transmit queue.
#[derive(Debug)]
pub(crate) struct Port {
    pub config: PortConfig,
    pub tx: FrameRing,
}

/// What one frame of a burst is, between the checks and the lookup.
#[derive(Debug, Clone, Copy)]
enum Pending {
    /// Ended already (dropped or punted).
    Done,
    /// An IPv4 packet: its header and the index of its key.
    V4(Ipv4Header, PacketType, usize),
    /// An IPv6 packet.
    V6(Ipv6Header, PacketType, usize),
}

/// Everything of a worker but the FIB and the neighbours, so that a burst
/// can borrow those while it changes this.
pub(crate) struct Core {
    pub ports: Vec<Port>,
    pub config: WorkerConfig,
    pub counters: Counters,
    published: CountersWriter,
    pub limiter: RateLimiter,
    pub local: PuntQueue,
    pub neighbour: PuntQueue,
    pub unresolved: PuntQueue,
    /// An ICMP message or reply being written (the largest one a port
    /// carries).
    pub scratch: Vec<u8>,
    /// The GRE tunnels the worker runs ([`Worker::add_tunnel`]).
    pub tunnels: Vec<Tunnel>,
    /// A decapsulated packet on its way through the input path again
    /// (empty while one is: GRE inside GRE is not decapsulated twice).
    pub decap: Vec<u8>,
    pending: [Pending; BURST],
    keys_v4: [FlowKeyV4; BURST],
    answers_v4: [Result<Forward, Errno>; BURST],
    keys_v6: [FlowKeyV6; BURST],
    answers_v6: [Result<Forward6, Errno>; BURST],
}

impl<F: FibSource, N: Neighbours> Worker<F, N> {
    /// A worker over `ports` (index `i` of `ports` is port `i` in every
    /// other call), reading `fib` and `neighbours`, sized by `config`.
    ///
    /// # Panics
    /// If two ports name the same link.
    pub fn new(fib: F, neighbours: N, ports: &[PortConfig], config: WorkerConfig) -> Self {
        for (i, p) in ports.iter().enumerate() {
            assert!(
                ports[..i].iter().all(|q| q.link != p.link),
                "two ports for link {}: give each FIB link one port",
                p.link
            );
        }
        let slot = ETH_HLEN + VLAN_HLEN + config.max_mtu;
        let core = Core {
            ports: ports
                .iter()
                .map(|&config_of_port| Port {
                    config: config_of_port,
                    tx: FrameRing::new(config.tx_queue_len, slot),
                })
                .collect(),
            config,
            counters: Counters::default(),
            published: CountersWriter::new(),
            limiter: RateLimiter::new(config.icmp),
            local: PuntQueue::new(PuntKind::Local, config.control_queue_len, slot),
            neighbour: PuntQueue::new(PuntKind::Neighbour, config.control_queue_len, slot),
            unresolved: PuntQueue::new(PuntKind::Unresolved, config.unresolved_queue_len, slot),
            scratch: vec![0; slot.max(crate::icmp::MAX_ERROR_LEN_V6)],
            tunnels: Vec::new(),
            decap: vec![0; slot],
            pending: [Pending::Done; BURST],
            keys_v4: [FlowKeyV4::default(); BURST],
            answers_v4: [Err(Errno::Inval); BURST],
            keys_v6: [FlowKeyV6::default(); BURST],
            answers_v6: [Err(Errno::Inval); BURST],
        };
        Worker {
            fib,
            neighbours,
            core,
        }
    }

    /// Makes the GRE tunnel `tunnel` a device of this worker: packets the
    /// FIB routes to its link are encapsulated and sent out of the port
    /// the underlay route to its remote end leaves by; GRE packets to the
    /// router that it takes are decapsulated and their inner packets
    /// received on it. Its parameters (`link add NAME type gre remote ...
    /// [local ...] [key K] [csum] [seq] [ttl T] [tos T]`) are the FIB
    /// link's, read at each packet; only `type gre` (an IPv4 underlay
    /// carrying IP) is run. Allocates (once, here).
    ///
    /// A decapsulated packet the worker hands to the control side is
    /// punted with the tunnel's link and the port the GRE packet came in
    /// by, behind that frame's Ethernet addresses and the inner packet's
    /// EtherType.
    ///
    /// # Panics
    /// If the link is already one of the worker's ports or tunnels.
    ///
    /// ```
    /// use fibre_fib::{config, Fib};
    /// use fibre_fwd::{PortConfig, StaticNeighbours, TunnelConfig, Worker, WorkerConfig};
    ///
    /// let (fib, _) = config::apply_str(&Fib::new(), "r.conf",
    ///     "link add p0 type ifb\nlink set p0 up\naddr add 10.0.0.1/24 dev p0\n\
    ///      link add p1 type ifb\nlink set p1 up\naddr add 192.0.2.1/24 dev p1\n\
    ///      link add gt0 type gre remote 192.0.2.2 local 192.0.2.1 key 5\n\
    ///      link set gt0 up\nroute add 10.9.0.0/16 dev gt0\n", false).unwrap();
    /// let gt0 = fib.links().find(|l| l.name == "gt0").unwrap().index;
    /// let (p0, p1) = ([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 1, 1]);
    /// let mut neighbours = StaticNeighbours::default();
    /// neighbours.insert(3, "192.0.2.2".parse().unwrap(), [2, 0, 0, 0, 1, 2]);
    /// let ports = [PortConfig::new(2, p0), PortConfig::new(3, p1)];
    /// let mut worker = Worker::new(fib, neighbours, &ports, WorkerConfig::default());
    /// worker.add_tunnel(TunnelConfig::new(gt0));
    ///
    /// // A UDP packet from 10.0.0.9 to 10.9.0.7: into gt0, out of p1.
    /// let mut frame = vec![0u8; 14 + 28];
    /// frame[..6].copy_from_slice(&p0);
    /// frame[12..14].copy_from_slice(&[0x08, 0x00]);
    /// frame[14..34].copy_from_slice(&[0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0,
    ///     10, 0, 0, 9, 10, 9, 0, 7]);
    /// let sum = fibre_net::checksum::checksum(&frame[14..34]);
    /// frame[24..26].copy_from_slice(&sum.to_be_bytes());
    /// worker.receive_burst(0, &[&frame], 0);
    /// let mut sent = Vec::new();
    /// worker.drain_port(1, |f| sent.push(f.to_vec()));
    /// assert_eq!(sent[0].len(), 14 + 20 + 8 + 28);
    /// assert_eq!(sent[0][14 + 9], 47); // GRE
    /// assert_eq!(sent[0][14 + 20 + 8 + 8], 63); // the inner TTL, one less
    /// assert_eq!(worker.tunnel_counters(gt0).unwrap().tx_packets, 1);
    /// ```
    pub fn add_tunnel(&mut self, tunnel: TunnelConfig) {
        assert!(
            self.core.port_of(tunnel.link).is_none() && self.core.tunnel_of(tunnel.link).is_none(),
            "link {} is already a port or tunnel of this worker",
            tunnel.link
        );
        self.core.tunnels.push(Tunnel::new(tunnel));
    }

    /// What this worker counted for the tunnel of link `link`, if it runs
    /// one.
    pub fn tunnel_counters(&self, link: LinkIndex) -> Option<TunnelCounters> {
        let tunnel = self.core.tunnel_of(link)?;
        Some(self.core.tunnels[tunnel].counters)
    }

    /// Processes `frames`, all received on port `port`, at time `now_ns`
    /// (nanoseconds of a monotonic clock: the ICMP rate limits' time), in
    /// bursts of [`BURST`]: each frame ends forwarded (queued on its
    /// output port), answered, punted to the control side or dropped and
    /// counted. A port index beyond the ports drops them all
    /// ([`DropReason::PortDown`]). Allocates nothing.
    pub fn receive_burst<B: AsRef<[u8]>>(&mut self, port: usize, frames: &[B], now_ns: u64) {
        let Worker {
            fib,
            neighbours,
            core,
        } = self;
        for chunk in frames.chunks(BURST) {
            fib.with_fib(|fib| core.burst(fib, &*neighbours, port, chunk, now_ns));
            neighbours.burst_done();
        }
        core.published.publish(&core.counters);
    }

    /// The ICMP error the kernel sends for `packet` when the neighbour it
    /// waited for on link `link` goes FAILED (`neigh_invalidate` calls the
    /// family's `error_report` for each queued packet: host unreachable
    /// for IPv4, address unreachable for IPv6), with this worker's rate
    /// limits and the kernel's source selection; the error is queued on
    /// the port its route back leaves by (or punted while that next hop is
    /// unresolved), as a burst's errors are. `packet` is the IP packet as
    /// the worker punted it ([`PuntKind::Unresolved`], after the Ethernet
    /// header) and the control side queued it, at time `now_ns` (the
    /// clock of [`Worker::receive_burst`]). A link without a port, or
    /// anything but a whole IP header, sends nothing. Allocates nothing.
    ///
    /// The control side calls it for each `fibre_neigh::Action::Unreachable`.
    ///
    /// ```
    /// use fibre_fib::{config, Fib};
    /// use fibre_fwd::{PortConfig, PuntKind, StaticNeighbours, Worker, WorkerConfig};
    ///
    /// let (fib, _) = config::apply_str(&Fib::new(), "r.conf",
    ///     "link add p0 type ifb\nlink set p0 up\naddr add 10.0.0.1/24 dev p0\n\
    ///      link add p1 type ifb\nlink set p1 up\naddr add 10.1.0.1/24 dev p1\n", false).unwrap();
    /// let (p0, p1) = ([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 1, 1]);
    /// let mut neighbours = StaticNeighbours::default();
    /// neighbours.insert(2, "10.0.0.9".parse().unwrap(), [2, 0, 0, 0, 0, 9]);
    /// let ports = [PortConfig::new(2, p0), PortConfig::new(3, p1)];
    /// let mut worker = Worker::new(fib, neighbours, &ports, WorkerConfig::default());
    ///
    /// // From 10.0.0.9 to 10.1.0.7, whose MAC nobody knows: punted.
    /// let mut frame = vec![0u8; 14 + 28];
    /// frame[..6].copy_from_slice(&p0);
    /// frame[12..14].copy_from_slice(&[0x08, 0x00]);
    /// frame[14..34].copy_from_slice(&[0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0,
    ///     10, 0, 0, 9, 10, 1, 0, 7]);
    /// let sum = fibre_net::checksum::checksum(&frame[14..34]);
    /// frame[24..26].copy_from_slice(&sum.to_be_bytes());
    /// worker.receive_burst(0, &[&frame], 0);
    /// let mut queued = Vec::new();
    /// worker.drain_punts(|p| if p.kind == PuntKind::Unresolved { queued.push(p.frame[14..].to_vec()) });
    ///
    /// // Resolution failed: the sender hears host unreachable from 10.0.0.1.
    /// worker.resolution_failed(3, &queued[0], 1_000_000);
    /// let mut sent = Vec::new();
    /// worker.drain_port(0, |f| sent.push(f.to_vec()));
    /// assert_eq!(&sent[0][14 + 12..14 + 20], &[10, 0, 0, 1, 10, 0, 0, 9]);
    /// assert_eq!(&sent[0][14 + 20..14 + 22], &[3, 1]);
    /// ```
    pub fn resolution_failed(&mut self, link: LinkIndex, packet: &[u8], now_ns: u64) {
        let Worker {
            fib,
            neighbours,
            core,
        } = self;
        let Some(port) = core.port_of(link) else {
            return;
        };
        fib.with_fib(|fib| {
            let mut out = crate::output::Out {
                fib,
                neighbours: &*neighbours,
                in_port: port,
                in_link: link,
                now_ns,
            };
            core.resolution_failed(&mut out, packet);
        });
        neighbours.burst_done();
        core.published.publish(&core.counters);
    }

    /// Hands every frame queued on port `port` to `transmit`, oldest
    /// first, and empties the queue.
    pub fn drain_port(&mut self, port: usize, mut transmit: impl FnMut(&[u8])) {
        if let Some(p) = self.core.ports.get_mut(port) {
            for i in 0..p.tx.len() {
                transmit(p.tx.get(i));
            }
            p.tx.clear();
        }
    }

    /// Frames queued on port `port`.
    pub fn queued(&self, port: usize) -> usize {
        self.core.ports.get(port).map_or(0, |p| p.tx.len())
    }

    /// Hands every frame queued for the control side to `f` (neighbour
    /// packets, then local ones, then those awaiting resolution) and
    /// empties the queues.
    pub fn drain_punts(&mut self, mut f: impl FnMut(Punt<'_>)) {
        self.core.neighbour.drain(&mut f);
        self.core.local.drain(&mut f);
        self.core.unresolved.drain(&mut f);
    }

    /// Frames waiting in the queue of `kind` to the control side.
    pub fn punted(&self, kind: PuntKind) -> usize {
        match kind {
            PuntKind::Neighbour => self.core.neighbour.len(),
            PuntKind::Local => self.core.local.len(),
            PuntKind::Unresolved => self.core.unresolved.len(),
        }
    }

    /// This worker's counts, exact as of now.
    pub fn counters(&self) -> &Counters {
        &self.core.counters
    }

    /// A handle that reads this worker's counts from another thread (as of
    /// its last burst).
    pub fn counters_reader(&self) -> CountersReader {
        self.core.published.reader()
    }

    /// The ports, in index order.
    pub fn ports(&self) -> impl Iterator<Item = &PortConfig> + '_ {
        self.core.ports.iter().map(|p| &p.config)
    }

    /// The neighbours the worker asks (to update a static table).
    pub fn neighbours_mut(&mut self) -> &mut N {
        &mut self.neighbours
    }

    /// The FIB source.
    pub fn fib_mut(&mut self) -> &mut F {
        &mut self.fib
    }
}

impl Core {
    /// One burst of at most [`BURST`] frames received on `port`.
    fn burst<B: AsRef<[u8]>>(
        &mut self,
        fib: &Fib,
        neighbours: &dyn Neighbours,
        port: usize,
        frames: &[B],
        now_ns: u64,
    ) {
        self.counters.received += frames.len() as u64;
        let Some(config) = self.ports.get(port).map(|p| p.config) else {
            self.counters.dropped[DropReason::PortDown.index()] += frames.len() as u64;
            return;
        };
        // A device that is down receives nothing.
        if !fib.link(config.link).is_some_and(|l| l.up) {
            self.counters.dropped[DropReason::PortDown.index()] += frames.len() as u64;
            return;
        }
        // A frame longer than the input link's MTU allows never arrives
        // (veth: `is_skb_forwardable`, MTU plus header plus a VLAN tag).
        let max_frame = ETH_HLEN + VLAN_HLEN + self.link_mtu(fib, config.link);
        let (mut n4, mut n6) = (0, 0);
        for (i, frame) in frames.iter().enumerate() {
            self.pending[i] = Pending::Done;
            let frame = frame.as_ref();
            match self.check(port, &config, frame, max_frame) {
                Ok(Pending::V4(h, kind, _)) => {
                    self.keys_v4[n4] = h.flow_key();
                    self.pending[i] = Pending::V4(h, kind, n4);
                    n4 += 1;
                }
                Ok(Pending::V6(h, kind, _)) => {
                    self.keys_v6[n6] = h.flow_key();
                    self.pending[i] = Pending::V6(h, kind, n6);
                    n6 += 1;
                }
                Ok(Pending::Done) => {}
                Err(reason) => self.counters.drop(reason),
            }
        }
        if n4 > 0 {
            fib.lookup_input_burst_v4(config.link, &self.keys_v4[..n4], &mut self.answers_v4[..n4]);
        }
        if n6 > 0 {
            fib.lookup_input_burst_v6(config.link, &self.keys_v6[..n6], &mut self.answers_v6[..n6]);
        }
        let mut out = crate::output::Out {
            fib,
            neighbours,
            in_port: port,
            in_link: config.link,
            now_ns,
        };
        for (i, frame) in frames.iter().enumerate() {
            let frame = frame.as_ref();
            match self.pending[i] {
                Pending::Done => {}
                Pending::V4(h, kind, k) => {
                    let frame = &frame[..ETH_HLEN + h.total_len];
                    let (key, answer) = (self.keys_v4[k], self.answers_v4[k]);
                    let end = self.input_v4(&mut out, &config, frame, &h, kind, &key, answer);
                    self.count(end);
                }
                Pending::V6(h, kind, k) => {
                    let frame = &frame[..ETH_HLEN + h.total_len];
                    let answer = self.answers_v6[k];
                    let end = self.input_v6(&mut out, &config, frame, &h, kind, answer);
                    self.count(end);
                }
            }
        }
    }

    /// The checks before the lookup: the frame's station and EtherType,
    /// then the IP header's. ARP is punted here; IP packets wait for the
    /// lookup.
    fn check(
        &mut self,
        port: usize,
        config: &PortConfig,
        frame: &[u8],
        max_frame: usize,
    ) -> Result<Pending, DropReason> {
        let (kind, payload) = receive::classify(frame, config.mac).ok_or(DropReason::Truncated)?;
        if frame.len() > max_frame {
            return Err(DropReason::TooBig);
        }
        match payload {
            Payload::Other => Err(DropReason::UnknownProtocol),
            _ if kind == PacketType::OtherHost => Err(DropReason::OtherHost),
            Payload::Arp => {
                self.punt(PuntKind::Neighbour, port, config.link, frame)?;
                Ok(Pending::Done)
            }
            Payload::Ipv4 => {
                let h = receive::ipv4_header(&frame[ETH_HLEN..])?;
                Ok(Pending::V4(h, kind, 0))
            }
            Payload::Ipv6 => {
                let h = receive::ipv6_header(&frame[ETH_HLEN..])?;
                Ok(Pending::V6(h, kind, 0))
            }
        }
    }

    /// Queues `frame` for the control side.
    pub(crate) fn punt(
        &mut self,
        kind: PuntKind,
        port: usize,
        link: LinkIndex,
        frame: &[u8],
    ) -> Result<(), DropReason> {
        let queue = match kind {
            PuntKind::Local => &mut self.local,
            PuntKind::Neighbour => &mut self.neighbour,
            PuntKind::Unresolved => &mut self.unresolved,
        };
        if !queue.push(port, link, frame) {
            return Err(DropReason::PuntQueueFull);
        }
        match kind {
            PuntKind::Local => self.counters.punted_local += 1,
            PuntKind::Neighbour => self.counters.punted_neighbour += 1,
            PuntKind::Unresolved => self.counters.punted_unresolved += 1,
        }
        Ok(())
    }

    /// Counts how a packet ended (a drop; the other ends count themselves).
    fn count(&mut self, end: Result<(), DropReason>) {
        if let Err(reason) = end {
            self.counters.drop(reason);
        }
    }

    /// The index of the port for link `link`, if the worker has one.
    pub(crate) fn port_of(&self, link: LinkIndex) -> Option<usize> {
        self.ports.iter().position(|p| p.config.link == link)
    }
}
