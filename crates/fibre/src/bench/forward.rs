//! `fibre bench forward`: `fibre serve` against the kernel as the router,
//! the same offered traffic, in one run.
//!
//! Topology (three namespaces made and deleted by the run):
//! `hostA a0 --veth-- r0 router r1 --veth-- b0 hostB`. hostA (10.1.0.2)
//! sends; the router owns 10.1.0.1/24 on r0 and 10.2.0.1/24 on r1 and
//! routes [`ROUTES`] /24s of 198.18.0.0/16 (RFC 2544's benchmarking
//! range) via hostB (10.2.0.2), whose MAC is a permanent neighbour entry:
//! no ARP is needed, which matters because hostB drops what it receives.
//!
//! Traffic: `trafgen` (Debian's netsniff-ng) in hostA, TX_RING,
//! `--no-sock-mem` (without it trafgen rewrites global sysctls), pinned
//! to the first CPU, a bounded count (`-n`) of 64-byte UDP payloads
//! round-robin over one destination in each routed /24. The sender veth's
//! TX checksum offload is off, so every frame carries a full checksum.
//! hostB counts with an nft netdev ingress rule that counts and drops IP
//! only (dropping ARP too would starve the kernel router's neighbour
//! entry, were it not permanent).
//!
//! Routers, one after the other on the same namespaces:
//! 1. the kernel (`ip_forward=1`, the addresses, routes and neighbour);
//! 2. `fibre serve` over AF_PACKET (this executable) with the same
//!    configuration, its kernel stripped of the addresses and with
//!    forwarding off and kept from routing its copy of each frame by an
//!    nft netdev ingress drop of IP on r0 and r1 (AF_PACKET taps see
//!    frames before that hook), pinned to the second CPU with one worker;
//! 3. the same with two workers (both CPUs), when there are two.
//!
//! Each prints offered packets (hostA's a0 TX counter), delivered packets
//! (hostB's nft counter), delivered pps (over the time from trafgen's
//! start to the counter's last change), the ratio to the kernel's, loss,
//! and for fibre its CPU time per delivered packet (utime + stime from
//! `/proc/PID/stat`). The kernel's forwarding runs as softirq on the
//! sending CPU (veth delivers in the sender's context), charged to no
//! process: not measured.
//!
//! Unless `--quick` (or with `--prefixes N`), the three run again with
//! the RIS IPv4 table (its first N prefixes) loaded into both routers as
//! routes via hostB, less those overlapping the bench's own addresses, so
//! that the same frames take the same /24s through a full-sized FIB.
//!
//! Not built here: fibre over AF_XDP (no backend yet), `dpdk-testpmd`'s
//! io-forward ceiling, the offered load sweep and its SVG plot.
//!
//! SIGINT or SIGTERM ends the run at its next step; namespaces, the
//! router process and the scratch directory are removed on the way out.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use fibre_bench::data::{self, Prefix};
use fibre_bench::{BenchError, Context, Experiment, ExperimentReport, Measurement};
use fibre_testkit::netns::Namespace;
use serde_json::json;

use super::converge::Interruption;

/// The name on the command line.
pub const NAME: &str = "forward";
/// One line on what it measures.
pub const ABOUT: &str = "64-byte UDP between veth namespaces through the kernel and fibre serve (AF_PACKET), same traffic, one run (root, trafgen, nft)";

/// Packets offered to each router in quick mode.
const QUICK_PACKETS: u64 = 300_000;
/// Packets offered to each router in a full run.
const FULL_PACKETS: u64 = 3_000_000;
/// The /24s of 198.18.0.0/16 routed via hostB, one destination in each.
const ROUTES: usize = 256;
/// UDP payload bytes of each frame.
const PAYLOAD: usize = 64;
/// How long one trafgen run may take.
const TRAFGEN_LIMIT: Duration = Duration::from_secs(300);
/// How long the counter may keep growing after trafgen ends.
const SETTLE_LIMIT: Duration = Duration::from_secs(5);
/// The namespaces' prefix: `fbfwd-<pid>-<role>`.
const PREFIX: &str = "fbfwd";

/// Lines of one `ip -batch` into the kernel router (each `ip` process
/// is bounded by [`fibre_testkit::netns::IP_LIMIT`]; ip -batch installs
/// about 33k routes/s here).
const KERNEL_BATCH: usize = 100_000;

