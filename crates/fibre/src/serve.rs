//! `fibre serve --port NAME...`: the router on real Linux interfaces. Each
//! named link of the configuration is backed by the Linux interface of the
//! same name (its MAC and MTU are read from it) through an AF_PACKET port
//! (`fibre-io`). One thread runs the forwarding worker over every port in
//! bursts and, between bursts, the control side: ARP and neighbour
//! discovery (`fibre-neigh`'s table, published to the worker by RCU),
//! packets waiting for a neighbour, the neighbour timers. SIGINT or
//! SIGTERM ends it cleanly (rings and sockets released).
//!
//! Not built yet: one worker per core (`--workers`), AF_XDP, live
//! configuration changes (`fibre ctl`), GRE ports, the ICMP errors of a
//! failed resolution (`arp_error_report`: such packets are dropped and
//! counted). Partial checksums from local senders with transmit offload
//! are completed by the port (`fibre-io`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use fibre_fib::{config, Fib, LinkIndex};
use fibre_fwd::{PortConfig, PuntKind, Worker, WorkerConfig, BURST};
use fibre_io::{AfPacket, AfPacketConfig, Port};
use fibre_neigh::{Action, FibRouter, NeighPublisher, NeighSettings, NeighTable};

/// `fibre serve`'s options.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A link of the configuration to back with the Linux interface of the
    /// same name (repeat for each; at least one).
    #[arg(long = "port", value_name = "NAME", required = true)]
    pub ports: Vec<String>,
    /// Stop after this many seconds (0: run until SIGINT or SIGTERM).
    #[arg(long = "seconds", default_value_t = 0)]
    pub seconds: u64,
}

/// Set by SIGINT and SIGTERM: the loop ends at its next turn.
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

/// One backed link.
struct Backed {
    link: LinkIndex,
    mac: [u8; 6],
    port: AfPacket,
}

/// Milliseconds since `start`: the neighbour table's clock.
fn millis(start: Instant) -> u64 {
    start.elapsed().as_millis() as u64
}

/// An IP packet in an Ethernet frame from `src` to `dst`.
fn ethernet(dst: [u8; 6], src: [u8; 6], packet: &[u8], frame: &mut Vec<u8>) {
    let ethertype: [u8; 2] = if packet.first().is_some_and(|b| b >> 4 == 6) {
        [0x86, 0xdd]
    } else {
        [0x08, 0x00]
    };
    frame.clear();
    frame.extend_from_slice(&dst);
    frame.extend_from_slice(&src);
    frame.extend_from_slice(&ethertype);
    frame.extend_from_slice(packet);
}

