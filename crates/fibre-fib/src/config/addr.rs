//! `addr add|replace|del ADDR/LEN ... dev NAME` (iproute2's
//! `ipaddr_modify`). Lifetimes (`valid_lft`, `preferred_lft`) are read and
//! checked as ip checks them, then dropped: a FIB has no clock, so every
//! address is permanent. Flags about DAD and temporary addresses (`nodad`,
//! `home`, `optimistic`, ...) do not apply to a FIB and are read and
//! ignored.

use std::net::{IpAddr, Ipv4Addr};

use super::error::ParseError;
use super::values;
use super::words::{
    duplicate_argument, invalid_argument, keyword_in, unknown_word, Spelling, Words,
};
use crate::command::{AddrOp, AddressSpec};
use crate::types::{Family, Scope};

/// `ifa_flag_data`, the flags iproute2 reads (matched whole): name,
/// read-only (only warned about: `Warning: secondary option is not mutable
/// from userspace`), IPv6 only (warned about on a line not yet of that
/// family). Of those it sets, `noprefixroute` and `autojoin` matter here;
/// the others are about DAD and temporary addresses, which do not apply to
/// a FIB, and are read and ignored.
const ADDR_FLAGS: &[(&str, bool, bool)] = &[
    ("secondary", true, false),
    ("temporary", true, false),
    ("nodad", false, true),
    ("optimistic", false, true),
    ("dadfailed", true, true),
    ("home", false, true),
    ("deprecated", true, true),
    ("tentative", true, true),
    ("permanent", true, true),
    ("mngtmpaddr", false, true),
    ("noprefixroute", false, false),
    ("autojoin", false, false),
    ("stable-privacy", true, true),
];

/// `INFINITY_LIFE_TIME`: a lifetime of `forever`.
const FOREVER: u32 = u32::MAX;

/// The kernel's bound on `IFA_LABEL` (`ifa_ipv4_policy`: IFNAMSIZ - 1).
const LABEL_MAX_BYTES: usize = 15;

/// `ipaddr_modify`'s keywords in the order it tries them, each with whether
/// an abbreviation is taken (`matches`) and the keyword fibre reads it as:
/// `b` is broadcast, `m`/`p`/`pre` metric, `v` valid_lft, `preferr`
/// preferred_lft.
const ADDR_KEYWORDS: &[(&str, Spelling, &str)] = {
    use Spelling::*;
    &[
        ("peer", Exact, "peer"),
        ("remote", Exact, "peer"),
        ("broadcast", Abbreviated, "broadcast"),
        ("brd", Exact, "broadcast"),
        ("anycast", Exact, "anycast"),
        ("scope", Exact, "scope"),
        ("dev", Exact, "dev"),
        ("label", Exact, "label"),
        ("metric", Abbreviated, "metric"),
        ("priority", Abbreviated, "metric"),
        ("preference", Abbreviated, "metric"),
        ("valid_lft", Abbreviated, "valid_lft"),
        ("preferred_lft", Abbreviated, "preferred_lft"),
    ]
};

/// `valid_lft`/`preferred_lft` as `set_lifetime` reads them: `forever` or
/// a `get_u32` number (base 0).
fn lifetime(words: &mut Words<'_>, keyword: &str) -> Result<u32, ParseError> {
    let expected = "forever or a number of seconds from 0 to 4294967295";
    let token = words.value(keyword, expected)?;
    if token == "forever" {
        return Ok(FOREVER);
    }
    values::number_u32(token)
        .ok_or_else(|| invalid_argument(keyword, expected, token, &format!("{keyword} value")))
}

/// How `broadcast` was written.
enum Broadcast {
    Given(Ipv4Addr),
    /// An IPv6 address, which iproute2 sends and the kernel ignores.
    GivenV6,
    /// `brd +`: the subnet's all-ones address.
    AllOnes,
    /// `brd -`: the subnet's network address.
    AllZeros,
}

