//! The route cache for fibre: what the data path uses per packet
//! after a FIB lookup, cached per nexthop and invalidated precisely.
//!
//! * [`Route`] / [`RouteData`]: the route object (the kernel's
//!   `dst_entry`/`rtable`), read-mostly fields on one cache line, the
//!   reference count alone on its own line (layout asserted).
//! * Borrowed routes (`&Route` inside a `fibre_rcu` read section, no
//!   counter touched) and [`HeldRoute`]s (counted, rcuref-style: one
//!   unconditional atomic add, sign checked); [`Route::hold`] converts.
//! * [`RouteCache`]: per nexthop one input route and per-core output
//!   routes, installed with compare-and-swap, invalidated by per-nexthop
//!   and per-prefix generations ([`RouteCache::invalidate_nexthop`],
//!   [`RouteCache::invalidate_device`], [`RouteCache::invalidate_prefix`]).
//! * [`exceptions`]: path MTU and redirect exceptions per nexthop, bounded
//!   and expiring, and the `ip route get` `cache` line.
//! * [`rcuref`]: the reference count itself, after the kernel's
//!   `rcuref` (lib/rcuref.c).
//!
//! The experiments that measured these choices against their "befores"
//! (per-core against shared output routes, the counter's own line against
//! the read-mostly one) live in `fibre-bench` (`fibre bench udpflood`,
//! `fibre bench refcnt`). The one before that has to live inside a struct of
//! this crate, the shared output slot ([`SlotKind`]'s `SharedOutput`), is
//! built only with the `baselines` feature, which only fibre-bench enables.
//! The `testutils` feature adds `testbed`, the small FIB of the tests.
//!
//! ```
//! use fibre_route::{HeldRoute, RouteData};
//! let route = HeldRoute::new(RouteData::new(2, None, Some("10.0.0.1".parse().unwrap()), 1500));
//! let borrowed: &fibre_route::Route = &route;   // no counter touched
//! let kept = borrowed.hold().unwrap();           // explicit: one atomic add
//! assert_eq!(kept.mtu, 1500);
//! ```

// Built with `--cfg loom` (tests/loom.rs), only the reference count is
// compiled, against loom's atomics; everything else needs the FIB.
pub mod rcuref;

#[cfg(not(loom))]
pub mod cache;
#[cfg(not(loom))]
pub mod exceptions;
#[cfg(not(loom))]
pub mod family;
#[cfg(not(loom))]
mod held;
#[cfg(not(loom))]
pub mod route;
#[cfg(not(loom))]
pub mod source;
#[cfg(all(not(loom), any(test, feature = "testutils")))]
pub mod testbed;
#[cfg(not(loom))]
mod underlay;

#[cfg(not(loom))]
pub use cache::{CachedDst, NexthopCache, RouteCache, RouteHandle, SlotKind};
#[cfg(not(loom))]
pub use family::CacheFamily;
#[cfg(not(loom))]
pub use held::HeldRoute;
#[cfg(not(loom))]
pub use route::{Route, RouteData};
#[cfg(not(loom))]
pub use source::{NexthopKey, RouteDetails, RouteSource};
