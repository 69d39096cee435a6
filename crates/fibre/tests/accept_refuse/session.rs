//! The kernel side in few processes: a configuration is fed line by line
//! to long-lived `ip -n NS [-4|-6] -j -force -batch -` processes (one per
//! family flag, started when first needed), each line followed by a
//! marker command; the queries go through the same process.
//!
//! kernel_diff's loader ([`super::kernel::Netns::load`]) starts one `ip`
//! process per run of lines, one more after each `link add` (for the next
//! interface index) and polls for tentative addresses in more; a chunk of
//! the accept/refuse test cost some thirty processes that way. Here the
//! answers come back on one pipe while the process runs: with `-j`,
//! iproute2's JSON writer flushes stdout after each object
//! (`jsonw_destroy()`), and stderr is unbuffered, so merging both into one
//! pipe keeps them in the order ip wrote them: a line's error text (and
//! `Command failed -:N` when it was refused), then its marker's JSON.
//! What came before a line's marker is that line's. A line after which
//! ip exits (iproute2's `invarg()` exits even under `-force`) ends its
//! process without a marker; the text it left is its refusal, and the
//! next line goes to a new process, as kernel_diff's loader does.
//!
//! The rest is kernel_diff's loader's: the same lines as the kernel can
//! take them ([`kernel::kernel_spelling`]), the model's MACs for new links
//! ([`kernel::with_model_macs`], from the highest index the marker after
//! the last `link` line showed), IPv6 addresses settled before every
//! line that follows an `addr` line. Settling after each `addr` line, not
//! only after a block of them, is what makes the kernel deterministic:
//! an address added stays tentative until the DAD work runs (queued even
//! with `accept_dad` 0, on down links too), and when that completion
//! (`addrconf_dad_completed` -> `ipv6_ifa_notify(RTM_NEWADDR)`) comes after
//! an `addr replace ... peer P`, `__ipv6_ifa_notify` adds P/128 as well,
//! which it does not when it comes before. fibre completes DAD at once, as
//! the kernel does when its work queue wins the race.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use super::answer::{self, Outcome};
use super::kernel::{self, KernelReply, Refusal};

/// Limit for one answer of an `ip` process.
const ANSWER_LIMIT: Duration = Duration::from_secs(60);

/// After a line: all links, whose highest index the next `link add` needs.
const MARKER_LINKS: &str = "link show";
/// After a line that cannot make links: a shorter answer.
const MARKER_LO: &str = "link show dev lo";

/// What one command sent to an `ip -batch` process left.
#[derive(Debug)]
enum Reply {
    /// It ran: the text it printed before the marker, and the marker's.
    Done { text: Vec<String>, marker: String },
    /// `ip` exited after it: the text it left.
    Exited { text: Vec<String> },
}

/// One `ip -n NS [FLAG] -j -force -batch -` process, its stdout and stderr
/// merged into one pipe read line by line.
struct Batch {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Batch {
    fn start(namespace: &str, flag: Option<&str>) -> Result<Batch, String> {
        let (reader, writer) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
        let error_writer = writer.try_clone().map_err(|e| format!("pipe: {e}"))?;
        let mut command = Command::new("ip");
        command.args(["-n", namespace]);
        command.args(flag);
        command.args(["-j", "-force", "-batch", "-"]);
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(writer)
            .stderr(error_writer)
            .spawn()
            .map_err(|e| format!("cannot start ip -n {namespace} -batch: {e}"))?;
        // `command` holds the pipe's write ends: dropped, the pipe ends
        // when ip does.
        drop(command);
        let stdin = child.stdin.take();
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(reader).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Batch {
            child,
            stdin,
            lines,
        })
    }