/// The head of iproute2 6.1's `ip address` usage (ipaddress.c `usage()`),
/// printed for `help` where an address is read.
const ADDR_USAGE: &str = "Usage: ip address {add|change|replace} IFADDR dev IFNAME [ LIFETIME ]\n\
                          \x20                                                     [ CONFFLAG-LIST ]\n\
                          \x20      ip address del IFADDR dev IFNAME [mngtmpaddr]";

/// The address request of the words after the verb `op` (`add`,
/// `replace` or `del`), and whether it is iproute2's wildcard deletion: an IPv4 `addr
/// del` without a length sends no `IFA_ADDRESS`, so the kernel deletes the
/// first address with that local address whatever its length
/// (`inet_rtm_deladdr`).
///
/// The warnings iproute2 prints on the way (a read-only or IPv6-only flag)
/// come before its message in a refusal, as on its standard error.
pub(crate) fn parse_addr(
    words: &mut Words<'_>,
    op: AddrOp,
) -> Result<(AddressSpec, bool), ParseError> {
    let mut warnings = Vec::new();
    parse_addr_warning(words, op, &mut warnings).map_err(|mut err| {
        if !warnings.is_empty() {
            // One line: a message shows no line breaks.
            let mut message = warnings.join(" ");
            if let Some(own) = err.system_message.take() {
                message = format!("{message} {own}");
            }
            err.system_message = Some(message);
        }
        err
    })
}

