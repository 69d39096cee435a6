//! The FIB's vocabulary: families, prefixes, tables, route types, scopes,
//! protocols, links, addresses, routes and rules.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Address family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// IPv4 (AF_INET).
    V4,
    /// IPv6 (AF_INET6).
    V6,
}

impl Family {
    /// The family of an address.
    pub fn of(addr: &IpAddr) -> Family {
        match addr {
            IpAddr::V4(_) => Family::V4,
            IpAddr::V6(_) => Family::V6,
        }
    }

    /// Address width in bits.
    pub fn bits(self) -> u8 {
        match self {
            Family::V4 => 32,
            Family::V6 => 128,
        }
    }

    /// The all-zero address of this family.
    pub fn unspecified(self) -> IpAddr {
        match self {
            Family::V4 => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            Family::V6 => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        }
    }
}

/// An IP prefix with no bits set beyond its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Prefix {
    addr: IpAddr,
    len: u8,
}

/// Why a prefix could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrefixError {
    /// Length beyond the family's width.
    #[error("prefix length /{len} is longer than {max} bits")]
    LengthTooLong {
        /// The length asked for.
        len: u8,
        /// The family's width in bits (32 or 128).
        max: u8,
    },
    /// Bits set beyond the length (the kernel: "Invalid prefix for given prefix length").
    #[error("{addr}/{len} has host bits set (expected {network}/{len})")]
    HostBitsSet {
        /// The address as given.
        addr: IpAddr,
        /// The prefix length.
        len: u8,
        /// The address with the host bits cleared.
        network: IpAddr,
    },
}

impl Prefix {
    /// A prefix; refuses host bits beyond `len`.
    ///
    /// ```
    /// use fibre_fib::Prefix;
    /// let p = Prefix::new("10.0.0.0".parse().unwrap(), 8).unwrap();
    /// assert_eq!(p.to_string(), "10.0.0.0/8");
    /// assert!(Prefix::new("10.0.0.1".parse().unwrap(), 8).is_err());
    /// ```
    pub fn new(addr: IpAddr, len: u8) -> Result<Prefix, PrefixError> {
        let family = Family::of(&addr);
        if len > family.bits() {
            return Err(PrefixError::LengthTooLong {
                len,
                max: family.bits(),
            });
        }
        let network = Prefix::truncate(addr, len);
        if network != addr {
            return Err(PrefixError::HostBitsSet { addr, len, network });
        }
        Ok(Prefix { addr, len })
    }

    /// The prefix of length `len` containing `addr` (host bits cleared).
    pub fn containing(addr: IpAddr, len: u8) -> Prefix {
        let len = len.min(Family::of(&addr).bits());
        Prefix {
            addr: Prefix::truncate(addr, len),
            len,
        }
    }

    /// The host prefix (/32 or /128) of an address.
    pub fn host(addr: IpAddr) -> Prefix {
        Prefix {
            addr,
            len: Family::of(&addr).bits(),
        }
    }

    /// The default route's prefix (`0.0.0.0/0` or `::/0`).
    pub fn default_route(family: Family) -> Prefix {
        Prefix {
            addr: family.unspecified(),
            len: 0,
        }
    }

    fn truncate(addr: IpAddr, len: u8) -> IpAddr {
        match addr {
            IpAddr::V4(a) => {
                let mask = if len == 0 {
                    0
                } else {
                    u32::MAX << (32 - u32::from(len))
                };
                IpAddr::V4(Ipv4Addr::from(u32::from(a) & mask))
            }
            IpAddr::V6(a) => {
                let mask = if len == 0 {
                    0
                } else {
                    u128::MAX << (128 - u32::from(len))
                };
                IpAddr::V6(Ipv6Addr::from(u128::from(a) & mask))
            }
        }
    }

    /// The network address.
    pub fn addr(&self) -> IpAddr {
        self.addr
    }

    /// The prefix length.
    // A prefix is never "empty": `/0` is the default route, see `is_default`.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> u8 {
        self.len
    }

    /// True for `/0`.
    pub fn is_default(&self) -> bool {
        self.len == 0
    }

    /// The family.
    pub fn family(&self) -> Family {
        Family::of(&self.addr)
    }

    /// True when `addr` (of the same family) lies inside this prefix.
    pub fn contains(&self, addr: &IpAddr) -> bool {
        Family::of(addr) == self.family() && Prefix::truncate(*addr, self.len) == self.addr
    }

    /// The address as a `u128` key (IPv4 in the low 32 bits).
    pub fn key(&self) -> u128 {
        addr_key(&self.addr)
    }
}

