//! The value builder: a [`Sink`] that makes Python objects as the core
//! recognises them (no intermediate tree), with the Python engine's
//! `ValueBuilder` semantics (`toonstream/_reference/build.py`, mirrored by the core's
//! `value::ValueBuilder`):
//!
//! - objects are dicts in key order; a duplicate key (non-strict) is dict
//!   assignment: the last value wins at the first key's position;
//! - a table row is a dict made by walking the header's field ops; a missing
//!   cell (non-strict short row) is `None`, extra cells are ignored;
//! - numbers: `Int` is a Python int, `BigInt` exact at any size, floats by
//!   the README's policy ([`float_value`]: `float()`, `-0.0 -> 0.0`, overflow
//!   kept exact as `Decimal(text)`), or `parse_float(text)` when given.
//!
//! Open containers live on an explicit stack (no recursion at any depth);
//! each is attached to its parent when it ends, as the core's builder does.
//! Key strings come from a small cache, and each table header's field names
//! are made once and reused for every row (pydantic/jiter's approach).

use std::sync::Arc;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};
use pyo3::{PyTraverseError, PyVisit};
use toonstream_native::{
    float_value, Cells, DecodeError, FieldOp, FloatValue, Scalar, Sink, Table,
};

use crate::pystr::new_str;

/// Why the builder stopped: a Python error (from `parse_float`, a signal
/// handler, memory) or a decode error of the core.  (The orphan rule forbids
/// `From<DecodeError> for PyErr`, which the `Sink` trait needs.)
pub enum BindError {
    Py(PyErr),
    Decode(DecodeError),
}

impl From<DecodeError> for BindError {
    fn from(e: DecodeError) -> Self {
        BindError::Decode(e)
    }
}

impl From<PyErr> for BindError {
    fn from(e: PyErr) -> Self {
        BindError::Py(e)
    }
}

static DECODE_ERROR: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();
static DECIMAL: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();

/// The `toonstream.ToonDecodeError` for a core error: the same class, code,
/// message, line, column and line text the Python engine raises.
pub fn decode_error(py: Python<'_>, e: &DecodeError) -> PyErr {
    let made = (|| -> PyResult<PyErr> {
        let cls = DECODE_ERROR.import(py, "toonstream._errors", "ToonDecodeError")?;
        let kwargs = PyDict::new(py);
        let message = python_message(py, e)?;
        kwargs.set_item("code", e.code)?;
        kwargs.set_item("line", e.line)?;
        kwargs.set_item("column", e.column)?;
        kwargs.set_item("line_text", e.line_text.as_str())?;
        let exc = cls.call((message,), Some(&kwargs))?;
        Ok(PyErr::from_value(exc))
    })();
    made.unwrap_or_else(|err| err)
}

/// The Python engine's message for `e`.  A duplicate key is quoted with
/// Python's `repr()` there (`duplicate key 'a'`); the core, which has no
/// Unicode tables for `repr`'s printable test, quotes it with Rust's
/// `{:?}` (reversible), so the key is recovered and quoted again here.
fn python_message<'py>(py: Python<'py>, e: &DecodeError) -> PyResult<Bound<'py, PyString>> {
    if e.code == toonstream_native::codes::DUPLICATE_KEY {
        for prefix in ["duplicate key ", "duplicate field name "] {
            if let Some(key) = e.message.strip_prefix(prefix).and_then(unescape_debug) {
                let repr = PyString::new(py, &key).repr()?;
                return Ok(PyString::new(py, &format!("{prefix}{}", repr.to_str()?)));
            }
        }
    }
    Ok(PyString::new(py, &e.message))
}

/// The string that Rust's `{:?}` of a `str` printed (`"a\tb"` -> `a<TAB>b`);
/// None if `text` is not such a literal.
fn unescape_debug(text: &str) -> Option<String> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next()? {
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            '0' => '\0',
            '\\' => '\\',
            '"' => '"',
            '\'' => '\'',
            'u' => {
                if chars.next()? != '{' {
                    return None;
                }
                let mut code = 0u32;
                loop {
                    let d = chars.next()?;
                    if d == '}' {
                        break;
                    }
                    code = code.checked_mul(16)?.checked_add(d.to_digit(16)?)?;
                }
                char::from_u32(code)?
            }
            _ => return None,
        });
    }
    Some(out)
}

