//! The LPM engines compared, behind one small trait.
//!
//! [`Engine`] is implemented for fibre's own [`fibre_lpm::Poptrie`] and for
//! three crates from crates.io: `prefix-trie` (a binary trie,
//! [`PrefixTrieEngine`]), `poptrie` (a Poptrie of the same paper as ours,
//! [`PoptrieCrateEngine`]) and `ip_network_table-deps-treebitmap` (a tree
//! bitmap, [`TreeBitmapEngine`]). Timing code is generic over `Engine`, so
//! each engine's `lookup` is compiled into the timed loop, with no dynamic
//! dispatch per lookup.

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::data::Prefix;
use crate::family::Family;
use crate::nexthop::NextHop;

/// A longest-prefix-match table under test, storing a [`NextHop`] per prefix.
pub trait Engine<K: Family>: Send + Sync + Sized {
    /// The name printed in reports.
    const NAME: &'static str;
    /// True for fibre's own engine; the others are the peers it is compared to.
    const IS_FIBRE: bool = false;
    /// True when [`Engine::lookup_batch`] is the engine's own batched lookup,
    /// not the default loop over [`Engine::lookup`].
    const NATIVE_BATCH: bool = false;

    /// An empty table.
    fn empty() -> Self;
    /// The whole table built at once, for engines with a bulk build faster
    /// than inserting prefix by prefix; `None` for the others, which are
    /// then built by [`Engine::insert`] in table order. `next_hops[i]` is
    /// the next hop of `table[i]`.
    fn bulk_build(table: &[Prefix<K>], next_hops: &[NextHop]) -> Option<Self> {
        let _ = (table, next_hops);
        None
    }
    /// Stores (or replaces) the next hop of `prefix`.
    fn insert(&mut self, prefix: Prefix<K>, next_hop: NextHop) -> Result<(), String>;
    /// Removes `prefix`; removing an absent prefix is not an error.
    fn remove(&mut self, prefix: Prefix<K>) -> Result<(), String>;
    /// The next hop of the longest stored prefix containing `addr`.
    fn lookup(&self, addr: K) -> Option<NextHop>;
    /// Looks up every address of `addrs` into the same position of `out`.
    fn lookup_batch(&self, addrs: &[K], out: &mut [Option<NextHop>]) {
        for (addr, slot) in addrs.iter().zip(out.iter_mut()) {
            *slot = self.lookup(*addr);
        }
    }
    /// The engine's own account of the bytes its lookups read, if it gives one.
    fn lookup_bytes(&self) -> Option<usize> {
        None
    }
}

/// fibre's LPM engine, [`fibre_lpm::Poptrie`].
///
/// ```
/// use fibre_bench::data::Prefix;
/// use fibre_bench::engines::{Engine, FibreEngine};
/// let mut e = <FibreEngine<u32> as Engine<u32>>::empty();
/// e.insert(Prefix { addr: 0x0a00_0000, len: 8 }, 3).unwrap();
/// assert_eq!(e.lookup(0x0a01_0203), Some(3));
/// ```
pub struct FibreEngine<K: Family>(fibre_lpm::Poptrie<K, NextHop>);

impl<K: Family> Engine<K> for FibreEngine<K> {
    const NAME: &'static str = "fibre";
    const IS_FIBRE: bool = true;
    const NATIVE_BATCH: bool = true;

    fn empty() -> Self {
        Self(fibre_lpm::Poptrie::new())
    }
    /// `Poptrie::build`; a prefix it refuses makes the benchmark fall back
    /// to inserts, which name that prefix in their error.
    fn bulk_build(table: &[Prefix<K>], next_hops: &[NextHop]) -> Option<Self> {
        let entries = table
            .iter()
            .zip(next_hops)
            .map(|(p, hop)| (p.addr, p.len, *hop));
        fibre_lpm::Poptrie::build(entries).ok().map(Self)
    }
    fn insert(&mut self, prefix: Prefix<K>, next_hop: NextHop) -> Result<(), String> {
        self.0
            .insert(prefix.addr, prefix.len, next_hop)
            .map(drop)
            .map_err(|e| e.to_string())
    }
    fn remove(&mut self, prefix: Prefix<K>) -> Result<(), String> {
        self.0
            .remove(prefix.addr, prefix.len)
            .map(drop)
            .map_err(|e| e.to_string())
    }
    #[inline]
    fn lookup(&self, addr: K) -> Option<NextHop> {
        self.0.lookup(addr)
    }
    #[inline]
    fn lookup_batch(&self, addrs: &[K], out: &mut [Option<NextHop>]) {
        self.0.lookup_batch(addrs, out);
    }
    fn lookup_bytes(&self) -> Option<usize> {
        Some(self.0.lookup_bytes())
    }
}

