//! Parsed rtnetlink messages to the FIB's [`Command`]s: a notification
//! becomes the request the kernel applied (the same `Command` a config
//! line becomes), with the kernel's ifindexes turned into the names the
//! commands use.
//!
//! What the kernel derives itself is left for the FIB to derive the same
//! way: routes of protocol `kernel` (the prefix, local and broadcast
//! routes of addresses, `fe80::/64`, `ff00::/8`) are not applied, the
//! addresses they come from are. What the kernel removes without a
//! notification is removed by the commands that caused it: a link going
//! down or away takes its routes in [`fibre_fib::Fib::apply`], as
//! `fib_disable_ip` and `rt6_sync_down_dev` take them; the routes over a
//! deleted nexthop object are deleted here, one `Route Del` each, as
//! `remove_nexthop` removes them with no RTM_DELROUTE.
//!
//! What fibre does not model is counted by kind in
//! [`Translator::unmodelled`] and skipped; the follower reports each
//! kind once.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;

use fibre_fib::*;

use crate::message::*;
use crate::wire::{NLM_F_APPEND, NLM_F_CREATE, NLM_F_EXCL, NLM_F_REPLACE};

/// `RTPROT_KERNEL`: routes the kernel derives itself.
const RTPROT_KERNEL: u8 = 2;
/// `RTAX_LOCK`, `RTAX_MTU`.
const RTAX_LOCK: u8 = 1;
const RTAX_MTU: u8 = 2;

/// Where a message came from: a dump (the state as it is) or a
/// notification (a change, with the flags of the request it reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A dump reply.
    Dump,
    /// A notification, with its `nlmsg_flags`.
    Notification(u16),
}

/// The key of a route as the kernel identifies it for a delete.
type RouteKey = (TableId, Prefix, u8, Option<u32>);

/// Turns messages into commands, remembering what the messages of a
/// namespace have said so far: link names by ifindex and nexthop objects
/// (with the routes using each).
///
/// ```
/// use fibre_netlink::message::*;
/// use fibre_netlink::{Origin, Translator};
/// use fibre_fib::{Command, Fib};
/// let mut t = Translator::new();
/// let link = LinkMessage { index: 5, link_type: 1, flags: IFF_UP | IFF_RUNNING,
///     name: Some("v0".into()), mtu: Some(1500), kind: Some("veth".into()) };
/// let mut commands = Vec::new();
/// t.translate(&Message::NewLink(link), Origin::Dump, &mut commands);
/// let mut fib = Fib::following_kernel();
/// for c in &commands { fib.apply(c).unwrap(); }
/// assert_eq!(fib.link(5).unwrap().name, "v0");
/// ```
#[derive(Debug, Default, Clone)]
pub struct Translator {
    names: HashMap<u32, String>,
    nexthops: HashMap<u32, NexthopMessage>,
    /// The routes applied through each nexthop object (by the id the
    /// route named, a group or a single nexthop), with the spec applied.
    nexthop_routes: HashMap<u32, BTreeMap<RouteKey, RouteSpec>>,
    unmodelled: BTreeMap<String, u64>,
    /// The paths of each IPv6 route as last announced, in the kernel's
    /// order: an append's announcement lists the new path first, the
    /// kernel keeps it last (see [`route_op`]).
    paths_v6: HashMap<RouteKey, Vec<NexthopSpec>>,
}

impl Translator {
    /// A translator that has seen nothing.
    pub fn new() -> Translator {
        Translator::default()
    }

    /// What was skipped because fibre does not model it, by kind, with
    /// how many messages had it.
    pub fn unmodelled(&self) -> &BTreeMap<String, u64> {
        &self.unmodelled
    }

    /// The name of a link seen so far.
    pub fn link_name(&self, index: u32) -> Option<&str> {
        self.names.get(&index).map(String::as_str)
    }

    /// The nexthop objects seen so far, by id.
    pub fn nexthops(&self) -> &HashMap<u32, NexthopMessage> {
        &self.nexthops
    }

    fn skip(&mut self, what: impl Into<String>) {
        *self.unmodelled.entry(what.into()).or_insert(0) += 1;
    }

