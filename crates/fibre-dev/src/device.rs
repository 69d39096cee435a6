//! Devices: a name, an index, an MTU, an up/down state, a type and
//! per-worker statistics.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use crate::gre::{GreKind, GreTunnel};
use crate::packet::{PacketBatch, Verdict};
use crate::stats::{BatchCounts, DeviceStats, LinkSummary};
use crate::{DropReason, WorkerId};

/// What kind of device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceType {
    /// Counts what it is given and discards it.
    Dummy,
    /// Counts every packet as sent and received (delivery to a local stack
    /// is the forwarding plane's, not yet built).
    Loopback,
    /// A GRE tunnel.
    Gre(GreKind),
    /// A [`Port`] from elsewhere (a NIC queue), by its kind's name.
    Other(&'static str),
}

/// A device that moves packets itself: dummy and loopback here; the NIC
/// queues of the next issues (AF_XDP, AF_PACKET on veth) implement the same
/// contract and join a [`crate::Registry`] through
/// [`crate::Registry::add_port`].
///
/// Contract: `transmit` and `receive` may be called by many workers at
/// once, each with its own batch; they must not block on each other or
/// allocate per packet, and count into the worker's statistics slot.
pub trait Port: Send + Sync + std::fmt::Debug {
    /// ifindex.
    fn index(&self) -> u32;
    /// Name.
    fn name(&self) -> &str;
    /// Type.
    fn device_type(&self) -> DeviceType;
    /// MTU.
    fn mtu(&self) -> u32;
    /// Sets the MTU.
    fn set_mtu(&self, mtu: u32);
    /// Administratively up.
    fn is_up(&self) -> bool;
    /// Sets up/down.
    fn set_up(&self, up: bool);
    /// Statistics.
    fn stats(&self) -> &DeviceStats;
    /// Takes the batch's pending packets: each ends `Sent` or
    /// `Dropped(reason)`, and is counted.
    fn transmit(&self, worker: WorkerId, batch: &mut PacketBatch);
    /// Fills the batch's buffers with received packets (left pending) and
    /// returns how many; the caller owns the buffers, as a ring's frames.
    fn receive(&self, worker: WorkerId, batch: &mut PacketBatch) -> usize;
    /// The `ip link` flags (`BROADCAST,NOARP`) and second line
    /// (`link/none`) of the device.
    fn link_info(&self) -> (&'static str, String);
}

/// A dummy or loopback device: counters and state, nothing to configure.
#[derive(Debug)]
pub struct CountingDevice {
    index: u32,
    name: String,
    kind: DeviceType,
    mtu: AtomicU32,
    up: AtomicBool,
    stats: DeviceStats,
}

impl CountingDevice {
    /// A dummy (`loopback == false`) or loopback device, up.
    pub fn new(index: u32, name: &str, mtu: u32, loopback: bool, workers: usize) -> CountingDevice {
        CountingDevice {
            index,
            name: name.into(),
            kind: if loopback {
                DeviceType::Loopback
            } else {
                DeviceType::Dummy
            },
            mtu: AtomicU32::new(mtu),
            up: AtomicBool::new(true),
            stats: DeviceStats::new(workers),
        }
    }
}

impl Port for CountingDevice {
    fn index(&self) -> u32 {
        self.index
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn device_type(&self) -> DeviceType {
        self.kind
    }

    fn mtu(&self) -> u32 {
        self.mtu.load(Ordering::Relaxed)
    }

    fn set_mtu(&self, mtu: u32) {
        self.mtu.store(mtu, Ordering::Relaxed);
    }

    fn is_up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }

    fn set_up(&self, up: bool) {
        self.up.store(up, Ordering::Relaxed);
    }

    fn stats(&self) -> &DeviceStats {
        &self.stats
    }

    /// Takes every pending packet: counted as transmitted (and, for
    /// loopback, received), or dropped when down or too big.
    fn transmit(&self, worker: WorkerId, batch: &mut PacketBatch) {
        let mut counts = BatchCounts::default();
        let up = self.up.load(Ordering::Relaxed);
        let mtu = self.mtu.load(Ordering::Relaxed) as usize;
        let valid_worker = worker.index() < self.stats.workers();
        for p in batch.pending_mut() {
            let refused = if !valid_worker {
                Some(DropReason::InvalidWorker)
            } else if !up {
                Some(DropReason::DeviceDown)
            } else if p.len() > mtu {
                Some(DropReason::TooBig)
            } else {
                None
            };
            match refused {
                Some(reason) => {
                    counts.drop(reason);
                    p.set_verdict(Verdict::Dropped(reason));
                }
                None => {
                    counts.tx_packets += 1;
                    counts.tx_bytes += p.len() as u64;
                    p.set_verdict(Verdict::Sent);
                }
            }
        }
        if self.kind == DeviceType::Loopback {
            counts.rx_packets = counts.tx_packets;
            counts.rx_bytes = counts.tx_bytes;
        }
        self.stats.add(worker, &counts);
    }