/// The experiment; `fibre` is the executable run as `fibre serve`.
pub struct ForwardExperiment {
    /// The `fibre` executable.
    pub fibre: PathBuf,
    /// Packets offered to each router; quick or full when `None`.
    pub packets: Option<u64>,
    /// RIS IPv4 prefixes loaded into both routers for a second pass: the
    /// first N of the table; none with `--quick`, all without, when `None`.
    pub prefixes: Option<usize>,
}

fn failed(message: impl Into<String>) -> BenchError {
    BenchError::Failed {
        experiment: NAME,
        message: message.into(),
    }
}

fn check_interrupted() -> Result<(), BenchError> {
    if Interruption::signalled() {
        Err(failed("interrupted by a signal"))
    } else {
        Ok(())
    }
}

/// Why the bench cannot run here, if it cannot.
fn unavailable_reason() -> Option<String> {
    match fibre_testkit::effective_uid() {
        Some(0) => {}
        Some(uid) => return Some(format!("not root (effective uid {uid})")),
        None => return Some("cannot read the effective uid".into()),
    }
    fibre_testkit::missing_tool(&["ip", "trafgen", "nft", "ethtool", "taskset"])
}

impl Experiment for ForwardExperiment {
    fn run(&self, ctx: &Context) -> Result<ExperimentReport, BenchError> {
        if let Some(why) = unavailable_reason() {
            return Err(failed(format!(
                "needs root, ip, trafgen (Debian's netsniff-ng), nft (nftables), ethtool and taskset: {why}"
            )));
        }
        let packets = self.packets.unwrap_or(if ctx.quick {
            QUICK_PACKETS
        } else {
            FULL_PACKETS
        });
        if packets == 0 {
            return Err(failed("--packets 0: nothing to offer"));
        }
        let wanted = self
            .prefixes
            .unwrap_or(if ctx.quick { 0 } else { usize::MAX });
        let table = if wanted > 0 {
            let dir = data::resolve_data_dir(ctx.data_dir.as_deref())?;
            let table: Vec<Prefix<u32>> =
                data::load_table(&data::table_path::<u32>(&dir), &ctx.progress)?;
            table_lines(&table, wanted)
        } else {
            Vec::new()
        };
        let signals = Interruption::catch()?;
        let outcome = self.measure(packets, &table);
        if signals.caught() {
            return Err(failed(
                "interrupted by a signal; its namespaces and router are removed",
            ));
        }
        outcome
    }
}

/// The first `wanted` prefixes of the RIS table as routes via hostB,
/// less those that overlap the bench's own addresses (10.0.0.0/8) or
/// destinations (198.18.0.0/15), so that every frame still meets the
/// same /24 and both routers hold the same table.
fn table_lines(table: &[Prefix<u32>], wanted: usize) -> Vec<String> {
    let overlaps = |p: &Prefix<u32>, net: u32, len: u8| {
        let shorter = p.len.min(len);
        let mask = if shorter == 0 {
            0
        } else {
            u32::MAX << (32 - u32::from(shorter))
        };
        p.addr & mask == net & mask
    };
    table
        .iter()
        .take(wanted)
        .filter(|p| !overlaps(p, 0x0a00_0000, 8) && !overlaps(p, 0xc612_0000, 15))
        .map(|p| format!("route add {p} via 10.2.0.2 dev r1"))
        .collect()
}

/// What one router did with the offered traffic.
#[derive(Debug, Clone)]
struct RouterRun {
    router: String,
    /// The routes it held: the bench's own, and how many RIS prefixes.
    ris_routes: usize,
    offered: u64,
    delivered: u64,
    /// From trafgen's start to the counter's last change.
    seconds: f64,
    /// trafgen's own run time.
    offer_seconds: f64,
    /// The router process's CPU time over the run, when it has one.
    cpu_seconds: Option<f64>,
    /// The router's own closing line (fibre serve's counters).
    closing: Option<String>,
}

impl RouterRun {
    fn delivered_pps(&self) -> f64 {
        self.delivered as f64 / self.seconds
    }

    /// What trafgen sent over its own run time (start-up included).
    fn offered_pps(&self) -> f64 {
        self.offered as f64 / self.offer_seconds
    }

    fn loss_percent(&self) -> f64 {
        if self.offered == 0 {
            return 0.0;
        }
        100.0 * (1.0 - self.delivered as f64 / self.offered as f64)
    }

    fn cpu_ns_per_packet(&self) -> Option<f64> {
        let cpu = self.cpu_seconds?;
        (self.delivered > 0).then(|| cpu * 1e9 / self.delivered as f64)
    }
}

