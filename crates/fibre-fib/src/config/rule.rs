//! `rule add|del ...` as iproute2 6.1's `iprule_modify` reads it: its
//! keywords in its order, with `matches()` abbreviations (`p` is `pref`,
//! `t` is `tun_id`, `ta` is `table`, `d` is `dsfield`, `s` is
//! `suppress_prefixlength`, `r` is `realms`, `m` is `map-to`, `n` is
//! `nop`), its messages, and the request it sends. The family is `-6`'s
//! (or `-4`'s), else IPv4: an address does not change it (`from
//! 2001:db8::/32` without `-6` is an IPv4 request, which the kernel
//! refuses). An add without an action looks up table main; with `lookup 0`
//! (or `unicast`) it asks the kernel to pick a table.
//!
//! Every selector and action ip sends is kept as the kernel keeps it:
//! `uidrange`, `ipproto`, `sport`, `dport`, `l3mdev`, `tun_id`, `realms`,
//! and action numbers without a word of their own (`anycast`, `throw`,
//! `nat ADDR`, `type 12`), whose lookups the kernel fails.

use std::net::IpAddr;

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
const RULE_WORDS: &str = "not, from, to, pref, tos, fwmark, realms, protocol, tun_id, lookup, \
     suppress_prefixlength, suppress_ifgroup, iif, oif, l3mdev, uidrange, map-to, ipproto, \
     sport, dport or an action (goto, nop, blackhole, unreachable, prohibit, a route type)";

