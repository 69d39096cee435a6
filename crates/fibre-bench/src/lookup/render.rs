//! The lookup experiment's text: a table per family, and its summary rows.

use std::fmt::Write as _;

use crate::report::{format_value, Measurement};
use crate::table::{Align, Table};
use crate::timing::Rate;

use super::figures::{EngineFigures, FamilyFigures};
use super::LookupConfig;

fn millions(per_second: f64) -> String {
    format_value(per_second / 1e6)
}

/// "wall / on-CPU" in millions per second.
fn both(rate: &Rate) -> String {
    format!("{} / {}", millions(rate.median), millions(rate.on_cpu))
}

pub(super) fn render_family(f: &FamilyFigures, config: &LookupConfig) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} prefixes, next hops hashed onto {} gateways; {} {}, {} matched; \
         bursts of {}; {} updates replayed ({} withdrawals); engines agreed on every query \
         before and after the replay",
        f.family,
        f.prefixes,
        f.gateways,
        f.queries,
        f.query_kind.describe(),
        f.queries_matched,
        config.batch,
        f.updates,
        f.withdrawals,
    );
    let threads_title = format!("{} thr M/s", f.threads);
    let mut table = Table::new(&[
        ("engine", Align::Left),
        ("build s", Align::Right),
        ("B/prefix", Align::Right),
        ("1 thr single M/s", Align::Right),
        ("1 thr batch M/s", Align::Right),
        (threads_title.as_str(), Align::Right),
        ("vs best peer", Align::Right),
        ("updates M/s", Align::Right),
    ]);
    for e in &f.engines {
        table.row(vec![
            e.engine.to_string(),
            format_value(e.build_seconds),
            e.bytes_per_prefix.map_or("n/a".into(), format_value),
            both(&e.single_1t),
            e.batched_1t.as_ref().map_or("-".into(), both),
            both(&e.all_threads),
            e.ratio_to_best_peer
                .map_or("-".into(), |r| format!("{r:.2}x")),
            if e.updates_applied < f.updates {
                format!("{}*", millions(e.updates_per_second))
            } else {
                millions(e.updates_per_second)
            },
        ]);
    }
    out.push_str(&table.render());
    for u in &f.unavailable {
        let _ = writeln!(out, "{}: not measured: {}", u.engine, u.reason);
    }
    for e in f.engines.iter().filter(|e| e.updates_applied < f.updates) {
        let _ = writeln!(
            out,
            "* {}: the replay budget of {} s ran out after {} of the {} updates; its rate is \
             over those, and it sat out the agreement check after the replay.",
            e.engine,
            config.replay_budget.as_secs_f64(),
            e.updates_applied,
            f.updates
        );
    }
    if let Some(fibre) = f.engines.iter().find(|e| e.fibre) {
        let heap = fibre.heap_bytes.map_or("n/a".into(), |b| {
            format_value(b as f64 / f.prefixes.max(1) as f64)
        });
        let _ = writeln!(
            out,
            "B/prefix: fibre = lookup_bytes() (its whole heap: {heap} B/prefix); peers = heap \
             their build left allocated (counting allocator). Rates: wall clock / per on-CPU \
             second (leaves out waiting for a core on a busy machine). vs best peer: best \
             1-thread wall-clock rate over {}'s.",
            f.best_peer.unwrap_or("the best peer")
        );
    }
    out
}

