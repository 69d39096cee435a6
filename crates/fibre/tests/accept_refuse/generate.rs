//! The seeded generator of configuration lines, good and bad: every
//! command and keyword of fibre's configuration language (iproute2's words
//! for `ip link`, `ip addr`, `ip route`, `ip rule`), numbers at and past
//! their bounds, leading zeros, hex, abbreviations of keywords, odd
//! whitespace, both families (`-4`/`-6`), deletions as well as additions.
//!
//! Lines are aimed at one fixed base configuration ([`base`]): its links,
//! addresses, routes and rules are what later lines name, change and
//! delete, so that most lines mean something to the kernel.
//!
//! Never generated: commands that print (`show`, `list`, `get`, `help`,
//! `save`; nor verbs or objects that abbreviate to one), since the kernel
//! side reads stdout as the sign of a line done; `\r` and other blanks
//! that iproute2 does not split on (the loader trims lines).

// `*rng.pick(..)` pins the element type `Rng::pick` is inferred with; the
// deref clippy would drop is what makes `&[&str]` literals infer.
#![allow(clippy::explicit_auto_deref)]

use super::rng::Rng;

/// The families of lines, as `FIBRE_ACCEPT_KINDS` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// `link add|set|del`, the GRE kinds included.
    Link,
    /// `addr add|replace|del`.
    Addr,
    /// `route add|replace|append|prepend|change|del`.
    Route,
    /// `rule add|del`.
    Rule,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 4] = [Kind::Link, Kind::Addr, Kind::Route, Kind::Rule];

    /// The name `FIBRE_ACCEPT_KINDS` uses.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Link => "link",
            Kind::Addr => "addr",
            Kind::Route => "route",
            Kind::Rule => "rule",
        }
    }

    /// The kind of a name, if it is one.
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name.trim())
    }
}

