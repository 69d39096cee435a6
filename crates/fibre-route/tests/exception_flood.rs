//! The exception table's memory bound: a flood of 10 million distinct PMTU exceptions.

#[test]
fn exception_flood_of_ten_million_destinations_stays_under_its_bound() {
    use fibre_route::exceptions::{nth_address, ExceptionConfig, ExceptionTable};
    let mut t = ExceptionTable::new(ExceptionConfig::default());
    let bound = t.max_bytes();
    let mut peak = 0;
    for i in 0..10_000_000u64 {
        t.set_pmtu(nth_address(i, true), 1280 + (i % 200) as u32, i / 1000);
        if i % 1_000_000 == 0 {
            peak = peak.max(t.heap_bytes());
        }
    }
    peak = peak.max(t.heap_bytes());
    assert!(peak <= bound, "{peak} > {bound}");
    assert!(t.len() <= 2048 * 9);
    assert!(t.evicted() >= 10_000_000 - 2048 * 9);
    eprintln!(
        "10M distinct PMTU exceptions: {} entries, peak {peak} B, bound {bound} B",
        t.len()
    );
}
