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

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};
use toonstream_native::{Cells, FieldOp, Scalar, Sink, Table};

use crate::builder::{scalar_object, BindError, Builder, Shape, Ticker};
use crate::push::{collect_into_out, push_class, Collect, Push};
use crate::pystr::new_str;
use toonstream_native::prefix::{value_prefix, Kind, Scope};

static DECODE_ERROR: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();
static FIELD: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();
static START_TABLE: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();

/// A matching table: how its rows are made.
struct Mark {
    /// The column order (`expect_fields` in another order); None: header order.
    order: Option<Vec<usize>>,
    /// With `as_dict`: the header's row shape (as values are built).
    shape: Option<Arc<Shape>>,
}

pub(crate) struct State {
    scopes: Vec<Scope<Option<Mark>>>,
    target: Option<String>,
    as_dict: bool,
    key_field: Py<PyString>,
    /// (None once `__clear__` ran: the decoder is unreachable then)
    header: Option<Py<PyAny>>,
    /// row dicts (`as_dict`) are made as the value builder makes them
    builder: Builder,
    out: Vec<Py<PyAny>>,
    ticker: Ticker,
    /// The driver refused the input (the value at the target is not a
    /// table, or the header callback raised).  The rest of the line is still
    /// decoded, events ignored: as on the Python engine, which sees a line's
    /// events after the whole line, a decode error on the same line wins.
    refused: Option<Refusal>,
    /// The depth of scopes while an empty array at the target (`[]`,
    /// `[0]:`) is open: a table of no rows, while it has no item (a
    /// non-strict decoder takes items past the declared 0).
    empty_at: Option<usize>,
}

enum Refusal {
    /// made once the line is done, with its number
    NotTabular,
    Raised(PyErr),
}

pub(crate) struct RowSink<'a, 'py> {
    py: Python<'py>,
    s: &'a mut State,
}

impl<'py> RowSink<'_, 'py> {
    #[inline]
    fn tick(&mut self) -> Result<(), BindError> {
        Ok(self.s.ticker.tick(self.py)?)
    }

    fn value_prefix(&self) -> &str {
        value_prefix(&self.s.scopes)
    }

    fn at_target(&self) -> bool {
        self.s.target.as_deref() == Some(self.value_prefix())
    }

    fn refuse(&mut self) -> Result<(), BindError> {
        self.s.refused = Some(Refusal::NotTabular);
        Ok(())
    }

    /// Inside an empty array at the target (see `State::empty_at`).
    fn in_empty(&self) -> bool {
        self.s.empty_at == Some(self.s.scopes.len())
    }

    /// A value that is no table opens: at the target, a refusal, but for an
    /// empty array (`key: []`, `[0]:`), a table of no rows.
    fn open(&mut self, kind: Kind, empty: bool) -> Result<(), BindError> {
        let at_target = self.at_target();
        if self.in_empty() || (at_target && !empty) {
            return self.refuse();
        }
        let vp = self.value_prefix().to_string();
        let root = self.s.scopes.is_empty();
        self.s.scopes.push(Scope::new(kind, vp, root, None));
        if at_target {
            self.s.empty_at = Some(self.s.scopes.len());
        }
        Ok(())
    }

    fn cells(
        &self,
        cells: &Cells<'_>,
        order: Option<&[usize]>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let pf = self.s.builder.parse_float();
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

    /// The Python `StartTable` event for a header (what the driver's callback takes).
    fn start_table_event(&self, table: &Table<'_>) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let field = FIELD.import(py, "toonstream._reference.events", "Field")?;
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
            .import(py, "toonstream._reference.events", "StartTable")?
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
        let Some(header) = &self.s.header else {
            // (only an unreachable decoder is cleared: no call can get here)
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "toonstream._native: this decoder was cleared",
            ));
        };
        let order = header.bind(py).call1((ev,))?;
        let order: Option<Vec<usize>> = order.extract()?;
        let shape = self
            .s
            .as_dict
            .then(|| self.s.builder.shape(py, table.fields));
        Ok(Mark { order, shape })
    }
}

impl Sink for RowSink<'_, '_> {
    type Error = BindError;

    fn start_object(&mut self) -> Result<(), BindError> {
        self.open(Kind::Map, false)
    }

