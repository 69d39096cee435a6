//! Applying a configuration again without the lines a `force` load skips,
//! from a snapshot rather than from its first line.
//!
//! Under `force` a refused tunnel skips the line its refusal is placed on,
//! and the file is applied again without it; that may break a tunnel that
//! depended on it (its `local` address was on the skipped tunnel), which
//! skips another line, and so on: a cascade of rounds. Applying the whole
//! file each round costs the rounds times the file. But skipping a line
//! changes nothing before it, so [`Replay`] keeps the FIB as it stands
//! before the earliest line skipped so far and applies (and places the
//! refusals, see [`super::tunnels::blame`]) from there. A cascade whose
//! skips move down the file, as one tunnel after another loses its
//! `local`, then costs the file once plus each round's tail; a skip before
//! the snapshot starts it again from the file's first line, which gives
//! the same answers at the old cost.
//!
//! The snapshot is one FIB more, held while the round's own state is
//! built; the round's refusals are placed by replaying into a state that
//! becomes the loaded FIB when nothing more is refused, so the state the
//! faults were found in is let go first: a round holds the FIB before the
//! file, the snapshot and one state, as many as applying from the first
//! line held (before, a round's new state and the one it replaced).

use std::collections::{BTreeMap, BTreeSet};

use super::error::Diagnostic;
use super::tunnels::{blame, FaultKey};
use super::Statement;
use crate::{Fib, TunnelError};

/// The statements of a file and the FIB before one of them, under the
/// lines skipped so far.
pub(super) struct Replay<'a> {
    /// The FIB before the file.
    base: &'a Fib,
    /// The file's statements, in line order.
    statements: &'a [Statement],
    /// The FIB before `statements[at]`: `base` itself while `at` is 0.
    snapshot: Option<Fib>,
    /// The first statement the snapshot has not applied, the first of its
    /// line.
    at: usize,
    /// The refused statements before `at`.
    refusals: Vec<Diagnostic>,
}

impl<'a> Replay<'a> {
    /// A replay of `statements` onto `base`, from the first.
    pub(super) fn new(base: &'a Fib, statements: &'a [Statement]) -> Replay<'a> {
        Replay {
            base,
            statements,
            snapshot: None,
            at: 0,
            refusals: Vec::new(),
        }
    }

    fn start(&self) -> &Fib {
        self.snapshot.as_ref().unwrap_or(self.base)
    }

    /// Places `faults`, found in the FIB the file builds without
    /// `skipped_lines`, on their lines, replaying from the snapshot where
    /// that gives the same lines; returns them and the FIB the replay
    /// built (see [`blame`]).
    pub(super) fn blame(
        &self,
        name: &str,
        skipped_lines: &BTreeSet<usize>,
        faults: &BTreeMap<FaultKey, TunnelError>,
    ) -> (Vec<Diagnostic>, Fib) {
        blame(
            (self.start(), self.at),
            self.base,
            name,
            self.statements,
            skipped_lines,
            faults,
        )
    }

    /// Moves the snapshot to the first statement on or after line
    /// `earliest`, the earliest line newly skipped; `skipped_lines` are
    /// all the lines skipped now. The lines before it apply as they did,
    /// so the snapshot moves forward from where it is, or, where a line
    /// it has applied is now skipped, starts again from the file's first.
    pub(super) fn skip_from(
        &mut self,
        earliest: usize,
        name: &str,
        skipped_lines: &BTreeSet<usize>,
    ) {
        if self.at > 0 && self.statements[self.at - 1].line >= earliest {
            self.snapshot = None;
            self.at = 0;
            self.refusals.clear();
        }
        let rest = &self.statements[self.at..];
        let end = self.at + rest.partition_point(|statement| statement.line < earliest);
        if end > self.at {
            let base = self.base;
            let state = self.snapshot.get_or_insert_with(|| base.clone());
            apply_lines(
                state,
                name,
                &self.statements[self.at..end],
                skipped_lines,
                &mut self.refusals,
            );
            self.at = end;
        }
    }

    /// The FIB the file builds without `skipped_lines` (none of them
    /// before the snapshot's next line) and every refused statement's
    /// diagnostic, in line order.
    pub(super) fn apply_rest(
        &self,
        name: &str,
        skipped_lines: &BTreeSet<usize>,
    ) -> (Fib, Vec<Diagnostic>) {
        let mut next = self.start().clone();
        let mut refusals = self.refusals.clone();
        apply_lines(
            &mut next,
            name,
            &self.statements[self.at..],
            skipped_lines,
            &mut refusals,
        );
        (next, refusals)
    }
}