/// The base configuration every chunk of generated lines starts from: lo
/// up, two stand-in links (`dummy`, `ifb`) and a veth pair up, one link
/// left down, addresses of both families, routes in main and table 100,
/// and rules of both families.
pub fn base() -> Vec<String> {
    // Ordered so that kernel_diff's loader needs few `ip` runs: it splits
    // after each `link add`, after each block of `addr` lines and at each
    // change of family flag.
    [
        "link set lo up",
        "link add fd0 type dummy",
        "link add fd1 type ifb",
        "link add fdv0 type veth peer name fdv1",
        "link add fd2 type dummy",
        "link set fd0 up",
        "link set fd1 up",
        "link set fdv0 up",
        "link set fdv1 up",
        "addr add 10.1.0.1/24 dev fd0",
        "addr add 10.2.0.1/24 dev fdv0",
        "addr add 10.4.0.1/24 dev fd2",
        "addr add 2001:db8:1::1/64 dev fd0",
        "addr add 2001:db8:2::1/64 dev fdv0",
        "route add 10.9.0.0/16 via 10.1.0.5",
        "route add 10.10.0.0/16 dev fd0 table 100",
        "route add 10.11.0.0/16 via 10.2.0.9 metric 50",
        "rule add from 10.5.0.0/16 lookup 100 pref 100",
        "rule add fwmark 7 lookup 200 pref 200",
        "-6 route add 2001:db8:9::/48 via 2001:db8:1::5",
        "-6 route add 2001:db8:10::/48 dev fdv0 table 100",
        "-6 rule add from 2001:db8:5::/48 lookup 100 pref 100",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// `route get` queries asked after every chunk: into the base's subnets
/// and routes, into the prefixes generated lines use, and past them.
pub fn queries() -> Vec<String> {
    [
        "10.1.0.7",
        "10.2.0.9",
        "10.4.0.3",
        "10.9.1.1",
        "10.10.1.1",
        "10.11.1.1",
        "10.20.1.1",
        "10.20.200.1",
        "10.21.3.4",
        "192.0.2.1",
        "198.51.100.7",
        "8.8.8.8",
        "127.0.0.1",
        "10.10.1.1 from 10.5.0.1",
        "10.20.1.1 mark 7",
        "10.20.1.1 tos 0x10",
        "2001:db8:1::7",
        "2001:db8:2::9",
        "2001:db8:9::1",
        "2001:db8:10::1",
        "2001:db8:20:1::1",
        "2001:db8:21::1",
        "2001:db8:ff::1",
        "2001:db8:10::1 from 2001:db8:5::1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Links of the base configuration (and lo).
const BASE_LINKS: &[&str] = &["fd0", "fd1", "fdv0", "fdv1", "fd2", "lo"];
/// Names generated lines may give new links, and bad names.
const NEW_LINKS: &[&str] = &["fd5", "fd6", "fdv5", "fdv6", "g1", "g2"];
const BAD_NAMES: &[&str] = &[
    "nosuch",
    "abcdefghijklmnop",
    "abcdefghijklmno",
    "a/b",
    "a:b",
    "..",
    ".",
    "fd0 ",
];

/// IPv4 addresses worth naming: on the base's subnets, gateways, elsewhere.
const V4_HOSTS: &[&str] = &[
    "10.1.0.1",
    "10.1.0.5",
    "10.1.0.9",
    "10.2.0.1",
    "10.2.0.9",
    "10.4.0.1",
    "10.3.0.1",
    "192.0.2.1",
    "127.0.0.1",
    "0.0.0.0",
    "255.255.255.255",
    "224.0.0.1",
];
/// IPv4 prefixes routes and rules use.
const V4_PREFIXES: &[&str] = &[
    "10.20.0.0/16",
    "10.20.1.0/24",
    "10.21.0.0/16",
    "192.0.2.0/24",
    "198.51.100.0/24",
    "10.9.0.0/16",
    "10.10.0.0/16",
    "10.11.0.0/16",
    "10.5.0.0/16",
    "10.1.0.0/24",
    "0.0.0.0/0",
    "10.20.1.1/32",
    "224.0.0.0/4",
];
/// IPv4 spellings iproute2 and fibre must both read, or both refuse.
const V4_ODD: &[&str] = &[
    "10.20/16",
    "10/8",
    "010.20.0.0/16",
    "10.20.0.0/016",
    "10.20.0.0/0x10",
    "10.20.0.0/33",
    "10.20.0.0/-1",
    "10.20.0.0/",
    "10.20.0.300/24",
    "10..20.0/16",
    "1.2.3.4.5",
    "10.20.1.0/16",
    "0x0a140000/16",
    "10.20.0.0/16/8",
    "+10.20.0.0/16",
];
const V6_HOSTS: &[&str] = &[
    "2001:db8:1::1",
    "2001:db8:1::5",
    "2001:db8:1::9",
    "2001:db8:2::9",
    "2001:db8:3::1",
    "fe80::1",
    "::1",
    "::",
    "ff02::1",
];
const V6_PREFIXES: &[&str] = &[
    "2001:db8:20::/48",
    "2001:db8:20:1::/64",
    "2001:db8:21::/48",
    "2001:db8:9::/48",
    "2001:db8:10::/48",
    "2001:db8:5::/48",
    "2001:db8:1::/64",
    "::/0",
    "2001:db8:20:1::1/128",
    "ff00::/8",
];
const V6_ODD: &[&str] = &[
    "2001:db8:20::/129",
    "2001:db8:20::/048",
    "2001:db8:::/48",
    "2001:db8:20::g/48",
    "2001:db8:20::1/48",
    "2001:DB8:20::/48",
    "::ffff:10.20.0.0/112",
    "2001:db8:20::/0x30",
    "[2001:db8:20::]/48",
];
/// Numbers at and past the bounds of u8, u16 and u32, in every spelling
/// `strtoul` base 0 takes, and some it does not.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "7",
    "100",
    "255",
    "256",
    "1280",
    "1500",
    "65535",
    "65536",
    "4294967295",
    "4294967296",
    "18446744073709551616",
    "-1",
    "+5",
    "0x10",
    "0X1F",
    "0x",
    "0xffffffff",
    "0x100000000",
    "010",
    "08",
    "00",
    "0009",
    "1e3",
    "12abc",
    "1.5",
    " 5",
];
const TABLES: &[&str] = &[
    "100",
    "200",
    "main",
    "local",
    "default",
    "unspec",
    "0",
    "255",
    "254",
    "4294967295",
    "4294967296",
    "0x64",
    "0144",
    "mai",
    "all",
    "foo",
    "-1",
    "1e2",
];
const PROTOCOLS: &[&str] = &[
    "boot", "static", "kernel", "bgp", "ospf", "dhcp", "redirect", "ra", "zebra", "0", "4", "255",
    "256", "0x10", "99", "bogus", "stat",
];
const SCOPES: &[&str] = &[
    "global", "universe", "link", "host", "site", "nowhere", "0", "200", "253", "254", "255",
    "256", "0xfd", "lin", "bogus",
];
const TOSES: &[&str] = &[
    "0",
    "0x10",
    "10",
    "0x04",
    "4",
    "0x08",
    "0x18",
    "ff",
    "0xff",
    "100",
    "0x100",
    "zz",
    "0x3",
    "1",
    "lowdelay",
    "throughput",
    "0x",
];
const ROUTE_TYPES: &[&str] = &[
    "unicast",
    "local",
    "broadcast",
    "anycast",
    "multicast",
    "blackhole",
    "unreachable",
    "prohibit",
    "throw",
    "nat",
    "xresolve",
    "bogus",
];
/// Words no command takes.
const GARBAGE: &[&str] = &["bogus", "x", "--", "0", "#no", "\"\"", "'q'", "dev"];

/// A line under construction: words and the separators between them.
struct LineBuilder<'r> {
    rng: &'r mut Rng,
    words: Vec<String>,
}

impl<'r> LineBuilder<'r> {
    fn new(rng: &'r mut Rng) -> Self {
        Self {
            rng,
            words: Vec::new(),
        }
    }

    fn word(&mut self, word: &str) {
        self.words.push(word.to_string());
    }

    /// A keyword, sometimes abbreviated (iproute2 takes some abbreviations
    /// and not others; both sides must agree which) or misspelt.
    fn keyword(&mut self, keyword: &str) {
        let roll = self.rng.below(100);
        let word = if roll < 10 && keyword.len() > 2 {
            let len = self.rng.range(1, keyword.len() as u64 - 1) as usize;
            keyword[..len].to_string()
        } else if roll < 12 {
            keyword.to_uppercase()
        } else if roll < 13 {
            format!("{keyword}s")
        } else {
            keyword.to_string()
        };
        self.words.push(word);
    }

    /// Joins the words with spaces, sometimes tabs or runs of blanks, and
    /// sometimes blanks or a comment around the line.
    fn finish(self) -> String {
        let rng = self.rng;
        let mut line = String::new();
        if rng.chance(4) {
            let lead: &str = *rng.pick(&[" ", "\t", "   "]);
            line.push_str(lead);
        }
        for (i, word) in self.words.iter().enumerate() {
            if i > 0 {
                // `-4 `/`-6 ` are fibre's, not iproute2's: the loader
                // takes them with exactly one space after.
                let after_flag = i == 1 && matches!(self.words[0].as_str(), "-4" | "-6");
                let sep = if !after_flag && rng.chance(6) {
                    *rng.pick(&["  ", "\t", " \t ", "    "])
                } else {
                    " "
                };
                line.push_str(sep);
            }
            line.push_str(word);
        }
        if rng.chance(3) {
            let tail: &str = *rng.pick(&[" ", "\t", "  # trailing comment", " #"]);
            line.push_str(tail);
        }
        line
    }
}

/// One value from `valid` (mostly) or from the hostile spellings.
fn value<'a>(rng: &mut Rng, valid: &[&'a str], hostile: &[&'a str]) -> &'a str {
    if rng.chance(75) {
        *rng.pick(valid)
    } else {
        *rng.pick(hostile)
    }
}

fn number(rng: &mut Rng, typical: &[&'static str]) -> &'static str {
    value(rng, typical, NUMBERS)
}

fn device(rng: &mut Rng) -> &'static str {
    let roll = rng.below(100);
    if roll < 80 {
        *rng.pick(BASE_LINKS)
    } else if roll < 92 {
        *rng.pick(NEW_LINKS)
    } else {
        *rng.pick(BAD_NAMES)
    }
}

fn host(rng: &mut Rng, v6: bool) -> &'static str {
    if rng.chance(92) {
        *rng.pick(if v6 { V6_HOSTS } else { V4_HOSTS })
    } else {
        // A host of the other family, or one misspelt.
        *rng.pick(&[
            "10.1.0.300",
            "2001:db8:1::5",
            "10.1.0.5",
            "1.2.3",
            "fe80::1%fd0",
            "x",
        ])
    }
}

fn prefix(rng: &mut Rng, v6: bool) -> &'static str {
    let roll = rng.below(100);
    if roll < 78 {
        *rng.pick(if v6 { V6_PREFIXES } else { V4_PREFIXES })
    } else if roll < 84 {
        *rng.pick(&["default", "any", "all"])
    } else if roll < 97 {
        *rng.pick(if v6 { V6_ODD } else { V4_ODD })
    } else {
        // The other family's.
        *rng.pick(if v6 { V4_PREFIXES } else { V6_PREFIXES })
    }
}

/// `-4`/`-6` for a line of family `v6`: mostly none, sometimes the right
/// one, sometimes the wrong one.
fn family_flag(rng: &mut Rng, builder: &mut Vec<String>, v6: bool, rule: bool) {
    let roll = rng.below(100);
    // Rules are IPv4 unless told: IPv6 rules need the flag more often.
    let right = if v6 { "-6" } else { "-4" };
    let wrong = if v6 { "-4" } else { "-6" };
    if (rule && v6 && roll < 80) || roll < 15 {
        builder.push(right.to_string());
    } else if roll < 20 {
        builder.push(wrong.to_string());
    }
}

/// Generates `count` lines of the given kinds for chunk `index` of `seed`.
/// The same (seed, index, kinds, count) always gives the same lines.
pub fn lines(seed: u64, index: u64, kinds: &[Kind], count: usize) -> Vec<(Kind, String)> {
    let mut rng = Rng::new(seed ^ index.wrapping_mul(0xa076_1d64_78bd_642f));
    (0..count)
        .map(|_| {
            let kind = *rng.pick(kinds);
            (kind, line(&mut rng, kind))
        })
        .collect()
}

/// One line of `kind`.
pub fn line(rng: &mut Rng, kind: Kind) -> String {
    match kind {
        Kind::Link => link_line(rng),
        Kind::Addr => addr_line(rng),
        Kind::Route => route_line(rng),
        Kind::Rule => rule_line(rng),
    }
}

fn object_word(rng: &mut Rng, full: &str, abbreviations: &[&str], wrong: &str) -> String {
    let roll = rng.below(100);
    if roll < 80 {
        full.to_string()
    } else if roll < 97 {
        rng.pick(abbreviations).to_string()
    } else {
        wrong.to_string()
    }
}

fn verb_word(rng: &mut Rng, verb: &str, abbreviations: &[&str]) -> String {
    let roll = rng.below(100);
    if roll < 82 {
        verb.to_string()
    } else if roll < 97 && !abbreviations.is_empty() {
        rng.pick(abbreviations).to_string()
    } else {
        rng.pick(&["frob", "ins", "creat", "ADD"]).to_string()
    }
}

fn link_line(rng: &mut Rng) -> String {
    let mut flags = Vec::new();
    if rng.chance(5) {
        let v6 = rng.chance(50);
        family_flag(rng, &mut flags, v6, false);
    }
    let object = object_word(rng, "link", &["l", "li", "lin"], "links");
    let roll = rng.below(100);
    let mut b = LineBuilder::new(rng);
    for f in &flags {
        b.word(f);
    }
    b.word(&object);
    if roll < 45 {
        let verb = verb_word(b.rng, "add", &["a", "ad"]);
        b.word(&verb);
        link_add(&mut b);
    } else if roll < 85 {
        let verb = verb_word(b.rng, "set", &["s", "se", "change", "ch"]);
        b.word(&verb);
        if b.rng.chance(30) {
            b.word("dev");
        }
        let dev = device(b.rng);
        b.word(dev);
        let changes = b.rng.range(0, 3);
        for _ in 0..changes {
            match b.rng.below(5) {
                0 | 1 => b.keyword("up"),
                2 => b.keyword("down"),
                3 => {
                    b.keyword("mtu");
                    let n = number(b.rng, &["1280", "1500", "9000", "68", "67", "65536"]);
                    b.word(n);
                }
                _ => {
                    let g = *b.rng.pick(GARBAGE);
                    b.word(g);
                }
            }
        }
    } else {
        let verb = verb_word(b.rng, "del", &["d", "de", "delete"]);
        b.word(&verb);
        if b.rng.chance(30) {
            b.word("dev");
        }
        let dev = device(b.rng);
        b.word(dev);
        if b.rng.chance(5) {
            b.word("bogus");
        }
    }
    b.finish()
}

fn link_add(b: &mut LineBuilder<'_>) {
    match b.rng.below(10) {
        0 => b.word("name"),
        1 => b.word("dev"),
        _ => {}
    }
    let name = if b.rng.chance(80) {
        *b.rng.pick(NEW_LINKS)
    } else {
        device(b.rng)
    };
    b.word(name);
    for _ in 0..b.rng.below(3) {
        match b.rng.below(4) {
            0 => {
                b.keyword("mtu");
                let n = number(b.rng, &["1280", "1500", "9000", "68"]);
                b.word(n);
            }
            1 => b.keyword("up"),
            2 => b.keyword("down"),
            _ => {
                let g = *b.rng.pick(GARBAGE);
                b.word(g);
            }
        }
    }
    if b.rng.chance(4) {
        return; // no type at all
    }
    b.keyword("type");
    let kind = *b.rng.pick(&[
        "dummy",
        "dummy",
        "ifb",
        "veth",
        "veth",
        "gre",
        "ip6gre",
        "gretap",
        "ip6gretap",
        "vxlan",
        "dum",
    ]);
    b.word(kind);
    match kind {
        "veth" => {
            if b.rng.chance(90) {
                b.keyword("peer");
                if b.rng.chance(80) {
                    b.word("name");
                }
                let peer = *b
                    .rng
                    .pick(&["fdv6", "fdv5", "fd6", "fdv1", "abcdefghijklmnop"]);
                b.word(peer);
            }
        }
        "gre" | "gretap" | "ip6gre" | "ip6gretap" => gre_options(b, kind.starts_with("ip6")),
        _ => {
            if b.rng.chance(10) {
                let g = *b.rng.pick(GARBAGE);
                b.word(g);
            }
        }
    }
    if b.rng.chance(5) {
        let tail = *b.rng.pick(&["up", "mtu", "1500"]);
        b.word(tail);
    }
}

/// Remotes of GRE tunnels: unicast hosts of the tunnel's family, misspelt
/// ones, and the other family's.
///
/// Not `any`, `0.0.0.0`, `::`, multicast or broadcast remotes: iproute2
/// takes them (a point-to-multipoint or multicast tunnel), and fibre,
/// whose forwarding worker encapsulates towards the one remote a tunnel
/// has (`GreSpec::remote`), refuses them; which nexthop's address the
/// kernel would send such a tunnel's packets to (`ipgre_header`, the NBMA
/// path of `ip_tunnel_xmit`) is not modelled, so the two would only ever
/// differ. `remote 224.0.0.1` without `local`, which both refuse, is kept.
fn gre_remote(rng: &mut Rng, v6: bool) -> &'static str {
    if rng.chance(90) {
        *rng.pick(if v6 {
            &[
                "2001:db8:1::1",
                "2001:db8:1::9",
                "2001:db8:2::9",
                "fe80::1",
                "::1",
            ][..]
        } else {
            &[
                "10.1.0.1",
                "10.1.0.9",
                "10.2.0.1",
                "10.4.0.1",
                "192.0.2.1",
                "127.0.0.1",
            ][..]
        })
    } else {
        *rng.pick(&["10.1.0.300", "2001:db8:1::5", "10.1.0.5", "1.2.3", "x"])
    }
}

