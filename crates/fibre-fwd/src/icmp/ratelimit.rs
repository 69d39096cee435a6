//! The kernel's ICMP rate limits, per worker: the global token bucket
//! (`icmp_global_allow` / `icmp_global_consume`, net/ipv4/icmp.c, shared by
//! both families), the per-destination buckets of `inet_peer_xrlim_allow`
//! (net/ipv4/inetpeer.c) behind `icmpv4_xrlim_allow` and
//! `icmpv6_xrlim_allow`, the type masks (`icmp_ratemask`,
//! `icmp/ratemask`), and the two limits of the IPv4 routing code that use
//! the same per-destination state: `ip_error`'s token bucket and
//! `ip_rt_send_redirect`'s exponential back-off (net/ipv4/route.c).
//!
//! Time is the kernel's: jiffies at [`RateLimitSettings::hz`], counted from
//! the caller's monotonic nanoseconds, so the limits round as the kernel's
//! do.
//!
//! # Differences from the kernel, by design
//!
//! * Each worker has its own limiter (nothing shared is written on the
//!   data path). The kernel's global bucket is one per network namespace:
//!   with N workers the global limit is N times looser unless the settings
//!   given to each worker divide `icmp_msgs_per_sec` and `icmp_msgs_burst`
//!   by N. The per-destination state is exact as long as a destination's
//!   packets reach one worker (RSS on the flow does that).
//! * The per-destination table has a fixed capacity
//!   ([`RateLimitSettings::peers`], a power of two, in sets of
//!   [`WAYS`]). The kernel's `inet_peer` tree grows and its garbage
//!   collector drops entries unused for a while. Here a new destination
//!   whose set is full takes the place of the entry of that set used least
//!   recently. An entry unused for six rate limit periods is worth nothing
//!   (its bucket is full again, exactly what a new one gets); only evicting
//!   a busier one lets that destination start over with a full burst, as
//!   it would after the kernel's collector dropped it.
//! * The randomised cost of `icmp_global_consume` (0, 1 or 2 credits, the
//!   kernel's `get_random_u32_below(3)`) comes from a small generator
//!   seeded by [`RateLimitSettings::seed`], so tests are repeatable.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::kinds::{Icmp4Error, Icmp6Error};

/// Entries per set of the per-destination table.
pub const WAYS: usize = 8;

/// The sysctls and constants the limits follow, with the kernel's
/// defaults ([`Default`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimitSettings {
    /// The kernel's `CONFIG_HZ`: its clock ticks this often per second and
    /// every limit counts in ticks (250 on this project's reference
    /// kernel).
    pub hz: u32,
    /// `net.ipv4.icmp_ratelimit`, milliseconds (1000).
    pub icmp_ratelimit_ms: u32,
    /// `net.ipv4.icmp_ratemask`: bit N limits ICMP type N (0x1818:
    /// destination unreachable, source quench, time exceeded, parameter
    /// problem).
    pub icmp_ratemask: u32,
    /// `net.ipv4.icmp_msgs_per_sec` (1000), the global bucket's rate.
    pub icmp_msgs_per_sec: u32,
    /// `net.ipv4.icmp_msgs_burst` (50), the global bucket's depth.
    pub icmp_msgs_burst: u32,
    /// `net.ipv6.icmp.ratelimit`, milliseconds: 100 since upstream commit
    /// 0201eedb69b2 (in the reference kernel, 6.18.44; 1000 before).
    pub icmpv6_ratelimit_ms: u32,
    /// Whether the IPv6 per-destination period is shortened for wider
    /// routes back (`tmo >>= (128 - plen) >> 5` in `icmpv6_xrlim_allow`),
    /// as kernels did before commit 0201eedb69b2 removed it (the peers
    /// became per host long ago, so wider prefixes only let more errors
    /// through). Off, as in the reference kernel; on, with a
    /// `icmpv6_ratelimit_ms` of 1000, for older ones.
    pub icmpv6_scale_by_prefix: bool,
    /// `net.ipv6.icmp.ratemask` as a bitmap of the 256 types, bit N of
    /// word N / 64 (default "0-1,3-127": every error but packet too big).
    pub icmpv6_ratemask: [u64; 4],
    /// `ip_rt_error_cost`, milliseconds (1000: one `HZ`).
    pub ip_rt_error_cost_ms: u32,
    /// `ip_rt_error_burst`, milliseconds (5000: `5 * HZ`).
    pub ip_rt_error_burst_ms: u32,
    /// `ip_rt_redirect_number` (9): redirects sent before giving up.
    pub ip_rt_redirect_number: u32,
    /// Capacity of the per-destination table (rounded up to a power of
    /// two, at least [`WAYS`]).
    pub peers: usize,
    /// Seed of the generator behind the global bucket's random cost.
    pub seed: u64,
}

