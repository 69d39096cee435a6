//! The tunnel check of a loaded configuration: which GRE tunnels do not fit
//! the FIB a file built, and the line of the file each refusal is placed
//! on (see [`super::apply_str`]).
//!
//! Both scale with the file: the faults are found in one pass over the
//! tunnels ([`crate::write::gre::tunnel_errors`]), and placing them replays the
//! file once, re-checking after each statement only the faults that
//! statement can have changed.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::IpAddr;

use super::error::Diagnostic;
use super::Statement;
use crate::write::gre::{goes_round, local_refused, tunnel_errors, tunnel_of};
use crate::{Command, Family, Fib, LinkKind, TunnelError};

/// What a tunnel refusal is about, stable across the states a file goes
/// through: which check fails for which tunnel, or which tunnels form a
/// loop (listed from the least name, whichever tunnel found it).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum FaultKey {
    Local(String),
    Loop(String),
    Cycle(Vec<String>),
}

impl FaultKey {
    fn of(err: &TunnelError) -> FaultKey {
        match err {
            TunnelError::LocalNotOnRouter { name, .. } => FaultKey::Local(name.clone()),
            TunnelError::UnderlayLoop { name, .. } => FaultKey::Loop(name.clone()),
            TunnelError::UnderlayCycle { .. } => {
                let mut members: Vec<String> =
                    err.tunnels().into_iter().map(str::to_string).collect();
                let least = (0..members.len()).min_by_key(|&i| &members[i]).unwrap_or(0);
                members.rotate_left(least);
                FaultKey::Cycle(members)
            }
        }
    }

    /// The tunnels whose links the fault is about.
    fn tunnels(&self) -> &[String] {
        match self {
            FaultKey::Local(name) | FaultKey::Loop(name) => std::slice::from_ref(name),
            FaultKey::Cycle(members) => members,
        }
    }

    /// Whether the fault is present in `fib`: whether checking its first
    /// tunnel there ([`crate::GreSpec::check_against`]) finds this fault.
    fn holds(&self, fib: &Fib) -> bool {
        match self {
            FaultKey::Local(name) => local_refused(fib, name),
            FaultKey::Loop(_) | FaultKey::Cycle(_) => goes_round(fib, self.tunnels()),
        }
    }
}

/// Every GRE tunnel of `fib` that does not fit it, a loop through several
/// tunnels once, as its least tunnel finds it, so the message goes round
/// from there.
pub(super) fn tunnel_faults(fib: &Fib) -> BTreeMap<FaultKey, TunnelError> {
    tunnel_errors(fib)
        .into_iter()
        .map(|err| (FaultKey::of(&err), err))
        .collect()
}