/// Runs the router on `fib` until stopped.
pub fn run(fib: Fib, args: &ServeArgs) -> Result<()> {
    let mut sizes = String::new();
    let mut found = Vec::new();
    for name in &args.ports {
        let link = fib
            .link_by_name(name)
            .with_context(|| format!("--port {name}: no link \"{name}\" in the configuration"))?
            .index;
        let (mac, mtu) = interface(name)?;
        sizes.push_str(&format!("link set {name} mtu {mtu}\n"));
        found.push((name, link, mac, mtu));
    }
    let (fib, _) = config::apply_str(&fib, "<interfaces>", &sizes, false)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let max_mtu = found.iter().map(|f| f.3).max().unwrap_or(1500);
    let mut backed = Vec::new();
    for &(name, link, mac, mtu) in &found {
        let config = AfPacketConfig {
            max_frame: mtu + 18,
            ..AfPacketConfig::default()
        };
        let port = AfPacket::open(name, config).with_context(|| format!("--port {name}"))?;
        backed.push(Backed { link, mac, port });
    }
    let macs: HashMap<u32, [u8; 6]> = backed.iter().map(|b| (b.link, b.mac)).collect();
    let router = FibRouter::with_macs(&fib, macs);
    let start = Instant::now();
    let mut table = NeighTable::from_fib(NeighSettings::default(), &fib, 0);
    let domain = fibre_rcu::Domain::new();
    let mut publisher = NeighPublisher::new(&domain);
    let reader = publisher.reader();
    publisher.publish(&mut table);
    let ports: Vec<PortConfig> = backed
        .iter()
        .map(|b| PortConfig::new(b.link, b.mac))
        .collect();
    let worker_config = WorkerConfig {
        max_mtu,
        ..WorkerConfig::default()
    };
    let mut worker = Worker::new(&fib, reader, &ports, worker_config);
    let port_of: HashMap<u32, usize> = backed
        .iter()
        .enumerate()
        .map(|(i, b)| (b.link, i))
        .collect();
    catch_stop_signals();
    let deadline = (args.seconds > 0).then(|| start + Duration::from_secs(args.seconds));
    eprintln!(
        "fibre serve: forwarding on {} (SIGINT or SIGTERM stops)",
        args.ports.join(", ")
    );
    let mut actions: Vec<Action> = Vec::new();
    let mut frame = Vec::with_capacity(max_mtu + 18);
    let mut unresolved_dropped = 0u64;
    while !STOP.load(Ordering::Relaxed) && deadline.is_none_or(|d| Instant::now() < d) {
        let now_ns = start.elapsed().as_nanos() as u64;
        let mut received = 0;
        for (i, b) in backed.iter_mut().enumerate() {
            received += b
                .port
                .receive(BURST, &mut |frames| worker.receive_burst(i, frames, now_ns))?;
        }
        for (i, b) in backed.iter_mut().enumerate() {
            let mut failed = None;
            worker.drain_port(i, |f| {
                if let Err(e) = b.port.transmit(f) {
                    failed.get_or_insert(e);
                }
            });
            if let Some(e) = failed {
                return Err(e).context("transmit");
            }
        }
        // The control side, between bursts.
        let now = millis(start);
        worker.drain_punts(|p| match p.kind {
            PuntKind::Neighbour => {
                let is_arp = p.frame.get(12..14) == Some(&[0x08, 0x06]);
                actions.extend(if is_arp {
                    table.receive_arp(now, p.link, p.frame, &router)
                } else {
                    table.receive_ndisc(now, p.link, p.frame, &router)
                });
            }
            PuntKind::Unresolved => {
                if let (Some(next_hop), Some(packet)) = (p.next_hop, p.frame.get(14..)) {
                    actions.extend(table.resolve(now, p.link, next_hop, packet.to_vec(), &router));
                }
            }
            // No local stack: what the worker does not answer itself is
            // not for fibre (the worker counts it as punted).
            PuntKind::Local => {}
        });
        actions.extend(publisher.drain_uses(now, &mut table, &router));
        actions.extend(table.tick(now, &router));
        for action in actions.drain(..) {
            match action {
                Action::Send { link, frame: out } => {
                    if let Some(&i) = port_of.get(&link) {
                        backed[i].port.transmit(&out)?;
                    }
                }
                Action::Release { link, mac, packet } => {
                    if let Some(&i) = port_of.get(&link) {
                        ethernet(mac, backed[i].mac, &packet, &mut frame);
                        backed[i].port.transmit(&frame)?;
                    }
                }
                Action::Unreachable { .. } | Action::Dropped { .. } => unresolved_dropped += 1,
            }
        }
        publisher.publish(&mut table);
        for b in backed.iter_mut() {
            b.port.flush()?;
        }
        if received == 0 {
            let sockets: Vec<&AfPacket> = backed.iter().map(|b| &b.port).collect();
            fibre_io::wait_any(&sockets, 1)?;
        }
    }
    let c = worker.counters();
    eprintln!(
        "fibre serve: stopped; received {}, forwarded {}, answered {}, dropped {}, punted {} (unresolved next hops given up: {unresolved_dropped})",
        c.received,
        c.forwarded,
        c.answered,
        c.total_drops(),
        c.punted_local + c.punted_neighbour + c.punted_unresolved,
    );
    Ok(())
}