/// The three namespaces and what the routers share.
struct Topology {
    a: Namespace,
    r: Namespace,
    b: Namespace,
    /// r1's neighbour: hostB's b0.
    b_mac: String,
    scratch: Scratch,
    trafgen_config: PathBuf,
}

/// A directory removed on drop.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// IPv6 off everywhere (no DAD, no router solicitations in the counts).
const QUIET: &[(&str, &str)] = &[
    ("net/ipv6/conf/all/disable_ipv6", "1"),
    ("net/ipv6/conf/default/disable_ipv6", "1"),
];

fn link_json(ns: &Namespace, dev: &str) -> Result<serde_json::Value, BenchError> {
    let text = ns
        .ip(&["-j", "-s", "link", "show", "dev", dev])
        .map_err(failed)?;
    let mut value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| failed(format!("ip -j link show {dev} in {}: {e}", ns.name())))?;
    Ok(value[0].take())
}

fn mac_of(ns: &Namespace, dev: &str) -> Result<String, BenchError> {
    link_json(ns, dev)?["address"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| failed(format!("{dev} in {} has no address", ns.name())))
}

fn tx_packets(ns: &Namespace, dev: &str) -> Result<u64, BenchError> {
    link_json(ns, dev)?["stats64"]["tx"]["packets"]
        .as_u64()
        .ok_or_else(|| failed(format!("{dev} in {} has no TX packet count", ns.name())))
}

fn run_ok(ns: &Namespace, program: &str, args: &[&str]) -> Result<String, BenchError> {
    let done = ns
        .exec(program, args, fibre_testkit::netns::IP_LIMIT)
        .map_err(failed)?;
    if done.code != Some(0) {
        return Err(failed(format!(
            "{program} {} in {} exited with {:?}: {}",
            args.join(" "),
            ns.name(),
            done.code,
            done.stderr.trim()
        )));
    }
    Ok(done.stdout)
}

/// The packets nft's counter in hostB has seen.
fn delivered(b: &Namespace) -> Result<u64, BenchError> {
    let listed = run_ok(b, "nft", &["list", "chain", "netdev", "sink", "in"])?;
    counter_packets(&listed).ok_or_else(|| failed(format!("no counter in hostB's chain: {listed}")))
}

/// `... counter packets N bytes M drop` → N.
fn counter_packets(listed: &str) -> Option<u64> {
    let mut words = listed.split_whitespace();
    words.find(|w| *w == "counter")?;
    (words.next()? == "packets").then_some(())?;
    words.next()?.parse().ok()
}

/// The destination of the `i`-th frame: one host in each routed /24.
fn destination(i: usize) -> String {
    format!("198.18.{}.1", i % ROUTES)
}

/// trafgen's configuration: one frame per destination, round robin.
fn trafgen_config(router_mac: &str, a_mac: &str) -> String {
    (0..ROUTES)
        .map(|i| {
            format!(
                "{{ eth(da={router_mac}, sa={a_mac}), ipv4(saddr=10.1.0.2, daddr={}, ttl=64), \
                 udp(sp=4000, dp=9000), fill(0x41, {PAYLOAD}) }}\n",
                destination(i)
            )
        })
        .collect()
}

/// The routes behind hostB, as `ip -batch` and fibre's config write them.
fn route_lines() -> Vec<String> {
    (0..ROUTES)
        .map(|i| format!("route add 198.18.{i}.0/24 via 10.2.0.2 dev r1"))
        .collect()
}

