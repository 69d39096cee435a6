//! `link add|set|del ...` (iproute2's `iplink_modify`), restricted to the
//! device kinds fibre models: dummy, ifb, veth and the GRE tunnels (gre,
//! ip6gre, gretap, ip6gretap; their options in [`super::gre`]).
//!
//! All three verbs read their words as `iplink_parse` does, in its order:
//! its keywords (abbreviated where it uses `matches`), then anything else as
//! the device name, a second one refused with `duparg2`. Only after the whole
//! line does it look the device up (`ll_name_to_index`), so a garbage word
//! is reported before a missing device; and everything after `type KIND`
//! is the kind's (`iplink_modify` hands it to the kind's `parse_opt`).

use super::error::ParseError;
use super::gre::parse_gre;
use super::values;
use super::words::{
    abbreviates, duplicate_argument, invalid_argument, keyword_in, link_name, unknown_word,
    NameUse, Spelling, Words,
};
use crate::command::Command;
use crate::types::{LinkKind, ETH_MAX_MTU, ETH_MIN_MTU};
use crate::write::gre::GreKind;

/// How `iplink_parse` takes one of its words.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LinkWord {
    Up,
    Down,
    Name,
    Mtu,
    Type,
    /// `help`: iproute2 prints its usage.
    Help,
    /// A keyword fibre does not model whose argument `get_integer` reads:
    /// a bad one is refused as `Invalid "KEYWORD" value`.
    Integer(&'static str),
    /// A flag fibre does not model, set with `on` or `off` (`on_off`).
    OnOff(&'static str),
    /// A keyword fibre does not model whose argument `parse_on_off` reads.
    OffOn(&'static str),
    /// A keyword fibre does not model, with an argument.
    Unmodelled(&'static str),
    /// `master DEV`: fibre models no device that takes slaves.
    Master,
    /// `nomaster`: no master, which no fibre device has anyway.
    NoMaster,
    /// `vrf NAME`: fibre has no VRF devices.
    Vrf,
    /// Anything else: the device (`dev NAME` or a bare name).
    Dev,
}

/// `iplink_parse`'s keywords in the order it tries them, each with whether
/// an abbreviation is taken (`matches`): `t` is txqueuelen, `d` dynamic,
/// `m` master, `l` link, `a` address, `ty` type.
const LINK_WORDS: &[(&str, Spelling, LinkWord)] = {
    use LinkWord::*;
    use Spelling::*;
    &[
        ("up", Exact, Up),
        ("down", Exact, Down),
        ("name", Exact, Name),
        ("index", Exact, Unmodelled("index")),
        ("link", Abbreviated, Unmodelled("link")),
        ("address", Abbreviated, Unmodelled("address")),
        ("broadcast", Abbreviated, Unmodelled("broadcast")),
        ("brd", Exact, Unmodelled("broadcast")),
        ("txqueuelen", Abbreviated, Integer("txqueuelen")),
        ("qlen", Exact, Integer("txqueuelen")),
        ("txqlen", Abbreviated, Integer("txqueuelen")),
        ("mtu", Exact, Mtu),
        ("xdpgeneric", Exact, Unmodelled("xdpgeneric")),
        ("xdpdrv", Exact, Unmodelled("xdpdrv")),
        ("xdpoffload", Exact, Unmodelled("xdpoffload")),
        ("xdp", Exact, Unmodelled("xdp")),
        ("netns", Exact, Unmodelled("netns")),
        ("multicast", Exact, OnOff("multicast")),
        ("allmulticast", Exact, OnOff("allmulticast")),
        ("promisc", Exact, OnOff("promisc")),
        ("trailers", Exact, OnOff("trailers")),
        ("arp", Exact, OnOff("arp")),
        ("carrier", Exact, OffOn("carrier")),
        ("vf", Exact, Unmodelled("vf")),
        ("master", Abbreviated, Master),
        ("vrf", Exact, Vrf),
        ("nomaster", Abbreviated, NoMaster),
        ("dynamic", Abbreviated, OnOff("dynamic")),
        ("type", Abbreviated, Type),
        ("alias", Abbreviated, Unmodelled("alias")),
        ("group", Exact, Unmodelled("group")),
        ("mode", Exact, Unmodelled("mode")),
        ("state", Exact, Unmodelled("state")),
        ("numtxqueues", Abbreviated, Integer("numtxqueues")),
        ("numrxqueues", Abbreviated, Integer("numrxqueues")),
        ("addrgenmode", Abbreviated, Unmodelled("addrgenmode")),
        ("link-netns", Abbreviated, Unmodelled("link-netns")),
        ("link-netnsid", Abbreviated, Integer("link-netnsid")),
        ("protodown", Exact, OffOn("protodown")),
        ("protodown_reason", Exact, Unmodelled("protodown_reason")),
        ("gso_max_size", Exact, Unmodelled("gso_max_size")),
        ("gso_max_segs", Exact, Unmodelled("gso_max_segs")),
        ("gro_max_size", Exact, Unmodelled("gro_max_size")),
        ("parentdev", Exact, Unmodelled("parentdev")),
        // In iplink_parse's last branch, before the word is taken as the device.
        ("help", Abbreviated, Help),
    ]
};

fn link_word(word: &str) -> LinkWord {
    keyword_in(LINK_WORDS, word).unwrap_or(LinkWord::Dev)
}

/// Where the device name of a line came from: `iplink_parse` keeps `dev`
/// pointing at `name` until a `dev NAME` or bare name replaces it, and only
/// a second such word is a duplicate.
#[derive(Clone, Copy)]
enum DevWord<'a> {
    None,
    FromName,
    Given { keyword: &'a str, token: &'a str },
}

/// What `iplink_parse` read of a line, up to and including `type KIND`.
struct LinkArgs<'a> {
    /// `name NAME`.
    name: Option<&'a str>,
    dev: DevWord<'a>,
    up: Option<bool>,
    mtu: Option<u32>,
    /// The word after `type`; the kind's own words are left unread.
    kind: Option<&'a str>,
    /// `master DEV`.
    master: Option<&'a str>,
}

impl<'a> LinkArgs<'a> {
    /// The device the line names, with the keyword it came with.
    fn device(&self) -> Option<(&'a str, &'a str)> {
        match self.dev {
            DevWord::None => None,
            DevWord::FromName => self.name.map(|name| ("name", name)),
            DevWord::Given { keyword, token } => Some((keyword, token)),
        }
    }
}

/// Reads the words of a `link` command as `iplink_parse` does, stopping
/// after `type KIND`. Its own refusals come here, word by word; the
/// device's existence is the caller's to check afterwards.
fn parse_link_args<'a>(words: &mut Words<'a>) -> Result<LinkArgs<'a>, ParseError> {
    let mut args = LinkArgs {
        name: None,
        dev: DevWord::None,
        up: None,
        mtu: None,
        kind: None,
        master: None,
    };
    while let Some(word) = words.next() {
        match link_word(word) {
            LinkWord::Up => args.up = Some(true),
            LinkWord::Down => args.up = Some(false),
            LinkWord::Name => {
                let token = words.value("name", IFNAME_WANTED)?;
                if args.name.is_some() {
                    return Err(duplicate_argument("name", token));
                }
                // check_ifname: under IFNAMSIZ as well.
                link_name("name", token, NameUse::Syntax)?;
                args.name = Some(token);
                if matches!(args.dev, DevWord::None) {
                    args.dev = DevWord::FromName;
                }
            }
            LinkWord::Mtu => args.mtu = Some(mtu_value(words, args.mtu)?),
            LinkWord::Type => {
                args.kind = Some(words.value("type", &format!("a device type: {KINDS}"))?);
                break;
            }
            LinkWord::Help => {
                return Err(unknown_word(
                    "link",
                    "a link command (fibre prints no usage text)",
                    word,
                ))
            }
            LinkWord::Integer(keyword) => {
                let token = words.value(keyword, "a number")?;
                if values::number_i32(token).is_none() {
                    return Err(invalid_argument(
                        keyword,
                        "a number",
                        token,
                        &format!("Invalid \"{keyword}\" value"),
                    ));
                }
                return Err(unmodelled(keyword, word));
            }
            LinkWord::OnOff(keyword) => {
                let token = words.value(keyword, "on or off")?;
                if token != "on" && token != "off" {
                    return Err(ParseError::new(keyword, "on or off", Some(token))
                        .with_system_message(format!(
                            "Error: argument of \"{keyword}\" must be \"on\" or \"off\", not \"{token}\""
                        )));
                }
                return Err(unmodelled(keyword, word));
            }
            LinkWord::OffOn(keyword) => {
                let token = words.value(keyword, "on or off")?;
                // parse_on_off: parse_one_of with "off", "on", by matches().
                if !abbreviates(token, "off") && !abbreviates(token, "on") {
                    return Err(ParseError::new(keyword, "on or off", Some(token))
                        .with_system_message(format!(
                            "Error: argument of \"{keyword}\" must be one of \"off\", \"on\", not \"{token}\""
                        )));
                }
                return Err(unmodelled(keyword, word));
            }
            LinkWord::Unmodelled(keyword) => {
                words.value(keyword, "its argument")?;
                return Err(unmodelled(keyword, word));
            }
            LinkWord::Master => {
                let token = words.value("master", "an existing device")?;
                // iplink_parse looks the master up as it reads it.
                words.look_up(
                    token,
                    invalid_argument(
                        "master",
                        "an existing device",
                        token,
                        "Device does not exist",
                    )
                    .to_string(),
                );
                args.master = Some(token);
            }
            // IFLA_MASTER 0: do_set_master leaves a device without a master be.
            LinkWord::NoMaster => {}
            LinkWord::Vrf => {
                // name_is_vrf: fibre has no VRF devices, so no name is one.
                let token = words.value("vrf", "the name of a VRF device")?;
                return Err(invalid_argument(
                    "vrf",
                    "the name of a VRF device (fibre has none)",
                    token,
                    "Not a valid VRF name",
                ));
            }
            LinkWord::Dev => {
                let (keyword, token) = if word == "dev" {
                    ("dev", words.value("dev", IFNAME_WANTED)?)
                } else {
                    ("link", word)
                };
                if matches!(args.dev, DevWord::Given { .. }) {
                    return Err(garbage(token));
                }
                // check_altifname: not empty, no '/' or blank.
                link_name("dev", token, NameUse::Syntax).map_err(|err| ParseError {
                    keyword: keyword.to_string(),
                    ..err
                })?;
                args.dev = DevWord::Given { keyword, token };
            }
        }
    }
    Ok(args)
}