impl BindError {
    pub fn into_py(self, py: Python<'_>) -> PyErr {
        match self {
            BindError::Py(e) => e,
            BindError::Decode(e) => decode_error(py, &e),
        }
    }
}

/// CPython refuses `int(text)` past `sys.get_int_max_str_digits()` (4300 by
/// default); the Python engine goes through `Decimal` past this many digits
/// (`_numbers._INT_STR_SAFE_DIGITS`), and so does this builder.
const INT_STR_SAFE_DIGITS: usize = 4000;

/// How often (in sink calls: rows, keys, scalars, inline arrays) a long
/// build lets Python run its signal handlers, so Ctrl-C interrupts it.
const SIGNAL_EVERY: u32 = 1024;

/// Lets Python run its signal handlers every [`SIGNAL_EVERY`] sink calls,
/// so that Ctrl-C interrupts a long decode (every sink of the binding has one).
#[derive(Default)]
pub(crate) struct Ticker(u32);

impl Ticker {
    #[inline]
    pub(crate) fn tick(&mut self, py: Python<'_>) -> PyResult<()> {
        self.0 += 1;
        if self.0 >= SIGNAL_EVERY {
            self.0 = 0;
            py.check_signals()?;
        }
        Ok(())
    }
}

/// A direct-mapped cache of key strings: the same key in many objects (a
/// list of objects, repeated nested objects) is one `str`, made once, whose
/// hash Python then also computes once.
pub(crate) struct KeyCache {
    slots: Vec<Option<(Box<str>, Py<PyString>)>>,
    /// longer strings are made each time (rarely repeated, costly to compare)
    max_len: usize,
}

const KEY_CACHE_SLOTS: usize = 4096; // a power of two
const KEY_CACHE_MAX_LEN: usize = 64;

impl KeyCache {
    pub(crate) fn new() -> Self {
        Self::with_max_len(KEY_CACHE_MAX_LEN)
    }

    /// A cache of strings up to `max_len` bytes (ijson prefixes are longer than keys).
    pub(crate) fn with_max_len(max_len: usize) -> Self {
        KeyCache {
            slots: Vec::new(),
            max_len,
        }
    }

    pub(crate) fn get<'py>(&mut self, py: Python<'py>, key: &str) -> Bound<'py, PyString> {
        if key.len() > self.max_len {
            return new_str(py, key);
        }
        if self.slots.is_empty() {
            self.slots.resize_with(KEY_CACHE_SLOTS, || None);
        }
        let i = (hash(key.as_bytes()) as usize) & (KEY_CACHE_SLOTS - 1);
        if let Some(Some((k, s))) = self.slots.get(i) {
            if **k == *key {
                return s.bind(py).clone();
            }
        }
        let s = new_str(py, key);
        if let Some(slot) = self.slots.get_mut(i) {
            *slot = Some((key.into(), s.clone().unbind()));
        }
        s
    }
}

/// The keys of the last object at each stack position, in order: records
/// repeat their keys, so the `n`-th key of an object is most often the
/// `n`-th of the one before at its place, found with one comparison (no
/// hash, no cache probe).
#[derive(Default)]
struct KeyMemo {
    levels: Vec<Vec<(Box<str>, Py<PyString>)>>,
}

/// Stack positions and keys per object the memo covers (a bound on its
/// size; deeper or wider keys go to the cache alone).
const MEMO_LEVELS: usize = 64;
const MEMO_KEYS: usize = 64;

impl KeyMemo {
    /// Key `key`, the `n`-th of the object at stack position `at`.
    #[inline]
    fn get<'py>(
        &mut self,
        py: Python<'py>,
        cache: &mut KeyCache,
        at: usize,
        n: usize,
        key: &str,
    ) -> Bound<'py, PyString> {
        if at >= MEMO_LEVELS || n >= MEMO_KEYS || key.len() > KEY_CACHE_MAX_LEN {
            return cache.get(py, key);
        }
        if self.levels.len() <= at {
            self.levels.resize_with(at + 1, Vec::new);
        }
        let level = &mut self.levels[at];
        if let Some((text, s)) = level.get(n) {
            if **text == *key {
                return s.bind(py).clone();
            }
        }
        let s = cache.get(py, key);
        let entry = (Box::from(key), s.clone().unbind());
        match level.get_mut(n) {
            Some(slot) => *slot = entry,
            // (keys come in order: this is the next one)
            None => level.push(entry),
        }
        s
    }
}

