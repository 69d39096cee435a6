//! Policy rules (`ip rule`): the defaults and `add`/`del` with the kernel's
//! choices and refusals. (The match of a rule against a flow is the data
//! path's: `read/rule_match.rs`.)
//!
//! Kernel-checked (6.18):
//! - IPv4 starts with 0 local, 32766 main, 32767 default; IPv6 with 0 local
//!   and 32766 main only;
//! - `add` without a priority takes the priority of the second rule in the
//!   list minus one (`fib_default_rule_pref`): 32765, then 32764, ...;
//! - `goto` to a priority not above the rule's own: `Error: Backward goto
//!   not supported.`; to a priority no rule has: accepted, shown
//!   `[unresolved]` and skipped by lookups;
//! - `del` with nothing matching: `RTNETLINK answers: No such file or
//!   directory`; an identical `add`: `RTNETLINK answers: File exists`;
//! - the rule actions `unreachable`/`prohibit`/`blackhole` answer
//!   "Network is unreachable" / "Permission denied" / "Invalid argument"
//!   (a rule's unreachable is ENETUNREACH, a route's EHOSTUNREACH);
//! - an IPv4 add or delete that succeeds ends the merged local+main fast
//!   path for good (`fib_has_custom_rules`); for IPv6 only an add does
//!   (`fib6_has_custom_rules`), so deleting IPv6's default rules changes
//!   no lookup until a rule is added.

use crate::command::{RuleOp, RuleSpec};
use crate::error::{Errno, KernelError};
use crate::fib::Fib;
use crate::types::*;

const fn rule(family: Family, priority: u32, table: TableId) -> Rule {
    Rule {
        family,
        priority,
        invert: false,
        from: None,
        to: None,
        iif: None,
        oif: None,
        fwmark: None,
        tos: 0,
        action: RuleAction::Lookup(table),
        suppress_prefixlength: None,
        suppress_ifgroup: None,
        protocol: Protocol::KERNEL,
        table_beside_action: TABLE_UNSPEC,
        l3mdev: false,
        uid_range: None,
        ip_proto: 0,
        sport_range: None,
        dport_range: None,
        tun_id: 0,
        realms: 0,
        written_addrs: (None, None),
    }
}

/// The rules of a new namespace.
pub(crate) fn default_rules(family: Family) -> Vec<Rule> {
    let mut v = vec![
        rule(family, 0, TABLE_LOCAL),
        rule(family, 32766, TABLE_MAIN),
    ];
    if family == Family::V4 {
        v.push(rule(family, 32767, TABLE_DEFAULT));
    }
    v
}

/// The rules IPv6 lookups follow while no IPv6 rule was ever added:
/// `fib6_rule_lookup` and `fib6_lookup` then look in table local and then
/// main without reading the rule list, which is what the default rules do.
/// (Kernel-checked: after `-6 rule del pref 32766` main still answers.)
/// (A constant, not built on first use: the data path allocates nothing.)
pub(crate) fn v6_fast_path_rules() -> &'static [Rule] {
    static RULES: [Rule; 2] = [
        rule(Family::V6, 0, TABLE_LOCAL),
        rule(Family::V6, 32766, TABLE_MAIN),
    ];
    &RULES
}

