//! The FIB state and the kernel's behaviour on it.
//!
//! [`Fib`] holds links, addresses, per-table route indexes and the policy
//! rules of one network namespace. The behaviour lives in one module per
//! concern: `links`, `addrs` (with the implicit routes addresses make),
//! `route_ops` (add/replace/append/prepend/change/del with the kernel's
//! refusals), `rules`, `lookup` (`fib_lookup`/`fib_table_lookup`),
//! `route_get` (`ip route get`), `multipath`, `srcsel` (source address
//! selection), `batch` (the allocation-free data-path lookup) and `import`.
//!
//! Settings the model assumes (as the kernel differential test sets them):
//! `ip_forward` and IPv6 `forwarding` on, `rp_filter` 0, `promote_secondaries`
//! 0, `keep_addr_on_down` 0, `ignore_routes_with_linkdown` 0, every link in
//! group 0.
//!
//! Kernel behaviours not modelled:
//! - `fib_select_default`: with several equal-metric IPv4 default routes the
//!   kernel rotates between them by neighbour state; the model takes the first;
//! - neighbour reachability (IPv6 `rt6_check_neigh`, router preference),
//!   route caches, PMTU exceptions and redirects (those are `fibre-route`'s),
//!   nexthop objects (`ip nexthop`),
//!   VRF/l3mdev, uid/ipproto/port rule selectors;
//! - IPv6 source selection is reduced to RFC 6724 rules 1, 2, 5 and 8 (no
//!   labels, preferences, privacy or deprecated addresses), so a `prefsrc`
//!   may differ from the kernel's when several global addresses compete;
//! - the multipath hash uses its own function (the kernel seeds its hash
//!   randomly per boot, so only the set of paths is comparable);
//! - MAC addresses: the model derives `02:fb:<ifindex>` per link (the kernel's
//!   are random), so IPv6 link-local addresses differ, their routes do not.

use std::collections::BTreeMap;
use std::net::IpAddr;

use crate::command::*;
use crate::error::*;
use crate::read::multipath::MultipathHashPolicy;
use crate::table::Table;
use crate::types::*;

/// Settings the kernel keeps as sysctls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FibSettings {
    /// `net.ipv4.fib_multipath_hash_policy` (0: L3, 1: L4).
    pub multipath_hash_policy_v4: MultipathHashPolicy,
    /// `net.ipv6.fib_multipath_hash_policy` (0: L3, 1: L4).
    pub multipath_hash_policy_v6: MultipathHashPolicy,
    /// Seed of the multipath hash (the kernel's is random per boot).
    pub multipath_hash_seed: u64,
}

impl Default for FibSettings {
    fn default() -> Self {
        Self {
            multipath_hash_policy_v4: MultipathHashPolicy::L3,
            multipath_hash_policy_v6: MultipathHashPolicy::L3,
            multipath_hash_seed: 0x5eed_f1b2_e000_0001,
        }
    }
}

