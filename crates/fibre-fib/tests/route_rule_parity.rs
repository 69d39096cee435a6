//! `rule` lines with the selectors iproute2 6.1 sends beyond addresses
//! and marks (`uidrange`, `ipproto`, `sport`, `dport`, `l3mdev`, `tun_id`,
//! `realms`, action numbers), and the `route get` queries they select, as
//! iproute2 6.1 and Linux 6.18 judged and answered them in a network
//! namespace.

use fibre_fib::*;

const BASE: &str = "link set lo up\nlink add d0 type ifb\nlink add d1 type ifb\n\
    link set d0 up\nlink set d1 up\naddr add 10.1.0.1/24 dev d0\naddr add 10.2.0.1/24 dev d1\n\
    addr add 2001:db8:1::1/64 dev d0\naddr add 2001:db8:2::1/64 dev d1\n\
    route add 10.9.0.0/16 via 10.1.0.5\nroute add 10.9.0.0/16 via 10.2.0.5 table 100\n\
    route add 2001:db8:9::/48 via 2001:db8:1::5\n\
    route add 2001:db8:9::/48 via 2001:db8:2::5 table 100\n";

fn apply(lines: &str) -> Result<Fib, String> {
    config::apply_str(&Fib::new(), "t.conf", &format!("{BASE}{lines}\n"), false)
        .map(|(fib, _)| fib)
        .map_err(|e| e.to_string())
}

fn fib(lines: &str) -> Fib {
    apply(lines).unwrap_or_else(|e| panic!("{lines}: {e}"))
}

fn refusal(lines: &str) -> String {
    match apply(lines) {
        Ok(_) => panic!("accepted: {lines}"),
        Err(e) => e,
    }
}

/// `route get WORDS`: the answer's gateway, or the refusal.
fn get(fib: &Fib, words: &str) -> Result<String, String> {
    let words: Vec<String> = words.split_whitespace().map(String::from).collect();
    let query = config::parse_route_get(&words, None).map_err(|e| e.to_string())?;
    fib.route_get(&query.request)
        .map(|a| a.gateway.map_or("direct".into(), |g| g.to_string()))
        .map_err(|e| e.to_string())
}

#[test]
fn an_ipv4_query_is_about_udp_unless_told_otherwise() {
    // Kernel-checked: with `ipproto udp prohibit`, `route get 10.9.0.1` is
    // "Permission denied" (inet_rtm_getroute's default protocol), `ipproto
    // tcp` answers; IPv6 asks about no protocol.
    let fib =
        fib("rule add pref 100 ipproto udp prohibit\n-6 rule add pref 100 ipproto udp prohibit");
    assert_eq!(
        get(&fib, "10.9.0.1").unwrap_err(),
        "RTNETLINK answers: Permission denied"
    );
    assert_eq!(get(&fib, "10.9.0.1 ipproto tcp").unwrap(), "10.1.0.5");
    assert_eq!(get(&fib, "2001:db8:9::1").unwrap(), "2001:db8:1::5");
    assert!(get(&fib, "2001:db8:9::1 ipproto udp").is_err());
}

#[test]
fn port_ranges_select_flows() {
    let fib = fib("rule add pref 100 sport 7 dport 10-20 lookup 100");
    assert_eq!(get(&fib, "10.9.0.1 sport 7 dport 10").unwrap(), "10.2.0.5");
    assert_eq!(get(&fib, "10.9.0.1 sport 7 dport 20").unwrap(), "10.2.0.5");
    assert_eq!(get(&fib, "10.9.0.1 sport 7 dport 21").unwrap(), "10.1.0.5");
    assert_eq!(get(&fib, "10.9.0.1 sport 8 dport 15").unwrap(), "10.1.0.5");
}

