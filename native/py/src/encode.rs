//! `toonstream._native.dumps`: Python values to TOON text, byte-identical to
//! the Python engine's `toonstream.dumps` (`toonstream/encoder.py`, the
//! reference: `_Walk._root/_fields/_array/_items`, `_table`, `UnionShape`).
//!
//! ```python
//! >>> from toonstream import _native
//! >>> _native.dumps({"users": [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Bob"}]})
//! 'users[2]{id,name}:\n  1,Ada\n  2,Bob'
//! >>> _native.dumps({1: "a"}) is NotImplemented
//! True
//! ```
//!
//! Only the exact built-in types are taken: dict (exact str keys), list,
//! tuple (the reference writes it as the list of its items), str, int,
//! float, bool, None, `decimal.Decimal`, and the exact
//! `datetime.datetime`/`date`/`time` and `uuid.UUID` (as their ISO / standard text).  Anything else (a subclass, a host type the reference
//! maps, a non-str key, a lone surrogate, a value nested deeper than
//! `max_depth` or a cycle, an int the reference writes through `Decimal` or
//! refuses, a Decimal it refuses, an option the reference rejects or spells another way) makes the
//! whole call return `NotImplemented` with nothing written anywhere: the
//! reference then encodes the document, so its errors, paths and host-type
//! mappings stay the only ones.  Every such case is met while the value is
//! walked (every value is written, so every value is looked at), which is
//! why a shape decision taken next to an unknown value never matters: the
//! walk gives up before its output is used.
//!
//! The walk keeps its containers on an explicit stack (a 10,000-deep value
//! costs heap frames, not Rust stack) and calls no Python code: type checks
//! compare type pointers, and only C-level operations of the exact types are
//! used (dict iteration and lookup, `str` of a big int).  The text is built in
//! one `String` and becomes a Python str once.

use std::collections::{HashMap, HashSet};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::pymodel::{PyModel, Types};

/// The reference's `encoder.DEFAULT_MAX_DEPTH`.
const DEFAULT_MAX_DEPTH: i64 = 10_000;
/// Nesting levels this walk takes at most, whatever `max_depth` allows (each
/// level is a heap frame; deeper values go to the reference).
const MAX_LEVELS: usize = 1_000_000;
/// Stack frames from this depth on are checked for cycles (a set lookup per
/// frame); shallower ones need none: a cycle repeats, so it is caught within
/// one turn past this depth, and the depth limit bounds it anyway.
const CYCLE_CHECK_FROM: usize = 32;
/// Lines or cells between two checks for a pending signal (Ctrl-C).
const SIGNAL_EVERY: u32 = 1 << 14;
/// The widest indentation (in spaces) of a line this walk writes.
const MAX_INDENT_TEXT: usize = 1 << 20;
/// The most a table reserves for its rows ahead, from its first row's size.
const MAX_RESERVE: usize = 1 << 28;
/// The text moves into the `str` being built in pieces of about this size
/// (`pystr::StrBuf`): a buffer that stays in the cache, and no second copy
/// of a big output.
const SPILL: usize = 256 << 10;
/// Indentation widths beyond this go to the reference (it takes them; this
/// walk would only build very long lines of spaces).
const MAX_INDENT: i64 = 1 << 12;

/// Why the walk stopped: the value is not one it takes (the reference must
/// encode it), or a Python error (a signal handler's exception) to raise.
pub(crate) enum Stop {
    Decline,
    Err(PyErr),
}

impl From<PyErr> for Stop {
    // An error from a C-level operation (a lookup, a str conversion) means
    // the value is not a plain one: the reference decides what it is.
    fn from(_: PyErr) -> Self {
        Stop::Decline
    }
}

pub(crate) type R<T> = Result<T, Stop>;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Str,
    Int,
    Float,
    Bool,
    Null,
    /// `decimal.Decimal` (exact: written from its `str`)
    Decimal,
    /// `datetime.datetime`, `date` or `time`: the reference writes its
    /// `isoformat()` as a string
    Iso,
    /// `uuid.UUID`: its standard `str` form, as a string
    Uuid,
    Dict,
    List,
    Tuple,
    Other,
}

impl Kind {
    pub(crate) fn primitive(self) -> bool {
        matches!(
            self,
            Kind::Str
                | Kind::Int
                | Kind::Float
                | Kind::Bool
                | Kind::Null
                | Kind::Decimal
                | Kind::Iso
                | Kind::Uuid
        )
    }
    pub(crate) fn sequence(self) -> bool {
        matches!(self, Kind::List | Kind::Tuple)
    }
}

/// What the walk reads values through: Python objects ([`PyModel`]) for
/// `dumps`, `list_items` and `table_rows`, or a parsed JSON line
/// ([`crate::jsonmodel::JsonModel`]) for `jsonl_items`.  One walk, so one
/// implementation of the shape rules (tables, keyed tables, list items)
/// for every input.
pub(crate) trait Model {
    /// A value (an owned handle).
    type V: Clone;
    /// A value borrowed from its object while the walk holds it.
    type Item<'a>: std::ops::Deref<Target = Self::V>
    where
        Self: 'a;
    /// A key known to be a string.
    type K: Clone;
    /// An object.
    type D: Clone;
    /// An array.
    type S: Clone;

