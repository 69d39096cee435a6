//! Reading a configuration and applying it all or nothing.
//!
//! The file is read line by line through a bounded [`LineReader`], each
//! line parsed and applied to a clone of the FIB as it comes, as
//! `ip -batch` streams its input, and as `ip -batch` (`batch()` in
//! iproute2's `ip/ip.c`) the first refused line, a syntax error or a
//! command the kernel refuses, ends the reading without `force`: an
//! endless stream ends there. A configuration is applied all or nothing,
//! so its text is held until the end (the GRE checks apply it again),
//! within the limits below: [`MAX_LINE_BYTES`] a line,
//! [`MAX_CONFIG_BYTES`] and [`MAX_CONFIG_LINES`] a file, and under
//! `force` [`MAX_DIAGNOSTICS`] refused lines.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use std::collections::BTreeSet;

use super::error::{ConfigError, Diagnostic, ParseError};
use super::replay::Replay;
use super::tunnels::tunnel_faults;
use super::{parse_str, parse_words, tokenize};
use crate::lines::{LineError, LineReader};
use crate::Fib;

pub use crate::lines::MAX_LINE_BYTES;

/// The most bytes a configuration may hold (256 MiB: some 6 million
/// `route add` lines). It is applied all or nothing, so it is held whole.
pub const MAX_CONFIG_BYTES: u64 = 256 << 20;
/// The most lines a configuration may hold (2 Mi, 2,097,152: a 2-million
/// route configuration, some two full Internet tables of both families).
/// The limits bound what is held of the file; the FIB it builds grows with
/// its routes, as the kernel's does (some 650 bytes a route: 2 million
/// routes peak at 1.3 GB).
///
/// Why not more: applying a route line costs some 12 us of CPU (release
/// build, 2026-12), so an endless stream of distinct valid routes reached
/// [`MAX_ADDRESS_SPACE`] only after 2.9 million lines and 34 s; this limit
/// ends it after 2 Mi lines, within 30 s, by a count rather than by the
/// process's size, so at the same line on every machine.
pub const MAX_CONFIG_LINES: usize = 2 << 20;
/// The most address space a configuration (or a `route import`) may
/// bring the process to: 1664 MiB. Lines are bounded one by one and the
/// file by [`MAX_CONFIG_LINES`], but what the FIB builds from them is
/// not (an endless stream of distinct valid routes grows it some 650
/// bytes a route), so the loaders look at the process's size every
/// [`MEMORY_CHECK_LINES`] lines and stop with a clear error past this,
/// leaving room under 2 GB for what follows. A 2-million-route
/// configuration of `route add ADDR/32 dev lo` lines peaks at some
/// 1.4 GB (1.5 GB in the test build).
pub const MAX_ADDRESS_SPACE: u64 = 1664 << 20;
/// How many lines the loaders read between two looks at the process's
/// size (one read of `/proc/self/status`).
pub const MEMORY_CHECK_LINES: usize = 4096;

/// The process's address space (`VmSize` of `/proc/self/status`), or
/// `None` where the system does not say.
pub fn address_space() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib << 10)
}

/// The refusal of input that made the process larger than `limit`
/// bytes (`size` at the look), or `None` while it is not.
///
/// ```
/// use fibre_fib::config::past_memory_limit;
/// assert_eq!(past_memory_limit(Some(100 << 20), 1 << 30), None);
/// assert_eq!(past_memory_limit(None, 1 << 30), None);
/// let message = past_memory_limit(Some(3 << 30), 1 << 30).unwrap();
/// assert!(message.starts_with("the FIB built so far takes 3072 MiB, more than the 1024 MiB"), "{message}");
/// ```
pub fn past_memory_limit(size: Option<u64>, limit: u64) -> Option<String> {
    let size = size?;
    (size > limit).then(|| {
        format!(
            "the FIB built so far takes {} MiB, more than the {} MiB fibre lets one input take; \
             reading stopped here (split the input, or load fewer routes)",
            size >> 20,
            limit >> 20
        )
    })
}

