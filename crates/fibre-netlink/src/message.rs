//! The rtnetlink messages a follower reads (`include/uapi/linux/rtnetlink.h`,
//! `if_link.h`, `if_addr.h`, `fib_rules.h`, `neighbour.h`, `nexthop.h`),
//! parsed from [`RawMessage`]s into plain structs.
//!
//! Only what the FIB models is kept; every other attribute is skipped by
//! its length, as the kernel's own parsers skip unknown ones. Addresses
//! are sized by the message's family: a 4-byte IPv6 address is an error.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::wire::{attrs, Attr, RawMessage, WireError, NLMSG_DONE, NLMSG_ERROR, NLMSG_NOOP};

/// `RTM_NEWLINK`.
pub const RTM_NEWLINK: u16 = 16;
/// `RTM_DELLINK`.
pub const RTM_DELLINK: u16 = 17;
/// `RTM_GETLINK`.
pub const RTM_GETLINK: u16 = 18;
/// `RTM_NEWADDR`.
pub const RTM_NEWADDR: u16 = 20;
/// `RTM_DELADDR`.
pub const RTM_DELADDR: u16 = 21;
/// `RTM_GETADDR`.
pub const RTM_GETADDR: u16 = 22;
/// `RTM_NEWROUTE`.
pub const RTM_NEWROUTE: u16 = 24;
/// `RTM_DELROUTE`.
pub const RTM_DELROUTE: u16 = 25;
/// `RTM_GETROUTE`.
pub const RTM_GETROUTE: u16 = 26;
/// `RTM_NEWNEIGH`.
pub const RTM_NEWNEIGH: u16 = 28;
/// `RTM_DELNEIGH`.
pub const RTM_DELNEIGH: u16 = 29;
/// `RTM_GETNEIGH`.
pub const RTM_GETNEIGH: u16 = 30;
/// `RTM_NEWRULE`.
pub const RTM_NEWRULE: u16 = 32;
/// `RTM_DELRULE`.
pub const RTM_DELRULE: u16 = 33;
/// `RTM_GETRULE`.
pub const RTM_GETRULE: u16 = 34;
/// `RTM_NEWNEXTHOP`.
pub const RTM_NEWNEXTHOP: u16 = 104;
/// `RTM_DELNEXTHOP`.
pub const RTM_DELNEXTHOP: u16 = 105;
/// `RTM_GETNEXTHOP`.
pub const RTM_GETNEXTHOP: u16 = 106;

/// `AF_INET`.
pub const AF_INET: u8 = 2;
/// `AF_INET6`.
pub const AF_INET6: u8 = 10;

/// `IFF_UP`.
pub const IFF_UP: u32 = 0x1;
/// `IFF_LOOPBACK`.
pub const IFF_LOOPBACK: u32 = 0x8;
/// `IFF_RUNNING`: operationally up (RFC 2863 operstate UP), which
/// linkwatch sets once carrier came, when it also sends NETDEV_CHANGE.
pub const IFF_RUNNING: u32 = 0x40;
/// `IFF_LOWER_UP`: carrier, as the driver reports it at once.
pub const IFF_LOWER_UP: u32 = 0x10000;

/// `IFA_F_SECONDARY`.
pub const IFA_F_SECONDARY: u32 = 0x01;
/// `IFA_F_DADFAILED`.
pub const IFA_F_DADFAILED: u32 = 0x08;
/// `IFA_F_TENTATIVE`: DAD has not finished; the kernel has not yet made
/// the address's local route.
pub const IFA_F_TENTATIVE: u32 = 0x40;
/// `IFA_F_NOPREFIXROUTE`.
pub const IFA_F_NOPREFIXROUTE: u32 = 0x200;

/// `RTNH_F_ONLINK`.
pub const RTNH_F_ONLINK: u32 = 0x4;
/// `RTM_F_CLONED`: a route cache entry, not a FIB route.
pub const RTM_F_CLONED: u32 = 0x200;

/// `FIB_RULE_INVERT`.
pub const FIB_RULE_INVERT: u32 = 0x2;

/// `NUD_NOARP`.
pub const NUD_NOARP: u16 = 0x40;
/// `NUD_PERMANENT`.
pub const NUD_PERMANENT: u16 = 0x80;
/// `NTF_ROUTER`.
pub const NTF_ROUTER: u8 = 0x80;

