//! Per-nexthop exceptions (the kernel's `fib_nh_exception`): a learned path
//! MTU or an ICMP redirect for one destination, with an expiry.
//!
//! The table is bounded as the kernel's is since its 2021 hardening: a
//! keyed hash (SipHash with random keys, so a remote sender cannot aim at
//! one chain), a fixed number of buckets, and chains capped at a depth
//! drawn at random per insertion between [`ExceptionConfig::chain_depth`]
//! and twice that; a full chain evicts its oldest entry. Memory is then at
//! most [`ExceptionTable::max_bytes`] however many destinations arrive.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// IPv6's minimum MTU (RFC 8200).
pub const IPV6_MIN_MTU: u32 = 1280;
/// The kernel's `net.ipv4.route.min_pmtu` default.
pub const DEFAULT_MIN_PMTU_V4: u32 = 552;
/// The kernel's `net.ipv4.route.mtu_expires` default (600 s).
pub const DEFAULT_EXPIRES_MS: u64 = 600_000;

/// Exception table settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExceptionConfig {
    /// Lifetime of a learned exception (kernel default 600 s).
    pub expires_ms: u64,
    /// Floor a learned IPv4 path MTU is raised to (kernel `min_pmtu`, 552).
    pub min_pmtu_v4: u32,
    /// Hash buckets (kernel `FNHE_HASH_SIZE`, 2048).
    pub buckets: usize,
    /// Base chain depth (kernel `FNHE_RECLAIM_DEPTH`, 5); the cap is drawn
    /// in `depth..2*depth` per insertion.
    pub chain_depth: usize,
}

impl Default for ExceptionConfig {
    fn default() -> Self {
        ExceptionConfig {
            expires_ms: DEFAULT_EXPIRES_MS,
            min_pmtu_v4: DEFAULT_MIN_PMTU_V4,
            buckets: 2048,
            chain_depth: 5,
        }
    }
}

/// One exception.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exception {
    /// The destination it applies to.
    pub dst: IpAddr,
    /// Learned path MTU; 0: none.
    pub pmtu: u32,
    /// Redirected gateway, if any.
    pub gateway: Option<IpAddr>,
    /// When it lapses, on the cache's clock (ms).
    pub expires_ms: u64,
    /// The path MTU was raised to the floor (`min_pmtu`) and is locked:
    /// later reports for this destination are ignored until it lapses, and
    /// `ip` shows `mtu lock N`.
    pub mtu_locked: bool,
    /// Insertion order, for evicting the oldest.
    stamp: u64,
}

/// What a path MTU report did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PmtuOutcome {
    /// Recorded this MTU.
    Recorded(u32),
    /// The report was below the IPv4 floor (`min_pmtu`): recorded the
    /// floor (or the current MTU if lower) and locked it, as the kernel's
    /// `__ip_rt_update_pmtu` does.
    RecordedLocked(u32),
    /// Ignored: above the path's current MTU (IPv4), or not below it
    /// (IPv6).
    NotSmaller,
    /// Ignored: the route's MTU is locked.
    Locked,
    /// Ignored: the destination does not route (any more).
    NoRoute,
}

