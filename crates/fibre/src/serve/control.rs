//! The control thread's state and work: the FIB writer (every change a
//! `fibre ctl` line makes is published to the workers by RCU), the ARP and
//! ND table (fed by the workers' punts, published to them as an adjacency
//! table), the transmit-only sockets it sends through, and the answers to
//! `fibre ctl` requests.

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use fibre_dev::stats::IpLinkStats;
use fibre_fib::config::{family_words, parse_words, tokenize};
use fibre_fib::shared::{BatchMode, FibWriter, SharedFib};
use fibre_fib::{Command, Family, Fib, LinkIndex};
use fibre_fwd::{Counters, CountersReader, FibSource, PuntKind, Worker};
use fibre_io::{PacketSender, Port};
use fibre_neigh::{Action, FibRouter, NeighPublisher, NeighReader, NeighTable};
use serde_json::{json, Map, Value};

use super::socket::{Request, SocketCounts};
use super::worker::{PuntedFrame, WorkerExtras};
use crate::ctl::{Answer, RequestFlags};
use crate::outcome::Outcome;
use crate::{get, show};

/// A backed link's way out for the control thread.
pub struct Egress {
    /// The FIB link.
    pub link: LinkIndex,
    /// The interface's MAC.
    pub mac: [u8; 6],
    /// The socket.
    pub port: PacketSender,
}

/// What the control thread reads of one worker.
pub struct WorkerView {
    /// Its forwarding counters.
    pub counters: CountersReader,
    /// Its punt and transmit losses.
    pub extras: Arc<WorkerExtras>,
    /// The CPU it is pinned to.
    pub cpu: Option<usize>,
}

/// The FIB as the control thread's error worker reads it: a reader
/// registered for one read and gone after it. The control thread is also
/// the FIB's writer, so a reader it kept online would hold up its own
/// grace periods; failed resolutions are rare, so the registration per
/// read costs nothing that matters.
pub struct ReadOnce(pub SharedFib);

impl FibSource for ReadOnce {
    fn with_fib<R>(&mut self, f: impl FnOnce(&Fib) -> R) -> R {
        self.0.reader().batch(|snapshot| f(snapshot.fib()))
    }
}

/// The worker the control thread answers failed resolutions with: the
/// packets that waited for a neighbour that never answered get the
/// kernel's error (`arp_error_report`, `ndisc_error_report`), routed,
/// rate limited and sourced as a worker would send them.
pub type ErrorWorker = Worker<ReadOnce, NeighReader>;

/// The control thread's state.
pub struct Control {
    /// The FIB's only writer.
    pub writer: FibWriter,
    /// ARP and ND.
    pub table: NeighTable,
    /// Publishes `table` to the workers.
    pub publisher: NeighPublisher,
    /// Each backed link's MAC, by link.
    pub macs: HashMap<u32, [u8; 6]>,
    /// Each backed link's socket.
    pub egress: Vec<Egress>,
    /// The workers.
    pub workers: Vec<WorkerView>,
    /// The neighbour table's clock starts here.
    pub start: Instant,
    /// Sends the errors of failed resolutions.
    errors: ErrorWorker,
    /// Packets given up waiting for a neighbour.
    pub unresolved_dropped: u64,
    /// Frames the control thread could not send.
    pub tx_failed: u64,
    actions: Vec<Action>,
    frame: Vec<u8>,
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

/// `ip`'s object words, by the prefix `matches()` accepts, in the order
/// of ip.c's command table (so `a` is `address`, `r` is `route`).
const OBJECTS: [&str; 7] = [
    "address",
    "route",
    "rule",
    "neighbour",
    "neighbor",
    "link",
    "workers",
];

/// The object `word` abbreviates, if any.
fn object_of(word: &str) -> Option<&'static str> {
    let object = OBJECTS
        .into_iter()
        .find(|o| !word.is_empty() && o.starts_with(word))?;
    Some(if object == "neighbor" {
        "neighbour"
    } else {
        object
    })
}