impl Topology {
    fn create() -> Result<Topology, BenchError> {
        let a = Namespace::create(PREFIX, "a", QUIET).map_err(failed)?;
        let r = Namespace::create(PREFIX, "r", QUIET).map_err(failed)?;
        let b = Namespace::create(PREFIX, "b", QUIET).map_err(failed)?;
        a.ip(&[
            "link",
            "add",
            "a0",
            "type",
            "veth",
            "peer",
            "name",
            "r0",
            "netns",
            r.name(),
        ])
        .map_err(failed)?;
        b.ip(&[
            "link",
            "add",
            "b0",
            "type",
            "veth",
            "peer",
            "name",
            "r1",
            "netns",
            r.name(),
        ])
        .map_err(failed)?;
        for (ns, dev) in [(&a, "a0"), (&b, "b0"), (&r, "r0"), (&r, "r1"), (&a, "lo")] {
            ns.ip(&["link", "set", dev, "up"]).map_err(failed)?;
        }
        a.ip(&["addr", "add", "10.1.0.2/24", "dev", "a0"])
            .map_err(failed)?;
        b.ip(&["addr", "add", "10.2.0.2/24", "dev", "b0"])
            .map_err(failed)?;
        // Full checksums from the sender: a partial one forwarded raw
        // would be counted as an error downstream.
        run_ok(&a, "ethtool", &["-K", "a0", "tx", "off"])?;
        run_ok(&b, "nft", &["add", "table", "netdev", "sink"])?;
        run_ok(
            &b,
            "nft",
            &["add chain netdev sink in { type filter hook ingress device b0 priority 0 ; }"],
        )?;
        run_ok(
            &b,
            "nft",
            &[
                "add", "rule", "netdev", "sink", "in", "meta", "protocol", "ip", "counter", "drop",
            ],
        )?;
        let scratch =
            Scratch(std::env::temp_dir().join(format!("fibre-{PREFIX}-{}", std::process::id())));
        std::fs::create_dir_all(&scratch.0)
            .map_err(|e| failed(format!("cannot make {}: {e}", scratch.0.display())))?;
        let trafgen_config_path = scratch.0.join("udp64.trafgen");
        let config = trafgen_config(&mac_of(&r, "r0")?, &mac_of(&a, "a0")?);
        std::fs::write(&trafgen_config_path, config).map_err(|e| {
            failed(format!(
                "cannot write {}: {e}",
                trafgen_config_path.display()
            ))
        })?;
        Ok(Topology {
            b_mac: mac_of(&b, "b0")?,
            a,
            r,
            b,
            scratch,
            trafgen_config: trafgen_config_path,
        })
    }

    /// The router's configuration, shared by the kernel and fibre
    /// (`table`'s routes follow it).
    fn router_lines(&self) -> Vec<String> {
        let mut lines = vec![
            "addr add 10.1.0.1/24 dev r0".to_string(),
            "addr add 10.2.0.1/24 dev r1".to_string(),
            format!(
                "neigh replace 10.2.0.2 lladdr {} dev r1 nud permanent",
                self.b_mac
            ),
        ];
        lines.extend(route_lines());
        lines
    }

    /// Offers the traffic once and counts what arrived.
    fn offer(
        &self,
        router: &str,
        packets: u64,
        generator_cpu: usize,
        process: Option<u32>,
    ) -> Result<RouterRun, BenchError> {
        check_interrupted()?;
        let (offered_before, delivered_before) = (tx_packets(&self.a, "a0")?, delivered(&self.b)?);
        let cpu_before = process.map(cpu_seconds).transpose()?;
        let count = packets.to_string();
        let cpu = generator_cpu.to_string();
        let config = self.trafgen_config.to_string_lossy().into_owned();
        let started = Instant::now();
        self.trafgen(
            router,
            &[
                "-c",
                &cpu,
                "trafgen",
                "--no-sock-mem",
                "--notouch-irq",
                "--no-cpu-stats",
                "--dev",
                "a0",
                "--conf",
                &config,
                "--cpus",
                "1",
                "-n",
                &count,
            ],
        )?;
        let offer_seconds = started.elapsed().as_secs_f64();
        // A router with rings may still be draining them: wait for the
        // counter to stop, and end the window at its last change.
        let mut last = delivered(&self.b)?;
        let mut last_change = Instant::now();
        let settle_started = Instant::now();
        loop {
            std::thread::sleep(Duration::from_millis(20));
            let now = delivered(&self.b)?;
            if now == last || settle_started.elapsed() > SETTLE_LIMIT {
                break;
            }
            last = now;
            last_change = Instant::now();
        }
        let seconds = last_change.duration_since(started).as_secs_f64();
        let cpu_after = process.map(cpu_seconds).transpose()?;
        Ok(RouterRun {
            router: router.to_string(),
            ris_routes: 0,
            offered: tx_packets(&self.a, "a0")? - offered_before,
            delivered: last - delivered_before,
            seconds,
            offer_seconds,
            cpu_seconds: cpu_before.zip(cpu_after).map(|(b, a)| a - b),
            closing: None,
        })
    }