/// The whole routing state of one router (one network namespace).
///
/// ```
/// use fibre_fib::*;
/// let mut fib = Fib::new();
/// fib.apply(&Command::LinkAdd { name: "d0".into(), kind: LinkKind::Ifb, mtu: None }).unwrap();
/// fib.apply(&Command::LinkSet { name: "d0".into(), up: Some(true), mtu: None }).unwrap();
/// fib.apply(&Command::Addr {
///     op: AddrOp::Add,
///     spec: AddressSpec {
///         dev: "d0".into(), local: "10.0.0.1".parse().unwrap(), prefix_len: 24,
///         peer: None, broadcast: None, scope: None, noprefixroute: false, metric: None, label: None, mngtmpaddr: false,
///     },
/// }).unwrap();
/// let answer = fib.route_get(&RouteGetRequest::to("10.0.0.7".parse().unwrap())).unwrap();
/// assert_eq!(answer.dev.as_deref(), Some("d0"));
/// assert_eq!(answer.prefsrc, Some("10.0.0.1".parse().unwrap()));
/// ```
#[derive(Debug, Clone)]
pub struct Fib {
    /// Links by index.
    pub(crate) links: imbl::OrdMap<LinkIndex, Link>,
    /// The index of each link by name, kept by `link_add` and `link_del`:
    /// a name is looked up by every command naming a device, so it is
    /// hashed as the kernel's `dev_get_by_name` hashes it (`dev_name_hash`)
    /// rather than found by a walk of the links.
    pub(crate) link_names: imbl::HashMap<String, LinkIndex>,
    /// The links that have ever been up. Until a link first comes up no
    /// path through it can be dead or marked linkdown (a route through a
    /// down link is refused, except a host-scope one, which carries
    /// neither flag), so its first `up` need not visit every route.
    pub(crate) been_up: imbl::HashSet<LinkIndex>,
    /// The last ifindex handed out (the kernel allocates cyclically upwards).
    pub(crate) last_ifindex: LinkIndex,
    /// IPv4 addresses per link, in the kernel's `ifa_list` order.
    pub(crate) addrs_v4: imbl::OrdMap<LinkIndex, Vec<Address>>,
    /// IPv6 addresses per link, in the kernel's list order.
    pub(crate) addrs_v6: imbl::OrdMap<LinkIndex, Vec<Address>>,
    /// Every address of `addrs_v4` and `addrs_v6`, hashed: kept by the
    /// functions that change those lists.
    pub(crate) local_addrs: crate::local_addrs::LocalAddrs,
    /// Routing tables by id.
    pub(crate) tables: BTreeMap<TableId, Table>,
    /// Creation counter for tables (dump order within a hash bucket).
    pub(crate) table_seq: u64,
    /// IPv4 rules in priority order.
    pub(crate) rules_v4: Vec<Rule>,
    /// IPv6 rules in priority order.
    pub(crate) rules_v6: Vec<Rule>,
    /// An IPv4 rule was ever added or deleted (`fib_has_custom_rules`,
    /// set by `fib4_rule_configure` and `fib4_rule_delete`: sticky, as in
    /// the kernel); until then local and main are one merged table.
    pub(crate) custom_rules_v4: bool,
    /// An IPv6 rule was ever added (`fib6_has_custom_rules`, set by
    /// `fib6_rule_configure` only: a delete leaves it); until then IPv6
    /// lookups are local then main whatever the rules say.
    pub(crate) custom_rules_v6: bool,
    /// A `local` route was added by hand (`fib_has_custom_local_routes`).
    pub(crate) custom_local_routes: bool,
    /// Sysctl-like settings.
    pub(crate) settings: FibSettings,
    /// IPv4 paths whose gateway resolved to one of our own addresses when
    /// the route was made (nexthop scope host): the kernel does not use
    /// such a gateway as a gateway (`rt_uses_gateway` is 0).
    pub(crate) host_scope_gateways: imbl::HashSet<HostGatewayKey>,
    /// Route cache classes handed out, by (`prefsrc`, `mtu`): never taken
    /// back, so that a class names the same attributes for the FIB's life
    /// (and in every version a shared FIB publishes).
    pub(crate) cache_classes: imbl::HashMap<(Option<IpAddr>, Option<u32>, bool), u16>,
    /// Links whose MTU was changed below 68: the kernel destroyed their
    /// IPv4 state (`inetdev_event`, NETDEV_CHANGEMTU) until the MTU is
    /// changed back to 68 or more.
    pub(crate) ipv4_off: std::collections::BTreeSet<LinkIndex>,
    /// The FIB follows a kernel ([`Fib::following_kernel`]): the kernel
    /// announces the addresses it derives (lo's, IPv6 link-locals), so
    /// they are not derived here, and links carry the announced carrier.
    pub(crate) follows_kernel: bool,
    /// The carrier the kernel announced for each followed link.
    pub(crate) announced_carrier: imbl::HashMap<LinkIndex, bool>,
    /// Neighbour entries by (link, address) (see `write/neighs.rs`).
    pub(crate) neighbours: imbl::OrdMap<(LinkIndex, IpAddr), crate::write::neighs::Neighbour>,
}

