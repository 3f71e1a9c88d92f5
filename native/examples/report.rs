//! Decode documents and print each outcome as one JSON line, for the
//! engine-parity script (`tools/parity.py`).
//!
//! Input (stdin): one JSON object per line:
//! `{"hex": "<input bytes as hex>", "strict": true, "indent": 2}`, optionally
//! with `max_line_length`, `max_depth`, `max_fields`, `max_number_length`.  Output: `{"ok": <tree>}` or
//! `{"err": [code, line, column, line_text]}`, where the tree tags numbers:
//! `{"int": "<digits>"}`, `{"float": <f64 bits as u64>}`, `{"dec": "<text>"}`.

use std::io::{BufRead, Write};

use serde_json::{json, Value as J};
use toonstream_native::value::{Value, ValueBuilder};
use toonstream_native::{Decoder, Options};

fn tree(v: Value) -> J {
    match v {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(b),
        Value::Int(i) => json!({ "int": i.to_string() }),
        Value::BigInt(t) => json!({ "int": t }),
        Value::Float(f) => json!({ "float": f.to_bits().to_string() }),
        Value::Decimal(t) => json!({ "dec": t }),
        Value::Str(s) => J::String(s),
        Value::Array(a) => J::Array(a.into_iter().map(tree).collect()),
        // (objects as [key, value] pairs: order and duplicates visible)
        Value::Object(m) => {
            json!({ "obj": m.into_iter().map(|(k, v)| json!([k, tree(v)])).collect::<Vec<_>>() })
        }
    }
}

fn limit(case: &J, name: &str, default: usize) -> usize {
    case[name].as_u64().map_or(default, |m| m as usize)
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .filter_map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout());
    for line in stdin.lock().lines() {
        let line = line.expect("stdin");
        let case: J = serde_json::from_str(&line).expect("case JSON");
        let data = unhex(case["hex"].as_str().unwrap_or(""));
        let opts = Options {
            strict: case["strict"].as_bool().unwrap_or(true),
            indent_size: case["indent"].as_u64().unwrap_or(2) as usize,
            max_line_length: limit(&case, "max_line_length", Options::default().max_line_length),
            max_depth: limit(&case, "max_depth", Options::default().max_depth),
            max_fields: limit(&case, "max_fields", Options::default().max_fields),
            max_number_length: limit(
                &case,
                "max_number_length",
                Options::default().max_number_length,
            ),
            ..Options::default()
        };
        let mut d = Decoder::new(opts).expect("options");
        let mut b = ValueBuilder::new();
        let r = d.feed(&data, &mut b).and_then(|()| d.close(&mut b));
        let res = match r {
            Ok(()) => json!({ "ok": tree(b.into_value().unwrap_or(Value::Null)) }),
            Err(e) => json!({ "err": [e.code, e.line, e.column, e.line_text] }),
        };
        writeln!(out, "{res}").expect("stdout");
    }
}
