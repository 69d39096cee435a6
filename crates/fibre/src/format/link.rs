//! `ip link show` lines: index, name (`@peer` for veth), flags, mtu and
//! operational state. fibre models no MAC addresses, qdiscs or groups, so
//! those parts of `ip`'s output are left out.

use fibre_fib::{Link, LinkKind};
use serde_json::{json, Map, Value};

/// `IFF_*` flag words in `ip`'s order.
pub fn link_flags(link: &Link) -> Vec<&'static str> {
    let mut flags = Vec::new();
    let loopback = link.kind == LinkKind::Loopback;
    if link.up && !link.carrier && !loopback {
        flags.push("NO-CARRIER");
    }
    match link.kind {
        LinkKind::Loopback => flags.push("LOOPBACK"),
        LinkKind::Veth { .. } => flags.extend(["BROADCAST", "MULTICAST"]),
        LinkKind::Dummy | LinkKind::Ifb => flags.extend(["BROADCAST", "NOARP"]),
    }
    if link.up {
        flags.push("UP");
        if link.carrier {
            flags.push("LOWER_UP");
        }
    }
    flags
}

/// The operational state (`IF_OPER_*`) as `ip` names it: devices without
/// a carrier notion (lo, dummy, ifb) are `UNKNOWN` when up.
pub fn operstate(link: &Link) -> &'static str {
    match (&link.kind, link.up, link.carrier) {
        (_, false, _) => "DOWN",
        (LinkKind::Veth { .. }, true, true) => "UP",
        (LinkKind::Veth { .. }, true, false) => "LOWERLAYERDOWN",
        _ => "UNKNOWN",
    }
}

fn link_type(link: &Link) -> &'static str {
    match link.kind {
        LinkKind::Loopback => "loopback",
        _ => "ether",
    }
}

/// `N: NAME[@PEER]: <FLAGS> mtu M state S` (no newline).
pub fn link_header(link: &Link) -> String {
    let name = match &link.kind {
        LinkKind::Veth { peer } => format!("{}@{peer}", link.name),
        _ => link.name.clone(),
    };
    format!(
        "{}: {name}: <{}> mtu {} state {}",
        link.index,
        link_flags(link).join(","),
        link.mtu,
        operstate(link)
    )
}

/// One link as `fibre link show` prints it.
pub fn link_text(link: &Link) -> String {
    format!("{}\n    link/{}\n", link_header(link), link_type(link))
}

/// One link as `ip -j link show` prints it (the keys fibre models).
pub fn link_json(link: &Link) -> Map<String, Value> {
    let mut obj = Map::new();
    obj.insert("ifindex".into(), json!(link.index));
    if let LinkKind::Veth { peer } = &link.kind {
        obj.insert("link".into(), json!(peer));
    }
    obj.insert("ifname".into(), json!(link.name));
    obj.insert("flags".into(), json!(link_flags(link)));
    obj.insert("mtu".into(), json!(link.mtu));
    obj.insert("operstate".into(), json!(operstate(link)));
    obj.insert("link_type".into(), json!(link_type(link)));
    obj
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(index: u32, name: &str, kind: LinkKind, up: bool, carrier: bool) -> Link {
        Link {
            index,
            name: name.into(),
            kind,
            mtu: 1500,
            up,
            carrier,
        }
    }

    #[test]
    fn loopback_up() {
        let mut lo = link(1, "lo", LinkKind::Loopback, true, true);
        lo.mtu = 65536;
        assert_eq!(
            link_text(&lo),
            "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 state UNKNOWN\n    link/loopback\n"
        );
        lo.up = false;
        assert_eq!(link_header(&lo), "1: lo: <LOOPBACK> mtu 65536 state DOWN");
    }

    #[test]
    fn veth_states_match_ip() {
        let peer = LinkKind::Veth {
            peer: "eth1".into(),
        };
        let up = link(3, "eth0", peer.clone(), true, true);
        assert_eq!(
            link_header(&up),
            "3: eth0@eth1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 state UP"
        );
        let no_carrier = link(3, "eth0", peer.clone(), true, false);
        assert_eq!(
            link_header(&no_carrier),
            "3: eth0@eth1: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 state LOWERLAYERDOWN"
        );
        assert_eq!(
            serde_json::Value::Object(link_json(&up)).to_string(),
            r#"{"ifindex":3,"link":"eth1","ifname":"eth0","flags":["BROADCAST","MULTICAST","UP","LOWER_UP"],"mtu":1500,"operstate":"UP","link_type":"ether"}"#
        );
    }

    #[test]
    fn ifb_down_and_dummy_up() {
        let ifb = link(4, "ifb0", LinkKind::Ifb, false, false);
        assert_eq!(
            link_header(&ifb),
            "4: ifb0: <BROADCAST,NOARP> mtu 1500 state DOWN"
        );
        let dummy = link(5, "d0", LinkKind::Dummy, true, true);
        assert_eq!(
            link_header(&dummy),
            "5: d0: <BROADCAST,NOARP,UP,LOWER_UP> mtu 1500 state UNKNOWN"
        );
    }
}