/// FxHash-style: a multiply-rotate over 8-byte words (keys are short).
fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h: u64 = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    let mut w = [0u8; 8];
    let rest = chunks.remainder();
    w[..rest.len()].copy_from_slice(rest);
    h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    h ^ (h >> 29)
}

/// One step of a header's field list, with its name as a Python `str`.
pub(crate) enum Op {
    Leaf(Py<PyString>),
    Open(Py<PyString>),
    Close,
}

/// Keys a new dict takes without resizing (CPython's `PyDict_MINSIZE` 8,
/// two thirds usable).
const SMALL_DICT: usize = 5;

/// A table header's row shape: its field names made once, reused per row.
pub(crate) struct Shape {
    pub(crate) ops: Vec<Op>,
    /// No field groups: a row is `dict(zip(names, cells))`.
    flat: Vec<Py<PyString>>,
    grouped: bool,
    /// For a header without groups: `dict.fromkeys(names)`.  A row is a copy
    /// of it with the values set: the copy clones the hash table in one go
    /// (CPython's fast path for a compact dict) where inserting key by key
    /// would grow and rehash it twice for 8 fields; setting an existing key
    /// keeps its position, so order and last-write-wins are unchanged.
    template: Option<Py<PyDict>>,
}

enum Frame {
    Array(Py<PyList>),
    /// An object, the key its next value goes to and how many keys it had.
    Object(Py<PyDict>, Option<Py<PyString>>, usize),
    Table(Py<PyList>, Arc<Shape>),
    Keyed(Py<PyDict>, Arc<Shape>),
}

/// The builder's state between calls (kept by a `ValueDecoder` across feeds).
pub struct Builder {
    stack: Vec<Frame>,
    root: Option<Py<PyAny>>,
    keys: KeyCache,
    memo: KeyMemo,
    parse_float: Option<Py<PyAny>>,
    /// Called with the text of every integer token (`loads(parse_int=...)`).
    parse_int: Option<Py<PyAny>>,
    ticker: Ticker,
    /// The last header's shape: a header repeated in every list item (the
    /// core shares its field list) gets its names made once.
    last_shape: Option<(Vec<FieldOp>, Arc<Shape>)>,
}

impl Builder {
    pub fn new(parse_float: Option<Py<PyAny>>) -> Self {
        Builder {
            stack: Vec::new(),
            root: None,
            keys: KeyCache::new(),
            memo: KeyMemo::default(),
            parse_float,
            parse_int: None,
            ticker: Ticker::default(),
            last_shape: None,
        }
    }

    /// The builder with a `parse_int` hook (None: Python ints).
    pub fn with_parse_int(mut self, parse_int: Option<Py<PyAny>>) -> Self {
        self.parse_int = parse_int;
        self
    }

    /// The finished value (None if the core never completed one).  The
    /// builder can then build the next value (items at a prefix reuse one).
    pub fn take_value(&mut self) -> Option<Py<PyAny>> {
        self.root.take()
    }

    pub(crate) fn parse_float(&self) -> Option<&Py<PyAny>> {
        self.parse_float.as_ref()
    }

    /// For the owning class's `__traverse__`: the Python objects the builder
    /// holds that could lead back to it (`parse_float`, and the value being
    /// built, which holds its results).
    pub(crate) fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.parse_float)?;
        visit.call(&self.parse_int)?;
        visit.call(&self.root)?;
        for frame in &self.stack {
            match frame {
                Frame::Array(l) | Frame::Table(l, _) => visit.call(l)?,
                Frame::Object(d, ..) | Frame::Keyed(d, _) => visit.call(d)?,
            }
        }
        Ok(())
    }

    /// For the owning class's `__clear__`: drop them (the builder is unusable afterwards, as its
    /// owner is: the garbage collector clears only what is unreachable).
    pub(crate) fn clear(&mut self) {
        self.parse_float = None;
        self.parse_int = None;
        self.root = None;
        self.stack.clear();
    }

    /// The shape of a header's rows (names made once), for other sinks' rows.
    pub(crate) fn shape(&mut self, py: Python<'_>, fields: &[FieldOp]) -> Arc<Shape> {
        self.sink(py).shape(fields)
    }

    /// A row's dict by `shape` (as the built value has it).
    pub(crate) fn row<'py>(
        &mut self,
        py: Python<'py>,
        shape: &Shape,
        cells: &Cells<'_>,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.sink(py).row_object(shape, cells)
    }

    /// Bind to the interpreter for a feed or close.
    pub fn sink<'a, 'py>(&'a mut self, py: Python<'py>) -> PySink<'a, 'py> {
        PySink { py, b: self }
    }
}

