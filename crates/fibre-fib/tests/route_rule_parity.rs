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
