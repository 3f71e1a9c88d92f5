//! ijson's API on the native engine: `parse` triples and `items`/`kvitems`
//! values, made straight from the core's line-sized sink calls.
//!
//! - [`ParseDecoder`]: `(prefix, event, value)` triples, exactly as the
//!   Python engine's `_ParseAdapter` (and `ijson.parse`) gives them.  A
//!   table row's constant triples (`start_map`, each `map_key`, `end_map`)
//!   are made once per header and shared by every row; only the cells'
//!   triples are new.
//! - [`ItemsDecoder`]: the values at a prefix (`items`) or the members of
//!   the objects at a prefix (`kvitems`), as `_ItemsAdapter` does.  A value
//!   at the prefix is built by the value builder; rows outside the prefix
//!   make no Python objects at all.
//!
//! ```python
//! p = _native.ParseDecoder(parse_float=None)
//! p.feed(b"a[2]: 1,x\n") + p.close()
//! # [('', 'start_map', None), ('', 'map_key', 'a'), ('a', 'start_array', None),
//! #  ('a.item', 'number', 1), ('a.item', 'string', 'x'), ('a', 'end_array', None),
//! #  ('', 'end_map', None)]
//! i = _native.ItemsDecoder("t.item", kv=False)
//! i.feed(b"t[2]{id}:\n  1\n  2\n") + i.close()      # [{'id': 1}, {'id': 2}]
//! ```

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};
use toonstream_native::{Cells, FieldOp, Scalar, Sink, Table};

use crate::builder::{scalar_object, BindError, Builder, Shape, Ticker};
use crate::push::{collect_into_out, push_class, Collect, Push};
use crate::pystr::new_str;
use toonstream_native::prefix::{item_prefix, value_prefix, Kind, Scope};

// ------------------------------------------------------------------ parse

/// The event names, made once per decoder.
struct Names {
    start_map: Py<PyString>,
    end_map: Py<PyString>,
    start_array: Py<PyString>,
    end_array: Py<PyString>,
    map_key: Py<PyString>,
    null: Py<PyString>,
    boolean: Py<PyString>,
    number: Py<PyString>,
    string: Py<PyString>,
}

impl Names {
    fn new(py: Python<'_>) -> Self {
        let s = |t: &str| PyString::intern(py, t).unbind();
        Names {
            start_map: s("start_map"),
            end_map: s("end_map"),
            start_array: s("start_array"),
            end_array: s("end_array"),
            map_key: s("map_key"),
            null: s("null"),
            boolean: s("boolean"),
            number: s("number"),
            string: s("string"),
        }
    }
}

/// One step of a table row's triples.
enum Step {
    /// the same triple for every row (`start_map`, `map_key`, `end_map`)
    Const(Py<PyTuple>),
    /// the next cell, at this prefix
    Cell(Py<PyString>),
}

/// A tabular header's row program for `parse`.
struct RowSteps(Vec<Step>);

/// What `parse` keeps of a table scope.
#[derive(Clone)]
enum Rows {
    /// not a table
    None,
    /// a tabular array: its rows' program (its rows share one prefix)
    Steps(Arc<RowSteps>),
    /// a keyed table: its header (each entry has a prefix of its own)
    Fields(Arc<Vec<FieldOp>>),
}

/// What `parse` keeps of an open container: its prefix strings, made once.
struct Open {
    rows: Rows,
    prefix: Py<PyString>,
    /// the next child's prefix (an array's is fixed; a map's is set per key)
    child: Option<Py<PyString>>,
    /// keys read so far (a map's next key is first looked for at this index of its memo)
    keys: usize,
    /// its memo's index at its depth
    memo: usize,
}

/// A key of a memoized map: its `map_key` triple and its value's prefix.
struct KeyMemo {
    key: Box<str>,
    triple: Py<PyTuple>,
    child: Py<PyString>,
    child_text: String,
}

/// The last container opened at one depth, by prefix: its prefix `str`, its
/// start and end triples, its element prefix, its keys' triples and its
/// table program.  The same container shape in every list item (a record's
/// nested object, an order's line items) then costs no new prefix, key or
/// constant triple: only the values' triples are new.
struct Memo {
    kind: Kind,
    prefix: String,
    prefix_py: Py<PyString>,
    start: Py<PyTuple>,
    end: Py<PyTuple>,
    child: Option<Py<PyString>>,
    keys: Vec<KeyMemo>,
    /// a table's fields and row program
    steps: Option<(Vec<FieldOp>, Arc<RowSteps>)>,
}

