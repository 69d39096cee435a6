//! A network namespace a test (or `fibre bench converge`) makes,
//! `<prefix>-<pid>-<role>`, with its sysctls set before any link exists
//! (so that every link inherits them), deleted on drop (also when the
//! test panics), and the bounded `ip` commands run in it.
//!
//! ```no_run
//! use fibre_testkit::netns::Namespace;
//! let ns = Namespace::create("doc", "a", &[("net/ipv4/ip_forward", "1")]).unwrap();
//! ns.batch(&["link set lo up", "-6 route add 2001:db8::/32 dev lo"]).unwrap();
//! assert!(ns.ip(&["route", "show"]).unwrap().is_empty());
//! // `ip netns del` when `ns` is dropped.
//! ```

use std::process::Command;
use std::time::Duration;

use crate::process::{self, Finished};

/// Limit for one `ip` process: they answer in milliseconds, so reaching it
/// means something hangs.
pub const IP_LIMIT: Duration = Duration::from_secs(20);

/// A network namespace made by a test.
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
    /// Makes `<prefix>-<pid>-<role>` and writes each `(key, value)` of
    /// `sysctls` to `/proc/sys/<key>` in it, in order.
    pub fn create(prefix: &str, role: &str, sysctls: &[(&str, &str)]) -> Result<Namespace, String> {
        let name = format!("{prefix}-{}-{role}", std::process::id());
        // One left by an earlier run with the same pid would make `add` fail.
        let _ = ip(&["netns", "del", &name], "");
        ip_ok(&["netns", "add", &name], "")?;
        let ns = Namespace { name };
        ns.set_sysctls(sysctls)?;
        Ok(ns)
    }

    /// Writes each `(key, value)` to `/proc/sys/<key>`, in one shell; the
    /// first failure ends it.
    pub fn set_sysctls(&self, sysctls: &[(&str, &str)]) -> Result<(), String> {
        let mut args = vec![
            "-c",
            r#"for kv; do echo "${kv#*=}" > "/proc/sys/${kv%%=*}" || exit 1; done"#,
            "sh",
        ];
        let settings: Vec<String> = sysctls.iter().map(|(k, v)| format!("{k}={v}")).collect();
        args.extend(settings.iter().map(String::as_str));
        let set = self.exec("sh", &args, IP_LIMIT)?;
        if set.code != Some(0) {
            return Err(format!("sysctls in {}: {}", self.name, set.stderr.trim()));
        }
        Ok(())
    }

    /// The namespace's name, as `ip netns` knows it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where the namespace's file is, for `setns(2)`.
    pub fn path(&self) -> String {
        format!("/run/netns/{}", self.name)
    }

    /// `ip -n NAME ARGS`, which must succeed; its stdout.
    pub fn ip(&self, args: &[&str]) -> Result<String, String> {
        let mut all = vec!["-n", self.name.as_str()];
        all.extend_from_slice(args);
        ip_ok(&all, "")
    }

    /// Runs `lines` in `ip -n NAME -batch -`; every line must succeed.
    /// A line may start with `-4` or `-6`, which `ip -batch` does not
    /// take: each run of lines with the same flag goes to one
    /// `ip [-4|-6] -batch`, in order.
    pub fn batch(&self, lines: &[impl AsRef<str>]) -> Result<(), String> {
        let mut runs: Vec<(&str, String)> = Vec::new();
        for line in lines {
            let line = line.as_ref();
            let (flag, rest) = match line.split_once(' ') {
                Some((f @ ("-4" | "-6"), rest)) => (f, rest),
                _ => ("", line),
            };
            match runs.last_mut() {
                Some((f, text)) if *f == flag => text.push_str(&format!("{rest}\n")),
                _ => runs.push((flag, format!("{rest}\n"))),
            }
        }
        for (flag, text) in runs {
            let mut args = vec!["-n", self.name.as_str()];
            if !flag.is_empty() {
                args.push(flag);
            }
            args.extend(["-batch", "-"]);
            ip_ok(&args, &text)
                .map(drop)
                .map_err(|e| format!("{e}\nbatch in {}:\n{text}", self.name))?;
        }
        Ok(())
    }

    /// The command `ip netns exec NAME PROGRAM ARGS`.
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
            eprintln!("{e}");
        }
    }
}
