//! The `fibre` command end to end: configuration refusals (each message,
//! all-or-nothing, `-force`), `route get` and `lookup` output and exit
//! codes, the show commands and `route import`.

use std::io::Write;
use std::process::{Command, Output, Stdio};

#[path = "support/scratch.rs"]
mod scratch;
use scratch::Scratch;

/// Runs fibre with `args`, feeding `stdin`.
fn fibre(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fibre"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fibre");
    // Write from a thread: a long answer stream fills the stdout pipe
    // while the queries are still being written.
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_string();
    let writer = std::thread::spawn(move || input.write_all(stdin.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    output
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

/// A small router: one veth pair up, an address on each end, a few routes
/// and rules.
const ROUTER: &str = "\
# a small router
link add eth0 type veth peer name eth1
link set eth0 up
link set eth1 up
link set lo up
addr add 10.0.0.1/24 dev eth0
addr add 10.0.1.1/24 brd + dev eth1
route add 10.1.0.0/16 via 10.0.0.2
route add blackhole 10.8.0.0/16
route add 10.20.0.0/16 nexthop via 10.0.0.2 dev eth0 weight 2 nexthop via 10.0.0.3 dev eth0
route add 10.21.0.0/16 via 10.0.0.2 metric 100 proto static src 10.0.0.1 mtu 1400
route add unreachable 10.22.0.0/16
route add 10.23.0.0/16 via 10.0.0.2 table 100
rule add fwmark 0x10/0xff lookup 100 pref 100
";

fn router(scratch: &Scratch) -> String {
    scratch
        .file("router.conf", ROUTER.as_bytes())
        .display()
        .to_string()
}

// --- route get ---------------------------------------------------------------

#[test]
fn route_get_prints_like_ip() {
    let s = Scratch::new("cli", "get");
    let conf = router(&s);
    let out = fibre(&["--config", &conf, "route", "get", "10.1.0.5"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "10.1.0.5 via 10.0.0.2 dev eth0 src 10.0.0.1 uid 0 \n    cache \n"
    );
    let out = fibre(
        &[
            "-j",
            "--config",
            &conf,
            "route",
            "get",
            "10.23.0.1",
            "mark",
            "0x10",
        ],
        "",
    );
    assert_eq!(
        stdout(&out),
        "[{\"dst\":\"10.23.0.1\",\"gateway\":\"10.0.0.2\",\"dev\":\"eth0\",\"table\":\"100\",\"prefsrc\":\"10.0.0.1\",\"flags\":[],\"mark\":16,\"uid\":0,\"cache\":[]}]\n"
    );
    let out = fibre(
        &["--config", &conf, "route", "get", "fibmatch", "10.21.0.9"],
        "",
    );
    assert_eq!(
        stdout(&out),
        "10.21.0.0/16 via 10.0.0.2 dev eth0 proto static src 10.0.0.1 metric 100 mtu 1400 \n"
    );
}

#[test]
fn input_routes_show_redirects_and_multicast_as_ip_does() {
    // Goldens: `ip route get` in a namespace (Linux 6.18, iproute2 6.1) on
    // the same configuration: a packet forwarded out the link it came in
    // on, from a source on that link, is marked for an ICMP redirect; the
    // all-hosts group is local, and ip decodes RTCF_MULTICAST as
    // rt_offload_failed.
    let s = Scratch::new("cli", "redirect");
    let conf = s.file(
        "r.conf",
        b"link set lo up\nlink add d0 type ifb\nlink set d0 up\nlink add d1 type ifb\n\
          link set d1 up\naddr add 10.0.0.1/24 dev d0\naddr add 10.1.0.1/24 dev d1\n\
          route add 10.9.0.0/16 via 10.0.0.9 dev d0\nroute add 172.16.0.0/12 via 10.0.0.8\n",
    );
    let conf = conf.display().to_string();
    let cases = [
        ("10.9.0.1 from 10.0.0.5 iif d0", "10.9.0.1 from 10.0.0.5 via 10.0.0.9 dev d0 \n    cache <redirect> iif d0 \n"),
        ("10.9.0.1 from 172.16.0.5 iif d0", "10.9.0.1 from 172.16.0.5 via 10.0.0.9 dev d0 \n    cache iif d0 \n"),
        ("10.9.0.1 from 10.1.0.5 iif d0", "10.9.0.1 from 10.1.0.5 via 10.0.0.9 dev d0 \n    cache iif d0 \n"),
        ("10.9.0.1 from 10.1.0.5 iif d1", "10.9.0.1 from 10.1.0.5 via 10.0.0.9 dev d0 \n    cache iif d1 \n"),
        ("10.0.0.7 from 10.0.0.5 iif d0", "10.0.0.7 from 10.0.0.5 dev d0 \n    cache <redirect> iif d0 \n"),
        ("224.0.0.1 from 10.0.0.9 iif d0", "multicast 224.0.0.1 from 10.0.0.9 dev lo rt_offload_failed \n    cache <local,mc> iif d0 \n"),
    ];
    for (query, want) in cases {
        let mut args = vec!["--config", &conf, "route", "get"];
        args.extend(query.split(' '));
        let out = fibre(&args, "");
        assert_eq!(out.status.code(), Some(0), "{query}: {}", stderr(&out));
        assert_eq!(stdout(&out), want, "{query}");
    }
}

#[test]
fn refused_lookups_exit_2_with_the_kernel_message() {
    let s = Scratch::new("cli", "refused");
    let conf = router(&s);
    for (dst, message) in [
        ("11.1.1.1", "RTNETLINK answers: Network is unreachable\n"),
        ("10.8.0.1", "RTNETLINK answers: Invalid argument\n"),
        ("10.22.0.1", "RTNETLINK answers: No route to host\n"),
    ] {
        let out = fibre(&["--config", &conf, "route", "get", dst], "");
        assert_eq!(out.status.code(), Some(2), "{dst}");
        assert_eq!(stderr(&out), message, "{dst}");
        assert_eq!(stdout(&out), "");
    }
}

#[test]
fn malformed_route_get_is_a_usage_error() {
    let out = fibre(&["route", "get", "10.0.0.300"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("got \"10.0.0.300\""),
        "{}",
        stderr(&out)
    );
}

// --- configuration refusals ------------------------------------------------------

/// Each bad line, alone after a good one, and the whole message fibre gives.
const REFUSALS: &[(&str, &str)] = &[
    (
        "route add 10.2.0.0/16 via 10.0.0.300",
        "\"via\": expected an IPv4 address, got \"10.0.0.300\" (Error: inet address is expected rather than \"10.0.0.300\".)",
    ),
    (
        "route add 10.3.0.1/16 via 10.0.0.2",
        "\"to\": expected a prefix without host bits (10.3.0.1/16 has host bits set (expected 10.3.0.0/16)), got \"10.3.0.1/16\" (Error: Invalid prefix for given prefix length.)",
    ),
    (
        "route add 10.4.0.0/16 via 10.0.0.2 table foo",
        "\"table\": expected a table: local, main, default or a number from 0 to 4294967295, got \"foo\" (Error: argument \"foo\" is wrong: \"table\" value is invalid)",
    ),
    (
        "route add 10.5.0.0/16 via 10.0.0.2 metric 4294967296",
        "\"metric\": expected a number from 0 to 4294967295, got \"4294967296\" (Error: argument \"4294967296\" is wrong: \"metric\" value is invalid)",
    ),
    (
        "route add 10.9.0.0/16 nexthop via 10.0.0.2 weight 300",
        "\"weight\": expected a weight from 1 to 256, got \"300\" (Error: argument \"300\" is wrong: \"weight\" is invalid)",
    ),
    (
        "route add 10.10.0.0/16 dev eth0 mtu 4294967296",
        "\"mtu\": expected a number from 0 to 4294967295, got \"4294967296\" (Error: argument \"4294967296\" is wrong: \"mtu\" value is invalid)",
    ),
    (
        "route add 10.6.0.0/16 via 10.0.0.2 frob",
        "\"route\": expected a prefix, \"default\", a route type or one of via, dev, src, metric, table, proto, scope, mtu, tos, onlink, nexthop, got \"frob\" (Error: either \"to\" is duplicate, or \"frob\" is a garbage.)",
    ),
    (
        "route add",
        "\"route\": expected a destination prefix or \"default\", got end of line (Command line is not complete. Try option \"help\")",
    ),
    (
        "route add 10.11.0.0/16 via",
        "\"via\": expected an IPv4 address, got end of line (Command line is not complete. Try option \"help\")",
    ),
    (
        "route add 10.7.0.0/33 dev eth0",
        "\"to\": expected a prefix such as 10.0.0.0/8 or 2001:db8::/32, got \"10.7.0.0/33\" (Error: any valid prefix is expected rather than \"10.7.0.0/33\".)",
    ),
    (
        "addr add 10.0.0.400/24 dev eth0",
        "\"local\": expected a prefix such as 10.0.0.0/8 or 2001:db8::/32, got \"10.0.0.400/24\" (Error: any valid prefix is expected rather than \"10.0.0.400/24\".)",
    ),
    (
        "addr add 10.9.9.9/24",
        "\"addr\": expected dev NAME, got end of line (Not enough information: \"dev\" argument is required.)",
    ),
    (
        "rule add from 1.2.3.0/24 lookup foo",
        "\"lookup\": expected a table: local, main, default or a number from 0 to 4294967295, got \"foo\" (Error: argument \"foo\" is wrong: invalid table ID)",
    ),
    (
        "rule add fwmark 0xzz lookup 5",
        "\"fwmark\": expected a mark from 0 to 0xffffffff, optionally /MASK, got \"0xzz\" (Error: argument \"0xzz\" is wrong: fwmark value is invalid)",
    ),
    (
        "link set eth0 frob",
        "\"link\": expected up, down, mtu N, type T or a device name, got \"frob\" (Error: either \"dev\" is duplicate, or \"frob\" is a garbage.)",
    ),
    (
        "link add x1 type bogus",
        "\"type\": expected a device type: dummy, ifb, veth, gre, ip6gre, gretap or ip6gretap, got \"bogus\" (Error: Unknown device type.)",
    ),
    (
        "frob add x",
        "\"ip\": expected an object: link, addr, route, rule or neigh, got \"frob\" (Object \"frob\" is unknown, try \"ip help\".)",
    ),
];

#[test]
fn every_refusal_names_file_line_token_and_expectation() {
    let s = Scratch::new("cli", "refusals");
    for (index, (line, message)) in REFUSALS.iter().enumerate() {
        let conf = s.file(
            &format!("r{index}.conf"),
            format!("link add eth0 type veth peer name eth1\n{line}\n").as_bytes(),
        );
        let conf = conf.display().to_string();
        let out = fibre(&["--config", &conf, "link", "show"], "");
        assert_eq!(out.status.code(), Some(1), "{line}");
        assert_eq!(
            stderr(&out),
            format!("fibre: {conf}:2: {message}\nnothing applied (1 error)\n"),
            "{line}"
        );
        assert_eq!(stdout(&out), "", "{line}");
    }
}

#[test]
fn apply_errors_are_placed_and_refuse_the_file() {
    let s = Scratch::new("cli", "apply");
    let conf = s.file(
        "apply.conf",
        b"link add d0 type dummy\nroute add 10.0.0.0/8 dev d0\n",
    );
    let conf = conf.display().to_string();
    let out = fibre(&["--config", &conf, "link", "show"], "");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "fibre: {conf}:2: Error: Device for nexthop is not up.\nnothing applied (1 error)\n"
        )
    );
}

#[test]
fn all_or_nothing_without_force() {
    let s = Scratch::new("cli", "atomic");
    let conf = s.file(
        "atomic.conf",
        b"link add d0 type dummy\nlink set d0 up\nroute add 10.0.0.0/8 dev d0\nroute add 10/33 dev d0\nroute add 11.0.0.0/8 dev nosuch\n",
    );
    let conf = conf.display().to_string();
    let out = fibre(&["--config", &conf, "route", "show"], "");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains(&format!("{conf}:4: ")), "{err}");
    assert!(err.ends_with("nothing applied (1 error)\n"), "{err}");
    assert_eq!(stdout(&out), "");
}

#[test]
fn force_reports_bad_lines_and_applies_the_rest() {
    let s = Scratch::new("cli", "force");
    let conf = s.file(
        "force.conf",
        b"link add d0 type dummy\nlink set d0 up\nroute add 10.0.0.0/8 dev d0\nroute add 10/33 dev d0\nroute add 11.0.0.0/8 dev nosuch\nroute add 12.0.0.0/8 dev d0\n",
    );
    let conf = conf.display().to_string();
    for force in ["-force", "--force"] {
        let out = fibre(&[force, "--config", &conf, "route", "show"], "");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(
            stdout(&out),
            "10.0.0.0/8 dev d0 scope link \n12.0.0.0/8 dev d0 scope link \n"
        );
        let err = stderr(&out);
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 2, "{err}");
        assert!(
            lines[0].starts_with(&format!("{conf}:4: \"to\": expected a prefix")),
            "{err}"
        );
        assert!(lines[1].starts_with(&format!("{conf}:5: ")), "{err}");
    }
}

