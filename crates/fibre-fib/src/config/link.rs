//! `link add|set|del ...` (iproute2's `iplink_modify`), restricted to the
//! device kinds fibre models: dummy, ifb, veth and the GRE tunnels (gre,
//! ip6gre, gretap, ip6gretap; their options in [`super::gre`]).

use super::error::ParseError;
use super::gre::parse_gre;
use super::words::{
    duplicate_argument, invalid_argument, link_name, unknown_word, NameUse, Words, INCOMPLETE,
};
use crate::command::Command;
use crate::types::LinkKind;
use crate::write::gre::GreKind;

/// `link add [name|dev] NAME [mtu N] [up|down] type KIND [OPTIONS]`, KIND
/// being `dummy`, `ifb`, `veth peer [name] P` or `gre|ip6gre|gretap|
/// ip6gretap remote ADDR ...`. As in iproute2, everything after the kind
/// is the kind's, so `mtu`, `up` and `down` go before `type`.
///
/// A trailing `up`/`down` becomes a second command, `link set NAME up`.
pub(crate) fn parse_add(words: &mut Words<'_>) -> Result<Vec<Command>, ParseError> {
    let mut name: Option<String> = None;
    let mut mtu = None;
    let mut up = None;
    let mut kind = None;
    while let Some(word) = words.next() {
        match word {
            "mtu" => mtu = Some(mtu_value(words, mtu)?),
            "up" => up = Some(true),
            "down" => up = Some(false),
            "type" => {
                kind = Some(kind_value(words)?);
                break;
            }
            other => {
                let token = if other == "name" || other == "dev" {
                    words.link_name(other, NameUse::Create)?
                } else if name.is_none() {
                    link_name("dev", other, NameUse::Create)?
                } else {
                    return Err(garbage(other));
                };
                if name.is_some() {
                    return Err(garbage(token));
                }
                name = Some(token.to_string());
            }
        }
    }
    let Some(name) = name else {
        return Err(ParseError::new("link add", "a device name", None)
            .with_system_message("Not enough information: \"dev\" argument is required."));
    };
    let Some(kind) = kind else {
        return Err(ParseError::new("link add", &format!("type {KINDS}"), None)
            .with_system_message("Not enough information: \"type\" argument is required"));
    };
    if let Some(word) = words.next() {
        return Err(unknown_word(
            "type",
            "the end of the line after the device type",
            word,
        ));
    }
    let mut commands = vec![Command::LinkAdd {
        name: name.clone(),
        kind,
        mtu,
    }];
    if up.is_some() {
        commands.push(Command::LinkSet {
            name,
            up,
            mtu: None,
        });
    }
    Ok(commands)
}

/// The kinds `link add` takes.
const KINDS: &str = "dummy, ifb, veth, gre, ip6gre, gretap or ip6gretap";

/// `dummy`, `ifb`, `veth [peer [name] P]` or a GRE kind and its options.
fn kind_value(words: &mut Words<'_>) -> Result<LinkKind, ParseError> {
    let expected = format!("a device type: {KINDS}");
    let token = words.value("type", &expected)?;
    if let Some(kind) = GreKind::from_name(token) {
        return Ok(LinkKind::Gre(parse_gre(kind, words)?));
    }
    match token {
        "dummy" => Ok(LinkKind::Dummy),
        "ifb" => Ok(LinkKind::Ifb),
        "veth" => {
            match words.next() {
                Some("peer") => {}
                Some(other) => return Err(unknown_word("veth", "\"peer name NAME\"", other)),
                None => {
                    return Err(ParseError::new(
                        "veth",
                        "\"peer name NAME\" (fibre does not invent peer names)",
                        None,
                    ))
                }
            }
            let peer = match words.peek() {
                Some("name") | Some("dev") => {
                    let keyword = words.next().unwrap_or("name");
                    words.link_name(keyword, NameUse::Create)?
                }
                _ => words.link_name("peer", NameUse::Create)?,
            };
            Ok(LinkKind::Veth {
                peer: peer.to_string(),
            })
        }
        other => Err(ParseError::new("type", &expected, Some(other))
            .with_system_message("Error: Unknown device type.")),
    }
}

/// `link set [dev] NAME { up | down | mtu N }...`.
pub(crate) fn parse_set(words: &mut Words<'_>) -> Result<Command, ParseError> {
    let name = device_name(words, "link set")?;
    let mut up = None;
    let mut mtu = None;
    let mut changed = false;
    while let Some(word) = words.next() {
        match word {
            "up" => up = Some(true),
            "down" => up = Some(false),
            "mtu" => mtu = Some(mtu_value(words, mtu)?),
            other => return Err(garbage(other)),
        }
        changed = true;
    }
    if !changed {
        return Err(
            ParseError::new(&name, "up, down or mtu N", None).with_system_message(INCOMPLETE)
        );
    }
    Ok(Command::LinkSet { name, up, mtu })
}

/// `link del [dev] NAME`.
pub(crate) fn parse_del(words: &mut Words<'_>) -> Result<Command, ParseError> {
    let name = device_name(words, "link del")?;
    if let Some(word) = words.next() {
        return Err(garbage(word));
    }
    Ok(Command::LinkDel { name })
}

fn device_name(words: &mut Words<'_>, command: &str) -> Result<String, ParseError> {
    match words.peek() {
        Some("dev") | Some("name") => {
            let keyword = words.next().unwrap_or("dev");
            Ok(words.link_name(keyword, NameUse::Find)?.to_string())
        }
        Some(_) => Ok(words.link_name(command, NameUse::Find)?.to_string()),
        None => Err(ParseError::new(command, "a device name", None)
            .with_system_message("Not enough information: \"dev\" argument is required.")),
    }
}

/// `mtu N`, read as `iplink_parse` reads it (`get_integer`, base 0); a
/// negative number goes to the kernel as the u32 it is on the wire
/// (where `dev_validate_mtu` reads it back as a negative int), and a
/// second `mtu` is refused (`duparg`).
fn mtu_value(words: &mut Words<'_>, mtu: Option<u32>) -> Result<u32, ParseError> {
    let expected = "an MTU from -2147483648 to 2147483647";
    let token = words.value("mtu", expected)?;
    if mtu.is_some() {
        return Err(duplicate_argument("mtu", token));
    }
    super::values::number_i32(token)
        .map(|value| value as u32)
        .ok_or_else(|| invalid_argument("mtu", expected, token, "Invalid \"mtu\" value"))
}

fn garbage(token: &str) -> ParseError {
    unknown_word("link", "up, down, mtu N, type T or a device name", token).with_system_message(
        format!("Error: either \"dev\" is duplicate, or \"{token}\" is a garbage."),
    )
}
