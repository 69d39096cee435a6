//! The FIB state and the kernel's behaviour on it.
//!
//! SKELETON: the signatures below are the contract the CLI codes against;
//! the bodies are being written.

use crate::command::*;
use crate::error::*;
use crate::types::*;

/// The whole routing state of one router (one network namespace).
#[derive(Debug, Clone, Default)]
pub struct Fib {}

impl Fib {
    /// A fresh router: `lo` (index 1, down, no addresses), the default rules
    /// 0 (local), 32766 (main), 32767 (default, IPv4 only) and empty tables,
    /// as in a new network namespace.
    pub fn new() -> Fib {
        todo!()
    }

    /// Carries out one request as the kernel would, or refuses it with the
    /// kernel's error and changes nothing.
    pub fn apply(&mut self, cmd: &Command) -> Result<(), KernelError> {
        let _ = cmd;
        todo!()
    }

    /// Links in index order.
    pub fn links(&self) -> impl Iterator<Item = &Link> + '_ {
        std::iter::empty()
    }

    /// The link with this name.
    pub fn link_by_name(&self, name: &str) -> Option<&Link> {
        let _ = name;
        todo!()
    }

    /// The link with this index.
    pub fn link(&self, index: LinkIndex) -> Option<&Link> {
        let _ = index;
        todo!()
    }

    /// Addresses in `ip addr show` order, optionally of one family.
    pub fn addresses(&self, family: Option<Family>) -> Vec<&Address> {
        let _ = family;
        todo!()
    }

    /// Routes of one family in `ip route show` order: one table, or every
    /// table (`table all`) when `table` is None.
    pub fn routes(&self, family: Family, table: Option<TableId>) -> Vec<&Route> {
        let _ = (family, table);
        todo!()
    }

    /// Rules of one family in priority order.
    pub fn rules(&self, family: Family) -> &[Rule] {
        let _ = family;
        todo!()
    }

    /// `ip route get`: the kernel's answer or its error.
    pub fn route_get(&self, req: &RouteGetRequest) -> Result<RouteAnswer, KernelError> {
        let _ = req;
        todo!()
    }
}
