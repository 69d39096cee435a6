//! Single-word values as iproute2 reads them: numbers (`strtoul` with base
//! 0: decimal, `0x` hex, leading-`0` octal), table ids, dsfields (hex),
//! addresses (IPv4 may be abbreviated: `10/8` is `10.0.0.0/8`) and prefixes.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::types::*;

/// C's `isspace` in the C locale, which `strtoul` skips before a number.
fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// What glibc's `strtoul(text, &end, base)` reads from the start of
/// `text`: the value and how many bytes it consumed (0 when it found no
/// digits, as `end == text`). It skips leading blanks, takes one `+` or
/// `-` (a negative number wraps, as C's unsigned negation does), and with
/// base 0 reads `0x` as hexadecimal and a leading `0` as octal. A value
/// past `u64::MAX` saturates there (`ULONG_MAX` with `ERANGE`).
pub(crate) fn strtoul_prefix(text: &str, base: u32) -> (u64, usize) {
    let bytes = text.as_bytes();
    let mut pos = text.len() - text.trim_start_matches(is_c_space).len();
    let negative = match bytes.get(pos) {
        Some(b'-') => {
            pos += 1;
            true
        }
        Some(b'+') => {
            pos += 1;
            false
        }
        _ => false,
    };
    let hex_prefix = bytes.get(pos) == Some(&b'0')
        && matches!(bytes.get(pos + 1), Some(b'x' | b'X'))
        && bytes.get(pos + 2).is_some_and(u8::is_ascii_hexdigit);
    let radix = match base {
        0 if hex_prefix => 16,
        0 if bytes.get(pos) == Some(&b'0') => 8,
        0 => 10,
        other => other,
    };
    if radix == 16 && hex_prefix {
        pos += 2;
    }
    let digits_start = pos;
    let mut value: u64 = 0;
    let mut overflow = false;
    while let Some(digit) = bytes.get(pos).and_then(|b| (*b as char).to_digit(radix)) {
        match value
            .checked_mul(u64::from(radix))
            .and_then(|v| v.checked_add(u64::from(digit)))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
        pos += 1;
    }
    if pos == digits_start {
        return (0, 0);
    }
    let value = if overflow {
        u64::MAX
    } else if negative {
        value.wrapping_neg()
    } else {
        value
    };
    (value, pos)
}

/// `token` read whole by `strtoul(token, &end, base)`: `None` when it has
/// no digits or anything after them (iproute2's `!end || end == arg ||
/// *end` test).
pub(crate) fn strtoul_whole(token: &str, base: u32) -> Option<u64> {
    match strtoul_prefix(token, base) {
        (_, 0) => None,
        (value, used) if used == token.len() => Some(value),
        _ => None,
    }
}

/// An unsigned number as `get_unsigned`/`get_u32` read it: `strtoul` with
/// base 0 (decimal, `0x` hex, leading-`0` octal; leading blanks and a sign
/// are taken as C takes them), nothing after the digits, at most
/// `u32::MAX`.
pub(crate) fn number_u32(token: &str) -> Option<u32> {
    strtoul_whole(token, 0).and_then(|value| u32::try_from(value).ok())
}

/// A signed number as `get_integer` reads it (`strtol` with base 0,
/// within `int`): `link ... mtu -1` gets through to the kernel.
pub(crate) fn number_i32(token: &str) -> Option<i32> {
    let unsigned = token.trim_start_matches(is_c_space);
    let (negative, magnitude) = match unsigned.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, unsigned.strip_prefix('+').unwrap_or(unsigned)),
    };
    if magnitude.starts_with(|c: char| c == '+' || c == '-' || is_c_space(c)) {
        return None;
    }
    let value = i64::try_from(strtoul_whole(magnitude, 0)?).ok()?;
    i32::try_from(if negative { -value } else { value }).ok()
}

/// A number of at most `max` as iproute2's name tables read one when the
/// word is no name (`rtnl_rtprot_a2n`, `rtnl_rtscope_a2n`,
/// `rtnl_rtntype_a2n`: `strtoul(arg, &end, 0)`, `res > 255` refused).
pub(crate) fn number_at_most(token: &str, max: u64) -> Option<u64> {
    strtoul_whole(token, 0).filter(|value| *value <= max)
}