/// `link add [name|dev] NAME [mtu N] [up|down] type KIND [OPTIONS]`, KIND
/// being `dummy`, `ifb`, `veth peer [name] P` or `gre|ip6gre|gretap|
/// ip6gretap remote ADDR ...`. As in iproute2, everything after the kind
/// is the kind's, so `mtu`, `up` and `down` go before `type`; dummy and ifb
/// have no options, and iproute2 drops whatever follows them.
///
/// An `up`/`down` becomes a second command, `link set NAME up`.
pub(crate) fn parse_add(words: &mut Words<'_>) -> Result<Vec<Command>, ParseError> {
    let args = parse_link_args(words)?;
    // iplink_parse: a `name` and a different `dev` cannot both name the new link.
    if let (Some(name), DevWord::Given { token, .. }) = (args.name, args.dev) {
        if name != token {
            return Err(
                ParseError::new("name", "one name for the new link", Some(token))
                    .with_system_message(
                        "both \"name\" and \"dev\" cannot be used when creating devices.",
                    ),
            );
        }
    }
    let Some((keyword, name)) = args.device() else {
        return Err(ParseError::new("link add", "a device name", None)
            .with_system_message("Not enough information: \"dev\" argument is required."));
    };
    let Some(kind_word) = args.kind else {
        return Err(ParseError::new("link add", &format!("type {KINDS}"), None)
            .with_system_message("Not enough information: \"type\" argument is required"));
    };
    if GreKind::from_name(kind_word).is_none()
        && !matches!(kind_word, "dummy" | "ifb" | "veth" | "vxlan")
        && words.peek().is_none()
    {
        // A kind the kernel has no rtnl_link_ops for: rtnl_newlink's
        // IFLA_IFNAME policy (16 bytes or more) comes first (kernel-checked:
        // `link add abcdefghijklmnop type dum` is "Attribute failed policy
        // validation"), then __rtnl_newlink refuses an existing name
        // (EEXIST) before the kind.
        if let Some(refusal) = name_policy(name) {
            return Err(refusal);
        }
        words.refuse_existing(name, "RTNETLINK answers: File exists");
    }
    let kind = kind_value(kind_word, words, args.mtu, name)?;
    if let LinkKind::Veth { peer } = &kind {
        // veth_newlink registers the peer (dev_get_valid_name: a name
        // taken is EEXIST) before register_netdevice checks the link's
        // own name (kernel-checked: `link add a:b type veth peer name P`,
        // P taken, is "File exists").
        words.refuse_existing(peer, "RTNETLINK answers: File exists");
    }
    // The kernel's checks of the new name come after all of iproute2's.
    link_name(keyword, name, NameUse::Create)?;
    if args.master.is_some() {
        // rtnl_newlink_create makes the link (and a veth its peer), then
        // do_set_master finds no ndo_add_slave on any device fibre models.
        words.refuse_existing(name, "RTNETLINK answers: File exists");
        if let LinkKind::Veth { peer } = &kind {
            words.refuse_existing(peer, "RTNETLINK answers: File exists");
        }
        words.defer(no_slaves(args.master));
    }
    let mut commands = vec![Command::LinkAdd {
        name: name.to_string(),
        kind,
        mtu: args.mtu,
    }];
    if args.up.is_some() {
        commands.push(Command::LinkSet {
            name: name.to_string(),
            up: args.up,
            mtu: None,
        });
    }
    Ok(commands)
}

