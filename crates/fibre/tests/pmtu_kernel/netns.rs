//! One network namespace of the PMTU test, `fibre-pmtu-<pid>-<role>`,
//! deleted on drop (also when the test panics), and the bounded `ip`
//! commands run in it.

use std::process::Command;
use std::time::Duration;

use super::process::{self, Finished};

/// Limit for one `ip` process: they answer in milliseconds, so reaching it
/// means something hangs.
pub const IP_LIMIT: Duration = Duration::from_secs(10);

/// Set in every namespace before any link exists, so that every link
/// inherits them. Forwarding is on everywhere because fibre's model is a
/// router (`fibre-fib/src/write/links.rs`): host A must be one too for its
/// answers to be comparable. DAD is off so that IPv6 addresses work at
/// once, and rp_filter off as in kernel_diff's namespaces.
const SYSCTLS: &[(&str, &str)] = &[
    ("net/ipv4/ip_forward", "1"),
    ("net/ipv4/conf/all/rp_filter", "0"),
    ("net/ipv4/conf/default/rp_filter", "0"),
    ("net/ipv6/conf/all/forwarding", "1"),
    ("net/ipv6/conf/default/forwarding", "1"),
    ("net/ipv6/conf/all/accept_dad", "0"),
    ("net/ipv6/conf/default/accept_dad", "0"),
];

/// A network namespace made by this test.
#[derive(Debug)]
pub struct Namespace {
    name: String,
}

/// Runs `ip ARGS` with `input` on stdin, bounded by [`IP_LIMIT`].
pub fn ip(args: &[&str], input: &str) -> Result<Finished, String> {
    let mut command = Command::new("ip");
    command.args(args);
    process::run(command, input, IP_LIMIT)
}

/// `ip ARGS`, which must succeed; its stdout.
pub fn ip_ok(args: &[&str], input: &str) -> Result<String, String> {
    let done = ip(args, input)?;
    if done.code != Some(0) {
        return Err(format!(
            "ip {} exited with {:?}: {}",
            args.join(" "),
            done.code,
            done.stderr.trim()
        ));
    }
    Ok(done.stdout)
}

impl Namespace {
    /// Makes `fibre-pmtu-<pid>-<role>` and sets [`SYSCTLS`] in it.
    pub fn create(role: &str) -> Result<Namespace, String> {
        let name = format!("fibre-pmtu-{}-{role}", std::process::id());
        ip_ok(&["netns", "add", &name], "")?;
        let ns = Namespace { name };
        // One shell for all of them: `KEY=VALUE` arguments, the first failure ends it.
        let mut args = vec![
            "-c",
            r#"for kv; do echo "${kv#*=}" > "/proc/sys/${kv%%=*}" || exit 1; done"#,
            "sh",
        ];
        let settings: Vec<String> = SYSCTLS.iter().map(|(k, v)| format!("{k}={v}")).collect();
        args.extend(settings.iter().map(String::as_str));
        let set = ns.exec("sh", &args, IP_LIMIT)?;
        if set.code != Some(0) {
            return Err(format!("sysctls in {}: {}", ns.name, set.stderr.trim()));
        }
        Ok(ns)
    }

    /// The namespace's name, as `ip netns` knows it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `ip -n NAME ARGS`, which must succeed; its stdout.
    pub fn ip(&self, args: &[&str]) -> Result<String, String> {
        let mut all = vec!["-n", self.name.as_str()];
        all.extend_from_slice(args);
        ip_ok(&all, "")
    }

    /// Runs `lines` in one `ip -n NAME -batch -`; every line must succeed.
    pub fn batch(&self, lines: &[&str]) -> Result<(), String> {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        ip_ok(&["-n", &self.name, "-batch", "-"], &text)
            .map(drop)
            .map_err(|e| format!("{e}\nbatch in {}:\n{text}", self.name))
    }

    /// The command `ip netns exec NAME PROGRAM ARGS` (`ip` switches to
    /// the namespace and then becomes PROGRAM: same process id).
    pub fn command(&self, program: &str, args: &[&str]) -> Command {
        let mut command = Command::new("ip");
        command
            .args(["netns", "exec", &self.name, program])
            .args(args);
        command
    }

    /// Runs PROGRAM ARGS in the namespace, killed after `limit`.
    pub fn exec(&self, program: &str, args: &[&str], limit: Duration) -> Result<Finished, String> {
        process::run(self.command(program, args), "", limit)
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        // Nothing else can be done about a failed delete while unwinding; say it.
        if let Err(e) = ip_ok(&["netns", "del", &self.name], "") {
            eprintln!("pmtu_kernel: {e}");
        }
    }
}
