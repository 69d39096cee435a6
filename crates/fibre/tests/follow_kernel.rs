//! `fibre follow` keeps the FIB equal to a namespace's kernel: after each
//! scenario driven with `ip` in namespace B (links over veth, addresses,
//! routes incl. multipath and other tables, replace/append/change/prepend,
//! rules, link down/up, carrier loss, address removal, nexthop objects and
//! groups and their deletion, link deletion), fibre's `route show table
//! all -j` and `rule show -j` (both families) equal the kernel's, object
//! for object and in order. Then random orders of such changes, over a few
//! seeds (`FIBRE_FOLLOW_SEEDS`, 3; `FIBRE_FOLLOW_SEED` for one).
//!
//! After each, also the `route get` answers: queries drawn from the
//! kernel's routes (both families, some `from`, `iif`, `oif`, `mark`) asked of
//! both, compared as the kernel differential test compares them (see
//! `support/route_get.rs`).
//!
//! fibre's FIB has no nexthop objects: a route over one is followed with
//! the object's paths, so the kernel's `nhid` is left out of the
//! comparison (everything else of the route, its paths included, counts).
//!
//! Needs root and `ip`; without them it says why and passes, and
//! `FIBRE_REQUIRE_TOOLS=1` (CI) makes that a failure.

#[path = "kernel_diff/addr.rs"]
#[allow(dead_code)] // shared with kernel_diff.rs; this test uses a part
mod addr;
#[path = "kernel_diff/answer.rs"]
#[allow(dead_code)]
mod answer;
#[path = "kernel_diff/compare.rs"]
#[allow(dead_code)]
mod compare;
#[path = "support/follower.rs"]
mod follower;
#[path = "kernel_diff/kernel.rs"]
#[allow(dead_code)]
mod kernel;
#[path = "support/netns.rs"]
mod netns;
#[path = "kernel_diff/process.rs"]
mod process;
#[path = "support/route_get.rs"]
mod route_get;

use fibre_testkit::SplitMix64;
use follower::{assert_same, differences, Follower};
use netns::Namespace;

/// What is compared after each step.
const SHOWN: &[&str] = &["route show table all", "rule show", "-6 rule show"];

/// `route get` queries asked of both after each step.
const QUERIES: usize = 80;

/// B is a router (forwarding on, as fibre's FIB models one: subnet-router
/// anycast routes exist), with DAD off so that addresses are usable, and
/// their local routes made, at once.
const ROUTER: &[(&str, &str)] = &[
    ("net/ipv4/ip_forward", "1"),
    ("net/ipv6/conf/all/forwarding", "1"),
    ("net/ipv6/conf/default/forwarding", "1"),
    ("net/ipv6/conf/all/accept_dad", "0"),
    ("net/ipv6/conf/default/accept_dad", "0"),
];

fn unavailable_reason() -> Option<String> {
    match fibre_testkit::effective_uid() {
        Some(0) => {}
        Some(uid) => return Some(format!("not root (effective uid {uid})")),
        None => return Some("cannot read the effective uid".into()),
    }
    fibre_testkit::missing_tool(&["ip"])
}

/// B with lo, v0 and v1 up, each a veth whose peer (p0, p1) is in A.
fn pair(prefix: &str) -> Result<(Namespace, Namespace), String> {
    let b = Namespace::create(prefix, "b", ROUTER)?;
    let a = Namespace::create(prefix, "a", &[("net/ipv6/conf/default/accept_dad", "0")])?;
    for (inside, outside) in [("v0", "p0"), ("v1", "p1")] {
        b.ip(&[
            "link",
            "add",
            inside,
            "type",
            "veth",
            "peer",
            "name",
            outside,
            "netns",
            a.name(),
        ])?;
        b.ip(&["link", "set", inside, "up"])?;
        a.ip(&["link", "set", outside, "up"])?;
    }
    b.ip(&["link", "set", "lo", "up"])?;
    Ok((b, a))
}

