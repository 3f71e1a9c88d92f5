//! JSON Lines bytes to TOON list items with no Python objects in between:
//! `encode_jsonl`'s pass two for records that are not one flat table.
//! Each line is parsed into the core's [`Doc`] (numbers already in the
//! reference's text), and the encoder's one walk ([`crate::encode`]) reads
//! it through [`JsonModel`], so the shapes it writes (tables, keyed tables,
//! list items) are exactly those `list_items` writes for the values the
//! reference parses from the same lines.
//!
//! ```python
//! >>> _native.jsonl_items(b'{"a": 1, "b": [1, {"c": 2}]}\n\n3\n')
//! ('  - a: 1\n    b[2]:\n      - 1\n      - c: 2\n  - 3', 2, 3)
//! >>> _native.jsonl_items(b'{"a": NaN}\n') is NotImplemented
//! True
//! ```

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, Range};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use toonstream_native::format::{quote, unquoted_key, write_str_cell};
use toonstream_native::jsonl::blank;
use toonstream_native::jsontree::{Doc, Node};

use crate::encode::{options, Encoder, Kind, Model, Options, Stop, R};
use crate::jsonl::{line_feeds, on_two_threads};

/// A node id handed out as an object's member (the walk's borrowed item).
pub(crate) struct Id(usize);

impl Deref for Id {
    type Target = usize;
    #[inline]
    fn deref(&self) -> &usize {
        &self.0
    }
}

/// Objects with more members than this are looked up through an index.
const WIDE: usize = 32;

/// The parsed line as the encoder's [`Model`]: every handle is a node id.
pub(crate) struct JsonModel {
    doc: Doc,
    /// Where the last lookup by name found its member: rows hold their keys
    /// in the same order, so the next lookup starts there.
    hint: Cell<usize>,
    /// Per wide object (by node), its members by the hash of their key:
    /// a scan from the hint is quadratic in the width when the rows order
    /// their keys differently.  Built at an object's first lookup, for the
    /// line parsed last.
    wide: RefCell<HashMap<usize, HashMap<u64, Vec<usize>>>>,
}

impl JsonModel {
    fn new() -> Self {
        JsonModel {
            doc: Doc::new(),
            hint: Cell::new(0),
            wide: RefCell::new(HashMap::new()),
        }
    }

    /// Parse the next line (its root node), dropping the last one's.
    fn parse(&mut self, line: &str) -> R<usize> {
        self.wide.get_mut().clear();
        self.doc.parse(line).map_err(|_| Stop::Decline)
    }

    fn hash(text: &str) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        h.finish()
    }

    /// `get` in an object of more than [`WIDE`] members.
    fn get_wide(&self, start: usize, n: usize, d: usize, name: &str) -> Option<usize> {
        let mut wide = self.wide.borrow_mut();
        let index = wide.entry(d).or_insert_with(|| {
            let mut index: HashMap<u64, Vec<usize>> = HashMap::with_capacity(n);
            for i in 0..n {
                let (key, _) = self.doc.member(start, i);
                index
                    .entry(Self::hash(self.doc.str(key)))
                    .or_default()
                    .push(i);
            }
            index
        });
        let found = index.get(&Self::hash(name))?.iter().copied().find(|&i| {
            let (key, _) = self.doc.member(start, i);
            self.doc.str(key) == name
        })?;
        Some(self.doc.member(start, found).1)
    }

    #[inline]
    fn members(&self, d: usize) -> Range<usize> {
        match self.doc.node(d) {
            Node::Obj(r) => r.clone(),
            _ => 0..0,
        }
    }

    #[inline]
    fn items(&self, s: usize) -> Range<usize> {
        match self.doc.node(s) {
            Node::Arr(r) => r.clone(),
            _ => 0..0,
        }
    }
}

impl Model for JsonModel {
    type V = usize;
    type Item<'a> = Id;
    type K = usize;
    type D = usize;
    type S = usize;

    fn signals(&self) -> R<()> {
        Ok(()) // (no Python here: see `jsonl_items`)
    }

    #[inline]
    fn kind(&self, v: &usize) -> Kind {
        match self.doc.node(*v) {
            Node::Null => Kind::Null,
            Node::True | Node::False => Kind::Bool,
            // (any number kind: the text is written as it is)
            Node::Num(_) => Kind::Int,
            Node::Str(_) => Kind::Str,
            Node::Arr(_) => Kind::List,
            Node::Obj(_) => Kind::Dict,
        }
    }

    #[inline]
    fn prim(&mut self, out: &mut String, v: &usize, _kind: Kind, delim: u8) -> R<()> {
        match self.doc.node(*v) {
            Node::Str(_) => write_str_cell(out, self.doc.str(*v), delim),
            Node::Num(_) => out.push_str(self.doc.num(*v)),
            Node::True => out.push_str("true"),
            Node::False => out.push_str("false"),
            Node::Null => out.push_str("null"),
            Node::Arr(_) | Node::Obj(_) => return Err(Stop::Decline),
        }
        Ok(())
    }

    #[inline]
    fn key(&self, k: &usize) -> R<usize> {
        Ok(*k) // (an object's keys are string nodes)
    }