/// `realms [FROM/]TO` as `get_rt_realms_or_raw` reads it: realm names of
/// the shipped `rt_realms` (`cosmos` is 0) or numbers up to 255, FROM in
/// the high 16 bits; else the whole word as one number (`65536` is 1/0).
pub(crate) fn realms(token: &str) -> Option<u32> {
    let realm = |name: &str| -> Option<u32> {
        if name == "cosmos" {
            return Some(0);
        }
        number_at_most(name, 255).map(|n| n as u32)
    };
    let named = match token.split_once('/') {
        Some((from, to)) => realm(from).and_then(|from| {
            let to = if to.is_empty() { Some(0) } else { realm(to) };
            to.map(|to| (from << 16) | to)
        }),
        None if token.is_empty() => Some(0),
        None => realm(token),
    };
    named.or_else(|| number_u32(token))
}

/// The names of iproute2's shipped `rt_dsfield` file (DiffServ code points).
pub(crate) const DSFIELD_NAMES: &[(u8, &str)] = &[
    (0x00, "default"),
    (0x28, "AF11"),
    (0x30, "AF12"),
    (0x38, "AF13"),
    (0x48, "AF21"),
    (0x50, "AF22"),
    (0x58, "AF23"),
    (0x68, "AF31"),
    (0x70, "AF32"),
    (0x78, "AF33"),
    (0x88, "AF41"),
    (0x90, "AF42"),
    (0x98, "AF43"),
    (0x20, "CS1"),
    (0x40, "CS2"),
    (0x60, "CS3"),
    (0x80, "CS4"),
    (0xa0, "CS5"),
    (0xc0, "CS6"),
    (0xe0, "CS7"),
    (0xb8, "EF"),
];

/// A `tos`/`dsfield` as `rtnl_dsfield_a2n` reads it: a name of the shipped
/// `rt_dsfield` file, else `strtoul` with base 16 (an optional `0x`), at
/// most 255.
pub(crate) fn dsfield(token: &str) -> Option<u8> {
    if let Some((value, _)) = DSFIELD_NAMES.iter().find(|(_, name)| *name == token) {
        return Some(*value);
    }
    strtoul_whole(token, 16).and_then(|value| u8::try_from(value).ok())
}

/// A table name (`local`, `main`, `default`, `unspec`: iproute2's shipped
/// `rt_tables`) or number (`rtnl_rttable_a2n`: `strtoul` base 0, at most
/// `RT_TABLE_MAX`).
///
/// Table 0 (`RT_TABLE_UNSPEC`) is kept as 0: the kernel reads it as main.
pub(crate) fn table_id(token: &str) -> Option<TableId> {
    match token {
        "local" => Some(TABLE_LOCAL),
        "main" => Some(TABLE_MAIN),
        "default" => Some(TABLE_DEFAULT),
        "unspec" => Some(TABLE_UNSPEC),
        other => strtoul_whole(other, 0).and_then(|value| u32::try_from(value).ok()),
    }
}

/// An IPv4 address as iproute2's `get_addr_ipv4` reads it: one to four
/// parts separated by dots, each read by `strtoul` with base 0 (so `010`
/// is 8 and `0x0a` is 10) and at most 255, the missing ones zero (`10` is
/// `10.0.0.0`, `10.1` is `10.1.0.0`).
fn ipv4(token: &str) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let mut rest = token;
    for (index, slot) in octets.iter_mut().enumerate() {
        let (value, used) = strtoul_prefix(rest, 0);
        if used == 0 {
            return None;
        }
        *slot = u8::try_from(value).ok()?;
        rest = &rest[used..];
        if rest.is_empty() {
            break;
        }
        if index == 3 {
            return None;
        }
        rest = rest.strip_prefix('.')?;
    }
    Some(Ipv4Addr::from(octets))
}

/// A prefix length as `get_netmask` reads it: a number (`get_unsigned`,
/// base 0) or a dotted netmask whose host part is all ones
/// (`255.255.0.0` is 16; `mask2bits`).
fn netmask(token: &str) -> Option<u32> {
    if let Some(len) = number_u32(token) {
        return Some(len);
    }
    let mask = if is_default_word(token) {
        0
    } else {
        u32::from(ipv4(token)?)
    };
    let host = !mask;
    if host & host.wrapping_add(1) != 0 {
        return None;
    }
    Some(mask.leading_ones())
}

/// An IPv4 or IPv6 address.
pub(crate) fn ip_addr(token: &str) -> Option<IpAddr> {
    if token.contains(':') {
        token.parse::<Ipv6Addr>().ok().map(IpAddr::V6)
    } else {
        ipv4(token).map(IpAddr::V4)
    }
}