fn parse_addr_warning(
    words: &mut Words<'_>,
    op: AddrOp,
    warnings: &mut Vec<String>,
) -> Result<(AddressSpec, bool), ParseError> {
    let delete = op == AddrOp::Del;
    let mut local: Option<(IpAddr, Option<u8>)> = None;
    let mut peer: Option<(IpAddr, Option<u8>)> = None;
    let mut broadcast = None;
    let mut scope = None;
    let mut dev = None;
    let mut label = None;
    let mut noprefixroute = false;
    let mut autojoin = false;
    let mut metric = None;
    let mut valid_lft = None;
    let mut preferred_lft = None;
    let mut anycast = false;
    let mut zero_local = false;
    // `peer any|all`: get_prefix reads it as an address of no bytes,
    // which ipaddr_modify still sends as IFA_ADDRESS.
    let mut zero_peer: Option<&str> = None;
    let mut long_label: Option<String> = None;
    let mut default_peer = false;
    let mut mngtmpaddr = false;
    while let Some(word) = words.next() {
        match keyword_in(ADDR_KEYWORDS, word).unwrap_or(word) {
            "peer" => {
                let token = words.value(word, "a peer address")?;
                if peer.is_some() || default_peer {
                    return Err(duplicate_argument("peer", token));
                }
                if token == "default" {
                    // get_addr_1: the zeros of the request's family (the
                    // local address's if it came first, else -4/-6), of
                    // length 0; with no family yet, no bytes.
                    match local.map(|(a, _)| Family::of(&a)).or(words.family) {
                        // inet6_addr_add takes a peer of :: as none
                        // (kernel-checked: `2001:db8:2::7/48 peer default`
                        // is 2001:db8:2::7/48), but a later peer is still
                        // a duplicate to ipaddr_modify.
                        Some(Family::V6) => default_peer = true,
                        Some(family) => peer = Some((family.unspecified(), Some(0))),
                        None => zero_peer = Some(token),
                    }
                    continue;
                }
                if matches!(token, "any" | "all") {
                    // get_addr_1 gives these no bytes (`default` has the
                    // family's): peer_len stays 0, so a later peer is no
                    // duplicate to ipaddr_modify.
                    zero_peer = Some(token);
                    continue;
                }
                peer = Some(words.addr_len_from(word, token)?);
            }
            "broadcast" => {
                let token = words.value(word, "an IPv4 address, + or -")?;
                if broadcast.is_some() {
                    return Err(duplicate_argument("broadcast", token));
                }
                broadcast = Some(match token {
                    "+" => Broadcast::AllOnes,
                    "-" => Broadcast::AllZeros,
                    _ => match words.address_from(word, token)? {
                        IpAddr::V4(a) => Broadcast::Given(a),
                        IpAddr::V6(_) => Broadcast::GivenV6,
                    },
                });
            }
            "scope" => {
                let expected = "a scope: global, site, link, host or a number from 0 to 255";
                let token = words.value("scope", expected)?;
                scope = Some(Scope::from_name(token).ok_or_else(|| {
                    invalid_argument("scope", expected, token, "invalid scope value.")
                })?);
            }
            // Only a name here; ll_name_to_index looks it up after the line.
            "dev" => dev = Some(words.value("dev", "a device name")?),
            "label" => {
                let token = words.value("label", "a label")?;
                // Each `label` is an IFA_LABEL of the request, and the
                // policy checks every one, not only the last.
                if token.len() > LABEL_MAX_BYTES && long_label.is_none() {
                    long_label = Some(token.to_string());
                }
                label = Some(token.to_string());
            }
            "metric" => metric = Some(words.number(word, "metric")?),
            "valid_lft" => {
                if valid_lft.is_some() {
                    return Err(duplicate_argument("valid_lft", word));
                }
                valid_lft = Some(lifetime(words, "valid_lft")?);
            }
            "preferred_lft" => {
                if preferred_lft.is_some() {
                    return Err(duplicate_argument("preferred_lft", word));
                }
                preferred_lft = Some(lifetime(words, "preferred_lft")?);
            }
            "anycast" => {
                // IFA_ANYCAST: read as get_addr reads it, then ignored, as
                // both families' kernels ignore it (neither rtm_to_ifaddr nor
                // inet6_rtm_newaddr looks at it).
                let token = words.value("anycast", "an address")?;
                if anycast {
                    return Err(duplicate_argument("anycast", token));
                }
                words.address_from("anycast", token)?;
                anycast = true;
            }
            flag if ADDR_FLAGS.iter().any(|(name, ..)| *name == flag) => {
                let &(name, read_only, v6_only) = ADDR_FLAGS
                    .iter()
                    .find(|(name, ..)| *name == flag)
                    .expect("found above");
                if read_only {
                    warnings.push(format!(
                        "Warning: {name} option is not mutable from userspace"
                    ));
                } else if v6_only && words.family != Some(Family::V6) {
                    warnings.push(format!(
                        "Warning: {name} option can be set only for IPv6 addresses"
                    ));
                } else if name == "noprefixroute" {
                    noprefixroute = true;
                } else if name == "autojoin" {
                    autojoin = true;
                } else if name == "mngtmpaddr" {
                    mngtmpaddr = true;
                }
            }
            other => {
                // ipaddr_modify's last branch: anything else is the local
                // address (iproute2 6.1 has no `proto` here either).
                let token = if other == "local" {
                    words.value("local", "an address with an optional /LEN")?
                } else {
                    other
                };
                if !token.is_empty() && "help".starts_with(token) {
                    // ipaddr_modify: `matches(*argv, "help")` (a prefix that
                    // is not empty) prints the usage, before the duplicate
                    // check.
                    return Err(unknown_word("addr", "an address, not help", token)
                        .with_system_message(ADDR_USAGE));
                }
                if local.is_some() {
                    return Err(unknown_word(
                        "addr",
                        "one local address, then peer, broadcast, scope, label, metric, dev ...",
                        token,
                    )
                    .with_system_message(format!(
                        "Error: either \"local\" is duplicate, or \"{token}\" is a garbage."
                    )));
                }
                if values::is_default_word(token) {
                    if let (Some(family), "default") = (words.family, token) {
                        // get_addr_1: `default` of a known family is its
                        // all-zero address (and get_prefix_1 its full
                        // length): `-6 addr add default dev lo` is "ipv6:
                        // Invalid address", `-4 addr add default dev lo`
                        // 0.0.0.0, which the kernel drops (kernel-checked).
                        let zero = match family {
                            Family::V4 => IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
                            Family::V6 => IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED),
                        };
                        local = Some((zero, Some(family.bits())));
                        continue;
                    }
                    // get_prefix: no bytes, so a later word is a local again.
                    zero_local = true;
                    continue;
                }
                local = Some(words.addr_len_from("local", token)?);
            }
        }
    }
    if local.is_none() && !zero_local {
        return Err(ParseError::new(
            "addr",
            "an address such as 10.0.0.1/24",
            None,
        ));
    }
    let Some(dev) = dev else {
        return Err(ParseError::new("addr", "dev NAME", None)
            .with_system_message("Not enough information: \"dev\" argument is required."));
    };
    // ipaddr_modify, in its order: `brd +|-` (not for a deletion), the
    // device (ll_name_to_index), the lifetimes, autojoin.
    let family = local.map(|(addr, _)| Family::of(&addr)).or(words.family);
    if let Some(rule @ (Broadcast::AllOnes | Broadcast::AllZeros)) = &broadcast {
        if !delete && family != Some(Family::V4) {
            let token = if matches!(rule, Broadcast::AllOnes) {
                "+"
            } else {
                "-"
            };
            return Err(v6_broadcast("broadcast", token));
        }
    }
    // A name no device can have is not found; one that could be is the
    // FIB's to find.
    if !values::valid_ifname(dev) {
        return Err(ParseError::new("dev", "a device name", Some(dev))
            .with_system_message(format!("Cannot find device \"{dev}\"")));
    }
    words.look_up(dev, format!("Cannot find device \"{dev}\""));
    let dev = dev.to_string();
    if valid_lft.is_some() || preferred_lft.is_some() {
        let valid = valid_lft.unwrap_or(FOREVER);
        let preferred = preferred_lft.unwrap_or(FOREVER);
        if valid == 0 {
            return Err(
                ParseError::new("valid_lft", "a lifetime above 0", Some("0"))
                    .with_system_message("valid_lft is zero"),
            );
        }
        if valid < preferred {
            return Err(ParseError::new(
                "preferred_lft",
                &format!("a preferred lifetime of at most the valid one ({valid})"),
                Some(&preferred.to_string()),
            )
            .with_system_message("preferred_lft is greater than valid_lft"));
        }
    }
    let multicast = local.is_some_and(|(addr, _)| addr.is_multicast());
    if autojoin && !multicast {
        return Err(ParseError::new(
            "autojoin",
            "a multicast local address",
            local.map(|(addr, _)| addr.to_string()).as_deref(),
        )
        .with_system_message("autojoin needs multicast address"));
    }
    let Some((local_addr, local_len)) = local else {
        // get_prefix read default/any/all as a local address of no bytes:
        // without a family no kernel handler takes the request, with one
        // its policy refuses the empty IFA_LOCAL.
        let refusal = ParseError::new("local", "an address such as 10.0.0.1/24", Some("default"));
        return Err(match family {
            None => refusal.with_system_message("RTNETLINK answers: Operation not supported"),
            Some(_) => refusal.with_system_message("Error: Attribute failed policy validation."),
        });
    };
    if zero_local {
        // A `default` (no bytes) before the address sent an empty
        // IFA_LOCAL too, which the policy refuses whatever follows
        // (kernel-checked: `addr add local default 0 dev fd0`).
        return Err(
            ParseError::new("local", "one local address", Some("default"))
                .with_system_message("Error: Attribute failed policy validation."),
        );
    }
    if let Some(token) = zero_peer {
        // ifa_ipv4_policy (IFA_ADDRESS is a u32) and ifa_ipv6_policy (16
        // bytes at least) refuse the empty IFA_ADDRESS before the request
        // is read (validate_nla).
        return Err(ParseError::new(
            "peer",
            "a peer address of the local one's family",
            Some(token),
        )
        .with_system_message("Error: Attribute failed policy validation."));
    }
    let bits = Family::of(&local_addr).bits();
    // ipaddr_modify: a peer sets the length (its own, or the full one),
    // and a length still 0 is the local address' (or the full one).
    let prefix_len = match peer.map(|(_, len)| len.unwrap_or(bits)) {
        Some(len) if len != 0 => len,
        _ => local_len.unwrap_or(bits),
    };
    let family = Family::of(&local_addr);
    let broadcast = match broadcast {
        None | Some(Broadcast::GivenV6) => None,
        Some(Broadcast::AllOnes | Broadcast::AllZeros) if delete => None,
        Some(Broadcast::Given(a)) => Some(a),
        Some(rule) => {
            // ipaddr_modify computes `brd +|-` from the peer as written
            // (the local address when there is none), at the peer's own
            // length: `remote 0.0.0.0/0 brd -` is broadcast 0.0.0.0, which
            // makes no route (kernel-checked).
            let (base, len) = match peer {
                Some((addr, len)) => (addr, len.unwrap_or(bits)),
                None => (local_addr, local_len.unwrap_or(bits)),
            };
            subnet_broadcast(base, len, matches!(rule, Broadcast::AllOnes))
        }
    };
    // The kernel's checks, after all of iproute2's.
    if let Some(label) = &long_label {
        if family == Family::V4 {
            // IPv6 has no IFA_LABEL in its policy and ignores it.
            return Err(ParseError::new(
                "label",
                &format!("a label of at most {LABEL_MAX_BYTES} bytes"),
                Some(label),
            )
            .with_system_message("Error: Attribute failed policy validation."));
        }
    }
    // inet6_addr_add checks mngtmpaddr's /64 (in the writer) before
    // ipv6_add_addr refuses a multicast address (kernel-checked: `addr
    // replace ff00::/8 mngtmpaddr dev lo` is the length's refusal).
    let length_refused_first = mngtmpaddr && prefix_len != 64;
    if family == Family::V6 && local_addr.is_multicast() && !delete && !length_refused_first {
        // inet6_addr_add refuses a multicast address without autojoin;
        // with it the kernel joins the group, which fibre does not model.
        let refusal = ParseError::new(
            "local",
            "a unicast address (fibre does not model multicast addresses)",
            Some(&local_addr.to_string()),
        );
        return Err(if autojoin {
            refusal
        } else {
            refusal.with_system_message(
                "Error: ipv6: Cannot assign multicast address without \"IFA_F_MCAUTOJOIN\" flag.",
            )
        });
    }
    let wildcard = local_len.is_none() && peer.is_none() && family == Family::V4;
    let spec = AddressSpec {
        dev,
        local: local_addr,
        prefix_len,
        peer: peer.map(|(a, _)| a),
        broadcast,
        scope,
        noprefixroute,
        metric,
        label,
        // Checked by the writer, which knows whether the address is held
        // (inet6_addr_add checks the length asked, inet6_addr_modify the
        // length held).
        mngtmpaddr: mngtmpaddr && !delete,
    };
    Ok((spec, wildcard))
}

/// `brd +`/`brd -`: iproute2 fills it only for prefixes of /30 or shorter.
fn subnet_broadcast(local: IpAddr, prefix_len: u8, all_ones: bool) -> Option<Ipv4Addr> {
    let IpAddr::V4(local) = local else {
        return None;
    };
    if prefix_len > 30 {
        return None;
    }
    let host_mask = u32::MAX >> prefix_len;
    let network = u32::from(local) & !host_mask;
    Some(Ipv4Addr::from(if all_ones {
        network | host_mask
    } else {
        network
    }))
}

fn v6_broadcast(keyword: &str, token: &str) -> ParseError {
    ParseError::new(keyword, "no broadcast for an IPv6 address", Some(token))
        .with_system_message("Broadcast can be set only for IPv4 addresses")
}
