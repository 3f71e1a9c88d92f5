//! What the decoder tells its consumer: the [`Sink`] trait.
//!
//! The machine calls the sink directly (monomorphized, no event objects),
//! so a builder can make its output as the grammar is recognised: the
//! reference [`crate::value::ValueBuilder`] makes a tree; a PyO3 builder will
//! make Python objects, as pydantic/jiter does.  The vocabulary mirrors the
//! Python engine's events (`toonstream/_reference/events.py`): line-sized, not
//! cell-sized.  A table row is one [`Sink::row`] call with all its cells;
//! an inline primitive array is one [`Sink::values`] call.
//!
//! Order of calls for a value:
//! - primitive: `scalar`
//! - object: `start_object`, then per field `key` + the field's value, `end_object`
//! - array: `start_array`, its elements (`values` for inline primitives, or
//!   full values), `end_array`
//! - tabular array / keyed table: `start_table`, `row`s or `entry`s, `end_table`

use crate::scalars::{Scalar, Tok};

/// A consumer of decode events.  Every method may fail with the sink's own
/// error (a PyO3 sink: a `PyErr`); decode errors convert into it.
pub trait Sink {
    type Error: From<crate::DecodeError>;

    fn start_object(&mut self) -> Result<(), Self::Error>;
    fn end_object(&mut self) -> Result<(), Self::Error>;
    /// The next value belongs to this key of the innermost object.
    fn key(&mut self, key: &str) -> Result<(), Self::Error>;
    /// A primitive: a field's value, a list item, or the root.
    fn scalar(&mut self, value: Scalar<'_>) -> Result<(), Self::Error>;
    /// An array begins; `declared` is the header's N (0 for `[]`).  Never
    /// pre-allocate from it: it is only a claim of the input.
    fn start_array(&mut self, declared: u64) -> Result<(), Self::Error>;
    /// Primitive elements of the innermost array (an inline array).
    fn values(&mut self, values: &Cells<'_>) -> Result<(), Self::Error>;
    fn end_array(&mut self) -> Result<(), Self::Error>;
    /// A tabular array (`keyed == false`) or keyed table begins.
    fn start_table(&mut self, table: &Table<'_>) -> Result<(), Self::Error>;
    /// One row of the innermost tabular array: its leaf cells, header order.
    fn row(&mut self, cells: &Cells<'_>) -> Result<(), Self::Error>;
    /// One entry row of the innermost keyed table.
    fn entry(&mut self, key: &str, cells: &Cells<'_>) -> Result<(), Self::Error>;
    fn end_table(&mut self, keyed: bool) -> Result<(), Self::Error>;
    /// Line `number` is handed to the machine: the calls until the next
    /// `start_line` (or the end) are its own.  For consumers that report
    /// where a value was (the JSON writer's path errors).
    #[inline]
    fn start_line(&mut self, _number: u64) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// A sink whose rows of a tabular array can be written on a second thread
/// ([`crate::Decoder::feed_two_threads`]): the fork writes the rows that
/// continue the innermost table into its own output, which is joined to
/// this sink's in order.
pub trait ForkRows: Sink + Send + Sized {
    /// Whether rows that continue the innermost tabular array here, after
    /// at least one row of it, can be written by a fork.
    fn can_fork_rows(&self) -> bool;
    /// A sink for those rows, writing into its own output (a fork sees only
    /// `start_line`, `row` and calls that end its use); `None` when
    /// [`ForkRows::can_fork_rows`] is false.
    fn fork_rows(&mut self) -> Option<Self>;
    /// In a fork: the length of its output, when nothing is pending (no
    /// error of the last line waits to be raised); the fork can be cut back
    /// to such a mark.
    fn rows_mark(&self) -> Option<usize>;
    /// Whether this sink, now (after the lines before the cut), is in the
    /// state its fork assumed.
    fn joins_rows(&self) -> bool;
    /// Append the fork's output up to `mark`: `rows` rows, the last of
    /// them on line `line`.
    fn join_rows(&mut self, fork: Self, mark: usize, rows: u64, line: u64);
}

/// One step of a header's field list, flattened in pre-order (the Python
/// builder's `_program`): `{id,geo{lat,lon}}` is
/// `Leaf("id"), Open("geo"), Leaf("lat"), Leaf("lon"), Close`.
/// A builder walks it with a stack; no recursion is needed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldOp {
    Leaf(String),
    Open(String),
    Close,
}

/// A tabular header (§6, §9.3, §9.5).
#[derive(Clone, Copy, Debug)]
pub struct Table<'a> {
    pub fields: &'a [FieldOp],
    /// The declared N (rows, or entries of a keyed table).
    pub declared: u64,
    pub keyed: bool,
    /// `b','`, `b'\t'` or `b'|'`.
    pub delimiter: u8,
    /// Number of leaf fields (cells per row).
    pub width: usize,
    /// Where the header is, for errors a consumer raises (schema drift).
    pub line: u64,
    pub line_text: &'a str,
}

/// The decoded cells of one row (or inline array): borrowed from the line
/// and the machine's scratch buffer, valid for the duration of the call.
#[derive(Clone, Copy)]
pub struct Cells<'a> {
    pub(crate) line: &'a str,
    pub(crate) scratch: &'a str,
    pub(crate) toks: &'a [Tok],
}

impl<'a> Cells<'a> {
    pub fn len(&self) -> usize {
        self.toks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.toks.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<Scalar<'a>> {
        self.toks.get(i).map(|t| t.scalar(self.line, self.scratch))
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = Scalar<'a>> + 'a {
        let (line, scratch) = (self.line, self.scratch);
        self.toks.iter().map(move |t| t.scalar(line, scratch))
    }
}

impl std::fmt::Debug for Cells<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}