/// Runs `lines` in B (`ip -batch`, `-6` lines with `ip -6`), then compares.
fn step(b: &Namespace, follower: &mut Follower, name: &str, lines: &[&str]) {
    b.batch(lines).unwrap_or_else(|e| panic!("{name}: {e}"));
    check(b, follower, name);
}

fn check(b: &Namespace, follower: &mut Follower, name: &str) {
    assert_same(b, follower, SHOWN, &["nhid"], name);
    assert_count_matches(b, follower, name);
    // A seed of the step's own, so that each step asks other queries.
    let seed = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    route_get::assert_same_answers(b, follower, seed, QUERIES, name);
}

/// The follower's own `.count` query (the bench's cheap probe) names as
/// many routes of table main per family as the kernel lists.
fn assert_count_matches(b: &Namespace, follower: &mut Follower, name: &str) {
    let kernel = |family: &str| {
        let text = b
            .ip(&["-j", family, "route", "show"])
            .expect("ip route show");
        let routes: serde_json::Value = serde_json::from_str(text.trim()).expect("ip's JSON");
        routes.as_array().map_or(0, Vec::len)
    };
    let expected = format!("ipv4 {} ipv6 {}\n", kernel("-4"), kernel("-6"));
    let answer = follower.query(".count").expect("fibre answers .count");
    assert_eq!(
        answer, expected,
        "{name}: .count against the kernel's table main"
    );
}

#[test]
fn follow_matches_the_kernel_after_each_scenario() {
    if let Some(reason) = unavailable_reason() {
        fibre_testkit::unavailable("follow_matches_the_kernel_after_each_scenario", &reason);
        return;
    }
    let (b, a) = pair("ffk").expect("namespaces");
    // Some state before the follower starts: the start's dump takes it.
    b.batch(&[
        "addr add 10.0.0.1/24 dev v0",
        "route add 10.9.0.0/16 via 10.0.0.2",
    ])
    .expect("first state");
    let mut f = follower::start(&b, &["--verbose"]).expect("fibre follow starts");
    check(&b, &mut f, "the start's dump");
    step(
        &b,
        &mut f,
        "addresses",
        &[
            "addr add 10.1.0.1/24 dev v1",
            "addr add 10.0.0.100/24 dev v0",
            "-6 addr add 2001:db8::1/64 dev v0",
            "-6 addr add 2001:db8:1::1/64 dev v1",
            "addr add 192.168.50.1/32 dev lo",
        ],
    );
    step(
        &b,
        &mut f,
        "routes",
        &[
            "route add 10.10.0.0/16 via 10.0.0.2",
            "route add 10.11.0.0/16 via 10.1.0.2 metric 10",
            "route add 10.12.0.0/16 dev v1 proto static",
            "route add 10.13.0.0/16 nexthop via 10.0.0.2 weight 2 nexthop via 10.1.0.2",
            "route add blackhole 10.14.0.0/16",
            "route add unreachable 10.15.0.0/16 table 100",
            "route add prohibit 10.16.0.0/16 table 100",
            "route add 10.17.0.0/16 via 10.0.0.2 src 10.0.0.100",
            "route add 10.18.0.0/16 via 10.0.0.2 mtu 1400 advmss 1300 proto bird",
            "route add default via 10.0.0.2",
            "-6 route add 2001:db8:10::/48 via 2001:db8::2",
            "-6 route add 2001:db8:11::/48 nexthop via 2001:db8::2 nexthop via 2001:db8:1::2",
            "-6 route add 2001:db8:12::/48 dev v1 metric 100 table 100",
            "-6 route add blackhole 2001:db8:13::/48",
        ],
    );
    step(
        &b,
        &mut f,
        "replace, append, change, prepend, delete",
        &[
            "route replace 10.10.0.0/16 via 10.1.0.2",
            "route append 10.12.0.0/16 dev v0 proto static",
            "route change 10.11.0.0/16 via 10.0.0.2 metric 10",
            "route del 10.14.0.0/16",
            "route prepend 10.19.0.0/16 via 10.0.0.2",
            "route prepend 10.19.0.0/16 via 10.1.0.2",
            "-6 route append 2001:db8:10::/48 via 2001:db8:1::2",
            "-6 route del 2001:db8:11::/48 via 2001:db8::2",
            "-6 route replace 2001:db8:12::/48 dev v0 metric 100 table 100",
        ],
    );
    step(
        &b,
        &mut f,
        "rules",
        &[
            "rule add from 10.0.0.0/24 table 100 pref 100",
            "rule add to 10.20.0.0/16 lookup 100 pref 200",
            "rule add fwmark 0x10/0xff table 100 pref 300",
            "rule add iif v1 table main pref 400",
            "rule add from 10.1.0.0/24 blackhole pref 500",
            "-6 rule add from 2001:db8::/64 table 100 pref 100",
            "rule del pref 200",
        ],
    );
    step(&b, &mut f, "link down", &["link set v1 down"]);
    step(
        &b,
        &mut f,
        "link up again",
        &[
            "link set v1 up",
            "route add 10.21.0.0/16 via 10.1.0.2 metric 10",
        ],
    );
    a.ip(&["link", "set", "p0", "down"]).expect("peer down");
    check(&b, &mut f, "carrier lost (the peer went down)");
    a.ip(&["link", "set", "p0", "up"]).expect("peer up");
    check(&b, &mut f, "carrier back");
    step(
        &b,
        &mut f,
        "a secondary address removed",
        &["addr del 10.0.0.100/24 dev v0"],
    );
    step(
        &b,
        &mut f,
        "nexthop objects and a group",
        &[
            "nexthop add id 1 via 10.1.0.2 dev v1",
            "nexthop add id 2 via 10.1.0.3 dev v1",
            "nexthop add id 3 dev v1",
            "nexthop add id 10 group 1/2",
            "route add 10.30.0.0/16 nhid 1",
            "route add 10.31.0.0/16 nhid 10",
            "route add 10.32.0.0/16 nhid 3",
        ],
    );
    step(&b, &mut f, "a group member deleted", &["nexthop del id 2"]);
    step(
        &b,
        &mut f,
        "a nexthop replaced",
        &["nexthop replace id 1 via 10.1.0.4 dev v1"],
    );
    step(
        &b,
        &mut f,
        "a nexthop deleted with its routes",
        &["nexthop del id 1"],
    );
    step(
        &b,
        &mut f,
        "the last address of a link removed",
        &["addr del 10.0.0.1/24 dev v0"],
    );
    step(&b, &mut f, "a link deleted", &["link del v1"]);
}