/// The crate `prefix-trie`: `PrefixMap<(K, u8), NextHop>`, looked up with `get_lpm`.
pub struct PrefixTrieEngine<K: Family>(prefix_trie::PrefixMap<(K, u8), NextHop>)
where
    (K, u8): prefix_trie::Prefix;

/// The crate `poptrie`: `Poptrie<(K, u8), NextHop>`.
pub struct PoptrieCrateEngine<K: Family>(poptrie::Poptrie<(K, u8), NextHop>)
where
    (K, u8): poptrie::Prefix;

/// The crate `ip_network_table-deps-treebitmap`: `IpLookupTable<Ipv4Addr | Ipv6Addr, NextHop>`.
pub struct TreeBitmapEngine<K: TreeBitmapKey>(
    ip_network_table_deps_treebitmap::IpLookupTable<K::Addr, NextHop>,
);

/// The address type the tree bitmap crate wants for each family.
pub trait TreeBitmapKey: Family {
    /// `Ipv4Addr` or `Ipv6Addr`.
    type Addr: ip_network_table_deps_treebitmap::address::Address + Send + Sync;
    /// The same address in the crate's type.
    fn to_addr(self) -> Self::Addr;
}

impl TreeBitmapKey for u32 {
    type Addr = Ipv4Addr;
    #[inline]
    fn to_addr(self) -> Ipv4Addr {
        Ipv4Addr::from(self)
    }
}

impl TreeBitmapKey for u128 {
    type Addr = Ipv6Addr;
    #[inline]
    fn to_addr(self) -> Ipv6Addr {
        Ipv6Addr::from(self)
    }
}

/// The peers' engines implemented once per key type: their crates bound keys
/// by their own traits, which `u32` and `u128` satisfy but a generic `K` does not.
macro_rules! peer_engines {
    ($($key:ty),*) => {$(
        impl Engine<$key> for PrefixTrieEngine<$key> {
            const NAME: &'static str = "prefix-trie";

            fn empty() -> Self {
                Self(prefix_trie::PrefixMap::new())
            }
            fn insert(&mut self, prefix: Prefix<$key>, next_hop: NextHop) -> Result<(), String> {
                self.0.insert((prefix.addr, prefix.len), next_hop);
                Ok(())
            }
            fn remove(&mut self, prefix: Prefix<$key>) -> Result<(), String> {
                self.0.remove(&(prefix.addr, prefix.len));
                Ok(())
            }
            #[inline]
            fn lookup(&self, addr: $key) -> Option<NextHop> {
                self.0.get_lpm(&(addr, <$key as fibre_lpm::Key>::BITS)).map(|(_, v)| *v)
            }
        }

        impl Engine<$key> for PoptrieCrateEngine<$key> {
            const NAME: &'static str = "poptrie";

            fn empty() -> Self {
                Self(poptrie::Poptrie::new())
            }
            /// The crate's `FromIterator` builds level by level; inserting a
            /// full table one prefix at a time takes it minutes.
            fn bulk_build(table: &[Prefix<$key>], next_hops: &[NextHop]) -> Option<Self> {
                Some(Self(
                    table
                        .iter()
                        .zip(next_hops)
                        .map(|(p, hop)| ((p.addr, p.len), *hop))
                        .collect(),
                ))
            }
            fn insert(&mut self, prefix: Prefix<$key>, next_hop: NextHop) -> Result<(), String> {
                self.0.insert((prefix.addr, prefix.len), next_hop);
                Ok(())
            }
            fn remove(&mut self, prefix: Prefix<$key>) -> Result<(), String> {
                self.0.remove((prefix.addr, prefix.len));
                Ok(())
            }
            #[inline]
            fn lookup(&self, addr: $key) -> Option<NextHop> {
                self.0.lookup(addr).copied()
            }
        }

        impl Engine<$key> for TreeBitmapEngine<$key> {
            const NAME: &'static str = "treebitmap";

            fn empty() -> Self {
                Self(ip_network_table_deps_treebitmap::IpLookupTable::new())
            }
            fn insert(&mut self, prefix: Prefix<$key>, next_hop: NextHop) -> Result<(), String> {
                self.0.insert(prefix.addr.to_addr(), u32::from(prefix.len), next_hop);
                Ok(())
            }
            fn remove(&mut self, prefix: Prefix<$key>) -> Result<(), String> {
                self.0.remove(prefix.addr.to_addr(), u32::from(prefix.len));
                Ok(())
            }
            #[inline]
            fn lookup(&self, addr: $key) -> Option<NextHop> {
                self.0.longest_match(addr.to_addr()).map(|(_, _, v)| *v)
            }
        }
    )*};
}