/// A link (ifinfomsg with IFLA_* attributes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkMessage {
    /// `ifi_index`.
    pub index: u32,
    /// `ifi_type` (ARPHRD_*).
    pub link_type: u16,
    /// `ifi_flags`.
    pub flags: u32,
    /// IFLA_IFNAME.
    pub name: Option<String>,
    /// IFLA_MTU.
    pub mtu: Option<u32>,
    /// IFLA_LINKINFO / IFLA_INFO_KIND.
    pub kind: Option<String>,
}

/// An address (ifaddrmsg with IFA_* attributes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddrMessage {
    /// `ifa_family`.
    pub family: u8,
    /// `ifa_prefixlen`.
    pub prefix_len: u8,
    /// `ifa_flags`, widened by IFA_FLAGS when present.
    pub flags: u32,
    /// `ifa_scope`.
    pub scope: u8,
    /// `ifa_index`.
    pub index: u32,
    /// IFA_LOCAL (IPv4 always; IPv6 only with a peer).
    pub local: Option<IpAddr>,
    /// IFA_ADDRESS (the peer's when it differs from IFA_LOCAL).
    pub address: Option<IpAddr>,
    /// IFA_BROADCAST.
    pub broadcast: Option<Ipv4Addr>,
    /// IFA_LABEL.
    pub label: Option<String>,
    /// IFA_RT_PRIORITY: the prefix route's metric.
    pub metric: Option<u32>,
}

/// One path of a route: the single path of rtmsg's attributes, or one
/// `rtnexthop` of RTA_MULTIPATH.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathMessage {
    /// RTA_OIF / `rtnh_ifindex` (0: none).
    pub oif: u32,
    /// RTA_GATEWAY or RTA_VIA.
    pub gateway: Option<IpAddr>,
    /// RTNH_F_* (`rtm_flags` for a single path).
    pub flags: u32,
    /// `rtnh_hops`: weight - 1.
    pub hops: u8,
}

/// A route (rtmsg with RTA_* attributes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteMessage {
    /// `rtm_family`.
    pub family: u8,
    /// `rtm_dst_len`.
    pub dst_len: u8,
    /// `rtm_src_len`.
    pub src_len: u8,
    /// `rtm_tos`.
    pub tos: u8,
    /// RTA_TABLE, else `rtm_table`.
    pub table: u32,
    /// `rtm_protocol`.
    pub protocol: u8,
    /// `rtm_scope`.
    pub scope: u8,
    /// `rtm_type`.
    pub kind: u8,
    /// `rtm_flags`.
    pub flags: u32,
    /// RTA_DST.
    pub dst: Option<IpAddr>,
    /// RTA_PRIORITY.
    pub priority: Option<u32>,
    /// RTA_PREFSRC.
    pub prefsrc: Option<IpAddr>,
    /// RTA_METRICS: (RTAX_*, value) in order.
    pub metrics: Vec<(u8, u32)>,
    /// The single path (RTA_OIF, RTA_GATEWAY) or RTA_MULTIPATH's.
    pub paths: Vec<PathMessage>,
    /// RTA_MULTIPATH was given.
    pub multipath: bool,
    /// RTA_NH_ID: the route uses a nexthop object.
    pub nh_id: Option<u32>,
    /// RTA_SRC was given (IPv6 source-specific routing).
    pub has_src: bool,
    /// RTA_ENCAP was given (lightweight tunnels).
    pub has_encap: bool,
}

/// A policy rule (fib_rule_hdr with FRA_* attributes).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RuleMessage {
    /// `family`.
    pub family: u8,
    /// `dst_len`.
    pub dst_len: u8,
    /// `src_len`.
    pub src_len: u8,
    /// `tos`.
    pub tos: u8,
    /// FRA_TABLE, else the header's `table`.
    pub table: u32,
    /// `action` (FR_ACT_*).
    pub action: u8,
    /// `flags` (FIB_RULE_*).
    pub flags: u32,
    /// FRA_DST.
    pub dst: Option<IpAddr>,
    /// FRA_SRC.
    pub src: Option<IpAddr>,
    /// FRA_IIFNAME.
    pub iif: Option<String>,
    /// FRA_OIFNAME.
    pub oif: Option<String>,
    /// FRA_GOTO.
    pub goto: Option<u32>,
    /// FRA_PRIORITY.
    pub priority: Option<u32>,
    /// FRA_FWMARK.
    pub fwmark: Option<u32>,
    /// FRA_FWMASK.
    pub fwmask: Option<u32>,
    /// FRA_FLOW (realms).
    pub realms: Option<u32>,
    /// FRA_TUN_ID.
    pub tun_id: Option<u64>,
    /// FRA_SUPPRESS_IFGROUP.
    pub suppress_ifgroup: Option<u32>,
    /// FRA_SUPPRESS_PREFIXLEN.
    pub suppress_prefixlength: Option<u32>,
    /// FRA_L3MDEV.
    pub l3mdev: bool,
    /// FRA_UID_RANGE.
    pub uid_range: Option<(u32, u32)>,
    /// FRA_PROTOCOL.
    pub protocol: Option<u8>,
    /// FRA_IP_PROTO.
    pub ip_proto: Option<u8>,
    /// FRA_SPORT_RANGE.
    pub sport_range: Option<(u16, u16)>,
    /// FRA_DPORT_RANGE.
    pub dport_range: Option<(u16, u16)>,
}

