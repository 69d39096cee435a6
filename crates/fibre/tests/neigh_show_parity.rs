//! `fibre neigh show` against `ip neigh show` for random static
//! neighbours: the same `neigh` lines (add, replace, change, del, flush;
//! every NUD state, with and without a link-layer address, router or not,
//! on a veth pair, an ifb and lo) are given to the kernel in a namespace,
//! one `ip` call per line (`ip -batch` stops at the first refusal even
//! with `-force`, since `ipneigh_modify` exits), and to fibre with
//! `--force`; then the refused lines must be the same, and so must the
//! listings, text and JSON, default and `nud all`, whole and per device.
//! The kernel lists in the order of its hash buckets (randomly seeded), so
//! listings are compared as sets of lines; the multicast entries the
//! kernel makes for itself (ff02::..., MLD) are left out of `nud all`.
//!
//! The namespace's neighbour timers are slowed down (retrans 600 s) so
//! that the entries the lines leave in PROBE or REACHABLE are still there
//! when listed, as fibre lists them at the instant the file is applied.
//!
//! Seeds: `FIBRE_NEIGH_SEED` (default a fixed one), `FIBRE_NEIGH_LINES`
//! lines (default 150). Needs root, `ip` and `sysctl`; skips without them (fails
//! under `FIBRE_REQUIRE_TOOLS=1`). The namespace is deleted afterwards.

use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Stdio};

const FIBRE: &str = env!("CARGO_BIN_EXE_fibre");

/// The links, in both: lo up, veth v0/v1 up (carrier), ifb i0 down, and
/// 10.0.0.1/24 on v0 (a local table, so a lladdr-less entry is refused
/// rather than broadcast).
const SETUP: &[&str] = &[
    "link set lo up",
    "link add v0 type veth peer name v1",
    "link add i0 type ifb",
    "link set v0 up",
    "link set v1 up",
    "addr add 10.0.0.1/24 dev v0",
];

struct Namespace(String);

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.0])
            .stderr(Stdio::null())
            .status();
    }
}

/// xorshift64*: the lines of one seed are the same on every run.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

fn random_line(rng: &mut Random) -> String {
    let dev = rng.pick(&["v0", "v0", "v1", "i0", "i0", "lo"]);
    let addr = if rng.below(3) == 0 {
        format!("2001:db8::{:x}", rng.below(12) + 2)
    } else {
        format!("10.0.{}.{}", rng.below(2), rng.below(12) + 2)
    };
    let verb = match rng.below(10) {
        0..=4 => "add",
        5 | 6 => "replace",
        7 => "change",
        8 => "del",
        _ => return format!("neigh flush dev {dev}"),
    };
    if verb == "del" {
        return format!("neigh del {addr} dev {dev}");
    }
    let state = rng.pick(&[
        "",
        "",
        "permanent",
        "reachable",
        "stale",
        "noarp",
        "delay",
        "probe",
        "failed",
        "incomplete",
        "none",
    ]);
    let mut line = format!("neigh {verb} {addr}");
    // Without a link-layer address only where the kernel's answer does not
    // depend on a random MAC (an ifb's own, which a NOARP entry takes).
    let needs_mac = dev == "i0" && !matches!(state, "failed" | "incomplete" | "none");
    if needs_mac || rng.below(5) != 0 {
        line += &format!(
            " lladdr 02:00:00:00:{:02x}:{:02x}",
            rng.below(4),
            rng.below(256)
        );
    }
    line += &format!(" dev {dev}");
    if !state.is_empty() {
        line += &format!(" nud {state}");
    }
    if rng.below(4) == 0 {
        line += " router";
    }
    line
}

fn ip(ns: &str, line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    Command::new("ip")
        .args(["-n", ns])
        .args(&words)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run ip")
        .success()
}

fn output(mut command: Command) -> (String, String) {
    let out = command.output().expect("run a command");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn kernel_show(ns: &str, args: &[&str]) -> String {
    let mut command = Command::new("ip");
    command.args(["-n", ns]).args(args);
    output(command).0
}

fn fibre_show(config: &std::path::Path, args: &[&str]) -> String {
    let mut command = Command::new(FIBRE);
    command
        .arg("--force")
        .arg("--config")
        .arg(config)
        .args(args);
    output(command).0
}

/// The lines of a listing as a set, the kernel's own multicast entries left out.
fn lines(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|l| !l.starts_with("ff02:"))
        .map(str::to_string)
        .collect()
}

/// The objects of a JSON listing as a set, likewise.
fn objects(text: &str) -> BTreeSet<String> {
    let value: serde_json::Value = serde_json::from_str(text.trim()).expect("JSON");
    value
        .as_array()
        .expect("an array")
        .iter()
        .filter(|o| !o["dst"].as_str().is_some_and(|d| d.starts_with("ff02:")))
        .map(|o| o.to_string())
        .collect()
}