#[test]
fn uid_ranges_select_the_callers_uid() {
    // Kernel-checked: an output query without `uid` is root's (0); an
    // IPv6 input query without one has none (INVALID_UID); an IPv4 input
    // query is root's whatever it asks.
    let fib = fib(
        "rule add pref 10 uidrange 0-0 lookup 100\n-6 rule add pref 10 uidrange 0-0 lookup 100",
    );
    assert_eq!(get(&fib, "10.9.0.1").unwrap(), "10.2.0.5");
    assert_eq!(get(&fib, "10.9.0.1 uid 5").unwrap(), "10.1.0.5");
    assert_eq!(get(&fib, "2001:db8:9::1").unwrap(), "2001:db8:2::5");
    assert_eq!(get(&fib, "2001:db8:9::1 uid 5").unwrap(), "2001:db8:1::5");
    // (The model forwards, as the namespaces did with forwarding on.)
    assert_eq!(
        get(&fib, "2001:db8:9::1 from 2001:db8:2::7 iif d1").unwrap(),
        "2001:db8:1::5"
    );
    assert_eq!(
        get(&fib, "2001:db8:9::1 from 2001:db8:2::7 iif d1 uid 0").unwrap(),
        "2001:db8:2::5"
    );
    assert_eq!(
        get(&fib, "10.9.0.1 from 10.2.0.7 iif d1 uid 4294967294").unwrap(),
        "10.2.0.5"
    );
}

#[test]
fn l3mdev_and_tun_id_rules_match_no_flow_here() {
    // No VRF devices and no tunnel metadata: such a rule never matches,
    // and under `not` always does.
    let fib = fib("rule add pref 10 l3mdev unreachable\nrule add pref 11 tun_id 5 prohibit");
    assert_eq!(get(&fib, "10.9.0.1").unwrap(), "10.1.0.5");
    let fib = self::fib("rule add pref 10 not tun_id 5 prohibit");
    assert_eq!(
        get(&fib, "10.9.0.1").unwrap_err(),
        "RTNETLINK answers: Permission denied"
    );
}

#[test]
fn actions_without_a_handler_fail_lookups() {
    // Kernel-checked: `rule add pref 1 anycast` is kept, and lookups that
    // reach it are "Invalid argument".
    let fib = fib("rule add pref 1 anycast");
    assert_eq!(
        get(&fib, "10.9.0.1").unwrap_err(),
        "RTNETLINK answers: Invalid argument"
    );
}

#[test]
fn ranges_are_refused_with_the_kernels_words() {
    for (line, message) in [
        ("rule add sport 0-5", "Error: Invalid sport range."),
        ("rule add sport 5-3", "Error: Invalid sport range."),
        ("rule add sport 65535", "Error: Invalid sport range."),
        ("rule add dport 1-65535", "Error: Invalid dport range."),
        ("rule del dport 0", "Error: Invalid dport range."),
        (
            "rule add uidrange 0-4294967295",
            "Error: Invalid uid range.",
        ),
        ("rule add uidrange 10-5", "Error: Invalid uid range."),
        (
            "rule add uidrange 5",
            "Error: argument \"5\" is wrong: invalid UID range",
        ),
        (
            "rule add sport ''",
            "Error: argument \"\" is wrong: invalid port range",
        ),
        (
            "rule add ipproto 0x11",
            "Error: argument \"0x11\" is wrong: Invalid \"ipproto\" value",
        ),
        (
            "rule add pref 15 l3mdev table 5",
            "table can not be specified for l3mdev rules",
        ),
        (
            "-6 rule del goto 1000",
            "Error: Backward goto not supported.",
        ),
        (
            "rule add realms 256/1",
            "Error: argument \"256/1\" is wrong: invalid realms",
        ),
    ] {
        let e = refusal(line);
        assert!(e.contains(message), "{line}: {e}");
    }
}

#[test]
fn sscanf_ranges_take_what_sscanf_takes() {
    // Kernel-checked: `sport 5x` is 5, `sport 70000` is 4464, `sport -5`
    // is 65531, `uidrange 5-10x` is 5-10.
    for (line, range) in [
        ("rule add pref 5 sport 5x", (5, 5)),
        ("rule add pref 6 sport 70000", (4464, 4464)),
        ("rule add pref 7 sport -5", (65531, 65531)),
    ] {
        let fib = fib(line);
        assert_eq!(fib.rules(Family::V4)[1].sport_range, Some(range), "{line}");
    }
    let fib = fib("rule add pref 11 uidrange 5-10x");
    assert_eq!(fib.rules(Family::V4)[1].uid_range, Some((5, 10)));
}

