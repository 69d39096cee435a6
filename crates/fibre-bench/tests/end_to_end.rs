//! The lookup experiment from data files to summary table, on small tables
//! written in the RIS files' format. Nothing here asserts a speed.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use fibre_bench::alloc_count::CountingAllocator;
use fibre_bench::data::SNAPSHOT;
use fibre_bench::experiment::run_experiments;
use fibre_bench::lookup::{self, LookupConfig, LookupExperiment};
use fibre_bench::timing::Plan;
use fibre_bench::{BenchError, Options, Registered};
use flate2::write::GzEncoder;
use flate2::Compression;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn write_gz(path: &Path, lines: &[String]) {
    let mut gz = GzEncoder::new(File::create(path).unwrap(), Compression::fast());
    for line in lines {
        writeln!(gz, "{line}").unwrap();
    }
    gz.finish().unwrap();
}

/// A table of `count` distinct random prefixes (lengths `min..=max`) and an
/// update stream that withdraws some, re-announces some and adds new ones.
fn family_files(dir: &Path, tag: &str, count: usize, seed: u64, v6: bool) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut table = std::collections::BTreeSet::new();
    while table.len() < count {
        let text = if v6 {
            let len = rng.random_range(16..=64u32);
            let addr = rng.random::<u128>() & !(u128::MAX >> len);
            format!("{}/{len}", std::net::Ipv6Addr::from(addr))
        } else {
            let len = rng.random_range(8..=24u32);
            let addr = rng.random::<u32>() & !(u32::MAX >> len);
            format!("{}/{len}", std::net::Ipv4Addr::from(addr))
        };
        table.insert(text);
    }
    let table: Vec<String> = table.into_iter().collect();
    let mut updates = Vec::new();
    for (i, prefix) in table.iter().enumerate().step_by(7) {
        updates.push(format!("W {prefix}"));
        if i % 2 == 0 {
            updates.push(format!("A {prefix}"));
        }
    }
    // Announcements of prefixes the table lacks: more specifics of its own.
    for prefix in table.iter().take(50) {
        let (addr, len) = prefix.split_once('/').unwrap();
        let len: u32 = len.parse().unwrap();
        updates.push(format!("A {addr}/{}", len + 1));
    }
    write_gz(&dir.join(format!("{SNAPSHOT}-{tag}.txt.gz")), &table);
    write_gz(
        &dir.join(format!("{SNAPSHOT}-{tag}-updates.txt.gz")),
        &updates,
    );
}

fn tiny_config() -> LookupConfig {
    LookupConfig {
        queries: 4_000,
        update_limit: None,
        plan: Plan {
            runs: 1,
            min_run: Duration::from_millis(1),
            warm_up: Duration::ZERO,
        },
        build_runs: 2,
        batch: 64,
        replay_budget: Duration::from_secs(60),
    }
}

fn options(dir: &Path) -> Options {
    Options {
        quick: true,
        threads: Some(2),
        data_dir: Some(dir.to_path_buf()),
        progress: false,
        ..Options::default()
    }
}

