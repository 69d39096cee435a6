//! `fibre serve --port NAME...`: the router on real Linux interfaces.
//!
//! Each `--port NAME` backs the link NAME of the configuration (`--config
//! FILE`, the ip-batch grammar) with the Linux interface of the same name,
//! over `AF_PACKET` (`fibre-io`); the interface's MAC and MTU replace the
//! configuration's (`link set NAME mtu N` is applied from the interface).
//!
//! Threads:
//! - `--workers N` forwarding workers (default: one per CPU this process
//!   may run on), worker `i` pinned to the `i`-th of those CPUs. Each has
//!   its own `AF_PACKET` socket on every port; with more than one worker
//!   the sockets of a port form a `PACKET_FANOUT` group (hash: one flow,
//!   one worker), so a multi-queue veth (`numrxqueues`) or NIC spreads
//!   flows across them. Each polls its sockets in bursts of
//!   [`fibre_fwd::BURST`], reads the FIB through an RCU reader (one
//!   snapshot per burst, then a quiescent report; offline while it waits
//!   for frames) and the neighbours through the published adjacency
//!   table, and hands ARP, ND and packets awaiting a neighbour to the
//!   control thread through a bounded queue (full: counted, dropped).
//! - The control thread (the main one): the FIB's only writer, the ARP and
//!   ND table (resolutions, timers, released packets, sent through a
//!   transmit-only socket per port), and the control socket (`--socket`,
//!   default [`crate::ctl::DEFAULT_SOCKET`]) that `fibre ctl` talks to:
//!   configuration lines applied and published to the workers while they
//!   forward, and the running state read in `ip`'s formats. It reads the
//!   workers' counters (each worker publishes its own; they are summed on
//!   read).
//!
//! SIGINT or SIGTERM (or `--seconds`) stops every thread; sockets, rings
//! and the control socket's file are released.
//!
//! Not built yet: AF_XDP, GRE ports, the ICMP errors of a failed
//! resolution (`arp_error_report`: such packets are dropped and counted),
//! a worker restarted after an interface disappears (the router stops
//! with the error instead).

mod control;
mod socket;
mod worker;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use fibre_fib::shared::FibWriter;
use fibre_fib::{config, Fib, LinkIndex};
use fibre_fwd::{PortConfig, TunnelConfig, Worker, WorkerConfig};
use fibre_io::{AfPacket, AfPacketConfig, PacketSender};
use fibre_neigh::{NeighPublisher, NeighSettings, NeighTable};

use control::{Control, Egress, WorkerView};
use socket::ControlSocket;
use worker::{allowed_cpus, WorkerExtras, WorkerThread};

/// `fibre serve`'s options.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A link of the configuration to back with the Linux interface of the
    /// same name (repeat for each; at least one).
    #[arg(long = "port", value_name = "NAME", required = true)]
    pub ports: Vec<String>,
    /// Forwarding workers, each pinned to a CPU (default: one per CPU).
    #[arg(long = "workers", value_name = "N")]
    pub workers: Option<usize>,
    /// The control socket `fibre ctl` connects to.
    #[arg(long = "socket", value_name = "PATH", default_value = crate::ctl::DEFAULT_SOCKET)]
    pub socket: PathBuf,
    /// Stop after this many seconds (0: run until SIGINT or SIGTERM).
    #[arg(long = "seconds", default_value_t = 0)]
    pub seconds: u64,
}

/// Frames the workers may queue for the control thread, all together.
const PUNT_QUEUE: usize = 4096;

/// The most workers (each costs a socket and a ring per port).
const MAX_WORKERS: usize = 256;

/// Set by SIGINT and SIGTERM (and at `--seconds`): every thread ends at
/// its next turn.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn request_stop(_signal: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

fn catch_stop_signals() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: `request_stop` only stores to an atomic, which is
        // async-signal-safe; installing a handler changes no Rust invariant.
        unsafe {
            libc::signal(signal, request_stop as *const () as libc::sighandler_t);
        }
    }
}