/// The rule an add request makes (before priority and checks).
fn rule_from_spec(spec: &RuleSpec, priority: u32) -> Rule {
    // The mark and mask as the kernel holds them; both zero is no mark.
    let fwmark = spec.fwmark.filter(|(mark, mask)| *mark != 0 || *mask != 0);
    Rule {
        family: spec.family,
        priority,
        invert: spec.invert,
        from: spec.from.filter(|p| !p.is_default()),
        to: spec.to.filter(|p| !p.is_default()),
        iif: spec.iif.clone(),
        oif: spec.oif.clone(),
        fwmark,
        tos: spec.tos,
        action: spec.action.unwrap_or(RuleAction::Lookup(TABLE_MAIN)),
        suppress_prefixlength: spec.suppress_prefixlength,
        suppress_ifgroup: spec.suppress_ifgroup,
        // iproute2 sends no FRA_PROTOCOL unless asked; the kernel keeps
        // RTPROT_UNSPEC (`ip -d rule` shows "proto unspec"; checked on 6.18).
        protocol: spec.protocol.unwrap_or(Protocol::UNSPEC),
        table_beside_action: match spec.action {
            Some(RuleAction::Lookup(_)) | None => TABLE_UNSPEC,
            Some(_) => spec.table_beside_action,
        },
        l3mdev: spec.l3mdev,
        uid_range: spec.uid_range,
        ip_proto: spec.ip_proto,
        sport_range: spec.sport_range,
        dport_range: spec.dport_range,
        tun_id: spec.tun_id,
        // fib4_rule_configure keeps FRA_FLOW (tclassid); IPv6 rules have none.
        written_addrs: spec.written_addrs,
        realms: match spec.family {
            Family::V4 => spec.realms.unwrap_or(0),
            Family::V6 => 0,
        },
    }
}

/// `rule_exists` for an add with NLM_F_EXCL: action and table (not a
/// goto's target), priority, interfaces, mark and mask, suppressors; the
/// source, destination and TOS only when the new rule gives them; `not` is
/// not compared (kernel-checked: `pref 1000 lookup local` after
/// `pref 1000 to P lookup local` is "File exists").
fn rule_exists(r: &Rule, new: &Rule) -> bool {
    let same_action = match (r.action, new.action) {
        (RuleAction::Lookup(a), RuleAction::Lookup(b)) => a == b,
        (RuleAction::Other(a), RuleAction::Other(b)) => a == b,
        (a, b) => std::mem::discriminant(&a) == std::mem::discriminant(&b),
    };
    same_action
        && r.table() == new.table()
        && r.l3mdev == new.l3mdev
        && r.uid_range == new.uid_range
        && r.ip_proto == new.ip_proto
        && r.sport_range == new.sport_range
        && r.dport_range == new.dport_range
        && r.tun_id == new.tun_id
        // fib4_rule_compare: the realms only when the new rule gives them.
        && (new.realms == 0 || r.realms == new.realms)
        && r.priority == new.priority
        && r.iif == new.iif
        && r.oif == new.oif
        && r.fwmark.unwrap_or((0, 0)) == new.fwmark.unwrap_or((0, 0))
        && r.suppress_prefixlength == new.suppress_prefixlength
        && r.suppress_ifgroup == new.suppress_ifgroup
        // fib4_rule_compare / fib6_rule_compare: the addresses exactly.
        && (new.from.is_none() || (r.from == new.from && r.from_addr() == new.from_addr()))
        && (new.to.is_none() || (r.to == new.to && r.to_addr() == new.to_addr()))
        && (new.tos == 0 || r.tos == new.tos)
        // Kernel-checked: `pref 0 lookup local` (proto unspec) is a new
        // rule beside the default one (proto kernel).
        && r.protocol == new.protocol
}