    fn kind(&self, v: &Self::V) -> Kind;
    /// Raise a pending signal's exception (Ctrl-C), where the walk can
    /// (called every so many lines or cells).
    fn signals(&self) -> R<()>;
    /// Write primitive `v` (of `kind`) as a cell quoted for `delim` (§7.2).
    fn prim(&mut self, out: &mut String, v: &Self::V, kind: Kind, delim: u8) -> R<()>;
    /// An object's key as a field name (declined if not a string key).
    fn key(&self, k: &Self::V) -> R<Self::K>;
    fn key_value<'k>(&self, k: &'k Self::K) -> &'k Self::V;
    /// Write an object's key (§7.3), quoted if it must be.
    fn write_key(&mut self, out: &mut String, k: &Self::V) -> R<()>;
    fn key_text<'s>(&'s self, k: &'s Self::K) -> R<&'s str>;
    /// Whether an object's key is the field name `name` (false may still
    /// be equal: the caller then looks the fields up by name).
    fn same_key(&self, k: &Self::V, name: &Self::K) -> bool;
    fn dict(&self, v: &Self::V) -> R<Self::D>;
    fn dict_len(&self, d: &Self::D) -> usize;
    /// The member at or after `pos` (which it moves past it), or `None`.
    fn dict_next<'a>(
        &self,
        d: &'a Self::D,
        pos: &mut isize,
    ) -> Option<(Self::Item<'a>, Self::Item<'a>)>;
    fn get(&self, d: &Self::D, k: &Self::K) -> R<Option<Self::V>>;
    /// Decline an object whose keys are not all plain strings.
    fn plain_keys(&self, d: &Self::D) -> R<()>;
    /// An identity for the cycle checks.
    fn dict_id(&self, d: &Self::D) -> usize;
    fn seq(&self, v: &Self::V, kind: Kind) -> R<Self::S>;
    fn seq_len(&self, s: &Self::S) -> usize;
    fn seq_get(&self, s: &Self::S, i: usize) -> R<Self::V>;
    fn seq_id(&self, s: &Self::S) -> usize;
    /// Take finished text (the walk's next, in order) into the model's own
    /// output, so that the walk's buffer stays small; false: the model keeps
    /// no output (the walk then keeps all its text).
    fn take_text(&mut self, _text: &str) -> R<bool> {
        Ok(false)
    }
}

/// One level of a table's field tree (§6 `{a,b{c,d}}`): its names (the first
/// row's keys, exact strs) and, per name, the index of its sub-level (a
/// column of objects) or `None` (a column of primitives).
struct Node<M: Model> {
    names: Vec<M::K>,
    subs: Vec<Option<usize>>,
}

/// A field tree, level 0 the top; `leaves` are the leaf columns (values of
/// every row) in header order, depth-first, when the analysis gathered them.
struct Tree<M: Model> {
    nodes: Vec<Node<M>>,
    leaves: Vec<Vec<M::V>>,
}

/// A `missing_as_null` table's fields: the union of keys in first-seen order,
/// each with its sub-tree (a key present in every row holding objects).
struct Union<M: Model> {
    names: Vec<M::K>,
    subs: Vec<Option<Tree<M>>>,
}

/// A `flat_table` cell: written, an object (maybe a nested table), or no
/// table at all.
enum Cell {
    Written,
    Object,
    NotTable,
}

/// What `flat_table` found.
enum Flat {
    Written,
    NotTable,
    Nested,
}

enum Frame<M: Model> {
    /// The fields of a non-empty object at `depth`; with `hyphen` the first
    /// goes on the list item's hyphen line (§10).
    Fields {
        dict: M::D,
        /// the model's position of the next field
        pos: isize,
        depth: usize,
        hyphen: bool,
        level: usize,
        tracked: Option<usize>,
    },
    /// The list items (§9.4) of an array, at `depth`.
    Items {
        seq: M::S,
        next: usize,
        depth: usize,
        level: usize,
        tracked: Option<usize>,
    },
}

pub(crate) struct Encoder<M: Model> {
    m: M,
    pub(crate) out: String,
    unit: usize,
    delim: u8,
    /// The header's delimiter symbol (§6): none for the comma.
    symbol: &'static str,
    missing_as_null: bool,
    /// The deepest nesting level taken (the root container is level 1): the
    /// reference refuses any container past `max_depth`, empty ones and a
    /// table's rows and field groups included, so every level counts here.
    limit: usize,
    ticks: u32,
    /// `run`'s frame stack, kept between calls (one walk per JSON line).
    frames: Vec<Frame<M>>,
    /// The text is handed to the model (`take_text`) between `run`'s steps
    /// once it is this long (no text is undone across steps).
    spill_at: usize,
    /// Some text was handed over (`out` empty is then not the start).
    spilled: bool,
}

impl<M: Model> Encoder<M> {
    pub(crate) fn new(m: M, o: &Options) -> Self {
        Encoder {
            m,
            out: String::new(),
            unit: o.unit,
            delim: o.delim,
            symbol: match o.delim {
                b'\t' => "\t",
                b'|' => "|",
                _ => "",
            },
            missing_as_null: o.missing_as_null,
            limit: o.limit,
            ticks: 0,
            frames: Vec::new(),
            spill_at: usize::MAX,
            spilled: false,
        }
    }

    /// Hand the text to the model once `out` holds `n` bytes (see `take_text`).
    pub(crate) fn spill_from(&mut self, n: usize) {
        self.spill_at = n;
    }

    #[inline(never)]
    fn spill(&mut self) -> R<()> {
        if self.m.take_text(&self.out)? {
            self.out.clear();
            self.spilled = true;
        } else {
            self.spill_at = usize::MAX;
        }
        Ok(())
    }

    /// The model (the JSON walk swaps the line it reads between items).
    pub(crate) fn model(&mut self) -> &mut M {
        &mut self.m
    }

    pub(crate) fn tick(&mut self) -> R<()> {
        self.ticks += 1;
        if self.ticks >= SIGNAL_EVERY {
            self.ticks = 0;
            self.m.signals()?;
        }
        Ok(())
    }

    /// Start a new line (LF between lines, none before the first).
    fn nl(&mut self) {
        if !self.out.is_empty() || self.spilled {
            self.out.push('\n');
        }
    }

    pub(crate) fn indent(&mut self, depth: usize) {
        const SPACES: &str = "                                                                ";
        let mut n = depth * self.unit;
        while n > 0 {
            let k = n.min(SPACES.len());
            self.out.push_str(&SPACES[..k]);
            n -= k;
        }
    }

    /// The line lead of a list item at `depth`: indentation, then "- ".
    fn hyphen(&mut self, depth: usize) {
        self.indent(depth);
        self.out.push_str("- ");
    }

