//! The tunnel check of `config::apply_str` against a plain reference: each
//! tunnel checked on its own the way `GreSpec::check_against` describes it
//! (addresses listed, links found by name one by one, every tunnel's
//! underlay walked to its end), every fault re-checked after every
//! statement of the replay that places it, and under `force` the file
//! applied again without the refused lines until nothing is refused. The
//! check that `apply_str` runs finds the faults in one pass and re-checks
//! only what a statement can change; on random files the verdicts, lines
//! and messages must be the same, and so must the FIB that is loaded.

use std::collections::{BTreeMap, BTreeSet};

use fibre_fib::config::{apply_str, parse_str, ConfigError, Statement};
use fibre_fib::*;
use proptest::prelude::*;

/// The fault a tunnel's check finds, keyed as the loader keys it: a loop
/// by its tunnels from the least name.
fn key_of(err: &TunnelError) -> (u8, Vec<String>) {
    let mut tunnels: Vec<String> = err.tunnels().into_iter().map(str::to_string).collect();
    let kind = match err {
        TunnelError::LocalNotOnRouter { .. } => 0,
        TunnelError::UnderlayLoop { .. } => 1,
        TunnelError::UnderlayCycle { .. } => {
            let least = (0..tunnels.len()).min_by_key(|&i| &tunnels[i]).unwrap();
            tunnels.rotate_left(least);
            2
        }
    };
    (kind, tunnels)
}

/// One hop of a tunnel's underlay into a tunnel, as the check takes it.
fn hop(spec: &GreSpec, tunnel: &str, origin: &str, fib: &Fib) -> Option<UnderlayHop> {
    let mut request = RouteGetRequest::to(spec.remote);
    request.src = spec.local;
    let answer = fib.route_get(&request).ok()?;
    let via = answer.dev?;
    let is_tunnel = via == origin
        || fib
            .links()
            .any(|link| link.name == via && matches!(link.kind, LinkKind::Gre(_)));
    is_tunnel.then(|| UnderlayHop {
        tunnel: tunnel.to_string(),
        remote: spec.remote,
        route: answer.route.dst,
        table: answer.table,
        via,
    })
}

/// `GreSpec::check_against` as its documentation says, with nothing
/// hashed or shared between tunnels.
fn check(spec: &GreSpec, name: &str, fib: &Fib) -> Result<(), TunnelError> {
    if let Some(local) = spec.local {
        if !fib
            .addresses(Some(spec.kind.family()))
            .iter()
            .any(|a| a.local == local)
        {
            return Err(TunnelError::LocalNotOnRouter {
                name: name.into(),
                local,
            });
        }
    }
    let mut hops: Vec<UnderlayHop> = Vec::new();
    let (mut tunnel, mut spec_here) = (name.to_string(), spec.clone());
    loop {
        let Some(step) = hop(&spec_here, &tunnel, name, fib) else {
            return Ok(());
        };
        if step.via == name {
            if hops.is_empty() {
                return Err(TunnelError::UnderlayLoop {
                    name: name.into(),
                    remote: spec.remote,
                });
            }
            hops.push(step);
            return Err(TunnelError::UnderlayCycle { hops });
        }
        if step.via == tunnel || hops.iter().any(|seen| seen.tunnel == step.via) {
            return Ok(());
        }
        let Some(next) = fib.links().find(|link| link.name == step.via) else {
            return Ok(());
        };
        let LinkKind::Gre(next_spec) = &next.kind else {
            return Ok(());
        };
        (tunnel, spec_here) = (next.name.clone(), next_spec.clone());
        hops.push(step);
    }
}

fn fault_of(fib: &Fib, name: &str) -> Option<((u8, Vec<String>), TunnelError)> {
    let link = fib.links().find(|link| link.name == name)?;
    let LinkKind::Gre(spec) = &link.kind else {
        return None;
    };
    let err = check(spec, name, fib).err()?;
    Some((key_of(&err), err))
}

fn faults(fib: &Fib) -> BTreeMap<(u8, Vec<String>), TunnelError> {
    fib.links()
        .filter_map(|link| fault_of(fib, &link.name))
        .filter(|(key, err)| err.tunnels()[0] == key.1[0])
        .collect()
}

fn tunnel_lines(err: &TunnelError, line: usize, added: &BTreeMap<String, usize>) -> String {
    let tunnels = err.tunnels();
    if tunnels.len() == 1 && added.get(tunnels[0]) == Some(&line) {
        return String::new();
    }
    let places: Vec<String> = tunnels
        .iter()
        .enumerate()
        .map(|(i, tunnel)| {
            let verb = if i == 0 { " is added at " } else { " at " };
            match added.get(*tunnel) {
                Some(add) => format!("{tunnel}{verb}line {add}"),
                None => format!("{tunnel} from before this file"),
            }
        })
        .collect();
    format!(" [after this line; {}]", places.join(", "))
}

