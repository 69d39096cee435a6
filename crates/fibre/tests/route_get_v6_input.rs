//! `fibre route get -6 ADDR from SRC iif DEV`, an IPv6 input lookup,
//! printed as `ip -6 route get` prints the kernel's answer: `iif DEV`
//! after the metric (RTA_IIF, which `rt6_fill_node()` puts), no `mark`
//! (it puts no RTA_MARK). The expected lines are the kernel's (6.1,
//! iproute2 6.1) for the same configuration in a network namespace.

#[path = "support/scratch.rs"]
mod scratch;
use scratch::Scratch;

use std::process::Command;

const CONFIG: &str = "link set lo up
link add a0 type veth peer name a1
link set a0 up
link set a1 up
addr add 2001:db8:1::1/64 dev a0
addr add 2001:db8:2::1/64 dev a1
-6 route add 2001:db8:9::/48 via 2001:db8:1::5
";

fn route_get(config: &str, json: bool, query: &str) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fibre"));
    command.args(["--config", config, "-6"]);
    if json {
        command.arg("-j");
    }
    command
        .args(["route", "get"])
        .args(query.split_whitespace());
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{query}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn ipv6_input_lookups_print_their_iif_as_ip_does() {
    let dir = Scratch::new("getv6", "iif");
    let config = dir.file_arg("router.conf", CONFIG.as_bytes());
    let cases = [
        (
            "2001:db8:9::1 from 2001:db8:2::7 iif a1",
            "2001:db8:9::1 from 2001:db8:2::7 via 2001:db8:1::5 dev a0 metric 1024 iif a1 pref medium",
        ),
        (
            "2001:db8:2::9 from 2001:db8:1::7 iif a0 mark 5",
            "2001:db8:2::9 from 2001:db8:1::7 dev a1 proto kernel metric 256 iif a0 pref medium",
        ),
        (
            "2001:db8:1::1 from 2001:db8:2::7 iif a1",
            "local 2001:db8:1::1 from 2001:db8:2::7 dev lo table local proto kernel metric 0 iif a1 pref medium",
        ),
    ];
    for (query, kernel) in cases {
        assert_eq!(
            route_get(&config, false, query).trim_end(),
            kernel,
            "{query}"
        );
    }
    assert_eq!(
        route_get(&config, true, "2001:db8:9::1 from 2001:db8:2::7 iif a1").trim_end(),
        r#"[{"dst":"2001:db8:9::1","from":"2001:db8:2::7","gateway":"2001:db8:1::5","dev":"a0","metric":1024,"flags":[],"iif":"a1","pref":"medium"}]"#
    );
    assert_eq!(
        route_get(
            &config,
            true,
            "2001:db8:2::9 from 2001:db8:1::7 iif a0 mark 5"
        )
        .trim_end(),
        r#"[{"dst":"2001:db8:2::9","from":"2001:db8:1::7","dev":"a1","protocol":"kernel","metric":256,"flags":[],"iif":"a0","pref":"medium"}]"#
    );
}
