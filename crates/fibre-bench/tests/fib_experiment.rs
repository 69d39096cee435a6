//! The FIB experiment from data files to summary rows, on small tables
//! written in the RIS files' format: it builds both families' routers,
//! checks every burst against the per-key answers, and reports each case.
//! Nothing here asserts a speed.

mod support;

use fibre_bench::experiment::run_experiments;
use fibre_bench::fib::{self, FibConfig, FibExperiment};
use fibre_bench::Registered;
use support::{one_pass, options, table_file};

#[test]
fn the_fib_experiment_runs_on_small_tables() {
    let dir = tempfile::tempdir().unwrap();
    table_file(dir.path(), "v4", 2_000);
    table_file(dir.path(), "v6", 1_000);
    let config = FibConfig {
        queries: 3_000,
        burst: 64,
        plan: one_pass(),
    };
    let experiments = vec![Registered::new(
        fib::NAME,
        fib::ABOUT,
        FibExperiment::with_config(config),
    )];
    let options = options(dir.path());
    let outcome = run_experiments(&options, Some("fib"), experiments).unwrap();
    let report = &outcome.reports[0];
    assert_eq!(report.experiment, "fib");
    let families = report.detail["families"].as_array().unwrap();
    assert_eq!(families.len(), 2);
    for (family, name, prefixes) in [(&families[0], "IPv4", 2_000), (&families[1], "IPv6", 1_000)] {
        assert_eq!(family["family"], name);
        assert_eq!(family["prefixes"], prefixes);
        let cases = family["cases"].as_array().unwrap();
        let names: Vec<(String, String)> = cases
            .iter()
            .map(|c| {
                (
                    c["rules"].as_str().unwrap().into(),
                    c["form"].as_str().unwrap().into(),
                )
            })
            .collect();
        let want = [
            ("default rules", "output"),
            ("default rules", "input"),
            ("wg-quick rules", "output"),
            ("wg-quick rules", "input"),
        ];
        assert_eq!(names, want.map(|(r, f)| (r.to_string(), f.to_string())));
        for c in cases {
            for rate in ["per_key", "burst", "per_key_all", "burst_all"] {
                assert!(c[rate]["median"].as_f64().unwrap() > 0.0, "{name} {c}");
            }
        }
    }
    // One summary row per case and family, plus the LPM comparison.
    assert_eq!(report.measurements.len(), 2 * 5);
    let text = outcome.to_text();
    assert!(
        text.contains("IPv4 output burst, default rules, 1 thread"),
        "{text}"
    );
    assert!(text.contains("x per key"), "{text}");
    assert!(text.contains("x LPM lookup_batch"), "{text}");
}

/// `fibre bench` lists the experiment.
#[test]
fn the_registry_holds_the_fib_experiment() {
    let names: Vec<_> = fibre_bench::registry().iter().map(|e| e.name).collect();
    assert!(names.contains(&"fib"), "{names:?}");
}
