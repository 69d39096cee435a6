//! Requests to the FIB, as iproute2 would send them to the kernel over
//! rtnetlink: iproute2's own defaults (table main, proto boot, scope by
//! type, ...) are already applied by whoever built the request (the config
//! parser, later a netlink socket); [`crate::Fib::apply`] does the kernel's
//! part.

use std::net::{IpAddr, Ipv4Addr};

use crate::types::*;

/// One change to the FIB's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `link add NAME [mtu N] type KIND [peer name P]`.
    LinkAdd {
        /// Name.
        name: String,
        /// Kind (a veth also creates its peer).
        kind: LinkKind,
        /// MTU; the kind's default (1500, lo 65536) when absent.
        mtu: Option<u32>,
    },
    /// A device iproute2 looks up by name (`ll_name_to_index`) before it
    /// sends the line's request, refused with `refusal` when there is
    /// none (e.g. `Cannot find device "fd6"`, then for a `nexthop dev`
    /// parse_nexthops' `Error: cannot parse nexthop`); it changes nothing.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let mut fib = Fib::new();
    /// let look_up = |name: &str| Command::LookUp { name: name.into(), refusal: format!("Cannot find device \"{name}\"") };
    /// assert!(fib.apply(&look_up("lo")).is_ok());
    /// assert_eq!(fib.apply(&look_up("fd6")).unwrap_err().to_string(), "Cannot find device \"fd6\"");
    /// ```
    LookUp {
        /// The device's name.
        name: String,
        /// iproute2's refusal when no device has that name.
        refusal: String,
    },
    /// `link set NAME [up|down] [mtu N]`.
    LinkSet {
        /// Name.
        name: String,
        /// New admin state.
        up: Option<bool>,
        /// New MTU.
        mtu: Option<u32>,
    },
    /// A link as the kernel announces it (RTM_NEWLINK), for a FIB that
    /// follows a kernel ([`crate::Fib::following_kernel`]).
    KernelLink(KernelLink),
    /// `link del NAME`.
    LinkDel {
        /// Name.
        name: String,
    },
    /// `addr add` / `addr del`.
    Addr {
        /// Add or delete.
        op: AddrOp,
        /// The address.
        spec: AddressSpec,
    },
    /// `route add|replace|append|prepend|change|del`.
    Route {
        /// Which operation (the netlink flags).
        op: RouteOp,
        /// The route.
        spec: RouteSpec,
    },
    /// `rule add|del`.
    Rule {
        /// Add or delete.
        op: RuleOp,
        /// The rule.
        spec: RuleSpec,
    },
    /// `neigh add|replace|change|del|flush`.
    Neigh {
        /// Which operation (the netlink flags).
        op: NeighOp,
        /// The neighbour.
        spec: NeighSpec,
    },
}

/// A link as the kernel announces it in RTM_NEWLINK: made with the
/// kernel's ifindex when new, renamed when its name changed, then given
/// the announced MTU, admin state (`IFF_UP`) and carrier (`IFF_LOWER_UP`),
/// with the effects each change has in the kernel (routes through a link
/// going down die, IPv6 comes up with carrier, ...).
///
/// A followed veth's peer usually lives in another namespace: its kind is
/// `Veth` with an empty peer name, and its carrier is the announced one,
/// not derived from the peer.
///
/// ```
/// use fibre_fib::*;
/// let mut fib = Fib::following_kernel();
/// let link = KernelLink { index: 7, name: "v0".into(), kind: LinkKind::Dummy, mtu: 1500, up: true, carrier: true };
/// fib.apply(&Command::KernelLink(link)).unwrap();
/// assert_eq!(fib.link(7).unwrap().name, "v0");
/// assert!(fib.link(7).unwrap().carrier);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelLink {
    /// The kernel's ifindex.
    pub index: LinkIndex,
    /// Name (IFLA_IFNAME).
    pub name: String,
    /// Kind (IFLA_INFO_KIND); kept from the first announcement.
    pub kind: LinkKind,
    /// MTU (IFLA_MTU).
    pub mtu: u32,
    /// `IFF_UP`.
    pub up: bool,
    /// `IFF_LOWER_UP`.
    pub carrier: bool,
}

