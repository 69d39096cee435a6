//! A small FIB for the experiments and tests: one device `dummy0`
//! (ifindex 2, MTU 1500) with 10.0.0.1/24, and 198.51.100.0/24 via
//! 10.0.0.2, so every flow to 198.51.100.x shares one nexthop.

use std::net::IpAddr;

use fibre_fib::*;

/// The device's ifindex.
pub const DUMMY_IFINDEX: u32 = 2;
/// The local address on it.
pub const LOCAL_ADDR: [u8; 4] = [10, 0, 0, 1];
/// The gateway of the remote prefix.
pub const GATEWAY: [u8; 4] = [10, 0, 0, 2];

/// Builds the FIB described in the module docs.
///
/// ```
/// let fib = fibre_route::testbed::fib().unwrap();
/// let key = fibre_fib::FlowKeyV4 { dst: u32::from_be_bytes([198, 51, 100, 7]), ..Default::default() };
/// let fwd = fib.lookup_output_v4(&key).unwrap();
/// assert_eq!((fwd.dev, fwd.gateway), (2, u32::from_be_bytes([10, 0, 0, 2])));
/// ```
pub fn fib() -> Result<Fib, KernelError> {
    let mut fib = Fib::new();
    fib.apply(&Command::LinkAdd {
        name: "dummy0".into(),
        kind: LinkKind::Ifb,
        mtu: None,
    })?;
    fib.apply(&Command::LinkSet {
        name: "dummy0".into(),
        up: Some(true),
        mtu: None,
    })?;
    fib.apply(&Command::Addr {
        op: AddrOp::Add,
        spec: AddressSpec::new("dummy0", IpAddr::from(LOCAL_ADDR), 24),
    })?;
    fib.apply(&route_via(
        prefix([198, 51, 100, 0], 24),
        GATEWAY,
        None,
        RouteOp::Add,
    ))?;
    Ok(fib)
}

/// The IPv4 prefix of length `len` containing `addr` (host bits cleared).
pub fn prefix(addr: [u8; 4], len: u8) -> Prefix {
    Prefix::containing(IpAddr::from(addr), len)
}

/// `ip route OP PREFIX via GATEWAY [mtu M]` in the main table.
pub fn route_via(dst: Prefix, gateway: [u8; 4], mtu: Option<u32>, op: RouteOp) -> Command {
    Command::Route {
        op,
        spec: RouteSpec {
            mtu_lock: false,
            metrics: Default::default(),
            table: TABLE_MAIN,
            dst,
            tos: 0,
            kind: RouteType::Unicast,
            protocol: Protocol::BOOT,
            scope: Scope::UNIVERSE,
            metric: None,
            prefsrc: None,
            mtu,
            nexthops: vec![NexthopSpec {
                gateway: Some(IpAddr::from(gateway)),
                dev: None,
                weight: 1,
                onlink: false,
            }],
            multipath: false,
        },
    }
}
