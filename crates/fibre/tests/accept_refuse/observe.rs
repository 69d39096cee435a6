//! One configuration on both sides, and what differs.
//!
//! The kernel side loads the configuration into a fresh namespace
//! `fibre-accept-<pid>-<n>` (see `session.rs`: kernel_diff's loader's
//! semantics, `ip -force -batch`, a marker after each line, model MACs,
//! IPv6 settling, in a few long-lived `ip` processes), then runs the
//! [`SHOWS`] and asks the queries. The fibre side runs
//! `fibre --config FILE --force` with the same shows and `fibre lookup`
//! with the same queries. Compared: each line's verdict (accepted, or
//! refused with fibre's message containing ip's), the shows' text, and
//! each `route get` answer (kernel_diff's comparison).

use std::process::Command;
use std::time::Duration;

use super::answer::Outcome;
use super::compare;
use super::fibre_cli::{self, TempConfig};
use super::kernel::{KernelReply, Refusal};
use super::process;
use super::session::Session;

/// The state compared after a configuration: `ip` arguments, the same
/// for `fibre`.
pub const SHOWS: [&[&str]; 4] = [
    &["-4", "route", "show", "table", "all"],
    &["-6", "route", "show", "table", "all"],
    &["-4", "rule", "show"],
    &["-6", "rule", "show"],
];

/// Limit for one `fibre` process.
const FIBRE_LIMIT: Duration = Duration::from_secs(60);

/// What both sides made of one configuration.
#[derive(Debug, Clone)]
pub struct Observed {
    /// Lines the kernel refused.
    pub kernel_refusals: Vec<Refusal>,
    /// Lines fibre refused.
    pub fibre_refusals: Vec<Refusal>,
    /// `ip SHOWS[i]`'s output.
    pub kernel_shows: Vec<String>,
    /// `fibre --config FILE --force SHOWS[i]`'s output.
    pub fibre_shows: Vec<String>,
    /// The kernel's reply to each query.
    pub kernel_replies: Vec<KernelReply>,
    /// fibre's answer to each query, and its `fibmatch` answer.
    pub fibre_answers: Vec<(Outcome, Outcome)>,
}

/// Why a configuration could not be observed.
#[derive(Debug, Clone)]
pub enum Failure {
    /// The kernel side (namespace, `ip`) failed: the harness's problem.
    Kernel(String),
    /// fibre failed (crashed, exited badly, printed nonsense): a finding.
    Fibre(String),
}

/// Runs `config` on both sides, at once: the kernel's in a fresh
/// namespace ([`Session`]), fibre's in its own processes (`fibre lookup`
/// and one `fibre --config FILE --force` per show, all started together).
pub fn observe(config: &[String], queries: &[String]) -> Result<Observed, Failure> {
    let (kernel, fibre) = std::thread::scope(|scope| {
        let fibre = scope.spawn(|| observe_fibre(config, queries));
        (observe_kernel(config, queries), fibre.join())
    });
    let (kernel_refusals, kernel_shows, kernel_replies) = kernel.map_err(Failure::Kernel)?;
    let (fibre_refusals, fibre_shows, fibre_answers) = fibre
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        .map_err(Failure::Fibre)?;
    Ok(Observed {
        kernel_refusals,
        fibre_refusals,
        kernel_shows,
        fibre_shows,
        kernel_replies,
        fibre_answers,
    })
}

type KernelSide = (Vec<Refusal>, Vec<String>, Vec<KernelReply>);
type FibreSide = (Vec<Refusal>, Vec<String>, Vec<(Outcome, Outcome)>);

fn observe_kernel(config: &[String], queries: &[String]) -> Result<KernelSide, String> {
    // Shows are compared with link-local addresses blanked: a MAC the
    // model did not predict is no reason to stop.
    let mut session = Session::create()?;
    let refusals = session.load(config)?;
    let shows = session.shows(&SHOWS)?;
    let replies = session.ask(queries)?;
    Ok((refusals, shows, replies))
}

fn observe_fibre(config: &[String], queries: &[String]) -> Result<FibreSide, String> {
    let file = TempConfig::write(config)?;
    std::thread::scope(|scope| {
        let shows: Vec<_> = SHOWS
            .iter()
            .map(|args| scope.spawn(|| fibre_show(&file, args)))
            .collect();
        let looked_up = fibre_cli::lookup(config, queries)?;
        let shows = shows
            .into_iter()
            .map(|show| show.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect::<Result<Vec<_>, _>>()?;
        let answers = looked_up
            .outcomes
            .into_iter()
            .zip(looked_up.routes)
            .collect();
        Ok((looked_up.refusals, shows, answers))
    })
}

fn fibre_show(file: &TempConfig, args: &[&str]) -> Result<String, String> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fibre"));
    command
        .arg("--config")
        .arg(&file.path)
        .arg("--force")
        .args(args);
    let done = process::run(command, "", FIBRE_LIMIT)?;
    if done.code != Some(0) {
        return Err(format!(
            "fibre --force {} exited with {:?}: {}",
            args.join(" "),
            done.code,
            done.stderr.trim()
        ));
    }
    Ok(done.stdout)
}

