//! Running tshark and reading its JSON, shared by the tshark tests.

#![allow(dead_code)] // each test file uses its own subset

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Runs tshark on `path`; `None` (with the reason printed) if it is absent,
/// a failure under `FIBRE_REQUIRE_TOOLS=1` (see `fibre_testkit::unavailable`).
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
            fibre_testkit::unavailable(
                "tshark cross-check",
                "tshark is not installed (apt-get install tshark); frames not cross-checked",
            );
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

/// The instances of a protocol layer in a frame (tshark merges repeated
/// layers into an array with `--no-duplicate-keys`).
pub fn layer<'a>(frame: &'a Value, name: &str) -> Vec<&'a Value> {
    match &frame["_source"]["layers"][name] {
        Value::Array(items) => items.iter().collect(),
        Value::Null => Vec::new(),
        one => vec![one],
    }
}

/// A field anywhere inside a layer (flags sit in nested `_tree` objects).
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

pub fn must<'a>(layer: &'a Value, key: &str) -> &'a str {
    field(layer, key).unwrap_or_else(|| panic!("tshark shows no {key} in {layer}"))
}

/// The IP layers of a frame in wire order, whatever their families.
/// (serde_json's map sorts keys, so the order comes from `frame.protocols`,
/// e.g. `raw:ipv6:gre:ip:udp:data`.)
pub fn ip_layers(frame: &Value) -> Vec<(IpAddr, IpAddr)> {
    let frame_layer = &layer(frame, "frame")[0];
    let stack = must(frame_layer, "frame.protocols");
    let mut seen_v4 = 0;
    let mut seen_v6 = 0;
    let mut out = Vec::new();
    for name in stack.split(':') {
        let (prefix, seen) = match name {
            "ip" => ("ip", &mut seen_v4),
            "ipv6" => ("ipv6", &mut seen_v6),
            _ => continue,
        };
        // Headers quoted in ICMP errors are listed in frame.protocols but
        // nested inside the ICMP layer, not top-level layers: stop there.
        let Some(item) = layer(frame, prefix).get(*seen).copied() else {
            break;
        };
        *seen += 1;
        let src = must(item, &format!("{prefix}.src")).parse().unwrap();
        let dst = must(item, &format!("{prefix}.dst")).parse().unwrap();
        out.push((src, dst));
    }
    out
}

/// A pcap path in the temp directory, unique to this process. Tests
/// remove it when they pass or skip, and leave it for inspection when
/// they fail.
pub fn temp_pcap(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("fibre-net-{name}-{}.pcap", std::process::id()))
}

/// The link type and records of a classic pcap file (little- or
/// big-endian, micro- or nanosecond timestamps), as dumpcap `-P` writes.
pub fn read_pcap(bytes: &[u8]) -> (u32, Vec<Vec<u8>>) {
    assert!(bytes.len() >= 24, "pcap shorter than its global header");
    let magic = [bytes[0], bytes[1], bytes[2], bytes[3]];
    let little = match magic {
        [0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1] => true,
        [0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d] => false,
        other => panic!("not a classic pcap file (magic {other:02x?}); pcapng?"),
    };
    let u32_at = |at: usize| {
        let b = [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]];
        if little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }
    };
    let link_type = u32_at(20);
    let mut records = Vec::new();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let kept = u32_at(at + 8) as usize;
        let start = at + 16;
        assert!(
            start + kept <= bytes.len(),
            "pcap record runs past the file"
        );
        records.push(bytes[start..start + kept].to_vec());
        at = start + kept;
    }
    (link_type, records)
}
