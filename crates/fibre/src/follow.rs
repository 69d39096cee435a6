//! `fibre follow --netns NAME`: a FIB that follows a network namespace's
//! routing state through rtnetlink, as VPP's linux-cp follows the kernel.
//!
//! The start is consistent: the event socket joins the rtnetlink groups
//! first (links, addresses, IPv4/IPv6 routes and rules, neighbours,
//! nexthop objects), a second socket dumps everything into a fresh FIB,
//! then what arrived on the first during the dump is replayed on top (a
//! replayed add of something the dump already had is refused as the
//! kernel refuses a duplicate, a replayed delete of something it lacked
//! likewise, so the replay neither loses nor duplicates). A dump the
//! kernel marks interrupted (`NLM_F_DUMP_INTR`) is taken again.
//!
//! Two threads form a pipeline. The receiving one reads every queued
//! notification as poll(2) reports it and turns each datagram into
//! [`fibre_fib::Command`]s ([`fibre_netlink::Translator`]); the applying
//! one applies them through the FIB's writer while more are received.
//! Between them is a group commit (the `handoff` module): the applier,
//! whenever it is free, takes as one batch everything received since its
//! last, and a batch is bounded by the applier's own measure of its cost
//! to about 1 ms of work (a burst applied whole would make its first
//! notification wait for its last; a queue of whole batches made each
//! wait for those ahead of it). When the writer falls behind, the
//! receiving thread waits and the socket's receive buffer absorbs the
//! rest.
//! An overrun (`ENOBUFS`: the kernel dropped notifications because the
//! receive buffer was full) is repaired by a resync: a new dump into a
//! fresh FIB, published whole, so nothing the dropped messages said is
//! lost and nothing is applied twice (the batches handed over but not yet
//! applied are older than the dump: applied in order before it, they are
//! then replaced whole, and a query queued between them sees them).
//! The receive buffer is `--rcvbuf` bytes (`SO_RCVBUFFORCE`, 64 MiB by
//! default; the kernel's default is 208 KiB).
//!
//! Reading the followed state: with `--queries`, each line on stdin is a
//! fibre command (`route show table all -j`, `rule show`, `route get
//! 10.1.2.3`, ...) answered on the state after every notification queued
//! when the line was read, then a line holding a single `.`; a command
//! run after the namespace changed (`ip` returns once the kernel has
//! queued its notifications) therefore sees the change. One query is the
//! follower's own, not a fibre command: `.count`, answered `ipv4 N ipv6
//! M`, the routes of table main per family (a probe far cheaper than
//! `route show`, which formats every route). `--then CMD...`
//! runs one command when `--seconds` are over (or stdin closes; with
//! neither, right after the start: a snapshot). `--stats` prints on exit
//! how many notifications were applied in how many batches and the follow
//! lag: from the `recv(2)` that brought each to the publication of its
//! batch, p50/p99/max (the `lag` module; notifications that changed
//! nothing fibre models are published in no batch and not counted). The
//! time a notification spent queued in the socket before that `recv(2)`
//! is not in it (a backlog while the writer falls behind waits there):
//! `fibre bench converge` measures the whole path, the kernel's table
//! against fibre's.
//!
//! What fibre does not model (see [`fibre_netlink::Translator`]) is
//! reported once per kind on stderr, with `--verbose` each refused
//! command too.
//!
//! A namespace deleted while followed (`ip netns del B`) does not end
//! itself: the follower's own thread keeps it alive, its links stay and
//! its socket stays open, but nothing else can reach it any more, so it
//! never changes again. The follower therefore checks, at least once a
//! second, that the path it was given still names the namespace it
//! entered (the nsfs device and inode it had when entered), and exits
//! with an error once the path is gone or names another namespace.
//!
//! ```text
//! fibre follow --netns B --seconds 10 --then route show table all -j
//! printf 'route show table all -j\n' | fibre follow --netns B --queries
//! printf '.count\n' | fibre follow --netns B --queries    # ipv4 N ipv6 M, then .
//! ```

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use fibre_fib::shared::{BatchMode, FibWriter};
use fibre_fib::{Command, Family, Fib};
use fibre_netlink::message::{self, Message};
use fibre_netlink::request::{DUMPS, GROUPS};
use fibre_netlink::wire::{self, NLM_F_DUMP_INTR};
use fibre_netlink::{Origin, Translator};

use crate::monitor::{print_changes, MonitorArgs, Watch};
use crate::stdio;

mod handoff;
mod lag;
use handoff::{BatchBudget, Handoff, Pending};
use lag::Lag;

