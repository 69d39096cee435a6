//! `rule add|del ...` as iproute2 6.1's `iprule_modify` reads it: its
//! keywords in its order, with `matches()` abbreviations (`p` is `pref`,
//! `t` is `tun_id`, `ta` is `table`, `d` is `dsfield`, `s` is
//! `suppress_prefixlength`, `n` is `nop`), its messages, and the request it
//! sends. The family is `-6`'s (or `-4`'s), else IPv4: an address does not
//! change it (`from 2001:db8::/32` without `-6` is an IPv4 request, which
//! the kernel refuses). An add without an action looks up table main;
//! with `lookup 0` (or `unicast`) it asks the kernel to pick a table.
//!
//! Selectors and actions fibre does not model (`uidrange`, `ipproto`,
//! `sport`, `dport`, `l3mdev`, `realms`, `tun_id`, `nat`/`map-to`, the
//! route types `anycast`, `multicast`, `throw`, `xresolve` and bare
//! numbers as actions) are refused by name rather than ignored.

use super::error::ParseError;
use super::values;
use super::words::{invalid_argument, unknown_word, Words};
use crate::command::{RuleOp, RuleSpec};
use crate::types::*;

/// iproute2's `matches(word, full)`: `word` is a non-empty prefix of `full`.
fn abbreviates(word: &str, full: &str) -> bool {
    !word.is_empty() && full.starts_with(word)
}

/// What fibre reads after `rule add|del`, for refusals.
const RULE_WORDS: &str = "not, from, to, pref, tos, fwmark, lookup, goto, iif, oif, \
     suppress_prefixlength, suppress_ifgroup, protocol or an action (blackhole, unreachable, \
     prohibit, nop)";

/// The rule request of the words after the verb.
pub(crate) fn parse_rule(op: RuleOp, words: &mut Words<'_>) -> Result<RuleSpec, ParseError> {
    let given_family = words.family;
    if words.peek().is_none() {
        let verb = match op {
            RuleOp::Add => "add",
            RuleOp::Del => "del",
        };
        return Err(ParseError::new(
            "rule",
            &format!("a selector or an action ({RULE_WORDS})"),
            None,
        )
        .with_system_message(format!("\"ip rule {verb}\" requires arguments.")));
    }
    let mut spec = RuleSpec::new(given_family.unwrap_or(Family::V4));
    // iproute2 keeps the table apart from the action (`goto 5 lookup 100`
    // is a goto); `table_ok` is its flag that a table (or a type) was given.
    let mut table = None;
    let mut table_ok = false;
    let mut kind = None;
    while let Some(word) = words.next() {
        if word == "not" {
            spec.invert = true;
        } else if word == "from" || word == "to" {
            let prefix = selector(words, word, given_family)?;
            if word == "from" {
                spec.from = prefix;
            } else {
                spec.to = prefix;
            }
        } else if ["preference", "order", "priority"]
            .iter()
            .any(|full| abbreviates(word, full))
        {
            spec.priority = Some(u32_value(words, word, "preference value is invalid")?);
        } else if word == "tos" || abbreviates(word, "dsfield") {
            spec.tos = dsfield(words, word)?;
        } else if word == "fwmark" {
            spec.fwmark = Some(fwmark_value(words)?);
        } else if abbreviates(word, "realms") {
            return Err(unmodelled(word, "realms"));
        } else if abbreviates(word, "protocol") {
            let expected = "a protocol name or a number from 0 to 255";
            let token = words.value(word, expected)?;
            spec.protocol = Some(Protocol::from_name(token).ok_or_else(|| {
                invalid_argument(word, expected, token, "\"protocol\" value is invalid")
            })?);
        } else if abbreviates(word, "tun_id") {
            return Err(unmodelled(word, "tun_id"));
        } else if abbreviates(word, "table") || word == "lookup" {
            let expected = "a table: local, main, default or a number from 0 to 4294967295";
            let token = words.value(word, expected)?;
            table = Some(
                values::table_id(token)
                    .ok_or_else(|| invalid_argument(word, expected, token, "invalid table ID"))?,
            );
            table_ok = true;
        } else if abbreviates(word, "suppress_prefixlength") || word == "sup_pl" {
            spec.suppress_prefixlength = Some(suppress_prefixlength(words, word)?);
        } else if abbreviates(word, "suppress_ifgroup") || word == "sup_group" {
            spec.suppress_ifgroup = Some(suppress_ifgroup(words, word)?);
        } else if word == "dev" || word == "iif" {
            spec.iif = Some(ifname(words, word, "\"iif\"/\"dev\" not a valid ifname")?);
        } else if word == "oif" {
            spec.oif = Some(ifname(words, word, "\"oif\" not a valid ifname")?);
        } else if ["l3mdev", "uidrange", "ipproto", "sport", "dport", "nat"].contains(&word) {
            return Err(unmodelled(word, word));
        } else if abbreviates(word, "map-to") {
            return Err(unmodelled(word, "map-to"));
        } else {
            let word = if word == "type" {
                words.value(
                    "type",
                    "a rule type: blackhole, unreachable, prohibit, nop or goto",
                )?
            } else {
                word
            };
            kind = rule_type(words, word)?;
            table_ok = true;
        }
    }
    spec.action = match (op, kind) {
        (_, Some(action)) => Some(action),
        // `unicast` (FR_ACT_TO_TBL) with no table: table 0, as sent.
        (RuleOp::Add, None) if table_ok => Some(RuleAction::Lookup(table.unwrap_or(TABLE_UNSPEC))),
        (RuleOp::Add, None) => Some(RuleAction::Lookup(TABLE_MAIN)),
        // A delete's table 0 (`rule_find`: `rule->table` unset) matches any.
        (RuleOp::Del, None) => table.filter(|t| *t != TABLE_UNSPEC).map(RuleAction::Lookup),
    };
    Ok(spec)
}

