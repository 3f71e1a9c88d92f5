//! The frame reader's column splitter: a run of a table's row lines split
//! into columns by the core ([`toonstream_native::columns`]), then typed
//! column buffers in Arrow layouts (values, validity bitmap, offsets) as
//! `bytes`, which `toonstream/_frames.py` wraps with
//! `pyarrow.Array.from_buffers` (no copy) and hands to Polars.
//!
//! ```python
//! c = _native.table_columns(b"  1,a\n  2,null\n", 0, 14, 2, ",", 2, 10)
//! c.rows, c.bits(1, 0, 2)            # (2, 65): K_STR | K_NULL
//! c.column(0, 0, 2, "int64")         # (values, None, 0)
//! ```
//!
//! The splitting and the buffers are made without the GIL (they hold no
//! Python object: the run's `bytes` is immutable and kept alive by the
//! object).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use toonstream_native::columns::{self, Columns, Fixed, Split};

use crate::guarded;

/// The plain rows of one run, column by column (see the module docs).
#[pyclass(module = "toonstream._native", frozen)]
pub(crate) struct TableColumns {
    /// The run is `data[start..end]` (read in place).
    data: Py<PyBytes>,
    start: usize,
    end: usize,
    columns: Columns,
    delim: u8,
}

fn delim_byte(delim: &str) -> PyResult<u8> {
    match delim.as_bytes() {
        [b @ (b',' | b'\t' | b'|')] => Ok(*b),
        _ => Err(PyValueError::new_err(format!(
            "not a TOON delimiter: {delim:?}"
        ))),
    }
}

/// Split the first `cap` lines of `data[start:end]` (complete lines at
/// indentation `plen`, `width` cells each, separated by `delim`; read in
/// place): a `TableColumns`, or the verdict on the whole run
/// as the reference gives it, as `(verdict, quoted)`: `"not_indented"` (a
/// line off the row indentation), `"not_plain"` (a row of another width),
/// `"unhandled"` (only the reference can tell: it runs instead); `quoted`:
/// the reference would have rewritten simple quoted rows before its verdict.
#[pyfunction]
#[allow(clippy::too_many_arguments)] // (a Python function's positional arguments)
pub(crate) fn table_columns(
    py: Python<'_>,
    data: Bound<'_, PyBytes>,
    start: usize,
    end: usize,
    plen: usize,
    delim: &str,
    width: usize,
    cap: usize,
) -> PyResult<Py<PyAny>> {
    let d = delim_byte(delim)?;
    if start > end || end > data.as_bytes().len() {
        return Err(PyValueError::new_err("the run is not within the data"));
    }
    let split = guarded(&mut false, || {
        let bytes = &data.as_bytes()[start..end];
        Ok(py.detach(|| columns::split(bytes, plen, d, width, cap)))
    })?;
    py.check_signals()?;
    Ok(match split {
        Split::Columns(columns) => Py::new(
            py,
            TableColumns {
                data: data.unbind(),
                start,
                end,
                columns,
                delim: d,
            },
        )?
        .into_any(),
        Split::NotIndented { quoted } => ("not_indented", quoted)
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        Split::NotPlain { quoted } => ("not_plain", quoted).into_pyobject(py)?.into_any().unbind(),
        Split::Unhandled => ("unhandled", false).into_pyobject(py)?.into_any().unbind(),
    })
}

fn optional<'py>(py: Python<'py>, v: Option<Vec<u8>>) -> Py<PyAny> {
    match v {
        Some(v) => PyBytes::new(py, &v).into_any().unbind(),
        None => py.None(),
    }
}

#[pymethods]
impl TableColumns {
    /// Plain rows (the lines not in `specials`).
    #[getter]
    fn rows(&self) -> usize {
        self.columns.rows()
    }

    /// The run's length: its lines end there (after the LF of the last).
    #[getter]
    fn end(&self) -> usize {
        self.columns.end
    }

    /// Lines in the run.
    #[getter]
    fn lines(&self) -> usize {
        self.columns.lines
    }

    /// Some rows had quoted cells (split here).
    #[getter]
    fn quoted(&self) -> bool {
        self.columns.quoted
    }

