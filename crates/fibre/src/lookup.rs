//! `fibre lookup`: `route get` queries from a stream, one answer line per
//! query, in order. Blank lines and `#` comments are not queries and get no
//! answer; a malformed query gets an error line and the stream goes on.

use std::io::{BufRead, Write};

use anyhow::{Context, Result};
use fibre_fib::{config, Family, Fib};

use crate::format::get::{answer_json, answer_line, error_json, kernel_message};

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

/// Answers every query of `input` on `output` (buffer both for speed).
pub fn run(
    fib: &Fib,
    family: Option<Family>,
    json: bool,
    input: impl BufRead,
    mut output: impl Write,
) -> Result<LookupCounts> {
    let mut counts = LookupCounts::default();
    for (index, line) in input.lines().enumerate() {
        let line = line.with_context(|| format!("reading query line {}", index + 1))?;
        let words = match config::tokenize(&line) {
            Ok(words) if words.is_empty() => continue,
            Ok(words) => words,
            Err(err) => {
                counts.malformed += 1;
                write_error(
                    &mut output,
                    json,
                    line.split_whitespace().next(),
                    &err.to_string(),
                )?;
                continue;
            }
        };
        let query = match config::parse_route_get(&words, family) {
            Ok(query) => query,
            Err(err) => {
                counts.malformed += 1;
                write_error(
                    &mut output,
                    json,
                    Some(destination_word(&words)),
                    &err.to_string(),
                )?;
                continue;
            }
        };
        let fibmatch = query.request.fibmatch;
        match fib.route_get(&query.request) {
            Ok(answer) => {
                counts.answered += 1;
                if json {
                    let obj = answer_json(fib, &answer, query.uid, fibmatch);
                    serde_json::to_writer(&mut output, &obj)?;
                    output.write_all(b"\n")?;
                } else {
                    writeln!(output, "{}", answer_line(fib, &answer, query.uid, fibmatch))?;
                }
            }
            Err(err) => {
                counts.refused += 1;
                let dst = query.request.dst.to_string();
                if json {
                    write_error(&mut output, true, Some(&dst), &kernel_message(&err))?;
                } else {
                    writeln!(output, "{dst}: {err}")?;
                }
            }
        }
    }
    output.flush()?;
    Ok(counts)
}

/// The word a malformed query most likely meant as its destination.
fn destination_word(words: &[String]) -> &str {
    match words {
        [to, dst, ..] if to == "to" => dst,
        [first, ..] => first,
        [] => "",
    }
}

fn write_error(
    output: &mut impl Write,
    json: bool,
    dst: Option<&str>,
    message: &str,
) -> Result<()> {
    if json {
        serde_json::to_writer(&mut *output, &error_json(dst, message))?;
        output.write_all(b"\n")?;
    } else {
        writeln!(output, "{}: {message}", dst.unwrap_or(""))?;
    }
    Ok(())
}
