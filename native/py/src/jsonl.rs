//! `encode_jsonl`'s table rows on the native engine: the core's
//! [`TableEncoder`] turns JSON Lines bytes into TOON row lines with no
//! Python objects, each chunk with the GIL released (other Python threads
//! run meanwhile).  A decline is `None`: the driver then encodes the input
//! with the reference from the start, so errors stay the reference's.
//!
//! ```python
//! t = _native.JsonlTable(delimiter=",", indent_size=2)
//! t.feed(b'{"id": 1, "tag": "a"}\n{"id": 2, "tag": "b"}\n')  # b'\n  1,a\n  2,b'
//! t.close()                                                  # (['id', 'tag'], 2)
//! t.feed(b'[1]\n')                                           # (a new one) None
//! ```

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use toonstream_native::jsonl::{count_values, Decline, TableEncoder};

use crate::guarded;

/// The JSON values in a block of JSON Lines (complete lines), each
/// checked: `(values, lines)`, the count of values (lines that are not
/// blank) and of line feeds; or `None` where the reference must parse the
/// block (the core's `count_values`: a malformed line, NaN, a lone
/// surrogate escape, a long number, deep nesting, invalid UTF-8).  Pass one
/// of `encode_jsonl` needs no more once the array's shape is settled.
/// Checked with the GIL released (the `bytes` is immutable), a big block on
/// two threads (`threads=1`: one).
///
/// ```python
/// _native.jsonl_count(b'{"a": [1]}\n\n2\n')   # (2, 3)
/// _native.jsonl_count(b'{"a": NaN}\n')         # None
/// ```
#[pyfunction]
#[pyo3(signature = (block, *, threads=2, start=0, end=None))]
pub(crate) fn jsonl_count(
    py: Python<'_>,
    block: Bound<'_, PyBytes>,
    threads: usize,
    start: usize,
    end: Option<usize>,
) -> PyResult<Option<(u64, u64)>> {
    let bytes = part(block.as_bytes(), start, end)?;
    guarded(&mut false, || {
        Ok(py.detach(|| {
            let (a, b) = on_two_threads(bytes, threads, |half| count_values(half).ok())?;
            Some((a + b.unwrap_or(0), line_feeds(bytes)))
        }))
    })
}

/// `block[start:end]` (the lines a caller's block holds, read in place).
pub(crate) fn part(block: &[u8], start: usize, end: Option<usize>) -> PyResult<&[u8]> {
    block
        .get(start..end.unwrap_or(block.len()))
        .ok_or_else(|| PyValueError::new_err("start:end is not within the block"))
}

/// The line feeds in `block` (the lines a block of complete lines holds).
pub(crate) fn line_feeds(block: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', block).count() as u64
}

/// Blocks of at least twice this many bytes are split over two threads.
const SPLIT_AT: usize = 1 << 18;

/// `f` of a block of complete lines, `(f(block), None)`; or, with two
/// `threads` and a block big enough, of its two halves (cut at the line
/// feed after the middle, which neither half keeps) at once, in order:
/// `(f(first), Some(f(second)))`.  `None` if either gives `None`.
pub(crate) fn on_two_threads<T: Send>(
    block: &[u8],
    threads: usize,
    f: impl Fn(&[u8]) -> Option<T> + Sync,
) -> Option<(T, Option<T>)> {
    let mid = block.len() / 2;
    let cut = match memchr::memchr(b'\n', &block[mid..]) {
        Some(i) if threads >= 2 && block.len() >= 2 * SPLIT_AT => mid + i,
        _ => return Some((f(block)?, None)),
    };
    let (first, second) = (&block[..cut], &block[cut + 1..]);
    let (a, b) = std::thread::scope(|s| {
        let h = s.spawn(|| f(second));
        // (a panic in the other thread is a bug: the reference does the block)
        (f(first), h.join().unwrap_or(None))
    });
    Some((a?, Some(b?)))
}

