//! The route cache's per-family types, over [`fibre_base::IpFamily`]: the
//! FIB's flow key and answer of each family and the FIB calls that make
//! them, so that the cache's output, input and nexthop code is written once
//! for IPv4 and IPv6 (as netstack3 writes its stack over `I: Ip`).
//!
//! What stays per family is where the kernel differs: the source address
//! a received packet is checked with ([`CacheFamily::received_source`]),
//! IPv6's source choice per destination (`RouteCache::source_v6`), ICMP
//! redirects (`RouteCache::redirect_v4`) and the PMTU floors
//! (`exceptions::clamp_pmtu`).

use std::fmt::Debug;

use fibre_base::{IpFamily, Ipv4, Ipv6};
use fibre_fib::{Errno, Fib, FlowKeyV4, FlowKeyV6, Forward, Forward6, RouteType, TableId};

use crate::source::NexthopKey;

/// What the cache reads of a flow key, whatever its family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowFields<I: IpFamily> {
    /// Destination.
    pub dst: I::Addr,
    /// Source; `None` when unset (0 in the key).
    pub src: Option<I::Addr>,
    /// Required output interface (0: any).
    pub oif: u32,
    /// Firewall mark.
    pub mark: u32,
    /// TOS byte (IPv4) or traffic class (IPv6).
    pub tos: u8,
    /// L4 protocol.
    pub proto: u8,
    /// L4 source port.
    pub sport: u16,
    /// L4 destination port.
    pub dport: u16,
}

/// What the cache reads of a lookup's answer, whatever its family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForwardFields<I: IpFamily> {
    /// Gateway; `None` when the destination is on link.
    pub gateway: Option<I::Addr>,
    /// Output device (1, `lo`, for local delivery).
    pub dev: u32,
    /// Table of the matched route.
    pub table: TableId,
    /// Route type.
    pub kind: RouteType,
    /// The matched route's cache class.
    pub cache_class: u16,
}

/// An IP family as the route cache uses it: [`IpFamily`] plus the FIB's
/// flow key and answer types of that family, and the FIB's data-path
/// lookups that take and give them.
///
/// ```
/// use fibre_base::{Ipv4, Ipv6};
/// use fibre_route::family::CacheFamily;
/// let key = Ipv4::flow_key("192.0.2.1".parse().unwrap(), None);
/// assert_eq!((key.dst, key.src), (0xc000_0201, 0));
/// let key = Ipv6::flow_key("2001:db8::1".parse().unwrap(), Some("2001:db8::2".parse().unwrap()));
/// assert_eq!(Ipv6::flow(&key).src, Some("2001:db8::2".parse().unwrap()));
/// ```
pub trait CacheFamily: IpFamily<Bits: Into<u128>> {
    /// The FIB's flow key ([`FlowKeyV4`], [`FlowKeyV6`]).
    type FlowKey: Copy + Default + Debug + PartialEq + Send + Sync + 'static;
    /// The FIB's data-path answer ([`Forward`], [`Forward6`]).
    type Forward: Copy + Debug + PartialEq + Send + Sync + 'static;

    /// The flow from `src` (when given) to `dst`, all else unset: what a
    /// tunnel's underlay or an ICMP report resolves.
    fn flow_key(dst: Self::Addr, src: Option<Self::Addr>) -> Self::FlowKey;
    /// The fields of `key`.
    fn flow(key: &Self::FlowKey) -> FlowFields<Self>;
    /// The fields of `fwd`.
    fn forward(fwd: &Self::Forward) -> ForwardFields<Self>;
    /// The nexthop `fwd` names ([`NexthopKey::of`]), read from its fields
    /// straight (per packet: no [`ForwardFields`] made on the way).
    fn nexthop(fwd: &Self::Forward) -> NexthopKey;
    /// The FIB's output lookup ([`Fib::lookup_output_v4`],
    /// [`Fib::lookup_output_v6`]).
    fn lookup_output(fib: &Fib, key: &Self::FlowKey) -> Result<Self::Forward, Errno>;
    /// The FIB's input lookup of one packet received on `iif`
    /// ([`Fib::lookup_input_batch_v4`], [`Fib::lookup_input_batch_v6`]).
    fn lookup_input(fib: &Fib, iif: u32, key: &Self::FlowKey) -> Result<Self::Forward, Errno>;
    /// [`CacheFamily::lookup_output`] of each of `keys` into `out`, as the
    /// FIB's burst (`Fib::lookup_output_burst_v4`/`_v6`: the same answers,
    /// resolved together; no allocation). Slices of one length.
    fn lookup_output_burst(
        fib: &Fib,
        keys: &[Self::FlowKey],
        out: &mut [Result<Self::Forward, Errno>],
    );
    /// [`CacheFamily::lookup_input`] of each of `keys` into `out`, as the
    /// FIB's burst (`Fib::lookup_input_burst_v4`/`_v6`). Slices of one
    /// length.
    fn lookup_input_burst(
        fib: &Fib,
        iif: u32,
        keys: &[Self::FlowKey],
        out: &mut [Result<Self::Forward, Errno>],
    );
    /// The source `ip route get ... iif DEV` is asked with for a received
    /// packet of `key`. Per family, as the kernel's checks differ: IPv4's
    /// `ip_route_input_slow` judges a zero source itself (a martian, but
    /// for a broadcast to 255.255.255.255, DHCP's), so 0.0.0.0 is passed
    /// on; IPv6's `ip6_route_input` takes `::` as no source at all (a DAD
    /// probe's, RFC 4862), so it is left out.
    fn received_source(key: &Self::FlowKey) -> Option<Self::Addr>;
}

