//! `link add NAME type gre ...` as iproute2 spells it, parsed and checked.

use std::net::IpAddr;

use fibre_fib::{Family, Fib, RouteGetRequest};

/// GRE over IPv4 (`gre`, `gretap`) or over IPv6 (`ip6gre`, `ip6gretap`);
/// the `tap` kinds carry Ethernet frames (protocol 0x6558), the others IP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GreKind {
    /// `type gre`: IPv4 underlay, IPv4/IPv6 payload.
    Gre,
    /// `type ip6gre`: IPv6 underlay, IPv4/IPv6 payload.
    Ip6Gre,
    /// `type gretap`: IPv4 underlay, Ethernet payload.
    GreTap,
    /// `type ip6gretap`: IPv6 underlay, Ethernet payload.
    Ip6GreTap,
}

impl GreKind {
    /// The underlay family.
    pub fn family(self) -> Family {
        match self {
            GreKind::Gre | GreKind::GreTap => Family::V4,
            GreKind::Ip6Gre | GreKind::Ip6GreTap => Family::V6,
        }
    }

    /// True for the kinds carrying Ethernet frames.
    pub fn is_tap(self) -> bool {
        matches!(self, GreKind::GreTap | GreKind::Ip6GreTap)
    }

    /// iproute2's name.
    pub fn name(self) -> &'static str {
        match self {
            GreKind::Gre => "gre",
            GreKind::Ip6Gre => "ip6gre",
            GreKind::GreTap => "gretap",
            GreKind::Ip6GreTap => "ip6gretap",
        }
    }
}

/// Outer TTL / hop limit or TOS / traffic class: fixed or copied from the
/// inner packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Inheritable {
    /// Copy the inner packet's value.
    Inherit,
    /// This value.
    Fixed(u8),
}

/// A GRE tunnel's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GreConfig {
    /// Device name.
    pub name: String,
    /// Underlay family.
    pub kind: GreKind,
    /// The far end.
    pub remote: IpAddr,
    /// Our end; the underlay route's source when absent.
    pub local: Option<IpAddr>,
    /// Outer TTL/hop limit (`ttl inherit`/`ttl 0`: the inner one; ip6gre defaults to 64).
    pub ttl: Inheritable,
    /// Outer TOS/traffic class (default 0).
    pub tos: Inheritable,
    /// Key expected on receipt (`ikey`/`key`).
    pub ikey: Option<u32>,
    /// Key sent (`okey`/`key`).
    pub okey: Option<u32>,
    /// Require a checksum on receipt (`icsum`/`csum`).
    pub icsum: bool,
    /// Send a checksum (`ocsum`/`csum`).
    pub ocsum: bool,
    /// Drop out-of-order packets on receipt (`iseq`/`seq`).
    pub iseq: bool,
    /// Send sequence numbers (`oseq`/`seq`).
    pub oseq: bool,
}

/// Why a tunnel configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GreConfigError {
    /// No tokens.
    #[error("missing tunnel name: expected `NAME type gre|ip6gre remote ADDR ...`")]
    MissingName,
    /// The name is longer than IFNAMSIZ-1 or contains `/` or whitespace.
    #[error("invalid device name `{0}`: expected 1 to 15 bytes without '/' or whitespace")]
    BadName(String),
    /// A keyword without its value.
    #[error("`{keyword}` needs a value: expected {expected}")]
    MissingValue {
        /// The keyword.
        keyword: String,
        /// What should follow it.
        expected: &'static str,
    },
    /// A value that does not parse.
    #[error("invalid value `{value}` for `{keyword}`: expected {expected}")]
    BadValue {
        /// The keyword.
        keyword: String,
        /// The value given.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
    /// A key beyond 32 bits.
    #[error("key `{value}` out of range: expected 0 to 4294967295 or a dotted quad")]
    KeyOutOfRange {
        /// The value given.
        value: String,
    },
    /// A token that is not a GRE option.
    #[error("unknown option `{0}`: expected remote, local, ttl, tos, key, ikey, okey, csum, icsum, ocsum, seq, iseq or oseq")]
    UnknownOption(String),
    /// `type` missing or not a GRE kind.
    #[error("expected `type gre`, `gretap`, `ip6gre` or `ip6gretap`, found {0}")]
    BadType(String),
    /// The same option twice.
    #[error("`{0}` given twice")]
    Duplicate(String),
    /// No `remote`.
    #[error("missing `remote ADDR`: point-to-multipoint tunnels are not supported")]
    MissingRemote,
    /// An address of the wrong family for the tunnel type.
    #[error("`{keyword} {addr}` is not an {family} address, as `type {kind}` needs")]
    WrongFamily {
        /// `remote` or `local`.
        keyword: &'static str,
        /// The address.
        addr: IpAddr,
        /// `IPv4` or `IPv6`.
        family: &'static str,
        /// `gre` or `ip6gre`.
        kind: &'static str,
    },
    /// `local` is not an address of this router.
    #[error("local address {0} is not configured on any link of this router")]
    LocalNotOnRouter(IpAddr),
    /// The route to `remote` leaves through the tunnel itself.
    #[error("the route to remote {remote} leaves through {name} itself: the tunnel would loop")]
    UnderlayLoop {
        /// The tunnel.
        name: String,
        /// Its remote.
        remote: IpAddr,
    },
}