    /// Sends `command` and `marker`; collects what came back until the
    /// marker's JSON ([`is_marker_reply`]).
    fn run(&mut self, command: &str, marker: &str) -> Result<Reply, String> {
        let sent = self
            .stdin
            .as_mut()
            .map(|stdin| stdin.write_all(format!("{command}\n{marker}\n").as_bytes()));
        // A write that fails means ip has exited; what it left says why.
        if !matches!(sent, Some(Ok(()))) {
            self.stdin = None;
        }
        let mut text = Vec::new();
        loop {
            match self.lines.recv_timeout(ANSWER_LIMIT) {
                Ok(line) if is_marker_reply(marker, &line) => {
                    return Ok(Reply::Done { text, marker: line });
                }
                Ok(line) => {
                    if !line.trim().is_empty() {
                        text.push(line);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.stdin = None;
                    let _ = self.child.wait();
                    return Ok(Reply::Exited { text });
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!(
                        "ip gave no answer to {command:?} within {ANSWER_LIMIT:?}"
                    ))
                }
            }
        }
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        // End of input ends ip; one still running after a failure is killed.
        self.stdin = None;
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Whether `line` is the answer to `marker`: a `link show` array (each
/// link an object that starts with its `ifindex`; a `route get` answer
/// starts otherwise), or for `addr show`, any array (links whose
/// addresses are all filtered out print as `{}`).
fn is_marker_reply(marker: &str, line: &str) -> bool {
    if marker.starts_with("addr ") {
        line.starts_with('[')
    } else {
        line.starts_with("[{\"ifindex\":")
    }
}

/// The refusal in a command's text: the lines before `Command failed`
/// (kernel_diff's `parse_failures()`), or, when ip exited, all it left
/// (`unfinished_message()`); `None`: accepted.
fn refusal_in(reply: &Reply) -> Option<String> {
    match reply {
        Reply::Done { text, .. } => {
            let failed = text.iter().position(|l| l.starts_with("Command failed "))?;
            Some(answer::normalise_error(&text[..failed].join(" ")))
        }
        Reply::Exited { text } => {
            let message: Vec<&str> = text
                .iter()
                .filter(|l| !l.starts_with("Command failed "))
                .map(String::as_str)
                .collect();
            Some(answer::normalise_error(&message.join(" ")))
        }
    }
}

/// True when `line` (an `ip link` line) may delete or rename links:
/// `link del ...` (a veth's peer goes with it), `... name NEW`, however
/// abbreviated (iproute2's `matches()`).
fn renames_links(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    let abbreviates = |word: Option<&&str>, full: &str| word.is_some_and(|w| full.starts_with(*w));
    kernel::may_add_links(line) && (abbreviates(words.get(1), "delete") || words.contains(&"name"))
}

/// The highest interface index in a `link show` marker.
fn highest_index(marker: &str) -> Result<u32, String> {
    let links: serde_json::Value =
        serde_json::from_str(marker).map_err(|e| format!("ip -j link show: {e}: {marker}"))?;
    Ok(links
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l["ifindex"].as_u64())
        .max()
        .unwrap_or(1) as u32)
}

/// A namespace ([`kernel::Netns`]: made with kernel_diff's sysctls,
/// deleted on drop) and its `ip -batch` processes, one per family flag.
pub struct Session {
    namespace: kernel::Netns,
    /// Indexed by [`flag_slot`].
    batches: [Option<Batch>; 3],
}

const FLAGS: [Option<&str>; 3] = [None, Some("-4"), Some("-6")];

fn flag_slot(flag: Option<&str>) -> usize {
    FLAGS.iter().position(|f| *f == flag).unwrap_or(0)
}

impl Session {
    /// A fresh namespace `fibre-accept-<pid>-<n>`.
    pub fn create() -> Result<Session, String> {
        let namespace = kernel::Netns::create_named("fibre-accept")?.without_mac_check();
        Ok(Session {
            namespace,
            batches: [None, None, None],
        })
    }

    /// Runs `command` in the process for `flag`, started if need be; a
    /// process that exited is forgotten, so the next command starts one.
    fn run(&mut self, flag: Option<&str>, command: &str, marker: &str) -> Result<Reply, String> {
        let slot = flag_slot(flag);
        if self.batches[slot].is_none() {
            self.batches[slot] = Some(Batch::start(self.namespace.name(), flag)?);
        }
        let batch = self.batches[slot].as_mut().expect("started above");
        let reply = batch.run(command, marker)?;
        if matches!(reply, Reply::Exited { .. }) {
            self.batches[slot] = None;
        }
        Ok(reply)
    }

    /// Loads a configuration; returns the lines the kernel refused (1-based).
    pub fn load(&mut self, config: &[String]) -> Result<Vec<Refusal>, String> {
        let kind = kernel::stand_in_kind()?;
        let mut refusals = Vec::new();
        let mut highest = 1;
        let mut after_addr = false;
        for (index, raw) in config.iter().enumerate() {
            let (flag, rest) = kernel::family_flag(raw);
            let line = kernel::kernel_spelling(rest, kind);
            // kernel_spelling joins a `link add` line's words by one blank.
            let respelled =
                line != rest && line != rest.split_whitespace().collect::<Vec<_>>().join(" ");
            let is_addr = line.split_whitespace().next() == Some("addr");
            if after_addr {
                // Also between `addr` lines: see the module doc.
                self.settle()?;
            }
            after_addr = is_addr;
            let may_add_links = kernel::may_add_links(&line);
            let line = if may_add_links {
                kernel::with_model_macs(&line, highest)
            } else {
                line
            };
            let marker = if may_add_links {
                MARKER_LINKS
            } else {
                MARKER_LO
            };
            let reply = self.run(flag, &line, marker)?;
            let refusal = refusal_in(&reply);
            let accepted = refusal.is_none();
            if let Some(mut message) = refusal {
                if respelled {
                    message = as_written(&message, kind);
                }
                message = own_usage(&line, message);
                refusals.push(Refusal {
                    line: index + 1,
                    message,
                });
            }
            match &reply {
                Reply::Done { marker, .. } if may_add_links => {
                    highest = highest.max(highest_index(marker)?);
                }
                Reply::Exited { .. } if may_add_links => {
                    // No marker: ask, as the next `link add` needs it.
                    if let Reply::Done { marker, .. } = self.run(None, "", MARKER_LINKS)? {
                        highest = highest.max(highest_index(&marker)?);
                    }
                }
                _ => {}
            }
            if accepted && renames_links(&line) {
                // iproute2 caches names' indexes per process
                // (`ll_name_to_index()`): after a link is deleted or
                // renamed, a process that cached it would find the old
                // index (`No such device`) where a fresh `ip` says `Cannot
                // find device`. Fresh processes, as kernel_diff's loader's.
                self.batches = [None, None, None];
            }
        }
        Ok(refusals)
    }

    /// Waits (at most a second) until no IPv6 address is tentative
    /// (kernel_diff's `settle()`; IPv4 addresses never are). On down links
    /// too, unlike kernel_diff's: with `accept_dad` 0 (the namespace's)
    /// addrconf_dad_begin completes DAD whether or not the link is up, but
    /// from a work queue, so an address added on a down link may still be
    /// tentative when the next line brings the link up, and its peer's
    /// /128 (made by that completion, `__ipv6_ifa_notify`) then depends on
    /// which came first.
    fn settle(&mut self) -> Result<(), String> {
        for _ in 0..100 {
            let reply = self.run(None, "", "addr show tentative")?;
            let Reply::Done { marker, .. } = reply else {
                return Err("ip exited on `addr show tentative`".into());
            };
            let links: serde_json::Value = serde_json::from_str(&marker)
                .map_err(|e| format!("ip -j addr show: {e}: {marker}"))?;
            let tentative = links.as_array().into_iter().flatten().any(|link| {
                link["addr_info"]
                    .as_array()
                    .is_some_and(|addresses| !addresses.is_empty())
            });
            if !tentative {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        eprintln!(
            "accept_refuse: {}: IPv6 addresses still tentative after 1 s",
            self.namespace.name()
        );
        Ok(())
    }

    /// Asks every query twice (`route get Q`, `route get fibmatch Q`) in
    /// the unflagged process, each answer read before the next is asked.
    pub fn ask(&mut self, queries: &[String]) -> Result<Vec<KernelReply>, String> {
        let mut replies = Vec::with_capacity(queries.len());
        for query in queries {
            let answer = self.get(&format!("route get {query}"))?;
            let route = self.get(&format!("route get fibmatch {query}"))?;
            replies.push(KernelReply { answer, route });
        }
        Ok(replies)
    }

    fn get(&mut self, command: &str) -> Result<Outcome, String> {
        let reply = self.run(None, command, MARKER_LO)?;
        if let Some(message) = refusal_in(&reply) {
            return Ok(Outcome::Error(message));
        }
        match &reply {
            Reply::Done { text, .. } if text.len() == 1 => answer::parse_json_answer(&text[0]),
            other => Err(format!("{command}: not one answer: {other:?}")),
        }
    }

    /// The output of `ip -n NS FLAG SHOW` for each show (`["-4", "route",
    /// "show", "table", "all"]`...): one `ip -batch` process per flag, the
    /// shows separated by `netns identify` (which prints the namespace's
    /// name, a line no show prints).
    pub fn shows(&self, shows: &[&[&str]]) -> Result<Vec<String>, String> {
        let name = self.namespace.name();
        let mut outputs = vec![String::new(); shows.len()];
        for flag in ["-4", "-6"] {
            let mine: Vec<usize> = (0..shows.len())
                .filter(|&i| shows[i].first() == Some(&flag))
                .collect();
            if mine.is_empty() {
                continue;
            }
            let input: String = mine
                .iter()
                .map(|&i| format!("{}\nnetns identify\n", shows[i][1..].join(" ")))
                .collect();
            let mut command = Command::new("ip");
            command.args(["-n", name, flag, "-batch", "-"]);
            let done = super::process::run(command, &input, ANSWER_LIMIT)?;
            if done.code != Some(0) {
                return Err(format!(
                    "ip -n {name} {flag} -batch (shows): {}",
                    done.stderr.trim()
                ));
            }
            let mut parts = done.stdout.split_inclusive('\n');
            for &i in &mine {
                let mut text = String::new();
                for line in parts.by_ref() {
                    if line.trim_end() == name {
                        break;
                    }
                    text.push_str(line);
                }
                outputs[i] = text;
            }
        }
        // Shows without a flag, if any, one process each.
        for (i, args) in shows.iter().enumerate() {
            if args.first() != Some(&"-4") && args.first() != Some(&"-6") {
                outputs[i] = self.namespace.show(args)?;
            }
        }
        Ok(outputs)
    }
}

/// ip's message about a line whose `type dummy` was respelled for this
/// kernel ([`kernel::kernel_spelling`]), as ip would have worded it about
/// the line as written: a quoted stand-in kind (`"ifb"` is a garbage) is
/// the generated line's `"dummy"`.
fn as_written(message: &str, kind: &str) -> String {
    message.replace(&format!("\"{kind}\""), "\"dummy\"")
}

/// ip's usage text for an `ip address` line as a fresh `ip` prints it:
/// ipaddress.c's `usage()` prints `ip link`'s usage instead while the
/// global `do_link` is set, and in one `ip -batch` process it stays set
/// from the first `ip link` line on (the markers are `ip link show`).
/// Warnings ip printed before the usage (`Warning: mngtmpaddr option can
/// be set only for IPv6 addresses`) are kept in front of it.
fn own_usage(line: &str, message: String) -> String {
    let command = line.split_whitespace().next().unwrap_or("");
    if command.is_empty() || !"address".starts_with(command) {
        return message;
    }
    let Some(usage_at) = message.find("Usage: ip link") else {
        return message;
    };
    let warnings = &message[..usage_at];
    if !warnings
        .lines()
        .all(|warning| warning.trim().is_empty() || warning.trim_start().starts_with("Warning:"))
    {
        return message;
    }
    format!("{warnings}Usage: ip address {{add|change|replace}} IFADDR dev IFNAME [ LIFETIME ]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_split_at_their_markers() {
        assert!(is_marker_reply(
            MARKER_LO,
            "[{\"ifindex\":1,\"ifname\":\"lo\"}]"
        ));
        assert!(!is_marker_reply(MARKER_LO, "[{\"dst\":\"10.1.0.7\"}]"));
        assert!(is_marker_reply("addr show tentative", "[{}]"));
        let refused = Reply::Done {
            text: vec![
                "Error: argument \"x\" is wrong: \"metric\" value is invalid".into(),
                "Command failed -:3".into(),
            ],
            marker: String::new(),
        };
        assert_eq!(
            refusal_in(&refused).as_deref(),
            Some("argument \"x\" is wrong: \"metric\" value is invalid")
        );
        let warned = Reply::Done {
            text: vec!["Warning: Executing wildcard deletion".into()],
            marker: String::new(),
        };
        assert_eq!(refusal_in(&warned), None);
        let exited = Reply::Exited {
            text: vec!["Cannot find device \"x\"".into()],
        };
        assert_eq!(
            refusal_in(&exited).as_deref(),
            Some("Cannot find device \"x\"")
        );
        assert_eq!(highest_index("[{\"ifindex\":1},{\"ifindex\":7}]"), Ok(7));
    }

    #[test]
    fn deletions_and_renames_drop_the_cached_names() {
        assert!(renames_links("link del fd0"));
        assert!(renames_links("l d fdv0"));
        assert!(renames_links("link set fd0 name fd9"));
        assert!(!renames_links("link set fd0 up"));
        assert!(!renames_links("link add fd3 type ifb"));
        assert_eq!(
            own_usage("ad add ::1 h dev lo", "Usage: ip link add [link DEV".into()),
            "Usage: ip address {add|change|replace} IFADDR dev IFNAME [ LIFETIME ]"
        );
        assert_eq!(
            own_usage(
                "addr replace 10.5.0.0/16 mngtmpaddr h dev fd1",
                "Warning: mngtmpaddr option can be set only for IPv6 addresses\nUsage: ip link add [link DEV".into()
            ),
            "Warning: mngtmpaddr option can be set only for IPv6 addresses\nUsage: ip address {add|change|replace} IFADDR dev IFNAME [ LIFETIME ]"
        );
        assert_eq!(
            own_usage(
                "addr add 10.5.0.1/16 dev x",
                "Cannot find device \"x\" Usage: ip link add".into()
            ),
            "Cannot find device \"x\" Usage: ip link add"
        );
        assert_eq!(
            own_usage("link add x", "Usage: ip link add [link DEV".into()),
            "Usage: ip link add [link DEV"
        );
        assert_eq!(
            as_written(
                "Error: either \"dev\" is duplicate, or \"ifb\" is a garbage.",
                "ifb"
            ),
            "Error: either \"dev\" is duplicate, or \"dummy\" is a garbage."
        );
        assert!(!renames_links("route del 10.0.0.0/8"));
    }
}