/// The [`Sink`] the core drives: the builder plus the interpreter token.
pub struct PySink<'a, 'py> {
    py: Python<'py>,
    b: &'a mut Builder,
}

impl<'py> PySink<'_, 'py> {
    #[inline]
    fn tick(&mut self) -> Result<(), BindError> {
        Ok(self.b.ticker.tick(self.py)?)
    }

    #[inline]
    fn scalar_obj(&self, s: Scalar<'_>) -> PyResult<Bound<'py, PyAny>> {
        match (&self.b.parse_int, s) {
            (Some(f), Scalar::Int(_) | Scalar::NegZero | Scalar::BigInt(_)) => {
                call_parse_int(self.py, f, s)
            }
            _ => scalar_object(self.py, self.b.parse_float.as_ref(), s),
        }
    }

    /// Attach a finished value to the innermost open container (or make it
    /// the root).
    fn add(&mut self, v: Bound<'py, PyAny>) -> PyResult<()> {
        let py = self.py;
        match self.b.stack.last_mut() {
            None => {
                self.b.root = Some(v.unbind());
                Ok(())
            }
            Some(Frame::Array(items)) => items.bind(py).append(v),
            Some(Frame::Object(obj, key, _)) => match key.take() {
                Some(k) => obj.bind(py).set_item(k, v),
                // (the core sends a key before every member)
                None => Err(internal("a member without a key")),
            },
            // (the core sends only rows and entries inside tables)
            Some(Frame::Table(..)) | Some(Frame::Keyed(..)) => {
                Err(internal("a value inside a table"))
            }
        }
    }

    fn close(&mut self) -> PyResult<()> {
        let py = self.py;
        let v = match self.b.stack.pop() {
            Some(Frame::Array(l)) | Some(Frame::Table(l, _)) => l.into_bound(py).into_any(),
            Some(Frame::Object(d, ..)) | Some(Frame::Keyed(d, _)) => d.into_bound(py).into_any(),
            None => return Err(internal("a close without an open container")),
        };
        self.add(v)
    }

    fn shape(&mut self, fields: &[FieldOp]) -> Arc<Shape> {
        if let Some((f, s)) = &self.b.last_shape {
            if f.as_slice() == fields {
                return s.clone();
            }
        }
        let py = self.py;
        let mut ops = Vec::with_capacity(fields.len());
        let mut flat = Vec::new();
        let mut grouped = false;
        for op in fields {
            ops.push(match op {
                FieldOp::Leaf(name) => {
                    let k = self.b.keys.get(py, name).unbind();
                    flat.push(k.clone_ref(py));
                    Op::Leaf(k)
                }
                FieldOp::Open(name) => {
                    grouped = true;
                    Op::Open(self.b.keys.get(py, name).unbind())
                }
                FieldOp::Close => Op::Close,
            });
        }
        // (a dict of at most 5 keys is filled without growing: a new one is
        // cheaper than a copy; see `Shape::template`)
        let template = if grouped || flat.len() <= SMALL_DICT {
            None
        } else {
            let d = PyDict::new(py);
            for k in &flat {
                // (a failure here only loses the shortcut)
                if d.set_item(k.bind(py), py.None()).is_err() {
                    break;
                }
            }
            (d.len() > 0).then(|| d.unbind())
        };
        let s = Arc::new(Shape {
            ops,
            flat,
            grouped,
            template,
        });
        self.b.last_shape = Some((fields.to_vec(), s.clone()));
        s
    }

    /// A row's object: a leaf takes the next cell (`None` past the row's
    /// end), a group opens a nested dict.  Iterative.
    fn row_object(&self, shape: &Shape, cells: &Cells<'_>) -> PyResult<Bound<'py, PyDict>> {
        let py = self.py;
        let top = match &shape.template {
            Some(t) => t.bind(py).copy()?,
            None => PyDict::new(py),
        };
        let mut next = cells.iter();
        if !shape.grouped {
            for k in &shape.flat {
                let v = match next.next() {
                    Some(s) => self.scalar_obj(s)?,
                    None => py.None().into_bound(py),
                };
                top.set_item(k.bind(py), v)?;
            }
            return Ok(top);
        }
        let mut stack: Vec<(Bound<'py, PyDict>, Option<&Py<PyString>>)> = vec![(top, None)];
        for op in &shape.ops {
            match op {
                Op::Leaf(k) => {
                    let v = match next.next() {
                        Some(s) => self.scalar_obj(s)?,
                        None => py.None().into_bound(py),
                    };
                    if let Some((d, _)) = stack.last() {
                        d.set_item(k.bind(py), v)?;
                    }
                }
                Op::Open(k) => stack.push((PyDict::new(py), Some(k))),
                Op::Close => pop_group(py, &mut stack)?,
            }
        }
        // (a well-formed op list closes every group it opens)
        while stack.len() > 1 {
            pop_group(py, &mut stack)?;
        }
        match stack.pop() {
            Some((d, _)) => Ok(d),
            None => Ok(PyDict::new(py)),
        }
    }
}

fn pop_group<'py>(
    py: Python<'py>,
    stack: &mut Vec<(Bound<'py, PyDict>, Option<&Py<PyString>>)>,
) -> PyResult<()> {
    if stack.len() > 1 {
        if let Some((done, Some(name))) = stack.pop() {
            if let Some((d, _)) = stack.last() {
                d.set_item(name.bind(py), done)?;
            }
        }
    }
    Ok(())
}

/// A cell or primitive as a Python object, by the README's number policy
/// (the rows reader converts its cells with this too).
#[inline]
pub fn scalar_object<'py>(
    py: Python<'py>,
    parse_float: Option<&Py<PyAny>>,
    s: Scalar<'_>,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match s {
        Scalar::Null => py.None().into_bound(py),
        Scalar::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
        Scalar::Int(i) => i.into_pyobject(py)?.into_any(),
        Scalar::NegZero => 0_i64.into_pyobject(py)?.into_any(),
        Scalar::Str(t) => new_str(py, t).into_any(),
        Scalar::Float(t) => match parse_float {
            Some(f) => call_parse_float(py, f, t)?,
            None => match float_value(t) {
                FloatValue::Finite(f) => PyFloat::new(py, f).into_any(),
                FloatValue::Overflow => decimal(py, t)?,
            },
        },
        Scalar::BigInt(t) => big_int(py, t)?,
    })
}