/// `BTreeMap::retain` for a persistent ordered map (which has none): the
/// entries `keep` refuses are removed one by one, each copying the path
/// to it from any tree a clone still shares.
pub(crate) fn retain_ord<K: Ord + Clone, V: Clone>(
    map: &mut imbl::OrdMap<K, V>,
    mut keep: impl FnMut(&K, &V) -> bool,
) {
    let gone: Vec<K> = map
        .iter()
        .filter(|(k, v)| !keep(k, v))
        .map(|(k, _)| k.clone())
        .collect();
    for k in &gone {
        map.remove(k);
    }
}

/// Identifies one path of one IPv4 route.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct HostGatewayKey {
    pub table: TableId,
    pub dst: Prefix,
    pub tos: u8,
    pub metric: u32,
    pub gateway: std::net::IpAddr,
    pub dev: Option<LinkIndex>,
}

impl HostGatewayKey {
    /// The key of path `nh` of `route`.
    pub(crate) fn of(route: &Route, nh: &Nexthop) -> Option<Self> {
        Some(Self {
            table: route.table,
            dst: route.dst,
            tos: route.tos,
            metric: route.metric,
            gateway: nh.gateway?,
            dev: nh.dev,
        })
    }
}

impl Default for Fib {
    fn default() -> Self {
        Self::new()
    }
}

impl Fib {
    /// A fresh router: `lo` (index 1, down, no addresses), the default rules
    /// 0 (local), 32766 (main), 32767 (default, IPv4 only) and empty tables,
    /// as in a new network namespace.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let fib = Fib::new();
    /// assert_eq!(fib.link(1).unwrap().name, "lo");
    /// assert_eq!(fib.rules(Family::V4).len(), 3);
    /// assert_eq!(fib.rules(Family::V6).len(), 2);
    /// ```
    pub fn new() -> Fib {
        let mut links = imbl::OrdMap::new();
        links.insert(
            LOOPBACK_INDEX,
            Link {
                index: LOOPBACK_INDEX,
                name: "lo".into(),
                kind: LinkKind::Loopback,
                mtu: 65536,
                up: false,
                carrier: false,
            },
        );
        Fib {
            ipv4_off: Default::default(),
            links,
            link_names: imbl::HashMap::from_iter([("lo".to_string(), LOOPBACK_INDEX)]),
            been_up: imbl::HashSet::new(),
            last_ifindex: LOOPBACK_INDEX,
            addrs_v4: imbl::OrdMap::new(),
            addrs_v6: imbl::OrdMap::new(),
            local_addrs: Default::default(),
            tables: BTreeMap::new(),
            table_seq: 0,
            rules_v4: crate::write::rules::default_rules(Family::V4),
            rules_v6: crate::write::rules::default_rules(Family::V6),
            custom_rules_v4: false,
            custom_rules_v6: false,
            custom_local_routes: false,
            settings: FibSettings::default(),
            host_scope_gateways: imbl::HashSet::new(),
            cache_classes: imbl::HashMap::new(),
            follows_kernel: false,
            announced_carrier: imbl::HashMap::new(),
            neighbours: imbl::OrdMap::new(),
        }
    }

    /// A fresh router that follows a kernel's announcements (rtnetlink):
    /// as [`Fib::new`], but the addresses the kernel derives itself (lo's
    /// 127.0.0.1/8 and ::1, IPv6 link-locals) are left to the kernel's
    /// RTM_NEWADDR, and links take their carrier from
    /// [`Command::KernelLink`]. The routes derived from addresses (prefix,
    /// local, broadcast) are still derived here, as the kernel derives them.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let mut fib = Fib::following_kernel();
    /// let lo = KernelLink { index: 1, name: "lo".into(), kind: LinkKind::Loopback, mtu: 65536, up: true, carrier: true };
    /// fib.apply(&Command::KernelLink(lo)).unwrap();
    /// assert!(fib.addresses(None).is_empty());
    /// ```
    pub fn following_kernel() -> Fib {
        Fib {
            follows_kernel: true,
            ..Fib::new()
        }
    }

