//! The kernel's lookups: `fib_table_lookup` (one table, longest prefix
//! first with backtracking), `fib6_table_lookup` (the same walk over
//! metric-ordered routes) and `fib_lookup` (the rules, or the merged
//! local+main fast path while no IPv4 rule was ever added or deleted).

use std::net::IpAddr;

use crate::error::Errno;
use crate::fib::Fib;
use crate::read::rule_match::rule_matches;
use crate::table::{FamilyTable, PrefixEntry, SinglePath, Table};
use crate::types::*;
use crate::write::route_ops::reject_errno;

/// The loopback ifindex: the input interface of locally generated traffic.
pub(crate) const LOOPBACK_IFINDEX: LinkIndex = 1;

/// A flow as `flowi4`/`flowi6` carry it into a lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Flow {
    /// Destination.
    pub dst: IpAddr,
    /// Source; None is the unspecified address.
    pub src: Option<IpAddr>,
    /// Input interface (loopback for output lookups).
    pub iif: LinkIndex,
    /// Output interface; 0 = any.
    pub oif: LinkIndex,
    /// Firewall mark.
    pub mark: u32,
    /// TOS.
    pub tos: u8,
    /// Routes with a narrower scope than this are not considered.
    pub scope: Scope,
    /// L4 protocol (0 = none).
    pub proto: u8,
    /// L4 source port.
    pub sport: u16,
    /// L4 destination port.
    pub dport: u16,
    /// The uid the flow belongs to (`flowi_uid`), which `uidrange` rules
    /// select on.
    pub uid: u32,
    /// IPv6: the device routes are scored against (`ip6_pol_route`'s oif:
    /// the output device, or the input device for a link-local or
    /// multicast destination); 0 = none.
    pub v6_dev: LinkIndex,
    /// IPv6: only routes through `v6_dev` qualify (RT6_LOOKUP_F_IFACE).
    pub v6_strict: bool,
}

impl Flow {
    /// A locally generated flow to `dst`.
    pub fn output(dst: IpAddr) -> Flow {
        Flow {
            dst,
            src: None,
            iif: LOOPBACK_IFINDEX,
            oif: 0,
            mark: 0,
            tos: 0,
            scope: Scope::UNIVERSE,
            proto: 0,
            sport: 0,
            dport: 0,
            uid: 0,
            v6_dev: 0,
            v6_strict: false,
        }
    }

    /// The IPv6 output rule for `oif` (`ip6_route_output_flags`): strict
    /// without a source address or for a destination that needs it
    /// (multicast, link-local, loopback), a preference otherwise.
    pub fn with_v6_output_dev(mut self) -> Flow {
        self.v6_dev = self.oif;
        self.v6_strict = self.oif != 0
            && (needs_strict_v6(&self.dst) || self.src.is_none_or(|s| s.is_unspecified()));
        self
    }

    /// The IPv6 input rule for `iif` (`ip6_pol_route_input`): routes are
    /// scored against the input device (a path there is preferred), and a
    /// destination that needs it (multicast, link-local, loopback) must use it.
    #[inline]
    pub fn with_v6_input_dev(mut self, iif: LinkIndex) -> Flow {
        self.iif = iif;
        self.v6_dev = iif;
        self.v6_strict = needs_strict_v6(&self.dst);
        self
    }
}

/// `rt6_need_strict`: multicast, link-local and loopback IPv6 destinations
/// are only reached through the device the lookup names; never an IPv4 one.
#[inline]
fn needs_strict_v6(dst: &IpAddr) -> bool {
    match dst {
        IpAddr::V6(d) => {
            d.is_multicast() || d.is_loopback() || (d.segments()[0] & 0xffc0) == 0xfe80
        }
        IpAddr::V4(_) => false,
    }
}

/// What a lookup found: a route, the first usable path, and where.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FibResult<'a> {
    /// The route.
    pub route: &'a Route,
    /// The table reported for it (main for local routes in the merged fast path).
    pub table: TableId,
    /// Route type.
    pub kind: RouteType,
    /// Index of the first usable path (None for routes without paths).
    pub nh: Option<usize>,
    /// Set when the route is its entry's only one and has one path (`nh`
    /// is 0): what the data path needs of both, read from the entry, so
    /// that it need not follow `route` (a cache miss) nor its paths (another).
    /// (The IPv6 data path spares the entry too: see [`Found6`].)
    pub single: Option<&'a SinglePath>,
}

