//! `toonstream._native`: the native engine's Python binding.
//!
//! The decoder core (`toonstream-native`, no PyO3) drives a builder that
//! makes Python values directly ([`builder`]).  Called only through the
//! engine seam (`toonstream/_engine.py`), which checks [`API_VERSION`].
//!
//! ```python
//! from toonstream import _native
//! _native.loads(b"tags[2]: a,b")          # {'tags': ['a', 'b']}
//! d = _native.ValueDecoder()
//! d.feed(b"a: ");  d.feed("1\n");  d.close()   # {'a': 1}
//! ```
//!
//! Guarantees at this boundary: every decode failure is the Python engine's
//! `ToonDecodeError` (same code, message, line, column, line text); a Rust
//! panic (a bug) surfaces as a `RuntimeError`, never as an abort or a
//! `BaseException`; Ctrl-C interrupts a long call (signals are checked every
//! so many sink calls).  No `unsafe` but in [`arrow`]'s Arrow C data
//! interface (reading record batches, exporting the frame reader's columns), [`pystr`]'s ASCII strings and [`pyobj`]'s reads of
//! dicts, strs and ints for the encoder and its pause of the garbage
//! collector while a value is built (each use commented): PyO3's safe
//! API only.

#![deny(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod arrow;
mod builder;
mod encode;
mod events;
mod fill;
mod frames;
mod hooks;
mod json;
mod jsonl;
mod jsonmodel;
mod push;
mod pymodel;
mod pyobj;
mod pystr;
mod rows;

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{
    PyBaseException, PyOverflowError, PyRuntimeError, PyTypeError, PyUnicodeEncodeError,
    PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyString};
use pyo3::{PyTraverseError, PyVisit};
use toonstream_native::{
    Decoder, Options, DEFAULT_MAX_DEPTH, DEFAULT_MAX_FIELDS, DEFAULT_MAX_LINE_LENGTH,
    DEFAULT_MAX_NUMBER_LENGTH,
};

use builder::{BindError, Builder, Ticker};
use hooks::{finish_objects, Hook};
use pyobj::GcPause;

/// The version of the engine interface this module implements (the seam's
/// `toonstream._engine.API_VERSION` must match, or the build is stale).
const API_VERSION: u32 = 6;

/// The seam's `toonstream._engine.Unsupported`: an input the native engine
/// does not take at all (a str with lone surrogates, which is not UTF-8),
/// raised before any effect, so the driver runs the Python engine instead.
static UNSUPPORTED: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();

fn unsupported(py: Python<'_>, message: &str) -> PyErr {
    match UNSUPPORTED.import(py, "toonstream._engine", "Unsupported") {
        Ok(cls) => PyErr::from_value(match cls.call1((message,)) {
            Ok(e) => e,
            Err(e) => return e,
        }),
        Err(e) => e,
    }
}

/// The options of `loads` / `ValueDecoder`, checked as the Python
/// `Decoder` checks them.
pub(crate) struct Opts {
    pub(crate) options: Options,
    pub(crate) parse_float: Option<Py<PyAny>>,
    /// Taken by the value builders only (`loads`, `ValueDecoder`), as by
    /// the Python engine (`decoder.loads`); the others refuse it.
    pub(crate) parse_int: Option<Py<PyAny>>,
}

/// A limit option: an int >= 0.  Python's engine only compares limits, so
/// an int beyond the machine word means "no limit" (the same outcome, and a
/// message quoting it can never be raised).  A negative limit is refused:
/// the Python engine takes it (every line/number/nesting then breaks it),
/// which the core's unsigned limits cannot mirror.
fn limit(name: &str, v: Option<&Bound<'_, PyAny>>, default: usize) -> PyResult<usize> {
    let Some(v) = v else { return Ok(default) };
    match v.extract::<usize>() {
        Ok(n) => Ok(n),
        Err(e) if e.is_instance_of::<PyOverflowError>(v.py()) => {
            if v.lt(0)? {
                Err(PyValueError::new_err(format!("{name} must be >= 0")))
            } else {
                Ok(usize::MAX)
            }
        }
        Err(e) => Err(e),
    }
}