impl Default for RateLimitSettings {
    fn default() -> Self {
        Self {
            hz: 250,
            icmp_ratelimit_ms: 1000,
            icmp_ratemask: 0x1818,
            icmp_msgs_per_sec: 1000,
            icmp_msgs_burst: 50,
            icmpv6_ratelimit_ms: 100,
            icmpv6_scale_by_prefix: false,
            // Types 0-1 and 3-127.
            icmpv6_ratemask: [!0b100, u64::MAX, 0, 0],
            ip_rt_error_cost_ms: 1000,
            ip_rt_error_burst_ms: 5000,
            ip_rt_redirect_number: 9,
            peers: 4096,
            seed: 0x5eed_1c3f,
        }
    }
}

/// The kernel's per-destination state (`struct inet_peer`'s
/// `rate_tokens`, `rate_last`, `n_redirects`), in jiffies.
#[derive(Debug, Clone, Copy, Default)]
struct Peer {
    /// 0 for an empty slot; else the family (4 or 6) marks a used one.
    family: u8,
    addr: u128,
    rate_tokens: u64,
    rate_last: u64,
    n_redirects: u32,
    /// When the entry was last looked up, for eviction.
    used: u64,
}

/// One worker's ICMP rate limiter. Allocates only when made.
///
/// ```
/// use fibre_fwd::icmp::{Icmp4Error, RateLimiter, RateLimitSettings};
/// let mut limiter = RateLimiter::new(RateLimitSettings::default());
/// let dst = "192.0.2.7".parse().unwrap();
/// // A burst of time exceeded to one destination: the kernel's 6.
/// let sent = (0..1000u64)
///     .filter(|i| limiter.allow_error_v4(i * 11_000, dst, &Icmp4Error::TimeExceeded))
///     .count();
/// assert_eq!(sent, 6);
/// ```
#[derive(Debug, Clone)]
pub struct RateLimiter {
    settings: RateLimitSettings,
    peers: Box<[Peer]>,
    /// `icmp_global_credit`; may go below zero as the kernel's does.
    credit: i64,
    /// `icmp_global_stamp`; `None` before the first refill.
    stamp: Option<u64>,
    rng: u64,
}

impl RateLimiter {
    /// A limiter with `settings`; its table of destinations is allocated
    /// here, once.
    pub fn new(settings: RateLimitSettings) -> Self {
        let capacity = settings.peers.max(WAYS).next_power_of_two();
        Self {
            settings,
            peers: vec![Peer::default(); capacity].into_boxed_slice(),
            credit: 0,
            stamp: None,
            rng: settings.seed | 1,
        }
    }

    /// The settings in force.
    pub fn settings(&self) -> &RateLimitSettings {
        &self.settings
    }

    /// Destinations with state in the table now (at most its capacity).
    pub fn tracked_destinations(&self) -> usize {
        self.peers.iter().filter(|p| p.family != 0).count()
    }

    /// Capacity of the per-destination table.
    pub fn capacity(&self) -> usize {
        self.peers.len()
    }

    fn jiffies(&self, now_ns: u64) -> u64 {
        (u128::from(now_ns) * u128::from(self.settings.hz) / 1_000_000_000) as u64
    }

    /// `msecs_to_jiffies`: rounded up.
    fn ms_to_jiffies(&self, ms: u32) -> u64 {
        (u64::from(ms) * u64::from(self.settings.hz)).div_ceil(1000)
    }

    /// Whether `icmp_send` sends an ICMPv4 message of `icmp_type`/`code`
    /// to `dst` now, by its own limits only: the mask
    /// (`icmpv4_mask_allow`: types outside `icmp_ratemask` and
    /// fragmentation needed are never limited), the global bucket, then
    /// the destination's. Use [`RateLimiter::allow_error_v4`] for the
    /// errors of the forwarding path, which adds the routing code's own
    /// limits.
    pub fn allow_v4(&mut self, now_ns: u64, dst: Ipv4Addr, icmp_type: u8, code: u8) -> bool {
        const NR_ICMP_TYPES: u8 = 18;
        let limited = icmp_type <= NR_ICMP_TYPES
            && !(icmp_type == 3 && code == 4)
            && self.settings.icmp_ratemask & (1 << icmp_type) != 0;
        if !limited {
            return true;
        }
        let now = self.jiffies(now_ns);
        let timeout = self.ms_to_jiffies(self.settings.icmp_ratelimit_ms);
        self.limited_send(now, 4, u128::from(u32::from(dst)), timeout)
    }

