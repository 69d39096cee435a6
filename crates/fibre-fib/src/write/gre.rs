//! GRE tunnel parameters as the control plane holds them (what netlink
//! carries in `IFLA_INFO_DATA` for the kinds `gre`, `gretap`, `ip6gre` and
//! `ip6gretap`), and what the kernel derives from them when the link is
//! made: the header length, the default MTU, the MTU bounds and whether
//! the device is point-to-point.
//!
//! The configuration language reads these from `link add NAME type gre
//! ...` (see [`crate::config`]); `fibre-dev` builds its tunnel device from
//! the same [`GreSpec`].

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;

use crate::command::RouteGetRequest;
use crate::types::{table_name, Family, Link, LinkKind, Prefix, TableId, TABLE_MAIN};
use crate::Fib;

/// GRE over IPv4 (`gre`, `gretap`) or over IPv6 (`ip6gre`, `ip6gretap`);
/// the `tap` kinds carry Ethernet frames (protocol 0x6558), the others IP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GreKind {
    /// `type gre`: IPv4 underlay, IPv4/IPv6 payload (`ARPHRD_IPGRE`).
    Gre,
    /// `type ip6gre`: IPv6 underlay, IPv4/IPv6 payload (`ARPHRD_IP6GRE`).
    Ip6Gre,
    /// `type gretap`: IPv4 underlay, Ethernet payload (`ARPHRD_ETHER`).
    GreTap,
    /// `type ip6gretap`: IPv6 underlay, Ethernet payload (`ARPHRD_ETHER`).
    Ip6GreTap,
}

impl GreKind {
    /// The underlay family.
    pub fn family(self) -> Family {
        match self {
            GreKind::Gre | GreKind::GreTap => Family::V4,
            GreKind::Ip6Gre | GreKind::Ip6GreTap => Family::V6,
        }
    }

    /// True for the kinds carrying Ethernet frames.
    pub fn is_tap(self) -> bool {
        matches!(self, GreKind::GreTap | GreKind::Ip6GreTap)
    }

    /// iproute2's name (`type gre`).
    pub fn name(self) -> &'static str {
        match self {
            GreKind::Gre => "gre",
            GreKind::Ip6Gre => "ip6gre",
            GreKind::GreTap => "gretap",
            GreKind::Ip6GreTap => "ip6gretap",
        }
    }

    /// The kind named `name` as `type NAME` spells it.
    ///
    /// ```
    /// use fibre_fib::GreKind;
    /// assert_eq!(GreKind::from_name("ip6gretap"), Some(GreKind::Ip6GreTap));
    /// assert_eq!(GreKind::from_name("vxlan"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<GreKind> {
        [
            GreKind::Gre,
            GreKind::Ip6Gre,
            GreKind::GreTap,
            GreKind::Ip6GreTap,
        ]
        .into_iter()
        .find(|kind| kind.name() == name)
    }
}

/// Outer TTL / hop limit or TOS / traffic class: fixed, or copied from the
/// inner packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Inheritable {
    /// Copy the inner packet's value.
    Inherit,
    /// This value.
    Fixed(u8),
}

/// IPv4 header without options.
const IPV4_HEADER_LEN: u32 = 20;
/// IPv6 fixed header.
const IPV6_HEADER_LEN: u32 = 40;
/// The Ethernet header a tap's MTU does not count.
const ETH_HLEN: u32 = 14;
/// ETH_DATA_LEN: the underlay MTU the kernel assumes when it finds no route.
const ETH_DATA_LEN: u32 = 1500;
/// IP_MAX_MTU: the largest IPv4 packet (the outer total length).
const IP_MAX_MTU: u32 = 65535;
/// IPV6_MIN_MTU: ip6gre never sets a routed default below it.
const IPV6_MIN_MTU: u32 = 1280;
/// The tunnel encapsulation limit destination option ip6gre reserves room
/// for unless `encaplimit none` (RFC 2473: 8 bytes with its padding).
const ENCAP_LIMIT_OPTION_LEN: u32 = 8;

