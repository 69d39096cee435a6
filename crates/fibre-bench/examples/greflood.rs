//! Locked versus lockless transmit through one GRE tunnel.
//!
//! `cargo run --release -p fibre-bench --example greflood -- [THREADS] [FRAMES_PER_THREAD] [BATCH] [REPEATS]`
//! (defaults 2, 2000000, 32, 5).

use fibre_bench::greflood::engine::{run, GreFloodParams};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let defaults = GreFloodParams::default();
    let number = |at: usize, name: &str, default: u64| -> u64 {
        match args.get(at) {
            None => default,
            Some(text) => text.parse().unwrap_or_else(|_| {
                eprintln!("greflood: {name} `{text}` is not a number");
                std::process::exit(2);
            }),
        }
    };
    let params = GreFloodParams {
        threads: number(0, "THREADS", defaults.threads as u64) as usize,
        frames_per_thread: number(1, "FRAMES_PER_THREAD", defaults.frames_per_thread),
        batch: number(2, "BATCH", defaults.batch as u64) as usize,
        repeats: number(3, "REPEATS", defaults.repeats as u64) as usize,
        ..defaults
    };
    match run(&params) {
        Ok(result) => print!("{}", result.render()),
        Err(e) => {
            eprintln!("greflood: {e}");
            std::process::exit(1);
        }
    }
}
