//! fibre's side of the oracle: the same configuration lines as the
//! kernel router's, given to fibre's parser (after the lines that make
//! its links as the kernel has them), the `neigh` lines as a static
//! neighbour map, one worker port per router link (the kernel's MACs,
//! read back, and rp_filter as the kernel's), the ICMP rate limits off as
//! in the kernel router, and the frames fed to port 0 (r0) in bursts.

use std::collections::HashMap;
use std::net::IpAddr;

use fibre_base::DropReason;
use fibre_fib::{config, Fib, RpFilter};
use fibre_fwd::icmp::RateLimitSettings;
use fibre_fwd::{Counters, PortConfig, PuntKind, StaticNeighbours, Worker, WorkerConfig};

use super::compare::{self, Attributor, Outputs};
use super::frames::Frame;
use super::plan::Plan;
use super::topology::KernelLink;

/// What fibre did with the frames: the outputs, and the inputs it handed
/// to its control side (by id), which has no equivalent on the wire.
#[derive(Debug, Default)]
pub struct FibreRun {
    /// What left its ports, by input id.
    pub outputs: Outputs,
    /// Inputs punted as local (for the router's own stack).
    pub punted_local: Vec<u32>,
    /// Inputs punted to neighbour handling (ARP, NDP).
    pub punted_neighbour: Vec<u32>,
    /// Inputs punted for an unresolved next hop (none is expected: every
    /// next hop is a static neighbour).
    pub punted_unresolved: Vec<u32>,
    /// What the worker's counters say it did with each input
    /// (`forwarded`, `dropped NoRoute`, ...), for the report.
    pub fates: HashMap<u32, String>,
}

/// The counters that moved between `before` and `after`, as words.
fn fate(before: &Counters, after: &Counters) -> String {
    let mut words = Vec::new();
    let pairs = [
        ("forwarded", before.forwarded, after.forwarded),
        ("fragments", before.fragments, after.fragments),
        ("answered", before.answered, after.answered),
        ("punted_local", before.punted_local, after.punted_local),
        (
            "punted_neighbour",
            before.punted_neighbour,
            after.punted_neighbour,
        ),
        (
            "punted_unresolved",
            before.punted_unresolved,
            after.punted_unresolved,
        ),
        ("icmp_errors", before.icmp_errors, after.icmp_errors),
        (
            "icmp_rate_limited",
            before.icmp_rate_limited,
            after.icmp_rate_limited,
        ),
        ("icmp_unsent", before.icmp_unsent, after.icmp_unsent),
    ];
    for (name, b, a) in pairs {
        if a != b {
            words.push(name.to_string());
        }
    }
    for reason in DropReason::ALL {
        if before.drops(reason) != after.drops(reason) {
            words.push(format!("dropped {}", reason.name()));
        }
    }
    words.join(", ")
}

/// The configuration text fibre loads: its link model, then the lines
/// both sides share but the `neigh` ones (its worker's neighbour map).
pub fn config_text(plan: &Plan) -> String {
    plan.model_lines
        .iter()
        .chain(plan.lines.iter().filter(|l| !l.starts_with("neigh ")))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The neighbour map of the `neigh add ADDR lladdr MAC dev DEV ...` lines.
fn neighbours(plan: &Plan, fib: &Fib) -> Result<StaticNeighbours, String> {
    let mut map = StaticNeighbours::default();
    for line in plan.lines.iter().filter(|l| l.starts_with("neigh ")) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let after = |key: &str| {
            words
                .iter()
                .position(|w| *w == key)
                .and_then(|i| words.get(i + 1))
                .ok_or_else(|| format!("{line}: no {key}"))
        };
        let addr: IpAddr = words
            .get(2)
            .ok_or_else(|| format!("{line}: no address"))?
            .parse()
            .map_err(|e| format!("{line}: {e}"))?;
        let mut mac = [0u8; 6];
        for (byte, part) in mac.iter_mut().zip(after("lladdr")?.split(':')) {
            *byte = u8::from_str_radix(part, 16).map_err(|e| format!("{line}: {e}"))?;
        }
        let dev = after("dev")?;
        let link = fib
            .link_by_name(dev)
            .ok_or_else(|| format!("{line}: fibre has no link {dev}"))?;
        map.insert(link.index, addr, mac);
    }
    Ok(map)
}