/// A GRE tunnel's configuration: the parameters of `ip link add NAME type
/// gre|ip6gre|gretap|ip6gretap ...` after iproute2's defaults.
///
/// ```
/// use fibre_fib::{GreKind, GreSpec, Inheritable};
/// let mut spec = GreSpec::new(GreKind::Gre, "198.51.100.2".parse().unwrap());
/// spec.okey = Some(5);
/// spec.ikey = Some(5);
/// assert_eq!(spec.ttl, Inheritable::Inherit);
/// assert_eq!(spec.gre_header_len(), 8);
/// // ip_tunnel_bind_dev: underlay MTU - outer IPv4 header - GRE header.
/// assert_eq!(spec.default_mtu(Some(1500)), 1500 - 20 - 8);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GreSpec {
    /// Underlay family and payload.
    pub kind: GreKind,
    /// The far end (`remote`); fibre requires one (no point-to-multipoint).
    pub remote: IpAddr,
    /// Our end (`local`); the underlay route's source when absent.
    pub local: Option<IpAddr>,
    /// Outer TTL/hop limit (`ttl inherit`/`ttl 0`: the inner one; ip6gre
    /// defaults to 64).
    pub ttl: Inheritable,
    /// Outer TOS/traffic class (default 0; `tos inherit` copies it).
    pub tos: Inheritable,
    /// Key expected on receipt (`ikey`/`key`).
    pub ikey: Option<u32>,
    /// Key sent (`okey`/`key`).
    pub okey: Option<u32>,
    /// Require a checksum on receipt (`icsum`/`csum`).
    pub icsum: bool,
    /// Send a checksum (`ocsum`/`csum`).
    pub ocsum: bool,
    /// Drop out-of-order packets on receipt (`iseq`/`seq`).
    pub iseq: bool,
    /// Send sequence numbers (`oseq`/`seq`).
    pub oseq: bool,
}

impl GreSpec {
    /// A tunnel of `kind` to `remote` with iproute2's defaults: TTL
    /// inherited for gre (ttl 0), hop limit 64 for ip6gre
    /// (`DEFAULT_TNL_HOP_LIMIT`), TOS 0, no key, checksum or sequence
    /// numbers.
    pub fn new(kind: GreKind, remote: IpAddr) -> GreSpec {
        GreSpec {
            kind,
            remote,
            local: None,
            ttl: match kind.family() {
                Family::V4 => Inheritable::Inherit,
                Family::V6 => Inheritable::Fixed(64),
            },
            tos: Inheritable::Fixed(0),
            ikey: None,
            okey: None,
            icsum: false,
            ocsum: false,
            iseq: false,
            oseq: false,
        }
    }

    /// The GRE header sent (the kernel's `gre_calc_hlen` of the output
    /// flags): 4 bytes, plus 4 for each of checksum, key and sequence.
    pub fn gre_header_len(&self) -> u32 {
        4 + 4 * u32::from(self.ocsum)
            + 4 * u32::from(self.okey.is_some())
            + 4 * u32::from(self.oseq)
    }

    /// Bytes the tunnel prepends: outer IP header plus GRE header (for the
    /// tap kinds the inner Ethernet header is payload, not overhead).
    pub fn overhead(&self) -> u32 {
        let outer = match self.kind.family() {
            Family::V4 => IPV4_HEADER_LEN,
            Family::V6 => IPV6_HEADER_LEN,
        };
        outer + self.gre_header_len()
    }

    /// What the MTU must leave room for besides the inner packet: the
    /// overhead, a tap's Ethernet header, and for ip6gre the encapsulation
    /// limit option the kernel reserves room for by default.
    fn mtu_reserve(&self) -> u32 {
        let tap = if self.kind.is_tap() { ETH_HLEN } else { 0 };
        let encap_limit = match self.kind.family() {
            Family::V4 => 0,
            Family::V6 => ENCAP_LIMIT_OPTION_LEN,
        };
        self.overhead() + tap + encap_limit
    }

    /// Whether the MTU follows the device the route to `remote` leaves
    /// by. gre always looks the route up (`ip_tunnel_bind_dev`); ip6gre
    /// only when it can transmit, i.e. has a `local` address
    /// (`ip6gre_tnl_link_config_route` under `IP6_TNL_F_CAP_XMIT`).
    pub fn mtu_follows_route(&self) -> bool {
        match self.kind.family() {
            Family::V4 => true,
            Family::V6 => self.local.is_some(),
        }
    }

