//! Shared by the integration tests: inner packets, a tunnel pair, tshark.

#![allow(dead_code)] // each test file uses its own subset

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use fibre_dev::gre::{GreConfig, GreTunnel, TxMode};
use fibre_dev::route::{FixedRoutes, UnderlayRoute};
use fibre_dev::Registry;
use fibre_net::ip::{Protocol, PseudoHeader};
use fibre_net::{ipv4, ipv6, udp};
use serde_json::Value;

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
    let local = config.local.expect("tests give `local`");
    let routes = Arc::new(FixedRoutes::new());
    routes.set(
        config.remote,
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
        remote: local,
        local: Some(config.remote),
        ikey: config.okey,
        okey: config.ikey,
        icsum: config.ocsum,
        ocsum: config.icsum,
        iseq: config.oseq,
        oseq: config.iseq,
        ..config.clone()
    };
    let far_routes = Arc::new(FixedRoutes::new());
    far_routes.set(
        local,
        UnderlayRoute {
            oif: 9,
            gateway: None,
            src: config.remote.into(),
            mtu: underlay_mtu,
        },
    );
    let receiver = GreTunnel::new(10, far, far_routes, TxMode::Lltx, 2).unwrap();
    registry.add_gre(TUNNEL, config, routes, mode).unwrap();
    (registry, receiver)
}

/// Runs tshark on a pcap; `None` (and says so) when it is not installed.
pub fn tshark_json(path: &Path) -> Option<Vec<Value>> {
    let output = Command::new("tshark")
        .arg("-r")
        .arg(path)
        .args(["-T", "json", "--no-duplicate-keys"])
        .args([
            "-o",
            "udp.check_checksum:TRUE",
            "-o",
            "ip.check_checksum:TRUE",
        ])
        .output();
    let output = match output {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("SKIPPED: tshark is not installed (apt-get install tshark)");
            return None;
        }
        Err(e) => panic!("could not run tshark: {e}"),
    };
    assert!(
        output.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(serde_json::from_slice(&output.stdout).expect("tshark printed JSON"))
}

/// The instances of a layer in a frame (repeated layers become arrays).
pub fn layer<'a>(frame: &'a Value, name: &str) -> Vec<&'a Value> {
    match &frame["_source"]["layers"][name] {
        Value::Array(items) => items.iter().collect(),
        Value::Null => Vec::new(),
        one => vec![one],
    }
}

/// A field anywhere inside a layer (flags sit in nested trees).
pub fn field<'a>(layer: &'a Value, key: &str) -> Option<&'a str> {
    match layer {
        Value::Object(map) => map.get(key).and_then(Value::as_str).or_else(|| {
            map.values().find_map(|v| match v {
                Value::Object(_) => field(v, key),
                _ => None,
            })
        }),
        _ => None,
    }
}

/// A field that must be there.
pub fn must<'a>(layer: &'a Value, key: &str) -> &'a str {
    field(layer, key).unwrap_or_else(|| panic!("tshark shows no {key} in {layer}"))
}

/// A pcap path unique to this process.
pub fn temp_pcap(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("fibre-dev-{name}-{}.pcap", std::process::id()))
}
