//! `rule show` of rules with every selector and action iproute2 6.1 sends,
//! as `ip rule show` (and `ip -j rule show`) printed the same lines applied
//! with `ip -batch` on Linux 6.18 in a network namespace.

#[path = "support/config_file.rs"]
mod config_file;

use config_file::{fibre, ConfigFile};

/// The lines, in the order they were applied.
const LINES: &str = "\
rule add fwmark 7/0 nop blackhole
rule add fwmark 0/5 pref 98
rule add lookup 0144 unreachable
rule add protocol zebra goto 1000
rule add uidrange 5-10 pref 200
rule add uidrange 5-10 pref 201 ipproto tcp sport 5 dport 10-20
rule add l3mdev pref 300
rule add realms 5 pref 301
rule add realms 3/5 pref 302 lookup 7
rule add tun_id 9 pref 303
rule add pref 304 sup_pl 1500
rule add pref 305 tos 0x04
rule add pref 306 goto 1000 lookup 5
rule add pref 307 ipproto 200
rule add pref 308 ipproto 0
";

/// `ip rule show` after [`LINES`].
const IP_SHOWS: &str = "\
0:\tfrom all lookup local
96:\tfrom all goto 1000 [unresolved] proto zebra
97:\tfrom all lookup 100 unreachable
98:\tfrom all fwmark 0/0x5 lookup main
200:\tfrom all uidrange 5-10 lookup main
201:\tfrom all uidrange 5-10 ipproto tcp sport 5 dport 10-20 lookup main
300:\tfrom all lookup [l3mdev-table]
301:\tfrom all lookup main realms 5
302:\tfrom all lookup 7 realms 3/5
303:\tfrom all tun_id 9 lookup main
304:\tfrom all lookup main suppress_prefixlength 1500
305:\tfrom all tos 0x04 lookup main
306:\tfrom all lookup 5 goto 1000 [unresolved]
307:\tfrom all ipproto ipproto-200 lookup main
308:\tfrom all lookup main
32765:\tfrom all fwmark 0x7/0 blackhole
32766:\tfrom all lookup main
32767:\tfrom all lookup default
";

fn show(tag: &str, lines: &str, args: &[&str]) -> String {
    let config = ConfigFile::new("rule-show-parity", tag, lines);
    let mut all = vec!["--config", config.path()];
    all.extend_from_slice(args);
    let out = fibre(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_selector_and_action_is_shown_as_ip_shows_it() {
    assert_eq!(show("text", LINES, &["rule", "show"]), IP_SHOWS);
}

#[test]
fn json_keys_are_print_rules() {
    let out = show("json", LINES, &["-j", "rule", "show"]);
    for key in [
        r#"{"priority":96,"src":"all","goto":1000,"unresolved":null,"protocol":"zebra"}"#,
        r#"{"priority":97,"src":"all","table":"100","action":"unreachable"}"#,
        r#"{"priority":98,"src":"all","fwmark":"0","fwmask":"0x5","table":"main"}"#,
        r#""uid_start":5,"uid_end":10,"ipproto":"tcp","sport":5,"dport_start":10,"dport_end":20"#,
        r#"{"priority":300,"src":"all","l3mdev":null}"#,
        r#""table":"7","flow_from":"3","flow_to":"5""#,
        r#"{"priority":32765,"src":"all","fwmark":"0x7","fwmask":"0","action":"blackhole"}"#,
    ] {
        assert!(out.contains(key), "{key} not in {out}");
    }
}

#[test]
fn a_goto_resolves_once_its_target_exists() {
    let out = show(
        "resolved",
        "rule add pref 10 goto 20\nrule add pref 20 nop\n",
        &["rule", "show"],
    );
    assert!(out.contains("10:\tfrom all goto 20\n"), "{out}");
    assert!(out.contains("20:\tfrom all nop\n"), "{out}");
}

#[test]
fn action_numbers_without_words_are_named_as_route_types() {
    // ip: `1: from all anycast`, `4: from all lookup main masquerade`,
    // `6: from all 12`, `40: from all none`.
    let out = show(
        "numbers",
        "rule add pref 1 anycast\nrule add pref 3 throw\nrule add pref 4 nat 10.0.0.1\n\
         rule add pref 6 type 12\nrule add pref 40 type 0\n",
        &["rule", "show"],
    );
    for line in [
        "1:\tfrom all anycast\n",
        "3:\tfrom all throw\n",
        "4:\tfrom all lookup main masquerade\n",
        "6:\tfrom all 12\n",
        "40:\tfrom all none\n",
    ] {
        assert!(out.contains(line), "{line:?} not in {out}");
    }
}

#[test]
fn selectors_are_shown_with_their_host_bits() {
    // ip: `50:\tfrom 10.1.2.3/16 lookup main`, `51:\tfrom all to
    // 10.1.2.3/16 lookup main`, `-6`: `50:\tfrom 2001:db8::1/48 lookup main`.
    let lines = "rule add from 10.1.2.3/16 pref 50\nrule add to 10.1.2.3/16 pref 51\n\
                 -6 rule add from 2001:db8::1/48 pref 50\n";
    let out = show("hostbits", lines, &["rule", "show"]);
    assert!(out.contains("50:\tfrom 10.1.2.3/16 lookup main\n"), "{out}");
    assert!(
        out.contains("51:\tfrom all to 10.1.2.3/16 lookup main\n"),
        "{out}"
    );
    let out = show("hostbits6", lines, &["-6", "rule", "show"]);
    assert!(
        out.contains("50:\tfrom 2001:db8::1/48 lookup main\n"),
        "{out}"
    );
}