/// A Linux interface's MAC and MTU, from sysfs.
fn interface(name: &str) -> Result<([u8; 6], usize)> {
    let read = |what: &str| {
        std::fs::read_to_string(format!("/sys/class/net/{name}/{what}"))
            .map(|s| s.trim().to_string())
            .with_context(|| format!("Cannot find device \"{name}\""))
    };
    let text = read("address")?;
    let mut mac = [0u8; 6];
    let octets: Vec<&str> = text.split(':').collect();
    if octets.len() != 6 {
        bail!("{name}: not an Ethernet interface (address {text})");
    }
    for (byte, octet) in mac.iter_mut().zip(octets) {
        *byte = u8::from_str_radix(octet, 16).with_context(|| format!("{name}: address {text}"))?;
    }
    let mtu = read("mtu")?
        .parse()
        .with_context(|| format!("{name}: its MTU"))?;
    Ok((mac, mtu))
}

/// A port of the router: the link, the interface's MAC and MTU.
struct Backing<'a> {
    name: &'a str,
    link: LinkIndex,
    mac: [u8; 6],
    mtu: usize,
}

/// A fanout group id for port `index`: distinct per port and, by the
/// process id, unlikely to meet another router's in the same namespace
/// (the kernel matches groups by id within a namespace, and refuses one
/// that spans two interfaces).
fn fanout_group(index: usize) -> u16 {
    (std::process::id() as u16)
        .wrapping_mul(31)
        .wrapping_add(index as u16)
}

/// Why opening a port failed, with the fix when it is permissions.
fn open_error(name: &str, error: std::io::Error) -> anyhow::Error {
    if error.raw_os_error() == Some(libc::EPERM) {
        anyhow::anyhow!(
            "--port {name}: {error} (fibre serve needs root or CAP_NET_RAW for AF_PACKET)"
        )
    } else {
        anyhow::anyhow!("--port {name}: {error}")
    }
}

