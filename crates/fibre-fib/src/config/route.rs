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
use super::words::{
    abbreviates, invalid_argument, keyword_in, unknown_word, PrefixWord, Spelling, Words,
    INCOMPLETE,
};
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

/// `iproute_modify`'s keywords in the order it tries them, so that an
/// abbreviation resolves as ip resolves it (`m` is metric, `p` priority,
/// `pro` protocol, `t` table, `d` dsfield); each with the keyword fibre
/// reads it as.
const ROUTE_KEYWORDS: &[(&str, Spelling, &str)] = {
    use Spelling::*;
    &[
        ("src", Exact, "src"),
        ("as", Exact, "as"),
        ("via", Exact, "via"),
        ("from", Exact, "from"),
        ("tos", Exact, "tos"),
        ("dsfield", Abbreviated, "dsfield"),
        ("expires", Exact, "expires"),
        ("metric", Abbreviated, "metric"),
        ("priority", Abbreviated, "priority"),
        ("preference", Exact, "preference"),
        ("scope", Exact, "scope"),
        ("mtu", Exact, "mtu"),
        ("hoplimit", Exact, "hoplimit"),
        ("advmss", Exact, "advmss"),
        ("reordering", Abbreviated, "reordering"),
        ("rtt", Exact, "rtt"),
        ("rto_min", Exact, "rto_min"),
        ("window", Abbreviated, "window"),
        ("cwnd", Abbreviated, "cwnd"),
        ("initcwnd", Abbreviated, "initcwnd"),
        ("initrwnd", Abbreviated, "initrwnd"),
        ("features", Abbreviated, "features"),
        ("quickack", Abbreviated, "quickack"),
        ("congctl", Abbreviated, "congctl"),
        ("rttvar", Abbreviated, "rttvar"),
        ("ssthresh", Abbreviated, "ssthresh"),
        ("realms", Abbreviated, "realms"),
        ("onlink", Exact, "onlink"),
        ("nexthop", Exact, "nexthop"),
        ("nhid", Exact, "nhid"),
        ("protocol", Abbreviated, "protocol"),
        ("table", Abbreviated, "table"),
        ("vrf", Abbreviated, "vrf"),
        ("dev", Exact, "dev"),
        ("oif", Exact, "oif"),
        ("pref", Abbreviated, "pref"),
        ("encap", Exact, "encap"),
        ("ttl-propagate", Exact, "ttl-propagate"),
        ("fastopen_no_cookie", Abbreviated, "fastopen_no_cookie"),
    ]
};

/// The keyword `word` is to `iproute_modify`, if any (else it is a route
/// type or the destination).
fn route_keyword(word: &str) -> Option<&'static str> {
    keyword_in(ROUTE_KEYWORDS, word)
}