/// A rule type after `type` or alone (the last `else` of
/// `iprule_modify`): `goto N`, `nop`, or a route type by
/// `rtnl_rtntype_a2n`, whose number the kernel takes as the action
/// (`FR_ACT_*`): unicast (1) looks up a table, local (2) is a goto without
/// a target, broadcast (3) a nop, 6-8 blackhole, unreachable, prohibit.
/// None: the action stays "look up the table" (unicast).
fn rule_type(words: &mut Words<'_>, word: &str) -> Result<Option<RuleAction>, ParseError> {
    if abbreviates(word, "help") {
        return Err(ParseError::new(
            "rule",
            &format!("{RULE_WORDS} (for \"help\" ip prints its usage and stops)"),
            Some(word),
        ));
    }
    if abbreviates(word, "goto") {
        let target = u32_value(words, "goto", "invalid target")?;
        return Ok(Some(RuleAction::Goto(target)));
    }
    if abbreviates(word, "nop") {
        return Ok(Some(RuleAction::Nop));
    }
    let Some(number) = route_type_number(word) else {
        return Err(rule_garbage(word));
    };
    match number {
        1 => Ok(None),
        // fib_nl2rule: FR_ACT_GOTO needs FRA_GOTO.
        2 => Err(
            ParseError::new("rule", "goto N (local is action goto)", Some(word))
                .with_system_message("Error: Missing goto target for action goto."),
        ),
        3 => Ok(Some(RuleAction::Nop)),
        6 => Ok(Some(RuleAction::Blackhole)),
        7 => Ok(Some(RuleAction::Unreachable)),
        8 => Ok(Some(RuleAction::Prohibit)),
        _ => Err(unmodelled(word, &format!("rule action {number}"))),
    }
}

/// `rtnl_rtntype_a2n`: a route type's name (some abbreviated) or a number
/// up to 255.
fn route_type_number(word: &str) -> Option<u32> {
    let named: &[(&str, bool, u32)] = &[
        // (name, abbreviation allowed, RTN_*)
        ("local", false, 2),
        ("nat", false, 10),
        ("broadcast", true, 3),
        ("brd", false, 3),
        ("anycast", true, 4),
        ("multicast", true, 5),
        ("prohibit", true, 8),
        ("unreachable", true, 7),
        ("blackhole", true, 6),
        ("xresolve", true, 11),
        ("unicast", true, 1),
        ("throw", false, 9),
    ];
    let found = named.iter().find(|(name, abbreviated, _)| {
        if *abbreviated {
            abbreviates(word, name)
        } else {
            word == *name
        }
    });
    match found {
        Some((_, _, number)) => Some(*number),
        None => values::number_u32(word).filter(|n| *n <= 255),
    }
}

