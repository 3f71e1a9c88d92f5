//! The frame reader's column splitter: a run of a table's row lines split
//! into columns by the core ([`toonstream_native::columns`]), then typed
//! columns in Arrow layouts (values, validity bitmap, offsets or views),
//! which `toonstream/_frames.py` hands to Polars through the Arrow
//! PyCapsule interface ([`ArrowColumn`]; no pyarrow, no copy).
//!
//! ```python
//! c = _native.table_columns(b"  1,a\n  2,null\n", 0, 14, 2, ",", 2, 10)
//! c.rows, c.bits(1, 0, 2)            # (2, 65): K_STR | K_NULL
//! pl.Series(c.arrow(0, 0, 2, "int64"))   # [1, 2]
//! ```
//!
//! With a plan (the column types, once the reader knows them) the cells are
//! typed as the run is split: the object then holds each column's buffers
//! for the whole run, and `arrow()` hands out slices of them (shared, with
//! an offset); the cells are split again only if asked for (`tokens`, or
//! a kind the plan did not make).
//!
//! The splitting and the buffers are made without the GIL (they hold no
//! Python object: the run's `bytes` is immutable and kept alive by the
//! object).

use std::ffi::CStr;
use std::sync::{Arc, OnceLock};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use toonstream_native::columns::{self, Columns, Fixed, Layout, Plan, Split, Typed, Values};
use toonstream_native::keys::KeyIndex;
use toonstream_native::pool;

use crate::arrow::{ArrowColumn, Buffer};
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
    plen: usize,
    width: usize,
    /// Entry rows of a keyed table (column 0: the keys).
    keyed: bool,
    /// A planned split's columns, ready to export (None: a column not kept);
    /// empty for a split into cells.
    typed: Vec<Option<Export>>,
    /// A planned run's cells, split again when asked for (tokens, an
    /// export the plan did not make: the reference's ways, rare).
    cells: OnceLock<Option<Columns>>,
}

/// A planned column's buffers, the whole run's: a slice of rows shares them.
struct Export {
    /// The `arrow()` kind it answers.
    kind: &'static str,
    format: &'static CStr,
    buffers: Arc<Vec<Buffer>>,
    /// Rows holding `null`, ascending.
    nulls: Vec<u32>,
}

impl Export {
    /// `raw`: the column's layout was [`Layout::Tokens`] (its `arrow()` kind
    /// is then `"raw"`).
    fn of(t: Typed, rows: usize, raw: bool) -> Option<Export> {
        let validity = Buffer::validity(columns::validity_bitmap(&t.nulls, rows));
        let (kind, format, buffers) = match t.values {
            Values::Int64(v) => ("int64", c"l", vec![validity, Buffer::Int64(v)]),
            Values::Float64(v) => ("float64", c"g", vec![validity, Buffer::Float64(v)]),
            Values::Decimal128(v) => ("decimal128", c"d:38,0", vec![validity, Buffer::Int128(v)]),
            Values::Bool(v) => {
                let bits = Buffer::bytes(columns::pack_bits(&v));
                pool::give(v);
                ("bool", c"b", vec![validity, bits])
            }
            Values::Views { views, long } => {
                // (the variadic buffers, then their int64 sizes)
                let sizes: Vec<i64> = long.iter().map(|b| b.len() as i64).collect();
                let mut buffers = vec![validity, Buffer::Wide(views)];
                buffers.extend(long.into_iter().map(Buffer::bytes));
                buffers.push(Buffer::Int64(sizes));
                (if raw { "raw" } else { "views" }, c"vu", buffers)
            }
            Values::Skip => return None,
        };
        Some(Export {
            kind,
            format,
            buffers: Arc::new(buffers),
            nulls: t.nulls,
        })
    }
}