    /// Appends to `out` the commands that apply `message` to a FIB in the
    /// state the earlier messages left it.
    pub fn translate(&mut self, message: &Message, origin: Origin, out: &mut Vec<Command>) {
        match message {
            Message::NewLink(m) => self.new_link(m, out),
            Message::DelLink(m) => self.del_link(m, out),
            Message::NewAddr(m) => self.addr(m, true, out),
            Message::DelAddr(m) => self.addr(m, false, out),
            Message::NewRoute(m) => self.route(m, Some(origin), out),
            Message::DelRoute(m) => self.route(m, None, out),
            Message::NewRule(m) => self.rule(m, RuleOp::Add, out),
            Message::DelRule(m) => self.rule(m, RuleOp::Del, out),
            Message::NewNeigh(m) => self.neigh(m, true, out),
            Message::DelNeigh(m) => self.neigh(m, false, out),
            Message::NewNexthop(m) => self.new_nexthop(m, out),
            Message::DelNexthop(m) => self.del_nexthop(m.id, out),
            Message::Done | Message::Error(_) => {}
            Message::Other(kind) => self.skip(format!("message type {kind}")),
        }
    }

    fn new_link(&mut self, m: &LinkMessage, out: &mut Vec<Command>) {
        let Some(name) = m.name.clone().or_else(|| self.names.get(&m.index).cloned()) else {
            self.skip("link announcement without a name (IFLA_IFNAME)");
            return;
        };
        let kind = match (m.kind.as_deref(), m.flags & IFF_LOOPBACK != 0) {
            (_, true) => LinkKind::Loopback,
            (Some("veth"), _) => LinkKind::Veth {
                peer: String::new(),
            },
            (Some("dummy"), _) => LinkKind::Dummy,
            (Some("ifb"), _) => LinkKind::Ifb,
            (other, _) => {
                self.skip(format!(
                    "link kind {} (followed as a plain device)",
                    other.unwrap_or("none")
                ));
                LinkKind::Dummy
            }
        };
        let mtu = m.mtu.unwrap_or(1500);
        self.names.insert(m.index, name.clone());
        let up = m.flags & IFF_UP != 0;
        if !up {
            // nexthop_flush_dev (NETDEV_DOWN): nexthop objects over a link
            // that goes down are removed, with no RTM_DELNEXTHOP.
            self.forget_nexthops_over(m.index, out);
        }
        out.push(Command::KernelLink(KernelLink {
            index: m.index,
            name,
            kind,
            mtu,
            up,
            // The kernel's routes and addrconf react to carrier when
            // linkwatch reports it (NETDEV_CHANGE, `netif_oper_up`), which
            // is when IFF_RUNNING is set; IFF_LOWER_UP comes earlier.
            carrier: up && m.flags & IFF_RUNNING != 0,
        }));
    }

    fn del_link(&mut self, m: &LinkMessage, out: &mut Vec<Command>) {
        self.forget_nexthops_over(m.index, out);
        if let Some(name) = self.names.remove(&m.index) {
            out.push(Command::LinkDel { name });
        }
    }

    /// Drops the nexthop objects over link `index`; their routes go with
    /// the link's own (the FIB removes routes through a link going down).
    fn forget_nexthops_over(&mut self, index: u32, out: &mut Vec<Command>) {
        let gone: Vec<u32> = self
            .nexthops
            .values()
            .filter(|n| n.oif == Some(index))
            .map(|n| n.id)
            .collect();
        for id in gone {
            self.del_nexthop(id, out);
        }
    }

    fn addr(&mut self, m: &AddrMessage, add: bool, out: &mut Vec<Command>) {
        let Some(dev) = self.names.get(&m.index).cloned() else {
            self.skip("address on a link never announced");
            return;
        };
        if add && m.flags & (IFA_F_TENTATIVE | IFA_F_DADFAILED) != 0 {
            // The kernel makes the local route once DAD completes and
            // announces the address again then (addrconf_dad_completed).
            return;
        }
        let (local, peer) = match (m.local, m.address) {
            (Some(local), Some(address)) if local != address => (local, Some(address)),
            (Some(local), _) | (None, Some(local)) => (local, None),
            (None, None) => {
                self.skip("address without IFA_LOCAL or IFA_ADDRESS");
                return;
            }
        };
        let label = m.label.clone().filter(|l| *l != dev);
        let spec = AddressSpec {
            dev,
            local,
            prefix_len: m.prefix_len,
            peer,
            broadcast: m.broadcast,
            scope: Some(Scope(m.scope)),
            noprefixroute: m.flags & IFA_F_NOPREFIXROUTE != 0,
            metric: m.metric,
            label,
            // The kernel checked the flag before it notified; asked again
            // here it could only refuse what the kernel holds.
            mngtmpaddr: false,
        };
        let op = if add { AddrOp::Replace } else { AddrOp::Del };
        out.push(Command::Addr { op, spec });
    }

