//! The router under the flood: the RIS IPv6 table in a [`Fib`], the
//! server's address, the SYN packets' flow keys, and the day of updates as
//! route commands.

use std::net::{IpAddr, Ipv6Addr};

use fibre_fib::{
    AddrOp, AddressSpec, Command, Fib, FlowKeyV6, LinkIndex, LinkKind, NexthopSpec, Prefix,
    Protocol, RouteOp, RouteSpec, RouteType, Scope, TABLE_MAIN,
};

use crate::data::{self, Update};
use crate::nexthop::{next_hop_for, NextHop};
use crate::router::{fib_error, import_routes};
use crate::BenchError;

pub use crate::router::UPLINK;
/// The link holding the server's address.
pub const SERVER_LINK: &str = "srv0";
/// The server's address (documentation range, in no RIS prefix).
pub const SERVER: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0x5e, 0, 0, 0, 0, 0x80);
/// TCP.
const IPPROTO_TCP: u8 = 6;
/// The port the server listens on.
const SERVER_PORT: u16 = 80;

/// The gateway of next-hop id `hop`: `2001:db8:ffff::<hop + 2>` on the uplink.
pub fn gateway(hop: NextHop) -> Ipv6Addr {
    Ipv6Addr::new(0x2001, 0xdb8, 0xffff, 0, 0, 0, 0, hop + 2)
}

fn to_fib_prefix(p: &data::Prefix<u128>) -> Result<Prefix, BenchError> {
    Prefix::new(IpAddr::V6(Ipv6Addr::from(p.addr)), p.len).map_err(|e| fib_error(p, e))
}

fn via(hop: NextHop) -> NexthopSpec {
    NexthopSpec {
        gateway: Some(IpAddr::V6(gateway(hop))),
        dev: Some(UPLINK.into()),
        weight: 1,
        onlink: false,
    }
}

fn address(dev: &str, local: Ipv6Addr, prefix_len: u8) -> Command {
    Command::Addr {
        op: AddrOp::Add,
        spec: AddressSpec::new(dev, IpAddr::V6(local), prefix_len),
    }
}

/// The router: `lo`, the uplink (`2001:db8:ffff::1/64`, the gateways'
/// subnet) and the server link with [`SERVER`], all up, and every prefix
/// of `table` in table main via the gateway [`next_hop_for`] gives it (as
/// the lookup benchmark assigns them). Returns the FIB and the uplink's
/// index.
pub fn router(
    table: &[data::Prefix<u128>],
    gateways: NextHop,
) -> Result<(Fib, LinkIndex), BenchError> {
    let mut fib = Fib::new();
    let mut commands = vec![Command::LinkSet {
        name: "lo".into(),
        up: Some(true),
        mtu: None,
    }];
    for name in [UPLINK, SERVER_LINK] {
        commands.push(Command::LinkAdd {
            name: name.into(),
            kind: LinkKind::Ifb,
            mtu: None,
        });
        commands.push(Command::LinkSet {
            name: name.into(),
            up: Some(true),
            mtu: None,
        });
    }
    commands.push(address(
        UPLINK,
        Ipv6Addr::new(0x2001, 0xdb8, 0xffff, 0, 0, 0, 0, 1),
        64,
    ));
    commands.push(address(SERVER_LINK, SERVER, 64));
    for command in &commands {
        fib.apply(command)
            .map_err(|e| fib_error(format!("{command:?}"), e))?;
    }
    let routes = table
        .iter()
        .map(|p| {
            Ok((
                to_fib_prefix(p)?,
                via(next_hop_for(p.addr, p.len, gateways)),
            ))
        })
        .collect::<Result<Vec<_>, BenchError>>()?;
    import_routes(fib, routes)
}

/// The day's updates as commands: `A PREFIX` is `ip -6 route replace
/// PREFIX via GW dev wan0`, GW the gateway after the one the table gave the
/// prefix (so a replace changes the next hop); `W PREFIX` is
/// `ip -6 route del PREFIX`.
pub fn update_commands(
    updates: &[Update<u128>],
    gateways: NextHop,
) -> Result<Vec<Command>, BenchError> {
    updates
        .iter()
        .map(|update| {
            let (op, p) = match update {
                Update::Announce(p) => (RouteOp::Replace, p),
                Update::Withdraw(p) => (RouteOp::Del, p),
            };
            let dst = to_fib_prefix(p)?;
            let nexthops = if op == RouteOp::Del {
                Vec::new()
            } else {
                let hop = (next_hop_for(p.addr, p.len, gateways) + 1) % gateways.max(1);
                vec![via(hop)]
            };
            let deleting = op == RouteOp::Del;
            Ok(Command::Route {
                op,
                spec: RouteSpec {
                    mtu_lock: false,
                    metrics: Default::default(),
                    table: TABLE_MAIN,
                    dst,
                    tos: 0,
                    kind: if deleting {
                        RouteType::Unspec
                    } else {
                        RouteType::Unicast
                    },
                    protocol: if deleting {
                        Protocol::UNSPEC
                    } else {
                        Protocol::BOOT
                    },
                    scope: if deleting {
                        Scope::NOWHERE
                    } else {
                        Scope::UNIVERSE
                    },
                    metric: None,
                    prefsrc: None,
                    mtu: None,
                    nexthops,
                    multipath: false,
                },
            })
        })
        .collect()
}

/// The two lookups one SYN costs: the input lookup of the SYN (from the
/// source to the server, received on the uplink) and the output lookup of
/// the SYN-ACK back to the source.
#[derive(Debug, Clone, Copy)]
pub struct Syn {
    /// The received SYN.
    pub input: FlowKeyV6,
    /// The SYN-ACK.
    pub reply: FlowKeyV6,
}

