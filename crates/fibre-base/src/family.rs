//! The IP family as a type: code written once for IPv4 and IPv6 takes a
//! type parameter `I: IpFamily` and gets the family's address type, its
//! integer form and its constants from it, the way netstack3 writes its
//! stack over `I: Ip` (net-types' `ip` module). A pair of functions apart,
//! one per family, is kept only where the kernel's semantics differ, and
//! says so.

use std::fmt::{Debug, Display};
use std::hash::Hash;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

mod sealed {
    pub trait Sealed {}
}

/// IPv4 or IPv6, as a type (the only two: the trait is sealed).
///
/// ```
/// use fibre_base::{IpFamily, Ipv4, Ipv6};
/// // One function for both families: the address as an integer, the
/// // first `len` bits kept.
/// fn network<I: IpFamily>(addr: I::Addr, len: u8) -> I::Bits {
///     I::mask(I::to_bits(addr), len)
/// }
/// assert_eq!(network::<Ipv4>("10.1.2.3".parse().unwrap(), 8), 0x0a00_0000);
/// assert_eq!(network::<Ipv6>("2001:db8::1".parse().unwrap(), 32), 0x2001_0db8 << 96);
/// assert_eq!((Ipv4::NAME, Ipv6::NAME), ("inet", "inet6"));
/// ```
pub trait IpFamily: sealed::Sealed + Copy + Debug + Send + Sync + 'static {
    /// The family's address (`Ipv4Addr`, `Ipv6Addr`).
    type Addr: Copy + Eq + Ord + Hash + Debug + Display + Send + Sync + Into<IpAddr> + 'static;
    /// The address as an unsigned integer, most significant bit first
    /// (`u32`, `u128`): the form longest-prefix match and hashing use.
    type Bits: Copy + Eq + Ord + Hash + Debug + Default + Send + Sync + 'static;
    /// Bits in an address: 32 or 128.
    const ADDR_BITS: u8;
    /// The IP header's version field: 4 or 6.
    const VERSION: u8;
    /// The EtherType that carries the family (RFC 894: 0x0800; RFC 8200
    /// via RFC 2464: 0x86DD).
    const ETHERTYPE: u16;
    /// The family as iproute2 names it (`inet`, `inet6`).
    const NAME: &'static str;
    /// The unspecified address (`0.0.0.0`, `::`).
    const UNSPECIFIED: Self::Addr;

    /// The address as an integer.
    fn to_bits(addr: Self::Addr) -> Self::Bits;
    /// The address of an integer.
    fn from_bits(bits: Self::Bits) -> Self::Addr;
    /// `bits` with only its first `len` bits kept (`len` above
    /// [`IpFamily::ADDR_BITS`] keeps all).
    fn mask(bits: Self::Bits, len: u8) -> Self::Bits;
    /// The family's address in an `IpAddr`, if it is of this family.
    fn from_ip(addr: IpAddr) -> Option<Self::Addr>;
}

/// IPv4 (RFC 791).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ipv4 {}

/// IPv6 (RFC 8200).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ipv6 {}

/// The impl of [`IpFamily`] for `$family`: the two families differ only in
/// their types and numbers, so one body serves both.
macro_rules! ip_family {
    ($family:ident, $addr:ident, $bits:ty, $variant:ident, version $version:literal,
     ethertype $ethertype:literal, name $name:literal) => {
        impl sealed::Sealed for $family {}

        impl IpFamily for $family {
            type Addr = $addr;
            type Bits = $bits;
            const ADDR_BITS: u8 = <$bits>::BITS as u8;
            const VERSION: u8 = $version;
            const ETHERTYPE: u16 = $ethertype;
            const NAME: &'static str = $name;
            const UNSPECIFIED: $addr = $addr::UNSPECIFIED;

            fn to_bits(addr: $addr) -> $bits {
                <$bits>::from(addr)
            }
            fn from_bits(bits: $bits) -> $addr {
                $addr::from(bits)
            }
            fn mask(bits: $bits, len: u8) -> $bits {
                match len {
                    0 => 0,
                    // A shift by the full width would overflow: lengths
                    // from ADDR_BITS up keep every bit.
                    len if len < Self::ADDR_BITS => {
                        bits & (<$bits>::MAX << (Self::ADDR_BITS - len))
                    }
                    _ => bits,
                }
            }
            fn from_ip(addr: IpAddr) -> Option<$addr> {
                match addr {
                    IpAddr::$variant(a) => Some(a),
                    _ => None,
                }
            }
        }
    };
}

ip_family!(Ipv4, Ipv4Addr, u32, V4, version 4, ethertype 0x0800, name "inet");
ip_family!(Ipv6, Ipv6Addr, u128, V6, version 6, ethertype 0x86DD, name "inet6");

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<I: IpFamily>(addr: I::Addr) {
        assert_eq!(I::from_bits(I::to_bits(addr)), addr);
        assert_eq!(I::from_ip(addr.into()), Some(addr));
        assert_eq!(I::mask(I::to_bits(addr), I::ADDR_BITS), I::to_bits(addr));
        assert_eq!(I::mask(I::to_bits(addr), 0), I::to_bits(I::UNSPECIFIED));
    }

    #[test]
    fn addresses_round_trip_through_their_bits() {
        round_trip::<Ipv4>("192.0.2.1".parse().unwrap());
        round_trip::<Ipv6>("2001:db8::1".parse().unwrap());
    }

    #[test]
    fn masks_keep_the_first_bits() {
        assert_eq!((Ipv4::ADDR_BITS, Ipv6::ADDR_BITS), (32, 128));
        assert_eq!(Ipv4::mask(0xffff_ffff, 1), 0x8000_0000);
        assert_eq!(Ipv4::mask(0xc000_0201, 24), 0xc000_0200);
        assert_eq!(Ipv6::mask(u128::MAX, 127), u128::MAX - 1);
        assert_eq!(Ipv6::mask(u128::MAX, 200), u128::MAX);
    }

    #[test]
    fn an_address_of_the_other_family_is_not_taken() {
        assert_eq!(Ipv4::from_ip("::1".parse().unwrap()), None);
        assert_eq!(Ipv6::from_ip("10.0.0.1".parse().unwrap()), None);
    }
}