/// A neighbour (ndmsg with NDA_* attributes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeighMessage {
    /// `ndm_family`.
    pub family: u8,
    /// `ndm_ifindex`.
    pub index: u32,
    /// `ndm_state` (NUD_*).
    pub state: u16,
    /// `ndm_flags` (NTF_*).
    pub flags: u8,
    /// NDA_DST.
    pub dst: Option<IpAddr>,
    /// NDA_LLADDR.
    pub lladdr: Option<Vec<u8>>,
}

/// A nexthop object (nhmsg with NHA_* attributes), `ip nexthop`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NexthopMessage {
    /// `nh_family`.
    pub family: u8,
    /// `nh_protocol`.
    pub protocol: u8,
    /// `nh_flags` (RTNH_F_*).
    pub flags: u32,
    /// NHA_ID.
    pub id: u32,
    /// NHA_OIF.
    pub oif: Option<u32>,
    /// NHA_GATEWAY.
    pub gateway: Option<IpAddr>,
    /// NHA_BLACKHOLE.
    pub blackhole: bool,
    /// NHA_GROUP: (member id, weight) with the weight as `ip` shows it
    /// (the wire's weight + 1, high byte included).
    pub group: Vec<(u32, u16)>,
    /// NHA_ENCAP was given.
    pub has_encap: bool,
}

/// One rtnetlink message, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// RTM_NEWLINK.
    NewLink(LinkMessage),
    /// RTM_DELLINK.
    DelLink(LinkMessage),
    /// RTM_NEWADDR.
    NewAddr(AddrMessage),
    /// RTM_DELADDR.
    DelAddr(AddrMessage),
    /// RTM_NEWROUTE.
    NewRoute(RouteMessage),
    /// RTM_DELROUTE.
    DelRoute(RouteMessage),
    /// RTM_NEWRULE.
    NewRule(RuleMessage),
    /// RTM_DELRULE.
    DelRule(RuleMessage),
    /// RTM_NEWNEIGH.
    NewNeigh(NeighMessage),
    /// RTM_DELNEIGH.
    DelNeigh(NeighMessage),
    /// RTM_NEWNEXTHOP.
    NewNexthop(NexthopMessage),
    /// RTM_DELNEXTHOP.
    DelNexthop(NexthopMessage),
    /// NLMSG_DONE: the end of a dump.
    Done,
    /// NLMSG_ERROR: an errno (0: an acknowledgement).
    Error(i32),
    /// NLMSG_NOOP, or a message type a follower does not read.
    Other(u16),
}

/// Parses one message.
///
/// ```
/// use fibre_netlink::message::{parse, Message, RTM_NEWLINK};
/// use fibre_netlink::wire::{messages, Builder};
/// let mut b = Builder::new(RTM_NEWLINK, 0, 0);
/// let mut ifinfo = [0u8; 16];
/// ifinfo[4..8].copy_from_slice(&3i32.to_ne_bytes());
/// b.header(&ifinfo).attr(3, b"v0\0").attr_u32(4, 1500);
/// let bytes = b.finish();
/// let raw = messages(&bytes).next().unwrap().unwrap();
/// let Message::NewLink(link) = parse(&raw).unwrap() else { panic!() };
/// assert_eq!((link.index, link.name.as_deref(), link.mtu), (3, Some("v0"), Some(1500)));
/// ```
pub fn parse(raw: &RawMessage<'_>) -> Result<Message, WireError> {
    let p = raw.payload;
    Ok(match raw.kind {
        RTM_NEWLINK => Message::NewLink(link(raw.kind, p)?),
        RTM_DELLINK => Message::DelLink(link(raw.kind, p)?),
        RTM_NEWADDR => Message::NewAddr(addr(raw.kind, p)?),
        RTM_DELADDR => Message::DelAddr(addr(raw.kind, p)?),
        RTM_NEWROUTE => Message::NewRoute(route(raw.kind, p)?),
        RTM_DELROUTE => Message::DelRoute(route(raw.kind, p)?),
        RTM_NEWRULE => Message::NewRule(rule(raw.kind, p)?),
        RTM_DELRULE => Message::DelRule(rule(raw.kind, p)?),
        RTM_NEWNEIGH => Message::NewNeigh(neigh(raw.kind, p)?),
        RTM_DELNEIGH => Message::DelNeigh(neigh(raw.kind, p)?),
        RTM_NEWNEXTHOP => Message::NewNexthop(nexthop(raw.kind, p)?),
        RTM_DELNEXTHOP => Message::DelNexthop(nexthop(raw.kind, p)?),
        NLMSG_DONE => Message::Done,
        NLMSG_ERROR => {
            let errno = header(raw.kind, p, 4, "nlmsgerr")?;
            Message::Error(i32::from_ne_bytes(errno[..4].try_into().expect("4 bytes")))
        }
        NLMSG_NOOP => Message::Other(NLMSG_NOOP),
        other => Message::Other(other),
    })
}