/// Whether `word` abbreviates a show verb (`show`, `list`, `lst`).
fn is_show(word: &str) -> bool {
    ["show", "list", "lst"]
        .iter()
        .any(|v| !word.is_empty() && v.starts_with(word))
}

/// A Linux interface's counters, from sysfs, as `ip -s link` shows them.
fn interface_stats(name: &str) -> Option<IpLinkStats> {
    let read = |what: &str| -> Option<u64> {
        std::fs::read_to_string(format!("/sys/class/net/{name}/statistics/{what}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    Some(IpLinkStats {
        rx_bytes: read("rx_bytes")?,
        rx_packets: read("rx_packets")?,
        rx_errors: read("rx_errors")?,
        rx_dropped: read("rx_dropped")?,
        rx_missed: read("rx_missed_errors")?,
        rx_mcast: read("multicast")?,
        tx_bytes: read("tx_bytes")?,
        tx_packets: read("tx_packets")?,
        tx_errors: read("tx_errors")?,
        tx_dropped: read("tx_dropped")?,
        tx_carrier: read("tx_carrier_errors")?,
        tx_collisions: read("collisions")?,
    })
}

/// One worker's counters (or their sum) as `workers show -j` prints them.
fn counters_json(c: &Counters) -> Map<String, Value> {
    let mut object = Map::new();
    for (name, value) in [
        ("received", c.received),
        ("forwarded", c.forwarded),
        ("fragments", c.fragments),
        ("answered", c.answered),
        ("punted_local", c.punted_local),
        ("punted_neighbour", c.punted_neighbour),
        ("punted_unresolved", c.punted_unresolved),
        ("icmp_errors", c.icmp_errors),
        ("icmp_rate_limited", c.icmp_rate_limited),
        ("icmp_unsent", c.icmp_unsent),
        ("dropped", c.total_drops()),
    ] {
        object.insert(name.into(), json!(value));
    }
    let reasons: Map<String, Value> = c
        .drop_reasons()
        .map(|(reason, n)| (reason.name().to_string(), json!(n)))
        .collect();
    object.insert("drop_reasons".into(), Value::Object(reasons));
    object
}

/// The same as text: two lines, and one per drop reason.
fn counters_text(c: &Counters, out: &mut String) {
    out.push_str(&format!(
        "    received {} forwarded {} fragments {} answered {} dropped {}\n",
        c.received,
        c.forwarded,
        c.fragments,
        c.answered,
        c.total_drops()
    ));
    out.push_str(&format!(
        "    punted local {} neighbour {} unresolved {} icmp errors {} rate-limited {} unsent {}\n",
        c.punted_local,
        c.punted_neighbour,
        c.punted_unresolved,
        c.icmp_errors,
        c.icmp_rate_limited,
        c.icmp_unsent
    ));
    for (reason, n) in c.drop_reasons() {
        out.push_str(&format!("    drop {} {n}\n", reason.name()));
    }
}

/// The sum of `a` and `b`, field by field.
pub fn add(a: &Counters, b: &Counters) -> Counters {
    let mut sum = *a;
    sum.received += b.received;
    sum.forwarded += b.forwarded;
    sum.fragments += b.fragments;
    sum.answered += b.answered;
    sum.punted_local += b.punted_local;
    sum.punted_neighbour += b.punted_neighbour;
    sum.punted_unresolved += b.punted_unresolved;
    sum.icmp_errors += b.icmp_errors;
    sum.icmp_rate_limited += b.icmp_rate_limited;
    sum.icmp_unsent += b.icmp_unsent;
    for (s, d) in sum.dropped.iter_mut().zip(b.dropped) {
        *s += d;
    }
    sum
}

impl Control {
    /// The control state over `writer`, `table` and `publisher`.
    pub fn new(
        writer: FibWriter,
        table: NeighTable,
        publisher: NeighPublisher,
        egress: Vec<Egress>,
        workers: Vec<WorkerView>,
        errors: ErrorWorker,
    ) -> Self {
        Control {
            errors,
            writer,
            table,
            publisher,
            macs: egress.iter().map(|e| (e.link, e.mac)).collect(),
            egress,
            workers,
            start: Instant::now(),
            unresolved_dropped: 0,
            tx_failed: 0,
            actions: Vec::new(),
            frame: Vec::new(),
        }
    }

    /// Milliseconds since the start: the neighbour table's clock.
    fn now(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    /// A frame a worker handed over.
    pub fn punted(&mut self, punt: PuntedFrame) {
        let now = self.now();
        let router = FibRouter::with_macs(self.writer.fib(), self.macs.clone());
        let actions = match punt.kind {
            PuntKind::Neighbour if punt.frame.get(12..14) == Some(&[0x08, 0x06]) => {
                self.table.receive_arp(now, punt.link, &punt.frame, &router)
            }
            PuntKind::Neighbour => self
                .table
                .receive_ndisc(now, punt.link, &punt.frame, &router),
            PuntKind::Unresolved => match (punt.next_hop, punt.frame.get(14..)) {
                (Some(next_hop), Some(packet)) => {
                    self.table
                        .resolve(now, punt.link, next_hop, packet.to_vec(), &router)
                }
                _ => Vec::new(),
            },
            PuntKind::Local => Vec::new(),
        };
        self.actions.extend(actions);
    }

    /// The neighbour side's periodic work: the workers' use reports, the
    /// timers, what they want sent, and the adjacency table published.
    pub fn tick(&mut self) {
        let now = self.now();
        {
            let router = FibRouter::with_macs(self.writer.fib(), self.macs.clone());
            self.actions
                .extend(self.publisher.drain_uses(now, &mut self.table, &router));
            self.actions.extend(self.table.tick(now, &router));
        }
        for action in std::mem::take(&mut self.actions) {
            let (link, frame) = match action {
                Action::Send { link, frame } => (link, frame),
                Action::Release { link, mac, packet } => {
                    let Some(egress) = self.egress.iter().find(|e| e.link == link) else {
                        continue;
                    };
                    ethernet(mac, egress.mac, &packet, &mut self.frame);
                    (link, std::mem::take(&mut self.frame))
                }
                Action::Unreachable { link, packet, .. } => {
                    self.unresolved_dropped += 1;
                    let now_ns = self.start.elapsed().as_nanos() as u64;
                    self.errors.resolution_failed(link, &packet, now_ns);
                    continue;
                }
                Action::Dropped { .. } => {
                    self.unresolved_dropped += 1;
                    continue;
                }
            };
            if let Some(egress) = self.egress.iter_mut().find(|e| e.link == link) {
                if egress.port.transmit(&frame).is_err() {
                    self.tx_failed += 1;
                }
            }
        }
        self.send_errors();
        self.publisher.publish(&mut self.table);
        for egress in &mut self.egress {
            if egress.port.flush().is_err() {
                self.tx_failed += 1;
            }
        }
    }

    /// Sends what the error worker queued: each port's frames by its
    /// link's socket, and an error whose way back is not resolved yet to
    /// the neighbour table, as a worker's punt would go.
    fn send_errors(&mut self) {
        let Control {
            errors,
            egress,
            tx_failed,
            ..
        } = self;
        for (port, egress) in egress.iter_mut().enumerate() {
            errors.drain_port(port, |frame| {
                if egress.port.transmit(frame).is_err() {
                    *tx_failed += 1;
                }
            });
        }
        let mut waiting = Vec::new();
        errors.drain_punts(|punt| {
            if let (PuntKind::Unresolved, Some(next_hop), Some(packet)) =
                (punt.kind, punt.next_hop, punt.frame.get(14..))
            {
                waiting.push((punt.link, next_hop, packet.to_vec()));
            }
        });
        if waiting.is_empty() {
            return;
        }
        let now = self.now();
        let router = FibRouter::with_macs(self.writer.fib(), self.macs.clone());
        for (link, next_hop, packet) in waiting {
            let actions = self.table.resolve(now, link, next_hop, packet, &router);
            self.actions.extend(actions);
        }
    }

    /// Every worker's counters, as of its last burst.
    pub fn worker_counters(&self) -> Vec<Counters> {
        self.workers.iter().map(|w| w.counters.read()).collect()
    }

    /// Answers one `fibre ctl` request: its lines in order, stopping at the
    /// first that fails, as `ip -batch` does.
    pub fn answer(&mut self, request: Request<'_>, socket: SocketCounts) -> Answer {
        let mut answer = Answer::default();
        for (index, line) in request.lines.iter().enumerate() {
            let number = index + 1;
            let mut out = Vec::new();
            let result = self.line(line, request.flags, socket, &mut out);
            answer.stdout.extend_from_slice(&out);
            if let Err(message) = result {
                let _ = writeln!(answer.stderr, "{message}");
                let _ = writeln!(answer.stderr, "Command failed ctl:{number}");
                answer.exit = 1;
                break;
            }
        }
        answer
    }

    /// One line: a query answered into `out`, or configuration applied.
    fn line(
        &mut self,
        line: &str,
        flags: RequestFlags,
        socket: SocketCounts,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        let words = tokenize(line).map_err(|e| e.to_string())?;
        let (named, rest) = family_words(&words);
        let family = named.or(match flags.family {
            Some(4) => Some(Family::V4),
            Some(6) => Some(Family::V6),
            _ => None,
        });
        let Some((object, tail)) = rest.split_first() else {
            return Ok(());
        };
        let verb = tail.first().map(String::as_str).unwrap_or("show");
        let args = tail.get(1..).unwrap_or(&[]);
        let word = object.as_str();
        let object = object_of(word);
        let is_get = object == Some("route") && !verb.is_empty() && "get".starts_with(verb);
        if object == Some("workers") || is_get || is_show(verb) {
            let flags = Query {
                family,
                json: flags.json,
                stats: flags.stats,
                details: flags.details,
            };
            return self
                .query(object.unwrap_or(word), is_get, args, flags, socket, out)
                .map_err(|e| format!("{e:#}"));
        }
        self.configure(&words)
    }

    /// Applies one configuration line as one all-or-nothing batch.
    fn configure(&mut self, words: &[String]) -> Result<(), String> {
        let commands = parse_words(words).map_err(|e| e.refusal_on(self.writer.fib()))?;
        let report = self
            .writer
            .apply_batch(&commands, BatchMode::AllOrNothing)
            .map_err(|e| e.to_string())?;
        if let Some(refusal) = report.refused.first() {
            return Err(refusal.error.to_string());
        }
        let now = self.now();
        for command in &commands {
            if let Command::Neigh { spec, .. } = command {
                if let Some(link) = self.writer.fib().link_by_name(&spec.dev) {
                    let link = link.index;
                    self.table
                        .admin_request(now, self.writer.fib(), link, spec.addr);
                }
            }
        }
        self.publisher.publish(&mut self.table);
        Ok(())
    }

    fn query(
        &self,
        object: &str,
        is_get: bool,
        args: &[String],
        q: Query,
        socket: SocketCounts,
        out: &mut Vec<u8>,
    ) -> anyhow::Result<()> {
        let fib = self.writer.fib();
        match object {
            "route" if is_get => {
                let mut refusal = None;
                let outcome = get::route_get_to(fib, None, args, q.family, q.json, out, &mut |e| {
                    refusal = Some(e.to_string())
                })?;
                if outcome != Outcome::Success {
                    anyhow::bail!("{}", refusal.unwrap_or_else(|| "route get refused".into()));
                }
            }
            "route" => {
                let filter = show::RouteFilter::parse(args)?;
                if filter.cache {
                    show::cache(fib, None, q.family.unwrap_or(Family::V4), q.json, out)?;
                } else {
                    show::routes(fib, q.family, &filter, q.json, out)?;
                }
            }
            "rule" => show::rules(fib, q.family.unwrap_or(Family::V4), q.json, out)?,
            "address" => show::addresses(fib, device_word(args)?, q.family, q.json, out)?,
            "link" => {
                let how = show::LinkShow {
                    only: device_word(args)?,
                    json: q.json,
                    details: q.details,
                    stats: q.stats,
                };
                let stats_of = |link: &fibre_fib::Link| {
                    let backed = self.egress.iter().any(|e| e.link == link.index);
                    if backed {
                        interface_stats(&link.name)
                    } else {
                        Some(IpLinkStats::default())
                    }
                };
                show::links_with(fib, how, &stats_of, out)?;
            }
            "neighbour" => {
                let filter = show::NeighFilter::parse(args)?;
                show::neighbour_table(fib, &self.table, q.family, &filter, q.json, out)?;
            }
            "workers" => self.workers_show(q.json, socket, out)?,
            _ => anyhow::bail!(
                "Object \"{object}\" is unknown to fibre ctl: route, rule, address, link, neighbour, workers"
            ),
        }
        Ok(())
    }

    /// `workers show`: each worker's counters, their sum, and the control
    /// side's own counts.
    fn workers_show(
        &self,
        json: bool,
        socket: SocketCounts,
        out: &mut Vec<u8>,
    ) -> anyhow::Result<()> {
        let counters = self.worker_counters();
        let total = counters.iter().fold(Counters::default(), |a, b| add(&a, b));
        let neigh = self.table.stats();
        let lost = |w: &WorkerView| {
            (
                w.extras.punts_lost.load(Ordering::Relaxed),
                w.extras.tx_dropped.load(Ordering::Relaxed),
                w.extras.truncated.load(Ordering::Relaxed),
                w.extras.ports_lost.load(Ordering::Relaxed),
            )
        };
        let segmented = |w: &WorkerView| {
            (
                w.extras.segmented.load(Ordering::Relaxed),
                w.extras.segments.load(Ordering::Relaxed),
            )
        };
        if json {
            let workers: Vec<Value> = self
                .workers
                .iter()
                .zip(&counters)
                .enumerate()
                .map(|(i, (w, c))| {
                    let mut object = Map::new();
                    object.insert("worker".into(), json!(i));
                    object.insert("cpu".into(), json!(w.cpu));
                    object.extend(counters_json(c));
                    let (punts_lost, tx_dropped, truncated, ports_lost) = lost(w);
                    object.insert("ports_lost".into(), json!(ports_lost));
                    object.insert("punts_lost".into(), json!(punts_lost));
                    object.insert("tx_dropped".into(), json!(tx_dropped));
                    object.insert("truncated".into(), json!(truncated));
                    let (frames, segments) = segmented(w);
                    object.insert("gso_segmented".into(), json!(frames));
                    object.insert("gso_segments".into(), json!(segments));
                    Value::Object(object)
                })
                .collect();
            let value = json!({
                "workers": workers,
                "total": Value::Object(counters_json(&total)),
                "control": {
                    "unresolved_dropped": self.unresolved_dropped,
                    "tx_failed": self.tx_failed,
                    "use_reports_lost": neigh.use_reports_lost,
                    "requests_answered": socket.answered,
                    "requests_refused": socket.refused,
                    "fib_version": self.writer.version(),
                },
            });
            writeln!(out, "{value}")?;
        } else {
            let mut text = String::new();
            for (i, (w, c)) in self.workers.iter().zip(&counters).enumerate() {
                let cpu = w.cpu.map_or("any".to_string(), |c| c.to_string());
                text.push_str(&format!("worker {i}: cpu {cpu}\n"));
                counters_text(c, &mut text);
                let (punts_lost, tx_dropped, truncated, ports_lost) = lost(w);
                text.push_str(&format!(
                    "    punts lost {punts_lost} tx dropped {tx_dropped} truncated {truncated} ports lost {ports_lost}\n"
                ));
                let (frames, segments) = segmented(w);
                text.push_str(&format!(
                    "    gso super-frames {frames} cut into {segments} segments\n"
                ));
            }
            text.push_str("total:\n");
            counters_text(&total, &mut text);
            text.push_str(&format!(
                "control: unresolved dropped {} tx failed {} use reports lost {} requests answered {} refused {} fib version {}\n",
                self.unresolved_dropped,
                self.tx_failed,
                neigh.use_reports_lost,
                socket.answered,
                socket.refused,
                self.writer.version()
            ));
            out.write_all(text.as_bytes())?;
        }
        Ok(())
    }
}

/// The flags a query reads.
#[derive(Debug, Clone, Copy)]
struct Query {
    family: Option<Family>,
    json: bool,
    stats: bool,
    details: bool,
}

/// `[dev] NAME` after `show`.
fn device_word(args: &[String]) -> anyhow::Result<Option<&str>> {
    match args {
        [] => Ok(None),
        [name] if name != "dev" => Ok(Some(name)),
        [dev, name] if dev == "dev" => Ok(Some(name)),
        other => anyhow::bail!("\"show\": expected [dev] NAME, got \"{}\"", other.join(" ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_and_verbs_are_matched_as_ip_matches_them() {
        assert_eq!(object_of("r"), Some("route"));
        assert_eq!(object_of("ru"), Some("rule"));
        assert_eq!(object_of("a"), Some("address"));
        assert_eq!(object_of("n"), Some("neighbour"));
        assert_eq!(object_of("neighbor"), Some("neighbour"));
        assert_eq!(object_of("l"), Some("link"));
        assert_eq!(object_of("w"), Some("workers"));
        assert_eq!(object_of("x"), None);
        assert!(is_show("s") && is_show("ls") && is_show("list"));
        assert!(!is_show("add") && !is_show("replace") && !is_show(""));
    }

    /// A control thread over a two-link router, no ports, no workers.
    fn control() -> Control {
        let text = "link add r0 type veth peer name x0\nlink set x0 up\nlink set r0 up\n\
                    addr add 10.0.1.1/24 dev r0\nlink add r1 type veth peer name x1\n\
                    link set x1 up\nlink set r1 up\naddr add 10.0.2.1/24 dev r1\n";
        let (fib, _) =
            fibre_fib::config::apply_str(&fibre_fib::Fib::new(), "t", text, false).unwrap();
        let writer = FibWriter::new(fib);
        let table = NeighTable::from_fib(fibre_neigh::NeighSettings::default(), writer.fib(), 0);
        let mut publisher = NeighPublisher::new(&fibre_rcu::Domain::new());
        let errors = Worker::new(
            ReadOnce(writer.shared()),
            publisher.reader(),
            &[],
            fibre_fwd::WorkerConfig::default(),
        );
        Control::new(writer, table, publisher, Vec::new(), Vec::new(), errors)
    }

    fn ask(control: &mut Control, json: bool, lines: &[&str]) -> (String, String, u8) {
        let request = Request {
            flags: RequestFlags {
                json,
                ..RequestFlags::default()
            },
            lines: lines.to_vec(),
        };
        let answer = control.answer(request, SocketCounts::default());
        (
            String::from_utf8(answer.stdout).unwrap(),
            String::from_utf8(answer.stderr).unwrap(),
            answer.exit,
        )
    }

    #[test]
    fn lines_are_applied_published_and_answered_as_ip_batch() {
        let mut control = self::control();
        let mut reader = control.writer.shared().reader();
        // Offline, as an idle worker is: the writer's grace periods do not
        // wait for it.
        let idle = reader.offline();
        let (out, err, exit) = ask(
            &mut control,
            false,
            &[
                "route add 10.8.0.0/16 via 10.0.2.2",
                "route add 10.8.0.0/16 via 10.0.2.2",
                "route add 10.7.0.0/16 via 10.0.2.2",
            ],
        );
        drop(idle);
        assert_eq!((out.as_str(), exit), ("", 1));
        assert_eq!(
            err,
            "RTNETLINK answers: File exists\nCommand failed ctl:2\n"
        );
        // A reader (a worker) sees the first line, not the third.
        let (eight, seven) = reader.batch(|s| {
            let has = |p: &str| {
                s.fib()
                    .routes(Family::V4, None)
                    .iter()
                    .any(|r| r.dst.to_string() == p)
            };
            (has("10.8.0.0/16"), has("10.7.0.0/16"))
        });
        assert!(eight && !seven);
        let (out, err, exit) = ask(
            &mut control,
            false,
            &["r g 10.8.1.1", "route show table main"],
        );
        assert_eq!(exit, 0, "{err}");
        assert!(
            out.starts_with("10.8.1.1 via 10.0.2.2 dev r1 src 10.0.2.1"),
            "{out}"
        );
        assert!(out.contains("10.8.0.0/16 via 10.0.2.2 dev r1 \n"), "{out}");
        let (_, err, exit) = ask(&mut control, false, &["route show", "route get 1.1.1.1"]);
        assert_eq!(exit, 1);
        assert!(
            err.starts_with("RTNETLINK answers: Network is unreachable"),
            "{err}"
        );
        assert!(err.ends_with("Command failed ctl:2\n"), "{err}");
        let (_, err, exit) = ask(&mut control, false, &["route add 10.6.0.0/16 via"]);
        assert_eq!(exit, 1);
        assert!(err.contains("\"via\"") && err.ends_with("ctl:1\n"), "{err}");
        let (_, err, exit) = ask(&mut control, false, &["frobnicate show"]);
        assert_eq!(exit, 1);
        assert!(err.contains("Object \"frobnicate\" is unknown"), "{err}");
    }

    #[test]
    fn neighbours_and_counters_are_read_live() {
        let mut control = self::control();
        let (out, err, exit) = ask(
            &mut control,
            false,
            &[
                "neigh add 10.0.2.9 lladdr 02:00:00:00:00:09 dev r1",
                "neigh show",
            ],
        );
        assert_eq!(exit, 0, "{err}");
        assert_eq!(out, "10.0.2.9 dev r1 lladdr 02:00:00:00:00:09 PERMANENT \n");
        let (out, _, _) = ask(
            &mut control,
            false,
            &["neigh del 10.0.2.9 dev r1", "neigh show"],
        );
        assert_eq!(out, "");
        let (out, err, exit) = ask(&mut control, true, &["workers show"]);
        assert_eq!(exit, 0, "{err}");
        let value: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(value["workers"], json!([]));
        assert_eq!(value["total"]["received"], json!(0));
        assert_eq!(value["control"]["fib_version"], json!(2));
        let (out, _, exit) = ask(&mut control, false, &["link show r1"]);
        assert_eq!(exit, 0);
        assert!(
            out.contains("r1@x1: <BROADCAST,MULTICAST,UP,LOWER_UP>"),
            "{out}"
        );
    }

    #[test]
    fn counters_add_field_by_field() {
        let mut a = Counters {
            received: 3,
            ..Counters::default()
        };
        a.dropped[0] = 1;
        let mut b = Counters {
            received: 4,
            ..Counters::default()
        };
        b.dropped[0] = 2;
        let sum = add(&a, &b);
        assert_eq!((sum.received, sum.dropped[0]), (7, 3));
    }
}
