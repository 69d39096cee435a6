//! A cursor over the words of one command, and the family it settles on.
//!
//! iproute2 fixes a request's family from `-4`/`-6` or from the first
//! address on the line; every later address must be of that family. The
//! cursor carries that state so each grammar reads addresses through it.

use std::net::IpAddr;

use super::error::{DeviceCheck, ParseError};
use super::values;
use crate::types::*;

/// iproute2's message when a keyword's argument is missing (`NEXT_ARG`).
pub(crate) const INCOMPLETE: &str = "Command line is not complete. Try option \"help\"";

/// The words of one command after its verb, and the family so far.
pub(crate) struct Words<'a> {
    words: &'a [String],
    pos: usize,
    /// The family: given by `-4`/`-6`, or taken from the first address.
    pub family: Option<Family>,
    /// The devices iproute2 has looked up so far (see [`Words::look_up`]).
    device_checks: Vec<DeviceCheck>,
    /// The first refusal that comes from the kernel rather than from
    /// iproute2's parser (see [`Words::defer`]).
    deferred: Option<ParseError>,
}

/// A prefix as written: `default` (whose family may not be known yet) or an
/// address with a length.
#[derive(Debug, Clone, Copy)]
pub(crate) enum PrefixWord {
    Default,
    Prefix(Prefix),
}

impl<'a> Words<'a> {
    pub(crate) fn new(words: &'a [String], family: Option<Family>) -> Self {
        Self {
            words,
            pos: 0,
            family,
            device_checks: Vec::new(),
            deferred: None,
        }
    }

    /// iproute2 looks the device `name` up here (`ll_name_to_index`) and
    /// refuses the line with `refusal` when there is none: every refusal
    /// from here on is preceded by that check.
    pub(crate) fn look_up(&mut self, name: &str, refusal: impl Into<String>) {
        self.device_checks.push(DeviceCheck {
            name: name.to_string(),
            exists: true,
            refusal: refusal.into(),
        });
    }

    /// The kernel refuses the request with `refusal` when a device `name`
    /// already exists (a new link's name), before what it refuses next.
    pub(crate) fn refuse_existing(&mut self, name: &str, refusal: impl Into<String>) {
        self.device_checks.push(DeviceCheck {
            name: name.to_string(),
            exists: false,
            refusal: refusal.into(),
        });
    }

    /// Keeps a refusal that is the kernel's, not iproute2's parser's: the
    /// line is read on, since a later word iproute2 refuses, or a device
    /// it does not find, is the line's refusal instead. The first one kept
    /// wins (see [`Words::conclude`]).
    pub(crate) fn defer(&mut self, refusal: ParseError) {
        self.deferred.get_or_insert(refusal);
    }

    /// The kernel refusal kept by [`Words::defer`], taken, else
    /// `refusal`: for a refusal the kernel itself would give only after
    /// the checks that one comes from (e.g. `fib_table_insert` and
    /// `fib_table_delete` check the prefix's host bits before a type's
    /// scope or the type of the route to delete).
    pub(crate) fn deferred_or(&mut self, refusal: ParseError) -> ParseError {
        self.deferred.take().unwrap_or(refusal)
    }

    /// The line's outcome once it is read: a refusal of iproute2's parser,
    /// else a kernel refusal kept by [`Words::defer`], else `result`; a
    /// refusal carries the device lookups made before it.
    pub(crate) fn conclude<T>(self, result: Result<T, ParseError>) -> Result<T, ParseError> {
        let refusal = match (result, self.deferred) {
            (Ok(value), None) => return Ok(value),
            (Err(refusal), _) | (Ok(_), Some(refusal)) => refusal,
        };
        Err(ParseError {
            device_checks: self.device_checks,
            ..refusal
        })
    }

