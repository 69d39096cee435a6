//! Per-worker counters: what became of every received frame, by outcome
//! and by drop reason (one taxonomy, [`DropReason`]). The worker counts in
//! plain memory and publishes a copy after each burst with relaxed stores
//! to atomics only it writes (no read-modify-write, no shared cache line
//! written by two cores), so another thread reads them while it runs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use fibre_base::{CachePadded, DropReason};

/// One worker's counts. Every received frame ends in exactly one of
/// `forwarded` (a frame queued on an output port; a fragmented packet
/// counts once, its fragments in `fragments`), `answered`, the `punted_*`
/// counts and `dropped`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    /// Frames received.
    pub received: u64,
    /// Packets forwarded (queued on their output port).
    pub forwarded: u64,
    /// Fragments queued for forwarded packets that were cut (`ip_fragment`).
    pub fragments: u64,
    /// Packets for us answered by the worker itself (echo requests).
    pub answered: u64,
    /// Packets for us handed to the control side.
    pub punted_local: u64,
    /// ARP and neighbour discovery packets handed to the control side.
    pub punted_neighbour: u64,
    /// Forwarded packets whose next hop had no resolved neighbour, queued
    /// for the control side to resolve (ICMP the worker makes for such a
    /// next hop is queued there too, and counted in `icmp_errors`).
    pub punted_unresolved: u64,
    /// ICMP errors sent (queued on a port, or to an unresolved next hop).
    pub icmp_errors: u64,
    /// ICMP errors the rate limits held back.
    pub icmp_rate_limited: u64,
    /// ICMP errors and replies not sent for want of a route back or room.
    pub icmp_unsent: u64,
    /// Drops by reason, indexed by [`DropReason::index`].
    pub dropped: [u64; DropReason::COUNT],
}

impl Default for Counters {
    fn default() -> Self {
        Counters {
            received: 0,
            forwarded: 0,
            fragments: 0,
            answered: 0,
            punted_local: 0,
            punted_neighbour: 0,
            punted_unresolved: 0,
            icmp_errors: 0,
            icmp_rate_limited: 0,
            icmp_unsent: 0,
            dropped: [0; DropReason::COUNT],
        }
    }
}

impl Counters {
    /// Drops counted under `reason`.
    pub fn drops(&self, reason: DropReason) -> u64 {
        self.dropped[reason.index()]
    }

    /// Drops under every reason.
    pub fn total_drops(&self) -> u64 {
        self.dropped.iter().sum()
    }

    /// The reasons with drops, and their counts.
    pub fn drop_reasons(&self) -> impl Iterator<Item = (DropReason, u64)> + '_ {
        DropReason::ALL
            .iter()
            .map(|r| (*r, self.dropped[r.index()]))
            .filter(|(_, n)| *n != 0)
    }

    pub(crate) fn drop(&mut self, reason: DropReason) {
        self.dropped[reason.index()] += 1;
    }

    /// The fields as one array, in a fixed order (published as such).
    fn to_words(self) -> [u64; WORDS] {
        let mut words = [0; WORDS];
        words[..FIXED].copy_from_slice(&[
            self.received,
            self.forwarded,
            self.fragments,
            self.answered,
            self.punted_local,
            self.punted_neighbour,
            self.punted_unresolved,
            self.icmp_errors,
            self.icmp_rate_limited,
            self.icmp_unsent,
        ]);
        words[FIXED..].copy_from_slice(&self.dropped);
        words
    }

    fn from_words(words: &[u64; WORDS]) -> Counters {
        let mut dropped = [0; DropReason::COUNT];
        dropped.copy_from_slice(&words[FIXED..]);
        Counters {
            received: words[0],
            forwarded: words[1],
            fragments: words[2],
            answered: words[3],
            punted_local: words[4],
            punted_neighbour: words[5],
            punted_unresolved: words[6],
            icmp_errors: words[7],
            icmp_rate_limited: words[8],
            icmp_unsent: words[9],
            dropped,
        }
    }
}

/// The counters that are not drops.
const FIXED: usize = 10;
const WORDS: usize = FIXED + DropReason::COUNT;

/// The published copy: written by one worker, read by anyone.
#[derive(Debug)]
struct Published {
    words: CachePadded<[AtomicU64; WORDS]>,
}

/// A handle that reads a worker's counters from any thread while it runs
/// (as of its last finished burst).
///
/// ```
/// use fibre_fwd::CountersReader;
/// fn total(readers: &[CountersReader]) -> u64 {
///     readers.iter().map(|r| r.read().received).sum()
/// }
/// # let _ = total;
/// ```
#[derive(Debug, Clone)]
pub struct CountersReader {
    published: Arc<Published>,
}

impl CountersReader {
    /// The counts as of the worker's last burst.
    pub fn read(&self) -> Counters {
        let mut words = [0; WORDS];
        for (w, a) in words.iter_mut().zip(self.published.words.iter()) {
            *w = a.load(Ordering::Relaxed);
        }
        Counters::from_words(&words)
    }
}

/// The worker's side: counts, and publishes them.
#[derive(Debug)]
pub(crate) struct CountersWriter {
    published: Arc<Published>,
}

impl CountersWriter {
    pub(crate) fn new() -> CountersWriter {
        CountersWriter {
            published: Arc::new(Published {
                words: CachePadded::new(std::array::from_fn(|_| AtomicU64::new(0))),
            }),
        }
    }

    pub(crate) fn reader(&self) -> CountersReader {
        CountersReader {
            published: Arc::clone(&self.published),
        }
    }

    /// Stores `counters` for readers: plain stores, this worker being the
    /// only writer.
    pub(crate) fn publish(&self, counters: &Counters) {
        for (a, w) in self.published.words.iter().zip(counters.to_words()) {
            a.store(w, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_published_copy_reads_back_whole() {
        let writer = CountersWriter::new();
        let reader = writer.reader();
        let mut c = Counters {
            received: 7,
            icmp_unsent: 3,
            ..Counters::default()
        };
        c.drop(DropReason::TtlExceeded);
        writer.publish(&c);
        assert_eq!(reader.read(), c);
        assert_eq!(reader.read().drops(DropReason::TtlExceeded), 1);
    }
}
