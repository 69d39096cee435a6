//! The two address families as key types: how their addresses are written,
//! which data files hold them and how their query sets are drawn.

use std::net::IpAddr;
use std::str::FromStr;

use fibre_base::{IpFamily, Ipv4, Ipv6};
use fibre_lpm::Key;

/// How the addresses looked up in a benchmark are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryKind {
    /// Every address equally likely (seeded); many miss the table.
    Uniform,
    /// A table prefix chosen uniformly, then its host bits at random: every query hits.
    InsidePrefixes,
}

impl QueryKind {
    /// Words for the text report.
    pub fn describe(self) -> &'static str {
        match self {
            QueryKind::Uniform => "uniformly random addresses",
            QueryKind::InsidePrefixes => "addresses drawn inside table prefixes",
        }
    }
}

/// An address family as the benchmarks key it: IPv4 (`u32`) or IPv6
/// (`u128`), host order. The address text is the family's own
/// ([`IpFamily`]), written once for both.
///
/// ```
/// use fibre_bench::family::Family;
/// assert_eq!(<u32 as Family>::parse_addr("192.0.2.1"), Some(0xc000_0201));
/// assert_eq!(<u32 as Family>::parse_addr("2001:db8::1"), None);
/// assert_eq!(<u32 as Family>::format_addr(0xc000_0201), "192.0.2.1");
/// assert_eq!(<u128 as Family>::format_addr(1), "::1");
/// assert_eq!(<u128 as Family>::NAME, "IPv6");
/// ```
pub trait Family: Key {
    /// The IP family whose integer form this is.
    type Ip: IpFamily<Bits = Self>;
    /// "IPv4" or "IPv6".
    const NAME: &'static str;
    /// The tag in the data file names: "v4" or "v6".
    const FILE_TAG: &'static str;
    /// The query set the lookup experiment uses for this family.
    const QUERY_KIND: QueryKind;

    /// Parses an address of this family in its usual text form
    /// (`192.0.2.1`, `2001:db8::1`).
    fn parse_addr(text: &str) -> Option<Self> {
        let addr = IpAddr::from_str(text).ok()?;
        Self::Ip::from_ip(addr).map(Self::Ip::to_bits)
    }

    /// Writes an address in its usual text form.
    fn format_addr(self) -> String {
        Self::Ip::from_bits(self).to_string()
    }
}

impl Family for u32 {
    type Ip = Ipv4;
    const NAME: &'static str = "IPv4";
    const FILE_TAG: &'static str = "v4";
    const QUERY_KIND: QueryKind = QueryKind::Uniform;
}

impl Family for u128 {
    type Ip = Ipv6;
    const NAME: &'static str = "IPv6";
    const FILE_TAG: &'static str = "v6";
    const QUERY_KIND: QueryKind = QueryKind::InsidePrefixes;
}