/// The neighbour operations and the requests iproute2 sends for them
/// (`do_ipneigh`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NeighOp {
    /// `add`: RTM_NEWNEIGH with NLM_F_CREATE|NLM_F_EXCL.
    Add,
    /// `replace`: RTM_NEWNEIGH with NLM_F_CREATE|NLM_F_REPLACE.
    Replace,
    /// `change`: RTM_NEWNEIGH with NLM_F_REPLACE.
    Change,
    /// `del`: RTM_DELNEIGH.
    Del,
    /// `flush dev DEV`: RTM_DELNEIGH for each non-permanent, non-NOARP
    /// entry of the device (`ipneigh_list_or_flush`).
    Flush,
}

/// A neighbour request (`neigh add ADDR lladdr MAC dev DEV nud STATE router`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeighSpec {
    /// Device name.
    pub dev: String,
    /// The neighbour's address (None only for a flush).
    pub addr: Option<IpAddr>,
    /// `lladdr`: the bytes `ll_addr_a2n` read (None for `null` or none).
    pub lladdr: Option<Vec<u8>>,
    /// `nud STATE`; PERMANENT when not given, as iproute2 sends it.
    pub state: crate::write::neighs::NudState,
    /// `router` (NTF_ROUTER).
    pub router: bool,
}

/// `addr add` or `addr del`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddrOp {
    /// RTM_NEWADDR with NLM_F_CREATE|NLM_F_EXCL.
    Add,
    /// RTM_NEWADDR with NLM_F_CREATE|NLM_F_REPLACE.
    Replace,
    /// RTM_DELADDR.
    Del,
    /// RTM_DELADDR without `IFA_ADDRESS`: iproute2's wildcard deletion of
    /// an IPv4 address written without a length (`addr del 10.0.0.1 dev
    /// d0`). The kernel (`inet_rtm_deladdr`) deletes the first address with
    /// that local address, whatever its length (and label, if one is
    /// given); `spec.prefix_len` is not compared.
    DelAnyLength,
}

/// An address request (`addr add 10.0.0.1/24 dev eth0 ...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressSpec {
    /// Device name.
    pub dev: String,
    /// Local address.
    pub local: IpAddr,
    /// Prefix length (32/128 when not given).
    pub prefix_len: u8,
    /// `peer ADDR`.
    pub peer: Option<IpAddr>,
    /// `broadcast ADDR` (`brd +` already resolved by the parser).
    pub broadcast: Option<Ipv4Addr>,
    /// `scope`; None lets the kernel choose (host for loopback addresses).
    pub scope: Option<Scope>,
    /// `noprefixroute`.
    pub noprefixroute: bool,
    /// `metric N` for the prefix route.
    pub metric: Option<u32>,
    /// `label NAME`.
    pub label: Option<String>,
    /// `mngtmpaddr` (IFA_F_MANAGETEMPADDR): temporary addresses are made
    /// from this one, so it must be a /64 (RFC 8981's interface
    /// identifiers are 64 bits); fibre makes no temporary addresses and
    /// keeps only the kernel's checks of the flag.
    pub mngtmpaddr: bool,
}

impl AddressSpec {
    /// `addr add LOCAL/PREFIX_LEN dev DEV` with nothing else given: what
    /// `ip` sends for the plain form (no peer, broadcast, scope, metric or
    /// label; the kernel's defaults apply).
    ///
    /// ```
    /// use fibre_fib::*;
    /// let spec = AddressSpec::new("d0", "10.0.0.1".parse().unwrap(), 24);
    /// assert_eq!((spec.dev.as_str(), spec.prefix_len, spec.peer), ("d0", 24, None));
    /// ```
    pub fn new(dev: &str, local: IpAddr, prefix_len: u8) -> AddressSpec {
        AddressSpec {
            dev: dev.into(),
            local,
            prefix_len,
            peer: None,
            broadcast: None,
            scope: None,
            noprefixroute: false,
            metric: None,
            label: None,
            mngtmpaddr: false,
        }
    }
}

