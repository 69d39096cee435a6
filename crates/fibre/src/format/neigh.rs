//! `ip neigh show` lines (`print_neigh`, ip/ipneigh.c): each word followed
//! by a blank (`10.0.0.2 dev d0 lladdr 02:00:00:00:00:02 PERMANENT `), the
//! device left out when the listing is of one device; JSON with `dst`,
//! `dev`, `lladdr`, `router` (null) and `state` (an array) in that order,
//! `state` absent for NUD_NONE.

use fibre_neigh::NeighView;
use serde_json::{Map, Value};

use super::DeviceNames;

/// A MAC as `ll_addr_n2a` prints it.
pub fn mac_text(mac: [u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// One entry's line; `show_dev`: the listing is not of one device.
///
/// ```ignore
/// 10.0.0.3 dev v0 lladdr 02:00:00:00:00:03 router STALE
/// ```
pub fn neigh_text(names: &dyn DeviceNames, entry: &NeighView, show_dev: bool) -> String {
    let mut words = vec![entry.addr.to_string()];
    if show_dev {
        words.push("dev".into());
        words.push(names.dev_name(entry.link));
    }
    if let Some(mac) = entry.lladdr {
        words.push("lladdr".into());
        words.push(mac_text(mac));
    }
    if entry.router {
        words.push("router".into());
    }
    let state = entry.state.name();
    if !state.is_empty() {
        words.push(state.into());
    }
    let mut line = String::new();
    for word in words {
        line.push_str(&word);
        line.push(' ');
    }
    line.push('\n');
    line
}

/// One entry as `ip -j neigh show` prints it.
pub fn neigh_json(names: &dyn DeviceNames, entry: &NeighView, show_dev: bool) -> Value {
    let mut object = Map::new();
    object.insert("dst".into(), Value::String(entry.addr.to_string()));
    if show_dev {
        object.insert("dev".into(), Value::String(names.dev_name(entry.link)));
    }
    if let Some(mac) = entry.lladdr {
        object.insert("lladdr".into(), Value::String(mac_text(mac)));
    }
    if entry.router {
        object.insert("router".into(), Value::Null);
    }
    let state = entry.state.name();
    if !state.is_empty() {
        object.insert(
            "state".into(),
            Value::Array(vec![Value::String(state.into())]),
        );
    }
    Value::Object(object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::NameList;
    use fibre_fib::NudState;

    fn entry(addr: &str, state: NudState, lladdr: Option<[u8; 6]>, router: bool) -> NeighView {
        NeighView {
            link: 1,
            addr: addr.parse().unwrap(),
            state,
            lladdr,
            router,
        }
    }

    #[test]
    fn lines_as_ip_prints_them() {
        // ip 6.1 on a 6.18 kernel (`ip neigh show nud all | cat -A`).
        let names = NameList(vec!["v0"]);
        let mac = Some([2, 0, 0, 0, 0, 3]);
        assert_eq!(
            neigh_text(&names, &entry("10.0.0.3", NudState::Stale, mac, true), true),
            "10.0.0.3 dev v0 lladdr 02:00:00:00:00:03 router STALE \n"
        );
        assert_eq!(
            neigh_text(
                &names,
                &entry("10.0.0.8", NudState::Failed, None, false),
                true
            ),
            "10.0.0.8 dev v0 FAILED \n"
        );
        assert_eq!(
            neigh_text(
                &names,
                &entry("10.0.0.10", NudState::None, None, false),
                false
            ),
            "10.0.0.10 \n"
        );
        assert_eq!(
            neigh_json(&names, &entry("10.0.0.3", NudState::Stale, mac, true), true).to_string(),
            r#"{"dst":"10.0.0.3","dev":"v0","lladdr":"02:00:00:00:00:03","router":null,"state":["STALE"]}"#
        );
        assert_eq!(
            neigh_json(
                &names,
                &entry("10.0.0.10", NudState::None, None, false),
                false
            )
            .to_string(),
            r#"{"dst":"10.0.0.10"}"#
        );
    }
}