#[test]
fn random_static_neighbours_show_as_the_kernel_shows_them() {
    let test = "random_static_neighbours_show_as_the_kernel_shows_them";
    if let Some(missing) = fibre_testkit::missing_tool(&["ip", "sysctl"]) {
        return fibre_testkit::unavailable(test, &missing);
    }
    if fibre_testkit::effective_uid() != Some(0) {
        return fibre_testkit::unavailable(test, "needs root for a network namespace");
    }
    let seed = fibre_testkit::env_number("FIBRE_NEIGH_SEED", 0x6e65_6967_6820_0001);
    let count = fibre_testkit::env_number("FIBRE_NEIGH_LINES", 150);
    let ns = Namespace(format!("fibre-neigh-show-{}", std::process::id()));
    let status = Command::new("ip")
        .args(["netns", "add", &ns.0])
        .status()
        .unwrap();
    assert!(status.success(), "ip netns add");
    for line in SETUP {
        assert!(ip(&ns.0, line), "setup: {line}");
    }
    // fibre shows the entries as they are the instant the file is applied;
    // the kernel's are shown a second or more after the first line. Slow
    // timers (set before the links copy them) keep the kernel's PROBE and
    // REACHABLE entries where they were meanwhile (per device: a namespace
    // other than the first has no `default` to set).
    for (family, dev) in ["ipv4", "ipv6"]
        .iter()
        .flat_map(|f| ["lo", "v0", "v1", "i0"].map(|d| (*f, d)))
    {
        for (knob, value) in [
            ("retrans_time_ms", "600000"),
            ("base_reachable_time_ms", "3600000"),
        ] {
            let setting = format!("net.{family}.neigh.{dev}.{knob}={value}");
            let status = Command::new("ip")
                .args(["netns", "exec", &ns.0, "sysctl", "-qw", &setting])
                .status()
                .unwrap();
            assert!(status.success(), "sysctl {setting}");
        }
    }
    let mut rng = Random(seed | 1);
    let generated: Vec<String> = (0..count).map(|_| random_line(&mut rng)).collect();
    let mut kernel_refused = BTreeSet::new();
    for (i, line) in generated.iter().enumerate() {
        if !ip(&ns.0, line) {
            kernel_refused.insert(SETUP.len() + i + 1);
        }
    }
    let dir = std::env::temp_dir().join(format!("fibre-neigh-show-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("n.conf");
    let mut file = std::fs::File::create(&config).unwrap();
    for line in SETUP
        .iter()
        .copied()
        .chain(generated.iter().map(String::as_str))
    {
        writeln!(file, "{line}").unwrap();
    }
    drop(file);
    // fibre's refusals: `FILE:LINE: message` on stderr.
    let mut command = Command::new(FIBRE);
    command
        .arg("--force")
        .arg("--config")
        .arg(&config)
        .args(["neigh", "show"]);
    let (_, stderr) = output(command);
    let prefix = format!("{}:", config.display());
    let fibre_refused: BTreeSet<usize> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .filter_map(|rest| rest.split(':').next()?.parse().ok())
        .collect();
    let numbered = |set: &BTreeSet<usize>, other: &BTreeSet<usize>| -> Vec<String> {
        set.difference(other)
            .map(|n| format!("{n}: {}", generated[n - SETUP.len() - 1]))
            .collect()
    };
    let only_fibre = numbered(&fibre_refused, &kernel_refused);
    let only_kernel = numbered(&kernel_refused, &fibre_refused);
    assert!(
        only_fibre.is_empty() && only_kernel.is_empty(),
        "seed {seed:#x}: refused by fibre only: {only_fibre:#?}\nrefused by the kernel only: {only_kernel:#?}"
    );
    let mut compared = 0;
    for selector in [
        vec![],
        vec!["nud", "all"],
        vec!["dev", "v0"],
        vec!["dev", "i0", "nud", "all"],
        vec!["dev", "lo", "nud", "all"],
        vec!["10.0.1.0/24"],
        vec!["nud", "stale", "nud", "probe"],
    ] {
        let mut args = vec!["neigh", "show"];
        args.extend(&selector);
        let kernel = lines(&kernel_show(&ns.0, &args));
        let ours = lines(&fibre_show(&config, &args));
        assert_eq!(ours, kernel, "ip {} (seed {seed:#x})", args.join(" "));
        let mut json_args = vec!["-j"];
        json_args.extend(&args);
        let kernel = objects(&kernel_show(&ns.0, &json_args));
        let ours = objects(&fibre_show(&config, &json_args));
        assert_eq!(ours, kernel, "ip {} (seed {seed:#x})", json_args.join(" "));
        compared += kernel.len();
    }
    assert!(
        compared > 20,
        "only {compared} entries compared: the lines make too few"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