/// The fixed header of `size` bytes and the attributes after it.
fn header<'a>(
    kind: u16,
    payload: &'a [u8],
    size: usize,
    name: &'static str,
) -> Result<&'a [u8], WireError> {
    if payload.len() < size {
        return Err(WireError::ShortHeader {
            kind,
            header: name,
            needed: size,
            got: payload.len(),
        });
    }
    Ok(payload)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(b[at..at + 4].try_into().expect("in the checked header"))
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_ne_bytes([b[at], b[at + 1]])
}

/// An address of `family` (AF_INET: 4 bytes, AF_INET6: 16).
fn ip(attr: &Attr<'_>, family: u8, name: &'static str) -> Result<IpAddr, WireError> {
    match (family, attr.payload.len()) {
        (AF_INET, 4) => Ok(IpAddr::V4(Ipv4Addr::from(
            <[u8; 4]>::try_from(attr.payload).expect("4 bytes"),
        ))),
        (AF_INET6, 16) => Ok(IpAddr::V6(Ipv6Addr::from(
            <[u8; 16]>::try_from(attr.payload).expect("16 bytes"),
        ))),
        (AF_INET, _) => Err(attr.bad(name, "4")),
        (AF_INET6, _) => Err(attr.bad(name, "16")),
        _ => Err(attr.bad(name, "4 or 16 (family AF_INET or AF_INET6)")),
    }
}

/// RTA_VIA: `struct rtvia` (family u16, then the address).
fn via(attr: &Attr<'_>) -> Result<IpAddr, WireError> {
    let (family, addr) = match attr.payload {
        [a, b, rest @ ..] => (u16::from_ne_bytes([*a, *b]), rest),
        _ => return Err(attr.bad("RTA_VIA", "2 + 4 or 2 + 16")),
    };
    let inner = Attr {
        kind: attr.kind,
        payload: addr,
    };
    ip(&inner, u8::try_from(family).unwrap_or(0), "RTA_VIA")
}

fn link(kind: u16, p: &[u8]) -> Result<LinkMessage, WireError> {
    let h = header(kind, p, 16, "ifinfomsg")?;
    let mut m = LinkMessage {
        index: u32_at(h, 4),
        link_type: u16_at(h, 2),
        flags: u32_at(h, 8),
        name: None,
        mtu: None,
        kind: None,
    };
    for attr in attrs(&p[16..]) {
        let attr = attr?;
        match attr.kind {
            3 => m.name = Some(attr.string()),
            4 => m.mtu = Some(attr.u32("IFLA_MTU")?),
            18 => {
                for info in attrs(attr.payload) {
                    let info = info?;
                    if info.kind == 1 {
                        m.kind = Some(info.string());
                    }
                }
            }
            _ => {}
        }
    }
    Ok(m)
}

