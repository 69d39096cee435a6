//! The clock of everything that expires.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Milliseconds, monotonic: what route exceptions expire by (and, later,
/// neighbour entries and ICMP rate limits). A manual clock, set by hand,
/// makes expiry testable without sleeping.
///
/// ```
/// use std::sync::atomic::Ordering;
/// use fibre_base::Clock;
/// let (clock, hand) = Clock::manual();
/// assert_eq!(clock.now_ms(), 0);
/// hand.store(600_000, Ordering::Relaxed);
/// assert_eq!(clock.now_ms(), 600_000);
/// assert!(Clock::monotonic().now_ms() < 1_000);
/// ```
#[derive(Debug, Clone)]
pub enum Clock {
    /// Milliseconds since the instant given (the clock's creation).
    Monotonic(Instant),
    /// Set by hand ([`Clock::manual`]).
    Manual(Arc<AtomicU64>),
}

impl Clock {
    /// A real clock starting at 0 now.
    pub fn monotonic() -> Clock {
        Clock::Monotonic(Instant::now())
    }

    /// A hand-set clock starting at 0 and the handle that sets it.
    pub fn manual() -> (Clock, Arc<AtomicU64>) {
        let t = Arc::new(AtomicU64::new(0));
        (Clock::Manual(Arc::clone(&t)), t)
    }

    /// Now, in milliseconds.
    pub fn now_ms(&self) -> u64 {
        match self {
            Clock::Monotonic(start) => start.elapsed().as_millis() as u64,
            Clock::Manual(t) => t.load(Ordering::Relaxed),
        }
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::monotonic()
    }
}
