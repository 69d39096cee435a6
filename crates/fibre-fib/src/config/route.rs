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

use super::error::{DeviceCheck, ParseError};
use super::values;
use super::words::{
    abbreviates, invalid_argument, keyword_in, unknown_word, PrefixWord, Spelling, Words,
    INCOMPLETE,
};
use crate::command::{Command, NexthopSpec, RouteOp, RouteSpec};
use crate::types::*;

/// Keywords iproute2 knows whose arguments fibre does not read (an
/// encapsulation's own grammar): refused where they stand.
const UNSUPPORTED: &[&str] = &["encap"];

/// A keyword whose value fibre reads as iproute2 does, so that ip's own
/// refusals of it and of the words after it come first, but whose effect
/// fibre does not model: the request is refused once the line is read,
/// unless the kernel ignores the keyword for the request's family (IPv4
/// keeps no `expires`, `pref`, `from`, `as` or `ttl-propagate`; IPv6 no
/// realms) or the value changes nothing (`pref medium`; `from ::/0`;
/// realm 0). The metrics (`advmss`, `rtt`, ...) are modelled, but for
/// `congctl`.
#[derive(Debug, Clone, Copy)]
struct Unmodelled {
    /// Which of the line's unmodelled words it is.
    word_index: usize,
    /// An IPv4 request ignores it.
    ignored_v4: bool,
    /// An IPv6 request ignores it.
    ignored_v6: bool,
}

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
pub(crate) fn parse_route(
    op: RouteOp,
    words: &mut Words<'_>,
) -> Result<(RouteSpec, Vec<DeviceCheck>), ParseError> {
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
    // RTA_METRICS besides mtu, as iproute2 adds them, and RTAX_LOCK.
    let mut metric_entries: Vec<(u8, u32)> = Vec::new();
    let mut metric_locks = 0u32;
    let mut tos = 0u8;
    let mut path = NexthopSpec {
        gateway: None,
        dev: None,
        weight: 1,
        onlink: false,
    };
    let mut path_given = false;
    let mut multipath: Option<Vec<NexthopSpec>> = None;
    let mut unmodelled: Vec<Unmodelled> = Vec::new();
    let mut unmodelled_words: Vec<&str> = Vec::new();
    let mut unmodelled_type: Option<&str> = None;
    let mut nhid: Option<u32> = None;
    // The last table past 255, sent as RTA_TABLE.
    let mut table_attribute: Option<TableId> = None;

    while let Some(word) = words.next() {
        match route_keyword(word).unwrap_or(word) {
            "src" => {
                let src = words.address("src")?;
                request.attribute(address_bytes(&src));
                // fib_create_info and ip6_route_info_create keep no prefsrc
                // of 0.0.0.0 or :: (and a delete then matches any).
                prefsrc = Some(src).filter(|src| !src.is_unspecified());
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
                // iproute_modify keeps the last name and looks it up once
                // the line is read: a name no device has is "Cannot find
                // device" then, after the line's other refusals.
                path.dev = Some(words.value(word, "a device name")?.to_string());
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
                    // Only a table past 255 needs RTA_TABLE, which
                    // rtm_to_fib_config and rtm_to_fib6_config read
                    // over rtm_table: it stays the request's table
                    // whatever `table` comes later.
                    request.attribute(4);
                    table_attribute = Some(id);
                }
                table = Some(id);
            }
            "proto" | "protocol" => protocol = Some(protocol_value(words, word)?),
            "scope" => scope = Some(scope_value(words)?),
            "mtu" => {
                let (value, lock) = mtu_value(words)?;
                // ip_metrics_convert keeps at most 65535 - 15 (kernel-checked:
                // `mtu 65535` is shown `mtu 65520`).
                mtu = Some(if deleting {
                    value
                } else {
                    value.min(IP_MAX_MTU_METRIC)
                });
                request.metrics += 8;
                // RTAX_LOCK gathers the locks of every `mtu` word, and
                // ip_metrics_convert keeps the last value (kernel-checked:
                // `mtu lock 0 ... mtu 1280` is `mtu lock 1280`).
                mtu_lock |= lock;
                if lock {
                    metric_locks |= 1 << RouteMetrics::MTU;
                }
            }
            keyword @ ("hoplimit" | "advmss" | "reordering" | "window" | "cwnd" | "initcwnd"
            | "initrwnd" | "ssthresh" | "rtt" | "rttvar" | "rto_min" | "features"
            | "quickack" | "fastopen_no_cookie") => {
                let (number, value, locked) = metric_value(keyword, words)?;
                request.metrics += 8;
                if locked {
                    metric_locks |= 1 << number;
                }
                metric_entries.push((number, convert_metric(number, value, deleting)));
            }
            "nexthop" => {
                // iproute_modify looks `dev` up before it reads the nexthops.
                if let Some(dev) = &path.dev {
                    words.look_up(dev, format!("Cannot find device \"{dev}\""));
                }
                if metric_locks != 0 {
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
            "vrf" => {
                // ipvrf_get_table: fibre has no VRF devices, so no name is one.
                let token = words.value(word, "the name of a VRF device")?;
                return Err(invalid_argument(
                    word,
                    "the name of a VRF device (fibre has none)",
                    token,
                    "Invalid VRF",
                ));
            }
            "nhid" => {
                nhid = Some(words.number(word, "id")?);
            }
            keyword @ ("as" | "from" | "expires" | "realms" | "pref" | "ttl-propagate"
            | "congctl") => {
                let word_index = unmodelled_words.len();
                unmodelled_words.push(word);
                unmodelled.push(unmodelled_value(keyword, word_index, deleting, words)?);
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
                            unmodelled_type = Some(unmodelled);
                            keyword = token;
                            token = words.value(token, "a prefix or \"default\"")?;
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

    table = table_attribute.or(table);
    let Some(dst) = dst else {
        return Err(
            ParseError::new("route", "a destination prefix or \"default\"", None)
                .with_system_message(INCOMPLETE),
        );
    };
    if let (None, Some(dev)) = (&multipath, &path.dev) {
        // iproute_modify: `nodev` once the line is read, before the kernel.
        words.look_up(dev, format!("Cannot find device \"{dev}\""));
    }
    let family = words.final_family();
    if family == Family::V6 && tos != 0 {
        // rtm_to_fib_config and rtm_to_fib6_config judge the dsfield
        // first, before the paths (kernel-checked: `route replace P
        // dsfield 0xff dev D nexthop via G` is the ECN bits' refusal).
        // IPv6 routes take none.
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
    // The devices iproute2 looks up that no path of the request takes: an
    // IPv6 request's `dev` where every path has its own (iproute_modify
    // looks it up, ip6_route_multipath_add never uses it). The caller
    // looks them up before the route: iproute_modify finds the request's
    // device before parse_nexthops reads the paths (kernel-checked: `dev
    // fd9 nexthop via A dev fd8` is `Cannot find device "fd9"`).
    let mut looked_up = Vec::new();
    if let (None, Some(dev), Family::V6) = (&multipath, &path.dev, family) {
        // iproute_modify's `nodev` comes before anything the kernel says:
        // before rtm_to_fib6_config's refusals, which the FIB judges
        // ahead of the devices (kernel-checked: `route add ::/0 via inet
        // 1.2.3.4 dev fd9`, fd9 missing, is `Cannot find device "fd9"`, not
        // `IPv6 does not support RTA_VIA attribute`).
        looked_up.push(request_device(dev));
    }
    if let (true, Some(paths), Family::V6) = (path_given, &mut multipath, family) {
        // Looked up first even where a path takes it, since iproute_modify
        // does so before parse_nexthops (kernel-checked: `dev fd6 nexthop
        // via A dev nosuch nexthop via A`, both missing, is `Cannot find
        // device "fd6"` alone, seed 1796596192418753366).
        if let Some(dev) = &path.dev {
            looked_up.push(request_device(dev));
        }
        // ip6_route_multipath_add and _del start each path from the
        // request's own fields (`memcpy(&r_cfg, cfg, ...)`): a path's
        // gateway and device win, the request's `via` and `dev` fill in
        // where a path has none, and its `onlink` (rtm_flags) is every
        // path's.
        for nexthop in paths.iter_mut() {
            nexthop.gateway = nexthop.gateway.or(path.gateway);
            if nexthop.dev.is_none() {
                nexthop.dev.clone_from(&path.dev);
            }
            nexthop.onlink |= path.onlink;
        }
        path_given = false;
    }
    // A lone `onlink` is rtm_flags, neither RTA_OIF nor RTA_GATEWAY:
    // fib_nh_match then reads RTA_MULTIPATH as without it (kernel-checked:
    // after `route add P via G`, `route del P onlink nexthop via H dev D`
    // is "No such process").
    // rtm_to_fib_config: RTA_GATEWAY 0.0.0.0 sets no gateway family, so
    // `via 0.0.0.0` is no gateway to fib_nh_match, here and for the
    // realms below (kernel-checked: `route del P via 0.0.0.0 nexthop via H
    // dev D` compares the nexthops, `route del P realm 5 via 0.0.0.0`
    // ignores the realm; seeds 1796597255568130383, 1796597333683886652).
    let gateway_given = path.gateway.is_some_and(|g| !g.is_unspecified());
    let path_fields = path.dev.is_some() || gateway_given;
    if deleting && path_given && path_fields && family == Family::V4 {
        if let Some(paths) = multipath.take() {
            // fib_nh_match: a delete with RTA_OIF or RTA_GATEWAY compares
            // them with the route's first path and never reads
            // RTA_MULTIPATH (kernel-checked: `route del P via A nexthop via
            // B` is "No such process" unless P's first path is via A).
            // iproute2 still looks every device up, the request's first.
            // parse_one_nh's failed lookup is followed by parse_nexthops'
            // own line (kernel-checked: `route del P via A nexthop via B
            // dev D`, D missing, is `Cannot find device "D"` then `Error:
            // cannot parse nexthop`).
            looked_up.extend(path.dev.as_deref().map(request_device));
            looked_up.extend(
                paths
                    .into_iter()
                    .filter_map(|p| p.dev)
                    .map(|dev| DeviceCheck {
                        refusal: nexthop_device_refusal(&dev),
                        name: dev,
                        exists: true,
                    }),
            );
        }
    }
    if let (true, Some(paths)) = (path_given, &multipath) {
        let refusal = ParseError::new(
            "nexthop",
            "either via/dev/onlink or nexthop clauses, not both",
            Some("nexthop"),
        );
        // fib_create_info's "fast check" of the type's scope comes before
        // fib_get_nhs (kernel-checked: `route replace xresolve P oif lo
        // nexthop ...` is "Invalid scope"); fib_props gives nat and
        // xresolve scope nowhere, iproute2 nat scope host by default.
        if !deleting {
            let (type_scope, default) = match (unmodelled_type, kind) {
                (Some("nat"), _) => (Scope::NOWHERE, Scope::HOST),
                (Some(_), _) => (Scope::NOWHERE, Scope::UNIVERSE),
                (None, Some(RouteType::Local)) => (Scope::HOST, Scope::HOST),
                (None, Some(RouteType::Broadcast | RouteType::Anycast)) => {
                    (Scope::LINK, Scope::LINK)
                }
                (None, _) => (Scope::UNIVERSE, Scope::UNIVERSE),
            };
            if type_scope > scope.unwrap_or(default) {
                // After fib_table_insert's check of the prefix' host bits
                // (kernel-checked: `route append xresolve 10.20.1.0/16
                // onlink nexthop via G` is "Invalid prefix for given prefix
                // length", seed 1796594091508302741), as are the two below.
                return Err(words.deferred_or(refusal.with_system_message("Error: Invalid scope.")));
            }
        }
        // fib_get_nhs: a device or gateway beside the nexthops must be the
        // first nexthop's (and the route's `onlink` is not the paths').
        let first = &paths[0];
        if path.dev.is_some() && path.dev != first.dev {
            return Err(words.deferred_or(
                refusal.with_system_message("Error: Nexthop device index does not match RTA_OIF."),
            ));
        }
        // rtm_to_fib_config: RTA_GATEWAY 0.0.0.0 sets no gateway family,
        // so `via 0.0.0.0` beside nexthops is compared with nothing.
        let gateway = path.gateway.filter(|g| !g.is_unspecified());
        if gateway.is_some() && gateway != first.gateway {
            return Err(words.deferred_or(refusal.with_system_message(
                "Error: Nexthop gateway does not match RTA_GATEWAY or RTA_VIA.",
            )));
        }
        path_given = false;
    }
    let dst = match dst {
        PrefixWord::Default => Prefix::default_route(family),
        PrefixWord::Prefix(p) => p,
    };

    // fib_nh_match compares an IPv4 delete's realms (RTA_FLOW) with a
    // route's only when the delete names a device or gateway.
    let realms_compared = !(deleting && !gateway_given && path.dev.is_none());
    // What fibre refuses in a request the kernel would judge first: it is
    // refused once the kernel would take the rest (see `after_kernel_checks`).
    let mut unmodelled_refusal = unmodelled
        .iter()
        .find(|u| {
            let word = route_keyword(unmodelled_words[u.word_index]);
            !(if family == Family::V4 {
                u.ignored_v4 || (word == Some("realms") && !realms_compared)
            } else {
                u.ignored_v6
            })
        })
        .map(|refusal| {
            let word = unmodelled_words[refusal.word_index];
            let keyword = route_keyword(word).unwrap_or(word);
            if deleting && keyword == "realms" {
                // fibre's routes have no realms, so no route has these:
                // once the kernel finds the table, it matches none.
                return ParseError::new(
                    word,
                    "no realms on a delete (no route of fibre's has realms)",
                    None,
                )
                .with_system_message("RTNETLINK answers: No such process");
            }
            unknown_word(
                "route",
                &format!("a keyword fibre supports (it does not model \"{keyword}\")"),
                word,
            )
        });
    if let Some(id) = nhid {
        return Err(nexthop_id_refusal(
            id,
            deleting,
            path_given || multipath.is_some(),
        ));
    }
    if let Some(word) = unmodelled_type {
        if family == Family::V6 {
            // rtm_to_fib6_config sets no flag for nat or xresolve: the
            // kernel builds the route as a unicast one and keeps the type
            // (`ip -6 route` shows `nat P ... table local`, `route get`
            // answers `nat`); ip6_route_del compares no type
            // (kernel-checked: `route del xresolve P dev D` deletes P).
            // iproute2 puts nat in table local.
            let nat = word == "nat" || super::values::number_at_most(word, 255) == Some(10);
            if nat && table.is_none() {
                table = Some(TABLE_LOCAL);
            }
            if !deleting {
                kind = Some(if nat {
                    RouteType::Nat
                } else {
                    RouteType::XResolve
                });
            }
        } else {
            let refusal = unmodelled_type_refusal(
                word,
                deleting,
                scope.map(|s: Scope| s.0),
                path_given || multipath.is_some(),
            );
            if !deleting {
                return Err(words.deferred_or(refusal));
            }
            // inet_rtm_delroute looks the table up before fib_table_delete
            // compares types (kernel-checked: `route del xresolve P table
            // 77` is "FIB table does not exist"): the delete is tried
            // without its type first, and finds no route of that type.
            unmodelled_refusal = Some(refusal);
        }
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
    let spec = RouteSpec {
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
        metrics: RouteMetrics::from_entries(&metric_entries, metric_locks),
        nexthops,
        multipath: multipath_given,
    };
    match unmodelled_refusal {
        Some(refusal) => {
            Err(words.deferred_or(refusal.after_kernel_checks(Command::Route { op, spec })))
        }
        None => Ok((spec, looked_up)),
    }
}

/// iproute_modify's lookup of the request's `dev`, after the line is read
/// (`nodev`: `Cannot find device "D"`).
fn request_device(dev: &str) -> DeviceCheck {
    DeviceCheck {
        name: dev.to_string(),
        exists: true,
        refusal: format!("Cannot find device \"{dev}\""),
    }
}

/// iproute2's refusal of a `nexthop dev D` no device has: parse_one_nh's
/// `nodev`, then parse_nexthops' own line.
fn nexthop_device_refusal(dev: &str) -> String {
    format!("Cannot find device \"{dev}\" Error: cannot parse nexthop")
}

/// The value of an [`Unmodelled`] keyword, read as `iproute_modify` reads
/// it (with its refusals), and what the kernel makes of it.
fn unmodelled_value(
    keyword: &str,
    word_index: usize,
    deleting: bool,
    words: &mut Words<'_>,
) -> Result<Unmodelled, ParseError> {
    let mut entry = Unmodelled {
        word_index,
        ignored_v4: false,
        ignored_v6: false,
    };
    let bad = |token: &str, what: &str| {
        invalid_argument(keyword, &format!("a valid {keyword} value"), token, what)
    };
    match keyword {
        "as" => {
            // RTA_NEWDST: only MPLS routes read it.
            let mut token = words.value(keyword, "an address")?;
            if token == "to" {
                token = words.value("to", "an address")?;
            }
            words.address_from(keyword, token)?;
            entry.ignored_v4 = true;
            entry.ignored_v6 = true;
        }
        "from" => {
            // get_prefix; IPv4 routes have no source prefix (the kernel
            // ignores RTA_SRC), an IPv6 one of length 0 is none.
            let token = words.value(keyword, "a prefix")?;
            let len = if values::is_default_word(token) {
                0
            } else {
                let (addr, len) = words.addr_len_from(keyword, token)?;
                len.unwrap_or(Family::of(&addr).bits())
            };
            entry.ignored_v4 = true;
            entry.ignored_v6 = len == 0;
        }
        "expires" => {
            words.number(keyword, "expires")?;
            // ip6_route_del compares no expiry.
            entry.ignored_v4 = true;
            entry.ignored_v6 = deleting;
        }
        "realms" => {
            let token = words.value(keyword, "realms [FROM/]TO")?;
            let realms =
                values::realms(token).ok_or_else(|| bad(token, "\"realm\" value is invalid"))?;
            entry.ignored_v4 = realms == 0;
            entry.ignored_v6 = true;
        }
        "pref" => {
            // rtm_to_fib6_config: anything but low (3) or high (1) is medium.
            let token = words.value(keyword, "low, medium, high or a number from 0 to 255")?;
            let pref = match token {
                "low" => 3,
                "medium" => 0,
                "high" => 1,
                _ => values::number_at_most(token, 255)
                    .ok_or_else(|| bad(token, "\"pref\" value is invalid"))?,
            };
            // ip6_route_del compares no preference either.
            entry.ignored_v4 = true;
            entry.ignored_v6 = deleting || (pref != 1 && pref != 3);
        }
        "ttl-propagate" => {
            // RTA_TTL_PROPAGATE: only MPLS routes read it.
            let token = words.value(keyword, "enabled or disabled")?;
            if !abbreviates(token, "enabled") && !abbreviates(token, "disabled") {
                return Err(bad(token, "\"ttl-propagate\" value is invalid"));
            }
            entry.ignored_v4 = true;
            entry.ignored_v6 = true;
        }
        _ => {
            // congctl [lock] NAME: the kernel's tcp_ca_get_key_by_name,
            // which fibre does not model.
            let mut token = words.value(keyword, "a congestion control name")?;
            if token == "lock" {
                token = words.value(keyword, "a congestion control name")?;
            }
            let _ = token;
        }
    }
    Ok(entry)
}

/// A metric's `[lock] VALUE` as `iproute_modify` reads it, with its
/// refusals: (its `RTAX_*` number, the value iproute2 sends, locked).
fn metric_value(keyword: &str, words: &mut Words<'_>) -> Result<(u8, u32, bool), ParseError> {
    let bad = |token: &str, what: &str| {
        invalid_argument(keyword, &format!("a valid {keyword} value"), token, what)
    };
    let number = match keyword {
        "window" => RouteMetrics::WINDOW,
        "rtt" => RouteMetrics::RTT,
        "rttvar" => RouteMetrics::RTTVAR,
        "ssthresh" => RouteMetrics::SSTHRESH,
        "cwnd" => RouteMetrics::CWND,
        "advmss" => RouteMetrics::ADVMSS,
        "reordering" => RouteMetrics::REORDERING,
        "hoplimit" => RouteMetrics::HOPLIMIT,
        "initcwnd" => RouteMetrics::INITCWND,
        "features" => RouteMetrics::FEATURES,
        "rto_min" => RouteMetrics::RTO_MIN,
        "initrwnd" => RouteMetrics::INITRWND,
        "quickack" => RouteMetrics::QUICKACK,
        _ => RouteMetrics::FASTOPEN_NO_COOKIE,
    };
    match keyword {
        "features" => {
            // Only `ecn` (RTAX_FEATURE_ECN), and no lock.
            let token = words.value(keyword, "ecn")?;
            if token != "ecn" {
                return Err(bad(token, "\"features\" value not valid"));
            }
            Ok((number, 1, false))
        }
        "quickack" | "fastopen_no_cookie" => {
            let token = words.value(keyword, "0 or 1")?;
            let value = values::number_u32(token)
                .ok_or_else(|| bad(token, &format!("\"{keyword}\" value is invalid")))?;
            if value > 1 {
                return Err(bad(token, &format!("\"{keyword}\" value should be 0 or 1")));
            }
            Ok((number, value, false))
        }
        _ => {
            // [lock] N: get_unsigned, or get_time_rtt for the times (rto_min
            // is always locked and takes no `lock`).
            let mut token = words.value(keyword, "a number")?;
            let mut locked = keyword == "rto_min";
            if !locked && token == "lock" {
                locked = true;
                token = words.value(keyword, "a number")?;
            }
            let what = match keyword {
                "advmss" => "\"mss\" value is invalid".to_string(),
                other => format!("\"{other}\" value is invalid"),
            };
            let value = if matches!(keyword, "rtt" | "rttvar" | "rto_min") {
                rtt_time(token).map(|(value, raw)| match keyword {
                    // Sent in the kernel's units unless given without a unit.
                    "rtt" if !raw => value.wrapping_mul(8),
                    "rttvar" if !raw => value.wrapping_mul(4),
                    _ => value,
                })
            } else {
                values::number_u32(token)
            };
            let value = value
                .filter(|v| keyword != "hoplimit" || *v <= 255)
                .ok_or_else(|| bad(token, &what))?;
            Ok((number, value, locked))
        }
    }
}

/// `ip_metrics_convert`'s bounds on a metric an add keeps (a delete
/// compares the value as given, `fib_metrics_match`).
fn convert_metric(number: u8, value: u32, deleting: bool) -> u32 {
    match number {
        _ if deleting => value,
        RouteMetrics::ADVMSS => value.min(65535 - 40),
        RouteMetrics::HOPLIMIT => value.min(255),
        _ => value,
    }
}

/// `get_time_rtt`: a number (`strtoul` base 0, or `strtod` when it has a
/// `.`, rounded up) with an optional unit s/sec/secs (seconds) or
/// ms/msec/msecs, any case: the milliseconds, and whether no unit was
/// given (iproute2 then sends the number as it is, "raw").
fn rtt_time(token: &str) -> Option<(u32, bool)> {
    let (value, used) = if token.contains('.') {
        let end = token
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
            .unwrap_or(token.len());
        let number: f64 = token[..end].parse().ok()?;
        if number < 0.0 {
            return None;
        }
        (number, end)
    } else {
        match values::strtoul_prefix(token, 0) {
            (_, 0) => return None,
            (n, _) if n > u64::from(u32::MAX) => return None,
            (n, used) => (n as f64, used),
        }
    };
    let unit = token[used..].to_ascii_lowercase();
    let millis = match unit.as_str() {
        "" | "ms" | "msec" | "msecs" => value,
        "s" | "sec" | "secs" => value * 1000.0,
        _ => return None,
    };
    // `*val = t; if (*val < t) *val += 1;`: an unsigned int, rounded up.
    let whole = millis as u32;
    let rounded = if f64::from(whole) < millis {
        whole.wrapping_add(1)
    } else {
        whole
    };
    Some((rounded, unit.is_empty()))
}

/// A route with `nhid`: fibre has no nexthop objects. The kernel
/// (`rtm_to_fib_config`, `fib_create_info`) refuses one with paths of its
/// own, else one naming an id that does not exist; a delete finds no
/// route that uses it.
fn nexthop_id_refusal(id: u32, deleting: bool, has_paths: bool) -> ParseError {
    let message = if has_paths {
        "Error: Nexthop specification and nexthop id are mutually exclusive."
    } else if deleting {
        "RTNETLINK answers: No such process"
    } else {
        "Error: Nexthop id does not exist."
    };
    ParseError::new(
        "nhid",
        "no nexthop id (fibre has no nexthop objects)",
        Some(&id.to_string()),
    )
    .with_system_message(message)
}

/// The IPv4 route types `nat` and `xresolve`, which fibre's routes never
/// have: an add wants scope nowhere of them (`fib_create_info`: "Invalid
/// scope"; iproute2 gives nat scope host, xresolve universe) and then no
/// path (kernel-checked), and a delete finds none ("No such process").
fn unmodelled_type_refusal(
    word: &str,
    deleting: bool,
    scope: Option<u8>,
    has_paths: bool,
) -> ParseError {
    let refusal = unknown_word("route", "a route type fibre supports", word);
    let scope = scope.unwrap_or(if word == "nat" {
        Scope::HOST.0
    } else {
        Scope::UNIVERSE.0
    });
    if deleting {
        refusal.with_system_message("RTNETLINK answers: No such process")
    } else if scope < Scope::NOWHERE.0 {
        refusal.with_system_message("Error: Invalid scope.")
    } else if has_paths {
        refusal.with_system_message(
            "Error: Gateway, device and multipath can not be specified for this route type.",
        )
    } else {
        refusal
    }
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
            words.next();
            let token = words.value(w, "an address of that family")?;
            // get_addr: an MPLS label stack (`mpls_pton`: labels below
            // 2^20 joined by `/`) or a link-layer address (`ll_addr_a2n`:
            // hex bytes joined by `:`) reads; no bridge address does. The
            // kernel then takes neither as an IPv4 or IPv6 gateway.
            let reads = match w {
                "mpls" => token
                    .split('/')
                    .all(|label| values::number_u32(label).is_some_and(|l| l < 1 << 20)),
                "link" => token.split(':').all(|byte| {
                    (1..=2).contains(&byte.len()) && byte.chars().all(|c| c.is_ascii_hexdigit())
                }),
                _ => false,
            };
            let refusal = unknown_word("via", "an address family of inet or inet6", w);
            return Err(if reads {
                refusal.with_system_message("Error: Unsupported address family in RTA_VIA.")
            } else {
                refusal.with_system_message(format!(
                    "Error: {w} address is expected rather than \"{token}\"."
                ))
            });
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
            // parse_nexthops: a `nexthop` with nothing after it.
            return Err(
                ParseError::new("nexthop", "via, dev, weight or onlink", None)
                    .with_system_message("Error: unexpected end of line after \"nexthop\""),
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
                    let token = words.value("dev", "a device name")?;
                    if !values::valid_ifname(token) {
                        // parse_one_nh: `nodev`, then parse_nexthops' own line.
                        return Err(ParseError::new(
                            "dev",
                            "a device name of 1 to 15 bytes without '/' or ':'",
                            Some(token),
                        )
                        .with_system_message(nexthop_device_refusal(token)));
                    }
                    // parse_one_nh looks the device up as it reads it.
                    words.look_up(token, nexthop_device_refusal(token));
                    path.dev = Some(token.to_string());
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

/// The largest MTU metric the kernel keeps (`ip_metrics_convert`).
const IP_MAX_MTU_METRIC: u32 = 65535 - 15;

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