/// A `from`/`to` selector: `all`/`any`/`default` or `ADDR[/LEN]` as
/// `get_prefix` reads it for the line's family (any family without
/// `-4`/`-6`; the kernel then checks it against the request's). None:
/// every address. Host bits are cleared: the kernel's match masks them.
fn selector(
    words: &mut Words<'_>,
    keyword: &str,
    given_family: Option<Family>,
) -> Result<Option<Prefix>, ParseError> {
    let expected = match given_family {
        Some(Family::V4) => "an IPv4 prefix (ADDR/0..32) or \"all\"",
        Some(Family::V6) => "an IPv6 prefix (ADDR/0..128) or \"all\"",
        None => "a prefix such as 10.0.0.0/8 or 2001:db8::/32, or \"all\"",
    };
    let token = words.value(keyword, expected)?;
    if values::is_default_word(token) {
        return Ok(None);
    }
    let parsed = values::addr_with_len(token)
        .filter(|(addr, _)| given_family.is_none_or(|f| f == Family::of(addr)));
    let Some((addr, len)) = parsed else {
        return Err(
            ParseError::new(keyword, expected, Some(token)).with_system_message(format!(
                "Error: {} prefix is expected rather than \"{token}\".",
                values::family_word(given_family)
            )),
        );
    };
    let len = len.unwrap_or(Family::of(&addr).bits());
    // A zero length sends no address to match (`frh->src_len` 0).
    Ok((len > 0).then(|| Prefix::containing(addr, len)))
}

/// A `u32` argument as `get_u32` reads it, refused with ip's `what`.
fn u32_value(words: &mut Words<'_>, keyword: &str, what: &str) -> Result<u32, ParseError> {
    let expected = "a number from 0 to 4294967295";
    let token = words.value(keyword, expected)?;
    values::number_u32(token).ok_or_else(|| invalid_argument(keyword, expected, token, what))
}

/// A device name, refused with ip's `what` (`check_ifname`).
fn ifname(words: &mut Words<'_>, keyword: &str, what: &str) -> Result<String, ParseError> {
    let expected = "a device name of 1 to 15 bytes without '/' or ':'";
    let token = words.value(keyword, expected)?;
    if values::valid_ifname(token) {
        Ok(token.to_string())
    } else {
        Err(invalid_argument(keyword, expected, token, what))
    }
}

/// The names of `/etc/iproute2/rt_dsfield` (iproute2 6.1), which
/// `rtnl_dsfield_a2n` tries before reading hexadecimal: `EF` is 0xb8,
/// not 0xef.
const DSFIELD_NAMES: &[(&str, u8)] = &[
    ("default", 0x00),
    ("AF11", 0x28),
    ("AF12", 0x30),
    ("AF13", 0x38),
    ("AF21", 0x48),
    ("AF22", 0x50),
    ("AF23", 0x58),
    ("AF31", 0x68),
    ("AF32", 0x70),
    ("AF33", 0x78),
    ("AF41", 0x88),
    ("AF42", 0x90),
    ("AF43", 0x98),
    ("CS1", 0x20),
    ("CS2", 0x40),
    ("CS3", 0x60),
    ("CS4", 0x80),
    ("CS5", 0xa0),
    ("CS6", 0xc0),
    ("CS7", 0xe0),
    ("EF", 0xb8),
];

/// `tos`/`dsfield`: a name of `rt_dsfield` or a hexadecimal byte.
fn dsfield(words: &mut Words<'_>, keyword: &str) -> Result<u8, ParseError> {
    let expected = "a DS field name (CS1, AF11, EF, ...) or a byte in hexadecimal (00 to ff)";
    let token = words.value(keyword, expected)?;
    DSFIELD_NAMES
        .iter()
        .find(|(name, _)| *name == token)
        .map(|(_, value)| *value)
        .or_else(|| values::dsfield(token))
        .ok_or_else(|| invalid_argument(keyword, expected, token, "TOS value is invalid"))
}