/// The route operations and the netlink flags they stand for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteOp {
    /// `add`: NLM_F_CREATE|NLM_F_EXCL ("File exists" if it is there).
    Add,
    /// `replace`: NLM_F_CREATE|NLM_F_REPLACE.
    Replace,
    /// `change`: NLM_F_REPLACE ("No such process" if it is not there).
    Change,
    /// `append`: NLM_F_CREATE|NLM_F_APPEND.
    Append,
    /// `prepend`: NLM_F_CREATE.
    Prepend,
    /// `del`: RTM_DELROUTE.
    Del,
}

/// One path in a route request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NexthopSpec {
    /// `via ADDR`.
    pub gateway: Option<IpAddr>,
    /// `dev NAME`.
    pub dev: Option<String>,
    /// `weight W` (1..=256), 1 when not given.
    pub weight: u16,
    /// `onlink`.
    pub onlink: bool,
}

/// A route request: the fields of RTM_NEWROUTE / RTM_DELROUTE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteSpec {
    /// Table (main when not given; local for local/broadcast/anycast types).
    pub table: TableId,
    /// Destination.
    pub dst: Prefix,
    /// TOS (`tos`/`dsfield`).
    pub tos: u8,
    /// Type; `Unspec` in a delete means any.
    pub kind: RouteType,
    /// Protocol; `unspec` in a delete means any.
    pub protocol: Protocol,
    /// Scope; `nowhere` in a delete means any.
    pub scope: Scope,
    /// Metric; None is the kernel's default (0 for IPv4, 1024 for IPv6) or, in a delete, any.
    pub metric: Option<u32>,
    /// `src`.
    pub prefsrc: Option<IpAddr>,
    /// `mtu [lock] N`.
    pub mtu: Option<u32>,
    /// `mtu lock N`: path MTU discovery may not lower it (RTAX_LOCK).
    pub mtu_lock: bool,
    /// The other metrics, as given (`advmss N`, `rtt [lock] T`, ...).
    pub metrics: RouteMetrics,
    /// Paths: one for `via/dev`, several for `nexthop ...` (empty: none given).
    pub nexthops: Vec<NexthopSpec>,
    /// The request used the `nexthop` (RTA_MULTIPATH) form.
    pub multipath: bool,
}

/// `rule add` or `rule del`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleOp {
    /// Add.
    Add,
    /// Delete the first rule matching every given field.
    Del,
}

/// A rule request; `None` fields are not given (wildcards in a delete).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSpec {
    /// Family.
    pub family: Family,
    /// `pref`/`priority`/`order`; None lets the kernel pick (add) or matches any (del).
    pub priority: Option<u32>,
    /// `not`.
    pub invert: bool,
    /// `from`.
    pub from: Option<Prefix>,
    /// `to`.
    pub to: Option<Prefix>,
    /// `iif`.
    pub iif: Option<String>,
    /// `oif`.
    pub oif: Option<String>,
    /// `fwmark M[/MASK]` as the kernel keeps them (`fib_nl2rule`): a mark
    /// without a mask has mask 0xffffffff (0 for mark 0); (0, 0) is no mark.
    pub fwmark: Option<(u32, u32)>,
    /// `tos`.
    pub tos: u8,
    /// Action; None in a delete matches any. iproute2 makes `lookup main` the default for add.
    pub action: Option<RuleAction>,
    /// `suppress_prefixlength`.
    pub suppress_prefixlength: Option<u32>,
    /// `suppress_ifgroup`.
    pub suppress_ifgroup: Option<u32>,
    /// `protocol`.
    pub protocol: Option<Protocol>,
    /// The table given beside an action that is not a lookup (see
    /// [`Rule::table_beside_action`]); in a delete without a type, the
    /// table any rule's action must have. 0: none.
    pub table_beside_action: TableId,
    /// `l3mdev`.
    pub l3mdev: bool,
    /// `uidrange START-END`.
    pub uid_range: Option<(u32, u32)>,
    /// `ipproto P` (0: none).
    pub ip_proto: u8,
    /// `sport START[-END]`.
    pub sport_range: Option<(u16, u16)>,
    /// `dport START[-END]`.
    pub dport_range: Option<(u16, u16)>,
    /// `tun_id ID` (0: none).
    pub tun_id: u64,
    /// `realms [FROM/]TO` (None: not given).
    pub realms: Option<u32>,
    /// See [`Rule::written_addrs`].
    pub written_addrs: (Option<IpAddr>, Option<IpAddr>),
}

