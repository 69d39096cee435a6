//! The underlay route, cached per worker and revalidated by generation.
//!
//! Each worker has its own slot on its own cache lines; a batch reads (and,
//! after a route change, rewrites) only its worker's slot, so the transmit
//! path never writes a shared line and never looks a route up per packet.

use std::cell::UnsafeCell;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};

use fibre_base::{CachePadded, CACHE_LINE};

use crate::route::{UnderlayRoute, UnderlayRoutes};
use crate::WorkerId;

#[derive(Debug, Clone, Copy)]
struct Cached {
    /// Generation the answer was resolved at; `None` = never resolved.
    /// Not a sentinel value: every `u64`, 0 included, is a generation a
    /// resolver may report (`fibre_route::RouteCache` starts at 0).
    generation: Option<u64>,
    /// `None`: no route at that generation (cached too, so an unreachable
    /// remote costs no lookup per batch either).
    route: Option<UnderlayRoute>,
}

/// One worker's slot. `busy` guards `cached`: whoever swaps it from false
/// to true has the slot to itself until it stores false again. Kept in a
/// [`CachePadded`], so one worker's slot never shares a line with another's.
#[derive(Debug)]
struct Slot {
    busy: AtomicBool,
    cached: UnsafeCell<Cached>,
}

const _: () = assert!(
    core::mem::align_of::<CachePadded<Slot>>() == CACHE_LINE
        && core::mem::size_of::<CachePadded<Slot>>().is_multiple_of(CACHE_LINE),
    "a worker's underlay route slot must fill cache lines of its own: if \
     this fires, keep the slots in CachePadded"
);

// SAFETY: `cached` is only touched between a successful `busy` swap
// false→true (Acquire) and the store of false (Release), so at most one
// thread accesses it at a time and each sees the previous owner's writes.
unsafe impl Sync for Slot {}

/// Per-worker cached underlay routes to one destination.
#[derive(Debug)]
pub(crate) struct RouteCache {
    slots: Box<[CachePadded<Slot>]>,
}

impl RouteCache {
    pub(crate) fn new(workers: usize) -> RouteCache {
        let slots = (0..workers.max(1))
            .map(|_| {
                CachePadded::new(Slot {
                    busy: AtomicBool::new(false),
                    cached: UnsafeCell::new(Cached {
                        generation: None,
                        route: None,
                    }),
                })
            })
            .collect();
        RouteCache { slots }
    }

