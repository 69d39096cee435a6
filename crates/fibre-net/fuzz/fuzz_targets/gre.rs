//! libFuzzer target: arbitrary bytes as a GRE header and payload.
#![no_main]

use libfuzzer_sys::fuzz_target;

// This target calls only the GRE entry point of the shared harness.
#[allow(dead_code)]
#[path = "../harness.rs"]
mod harness;

fuzz_target!(|data: &[u8]| {
    harness::gre(data);
});