/// The options of a GRE `link add`, in random order, always with a
/// unicast `remote` as their last word when none came before: see
/// [`gre_remote`] for why no tunnel without one is made.
///
/// The options iproute2 takes and fibre does not model (`external`,
/// `nopmtudisc`, `fwmark N`, `dev D` of a device that exists) are not
/// made either: each changes what the kernel puts on the wire (metadata
/// mode, DF, the outer lookup's mark and device), fibre's forwarding
/// worker has none of it, and fibre refuses them while ip takes them.
/// Their refusals that both share are kept: `fwmark` with a value that is
/// no number, `dev` of a device no one has.
fn gre_options(b: &mut LineBuilder<'_>, v6: bool) {
    let options = b.rng.range(0, 5);
    for _ in 0..options {
        match b.rng.below(12) {
            0..=2 => {
                b.keyword("remote");
                let a = gre_remote(b.rng, v6);
                b.word(a);
            }
            3 => {
                b.keyword("local");
                let a = host(b.rng, v6);
                b.word(a);
            }
            4 => {
                let k = *b.rng.pick(&["key", "ikey", "okey"]);
                b.keyword(k);
                let n = value(b.rng, &["5", "1.2.3.4", "0x10"], NUMBERS);
                b.word(n);
            }
            5 => {
                let w = *b.rng.pick(&[
                    "csum", "icsum", "ocsum", "nocsum", "seq", "iseq", "oseq", "noseq", "nokey",
                    "noikey", "nookey", "noicsum",
                ]);
                b.keyword(w);
            }
            6 => {
                let k = *b.rng.pick(&["ttl", "hoplimit", "hlim"]);
                b.keyword(k);
                let n = value(b.rng, &["64", "inherit", "255", "1"], NUMBERS);
                b.word(n);
            }
            7 => {
                let k = *b.rng.pick(&["tos", "tclass", "dsfield"]);
                b.keyword(k);
                let n = value(b.rng, &["inherit", "0x10", "10"], TOSES);
                b.word(n);
            }
            8 => {
                let (w, v) = *b.rng.pick(&[
                    ("pmtudisc", None),
                    ("fwmark", Some("bogus")),
                    ("fwmark", Some("0x1g")),
                    ("dev", Some("nodev0")),
                ]);
                b.word(w);
                if let Some(v) = v {
                    b.word(v);
                }
            }
            _ => {
                // No comment: one would hide the `remote` after it.
                let g = *b.rng.pick(GARBAGE);
                b.word(if g.starts_with('#') { "bogus" } else { g });
            }
        }
    }
    b.word("remote");
    let a = gre_remote(b.rng, v6);
    b.word(a);
}