#[test]
fn a_delete_without_a_type_matches_the_table_of_any_action() {
    // Kernel-checked: `rule del pref 10 lookup 100` deletes `pref 10
    // unreachable lookup 100`; `rule del lookup 100 prohibit` does not.
    let fib = fib("rule add pref 10 unreachable lookup 100\nrule del pref 10 lookup 100");
    assert!(fib.rules(Family::V4).iter().all(|r| r.priority != 10));
    let e = refusal("rule add pref 11 unreachable lookup 100\nrule del lookup 100 prohibit");
    assert!(e.contains("No such file or directory"), "{e}");
}

#[test]
fn long_suppress_prefixlengths_are_kept() {
    let fib = fib("rule add suppress_ifgroup 0 order 0 sup_pl 0 sup_pl 1500");
    assert_eq!(fib.rules(Family::V4)[1].suppress_prefixlength, Some(1500));
}

#[test]
fn a_matching_l3mdev_rule_without_a_master_looks_up_main() {
    // Kernel-checked: after `rule add l3mdev not pri 1000 fwmark 0x10` and
    // `rule del pref 32766`, IPv4 lookups still answer from main
    // (fib_get_table reads the rule's table 0 as main).
    let fib = fib("rule add l3mdev not pri 1000 fwmark 0x10\nrule del pref 32766");
    assert_eq!(get(&fib, "10.9.0.1").unwrap(), "10.1.0.5");
}

#[test]
fn a_delete_with_protocol_0_matches_any_protocol() {
    // Kernel-checked: `-6 rule del proto 0 realms 5` deletes the first
    // IPv6 rule, the local one (proto kernel).
    let fib = fib("-6 rule del proto 0 realms 5");
    assert_eq!(fib.rules(Family::V6)[0].priority, 32766);
}

#[test]
fn selectors_keep_their_host_bits_and_are_compared_exactly() {
    // Kernel-checked: `from 10.1.2.3/16` is kept as written; `from
    // 10.1.2.4/16` at the same priority is another rule; a delete must
    // name the address as written (`from 10.1.0.0/16` deletes only a rule
    // written so).
    let fib = fib("rule add from 10.1.2.3/16 pref 50\nrule add from 10.1.2.4/16 pref 50");
    let written: Vec<_> = fib
        .rules(Family::V4)
        .iter()
        .filter_map(Rule::from_addr)
        .collect();
    assert_eq!(
        written,
        [
            "10.1.2.3".parse::<std::net::IpAddr>().unwrap(),
            "10.1.2.4".parse().unwrap()
        ]
    );
    let e = refusal("rule add from 10.1.2.3/16 pref 50\nrule del from 10.1.0.0/16 pref 50");
    assert!(e.contains("No such file or directory"), "{e}");
    let fib = self::fib("rule add from 10.1.2.3/16 pref 50\nrule del from 10.1.2.3/16 pref 50");
    assert!(fib.rules(Family::V4).iter().all(|r| r.priority != 50));
    // Lookups match the masked prefix.
    let fib = self::fib("rule add from 10.2.7.7/16 pref 50 lookup 100");
    assert_eq!(get(&fib, "10.9.0.1 from 10.2.0.1").unwrap(), "10.2.0.5");
}

/// The destinations of a family's routes, every table.
fn destinations(fib: &Fib, family: Family) -> Vec<String> {
    fib.routes(family, None)
        .iter()
        .map(|r| r.dst.to_string())
        .collect()
}

#[test]
fn route_keywords_ipv4_ignores_are_accepted() {
    // Kernel-checked: IPv4 keeps no `expires`, `pref`, `from`, `as` or
    // `ttl-propagate`, and no metric or realm of 0.
    for line in [
        "route add 10.5.0.0/16 dev d0 expires 5",
        "route add 10.6.0.0/16 dev d0 pref high",
        "route add 10.7.0.0/16 dev d0 from 10.0.0.0/8",
        "route add 10.9.0.0/16 dev d0 as 10.1.0.9 table 7",
        "route add 10.12.0.0/16 dev d0 ttl-propagate enabled",
        "route add 10.13.0.0/16 dev d0 advmss 0 realm 0 quickack 0",
        "-6 route add 2001:db8:5::/48 dev d0 realm 5 pref 5 from ::/0",
    ] {
        fib(line);
    }
    let fib = fib("route add 10.5.0.0/16 dev d0 expires 5");
    assert!(destinations(&fib, Family::V4).contains(&"10.5.0.0/16".to_string()));
}

