//! `fibre route get ...`: one query, printed as `ip route get` does.

use std::io::Write;

use anyhow::Result;
use fibre_fib::{config, Family, Fib};
use serde_json::Value;

use crate::format::get::{answer_json_cached, answer_text_cached};
use crate::icmp::{self, Learned};
use crate::outcome::Outcome;
use crate::stdio;

/// Answers the query in `words` (with the exception `learned` holds for
/// the destination, if its answer goes through that exception's nexthop);
/// a refusal prints the kernel's message on stderr and ends as
/// [`Outcome::Refused`].
pub fn route_get(
    fib: &Fib,
    learned: Option<&Learned>,
    words: &[String],
    family: Option<Family>,
    json: bool,
    out: &mut dyn Write,
) -> Result<Outcome> {
    route_get_to(fib, learned, words, family, json, out, &mut |err| {
        stdio::warn(err)
    })
}

/// [`route_get`] with the refusal handed to `refused` rather than stderr
/// (a running router answers `fibre ctl route get` with it).
pub fn route_get_to(
    fib: &Fib,
    learned: Option<&Learned>,
    words: &[String],
    family: Option<Family>,
    json: bool,
    out: &mut dyn Write,
    refused: &mut dyn FnMut(&fibre_fib::KernelError),
) -> Result<Outcome> {
    let query = config::parse_route_get(words, family)
        .map_err(|err| anyhow::anyhow!("route get: {err}"))?;
    let fibmatch = query.request.fibmatch;
    match fib.route_get(&query.request) {
        Ok(answer) => {
            let cache = icmp::cache_info(learned, fib, &answer, fibmatch);
            let cache = cache.as_ref();
            if json {
                let obj = answer_json_cached(fib, &answer, query.uid, fibmatch, cache);
                writeln!(out, "{}", Value::Array(vec![obj]))?;
            } else {
                let text = answer_text_cached(fib, &answer, query.uid, fibmatch, cache);
                out.write_all(text.as_bytes())?;
            }
            Ok(Outcome::Success)
        }
        Err(err) => {
            refused(&err);
            Ok(Outcome::Refused)
        }
    }
}