/// The `FR_ACT_*` numbers `iprule_modify` sends.
const FR_ACT_UNSPEC: u8 = 0;
const FR_ACT_TO_TBL: u8 = 1;
const FR_ACT_GOTO: u8 = 2;
const FR_ACT_NOP: u8 = 3;
const FR_ACT_BLACKHOLE: u8 = 6;
const FR_ACT_UNREACHABLE: u8 = 7;
const FR_ACT_PROHIBIT: u8 = 8;
/// RTN_NAT, the action `nat`/`map-to` sends.
const RTN_NAT: u8 = 10;

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
    // `struct fib_rule_hdr`'s action as iproute2 fills it, the table it
    // sends (`tid`), and its flag that a table or a type was given.
    let mut action = match op {
        RuleOp::Add => FR_ACT_TO_TBL,
        RuleOp::Del => FR_ACT_UNSPEC,
    };
    let mut goto_target = None;
    let mut table = TABLE_UNSPEC;
    let mut table_ok = false;
    // The last table past 255, sent as FRA_TABLE.
    let mut table_attribute = None;
    let mut fwmark_mask = None;
    while let Some(word) = words.next() {
        if word == "not" {
            spec.invert = true;
        } else if word == "from" || word == "to" {
            let (prefix, written) = selector(words, word, given_family)?;
            if word == "from" {
                spec.from = prefix;
                spec.written_addrs.0 = written;
            } else {
                spec.to = prefix;
                spec.written_addrs.1 = written;
            }
        } else if ["preference", "order", "priority"]
            .iter()
            .any(|full| abbreviates(word, full))
        {
            spec.priority = Some(u32_value(words, word, "preference value is invalid")?);
        } else if word == "tos" || abbreviates(word, "dsfield") {
            spec.tos = dsfield(words, word)?;
        } else if word == "fwmark" {
            // A second fwmark sends a second FRA_FWMARK (nla_parse keeps the
            // last), and a mask given before stays (FRA_FWMASK): `fwmark
            // 0x10/0xff fwmark 010` is 0x8/0xff (kernel-checked).
            let (mark, mask) = fwmark_value(words)?;
            fwmark_mask = mask.or(fwmark_mask);
            spec.fwmark = Some((
                mark,
                fwmark_mask.unwrap_or(if mark != 0 { u32::MAX } else { 0 }),
            ));
        } else if abbreviates(word, "realms") {
            spec.realms = Some(realms(words, word)?);
        } else if abbreviates(word, "protocol") {
            let expected = "a protocol name or a number from 0 to 255";
            let token = words.value(word, expected)?;
            spec.protocol = Some(Protocol::from_name(token).ok_or_else(|| {
                invalid_argument(word, expected, token, "\"protocol\" value is invalid")
            })?);
        } else if abbreviates(word, "tun_id") {
            let expected = "a tunnel id from 0 to 18446744073709551615";
            let token = words.value(word, expected)?;
            // get_be64 (get_u64: strtoull with base 0, read whole).
            spec.tun_id = values::strtoul_whole(token, 0).ok_or_else(|| {
                invalid_argument(word, expected, token, "\"tun_id\" value is invalid")
            })?;
        } else if abbreviates(word, "table") || word == "lookup" {
            let expected = "a table: local, main, default or a number from 0 to 4294967295";
            let token = words.value(word, expected)?;
            table = values::table_id(token)
                .ok_or_else(|| invalid_argument(word, expected, token, "invalid table ID"))?;
            if table >= 256 {
                // iprule_modify sends a table past 255 as FRA_TABLE, which
                // frh_get_table reads over frh.table: a later `table` below
                // 256 does not change it.
                table_attribute = Some(table);
            }
            table_ok = true;
        } else if abbreviates(word, "suppress_prefixlength") || word == "sup_pl" {
            spec.suppress_prefixlength = Some(suppress_prefixlength(words, word)?);
        } else if abbreviates(word, "suppress_ifgroup") || word == "sup_group" {
            spec.suppress_ifgroup = Some(suppress_ifgroup(words, word)?);
        } else if word == "dev" || word == "iif" {
            spec.iif = Some(ifname(words, word, "\"iif\"/\"dev\" not a valid ifname")?);
        } else if word == "oif" {
            spec.oif = Some(ifname(words, word, "\"oif\" not a valid ifname")?);
        } else if word == "l3mdev" {
            spec.l3mdev = true;
            table_ok = true;
        } else if word == "uidrange" {
            let expected = "a uid range START-END";
            let token = words.value(word, expected)?;
            let (Some(start), Some(end)) = scan_range(token) else {
                return Err(invalid_argument(word, expected, token, "invalid UID range"));
            };
            // sscanf's %u stores the low 32 bits of what strtoul read.
            spec.uid_range = Some((start as u32, end as u32));
        } else if word == "nat" || abbreviates(word, "map-to") {
            let expected = "an IPv4 address";
            let token = words.value(word, expected)?;
            // get_addr32: the gateway must be an IPv4 address; the kernel
            // keeps only the action (`ip rule` then shows `masquerade`).
            let ipv4 = values::is_default_word(token)
                || values::ip_addr(token).is_some_and(|a| a.is_ipv4());
            if !ipv4 {
                return Err(
                    ParseError::new(word, expected, Some(token)).with_system_message(format!(
                        "Error: an IP address is expected rather than \"{token}\""
                    )),
                );
            }
            action = RTN_NAT;
        } else if word == "ipproto" {
            let expected = "an IP protocol name (tcp, udp, ...) or a number from 0 to 255";
            let token = words.value(word, expected)?;
            spec.ip_proto = super::ipproto::ip_protocol(token).ok_or_else(|| {
                invalid_argument(word, expected, token, "Invalid \"ipproto\" value")
            })?;
        } else if word == "sport" || word == "dport" {
            let expected = "a port or a port range START-END";
            let token = words.value(word, expected)?;
            // sscanf("%hu-%hu"): one number is a range of one; %hu keeps
            // the low 16 bits.
            let range = match scan_range(token) {
                (Some(start), Some(end)) => (start as u16, end as u16),
                (Some(start), None) => (start as u16, start as u16),
                _ => {
                    let what = if word == "sport" {
                        "invalid port range"
                    } else {
                        "invalid dport range"
                    };
                    return Err(invalid_argument(word, expected, token, what));
                }
            };
            if word == "sport" {
                spec.sport_range = Some(range);
            } else {
                spec.dport_range = Some(range);
            }
        } else {
            let word = if word == "type" {
                words.value("type", "a rule type: a route type, goto or nop")?
            } else {
                word
            };
            let (number, target) = rule_type(words, word)?;
            action = number;
            if target.is_some() {
                goto_target = target;
            }
            table_ok = true;
        }
    }
    // iprule_modify refuses an l3mdev rule by its last table word (`tid`):
    // `table 300 lookup 0` passes it, and the FRA_TABLE 300 it sent is the
    // kernel's refusal below (kernel-checked, iproute2 6.1 / 6.18).
    if spec.l3mdev && table != TABLE_UNSPEC {
        return Err(ParseError::new(
            "l3mdev",
            "no table (an l3mdev rule looks up its device's)",
            Some(&table.to_string()),
        )
        .with_system_message("table can not be specified for l3mdev rules"));
    }
    if let Some(id) = table_attribute {
        table = id;
    }
    if !table_ok && op == RuleOp::Add {
        table = TABLE_MAIN;
    }
    // fib_nl2rule: a goto target only with action goto, and goto only with one.
    if action == FR_ACT_GOTO || goto_target.is_some() {
        // fib_nl2rule checks the addresses' size before the goto: `from
        // 2001:db8::/48` without -6 is "Invalid source address" first
        // (kernel-checked); the FIB checks them again for other lines.
        let wrong_family = |p: &Option<Prefix>| p.is_some_and(|p| p.family() != spec.family);
        for (wrong, word, message) in [
            (
                wrong_family(&spec.from),
                "from",
                "Error: Invalid source address.",
            ),
            (wrong_family(&spec.to), "to", "Error: Invalid dst address."),
        ] {
            if wrong {
                return Err(
                    ParseError::new(word, "an address of the rule's family", None)
                        .with_system_message(message),
                );
            }
        }
    }
    match (action, goto_target) {
        (FR_ACT_GOTO, None) => {
            return Err(
                ParseError::new("rule", "goto N (local is action goto)", Some("local"))
                    .with_system_message("Error: Missing goto target for action goto."),
            )
        }
        (FR_ACT_GOTO, _) | (_, None) => {}
        (_, Some(target)) => {
            return Err(ParseError::new(
                "goto",
                "goto as the rule's action (a later type replaced it)",
                Some(&target.to_string()),
            )
            .with_system_message("Error: Unexpected goto."))
        }
    }
    if spec.l3mdev && table != TABLE_UNSPEC {
        // fib_nl2rule, after the goto checks: frh_get_table's FRA_TABLE.
        return Err(ParseError::new(
            "l3mdev",
            "no table (an l3mdev rule looks up its device's)",
            Some(&table.to_string()),
        )
        .with_system_message("Error: l3mdev and table are mutually exclusive."));
    }
    spec.action = match action {
        FR_ACT_UNSPEC if op == RuleOp::Del => None,
        // `unicast` (FR_ACT_TO_TBL) with no table: table 0, as sent.
        FR_ACT_TO_TBL => Some(RuleAction::Lookup(table)),
        FR_ACT_GOTO => goto_target.map(RuleAction::Goto),
        FR_ACT_NOP => Some(RuleAction::Nop),
        FR_ACT_BLACKHOLE => Some(RuleAction::Blackhole),
        FR_ACT_UNREACHABLE => Some(RuleAction::Unreachable),
        FR_ACT_PROHIBIT => Some(RuleAction::Prohibit),
        other => Some(RuleAction::Other(other)),
    };
    match spec.action {
        // A delete's lookup of table 0 (`rule_find`: `rule->table` unset)
        // is any table.
        Some(RuleAction::Lookup(TABLE_UNSPEC)) if op == RuleOp::Del => {
            spec.action = Some(RuleAction::Lookup(TABLE_UNSPEC));
        }
        Some(RuleAction::Lookup(_)) => {}
        _ => spec.table_beside_action = table,
    }
    Ok(spec)
}

