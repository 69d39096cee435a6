//! The addresses looked up: seeded, so every engine and every run sees the same ones.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::data::Prefix;
use crate::family::{Family, QueryKind};

/// `count` addresses, every address of the family equally likely.
///
/// ```
/// let q = fibre_bench::queries::uniform::<u32>(4, 7);
/// assert_eq!(q, fibre_bench::queries::uniform::<u32>(4, 7));
/// ```
pub fn uniform<K: Family>(count: usize, seed: u64) -> Vec<K> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..count)
        .map(|_| K::from_u128(rng.random::<u128>()))
        .collect()
}

/// `count` addresses, each inside a prefix of `table` chosen uniformly, its
/// host bits random. Empty when the table is.
pub fn inside_prefixes<K: Family>(table: &[Prefix<K>], count: usize, seed: u64) -> Vec<K> {
    if table.is_empty() {
        return Vec::new();
    }
    let mut rng = StdRng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let prefix = table[rng.random_range(0..table.len())];
            let random = K::from_u128(rng.random::<u128>());
            let host = K::from_u128(random.to_u128() & !K::prefix_mask(prefix.len).to_u128());
            K::from_u128(prefix.addr.to_u128() | host.to_u128())
        })
        .collect()
}

/// The query set of `kind` for `table`.
pub fn for_kind<K: Family>(
    kind: QueryKind,
    table: &[Prefix<K>],
    count: usize,
    seed: u64,
) -> Vec<K> {
    match kind {
        QueryKind::Uniform => uniform(count, seed),
        QueryKind::InsidePrefixes => inside_prefixes(table, count, seed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fibre_lpm::Key;

    #[test]
    fn inside_prefixes_stay_inside() {
        let table = [
            Prefix {
                addr: 0x2001_0db8u128 << 96,
                len: 32,
            },
            Prefix {
                addr: 0x2a00_1450_4001u128 << 80,
                len: 48,
            },
        ];
        let queries = inside_prefixes(&table, 1000, 1);
        assert_eq!(queries.len(), 1000);
        for q in &queries {
            let inside = table.iter().any(|p| q & u128::prefix_mask(p.len) == p.addr);
            assert!(inside, "{q:#x}");
        }
        // Both prefixes are drawn and host bits vary.
        assert!(queries.iter().any(|q| q >> 96 == 0x2001_0db8));
        assert!(queries.iter().any(|q| q >> 80 == 0x2a00_1450_4001));
        assert!(queries.windows(2).any(|w| w[0] != w[1]));
        assert!(inside_prefixes::<u128>(&[], 10, 1).is_empty());
    }

    #[test]
    fn uniform_is_seeded() {
        let a = uniform::<u32>(100, 3);
        assert_eq!(a, uniform::<u32>(100, 3));
        assert_ne!(a, uniform::<u32>(100, 4));
        // The high bit is set about half the time: the whole space is drawn.
        let high = a.iter().filter(|q| **q >> 31 == 1).count();
        assert!((20..80).contains(&high), "{high}");
    }
}
