//! Reading a configuration file and applying it all or nothing.

use std::path::Path;

use std::collections::{BTreeMap, BTreeSet};

use super::error::{ConfigError, Diagnostic};
use super::{parse_str, Statement};
use crate::{Command, Fib, LinkKind, TunnelError};

/// Reads `path` and applies it to a clone of `fib`.
///
/// ```
/// use fibre_fib::{config, Fib};
/// let path = std::env::temp_dir().join(format!("fibre-load-doc-{}.conf", std::process::id()));
/// std::fs::write(&path, "link add d0 type dummy\nlink set d0 up\nroute add 10.0.0.0/8 dev d0\n").unwrap();
/// let (fib, skipped) = config::load(&Fib::new(), &path, false).unwrap();
/// assert!(skipped.is_empty());
/// assert_eq!(fib.routes(fibre_fib::Family::V4, Some(fibre_fib::TABLE_MAIN)).len(), 1);
/// std::fs::remove_file(&path).unwrap();
/// ```
///
/// Returns the new FIB and the diagnostics of the lines skipped under
/// `force`; without `force`, any bad line (or refused command) refuses the
/// whole file and `fib` is untouched (it is never changed: the caller keeps
/// the old one).
pub fn load(fib: &Fib, path: &Path, force: bool) -> Result<(Fib, Vec<Diagnostic>), ConfigError> {
    let text = read_config_file(path)?;
    apply_str(fib, &path.display().to_string(), &text, force)
}

/// The text of a configuration file; empty and binary (NUL bytes, invalid
/// UTF-8) files are refused with the line of the first bad byte.
///
/// ```
/// let path = std::env::temp_dir().join(format!("fibre-doc-{}.conf", std::process::id()));
/// std::fs::write(&path, b"route add 10.0.0.0/8 dev eth0\n\x00").unwrap();
/// let err = fibre_fib::config::read_config_file(&path).unwrap_err();
/// assert!(err.to_string().contains(":2: not a text file (a NUL byte at offset 30)"));
/// std::fs::remove_file(&path).unwrap();
/// ```
pub fn read_config_file(path: &Path) -> Result<String, ConfigError> {
    let bytes = std::fs::read(path).map_err(|source| ConfigError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let name = path.display().to_string();
    text_of(&name, &bytes).map(str::to_string)
}

/// The text of a file, refusing empty and binary ones.
fn text_of<'a>(name: &str, bytes: &'a [u8]) -> Result<&'a str, ConfigError> {
    if bytes.is_empty() {
        return Err(ConfigError::Empty {
            name: name.to_string(),
        });
    }
    let line_of = |offset: usize| 1 + bytes[..offset].iter().filter(|b| **b == b'\n').count();
    if let Some(offset) = bytes.iter().position(|b| *b == 0) {
        return Err(ConfigError::Binary {
            name: name.to_string(),
            line: line_of(offset),
            why: format!("a NUL byte at offset {offset}"),
        });
    }
    std::str::from_utf8(bytes).map_err(|err| ConfigError::Binary {
        name: name.to_string(),
        line: line_of(err.valid_up_to()),
        why: format!("invalid UTF-8 at offset {}", err.valid_up_to()),
    })
}