/// ip's refusal text as compared: blanks collapsed, and of a usage text
/// (iproute2 prints a kind's whole usage on an unknown option) only the
/// head up to its first `]`, which names the kind and its first option.
pub fn comparable_message(message: &str) -> String {
    let mut collapsed = message.split_whitespace().collect::<Vec<_>>().join(" ");
    // Warnings ip prints before its error, for this line or for an
    // accepted one before it (stderr holds both), are not the refusal:
    // `Warning: nodad option can be set only for IPv6 addresses`, `...
    // tentative option is not mutable from userspace`, `... Executing
    // wildcard deletion ... fix your scripts!` (iproute2's ipaddress.c).
    while let Some(rest) = collapsed.strip_prefix("Warning: ") {
        let end = ["addresses", "userspace", "fix your scripts!"]
            .iter()
            .filter_map(|tail| rest.find(tail).map(|at| at + tail.len()))
            .min();
        match end {
            Some(end) => collapsed = super::answer::normalise_error(&rest[end..]),
            None => break,
        }
    }
    if collapsed.starts_with("Usage:") {
        if let Some(end) = collapsed.find(']') {
            return collapsed[..=end].to_string();
        }
    }
    // A refusal followed by the kind's usage (`vxlan: unknown command
    // "x"?` then vxlan's usage, from `vxlan_parse_opt`): the refusal.
    if let Some(at) = collapsed.find(" Usage: ") {
        collapsed.truncate(at);
    }
    collapsed
}

/// One line both sides judged differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerdictDifference {
    /// 1-based line of the configuration.
    pub line: usize,
    /// ip's message; `None`: accepted.
    pub kernel: Option<String>,
    /// fibre's message; `None`: accepted.
    pub fibre: Option<String>,
}

/// The lines refused by one side only, or by fibre without ip's message.
pub fn verdict_differences(kernel: &[Refusal], fibre: &[Refusal]) -> Vec<VerdictDifference> {
    let mut lines: Vec<usize> = kernel.iter().chain(fibre).map(|r| r.line).collect();
    lines.sort_unstable();
    lines.dedup();
    let find = |refusals: &[Refusal], line: usize| {
        refusals
            .iter()
            .find(|r| r.line == line)
            .map(|r| r.message.clone())
    };
    lines
        .into_iter()
        .filter_map(|line| {
            let (k, f) = (find(kernel, line), find(fibre, line));
            let agree = match (&k, &f) {
                (Some(k), Some(f)) => {
                    let k = comparable_message(k);
                    // ip's usage head (after its warnings) inside fibre's
                    // message, whose own text before a ` Usage: ` is not a
                    // refusal followed by a kind's usage but ip's warnings
                    // quoted: `... (Warning: ... addresses Usage: ip address ...`.
                    comparable_message(f).contains(&k)
                        || (k.starts_with("Usage:")
                            && f.split_whitespace()
                                .collect::<Vec<_>>()
                                .join(" ")
                                .contains(&k))
                }
                (None, None) => true,
                _ => false,
            };
            (!agree).then_some(VerdictDifference {
                line,
                kernel: k,
                fibre: f,
            })
        })
        .collect()
}