/// Places each of `faults` (found in the FIB the file built) on the
/// statement after which it holds to the end of the file: the line a user
/// must change. The file is applied again, statement by statement, and the
/// faults are checked after each one; re-running the check is exact where
/// recording which statement set each route and address involved would
/// not be (a loop may come from deleting a more specific route, a link
/// going down, a rule, an address taken away), and it costs a second pass
/// only when a file is refused. A fault that held already before the file
/// is left alone.
///
/// The replay starts from `start`, the state before `statements[from]`
/// (see [`super::replay::Replay`]): a fault that does not hold there
/// cannot have held since an earlier line, so where none does the lines
/// before `from` need no second look. Where one does, its line may be
/// among them, and the replay starts from `base` (the FIB before the
/// file) instead.
///
/// A statement re-checks only the faults it can change (see [`Watch`]),
/// so the replay costs the statements plus the checks they call for, not
/// the statements times the faults. Returns the refusals, by line, and
/// the state the replay ends in: the FIB the file builds without
/// `skipped_lines`.
pub(super) fn blame(
    (start, from): (&Fib, usize),
    base: &Fib,
    name: &str,
    statements: &[Statement],
    skipped_lines: &BTreeSet<usize>,
    faults: &BTreeMap<FaultKey, TunnelError>,
) -> (Vec<Diagnostic>, Fib) {
    let keys: Vec<&FaultKey> = faults.keys().collect();
    let mut held: Vec<bool> = keys.iter().map(|key| key.holds(start)).collect();
    let (start, from) = if from > 0 && held.contains(&true) {
        held = keys.iter().map(|key| key.holds(base)).collect();
        (base, 0)
    } else {
        (start, from)
    };
    let mut state = start.clone();
    state.local_addrs.keep_journal();
    let mut watch = Watch::new(&keys);
    // For each fault: None while it does not hold, Some(None) while it has
    // held since before the file, Some(Some(i)) since `statements[i]`.
    let mut since: Vec<Option<Option<usize>>> = held.iter().map(|h| h.then_some(None)).collect();
    for (at, key) in keys.iter().enumerate() {
        watch.local_of(at, key, &state);
    }
    let mut refused_line = None;
    for (i, statement) in statements.iter().enumerate().skip(from) {
        if skipped_lines.contains(&statement.line) || refused_line == Some(statement.line) {
            // The rest of a refused line is not applied (see `load`).
            continue;
        }
        let links = links_named(&state, &statement.command);
        // A refused command is checked like the others: the state after
        // it is what the next statement sees.
        if state.apply(&statement.command).is_err() {
            refused_line = Some(statement.line);
        }
        for at in watch.reached_by(&mut state, &statement.command, &links, i) {
            let key = keys[at];
            match (key.holds(&state), since[at]) {
                (true, None) => since[at] = Some(Some(i)),
                (true, Some(_)) => {}
                (false, _) => since[at] = None,
            }
            watch.local_of(at, key, &state);
        }
    }
    state.local_addrs.end_journal();
    let applied = || {
        statements
            .iter()
            .filter(|statement| !skipped_lines.contains(&statement.line))
    };
    let added = last_tunnel_adds(applied());
    let last_line = applied().next_back().map_or(1, |statement| statement.line);
    let mut refused: Vec<Diagnostic> = faults
        .values()
        .zip(since)
        .filter_map(|(err, held)| {
            let line = match held {
                Some(Some(i)) => statements[i].line,
                Some(None) => return None,
                // The scan ends in the state the faults were found in, so
                // a fault holds at its end and this cannot happen; were it
                // to, the file is still refused, on its last line.
                None => last_line,
            };
            Some(Diagnostic {
                file: name.to_string(),
                line,
                message: format!("{err}{}", tunnel_lines(err, line, &added)),
            })
        })
        .collect();
    refused.sort_by_key(|d| d.line);
    (refused, state)
}

/// The links a command adds or deletes (both ends of a veth pair), by
/// name, looked up in `before`, the state it applies to: the only
/// commands that make a name a tunnel or take it away.
fn links_named(before: &Fib, command: &Command) -> Vec<String> {
    match command {
        Command::LinkAdd {
            name,
            kind: LinkKind::Veth { peer },
            ..
        } => vec![name.clone(), peer.clone()],
        Command::LinkAdd { name, .. } => vec![name.clone()],
        Command::LinkDel { name } => {
            let mut names = vec![name.clone()];
            if let Some(LinkKind::Veth { peer }) = before.link_by_name(name).map(|l| &l.kind) {
                names.push(peer.clone());
            }
            names
        }
        _ => Vec::new(),
    }
}

/// Which faults a statement can change, so that the replay of [`blame`]
/// re-checks those only:
/// - a `local` fault changes when its tunnel is added or deleted, or when
///   its `local` address is (the tunnel's spec gives the address, and only
///   adding the tunnel again can change that);
/// - a loop depends on the routes to the remotes of its tunnels, which
///   any statement may change but one: adding a link that is none of its
///   tunnels. A new link is down, with no address, so no route or source
///   address comes with it; only a rule naming it as `iif` or `oif` could
///   start matching, and then every loop is re-checked.
struct Watch<'k> {
    /// The faults about each tunnel.
    by_tunnel: HashMap<&'k str, Vec<usize>>,
    /// The `local` faults by the address they were last found to need.
    by_local: HashMap<IpAddr, Vec<usize>>,
    /// The address each `local` fault needed when last checked.
    local: Vec<Option<IpAddr>>,
    /// The loops.
    routed: Vec<usize>,
    /// The statement that last listed each fault, against repeats.
    listed_at: Vec<Option<usize>>,
}

