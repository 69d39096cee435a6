//! The options after `link add NAME type gre|ip6gre|gretap|ip6gretap`, as
//! iproute2's `gre_parse_opt` (ip/link_gre.c, ip/link_gre6.c) reads them:
//! keywords may be abbreviated (`k 5` is `key 5`, resolved in iproute2's
//! order), a later option overrides an earlier one (`key 1 okey 2` sends
//! 2), and the messages are iproute2's.
//!
//! Refused where iproute2 would accept: a missing or `any` remote
//! (point-to-multipoint and multicast tunnels are not modelled) and the
//! options fibre does not model (`dev`, `nopmtudisc`, `encap`, `fwmark`, ...).

use std::net::IpAddr;

use super::error::ParseError;
use super::values;
use super::words::{invalid_argument, Words};
use crate::types::Family;
use crate::write::gre::{GreKind, GreSpec, Inheritable};

/// What one keyword does.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Opt {
    Key,
    NoKey,
    IKey,
    NoIKey,
    OKey,
    NoOKey,
    Seq,
    NoSeq,
    ISeq,
    NoISeq,
    OSeq,
    NoOSeq,
    Csum,
    NoCsum,
    ICsum,
    NoICsum,
    OCsum,
    NoOCsum,
    Remote,
    Local,
    Ttl,
    Tos,
    /// `pmtudisc`: DF on the outer header, Linux's default and fibre's
    /// only behaviour (`nopmtudisc` is not modelled).
    PmtuDisc,
}

/// The keywords iproute2 resolves with `matches()` (abbreviations allowed),
/// in its order, so `i` is `ikey` and `t` is `ttl` as in `ip`. `None`
/// marks a keyword iproute2 knows and fibre does not model.
const KEYWORDS: &[(&str, Option<Opt>)] = &[
    ("key", Some(Opt::Key)),
    ("nokey", Some(Opt::NoKey)),
    ("ikey", Some(Opt::IKey)),
    ("noikey", Some(Opt::NoIKey)),
    ("okey", Some(Opt::OKey)),
    ("nookey", Some(Opt::NoOKey)),
    ("seq", Some(Opt::Seq)),
    ("noseq", Some(Opt::NoSeq)),
    ("iseq", Some(Opt::ISeq)),
    ("noiseq", Some(Opt::NoISeq)),
    ("oseq", Some(Opt::OSeq)),
    ("nooseq", Some(Opt::NoOSeq)),
    ("csum", Some(Opt::Csum)),
    ("nocsum", Some(Opt::NoCsum)),
    ("icsum", Some(Opt::ICsum)),
    ("noicsum", Some(Opt::NoICsum)),
    ("ocsum", Some(Opt::OCsum)),
    ("noocsum", Some(Opt::NoOCsum)),
    // gre only; ip6gre goes on to `remote`, see `resolve`.
    ("nopmtudisc", None),
    ("pmtudisc", Some(Opt::PmtuDisc)),
    ("remote", Some(Opt::Remote)),
    ("local", Some(Opt::Local)),
    ("dev", None),
    ("ttl", Some(Opt::Ttl)),
    ("hoplimit", Some(Opt::Ttl)),
    ("hlim", Some(Opt::Ttl)),
    ("tos", Some(Opt::Tos)),
    ("tclass", Some(Opt::Tos)),
    ("dsfield", Some(Opt::Tos)),
];

/// Keywords iproute2 compares whole (`strcmp`), none of which fibre models.
const UNMODELLED_EXACT: &[&str] = &[
    "noencap",
    "encap",
    "encap-sport",
    "encap-dport",
    "encap-csum",
    "noencap-csum",
    "encap-udp6-csum",
    "noencap-udp6-csum",
    "encap-remcsum",
    "noencap-remcsum",
    "external",
    "ignore-df",
    "noignore-df",
    "fwmark",
    "flowlabel",
    "fl",
    "dscp",
    "allow-localremote",
    "noallow-localremote",
    "encaplimit",
];

const OPTIONS_WANTED: &str =
    "a GRE option: remote, local, ttl, tos, [i|o]key, [i|o]csum, [i|o]seq or their no- forms";

/// iproute2's `matches(word, keyword)`: `word` abbreviates `keyword`.
fn abbreviates(word: &str, keyword: &str) -> bool {
    !word.is_empty() && keyword.starts_with(word)
}