#[test]
fn the_lookup_experiment_runs_on_a_small_table() {
    let dir = tempfile::tempdir().unwrap();
    family_files(dir.path(), "v4", 3_000, 1, false);
    family_files(dir.path(), "v6", 1_000, 2, true);
    let experiments = vec![Registered::new(
        lookup::NAME,
        lookup::ABOUT,
        LookupExperiment::with_config(tiny_config()),
    )];
    let outcome = run_experiments(&options(dir.path()), Some("lookup"), experiments).unwrap();

    let report = &outcome.reports[0];
    assert_eq!(report.experiment, "lookup");
    let families = report.detail["families"].as_array().unwrap();
    assert_eq!(families.len(), 2);
    for (family, name, prefixes) in [(&families[0], "IPv4", 3_000), (&families[1], "IPv6", 1_000)] {
        assert_eq!(family["family"], name);
        assert_eq!(family["prefixes"], prefixes);
        assert_eq!(family["queries"], 4_000);
        assert_eq!(family["disagreements"], 0);
        assert_eq!(family["disagreements_after_updates"], 0);
        let engines = family["engines"].as_array().unwrap();
        let names: Vec<&str> = engines
            .iter()
            .map(|e| e["engine"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["fibre", "prefix-trie", "poptrie", "treebitmap"]);
        for engine in engines {
            assert!(
                engine["single_1t"]["median"].as_f64().unwrap() > 0.0,
                "{engine}"
            );
            assert!(
                engine["all_threads"]["median"].as_f64().unwrap() > 0.0,
                "{engine}"
            );
            // The counting allocator is installed here: every engine has a size.
            assert!(
                engine["bytes_per_prefix"].as_f64().unwrap() > 0.0,
                "{engine}"
            );
            assert!(engine["heap_bytes"].as_u64().unwrap() > 0, "{engine}");
            assert_eq!(engine["updates_applied"], family["updates"], "{engine}");
            let batched = &engine["batched_1t"];
            assert_eq!(batched.is_null(), engine["engine"] != "fibre", "{engine}");
        }
        assert_eq!(engines[0]["bytes_source"], "lookup_bytes()");
        assert_eq!(engines[1]["bytes_source"], "counting allocator");
    }
    // IPv6 queries are drawn inside table prefixes: every one matches.
    assert_eq!(families[1]["queries_matched"], 4_000);

    // Nine headline rows per family, all of them in the summary table.
    assert_eq!(report.measurements.len(), 18);
    let text = outcome.to_text();
    assert!(text.contains("RIPE NCC RIS"));
    assert!(text.contains("Summary (quick mode, 2 threads"));
    for m in &report.measurements {
        assert!(text.contains(&m.name), "{} missing from\n{text}", m.name);
    }
    let json = outcome.to_json();
    assert_eq!(json["summary"].as_array().unwrap().len(), 18);
    assert_eq!(json["counting_allocator"], true);
    assert_eq!(json["experiments"][0]["experiment"], "lookup");
}

#[test]
fn one_family_can_be_chosen() {
    let dir = tempfile::tempdir().unwrap();
    family_files(dir.path(), "v4", 500, 3, false);
    let experiments = vec![Registered::new(
        lookup::NAME,
        lookup::ABOUT,
        LookupExperiment::with_config(tiny_config()),
    )];
    let options = Options {
        ipv6: false,
        ..options(dir.path())
    };
    let outcome = run_experiments(&options, None, experiments).unwrap();
    let families = outcome.reports[0].detail["families"].as_array().unwrap();
    assert_eq!(families.len(), 1);
    assert_eq!(families[0]["family"], "IPv4");
}

#[test]
fn bad_requests_get_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let unknown = fibre_bench::run(&options(dir.path()), Some("nosuch")).unwrap_err();
    assert!(matches!(unknown, BenchError::UnknownExperiment { .. }));
    assert!(unknown.to_string().contains("lookup"), "{unknown}");

    let no_data = fibre_bench::run(&options(dir.path()), Some("lookup")).unwrap_err();
    assert!(no_data.to_string().contains("--data"), "{no_data}");

    let zero_threads = Options {
        threads: Some(0),
        ..options(dir.path())
    };
    let error = fibre_bench::run(&zero_threads, None).unwrap_err();
    assert!(error.to_string().contains("--threads 0"), "{error}");

    // A malformed line names its file and line.
    family_files(dir.path(), "v4", 100, 4, false);
    write_gz(
        &dir.path().join(format!("{SNAPSHOT}-v4-updates.txt.gz")),
        &["A 10.0.0.0/8".into(), "B 10.0.0.0/8".into()],
    );
    let error = fibre_bench::run(&options(dir.path()), Some("lookup")).unwrap_err();
    assert!(
        error.to_string().contains("-v4-updates.txt.gz:2:"),
        "{error}"
    );
}