#[test]
fn binary_empty_and_missing_files_are_refused_clearly() {
    let s = Scratch::new("cli", "files");
    let empty = s.file("empty.conf", b"").display().to_string();
    let out = fibre(&["--config", &empty, "link", "show"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("empty.conf: the file is empty"),
        "{}",
        stderr(&out)
    );
    let binary = s
        .file("bin.conf", b"\x7fELF\x02\x01\x01\x00")
        .display()
        .to_string();
    let out = fibre(&["--config", &binary, "link", "show"], "");
    assert_eq!(out.status.code(), Some(1));
    // As ip -batch reads it: the line ends at the NUL (a C string), and
    // what is before it is no object; control bytes are shown escaped.
    assert!(
        stderr(&out).contains(
            "bin.conf:1: \"ip\": expected an object: link, addr, route, rule or neigh, got \"\\u{7f}ELF\\u{2}\\u{1}\\u{1}\""
        ) && stderr(&out).contains("is unknown, try \"ip help\"."),
        "{}",
        stderr(&out)
    );
    let out = fibre(&["--config", "/nonexistent/fibre.conf", "link", "show"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("/nonexistent/fibre.conf: cannot read"),
        "{}",
        stderr(&out)
    );
}

// --- lookup --------------------------------------------------------------------

#[test]
fn lookup_answers_every_query_in_order() {
    let s = Scratch::new("cli", "lookup");
    let conf = router(&s);
    let queries =
        "10.1.0.5\n\n# comment\n11.1.1.1\n10.0.0.300\n10.1.0.5 mark 5\nfrob bar baz\n10.0.0.1\n";
    let out = fibre(&["lookup", "--config", &conf, "-j"], queries);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[0]["gateway"], "10.0.0.2");
    assert_eq!(
        lines[1],
        serde_json::json!({"dst": "11.1.1.1", "error": "Network is unreachable"})
    );
    assert_eq!(lines[2]["dst"], "10.0.0.300");
    assert!(lines[2]["error"]
        .as_str()
        .unwrap()
        .contains("got \"10.0.0.300\""));
    assert_eq!(lines[3]["mark"], 5);
    assert_eq!(lines[4]["dst"], "frob");
    assert!(lines[4]["error"].is_string());
    assert_eq!(lines[5]["type"], "local");

    let out = fibre(
        &["--config", &conf, "lookup"],
        "10.1.0.5\n11.1.1.1\n10.0.0.1\n",
    );
    assert_eq!(
        stdout(&out),
        "10.1.0.5 via 10.0.0.2 dev eth0 src 10.0.0.1 uid 0 cache\n\
         11.1.1.1: RTNETLINK answers: Network is unreachable\n\
         local 10.0.0.1 dev lo table local src 10.0.0.1 uid 0 cache <local>\n"
    );
}

#[test]
fn lookup_handles_thousands_of_queries() {
    let s = Scratch::new("cli", "lookup-many");
    let conf = router(&s);
    let queries: String = (0..20_000u32)
        .map(|i| format!("10.{}.{}.{}\n", i % 40, (i / 40) % 256, i % 251))
        .collect();
    let started = std::time::Instant::now();
    let out = fibre(&["-j", "--config", &conf, "lookup"], &queries);
    let elapsed = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 20_000);
    assert!(elapsed.as_secs() < 30, "20000 lookups took {elapsed:?}");
}