/// The refusals of `found`, each on the statement after which it holds to
/// the end, checking every fault after every statement.
fn blame(
    applied: &[&Statement],
    found: BTreeMap<(u8, Vec<String>), TunnelError>,
) -> Vec<(usize, String)> {
    let mut state = Fib::new();
    let holds = |key: &(u8, Vec<String>), fib: &Fib| {
        fault_of(fib, &key.1[0]).is_some_and(|(k, _)| k == *key)
    };
    let mut since: Vec<Option<Option<usize>>> = found
        .keys()
        .map(|key| holds(key, &state).then_some(None))
        .collect();
    let mut refused_line = None;
    for (i, statement) in applied.iter().enumerate() {
        if refused_line == Some(statement.line) {
            continue;
        }
        if state.apply(&statement.command).is_err() {
            refused_line = Some(statement.line);
        }
        for (key, held) in found.keys().zip(since.iter_mut()) {
            match (holds(key, &state), *held) {
                (true, None) => *held = Some(Some(i)),
                (true, Some(_)) => {}
                (false, _) => *held = None,
            }
        }
    }
    let mut added = BTreeMap::new();
    for statement in applied {
        if let Command::LinkAdd {
            name,
            kind: LinkKind::Gre(_),
            ..
        } = &statement.command
        {
            added.insert(name.clone(), statement.line);
        }
    }
    let mut refused: Vec<(usize, String)> = found
        .into_values()
        .zip(since)
        .filter_map(|(err, held)| {
            let line = match held? {
                Some(i) => applied[i].line,
                None => return None,
            };
            Some((line, format!("{err}{}", tunnel_lines(&err, line, &added))))
        })
        .collect();
    refused.sort_by_key(|(line, _)| *line);
    refused
}

/// What the reference loads: the refusals without `force`, or the FIB and
/// the skipped lines with it, as `line: message` strings.
fn reference(text: &str, force: bool) -> Result<(Fib, Vec<String>), Vec<String>> {
    let parsed = parse_str("t.conf", text);
    let show = |line: usize, message: &str| format!("t.conf:{line}: {message}");
    if !parsed.diagnostics.is_empty() && !force {
        return Err(parsed.diagnostics.iter().map(ToString::to_string).collect());
    }
    let mut skipped = BTreeSet::new();
    let mut tunnel_diagnostics = Vec::new();
    loop {
        let applied: Vec<&Statement> = parsed
            .statements
            .iter()
            .filter(|s| !skipped.contains(&s.line))
            .collect();
        let mut fib = Fib::new();
        let mut diagnostics = Vec::new();
        let mut refused_line = None;
        for statement in &applied {
            // A line is one request: what follows its refused part is not applied.
            if refused_line == Some(statement.line) {
                continue;
            }
            if let Err(err) = fib.apply(&statement.command) {
                refused_line = Some(statement.line);
                diagnostics.push((statement.line, show(statement.line, &err.to_string())));
                if !force {
                    return Err(diagnostics.into_iter().map(|(_, d)| d).collect());
                }
            }
        }
        let found = faults(&fib);
        let refused = if found.is_empty() {
            Vec::new()
        } else {
            blame(&applied, found)
        };
        if refused.is_empty() {
            diagnostics.extend(parsed.diagnostics.iter().map(|d| (d.line, d.to_string())));
            diagnostics.extend(tunnel_diagnostics);
            diagnostics.sort_by_key(|(line, _)| *line);
            return Ok((fib, diagnostics.into_iter().map(|(_, d)| d).collect()));
        }
        if !force {
            return Err(refused.iter().map(|(line, m)| show(*line, m)).collect());
        }
        skipped.extend(refused.iter().map(|(line, _)| *line));
        tunnel_diagnostics.extend(refused.iter().map(|(line, m)| (*line, show(*line, m))));
    }
}

fn loaded(text: &str, force: bool) -> Result<(Fib, Vec<String>), Vec<String>> {
    match apply_str(&Fib::new(), "t.conf", text, force) {
        Ok((fib, diagnostics)) => Ok((fib, diagnostics.iter().map(ToString::to_string).collect())),
        Err(ConfigError::Rejected { diagnostics }) => {
            Err(diagnostics.iter().map(ToString::to_string).collect())
        }
        Err(other) => Err(vec![other.to_string()]),
    }
}

/// What a loaded FIB holds, to compare two of them.
fn contents(fib: &Fib) -> String {
    let mut out = format!(
        "{:?}\n{:?}\n",
        fib.links().collect::<Vec<_>>(),
        fib.addresses(None)
    );
    for family in [Family::V4, Family::V6] {
        out += &format!("{:?}\n{:?}\n", fib.routes(family, None), fib.rules(family));
    }
    out
}

fn same_verdict(text: &str) -> Result<(), TestCaseError> {
    for force in [false, true] {
        let want = reference(text, force);
        let got = loaded(text, force);
        match (&want, &got) {
            (Ok((want_fib, want_skipped)), Ok((got_fib, got_skipped))) => {
                prop_assert_eq!(want_skipped, got_skipped, "force {}\n{}", force, text);
                prop_assert_eq!(
                    contents(want_fib),
                    contents(got_fib),
                    "force {}\n{}",
                    force,
                    text
                );
            }
            (Err(want), Err(got)) => prop_assert_eq!(want, got, "force {}\n{}", force, text),
            _ => prop_assert!(
                false,
                "force {force}\n{text}\nreference: {:?}\nloaded: {:?}",
                want.map(|(_, d)| d),
                got.map(|(_, d)| d)
            ),
        }
    }
    Ok(())
}