    pub(crate) fn check_level(&self, level: usize) -> R<()> {
        // (a line's indentation grows with the level: deep and wide enough,
        // the text would be quadratic in the depth, left to the reference)
        if level > self.limit || level.saturating_mul(self.unit) > MAX_INDENT_TEXT {
            return Err(Stop::Decline);
        }
        Ok(())
    }

    // ------------------------------------------------------------ primitives

    /// One primitive cell, quoted for the document's delimiter (§7.2).
    fn prim(&mut self, v: &M::V) -> R<()> {
        let k = self.m.kind(v);
        self.prim_kind(v, k)
    }

    /// `prim` for a value whose kind is known.
    #[inline(always)]
    pub(crate) fn prim_kind(&mut self, v: &M::V, kind: Kind) -> R<()> {
        self.m.prim(&mut self.out, v, kind, self.delim)
    }

    /// An object key or field name (§7.3), exact str (else the reference's).
    fn key(&mut self, k: &M::V) -> R<()> {
        self.m.write_key(&mut self.out, k)
    }

    /// A field name.
    fn name(&mut self, k: &M::K) -> R<()> {
        let v = self.m.key_value(k);
        self.m.write_key(&mut self.out, v)
    }

    /// `[N<sym>]` or the keyed `[N:<sym>]` (§6).
    fn bracket(&mut self, n: usize, keyed: bool) {
        let mut b = itoa::Buffer::new();
        self.out.push('[');
        self.out.push_str(b.format(n));
        if keyed {
            self.out.push(':');
        }
        self.out.push_str(self.symbol);
        self.out.push(']');
    }

    /// `{a,b{c,d}}` for a field tree, without recursion.
    fn fields_text(&mut self, tree: &Tree<M>, root: usize) -> R<()> {
        let d = self.delim as char;
        self.out.push('{');
        let mut todo: Vec<(usize, usize)> = vec![(root, 0)];
        while let Some(top) = todo.last_mut() {
            let (node, at) = *top;
            let n = &tree.nodes[node];
            if at >= n.names.len() {
                todo.pop();
                self.out.push('}');
                continue;
            }
            top.1 += 1;
            if at > 0 {
                self.out.push(d);
            }
            let sub = n.subs[at];
            self.name(&n.names[at])?;
            if let Some(sub) = sub {
                self.out.push('{');
                todo.push((sub, 0));
            }
        }
        Ok(())
    }

    fn union_text(&mut self, u: &Union<M>) -> R<()> {
        let d = self.delim as char;
        self.out.push('{');
        for (i, (name, sub)) in u.names.iter().zip(&u.subs).enumerate() {
            if i > 0 {
                self.out.push(d);
            }
            self.name(name)?;
            if let Some(t) = sub {
                self.fields_text(t, 0)?;
            }
        }
        self.out.push('}');
        Ok(())
    }

    /// The values of `d`, in order.
    fn values(&self, d: &M::D) -> Vec<M::V> {
        let mut pos = 0;
        let mut values = Vec::with_capacity(self.m.dict_len(d));
        while let Some((_, v)) = self.m.dict_next(d, &mut pos) {
            values.push((*v).clone());
        }
        values
    }

    /// The keys of `d` as field names, in order.
    fn names(&self, d: &M::D) -> R<Vec<M::K>> {
        let mut pos = 0;
        let mut names = Vec::with_capacity(self.m.dict_len(d));
        while let Some((k, _)) = self.m.dict_next(d, &mut pos) {
            names.push(self.m.key(&k)?);
        }
        Ok(names)
    }

    // ---------------------------------------------------------------- tables

    /// `_Walk._table`: the field tree (and leaf columns) if `rows` make a
    /// §9.3 table: all non-empty dicts with the same keys (the header is the
    /// first row's key order; the others are matched by lookup), each column
    /// all primitives or all objects that again make a table.  `level`: the
    /// rows' nesting level.  `Ok(None)`: not a table.
    fn table(&mut self, rows: &[M::V], level: usize) -> R<Option<Tree<M>>> {
        struct Group<D> {
            rows: Vec<D>,
            node: usize,
            col: usize,
            ptr: usize,
        }
        let mut tree = Tree {
            nodes: Vec::new(),
            leaves: Vec::new(),
        };
        // Depth-first over the field tree, so the leaves come in header order.
        let Some(first) = self.group(rows, level, &mut tree)? else {
            return Ok(None);
        };
        let mut stack: Vec<Group<M::D>> = vec![Group {
            ptr: self.m.dict_id(&first[0]),
            rows: first,
            node: 0,
            col: 0,
        }];
        // The first rows of the open groups: the first row's own nesting,
        // where a cycle would show (the other rows must follow its shape).
        let mut chain: HashSet<usize> = HashSet::new();
        chain.insert(stack[0].ptr);
        while let Some(g) = stack.last_mut() {
            let node = g.node;
            if g.col >= tree.nodes[node].names.len() {
                let ptr = g.ptr;
                stack.pop();
                chain.remove(&ptr);
                continue;
            }
            let name = tree.nodes[node].names[g.col].clone();
            g.col += 1;
            let mut col: Vec<M::V> = Vec::with_capacity(g.rows.len());
            let mut all_prim = true;
            let mut all_dict = true;
            for r in &g.rows {
                self.tick()?; // (the analysis of a big table takes a while too: Ctrl-C)
                let Some(v) = self.m.get(r, &name)? else {
                    return Ok(None);
                };
                match self.m.kind(&v) {
                    Kind::Other => return Err(Stop::Decline),
                    Kind::Dict => all_prim = false,
                    k if k.primitive() => all_dict = false,
                    _ => {
                        all_prim = false;
                        all_dict = false;
                    }
                }
                col.push(v);
            }
            let depth = level + stack.len();
            if all_prim {
                tree.nodes[node].subs.push(None);
                tree.leaves.push(col);
                continue;
            }
            if !all_dict {
                return Ok(None);
            }
            let child = tree.nodes.len();
            let Some(rows) = self.group(&col, depth, &mut tree)? else {
                return Ok(None);
            };
            tree.nodes[node].subs.push(Some(child));
            let ptr = self.m.dict_id(&rows[0]);
            if !chain.insert(ptr) {
                return Err(Stop::Decline); // a cycle: the reference reports it
            }
            stack.push(Group {
                rows,
                node: child,
                col: 0,
                ptr,
            });
        }
        Ok(Some(tree))
    }