/// An address as an integer key: IPv4 in the low 32 bits, IPv6 whole.
pub fn addr_key(addr: &IpAddr) -> u128 {
    match addr {
        IpAddr::V4(a) => u128::from(u32::from(*a)),
        IpAddr::V6(a) => u128::from(*a),
    }
}

impl fmt::Display for Prefix {
    /// `ip`'s spelling: `10.0.0.0/8`, host routes without the length,
    /// `default` for /0.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.len == 0 {
            write!(f, "default")
        } else if self.len == self.family().bits() {
            write!(f, "{}", self.addr)
        } else {
            write!(f, "{}/{}", self.addr, self.len)
        }
    }
}

/// Routing table id (`RT_TABLE_*`); names: `local` 255, `main` 254, `default` 253.
pub type TableId = u32;
/// `RT_TABLE_UNSPEC`.
pub const TABLE_UNSPEC: TableId = 0;
/// `RT_TABLE_DEFAULT`.
pub const TABLE_DEFAULT: TableId = 253;
/// `RT_TABLE_MAIN`.
pub const TABLE_MAIN: TableId = 254;
/// `RT_TABLE_LOCAL`.
pub const TABLE_LOCAL: TableId = 255;

/// The name iproute2 prints for a table id (`main`, `local`, `default`, else the number).
pub fn table_name(id: TableId) -> String {
    match id {
        TABLE_LOCAL => "local".into(),
        TABLE_MAIN => "main".into(),
        TABLE_DEFAULT => "default".into(),
        TABLE_UNSPEC => "unspec".into(),
        n => n.to_string(),
    }
}

/// Route type (`RTN_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RouteType {
    /// RTN_UNSPEC: "any type" in a delete request.
    Unspec,
    /// RTN_UNICAST
    Unicast,
    /// RTN_LOCAL
    Local,
    /// RTN_BROADCAST
    Broadcast,
    /// RTN_ANYCAST
    Anycast,
    /// RTN_MULTICAST
    Multicast,
    /// RTN_BLACKHOLE
    Blackhole,
    /// RTN_UNREACHABLE
    Unreachable,
    /// RTN_PROHIBIT
    Prohibit,
    /// RTN_THROW
    Throw,
    /// RTN_NAT, IPv6 only (IPv4 refuses it: fib_props gives it scope
    /// nowhere and an error): `rtm_to_fib6_config` sets no flag for it, so
    /// fib6 routes it as unicast and reports the type it was given.
    Nat,
    /// RTN_XRESOLVE, IPv6 only, routed as unicast like [`RouteType::Nat`].
    XResolve,
}

impl RouteType {
    /// iproute2's keyword.
    pub fn name(self) -> &'static str {
        match self {
            RouteType::Unspec => "unspec",
            RouteType::Unicast => "unicast",
            RouteType::Local => "local",
            RouteType::Broadcast => "broadcast",
            RouteType::Anycast => "anycast",
            RouteType::Multicast => "multicast",
            RouteType::Blackhole => "blackhole",
            RouteType::Unreachable => "unreachable",
            RouteType::Prohibit => "prohibit",
            RouteType::Throw => "throw",
            RouteType::Nat => "nat",
            RouteType::XResolve => "xresolve",
        }
    }

    /// Whether IPv6 routes of this type forward as unicast ones do: fib6
    /// sets RTF_REJECT, RTF_LOCAL or RTF_ANYCAST for the others, and nothing
    /// for nat and xresolve.
    ///
    /// ```
    /// use fibre_fib::RouteType;
    /// assert!(RouteType::Nat.is_unicast_v6());
    /// assert!(!RouteType::Local.is_unicast_v6());
    /// ```
    pub fn is_unicast_v6(self) -> bool {
        matches!(
            self,
            RouteType::Unicast | RouteType::Nat | RouteType::XResolve
        )
    }

    /// The type of an `RTN_*` number, where fibre models it (`RTN_NAT` and
    /// `RTN_XRESOLVE` it does not).
    pub fn from_number(n: u8) -> Option<RouteType> {
        Some(match n {
            0 => RouteType::Unspec,
            1 => RouteType::Unicast,
            2 => RouteType::Local,
            3 => RouteType::Broadcast,
            4 => RouteType::Anycast,
            5 => RouteType::Multicast,
            6 => RouteType::Blackhole,
            7 => RouteType::Unreachable,
            8 => RouteType::Prohibit,
            9 => RouteType::Throw,
            _ => return None,
        })
    }

    /// Parses iproute2's keyword, written out in full.
    pub fn from_name(s: &str) -> Option<RouteType> {
        Some(match s {
            "unicast" => RouteType::Unicast,
            "local" => RouteType::Local,
            "broadcast" => RouteType::Broadcast,
            "anycast" => RouteType::Anycast,
            "multicast" => RouteType::Multicast,
            "blackhole" => RouteType::Blackhole,
            "unreachable" => RouteType::Unreachable,
            "prohibit" => RouteType::Prohibit,
            "throw" => RouteType::Throw,
            _ => return None,
        })
    }
}