    /// The next word, consumed.
    pub(crate) fn next(&mut self) -> Option<&'a str> {
        let word = self.words.get(self.pos)?;
        self.pos += 1;
        Some(word.as_str())
    }

    /// The next word, not consumed.
    pub(crate) fn peek(&self) -> Option<&'a str> {
        self.words.get(self.pos).map(String::as_str)
    }

    /// The argument of `keyword`; the line ending here is a refusal.
    pub(crate) fn value(&mut self, keyword: &str, expected: &str) -> Result<&'a str, ParseError> {
        self.next()
            .ok_or_else(|| ParseError::new(keyword, expected, None).with_system_message(INCOMPLETE))
    }

    /// A `u32` argument, refused as iproute2 does: `"metric" value is invalid`.
    pub(crate) fn number(&mut self, keyword: &str, what: &str) -> Result<u32, ParseError> {
        let expected = "a number from 0 to 4294967295";
        let token = self.value(keyword, expected)?;
        values::number_u32(token).ok_or_else(|| {
            invalid_argument(
                keyword,
                expected,
                token,
                &format!("\"{what}\" value is invalid"),
            )
        })
    }

    /// The name argument of a link command (see [`link_name`]).
    pub(crate) fn link_name(
        &mut self,
        keyword: &str,
        usage: NameUse,
    ) -> Result<&'a str, ParseError> {
        let token = self.value(keyword, IFNAME_WANTED)?;
        link_name(keyword, token, usage)
    }

    /// A device name argument.
    pub(crate) fn ifname(&mut self, keyword: &str) -> Result<&'a str, ParseError> {
        let token = self.value(keyword, IFNAME_WANTED)?;
        ifname_from(keyword, token)
    }

    /// A table id argument.
    pub(crate) fn table(&mut self, keyword: &str) -> Result<TableId, ParseError> {
        let expected = "a table: local, main, default or a number from 0 to 4294967295";
        let token = self.value(keyword, expected)?;
        values::table_id(token)
            .ok_or_else(|| invalid_argument(keyword, expected, token, "\"table\" value is invalid"))
    }

    /// A `tos`/`dsfield` argument (hexadecimal byte).
    pub(crate) fn dsfield(&mut self, keyword: &str) -> Result<u8, ParseError> {
        let expected = "a TOS byte in hexadecimal (00 to ff)";
        let token = self.value(keyword, expected)?;
        values::dsfield(token)
            .ok_or_else(|| invalid_argument(keyword, expected, token, "\"tos\" value is invalid"))
    }

    /// Settles the family on `family` or refuses when it is already another.
    fn settle(&mut self, family: Family) -> bool {
        match self.family {
            None => {
                self.family = Some(family);
                true
            }
            Some(known) => known == family,
        }
    }

    /// An address of the line's family (which it settles if still open).
    pub(crate) fn address(&mut self, keyword: &str) -> Result<IpAddr, ParseError> {
        let family = self.family;
        let token = self.value(keyword, values::address_wanted(family))?;
        self.address_from(keyword, token)
    }

    /// Reads `token` as an address of the line's family.
    pub(crate) fn address_from(
        &mut self,
        keyword: &str,
        token: &str,
    ) -> Result<IpAddr, ParseError> {
        let family = self.family;
        let refuse = || {
            ParseError::new(keyword, values::address_wanted(family), Some(token))
                .with_system_message(format!(
                    "Error: {} address is expected rather than \"{token}\".",
                    values::family_word(family)
                ))
        };
        let addr = values::ip_addr(token).ok_or_else(refuse)?;
        if self.settle(Family::of(&addr)) {
            Ok(addr)
        } else {
            Err(refuse())
        }
    }

    /// An address of an explicitly given family (`via inet6 ADDR`): does not
    /// settle the line's family.
    pub(crate) fn address_of(
        &mut self,
        keyword: &str,
        family: Family,
    ) -> Result<IpAddr, ParseError> {
        let token = self.value(keyword, values::address_wanted(Some(family)))?;
        match values::ip_addr(token) {
            Some(addr) if Family::of(&addr) == family => Ok(addr),
            _ => Err(
                ParseError::new(keyword, values::address_wanted(Some(family)), Some(token))
                    .with_system_message(format!(
                        "Error: {} address is expected rather than \"{token}\".",
                        values::family_word(Some(family))
                    )),
            ),
        }
    }

    /// `ADDR[/LEN]` of the line's family, the length as written.
    pub(crate) fn addr_len_from(
        &mut self,
        keyword: &str,
        token: &str,
    ) -> Result<(IpAddr, Option<u8>), ParseError> {
        let family = self.family;
        let expected = match family {
            Some(Family::V4) => "an IPv4 prefix (ADDR/0..32)",
            Some(Family::V6) => "an IPv6 prefix (ADDR/0..128)",
            None => "a prefix such as 10.0.0.0/8 or 2001:db8::/32",
        };
        let refuse = || {
            ParseError::new(keyword, expected, Some(token)).with_system_message(format!(
                "Error: {} prefix is expected rather than \"{token}\".",
                values::family_word(family)
            ))
        };
        let (addr, len) = values::addr_with_len(token).ok_or_else(refuse)?;
        if self.settle(Family::of(&addr)) {
            Ok((addr, len))
        } else {
            Err(refuse())
        }
    }

    /// A route destination: `default`/`any`/`all` or a prefix. An IPv4
    /// prefix with host bits is refused with the kernel's message
    /// (`fib_table_insert`: "Invalid prefix for given prefix length") once
    /// the line is read (see [`Words::defer`]); an
    /// IPv6 one is masked, as `ip6_route_info_create` does
    /// (`ipv6_addr_prefix`), and `fib6_locate` matches by the prefix bits.
    pub(crate) fn prefix_from(
        &mut self,
        keyword: &str,
        token: &str,
    ) -> Result<PrefixWord, ParseError> {
        if values::is_default_word(token) {
            return Ok(PrefixWord::Default);
        }
        let (addr, len) = self.addr_len_from(keyword, token)?;
        let len = len.unwrap_or(Family::of(&addr).bits());
        if Family::of(&addr) == Family::V6 {
            return Ok(PrefixWord::Prefix(Prefix::containing(addr, len)));
        }
        match Prefix::new(addr, len) {
            Ok(prefix) => Ok(PrefixWord::Prefix(prefix)),
            Err(err) => {
                // The kernel's refusal: iproute2's of a later word comes first.
                self.defer(
                    ParseError::new(
                        keyword,
                        &format!("a prefix without host bits ({err})"),
                        Some(token),
                    )
                    .with_system_message("Error: Invalid prefix for given prefix length."),
                );
                Ok(PrefixWord::Prefix(Prefix::containing(addr, len)))
            }
        }
    }

    /// The family once the line is read: IPv4 when nothing settled it, as
    /// iproute2 does.
    pub(crate) fn final_family(&self) -> Family {
        self.family.unwrap_or(Family::V4)
    }
}

