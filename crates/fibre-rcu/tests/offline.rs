//! Readers going offline (parked) and coming back online.

use std::thread;
use std::time::Duration;

use fibre_rcu::{Domain, RcuCell, WrongDomain};

#[test]
fn an_offline_reader_does_not_hold_up_reclamation() {
    let domain = Domain::new();
    let cell = RcuCell::new(&domain, String::from("old"));
    let mut reader = domain.register();
    let parked = reader.offline();
    assert_eq!(domain.stats().readers_online, 0);
    cell.publish(String::from("new"));
    assert_eq!(cell.pending().versions, 0, "freed at once: nobody online");
    domain
        .synchronize_timeout(Duration::from_secs(5))
        .expect("an offline reader must not block a grace period");
    drop(parked);
    assert_eq!(domain.stats().readers_online, 1);
    assert_eq!(cell.read(&reader.read()), "new");
}

#[test]
fn a_reader_back_online_holds_up_grace_periods_until_it_reports() {
    let domain = Domain::new();
    let cell = RcuCell::new(&domain, 1u32);
    let mut reader = domain.register();
    drop(reader.offline());
    cell.publish(2);
    assert_eq!(cell.pending().versions, 1, "the online reader may hold 1");
    assert_eq!(cell.reclaim(), 0);
    {
        let guard = reader.read();
        assert_eq!(*cell.read(&guard), 2);
    }
    reader.quiescent();
    assert_eq!(cell.reclaim(), 1);
}

#[test]
fn a_reader_can_park_on_one_thread_and_resume_on_another() {
    let domain = Domain::new();
    let cell = RcuCell::new(&domain, 0u64);
    let mut reader = domain.register();
    // The reader parks and resumes 200 times on another thread while this
    // one publishes; then the handle comes back here.
    let mut reader = thread::scope(|s| {
        let cell = &cell;
        let worker = s.spawn(move || {
            let mut last = 0;
            for _ in 0..200 {
                let seen = *cell.read(&reader.read());
                assert!(seen >= last, "went back from {last} to {seen}");
                last = seen;
                reader.quiescent();
                let _parked = reader.offline();
                thread::yield_now();
            }
            reader
        });
        for value in 1..=100 {
            cell.publish(value);
            cell.reclaim();
        }
        worker.join().unwrap()
    });
    for value in 101..=110 {
        cell.publish(value);
    }
    {
        let _parked = reader.offline();
        cell.synchronize();
    }
    assert_eq!(cell.pending().versions, 0);
    assert_eq!(*cell.read(&reader.read()), 110);
}

#[test]
fn dropping_a_reader_unregisters_it() {
    let domain = Domain::new();
    let cell = RcuCell::new(&domain, 'a');
    let first = domain.register();
    let second = domain.register();
    assert_ne!(first.id(), second.id());
    assert_eq!(domain.stats().readers_registered, 2);
    cell.publish('b');
    drop(first);
    assert_eq!(cell.reclaim(), 0, "the second reader still may hold 'a'");
    drop(second);
    assert_eq!(domain.stats().readers_registered, 0);
    assert_eq!(cell.reclaim(), 1);
}

#[test]
fn a_guard_of_another_domain_is_refused() {
    let ours = Domain::new();
    let theirs = Domain::new();
    let cell = RcuCell::new(&ours, 5u8);
    let foreign = theirs.register();
    let guard = foreign.read();
    assert_eq!(cell.try_read(&guard), Err(WrongDomain));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| *cell.read(&guard)));
    assert!(result.is_err());
    let own = ours.register();
    assert_eq!(cell.try_read(&own.read()), Ok(&5));
}

#[test]
fn a_leaked_offline_guard_cannot_leave_a_reader_reading_offline() {
    let domain = Domain::new();
    let cell = RcuCell::new(&domain, 1u32);
    let mut reader = domain.register();
    std::mem::forget(reader.offline());
    assert_eq!(domain.stats().readers_online, 0);
    reader.quiescent(); // reporting does not bring it online (that needs a fence)
    assert_eq!(domain.stats().readers_online, 0);
    let guard = reader.read(); // back online before anything is read
    assert_eq!(domain.stats().readers_online, 1);
    let seen = cell.read(&guard);
    cell.publish(2);
    assert_eq!(cell.reclaim(), 0, "the reader may still hold version 1");
    assert_eq!(*seen, 1);
}