/// `fibre follow`'s options.
#[derive(Debug, Args)]
pub struct FollowArgs {
    /// The network namespace to follow (a name under /run/netns, or a path
    /// such as /proc/PID/ns/net).
    #[arg(long = "netns", value_name = "NAME")]
    pub netns: String,
    /// Stop after this many seconds (0: until stdin closes with --queries,
    /// else right after the start's dump: a snapshot for --then).
    #[arg(long = "seconds", default_value_t = 0)]
    pub seconds: u64,
    /// The event socket's receive buffer in bytes (SO_RCVBUFFORCE).
    #[arg(long = "rcvbuf", default_value_t = 64 << 20)]
    pub rcvbuf: usize,
    /// Answer fibre commands read from stdin, one per line, each answer
    /// followed by a line ".".
    #[arg(long = "queries")]
    pub queries: bool,
    /// Report each refused command and each resync on stderr.
    #[arg(long = "verbose")]
    pub verbose: bool,
    /// On exit, print on stderr how many notifications were applied in
    /// how many batches, and the lag from each one's receipt to the
    /// publication of its batch (p50, p99, max).
    #[arg(long = "stats")]
    pub stats: bool,
    /// A fibre command to run on the followed FIB at the end.
    #[arg(long = "then", num_args = 1.., allow_hyphen_values = true, value_name = "CMD")]
    pub then: Vec<String>,
}

/// What the caller does with a query: runs `words` as a fibre command on
/// the FIB and prints the answer on stdout.
pub type Answer<'a> = dyn FnMut(Fib, Vec<String>) -> Result<()> + 'a;

/// `fibre monitor`: follows without queries, printing each batch's changes.
pub fn monitor(args: &MonitorArgs, json: bool) -> Result<()> {
    let watch = Watch::of(&args.objects, json)?;
    let follow = FollowArgs {
        netns: args.netns.clone(),
        seconds: args.seconds,
        rcvbuf: args.rcvbuf,
        queries: false,
        verbose: false,
        stats: false,
        then: Vec::new(),
    };
    run_watching(&follow, Some(watch), &mut |_, _| Ok(()))
}

/// Runs the follower (see the module's documentation).
pub fn run(args: &FollowArgs, answer: &mut Answer<'_>) -> Result<()> {
    run_watching(args, None, answer)
}

fn run_watching(args: &FollowArgs, watch: Option<Watch>, answer: &mut Answer<'_>) -> Result<()> {
    let followed = enter_namespace(&args.netns)?;
    let events = NetlinkSocket::open()?;
    events.set_receive_buffer(args.rcvbuf)?;
    for (group, name) in GROUPS {
        events
            .join(group)
            .with_context(|| format!("joining {name}"))?;
    }
    let mut receiver = Receiver::new(args.verbose);
    let mut applier = Applier::new(args.verbose);
    // The start (dump, then the replay of what arrived meanwhile) is
    // applied on this thread before the pipeline starts, so a monitor
    // prints changes only from the start's state on.
    // Gathered as the pipeline gathers (see `handoff`), so that a burst
    // queued during the dump is not applied a datagram at a time.
    let mut start = Pending::default();
    receiver.resync(&events, &mut |delivery| {
        if start.full_for(&delivery, applier.budget.limit()) {
            applier.take_all(start.take(), answer)?;
        }
        start.push(delivery);
        Ok(())
    })?;
    applier.take_all(start.take(), answer)?;
    applier.watch = watch;
    if watch.is_some() {
        stdio::warn(format_args!("fibre monitor: following {}", args.netns));
    }
    let deadline = (args.seconds > 0).then(|| Instant::now() + Duration::from_secs(args.seconds));
    let queries = args.queries.then(Queries::default);
    // Neither a time, queries nor a monitor: one snapshot, for `--then`.
    let snapshot = deadline.is_none() && queries.is_none() && watch.is_none();
    let handoff = Handoff::default();
    let stopped = AtomicBool::new(false);
    let (applied, received) = std::thread::scope(|scope| {
        let receiving = scope.spawn(|| {
            let mut send = |delivery| handoff.send(delivery);
            let receiving = Receiving {
                events: &events,
                followed: &followed,
                deadline,
                queries,
                snapshot,
                stopped: &stopped,
            };
            let result = receiving.run(&mut receiver, &mut send);
            handoff.close();
            result.map(|()| receiver.resyncs)
        });
        let mut applied = Ok(());
        while let Some(deliveries) = handoff.take(applier.budget.limit()) {
            applied = applier.take_all(deliveries, answer);
            if applied.is_err() {
                break;
            }
        }
        // The receiving thread may be waiting in poll(2): it checks this
        // at least every NAMESPACE_CHECK, and a send fails once the
        // handoff is closed.
        stopped.store(true, Ordering::Relaxed);
        handoff.close();
        let received = receiving
            .join()
            .unwrap_or_else(|_| Err(anyhow!("the receiving thread panicked")));
        (applied, received)
    });
    // The applier's error first: the receiver's is then only that the
    // applier stopped.
    applied?;
    let resyncs = received?;
    if !args.then.is_empty() {
        answer(applier.writer.fib().clone(), args.then.clone())?;
    }
    if args.stats {
        stdio::warn(format_args!(
            "fibre follow: stats: {}; {} resyncs",
            applier.lag, resyncs
        ));
    }
    Ok(())
}

