//! `ip addr show` lines: each link's header, then its addresses.

use std::fmt::Write;
use std::net::{IpAddr, Ipv4Addr};

use fibre_fib::{Address, Family, Link};
use serde_json::{json, Map, Value};

use super::link::{link_header, link_json};

/// `ip` shows infinite lifetimes as `forever` (JSON: 4294967295).
const FOREVER: u32 = u32::MAX;

/// The kernel reports IFA_RT_PRIORITY only when one was set; the FIB keeps
/// the prefix route's metric instead, whose unset value is 0 for IPv4 and
/// 256 for IPv6 (so an explicit `metric 256` on IPv6 is not shown).
fn shows_metric(addr: &Address) -> bool {
    let unset = match Family::of(&addr.local) {
        Family::V4 => 0,
        Family::V6 => 256,
    };
    addr.metric != unset
}

/// The peer and broadcast address the kernel reports: inet_fill_ifaddr
/// puts IPv4's IFA_ADDRESS and IFA_BROADCAST only when they are not
/// 0.0.0.0, inet6_fill_ifaddr a peer only when it is not `::`
/// (kernel-checked: `remote 0.0.0.0/0` and `peer ::` are shown as none).
fn reported(addr: &Address) -> (Option<IpAddr>, Option<Ipv4Addr>) {
    let peer = addr.peer.filter(|p| !p.is_unspecified());
    (peer, addr.broadcast.filter(|b| !b.is_unspecified()))
}

/// One address line pair as `ip addr show` prints it.
pub fn address_text(link: &Link, addr: &Address) -> String {
    let (peer, broadcast) = reported(addr);
    let mut out = String::new();
    let v4 = Family::of(&addr.local) == Family::V4;
    let _ = write!(
        out,
        "    {} {}",
        if v4 { "inet" } else { "inet6" },
        addr.local
    );
    if let Some(peer) = peer {
        let _ = write!(out, " peer {peer}");
    }
    let _ = write!(out, "/{} ", addr.prefix_len);
    if shows_metric(addr) {
        let _ = write!(out, "metric {} ", addr.metric);
    }
    if let Some(brd) = broadcast {
        let _ = write!(out, "brd {brd} ");
    }
    let _ = write!(out, "scope {} ", addr.scope.name());
    if addr.secondary {
        out.push_str("secondary ");
    }
    if addr.noprefixroute {
        out.push_str("noprefixroute ");
    }
    if v4 {
        out.push_str(addr.label.as_deref().unwrap_or(&link.name));
    }
    out.push_str("\n       valid_lft forever preferred_lft forever\n");
    out
}

/// One address as an `addr_info` entry of `ip -j addr show`.
pub fn address_json(link: &Link, addr: &Address) -> Value {
    let (peer, broadcast) = reported(addr);
    let v4 = Family::of(&addr.local) == Family::V4;
    let mut obj = Map::new();
    obj.insert("family".into(), json!(if v4 { "inet" } else { "inet6" }));
    obj.insert("local".into(), json!(addr.local.to_string()));
    if let Some(peer) = peer {
        obj.insert("address".into(), json!(peer.to_string()));
    }
    obj.insert("prefixlen".into(), json!(addr.prefix_len));
    if shows_metric(addr) {
        obj.insert("metric".into(), json!(addr.metric));
    }
    if let Some(brd) = broadcast {
        obj.insert("broadcast".into(), json!(brd.to_string()));
    }
    obj.insert("scope".into(), json!(addr.scope.name()));
    if addr.secondary {
        obj.insert("secondary".into(), json!(true));
    }
    if addr.noprefixroute {
        obj.insert("noprefixroute".into(), json!(true));
    }
    if v4 {
        obj.insert(
            "label".into(),
            json!(addr.label.as_deref().unwrap_or(&link.name)),
        );
    }
    obj.insert("valid_life_time".into(), json!(FOREVER));
    obj.insert("preferred_life_time".into(), json!(FOREVER));
    Value::Object(obj)
}

/// A link and its addresses as `ip addr show` prints them.
pub fn link_addresses_text(link: &Link, addrs: &[&Address]) -> String {
    let mut out = format!("{}\n", link_header(link));
    for addr in addrs {
        out.push_str(&address_text(link, addr));
    }
    out
}