fn value<'a>(
    tokens: &[&'a str],
    at: usize,
    keyword: &str,
    expected: &'static str,
) -> Result<&'a str, GreConfigError> {
    tokens
        .get(at + 1)
        .copied()
        .ok_or_else(|| GreConfigError::MissingValue {
            keyword: keyword.into(),
            expected,
        })
}

fn parse_key(text: &str) -> Result<u32, GreConfigError> {
    if let Ok(quad) = text.parse::<std::net::Ipv4Addr>() {
        return Ok(u32::from(quad));
    }
    match text.parse::<u64>() {
        Ok(v) => u32::try_from(v).map_err(|_| GreConfigError::KeyOutOfRange { value: text.into() }),
        Err(_) if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => {
            Err(GreConfigError::KeyOutOfRange { value: text.into() })
        }
        Err(_) => Err(GreConfigError::BadValue {
            keyword: "key".into(),
            value: text.into(),
            expected: "a number 0 to 4294967295 or a dotted quad",
        }),
    }
}

fn parse_u8_setting(keyword: &str, text: &str, hex: bool) -> Result<Inheritable, GreConfigError> {
    if text == "inherit" {
        return Ok(Inheritable::Inherit);
    }
    let parsed = if hex {
        let digits = text.strip_prefix("0x").unwrap_or(text);
        u8::from_str_radix(digits, 16).ok()
    } else {
        text.parse::<u8>().ok()
    };
    parsed
        .map(Inheritable::Fixed)
        .ok_or(GreConfigError::BadValue {
            keyword: keyword.into(),
            value: text.into(),
            expected: if hex {
                "inherit or a hexadecimal byte (00 to ff)"
            } else {
                "inherit or 0 to 255"
            },
        })
}