    /// The route cache class of routes with `prefsrc` and `mtu` (locked or
    /// not) ([`Route::cache_class`]), handed out on first use.
    pub(crate) fn cache_class(
        &mut self,
        prefsrc: Option<IpAddr>,
        mtu: Option<u32>,
        mtu_lock: bool,
    ) -> u16 {
        if prefsrc.is_none() && mtu.is_none() {
            return CACHE_CLASS_PLAIN;
        }
        let next = self.cache_classes.len() + 1;
        *self
            .cache_classes
            .entry((prefsrc, mtu, mtu_lock))
            .or_insert_with(|| u16::try_from(next).unwrap_or(CACHE_CLASS_UNSHARED))
    }

    /// The `mtu` metric of the routes of cache class `class` (the class a
    /// data-path answer carries, [`crate::Forward::cache_class`]) and
    /// whether it is locked (`mtu lock`): what `ip_dst_mtu_maybe_forward`
    /// reads (`dst_metric_raw(dst, RTAX_MTU)`) before the device's MTU.
    /// `None` for routes without the metric, and for
    /// [`CACHE_CLASS_UNSHARED`], whose routes need not share one.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let (fib, _) = config::apply_str(&Fib::new(), "r.conf",
    ///     "link add d0 type ifb\nlink set d0 up\naddr add 10.0.0.1/24 dev d0\n\
    ///      route add 192.0.2.0/24 via 10.0.0.9 mtu lock 1300\n", false).unwrap();
    /// let key = FlowKeyV4 { dst: u32::from_be_bytes([192, 0, 2, 1]), ..Default::default() };
    /// let answer = fib.lookup_output_v4(&key).unwrap();
    /// assert_eq!(fib.class_mtu(answer.cache_class), Some((1300, true)));
    /// assert_eq!(fib.class_mtu(CACHE_CLASS_PLAIN), None);
    /// ```
    pub fn class_mtu(&self, class: u16) -> Option<(u32, bool)> {
        if class == CACHE_CLASS_PLAIN || class == CACHE_CLASS_UNSHARED {
            return None;
        }
        self.cache_classes
            .iter()
            .find(|(_, c)| **c == class)
            .and_then(|((_, mtu, lock), _)| mtu.map(|m| (m, *lock)))
    }

    /// Carries out one request as the kernel would, or refuses it with the
    /// kernel's error and, with two exceptions the kernel shares, changes
    /// nothing visible: an IPv4 route add creates its table before
    /// validating the route (an empty table shows only in a later delete's
    /// error), and an IPv6 multipath `route del` removes the paths it finds
    /// before refusing the first it does not (`ip6_route_multipath_del`:
    /// "No such process"), so a refused route command may have changed its
    /// prefix's routes.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let mut fib = Fib::new();
    /// let err = fib.apply(&Command::LinkDel { name: "eth9".into() }).unwrap_err();
    /// assert_eq!(err.to_string(), "Cannot find device \"eth9\"");
    /// ```
    pub fn apply(&mut self, cmd: &Command) -> Result<(), KernelError> {
        let res = match cmd {
            Command::LinkAdd { name, kind, mtu } => self.link_add(name, kind, *mtu),
            Command::LookUp { name, refusal } => match self.link_by_name(name) {
                Some(_) => Ok(()),
                None => Err(KernelError {
                    from_iproute2: true,
                    ..KernelError::with_extack(Errno::NoDev, refusal.clone())
                }),
            },
            Command::LinkSet { name, up, mtu } => self.link_set(name, *up, *mtu),
            Command::KernelLink(link) => self.kernel_link(link),
            Command::LinkDel { name } => self.link_del(name),
            Command::Addr { op, spec } => self.addr_apply(*op, spec),
            Command::Route { op, spec } => match self.missing_nexthop_device(spec) {
                Some(err) => Err(err),
                None => self.route_apply(*op, spec),
            },
            Command::Rule { op, spec } => self.rule_apply(*op, spec),
            Command::Neigh { op, spec } => self.neigh_apply(*op, spec),
        };
        // The entries this command changed get their summaries back now,
        // not at the next command: else the prefix changed last would take
        // the slow lookup path for as long as nothing else changes.
        self.settle_tables();
        res
    }

