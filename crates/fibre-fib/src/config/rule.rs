//! `rule add|del ...` (iproute2's `iprule_modify`). The family is `-6`'s,
//! else the addresses', else IPv4 as `ip rule`. An add with no action looks
//! up table main, as iproute2 sends it.

use super::error::ParseError;
use super::values;
use super::words::{invalid_argument, unknown_word, PrefixWord, Words};
use crate::command::{RuleOp, RuleSpec};
use crate::types::*;

/// The rule request of the words after the verb.
pub(crate) fn parse_rule(op: RuleOp, words: &mut Words<'_>) -> Result<RuleSpec, ParseError> {
    let mut priority = None;
    let mut invert = false;
    let mut from = None;
    let mut to = None;
    let mut iif = None;
    let mut oif = None;
    let mut fwmark = None;
    let mut tos = 0u8;
    let mut action = None;
    let mut suppress_prefixlength = None;
    let mut suppress_ifgroup = None;
    let mut protocol = None;
    while let Some(word) = words.next() {
        match word {
            "not" => invert = true,
            "from" => {
                let token = words.value("from", "a prefix or \"all\"")?;
                from = Some(words.selector_from("from", token)?);
            }
            "to" => {
                let token = words.value("to", "a prefix or \"all\"")?;
                to = Some(words.selector_from("to", token)?);
            }
            "pref" | "priority" | "order" => priority = Some(words.number(word, "preference")?),
            "tos" | "dsfield" => tos = words.dsfield(word)?,
            "fwmark" => fwmark = Some(fwmark_value(words)?),
            "table" | "lookup" => {
                let expected = "a table: local, main, default or a number from 1 to 4294967295";
                let token = words.value(word, expected)?;
                let table = values::table_id(token)
                    .ok_or_else(|| invalid_argument(word, expected, token, "invalid table ID"))?;
                action = Some(RuleAction::Lookup(table));
            }
            "goto" => action = Some(RuleAction::Goto(words.number("goto", "goto")?)),
            "suppress_prefixlength" | "sup_pl" => {
                let expected = "a prefix length from 0 to 128";
                let token = words.value(word, expected)?;
                let len = values::number_u32(token)
                    .filter(|n| *n <= 128)
                    .ok_or_else(|| {
                        invalid_argument(
                            word,
                            expected,
                            token,
                            "suppress_prefixlength value is invalid",
                        )
                    })?;
                suppress_prefixlength = Some(len as u8);
            }
            "suppress_ifgroup" | "sup_group" => {
                let expected = "a device group: default or a number";
                let token = words.value(word, expected)?;
                let group = if token == "default" {
                    Some(0)
                } else {
                    values::number_u32(token)
                };
                suppress_ifgroup = Some(group.ok_or_else(|| {
                    invalid_argument(word, expected, token, "Invalid \"suppress_ifgroup\" value")
                })?);
            }
            "dev" | "iif" => iif = Some(words.ifname(word)?.to_string()),
            "oif" => oif = Some(words.ifname(word)?.to_string()),
            "protocol" | "proto" => {
                let expected = "a protocol name or a number from 0 to 255";
                let token = words.value(word, expected)?;
                protocol = Some(Protocol::from_name(token).ok_or_else(|| {
                    invalid_argument(word, expected, token, "\"protocol\" value is invalid")
                })?);
            }
            "blackhole" => action = Some(RuleAction::Blackhole),
            "unreachable" => action = Some(RuleAction::Unreachable),
            "prohibit" => action = Some(RuleAction::Prohibit),
            "nop" => action = Some(RuleAction::Nop),
            "type" => {
                let token = words.value("type", "blackhole, unreachable, prohibit or nop")?;
                action = Some(match token {
                    "blackhole" => RuleAction::Blackhole,
                    "unreachable" => RuleAction::Unreachable,
                    "prohibit" => RuleAction::Prohibit,
                    "nop" => RuleAction::Nop,
                    other => return Err(rule_garbage(other)),
                });
            }
            other => return Err(rule_garbage(other)),
        }
    }
    let family = words.final_family();
    let resolve = |p: Option<PrefixWord>| match p {
        Some(PrefixWord::Prefix(p)) if !p.is_default() => Some(p),
        _ => None,
    };
    if action.is_none() && op == RuleOp::Add {
        action = Some(RuleAction::Lookup(TABLE_MAIN));
    }
    Ok(RuleSpec {
        family,
        priority,
        invert,
        from: resolve(from),
        to: resolve(to),
        iif,
        oif,
        fwmark,
        tos,
        action,
        suppress_prefixlength,
        suppress_ifgroup,
        protocol,
    })
}

/// `fwmark MARK[/MASK]`; the mask is all ones when not given, as the
/// kernel takes a mark without a mask.
fn fwmark_value(words: &mut Words<'_>) -> Result<(u32, u32), ParseError> {
    let expected = "a mark from 0 to 0xffffffff, optionally /MASK";
    let token = words.value("fwmark", expected)?;
    let (mark, mask) = match token.split_once('/') {
        Some((mark, mask)) => (mark, Some(mask)),
        None => (token, None),
    };
    let mark = values::number_u32(mark)
        .ok_or_else(|| invalid_argument("fwmark", expected, token, "fwmark value is invalid"))?;
    let mask = match mask {
        None => u32::MAX,
        Some(mask) => values::number_u32(mask).ok_or_else(|| {
            invalid_argument("fwmark", expected, token, "fwmask value is invalid")
        })?,
    };
    Ok((mark, mask))
}

fn rule_garbage(token: &str) -> ParseError {
    unknown_word(
        "rule",
        "not, from, to, pref, tos, fwmark, lookup, goto, iif, oif, suppress_prefixlength, \
         suppress_ifgroup, protocol or an action (blackhole, unreachable, prohibit, nop)",
        token,
    )
    .with_system_message(format!(
        "Error: argument \"{token}\" is wrong: Failed to parse rule type"
    ))
}