/// One random change in B: routes, addresses, rules and link state over a
/// small pool, so that changes meet the same prefixes; some are refused by
/// the kernel (a delete of what is not there), which is part of the test.
fn random_change(rng: &mut SplitMix64) -> String {
    let v4 = rng.below(12);
    let v6 = rng.below(6);
    let gw4 = ["10.0.0.2", "10.1.0.2"][rng.below(2)];
    let gw6 = ["2001:db8::2", "2001:db8:1::2"][rng.below(2)];
    let table = ["", " table 100"][rng.below(2)];
    let metric = ["", " metric 5"][rng.below(2)];
    match rng.below(16) {
        0..=2 => format!("route add 172.16.{v4}.0/24 via {gw4}{table}{metric}"),
        3 => format!("route replace 172.16.{v4}.0/24 via {gw4}{table}{metric}"),
        4 => format!("route append 172.16.{v4}.0/24 via {gw4}{table}{metric}"),
        5 => format!(
            "route add 172.16.{v4}.0/24{table} nexthop via 10.0.0.2 nexthop via 10.1.0.2 weight 3"
        ),
        6 | 7 => format!("route del 172.16.{v4}.0/24{table}{metric}"),
        8 => format!("-6 route add 2001:db8:a{v6}::/48 via {gw6}{table}{metric}"),
        9 => format!("-6 route append 2001:db8:a{v6}::/48 via {gw6}{table}{metric}"),
        10 => format!("-6 route del 2001:db8:a{v6}::/48{table}{metric}"),
        11 => format!(
            "rule add from 172.16.{v4}.0/24 table 100 pref {}",
            1000 + v4
        ),
        12 => format!("rule del pref {}", 1000 + v4),
        13 => ["addr add 10.1.0.9/24 dev v1", "addr del 10.1.0.9/24 dev v1"][rng.below(2)].into(),
        14 => "link set v1 down".into(),
        _ => "link set v1 up".into(),
    }
}

