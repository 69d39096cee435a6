//! `fibre`: the command line. Global options load the FIB (`--config`),
//! then one subcommand reads or queries it. Exit status: 0 success, 1 usage
//! or configuration error, 2 a lookup refused (as `ip`). A reader that
//! goes away (`fibre ... | head -1`) ends it quietly, as it ends `ip`
//! (see [`stdio`]).

mod bench;
mod cli;
mod ctl;
mod follow;
mod format;
mod get;
mod icmp;
mod import;
mod lookup;
mod monitor;
mod outcome;
mod serve;
mod show;
mod stdio;

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;
use fibre_fib::{config, Family, Fib};

use cli::{Cli, Command, NeighAction, RouteAction};
use outcome::Outcome;

/// The options every subcommand sees.
#[derive(Debug, Clone, Copy)]
struct Globals {
    json: bool,
    family: Option<Family>,
    /// `-s`: statistics (link show).
    stats: bool,
    /// `-d`: details (link show).
    details: bool,
}

impl Globals {
    fn of(cli: &Cli) -> Globals {
        let family = if cli.ipv6 {
            Some(Family::V6)
        } else if cli.ipv4 {
            Some(Family::V4)
        } else {
            None
        };
        Globals {
            json: cli.json,
            family,
            stats: cli.stats,
            details: cli.details,
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse_from(cli::normalize_args(std::env::args())) {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() { 1 } else { 0 });
        }
    };
    match run(cli) {
        Ok(outcome) => ExitCode::from(outcome.exit_code()),
        Err(err) if stdio::closed_pipe(&err) => stdio::exit_on_closed_pipe(),
        Err(err) => {
            stdio::warn(format_args!("fibre: {err:#}"));
            ExitCode::from(1)
        }
    }
}

fn run(cli: Cli) -> Result<Outcome> {
    let globals = Globals::of(&cli);
    if let Command::Bench(args) = cli.command {
        bench::run(args)?;
        return Ok(Outcome::Success);
    }
    if let Command::Ctl(args) = &cli.command {
        return ctl_command(&cli, args);
    }
    let mut fib = Fib::new();
    if let Some(path) = &cli.config {
        let (loaded, skipped) = config::load(&fib, path, cli.force)?;
        for diagnostic in &skipped {
            stdio::warn(diagnostic);
        }
        fib = loaded;
    }
    let learned = match &cli.icmp {
        Some(path) => Some(icmp::Learned::from_pcap(&fib, path)?),
        None => None,
    };
    dispatch(fib, learned.as_ref(), globals, cli.command)
}