    fn route(&mut self, m: &RouteMessage, new: Option<Origin>, out: &mut Vec<Command>) {
        if m.flags & RTM_F_CLONED != 0 || m.protocol == RTPROT_KERNEL {
            return;
        }
        let family = match m.family {
            AF_INET => Family::V4,
            AF_INET6 => Family::V6,
            other => return self.skip(format!("route of family {other}")),
        };
        if m.has_src {
            return self.skip("source-specific IPv6 route (RTA_SRC)");
        }
        if m.has_encap {
            return self.skip("route with lightweight tunnel encapsulation (RTA_ENCAP)");
        }
        let Some(kind) = RouteType::from_number(m.kind) else {
            return self.skip(format!("route type {}", m.kind));
        };
        let addr = m.dst.unwrap_or(match family {
            Family::V4 => IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
            Family::V6 => IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED),
        });
        let Ok(dst) = Prefix::new(addr, m.dst_len) else {
            return self.skip("route whose destination has bits past its length");
        };
        let (nexthops, multipath) = match m.nh_id {
            Some(id) => match self.object_paths(id) {
                Some(paths) => paths,
                None => return self.skip("route over a nexthop object never announced"),
            },
            None => {
                let mut paths = Vec::with_capacity(m.paths.len());
                for p in &m.paths {
                    let dev = match p.oif {
                        0 => None,
                        index => match self.names.get(&index) {
                            Some(name) => Some(name.clone()),
                            None => return self.skip("route over a link never announced"),
                        },
                    };
                    paths.push(NexthopSpec {
                        gateway: p.gateway,
                        dev,
                        weight: u16::from(p.hops) + 1,
                        onlink: p.flags & RTNH_F_ONLINK != 0,
                    });
                }
                (paths, m.multipath)
            }
        };
        let locks = m
            .metrics
            .iter()
            .find(|(n, _)| *n == RTAX_LOCK)
            .map_or(0, |(_, v)| *v);
        let mtu = m
            .metrics
            .iter()
            .find(|(n, _)| *n == RTAX_MTU)
            .map(|(_, v)| *v);
        let others: Vec<(u8, u32)> = m
            .metrics
            .iter()
            .copied()
            .filter(|(n, _)| *n != RTAX_LOCK && *n != RTAX_MTU)
            .collect();
        let spec = RouteSpec {
            table: m.table,
            dst,
            tos: m.tos,
            kind,
            protocol: Protocol(m.protocol),
            scope: Scope(m.scope),
            metric: m.priority,
            prefsrc: m.prefsrc,
            mtu,
            mtu_lock: locks & (1 << RTAX_MTU) != 0,
            metrics: RouteMetrics::from_entries(&others, locks & !(1 << RTAX_MTU)),
            nexthops,
            multipath,
        };
        let op = match new {
            None => RouteOp::Del,
            Some(origin) => route_op(family, origin),
        };
        let mut spec = spec;
        if family == Family::V6 && m.nh_id.is_none() {
            self.order_v6_paths(&mut spec, op, new);
        }
        if let Some(id) = m.nh_id {
            let key = (spec.table, spec.dst, spec.tos, spec.metric);
            let routes = self.nexthop_routes.entry(id).or_default();
            if op == RouteOp::Del {
                routes.remove(&key);
            } else {
                routes.insert(key, spec.clone());
            }
        }
        out.push(Command::Route { op, spec });
    }

    /// Keeps an IPv6 route's paths in the kernel's order. Siblings are
    /// always linked at the end of the list (`fib6_add_rt2node`), but the
    /// announcement of an append starts at the new sibling
    /// (`rt6_fill_node` from the route added): the paths the route had
    /// keep their places, the others follow.
    fn order_v6_paths(&mut self, spec: &mut RouteSpec, op: RouteOp, new: Option<Origin>) {
        let key = (spec.table, spec.dst, spec.tos, spec.metric);
        if op == RouteOp::Del {
            if let Some(paths) = self.paths_v6.get_mut(&key) {
                paths.retain(|p| !spec.nexthops.iter().any(|d| same_path(d, p)));
                if paths.is_empty() || !spec.multipath {
                    self.paths_v6.remove(&key);
                }
            }
            return;
        }
        let appended =
            matches!(new, Some(Origin::Notification(flags)) if flags & NLM_F_REPLACE == 0);
        if let (true, Some(old)) = (appended, self.paths_v6.get(&key)) {
            let mut ordered: Vec<NexthopSpec> = old
                .iter()
                .filter_map(|o| spec.nexthops.iter().find(|p| same_path(p, o)).cloned())
                .collect();
            for p in &spec.nexthops {
                if !ordered.iter().any(|o| same_path(o, p)) {
                    ordered.push(p.clone());
                }
            }
            spec.nexthops = ordered;
        }
        self.paths_v6.insert(key, spec.nexthops.clone());
    }

    /// The paths of nexthop object `id`: its own, or its group members'.
    fn object_paths(&self, id: u32) -> Option<(Vec<NexthopSpec>, bool)> {
        let object = self.nexthops.get(&id)?;
        if object.group.is_empty() {
            return Some((vec![self.object_path(object, 1)?], false));
        }
        let paths = object
            .group
            .iter()
            .map(|(member, weight)| self.object_path(self.nexthops.get(member)?, *weight))
            .collect::<Option<Vec<_>>>()?;
        Some((paths, true))
    }

    fn object_path(&self, object: &NexthopMessage, weight: u16) -> Option<NexthopSpec> {
        let dev = match object.oif {
            Some(index) => Some(self.names.get(&index)?.clone()),
            None => None,
        };
        Some(NexthopSpec {
            gateway: object.gateway,
            dev,
            weight,
            onlink: object.flags & RTNH_F_ONLINK != 0,
        })
    }

    fn new_nexthop(&mut self, m: &NexthopMessage, out: &mut Vec<Command>) {
        if m.has_encap {
            self.skip("nexthop object with encapsulation (NHA_ENCAP)");
        }
        if m.blackhole {
            self.skip("blackhole nexthop object");
        }
        let replaced = self.nexthops.insert(m.id, m.clone()).is_some();
        if replaced {
            // `ip nexthop replace`: every route over it, directly or
            // through a group, takes the new paths.
            let users: Vec<u32> = self.users_of(m.id);
            for id in users {
                self.reapply_routes_of(id, out);
            }
        }
    }

    /// `id` and the groups that have it as a member.
    fn users_of(&self, id: u32) -> Vec<u32> {
        let mut users = vec![id];
        users.extend(
            self.nexthops
                .values()
                .filter(|n| n.group.iter().any(|(member, _)| *member == id))
                .map(|n| n.id),
        );
        users
    }

    fn reapply_routes_of(&mut self, id: u32, out: &mut Vec<Command>) {
        let Some((nexthops, multipath)) = self.object_paths(id) else {
            return;
        };
        if let Some(routes) = self.nexthop_routes.get_mut(&id) {
            for spec in routes.values_mut() {
                spec.nexthops.clone_from(&nexthops);
                spec.multipath = multipath;
                out.push(Command::Route {
                    op: RouteOp::Replace,
                    spec: spec.clone(),
                });
            }
        }
    }

    /// `remove_nexthop`: the routes over the nexthop go without an
    /// RTM_DELROUTE; groups lose it as a member (`remove_nh_grp_entry`),
    /// and a group left empty goes as well.
    fn del_nexthop(&mut self, id: u32, out: &mut Vec<Command>) {
        if self.nexthops.remove(&id).is_none() {
            return;
        }
        for (_, spec) in self.nexthop_routes.remove(&id).unwrap_or_default() {
            out.push(Command::Route {
                op: RouteOp::Del,
                spec,
            });
        }
        let groups: Vec<u32> = self
            .nexthops
            .values()
            .filter(|n| n.group.iter().any(|(member, _)| *member == id))
            .map(|n| n.id)
            .collect();
        for group in groups {
            let object = self.nexthops.get_mut(&group).expect("listed");
            object.group.retain(|(member, _)| *member != id);
            if object.group.is_empty() {
                self.del_nexthop(group, out);
            } else {
                self.reapply_routes_of(group, out);
            }
        }
    }

    fn rule(&mut self, m: &RuleMessage, op: RuleOp, out: &mut Vec<Command>) {
        let family = match m.family {
            AF_INET => Family::V4,
            AF_INET6 => Family::V6,
            other => return self.skip(format!("rule of family {other}")),
        };
        let mut spec = RuleSpec::new(family);
        spec.priority = m.priority.or(Some(0));
        spec.invert = m.flags & FIB_RULE_INVERT != 0;
        (spec.from, spec.written_addrs.0) = selector(m.src, m.src_len);
        (spec.to, spec.written_addrs.1) = selector(m.dst, m.dst_len);
        spec.iif.clone_from(&m.iif);
        spec.oif.clone_from(&m.oif);
        if m.fwmark.is_some() || m.fwmask.is_some() {
            spec.fwmark = Some((m.fwmark.unwrap_or(0), m.fwmask.unwrap_or(0)));
        }
        spec.tos = m.tos;
        spec.action = Some(match m.action {
            1 => RuleAction::Lookup(m.table),
            2 => RuleAction::Goto(m.goto.unwrap_or(0)),
            3 => RuleAction::Nop,
            6 => RuleAction::Blackhole,
            7 => RuleAction::Unreachable,
            8 => RuleAction::Prohibit,
            other => RuleAction::Other(other),
        });
        if m.action != 1 {
            spec.table_beside_action = m.table;
        }
        // fib_nl_fill_rule puts both always; -1 is "not given".
        spec.suppress_prefixlength = m.suppress_prefixlength.filter(|&v| v != u32::MAX);
        spec.suppress_ifgroup = m.suppress_ifgroup.filter(|&v| v != u32::MAX);
        spec.protocol = m.protocol.filter(|p| *p != 0).map(Protocol);
        spec.l3mdev = m.l3mdev;
        spec.uid_range = m.uid_range;
        spec.ip_proto = m.ip_proto.unwrap_or(0);
        spec.sport_range = m.sport_range;
        spec.dport_range = m.dport_range;
        spec.tun_id = m.tun_id.unwrap_or(0);
        spec.realms = m.realms;
        out.push(Command::Rule { op, spec });
    }

    fn neigh(&mut self, m: &NeighMessage, new: bool, out: &mut Vec<Command>) {
        let state = match m.state {
            NUD_PERMANENT => NudState::Permanent,
            _ => {
                // Reachable, stale, ...: the kernel's own resolution, which
                // fibre does itself on its links; NOARP entries are the
                // kernel's for multicast groups it joined.
                return self.skip("dynamic neighbour entry (fibre resolves its own)");
            }
        };
        let Some(dev) = self.names.get(&m.index).cloned() else {
            return self.skip("neighbour on a link never announced");
        };
        if m.dst.is_none() {
            return self.skip("neighbour without NDA_DST");
        }
        let spec = NeighSpec {
            dev,
            addr: m.dst,
            lladdr: m.lladdr.clone(),
            state,
            router: m.flags & NTF_ROUTER != 0,
        };
        let op = if new { NeighOp::Replace } else { NeighOp::Del };
        out.push(Command::Neigh { op, spec });
    }
}

