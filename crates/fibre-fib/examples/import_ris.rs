//! Imports the RIS IPv4 table (RIPE NCC RIS, bview 2026-05-11, AS3333)
//! into a FIB and measures the import and the batch lookup.
//!
//! `cargo run --release -p fibre-fib --example import_ris [data/ris-...-v4.txt.gz]`
//!
//! Next hops are assigned deterministically: prefix i goes via gateway
//! 10.0.<i mod 4>.9 on one of four links.

use std::io::{BufRead, BufReader};
use std::net::{IpAddr, Ipv4Addr};
use std::time::Instant;

use fibre_fib::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "data/ris-2026-05-11-as3333-v4.txt.gz".into());
    let file = std::fs::File::open(&path).map_err(|e| format!("{path}: {e}"))?;
    let reader = BufReader::new(flate2::read::GzDecoder::new(file));
    let mut prefixes = Vec::new();
    for line in reader.lines() {
        let line = line?;
        let Some((a, l)) = line.trim().split_once('/') else {
            continue;
        };
        prefixes.push(Prefix::new(a.parse()?, l.parse()?)?);
    }
    let mut fib = Fib::new();
    for i in 0..4u8 {
        let name = format!("d{i}");
        fib.apply(&Command::LinkAdd {
            name: name.clone(),
            kind: LinkKind::Ifb,
            mtu: None,
        })?;
        fib.apply(&Command::LinkSet {
            name: name.clone(),
            up: Some(true),
            mtu: None,
        })?;
        fib.apply(&Command::Addr {
            op: AddrOp::Add,
            spec: AddressSpec::new(&name, IpAddr::V4(Ipv4Addr::new(10, 0, i, 1)), 24),
        })?;
    }
    let hops: Vec<NexthopSpec> = (0..4u8)
        .map(|i| NexthopSpec {
            gateway: Some(IpAddr::V4(Ipv4Addr::new(10, 0, i, 9))),
            dev: None,
            weight: 1,
            onlink: false,
        })
        .collect();
    let start = Instant::now();
    let n = fib.import(
        TABLE_MAIN,
        prefixes
            .iter()
            .enumerate()
            .map(|(i, p)| (*p, hops[i % 4].clone())),
    )?;
    let import = start.elapsed();
    println!(
        "imported {n} prefixes in {:.2} s (RIPE NCC RIS)",
        import.as_secs_f64()
    );

    // Lookups: one address inside each prefix, in batches of 64.
    let keys: Vec<FlowKeyV4> = prefixes
        .iter()
        .map(|p| FlowKeyV4 {
            dst: p.key() as u32 | 1,
            ..Default::default()
        })
        .collect();
    let mut out = vec![Err(Errno::Inval); 64];
    let start = Instant::now();
    let mut found = 0usize;
    for chunk in keys.chunks(64) {
        let out = &mut out[..chunk.len()];
        fib.lookup_output_batch_v4(chunk, out);
        found += out.iter().filter(|r| r.is_ok()).count();
    }
    let t = start.elapsed();
    println!(
        "{} lookups in {:.2} s: {:.1} M lookups/s, {found} routed",
        keys.len(),
        t.as_secs_f64(),
        keys.len() as f64 / t.as_secs_f64() / 1e6
    );
    Ok(())
}