// --- show commands -----------------------------------------------------------

#[test]
fn show_commands() {
    let s = Scratch::new("cli", "show");
    let conf = router(&s);
    let out = fibre(&["--config", &conf, "route", "show"], "");
    let text = stdout(&out);
    assert!(
        text.starts_with("10.0.0.0/24 dev eth0 proto kernel scope link src 10.0.0.1 \n"),
        "{text}"
    );
    assert!(text.contains("blackhole 10.8.0.0/16 \n"), "{text}");
    assert!(text.contains("10.20.0.0/16 \n\tnexthop via 10.0.0.2 dev eth0 weight 2 \n\tnexthop via 10.0.0.3 dev eth0 weight 1 \n"), "{text}");
    assert!(
        !text.contains("10.23.0.0/16"),
        "table 100 is not main: {text}"
    );
    let out = fibre(&["--config", &conf, "route", "show", "table", "100"], "");
    assert_eq!(stdout(&out), "10.23.0.0/16 via 10.0.0.2 dev eth0 \n");
    let out = fibre(
        &[
            "--config",
            &conf,
            "route",
            "show",
            "table",
            "all",
            "type",
            "broadcast",
        ],
        "",
    );
    assert!(
        stdout(&out).contains(
            "broadcast 10.0.1.255 dev eth1 table local proto kernel scope link src 10.0.1.1 \n"
        ),
        "{}",
        stdout(&out)
    );
    let out = fibre(&["--config", &conf, "route", "show", "table", "foo"], "");
    assert_eq!(out.status.code(), Some(1));
    let out = fibre(
        &[
            "-j",
            "--config",
            &conf,
            "route",
            "show",
            "type",
            "unreachable",
        ],
        "",
    );
    assert_eq!(
        stdout(&out),
        "[{\"type\":\"unreachable\",\"dst\":\"10.22.0.0/16\",\"flags\":[]}]\n"
    );

    let out = fibre(&["--config", &conf, "rule", "show"], "");
    let text = stdout(&out);
    assert!(
        text.starts_with("0:\tfrom all lookup local\n100:\tfrom all fwmark 0x10/0xff lookup 100"),
        "{text}"
    );
    assert!(
        text.ends_with("32766:\tfrom all lookup main\n32767:\tfrom all lookup default\n"),
        "{text}"
    );

    let out = fibre(&["--config", &conf, "link", "show"], "");
    let text = stdout(&out);
    assert!(
        text.contains("eth0@eth1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 state UP\n"),
        "{text}"
    );
    let out = fibre(&["-4", "--config", &conf, "addr", "show"], "");
    let text = stdout(&out);
    assert!(
        text.contains("    inet 10.0.1.1/24 brd 10.0.1.255 scope global eth1\n"),
        "{text}"
    );
    assert!(!text.contains("inet6"), "{text}");
}

