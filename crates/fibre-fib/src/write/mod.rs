//! The writer's side: everything that changes the FIB. A [`Command`]
//! arrives here through [`Fib::apply`](crate::Fib::apply) and is checked
//! and applied with the kernel's semantics, one kind of object per file:
//! links, addresses, routes (with the kernel's implicit routes), rules and
//! GRE tunnels; bulk route import; and the report of what changed, for
//! caches of answers. Only the control side runs this code; readers see
//! its results once the writer publishes (see [`crate::shared`]).
//!
//! [`Command`]: crate::Command

pub(crate) mod addrs;
pub(crate) mod change;
pub mod gre;
pub(crate) mod import;
pub(crate) mod links;
pub(crate) mod neighs;
pub(crate) mod route_ops;
pub(crate) mod rules;