impl<'a> FibResult<'a> {
    /// The selected path.
    pub fn nexthop(&self) -> Option<&'a Nexthop> {
        self.nh.and_then(|i| self.route.nexthops.get(i))
    }
}

/// What the IPv6 data path's lookup found: the same route as
/// [`Fib::fib_lookup`]'s, but where the longest prefix's summary decides,
/// read from the table's side array without reading the entry (a cache
/// miss in a full table) nor the route.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Found6<'a> {
    /// The longest prefix's entry has one route with one live path and it
    /// qualifies: its summary (what `FibResult::single` would be).
    Single {
        /// The summary.
        single: &'a SinglePath,
        /// The table reported for it.
        table: TableId,
        /// Where the entry lies, read only if a rule asks for its prefix.
        family: &'a FamilyTable<u128>,
        /// Its slot there.
        slot: u32,
    },
    /// Any other outcome, as `fib_lookup` reports it.
    Full(FibResult<'a>),
}

/// What `suppressed` asks of a lookup's result.
pub(crate) trait Suppressible {
    /// The matched route's prefix length.
    fn dst_len(&self) -> u8;
    /// Whether the route's first path has a device.
    fn first_path_has_dev(&self) -> bool;
}

impl Suppressible for FibResult<'_> {
    fn dst_len(&self) -> u8 {
        self.route.dst.len()
    }
    fn first_path_has_dev(&self) -> bool {
        self.route.nexthops.first().and_then(|n| n.dev).is_some()
    }
}

impl Suppressible for Found6<'_> {
    fn dst_len(&self) -> u8 {
        match self {
            Found6::Single { family, slot, .. } => family
                .entry_at(*slot)
                .expect("a summary names a live entry")
                .prefix
                .len(),
            Found6::Full(res) => res.dst_len(),
        }
    }
    fn first_path_has_dev(&self) -> bool {
        match self {
            // A summary is made only for a path with a device.
            Found6::Single { .. } => true,
            Found6::Full(res) => res.first_path_has_dev(),
        }
    }
}

/// Why a table gave no route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Miss {
    /// Nothing matched, or an IPv4 `throw` route: try the next rule (EAGAIN).
    Again,
    /// An IPv6 `throw` route: the rules go on for a route lookup (the
    /// route's -EAGAIN), but `fib6_lookup`, which validates gateways, takes
    /// it as the (reject) result.
    Thrown,
    /// A refusal (reject route).
    Refused(Errno),
}

/// A path the kernel may use for this flow (`fib_lookup_good_nhc`).
fn usable(nh: &Nexthop, flow: &Flow) -> bool {
    !nh.flags.dead && (flow.oif == 0 || nh.dev == Some(flow.oif))
}

/// Examines one IPv4 route for `flow`: None to go on with the next route.
fn try_route<'a>(r: &'a Route, table: TableId, flow: &Flow) -> Option<Result<FibResult<'a>, Miss>> {
    if r.tos != 0 && r.tos != flow.tos {
        return None;
    }
    if r.scope < flow.scope {
        return None;
    }
    if r.kind == RouteType::Throw {
        return Some(Err(Miss::Again));
    }
    if let Some(e) = reject_errno(r.kind) {
        return Some(Err(Miss::Refused(e)));
    }
    let nh = r.nexthops.iter().position(|n| usable(n, flow))?;
    Some(Ok(FibResult {
        route: r,
        table,
        kind: r.kind,
        nh: Some(nh),
        single: None,
    }))
}

/// `try_route` over an IPv4 entry's one route with one live path, from the
/// entry's summary: the route has TOS 0 (it matches every flow's), so what
/// is left to check is its type and the path's device (the flow's scope is
/// universe, which every route passes).
#[inline]
fn try_single_v4<'a>(
    entry: &'a PrefixEntry,
    s: &'a SinglePath,
    table: TableId,
    flow: &Flow,
) -> Option<Result<FibResult<'a>, Miss>> {
    if s.kind == RouteType::Throw {
        return Some(Err(Miss::Again));
    }
    if let Some(e) = reject_errno(s.kind) {
        return Some(Err(Miss::Refused(e)));
    }
    // `usable`: the path is alive (else no summary), so only the oif counts.
    if flow.oif != 0 && s.dev() != flow.oif {
        return None;
    }
    Some(Ok(FibResult {
        route: &entry.routes[0],
        table,
        kind: s.kind,
        nh: Some(0),
        single: Some(s),
    }))
}

