//! libFuzzer target: arbitrary bytes as an IPv4 or IPv6 packet, decoded
//! down through UDP, ICMP and GRE.
#![no_main]

use libfuzzer_sys::fuzz_target;

// This target calls only the IP entry point of the shared harness.
#[allow(dead_code)]
#[path = "../harness.rs"]
mod harness;

fuzz_target!(|data: &[u8]| {
    harness::ip(data);
});
