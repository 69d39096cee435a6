//! `ip link show` lines: index, name (`@peer` for veth, `@NONE` for a
//! tunnel without a bound device), flags, mtu and operational state, the
//! `link/` line, with `-d` the kind's options and with `-s` the
//! statistics. fibre models no MAC addresses, qdiscs or groups, so those
//! parts of `ip`'s output are left out.

use std::net::IpAddr;

use fibre_dev::stats::{format_ip_s_link_stats, IpLinkStats};
use fibre_fib::{Family, GreSpec, Inheritable, Link, LinkKind};
use serde_json::{json, Map, Value};

/// `IFF_*` flag words in `ip`'s order.
pub fn link_flags(link: &Link) -> Vec<&'static str> {
    let mut flags = Vec::new();
    let loopback = link.kind == LinkKind::Loopback;
    if link.up && !link.carrier && !loopback {
        flags.push("NO-CARRIER");
    }
    match &link.kind {
        LinkKind::Loopback => flags.push("LOOPBACK"),
        LinkKind::Veth { .. } => flags.extend(["BROADCAST", "MULTICAST"]),
        LinkKind::Dummy | LinkKind::Ifb => flags.extend(["BROADCAST", "NOARP"]),
        // The tap kinds are Ethernet devices (ether_setup); the others
        // are NOARP, and POINTOPOINT once bound to a remote (gre) or able
        // to send and receive (ip6gre with local).
        LinkKind::Gre(spec) if spec.kind.is_tap() => flags.extend(["BROADCAST", "MULTICAST"]),
        LinkKind::Gre(spec) if spec.is_point_to_point() => flags.extend(["POINTOPOINT", "NOARP"]),
        LinkKind::Gre(_) => flags.push("NOARP"),
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

/// `ll_type_n2a` of the device type: `ARPHRD_IPGRE` is `gre`,
/// `ARPHRD_IP6GRE` `gre6`, the tap kinds are Ethernet.
fn link_type(link: &Link) -> &'static str {
    match &link.kind {
        LinkKind::Loopback => "loopback",
        LinkKind::Gre(spec) if !spec.kind.is_tap() => match spec.kind.family() {
            Family::V4 => "gre",
            Family::V6 => "gre6",
        },
        _ => "ether",
    }
}

/// A GRE device's link-layer addresses, as the kernel sets them: the
/// address is `local` (0.0.0.0 or :: without one), the broadcast address
/// `remote`, which iproute2 calls `peer` on a point-to-point device.
/// `None` for the tap kinds, whose addresses are MACs (not modelled).
fn tunnel_addresses(link: &Link) -> Option<(IpAddr, bool, IpAddr)> {
    match &link.kind {
        LinkKind::Gre(spec) if !spec.kind.is_tap() => Some((
            spec.local
                .unwrap_or_else(|| spec.kind.family().unspecified()),
            spec.is_point_to_point(),
            spec.remote,
        )),
        _ => None,
    }
}

