//! A scratch directory for the CLI tests' input files: named by the
//! test's prefix, a tag and the process id, removed when dropped (also
//! when the test panics).

use std::path::{Path, PathBuf};

/// A directory `fibre-PREFIX-TAG-PID` in the temporary directory.
pub struct Scratch(PathBuf);

#[allow(dead_code)] // each test file uses the parts it needs
impl Scratch {
    /// Makes the directory (and any left from an earlier run is reused).
    pub fn new(prefix: &str, tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("fibre-{prefix}-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// Writes `bytes` to `name` in the directory; returns its path.
    pub fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// [`Scratch::file`], the path as a command-line argument.
    pub fn file_arg(&self, name: &str, bytes: &[u8]) -> String {
        self.file(name, bytes).display().to_string()
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