/// What the receiving thread hands the applying one, in order.
enum Delivery {
    /// Notifications translated, with when each datagram was received and
    /// how many notifications it held (the receiver sends one datagram's,
    /// the handoff merges them into the batch the applier takes).
    Batch {
        commands: Vec<Command>,
        received: Vec<(Instant, u64)>,
    },
    /// A dump's FIB, to replace the followed one whole (the start, or a
    /// resync after an overrun: every batch delivered before it is older
    /// than the dump, so applying them first, in order, loses nothing and
    /// a query between them sees them, and the replacement discards them).
    Dumped(Box<Fib>),
    /// A query line, answered on the state after every batch before it.
    Query(Vec<String>),
}

/// The receiving thread's loop: notifications and query lines, in the
/// order they were read, until the deadline, stdin's end or an error.
struct Receiving<'a> {
    events: &'a NetlinkSocket,
    followed: &'a Followed,
    deadline: Option<Instant>,
    queries: Option<Queries>,
    snapshot: bool,
    stopped: &'a AtomicBool,
}

impl Receiving<'_> {
    fn run(mut self, receiver: &mut Receiver, deliver: &mut Deliver<'_>) -> Result<()> {
        if !self.snapshot {
            while !self.stopped.load(Ordering::Relaxed) {
                self.followed.check()?;
                let wait = match self.deadline {
                    Some(at) => match at.checked_duration_since(Instant::now()) {
                        Some(left) => left.min(NAMESPACE_CHECK),
                        None => break,
                    },
                    None => NAMESPACE_CHECK,
                };
                let (netlink_ready, stdin_ready) =
                    poll(self.events.fd(), self.queries.is_some(), wait)?;
                if netlink_ready {
                    receiver.read_events(self.events, deliver)?;
                }
                let Some(reader) = self.queries.as_mut().filter(|_| stdin_ready) else {
                    continue;
                };
                let open = reader.fill()?;
                while let Some(words) = reader.next_line() {
                    // Everything the kernel queued before the query was
                    // read is delivered before it.
                    receiver.read_events(self.events, deliver)?;
                    deliver(Delivery::Query(words))?;
                }
                if !open {
                    self.queries = None;
                    if self.deadline.is_none() {
                        break;
                    }
                }
            }
        }
        receiver.read_events(self.events, deliver)
    }
}
/// The query the follower answers itself rather than as a fibre command:
/// how many routes table main holds per family (see [`write_route_count`]).
pub const COUNT_QUERY: &str = ".count";

/// `.count`'s answer, one line `ipv4 N ipv6 M`: the routes of table main
/// of each family, what `ip -4 route show` and `ip -6 route show` would
/// list, without formatting them. It is the cheap readiness probe of
/// `fibre bench converge`: a probe that printed the whole table would
/// keep the follower (which answers on the thread that applies the
/// notifications) from the very work it measures.
fn write_route_count(fib: &Fib, out: &mut impl Write) -> io::Result<()> {
    let count = |family| fib.route_count(family, Some(fibre_fib::TABLE_MAIN));
    writeln!(out, "ipv4 {} ipv6 {}", count(Family::V4), count(Family::V6))
}

/// The queries on stdin, read with read(2) as poll(2) reports them (a
/// buffered reader could hold lines poll does not know of).
#[derive(Default)]
struct Queries {
    pending: Vec<u8>,
}

/// The longest query line kept: longer ones are cut (no fibre command is
/// near it), so a stdin without newlines cannot grow memory unbounded.
const MAX_QUERY: usize = 64 << 10;

