//! When a writer fed a stream of updates should publish.

use std::time::{Duration, Instant};

/// The interval [`PublishPacer::default`] keeps between publications.
pub const DEFAULT_PUBLISH_INTERVAL: Duration = Duration::from_millis(1);

/// Paces the publications of a writer that receives updates as a stream
/// (a routing daemon's feed): at most one publication per interval, the
/// updates that arrive meanwhile folded into the next batch, and an
/// update after a quiet spell published at once.
///
/// Every publication costs the readers more than the updates in it: they
/// move to the other copy of the FIB, whose lines are not in their core's
/// cache yet, and the writer waits for a grace period. At 100,000 updates/s
/// a writer that published whatever had arrived as soon as its last batch
/// was out made 2,800 small publications a second and cost two packet
/// threads a quarter of their rate on a 2-core machine; paced at 1 ms, they
/// kept about 90 % (`fibre bench synflood`).
///
/// ```
/// use std::time::{Duration, Instant};
/// use fibre_fib::shared::PublishPacer;
///
/// let mut pacer = PublishPacer::new(Duration::from_millis(1));
/// let start = Instant::now();
/// assert_eq!(pacer.wait(start), None); // nothing published yet: go
/// pacer.published(start);
/// let soon = start + Duration::from_micros(300);
/// assert_eq!(pacer.wait(soon), Some(Duration::from_micros(700)));
/// assert_eq!(pacer.wait(start + Duration::from_millis(2)), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublishPacer {
    interval: Duration,
    last: Option<Instant>,
}

impl Default for PublishPacer {
    fn default() -> Self {
        Self::new(DEFAULT_PUBLISH_INTERVAL)
    }
}

impl PublishPacer {
    /// A pacer keeping `interval` between publications.
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            last: None,
        }
    }

    /// How long to keep collecting updates before publishing, at `now`;
    /// `None` to publish now.
    pub fn wait(&self, now: Instant) -> Option<Duration> {
        let next = self.last? + self.interval;
        (now < next).then(|| next - now)
    }

    /// Notes a publication at `at`.
    pub fn published(&mut self, at: Instant) {
        self.last = Some(at);
    }

    /// The interval kept between publications.
    pub fn interval(&self) -> Duration {
        self.interval
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publishes_at_the_interval_boundary_and_after_a_quiet_spell() {
        let mut pacer = PublishPacer::default();
        assert_eq!(pacer.interval(), DEFAULT_PUBLISH_INTERVAL);
        let t0 = Instant::now();
        pacer.published(t0);
        assert_eq!(pacer.wait(t0), Some(DEFAULT_PUBLISH_INTERVAL));
        assert_eq!(pacer.wait(t0 + DEFAULT_PUBLISH_INTERVAL), None);
        // A clock read before the last publication waits the whole interval
        // from that publication, never longer.
        pacer.published(t0 + Duration::from_micros(10));
        assert_eq!(
            pacer.wait(t0),
            Some(DEFAULT_PUBLISH_INTERVAL + Duration::from_micros(10))
        );
        assert_eq!(pacer.wait(t0 + Duration::from_secs(1)), None);
    }
}
