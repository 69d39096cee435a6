//! `addr add|replace|del ADDR/LEN ... dev NAME` (iproute2's
//! `ipaddr_modify`). Keywords about IPv6 address lifetimes and DAD
//! (`nodad`, `valid_lft`, `preferred_lft`, `home`, `optimistic`, ...) do not
//! apply to a FIB and are read and ignored.

use std::net::{IpAddr, Ipv4Addr};

use super::error::ParseError;
use super::words::{invalid_argument, unknown_word, Words};
use crate::command::AddressSpec;
use crate::types::{Family, Scope};

/// Flags iproute2 accepts that change nothing here.
const IGNORED_FLAGS: &[&str] = &["nodad", "home", "optimistic", "mngtmpaddr", "autojoin"];
/// Keywords with one argument that change nothing here.
const IGNORED_WITH_VALUE: &[&str] = &["valid_lft", "preferred_lft"];

/// How `broadcast` was written.
enum Broadcast {
    Given(Ipv4Addr),
    /// `brd +`: the subnet's all-ones address.
    AllOnes,
    /// `brd -`: the subnet's network address.
    AllZeros,
}

/// The address request of the words after the verb.
pub(crate) fn parse_addr(words: &mut Words<'_>) -> Result<AddressSpec, ParseError> {
    let mut local: Option<(IpAddr, Option<u8>)> = None;
    let mut peer: Option<(IpAddr, Option<u8>)> = None;
    let mut broadcast = None;
    let mut scope = None;
    let mut dev = None;
    let mut label = None;
    let mut noprefixroute = false;
    let mut metric = None;
    while let Some(word) = words.next() {
        match word {
            "peer" | "remote" => {
                let token = words.value(word, "a peer address")?;
                peer = Some(words.addr_len_from(word, token)?);
            }
            "broadcast" | "brd" => {
                let token = words.value(word, "an IPv4 address, + or -")?;
                broadcast = Some(match token {
                    "+" => Broadcast::AllOnes,
                    "-" => Broadcast::AllZeros,
                    _ => match words.address_from(word, token)? {
                        IpAddr::V4(a) => Broadcast::Given(a),
                        IpAddr::V6(_) => return Err(v6_broadcast(word, token)),
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
            "dev" => dev = Some(words.device("dev")?.to_string()),
            "label" => {
                let token = words.value("label", "a label")?;
                label = Some(token.to_string());
            }
            "noprefixroute" => noprefixroute = true,
            "metric" | "priority" | "preference" => metric = Some(words.number(word, "metric")?),
            w if IGNORED_FLAGS.contains(&w) => {}
            w if IGNORED_WITH_VALUE.contains(&w) => {
                words.value(w, "a lifetime")?;
            }
            "anycast" | "proto" | "protocol" => {
                return Err(unknown_word(
                    "addr",
                    "a keyword fibre supports (it does not model this one)",
                    word,
                ))
            }
            other => {
                let token = if other == "local" {
                    words.value("local", "an address with an optional /LEN")?
                } else {
                    other
                };
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
                local = Some(words.addr_len_from("local", token)?);
            }
        }
    }
    let Some((local_addr, local_len)) = local else {
        return Err(ParseError::new(
            "addr",
            "an address such as 10.0.0.1/24",
            None,
        ));
    };
    let Some(dev) = dev else {
        return Err(ParseError::new("addr", "dev NAME", None)
            .with_system_message("Not enough information: \"dev\" argument is required."));
    };
    let bits = Family::of(&local_addr).bits();
    let prefix_len = peer.and_then(|(_, len)| len).or(local_len).unwrap_or(bits);
    let broadcast = match broadcast {
        None => None,
        Some(_) if Family::of(&local_addr) == Family::V6 => {
            return Err(v6_broadcast("broadcast", &local_addr.to_string()))
        }
        Some(Broadcast::Given(a)) => Some(a),
        Some(rule) => subnet_broadcast(local_addr, prefix_len, matches!(rule, Broadcast::AllOnes)),
    };
    Ok(AddressSpec {
        dev,
        local: local_addr,
        prefix_len,
        peer: peer.map(|(a, _)| a),
        broadcast,
        scope,
        noprefixroute,
        metric,
        label,
    })
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
