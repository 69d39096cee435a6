//! The neighbour table's parameters with the kernel's defaults
//! (`arp_tbl` in net/ipv4/arp.c, `nd_tbl` in net/ipv6/ndisc.c, the sysctls
//! of Documentation/networking/ip-sysctl.rst), and the seeded random
//! source the reachable time is drawn from.

/// `net.ipv4.neigh.default.*` / `net.ipv6.neigh.default.*`, in
/// milliseconds where the kernel keeps jiffies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeighSettings {
    /// `base_reachable_time_ms`: the reachable time is drawn uniformly
    /// from `[0.5, 1.5)` times this (`neigh_rand_reach_time`).
    pub base_reachable_time_ms: u64,
    /// `retrans_time_ms`: between two solicitations.
    pub retrans_time_ms: u64,
    /// `delay_first_probe_time`: how long DELAY waits for a confirmation.
    pub delay_first_probe_time_ms: u64,
    /// `mcast_solicit`: broadcast/multicast solicitations while INCOMPLETE.
    pub mcast_solicit: u32,
    /// `ucast_solicit`: unicast probes in PROBE.
    pub ucast_solicit: u32,
    /// `app_solicit`: requests to a user-space daemon (fibre has none; any
    /// value counts only towards the number of probes, as in the kernel).
    pub app_solicit: u32,
    /// `mcast_resolicit`: multicast probes in PROBE after the unicast ones.
    pub mcast_resolicit: u32,
    /// `unres_qlen_bytes`: the bytes of packets one unresolved neighbour
    /// queues (`SK_WMEM_MAX`).
    pub unres_qlen_bytes: usize,
    /// `unres_qlen`: the packets one unresolved neighbour queues (the
    /// kernel derives it from the bytes and the truesize of a full-sized
    /// Ethernet frame: 101; fibre bounds by both).
    pub unres_qlen: usize,
    /// `gc_stale_time`: an unused entry older than this may be collected.
    pub gc_stale_time_ms: u64,
    /// `gc_thresh1`: below it the periodic collection does nothing.
    pub gc_thresh1: usize,
    /// `gc_thresh2`: above it a new entry forces a collection (at most
    /// every 5 s).
    pub gc_thresh2: usize,
    /// `gc_thresh3`: the most entries subject to collection per table.
    pub gc_thresh3: usize,
    /// `locktime`: an ARP reply within this of the last update does not
    /// override the address (the first of competing proxies wins).
    pub locktime_ms: u64,
    /// `gc_interval` of the periodic collection (`neigh_periodic_work`
    /// runs every `base_reachable_time / 2`).
    pub gc_interval_ms: u64,
    /// The seed of the reachable-time draws (the kernel's are random).
    pub seed: u64,
}

impl Default for NeighSettings {
    fn default() -> Self {
        NeighSettings {
            base_reachable_time_ms: 30_000,
            retrans_time_ms: 1_000,
            delay_first_probe_time_ms: 5_000,
            mcast_solicit: 3,
            ucast_solicit: 3,
            app_solicit: 0,
            mcast_resolicit: 0,
            unres_qlen_bytes: 212_992,
            unres_qlen: 101,
            gc_stale_time_ms: 60_000,
            gc_thresh1: 128,
            gc_thresh2: 512,
            gc_thresh3: fibre_fib::GC_THRESH3,
            locktime_ms: 1_000,
            gc_interval_ms: 15_000,
            seed: 0x6e65_6967_6862_6f72,
        }
    }
}

/// SplitMix64: a small seeded generator, so that a table's reachable
/// times are the same on every run with the same seed.
#[derive(Debug, Clone)]
pub(crate) struct SeededRandom(u64);

impl SeededRandom {
    pub(crate) fn new(seed: u64) -> Self {
        SeededRandom(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// `neigh_rand_reach_time`: uniform in `[base/2, base*3/2)`; 0 for 0.
    pub(crate) fn reach_time(&mut self, base: u64) -> u64 {
        if base == 0 {
            return 0;
        }
        self.next_u64() % base + base / 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reachable_times_stay_in_half_to_one_and_a_half_base() {
        let mut rng = SeededRandom::new(7);
        let draws: Vec<u64> = (0..10_000).map(|_| rng.reach_time(30_000)).collect();
        assert!(draws.iter().all(|t| (15_000..45_000).contains(t)));
        // Both halves of the range are reached.
        assert!(draws.iter().any(|t| *t < 20_000) && draws.iter().any(|t| *t > 40_000));
        let mut again = SeededRandom::new(7);
        assert_eq!(again.reach_time(30_000), draws[0]);
    }
}
