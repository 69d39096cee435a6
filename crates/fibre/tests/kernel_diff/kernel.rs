//! The kernel side: a throw-away network namespace, the configuration
//! loaded with `ip -force -batch`, and the queries asked in one `ip`
//! process per batch.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use super::answer::{self, Outcome};
use super::process;

/// Limit for one `ip` process.
const IP_LIMIT: Duration = Duration::from_secs(60);

/// Set before any link exists, so that every link inherits them: routing
/// between links, no reverse-path filter, no DAD, L4 multipath hashing. IPv6 link-local
/// addresses stay on (EUI-64 from the MAC, which the loader sets to the
/// model's, see [`model_mac`]).
const SYSCTLS: &[(&str, &str)] = &[
    ("net/ipv4/ip_forward", "1"),
    ("net/ipv4/conf/all/rp_filter", "0"),
    ("net/ipv4/conf/default/rp_filter", "0"),
    ("net/ipv4/conf/lo/rp_filter", "0"),
    ("net/ipv6/conf/all/forwarding", "1"),
    ("net/ipv6/conf/default/forwarding", "1"),
    ("net/ipv6/conf/default/accept_dad", "0"),
    // ECMP flows hashed by L4 too, so that queries' ports move them.
    ("net/ipv4/fib_multipath_hash_policy", "1"),
    ("net/ipv6/fib_multipath_hash_policy", "1"),
];

static NEXT_NAMESPACE: AtomicUsize = AtomicUsize::new(0);

/// Link kinds that route alike (NOARP, always a carrier, drop what they
/// are sent): whichever this kernel has stands in for both.
const STAND_IN_KINDS: [&str; 2] = ["ifb", "dummy"];

/// The stand-in kind, probed once per process.
static STAND_IN_KIND: OnceLock<Result<&'static str, String>> = OnceLock::new();

/// A network namespace `fibre-diff-<pid>-<n>`, deleted on drop (also
/// when a test panics).
#[derive(Debug)]
pub struct Netns {
    name: String,
    /// Fail when a new link's MAC is not the model's (see [`with_model_macs`]).
    check_macs: bool,
}

/// What the kernel did with one configuration line it refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// 1-based line of the configuration.
    pub line: usize,
    /// Its error text.
    pub message: String,
}

/// The kernel's reply to one query: the resolved answer and the matching
/// FIB route (`route get fibmatch`, which lists an ECMP route's paths).
#[derive(Debug, Clone)]
pub struct KernelReply {
    /// `ip -j route get QUERY`.
    pub answer: Outcome,
    /// `ip -j route get fibmatch QUERY`.
    pub route: Outcome,
}

/// What one configuration batch did.
struct LoadedBatch {
    /// (0-based line, message) of the lines refused.
    failures: Vec<(usize, String)>,
    /// Where `ip` gave up, and why: that line and the rest were not run.
    aborted: Option<(usize, String)>,
}

fn ip(args: &[&str], input: &str) -> Result<process::Finished, String> {
    let mut command = Command::new("ip");
    command.args(args);
    process::run(command, input, IP_LIMIT)
}

impl Netns {
    /// Creates and prepares a namespace: the sysctls. `lo` stays down, as
    /// in any new namespace: configurations say `link set lo up` themselves,
    /// so that fibre is told exactly what the kernel is.
    pub fn create() -> Result<Netns, String> {
        Netns::create_named("fibre-diff")
    }

    /// [`Netns::create`], the namespace named `<prefix>-<pid>-<n>` (each
    /// test names its own, so that a leftover one says whose it was).
    pub fn create_named(prefix: &str) -> Result<Netns, String> {
        let name = format!(
            "{prefix}-{}-{}",
            std::process::id(),
            NEXT_NAMESPACE.fetch_add(1, Ordering::Relaxed)
        );
        let made = ip(&["netns", "add", &name], "")?;
        if made.code != Some(0) {
            return Err(format!("ip netns add {name}: {}", made.stderr.trim()));
        }
        let ns = Netns {
            name,
            check_macs: true,
        };
        let script: String = SYSCTLS
            .iter()
            .map(|(key, value)| format!("echo {value} > /proc/sys/{key} && "))
            .chain(std::iter::once("true".to_string()))
            .collect();
        let set = ip(&["netns", "exec", &ns.name, "sh", "-c", &script], "")?;
        if set.code != Some(0) {
            return Err(format!("sysctls in {}: {}", ns.name, set.stderr.trim()));
        }
        Ok(ns)
    }

