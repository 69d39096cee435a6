//! Bringing one copy of a left-right pair up to date with the other after a
//! batch of route commands, by copying what they changed instead of
//! applying them again.
//!
//! A route command changes the entries of its prefix in one table and a
//! few FIB-wide records (the table's creation, the table counter, the
//! cache classes, the IPv4 host-scope gateways, the custom-local-routes
//! flag), nothing else: links, addresses and rules are left alone. The
//! tables note each prefix whose routes they handed out mutably (see
//! [`Touched`]), so the copy that applied a batch knows exactly which
//! entries to copy. Copying an entry skips what made the command costly
//! the first time (resolving devices and gateways, checking the kernel's
//! rules, placing the route among the prefix's others): the follower pays
//! about half an application per update.

use crate::fib::Fib;
use crate::table::Touched;
use crate::types::{Family, Prefix, TableId};

/// The entries a batch changed, by table, as the copy that applied it
/// noted them; `None` when something changed more than listed entries (a
/// bulk change), which only applying the commands again reproduces.
pub(crate) type TouchedEntries = Option<Vec<(TableId, Prefix)>>;

impl Fib {
    /// The entries changed since the last call, forgotten now.
    pub(crate) fn take_touched(&mut self) -> TouchedEntries {
        let mut all = Some(Vec::new());
        for (&id, table) in self.tables.iter_mut() {
            for touched in [table.v4.take_touched(), table.v6.take_touched()] {
                match (touched, all.as_mut()) {
                    (Touched::None, _) | (_, None) => {}
                    (Touched::Prefixes(list), Some(all)) => {
                        all.extend(list.into_iter().map(|p| (id, p)));
                    }
                    (Touched::All, Some(_)) => all = None,
                }
            }
        }
        // Not sorted to drop repeats: a prefix changed by two commands of a
        // batch is rare in a routing feed, and copying it twice is cheaper
        // than sorting every batch's list (5 % of the writer's time).
        all
    }

    /// Makes this copy equal to `source` after `source` applied route
    /// commands only (of any outcome) to a state equal to this one's:
    /// copies the entries those commands changed (`touched`, from
    /// `source.take_touched()`) and the FIB-wide records route commands
    /// change. Anything else would be left behind, so a batch with other
    /// commands, or whose changes were not listed, must be applied again
    /// instead.
    pub(crate) fn follow_routes(&mut self, source: &Fib, touched: &[(TableId, Prefix)]) {
        for (&id, table) in &source.tables {
            let mine = self.tables.entry(id).or_default();
            mine.created_v4 = table.created_v4;
            mine.created_v6 = table.created_v6;
        }
        self.table_seq = source.table_seq;
        self.custom_local_routes = source.custom_local_routes;
        if self.host_scope_gateways != source.host_scope_gateways {
            self.host_scope_gateways
                .clone_from(&source.host_scope_gateways);
        }
        // Classes are only ever added, in the same order in both copies.
        if self.cache_classes.len() != source.cache_classes.len() {
            self.cache_classes.clone_from(&source.cache_classes);
        }
        for (id, prefix) in touched {
            let (Some(from), Some(to)) = (source.tables.get(id), self.tables.get_mut(id)) else {
                continue;
            };
            match prefix.family() {
                Family::V4 => to.v4.copy_prefix_from(&from.v4, prefix),
                Family::V6 => to.v6.copy_prefix_from(&from.v6, prefix),
            }
        }
        self.settle_tables();
        // What following changed here is not news to anyone.
        let _ = self.take_touched();
    }
}