impl GreConfig {
    /// Parses the tokens after `link add`:
    /// `NAME type gre|ip6gre|gretap|ip6gretap remote A [local B] [ttl N|inherit]
    /// [tos T|inherit] [key K | ikey K okey K] [csum|icsum|ocsum]
    /// [seq|iseq|oseq]`. As in iproute2, `tos` is hexadecimal, `ttl 0`
    /// means inherit, and a key may be a dotted quad. Only the syntax and
    /// families are checked here; [`GreConfig::validate`] checks against a
    /// router.
    ///
    /// ```
    /// use fibre_dev::gre::{GreConfig, GreConfigError};
    /// let c = GreConfig::parse(&["gt0", "type", "gre", "remote", "192.0.2.2", "local", "192.0.2.1",
    ///                            "key", "7", "oseq", "csum"]).unwrap();
    /// assert_eq!((c.ikey, c.okey, c.oseq, c.iseq, c.icsum), (Some(7), Some(7), true, false, true));
    /// assert_eq!(GreConfig::parse(&["gt0", "type", "gre", "remote", "2001:db8::1"]).unwrap_err().to_string(),
    ///            "`remote 2001:db8::1` is not an IPv4 address, as `type gre` needs");
    /// assert!(matches!(GreConfig::parse(&["gt0", "type", "gre", "remote", "192.0.2.2", "key", "4294967296"]),
    ///                  Err(GreConfigError::KeyOutOfRange { .. })));
    /// ```
    pub fn parse(tokens: &[&str]) -> Result<GreConfig, GreConfigError> {
        let name = *tokens.first().ok_or(GreConfigError::MissingName)?;
        if name.is_empty()
            || name.len() > 15
            || name.contains('/')
            || name.chars().any(char::is_whitespace)
        {
            return Err(GreConfigError::BadName(name.into()));
        }
        let kind = match (tokens.get(1), tokens.get(2)) {
            (Some(&"type"), Some(&"gre")) => GreKind::Gre,
            (Some(&"type"), Some(&"ip6gre")) => GreKind::Ip6Gre,
            (Some(&"type"), Some(&"gretap")) => GreKind::GreTap,
            (Some(&"type"), Some(&"ip6gretap")) => GreKind::Ip6GreTap,
            (Some(&"type"), Some(other)) => {
                return Err(GreConfigError::BadType(format!("`type {other}`")))
            }
            (Some(other), _) => return Err(GreConfigError::BadType(format!("`{other}`"))),
            (None, _) => return Err(GreConfigError::BadType("nothing".into())),
        };
        let mut config = GreConfig {
            name: name.into(),
            kind,
            remote: kind.family().unspecified(),
            local: None,
            ttl: match kind.family() {
                Family::V4 => Inheritable::Inherit,
                Family::V6 => Inheritable::Fixed(64),
            },
            tos: Inheritable::Fixed(0),
            ikey: None,
            okey: None,
            icsum: false,
            ocsum: false,
            iseq: false,
            oseq: false,
        };
        let mut remote = None;
        let mut seen: Vec<&str> = Vec::new();
        let mut at = 3;
        while at < tokens.len() {
            let keyword = tokens[at];
            // Synonyms share one "given twice" check.
            let canonical = match keyword {
                "hoplimit" | "hlim" => "ttl",
                "tclass" | "dsfield" => "tos",
                other => other,
            };
            if seen.contains(&canonical) {
                return Err(GreConfigError::Duplicate(keyword.into()));
            }
            seen.push(canonical);
            let mut takes_value = true;
            match canonical {
                "remote" | "local" => {
                    let text = value(tokens, at, keyword, "an IP address")?;
                    let addr: IpAddr = text.parse().map_err(|_| GreConfigError::BadValue {
                        keyword: keyword.into(),
                        value: text.into(),
                        expected: "an IP address",
                    })?;
                    if Family::of(&addr) != kind.family() {
                        return Err(GreConfigError::WrongFamily {
                            keyword: if canonical == "remote" {
                                "remote"
                            } else {
                                "local"
                            },
                            addr,
                            family: match kind.family() {
                                Family::V4 => "IPv4",
                                Family::V6 => "IPv6",
                            },
                            kind: kind.name(),
                        });
                    }
                    if canonical == "remote" {
                        remote = Some(addr);
                    } else {
                        config.local = Some(addr);
                    }
                }
                "ttl" => {
                    let text = value(tokens, at, keyword, "inherit or 0 to 255")?;
                    config.ttl = match parse_u8_setting(keyword, text, false)? {
                        Inheritable::Fixed(0) => Inheritable::Inherit,
                        other => other,
                    };
                }
                "tos" => {
                    let text = value(tokens, at, keyword, "inherit or a hexadecimal byte")?;
                    config.tos = parse_u8_setting(keyword, text, true)?;
                }
                "key" | "ikey" | "okey" => {
                    if canonical == "key" && (seen.contains(&"ikey") || seen.contains(&"okey"))
                        || canonical != "key" && seen.contains(&"key")
                    {
                        return Err(GreConfigError::Duplicate(keyword.into()));
                    }
                    let key = parse_key(value(tokens, at, keyword, "a key")?)?;
                    if canonical != "okey" {
                        config.ikey = Some(key);
                    }
                    if canonical != "ikey" {
                        config.okey = Some(key);
                    }
                }
                "csum" | "icsum" | "ocsum" | "seq" | "iseq" | "oseq" => {
                    takes_value = false;
                    match canonical {
                        "csum" => (config.icsum, config.ocsum) = (true, true),
                        "icsum" => config.icsum = true,
                        "ocsum" => config.ocsum = true,
                        "seq" => (config.iseq, config.oseq) = (true, true),
                        "iseq" => config.iseq = true,
                        _ => config.oseq = true,
                    }
                }
                _ => return Err(GreConfigError::UnknownOption(keyword.into())),
            }
            at += if takes_value { 2 } else { 1 };
        }
        config.remote = remote.ok_or(GreConfigError::MissingRemote)?;
        if config.remote.is_unspecified() {
            return Err(GreConfigError::MissingRemote);
        }
        Ok(config)
    }

    /// Checks the configuration against the router: `local` must be one of
    /// its addresses, and the route to `remote` must not leave through the
    /// tunnel itself (a link of the same name in the FIB).
    ///
    /// ```
    /// use fibre_dev::gre::{GreConfig, GreConfigError};
    /// let fib = fibre_fib::Fib::new();
    /// let c = GreConfig::parse(&["gt0", "type", "gre", "remote", "192.0.2.2", "local", "192.0.2.1"]).unwrap();
    /// assert_eq!(c.validate(&fib), Err(GreConfigError::LocalNotOnRouter("192.0.2.1".parse().unwrap())));
    /// ```
    pub fn validate(&self, router: &Fib) -> Result<(), GreConfigError> {
        if let Some(local) = self.local {
            let present = router
                .addresses(Some(self.kind.family()))
                .iter()
                .any(|a| a.local == local);
            if !present {
                return Err(GreConfigError::LocalNotOnRouter(local));
            }
        }
        let mut request = RouteGetRequest::to(self.remote);
        request.src = self.local;
        if let Ok(answer) = router.route_get(&request) {
            if answer.dev.as_deref() == Some(self.name.as_str()) {
                return Err(GreConfigError::UnderlayLoop {
                    name: self.name.clone(),
                    remote: self.remote,
                });
            }
        }
        Ok(())
    }

