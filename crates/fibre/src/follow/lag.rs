//! The follow lag: for each notification, the time from the `recv(2)`
//! that brought it to the publication of the batch that applied it, kept
//! in a log-linear histogram (eight buckets per power of two, so a
//! quantile is within 12.5% of the true value) of fixed size: memory stays
//! bounded however long the follower runs. `fibre follow --stats` prints
//! it on exit; it is the follower's own measure of what a benchmark of
//! convergence would call the follow lag.

use std::fmt;
use std::time::Duration;

/// Values below this many nanoseconds have a bucket each.
const LINEAR: u64 = 16;
/// Buckets per power of two above [`LINEAR`] (a power of two itself).
const SUB_BITS: u32 = 3;
const BUCKETS: usize = LINEAR as usize + (64 - 4) * (1 << SUB_BITS);

/// Notifications by lag, and the batches they came in.
#[derive(Clone)]
pub struct Lag {
    counts: Box<[u64; BUCKETS]>,
    notifications: u64,
    batches: u64,
    max: Duration,
}

impl Default for Lag {
    fn default() -> Lag {
        Lag {
            counts: Box::new([0; BUCKETS]),
            notifications: 0,
            batches: 0,
            max: Duration::ZERO,
        }
    }
}

/// The bucket of `nanos`.
fn bucket(nanos: u64) -> usize {
    if nanos < LINEAR {
        return nanos as usize;
    }
    let exponent = 63 - nanos.leading_zeros(); // at least 4
    let sub = (nanos >> (exponent - SUB_BITS)) & ((1 << SUB_BITS) - 1);
    LINEAR as usize + (exponent as usize - 4) * (1 << SUB_BITS) + sub as usize
}

/// The largest value of bucket `index` (the quantiles are upper bounds).
fn upper_bound(index: usize) -> u64 {
    if index < LINEAR as usize {
        return index as u64;
    }
    let above = index - LINEAR as usize;
    let exponent = (above >> SUB_BITS) as u32 + 4;
    let sub = (above & ((1 << SUB_BITS) - 1)) as u64;
    let low = (1u64 << exponent) | (sub << (exponent - SUB_BITS));
    low.saturating_add((1u64 << (exponent - SUB_BITS)) - 1)
}

impl Lag {
    /// `count` notifications, each published `lag` after its receipt.
    pub fn record(&mut self, lag: Duration, count: u64) {
        let nanos = u64::try_from(lag.as_nanos()).unwrap_or(u64::MAX);
        self.counts[bucket(nanos)] += count;
        self.notifications += count;
        self.max = self.max.max(lag);
    }

    /// One batch published.
    pub fn batch(&mut self) {
        self.batches += 1;
    }

    /// The lag at or below which a fraction `q` of the notifications were
    /// published (an upper bound within 12.5%); zero before any.
    pub fn quantile(&self, q: f64) -> Duration {
        if self.notifications == 0 {
            return Duration::ZERO;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.notifications as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (index, &count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return Duration::from_nanos(upper_bound(index)).min(self.max);
            }
        }
        self.max
    }
}

impl fmt::Display for Lag {
    /// One line: the counts and p50/p99/max in microseconds.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let micros = |d: Duration| d.as_secs_f64() * 1e6;
        write!(
            f,
            "{} notifications in {} batches; receipt to publication p50 {:.1} us, p99 {:.1} us, max {:.1} us",
            self.notifications,
            self.batches,
            micros(self.quantile(0.5)),
            micros(self.quantile(0.99)),
            micros(self.max)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_value_falls_in_a_bucket_whose_bound_is_within_an_eighth() {
        for nanos in (0..5000).chain([1 << 20, (1 << 20) + 12345, u64::MAX / 3, u64::MAX]) {
            let index = bucket(nanos);
            assert!(index < BUCKETS, "{nanos}");
            let bound = upper_bound(index);
            assert!(bound >= nanos, "{nanos}: bound {bound}");
            assert!(
                (bound - nanos) as f64 <= nanos as f64 / 8.0 + 1.0,
                "{nanos}: bound {bound}"
            );
        }
    }

    #[test]
    fn quantiles_weigh_each_notification() {
        let mut lag = Lag::default();
        assert_eq!(lag.quantile(0.5), Duration::ZERO);
        lag.record(Duration::from_micros(10), 98);
        lag.record(Duration::from_millis(5), 2);
        lag.batch();
        let p50 = lag.quantile(0.5);
        assert!(p50 >= Duration::from_micros(10) && p50 <= Duration::from_nanos(11_250));
        // The 99th of 100 is one of the two slow ones.
        assert!(lag.quantile(0.99) >= Duration::from_millis(5));
        assert_eq!(lag.quantile(1.0), Duration::from_millis(5));
        let line = lag.to_string();
        assert!(
            line.starts_with("100 notifications in 1 batches;"),
            "{line}"
        );
    }
}
