//! The two address families as key types: how their addresses are written,
//! which data files hold them and how their query sets are drawn.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

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

/// An address family: IPv4 (`u32`) or IPv6 (`u128`), host order.
///
/// ```
/// use fibre_bench::family::Family;
/// assert_eq!(<u32 as Family>::parse_addr("192.0.2.1"), Some(0xc000_0201));
/// assert_eq!(<u32 as Family>::format_addr(0xc000_0201), "192.0.2.1");
/// assert_eq!(<u128 as Family>::NAME, "IPv6");
/// ```
pub trait Family: Key {
    /// "IPv4" or "IPv6".
    const NAME: &'static str;
    /// The tag in the data file names: "v4" or "v6".
    const FILE_TAG: &'static str;
    /// The query set the lookup experiment uses for this family.
    const QUERY_KIND: QueryKind;
    /// Parses an address in its usual text form (`192.0.2.1`, `2001:db8::1`).
    fn parse_addr(text: &str) -> Option<Self>;
    /// Writes an address in its usual text form.
    fn format_addr(self) -> String;
}

impl Family for u32 {
    const NAME: &'static str = "IPv4";
    const FILE_TAG: &'static str = "v4";
    const QUERY_KIND: QueryKind = QueryKind::Uniform;
    fn parse_addr(text: &str) -> Option<Self> {
        Ipv4Addr::from_str(text).ok().map(u32::from)
    }
    fn format_addr(self) -> String {
        Ipv4Addr::from(self).to_string()
    }
}

impl Family for u128 {
    const NAME: &'static str = "IPv6";
    const FILE_TAG: &'static str = "v6";
    const QUERY_KIND: QueryKind = QueryKind::InsidePrefixes;
    fn parse_addr(text: &str) -> Option<Self> {
        Ipv6Addr::from_str(text).ok().map(u128::from)
    }
    fn format_addr(self) -> String {
        Ipv6Addr::from(self).to_string()
    }
}