/// `rule_find`: a delete request's given fields against a rule.
fn del_matches(spec: &RuleSpec, r: &Rule) -> bool {
    let action_ok = match spec.action {
        None => true,
        // `unicast` without a table: any rule that looks up a table.
        Some(RuleAction::Lookup(TABLE_UNSPEC)) => matches!(r.action, RuleAction::Lookup(_)),
        Some(RuleAction::Lookup(t)) => r.action == RuleAction::Lookup(t),
        Some(RuleAction::Goto(_)) => matches!(r.action, RuleAction::Goto(_)),
        Some(a) => r.action == a,
    };
    action_ok
        && (spec.table_beside_action == TABLE_UNSPEC || spec.table_beside_action == r.table())
        && (!spec.l3mdev || r.l3mdev)
        && spec.uid_range.is_none_or(|u| r.uid_range == Some(u))
        && (spec.ip_proto == 0 || spec.ip_proto == r.ip_proto)
        && spec.sport_range.is_none_or(|p| r.sport_range == Some(p))
        && spec.dport_range.is_none_or(|p| r.dport_range == Some(p))
        && (spec.tun_id == 0 || spec.tun_id == r.tun_id)
        && spec
            .realms
            .is_none_or(|realms| spec.family == Family::V6 || realms == r.realms)
        && spec.priority.is_none_or(|p| p == r.priority)
        && spec.iif.as_ref().is_none_or(|n| r.iif.as_ref() == Some(n))
        && spec.oif.as_ref().is_none_or(|n| r.oif.as_ref() == Some(n))
        && spec.fwmark.is_none_or(|(mark, mask)| {
            (mark == 0 || r.fwmark.map(|f| f.0) == Some(mark))
                && (mask == 0 || r.fwmark.map(|f| f.1) == Some(mask))
        })
        && spec
            .suppress_prefixlength
            .is_none_or(|n| r.suppress_prefixlength == Some(n))
        && spec
            .suppress_ifgroup
            .is_none_or(|g| r.suppress_ifgroup == Some(g))
        && spec
            .from
            .filter(|p| !p.is_default())
            .is_none_or(|p| {
                r.from == Some(p) && r.from_addr() == Some(spec.written_addrs.0.unwrap_or(p.addr()))
            })
        && spec
            .to
            .filter(|p| !p.is_default())
            .is_none_or(|p| {
                r.to == Some(p) && r.to_addr() == Some(spec.written_addrs.1.unwrap_or(p.addr()))
            })
        && (spec.tos == 0 || spec.tos == r.tos)
        // rule_find: protocol 0 (unspec) is any.
        && spec
            .protocol
            .is_none_or(|p| p == Protocol::UNSPEC || p == r.protocol)
}

impl Fib {
    pub(crate) fn rule_apply(&mut self, op: RuleOp, spec: &RuleSpec) -> Result<(), KernelError> {
        // fib_nl2rule, for add and delete alike: an address of another
        // family has the wrong size (`from 2001:db8::/32` without `-6`).
        let wrong_family = |p: &Option<Prefix>| p.is_some_and(|p| p.family() != spec.family);
        if wrong_family(&spec.from) {
            return Err(KernelError::with_extack(
                Errno::Inval,
                "Invalid source address",
            ));
        }
        if wrong_family(&spec.to) {
            return Err(KernelError::with_extack(
                Errno::Inval,
                "Invalid dst address",
            ));
        }
        self.rule_request_checks(spec)?;
        if op == RuleOp::Add {
            // fib4_rule_configure / fib6_rule_configure.
            if spec.tos & 0x03 != 0 {
                return Err(KernelError::with_extack(
                    Errno::Inval,
                    "Invalid dsfield (tos): ECN bits must be 0",
                ));
            }
            // IPv4 rules match the old TOS bits only (IPTOS_TOS_MASK).
            if spec.family == Family::V4 && spec.tos & !0x1e != 0 {
                return Err(KernelError::with_extack(Errno::Inval, "Invalid tos"));
            }
        }
        match op {
            RuleOp::Add => self.rule_add(spec),
            RuleOp::Del => self.rule_del(spec),
        }
    }

    /// The priority a request without one gets (`fib_default_rule_pref`:
    /// the second rule's priority minus one).
    fn default_rule_priority(&self, family: Family) -> u32 {
        match self.rules(family).get(1) {
            Some(r) if r.priority > 0 => r.priority - 1,
            _ => 0,
        }
    }

