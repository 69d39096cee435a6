//! Running a child process with a time limit, feeding its stdin and
//! collecting stdout and stderr without the pipes filling up:
//! `fibre_testkit::process` (shared with the namespaces and the bench).

#[allow(unused_imports)] // each test uses the parts it needs
pub use fibre_testkit::process::*;
