//! The FIB: links, addresses, routes, policy rules and lookups with the
//! Linux kernel's semantics, spoken in iproute2's vocabulary.
//!
//! The data model mirrors what iproute2 sends the kernel over rtnetlink:
//! a [`Command`] is one resolved request (iproute2's defaults already
//! applied: table main, proto boot, scope by type), and [`Fib::apply`]
//! plays the kernel's part: it validates, refuses with the kernel's message
//! ([`KernelError`]) or changes the state. Lookups answer like
//! `fib_lookup()` / `ip route get`.

pub mod command;
pub mod config;
pub mod error;
pub mod fib;
pub mod types;

pub use command::*;
pub use error::*;
pub use fib::Fib;
pub use types::*;