    /// Nothing arrives on a dummy; loopback's packets are counted as
    /// received when sent (delivery to a local stack is the forwarding
    /// plane's), so nothing waits here either.
    fn receive(&self, _worker: WorkerId, _batch: &mut PacketBatch) -> usize {
        0
    }

    fn link_info(&self) -> (&'static str, String) {
        match self.kind {
            DeviceType::Loopback => (
                "LOOPBACK",
                "link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00".to_string(),
            ),
            _ => ("BROADCAST,NOARP", "link/none".to_string()),
        }
    }
}

/// Any device in a [`crate::Registry`].
#[derive(Debug)]
pub enum Device {
    /// Dummy, loopback, or a NIC queue from elsewhere.
    Port(Box<dyn Port>),
    /// GRE or ip6gre tunnel (boxed: it is large, and registry slots
    /// should stay small).
    Gre(Box<GreTunnel>),
}

impl Device {
    /// ifindex.
    pub fn index(&self) -> u32 {
        match self {
            Device::Port(d) => d.index(),
            Device::Gre(t) => t.index(),
        }
    }

    /// Name.
    pub fn name(&self) -> &str {
        match self {
            Device::Port(d) => d.name(),
            Device::Gre(t) => &t.config().name,
        }
    }

    /// Type.
    pub fn device_type(&self) -> DeviceType {
        match self {
            Device::Port(d) => d.device_type(),
            Device::Gre(t) => DeviceType::Gre(t.config().spec.kind),
        }
    }

    /// MTU.
    pub fn mtu(&self) -> u32 {
        match self {
            Device::Port(d) => d.mtu(),
            Device::Gre(t) => t.mtu(),
        }
    }

    /// Sets the MTU.
    pub fn set_mtu(&self, mtu: u32) {
        match self {
            Device::Port(d) => d.set_mtu(mtu),
            Device::Gre(t) => t.set_mtu(mtu),
        }
    }

    /// Administratively up.
    pub fn is_up(&self) -> bool {
        match self {
            Device::Port(d) => d.is_up(),
            Device::Gre(t) => t.is_up(),
        }
    }

    /// Sets up/down.
    pub fn set_up(&self, up: bool) {
        match self {
            Device::Port(d) => d.set_up(up),
            Device::Gre(t) => t.set_up(up),
        }
    }

    /// Statistics.
    pub fn stats(&self) -> &DeviceStats {
        match self {
            Device::Port(d) => d.stats(),
            Device::Gre(t) => t.stats(),
        }
    }

    /// The GRE tunnel, if it is one.
    pub fn as_gre(&self) -> Option<&GreTunnel> {
        match self {
            Device::Gre(t) => Some(t),
            Device::Port(_) => None,
        }
    }

    /// The `ip link` lines describing it.
    pub fn summary(&self) -> LinkSummary {
        let up = self.is_up();
        let (flags, link_line) = match self {
            Device::Port(port) => port.link_info(),
            Device::Gre(tunnel) => gre_link_info(tunnel),
        };
        LinkSummary {
            index: self.index(),
            name: self.name().to_string(),
            flags: if up {
                format!("{flags},UP,LOWER_UP")
            } else {
                flags.to_string()
            },
            mtu: self.mtu(),
            state: if up { "UNKNOWN" } else { "DOWN" },
            link_line,
        }
    }
}

/// `ip link`'s flags and second line for a tunnel.
fn gre_link_info(tunnel: &GreTunnel) -> (&'static str, String) {
    let config = tunnel.config();
    if config.spec.kind.is_tap() {
        let i = tunnel.index().to_be_bytes();
        let mac = tap_mac_text([0x02, 0x00, i[0], i[1], i[2], i[3]]);
        return (
            "BROADCAST,MULTICAST",
            format!("link/ether {mac} brd ff:ff:ff:ff:ff:ff"),
        );
    }
    // The device address is `local` and the broadcast address `remote`
    // (0.0.0.0 or :: when no local); iproute2 writes `peer` for a
    // point-to-point device, `brd` otherwise (ip6gre without local).
    let spec = &config.spec;
    let local = spec
        .local
        .unwrap_or_else(|| spec.kind.family().unspecified());
    let link = match spec.kind.family() {
        fibre_fib::Family::V4 => "link/gre",
        fibre_fib::Family::V6 => "link/gre6",
    };
    if spec.is_point_to_point() {
        (
            "POINTOPOINT,NOARP",
            format!("{link} {local} peer {}", spec.remote),
        )
    } else {
        ("NOARP", format!("{link} {local} brd {}", spec.remote))
    }
}

/// A tap's MAC address as `ip link` prints it. Taps get a locally
/// administered address made of their ifindex (02:00:ii:ii:ii:ii), so it
/// is stable and unique within the registry; Linux picks a random one.
fn tap_mac_text(mac: [u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}
