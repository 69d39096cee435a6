//! Writes the configuration files whose loading time docs/BENCHMARKS.md
//! quotes ("Loading many links and tunnels"): the generators of
//! `tests/scale.rs` at the sizes measured.
//!
//! ```text
//! cargo run --release -p fibre --example scale_inputs -- DIR
//! ```

// The tests use the rest of it.
#[allow(dead_code)]
#[path = "../tests/support/scale_inputs.rs"]
mod scale_inputs;

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| ".".into()));
    std::fs::create_dir_all(&dir)?;
    let files = [
        (
            "refused-tunnels-1600.conf",
            scale_inputs::refused_tunnels(1600),
        ),
        (
            "refused-tunnels-3200.conf",
            scale_inputs::refused_tunnels(3200),
        ),
        (
            "tunnel-chain-2000.conf",
            scale_inputs::tunnel_chain(2000, false),
        ),
        (
            "tunnel-loop-2000.conf",
            scale_inputs::tunnel_chain(2000, true),
        ),
        ("force-cascade-400.conf", scale_inputs::force_cascade(400)),
        ("dummies-up-10000.conf", scale_inputs::dummies_up(10_000)),
        ("veth-pairs-up-1000.conf", scale_inputs::veth_pairs_up(1000)),
    ];
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text)?;
        println!("{}", path.display());
    }
    Ok(())
}
