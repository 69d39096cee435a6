//! Errors with the kernel's errno and message.

use std::fmt;

/// The errno values the kernel answers with, and `strerror`'s text for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Errno {
    /// EPERM
    Perm,
    /// ENOENT
    NoEnt,
    /// ESRCH
    Srch,
    /// EACCES
    Acces,
    /// EEXIST
    Exist,
    /// ENODEV
    NoDev,
    /// ENXIO: `IPv6 is disabled on this device` (no inet6_dev).
    NxIo,
    /// EINVAL
    Inval,
    /// ERANGE
    Range,
    /// ENETDOWN
    NetDown,
    /// ENETUNREACH
    NetUnreach,
    /// EHOSTUNREACH
    HostUnreach,
    /// EADDRNOTAVAIL
    AddrNotAvail,
    /// EOPNOTSUPP
    OpNotSupp,
    /// ENOBUFS
    NoBufs,
    /// EAFNOSUPPORT
    AfNoSupport,
    /// EXDEV: a reverse path filter refused the source (`fib_validate_source`).
    XDev,
}

impl Errno {
    /// The text `strerror()` gives, as iproute2 prints it after "RTNETLINK answers: ".
    pub fn message(self) -> &'static str {
        match self {
            Errno::Perm => "Operation not permitted",
            Errno::NoEnt => "No such file or directory",
            Errno::Srch => "No such process",
            Errno::Acces => "Permission denied",
            Errno::Exist => "File exists",
            Errno::NoDev => "No such device",
            Errno::NxIo => "No such device or address",
            Errno::Inval => "Invalid argument",
            Errno::Range => "Numerical result out of range",
            Errno::NetDown => "Network is down",
            Errno::NetUnreach => "Network is unreachable",
            Errno::HostUnreach => "No route to host",
            Errno::AddrNotAvail => "Cannot assign requested address",
            Errno::OpNotSupp => "Operation not supported",
            Errno::NoBufs => "No buffer space available",
            Errno::AfNoSupport => "Address family not supported by protocol",
            Errno::XDev => "Invalid cross-device link",
        }
    }

    /// The numeric errno on Linux.
    pub fn code(self) -> i32 {
        match self {
            Errno::Perm => 1,
            Errno::NoEnt => 2,
            Errno::Srch => 3,
            Errno::Acces => 13,
            Errno::Exist => 17,
            Errno::NoDev => 19,
            Errno::NxIo => 6,
            Errno::Inval => 22,
            Errno::Range => 34,
            Errno::NetDown => 100,
            Errno::NetUnreach => 101,
            Errno::HostUnreach => 113,
            Errno::AddrNotAvail => 99,
            Errno::OpNotSupp => 95,
            Errno::NoBufs => 105,
            Errno::AfNoSupport => 97,
            Errno::XDev => 18,
        }
    }
}

/// A refusal as the kernel gives it: an errno and, where the kernel sets
/// one, the extended-ack message (iproute2 prints `Error: <extack>.`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelError {
    /// The errno.
    pub errno: Errno,
    /// The kernel's extack text, without the trailing period.
    pub extack: Option<String>,
    /// The refusal comes from iproute2 itself before any request is sent
    /// (e.g. `Cannot find device "X"`): `extack` holds its whole line,
    /// printed as is.
    pub from_iproute2: bool,
}

impl KernelError {
    /// A bare errno (iproute2 prints `RTNETLINK answers: <strerror>`).
    pub fn new(errno: Errno) -> Self {
        Self {
            errno,
            extack: None,
            from_iproute2: false,
        }
    }

    /// An errno with the kernel's extended-ack message.
    pub fn with_extack(errno: Errno, extack: impl Into<String>) -> Self {
        Self {
            errno,
            extack: Some(extack.into()),
            from_iproute2: false,
        }
    }

    /// iproute2's refusal for a device name it cannot resolve.
    ///
    /// ```
    /// use fibre_fib::KernelError;
    /// let e = KernelError::no_such_device("eth9");
    /// assert_eq!(e.to_string(), "Cannot find device \"eth9\"");
    /// ```
    pub fn no_such_device(name: &str) -> Self {
        Self {
            errno: Errno::NoDev,
            extack: Some(format!("Cannot find device \"{name}\"")),
            from_iproute2: true,
        }
    }
}

impl fmt::Display for KernelError {
    /// Formats as iproute2 prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.extack {
            Some(msg) if self.from_iproute2 => write!(f, "{msg}"),
            Some(msg) => write!(f, "Error: {msg}."),
            None => write!(f, "RTNETLINK answers: {}", self.errno.message()),
        }
    }
}

impl std::error::Error for KernelError {}