/// Keys remembered per memoized map (a wider object makes the rest anew).
const MEMO_KEYS: usize = 64;
/// Containers remembered per depth (an order's customer object and its line items).
const MEMO_PER_DEPTH: usize = 8;

pub(crate) struct ParseState {
    scopes: Vec<Scope<Open>>,
    /// by depth (`scopes.len()` when the container opened); a scope's own
    /// memo is not replaced while it is open (nothing else opens at its depth)
    memo: Vec<Vec<Option<Memo>>>,
    /// buffers of closed scopes' prefixes, for reuse
    spare: Vec<String>,
    names: Names,
    /// prefix strings: the same prefix in every list item is one `str`
    prefixes: crate::builder::KeyCache,
    keys: crate::builder::KeyCache,
    root: Py<PyString>,
    parse_float: Option<Py<PyAny>>,
    out: Vec<Py<PyAny>>,
    ticker: Ticker,
}

pub(crate) struct ParseSink<'a, 'py> {
    py: Python<'py>,
    s: &'a mut ParseState,
}

impl<'py> ParseSink<'_, 'py> {
    fn triple(
        &mut self,
        prefix: &Py<PyString>,
        event: &Py<PyString>,
        value: Bound<'py, PyAny>,
    ) -> PyResult<()> {
        let py = self.py;
        let t = PyTuple::new(
            py,
            [
                prefix.bind(py).clone().into_any(),
                event.bind(py).clone().into_any(),
                value,
            ],
        )?;
        self.s.out.push(t.into_any().unbind());
        Ok(())
    }

    fn prefix(&mut self, p: &str) -> Bound<'py, PyString> {
        self.s.prefixes.get(self.py, p)
    }

    /// The next value's prefix as a `str`.
    fn value_prefix(&mut self) -> Py<PyString> {
        let py = self.py;
        match self.s.scopes.last() {
            None => self.s.root.clone_ref(py),
            Some(Scope {
                mark: Open { child: Some(c), .. },
                ..
            }) => c.clone_ref(py),
            // (a map's value before any key: the core never sends one)
            Some(scope) => {
                let c = scope.child.clone();
                self.prefix(&c).unbind()
            }
        }
    }

    /// Open a container at the current value prefix: its start triple, its
    /// scope, and the memo at its depth (kept when it had the same prefix
    /// and kind; the `rows` of a table are made by `rows` only on a miss).
    fn open(
        &mut self,
        kind: Kind,
        start: fn(&Names) -> &Py<PyString>,
        end: fn(&Names) -> &Py<PyString>,
        rows: impl FnOnce(&mut Self, &str, &mut Memo) -> PyResult<Rows>,
    ) -> PyResult<()> {
        let py = self.py;
        let depth = self.s.scopes.len();
        if self.s.memo.len() <= depth {
            self.s.memo.resize_with(depth + 1, Vec::new);
        }
        let vp = value_prefix(&self.s.scopes);
        let hit = self.s.memo[depth]
            .iter()
            .position(|m| matches!(m, Some(m) if m.kind == kind && m.prefix == vp));
        let mut prefix = self.s.spare.pop().unwrap_or_default();
        prefix.clear();
        prefix.push_str(value_prefix(&self.s.scopes));
        let at = match hit {
            Some(at) => at,
            None => {
                let vp_py = self.value_prefix();
                let none = py.None();
                let triple = |e: &Py<PyString>| -> PyResult<Py<PyTuple>> {
                    Ok(PyTuple::new(
                        py,
                        [
                            vp_py.clone_ref(py).into_any(),
                            e.clone_ref(py).into_any(),
                            none.clone_ref(py),
                        ],
                    )?
                    .unbind())
                };
                let (start, end) = (triple(start(&self.s.names))?, triple(end(&self.s.names))?);
                let child = matches!(kind, Kind::Array | Kind::Table)
                    .then(|| self.prefix(&item_prefix(&prefix)).unbind());
                let m = Some(Memo {
                    kind,
                    prefix: prefix.clone(),
                    prefix_py: vp_py,
                    start,
                    end,
                    child,
                    keys: Vec::new(),
                    steps: None,
                });
                let list = &mut self.s.memo[depth];
                if list.len() < MEMO_PER_DEPTH {
                    list.push(m);
                } else if let Some(last) = list.last_mut() {
                    *last = m;
                }
                list.len() - 1
            }
        };
        let mut memo = self.s.memo[depth].get_mut(at).and_then(Option::take);
        let r = (|| -> PyResult<_> {
            let Some(m) = &mut memo else {
                return Ok(None);
            };
            let rows = rows(self, &prefix, m)?;
            self.s.out.push(m.start.clone_ref(py).into_any());
            Ok(Some((
                rows,
                m.prefix_py.clone_ref(py),
                m.child.as_ref().map(|c| c.clone_ref(py)),
            )))
        })();
        if let Some(slot) = self.s.memo[depth].get_mut(at) {
            *slot = memo;
        }
        let Some((rows, prefix_py, child)) = r? else {
            return Ok(());
        };
        let mut child_text = self.s.spare.pop().unwrap_or_default();
        child_text.clear();
        if matches!(kind, Kind::Array | Kind::Table) {
            if prefix.is_empty() {
                child_text.push_str("item");
            } else {
                child_text.push_str(&prefix);
                child_text.push_str(".item");
            }
        } else {
            child_text.push_str(&prefix);
        }
        self.s.scopes.push(Scope {
            kind,
            prefix,
            root: depth == 0,
            child: child_text,
            mark: Open {
                rows,
                prefix: prefix_py,
                child,
                keys: 0,
                memo: at,
            },
        });
        Ok(())
    }

    /// [`Self::open`] for a map or an expanded array (no table program).
    fn open_plain(
        &mut self,
        kind: Kind,
        start: fn(&Names) -> &Py<PyString>,
        end: fn(&Names) -> &Py<PyString>,
    ) -> PyResult<()> {
        self.open(kind, start, end, |_, _, _| Ok(Rows::None))
    }

    fn close(&mut self, event: fn(&Names) -> &Py<PyString>) -> PyResult<()> {
        let py = self.py;
        let Some(scope) = self.s.scopes.pop() else {
            let e = event(&self.s.names).clone_ref(py);
            let root = self.s.root.clone_ref(py);
            return self.triple(&root, &e, py.None().into_bound(py));
        };
        let depth = self.s.scopes.len();
        let memo = self
            .s
            .memo
            .get(depth)
            .and_then(|l| l.get(scope.mark.memo)?.as_ref());
        match memo {
            // (the memo at a scope's depth is its own while it is open)
            Some(m) if m.prefix == scope.prefix => {
                self.s.out.push(m.end.clone_ref(py).into_any());
            }
            _ => {
                let e = event(&self.s.names).clone_ref(py);
                self.triple(&scope.mark.prefix, &e, py.None().into_bound(py))?;
            }
        }
        if self.s.spare.len() < 64 {
            self.s.spare.push(scope.prefix);
            self.s.spare.push(scope.child);
        }
        Ok(())
    }

    /// A cell's value and its event name (by the value's exact type, as the
    /// Python engine's `_kind` does: a `parse_float` result that is a str
    /// is a "string", any other non-builtin type a "number").
    fn cell(&self, s: Scalar<'_>) -> PyResult<(Bound<'py, PyAny>, Py<PyString>)> {
        let n = &self.s.names;
        let v = scalar_object(self.py, self.s.parse_float.as_ref(), s)?;
        let kind = match s {
            Scalar::Null => &n.null,
            Scalar::Bool(_) => &n.boolean,
            Scalar::Str(_) => &n.string,
            Scalar::Int(_) | Scalar::NegZero | Scalar::BigInt(_) => &n.number,
            Scalar::Float(_) if self.s.parse_float.is_none() => &n.number,
            Scalar::Float(_) => {
                if v.is_exact_instance_of::<PyString>() {
                    &n.string
                } else if v.is_exact_instance_of::<PyBool>() {
                    &n.boolean
                } else if v.is_none() {
                    &n.null
                } else {
                    &n.number
                }
            }
        };
        Ok((v, kind.clone_ref(self.py)))
    }

    fn scalar_at(&mut self, prefix: &Py<PyString>, s: Scalar<'_>) -> PyResult<()> {
        let (v, kind) = self.cell(s)?;
        self.triple(prefix, &kind, v)
    }

    /// The triples of one row (an object at `row_prefix`), op by op.
    fn row_triples(
        &mut self,
        row_prefix: &str,
        fields: &[FieldOp],
        cells: &Cells<'_>,
    ) -> PyResult<()> {
        let steps = self.steps(row_prefix, fields)?;
        self.run(&steps, cells)
    }

    fn run(&mut self, steps: &RowSteps, cells: &Cells<'_>) -> PyResult<()> {
        let py = self.py;
        let mut next = cells.iter();
        for step in &steps.0 {
            match step {
                Step::Const(t) => self.s.out.push(t.clone_ref(py).into_any()),
                Step::Cell(p) => {
                    // (a short row of a non-strict table: its missing cells are null)
                    let s = next.next().unwrap_or(Scalar::Null);
                    self.scalar_at(p, s)?;
                }
            }
        }
        Ok(())
    }

    /// A header's row program at `row_prefix`: rows are never the root, so
    /// every member prefix is dotted.
    fn steps(&mut self, row_prefix: &str, fields: &[FieldOp]) -> PyResult<RowSteps> {
        let py = self.py;
        let none = py.None().into_bound(py);
        let n = &self.s.names;
        let (start, end, key) = (
            n.start_map.clone_ref(py),
            n.end_map.clone_ref(py),
            n.map_key.clone_ref(py),
        );
        let konst =
            |p: &Bound<'py, PyString>, e: &Py<PyString>, v: Bound<'py, PyAny>| -> PyResult<Step> {
                Ok(Step::Const(
                    PyTuple::new(py, [p.clone().into_any(), e.bind(py).clone().into_any(), v])?
                        .unbind(),
                ))
            };
        let mut steps = Vec::with_capacity(2 * fields.len() + 2);
        let mut open: Vec<String> = vec![row_prefix.to_string()];
        let top = self.prefix(row_prefix);
        steps.push(konst(&top, &start, none.clone())?);
        for op in fields {
            match op {
                FieldOp::Leaf(name) | FieldOp::Open(name) => {
                    let p = open.last().cloned().unwrap_or_default();
                    let pp = self.prefix(&p);
                    steps.push(konst(&pp, &key, PyString::new(py, name).into_any())?);
                    let vp = format!("{p}.{name}");
                    let vpp = self.prefix(&vp);
                    if matches!(op, FieldOp::Leaf(_)) {
                        steps.push(Step::Cell(vpp.unbind()));
                    } else {
                        steps.push(konst(&vpp, &start, none.clone())?);
                        open.push(vp);
                    }
                }
                FieldOp::Close => {
                    if open.len() > 1 {
                        let p = open.pop().unwrap_or_default();
                        let pp = self.prefix(&p);
                        steps.push(konst(&pp, &end, none.clone())?);
                    }
                }
            }
        }
        // (a well-formed op list closes every group it opens)
        while let Some(p) = open.pop() {
            let pp = self.prefix(&p);
            steps.push(konst(&pp, &end, none.clone())?);
        }
        Ok(RowSteps(steps))
    }
}