/// The most refused lines listed under `force` (without it the first one
/// ends the reading); reading stops at the next one.
pub const MAX_DIAGNOSTICS: usize = 1000;

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
/// the old one). Pipes and `/dev/stdin` are read as they come.
pub fn load(fib: &Fib, path: &Path, force: bool) -> Result<(Fib, Vec<Diagnostic>), ConfigError> {
    let name = path.display().to_string();
    let file = File::open(path).map_err(|error| ConfigError::Io {
        name: name.clone(),
        error,
    })?;
    load_reader(fib, &name, BufReader::with_capacity(1 << 16, file), force)
}

/// The refusal of a configuration past one of its limits, on `line`.
fn too_big(name: &str, line: usize, what: &str, limit: u64) -> Diagnostic {
    Diagnostic {
        file: name.to_string(),
        line,
        message: format!(
            "the configuration is longer than {limit} {what}, the most fibre holds \
             (it is applied all or nothing); split it into several files"
        ),
    }
}

fn binary(name: &str, line: usize, what: &str, offset: u64) -> ConfigError {
    ConfigError::Binary {
        name: name.to_string(),
        line,
        why: format!("{what} at offset {offset}"),
    }
}

/// What `ip -batch` reads of one physical line (`getcmdline`): the text up
/// to the first NUL byte (the end of a C string) or `#` (a comment, which
/// it cuts before splitting words), which must be UTF-8; what follows is
/// never read, so a Latin-1 byte in a comment is no error. Invalid UTF-8
/// before it makes the file binary, named by the offset in the stream.
fn visible_text<'a>(
    name: &str,
    number: usize,
    start: u64,
    line: &'a [u8],
) -> Result<&'a str, ConfigError> {
    let end = line
        .iter()
        .position(|b| *b == 0 || *b == b'#')
        .unwrap_or(line.len());
    std::str::from_utf8(&line[..end]).map_err(|err| {
        binary(
            name,
            number,
            "invalid UTF-8",
            start + err.valid_up_to() as u64,
        )
    })
}

/// A command continued over several physical lines, as `getcmdline`
/// joins them: a line whose text (no comment, no NUL) ends in a backslash
/// right before a plain `\n` goes on, without the backslash and newline,
/// on the next line.
#[derive(Default)]
struct Continued {
    /// The joined text so far.
    pub(super) text: String,
    /// The physical lines' visible text, each with its newline, for the
    /// second pass (which joins them again, and so counts lines alike).
    kept: String,
    /// How many physical lines it holds.
    lines: usize,
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
    load_reader(fib, name, text.as_bytes(), force)
}

/// [`apply_str`] on a stream (a file, a pipe): read line by line within
/// the limits of this module, each line applied as it is read.
///
/// # Errors
/// As [`apply_str`]; a read failure is [`ConfigError::Io`], a line or
/// file past its limit a [`ConfigError::Rejected`] naming the line.
///
/// ```
/// use fibre_fib::{config, Fib};
/// // An endless stream of NUL bytes (`/dev/zero`) ends at once.
/// let zeros = std::io::BufReader::new(std::io::repeat(0));
/// let err = config::load_reader(&Fib::new(), "stdin", zeros, false).unwrap_err();
/// assert!(err.to_string().starts_with("stdin:1: not a text file (a NUL byte at offset 0)"), "{err}");
/// // A line past the limit is refused, naming it.
/// let long = format!("link add d0 type dummy\n# {}\n", "x".repeat(config::MAX_LINE_BYTES));
/// let err = config::apply_str(&Fib::new(), "long.conf", &long, false).unwrap_err();
/// assert!(err.to_string().starts_with("long.conf:2: line longer than 65536 bytes"), "{err}");
/// ```
pub fn load_reader(
    fib: &Fib,
    name: &str,
    reader: impl BufRead,
    force: bool,
) -> Result<(Fib, Vec<Diagnostic>), ConfigError> {
    let streamed = stream(fib, name, reader, force)?;
    finish(fib, name, streamed, force)
}