    /// The MTU the kernel gives a new tunnel when `mtu` is not given:
    /// `underlay_mtu` is the MTU of the device the route to `remote` leaves
    /// by, `None` when there is no such route (or, for ip6gre, no `local`;
    /// see [`GreSpec::mtu_follows_route`]), and then 1500 is assumed.
    ///
    /// gre (`ip_tunnel_bind_dev`): min(underlay, 65535) minus the outer
    /// IPv4 and GRE headers (and 14 for gretap), at least 68. ip6gre
    /// (`ip6gre_tunnel_init_common`, `ip6gre_tnl_link_config_route`): the
    /// underlay minus the outer IPv6 and GRE headers, the 8-byte
    /// encapsulation limit option and 14 for ip6gretap; at least 1280 when
    /// routed.
    ///
    /// ```
    /// use fibre_fib::{GreKind, GreSpec};
    /// let gre = GreSpec::new(GreKind::Gre, "198.51.100.2".parse().unwrap());
    /// assert_eq!(gre.default_mtu(None), 1476);
    /// assert_eq!(gre.default_mtu(Some(9000)), 8976);
    /// let tap = GreSpec::new(GreKind::GreTap, "198.51.100.2".parse().unwrap());
    /// assert_eq!(tap.default_mtu(None), 1462);
    /// let six = GreSpec::new(GreKind::Ip6Gre, "2001:db8::2".parse().unwrap());
    /// assert_eq!(six.default_mtu(None), 1448);
    /// ```
    pub fn default_mtu(&self, underlay_mtu: Option<u32>) -> u32 {
        let reserve = self.mtu_reserve();
        match (self.kind.family(), underlay_mtu) {
            (Family::V4, underlay) => {
                let base = underlay.unwrap_or(ETH_DATA_LEN).min(IP_MAX_MTU);
                base.saturating_sub(reserve).max(Self::MIN_MTU)
            }
            (Family::V6, Some(underlay)) => underlay.saturating_sub(reserve).max(IPV6_MIN_MTU),
            (Family::V6, None) => ETH_DATA_LEN - reserve,
        }
    }

    /// The smallest MTU a tunnel takes (`ETH_MIN_MTU`).
    pub const MIN_MTU: u32 = 68;

    /// The largest MTU: the largest inner packet whose outer packet still
    /// fits the outer header's 16-bit length (for gre the kernel's
    /// `IP_MAX_MTU - t_hlen`, minus 14 for gretap).
    pub fn max_mtu(&self) -> u32 {
        let outer_max = match self.kind.family() {
            Family::V4 => IP_MAX_MTU,
            Family::V6 => IPV6_HEADER_LEN + IP_MAX_MTU,
        };
        let tap = if self.kind.is_tap() { ETH_HLEN } else { 0 };
        outer_max - self.overhead() - tap
    }

    /// Whether the kernel sets `IFF_POINTOPOINT`: gre with a remote (fibre
    /// always has one); ip6gre when it can both send and receive, i.e. with
    /// `local` and `remote`; never for the tap kinds (Ethernet devices).
    pub fn is_point_to_point(&self) -> bool {
        !self.kind.is_tap() && (self.kind.family() == Family::V4 || self.local.is_some())
    }

    /// True when another tunnel would receive the same packets: the kernel
    /// refuses a second tunnel of the same type with the same local,
    /// remote and input key (`ip_tunnel_find`, `ip6gre_tunnel_find`:
    /// "File exists").
    pub fn same_endpoints(&self, other: &GreSpec) -> bool {
        self.kind == other.kind
            && self.remote == other.remote
            && self.local == other.local
            && self.ikey == other.ikey
    }
}