impl<'k> Watch<'k> {
    fn new(keys: &[&'k FaultKey]) -> Watch<'k> {
        let mut by_tunnel: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut routed = Vec::new();
        for (at, key) in keys.iter().enumerate() {
            for tunnel in key.tunnels() {
                by_tunnel.entry(tunnel.as_str()).or_default().push(at);
            }
            if !matches!(key, FaultKey::Local(_)) {
                routed.push(at);
            }
        }
        Watch {
            by_tunnel,
            by_local: HashMap::new(),
            local: vec![None; keys.len()],
            routed,
            listed_at: vec![None; keys.len()],
        }
    }

    /// Notes the address the `local` fault `at` depends on in `state`.
    fn local_of(&mut self, at: usize, key: &FaultKey, state: &Fib) {
        let FaultKey::Local(name) = key else {
            return;
        };
        let local = tunnel_of(state, name).and_then(|spec| spec.local);
        if local != self.local[at] {
            self.local[at] = local;
            // A stale entry under the old address costs one needless
            // re-check at most; it is not worth finding and removing.
            if let Some(local) = local {
                self.by_local.entry(local).or_default().push(at);
            }
        }
    }

    /// The faults that `command` (the statement `step`, which added or
    /// deleted `links`) may have changed, now that `state` is after it.
    fn reached_by(
        &mut self,
        state: &mut Fib,
        command: &Command,
        links: &[String],
        step: usize,
    ) -> Vec<usize> {
        let mut reached = Vec::new();
        let mut list = |at: usize, listed_at: &mut Vec<Option<usize>>| {
            if listed_at[at] != Some(step) {
                listed_at[at] = Some(step);
                reached.push(at);
            }
        };
        for link in links {
            for &at in self.by_tunnel.get(link.as_str()).into_iter().flatten() {
                list(at, &mut self.listed_at);
            }
        }
        for addr in state.local_addrs.take_journal() {
            for &at in self.by_local.get(&addr).into_iter().flatten() {
                list(at, &mut self.listed_at);
            }
        }
        let leaves_routes_alone = match command {
            Command::LinkAdd { .. } => !links.iter().any(|link| rule_names(state, link)),
            _ => false,
        };
        if !leaves_routes_alone {
            for &at in &self.routed {
                list(at, &mut self.listed_at);
            }
        }
        reached
    }
}

/// Whether a rule of `fib` matches on the device `name` (`iif`/`oif`).
fn rule_names(fib: &Fib, name: &str) -> bool {
    [Family::V4, Family::V6].into_iter().any(|family| {
        fib.rules(family)
            .iter()
            .any(|rule| rule.iif.as_deref() == Some(name) || rule.oif.as_deref() == Some(name))
    })
}

/// The line of each tunnel's last `link add` among `applied`.
fn last_tunnel_adds<'a>(applied: impl Iterator<Item = &'a Statement>) -> BTreeMap<&'a str, usize> {
    applied
        .filter_map(|statement| match &statement.command {
            Command::LinkAdd {
                name,
                kind: LinkKind::Gre(_),
                ..
            } => Some((name.as_str(), statement.line)),
            _ => None,
        })
        .collect()
}

/// ` [after this line; g1 is added at line 4, g2 at line 5]`: where the
/// tunnels of a refusal placed on `line` come from (in the same file, so
/// its name, often a long path, is not repeated), unless that is the one
/// tunnel's own `link add` line.
fn tunnel_lines(err: &TunnelError, line: usize, added: &BTreeMap<&str, usize>) -> String {
    let tunnels = err.tunnels();
    if let [only] = tunnels.as_slice() {
        if added.get(only) == Some(&line) {
            return String::new();
        }
    }
    let places: Vec<String> = tunnels
        .iter()
        .enumerate()
        .map(|(i, tunnel)| {
            let verb = if i == 0 { " is added at " } else { " at " };
            match added.get(tunnel) {
                Some(add) => format!("{tunnel}{verb}line {add}"),
                None => format!("{tunnel} from before this file"),
            }
        })
        .collect();
    format!(" [after this line; {}]", places.join(", "))
}
