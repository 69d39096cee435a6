//! Running `fibre` as hostile input would: in `sh`, with `$FIBRE` set,
//! inside 2 GB of address space (`ulimit -v`) and a time limit
//! (`timeout`), however long or endless its input.

use std::process::{Command, Output, Stdio};

/// The address space every bounded command runs in (`ulimit -v`, KiB).
pub const ADDRESS_SPACE_KIB: u32 = 2_000_000;

/// Runs `script` in `sh` with `$FIBRE` set, in [`ADDRESS_SPACE_KIB`] and
/// `seconds`.
pub fn bounded(script: &str, seconds: u32) -> Output {
    let limits = format!("ulimit -v {ADDRESS_SPACE_KIB}; exec timeout {seconds} sh -c \"$SCRIPT\"");
    Command::new("sh")
        .args(["-c", &limits])
        .env("FIBRE", env!("CARGO_BIN_EXE_fibre"))
        .env("SCRIPT", script)
        .stdin(Stdio::null())
        .output()
        .expect("run sh")
}
