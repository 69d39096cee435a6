//! The transmit path (encapsulation and the underlay hand-off) allocates
//! nothing per packet: counted by a global allocator wrapper, on this
//! thread only, over thousands of batches in every mode.

use fibre_dev::{PacketBatch, PacketBuf, WorkerId};
use fibre_testkit::CountingAllocator;

mod common;
use common::{inner_udp, tunnel_pair_mode, TUNNEL};
use fibre_dev::gre::TxMode;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn allocations() -> u64 {
    CountingAllocator::allocations()
}

#[test]
fn encapsulation_allocates_nothing_per_packet() {
    let configs: [&[&str]; 4] = [
        &[
            "t0",
            "type",
            "gre",
            "remote",
            "192.0.2.2",
            "local",
            "192.0.2.1",
            "key",
            "1",
            "csum",
            "seq",
        ],
        &[
            "t0",
            "type",
            "gre",
            "remote",
            "192.0.2.2",
            "local",
            "192.0.2.1",
        ],
        &[
            "t0",
            "type",
            "ip6gre",
            "remote",
            "2001:db8::2",
            "local",
            "2001:db8::1",
            "key",
            "1",
            "oseq",
        ],
        &[
            "t0",
            "type",
            "ip6gre",
            "remote",
            "2001:db8::2",
            "local",
            "2001:db8::1",
            "ocsum",
        ],
    ];
    // The counter must see allocations at all, or the test proves nothing.
    let before = allocations();
    let probe = std::hint::black_box(Box::new(1u8));
    assert!(allocations() > before && *probe == 1);

    for (tokens, mode) in configs.into_iter().flat_map(|t| {
        [
            (t, TxMode::Lltx),
            #[cfg(feature = "baselines")]
            (t, TxMode::Locked),
        ]
    }) {
        let (registry, _) = tunnel_pair_mode(tokens, 1500, mode);
        let inner = inner_udp(
            "10.0.0.1".parse().unwrap(),
            "10.0.0.2".parse().unwrap(),
            (1, 2),
            &[0u8; 172],
            64,
            0,
        );
        let mut batch = PacketBatch::with_capacity(32);
        for _ in 0..32 {
            let mut p = PacketBuf::new(128, 2048);
            p.load(&inner).unwrap();
            batch.push(p);
        }
        // One warm-up batch resolves and caches the underlay route.
        registry.transmit(TUNNEL, WorkerId::new(0), &mut batch);
        let before = allocations();
        let mut sent = 0;
        for _ in 0..1_000 {
            for p in batch.packets_mut() {
                p.rewind(inner.len()).unwrap();
            }
            sent += registry.transmit(TUNNEL, WorkerId::new(0), &mut batch).sent;
        }
        let during = allocations() - before;
        assert_eq!(sent, 32_000, "{tokens:?} {mode:?}");
        assert_eq!(
            during, 0,
            "{tokens:?} {mode:?}: {during} allocations for 32000 packets"
        );
    }
}
