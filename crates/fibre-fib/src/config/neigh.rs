//! `neigh add|change|replace|del ADDR [lladdr MAC] dev DEV [nud STATE]
//! [router]` and `neigh flush dev DEV`, read as iproute2's
//! `ipneigh_modify` reads them (ip/ipneigh.c): its keywords in its order,
//! anything else the address (`to ADDR` too), a second address refused
//! with `duparg2`; after the whole line "Device and destination are
//! required arguments."; then the link-layer address (`ll_addr_a2n`,
//! lib/ll_addr.c) and only then the device (`ll_name_to_index`).

use super::error::ParseError;
use super::values;
use super::words::{abbreviates, duplicate_argument, invalid_argument, Words};
use crate::command::NeighSpec;
use crate::write::neighs::NudState;

/// iproute2's refusal when the line lacks the device or the address.
const REQUIRED: &str = "Device and destination are required arguments.";

/// The words of `ipneigh_modify` after its verb.
pub(super) fn parse_neigh(words: &mut Words) -> Result<NeighSpec, ParseError> {
    let mut dev: Option<&str> = None;
    let mut addr = None;
    let mut lladdr_word: Option<&str> = None;
    let mut state = NudState::Permanent;
    let mut router = false;
    while let Some(word) = words.next() {
        if abbreviates(word, "lladdr") {
            let token = words.value("lladdr", "a link-layer address such as 02:00:00:00:00:01")?;
            if lladdr_word.is_some() {
                return Err(duplicate_argument("lladdr", token));
            }
            lladdr_word = Some(token);
        } else if word == "nud" {
            let token = words.value("nud", NUD_WANTED)?;
            state = parse_nud_state(token)
                .ok_or_else(|| invalid_argument("nud", NUD_WANTED, token, "nud state is bad"))?;
        } else if word == "router" {
            router = true;
        } else if word == "dev" {
            dev = Some(words.value("dev", "a device name")?);
        } else if let Some(modelled_not) = unmodelled(word) {
            return Err(ParseError::new(
                "neigh",
                &format!("lladdr, nud, router, dev or an address (fibre does not model \"{modelled_not}\")"),
                Some(word),
            ));
        } else {
            let mut token = word;
            if token == "to" || abbreviates(token, "help") {
                token = words.value(token, "an address")?;
            }
            if addr.is_some() {
                return Err(
                    ParseError::new("to", "one address", Some(token)).with_system_message(format!(
                        "Error: either \"to\" is duplicate, or \"{token}\" is a garbage."
                    )),
                );
            }
            addr = Some(words.address_from("to", token)?);
        }
    }
    let (Some(dev), Some(addr)) = (dev, addr) else {
        return Err(
            ParseError::new("neigh", "dev DEV and an address", None).with_system_message(REQUIRED)
        );
    };
    let lladdr = match lladdr_word {
        Some("null") | None => None,
        Some(token) => Some(ll_addr(token).ok_or_else(|| {
            ParseError::new(
                "lladdr",
                "a link-layer address such as 02:00:00:00:00:01",
                Some(token),
            )
            .with_system_message(format!(
                "\"{}\" is invalid lladdr.",
                ll_addr_bad_part(token)
            ))
        })?),
    };
    let dev = super::words::link_name("dev", dev, super::words::NameUse::Find)?;
    Ok(NeighSpec {
        dev: dev.to_string(),
        addr: Some(addr),
        lladdr,
        state,
        router,
    })
}

/// `neigh flush dev DEV`: fibre reads only the device selector of
/// `ipneigh_list_or_flush`.
pub(super) fn parse_flush(words: &mut Words) -> Result<NeighSpec, ParseError> {
    let mut dev = None;
    while let Some(word) = words.next() {
        if word == "dev" {
            dev = Some(words.value("dev", "a device name")?);
        } else {
            return Err(ParseError::new(
                "neigh flush",
                "dev DEV (fibre does not model the other selectors of a flush)",
                Some(word),
            ));
        }
    }
    let Some(dev) = dev else {
        return Err(ParseError::new("neigh flush", "dev DEV", None)
            .with_system_message("Flush requires arguments."));
    };
    let dev = super::words::link_name("dev", dev, super::words::NameUse::Find)?;
    Ok(NeighSpec {
        dev: dev.to_string(),
        addr: None,
        lladdr: None,
        state: NudState::None,
        router: false,
    })
}

const NUD_WANTED: &str =
    "permanent, reachable, noarp, none, stale, incomplete, delay, probe, failed or one NUD bit";

/// `ipneigh_modify`'s keywords fibre does not model.
fn unmodelled(word: &str) -> Option<&'static str> {
    if word == "proxy" {
        Some("proxy")
    } else if abbreviates(word, "extern_learn") {
        Some("extern_learn")
    } else if word == "use" {
        Some("use")
    } else if word == "managed" {
        Some("managed")
    } else if abbreviates(word, "protocol") {
        Some("protocol")
    } else {
        None
    }
}

