//! Path MTU exceptions with the Linux kernel as the oracle.
//!
//! Three network namespaces, host A -- router R -- host C (see
//! `pmtu_kernel/topology.rs`): A pings C with DF set and packets too big
//! for R's links towards C (MTU 1300, and 500 for IPv4), while `dumpcap`
//! captures A's ICMP traffic. R answers with fragmentation-needed and
//! packet-too-big errors; A's kernel records route exceptions from them,
//! and its `ip route get` / `ip route show cache` (IPv4 and IPv6, text and
//! `-j`) are the expectation. A listing (`route show cache`) is compared
//! entry by entry in any order: the kernel's order depends on a hash keyed
//! at boot (`pmtu_kernel/order.rs`).
//!
//! fibre is then given A's configuration and the captured pcap,
//! `fibre --config A.conf --icmp received.pcap [-j] [-6] route get|show
//! cache ...`, and must print the same bytes, except the seconds an
//! exception has left, which need only be fresh (590..=600) on both sides.
//!
//! Needs root, `ip` (iproute2) with working `ip netns`, veth links,
//! `dumpcap` and `tshark` (Wireshark) and iputils' `ping`. Without them it
//! prints why and passes; `FIBRE_REQUIRE_TOOLS=1` turns that into a
//! failure (for CI), as in kernel_diff.rs. Every command runs under a time
//! limit and the namespaces are deleted on drop, also on panic. Traffic
//! flows only between the namespaces the test makes.

#[allow(dead_code)] // `kernel` needs it; none of it is called here.
#[path = "kernel_diff/answer.rs"]
mod answer;
#[path = "pmtu_kernel/capture.rs"]
mod capture;
#[path = "pmtu_kernel/expiry.rs"]
mod expiry;
#[allow(dead_code)] // For `model_mac`: the MAC (hence link-local) fibre's model gives a link.
#[path = "kernel_diff/kernel.rs"]
mod kernel;
#[path = "support/netns.rs"]
mod netns;
#[path = "pmtu_kernel/order.rs"]
mod order;
#[path = "kernel_diff/process.rs"]
mod process;
#[path = "pmtu_kernel/topology.rs"]
mod topology;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use netns::Namespace;
use topology::{Topology, PROBES};

/// Limit for one `fibre` or `tshark` process.
const TOOL_LIMIT: Duration = Duration::from_secs(60);

/// A question asked of A's kernel and of fibre, each also with `-j`.
struct Query {
    /// The words after `ip -n A [-j]` and `fibre ... [-j]`.
    args: &'static [&'static str],
    /// What the kernel's text answer must hold for the test to mean
    /// anything: the exception R's error made. Not compared with fibre
    /// (the whole answer is): a check of the setup.
    kernel_shows: Option<&'static str>,
}

const QUERIES: &[Query] = &[
    Query {
        args: &["route", "get", "10.0.2.2"],
        kernel_shows: Some("cache expires"),
    },
    Query {
        args: &["route", "get", "10.0.3.2"],
        kernel_shows: Some("mtu lock 552"),
    },
    Query {
        args: &["-6", "route", "get", "2001:db8:2::2"],
        kernel_shows: Some("mtu 1300"),
    },
    // R sent the errors: no exception towards R itself.
    Query {
        args: &["route", "get", "10.0.1.1"],
        kernel_shows: None,
    },
    Query {
        args: &["-6", "route", "get", "2001:db8:1::1"],
        kernel_shows: None,
    },
    Query {
        args: &["route", "show", "cache"],
        kernel_shows: Some("10.0.3.2 via 10.0.1.1 dev a0"),
    },
    Query {
        args: &["-6", "route", "show", "cache"],
        kernel_shows: Some("2001:db8:2::2 via 2001:db8:1::1 dev a0"),
    },
];

