//! What a command changed, for caches of lookup answers (the route cache):
//! the netlink notification the kernel would send, reduced to what makes a
//! cached answer stale.

use crate::command::Command;
use crate::types::Prefix;

/// The part of the FIB a successful [`Command`] may have changed.
///
/// Route commands change one prefix: only answers for destinations inside
/// it can differ (a more specific route may now win, or a route went). That
/// is the frequent case (a BGP feed) and stays fine-grained. Links,
/// addresses and rules are rare and change answers anywhere (implicit
/// routes, carrier, source addresses, rule order), so they change
/// everything, as the kernel flushes its IPv4 route cache on them.
///
/// The prefix is not tied to the command's table on purpose: with policy
/// rules a flow that fell through one table to another changes its answer
/// when a route appears in the first, so a cache must treat the prefix as
/// changed in every table.
///
/// ```
/// use fibre_fib::*;
/// let words = |line: &str| line.split(' ').map(String::from).collect::<Vec<_>>();
/// let add = &config::parse_words(&words("route add 10.1.0.0/16 dev eth0 table 100")).unwrap()[0];
/// let prefix = Prefix::new("10.1.0.0".parse().unwrap(), 16).unwrap();
/// assert_eq!(FibChange::of(add), FibChange::Prefix(prefix));
/// let down = Command::LinkSet { name: "eth0".into(), up: Some(false), mtu: None };
/// assert_eq!(FibChange::of(&down), FibChange::Everything);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FibChange {
    /// Routes of this prefix were added, replaced or deleted.
    Prefix(Prefix),
    /// Links, addresses or rules changed: any answer may differ.
    Everything,
}

impl FibChange {
    /// What `command` changes when the FIB accepts it.
    pub fn of(command: &Command) -> FibChange {
        match command {
            Command::Route { spec, .. } => FibChange::Prefix(spec.dst),
            // A lookup changes nothing; "everything" is the safe answer
            // for a command that changes nothing and comes with a route's.
            Command::LookUp { .. } => FibChange::Everything,
            Command::LinkAdd { .. }
            | Command::LinkSet { .. }
            | Command::KernelLink(_)
            | Command::LinkDel { .. }
            | Command::Addr { .. }
            | Command::Rule { .. } => FibChange::Everything,
            // A neighbour changes no lookup's answer; static neighbours are
            // rare enough that saying "everything" costs nothing.
            Command::Neigh { .. } => FibChange::Everything,
        }
    }
}