static DECIMAL_FLOAT: PyOnceLock<Option<Py<PyAny>>> = PyOnceLock::new();

/// The Python engine's exact `parse_float` (`toonstream._reference.numbers.decimal_float`, what
/// `parse`/`items` pass unless `use_float`), if it can be imported.
fn decimal_float(py: Python<'_>) -> Option<&Py<PyAny>> {
    DECIMAL_FLOAT
        .get_or_init(py, || {
            // (tests/test_layout.py checks that this path names the function)
            let m = py.import("toonstream._reference.numbers").ok()?;
            Some(m.getattr("decimal_float").ok()?.unbind())
        })
        .as_ref()
}

/// `parse_float(text)`.  The Python engine's `decimal_float` is done here
/// without its Python frame: `Decimal(text)`, a negative zero without its
/// sign (what `copy_abs()` gives it: same digits, same exponent).
fn call_parse_float<'py>(
    py: Python<'py>,
    f: &Py<PyAny>,
    text: &str,
) -> PyResult<Bound<'py, PyAny>> {
    if decimal_float(py).is_some_and(|d| d.is(f)) {
        let unsigned = text.strip_prefix('-').filter(|t| {
            // (a float token: its mantissa's digits decide whether it is zero)
            let mantissa = t.split(['e', 'E']).next().unwrap_or(t);
            mantissa.bytes().all(|b| b == b'0' || b == b'.')
        });
        return decimal(py, unsigned.unwrap_or(text));
    }
    f.bind(py).call1((text,))
}