/// Why a tunnel does not fit the router it is configured on. The kernel
/// accepts all of these (a foreign `local` sends packets nobody answers; a
/// loop is caught per packet as "Dead loop on virtual device", a loop
/// through several tunnels by the transmit recursion limit); fibre refuses
/// them when a configuration is loaded (see [`crate::config::apply_str`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TunnelError {
    /// `local` is none of the router's addresses.
    #[error("local address {local} of tunnel {name} is not configured on this router (expected one of its addresses; add it with \"addr add {local}/LEN dev DEV\")")]
    LocalNotOnRouter {
        /// The tunnel.
        name: String,
        /// Its local address.
        local: IpAddr,
    },
    /// The route to `remote` leaves through the tunnel itself.
    #[error("the route to remote {remote} leaves through {name} itself: the tunnel would loop (expected a route to {remote} over another link)")]
    UnderlayLoop {
        /// The tunnel.
        name: String,
        /// Its remote.
        remote: IpAddr,
    },
    /// The route to each tunnel's remote leaves through the next tunnel,
    /// and the last one's through the first: tunnels carrying each other.
    #[error("{}", cycle_message(.hops))]
    UnderlayCycle {
        /// Two or more steps, starting at the tunnel checked; each step's
        /// `via` is the next step's `tunnel`, the last one's the first's.
        hops: Vec<UnderlayHop>,
    },
}

impl TunnelError {
    /// The tunnels the refusal is about: one, or each tunnel of a cycle in
    /// the order the packets would go round.
    ///
    /// ```
    /// use fibre_fib::TunnelError;
    /// let err = TunnelError::UnderlayLoop { name: "gre1".into(), remote: "192.0.2.2".parse().unwrap() };
    /// assert_eq!(err.tunnels(), ["gre1"]);
    /// ```
    pub fn tunnels(&self) -> Vec<&str> {
        match self {
            TunnelError::LocalNotOnRouter { name, .. } | TunnelError::UnderlayLoop { name, .. } => {
                vec![name.as_str()]
            }
            TunnelError::UnderlayCycle { hops } => {
                hops.iter().map(|hop| hop.tunnel.as_str()).collect()
            }
        }
    }
}

/// One step of a tunnel's underlay that leads into another tunnel: the
/// route to `tunnel`'s `remote` leaves through the tunnel `via`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnderlayHop {
    /// The tunnel whose packets take this step.
    pub tunnel: String,
    /// Its remote.
    pub remote: IpAddr,
    /// The destination of the route the remote matched.
    pub route: Prefix,
    /// That route's table.
    pub table: TableId,
    /// The tunnel the route leaves through.
    pub via: String,
}

/// `the routes to the remotes of tunnels g1 -> g2 -> g1 go round: ...`,
/// each step with the route taken, then what was expected.
fn cycle_message(hops: &[UnderlayHop]) -> String {
    let mut round: Vec<&str> = hops.iter().map(|hop| hop.tunnel.as_str()).collect();
    if let Some(first) = hops.first() {
        round.push(&first.tunnel);
    }
    let steps: Vec<String> = hops
        .iter()
        .map(|hop| {
            let table = if hop.table == TABLE_MAIN {
                String::new()
            } else {
                format!(" table {}", table_name(hop.table))
            };
            format!(
                "remote {} of {} leaves through {} (route {}{table})",
                hop.remote, hop.tunnel, hop.via, hop.route
            )
        })
        .collect();
    format!(
        "the routes to the remotes of tunnels {} go round: {}; the tunnels would loop (expected the route to one of these remotes over a link that is not one of these tunnels)",
        round.join(" -> "),
        steps.join(", ")
    )
}