impl Sink for ParseSink<'_, '_> {
    type Error = BindError;

    fn start_object(&mut self) -> Result<(), BindError> {
        Ok(self.open_plain(Kind::Map, |n| &n.start_map, |n| &n.end_map)?)
    }

    fn end_object(&mut self) -> Result<(), BindError> {
        Ok(self.close(|n| &n.end_map)?)
    }

    fn key(&mut self, key: &str) -> Result<(), BindError> {
        self.s.ticker.tick(self.py)?;
        let py = self.py;
        let depth = self.s.scopes.len().wrapping_sub(1);
        let Some(top) = self.s.scopes.last_mut() else {
            return Ok(());
        };
        let at = top.mark.keys;
        top.mark.keys += 1;
        // The memo at a scope's depth is its own while it is open: memos are
        // only replaced when a container opens, and none opens at the depth
        // of an open one.
        let at_memo = top.mark.memo;
        if let Some(Some(m)) = self.s.memo.get_mut(depth).and_then(|l| l.get_mut(at_memo)) {
            debug_assert_eq!(m.prefix, top.prefix);
            let found = match m.keys.get(at) {
                Some(k) if *k.key == *key => Some(at),
                _ => m.keys.iter().position(|k| *k.key == *key),
            };
            if let Some(i) = found {
                let k = &m.keys[i];
                top.child.clear();
                top.child.push_str(&k.child_text);
                top.mark.child = Some(k.child.clone_ref(py));
                self.s.out.push(k.triple.clone_ref(py).into_any());
                return Ok(());
            }
        }
        top.set_key(key);
        let child = self.s.prefixes.get(py, &top.child).unbind();
        let p = top.mark.prefix.clone_ref(py);
        top.mark.child = Some(child.clone_ref(py));
        let e = self.s.names.map_key.clone_ref(py);
        let k = self.s.keys.get(py, key).into_any();
        let triple = PyTuple::new(py, [p.into_any(), e.into_any(), k.unbind()])?.unbind();
        self.s.out.push(triple.clone_ref(py).into_any());
        if let Some(Some(m)) = self.s.memo.get_mut(depth).and_then(|l| l.get_mut(at_memo)) {
            if m.keys.len() < MEMO_KEYS {
                m.keys.push(KeyMemo {
                    key: key.into(),
                    triple,
                    child,
                    child_text: top.child.clone(),
                });
            }
        }
        Ok(())
    }