/// `nud_state_a2n` (ip/ipneigh.c): the names (`permanent`, `reachable`
/// and `failed` abbreviated), or a number of at most one bit under 0x100.
///
/// ```
/// use fibre_fib::{config::parse_nud_state, NudState};
/// assert_eq!(parse_nud_state("perm"), Some(NudState::Permanent));
/// assert_eq!(parse_nud_state("0x10"), Some(NudState::Probe));
/// assert_eq!(parse_nud_state("all"), None);
/// ```
pub fn parse_nud_state(token: &str) -> Option<NudState> {
    let named = [
        ("permanent", true, NudState::Permanent),
        ("reachable", true, NudState::Reachable),
        ("noarp", false, NudState::Noarp),
        ("none", false, NudState::None),
        ("stale", false, NudState::Stale),
        ("incomplete", false, NudState::Incomplete),
        ("delay", false, NudState::Delay),
        ("probe", false, NudState::Probe),
        ("failed", true, NudState::Failed),
    ];
    for (name, abbreviated, state) in named {
        if token == name || (abbreviated && abbreviates(token, name)) {
            return Some(state);
        }
    }
    let number = values::number_u32(token)?;
    if number >= 0x100 || number & number.wrapping_sub(1) != 0 {
        return None;
    }
    NudState::from_bits(number as u8)
}

/// The most bytes `ll_addr_a2n` writes (`ipneigh_modify`'s `llabuf[20]`).
const LLADDR_MAX: usize = 20;

/// `ll_addr_a2n`: a dotted IPv4 address is 4 bytes; otherwise groups split
/// at `:`, each read by `sscanf("%x")` (leading blanks, a sign and `0x`
/// allowed, trailing garbage ignored) and at most 255. None: the whole
/// word is refused.
fn ll_addr(token: &str) -> Option<Vec<u8>> {
    if token.contains('.') {
        return match values::ip_addr(token) {
            Some(std::net::IpAddr::V4(a)) => Some(a.octets().to_vec()),
            _ => None,
        };
    }
    let mut bytes = Vec::new();
    for group in token.splitn(LLADDR_MAX, ':') {
        let value = scan_hex(group)?;
        if !(0..=255).contains(&value) {
            return None;
        }
        bytes.push(value as u8);
    }
    Some(bytes)
}

/// The part of a refused link-layer address iproute2 names: the group
/// `sscanf` could not read (the whole word for a dotted one).
fn ll_addr_bad_part(token: &str) -> &str {
    if token.contains('.') {
        return token;
    }
    token
        .splitn(LLADDR_MAX, ':')
        .find(|group| scan_hex(group).is_none_or(|v| !(0..=255).contains(&v)))
        .unwrap_or(token)
}

/// `sscanf(text, "%x", &int)`: skips blanks, takes a sign and an optional
/// `0x`, then as many hex digits as follow (at least one); the value as C
/// stores it in an int (wrapping), None when no digit was read.
fn scan_hex(text: &str) -> Option<i64> {
    let text = text.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let (negative, text) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let digits_after_prefix = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .filter(|rest| rest.starts_with(|c: char| c.is_ascii_hexdigit()));
    let digits = digits_after_prefix.unwrap_or(text);
    let count = digits.chars().take_while(char::is_ascii_hexdigit).count();
    if count == 0 {
        return None;
    }
    let mut value: u32 = 0;
    for c in digits[..count].chars() {
        value = value
            .wrapping_mul(16)
            .wrapping_add(c.to_digit(16).unwrap_or(0));
    }
    let value = value as i32 as i64;
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lladdr_groups_as_sscanf_reads_them() {
        assert_eq!(ll_addr("02:00:00:00:00:01"), Some(vec![2, 0, 0, 0, 0, 1]));
        assert_eq!(ll_addr("2:0:0:0:0:1"), Some(vec![2, 0, 0, 0, 0, 1]));
        // "%x" stops at the first non-digit: one byte.
        assert_eq!(ll_addr("02-00-00-00-00-01"), Some(vec![2]));
        assert_eq!(ll_addr("0x2:0xff"), Some(vec![2, 255]));
        assert_eq!(ll_addr("zz"), None);
        assert_eq!(ll_addr("100"), None);
        assert_eq!(ll_addr("02:00:00:00:00:01::"), None);
        assert_eq!(ll_addr_bad_part("02:00:00:00:00:01::"), "");
        assert_eq!(ll_addr("10.0.0.1"), Some(vec![10, 0, 0, 1]));
    }

    #[test]
    fn nud_states_by_name_and_bit() {
        assert_eq!(parse_nud_state("perm"), Some(NudState::Permanent));
        assert_eq!(parse_nud_state("fa"), Some(NudState::Failed));
        assert_eq!(parse_nud_state("sta"), None);
        assert_eq!(parse_nud_state("0x80"), Some(NudState::Permanent));
        assert_eq!(parse_nud_state("0"), Some(NudState::None));
        assert_eq!(parse_nud_state("0x3"), None);
        assert_eq!(parse_nud_state("256"), None);
    }
}