    /// The namespace's name, for `ip -n NAME`.
    #[allow(dead_code)] // accept_refuse.rs's, not kernel_diff.rs's
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The same namespace, its loader not failing when a new link's MAC
    /// is not the model's: for comparisons that do not depend on IPv6
    /// link-local addresses, and lines (`link add x typ veth`, the peer
    /// named by the kernel) whose indexes the prediction misses.
    #[allow(dead_code)] // accept_refuse.rs's, not kernel_diff.rs's
    pub fn without_mac_check(mut self) -> Netns {
        self.check_macs = false;
        self
    }

    /// Loads a configuration; returns the lines the kernel refused.
    ///
    /// `ip -batch` takes no per-line `-4`/`-6`, so runs of consecutive lines
    /// with the same prefix go to one `ip [-4|-6] -force -batch -` each,
    /// which keeps the order of the lines. `type dummy` becomes `type ifb`
    /// (this kernel has no dummy module; both route alike). New links get
    /// the model's MAC (see [`with_model_macs`]).
    pub fn load(&self, config: &[String]) -> Result<Vec<Refusal>, String> {
        let kind = stand_in_kind()?;
        let mut refusals = Vec::new();
        let mut highest = self.highest_index()?;
        for mut run in family_runs(config, kind) {
            if run.settle_first {
                self.settle()?;
            }
            if let Some(last) = run.lines.last_mut() {
                *last = with_model_macs(last, highest);
            }
            let mut next = 0;
            while next < run.lines.len() {
                let lines = &run.lines[next..];
                let batch = self.load_batch(run.flag, lines)?;
                for (index, message) in batch.failures {
                    refusals.push(Refusal {
                        line: run.first_line + next + index,
                        message,
                    });
                }
                match batch.aborted {
                    Some((index, message)) => {
                        refusals.push(Refusal {
                            line: run.first_line + next + index,
                            message,
                        });
                        next += index + 1;
                    }
                    None => break,
                }
            }
            if let Some(last) = run.lines.last() {
                // A refused `link add` made nothing; the name may be an
                // older link's (`link add lo ...`), with its own MAC.
                let last_line = run.first_line + run.lines.len() - 1;
                let refused = refusals.iter().any(|r| r.line == last_line);
                if self.check_macs && last.contains("address 02:fb:") && !refused {
                    self.check_model_macs(last)?;
                }
            }
            // Only `link` lines make links (`ip link add` however
            // abbreviated): other runs cannot move the highest index, and
            // asking costs an `ip` process per run.
            if run.lines.iter().any(|l| may_add_links(l)) {
                highest = highest.max(self.highest_index()?);
            }
        }
        Ok(refusals)
    }

    /// Runs `lines` in one `ip -force -batch`, each followed by a marker
    /// command (`link show dev lo`, one JSON line on stdout).
    ///
    /// iproute2 exits (status 255) on some malformed arguments even under
    /// `-force` (`invarg()`: `Cannot find device`, `"metric" value is
    /// invalid`, ...), without a `Command failed` line and without running
    /// the lines after. The markers printed tell where it stopped, so the
    /// caller can refuse that line and go on with the rest, as fibre's
    /// `--force` does.
    fn load_batch(&self, flag: Option<&str>, lines: &[String]) -> Result<LoadedBatch, String> {
        let text: String = lines
            .iter()
            .map(|l| format!("{l}\nlink show dev lo\n"))
            .collect();
        let mut args = vec!["-n", self.name.as_str()];
        args.extend(flag);
        args.extend(["-j", "-force", "-batch", "-"]);
        let done = ip(&args, &text)?;
        // Batch line 2i+1 is configuration line i (0-based) of `lines`.
        let failures = answer::parse_failures(&done.stderr)?
            .into_iter()
            .map(|(number, message)| ((number - 1) / 2, message))
            .collect();
        let markers = done.stdout.lines().filter(|l| !l.trim().is_empty()).count();
        let aborted =
            (markers < lines.len()).then(|| (markers, answer::unfinished_message(&done.stderr)));
        Ok(LoadedBatch { failures, aborted })
    }