/// What a word after `type KIND` is to iproute2.
enum Resolved<'w> {
    /// An option fibre models.
    Modelled(Opt),
    /// A keyword iproute2 knows and fibre does not model (its full name).
    Unmodelled(&'w str),
}

/// The option `word` names, as iproute2 resolves it for `kind`.
fn resolve(kind: GreKind, word: &str) -> Result<Resolved<'_>, ParseError> {
    let six = kind.family() == Family::V6;
    let found = KEYWORDS
        .iter()
        // link_gre6.c has no [no]pmtudisc: `p` cannot resolve to it there.
        .filter(|(name, _)| !(six && name.ends_with("pmtudisc")))
        .find(|(name, _)| abbreviates(word, name));
    // gre_parse_opt prints its usage for a word it does not know.
    let usage = format!(
        "Usage: ... {} [ remote ADDR ] [ local ADDR ] ... (ip link help {})",
        kind.name(),
        kind.name()
    );
    match found {
        Some((_, Some(opt))) => Ok(Resolved::Modelled(*opt)),
        Some((name, None)) => Ok(Resolved::Unmodelled(name)),
        None if UNMODELLED_EXACT.contains(&word) => Ok(Resolved::Unmodelled(word)),
        // iproute2 hands everything after `type KIND` to the kind.
        None if matches!(word, "mtu" | "up" | "down") => Err(ParseError::new(
            kind.name(),
            &format!("{OPTIONS_WANTED} (mtu, up and down go before \"type\")"),
            Some(word),
        )
        .with_system_message(usage)),
        None => {
            Err(ParseError::new(kind.name(), OPTIONS_WANTED, Some(word)).with_system_message(usage))
        }
    }
}

/// Reads the value of a keyword fibre does not model as `gre_parse_opt` /
/// `gre_parse_opt` (link_gre6.c) reads it, with their refusals, so that
/// ip's refusal of it or of a later word is the line's.
fn skip_unmodelled_value(words: &mut Words<'_>, keyword: &str) -> Result<(), ParseError> {
    let takes_value = [
        "dev",
        "fwmark",
        "encap",
        "encap-sport",
        "encap-dport",
        "flowlabel",
        "fl",
        "dscp",
        "encaplimit",
    ];
    if !takes_value.contains(&keyword) {
        return Ok(());
    }
    let token = words.value(keyword, "a value")?;
    if keyword == "dev" {
        // gre_parse_opt looks the device up as it reads it (`nodev`).
        words.look_up(token, format!("Cannot find device \"{token}\""));
    }
    let what = match keyword {
        "fwmark" if values::number_u32(token).is_none() => "invalid fwmark",
        "encap" if !matches!(token, "fou" | "gue" | "none") => "Invalid encap type.",
        "encap-sport"
            if token != "auto" && values::number_at_most(token, u64::from(u16::MAX)).is_none() =>
        {
            "Invalid source port."
        }
        "encap-dport" if values::number_at_most(token, u64::from(u16::MAX)).is_none() => {
            "Invalid destination port."
        }
        _ => return Ok(()),
    };
    Err(invalid_argument(keyword, "a valid value", token, what))
}

fn unmodelled(kind: GreKind, keyword: &str, word: &str) -> ParseError {
    ParseError::new(
        kind.name(),
        &format!("{OPTIONS_WANTED} (fibre does not model \"{keyword}\")"),
        Some(word),
    )
}