    /// iproute2 resolves each `nexthop dev D` while it reads the line
    /// (`parse_one_nh`), so the first missing one is its refusal before
    /// anything reaches the kernel: `Cannot find device "D"`, then `Error:
    /// cannot parse nexthop`.
    fn missing_nexthop_device(&self, spec: &RouteSpec) -> Option<KernelError> {
        if !spec.multipath {
            return None;
        }
        let missing = spec
            .nexthops
            .iter()
            .filter_map(|nh| nh.dev.as_deref())
            .find(|dev| self.link_by_name(dev).is_none())?;
        let mut err = KernelError::no_such_device(missing);
        if let Some(line) = err.extack.as_mut() {
            // (ip prints it on a line of its own.)
            line.push_str(" Error: cannot parse nexthop");
        }
        Some(err)
    }

    /// The sysctl-like settings (multipath hash policy and seed).
    pub fn settings(&self) -> FibSettings {
        self.settings
    }

    /// Changes the sysctl-like settings.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let mut fib = Fib::new();
    /// let mut s = fib.settings();
    /// s.multipath_hash_policy_v4 = MultipathHashPolicy::L4;
    /// fib.set_settings(s);
    /// assert_eq!(fib.settings().multipath_hash_policy_v4, MultipathHashPolicy::L4);
    /// ```
    pub fn set_settings(&mut self, settings: FibSettings) {
        self.settings = settings;
    }