/// A plan from Python: per column, its layout (`"l"` int64, `"g"` float64,
/// `"d"` decimal128 (38, 0), `"b"` bool, `"v"` string views, `"t"` string
/// views of the tokens as written, `"-"` none)
/// and the kind bits allowed.
fn plan_of(plan: &[(String, u8)]) -> PyResult<Vec<Plan>> {
    plan.iter()
        .map(|(layout, allowed)| {
            let layout = match layout.as_str() {
                "l" => Layout::Int64,
                "g" => Layout::Float64,
                "d" => Layout::Decimal128,
                "b" => Layout::Bool,
                "v" => Layout::Views,
                "t" => Layout::Tokens,
                "-" => Layout::Skip,
                other => {
                    return Err(PyValueError::new_err(format!(
                        "unknown column layout {other:?}"
                    )))
                }
            };
            Ok(Plan {
                layout,
                allowed: *allowed,
            })
        })
        .collect()
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
///
/// `plan` (the column types, once known: see `plan_of`): the cells are
/// typed as they are split, and kept as Arrow buffers only
/// (`TableColumns.typed`); a cell the plan does not allow gives the
/// split into cells instead.
#[pyfunction]
#[pyo3(signature = (data, start, end, plen, delim, width, cap, *, plan=None, keyed=false))]
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
    plan: Option<Vec<(String, u8)>>,
    keyed: bool,
) -> PyResult<Py<PyAny>> {
    let d = delim_byte(delim)?;
    if start > end || end > data.as_bytes().len() {
        return Err(PyValueError::new_err("the run is not within the data"));
    }
    let plan = plan.as_deref().map(plan_of).transpose()?;
    let split = guarded(&mut false, || {
        let bytes = &data.as_bytes()[start..end];
        Ok(py.detach(|| {
            let mut split = match &plan {
                _ if keyed => columns::split_entries(bytes, plen, d, width, cap, plan.as_deref()),
                Some(plan) => columns::split_planned(bytes, plen, d, width, cap, plan),
                None => columns::split(bytes, plen, d, width, cap),
            };
            let typed = match &mut split {
                Split::Columns(c) => {
                    let rows = c.rows();
                    let typed = c.take_typed();
                    let raw = |i: usize| {
                        plan.as_ref()
                            .and_then(|p| p.get(i))
                            .is_some_and(|p| p.layout == Layout::Tokens)
                    };
                    typed
                        .into_iter()
                        .enumerate()
                        .map(|(i, t)| Export::of(t, rows, raw(i)))
                        .collect()
                }
                _ => Vec::new(),
            };
            (split, typed)
        }))
    })?;
    py.check_signals()?;
    let (split, typed) = split;
    Ok(match split {
        Split::Columns(columns) => Py::new(
            py,
            TableColumns {
                data: data.unbind(),
                start,
                end,
                columns,
                delim: d,
                plen,
                width,
                keyed,
                typed,
                cells: OnceLock::new(),
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

impl TableColumns {
    /// The run's bytes.
    fn run<'a>(&'a self, py: Python<'a>) -> &'a [u8] {
        self.data
            .bind(py)
            .as_bytes()
            .get(self.start..self.end)
            .unwrap_or(&[])
    }

    /// The run's cells: as split, or split again for a planned run.
    fn cells(&self, py: Python<'_>) -> PyResult<&Columns> {
        if self.typed.is_empty() {
            return Ok(&self.columns);
        }
        let data = self.data.bind(py).as_bytes();
        let run = data
            .get(self.start..self.start + self.columns.end)
            .unwrap_or(&[]);
        let (plen, delim, width) = (self.plen, self.delim, self.width);
        let cells = self.cells.get_or_init(|| {
            let split = if self.keyed {
                columns::split_entries(run, plen, delim, width, usize::MAX, None)
            } else {
                columns::split(run, plen, delim, width, usize::MAX)
            };
            match split {
                Split::Columns(c) => Some(c),
                _ => None,
            }
        });
        cells.as_ref().ok_or_else(|| {
            PyRuntimeError::new_err("toonstream._native: a planned run split differently")
        })
    }
}

#[pymethods]
impl TableColumns {
    /// The cells were typed as split (a plan was given and fitted).
    #[getter]
    fn typed(&self) -> bool {
        !self.typed.is_empty()
    }

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

    /// A keyed table's run: the entry keys of its plain rows `lo..hi`, in
    /// order (unescaped); none for a table's.
    fn keys<'py>(&self, py: Python<'py>, lo: usize, hi: usize) -> PyResult<Bound<'py, PyList>> {
        guarded(&mut false, || {
            let data = self.run(py);
            let keys = (lo..hi.min(self.columns.rows())).map(|r| {
                // (the run was checked as UTF-8, and a key ends at a character)
                std::str::from_utf8(self.columns.key(data, r)).map(|k| crate::pystr::new_str(py, k))
            });
            let keys: Result<Vec<_>, _> = keys.collect();
            PyList::new(
                py,
                keys.map_err(|e| PyRuntimeError::new_err(e.to_string()))?,
            )
        })
    }

    /// Plain row `row`'s line, its LF included.
    fn row_line<'py>(&self, py: Python<'py>, row: usize) -> PyResult<Bound<'py, PyBytes>> {
        guarded(&mut false, || {
            let data = self.run(py);
            let start = self
                .columns
                .row_start(row)
                .filter(|&s| s < data.len())
                .ok_or_else(|| PyValueError::new_err("no such row"))?;
            let end = memchr::memchr(b'\n', &data[start..]).map_or(data.len(), |i| start + i + 1);
            Ok(PyBytes::new(py, &data[start..end]))
        })
    }

    /// The run is a keyed table's (column 0: the entry keys).
    #[getter]
    fn keyed(&self) -> bool {
        self.keyed
    }

    /// The kind bits of column `col`'s cells in rows `lo..hi`, or-ed.
    /// (A planned run's: the whole run's kinds, every one of them checked
    /// against the plan.)
    fn bits(&self, col: usize, lo: usize, hi: usize) -> PyResult<u8> {
        guarded(&mut false, || {
            if !self.typed.is_empty() {
                return Ok(self.columns.bits(col, 0, usize::MAX));
            }
            Ok(self.columns.bits(col, lo, hi))
        })
    }

    /// Column `col`, rows `lo..hi`, as an Arrow array (an
    /// [`ArrowColumn`], which Polars and pyarrow import through the
    /// PyCapsule interface, no copy): `"int64"`, `"float64"`, `"bool"`,
    /// `"views"` (the strings as string views: short ones inline, long
    /// ones in one buffer of their own, so a frame does not hold on to the
    /// run), `"raw"` (views too, numbers as their tokens, not their
    /// canonical text: see `Layout::Tokens`) and `"tokens"` (the reference's raw tokens as strings with i32
    /// offsets, quoted cells marked).  The caller has
    /// checked that the cells' kinds fit.  Made without the GIL.
    fn arrow(
        &self,
        py: Python<'_>,
        col: usize,
        lo: usize,
        hi: usize,
        kind: &str,
    ) -> PyResult<ArrowColumn> {
        if let Some(Some(e)) = self.typed.get(col) {
            if e.kind == kind {
                let hi = hi.min(self.columns.rows());
                let lo = lo.min(hi);
                let below = |r: usize| e.nulls.partition_point(|&n| (n as usize) < r);
                let nulls = below(hi) - below(lo);
                return Ok(ArrowColumn::slice(
                    e.format,
                    lo,
                    hi - lo,
                    nulls,
                    e.buffers.clone(),
                ));
            }
        }
        let c = self.cells(py)?;
        let data = self
            .data
            .bind(py)
            .as_bytes()
            .get(self.start..self.end)
            .unwrap_or(&[]);
        let delim = self.delim;
        // (rows past the run's, or a column past its width, are none)
        let len = c.len(col, lo, hi);
        let fixed = |f: Fixed, format| {
            let mut values = vec![0u8; len * f.width()];
            c.write_fixed(data, col, lo, hi, f, &mut values);
            let (validity, nulls) = c.nulls(col, lo, hi);
            (
                format,
                nulls,
                vec![Buffer::validity(validity), Buffer::bytes(values)],
            )
        };
        let made = guarded(&mut false, || {
            Ok(py.detach(|| match kind {
                "int64" => Ok(fixed(Fixed::Int64, c"l")),
                "float64" => Ok(fixed(Fixed::Float64, c"g")),
                "decimal128" => Ok(fixed(Fixed::Decimal128, c"d:38,0")),
                "bool" => {
                    let b = c.boolean(col, lo, hi);
                    let buffers = vec![Buffer::validity(b.validity), Buffer::bytes(b.values)];
                    Ok((c"b", b.nulls, buffers))
                }
                "views" | "raw" => {
                    let mut long = Vec::new();
                    let mut views = vec![0u8; len * 16];
                    if !c.write_views(data, col, lo..hi, &mut views, &mut long, kind == "raw") {
                        // (not met: see `number_text`)
                        return Err("a cell whose text only the reference writes".into());
                    }
                    let (validity, nulls) = c.nulls(col, lo, hi);
                    // (one variadic buffer, then the int64 sizes of the variadic buffers)
                    let sizes = (long.len() as i64).to_ne_bytes().to_vec();
                    let buffers = vec![
                        Buffer::validity(validity),
                        Buffer::bytes(views),
                        Buffer::bytes(long),
                        Buffer::bytes(sizes),
                    ];
                    Ok((c"vu", nulls, buffers))
                }
                "tokens" => {
                    let s = c.tokens(data, col, lo, hi, delim);
                    let buffers = vec![
                        Buffer::validity(s.validity),
                        Buffer::Offsets(s.offsets),
                        Buffer::bytes(s.data),
                    ];
                    Ok((c"u", s.nulls, buffers))
                }
                _ => Err(format!("unknown column kind {kind:?}")),
            }))
        })?;
        py.check_signals()?;
        let (format, nulls, buffers) = made.map_err(PyValueError::new_err)?;
        Ok(ArrowColumn::new(format, len, nulls, buffers))
    }
}

/// The entry keys of a keyed table, for the strict duplicate check (§14.3):
/// the decoder's own (`key in keys`, `keys.add(key)`, for the entry rows it
/// reads) and the frame reader's runs (`take`), in one set, with no Python
/// object kept per key.
///
/// ```python
/// keys = _native.KeySet()
/// keys.add("a"); "a" in keys           # True
/// keys.take((run, 0, run.rows))        # the run's keys up to the first duplicate: how many
/// ```
#[pyclass(module = "toonstream._native")]
#[derive(Default)]
pub(crate) struct KeySet {
    keys: Keys,
}

/// A set of byte strings kept in one buffer (no allocation per key),
/// indexed by their hashes ([`KeyIndex`]).
#[derive(Default)]
struct Keys {
    index: KeyIndex,
    bytes: Vec<u8>,
    /// Key `i` is `bytes[ends[i - 1]..ends[i]]` (from 0 for the first).
    ends: Vec<usize>,
}

impl Keys {
    fn key(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    fn contains(&self, key: &[u8]) -> bool {
        self.index
            .find(self.index.hash(key), |i| self.key(i) == key)
    }

    /// Add `key`; false if it was there.
    fn insert(&mut self, key: &[u8]) -> bool {
        let h = self.index.hash(key);
        if self.index.find(h, |i| self.key(i) == key) {
            return false;
        }
        self.index.add(h, self.ends.len());
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
        true
    }

    fn len(&self) -> usize {
        self.ends.len()
    }
}

/// A key's UTF-8 bytes (a lone surrogate, which no decoded key holds, as
/// `surrogatepass` writes it: it then matches no run's key).
fn key_bytes(key: &Bound<'_, PyString>) -> PyResult<Box<[u8]>> {
    Ok(match key.to_str() {
        Ok(s) => s.as_bytes().into(),
        Err(_) => key
            .call_method1("encode", ("utf-8", "surrogatepass"))?
            .extract::<Vec<u8>>()?
            .into(),
    })
}

#[pymethods]
impl KeySet {
    #[new]
    fn new() -> KeySet {
        KeySet::default()
    }

    fn __contains__(&self, key: &Bound<'_, PyString>) -> PyResult<bool> {
        Ok(self.keys.contains(&key_bytes(key)?))
    }

    fn add(&mut self, key: &Bound<'_, PyString>) -> PyResult<()> {
        self.keys.insert(&key_bytes(key)?);
        Ok(())
    }

    fn __len__(&self) -> usize {
        self.keys.len()
    }

    /// `keys` = `(run, lo, hi)`: add the entry keys of plain rows `lo..hi`
    /// of `run` (a keyed table's `TableColumns`) up to the first that is a
    /// duplicate (of a key held, or of an earlier one of them); return how
    /// many it added.
    fn take(
        &mut self,
        py: Python<'_>,
        keys: (PyRef<'_, TableColumns>, usize, usize),
    ) -> PyResult<usize> {
        guarded(&mut false, || {
            let (run, lo, hi) = keys;
            let data = run.run(py);
            let hi = hi.min(run.columns.rows());
            self.keys.index.reserve(hi.saturating_sub(lo));
            for r in lo..hi {
                if !self.keys.insert(run.columns.key(data, r)) {
                    return Ok(r - lo);
                }
            }
            Ok(hi.saturating_sub(lo))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_sets() {
        let mut keys = Keys::default();
        let words: [&[u8]; 6] = [b"a", b"b", b"", b"ab", b"\xc3\xa9", b"b"];
        let want = [true, true, true, true, true, false];
        for (w, fresh) in words.iter().zip(want) {
            assert_eq!(keys.insert(w), fresh);
        }
        for w in words.iter().chain([&&b"c"[..], &&b"ba"[..]]) {
            assert_eq!(keys.contains(w), words.contains(w), "{w:?}");
        }
        assert_eq!(keys.len(), 5);
    }
}
