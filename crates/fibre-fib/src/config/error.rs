//! What goes wrong reading a configuration: one bad line ([`ParseError`]),
//! a bad line placed in its file ([`Diagnostic`]) and a whole file refused
//! ([`ConfigError`]).

use std::fmt;

use crate::command::Command;
use crate::fib::Fib;

/// Why one line (or one `route get` query) was refused.
///
/// It names the offending token, the keyword it belongs to and what was
/// expected there, plus iproute2's or the kernel's own message where they
/// have one.
///
/// ```
/// use fibre_fib::config::ParseError;
/// let e = ParseError::new("via", "an IPv4 or IPv6 address", Some("10.0.0.300"));
/// assert_eq!(e.to_string(), r#""via": expected an IPv4 or IPv6 address, got "10.0.0.300""#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The keyword (or command word) whose argument was wrong.
    pub keyword: String,
    /// What would have been accepted there.
    /// (Boxed: a [`ParseError`] travels in every `Result` of the parser,
    /// which clippy's `result_large_err` wants under 128 bytes.)
    pub expected: Box<str>,
    /// The token found instead; `None` when the line ended.
    pub got: Option<String>,
    /// iproute2's or the kernel's message for the same mistake.
    pub system_message: Option<String>,
    /// The devices iproute2 looks up by name (`ll_name_to_index`) before it
    /// gets to this refusal, in its order: a parser without the FIB's state
    /// cannot tell whether they exist, so whoever applies the line checks
    /// them first ([`ParseError::refusal_with`]).
    pub device_checks: Vec<DeviceCheck>,
    /// The request the line makes but for what fibre refuses in it (a
    /// keyword or route type the kernel takes and fibre does not model):
    /// the kernel's own checks of that request come first, so whoever
    /// applies the line tries it on the FIB ([`ParseError::refusal_on`]).
    pub kernel_first: Option<Box<Command>>,
}

/// A device iproute2 looks up while it reads a line (or the kernel checks
/// before the refusal the line ends with), and what it says when the
/// lookup fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceCheck {
    /// The device's name.
    pub name: String,
    /// Whether the check wants the device to exist (a lookup) or not (the
    /// name of a new link: the kernel's `EEXIST`).
    pub exists: bool,
    /// The refusal when the check fails, e.g. `Cannot find device "fd6"`.
    pub refusal: String,
}

impl ParseError {
    /// A refusal of `got` after `keyword`, where `expected` was wanted.
    pub fn new(keyword: &str, expected: &str, got: Option<&str>) -> Self {
        Self {
            keyword: keyword.to_string(),
            expected: expected.into(),
            got: got.map(str::to_string),
            system_message: None,
            device_checks: Vec::new(),
            kernel_first: None,
        }
    }

    /// The same refusal, given only once the kernel would take `command`,
    /// the line's request without what fibre does not model.
    pub(crate) fn after_kernel_checks(mut self, command: Command) -> Self {
        self.kernel_first = Some(Box::new(command));
        self
    }

    /// The line's refusal on `fib`: a failed device lookup
    /// ([`Self::refusal_with`]), else the kernel's refusal of
    /// [`Self::kernel_first`] tried on a copy of `fib` (which is left
    /// as it was), else this refusal.
    pub fn refusal_on(&self, fib: &Fib) -> String {
        let devices_found = self
            .device_checks
            .iter()
            .all(|check| fib.link_by_name(&check.name).is_some() == check.exists);
        match &self.kernel_first {
            Some(command) if devices_found => match fib.clone().apply(command) {
                Err(kernel) => kernel.to_string(),
                Ok(()) => self.to_string(),
            },
            _ => self.refusal_with(|name| fib.link_by_name(name).is_some()),
        }
    }

    /// The line's refusal once the devices are known: the first of
    /// [`Self::device_checks`] that fails (`exists` says whether a device
    /// of that name is there), else this refusal.
    ///
    /// ```
    /// use fibre_fib::config::{DeviceCheck, ParseError};
    /// let mut e = ParseError::new("weight", "a weight from 1 to 256", Some("257"));
    /// e.device_checks.push(DeviceCheck {
    ///     name: "eth9".into(),
    ///     exists: true,
    ///     refusal: "Cannot find device \"eth9\"".into(),
    /// });
    /// assert_eq!(e.refusal_with(|name| name == "eth0"), "Cannot find device \"eth9\"");
    /// assert!(e.refusal_with(|_| true).starts_with("\"weight\""));
    /// ```
    pub fn refusal_with(&self, exists: impl Fn(&str) -> bool) -> String {
        self.device_checks
            .iter()
            .find(|check| exists(&check.name) != check.exists)
            .map_or_else(|| self.to_string(), |check| check.refusal.clone())
    }

    /// The same refusal, with the message iproute2 or the kernel gives.
    pub fn with_system_message(mut self, message: impl Into<String>) -> Self {
        self.system_message = Some(message.into());
        self
    }
}

/// How many characters of a token a message shows; a longer token is cut
/// there and its length in bytes is said instead.
pub const SHOWN_TOKEN_CHARS: usize = 64;