#[test]
fn follow_matches_the_kernel_after_random_changes() {
    if let Some(reason) = unavailable_reason() {
        fibre_testkit::unavailable("follow_matches_the_kernel_after_random_changes", &reason);
        return;
    }
    let seeds: Vec<u64> = match std::env::var("FIBRE_FOLLOW_SEED") {
        Ok(seed) => vec![seed.trim().parse().expect("FIBRE_FOLLOW_SEED is a number")],
        Err(_) => (1..=fibre_testkit::env_number("FIBRE_FOLLOW_SEEDS", 3)).collect(),
    };
    for seed in seeds {
        let (b, _a) = pair(&format!("ffr{seed}")).expect("namespaces");
        b.batch(&[
            "addr add 10.0.0.1/24 dev v0",
            "addr add 10.1.0.1/24 dev v1",
            "-6 addr add 2001:db8::1/64 dev v0",
            "-6 addr add 2001:db8:1::1/64 dev v1",
        ])
        .expect("addresses");
        let mut f = follower::start(&b, &["--verbose"]).expect("fibre follow starts");
        let mut rng = SplitMix64(seed);
        let mut done = Vec::new();
        for round in 0..10 {
            for _ in 0..8 {
                let change = random_change(&mut rng);
                let (flag, rest) = match change.strip_prefix("-6 ") {
                    Some(rest) => ("-6", rest),
                    None => ("-4", change.as_str()),
                };
                let words: Vec<&str> = rest.split(' ').collect();
                let mut args = vec!["-n", b.name(), flag];
                args.extend(&words);
                // The kernel refuses some; whatever it did, fibre must do.
                let outcome = netns::ip(&args, "").expect("ip runs");
                done.push(format!("{change}  -> {:?}", outcome.code));
            }
            if links_up_again(&b, &mut rng) {
                done.push("link set v1 up (and its IPv6 address back)".into());
            }
            match differences(&b, &mut f, SHOWN, &["nhid"]) {
                Ok(None) => {}
                Ok(Some(report)) => panic!(
                    "seed {seed}, round {round}: fibre differs from the kernel\n{report}\nchanges:\n{}\nthe kernel's addresses:\n{}\nfibre's:\n{}\nfibre's stderr: {}",
                    done.join("\n"),
                    b.ip(&["addr", "show"]).unwrap_or_default(),
                    f.query("addr show").unwrap_or_default(),
                    f.stderr()
                ),
                Err(e) => panic!("seed {seed}: {e}"),
            }
            match route_get::differences(&b, &mut f, seed * 1000 + round, QUERIES / 2) {
                Ok(None) => {}
                Ok(Some(report)) => panic!(
                    "seed {seed}, round {round}: fibre's route get answers differ from the kernel's\n{report}\nchanges:\n{}\nfibre's stderr: {}",
                    done.join("\n"),
                    f.stderr()
                ),
                Err(e) => panic!("seed {seed}, round {round}: {e}"),
            }
        }
    }
}

/// Now and then v1 comes back with its IPv6 address (a link going down
/// loses them), so later rounds have IPv6 routes over it to change.
fn links_up_again(b: &Namespace, rng: &mut SplitMix64) -> bool {
    if rng.below(3) != 0 {
        return false;
    }
    let _ = b.ip(&["link", "set", "v1", "up"]);
    let _ = b.ip(&["-6", "addr", "replace", "2001:db8:1::1/64", "dev", "v1"]);
    true
}