/// The outcome of choosing path `nh` of IPv6 route `r`, of type `kind`
/// (given apart, so that the entry's summary spares a read of `r`).
#[inline]
fn v6_outcome<'a>(
    r: &'a Route,
    kind: RouteType,
    nh: usize,
    table: TableId,
    single: Option<&'a SinglePath>,
) -> Result<FibResult<'a>, Miss> {
    v6_kind_outcome(kind)?;
    if rejected_on_lo_v6(kind, r, nh) {
        return Err(Miss::Refused(Errno::Inval));
    }
    Ok(FibResult {
        route: r,
        table,
        kind,
        nh: Some(nh),
        single,
    })
}

/// `fib6_is_reject`: a route through the loopback device (to anything
/// but a loopback address, and neither local nor addrconf's anycast)
/// becomes a reject route, whose error is its type's (`fib6_prop`): none
/// for unicast, EINVAL for nat and xresolve (kernel-checked: `route add
/// xresolve 2001:db8:8::/48 dev lo`, then `route get 2001:db8:8::1` is
/// "Invalid argument", seed 1796592920431233384). Such a route has no
/// single-path summary ([`crate::table`]), so every lookup comes here.
/// `kind` is the route's, tested first: a lookup that found a summary
/// knows it without reading the route, and reads the route for nothing
/// else here.
pub(crate) fn rejected_on_lo_v6(kind: RouteType, r: &Route, nh: usize) -> bool {
    matches!(kind, RouteType::Nat | RouteType::XResolve)
        && r.nexthops
            .get(nh)
            .is_some_and(|n| n.dev == Some(LOOPBACK_IFINDEX))
        && !r.dst.addr().is_loopback()
}

/// What an IPv6 route of type `kind` makes of a lookup choosing it: a
/// route (Ok), or the rules go on (throw) or end (a reject).
#[inline]
fn v6_kind_outcome(kind: RouteType) -> Result<(), Miss> {
    if kind == RouteType::Throw {
        return Err(Miss::Thrown);
    }
    if let Some(e) = reject_errno(kind) {
        return Err(Miss::Refused(e));
    }
    Ok(())
}

/// Whether the one live path of an entry with summary `s` qualifies for
/// `flow` in `select_v6`: unless the lookup is strict about another device.
#[inline]
fn single_v6_qualifies(s: &SinglePath, flow: &Flow) -> bool {
    !(flow.v6_strict && flow.v6_dev != 0 && s.dev() != flow.v6_dev)
}

/// `find_rr_leaf` / `rt6_score_route`: among the routes of the lowest
/// metric the best scored (a path on the requested oif scores higher; with
/// a strict oif, i.e. no source address given, other devices do not
/// qualify), else the best of the remaining routes.
fn select_v6<'a>(
    entry: &'a PrefixEntry,
    table: TableId,
    flow: &Flow,
) -> Option<Result<FibResult<'a>, Miss>> {
    let strict = flow.v6_strict;
    if let Some(s) = entry.single() {
        // The walk below over one route with one live path.
        if !single_v6_qualifies(s, flow) {
            return None;
        }
        return Some(v6_outcome(&entry.routes[0], s.kind, 0, table, Some(s)));
    }
    let score = |n: &Nexthop| -> Option<u8> {
        if n.flags.dead {
            return None;
        }
        let on_oif = flow.v6_dev == 0 || n.dev == Some(flow.v6_dev);
        match (on_oif, strict) {
            (true, _) => Some(2),
            (false, true) => None,
            (false, false) => Some(0),
        }
    };
    let best_of = |routes: &mut dyn Iterator<Item = &'a Route>| -> Option<(&'a Route, usize)> {
        let mut best: Option<(u8, &'a Route, usize)> = None;
        for r in routes {
            for (i, n) in r.nexthops.iter().enumerate() {
                if let Some(s) = score(n) {
                    if best.is_none_or(|(b, _, _)| s > b) {
                        best = Some((s, r, i));
                    }
                }
            }
        }
        best.map(|(_, r, i)| (r, i))
    };
    let first_metric = entry.routes.first()?.metric;
    let found = best_of(&mut entry.routes.iter().filter(|r| r.metric == first_metric))
        .or_else(|| best_of(&mut entry.routes.iter().filter(|r| r.metric != first_metric)));
    found.map(|(r, i)| v6_outcome(r, r.kind, i, table, None))
}