    #[inline]
    fn key_value<'k>(&self, k: &'k usize) -> &'k usize {
        k
    }

    #[inline]
    fn write_key(&mut self, out: &mut String, k: &usize) -> R<()> {
        let s = self.doc.str(*k);
        if unquoted_key(s) {
            out.push_str(s);
        } else {
            quote(out, s);
        }
        Ok(())
    }

    fn key_text<'s>(&'s self, k: &'s usize) -> R<&'s str> {
        Ok(self.doc.str(*k))
    }

    #[inline]
    fn same_key(&self, k: &usize, name: &usize) -> bool {
        *k == *name || self.doc.str(*k) == self.doc.str(*name)
    }

    #[inline]
    fn dict(&self, v: &usize) -> R<usize> {
        match self.doc.node(*v) {
            Node::Obj(_) => Ok(*v),
            _ => Err(Stop::Decline),
        }
    }

    #[inline]
    fn dict_len(&self, d: &usize) -> usize {
        self.members(*d).len() / 2
    }

    #[inline]
    fn dict_next(&self, d: &usize, pos: &mut isize) -> Option<(Id, Id)> {
        let r = self.members(*d);
        let i = usize::try_from(*pos).ok()?;
        if i >= r.len() / 2 {
            return None;
        }
        *pos += 1;
        let (k, v) = self.doc.member(r.start, i);
        Some((Id(k), Id(v)))
    }

    fn get(&self, d: &usize, k: &usize) -> R<Option<usize>> {
        let r = self.members(*d);
        let n = r.len() / 2;
        let name = self.doc.str(*k);
        if n > WIDE {
            return Ok(self.get_wide(r.start, n, *d, name));
        }
        let from = self.hint.get();
        for t in 0..n {
            let i = (from + t) % n;
            let (key, value) = self.doc.member(r.start, i);
            if self.doc.str(key) == name {
                self.hint.set(i);
                return Ok(Some(value));
            }
        }
        Ok(None)
    }

    #[inline]
    fn plain_keys(&self, _d: &usize) -> R<()> {
        Ok(()) // (JSON keys are strings)
    }

    #[inline]
    fn dict_id(&self, d: &usize) -> usize {
        *d
    }

    #[inline]
    fn seq(&self, v: &usize, _kind: Kind) -> R<usize> {
        match self.doc.node(*v) {
            Node::Arr(_) => Ok(*v),
            _ => Err(Stop::Decline),
        }
    }

    #[inline]
    fn seq_len(&self, s: &usize) -> usize {
        self.items(*s).len()
    }

    #[inline]
    fn seq_get(&self, s: &usize, i: usize) -> R<usize> {
        let r = self.items(*s);
        if i >= r.len() {
            return Err(Stop::Decline);
        }
        Ok(self.doc.kid(r.start + i))
    }

    #[inline]
    fn seq_id(&self, s: &usize) -> usize {
        *s
    }
}

/// The values of a block of JSON Lines (complete lines, UTF-8, the first
/// line's BOM already removed) written as the list items of a root array,
/// as `list_items` writes the values the reference parses from them:
/// `(text, values, lines)`: the text as UTF-8 bytes, the count of values
/// (lines that are not blank) and of line feeds.
/// `NotImplemented`, with nothing done, for a block with any line the core
/// declines (what the reference parses with more care or rejects: see
/// `jsontree`) or any value `list_items` would decline; the caller then
/// parses the block and takes the reference's path, errors included.
/// Options as for `dumps`.
///
/// No Python object is touched: the block is written with the GIL
/// released, a big one in two halves on two threads (the text is the
/// same; `threads=1`: one).  Signals are not checked meanwhile: the caller hands over blocks
/// of a few MiB and is interruptible between them.
#[pyfunction]
#[pyo3(signature = (block, *, threads=2, start=0, end=None, **options))]
pub fn jsonl_items<'py>(
    py: Python<'py>,
    block: &Bound<'py, PyBytes>,
    threads: usize,
    start: usize,
    end: Option<usize>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Py<PyAny>> {
    let bytes = crate::jsonl::part(block.as_bytes(), start, end)?;
    let Some(o) = self::options(py, options)? else {
        return Ok(py.NotImplemented());
    };
    crate::guarded(&mut false, || {
        // (each half validated as UTF-8 where it is written; the JSON walk
        // raises no Python error, so a failure is a decline)
        let write = |half: &[u8]| items(toonstream_native::utf8(half).ok()?, &o).ok();
        let Some(((first, mut n), rest)) = py.detach(|| on_two_threads(bytes, threads, write))
        else {
            return Ok(py.NotImplemented());
        };
        // The halves' texts written into the bytes object at once (no joined copy).
        let second = rest.as_ref().map_or("", |(text, _)| text.as_str());
        let between = if first.is_empty() || second.is_empty() {
            ""
        } else {
            "\n"
        };
        let len = first.len() + between.len() + second.len();
        let text = PyBytes::new_with(py, len, |buf| {
            let (a, rest) = buf.split_at_mut(first.len());
            a.copy_from_slice(first.as_bytes());
            let (b, c) = rest.split_at_mut(between.len());
            b.copy_from_slice(between.as_bytes());
            c.copy_from_slice(second.as_bytes());
            Ok(())
        })?;
        n += rest.map_or(0, |(_, m)| m);
        Ok((text, n, line_feeds(bytes))
            .into_pyobject(py)?
            .into_any()
            .unbind())
    })
}

/// Each line of `text` that is not blank, parsed and written as a list item
/// of a root array (the array at level 1, as `list_items` writes one).
fn items(text: &str, o: &Options) -> R<(String, u64)> {
    let mut enc = Encoder::new(JsonModel::new(), o);
    enc.check_level(1)?;
    // (TOON text is mostly shorter than its JSON: one allocation, no copies
    // as it grows; a failed reservation leaves the growth to the pushes)
    let _ = enc.out.try_reserve(text.len());
    let mut n: u64 = 0;
    for line in text.split('\n') {
        if blank(line) {
            continue;
        }
        let root = enc.model().parse(line)?;
        enc.root_item(&root)?;
        n += 1;
    }
    Ok((enc.out, n))
}