/// Route or address scope (`RT_SCOPE_*`), a number 0..=255.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Scope(pub u8);

impl Scope {
    /// RT_SCOPE_UNIVERSE, printed `global`.
    pub const UNIVERSE: Scope = Scope(0);
    /// RT_SCOPE_SITE.
    pub const SITE: Scope = Scope(200);
    /// RT_SCOPE_LINK.
    pub const LINK: Scope = Scope(253);
    /// RT_SCOPE_HOST.
    pub const HOST: Scope = Scope(254);
    /// RT_SCOPE_NOWHERE.
    pub const NOWHERE: Scope = Scope(255);

    /// iproute2's name (`global`, `site`, `link`, `host`, `nowhere`, else the number).
    pub fn name(self) -> String {
        match self.0 {
            0 => "global".into(),
            200 => "site".into(),
            253 => "link".into(),
            254 => "host".into(),
            255 => "nowhere".into(),
            n => n.to_string(),
        }
    }

    /// Parses a scope as `rtnl_rtscope_a2n` does: a name of iproute2's
    /// shipped `rt_scopes` file (`global`, `site`, `link`, `host`,
    /// `nowhere`; not `universe`) or a number up to 255 (`strtoul` base 0).
    pub fn from_name(s: &str) -> Option<Scope> {
        Some(match s {
            "global" => Scope::UNIVERSE,
            "site" => Scope::SITE,
            "link" => Scope::LINK,
            "host" => Scope::HOST,
            "nowhere" => Scope::NOWHERE,
            n => Scope(crate::config::values::number_at_most(n, 255)? as u8),
        })
    }
}

/// Routing protocol (`RTPROT_*`), a number 0..=255.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Protocol(pub u8);

const PROTOCOL_NAMES: &[(u8, &str)] = &[
    (0, "unspec"),
    (1, "redirect"),
    (2, "kernel"),
    (3, "boot"),
    (4, "static"),
    (8, "gated"),
    (9, "ra"),
    (10, "mrt"),
    (11, "zebra"),
    (12, "bird"),
    (13, "dnrouted"),
    (14, "xorp"),
    (15, "ntk"),
    (16, "dhcp"),
    (18, "keepalived"),
    (42, "babel"),
    (99, "openr"),
    (186, "bgp"),
    (187, "isis"),
    (188, "ospf"),
    (189, "rip"),
    (192, "eigrp"),
];

impl Protocol {
    /// RTPROT_UNSPEC.
    pub const UNSPEC: Protocol = Protocol(0);
    /// RTPROT_KERNEL: routes the kernel made itself.
    pub const KERNEL: Protocol = Protocol(2);
    /// RTPROT_BOOT: iproute2's default for `ip route add`.
    pub const BOOT: Protocol = Protocol(3);
    /// RTPROT_STATIC.
    pub const STATIC: Protocol = Protocol(4);

    /// iproute2's name (from its rt_protos table) or the number.
    pub fn name(self) -> String {
        PROTOCOL_NAMES
            .iter()
            .find(|(n, _)| *n == self.0)
            .map(|(_, s)| (*s).to_string())
            .unwrap_or_else(|| self.0.to_string())
    }

    /// Parses a protocol as `rtnl_rtprot_a2n` does: a name of iproute2
    /// 6.1's table or a number up to 255 (`strtoul` base 0).
    pub fn from_name(s: &str) -> Option<Protocol> {
        PROTOCOL_NAMES
            .iter()
            .find(|(_, name)| *name == s)
            .map(|(n, _)| Protocol(*n))
            .or_else(|| crate::config::values::number_at_most(s, 255).map(|n| Protocol(n as u8)))
    }
}