/// The decoder options, as keywords (a missing or `None` one: the default,
/// as for the Python `Decoder`'s keyword defaults).  One list for every
/// class and function of the module; an unknown keyword is a `TypeError`.
pub(crate) fn options(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Opts> {
    const NAMES: [&str; 9] = [
        "indent_size",
        "strict",
        "parse_float",
        "parse_int",
        "max_depth",
        "max_line_length",
        "max_number_length",
        "max_fields",
        "start_line",
    ];
    let mut got: [Option<Bound<'_, PyAny>>; 9] = Default::default();
    if let Some(kwargs) = kwargs {
        for (k, v) in kwargs.iter() {
            let name = k.cast::<PyString>()?.to_cow()?;
            let Some(i) = NAMES.iter().position(|n| *n == name) else {
                return Err(PyTypeError::new_err(format!(
                    "unexpected keyword argument '{name}'"
                )));
            };
            got[i] = (!v.is_none()).then_some(v);
        }
    }
    let [indent_size, strict, parse_float, parse_int, max_depth, max_line_length, max_number_length, max_fields, start_line] =
        got;
    let (indent_size, strict, parse_float) =
        (indent_size.as_ref(), strict.as_ref(), parse_float.as_ref());
    let (max_depth, max_line_length) = (max_depth.as_ref(), max_line_length.as_ref());
    let (max_number_length, max_fields, start_line) = (
        max_number_length.as_ref(),
        max_fields.as_ref(),
        start_line.as_ref(),
    );
    let indent_size: usize = match indent_size {
        None => 2,
        Some(v) => {
            // The Python engine's own check and message (`_machine.Machine`).
            if v.lt(1)? {
                return Err(PyValueError::new_err("indent_size must be >= 1"));
            }
            v.extract()?
        }
    };
    let start_line: u64 = match start_line {
        None => 1,
        Some(v) => match v.extract::<u64>() {
            Ok(n) if n >= 1 => n,
            _ => return Err(PyValueError::new_err("start_line must be an int >= 1")),
        },
    };
    // (not checked for being callable: the Python engine only calls it, at
    // the first float, and a document without floats never does)
    let parse_float = parse_float.map(|f| f.clone().unbind());
    let parse_int = parse_int.map(|f| f.unbind());
    Ok(Opts {
        options: Options {
            indent_size,
            strict: match strict {
                None => true,
                Some(v) => v.is_truthy()?,
            },
            max_depth: limit("max_depth", max_depth, DEFAULT_MAX_DEPTH)?,
            max_line_length: limit("max_line_length", max_line_length, DEFAULT_MAX_LINE_LENGTH)?,
            max_number_length: limit(
                "max_number_length",
                max_number_length,
                DEFAULT_MAX_NUMBER_LENGTH,
            )?,
            max_fields: limit("max_fields", max_fields, DEFAULT_MAX_FIELDS)?,
            start_line,
        },
        parse_float,
        parse_int,
    })
}

/// A core decoder for the decoder options given as keywords, and the
/// `parse_float` hook among them (the builders' business).
pub(crate) fn decoder(
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<(Decoder, Option<Py<PyAny>>)> {
    let o = options(kwargs)?;
    if o.parse_int.is_some() {
        return Err(PyTypeError::new_err(
            "unexpected keyword argument 'parse_int' (loads and ValueDecoder take it)",
        ));
    }
    decoder_of(o)
}

/// [`decoder`] for options already parsed.
fn decoder_of(o: Opts) -> PyResult<(Decoder, Option<Py<PyAny>>)> {
    let d = Decoder::new(o.options).map_err(|e| PyValueError::new_err(e.0.to_string()))?;
    Ok((d, o.parse_float))
}

/// Run `f`, turning a Rust panic (a bug) into a `RuntimeError`: PyO3 would
/// raise a `PanicException`, which derives from `BaseException` and so
/// escapes `except Exception`.
pub(crate) fn guarded<T>(panicked: &mut bool, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            *panicked = true;
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_string());
            Err(PyRuntimeError::new_err(format!(
                "toonstream._native: internal error ({what}); \
                 TOONSTREAM_ENGINE=python runs the reference engine"
            )))
        }
    }
}

