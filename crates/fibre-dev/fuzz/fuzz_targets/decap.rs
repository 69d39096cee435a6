//! libFuzzer target: arbitrary bytes as an outer IP + GRE frame, through
//! the stateless checks and through a tunnel (which adds `iseq` state and
//! the in-place strip), under receive policies chosen by the first byte's bits.
#![no_main]

use std::sync::{Arc, OnceLock};

use fibre_dev::gre::{decapsulate, GreConfig, GreTunnel, RxPolicy, TxMode};
use fibre_dev::route::FixedRoutes;
use fibre_dev::{PacketBatch, PacketBuf, WorkerId};
use libfuzzer_sys::fuzz_target;

fn tunnel() -> &'static GreTunnel {
    static TUNNEL: OnceLock<GreTunnel> = OnceLock::new();
    TUNNEL.get_or_init(|| {
        let config = GreConfig::parse(&[
            "fz0",
            "type",
            "gre",
            "remote",
            "192.0.2.2",
            "local",
            "192.0.2.1",
            "key",
            "7",
            "icsum",
            "iseq",
        ])
        .expect("fixed config parses");
        GreTunnel::new(1, config, Arc::new(FixedRoutes::new()), TxMode::Lltx, 1)
            .expect("no route, so no loop")
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, frame)) = data.split_first() else {
        return;
    };
    let policy = RxPolicy {
        local: None,
        remote: if selector & 1 == 0 {
            "192.0.2.2".parse().unwrap()
        } else {
            "2001:db8::2".parse().unwrap()
        },
        ikey: (selector & 2 != 0).then_some(7),
        icsum: selector & 4 != 0,
        iseq: selector & 8 != 0,
        tap: selector & 16 != 0,
    };
    if let Ok(d) = decapsulate(&policy, frame) {
        assert!(d.header_len + d.inner_len <= frame.len());
    }
    let mut batch = PacketBatch::with_capacity(1);
    let mut packet = PacketBuf::new(0, 65_536);
    if packet.load(frame).is_ok() {
        batch.push(packet);
        tunnel().receive(WorkerId::new(0), &mut batch);
    }
});
