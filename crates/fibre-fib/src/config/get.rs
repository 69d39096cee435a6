//! The words after `ip route get` (iproute2's `iproute_get`):
//! `[to] ADDR [from SRC] [iif DEV] [oif DEV] [mark N] [tos T|dsfield T]
//! [ipproto P] [sport N] [dport N] [fibmatch] [uid N]`.

use super::error::ParseError;
use super::values;
use super::words::{invalid_argument, Words};
use crate::command::RouteGetRequest;
use crate::types::Family;

/// A `route get` query: the request, and the `uid` the kernel echoes in
/// its answer (the one asked for, else the caller's: root's 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteGetQuery {
    /// What the FIB is asked.
    pub request: RouteGetRequest,
    /// `uid N`, 0 when not given (the request has it as given).
    pub uid: u32,
}

/// Reads the words after `route get`; `family` is `-4`/`-6` when given.
///
/// ```
/// use fibre_fib::config::parse_route_get;
/// let words: Vec<String> = "10.1.0.5 from 10.0.0.1 mark 0x10".split(' ').map(String::from).collect();
/// let query = parse_route_get(&words, None).unwrap();
/// assert_eq!(query.request.dst.to_string(), "10.1.0.5");
/// assert_eq!(query.request.mark, 16);
/// ```
pub fn parse_route_get(
    words: &[String],
    family: Option<Family>,
) -> Result<RouteGetQuery, ParseError> {
    let mut words = Words::new(words, family);
    let mut dst = None;
    let mut from = None;
    let mut request_iif = None;
    let mut request_oif = None;
    let mut mark = 0;
    let mut tos = 0;
    let mut ipproto = None;
    let mut sport = None;
    let mut dport = None;
    let mut fibmatch = false;
    let mut uid = None;
    while let Some(word) = words.next() {
        match word {
            "from" => {
                let token = words.value("from", "a source address")?;
                from = Some(host_address(&mut words, "from", token)?);
            }
            "iif" => request_iif = Some(words.ifname("iif")?.to_string()),
            "oif" | "dev" => request_oif = Some(words.ifname(word)?.to_string()),
            "mark" => {
                let expected = "a mark from 0 to 0xffffffff";
                let token = words.value("mark", expected)?;
                mark = values::number_u32(token).ok_or_else(|| {
                    invalid_argument("mark", expected, token, "invalid mark value")
                })?;
            }
            "tos" | "dsfield" => {
                let expected = "a TOS byte in hexadecimal (00 to ff)";
                let token = words.value(word, expected)?;
                tos = values::dsfield(token).ok_or_else(|| {
                    invalid_argument(word, expected, token, "TOS value is invalid")
                })?;
            }
            "ipproto" => {
                let expected = "a protocol: tcp, udp, icmp, ... or a number from 0 to 255";
                let token = words.value("ipproto", expected)?;
                ipproto = Some(super::ipproto::ip_protocol(token).ok_or_else(|| {
                    invalid_argument("ipproto", expected, token, "Invalid \"ipproto\" value")
                })?);
            }
            "sport" | "dport" => {
                let expected = "a port from 0 to 65535";
                let token = words.value(word, expected)?;
                let port = values::number_u32(token)
                    .and_then(|n| u16::try_from(n).ok())
                    .ok_or_else(|| {
                        invalid_argument(word, expected, token, &format!("invalid {word}"))
                    })?;
                if word == "sport" {
                    sport = Some(port);
                } else {
                    dport = Some(port);
                }
            }
            "fibmatch" => fibmatch = true,
            "uid" => {
                let expected = "a uid from 0 to 4294967295";
                let token = words.value("uid", expected)?;
                uid = Some(
                    values::number_u32(token)
                        .ok_or_else(|| invalid_argument("uid", expected, token, "invalid UID"))?,
                );
            }
            "vrf" | "as" | "connected" => {
                return Err(ParseError::new(
                    "route get",
                    "a keyword fibre supports (it does not model this one)",
                    Some(word),
                ))
            }
            other => {
                let token = if other == "to" {
                    words.value("to", "a destination address")?
                } else {
                    other
                };
                if dst.is_some() {
                    return Err(ParseError::new(
                        "route get",
                        "one destination address, then from, iif, oif, mark, tos, ipproto, \
                         sport, dport, fibmatch or uid",
                        Some(token),
                    )
                    .with_system_message(format!(
                        "Error: either \"to\" is duplicate, or \"{token}\" is a garbage."
                    )));
                }
                dst = Some(host_address(&mut words, "to", token)?);
            }
        }
    }
    let Some(dst) = dst else {
        return Err(ParseError::new("route get", "a destination address", None)
            .with_system_message("need at least a destination address"));
    };
    Ok(RouteGetQuery {
        request: RouteGetRequest {
            dst,
            src: from,
            iif: request_iif,
            oif: request_oif,
            mark,
            tos,
            ipproto,
            sport,
            dport,
            fibmatch,
            uid,
        },
        uid: uid.unwrap_or(0),
    })
}

/// An address, or a prefix of full length (`10.0.0.1/32`), of the query's family.
fn host_address(
    words: &mut Words<'_>,
    keyword: &str,
    token: &str,
) -> Result<std::net::IpAddr, ParseError> {
    let (addr, len) = words.addr_len_from(keyword, token)?;
    match len {
        Some(len) if len != Family::of(&addr).bits() => Err(ParseError::new(
            keyword,
            "an address (a prefix length other than /32 or /128 is not supported)",
            Some(token),
        )
        .with_system_message(format!(
            "Warning: /{len} as prefix is invalid, only /{} (or none) is supported.",
            Family::of(&addr).bits()
        ))),
        _ => Ok(addr),
    }
}