    fn end_object(&mut self) -> Result<(), BindError> {
        self.s.scopes.pop();
        Ok(())
    }

    fn key(&mut self, key: &str) -> Result<(), BindError> {
        self.tick()?;
        if let Some(top) = self.s.scopes.last_mut() {
            top.set_key(key);
        }
        Ok(())
    }

    fn scalar(&mut self, _value: Scalar<'_>) -> Result<(), BindError> {
        self.tick()?;
        if self.s.refused.is_none() && (self.at_target() || self.in_empty()) {
            return self.refuse();
        }
        Ok(())
    }

    fn start_array(&mut self, declared: u64) -> Result<(), BindError> {
        self.open(Kind::Array, declared == 0)
    }

    fn values(&mut self, values: &Cells<'_>) -> Result<(), BindError> {
        self.tick()?;
        if self.s.refused.is_none() && self.in_empty() && !values.is_empty() {
            return self.refuse();
        }
        Ok(())
    }

    fn end_array(&mut self) -> Result<(), BindError> {
        if self.in_empty() {
            self.s.empty_at = None;
        }
        self.s.scopes.pop();
        Ok(())
    }

    fn start_table(&mut self, table: &Table<'_>) -> Result<(), BindError> {
        if self.in_empty() {
            return self.refuse();
        }
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
            None,
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
        let row = match &mark.shape {
            Some(shape) => self.s.builder.row(py, shape, cells)?.into_any(),
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
        let k = new_str(py, key);
        let row = match &mark.shape {
            Some(shape) => {
                let d = PyDict::new(py);
                d.set_item(self.s.key_field.bind(py), k)?;
                // (the row's fields after the key: a field named like the
                // key field overwrites it, as `d.update(row)` does)
                let row = self.s.builder.row(py, shape, cells)?;
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
/// error is raised by the next call (see [`Push`]).
#[pyclass(module = "toonstream._native")]
pub struct RowDecoder(Push<State>);

push_class!(
    RowDecoder,
    "rows",
    #[new]
    #[pyo3(signature = (prefix, *, header, as_dict=false, key_field=None, **options))]
    fn new(
        py: Python<'_>,
        prefix: Option<String>,
        header: Py<PyAny>,
        as_dict: bool,
        key_field: Option<Py<PyString>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let (decoder, parse_float) = crate::decoder(options)?;
        Ok(RowDecoder(Push::new(
            decoder,
            State {
                scopes: Vec::new(),
                target: prefix,
                as_dict,
                key_field: key_field.unwrap_or_else(|| PyString::new(py, "key").unbind()),
                header: Some(header),
                builder: Builder::new(parse_float),
                out: Vec::new(),
                ticker: Ticker::default(),
                refused: None,
                empty_at: None,
            },
        )))
    }
);

impl Collect for State {
    collect_into_out!(RowSink);

    fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.header)?;
        self.builder.traverse(visit)
    }

    fn clear(&mut self) {
        self.header = None;
        self.builder.clear();
    }

    fn refusal(&mut self, py: Python<'_>, line: u64, text: &str) -> Option<PyErr> {
        Some(match self.refused.take()? {
            Refusal::NotTabular => self.not_tabular(py, line, text),
            Refusal::Raised(e) => e,
        })
    }
}

impl State {
    /// The rows driver's own error for a non-tabular value at the prefix,
    /// at the line the core stopped on (the value's line, `text`).
    fn not_tabular(&self, py: Python<'_>, line: u64, text: &str) -> PyErr {
        let target = self.target.clone().unwrap_or_default();
        let made = (|| -> PyResult<PyErr> {
            let cls = DECODE_ERROR.import(py, "toonstream._errors", "ToonDecodeError")?;
            let message = format!(
                "the value at prefix {} is not a tabular array or keyed table",
                PyString::new(py, &target).repr()?
            );
            let kwargs = PyDict::new(py);
            kwargs.set_item("code", "not_tabular")?;
            kwargs.set_item("line", line.max(1))?;
            kwargs.set_item("column", 1)?;
            kwargs.set_item("line_text", text)?;
            Ok(PyErr::from_value(cls.call((message,), Some(&kwargs))?))
        })();
        made.unwrap_or_else(|err| err)
    }
}
