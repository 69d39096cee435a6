//! The `fibre` command after rule deletions, and table 0, as `ip` 6.1 on
//! Linux 6.18 printed them in a network namespace.

#[path = "support/config_file.rs"]
mod config_file;

use std::process::Output;

use config_file::{fibre, ConfigFile};

/// stdout and stderr together.
fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

const BASE: &str =
    "link set lo up\nlink add d0 type ifb\nlink set d0 up\naddr add 192.0.2.1/24 dev d0\n";

fn route_get(tag: &str, lines: &str, args: &[&str]) -> String {
    let config = ConfigFile::new("rule-cli", tag, &format!("{BASE}{lines}"));
    let mut all = vec!["--config", config.path()];
    all.extend_from_slice(args);
    text(&fibre(&all))
}

#[test]
fn after_deleting_the_local_rule_main_answers() {
    // ip: `192.0.2.1 dev d0 src 192.0.2.1 uid 0`, `cache` on the next line.
    let out = route_get("del0", "rule del pref 0\n", &["route", "get", "192.0.2.1"]);
    assert!(out.starts_with("192.0.2.1 dev d0 src 192.0.2.1 "), "{out}");
}

#[test]
fn unmerged_local_answers_name_table_local() {
    // ip: `local 192.0.2.1 dev lo table local src 192.0.2.1 uid 0`; -j
    // has `"table":"local"`. Before any rule change neither names it.
    let del = "rule del pref 32767\n";
    let out = route_get("local", del, &["route", "get", "192.0.2.1"]);
    assert!(
        out.starts_with("local 192.0.2.1 dev lo table local src 192.0.2.1 "),
        "{out}"
    );
    let out = route_get("localj", del, &["-j", "route", "get", "192.0.2.1"]);
    assert!(out.contains("\"table\":\"local\""), "{out}");
    let out = route_get("merged", "", &["route", "get", "192.0.2.1"]);
    assert!(
        out.starts_with("local 192.0.2.1 dev lo src 192.0.2.1 "),
        "{out}"
    );
    // fibmatch: `local 192.0.2.1 dev d0 table local proto kernel scope host src 192.0.2.1`.
    let out = route_get("fibmatch", del, &["route", "get", "fibmatch", "192.0.2.1"]);
    assert_eq!(
        out.trim_end(),
        "local 192.0.2.1 dev d0 table local proto kernel scope host src 192.0.2.1"
    );
}

#[test]
fn after_deleting_the_main_rule_main_is_unreachable() {
    let out = route_get(
        "del32766",
        "rule del pref 32766\n",
        &["route", "get", "192.0.2.5"],
    );
    assert!(
        out.contains("RTNETLINK answers: Network is unreachable"),
        "{out}"
    );
}

#[test]
fn import_into_table_zero_fills_main() {
    // `route add ... table 0` lands in main (`ip -d route` shows `table main`).
    let list = ConfigFile::new("rule-cli", "import", "198.51.100.0/24\n");
    let out = fibre(&[
        "route",
        "import",
        "--table",
        "0",
        list.path(),
        "route",
        "show",
    ]);
    let all = text(&out);
    assert!(all.contains("into table main via"), "{all}");
    assert!(all.contains("198.51.100.0/24 via "), "{all}");
}
