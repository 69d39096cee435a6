//! The kernel differential test: the Linux kernel is the oracle for
//! `fibre lookup`.
//!
//! Each case is a configuration (`ip -batch` syntax, `-4`/`-6` allowed
//! first on a line) and a list of `ip route get` queries. The kernel side
//! loads the configuration into a new network namespace (`lo` down until
//! the configuration says `link set lo up`; forwarding on, rp_filter off,
//! no IPv6 link-local addresses) with `ip -force -batch` and asks every
//! query in one `ip -j -batch` process, each also as `fibmatch`; the fibre
//! side runs `fibre lookup --config FILE --force -j` with the queries, each
//! also as `fibmatch`, on stdin. Both the lines each side refused and the answers are compared
//! (see `kernel_diff/compare.rs` for which fields, and why).
//!
//! Tests: seeded random cases; a handwritten configuration covering every
//! route type and wg-quick's rules; the corpus of cases that once failed
//! (`tests/corpus/*.case`), replayed against the kernel every time; and two
//! checks of the oracle itself that need no fibre.
//!
//! The namespace hashes ECMP flows by L4 (queries may name `ipproto`,
//! `sport`, `dport`); fibre's answer need only be one of the live paths.
//! Not generated: multicast destinations, rules with `ipproto`/`sport`/
//! `dport` selectors (fibre's rules have none), IPv4 rotation among
//! equal-metric default routes (not modelled), deprecated or temporary
//! IPv6 addresses (RFC 6724 rules fibre does not rank).
//!
//! They need root and `ip` (iproute2). Without them they print why and
//! return; `FIBRE_REQUIRE_TOOLS=1` turns that into a failure (for CI;
//! see `fibre_testkit::unavailable`).
//!
//! Settings (environment):
//! - `FIBRE_DIFF_SEEDS` (20): random configurations;
//! - `FIBRE_DIFF_QUERIES` (300): queries per configuration;
//! - `FIBRE_DIFF_SEED_BASE` (1): first seed (seeds are consecutive);
//! - `FIBRE_DIFF_TIME_LIMIT` (90): seconds after which no new seed starts;
//! - `FIBRE_DIFF_NEW_CASES` (4): new corpus cases written per run, one per
//!   cause, minimised (0: write none);
//! - `FIBRE_DIFF_CORPUS_DIR`: where corpus cases are written and replayed
//!   from, instead of `tests/corpus` (e.g. to shrink one case per cause);
//! - `FIBRE_DIFF_STRICT_PREFSRC=1`: a `prefsrc` difference fails;
//! - `FIBRE_DIFF_SHOW` (5): mismatches shown in detail per case.

#[path = "kernel_diff/addr.rs"]
mod addr;
#[path = "kernel_diff/answer.rs"]
mod answer;
#[path = "kernel_diff/compare.rs"]
mod compare;
#[path = "kernel_diff/corpus.rs"]
mod corpus;
#[path = "kernel_diff/fibre_cli.rs"]
mod fibre_cli;
#[path = "kernel_diff/generate.rs"]
mod generate;
#[path = "kernel_diff/kernel.rs"]
mod kernel;
#[path = "kernel_diff/process.rs"]
mod process;
#[path = "kernel_diff/report.rs"]
mod report;
#[path = "kernel_diff/rng.rs"]
mod rng;

use std::time::{Duration, Instant};

use report::{CaseOutcome, Mismatch, Tally};

/// The test's knobs, from the environment.
#[derive(Debug, Clone)]
struct Settings {
    seeds: u64,
    queries: usize,
    seed_base: u64,
    time_limit: Duration,
    new_cases: usize,
    strict_prefsrc: bool,
    show: usize,
}

fn settings() -> Settings {
    Settings {
        seeds: fibre_testkit::env_number("FIBRE_DIFF_SEEDS", 20),
        queries: fibre_testkit::env_number("FIBRE_DIFF_QUERIES", 300) as usize,
        seed_base: fibre_testkit::env_number("FIBRE_DIFF_SEED_BASE", 1),
        time_limit: Duration::from_secs(fibre_testkit::env_number("FIBRE_DIFF_TIME_LIMIT", 90)),
        new_cases: fibre_testkit::env_number("FIBRE_DIFF_NEW_CASES", 4) as usize,
        strict_prefsrc: fibre_testkit::env_number("FIBRE_DIFF_STRICT_PREFSRC", 0) != 0,
        show: fibre_testkit::env_number("FIBRE_DIFF_SHOW", 5) as usize,
    }
}