impl Queries {
    /// Reads what stdin has; false once it is closed.
    fn fill(&mut self) -> Result<bool> {
        let mut buf = [0u8; 4096];
        // SAFETY: `buf` is valid for writes of its length; fd 0 is stdin.
        let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                return Ok(true);
            }
            return Err(err).context("reading a query from stdin");
        }
        let n = n as usize;
        self.pending.extend_from_slice(&buf[..n]);
        if self.pending.len() > MAX_QUERY && !self.pending.contains(&b'\n') {
            self.pending.truncate(MAX_QUERY);
        }
        if n == 0 && !self.pending.is_empty() && !self.pending.ends_with(b"\n") {
            // The last line, without its newline.
            self.pending.push(b'\n');
        }
        Ok(n > 0)
    }

    /// The next complete line's words (empty lines skipped).
    fn next_line(&mut self) -> Option<Vec<String>> {
        loop {
            let end = self.pending.iter().position(|&b| b == b'\n')?;
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let words: Vec<String> = String::from_utf8_lossy(&line)
                .split_whitespace()
                .map(String::from)
                .collect();
            if !words.is_empty() {
                return Some(words);
            }
        }
    }
}

/// How long the follower waits at most before checking again that the
/// namespace it follows still exists (see [`Followed::check`]).
const NAMESPACE_CHECK: Duration = Duration::from_secs(1);

/// The namespace followed: the path it was named by and the identity
/// (device and inode of its nsfs file) of the namespace entered.
struct Followed {
    netns: String,
    path: String,
    identity: (u64, u64),
}

impl Followed {
    /// An error once `path` no longer names the namespace entered: removed
    /// (`ip netns del`, or the process of a `/proc/PID/ns/net` gone) or
    /// naming another one (deleted and added again under the same name).
    /// One stat(2) of the path.
    fn check(&self) -> Result<()> {
        match std::fs::metadata(&self.path) {
            Ok(meta) if (meta.dev(), meta.ino()) == self.identity => Ok(()),
            Ok(_) => bail!(
                "--netns {}: {} now names another namespace: the one followed was deleted",
                self.netns,
                self.path
            ),
            Err(err) if err.kind() == io::ErrorKind::NotFound => bail!(
                "--netns {}: the namespace was deleted ({} is gone)",
                self.netns,
                self.path
            ),
            Err(err) => Err(err)
                .with_context(|| format!("--netns {}: cannot check {}", self.netns, self.path)),
        }
    }
}

/// setns(2) into the namespace: this process only follows, so the whole
/// thread (the only one yet) moves, before any socket is opened; the
/// receiving thread, spawned later, starts in the namespace of the thread
/// that spawns it (clone(2) copies it), where it opens its dump sockets.
fn enter_namespace(netns: &str) -> Result<Followed> {
    let path = if netns.contains('/') {
        netns.to_string()
    } else {
        format!("/run/netns/{netns}")
    };
    let file = File::open(&path).with_context(|| format!("--netns {netns}: cannot open {path}"))?;
    let meta = file
        .metadata()
        .with_context(|| format!("--netns {netns}: cannot stat {path}"))?;
    // SAFETY: setns takes a valid open descriptor (kept open by `file`
    // for the call) and a namespace type; it changes only this thread's
    // namespace and touches no memory of ours.
    let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc != 0 {
        return Err(io::Error::last_os_error())
            .with_context(|| format!("--netns {netns}: setns (root is needed)"));
    }
    Ok(Followed {
        netns: netns.to_string(),
        path,
        identity: (meta.dev(), meta.ino()),
    })
}