    fn scalar(&mut self, value: Scalar<'_>) -> Result<(), BindError> {
        self.s.ticker.tick(self.py)?;
        let p = self.value_prefix();
        Ok(self.scalar_at(&p, value)?)
    }

    fn start_array(&mut self, _declared: u64) -> Result<(), BindError> {
        Ok(self.open_plain(Kind::Array, |n| &n.start_array, |n| &n.end_array)?)
    }

    fn values(&mut self, values: &Cells<'_>) -> Result<(), BindError> {
        let p = self.value_prefix();
        for s in values.iter() {
            self.s.ticker.tick(self.py)?; // (a tick a value: Ctrl-C in one long inline array)
            self.scalar_at(&p, s)?;
        }
        Ok(())
    }

    fn end_array(&mut self) -> Result<(), BindError> {
        Ok(self.close(|n| &n.end_array)?)
    }

    fn start_table(&mut self, table: &Table<'_>) -> Result<(), BindError> {
        if table.keyed {
            let fields = Rows::Fields(Arc::new(table.fields.to_vec()));
            return Ok(self.open(
                Kind::Keyed,
                |n| &n.start_map,
                |n| &n.end_map,
                |_, _, _| Ok(fields),
            )?);
        }
        let fields = table.fields;
        Ok(self.open(
            Kind::Table,
            |n| &n.start_array,
            |n| &n.end_array,
            |sink, prefix, memo| {
                if let Some((f, steps)) = &memo.steps {
                    if f.as_slice() == fields {
                        return Ok(Rows::Steps(steps.clone()));
                    }
                }
                let steps = Arc::new(sink.steps(&item_prefix(prefix), fields)?);
                memo.steps = Some((fields.to_vec(), steps.clone()));
                Ok(Rows::Steps(steps))
            },
        )?)
    }