/// The name `veth_newlink` gives a peer without one (`dev_alloc_name`
/// makes it the first free `vethN`).
pub(crate) const VETH_PEER_TEMPLATE: &str = "veth%d";

/// The kinds `link add` takes.
const KINDS: &str = "dummy, ifb, veth, gre, ip6gre, gretap or ip6gretap";

/// The kind `token` names and its options: `dummy`, `ifb`, `veth [peer
/// [name] P]` or a GRE kind and its options; `mtu` and `name` are the
/// new link's.
fn kind_value(
    token: &str,
    words: &mut Words<'_>,
    mtu: Option<u32>,
    name: &str,
) -> Result<LinkKind, ParseError> {
    if let Some(kind) = GreKind::from_name(token) {
        return Ok(LinkKind::Gre(parse_gre(kind, words)?));
    }
    match token {
        // iplink_dummy.c, iplink_ifb.c: a link_util without parse_opt, so
        // iplink_modify ignores the words after the kind.
        "dummy" | "ifb" => {
            while words.next().is_some() {}
            Ok(if token == "dummy" {
                LinkKind::Dummy
            } else {
                LinkKind::Ifb
            })
        }
        "veth" => {
            match words.next() {
                Some("peer") => {}
                Some(other) => {
                    // veth_parse_opt prints its usage for anything else.
                    return Err(unknown_word("veth", "\"peer name NAME\"", other)
                        .with_system_message(
                            "Usage: ip link <options> type veth [peer <options>]",
                        ));
                }
                None => {
                    if let Some(refusal) = name_policy(name).or_else(|| veth_mtu_refusal(mtu)) {
                        return Err(refusal);
                    }
                    // veth_newlink: the kernel names the peer itself.
                    return Ok(LinkKind::Veth {
                        peer: VETH_PEER_TEMPLATE.to_string(),
                    });
                }
            }
            let mut named = false;
            let peer = match words.peek() {
                Some("name") | Some("dev") => {
                    let keyword = words.next().unwrap_or("name");
                    named = keyword == "name";
                    (keyword, words.link_name(keyword, NameUse::Syntax)?)
                }
                _ => ("peer", words.link_name("peer", NameUse::Syntax)?),
            };
            // The kernel's order: the request's IFLA_IFNAME policy, then
            // veth_validate's MTU, then the peer's own attributes in
            // veth_newlink (kernel-checked: `link add fd6 mtu 16 type veth
            // peer abcdefghijklmnop` is "Invalid argument").
            let kernel_name_checks = || -> Result<(), ParseError> {
                if let Some(refusal) = name_policy(name).or_else(|| veth_mtu_refusal(mtu)) {
                    return Err(refusal);
                }
                link_name(peer.0, peer.1, NameUse::Create).map(|_| ())
            };
            let peer = peer.1;
            // veth_parse_opt reads the rest as the peer's own iplink_parse
            // words, which fibre does not model; `up` there asks the kernel
            // to open the peer before the pair exists.
            let next = words.next();
            // The kernel's refusals, once iproute2 sends the request:
            // veth_validate's bare EINVAL for an MTU out of
            // ETH_MIN_MTU..=ETH_MAX_MTU, before __rtnl_newlink finds the
            // name taken (NLM_F_EXCL) and, for `up`, before the peer.
            let kernel_refusal = |refusal: ParseError, words: &mut Words<'_>| {
                if let Err(invalid) = kernel_name_checks() {
                    return invalid;
                }
                words.refuse_existing(name, "RTNETLINK answers: File exists");
                // veth_newlink registers the peer before it opens it.
                words.refuse_existing(peer, "RTNETLINK answers: File exists");
                refusal
                    .with_system_message("RTNETLINK answers: Transport endpoint is not connected")
            };
            if let Some(word) = next {
                let refusal = unknown_word(
                    "peer",
                    "the end of the line (fibre does not model the peer's own options)",
                    word,
                );
                return Err(match word {
                    "up" => kernel_refusal(refusal, words),
                    // The peer's iplink_parse: `mtu` wants its value
                    // (NEXT_ARG), and a number is no keyword, so a second
                    // device name (kernel-checked).
                    "mtu" if words.peek().is_none() => {
                        refusal.with_system_message(super::words::INCOMPLETE)
                    }
                    // After `name P` it is the peer's `dev`, another name.
                    _ if word.bytes().all(|b| b.is_ascii_digit()) && named => refusal
                        .with_system_message(
                            "both \"name\" and \"dev\" cannot be used when creating devices.",
                        ),
                    _ if word.bytes().all(|b| b.is_ascii_digit()) => refusal.with_system_message(
                        format!("Error: either \"dev\" is duplicate, or \"{word}\" is a garbage."),
                    ),
                    _ => refusal,
                });
            }
            kernel_name_checks()?;
            Ok(LinkKind::Veth {
                peer: peer.to_string(),
            })
        }
        "vxlan" => Err(vxlan(words, mtu, name)),
        other => {
            let expected = format!("a device type: {KINDS}");
            let refusal = ParseError::new("type", &expected, Some(other));
            Err(match words.next() {
                // iplink_modify: a kind iproute2 has no link_util for takes no words.
                Some(next) => refusal.with_system_message(format!(
                    "Garbage instead of arguments \"{next} ...\". Try \"ip link help\"."
                )),
                None => refusal.with_system_message("Error: Unknown device type."),
            })
        }
    }
}

