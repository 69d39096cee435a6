//! Builders for the requests the tests send, with iproute2's defaults.

#![allow(dead_code)]

use std::net::IpAddr;

use fibre_fib::*;

/// A fresh router with `lo` up and the given ifb links up.
pub fn router(links: &[&str]) -> Fib {
    let mut fib = Fib::new();
    set_up(&mut fib, "lo", true);
    for name in links {
        fib.apply(&Command::LinkAdd {
            name: (*name).into(),
            kind: LinkKind::Ifb,
            mtu: None,
        })
        .unwrap();
        set_up(&mut fib, name, true);
    }
    fib
}

pub fn set_up(fib: &mut Fib, name: &str, up: bool) {
    fib.apply(&Command::LinkSet {
        name: name.into(),
        up: Some(up),
        mtu: None,
    })
    .unwrap();
}

pub fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// `A/N` or a bare address (host prefix), host bits cleared.
pub fn prefix(s: &str) -> Prefix {
    if s == "default" {
        return Prefix::default_route(Family::V4);
    }
    match s.split_once('/') {
        Some((a, l)) => Prefix::new(ip(a), l.parse().unwrap()).unwrap(),
        None => Prefix::host(ip(s)),
    }
}

pub fn addr_spec(dev: &str, cidr: &str) -> AddressSpec {
    let (a, l) = cidr.split_once('/').unwrap();
    AddressSpec::new(dev, ip(a), l.parse().unwrap())
}

pub fn addr(fib: &mut Fib, dev: &str, cidr: &str) -> Result<(), KernelError> {
    fib.apply(&Command::Addr {
        op: AddrOp::Add,
        spec: addr_spec(dev, cidr),
    })
}

/// `ip route add DST` with nothing else: table main, proto boot, unicast,
/// scope universe (the caller sets scope link for dev-only routes, as
/// iproute2 does).
pub fn spec(dst: &str) -> RouteSpec {
    RouteSpec {
        mtu_lock: false,
        metrics: Default::default(),
        table: TABLE_MAIN,
        dst: prefix(dst),
        tos: 0,
        kind: RouteType::Unicast,
        protocol: Protocol::BOOT,
        scope: Scope::UNIVERSE,
        metric: None,
        prefsrc: None,
        mtu: None,
        nexthops: vec![],
        multipath: false,
    }
}

pub fn hop(gw: Option<&str>, dev: Option<&str>) -> NexthopSpec {
    NexthopSpec {
        gateway: gw.map(ip),
        dev: dev.map(String::from),
        weight: 1,
        onlink: false,
    }
}

/// `DST via GW [dev DEV]`.
pub fn via(dst: &str, gw: &str, dev: Option<&str>) -> RouteSpec {
    RouteSpec {
        nexthops: vec![hop(Some(gw), dev)],
        ..spec(dst)
    }
}

/// `DST dev DEV` (iproute2 picks scope link for IPv4).
pub fn on(dst: &str, dev: &str) -> RouteSpec {
    let scope = if prefix(dst).family() == Family::V4 {
        Scope::LINK
    } else {
        Scope::UNIVERSE
    };
    RouteSpec {
        scope,
        nexthops: vec![hop(None, Some(dev))],
        ..spec(dst)
    }
}

/// `TYPE DST` for a type without paths, with iproute2's table and scope.
pub fn typed(kind: RouteType, dst: &str) -> RouteSpec {
    RouteSpec { kind, ..spec(dst) }
}

pub fn route(fib: &mut Fib, op: RouteOp, spec: RouteSpec) -> Result<(), KernelError> {
    fib.apply(&Command::Route { op, spec })
}

pub fn add(fib: &mut Fib, spec: RouteSpec) {
    route(fib, RouteOp::Add, spec).unwrap();
}

pub fn rule_spec(family: Family, action: RuleAction) -> RuleSpec {
    RuleSpec {
        action: Some(action),
        ..RuleSpec::new(family)
    }
}

pub fn rule(fib: &mut Fib, spec: RuleSpec) -> Result<(), KernelError> {
    fib.apply(&Command::Rule {
        op: RuleOp::Add,
        spec,
    })
}

/// `ip route get DST` as `kind dev [via gw] table` or the error text.
pub fn get(fib: &Fib, req: RouteGetRequest) -> String {
    match fib.route_get(&req) {
        Ok(a) => {
            let mut s = format!("{} dev {}", a.kind.name(), a.dev.unwrap_or_default());
            if let Some(g) = a.gateway {
                s += &format!(" via {g}");
            }
            s += &format!(" table {}", table_name(a.table));
            s
        }
        Err(e) => e.to_string(),
    }
}

pub fn get_to(fib: &Fib, dst: &str) -> String {
    get(fib, RouteGetRequest::to(ip(dst)))
}

/// The routes of a table as `ip route show` would list their key fields.
pub fn show(fib: &Fib, family: Family, table: TableId) -> Vec<String> {
    fib.routes(family, Some(table))
        .iter()
        .map(|r| {
            let mut s = format!("{} {}", r.kind.name(), r.dst);
            for nh in &r.nexthops {
                if let Some(g) = nh.gateway {
                    s += &format!(" via {g}");
                }
                if let Some(d) = nh.dev {
                    s += &format!(
                        " dev {}",
                        fib.link(d).map(|l| l.name.clone()).unwrap_or_default()
                    );
                }
            }
            s += &format!(
                " proto {} scope {} metric {}",
                r.protocol.name(),
                r.scope.name(),
                r.metric
            );
            if let Some(p) = r.prefsrc {
                s += &format!(" src {p}");
            }
            s
        })
        .collect()
}
