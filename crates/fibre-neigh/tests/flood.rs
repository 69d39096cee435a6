//! A flood of packets to one million distinct unresolved destinations
//! keeps the table within `gc_thresh3` entries, every pending queue within
//! `unres_qlen`, and the memory the table holds bounded; nothing panics.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::atomic::{AtomicIsize, Ordering};

use common::*;
use fibre_neigh::{Action, FibRouter, NeighDrop, NeighSettings, NeighTable};

/// Counts the bytes live on the heap (all threads: the test runs alone in
/// its binary's only test).
struct LiveBytes;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the
// only addition is an atomic counter of live bytes.
unsafe impl GlobalAlloc for LiveBytes {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the same contract as our caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr` came from `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: `ptr` came from `System` with `layout`; the caller keeps
        // `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: LiveBytes = LiveBytes;

#[test]
fn a_million_destinations_stay_within_the_tables_bounds() {
    let fib = fib();
    let (router, link) = (FibRouter::new(&fib), v0(&fib));
    let settings = NeighSettings::default();
    let mut table = NeighTable::new(settings);
    let before = LIVE.load(Ordering::Relaxed);
    let mut most_live = 0isize;
    let (mut table_full, mut solicitations, mut unreachable) = (0u64, 0u64, 0u64);
    let mut now = 0u64;
    for i in 0..1_000_000u32 {
        // 100,000 packets a second, half IPv4, half IPv6.
        if i % 100 == 0 {
            now += 1;
            for action in table.tick(now, &router) {
                match action {
                    Action::Send { .. } => solicitations += 1,
                    Action::Unreachable { .. } => unreachable += 1,
                    other => panic!("{other:?}"),
                }
            }
        }
        let (dst, packet) = if i % 2 == 0 {
            let dst = Ipv4Addr::from(0x0a00_0000 | (i & 0x00ff_ffff));
            (
                IpAddr::V4(dst),
                ipv4_packet("192.0.2.9", &dst.to_string(), 64),
            )
        } else {
            let dst = Ipv6Addr::from(0x2001_0db8_0000_0000_0000_0000_0000_0000u128 | u128::from(i));
            (
                IpAddr::V6(dst),
                ipv6_packet("2001:db8:9::9", &dst.to_string()),
            )
        };
        for action in table.resolve(now, link, dst, packet, &router) {
            match action {
                Action::Dropped {
                    reason: NeighDrop::TableFull,
                    ..
                } => table_full += 1,
                Action::Send { .. } => solicitations += 1,
                other => panic!("{other:?}"),
            }
        }
        if i % 10_000 == 0 {
            let entries = table.entries().count();
            assert!(
                entries <= 2 * settings.gc_thresh3,
                "{entries} entries at {i}"
            );
            assert!(table.queued_packets() <= entries);
            most_live = most_live.max(LIVE.load(Ordering::Relaxed) - before);
        }
    }
    let entries_v4 = table.entries().filter(|v| v.addr.is_ipv4()).count();
    let entries_v6 = table.entries().filter(|v| v.addr.is_ipv6()).count();
    assert!(entries_v4 <= settings.gc_thresh3 && entries_v6 <= settings.gc_thresh3);
    assert!(table_full > 0, "the table filled");
    assert_eq!(table.stats().table_fulls, table_full);
    assert!(unreachable > 0 && solicitations > 0);
    // 2048 entries with one small packet each, the map and the published
    // state: well under 4 MiB, whatever the number of destinations.
    assert!(most_live < 4 << 20, "{most_live} bytes live");
    eprintln!(
        "entries {entries_v4}+{entries_v6}, refused {table_full}, solicitations {solicitations}, \
         unreachable {unreachable}, at most {most_live} bytes live"
    );
}