/// Interface index (`ifindex`); `lo` is 1.
pub type LinkIndex = u32;

/// The index of the loopback device `lo`, the first link of every
/// namespace (`loopback_net_init` registers it first).
pub const LOOPBACK_INDEX: LinkIndex = 1;

/// The smallest MTU of an Ethernet-like link (`ETH_MIN_MTU`, the
/// minimum IPv4 datagram of RFC 791).
pub(crate) const ETH_MIN_MTU: u32 = 68;
/// The largest MTU of an Ethernet-like link (`ETH_MAX_MTU`).
pub(crate) const ETH_MAX_MTU: u32 = 65535;

/// The kind of a link.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LinkKind {
    /// The loopback device `lo`.
    Loopback,
    /// A dummy device: accepts and drops.
    Dummy,
    /// An ifb device (behaves as dummy for routing).
    Ifb,
    /// One end of a veth pair; the other end's name.
    Veth {
        /// Name of the peer device.
        peer: String,
    },
    /// A GRE tunnel (gre, ip6gre, gretap or ip6gretap) and its parameters.
    Gre(crate::write::gre::GreSpec),
}

/// A network device as the FIB sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// ifindex.
    pub index: LinkIndex,
    /// Name (at most 15 bytes, as IFNAMSIZ).
    pub name: String,
    /// Kind.
    pub kind: LinkKind,
    /// MTU in bytes.
    pub mtu: u32,
    /// Administratively up (`IFF_UP`).
    pub up: bool,
    /// Carrier present (`IFF_LOWER_UP`); false makes its routes `linkdown`.
    pub carrier: bool,
}

/// An address on a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    /// The link holding it.
    pub link: LinkIndex,
    /// The local address (IFA_LOCAL).
    pub local: IpAddr,
    /// Prefix length.
    pub prefix_len: u8,
    /// Peer address for point-to-point (IFA_ADDRESS when it differs).
    pub peer: Option<IpAddr>,
    /// IPv4 broadcast address.
    pub broadcast: Option<Ipv4Addr>,
    /// Scope.
    pub scope: Scope,
    /// IPv4: not the first address of its subnet on the link.
    pub secondary: bool,
    /// Made no prefix route (`noprefixroute`).
    pub noprefixroute: bool,
    /// Metric of the prefix route.
    pub metric: u32,
    /// IPv4 label (defaults to the link name).
    pub label: Option<String>,
}

/// Flags of a nexthop (`RTNH_F_*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct NexthopFlags {
    /// RTNH_F_ONLINK: the gateway is on the link, no check.
    pub onlink: bool,
    /// RTNH_F_DEAD: the device is down.
    pub dead: bool,
    /// RTNH_F_LINKDOWN: the device has no carrier.
    pub linkdown: bool,
}

/// One path of a route.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Nexthop {
    /// Gateway (`via`); none for a directly connected route.
    pub gateway: Option<IpAddr>,
    /// Output device.
    pub dev: Option<LinkIndex>,
    /// ECMP weight, 1..=256 (iproute2 `weight`; stored as rtnh_hops + 1).
    pub weight: u16,
    /// Flags.
    pub flags: NexthopFlags,
}

/// A route as the kernel stores it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Route {
    /// Table.
    pub table: TableId,
    /// Destination.
    pub dst: Prefix,
    /// TOS (IPv4 only; 0 = any).
    pub tos: u8,
    /// Type.
    pub kind: RouteType,
    /// Protocol that installed it.
    pub protocol: Protocol,
    /// Scope.
    pub scope: Scope,
    /// Metric (`metric`/`priority`/`preference`); IPv6 defaults to 1024.
    pub metric: u32,
    /// Preferred source (`src`).
    pub prefsrc: Option<IpAddr>,
    /// MTU metric (`mtu`).
    pub mtu: Option<u32>,
    /// `mtu lock`: path MTU discovery may not lower the MTU (RTAX_LOCK).
    pub mtu_lock: bool,
    /// The other metrics (`advmss`, `rtt`, `window`, ...).
    pub metrics: RouteMetrics,
    /// Paths; empty for blackhole, unreachable, prohibit, throw.
    pub nexthops: Vec<Nexthop>,
    /// The route's class in a route cache keyed by nexthop: routes of one
    /// FIB with the same `prefsrc` and `mtu` share a class, so a cached
    /// route never lends one route's source address or MTU to another
    /// route's flows ([`CACHE_CLASS_PLAIN`] when the route has neither).
    /// Assigned by the FIB when it installs the route; a request's value
    /// is ignored. The data-path answers ([`crate::Forward`]) carry it.
    pub cache_class: u16,
}