    fn row(&mut self, cells: &Cells<'_>) -> Result<(), BindError> {
        self.s.ticker.tick(self.py)?;
        let Some(Rows::Steps(steps)) = self.s.scopes.last().map(|s| s.mark.rows.clone()) else {
            return Ok(());
        };
        Ok(self.run(&steps, cells)?)
    }

    fn entry(&mut self, key: &str, cells: &Cells<'_>) -> Result<(), BindError> {
        self.s.ticker.tick(self.py)?;
        let py = self.py;
        let Some(top) = self.s.scopes.last() else {
            return Ok(());
        };
        let Rows::Fields(fields) = top.mark.rows.clone() else {
            return Ok(());
        };
        let (p, entry_prefix) = (top.mark.prefix.clone_ref(py), top.key(key));
        let e = self.s.names.map_key.clone_ref(py);
        let k = self.s.keys.get(py, key).into_any();
        self.triple(&p, &e, k)?;
        // An entry's prefix differs per key: its program is made per entry.
        Ok(self.row_triples(&entry_prefix, &fields, cells)?)
    }

    fn end_table(&mut self, keyed: bool) -> Result<(), BindError> {
        let end: fn(&Names) -> &Py<PyString> = if keyed {
            |n| &n.end_map
        } else {
            |n| &n.end_array
        };
        Ok(self.close(end)?)
    }
}

