//! Reading a configuration file and applying it all or nothing.

use std::path::Path;

use std::collections::BTreeSet;

use super::error::{ConfigError, Diagnostic};
use super::tunnels::{blame, tunnel_faults};
use super::{parse_str, Statement};
use crate::Fib;

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