    /// One group of a table (rows at `level`): all dicts, the first not
    /// empty, all of its size; its keys become a new node of `tree`.
    fn group(&mut self, rows: &[M::V], level: usize, tree: &mut Tree<M>) -> R<Option<Vec<M::D>>> {
        self.check_level(level)?;
        let mut dicts = Vec::with_capacity(rows.len());
        for r in rows {
            self.tick()?;
            match self.m.kind(r) {
                Kind::Dict => dicts.push(self.m.dict(r)?),
                Kind::Other => return Err(Stop::Decline),
                _ => return Ok(None),
            }
        }
        let Some(first) = dicts.first() else {
            return Ok(None);
        };
        let width = self.m.dict_len(first);
        if width == 0 || dicts.iter().any(|d| self.m.dict_len(d) != width) {
            return Ok(None);
        }
        let names = self.names(first)?;
        for d in &dicts[1..] {
            self.m.plain_keys(d)?; // (the other rows are matched by lookup)
        }
        tree.nodes.push(Node {
            names,
            subs: Vec::with_capacity(width),
        });
        Ok(Some(dicts))
    }

    /// `Walk.conforms`: `obj` has exactly the shape of `tree` from `node`.
    fn conforms(&mut self, obj: &M::V, tree: &Tree<M>) -> R<bool> {
        let mut todo = vec![(obj.clone(), 0usize)];
        while let Some((o, node)) = todo.pop() {
            match self.m.kind(&o) {
                Kind::Dict => {}
                Kind::Other => return Err(Stop::Decline),
                _ => return Ok(false),
            }
            let o = self.m.dict(&o)?;
            let n = &tree.nodes[node];
            if self.m.dict_len(&o) != n.names.len() {
                return Ok(false);
            }
            self.m.plain_keys(&o)?;
            for (name, sub) in n.names.iter().zip(&n.subs) {
                let Some(v) = self.m.get(&o, name)? else {
                    return Ok(false);
                };
                let k = self.m.kind(&v);
                if k == Kind::Other {
                    return Err(Stop::Decline);
                }
                match sub {
                    None if !k.primitive() => return Ok(false),
                    None => {}
                    Some(s) => todo.push((v, *s)),
                }
            }
        }
        Ok(true)
    }

    /// `UnionShape`: the fields of a `missing_as_null` table over `rows`
    /// (non-empty dicts that differ only by missing keys), or `None`.
    fn union(&mut self, rows: &[M::V], level: usize) -> R<Option<Union<M>>> {
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut u = Union {
            names: Vec::new(),
            subs: Vec::new(),
        };
        let mut present: Vec<usize> = Vec::new();
        for o in rows {
            match self.m.kind(o) {
                Kind::Dict => {}
                Kind::Other => return Err(Stop::Decline),
                _ => return Ok(None),
            }
            let o = self.m.dict(o)?;
            if self.m.dict_len(&o) == 0 {
                return Ok(None);
            }
            let mut pos = 0;
            while let Some((k, v)) = self.m.dict_next(&o, &mut pos) {
                let key = self.m.key(&k)?;
                let v: M::V = (*v).clone();
                let kv = self.m.kind(&v);
                if kv == Kind::Other {
                    return Err(Stop::Decline);
                }
                let text = self.m.key_text(&key)?.to_string();
                match index.get(&text) {
                    None => {
                        let sub = if kv.primitive() {
                            None
                        } else if kv == Kind::Dict {
                            match self.table(std::slice::from_ref(&v), level + 1)? {
                                Some(t) => Some(t),
                                None => return Ok(None),
                            }
                        } else {
                            return Ok(None);
                        };
                        index.insert(text, u.names.len());
                        u.names.push(key);
                        u.subs.push(sub);
                        present.push(1);
                    }
                    Some(&i) => {
                        present[i] += 1;
                        let fits = match &u.subs[i] {
                            None => kv.primitive(),
                            Some(t) => self.conforms(&v, t)?,
                        };
                        if !fits {
                            return Ok(None);
                        }
                    }
                }
            }
        }
        let n = rows.len();
        for (sub, &p) in u.subs.iter().zip(&present) {
            // a nested object missing somewhere: null and objects do not mix
            if sub.is_some() && p != n {
                return Ok(None);
            }
        }
        Ok(Some(u))
    }

    /// Rows of a table from its leaf columns, each line at `depth`.
    fn table_rows(&mut self, tree: &Tree<M>, n: usize, depth: usize) -> R<()> {
        let d = self.delim as char;
        for i in 0..n {
            self.tick()?;
            self.nl();
            self.indent(depth);
            for (j, col) in tree.leaves.iter().enumerate() {
                if j > 0 {
                    self.out.push(d);
                }
                self.prim(&col[i])?;
            }
        }
        Ok(())
    }

    /// The leaf cells of `obj` along `tree` (it conforms), depth-first.
    fn tree_cells(&mut self, obj: &M::V, tree: &Tree<M>, first: bool) -> R<()> {
        let d = self.delim as char;
        let mut first = first;
        let mut todo: Vec<(M::D, usize, usize)> = Vec::new();
        todo.push((self.m.dict(obj)?, 0, 0));
        while let Some((o, node, i)) = todo.last_mut() {
            let n = &tree.nodes[*node];
            if *i >= n.names.len() {
                todo.pop();
                continue;
            }
            let at = *i;
            *i += 1;
            let v = self.m.get(o, &n.names[at])?.ok_or(Stop::Decline)?;
            match n.subs[at] {
                None => {
                    if !first {
                        self.out.push(d);
                    }
                    first = false;
                    self.prim(&v)?;
                }
                Some(s) => {
                    let v = self.m.dict(&v)?;
                    todo.push((v, s, 0));
                }
            }
        }
        Ok(())
    }