/// The routes of one prefix in order: Some when one decides the lookup.
fn scan_entry<'a>(
    entry: &'a PrefixEntry,
    table: TableId,
    flow: &Flow,
) -> Option<Result<FibResult<'a>, Miss>> {
    match entry.prefix.family() {
        Family::V4 => match entry.single() {
            // No route is narrower than scope universe (what the data path
            // and `ip route get` ask for); other scopes take the routes.
            Some(s) if flow.scope == Scope::UNIVERSE => try_single_v4(entry, s, table, flow),
            _ => entry.routes.iter().find_map(|r| try_route(r, table, flow)),
        },
        Family::V6 => select_v6(entry, table, flow),
    }
}

/// The longest entry first, then (only if it did not decide) the shorter ones.
fn scan_table<'a, I: Iterator<Item = &'a PrefixEntry>>(
    longest: Option<&'a PrefixEntry>,
    all: impl FnOnce() -> I,
    table: TableId,
    flow: &Flow,
) -> Result<FibResult<'a>, Miss> {
    let Some(first) = longest else {
        return Err(Miss::Again);
    };
    if let Some(res) = scan_entry(first, table, flow) {
        return res;
    }
    for entry in all().filter(|e| e.prefix.len() < first.prefix.len()) {
        if let Some(res) = scan_entry(entry, table, flow) {
            return res;
        }
    }
    Err(Miss::Again)
}

