//! One routing table of one family: an LPM index from prefix to a slot in
//! an arena of prefix entries, each holding that prefix's routes in the
//! kernel's order.
//!
//! The kernel's `fib_trie` keeps, per leaf, a list of aliases ordered by
//! TOS (descending) then priority (ascending); IPv6's `fib6_node` keeps its
//! routes ordered by metric. [`PrefixEntry::routes`] is that list; the
//! operations in `route_ops` decide where a new route goes.

use fibre_lpm::{Key, Poptrie};

use crate::types::{Family, Prefix, Route};

/// The routes of one prefix, in the kernel's order.
#[derive(Debug, Clone)]
pub(crate) struct PrefixEntry {
    /// The prefix all routes share.
    pub prefix: Prefix,
    /// Routes in lookup (and dump) order.
    pub routes: Vec<Route>,
}

/// The prefixes of one family in one table.
#[derive(Debug, Clone)]
pub(crate) struct FamilyTable<K: Key> {
    /// Prefix -> arena slot.
    index: Poptrie<K, u32>,
    /// Arena of prefix entries; `None` slots are free.
    entries: Vec<Option<PrefixEntry>>,
    /// Free slots of `entries`, reused first.
    free: Vec<u32>,
}

impl<K: Key> Default for FamilyTable<K> {
    fn default() -> Self {
        Self {
            index: Poptrie::new(),
            entries: Vec::new(),
            free: Vec::new(),
        }
    }
}

fn key_of<K: Key>(prefix: &Prefix) -> K {
    K::from_u128(prefix.key())
}

impl<K: Key> FamilyTable<K> {
    /// The entry of exactly this prefix.
    pub fn get(&self, prefix: &Prefix) -> Option<&PrefixEntry> {
        let slot = self.index.get(key_of::<K>(prefix), prefix.len())?;
        self.entries[slot as usize].as_ref()
    }

    /// The routes of exactly this prefix, created empty when absent.
    pub fn routes_mut(&mut self, prefix: &Prefix) -> &mut Vec<Route> {
        let key = key_of::<K>(prefix);
        let slot = match self.index.get(key, prefix.len()) {
            Some(slot) => slot,
            None => {
                let entry = PrefixEntry {
                    prefix: *prefix,
                    routes: Vec::new(),
                };
                let slot = match self.free.pop() {
                    Some(slot) => {
                        self.entries[slot as usize] = Some(entry);
                        slot
                    }
                    None => {
                        self.entries.push(Some(entry));
                        (self.entries.len() - 1) as u32
                    }
                };
                self.index
                    .insert(key, prefix.len(), slot)
                    .expect("a Prefix is always a valid LPM key");
                slot
            }
        };
        &mut self.entries[slot as usize]
            .as_mut()
            .expect("the index points at live slots")
            .routes
    }

    /// Drops the entry of `prefix` when it holds no route any more.
    pub fn prune(&mut self, prefix: &Prefix) {
        let key = key_of::<K>(prefix);
        if let Some(slot) = self.index.get(key, prefix.len()) {
            let empty = self.entries[slot as usize]
                .as_ref()
                .is_none_or(|e| e.routes.is_empty());
            if empty {
                let _ = self.index.remove(key, prefix.len());
                self.entries[slot as usize] = None;
                self.free.push(slot);
            }
        }
    }

    /// Entries whose prefix contains `addr`, longest first (for backtracking).
    pub fn matches(&self, addr: K) -> impl Iterator<Item = &PrefixEntry> + '_ {
        self.index
            .matches(addr)
            .filter_map(move |(_, _, slot)| self.entries[slot as usize].as_ref())
    }

    /// The entry of the longest prefix containing `addr` (the LPM fast path).
    pub fn longest(&self, addr: K) -> Option<&PrefixEntry> {
        let slot = self.index.lookup(addr)?;
        self.entries[slot as usize].as_ref()
    }

    /// Every live entry, in no particular order.
    pub fn entries(&self) -> impl Iterator<Item = &PrefixEntry> + '_ {
        self.entries.iter().flatten()
    }

    /// Every live entry, mutable, in no particular order.
    pub fn entries_mut(&mut self) -> impl Iterator<Item = &mut PrefixEntry> + '_ {
        self.entries.iter_mut().flatten()
    }

    /// Drops entries left empty by a bulk change (e.g. a link going away).
    pub fn prune_all(&mut self) {
        let empty: Vec<Prefix> = self
            .entries()
            .filter(|e| e.routes.is_empty())
            .map(|e| e.prefix)
            .collect();
        for prefix in empty {
            self.prune(&prefix);
        }
    }

    /// Number of prefixes held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.index.len()
    }
}

/// One routing table: both families.
#[derive(Debug, Clone, Default)]
pub(crate) struct Table {
    /// IPv4 prefixes.
    pub v4: FamilyTable<u32>,
    /// IPv6 prefixes.
    pub v6: FamilyTable<u128>,
    /// Creation order of the IPv4 table (the kernel lists newer tables of a hash bucket first).
    pub created_v4: Option<u64>,
    /// Creation order of the IPv6 table.
    pub created_v6: Option<u64>,
}

impl Table {
    /// True when this family's table exists in the kernel's sense (created by a route add).
    pub fn exists(&self, family: Family) -> bool {
        match family {
            Family::V4 => self.created_v4.is_some(),
            Family::V6 => self.created_v6.is_some(),
        }
    }