fn addr_line(rng: &mut Rng) -> String {
    let v6 = rng.chance(40);
    let mut flags = Vec::new();
    family_flag(rng, &mut flags, v6, false);
    let object = object_word(rng, "addr", &["a", "ad", "address", "addre"], "addrs");
    let verb_roll = rng.below(100);
    let mut b = LineBuilder::new(rng);
    for f in &flags {
        b.word(f);
    }
    b.word(&object);
    let verb = if verb_roll < 50 {
        verb_word(b.rng, "add", &["a", "ad"])
    } else if verb_roll < 65 {
        verb_word(b.rng, "replace", &["r", "rep", "change", "chg"])
    } else {
        verb_word(b.rng, "del", &["d", "de", "delete"])
    };
    b.word(&verb);
    let local = if b.rng.chance(85) {
        let host = if v6 {
            *b.rng.pick(&[
                "2001:db8:1::1",
                "2001:db8:1::2",
                "2001:db8:20::1",
                "2001:db8:2::1",
                "fe80::9",
            ])
        } else {
            *b.rng.pick(&[
                "10.1.0.1",
                "10.1.0.2",
                "10.20.0.1",
                "10.2.0.1",
                "10.1.0.255",
                "127.0.0.1",
            ])
        };
        let len = if v6 {
            *b.rng
                .pick(&["/64", "/48", "/128", "", "/129", "/064", "/0"])
        } else {
            *b.rng
                .pick(&["/24", "/16", "/32", "", "/31", "/33", "/024", "/0", "/30"])
        };
        format!("{host}{len}")
    } else {
        prefix(b.rng, v6).to_string()
    };
    if b.rng.chance(10) {
        b.word("local");
    }
    b.word(&local);
    let options = b.rng.range(0, 3);
    let mut dev_given = false;
    for _ in 0..options {
        match b.rng.below(13) {
            0 => {
                let k = *b.rng.pick(&["peer", "remote"]);
                b.keyword(k);
                let p = if b.rng.chance(50) {
                    host(b.rng, v6)
                } else {
                    prefix(b.rng, v6)
                };
                b.word(p);
            }
            1 => {
                let k = *b.rng.pick(&["broadcast", "brd"]);
                b.keyword(k);
                let v = *b.rng.pick(&["+", "-", "10.1.0.255", "2001:db8::ff", "x"]);
                b.word(v);
            }
            2 => {
                b.keyword("scope");
                let s = value(b.rng, &["global", "link", "host", "site", "0"], SCOPES);
                b.word(s);
            }
            3 => {
                b.keyword("label");
                let l = *b
                    .rng
                    .pick(&["fd0:1", "fd0", "fdv0:x", "other", "fd0:abcdefghijklmn"]);
                b.word(l);
            }
            4 => {
                let k = *b.rng.pick(&["metric", "priority", "preference"]);
                b.keyword(k);
                let n = number(b.rng, &["10", "0", "1024"]);
                b.word(n);
            }
            5 => {
                // Not `autojoin` on an IPv6 multicast address (`ff00::/8`
                // from the prefixes): ipv6_add_addr takes one with
                // IFA_F_MCAUTOJOIN, joining its group, and fibre, which
                // models no multicast addresses, refuses it, so ip
                // accepting it is always a difference. Its other flags,
                // with which both refuse, are kept.
                let multicast_local = local.starts_with("ff");
                let flags: &[&str] = if multicast_local {
                    &["noprefixroute", "nodad", "home", "optimistic", "mngtmpaddr"]
                } else {
                    &[
                        "noprefixroute",
                        "nodad",
                        "home",
                        "optimistic",
                        "mngtmpaddr",
                        "autojoin",
                    ]
                };
                let w = *b.rng.pick(flags);
                b.keyword(w);
            }
            6 => {
                let k = *b.rng.pick(&["valid_lft", "preferred_lft"]);
                b.keyword(k);
                // Not a finite valid_lft on an IPv6 address: inet6_addr_add
                // gives its prefix route RTF_EXPIRES (`expires 99sec` in
                // `route show`), and fibre's routes have no expiry, so ip
                // accepting one is always a difference. Infinite ones, and
                // those both refuse, are kept.
                let v = if k == "valid_lft" && local.contains(':') {
                    *b.rng
                        .pick(&["forever", "4294967295", "0", "x", "4294967296"])
                } else {
                    value(b.rng, &["forever", "100", "0"], NUMBERS)
                };
                b.word(v);
            }
            7 => {
                let w = *b.rng.pick(&["anycast", "proto", "tentative"]);
                b.word(w);
                if w != "tentative" {
                    b.word("2001:db8:1::");
                }
            }
            8 => {
                let g = *b.rng.pick(GARBAGE);
                b.word(g);
            }
            _ => {
                if !dev_given {
                    b.keyword("dev");
                    let d = device(b.rng);
                    b.word(d);
                    dev_given = true;
                }
            }
        }
    }
    if !dev_given && b.rng.chance(92) {
        b.word("dev");
        let d = if b.rng.chance(85) {
            *b.rng.pick(&["fd0", "fd0", "fdv0", "fd1", "fd2", "lo"])
        } else {
            device(b.rng)
        };
        b.word(d);
    }
    b.finish()
}