/// Waits for the netlink socket and, if asked, stdin.
fn poll(netlink: RawFd, stdin: bool, wait: Duration) -> Result<(bool, bool)> {
    let mut fds = [
        libc::pollfd {
            fd: netlink,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: if stdin { 0 } else { -1 },
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let ms = i32::try_from(wait.as_millis()).unwrap_or(i32::MAX).max(1);
    // SAFETY: `fds` is a valid array of two pollfd for the call's length;
    // poll writes only their `revents`.
    let rc = unsafe { libc::poll(fds.as_mut_ptr(), 2, ms) };
    if rc < 0 {
        let err = io::Error::last_os_error();
        if err.kind() == io::ErrorKind::Interrupted {
            return Ok((false, false));
        }
        return Err(err).context("poll");
    }
    let ready = |f: &libc::pollfd| f.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0;
    Ok((ready(&fds[0]), stdin && ready(&fds[1])))
}

/// Where the receiving side hands what it read: the applying thread's
/// handoff, or (at the start) batches gathered alike and applied on the
/// spot.
type Deliver<'a> = dyn FnMut(Delivery) -> Result<()> + 'a;

/// The receiving side: the event socket's reader and the translator that
/// knows what the namespace's messages said.
struct Receiver {
    translator: Translator,
    reported: BTreeSet<String>,
    verbose: bool,
    buf: Vec<u8>,
    seq: u32,
    /// Resyncs after overruns so far.
    resyncs: u64,
}

/// The applying side: the FIB behind its writer.
struct Applier {
    writer: FibWriter,
    verbose: bool,
    /// `fibre monitor`: print each batch's changes.
    watch: Option<Watch>,
    /// Receipt to publication of each applied notification (`--stats`).
    lag: Lag,
    /// What a command costs this applier, which sizes the batches.
    budget: BatchBudget,
}

impl Applier {
    fn new(verbose: bool) -> Applier {
        Applier {
            writer: FibWriter::new(Fib::following_kernel()),
            verbose,
            watch: None,
            lag: Lag::default(),
            budget: BatchBudget::default(),
        }
    }

    /// Takes `deliveries` in order.
    fn take_all(
        &mut self,
        deliveries: impl IntoIterator<Item = Delivery>,
        answer: &mut Answer<'_>,
    ) -> Result<()> {
        deliveries
            .into_iter()
            .try_for_each(|delivery| self.take(delivery, answer))
    }

    /// Applies, publishes or answers one delivery.
    fn take(&mut self, delivery: Delivery, answer: &mut Answer<'_>) -> Result<()> {
        match delivery {
            Delivery::Batch { commands, received } => self.apply(&commands, &received),
            Delivery::Dumped(fib) => {
                if let Some(watch) = self.watch {
                    print_changes(watch, self.writer.fib(), &fib, &mut io::stdout().lock())?;
                }
                self.writer = FibWriter::new(*fib);
                Ok(())
            }
            Delivery::Query(words) => {
                if words == [COUNT_QUERY] {
                    write_route_count(self.writer.fib(), &mut io::stdout().lock())?;
                } else if let Err(err) = answer(self.writer.fib().clone(), words) {
                    stdio::warn(format_args!("fibre: {err:#}"));
                }
                let mut out = io::stdout().lock();
                writeln!(out, ".")?;
                out.flush()?;
                Ok(())
            }
        }
    }

    fn apply(&mut self, commands: &[Command], received: &[(Instant, u64)]) -> Result<()> {
        // Only a monitor pays for the copy it compares with.
        let before = self.watch.map(|_| self.writer.fib().clone());
        let started = Instant::now();
        let report = self
            .writer
            .apply_batch(commands, BatchMode::BestEffort)
            .context("applying notifications")?;
        let published = Instant::now();
        self.budget.record(commands.len(), published - started);
        self.lag.batch();
        for &(at, notifications) in received {
            self.lag.record(published - at, notifications);
        }
        if let (Some(watch), Some(before)) = (self.watch, &before) {
            print_changes(watch, before, self.writer.fib(), &mut io::stdout().lock())?;
        }
        if self.verbose {
            for refusal in &report.refused {
                stdio::warn(format_args!(
                    "fibre follow: refused {:?}: {}",
                    commands[refusal.index], refusal.error
                ));
            }
        }
        Ok(())
    }
}
/// How a pass over the queued notifications ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    /// Nothing left queued.
    CaughtUp,
    /// The kernel dropped notifications (ENOBUFS).
    Overrun,
}

/// Receive buffer: the largest datagram the kernel sends a dump in
/// (NLMSG_GOODSIZE is a page; 32 KiB with large pages) fits many times.
const RECV_BUF: usize = 256 << 10;

/// How often a dump interrupted by changes is taken again before the
/// follower gives up (a namespace changing faster than it can be dumped).
const DUMP_TRIES: usize = 20;

impl Receiver {
    fn new(verbose: bool) -> Receiver {
        Receiver {
            translator: Translator::new(),
            reported: BTreeSet::new(),
            verbose,
            buf: vec![0; RECV_BUF],
            seq: 0,
            resyncs: 0,
        }
    }

    /// Dumps the namespace into a fresh FIB and publishes it whole, then
    /// replays what `events` queued meanwhile (resyncing again, in a loop
    /// rather than recursion, for as long as overruns go on).
    fn resync(&mut self, events: &NetlinkSocket, deliver: &mut Deliver<'_>) -> Result<()> {
        self.dump_and_deliver(deliver)?;
        self.read_events(events, deliver)
    }

    fn dump_and_deliver(&mut self, deliver: &mut Deliver<'_>) -> Result<()> {
        let dumper = NetlinkSocket::open()?;
        let mut tries = 0;
        let (fib, translator) = loop {
            tries += 1;
            match self.dump_once(&dumper)? {
                Some(done) => break done,
                None if tries < DUMP_TRIES => continue,
                None => bail!("the namespace changed during each of {DUMP_TRIES} dumps"),
            }
        };
        self.translator = translator;
        self.report_unmodelled();
        deliver(Delivery::Dumped(Box::new(fib)))
    }

    /// One dump of everything; `None` if the kernel marked it interrupted.
    fn dump_once(&mut self, socket: &NetlinkSocket) -> Result<Option<(Fib, Translator)>> {
        let mut translator = Translator::new();
        let mut commands = Vec::new();
        let mut rules = Vec::new();
        for dump in DUMPS {
            self.seq += 1;
            socket.send(&dump.request(self.seq))?;
            let mut done = false;
            while !done {
                let n = socket.recv(&mut self.buf)?;
                for raw in wire::messages(&self.buf[..n]) {
                    let raw = raw.with_context(|| format!("dump of {}", dump.what))?;
                    if raw.seq != self.seq {
                        continue;
                    }
                    if raw.flags & NLM_F_DUMP_INTR != 0 {
                        return Ok(None);
                    }
                    match message::parse(&raw) {
                        Ok(Message::Done) => done = true,
                        Ok(Message::Error(errno)) if errno < 0 => {
                            // A kernel without nexthop objects refuses
                            // their dump: there are none to follow.
                            if dump.kind == message::RTM_GETNEXTHOP {
                                done = true;
                            } else {
                                return Err(io::Error::from_raw_os_error(-errno))
                                    .with_context(|| format!("dump of {}", dump.what));
                            }
                        }
                        Ok(m @ (Message::NewRule(_) | Message::DelRule(_))) => {
                            translator.translate(&m, Origin::Dump, &mut rules)
                        }
                        Ok(m) => translator.translate(&m, Origin::Dump, &mut commands),
                        Err(err) => note(self.verbose, format!("dump of {}: {err}", dump.what)),
                    }
                }
            }
        }
        let mut fib = Fib::following_kernel();
        let mut refused = Vec::new();
        for command in &commands {
            if let Err(err) = fib.apply(command) {
                refused.push(format!("{command:?}: {err}"));
            }
        }
        replace_rules(&mut fib, &rules, &mut refused);
        for r in refused {
            note(self.verbose, format!("dump: refused {r}"));
        }
        Ok(Some((fib, translator)))
    }

    /// Reads every queued notification and delivers each datagram's
    /// commands as it is translated; an overrun resyncs.
    fn read_events(&mut self, events: &NetlinkSocket, deliver: &mut Deliver<'_>) -> Result<()> {
        loop {
            if self.read_queued(events, deliver)? == Read::CaughtUp {
                return Ok(());
            }
            self.resyncs += 1;
            if self.verbose {
                stdio::warn(format_args!(
                    "fibre follow: notifications lost (ENOBUFS): resync {} by dump",
                    self.resyncs
                ));
            }
            // Empty the queue before the dump: the kernel raises ENOBUFS
            // again only once a reader has drained the queue
            // (`netlink_rcv_wake` clears NETLINK_S_CONGESTED), so an
            // overrun during the dump would otherwise go unreported.
            // What is dropped here is older than the dump.
            discard_queued(events, &mut self.buf)?;
            self.dump_and_deliver(deliver)?;
        }
    }

    /// One pass over the queued notifications: each datagram's commands
    /// are delivered as soon as it is translated, so that the applier,
    /// once free, takes everything received so far (see `handoff`).
    fn read_queued(&mut self, events: &NetlinkSocket, deliver: &mut Deliver<'_>) -> Result<Read> {
        let ended = loop {
            let n = match events.recv_nonblocking(&mut self.buf) {
                Ok(Some(n)) => n,
                Ok(None) => break Read::CaughtUp,
                Err(err) if err.raw_os_error() == Some(libc::ENOBUFS) => {
                    // What was delivered before the overrun is older than
                    // the dump that follows, which replaces it whole.
                    break Read::Overrun;
                }
                Err(err) => return Err(err).context("reading rtnetlink notifications"),
            };
            let at = Instant::now();
            let mut commands = Vec::new();
            let mut notifications = 0;
            for raw in wire::messages(&self.buf[..n]) {
                notifications += 1;
                let raw = match raw {
                    Ok(raw) => raw,
                    Err(err) => {
                        note(self.verbose, format!("notification: {err}"));
                        break;
                    }
                };
                match message::parse(&raw) {
                    Ok(m) => self.translator.translate(
                        &m,
                        Origin::Notification(raw.flags),
                        &mut commands,
                    ),
                    Err(err) => note(self.verbose, format!("notification: {err}")),
                }
            }
            if !commands.is_empty() {
                deliver(Delivery::Batch {
                    commands,
                    received: vec![(at, notifications)],
                })?;
            }
        };
        self.report_unmodelled();
        Ok(ended)
    }

    /// Each kind of thing not modelled, once.
    fn report_unmodelled(&mut self) {
        for kind in self.translator.unmodelled().keys() {
            if self.reported.insert(kind.clone()) {
                stdio::warn(format_args!("fibre follow: not modelled, skipped: {kind}"));
            }
        }
    }
}

/// Reads and drops every queued notification (ENOBUFS included).
fn discard_queued(events: &NetlinkSocket, buf: &mut [u8]) -> Result<()> {
    loop {
        match events.recv_nonblocking(buf) {
            Ok(Some(_)) => {}
            Ok(None) => return Ok(()),
            Err(err) if err.raw_os_error() == Some(libc::ENOBUFS) => {}
            Err(err) => return Err(err).context("reading rtnetlink notifications"),
        }
    }
}

/// A message for `--verbose`.
fn note(verbose: bool, what: String) {
    if verbose {
        stdio::warn(format_args!("fibre follow: {what}"));
    }
}

/// The dumped rules in place of a fresh FIB's defaults, unless they are
/// those defaults (a FIB whose rules were never changed keeps the kernel's
/// fast path of an unchanged rule set, as the kernel does).
fn replace_rules(fib: &mut Fib, rules: &[Command], refused: &mut Vec<String>) {
    let mut replaced = fib.clone();
    for family in [Family::V4, Family::V6] {
        let existing: Vec<_> = replaced.rules(family).to_vec();
        for rule in existing {
            let mut spec = fibre_fib::RuleSpec::new(family);
            spec.priority = Some(rule.priority);
            spec.action = Some(rule.action);
            let _ = replaced.apply(&Command::Rule {
                op: fibre_fib::RuleOp::Del,
                spec,
            });
        }
    }
    for command in rules {
        if let Err(err) = replaced.apply(command) {
            refused.push(format!("{command:?}: {err}"));
        }
    }
    let same = [Family::V4, Family::V6]
        .iter()
        .all(|&f| replaced.rules(f) == fib.rules(f));
    if !same {
        *fib = replaced;
    }
}

/// A NETLINK_ROUTE socket.
struct NetlinkSocket {
    fd: OwnedFd,
}

impl NetlinkSocket {
    fn open() -> Result<NetlinkSocket> {
        // SAFETY: socket(2) with constant arguments; the descriptor it
        // returns is checked and then owned by OwnedFd.
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                libc::NETLINK_ROUTE,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error()).context("socket(AF_NETLINK, NETLINK_ROUTE)");
        }
        // SAFETY: `fd` was just returned by socket(2) and nothing else owns it.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: sockaddr_nl is plain data; all zeroes is a valid value.
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        // SAFETY: `addr` is a valid sockaddr_nl for the length given.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                std::ptr::from_ref(&addr).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error()).context("bind(AF_NETLINK)");
        }
        let socket = NetlinkSocket { fd };
        // Strict checking makes the kernel refuse malformed dump requests
        // rather than guess; and ask for extended acks.
        let _ = socket.set_int(libc::SOL_NETLINK, libc::NETLINK_GET_STRICT_CHK, 1);
        Ok(socket)
    }

    fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn set_int(&self, level: libc::c_int, name: libc::c_int, value: libc::c_int) -> io::Result<()> {
        // SAFETY: the option value is a valid c_int for the length given.
        let rc = unsafe {
            libc::setsockopt(
                self.fd(),
                level,
                name,
                std::ptr::from_ref(&value).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// SO_RCVBUFFORCE (root may pass rmem_max); SO_RCVBUF otherwise.
    fn set_receive_buffer(&self, bytes: usize) -> Result<()> {
        let bytes = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
        self.set_int(libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, bytes)
            .or_else(|_| self.set_int(libc::SOL_SOCKET, libc::SO_RCVBUF, bytes))
            .context("setting the receive buffer")
    }

    fn join(&self, group: u32) -> io::Result<()> {
        self.set_int(
            libc::SOL_NETLINK,
            libc::NETLINK_ADD_MEMBERSHIP,
            libc::c_int::try_from(group).unwrap_or(0),
        )
    }

    fn send(&self, bytes: &[u8]) -> Result<()> {
        // SAFETY: sockaddr_nl is plain data; all zeroes addresses the kernel.
        let mut to: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        to.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        // SAFETY: `bytes` is valid for its length, `to` for its size.
        let rc = unsafe {
            libc::sendto(
                self.fd(),
                bytes.as_ptr().cast(),
                bytes.len(),
                0,
                std::ptr::from_ref(&to).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error()).context("sending a dump request");
        }
        Ok(())
    }

    /// One datagram, waiting for it.
    fn recv(&self, buf: &mut [u8]) -> Result<usize> {
        loop {
            match self.recv_flags(buf, 0) {
                Ok(n) => return Ok(n),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err).context("receiving a dump"),
            }
        }
    }

    /// One datagram if one is queued.
    fn recv_nonblocking(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        match self.recv_flags(buf, libc::MSG_DONTWAIT) {
            Ok(n) => Ok(Some(n)),
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => Ok(None),
            Err(err) => Err(err),
        }
    }

    fn recv_flags(&self, buf: &mut [u8], flags: libc::c_int) -> io::Result<usize> {
        // SAFETY: `buf` is valid for writes of its length.
        let rc = unsafe { libc::recv(self.fd(), buf.as_mut_ptr().cast(), buf.len(), flags) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(rc as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fibre_fib::{KernelLink, LinkKind, TABLE_MAIN};

    fn lo() -> Command {
        Command::KernelLink(KernelLink {
            index: 1,
            name: "lo".into(),
            kind: LinkKind::Loopback,
            mtu: 65536,
            up: true,
            carrier: true,
        })
    }

    fn route(prefix: &str) -> Command {
        let words: Vec<String> = ["route", "add", prefix, "dev", "lo"]
            .map(String::from)
            .to_vec();
        let mut commands = fibre_fib::config::parse_words(&words).unwrap();
        commands.pop().unwrap()
    }

    fn batch(commands: Vec<Command>) -> Delivery {
        Delivery::Batch {
            commands,
            received: vec![(Instant::now(), 1)],
        }
    }

    fn main_routes(fib: &Fib) -> Vec<String> {
        fib.routes(Family::V4, Some(TABLE_MAIN))
            .iter()
            .map(|r| r.dst.to_string())
            .collect()
    }

    /// A resync's dump arrives behind batches the receiving thread sent
    /// before the overrun, while the applier is still working through
    /// them: they are applied (a query between them sees them), then the
    /// dump replaces the FIB whole, and only batches sent after the dump
    /// are applied on top of it.
    #[test]
    fn a_resync_behind_queued_batches_replaces_them_and_keeps_what_follows() {
        let mut dumped = Fib::following_kernel();
        for command in [lo(), route("10.9.0.0/16")] {
            dumped.apply(&command).unwrap();
        }
        let deliveries = vec![
            batch(vec![lo(), route("10.1.0.0/16")]),
            batch(vec![route("10.2.0.0/16")]),
            Delivery::Query(vec!["show".into()]),
            batch(vec![route("10.3.0.0/16")]),
            Delivery::Dumped(Box::new(dumped)),
            Delivery::Query(vec!["show".into()]),
            batch(vec![route("10.4.0.0/16")]),
        ];
        let handoff = Handoff::default();
        let mut applier = Applier::new(false);
        let mut seen: Vec<Vec<String>> = Vec::new();
        let mut answer = |fib: Fib, _words: Vec<String>| {
            seen.push(main_routes(&fib));
            Ok(())
        };
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for delivery in deliveries {
                    handoff.send(delivery).unwrap();
                }
                handoff.close();
            });
            while let Some(taken) = handoff.take(applier.budget.limit()) {
                // Slower than the sender, so deliveries gather.
                std::thread::sleep(Duration::from_millis(5));
                applier.take_all(taken, &mut answer).unwrap();
            }
        });
        assert_eq!(
            seen,
            [
                vec!["10.1.0.0/16".to_string(), "10.2.0.0/16".into()],
                vec!["10.9.0.0/16".into()],
            ]
        );
        assert_eq!(
            main_routes(applier.writer.fib()),
            ["10.4.0.0/16", "10.9.0.0/16"]
        );
    }
}
