//! Held routes: a counted reference that may outlive the read section it
//! was taken in.
//!
//! The counter follows the kernel's `rcuref`: it stores the number of
//! references minus one, a hold is one unconditional `fetch_add` whose
//! previous value is checked for sign (negative: the route is dying, the
//! hold is undone and refused), and a release is one `fetch_sub` whose
//! previous value 0 means "last reference". No compare-and-swap loop, so a
//! hold costs the same under contention as alone (one locked add), only
//! the cache line transfer differs.

#[cfg(test)]
use crate::rcuref::RefCount;
use crate::route::{Route, RouteData};
use std::ptr::NonNull;

/// A held (counted) route: keeps the route alive outside any read section,
/// like a socket's cached `dst` or a tunnel's cached underlay route.
///
/// Made by [`HeldRoute::new`] or, explicitly, from a borrowed route with
/// [`Route::hold`]. Cloning takes another reference; dropping the last one
/// frees the route.
///
/// ```
/// use fibre_route::{HeldRoute, RouteData};
/// let held = HeldRoute::new(RouteData::new(2, None, None, 1500));
/// let again = held.clone();
/// assert_eq!(held.ref_count(), 2);
/// drop(again);
/// assert_eq!(held.ref_count(), 1);
/// assert_eq!(held.mtu, 1500);
/// ```
#[derive(Debug)]
pub struct HeldRoute {
    route: NonNull<Route>,
}

// SAFETY: a `HeldRoute` is a counted pointer to a `Route`, whose fields are
// plain data written before publication and an atomic counter; sending or
// sharing it shares `&Route`, which is `Sync`.
unsafe impl Send for HeldRoute {}
// SAFETY: as for `Send`: `&HeldRoute` only hands out `&Route`.
unsafe impl Sync for HeldRoute {}

impl HeldRoute {
    /// A new route with one reference, the returned one.
    pub fn new(data: RouteData) -> HeldRoute {
        let route = Box::new(Route::new(data));
        HeldRoute {
            route: NonNull::from(Box::leak(route)),
        }
    }

    /// Gives up ownership of the reference without releasing it.
    pub(crate) fn into_raw(self) -> *mut Route {
        let ptr = self.route.as_ptr();
        std::mem::forget(self);
        ptr
    }

    /// Takes back a reference given up by [`HeldRoute::into_raw`].
    ///
    /// # Safety
    /// `ptr` must come from `into_raw` and its reference must not have been
    /// taken back already.
    pub(crate) unsafe fn from_raw(ptr: *mut Route) -> HeldRoute {
        HeldRoute {
            // SAFETY: `into_raw` only returns non-null pointers.
            route: unsafe { NonNull::new_unchecked(ptr) },
        }
    }
}

impl Route {
    /// Turns a borrowed route into a held one: one unconditional atomic add
    /// on the route's counter line. `None` if the route is already being
    /// freed (cannot happen for a route borrowed from a cache inside its
    /// read section, or from a live `HeldRoute`; checked anyway).
    ///
    /// ```
    /// use fibre_route::{HeldRoute, RouteData};
    /// let held = HeldRoute::new(RouteData::new(2, None, None, 1500));
    /// let borrowed: &fibre_route::Route = &held;
    /// let second = borrowed.hold().unwrap();
    /// assert_eq!(second.ref_count(), 2);
    /// ```
    pub fn hold(&self) -> Option<HeldRoute> {
        if !self.refs.get() {
            return None;
        }
        Some(HeldRoute {
            route: NonNull::from(self),
        })
    }
}

impl Clone for HeldRoute {
    fn clone(&self) -> HeldRoute {
        // We own a reference, so the count is at least one and the hold
        // cannot be refused.
        let took = self.refs.get();
        debug_assert!(took, "a held route's count dropped to zero");
        HeldRoute { route: self.route }
    }
}

impl Drop for HeldRoute {
    fn drop(&mut self) {
        // SAFETY: we own one reference, so the route is alive here.
        let last = unsafe { self.route.as_ref() }.refs.put();
        if last {
            // SAFETY: the last reference is gone. Every route is allocated
            // by `HeldRoute::new` with `Box`; borrowed references can no
            // longer exist because caches keep a reference for as long as a
            // read section may see the route (slot, then the grace period).
            drop(unsafe { Box::from_raw(self.route.as_ptr()) });
        }
    }
}

impl std::ops::Deref for HeldRoute {
    type Target = Route;
    #[inline]
    fn deref(&self) -> &Route {
        // SAFETY: we own a reference, so the route is alive.
        unsafe { self.route.as_ref() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_release_reports_last() {
        let c = RefCount::new();
        assert!(c.get());
        assert!(!c.put());
        assert!(c.put());
        // Dead: a late hold is refused and undone.
        assert!(!c.get());
        assert_eq!(c.count(), 0);
    }

    #[test]
    fn holds_and_releases_from_many_threads_balance() {
        let held = HeldRoute::new(RouteData::new(3, None, None, 1400));
        std::thread::scope(|s| {
            for _ in 0..4 {
                let h = &held;
                s.spawn(move || {
                    for _ in 0..10_000 {
                        let extra = h.hold().unwrap();
                        assert_eq!(extra.dev, 3);
                    }
                });
            }
        });
        assert_eq!(held.ref_count(), 1);
    }

    #[test]
    fn clones_dropped_on_other_threads_leave_one_reference() {
        let held = HeldRoute::new(RouteData::new(1, None, None, 1500));
        let clones: Vec<HeldRoute> = (0..8).map(|_| held.clone()).collect();
        assert_eq!(held.ref_count(), 9);
        std::thread::scope(|s| {
            for c in clones {
                s.spawn(move || drop(c));
            }
        });
        assert_eq!(held.ref_count(), 1);
    }
}