/// veth_validate: a bare EINVAL for an MTU out of
/// ETH_MIN_MTU..=ETH_MAX_MTU (`is_valid_veth_mtu`), which the kernel
/// checks before it looks at the name.
/// The kernel's IFLA_IFNAME policy (at most IFNAMSIZ - 1 bytes) for a new
/// link's name iproute2 let through (a bare or `dev` name of 16 bytes or
/// more), which rtnl_newlink's parse of the request refuses before any
/// kind's own checks.
fn name_policy(name: &str) -> Option<ParseError> {
    (name.len() >= 16).then(|| {
        link_name("dev", name, NameUse::Create)
            .err()
            .unwrap_or_else(|| ParseError::new("name", "a name of at most 15 bytes", Some(name)))
    })
}

fn veth_mtu_refusal(mtu: Option<u32>) -> Option<ParseError> {
    let mtu = mtu.filter(|m| !(ETH_MIN_MTU..=ETH_MAX_MTU).contains(m))?;
    Some(
        ParseError::new(
            "mtu",
            &format!("an MTU from {ETH_MIN_MTU} to {ETH_MAX_MTU} for a veth pair"),
            // iplink_parse reads it as an int.
            Some(&(mtu as i32).to_string()),
        )
        .with_system_message("RTNETLINK answers: Invalid argument"),
    )
}

