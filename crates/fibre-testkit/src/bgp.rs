//! Two network namespaces, A and B, joined by a veth pair (`a0` 10.0.0.1/24
//! and 2001:db8::1/64 in A, `b0` 10.0.0.2/24 and 2001:db8::2/64 in B), and
//! a BIRD 2 in each: A announces static routes over BGP (IPv4 and IPv6
//! sessions), B imports them and exports them to B's kernel. What
//! `fibre follow`'s BIRD test and `fibre bench converge` share.
//!
//! Everything is bounded and cleaned up: each `ip` runs under
//! [`crate::netns::IP_LIMIT`], each `birdc` under [`BIRDC_LIMIT`], the
//! namespaces ([`Namespace`]) are deleted on drop, each BIRD is our
//! child, told `birdc down` and then killed by its pid on drop. All
//! traffic stays on the veth pair inside the namespaces.
//!
//! ```no_run
//! use fibre_testkit::bgp::{static_config, BgpPair};
//! let pair = BgpPair::create("doc").unwrap();
//! pair.start_b().unwrap();
//! pair.start_a(&static_config(&["10.100.0.0/24".into()], &[])).unwrap();
//! ```

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::netns::Namespace;
use crate::process;

/// Limit for one `birdc`: it answers in milliseconds (a dump of a full
/// table in about a second), so reaching it means a hang.
pub const BIRDC_LIMIT: Duration = Duration::from_secs(30);

/// A BIRD in a namespace, our child; `birdc down`, then killed by pid, on drop.
#[derive(Debug)]
pub struct Bird {
    child: Child,
    socket: PathBuf,
    config: PathBuf,
}

impl Bird {
    /// Writes `config` to `DIR/NAME.conf` and starts `bird -f` on it in
    /// the namespace `netns`.
    pub fn start(netns: &Namespace, dir: &Path, name: &str, config: &str) -> Result<Bird, String> {
        let config_path = dir.join(format!("{name}.conf"));
        std::fs::write(&config_path, config)
            .map_err(|e| format!("cannot write {}: {e}", config_path.display()))?;
        let socket = dir.join(format!("{name}.ctl"));
        let (Some(config_arg), Some(socket_arg)) = (config_path.to_str(), socket.to_str()) else {
            return Err(format!("{} is not UTF-8", dir.display()));
        };
        let child = netns
            .command("bird", &["-f", "-c", config_arg, "-s", socket_arg])
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
        let done = process::run(command, "", BIRDC_LIMIT)?;
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
        a.batch(&[
            "link set lo up",
            "link set a0 up",
            "addr add 10.0.0.1/24 dev a0",
            "-6 addr add 2001:db8::1/64 dev a0",
        ])?;
        b.batch(&[
            "link set lo up",
            "link set b0 up",
            "addr add 10.0.0.2/24 dev b0",
            "-6 addr add 2001:db8::2/64 dev b0",
        ])?;
        let dir = std::env::temp_dir().join(format!("fibre-{prefix}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        Ok(BgpPair { a, b, dir })
    }

    /// Starts BIRD B ([`CONFIG_B`]).
    pub fn start_b(&self) -> Result<Bird, String> {
        Bird::start(&self.b, &self.dir, "b", CONFIG_B)
    }

    /// Starts BIRD A on `config` (see [`static_config`]).
    pub fn start_a(&self, config: &str) -> Result<Bird, String> {
        Bird::start(&self.a, &self.dir, "a", config)
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
