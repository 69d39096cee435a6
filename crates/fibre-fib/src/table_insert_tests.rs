//! [`Table::insert_unless_same`] against the plain scan it stands for:
//! compare the new route with every route of its prefix, and put it before
//! the first one of greater order.

use super::*;
use crate::types::*;
use crate::write::route_ops::{route_fingerprint, same_route};

/// The order `add_kernel_route` places routes in (TOS descending, then metric).
fn order(r: &Route) -> (std::cmp::Reverse<u8>, u32) {
    (std::cmp::Reverse(r.tos), r.metric)
}

fn route(tos: u8, metric: u32, dev: u32) -> Route {
    Route {
        mtu_lock: false,
        metrics: Default::default(),
        table: TABLE_MAIN,
        dst: Prefix::new("fe80::".parse().unwrap(), 64).unwrap(),
        tos,
        kind: RouteType::Unicast,
        protocol: Protocol::KERNEL,
        scope: Scope::UNIVERSE,
        metric,
        prefsrc: None,
        mtu: None,
        nexthops: vec![Nexthop {
            gateway: None,
            dev: Some(dev),
            weight: 1,
            flags: NexthopFlags::default(),
        }],
        cache_class: 0,
    }
}

/// What the table must do: the scan over every route.
fn insert_by_scan(routes: &mut Vec<Route>, new: Route) {
    if routes.iter().any(|r| same_route(r, &new)) {
        return;
    }
    let at = routes
        .iter()
        .position(|r| order(r) > order(&new))
        .unwrap_or(routes.len());
    routes.insert(at, new);
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn inserts_where_the_scan_does_and_refuses_what_it_refuses() {
    for seed in 1..=40u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut table = Table::default();
        let mut expected: Vec<Route> = Vec::new();
        let dst = route(0, 0, 0).dst;
        for _ in 0..300 {
            let roll = rng.below(100);
            if roll < 90 {
                // Few TOS and metric values and devices: many ties and duplicates.
                let r = route(
                    [0, 0, 0, 8][rng.below(4) as usize],
                    [0, 256, 256, 1024][rng.below(4) as usize],
                    rng.below(120) as u32,
                );
                let added =
                    table.insert_unless_same(&dst, r.clone(), same_route, route_fingerprint, order);
                let before = expected.len();
                insert_by_scan(&mut expected, r);
                assert_eq!(added, expected.len() > before, "seed {seed}");
            } else if roll < 95 && !expected.is_empty() {
                // A change from elsewhere: one route goes.
                let i = rng.below(expected.len() as u64) as usize;
                expected.remove(i);
                table.routes_mut(&dst).remove(i);
            } else {
                // A change from elsewhere that breaks the order (a route
                // pushed at the end whatever its metric).
                let r = route(0, rng.below(300) as u32, rng.below(120) as u32);
                expected.push(r.clone());
                table.routes_mut(&dst).push(r);
            }
            let held = table.get(&dst).map_or(&[][..], |e| &e.routes[..]);
            assert_eq!(held, &expected[..], "seed {seed}");
        }
    }
}

#[test]
fn routes_the_same_have_the_same_fingerprint() {
    let a = route(0, 256, 3);
    let mut b = a.clone();
    // What same_route does not compare: the path's state and the cache class.
    b.nexthops[0].flags.linkdown = true;
    b.nexthops[0].flags.dead = true;
    b.cache_class = 7;
    assert!(same_route(&a, &b));
    assert_eq!(route_fingerprint(&a), route_fingerprint(&b));
    let other_dev = route(0, 256, 4);
    assert!(!same_route(&a, &other_dev));
    assert_ne!(route_fingerprint(&a), route_fingerprint(&other_dev));
}
