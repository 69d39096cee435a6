//! Output in iproute2's text and JSON (`ip -j`) formats. Each function
//! returns text exactly as `ip` prints it (trailing blanks included) or a
//! JSON value with `ip -j`'s keys in its order.

pub mod addr;
pub mod cache;
pub mod get;
pub mod link;
pub mod neigh;
pub mod route;
pub mod rule;

use std::net::IpAddr;

use fibre_fib::{Family, Fib, LinkIndex, NexthopFlags};

/// Where the formatters find device names (the FIB; a table in tests).
pub trait DeviceNames {
    /// The name `ip` prints for a device index (`if7` when it is gone).
    fn dev_name(&self, index: LinkIndex) -> String;
}

impl DeviceNames for Fib {
    fn dev_name(&self, index: LinkIndex) -> String {
        self.link(index)
            .map(|link| link.name.clone())
            .unwrap_or_else(|| format!("if{index}"))
    }
}

/// Device names for tests: index `i` is `names[i - 1]`.
#[cfg(test)]
pub(crate) struct NameList(pub Vec<&'static str>);

#[cfg(test)]
impl DeviceNames for NameList {
    fn dev_name(&self, index: LinkIndex) -> String {
        self.0
            .get(index as usize - 1)
            .map(|s| s.to_string())
            .unwrap_or_else(|| format!("if{index}"))
    }
}

/// The tests' devices and routes, shared by the formatters' tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use fibre_fib::{Nexthop, NexthopFlags, Prefix, Protocol, Route, RouteType, Scope, TABLE_MAIN};

    use super::NameList;

    /// `lo`, `eth1`, `eth0`: ifindex 1 to 3.
    pub(crate) fn names() -> NameList {
        NameList(vec!["lo", "eth1", "eth0"])
    }

    /// A next hop via `gw` (if any) on `dev`.
    pub(crate) fn path(gw: Option<&str>, dev: Option<u32>, weight: u16) -> Nexthop {
        Nexthop {
            gateway: gw.map(|g| g.parse().unwrap()),
            dev,
            weight,
            flags: NexthopFlags::default(),
        }
    }

    /// A unicast route to `dst` in table main, as `ip route add` makes it
    /// with no other option.
    pub(crate) fn route_to(dst: Prefix, nexthops: Vec<Nexthop>) -> Route {
        Route {
            mtu_lock: false,
            metrics: Default::default(),
            table: TABLE_MAIN,
            dst,
            tos: 0,
            kind: RouteType::Unicast,
            protocol: Protocol::BOOT,
            scope: Scope::UNIVERSE,
            metric: 0,
            prefsrc: None,
            mtu: None,
            nexthops,
            cache_class: 0,
        }
    }
}

/// `ip`'s spelling of an address with a length: the bare address for a
/// host length, `ADDR/LEN` otherwise (never `default`).
pub fn addr_len(addr: IpAddr, len: u8) -> String {
    if len == Family::of(&addr).bits() {
        addr.to_string()
    } else {
        format!("{addr}/{len}")
    }
}

/// A dsfield as `rtnl_dsfield_n2a` prints it: its `rt_dsfield` name
/// (`CS1`), else two hex digits (`0x10`, `0x08`).
pub fn dsfield(tos: u8) -> String {
    fibre_fib::config::dsfield_name(tos)
        .map(str::to_string)
        .unwrap_or_else(|| format!("0x{tos:02x}"))
}

/// The nexthop flag words in `print_rt_flags`' order.
pub fn nexthop_flag_words(flags: &NexthopFlags) -> Vec<&'static str> {
    let mut words = Vec::new();
    if flags.dead {
        words.push("dead");
    }
    if flags.onlink {
        words.push("onlink");
    }
    if flags.linkdown {
        words.push("linkdown");
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_lengths_print_bare() {
        assert_eq!(addr_len("10.0.0.1".parse().unwrap(), 32), "10.0.0.1");
        assert_eq!(addr_len("10.0.0.0".parse().unwrap(), 8), "10.0.0.0/8");
        assert_eq!(addr_len("::".parse().unwrap(), 0), "::/0");
        assert_eq!(dsfield(0x10), "0x10");
        // ip 6.1 with its shipped rt_dsfield: `tos 0x08`, `tos CS1`, `tos EF`.
        assert_eq!(dsfield(0x08), "0x08");
        assert_eq!(dsfield(0x20), "CS1");
        assert_eq!(dsfield(0xb8), "EF");
    }

    #[test]
    fn flags_in_iproute2_order() {
        let flags = NexthopFlags {
            onlink: true,
            dead: true,
            linkdown: true,
        };
        assert_eq!(nexthop_flag_words(&flags), ["dead", "onlink", "linkdown"]);
    }
}
