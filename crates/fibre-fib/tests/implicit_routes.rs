//! The routes the kernel makes for addresses and links, as a 6.18 kernel
//! listed them in a namespace (`ip route show table all`).

mod common;

use common::*;
use fibre_fib::*;

#[test]
fn ipv4_address_makes_local_broadcast_and_subnet_routes() {
    // Kernel: ip addr add 10.0.0.1/24 dev d0; ip addr add 10.0.0.2/24 dev d0
    let mut fib = router(&["d0"]);
    addr(&mut fib, "d0", "10.0.0.1/24").unwrap();
    addr(&mut fib, "d0", "10.0.0.2/24").unwrap();
    assert_eq!(
        show(&fib, Family::V4, TABLE_MAIN),
        ["unicast 10.0.0.0/24 dev d0 proto kernel scope link metric 0 src 10.0.0.1"]
    );
    assert_eq!(
        show(&fib, Family::V4, TABLE_LOCAL),
        [
            "local 10.0.0.1 dev d0 proto kernel scope host metric 0 src 10.0.0.1",
            // The secondary's local route names the primary as source.
            "local 10.0.0.2 dev d0 proto kernel scope host metric 0 src 10.0.0.1",
            "broadcast 10.0.0.255 dev d0 proto kernel scope link metric 0 src 10.0.0.1",
            "local 127.0.0.0/8 dev lo proto kernel scope host metric 0 src 127.0.0.1",
            "local 127.0.0.1 dev lo proto kernel scope host metric 0 src 127.0.0.1",
            "broadcast 127.255.255.255 dev lo proto kernel scope link metric 0 src 127.0.0.1",
        ]
    );
    let secondary = fib.addresses(Some(Family::V4));
    assert!(secondary
        .iter()
        .any(|a| a.local == ip("10.0.0.2") && a.secondary));
}

#[test]
fn slash_32_31_and_peer_addresses() {
    // Kernel: /32 makes only the local route; /31 no broadcast; a peer its /32.
    let mut fib = router(&["d0"]);
    addr(&mut fib, "d0", "10.3.0.1/32").unwrap();
    addr(&mut fib, "d0", "10.4.0.1/31").unwrap();
    let mut peer = addr_spec("d0", "10.5.0.1/32");
    peer.peer = Some(ip("10.6.0.1"));
    fib.apply(&Command::Addr {
        op: AddrOp::Add,
        spec: peer,
    })
    .unwrap();
    assert_eq!(
        show(&fib, Family::V4, TABLE_MAIN),
        [
            "unicast 10.4.0.0/31 dev d0 proto kernel scope link metric 0 src 10.4.0.1",
            "unicast 10.6.0.1 dev d0 proto kernel scope link metric 0 src 10.5.0.1",
        ]
    );
    let local: Vec<String> = show(&fib, Family::V4, TABLE_LOCAL)
        .into_iter()
        .filter(|r| r.contains("d0"))
        .collect();
    assert_eq!(
        local.len(),
        3,
        "three local routes, no broadcast: {local:?}"
    );
    assert!(local.iter().all(|r| r.starts_with("local ")));
}

#[test]
fn link_down_keeps_local_routes_and_up_restores_the_rest() {
    let mut fib = router(&["d0"]);
    addr(&mut fib, "d0", "10.0.0.1/24").unwrap();
    add(&mut fib, via("192.0.2.0/24", "10.0.0.9", None));
    set_up(&mut fib, "d0", false);
    assert!(show(&fib, Family::V4, TABLE_MAIN).is_empty());
    let local = show(&fib, Family::V4, TABLE_LOCAL);
    assert!(local.iter().any(|r| r.starts_with("local 10.0.0.1 ")));
    assert!(!local.iter().any(|r| r.starts_with("broadcast 10.0.0.255")));
    set_up(&mut fib, "d0", true);
    // The kernel's own routes come back; the user's gateway route does not.
    assert_eq!(
        show(&fib, Family::V4, TABLE_MAIN),
        ["unicast 10.0.0.0/24 dev d0 proto kernel scope link metric 0 src 10.0.0.1"]
    );
    assert!(show(&fib, Family::V4, TABLE_LOCAL)
        .iter()
        .any(|r| r.starts_with("broadcast 10.0.0.255")));
}

#[test]
fn address_on_a_down_link_makes_only_its_local_route() {
    let mut fib = router(&[]);
    fib.apply(&Command::LinkAdd {
        name: "d1".into(),
        kind: LinkKind::Ifb,
        mtu: None,
    })
    .unwrap();
    addr(&mut fib, "d1", "10.2.0.1/24").unwrap();
    assert!(show(&fib, Family::V4, TABLE_MAIN).is_empty());
    set_up(&mut fib, "d1", true);
    assert_eq!(show(&fib, Family::V4, TABLE_MAIN).len(), 1);
}