#[test]
fn usage_errors_exit_1() {
    let out = fibre(&["frobnicate"], "");
    assert_eq!(out.status.code(), Some(1));
    let out = fibre(&["--help"], "");
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("lookup"));
}

// --- route import ------------------------------------------------------------

#[test]
fn import_plain_and_gzip_lists_then_run_a_command() {
    let s = Scratch::new("cli", "import");
    let plain = s.file("list.txt", b"1.0.0.0/24\n1.0.128.0/17\n\n2001:db8:1::/48\n");
    let plain = plain.display().to_string();
    let out = fibre(&["route", "import", "--nexthops", "2", &plain], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary = stdout(&out);
    assert!(
        summary.starts_with(
            "imported 3 routes (2 IPv4, 1 IPv6) into table main via 2 next hops on imp0 in "
        ),
        "{summary}"
    );

    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b"1.0.0.0/24\n1.0.128.0/17\n").unwrap();
    let gz = s
        .file("list.gz", &gz.finish().unwrap())
        .display()
        .to_string();
    let out = fibre(&["route", "import", &gz, "route", "get", "1.0.200.1"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answer = stdout(&out);
    assert!(answer.starts_with("1.0.200.1 via 198.18.0."), "{answer}");
    assert!(
        answer.contains(" dev imp0 src 198.18.0.1 uid 0 \n"),
        "{answer}"
    );
    assert!(
        stderr(&out).starts_with("imported 2 routes"),
        "{}",
        stderr(&out)
    );

    let out = fibre(
        &[
            "route", "import", "--table", "100", &gz, "route", "show", "table", "100",
        ],
        "",
    );
    assert_eq!(stdout(&out).lines().count(), 2, "{}", stdout(&out));
}

#[test]
fn import_refuses_bad_lines_and_corrupt_gzip() {
    let s = Scratch::new("cli", "import-bad");
    let bad = s
        .file("bad.txt", b"1.0.0.0/24\nbanana\n")
        .display()
        .to_string();
    let out = fibre(&["route", "import", &bad], "");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!("fibre: {bad}:2: expected a prefix such as 1.0.0.0/24 or 2001:db8::/32, got \"banana\"\n")
    );
    let hostbits = s
        .file("hostbits.txt", b"1.0.0.1/24\n")
        .display()
        .to_string();
    let out = fibre(&["route", "import", &hostbits], "");
    assert!(
        stderr(&out).contains(&format!("{hostbits}:1: ")),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("host bits"), "{}", stderr(&out));
    let corrupt = s
        .file(
            "corrupt.gz",
            &[
                0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 0xde, 0xad, 0xbe, 0xef,
            ],
        )
        .display()
        .to_string();
    let out = fibre(&["route", "import", &corrupt], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!(
            "{corrupt}:1: cannot read (corrupt gzip or not text)"
        )),
        "{}",
        stderr(&out)
    );
    let dup = s
        .file("dup.txt", b"1.0.0.0/24\n1.0.0.0/24\n")
        .display()
        .to_string();
    let out = fibre(&["route", "import", &dup], "");
    assert_eq!(
        stderr(&out),
        format!("fibre: {dup}:2: 1.0.0.0/24: RTNETLINK answers: File exists\n")
    );
    let out = fibre(&["route", "import", "--nexthops", "0", &dup], "");
    assert!(stderr(&out).contains("--nexthops: expected a number from 1 to 4096, got 0"));
}

