//! Shared test helpers: locating the pinned data (never copied into the
//! repository), chunked decoding, JSON-model equality (§2).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value as J;
use toonstream_native::value::{Value, ValueBuilder};
use toonstream_native::{Cells, DecodeError, Decoder, Options, Scalar, Sink, Table};

/// Builds the value and logs every event (rows and values one by one), so
/// that chunkings are compared on events, not only on values.
#[derive(Default)]
pub struct Logged {
    pub log: Vec<String>,
    pub builder: ValueBuilder,
}

impl Sink for Logged {
    type Error = DecodeError;
    fn start_object(&mut self) -> Result<(), DecodeError> {
        self.log.push("{".into());
        self.builder.start_object()
    }
    fn end_object(&mut self) -> Result<(), DecodeError> {
        self.log.push("}".into());
        self.builder.end_object()
    }
    fn key(&mut self, key: &str) -> Result<(), DecodeError> {
        self.log.push(format!("key {key:?}"));
        self.builder.key(key)
    }
    fn scalar(&mut self, value: Scalar<'_>) -> Result<(), DecodeError> {
        self.log.push(format!("{value:?}"));
        self.builder.scalar(value)
    }
    fn start_array(&mut self, declared: u64) -> Result<(), DecodeError> {
        self.log.push(format!("[{declared}"));
        self.builder.start_array(declared)
    }
    fn values(&mut self, values: &Cells<'_>) -> Result<(), DecodeError> {
        self.log
            .extend(values.iter().map(|v| format!("value {v:?}")));
        self.builder.values(values)
    }
    fn end_array(&mut self) -> Result<(), DecodeError> {
        self.log.push("]".into());
        self.builder.end_array()
    }
    fn start_table(&mut self, t: &Table<'_>) -> Result<(), DecodeError> {
        self.log.push(format!(
            "table {:?} n={} keyed={} delim={} width={} line={} {:?}",
            t.fields, t.declared, t.keyed, t.delimiter, t.width, t.line, t.line_text
        ));
        self.builder.start_table(t)
    }
    fn row(&mut self, cells: &Cells<'_>) -> Result<(), DecodeError> {
        self.log.push(format!("row {cells:?}"));
        self.builder.row(cells)
    }
    fn entry(&mut self, key: &str, cells: &Cells<'_>) -> Result<(), DecodeError> {
        self.log.push(format!("entry {key:?} {cells:?}"));
        self.builder.entry(key, cells)
    }
    fn end_table(&mut self, keyed: bool) -> Result<(), DecodeError> {
        self.log.push(format!("end table {keyed}"));
        self.builder.end_table(keyed)
    }
}

/// The toon-spec checkout: `$TOONSTREAM_SPEC_DIR`, else `shared/toon-spec`
/// beside the repository (`../../shared/toon-spec` from this crate).
pub fn spec_dir() -> PathBuf {
    if let Ok(d) = std::env::var("TOONSTREAM_SPEC_DIR") {
        return PathBuf::from(d);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/toon-spec")
}

/// The adversarial corpus of the Python test suite (read in place).
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus")
}

/// An error as the parity checks compare it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Where {
    pub code: &'static str,
    pub line: u64,
    pub column: u64,
    pub line_text: String,
}

impl From<DecodeError> for Where {
    fn from(e: DecodeError) -> Self {
        Where {
            code: e.code,
            line: e.line,
            column: e.column,
            line_text: e.line_text,
        }
    }
}

pub type Outcome = Result<Value, Where>;

/// Decode `data` fed in pieces of the lengths `cuts` (the rest last):
/// the outcome and the event log.
pub fn decode_logged(data: &[u8], opts: Options, cuts: &[usize]) -> (Outcome, Vec<String>) {
    let mut d = Decoder::new(opts).expect("valid options");
    let mut b = Logged::default();
    let mut run = || -> Result<(), DecodeError> {
        let mut at = 0;
        for &c in cuts {
            let end = (at + c).min(data.len());
            d.feed(&data[at..end], &mut b)?;
            at = end;
        }
        d.feed(&data[at..], &mut b)?;
        d.close(&mut b)?;
        // calling close again is a no-op
        d.close(&mut b)
    };
    match run() {
        Ok(()) => {
            let log = std::mem::take(&mut b.log);
            (
                Ok(b.builder
                    .into_value()
                    .expect("a closed decoder has a value")),
                log,
            )
        }
        Err(e) => (Err(e.into()), Vec::new()),
    }
}

pub fn decode_chunks(data: &[u8], opts: Options, cuts: &[usize]) -> Outcome {
    decode_logged(data, opts, cuts).0
}

