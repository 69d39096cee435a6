//! Per-worker device statistics, summed when read, and their `ip -s link`
//! rendering.
//!
//! Each worker owns one [`WorkerCounters`] slot (its own cache lines), and
//! adds to it once per batch, never per packet; readers sum the slots. The
//! counters are relaxed atomics so that a misused worker id (two threads on
//! one id) loses nothing and stays sound: on the owner's own line an
//! uncontended atomic add costs about what a plain add does.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use fibre_base::{CachePadded, CACHE_LINE};

use crate::{DropClass, DropReason, WorkerId};

/// One worker's counters, kept in a [`CachePadded`] slot so that two
/// workers' counters never share a cache line (nor, on x86-64, a line
/// pair the adjacent-line prefetcher fetches together).
#[repr(C)]
#[derive(Debug)]
pub struct WorkerCounters {
    rx_packets: AtomicU64,
    rx_bytes: AtomicU64,
    tx_packets: AtomicU64,
    tx_bytes: AtomicU64,
    drops: [AtomicU64; DropReason::COUNT],
}

// By hand: arrays longer than 32 have no `Default`, and there are more
// drop reasons than that.
impl Default for WorkerCounters {
    fn default() -> Self {
        WorkerCounters {
            rx_packets: AtomicU64::new(0),
            rx_bytes: AtomicU64::new(0),
            tx_packets: AtomicU64::new(0),
            tx_bytes: AtomicU64::new(0),
            drops: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

const _: () = assert!(
    core::mem::size_of::<CachePadded<WorkerCounters>>().is_multiple_of(CACHE_LINE)
        && core::mem::align_of::<CachePadded<WorkerCounters>>() == CACHE_LINE,
    "a worker's counters must fill whole cache lines of their own: if this \
     fires, keep the slots in CachePadded"
);
const _: () = assert!(
    core::mem::offset_of!(WorkerCounters, drops) == 32,
    "the drop counters follow the four packet/byte counters: if this fires, \
     re-check WorkerCounters' field order"
);

/// A device's counters as plain numbers: what one worker adds after a
/// batch (kept on its stack, so the shared counters see one add per field
/// per batch), and the sum over every worker that
/// [`DeviceStats::snapshot`] reads. Both are the same fields, so they are
/// one type under two names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceCounts {
    /// Packets received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Drops by reason, indexed by [`DropReason::index`].
    pub drops: [u64; DropReason::COUNT],
}

/// What one worker adds after a batch.
pub type BatchCounts = DeviceCounts;

/// Summed statistics of a device.
pub type StatsSnapshot = DeviceCounts;

// By hand, as for WorkerCounters: arrays longer than 32 have no `Default`.
impl Default for DeviceCounts {
    fn default() -> Self {
        DeviceCounts {
            rx_packets: 0,
            rx_bytes: 0,
            tx_packets: 0,
            tx_bytes: 0,
            drops: [0; DropReason::COUNT],
        }
    }
}

impl DeviceCounts {
    /// Counts one drop.
    pub fn drop(&mut self, reason: DropReason) {
        self.drops[reason.index()] += 1;
    }

    /// Drops counted under `reason`.
    pub fn drops(&self, reason: DropReason) -> u64 {
        self.drops[reason.index()]
    }

    /// Sum of the drops of one `ip -s link` class.
    pub fn class_total(&self, class: DropClass) -> u64 {
        DropReason::ALL
            .iter()
            .filter(|r| r.class() == class)
            .map(|r| self.drops(*r))
            .sum()
    }

    /// The figures `ip -s link` prints.
    pub fn ip_link_stats(&self) -> IpLinkStats {
        IpLinkStats {
            rx_bytes: self.rx_bytes,
            rx_packets: self.rx_packets,
            rx_errors: self.class_total(DropClass::RxErrors),
            rx_dropped: self.class_total(DropClass::RxDropped),
            tx_bytes: self.tx_bytes,
            tx_packets: self.tx_packets,
            tx_errors: self.class_total(DropClass::TxErrors),
            tx_dropped: self.class_total(DropClass::TxDropped),
            // Linux counts a tunnel routed into itself here too.
            tx_collisions: self.drops(DropReason::UnderlayLoop),
            ..IpLinkStats::default()
        }
    }
}

/// A device's statistics: one slot per worker.
///
/// ```
/// use fibre_dev::{stats::{BatchCounts, DeviceStats}, DropReason, WorkerId};
/// let stats = DeviceStats::new(2);
/// let mut c = BatchCounts { tx_packets: 3, tx_bytes: 300, ..Default::default() };
/// c.drop(DropReason::NoRoute);
/// stats.add(WorkerId::new(0), &c);
/// stats.add(WorkerId::new(1), &c);
/// let total = stats.snapshot();
/// assert_eq!((total.tx_packets, total.tx_bytes), (6, 600));
/// assert_eq!(total.drops(DropReason::NoRoute), 2);
/// ```
#[derive(Debug)]
pub struct DeviceStats {
    slots: Box<[CachePadded<WorkerCounters>]>,
}

impl DeviceStats {
    /// Slots for `workers` workers (at least one).
    pub fn new(workers: usize) -> DeviceStats {
        let slots = (0..workers.max(1))
            .map(|_| CachePadded::new(WorkerCounters::default()))
            .collect();
        DeviceStats { slots }
    }

    /// Number of worker slots.
    pub fn workers(&self) -> usize {
        self.slots.len()
    }

    /// Adds a batch's counts to `worker`'s slot; an out-of-range worker is
    /// folded onto a valid slot, so nothing is lost.
    pub fn add(&self, worker: WorkerId, counts: &BatchCounts) {
        let slot = &self.slots[worker.index() % self.slots.len()];
        let add = |counter: &AtomicU64, value: u64| {
            if value != 0 {
                counter.fetch_add(value, Ordering::Relaxed);
            }
        };
        add(&slot.rx_packets, counts.rx_packets);
        add(&slot.rx_bytes, counts.rx_bytes);
        add(&slot.tx_packets, counts.tx_packets);
        add(&slot.tx_bytes, counts.tx_bytes);
        for (counter, &value) in slot.drops.iter().zip(counts.drops.iter()) {
            add(counter, value);
        }
    }

    /// The sum over every worker (each counter read once; a snapshot taken
    /// while workers run is a consistent lower bound per counter).
    pub fn snapshot(&self) -> StatsSnapshot {
        let mut total = StatsSnapshot::default();
        for slot in self.slots.iter() {
            total.rx_packets += slot.rx_packets.load(Ordering::Relaxed);
            total.rx_bytes += slot.rx_bytes.load(Ordering::Relaxed);
            total.tx_packets += slot.tx_packets.load(Ordering::Relaxed);
            total.tx_bytes += slot.tx_bytes.load(Ordering::Relaxed);
            for (sum, counter) in total.drops.iter_mut().zip(slot.drops.iter()) {
                *sum += counter.load(Ordering::Relaxed);
            }
        }
        total
    }
}

/// The twelve figures of `ip -s link` (`rtnl_link_stats64` as iproute2 6.1
/// prints it with one `-s`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IpLinkStats {
    /// RX bytes.
    pub rx_bytes: u64,
    /// RX packets.
    pub rx_packets: u64,
    /// RX errors.
    pub rx_errors: u64,
    /// RX dropped.
    pub rx_dropped: u64,
    /// RX missed.
    pub rx_missed: u64,
    /// RX multicast.
    pub rx_mcast: u64,
    /// TX bytes.
    pub tx_bytes: u64,
    /// TX packets.
    pub tx_packets: u64,
    /// TX errors.
    pub tx_errors: u64,
    /// TX dropped.
    pub tx_dropped: u64,
    /// TX carrier errors.
    pub tx_carrier: u64,
    /// TX collisions.
    pub tx_collisions: u64,
}

/// The link line `ip link` prints above the statistics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkSummary {
    /// ifindex.
    pub index: u32,
    /// Name.
    pub name: String,
    /// Flags inside `<...>`, e.g. `POINTOPOINT,NOARP,UP,LOWER_UP`.
    pub flags: String,
    /// MTU.
    pub mtu: u32,
    /// `UP`, `DOWN` or `UNKNOWN`.
    pub state: &'static str,
    /// The second line without its indentation, e.g. `link/gre 192.0.2.1 peer 192.0.2.2`.
    pub link_line: String,
}