/// `N: NAME[@PEER]: <FLAGS> mtu M state S` (no newline).
pub fn link_header(link: &Link) -> String {
    let name = match &link.kind {
        LinkKind::Veth { peer } => format!("{}@{peer}", link.name),
        // IFLA_LINK is the tunnel's bound device, 0 here: `@NONE`.
        LinkKind::Gre(_) => format!("{}@NONE", link.name),
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

/// What `link show` adds to each link: `-d`'s kind options and `-s`'s
/// statistics (taken from the link's device).
#[derive(Debug, Clone, Copy, Default)]
pub struct LinkExtras<'a> {
    /// `-d`/`--details`: the kind and its options.
    pub details: bool,
    /// `-s`/`--stats`: the device's counters.
    pub stats: Option<&'a IpLinkStats>,
}

/// One link as `fibre link show` prints it.
pub fn link_text(link: &Link, extras: LinkExtras<'_>) -> String {
    let mut text = format!("{}\n    link/{}", link_header(link), link_type(link));
    if let Some((address, peer, broadcast)) = tunnel_addresses(link) {
        let word = if peer { "peer" } else { "brd" };
        text.push_str(&format!(" {address} {word} {broadcast}"));
    }
    text.push('\n');
    let details = kind_details_text(&link.kind);
    if extras.details && !details.is_empty() {
        text.push_str(&format!("    {details}\n"));
    }
    if let Some(stats) = extras.stats {
        text.push_str(&format_ip_s_link_stats(stats));
    }
    text
}

/// One link as `ip -j link show` prints it (the keys fibre models).
pub fn link_json(link: &Link, extras: LinkExtras<'_>) -> Map<String, Value> {
    let mut obj = Map::new();
    obj.insert("ifindex".into(), json!(link.index));
    match &link.kind {
        LinkKind::Veth { peer } => {
            obj.insert("link".into(), json!(peer));
        }
        LinkKind::Gre(_) => {
            obj.insert("link".into(), Value::Null);
        }
        _ => {}
    }
    obj.insert("ifname".into(), json!(link.name));
    obj.insert("flags".into(), json!(link_flags(link)));
    obj.insert("mtu".into(), json!(link.mtu));
    obj.insert("operstate".into(), json!(operstate(link)));
    obj.insert("link_type".into(), json!(link_type(link)));
    if let Some((address, peer, broadcast)) = tunnel_addresses(link) {
        obj.insert("address".into(), json!(address.to_string()));
        if peer {
            obj.insert("link_pointtopoint".into(), json!(true));
        }
        obj.insert("broadcast".into(), json!(broadcast.to_string()));
    }
    if extras.details {
        obj.insert("linkinfo".into(), kind_details_json(&link.kind));
    }
    if let Some(s) = extras.stats {
        // JSON's `over_errors` is rx_over_errors (a receive ring
        // overrun), not the text's `missed` (rx_missed_errors, which JSON
        // prints only with -s -s); fibre's devices count no overruns.
        obj.insert(
            "stats64".into(),
            json!({
                "rx": {"bytes": s.rx_bytes, "packets": s.rx_packets, "errors": s.rx_errors,
                       "dropped": s.rx_dropped, "over_errors": 0, "multicast": s.rx_mcast},
                "tx": {"bytes": s.tx_bytes, "packets": s.tx_packets, "errors": s.tx_errors,
                       "dropped": s.tx_dropped, "carrier_errors": s.tx_carrier,
                       "collisions": s.tx_collisions},
            }),
        );
    }
    obj
}

/// The kind's name as `ip -d` prints it (`IFLA_INFO_KIND`); lo has none.
fn kind_name(kind: &LinkKind) -> Option<&'static str> {
    match kind {
        LinkKind::Loopback => None,
        LinkKind::Dummy => Some("dummy"),
        LinkKind::Ifb => Some("ifb"),
        LinkKind::Veth { .. } => Some("veth"),
        LinkKind::Gre(spec) => Some(spec.kind.name()),
    }
}

/// A key as iproute2 prints it: the 32 bits as a dotted quad.
fn dotted_key(key: u32) -> String {
    std::net::Ipv4Addr::from(key).to_string()
}