/// Reads the options of a tunnel of `kind` up to the end of the line.
///
/// The `remote` is required; `local` is checked against the router's
/// addresses once the whole configuration is applied (see
/// [`super::load::apply_str`]), not here.
pub(crate) fn parse_gre(kind: GreKind, words: &mut Words<'_>) -> Result<GreSpec, ParseError> {
    let family = kind.family();
    let mut spec = GreSpec::new(kind, family.unspecified());
    let mut remote = None;
    // The first option fibre does not model: refused once the line is read.
    let mut unmodelled_option: Option<ParseError> = None;
    while let Some(word) = words.next() {
        let option = match resolve(kind, word)? {
            Resolved::Modelled(option) => option,
            Resolved::Unmodelled(keyword) => {
                skip_unmodelled_value(words, keyword)?;
                unmodelled_option.get_or_insert_with(|| unmodelled(kind, keyword, word));
                continue;
            }
        };
        match option {
            Opt::Key => {
                let key = key_value(words, "key")?;
                (spec.ikey, spec.okey) = (Some(key), Some(key));
            }
            Opt::NoKey => (spec.ikey, spec.okey) = (None, None),
            Opt::IKey => spec.ikey = Some(key_value(words, "ikey")?),
            Opt::NoIKey => spec.ikey = None,
            Opt::OKey => spec.okey = Some(key_value(words, "okey")?),
            Opt::NoOKey => spec.okey = None,
            Opt::Seq => (spec.iseq, spec.oseq) = (true, true),
            Opt::NoSeq => (spec.iseq, spec.oseq) = (false, false),
            Opt::ISeq => spec.iseq = true,
            Opt::NoISeq => spec.iseq = false,
            Opt::OSeq => spec.oseq = true,
            Opt::NoOSeq => spec.oseq = false,
            Opt::Csum => (spec.icsum, spec.ocsum) = (true, true),
            Opt::NoCsum => (spec.icsum, spec.ocsum) = (false, false),
            Opt::ICsum => spec.icsum = true,
            Opt::NoICsum => spec.icsum = false,
            Opt::OCsum => spec.ocsum = true,
            Opt::NoOCsum => spec.ocsum = false,
            Opt::Remote => remote = endpoint(kind, words, "remote")?,
            Opt::Local => spec.local = endpoint(kind, words, "local")?,
            Opt::Ttl => spec.ttl = outer_value(kind, words, word, Outer::Ttl)?,
            Opt::Tos => spec.tos = outer_value(kind, words, word, Outer::Tos)?,
            Opt::PmtuDisc => {}
        }
    }
    if let (Some(IpAddr::V4(group)), None) = (remote, spec.local) {
        // gre_parse_opt: a multicast remote wants a local address.
        if group.is_multicast() {
            return Err(
                ParseError::new("local", "a local address for a multicast remote", None)
                    .with_system_message("A broadcast tunnel requires a source address."),
            );
        }
    }
    let Some(remote) = remote else {
        return Err(ParseError::new(
            kind.name(),
            &format!(
                "\"remote ADDR\" with a unicast {} address (fibre does not model point-to-multipoint tunnels)",
                match family {
                    Family::V4 => "IPv4",
                    Family::V6 => "IPv6",
                }
            ),
            None,
        ));
    };
    // The last `remote` is the tunnel's (iproute2 reads each and keeps the
    // last); only then is one fibre does not model refused.
    if !is_unicast(&remote) {
        return Err(ParseError::new(
            "remote",
            "a unicast address (fibre does not model point-to-multipoint or multicast tunnels)",
            Some(&remote.to_string()),
        ));
    }
    if let Some(refusal) = unmodelled_option {
        return Err(refusal);
    }
    spec.remote = remote;
    Ok(spec)
}

/// `remote`/`local ADDR|any` of the tunnel's family; `any` is `None`.
fn endpoint(
    kind: GreKind,
    words: &mut Words<'_>,
    keyword: &str,
) -> Result<Option<IpAddr>, ParseError> {
    let family = kind.family();
    let expected = match family {
        Family::V4 => {
            "an IPv4 address or any (gre and gretap run over IPv4; ip6gre and ip6gretap over IPv6)"
        }
        Family::V6 => {
            "an IPv6 address or any (ip6gre and ip6gretap run over IPv6; gre and gretap over IPv4)"
        }
    };
    let token = words.value(keyword, expected)?;
    if token == "any" {
        return Ok(None);
    }
    match values::ip_addr(token) {
        Some(addr) if Family::of(&addr) == family => Ok(Some(addr)),
        _ => Err(
            ParseError::new(keyword, expected, Some(token)).with_system_message(format!(
                "Error: {} address is expected rather than \"{token}\".",
                values::family_word(Some(family))
            )),
        ),
    }
}

fn is_unicast(addr: &IpAddr) -> bool {
    match addr {
        IpAddr::V4(a) => !(a.is_unspecified() || a.is_multicast() || a.is_broadcast()),
        IpAddr::V6(a) => !(a.is_unspecified() || a.is_multicast()),
    }
}