#[test]
fn route_keywords_fibre_does_not_model_are_refused_after_ips_own_refusals() {
    // ip reads every keyword's value first: its refusal of a later word
    // is the line's (kernel-checked messages).
    for (line, message) in [
        (
            "route add 10.9.0.0/16 dev lo pref 5 bogus scope 254",
            "Error: either \"to\" is duplicate, or \"bogus\" is a garbage.",
        ),
        (
            "route prepend 10.11.0.0/16 pref 5 tos 0x04 nexthop via 10.1.0.9 dev d0 nexthop dev d1 weight 1.5",
            "Error: argument \"1.5\" is wrong: \"weight\" is invalid",
        ),
        (
            "route add 10.22.0.0/16 dev d0 ttl-propagate bogus",
            "Error: argument \"bogus\" is wrong: \"ttl-propagate\" value is invalid",
        ),
        (
            "route add 10.11.0.0/16 dev d0 pref bogus",
            "Error: argument \"bogus\" is wrong: \"pref\" value is invalid",
        ),
        (
            "route add 10.2.0.0/16 v 224.0.0.1 table 5",
            "Error: argument \"224.0.0.1\" is wrong: Invalid VRF",
        ),
        (
            "route add 10.24.0.0/16 dev d0 from 2001:db8::/32",
            "Error: inet prefix is expected rather than \"2001:db8::/32\".",
        ),
        (
            "route del 10.20.0.0/16 via mpls 10.3.0.1",
            "Error: mpls address is expected rather than \"10.3.0.1\".",
        ),
        (
            "route add 10.26.0.0/16 dev d0 via mpls 100",
            "Error: Unsupported address family in RTA_VIA.",
        ),
        (
            "route add 10.28.0.0/16 dev d0 via bridge 10.1.0.5",
            "Error: bridge address is expected rather than \"10.1.0.5\".",
        ),
        ("route ad xresolve 10.20.1.0/24", "Error: Invalid scope."),
        ("route delete xresolve 192.0.2.0/24", "No such process"),
        (
            "route add nat 10.77.0.0/16 dev d0 scope nowhere",
            "Error: Gateway, device and multipath can not be specified for this route type.",
        ),
        (
            "route add 10.13.0.0/16 dev d0 nhid 5",
            "Error: Nexthop specification and nexthop id are mutually exclusive.",
        ),
        (
            "route add 10.1.9.0/24 nexthop via 10.1.0.9 dev nosuch nexthop via 10.1.0.8 dev d0",
            "Cannot find device \"nosuch\" Error: cannot parse nexthop",
        ),
        (
            "route add 10.1.9.0/24 onlink nexthop via 10.1.0.9 dev d0 nexthop via 10.4.0.1 dev ..",
            "Cannot find device \"..\" Error: cannot parse nexthop",
        ),
    ] {
        let e = refusal(line);
        assert!(e.contains(message), "{line}: {e}");
    }
    // Past ip's checks, what fibre does not model is refused by name.
    let e = refusal("route add 10.10.0.0/16 dev d0 congctl cubic");
    assert!(e.contains("it does not model \"congctl\""), "{e}");
}

#[test]
fn a_route_takes_its_last_device_and_finds_it_once_the_line_is_read() {
    // Kernel-checked: `route ap xresolve 10.5.0.0/16 dev . dev a:b oif
    // fd0` is refused for its scope, not its first device names.
    let e = refusal("route add 10.5.0.0/16 dev . dev a:b oif d0 xx");
    assert!(
        e.contains("Error: either \"to\" is duplicate, or \"xx\" is a garbage."),
        "{e}"
    );
    fib("route add 10.5.0.0/16 dev . dev a:b oif d0");
    let e = refusal("route add 10.5.0.0/16 dev d0 dev ..");
    assert!(e.contains("Cannot find device \"..\""), "{e}");
}

