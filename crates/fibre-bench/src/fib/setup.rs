//! The router the FIB experiment looks up in, per family: the RIS table in
//! table main behind an uplink, the keys, wg-quick's rules, and the
//! per-key and burst lookups as one call.

use std::fmt::Debug;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use fibre_base::IpFamily;
use fibre_fib::{
    config, Errno, Fib, FlowKeyV4, FlowKeyV6, Forward, Forward6, LinkIndex, NexthopSpec, Prefix,
};

use crate::data;
use crate::family::Family;
use crate::nexthop::{next_hop_for, splitmix64, NextHop};
use crate::router::{fib_error, import_routes};
use crate::BenchError;

use super::Mode;

pub use crate::router::UPLINK;
/// wg-quick's firewall mark: its own (encrypted) packets carry it.
pub const WG_MARK: u32 = 0xca6c;
/// wg-quick's table.
pub const WG_TABLE: u32 = 51820;
/// UDP, and the port the keys go to.
const IPPROTO_UDP: u8 = 17;
const PORT: u16 = 443;

/// Which data-path lookup is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Locally generated traffic (`ip route get DST mark M`).
    Output,
    /// Packets received on this link (`ip route get DST from SRC iif DEV`).
    Input(LinkIndex),
}

/// What the experiment needs of a family's FIB API.
pub trait FibFamily: Family {
    /// The flow key ([`FlowKeyV4`], [`FlowKeyV6`]).
    type FlowKey: Copy + Send + Sync + Debug;
    /// The answer ([`Forward`], [`Forward6`]).
    type Answer: Copy + Send + PartialEq + Debug;
    /// The uplink's address and prefix length (the gateways' subnet).
    const UPLINK_ADDRESS: (&'static str, u8);
    /// The address as the FIB takes it.
    fn ip(addr: Self) -> IpAddr {
        Self::Ip::from_bits(addr).into()
    }
    /// The gateway of next-hop id `hop`, inside the uplink's subnet.
    fn gateway(hop: NextHop) -> IpAddr;
    /// A key to `dst` from `src` with firewall mark `mark`.
    fn key(dst: Self, src: Self, mark: u32, sport: u16) -> Self::FlowKey;
    /// The lookups of `keys` into `out`, per key or as one burst.
    fn lookup(
        fib: &Fib,
        form: Form,
        mode: Mode,
        keys: &[Self::FlowKey],
        out: &mut [Result<Self::Answer, Errno>],
    );
}

/// Implements [`FibFamily`] for a family whose FIB types have the same
/// field names and whose lookups the same names but for the family's
/// suffix (they do: the FIB keeps one record per family), with the
/// family's own addresses given apart.
macro_rules! fib_family {
    (
        $bits:ty, $key:ident, $answer:ident,
        lookups: $output_batch:ident, $output_burst:ident, $input_batch:ident, $input_burst:ident,
        $($addresses:tt)*
    ) => {
        impl FibFamily for $bits {
            type FlowKey = $key;
            type Answer = $answer;
            $($addresses)*
            fn key(dst: $bits, src: $bits, mark: u32, sport: u16) -> $key {
                $key {
                    dst,
                    src,
                    mark,
                    proto: IPPROTO_UDP,
                    sport,
                    dport: PORT,
                    ..Default::default()
                }
            }
            fn lookup(
                fib: &Fib,
                form: Form,
                mode: Mode,
                keys: &[$key],
                out: &mut [Result<$answer, Errno>],
            ) {
                match (form, mode) {
                    (Form::Output, Mode::PerKey) => fib.$output_batch(keys, out),
                    (Form::Output, Mode::Burst) => fib.$output_burst(keys, out),
                    (Form::Input(iif), Mode::PerKey) => fib.$input_batch(iif, keys, out),
                    (Form::Input(iif), Mode::Burst) => fib.$input_burst(iif, keys, out),
                }
            }
        }
    };
}

fib_family! {
    u32, FlowKeyV4, Forward,
    lookups: lookup_output_batch_v4, lookup_output_burst_v4, lookup_input_batch_v4, lookup_input_burst_v4,
    // Benchmarking space (RFC 2544), in no RIS prefix.
    const UPLINK_ADDRESS: (&'static str, u8) = ("198.18.0.1", 15);
    fn gateway(hop: NextHop) -> IpAddr {
        IpAddr::V4(Ipv4Addr::from(0xc612_0002 + u32::from(hop)))
    }
}

fib_family! {
    u128, FlowKeyV6, Forward6,
    lookups: lookup_output_batch_v6, lookup_output_burst_v6, lookup_input_batch_v6, lookup_input_burst_v6,
    const UPLINK_ADDRESS: (&'static str, u8) = ("2001:db8:ffff::1", 64);
    fn gateway(hop: NextHop) -> IpAddr {
        IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0xffff, 0, 0, 0, 0, hop + 2))
    }
}

/// Applies `text` (`ip -batch` lines) to `fib`, in place.
fn apply(fib: &mut Fib, text: &str) -> Result<(), BenchError> {
    let parsed = config::parse_str("fib-bench.conf", text);
    if let Some(d) = parsed.diagnostics.first() {
        return Err(fib_error(d.line, &d.message));
    }
    for s in &parsed.statements {
        fib.apply(&s.command).map_err(|e| fib_error(s.line, e))?;
    }
    Ok(())
}

/// `lo` and the uplink up, the uplink's address, and every prefix of
/// `table` in table main via the gateway [`next_hop_for`] gives it.
/// Returns the FIB and the uplink's index.
pub fn router<K: FibFamily>(
    table: &[data::Prefix<K>],
    gateways: NextHop,
) -> Result<(Fib, LinkIndex), BenchError> {
    let mut fib = Fib::new();
    let (address, len) = K::UPLINK_ADDRESS;
    apply(
        &mut fib,
        &format!(
            "link set lo up\nlink add {UPLINK} type ifb\nlink set {UPLINK} up\n\
             addr add {address}/{len} dev {UPLINK}\n"
        ),
    )?;
    let routes = table
        .iter()
        .map(|p| {
            let prefix = Prefix::new(K::ip(p.addr), p.len).map_err(|e| fib_error(p, e))?;
            let path = NexthopSpec {
                gateway: Some(K::gateway(next_hop_for(p.addr, p.len, gateways))),
                dev: Some(UPLINK.into()),
                weight: 1,
                onlink: false,
            };
            Ok((prefix, path))
        })
        .collect::<Result<Vec<_>, BenchError>>()?;
    import_routes(fib, routes)
}

/// wg-quick's policy routing (`wg-quick up` with `AllowedIPs` the default
/// route): its tunnel link, `not fwmark 0xca6c table 51820` and `table
/// main suppress_prefixlength 0` (which the kernel then orders first:
/// each rule added without a priority goes just before the last one
/// added), and the default route into the tunnel in table 51820.
pub fn add_wg_quick_rules<K: FibFamily>(fib: &mut Fib) -> Result<(), BenchError> {
    // `ip rule` takes IPv4 unless told `-6`.
    let six = if K::Ip::VERSION == 6 { "-6 " } else { "" };
    let default = format!("{}/0", K::Ip::UNSPECIFIED);
    apply(
        fib,
        &format!(
            "link add wg0 type ifb\nlink set wg0 up\n\
             route add {default} dev wg0 table {WG_TABLE}\n\
             {six}rule add not fwmark {WG_MARK:#x} table {WG_TABLE}\n\
             {six}rule add table main suppress_prefixlength 0\n"
        ),
    )
}

/// One key per destination of `dsts`, from the same position of `srcs`;
/// half of them (seeded) carry wg-quick's mark, each its own source port.
pub fn keys<K: FibFamily>(dsts: &[K], srcs: &[K], seed: u64) -> Vec<K::FlowKey> {
    dsts.iter()
        .zip(srcs)
        .enumerate()
        .map(|(i, (&dst, &src))| {
            let random = splitmix64(seed ^ i as u64);
            let mark = if random & 1 == 0 { WG_MARK } else { 0 };
            K::key(dst, src, mark, 1024 + (random >> 1) as u16 % 60_000)
        })
        .collect()
}