fn dispatch(
    mut fib: Fib,
    learned: Option<&icmp::Learned>,
    globals: Globals,
    command: Command,
) -> Result<Outcome> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let family = globals.family.unwrap_or(Family::V4);
    let outcome = match command {
        Command::Route { action } => match action {
            RouteAction::Get { words } => get::route_get(
                &fib,
                learned,
                &words,
                globals.family,
                globals.json,
                &mut out,
            )?,
            RouteAction::Show { words } => {
                let filter = show::RouteFilter::parse(&words)?;
                if filter.cache {
                    show::cache(&fib, learned, family, globals.json, &mut out)?;
                } else {
                    show::routes(&fib, globals.family, &filter, globals.json, &mut out)?;
                }
                Outcome::Success
            }
            RouteAction::Monitor(mut args) => {
                if !args.objects.is_empty() {
                    anyhow::bail!(
                        "route monitor: expected no object, got \"{}\"",
                        args.objects.join(" ")
                    );
                }
                args.objects = vec!["route".into()];
                follow::monitor(&args, globals.json)?;
                Outcome::Success
            }
            RouteAction::Import(_) if learned.is_some() => {
                anyhow::bail!(
                    "--icmp applies to the FIB as loaded; it does not combine with \"route import\""
                )
            }
            RouteAction::Import(args) => {
                let table = config::parse_table_id(&args.table).with_context(|| {
                    format!(
                        "--table: expected local, main, default or a number, got \"{}\"",
                        args.table
                    )
                })?;
                let summary = import::import(&mut fib, &args.file, table, args.nexthops)?;
                if args.then.is_empty() {
                    writeln!(out, "{summary}")?;
                    Outcome::Success
                } else {
                    stdio::warn(&summary);
                    drop(out);
                    return follow_up(fib, globals, args.then, "the command after the import file");
                }
            }
        },
        Command::Rule { .. } => {
            show::rules(&fib, family, globals.json, &mut out)?;
            Outcome::Success
        }
        Command::Link { action } => {
            let how = show::LinkShow {
                only: action.device()?,
                json: globals.json,
                details: globals.details,
                stats: globals.stats,
            };
            show::links(&fib, how, &mut out)?;
            Outcome::Success
        }
        Command::Addr { action } => {
            let only = action.device()?;
            show::addresses(&fib, only, globals.family, globals.json, &mut out)?;
            Outcome::Success
        }
        Command::Neigh {
            action: NeighAction::Show { words },
        } => {
            let filter = show::NeighFilter::parse(&words)?;
            show::neighbours(&fib, globals.family, &filter, globals.json, &mut out)?;
            Outcome::Success
        }
        Command::Lookup => {
            let stdin = io::stdin();
            let how = lookup::Lookup {
                family: globals.family,
                json: globals.json,
                learned,
            };
            lookup::run(&fib, how, stdin.lock(), &mut out)?;
            Outcome::Success
        }
        Command::Bench(args) => {
            bench::run(args)?;
            Outcome::Success
        }
        Command::Serve(args) => {
            serve::run(fib, &args)?;
            Outcome::Success
        }
        Command::Ctl(_) => anyhow::bail!("\"ctl\" talks to a running router; it takes no FIB"),
        Command::Monitor(args) => {
            follow::monitor(&args, globals.json)?;
            Outcome::Success
        }
        Command::Follow(args) => {
            // The followed state replaces any --config: it is the namespace's.
            drop(fib);
            follow::run(&args, &mut |followed, words| {
                follow_up(followed, globals, words, "the command given to follow").map(|_| ())
            })?;
            Outcome::Success
        }
    };
    out.flush()?;
    Ok(outcome)
}

/// `fibre ctl`: the global flags travel with the request; the router's
/// exit status becomes ours.
fn ctl_command(cli: &Cli, args: &ctl::CtlArgs) -> Result<Outcome> {
    if cli.config.is_some() || cli.icmp.is_some() {
        anyhow::bail!("\"ctl\" talks to a running router: --config and --icmp do not apply");
    }
    let flags = ctl::RequestFlags {
        json: cli.json,
        stats: cli.stats,
        details: cli.details,
        family: match Globals::of(cli).family {
            Some(Family::V4) => Some(4),
            Some(Family::V6) => Some(6),
            None => None,
        },
    };
    Ok(match ctl::run(args, flags)? {
        0 => Outcome::Success,
        2 => Outcome::Refused,
        _ => Outcome::Failed,
    })
}

/// The command after `route import FILE` (or given to `follow`), run on
/// that FIB; its own options add to the outer ones. `what` names it in errors.
fn follow_up(fib: Fib, outer: Globals, words: Vec<String>, what: &str) -> Result<Outcome> {
    let args = std::iter::once("fibre".to_string()).chain(words);
    let cli = Cli::try_parse_from(cli::normalize_args(args))
        .map_err(|err| anyhow::anyhow!("{what}: {}", err.render()))?;
    let inner = Globals::of(&cli);
    if cli.config.is_some() {
        anyhow::bail!("{what}: --config must come before \"route import\"");
    }
    let globals = Globals {
        json: outer.json || inner.json,
        family: inner.family.or(outer.family),
        stats: outer.stats || inner.stats,
        details: outer.details || inner.details,
    };
    if cli.icmp.is_some() {
        anyhow::bail!("{what}: --icmp must come before \"route import\"");
    }
    dispatch(fib, None, globals, cli.command)
}
