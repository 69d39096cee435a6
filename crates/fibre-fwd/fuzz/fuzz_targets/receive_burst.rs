//! libFuzzer on the worker's receive path: every input is a burst
//! (`tests/fuzzing::decode`), run through a fresh worker on the test
//! router and checked as `tests/fuzz_bounded.rs` checks it on stable.

#![no_main]

#[path = "../../tests/common/mod.rs"]
mod common;
#[path = "../../tests/fuzzing/mod.rs"]
mod fuzzing;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(violation) = fuzzing::check(&fuzzing::decode(data)) {
        panic!("{violation}");
    }
});