/// A route's metrics besides `mtu` (`RTA_METRICS`: `advmss 1400`, `rtt
/// lock 5ms`, `features ecn`, ...), each by its `RTAX_*` number, as a
/// request gives them or as the kernel keeps them (`ip_metrics_convert`:
/// no zero values, see [`RouteMetrics::kept`]), with the lock bits of
/// these metrics (`RTAX_LOCK`) as the entry of number 1. Most routes have
/// none, and then hold no allocation.
///
/// ```
/// use fibre_fib::RouteMetrics;
/// let m = RouteMetrics::from_entries(&[(RouteMetrics::ADVMSS, 1400), (RouteMetrics::RTT, 0)], 1 << RouteMetrics::RTT);
/// assert_eq!(m.get(RouteMetrics::ADVMSS), Some(1400));
/// let shown: Vec<_> = m.kept().shown().collect();
/// assert_eq!(shown, [(RouteMetrics::RTT, 0, true), (RouteMetrics::ADVMSS, 1400, false)]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct RouteMetrics(Box<[(u8, u32)]>);

impl RouteMetrics {
    /// `RTAX_LOCK`: the bits of the locked metrics.
    pub const LOCK: u8 = 1;
    /// `RTAX_MTU` (kept in [`Route::mtu`], never here).
    pub const MTU: u8 = 2;
    /// `RTAX_WINDOW`.
    pub const WINDOW: u8 = 3;
    /// `RTAX_RTT`: eighths of a millisecond.
    pub const RTT: u8 = 4;
    /// `RTAX_RTTVAR`: quarters of a millisecond.
    pub const RTTVAR: u8 = 5;
    /// `RTAX_SSTHRESH`.
    pub const SSTHRESH: u8 = 6;
    /// `RTAX_CWND`.
    pub const CWND: u8 = 7;
    /// `RTAX_ADVMSS`.
    pub const ADVMSS: u8 = 8;
    /// `RTAX_REORDERING`.
    pub const REORDERING: u8 = 9;
    /// `RTAX_HOPLIMIT`.
    pub const HOPLIMIT: u8 = 10;
    /// `RTAX_INITCWND`.
    pub const INITCWND: u8 = 11;
    /// `RTAX_FEATURES`: `RTAX_FEATURE_ECN` is 1.
    pub const FEATURES: u8 = 12;
    /// `RTAX_RTO_MIN`: milliseconds.
    pub const RTO_MIN: u8 = 13;
    /// `RTAX_INITRWND`.
    pub const INITRWND: u8 = 14;
    /// `RTAX_QUICKACK`.
    pub const QUICKACK: u8 = 15;
    /// `RTAX_FASTOPEN_NO_COOKIE`.
    pub const FASTOPEN_NO_COOKIE: u8 = 17;

    /// The metrics `entries` (`RTAX_*` number, value; a later one of the
    /// same number replaces an earlier one, as `ip_metrics_convert` keeps
    /// the last) with `locks` (`1 << RTAX_*` bits; 0: none).
    pub fn from_entries(entries: &[(u8, u32)], locks: u32) -> Self {
        let mut all: Vec<(u8, u32)> = Vec::with_capacity(entries.len() + 1);
        if locks != 0 {
            all.push((Self::LOCK, locks));
        }
        for &(number, value) in entries {
            all.retain(|(n, _)| *n != number);
            all.push((number, value));
        }
        all.sort_by_key(|(number, _)| *number);
        Self(all.into_boxed_slice())
    }

    /// The value given for metric `number`.
    pub fn get(&self, number: u8) -> Option<u32> {
        self.0.iter().find(|(n, _)| *n == number).map(|(_, v)| *v)
    }