    /// `fib_nl2rule`'s checks, which an add and a delete both pass, in its
    /// order: the goto target (against the priority given, else the one
    /// an add would get), the uid range (`uid_range_set`, start not past
    /// end), then the port ranges (`fib_rule_port_range_valid`: no 0, end
    /// below 65535, start not past end).
    fn rule_request_checks(&self, spec: &RuleSpec) -> Result<(), KernelError> {
        if let Some(RuleAction::Goto(target)) = spec.action {
            let priority = spec
                .priority
                .unwrap_or_else(|| self.default_rule_priority(spec.family));
            if target <= priority {
                return Err(KernelError::with_extack(
                    Errno::Inval,
                    "Backward goto not supported",
                ));
            }
        }
        if let Some((start, end)) = spec.uid_range {
            if start == u32::MAX || end == u32::MAX || start > end {
                return Err(KernelError::with_extack(Errno::Inval, "Invalid uid range"));
            }
        }
        let port_range_valid =
            |(start, end): (u16, u16)| start != 0 && end != 0 && end < u16::MAX && start <= end;
        if spec.sport_range.is_some_and(|r| !port_range_valid(r)) {
            return Err(KernelError::with_extack(
                Errno::Inval,
                "Invalid sport range",
            ));
        }
        if spec.dport_range.is_some_and(|r| !port_range_valid(r)) {
            return Err(KernelError::with_extack(
                Errno::Inval,
                "Invalid dport range",
            ));
        }
        Ok(())
    }

    fn rule_add(&mut self, spec: &RuleSpec) -> Result<(), KernelError> {
        let priority = spec
            .priority
            .unwrap_or_else(|| self.default_rule_priority(spec.family));
        let rule = rule_from_spec(spec, priority);
        let rules = self.rules(spec.family);
        if rules.iter().any(|r| rule_exists(r, &rule)) {
            return Err(KernelError::new(Errno::Exist));
        }
        let mut rule = rule;
        // fib4_rule_configure / fib6_rule_configure: an l3mdev rule's
        // table comes from the flow's device, never from here.
        if rule.action == RuleAction::Lookup(TABLE_UNSPEC) && !rule.l3mdev {
            rule.action = RuleAction::Lookup(self.table_for_unspec_rule(spec.family)?);
        }
        let rules = match spec.family {
            Family::V4 => &self.rules_v4,
            Family::V6 => &self.rules_v6,
        };
        let at = rules
            .iter()
            .position(|r| r.priority > rule.priority)
            .unwrap_or(rules.len());
        // `fib4_rule_configure` / `fib6_rule_configure` run only for a new
        // rule that passed every check, and mark the family's rules custom.
        match spec.family {
            Family::V4 => {
                self.custom_rules_v4 = true;
                self.rules_v4.insert(at, rule);
            }
            Family::V6 => {
                // fib6_rule_configure makes the table a lookup rule names
                // (fib6_new_table), so a later delete in it finds the
                // table and no route (kernel-checked: after `-6 rule add
                // from 2001:db8::/32 table 88`, `-6 route del ff00::/8
                // table 88` is "No such process", also once the rule is
                // gone; seed 1796592973894125790).
                if let RuleAction::Lookup(id) = rule.action {
                    if !rule.l3mdev {
                        self.create_table(id, Family::V6);
                    }
                }
                self.custom_rules_v6 = true;
                self.rules_v6.insert(at, rule);
            }
        }
        Ok(())
    }

    /// The table of a rule added with table 0. IPv4 (`fib4_rule_configure`):
    /// `fib_empty_table`, a new table with the lowest id no table has
    /// (kernel-checked: `rule add lookup 0` shows `lookup 1`, the next one
    /// `lookup 2`). IPv6 (`fib6_rule_configure`): "Invalid table".
    fn table_for_unspec_rule(&mut self, family: Family) -> Result<TableId, KernelError> {
        if family == Family::V6 {
            return Err(KernelError::with_extack(Errno::Inval, "Invalid table"));
        }
        let free = (1..=TableId::MAX).find(|id| {
            // fib_get_table reads id 0 as main; 1 up are themselves.
            !self.tables.get(id).is_some_and(|t| t.exists(Family::V4))
        });
        let Some(id) = free else {
            return Err(KernelError::new(Errno::NoBufs));
        };
        self.create_table(id, Family::V4);
        Ok(id)
    }