    /// The highest interface index in the namespace (indexes are handed
    /// out upwards and never reused, so the next link gets one more).
    fn highest_index(&self) -> Result<u32, String> {
        let shown = ip(&["-n", &self.name, "-j", "link", "show"], "")?;
        let links: serde_json::Value = serde_json::from_str(shown.stdout.trim())
            .map_err(|e| format!("ip -j link show: {e}"))?;
        let highest = links
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|l| l["ifindex"].as_u64())
            .max()
            .unwrap_or(1);
        Ok(highest as u32)
    }

    /// Fails loudly if a link made by `line` got another index than
    /// predicted (its MAC, hence its link-local address, would then not be
    /// the model's).
    fn check_model_macs(&self, line: &str) -> Result<(), String> {
        for name in links_added_by(line) {
            let shown = ip(&["-n", &self.name, "-j", "link", "show", "dev", &name], "")?;
            if shown.code != Some(0) {
                continue; // The line was refused: no such link.
            }
            let links: serde_json::Value = serde_json::from_str(shown.stdout.trim())
                .map_err(|e| format!("ip -j link show {name}: {e}"))?;
            let index = links[0]["ifindex"].as_u64().unwrap_or(0) as u32;
            let address = links[0]["address"].as_str().unwrap_or("");
            if address != model_mac(index) {
                return Err(format!(
                    "link {name} got index {index} but MAC {address}: the index prediction was wrong"
                ));
            }
        }
        Ok(())
    }

    /// Waits (at most a second) until no IPv6 address on an up link is
    /// tentative. Addresses on down links stay tentative until the link
    /// comes up, so they are not waited for.
    fn settle(&self) -> Result<(), String> {
        for _ in 0..100 {
            let shown = ip(
                &["-n", &self.name, "-6", "addr", "show", "tentative", "up"],
                "",
            )?;
            if shown.stdout.trim().is_empty() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        eprintln!(
            "kernel_diff: {}: IPv6 addresses still tentative after 1 s",
            self.name
        );
        Ok(())
    }

    /// Runs `ip -n NS ARGS...` (a `show` command) and returns its
    /// standard output; a non-zero exit is an error.
    #[allow(dead_code)] // accept_refuse.rs's, not kernel_diff.rs's
    pub fn show(&self, args: &[&str]) -> Result<String, String> {
        let mut all = vec!["-n", self.name.as_str()];
        all.extend(args);
        let done = ip(&all, "")?;
        if done.code != Some(0) {
            return Err(format!("ip {}: {}", all.join(" "), done.stderr.trim()));
        }
        Ok(done.stdout)
    }

    /// Asks every query (`route get` arguments) in one `ip` process.
    pub fn ask(&self, queries: &[String]) -> Result<Vec<KernelReply>, String> {
        ask_in(&self.name, queries)
    }
}

/// Asks every query (`route get` arguments, each also as `fibmatch`) in
/// one `ip -n NAMESPACE -j -force -batch` process, so that all see the
/// same state; the replies are in the queries' order.
pub fn ask_in(namespace: &str, queries: &[String]) -> Result<Vec<KernelReply>, String> {
    let mut batch = String::new();
    for query in queries {
        batch.push_str(&format!("route get {query}\nroute get fibmatch {query}\n"));
    }
    let done = ip(&["-n", namespace, "-j", "-force", "-batch", "-"], &batch)?;
    let outcomes = answer::parse_batch(&done.stdout, &done.stderr, queries.len() * 2)?;
    let mut pairs = outcomes.into_iter();
    let mut replies = Vec::with_capacity(queries.len());
    while let (Some(answer), Some(route)) = (pairs.next(), pairs.next()) {
        replies.push(KernelReply { answer, route });
    }
    Ok(replies)
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Nothing else can be done about a failed delete while unwinding; say it.
        match ip(&["netns", "del", &self.name], "") {
            Ok(done) if done.code == Some(0) => {}
            Ok(done) => eprintln!(
                "kernel_diff: ip netns del {}: {}",
                self.name,
                done.stderr.trim()
            ),
            Err(e) => eprintln!("kernel_diff: ip netns del {}: {e}", self.name),
        }
    }
}