/// A chunk's bytes: `bytes` and an ASCII `str` are borrowed (both immutable);
/// `bytearray` and other buffers are copied, since a `parse_float` callback
/// could resize a mutable buffer while the core reads it.
enum Chunk<'py> {
    Bytes(Bound<'py, PyBytes>),
    Str(Bound<'py, PyString>),
    Owned(Vec<u8>),
}

impl Chunk<'_> {
    fn bytes(&self) -> PyResult<&[u8]> {
        Ok(match self {
            Chunk::Bytes(b) => b.as_bytes(),
            Chunk::Str(s) => s.to_str()?.as_bytes(),
            Chunk::Owned(v) => v.as_slice(),
        })
    }
}

pub(crate) fn chunk<'py>(data: &Bound<'py, PyAny>) -> PyResult<Chunk<'py>> {
    let py = data.py();
    if let Ok(b) = data.cast::<PyBytes>() {
        return Ok(Chunk::Bytes(b.clone()));
    }
    if let Ok(s) = data.cast::<PyString>() {
        // An ASCII str's characters are its UTF-8 bytes: borrowed as they
        // are.  Any other str is encoded into a temporary bytes object, so
        // that no UTF-8 copy stays cached on the caller's str (`to_str` would
        // keep one for the str's lifetime).
        if s.call_method0("isascii")?.is_truthy()? {
            return Ok(Chunk::Str(s.clone()));
        }
        return match s.encode_utf8() {
            Ok(b) => Ok(Chunk::Bytes(b)),
            Err(e) if e.is_instance_of::<PyUnicodeEncodeError>(py) => Err(unsupported(
                py,
                "a str with lone surrogates is not UTF-8: the native engine cannot decode it",
            )),
            Err(e) => Err(e),
        };
    }
    if let Ok(b) = data.cast::<PyByteArray>() {
        return Ok(Chunk::Owned(b.to_vec()));
    }
    // memoryview and other buffers: bytes(data) copies (a buffer view is
    // not in the limited API before 3.11)
    if data.hasattr("__buffer__")? || data.is_instance_of::<pyo3::types::PyMemoryView>() {
        let b = py.get_type::<PyBytes>().call1((data,))?;
        let b = b.cast_into::<PyBytes>()?;
        return Ok(Chunk::Bytes(b));
    }
    Err(PyTypeError::new_err(format!(
        "expected str, bytes, bytearray or memoryview, not {}",
        data.get_type().name()?
    )))
}

/// `loads`' and `ValueDecoder`'s own keywords, `object_hook` and
/// `object_pairs_hook` (the pairs hook wins, as in `json.loads`), taken out
/// of the decoder options (`None` is the default: no hook).
fn split_hooks<'py>(
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<(Option<Bound<'py, PyDict>>, Option<Hook>)> {
    let Some(kwargs) = kwargs else {
        return Ok((None, None));
    };
    let object = kwargs.get_item("object_hook")?;
    let pairs = kwargs.get_item("object_pairs_hook")?;
    if object.is_none() && pairs.is_none() {
        return Ok((Some(kwargs.clone()), None));
    }
    let rest = kwargs.copy()?;
    for name in ["object_hook", "object_pairs_hook"] {
        if rest.contains(name)? {
            rest.del_item(name)?;
        }
    }
    let given = |v: Option<Bound<'py, PyAny>>| v.filter(|v| !v.is_none()).map(Bound::unbind);
    let hook = match (given(pairs), given(object)) {
        (Some(p), _) => Some(Hook::Pairs(p)),
        (None, Some(o)) => Some(Hook::Object(o)),
        (None, None) => None,
    };
    Ok((Some(rest), hook))
}

