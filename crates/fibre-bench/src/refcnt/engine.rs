//! The engine of `fibre bench refcnt`: the false-sharing experiment of the route's
//! reference count. Reader threads read a route's MTU and device (what
//! every packet reads); holder threads hold and release it (what every
//! `dst_hold`/`dst_release` does). With the counter on the read-mostly
//! line, every hold steals the line the readers need.
//!
//! Layouts, in one run:
//! * `same-line`: the counter at offset 56, beside MTU and device.
//! * `next-line`: the counter alone at offset 64 (its own 64-byte line,
//!   but in the same 128-byte pair the x86-64 adjacent-line prefetcher
//!   fetches together).
//! * `own-pair`: the counter at offset 128, as [`fibre_route::Route`]
//!   has it on x86-64 ([`fibre_base::CACHE_LINE`] there).

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};

use fibre_route::rcuref::RefCount;

use crate::figures::{SummaryFigure, Sweep, SweepRow};
use crate::timing::run_threads;

/// Where the counter sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// On the read-mostly line.
    SameLine,
    /// Alone on the next 64-byte line.
    NextLine,
    /// Alone on the next 128-byte pair.
    OwnPair,
}

impl Layout {
    /// Every layout, in report order.
    pub const ALL: [Layout; 3] = [Layout::SameLine, Layout::NextLine, Layout::OwnPair];

    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Layout::SameLine => "same-line",
            Layout::NextLine => "next-line",
            Layout::OwnPair => "own-pair",
        }
    }

    /// The counter's byte offset in the object.
    pub fn counter_offset(self) -> usize {
        match self {
            Layout::SameLine => std::mem::offset_of!(SameLine, refs),
            Layout::NextLine => std::mem::offset_of!(NextLine, refs),
            Layout::OwnPair => std::mem::offset_of!(OwnPair, refs),
        }
    }
}

/// Route fields readers use, first on the line.
#[repr(C)]
#[derive(Debug)]
struct ReadFields {
    mtu: u32,
    dev: u32,
}

#[repr(C, align(128))]
#[derive(Debug)]
struct SameLine {
    read: ReadFields,
    _rest: [u8; 48],
    refs: RefCount,
}

#[repr(C, align(128))]
#[derive(Debug)]
struct NextLine {
    read: ReadFields,
    _rest: [u8; 56],
    refs: RefCount,
}

#[repr(C, align(128))]
#[derive(Debug)]
struct OwnPair {
    read: ReadFields,
    _rest: [u8; 120],
    refs: RefCount,
}

// The three layouts are the experiment's subject, written out in bytes so
// that they are the same on every target (not CACHE_LINE, which varies).
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(
        offset_of!(SameLine, refs) == 56,
        "same-line must put the counter on the readers' first 64-byte line, \
         the layout whose false sharing the experiment measures: if this \
         fires, resize SameLine::_rest so that refs sits at 56"
    );
    assert!(
        offset_of!(NextLine, refs) == 64,
        "next-line must put the counter on the 64-byte line after the \
         readers', inside the 128-byte pair the adjacent-line prefetcher \
         fetches: if this fires, resize NextLine::_rest so that refs sits at 64"
    );
    assert!(
        offset_of!(OwnPair, refs) == 128,
        "own-pair must put the counter in the 128-byte pair after the \
         readers', as fibre_route::Route has it on x86-64: if this fires, \
         resize OwnPair::_rest so that refs sits at 128"
    );
    assert!(
        size_of::<SameLine>() == 128 && size_of::<NextLine>() == 128,
        "same-line and next-line objects must each fill exactly one 128-byte \
         pair, so that neighbouring objects never share one: if this fires, \
         re-check their _rest padding and align(128)"
    );
    assert!(
        size_of::<OwnPair>() == 256,
        "an own-pair object must fill exactly two 128-byte pairs, readers' \
         and counter's: if this fires, re-check its _rest padding and \
         align(128)"
    );
};

trait Counted: Sync {
    fn read(&self) -> &ReadFields;
    fn refs(&self) -> &RefCount;
}

macro_rules! counted {
    ($t:ty) => {
        impl Counted for $t {
            #[inline]
            fn read(&self) -> &ReadFields {
                &self.read
            }
            #[inline]
            fn refs(&self) -> &RefCount {
                &self.refs
            }
        }
    };
}
counted!(SameLine);
counted!(NextLine);
counted!(OwnPair);

/// Parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefcntParams {
    /// Most threads; every count from 1 up is run. Half the threads
    /// (rounded up) read, the rest hold and release.
    pub threads: usize,
    /// Reads per reader thread.
    pub reads: u64,
}

impl Default for RefcntParams {
    fn default() -> Self {
        RefcntParams {
            threads: 2,
            reads: 500_000_000,
        }
    }
}

/// Why the experiment could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefcntError {
    /// Zero threads or reads.
    #[error(
        "refcnt needs at least one thread and one read (got {threads} threads, {reads} reads)"
    )]
    Empty {
        /// Threads asked for.
        threads: usize,
        /// Reads asked for.
        reads: u64,
    },
}

/// One layout at one thread count.
#[derive(Debug, Clone, PartialEq)]
pub struct RefcntRow {
    /// Layout.
    pub layout: Layout,
    /// Threads (readers + holders).
    pub threads: usize,
    /// Reader threads.
    pub readers: usize,
    /// Reads done by all readers.
    pub reads: u64,
    /// Hold/release pairs done by all holders meanwhile.
    pub holds: u64,
    /// Wall seconds until the last reader finished.
    pub seconds: f64,
    /// CPU seconds of the readers.
    pub reader_cpu_seconds: f64,
    /// CPU seconds of every thread.
    pub cpu_seconds: f64,
}

impl SweepRow for RefcntRow {
    type Case = Layout;
    fn case(&self) -> (Layout, usize) {
        (self.layout, self.threads)
    }
}

impl RefcntRow {
    /// Cores actually used on average: when under the thread count, the
    /// holders ran while the readers waited, not beside them, and the
    /// false sharing could not show.
    pub fn parallelism(&self) -> f64 {
        self.cpu_seconds / self.seconds
    }

    /// Reader CPU nanoseconds per read.
    pub fn ns_per_read(&self) -> f64 {
        self.reader_cpu_seconds * 1e9 / self.reads as f64
    }

    /// Million reads per reader CPU second, times readers.
    pub fn mreads_per_cpu(&self) -> f64 {
        self.readers as f64 * 1e3 / self.ns_per_read()
    }
}

/// A run's rows, layout-major.
pub type RefcntResult = Sweep<RefcntParams, RefcntRow>;

impl RefcntResult {
    /// Readers' throughput (per CPU time) of `layout` over `same-line`.
    pub fn ratio_to_same_line(&self, layout: Layout, threads: usize) -> Option<f64> {
        self.ratio(
            (layout, threads),
            (Layout::SameLine, threads),
            RefcntRow::mreads_per_cpu,
        )
    }

    /// The figures for `fibre bench`'s summary at the most threads.
    pub fn summary(&self) -> Vec<SummaryFigure> {
        let t = self.params.threads;
        Layout::ALL
            .iter()
            .filter_map(|l| {
                let row = self.row(*l, t)?;
                Some(SummaryFigure {
                    name: format!("refcnt readers, counter {} {t} thread(s)", l.name()),
                    value: row.mreads_per_cpu(),
                    unit: "M reads/s (per CPU time)",
                    ratio_to: self
                        .ratio_to_same_line(*l, t)
                        .filter(|_| *l != Layout::SameLine)
                        .map(|r| {
                            (
                                r,
                                format!("refcnt readers, counter same-line {t} thread(s)"),
                            )
                        }),
                })
            })
            .collect()
    }

    /// The table printed by `fibre bench refcnt`.
    pub fn render(&self) -> String {
        let mut out = format!(
            "refcnt: {} read(s) per reader thread; half the threads read MTU+device, the rest hold/release\n\
             {:<10} {:>4} {:>3} {:>3} {:>8} {:>6} {:>8} {:>11} {:>12} {:>10}\n",
            self.params.reads, "layout", "off", "T", "R", "wall s", "cores", "ns/read", "Mreads/cpu", "holds", "x same"
        );
        for r in &self.rows {
            let ratio = self
                .ratio_to_same_line(r.layout, r.threads)
                .map_or("-".into(), |x| format!("{x:.2}"));
            out.push_str(&format!(
                "{:<10} {:>4} {:>3} {:>3} {:>8.3} {:>6.2} {:>8.2} {:>11.1} {:>12} {:>10}\n",
                r.layout.name(),
                r.layout.counter_offset(),
                r.threads,
                r.readers,
                r.seconds,
                r.parallelism(),
                r.ns_per_read(),
                r.mreads_per_cpu(),
                r.holds,
                ratio
            ));
        }
        out
    }
}