/// iproute2's `matches(word, full)`: `word` is a non-empty prefix of `full`.
pub(crate) fn abbreviates(word: &str, full: &str) -> bool {
    !word.is_empty() && full.starts_with(word)
}

/// How an iproute2 parser tells a keyword: exactly (`strcmp`) or by any
/// non-empty abbreviation (`matches`).
#[derive(Clone, Copy)]
pub(crate) enum Spelling {
    Exact,
    Abbreviated,
}

/// The keyword `word` stands for in `table`: the first entry, in the
/// parser's own order, that it spells (so an abbreviation resolves as ip
/// resolves it); each entry is (full word, spelling, keyword fibre reads).
pub(crate) fn keyword_in<T: Copy>(table: &[(&str, Spelling, T)], word: &str) -> Option<T> {
    table
        .iter()
        .find(|(full, spelling, _)| match spelling {
            Spelling::Exact => word == *full,
            Spelling::Abbreviated => abbreviates(word, full),
        })
        .map(|(_, _, keyword)| *keyword)
}

/// A refusal worded like iproute2's `duparg()`: a keyword given twice.
pub(crate) fn duplicate_argument(keyword: &str, token: &str) -> ParseError {
    ParseError::new(keyword, &format!("one \"{keyword}\""), Some(token)).with_system_message(
        format!("Error: duplicate \"{keyword}\": \"{token}\" is the second value."),
    )
}

/// A refusal worded like iproute2's `invarg()`:
/// `Error: argument "X" is wrong: <what>`.
pub(crate) fn invalid_argument(
    keyword: &str,
    expected: &str,
    token: &str,
    what: &str,
) -> ParseError {
    ParseError::new(keyword, expected, Some(token))
        .with_system_message(format!("Error: argument \"{token}\" is wrong: {what}"))
}

/// A refusal of a word that no keyword of the command takes.
pub(crate) fn unknown_word(command: &str, expected: &str, token: &str) -> ParseError {
    ParseError::new(command, expected, Some(token))
}

const IFNAME_WANTED: &str = "a device name of 1 to 15 bytes without '/' or ':'";

/// What a link command does with a name: make a device of it, or find one;
/// or only iproute2's own check of it, as it reads the word.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameUse {
    Create,
    Find,
    Syntax,
}

/// `token` as the name of a link command, refused where `ip` refuses it
/// and otherwise where the kernel does: `iplink_parse` checks a bare or
/// `dev` name with `check_altifname` (not empty, no `/` or blank) and a
/// `name` with `check_ifname` (also under IFNAMSIZ); then a new name fails
/// the kernel's `IFLA_IFNAME` policy when 16 bytes or longer and
/// `dev_valid_name` (`:`, `.`, `..`: EINVAL), and a name to find is not
/// found (`ll_name_to_index`).
pub(crate) fn link_name<'t>(
    keyword: &str,
    token: &'t str,
    usage: NameUse,
) -> Result<&'t str, ParseError> {
    let ip_word = if keyword == "name" { "name" } else { "dev" };
    let refuse = |message: String| {
        Err(ParseError::new(keyword, IFNAME_WANTED, Some(token)).with_system_message(message))
    };
    let c_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r');
    if token.is_empty()
        || token.contains(|c: char| c == '/' || c_space(c))
        || (ip_word == "name" && token.len() >= 16)
    {
        return refuse(format!(
            "Error: argument \"{token}\" is wrong: \"{ip_word}\" not a valid ifname"
        ));
    }
    if usage == NameUse::Syntax || values::valid_ifname(token) {
        return Ok(token);
    }
    match usage {
        NameUse::Syntax => Ok(token),
        NameUse::Find => refuse(format!("Cannot find device \"{token}\"")),
        NameUse::Create if token.len() >= 16 => {
            refuse("Error: Attribute failed policy validation.".to_string())
        }
        NameUse::Create => refuse("RTNETLINK answers: Invalid argument".to_string()),
    }
}

/// `token` as a device name.
pub(crate) fn ifname_from<'t>(keyword: &str, token: &'t str) -> Result<&'t str, ParseError> {
    if values::valid_ifname(token) {
        Ok(token)
    } else {
        Err(
            ParseError::new(keyword, IFNAME_WANTED, Some(token)).with_system_message(format!(
                "Error: argument \"{token}\" is wrong: \"{keyword}\" not a valid ifname"
            )),
        )
    }
}