/// `parse_int(text)` for an integer token: its text as written (the core
/// keeps `-0` apart; any other i64 token's text is its decimal form).
#[inline(never)]
fn call_parse_int<'py>(
    py: Python<'py>,
    f: &Py<PyAny>,
    s: Scalar<'_>,
) -> PyResult<Bound<'py, PyAny>> {
    let mut digits = itoa::Buffer::new();
    let text = match s {
        Scalar::Int(i) => digits.format(i),
        Scalar::NegZero => "-0",
        Scalar::BigInt(t) => t,
        _ => return Err(internal("parse_int of a token that is no integer")),
    };
    f.bind(py).call1((text,))
}

fn internal(what: &str) -> PyErr {
    PyRuntimeError::new_err(format!("toonstream._native: internal error: {what}"))
}

fn decimal<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    DECIMAL.import(py, "decimal", "Decimal")?.call1((text,))
}

/// An integer beyond i64, exact: `int(text)`, or `int(Decimal(text))` past
/// CPython's int-from-string digit limit (as the Python engine does).
fn big_int<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let int = py.get_type::<pyo3::types::PyInt>();
    if text.len() > INT_STR_SAFE_DIGITS {
        int.call1((decimal(py, text)?,))
    } else {
        int.call1((text,))
    }
}

impl Sink for PySink<'_, '_> {
    type Error = BindError;

    fn start_object(&mut self) -> Result<(), BindError> {
        let d = PyDict::new(self.py).unbind();
        self.b.stack.push(Frame::Object(d, None, 0));
        Ok(())
    }

    fn end_object(&mut self) -> Result<(), BindError> {
        Ok(self.close()?)
    }

    fn key(&mut self, key: &str) -> Result<(), BindError> {
        self.tick()?;
        let at = self.b.stack.len().wrapping_sub(1);
        match self.b.stack.last_mut() {
            Some(Frame::Object(_, slot, n)) => {
                let k = self.b.memo.get(self.py, &mut self.b.keys, at, *n, key);
                *n += 1;
                *slot = Some(k.unbind());
                Ok(())
            }
            _ => Err(internal("a key outside an object").into()),
        }
    }

    fn scalar(&mut self, value: Scalar<'_>) -> Result<(), BindError> {
        self.tick()?;
        let v = self.scalar_obj(value)?;
        Ok(self.add(v)?)
    }

    fn start_array(&mut self, _declared: u64) -> Result<(), BindError> {
        // (never sized from the declared length: it is only a claim of the input)
        let l = PyList::empty(self.py).unbind();
        self.b.stack.push(Frame::Array(l));
        Ok(())
    }

    fn values(&mut self, values: &Cells<'_>) -> Result<(), BindError> {
        let py = self.py;
        let items = match self.b.stack.last() {
            Some(Frame::Array(items)) => items.bind(py).clone(),
            _ => return Err(internal("inline values outside an array").into()),
        };
        // (a tick a value: one inline array can hold millions, and Ctrl-C must not wait for them)
        for s in values.iter() {
            self.tick()?;
            items.append(self.scalar_obj(s)?)?;
        }
        Ok(())
    }

    fn end_array(&mut self) -> Result<(), BindError> {
        Ok(self.close()?)
    }

    fn start_table(&mut self, table: &Table<'_>) -> Result<(), BindError> {
        let shape = self.shape(table.fields);
        let frame = if table.keyed {
            Frame::Keyed(PyDict::new(self.py).unbind(), shape)
        } else {
            Frame::Table(PyList::empty(self.py).unbind(), shape)
        };
        self.b.stack.push(frame);
        Ok(())
    }

    fn row(&mut self, cells: &Cells<'_>) -> Result<(), BindError> {
        self.tick()?;
        match self.b.stack.last() {
            Some(Frame::Table(rows, shape)) => {
                let row = self.row_object(shape, cells)?;
                rows.bind(self.py).append(row)?;
                Ok(())
            }
            _ => Err(internal("a row outside a table").into()),
        }
    }

    fn entry(&mut self, key: &str, cells: &Cells<'_>) -> Result<(), BindError> {
        self.tick()?;
        let k = self.b.keys.get(self.py, key);
        match self.b.stack.last() {
            Some(Frame::Keyed(obj, shape)) => {
                let row = self.row_object(shape, cells)?;
                obj.bind(self.py).set_item(k, row)?;
                Ok(())
            }
            _ => Err(internal("an entry outside a keyed table").into()),
        }
    }

    fn end_table(&mut self, _keyed: bool) -> Result<(), BindError> {
        Ok(self.close()?)
    }
}