/// Applies the statements not on `skipped_lines` to `state`, noting each
/// refused one in `refusals`; the rest of a refused line is not applied
/// (one line is one request, see `load`). `statements` start a line.
pub(super) fn apply_lines(
    state: &mut Fib,
    name: &str,
    statements: &[Statement],
    skipped_lines: &BTreeSet<usize>,
    refusals: &mut Vec<Diagnostic>,
) {
    let mut refused_line = None;
    for statement in statements {
        if skipped_lines.contains(&statement.line) || refused_line == Some(statement.line) {
            continue;
        }
        if let Err(err) = state.apply(&statement.command) {
            refused_line = Some(statement.line);
            refusals.push(Diagnostic {
                file: name.to_string(),
                line: statement.line,
                message: err.to_string(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::fmt::Write;

    use proptest::prelude::*;

    use super::super::error::{ConfigError, Diagnostic};
    use super::super::load::{finish, stream, Streamed};
    use super::super::parse_str;
    use super::super::tunnels::{blame, tunnel_faults};
    use super::apply_lines;
    use crate::Fib;

    /// The rounds as they were before the snapshot: each applies the
    /// whole file again from `base` and places the refusals from its first
    /// line. The answers of [`finish`] must be these.
    fn finish_from_the_first_line_each_round(
        base: &Fib,
        name: &str,
        streamed: Streamed,
        force: bool,
    ) -> Result<(Fib, Vec<Diagnostic>), ConfigError> {
        let Streamed {
            next,
            text,
            parse_diagnostics,
            apply_diagnostics,
        } = streamed;
        let statements = parse_str(name, &text).statements;
        let mut skipped_lines = BTreeSet::new();
        let mut tunnel_diagnostics = Vec::new();
        let (mut next, mut diagnostics) = (next, apply_diagnostics);
        loop {
            let faults = tunnel_faults(&next);
            let refused = if faults.is_empty() {
                Vec::new()
            } else {
                blame((base, 0), base, name, &statements, &skipped_lines, &faults).0
            };
            if refused.is_empty() {
                diagnostics.extend(parse_diagnostics);
                diagnostics.extend(tunnel_diagnostics);
                diagnostics.sort_by_key(|d| d.line);
                return Ok((next, diagnostics));
            }
            if !force {
                return Err(ConfigError::Rejected {
                    diagnostics: refused,
                });
            }
            skipped_lines.extend(refused.iter().map(|d| d.line));
            tunnel_diagnostics.extend(refused);
            next = base.clone();
            diagnostics = Vec::new();
            apply_lines(
                &mut next,
                name,
                &statements,
                &skipped_lines,
                &mut diagnostics,
            );
        }
    }

    /// Both answers for `text` on `base`, as text: the diagnostics (or
    /// the refusal) and the whole FIB.
    fn both(base: &Fib, text: &str, force: bool) -> (String, String) {
        let answer = |result: Result<(Fib, Vec<Diagnostic>), ConfigError>| match result {
            Ok((fib, diagnostics)) => {
                let lines: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
                format!("{lines:#?}\n{fib:#?}")
            }
            Err(err) => format!("refused: {err}"),
        };
        let streamed = || stream(base, "t.conf", text.as_bytes(), force);
        let new = streamed().and_then(|s| finish(base, "t.conf", s, force));
        let old = streamed()
            .and_then(|s| finish_from_the_first_line_each_round(base, "t.conf", s, force));
        (answer(new), answer(old))
    }

    /// One line of a file of up to six GRE tunnels over eth0: tunnels
    /// whose `local` is another tunnel's address (a cascade under
    /// `force`), the router's or nobody's, addresses added and taken
    /// away, underlay routes through tunnels (loops), links deleted, and
    /// routes that only make the file longer.
    fn tunnel_line() -> impl Strategy<Value = String> {
        let tunnel = 0..6u8;
        prop_oneof![
            4 => (tunnel.clone(), 0..8u8, 0..3u8).prop_map(|(i, local, remote)| {
                let local = match local {
                    6 => "192.0.2.1".to_string(),
                    7 => "198.18.0.1".to_string(),
                    j => format!("10.0.{j}.1"),
                };
                format!("link add g{i} type gre remote 198.51.100.{remote} local {local}")
            }),
            3 => tunnel.clone().prop_map(|i| format!("addr add 10.0.{i}.1/24 dev g{i}")),
            1 => tunnel.clone().prop_map(|i| format!("addr del 10.0.{i}.1/24 dev g{i}")),
            2 => tunnel.clone().prop_map(|i| format!("link set g{i} up")),
            1 => (tunnel.clone(), 0..3u8)
                .prop_map(|(i, remote)| format!("route add 198.51.100.{remote}/32 dev g{i}")),
            1 => (0..3u8).prop_map(|remote| format!("route del 198.51.100.{remote}/32")),
            1 => tunnel.clone().prop_map(|i| format!("link del g{i}")),
            2 => (0..250u8).prop_map(|k| format!("route add 172.16.{k}.0/24 dev eth0")),
        ]
    }

    fn tunnel_file() -> impl Strategy<Value = String> {
        proptest::collection::vec(tunnel_line(), 1..40).prop_map(|lines| {
            let mut text = String::from(
                "link add eth0 type dummy\nlink set eth0 up\naddr add 192.0.2.1/24 dev eth0\n\
                 route add 198.51.100.0/24 dev eth0\n",
            );
            for line in lines {
                let _ = writeln!(text, "{line}");
            }
            text
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The snapshot changes how much is applied again, never what
        /// comes out: the same skipped lines, messages and FIB as
        /// applying the whole file every round, with and without `force`.
        #[test]
        fn a_replay_from_the_snapshot_answers_as_one_from_the_first_line(text in tunnel_file()) {
            for force in [true, false] {
                let (new, old) = both(&Fib::new(), &text, force);
                prop_assert_eq!(new, old, "force {}:\n{}", force, text);
            }
        }
    }

    #[test]
    fn a_cascade_down_the_file_answers_as_before_and_skips_every_tunnel() {
        // Tunnel i has its `local` on tunnel i - 1; g0's is nobody's.
        let mut text = String::from(
            "link add eth0 type dummy\nlink set eth0 up\naddr add 192.0.2.1/24 dev eth0\n",
        );
        for i in 0..30 {
            let local = if i == 0 {
                "198.18.0.1".to_string()
            } else {
                format!("10.0.{}.1", i - 1)
            };
            let _ = writeln!(
                text,
                "link add g{i} type gre remote 198.51.100.2 local {local}"
            );
            let _ = writeln!(text, "addr add 10.0.{i}.1/24 dev g{i}");
            let _ = writeln!(text, "route add 172.16.{i}.0/24 dev eth0");
        }
        let (new, old) = both(&Fib::new(), &text, true);
        assert_eq!(new, old);
        assert_eq!(
            new.matches("is not configured on this router").count(),
            30,
            "{new}"
        );
        assert_eq!(new.matches("Cannot find device").count(), 30, "{new}");
    }

    #[test]
    fn a_skip_before_the_snapshot_starts_again_from_the_first_line() {
        // g1 is refused first, on line 5 (its own); skipping it takes away
        // the address g0's `local` needs, which breaks g0 after line 4
        // (the addr add that made it fit is gone), before the snapshot.
        let text = "link add eth0 type dummy\nlink set eth0 up\naddr add 192.0.2.1/24 dev eth0\n\
                    link add g0 type gre remote 198.51.100.2 local 10.0.1.1\n\
                    link add g1 type gre remote 198.51.100.2 local 198.18.0.1\n\
                    addr add 10.0.1.1/24 dev g1\n";
        let (new, old) = both(&Fib::new(), text, true);
        assert_eq!(new, old);
        assert!(
            new.contains("t.conf:5: local address 198.18.0.1 of tunnel g1"),
            "{new}"
        );
        assert!(new.contains("local address 10.0.1.1 of tunnel g0"), "{new}");
    }
}