    /// Links in index order.
    pub fn links(&self) -> impl Iterator<Item = &Link> + '_ {
        self.links.values()
    }

    /// The link with this name.
    pub fn link_by_name(&self, name: &str) -> Option<&Link> {
        self.links.get(self.link_names.get(name)?)
    }

    /// The link with this index.
    pub fn link(&self, index: LinkIndex) -> Option<&Link> {
        self.links.get(&index)
    }

    /// Addresses in `ip addr show` order, optionally of one family: link by
    /// link, IPv4 before IPv6, each in the kernel's list order.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let mut fib = Fib::new();
    /// fib.apply(&Command::LinkSet { name: "lo".into(), up: Some(true), mtu: None }).unwrap();
    /// let addrs: Vec<String> = fib.addresses(None).iter().map(|a| a.local.to_string()).collect();
    /// assert_eq!(addrs, ["127.0.0.1", "::1"]);
    /// ```
    pub fn addresses(&self, family: Option<Family>) -> Vec<&Address> {
        let mut out = Vec::new();
        for index in self.links.keys() {
            if family != Some(Family::V6) {
                out.extend(self.addrs_v4.get(index).into_iter().flatten());
            }
            if family != Some(Family::V4) {
                out.extend(self.addrs_v6.get(index).into_iter().flatten());
            }
        }
        out
    }

    /// Routes of one family in `ip route show` order: one table, or every
    /// table (`table all`) when `table` is None.
    ///
    /// Tables are listed as the kernel walks its table hash (256 buckets by
    /// id, newer tables first within a bucket); within a table by prefix in
    /// trie order, and per prefix in the kernel's route order.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let mut fib = Fib::new();
    /// fib.apply(&Command::LinkSet { name: "lo".into(), up: Some(true), mtu: None }).unwrap();
    /// let local: Vec<String> = fib
    ///     .routes(Family::V4, Some(TABLE_LOCAL))
    ///     .iter()
    ///     .map(|r| format!("{} {}", r.kind.name(), r.dst))
    ///     .collect();
    /// assert_eq!(local, ["local 127.0.0.0/8", "local 127.0.0.1", "broadcast 127.255.255.255"]);
    /// ```
    pub fn routes(&self, family: Family, table: Option<TableId>) -> Vec<&Route> {
        let mut ids: Vec<(TableId, u64)> = self
            .tables_listed(family, table)
            .map(|(id, t)| {
                let seq = match family {
                    Family::V4 => t.created_v4,
                    Family::V6 => t.created_v6,
                };
                (*id, seq.unwrap_or(0))
            })
            .collect();
        ids.sort_by_key(|(id, seq)| (id & 0xff, std::cmp::Reverse(*seq)));
        let mut out = Vec::new();
        for (id, _) in ids {
            let t = &self.tables[&id];
            for entry in t.dump_order(family) {
                out.extend(entry.routes.iter());
            }
        }
        out
    }

    /// How many routes [`Fib::routes`] would list, without listing them:
    /// one pass over the tables' entries in no order, where `routes` sorts
    /// every table into the kernel's dump order (a readiness probe polled
    /// while a full table loads should not cost a sort of it).
    ///
    /// ```
    /// use fibre_fib::*;
    /// let mut fib = Fib::new();
    /// fib.apply(&Command::LinkSet { name: "lo".into(), up: Some(true), mtu: None }).unwrap();
    /// assert_eq!(fib.route_count(Family::V4, Some(TABLE_LOCAL)), 3);
    /// assert_eq!(fib.route_count(Family::V4, None), fib.routes(Family::V4, None).len());
    /// ```
    pub fn route_count(&self, family: Family, table: Option<TableId>) -> usize {
        self.tables_listed(family, table)
            .map(|(_, t)| t.route_count(family))
            .sum()
    }

    /// The tables `route show` lists for `family`: those of the family the
    /// kernel has created, all of them or only `table`.
    fn tables_listed(
        &self,
        family: Family,
        table: Option<TableId>,
    ) -> impl Iterator<Item = (&TableId, &Table)> + '_ {
        self.tables
            .iter()
            .filter(move |(id, t)| t.exists(family) && table.is_none_or(|want| want == **id))
    }

    /// Rules of one family in priority order.
    pub fn rules(&self, family: Family) -> &[Rule] {
        match family {
            Family::V4 => &self.rules_v4,
            Family::V6 => &self.rules_v6,
        }
    }

    /// `ip route get`: the kernel's answer or its error.
    ///
    /// ```
    /// use fibre_fib::*;
    /// let fib = Fib::new();
    /// let err = fib.route_get(&RouteGetRequest::to("192.0.2.1".parse().unwrap())).unwrap_err();
    /// assert_eq!(err.to_string(), "RTNETLINK answers: Network is unreachable");
    /// ```
    pub fn route_get(&self, req: &RouteGetRequest) -> Result<RouteAnswer, KernelError> {
        crate::read::route_get::route_get(self, req)
    }

    /// The index of a link by name, or iproute2's refusal.
    pub(crate) fn resolve_dev(&self, name: &str) -> Result<LinkIndex, KernelError> {
        self.link_by_name(name)
            .map(|l| l.index)
            .ok_or_else(|| KernelError::no_such_device(name))
    }

    /// The name of a link (empty when it is gone).
    pub(crate) fn dev_name(&self, index: LinkIndex) -> String {
        self.links
            .get(&index)
            .map(|l| l.name.clone())
            .unwrap_or_default()
    }

    /// Next table-creation sequence number.
    pub(crate) fn next_table_seq(&mut self) -> u64 {
        self.table_seq += 1;
        self.table_seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_classes_are_stable_and_run_out_into_the_unshared_class() {
        let mut fib = Fib::new();
        let src: IpAddr = "10.0.0.1".parse().unwrap();
        assert_eq!(fib.cache_class(None, None, false), CACHE_CLASS_PLAIN);
        let first = fib.cache_class(Some(src), None, false);
        assert_eq!(first, 1);
        assert_eq!(fib.cache_class(None, Some(1400), false), 2);
        assert_eq!(
            fib.cache_class(None, Some(1400), true),
            3,
            "a lock makes its own class"
        );
        assert_eq!(
            fib.cache_class(Some(src), None, false),
            first,
            "same attributes, same class"
        );
        for mtu in 0..70_000u32 {
            let class = fib.cache_class(Some(src), Some(mtu), false);
            let expected = u16::try_from(4 + mtu).unwrap_or(CACHE_CLASS_UNSHARED);
            assert_eq!(class, expected, "mtu {mtu}");
        }
        // Classes handed out before the table filled keep their number.
        assert_eq!(fib.cache_class(None, Some(1400), false), 2);
    }
}
