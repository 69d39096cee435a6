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

    /// Takes every pending packet: counted as transmitted (and, for
    /// loopback, received), or dropped when down or too big.
    pub fn transmit(&self, worker: WorkerId, batch: &mut PacketBatch) {
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
}

/// Any device in a [`crate::Registry`].
#[derive(Debug)]
pub enum Device {
    /// Dummy or loopback.
    Counting(CountingDevice),
    /// GRE or ip6gre tunnel (boxed: it is large, and registry slots
    /// should stay small).
    Gre(Box<GreTunnel>),
}

impl Device {
    /// ifindex.
    pub fn index(&self) -> u32 {
        match self {
            Device::Counting(d) => d.index,
            Device::Gre(t) => t.index(),
        }
    }

    /// Name.
    pub fn name(&self) -> &str {
        match self {
            Device::Counting(d) => &d.name,
            Device::Gre(t) => &t.config().name,
        }
    }

    /// Type.
    pub fn device_type(&self) -> DeviceType {
        match self {
            Device::Counting(d) => d.kind,
            Device::Gre(t) => DeviceType::Gre(t.config().kind),
        }
    }

    /// MTU.
    pub fn mtu(&self) -> u32 {
        match self {
            Device::Counting(d) => d.mtu.load(Ordering::Relaxed),
            Device::Gre(t) => t.mtu(),
        }
    }

    /// Sets the MTU.
    pub fn set_mtu(&self, mtu: u32) {
        match self {
            Device::Counting(d) => d.mtu.store(mtu, Ordering::Relaxed),
            Device::Gre(t) => t.set_mtu(mtu),
        }
    }

    /// Administratively up.
    pub fn is_up(&self) -> bool {
        match self {
            Device::Counting(d) => d.up.load(Ordering::Relaxed),
            Device::Gre(t) => t.is_up(),
        }
    }

    /// Sets up/down.
    pub fn set_up(&self, up: bool) {
        match self {
            Device::Counting(d) => d.up.store(up, Ordering::Relaxed),
            Device::Gre(t) => t.set_up(up),
        }
    }

    /// Statistics.
    pub fn stats(&self) -> &DeviceStats {
        match self {
            Device::Counting(d) => &d.stats,
            Device::Gre(t) => t.stats(),
        }
    }

    /// The GRE tunnel, if it is one.
    pub fn as_gre(&self) -> Option<&GreTunnel> {
        match self {
            Device::Gre(t) => Some(t),
            Device::Counting(_) => None,
        }
    }

    /// The `ip link` lines describing it.
    pub fn summary(&self) -> LinkSummary {
        let up = self.is_up();
        let (flags, link_line) = match self.device_type() {
            DeviceType::Loopback => (
                "LOOPBACK",
                "link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00".to_string(),
            ),
            DeviceType::Dummy => ("BROADCAST,NOARP", "link/none".to_string()),
            DeviceType::Gre(kind) if kind.is_tap() => {
                let i = self.index().to_be_bytes();
                (
                    "BROADCAST,MULTICAST",
                    format!(
                        "link/ether {} brd ff:ff:ff:ff:ff:ff",
                        tap_mac_text([0x02, 0x00, i[0], i[1], i[2], i[3]])
                    ),
                )
            }
            DeviceType::Gre(kind) => {
                let config = self.as_gre().map(|t| t.config());
                let local = config
                    .and_then(|c| c.local)
                    .map_or("any".to_string(), |a| a.to_string());
                let remote = config.map_or(String::new(), |c| c.remote.to_string());
                let link = match kind.family() {
                    fibre_fib::Family::V4 => "link/gre",
                    fibre_fib::Family::V6 => "link/gre6",
                };
                ("POINTOPOINT,NOARP", format!("{link} {local} peer {remote}"))
            }
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

/// A tap's MAC address as `ip link` prints it. Taps get a locally
/// administered address made of their ifindex (02:00:ii:ii:ii:ii), so it
/// is stable and unique within the registry; Linux picks a random one.
fn tap_mac_text(mac: [u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}
