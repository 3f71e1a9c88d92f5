//! Time `columns::split` on a file of row lines: `cargo run --release --example columns_bench FILE`.
use std::time::Instant;
use toonstream_native::columns::{split, Split};

fn main() {
    let path = std::env::args().nth(1).unwrap_or_default();
    let data = std::fs::read(path).unwrap_or_default();
    let t = Instant::now();
    let mut rows = 0;
    for _ in 0..50 {
        if let Split::Columns(c) = split(&data, 2, b',', 8) {
            rows += c.rows();
        }
    }
    let s = t.elapsed().as_secs_f64() / 50.0;
    println!(
        "{:.2} ms, {:.0} MB/s, {} rows",
        s * 1e3,
        data.len() as f64 / s / 1e6,
        rows / 50
    );
}
