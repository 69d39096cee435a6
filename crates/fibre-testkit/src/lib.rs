//! What fibre's tests share, stated once.
//!
//! - [`unavailable`]: the one rule for a test whose outside tool (root and
//!   network namespaces, `ip`, `tshark`, `dumpcap`, iputils' `ping`) is
//!   missing. On a laptop it prints why and the test passes without having
//!   checked anything; under `FIBRE_REQUIRE_TOOLS=1`, which the gate
//!   (`.ci/run`) sets, it fails with the tool's name, so a gate cannot be
//!   green on tests that did not run.
//! - [`CountingAllocator`]: a global allocator that counts this thread's
//!   allocations, for the tests that show a data path allocates nothing per
//!   packet.
//!
//! - [`process`]: a child process run with a time limit, its stdin fed and
//!   both outputs collected.
//! - [`netns`]: a network namespace, deleted on drop, and the bounded `ip`
//!   commands (one, or a batch) run in it.
//! - [`follower`]: a `fibre follow --queries` child, queried line by line.
//! - [`bgp`]: two namespaces joined by a veth pair with a BIRD 2 in each,
//!   for `fibre follow`'s BIRD test and `fibre bench converge`.
//!
//! A dev-dependency of the libraries, which never link it. The `fibre`
//! binary links it for `fibre bench converge` alone, behind its
//! `bench-converge` feature (on by default): the bench drives the same
//! namespaces, BIRDs and follower as the tests, and one copy of that
//! fixture beats a second one kept in step by hand. Building `fibre`
//! with `--no-default-features` leaves the fixture (and the bench) out.
//!
//! ```
//! use fibre_testkit::{on_path, unavailable};
//! if !on_path("a-tool-nobody-has") {
//!     // Prints "example: SKIPPED: a-tool-nobody-has is not installed"
//!     // (or fails under FIBRE_REQUIRE_TOOLS=1).
//! #   if !fibre_testkit::tools_required() {
//!     unavailable("example", "a-tool-nobody-has is not installed");
//! #   }
//! }
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

pub mod bgp;
pub mod follower;
pub mod netns;
pub mod process;

/// The environment variable under which a test that cannot run fails.
pub const REQUIRE_TOOLS: &str = "FIBRE_REQUIRE_TOOLS";

/// Whether tests must run rather than skip: `FIBRE_REQUIRE_TOOLS=1`.
pub fn tools_required() -> bool {
    std::env::var(REQUIRE_TOOLS).is_ok_and(|v| v.trim() == "1")
}

/// A numeric setting from the environment (`FIBRE_ACCEPT_LINES=5000`),
/// `default` when unset.
///
/// # Panics
/// When it is set but is not a number: a typo must not quietly run the
/// default.
pub fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text:?} is not a number")),
        Err(_) => default,
    }
}

/// Says that `test` cannot run here and why: prints `TEST: SKIPPED: WHY`,
/// or, under `FIBRE_REQUIRE_TOOLS=1`, panics with the reason (which names
/// the missing tool). The caller returns without checking anything.
///
/// # Panics
/// When [`tools_required`].
pub fn unavailable(test: &str, why: &str) {
    assert!(
        !tools_required(),
        "{test}: {REQUIRE_TOOLS}=1 but the test cannot run: {why}"
    );
    eprintln!("{test}: SKIPPED: {why}");
}

/// Whether `program` is an executable file somewhere on `PATH`.
pub fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(program))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// The first of `tools` that is not on `PATH`, as the reason a test
/// cannot run (`"tshark is not installed"`), or `None` when all are.
pub fn missing_tool(tools: &[&str]) -> Option<String> {
    tools
        .iter()
        .find(|tool| !on_path(tool))
        .map(|tool| format!("{tool} is not installed"))
}

/// The effective user id, from `/proc/self/status` (`Uid: real effective
/// ...`).
pub fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// A global allocator that forwards to the system's and counts the
/// allocations (and reallocations) of the calling thread, so a test on one
/// thread is not disturbed by the harness's other threads.
///
/// ```ignore
/// #[global_allocator]
/// static ALLOCATOR: fibre_testkit::CountingAllocator = fibre_testkit::CountingAllocator;
/// let before = fibre_testkit::CountingAllocator::allocations();
/// // ... the hot path ...
/// assert_eq!(fibre_testkit::CountingAllocator::allocations(), before);
/// ```
pub struct CountingAllocator;

impl CountingAllocator {
    /// This thread's allocations so far.
    pub fn allocations() -> u64 {
        ALLOCATIONS.with(Cell::get)
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// only addition is a thread-local counter, which does not allocate (const
// initialised, no destructor).
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: the same contract as our caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: the same contract as our caller's.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with `layout` (every allocation
        // above is the system's).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: `ptr` came from `System` with `layout`; the caller keeps
        // `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_is_named() {
        assert_eq!(
            missing_tool(&["sh", "fibre-no-such-tool"]).as_deref(),
            Some("fibre-no-such-tool is not installed")
        );
        assert_eq!(missing_tool(&["sh"]), None);
    }
}

/// splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014): a tiny seedable stream for the soak and
/// fuzz-style tests, whose failures must replay from a printed seed. Not
/// for anything that needs good randomness.
///
/// ```
/// let mut a = fibre_testkit::SplitMix64(7);
/// let mut b = fibre_testkit::SplitMix64(7);
/// assert_eq!(a.next(), b.next());
/// assert!(a.below(10) < 10);
/// assert_eq!(a.below(0), 0);
/// ```
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 bits.
    #[allow(clippy::should_implement_trait)] // not an iterator: it never ends
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}