impl GreSpec {
    /// Checks the tunnel `name` against a router: `local` must be one of
    /// its addresses, and the route to `remote` (from `local`) must not
    /// lead back into the tunnel, either directly or through other
    /// tunnels whose own remotes are routed onwards the same way (each
    /// tunnel's underlay is followed with `route get` from its `local`).
    /// A chain of tunnels that ends on any other link is fine
    /// (tunnel-in-tunnel is legal); a loop among other tunnels that this
    /// one merely leads into is left to those tunnels' own checks.
    ///
    /// ```
    /// use fibre_fib::{config, Fib, GreKind, GreSpec, TunnelError};
    /// let mut spec = GreSpec::new(GreKind::Gre, "198.51.100.2".parse().unwrap());
    /// spec.local = Some("192.0.2.1".parse().unwrap());
    /// let err = spec.check_against("gre1", &Fib::new()).unwrap_err();
    /// assert!(matches!(err, TunnelError::LocalNotOnRouter { .. }));
    /// assert!(err.to_string().starts_with("local address 192.0.2.1 of tunnel gre1 is not configured"));
    ///
    /// // g1's remote is routed through g2 and g2's through g1: a loop
    /// // through both (`config::apply_str` refuses such a file, so the
    /// // commands are applied one by one here).
    /// let text = "link add eth0 up type dummy\naddr add 192.0.2.1/24 dev eth0\n\
    ///     link add g1 up type gre remote 10.0.0.2\nlink add g2 up type gre remote 10.0.0.1\n\
    ///     route add 10.0.0.2 dev g2\nroute add 10.0.0.1 dev g1\n";
    /// let mut fib = Fib::new();
    /// for statement in config::parse_str("t", text).statements {
    ///     fib.apply(&statement.command).unwrap();
    /// }
    /// let g1 = GreSpec::new(GreKind::Gre, "10.0.0.2".parse().unwrap());
    /// let err = g1.check_against("g1", &fib).unwrap_err();
    /// assert_eq!(err.tunnels(), ["g1", "g2"]);
    /// assert!(err.to_string().starts_with(
    ///     "the routes to the remotes of tunnels g1 -> g2 -> g1 go round: \
    ///      remote 10.0.0.2 of g1 leaves through g2 (route 10.0.0.2), \
    ///      remote 10.0.0.1 of g2 leaves through g1 (route 10.0.0.1); the tunnels would loop"));
    /// ```
    pub fn check_against(&self, name: &str, router: &Fib) -> Result<(), TunnelError> {
        if let Some(local) = self.local.filter(|_| !self.local_is_ours(router)) {
            return Err(TunnelError::LocalNotOnRouter {
                name: name.to_string(),
                local,
            });
        }
        // Each step adds a tunnel not seen before (a repeat ends the walk),
        // so the walk ends after at most as many steps as there are
        // tunnels, this one included even when the router does not hold
        // it yet.
        let mut hops: Vec<UnderlayHop> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        let (mut tunnel, mut spec) = (name, self);
        loop {
            let Some(hop) = spec.underlay_hop(tunnel, name, router) else {
                return Ok(());
            };
            if hop.via == name {
                if hops.is_empty() {
                    return Err(TunnelError::UnderlayLoop {
                        name: name.to_string(),
                        remote: self.remote,
                    });
                }
                hops.push(hop);
                return Err(TunnelError::UnderlayCycle { hops });
            }
            seen.insert(tunnel);
            if seen.contains(hop.via.as_str()) {
                // A loop among the tunnels further on, which does not
                // come back here: it is refused on those tunnels.
                return Ok(());
            }
            let Some(Link {
                name: next,
                kind: LinkKind::Gre(next_spec),
                ..
            }) = router.link_by_name(&hop.via)
            else {
                return Ok(());
            };
            hops.push(hop);
            (tunnel, spec) = (next, next_spec);
        }
    }

    /// Whether `local`, when given, is one of `router`'s addresses of the
    /// tunnel's family (one hash probe: the router keeps its addresses
    /// hashed, as the kernel's `inet_addr_lst`).
    fn local_is_ours(&self, router: &Fib) -> bool {
        self.local.is_none_or(|local| {
            Family::of(&local) == self.kind.family() && router.local_addrs.contains(&local)
        })
    }

    /// Where the route to this tunnel's remote (from its `local`) leaves
    /// when that is a GRE tunnel of `router` or the tunnel `origin` (which
    /// `router` may not hold yet); `None` when it leaves by another link
    /// or there is no route.
    fn underlay_hop(&self, tunnel: &str, origin: &str, router: &Fib) -> Option<UnderlayHop> {
        let mut request = RouteGetRequest::to(self.remote);
        request.src = self.local;
        let answer = router.route_get(&request).ok()?;
        let via = answer.dev?;
        let is_tunnel = via == origin
            || router
                .link_by_name(&via)
                .is_some_and(|link| matches!(link.kind, LinkKind::Gre(_)));
        is_tunnel.then(|| UnderlayHop {
            tunnel: tunnel.to_string(),
            remote: self.remote,
            route: answer.route.dst,
            table: answer.table,
            via,
        })
    }
}