/// A hook is refused (`TypeError`) with options under which the pass over
/// the finished value could not give the Python engine's calls: with
/// `parse_float` or `parse_int` (their results are not the builder's: the
/// pass would enter a dict one returned), and outside strict
/// mode (an object's pairs may repeat a key there: the pairs hook would miss
/// the repeats, and both hooks the objects a repeat replaced).
fn check_hook(hook: Option<&Hook>, o: &Opts) -> PyResult<()> {
    if hook.is_none() {
        return Ok(());
    }
    if o.parse_float.is_some() || o.parse_int.is_some() {
        return Err(PyTypeError::new_err(
            "the native engine takes object hooks without parse_float or parse_int only",
        ));
    }
    if !o.options.strict {
        return Err(PyTypeError::new_err(
            "the native engine takes object hooks in strict mode only",
        ));
    }
    Ok(())
}

/// The built value, finished by the hook if there is one.
fn finished(py: Python<'_>, value: Py<PyAny>, hook: Option<&Hook>) -> PyResult<Py<PyAny>> {
    match hook {
        None => Ok(value),
        Some(h) => {
            Ok(finish_objects(py, value.into_bound(py), h, &mut Ticker::default())?.unbind())
        }
    }
}

/// Decode a whole TOON document (str or UTF-8 bytes-like) to Python values,
/// exactly as `toonstream.loads` does on the Python engine.
///
/// ```python
/// >>> from toonstream import _native
/// >>> _native.loads("users[2]{id,name}:\n  1,Ada\n  2,Bob")
/// {'users': [{'id': 1, 'name': 'Ada'}, {'id': 2, 'name': 'Bob'}]}
/// ```
#[pyfunction]
#[pyo3(signature = (data, **options))]
fn loads<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Py<PyAny>> {
    let (options, hook) = split_hooks(options)?;
    let o = self::options(options.as_ref())?;
    check_hook(hook.as_ref(), &o)?;
    let data = chunk(data)?;
    guarded(&mut false, || {
        let mut decoder =
            Decoder::new(o.options).map_err(|e| PyValueError::new_err(e.0.to_string()))?;
        let mut b = Builder::new(o.parse_float).with_parse_int(o.parse_int);
        let bytes = data.bytes()?;
        let r = {
            let _pause = GcPause::new(py);
            let mut sink = b.sink(py);
            decoder
                .feed(bytes, &mut sink)
                .and_then(|()| decoder.close(&mut sink))
        };
        r.map_err(|e| e.into_py(py))?;
        let v = b
            .take_value()
            .ok_or_else(|| PyRuntimeError::new_err("toonstream._native: no value was built"))?;
        finished(py, v, hook.as_ref())
    })
}

/// A push decoder that builds one value (`load` of a file): feed chunks
/// (bytes or str, split anywhere), then `close()` returns the value.
/// Memory: the partial line and the value being built.
///
/// ```python
/// >>> d = _native.ValueDecoder(strict=False)
/// >>> d.feed(b"a[2]: x,"); d.feed(b"y\n"); d.close()
/// {'a': ['x', 'y']}
/// ```
#[pyclass(module = "toonstream._native")]
struct ValueDecoder {
    decoder: Decoder,
    builder: Builder,
    hook: Option<Hook>,
    /// A panic happened inside a call: nothing here can be trusted any more.
    broken: bool,
    done: Option<Py<PyAny>>,
    /// The exception of the hook pass at close (a hook's, or a signal
    /// handler's), raised again by a later close (the value is gone by then:
    /// the pass had taken it).  Kept as the exception object, which
    /// `__traverse__` shows the garbage collector: its traceback holds the
    /// caller's frame, which may hold this decoder.
    hook_failed: Option<Py<PyBaseException>>,
    /// `__clear__` ran (a cycle through this decoder was collected).
    cleared: bool,
}

#[pymethods]
impl ValueDecoder {
    #[new]
    #[pyo3(signature = (**options))]
    fn new(options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let (options, hook) = split_hooks(options)?;
        let mut o = self::options(options.as_ref())?;
        check_hook(hook.as_ref(), &o)?;
        let parse_int = o.parse_int.take();
        let (decoder, parse_float) = decoder_of(o)?;
        Ok(ValueDecoder {
            decoder,
            builder: Builder::new(parse_float).with_parse_int(parse_int),
            hook,
            broken: false,
            done: None,
            hook_failed: None,
            cleared: false,
        })
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Some(Hook::Object(f) | Hook::Pairs(f)) = &self.hook {
            visit.call(f)?;
        }
        visit.call(&self.hook_failed)?;
        visit.call(&self.done)?;
        self.builder.traverse(&visit)
    }

