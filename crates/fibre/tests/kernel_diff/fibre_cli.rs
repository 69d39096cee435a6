//! The fibre side: `fibre lookup --config FILE --force -j`, queries on
//! stdin, one JSON object per line on stdout; with `--force` the lines it
//! refuses are reported on stderr as `FILE:N: MESSAGE` (as `ip -force`
//! would print them) and skipped.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::answer::{self, Outcome};
use super::kernel::Refusal;
use super::process;

/// Limit for one `fibre lookup` process.
const FIBRE_LIMIT: Duration = Duration::from_secs(60);

static NEXT_FILE: AtomicUsize = AtomicUsize::new(0);

/// A configuration file that removes itself.
pub struct TempConfig {
    /// Where it is.
    pub path: PathBuf,
}

impl TempConfig {
    /// Writes `config`, one line each, to a new file in the temp directory.
    pub fn write(config: &[String]) -> Result<TempConfig, String> {
        let path = std::env::temp_dir().join(format!(
            "fibre-diff-{}-{}.conf",
            std::process::id(),
            NEXT_FILE.fetch_add(1, Ordering::Relaxed)
        ));
        let text: String = config.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
        Ok(TempConfig { path })
    }
}

impl Drop for TempConfig {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// What fibre made of a case.
#[derive(Debug, Clone)]
pub struct FibreRun {
    /// Configuration lines it refused.
    pub refusals: Vec<Refusal>,
    /// One outcome per query.
    pub outcomes: Vec<Outcome>,
    /// fibre's `fibmatch` answer to each query (the FIB route matched).
    pub routes: Vec<Outcome>,
}

/// Asks `fibre lookup` every query against `config`.
pub fn lookup(config: &[String], queries: &[String]) -> Result<FibreRun, String> {
    let file = TempConfig::write(config)?;
    let mut command = Command::new(env!("CARGO_BIN_EXE_fibre"));
    command
        .arg("lookup")
        .arg("--config")
        .arg(&file.path)
        .arg("--force")
        .arg("-j");
    // Each query is asked twice, as the kernel is: plain and `fibmatch`.
    let input: String = queries
        .iter()
        .map(|q| format!("{q}\nfibmatch {q}\n"))
        .collect();
    let done = process::run(command, &input, FIBRE_LIMIT)?;
    if done.code != Some(0) {
        return Err(format!(
            "fibre lookup exited with {:?}: {}",
            done.code,
            done.stderr.trim()
        ));
    }
    let lines: Vec<&str> = done
        .stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect();
    if lines.len() != 2 * queries.len() {
        return Err(format!(
            "fibre lookup printed {} answers for {} queries (each asked twice); stderr: {}",
            lines.len(),
            queries.len(),
            done.stderr.trim()
        ));
    }
    let parsed = lines
        .iter()
        .map(|l| answer::parse_json_answer(l))
        .collect::<Result<Vec<_>, _>>()?;
    let (outcomes, routes) = parsed
        .chunks(2)
        .map(|pair| (pair[0].clone(), pair[1].clone()))
        .unzip();
    let prefix = format!("{}:", file.path.display());
    Ok(FibreRun {
        refusals: parse_refusals(&done.stderr, &prefix),
        outcomes,
        routes,
    })
}

/// The `PREFIX N: MESSAGE` lines of fibre's stderr (PREFIX is `FILE:`).
fn parse_refusals(stderr: &str, prefix: &str) -> Vec<Refusal> {
    stderr
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix(prefix)?;
            let (number, message) = rest.split_once(':')?;
            Some(Refusal {
                line: number.trim().parse().ok()?,
                message: answer::normalise_error(message),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_read_from_stderr() {
        let stderr = "/tmp/x.conf:5: RTNETLINK answers: File exists\n/tmp/x.conf:6: Error: Nexthop has invalid gateway.\nsomething else\n/tmp/other:7: nope\n";
        let refusals = parse_refusals(stderr, "/tmp/x.conf:");
        assert_eq!(
            refusals,
            vec![
                Refusal {
                    line: 5,
                    message: "File exists".into()
                },
                Refusal {
                    line: 6,
                    message: "Nexthop has invalid gateway".into()
                },
            ]
        );
    }
}