    fn union_rows(&mut self, u: &Union<M>, rows: &[M::V], depth: usize) -> R<()> {
        let d = self.delim as char;
        for o in rows {
            self.tick()?;
            let o = self.m.dict(o)?;
            self.nl();
            self.indent(depth);
            for (j, (name, sub)) in u.names.iter().zip(&u.subs).enumerate() {
                let v = self.m.get(&o, name)?;
                match (sub, v) {
                    (None, None) => {
                        if j > 0 {
                            self.out.push(d);
                        }
                        self.out.push_str("null");
                    }
                    (None, Some(v)) => {
                        if j > 0 {
                            self.out.push(d);
                        }
                        self.prim(&v)?;
                    }
                    (Some(t), Some(v)) => self.tree_cells(&v, t, j == 0)?,
                    (Some(_), None) => return Err(Stop::Decline),
                }
            }
        }
        Ok(())
    }

    /// `_Walk._keyed_fields`: a §9.5 keyed table if `obj` (at `level`) has at
    /// least 2 entries, all objects that make a table.
    fn keyed(&mut self, obj: &M::D, level: usize) -> R<Option<Tree<M>>> {
        if self.m.dict_len(obj) < 2 {
            return Ok(None);
        }
        // (most objects hold a primitive: no table, nothing collected)
        let mut pos = 0;
        while let Some((_, v)) = self.m.dict_next(obj, &mut pos) {
            self.tick()?;
            match self.m.kind(&v) {
                Kind::Dict => {}
                Kind::Other => return Err(Stop::Decline),
                _ => return Ok(None),
            }
        }
        let values = self.values(obj);
        self.table(&values, level + 1)
    }

    /// The header (after the head already written) and entries of a keyed
    /// table; entries at `depth + 1`.
    fn write_keyed(&mut self, obj: &M::D, tree: &Tree<M>, depth: usize) -> R<()> {
        let count = self.m.dict_len(obj);
        self.bracket(count, true);
        self.fields_text(tree, 0)?;
        self.out.push(':');
        let d = self.delim as char;
        let mut pos = 0;
        let mut i = 0;
        // The cells were collected before; Python code run by the walk since
        // (a tzinfo, a str subclass, another thread) may have changed the
        // dict: the reference then writes what it finds.
        let rows = tree.leaves.first().map_or(count, |col| col.len());
        while let Some((k, _)) = self.m.dict_next(obj, &mut pos) {
            if i >= rows || self.m.dict_len(obj) != count {
                return Err(Stop::Decline);
            }
            let k: M::V = (*k).clone();
            self.tick()?;
            self.nl();
            self.indent(depth + 1);
            self.key(&k)?;
            self.out.push_str(": ");
            for (j, col) in tree.leaves.iter().enumerate() {
                if j > 0 {
                    self.out.push(d);
                }
                self.prim(&col[i])?;
            }
            i += 1;
        }
        if i != count {
            return Err(Stop::Decline);
        }
        Ok(())
    }

    // ---------------------------------------------------------------- values

    /// `_Walk._array` for a non-empty array at nesting `level` whose head
    /// (line lead and key) is written; its rows or items go at `depth + 1`.
    fn array(
        &mut self,
        seq: M::S,
        depth: usize,
        tabular: bool,
        level: usize,
        child: &mut Option<Frame<M>>,
    ) -> R<()> {
        let n = self.m.seq_len(&seq);
        let mark = self.out.len();
        // §9.1 inline, written while the items are classified (one pass over
        // them: each item is read once, while it is in the cache); undone at
        // the first item that is not a primitive.
        self.bracket(n, false);
        self.out.push_str(": ");
        let d = self.delim as char;
        let mut inline = true;
        for i in 0..n {
            let x = self.m.seq_get(&seq, i)?;
            let k = self.m.kind(&x);
            if !k.primitive() {
                inline = false;
                break;
            }
            if i > 0 {
                self.out.push(d);
            }
            self.prim_kind(&x, k)?;
            self.tick()?;
        }
        if inline {
            return Ok(());
        }
        self.out.truncate(mark);
        // (rows that are not all dicts: flat_table says NotTable at the first
        // other one, and union gives None)
        if tabular {
            self.check_level(level + 1)?;
            match self.flat_table(&seq, depth + 1)? {
                Flat::Written => return Ok(()),
                Flat::NotTable => {}
                Flat::Nested => {
                    let items = self.items(&seq)?;
                    if let Some(tree) = self.table(&items, level + 1)? {
                        // §9.3
                        self.bracket(n, false);
                        self.fields_text(&tree, 0)?;
                        self.out.push(':');
                        self.table_rows(&tree, n, depth + 1)?;
                        return Ok(());
                    }
                }
            }
            if self.missing_as_null {
                let items = self.items(&seq)?;
                if let Some(u) = self.union(&items, level + 1)? {
                    self.bracket(n, false);
                    self.union_text(&u)?;
                    self.out.push(':');
                    self.union_rows(&u, &items, depth + 1)?;
                    return Ok(());
                }
            }
        }
        self.bracket(n, false); // §9.4
        self.out.push(':');
        *child = Some(Frame::Items {
            seq,
            next: 0,
            depth: depth + 1,
            level,
            tracked: None,
        });
        Ok(())
    }

    fn items(&self, seq: &M::S) -> R<Vec<M::V>> {
        (0..self.m.seq_len(seq))
            .map(|i| self.m.seq_get(seq, i))
            .collect()
    }

