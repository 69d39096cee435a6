//! How a worker is set up: its ports and its queue sizes.

use fibre_fib::{LinkIndex, RpFilter};

use crate::icmp::RateLimitSettings;

/// One port of a worker: the FIB link it is (by ifindex), its MAC address
/// and the per-device settings the forwarding path reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortConfig {
    /// The FIB link (ifindex) this port is.
    pub link: LinkIndex,
    /// The port's MAC address: frames to it are `PACKET_HOST`, and
    /// frames it sends come from it.
    pub mac: [u8; 6],
    /// `net.ipv4.conf.DEV.rp_filter` for packets received here (the
    /// larger of the device's and `all`'s, as `IN_DEV_RPFILTER` takes it).
    /// The FIB models the kernel's default, 0, alone: this setting is the
    /// worker's.
    pub rp_filter: RpFilter,
    /// `net.ipv4.conf.DEV.send_redirects` (default on, and `all`'s too):
    /// an ICMP redirect for a packet forwarded back out of this port to a
    /// directly reachable sender.
    pub send_redirects: bool,
}

impl PortConfig {
    /// A port for `link` with MAC `mac` and the kernel's defaults
    /// (`rp_filter` 0, `send_redirects` 1).
    pub fn new(link: LinkIndex, mac: [u8; 6]) -> PortConfig {
        PortConfig {
            link,
            mac,
            rp_filter: RpFilter::Off,
            send_redirects: true,
        }
    }
}

/// Sizes and limits of a worker; everything is allocated when the worker
/// is made, nothing afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerConfig {
    /// The largest IP packet a port carries: the largest MTU of any port
    /// (slots are this plus the Ethernet header and a VLAN tag). A link's
    /// MTU beyond it counts as this.
    pub max_mtu: usize,
    /// Frames each port's transmit queue holds between drains.
    pub tx_queue_len: usize,
    /// Packets the queue to the control side for unresolved next hops
    /// holds between drains (the kernel bounds each neighbour's queue by
    /// `unres_qlen_bytes`; here the worker's one queue is bounded).
    pub unresolved_queue_len: usize,
    /// Packets for the router itself (and ARP/ND) the control side's
    /// queues hold between drains, each.
    pub control_queue_len: usize,
    /// The ICMP rate limits (`icmp_ratelimit`, `icmp_msgs_per_sec`, ...).
    pub icmp: RateLimitSettings,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        WorkerConfig {
            max_mtu: 1500,
            tx_queue_len: 1024,
            unresolved_queue_len: 256,
            control_queue_len: 256,
            icmp: RateLimitSettings::default(),
        }
    }
}