/// The readers' loop: one function for every layout, so that all layouts
/// run the same machine code (generic copies differed by ~10% from code
/// alignment alone).
#[inline(never)]
fn read_loop(fields: &ReadFields, reads: u64) -> u64 {
    let mut acc = 0u64;
    for _ in 0..reads {
        let r = black_box(fields);
        // SAFETY: plain loads of initialised `u32` fields through a valid
        // reference; volatile keeps each iteration's load.
        let (mtu, dev) = unsafe {
            (
                std::ptr::read_volatile(&r.mtu),
                std::ptr::read_volatile(&r.dev),
            )
        };
        acc = acc.wrapping_add(u64::from(mtu ^ dev));
    }
    acc
}

/// The holders' loop: hold and release until the readers are done.
#[inline(never)]
fn hold_loop(refs: &RefCount, running: &AtomicBool) -> u64 {
    let mut holds = 0u64;
    while running.load(Ordering::Relaxed) {
        for _ in 0..64 {
            let refs = black_box(refs);
            let took = refs.get();
            debug_assert!(took);
            refs.put();
        }
        holds += 64;
    }
    holds
}

fn measure<C: Counted>(object: &C, layout: Layout, threads: usize, reads: u64) -> RefcntRow {
    let readers = threads.div_ceil(2);
    let running = AtomicBool::new(true);
    let readers_left = std::sync::atomic::AtomicUsize::new(readers);
    let holders_started = std::sync::atomic::AtomicUsize::new(0);
    let (times, results) = run_threads(threads, |i| {
        if i < readers {
            // Start reading only once every holder runs, so that the two
            // overlap at least at first on a machine that time-slices them.
            while holders_started.load(Ordering::Acquire) < threads - readers {
                std::thread::yield_now();
            }
            black_box(read_loop(object.read(), reads));
            if readers_left.fetch_sub(1, Ordering::AcqRel) == 1 {
                running.store(false, Ordering::Release);
            }
            0
        } else {
            holders_started.fetch_add(1, Ordering::AcqRel);
            hold_loop(object.refs(), &running)
        }
    });
    RefcntRow {
        layout,
        threads,
        readers,
        reads: reads * readers as u64,
        holds: results.iter().sum(),
        seconds: times.wall.as_secs_f64(),
        reader_cpu_seconds: times.cpu[..readers]
            .iter()
            .sum::<std::time::Duration>()
            .as_secs_f64(),
        cpu_seconds: times.cpu_total().as_secs_f64(),
    }
}

/// Runs every layout at every thread count from 1 to `params.threads`.
///
/// ```
/// use fibre_bench::refcnt::engine::{run, Layout, RefcntParams};
/// let result = run(&RefcntParams { threads: 2, reads: 10_000 }).unwrap();
/// assert_eq!(result.row(Layout::OwnPair, 2).unwrap().readers, 1);
/// assert_eq!(Layout::OwnPair.counter_offset(), 128);
/// ```
pub fn run(params: &RefcntParams) -> Result<RefcntResult, RefcntError> {
    if params.threads == 0 || params.reads == 0 {
        return Err(RefcntError::Empty {
            threads: params.threads,
            reads: params.reads,
        });
    }
    let read = || ReadFields { mtu: 1500, dev: 2 };
    let same = Box::new(SameLine {
        read: read(),
        _rest: [0; 48],
        refs: RefCount::new(),
    });
    let next = Box::new(NextLine {
        read: read(),
        _rest: [0; 56],
        refs: RefCount::new(),
    });
    let own = Box::new(OwnPair {
        read: read(),
        _rest: [0; 120],
        refs: RefCount::new(),
    });
    // Warm-up, discarded (clock ramp-up, cold caches).
    measure(&*same, Layout::SameLine, 1, params.reads.div_ceil(4));
    let mut rows = Vec::new();
    for layout in Layout::ALL {
        for threads in 1..=params.threads {
            rows.push(match layout {
                Layout::SameLine => measure(&*same, layout, threads, params.reads),
                Layout::NextLine => measure(&*next, layout, threads, params.reads),
                Layout::OwnPair => measure(&*own, layout, threads, params.reads),
            });
        }
    }
    Ok(RefcntResult {
        params: params.clone(),
        rows,
    })
}