/// `key`/`ikey`/`okey K`: a number (`get_unsigned`, base 0) or a dotted
/// quad, as `tnl_parse_key` reads it.
fn key_value(words: &mut Words<'_>, keyword: &str) -> Result<u32, ParseError> {
    let expected = "a key: a number from 0 to 4294967295 or a dotted quad such as 0.0.0.5";
    let token = words.value(keyword, expected)?;
    if token.contains('.') {
        return match values::ip_addr(token) {
            Some(IpAddr::V4(quad)) => Ok(u32::from(quad)),
            _ => Err(
                ParseError::new(keyword, expected, Some(token)).with_system_message(format!(
                    "Error: an IP address is expected rather than \"{token}\""
                )),
            ),
        };
    }
    values::number_u32(token).ok_or_else(|| {
        ParseError::new(keyword, expected, Some(token)).with_system_message(format!(
            "invalid value for \"{keyword}\": \"{token}\"; it should be an unsigned integer"
        ))
    })
}

/// The outer header fields a tunnel may copy from the inner packet.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outer {
    /// `ttl|hoplimit|hlim N|inherit`: `get_u8` base 0.
    Ttl,
    /// `tos|tclass|dsfield T|inherit`: hexadecimal.
    Tos,
}

/// A `ttl` or `tos` value. `ttl 0` is inherit, and so is gre's `tos 1`:
/// the kernel keeps "inherit" as TOS 1.
fn outer_value(
    kind: GreKind,
    words: &mut Words<'_>,
    keyword: &str,
    field: Outer,
) -> Result<Inheritable, ParseError> {
    let six = kind.family() == Family::V6;
    let (expected, what) = match field {
        Outer::Ttl => (
            "inherit or a TTL from 0 (inherit) to 255",
            if six { "invalid HLIM" } else { "invalid TTL" },
        ),
        Outer::Tos => (
            "inherit or a TOS byte in hexadecimal (00 to ff)",
            if six {
                "invalid TClass"
            } else {
                "bad TOS value"
            },
        ),
    };
    let token = words.value(keyword, expected)?;
    if token == "inherit" {
        return Ok(Inheritable::Inherit);
    }
    let value = match field {
        Outer::Ttl => values::number_u32(token).and_then(|n| u8::try_from(n).ok()),
        Outer::Tos => values::dsfield(token),
    };
    match (field, value) {
        (_, None) => Err(invalid_argument(keyword, expected, token, what)),
        (Outer::Ttl, Some(0)) => Ok(Inheritable::Inherit),
        (Outer::Tos, Some(1)) if !six => Ok(Inheritable::Inherit),
        (_, Some(v)) => Ok(Inheritable::Fixed(v)),
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{apply_str, parse_words, tokenize};
    use crate::*;

    fn add(line: &str) -> (String, GreSpec, Option<u32>, usize) {
        let commands =
            parse_words(&tokenize(line).unwrap()).unwrap_or_else(|e| panic!("{line}: {e}"));
        match &commands[0] {
            Command::LinkAdd {
                name,
                kind: LinkKind::Gre(spec),
                mtu,
            } => (name.clone(), spec.clone(), *mtu, commands.len()),
            other => panic!("{line}: {other:?}"),
        }
    }

    fn spec(line: &str) -> GreSpec {
        add(line).1
    }

    fn refusal(line: &str) -> String {
        parse_words(&tokenize(line).unwrap())
            .expect_err(line)
            .to_string()
    }

    #[test]
    fn every_kind_with_iproute2_defaults() {
        let (name, s, mtu, n) = add("link add gre1 type gre remote 198.51.100.2 local 192.0.2.1");
        assert_eq!((name.as_str(), mtu, n), ("gre1", None, 1));
        assert_eq!(s.kind, GreKind::Gre);
        assert_eq!(
            s.remote,
            "198.51.100.2".parse::<std::net::IpAddr>().unwrap()
        );
        assert_eq!(s.local, Some("192.0.2.1".parse().unwrap()));
        assert_eq!(
            (s.ttl, s.tos),
            (Inheritable::Inherit, Inheritable::Fixed(0))
        );
        assert_eq!(
            (s.ikey, s.okey, s.icsum, s.ocsum, s.iseq, s.oseq),
            (None, None, false, false, false, false)
        );
        let s = spec("link add g6 type ip6gre remote 2001:db8::2");
        assert_eq!(
            (s.kind, s.local, s.ttl),
            (GreKind::Ip6Gre, None, Inheritable::Fixed(64))
        );
        assert_eq!(
            spec("link add t4 type gretap remote 198.51.100.2").kind,
            GreKind::GreTap
        );
        assert_eq!(
            spec("link add t6 type ip6gretap remote 2001:db8::2").kind,
            GreKind::Ip6GreTap
        );
        // mtu, up and down go before `type`, as for every kind.
        let (_, _, mtu, n) = add("link add gre2 mtu 1400 up type gre remote 198.51.100.2");
        assert_eq!((mtu, n), (Some(1400), 2));
        assert_eq!(
            spec("l a gre3 type gre remote 198.51.100.2 local any").local,
            None
        );
    }

    #[test]
    fn keys_checksums_and_sequence_numbers() {
        let s = spec("link add g type gre remote 198.51.100.2 key 5 csum seq");
        assert_eq!((s.ikey, s.okey), (Some(5), Some(5)));
        assert_eq!((s.icsum, s.ocsum, s.iseq, s.oseq), (true, true, true, true));
        let s = spec("link add g type gre remote 198.51.100.2 ikey 1.2.3.4 okey 0x10 icsum oseq");
        assert_eq!((s.ikey, s.okey), (Some(0x0102_0304), Some(16)));
        assert_eq!(
            (s.icsum, s.ocsum, s.iseq, s.oseq),
            (true, false, false, true)
        );
        let s = spec("link add g type ip6gre remote 2001:db8::2 okey 4294967295 ocsum iseq");
        assert_eq!((s.ikey, s.okey), (None, Some(u32::MAX)));
        assert_eq!(
            (s.icsum, s.ocsum, s.iseq, s.oseq),
            (false, true, true, false)
        );
        // As in iproute2 a later option wins, and the no- forms undo.
        let s =
            spec("link add g type gre remote 198.51.100.2 key 1 okey 2 csum noicsum seq nooseq");
        assert_eq!((s.ikey, s.okey), (Some(1), Some(2)));
        assert_eq!(
            (s.icsum, s.ocsum, s.iseq, s.oseq),
            (false, true, true, false)
        );
        let s = spec("link add g type gre remote 198.51.100.2 key 1 nokey seq noseq csum nocsum");
        assert_eq!(
            s,
            GreSpec::new(GreKind::Gre, "198.51.100.2".parse().unwrap())
        );
        let s = spec("link add g type gre remote 198.51.100.2 ikey 1 okey 2 noikey nookey iseq noiseq ocsum noocsum");
        assert_eq!(
            s,
            GreSpec::new(GreKind::Gre, "198.51.100.2".parse().unwrap())
        );
    }

    #[test]
    fn ttl_and_tos_with_their_synonyms() {
        let s = spec("link add g type gre remote 198.51.100.2 ttl 64 tos 10");
        assert_eq!(
            (s.ttl, s.tos),
            (Inheritable::Fixed(64), Inheritable::Fixed(0x10))
        );
        let s = spec("link add g type gre remote 198.51.100.2 ttl inherit tos inherit");
        assert_eq!((s.ttl, s.tos), (Inheritable::Inherit, Inheritable::Inherit));
        // ttl 0 is inherit; for gre the kernel keeps tos inherit as 1.
        let s = spec("link add g type gre remote 198.51.100.2 ttl 0 tos 0x1");
        assert_eq!((s.ttl, s.tos), (Inheritable::Inherit, Inheritable::Inherit));
        let s = spec("link add g type ip6gre remote 2001:db8::2 hoplimit 5 tclass 0xb8");
        assert_eq!(
            (s.ttl, s.tos),
            (Inheritable::Fixed(5), Inheritable::Fixed(0xb8))
        );
        let s = spec("link add g type ip6gre remote 2001:db8::2 hlim inherit dsfield inherit");
        assert_eq!((s.ttl, s.tos), (Inheritable::Inherit, Inheritable::Inherit));
    }

    #[test]
    fn keywords_abbreviate_in_iproute2_order() {
        // k: key; i: ikey; o: okey; r: remote; l: local; t: ttl; c: csum; s: seq.
        let s = spec("link add g type gre r 198.51.100.2 l 192.0.2.1 k 3 t 9 c s");
        assert_eq!(s.local, Some("192.0.2.1".parse().unwrap()));
        assert_eq!(
            (s.ikey, s.okey, s.ttl, s.ocsum, s.oseq),
            (Some(3), Some(3), Inheritable::Fixed(9), true, true)
        );
        let s = spec("link add g type gre rem 198.51.100.2 i 1 o 2");
        assert_eq!((s.ikey, s.okey), (Some(1), Some(2)));
    }

    #[test]
    fn refusals_name_the_token_and_quote_iproute2() {
        let cases: &[(&str, &str)] = &[
            (
                "link add g type gre",
                "\"gre\": expected \"remote ADDR\" with a unicast IPv4 address (fibre does not model point-to-multipoint tunnels), got end of line",
            ),
            (
                "link add g type gre local 192.0.2.1 remote any",
                "\"gre\": expected \"remote ADDR\" with a unicast IPv4 address",
            ),
            (
                "link add g type gre remote 2001:db8::2",
                "\"remote\": expected an IPv4 address or any (gre and gretap run over IPv4; ip6gre and ip6gretap over IPv6), got \"2001:db8::2\" (Error: inet address is expected rather than \"2001:db8::2\".)",
            ),
            (
                "link add g type ip6gre remote 198.51.100.2",
                "got \"198.51.100.2\" (Error: inet6 address is expected rather than \"198.51.100.2\".)",
            ),
            (
                "link add g type gretap remote 198.51.100.2 local fe80::1",
                "\"local\": expected an IPv4 address or any",
            ),
            (
                "link add g type gre remote 224.0.0.5 local 192.0.2.1",
                "\"remote\": expected a unicast address (fibre does not model point-to-multipoint or multicast tunnels), got \"224.0.0.5\"",
            ),
            (
                "link add g type gre remote 224.0.0.5",
                "(A broadcast tunnel requires a source address.)",
            ),
            (
                "link add g type gre remote",
                "\"remote\": expected an IPv4 address or any (gre and gretap run over IPv4; ip6gre and ip6gretap over IPv6), got end of line (Command line is not complete. Try option \"help\")",
            ),
            (
                "link add g type gre remote 198.51.100.2 key 4294967296",
                "\"key\": expected a key: a number from 0 to 4294967295 or a dotted quad such as 0.0.0.5, got \"4294967296\" (invalid value for \"key\": \"4294967296\"; it should be an unsigned integer)",
            ),
            (
                "link add g type gre remote 198.51.100.2 ikey -1",
                "(invalid value for \"ikey\": \"-1\"; it should be an unsigned integer)",
            ),
            (
                "link add g type gre remote 198.51.100.2 okey 1.2.3.400",
                "got \"1.2.3.400\" (Error: an IP address is expected rather than \"1.2.3.400\")",
            ),
            (
                "link add g type gre remote 198.51.100.2 key",
                "\"key\": expected a key: a number from 0 to 4294967295 or a dotted quad such as 0.0.0.5, got end of line",
            ),
            (
                "link add g type gre remote 198.51.100.2 ttl 256",
                "got \"256\" (Error: argument \"256\" is wrong: invalid TTL)",
            ),
            (
                "link add g type ip6gre remote 2001:db8::2 hoplimit x",
                "got \"x\" (Error: argument \"x\" is wrong: invalid HLIM)",
            ),
            (
                "link add g type gre remote 198.51.100.2 tos 100",
                "got \"100\" (Error: argument \"100\" is wrong: bad TOS value)",
            ),
            (
                "link add g type ip6gre remote 2001:db8::2 tclass zz",
                "got \"zz\" (Error: argument \"zz\" is wrong: invalid TClass)",
            ),
            (
                "link add g type gre remote 198.51.100.2 bogus",
                "\"gre\": expected a GRE option: remote, local, ttl, tos, [i|o]key, [i|o]csum, [i|o]seq or their no- forms, got \"bogus\"",
            ),
            (
                "link add g type gre remote 198.51.100.2 dev eth0",
                "(fibre does not model \"dev\"), got \"dev\"",
            ),
            (
                "link add g type gre remote 198.51.100.2 nopmtu",
                "(fibre does not model \"nopmtudisc\"), got \"nopmtu\"",
            ),
            (
                "link add g type ip6gre remote 2001:db8::2 encaplimit none",
                "(fibre does not model \"encaplimit\"), got \"encaplimit\"",
            ),
            (
                "link add g type gre remote 198.51.100.2 mtu 1400",
                "(mtu, up and down go before \"type\"), got \"mtu\"",
            ),
            (
                "link add g type vxlan remote 198.51.100.2",
                "\"vxlan\": expected a device type fibre models: dummy, ifb, veth, gre, ip6gre, gretap or ip6gretap, got \"vxlan\"",
            ),
        ];
        for (line, want) in cases {
            let got = refusal(line);
            assert!(got.contains(want), "{line}\n got: {got}\nwant: {want}");
        }
    }

    fn load(text: &str, force: bool) -> Result<(Fib, Vec<String>), String> {
        apply_str(&Fib::new(), "t.conf", text, force)
            .map(|(fib, d)| (fib, d.iter().map(ToString::to_string).collect()))
            .map_err(|e| e.to_string())
    }

    const UNDERLAY: &str =
        "link add eth0 type dummy\nlink set eth0 up\naddr add 192.0.2.1/24 dev eth0\n";

    #[test]
    fn local_address_may_come_later_in_the_file() {
        let text = "link add gre1 type gre remote 192.0.2.2 local 192.0.2.1\nlink add eth0 type dummy\nlink set eth0 up\naddr add 192.0.2.1/24 dev eth0\n";
        let (fib, skipped) = load(text, false).unwrap();
        assert!(skipped.is_empty());
        assert!(matches!(
            fib.link_by_name("gre1").unwrap().kind,
            LinkKind::Gre(_)
        ));
    }

    #[test]
    fn a_foreign_local_address_refuses_the_file() {
        let text = format!("{UNDERLAY}link add gre1 type gre remote 192.0.2.2 local 203.0.113.9\nlink set gre1 up\n");
        let err = load(&text, false).unwrap_err();
        assert_eq!(
            err,
            "t.conf:4: local address 203.0.113.9 of tunnel gre1 is not configured on this router (expected one of its addresses; add it with \"addr add 203.0.113.9/LEN dev DEV\")\nnothing applied (1 error)"
        );
        // Deleting the address later counts too, on the line that does.
        let text = format!("{UNDERLAY}link add gre1 type gre remote 192.0.2.2 local 192.0.2.1\naddr del 192.0.2.1/24 dev eth0\n");
        let err = load(&text, false).unwrap_err();
        assert!(
            err.starts_with("t.conf:5: local address 192.0.2.1 of tunnel gre1"),
            "{err}"
        );
    }

    #[test]
    fn force_skips_the_refused_tunnel_line_and_what_needed_it() {
        let text = format!(
            "{UNDERLAY}link add gre1 type gre remote 192.0.2.2 local 203.0.113.9\naddr add 10.9.0.1/30 dev gre1\nlink add gre2 up type gre remote 192.0.2.3\n"
        );
        let (fib, skipped) = load(&text, true).unwrap();
        assert!(fib.link_by_name("gre1").is_none());
        assert!(fib.link_by_name("gre2").is_some());
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        assert!(skipped[0].starts_with("t.conf:4: local address 203.0.113.9"));
        assert_eq!(skipped[1], "t.conf:5: Cannot find device \"gre1\"");
    }

    #[test]
    fn an_underlay_through_the_tunnel_itself_is_refused() {
        let text = format!(
            "{UNDERLAY}link add gre1 up type gre remote 198.51.100.2\nroute add default dev gre1\n"
        );
        // Placed on the route that sends the remote into the tunnel.
        let err = load(&text, false).unwrap_err();
        assert!(
            err.starts_with(
                "t.conf:5: the route to remote 198.51.100.2 leaves through gre1 itself"
            ),
            "{err}"
        );
        let text = format!("{UNDERLAY}link add gre1 up type gre remote 198.51.100.2\nroute add default dev gre1\nroute add 198.51.100.2 via 192.0.2.254\n");
        assert!(load(&text, false).is_ok());
    }
}
