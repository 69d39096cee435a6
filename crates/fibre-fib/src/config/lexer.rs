//! Splitting a file into lines and a line into words the way `ip -batch`
//! does (iproute2's `getcmdline` and `makeargs`): a `#` anywhere ends the
//! line's text (even inside a word or quotes), a NUL byte ends it too (C
//! strings), a backslash just before the newline joins the next line on,
//! only space, tab, CR and LF separate words, and `"..."` or `'...'` at the
//! start of a word quote a word that holds blanks.

use super::error::ParseError;

/// `makeargs`' separators: `" \t\r\n"`, nothing else (not vertical tab,
/// form feed or any non-ASCII blank).
fn is_separator(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// iproute2's `MAX_ARGS`: `makeargs` refuses the word that would make a
/// line's 512th argument.
pub(crate) const MAX_WORDS: usize = 511;

/// The text of a line as `ip -batch` sees it: up to the first NUL byte (the
/// end of the C string) and the first `#` (`getcmdline` cuts comments
/// before it splits words).
fn visible(line: &str) -> &str {
    let end = line.find(['\0', '#']).unwrap_or(line.len());
    &line[..end]
}

/// The words of one line; empty for a blank or comment-only line.
///
/// ```
/// use fibre_fib::config::tokenize;
/// assert_eq!(tokenize("route add  default via 10.0.0.1 # uplink").unwrap(),
///            ["route", "add", "default", "via", "10.0.0.1"]);
/// assert_eq!(tokenize("link set 'my dev' up").unwrap(), ["link", "set", "my dev", "up"]);
/// assert_eq!(tokenize("link set eth0#up").unwrap(), ["link", "set", "eth0"]);
/// ```
pub fn tokenize(line: &str) -> Result<Vec<String>, ParseError> {
    let mut words = Vec::new();
    let mut rest = visible(line).trim_start_matches(is_separator);
    while !rest.is_empty() {
        if words.len() >= MAX_WORDS {
            return Err(ParseError::new(
                "ip",
                &format!("at most {MAX_WORDS} words on a line"),
                None,
            )
            .with_system_message("Too many arguments to command"));
        }
        let first = rest.chars().next().unwrap_or(' ');
        if first == '"' || first == '\'' {
            let body = &rest[1..];
            let Some(end) = body.find(first) else {
                return Err(ParseError::new(&first.to_string(), "a closing quote", None)
                    .with_system_message("Unterminated quoted string"));
            };
            words.push(body[..end].to_string());
            // `makeargs` ends the word at the closing quote, whatever follows.
            rest = body[end + 1..].trim_start_matches(is_separator);
            continue;
        }
        let end = rest.find(is_separator).unwrap_or(rest.len());
        words.push(rest[..end].to_string());
        rest = rest[end..].trim_start_matches(is_separator);
    }
    Ok(words)
}

/// One command's text, joined from its physical lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogicalLine {
    /// The 1-based number of its last physical line, as `ip -batch` counts
    /// (`cmdlineno` in its "Command failed FILE:LINE").
    pub line: usize,
    /// The text, or why it could not be read.
    pub text: Result<String, ParseError>,
}

/// The commands of a file as `getcmdline` reads them: a line whose text
/// (before any `#` or NUL) ends in a backslash right before its newline is
/// joined, without the backslash and newline, to the next line's text.
pub(crate) fn logical_lines(text: &str) -> Vec<LogicalLine> {
    let mut lines = Vec::new();
    let mut physical = text.split_inclusive('\n').enumerate().peekable();
    while let Some((index, raw)) = physical.next() {
        let mut number = index + 1;
        let mut joined = String::new();
        let mut current = raw;
        loop {
            let body = current.strip_suffix('\n');
            let shown = visible(current);
            let continues = shown.len() == current.len() && body.is_some_and(|b| b.ends_with('\\'));
            if !continues {
                joined.push_str(shown.strip_suffix('\n').unwrap_or(shown));
                lines.push(LogicalLine {
                    line: number,
                    text: Ok(joined),
                });
                break;
            }
            joined.push_str(&shown[..shown.len() - 2]);
            match physical.next() {
                Some((next_index, next)) => {
                    number = next_index + 1;
                    current = next;
                }
                None => {
                    lines.push(LogicalLine {
                        line: number,
                        text: Err(
                            ParseError::new("\\", "another line to continue this one", None)
                                .with_system_message("Missing continuation line"),
                        ),
                    });
                    break;
                }
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_and_comment_lines_have_no_words() {
        assert!(tokenize("").unwrap().is_empty());
        assert!(tokenize("   \t ").unwrap().is_empty());
        assert!(tokenize("# route add 1.0.0.0/8 dev x").unwrap().is_empty());
    }

    #[test]
    fn unterminated_quote_is_refused() {
        let e = tokenize("link set \"eth0 up").unwrap_err();
        assert_eq!(
            e.to_string(),
            "\"\"\": expected a closing quote, got end of line (Unterminated quoted string)"
        );
    }

    #[test]
    fn tabs_separate_words() {
        assert_eq!(tokenize("a\tb\r").unwrap(), ["a", "b"]);
    }
}
