//! The Poptrie engine against the reference oracle: random tables, nested
//! prefixes, interleaved inserts/removes/lookups, batch against single.

use fibre_lpm::{Key, LpmError, Poptrie, ReferenceLpm, Value};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op<K> {
    Insert(K, u8, u32),
    Remove(K, u8),
    Lookup(K),
}

/// A prefix of `len` bits of `addr` (host bits cleared).
fn prefix_of<K: Key>(addr: K, len: u8) -> K {
    addr.and(K::prefix_mask(len))
}

/// Addresses clustered under a few roots so that prefixes nest and collide.
fn clustered_v4() -> impl Strategy<Value = u32> + Clone {
    prop_oneof![
        any::<u32>(),
        (0u32..4, any::<u32>())
            .prop_map(|(root, low)| (0x0a00_0000 | (root << 22)) ^ (low & 0x003f_ffff)),
        (0u32..2, any::<u16>()).prop_map(|(root, low)| 0xc0a8_0000 + (root << 16) + u32::from(low)),
    ]
}

fn clustered_v6() -> impl Strategy<Value = u128> + Clone {
    prop_oneof![
        any::<u128>(),
        (0u128..4, any::<u64>())
            .prop_map(|(root, low)| (0x2001_0db8_u128 << 96) | (root << 80) | u128::from(low)),
        (any::<u16>(), any::<u128>())
            .prop_map(|(a, low)| (0x2a00_u128 << 112) | (u128::from(a) << 80) | (low >> 48)),
    ]
}

fn ops<K: Key + 'static>(
    addr: impl Strategy<Value = K> + Clone + 'static,
    value_max: u32,
) -> impl Strategy<Value = Vec<Op<K>>> {
    let bits = K::BITS;
    let op = prop_oneof![
        4 => (addr.clone(), 0..=bits, 0..=value_max).prop_map(|(a, l, v)| Op::Insert(prefix_of(a, l), l, v)),
        2 => (addr.clone(), 0..=bits).prop_map(|(a, l)| Op::Remove(prefix_of(a, l), l)),
        3 => addr.prop_map(Op::Lookup),
    ];
    prop::collection::vec(op, 1..200)
}

/// Like [`ops`] for IPv6, but with lengths up to /40 around the two
/// direct-pointing levels (/12 and /24), so that chunks under a /12 are
/// created, repainted by shorter prefixes and folded back.
fn ops_v6_short(value_max: u32) -> impl Strategy<Value = Vec<Op<u128>>> {
    // A few /12s, each with a few /24s, so prefixes nest and collide.
    let addr = (0u128..3, 0u128..4, any::<u128>()).prop_map(|(top, mid, low)| {
        (0x2a0_u128 << 116) | (top << 116) | (mid << 104) | (low >> 24)
    });
    let len = prop_oneof![0u8..=12, 13u8..=24, 25u8..=40, 41u8..=128];
    let op = prop_oneof![
        4 => (addr.clone(), len.clone(), 0..=value_max).prop_map(|(a, l, v)| Op::Insert(prefix_of(a, l), l, v)),
        3 => (addr.clone(), len).prop_map(|(a, l)| Op::Remove(prefix_of(a, l), l)),
        2 => addr.prop_map(Op::Lookup),
    ];
    prop::collection::vec(op, 1..200)
}