/// What one pass over the stream left.
pub(super) struct Streamed {
    /// The FIB with every line applied (or those before the first refusal).
    pub(super) next: Fib,
    /// The text read, one line each, for the GRE checks' second pass.
    pub(super) text: String,
    /// Syntax errors, in line order (under `force`: without it the first
    /// refusal refuses the file).
    pub(super) parse_diagnostics: Vec<Diagnostic>,
    /// Refused commands, in line order.
    pub(super) apply_diagnostics: Vec<Diagnostic>,
}

/// Reads, parses and applies the stream, within the module's limits.
pub(super) fn stream(
    fib: &Fib,
    name: &str,
    reader: impl BufRead,
    force: bool,
) -> Result<Streamed, ConfigError> {
    let mut lines = LineReader::new(reader);
    let mut streamed = Streamed {
        next: fib.clone(),
        text: String::new(),
        parse_diagnostics: Vec::new(),
        apply_diagnostics: Vec::new(),
    };
    let diagnostic = |line: usize, message: String| Diagnostic {
        file: name.to_string(),
        line,
        message,
    };
    let mut continued = Continued::default();
    loop {
        let number = lines.line_number() + 1;
        let line = match lines.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(LineError::Io(error)) => {
                return Err(ConfigError::Io {
                    name: name.to_string(),
                    error,
                })
            }
            Err(LineError::TooLong {
                first_nul: Some(offset),
                ..
            }) => return Err(binary(name, number, "a NUL byte", offset)),
            Err(err @ LineError::TooLong { .. }) => {
                return Err(refused(streamed, diagnostic(number, err.to_string())));
            }
        };
        let end = line.end;
        let newline = line.end - line.start - line.bytes.len() as u64;
        let whole = line.bytes.len();
        let line = visible_text(name, number, line.start, line.bytes)?;
        if end > MAX_CONFIG_BYTES {
            return Err(refused(
                streamed,
                too_big(name, number, "bytes", MAX_CONFIG_BYTES),
            ));
        }
        if number > MAX_CONFIG_LINES {
            return Err(refused(
                streamed,
                too_big(name, number, "lines", MAX_CONFIG_LINES as u64),
            ));
        }
        if number.is_multiple_of(MEMORY_CHECK_LINES) {
            if let Some(message) = past_memory_limit(address_space(), MAX_ADDRESS_SPACE) {
                return Err(refused(streamed, diagnostic(number, message)));
            }
        }
        // `\` before a CR LF is no continuation: the CR is a separator.
        if line.len() == whole && newline == 1 && line.ends_with('\\') {
            continued.text.push_str(&line[..line.len() - 1]);
            continued.kept.push_str(line);
            continued.kept.push('\n');
            continued.lines += 1;
            continue;
        }
        let earlier = std::mem::take(&mut continued);
        let joined = earlier.text + line;
        match tokenize(&joined).and_then(|words| parse_words(&words)) {
            Ok(commands) => {
                streamed.text.push_str(&earlier.kept);
                streamed.text.push_str(line);
                streamed.text.push('\n');
                for command in &commands {
                    if let Err(err) = streamed.next.apply(command) {
                        let refusal = diagnostic(number, err.to_string());
                        if !force {
                            return Err(ConfigError::Rejected {
                                diagnostics: vec![refusal],
                            });
                        }
                        streamed.apply_diagnostics.push(refusal);
                        // One line is one request to the kernel (`link add
                        // X up` sets IFF_UP in its RTM_NEWLINK): what follows
                        // a refused part is not applied.
                        break;
                    }
                }
            }
            Err(err) => {
                // iproute2 looks devices up as it reads, so a missing one
                // may be the line's refusal rather than what the parser,
                // which does not know the devices, found.
                // So may the kernel's refusal of a request fibre refuses
                // for what it does not model.
                let message = err.refusal_on(&streamed.next);
                let refusal = diagnostic(number, message);
                if !force {
                    return Err(ConfigError::Rejected {
                        diagnostics: vec![refusal],
                    });
                }
                streamed.parse_diagnostics.push(refusal);
                // Empty lines in its place: a second pass parses the text
                // again, and its line numbers must match.
                streamed.text.push_str(&"\n".repeat(earlier.lines + 1));
            }
        }
        if streamed.parse_diagnostics.len() + streamed.apply_diagnostics.len() > MAX_DIAGNOSTICS {
            let stop = diagnostic(
                number,
                format!("more than {MAX_DIAGNOSTICS} lines refused; reading stopped here"),
            );
            return Err(refused(streamed, stop));
        }
    }
    if lines.bytes_read() == 0 {
        return Err(ConfigError::Empty {
            name: name.to_string(),
        });
    }
    if continued.lines > 0 {
        // `getcmdline` at the end of the file inside a continued command.
        let err = ParseError::new("\\", "another line to continue this one", None)
            .with_system_message("Missing continuation line");
        let refusal = diagnostic(lines.line_number(), err.to_string());
        if !force {
            return Err(ConfigError::Rejected {
                diagnostics: vec![refusal],
            });
        }
        streamed.parse_diagnostics.push(refusal);
        streamed.text.push_str(&"\n".repeat(continued.lines));
    }
    Ok(streamed)
}

