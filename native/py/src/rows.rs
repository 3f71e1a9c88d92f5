//! The rows reader: a [`Sink`] that makes `toonstream.rows()`'s row tuples
//! (or dicts, with `as_dict`) straight from the core's row calls, for the
//! tables at one ijson prefix.  No per-cell events and no row dicts for
//! tuples: one tuple per row.
//!
//! The prefix rules are the Python rows driver's (`_RowsAdapter` and
//! `_Scope` in `toonstream/decoder.py`): an object member's prefix is
//! `parent.key` (`key` in the root object), an array element's
//! `parent.item`; a target of `None` is the root table, else the root
//! object's first tabular member.  What a matching header means (the
//! schema-drift check, `columns`, `fields`) stays in Python: the driver's
//! header callback is called once per matching header and returns the
//! column order (`None`: header order).
//!
//! ```python
//! r = _native.RowDecoder("t", header=lambda table: None)
//! r.feed(b"t[2]{a,b}:\n  1,x\n  2,y\n");  r.close()   # [(1, 'x'), (2, 'y')]
//! ```

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use toonstream_native::{Cells, Decoder, FieldOp, Scalar, Sink, Table};

use crate::builder::{scalar_object, BindError};
use crate::{chunk, guarded, options};

static DECODE_ERROR: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();
static FIELD: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();
static START_TABLE: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();

/// How often (in sink calls) the reader lets Python run signal handlers.
const SIGNAL_EVERY: u32 = 1024;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Map,
    Array,
    Table,
    Keyed,
}

/// A matching table: how its rows are made.
struct Mark {
    /// The column order (`expect_fields` in another order); None: header order.
    order: Option<Vec<usize>>,
    /// With `as_dict`: the header's field ops with their names as `str`.
    ops: Option<Vec<Op>>,
}

enum Op {
    Leaf(Py<PyString>),
    Open(Py<PyString>),
    Close,
}

/// An open container, as `_Scope` sees it.
struct Scope {
    kind: Kind,
    prefix: String,
    root: bool,
    /// The prefix of the next child value.
    child: String,
    mark: Option<Mark>,
}

impl Scope {
    fn new(kind: Kind, prefix: String, root: bool) -> Self {
        let child = if matches!(kind, Kind::Array | Kind::Table) {
            if prefix.is_empty() {
                "item".to_string()
            } else {
                format!("{prefix}.item")
            }
        } else {
            prefix.clone()
        };
        Scope {
            kind,
            prefix,
            root,
            child,
            mark: None,
        }
    }

    fn key(&self, name: &str) -> String {
        if self.root {
            format!("{}{name}", self.prefix)
        } else {
            format!("{}.{name}", self.prefix)
        }
    }
}

struct State {
    scopes: Vec<Scope>,
    target: Option<String>,
    as_dict: bool,
    key_field: Py<PyString>,
    header: Py<PyAny>,
    parse_float: Option<Py<PyAny>>,
    out: Vec<Py<PyAny>>,
    calls: u32,
    /// The driver refused the input (the value at the target is not a
    /// table, or the header callback raised).  The rest of the line is still
    /// decoded, events ignored: as on the Python engine, which sees a line's
    /// events after the whole line, a decode error on the same line wins.
    refused: Option<Refusal>,
}

enum Refusal {
    /// made once the line is done, with its number
    NotTabular,
    Raised(PyErr),
}

struct RowSink<'a, 'py> {
    py: Python<'py>,
    s: &'a mut State,
}