/// The family's rows of the summary table: fibre's figures, each against the
/// peer that does best on it.
pub(super) fn headline(f: &FamilyFigures) -> Vec<Measurement> {
    let Some(fibre) = f.engines.iter().find(|e| e.fibre) else {
        return Vec::new();
    };
    let peers: Vec<&EngineFigures> = f.engines.iter().filter(|e| !e.fibre).collect();
    let best_peer_by = |key: &dyn Fn(&EngineFigures) -> Option<f64>, higher_is_better: bool| {
        peers
            .iter()
            .filter_map(|p| key(p).map(|v| (p.engine, v)))
            .filter(|(_, v)| *v > 0.0)
            .reduce(|a, b| {
                if (b.1 > a.1) == higher_is_better {
                    b
                } else {
                    a
                }
            })
    };
    let fam = f.family;
    let mut rows = Vec::new();
    let with_peer = |m: Measurement, value: f64, peer: Option<(&str, f64)>| match peer {
        Some((name, peer_value)) => m.with_ratio(value / peer_value, format!("best peer ({name})")),
        None => m,
    };
    let peer_1t = best_peer_by(&|p| Some(p.best_1t()), true);
    if let Some(batched) = fibre.batched_1t.map(|r| r.median) {
        rows.push(with_peer(
            Measurement::new(
                format!("{fam} fibre 1 thread batched"),
                batched / 1e6,
                "M lookups/s",
            ),
            batched,
            peer_1t,
        ));
    }
    rows.push(with_peer(
        Measurement::new(
            format!("{fam} fibre 1 thread single"),
            fibre.single_1t.median / 1e6,
            "M lookups/s",
        ),
        fibre.single_1t.median,
        peer_1t,
    ));
    let mut all = Measurement::new(
        format!("{fam} fibre {} threads", f.threads),
        fibre.all_threads.median / 1e6,
        "M lookups/s",
    );
    if fibre.best_1t() > 0.0 {
        all = all.with_ratio(fibre.all_threads.median / fibre.best_1t(), "fibre 1 thread");
    }
    rows.push(all);
    // The same per on-CPU second: what the engines do when they have the core.
    let peer_1t_cpu = best_peer_by(&|p| Some(p.best_1t_on_cpu()), true);
    if let Some(batched) = fibre.batched_1t.map(|r| r.on_cpu) {
        rows.push(with_peer(
            Measurement::new(
                format!("{fam} fibre 1 thread batched, on-CPU"),
                batched / 1e6,
                "M lookups/s",
            ),
            batched,
            peer_1t_cpu,
        ));
    }
    let mut all_cpu = Measurement::new(
        format!("{fam} fibre {} threads, on-CPU", f.threads),
        fibre.all_threads.on_cpu / 1e6,
        "M lookups/s",
    );
    if fibre.best_1t_on_cpu() > 0.0 {
        all_cpu = all_cpu.with_ratio(
            fibre.all_threads.on_cpu / fibre.best_1t_on_cpu(),
            "fibre 1 thread on-CPU",
        );
    }
    rows.push(all_cpu);
    if let Some(bpp) = fibre.bytes_per_prefix {
        rows.push(with_peer(
            Measurement::new(format!("{fam} fibre memory"), bpp, "B/prefix"),
            bpp,
            best_peer_by(&|p| p.bytes_per_prefix, false),
        ));
    }
    if let Some(heap) = fibre.heap_bytes {
        // The like-for-like memory figure: every byte each engine keeps,
        // fibre's RIB included, as the peers' figures include theirs.
        let per_prefix = |bytes: usize| bytes as f64 / f.prefixes.max(1) as f64;
        rows.push(with_peer(
            Measurement::new(
                format!("{fam} fibre heap, RIB included"),
                per_prefix(heap),
                "B/prefix",
            ),
            per_prefix(heap),
            best_peer_by(&|p| p.heap_bytes.map(per_prefix), false),
        ));
    }
    rows.push(with_peer(
        Measurement::new(format!("{fam} fibre build"), fibre.build_seconds, "s"),
        fibre.build_seconds,
        best_peer_by(&|p| Some(p.build_seconds), false),
    ));
    rows.push(with_peer(
        Measurement::new(
            format!("{fam} fibre update replay"),
            fibre.updates_per_second / 1e6,
            "M updates/s",
        ),
        fibre.updates_per_second,
        best_peer_by(&|p| Some(p.updates_per_second), true),
    ));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::QueryKind;

    #[test]
    fn headline_rows_compare_fibre_with_the_best_peer_of_each_figure() {
        let engine = |name, fibre, rate: f64, bytes: f64, build, updates| EngineFigures {
            engine: name,
            fibre,
            build_seconds: build,
            bytes: Some(1),
            bytes_source: "test",
            heap_bytes: Some((bytes * 20.0) as usize),
            bytes_per_prefix: Some(bytes),
            single_1t: Rate::of(&[rate], &[rate * 2.0]),
            batched_1t: fibre.then_some(Rate::of(&[rate * 2.0], &[rate * 4.0])),
            all_threads: Rate::of(&[rate * 3.0], &[rate * 7.0]),
            ratio_to_best_peer: None,
            updates_per_second: updates,
            updates_applied: 10,
        };
        let family = FamilyFigures {
            family: "IPv4",
            prefixes: 10,
            query_kind: QueryKind::Uniform,
            queries: 10,
            queries_matched: 5,
            gateways: 16,
            threads: 2,
            updates: 10,
            withdrawals: 1,
            disagreements: 0,
            disagreements_after_updates: 0,
            best_peer: Some("fast"),
            unavailable: Vec::new(),
            engines: vec![
                engine("fibre", true, 100e6, 4.0, 0.5, 1e6),
                engine("fast", false, 50e6, 20.0, 0.2, 2e6),
                engine("small", false, 10e6, 8.0, 1.0, 4e6),
            ],
        };
        let rows = headline(&family);
        let row = |name: &str| rows.iter().find(|m| m.name == name).unwrap();
        assert_eq!(row("IPv4 fibre 1 thread batched").value, 200.0);
        // Heap per prefix is twice bytes per prefix here: 8, 40 and 16.
        assert_eq!(row("IPv4 fibre heap, RIB included").value, 8.0);
        // On-CPU: fibre batched 400 M/s against the fast peer's 100.
        assert_eq!(row("IPv4 fibre 1 thread batched, on-CPU").value, 400.0);
        let ratios = [
            ("IPv4 fibre 1 thread batched", "4.00x best peer (fast)"),
            ("IPv4 fibre 1 thread single", "2.00x best peer (fast)"),
            ("IPv4 fibre 2 threads", "1.50x fibre 1 thread"),
            ("IPv4 fibre memory", "0.50x best peer (small)"),
            ("IPv4 fibre build", "2.50x best peer (fast)"),
            ("IPv4 fibre update replay", "0.25x best peer (small)"),
            ("IPv4 fibre heap, RIB included", "0.50x best peer (small)"),
            (
                "IPv4 fibre 1 thread batched, on-CPU",
                "4.00x best peer (fast)",
            ),
            (
                "IPv4 fibre 2 threads, on-CPU",
                "1.75x fibre 1 thread on-CPU",
            ),
        ];
        for (name, ratio) in ratios {
            assert_eq!(row(name).ratio_text(), ratio, "{name}");
        }
        assert_eq!(rows.len(), ratios.len());
    }
}