/// One line of a random file about four tunnels (g1-g4, remotes
/// 10.0.0.1-4): routes into them and out of them, their local addresses
/// coming and going, links going down, away and back, a veth, rules
/// naming tunnels before they exist, and an ip6gre pair.
fn line() -> impl Strategy<Value = String> {
    let t = || 1..=4u8;
    let local = prop_oneof![
        Just(""),
        Just(" local 192.0.2.1"),
        Just(" local 192.0.2.9"),
        Just(" local 10.9.0.1"),
    ];
    prop_oneof![
        4 => (t(), t(), local).prop_map(|(t, r, l)| format!("link add g{t} up type gre remote 10.0.0.{r}{l}")),
        1 => (t(), t()).prop_map(|(t, r)| format!("link add g{t} type gre remote 10.0.0.{r} key {r}")),
        4 => (t(), t()).prop_map(|(r, t)| format!("route add 10.0.0.{r} dev g{t}")),
        1 => (t(), t()).prop_map(|(r, t)| format!("route add 10.0.0.{r} dev g{t} table 100")),
        2 => (t(), t()).prop_map(|(r, t)| format!("route del 10.0.0.{r} dev g{t}")),
        1 => t().prop_map(|r| format!("route add 10.0.0.{r} via 192.0.2.254")),
        1 => t().prop_map(|t| format!("route replace default dev g{t}")),
        1 => t().prop_map(|t| format!("route replace 10.0.0.0/24 dev g{t}")),
        1 => t().prop_map(|t| format!("rule add oif g{t} lookup 100")),
        1 => t().prop_map(|t| format!("rule add to 10.0.0.{t} lookup 100")),
        1 => t().prop_map(|t| format!("link set g{t} down")),
        1 => t().prop_map(|t| format!("link set g{t} up")),
        1 => t().prop_map(|t| format!("link del g{t}")),
        1 => t().prop_map(|t| format!("addr add 10.9.0.1/24 dev g{t}")),
        1 => Just("addr del 192.0.2.1/24 dev eth0".to_string()),
        1 => Just("addr add 192.0.2.1/24 dev eth0".to_string()),
        1 => Just("addr add 192.0.2.9/24 dev eth0".to_string()),
        1 => Just("addr del 192.0.2.9/24 dev eth0".to_string()),
        1 => Just("link set eth0 down".to_string()),
        1 => Just("link set eth0 up".to_string()),
        1 => t().prop_map(|t| format!("link add g{t} type veth peer name v{t}")),
        1 => (t(), t()).prop_map(|(t, r)| format!(
            "link add g{t} up type ip6gre remote 2001:db8::{r} local 2001:db8::1"
        )),
        1 => (t(), t()).prop_map(|(r, t)| format!("route add 2001:db8::{r} dev g{t}")),
    ]
}

const UNDERLAY: &str = "link add eth0 type dummy\nlink set eth0 up\naddr add 192.0.2.1/24 dev eth0\naddr add 2001:db8::1/64 dev eth0\n";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn the_loader_judges_tunnels_as_the_reference(lines in proptest::collection::vec(line(), 1..24)) {
        same_verdict(&format!("{UNDERLAY}{}\n", lines.join("\n")))?;
    }
}

#[test]
fn the_reference_agrees_on_hand_written_files() {
    let cases = [
        // A loop through three tunnels, closed on the last line.
        "link add g1 up type gre remote 10.0.0.2\nlink add g2 up type gre remote 10.0.0.3\n\
         link add g3 up type gre remote 10.0.0.1\nroute add 10.0.0.2 dev g2\n\
         route add 10.0.0.3 dev g3\nroute add 10.0.0.1 dev g1\n",
        // A loop among tunnels g1 merely leads into, and g1's own local refused.
        "link add g1 up type gre remote 10.0.0.2 local 192.0.2.9\nlink add g2 up type gre remote 10.0.0.3\n\
         link add g3 up type gre remote 10.0.0.2\nroute add 10.0.0.2 dev g2\nroute add 10.0.0.3 dev g3\n",
        // A rule naming a tunnel before it is added.
        "rule add oif g2 lookup 100\nroute add 10.0.0.2 dev eth0 table 100\n\
         link add g1 up type gre remote 10.0.0.2\nroute add 10.0.0.2 dev g1\nlink add g2 type dummy\n",
        // The --force cascade: each tunnel's local on the one before.
        "link add g0 type gre remote 192.0.2.2 local 198.18.0.1\naddr add 10.0.0.1/30 dev g0\n\
         link add g1 type gre remote 192.0.2.3 local 10.0.0.1\naddr add 10.0.0.5/30 dev g1\n\
         link add g2 type gre remote 192.0.2.4 local 10.0.0.5\n",
    ];
    for case in cases {
        same_verdict(&format!("{UNDERLAY}{case}")).unwrap();
    }
}