/// The push decoder behind `toonstream.parse()` on the native engine.
/// `parse_float` as for `loads` (the driver passes `Decimal` unless
/// `use_float`).  Triples decoded before an error come first: the error is
/// raised by the next call.
#[pyclass(module = "toonstream._native")]
pub struct ParseDecoder(Push<ParseState>);

push_class!(
    ParseDecoder,
    "triples",
    #[new]
    #[pyo3(signature = (**options))]
    fn new(py: Python<'_>, options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let (decoder, parse_float) = crate::decoder(options)?;
        Ok(ParseDecoder(Push::new(
            decoder,
            ParseState {
                scopes: Vec::new(),
                memo: Vec::new(),
                spare: Vec::new(),
                names: Names::new(py),
                prefixes: crate::builder::KeyCache::with_max_len(256),
                keys: crate::builder::KeyCache::new(),
                root: PyString::intern(py, "").unbind(),
                parse_float,
                out: Vec::new(),
                ticker: Ticker::default(),
            },
        )))
    }
);

impl Collect for ParseState {
    collect_into_out!(ParseSink);

    fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.parse_float)
    }

    fn clear(&mut self) {
        self.parse_float = None;
    }
}

// ------------------------------------------------------------------ items

/// What `items`/`kvitems` keep of an open container.
enum Mark {
    /// an object; `true`: at the target of `kvitems` (its members are output)
    Map(bool),
    Array,
    /// a table: its rows' shape, to build the rows that reach the target
    Table(Arc<Shape>),
}

pub(crate) struct ItemsState {
    scopes: Vec<Scope<Mark>>,
    target: String,
    kv: bool,
    /// `items` of arrays only (the frame readers' records): a value at the
    /// target that is an object's member (a key `item`, or one with dots,
    /// or a keyed table's entry) is not output but sets `ambiguous`, for
    /// the caller to read the input its own way
    array_items: bool,
    ambiguous: bool,
    /// `kvitems`: the key of the member being read
    key: Option<Py<PyString>>,
    /// builds each value at the target (reused: its key cache stays warm)
    builder: Builder,
    /// a value at the target is being built (every call goes to the builder)
    building: bool,
    out: Vec<Py<PyAny>>,
    ticker: Ticker,
}

pub(crate) struct ItemsSink<'a, 'py> {
    py: Python<'py>,
    s: &'a mut ItemsState,
}