/// `text` as a message shows it: control and invisible characters escaped
/// as Rust's `escape_debug` writes them (`\t`, `\0`, `\u{1b}`, `\u{a0}`), so a
/// refused token cannot hide or rewrite what the terminal shows, and no
/// more than [`SHOWN_TOKEN_CHARS`] characters of it.
fn shown(text: &str) -> String {
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count == SHOWN_TOKEN_CHARS {
            out.push_str("...");
            break;
        }
        let plain = c == '"' || c == '\\' || c == '\'' || c.escape_debug().len() == 1;
        if plain && (c == ' ' || !c.is_whitespace()) {
            out.push(c);
        } else if c.escape_debug().len() > 1 {
            out.extend(c.escape_debug());
        } else {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        }
    }
    out
}

/// The note after a shown token that was cut: how long it really was.
fn length_note(text: &str) -> String {
    if text.chars().count() > SHOWN_TOKEN_CHARS {
        format!(
            " ({} bytes, the first {SHOWN_TOKEN_CHARS} characters shown)",
            text.len()
        )
    } else {
        String::new()
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "\"{}\"{}: expected {}, ",
            shown(&self.keyword),
            length_note(&self.keyword),
            self.expected
        )?;
        match &self.got {
            Some(token) => write!(f, "got \"{}\"{}", shown(token), length_note(token))?,
            None => write!(f, "got end of line")?,
        }
        if let Some(message) = &self.system_message {
            // The system's message quotes the same token: shown the same way,
            // so a long token is not echoed in full a second time.
            let mut message = message.clone();
            for raw in [self.got.as_deref(), Some(self.keyword.as_str())]
                .into_iter()
                .flatten()
            {
                if !raw.is_empty() && shown(raw) != raw {
                    message = message.replace(raw, &shown(raw));
                }
            }
            write!(f, " ({})", shown_message(&message))?;
        }
        Ok(())
    }
}

/// A system message with its control characters escaped (it may quote
/// tokens the replacement above did not catch, such as a joined address).
fn shown_message(message: &str) -> String {
    message
        .chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_debug().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

impl std::error::Error for ParseError {}

/// A refusal placed in its file: `FILE:LINE: message`.
///
/// ```
/// use fibre_fib::config::Diagnostic;
/// let d = Diagnostic { file: "routes.conf".into(), line: 12, message: "bad".into() };
/// assert_eq!(d.to_string(), "routes.conf:12: bad");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file (or source name) it came from.
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

/// Why a configuration was not applied at all.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be opened or read (the operating system's
    /// words, once: the error is not also given as a source).
    #[error("{name}: cannot read: {}", crate::lines::io_message(.error))]
    Io {
        /// The file.
        name: String,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// The file has no bytes at all.
    #[error("{name}: the file is empty; expected ip -batch lines such as \"route add 10.0.0.0/8 dev eth0\"")]
    Empty {
        /// The file.
        name: String,
    },
    /// The file is not text: NUL bytes or invalid UTF-8.
    #[error("{name}:{line}: not a text file ({why}); expected ip -batch lines in UTF-8")]
    Binary {
        /// The file.
        name: String,
        /// 1-based line of the first bad byte.
        line: usize,
        /// What was found.
        why: String,
    },
    /// One or more lines were refused; nothing was applied.
    #[error("{}\nnothing applied ({} error{})", join_lines(.diagnostics), .diagnostics.len(), if .diagnostics.len() == 1 { "" } else { "s" })]
    Rejected {
        /// Every refusal, in line order.
        diagnostics: Vec<Diagnostic>,
    },
}

fn join_lines(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(Diagnostic::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_of_line_is_named() {
        let e = ParseError::new("table", "a table name or number", None);
        assert_eq!(
            e.to_string(),
            "\"table\": expected a table name or number, got end of line"
        );
    }

    #[test]
    fn system_message_follows_in_parentheses() {
        let e = ParseError::new("to", "a prefix", Some("10.0.0.1/8"))
            .with_system_message("Error: Invalid prefix for given prefix length.");
        assert!(e
            .to_string()
            .ends_with("(Error: Invalid prefix for given prefix length.)"));
    }

    #[test]
    fn control_characters_are_escaped() {
        let e = ParseError::new("dev", "a device name", Some("ev\u{1b}[2Jil\u{a0}\u{0}"));
        assert_eq!(
            e.to_string(),
            "\"dev\": expected a device name, got \"ev\\u{1b}[2Jil\\u{a0}\\0\""
        );
    }

    #[test]
    fn a_long_token_is_cut_once_and_its_length_said() {
        let token = "x".repeat(100_000);
        let e = ParseError::new("metric", "a number", Some(&token))
            .with_system_message(format!("Error: argument \"{token}\" is wrong"));
        let text = e.to_string();
        let cut = format!("{}...", "x".repeat(SHOWN_TOKEN_CHARS));
        assert_eq!(
            text,
            format!("\"metric\": expected a number, got \"{cut}\" (100000 bytes, the first 64 characters shown) (Error: argument \"{cut}\" is wrong)")
        );
    }

    #[test]
    fn rejected_lists_every_line_and_counts() {
        let d = |line| Diagnostic {
            file: "f".into(),
            line,
            message: "m".into(),
        };
        let e = ConfigError::Rejected {
            diagnostics: vec![d(1), d(3)],
        };
        assert_eq!(e.to_string(), "f:1: m\nf:3: m\nnothing applied (2 errors)");
    }
}
