//! TOON to JSON text or JSON Lines: a [`Sink`] that writes as the core
//! decodes, with no Python objects (so the binding runs it without the GIL).
//!
//! It mirrors the Python engine's `toonstream/tojson.py` byte for byte: the
//! output is `json.dumps(value, ensure_ascii=False)` with
//! `separators=(",", ":")`, or with `indent=N`; numbers are written exactly
//! (ints as their digits, other numbers in `encode_decimal`'s §2 form of
//! `Decimal(token)`), never through a float.  `path` selects what is
//! written, by ijson prefix: JSON output writes the one value there, JSON
//! Lines the elements of the array(s) there.
//!
//! The writer follows the Python writer's triple loop (`_JsonWriter.push`)
//! one virtual triple at a time; prefixes are only computed outside the
//! value being written, where they decide what is written.
//!
//! ```
//! use toonstream_native::{Decoder, Options, json::{JsonWriter, JsonOptions}};
//! let mut d = Decoder::new(Options::default()).unwrap();
//! let mut w = JsonWriter::new(JsonOptions { jsonl: true, ..JsonOptions::default() });
//! d.feed(b"[2]{id,tag}:\n  1,a\n  2,b\n", &mut w).unwrap();
//! w.check().unwrap(); // (the writer's own errors are raised once their line is done)
//! d.close(&mut w).unwrap();
//! w.finish().unwrap();
//! assert_eq!(w.take_output(), b"{\"id\":1,\"tag\":\"a\"}\n{\"id\":2,\"tag\":\"b\"}\n");
//! ```

use std::sync::Arc;

use crate::events::{Cells, FieldOp, ForkRows, Sink, Table};
use crate::format::{decimal_value_text, write_plain_decimal, NumberError};
use crate::prefix::{value_prefix, Kind, Scope};
use crate::scalars::Scalar;
use crate::DecodeError;

/// What to write.
#[derive(Clone, Debug, Default)]
pub struct JsonOptions {
    /// JSON Lines (the elements of the array at the path) instead of JSON
    pub jsonl: bool,
    /// spaces per level (JSON only); `None`: compact
    pub indent: Option<usize>,
    /// an ijson prefix; `None`: the root
    pub path: Option<String>,
}

/// Why the writer stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JsonError {
    Decode(DecodeError),
    /// The value at the path does not fit the output (`not_array`,
    /// `ambiguous_path`, `not_found`); the binding words the message (it
    /// quotes the path with Python's `repr`).  `what` names the value found
    /// (`"an object"`, `"a string"`...), `line` is where it was.
    Path {
        code: &'static str,
        what: &'static str,
        line: u64,
    },
    /// A number the JSON text cannot hold as the Python engine writes it
    /// (`ToonEncodeError` there): the message.
    Number(String),
}

impl From<NumberError> for JsonError {
    fn from(e: NumberError) -> Self {
        JsonError::Number(e.0)
    }
}

