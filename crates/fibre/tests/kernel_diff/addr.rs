//! Address arithmetic on `IpAddr` as integers: prefixes, their edges, and
//! the spelling `ip` uses.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Address width in bits.
pub fn width(v6: bool) -> u32 {
    if v6 {
        128
    } else {
        32
    }
}

/// The address as an integer (IPv4 in the low 32 bits).
pub fn to_int(addr: IpAddr) -> u128 {
    match addr {
        IpAddr::V4(a) => u128::from(u32::from(a)),
        IpAddr::V6(a) => u128::from(a),
    }
}

/// The address of the family with this integer value (truncated for IPv4).
pub fn from_int(v6: bool, value: u128) -> IpAddr {
    if v6 {
        IpAddr::V6(Ipv6Addr::from(value))
    } else {
        IpAddr::V4(Ipv4Addr::from(value as u32))
    }
}

/// The mask of the host part of a /`len` prefix.
fn host_mask(v6: bool, len: u32) -> u128 {
    let bits = width(v6);
    let all = if v6 { u128::MAX } else { u128::from(u32::MAX) };
    if len >= bits {
        0
    } else {
        all >> len
    }
}

/// The first address (network address) of the /`len` prefix holding `addr`.
pub fn first(addr: IpAddr, len: u32) -> IpAddr {
    let v6 = addr.is_ipv6();
    from_int(v6, to_int(addr) & !host_mask(v6, len))
}

/// The last address of the /`len` prefix holding `addr`.
pub fn last(addr: IpAddr, len: u32) -> IpAddr {
    let v6 = addr.is_ipv6();
    from_int(v6, to_int(addr) | host_mask(v6, len))
}

/// `addr` moved by `delta`, wrapping inside the family's space.
pub fn offset(addr: IpAddr, delta: i128) -> IpAddr {
    let v6 = addr.is_ipv6();
    let value = to_int(addr).wrapping_add(delta as u128);
    from_int(v6, value)
}

/// The address `host` inside the /`len` prefix holding `addr`.
pub fn with_host(addr: IpAddr, len: u32, host: u128) -> IpAddr {
    let v6 = addr.is_ipv6();
    let mask = host_mask(v6, len);
    from_int(v6, (to_int(addr) & !mask) | (host & mask))
}

/// True for multicast destinations, which the generator avoids: the
/// kernel's answers for them carry cache flags unrelated to the FIB.
pub fn is_multicast(addr: IpAddr) -> bool {
    addr.is_multicast()
}

/// `ip`'s spelling of a prefix: `ADDR/LEN`.
pub fn prefix_text(addr: IpAddr, len: u32) -> String {
    format!("{}/{}", first(addr, len), len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn edges_of_ipv4_and_ipv6_prefixes() {
        assert_eq!(first(v4("10.1.2.3"), 24), v4("10.1.2.0"));
        assert_eq!(last(v4("10.1.2.3"), 24), v4("10.1.2.255"));
        assert_eq!(last(v4("10.1.2.3"), 0), v4("255.255.255.255"));
        assert_eq!(first(v4("10.1.2.3"), 32), v4("10.1.2.3"));
        assert_eq!(
            last(v4("2001:db8::1"), 64),
            v4("2001:db8::ffff:ffff:ffff:ffff")
        );
        assert_eq!(first(v4("2001:db8::1"), 0), v4("::"));
        assert_eq!(prefix_text(v4("2001:db8:1:2::9"), 48), "2001:db8:1::/48");
    }

    #[test]
    fn offsets_wrap_inside_the_family() {
        assert_eq!(offset(v4("0.0.0.0"), -1), v4("255.255.255.255"));
        assert_eq!(offset(v4("10.0.0.255"), 1), v4("10.0.1.0"));
        assert_eq!(
            offset(v4("::"), -1),
            v4("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")
        );
        assert_eq!(with_host(v4("10.9.9.9"), 24, 7), v4("10.9.9.7"));
    }
}