/// Clamps an ICMP-reported MTU as the kernel does, given the path's
/// current MTU: IPv4 below `min_pmtu` (even 0, from a router that sends
/// no MTU, or below IPv4's 68) is raised to `min(current, min_pmtu)` and
/// locked, as Linux's `__ip_rt_update_pmtu` does since 3.6 (no more
/// "plateau" guessing); a report above the current MTU is ignored, one
/// equal to it recorded (the kernel refreshes the exception, see
/// [`RouteCache::update_pmtu`](crate::RouteCache::update_pmtu)). IPv6 is
/// raised to 1280 and ignored unless below the current MTU
/// (`__ip6_rt_update_pmtu`).
///
/// ```
/// use fibre_route::exceptions::{clamp_pmtu, PmtuOutcome};
/// let v4: std::net::IpAddr = "192.0.2.1".parse().unwrap();
/// let v6: std::net::IpAddr = "2001:db8::1".parse().unwrap();
/// assert_eq!(clamp_pmtu(v4, 1400, 1500, 552), PmtuOutcome::Recorded(1400));
/// assert_eq!(clamp_pmtu(v4, 300, 1500, 552), PmtuOutcome::RecordedLocked(552));
/// assert_eq!(clamp_pmtu(v4, 0, 1500, 552), PmtuOutcome::RecordedLocked(552));
/// assert_eq!(clamp_pmtu(v4, 9000, 1500, 552), PmtuOutcome::NotSmaller);
/// assert_eq!(clamp_pmtu(v4, 1500, 1500, 552), PmtuOutcome::Recorded(1500));
/// assert_eq!(clamp_pmtu(v4, 300, 500, 552), PmtuOutcome::RecordedLocked(500));
/// assert_eq!(clamp_pmtu(v6, 1000, 1500, 552), PmtuOutcome::Recorded(1280));
/// assert_eq!(clamp_pmtu(v6, 1500, 1500, 552), PmtuOutcome::NotSmaller);
/// ```
pub fn clamp_pmtu(dst: IpAddr, reported: u32, current: u32, min_pmtu_v4: u32) -> PmtuOutcome {
    let (mtu, locked) = match dst {
        IpAddr::V4(_) => {
            if reported > current {
                return PmtuOutcome::NotSmaller;
            }
            if reported < min_pmtu_v4 {
                (current.min(min_pmtu_v4), true)
            } else {
                (reported, false)
            }
        }
        IpAddr::V6(_) => {
            let mtu = reported.max(IPV6_MIN_MTU);
            if mtu >= current {
                return PmtuOutcome::NotSmaller;
            }
            (mtu, false)
        }
    };
    if locked {
        PmtuOutcome::RecordedLocked(mtu)
    } else {
        PmtuOutcome::Recorded(mtu)
    }
}

/// A bounded exception table (one per nexthop, made on first use).
///
/// ```
/// use fibre_route::exceptions::{ExceptionConfig, ExceptionTable};
/// let mut t = ExceptionTable::new(ExceptionConfig::default());
/// let dst = "192.0.2.7".parse().unwrap();
/// t.set_pmtu(dst, 1400, 0);
/// assert_eq!(t.get(dst, 1_000).unwrap().pmtu, 1400);
/// assert!(t.get(dst, 600_000).is_none()); // expired after 600 s
/// ```
#[derive(Debug)]
pub struct ExceptionTable {
    config: ExceptionConfig,
    hasher: RandomState,
    buckets: Vec<Vec<Exception>>,
    len: usize,
    next_stamp: u64,
    evicted: u64,
    last_sweep_ms: u64,
}

impl ExceptionTable {
    /// An empty table (buckets allocated lazily, chains on first insert).
    pub fn new(config: ExceptionConfig) -> ExceptionTable {
        let config = ExceptionConfig {
            buckets: config.buckets.max(1),
            chain_depth: config.chain_depth.max(1),
            ..config
        };
        ExceptionTable {
            config,
            hasher: RandomState::new(),
            buckets: Vec::new(),
            len: 0,
            next_stamp: 0,
            evicted: 0,
            last_sweep_ms: 0,
        }
    }

    /// The settings.
    pub fn config(&self) -> &ExceptionConfig {
        &self.config
    }

    fn bucket_of(&self, dst: IpAddr) -> usize {
        (self.hasher.hash_one(dst) % self.config.buckets as u64) as usize
    }

    /// A random chain cap in `depth..2*depth`, drawn from the keyed hasher.
    fn drawn_depth(&self) -> usize {
        let d = self.config.chain_depth;
        d + (self.hasher.hash_one((self.next_stamp, 0xdead_u16)) % d as u64) as usize
    }

    fn upsert(&mut self, dst: IpAddr, now_ms: u64, change: impl FnOnce(&mut Exception)) {
        if self.buckets.is_empty() {
            self.buckets = vec![Vec::new(); self.config.buckets];
        }
        let b = self.bucket_of(dst);
        let expires_ms = now_ms.saturating_add(self.config.expires_ms);
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        let depth = self.drawn_depth();
        let chain = &mut self.buckets[b];
        // Expired entries go first: they are free room.
        let before = chain.len();
        chain.retain(|e| e.expires_ms > now_ms);
        self.len -= before - chain.len();
        if let Some(e) = chain.iter_mut().find(|e| e.dst == dst) {
            change(e);
            e.expires_ms = expires_ms;
            e.stamp = stamp;
            return;
        }
        while chain.len() >= depth {
            let oldest = chain
                .iter()
                .enumerate()
                .min_by_key(|(_, e)| e.stamp)
                .map(|(i, _)| i)
                .unwrap_or(0);
            chain.swap_remove(oldest);
            self.len -= 1;
            self.evicted += 1;
        }
        let mut e = Exception {
            dst,
            pmtu: 0,
            gateway: None,
            expires_ms,
            mtu_locked: false,
            stamp,
        };
        change(&mut e);
        chain.push(e);
        self.len += 1;
    }

