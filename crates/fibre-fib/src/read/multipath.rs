//! Multipath (ECMP) path selection: the flow hash of
//! `fib_multipath_hash` (policy 0: L3, policy 1: L4) and the weighted
//! upper-bound choice of `fib_select_multipath` / `fib_rebalance`.
//!
//! The kernel seeds its hash randomly at boot, so only the set of paths a
//! destination may take is comparable with it; this hash is deterministic
//! for a given seed, which makes answers reproducible.

use std::net::IpAddr;

use crate::types::Nexthop;

/// `fib_multipath_hash_policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MultipathHashPolicy {
    /// 0: source and destination address.
    L3,
    /// 1: addresses, protocol and ports (the 5-tuple).
    L4,
}

/// The fields a multipath hash may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowHashInput {
    /// Source address (unspecified when unknown).
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// L4 protocol number.
    pub proto: u8,
    /// L4 source port.
    pub sport: u16,
    /// L4 destination port.
    pub dport: u16,
}

/// 64-bit finaliser (splitmix64): cheap, well mixed, deterministic.
#[inline]
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[inline]
fn addr_bits(a: &IpAddr) -> u128 {
    match a {
        IpAddr::V4(v) => u128::from(u32::from(*v)),
        IpAddr::V6(v) => u128::from(*v),
    }
}

/// The 31-bit flow hash (`fib_multipath_hash() >> 1`) under `policy`.
///
/// ```
/// use fibre_fib::multipath::*;
/// let f = FlowHashInput {
///     src: "10.0.0.1".parse().unwrap(), dst: "192.0.2.9".parse().unwrap(),
///     proto: 6, sport: 1234, dport: 80,
/// };
/// let h = flow_hash(&f, MultipathHashPolicy::L3, 7);
/// assert!(h <= i32::MAX as u32);
/// // L3 ignores ports, L4 does not.
/// let g = FlowHashInput { sport: 4321, ..f };
/// assert_eq!(h, flow_hash(&g, MultipathHashPolicy::L3, 7));
/// ```
#[inline]
pub fn flow_hash(f: &FlowHashInput, policy: MultipathHashPolicy, seed: u64) -> u32 {
    let s = addr_bits(&f.src);
    let d = addr_bits(&f.dst);
    let mut h = mix(seed ^ (s as u64));
    h = mix(h ^ ((s >> 64) as u64));
    h = mix(h ^ (d as u64));
    h = mix(h ^ ((d >> 64) as u64));
    if policy == MultipathHashPolicy::L4 {
        let l4 = (u64::from(f.proto) << 32) | (u64::from(f.sport) << 16) | u64::from(f.dport);
        h = mix(h ^ l4);
    }
    (h >> 33) as u32
}

/// `fib_rebalance` + `fib_select_multipath`: the index of the path for a
/// 31-bit `hash`, weighted, skipping dead paths; None when all are dead.
///
/// Each live path `i` owns the hash range up to
/// `round(cumulative_weight_i * 2^31 / total) - 1`.
///
/// ```
/// use fibre_fib::multipath::select_path;
/// use fibre_fib::{Nexthop, NexthopFlags};
/// let nh = |w| Nexthop { gateway: None, dev: Some(2), weight: w, flags: NexthopFlags::default() };
/// let paths = [nh(1), nh(3)];
/// assert_eq!(select_path(&paths, 0), Some(0));
/// assert_eq!(select_path(&paths, (1 << 29) - 1), Some(0)); // first quarter
/// assert_eq!(select_path(&paths, 1 << 29), Some(1));
/// ```
#[inline]
pub fn select_path(paths: &[Nexthop], hash: u32) -> Option<usize> {
    let total: u64 = paths
        .iter()
        .filter(|n| !n.flags.dead)
        .map(|n| u64::from(n.weight))
        .sum();
    if total == 0 {
        return None;
    }
    let mut cumulative = 0u64;
    let mut first_alive = None;
    for (i, n) in paths.iter().enumerate() {
        if n.flags.dead {
            continue;
        }
        first_alive.get_or_insert(i);
        cumulative += u64::from(n.weight);
        let upper = ((cumulative << 31) + total / 2) / total;
        if u64::from(hash) <= upper.saturating_sub(1) {
            return Some(i);
        }
    }
    first_alive
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::NexthopFlags;
    use proptest::prelude::*;

    fn nh(weight: u16, dead: bool) -> Nexthop {
        Nexthop {
            gateway: None,
            dev: Some(2),
            weight,
            flags: NexthopFlags {
                dead,
                ..NexthopFlags::default()
            },
        }
    }

    #[test]
    fn weights_split_the_hash_space() {
        // Weights 1:2:5 over a fine sweep of the 31-bit space.
        let paths = [nh(1, false), nh(2, false), nh(5, false)];
        let mut count = [0u32; 3];
        let steps = 8000u32;
        for k in 0..steps {
            let h = ((u64::from(k) << 31) / u64::from(steps)) as u32;
            count[select_path(&paths, h).unwrap()] += 1;
        }
        assert_eq!(count, [1000, 2000, 5000]);
    }

    #[test]
    fn hashed_flows_follow_weights() {
        let paths = [nh(1, false), nh(3, false)];
        let mut count = [0u32; 2];
        for i in 0..20_000u32 {
            let f = FlowHashInput {
                src: "10.0.0.1".parse().unwrap(),
                dst: IpAddr::V4((0xc000_0000 + i).into()),
                proto: 0,
                sport: 0,
                dport: 0,
            };
            count[select_path(&paths, flow_hash(&f, MultipathHashPolicy::L3, 1)).unwrap()] += 1;
        }
        let share = f64::from(count[1]) / 20_000.0;
        assert!(
            (share - 0.75).abs() < 0.02,
            "share of the weight-3 path: {share}"
        );
    }

    #[test]
    fn dead_paths_are_skipped() {
        let paths = [nh(1, true), nh(1, false)];
        for h in [0, 1 << 20, (1 << 31) - 1] {
            assert_eq!(select_path(&paths, h), Some(1));
        }
        assert_eq!(select_path(&[nh(1, true)], 0), None);
    }

    proptest! {
        #[test]
        fn always_picks_a_live_path(weights in prop::collection::vec((1u16..=256, any::<bool>()), 1..8), hash in 0u32..(1 << 31)) {
            let paths: Vec<Nexthop> = weights.iter().map(|(w, d)| nh(*w, *d)).collect();
            match select_path(&paths, hash) {
                Some(i) => prop_assert!(!paths[i].flags.dead),
                None => prop_assert!(paths.iter().all(|p| p.flags.dead)),
            }
        }
    }
}
