//! Time `columns::split` on a file of row lines (indentation 2, 8 columns):
//! `cargo run --release --example columns_bench FILE` (best of 50).
use std::time::Instant;
use toonstream_native::columns::{split, Split};

fn main() {
    let path = std::env::args().nth(1).unwrap_or_default();
    let data = std::fs::read(path).unwrap_or_default();
    let mut best = f64::MAX;
    let mut rows = 0;
    for _ in 0..50 {
        let t = Instant::now();
        if let Split::Columns(c) = split(&data, 2, b',', 8, usize::MAX) {
            rows = c.rows();
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{:.2} ms, {:.0} MB/s, {} rows",
        best * 1e3,
        data.len() as f64 / best / 1e6,
        rows
    );
}