/// Loads `config` into a fresh namespace and asks every query; the
/// namespace is gone when this returns.
fn ask_kernel(
    config: &[String],
    queries: &[String],
) -> Result<(Vec<kernel::Refusal>, Vec<kernel::KernelReply>), String> {
    let ns = kernel::Netns::create()?;
    let refusals = ns.load(config)?;
    let replies = ns.ask(queries)?;
    Ok((refusals, replies))
}

/// Runs one case on both sides and compares every answer.
fn run_case(
    config: &[String],
    queries: &[String],
    strict_prefsrc: bool,
) -> Result<CaseOutcome, String> {
    let (refusals, replies) = ask_kernel(config, queries)?;
    let fibre = fibre_cli::lookup(config, queries)?;
    let mut outcome = CaseOutcome {
        refusal_differences: report::refusal_differences(&refusals, &fibre.refusals),
        refusals,
        ..CaseOutcome::default()
    };
    let refused: Vec<usize> = outcome.refusals.iter().map(|r| r.line).collect();
    let locals = compare::local_addresses(config, &refused);
    let answers = queries
        .iter()
        .zip(replies)
        .zip(fibre.outcomes)
        .zip(fibre.routes);
    for (index, (((query, kernel), fibre), fibre_route)) in answers.enumerate() {
        let mut verdict = compare::compare(&kernel, &fibre, strict_prefsrc, &locals);
        verdict
            .fields
            .extend(compare::compare_fibmatch(&kernel.route, &fibre_route));
        outcome.compared += 1;
        for note in &verdict.notes {
            *outcome.notes.entry((*note).to_string()).or_default() += 1;
        }
        if !verdict.agrees() {
            let cause = compare::cause(query, &kernel, &fibre, &verdict);
            outcome.mismatches.push(Mismatch {
                index,
                query: query.clone(),
                kernel,
                fibre,
                fibre_route,
                verdict,
                cause,
            });
        }
    }
    Ok(outcome)
}

/// Shrinks a failing (config, query) pair and writes it to the corpus,
/// unless the same content is there already. Returns the file written.
fn save_to_corpus(
    origin: &str,
    config: &[String],
    mismatch: &Mismatch,
    strict_prefsrc: bool,
    deadline: Instant,
) -> Result<Option<std::path::PathBuf>, String> {
    let queries = vec![mismatch.query.clone()];
    // The same cause (fields and both outcome classes, e.g. the same error
    // text), so that shrinking cannot drift to another bug, such as the
    // one a removed `link add` would make.
    let fails_the_same_way =
        |candidate: &[String]| match run_case(candidate, &queries, strict_prefsrc) {
            Ok(outcome) => outcome
                .mismatches
                .first()
                .is_some_and(|m| m.cause == mismatch.cause),
            Err(_) => false,
        };
    let alone = fails_the_same_way(config);
    let minimal = if alone {
        corpus::minimise(config, 60, deadline, fails_the_same_way)
    } else {
        config.to_vec()
    };
    let label = compare::label(&mismatch.query, &mismatch.verdict);
    let name = corpus::file_name(&label, &minimal, &queries);
    let path = corpus::directory().join(&name);
    if corpus::holds_same_content(&corpus::directory(), &name) {
        return Ok(None);
    }
    let mut comments = vec![
        "A (configuration, query) pair on which fibre and the kernel once disagreed;".to_string(),
        "replayed against both by kernel_diff.rs (the kernel, asked afresh, is the expectation)."
            .to_string(),
        format!("found by: {origin}, query {}", mismatch.index + 1),
        format!("cause then: {}", mismatch.cause),
        format!(
            "kernel then (not used): {}",
            mismatch.kernel.answer.render()
        ),
        format!("fibre then (not used): {}", mismatch.fibre.render()),
    ];
    if !alone {
        comments.push("did not fail with this query alone: kept whole, not minimised".into());
    }
    std::fs::create_dir_all(corpus::directory()).map_err(|e| e.to_string())?;
    // Written aside and renamed, so that the corpus test, running at the
    // same time, never reads half a file.
    let partial = path.with_extension("partial");
    std::fs::write(&partial, corpus::render(&comments, &minimal, &queries))
        .map_err(|e| format!("{}: {e}", partial.display()))?;
    std::fs::rename(&partial, &path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Some(path))
}