    /// Records a path MTU for `dst` (already clamped: see [`clamp_pmtu`]).
    pub fn set_pmtu(&mut self, dst: IpAddr, mtu: u32, now_ms: u64) {
        self.upsert(dst, now_ms, |e| e.pmtu = mtu);
    }

    /// Records a path MTU for `dst` raised to the floor, locked
    /// ([`PmtuOutcome::RecordedLocked`]).
    pub fn set_pmtu_locked(&mut self, dst: IpAddr, mtu: u32, now_ms: u64) {
        self.upsert(dst, now_ms, |e| {
            e.pmtu = mtu;
            e.mtu_locked = true;
        });
    }

    /// Records a redirect of `dst` to `gateway`.
    pub fn set_redirect(&mut self, dst: IpAddr, gateway: IpAddr, now_ms: u64) {
        self.upsert(dst, now_ms, |e| e.gateway = Some(gateway));
    }

    /// The live exception for `dst`, if any.
    pub fn get(&self, dst: IpAddr, now_ms: u64) -> Option<Exception> {
        if self.buckets.is_empty() {
            return None;
        }
        self.buckets[self.bucket_of(dst)]
            .iter()
            .find(|e| e.dst == dst && e.expires_ms > now_ms)
            .copied()
    }

    /// Removes the exceptions `drop_it` picks; returns how many.
    pub fn remove_where(&mut self, mut drop_it: impl FnMut(&Exception) -> bool) -> usize {
        let before = self.len;
        for chain in &mut self.buckets {
            chain.retain(|e| !drop_it(e));
        }
        self.len = self.buckets.iter().map(Vec::len).sum();
        before - self.len
    }

    /// Drops expired entries; returns how many.
    pub fn expire(&mut self, now_ms: u64) -> usize {
        self.remove_where(|e| e.expires_ms <= now_ms)
    }

    /// Like [`ExceptionTable::expire`], but at most once a second (a sweep
    /// walks every bucket): what a lookup path may call.
    pub fn expire_if_due(&mut self, now_ms: u64) -> usize {
        if now_ms.saturating_sub(self.last_sweep_ms) < 1000 {
            return 0;
        }
        self.last_sweep_ms = now_ms;
        self.expire(now_ms)
    }

    /// Live and not-yet-swept entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entries evicted from full chains so far.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// The live entries, oldest first.
    pub fn entries(&self, now_ms: u64) -> Vec<Exception> {
        let mut v: Vec<Exception> = self
            .buckets
            .iter()
            .flatten()
            .filter(|e| e.expires_ms > now_ms)
            .copied()
            .collect();
        v.sort_by_key(|e| e.stamp);
        v
    }

    /// Bytes the table holds now (bucket array and chain capacity).
    pub fn heap_bytes(&self) -> usize {
        self.buckets.capacity() * std::mem::size_of::<Vec<Exception>>()
            + self
                .buckets
                .iter()
                .map(|c| c.capacity() * std::mem::size_of::<Exception>())
                .sum::<usize>()
    }

    /// The most bytes the table can ever hold: every bucket's chain at its
    /// largest cap (2 x depth - 1 entries, capacity rounded up to a power
    /// of two by `Vec`'s growth).
    pub fn max_bytes(&self) -> usize {
        let max_chain = (2 * self.config.chain_depth - 1).next_power_of_two();
        self.config.buckets
            * (std::mem::size_of::<Vec<Exception>>() + max_chain * std::mem::size_of::<Exception>())
    }
}

/// The `cache` line `ip route get` prints under a route that carries an
/// exception, as the kernel reports it (`cache expires 587sec mtu 1400`,
/// `cache <redirected> expires 295sec`). Seconds are truncated as
/// iproute2 divides the remaining jiffies by HZ.
///
/// ```
/// use fibre_route::exceptions::{format_cache_line, ExceptionTable, ExceptionConfig};
/// let mut t = ExceptionTable::new(ExceptionConfig::default());
/// let dst = "192.0.2.7".parse().unwrap();
/// t.set_pmtu(dst, 1400, 0);
/// let e = t.get(dst, 12_500).unwrap();
/// assert_eq!(format_cache_line(&e, 12_500), "cache expires 587sec mtu 1400");
/// ```
pub fn format_cache_line(exception: &Exception, now_ms: u64) -> String {
    let mut line = String::from("cache");
    if exception.gateway.is_some() {
        line.push_str(" <redirected>");
    }
    let left = exception.expires_ms.saturating_sub(now_ms) / 1000;
    line.push_str(&format!(" expires {left}sec"));
    if exception.pmtu != 0 {
        let lock = if exception.mtu_locked { "lock " } else { "" };
        line.push_str(&format!(" mtu {lock}{}", exception.pmtu));
    }
    line
}

