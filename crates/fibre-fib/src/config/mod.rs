//! The configuration language: `ip -batch` lines without the leading `ip`.
//!
//! ```text
//! # a router with one uplink
//! link add eth0 type veth peer name eth1
//! link set eth0 up
//! addr add 10.0.0.1/24 dev eth0
//! route add default via 10.0.0.2
//! -6 rule add from 2001:db8::/32 lookup 100
//! # a GRE tunnel (gre, ip6gre, gretap, ip6gretap as iproute2 spells them)
//! link add gre1 up type gre remote 198.51.100.2 local 10.0.0.1 key 5 csum
//! route add 10.9.0.0/16 dev gre1
//! ```
//!
//! Each line is one command of `ip link`, `ip addr`, `ip route`,
//! `ip rule` or `ip neigh` (objects and verbs may be abbreviated as iproute2 allows:
//! `ro a`, `ru del`, `a add`, `l set`); `-4`/`-6` at the start of a line
//! sets the family, otherwise the addresses do. A `#` anywhere begins a
//! comment and a `\` at the end of a line continues it, as in `ip -batch`.
//! iproute2's defaults are applied while parsing (see
//! the grammar modules), so a [`Command`] is exactly the request `ip` would
//! send the kernel.
//!
//! Loading is all or nothing: the lines are read, parsed and applied one
//! by one to a clone of the [`Fib`] as they come (within stated limits, see
//! [`load_reader`]), which is kept only when all succeed; as `ip -batch`,
//! the first bad line (a syntax error or a refused command) ends the
//! reading. With `force` (`ip -force -batch`), bad lines are reported and
//! skipped and the rest is applied.

mod addr;
mod error;
mod get;
mod gre;
mod ipproto;
mod lexer;
pub(crate) mod link;
mod load;
mod neigh;
mod replay;
mod route;
mod rule;
mod tunnels;
pub(crate) mod values;
mod words;

#[cfg(test)]
mod tests;

pub use error::{ConfigError, DeviceCheck, Diagnostic, ParseError};
pub use get::{parse_route_get, RouteGetQuery};
pub use lexer::tokenize;
pub use load::{
    address_space, apply_str, load, load_reader, past_memory_limit, MAX_ADDRESS_SPACE,
    MAX_CONFIG_BYTES, MAX_CONFIG_LINES, MAX_DIAGNOSTICS, MAX_LINE_BYTES, MEMORY_CHECK_LINES,
};
pub use neigh::parse_nud_state;

use crate::command::{AddrOp, Command, NeighOp, RouteOp, RuleOp};
use crate::types::Family;
#[allow(unused_imports)] // named in the module documentation
use crate::Fib;
use words::Words;

/// A table name (`local`, `main`, `default`) or number, as `table T` takes it.
///
/// ```
/// assert_eq!(fibre_fib::config::parse_table_id("main"), Some(254));
/// assert_eq!(fibre_fib::config::parse_table_id("0x10"), Some(16));
/// assert_eq!(fibre_fib::config::parse_table_id("foo"), None);
/// ```
pub fn parse_table_id(token: &str) -> Option<crate::types::TableId> {
    values::table_id(token)
}

/// The name iproute2 prints for a dsfield (`rtnl_dsfield_n2a`), from its
/// shipped `rt_dsfield` file: `CS1` for 0x20, `EF` for 0xb8.
///
/// ```
/// assert_eq!(fibre_fib::config::dsfield_name(0x20), Some("CS1"));
/// assert_eq!(fibre_fib::config::dsfield_name(0x10), None);
/// ```
pub fn dsfield_name(tos: u8) -> Option<&'static str> {
    values::DSFIELD_NAMES
        .iter()
        .find(|(value, _)| *value == tos)
        .map(|(_, name)| *name)
}

/// The name `ip` prints for an L4 protocol number (`inet_proto_n2a`).
///
/// ```
/// assert_eq!(fibre_fib::config::ip_protocol_name(17), "udp");
/// assert_eq!(fibre_fib::config::ip_protocol_name(200), "ipproto-200");
/// ```
pub fn ip_protocol_name(number: u8) -> String {
    ipproto::ip_protocol_name(number)
}

/// One command of a configuration and the line it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// 1-based line number.
    pub line: usize,
    /// The request.
    pub command: Command,
}