/// Writes a whole failing random case, in the corpus format, to the temp
/// directory, so that it can be read or replayed (copy it into
/// `tests/corpus/`) without regenerating the seed.
fn keep_for_reproduction(seed: u64, case: &generate::Case) {
    let path = std::env::temp_dir().join(format!("fibre-diff-seed-{seed}.case"));
    let comments = vec![format!(
        "kernel_diff random case, seed {seed} (FIBRE_DIFF_SEED_BASE={seed} FIBRE_DIFF_SEEDS=1 FIBRE_DIFF_QUERIES={})",
        case.queries.len()
    )];
    match std::fs::write(
        &path,
        corpus::render(&comments, &case.config, &case.queries),
    ) {
        Ok(()) => eprintln!("kernel_diff seed {seed}: whole case in {}", path.display()),
        Err(e) => eprintln!(
            "kernel_diff seed {seed}: could not write {}: {e}",
            path.display()
        ),
    }
}

#[test]
fn random_configurations_agree_with_the_kernel() {
    let settings = settings();
    if !kernel::available("kernel_diff") {
        return;
    }
    let started = Instant::now();
    let mut tally = Tally::default();
    let mut saved = 0;
    for seed in settings.seed_base..settings.seed_base + settings.seeds {
        if started.elapsed() > settings.time_limit {
            eprintln!("kernel_diff: time limit reached; seeds from {seed} not run");
            break;
        }
        let case = generate::case(seed, settings.queries);
        let origin = format!("seed {seed}");
        let outcome = match run_case(&case.config, &case.queries, settings.strict_prefsrc) {
            Ok(outcome) => outcome,
            Err(e) => {
                tally.add_failure(&origin, &e);
                continue;
            }
        };
        report::print_case(&origin, &case.config, &outcome, settings.show);
        if !outcome.mismatches.is_empty() || !outcome.refusal_differences.is_empty() {
            keep_for_reproduction(seed, &case);
        }
        for mismatch in &outcome.mismatches {
            let in_time = started.elapsed() < settings.time_limit;
            if in_time && saved < settings.new_cases && !tally.has_cause(&mismatch.cause) {
                // Shrinking is bounded too: 10 s a case, within the run's limit.
                let deadline = Instant::now() + Duration::from_secs(10);
                match save_to_corpus(
                    &origin,
                    &case.config,
                    mismatch,
                    settings.strict_prefsrc,
                    deadline,
                ) {
                    Ok(Some(path)) => {
                        saved += 1;
                        eprintln!("kernel_diff: new corpus case {}", path.display());
                    }
                    Ok(None) => {}
                    Err(e) => eprintln!("kernel_diff: could not save a corpus case: {e}"),
                }
            }
            tally.add_mismatch(&origin, mismatch);
        }
        tally.add_case(&origin, &case.config, &outcome);
    }
    tally.print("random configurations");
    assert!(
        tally.clean(),
        "{} of {} answers differ from the kernel's, {} configuration lines refused differently, {} cases could not run (causes above)",
        tally.mismatches,
        tally.compared,
        tally.refusal_mismatches,
        tally.failures.len()
    );
    assert!(tally.compared > 0, "no query was compared");
}

fn text_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

fn handwritten() -> (Vec<String>, Vec<String>) {
    (
        text_lines(include_str!("kernel_diff/handwritten.conf")),
        text_lines(include_str!("kernel_diff/handwritten.queries")),
    )
}

/// The oracle itself, without fibre: the handwritten configuration loads
/// cleanly, every query gets its own answer in order, and a few answers
/// whose kernel behaviour is long settled come back as such (so a framing
/// or parsing slip in the harness cannot pass unnoticed).
#[test]
fn the_kernel_oracle_answers_in_order() {
    if !kernel::available("kernel_diff") {
        return;
    }
    let (config, queries) = handwritten();
    let (refusals, replies) = ask_kernel(&config, &queries).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        refusals.is_empty(),
        "the handwritten configuration is meant to be valid; the kernel refused {refusals:?}"
    );
    assert_eq!(replies.len(), queries.len());
    let reply = |query: &str| {
        let index = queries
            .iter()
            .position(|q| q == query)
            .unwrap_or_else(|| panic!("{query} is not in handwritten.queries"));
        &replies[index]
    };
    let error = |query: &str| match &reply(query).answer {
        answer::Outcome::Error(e) => e.clone(),
        other => panic!("{query}: expected an error, got {other:?}"),
    };
    let route = |query: &str| match &reply(query).answer {
        answer::Outcome::Answer(a) => a.clone(),
        other => panic!("{query}: expected an answer, got {other:?}"),
    };
    assert_eq!(error("203.0.113.1"), "Invalid argument", "blackhole route");
    assert_eq!(
        error("203.0.113.65"),
        "No route to host",
        "unreachable route"
    );
    assert_eq!(
        error("203.0.113.129"),
        "Permission denied",
        "prohibit route"
    );
    assert_eq!(
        error("8.8.8.8 mark 16"),
        "Permission denied",
        "prohibit rule"
    );
    let local = route("10.1.0.1");
    assert_eq!(
        (
            local.kind.as_str(),
            local.dev.as_deref(),
            local.table.as_str()
        ),
        ("local", Some("lo"), "local")
    );
    let thrown = route("203.0.113.200");
    assert_eq!(
        (thrown.table.as_str(), thrown.gateway),
        ("101", Some("10.1.0.5".parse().unwrap()))
    );
    let ecmp = &reply("198.51.100.1").route;
    assert!(
        matches!(ecmp, answer::Outcome::Answer(a) if a.paths.len() == 2),
        "{ecmp:?}"
    );
    assert_eq!(route("2001:db8:1::1").kind, "local");
    assert_eq!(route("2001:db8:1::").kind, "anycast");
}

