//! `route add|replace|append|prepend|change|del ...` (iproute2's
//! `iproute_modify`), with iproute2's defaults applied before the request
//! is made, exactly as it fills `struct rtmsg`:
//!
//! | field | add/replace/... | del |
//! |---|---|---|
//! | table | main; local for `local`, `broadcast`, `anycast` | the same |
//! | protocol | boot | unspec (any) |
//! | type | unicast | unspec (any) |
//! | scope | IPv6: universe; local: host; broadcast/multicast/anycast: link; unicast without `via` or `nexthop`: link; else universe | IPv6: universe; local: host; broadcast/multicast/anycast: link; else nowhere (any) |

use std::net::IpAddr;

use super::error::ParseError;
use super::words::{invalid_argument, unknown_word, PrefixWord, Words, INCOMPLETE};
use crate::command::{NexthopSpec, RouteOp, RouteSpec};
use crate::types::*;

/// Keywords iproute2 knows that fibre does not model.
const UNSUPPORTED: &[&str] = &[
    "as",
    "expires",
    "realm",
    "realms",
    "advmss",
    "rtt",
    "rttvar",
    "reordering",
    "window",
    "cwnd",
    "initcwnd",
    "ssthresh",
    "rto_min",
    "hoplimit",
    "initrwnd",
    "features",
    "quickack",
    "congctl",
    "pref",
    "fastopen_no_cookie",
    "encap",
    "nhid",
    "vrf",
    "ttl-propagate",
    "from",
    "pervasive",
];

const ROUTE_WORDS: &str = "a prefix, \"default\", a route type or one of via, dev, src, metric, \
                           table, proto, scope, mtu, tos, onlink, nexthop";

/// The route request of the words after the verb.
pub(crate) fn parse_route(op: RouteOp, words: &mut Words<'_>) -> Result<RouteSpec, ParseError> {
    let deleting = op == RouteOp::Del;
    let mut dst: Option<PrefixWord> = None;
    let mut kind: Option<RouteType> = None;
    let mut table = None;
    let mut protocol = None;
    let mut scope = None;
    let mut metric = None;
    let mut prefsrc = None;
    let mut mtu = None;
    let mut mtu_lock = false;
    let mut tos = 0u8;
    let mut path = NexthopSpec {
        gateway: None,
        dev: None,
        weight: 1,
        onlink: false,
    };
    let mut path_given = false;
    let mut multipath: Option<Vec<NexthopSpec>> = None;

    while let Some(word) = words.next() {
        match word {
            "src" => prefsrc = Some(words.address("src")?),
            "via" => {
                path.gateway = Some(gateway(words)?);
                path_given = true;
            }
            "dev" | "oif" => {
                path.dev = Some(words.device(word)?.to_string());
                path_given = true;
            }
            "onlink" => {
                path.onlink = true;
                path_given = true;
            }
            "tos" | "dsfield" => tos = words.dsfield(word)?,
            "metric" | "priority" | "preference" => metric = Some(words.number(word, "metric")?),
            "table" => table = Some(words.table(word)?),
            "proto" | "protocol" => protocol = Some(protocol_value(words, word)?),
            "scope" => scope = Some(scope_value(words)?),
            "mtu" => {
                let (value, lock) = mtu_value(words)?;
                mtu = Some(value);
                mtu_lock = lock;
            }
            "nexthop" => {
                multipath = Some(nexthops(words)?);
                break;
            }
            w if UNSUPPORTED.contains(&w) => {
                return Err(unknown_word(
                    "route",
                    "a keyword fibre supports (it does not model this one)",
                    w,
                ))
            }
            other => {
                let mut token = other;
                let mut keyword = "to";
                if token == "to" {
                    token = words.value("to", "a route type or a prefix")?;
                }
                if !token.starts_with(|c: char| c.is_ascii_digit()) {
                    if let Some(t) = RouteType::from_name(token) {
                        kind = Some(t);
                        keyword = token;
                        token = words.value(token, "a prefix or \"default\"")?;
                    } else if token == "nat" {
                        return Err(unknown_word("route", "a route type fibre supports", token));
                    }
                }
                if dst.is_some() {
                    return Err(
                        unknown_word("route", ROUTE_WORDS, token).with_system_message(format!(
                            "Error: either \"to\" is duplicate, or \"{token}\" is a garbage."
                        )),
                    );
                }
                dst = Some(words.prefix_from(keyword, token)?);
            }
        }
    }

    let Some(dst) = dst else {
        return Err(
            ParseError::new("route", "a destination prefix or \"default\"", None)
                .with_system_message(INCOMPLETE),
        );
    };
    if path_given && multipath.is_some() {
        return Err(ParseError::new(
            "nexthop",
            "either via/dev/onlink or nexthop clauses, not both",
            Some("nexthop"),
        ));
    }
    let family = words.final_family();
    let dst = match dst {
        PrefixWord::Default => Prefix::default_route(family),
        PrefixWord::Prefix(p) => p,
    };
    if family == Family::V4 && tos & 0x3 != 0 {
        return Err(ParseError::new(
            "tos",
            "a TOS whose two ECN bits are 0",
            Some(&format!("{tos:#x}")),
        )
        .with_system_message("Error: Invalid dsfield (tos): ECN bits must be 0."));
    }

    let kind = kind.unwrap_or(if deleting {
        RouteType::Unspec
    } else {
        RouteType::Unicast
    });
    let has_gateway = path.gateway.is_some();
    let scope = scope
        .unwrap_or_else(|| default_scope(family, kind, deleting, has_gateway, multipath.is_some()));
    let table = table.unwrap_or(match kind {
        RouteType::Local | RouteType::Broadcast | RouteType::Anycast => TABLE_LOCAL,
        _ => TABLE_MAIN,
    });
    let protocol = protocol.unwrap_or(if deleting {
        Protocol::UNSPEC
    } else {
        Protocol::BOOT
    });
    let multipath_given = multipath.is_some();
    let nexthops = match multipath {
        Some(paths) => paths,
        None if path_given => vec![path],
        None => Vec::new(),
    };
    Ok(RouteSpec {
        table,
        dst,
        tos,
        kind,
        protocol,
        scope,
        metric,
        prefsrc,
        mtu,
        mtu_lock,
        nexthops,
        multipath: multipath_given,
    })
}