pub fn decode(data: &[u8], opts: Options) -> Outcome {
    decode_chunks(data, opts, &[])
}

/// xorshift64*: deterministic random splits without a dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n.max(1)
    }
}

/// Whole, one byte at a time, every cut in two (short inputs), and random
/// splits must all give the same outcome; returns it.
pub fn decode_every_way(data: &[u8], opts: Options, name: &str) -> Outcome {
    let (whole, events) = decode_logged(data, opts, &[]);
    let bytes = vec![1; data.len()];
    let by_byte = decode_logged(data, opts, &bytes);
    assert_eq!(by_byte.0, whole, "{name}: byte by byte");
    assert_eq!(by_byte.1, events, "{name}: byte by byte, events");
    if data.len() <= 400 {
        for i in 0..=data.len() {
            let cut = decode_logged(data, opts, &[i]);
            assert_eq!(cut.0, whole, "{name}: cut at {i}");
            assert_eq!(cut.1, events, "{name}: cut at {i}, events");
        }
    }
    let mut rng = Rng::new(data.len() as u64 + 7);
    for round in 0..20 {
        let mut cuts = Vec::new();
        let mut left = data.len();
        while left > 0 {
            let c = 1 + rng.below(left.min(16));
            cuts.push(c);
            left -= c;
        }
        let split = decode_logged(data, opts, &cuts);
        assert_eq!(split.0, whole, "{name}: random split {round} {cuts:?}");
        assert_eq!(
            split.1, events,
            "{name}: random split {round} {cuts:?}, events"
        );
    }
    whole
}

/// A JSON number's text as Python's json module reads it: an int when it
/// has no fraction or exponent (exact), else a float.
enum Num {
    Int(String),
    Float(f64),
}

fn json_num(n: &serde_json::Number) -> Num {
    let t = n.to_string();
    if t.contains(['.', 'e', 'E']) {
        Num::Float(t.parse().unwrap_or(f64::NAN))
    } else {
        Num::Int(canonical_int(&t))
    }
}

fn canonical_int(t: &str) -> String {
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t),
    };
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        "0".into()
    } else if neg {
        format!("-{digits}")
    } else {
        digits.into()
    }
}

/// The exact integer a float equals, if it is integral.
fn float_int(f: f64) -> Option<String> {
    (f.is_finite() && f.fract() == 0.0).then(|| canonical_int(&format!("{f:.0}")))
}

fn num_eq(v: &Value, n: &Num) -> bool {
    let mine = match v {
        Value::Int(i) => Num::Int(i.to_string()),
        Value::BigInt(t) => Num::Int(canonical_int(t)),
        Value::Float(f) => Num::Float(*f),
        _ => return false,
    };
    match (&mine, n) {
        (Num::Int(a), Num::Int(b)) => a == b,
        (Num::Float(a), Num::Float(b)) => a == b,
        (Num::Int(a), Num::Float(f)) | (Num::Float(f), Num::Int(a)) => {
            float_int(*f).as_deref() == Some(a.as_str())
        }
    }
}

/// JSON-model equality (§2), as the Python suite's `json_equal`: bool is not
/// a number, numbers compare by value, object key order counts.  Strings
/// `"Decimal:<text>"` on the JSON side (corpus policies) mean an exact
/// decimal.  Iterative.
pub fn json_equal(v: &Value, j: &J) -> bool {
    let mut todo = vec![(v, j)];
    while let Some((v, j)) = todo.pop() {
        let ok = match (v, j) {
            (Value::Null, J::Null) => true,
            (Value::Bool(a), J::Bool(b)) => a == b,
            (Value::Decimal(t), J::String(s)) => s.strip_prefix("Decimal:") == Some(t.as_str()),
            (Value::Float(f), J::String(s)) if s.starts_with("Decimal:") => {
                // a Decimal in the policy, a float here: compare by value
                s["Decimal:".len()..].parse::<f64>().ok() == Some(*f)
            }
            (_, J::Number(n)) => num_eq(v, &json_num(n)),
            (Value::Str(a), J::String(b)) => a == b,
            (Value::Array(a), J::Array(b)) => {
                if a.len() != b.len() {
                    false
                } else {
                    todo.extend(a.iter().zip(b.iter()));
                    true
                }
            }
            (Value::Object(a), J::Object(b)) => {
                if a.len() != b.len() || !a.iter().zip(b.keys()).all(|((k, _), k2)| k == k2) {
                    false
                } else {
                    todo.extend(a.iter().zip(b.values()).map(|((_, x), y)| (x, y)));
                    true
                }
            }
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    true
}