/// `ifb` if this kernel can make one, else `dummy`: found once per
/// process by trying in a namespace of its own (a probe link made in a
/// case's namespace would shift that case's interface indexes).
pub fn stand_in_kind() -> Result<&'static str, String> {
    STAND_IN_KIND
        .get_or_init(|| {
            let probe = Netns::create()?;
            let mut why = Vec::new();
            for kind in STAND_IN_KINDS {
                let made = ip(
                    &["-n", &probe.name, "link", "add", "fdprobe", "type", kind],
                    "",
                )?;
                if made.code == Some(0) {
                    return Ok(kind);
                }
                why.push(format!("{kind}: {}", made.stderr.trim()));
            }
            Err(format!(
                "this kernel makes neither ifb nor dummy links ({})",
                why.join("; ")
            ))
        })
        .clone()
}

/// The MAC fibre's model gives the link with this ifindex: `02:fb` and
/// the index in four bytes, big-endian (`fibre-fib/src/write/links.rs`).
pub fn model_mac(index: u32) -> String {
    let b = index.to_be_bytes();
    format!("02:fb:{:02x}:{:02x}:{:02x}:{:02x}", b[0], b[1], b[2], b[3])
}

/// A `link add` line with the model's MACs for the links it makes, given
/// the highest interface index so far: a link gets the next index, a veth's
/// peer (registered first) the next and the veth itself the one after.
/// ifb and veth MACs are random otherwise, and with them the IPv6
/// link-local addresses; a line that names its own `address` is left alone.
pub fn with_model_macs(line: &str, highest: u32) -> String {
    let names = links_added_by(line);
    // A "name" that is one of `ip link add`'s keywords means the line is
    // malformed: inserting an address there would change what ip says.
    let keyword = |name: &String| {
        matches!(
            name.as_str(),
            "type" | "up" | "down" | "mtu" | "name" | "dev" | "peer" | "address"
        )
    };
    if names.is_empty()
        || names.iter().any(keyword)
        || line.split_whitespace().any(|w| w == "address")
    {
        return line.to_string();
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    let name_at = words
        .iter()
        .position(|w| *w == names[0])
        .expect("the name is a word");
    // A veth without `peer`: the kernel names the peer itself (vethN)
    // and registers it first, so it takes the next index.
    let unnamed_peer = words.windows(2).any(|w| w == ["type", "veth"]) && names.len() == 1;
    let (own, peer) = if names.len() > 1 {
        (highest + 2, Some(highest + 1))
    } else if unnamed_peer {
        (highest + 2, None)
    } else {
        (highest + 1, None)
    };
    let mut out: Vec<String> = Vec::with_capacity(words.len() + 4);
    for (i, word) in words.iter().enumerate() {
        out.push((*word).to_string());
        if i == name_at {
            out.push(format!("address {}", model_mac(own)));
        }
    }
    if let (Some(peer_index), Some(peer_name)) = (peer, names.get(1)) {
        if let Some(at) = out.iter().rposition(|w| w == peer_name) {
            out.insert(at + 1, format!("address {}", model_mac(peer_index)));
        }
    }
    out.join(" ")
}

/// The links a `link add` line makes: its name and, for a veth, the
/// peer's (`link add [name|dev] NAME ... peer [name] PEER`).
pub fn links_added_by(line: &str) -> Vec<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.len() < 3 || words[0] != "link" || words[1] != "add" {
        return Vec::new();
    }
    let mut names = Vec::new();
    let mut i = 2;
    if matches!(words[i], "name" | "dev") && i + 1 < words.len() {
        i += 1;
    }
    names.push(words[i].to_string());
    if let Some(p) = words.iter().position(|w| *w == "peer") {
        let mut j = p + 1;
        if words.get(j) == Some(&"name") {
            j += 1;
        }
        if let Some(peer) = words.get(j) {
            names.push((*peer).to_string());
        }
    }
    names
}

/// True when `line` (without its family flag) is an `ip link` command,
/// its object word spelt in full or abbreviated: one that may make links.
pub fn may_add_links(line: &str) -> bool {
    line.split_whitespace()
        .next()
        .is_some_and(|object| "link".starts_with(object))
}

/// Consecutive configuration lines that share a family flag.
#[derive(Debug, PartialEq, Eq)]
pub struct FamilyRun {
    /// `-4`, `-6`, or none.
    pub flag: Option<&'static str>,
    /// 1-based number of the run's first line in the configuration.
    pub first_line: usize,
    /// The lines without the flag (and with `dummy` mapped to `ifb`).
    pub lines: Vec<String>,
    /// The run follows a block of `addr` lines: let IPv6 addresses finish
    /// their (skipped) DAD first.
    pub settle_first: bool,
}