/// `vxlan_parse_opt`'s first keywords, in its order, each abbreviated
/// (`matches`) but the last two.
const VXLAN_WORDS: &[&str] = &[
    "id",
    "vni",
    "group",
    "remote",
    "local",
    "dev",
    "ttl",
    "hoplimit",
    "tos",
    "dsfield",
    "df",
    "label",
    "flowlabel",
    "ageing",
    "maxaddress",
    "port",
    "srcport",
    "dstport",
    "nolearning",
    "learning",
    "noproxy",
    "proxy",
    "norsc",
    "rsc",
    "nol2miss",
    "l2miss",
    "nol3miss",
    "l3miss",
    "udpcsum",
    "noudpcsum",
    "udp6zerocsumtx",
    "noudp6zerocsumtx",
    "udp6zerocsumrx",
    "noudp6zerocsumrx",
    "remcsumtx",
    "noremcsumtx",
    "remcsumrx",
    "noremcsumrx",
    "external",
    "noexternal",
    "gbp",
    "gpe",
    "help",
];

/// `type vxlan`, which fibre does not model, refused with what iproute2 or
/// the kernel says where that does not depend on the options' values:
/// without options the kernel's `vxlan_validate` wants an id; an option
/// `vxlan_parse_opt` does not know it calls an unknown command.
fn vxlan(words: &mut Words<'_>, mtu: Option<u32>, name: &str) -> ParseError {
    let refusal = |got: Option<&str>| {
        ParseError::new(
            "vxlan",
            &format!("a device type fibre models: {KINDS}"),
            got,
        )
    };
    match words.next() {
        // vxlan_validate checks IFLA_MTU before it finds no options
        // (iproute2 6.1 sends even `mtu -1`: kernel-checked).
        // rtnl_newlink's parse of the whole request (IFLA_IFNAME's policy)
        // comes before vxlan_validate (kernel-checked).
        None if name_policy(name).is_some() => name_policy(name).expect("checked"),
        None if mtu.is_some_and(|m| !(ETH_MIN_MTU..=ETH_MAX_MTU).contains(&m)) => {
            refusal(Some("vxlan")).with_system_message(format!(
                "Error: MTU must be between {ETH_MIN_MTU} and {ETH_MAX_MTU}."
            ))
        }
        None => refusal(Some("vxlan")).with_system_message(
            "Error: Required attributes not provided to perform the operation.",
        ),
        Some(first) => {
            let known = VXLAN_WORDS.iter().any(|full| abbreviates(first, full))
                || first == "vnifilter"
                || first == "novnifilter";
            // The options that take a value (NEXT_ARG), up to `dstport`.
            let takes_value = VXLAN_WORDS[..VXLAN_WORDS
                .iter()
                .position(|w| *w == "nolearning")
                .unwrap_or(0)]
                .iter()
                .any(|full| abbreviates(first, full));
            let option = VXLAN_WORDS.iter().find(|full| abbreviates(first, full));
            if takes_value && words.peek().is_none() {
                refusal(Some(first)).with_system_message(super::words::INCOMPLETE)
            } else if option == Some(&"dev") {
                // vxlan_parse_opt looks `dev` up as it reads it (`nodev`).
                let dev = words.next().unwrap_or_default();
                words.look_up(dev, format!("Cannot find device \"{dev}\""));
                refusal(Some("vxlan"))
            } else if known {
                refusal(Some("vxlan"))
            } else {
                refusal(Some(first))
                    .with_system_message(format!("vxlan: unknown command \"{first}\"?"))
            }
        }
    }
}