/// Runs the router on `fib` until stopped.
pub fn run(fib: Fib, args: &ServeArgs) -> Result<()> {
    let mut sizes = String::new();
    let mut backing = Vec::new();
    for name in &args.ports {
        let link = fib
            .link_by_name(name)
            .with_context(|| format!("--port {name}: no link \"{name}\" in the configuration"))?
            .index;
        if backing.iter().any(|b: &Backing<'_>| b.link == link) {
            bail!("--port {name}: given twice");
        }
        let (mac, mtu) = interface(name)?;
        sizes.push_str(&format!("link set {name} mtu {mtu}\n"));
        backing.push(Backing {
            name,
            link,
            mac,
            mtu,
        });
    }
    let (fib, _) = config::apply_str(&fib, "<interfaces>", &sizes, false)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let cpus = allowed_cpus();
    let workers = args.workers.unwrap_or(cpus.len());
    if workers == 0 || workers > MAX_WORKERS {
        bail!("--workers {workers}: expected 1 to {MAX_WORKERS}");
    }
    let max_mtu = backing.iter().map(|b| b.mtu).max().unwrap_or(1500);

    let mut egress = Vec::new();
    for b in &backing {
        let port = PacketSender::open(b.name, b.mtu + 18, 64).map_err(|e| open_error(b.name, e))?;
        egress.push(Egress {
            link: b.link,
            mac: b.mac,
            port,
        });
    }
    let writer = FibWriter::builder()
        .on_stall(|report| {
            eprintln!(
                "fibre serve: worker reader {} has not reported for {:?}; publications wait for it",
                report.reader_label, report.stalled_for
            )
        })
        .build(fib);
    let mut table = NeighTable::from_fib(NeighSettings::default(), writer.fib(), 0);
    // The adjacency table has a domain of its own: its publications never
    // wait, and the FIB's grace periods need only the FIB readers.
    let neigh_domain = fibre_rcu::Domain::new();
    let mut publisher = NeighPublisher::new(&neigh_domain);
    let (punt_sender, punts) = sync_channel(PUNT_QUEUE);
    let ports: Vec<PortConfig> = backing
        .iter()
        .map(|b| PortConfig::new(b.link, b.mac))
        .collect();
    let worker_config = WorkerConfig {
        max_mtu,
        ..WorkerConfig::default()
    };
    let mut threads = Vec::new();
    let mut views = Vec::new();
    for i in 0..workers {
        let mut sockets = Vec::new();
        for (p, b) in backing.iter().enumerate() {
            let config = AfPacketConfig {
                max_frame: b.mtu + 18,
                fanout_group: (workers > 1).then(|| fanout_group(p)),
                ..AfPacketConfig::default()
            };
            sockets.push(AfPacket::open(b.name, config).map_err(|e| open_error(b.name, e))?);
        }
        let mut worker = Worker::new(
            writer.shared().reader(),
            publisher.reader(),
            &ports,
            worker_config,
        );
        add_tunnels(&mut worker, writer.fib());
        let extras = Arc::new(WorkerExtras::default());
        let cpu = Some(cpus[i % cpus.len()]);
        views.push(WorkerView {
            counters: worker.counters_reader(),
            extras: Arc::clone(&extras),
            cpu,
        });
        threads.push(WorkerThread {
            worker,
            ports: sockets,
            punts: punt_sender.clone(),
            extras,
            cpu,
        });
    }
    drop(punt_sender);
    publisher.publish(&mut table);
    let mut socket = ControlSocket::bind(&args.socket)?;
    let mut errors = Worker::new(
        control::ReadOnce(writer.shared()),
        publisher.reader(),
        &ports,
        worker_config,
    );
    add_tunnels(&mut errors, writer.fib());
    let mut control = Control::new(writer, table, publisher, egress, views, errors);

    catch_stop_signals();
    let handles: Vec<_> = threads
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            std::thread::Builder::new()
                .name(format!("fibre-worker-{i}"))
                .spawn(move || t.run())
        })
        .collect::<std::io::Result<_>>()
        .context("starting the workers")?;
    let start = Instant::now();
    let deadline = (args.seconds > 0).then(|| start + Duration::from_secs(args.seconds));
    eprintln!(
        "fibre serve: forwarding on {} with {workers} worker{}; control socket {} (SIGINT or SIGTERM stops)",
        args.ports.join(", "),
        if workers == 1 { "" } else { "s" },
        socket.path().display()
    );
    let mut failure = None;
    while !STOP.load(Ordering::Relaxed) {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        match punts.recv_timeout(Duration::from_millis(1)) {
            Ok(punt) => {
                control.punted(punt);
                // What else is queued, bounded so the socket is served too.
                for punt in punts.try_iter().take(PUNT_QUEUE) {
                    control.punted(punt);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(Duration::from_millis(1)),
        }
        control.tick();
        let counts = socket.counts();
        socket.poll(&mut |request| control.answer(request, counts));
        if handles.iter().any(|h| h.is_finished()) {
            break;
        }
    }
    STOP.store(true, Ordering::Relaxed);
    for (i, handle) in handles.into_iter().enumerate() {
        match handle.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                failure.get_or_insert(e.context(format!("worker {i}")));
            }
            Err(_) => {
                failure.get_or_insert(anyhow::anyhow!("worker {i} panicked"));
            }
        }
    }
    let c = control
        .worker_counters()
        .iter()
        .fold(fibre_fwd::Counters::default(), |a, b| control::add(&a, b));
    eprintln!(
        "fibre serve: stopped; received {}, forwarded {}, answered {}, dropped {}, punted {} (unresolved next hops given up: {})",
        c.received,
        c.forwarded,
        c.answered,
        c.total_drops(),
        c.punted_local + c.punted_neighbour + c.punted_unresolved,
        control.unresolved_dropped,
    );
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Every IPv4 GRE tunnel of the configuration (`type gre`) becomes a
/// device of `worker`, with the kernel's defaults for its `rp_filter` and
/// `send_redirects`: a route into it is encapsulated and sent out its
/// underlay port, GRE to the router that it matches is decapsulated. The
/// worker reads the tunnel's settings from the FIB at each packet, so a
/// `fibre ctl link set` of one applies; a tunnel added later by `fibre
/// ctl` is not given to the workers (its routes drop as no output port).
/// Other tunnel kinds (ip6gre, the tap kinds) are not worker devices yet.
fn add_tunnels<F: fibre_fwd::FibSource, N: fibre_fwd::Neighbours>(
    worker: &mut Worker<F, N>,
    fib: &Fib,
) {
    for link in fib.links() {
        if let fibre_fib::LinkKind::Gre(spec) = &link.kind {
            if spec.kind == fibre_fib::GreKind::Gre {
                worker.add_tunnel(TunnelConfig::new(link.index));
            }
        }
    }
}