/// `suppress_prefixlength N`: iproute2 takes any non-negative `int`
/// (`get_s32`); the kernel suppresses routes no longer than N, so every
/// N from 128 up suppresses all. fibre keeps N in a byte.
fn suppress_prefixlength(words: &mut Words<'_>, keyword: &str) -> Result<u8, ParseError> {
    let expected = "a prefix length from 0 to 255";
    let token = words.value(keyword, expected)?;
    let value = strtol(token)
        .filter(|n| (0..=i64::from(i32::MAX)).contains(n))
        .ok_or_else(|| {
            invalid_argument(
                keyword,
                expected,
                token,
                "suppress_prefixlength value is invalid",
            )
        })?;
    u8::try_from(value).map_err(|_| {
        ParseError::new(
            keyword,
            &format!("{expected} (ip takes up to 2147483647; fibre keeps lengths up to 255)"),
            Some(token),
        )
    })
}

/// `suppress_ifgroup G` as `rtnl_group_a2n` reads it: `default` (group 0,
/// the only name in `/etc/iproute2/group`) or `strtol` base 0 stored in an
/// `int`, refused when that is negative (so 4294967296 is group 0).
fn suppress_ifgroup(words: &mut Words<'_>, keyword: &str) -> Result<u32, ParseError> {
    let expected = "a device group: default or a number from 0 to 2147483647";
    let token = words.value(keyword, expected)?;
    if token == "default" {
        return Ok(0);
    }
    strtol(token)
        .map(|n| n as i32)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| {
            invalid_argument(
                keyword,
                expected,
                token,
                "Invalid \"suppress_ifgroup\" value",
            )
        })
}

/// C's `strtol(token, &end, 0)` where all of `token` must be read: an
/// optional sign, then decimal, `0x` hexadecimal or `0` octal digits;
/// out-of-range values saturate at the `long` bounds as `strtol` does.
fn strtol(token: &str) -> Option<i64> {
    let (negative, rest) = match token.as_bytes().first() {
        Some(b'-') => (true, &token[1..]),
        Some(b'+') => (false, &token[1..]),
        _ => (false, token),
    };
    let (digits, radix) = if let Some(hex) = rest.strip_prefix("0x").or(rest.strip_prefix("0X")) {
        (hex, 16)
    } else if rest.len() > 1 && rest.starts_with('0') {
        (&rest[1..], 8)
    } else {
        (rest, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = digits.chars().fold(0i128, |acc, c| {
        (acc * i128::from(radix) + i128::from(c.to_digit(radix).unwrap_or(0))).min(1 << 64)
    });
    let value = if negative { -magnitude } else { magnitude };
    Some(value.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64)
}

/// `fwmark MARK[/MASK]` as the kernel keeps it (`fib_nl2rule`): a
/// non-zero mark without a mask compares all bits (mask 0xffffffff); a
/// zero mark without one matches everything (no mark at all).
fn fwmark_value(words: &mut Words<'_>) -> Result<(u32, u32), ParseError> {
    let expected = "a mark from 0 to 0xffffffff, optionally /MASK";
    let token = words.value("fwmark", expected)?;
    let (mark, mask) = match token.split_once('/') {
        Some((mark, mask)) => (mark, Some(mask)),
        None => (token, None),
    };
    // ip names the part it could not read: `argument "" is wrong` for `5/`.
    let refuse = |part: &str, what: &str| {
        ParseError::new("fwmark", expected, Some(token))
            .with_system_message(format!("Error: argument \"{part}\" is wrong: {what}"))
    };
    let mark = values::number_u32(mark).ok_or_else(|| refuse(mark, "fwmark value is invalid"))?;
    let mask = match mask {
        None if mark != 0 => u32::MAX,
        None => 0,
        Some(mask) => {
            values::number_u32(mask).ok_or_else(|| refuse(mask, "fwmask value is invalid"))?
        }
    };
    Ok((mark, mask))
}

/// A word ip takes but fibre does not model: refused by name, so that a
/// rule is never applied without a selector or action it was given.
fn unmodelled(token: &str, what: &str) -> ParseError {
    ParseError::new(
        "rule",
        &format!("{RULE_WORDS} (ip accepts {what}; fibre does not model it)"),
        Some(token),
    )
}

fn rule_garbage(token: &str) -> ParseError {
    unknown_word("rule", RULE_WORDS, token).with_system_message(format!(
        "Error: argument \"{token}\" is wrong: Failed to parse rule type"
    ))
}