fn route_line(rng: &mut Rng) -> String {
    let v6 = rng.chance(40);
    let mut flags = Vec::new();
    family_flag(rng, &mut flags, v6, false);
    let object = object_word(rng, "route", &["r", "ro", "rou", "rout"], "routes");
    let verb_roll = rng.below(100);
    let mut b = LineBuilder::new(rng);
    for f in &flags {
        b.word(f);
    }
    b.word(&object);
    let deleting = verb_roll >= 80;
    let verb = match verb_roll {
        0..=44 => verb_word(b.rng, "add", &["a", "ad"]),
        45..=56 => verb_word(b.rng, "replace", &["r", "re", "rep"]),
        57..=63 => verb_word(b.rng, "append", &["ap", "app"]),
        64..=69 => verb_word(b.rng, "prepend", &["p", "pre"]),
        70..=79 => verb_word(b.rng, "change", &["c", "ch", "chg"]),
        _ => verb_word(b.rng, "del", &["d", "de", "delete"]),
    };
    b.word(&verb);
    let kind = if b.rng.chance(15) {
        Some(*b.rng.pick(ROUTE_TYPES))
    } else {
        None
    };
    let to = kind.is_none() && b.rng.chance(6);
    let dst = prefix(b.rng, v6);
    // The family iproute2 ends with: the destination's (a prefix of the
    // other family than the flag's intent is generated too); for `all`,
    // `default` and `any`, the flag's, and without one IPv4 (get_addr_1:
    // AF_UNSPEC reads them as AF_INET), whatever the line was meant as.
    let family_v6 =
        dst.contains(':') || (!dst.contains('.') && flags.first().is_some_and(|f| f == "-6"));
    // `default`, `all` and `any` without a family flag leave the family to
    // a later address (get_prefix_1 gives them AF_UNSPEC; iproute_modify
    // takes a `via`'s family then): what kept a line IPv4 or IPv6 for the
    // options below is not known here.
    let family_known = dst.contains(':') || dst.contains('.') || !flags.is_empty();
    match kind {
        Some(t) => b.word(t),
        None if to => b.word("to"),
        None => {}
    }
    b.word(dst);
    let options = if deleting {
        b.rng.range(0, 2)
    } else {
        b.rng.range(0, 4)
    };
    let mut has_path = false;
    for _ in 0..options {
        match b.rng.below(17) {
            0..=2 => {
                b.keyword("via");
                let family_word = b
                    .rng
                    .chance(8)
                    .then(|| *b.rng.pick(&["inet", "inet6", "mpls"]));
                let gw = host(b.rng, v6);
                // Not `via inet6 G` with an IPv6 G on an IPv4 route but in
                // a delete: IPv4 routes via IPv6 gateways (RFC 5549,
                // RTA_VIA) are outside fibre's model, and the kernel takes
                // one whenever G is reachable over IPv6 (else
                // fib_check_nh_v6_gw's "No route to host"), so whatever
                // fibre answered would differ on some state.
                let family_word = match family_word {
                    Some("inet6") if !deleting && !family_v6 && gw.contains(':') => Some("inet"),
                    other => other,
                };
                if let Some(f) = family_word {
                    b.word(f);
                }
                b.word(gw);
                has_path = true;
            }
            3..=5 => {
                let k = if b.rng.chance(85) { "dev" } else { "oif" };
                b.keyword(k);
                let d = device(b.rng);
                b.word(d);
                has_path = true;
            }
            6 => {
                let k = *b.rng.pick(&["metric", "priority", "preference"]);
                b.keyword(k);
                let n = number(b.rng, &["10", "0", "1024", "50"]);
                b.word(n);
            }
            7 => {
                b.keyword("table");
                let t = *b.rng.pick(TABLES);
                b.word(t);
            }
            8 => {
                let k = *b.rng.pick(&["proto", "protocol"]);
                b.keyword(k);
                let p = *b.rng.pick(PROTOCOLS);
                b.word(p);
            }
            9 => {
                b.keyword("scope");
                let mut s = *b.rng.pick(SCOPES);
                // Not scope nowhere on an IPv4 nat or xresolve add: with no
                // path fib_create_info installs that type (its props' error
                // is only for lookups), which fibre's routes do not have;
                // with any lower scope the kernel refuses it, as fibre does.
                if matches!(kind, Some("nat" | "xresolve"))
                    && !deleting
                    && matches!(s, "nowhere" | "255")
                {
                    s = "host";
                }
                b.word(s);
            }
            10 => {
                b.keyword("src");
                let a = host(b.rng, v6);
                b.word(a);
            }
            11 => {
                b.keyword("mtu");
                if b.rng.chance(25) {
                    b.word("lock");
                }
                let n = number(b.rng, &["1400", "1280", "9000"]);
                b.word(n);
            }
            12 => {
                let k = *b.rng.pick(&["tos", "dsfield"]);
                b.keyword(k);
                let t = *b.rng.pick(TOSES);
                b.word(t);
            }
            13 => {
                b.keyword("onlink");
                has_path = true;
            }
            14 => {
                // A multipath route; its clauses end the line.
                for _ in 0..b.rng.range(1, 3) {
                    b.keyword("nexthop");
                    if b.rng.chance(85) {
                        b.word("via");
                        let gw = host(b.rng, v6);
                        b.word(gw);
                    }
                    if b.rng.chance(60) {
                        b.word("dev");
                        let d = device(b.rng);
                        b.word(d);
                    }
                    if b.rng.chance(40) {
                        b.keyword("weight");
                        let w = number(b.rng, &["1", "2", "256", "257", "0"]);
                        b.word(w);
                    }
                    if b.rng.chance(10) {
                        b.word("onlink");
                    }
                }
                return b.finish();
            }
            15 => {
                let w = *b
                    .rng
                    .pick(&["realm", "advmss", "from", "expires", "weight", "pref"]);
                b.word(w);
                // Not `realm 5` on IPv4 nor `expires 5` on IPv6 (but in a
                // delete, which compares neither without dev or via):
                // the kernel keeps them (`realm 5` in `route show`,
                // `expires 4sec` counting down), fibre's routes have
                // neither, and fibre refuses them once the kernel would
                // take the rest of the line (crates/fibre-fib/tests/
                // accept_parity.rs), so ip accepting one is always a
                // difference. Their refusals both give are kept.
                // (With the family left to a later `via`, both, seed
                // 1796593789269475911: `route add default via 2001:db8:1::5
                // expires 5` is an IPv6 route.)
                let unmodelled = match w {
                    "realm" => !family_v6 || !family_known,
                    "expires" => family_v6 || !family_known,
                    _ => false,
                };
                let value = match (unmodelled && !deleting, w) {
                    // `expires 0` is an expiry too (addrconf_finite_timeout).
                    (true, "expires") => *b.rng.pick(&["x", "4294967296"]),
                    (true, _) => *b.rng.pick(&["0", "x", "4294967296"]),
                    (false, _) => "5",
                };
                b.word(value);
            }
            _ => {
                let g = *b.rng.pick(GARBAGE);
                b.word(g);
            }
        }
    }
    if !has_path && !deleting && b.rng.chance(75) {
        b.word("dev");
        let d = *b.rng.pick(&["fd0", "fd0", "fdv0", "fd1", "fd2"]);
        b.word(d);
    }
    b.finish()
}