/// A route type as `rtnl_rtntype_a2n` reads it: `local`, `nat` and `throw`
/// in full, `brd`, any abbreviation of the others in its order (`b` is
/// broadcast, `bl` blackhole, `u` unreachable, `uni` unicast, `a`
/// anycast), else an `RTN_*` number. `Some(Err(word))` for a type fibre
/// does not model (nat, xresolve).
fn route_type(word: &str) -> Option<Result<RouteType, &str>> {
    use RouteType::*;
    let abbreviated: &[(&str, Option<RouteType>)] = &[
        ("broadcast", Some(Broadcast)),
        ("anycast", Some(Anycast)),
        ("multicast", Some(Multicast)),
        ("prohibit", Some(Prohibit)),
        ("unreachable", Some(Unreachable)),
        ("blackhole", Some(Blackhole)),
        ("xresolve", None),
        ("unicast", Some(Unicast)),
    ];
    let kind = match word {
        "local" => Some(Local),
        "nat" => None,
        "brd" => Some(Broadcast),
        _ => match abbreviated.iter().find(|(full, _)| abbreviates(word, full)) {
            Some((_, kind)) => *kind,
            None if word == "throw" => Some(Throw),
            None => {
                let number = super::values::number_at_most(word, 255)?;
                RouteType::from_number(number as u8)
            }
        },
    };
    Some(kind.ok_or(word))
}

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
    // The bytes of the request iproute2 builds, up to the nexthops.
    let mut request = RequestSize::default();
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
        match route_keyword(word).unwrap_or(word) {
            "src" => {
                let src = words.address("src")?;
                request.attribute(address_bytes(&src));
                prefsrc = Some(src);
            }
            "via" => {
                if path.gateway.is_some() {
                    return Err(invalid_argument(
                        "via",
                        "one via (several paths are nexthop clauses)",
                        word,
                        "use nexthop syntax to specify multiple via",
                    ));
                }
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
            "metric" | "priority" | "preference" => {
                metric = Some(words.number(word, "metric")?);
                request.attribute(4);
            }
            "table" => {
                let id = words.table(word)?;
                if id >= 256 {
                    // Only a table past 255 needs RTA_TABLE.
                    request.attribute(4);
                }
                table = Some(id);
            }
            "proto" | "protocol" => protocol = Some(protocol_value(words, word)?),
            "scope" => scope = Some(scope_value(words)?),
            "mtu" => {
                let (value, lock) = mtu_value(words)?;
                mtu = Some(value);
                request.metrics += 8;
                mtu_lock = lock;
            }
            "nexthop" => {
                if mtu_lock {
                    request.metrics += 8;
                }
                if request.metrics > 0 {
                    request.attribute(request.metrics);
                }
                multipath = Some(nexthops(words, request.bytes)?);
                break;
            }
            w if UNSUPPORTED.contains(&w) => {
                return Err(unknown_word(
                    "route",
                    &format!("a keyword fibre supports (it does not model \"{w}\")"),
                    word,
                ))
            }
            other => {
                let mut token = other;
                let mut keyword = "to";
                if token == "to" {
                    token = words.value("to", "a route type or a prefix")?;
                }
                // iproute_modify tries a type only on a word that does not
                // start with a digit.
                if !token.starts_with(|c: char| c.is_ascii_digit()) {
                    match route_type(token) {
                        Some(Ok(t)) => {
                            kind = Some(t);
                            keyword = token;
                            token = words.value(token, "a prefix or \"default\"")?;
                        }
                        Some(Err(unmodelled)) => {
                            return Err(unknown_word(
                                "route",
                                "a route type fibre supports",
                                unmodelled,
                            ))
                        }
                        None => {}
                    }
                }
                if dst.is_some() {
                    return Err(
                        unknown_word("route", ROUTE_WORDS, token).with_system_message(format!(
                            "Error: either \"to\" is duplicate, or \"{token}\" is a garbage."
                        )),
                    );
                }
                let family_known = words.family.is_some();
                let prefix = words.prefix_from(keyword, token)?;
                request.attribute(match prefix {
                    PrefixWord::Prefix(p) => address_bytes(&p.addr()),
                    // get_addr_1: "default" has the family's length when the
                    // family is known by then; "any" and "all" have none.
                    PrefixWord::Default if token == "default" && family_known => {
                        words.family.map_or(0, |f| usize::from(f.bits() / 8))
                    }
                    PrefixWord::Default => 0,
                });
                dst = Some(prefix);
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
    if family == Family::V6 && tos != 0 {
        // rtm_to_fib6_config refuses a dsfield on IPv6 routes.
        return Err(
            ParseError::new("tos", "no tos on an IPv6 route", Some(&format!("{tos:#x}")))
                .with_system_message(
                    "Error: Invalid dsfield (tos): option not available for IPv6.",
                ),
        );
    }
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
///
/// `request_bytes` is the size of the request before the nexthops: with
/// them it must fit iproute2's 4096-byte buffer (`parse_nexthops`).
fn nexthops(words: &mut Words<'_>, request_bytes: usize) -> Result<Vec<NexthopSpec>, ParseError> {
    let mut paths = Vec::new();
    // RTA_MULTIPATH's length: its header, then per path a `struct
    // rtnexthop` (8 bytes) and its gateway attribute.
    let mut multipath_len = 4;
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
        multipath_len += 8;
        while let Some(word) = words.peek() {
            match word {
                "via" => {
                    words.next();
                    let gw = gateway(words)?;
                    // RTA_GATEWAY, or RTA_VIA (two bytes of family more)
                    // for a gateway of the other family.
                    let same_family = words.family == Some(Family::of(&gw));
                    let attribute =
                        align4(4 + address_bytes(&gw) + if same_family { 0 } else { 2 });
                    if multipath_len + attribute > IPROUTE2_BUFFER {
                        return Err(ParseError::new(
                            "nexthop",
                            &format!(
                                "fewer nexthops (iproute2 builds them in {IPROUTE2_BUFFER} bytes)"
                            ),
                            None,
                        )
                        .with_system_message(format!(
                            "rta_addattr_l: Error! max allowed bound {IPROUTE2_BUFFER} exceeded"
                        )));
                    }
                    multipath_len += attribute;
                    path.gateway = Some(gw);
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
            None => {
                // addattr_l(n, 4096, RTA_MULTIPATH, ...) in parse_nexthops.
                if align4(request_bytes) + align4(multipath_len) > IPROUTE2_BUFFER {
                    return Err(ParseError::new(
                        "nexthop",
                        &format!(
                            "fewer nexthops (the request would take {} of iproute2's {IPROUTE2_BUFFER} bytes)",
                            align4(request_bytes) + align4(multipath_len)
                        ),
                        None,
                    )
                    .with_system_message(format!(
                        "addattr_l ERROR: message exceeded bound of {IPROUTE2_BUFFER}"
                    )));
                }
                return Ok(paths);
            }
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

/// The buffer `parse_nexthops` builds the nexthops in, and the bound it
/// gives `addattr_l` for the whole request.
const IPROUTE2_BUFFER: usize = 4096;

/// `RTA_ALIGN`/`NLMSG_ALIGN`.
fn align4(len: usize) -> usize {
    (len + 3) & !3
}

fn address_bytes(addr: &IpAddr) -> usize {
    match addr {
        IpAddr::V4(_) => 4,
        IpAddr::V6(_) => 16,
    }
}

/// The size of the netlink request `iproute_modify` has built so far.
struct RequestSize {
    /// `nlmsg_len`.
    bytes: usize,
    /// The payload of RTA_METRICS (8 bytes per metric, 8 for the lock).
    metrics: usize,
}

impl Default for RequestSize {
    fn default() -> Self {
        // NLMSG_LENGTH(sizeof(struct rtmsg)).
        Self {
            bytes: 16 + 12,
            metrics: 0,
        }
    }
}

impl RequestSize {
    /// One attribute with `payload` bytes (none when 0, as for `any`).
    fn attribute(&mut self, payload: usize) {
        if payload > 0 {
            self.bytes = align4(self.bytes) + align4(4 + payload);
        }
    }
}
