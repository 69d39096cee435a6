//! `route get` answers as `ip route get` printed them on Linux 6.18 in a
//! network namespace, for the corners the accept/refuse differential
//! found.

#[path = "support/config_file.rs"]
mod config_file;

use config_file::{fibre, ConfigFile};

const BASE: &str = "link set lo up\nlink add d0 type ifb\nlink set d0 up\n\
                    addr add 10.1.0.1/24 dev d0\n";

fn route_get(tag: &str, lines: &str, args: &[&str]) -> String {
    let config = ConfigFile::new("route-get-parity", tag, &format!("{BASE}{lines}"));
    let mut all = vec!["--config", config.path()];
    all.extend_from_slice(args);
    let out = fibre(&all);
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn an_output_route_by_the_loopback_device_is_local() {
    // ip -j: `..."dev":"lo",...,"cache":["local"]` for both (__mkroute_output).
    for (tag, line) in [
        ("lo", "route add 10.20.1.0/24 dev lo\n"),
        ("anycast", "route add anycast 0.0.0.0/0 dev lo\n"),
    ] {
        let out = route_get(tag, line, &["-j", "route", "get", "10.20.1.1"]);
        assert!(out.contains(r#""cache":["local"]"#), "{line}: {out}");
    }
    let out = route_get("d0", "", &["-j", "route", "get", "10.1.0.7"]);
    assert!(out.contains(r#""cache":[]"#), "{out}");
}

#[test]
fn a_plain_ipv4_query_is_about_udp() {
    // Kernel-checked: `rule add pref 100 ipproto udp prohibit` refuses a
    // plain `route get` and not one with `ipproto tcp`.
    let rule = "rule add pref 100 ipproto udp prohibit\n";
    let out = route_get("udp", rule, &["route", "get", "10.1.0.7"]);
    assert!(out.contains("Permission denied"), "{out}");
    let out = route_get("tcp", rule, &["route", "get", "10.1.0.7", "ipproto", "tcp"]);
    assert!(
        out.starts_with("10.1.0.7 dev d0 src 10.1.0.1 uid 0"),
        "{out}"
    );
}
