//! Shared by the integration tests: inner packets, a tunnel pair, tshark.

#![allow(dead_code)] // each test file uses its own subset

use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;

use fibre_dev::gre::{GreConfig, GreSpec, GreTunnel, TxMode};
use fibre_dev::route::{FixedRoutes, UnderlayRoute};
use fibre_dev::Registry;
use fibre_net::ip::{Protocol, PseudoHeader};
use fibre_net::{ipv4, ipv6, udp};

/// ifindex of the dummy underlay in [`tunnel_pair`].
pub const UNDERLAY: u32 = 1;
/// ifindex of the sending tunnel in [`tunnel_pair`].
pub const TUNNEL: u32 = 2;

/// An IPv4 or IPv6 packet carrying UDP `payload` (DF set on IPv4).
pub fn inner_udp(
    src: IpAddr,
    dst: IpAddr,
    ports: (u16, u16),
    payload: &[u8],
    ttl: u8,
    tos: u8,
) -> Vec<u8> {
    let ip_len = if src.is_ipv4() {
        ipv4::MIN_HEADER_LEN
    } else {
        ipv6::HEADER_LEN
    };
    let udp_len = udp::HEADER_LEN + payload.len();
    let mut buf = vec![0u8; ip_len + udp_len];
    buf[ip_len + udp::HEADER_LEN..].copy_from_slice(payload);
    let repr = udp::Repr {
        src_port: ports.0,
        dst_port: ports.1,
        payload_len: payload.len(),
    };
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            repr.emit(&mut buf[ip_len..], &PseudoHeader::V4 { src: s, dst: d })
                .unwrap();
            ipv4::Repr {
                src_addr: s,
                dst_addr: d,
                protocol: Protocol::Udp,
                payload_len: udp_len,
                ttl,
                tos,
                ident: 7,
                dont_frag: true,
                more_frags: false,
                frag_offset: 0,
                options: &[],
            }
            .emit(&mut buf)
            .unwrap();
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            repr.emit(&mut buf[ip_len..], &PseudoHeader::V6 { src: s, dst: d })
                .unwrap();
            ipv6::Repr {
                src_addr: s,
                dst_addr: d,
                next_header: Protocol::Udp,
                payload_len: udp_len,
                hop_limit: ttl,
                traffic_class: tos,
                flow_label: 0,
            }
            .emit(&mut buf)
            .unwrap();
        }
        _ => panic!("mixed families"),
    }
    buf
}

/// A registry with a dummy underlay (ifindex 1, MTU `underlay_mtu`) and a
/// tunnel (ifindex 2) made from `tokens`, plus the receiving tunnel of the
/// far end (local and remote swapped, ikey/okey, icsum/ocsum, iseq/oseq
/// swapped).
pub fn tunnel_pair(tokens: &[&str], underlay_mtu: u32) -> (Registry, GreTunnel) {
    tunnel_pair_mode(tokens, underlay_mtu, TxMode::Lltx)
}

/// [`tunnel_pair`] with the sending tunnel in `mode`.
pub fn tunnel_pair_mode(tokens: &[&str], underlay_mtu: u32, mode: TxMode) -> (Registry, GreTunnel) {
    let config = GreConfig::parse(tokens).unwrap();
    let local = config.spec.local.expect("tests give `local`");
    let routes = Arc::new(FixedRoutes::new());
    routes.set(
        config.spec.remote,
        UnderlayRoute {
            oif: UNDERLAY,
            gateway: None,
            src: Some(local),
            mtu: underlay_mtu,
        },
    );
    let mut registry = Registry::new(2);
    registry
        .add_dummy(UNDERLAY, "under0", underlay_mtu)
        .unwrap();
    let far = GreConfig {
        name: "far0".into(),
        spec: GreSpec {
            remote: local,
            local: Some(config.spec.remote),
            ikey: config.spec.okey,
            okey: config.spec.ikey,
            icsum: config.spec.ocsum,
            ocsum: config.spec.icsum,
            iseq: config.spec.oseq,
            oseq: config.spec.iseq,
            ..config.spec.clone()
        },
    };
    let far_routes = Arc::new(FixedRoutes::new());
    far_routes.set(
        local,
        UnderlayRoute {
            oif: 9,
            gateway: None,
            src: config.spec.remote.into(),
            mtu: underlay_mtu,
        },
    );
    let receiver = GreTunnel::new(10, far, far_routes, TxMode::Lltx, 2).unwrap();
    registry.add_gre(TUNNEL, config, routes, mode).unwrap();
    (registry, receiver)
}

// tshark's JSON is read exactly as fibre-net's own cross-checks read it:
// one copy of those helpers serves both crates' tests.
#[path = "../../../fibre-net/tests/common/mod.rs"]
mod tshark;
#[allow(unused_imports)] // each test file uses its own subset
pub use tshark::{field, layer, must, tshark_json};

/// A pcap path unique to this process.
pub fn temp_pcap(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("fibre-dev-{name}-{}.pcap", std::process::id()))
}