peer_engines!(u32, u128);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::parse_prefix;

    fn check_engine<K: Family, E: Engine<K>>(
        table: &[(&str, NextHop)],
        probes: &[(&str, Option<NextHop>)],
    ) {
        let prefixes: Vec<Prefix<K>> = table
            .iter()
            .map(|(t, _)| parse_prefix(t).unwrap())
            .collect();
        let hops: Vec<NextHop> = table.iter().map(|(_, h)| *h).collect();
        if let Some(bulk) = E::bulk_build(&prefixes, &hops) {
            for ((text, want), addr) in probes
                .iter()
                .zip(probes.iter().map(|(a, _)| K::parse_addr(a).unwrap()))
            {
                assert_eq!(bulk.lookup(addr), *want, "{} bulk {text}", E::NAME);
            }
        }
        let mut engine = E::empty();
        for (prefix, hop) in prefixes.iter().zip(&hops) {
            engine.insert(*prefix, *hop).unwrap();
        }
        let addrs: Vec<K> = probes
            .iter()
            .map(|(a, _)| K::parse_addr(a).unwrap())
            .collect();
        let mut batch = vec![None; addrs.len()];
        engine.lookup_batch(&addrs, &mut batch);
        for ((text, want), (addr, batched)) in probes.iter().zip(addrs.iter().zip(&batch)) {
            assert_eq!(engine.lookup(*addr), *want, "{} {text}", E::NAME);
            assert_eq!(batched, want, "{} batch {text}", E::NAME);
        }
        // Withdrawing the most specific prefix falls back to the one covering
        // it (the table is ordered from short to long); withdrawing an absent
        // prefix is harmless.
        let (last, _) = table[table.len() - 1];
        engine.remove(parse_prefix::<K>(last).unwrap()).unwrap();
        engine.remove(parse_prefix::<K>(last).unwrap()).unwrap();
        let (first_probe, _) = probes[0];
        assert_eq!(
            engine.lookup(K::parse_addr(first_probe).unwrap()),
            Some(table[table.len() - 2].1),
            "{} after remove",
            E::NAME
        );
    }

    const V4_TABLE: &[(&str, NextHop)] =
        &[("10.0.0.0/8", 1), ("10.1.0.0/16", 2), ("10.1.2.0/24", 3)];
    const V4_PROBES: &[(&str, Option<NextHop>)] = &[
        ("10.1.2.3", Some(3)),
        ("10.1.3.3", Some(2)),
        ("10.200.0.1", Some(1)),
        ("11.0.0.1", None),
    ];
    const V6_TABLE: &[(&str, NextHop)] = &[
        ("2001:db8::/32", 7),
        ("2001:db8:1::/48", 8),
        ("2001:db8:1:2::/64", 9),
    ];
    const V6_PROBES: &[(&str, Option<NextHop>)] = &[
        ("2001:db8:1:2::1", Some(9)),
        ("2001:db8:1:3::1", Some(8)),
        ("2001:db8:ffff::1", Some(7)),
        ("2001:db9::1", None),
    ];

    #[test]
    fn every_engine_answers_the_same_small_tables() {
        check_engine::<u32, FibreEngine<u32>>(V4_TABLE, V4_PROBES);
        check_engine::<u32, PrefixTrieEngine<u32>>(V4_TABLE, V4_PROBES);
        check_engine::<u32, PoptrieCrateEngine<u32>>(V4_TABLE, V4_PROBES);
        check_engine::<u32, TreeBitmapEngine<u32>>(V4_TABLE, V4_PROBES);
        check_engine::<u128, FibreEngine<u128>>(V6_TABLE, V6_PROBES);
        check_engine::<u128, PrefixTrieEngine<u128>>(V6_TABLE, V6_PROBES);
        check_engine::<u128, PoptrieCrateEngine<u128>>(V6_TABLE, V6_PROBES);
        check_engine::<u128, TreeBitmapEngine<u128>>(V6_TABLE, V6_PROBES);
    }

    #[test]
    fn only_fibre_reports_lookup_bytes() {
        let mut fibre = <FibreEngine<u32> as Engine<u32>>::empty();
        fibre
            .insert(parse_prefix("10.0.0.0/8").unwrap(), 1)
            .unwrap();
        assert!(fibre.lookup_bytes().unwrap() > 0);
        assert!(<PrefixTrieEngine<u32> as Engine<u32>>::empty()
            .lookup_bytes()
            .is_none());
    }
}
