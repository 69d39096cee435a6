//! Clones of a Poptrie share their lookup-array chunks and RIB, yet evolve
//! independently: each side's updates copy the chunks they write, and a
//! clone taken earlier (a published version) keeps answering as it did.

use fibre_lpm::{Key, Poptrie, ReferenceLpm};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op<K> {
    Insert(K, u8, u32),
    Remove(K, u8),
    /// Take a clone of the table here and keep it, frozen, to the end.
    Snapshot,
}

fn prefix_of<K: Key>(addr: K, len: u8) -> K {
    addr.and(K::prefix_mask(len))
}

/// Operations on addresses from `addr`, with values up to `value_max`
/// (`u32::MAX` reaches the values too wide to inline and "no route").
fn ops<K: Key + 'static>(
    addr: impl Strategy<Value = K> + Clone + 'static,
    len: impl Strategy<Value = u8> + Clone + 'static,
    value_max: u32,
) -> impl Strategy<Value = Vec<Op<K>>> {
    let op = prop_oneof![
        6 => (addr.clone(), len.clone(), 0..=value_max)
            .prop_map(|(a, l, v)| Op::Insert(prefix_of(a, l), l, v)),
        3 => (addr, len).prop_map(|(a, l)| Op::Remove(prefix_of(a, l), l)),
        1 => Just(Op::Snapshot),
    ];
    prop::collection::vec(op, 1..160)
}

fn v4_addr() -> impl Strategy<Value = u32> + Clone {
    prop_oneof![
        any::<u32>(),
        (0u32..4, any::<u32>())
            .prop_map(|(r, low)| (0x0a00_0000 | (r << 22)) ^ (low & 0x003f_ffff)),
    ]
}

fn v6_addr() -> impl Strategy<Value = u128> + Clone {
    (0u128..3, 0u128..4, any::<u128>())
        .prop_map(|(top, mid, low)| (0x2a0_u128 << 116) | (top << 116) | (mid << 104) | (low >> 24))
}

fn v6_len() -> impl Strategy<Value = u8> + Clone {
    prop_oneof![0u8..=12, 13u8..=24, 25u8..=40, 41u8..=128]
}

/// Every probe answers on `table` as on `model`, singly and in a batch,
/// and both store the same prefixes.
fn agrees<K: Key>(
    table: &Poptrie<K, u32>,
    model: &ReferenceLpm<K, u32>,
    probes: &[K],
) -> Result<(), TestCaseError> {
    let mut batch = vec![None; probes.len()];
    table.lookup_batch(probes, &mut batch);
    for (&addr, &batched) in probes.iter().zip(&batch) {
        prop_assert_eq!(
            table.lookup(addr),
            model.lookup(addr),
            "lookup {:x?}",
            addr.to_u128()
        );
        prop_assert_eq!(batched, model.lookup(addr), "batched {:x?}", addr.to_u128());
    }
    prop_assert!(table.iter().eq(model.iter()));
    Ok(())
}

/// Applies `op` to both the table and its model.
fn apply<K: Key>(
    table: &mut Poptrie<K, u32>,
    model: &mut ReferenceLpm<K, u32>,
    op: &Op<K>,
) -> Result<(), TestCaseError> {
    match *op {
        Op::Insert(p, l, v) => prop_assert_eq!(table.insert(p, l, v), model.insert(p, l, v)),
        Op::Remove(p, l) => prop_assert_eq!(table.remove(p, l), model.remove(p, l)),
        Op::Snapshot => {}
    }
    Ok(())
}

