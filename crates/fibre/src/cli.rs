//! The command line's shape (clap): global options and subcommands.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// fibre: a routing subsystem with the Linux kernel's semantics, spoken in
/// iproute2's words.
#[derive(Debug, Parser)]
#[command(name = "fibre", version, about)]
pub struct Cli {
    /// Print JSON as `ip -j` does.
    #[arg(short = 'j', long = "json", global = true)]
    pub json: bool,
    /// IPv4 (the default for show and rules).
    #[arg(short = '4', global = true, conflicts_with = "ipv6")]
    pub ipv4: bool,
    /// IPv6.
    #[arg(short = '6', global = true)]
    pub ipv6: bool,
    /// Statistics, as `ip -s` (link show).
    #[arg(short = 's', long = "stats", global = true)]
    pub stats: bool,
    /// Details: each link kind's options, as `ip -d` (link show).
    #[arg(short = 'd', long = "details", global = true)]
    pub details: bool,
    /// Load this ip -batch configuration first (all or nothing).
    #[arg(long = "config", global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// With --config: report and skip bad lines, apply the rest (`ip -force`; also `-force`).
    #[arg(long = "force", global = true)]
    pub force: bool,
    /// ICMP errors the router received (a pcap capture): fragmentation-needed and
    /// packet-too-big become path MTU exceptions, shown by `route get` and `route show cache`.
    #[arg(long = "icmp", global = true, value_name = "PCAP")]
    pub icmp: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Routes: get, show, import.
    #[command(visible_alias = "r", visible_alias = "ro")]
    Route {
        /// What to do with routes.
        #[command(subcommand)]
        action: RouteAction,
    },
    /// Policy rules.
    #[command(visible_alias = "ru")]
    Rule {
        /// What to do with rules.
        #[command(subcommand)]
        action: ShowOnly,
    },
    /// Devices.
    #[command(visible_alias = "l")]
    Link {
        /// What to do with links.
        #[command(subcommand)]
        action: DeviceShow,
    },
    /// Addresses.
    #[command(visible_alias = "a", visible_alias = "address")]
    Addr {
        /// What to do with addresses.
        #[command(subcommand)]
        action: DeviceShow,
    },
    /// Neighbours (ARP and IPv6 neighbour discovery).
    #[command(
        visible_alias = "n",
        visible_alias = "neighbor",
        visible_alias = "neighbour"
    )]
    Neigh {
        /// What to do with neighbours.
        #[command(subcommand)]
        action: NeighAction,
    },
    /// Answer `route get` queries read from stdin, one answer line each.
    Lookup,
    /// Run the experiments.
    Bench(crate::bench::BenchArgs),
    /// Forward on Linux interfaces: each `--port NAME` backs the link NAME
    /// of the configuration with the interface NAME (AF_PACKET), with
    /// `--workers N` pinned workers and a control socket for `fibre ctl`.
    Serve(crate::serve::ServeArgs),
    /// Send configuration lines and queries to a running `fibre serve`
    /// over its control socket (`fibre ctl 'route replace ...' 'neigh show'`).
    Ctl(crate::ctl::CtlArgs),
    /// Follow a network namespace's routing state through rtnetlink.
    Follow(crate::follow::FollowArgs),
    /// Print a followed namespace's route and rule changes as `ip monitor`.
    Monitor(crate::monitor::MonitorArgs),
}

/// `route` subcommands.
#[derive(Debug, Subcommand)]
pub enum RouteAction {
    /// `ip route get` (ADDR [from SRC] [iif DEV] [oif DEV] [mark N] [tos T] [fibmatch] ...).
    #[command(visible_alias = "g")]
    Get {
        /// The query, in `ip route get`'s words.
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        words: Vec<String>,
    },
    /// `ip route show` ([table T|all] [type T] | cache).
    #[command(visible_alias = "list", visible_alias = "ls", visible_alias = "s")]
    Show {
        /// The selector, in `ip route show`'s words.
        #[arg(trailing_var_arg = true)]
        words: Vec<String>,
    },
    /// Load a prefix list (plain or gzip), next hops assigned by hash.
    Import(ImportArgs),
    /// Print a followed namespace's route changes as `ip monitor route`.
    Monitor(crate::monitor::MonitorArgs),
}

/// `fibre route import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Table to fill.
    #[arg(long = "table", default_value = "main")]
    pub table: String,
    /// How many gateways to spread the prefixes over.
    #[arg(long = "nexthops", default_value_t = 4)]
    pub nexthops: u16,
    /// The prefix list, one prefix per line; gzip is detected by its magic number.
    pub file: PathBuf,
    /// A fibre command to run on the imported FIB (e.g. `route get 1.2.3.4`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub then: Vec<String>,
}

/// `neigh` subcommands.
#[derive(Debug, Subcommand)]
pub enum NeighAction {
    /// `ip neigh show` ([dev DEV] [nud STATE|all] [[to] PREFIX]).
    #[command(visible_alias = "list", visible_alias = "ls", visible_alias = "s")]
    Show {
        /// The selector, in `ip neigh show`'s words.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        words: Vec<String>,
    },
}

/// Objects that can only be shown.
#[derive(Debug, Subcommand)]
pub enum ShowOnly {
    /// Show them.
    #[command(visible_alias = "list", visible_alias = "ls", visible_alias = "s")]
    Show,
}

/// `link show` / `addr show`, all devices or one (`[dev] NAME`).
#[derive(Debug, Subcommand)]
pub enum DeviceShow {
    /// Show them (`[dev] NAME`: only that device).
    #[command(visible_alias = "list", visible_alias = "ls", visible_alias = "s")]
    Show {
        /// `[dev] NAME`.
        #[arg(num_args = 0..=2, value_name = "dev NAME")]
        words: Vec<String>,
    },
}

impl DeviceShow {
    /// The one device asked for, if any.
    ///
    /// # Errors
    /// Words that are not `[dev] NAME`.
    pub fn device(&self) -> anyhow::Result<Option<&str>> {
        let DeviceShow::Show { words } = self;
        match words.as_slice() {
            [] => Ok(None),
            [name] if name != "dev" => Ok(Some(name)),
            [dev, name] if dev == "dev" => Ok(Some(name)),
            other => anyhow::bail!("\"show\": expected [dev] NAME, got \"{}\"", other.join(" ")),
        }
    }
}

/// iproute2 spells `-force` with one dash; clap wants two.
pub fn normalize_args(args: impl IntoIterator<Item = String>) -> Vec<String> {
    args.into_iter()
        .map(|arg| match arg.as_str() {
            "-force" => "--force".to_string(),
            "-json" => "--json".to_string(),
            "-stats" | "-statistics" => "--stats".to_string(),
            "-details" => "--details".to_string(),
            _ => arg,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_dash_force_is_accepted() {
        let args =
            normalize_args(["fibre", "-force", "--config", "x", "link", "show"].map(String::from));
        let cli = Cli::try_parse_from(args).unwrap();
        assert!(cli.force);
    }

    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
