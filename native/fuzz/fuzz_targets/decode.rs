//! Coverage-guided fuzzing of the core decoder (libFuzzer, `cargo +nightly fuzz run decode`).
//!
//! The first input byte picks the options (strict or not, indent size 1/2/4) and the chunk
//! lengths; the rest is the document. Invariants, for every input:
//! 1. decoding returns a value or a `DecodeError`: never a panic, a hang or an overflow;
//! 2. the document fed in pieces (the lengths the input picks, and byte by byte) has the same
//!    outcome as fed whole: the same value and the same event log, or the same error (code,
//!    line, column, line text).
//!
//! The Python engines are compared with each other by `tests/fuzz/fuzz_engines.py` (atheris) and
//! the differential tests; this target covers the core on its own, fast.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toonstream_native::Options;

// The core's test helpers: the logging value builder and chunked decoding (`decode_logged`).
#[path = "../../tests/common/mod.rs"]
mod common;

fuzz_target!(|input: &[u8]| {
    let Some((&pick, data)) = input.split_first() else {
        return;
    };
    // (long inputs cost the byte-by-byte run quadratic time in the log comparison: keep them short)
    if data.len() > 4096 {
        return;
    }
    let opts = Options {
        strict: pick & 1 == 0,
        indent_size: [1, 2, 4, 2][usize::from(pick >> 1 & 3)],
        ..Options::default()
    };
    let whole = common::decode_logged(data, opts, &[]);
    // piece lengths from the pick byte's high bits (1..=8), repeated; then byte by byte
    let step = 1 + usize::from(pick >> 5);
    let cuts = vec![step; data.len() / step + 1];
    assert_eq!(
        common::decode_logged(data, opts, &cuts),
        whole,
        "pieces of {step}"
    );
    assert_eq!(
        common::decode_logged(data, opts, &vec![1; data.len()]),
        whole,
        "byte by byte"
    );
});