impl<'py> RowSink<'_, 'py> {
    #[inline]
    fn tick(&mut self) -> Result<(), BindError> {
        self.s.calls += 1;
        if self.s.calls >= SIGNAL_EVERY {
            self.s.calls = 0;
            self.py.check_signals()?;
        }
        Ok(())
    }

    fn value_prefix(&self) -> &str {
        self.s.scopes.last().map_or("", |s| s.child.as_str())
    }

    fn at_target(&self) -> bool {
        self.s.target.as_deref() == Some(self.value_prefix())
    }

    fn refuse(&mut self) -> Result<(), BindError> {
        self.s.refused = Some(Refusal::NotTabular);
        Ok(())
    }

    fn open(&mut self, kind: Kind) -> Result<(), BindError> {
        if self.at_target() {
            return self.refuse();
        }
        let vp = self.value_prefix().to_string();
        let root = self.s.scopes.is_empty();
        self.s.scopes.push(Scope::new(kind, vp, root));
        Ok(())
    }

    fn cells(
        &self,
        cells: &Cells<'_>,
        order: Option<&[usize]>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let pf = self.s.parse_float.as_ref();
        let mut v: Vec<Bound<'py, PyAny>> = Vec::with_capacity(cells.len() + 1);
        match order {
            None => {
                for c in cells.iter() {
                    v.push(scalar_object(self.py, pf, c)?);
                }
            }
            Some(order) => {
                for &i in order {
                    let c = cells.get(i).unwrap_or(Scalar::Null);
                    v.push(scalar_object(self.py, pf, c)?);
                }
            }
        }
        Ok(v)
    }

    /// A row's dict by the header's ops: a leaf takes the next cell (`None`
    /// past the row's end), a group opens a nested dict (as `row_maker`).
    fn dict(
        &self,
        ops: &[Op],
        cells: &Cells<'_>,
        top: Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let py = self.py;
        let pf = self.s.parse_float.as_ref();
        let mut next = cells.iter();
        let mut stack: Vec<(Bound<'py, PyDict>, Option<&Py<PyString>>)> = vec![(top, None)];
        for op in ops {
            match op {
                Op::Leaf(k) => {
                    let v = match next.next() {
                        Some(c) => scalar_object(py, pf, c)?,
                        None => py.None().into_bound(py),
                    };
                    if let Some((d, _)) = stack.last() {
                        d.set_item(k.bind(py), v)?;
                    }
                }
                Op::Open(k) => stack.push((PyDict::new(py), Some(k))),
                Op::Close => close_group(py, &mut stack)?,
            }
        }
        while stack.len() > 1 {
            close_group(py, &mut stack)?;
        }
        Ok(match stack.pop() {
            Some((d, _)) => d,
            None => PyDict::new(py),
        })
    }

    /// The Python `StartTable` event for a header (what the driver's callback takes).
    fn start_table_event(&self, table: &Table<'_>) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let field = FIELD.import(py, "toonstream._events", "Field")?;
        // (name, children) of each open group; the bottom one is the header
        let mut stack: Vec<(Option<&str>, Vec<Bound<'py, PyAny>>)> = vec![(None, Vec::new())];
        for op in table.fields {
            match op {
                FieldOp::Leaf(name) => {
                    let f = field.call1((name.as_str(),))?;
                    if let Some((_, kids)) = stack.last_mut() {
                        kids.push(f);
                    }
                }
                FieldOp::Open(name) => stack.push((Some(name.as_str()), Vec::new())),
                FieldOp::Close => {
                    if stack.len() > 1 {
                        if let Some((Some(name), kids)) = stack.pop() {
                            let f = field.call1((name, PyTuple::new(py, kids)?))?;
                            if let Some((_, parent)) = stack.last_mut() {
                                parent.push(f);
                            }
                        }
                    }
                }
            }
        }
        let fields = match stack.into_iter().next() {
            Some((_, kids)) => PyTuple::new(py, kids)?,
            None => PyTuple::empty(py),
        };
        let delimiter = char::from(table.delimiter).to_string();
        START_TABLE
            .import(py, "toonstream._events", "StartTable")?
            .call1((
                fields,
                table.declared,
                table.keyed,
                delimiter,
                table.width,
                table.line,
                table.line_text,
            ))
    }

    fn matched(&mut self, table: &Table<'_>) -> PyResult<Mark> {
        let py = self.py;
        let ev = self.start_table_event(table)?;
        let order = self.s.header.bind(py).call1((ev,))?;
        let order: Option<Vec<usize>> = order.extract()?;
        let ops = if self.s.as_dict {
            Some(
                table
                    .fields
                    .iter()
                    .map(|op| match op {
                        FieldOp::Leaf(n) => Op::Leaf(PyString::new(py, n).unbind()),
                        FieldOp::Open(n) => Op::Open(PyString::new(py, n).unbind()),
                        FieldOp::Close => Op::Close,
                    })
                    .collect(),
            )
        } else {
            None
        };
        Ok(Mark { order, ops })
    }
}

fn close_group<'py>(
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

impl Sink for RowSink<'_, '_> {
    type Error = BindError;

    fn start_object(&mut self) -> Result<(), BindError> {
        self.open(Kind::Map)
    }

    fn end_object(&mut self) -> Result<(), BindError> {
        self.s.scopes.pop();
        Ok(())
    }

    fn key(&mut self, key: &str) -> Result<(), BindError> {
        self.tick()?;
        if let Some(top) = self.s.scopes.last_mut() {
            top.child = top.key(key);
        }
        Ok(())
    }

    fn scalar(&mut self, _value: Scalar<'_>) -> Result<(), BindError> {
        self.tick()?;
        if self.s.refused.is_none() && self.at_target() {
            return self.refuse();
        }
        Ok(())
    }

    fn start_array(&mut self, _declared: u64) -> Result<(), BindError> {
        self.open(Kind::Array)
    }

    fn values(&mut self, _values: &Cells<'_>) -> Result<(), BindError> {
        self.tick()
    }

    fn end_array(&mut self) -> Result<(), BindError> {
        self.s.scopes.pop();
        Ok(())
    }

    fn start_table(&mut self, table: &Table<'_>) -> Result<(), BindError> {
        let vp = self.value_prefix().to_string();
        let root = self.s.scopes.is_empty();
        let mut scope = Scope::new(
            if table.keyed {
                Kind::Keyed
            } else {
                Kind::Table
            },
            vp.clone(),
            root,
        );
        let scopes = &self.s.scopes;
        if self.s.target.is_none()
            && (scopes.is_empty() || (scopes.len() == 1 && scopes[0].kind == Kind::Map))
        {
            // Auto target: the root table, else the root object's first tabular member.
            self.s.target = Some(vp.clone());
        }
        if self.s.target.as_deref() == Some(vp.as_str()) && self.s.refused.is_none() {
            match self.matched(table) {
                Ok(mark) => scope.mark = Some(mark),
                Err(e) => self.s.refused = Some(Refusal::Raised(e)),
            }
        }
        self.s.scopes.push(scope);
        Ok(())
    }

    fn row(&mut self, cells: &Cells<'_>) -> Result<(), BindError> {
        self.tick()?;
        let py = self.py;
        let Some(Some(mark)) = self.s.scopes.last().map(|s| s.mark.as_ref()) else {
            return Ok(());
        };
        if self.s.refused.is_some() {
            return Ok(());
        }
        let row = match &mark.ops {
            Some(ops) => self.dict(ops, cells, PyDict::new(py))?.into_any(),
            None => PyTuple::new(py, self.cells(cells, mark.order.as_deref())?)?.into_any(),
        };
        self.s.out.push(row.unbind());
        Ok(())
    }

    fn entry(&mut self, key: &str, cells: &Cells<'_>) -> Result<(), BindError> {
        self.tick()?;
        let py = self.py;
        let Some(Some(mark)) = self.s.scopes.last().map(|s| s.mark.as_ref()) else {
            return Ok(());
        };
        if self.s.refused.is_some() {
            return Ok(());
        }
        let k = PyString::new(py, key);
        let row = match &mark.ops {
            Some(ops) => {
                let d = PyDict::new(py);
                d.set_item(self.s.key_field.bind(py), k)?;
                // (the row's fields after the key: a field named like the
                // key field overwrites it, as `d.update(row)` does)
                let row = self.dict(ops, cells, PyDict::new(py))?;
                d.update(row.as_mapping())?;
                d.into_any()
            }
            None => {
                let mut v = vec![k.into_any()];
                v.extend(self.cells(cells, mark.order.as_deref())?);
                PyTuple::new(py, v)?.into_any()
            }
        };
        self.s.out.push(row.unbind());
        Ok(())
    }

    fn end_table(&mut self, _keyed: bool) -> Result<(), BindError> {
        self.s.scopes.pop();
        Ok(())
    }
}

/// The push decoder behind `toonstream.rows()` on the native engine: feed
/// chunks (bytes or str, split anywhere) and get the rows they complete;
/// `close()` gives the rest.  Rows decoded before an error come first: the
/// error is raised by the next call.
#[pyclass(module = "toonstream._native")]
pub struct RowDecoder {
    decoder: Decoder,
    state: State,
    broken: bool,
    pending: Option<PyErr>,
    closed: bool,
}

#[pymethods]
impl RowDecoder {
    #[new]
    #[pyo3(signature = (
        prefix, *, header, as_dict=false, key_field=None, indent_size=None, strict=None,
        parse_float=None, max_depth=None, max_line_length=None, max_number_length=None,
        max_fields=None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        prefix: Option<String>,
        header: Py<PyAny>,
        as_dict: bool,
        key_field: Option<Py<PyString>>,
        indent_size: Option<&Bound<'_, PyAny>>,
        strict: Option<&Bound<'_, PyAny>>,
        parse_float: Option<&Bound<'_, PyAny>>,
        max_depth: Option<&Bound<'_, PyAny>>,
        max_line_length: Option<&Bound<'_, PyAny>>,
        max_number_length: Option<&Bound<'_, PyAny>>,
        max_fields: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let o = options(
            indent_size,
            strict,
            parse_float,
            max_depth,
            max_line_length,
            max_number_length,
            max_fields,
            None,
        )?;
        let decoder = Decoder::new(o.options)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.0.to_string()))?;
        Ok(RowDecoder {
            decoder,
            state: State {
                scopes: Vec::new(),
                target: prefix,
                as_dict,
                key_field: key_field.unwrap_or_else(|| PyString::new(py, "key").unbind()),
                header,
                parse_float: o.parse_float,
                out: Vec::new(),
                calls: 0,
                refused: None,
            },
            broken: false,
            pending: None,
            closed: false,
        })
    }

    /// Add a chunk; returns the rows it completed.
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        chunk: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.check(py)?;
        let data = self::chunk(chunk)?;
        let (decoder, state) = (&mut self.decoder, &mut self.state);
        let r = guarded(&mut self.broken, || {
            let mut rest = data.bytes()?;
            // A line at a time, so that a refusal is raised once its line is done.
            while !rest.is_empty() && state.refused.is_none() {
                let n = rest
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(rest.len(), |i| i + 1);
                let (line, more) = rest.split_at(n);
                decoder
                    .feed(line, &mut RowSink { py, s: state })
                    .map_err(|e: BindError| e.into_py(py))?;
                rest = more;
            }
            Ok(())
        });
        self.finish(py, r)
    }

    /// End of input: the rest of the rows (the count checks run); `[]` once done.
    fn close<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.check(py)?;
        if self.closed {
            return Ok(PyList::empty(py));
        }
        let (decoder, state) = (&mut self.decoder, &mut self.state);
        let r = guarded(&mut self.broken, || {
            decoder
                .close(&mut RowSink { py, s: state })
                .map_err(|e: BindError| e.into_py(py))
        });
        let out = self.finish(py, r)?;
        self.closed = true;
        Ok(out)
    }
}