impl Fib {
    /// `fib_table_lookup` / `fib6_table_lookup` in one table: the longest
    /// prefix first (one LPM lookup), then shorter ones while no route of
    /// the longer fits.
    pub(crate) fn table_lookup<'a>(
        &'a self,
        t: &'a Table,
        table: TableId,
        flow: &Flow,
    ) -> Result<FibResult<'a>, Miss> {
        match flow.dst {
            IpAddr::V4(a) => {
                let key = u32::from(a);
                self.table_lookup_v4_at(t, table, flow, key, t.v4.longest_slot(key))
            }
            IpAddr::V6(a) => {
                let key = u128::from(a);
                scan_table(t.v6.longest(key), || t.v6.matches(key), table, flow)
            }
        }
    }

    /// [`Fib::table_lookup`] of an IPv4 flow once the longest prefix's
    /// slot is known (`longest_slot` of `key`, or a burst's batched walk).
    #[inline(always)]
    pub(crate) fn table_lookup_v4_at<'a>(
        &'a self,
        t: &'a Table,
        table: TableId,
        flow: &Flow,
        key: u32,
        longest: Option<u32>,
    ) -> Result<FibResult<'a>, Miss> {
        let longest = longest.and_then(|slot| t.v4.entry_at(slot));
        scan_table(longest, || t.v4.matches(key), table, flow)
    }

    /// [`Fib::table_lookup`] of an IPv6 flow for the data path: where the
    /// longest prefix's summary decides (see `select_v6`), it comes from
    /// the side array and neither the entry nor the route is read.
    #[inline]
    fn table_lookup_v6_data<'a>(
        &'a self,
        t: &'a Table,
        table: TableId,
        flow: &Flow,
        key: u128,
    ) -> Result<Found6<'a>, Miss> {
        self.table_lookup_v6_data_at(t, table, flow, key, t.v6.longest_slot(key))
    }

    /// [`Fib::table_lookup_v6_data`] once the longest prefix's slot is
    /// known (`longest_slot` of `key`, or a burst's batched walk): the
    /// per-key and the burst path share everything after the LPM.
    #[inline(always)]
    pub(crate) fn table_lookup_v6_data_at<'a>(
        &'a self,
        t: &'a Table,
        table: TableId,
        flow: &Flow,
        key: u128,
        longest: Option<u32>,
    ) -> Result<Found6<'a>, Miss> {
        let Some(slot) = longest else {
            return Err(Miss::Again);
        };
        if let Some(single) = t.v6.summary_at(slot) {
            if single_v6_qualifies(single, flow) {
                v6_kind_outcome(single.kind)?;
                return Ok(Found6::Single {
                    single,
                    table,
                    family: &t.v6,
                    slot,
                });
            }
        }
        scan_table(t.v6.entry_at(slot), || t.v6.matches(key), table, flow).map(Found6::Full)
    }

    /// [`Fib::fib_lookup`] of an IPv6 flow for the data path: the same
    /// route, as [`Found6`].
    ///
    /// # Panics
    /// If `flow`'s destination is an IPv4 address.
    #[inline]
    pub(crate) fn fib_lookup_v6_data<'a>(&'a self, flow: &Flow) -> Result<Found6<'a>, Errno> {
        let IpAddr::V6(a) = flow.dst else {
            panic!("fib_lookup_v6_data: an IPv4 destination");
        };
        let key = u128::from(a);
        self.rules_lookup_by(flow, false, |t, table| {
            self.table_lookup_v6_data(t, table, flow, key)
        })
    }

    /// The merged local+main lookup the kernel does while no rule was ever
    /// added: per prefix, table local's routes before main's; the result
    /// reports table main.
    fn merged_lookup<'a>(&'a self, flow: &Flow) -> Result<FibResult<'a>, Miss> {
        let IpAddr::V4(a) = flow.dst else {
            return Err(Miss::Again);
        };
        let key = u32::from(a);
        let (local, main) = self.merged_tables_v4();
        let l_slot = local.and_then(|t| t.longest_slot(key));
        let m_slot = main.and_then(|t| t.longest_slot(key));
        self.merged_lookup_at(flow, key, local, main, l_slot, m_slot)
    }

    /// The IPv4 families of tables local and main, which the merged fast
    /// path reads as one.
    #[inline]
    pub(crate) fn merged_tables_v4(
        &self,
    ) -> (Option<&FamilyTable<u32>>, Option<&FamilyTable<u32>>) {
        let local = self.tables.get(&TABLE_LOCAL).map(|t| &t.v4);
        let main = self.tables.get(&TABLE_MAIN).map(|t| &t.v4);
        (local, main)
    }

    /// [`Fib::merged_lookup`] once each table's longest prefix slot for
    /// `key` is known (per key, or from a burst's batched walks).
    #[inline]
    pub(crate) fn merged_lookup_at<'a>(
        &'a self,
        flow: &Flow,
        key: u32,
        local: Option<&'a FamilyTable<u32>>,
        main: Option<&'a FamilyTable<u32>>,
        l_slot: Option<u32>,
        m_slot: Option<u32>,
    ) -> Result<FibResult<'a>, Miss> {
        // Fast path: the longest prefix of either table decides most lookups.
        let l_best = local.zip(l_slot).and_then(|(t, s)| t.entry_at(s));
        let m_best = main.zip(m_slot).and_then(|(t, s)| t.entry_at(s));
        let l_len = l_best.map(|e| e.prefix.len());
        let m_len = m_best.map(|e| e.prefix.len());
        let longest = l_len.max(m_len);
        for best in [l_best, m_best].into_iter().flatten() {
            if Some(best.prefix.len()) == longest {
                if let Some(res) = scan_entry(best, TABLE_MAIN, flow) {
                    return res;
                }
            }
        }
        let Some(longest) = longest else {
            return Err(Miss::Again);
        };
        // Backtracking over both tables, longest first, local before main.
        let mut l_it = local.map(|t| {
            t.matches(key)
                .skip_while(move |e| e.prefix.len() >= longest)
                .peekable()
        });
        let mut m_it = main.map(|t| {
            t.matches(key)
                .skip_while(move |e| e.prefix.len() >= longest)
                .peekable()
        });
        loop {
            let l_len = l_it.as_mut().and_then(|i| i.peek()).map(|e| e.prefix.len());
            let m_len = m_it.as_mut().and_then(|i| i.peek()).map(|e| e.prefix.len());
            let Some(len) = l_len.max(m_len) else {
                return Err(Miss::Again);
            };
            if l_len == Some(len) {
                let entry = l_it.as_mut().and_then(|i| i.next()).expect("peeked");
                if let Some(res) = scan_entry(entry, TABLE_MAIN, flow) {
                    return res;
                }
            }
            if m_len == Some(len) {
                let entry = m_it.as_mut().and_then(|i| i.next()).expect("peeked");
                if let Some(res) = scan_entry(entry, TABLE_MAIN, flow) {
                    return res;
                }
            }
        }
    }

    /// `fib_table_lookup(fib_get_table(id))`: one table by id; while the
    /// IPv4 local and main tables are merged (no IPv4 rule ever added or deleted), either id
    /// reaches the merged table.
    pub(crate) fn lookup_in_table<'a>(
        &'a self,
        table: TableId,
        flow: &Flow,
    ) -> Result<FibResult<'a>, Miss> {
        let family = Family::of(&flow.dst);
        if family == Family::V4
            && !self.custom_rules_v4
            && (table == TABLE_LOCAL || table == TABLE_MAIN)
        {
            return self.merged_lookup(flow);
        }
        match self.tables.get(&table).filter(|t| t.exists(family)) {
            Some(t) => self.table_lookup(t, table, flow),
            None => Err(Miss::Again),
        }
    }

    /// `fib_lookup` / `fib6_lookup`: the rules in order, or the kernel's
    /// fast path while no IPv4 rule was ever added or deleted.
    pub(crate) fn fib_lookup<'a>(&'a self, flow: &Flow) -> Result<FibResult<'a>, Errno> {
        let family = Family::of(&flow.dst);
        if family == Family::V4 && !self.custom_rules_v4 {
            return self.merged_fallback_v4(flow, self.merged_lookup(flow));
        }
        self.rules_lookup(flow, false)
    }

    /// The end of `fib_lookup`'s IPv4 fast path after the merged local+main
    /// lookup answered `res`: like the default rules, only "nothing here"
    /// goes on to table default.
    #[inline]
    pub(crate) fn merged_fallback_v4<'a>(
        &'a self,
        flow: &Flow,
        mut res: Result<FibResult<'a>, Miss>,
    ) -> Result<FibResult<'a>, Errno> {
        if res.as_ref().err() == Some(&Miss::Again) {
            if let Some(t) = self
                .tables
                .get(&TABLE_DEFAULT)
                .filter(|t| t.exists(Family::V4))
            {
                res = self.table_lookup(t, TABLE_DEFAULT, flow);
            }
        }
        res.map_err(|m| match m {
            Miss::Again | Miss::Thrown => Errno::NetUnreach,
            Miss::Refused(e) => e,
        })
    }

    /// `fib6_lookup`, as `ip6_route_check_nh` validates a gateway with it
    /// when the route's own table does not resolve it: the rules (or, with
    /// none added, local then main: the same order), but a `throw` route
    /// is the result, a reject. Kernel-checked: with `throw 2001:db8::/40
    /// table local`, `route add default table local via 2001:db8:1:80::6825`
    /// (on-link in main) is "No route to host", with or without a custom
    /// rule; `route add 2001:db8:77::/48 via 2001:db8:1:80::6825` (main
    /// resolves it) is taken.
    pub(crate) fn fib6_lookup_for_gateway<'a>(
        &'a self,
        flow: &Flow,
    ) -> Result<FibResult<'a>, Errno> {
        self.rules_lookup(flow, true)
    }

    /// The rules a lookup follows: the family's list, except that IPv6
    /// keeps to local then main until a rule is added
    /// ([`crate::write::rules::v6_fast_path_rules`]). (IPv4's merged fast path is
    /// taken before any rule is read: see [`Fib::fib_lookup`].)
    #[inline]
    pub(crate) fn lookup_rules(&self, family: Family) -> &[Rule] {
        match family {
            Family::V6 if !self.custom_rules_v6 => crate::write::rules::v6_fast_path_rules(),
            family => self.rules(family),
        }
    }

    /// `fib_rules_lookup` with the family's actions and suppressors;
    /// `throw_ends`: an IPv6 throw route is the result (a reject), not a
    /// reason to go on.
    fn rules_lookup<'a>(&'a self, flow: &Flow, throw_ends: bool) -> Result<FibResult<'a>, Errno> {
        self.rules_lookup_by(flow, throw_ends, |t, table| {
            self.table_lookup(t, table, flow)
        })
    }

    /// [`Fib::rules_lookup`] with `table_lookup` looking up one table.
    #[inline]
    fn rules_lookup_by<'a, R: Suppressible>(
        &'a self,
        flow: &Flow,
        throw_ends: bool,
        table_lookup: impl Fn(&'a Table, TableId) -> Result<R, Miss>,
    ) -> Result<R, Errno> {
        let rules = self.lookup_rules(Family::of(&flow.dst));
        let mut i = 0;
        while i < rules.len() {
            let rule = &rules[i];
            i += 1;
            let table = match self.rule_step(rules, rule, flow) {
                RuleStep::Next => continue,
                RuleStep::Jump(j) => {
                    i = j;
                    continue;
                }
                RuleStep::End(e) => return Err(e),
                RuleStep::Lookup(table) => table,
            };
            let Some(t) = self.tables.get(&table) else {
                continue;
            };
            if let Some(answer) = table_verdict(rule, table_lookup(t, table), throw_ends) {
                return answer;
            }
        }
        Err(Errno::NetUnreach)
    }

    /// What `fib_rules_lookup` does with `rule` (one of `rules`) for
    /// `flow`, before any table is read: the rule's selectors
    /// ([`rule_matches`]) and its action. Both the per-key walk and the
    /// burst's take each rule through here.
    #[inline(always)]
    pub(crate) fn rule_step(&self, rules: &[Rule], rule: &Rule, flow: &Flow) -> RuleStep {
        if !rule_matches(self, rule, flow) {
            return RuleStep::Next;
        }
        match rule.action {
            RuleAction::Goto(target) => {
                // An unresolved goto (no rule with that priority) is skipped.
                match rules.iter().position(|r| r.priority == target) {
                    Some(j) => RuleStep::Jump(j),
                    None => RuleStep::Next,
                }
            }
            RuleAction::Nop => RuleStep::Next,
            RuleAction::Blackhole | RuleAction::Other(_) => RuleStep::End(Errno::Inval),
            RuleAction::Unreachable => RuleStep::End(Errno::NetUnreach),
            RuleAction::Prohibit => RuleStep::End(Errno::Acces),
            // fib_get_table / fib6_get_table read table 0 (an l3mdev rule's
            // without a master device) as main.
            RuleAction::Lookup(TABLE_UNSPEC) => RuleStep::Lookup(TABLE_MAIN),
            RuleAction::Lookup(table) => RuleStep::Lookup(table),
        }
    }
}