    /// Whether the forwarding path sends `error` to `dst` now: for the
    /// route errors (net unreachable, host unreachable, administratively
    /// prohibited) first `ip_error`'s token bucket (cost
    /// `ip_rt_error_cost`, depth `ip_rt_error_burst`), for a redirect
    /// `ip_rt_send_redirect`'s back-off (at most `ip_rt_redirect_number`,
    /// each after twice the wait of the one before, starting over after
    /// `ip_rt_redirect_silence` without redirects), then `icmp_send`'s
    /// limits ([`RateLimiter::allow_v4`]). The kernel keeps all of these in
    /// one `inet_peer` per destination, and so does this.
    pub fn allow_error_v4(&mut self, now_ns: u64, dst: Ipv4Addr, error: &Icmp4Error) -> bool {
        let now = self.jiffies(now_ns);
        let key = u128::from(u32::from(dst));
        if error.is_route_error() {
            let cost = self.ms_to_jiffies(self.settings.ip_rt_error_cost_ms);
            let burst = self.ms_to_jiffies(self.settings.ip_rt_error_burst_ms);
            let peer = self.peer(now, 4, key);
            // `ip_error`: tokens accrue one per jiffy up to the burst.
            peer.rate_tokens = (peer.rate_tokens + now.wrapping_sub(peer.rate_last)).min(burst);
            peer.rate_last = now;
            if peer.rate_tokens >= cost {
                peer.rate_tokens -= cost;
            } else {
                return false;
            }
        } else if let Icmp4Error::Redirect { .. } = error {
            if !self.redirect_allowed(now, key) {
                return false;
            }
        }
        let (kind, code, _) = error.wire();
        self.allow_v4(now_ns, dst, kind, code)
    }

    /// `ip_rt_send_redirect`'s decision for the destination `key` at
    /// `now`, updating its state as the kernel does.
    fn redirect_allowed(&mut self, now: u64, key: u128) -> bool {
        let load = u64::from(self.settings.hz / 50);
        let silence = load << (self.settings.ip_rt_redirect_number + 1);
        let number = self.settings.ip_rt_redirect_number;
        let peer = self.peer(now, 4, key);
        if time_after(now, peer.rate_last.wrapping_add(silence)) {
            peer.rate_tokens = 0;
            peer.n_redirects = 0;
        }
        if peer.n_redirects >= number {
            peer.rate_last = now;
            return false;
        }
        let wait = load.checked_shl(peer.n_redirects).unwrap_or(u64::MAX);
        if peer.n_redirects == 0 || time_after(now, peer.rate_last.wrapping_add(wait)) {
            peer.rate_last = now;
            peer.n_redirects += 1;
            return true;
        }
        false
    }

    /// Whether `icmp6_send` sends an ICMPv6 message of `icmp_type` to
    /// `dst` now: the mask (`icmpv6_mask_allow`: packet too big and the
    /// informational types are not limited by default), the global bucket,
    /// then the destination's (`icmpv6_xrlim_allow`). `route_prefix_len`
    /// is the prefix length of the route the message leaves by
    /// ([`ErrorRoute6`](super::ErrorRoute6)); it matters only with
    /// [`RateLimitSettings::icmpv6_scale_by_prefix`] (older kernels: the
    /// period shifted right by `(128 - route_prefix_len) >> 5`, a /64 route
    /// a quarter of `icmp/ratelimit`).
    pub fn allow_v6(
        &mut self,
        now_ns: u64,
        dst: Ipv6Addr,
        icmp_type: u8,
        route_prefix_len: u8,
    ) -> bool {
        let word = self.settings.icmpv6_ratemask[usize::from(icmp_type / 64)];
        if word & (1 << (icmp_type % 64)) == 0 {
            return true;
        }
        let now = self.jiffies(now_ns);
        let mut timeout = self.ms_to_jiffies(self.settings.icmpv6_ratelimit_ms);
        if self.settings.icmpv6_scale_by_prefix && route_prefix_len < 128 {
            timeout >>= (128 - u32::from(route_prefix_len)) >> 5;
        }
        self.limited_send(now, 6, u128::from(dst), timeout)
    }

    /// [`RateLimiter::allow_v6`] for an error of the forwarding path
    /// (`ip6_pkt_drop` and `ip6_forward` have no limits of their own).
    pub fn allow_error_v6(
        &mut self,
        now_ns: u64,
        dst: Ipv6Addr,
        error: &Icmp6Error,
        route_prefix_len: u8,
    ) -> bool {
        self.allow_v6(now_ns, dst, error.icmp_type(), route_prefix_len)
    }

    /// One of an IPv6 redirect's two limits, on the peer of `addr`:
    /// `ip6_forward` asks it for the packet's destination, then
    /// `ndisc_send_redirect` for its source, each
    /// `inet_peer_xrlim_allow(peer, 1*HZ)` (six at once, then one a
    /// second). The peers are those ICMPv6 errors to the same address
    /// use; no mask and no global bucket apply.
    pub fn allow_redirect_v6(&mut self, now_ns: u64, addr: Ipv6Addr) -> bool {
        let now = self.jiffies(now_ns);
        let timeout = u64::from(self.settings.hz);
        let peer = self.peer(now, 6, u128::from(addr));
        xrlim_allow(peer, now, timeout)
    }