/// A directory for the configuration and the pcap; removed on drop unless
/// the test failed, when it is kept (and named) for a look.
struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn create() -> Result<Scratch, String> {
        let dir = std::env::temp_dir().join(format!("fibre-pmtu-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(Scratch { dir })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "pmtu_kernel: configuration and pcap kept in {}",
                self.dir.display()
            );
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Why the test cannot run here, or `None` when it can.
fn unavailable_reason() -> Option<String> {
    match fibre_testkit::effective_uid() {
        Some(0) => {}
        Some(uid) => return Some(format!("not root (effective uid {uid})")),
        None => return Some("cannot read the effective uid from /proc/self/status".into()),
    }
    if let Some(missing) = fibre_testkit::missing_tool(&["ip", "dumpcap", "tshark", "ping"]) {
        return Some(missing);
    }
    // `-M do` (DF) is iputils' option; busybox's ping has none.
    let mut version = Command::new("ping");
    version.arg("-V");
    match process::run(version, "", netns::IP_LIMIT) {
        Ok(done) if done.stdout.contains("iputils") => {}
        Ok(done) => return Some(format!("ping is not iputils' ({})", done.stdout.trim())),
        Err(e) => return Some(e),
    }
    topology::namespace("probe")
        .err()
        .map(|e| format!("ip netns does not work: {e}"))
}

/// True when the test can run; otherwise says why and, under
/// `FIBRE_REQUIRE_TOOLS=1`, fails.
fn available() -> bool {
    let Some(reason) = unavailable_reason() else {
        return true;
    };
    fibre_testkit::unavailable("pmtu_kernel", &reason);
    false
}

/// Every query's argument list, plain then with `-j`.
fn asked() -> Vec<Vec<&'static str>> {
    QUERIES
        .iter()
        .flat_map(|q| {
            let mut json = vec!["-j"];
            json.extend_from_slice(q.args);
            [q.args.to_vec(), json]
        })
        .collect()
}

/// A's kernel's answers, in the order of [`asked`]; checks that the
/// exceptions are there.
fn kernel_answers(a: &Namespace) -> Result<Vec<String>, String> {
    let answers = asked()
        .iter()
        .map(|args| a.ip(args))
        .collect::<Result<Vec<_>, _>>()?;
    for (query, answer) in QUERIES.iter().zip(answers.iter().step_by(2)) {
        if let Some(needle) = query.kernel_shows {
            if !answer.contains(needle) {
                return Err(format!(
                    "A's kernel has not the exception R's error should have made: `ip {}` lacks \"{needle}\":\n{answer}",
                    query.args.join(" ")
                ));
            }
        }
    }
    Ok(answers)
}

/// Checks that the capture holds R's errors, one per probe, with their
/// MTUs, as tshark decodes them: the input fibre is given is complete.
fn check_capture(pcap: &Path) -> Result<(), String> {
    let mut tshark = Command::new("tshark");
    tshark
        .arg("-r")
        .arg(pcap)
        .args([
            "-Y",
            "(icmp.type == 3 && icmp.code == 4) || icmpv6.type == 2",
        ])
        .args(["-T", "fields", "-e", "icmp.mtu", "-e", "icmpv6.mtu"]);
    let done = process::run(tshark, "", TOOL_LIMIT)?;
    if done.code != Some(0) {
        return Err(format!(
            "tshark -r {}: {}",
            pcap.display(),
            done.stderr.trim()
        ));
    }
    let mut seen: Vec<String> = done
        .stdout
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    let mut expected: Vec<String> = PROBES.iter().map(|p| p.mtu.to_string()).collect();
    seen.sort();
    expected.sort();
    if seen != expected {
        return Err(format!(
            "the capture holds ICMP errors with MTUs {seen:?}, not {expected:?}"
        ));
    }
    Ok(())
}

/// fibre's answer to one query: its stdout, or how it failed.
fn fibre_answer(config: &Path, pcap: &Path, args: &[&str]) -> Result<String, String> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fibre"));
    command
        .arg("--config")
        .arg(config)
        .arg("--icmp")
        .arg(pcap)
        .args(args);
    let done = process::run(command, "", TOOL_LIMIT)?;
    if done.code != Some(0) {
        return Err(format!(
            "fibre exited with {:?}: {}",
            done.code,
            done.stderr.trim()
        ));
    }
    Ok(done.stdout)
}

/// Whether the answer to `args` is a listing whose order the kernel does
/// not fix (see [`order`]).
fn is_listing(args: &[&str]) -> bool {
    args.ends_with(&["show", "cache"])
}

/// What differs between the kernel's answer and fibre's, or `None`.
/// Listings are compared entry by entry, in any order.
fn difference(args: &[&str], kernel: &str, fibre: &Result<String, String>) -> Option<String> {
    let fibre = match fibre {
        Ok(text) => text,
        Err(e) => return Some(e.clone()),
    };
    let (mut kernel_masked, kernel_seconds) = expiry::mask(kernel);
    let (mut fibre_masked, fibre_seconds) = expiry::mask(fibre);
    if is_listing(args) {
        kernel_masked = order::sorted_entries(&kernel_masked);
        fibre_masked = order::sorted_entries(&fibre_masked);
    }
    if kernel_masked != fibre_masked {
        return Some("the answers differ (expiry seconds aside)".into());
    }
    if let Some(stale) = expiry::stale(&kernel_seconds) {
        return Some(format!("the kernel's {stale}: the test ran too slowly"));
    }
    expiry::stale(&fibre_seconds).map(|stale| format!("fibre's {stale}"))
}

fn run(scratch: &Scratch) -> Result<(), String> {
    let topology = Topology::build()?;
    let capture = capture::Capture::start(
        &topology.a,
        topology::A_DEV,
        topology::CAPTURE_FILTER,
        topology::CAPTURED,
        &scratch.path("received.pcap"),
    )?;
    topology.provoke()?;
    let pcap = capture.finish()?;
    let kernel = kernel_answers(&topology.a)?;
    drop(topology);
    check_capture(&pcap)?;

    let config_path = scratch.path("a.conf");
    let config: String = topology::host_config()
        .iter()
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&config_path, config).map_err(|e| format!("{}: {e}", config_path.display()))?;

    let mut report = String::new();
    let mut differing = 0;
    for (args, kernel) in asked().iter().zip(&kernel) {
        let fibre = fibre_answer(&config_path, &pcap, args);
        let command = args.join(" ");
        eprintln!("pmtu_kernel: ip {command}:\n{kernel}");
        if let Some(why) = difference(args, kernel, &fibre) {
            differing += 1;
            let fibre_text = fibre.as_deref().unwrap_or("(no answer)");
            report.push_str(&format!(
                "\n`{command}`: {why}\n  kernel: {kernel:?}\n  fibre:  {fibre_text:?}\n"
            ));
        }
    }
    if differing > 0 {
        return Err(format!(
            "{differing} of {} answers differ from A's kernel's:{report}",
            kernel.len()
        ));
    }
    Ok(())
}

#[test]
fn pmtu_exceptions_agree_with_the_kernel() {
    if !available() {
        return;
    }
    // Made here, so that it is dropped while unwinding and kept.
    let scratch = Scratch::create().unwrap_or_else(|e| panic!("pmtu_kernel: {e}"));
    if let Err(e) = run(&scratch) {
        panic!("pmtu_kernel: {e}");
    }
}
