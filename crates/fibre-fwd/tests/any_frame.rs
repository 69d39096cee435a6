//! Any frame at all: the worker never panics, and every frame received
//! ends in exactly one count (forwarded, answered, punted or dropped).

mod common;

use common::*;
use proptest::prelude::*;

/// A frame from one of a few good shapes, then damaged at random.
fn any_frame() -> impl Strategy<Value = Vec<u8>> {
    let dsts4 = [
        "10.1.0.7",
        "192.0.2.9",
        "10.0.0.1",
        "10.0.0.7",
        "198.51.100.3",
        "203.0.113.3",
        "198.18.0.1",
        "8.8.8.8",
        "10.1.0.99",
        "255.255.255.255",
        "224.0.0.1",
        "127.0.0.1",
        "10.1.0.1",
    ];
    let dsts6 = [
        "2001:db8:1::7",
        "2001:db8:100::9",
        "2001:db8::1",
        "2001:db8:200::1",
        "2001:db8:300::1",
        "2001:db8:400::1",
        "ff02::1",
        "fe80::1",
        "2001:db8:1::99",
        "2001:db8::7",
    ];
    let good = prop_oneof![
        (0..dsts4.len(), any::<u8>(), any::<bool>(), 0usize..3100).prop_map(
            move |(d, ttl, df, len)| {
                frame4(&udp4(SENDER, dsts4[d].parse().unwrap(), ttl, df, len))
            }
        ),
        (0..dsts4.len(), any::<u8>()).prop_map(move |(d, ttl)| frame4(&ping4(
            SENDER,
            dsts4[d].parse().unwrap(),
            ttl
        ))),
        (0..dsts6.len(), any::<u8>(), 0usize..1500).prop_map(move |(d, hops, len)| {
            frame6(&udp6(SENDER6, dsts6[d].parse().unwrap(), hops, len))
        }),
        prop::collection::vec(any::<u8>(), 0..80),
    ];
    (
        good,
        prop::collection::vec((any::<u16>(), any::<u8>()), 0..4),
        any::<Option<u16>>(),
    )
        .prop_map(|(mut frame, flips, cut)| {
            for (at, value) in flips {
                if !frame.is_empty() {
                    let i = usize::from(at) % frame.len();
                    frame[i] = value;
                }
            }
            if let Some(cut) = cut {
                frame.truncate(usize::from(cut) % (frame.len() + 1));
            }
            frame
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_frame_ends_in_one_count(
        frames in prop::collection::vec(any_frame(), 1..80),
        port in 0usize..3,
        now_s in 0u64..100,
    ) {
        let mut w = worker();
        w.receive_burst(port, &frames, now_s * 1_000_000_000);
        let c = *w.counters();
        prop_assert_eq!(c.received, frames.len() as u64);
        prop_assert_eq!(outcomes(&c), c.received, "{:?}", c);
        // What was queued is whole Ethernet frames from our ports' MACs.
        for p in [P0, P1] {
            let mac = if p == P0 { P0_MAC } else { P1_MAC };
            let mut ok = true;
            w.drain_port(p, |f| ok &= f.len() >= 34 && f[6..12] == mac);
            prop_assert!(ok);
        }
    }
}