    /// The commonest §9.3 table, rows of primitives only, written in one
    /// pass over the rows (each row is read once, while it is in the cache),
    /// rows at `depth`; undone when the rows turn out to be something else:
    /// `NotTable` where `_table` says no table (a row that is not a dict or
    /// of another size or lacks a field, a list cell), `Nested` at an object
    /// cell (the full analysis decides).
    fn flat_table(&mut self, seq: &M::S, depth: usize) -> R<Flat> {
        let first = self.m.seq_get(seq, 0)?;
        match self.m.kind(&first) {
            Kind::Dict => {}
            Kind::Other => return Err(Stop::Decline),
            _ => return Ok(Flat::NotTable),
        }
        let first = self.m.dict(&first)?;
        let width = self.m.dict_len(&first);
        if width == 0 {
            return Ok(Flat::NotTable);
        }
        let names = self.names(&first)?;
        let n = self.m.seq_len(seq);
        let mark = self.out.len();
        let d = self.delim as char;
        self.bracket(n, false);
        self.out.push('{');
        for (j, name) in names.iter().enumerate() {
            if j > 0 {
                self.out.push(d);
            }
            self.name(name)?;
        }
        self.out.push_str("}:");
        // each row's line break and indentation
        let mark_rows = self.out.len();
        self.nl();
        self.indent(depth);
        let lead = self.out[mark_rows..].to_string();
        self.out.truncate(mark_rows);
        for i in 0..n {
            self.tick()?;
            let row = self.m.seq_get(seq, i)?;
            let row = match self.m.kind(&row) {
                Kind::Dict => self.m.dict(&row)?,
                Kind::Other => return Err(Stop::Decline),
                _ => return Ok(self.undo(mark, Flat::NotTable)),
            };
            if self.m.dict_len(&row) != width {
                return Ok(self.undo(mark, Flat::NotTable));
            }
            self.out.push_str(&lead);
            let line = self.out.len();
            // The row's own order first (no lookups): the cells are the
            // header's while each key is the header's very key object.
            let mut cell = Cell::Written;
            let mut j = 0;
            let mut pos = 0;
            while let Some((k, v)) = self.m.dict_next(&row, &mut pos) {
                if j >= width || !self.m.same_key(&k, &names[j]) {
                    break;
                }
                cell = self.flat_cell(&v, j)?;
                if !matches!(cell, Cell::Written) {
                    break;
                }
                j += 1;
            }
            if matches!(cell, Cell::Written) && j < width {
                // keys in another order, or equal keys that are other objects
                self.out.truncate(line);
                self.m.plain_keys(&row)?;
                for (jj, name) in names.iter().enumerate() {
                    let Some(v) = self.m.get(&row, name)? else {
                        return Ok(self.undo(mark, Flat::NotTable));
                    };
                    j = jj;
                    cell = self.flat_cell(&v, j)?;
                    if !matches!(cell, Cell::Written) {
                        break;
                    }
                }
            }
            match cell {
                Cell::Written => {
                    if i == 0 {
                        // room for the other rows at once (growing by
                        // doubling would copy a big table's text repeatedly),
                        // as far as the first row tells and within reason: a
                        // failed reservation only leaves the growth to push
                        let row = self.out.len() - line + 1 + depth * self.unit;
                        let room = row.saturating_mul(n - 1).min(MAX_RESERVE);
                        let _ = self.out.try_reserve(room);
                    }
                }
                Cell::NotTable => return Ok(self.undo(mark, Flat::NotTable)),
                Cell::Object => {
                    // A list cell further on rules the table out without
                    // the full analysis (records that hold an object and an
                    // array are common).
                    self.m.plain_keys(&row)?;
                    for name in &names[j + 1..] {
                        match self.m.get(&row, name)? {
                            Some(v) if self.m.kind(&v).sequence() => {
                                return Ok(self.undo(mark, Flat::NotTable))
                            }
                            _ => {}
                        }
                    }
                    return Ok(self.undo(mark, Flat::Nested));
                }
            }
        }
        Ok(Flat::Written)
    }

    /// Cell `j` of a `flat_table` row: written if a primitive.
    #[inline(always)]
    fn flat_cell(&mut self, v: &M::V, j: usize) -> R<Cell> {
        let k = self.m.kind(v);
        if k.primitive() {
            if j > 0 {
                self.out.push(self.delim as char);
            }
            self.prim_kind(v, k)?;
            return Ok(Cell::Written);
        }
        match k {
            Kind::Other => Err(Stop::Decline),
            Kind::Dict => Ok(Cell::Object),
            _ => Ok(Cell::NotTable),
        }
    }

    fn undo(&mut self, mark: usize, why: Flat) -> Flat {
        self.out.truncate(mark);
        why
    }

    /// One field `k: v` of an object at `depth`; `hyphen`: on a list item's
    /// hyphen line.  `level`: the object's nesting level.
    #[inline(always)]
    fn field(
        &mut self,
        k: &M::V,
        v: &M::V,
        depth: usize,
        hyphen: bool,
        level: usize,
        child: &mut Option<Frame<M>>,
    ) -> R<()> {
        self.nl();
        if hyphen {
            self.hyphen(depth - 1);
        } else {
            self.indent(depth);
        }
        self.key(k)?;
        let kind = self.m.kind(v);
        if kind.primitive() {
            self.out.push_str(": ");
            return self.prim_kind(v, kind);
        }
        self.container_field(v, kind, depth, level, child)
    }

    /// `field` of a value that is not a primitive (its key written).
    #[inline(never)]
    fn container_field(
        &mut self,
        v: &M::V,
        kind: Kind,
        depth: usize,
        level: usize,
        child: &mut Option<Frame<M>>,
    ) -> R<()> {
        self.check_level(level + 1)?;
        match kind {
            Kind::Dict => {
                let dict = self.m.dict(v)?;
                if self.m.dict_len(&dict) == 0 {
                    self.out.push(':');
                    return Ok(());
                }
                if let Some(tree) = self.keyed(&dict, level + 1)? {
                    self.write_keyed(&dict, &tree, depth)?;
                    return Ok(());
                }
                self.out.push(':');
                *child = Some(fields_frame(dict, depth + 1, false, level + 1));
                Ok(())
            }
            k if k.sequence() => {
                let seq = self.m.seq(v, k)?;
                if self.m.seq_len(&seq) == 0 {
                    self.out.push_str(": []");
                    return Ok(());
                }
                self.array(seq, depth, true, level + 1, child)
            }
            _ => Err(Stop::Decline),
        }
    }