/// A parsed configuration: the commands of the good lines and a diagnostic
/// for each bad one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Commands in file order.
    pub statements: Vec<Statement>,
    /// Refused lines in file order.
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses a whole configuration; `name` is the file name used in messages.
///
/// ```
/// use fibre_fib::config::parse_str;
/// use fibre_fib::{Command, RouteOp, TABLE_MAIN};
/// let parsed = parse_str("r.conf", "# uplink\nroute add 10.0.0.0/8 dev eth0\nroute add 1.2.3.4/8 dev eth0\n");
/// assert_eq!(parsed.statements.len(), 1);
/// let Command::Route { op: RouteOp::Add, spec } = &parsed.statements[0].command else { panic!() };
/// assert_eq!(spec.table, TABLE_MAIN);
/// assert!(parsed.diagnostics[0].to_string().starts_with("r.conf:3: \"to\": expected a prefix without host bits"));
/// ```
pub fn parse_str(name: &str, text: &str) -> Parsed {
    let mut parsed = Parsed::default();
    for logical in lexer::logical_lines(text) {
        let number = logical.line;
        let result = logical
            .text
            .and_then(|line| tokenize(&line))
            .and_then(|words| parse_words(&words));
        match result {
            Ok(commands) => parsed
                .statements
                .extend(commands.into_iter().map(|command| Statement {
                    line: number,
                    command,
                })),
            Err(err) => parsed.diagnostics.push(Diagnostic {
                file: name.to_string(),
                line: number,
                message: err.to_string(),
            }),
        }
    }
    parsed
}

/// The `-4`/`-6` words in front of a line (ip's `-family` options): the
/// family the last of them names, and the words after them.
///
/// ```
/// use fibre_fib::config::{family_words, tokenize};
/// use fibre_fib::Family;
/// let words = tokenize("-4 -6 route show").unwrap();
/// let (family, rest) = family_words(&words);
/// assert_eq!((family, rest.len()), (Some(Family::V6), 2));
/// ```
pub fn family_words(words: &[String]) -> (Option<Family>, &[String]) {
    let mut family = None;
    let mut rest = words;
    while let Some((first, tail)) = rest.split_first() {
        match first.as_str() {
            "-4" => family = Some(Family::V4),
            "-6" => family = Some(Family::V6),
            _ => break,
        }
        rest = tail;
    }
    (family, rest)
}

/// Parses the words of one line into its commands (none for a blank line;
/// two for `link add ... up`).
///
/// ```
/// use fibre_fib::config::{parse_words, tokenize};
/// use fibre_fib::{Command, Family, RuleOp};
/// let cmds = parse_words(&tokenize("-6 ru a lookup 100").unwrap()).unwrap();
/// let Command::Rule { op: RuleOp::Add, spec } = &cmds[0] else { panic!() };
/// assert_eq!(spec.family, Family::V6);
/// ```
pub fn parse_words(words: &[String]) -> Result<Vec<Command>, ParseError> {
    let (family, rest) = family_words(words);
    let Some((object, rest)) = rest.split_first() else {
        return Ok(Vec::new());
    };
    // `ip` resolves the object before it looks for a verb.
    let object_kind = find_object(object)?;
    let Some((verb, rest)) = rest.split_first() else {
        return Err(ParseError::new(
            object,
            "a command such as add, del, replace or set",
            None,
        ));
    };
    let mut words = Words::new(rest, family);
    let result = parse_object(object_kind, verb, &mut words);
    words.conclude(result)
}