/// The options of a GRE link as `gre_print_opt` (ip/link_gre.c,
/// ip/link_gre6.c) prints them for the attributes fibre models: the
/// kernel reports pmtudisc on, fwmark 0 and no encapsulation for gre, and
/// encaplimit 4 and flowlabel 0 for ip6gre, which print as below.
fn gre_options(spec: &GreSpec) -> Vec<(&'static str, Value, String)> {
    let endpoint = |addr: Option<IpAddr>| addr.map_or("any".to_string(), |a| a.to_string());
    let mut opts = vec![
        (
            "remote",
            json!(spec.remote.to_string()),
            spec.remote.to_string(),
        ),
        ("local", json!(endpoint(spec.local)), endpoint(spec.local)),
    ];
    let ttl = match spec.ttl {
        Inheritable::Inherit => 0,
        Inheritable::Fixed(t) => t,
    };
    let ttl_text = match spec.ttl {
        Inheritable::Inherit => "inherit".to_string(),
        Inheritable::Fixed(t) => t.to_string(),
    };
    match spec.kind.family() {
        Family::V4 => {
            opts.push(("ttl", json!(ttl), format!("ttl {ttl_text}")));
            match spec.tos {
                Inheritable::Fixed(0) => {}
                Inheritable::Inherit => opts.push(("tos", json!("0x1"), "tos inherit".into())),
                Inheritable::Fixed(t) => {
                    opts.push(("tos", json!(format!("{t:#x}")), format!("tos {t:#x}")))
                }
            }
            // The kernel reports pmtudisc on; iproute2 prints it in JSON only.
            opts.push(("pmtudisc", json!(true), String::new()));
        }
        Family::V6 => {
            opts.push(("ttl", json!(ttl), format!("hoplimit {ttl_text}")));
            opts.push(("encap_limit", json!(4), "encaplimit 4".into()));
            match spec.tos {
                Inheritable::Inherit => opts.push((
                    "ip6_tnl_f_use_orig_tclass",
                    json!(true),
                    "tclass inherit".into(),
                )),
                Inheritable::Fixed(t) => opts.push((
                    "tclass",
                    json!(format!("0x{t:02x}")),
                    format!("tclass 0x{t:02x}"),
                )),
            }
            opts.push(("flowlabel", json!("0x00000"), "flowlabel 0x00000".into()));
        }
    }
    for (name, key) in [("ikey", spec.ikey), ("okey", spec.okey)] {
        if let Some(key) = key {
            opts.push((
                name,
                json!(dotted_key(key)),
                format!("{name} {}", dotted_key(key)),
            ));
        }
    }
    for (name, on) in [
        ("iseq", spec.iseq),
        ("oseq", spec.oseq),
        ("icsum", spec.icsum),
        ("ocsum", spec.ocsum),
    ] {
        if on {
            opts.push((name, json!(true), name.to_string()));
        }
    }
    opts
}

/// `ip -d link`'s kind line without its indentation, e.g. `gre remote
/// 198.51.100.2 local 192.0.2.1 ttl inherit`; lo prints none.
fn kind_details_text(kind: &LinkKind) -> String {
    let mut words: Vec<String> = kind_name(kind).map(String::from).into_iter().collect();
    if let LinkKind::Gre(spec) = kind {
        words.extend(
            gre_options(spec)
                .into_iter()
                .filter(|(_, _, text)| !text.is_empty())
                .map(|(name, _, text)| {
                    // `remote X`/`local X`: tnl_print_endpoint writes the name too.
                    if name == "remote" || name == "local" {
                        format!("{name} {text}")
                    } else {
                        text
                    }
                }),
        );
    }
    words.join(" ")
}

