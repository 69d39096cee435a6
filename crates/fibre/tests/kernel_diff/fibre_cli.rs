//! The fibre side: `fibre lookup --config FILE -j`, queries on stdin, one
//! JSON object per line on stdout.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::answer::{self, Outcome};
use super::process;

/// Limit for one `fibre lookup` process.
const FIBRE_LIMIT: Duration = Duration::from_secs(60);

static NEXT_FILE: AtomicUsize = AtomicUsize::new(0);

/// A configuration file that removes itself.
struct TempConfig {
    path: PathBuf,
}

impl TempConfig {
    fn write(config: &[String]) -> Result<TempConfig, String> {
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

/// Asks `fibre lookup` every query against `config`; one outcome per query.
pub fn lookup(config: &[String], queries: &[String]) -> Result<Vec<Outcome>, String> {
    let file = TempConfig::write(config)?;
    let mut command = Command::new(env!("CARGO_BIN_EXE_fibre"));
    command
        .arg("lookup")
        .arg("--config")
        .arg(&file.path)
        .arg("-j");
    let input: String = queries.iter().map(|q| format!("{q}\n")).collect();
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
    if lines.len() != queries.len() {
        return Err(format!(
            "fibre lookup printed {} answers for {} queries; stderr: {}",
            lines.len(),
            queries.len(),
            done.stderr.trim()
        ));
    }
    lines.iter().map(|l| answer::parse_json_answer(l)).collect()
}