/// `link set [dev] NAME [up|down] [mtu N]`; nothing to change is no
/// error (iproute2 sends the request, and the kernel changes nothing).
pub(crate) fn parse_set(words: &mut Words<'_>) -> Result<Command, ParseError> {
    let args = parse_link_args(words)?;
    let name = existing_device(&args, "link set", words)?;
    if let Some(kind) = args.kind {
        return Err(ParseError::new(
            "type",
            "nothing after the changes (fibre does not change a link's kind)",
            Some(kind),
        ));
    }
    if let (Some(new), DevWord::Given { token, .. }) = (args.name, args.dev) {
        if new != token {
            return Err(ParseError::new(
                "name",
                "the link's own name (fibre does not rename links)",
                Some(new),
            ));
        }
    }
    if args.master.is_some() {
        // do_setlink: no device fibre models takes slaves (ndo_add_slave).
        words.defer(no_slaves(args.master));
    }
    Ok(Command::LinkSet {
        name,
        up: args.up,
        mtu: args.mtu,
    })
}

/// The kernel's refusal of `master DEV` (`do_set_master`): none of the
/// kinds fibre models (dummy, ifb, veth, GRE) has `ndo_add_slave`.
fn no_slaves(master: Option<&str>) -> ParseError {
    ParseError::new(
        "master",
        "no master (fibre models no bridge, bond or VRF device)",
        master,
    )
    .with_system_message("RTNETLINK answers: Operation not supported")
}

