//! Single-word values as iproute2 reads them: numbers (`strtoul` with base
//! 0: decimal, `0x` hex, leading-`0` octal), table ids, dsfields (hex),
//! addresses (IPv4 may be abbreviated: `10/8` is `10.0.0.0/8`) and prefixes.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::types::*;

/// An unsigned number as `get_unsigned`/`get_u32` read it: base 0, no sign,
/// nothing after the digits, at most `u32::MAX`.
pub(crate) fn number_u32(token: &str) -> Option<u32> {
    let (digits, radix) = if let Some(hex) = token
        .strip_prefix("0x")
        .or_else(|| token.strip_prefix("0X"))
    {
        (hex, 16)
    } else if token.len() > 1 && token.starts_with('0') {
        (&token[1..], 8)
    } else {
        (token, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u32::from_str_radix(digits, radix).ok()
}

/// A hexadecimal byte as `rtnl_dsfield_a2n` reads `tos`/`dsfield` (base 16,
/// an optional `0x`).
pub(crate) fn dsfield(token: &str) -> Option<u8> {
    let digits = token
        .strip_prefix("0x")
        .or_else(|| token.strip_prefix("0X"))
        .unwrap_or(token);
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u8::from_str_radix(digits, 16).ok()
}

/// A table name (`local`, `main`, `default`) or number.
///
/// Table 0 (`RT_TABLE_UNSPEC`) is kept as 0: the kernel reads it as main.
pub(crate) fn table_id(token: &str) -> Option<TableId> {
    match token {
        "local" => Some(TABLE_LOCAL),
        "main" => Some(TABLE_MAIN),
        "default" => Some(TABLE_DEFAULT),
        "unspec" => Some(TABLE_UNSPEC),
        other => number_u32(other),
    }
}

/// An IPv4 address as iproute2's `get_addr_ipv4` reads it: one to four
/// decimal parts, the missing ones zero (`10` is `10.0.0.0`).
fn ipv4(token: &str) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let parts: Vec<&str> = token.split('.').collect();
    if parts.len() > 4 {
        return None;
    }
    for (slot, part) in octets.iter_mut().zip(&parts) {
        if part.is_empty() || part.len() > 3 || !part.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        *slot = part.parse().ok()?;
    }
    Some(Ipv4Addr::from(octets))
}

/// An IPv4 or IPv6 address.
pub(crate) fn ip_addr(token: &str) -> Option<IpAddr> {
    if token.contains(':') {
        token.parse::<Ipv6Addr>().ok().map(IpAddr::V6)
    } else {
        ipv4(token).map(IpAddr::V4)
    }
}

/// `ADDR[/LEN]`: the address and the length if one was written; the length
/// is checked against the family's width.
pub(crate) fn addr_with_len(token: &str) -> Option<(IpAddr, Option<u8>)> {
    let (addr, len) = match token.split_once('/') {
        Some((addr, len)) => (addr, Some(len)),
        None => (token, None),
    };
    let addr = ip_addr(addr)?;
    let len = match len {
        None => None,
        Some(len) => {
            if len.is_empty() || !len.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let len: u8 = len.parse().ok()?;
            if len > Family::of(&addr).bits() {
                return None;
            }
            Some(len)
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
        assert_eq!(addr_with_len("10.0.0.0/+8"), None);
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