/// SYNs from `sources` (each a random client port) to the server.
pub fn syns(sources: &[u128], seed: u64) -> Vec<Syn> {
    let server = u128::from(SERVER);
    sources
        .iter()
        .enumerate()
        .map(|(i, &source)| {
            let port = 1024 + (crate::nexthop::splitmix64(seed ^ i as u64) % 60_000) as u16;
            let input = FlowKeyV6 {
                dst: server,
                src: source,
                proto: IPPROTO_TCP,
                sport: port,
                dport: SERVER_PORT,
                ..FlowKeyV6::default()
            };
            let reply = FlowKeyV6 {
                dst: source,
                src: server,
                proto: IPPROTO_TCP,
                sport: SERVER_PORT,
                dport: port,
                ..FlowKeyV6::default()
            };
            Syn { input, reply }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use fibre_fib::{Errno, RouteType};

    use super::*;

    fn table() -> Vec<data::Prefix<u128>> {
        ["2a00::/12", "2a01:4f8::/32", "2001:db8:1::/48"]
            .iter()
            .map(|t| data::parse_prefix(t).unwrap())
            .collect()
    }

    #[test]
    fn a_syn_is_delivered_locally_and_its_reply_routed_by_the_table() {
        let (fib, uplink) = router(&table(), 16).unwrap();
        let source = u128::from("2a01:4f8::1234".parse::<Ipv6Addr>().unwrap());
        let syn = syns(&[source], 1)[0];
        let mut got = [Err(Errno::Inval)];
        fib.lookup_input_batch_v6(uplink, &[syn.input], &mut got);
        assert_eq!(got[0].unwrap().kind, RouteType::Local);
        let reply = fib.lookup_output_v6(&syn.reply).unwrap();
        let hop = next_hop_for(0x2a01_04f8u128 << 96, 32, 16);
        assert_eq!(reply.gateway, u128::from(gateway(hop)));
        assert_eq!(reply.dev, uplink);
    }

    #[test]
    fn updates_replace_with_another_gateway_and_withdraw() {
        let (mut fib, _) = router(&table(), 16).unwrap();
        let p = data::parse_prefix::<u128>("2a01:4f8::/32").unwrap();
        let commands = update_commands(
            &[
                Update::Announce(p),
                Update::Withdraw(p),
                Update::Withdraw(p),
            ],
            16,
        )
        .unwrap();
        let dst = u128::from("2a01:4f8::1".parse::<Ipv6Addr>().unwrap());
        let key = FlowKeyV6 {
            dst,
            ..FlowKeyV6::default()
        };
        let before = fib.lookup_output_v6(&key).unwrap().gateway;
        fib.apply(&commands[0]).unwrap();
        let after = fib.lookup_output_v6(&key).unwrap().gateway;
        assert_ne!(before, after);
        fib.apply(&commands[1]).unwrap();
        // Falls back to the covering 2a00::/12.
        let fallback = fib.lookup_output_v6(&key).unwrap().gateway;
        let hop = next_hop_for(0x2a00u128 << 112, 12, 16);
        assert_eq!(fallback, u128::from(gateway(hop)));
        let refused = fib.apply(&commands[2]).unwrap_err();
        assert_eq!(refused.to_string(), "RTNETLINK answers: No such process");
    }
}

/// What a synflood run works on, loaded and built once: see [`flood`].
pub struct Flood {
    /// Routes of the RIS table in the FIB.
    pub routes: usize,
    /// The router ([`router`]).
    pub fib: Fib,
    /// The heap `fib` holds, measured as it was built (`None` without the
    /// counting allocator). A clone of it would not tell: clones share the
    /// route arenas and LPM arrays, so one costs only their directories.
    pub fib_bytes: Option<usize>,
    /// The link the SYNs arrive on.
    pub uplink: LinkIndex,
    /// Per packet thread, the SYNs it cycles through.
    pub syns: Vec<Vec<Syn>>,
    /// The day of updates as route commands, for the writer.
    pub commands: Vec<Command>,
}

/// How much of the data a [`flood`] takes, and its randomness.
#[derive(Debug, Clone, Copy)]
pub struct FloodPlan {
    /// Packet threads (at least one SYN list is made).
    pub threads: usize,
    /// Distinct sources per packet thread.
    pub sources_per_thread: usize,
    /// Updates to load (all when None).
    pub update_limit: Option<usize>,
    /// Next-hop ids the prefixes are hashed onto.
    pub gateways: NextHop,
    /// Seed of the sources and SYNs (thread `i` draws from `seed ^ (0x5f1_0000 + i)`).
    pub seed: u64,
}

/// Loads the RIS IPv6 table and updates from `dir` and builds the router,
/// the update commands and each packet thread's SYNs: the experiment and
/// the `synflood_case` example share it.
pub fn flood(
    dir: &std::path::Path,
    plan: &FloodPlan,
    progress: &crate::progress::Progress,
) -> Result<Flood, BenchError> {
    let table = data::load_table::<u128>(&data::table_path::<u128>(dir), progress)?;
    let updates = data::load_updates::<u128>(
        &data::updates_path::<u128>(dir),
        plan.update_limit,
        progress,
    )?;
    let commands = update_commands(&updates, plan.gateways)?;
    let (built, fib_bytes) = crate::alloc_count::measure(|| router(&table, plan.gateways));
    let (fib, uplink) = built?;
    let syns = (0..plan.threads.max(1))
        .map(|i| {
            let seed = plan.seed ^ (0x5f1_0000 + i as u64);
            let sources = crate::queries::inside_prefixes(&table, plan.sources_per_thread, seed);
            syns(&sources, seed)
        })
        .collect();
    Ok(Flood {
        routes: table.len(),
        fib,
        fib_bytes,
        uplink,
        syns,
        commands,
    })
}
