//! `cargo run --release -p fibre-bench --example udpflood -- [THREADS] [FRAMES]`
fn main() {
    let mut args = std::env::args().skip(1);
    let mut params = fibre_bench::udpflood::engine::UdpFloodParams::default();
    if let Some(t) = args.next() {
        params.threads = t.parse().unwrap_or_else(|_| usage());
    }
    if let Some(f) = args.next() {
        params.frames = f.parse().unwrap_or_else(|_| usage());
    }
    match fibre_bench::udpflood::engine::run(&params) {
        Ok(result) => print!("{}", result.render()),
        Err(e) => {
            eprintln!("udpflood: {e}");
            std::process::exit(1);
        }
    }
}

fn usage() -> ! {
    eprintln!("usage: udpflood [THREADS] [FRAMES-PER-THREAD]");
    std::process::exit(2)
}
