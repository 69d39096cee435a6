//! `fibre lookup`: `route get` queries from a stream, one answer line per
//! query, in order. Blank lines and `#` comments are not queries and get no
//! answer; a malformed query (not even UTF-8 text) gets an error line and
//! the stream goes on. With `--icmp`, answers carry the path MTU exceptions
//! the capture taught, as `route get` shows them.
//!
//! The stream is read a line at a time, each line at most
//! [`MAX_LINE_BYTES`](fibre_fib::lines::MAX_LINE_BYTES): a longer one (a stream without newlines, binary
//! data) ends the stream with an error naming it, since its end may never
//! come.

use std::io::{BufRead, Write};

use anyhow::Result;
use fibre_fib::lines::{LineError, LineReader};
use fibre_fib::{config, Family, Fib};

use crate::format::get::{answer_json_cached, answer_line, error_json, kernel_message};
use crate::icmp::{self, Learned};

/// What a stream held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LookupCounts {
    /// Queries answered with a route.
    pub answered: u64,
    /// Queries the FIB refused.
    pub refused: u64,
    /// Lines that were not valid queries.
    pub malformed: u64,
}

/// How the queries are answered.
#[derive(Clone, Copy, Default)]
pub struct Lookup<'a> {
    /// `-4`/`-6`: the family of queries that do not say.
    pub family: Option<Family>,
    /// `-j`: one JSON object a line.
    pub json: bool,
    /// `--icmp`: the route cache with the exceptions a capture taught.
    pub learned: Option<&'a Learned>,
}

/// Answers every query of `input` on `output` (buffer both for speed).
///
/// # Errors
/// A read error or a line over [`MAX_LINE_BYTES`](fibre_fib::lines::MAX_LINE_BYTES) (named `stdin:LINE`),
/// or a failed write.
pub fn run(
    fib: &Fib,
    how: Lookup<'_>,
    input: impl BufRead,
    mut output: impl Write,
) -> Result<LookupCounts> {
    let mut counts = LookupCounts::default();
    let mut lines = LineReader::new(input);
    loop {
        let (bytes, number) = match lines.next_line() {
            Ok(Some(line)) => (line.bytes, line.number),
            Ok(None) => break,
            Err(err @ LineError::TooLong { .. }) => {
                anyhow::bail!(
                    "stdin:{}: {err}; the stream stops here",
                    lines.line_number()
                )
            }
            Err(err) => anyhow::bail!("stdin:{}: cannot read: {err}", lines.line_number()),
        };
        let line = match std::str::from_utf8(bytes) {
            Ok(line) => line,
            Err(err) => {
                counts.malformed += 1;
                let lossy = String::from_utf8_lossy(bytes);
                let message = format!(
                    "line {}: not UTF-8 text (an invalid byte at column {}); expected a query such as \"1.2.3.4 from 10.0.0.1\"",
                    number,
                    err.valid_up_to() + 1
                );
                write_error(
                    &mut output,
                    how.json,
                    lossy.split_whitespace().next(),
                    &message,
                )?;
                continue;
            }
        };
        answer(fib, how, line, &mut counts, &mut output)?;
    }
    output.flush()?;
    Ok(counts)
}

/// Answers one line of the stream.
fn answer(
    fib: &Fib,
    how: Lookup<'_>,
    line: &str,
    counts: &mut LookupCounts,
    output: &mut impl Write,
) -> Result<()> {
    let words = match config::tokenize(line) {
        Ok(words) if words.is_empty() => return Ok(()),
        Ok(words) => words,
        Err(err) => {
            counts.malformed += 1;
            let dst = line.split_whitespace().next();
            return write_error(output, how.json, dst, &err.to_string());
        }
    };
    let query = match config::parse_route_get(&words, how.family) {
        Ok(query) => query,
        Err(err) => {
            counts.malformed += 1;
            let dst = Some(destination_word(&words));
            return write_error(output, how.json, dst, &err.to_string());
        }
    };
    let fibmatch = query.request.fibmatch;
    match fib.route_get(&query.request) {
        Ok(answer) => {
            counts.answered += 1;
            let cache = icmp::cache_info(how.learned, fib, &answer, fibmatch);
            if how.json {
                let obj = answer_json_cached(fib, &answer, query.uid, fibmatch, cache.as_ref());
                writeln!(output, "{obj}")?;
            } else {
                let text = answer_line(fib, &answer, query.uid, fibmatch, cache.as_ref());
                writeln!(output, "{text}")?;
            }
        }
        Err(err) => {
            counts.refused += 1;
            let dst = query.request.dst.to_string();
            if how.json {
                write_error(output, true, Some(&dst), &kernel_message(&err))?;
            } else {
                writeln!(output, "{dst}: {err}")?;
            }
        }
    }
    Ok(())
}

/// The word a malformed query most likely meant as its destination.
fn destination_word(words: &[String]) -> &str {
    match words {
        [to, dst, ..] if to == "to" => dst,
        [first, ..] => first,
        [] => "",
    }
}

/// One error line; JSON is written through `Display` so that a closed
/// pipe reaches `main` as the `io::Error` it is.
fn write_error(
    output: &mut impl Write,
    json: bool,
    dst: Option<&str>,
    message: &str,
) -> Result<()> {
    if json {
        writeln!(output, "{}", error_json(dst, message))?;
    } else {
        writeln!(output, "{}: {message}", dst.unwrap_or(""))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fibre_fib::lines::MAX_LINE_BYTES;

    fn fib() -> Fib {
        let text = "link add d0 type dummy\nlink set d0 up\naddr add 10.0.0.1/24 dev d0\n";
        config::apply_str(&Fib::new(), "t", text, false).unwrap().0
    }

    fn run_on(input: &[u8]) -> (Result<LookupCounts>, String) {
        let mut out = Vec::new();
        let result = run(&fib(), Lookup::default(), input, &mut out);
        (result, String::from_utf8(out).unwrap())
    }

    #[test]
    fn a_line_that_is_not_utf8_is_reported_and_the_stream_goes_on() {
        let (counts, out) = run_on(b"10.0.0.2\n10.0.0.\xff3\n10.0.0.4\n");
        let counts = counts.unwrap();
        assert_eq!((counts.answered, counts.malformed), (2, 1), "{out}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert!(lines[0].starts_with("10.0.0.2 dev d0"), "{out}");
        assert!(
            lines[1].starts_with(
                "10.0.0.\u{fffd}3: line 2: not UTF-8 text (an invalid byte at column 8)"
            ),
            "{out}"
        );
        assert!(lines[2].starts_with("10.0.0.4 dev d0"), "{out}");
    }

    #[test]
    fn a_line_past_the_limit_ends_the_stream_with_its_number() {
        let mut input = b"10.0.0.2\n".to_vec();
        input.extend(vec![b'1'; MAX_LINE_BYTES + 1]);
        input.extend(b"\n10.0.0.4\n");
        let (result, out) = run_on(&input);
        let err = result.unwrap_err().to_string();
        assert!(
            err.starts_with("stdin:2: line longer than 65536 bytes"),
            "{err}"
        );
        assert_eq!(out.lines().count(), 1, "{out}");
    }
}