/// `link del [dev] NAME`. iproute2 reads the line as for `set`; the
/// kernel's `rtnl_dellink` only looks at which device, so `up`, `down`
/// and `mtu N` change nothing.
pub(crate) fn parse_del(words: &mut Words<'_>) -> Result<Command, ParseError> {
    let args = parse_link_args(words)?;
    let name = existing_device(&args, "link del", words)?;
    if let Some(kind) = args.kind {
        return Err(ParseError::new(
            "type",
            "nothing after the device (fibre does not delete by kind)",
            Some(kind),
        ));
    }
    Ok(Command::LinkDel { name })
}

/// The device a `set` or `del` names, refused as `iplink_parse` refuses it
/// once the line is read: none at all, or one no device can be called
/// (`ll_name_to_index` finds none). One that could exist is the FIB's to
/// find: it is looked up before any refusal of the kernel's.
fn existing_device(
    args: &LinkArgs<'_>,
    command: &str,
    words: &mut Words<'_>,
) -> Result<String, ParseError> {
    let Some((keyword, name)) = args.device() else {
        return Err(ParseError::new(command, "a device name", None)
            .with_system_message("Not enough information: \"dev\" argument is required."));
    };
    let name = link_name(keyword, name, NameUse::Find)?;
    words.look_up(name, format!("Cannot find device \"{name}\""));
    Ok(name.to_string())
}

/// `mtu N`, read as `iplink_parse` reads it (`get_integer`, base 0); a
/// negative number goes to the kernel as the u32 it is on the wire
/// (where `dev_validate_mtu` reads it back as a negative int), and a
/// second `mtu` is refused (`duparg`) unless the first was -1, which is
/// iproute2's own "none yet" (both then go, and the kernel keeps the last).
fn mtu_value(words: &mut Words<'_>, mtu: Option<u32>) -> Result<u32, ParseError> {
    let expected = "an MTU from -2147483648 to 2147483647";
    let token = words.value("mtu", expected)?;
    if mtu.is_some_and(|earlier| earlier as i32 != -1) {
        return Err(duplicate_argument("mtu", token));
    }
    values::number_i32(token)
        .map(|value| value as u32)
        .ok_or_else(|| invalid_argument("mtu", expected, token, "Invalid \"mtu\" value"))
}

const IFNAME_WANTED: &str = "a device name of 1 to 15 bytes without '/' or ':'";

/// A keyword of `ip link` that fibre does not model.
fn unmodelled(keyword: &str, word: &str) -> ParseError {
    unknown_word(
        "link",
        &format!("up, down, mtu N, type T or a device name (fibre does not model \"{keyword}\")"),
        word,
    )
}

/// `duparg2("dev", token)`: a second device name, or a word no keyword takes.
fn garbage(token: &str) -> ParseError {
    unknown_word("link", "up, down, mtu N, type T or a device name", token).with_system_message(
        format!("Error: either \"dev\" is duplicate, or \"{token}\" is a garbage."),
    )
}