/// Parses `text` (named `name` in messages) and applies it to a clone of
/// `fib`: all or nothing, or with `force` everything that parses and
/// applies, returning the skipped lines' diagnostics.
///
/// The GRE tunnels are then checked against the FIB the file built (a
/// `local` address that is the router's, an underlay that does not lead
/// back into the tunnel, directly or through other tunnels; see
/// [`crate::GreSpec::check_against`]): here rather than when the `link add` is
/// applied, because the address or the underlay route may come later in
/// the file, and the kernel itself accepts all of these. A refusal is
/// placed on the line after which it holds (the `link add`, or a later
/// `addr del`, `route add`... that broke the tunnel), naming the
/// tunnels' own lines; one that already held before the file is not the
/// file's doing and is let be.
///
/// ```
/// use fibre_fib::{config, Fib};
/// let fib = Fib::new();
/// let (fib, skipped) = config::apply_str(&fib, "inline", "link add d0 type dummy\n", false).unwrap();
/// assert!(skipped.is_empty());
/// assert!(fib.link_by_name("d0").is_some());
/// // A refused command refuses the file; with force it is skipped.
/// let text = "link add d1 type dummy\nroute add 10.0.0.0/8 dev d1\n";
/// let err = config::apply_str(&fib, "t.conf", text, false).unwrap_err();
/// assert!(err.to_string().starts_with("t.conf:2: Error: Device for nexthop is not up."));
/// let (fib, skipped) = config::apply_str(&fib, "t.conf", text, true).unwrap();
/// assert_eq!(skipped.len(), 1);
/// assert!(fib.link_by_name("d1").is_some());
/// // A tunnel is refused on the line that broke it.
/// let text = "link add g1 up type gre remote 198.51.100.2\nroute add default dev g1\n";
/// let err = config::apply_str(&fib, "t.conf", text, false).unwrap_err();
/// assert!(err.to_string().starts_with("t.conf:2: the route to remote 198.51.100.2 leaves through g1 itself"));
/// assert!(err.to_string().contains("[after this line; g1 is added at line 1]"));
/// ```
pub fn apply_str(
    fib: &Fib,
    name: &str,
    text: &str,
    force: bool,
) -> Result<(Fib, Vec<Diagnostic>), ConfigError> {
    if text.is_empty() {
        return Err(ConfigError::Empty {
            name: name.to_string(),
        });
    }
    let parsed = parse_str(name, text);
    if !parsed.diagnostics.is_empty() && !force {
        return Err(ConfigError::Rejected {
            diagnostics: parsed.diagnostics,
        });
    }
    // Tunnels are checked against the whole configuration once it is
    // applied: their `local` address may be added later in the file. A
    // refusal under `force` skips the line it is placed on by applying
    // the file again without it, so the result is as if that line were
    // bad. Each round skips at least one more applied line, so this ends.
    let mut skipped_lines = BTreeSet::new();
    let mut tunnel_diagnostics = Vec::new();
    loop {
        let (next, mut diagnostics) =
            apply_statements(fib, name, &parsed.statements, &skipped_lines, force)?;
        let faults = tunnel_faults(&next);
        let refused = if faults.is_empty() {
            Vec::new()
        } else {
            blame(fib, name, &parsed.statements, &skipped_lines, faults)
        };
        if refused.is_empty() {
            diagnostics.extend(parsed.diagnostics);
            diagnostics.extend(tunnel_diagnostics);
            diagnostics.sort_by_key(|d| d.line);
            return Ok((next, diagnostics));
        }
        if !force {
            return Err(ConfigError::Rejected {
                diagnostics: refused,
            });
        }
        skipped_lines.extend(refused.iter().map(|d| d.line));
        tunnel_diagnostics.extend(refused);
    }
}

/// Applies the statements not on `skipped_lines` to a clone of `fib`;
/// without `force` the first refusal refuses the file.
fn apply_statements(
    fib: &Fib,
    name: &str,
    statements: &[Statement],
    skipped_lines: &BTreeSet<usize>,
    force: bool,
) -> Result<(Fib, Vec<Diagnostic>), ConfigError> {
    let mut next = fib.clone();
    let mut diagnostics = Vec::new();
    for statement in statements {
        if skipped_lines.contains(&statement.line) {
            continue;
        }
        if let Err(err) = next.apply(&statement.command) {
            diagnostics.push(Diagnostic {
                file: name.to_string(),
                line: statement.line,
                message: err.to_string(),
            });
            if !force {
                return Err(ConfigError::Rejected { diagnostics });
            }
        }
    }
    Ok((next, diagnostics))
}

