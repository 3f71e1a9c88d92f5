//! `decode_to_json`/`decode_to_jsonl` (the CLI's `decode`) on the native
//! engine: the core's [`JsonWriter`] turns TOON bytes into JSON bytes with
//! no Python objects, so each chunk is decoded with the GIL released (other
//! Python threads run meanwhile); signals are checked between chunks.  In a
//! chunk with a megabyte or more of a table's rows, the rows are read on two
//! threads (`Decoder::feed_two_threads`; the same bytes and errors).
//!
//! ```python
//! w = _native.JsonWriter(jsonl=True)
//! w.feed(b"[2]{id,tag}:\n  1,a\n  2,b\n") + b"".join(iter(w.close, b""))
//! # b'{"id":1,"tag":"a"}\n{"id":2,"tag":"b"}\n'
//! ```

use pyo3::exceptions::{PyBaseException, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyString};
use pyo3::{PyTraverseError, PyVisit};
use toonstream_native::json::{JsonError, JsonOptions, JsonWriter as Writer};
use toonstream_native::{Decoder, TWO_THREADS_MIN};

use crate::builder::decode_error;
use crate::guarded;

static DECODE_ERROR: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();
static ENCODE_ERROR: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();

/// The push decoder behind `decode_to_json` (`jsonl=False`) and
/// `decode_to_jsonl` (`jsonl=True`): each call returns JSON bytes (UTF-8)
/// of the input so far, in order; `close` returns the rest, a piece a call
/// until `b""`.  After an error every call raises it again.
///
/// Two threads for a big table's rows: a chunk with a megabyte or more of
/// them is cut in two (`Decoder::feed_two_threads`).  Small chunks (the
/// drivers read 16 KiB) are held while such rows come, [`BATCH`] bytes at a
/// time, and the batch's output is then handed out over the next calls in
/// pieces of about the size their own output would have had (megabyte
/// Python objects cost their page faults each time, more than the second
/// thread saves, and the drivers' memory stays flat).  Other input is
/// decoded as it comes and its output returned at once.
#[pyclass(module = "toonstream._native")]
pub struct JsonWriter {
    decoder: Decoder,
    writer: Writer,
    path: Option<String>,
    broken: bool,
    /// Kept as the exception object, shown to the garbage collector (`__traverse__`): once
    /// raised, its traceback holds the caller's frames, which may hold this writer.
    failed: Option<Py<PyBaseException>>,
    closed: bool,
    /// small chunks held for a batch (not for indented JSON: its several
    /// output bytes per input byte would leave in pieces larger than a
    /// call's own output, and the drivers' memory must stay flat)
    holds: bool,
    held: Vec<u8>,
    /// bytes at the start of the writer's output already returned
    sent: usize,
}

/// Chunks smaller than this are held while a big table's rows come.
const SMALL: usize = 64 << 10;
/// Held chunks are decoded once they are this long.
const BATCH: usize = 2 << 20;
/// No new batch is held while this much output waits (what waits stays
/// bounded whatever the output's size per input byte).
const WAITING: usize = 4 << 20;
/// What a call returns of the output that waits: its own input's output
/// and twice its input's length more (at least this much), so a held
/// batch's output leaves in pieces of the size the call's output would
/// have had.  `close` returns this much a call.
const PIECE: usize = 32 << 10;

#[pymethods]
impl JsonWriter {
    #[new]
    #[pyo3(signature = (*, path=None, jsonl=false, indent=None, **options))]
    fn new(
        path: Option<String>,
        jsonl: bool,
        indent: Option<usize>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let (decoder, parse_float) = crate::decoder(options)?;
        if parse_float.is_some() {
            // (numbers are written from their text; a hook's values are the reference's business)
            return Err(PyValueError::new_err("JsonWriter takes no parse_float"));
        }
        Ok(JsonWriter {
            decoder,
            writer: Writer::new(JsonOptions {
                jsonl,
                indent,
                path: path.clone(),
            }),
            path,
            broken: false,
            failed: None,
            closed: false,
            holds: indent.is_none(),
            held: Vec::new(),
            sent: 0,
        })
    }

    /// Add a chunk (bytes or str); returns JSON bytes of the input so far.
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        chunk: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.check(py)?;
        let data = crate::chunk(chunk)?;
        let bytes = data.bytes()?;
        let budget = PIECE.max(2 * bytes.len());
        let hold = !self.held.is_empty()
            || (self.holds
                && bytes.len() < SMALL
                && self.writer.output().len() - self.sent <= WAITING
                && self.rows_come(bytes));
        if hold {
            self.held.extend_from_slice(bytes);
            if self.held.len() < BATCH {
                return self.output(py, Ok(()), budget);
            }
        }
        self.compact();
        let before = self.writer.output().len();
        let input = if hold { &self.held[..] } else { bytes };
        let (decoder, writer) = (&mut self.decoder, &mut self.writer);
        let r = guarded(&mut self.broken, || {
            // (the writer's own error of the chunk's last line is raised once that line is done)
            Ok(py.detach(|| {
                decoder
                    .feed_two_threads(input, writer)
                    .map_err(|e| writer.first_error(e))?;
                writer.check()
            }))
        });
        self.held.clear();
        let made = if hold {
            0
        } else {
            self.writer.output().len() - before
        };
        let r = self.located(py, r);
        self.output(py, r, made + budget)
    }

    /// Rows read on a second thread so far (for tests).
    #[getter]
    fn forked_rows(&self) -> u64 {
        self.decoder.forked_rows()
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.failed)
    }

    fn __clear__(&mut self) {
        self.failed = None;
    }

    /// End of input (count checks run; a path that matched nothing is an
    /// error): the rest of the JSON, a piece a call (megabytes may wait when
    /// the input ended in a held batch); `b""` once all of it is returned.
    fn close<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.check(py)?;
        if self.closed {
            return self.output(py, Ok(()), PIECE);
        }
        self.compact();
        let held = std::mem::take(&mut self.held);
        let (decoder, writer) = (&mut self.decoder, &mut self.writer);
        let r = guarded(&mut self.broken, || {
            Ok(py.detach(|| {
                if !held.is_empty() {
                    decoder
                        .feed_two_threads(&held, writer)
                        .map_err(|e| writer.first_error(e))?;
                }
                // (the last line's own error first, then the scope ends' count checks)
                writer.check()?;
                decoder
                    .end_input(writer)
                    .map_err(|e| writer.first_error(e))?;
                writer.check()?;
                decoder.close(writer)?;
                writer.finish()
            }))
        });
        let r = self.located(py, r);
        let out = self.output(py, r, PIECE)?;
        self.closed = true;
        Ok(out)
    }
}