/// Where `fib_rules_lookup` goes from one rule (see [`Fib::rule_step`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RuleStep {
    /// The rule does not match, or does nothing (`nop`, an unresolved
    /// `goto`): on to the next rule.
    Next,
    /// `goto`: on at this index of the rule list (the kernel refuses a
    /// goto to a priority not above the rule's own, so it lies ahead).
    Jump(usize),
    /// The rule's action ends the lookup with this errno (blackhole,
    /// unreachable, prohibit).
    End(Errno),
    /// Look the flow up in this table.
    Lookup(TableId),
}

/// What `fib_rules_lookup` makes of `rule`'s table lookup: `Some` answer
/// ends the walk, `None` goes on with the next rule (nothing found, an IPv4
/// throw, an IPv6 throw unless `throw_ends`, a suppressed result).
#[inline(always)]
pub(crate) fn table_verdict<R: Suppressible>(
    rule: &Rule,
    res: Result<R, Miss>,
    throw_ends: bool,
) -> Option<Result<R, Errno>> {
    match res {
        Ok(res) if suppressed(rule, &res) => None,
        Ok(res) => Some(Ok(res)),
        Err(Miss::Again) => None,
        Err(Miss::Thrown) if !throw_ends => None,
        Err(Miss::Thrown) => Some(Err(Errno::HostUnreach)),
        Err(Miss::Refused(e)) => Some(Err(e)),
    }
}

/// `fib4_rule_suppress` / `fib6_rule_suppress`. Every link is in group 0.
fn suppressed(rule: &Rule, res: &impl Suppressible) -> bool {
    if rule
        .suppress_prefixlength
        .is_some_and(|n| u32::from(res.dst_len()) <= n)
    {
        return true;
    }
    // Only then read the route's paths: most lookups need nothing else of them.
    rule.suppress_ifgroup.is_some_and(|g| g == 0) && res.first_path_has_dev()
}
