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
/// between links, no reverse-path filter, and no IPv6 link-local addresses
/// (their EUI-64 comes from a random MAC no model can know) nor DAD.
const SYSCTLS: &[(&str, &str)] = &[
    ("net/ipv4/ip_forward", "1"),
    ("net/ipv4/conf/all/rp_filter", "0"),
    ("net/ipv4/conf/default/rp_filter", "0"),
    ("net/ipv4/conf/lo/rp_filter", "0"),
    ("net/ipv6/conf/all/forwarding", "1"),
    ("net/ipv6/conf/default/forwarding", "1"),
    ("net/ipv6/conf/default/addr_gen_mode", "1"),
    ("net/ipv6/conf/default/accept_dad", "0"),
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
        let name = format!(
            "fibre-diff-{}-{}",
            std::process::id(),
            NEXT_NAMESPACE.fetch_add(1, Ordering::Relaxed)
        );
        let made = ip(&["netns", "add", &name], "")?;
        if made.code != Some(0) {
            return Err(format!("ip netns add {name}: {}", made.stderr.trim()));
        }
        let ns = Netns { name };
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

    /// Loads a configuration; returns the lines the kernel refused.
    ///
    /// `ip -batch` takes no per-line `-4`/`-6`, so runs of consecutive lines
    /// with the same prefix go to one `ip [-4|-6] -force -batch -` each,
    /// which keeps the order of the lines. `type dummy` becomes `type ifb`
    /// (this kernel has no dummy module; both route alike).
    pub fn load(&self, config: &[String]) -> Result<Vec<Refusal>, String> {
        let kind = stand_in_kind()?;
        let mut refusals = Vec::new();
        for run in family_runs(config, kind) {
            if run.settle_first {
                self.settle()?;
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

    /// Asks every query (`route get` arguments) in one `ip` process.
    pub fn ask(&self, queries: &[String]) -> Result<Vec<KernelReply>, String> {
        let mut batch = String::new();
        for query in queries {
            batch.push_str(&format!("route get {query}\nroute get fibmatch {query}\n"));
        }
        let done = ip(&["-n", &self.name, "-j", "-force", "-batch", "-"], &batch)?;
        let outcomes = answer::parse_batch(&done.stdout, &done.stderr, queries.len() * 2)?;
        let mut pairs = outcomes.into_iter();
        let mut replies = Vec::with_capacity(queries.len());
        while let (Some(answer), Some(route)) = (pairs.next(), pairs.next()) {
            replies.push(KernelReply { answer, route });
        }
        Ok(replies)
    }
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
fn stand_in_kind() -> Result<&'static str, String> {
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
/// each change of family flag, and after each block of `addr` lines.
///
/// The second split is for IPv6: a new address stays tentative until the
/// kernel's DAD work runs, even when DAD is skipped, so a `route add ...
/// src ADDR` in the same batch is refused ("Invalid source address") or not
/// depending on timing. Settling between the blocks makes the kernel treat
/// addresses as usable at once, which a model can reproduce.
pub fn family_runs(config: &[String], kind: &'static str) -> Vec<FamilyRun> {
    let mut runs: Vec<FamilyRun> = Vec::new();
    let mut after_addr = false;
    for (index, raw) in config.iter().enumerate() {
        let trimmed = raw.trim();
        let (flag, rest) = if let Some(rest) = trimmed.strip_prefix("-4 ") {
            (Some("-4"), rest)
        } else if let Some(rest) = trimmed.strip_prefix("-6 ") {
            (Some("-6"), rest)
        } else {
            (None, trimmed)
        };
        let line = kernel_spelling(rest, kind);
        let is_addr = line.split_whitespace().next() == Some("addr");
        let settle_first = after_addr && !is_addr;
        after_addr = is_addr;
        match runs.last_mut() {
            Some(run) if run.flag == flag && !settle_first => run.lines.push(line),
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

/// A line as this kernel can take it: `type dummy` and `type ifb` links
/// become `type KIND`.
fn kernel_spelling(line: &str, kind: &'static str) -> String {
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.first() == Some(&"link") && words.get(1) == Some(&"add") {
        let mapped: Vec<&str> = words
            .iter()
            .enumerate()
            .map(|(i, w)| {
                if STAND_IN_KINDS.contains(w) && i > 0 && words[i - 1] == "type" {
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
        assert_eq!(runs.len(), 4);
        assert_eq!(runs[0].flag, None);
        assert_eq!(
            runs[0].lines,
            vec!["link add fd0 type ifb", "link set fd0 up"]
        );
        assert_eq!(runs[1].flag, Some("-4"));
        assert_eq!(runs[1].first_line, 3);
        assert_eq!(runs[1].lines[1], "rule add not fwmark 51820 table 51820");
        assert_eq!((runs[2].flag, runs[2].first_line), (Some("-6"), 5));
        assert_eq!((runs[3].flag, runs[3].first_line), (None, 6));
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
        assert_eq!(shape, vec![(1, 3, false), (4, 2, true), (6, 1, true)]);
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
    }
}
