//! Rough decode throughput of the core (release build; not a benchmark of
//! record: `benchmarks/` will hold those once the binding exists).
//!
//!     cargo run --release --example throughput

use std::time::Instant;

use toonstream_native::value::ValueBuilder;
use toonstream_native::{Cells, DecodeError, Decoder, Options, Scalar, Sink, Table};

/// Touches every cell, keeps nothing: the machine's own cost.
#[derive(Default)]
struct Touch(u64);

impl Sink for Touch {
    type Error = DecodeError;
    fn start_object(&mut self) -> Result<(), DecodeError> {
        Ok(())
    }
    fn end_object(&mut self) -> Result<(), DecodeError> {
        Ok(())
    }
    fn key(&mut self, k: &str) -> Result<(), DecodeError> {
        self.0 += k.len() as u64;
        Ok(())
    }
    fn scalar(&mut self, _: Scalar<'_>) -> Result<(), DecodeError> {
        self.0 += 1;
        Ok(())
    }
    fn start_array(&mut self, _: u64) -> Result<(), DecodeError> {
        Ok(())
    }
    fn values(&mut self, v: &Cells<'_>) -> Result<(), DecodeError> {
        self.0 += v.len() as u64;
        Ok(())
    }
    fn end_array(&mut self) -> Result<(), DecodeError> {
        Ok(())
    }
    fn start_table(&mut self, _: &Table<'_>) -> Result<(), DecodeError> {
        Ok(())
    }
    fn row(&mut self, c: &Cells<'_>) -> Result<(), DecodeError> {
        self.0 += c.iter().filter(|s| matches!(s, Scalar::Int(_))).count() as u64;
        Ok(())
    }
    fn entry(&mut self, _: &str, c: &Cells<'_>) -> Result<(), DecodeError> {
        self.0 += c.len() as u64;
        Ok(())
    }
    fn end_table(&mut self, _: bool) -> Result<(), DecodeError> {
        Ok(())
    }
}

fn run<S: Sink<Error = DecodeError>>(data: &[u8], chunk: usize, sink: &mut S) -> f64 {
    let t = Instant::now();
    let mut d = Decoder::new(Options::default()).expect("options");
    for c in data.chunks(chunk) {
        d.feed(c, sink).expect("valid");
    }
    d.close(sink).expect("valid");
    data.len() as f64 / t.elapsed().as_secs_f64() / 1e6
}

fn main() {
    let n = 300_000;
    let mut table = format!("rows[{n}]{{id,name,email,score,active}}:\n");
    for i in 0..n {
        table.push_str(&format!(
            "  {i},user {i},user{i}@example.com,{}.25,{}\n",
            i % 100,
            i % 2 == 0
        ));
    }
    let m = 60_000;
    let mut orders = format!("orders[{m}]:\n");
    for i in 0..m {
        orders.push_str(&format!(
            "  - id: {i}\n    customer:\n      name: \"Customer {i}\"\n      tier: gold\n    items[2]{{sku,qty,price}}:\n      A{i},2,9.99\n      B{i},1,120\n    paid: true\n"
        ));
    }
    // THROUGHPUT_ONE=table|orders: one events-only pass (for `perf stat`)
    if let Ok(which) = std::env::var("THROUGHPUT_ONE") {
        let data = if which == "orders" {
            orders.as_bytes()
        } else {
            table.as_bytes()
        };
        let t = Instant::now();
        run(data, 16 * 1024, &mut Touch::default());
        println!("{which}: {} bytes in {:?}", data.len(), t.elapsed());
        return;
    }
    for (name, data) in [
        ("uniform table", table.as_bytes()),
        ("nested orders", orders.as_bytes()),
    ] {
        println!("{name}: {:.1} MB", data.len() as f64 / 1e6);
        for chunk in [data.len(), 16 * 1024, 64] {
            let best = (0..3)
                .map(|_| run(data, chunk, &mut Touch::default()))
                .fold(0.0, f64::max);
            println!("  events only, chunks of {chunk:>9}: {best:7.0} MB/s");
        }
        let best = (0..3)
            .map(|_| run(data, data.len(), &mut ValueBuilder::new()))
            .fold(0.0, f64::max);
        println!("  Value tree,  whole input:          {best:7.0} MB/s");
    }
}
