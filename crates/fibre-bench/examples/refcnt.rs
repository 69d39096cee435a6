//! `cargo run --release -p fibre-bench --example refcnt -- [THREADS] [READS]`
fn main() {
    let mut args = std::env::args().skip(1);
    let mut params = fibre_bench::refcnt::engine::RefcntParams::default();
    if let Some(t) = args.next() {
        params.threads = t.parse().unwrap_or_else(|_| usage());
    }
    if let Some(r) = args.next() {
        params.reads = r.parse().unwrap_or_else(|_| usage());
    }
    match fibre_bench::refcnt::engine::run(&params) {
        Ok(result) => print!("{}", result.render()),
        Err(e) => {
            eprintln!("refcnt: {e}");
            std::process::exit(1);
        }
    }
}

fn usage() -> ! {
    eprintln!("usage: refcnt [THREADS] [READS-PER-READER]");
    std::process::exit(2)
}