    /// Bytes the tunnel prepends: outer IP header plus GRE header (for the
    /// tap kinds the inner Ethernet header is payload, not overhead).
    pub fn overhead(&self) -> usize {
        let outer = match self.kind.family() {
            Family::V4 => fibre_net::ipv4::MIN_HEADER_LEN,
            Family::V6 => fibre_net::ipv6::HEADER_LEN,
        };
        outer
            + 4
            + 4 * usize::from(self.ocsum)
            + 4 * usize::from(self.okey.is_some())
            + 4 * usize::from(self.oseq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<GreConfig, GreConfigError> {
        GreConfig::parse(&line.split_whitespace().collect::<Vec<_>>())
    }

    #[test]
    fn iproute2_spellings() {
        let c = parse("g6 type ip6gre remote 2001:db8::2 local 2001:db8::1 ikey 1.2.3.4 okey 9 icsum oseq hoplimit 5 tclass inherit").unwrap();
        assert_eq!(c.kind, GreKind::Ip6Gre);
        assert_eq!((c.ikey, c.okey), (Some(0x0102_0304), Some(9)));
        assert_eq!(
            (c.icsum, c.ocsum, c.iseq, c.oseq),
            (true, false, false, true)
        );
        assert_eq!(
            (c.ttl, c.tos),
            (Inheritable::Fixed(5), Inheritable::Inherit)
        );
        assert_eq!(c.overhead(), 40 + 12);
        let c = parse("g6t type ip6gretap remote 2001:db8::2").unwrap();
        assert!(c.kind.is_tap() && c.kind.family() == Family::V6);
        assert_eq!(
            parse("g4t type gretap remote 192.0.2.2").unwrap().kind,
            GreKind::GreTap
        );
        let c = parse("g4 type gre remote 192.0.2.2 ttl 0 tos 0x10 seq").unwrap();
        assert_eq!(
            (c.ttl, c.tos, c.iseq, c.oseq),
            (Inheritable::Inherit, Inheritable::Fixed(0x10), true, true)
        );
        assert_eq!(c.overhead(), 20 + 8);
    }

    #[test]
    fn bad_input_is_refused_with_the_token() {
        let cases = [
            ("", GreConfigError::MissingName),
            ("g type gre", GreConfigError::MissingRemote),
            ("g type gre local 192.0.2.1", GreConfigError::MissingRemote),
            ("g type gre remote 0.0.0.0", GreConfigError::MissingRemote),
            (
                "g type vxlan remote 192.0.2.1",
                GreConfigError::BadType("`type vxlan`".into()),
            ),
            (
                "g remote 192.0.2.1",
                GreConfigError::BadType("`remote`".into()),
            ),
            (
                "g type gre remote 192.0.2.1 bogus",
                GreConfigError::UnknownOption("bogus".into()),
            ),
            (
                "g type gre remote 192.0.2.1 remote 192.0.2.3",
                GreConfigError::Duplicate("remote".into()),
            ),
            (
                "g type gre remote 192.0.2.1 key 1 ikey 2",
                GreConfigError::Duplicate("ikey".into()),
            ),
            (
                "g type gre remote 192.0.2.1 key 99999999999",
                GreConfigError::KeyOutOfRange {
                    value: "99999999999".into(),
                },
            ),
            (
                "g type gre remote 192.0.2.1 ttl 256",
                GreConfigError::BadValue {
                    keyword: "ttl".into(),
                    value: "256".into(),
                    expected: "inherit or 0 to 255",
                },
            ),
            (
                "g type gre remote",
                GreConfigError::MissingValue {
                    keyword: "remote".into(),
                    expected: "an IP address",
                },
            ),
            (
                "g type gre remote 192.0.2.1 local 2001:db8::1",
                GreConfigError::WrongFamily {
                    keyword: "local",
                    addr: "2001:db8::1".parse().unwrap(),
                    family: "IPv4",
                    kind: "gre",
                },
            ),
            (
                "g type ip6gre remote 192.0.2.1",
                GreConfigError::WrongFamily {
                    keyword: "remote",
                    addr: "192.0.2.1".parse().unwrap(),
                    family: "IPv6",
                    kind: "ip6gre",
                },
            ),
            (
                "name/with/slash type gre remote 192.0.2.1",
                GreConfigError::BadName("name/with/slash".into()),
            ),
        ];
        for (line, expected) in cases {
            assert_eq!(parse(line).unwrap_err(), expected, "{line}");
        }
        assert!(matches!(
            parse("g type gre remote 192.0.2.1 key abc"),
            Err(GreConfigError::BadValue { .. })
        ));
    }
}
