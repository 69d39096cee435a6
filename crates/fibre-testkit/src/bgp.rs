//! Two network namespaces, A and B, joined by a veth pair (`a0` 10.0.0.1/24
//! and 2001:db8::1/64 in A, `b0` 10.0.0.2/24 and 2001:db8::2/64 in B), and
//! a BIRD 2 in each: A announces static routes over BGP (IPv4 and IPv6
//! sessions), B imports them and exports them to B's kernel. What
//! `fibre follow`'s BIRD test and `fibre bench converge` share.
//!
//! Everything is bounded and cleaned up: each `ip` runs under
//! [`COMMAND_LIMIT`], the namespaces are deleted on drop, each BIRD is our
//! child, told `birdc down` and then killed by its pid on drop. All
//! traffic stays on the veth pair inside the namespaces.
//!
//! ```no_run
//! use fibre_testkit::bgp::{static_config, BgpPair};
//! let pair = BgpPair::create("doc").unwrap();
//! pair.start_b().unwrap();
//! pair.start_a(&static_config(&["10.100.0.0/24".into()], &[])).unwrap();
//! ```

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Limit for one `ip` or `birdc` process: they answer in milliseconds (a
/// dump of a full table in about a second), so reaching it means a hang.
pub const COMMAND_LIMIT: Duration = Duration::from_secs(30);

/// What a finished command printed.
#[derive(Debug)]
pub struct Finished {
    /// Exit code; `None` when killed by a signal.
    pub code: Option<i32>,
    /// Its stdout.
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
}

/// Runs `command` with no input, killed (by its pid) after `limit`.
pub fn run_bounded(mut command: Command, limit: Duration) -> Result<Finished, String> {
    let shown = format!("{command:?}");
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    let reader = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let out = reader(Box::new(child.stdout.take().expect("piped")));
    let err = reader(Box::new(child.stderr.take().expect("piped")));
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{shown} ran past {limit:?} and was killed"));
            }
            Err(e) => return Err(format!("{shown}: {e}")),
        }
    };
    Ok(Finished {
        code: status.code(),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

/// `ip ARGS`, which must succeed; its stdout.
pub fn ip_ok(args: &[&str]) -> Result<String, String> {
    let mut command = Command::new("ip");
    command.args(args);
    let done = run_bounded(command, COMMAND_LIMIT)?;
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

/// A network namespace `<prefix>-<pid>-<role>`, deleted on drop.
#[derive(Debug)]
pub struct Namespace {
    name: String,
}

impl Namespace {
    /// Makes the namespace (one left by an earlier run of the same pid is
    /// deleted first) and writes each `(key, value)` to `/proc/sys/<key>`
    /// in it, before any link exists so that every link inherits them.
    pub fn create(prefix: &str, role: &str, sysctls: &[(&str, &str)]) -> Result<Namespace, String> {
        let name = format!("{prefix}-{}-{role}", std::process::id());
        let _ = ip_ok(&["netns", "del", &name]);
        ip_ok(&["netns", "add", &name])?;
        let ns = Namespace { name };
        let mut script =
            String::from(r#"for kv; do echo "${kv#*=}" > "/proc/sys/${kv%%=*}" || exit 1; done"#);
        script.push('\n');
        let settings: Vec<String> = sysctls.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut args = vec!["-c", script.as_str(), "sh"];
        args.extend(settings.iter().map(String::as_str));
        let set = run_bounded(ns.command("sh", &args), COMMAND_LIMIT)?;
        if set.code != Some(0) {
            return Err(format!("sysctls in {}: {}", ns.name, set.stderr.trim()));
        }
        Ok(ns)
    }

    /// The name, as `ip netns` knows it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `ip -n NAME ARGS`, which must succeed; its stdout.
    pub fn ip(&self, args: &[&str]) -> Result<String, String> {
        let mut all = vec!["-n", self.name.as_str()];
        all.extend_from_slice(args);
        ip_ok(&all)
    }

    /// The command `ip netns exec NAME PROGRAM ARGS`.
    pub fn command(&self, program: &str, args: &[&str]) -> Command {
        let mut command = Command::new("ip");
        command
            .args(["netns", "exec", &self.name, program])
            .args(args);
        command
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        // Nothing else can be done about a failed delete while unwinding; say it.
        if let Err(e) = ip_ok(&["netns", "del", &self.name]) {
            eprintln!("{e}");
        }
    }
}

/// A BIRD in a namespace, our child; `birdc down`, then killed by pid, on drop.
#[derive(Debug)]
pub struct Bird {
    child: Child,
    socket: PathBuf,
    config: PathBuf,
}

impl Bird {
    /// Writes `config` to `DIR/NAME.conf` and starts `bird -f` on it in
    /// the namespace `netns` (a name `ip netns` knows).
    pub fn start(netns: &str, dir: &Path, name: &str, config: &str) -> Result<Bird, String> {
        let config_path = dir.join(format!("{name}.conf"));
        std::fs::write(&config_path, config)
            .map_err(|e| format!("cannot write {}: {e}", config_path.display()))?;
        let socket = dir.join(format!("{name}.ctl"));
        let (Some(config_arg), Some(socket_arg)) = (config_path.to_str(), socket.to_str()) else {
            return Err(format!("{} is not UTF-8", dir.display()));
        };
        let child = Command::new("ip")
            .args(["netns", "exec", netns, "bird", "-f", "-c", config_arg])
            .args(["-s", socket_arg])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start bird: {e}"))?;
        Ok(Bird {
            child,
            socket,
            config: config_path,
        })
    }

    /// `birdc -s SOCKET ARGS`, which must succeed (it also fails while the
    /// socket is not there yet).
    pub fn birdc(&self, args: &[&str]) -> Result<String, String> {
        let mut command = Command::new("birdc");
        command.arg("-s").arg(&self.socket).args(args);
        let done = run_bounded(command, COMMAND_LIMIT)?;
        if done.code != Some(0) {
            return Err(format!(
                "birdc {args:?}: {:?} {}",
                done.code,
                done.stderr.trim()
            ));
        }
        Ok(done.stdout)
    }

    /// Replaces the configuration and tells BIRD to read it again.
    pub fn reconfigure(&self, config: &str) -> Result<(), String> {
        std::fs::write(&self.config, config)
            .map_err(|e| format!("cannot write {}: {e}", self.config.display()))?;
        let answer = self.birdc(&["configure"])?;
        if answer.contains("rror") {
            return Err(format!("birdc configure: {}", answer.trim()));
        }
        Ok(())
    }
}

impl Drop for Bird {
    fn drop(&mut self) {
        let _ = self.birdc(&["down"]);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// BIRD A's configuration: static `blackhole` routes for `v4` and `v6`
/// (prefixes as text), exported over both sessions with A as next hop.
pub fn static_config(v4: &[String], v6: &[String]) -> String {
    let mut c =
        String::from("router id 10.0.0.1;\nprotocol device {}\nprotocol static s4 { ipv4;\n");
    for prefix in v4 {
        c.push_str(&format!("  route {prefix} blackhole;\n"));
    }
    c.push_str("}\nprotocol static s6 { ipv6;\n");
    for prefix in v6 {
        c.push_str(&format!("  route {prefix} blackhole;\n"));
    }
    c.push_str(
        "}
protocol bgp p4 { local 10.0.0.1 as 65001; neighbor 10.0.0.2 as 65002;
  ipv4 { import none; export all; next hop self; }; }
protocol bgp p6 { local 2001:db8::1 as 65001; neighbor 2001:db8::2 as 65002;
  ipv6 { import none; export all; next hop self; }; }
",
    );
    c
}

/// BIRD B's configuration: imports both sessions and exports everything
/// to B's kernel table.
pub const CONFIG_B: &str = "router id 10.0.0.2;
protocol device {}
protocol kernel k4 { ipv4 { import none; export all; }; }
protocol kernel k6 { ipv6 { import none; export all; }; }
protocol bgp p4 { local 10.0.0.2 as 65002; neighbor 10.0.0.1 as 65001;
  ipv4 { import all; export none; }; }
protocol bgp p6 { local 2001:db8::2 as 65002; neighbor 2001:db8::1 as 65001;
  ipv6 { import all; export none; }; }
";

/// Why the namespaces and BIRD cannot be used here, if they cannot: not
/// root, or `ip`, `bird` or `birdc` missing.
pub fn unavailable_reason() -> Option<String> {
    match crate::effective_uid() {
        Some(0) => {}
        Some(uid) => return Some(format!("not root (effective uid {uid})")),
        None => return Some("cannot read the effective uid".into()),
    }
    crate::missing_tool(&["ip", "bird", "birdc"])
}

/// Namespaces A and B joined by the veth pair, addressed, with a scratch
/// directory for the BIRD files; the BIRDs are started by the caller.
#[derive(Debug)]
pub struct BgpPair {
    /// A, where the announcing BIRD runs.
    pub a: Namespace,
    /// B, whose kernel the routes land in.
    pub b: Namespace,
    /// BIRD's configurations and sockets; removed on drop.
    pub dir: PathBuf,
}

impl BgpPair {
    /// Makes `<prefix>-<pid>-a` and `-b` with forwarding on and IPv6 DAD
    /// off (the BGP sessions start at once), and the veth pair.
    pub fn create(prefix: &str) -> Result<BgpPair, String> {
        let sysctls = [
            ("net/ipv4/ip_forward", "1"),
            ("net/ipv6/conf/all/forwarding", "1"),
            ("net/ipv6/conf/default/forwarding", "1"),
            ("net/ipv6/conf/all/accept_dad", "0"),
            ("net/ipv6/conf/default/accept_dad", "0"),
        ];
        let a = Namespace::create(prefix, "a", &sysctls)?;
        let b = Namespace::create(prefix, "b", &sysctls)?;
        a.ip(&[
            "link",
            "add",
            "a0",
            "type",
            "veth",
            "peer",
            "name",
            "b0",
            "netns",
            b.name(),
        ])?;
        for (ns, dev, v4, v6) in [
            (&a, "a0", "10.0.0.1/24", "2001:db8::1/64"),
            (&b, "b0", "10.0.0.2/24", "2001:db8::2/64"),
        ] {
            ns.ip(&["link", "set", "lo", "up"])?;
            ns.ip(&["link", "set", dev, "up"])?;
            ns.ip(&["addr", "add", v4, "dev", dev])?;
            ns.ip(&["-6", "addr", "add", v6, "dev", dev])?;
        }
        let dir = std::env::temp_dir().join(format!("fibre-{prefix}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        Ok(BgpPair { a, b, dir })
    }

    /// Starts BIRD B ([`CONFIG_B`]).
    pub fn start_b(&self) -> Result<Bird, String> {
        Bird::start(self.b.name(), &self.dir, "b", CONFIG_B)
    }

    /// Starts BIRD A on `config` (see [`static_config`]).
    pub fn start_a(&self, config: &str) -> Result<Bird, String> {
        Bird::start(self.a.name(), &self.dir, "a", config)
    }

    /// How many IPv4 (`-4`) or IPv6 (`-6`) routes of protocol bird B's
    /// kernel holds.
    pub fn kernel_bird_routes(&self, family: &str) -> Result<usize, String> {
        Ok(self
            .b
            .ip(&[family, "route", "show", "proto", "bird"])?
            .lines()
            .count())
    }
}

impl Drop for BgpPair {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