/// What a tunnel refusal is about, stable across the states a file goes
/// through: which check fails for which tunnel, or which tunnels form a
/// loop (listed from the least name, whichever tunnel found it).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum FaultKey {
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

    /// The tunnel whose check finds this fault.
    fn tunnel(&self) -> &str {
        match self {
            FaultKey::Local(name) | FaultKey::Loop(name) => name,
            FaultKey::Cycle(members) => members.first().map_or("", String::as_str),
        }
    }

    /// Whether the fault is present in `fib`.
    fn holds(&self, fib: &Fib) -> bool {
        tunnel_fault(fib, self.tunnel()).is_some_and(|(key, _)| key == *self)
    }
}

/// The tunnel `name`'s fault in `fib`, if it is a GRE tunnel there that
/// does not fit.
fn tunnel_fault(fib: &Fib, name: &str) -> Option<(FaultKey, TunnelError)> {
    let LinkKind::Gre(spec) = &fib.link_by_name(name)?.kind else {
        return None;
    };
    let err = spec.check_against(name, fib).err()?;
    Some((FaultKey::of(&err), err))
}

/// Every GRE tunnel of `fib` that does not fit it. A loop through several
/// tunnels is found from each of them; it is kept once, as its least
/// tunnel finds it, so the message goes round from there.
fn tunnel_faults(fib: &Fib) -> BTreeMap<FaultKey, TunnelError> {
    fib.links()
        .filter_map(|link| tunnel_fault(fib, &link.name))
        .filter(|(key, err)| err.tunnels().first() == Some(&key.tunnel()))
        .collect()
}

/// Places each of `faults` (found in the FIB the file built) on the
/// statement after which it holds to the end of the file: the line a user
/// must change. The file is applied again from `fib`, statement by
/// statement, and the faults are checked after each one; re-running the
/// check is exact where tracking which statement last touched the routes
/// and addresses involved would not be (a loop may come from deleting a
/// more specific route, a link going down, a rule, an address taken
/// away), and it costs a second pass only when a file is refused. A fault
/// that held already before the file is left alone.
fn blame(
    fib: &Fib,
    name: &str,
    statements: &[Statement],
    skipped_lines: &BTreeSet<usize>,
    faults: BTreeMap<FaultKey, TunnelError>,
) -> Vec<Diagnostic> {
    let applied: Vec<&Statement> = statements
        .iter()
        .filter(|statement| !skipped_lines.contains(&statement.line))
        .collect();
    let mut state = fib.clone();
    // For each fault: None while it does not hold, Some(None) while it has
    // held since before the file, Some(Some(i)) since `applied[i]`.
    let mut since: Vec<Option<Option<usize>>> = faults
        .keys()
        .map(|key| key.holds(&state).then_some(None))
        .collect();
    for (i, statement) in applied.iter().enumerate() {
        // A refused command is checked like the others: the state after
        // it is what the next statement sees.
        let _ = state.apply(&statement.command);
        for (key, held) in faults.keys().zip(since.iter_mut()) {
            match (key.holds(&state), *held) {
                (true, None) => *held = Some(Some(i)),
                (true, Some(_)) => {}
                (false, _) => *held = None,
            }
        }
    }
    let added = last_tunnel_adds(&applied);
    let mut refused: Vec<Diagnostic> = faults
        .into_iter()
        .zip(since)
        .filter_map(|((_, err), held)| {
            let line = match held {
                Some(Some(i)) => applied[i].line,
                Some(None) => return None,
                // The scan ends in the state the faults were found in, so
                // a fault holds at its end and this cannot happen; were it
                // to, the file is still refused, on its last line.
                None => applied.last().map_or(1, |statement| statement.line),
            };
            Some(Diagnostic {
                file: name.to_string(),
                line,
                message: format!("{err}{}", tunnel_lines(&err, line, &added)),
            })
        })
        .collect();
    refused.sort_by_key(|d| d.line);
    refused
}

/// The line of each tunnel's last `link add` among `applied`.
fn last_tunnel_adds<'a>(applied: &[&'a Statement]) -> BTreeMap<&'a str, usize> {
    applied
        .iter()
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
