//! The route's layout as the data path relies on it (the compile-time
//! assertions in `route.rs` pin offsets; these check real allocations).

use fibre_route::route::COUNTER_OFFSET;
use fibre_route::{HeldRoute, Route, RouteData};

#[test]
fn routes_are_allocated_on_their_counter_alignment() {
    let routes: Vec<HeldRoute> = (0..64)
        .map(|i| HeldRoute::new(RouteData::new(i, None, None, 1500)))
        .collect();
    for r in &routes {
        let base = &**r as *const Route as usize;
        assert_eq!(base % COUNTER_OFFSET, 0);
        let mtu = std::ptr::addr_of!(r.data().mtu) as usize;
        assert!(mtu - base < 64, "read-mostly fields on the first line");
    }
    assert_eq!(std::mem::size_of::<Route>(), 2 * COUNTER_OFFSET);
    assert_eq!(std::mem::size_of::<RouteData>(), 64);
}