    /// One list item at `depth` of an array at nesting `level`.
    fn item(
        &mut self,
        x: &M::V,
        depth: usize,
        level: usize,
        child: &mut Option<Frame<M>>,
    ) -> R<()> {
        let kind = self.m.kind(x);
        if kind.primitive() {
            self.nl();
            self.hyphen(depth);
            self.prim(x)?;
            return Ok(());
        }
        self.check_level(level + 1)?;
        match kind {
            Kind::Dict => {
                let dict = self.m.dict(x)?;
                if self.m.dict_len(&dict) == 0 {
                    self.nl();
                    self.indent(depth);
                    self.out.push('-'); // §10 empty object: a bare "-"
                    return Ok(());
                }
                *child = Some(fields_frame(dict, depth + 1, true, level + 1));
                Ok(())
            }
            k if k.sequence() => {
                self.nl();
                self.hyphen(depth);
                let seq = self.m.seq(x, k)?;
                if self.m.seq_len(&seq) == 0 {
                    self.bracket(0, false); // §9.2: "- [0]:", never "- []"
                    self.out.push(':');
                    return Ok(());
                }
                self.array(seq, depth, false, level + 1, child)
            }
            _ => Err(Stop::Decline),
        }
    }

    /// A list item of a root array (at level 1), as `run` writes one: the
    /// unit of `list_items` and `jsonl_items`.
    pub(crate) fn root_item(&mut self, x: &M::V) -> R<()> {
        self.tick()?;
        let mut child = None;
        self.item(x, 1, 1, &mut child)?;
        if let Some(frame) = child {
            self.run(frame)?;
        }
        Ok(())
    }

    fn root(&mut self, v: &M::V) -> R<()> {
        let kind = self.m.kind(v);
        if kind.primitive() {
            return self.prim(v);
        }
        self.check_level(1)?;
        let first = match kind {
            Kind::Dict => {
                let dict = self.m.dict(v)?;
                if self.m.dict_len(&dict) == 0 {
                    return Ok(()); // §8: an empty root object is an empty document
                }
                if let Some(tree) = self.keyed(&dict, 1)? {
                    return self.write_keyed(&dict, &tree, 0);
                }
                fields_frame(dict, 0, false, 1)
            }
            k if k.sequence() => {
                let seq = self.m.seq(v, k)?;
                if self.m.seq_len(&seq) == 0 {
                    self.out.push_str("[]");
                    return Ok(());
                }
                let mut child = None;
                self.array(seq, 0, true, 1, &mut child)?;
                match child {
                    Some(f) => f,
                    None => return Ok(()),
                }
            }
            _ => return Err(Stop::Decline),
        };
        self.run(first)
    }

    /// Drive the frames: each step writes one field or item, which may open
    /// a child frame (pushed) or finish its frame (popped).
    fn run(&mut self, first: Frame<M>) -> R<()> {
        let mut stack = std::mem::take(&mut self.frames);
        stack.clear();
        stack.push(first);
        let mut active: HashSet<usize> = HashSet::new();
        while let Some(top) = stack.last_mut() {
            // (before an item is taken: a signal handler may change the
            // value, and the items are borrowed, see `pyobj`)
            self.tick()?;
            if self.out.len() >= self.spill_at {
                self.spill()?; // (between steps: every mark is behind)
            }
            // The step's child frame comes back through `child` (a big value
            // returned through each call was copied at every field).
            let mut child = None;
            let more = match top {
                Frame::Fields {
                    dict,
                    pos,
                    depth,
                    hyphen,
                    level,
                    ..
                } => match self.m.dict_next(dict, pos) {
                    None => false,
                    Some((k, v)) => {
                        let h = *hyphen;
                        *hyphen = false;
                        let (depth, level) = (*depth, *level);
                        self.field(&k, &v, depth, h, level, &mut child)?;
                        true
                    }
                },
                Frame::Items {
                    seq,
                    next,
                    depth,
                    level,
                    ..
                } => {
                    if *next >= self.m.seq_len(seq) {
                        false
                    } else {
                        let x = self.m.seq_get(seq, *next)?;
                        *next += 1;
                        let (depth, level) = (*depth, *level);
                        self.item(&x, depth, level, &mut child)?;
                        true
                    }
                }
            };
            if !more {
                if let Some(
                    Frame::Fields {
                        tracked: Some(p), ..
                    }
                    | Frame::Items {
                        tracked: Some(p), ..
                    },
                ) = stack.pop()
                {
                    active.remove(&p);
                }
            } else if let Some(mut f) = child {
                if stack.len() >= CYCLE_CHECK_FROM {
                    let p = match &f {
                        Frame::Fields { dict, .. } => self.m.dict_id(dict),
                        Frame::Items { seq, .. } => self.m.seq_id(seq),
                    };
                    if !active.insert(p) {
                        return Err(Stop::Decline); // a cycle: the reference reports it
                    }
                    match &mut f {
                        Frame::Fields { tracked, .. } | Frame::Items { tracked, .. } => {
                            *tracked = Some(p)
                        }
                    }
                }
                stack.push(f);
            }
        }
        self.frames = stack;
        Ok(())
    }
}

fn fields_frame<M: Model>(dict: M::D, depth: usize, hyphen: bool, level: usize) -> Frame<M> {
    Frame::Fields {
        dict,
        pos: 0,
        depth,
        hyphen,
        level,
        tracked: None,
    }
}

// -------------------------------------------------------------------- entry

/// The options, checked exactly: anything the reference rejects, spells
/// another way ("comma") or treats by truthiness is left to it (`None`).
pub(crate) struct Options {
    unit: usize,
    delim: u8,
    limit: usize,
    missing_as_null: bool,
}