    /// Whether metric `number` is locked.
    pub fn locked(&self, number: u8) -> bool {
        number < 32 && self.get(Self::LOCK).unwrap_or(0) & (1 << number) != 0
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries as given, the lock bits included.
    pub fn entries(&self) -> &[(u8, u32)] {
        &self.0
    }

    /// What the kernel keeps of a request's metrics: no zero value
    /// (`rtnetlink_put_metrics` shows none, and a zero is no metric).
    pub fn kept(&self) -> Self {
        Self(self.0.iter().copied().filter(|(_, v)| *v != 0).collect())
    }

    /// The metrics `ip route show` prints, in `RTAX_*` order: (number,
    /// value, locked) of each with a value or a lock (`print_rta_metrics`).
    pub fn shown(&self) -> impl Iterator<Item = (u8, u32, bool)> + '_ {
        let locks = self.get(Self::LOCK).unwrap_or(0);
        (Self::WINDOW..=Self::FASTOPEN_NO_COOKIE).filter_map(move |number| {
            let locked = locks & (1 << number) != 0;
            match self.get(number) {
                Some(value) => Some((number, value, locked)),
                None if locked => Some((number, 0, true)),
                None => None,
            }
        })
    }

    /// iproute2's name of metric `number` (`mx_names`).
    pub fn name(number: u8) -> &'static str {
        match number {
            Self::MTU => "mtu",
            Self::WINDOW => "window",
            Self::RTT => "rtt",
            Self::RTTVAR => "rttvar",
            Self::SSTHRESH => "ssthresh",
            Self::CWND => "cwnd",
            Self::ADVMSS => "advmss",
            Self::REORDERING => "reordering",
            Self::HOPLIMIT => "hoplimit",
            Self::INITCWND => "initcwnd",
            Self::FEATURES => "features",
            Self::RTO_MIN => "rto_min",
            Self::INITRWND => "initrwnd",
            Self::QUICKACK => "quickack",
            Self::FASTOPEN_NO_COOKIE => "fastopen_no_cookie",
            _ => "metric",
        }
    }
}

/// The cache class of routes without `prefsrc` and `mtu` (most routes:
/// every route a BGP feed installs).
pub const CACHE_CLASS_PLAIN: u16 = 0;

/// The cache class given once a FIB has handed out every other class
/// (65,534 distinct `prefsrc`/`mtu` pairs): a route cache must not share
/// routes of this class between flows.
pub const CACHE_CLASS_UNSHARED: u16 = u16::MAX;

impl Route {
    /// The family.
    pub fn family(&self) -> Family {
        self.dst.family()
    }

    /// An IPv6 anycast route addrconf made for an address (RTF_ANYCAST):
    /// delivered on `lo`, and never LINKDOWN (`fib6_nh_init` and
    /// `fib6_ifdown` skip RTF_LOCAL|RTF_ANYCAST routes). A request's
    /// `anycast` route has no RTF_ANYCAST (`rtm_to_fib6_config` sets only
    /// RTF_LOCAL), so it keeps its device and takes LINKDOWN like any
    /// route. addrconf's have metric 0, which no request's IPv6 route has
    /// (metric 0 asks for 1024): that tells them apart.
    ///
    /// ```
    /// use fibre_fib::{config::apply_str, Family, Fib, RouteType, TABLE_LOCAL};
    /// let text = "link add d0 type dummy\nlink set d0 up\naddr add 2001:db8::1/64 dev d0\n\
    ///             route add anycast 2001:db8:5::/48 dev d0";
    /// let (fib, _) = apply_str(&Fib::new(), "t.conf", text, false).unwrap();
    /// let anycast: Vec<_> = fib.routes(Family::V6, Some(TABLE_LOCAL)).into_iter()
    ///     .filter(|r| r.kind == RouteType::Anycast)
    ///     .map(|r| (r.dst.to_string(), r.is_addrconf_anycast()))
    ///     .collect();
    /// // addrconf's: the subnet-router anycast of 2001:db8::1/64 and of d0's link-local address.
    /// let expected = [("2001:db8::", true), ("2001:db8:5::/48", false), ("fe80::", true)];
    /// assert_eq!(anycast, expected.map(|(dst, ours)| (dst.to_string(), ours)));
    /// ```
    pub fn is_addrconf_anycast(&self) -> bool {
        self.kind == RouteType::Anycast && self.metric == 0 && self.family() == Family::V6
    }
}