fn rule_line(rng: &mut Rng) -> String {
    let v6 = rng.chance(40);
    let mut flags = Vec::new();
    family_flag(rng, &mut flags, v6, true);
    let object = object_word(rng, "rule", &["ru", "rul"], "rules");
    let deleting = rng.chance(40);
    let mut b = LineBuilder::new(rng);
    for f in &flags {
        b.word(f);
    }
    b.word(&object);
    let verb = if deleting {
        verb_word(b.rng, "del", &["d", "de", "delete"])
    } else {
        verb_word(b.rng, "add", &["a", "ad"])
    };
    b.word(&verb);
    if deleting && b.rng.chance(50) {
        // Aimed at a rule that is there: the base's, or the defaults.
        let target = *b.rng.pick(&[
            "pref 100",
            "pref 200",
            "pref 32766",
            "pref 32767",
            "pref 0",
            "from 10.5.0.0/16 lookup 100",
            "from 2001:db8:5::/48 lookup 100",
            "fwmark 7 lookup 200",
            "lookup main",
            "lookup local",
            "pref 100 lookup 100",
            "pref 100 lookup 101",
            "from all",
            "",
            "priority 0x64",
            "pref 0100",
            "table default",
        ]);
        for w in target.split_whitespace() {
            b.word(w);
        }
        if b.rng.chance(30) {
            let extra = b.rng.range(1, 2);
            for _ in 0..extra {
                rule_selector(&mut b, v6);
            }
        }
        return b.finish();
    }
    let options = b.rng.range(0, 4);
    for _ in 0..options {
        rule_selector(&mut b, v6);
    }
    b.finish()
}