/// One entry of `ip route show cache` (IPv4, as the kernel lists
/// exceptions): the destination line, then the indented `cache` line.
/// `gateway` is the route's gateway (a redirect's replaces it), `dev` the
/// output device's name.
///
/// ```
/// use fibre_route::exceptions::{format_show_cache, ExceptionConfig, ExceptionTable};
/// let mut t = ExceptionTable::new(ExceptionConfig::default());
/// let dst = "198.51.100.7".parse().unwrap();
/// t.set_pmtu(dst, 1400, 0);
/// let e = t.get(dst, 13_000).unwrap();
/// assert_eq!(
///     format_show_cache(&e, Some("10.0.0.2".parse().unwrap()), "dummy0", 13_000),
///     "198.51.100.7 via 10.0.0.2 dev dummy0 \n    cache expires 587sec mtu 1400 "
/// );
/// ```
pub fn format_show_cache(
    exception: &Exception,
    gateway: Option<IpAddr>,
    dev: &str,
    now_ms: u64,
) -> String {
    let mut out = exception.dst.to_string();
    if let Some(gw) = exception.gateway.or(gateway) {
        out.push_str(&format!(" via {gw}"));
    }
    out.push_str(&format!(
        " dev {dev} \n    {} ",
        format_cache_line(exception, now_ms)
    ));
    out
}

/// A distinct address for flood tests and benchmarks: the `i`-th address
/// in 10.0.0.0/8 (IPv4) or 2001:db8::/32 (IPv6).
pub fn nth_address(i: u64, v6: bool) -> IpAddr {
    if v6 {
        IpAddr::V6(Ipv6Addr::from((0x2001_0db8_u128 << 96) | u128::from(i)))
    } else {
        IpAddr::V4(Ipv4Addr::from(0x0a00_0000 | (i as u32 & 0x00ff_ffff)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_of_distinct_destinations_stays_within_the_bound() {
        let mut t = ExceptionTable::new(ExceptionConfig::default());
        let bound = t.max_bytes();
        for i in 0..200_000u64 {
            t.set_pmtu(nth_address(i, true), 1400, i);
            assert!(t.len() <= 2048 * 9);
        }
        assert!(t.heap_bytes() <= bound, "{} > {}", t.heap_bytes(), bound);
        assert!(t.evicted() > 0);
        // The newest survive, the oldest went.
        assert!(t.get(nth_address(199_999, true), 200_000).is_some());
        assert!(t.get(nth_address(0, true), 200_000).is_none());
    }

    #[test]
    fn refresh_keeps_one_entry_and_extends_the_expiry() {
        let mut t = ExceptionTable::new(ExceptionConfig {
            expires_ms: 1000,
            ..Default::default()
        });
        let dst = nth_address(1, false);
        t.set_pmtu(dst, 1400, 0);
        t.set_pmtu(dst, 1300, 900);
        assert_eq!(t.len(), 1);
        assert_eq!(t.get(dst, 1500).unwrap().pmtu, 1300);
        assert!(t.get(dst, 1900).is_none());
        assert_eq!(t.expire(1900), 1);
        assert!(t.is_empty());
    }

    #[test]
    fn redirect_and_pmtu_share_an_entry() {
        let mut t = ExceptionTable::new(ExceptionConfig::default());
        let dst = nth_address(2, false);
        t.set_pmtu(dst, 1400, 0);
        t.set_redirect(dst, "10.9.9.9".parse().unwrap(), 0);
        let e = t.get(dst, 0).unwrap();
        assert_eq!(
            (e.pmtu, e.gateway),
            (1400, Some("10.9.9.9".parse().unwrap()))
        );
        assert_eq!(
            format_cache_line(&e, 5_000),
            "cache <redirected> expires 595sec mtu 1400"
        );
    }
}