/// A common history, a clone, then two different histories on the two
/// sides, with snapshots (clones kept frozen) taken along both: every
/// version answers as its own model at the end.
fn clones_evolve_independently<K: Key>(
    common: &[Op<K>],
    left_ops: &[Op<K>],
    right_ops: &[Op<K>],
    probes: &[K],
) -> Result<(), TestCaseError> {
    let mut left = Poptrie::<K, u32>::new();
    let mut left_model = ReferenceLpm::new();
    let mut frozen: Vec<(Poptrie<K, u32>, ReferenceLpm<K, u32>)> = Vec::new();
    for op in common {
        apply(&mut left, &mut left_model, op)?;
    }
    let mut right = left.clone();
    let mut right_model = left_model.clone();
    prop_assert_eq!(right.stats(), left.stats());
    for (side, ops) in [(0, left_ops), (1, right_ops)] {
        let (table, model) = if side == 0 {
            (&mut left, &mut left_model)
        } else {
            (&mut right, &mut right_model)
        };
        for op in ops {
            if let Op::Snapshot = op {
                frozen.push((table.clone(), model.clone()));
            }
            apply(table, model, op)?;
        }
    }
    // Addresses inside the prefixes used, plus the probes.
    let mut all_probes: Vec<K> = probes.to_vec();
    for op in common.iter().chain(left_ops).chain(right_ops) {
        if let Op::Insert(p, _, _) | Op::Remove(p, _) = *op {
            all_probes.push(p);
        }
    }
    agrees(&left, &left_model, &all_probes)?;
    agrees(&right, &right_model, &all_probes)?;
    for (table, model) in &frozen {
        agrees(table, model, &all_probes)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn ipv4_clones_evolve_independently(
        common in ops(v4_addr(), 0u8..=32, 1000),
        left in ops(v4_addr(), 0u8..=32, 1000),
        right in ops(v4_addr(), 0u8..=32, 1000),
        probes in prop::collection::vec(v4_addr(), 64),
    ) {
        clones_evolve_independently(&common, &left, &right, &probes)?;
    }

    #[test]
    fn ipv6_clones_evolve_independently(
        common in ops(v6_addr(), v6_len(), u32::MAX),
        left in ops(v6_addr(), v6_len(), u32::MAX),
        right in ops(v6_addr(), v6_len(), u32::MAX),
        probes in prop::collection::vec(v6_addr(), 64),
    ) {
        clones_evolve_independently(&common, &left, &right, &probes)?;
    }
}

/// `n` pseudo-random IPv4 prefixes of /8../32 (a fixed xorshift, so that
/// the table is the same at every run).
fn random_v4(n: usize) -> Vec<(u32, u8, u32)> {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    (0..n)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = 8 + (state >> 59) as u8 % 25;
            (prefix_of(state as u32, len), len, i as u32 % 5000)
        })
        .collect()
}

#[test]
fn one_insert_after_a_clone_copies_a_handful_of_chunks() {
    let mut table = Poptrie::<u32, u32>::build(random_v4(100_000)).unwrap();
    let published = table.clone();
    let total = table.chunk_bytes();
    assert_eq!(table.shared_bytes_with(&published), total);
    let directories = table.exclusive_bytes();
    assert!(
        directories < total / 100,
        "a fresh clone holds only its directories alone: {directories} of {total}"
    );

    table.insert(0x0a0b_0c00, 24, 77).unwrap();
    let shared = table.shared_bytes_with(&published);
    let copied = total.max(table.chunk_bytes()) - shared;
    // One /24 rebuilds one slot's subtree: it writes one chunk of the top
    // array (16 KiB), a node chunk (24 KiB), a leaf chunk and a chunk of
    // per-node defaults (4 KiB each), perhaps a neighbour of one: a handful
    // of chunks out of megabytes.
    let largest_chunk = 24 * 1024 + 64;
    assert!(
        copied <= 5 * largest_chunk,
        "{copied} bytes copied, of {total}"
    );
    assert!(copied * 20 < total, "{copied} bytes copied, of {total}");
    assert!(table.exclusive_bytes() - directories <= 5 * largest_chunk);
    assert_eq!(table.lookup(0x0a0b_0c01), Some(77));
    assert_ne!(published.lookup(0x0a0b_0c01), Some(77));
    // The published clone still holds every chunk it had.
    assert_eq!(published.chunk_bytes(), total);
}

#[test]
fn a_clone_starts_with_the_same_answers_and_stats() {
    let table = Poptrie::<u32, u32>::build(random_v4(20_000)).unwrap();
    let copy = table.clone();
    assert_eq!(copy.stats(), table.stats());
    assert_eq!(copy.len(), table.len());
    for (prefix, _, _) in random_v4(2_000) {
        assert_eq!(copy.lookup(prefix | 1), table.lookup(prefix | 1));
    }
    // Every array holds chunks, and a clone copies none of them.
    let stats = table.stats();
    assert!(stats.direct_chunks > 0 && stats.node_chunks >= 2 && stats.leaf_chunks > 0);
    assert_eq!(copy.shared_bytes_with(&table), table.chunk_bytes());
}