/// `ADDR[/LEN]` as `get_prefix_1` reads it: the address and the length if
/// one was written (a number or a netmask, see [`netmask`]); the length is
/// checked against the family's width.
pub(crate) fn addr_with_len(token: &str) -> Option<(IpAddr, Option<u8>)> {
    let (addr, len) = match token.split_once('/') {
        Some((addr, len)) => (addr, Some(len)),
        None => (token, None),
    };
    let addr = ip_addr(addr)?;
    let len = match len {
        None => None,
        Some(len) => {
            let len = netmask(len)?;
            if len > u32::from(Family::of(&addr).bits()) {
                return None;
            }
            Some(len as u8)
        }
    };
    Some((addr, len))
}

/// The words iproute2 reads as "the default route of the family".
pub(crate) fn is_default_word(token: &str) -> bool {
    matches!(token, "default" | "any" | "all")
}

/// A device name the kernel would take: 1..=15 bytes (IFNAMSIZ - 1), no
/// `/`, `:` or blank, not `.` or `..`.
pub(crate) fn valid_ifname(name: &str) -> bool {
    !name.is_empty()
        && name.len() < 16
        && name != "."
        && name != ".."
        && !name
            .chars()
            .any(|c| c == '/' || c == ':' || c.is_whitespace())
}

/// iproute2's word for a family in its messages (`family_name()`).
pub(crate) fn family_word(family: Option<Family>) -> &'static str {
    match family {
        Some(Family::V4) => "inet",
        Some(Family::V6) => "inet6",
        None => "any valid",
    }
}

/// Our description of an address of a family.
pub(crate) fn address_wanted(family: Option<Family>) -> &'static str {
    match family {
        Some(Family::V4) => "an IPv4 address",
        Some(Family::V6) => "an IPv6 address",
        None => "an IPv4 or IPv6 address",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_strtoul_base_zero() {
        assert_eq!(number_u32("100"), Some(100));
        assert_eq!(number_u32("0x10"), Some(16));
        assert_eq!(number_u32("010"), Some(8));
        assert_eq!(number_u32("0"), Some(0));
        assert_eq!(number_u32("4294967295"), Some(u32::MAX));
        assert_eq!(number_u32("4294967296"), None);
        assert_eq!(number_u32("-1"), None);
        assert_eq!(number_u32("12a"), None);
        assert_eq!(number_u32("0x"), None);
        assert_eq!(number_u32("09"), None);
    }

    #[test]
    fn dsfield_is_hex() {
        assert_eq!(dsfield("10"), Some(0x10));
        assert_eq!(dsfield("0x10"), Some(0x10));
        assert_eq!(dsfield("ff"), Some(255));
        assert_eq!(dsfield("0x100"), None);
        assert_eq!(dsfield("zz"), None);
    }

    #[test]
    fn table_names_and_numbers() {
        assert_eq!(table_id("main"), Some(254));
        assert_eq!(table_id("local"), Some(255));
        assert_eq!(table_id("default"), Some(253));
        assert_eq!(table_id("4294967295"), Some(u32::MAX));
        assert_eq!(table_id("foo"), None);
        assert_eq!(table_id("all"), None);
    }

    #[test]
    fn abbreviated_ipv4_like_iproute2() {
        assert_eq!(ip_addr("10"), Some("10.0.0.0".parse().unwrap()));
        assert_eq!(ip_addr("192.168"), Some("192.168.0.0".parse().unwrap()));
        assert_eq!(ip_addr("10.0.0.300"), None);
        assert_eq!(ip_addr("1.2.3.4.5"), None);
        assert_eq!(ip_addr("1..2"), None);
        assert_eq!(ip_addr("2001:db8::1"), Some("2001:db8::1".parse().unwrap()));
        assert_eq!(ip_addr("2001:db8:::1"), None);
    }

    #[test]
    fn lengths_are_checked_against_the_family() {
        assert_eq!(
            addr_with_len("10.0.0.0/8"),
            Some(("10.0.0.0".parse().unwrap(), Some(8)))
        );
        assert_eq!(addr_with_len("10.0.0.0/33"), None);
        assert_eq!(addr_with_len("::/129"), None);
        assert_eq!(addr_with_len("::/128").unwrap().1, Some(128));
        assert_eq!(addr_with_len("10.0.0.0/"), None);
        assert_eq!(addr_with_len("10.0.0.0/+8").unwrap().1, Some(8));
        assert_eq!(addr_with_len("10.0.0.0/08"), None);
    }

    #[test]
    fn interface_names() {
        assert!(valid_ifname("eth0"));
        assert!(valid_ifname("abcdefghijklmno"));
        assert!(!valid_ifname("abcdefghijklmnop"));
        assert!(!valid_ifname("a/b"));
        assert!(!valid_ifname(".."));
        assert!(!valid_ifname(""));
    }
}