/// What a rule does when it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuleAction {
    /// FR_ACT_TO_TBL: look up in a table.
    Lookup(TableId),
    /// FR_ACT_GOTO: jump to the first rule with this priority or later.
    Goto(u32),
    /// FR_ACT_NOP.
    Nop,
    /// FR_ACT_BLACKHOLE: "Invalid argument".
    Blackhole,
    /// FR_ACT_UNREACHABLE: "Network is unreachable" (a route of type
    /// unreachable answers "No route to host" instead).
    Unreachable,
    /// FR_ACT_PROHIBIT: "Permission denied".
    Prohibit,
    /// Any other action number (`rule add anycast`, `throw`, `nat ADDR`,
    /// `type 12`): the kernel keeps it, `ip rule` names it as a route type,
    /// and a lookup reaching the rule fails with "Invalid argument"
    /// (the default case of `fib4_rule_action` and `fib6_rule_action`).
    Other(u8),
}

/// A policy routing rule (`ip rule`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Rule {
    /// Family.
    pub family: Family,
    /// Priority (`pref`); lower runs first.
    pub priority: u32,
    /// `not`: invert the match.
    pub invert: bool,
    /// Source prefix (`from`); `None` is `all`.
    pub from: Option<Prefix>,
    /// Destination prefix (`to`).
    pub to: Option<Prefix>,
    /// Input interface name (`iif`); may name a link that does not exist yet.
    pub iif: Option<String>,
    /// Output interface name (`oif`).
    pub oif: Option<String>,
    /// `fwmark MARK/MASK`.
    pub fwmark: Option<(u32, u32)>,
    /// `tos`/`dsfield`.
    pub tos: u8,
    /// Action.
    pub action: RuleAction,
    /// `suppress_prefixlength N`: ignore answers with a prefix of N bits or
    /// fewer (iproute2 takes up to `i32::MAX`).
    pub suppress_prefixlength: Option<u32>,
    /// `suppress_ifgroup G`.
    pub suppress_ifgroup: Option<u32>,
    /// Protocol that installed it.
    pub protocol: Protocol,
    /// A table given beside an action other than a lookup (`lookup 100
    /// unreachable`, `lookup 5 goto 1000`): the kernel keeps it
    /// (`rule->table`) and `ip rule` shows it; 0 when none. A lookup's
    /// table is its action's.
    pub table_beside_action: TableId,
    /// `l3mdev`: look up the table of the flow's L3 master device (a VRF);
    /// fibre has no VRFs, so such a rule matches no flow.
    pub l3mdev: bool,
    /// `uidrange START-END`: only flows of a uid in the range.
    pub uid_range: Option<(u32, u32)>,
    /// `ipproto P`: only flows of this L4 protocol (0: any).
    pub ip_proto: u8,
    /// `sport START[-END]`: only flows from a source port in the range.
    pub sport_range: Option<(u16, u16)>,
    /// `dport START[-END]`: only flows to a destination port in the range.
    pub dport_range: Option<(u16, u16)>,
    /// `tun_id ID`: only flows of this tunnel id (0: any). fibre's flows
    /// carry no tunnel metadata, so a rule with one matches no flow.
    pub tun_id: u64,
    /// The `from` and `to` addresses as given, host bits and all (`from
    /// 10.1.2.3/16`): the kernel keeps them, `ip rule` shows them and a
    /// request compares them exactly; `from` and `to` hold them masked, as
    /// lookups match them. None: the prefix's own address.
    pub written_addrs: (Option<IpAddr>, Option<IpAddr>),
    /// `realms [FROM/]TO` (FRA_FLOW, FROM in the high 16 bits; 0: none):
    /// a traffic class the kernel stamps on routed packets; it selects
    /// nothing.
    pub realms: u32,
}

impl Rule {
    /// The `from` address as the kernel keeps and shows it.
    pub fn from_addr(&self) -> Option<IpAddr> {
        self.from.map(|p| self.written_addrs.0.unwrap_or(p.addr()))
    }

    /// The `to` address as the kernel keeps and shows it.
    pub fn to_addr(&self) -> Option<IpAddr> {
        self.to.map(|p| self.written_addrs.1.unwrap_or(p.addr()))
    }

    /// The table the kernel keeps for the rule (`rule->table`): a lookup's,
    /// else the one given beside the action.
    pub fn table(&self) -> TableId {
        match self.action {
            RuleAction::Lookup(table) => table,
            _ => self.table_beside_action,
        }
    }
}