    /// `taskset ARGS` (trafgen) in hostA until it ends; a signal caught
    /// meanwhile stops it (SIGINT, as at a terminal) and fails the run.
    fn trafgen(&self, router: &str, args: &[&str]) -> Result<(), BenchError> {
        use std::os::unix::process::CommandExt as _;
        let mut child = self
            .a
            .command("taskset", args)
            // A group of its own: trafgen forks its senders (`--cpus`),
            // and a signal to the parent alone leaves them sending.
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| failed(format!("cannot start trafgen: {e}")))?;
        let mut stderr = child.stderr.take().expect("stderr is piped");
        // Read on the side, so that a chatty trafgen cannot fill the pipe.
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let deadline = Instant::now() + TRAFGEN_LIMIT;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Ok(status),
                Ok(None) if Interruption::signalled() || Instant::now() > deadline => {
                    stop_group(&mut child);
                    break Err(if Interruption::signalled() {
                        failed("interrupted by a signal")
                    } else {
                        failed(format!(
                            "trafgen for {router} ran past {} s; stopped",
                            TRAFGEN_LIMIT.as_secs()
                        ))
                    });
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(e) => break Err(failed(format!("waiting for trafgen: {e}"))),
            }
        };
        let text = reader.join().unwrap_or_default();
        let status = status?;
        if !status.success() {
            return Err(failed(format!(
                "trafgen for {router} exited with {status}: {}",
                text.trim()
            )));
        }
        Ok(())
    }

    /// The kernel of the router's namespace as the router.
    fn kernel_run(
        &self,
        packets: u64,
        generator_cpu: usize,
        table: &[String],
    ) -> Result<RouterRun, BenchError> {
        self.r
            .set_sysctls(&[("net/ipv4/ip_forward", "1")])
            .map_err(failed)?;
        self.r.batch(&self.router_lines()).map_err(failed)?;
        for chunk in table.chunks(KERNEL_BATCH) {
            check_interrupted()?;
            self.r.batch(chunk).map_err(failed)?;
        }
        let run = self.offer("kernel (ip_forward=1)", packets, generator_cpu, None);
        // Out of fibre's way: no addresses (their routes go with them),
        // no neighbours, no forwarding.
        for dev in ["r0", "r1"] {
            self.r.ip(&["addr", "flush", "dev", dev]).map_err(failed)?;
            self.r.ip(&["neigh", "flush", "dev", dev]).map_err(failed)?;
        }
        self.r
            .ip(&["route", "flush", "table", "main"])
            .map_err(failed)?;
        self.r
            .set_sysctls(&[("net/ipv4/ip_forward", "0")])
            .map_err(failed)?;
        let mut run = run?;
        run.ris_routes = table.len();
        Ok(run)
    }

    /// `fibre serve` in the router's namespace, on `cpus`, as the router.
    fn fibre_run(
        &self,
        fibre: &Path,
        workers: usize,
        cpus: &str,
        packets: u64,
        generator_cpu: usize,
        table: &[String],
    ) -> Result<RouterRun, BenchError> {
        let mut config = String::from(
            "link add r0 type veth peer name x0\nlink set r0 up\n\
             link add r1 type veth peer name x1\nlink set r1 up\n",
        );
        for line in self.router_lines() {
            config.push_str(&line.replacen("neigh replace", "neigh add", 1));
            config.push('\n');
        }
        for line in table {
            config.push_str(line);
            config.push('\n');
        }
        let config_path = self.scratch.0.join(format!("router-{workers}.conf"));
        std::fs::write(&config_path, config)
            .map_err(|e| failed(format!("cannot write {}: {e}", config_path.display())))?;
        // The namespace's kernel sees every frame fibre's ETH_P_ALL
        // sockets see, and would route (and drop) each again on the
        // sender's CPU: an nft netdev ingress drop of IP keeps it out of
        // the way, as it would be kept on a box that fibre serves (taps
        // run before the ingress hook, so fibre's copies are untouched;
        // ARP still reaches the kernel, which owns no address to answer).
        run_ok(&self.r, "nft", &["add", "table", "netdev", "kernel_off"])?;
        for dev in ["r0", "r1"] {
            run_ok(
                &self.r,
                "nft",
                &[&format!(
                    "add chain netdev kernel_off {dev} {{ type filter hook ingress device {dev} priority 0 ; }}"
                )],
            )?;
            run_ok(
                &self.r,
                "nft",
                &[
                    "add",
                    "rule",
                    "netdev",
                    "kernel_off",
                    dev,
                    "meta",
                    "protocol",
                    "ip",
                    "drop",
                ],
            )?;
        }
        let run = self.fibre_serving(fibre, workers, cpus, packets, generator_cpu, &config_path);
        run_ok(&self.r, "nft", &["delete", "table", "netdev", "kernel_off"])?;
        let mut run = run?;
        run.ris_routes = table.len();
        Ok(run)
    }

    /// `fibre serve` started on `config_path`, the traffic offered, and
    /// the router stopped.
    fn fibre_serving(
        &self,
        fibre: &Path,
        workers: usize,
        cpus: &str,
        packets: u64,
        generator_cpu: usize,
        config_path: &Path,
    ) -> Result<RouterRun, BenchError> {
        let socket = self.scratch.0.join(format!("ctl-{workers}.sock"));
        let workers_text = workers.to_string();
        let mut child = self
            .r
            .command(
                "taskset",
                &[
                    "-c",
                    cpus,
                    &fibre.to_string_lossy(),
                    "--config",
                    &config_path.to_string_lossy(),
                    "serve",
                    "--port",
                    "r0",
                    "--port",
                    "r1",
                    "--workers",
                    &workers_text,
                    "--socket",
                    &socket.to_string_lossy(),
                ],
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| failed(format!("cannot start fibre serve: {e}")))?;
        // `ip netns exec` and `taskset` exec in place: this pid is fibre's.
        let pid = child.id();
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr is piped"));
        let mut router = Served { child };
        let mut first = String::new();
        let _ = stderr.read_line(&mut first);
        if !first.contains("forwarding on") {
            let mut rest = String::new();
            let _ = stderr.read_to_string(&mut rest);
            return Err(failed(format!("fibre serve did not start: {first}{rest}")));
        }
        let name = format!(
            "fibre serve, {workers} worker{}",
            if workers == 1 { "" } else { "s" }
        );
        let run = self.offer(&name, packets, generator_cpu, Some(pid));
        router.stop()?;
        let mut rest = String::new();
        let _ = stderr.read_to_string(&mut rest);
        let mut run = run?;
        run.closing = rest
            .lines()
            .find(|l| l.contains("stopped; received"))
            .map(|l| l.trim_start_matches("fibre serve: ").to_string());
        Ok(run)
    }
}