/// Renders a device as `ip -s link show` (iproute2 6.1) does: link line,
/// `link/` line, then RX and TX headers and figures. Column widths grow
/// with the numbers exactly as iproute2's do.
///
/// ```
/// use fibre_dev::stats::{format_ip_s_link, IpLinkStats, LinkSummary};
/// let link = LinkSummary { index: 1, name: "lo".into(), flags: "LOOPBACK,UP,LOWER_UP".into(),
///     mtu: 65536, state: "UNKNOWN", link_line: "link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00".into() };
/// let text = format_ip_s_link(&link, &IpLinkStats { rx_packets: 7, ..Default::default() });
/// assert!(text.starts_with("1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN"));
/// assert!(text.contains("\n    RX:  bytes packets errors dropped  missed   mcast           \n"));
/// assert!(text.contains("\n             0       7      0       0       0       0 \n"));
/// ```
pub fn format_ip_s_link(link: &LinkSummary, stats: &IpLinkStats) -> String {
    let mut out = format!(
        "{}: {}: <{}> mtu {} qdisc noqueue state {} mode DEFAULT group default qlen 1000\n    {}\n",
        link.index, link.name, link.flags, link.mtu, link.state, link.link_line
    );
    out.push_str(&format_ip_s_link_stats(stats));
    out
}