    /// Marks the family's table as created (first route added to it).
    pub fn create(&mut self, family: Family, seq: u64) {
        let slot = match family {
            Family::V4 => &mut self.created_v4,
            Family::V6 => &mut self.created_v6,
        };
        slot.get_or_insert(seq);
    }

    /// The routes of exactly `prefix`, if any.
    pub fn get(&self, prefix: &Prefix) -> Option<&PrefixEntry> {
        match prefix.family() {
            Family::V4 => self.v4.get(prefix),
            Family::V6 => self.v6.get(prefix),
        }
    }

    /// The routes of exactly `prefix`, created empty when absent.
    pub fn routes_mut(&mut self, prefix: &Prefix) -> &mut Vec<Route> {
        match prefix.family() {
            Family::V4 => self.v4.routes_mut(prefix),
            Family::V6 => self.v6.routes_mut(prefix),
        }
    }

    /// Drops the entry of `prefix` if empty.
    pub fn prune(&mut self, prefix: &Prefix) {
        match prefix.family() {
            Family::V4 => self.v4.prune(prefix),
            Family::V6 => self.v6.prune(prefix),
        }
    }

    /// Every entry of one family in the kernel's dump order.
    ///
    /// IPv4 (`fib_trie`): by address, and for one address the longer
    /// prefix first. IPv6 (`fib6_walk`, a post-order walk of the radix
    /// tree): a prefix comes after every prefix it contains, so the order is
    /// by last address of the prefix, longer first on ties.
    pub fn dump_order(&self, family: Family) -> Vec<&PrefixEntry> {
        match family {
            Family::V4 => {
                let mut v: Vec<&PrefixEntry> = self.v4.entries().collect();
                v.sort_by_key(|e| (e.prefix.key(), std::cmp::Reverse(e.prefix.len())));
                v
            }
            Family::V6 => {
                let mut v: Vec<&PrefixEntry> = self.v6.entries().collect();
                v.sort_by_key(|e| (last_address(&e.prefix), std::cmp::Reverse(e.prefix.len())));
                v
            }
        }
    }
}

/// The highest address inside an IPv6 prefix (as a u128).
fn last_address(prefix: &Prefix) -> u128 {
    let host_bits = 128 - u32::from(prefix.len());
    let host_mask = if host_bits == 128 {
        u128::MAX
    } else {
        (1u128 << host_bits) - 1
    };
    prefix.key() | host_mask
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::*;

    fn route(dst: &str) -> Route {
        let (a, l) = dst.split_once('/').unwrap();
        Route {
            mtu_lock: false,
            table: TABLE_MAIN,
            dst: Prefix::new(a.parse().unwrap(), l.parse().unwrap()).unwrap(),
            tos: 0,
            kind: RouteType::Unicast,
            protocol: Protocol::BOOT,
            scope: Scope::LINK,
            metric: 0,
            prefsrc: None,
            mtu: None,
            nexthops: vec![],
            cache_class: 0,
        }
    }

    fn dump(t: &Table, f: Family) -> Vec<String> {
        t.dump_order(f)
            .iter()
            .map(|e| format!("{}/{}", e.prefix.addr(), e.prefix.len()))
            .collect()
    }

    #[test]
    fn ipv4_dump_is_by_address_then_longer_first() {
        // Kernel-checked: `ip route` printed 10.0.0.0/24 before 10.0.0.0/8.
        let mut t = Table::default();
        for p in ["10.0.0.0/8", "0.0.0.0/0", "10.0.0.0/24", "10.0.0.128/25"] {
            let r = route(p);
            t.routes_mut(&r.dst).push(r);
        }
        assert_eq!(
            dump(&t, Family::V4),
            ["0.0.0.0/0", "10.0.0.0/24", "10.0.0.0/8", "10.0.0.128/25"]
        );
    }

    #[test]
    fn ipv6_dump_is_post_order() {
        // Kernel-checked: `ip -6 route` printed /127, /64, 1::/48, ffff::/48, /32, default.
        let mut t = Table::default();
        for p in [
            "::/0",
            "2001:db8::/32",
            "2001:db8:1::/48",
            "2001:db8:ffff::/48",
            "2001:db8::/127",
            "2001:db8::/64",
        ] {
            let r = route(p);
            t.routes_mut(&r.dst).push(r);
        }
        assert_eq!(
            dump(&t, Family::V6),
            [
                "2001:db8::/127",
                "2001:db8::/64",
                "2001:db8:1::/48",
                "2001:db8:ffff::/48",
                "2001:db8::/32",
                "::/0"
            ]
        );
    }

    #[test]
    fn prune_frees_and_reuses_slots() {
        let mut t: FamilyTable<u32> = FamilyTable::default();
        let a = route("10.0.0.0/8");
        t.routes_mut(&a.dst).push(a.clone());
        t.routes_mut(&a.dst).clear();
        t.prune(&a.dst);
        assert_eq!(t.len(), 0);
        assert!(t.get(&a.dst).is_none());
        let b = route("10.1.0.0/16");
        t.routes_mut(&b.dst).push(b.clone());
        assert_eq!(t.entries.len(), 1, "the freed slot is reused");
        assert_eq!(t.matches(0x0a01_0001).count(), 1);
    }
}