    fn __clear__(&mut self) {
        self.hook = None;
        self.hook_failed = None;
        self.done = None;
        self.builder.clear();
        self.cleared = true;
    }

    /// Add a chunk (bytes, bytearray, memoryview or str).
    fn feed(&mut self, py: Python<'_>, chunk: &Bound<'_, PyAny>) -> PyResult<()> {
        self.check()?;
        // (bytes, the usual chunk, is read in place without a new reference: a small feed's
        // fixed cost is what decides the chunking target)
        let data;
        let bytes = match chunk.cast::<PyBytes>() {
            Ok(b) => b.as_bytes(),
            Err(_) => {
                data = self::chunk(chunk)?;
                data.bytes()?
            }
        };
        let (decoder, builder) = (&mut self.decoder, &mut self.builder);
        guarded(&mut self.broken, || {
            let _pause = GcPause::new(py);
            decoder
                .feed(bytes, &mut builder.sink(py))
                .map_err(|e: BindError| e.into_py(py))
        })
    }

    /// End of input: the count checks run, and the value is returned
    /// (again on a second call).
    fn close(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.check()?;
        if let Some(v) = &self.done {
            return Ok(v.clone_ref(py));
        }
        if let Some(e) = &self.hook_failed {
            return Err(PyErr::from_value(e.bind(py).clone().into_any()));
        }
        let (decoder, builder, hook) = (&mut self.decoder, &mut self.builder, &self.hook);
        let mut built = false;
        let r = guarded(&mut self.broken, || {
            {
                let _pause = GcPause::new(py);
                decoder
                    .close(&mut builder.sink(py))
                    .map_err(|e: BindError| e.into_py(py))?;
            }
            let v = builder
                .take_value()
                .ok_or_else(|| PyRuntimeError::new_err("toonstream._native: no value was built"))?;
            built = true;
            finished(py, v, hook.as_ref())
        });
        let v = match r {
            Ok(v) => v,
            Err(e) => {
                if built {
                    self.hook_failed = Some(e.value(py).clone().unbind());
                }
                return Err(e);
            }
        };
        self.done = Some(v.clone_ref(py));
        Ok(v)
    }
}

impl ValueDecoder {
    fn check(&self) -> PyResult<()> {
        if self.cleared {
            return Err(PyRuntimeError::new_err(
                "toonstream._native: this decoder was cleared by the garbage collector",
            ));
        }
        if self.broken {
            return Err(PyRuntimeError::new_err(
                "toonstream._native: this decoder failed with an internal error",
            ));
        }
        Ok(())
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("API_VERSION", API_VERSION)?;
    m.add_function(wrap_pyfunction!(loads, m)?)?;
    m.add_class::<ValueDecoder>()?;
    m.add_function(wrap_pyfunction!(encode::dumps, m)?)?;
    m.add_function(wrap_pyfunction!(encode::table_rows, m)?)?;
    m.add_function(wrap_pyfunction!(encode::list_items, m)?)?;
    m.add_function(wrap_pyfunction!(jsonmodel::jsonl_items, m)?)?;
    m.add_class::<rows::RowDecoder>()?;
    m.add_class::<events::ParseDecoder>()?;
    m.add_class::<events::ItemsDecoder>()?;
    m.add_class::<json::JsonWriter>()?;
    m.add_class::<jsonl::JsonlTable>()?;
    m.add_function(wrap_pyfunction!(jsonl::jsonl_count, m)?)?;
    m.add_function(wrap_pyfunction!(fill::fill_elements, m)?)?;
    m.add_function(wrap_pyfunction!(frames::table_columns, m)?)?;
    m.add_function(wrap_pyfunction!(arrow::arrow_rows, m)?)?;
    m.add_class::<frames::TableColumns>()?;
    m.add_class::<frames::KeySet>()?;
    m.add_class::<arrow::ArrowColumn>()?;
    Ok(())
}