impl JsonWriter {
    fn check(&self, py: Python<'_>) -> PyResult<()> {
        if let Some(e) = &self.failed {
            return Err(PyErr::from_value(e.bind(py).clone().into_any()));
        }
        if self.broken {
            return Err(PyRuntimeError::new_err(
                "toonstream._native: this decoder failed with an internal error",
            ));
        }
        Ok(())
    }

    /// A Python exception for the writer's or the core's error.
    fn located(&self, py: Python<'_>, r: PyResult<Result<(), JsonError>>) -> PyResult<()> {
        match r? {
            Ok(()) => Ok(()),
            Err(JsonError::Decode(e)) => Err(decode_error(py, &e)),
            Err(JsonError::Number(message)) => {
                let cls = ENCODE_ERROR.import(py, "toonstream._errors", "ToonEncodeError")?;
                Err(PyErr::from_value(cls.call1((message,))?))
            }
            Err(JsonError::Path { code, what, line }) => Err(self.path_error(py, code, what, line)),
        }
    }

    /// The Python writer's own errors (`tojson._JsonWriter`), worded alike.
    fn path_error(&self, py: Python<'_>, code: &str, what: &str, line: u64) -> PyErr {
        let made = (|| -> PyResult<PyErr> {
            let path = match &self.path {
                Some(p) => PyString::new(py, p).repr()?.to_str()?.to_owned(),
                None => String::new(),
            };
            let message = match code {
                "not_found" => format!("no value at path {path}"),
                "ambiguous_path" => {
                    format!("path {path} matches more than one value (JSON output is one value)")
                }
                _ if self.path.is_none() => format!(
                    "JSON Lines output needs a root array (the root is {what}; a path can select an array in it)"
                ),
                _ => format!(
                    "the value at path {path} is {what}, not an array (JSON Lines are an array's elements)"
                ),
            };
            let cls = DECODE_ERROR.import(py, "toonstream._errors", "ToonDecodeError")?;
            let kwargs = PyDict::new(py);
            kwargs.set_item("code", code)?;
            kwargs.set_item("line", line.max(1))?; // (an empty document has no line: 1, as on the reference)
            kwargs.set_item("column", 1)?;
            kwargs.set_item("line_text", "")?;
            Ok(PyErr::from_value(cls.call((message,), Some(&kwargs))?))
        })();
        made.unwrap_or_else(|e| e)
    }

    /// Whether the rows that come next are a big table's, to be read on
    /// two threads: the rows it still declares, at this chunk's mean line
    /// length, fill a cut.
    fn rows_come(&self, chunk: &[u8]) -> bool {
        let rows = self.decoder.rows_ahead(&self.writer);
        if rows == 0 {
            return false;
        }
        let lines = memchr::memchr_iter(b'\n', chunk).count().max(1);
        let line = (chunk.len() / lines).max(1) as u64;
        rows.saturating_mul(line) >= TWO_THREADS_MIN as u64
    }

    /// Drop the output already returned from the writer's buffer once it is
    /// half of it (so that handing out a batch in pieces moves it once).
    fn compact(&mut self) {
        if self.sent > 0 && self.sent * 2 >= self.writer.output().len() {
            self.writer.discard_output(self.sent);
            self.sent = 0;
        }
    }

    /// At most `budget` bytes of the output that waits, cut after a line
    /// (or a character); an error is kept for every later call (and what
    /// waits dropped).
    fn output<'py>(
        &mut self,
        py: Python<'py>,
        r: PyResult<()>,
        budget: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        if let Err(e) = r {
            self.failed = Some(e.value(py).clone().unbind());
            return Err(e);
        }
        let waiting = &self.writer.output()[self.sent..];
        let mut n = waiting.len().min(budget);
        if n < waiting.len() {
            // (a piece is text on its own: it ends after a line, or at least a character)
            n = match memchr::memrchr(b'\n', &waiting[..n]) {
                Some(i) => i + 1,
                None => (1..=n)
                    .rev()
                    .find(|&i| waiting[i] & 0xc0 != 0x80)
                    .unwrap_or(n),
            };
        }
        let out = PyBytes::new(py, &waiting[..n]);
        self.sent += n;
        if self.sent == self.writer.output().len() {
            self.writer.discard_output(self.sent);
            self.sent = 0;
        }
        py.check_signals()?;
        Ok(out)
    }
}