impl<'py> ItemsSink<'_, 'py> {
    /// One output: a value, or `(key, value)` for `kvitems`.
    fn emit(&mut self, v: Bound<'py, PyAny>) -> PyResult<()> {
        let out = if self.s.kv {
            let k = match &self.s.key {
                Some(k) => k.bind(self.py).clone().into_any(),
                None => self.py.None().into_bound(self.py),
            };
            PyTuple::new(self.py, [k, v])?.into_any()
        } else {
            v
        };
        self.s.out.push(out.unbind());
        Ok(())
    }

    /// Whether the next value is output: a member of a `kvitems` target
    /// object, or (`items`) a value at the target.
    fn wanted(&mut self) -> bool {
        if self.s.kv {
            matches!(
                self.s.scopes.last(),
                Some(Scope {
                    mark: Mark::Map(true),
                    ..
                })
            )
        } else if value_prefix(&self.s.scopes) != self.s.target {
            false
        } else if self.s.array_items
            && !matches!(
                self.s.scopes.last(),
                Some(Scope {
                    mark: Mark::Array | Mark::Table(_),
                    ..
                })
            )
        {
            self.s.ambiguous = true;
            false
        } else {
            true
        }
    }

    /// After a call forwarded to the builder: output the value it finished.
    fn built(&mut self) -> PyResult<()> {
        if let Some(v) = self.s.builder.take_value() {
            self.s.building = false;
            self.emit(v.into_bound(self.py))?;
        }
        Ok(())
    }

    /// A container begins: build it if it is wanted, else follow it.
    fn open(&mut self, kind: Kind, mark: impl FnOnce(&mut Self) -> Mark) -> PyResult<bool> {
        if self.wanted() {
            self.s.building = true;
            return Ok(true);
        }
        let vp = value_prefix(&self.s.scopes).to_string();
        let root = self.s.scopes.is_empty();
        let m = mark(self);
        self.s.scopes.push(Scope::new(kind, vp, root, m));
        Ok(false)
    }

    /// Finished values (rows) at `at`: what of them is at the target (the
    /// Python engine's `_ItemsAdapter._values`).  `member`: `at` is an
    /// object's member (a keyed table's entry), not an array's item.
    fn values(&mut self, at: &str, v: Bound<'py, PyAny>, member: bool) -> PyResult<()> {
        let target = self.s.target.clone();
        if at == target {
            return self.found_at(v, member);
        }
        // Inside a row: the walk compares prefixes (never splits them), so
        // keys with dots match as in ijson.
        let mut todo: Vec<(String, Bound<'py, PyAny>, bool)> = vec![(at.to_string(), v, member)];
        while let Some((p, v, member)) = todo.pop() {
            if p == target {
                self.found_at(v, member)?;
            } else if target.len() > p.len()
                && target.starts_with(&p)
                && target.as_bytes()[p.len()] == b'.'
            {
                if let Ok(d) = v.cast::<PyDict>() {
                    let kids: Vec<_> = d.iter().collect();
                    for (k, sub) in kids.into_iter().rev() {
                        let k = k.cast::<PyString>()?.to_cow()?.into_owned();
                        todo.push((format!("{p}.{k}"), sub, true));
                    }
                } else if let Ok(l) = v.cast::<PyList>() {
                    let kids: Vec<_> = l.iter().collect();
                    for sub in kids.into_iter().rev() {
                        todo.push((format!("{p}.item"), sub, false));
                    }
                }
            }
        }
        Ok(())
    }

    /// A value at the target, `member` of an object or an array's item (see
    /// `array_items`).
    fn found_at(&mut self, v: Bound<'py, PyAny>, member: bool) -> PyResult<()> {
        if member && self.s.array_items && !self.s.kv {
            self.s.ambiguous = true;
            return Ok(());
        }
        self.found(v)
    }

    /// A value at the target: itself (`items`), or its members if it is an
    /// object (`kvitems`).
    fn found(&mut self, v: Bound<'py, PyAny>) -> PyResult<()> {
        if !self.s.kv {
            self.s.out.push(v.unbind());
            return Ok(());
        }
        if let Ok(d) = v.cast::<PyDict>() {
            if d.is_exact_instance_of::<PyDict>() {
                for (k, sub) in d.iter() {
                    self.s
                        .out
                        .push(PyTuple::new(self.py, [k, sub])?.into_any().unbind());
                }
            }
        }
        Ok(())
    }

    /// Whether finished values at `at` can hold the target (else no row
    /// objects need to be made).
    fn reaches(&self, at: &str) -> bool {
        let t = &self.s.target;
        t == at || (t.len() > at.len() && t.starts_with(at) && t.as_bytes()[at.len()] == b'.')
    }
}

/// Forward a call to the builder while a wanted value is being built.
macro_rules! building {
    ($self:ident, $call:ident ( $($arg:expr),* )) => {
        if $self.s.building {
            $self.s.builder.sink($self.py).$call($($arg),*)?;
            $self.built()?;
            return Ok(());
        }
    };
}

impl Sink for ItemsSink<'_, '_> {
    type Error = BindError;

    fn start_object(&mut self) -> Result<(), BindError> {
        building!(self, start_object());
        let target = self.s.kv && value_prefix(&self.s.scopes) == self.s.target;
        if self.open(Kind::Map, |_| Mark::Map(target))? {
            building!(self, start_object());
        }
        Ok(())
    }

    fn end_object(&mut self) -> Result<(), BindError> {
        building!(self, end_object());
        self.s.scopes.pop();
        Ok(())
    }

    fn key(&mut self, key: &str) -> Result<(), BindError> {
        building!(self, key(key));
        self.s.ticker.tick(self.py)?;
        if let Some(top) = self.s.scopes.last_mut() {
            top.set_key(key);
            if self.s.kv && matches!(top.mark, Mark::Map(true)) {
                self.s.key = Some(new_str(self.py, key).unbind());
            }
        }
        Ok(())
    }

    fn scalar(&mut self, value: Scalar<'_>) -> Result<(), BindError> {
        building!(self, scalar(value));
        self.s.ticker.tick(self.py)?;
        if self.wanted() {
            let v = scalar_object(self.py, self.s.builder.parse_float(), value)?;
            self.emit(v)?;
        }
        Ok(())
    }

    fn start_array(&mut self, declared: u64) -> Result<(), BindError> {
        building!(self, start_array(declared));
        if self.open(Kind::Array, |_| Mark::Array)? {
            building!(self, start_array(declared));
        }
        Ok(())
    }

