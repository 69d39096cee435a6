//! Splitting a line into words the way `ip -batch` does (iproute2's
//! `makeargs`): blanks separate words, a `#` at the start of a word starts a
//! comment, and `"..."` or `'...'` quote a word that holds blanks.

use super::error::ParseError;

/// The words of one line; empty for a blank or comment-only line.
///
/// ```
/// use fibre_fib::config::tokenize;
/// assert_eq!(tokenize("route add  default via 10.0.0.1 # uplink").unwrap(),
///            ["route", "add", "default", "via", "10.0.0.1"]);
/// assert_eq!(tokenize("link set 'my dev' up").unwrap(), ["link", "set", "my dev", "up"]);
/// ```
pub fn tokenize(line: &str) -> Result<Vec<String>, ParseError> {
    let mut words = Vec::new();
    let mut rest = line.trim_start();
    while !rest.is_empty() {
        let first = rest.chars().next().unwrap_or(' ');
        if first == '#' {
            break;
        }
        if first == '"' || first == '\'' {
            let body = &rest[1..];
            let Some(end) = body.find(first) else {
                return Err(ParseError::new(&first.to_string(), "a closing quote", None));
            };
            words.push(body[..end].to_string());
            rest = body[end + 1..].trim_start();
            continue;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        words.push(rest[..end].to_string());
        rest = rest[end..].trim_start();
    }
    Ok(words)
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
    fn hash_inside_a_word_is_not_a_comment() {
        assert_eq!(
            tokenize("link set a#b up").unwrap(),
            ["link", "set", "a#b", "up"]
        );
    }

    #[test]
    fn unterminated_quote_is_refused() {
        let e = tokenize("link set \"eth0 up").unwrap_err();
        assert_eq!(
            e.to_string(),
            "\"\"\": expected a closing quote, got end of line"
        );
    }

    #[test]
    fn tabs_separate_words() {
        assert_eq!(tokenize("a\tb\r").unwrap(), ["a", "b"]);
    }
}
