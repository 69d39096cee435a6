//! The forwarding experiment from data files to summary rows, on small
//! tables: both families' routers, every frame forwarded (the experiment
//! stops otherwise), each rate measured. Nothing here asserts a speed.

mod support;

use fibre_bench::experiment::run_experiments;
use fibre_bench::forward::{self, ForwardConfig, ForwardExperiment};
use fibre_bench::Registered;
use support::{one_pass, options, table_file};

#[test]
fn the_forwarding_experiment_runs_on_small_tables() {
    let dir = tempfile::tempdir().unwrap();
    table_file(dir.path(), "v4", 2_000);
    table_file(dir.path(), "v6", 1_000);
    let config = ForwardConfig {
        frames: 2_000,
        plan: one_pass(),
    };
    let experiments = vec![Registered::new(
        forward::NAME,
        forward::ABOUT,
        ForwardExperiment::with_config(config),
    )];
    let options = options(dir.path());
    let outcome = run_experiments(&options, Some(forward::NAME), experiments).unwrap();
    let report = &outcome.reports[0];
    assert_eq!(report.experiment, "forward-core");
    let families = report.detail["families"].as_array().unwrap();
    assert_eq!(families.len(), 2);
    for (family, name, prefixes, frame_len) in [
        (&families[0], "IPv4", 2_000, 60),
        (&families[1], "IPv6", 1_000, 70),
    ] {
        assert_eq!(family["family"], name);
        assert_eq!(family["prefixes"], prefixes);
        assert_eq!(family["frame_len"], frame_len);
        for rate in ["one_at_a_time", "burst", "burst_all", "lpm_batched"] {
            assert!(
                family[rate]["median"].as_f64().unwrap() > 0.0,
                "{name} {rate}"
            );
        }
    }
    // Per family: burst against one at a time, against the LPM, 2 workers.
    assert_eq!(report.measurements.len(), 2 * 3);
    let text = outcome.to_text();
    assert!(text.contains("IPv4 forward burst, 1 worker"), "{text}");
    assert!(text.contains("x one at a time"), "{text}");
}