fn addr(kind: u16, p: &[u8]) -> Result<AddrMessage, WireError> {
    let h = header(kind, p, 8, "ifaddrmsg")?;
    let family = h[0];
    let mut m = AddrMessage {
        family,
        prefix_len: h[1],
        flags: u32::from(h[2]),
        scope: h[3],
        index: u32_at(h, 4),
        local: None,
        address: None,
        broadcast: None,
        label: None,
        metric: None,
    };
    for attr in attrs(&p[8..]) {
        let attr = attr?;
        match attr.kind {
            1 => m.address = Some(ip(&attr, family, "IFA_ADDRESS")?),
            2 => m.local = Some(ip(&attr, family, "IFA_LOCAL")?),
            3 => m.label = Some(attr.string()),
            4 => match ip(&attr, AF_INET, "IFA_BROADCAST")? {
                IpAddr::V4(b) => m.broadcast = Some(b),
                IpAddr::V6(_) => unreachable!("AF_INET gives IPv4"),
            },
            8 => m.flags = attr.u32("IFA_FLAGS")?,
            9 => m.metric = Some(attr.u32("IFA_RT_PRIORITY")?),
            _ => {}
        }
    }
    Ok(m)
}

fn route(kind: u16, p: &[u8]) -> Result<RouteMessage, WireError> {
    let h = header(kind, p, 12, "rtmsg")?;
    let family = h[0];
    let mut m = RouteMessage {
        family,
        dst_len: h[1],
        src_len: h[2],
        tos: h[3],
        table: u32::from(h[4]),
        protocol: h[5],
        scope: h[6],
        kind: h[7],
        flags: u32_at(h, 8),
        dst: None,
        priority: None,
        prefsrc: None,
        metrics: Vec::new(),
        paths: Vec::new(),
        multipath: false,
        nh_id: None,
        has_src: false,
        has_encap: false,
    };
    let mut single = PathMessage {
        oif: 0,
        gateway: None,
        flags: m.flags & 0xff,
        hops: 0,
    };
    let mut single_given = false;
    for attr in attrs(&p[12..]) {
        let attr = attr?;
        match attr.kind {
            1 => m.dst = Some(ip(&attr, family, "RTA_DST")?),
            2 => m.has_src = true,
            4 => {
                single.oif = attr.u32("RTA_OIF")?;
                single_given = true;
            }
            5 => {
                single.gateway = Some(ip(&attr, family, "RTA_GATEWAY")?);
                single_given = true;
            }
            6 => m.priority = Some(attr.u32("RTA_PRIORITY")?),
            7 => m.prefsrc = Some(ip(&attr, family, "RTA_PREFSRC")?),
            8 => {
                for metric in attrs(attr.payload) {
                    let metric = metric?;
                    let number = u8::try_from(metric.kind)
                        .map_err(|_| metric.bad("RTAX_*", "a number under 256"))?;
                    m.metrics.push((number, metric.u32("RTAX_*")?));
                }
            }
            9 => {
                m.multipath = true;
                m.paths.extend(multipath(attr.payload, family)?);
            }
            15 => m.table = attr.u32("RTA_TABLE")?,
            18 => {
                single.gateway = Some(via(&attr)?);
                single_given = true;
            }
            22 => m.has_encap = true,
            30 => m.nh_id = Some(attr.u32("RTA_NH_ID")?),
            _ => {}
        }
    }
    if !m.multipath && single_given {
        m.paths.push(single);
    }
    Ok(m)
}

/// RTA_MULTIPATH: `struct rtnexthop` (len u16, flags u8, hops u8, ifindex
/// i32) each followed by its attributes, aligned.
fn multipath(mut b: &[u8], family: u8) -> Result<Vec<PathMessage>, WireError> {
    let mut paths = Vec::new();
    let mut offset = 0;
    while b.len() >= 8 {
        let len = usize::from(u16_at(b, 0));
        if len < 8 || len > b.len() {
            return Err(WireError::BadLength {
                what: "rtnexthop",
                offset,
                claimed: len,
                left: b.len(),
            });
        }
        let mut path = PathMessage {
            oif: u32_at(b, 4),
            gateway: None,
            flags: u32::from(b[2]),
            hops: b[3],
        };
        for attr in attrs(&b[8..len]) {
            let attr = attr?;
            match attr.kind {
                5 => path.gateway = Some(ip(&attr, family, "RTA_GATEWAY")?),
                18 => path.gateway = Some(via(&attr)?),
                _ => {}
            }
        }
        paths.push(path);
        let step = crate::wire::align(len).min(b.len());
        offset += step;
        b = &b[step..];
    }
    Ok(paths)
}

fn range_u32(attr: &Attr<'_>, name: &'static str) -> Result<(u32, u32), WireError> {
    match attr.payload.len() {
        8 => Ok((u32_at(attr.payload, 0), u32_at(attr.payload, 4))),
        _ => Err(attr.bad(name, "8")),
    }
}