/// The push encoder of JSON Lines into one table's row lines (the core's
/// `TableEncoder`).  `feed` returns the rows of the lines a chunk completes
/// (UTF-8 bytes, each row `"\n" + indent + cells`), `close` the fields and
/// the row count; both return `None` once the input is not such a table.
#[pyclass(module = "toonstream._native")]
pub struct JsonlTable {
    inner: TableEncoder,
    broken: bool,
    declined: bool,
    /// Why it declined (see [`reason_name`]), once it has.
    reason: Option<&'static str>,
}

/// A decline's reason for the driver: `"syntax"` and `"utf8"` mean the
/// input is likely not JSON Lines at all (the reference then reports
/// where), the others a shape or a value left to the reference.
fn reason_name(d: Decline) -> &'static str {
    match d {
        Decline::Utf8 => "utf8",
        Decline::Syntax => "syntax",
        Decline::NotFlat => "not_flat",
        Decline::Keys => "keys",
        Decline::Number => "number",
        Decline::Surrogate => "surrogate",
    }
}

#[pymethods]
impl JsonlTable {
    #[new]
    #[pyo3(signature = (*, delimiter, indent_size, threads=1))]
    fn new(delimiter: &str, indent_size: usize, threads: usize) -> PyResult<Self> {
        let delim = match delimiter {
            "," | "\t" | "|" => delimiter.as_bytes()[0],
            _ => {
                return Err(PyValueError::new_err(format!(
                    "delimiter must be ',', '\\t' or '|', not {delimiter:?}"
                )))
            }
        };
        if indent_size > 1 << 12 {
            return Err(PyValueError::new_err("indent_size too large"));
        }
        Ok(JsonlTable {
            inner: TableEncoder::new(delim, indent_size).with_threads(threads),
            broken: false,
            declined: false,
            reason: None,
        })
    }

    /// Add a chunk of the input (bytes): the rows it completed, or `None`.
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        chunk: &[u8],
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        self.check()?;
        let mut out = String::new();
        let inner = &mut self.inner;
        let r = guarded(&mut self.broken, || {
            Ok(py.detach(|| inner.feed(chunk, &mut out)))
        })?;
        py.check_signals()?;
        if let Err(d) = r {
            self.declined = true;
            self.reason = Some(reason_name(d));
            return Ok(None);
        }
        Ok(Some(PyBytes::new(py, out.as_bytes())))
    }

    /// End of input: `(rows of the last line, fields, row count)`, or `None`
    /// (not a table; no record at all is not one either).
    #[allow(clippy::type_complexity)]
    fn close<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<Option<(Bound<'py, PyBytes>, Vec<String>, u64)>> {
        self.check()?;
        let mut out = String::new();
        let inner = &mut self.inner;
        let r = guarded(&mut self.broken, || Ok(inner.finish(&mut out)))?;
        let fields = match (r, self.inner.fields()) {
            (Ok(()), Some(f)) => f.to_vec(),
            (r, _) => {
                self.declined = true;
                self.reason = Some(r.err().map_or("empty", reason_name));
                return Ok(None);
            }
        };
        Ok(Some((
            PyBytes::new(py, out.as_bytes()),
            fields,
            self.inner.rows(),
        )))
    }

    /// Whether the input was declined (every later call returns `None`).
    #[getter]
    fn declined(&self) -> bool {
        self.declined
    }

    /// Why it declined (`"syntax"`, `"utf8"`, `"not_flat"`, `"keys"`,
    /// `"number"`, `"surrogate"`, `"empty"`: no record), or `None`.
    #[getter]
    fn reason(&self) -> Option<&'static str> {
        self.reason
    }
}

impl JsonlTable {
    fn check(&self) -> PyResult<()> {
        if self.broken {
            return Err(PyRuntimeError::new_err(
                "toonstream._native: this encoder failed with an internal error",
            ));
        }
        Ok(())
    }
}
