//! The corpus of cases that once failed: `tests/corpus/*.case` files,
//! replayed against the kernel and fibre on every run (the kernel, asked
//! afresh, is the expectation; nothing in a file says what the answer is),
//! and the line-removal minimiser that shrinks a new case before it is
//! written.
//!
//! File format: `#` comments, then a `[config]` section (configuration
//! lines) and a `[queries]` section (`route get` arguments).

use std::path::{Path, PathBuf};
use std::time::Instant;

/// A corpus case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorpusCase {
    /// Where it was read from.
    pub path: PathBuf,
    /// Configuration lines.
    pub config: Vec<String>,
    /// Queries.
    pub queries: Vec<String>,
}

/// The corpus directory: `tests/corpus`, or `FIBRE_DIFF_CORPUS_DIR` (to
/// collect minimised cases somewhere else, or to replay them from there).
pub fn directory() -> PathBuf {
    match std::env::var_os("FIBRE_DIFF_CORPUS_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests")
            .join("corpus"),
    }
}

/// Renders a case file.
pub fn render(comments: &[String], config: &[String], queries: &[String]) -> String {
    let mut text = String::new();
    for comment in comments {
        for line in comment.lines() {
            text.push_str(&format!("# {line}\n"));
        }
    }
    text.push_str("[config]\n");
    for line in config {
        text.push_str(&format!("{line}\n"));
    }
    text.push_str("[queries]\n");
    for query in queries {
        text.push_str(&format!("{query}\n"));
    }
    text
}

/// Parses a case file's text.
pub fn parse(path: &Path, text: &str) -> Result<CorpusCase, String> {
    let mut section = None;
    let mut config = Vec::new();
    let mut queries = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        match trimmed {
            "[config]" => section = Some(&mut config),
            "[queries]" => section = Some(&mut queries),
            _ => match section.as_deref_mut() {
                Some(lines) => lines.push(trimmed.to_string()),
                None => {
                    return Err(format!(
                        "{}:{}: line outside [config]/[queries]",
                        path.display(),
                        number + 1
                    ))
                }
            },
        }
    }
    if queries.is_empty() {
        return Err(format!("{}: no [queries]", path.display()));
    }
    Ok(CorpusCase {
        path: path.to_path_buf(),
        config,
        queries,
    })
}

/// Every `*.case` file of the corpus, sorted by name.
pub fn load_all() -> Result<Vec<CorpusCase>, String> {
    load_from(&directory())
}

/// Every `*.case` file of `dir`, sorted by name (none when it is missing).
pub fn load_from(dir: &Path) -> Result<Vec<CorpusCase>, String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "case"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            parse(p, &text)
        })
        .collect()
}

/// A stable name for a case's content (FNV-1a, so it does not change
/// between Rust releases).
pub fn file_name(label: &str, config: &[String], queries: &[String]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in config
        .iter()
        .chain(queries)
        .flat_map(|l| l.bytes().chain([b'\n']))
    {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let label: String = label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("{label}-{hash:016x}.case")
}

/// True when `directory` already holds a case with the content of the file
/// named `name` (the same hash), whatever its label: labels change when the
/// comparison names a cause differently, the content does not.
pub fn holds_same_content(directory: &Path, name: &str) -> bool {
    let Some((_, hash)) = name.rsplit_once('-') else {
        return false;
    };
    let suffix = format!("-{hash}");
    std::fs::read_dir(directory)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .any(|e| e.file_name().to_string_lossy().ends_with(&suffix))
        })
        .unwrap_or(false)
}

/// Removes configuration lines while `still_fails` holds (delta debugging,
/// chunks halving down to single lines), within `max_tries` calls and
/// until `deadline`. Returns the smallest configuration found.
pub fn minimise(
    config: &[String],
    max_tries: usize,
    deadline: Instant,
    mut still_fails: impl FnMut(&[String]) -> bool,
) -> Vec<String> {
    let mut current = config.to_vec();
    let mut tries = 0;
    let mut chunk = current.len().div_ceil(2).max(1);
    loop {
        let mut start = 0;
        while start < current.len() {
            if tries >= max_tries || Instant::now() >= deadline {
                return current;
            }
            let end = (start + chunk).min(current.len());
            let candidate: Vec<String> = current[..start]
                .iter()
                .chain(&current[end..])
                .cloned()
                .collect();
            tries += 1;
            if still_fails(&candidate) {
                current = candidate;
            } else {
                start = end;
            }
        }
        if chunk == 1 {
            return current;
        }
        chunk = chunk.div_ceil(2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn lines(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_same_content_under_another_label_is_found() {
        let directory = std::env::temp_dir().join(format!("fibre-corpus-{}", std::process::id()));
        std::fs::create_dir_all(&directory).unwrap();
        let config = lines(&["link add fd0 type ifb"]);
        let queries = lines(&["10.0.0.1"]);
        let old = file_name("v4-output-table", &config, &queries);
        std::fs::write(directory.join(&old), "").unwrap();
        let renamed = file_name("v4-output-table0-shown", &config, &queries);
        let other = file_name("v4-output-table", &config, &lines(&["10.0.0.2"]));
        let found = (
            holds_same_content(&directory, &renamed),
            holds_same_content(&directory, &other),
        );
        std::fs::remove_dir_all(&directory).unwrap();
        assert_eq!(found, (true, false));
    }

    #[test]
    fn render_and_parse_round_trip() {
        let config = lines(&[
            "link add fd0 type ifb",
            "-4 rule add table main suppress_prefixlength 0",
        ]);
        let queries = lines(&["10.0.0.1 from 10.0.0.2 iif fd0"]);
        let text = render(&["found by seed 3".into()], &config, &queries);
        let case = parse(Path::new("x.case"), &text).unwrap();
        assert_eq!(case.config, config);
        assert_eq!(case.queries, queries);
        assert!(parse(Path::new("y.case"), "stray line\n[queries]\n1.2.3.4\n").is_err());
        assert!(parse(Path::new("z.case"), "[config]\nlink add fd0 type ifb\n").is_err());
    }

    #[test]
    fn minimise_keeps_exactly_the_lines_the_failure_needs() {
        let config = lines(&["a", "b", "c", "d", "e", "f", "g"]);
        let needs = |c: &[String]| c.iter().any(|l| l == "b") && c.iter().any(|l| l == "f");
        let far = Instant::now() + Duration::from_secs(60);
        assert_eq!(minimise(&config, 100, far, needs), lines(&["b", "f"]));
    }

    #[test]
    fn minimise_respects_its_try_budget() {
        let config = lines(&["a", "b", "c", "d"]);
        let mut calls = 0;
        let far = Instant::now() + Duration::from_secs(60);
        let _ = minimise(&config, 2, far, |_| {
            calls += 1;
            false
        });
        assert_eq!(calls, 2);
    }

    #[test]
    fn file_names_are_stable_and_content_addressed() {
        let a = file_name("v4 input: gateway", &lines(&["x"]), &lines(&["1.2.3.4"]));
        assert_eq!(
            a,
            file_name("v4 input: gateway", &lines(&["x"]), &lines(&["1.2.3.4"]))
        );
        assert_ne!(
            a,
            file_name("v4 input: gateway", &lines(&["y"]), &lines(&["1.2.3.4"]))
        );
        assert!(a.starts_with("v4-input--gateway-") && a.ends_with(".case"));
    }
}
