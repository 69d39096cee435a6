//! The addresses configured on the router's links, for "is this address
//! ours?" in one hash probe: a per-packet question on the IPv4 input path
//! (a source that is one of ours is a martian) and one every route command
//! with a gateway asks. The kernel keeps a hash of its addresses for the
//! same reason (`inet_addr_lst`).

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::net::IpAddr;
use std::sync::Arc;

use crate::table::KeyHasher;

type Counts<K> = HashMap<K, u32, BuildHasherDefault<KeyHasher>>;

/// Each configured address and on how many links it is (an address may be
/// configured on several). Kept by the functions that add and remove
/// addresses, so it is exact between any two of their steps.
#[derive(Debug, Clone, Default)]
pub(crate) struct LocalAddrs {
    /// Behind an `Arc`, copied whole when an address comes or goes (rare,
    /// and there are few): a clone of the FIB (one per publication of a
    /// shared FIB) shares them, and a probe reads them through one pointer.
    v4: Arc<Counts<u32>>,
    /// As `v4`.
    v6: Arc<Counts<u128>>,
    /// Each address added or removed since [`LocalAddrs::take_journal`],
    /// while a journal is kept (see [`LocalAddrs::keep_journal`]).
    journal: Option<Vec<IpAddr>>,
}

impl LocalAddrs {
    /// From now on, notes each address added or removed, for
    /// [`LocalAddrs::take_journal`]: what a replay that re-checks only
    /// what changed asks after each command.
    pub fn keep_journal(&mut self) {
        self.journal.get_or_insert_with(Vec::new);
    }

    /// Stops noting changes and forgets those not taken: a replay that
    /// kept a journal hands its FIB on as the loaded one, which must not
    /// go on growing a list nobody reads.
    pub fn end_journal(&mut self) {
        self.journal = None;
    }

    /// The addresses added or removed since the last call (repeats
    /// included), forgotten now; none when no journal is kept.
    pub fn take_journal(&mut self) -> Vec<IpAddr> {
        self.journal
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    fn note(&mut self, addr: &IpAddr) {
        if let Some(journal) = &mut self.journal {
            journal.push(*addr);
        }
    }

    /// One more link holds `addr`.
    pub fn added(&mut self, addr: &IpAddr) {
        self.note(addr);
        match addr {
            IpAddr::V4(a) => {
                *Arc::make_mut(&mut self.v4)
                    .entry(u32::from(*a))
                    .or_default() += 1
            }
            IpAddr::V6(a) => {
                *Arc::make_mut(&mut self.v6)
                    .entry(u128::from(*a))
                    .or_default() += 1
            }
        }
    }

    /// One link fewer holds `addr`.
    pub fn removed(&mut self, addr: &IpAddr) {
        self.note(addr);
        fn drop_one<K: std::hash::Hash + Eq + Clone>(counts: &mut Arc<Counts<K>>, key: K) {
            if !counts.contains_key(&key) {
                return;
            }
            if let std::collections::hash_map::Entry::Occupied(mut e) =
                Arc::make_mut(counts).entry(key)
            {
                *e.get_mut() -= 1;
                if *e.get() == 0 {
                    e.remove();
                }
            }
        }
        match addr {
            IpAddr::V4(a) => drop_one(&mut self.v4, u32::from(*a)),
            IpAddr::V6(a) => drop_one(&mut self.v6, u128::from(*a)),
        }
    }

    /// How many distinct addresses are held.
    #[cfg(test)]
    pub fn distinct(&self) -> usize {
        self.v4.len() + self.v6.len()
    }

    /// Whether some link holds `addr`.
    #[inline]
    pub fn contains(&self, addr: &IpAddr) -> bool {
        match addr {
            IpAddr::V4(a) => !self.v4.is_empty() && self.v4.contains_key(&u32::from(*a)),
            IpAddr::V6(a) => !self.v6.is_empty() && self.v6.contains_key(&u128::from(*a)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_on_two_links_stays_ours_until_both_drop_it() {
        let mut local = LocalAddrs::default();
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        local.added(&a);
        local.added(&a);
        assert!(local.contains(&a));
        assert!(!local.contains(&mapped), "families are kept apart");
        local.removed(&a);
        assert!(local.contains(&a));
        local.removed(&a);
        assert!(!local.contains(&a));
        local.removed(&a); // not held: nothing happens
        assert!(!local.contains(&a));
    }

    #[test]
    fn the_journal_lists_changes_only_while_kept() {
        let mut local = LocalAddrs::default();
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "2001:db8::1".parse().unwrap();
        local.added(&a);
        assert!(local.take_journal().is_empty(), "no journal kept yet");
        local.keep_journal();
        local.added(&b);
        local.removed(&a);
        assert_eq!(local.take_journal(), [b, a]);
        assert!(local.take_journal().is_empty(), "taken");
        let copy = local.clone();
        local.removed(&b);
        assert_eq!(local.take_journal(), [b]);
        assert!(!copy.contains(&a) && copy.contains(&b));
    }
}