/// The commands of one line of `object_kind` with `verb`, its words in `words`.
fn parse_object(
    object_kind: Object,
    verb: &str,
    words: &mut Words<'_>,
) -> Result<Vec<Command>, ParseError> {
    match object_kind {
        Object::Link => match find(verb, &["add", "set", "change", "delete"]) {
            Some("add") => link::parse_add(words),
            Some("set" | "change") => Ok(vec![link::parse_set(words)?]),
            Some(_) => Ok(vec![link::parse_del(words)?]),
            None => Err(bad_verb("link", "add, set or del", verb)),
        },
        Object::Address => {
            // do_ipaddr: `change` (NLM_F_REPLACE without NLM_F_CREATE) is a
            // replace for the kernel, which creates a missing address anyway
            // (inet_rtm_newaddr, inet6_rtm_newaddr: "userspace already relies
            // on not having to provide this").
            let op = match find(verb, &["add", "change", "replace", "delete"]) {
                Some("add") => AddrOp::Add,
                Some("change" | "replace") => AddrOp::Replace,
                Some(_) => AddrOp::Del,
                None if verb == "chg" => AddrOp::Replace,
                None => return Err(bad_verb("address", "add, change, replace or del", verb)),
            };
            let (spec, wildcard) = addr::parse_addr(words, op)?;
            let op = if op == AddrOp::Del && wildcard {
                AddrOp::DelAnyLength
            } else {
                op
            };
            Ok(vec![Command::Addr { op, spec }])
        }
        Object::Route => {
            let op = match route_verb(verb) {
                Some(op) => op,
                None => {
                    return Err(bad_verb(
                        "route",
                        "add, replace, append, prepend, change or del",
                        verb,
                    ))
                }
            };
            let (spec, looked_up) = route::parse_route(op, words)?;
            // The devices iproute2 looks up that no path of the request
            // takes: each is a lookup before the route.
            let mut commands: Vec<Command> = looked_up
                .into_iter()
                .map(|check| Command::LookUp {
                    name: check.name,
                    refusal: check.refusal,
                })
                .collect();
            commands.push(Command::Route { op, spec });
            Ok(commands)
        }
        Object::Rule => {
            let op = match find(verb, &["add", "delete"]) {
                Some("add") => RuleOp::Add,
                Some(_) => RuleOp::Del,
                None => return Err(bad_verb("rule", "add or del", verb)),
            };
            let spec = rule::parse_rule(op, words)?;
            Ok(vec![Command::Rule { op, spec }])
        }
        Object::Neighbour => {
            // do_ipneigh's verbs in its order.
            let op = match find(verb, &["add", "change", "replace", "delete", "flush"]) {
                Some("add") => NeighOp::Add,
                Some("change") => NeighOp::Change,
                Some("replace") => NeighOp::Replace,
                Some("delete") => NeighOp::Del,
                Some(_) => NeighOp::Flush,
                None if verb == "chg" => NeighOp::Change,
                None => {
                    return Err(bad_verb(
                        "neigh",
                        "add, change, replace, del or flush",
                        verb,
                    ))
                }
            };
            let spec = if op == NeighOp::Flush {
                neigh::parse_flush(words)?
            } else {
                neigh::parse_neigh(words)?
            };
            Ok(vec![Command::Neigh { op, spec }])
        }
    }
}

/// The objects fibre reads.
#[derive(Clone, Copy)]
enum Object {
    Link,
    Address,
    Route,
    Rule,
    Neighbour,
}

/// `ip`'s object table in its own order, so an abbreviation resolves to
/// what `ip` would pick (`a` is address, `r` is route, `ru` is rule).
const IP_OBJECTS: &[(&str, Option<Object>)] = &[
    ("address", Some(Object::Address)),
    ("addrlabel", None),
    ("maddress", None),
    ("route", Some(Object::Route)),
    ("rule", Some(Object::Rule)),
    ("neighbor", Some(Object::Neighbour)),
    ("neighbour", Some(Object::Neighbour)),
    ("ntable", None),
    ("ntbl", None),
    ("link", Some(Object::Link)),
];

fn find_object(word: &str) -> Result<Object, ParseError> {
    let expected = "an object: link, addr, route, rule or neigh";
    let found = IP_OBJECTS
        .iter()
        .find(|(name, _)| !word.is_empty() && name.starts_with(word));
    match found {
        Some((_, Some(object))) => Ok(*object),
        Some((name, None)) => Err(ParseError::new(
            "ip",
            &format!("{expected} (fibre does not model \"{name}\")"),
            Some(word),
        )),
        None => Err(ParseError::new("ip", expected, Some(word))
            .with_system_message(format!("Object \"{word}\" is unknown, try \"ip help\"."))),
    }
}

/// The first of `verbs` that `word` abbreviates (iproute2's `matches()`).
fn find(word: &str, verbs: &[&'static str]) -> Option<&'static str> {
    verbs
        .iter()
        .copied()
        .find(|verb| words::abbreviates(word, verb))
}

/// `ip route`'s verbs in `do_iproute`'s order (`a` is add, `r` replace).
fn route_verb(word: &str) -> Option<RouteOp> {
    if word == "chg" {
        return Some(RouteOp::Change);
    }
    Some(
        match find(
            word,
            &[
                "add", "change", "replace", "prepend", "append", "test", "delete",
            ],
        )? {
            "add" => RouteOp::Add,
            "change" => RouteOp::Change,
            "replace" => RouteOp::Replace,
            "prepend" => RouteOp::Prepend,
            "append" => RouteOp::Append,
            "delete" => RouteOp::Del,
            _ => return None,
        },
    )
}

fn bad_verb(object: &str, expected: &str, word: &str) -> ParseError {
    ParseError::new(object, expected, Some(word)).with_system_message(format!(
        "Command \"{word}\" is unknown, try \"ip {object} help\"."
    ))
}
