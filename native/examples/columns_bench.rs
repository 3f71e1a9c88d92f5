//! Time `columns::split` and `columns::split_planned` on a file of row lines
//! (indentation 2, 8 columns), in runs of 4 MiB as the frame reader hands
//! them: `cargo run --release --example columns_bench FILE` (best of 20).
//! The plan is the one the reader makes for the column kinds the split found.
//! The typed split's buffers are new memory each run (the cells' vectors are
//! recycled): to time the split without glibc returning them to the system,
//! run with `MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=17179869184`.
use std::time::Instant;
use toonstream_native::columns::{split, split_planned, Layout, Plan, Split};

fn main() {
    let path = std::env::args().nth(1).unwrap_or_default();
    let data = std::fs::read(path).unwrap_or_default();
    let mut runs = vec![];
    let mut s = 0;
    while s < data.len() {
        let cut = (s + (4 << 20)).min(data.len());
        let e = data[s..cut]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(data.len(), |i| s + i + 1);
        runs.push(&data[s..e]);
        s = e;
    }
    let Some(Split::Columns(first)) = runs.first().map(|r| split(r, 2, b',', 8, usize::MAX)) else {
        println!("not a run of plain rows");
        return;
    };
    let plan: Vec<Plan> = (0..8)
        .map(|col| {
            let bits = first.bits(col, 0, first.rows());
            Plan {
                layout: Layout::of_kinds(bits),
                allowed: bits,
            }
        })
        .collect();
    let (mut cells, mut planned, mut rows, mut typed) = (f64::MAX, f64::MAX, 0, 0);
    for _ in 0..20 {
        let t = Instant::now();
        rows = runs
            .iter()
            .map(|r| match split(r, 2, b',', 8, usize::MAX) {
                Split::Columns(c) => c.rows(),
                _ => 0,
            })
            .sum();
        cells = cells.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        typed = runs
            .iter()
            .map(|r| match split_planned(r, 2, b',', 8, usize::MAX, &plan) {
                Split::Columns(mut c) => usize::from(!c.take_typed().is_empty()),
                _ => 0,
            })
            .sum();
        planned = planned.min(t.elapsed().as_secs_f64());
    }
    let mb = data.len() as f64 / 1e6;
    println!(
        "split into cells: {:.2} ms, {:.0} MB/s, {rows} rows",
        cells * 1e3,
        mb / cells
    );
    println!(
        "split typed ({plan:?}): {:.2} ms, {:.0} MB/s, {typed} of {} runs typed",
        planned * 1e3,
        mb / planned,
        runs.len()
    );
}