impl RowDecoder {
    fn check(&mut self, py: Python<'_>) -> PyResult<()> {
        if let Some(e) = &self.pending {
            return Err(e.clone_ref(py));
        }
        if self.broken {
            return Err(PyRuntimeError::new_err(
                "toonstream._native: this decoder failed with an internal error",
            ));
        }
        Ok(())
    }

    fn finish<'py>(&mut self, py: Python<'py>, r: PyResult<()>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::new(py, std::mem::take(&mut self.state.out))?;
        let e = match (r, self.state.refused.take()) {
            (Err(e), _) => e,
            (Ok(()), None) => return Ok(out),
            (Ok(()), Some(Refusal::NotTabular)) => self.not_tabular(py),
            (Ok(()), Some(Refusal::Raised(e))) => e,
        };
        // every later call raises this error again
        self.pending = Some(e.clone_ref(py));
        if out.is_empty() {
            Err(e)
        } else {
            Ok(out)
        }
    }

    /// The rows driver's own error for a non-tabular value at the prefix,
    /// at the line the core stopped on (the value's line).
    fn not_tabular(&self, py: Python<'_>) -> PyErr {
        let target = self.state.target.clone().unwrap_or_default();
        let made = (|| -> PyResult<PyErr> {
            let cls = DECODE_ERROR.import(py, "toonstream._errors", "ToonDecodeError")?;
            let message = format!(
                "the value at prefix {} is not a tabular array or keyed table",
                PyString::new(py, &target).repr()?
            );
            let kwargs = PyDict::new(py);
            kwargs.set_item("code", "not_tabular")?;
            kwargs.set_item("line", self.decoder.line().max(1))?;
            kwargs.set_item("column", 1)?;
            kwargs.set_item("line_text", "")?;
            Ok(PyErr::from_value(cls.call((message,), Some(&kwargs))?))
        })();
        made.unwrap_or_else(|err| err)
    }
}