/// The GRE tunnel `name` of `router`, if it has one.
pub(crate) fn tunnel_of<'a>(router: &'a Fib, name: &str) -> Option<&'a GreSpec> {
    match &router.link_by_name(name)?.kind {
        LinkKind::Gre(spec) => Some(spec),
        _ => None,
    }
}

/// Whether `router`'s tunnel `name` has a `local` that is not one of its
/// addresses: the [`TunnelError::LocalNotOnRouter`] of
/// [`GreSpec::check_against`].
pub(crate) fn local_refused(router: &Fib, name: &str) -> bool {
    tunnel_of(router, name).is_some_and(|spec| !spec.local_is_ours(router))
}

/// Whether [`GreSpec::check_against`] of `router`'s tunnel `round[0]`
/// finds its underlay going round exactly through the tunnels `round`, in
/// that order, back to `round[0]`: [`TunnelError::UnderlayLoop`] for one
/// tunnel, [`TunnelError::UnderlayCycle`] with these tunnels for more. It
/// follows at most `round.len()` routes, where the check of a tunnel
/// nested in a long chain follows them all.
pub(crate) fn goes_round(router: &Fib, round: &[String]) -> bool {
    let Some(first) = round.first() else {
        return false;
    };
    let Some(mut spec) = tunnel_of(router, first) else {
        return false;
    };
    if !spec.local_is_ours(router) {
        return false;
    }
    for (step, tunnel) in round.iter().enumerate() {
        let next = &round[(step + 1) % round.len()];
        match spec.underlay_hop(tunnel, first, router) {
            Some(hop) if hop.via == *next => {}
            _ => return false,
        }
        if step + 1 < round.len() {
            match tunnel_of(router, next) {
                Some(next_spec) => spec = next_spec,
                None => return false,
            }
        }
    }
    true
}