/// Implements [`CacheFamily`] for a family whose FIB types have the same
/// field names (they do: the FIB keeps one record per family, `u32` or
/// `u128` addresses), with the one per-family rule given apart.
macro_rules! cache_family {
    (
        $family:ty, $key:ident, $forward:ident, $output:ident, $input:ident,
        $output_burst:ident, $input_burst:ident,
        received_source: |$k:ident| $received:expr
    ) => {
        impl CacheFamily for $family {
            type FlowKey = $key;
            type Forward = $forward;

            #[inline]
            fn flow_key(dst: Self::Addr, src: Option<Self::Addr>) -> $key {
                $key {
                    dst: Self::to_bits(dst),
                    src: src.map_or(0, Self::to_bits),
                    ..Default::default()
                }
            }

            #[inline]
            fn flow(key: &$key) -> FlowFields<Self> {
                FlowFields {
                    dst: Self::from_bits(key.dst),
                    src: (key.src != 0).then(|| Self::from_bits(key.src)),
                    oif: key.oif,
                    mark: key.mark,
                    tos: key.tos,
                    proto: key.proto,
                    sport: key.sport,
                    dport: key.dport,
                }
            }

            #[inline]
            fn forward(fwd: &$forward) -> ForwardFields<Self> {
                ForwardFields {
                    gateway: (fwd.gateway != 0).then(|| Self::from_bits(fwd.gateway)),
                    dev: fwd.dev,
                    table: fwd.table,
                    kind: fwd.kind,
                    cache_class: fwd.cache_class,
                }
            }

            #[inline]
            fn nexthop(fwd: &$forward) -> NexthopKey {
                NexthopKey {
                    family: Self::VERSION,
                    table: fwd.table,
                    dev: fwd.dev,
                    gateway: fwd.gateway.into(),
                    class: fwd.cache_class,
                    kind: fwd.kind,
                }
            }

            #[inline]
            fn lookup_output(fib: &Fib, key: &$key) -> Result<$forward, Errno> {
                fib.$output(key)
            }

            #[inline]
            fn lookup_input(fib: &Fib, iif: u32, key: &$key) -> Result<$forward, Errno> {
                let mut out = [Err(Errno::Inval)];
                fib.$input(iif, std::slice::from_ref(key), &mut out);
                out[0]
            }

            #[inline]
            fn lookup_output_burst(fib: &Fib, keys: &[$key], out: &mut [Result<$forward, Errno>]) {
                fib.$output_burst(keys, out)
            }

            #[inline]
            fn lookup_input_burst(
                fib: &Fib,
                iif: u32,
                keys: &[$key],
                out: &mut [Result<$forward, Errno>],
            ) {
                fib.$input_burst(iif, keys, out)
            }

            #[inline]
            fn received_source($k: &$key) -> Option<Self::Addr> {
                $received
            }
        }
    };
}

cache_family!(
    Ipv4, FlowKeyV4, Forward, lookup_output_v4, lookup_input_batch_v4,
    lookup_output_burst_v4, lookup_input_burst_v4,
    received_source: |key| Some(Ipv4::from_bits(key.src))
);
cache_family!(
    Ipv6, FlowKeyV6, Forward6, lookup_output_v6, lookup_input_batch_v6,
    lookup_output_burst_v6, lookup_input_burst_v6,
    received_source: |key| (key.src != 0).then(|| Ipv6::from_bits(key.src))
);