    /// The lines the decoder reads: (line index in the run, start, end after the LF).
    #[getter]
    fn specials(&self) -> Vec<(usize, usize, usize)> {
        self.columns.specials.clone()
    }

    /// The kind bits of column `col`'s cells in rows `lo..hi`, or-ed.
    fn bits(&self, col: usize, lo: usize, hi: usize) -> u8 {
        self.columns.bits(col, lo, hi)
    }

    /// Column `col`, rows `lo..hi`, as Arrow buffers: `"int64"`, `"float64"`
    /// -> (values, validity or None, null count); `"bool"` -> (value
    /// bitmap, validity, nulls); `"views"` (the strings as Arrow string
    /// views) -> (views, long strings' buffer, validity, nulls); `"utf8"` (the strings)
    /// and `"tokens"` (the reference's raw tokens) -> (i32 offsets, data,
    /// validity, nulls).
    /// The caller has checked that the cells' kinds fit.
    fn column<'py>(
        &self,
        py: Python<'py>,
        col: usize,
        lo: usize,
        hi: usize,
        kind: &str,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let data = self
            .data
            .bind(py)
            .as_bytes()
            .get(self.start..self.end)
            .unwrap_or(&[]);
        let c = &self.columns;
        let delim = self.delim;
        let fixed = match kind {
            "int64" => Some(Fixed::Int64),
            "float64" => Some(Fixed::Float64),
            _ => None,
        };
        let out = guarded(&mut false, || match (kind, fixed) {
            (_, Some(f)) => {
                // (written straight into the bytes object, with the GIL:
                // about a millisecond per 40,000 cells)
                let n = c.len(col, lo, hi);
                let values = PyBytes::new_with(py, n * f.width(), |buf| {
                    c.write_fixed(data, col, lo, hi, f, buf);
                    Ok(())
                })?;
                let (validity, nulls) = c.nulls(col, lo, hi);
                PyTuple::new(
                    py,
                    [
                        values.into_any().unbind(),
                        optional(py, validity),
                        nulls.into_pyobject(py)?.into_any().unbind(),
                    ],
                )
            }
            ("views", None) => {
                // (the views with the GIL, as the fixed-width columns; the
                // long strings' buffer first, to know its size)
                let mut long = Vec::new();
                py.detach(|| c.long_strings(data, col, lo, hi, &mut long));
                let n = c.len(col, lo, hi);
                let views = PyBytes::new_with(py, n * 16, |buf| {
                    c.write_views(data, col, lo, hi, buf);
                    Ok(())
                })?;
                let (validity, nulls) = c.nulls(col, lo, hi);
                PyTuple::new(
                    py,
                    [
                        views.into_any().unbind(),
                        PyBytes::new(py, &long).into_any().unbind(),
                        optional(py, validity),
                        nulls.into_pyobject(py)?.into_any().unbind(),
                    ],
                )
            }
            ("bool", None) => {
                let b = py.detach(|| c.boolean(col, lo, hi));
                PyTuple::new(
                    py,
                    [
                        PyBytes::new(py, &b.values).into_any().unbind(),
                        optional(py, b.validity),
                        b.nulls.into_pyobject(py)?.into_any().unbind(),
                    ],
                )
            }
            ("utf8" | "tokens", None) => {
                let s = py.detach(|| {
                    if kind == "utf8" {
                        c.utf8(data, col, lo, hi)
                    } else {
                        c.tokens(data, col, lo, hi, delim)
                    }
                });
                let offsets = PyBytes::new_with(py, s.offsets.len() * 4, |buf| {
                    for (chunk, &v) in buf.chunks_exact_mut(4).zip(&s.offsets) {
                        chunk.copy_from_slice(&v.to_le_bytes());
                    }
                    Ok(())
                })?;
                PyTuple::new(
                    py,
                    [
                        offsets.into_any().unbind(),
                        PyBytes::new(py, &s.data).into_any().unbind(),
                        optional(py, s.validity),
                        s.nulls.into_pyobject(py)?.into_any().unbind(),
                    ],
                )
            }
            _ => Err(PyValueError::new_err(format!(
                "unknown column kind {kind:?}"
            ))),
        })?;
        py.check_signals()?;
        Ok(out)
    }
}