impl RuleSpec {
    /// A request of `family` that gives nothing: every field a wildcard.
    pub fn new(family: Family) -> Self {
        Self {
            family,
            priority: None,
            invert: false,
            from: None,
            to: None,
            iif: None,
            oif: None,
            fwmark: None,
            tos: 0,
            action: None,
            suppress_prefixlength: None,
            suppress_ifgroup: None,
            protocol: None,
            table_beside_action: TABLE_UNSPEC,
            l3mdev: false,
            uid_range: None,
            ip_proto: 0,
            sport_range: None,
            dport_range: None,
            tun_id: 0,
            realms: None,
            written_addrs: (None, None),
        }
    }
}

/// `ip route get` arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteGetRequest {
    /// Destination.
    pub dst: IpAddr,
    /// `from SRC`.
    pub src: Option<IpAddr>,
    /// `iif DEV`: an input (forwarding) lookup.
    pub iif: Option<String>,
    /// `oif DEV`.
    pub oif: Option<String>,
    /// `mark N`.
    pub mark: u32,
    /// `tos T`/`dsfield T`.
    pub tos: u8,
    /// `ipproto P`.
    pub ipproto: Option<u8>,
    /// `sport N`.
    pub sport: Option<u16>,
    /// `dport N`.
    pub dport: Option<u16>,
    /// `fibmatch`: answer with the matching FIB route instead of the resolved one.
    pub fibmatch: bool,
    /// `uid N` (RTA_UID). Without one the kernel takes the caller's uid
    /// (root's, 0) for an output lookup; an IPv6 input lookup has none
    /// (`INVALID_UID`), an IPv4 one the namespace's root (0) whatever is asked
    /// (`inet_rtm_getroute`, `inet6_rtm_getroute`, `ip_route_input_slow`).
    pub uid: Option<u32>,
}

impl RouteGetRequest {
    /// A plain output lookup for `dst`.
    pub fn to(dst: IpAddr) -> Self {
        Self {
            dst,
            src: None,
            iif: None,
            oif: None,
            mark: 0,
            tos: 0,
            ipproto: None,
            sport: None,
            dport: None,
            fibmatch: false,
            uid: None,
        }
    }
}

/// The answer to `ip route get`: what the kernel puts in its reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteAnswer {
    /// Route type (`type` in JSON; omitted there when unicast).
    pub kind: RouteType,
    /// The destination asked for.
    pub dst: IpAddr,
    /// `from` when asked with one.
    pub src: Option<IpAddr>,
    /// The table of the matched route.
    pub table: TableId,
    /// Gateway of the chosen path.
    pub gateway: Option<IpAddr>,
    /// Output device name.
    pub dev: Option<String>,
    /// Preferred source the kernel chose.
    pub prefsrc: Option<IpAddr>,
    /// Input device name for an input lookup.
    pub iif: Option<String>,
    /// Mark when non-zero.
    pub mark: u32,
    /// Route MTU metric when set.
    pub mtu: Option<u32>,
    /// An IPv4 input route that forwards out of the device the packet came
    /// in on, from a source directly reachable there: the kernel would
    /// send the source an ICMP redirect (RTCF_DOREDIRECT, `ip` prints
    /// `cache <redirect>`).
    pub redirect: bool,
    /// The FIB route that matched (what `fibmatch` prints).
    pub route: Route,
}