/// `ip -j -d link`'s `linkinfo` object.
fn kind_details_json(kind: &LinkKind) -> Value {
    let mut info = Map::new();
    if let Some(name) = kind_name(kind) {
        info.insert("info_kind".into(), json!(name));
    }
    if let LinkKind::Gre(spec) = kind {
        let data: Map<String, Value> = gre_options(spec)
            .into_iter()
            .map(|(name, value, _)| (name.to_string(), value))
            .collect();
        info.insert("info_data".into(), Value::Object(data));
    }
    Value::Object(info)
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
            link_text(&lo, LinkExtras::default()),
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
            serde_json::Value::Object(link_json(&up, LinkExtras::default())).to_string(),
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

    fn tunnel(index: u32, name: &str, line: &str, up: bool) -> Link {
        let words: Vec<String> = line.split_whitespace().map(String::from).collect();
        let commands = fibre_fib::config::parse_words(&words).unwrap();
        let fibre_fib::Command::LinkAdd { kind, .. } = &commands[0] else {
            panic!("{line}")
        };
        let mut l = link(index, name, kind.clone(), up, up);
        l.mtu = 1476;
        l
    }

    #[test]
    fn tunnels_print_as_iproute2_does() {
        let gre = tunnel(
            5,
            "gre1",
            "link add gre1 type gre remote 198.51.100.2 local 192.0.2.1 key 5 csum",
            true,
        );
        assert_eq!(
            link_text(&gre, LinkExtras::default()),
            "5: gre1@NONE: <POINTOPOINT,NOARP,UP,LOWER_UP> mtu 1476 state UNKNOWN\n    link/gre 192.0.2.1 peer 198.51.100.2\n"
        );
        let details = LinkExtras {
            details: true,
            stats: None,
        };
        assert!(link_text(&gre, details).ends_with(
            "\n    gre remote 198.51.100.2 local 192.0.2.1 ttl inherit ikey 0.0.0.5 okey 0.0.0.5 icsum ocsum\n"
        ));
        assert_eq!(
            Value::Object(link_json(&gre, LinkExtras::default())).to_string(),
            r#"{"ifindex":5,"link":null,"ifname":"gre1","flags":["POINTOPOINT","NOARP","UP","LOWER_UP"],"mtu":1476,"operstate":"UNKNOWN","link_type":"gre","address":"192.0.2.1","link_pointtopoint":true,"broadcast":"198.51.100.2"}"#
        );
        let six = tunnel(
            6,
            "g6",
            "link add g6 type ip6gre remote 2001:db8::2 tos inherit ttl 9",
            false,
        );
        assert_eq!(
            link_text(&six, details),
            "6: g6@NONE: <NOARP> mtu 1476 state DOWN\n    link/gre6 :: brd 2001:db8::2\n    ip6gre remote 2001:db8::2 local any hoplimit 9 encaplimit 4 tclass inherit flowlabel 0x00000\n"
        );
        let tap = tunnel(
            7,
            "t0",
            "link add t0 type gretap remote 198.51.100.2 tos 10 seq",
            true,
        );
        assert_eq!(
            link_text(&tap, details),
            "7: t0@NONE: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1476 state UNKNOWN\n    link/ether\n    gretap remote 198.51.100.2 local any ttl inherit tos 0x10 iseq oseq\n"
        );
        let json = Value::Object(link_json(&tap, details)).to_string();
        assert!(json.ends_with(r#""link_type":"ether","linkinfo":{"info_kind":"gretap","info_data":{"remote":"198.51.100.2","local":"any","ttl":0,"tos":"0x10","pmtudisc":true,"iseq":true,"oseq":true}}}"#), "{json}");
    }

    #[test]
    fn stats_follow_the_link_lines() {
        let d = link(2, "d0", LinkKind::Dummy, true, true);
        let stats = IpLinkStats {
            tx_packets: 3,
            tx_bytes: 600,
            rx_missed: 2,
            ..Default::default()
        };
        let extras = LinkExtras {
            details: false,
            stats: Some(&stats),
        };
        // The layout `ip -s link show` gives an ifb (checked in a namespace).
        assert_eq!(
            link_text(&d, extras),
            "2: d0: <BROADCAST,NOARP,UP,LOWER_UP> mtu 1500 state UNKNOWN\n    link/ether\n    RX:  bytes packets errors dropped  missed   mcast           \n             0       0      0       0       2       0 \n    TX:  bytes packets errors dropped carrier collsns           \n           600       3      0       0       0       0 \n"
        );
        let json = Value::Object(link_json(&d, extras)).to_string();
        assert!(json.ends_with(r#""stats64":{"rx":{"bytes":0,"packets":0,"errors":0,"dropped":0,"over_errors":0,"multicast":0},"tx":{"bytes":600,"packets":3,"errors":0,"dropped":0,"carrier_errors":0,"collisions":0}}}"#), "{json}");
    }
}
