//! A reader registered for a worker is named by that worker, in its handle
//! and in the stall report a writer makes about it.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use fibre_base::WorkerId;
use fibre_rcu::{Domain, RcuCell, StallReport};

#[test]
fn a_stalled_worker_reader_is_reported_by_its_worker() {
    let reports: Arc<Mutex<Vec<StallReport>>> = Arc::default();
    let sink = Arc::clone(&reports);
    let domain = Domain::builder()
        .stall_after(Duration::from_millis(20))
        .on_stall(move |report| sink.lock().unwrap().push(report.clone()))
        .build();
    let cell = RcuCell::new(&domain, 0u64);
    let (release, released) = mpsc::channel::<()>();
    let (registered, ready) = mpsc::channel::<Option<WorkerId>>();
    let stuck = {
        let domain = domain.clone();
        // No thread name: the label falls back to the worker.
        thread::spawn(move || {
            let mut reader = domain.register_worker(WorkerId::new(7));
            registered.send(reader.worker()).unwrap();
            released.recv().unwrap();
            reader.quiescent();
        })
    };
    assert_eq!(ready.recv().unwrap(), Some(WorkerId::new(7)));
    cell.publish(1);
    let deadline = Instant::now() + Duration::from_secs(10);
    while reports.lock().unwrap().is_empty() && Instant::now() < deadline {
        cell.reclaim();
        thread::sleep(Duration::from_millis(1));
    }
    release.send(()).unwrap();
    stuck.join().unwrap();
    let reports = reports.lock().unwrap();
    let report = reports.first().expect("the stalled reader was reported");
    assert_eq!(report.worker, Some(WorkerId::new(7)));
    assert_eq!(report.reader_label, "worker 7");
}