    fn values(&mut self, values: &Cells<'_>) -> Result<(), BindError> {
        building!(self, values(values));
        self.s.ticker.tick(self.py)?;
        if !self.s.kv && value_prefix(&self.s.scopes) == self.s.target {
            for s in values.iter() {
                self.s.ticker.tick(self.py)?; // (a tick a value: Ctrl-C in one long inline array)
                let v = scalar_object(self.py, self.s.builder.parse_float(), s)?;
                self.s.out.push(v.unbind());
            }
        }
        Ok(())
    }

    fn end_array(&mut self) -> Result<(), BindError> {
        building!(self, end_array());
        self.s.scopes.pop();
        Ok(())
    }

    fn start_table(&mut self, table: &Table<'_>) -> Result<(), BindError> {
        building!(self, start_table(table));
        let kind = if table.keyed {
            Kind::Keyed
        } else {
            Kind::Table
        };
        let py = self.py;
        if self.open(kind, |me| Mark::Table(me.s.builder.shape(py, table.fields)))? {
            building!(self, start_table(table));
        }
        Ok(())
    }

    fn row(&mut self, cells: &Cells<'_>) -> Result<(), BindError> {
        building!(self, row(cells));
        self.s.ticker.tick(self.py)?;
        let Some(Scope {
            mark: Mark::Table(shape),
            child,
            ..
        }) = self.s.scopes.last()
        else {
            return Ok(());
        };
        if !self.reaches(child) {
            return Ok(());
        }
        let (shape, at) = (shape.clone(), child.clone());
        let row = self.s.builder.row(self.py, &shape, cells)?;
        Ok(self.values(&at, row.into_any(), false)?)
    }

    fn entry(&mut self, key: &str, cells: &Cells<'_>) -> Result<(), BindError> {
        building!(self, entry(key, cells));
        self.s.ticker.tick(self.py)?;
        let Some(top) = self.s.scopes.last() else {
            return Ok(());
        };
        let Mark::Table(shape) = &top.mark else {
            return Ok(());
        };
        let py = self.py;
        let shape = shape.clone();
        if self.s.kv && top.prefix == self.s.target {
            let row = self.s.builder.row(py, &shape, cells)?;
            let t = PyTuple::new(py, [new_str(py, key).into_any(), row.into_any()])?;
            self.s.out.push(t.into_any().unbind());
            return Ok(());
        }
        let at = top.key(key);
        if self.s.target.starts_with(top.prefix.as_str()) && self.reaches(&at) {
            let row = self.s.builder.row(py, &shape, cells)?;
            self.values(&at, row.into_any(), true)?;
        }
        Ok(())
    }

    fn end_table(&mut self, keyed: bool) -> Result<(), BindError> {
        building!(self, end_table(keyed));
        self.s.scopes.pop();
        Ok(())
    }
}

/// The push decoder behind `toonstream.items()` (`kv=False`) and
/// `kvitems()` (`kv=True`) on the native engine: each call returns the
/// values (or `(key, value)` pairs) it completed.
#[pyclass(module = "toonstream._native")]
pub struct ItemsDecoder(Push<ItemsState>);

// (not formatted: rustfmt would put a comma between the two methods given)
#[rustfmt::skip]
push_class!(
    ItemsDecoder,
    "values",
    #[new]
    #[pyo3(signature = (prefix, *, kv, array_items = false, **options))]
    fn new(
        prefix: String,
        kv: bool,
        array_items: bool,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let (decoder, parse_float) = crate::decoder(options)?;
        Ok(ItemsDecoder(Push::new(
            decoder,
            ItemsState {
                scopes: Vec::new(),
                target: prefix,
                kv,
                array_items,
                ambiguous: false,
                key: None,
                builder: Builder::new(parse_float),
                building: false,
                out: Vec::new(),
                ticker: Ticker::default(),
            },
        )))
    }
    /// An `array_items` decoder met a value at its target that is an
    /// object's member, which it left out (see `ItemsState::array_items`).
    #[getter]
    fn ambiguous(&self) -> bool {
        self.0.state.ambiguous
    }
);

impl Collect for ItemsState {
    collect_into_out!(ItemsSink);

    fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.builder.traverse(visit)
    }

    fn clear(&mut self) {
        self.builder.clear();
    }
}