    /// [`RateLimiter::allow_v4`] or [`RateLimiter::allow_v6`] (for IPv6,
    /// `code` is the prefix length of the route back, see there).
    pub fn allow(&mut self, now_ns: u64, dst: IpAddr, icmp_type: u8, code_or_prefix: u8) -> bool {
        match dst {
            IpAddr::V4(d) => self.allow_v4(now_ns, d, icmp_type, code_or_prefix),
            IpAddr::V6(d) => self.allow_v6(now_ns, d, icmp_type, code_or_prefix),
        }
    }

    /// A message the mask limits: `icmp_global_allow`, then the
    /// destination's `inet_peer_xrlim_allow`, then `icmp_global_consume`
    /// (the order since Linux 6.12's "icmp: change the order of rate
    /// limits": the global credit is spent only on messages sent).
    fn limited_send(&mut self, now: u64, family: u8, key: u128, timeout: u64) -> bool {
        if !self.global_allow(now) {
            return false;
        }
        let peer = self.peer(now, family, key);
        if !xrlim_allow(peer, now, timeout) {
            return false;
        }
        self.global_consume();
        true
    }

    /// `icmp_global_allow`: any credit left, or a refill of
    /// `icmp_msgs_per_sec` per second since the last one (at most one
    /// second's, at least 20 ms apart), capped at `icmp_msgs_burst`.
    fn global_allow(&mut self, now: u64) -> bool {
        if self.credit > 0 {
            return true;
        }
        let hz = u64::from(self.settings.hz);
        let delta = self.stamp.map_or(hz, |s| now.wrapping_sub(s).min(hz));
        if delta < hz / 50 {
            return false;
        }
        let incr = u64::from(self.settings.icmp_msgs_per_sec) * delta / hz;
        if incr == 0 {
            return false;
        }
        self.stamp = Some(now);
        self.credit = (self.credit + incr as i64).min(i64::from(self.settings.icmp_msgs_burst));
        true
    }

    /// `icmp_global_consume`: 0, 1 or 2 credits, uniformly.
    fn global_consume(&mut self) {
        // xorshift64*.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let r = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32;
        self.credit -= ((r * 3) >> 32) as i64;
    }

    /// The state of destination `key`, made as `inet_getpeer` makes it
    /// (no tokens, last refill 60 s ago, so the first refill fills the
    /// bucket) when absent; see the module docs for a full set.
    fn peer(&mut self, now: u64, family: u8, key: u128) -> &mut Peer {
        let sets = self.peers.len() / WAYS;
        let set = (hash(family, key) as usize & (sets - 1)) * WAYS;
        let ways = &mut self.peers[set..set + WAYS];
        let slot = match ways
            .iter()
            .position(|p| p.family == family && p.addr == key)
        {
            Some(found) => found,
            None => {
                let victim = ways
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, p)| (p.family != 0, p.used))
                    .map_or(0, |(i, _)| i);
                ways[victim] = Peer {
                    family,
                    addr: key,
                    rate_tokens: 0,
                    rate_last: now.wrapping_sub(60 * u64::from(self.settings.hz)),
                    n_redirects: 0,
                    used: now,
                };
                victim
            }
        };
        let peer = &mut ways[slot];
        peer.used = now;
        peer
    }
}

/// `inet_peer_xrlim_allow`: a token per jiffy since the last call, at
/// most `XRLIM_BURST_FACTOR` (6) periods' worth; a message costs one
/// period and needs at least that in the bucket (`token >= timeout`), so
/// a full bucket sends six at once and a zero period (`icmp_ratelimit`
/// 0) limits nothing.
fn xrlim_allow(peer: &mut Peer, now: u64, timeout: u64) -> bool {
    const XRLIM_BURST_FACTOR: u64 = 6;
    let delta = now.wrapping_sub(peer.rate_last);
    if delta != 0 {
        peer.rate_last = now;
        peer.rate_tokens = (peer.rate_tokens + delta).min(XRLIM_BURST_FACTOR * timeout);
    }
    if peer.rate_tokens >= timeout {
        peer.rate_tokens -= timeout;
        true
    } else {
        false
    }
}

/// The kernel's `time_after(a, b)`: a is later than b, on a wrapping clock.
fn time_after(a: u64, b: u64) -> bool {
    (b.wrapping_sub(a) as i64) < 0
}

fn hash(family: u8, key: u128) -> u64 {
    let folded = (key as u64) ^ ((key >> 64) as u64) ^ u64::from(family);
    let mixed = folded.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    mixed ^ (mixed >> 29)
}
