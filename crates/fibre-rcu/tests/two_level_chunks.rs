//! `TwoLevelChunks` against a plain `Vec` model: every version cloned from
//! the working copy keeps the contents it had when cloned whatever the
//! writer does afterwards, a batch copies exactly the leaves it touches, and
//! reads past the end return the fill value.

use std::collections::BTreeSet;

use fibre_rcu::TwoLevelChunks;
use proptest::prelude::*;

const LEAF: usize = 4;
const GROUP: usize = 2;
const FILL: u32 = u32::MAX;

#[derive(Debug, Clone)]
enum Op {
    Set(usize, u32),
    Push(u32),
    Resize(usize, u32),
    IterMut(u32),
    Publish,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..120usize, any::<u32>()).prop_map(|(i, v)| Op::Set(i, v)),
        3 => any::<u32>().prop_map(Op::Push),
        1 => (0..120usize, any::<u32>()).prop_map(|(n, v)| Op::Resize(n, v)),
        1 => any::<u32>().prop_map(Op::IterMut),
        2 => Just(Op::Publish),
    ]
}

proptest! {
    #[test]
    fn versions_are_persistent_and_copies_are_per_leaf(ops in prop::collection::vec(op(), 0..300)) {
        let mut work: TwoLevelChunks<u32, LEAF, GROUP> = TwoLevelChunks::new(FILL);
        let mut model: Vec<u32> = Vec::new();
        let mut versions: Vec<(TwoLevelChunks<u32, LEAF, GROUP>, Vec<u32>)> = Vec::new();
        // Leaves written since the last version was taken (None: all of them).
        let mut touched = Some(BTreeSet::new());
        for op in ops {
            match op {
                Op::Set(i, v) => {
                    let result = work.set(i, v);
                    if i < model.len() {
                        prop_assert_eq!(result, Ok(std::mem::replace(&mut model[i], v)));
                        if let Some(t) = touched.as_mut() {
                            t.insert(i / LEAF);
                        }
                    } else {
                        prop_assert!(result.is_err());
                    }
                }
                Op::Push(v) => {
                    if let Some(t) = touched.as_mut() {
                        t.insert(model.len() / LEAF);
                    }
                    work.push(v);
                    model.push(v);
                }
                Op::Resize(n, v) => {
                    work.resize(n, v);
                    model.resize(n, v);
                    touched = None;
                }
                Op::IterMut(v) => {
                    work.iter_mut().for_each(|x| *x ^= v);
                    model.iter_mut().for_each(|x| *x ^= v);
                    touched = None;
                }
                Op::Publish => {
                    if let (Some((last, last_model)), Some(t)) = (versions.last(), touched.as_ref()) {
                        let both = model.len().min(last_model.len()).div_ceil(LEAF);
                        let untouched = (0..both).filter(|l| !t.contains(l)).count();
                        if model.len() == last_model.len() {
                            prop_assert_eq!(work.leaves_shared_with(last), untouched);
                        }
                    }
                    versions.push((work.clone(), model.clone()));
                    touched = Some(BTreeSet::new());
                }
            }
            prop_assert_eq!(work.len(), model.len());
        }
        prop_assert_eq!(work.iter().copied().collect::<Vec<_>>(), model.clone());
        for (version, model) in versions.iter().chain([(work.clone(), model)].iter()) {
            prop_assert_eq!(version.iter().copied().collect::<Vec<_>>(), model.clone());
            for (i, value) in model.iter().enumerate() {
                prop_assert_eq!(version[i], *value);
                prop_assert_eq!(*version.at(i), *value);
            }
            prop_assert_eq!(version.get(model.len()), None);
            for past in [model.len(), model.len() + 1, model.len() + LEAF * GROUP, 1 << 30] {
                prop_assert_eq!(*version.at(past), FILL);
            }
        }
    }
}
