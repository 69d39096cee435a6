//! Loom model of the route reference count (`fibre_route::rcuref`):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p fibre-route --release --test loom
//! ```
//!
//! Fails if the release/acquire pairing is weakened: the last owner's free
//! (a write to the object) must happen after every other owner's reads.
#![cfg(loom)]

use fibre_route::rcuref::RefCount;
use loom::cell::UnsafeCell;
use loom::sync::Arc;

struct Object {
    refs: RefCount,
    payload: UnsafeCell<u64>,
}

/// Three owners drop concurrently: exactly one is last, and its "free"
/// (a write) is ordered after the others' reads.
#[test]
fn exactly_one_last_owner_and_it_sees_every_other_use() {
    loom::model(|| {
        let obj = Arc::new(Object {
            refs: RefCount::new(),
            payload: UnsafeCell::new(7),
        });
        assert!(obj.refs.get());
        assert!(obj.refs.get());
        let owner = |o: Arc<Object>| {
            move || {
                let v = o.payload.with(|p| unsafe { *p });
                assert_eq!(v, 7);
                if o.refs.put() {
                    o.payload.with_mut(|p| unsafe { *p = 0 });
                    1
                } else {
                    0
                }
            }
        };
        let a = loom::thread::spawn(owner(Arc::clone(&obj)));
        let b = loom::thread::spawn(owner(Arc::clone(&obj)));
        let c = owner(Arc::clone(&obj))();
        let lasts = a.join().unwrap() + b.join().unwrap() + c;
        assert_eq!(lasts, 1);
    });
}

/// A hold by someone who has the object alive never fails, even while
/// another owner drops its reference.
#[test]
fn a_hold_while_alive_never_fails() {
    loom::model(|| {
        let obj = Arc::new(Object {
            refs: RefCount::new(),
            payload: UnsafeCell::new(7),
        });
        assert!(obj.refs.get()); // the dropping owner's reference
        let o = Arc::clone(&obj);
        let dropper = loom::thread::spawn(move || o.refs.put());
        assert!(obj.refs.get());
        assert!(!dropper.join().unwrap());
        assert!(!obj.refs.put());
        assert!(obj.refs.put());
        assert!(!obj.refs.get(), "a dead count refuses holds");
    });
}