#[test]
fn ipv6_nat_and_xresolve_deletes_compare_no_type() {
    // Kernel-checked: ip6_route_del compares no type.
    let plain =
        fib("route add 2001:db8:77::/48 dev d0\nroute del xresolve 2001:db8:77::/48 dev d0");
    assert!(!destinations(&plain, Family::V6).contains(&"2001:db8:77::/48".to_string()));
    // iproute2 looks for a nat route in table local: main's stays.
    let e = refusal("route add 2001:db8:77::/48 dev d0\nroute del nat 2001:db8:77::/48 dev d0");
    assert!(e.contains("No such process"), "{e}");
    // The kernel keeps the type (`nat 2001:db8:20:1::/64 dev fd0 table
    // local`), and so does fibre; a delete without the type finds it.
    let added = fib("route add nat 2001:db8:77::/48 dev d0");
    let nat = added.routes(Family::V6, Some(TABLE_LOCAL));
    assert!(nat.iter().any(|r| r.kind == RouteType::Nat), "{nat:?}");
    let deleted =
        fib("route add nat 2001:db8:77::/48 dev d0\nroute del 2001:db8:77::/48 dev d0 table local");
    assert!(!deleted
        .routes(Family::V6, Some(TABLE_LOCAL))
        .iter()
        .any(|r| r.kind == RouteType::Nat));
}

#[test]
fn a_device_or_gateway_beside_nexthops_must_be_the_first_nexthops() {
    // Kernel-checked (fib_get_nhs), IPv4.
    for (line, message) in [
        (
            "route add 10.21.0.0/16 via 10.1.0.5 nexthop dev d1",
            "Error: Nexthop gateway does not match RTA_GATEWAY or RTA_VIA.",
        ),
        (
            "route add 10.1.5.0/24 dev d1 nexthop via 10.1.0.5 weight 2",
            "Error: Nexthop device index does not match RTA_OIF.",
        ),
        (
            "route add local 198.51.100.0/24 nexthop via 10.1.0.9 dev d0 weight 256 nexthop",
            "Error: unexpected end of line after \"nexthop\"",
        ),
    ] {
        let e = refusal(line);
        assert!(e.contains(message), "{line}: {e}");
    }
    let fib = fib("route add 10.21.0.0/16 via 10.1.0.5 dev d0 nexthop via 10.1.0.5 dev d0 nexthop via 10.2.0.5 dev d1");
    let route = fib
        .routes(Family::V4, None)
        .into_iter()
        .find(|r| r.dst.to_string() == "10.21.0.0/16")
        .expect("the route");
    assert_eq!(route.nexthops.len(), 2);
}

#[test]
fn the_mtu_metric_is_kept_at_most_65520() {
    // Kernel-checked: `route add 0.0.0.0/0 via 10.1.0.1 mtu 65535` shows
    // `mtu 65520` (ip_metrics_convert).
    let fib = fib("route add 10.30.0.0/16 via 10.1.0.1 mtu 65535");
    let route = fib
        .routes(Family::V4, None)
        .into_iter()
        .find(|r| r.dst.to_string() == "10.30.0.0/16")
        .expect("the route");
    assert_eq!(route.mtu, Some(65520));
}

#[test]
fn gre_options_fibre_does_not_model_are_read_before_refusing() {
    // iproute2 6.1's gre_parse_opt reads each option's value (with its
    // refusals) and goes on; fibre refuses what it does not model only
    // once the line is read.
    for (line, message) in [
        (
            "link add g1 type gre remote 127.0.0.1 fwmark fd0 hopl 64",
            "Error: argument \"fd0\" is wrong: invalid fwmark",
        ),
        (
            "link add g1 type gretap remote 10.1.0.1 external remote 192.0.2.1 ik 1.2.3.4 --",
            "Usage: ... gretap",
        ),
        (
            "link add g1 type gre remote 10.1.0.1 encap bogus",
            "Error: argument \"bogus\" is wrong: Invalid encap type.",
        ),
        (
            "link add g1 type gre remote 10.1.0.1 erspan 5",
            "Usage: ... gre",
        ),
        (
            "link add g1 type ip6gre remote 2001:db8:1::5 remote ff02::1 ttl 100 fwmark fd0",
            "Error: argument \"fd0\" is wrong: invalid fwmark",
        ),
        (
            "link add g1 type gre remote 0.0.0.0 'q' key 5",
            "Usage: ... gre",
        ),
    ] {
        let e = refusal(line);
        assert!(e.contains(message), "{line}: {e}");
    }
    // The last remote is the tunnel's.
    fib("link add g1 type gre remote 224.0.0.1 remote 10.1.0.9");
    let e = refusal("link add g1 type gre remote 10.1.0.1 dev d0 fwmark 5");
    assert!(
        e.contains("(fibre does not model \"dev\"), got \"dev\""),
        "{e}"
    );
}
