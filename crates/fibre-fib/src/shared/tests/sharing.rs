//! What a published version shares with the next: a clone of the FIB
//! copies chunk directories, and a batch then copies only the chunks it
//! writes, so two consecutive versions hold nearly all their bytes once.

use super::fixtures::*;
use crate::*;

/// A router with `n` IPv6 routes and `n` IPv4 ones through `d0`.
fn router_with_routes(n: u32) -> Fib {
    let mut fib = router();
    fib.apply(&Command::Addr {
        op: AddrOp::Add,
        spec: addr_spec("d0", "192.0.2.1".parse().unwrap(), 24),
    })
    .unwrap();
    for i in 0..n {
        for line in [
            format!(
                "route add 2001:db8:{:x}:{:x}::/64 via 2001:db8::2 dev d0",
                i >> 8,
                i & 0xff
            ),
            format!(
                "route add 10.{}.{}.0/24 via 192.0.2.2 dev d0",
                i >> 8,
                i & 0xff
            ),
        ] {
            fib.apply(&command_line(&line).unwrap()).unwrap();
        }
    }
    fib
}

#[test]
fn a_clone_after_one_route_add_shares_nearly_all_bytes_with_the_previous_version() {
    let mut working = router_with_routes(20_000);
    let published = working.clone();
    let total = working.table_chunk_bytes();
    // A clone shares every chunk: only the chunk directories (counted in
    // the total) are its own.
    let unshared = total - working.shared_bytes_with(&published);
    assert!(
        unshared * 1000 < total,
        "{unshared} of {total} bytes not shared"
    );
    let line = "route add 2001:db8:4e:ff::/64 via 2001:db8::3 dev d0";
    working.apply(&command_line(line).unwrap()).unwrap();
    working
        .apply(&command_line("route add 10.250.1.0/24 via 192.0.2.3 dev d0").unwrap())
        .unwrap();
    working.settle_tables();
    let next = working.clone();
    let shared = next.shared_bytes_with(&published);
    let copied = next.table_chunk_bytes() - shared;
    // One route per family: one arena leaf (4 KiB) with its group and one
    // side-array leaf (2 KiB) with its group each, and the LPM's chunks on
    // the new prefix's path (most of what is copied: 50 KB for IPv4, 70 KB
    // for IPv6 here), against 5.4 MB of tables.
    assert!(total > 4 << 20, "the tables are large: {total} bytes");
    assert!(
        copied * 20 < total,
        "one route add copied {copied} of {total} bytes"
    );
    // What the old version holds alone once the new one is out: only the
    // chunks the batch replaced (and the chunk directories).
    drop(working);
    let alone = published.exclusive_bytes();
    assert!(alone * 20 < total, "{alone} of {total} bytes held alone");
    // And the versions still answer their own routes.
    let prefix: Prefix = Prefix::new("2001:db8:4e:ff::".parse().unwrap(), 64).unwrap();
    assert!(routes_by_prefix(&next).contains_key(&prefix));
    assert!(!routes_by_prefix(&published).contains_key(&prefix));
}