/// The same gateway over the same device (the weight may differ).
fn same_path(a: &NexthopSpec, b: &NexthopSpec) -> bool {
    a.gateway == b.gateway && a.dev == b.dev
}

/// A rule's `from`/`to`: the prefix it matches and the address as written.
fn selector(addr: Option<IpAddr>, len: u8) -> (Option<Prefix>, Option<IpAddr>) {
    match addr {
        Some(addr) if len > 0 => (Some(Prefix::containing(addr, len)), Some(addr)),
        _ => (None, None),
    }
}

/// The operation a route announcement stands for.
///
/// IPv4 (`fib_table_insert`): the notification carries the flags that
/// tell the request apart: `NLM_F_REPLACE` for a replace or change,
/// `NLM_F_CREATE|NLM_F_APPEND` for an append, `NLM_F_CREATE|NLM_F_EXCL`
/// for a route new to its key, `NLM_F_CREATE` alone for a prepend; a dump
/// lists routes of one key in order, so each is appended.
///
/// IPv6 (`inet6_rt_notify`, `ip6_route_mpath_notify`): every announcement
/// carries the whole route, all its siblings in RTA_MULTIPATH, so it
/// replaces what the FIB holds for the route's key.
pub fn route_op(family: Family, origin: Origin) -> RouteOp {
    match (family, origin) {
        (Family::V6, _) => RouteOp::Replace,
        (Family::V4, Origin::Dump) => RouteOp::Append,
        (Family::V4, Origin::Notification(flags)) => {
            if flags & NLM_F_REPLACE != 0 {
                RouteOp::Replace
            } else if flags & NLM_F_APPEND != 0 {
                RouteOp::Append
            } else if flags & NLM_F_EXCL != 0 || flags & NLM_F_CREATE == 0 {
                RouteOp::Add
            } else {
                RouteOp::Prepend
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(index: u32, name: &str) -> Message {
        Message::NewLink(LinkMessage {
            index,
            link_type: 1,
            flags: IFF_UP | IFF_RUNNING,
            name: Some(name.into()),
            mtu: Some(1500),
            kind: Some("veth".into()),
        })
    }

    fn route_v6(paths: &[(&str, u32)], protocol: u8) -> RouteMessage {
        RouteMessage {
            family: AF_INET6,
            dst_len: 48,
            src_len: 0,
            tos: 0,
            table: TABLE_MAIN,
            protocol,
            scope: 0,
            kind: 1,
            flags: 0,
            dst: Some("2001:db8:10::".parse().unwrap()),
            priority: Some(1024),
            prefsrc: None,
            metrics: Vec::new(),
            paths: paths
                .iter()
                .map(|(gw, oif)| PathMessage {
                    oif: *oif,
                    gateway: Some(gw.parse().unwrap()),
                    flags: 0,
                    hops: 0,
                })
                .collect(),
            multipath: paths.len() > 1,
            nh_id: None,
            has_src: false,
            has_encap: false,
        }
    }

    fn gateways(command: &Command) -> Vec<String> {
        let Command::Route { spec, .. } = command else {
            panic!("not a route: {command:?}")
        };
        spec.nexthops
            .iter()
            .map(|n| n.gateway.unwrap().to_string())
            .collect()
    }

    #[test]
    fn ipv4_notification_flags_name_the_request() {
        let op = |flags| route_op(Family::V4, Origin::Notification(flags));
        assert_eq!(op(NLM_F_CREATE | NLM_F_EXCL), RouteOp::Add);
        assert_eq!(op(NLM_F_REPLACE), RouteOp::Replace);
        assert_eq!(op(NLM_F_CREATE | NLM_F_APPEND), RouteOp::Append);
        assert_eq!(op(NLM_F_CREATE), RouteOp::Prepend);
        assert_eq!(route_op(Family::V4, Origin::Dump), RouteOp::Append);
        assert_eq!(
            route_op(Family::V6, Origin::Notification(NLM_F_CREATE)),
            RouteOp::Replace
        );
    }

    #[test]
    fn an_ipv6_append_keeps_the_old_paths_first() {
        let mut t = Translator::new();
        let mut out = Vec::new();
        t.translate(&link(2, "v0"), Origin::Dump, &mut out);
        t.translate(&link(3, "v1"), Origin::Dump, &mut out);
        out.clear();
        let one = route_v6(&[("2001:db8::2", 2)], 3);
        t.translate(&Message::NewRoute(one), Origin::Dump, &mut out);
        // The append's announcement starts at the new sibling.
        let both = route_v6(&[("2001:db8:1::2", 3), ("2001:db8::2", 2)], 3);
        let flags = NLM_F_CREATE | NLM_F_APPEND;
        t.translate(
            &Message::NewRoute(both.clone()),
            Origin::Notification(flags),
            &mut out,
        );
        assert_eq!(gateways(&out[1]), ["2001:db8::2", "2001:db8:1::2"]);
        // A replace's announcement is in the kernel's order already.
        t.translate(
            &Message::NewRoute(both),
            Origin::Notification(NLM_F_REPLACE),
            &mut out,
        );
        assert_eq!(gateways(&out[2]), ["2001:db8:1::2", "2001:db8::2"]);
    }

    #[test]
    fn what_the_kernel_derives_or_fibre_does_not_model_is_not_applied() {
        let mut t = Translator::new();
        let mut out = Vec::new();
        t.translate(&link(2, "v0"), Origin::Dump, &mut out);
        out.clear();
        // Protocol kernel: derived from addresses by the FIB itself.
        t.translate(
            &Message::NewRoute(route_v6(&[("fe80::1", 2)], 2)),
            Origin::Dump,
            &mut out,
        );
        let mut sourced = route_v6(&[("2001:db8::2", 2)], 3);
        sourced.has_src = true;
        t.translate(&Message::NewRoute(sourced.clone()), Origin::Dump, &mut out);
        t.translate(&Message::NewRoute(sourced), Origin::Dump, &mut out);
        let tentative = AddrMessage {
            family: AF_INET6,
            prefix_len: 64,
            flags: IFA_F_TENTATIVE,
            scope: 0,
            index: 2,
            local: None,
            address: Some("2001:db8::1".parse().unwrap()),
            broadcast: None,
            label: None,
            metric: None,
        };
        t.translate(&Message::NewAddr(tentative), Origin::Dump, &mut out);
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(
            t.unmodelled().get("source-specific IPv6 route (RTA_SRC)"),
            Some(&2)
        );
    }
}