/// `ip -force -batch` exits on some malformed lines instead of going on;
/// the loader must refuse that line and still apply the ones after it.
#[test]
fn the_kernel_loader_goes_on_after_ip_gives_up() {
    if !kernel::available("kernel_diff") {
        return;
    }
    let config = text_lines(
        "link add fd0 type ifb
         link set fd0 up
         route add 10.7.0.0/16 dev nosuch
         route add 10.8.0.0/16 dev fd0 metric bogus
         route add 10.9.0.0/16 dev fd0
         route add 10.9.0.0/16 dev fd0",
    );
    let queries = text_lines("10.9.1.1\n10.7.1.1");
    let (refusals, replies) = ask_kernel(&config, &queries).unwrap_or_else(|e| panic!("{e}"));
    let lines: Vec<(usize, &str)> = refusals
        .iter()
        .map(|r| (r.line, r.message.as_str()))
        .collect();
    assert_eq!(lines.len(), 3, "{refusals:?}");
    assert_eq!(lines[0].0, 3);
    assert!(lines[0].1.contains("Cannot find device"), "{refusals:?}");
    assert_eq!(lines[1].0, 4);
    assert!(lines[1].1.contains("metric"), "{refusals:?}");
    assert_eq!(lines[2], (6, "File exists"));
    assert!(
        matches!(&replies[0].answer, answer::Outcome::Answer(a) if a.dev.as_deref() == Some("fd0")),
        "{:?}",
        replies[0]
    );
    assert_eq!(
        replies[1].answer,
        answer::Outcome::Error("Network is unreachable".into())
    );
}

#[test]
fn handwritten_configuration_agrees_with_the_kernel() {
    let settings = settings();
    if !kernel::available("kernel_diff") {
        return;
    }
    let (config, queries) = handwritten();
    let outcome =
        run_case(&config, &queries, settings.strict_prefsrc).unwrap_or_else(|e| panic!("{e}"));
    report::print_case("handwritten", &config, &outcome, usize::MAX);
    let mut tally = Tally::default();
    for mismatch in &outcome.mismatches {
        tally.add_mismatch("handwritten", mismatch);
    }
    tally.add_case("handwritten", &config, &outcome);
    tally.print("handwritten configuration");
    assert!(
        outcome.mismatches.is_empty() && outcome.refusal_differences.is_empty(),
        "{} of {} answers differ from the kernel's; lines refused differently: {:?}",
        outcome.mismatches.len(),
        outcome.compared,
        outcome.refusal_differences
    );
}

#[test]
fn corpus_cases_agree_with_the_kernel() {
    let settings = settings();
    if !kernel::available("kernel_diff") {
        return;
    }
    let cases = corpus::load_all().unwrap_or_else(|e| panic!("{e}"));
    let mut tally = Tally::default();
    for case in &cases {
        let origin = case.path.display().to_string();
        let outcome = match run_case(&case.config, &case.queries, settings.strict_prefsrc) {
            Ok(outcome) => outcome,
            Err(e) => {
                tally.add_failure(&origin, &e);
                continue;
            }
        };
        report::print_case(&origin, &case.config, &outcome, usize::MAX);
        for mismatch in &outcome.mismatches {
            tally.add_mismatch(&origin, mismatch);
        }
        tally.add_case(&origin, &case.config, &outcome);
    }
    tally.print(&format!("corpus ({} cases)", cases.len()));
    assert!(
        tally.clean(),
        "{} of {} corpus answers differ from the kernel's, {} lines refused differently, {} cases could not run",
        tally.mismatches,
        tally.compared,
        tally.refusal_mismatches,
        tally.failures.len()
    );
}
