//! A plain, obviously-correct LPM: one hash map per prefix length, probed
//! from the longest length down. The oracle for tests of the fast engines.

use std::collections::HashMap;

use crate::{Key, LpmError, Value};

/// Reference longest-prefix match: simple and slow.
#[derive(Debug, Clone)]
pub struct ReferenceLpm<K: Key, V: Value> {
    by_len: Vec<HashMap<K, V>>,
    len: usize,
}

impl<K: Key, V: Value> Default for ReferenceLpm<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

pub(crate) fn check_prefix<K: Key>(prefix: K, len: u8) -> Result<(), LpmError> {
    if len > K::BITS {
        return Err(LpmError::LengthTooLong { len, max: K::BITS });
    }
    if prefix.and(K::prefix_mask(len)) != prefix {
        return Err(LpmError::HostBitsSet { len });
    }
    Ok(())
}

impl<K: Key, V: Value> ReferenceLpm<K, V> {
    /// An empty table.
    pub fn new() -> Self {
        Self {
            by_len: (0..=K::BITS).map(|_| HashMap::new()).collect(),
            len: 0,
        }
    }

    /// Stores `value` for `prefix/len`; returns the value it replaced.
    pub fn insert(&mut self, prefix: K, len: u8, value: V) -> Result<Option<V>, LpmError> {
        check_prefix(prefix, len)?;
        let old = self.by_len[len as usize].insert(prefix, value);
        if old.is_none() {
            self.len += 1;
        }
        Ok(old)
    }

    /// Removes `prefix/len`; returns its value if it was stored.
    pub fn remove(&mut self, prefix: K, len: u8) -> Result<Option<V>, LpmError> {
        check_prefix(prefix, len)?;
        let old = self.by_len[len as usize].remove(&prefix);
        if old.is_some() {
            self.len -= 1;
        }
        Ok(old)
    }

    /// The value stored for exactly `prefix/len`.
    pub fn get(&self, prefix: K, len: u8) -> Option<V> {
        self.by_len.get(len as usize)?.get(&prefix).copied()
    }

    /// The value of the longest prefix containing `addr`.
    pub fn lookup(&self, addr: K) -> Option<V> {
        self.matches(addr).next().map(|(_, _, v)| v)
    }

    /// Looks up every address of `addrs` into the same position of `out`.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn lookup_batch(&self, addrs: &[K], out: &mut [Option<V>]) {
        assert_eq!(
            addrs.len(),
            out.len(),
            "lookup_batch: slices differ in length"
        );
        for (a, o) in addrs.iter().zip(out.iter_mut()) {
            *o = self.lookup(*a);
        }
    }

    /// Every stored prefix containing `addr`, longest first.
    pub fn matches(&self, addr: K) -> impl Iterator<Item = (K, u8, V)> + '_ {
        (0..=K::BITS).rev().filter_map(move |len| {
            let p = addr.and(K::prefix_mask(len));
            self.by_len[len as usize].get(&p).map(|v| (p, len, *v))
        })
    }

    /// Number of stored prefixes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every stored prefix, ordered by (address, length).
    pub fn iter(&self) -> impl Iterator<Item = (K, u8, V)> + '_ {
        let mut all: Vec<(K, u8, V)> = self
            .by_len
            .iter()
            .enumerate()
            .flat_map(|(len, m)| m.iter().map(move |(k, v)| (*k, len as u8, *v)))
            .collect();
        all.sort_by_key(|(k, l, _)| (*k, *l));
        all.into_iter()
    }

    /// Bytes used by the structure that lookups read.
    pub fn lookup_bytes(&self) -> usize {
        self.by_len
            .iter()
            .map(|m| m.capacity() * (std::mem::size_of::<K>() + std::mem::size_of::<V>() + 1))
            .sum()
    }
}
