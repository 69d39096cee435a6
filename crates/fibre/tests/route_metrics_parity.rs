//! Route metrics besides `mtu` (`advmss`, `rtt`, `window`, `hoplimit`,
//! `features`, ...): kept with the route and shown as `ip route show` (and
//! `ip -j route show`) printed the same lines applied with `ip -batch` on
//! Linux 6.18 in a network namespace (iproute2 6.1): the kernel's bounds
//! (`ip_metrics_convert`: advmss at most 65495), iproute2's units (rtt in
//! eighths and rttvar in quarters of a millisecond unless given without a
//! unit, `%g` seconds from 1000 ms), zero values dropped, an IPv4 delete
//! that names a metric matching it as given (`fib_metrics_match`), an IPv6
//! one ignoring it (`ip6_route_del`).

#[path = "support/config_file.rs"]
mod config_file;

use config_file::{fibre, ConfigFile};

const LINES: &str = "\
link add d0 type dummy
link set d0 up
addr add 10.0.0.1/24 dev d0
addr add 2001:db8::1/64 dev d0
route add 10.9.0.0/16 dev d0 advmss 5 rtt 5 rttvar 3ms window 7 mtu lock 1400
route add 10.10.0.0/16 dev d0 advmss 70000 hoplimit 255 rto_min 1500ms features ecn quickack 1
route add 10.11.0.0/16 dev d0 rtt lock 2.5s cwnd lock 0 initcwnd 10 initrwnd 0 ssthresh 9 reordering 3 fastopen_no_cookie 1
route add 2001:db8:9::/48 dev d0 advmss 1400 rtt 1s rttvar 12345 hoplimit 64
route add 10.12.0.0/16 dev d0 realm 0 advmss 0
route add 10.13.0.0/16 dev d0 rtt 4294967295ms
";

const IP_SHOWS_V4: &str = "\
10.0.0.0/24 dev d0 proto kernel scope link src 10.0.0.1 
10.9.0.0/16 dev d0 scope link mtu lock 1400 window 7 rtt 0ms rttvar 3ms advmss 5 
10.10.0.0/16 dev d0 scope link advmss 65495 hoplimit 255 features ecn rto_min lock 1.5s quickack 1 
10.11.0.0/16 dev d0 scope link rtt lock 2.5s ssthresh 9 cwnd lock 0 reordering 3 initcwnd 10 fastopen_no_cookie 1 
10.12.0.0/16 dev d0 scope link 
10.13.0.0/16 dev d0 scope link rtt 536871s 
";

fn run(tag: &str, lines: &str, args: &[&str]) -> (String, String) {
    let config = ConfigFile::new("route-metrics-parity", tag, lines);
    let mut all = vec!["--config", config.path(), "--force"];
    all.extend_from_slice(args);
    let out = fibre(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Lines without their trailing blanks (ip ends some with one).
fn trimmed(text: &str) -> Vec<String> {
    text.lines().map(|l| l.trim_end().to_string()).collect()
}

#[test]
fn metrics_are_kept_and_shown_as_ip_shows_them() {
    let (out, _) = run("text", LINES, &["route", "show"]);
    assert_eq!(trimmed(&out), trimmed(IP_SHOWS_V4));
    let (out, _) = run("text6", LINES, &["-6", "route", "show"]);
    assert!(
        out.contains(
            "2001:db8:9::/48 dev d0 metric 1024 rtt 1s rttvar 3.086s advmss 1400 hoplimit 64 pref medium\n"
        ),
        "{out}"
    );
}

#[test]
fn json_metrics_are_print_rta_metrics() {
    let (out, _) = run("json", LINES, &["-j", "route", "show"]);
    let want =
        r#""metrics":[{"advmss":65495,"hoplimit":255,"ecn":null,"rto_min":1500,"quickack":1}]"#;
    assert!(out.contains(want), "{want} not in {out}");
}

#[test]
fn deletes_and_appends_compare_metrics_as_the_kernel_does() {
    let more = "\
route del 10.9.0.0/16 advmss 6
route del 10.10.0.0/16 advmss 70000
route del 10.10.0.0/16 advmss 65495 rtt 0
route del 2001:db8:9::/48 advmss 1
route append 10.11.0.0/16 dev d0 rtt lock 2.5s ssthresh 9 cwnd lock 0 reordering 3 initcwnd 10 fastopen_no_cookie 1
route append 10.11.0.0/16 dev d0 rtt lock 2.5s
";
    let (out, err) = run("del", &format!("{LINES}{more}"), &["route", "show"]);
    // ip: lines 11 and 12 "No such process", 15 "File exists".
    let refused: Vec<&str> = err.lines().collect();
    assert_eq!(refused.len(), 3, "{err}");
    assert!(
        refused[0].contains(":11: RTNETLINK answers: No such process"),
        "{err}"
    );
    assert!(
        refused[1].contains(":12: RTNETLINK answers: No such process"),
        "{err}"
    );
    assert!(
        refused[2].contains(":15: RTNETLINK answers: File exists"),
        "{err}"
    );
    assert!(
        out.contains("10.9.0.0/16 dev d0 scope link mtu lock 1400"),
        "{out}"
    );
    assert!(!out.contains("10.10.0.0/16"), "{out}");
    assert_eq!(out.matches("10.11.0.0/16").count(), 2, "{out}");
    let (out, _) = run("del6", &format!("{LINES}{more}"), &["-6", "route", "show"]);
    assert!(!out.contains("2001:db8:9::/48"), "{out}");
}