fn range_u16(attr: &Attr<'_>, name: &'static str) -> Result<(u16, u16), WireError> {
    match attr.payload.len() {
        4 => Ok((u16_at(attr.payload, 0), u16_at(attr.payload, 2))),
        _ => Err(attr.bad(name, "4")),
    }
}

fn rule(kind: u16, p: &[u8]) -> Result<RuleMessage, WireError> {
    let h = header(kind, p, 12, "fib_rule_hdr")?;
    let family = h[0];
    let mut m = RuleMessage {
        family,
        dst_len: h[1],
        src_len: h[2],
        tos: h[3],
        table: u32::from(h[4]),
        action: h[7],
        flags: u32_at(h, 8),
        ..RuleMessage::default()
    };
    for attr in attrs(&p[12..]) {
        let attr = attr?;
        match attr.kind {
            1 => m.dst = Some(ip(&attr, family, "FRA_DST")?),
            2 => m.src = Some(ip(&attr, family, "FRA_SRC")?),
            3 => m.iif = Some(attr.string()),
            4 => m.goto = Some(attr.u32("FRA_GOTO")?),
            6 => m.priority = Some(attr.u32("FRA_PRIORITY")?),
            10 => m.fwmark = Some(attr.u32("FRA_FWMARK")?),
            11 => m.realms = Some(attr.u32("FRA_FLOW")?),
            12 => m.tun_id = Some(u64::from_be(attr.u64("FRA_TUN_ID")?)),
            13 => m.suppress_ifgroup = Some(attr.u32("FRA_SUPPRESS_IFGROUP")?),
            14 => m.suppress_prefixlength = Some(attr.u32("FRA_SUPPRESS_PREFIXLEN")?),
            15 => m.table = attr.u32("FRA_TABLE")?,
            16 => m.fwmask = Some(attr.u32("FRA_FWMASK")?),
            17 => m.oif = Some(attr.string()),
            19 => m.l3mdev = attr.u8("FRA_L3MDEV")? != 0,
            20 => m.uid_range = Some(range_u32(&attr, "FRA_UID_RANGE")?),
            21 => m.protocol = Some(attr.u8("FRA_PROTOCOL")?),
            22 => m.ip_proto = Some(attr.u8("FRA_IP_PROTO")?),
            23 => m.sport_range = Some(range_u16(&attr, "FRA_SPORT_RANGE")?),
            24 => m.dport_range = Some(range_u16(&attr, "FRA_DPORT_RANGE")?),
            _ => {}
        }
    }
    Ok(m)
}

fn neigh(kind: u16, p: &[u8]) -> Result<NeighMessage, WireError> {
    let h = header(kind, p, 12, "ndmsg")?;
    let family = h[0];
    let mut m = NeighMessage {
        family,
        index: u32_at(h, 4),
        state: u16_at(h, 8),
        flags: h[10],
        dst: None,
        lladdr: None,
    };
    for attr in attrs(&p[12..]) {
        let attr = attr?;
        match attr.kind {
            1 => m.dst = Some(ip(&attr, family, "NDA_DST")?),
            2 => m.lladdr = Some(attr.payload.to_vec()),
            _ => {}
        }
    }
    Ok(m)
}

fn nexthop(kind: u16, p: &[u8]) -> Result<NexthopMessage, WireError> {
    let h = header(kind, p, 8, "nhmsg")?;
    let family = h[0];
    let mut m = NexthopMessage {
        family,
        protocol: h[2],
        flags: u32_at(h, 4),
        id: 0,
        oif: None,
        gateway: None,
        blackhole: false,
        group: Vec::new(),
        has_encap: false,
    };
    for attr in attrs(&p[8..]) {
        let attr = attr?;
        match attr.kind {
            1 => m.id = attr.u32("NHA_ID")?,
            2 => {
                // struct nexthop_grp: id u32, weight u8, weight_high u8, resvd2 u16.
                if attr.payload.len() % 8 != 0 {
                    return Err(attr.bad("NHA_GROUP", "a multiple of 8"));
                }
                m.group = attr
                    .payload
                    .chunks_exact(8)
                    .map(|g| {
                        // weight_high (6.11+) holds the high byte.
                        let weight = u16::from(g[4]) | (u16::from(g[5]) << 8);
                        (u32_at(g, 0), weight.saturating_add(1))
                    })
                    .collect();
            }
            4 => m.blackhole = true,
            5 => m.oif = Some(attr.u32("NHA_OIF")?),
            6 => m.gateway = Some(ip(&attr, family, "NHA_GATEWAY")?),
            8 => m.has_encap = true,
            _ => {}
        }
    }
    Ok(m)
}
