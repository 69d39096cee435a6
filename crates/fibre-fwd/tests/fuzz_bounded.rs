//! The fuzz target's checks (`tests/fuzzing`) on stable, for a bounded
//! time: the seeds, then random mutations of them (byte changes, cuts,
//! insertions, frames spliced between seeds). libFuzzer searches the same
//! checks with coverage feedback (`fuzz/`, see its README); this run
//! keeps them green in every CI run.
//!
//! Settings: `FIBRE_FUZZ_SECONDS` (3), `FIBRE_FUZZ_SEED` (from the clock,
//! printed), `FIBRE_FUZZ_WRITE_SEEDS` (a directory: the seeds are written
//! there as files, libFuzzer's starting corpus). A failure prints the input as hex: give it to libFuzzer's
//! target as a file to replay it there.

mod common;
mod fuzzing;

use std::time::{Duration, Instant};

use fibre_testkit::SplitMix64 as Rng;
use fuzzing::{check, decode, encode, seeds};

#[test]
fn the_seeds_pass_and_survive_encoding() {
    for (i, seed) in seeds().iter().enumerate() {
        assert_eq!(&decode(&encode(seed)), seed, "seed {i} encodes");
        check(seed).unwrap_or_else(|e| panic!("seed {i}: {e}"));
        if let Some(dir) = std::env::var_os("FIBRE_FUZZ_WRITE_SEEDS") {
            let path = std::path::Path::new(&dir).join(format!("seed-{i}"));
            std::fs::write(&path, encode(seed)).expect("the seed directory is writable");
        }
    }
    assert_eq!(decode(&[]).frames.len(), 0);
    assert_eq!(decode(&[5, 0, 1, 0, 9, 1]).frames, [vec![1u8]]);
}

/// One mutation of `bytes`, with a frame of `other` to splice in.
fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>, other: &[u8]) {
    match rng.below(6) {
        0 | 1 => {
            for _ in 0..=rng.below(8) {
                let at = rng.below(bytes.len());
                if let Some(b) = bytes.get_mut(at) {
                    *b = rng.next() as u8;
                }
            }
        }
        2 => {
            let at = rng.below(bytes.len());
            bytes.truncate(at.max(3));
        }
        3 => {
            let at = rng.below(bytes.len() + 1);
            let n = rng.below(16) + 1;
            let fill: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
            bytes.splice(at..at, fill);
        }
        4 => {
            let at = rng.below(bytes.len());
            let n = rng.below(16) + 1;
            let end = (at + n).min(bytes.len());
            bytes.drain(at..end);
        }
        _ => {
            let from = rng.below(other.len());
            let n = rng.below(200);
            let piece = &other[from..(from + n).min(other.len())];
            let at = rng.below(bytes.len() + 1);
            bytes.splice(at..at, piece.iter().copied());
        }
    }
}

#[test]
fn mutations_of_the_seeds_pass_for_a_bounded_time() {
    let seconds = fibre_testkit::env_number("FIBRE_FUZZ_SECONDS", 3);
    let seed = fibre_testkit::env_number(
        "FIBRE_FUZZ_SEED",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
    );
    println!("FIBRE_FUZZ_SEED={seed} FIBRE_FUZZ_SECONDS={seconds}");
    let corpus: Vec<Vec<u8>> = seeds().iter().map(encode).collect();
    let mut rng = Rng(seed);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut runs = 0u64;
    while Instant::now() < deadline {
        let mut bytes = corpus[rng.below(corpus.len())].clone();
        let other = &corpus[rng.below(corpus.len())];
        for _ in 0..=rng.below(6) {
            mutate(&mut rng, &mut bytes, other);
        }
        let input = decode(&bytes);
        let outcome = std::panic::catch_unwind(|| check(&input));
        let failure = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(violation)) => Some(violation),
            Err(_) => Some("a panic (above)".to_string()),
        };
        if let Some(failure) = failure {
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            panic!("after {runs} runs, {failure}; the input: {hex}");
        }
        runs += 1;
    }
    println!("{runs} mutated inputs checked");
    assert!(runs > 0);
}