#[test]
fn ipv6_address_and_link_local_routes() {
    // Kernel (forwarding on): prefix route metric 256 in main, local and
    // subnet-router anycast in local, fe80::/64 and ff00::/8 for the link.
    let mut fib = router(&["d0"]);
    addr(&mut fib, "d0", "2001:db8::1/64").unwrap();
    assert_eq!(
        show(&fib, Family::V6, TABLE_MAIN),
        [
            "unicast 2001:db8::/64 dev d0 proto kernel scope global metric 256",
            "unicast fe80::/64 dev d0 proto kernel scope global metric 256",
        ]
    );
    let local: Vec<String> = show(&fib, Family::V6, TABLE_LOCAL)
        .into_iter()
        .map(|r| r.split(" proto").next().unwrap().to_string())
        .collect();
    assert_eq!(
        local,
        [
            "local ::1 dev lo",
            "anycast 2001:db8:: dev d0",
            "local 2001:db8::1 dev d0",
            "anycast fe80:: dev d0",
            "local fe80::fb:ff:fe00:2 dev d0",
            "multicast ff00::/8 dev d0",
        ]
    );
}

#[test]
fn ipv6_addresses_go_when_the_link_goes_down() {
    let mut fib = router(&["d0"]);
    addr(&mut fib, "d0", "2001:db8::1/64").unwrap();
    set_up(&mut fib, "d0", false);
    assert!(fib.addresses(Some(Family::V6)).iter().all(|a| a.link == 1));
    assert!(show(&fib, Family::V6, TABLE_MAIN).is_empty());
}

#[test]
fn deleting_a_primary_takes_its_secondaries() {
    let mut fib = router(&["d0"]);
    addr(&mut fib, "d0", "10.0.0.1/24").unwrap();
    addr(&mut fib, "d0", "10.0.0.2/24").unwrap();
    fib.apply(&Command::Addr {
        op: AddrOp::Del,
        spec: addr_spec("d0", "10.0.0.1/24"),
    })
    .unwrap();
    assert!(fib.addresses(Some(Family::V4)).iter().all(|a| a.link == 1));
    assert!(show(&fib, Family::V4, TABLE_MAIN).is_empty());
}

#[test]
fn dump_order_is_by_table_hash_then_prefix_then_kernel_order() {
    // Kernel-checked: tos 8 first, then metric order, longer prefix first.
    let mut fib = router(&["d0", "d1"]);
    addr(&mut fib, "d0", "10.0.0.1/24").unwrap();
    add(&mut fib, via("10.0.0.0/8", "10.0.0.9", None));
    add(
        &mut fib,
        RouteSpec {
            metric: Some(5),
            ..on("10.0.0.0/24", "d0")
        },
    );
    add(
        &mut fib,
        RouteSpec {
            metric: Some(3),
            ..on("10.0.0.0/24", "d1")
        },
    );
    add(
        &mut fib,
        RouteSpec {
            tos: 8,
            ..on("10.0.0.0/24", "d1")
        },
    );
    let order: Vec<(String, u8, u32)> = fib
        .routes(Family::V4, Some(TABLE_MAIN))
        .iter()
        .map(|r| (r.dst.to_string(), r.tos, r.metric))
        .collect();
    let want = [
        ("10.0.0.0/24", 8, 0),
        ("10.0.0.0/24", 0, 0),
        ("10.0.0.0/24", 0, 3),
        ("10.0.0.0/24", 0, 5),
        ("10.0.0.0/8", 0, 0),
    ];
    let want: Vec<(String, u8, u32)> = want
        .iter()
        .map(|(d, t, m)| (d.to_string(), *t, *m))
        .collect();
    assert_eq!(order, want);
    // A table id 300 hashes to bucket 44: listed before main (254) and local (255).
    add(
        &mut fib,
        RouteSpec {
            table: 300,
            ..on("10.9.0.0/16", "d0")
        },
    );
    let tables: Vec<TableId> = fib
        .routes(Family::V4, None)
        .iter()
        .map(|r| r.table)
        .collect();
    assert_eq!(tables.first(), Some(&300));
    assert_eq!(tables.last(), Some(&TABLE_LOCAL));
}

#[test]
fn mtu_under_1280_turns_ipv6_off() {
    // Kernel-checked: `link set d0 mtu 1000` removes d0's IPv6 addresses;
    // an IPv6 address add is "Invalid argument", a route "No such device";
    // mtu 1500 brings fe80::/64, the link-local and ff00::/8 back.
    let mut fib = router(&["d0"]);
    addr(&mut fib, "d0", "2001:db8::1/64").unwrap();
    let set_mtu = |fib: &mut Fib, mtu| {
        fib.apply(&Command::LinkSet {
            name: "d0".into(),
            up: None,
            mtu: Some(mtu),
        })
        .unwrap()
    };
    set_mtu(&mut fib, 1000);
    assert!(fib.addresses(Some(Family::V6)).iter().all(|a| a.link == 1));
    assert!(show(&fib, Family::V6, TABLE_MAIN).is_empty());
    assert_eq!(
        addr(&mut fib, "d0", "2001:db8::1/64")
            .unwrap_err()
            .to_string(),
        "RTNETLINK answers: Invalid argument"
    );
    let e = route(&mut fib, RouteOp::Add, on("2001:db8:5::/48", "d0")).unwrap_err();
    assert_eq!(e.to_string(), "RTNETLINK answers: No such device");
    set_mtu(&mut fib, 1500);
    assert_eq!(
        show(&fib, Family::V6, TABLE_MAIN),
        ["unicast fe80::/64 dev d0 proto kernel scope global metric 256"]
    );
    assert!(show(&fib, Family::V6, TABLE_LOCAL)
        .iter()
        .any(|r| r.starts_with("multicast ff00::/8 dev d0")));
}