/// C's `sscanf(token, "%u-%u")` (and `%hu-%hu`): the numbers it read, as
/// `strtoul` with base 10 reads each (a sign and leading blanks taken);
/// the second only after a `-` right behind the first.
fn scan_range(token: &str) -> (Option<u64>, Option<u64>) {
    let (start, used) = values::strtoul_prefix(token, 10);
    if used == 0 {
        return (None, None);
    }
    let Some(rest) = token[used..].strip_prefix('-') else {
        return (Some(start), None);
    };
    match values::strtoul_prefix(rest, 10) {
        (_, 0) => (Some(start), None),
        (end, _) => (Some(start), Some(end)),
    }
}

/// `realms [FROM/]TO` (see [`values::realms`]).
fn realms(words: &mut Words<'_>, keyword: &str) -> Result<u32, ParseError> {
    let expected = "realms [FROM/]TO, each a realm name or a number from 0 to 255";
    let token = words.value(keyword, expected)?;
    values::realms(token)
        .ok_or_else(|| invalid_argument(keyword, expected, token, "invalid realms"))
}

/// A rule type after `type` or alone (the last `else` of
/// `iprule_modify`): `goto N`, `nop`, or a route type by
/// `rtnl_rtntype_a2n`, whose number the kernel takes as the action
/// (`FR_ACT_*`): unicast (1) looks up a table, local (2) is a goto without
/// a target, broadcast (3) a nop, 6-8 blackhole, unreachable, prohibit;
/// the kernel keeps any other number. The action number, and the goto
/// target given.
fn rule_type(words: &mut Words<'_>, word: &str) -> Result<(u8, Option<u32>), ParseError> {
    if abbreviates(word, "help") {
        return Err(ParseError::new(
            "rule",
            &format!("{RULE_WORDS} (for \"help\" ip prints its usage and stops)"),
            Some(word),
        ));
    }
    if abbreviates(word, "goto") {
        let target = u32_value(words, "goto", "invalid target")?;
        return Ok((FR_ACT_GOTO, Some(target)));
    }
    if abbreviates(word, "nop") {
        return Ok((FR_ACT_NOP, None));
    }
    match route_type_number(word) {
        Some(number) => Ok((number as u8, None)),
        None => Err(rule_garbage(word)),
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
/// every address. The prefix has its host bits cleared, as the kernel's
/// match masks them; the address as written comes beside it (the kernel
/// keeps and shows it).
fn selector(
    words: &mut Words<'_>,
    keyword: &str,
    given_family: Option<Family>,
) -> Result<(Option<Prefix>, Option<IpAddr>), ParseError> {
    let expected = match given_family {
        Some(Family::V4) => "an IPv4 prefix (ADDR/0..32) or \"all\"",
        Some(Family::V6) => "an IPv6 prefix (ADDR/0..128) or \"all\"",
        None => "a prefix such as 10.0.0.0/8 or 2001:db8::/32, or \"all\"",
    };
    let token = words.value(keyword, expected)?;
    if values::is_default_word(token) {
        return Ok((None, None));
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
    if len == 0 {
        return Ok((None, None));
    }
    Ok((Some(Prefix::containing(addr, len)), Some(addr)))
}

/// A `u32` argument as `get_u32` reads it, refused with ip's `what`.
fn u32_value(words: &mut Words<'_>, keyword: &str, what: &str) -> Result<u32, ParseError> {
    let expected = "a number from 0 to 4294967295";
    let token = words.value(keyword, expected)?;
    values::number_u32(token).ok_or_else(|| invalid_argument(keyword, expected, token, what))
}

/// A device name as iproute2's `check_ifname` takes it, refused with ip's
/// `what`: 1 to 15 bytes, no `/` and no blank (a rule
/// may name `a:b` or `..`, which no device can be: the kernel keeps the
/// name and the rule stays detached).
fn ifname(words: &mut Words<'_>, keyword: &str, what: &str) -> Result<String, ParseError> {
    let expected = "a device name of 1 to 15 bytes without '/' or blanks";
    let token = words.value(keyword, expected)?;
    let c_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r');
    if !token.is_empty() && token.len() < 16 && !token.contains(|c: char| c == '/' || c_space(c)) {
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
/// (`get_s32`); the kernel suppresses routes no longer than N.
fn suppress_prefixlength(words: &mut Words<'_>, keyword: &str) -> Result<u32, ParseError> {
    let expected = "a prefix length from 0 to 2147483647";
    let token = words.value(keyword, expected)?;
    strtol(token)
        .filter(|n| (0..=i64::from(i32::MAX)).contains(n))
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| {
            invalid_argument(
                keyword,
                expected,
                token,
                "suppress_prefixlength value is invalid",
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

/// `fwmark MARK[/MASK]`: the mark and the mask if one is given. The kernel
/// (`fib_nl2rule`) compares all bits of a non-zero mark without a mask
/// (mask 0xffffffff), and a zero mark without one matches everything.
fn fwmark_value(words: &mut Words<'_>) -> Result<(u32, Option<u32>), ParseError> {
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
        None => None,
        Some(mask) => {
            Some(values::number_u32(mask).ok_or_else(|| refuse(mask, "fwmask value is invalid"))?)
        }
    };
    Ok((mark, mask))
}

fn rule_garbage(token: &str) -> ParseError {
    unknown_word("rule", RULE_WORDS, token).with_system_message(format!(
        "Error: argument \"{token}\" is wrong: Failed to parse rule type"
    ))
}