// --- round trip ----------------------------------------------------------------

#[test]
fn route_show_output_reads_back_as_route_add() {
    let s = Scratch::new("cli", "roundtrip");
    let conf = router(&s);
    let shown = stdout(&fibre(
        &["--config", &conf, "route", "show", "table", "all"],
        "",
    ));
    // Routes the kernel makes itself come back from the addresses; the rest
    // are re-added from ip's own words (multipath lines are joined).
    let mut again = ROUTER
        .lines()
        .filter(|l| !l.starts_with("route "))
        .map(|l| format!("{l}\n"))
        .collect::<String>();
    for entry in shown.replace(" \n\tnexthop", " nexthop").lines() {
        if !entry.contains("proto kernel") {
            again.push_str(&format!("route add {entry}\n"));
        }
    }
    let conf2 = s.file("again.conf", again.as_bytes()).display().to_string();
    let out = fibre(&["--config", &conf2, "route", "show", "table", "all"], "");
    assert_eq!(out.status.code(), Some(0), "{}\n{again}", stderr(&out));
    assert_eq!(stdout(&out), shown);
}

// --- GRE tunnels -------------------------------------------------------------

/// An uplink with a gre and an ip6gre tunnel over it and routes through
/// both; the underlay routes come after the tunnels, so their MTUs are the
/// kernel's default (ETH_DATA_LEN less the headers).
const TUNNELS: &str = "\
link add eth0 type veth peer name eth1
link set eth1 up
link set eth0 up
addr add 192.0.2.1/24 dev eth0
addr add 2001:db8::1/64 dev eth0
link add gre1 up type gre remote 198.51.100.2 local 192.0.2.1 key 5 csum
route add 198.51.100.0/24 via 192.0.2.254
addr add 10.9.0.1/30 dev gre1
route add 10.20.0.0/16 dev gre1
link add g6 up type ip6gre remote 2001:db8:ff::2 local 2001:db8::1 hoplimit 64
route add 2001:db8:ff::/48 via 2001:db8::fe
addr add 2001:db8:aa::1/64 dev g6
route add 2001:db8:100::/48 dev g6
link add gt0 mtu 1400 type gretap remote 198.51.100.3
";