fn rule_selector(b: &mut LineBuilder<'_>, v6: bool) {
    match b.rng.below(16) {
        0 => b.keyword("not"),
        1 | 2 => {
            let k = *b.rng.pick(&["from", "to"]);
            b.keyword(k);
            let p = if b.rng.chance(20) {
                host(b.rng, v6)
            } else {
                prefix(b.rng, v6)
            };
            b.word(p);
        }
        3 | 4 => {
            let k = *b.rng.pick(&["pref", "priority", "order"]);
            b.keyword(k);
            let n = number(b.rng, &["100", "300", "32765", "0", "1000"]);
            b.word(n);
        }
        5 => {
            let k = *b.rng.pick(&["tos", "dsfield"]);
            b.keyword(k);
            let t = *b.rng.pick(TOSES);
            b.word(t);
        }
        6 => {
            b.keyword("fwmark");
            let m = *b.rng.pick(&[
                "7",
                "0x10",
                "0x10/0xff",
                "7/0",
                "51820",
                "0xffffffff",
                "0x100000000",
                "7/",
                "/7",
                "-1",
                "010",
                "x",
            ]);
            b.word(m);
        }
        7 | 8 => {
            let k = *b.rng.pick(&["lookup", "table"]);
            b.keyword(k);
            let t = *b.rng.pick(TABLES);
            b.word(t);
        }
        9 => {
            b.keyword("goto");
            let n = number(b.rng, &["200", "32766", "1000"]);
            b.word(n);
        }
        10 => {
            let k = *b.rng.pick(&["suppress_prefixlength", "sup_pl"]);
            b.keyword(k);
            let n = number(b.rng, &["0", "8", "32", "128", "129"]);
            b.word(n);
        }
        11 => {
            let k = *b.rng.pick(&["suppress_ifgroup", "sup_group"]);
            b.keyword(k);
            let n = value(b.rng, &["default", "0", "5"], NUMBERS);
            b.word(n);
        }
        12 => {
            let k = *b.rng.pick(&["iif", "oif", "dev"]);
            b.keyword(k);
            let d = device(b.rng);
            b.word(d);
        }
        13 => {
            let k = *b.rng.pick(&["protocol", "proto"]);
            b.keyword(k);
            let p = *b.rng.pick(PROTOCOLS);
            b.word(p);
        }
        14 => {
            let a = *b.rng.pick(&[
                "blackhole",
                "unreachable",
                "prohibit",
                "nop",
                "type blackhole",
                "type nop",
                "type unicast",
                "type bogus",
            ]);
            for w in a.split_whitespace() {
                b.keyword(w);
            }
        }
        _ => {
            let g = *b
                .rng
                .pick(&["bogus", "ipproto", "sport", "uidrange", "l3mdev", "realms"]);
            b.word(g);
            if g != "bogus" && g != "l3mdev" {
                b.word("5");
            }
        }
    }
}

