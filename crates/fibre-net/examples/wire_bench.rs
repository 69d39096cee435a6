//! Rough per-operation costs of the hot-path pieces of fibre-net:
//! the Internet checksum (fast 64-bit sum against the 16-bit-word
//! baseline), GRE emit and parse, and the IPv4 TTL decrement.
//!
//! `cargo run --release -p fibre-net --example wire_bench [-- ITERATIONS]`
//!
//! Single-threaded wall-clock timing with `Instant`, medians of 5 runs; a
//! shared or throttled machine moves the numbers, so compare runs made on
//! the same machine at the same time.

use std::hint::black_box;
use std::time::Instant;

use fibre_net::ethernet::EtherType;
use fibre_net::ip::Protocol;
use fibre_net::{checksum, gre, ipv4};

fn median_ns_per_op(iterations: u64, mut op: impl FnMut()) -> f64 {
    // Warm caches, branch predictors and the clock before measuring.
    for _ in 0..iterations / 4 {
        op();
    }
    let mut runs: Vec<f64> = (0..5)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iterations {
                op();
            }
            start.elapsed().as_nanos() as f64 / iterations as f64
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    runs[2]
}

fn main() {
    let iterations: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200_000);

    println!("checksum: ns per buffer (GB/s)");
    for len in [20usize, 64, 576, 1500, 9000] {
        let data: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
        let fast = median_ns_per_op(iterations, || {
            black_box(checksum::sum(black_box(&data)));
        });
        let words = median_ns_per_op(iterations, || {
            black_box(checksum::sum_words(black_box(&data)));
        });
        println!(
            "  {len:>5} B  sum {fast:>7.1} ns ({:>5.1} GB/s)   sum_words {words:>7.1} ns ({:>5.1} GB/s)   x{:.1}",
            len as f64 / fast,
            len as f64 / words,
            words / fast
        );
    }

    println!("GRE over a 1400-byte payload: ns per operation");
    for (name, repr) in [
        (
            "no options",
            gre::Repr {
                csum: false,
                key: None,
                seq: None,
                protocol: EtherType::Ipv4,
            },
        ),
        (
            "key+seq",
            gre::Repr {
                csum: false,
                key: Some(1),
                seq: Some(2),
                protocol: EtherType::Ipv4,
            },
        ),
        (
            "csum+key+seq",
            gre::Repr {
                csum: true,
                key: Some(1),
                seq: Some(2),
                protocol: EtherType::Ipv4,
            },
        ),
    ] {
        let mut buf = vec![0x5au8; repr.header_len() + 1400];
        let emit = median_ns_per_op(iterations, || {
            repr.emit(black_box(&mut buf)).unwrap();
        });
        let parse = median_ns_per_op(iterations, || {
            let packet = gre::Packet::new_checked(black_box(&buf[..])).unwrap();
            black_box(gre::Repr::parse(&packet).unwrap());
        });
        println!("  {name:<13} emit {emit:>6.1} ns   parse {parse:>6.1} ns");
    }

    let repr = ipv4::Repr {
        src_addr: "192.0.2.1".parse().unwrap(),
        dst_addr: "192.0.2.2".parse().unwrap(),
        protocol: Protocol::Udp,
        payload_len: 0,
        ttl: 255,
        tos: 0,
        ident: 0,
        dont_frag: true,
        more_frags: false,
        frag_offset: 0,
        options: &[],
    };
    let mut header = [0u8; 20];
    repr.emit(&mut header).unwrap();
    let decrement = median_ns_per_op(iterations, || {
        let mut packet = ipv4::Packet::new_checked(black_box(&mut header[..])).unwrap();
        if packet.decrement_ttl().is_none() {
            packet.set_ttl(255);
            packet.fill_checksum();
        }
    });
    let recompute = median_ns_per_op(iterations, || {
        let mut packet = ipv4::Packet::new_checked(black_box(&mut header[..])).unwrap();
        let ttl = packet.ttl();
        packet.set_ttl(if ttl <= 1 { 255 } else { ttl - 1 });
        packet.fill_checksum();
    });
    println!(
        "IPv4 TTL decrement: incremental (RFC 1624) {decrement:.1} ns, full recompute {recompute:.1} ns"
    );
}