#[test]
fn tunnels_show_as_ip_link_does() {
    let s = Scratch::new("cli", "gre-show");
    let conf = s.file("gre.conf", TUNNELS.as_bytes()).display().to_string();
    let out = fibre(&["--config", &conf, "link", "show"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    // 1500 - 20 - 12 (key, checksum); 1500 - 40 - 4 - 8 (encapsulation limit).
    let expected = "\
4: gre1@NONE: <POINTOPOINT,NOARP,UP,LOWER_UP> mtu 1468 state UNKNOWN
    link/gre 192.0.2.1 peer 198.51.100.2
5: g6@NONE: <POINTOPOINT,NOARP,UP,LOWER_UP> mtu 1448 state UNKNOWN
    link/gre6 2001:db8::1 peer 2001:db8:ff::2
6: gt0@NONE: <BROADCAST,MULTICAST> mtu 1400 state DOWN
    link/ether
";
    assert!(text.ends_with(expected), "{text}");

    let out = fibre(&["--config", &conf, "-d", "link", "show"], "");
    let text = stdout(&out);
    assert!(text.contains(
        "\n    gre remote 198.51.100.2 local 192.0.2.1 ttl inherit ikey 0.0.0.5 okey 0.0.0.5 icsum ocsum\n"
    ), "{text}");
    assert!(text.contains(
        "\n    ip6gre remote 2001:db8:ff::2 local 2001:db8::1 hoplimit 64 encaplimit 4 tclass 0x00 flowlabel 0x00000\n"
    ), "{text}");

    let out = fibre(&["--config", &conf, "-j", "link", "show"], "");
    let links: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let gre1 = &links[3];
    assert_eq!(gre1["ifname"], "gre1");
    assert_eq!(gre1["link"], serde_json::Value::Null);
    assert_eq!(gre1["link_type"], "gre");
    assert_eq!(gre1["address"], "192.0.2.1");
    assert_eq!(gre1["link_pointtopoint"], true);
    assert_eq!(gre1["broadcast"], "198.51.100.2");
    assert_eq!(links[4]["link_type"], "gre6");
}

#[test]
fn link_show_s_prints_each_devices_statistics() {
    let s = Scratch::new("cli", "gre-stats");
    let conf = s.file("gre.conf", TUNNELS.as_bytes()).display().to_string();
    let out = fibre(&["--config", &conf, "-s", "link", "show"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    // Fresh devices: every counter is zero, in ip -s link's layout.
    let block = concat!(
        "    RX:  bytes packets errors dropped  missed   mcast           \n",
        "             0       0      0       0       0       0 \n",
        "    TX:  bytes packets errors dropped carrier collsns           \n",
        "             0       0      0       0       0       0 \n",
    );
    let gre = format!(
        "4: gre1@NONE: <POINTOPOINT,NOARP,UP,LOWER_UP> mtu 1468 state UNKNOWN\n    link/gre 192.0.2.1 peer 198.51.100.2\n{block}5: g6@NONE:"
    );
    assert!(text.contains(&gre), "{text}");
    assert_eq!(
        text.matches("    RX:  bytes").count(),
        6,
        "one block per link"
    );
    // `--stats` and ip's `-stats` are the same flag.
    let long = fibre(&["--config", &conf, "link", "show", "--stats"], "");
    assert_eq!(stdout(&long), text);
    let single = fibre(&["--config", &conf, "-stats", "link", "show"], "");
    assert_eq!(stdout(&single), text);

    let out = fibre(&["--config", &conf, "-j", "-s", "link", "show"], "");
    let links: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    for link in links.as_array().unwrap() {
        assert_eq!(link["stats64"]["rx"]["packets"], 0, "{link}");
        assert_eq!(link["stats64"]["tx"]["carrier_errors"], 0, "{link}");
    }
}

#[test]
fn route_get_through_tunnels() {
    let s = Scratch::new("cli", "gre-get");
    let conf = s.file("gre.conf", TUNNELS.as_bytes()).display().to_string();
    let get = |args: &[&str]| {
        let mut all = vec!["--config", conf.as_str(), "route", "get"];
        all.extend_from_slice(args);
        let out = fibre(&all, "");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    // The overlay leaves by the tunnel, from the tunnel's address...
    assert_eq!(
        get(&["10.20.1.1"]),
        "10.20.1.1 dev gre1 src 10.9.0.1 uid 0 \n    cache \n"
    );
    assert_eq!(
        get(&["10.9.0.2"]),
        "10.9.0.2 dev gre1 src 10.9.0.1 uid 0 \n    cache \n"
    );
    assert_eq!(
        get(&["2001:db8:100::5"]),
        "2001:db8:100::5 from :: dev g6 src 2001:db8:aa::1 metric 1024 pref medium\n"
    );
    // ...and the tunnels' remotes by the underlay, from their local address.
    assert_eq!(
        get(&["198.51.100.2"]),
        "198.51.100.2 via 192.0.2.254 dev eth0 src 192.0.2.1 uid 0 \n    cache \n"
    );
    assert_eq!(
        get(&["2001:db8:ff::2"]),
        "2001:db8:ff::2 from :: via 2001:db8::fe dev eth0 src 2001:db8::1 metric 1024 pref medium\n"
    );
}

#[test]
fn tunnel_refusals_name_the_line_and_apply_nothing() {
    let s = Scratch::new("cli", "gre-bad");
    let cases = [
        (
            "link add g type gre local 192.0.2.1\n",
            "bad.conf:1: \"gre\": expected \"remote ADDR\" with a unicast IPv4 address",
        ),
        (
            "link add g type ip6gre remote 198.51.100.2\n",
            "bad.conf:1: \"remote\": expected an IPv6 address or any",
        ),
        (
            "link add g type gre remote 198.51.100.2 key 4294967296\n",
            "(invalid value for \"key\": \"4294967296\"; it should be an unsigned integer)",
        ),
        (
            "link add eth0 up type dummy\naddr add 192.0.2.1/24 dev eth0\nlink add g type gre remote 198.51.100.2 local 192.0.2.9\n",
            "bad.conf:3: local address 192.0.2.9 of tunnel g is not configured on this router",
        ),
    ];
    for (text, want) in cases {
        let conf = s.file("bad.conf", text.as_bytes()).display().to_string();
        let out = fibre(&["--config", &conf, "link", "show"], "");
        assert_eq!(out.status.code(), Some(1), "{text}");
        let err = stderr(&out);
        assert!(err.contains(want), "{text}\n{err}");
        assert!(err.contains("nothing applied (1 error)"), "{err}");
        assert!(stdout(&out).is_empty());
    }
}

/// `mtu` and `mtu lock` as the kernel prints them (checked by hand against
/// Linux 6.x and iproute2 6.1 in a namespace; the kernel differential test
/// compares the MTU itself, which `ip -j` prints without the lock).
#[test]
fn route_mtu_and_mtu_lock_print_like_ip() {
    let scratch = Scratch::new("cli", "mtulock");
    let config = scratch.file(
        "m.conf",
        b"link add d0 type ifb\nlink set d0 up\nlink set lo up\n\
          addr add 10.0.0.1/24 dev d0\naddr add 2001:db8::1/64 dev d0 nodad\n\
          route add 198.51.100.0/24 via 10.0.0.2 mtu lock 1400\n\
          route add 203.0.113.0/24 via 10.0.0.2 mtu 1400\n\
          route add 2001:db8:5::/48 via 2001:db8::2 mtu lock 1400\n\
          route add 2001:db8:6::/48 via 2001:db8::2 mtu 1400\n",
    );
    let config = config.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["--config", config];
        all.extend_from_slice(args);
        stdout(&fibre(&all, ""))
    };
    assert_eq!(
        run(&["route", "show"]),
        "10.0.0.0/24 dev d0 proto kernel scope link src 10.0.0.1 \n\
         198.51.100.0/24 via 10.0.0.2 dev d0 mtu lock 1400 \n\
         203.0.113.0/24 via 10.0.0.2 dev d0 mtu 1400 \n"
    );
    assert_eq!(
        run(&["route", "get", "198.51.100.7"]),
        "198.51.100.7 via 10.0.0.2 dev d0 src 10.0.0.1 uid 0 \n    cache mtu lock 1400 \n"
    );
    assert_eq!(
        run(&["-6", "route", "get", "2001:db8:5::1"]),
        "2001:db8:5::1 from :: via 2001:db8::2 dev d0 src 2001:db8::1 metric 1024 mtu lock 1400 pref medium\n"
    );
    assert_eq!(
        run(&["-6", "route", "get", "2001:db8:6::1"]),
        "2001:db8:6::1 from :: via 2001:db8::2 dev d0 src 2001:db8::1 metric 1024 mtu 1400 pref medium\n"
    );
    assert!(run(&["-6", "route", "show"]).contains(
        "2001:db8:5::/48 via 2001:db8::2 dev d0 metric 1024 mtu lock 1400 pref medium\n"
    ));
}

/// `link show [dev] NAME` and `addr show [dev] NAME` show one device; an
/// unknown one is refused with ip's words and status 1.
#[test]
fn show_one_device() {
    let scratch = Scratch::new("cli", "onedev");
    let config = router(&scratch);
    let link = stdout(&fibre(&["--config", &config, "link", "show", "lo"], ""));
    assert!(link.starts_with("1: lo: <LOOPBACK,UP,LOWER_UP>"), "{link}");
    assert_eq!(link.lines().count(), 2, "{link}");
    let addr = stdout(&fibre(
        &["--config", &config, "-4", "addr", "show", "dev", "lo"],
        "",
    ));
    assert!(addr.contains("inet 127.0.0.1/8 scope host lo"), "{addr}");
    assert!(!addr.contains("inet6"), "{addr}");
    for args in [["link", "show", "nosuch"], ["addr", "show", "nosuch"]] {
        let mut all = vec!["--config", config.as_str()];
        all.extend_from_slice(&args);
        let out = fibre(&all, "");
        assert_eq!(out.status.code(), Some(1));
        assert!(
            stderr(&out).contains("Device \"nosuch\" does not exist."),
            "{}",
            stderr(&out)
        );
    }
}

/// Lines 1-3 of the tunnel-loop configurations: eth0 with 192.0.2.1/24
/// and a default route out of it.
const TUNNEL_UNDERLAY: &str = "link add eth0 up type dummy\naddr add 192.0.2.1/24 dev eth0\nroute add default via 192.0.2.254\n";

/// g1 and g2 carry each other (line 7 closes the loop); a route into g2
/// follows.
fn two_tunnel_loop() -> String {
    format!(
        "{TUNNEL_UNDERLAY}link add g1 up type gre remote 10.0.0.2 local 192.0.2.1\n\
         link add g2 up type gre remote 10.0.0.1 local 192.0.2.1\n\
         route add 10.0.0.1 dev g1\n\
         route add 10.0.0.2 dev g2\n\
         route add 10.7.0.0/16 dev g2\n"
    )
}

#[test]
fn a_loop_through_two_tunnels_is_refused_on_its_closing_line_and_force_skips_it() {
    let s = Scratch::new("cli", "gre-loop");
    let conf = s.file("loop.conf", two_tunnel_loop().as_bytes());
    let conf = conf.to_str().unwrap();
    let message = format!(
        "{conf}:7: the routes to the remotes of tunnels g1 -> g2 -> g1 go round: \
        remote 10.0.0.2 of g1 leaves through g2 (route 10.0.0.2), \
        remote 10.0.0.1 of g2 leaves through g1 (route 10.0.0.1); the tunnels would loop \
        (expected the route to one of these remotes over a link that is not one of these tunnels) \
        [after this line; g1 is added at line 4, g2 at line 5]\n"
    );
    let out = fibre(&["--config", conf, "route", "show"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert!(err.contains(&message), "{err}");
    assert!(err.ends_with("nothing applied (1 error)\n"), "{err}");
    // -force: line 7 is reported and skipped, the rest applied.
    let get = |dst: &[&str]| {
        let mut all = vec!["-force", "--config", conf, "route", "get"];
        all.extend_from_slice(dst);
        let out = fibre(&all, "");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(stderr(&out), message);
        stdout(&out)
    };
    assert_eq!(
        get(&["10.0.0.2", "from", "192.0.2.1"]),
        "10.0.0.2 from 192.0.2.1 via 192.0.2.254 dev eth0 uid 0 \n    cache \n"
    );
    assert_eq!(
        get(&["10.0.0.1"]),
        "10.0.0.1 dev g1 src 192.0.2.1 uid 0 \n    cache \n"
    );
    assert_eq!(
        get(&["10.7.0.1"]),
        "10.7.0.1 dev g2 src 192.0.2.1 uid 0 \n    cache \n"
    );
}

#[test]
fn a_loop_through_three_tunnels_names_each_of_them() {
    let s = Scratch::new("cli", "gre-loop3");
    let text = format!(
        "{TUNNEL_UNDERLAY}link add g1 up type gre remote 10.0.0.2\n\
         link add g2 up type gre remote 10.0.0.3\n\
         link add g3 up type gre remote 10.0.0.1\n\
         route add 10.0.0.2 dev g2\n\
         route add 10.0.0.1 dev g1\n\
         route add 10.0.0.3 dev g3\n"
    );
    let conf = s.file("three.conf", text.as_bytes());
    let conf = conf.to_str().unwrap();
    let out = fibre(&["--config", conf, "link", "show"], "");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "{conf}:9: the routes to the remotes of tunnels g1 -> g2 -> g3 -> g1 go round: \
             remote 10.0.0.2 of g1 leaves through g2 (route 10.0.0.2), \
             remote 10.0.0.3 of g2 leaves through g3 (route 10.0.0.3), \
             remote 10.0.0.1 of g3 leaves through g1 (route 10.0.0.1);"
        )),
        "{err}"
    );
    assert!(
        err.contains("[after this line; g1 is added at line 4, g2 at line 5, g3 at line 6]"),
        "{err}"
    );
    assert!(stdout(&out).is_empty());
}

#[test]
fn tunnels_nested_over_a_real_link_load_and_route_through_each_other() {
    let s = Scratch::new("cli", "gre-nest");
    // inner over outer over eth0.
    let text = format!(
        "{TUNNEL_UNDERLAY}link add outer up type gre remote 198.51.100.2 local 192.0.2.1\n\
         addr add 10.3.0.1/30 dev outer\n\
         link add inner up type gre remote 10.3.0.2 local 10.3.0.1 key 7\n\
         addr add 10.2.0.1/30 dev inner\n\
         route add 10.9.0.0/16 via 10.2.0.2\n"
    );
    let conf = s.file("nest.conf", text.as_bytes());
    let conf = conf.to_str().unwrap();
    let get = |dst: &str| {
        let out = fibre(&["--config", conf, "route", "get", dst], "");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(stderr(&out).is_empty(), "{}", stderr(&out));
        stdout(&out)
    };
    assert_eq!(
        get("10.9.1.1"),
        "10.9.1.1 via 10.2.0.2 dev inner src 10.2.0.1 uid 0 \n    cache \n"
    );
    assert_eq!(
        get("10.3.0.2"),
        "10.3.0.2 dev outer src 10.3.0.1 uid 0 \n    cache \n"
    );
    assert_eq!(
        get("198.51.100.2"),
        "198.51.100.2 via 192.0.2.254 dev eth0 src 192.0.2.1 uid 0 \n    cache \n"
    );
}

#[test]
fn a_tunnel_broken_by_a_later_line_is_refused_on_that_line() {
    let s = Scratch::new("cli", "gre-later");
    let tunnel = "link add gre1 up type gre remote 198.51.100.2 local 192.0.2.1\n";
    let cases = [
        (
            "addr del 192.0.2.1/24 dev eth0\n",
            ":5: local address 192.0.2.1 of tunnel gre1 is not configured on this router (expected one of its addresses; add it with \"addr add 192.0.2.1/LEN dev DEV\") [after this line; gre1 is added at line 4]\n",
        ),
        (
            "route add 198.51.100.0/24 dev gre1\n",
            ":5: the route to remote 198.51.100.2 leaves through gre1 itself: the tunnel would loop (expected a route to 198.51.100.2 over another link) [after this line; gre1 is added at line 4]\n",
        ),
    ];
    for (later, want) in cases {
        let text = format!("{TUNNEL_UNDERLAY}{tunnel}{later}route add 10.9.0.0/16 dev gre1\n");
        let conf = s.file("bad.conf", text.as_bytes());
        let conf = conf.to_str().unwrap();
        let out = fibre(&["--config", conf, "route", "show"], "");
        assert_eq!(out.status.code(), Some(1), "{later}");
        assert_eq!(
            stderr(&out),
            format!("fibre: {conf}{want}nothing applied (1 error)\n")
        );
        // -force skips the later line only: the tunnel and the route
        // into it stay.
        let out = fibre(
            &["-force", "--config", conf, "route", "get", "10.9.0.1"],
            "",
        );
        assert_eq!(out.status.code(), Some(0), "{later}");
        assert_eq!(stderr(&out), format!("{conf}{want}"));
        assert_eq!(
            stdout(&out),
            "10.9.0.1 dev gre1 src 192.0.2.1 uid 0 \n    cache \n"
        );
    }
}
