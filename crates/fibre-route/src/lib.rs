//! The route cache for fibre (issue 4): what the data path uses per packet
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
//! * [`udpflood`] and [`refcnt`]: the experiments of the issue, as library
//!   code (parameters in, rows out).
//!
//! ```
//! use fibre_route::{HeldRoute, RouteData};
//! let route = HeldRoute::new(RouteData::new(2, None, Some("10.0.0.1".parse().unwrap()), 1500));
//! let borrowed: &fibre_route::Route = &route;   // no counter touched
//! let kept = borrowed.hold().unwrap();           // explicit: one atomic add
//! assert_eq!(kept.mtu, 1500);
//! ```

pub mod cache;
pub mod exceptions;
pub mod refcnt;
mod refcount;
pub mod route;
pub mod source;
pub mod testbed;
pub mod timing;
pub mod udpflood;
mod underlay;

pub use cache::{CachedDst, Clock, NexthopCache, RouteCache, RouteHandle, SlotKind};
pub use refcount::HeldRoute;
pub use route::{Route, RouteData};
pub use source::{NexthopKey, RouteDetails, RouteSource};
