//! `fibre route get ...`: one query, printed as `ip route get` does.

use std::io::Write;

use anyhow::Result;
use fibre_fib::{config, Family, Fib};
use serde_json::Value;

use crate::format::get::{answer_json, answer_text};
use crate::outcome::Outcome;

/// Answers the query in `words`; a refusal prints the kernel's message on
/// stderr and ends as [`Outcome::Refused`].
pub fn route_get(
    fib: &Fib,
    words: &[String],
    family: Option<Family>,
    json: bool,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let query = config::parse_route_get(words, family)
        .map_err(|err| anyhow::anyhow!("route get: {err}"))?;
    let fibmatch = query.request.fibmatch;
    match fib.route_get(&query.request) {
        Ok(answer) => {
            if json {
                let obj = answer_json(fib, &answer, query.uid, fibmatch);
                writeln!(out, "{}", Value::Array(vec![obj]))?;
            } else {
                out.write_all(answer_text(fib, &answer, query.uid, fibmatch).as_bytes())?;
            }
            Ok(Outcome::Success)
        }
        Err(err) => {
            eprintln!("{err}");
            Ok(Outcome::Refused)
        }
    }
}