/// Runs `frames` through fibre's worker set up as the kernel router is.
pub fn run(plan: &Plan, kernel_links: &[KernelLink], frames: &[Frame]) -> Result<FibreRun, String> {
    run_with(plan, kernel_links, frames, kernel_limits())
}

/// The ICMP limits exactly as the kernel router's sysctls say:
/// `icmp_ratelimit` 0, `icmp/ratelimit` 0, the global bucket far above
/// any run, the default rate masks, `ip_rt_error_cost` as the kernel's
/// (a namespace cannot change it; the frames' sources keep under its
/// burst, see plan.rs).
///
/// Not "limits off" said with empty masks: a zero period lets every
/// message through, but `inet_peer_xrlim_allow` still empties the
/// peer's bucket (at most six zero periods), and that bucket is the one
/// the IPv6 redirect's per-source limit and `ip_error`'s draw on. The
/// kernel sent no redirect to a host it had just sent a time exceeded
/// (seed 1796219563); with empty masks the worker did.
pub fn kernel_limits() -> WorkerConfig {
    WorkerConfig {
        icmp: RateLimitSettings {
            icmp_ratelimit_ms: 0,
            icmp_msgs_per_sec: 100_000_000,
            icmp_msgs_burst: 100_000_000,
            icmpv6_ratelimit_ms: 0,
            // The kernel keeps every peer of a run (`inet_peer_threshold`
            // is 65536 + 128); with the default 4096 one emptied by a
            // zero-period error was evicted and came back full, and a
            // redirect the kernel withheld went out (seed 12).
            peers: 65_536,
            ..RateLimitSettings::default()
        },
        ..WorkerConfig::default()
    }
}

/// [`run`] with the worker configured by `config`.
pub fn run_with(
    plan: &Plan,
    kernel_links: &[KernelLink],
    frames: &[Frame],
    config: WorkerConfig,
) -> Result<FibreRun, String> {
    let (fib, _) = config::apply_str(
        &Fib::new(),
        "forward-oracle.conf",
        &config_text(plan),
        false,
    )
    .map_err(|e| format!("fibre refused the router's configuration: {e}"))?;
    let rp_filter = match plan.rp_filter {
        0 => RpFilter::Off,
        1 => RpFilter::Strict,
        _ => RpFilter::Loose,
    };
    let mut ports = Vec::new();
    for (planned, kernel) in plan.links.iter().zip(kernel_links) {
        let link = fib
            .link_by_name(&planned.name)
            .ok_or_else(|| format!("fibre has no link {}", planned.name))?;
        if link.mtu != kernel.mtu {
            return Err(format!(
                "{}: fibre's MTU {} is not the kernel's {}",
                planned.name, link.mtu, kernel.mtu
            ));
        }
        let mut port = PortConfig::new(link.index, kernel.mac);
        port.rp_filter = rp_filter;
        // As the kernel router: `send_redirects` 0 (see topology.rs).
        port.send_redirects = false;
        ports.push(port);
    }
    let neighbours = neighbours(plan, &fib)?;
    let mut worker = Worker::new(fib, neighbours, &ports, config);
    let attributor = Attributor::new(frames);
    let mut captured = Vec::new();
    let mut run = FibreRun::default();
    let mut now_ns = 1_000_000_000u64;
    // One frame a burst, so that the counters tell what became of each
    // (the worker's bursts are exercised by its own tests and benchmark).
    for frame in frames {
        let before = *worker.counters();
        worker.receive_burst(frame.port, &[frame.bytes.as_slice()], now_ns);
        run.fates.insert(frame.id, fate(&before, worker.counters()));
        now_ns += 10_000;
        for port in 0..ports.len() {
            worker.drain_port(port, |frame| captured.push((port, frame.to_vec())));
        }
        worker.drain_punts(|punt| {
            let Some(id) = attributor.id_of(punt.frame) else {
                return;
            };
            match punt.kind {
                PuntKind::Local => run.punted_local.push(id),
                PuntKind::Neighbour => run.punted_neighbour.push(id),
                PuntKind::Unresolved => run.punted_unresolved.push(id),
            }
        });
    }
    run.outputs = compare::attribute(&attributor, captured);
    Ok(run)
}