pub(crate) fn options(
    py: Python<'_>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Option<Options>> {
    let types = Types::new(py);
    let mut o = Options {
        unit: 2,
        delim: b',',
        limit: DEFAULT_MAX_DEPTH as usize,
        missing_as_null: false,
    };
    let Some(kwargs) = kwargs else {
        return Ok(Some(o));
    };
    for (k, v) in kwargs.iter() {
        let name: String = k.extract()?;
        let kind = types.kind(&v);
        match name.as_str() {
            "indent_size" => {
                if kind != Kind::Int {
                    return Ok(None);
                }
                match v.extract::<i64>() {
                    Ok(n) if (1..=MAX_INDENT).contains(&n) => o.unit = n as usize,
                    _ => return Ok(None),
                }
            }
            "delimiter" => {
                if kind != Kind::Str {
                    return Ok(None);
                }
                o.delim = match v.cast::<PyString>()?.to_str() {
                    Ok(",") => b',',
                    Ok("\t") => b'\t',
                    Ok("|") => b'|',
                    _ => return Ok(None),
                };
            }
            "max_depth" => {
                if kind != Kind::Int {
                    return Ok(None);
                }
                o.limit = match v.extract::<i64>() {
                    Ok(n) if n < 0 => 0,
                    Ok(n) => usize::try_from(n).unwrap_or(MAX_LEVELS).min(MAX_LEVELS),
                    Err(_) if v.lt(0)? => 0,
                    Err(_) => MAX_LEVELS,
                };
            }
            "missing_as_null" => {
                if kind != Kind::Bool {
                    return Ok(None);
                }
                o.missing_as_null = v.is_truthy()?;
            }
            _ => {
                return Err(PyTypeError::new_err(format!(
                    "dumps() got an unexpected keyword argument '{name}'"
                )))
            }
        }
    }
    Ok(Some(o))
}

/// The row lines of records of a flat table (`_ArrayPlan`'s spool text:
/// each row `"\n" + indent + cells`), or `NotImplemented` (nothing done) if
/// any record is not an exact dict with exactly the fields `names` (exact
/// strs), or holds a value `dumps` would not take: the reference then adds
/// the records one by one.  Options as for `dumps`.
#[pyfunction]
#[pyo3(signature = (records, names, **options))]
pub fn table_rows<'py>(
    py: Python<'py>,
    records: &Bound<'py, PyList>,
    names: &Bound<'py, PyTuple>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Py<PyAny>> {
    walk_with(py, options, |enc| enc.rows_of(records, names))
}

/// The elements of an array written as list items (§9.4), as `dumps` writes
/// the items of a root array: "- " at depth 1 (indented), lines joined by LF, no LF
/// before the first and none after the last (the header line is the
/// caller's).  `encode_jsonl`/`encode_records` write an array of objects
/// that is not a table this way, a batch at a time.  `NotImplemented`
/// (nothing done) for anything `dumps` would not take; options as for
/// `dumps`.
///
/// ```python
/// >>> _native.list_items([{"a": 1, "b": [1, {"c": 2}]}, 3])
/// '  - a: 1\n    b[2]:\n      - 1\n      - c: 2\n  - 3'
/// ```
#[pyfunction]
#[pyo3(signature = (elements, **options))]
pub fn list_items<'py>(
    py: Python<'py>,
    elements: &Bound<'py, PyList>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Py<PyAny>> {
    walk_with(py, options, |enc| enc.items_of(elements))
}

/// Run a walk with the options (`NotImplemented` for options the reference
/// must handle, or a declined walk): the text, or the walk's Python error.
fn walk_with<'py>(
    py: Python<'py>,
    options: Option<&Bound<'py, PyDict>>,
    walk: impl FnOnce(&mut Encoder<PyModel<'py>>) -> R<()>,
) -> PyResult<Py<PyAny>> {
    // (an option value is never None in the reference's signature: taken as
    // a keyword dict, an explicit None is told apart from a missing option)
    let Some(o) = self::options(py, options)? else {
        return Ok(py.NotImplemented());
    };
    super::guarded(&mut false, || {
        let mut enc = Encoder::new(PyModel::new(py), &o);
        enc.spill_from(SPILL);
        match walk(&mut enc) {
            Ok(()) => Ok(enc.m.finish_str(&enc.out)?.into_any().unbind()),
            Err(Stop::Decline) => Ok(py.NotImplemented()),
            Err(Stop::Err(e)) => Err(e),
        }
    })
}

impl<'py> Encoder<PyModel<'py>> {
    /// `list_items`: each element as `run` writes an item of a root array
    /// (the array at level 1, as in `root`).
    fn items_of(&mut self, elements: &Bound<'py, PyList>) -> R<()> {
        self.check_level(1)?;
        for x in elements.iter() {
            self.root_item(&x)?;
        }
        Ok(())
    }

    fn rows_of(&mut self, records: &Bound<'py, PyList>, names: &Bound<'py, PyTuple>) -> R<()> {
        self.check_level(2)?; // (the rows of a root array)
        let width = names.len();
        for name in names.iter() {
            if self.model().kind(&name) != Kind::Str {
                return Err(Stop::Decline);
            }
        }
        let delim = char::from(self.delim);
        for record in records.iter() {
            self.tick()?;
            if self.model().kind(&record) != Kind::Dict {
                return Err(Stop::Decline);
            }
            let record = record.cast::<PyDict>().map_err(|_| Stop::Decline)?;
            // (as many keys as fields, each field present: the same keys)
            if record.len() != width {
                return Err(Stop::Decline);
            }
            self.out.push('\n');
            self.indent(1);
            for (i, name) in names.iter().enumerate() {
                let Some(v) = record.get_item(&name)? else {
                    return Err(Stop::Decline);
                };
                let k = self.model().kind(&v);
                if !k.primitive() {
                    return Err(Stop::Decline);
                }
                if i > 0 {
                    self.out.push(delim);
                }
                self.prim_kind(&v, k)?;
            }
        }
        Ok(())
    }
}

/// Encode `obj` as a TOON document exactly as the Python engine's
/// `toonstream.dumps` (no `default` hook), or return `NotImplemented`, at
/// once and with no side effect, for anything but the exact built-in JSON
/// types (see the module docs): the caller then runs the Python engine.
///
/// ```python
/// >>> _native.dumps([1, 2, 3], delimiter="|")
/// '[3|]: 1|2|3'
/// ```
#[pyfunction]
#[pyo3(
    signature = (obj, **options),
    text_signature = "(obj, *, indent_size=2, delimiter=',', max_depth=10000, missing_as_null=False)"
)]
pub fn dumps<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Py<PyAny>> {
    walk_with(py, options, |enc| enc.root(obj))
}
