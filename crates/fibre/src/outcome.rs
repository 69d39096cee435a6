//! How a command ended, for the exit status: 0 success, 1 usage or
//! configuration error (an `Err`), 2 a lookup the kernel would refuse.

/// A command that ran to the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Success,
    /// The FIB refused the query (`RTNETLINK answers: ...` was printed): exit 2 like `ip`.
    Refused,
    /// A line of a batch was refused and the rest not run (`ip -batch`'s
    /// `Command failed FILE:LINE`, by `fibre ctl`): exit 1 like `ip`.
    Failed,
}

impl Outcome {
    /// The process exit status.
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Success => 0,
            Outcome::Refused => 2,
            Outcome::Failed => 1,
        }
    }
}
