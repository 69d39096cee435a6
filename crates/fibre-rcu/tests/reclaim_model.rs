//! Reclamation against a reference model: after any sequence of
//! publications, quiescent reports, readers parking, resuming, leaving and
//! joining, and reclaim polls, exactly the versions the model says are
//! unreachable have been freed: none too early, none kept longer than the
//! protocol requires.

use std::sync::{Arc, Mutex};

use fibre_rcu::{Domain, RcuCell, ReaderHandle};
use proptest::prelude::*;

const READERS: usize = 3;

#[derive(Debug, Clone)]
enum Op {
    Publish,
    Report(usize),
    Park(usize),
    Read(usize),
    Leave(usize),
    Join(usize),
    Reclaim,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Publish),
        3 => (0..READERS).prop_map(Op::Report),
        1 => (0..READERS).prop_map(Op::Park),
        1 => (0..READERS).prop_map(Op::Read),
        1 => (0..READERS).prop_map(Op::Leave),
        1 => (0..READERS).prop_map(Op::Join),
        2 => Just(Op::Reclaim),
    ]
}

/// A version that logs its own drop.
struct Version {
    number: usize,
    freed: Arc<Mutex<Vec<usize>>>,
}

impl Drop for Version {
    fn drop(&mut self) {
        self.freed.lock().unwrap().push(self.number);
    }
}

/// What the model knows about one reader.
#[derive(Clone, Copy)]
struct ModelReader {
    /// Registered and not parked: its reports gate reclamation.
    online: bool,
    /// Publications that happened before its last report or coming online.
    synced_at: usize,
}

struct Model {
    readers: [Option<ModelReader>; READERS],
    /// Publications so far; version `k` is retired by publication `k + 1`.
    publications: usize,
    /// Retired versions the model has freed.
    freed: Vec<usize>,
}

impl Model {
    /// A poll: free, oldest first, every retired version that every online
    /// reader has synced past.
    fn poll(&mut self) {
        let horizon = self
            .readers
            .iter()
            .flatten()
            .filter(|r| r.online)
            .map(|r| r.synced_at)
            .min()
            .unwrap_or(usize::MAX);
        let next = self.freed.len();
        // Version k was retired by publication k + 1.
        for version in next..self.publications {
            if version < horizon {
                self.freed.push(version);
            }
        }
    }
}

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let freed = Arc::new(Mutex::new(Vec::new()));
    let domain = Domain::new();
    let cell = RcuCell::new(
        &domain,
        Version {
            number: 0,
            freed: Arc::clone(&freed),
        },
    );
    let mut handles: Vec<Option<ReaderHandle>> = (0..READERS).map(|_| None).collect();
    let mut model = Model {
        readers: [None; READERS],
        publications: 0,
        freed: Vec::new(),
    };
    for op in ops {
        match *op {
            Op::Publish => {
                cell.publish(Version {
                    number: model.publications + 1,
                    freed: Arc::clone(&freed),
                });
                model.publications += 1;
                model.poll();
            }
            Op::Report(i) => {
                if let (Some(handle), Some(reader)) = (&mut handles[i], &mut model.readers[i]) {
                    handle.quiescent();
                    if reader.online {
                        reader.synced_at = model.publications;
                    }
                }
            }
            Op::Park(i) => {
                if let (Some(handle), Some(reader)) = (&mut handles[i], &mut model.readers[i]) {
                    // Parked until its next read section.
                    std::mem::forget(handle.offline());
                    reader.online = false;
                }
            }
            Op::Read(i) => {
                if let (Some(handle), Some(reader)) = (&handles[i], &mut model.readers[i]) {
                    let guard = handle.read();
                    let seen = cell.read(&guard).number;
                    prop_assert_eq!(seen, model.publications, "stale read");
                    if !reader.online {
                        *reader = ModelReader {
                            online: true,
                            synced_at: model.publications,
                        };
                    }
                }
            }
            Op::Leave(i) => {
                handles[i] = None;
                model.readers[i] = None;
            }
            Op::Join(i) => {
                if handles[i].is_none() {
                    handles[i] = Some(domain.register());
                    model.readers[i] = Some(ModelReader {
                        online: true,
                        synced_at: model.publications,
                    });
                }
            }
            Op::Reclaim => {
                cell.reclaim();
                model.poll();
            }
        }
        let actual = freed.lock().unwrap().clone();
        prop_assert_eq!(&actual, &model.freed, "after {:?}", op);
        prop_assert_eq!(
            cell.pending().versions,
            model.publications - model.freed.len()
        );
    }
    Ok(())
}

proptest! {
    #[test]
    fn reclaim_frees_exactly_what_the_model_frees(ops in prop::collection::vec(op(), 1..60)) {
        run(&ops)?;
    }
}

#[test]
fn a_reader_that_joins_late_does_not_hold_up_older_versions() {
    run(&[
        Op::Join(0),
        Op::Publish,
        Op::Join(1),
        Op::Report(0),
        Op::Reclaim,
    ])
    .unwrap();
}
