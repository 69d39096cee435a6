//! Requests the shared-FIB tests send, built with iproute2's defaults.

use std::net::{IpAddr, Ipv6Addr};

use crate::*;

/// A router with `lo` and the ifb links `d0`, `d1` up, and
/// `2001:db8::1/64` on `d0`, `2001:db8:1::1/64` on `d1`.
pub fn router() -> Fib {
    let mut fib = Fib::new();
    let mut run = |cmd: Command| fib.apply(&cmd).unwrap();
    run(link_set("lo", true));
    for (dev, cidr) in [("d0", "2001:db8::1"), ("d1", "2001:db8:1::1")] {
        run(Command::LinkAdd {
            name: dev.into(),
            kind: LinkKind::Ifb,
            mtu: None,
        });
        run(link_set(dev, true));
        run(Command::Addr {
            op: AddrOp::Add,
            spec: addr_spec(dev, cidr.parse().unwrap(), 64),
        });
    }
    fib
}

pub fn link_set(name: &str, up: bool) -> Command {
    Command::LinkSet {
        name: name.into(),
        up: Some(up),
        mtu: None,
    }
}

pub fn addr_spec(dev: &str, local: IpAddr, prefix_len: u8) -> AddressSpec {
    AddressSpec::new(dev, local, prefix_len)
}

/// `2001:db8:f:N::/64`, the destinations the tests route.
pub fn dst(n: u16) -> Prefix {
    let addr = Ipv6Addr::new(0x2001, 0xdb8, 0xf, n, 0, 0, 0, 0);
    Prefix::new(addr.into(), 64).unwrap()
}

/// An address inside [`dst`]`(n)`.
pub fn inside(n: u16) -> u128 {
    u128::from(Ipv6Addr::new(0x2001, 0xdb8, 0xf, n, 0, 0, 0, 7))
}

/// `ip -6 route OP PREFIX via 2001:db8::G` (G >= 2: not our address).
pub fn route_via(op: RouteOp, prefix: Prefix, gateway: u16) -> Command {
    let gateway = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, gateway);
    Command::Route {
        op,
        spec: RouteSpec {
            mtu_lock: false,
            metrics: Default::default(),
            table: TABLE_MAIN,
            dst: prefix,
            tos: 0,
            kind: RouteType::Unicast,
            protocol: Protocol::BOOT,
            scope: Scope::UNIVERSE,
            metric: None,
            prefsrc: None,
            mtu: None,
            nexthops: vec![NexthopSpec {
                gateway: Some(gateway.into()),
                dev: None,
                weight: 1,
                onlink: false,
            }],
            multipath: false,
        },
    }
}

/// `ip -6 route del PREFIX`.
pub fn route_del(prefix: Prefix) -> Command {
    Command::Route {
        op: RouteOp::Del,
        spec: RouteSpec {
            mtu_lock: false,
            metrics: Default::default(),
            table: TABLE_MAIN,
            dst: prefix,
            tos: 0,
            kind: RouteType::Unspec,
            protocol: Protocol::UNSPEC,
            scope: Scope::NOWHERE,
            metric: None,
            prefsrc: None,
            mtu: None,
            nexthops: Vec::new(),
            multipath: false,
        },
    }
}

/// Everything a FIB shows, for comparing two of them.
pub fn dump(fib: &Fib) -> String {
    let mut out = String::new();
    for family in [Family::V4, Family::V6] {
        out += &format!("{:?}\n", fib.routes(family, None));
        out += &format!("{:?}\n", fib.rules(family));
        out += &format!("{:?}\n", fib.addresses(Some(family)));
    }
    out += &format!("{:?}\n", fib.links().collect::<Vec<_>>());
    out
}

/// Records what a writer tells its listeners.
#[derive(Default)]
pub struct Heard(pub std::sync::Mutex<Vec<FibChange>>);

impl crate::shared::FibListener for Heard {
    fn fib_changed(&self, changes: &[FibChange]) {
        self.0.lock().unwrap().extend_from_slice(changes);
    }
}

/// Every route of every table by destination, to tell which prefixes a
/// change touched.
pub fn routes_by_prefix(fib: &Fib) -> std::collections::BTreeMap<Prefix, Vec<String>> {
    let mut out: std::collections::BTreeMap<Prefix, Vec<String>> = Default::default();
    for family in [Family::V4, Family::V6] {
        for route in fib.routes(family, None) {
            out.entry(route.dst).or_default().push(format!("{route:?}"));
        }
    }
    out
}

/// The (last) command of one `ip -batch` line, None if it does not parse.
pub fn command_line(line: &str) -> Option<Command> {
    let words = crate::config::tokenize(line).ok()?;
    crate::config::parse_words(&words).ok()?.pop()
}

/// A batch report's refusals as (command index, the kernel's message).
pub fn refusals(report: &crate::shared::BatchReport) -> Vec<(usize, String)> {
    report
        .refused
        .iter()
        .map(|r| (r.index, r.error.to_string()))
        .collect()
}

/// Applies `batch` to `fib` command by command, as a plain FIB would, and
/// returns the refusals as (command index, the kernel's message).
pub fn apply_one_by_one(fib: &mut Fib, batch: &[Command]) -> Vec<(usize, String)> {
    batch
        .iter()
        .enumerate()
        .filter_map(|(i, c)| fib.apply(c).err().map(|e| (i, e.to_string())))
        .collect()
}
