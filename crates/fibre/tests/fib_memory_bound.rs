//! An endless stream of distinct, valid routes: every line is short and
//! the line limit is far, but the FIB grows with each route. It must end
//! with a clear error (`config::MAX_ADDRESS_SPACE`) inside 2 GB of
//! address space (`ulimit -v`, as hostile_io.rs's bounded commands), not
//! with an allocation failure; a 2-million-route list still loads.

use std::process::Output;

#[path = "support/bounded.rs"]
mod limits;

/// Generous for this build (opt-level 1): the release binary ends the
/// stream in a fraction of it.
const TIME_LIMIT_S: u32 = 240;

/// Endless distinct /24 prefixes, one a line (awk, so that the stream is
/// made as fast as it is read).
const ENDLESS_PREFIXES: &str =
    "awk 'BEGIN { for (i = 0; ; i++) printf \"%d.%d.%d.0/24\\n\", 1 + int(i / 65536) % 223, int(i / 256) % 256, i % 256 }'";

fn bounded(script: &str) -> Output {
    limits::bounded(script, TIME_LIMIT_S)
}

#[test]
fn an_endless_list_of_distinct_routes_ends_at_the_memory_limit() {
    if !fibre_testkit::on_path("awk") {
        fibre_testkit::unavailable("fib_memory_bound", "awk is not installed");
        return;
    }
    // 223 x 65536 distinct /24s come round again after 14.6 million:
    // far past the limit, so the stream is endless as far as fibre sees.
    let out = bounded(&format!(
        "{ENDLESS_PREFIXES} | $FIBRE route import /dev/stdin"
    ));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{:?}: {err}", out.status);
    assert!(err.starts_with("fibre: /dev/stdin:"), "{err}");
    assert!(
        err.contains("MiB, more than the 1664 MiB fibre lets one input take; reading stopped here"),
        "{err}"
    );
    assert!(
        !err.contains("panicked") && !err.contains("memory allocation"),
        "{err}"
    );
}

#[test]
fn two_million_routes_load_within_the_limit() {
    if !fibre_testkit::on_path("awk") {
        fibre_testkit::unavailable("fib_memory_bound", "awk is not installed");
        return;
    }
    let out = bounded(&format!(
        "{ENDLESS_PREFIXES} | head -n 2000000 | $FIBRE route import /dev/stdin"
    ));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("imported 2000000 routes"), "{text}");
}