/// True for a `link add` of a GRE kind: a line only iproute2's parser can
/// judge when the kernel has no GRE module.
pub fn is_gre_line(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    // iplink_parse takes `type` abbreviated down to `ty` (`t` is txqueuelen).
    words.windows(2).any(|w| {
        matches!(w[0], "ty" | "typ" | "type")
            && matches!(w[1], "gre" | "ip6gre" | "gretap" | "ip6gretap")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_lines() {
        let a = lines(7, 3, &Kind::ALL, 200);
        assert_eq!(a, lines(7, 3, &Kind::ALL, 200));
        assert_ne!(a, lines(8, 3, &Kind::ALL, 200));
        assert_ne!(a, lines(7, 4, &Kind::ALL, 200));
    }

    #[test]
    fn kinds_select_what_is_generated() {
        for kind in Kind::ALL {
            let generated = lines(11, 0, &[kind], 300);
            let object = |line: &str| {
                line.split_whitespace()
                    .find(|w| !w.starts_with('-'))
                    .unwrap_or("")
                    .to_string()
            };
            let expected: &[&str] = match kind {
                Kind::Link => &["link", "l", "li", "lin", "links"],
                Kind::Addr => &["addr", "a", "ad", "address", "addre", "addrs"],
                Kind::Route => &["route", "r", "ro", "rou", "rout", "routes"],
                Kind::Rule => &["rule", "ru", "rul", "rules"],
            };
            for (generated_kind, line) in &generated {
                assert_eq!(*generated_kind, kind);
                assert!(
                    expected.contains(&object(line).as_str()),
                    "{kind:?}: {line}"
                );
            }
        }
        assert_eq!(Kind::from_name(" rule"), Some(Kind::Rule));
        assert_eq!(Kind::from_name("links"), None);
    }

    #[test]
    fn every_command_and_keyword_is_generated() {
        let generated: String = lines(1, 0, &Kind::ALL, 20_000)
            .into_iter()
            .map(|(_, l)| l + "\n")
            .collect();
        let words: std::collections::HashSet<&str> = generated.split_whitespace().collect();
        for keyword in [
            "add",
            "del",
            "set",
            "replace",
            "append",
            "prepend",
            "change",
            "dummy",
            "ifb",
            "veth",
            "peer",
            "gre",
            "ip6gre",
            "gretap",
            "ip6gretap",
            "remote",
            "local",
            "key",
            "ikey",
            "okey",
            "csum",
            "ttl",
            "tos",
            "via",
            "dev",
            "metric",
            "table",
            "proto",
            "scope",
            "src",
            "mtu",
            "lock",
            "onlink",
            "nexthop",
            "weight",
            "from",
            "to",
            "pref",
            "fwmark",
            "lookup",
            "goto",
            "suppress_prefixlength",
            "suppress_ifgroup",
            "iif",
            "oif",
            "not",
            "blackhole",
            "unreachable",
            "prohibit",
            "nop",
            "protocol",
            "peer",
            "brd",
            "label",
            "noprefixroute",
            "valid_lft",
            "-4",
            "-6",
            "0x10",
            "010",
            "4294967296",
            "up",
            "down",
        ] {
            assert!(words.contains(keyword), "never generated: {keyword}");
        }
        assert!(generated.contains('\t'), "no odd whitespace");
    }

    #[test]
    fn no_line_prints_or_breaks_the_batch() {
        for (_, line) in lines(5, 0, &Kind::ALL, 20_000) {
            let words: Vec<&str> = line.split_whitespace().collect();
            let at = words
                .iter()
                .position(|w| !w.starts_with('-'))
                .expect("an object");
            let verb = words.get(at + 1).copied().unwrap_or("");
            for printing in [
                "show", "list", "lst", "get", "help", "save", "flush", "monitor",
            ] {
                assert!(
                    verb.len() < 2 || !printing.starts_with(verb),
                    "{line}: {verb} abbreviates {printing}"
                );
            }
            assert!(!line.contains('\r') && !line.contains('\n'), "{line:?}");
        }
    }

    #[test]
    fn no_ipv4_route_is_added_via_an_ipv6_gateway() {
        let mut inet6_kept = 0;
        for (_, line) in lines(7, 0, &[Kind::Route], 40_000) {
            let words: Vec<&str> = line.split_whitespace().collect();
            let Some(at) = words
                .windows(3)
                .position(|w| w[0] == "via" && w[1] == "inet6")
            else {
                continue;
            };
            inet6_kept += 1;
            let deleting = words
                .iter()
                .any(|w| ["d", "de", "del", "delete"].contains(w));
            // The family: `-4`, or an IPv4 destination before the `via`
            // (else the gateway's, which makes the route IPv6).
            // (An IPv6 word before it under `-4` is iproute2's refusal.)
            let before = &words[..at];
            let v4_route = !words.contains(&"-6")
                && !before.iter().any(|w| w.contains(':'))
                && (words.contains(&"-4") || before.iter().any(|w| w.contains('.')));
            assert!(
                deleting || !v4_route || !words[at + 2].contains(':'),
                "{line}"
            );
        }
        assert!(inet6_kept > 0, "`via inet6` is no longer generated at all");
    }

    #[test]
    fn gre_lines_are_told_apart() {
        assert!(is_gre_line("link add g1 type gre remote 10.1.0.5"));
        assert!(is_gre_line("l a g1\ttype ip6gretap"));
        assert!(is_gre_line("link add fdv5 typ ip6gre remote ::1"));
        assert!(is_gre_line("lin add fdv6 ty gre remote 10.1.0.5"));
        assert!(!is_gre_line("link add fdv6 t gre"));
        assert!(!is_gre_line("link add fd5 type dummy"));
        assert!(!is_gre_line("route add 10.0.0.0/8 dev gre"));
    }
}
