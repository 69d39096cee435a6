//! Writing to stdout and stderr without panicking.
//!
//! `println!` and `eprintln!` panic when the write fails, and a reader
//! that stops early (`fibre route show | head -1`) makes every later write
//! fail with `EPIPE`. `ip` writes with stdio and is killed by `SIGPIPE`
//! then: no message, and the shell reports status 141. Rust starts its
//! programs with `SIGPIPE` ignored, so fibre sees `EPIPE` instead; it ends
//! the same way ([`exit_on_closed_pipe`]). Messages for stderr go through
//! [`warn`]; results go to a [`std::io::Write`] whose errors travel up to
//! `main`, which asks [`closed_pipe`] before reporting them.

use std::fmt::Display;
use std::io::{self, Write};

/// Prints `message` and a newline on stderr. A closed stderr ends the
/// process as [`exit_on_closed_pipe`] does; any other failure to write
/// is let be (there is nowhere left to report it).
pub fn warn(message: impl Display) {
    if let Err(err) = writeln!(io::stderr().lock(), "{message}") {
        if err.kind() == io::ErrorKind::BrokenPipe {
            exit_on_closed_pipe();
        }
    }
}

/// True when `err` is, or was caused by, a write to a pipe whose reader
/// has gone.
pub fn closed_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Ends the process as `ip` ends when its output pipe closes: killed by
/// `SIGPIPE`, which the parent sees (status 141 in a shell); what is left
/// to print has no reader.
pub fn exit_on_closed_pipe() -> ! {
    // SAFETY: `signal` and `raise` are async-signal-safe libc calls with
    // valid arguments (a standard signal number and its default action);
    // restoring the default action of SIGPIPE changes no Rust invariant,
    // and the signal then ends the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    // Not reached while SIGPIPE can be delivered; a shell's status for it
    // otherwise.
    std::process::exit(128 + libc::SIGPIPE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_is_found_under_context() {
        let err = anyhow::Error::from(io::Error::from(io::ErrorKind::BrokenPipe))
            .context("writing the routes");
        assert!(closed_pipe(&err));
        let other = anyhow::Error::from(io::Error::from(io::ErrorKind::NotFound));
        assert!(!closed_pipe(&other.context("x")));
        assert!(!closed_pipe(&anyhow::anyhow!("Broken pipe")));
    }
}