/// Splits a configuration into runs `ip -batch` can take (links of the
/// kinds in [`STAND_IN_KINDS`] made as `kind`): a new run at
/// each change of family flag, after each `link add`, and after each block
/// of `addr` lines.
///
/// The second split is for IPv6: a new address stays tentative until the
/// kernel's DAD work runs, even when DAD is skipped, so a `route add ...
/// src ADDR` in the same batch is refused ("Invalid source address") or not
/// depending on timing. Settling between the blocks makes the kernel treat
/// addresses as usable at once, which a model can reproduce.
pub fn family_runs(config: &[String], kind: &'static str) -> Vec<FamilyRun> {
    let mut runs: Vec<FamilyRun> = Vec::new();
    let mut after_addr = false;
    let mut after_link_add = false;
    for (index, raw) in config.iter().enumerate() {
        let (flag, rest) = family_flag(raw);
        let line = kernel_spelling(rest, kind);
        let is_addr = line.split_whitespace().next() == Some("addr");
        let settle_first = after_addr && !is_addr;
        after_addr = is_addr;
        // A `link add` ends its run, so the new links get their MAC before
        // any later line can bring them up.
        let split = settle_first || after_link_add;
        after_link_add = !links_added_by(&line).is_empty();
        match runs.last_mut() {
            Some(run) if run.flag == flag && !split => run.lines.push(line),
            _ => runs.push(FamilyRun {
                flag,
                first_line: index + 1,
                lines: vec![line],
                settle_first,
            }),
        }
    }
    runs
}

/// A configuration line's family flag (`-4`, `-6` or none), and the line
/// without it, trimmed.
pub fn family_flag(raw: &str) -> (Option<&'static str>, &str) {
    let trimmed = raw.trim();
    if let Some(rest) = trimmed.strip_prefix("-4 ") {
        (Some("-4"), rest)
    } else if let Some(rest) = trimmed.strip_prefix("-6 ") {
        (Some("-6"), rest)
    } else {
        (None, trimmed)
    }
}

/// A line as this kernel can take it: `type dummy` and `type ifb` links
/// become `type KIND`.
pub fn kernel_spelling(line: &str, kind: &'static str) -> String {
    let words: Vec<&str> = line.split_whitespace().collect();
    // `ip link add` however abbreviated (`l a`, `li add`): iproute2's
    // matches() reads any prefix of "link" and of "add".
    let abbreviates = |word: Option<&&str>, full: &str| word.is_some_and(|w| full.starts_with(*w));
    if abbreviates(words.first(), "link") && abbreviates(words.get(1), "add") {
        let mapped: Vec<&str> = words
            .iter()
            .enumerate()
            .map(|(i, w)| {
                // `ty` and `typ` abbreviate `type` (matches()); a bare `t`
                // may be another keyword, so it is left as written.
                let after_type = i > 0 && matches!(words[i - 1], "type" | "typ" | "ty");
                if STAND_IN_KINDS.contains(w) && after_type {
                    kind
                } else {
                    w
                }
            })
            .collect();
        return mapped.join(" ");
    }
    line.to_string()
}

/// Why namespaces cannot be made here, or `None` when they can.
pub fn unavailable_reason() -> Option<String> {
    stand_in_kind().err()
}