/// The file refused at `last`: the refusals found so far, then it.
fn refused(streamed: Streamed, last: Diagnostic) -> ConfigError {
    let mut diagnostics = streamed.parse_diagnostics;
    diagnostics.extend(streamed.apply_diagnostics);
    diagnostics.sort_by_key(|d| d.line);
    diagnostics.push(last);
    ConfigError::Rejected { diagnostics }
}

/// The refusals of a pass, and the tunnels' checks on what it built.
pub(super) fn finish(
    fib: &Fib,
    name: &str,
    streamed: Streamed,
    force: bool,
) -> Result<(Fib, Vec<Diagnostic>), ConfigError> {
    let Streamed {
        next,
        text,
        parse_diagnostics,
        apply_diagnostics,
    } = streamed;
    let done = |next: Fib, mut diagnostics: Vec<Diagnostic>, tunnel_diagnostics| {
        diagnostics.extend(parse_diagnostics);
        diagnostics.extend(tunnel_diagnostics);
        diagnostics.sort_by_key(|d: &Diagnostic| d.line);
        Ok((next, diagnostics))
    };
    // Tunnels are checked against the whole configuration once it is
    // applied: their `local` address may be added later in the file. A
    // refusal under `force` skips the line it is placed on by applying
    // the file again without it, so the result is as if that line were
    // bad. Each round skips at least one more applied line, so this ends;
    // each applies the file from the FIB before the earliest line it
    // skips (see `Replay`). The statements are parsed again from the text
    // only when a tunnel needs it.
    let mut faults = tunnel_faults(&next);
    if faults.is_empty() {
        return done(next, apply_diagnostics, Vec::new());
    }
    let statements = parse_str(name, &text).statements;
    drop(text);
    let mut replay = Replay::new(fib, &statements);
    let mut skipped_lines = BTreeSet::new();
    let mut tunnel_diagnostics = Vec::new();
    let mut diagnostics = apply_diagnostics;
    // The replay that places the refusals builds this state again.
    drop(next);
    loop {
        let (refused, replayed) = replay.blame(name, &skipped_lines, &faults);
        let Some(earliest) = refused.first().map(|d| d.line) else {
            return done(replayed, diagnostics, tunnel_diagnostics);
        };
        if !force {
            return Err(ConfigError::Rejected {
                diagnostics: refused,
            });
        }
        drop(replayed);
        skipped_lines.extend(refused.iter().map(|d| d.line));
        tunnel_diagnostics.extend(refused);
        replay.skip_from(earliest, name, &skipped_lines);
        let next;
        (next, diagnostics) = replay.apply_rest(name, &skipped_lines);
        faults = tunnel_faults(&next);
        if faults.is_empty() {
            return done(next, diagnostics, tunnel_diagnostics);
        }
    }
}