/// SIGINT to the process group led by `child` (as a terminal's ^C
/// would), then SIGKILL to what is left of it after 5 s.
fn stop_group(child: &mut Child) {
    // `ip netns exec` and taskset exec in place: the pid is trafgen's,
    // and the group (made by `process_group(0)`) is its and its forks'.
    let group = -(child.id() as libc::pid_t);
    // SAFETY: kill(2) on the group of our own child, which is not reaped
    // yet (the caller saw it running), so the group id is still its.
    unsafe { libc::kill(group, libc::SIGINT) };
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && !exited_unreaped(child) {
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: as above: the leader is still unreaped (only waited for
    // with WNOWAIT), so its pid, and the group id, are not reused; this
    // ends a forked sender that outlived it.
    unsafe { libc::kill(group, libc::SIGKILL) };
    let _ = child.wait();
}

/// Whether `child` has exited, leaving it a zombie (waitid's WNOWAIT), so
/// that its pid stays ours.
fn exited_unreaped(child: &Child) -> bool {
    // SAFETY: siginfo_t is plain data; all zeroes is a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is a valid siginfo_t to fill; P_PID with our own
    // child's pid; WNOWAIT leaves it unreaped.
    let rc = unsafe {
        libc::waitid(
            libc::P_PID,
            child.id() as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: waitid filled `info`; si_pid is 0 when nothing has exited.
    rc == 0 && unsafe { info.si_pid() } != 0
}

/// A router process we started; SIGTERM (then SIGKILL) on drop.
struct Served {
    child: Child,
}

impl Served {
    /// SIGTERM, and its exit within 10 s.
    fn stop(&mut self) -> Result<(), BenchError> {
        if self.child.try_wait().ok().flatten().is_some() {
            return Ok(());
        }
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: kill(2) on the pid of our own child, not yet reaped
        // (try_wait above saw it running), so the pid is still its.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return if status.success() {
                    Ok(())
                } else {
                    Err(failed(format!("fibre serve exited with {status}")))
                };
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        Err(failed("fibre serve did not stop within 10 s of SIGTERM"))
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// utime + stime of `pid`, in seconds.
fn cpu_seconds(pid: u32) -> Result<f64, BenchError> {
    let path = format!("/proc/{pid}/stat");
    let text =
        std::fs::read_to_string(&path).map_err(|e| failed(format!("cannot read {path}: {e}")))?;
    let ticks = stat_cpu_ticks(&text).ok_or_else(|| failed(format!("{path}: {text}")))?;
    // SAFETY: sysconf only reads a configuration value.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    Ok(ticks as f64 / per_second.max(1) as f64)
}

/// utime + stime (fields 14 and 15) of a `/proc/PID/stat` line; the
/// command name in parentheses may hold spaces, so count after its `)`.
fn stat_cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After `)`: state is field 3, so utime (14) is index 11.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

impl ForwardExperiment {
    fn measure(&self, packets: u64, table: &[String]) -> Result<ExperimentReport, BenchError> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        // The generator (and the kernel router's softirq, which runs in
        // its context) on CPU 0; fibre's one worker on CPU 1 when there
        // is one, as a deployment would keep the router off the senders.
        let (generator_cpu, fibre_cpu) = (0, if cores > 1 { 1 } else { 0 });
        let topology = Topology::create()?;
        let mut groups = Vec::new();
        let tables: &[&[String]] = if table.is_empty() {
            &[&[]]
        } else {
            &[&[], table]
        };
        for table in tables {
            let mut runs = vec![topology.kernel_run(packets, generator_cpu, table)?];
            runs.push(topology.fibre_run(
                &self.fibre,
                1,
                &fibre_cpu.to_string(),
                packets,
                generator_cpu,
                table,
            )?);
            if cores > 1 {
                runs.push(topology.fibre_run(
                    &self.fibre,
                    2,
                    "0,1",
                    packets,
                    generator_cpu,
                    table,
                )?);
            }
            groups.push(runs);
        }
        drop(topology);
        Ok(report(packets, cores, &groups))
    }
}

fn report(packets: u64, cores: usize, groups: &[Vec<RouterRun>]) -> ExperimentReport {
    let mut text = format!(
        "forward: {packets} frames of {PAYLOAD}-byte UDP per router from hostA over veth to \
         hostB, {ROUTES} routes to the destinations; trafgen (TX_RING) on CPU 0; {cores} CPUs\n"
    );
    let mut measurements = Vec::new();
    let mut rows = Vec::new();
    for runs in groups {
        let Some(kernel) = runs.first() else {
            continue;
        };
        let kernel_pps = kernel.delivered_pps();
        let table = if kernel.ris_routes == 0 {
            String::new()
        } else {
            format!(" + {} RIS", kernel.ris_routes)
        };
        text.push_str(&format!(
            "  {:<28} {:>10} {:>10} {:>10} {:>12} {:>9} {:>7} {:>13}\n",
            if table.is_empty() {
                "router".to_string()
            } else {
                format!("router ({ROUTES}{table} routes)")
            },
            "offered",
            "offered/s",
            "delivered",
            "delivered/s",
            "x kernel",
            "loss %",
            "CPU ns/pkt"
        ));
        for run in runs {
            let ratio = run.delivered_pps() / kernel_pps;
            let cpu = run
                .cpu_ns_per_packet()
                .map_or("softirq, n/a".to_string(), |ns| format!("{ns:.0}"));
            text.push_str(&format!(
                "  {:<28} {:>10} {:>10.0} {:>10} {:>12.0} {:>8.3}x {:>7.2} {:>13}\n",
                run.router,
                run.offered,
                run.offered_pps(),
                run.delivered,
                run.delivered_pps(),
                ratio,
                run.loss_percent(),
                cpu
            ));
            if let Some(closing) = &run.closing {
                text.push_str(&format!("    {closing}\n"));
            }
            let m = Measurement::new(
                format!("{}{table} delivered", run.router),
                run.delivered_pps(),
                "pps",
            );
            measurements.push(if std::ptr::eq(run, kernel) {
                m
            } else {
                m.with_ratio(ratio, "the kernel's")
            });
            measurements.push(Measurement::new(
                format!("{}{table} loss", run.router),
                run.loss_percent(),
                "%",
            ));
            rows.push(json!({
                "router": run.router,
                "ris_routes": run.ris_routes,
                "offered": run.offered,
                "delivered": run.delivered,
                "seconds": run.seconds,
                "offer_seconds": run.offer_seconds,
                "offered_pps": run.offered_pps(),
                "delivered_pps": run.delivered_pps(),
                "over_kernel": ratio,
                "loss_percent": run.loss_percent(),
                "cpu_seconds": run.cpu_seconds,
                "cpu_ns_per_packet": run.cpu_ns_per_packet(),
                "closing": run.closing,
            }));
        }
    }
    text.push_str(
        "  (offered/s: hostA's a0 TX count over trafgen's run, start-up included; \
         delivered/s: hostB's nft count over trafgen's start to the count's last change; \
         x kernel: over the kernel with the same table; for fibre the router namespace's \
         kernel drops its copy of each frame at nft netdev ingress; the kernel forwards in softirq on \
         the sending CPU, charged to no process: its CPU is not measured; fibre's is its \
         utime + stime. Not built here: fibre over AF_XDP, dpdk-testpmd's io-forward \
         ceiling, an offered-load sweep.)\n",
    );
    let detail = json!({
        "packets": packets,
        "payload_bytes": PAYLOAD,
        "routes": ROUTES,
        "cpus": cores,
        "generator": "trafgen TX_RING --no-sock-mem, CPU 0",
        "routers": rows,
        "not_built": ["fibre over AF_XDP", "dpdk-testpmd io-forward", "offered-load sweep"],
    });
    ExperimentReport {
        experiment: NAME.into(),
        text,
        detail,
        measurements,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nft_counter_reads_back() {
        let listed = "table netdev sink {\n\tchain in {\n\t\ttype filter hook ingress device \"b0\" priority filter; policy accept;\n\t\tmeta protocol ip counter packets 654730 bytes 60235160 drop\n\t}\n}\n";
        assert_eq!(counter_packets(listed), Some(654_730));
        assert_eq!(counter_packets("table netdev sink {}"), None);
        assert_eq!(counter_packets("counter bytes 3"), None);
    }

    #[test]
    fn cpu_ticks_are_read_after_the_command_name() {
        let stat = "28196 (fibre serve) S 1 2 3 4 5 6 7 8 9 10 9 39 0 0 20 0 3 0 100 0 0";
        assert_eq!(stat_cpu_ticks(stat), Some(48));
        assert_eq!(stat_cpu_ticks("28196 (fibre"), None);
    }

    #[test]
    fn every_frame_goes_to_a_routed_prefix() {
        let config = trafgen_config("02:00:00:00:00:01", "02:00:00:00:00:02");
        assert_eq!(config.lines().count(), ROUTES);
        let routes = route_lines();
        for (i, line) in config.lines().enumerate() {
            let dest = destination(i);
            assert!(line.contains(&format!("daddr={dest},")), "{line}");
            let subnet = dest.rsplit_once('.').unwrap().0;
            assert!(
                routes
                    .iter()
                    .any(|r| r.contains(&format!(" {subnet}.0/24 "))),
                "{dest}"
            );
        }
    }

    #[test]
    fn the_ris_routes_leave_the_bench_addresses_alone() {
        let p = |addr: u32, len: u8| Prefix { addr, len };
        let table = [
            p(0x0100_0000, 24), // 1.0.0.0/24
            p(0x0a01_0000, 16), // 10.1.0.0/16: the hosts' links
            p(0xc612_0500, 24), // 198.18.5.0/24: a destination's
            p(0xc600_0000, 8),  // 198.0.0.0/8 covers the destinations: kept
            p(0xc614_0000, 16), // 198.20.0.0/16: outside 198.18/15
        ];
        let lines = table_lines(&table, usize::MAX);
        assert_eq!(
            lines,
            [
                "route add 1.0.0.0/24 via 10.2.0.2 dev r1",
                "route add 198.20.0.0/16 via 10.2.0.2 dev r1",
            ],
            "a covering /8 overlaps too"
        );
        assert_eq!(table_lines(&table, 1).len(), 1);
    }

    #[test]
    fn ratios_and_loss_are_against_the_kernel_run() {
        let run = |router: &str, delivered: u64, cpu: Option<f64>| RouterRun {
            router: router.into(),
            ris_routes: 0,
            offered: 1000,
            delivered,
            seconds: 2.0,
            offer_seconds: 1.0,
            cpu_seconds: cpu,
            closing: None,
        };
        let runs = [run("kernel", 800, None), run("fibre", 400, Some(0.001))];
        let report = report(1000, 2, &[runs.to_vec()]);
        assert_eq!(report.detail["routers"][1]["over_kernel"], 0.5);
        assert_eq!(report.detail["routers"][1]["loss_percent"], 60.0);
        assert_eq!(report.detail["routers"][1]["cpu_ns_per_packet"], 2500.0);
        assert!(report.detail["routers"][0]["cpu_ns_per_packet"].is_null());
        assert_eq!(report.measurements.len(), 4);
    }
}