/// A show's output as compared: trailing blanks dropped, and IPv6
/// link-local addresses (derived from MACs, which lines that abbreviate
/// `link add` leave random) written `fe80::LL`.
pub fn comparable_show(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| {
            line.split(' ')
                .map(|word| {
                    if word.starts_with("fe80::") && !word.contains('/') && word != "fe80::" {
                        "fe80::LL"
                    } else {
                        word
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
                .trim_end()
                .to_string()
        })
        .filter(|l| !l.is_empty())
        .collect()
}

/// One piece of state that differs after a configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDifference {
    /// What was asked: `-4 route show table all`, or `route get QUERY`.
    pub what: String,
    /// The kernel's side (the lines only it has, or its answer).
    pub kernel: String,
    /// fibre's side.
    pub fibre: String,
}

/// The shows and answers that differ.
pub fn state_differences(
    config: &[String],
    queries: &[String],
    observed: &Observed,
) -> Vec<StateDifference> {
    let mut differences = Vec::new();
    for (i, args) in SHOWS.iter().enumerate() {
        let kernel = comparable_show(&observed.kernel_shows[i]);
        let fibre = comparable_show(&observed.fibre_shows[i]);
        if kernel == fibre {
            continue;
        }
        let only = |a: &[String], b: &[String]| -> Vec<String> {
            a.iter().filter(|l| !b.contains(l)).cloned().collect()
        };
        let (k_only, f_only) = (only(&kernel, &fibre), only(&fibre, &kernel));
        let what = args.join(" ");
        if k_only.is_empty() && f_only.is_empty() {
            // The kernel inserts the link-local prefix routes of a veth
            // pair in the order its carrier events run: IPv6 routes of
            // one prefix come in either order, run to run.
            if args[0] == "-6" && args[1] == "route" {
                continue;
            }
            differences.push(StateDifference {
                what: format!("{what} (order)"),
                kernel: kernel.join(" | "),
                fibre: fibre.join(" | "),
            });
        } else {
            differences.push(StateDifference {
                what,
                kernel: k_only.join(" | "),
                fibre: f_only.join(" | "),
            });
        }
    }
    let refused: Vec<usize> = observed.kernel_refusals.iter().map(|r| r.line).collect();
    let locals = compare::local_addresses(config, &refused);
    for ((query, kernel), (fibre, fibre_route)) in queries
        .iter()
        .zip(&observed.kernel_replies)
        .zip(&observed.fibre_answers)
    {
        let mut verdict = compare::compare(kernel, fibre, false, &locals);
        verdict
            .fields
            .extend(compare::compare_fibmatch(&kernel.route, fibre_route));
        if !verdict.agrees() {
            differences.push(StateDifference {
                what: format!("route get {query} ({})", verdict.fields.join("+")),
                kernel: format!(
                    "{} / fibmatch {}",
                    kernel.answer.render(),
                    kernel.route.render()
                ),
                fibre: format!("{} / fibmatch {}", fibre.render(), fibre_route.render()),
            });
        }
    }
    differences
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(line: usize, message: &str) -> Refusal {
        Refusal {
            line,
            message: message.into(),
        }
    }

    #[test]
    fn verdicts_agree_when_fibre_says_what_ip_says() {
        let kernel = [
            refusal(2, "argument \"x\" is wrong: \"metric\" value is invalid"),
            refusal(3, "File exists"),
            refusal(
                4,
                "Usage: ... gre      \t[ remote ADDR ] \t\t\t[ local ADDR ] Where: ...",
            ),
        ];
        let fibre = [
            refusal(2, "\"metric\": expected a number, got \"x\" (Error: argument \"x\" is wrong: \"metric\" value is invalid)"),
            refusal(3, "No such process"),
            refusal(4, "\"gre\": expected a GRE option, got \"x\" (Usage: ... gre [ remote ADDR ] [ local ADDR ] ... (ip link help gre))"),
            refusal(5, "\"tab\": expected a prefix"),
        ];
        let differences = verdict_differences(&kernel, &fibre);
        let lines: Vec<usize> = differences.iter().map(|d| d.line).collect();
        assert_eq!(lines, vec![3, 5]);
        assert_eq!(differences[1].kernel, None);
        assert!(verdict_differences(&kernel, &kernel).is_empty());
        let usage_after_a_warning = [refusal(
            2,
            "Warning: mngtmpaddr option can be set only for IPv6 addresses Usage: ip address {add|change|replace} IFADDR dev IFNAME [ LIFETIME ]",
        )];
        let quoted = [refusal(2, "\"addr\": expected an address, not help, got \"h\" (Warning: mngtmpaddr option can be set only for IPv6 addresses Usage: ip address {add|change|replace} IFADDR dev IFNAME [ LIFETIME ]\n [ CONFFLAG-LIST ])")];
        assert!(verdict_differences(&usage_after_a_warning, &quoted).is_empty());
        let other_usage = [refusal(2, "\"addr\": expected an address (Warning: mngtmpaddr option can be set only for IPv6 addresses Usage: ip link add [ name ] NAME)")];
        assert_eq!(
            verdict_differences(&usage_after_a_warning, &other_usage).len(),
            1
        );
        assert_eq!(
            comparable_message("Warning: nodad option can be set only for IPv6 addresses Error: inet address is expected rather than \"x\"."),
            "inet address is expected rather than \"x\""
        );
        assert_eq!(
            comparable_message("Warning: tentative option is not mutable from userspace Warning: Executing wildcard deletion to stay compatible with old scripts.\n  Explicitly specify the prefix length (10.1.0.1/32) to avoid this warning.\n  This special behaviour is likely to disappear in further releases,\n  fix your scripts! Cannot find device \"x\""),
            "Cannot find device \"x\""
        );
        assert_eq!(verdict_differences(&kernel[..1], &[]).len(), 1);
        // Of a refusal followed by a usage text, the refusal.
        assert_eq!(
            comparable_message("vxlan: unknown command \"up\"? Usage: ... vxlan id VNI \t\t[ { group | remote } IP_ADDRESS ]"),
            "vxlan: unknown command \"up\"?"
        );
    }

    #[test]
    fn shows_compare_without_trailing_blanks_and_link_local_hosts() {
        let kernel = "10.1.0.0/24 dev fd0 proto kernel scope link src 10.1.0.1 \nlocal fe80::284b:35ff:fe8c:f9c5 dev fd0 table local proto kernel metric 0 pref medium\nfe80::/64 dev fd0 proto kernel metric 256 pref medium\n";
        let fibre = "10.1.0.0/24 dev fd0 proto kernel scope link src 10.1.0.1\nlocal fe80::fb:ff:fe00:2 dev fd0 table local proto kernel metric 0 pref medium\nfe80::/64 dev fd0 proto kernel metric 256 pref medium\n";
        assert_eq!(comparable_show(kernel), comparable_show(fibre));
        assert_ne!(
            comparable_show("anycast fe80:: dev fd0 table local"),
            comparable_show("anycast fe80::1 dev fd0 table local")
        );
    }
}
