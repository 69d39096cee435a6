//! What the CLI tests that write one configuration and run `fibre` on it
//! share: the file, removed on drop, and the run.

use std::path::PathBuf;
use std::process::{Command, Output};

/// A configuration file in the temporary directory, named by the test's
/// prefix, a tag and the process id; removed when dropped.
pub struct ConfigFile(PathBuf);

impl ConfigFile {
    /// Writes `text` to `fibre-PREFIX-TAG-PID.conf`.
    pub fn new(prefix: &str, tag: &str, text: &str) -> ConfigFile {
        let name = format!("fibre-{prefix}-{tag}-{}.conf", std::process::id());
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, text).unwrap();
        ConfigFile(path)
    }

    /// The path, as an argument.
    pub fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for ConfigFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs the `fibre` binary with `args` and no input.
pub fn fibre(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fibre"))
        .args(args)
        .output()
        .expect("run fibre")
}