/// iproute2's scope when none is given (see the module's table).
fn default_scope(
    family: Family,
    kind: RouteType,
    deleting: bool,
    has_gateway: bool,
    multipath: bool,
) -> Scope {
    let unset = if deleting {
        Scope::NOWHERE
    } else {
        Scope::UNIVERSE
    };
    if family == Family::V6 {
        return Scope::UNIVERSE;
    }
    match kind {
        RouteType::Local => Scope::HOST,
        RouteType::Broadcast | RouteType::Multicast | RouteType::Anycast => Scope::LINK,
        RouteType::Unicast | RouteType::Unspec => {
            if deleting {
                Scope::NOWHERE
            } else if !has_gateway && !multipath {
                Scope::LINK
            } else {
                unset
            }
        }
        _ => unset,
    }
}

/// `via [inet|inet6] ADDR`.
fn gateway(words: &mut Words<'_>) -> Result<IpAddr, ParseError> {
    let family = match words.peek() {
        Some("inet") => Some(Family::V4),
        Some("inet6") => Some(Family::V6),
        Some(w @ ("mpls" | "bridge" | "link")) => {
            return Err(unknown_word("via", "an address family of inet or inet6", w))
        }
        _ => None,
    };
    match family {
        Some(family) => {
            words.next();
            if words.family.is_none() {
                words.family = Some(family);
            }
            words.address_of("via", family)
        }
        None => words.address("via"),
    }
}

fn protocol_value(words: &mut Words<'_>, keyword: &str) -> Result<Protocol, ParseError> {
    let expected = "a protocol name (kernel, boot, static, bgp, ...) or a number from 0 to 255";
    let token = words.value(keyword, expected)?;
    Protocol::from_name(token)
        .ok_or_else(|| invalid_argument(keyword, expected, token, "\"protocol\" value is invalid"))
}

fn scope_value(words: &mut Words<'_>) -> Result<Scope, ParseError> {
    let expected = "a scope: global, site, link, host, nowhere or a number from 0 to 255";
    let token = words.value("scope", expected)?;
    Scope::from_name(token)
        .ok_or_else(|| invalid_argument("scope", expected, token, "invalid \"scope\" value"))
}

/// `mtu [lock] N`: the value and whether it is locked.
fn mtu_value(words: &mut Words<'_>) -> Result<(u32, bool), ParseError> {
    let lock = words.peek() == Some("lock");
    if lock {
        words.next();
    }
    Ok((words.number("mtu", "mtu")?, lock))
}

/// `nexthop NH [nexthop NH]...`, where NH is `[via [FAMILY] ADDR] [dev D]
/// [weight W] [onlink]`; the first `nexthop` is already read.
fn nexthops(words: &mut Words<'_>) -> Result<Vec<NexthopSpec>, ParseError> {
    let mut paths = Vec::new();
    loop {
        if words.peek().is_none() {
            return Err(
                ParseError::new("nexthop", "via, dev, weight or onlink", None)
                    .with_system_message(INCOMPLETE),
            );
        }
        let mut path = NexthopSpec {
            gateway: None,
            dev: None,
            weight: 1,
            onlink: false,
        };
        while let Some(word) = words.peek() {
            match word {
                "via" => {
                    words.next();
                    path.gateway = Some(gateway(words)?);
                }
                "dev" => {
                    words.next();
                    path.dev = Some(words.device("dev")?.to_string());
                }
                "weight" => {
                    words.next();
                    path.weight = weight(words)?;
                }
                "onlink" => {
                    words.next();
                    path.onlink = true;
                }
                _ => break,
            }
        }
        paths.push(path);
        match words.next() {
            None => return Ok(paths),
            Some("nexthop") => continue,
            Some(other) => {
                return Err(unknown_word(
                    "nexthop",
                    "via, dev, weight, onlink, another \"nexthop\" or the end of the line",
                    other,
                )
                .with_system_message(format!(
                    "Error: \"nexthop\" or end of line is expected instead of \"{other}\""
                )))
            }
        }
    }
}

/// `weight W`: 1..=256 as iproute2 allows.
fn weight(words: &mut Words<'_>) -> Result<u16, ParseError> {
    let expected = "a weight from 1 to 256";
    let token = words.value("weight", expected)?;
    match super::values::number_u32(token) {
        Some(w @ 1..=256) => Ok(w as u16),
        _ => Err(invalid_argument(
            "weight",
            expected,
            token,
            "\"weight\" is invalid",
        )),
    }
}