/// A link and its addresses as one `ip -j addr show` object.
pub fn link_addresses_json(link: &Link, addrs: &[&Address]) -> Value {
    let mut obj = link_json(link, Default::default());
    let infos: Vec<Value> = addrs.iter().map(|a| address_json(link, a)).collect();
    obj.insert("addr_info".into(), Value::Array(infos));
    Value::Object(obj)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fibre_fib::{LinkKind, Scope};

    fn eth0() -> Link {
        Link {
            index: 3,
            name: "eth0".into(),
            kind: LinkKind::Veth {
                peer: "eth1".into(),
            },
            mtu: 1500,
            up: true,
            carrier: true,
        }
    }

    fn address(local: &str, len: u8) -> Address {
        Address {
            link: 3,
            local: local.parse().unwrap(),
            prefix_len: len,
            peer: None,
            broadcast: None,
            scope: Scope::UNIVERSE,
            secondary: false,
            noprefixroute: false,
            metric: 0,
            label: None,
        }
    }

    // Expected strings are iproute2 6.1's output for the same addresses.

    #[test]
    fn ipv4_with_metric_and_broadcast() {
        let mut a = address("10.0.0.1", 24);
        a.metric = 5;
        a.broadcast = Some("10.0.0.255".parse().unwrap());
        assert_eq!(
            address_text(&eth0(), &a),
            "    inet 10.0.0.1/24 metric 5 brd 10.0.0.255 scope global eth0\n       valid_lft forever preferred_lft forever\n"
        );
        assert_eq!(
            address_json(&eth0(), &a).to_string(),
            r#"{"family":"inet","local":"10.0.0.1","prefixlen":24,"metric":5,"broadcast":"10.0.0.255","scope":"global","label":"eth0","valid_life_time":4294967295,"preferred_life_time":4294967295}"#
        );
    }

    #[test]
    fn a_zero_peer_and_broadcast_are_not_reported() {
        // Kernel-checked: `addr add 198.51.100.0/24 brd - remote 0.0.0.0/0`.
        let mut a = address("198.51.100.0", 24);
        a.peer = Some("0.0.0.0".parse().unwrap());
        a.broadcast = Some("0.0.0.0".parse().unwrap());
        assert_eq!(
            address_text(&eth0(), &a),
            "    inet 198.51.100.0/24 scope global eth0\n       valid_lft forever preferred_lft forever\n"
        );
        assert!(!address_json(&eth0(), &a).to_string().contains("0.0.0.0"));
        let mut b = address("2001:db8:7::1", 128);
        b.metric = 256;
        b.peer = Some("::".parse().unwrap());
        assert_eq!(
            address_text(&eth0(), &b),
            "    inet6 2001:db8:7::1/128 scope global \n       valid_lft forever preferred_lft forever\n"
        );
        b.peer = Some("2001:db8:9::".parse().unwrap());
        assert!(address_text(&eth0(), &b).contains(" peer 2001:db8:9::/128"));
    }

    #[test]
    fn peer_secondary_noprefixroute() {
        let mut a = address("10.9.0.1", 32);
        a.peer = Some("10.9.0.2".parse().unwrap());
        assert_eq!(
            address_text(&eth0(), &a),
            "    inet 10.9.0.1 peer 10.9.0.2/32 scope global eth0\n       valid_lft forever preferred_lft forever\n"
        );
        let mut a = address("10.0.0.9", 24);
        a.secondary = true;
        a.noprefixroute = true;
        assert_eq!(
            address_text(&eth0(), &a),
            "    inet 10.0.0.9/24 scope global secondary noprefixroute eth0\n       valid_lft forever preferred_lft forever\n"
        );
        assert_eq!(
            address_json(&eth0(), &a).to_string(),
            r#"{"family":"inet","local":"10.0.0.9","prefixlen":24,"scope":"global","secondary":true,"noprefixroute":true,"label":"eth0","valid_life_time":4294967295,"preferred_life_time":4294967295}"#
        );
    }

    #[test]
    fn ipv6_has_no_label() {
        let mut a = address("::1", 128);
        a.scope = Scope::HOST;
        a.metric = 256;
        assert_eq!(
            address_text(&eth0(), &a),
            "    inet6 ::1/128 scope host \n       valid_lft forever preferred_lft forever\n"
        );
    }

    #[test]
    fn link_with_addresses() {
        let a = address("10.0.0.1", 24);
        let text = link_addresses_text(&eth0(), &[&a]);
        assert!(text.starts_with("3: eth0@eth1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 state UP\n    inet 10.0.0.1/24 scope global eth0\n"));
        let json = link_addresses_json(&eth0(), &[&a]).to_string();
        assert!(
            json.contains(r#""operstate":"UP","link_type":"ether","addr_info":[{"family":"inet""#),
            "{json}"
        );
    }
}