impl From<DecodeError> for JsonError {
    fn from(e: DecodeError) -> Self {
        JsonError::Decode(e)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Ev<'a> {
    StartMap,
    EndMap,
    StartArray,
    EndArray,
    Key(&'a str),
    /// a key already written as JSON text (a table header's, made once)
    JsonKey(&'a [u8]),
    Value(Scalar<'a>),
}

impl Ev<'_> {
    /// The value's name in a `not_array` message (`_KIND_NAMES`).
    fn what(self) -> &'static str {
        match self {
            Ev::StartMap => "an object",
            Ev::StartArray => "an array",
            Ev::Value(Scalar::Str(_)) => "a string",
            Ev::Value(Scalar::Null) => "null",
            Ev::Value(Scalar::Bool(_)) => "a boolean",
            Ev::Value(_) => "a number",
            Ev::EndMap | Ev::EndArray | Ev::Key(_) | Ev::JsonKey(_) => "a marker",
        }
    }
}

/// What the writer keeps of an open container of the input, besides its prefixes.
struct Frame {
    /// part of the value being written: its prefixes are not needed
    inside: bool,
    fields: Option<Arc<Header>>,
}

/// A table header's fields, with each name's JSON text made once.
struct Header {
    ops: Vec<FieldOp>,
    /// per op: the JSON string of its name (empty for `Close`)
    keys: Vec<Vec<u8>>,
}

pub struct JsonWriter {
    out: Vec<u8>,
    jsonl: bool,
    unit: Option<usize>,
    path: Option<String>,
    target: String,
    frames: Vec<Scope<Frame>>,
    /// children written so far, per open container of the value being
    /// written (empty between values at the path)
    counts: Vec<u64>,
    after_key: bool,
    matches: u64,
    /// the line being decoded, for the path errors
    line: u64,
    /// the last header, shared by the next equal header
    last_fields: Option<Arc<Header>>,
    /// the output buffer of the last fork, for the next ([`ForkRows`])
    spare: Vec<u8>,
    /// The writer's own error, raised once its line is done: a decode
    /// error later on the same line wins (the Python engine sees a line's
    /// events only after the whole line decoded).  Nothing more is written.
    refused: Option<(JsonError, u64)>,
}

impl JsonWriter {
    pub fn new(options: JsonOptions) -> Self {
        JsonWriter {
            out: Vec::with_capacity(1 << 16),
            jsonl: options.jsonl,
            unit: if options.jsonl { None } else { options.indent },
            target: options.path.clone().unwrap_or_default(),
            path: options.path,
            frames: Vec::new(),
            counts: Vec::new(),
            after_key: false,
            matches: 0,
            line: 0,
            last_fields: None,
            spare: Vec::new(),
            refused: None,
        }
    }

    /// The text written so far (since the last take), UTF-8.
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::replace(&mut self.out, Vec::with_capacity(1 << 16))
    }

    /// The text written so far (since the last take or clear), UTF-8.
    pub fn output(&self) -> &[u8] {
        &self.out
    }

    /// Drop the first `n` bytes of the text written so far (a caller that
    /// copied them out of [`JsonWriter::output`]), keeping the buffer: a
    /// chunk's megabytes of output then land in memory already mapped.
    pub fn discard_output(&mut self, n: usize) {
        if n >= self.out.len() {
            self.out.clear();
        } else {
            self.out.drain(..n);
        }
    }

    /// Bytes waiting to be taken.
    pub fn pending(&self) -> usize {
        self.out.len()
    }

    /// End of input (after the decoder's close): a path that matched
    /// nothing is an error (`not_found`).
    pub fn finish(&mut self) -> Result<(), JsonError> {
        self.check()?;
        if self.matches == 0 && self.path.is_some() {
            return Err(JsonError::Path {
                code: "not_found",
                what: "",
                line: self.line,
            });
        }
        Ok(())
    }

    /// After the decoder's `feed`/`close` returned: the writer's own error
    /// of the last line, if any.
    pub fn check(&mut self) -> Result<(), JsonError> {
        match self.refused.take() {
            Some((e, _)) => Err(e),
            None => Ok(()),
        }
    }

    /// The error to raise when the decoder failed with `e`: the writer's
    /// own, if it was made on an earlier line (invalid UTF-8 is found before
    /// its line reaches the machine), else `e`.
    pub fn first_error(&mut self, e: JsonError) -> JsonError {
        match (&e, &self.refused) {
            (JsonError::Decode(d), Some((_, line))) if *line < d.line => {
                self.refused.take().map_or(e, |(mine, _)| mine)
            }
            _ => e,
        }
    }

    fn value_prefix(&self) -> &str {
        value_prefix(&self.frames)
    }

    fn inside(&self) -> bool {
        !self.counts.is_empty()
    }

    // ------------------------------------------------------- the triple loop

    fn ev(&mut self, prefix: &str, ev: Ev<'_>) -> Result<(), JsonError> {
        if self.refused.is_some() {
            return Ok(());
        }
        match self.write(prefix, ev) {
            Err(e @ (JsonError::Path { .. } | JsonError::Number(_))) => {
                self.refused = Some((e, self.line));
                Ok(())
            }
            r => r,
        }
    }

    fn write(&mut self, prefix: &str, ev: Ev<'_>) -> Result<(), JsonError> {
        if self.counts.is_empty() {
            // between values at the path: look for the next one
            if prefix != self.target
                || matches!(ev, Ev::Key(_) | Ev::JsonKey(_) | Ev::EndMap | Ev::EndArray)
            {
                return Ok(());
            }
            self.matched(ev)?;
            if self.jsonl {
                // the array itself is not written: its elements are the lines
                self.counts.push(0);
                return Ok(());
            }
        }
        match ev {
            Ev::Key(_) | Ev::JsonKey(_) => {
                self.sep();
                match ev {
                    Ev::JsonKey(text) => self.out.extend_from_slice(text),
                    Ev::Key(k) => write_str(&mut self.out, k),
                    _ => {}
                }
                self.out
                    .extend_from_slice(if self.unit.is_some() { b": " } else { b":" });
                self.after_key = true;
            }
            Ev::EndMap | Ev::EndArray => {
                let n = self.counts.pop().unwrap_or(0);
                if self.jsonl && self.counts.is_empty() {
                    return Ok(());
                }
                if let (true, Some(unit)) = (n > 0, self.unit) {
                    let level = self.counts.len() - usize::from(self.jsonl);
                    self.newline(unit * level);
                }
                self.out.push(if ev == Ev::EndMap { b'}' } else { b']' });
                if self.jsonl && self.counts.len() == 1 {
                    self.out.push(b'\n');
                }
            }
            Ev::StartMap | Ev::StartArray | Ev::Value(_) => {
                if self.after_key {
                    self.after_key = false;
                } else {
                    self.sep();
                }
                match ev {
                    Ev::StartMap => {
                        self.out.push(b'{');
                        self.counts.push(0);
                    }
                    Ev::StartArray => {
                        self.out.push(b'[');
                        self.counts.push(0);
                    }
                    Ev::Value(v) => {
                        write_scalar(&mut self.out, v)?;
                        if self.jsonl && self.counts.len() == 1 {
                            self.out.push(b'\n');
                        }
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// A value at the path begins: JSON Lines need an array, JSON output one value.
    fn matched(&mut self, ev: Ev<'_>) -> Result<(), JsonError> {
        self.matches += 1;
        if self.jsonl {
            if ev != Ev::StartArray {
                return Err(JsonError::Path {
                    code: "not_array",
                    what: ev.what(),
                    line: self.line,
                });
            }
        } else if self.matches > 1 && self.path.is_some() {
            return Err(JsonError::Path {
                code: "ambiguous_path",
                what: ev.what(),
                line: self.line,
            });
        }
        Ok(())
    }

    fn sep(&mut self) {
        let Some(&n) = self.counts.last() else { return };
        let mut level = self.counts.len();
        if self.jsonl {
            if level == 1 {
                // a new record: records are separated by the newline already written
                if let Some(c) = self.counts.last_mut() {
                    *c += 1;
                }
                return;
            }
            level -= 1;
        }
        if n > 0 {
            self.out.push(b',');
        }
        if let Some(unit) = self.unit {
            self.newline(unit * level);
        }
        if let Some(c) = self.counts.last_mut() {
            *c += 1;
        }
    }

    fn newline(&mut self, spaces: usize) {
        self.out.push(b'\n');
        self.out.resize(self.out.len() + spaces, b' ');
    }

    // ------------------------------------------------------------ containers

    fn open(
        &mut self,
        kind: Kind,
        ev: Ev<'_>,
        fields: Option<Arc<Header>>,
    ) -> Result<(), JsonError> {
        let (inside, prefix) = if self.inside() {
            (true, String::new())
        } else {
            (false, self.value_prefix().to_owned())
        };
        self.ev(&prefix, ev)?;
        let root = self.frames.is_empty();
        // (the value at the path is itself inside: its children need no prefixes)
        let mark = Frame {
            inside: inside || self.inside(),
            fields,
        };
        self.frames.push(if mark.inside {
            Scope {
                kind,
                prefix,
                root,
                child: String::new(),
                mark,
            }
        } else {
            Scope::new(kind, prefix, root, mark)
        });
        Ok(())
    }

    fn close(&mut self, ev: Ev<'_>) -> Result<(), JsonError> {
        let prefix = self.frames.pop().map(|f| f.prefix).unwrap_or_default();
        self.ev(&prefix, ev)
    }

    fn fields(&mut self, fields: &[FieldOp]) -> Arc<Header> {
        if let Some(f) = &self.last_fields {
            if f.ops == fields {
                return f.clone();
            }
        }
        let keys = fields
            .iter()
            .map(|op| {
                let mut k = Vec::new();
                if let FieldOp::Leaf(name) | FieldOp::Open(name) = op {
                    write_str(&mut k, name);
                }
                k
            })
            .collect();
        let f = Arc::new(Header {
            ops: fields.to_vec(),
            keys,
        });
        self.last_fields = Some(f.clone());
        f
    }

    /// A row object inside the value being written: no prefixes, no allocation.
    fn row_inside(&mut self, header: &Header, cells: &Cells<'_>) -> Result<(), JsonError> {
        let mut next = cells.iter();
        self.ev("", Ev::StartMap)?;
        for (op, key) in header.ops.iter().zip(&header.keys) {
            match op {
                FieldOp::Leaf(_) => {
                    self.ev("", Ev::JsonKey(key))?;
                    // (a short row of a non-strict table: its missing cells are null)
                    self.ev("", Ev::Value(next.next().unwrap_or(Scalar::Null)))?;
                }
                FieldOp::Open(_) => {
                    self.ev("", Ev::JsonKey(key))?;
                    self.ev("", Ev::StartMap)?;
                }
                FieldOp::Close => self.ev("", Ev::EndMap)?,
            }
        }
        self.ev("", Ev::EndMap)
    }

    /// The triples of one row object at `at`, outside the value being
    /// written (the path may lead into it).
    fn row_object(
        &mut self,
        at: &str,
        fields: &[FieldOp],
        cells: &Cells<'_>,
    ) -> Result<(), JsonError> {
        let mut next = cells.iter();
        let mut open: Vec<String> = Vec::new();
        self.ev(at, Ev::StartMap)?;
        open.push(at.to_owned());
        for op in fields {
            match op {
                FieldOp::Leaf(name) | FieldOp::Open(name) => {
                    let p = open.last().map(String::as_str).unwrap_or("");
                    let vp = format!("{p}.{name}");
                    let p = p.to_owned();
                    self.ev(&p, Ev::Key(name))?;
                    if matches!(op, FieldOp::Leaf(_)) {
                        // (a short row of a non-strict table: its missing cells are null)
                        let v = next.next().unwrap_or(Scalar::Null);
                        self.ev(&vp, Ev::Value(v))?;
                    } else {
                        self.ev(&vp, Ev::StartMap)?;
                        open.push(vp);
                    }
                }
                FieldOp::Close => {
                    if open.len() > 1 {
                        let p = open.pop().unwrap_or_default();
                        self.ev(&p, Ev::EndMap)?;
                    }
                }
            }
        }
        while let Some(p) = open.pop() {
            self.ev(&p, Ev::EndMap)?;
        }
        Ok(())
    }

    /// Whether values at `at` (rows) can hold the path.
    fn reaches(&self, at: &str) -> bool {
        let t = &self.target;
        t == at || (t.len() > at.len() && t.starts_with(at) && t.as_bytes()[at.len()] == b'.')
    }
}

impl Sink for JsonWriter {
    type Error = JsonError;

    fn start_object(&mut self) -> Result<(), JsonError> {
        self.open(Kind::Map, Ev::StartMap, None)
    }

    fn end_object(&mut self) -> Result<(), JsonError> {
        self.close(Ev::EndMap)
    }

    fn key(&mut self, key: &str) -> Result<(), JsonError> {
        let Some(top) = self.frames.last_mut() else {
            return Ok(());
        };
        if top.mark.inside {
            return self.ev("", Ev::Key(key));
        }
        top.set_key(key);
        let prefix = top.prefix.clone();
        self.ev(&prefix, Ev::Key(key))
    }

    fn scalar(&mut self, value: Scalar<'_>) -> Result<(), JsonError> {
        if self.inside() {
            return self.ev("", Ev::Value(value));
        }
        let p = self.value_prefix().to_owned();
        self.ev(&p, Ev::Value(value))
    }

    fn start_array(&mut self, _declared: u64) -> Result<(), JsonError> {
        self.open(Kind::Array, Ev::StartArray, None)
    }

    fn values(&mut self, values: &Cells<'_>) -> Result<(), JsonError> {
        let p = if self.inside() {
            String::new()
        } else {
            self.value_prefix().to_owned()
        };
        for v in values.iter() {
            self.ev(&p, Ev::Value(v))?;
        }
        Ok(())
    }

    fn end_array(&mut self) -> Result<(), JsonError> {
        self.close(Ev::EndArray)
    }

    fn start_table(&mut self, table: &Table<'_>) -> Result<(), JsonError> {
        let fields = self.fields(table.fields);
        if table.keyed {
            self.open(Kind::Keyed, Ev::StartMap, Some(fields))
        } else {
            self.open(Kind::Table, Ev::StartArray, Some(fields))
        }
    }

    fn row(&mut self, cells: &Cells<'_>) -> Result<(), JsonError> {
        let Some(top) = self.frames.last() else {
            return Ok(());
        };
        let Some(fields) = top.mark.fields.clone() else {
            return Ok(());
        };
        if self.inside() {
            return self.row_inside(&fields, cells);
        }
        if top.kind == Kind::Table && self.reaches(&top.child) {
            let at = top.child.clone();
            return self.row_object(&at, &fields.ops, cells);
        }
        Ok(()) // (rows outside the path: nothing of them is written)
    }

    fn entry(&mut self, key: &str, cells: &Cells<'_>) -> Result<(), JsonError> {
        let Some(top) = self.frames.last() else {
            return Ok(());
        };
        let Some(fields) = top.mark.fields.clone() else {
            return Ok(());
        };
        if self.inside() {
            self.ev("", Ev::Key(key))?;
            return self.row_inside(&fields, cells);
        }
        let at = top.key(key);
        if self.reaches(&at) {
            return self.row_object(&at, &fields.ops, cells);
        }
        Ok(())
    }

    fn end_table(&mut self, keyed: bool) -> Result<(), JsonError> {
        self.close(if keyed { Ev::EndMap } else { Ev::EndArray })
    }

    fn start_line(&mut self, number: u64) -> Result<(), JsonError> {
        self.check()?;
        self.line = number;
        Ok(())
    }
}

/// The rows of a table inside the value being written (JSON Lines records,
/// or rows of an array in it), on a second thread: the fork writes them as
/// [`JsonWriter::row_inside`] does here, after a row.
impl ForkRows for JsonWriter {
    fn can_fork_rows(&self) -> bool {
        self.frames.last().is_some_and(|top| {
            top.kind == Kind::Table && top.mark.inside && top.mark.fields.is_some()
        }) && self.inside()
            && !self.after_key
            && self.refused.is_none()
    }

    fn fork_rows(&mut self) -> Option<Self> {
        if !self.can_fork_rows() {
            return None;
        }
        let fields = self.frames.last()?.mark.fields.clone();
        // (the table's rows so far: at least one, as the join checks)
        let mut counts = vec![0; self.counts.len()];
        if let Some(c) = counts.last_mut() {
            *c = 1;
        }
        Some(JsonWriter {
            out: std::mem::take(&mut self.spare),
            jsonl: self.jsonl,
            unit: self.unit,
            path: self.path.clone(),
            target: self.target.clone(),
            frames: vec![Scope {
                kind: Kind::Table,
                prefix: String::new(),
                root: false,
                child: String::new(),
                mark: Frame {
                    inside: true,
                    fields,
                },
            }],
            counts,
            after_key: false,
            matches: self.matches,
            line: 0,
            last_fields: None,
            spare: Vec::new(),
            refused: None,
        })
    }

    fn rows_mark(&self) -> Option<usize> {
        self.refused.is_none().then_some(self.out.len())
    }

    fn joins_rows(&self) -> bool {
        self.refused.is_none() && !self.after_key && self.counts.last().is_some_and(|&n| n > 0)
    }

    fn join_rows(&mut self, fork: Self, mark: usize, rows: u64, line: u64) {
        self.out
            .extend_from_slice(fork.out.get(..mark).unwrap_or(&[]));
        if let Some(c) = self.counts.last_mut() {
            *c += rows;
        }
        self.line = line;
    }
}

// ------------------------------------------------------------------ scalars

/// `json.encoder.encode_basestring` (ensure_ascii=False): `"`, `\` and the
/// control characters below U+0020 are escaped, everything else is literal.
fn write_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        } else {
            out.extend_from_slice(esc);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

fn write_scalar(out: &mut Vec<u8>, v: Scalar<'_>) -> Result<(), JsonError> {
    match v {
        Scalar::Null => out.extend_from_slice(b"null"),
        Scalar::Bool(true) => out.extend_from_slice(b"true"),
        Scalar::Bool(false) => out.extend_from_slice(b"false"),
        Scalar::Int(i) => out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes()),
        Scalar::NegZero => out.push(b'0'),
        // (its digits at any length: the encoders' limit is TOON's decoders', not JSON's)
        Scalar::BigInt(t) => out.extend_from_slice(t.as_bytes()),
        Scalar::Float(t) => {
            if !write_plain_decimal(out, t) {
                out.extend_from_slice(decimal_value_text(t).as_bytes());
            }
        }
        Scalar::Str(s) => write_str(out, s),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{check_int_length, decimal_text, two_to_33220};
    use crate::{Decoder, Options};

    #[test]
    fn numbers_beyond_toon_limits_are_written_as_they_are() {
        // (valid TOON whose canonical form the encoder's limits refuse: JSON has none)
        let ok = |doc: &str| run(doc, JsonOptions::default()).unwrap();
        assert_eq!(
            ok("a: 10e99999999999999999"),
            r#"{"a":1e+100000000000000000}"#
        );
        assert_eq!(
            ok("a: -15.0e99999999999999999"),
            r#"{"a":-1.5e+100000000000000000}"#
        );
        assert_eq!(
            ok("a: 0.1e-99999999999999999"),
            r#"{"a":1e-100000000000000000}"#
        );
        let long = format!("a: {}e1", "1".repeat(9997));
        let want = format!(r#"{{"a":1.{}e+9997}}"#, "1".repeat(9996));
        assert_eq!(ok(&long), want);
        // (trailing zeros are not written, so do not count)
        assert_eq!(
            decimal_text(&format!("1.{}", "0".repeat(10_000))).unwrap(),
            "1"
        );
    }

    fn run(doc: &str, options: JsonOptions) -> Result<String, JsonError> {
        let mut d = Decoder::new(Options::default()).unwrap();
        let mut w = JsonWriter::new(options);
        d.feed(doc.as_bytes(), &mut w)?;
        w.check()?;
        d.close(&mut w)?;
        w.finish()?;
        Ok(String::from_utf8(w.take_output()).unwrap())
    }

    #[test]
    fn the_plain_fast_path_agrees() {
        for t in [
            "0.10",
            "1.5",
            "-0.0",
            "0.0",
            "0.000001",
            "0.0000001",
            "-12.500",
            "123456789012345678901.5",
            "1234567890123456789012.5",
            "0.00001230",
            "7.0",
            "-0.5",
        ] {
            let mut out = Vec::new();
            if write_plain_decimal(&mut out, t) {
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    decimal_text(t).unwrap(),
                    "{t}"
                );
            }
        }
    }

    #[test]
    fn decimal_texts_match_encode_decimal() {
        for (t, want) in [
            ("0.10", "0.1"),
            ("1.5", "1.5"),
            ("-0.0", "0"),
            ("1e5", "100000"),
            ("1E-7", "1e-7"),
            ("123.456e3", "123456"),
            ("1e21", "1e+21"),
            ("12.5e20", "1.25e+21"),
            ("0.000001", "0.000001"),
            ("0.0000001", "1e-7"),
            ("-1.2300e-8", "-1.23e-8"),
            ("99999999999999999999.5", "99999999999999999999.5"),
            ("1e999", "1e+999"),
        ] {
            assert_eq!(decimal_text(t).unwrap(), want, "{t}");
        }
    }

    #[test]
    fn documents() {
        let doc = "a[2]: 1,x\nb:\n  c: 0.10\n  \"q\\\"\": \"\\t\"\n";
        assert_eq!(
            run(doc, JsonOptions::default()).unwrap(),
            r#"{"a":[1,"x"],"b":{"c":0.1,"q\"":"\t"}}"#
        );
        assert_eq!(
            run(
                doc,
                JsonOptions {
                    path: Some("b".into()),
                    ..Default::default()
                }
            )
            .unwrap(),
            r#"{"c":0.1,"q\"":"\t"}"#
        );
        assert_eq!(
            run(
                "a[2]{x}:\n  1\n  2\n",
                JsonOptions {
                    indent: Some(2),
                    ..Default::default()
                }
            )
            .unwrap(),
            "{\n  \"a\": [\n    {\n      \"x\": 1\n    },\n    {\n      \"x\": 2\n    }\n  ]\n}"
        );
        let e = run(
            doc,
            JsonOptions {
                jsonl: true,
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(matches!(
            e,
            JsonError::Path {
                code: "not_array",
                what: "an object",
                ..
            }
        ));
        let e = run(
            doc,
            JsonOptions {
                path: Some("zz".into()),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(matches!(
            e,
            JsonError::Path {
                code: "not_found",
                ..
            }
        ));
    }

    #[test]
    fn control_characters_are_escaped() {
        let mut out = Vec::new();
        write_str(&mut out, "a\u{1}\u{1f}\u{7f}é\"\\");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"a\\u0001\\u001f\u{7f}é\\\"\\\\\""
        );
    }

    #[test]
    fn big_int_limits() {
        assert!(check_int_length(&"9".repeat(10_000)).is_ok());
        let e = check_int_length(&format!("-{}", "9".repeat(10_000))).unwrap_err();
        assert!(matches!(e, NumberError(m) if m.contains("have 10001 characters")));
        let big = two_to_33220();
        assert_eq!(big.len(), 10_001);
        let e = check_int_length(&big).unwrap_err();
        assert!(matches!(e, NumberError(m) if m.contains("more than 10000 characters")));
        let e = check_int_length(&format!("1{}", "0".repeat(10_000))).unwrap_err();
        assert!(matches!(e, NumberError(m) if m.contains("have 10001 characters")));
    }
}