/// True when namespaces can be made here; otherwise says why `test`
/// cannot run and, under `FIBRE_REQUIRE_TOOLS=1` (CI), fails
/// ([`fibre_testkit::unavailable`]).
#[allow(dead_code)] // kernel_diff.rs's and accept_refuse.rs's, not pmtu_kernel.rs's
pub fn available(test: &str) -> bool {
    match unavailable_reason() {
        None => true,
        Some(reason) => {
            fibre_testkit::unavailable(
                test,
                &format!("no network namespace can be made here: {reason}"),
            );
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn runs_split_at_family_flags_and_keep_line_numbers() {
        let config = lines(
            "link add fd0 type dummy\nlink set fd0 up\n-4 rule add table main suppress_prefixlength 0\n-4 rule add not fwmark 51820 table 51820\n-6 rule add lookup 100\nroute add default dev fd0",
        );
        let runs = family_runs(&config, "ifb");
        assert_eq!(runs.len(), 5);
        assert_eq!(runs[0].flag, None);
        assert_eq!(runs[0].lines, vec!["link add fd0 type ifb"]);
        assert_eq!((runs[1].first_line, runs[1].lines.len()), (2, 1));
        assert_eq!(runs[2].flag, Some("-4"));
        assert_eq!(runs[2].first_line, 3);
        assert_eq!(runs[2].lines[1], "rule add not fwmark 51820 table 51820");
        assert_eq!((runs[3].flag, runs[3].first_line), (Some("-6"), 5));
        assert_eq!((runs[4].flag, runs[4].first_line), (None, 6));
        assert!(runs.iter().all(|r| !r.settle_first));
    }

    #[test]
    fn runs_split_after_each_block_of_addresses() {
        let config = lines(
            "link add fd0 type ifb\naddr add 2001:db8::1/64 dev fd0\naddr add 10.0.0.1/24 dev fd0\nroute add 2001:db8:9::/48 dev fd0 src 2001:db8::1\naddr add 10.0.1.1/24 dev fd0\n-4 rule add lookup 100",
        );
        let runs = family_runs(&config, "ifb");
        let shape: Vec<(usize, usize, bool)> = runs
            .iter()
            .map(|r| (r.first_line, r.lines.len(), r.settle_first))
            .collect();
        assert_eq!(
            shape,
            vec![(1, 1, false), (2, 2, false), (4, 2, true), (6, 1, true)]
        );
    }

    #[test]
    fn link_add_lines_name_their_links_and_macs_follow_the_model() {
        assert_eq!(links_added_by("link add fd0 type ifb"), vec!["fd0"]);
        assert_eq!(links_added_by("link add name fd1 type dummy"), vec!["fd1"]);
        assert_eq!(
            links_added_by("link add fdv0 type veth peer name fdv1"),
            vec!["fdv0", "fdv1"]
        );
        assert!(links_added_by("link set fd0 up").is_empty());
        assert!(links_added_by("addr add 10.0.0.1/24 dev fd0").is_empty());
        assert_eq!(model_mac(5), "02:fb:00:00:00:05");
        assert_eq!(
            with_model_macs("link add fd0 type ifb", 1),
            "link add fd0 address 02:fb:00:00:00:02 type ifb"
        );
        assert_eq!(
            with_model_macs("link add fdv0 type veth peer name fdv1", 2),
            "link add fdv0 address 02:fb:00:00:00:04 type veth peer name fdv1 address 02:fb:00:00:00:03"
        );
        assert_eq!(
            with_model_macs("link add fd0 address 02:00:00:00:00:01 type ifb", 1),
            "link add fd0 address 02:00:00:00:00:01 type ifb"
        );
        assert_eq!(with_model_macs("link set fd0 up", 1), "link set fd0 up");
        assert_eq!(
            with_model_macs("link add fdv0 type veth", 2),
            "link add fdv0 address 02:fb:00:00:00:04 type veth"
        );
        assert_eq!(
            with_model_macs("link add name type ifb", 2),
            "link add name type ifb"
        );
        assert_eq!(model_mac(0x0102_0304), "02:fb:01:02:03:04");
    }

    #[test]
    fn only_link_lines_may_add_links() {
        assert!(may_add_links("link add fd0 type ifb"));
        assert!(may_add_links("l a fd0 type ifb"));
        assert!(may_add_links("li add fdv0 type veth peer name fdv1"));
        assert!(!may_add_links("route add 10.0.0.0/8 dev fd0"));
        assert!(!may_add_links("links add fd0 type ifb"));
        assert!(!may_add_links(""));
    }

    #[test]
    fn only_link_types_are_mapped() {
        assert_eq!(
            kernel_spelling("link add dummy type dummy", "ifb"),
            "link add dummy type ifb"
        );
        assert_eq!(
            kernel_spelling("route add 10.0.0.0/8 dev dummy", "ifb"),
            "route add 10.0.0.0/8 dev dummy"
        );
        assert_eq!(
            kernel_spelling("link add fd0 type ifb", "dummy"),
            "link add fd0 type dummy"
        );
        assert_eq!(
            kernel_spelling("l a fd0 type dummy", "ifb"),
            "l a fd0 type ifb"
        );
        assert_eq!(
            kernel_spelling("link add fd0 ty dummy", "ifb"),
            "link add fd0 ty ifb"
        );
        assert_eq!(
            kernel_spelling("links add fd0 type dummy", "ifb"),
            "links add fd0 type dummy"
        );
    }
}