    fn rule_del(&mut self, spec: &RuleSpec) -> Result<(), KernelError> {
        let rules = match spec.family {
            Family::V4 => &mut self.rules_v4,
            Family::V6 => &mut self.rules_v6,
        };
        let Some(i) = rules.iter().position(|r| del_matches(spec, r)) else {
            return Err(KernelError::new(Errno::NoEnt));
        };
        rules.remove(i);
        // `fib4_rule_delete` unmerges local from main and marks the rules
        // custom, so IPv4 lookups follow the rules from now on (a failed
        // delete never gets there). IPv6 has no delete hook: its fast path
        // (`fib6_rule_lookup`: local, then main) stays until a rule is added.
        if spec.family == Family::V4 {
            self.custom_rules_v4 = true;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(action: RuleAction) -> RuleSpec {
        RuleSpec {
            action: Some(action),
            ..RuleSpec::new(Family::V4)
        }
    }

    fn prios(fib: &Fib) -> Vec<u32> {
        fib.rules(Family::V4).iter().map(|r| r.priority).collect()
    }

    #[test]
    fn default_priority_is_second_rule_minus_one() {
        // Kernel-checked: two `rule add table N` got 32765 then 32764.
        let mut fib = Fib::new();
        fib.rule_apply(RuleOp::Add, &spec(RuleAction::Lookup(100)))
            .unwrap();
        fib.rule_apply(RuleOp::Add, &spec(RuleAction::Lookup(101)))
            .unwrap();
        assert_eq!(prios(&fib), [0, 32764, 32765, 32766, 32767]);
        assert_eq!(fib.rules(Family::V4)[1].action, RuleAction::Lookup(101));
    }

    #[test]
    fn refusals() {
        let mut fib = Fib::new();
        let mut back = spec(RuleAction::Goto(40));
        back.priority = Some(50);
        let e = fib.rule_apply(RuleOp::Add, &back).unwrap_err();
        assert_eq!(e.to_string(), "Error: Backward goto not supported.");
        let mut gone = spec(RuleAction::Lookup(555));
        gone.action = Some(RuleAction::Lookup(555));
        let e = fib.rule_apply(RuleOp::Del, &gone).unwrap_err();
        assert_eq!(
            e.to_string(),
            "RTNETLINK answers: No such file or directory"
        );
        let mut dup = spec(RuleAction::Lookup(7));
        dup.priority = Some(7);
        fib.rule_apply(RuleOp::Add, &dup).unwrap();
        let e = fib.rule_apply(RuleOp::Add, &dup).unwrap_err();
        assert_eq!(e.to_string(), "RTNETLINK answers: File exists");
    }

    #[test]
    fn ipv6_defaults_have_no_default_table_rule() {
        let fib = Fib::new();
        let v6: Vec<(u32, RuleAction)> = fib
            .rules(Family::V6)
            .iter()
            .map(|r| (r.priority, r.action))
            .collect();
        assert_eq!(
            v6,
            [
                (0, RuleAction::Lookup(TABLE_LOCAL)),
                (32766, RuleAction::Lookup(TABLE_MAIN))
            ]
        );
    }

    #[test]
    fn fwmark_mask_is_kept_as_given() {
        // Kernel-checked: `fwmark 0x5/0` is shown `fwmark 0x5/0` (and
        // matches every mark); the parser gives a bare mark its mask.
        let mut fib = Fib::new();
        let mut s = spec(RuleAction::Lookup(51820));
        s.fwmark = Some((5, 0));
        fib.rule_apply(RuleOp::Add, &s).unwrap();
        assert_eq!(fib.rules(Family::V4)[1].fwmark, Some((5, 0)));
        // No mark and no mask: no fwmark selector at all.
        s.fwmark = Some((0, 0));
        s.priority = Some(7);
        fib.rule_apply(RuleOp::Add, &s).unwrap();
        assert_eq!(fib.rules(Family::V4)[1].fwmark, None);
    }
}