    /// The route to `dst` for `worker`: the cached one while the resolver's
    /// generation is unchanged, else resolved and cached. If the slot is
    /// in use (two threads given one worker id), resolves without caching
    /// rather than wait.
    pub(crate) fn get(
        &self,
        worker: WorkerId,
        routes: &dyn UnderlayRoutes,
        dst: IpAddr,
        src: Option<IpAddr>,
    ) -> Option<UnderlayRoute> {
        let generation = routes.generation();
        let Some(slot) = self.slots.get(worker.index()) else {
            return routes.resolve(worker, dst, src).ok();
        };
        if slot.busy.swap(true, Ordering::Acquire) {
            return routes.resolve(worker, dst, src).ok();
        }
        // SAFETY: the swap above returned false, so this thread owns the
        // slot until the store below (see `unsafe impl Sync for Slot`).
        let cached = unsafe { &mut *slot.cached.get() };
        if cached.generation != Some(generation) {
            cached.route = routes.resolve(worker, dst, src).ok();
            cached.generation = Some(generation);
        }
        let route = cached.route;
        slot.busy.store(false, Ordering::Release);
        route
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::FixedRoutes;
    use std::sync::atomic::AtomicUsize;

    /// Counts resolutions, to show the cache is used, and notes the
    /// worker each was made for.
    struct Counting {
        inner: FixedRoutes,
        resolves: AtomicUsize,
        last_worker: AtomicUsize,
    }

    impl UnderlayRoutes for Counting {
        fn resolve(
            &self,
            worker: WorkerId,
            dst: IpAddr,
            src: Option<IpAddr>,
        ) -> Result<UnderlayRoute, crate::route::RouteError> {
            self.resolves.fetch_add(1, Ordering::Relaxed);
            self.last_worker.store(worker.index(), Ordering::Relaxed);
            self.inner.resolve(worker, dst, src)
        }
        fn generation(&self) -> u64 {
            self.inner.generation()
        }
    }

    fn route(oif: u32) -> UnderlayRoute {
        UnderlayRoute {
            oif,
            gateway: None,
            src: None,
            mtu: 1500,
        }
    }

    #[test]
    fn resolves_once_per_worker_per_generation() {
        let dst: IpAddr = "192.0.2.2".parse().unwrap();
        let routes = Counting {
            inner: FixedRoutes::new(),
            resolves: AtomicUsize::new(0),
            last_worker: AtomicUsize::new(usize::MAX),
        };
        routes.inner.set(dst, route(3));
        let cache = RouteCache::new(2);
        // Each worker's slot is filled by a resolution made for that worker
        // (a per-core resolver then uses that worker's own slot too).
        cache.get(WorkerId::new(1), &routes, dst, None);
        assert_eq!(routes.last_worker.load(Ordering::Relaxed), 1);
        cache.get(WorkerId::new(0), &routes, dst, None);
        assert_eq!(routes.last_worker.load(Ordering::Relaxed), 0);
        for _ in 0..10 {
            assert_eq!(
                cache.get(WorkerId::new(0), &routes, dst, None).unwrap().oif,
                3
            );
            assert_eq!(
                cache.get(WorkerId::new(1), &routes, dst, None).unwrap().oif,
                3
            );
        }
        assert_eq!(routes.resolves.load(Ordering::Relaxed), 2);
        routes.inner.set(dst, route(4));
        assert_eq!(
            cache.get(WorkerId::new(0), &routes, dst, None).unwrap().oif,
            4
        );
        routes.inner.remove(dst);
        assert!(cache.get(WorkerId::new(0), &routes, dst, None).is_none());
        assert!(cache.get(WorkerId::new(0), &routes, dst, None).is_none());
        assert_eq!(routes.resolves.load(Ordering::Relaxed), 4);
        // Out of range: answered, not cached.
        assert_eq!(cache.get(WorkerId::new(9), &routes, dst, None), None);
    }

    /// A resolver whose generation never moves from 0.
    struct Unchanging(AtomicUsize);

    impl UnderlayRoutes for Unchanging {
        fn resolve(
            &self,
            _: WorkerId,
            _: IpAddr,
            _: Option<IpAddr>,
        ) -> Result<UnderlayRoute, crate::route::RouteError> {
            self.0.fetch_add(1, Ordering::Relaxed);
            Ok(route(3))
        }
        fn generation(&self) -> u64 {
            0
        }
    }

    #[test]
    fn generation_zero_is_a_generation_like_any_other() {
        let routes = Unchanging(AtomicUsize::new(0));
        let cache = RouteCache::new(1);
        let dst: IpAddr = "2001:db8::2".parse().unwrap();
        for _ in 0..5 {
            assert_eq!(
                cache.get(WorkerId::new(0), &routes, dst, None).unwrap().oif,
                3
            );
        }
        assert_eq!(routes.0.load(Ordering::Relaxed), 1, "resolved once");
    }

    #[test]
    fn threads_sharing_one_worker_id_stay_correct() {
        let dst: IpAddr = "192.0.2.2".parse().unwrap();
        let routes = FixedRoutes::new();
        routes.set(dst, route(7));
        let cache = RouteCache::new(1);
        std::thread::scope(|s| {
            for t in 0..4u32 {
                let (cache, routes) = (&cache, &routes);
                s.spawn(move || {
                    for i in 0..20_000u32 {
                        if t == 0 && i % 1000 == 0 {
                            routes.set(dst, route(7 + (i / 1000) % 2));
                        }
                        let oif = cache.get(WorkerId::new(0), routes, dst, None).unwrap().oif;
                        assert!(oif == 7 || oif == 8);
                    }
                });
            }
        });
    }
}