/// What [`GreSpec::check_against`] finds wrong with each tunnel of
/// `router`, in link order, with a loop through several tunnels reported
/// once, by its tunnel of least name (as the others would report it
/// starting elsewhere), and not at all when that tunnel's own `local` is
/// refused instead.
///
/// The same verdicts as checking each tunnel on its own, found in time
/// linear in the tunnels: the route to each tunnel's remote is looked up
/// once, which gives every tunnel at most one next tunnel; a tunnel's
/// underlay goes round back to it exactly when it is on a cycle of that
/// graph, which one walk over the graph marks for all of them.
pub(crate) fn tunnel_errors(router: &Fib) -> Vec<TunnelError> {
    let tunnels: Vec<(&str, &GreSpec)> = router
        .links()
        .filter_map(|link| match &link.kind {
            LinkKind::Gre(spec) => Some((link.name.as_str(), spec)),
            _ => None,
        })
        .collect();
    let position: HashMap<&str, usize> = tunnels
        .iter()
        .enumerate()
        .map(|(at, (name, _))| (*name, at))
        .collect();
    let hops: Vec<Option<(usize, UnderlayHop)>> = tunnels
        .iter()
        .map(|(name, spec)| {
            let hop = spec.underlay_hop(name, name, router)?;
            Some((*position.get(hop.via.as_str())?, hop))
        })
        .collect();
    let next = |at: usize| hops[at].as_ref().map(|(next, _)| *next);
    // The tunnel of least name of each cycle, as `leads[at]`.
    let mut leads = vec![false; tunnels.len()];
    let mut on_path: Vec<Option<usize>> = vec![None; tunnels.len()];
    let mut done = vec![false; tunnels.len()];
    for start in 0..tunnels.len() {
        let mut path = Vec::new();
        let mut at = Some(start);
        while let Some(here) = at.filter(|&here| !done[here] && on_path[here].is_none()) {
            on_path[here] = Some(path.len());
            path.push(here);
            at = next(here);
        }
        if let Some(from) = at.and_then(|here| on_path[here]) {
            let cycle = &path[from..];
            if let Some(&least) = cycle.iter().min_by_key(|&&member| tunnels[member].0) {
                leads[least] = true;
            }
        }
        for here in path {
            on_path[here] = None;
            done[here] = true;
        }
    }
    let mut errors = Vec::new();
    for (at, (name, spec)) in tunnels.iter().enumerate() {
        if let Some(local) = spec.local.filter(|_| !spec.local_is_ours(router)) {
            errors.push(TunnelError::LocalNotOnRouter {
                name: name.to_string(),
                local,
            });
        } else if leads[at] && next(at) == Some(at) {
            errors.push(TunnelError::UnderlayLoop {
                name: name.to_string(),
                remote: spec.remote,
            });
        } else if leads[at] {
            let mut round = Vec::new();
            let mut here = at;
            while let Some((after, hop)) = &hops[here] {
                round.push(hop.clone());
                here = *after;
                if here == at {
                    break;
                }
            }
            errors.push(TunnelError::UnderlayCycle { hops: round });
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: GreKind, remote: &str) -> GreSpec {
        GreSpec::new(kind, remote.parse().unwrap())
    }

    #[test]
    fn header_length_counts_each_output_option() {
        let mut s = spec(GreKind::Gre, "192.0.2.2");
        assert_eq!((s.gre_header_len(), s.overhead()), (4, 24));
        s.ocsum = true;
        s.okey = Some(1);
        s.oseq = true;
        assert_eq!((s.gre_header_len(), s.overhead()), (16, 36));
        // Input options do not change what is sent.
        s.icsum = true;
        s.iseq = true;
        s.ikey = Some(2);
        assert_eq!(s.gre_header_len(), 16);
    }

    #[test]
    fn default_mtu_follows_the_kernel() {
        let mut gre = spec(GreKind::Gre, "192.0.2.2");
        gre.okey = Some(7);
        gre.ocsum = true;
        // 1500 - 20 - (4 + 4 + 4)
        assert_eq!(gre.default_mtu(Some(1500)), 1468);
        // The underlay's MTU is capped at IP_MAX_MTU (lo has 65536).
        assert_eq!(gre.default_mtu(Some(65536)), 65535 - 32);
        // Never under IPV4_MIN_MTU.
        assert_eq!(gre.default_mtu(Some(80)), 68);
        let mut six = spec(GreKind::Ip6Gre, "2001:db8::2");
        assert!(!six.mtu_follows_route());
        six.local = Some("2001:db8::1".parse().unwrap());
        assert!(six.mtu_follows_route());
        assert_eq!(six.default_mtu(Some(9000)), 9000 - 40 - 4 - 8);
        assert_eq!(six.default_mtu(Some(1300)), 1280);
        let tap6 = spec(GreKind::Ip6GreTap, "2001:db8::2");
        assert_eq!(tap6.default_mtu(None), 1500 - 40 - 4 - 8 - 14);
    }

    #[test]
    fn mtu_bounds_and_point_to_point() {
        assert_eq!(spec(GreKind::Gre, "192.0.2.2").max_mtu(), 65511);
        assert_eq!(spec(GreKind::GreTap, "192.0.2.2").max_mtu(), 65497);
        assert_eq!(spec(GreKind::Ip6Gre, "2001:db8::2").max_mtu(), 65531);
        assert!(spec(GreKind::Gre, "192.0.2.2").is_point_to_point());
        assert!(!spec(GreKind::GreTap, "192.0.2.2").is_point_to_point());
        let mut six = spec(GreKind::Ip6Gre, "2001:db8::2");
        assert!(!six.is_point_to_point());
        six.local = Some("2001:db8::1".parse().unwrap());
        assert!(six.is_point_to_point());
    }

    #[test]
    fn endpoints_clash_on_kind_addresses_and_input_key() {
        let a = spec(GreKind::Gre, "192.0.2.2");
        let mut b = a.clone();
        b.ttl = Inheritable::Fixed(9);
        assert!(
            a.same_endpoints(&b),
            "options other than the key do not matter"
        );
        b.ikey = Some(1);
        assert!(!a.same_endpoints(&b));
        assert!(!a.same_endpoints(&spec(GreKind::GreTap, "192.0.2.2")));
    }
}