/// The four statistics lines of `ip -s link` alone.
pub fn format_ip_s_link_stats(s: &IpLinkStats) -> String {
    // iproute2's minimum widths: strlen of "*X errors:", "packets", "errors",
    // "dropped", "heartbt", "overrun", "compressed"; each grows to the widest
    // number in its column, RX and TX together.
    let mut cols = [10usize, 7, 6, 7, 7, 7, 10];
    let rx = [
        s.rx_bytes,
        s.rx_packets,
        s.rx_errors,
        s.rx_dropped,
        s.rx_missed,
        s.rx_mcast,
    ];
    let tx = [
        s.tx_bytes,
        s.tx_packets,
        s.tx_errors,
        s.tx_dropped,
        s.tx_carrier,
        s.tx_collisions,
    ];
    for row in [&rx, &tx] {
        for (col, value) in cols.iter_mut().zip(row.iter()) {
            *col = (*col).max(value.to_string().len());
        }
    }
    let mut out = String::new();
    let header = |out: &mut String, dir: &str, last: [&str; 2]| {
        let _ = writeln!(
            out,
            "    {dir}: {:>w0$} {:>w1$} {:>w2$} {:>w3$} {:>w4$} {:>w5$} {:>w6$}",
            "bytes",
            "packets",
            "errors",
            "dropped",
            last[0],
            last[1],
            "",
            w0 = cols[0] - 4,
            w1 = cols[1],
            w2 = cols[2],
            w3 = cols[3],
            w4 = cols[4],
            w5 = cols[5],
            w6 = cols[6],
        );
    };
    let numbers = |out: &mut String, values: &[u64; 6]| {
        out.push_str("    ");
        for (value, width) in values.iter().zip(cols.iter()) {
            let _ = write!(out, "{value:>width$} ");
        }
        out.push('\n');
    };
    header(&mut out, "RX", ["missed", "mcast"]);
    numbers(&mut out, &rx);
    header(&mut out, "TX", ["carrier", "collsns"]);
    numbers(&mut out, &tx);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_widen_with_large_numbers() {
        let text = format_ip_s_link_stats(&IpLinkStats {
            rx_bytes: 123_456_789_012,
            tx_packets: 12_345_678,
            ..Default::default()
        });
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "    RX:    bytes  packets errors dropped  missed   mcast           "
        );
        assert_eq!(
            lines[1],
            "    123456789012        0      0       0       0       0 "
        );
        assert_eq!(
            lines[3],
            "               0 12345678      0       0       0       0 "
        );
    }

    #[test]
    fn snapshot_sums_workers_and_classes() {
        let stats = DeviceStats::new(3);
        let mut counts = BatchCounts::default();
        counts.drop(DropReason::BadChecksum);
        counts.drop(DropReason::NotForTunnel);
        counts.drop(DropReason::TooBig);
        counts.drop(DropReason::NoHeadroom);
        for w in 0..4 {
            stats.add(WorkerId::new(w), &counts);
        }
        let s = stats.snapshot().ip_link_stats();
        assert_eq!(
            (s.rx_errors, s.rx_dropped, s.tx_errors, s.tx_dropped),
            (4, 4, 4, 4)
        );
    }
}
