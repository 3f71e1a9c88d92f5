//! `decode_to_json`/`decode_to_jsonl` (the CLI's `decode`) on the native
//! engine: the core's [`JsonWriter`] turns TOON bytes into JSON bytes with
//! no Python objects, so each chunk is decoded with the GIL released (other
//! Python threads run meanwhile); signals are checked between chunks.
//!
//! ```python
//! w = _native.JsonWriter(jsonl=True)
//! w.feed(b"[2]{id,tag}:\n  1,a\n  2,b\n") + w.close()
//! # b'{"id":1,"tag":"a"}\n{"id":2,"tag":"b"}\n'
//! ```

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyString};
use toonstream_native::json::{JsonError, JsonOptions, JsonWriter as Writer};
use toonstream_native::Decoder;

use crate::builder::decode_error;
use crate::guarded;

static DECODE_ERROR: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();
static ENCODE_ERROR: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();

/// The push decoder behind `decode_to_json` (`jsonl=False`) and
/// `decode_to_jsonl` (`jsonl=True`): each call returns the JSON bytes
/// (UTF-8) its input completed.  After an error every call raises it again.
#[pyclass(module = "toonstream._native")]
pub struct JsonWriter {
    decoder: Decoder,
    writer: Writer,
    path: Option<String>,
    broken: bool,
    failed: Option<PyErr>,
    closed: bool,
}

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
        })
    }

    /// Add a chunk (bytes or str); returns the JSON bytes it completed.
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        chunk: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.check(py)?;
        let data = crate::chunk(chunk)?;
        let bytes = data.bytes()?;
        let (decoder, writer) = (&mut self.decoder, &mut self.writer);
        let r = guarded(&mut self.broken, || {
            // (the writer's own error of the chunk's last line is raised once that line is done)
            Ok(py.detach(|| {
                decoder
                    .feed(bytes, writer)
                    .map_err(|e| writer.first_error(e))?;
                writer.check()
            }))
        });
        let r = self.located(py, r);
        self.output(py, r)
    }

    /// End of input: the rest of the JSON (count checks run; a path that
    /// matched nothing is an error); `b""` once done.
    fn close<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.check(py)?;
        if self.closed {
            return Ok(PyBytes::new(py, b""));
        }
        let (decoder, writer) = (&mut self.decoder, &mut self.writer);
        let r = guarded(&mut self.broken, || {
            Ok(py.detach(|| {
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
        let out = self.output(py, r)?;
        self.closed = true;
        Ok(out)
    }
}

impl JsonWriter {
    fn check(&self, py: Python<'_>) -> PyResult<()> {
        if let Some(e) = &self.failed {
            return Err(e.clone_ref(py));
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

    /// The bytes written so far; an error is kept for every later call.
    fn output<'py>(&mut self, py: Python<'py>, r: PyResult<()>) -> PyResult<Bound<'py, PyBytes>> {
        let out = PyBytes::new(py, &self.writer.take_output());
        match r {
            Ok(()) => {
                py.check_signals()?;
                Ok(out)
            }
            Err(e) => {
                self.failed = Some(e.clone_ref(py));
                Err(e)
            }
        }
    }
}