/// Replays `ops` on both engines, comparing every answer, then compares a
/// sweep of lookups (single and batched) and the stored contents.
fn replay<K: Key, V: Value + TryFrom<u32>>(ops: &[Op<K>], probes: &[K]) -> Result<(), TestCaseError>
where
    <V as TryFrom<u32>>::Error: std::fmt::Debug,
{
    let mut fast: Poptrie<K, V> = Poptrie::new();
    let mut oracle: ReferenceLpm<K, V> = ReferenceLpm::new();
    let mut addrs: Vec<K> = probes.to_vec();
    for op in ops {
        match *op {
            Op::Insert(p, l, v) => {
                let v = V::try_from(v).unwrap();
                prop_assert_eq!(fast.insert(p, l, v), oracle.insert(p, l, v));
                prop_assert_eq!(fast.get(p, l), Some(v));
                addrs.push(p);
            }
            Op::Remove(p, l) => {
                prop_assert_eq!(fast.remove(p, l), oracle.remove(p, l));
                prop_assert_eq!(fast.get(p, l), None);
                addrs.push(p);
            }
            Op::Lookup(a) => {
                prop_assert_eq!(fast.lookup(a), oracle.lookup(a), "lookup {:?}", a);
                addrs.push(a);
            }
        }
    }
    // Probe each touched address and its neighbours at the edges of ranges.
    let mut around = Vec::new();
    for &a in &addrs {
        let x = a.to_u128();
        around.push(a);
        around.push(K::from_u128(x.wrapping_add(1)));
        around.push(K::from_u128(x.wrapping_sub(1)));
        around.push(K::from_u128(x | 0xff));
    }
    let mut batch = vec![None; around.len()];
    fast.lookup_batch(&around, &mut batch);
    for (&a, &b) in around.iter().zip(&batch) {
        let expected = oracle.lookup(a);
        prop_assert_eq!(fast.lookup(a), expected, "lookup {:?}", a);
        prop_assert_eq!(b, expected, "batch {:?}", a);
        let m1: Vec<_> = fast.matches(a).collect();
        let m2: Vec<_> = oracle.matches(a).collect();
        prop_assert_eq!(m1, m2);
    }
    prop_assert_eq!(fast.len(), oracle.len());
    prop_assert_eq!(fast.is_empty(), oracle.is_empty());
    prop_assert_eq!(
        fast.iter().collect::<Vec<_>>(),
        oracle.iter().collect::<Vec<_>>()
    );
    for (p, l, v) in oracle.iter() {
        prop_assert_eq!(fast.get(p, l), Some(v));
    }
    // Batches of lengths around the lane count agree with single lookups.
    for n in [0, 1, 63, 64, 65, 130] {
        let addrs: Vec<K> = around.iter().copied().cycle().take(n).collect();
        let mut out = vec![None; addrs.len()];
        fast.lookup_batch(&addrs, &mut out);
        for (&a, &o) in addrs.iter().zip(&out) {
            prop_assert_eq!(o, fast.lookup(a));
        }
    }
    // A bulk build of the final contents answers the same.
    let built = Poptrie::<K, V>::build(oracle.iter()).unwrap();
    for &a in &around {
        prop_assert_eq!(built.lookup(a), oracle.lookup(a), "built {:?}", a);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn v4_u32_matches_reference(ops in ops(clustered_v4(), u32::MAX), probes in prop::collection::vec(any::<u32>(), 0..64)) {
        replay::<u32, u32>(&ops, &probes)?;
    }

    #[test]
    fn v4_u16_small_values_matches_reference(ops in ops(clustered_v4(), 3), probes in prop::collection::vec(any::<u32>(), 0..64)) {
        replay::<u32, u16>(&ops, &probes)?;
    }

    #[test]
    fn v4_u16_with_max_value_matches_reference(ops in ops(clustered_v4(), u32::from(u16::MAX)), probes in prop::collection::vec(any::<u32>(), 0..64)) {
        // Values drawn over the full u16 range, u16::MAX (the "no route"
        // mark of the arrays) included via the edge cases proptest favours.
        let ops: Vec<_> = ops.into_iter().map(|op| match op {
            Op::Insert(p, l, v) if v % 5 == 0 => Op::Insert(p, l, u32::from(u16::MAX)),
            other => other,
        }).collect();
        replay::<u32, u16>(&ops, &probes)?;
    }

    #[test]
    fn v6_u32_matches_reference(ops in ops(clustered_v6(), u32::MAX), probes in prop::collection::vec(any::<u128>(), 0..64)) {
        replay::<u128, u32>(&ops, &probes)?;
    }

    #[test]
    fn v6_u16_matches_reference(ops in ops(clustered_v6(), 7), probes in prop::collection::vec(any::<u128>(), 0..64)) {
        replay::<u128, u16>(&ops, &probes)?;
    }

    #[test]
    fn v6_short_prefixes_u32_matches_reference(ops in ops_v6_short(u32::MAX), probes in prop::collection::vec(any::<u128>(), 0..64)) {
        // Half the values are too wide to inline (>= 2^31 - 1).
        replay::<u128, u32>(&ops, &probes)?;
    }

    #[test]
    fn v6_short_prefixes_u16_matches_reference(ops in ops_v6_short(5), probes in prop::collection::vec(any::<u128>(), 0..64)) {
        replay::<u128, u16>(&ops, &probes)?;
    }

    #[test]
    fn v6_bulk_build_matches_inserts(entries in prop::collection::vec((clustered_v6(), prop_oneof![0u8..=24, 25u8..=128], any::<u32>()), 0..400)) {
        let entries: Vec<_> = entries.into_iter().map(|(a, l, v)| (prefix_of(a, l), l, v)).collect();
        let built = Poptrie::<u128, u32>::build(entries.iter().copied()).unwrap();
        let mut inserted = Poptrie::<u128, u32>::new();
        let mut oracle = ReferenceLpm::<u128, u32>::new();
        for &(p, l, v) in &entries {
            oracle.insert(p, l, v).unwrap();
            inserted.insert(p, l, v).unwrap();
        }
        prop_assert_eq!(built.len(), oracle.len());
        for &(p, _, _) in &entries {
            for a in [p, p.wrapping_add(1), p.wrapping_sub(1), p | 0xffff_ffff << 80] {
                prop_assert_eq!(built.lookup(a), oracle.lookup(a));
                prop_assert_eq!(inserted.lookup(a), oracle.lookup(a));
            }
        }
    }

    #[test]
    fn v4_bulk_build_matches_inserts(entries in prop::collection::vec((clustered_v4(), 0u8..=32, any::<u32>()), 0..400)) {
        let entries: Vec<_> = entries.into_iter().map(|(a, l, v)| (prefix_of(a, l), l, v)).collect();
        let built = Poptrie::<u32, u32>::build(entries.iter().copied()).unwrap();
        let mut oracle = ReferenceLpm::<u32, u32>::new();
        for &(p, l, v) in &entries {
            oracle.insert(p, l, v).unwrap();
        }
        prop_assert_eq!(built.len(), oracle.len());
        for &(p, _, _) in &entries {
            for a in [p, p.wrapping_add(1), p.wrapping_sub(1), p | 0xff] {
                prop_assert_eq!(built.lookup(a), oracle.lookup(a));
            }
        }
    }
}

#[test]
fn empty_table_has_no_routes() {
    let t = Poptrie::<u32, u16>::new();
    assert!(t.is_empty());
    assert_eq!(t.len(), 0);
    assert_eq!(t.lookup(0), None);
    assert_eq!(t.lookup(u32::MAX), None);
    let mut out = [Some(1); 20];
    t.lookup_batch(&[7; 20], &mut out);
    assert_eq!(out, [None; 20]);
    assert_eq!(t.matches(5).count(), 0);
    assert_eq!(Poptrie::<u128, u32>::new().lookup(u128::MAX), None);
}

#[test]
fn default_route_and_host_routes() {
    let mut t = Poptrie::<u32, u32>::new();
    t.insert(0, 0, 1).unwrap();
    assert_eq!(t.lookup(0xdead_beef), Some(1));
    t.insert(0xdead_beef, 32, 2).unwrap();
    t.insert(0xffff_ffff, 32, 3).unwrap();
    t.insert(0, 32, 4).unwrap();
    assert_eq!(t.lookup(0xdead_beef), Some(2));
    assert_eq!(t.lookup(0xdead_beee), Some(1));
    assert_eq!(t.lookup(0xdead_bef0), Some(1));
    assert_eq!(t.lookup(u32::MAX), Some(3));
    assert_eq!(t.lookup(0), Some(4));
    assert_eq!(t.lookup(1), Some(1));
    assert_eq!(t.remove(0, 0), Ok(Some(1)));
    assert_eq!(t.lookup(0xdead_beee), None);
    assert_eq!(t.lookup(0xdead_beef), Some(2));

    let mut t6 = Poptrie::<u128, u16>::new();
    t6.insert(0, 0, 9).unwrap();
    t6.insert(u128::MAX, 128, 8).unwrap();
    t6.insert(1, 128, 7).unwrap();
    assert_eq!(t6.lookup(u128::MAX), Some(8));
    assert_eq!(t6.lookup(u128::MAX - 1), Some(9));
    assert_eq!(t6.lookup(1), Some(7));
    assert_eq!(t6.lookup(0), Some(9));
}

#[test]
fn removing_absent_prefixes_changes_nothing() {
    let mut t = Poptrie::<u32, u16>::new();
    assert_eq!(t.remove(0x0a00_0000, 8), Ok(None));
    t.insert(0x0a00_0000, 8, 1).unwrap();
    assert_eq!(t.remove(0x0a00_0000, 9), Ok(None));
    assert_eq!(t.remove(0x0a00_0000, 16), Ok(None));
    assert_eq!(t.remove(0, 0), Ok(None));
    assert_eq!(t.len(), 1);
    assert_eq!(t.lookup(0x0a7f_0000), Some(1));
}

#[test]
fn malformed_prefixes_are_refused() {
    let mut t = Poptrie::<u32, u16>::new();
    assert_eq!(
        t.insert(0, 33, 1),
        Err(LpmError::LengthTooLong { len: 33, max: 32 })
    );
    assert_eq!(
        t.insert(0x0a00_0001, 24, 1),
        Err(LpmError::HostBitsSet { len: 24 })
    );
    assert_eq!(
        t.remove(0x0a00_0001, 24),
        Err(LpmError::HostBitsSet { len: 24 })
    );
    assert_eq!(
        t.remove(0, 40),
        Err(LpmError::LengthTooLong { len: 40, max: 32 })
    );
    let mut t6 = Poptrie::<u128, u32>::new();
    assert_eq!(
        t6.insert(0, 129, 1),
        Err(LpmError::LengthTooLong { len: 129, max: 128 })
    );
    assert_eq!(
        t6.insert(1, 127, 1),
        Err(LpmError::HostBitsSet { len: 127 })
    );
    assert!(t.is_empty() && t6.is_empty());
    assert_eq!(
        Poptrie::<u128, u32>::build([(0, 0, 1), (1, 200, 2)]).unwrap_err(),
        LpmError::LengthTooLong { len: 200, max: 128 }
    );
}

#[test]
fn max_values_are_told_apart_from_no_route() {
    let mut t = Poptrie::<u32, u16>::new();
    t.insert(0x0a00_0000, 8, u16::MAX).unwrap();
    t.insert(0x0a01_0000, 16, 3).unwrap();
    assert_eq!(t.lookup(0x0a00_0001), Some(u16::MAX));
    assert_eq!(t.lookup(0x0b00_0001), None);
    assert_eq!(t.lookup(0x0a01_0001), Some(3));
    t.remove(0x0a00_0000, 8).unwrap();
    assert_eq!(t.lookup(0x0a00_0001), None);

    let mut t32 = Poptrie::<u32, u32>::new();
    t32.insert(0x0a00_0000, 8, u32::MAX).unwrap();
    t32.insert(0x0b00_0000, 8, 0x7fff_ffff).unwrap();
    t32.insert(0x0c00_0000, 8, 0x8000_0000).unwrap();
    assert_eq!(t32.lookup(0x0a00_0001), Some(u32::MAX));
    assert_eq!(t32.lookup(0x0b00_0001), Some(0x7fff_ffff));
    assert_eq!(t32.lookup(0x0c00_0001), Some(0x8000_0000));
    assert_eq!(t32.lookup(0x0d00_0001), None);
}

#[test]
fn duplicate_prefixes_in_a_build_keep_the_last_value() {
    let t = Poptrie::<u32, u16>::build([(0x0a00_0000, 8, 1), (0x0a00_0000, 8, 2)]).unwrap();
    assert_eq!((t.len(), t.lookup(0x0a00_0001)), (1, Some(2)));
}

#[test]
fn churn_reuses_freed_blocks() {
    // Repeatedly add and withdraw the same /24s: the pools must stop growing.
    let mut t = Poptrie::<u32, u32>::new();
    let churn = |t: &mut Poptrie<u32, u32>, round: u32| {
        for i in 0..512u32 {
            let p = 0x0a00_0000 | (i << 8);
            t.insert(p, 24, i + round).unwrap();
            t.insert(p | 0x80, 25, i).unwrap();
        }
        for i in (0..512u32).step_by(2) {
            let p = 0x0a00_0000 | (i << 8);
            t.remove(p, 24).unwrap();
            t.remove(p | 0x80, 25).unwrap();
        }
    };
    // Held slots swing from round to round as freed runs merge and split
    // (2x the first round's in some rounds, with chunk-aligned blocks or
    // without), so the bound is on fragmentation, checked after every
    // round: at most 3x the live slots, plus one largest block of slack,
    // and the live slots stay what the first round left (the same prefixes
    // every round). A pool that never reused freed blocks would exceed the
    // first bound within a few rounds; one that lost them, the second.
    let mut first_live = None;
    for round in 0..20 {
        churn(&mut t, round);
        let s = t.stats();
        let live_nodes = s.node_slots - s.free_node_slots;
        let live_leaves = s.leaf_slots - s.free_leaf_slots;
        assert!(s.node_slots <= 3 * live_nodes + 64, "round {round}: {s:?}");
        assert!(s.leaf_slots <= 3 * live_leaves + 64, "round {round}: {s:?}");
        let (nodes, leaves) = *first_live.get_or_insert((live_nodes, live_leaves));
        assert_eq!(live_nodes, nodes, "round {round}: {s:?}");
        assert!(live_leaves <= 2 * leaves, "round {round}: {s:?}");
    }
    assert_eq!(t.lookup(0x0a00_0101), Some(1 + 19));
    assert_eq!(t.lookup(0x0a00_0001), None);
}

#[test]
fn ipv6_chunks_are_folded_back_and_reused() {
    // One /48 under an otherwise empty /12 needs a chunk (4096 entries
    // beside the 4096 top entries); withdrawing it folds the chunk back, and
    // the next /12 to need one reuses it instead of growing the array.
    let mut t = Poptrie::<u128, u32>::new();
    t.insert(0, 0, 7).unwrap();
    let a: u128 = 0x2a00_1450_4001_u128 << 80;
    let b: u128 = 0x2600_1f18_0001_u128 << 80;
    t.insert(a, 48, 1).unwrap();
    assert_eq!(t.stats().direct_entries, 2 * 4096);
    assert_eq!(
        (t.lookup(a | 5), t.lookup(a ^ (1 << 80))),
        (Some(1), Some(7))
    );
    t.remove(a, 48).unwrap();
    assert_eq!(t.lookup(a | 5), Some(7));
    t.insert(b, 48, 2).unwrap();
    assert_eq!(t.stats().direct_entries, 2 * 4096);
    assert_eq!((t.lookup(b | 5), t.lookup(a | 5)), (Some(2), Some(7)));
    // Everything below the folded chunk went back to the pools.
    t.remove(b, 48).unwrap();
    let s = t.stats();
    assert_eq!(
        (s.node_slots, s.free_node_slots),
        (s.free_node_slots, s.node_slots)
    );
}

#[test]
fn ipv6_wide_values_on_short_prefixes() {
    // Values past 31 bits cannot sit inline in a direct entry; under a /12
    // they take a leaf slot, under a chunk one subtree per slot.
    let wide = u32::MAX - 1;
    let mut t = Poptrie::<u128, u32>::new();
    t.insert(0, 0, wide).unwrap();
    assert_eq!(t.lookup(12345), Some(wide));
    let p: u128 = 0x2001_0db8_u128 << 96;
    t.insert(p, 32, 3).unwrap();
    assert_eq!(
        (t.lookup(p | 1), t.lookup(p ^ (1 << 100))),
        (Some(3), Some(wide))
    );
    let p16: u128 = 0x2001_u128 << 112;
    t.insert(p16, 16, wide - 1).unwrap();
    assert_eq!(t.lookup(p ^ (1 << 100)), Some(wide - 1));
    t.remove(p, 32).unwrap();
    assert_eq!(
        (t.lookup(p | 1), t.lookup(p ^ (1 << 120))),
        (Some(wide - 1), Some(wide))
    );
    t.remove(p16, 16).unwrap();
    t.remove(0, 0).unwrap();
    assert_eq!(t.lookup(p), None);
    let mut out = [Some(0); 2];
    t.lookup_batch(&[p, 1], &mut out);
    assert_eq!(out, [None, None]);
}
