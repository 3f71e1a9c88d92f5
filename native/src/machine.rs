//! The decoder state machine: lines in, sink calls out.  No I/O.
//!
//! Rule 1 (after h11, as in `toonstream/_reference/machine.py`, which this mirrors
//! decision for decision): everything that decides what a line means lives
//! in this module.  The machine sees one complete line at a time and keeps
//! only a stack of open scopes, so its memory does not grow with the number
//! of lines or rows; duplicate-key detection in strict mode is the one
//! exception (it remembers the keys of each open object).
//!
//! Each open scope is a [`Frame`]; the line handler is chosen by the
//! innermost frame's kind.  A frame's `depth` is the depth at which its
//! content lines stand (§1.3 "content depth"): a shallower line closes it; a
//! deeper one that no frame expects is an error (§8, §14.2).
//!
//! Nothing recurses: scopes are a `Vec`, field lists are parsed with an
//! explicit stack of open groups.
//!
//! Positions are byte offsets into the current line; they become character
//! columns only when an error is located (`error::column_of`), so columns
//! match the Python engine's `str` indexes.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::error::{codes, column_of, DecodeError, Fail, Stop};
use crate::events::{Cells, FieldOp, Sink, Table};
use crate::keys::KeyIndex;
use crate::scalars::{self, Tok};

/// Distinct field lists remembered per delimiter (headers repeat: a table in
/// every list item is parsed once; the Python engine caches the same way).
const FIELDS_CACHE_SIZE: usize = 256;

/// A parsed field list: its ops, leaf count, and its length in bytes.
type CachedFields = (Arc<[FieldOp]>, usize, usize);

/// Longest declared length accepted in a header (digits).
const MAX_LENGTH_DIGITS: usize = 19;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// fields at `depth`
    Object,
    /// "- " items at `depth` (§9.4)
    List,
    /// rows at `depth` (§9.3)
    Table,
    /// entry rows at `depth` (§9.5)
    Keyed,
}

impl Kind {
    fn items(self) -> &'static str {
        match self {
            Kind::List => "list items",
            Kind::Table => "rows",
            _ => "entry rows",
        }
    }
}

/// Root states (§5 root form).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Root {
    /// no content line yet
    New,
    /// the root object frame is at the bottom of the stack
    Object,
    /// a root array or keyed root object is open
    Array,
    /// the root form is complete: any further content is trailing
    Done,
}

/// The keys of one open object (strict mode): short keys in one arena,
/// searched linearly while few (the usual record), through a hash table of
/// their hashes past that (a keyed table's entries: no allocation per key,
/// each key hashed once).  Cleared, not freed, when its frame is reused.
#[derive(Default)]
struct KeySet {
    /// the keys longer than [`TAG_EXACT`] bytes (a shorter one is its tag)
    arena: String,
    /// each key's [`key_tag`] (compared first) and its span in `arena`
    spans: Vec<(u64, usize, usize)>,
    /// past [`KEYSET_LINEAR`] keys: their index (key `i` is `spans[i]`)
    big: Option<KeyIndex>,
}

/// Keys up to this many bytes are told apart by their tag alone.
const TAG_EXACT: usize = 7;

/// A key's first 7 bytes and its length (capped at 255) in one word: keys
/// with different tags differ, and a key of at most [`TAG_EXACT`] bytes is
/// its tag (no other key has the same).
fn key_tag(key: &str) -> u64 {
    let b = key.as_bytes();
    let head = match b.first_chunk::<8>() {
        Some(w) => u64::from_le_bytes(*w) & 0x00ff_ffff_ffff_ffff,
        // (a shift loop: a variable-length copy would be a memcpy call)
        None => b
            .iter()
            .enumerate()
            .fold(0u64, |t, (i, &c)| t | u64::from(c) << (8 * i)),
    };
    head | (b.len().min(255) as u64) << 56
}

const KEYSET_LINEAR: usize = 16;

impl KeySet {
    fn clear(&mut self) {
        self.arena.clear();
        self.spans.clear();
        self.big = None;
    }

    /// Adds `key`; false if it was already there.
    fn insert(&mut self, key: &str) -> bool {
        if self.big.is_some() {
            return self.insert_hashed(key);
        }
        let arena = &self.arena;
        let tag = key_tag(key);
        let short = key.len() <= TAG_EXACT;
        if self
            .spans
            .iter()
            .any(|&(t, s, e)| t == tag && (short || arena.get(s..e) == Some(key)))
        {
            return false;
        }
        if self.spans.len() >= KEYSET_LINEAR {
            let mut big = KeyIndex::default();
            big.reserve(self.spans.len());
            for (i, &(t, s, e)) in self.spans.iter().enumerate() {
                // (a short key's bytes are its tag's)
                let bytes = t.to_le_bytes();
                let text = match arena.get(s..e) {
                    Some(k) if s < e => k.as_bytes(),
                    _ => &bytes[..((t >> 56) as usize).min(TAG_EXACT)],
                };
                big.add(big.hash(text), i);
            }
            self.big = Some(big);
            return self.insert_hashed(key);
        }
        self.push(key, tag);
        true
    }

    /// `insert` past [`KEYSET_LINEAR`] keys.
    fn insert_hashed(&mut self, key: &str) -> bool {
        let Some(big) = &self.big else {
            return false;
        };
        let h = big.hash(key.as_bytes());
        if big.find(h, |j| self.key_is(j, key)) {
            return false;
        }
        let i = self.spans.len();
        if let Some(big) = &mut self.big {
            big.add(h, i);
        }
        self.push(key, key_tag(key));
        true
    }

    fn push(&mut self, key: &str, tag: u64) {
        if key.len() <= TAG_EXACT {
            self.spans.push((tag, 0, 0));
            return;
        }
        let start = self.arena.len();
        self.arena.push_str(key);
        self.spans.push((tag, start, self.arena.len()));
    }

    /// Whether the keys are in insertion order (not yet a hash set).
    fn ordered(&self) -> bool {
        self.big.is_none()
    }

    /// Whether the `i`-th key (in insertion order: the spans keep it, hashed or not) is `key`.
    #[inline]
    fn key_is(&self, i: usize, key: &str) -> bool {
        match self.spans.get(i) {
            Some(&(t, s, e)) => {
                t == key_tag(key) && (key.len() <= TAG_EXACT || self.arena.get(s..e) == Some(key))
            }
            None => false,
        }
    }

    /// These keys become the first `n` of `other` (in order, not a hash set).
    fn copy_prefix(&mut self, other: &KeySet, n: usize) {
        self.clear();
        let spans = &other.spans[..n.min(other.spans.len())];
        let end = spans.iter().map(|&(_, _, e)| e).max().unwrap_or(0);
        self.arena.push_str(other.arena.get(..end).unwrap_or(""));
        self.spans.extend_from_slice(spans);
    }
}

/// A frame's `matched` when its keys are checked in its own [`KeySet`].
const DIVERGED: usize = usize::MAX;

/// Popped frames kept for reuse (their buffers keep their capacity).
const SPARE_FRAMES: usize = 64;
/// A spare frame's header-line copy larger than this is not kept.
const SPARE_TEXT: usize = 4096;

struct Frame {
    kind: Kind,
    depth: usize,
    length: u64,
    count: u64,
    delim: u8,
    width: usize,
    /// strict mode (objects, keyed tables): check duplicate keys in `keys`
    check_keys: bool,
    /// (boxed: a frame is moved on every push, pop and reuse; small, it moves in registers)
    keys: Box<KeySet>,
    /// strict objects: how many keys so far are, in order, the keys of the
    /// last object closed at this stack position (`Machine::templates`),
    /// which are distinct, so they need no set; [`DIVERGED`] once one is
    /// not (the keys are then in `keys`)
    matched: usize,
    /// where the scope was opened (for count errors); the text is kept only
    /// for array scopes in strict mode, the only ones that can report it
    line: u64,
    text: String,
}

/// Where a fork of a table's rows was taken ([`Machine::fork_rows`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ForkPoint {
    scopes: usize,
    opened: u64,
}

/// A parsed §6 header: `key[N:?delim]{fields}: rest` (fields in `Machine::fields`).
struct Header {
    length: u64,
    keyed: bool,
    delim: u8,
    has_fields: bool,
    width: usize,
    /// the byte just after the header's colon
    rest: usize,
}

/// Why a line that looked like a header is not one (returned, not raised:
/// non-strict decoders fall through to key-value parsing, §6).
struct Malformed {
    code: &'static str,
    message: Cow<'static, str>,
    at: usize,
}

fn malformed(code: &'static str, message: impl Into<Cow<'static, str>>, at: usize) -> Malformed {
    Malformed {
        code,
        message: message.into(),
        at,
    }
}

/// The decoder's options that the machine needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub indent_size: usize,
    pub strict: bool,
    pub max_depth: usize,
    pub max_number_length: usize,
    pub max_fields: usize,
}

pub(crate) struct Machine {
    lim: Limits,
    stack: Vec<Frame>,
    root: Root,
    /// first blank line since the last content line (0: none)
    blank_line: u64,
    /// that blank line's text (spaces or tabs), for its error's line text
    blank_text: String,
    /// open array scopes that already hold an item
    started_arrays: usize,
    /// scopes opened so far (a fork of a table's rows checks that none was)
    opened: u64,
    /// the current line's number
    lineno: u64,
    // Reused buffers: cell spans, converted tokens, unescaped text, header fields.
    spans: Vec<(usize, usize)>,
    toks: Vec<Tok>,
    scratch: String,
    fields: Vec<FieldOp>,
    /// the last parsed header's field list (what `start_table` hands over)
    header_fields: Arc<[FieldOp]>,
    /// field lists by their text (from "{" to the end of the line), per delimiter
    fields_cache: [HashMap<Box<[u8]>, CachedFields>; 3],
    /// popped frames, for reuse
    spare: Vec<Frame>,
    /// per stack position, the keys of the last strict object closed there
    /// whose keys were not all those of the one before (records repeat
    /// their keys: a key that is the template's next one needs no set)
    templates: Vec<KeySet>,
    /// where the current content starts (after the indentation, or after a
    /// list item's "- "): errors "at the line's content" point here
    col_base: usize,
}

type R<E> = Result<(), Stop<E>>;

/// A sink call, its error wrapped.
macro_rules! emit {
    ($e:expr) => {
        $e.map_err(Stop::Sink)?
    };
}

/// The column where the header on line `text` starts: after the indentation
/// and a list item's hyphen (a count error points at it, as an inline
/// array's does).
fn header_column(text: &str) -> u64 {
    let b = text.as_bytes();
    let mut i = b.iter().take_while(|&&c| c == b' ').count();
    if b[i..].starts_with(b"- ") {
        i += 2;
    }
    i as u64 + 1
}

impl Machine {
    pub(crate) fn new(lim: Limits) -> Self {
        Machine {
            lim,
            stack: Vec::new(),
            root: Root::New,
            blank_line: 0,
            blank_text: String::new(),
            started_arrays: 0,
            opened: 0,
            lineno: 0,
            spans: Vec::new(),
            toks: Vec::new(),
            scratch: String::new(),
            fields: Vec::new(),
            header_fields: Arc::from(Vec::new()),
            fields_cache: Default::default(),
            spare: Vec::new(),
            templates: Vec::new(),
            col_base: 0,
        }
    }

    /// Open scopes (for tests of the memory bound).
    #[cfg(test)]
    pub(crate) fn open_scopes(&self) -> usize {
        self.stack.len()
    }

    // ------------------------------------------------------------ forks

    /// A machine for the lines that continue the innermost tabular array
    /// (its rows, from a line boundary, on another thread: see
    /// `crate::split`), and what must not change before its rows can be
    /// joined ([`Machine::joins_rows`]).  `None` outside a tabular array.
    ///
    /// The fork's one scope is that table, already holding a row, with no
    /// declared length (the count check is the join's): every line it
    /// reads goes through [`Machine::line`] as here, so a row is split,
    /// checked and typed by the same code.  It is never laxer than this
    /// machine at the cut (it assumes a started array, so a blank line then
    /// a row fails in strict mode), and what it does after a line that is
    /// not one of the table's rows is not used.
    pub(crate) fn fork_rows(&self) -> Option<(Machine, ForkPoint)> {
        let top = self.stack.last().filter(|f| f.kind == Kind::Table)?;
        let mut fork = Machine::new(self.lim);
        fork.stack.push(Frame {
            kind: Kind::Table,
            depth: top.depth,
            length: u64::MAX,
            count: 1,
            delim: top.delim,
            width: top.width,
            check_keys: false,
            keys: Box::default(),
            matched: DIVERGED,
            line: top.line,
            text: String::new(),
        });
        fork.root = Root::Array;
        fork.started_arrays = 1;
        let at = ForkPoint {
            scopes: self.stack.len(),
            opened: self.opened,
        };
        Some((fork, at))
    }

    /// Rows the innermost tabular array still declares (0 outside one).
    pub(crate) fn rows_left(&self) -> u64 {
        match self.stack.last() {
            Some(f) if f.kind == Kind::Table => f.length.saturating_sub(f.count),
            _ => 0,
        }
    }

    /// In a fork: the rows it read, when it is still in its table with
    /// nothing pending (a blank line waits for the next content line).
    pub(crate) fn forked_rows(&self) -> Option<u64> {
        match self.stack.as_slice() {
            [f] if self.blank_line == 0 => Some(f.count - 1),
            _ => None,
        }
    }

    /// In a fork: still in its table (perhaps after blank lines).
    pub(crate) fn in_forked_table(&self) -> bool {
        self.stack.len() == 1
    }

    /// Whether `rows` rows read by the fork taken at `at` continue this
    /// machine as it is now (after the lines before the cut): the same
    /// table on top (no scope opened since, none closed), which holds a
    /// row already, no blank line pending, and room for them in its count.
    pub(crate) fn joins_rows(&self, at: &ForkPoint, rows: u64) -> bool {
        self.opened == at.opened
            && self.stack.len() == at.scopes
            && self.blank_line == 0
            && self.stack.last().is_some_and(|f| {
                f.kind == Kind::Table
                    && f.count >= 1
                    && (!self.lim.strict || f.count.saturating_add(rows) <= f.length)
            })
    }

    /// Count the fork's `rows` (see [`Machine::joins_rows`]), the last on line `lineno`.
    pub(crate) fn join_rows(&mut self, rows: u64, lineno: u64) {
        if let Some(f) = self.stack.last_mut() {
            f.count += rows;
        }
        self.lineno = lineno;
    }

    // ------------------------------------------------------------ errors

    fn err(
        &self,
        code: &'static str,
        message: impl Into<String>,
        text: &str,
        at: usize,
    ) -> DecodeError {
        DecodeError::new(code, message, self.lineno, column_of(text, at), text)
    }

    fn located(&self, f: Fail, text: &str) -> DecodeError {
        self.err(f.code, f.message, text, f.at)
    }

    fn fail<E>(
        &self,
        code: &'static str,
        message: impl Into<String>,
        text: &str,
        at: usize,
    ) -> R<E> {
        Err(Stop::Decode(self.err(code, message, text, at)))
    }

    // ------------------------------------------------------------ driving

    /// End of input: close every open scope (running the count checks).
    pub(crate) fn close<S: Sink>(&mut self, sink: &mut S) -> R<S::Error> {
        while !self.stack.is_empty() {
            self.pop(sink)?;
        }
        if self.root == Root::New {
            // §5: an empty document is an empty object
            emit!(sink.start_object());
            emit!(sink.end_object());
            self.root = Root::Done;
        }
        Ok(())
    }

    /// One complete line (without its terminator).
    pub(crate) fn line<S: Sink>(&mut self, lineno: u64, text: &str, sink: &mut S) -> R<S::Error> {
        self.lineno = lineno;
        emit!(sink.start_line(lineno));
        let b = text.as_bytes();
        let indent = b.iter().take_while(|&&c| c == b' ').count();
        let content = &b[indent..];
        // §12 blank line: remembered; an error only if the next content line
        // shows it sat inside an array span.
        let blank = match content.first() {
            None => true,
            Some(b'\t') => content.iter().all(|&c| c == b' ' || c == b'\t'),
            Some(_) => false,
        };
        if blank {
            if self.blank_line == 0 {
                self.blank_line = lineno;
                self.blank_text.clear();
                self.blank_text.push_str(text);
            }
            return Ok(());
        }
        let first = content[0];
        if first == b'#' {
            return Ok(()); // §5.1 comment line, removed before anything else
        }
        if first == b'\t' {
            return self.fail(codes::TAB_INDENT, "tab in indentation", text, indent);
        }
        let size = self.lim.indent_size.max(1);
        // (a power of two, the usual 2 or 4: a shift and a mask, not two divisions per line)
        let (depth, rem) = if size.is_power_of_two() {
            (indent >> size.trailing_zeros(), indent & (size - 1))
        } else {
            (indent / size, indent % size)
        };
        if rem != 0 && self.lim.strict {
            return self.fail(
                codes::BAD_INDENT,
                format!("indentation of {indent} spaces is not a multiple of {size}"),
                text,
                indent,
            );
        }
        if depth > self.lim.max_depth {
            return self.fail(codes::TOO_DEEP, self.deep_msg(), text, indent);
        }
        let mut end = b.len();
        while end > indent && b[end - 1] == b' ' {
            end -= 1;
        }
        while self.stack.last().is_some_and(|f| depth < f.depth) {
            self.pop(sink)?;
        }
        if self.blank_line != 0 {
            let blank = self.blank_line;
            self.blank_line = 0;
            if self.started_arrays > 0 && self.lim.strict {
                return Err(Stop::Decode(DecodeError::new(
                    codes::BLANK_LINE,
                    "blank line inside an array",
                    blank,
                    1,
                    &self.blank_text,
                )));
            }
        }
        self.col_base = indent;
        let (kind, top_depth, top_count) = match self.stack.last() {
            None => {
                if self.root == Root::New {
                    return self.root_line(text, indent, end, depth, sink);
                }
                return self.fail(
                    codes::TRAILING_CONTENT,
                    "content after the end of the root value",
                    text,
                    indent,
                );
            }
            Some(f) => (f.kind, f.depth, f.count),
        };
        if depth > top_depth {
            if top_count == 0 {
                return self.fail(
                    codes::DEPTH_JUMP,
                    "indentation jumps more than one level",
                    text,
                    indent,
                );
            }
            return self.fail(
                codes::OVER_INDENTED,
                "line is indented deeper than its scope allows",
                text,
                indent,
            );
        }
        match kind {
            Kind::Object => self.object_line(text, indent, end, depth, sink),
            Kind::List => self.list_line(text, indent, end, depth, sink),
            Kind::Table => self.table_line(text, indent, end, sink),
            Kind::Keyed => self.keyed_line(text, indent, end, sink),
        }
    }

    fn deep_msg(&self) -> String {
        format!("nesting deeper than max_depth ({})", self.lim.max_depth)
    }

    fn root_line<S: Sink>(
        &mut self,
        text: &str,
        cs: usize,
        ce: usize,
        depth: usize,
        sink: &mut S,
    ) -> R<S::Error> {
        if depth != 0 {
            return self.fail(
                codes::OVER_INDENTED,
                "the first line must not be indented",
                text,
                cs,
            );
        }
        let b = text.as_bytes();
        let colon = scalars::find_unquoted(b, b':', cs, ce);
        if b.get(cs) == Some(&b'[') {
            if &b[cs..ce] == b"[]" {
                // §9.1 empty root array
                emit!(sink.start_array(0));
                emit!(sink.end_array());
                self.root = Root::Done;
                return Ok(());
            }
            if colon.is_some() {
                match self.parse_header(text, cs, ce)? {
                    Ok(h) => {
                        self.root = Root::Array;
                        self.open_header(text, &h, 1, cs, sink)?;
                        if self.stack.is_empty() {
                            self.root = Root::Done; // inline root array: complete already
                        }
                        return Ok(());
                    }
                    Err(m) => {
                        if self.lim.strict {
                            return self.fail(m.code, m.message, text, m.at);
                        }
                    }
                }
            }
        }
        if colon.is_none() {
            // §5: a single primitive
            self.scalar(text, cs, ce, sink)?;
            self.root = Root::Done;
            return Ok(());
        }
        self.root = Root::Object;
        // (the root object is not counted against max_depth, as in Python)
        self.open(Kind::Object, 0, text, (0, b',', 0));
        emit!(sink.start_object());
        self.object_line(text, cs, ce, 0, sink)
    }

    // ------------------------------------------------------------ scopes

    /// Open a scope; `shape` is (declared length, delimiter, width) for arrays.
    fn push<E>(
        &mut self,
        kind: Kind,
        depth: usize,
        text: &str,
        cs: usize,
        shape: (u64, u8, usize),
    ) -> R<E> {
        if self.stack.len() >= self.lim.max_depth {
            return self.fail(codes::TOO_DEEP, self.deep_msg(), text, cs);
        }
        self.open(kind, depth, text, shape);
        Ok(())
    }

    fn open(&mut self, kind: Kind, depth: usize, text: &str, shape: (u64, u8, usize)) {
        let strict = self.lim.strict;
        let mut f = self.spare.pop().unwrap_or_else(|| Frame {
            kind,
            depth,
            length: 0,
            count: 0,
            delim: b',',
            width: 0,
            check_keys: false,
            keys: Box::default(),
            matched: DIVERGED,
            line: 0,
            text: String::new(),
        });
        f.kind = kind;
        f.depth = depth;
        (f.length, f.delim, f.width) = shape;
        f.count = 0;
        f.check_keys = strict && matches!(kind, Kind::Object | Kind::Keyed);
        f.keys.clear();
        f.matched = 0;
        f.line = self.lineno;
        f.text.clear();
        if strict && kind != Kind::Object {
            f.text.push_str(text);
        }
        self.stack.push(f);
        self.opened += 1;
    }

    fn pop<S: Sink>(&mut self, sink: &mut S) -> R<S::Error> {
        let frame = match self.stack.pop() {
            Some(f) => f,
            None => return Ok(()),
        };
        if frame.kind == Kind::Object {
            let frame = self.keep_template(frame);
            self.recycle(frame);
            emit!(sink.end_object());
            return Ok(());
        }
        if frame.count > 0 {
            self.started_arrays = self.started_arrays.saturating_sub(1);
        }
        if self.lim.strict && frame.count != frame.length {
            let ended = if self.lineno > frame.line {
                format!(" (scope ended at line {})", self.lineno)
            } else {
                String::new()
            };
            return Err(Stop::Decode(DecodeError::new(
                codes::COUNT_MISMATCH,
                format!(
                    "declared {} {}, found {}{}",
                    frame.length,
                    frame.kind.items(),
                    frame.count,
                    ended
                ),
                frame.line,
                header_column(&frame.text),
                &frame.text,
            )));
        }
        let kind = frame.kind;
        let frame = self.keep_template(frame);
        self.recycle(frame);
        match kind {
            Kind::List => emit!(sink.end_array()),
            Kind::Table => emit!(sink.end_table(false)),
            _ => emit!(sink.end_table(true)),
        }
        if self.stack.is_empty() && self.root == Root::Array {
            self.root = Root::Done;
        }
        Ok(())
    }

    /// A popped strict object whose keys were checked in its own set
    /// leaves them as the template of its stack position (see `templates`);
    /// the frame takes the old template's buffers.
    fn keep_template(&mut self, mut frame: Frame) -> Frame {
        if frame.check_keys && frame.matched == DIVERGED && frame.keys.ordered() {
            let at = self.stack.len();
            if self.templates.len() <= at {
                self.templates.resize_with(at + 1, KeySet::default);
            }
            std::mem::swap(&mut *frame.keys, &mut self.templates[at]);
        }
        frame
    }

    fn recycle(&mut self, mut frame: Frame) {
        if self.spare.len() < SPARE_FRAMES {
            if frame.text.capacity() > SPARE_TEXT {
                frame.text = String::new();
            }
            if frame.keys.arena.capacity() > SPARE_TEXT {
                frame.keys = Box::default();
            }
            self.spare.push(frame);
        }
    }

    /// Count an item of the innermost array frame.
    fn count_item<E>(&mut self, text: &str, cs: usize) -> R<E> {
        let strict = self.lim.strict;
        let (count, length, kind, line) = match self.stack.last_mut() {
            Some(f) => {
                f.count += 1;
                (f.count, f.length, f.kind, f.line)
            }
            None => return Ok(()),
        };
        if count == 1 {
            self.started_arrays += 1;
        }
        if strict && count > length {
            return self.fail(
                codes::COUNT_MISMATCH,
                format!(
                    "more {} than the {length} declared at line {line}",
                    kind.items()
                ),
                text,
                cs,
            );
        }
        Ok(())
    }

    // ------------------------------------------------------------ objects

    /// A line at an object's field depth: a key-value line or a keyed header (§8).
    fn object_line<S: Sink>(
        &mut self,
        text: &str,
        cs: usize,
        ce: usize,
        depth: usize,
        sink: &mut S,
    ) -> R<S::Error> {
        let n = self.stack.len();
        let key = self.field(text, cs, ce, depth, false, sink)?;
        // (the object is the frame below any scope the field opened)
        if let Some(frame) = self.stack.get_mut(n - 1) {
            frame.count += 1;
        }
        self.claim_key(n - 1, &key, text, cs)
    }

    /// Strict mode: record `key` in the object (or keyed table) at `at` on the stack; a key
    /// it already holds is `duplicate_key`, located at the key's start `cs`.
    fn claim_key<E>(&mut self, at: usize, key: &str, text: &str, cs: usize) -> R<E> {
        let dup = match self.stack.get_mut(at) {
            Some(frame) if frame.check_keys => {
                let template = self.templates.get(at);
                if frame.matched != DIVERGED {
                    if template.is_some_and(|t| t.key_is(frame.matched, key)) {
                        // (the template's keys are distinct: so far these are too)
                        frame.matched += 1;
                        return Ok(());
                    }
                    if let Some(t) = template {
                        frame.keys.copy_prefix(t, frame.matched);
                    }
                    frame.matched = DIVERGED;
                }
                !frame.keys.insert(key)
            }
            _ => false,
        };
        if dup {
            return self.fail(
                codes::DUPLICATE_KEY,
                format!("duplicate key {key:?}"),
                text,
                cs,
            );
        }
        Ok(())
    }

    /// Parse a field line at `depth`; emit its events; open its scope if any.
    /// Returns the key (for duplicate detection).
    fn field<'t, S: Sink>(
        &mut self,
        text: &'t str,
        cs: usize,
        ce: usize,
        depth: usize,
        keyless_ok: bool,
        sink: &mut S,
    ) -> Result<Cow<'t, str>, Stop<S::Error>> {
        let b = text.as_bytes();
        let c = &b[cs..ce];
        // One scan to the first colon, quote or bracket: with no quote before
        // it, the first colon is the key's and a bracket before it is a header's.
        let (colon, br) = match find_key_end(c).map(|i| (cs + i, c[i])) {
            None => (None, None),
            Some((k, b':')) => (Some(k), None),
            Some((p, b'[')) => (scalars::find_unquoted(b, b':', p + 1, ce), Some(p)),
            Some(_) => {
                let colon = scalars::find_unquoted(b, b':', cs, ce);
                let br = if colon.is_some() {
                    scalars::find_unquoted(b, b'[', cs, ce)
                } else {
                    None
                };
                (colon, br)
            }
        };
        let colon = match colon {
            Some(k) => k,
            None => {
                self.fail(codes::MISSING_COLON, "missing colon after key", text, cs)?;
                return Ok(Cow::Borrowed(""));
            }
        };
        if let Some(br) = br.filter(|&p| p < colon) {
            // None: keyless header; Some(None): not a header at all
            let key: Option<Option<Cow<'t, str>>> = if br == cs {
                Some(None)
            } else if b[cs] == b'"' {
                Some(Some(
                    scalars::decode_key(text, cs, br).map_err(|f| self.located(f, text))?,
                ))
            } else if scalars::is_unquoted_key(&b[cs..br]) {
                Some(Some(Cow::Borrowed(&text[cs..br])))
            } else {
                None // falls through to key-value below
            };
            if let Some(key) = key {
                let m = match self.parse_header(text, br, ce)? {
                    Ok(h) => {
                        if key.is_none() && (h.has_fields || !keyless_ok) {
                            if h.has_fields {
                                malformed(
                                    codes::KEYLESS_HEADER,
                                    "a tabular header without a key is only valid at the root",
                                    cs,
                                )
                            } else {
                                malformed(
                                    codes::KEYLESS_HEADER,
                                    "a header without a key is only valid at the root or as a list item",
                                    cs,
                                )
                            }
                        } else {
                            if let Some(k) = &key {
                                emit!(sink.key(k));
                            }
                            self.open_header(text, &h, depth + 1, cs, sink)?;
                            return Ok(key.unwrap_or(Cow::Borrowed("")));
                        }
                    }
                    Err(m) => m,
                };
                if self.lim.strict {
                    self.fail(m.code, m.message, text, m.at)?;
                }
                // non-strict: §6 fall-through, the text before the colon is a literal key
            }
        }
        let (ks, ke) = scalars::trim_spaces(b, cs, colon);
        let key = if b.get(ks) == Some(&b'"') {
            scalars::decode_key(text, ks, ke).map_err(|f| self.located(f, text))?
        } else {
            Cow::Borrowed(&text[ks..ke])
        };
        let (vs, ve) = scalars::trim_spaces(b, colon + 1, ce);
        emit!(sink.key(&key));
        if vs == ve {
            emit!(sink.start_object());
            self.push::<S::Error>(Kind::Object, depth + 1, text, cs, (0, b',', 0))?;
        } else if &b[vs..ve] == b"[]" {
            emit!(sink.start_array(0));
            emit!(sink.end_array());
        } else {
            self.scalar(text, vs, ve, sink)?;
        }
        Ok(key)
    }

    /// Convert `text[s..e]` and hand it to the sink as one scalar.
    fn scalar<S: Sink>(&mut self, text: &str, s: usize, e: usize, sink: &mut S) -> R<S::Error> {
        self.scratch.clear();
        let tok = scalars::convert(text, s, e, self.lim.max_number_length, &mut self.scratch)
            .map_err(|f| self.located(f, text))?;
        emit!(sink.scalar(tok.scalar(text, &self.scratch)));
        Ok(())
    }

    // ------------------------------------------------------------ headers

    /// Emit the start of a header's value and open its scope (content at `depth`).
    fn open_header<S: Sink>(
        &mut self,
        text: &str,
        h: &Header,
        depth: usize,
        cs: usize,
        sink: &mut S,
    ) -> R<S::Error> {
        let b = text.as_bytes();
        let ce = b.len();
        let (rs, re) = scalars::trim_spaces(b, h.rest, ce);
        if h.has_fields {
            if rs < re {
                return self.fail(
                    codes::CONTENT_AFTER_HEADER,
                    "content after a tabular header's colon",
                    text,
                    h.rest,
                );
            }
            let kind = if h.keyed { Kind::Keyed } else { Kind::Table };
            self.push::<S::Error>(kind, depth, text, cs, (h.length, h.delim, h.width))?;
            let table = Table {
                fields: &self.header_fields,
                declared: h.length,
                keyed: h.keyed,
                delimiter: h.delim,
                width: h.width,
                line: self.lineno,
                line_text: text,
            };
            emit!(sink.start_table(&table));
            return Ok(());
        }
        if rs == re {
            emit!(sink.start_array(h.length));
            self.push::<S::Error>(Kind::List, depth, text, cs, (h.length, h.delim, 0))?;
            return Ok(());
        }
        // §9.1 inline primitive array (split before trimming: cells are
        // trimmed one by one)
        let mut spans = std::mem::take(&mut self.spans);
        scalars::split_cells(b, h.rest, trim_end(b, h.rest), h.delim, &mut spans);
        let r = (|| {
            if self.lim.strict && spans.len() as u64 != h.length {
                return self.fail(
                    codes::COUNT_MISMATCH,
                    format!("declared {} values, found {}", h.length, spans.len()),
                    text,
                    cs,
                );
            }
            self.convert_cells(text, &spans)?;
            emit!(sink.start_array(h.length));
            emit!(sink.values(&Cells {
                line: text,
                scratch: &self.scratch,
                toks: &self.toks
            }));
            emit!(sink.end_array());
            Ok(())
        })();
        self.spans = spans;
        r
    }

    /// Parse `[N:?delim]{fields}:rest` at `text[br] == '['`, within `..ce` (§6).
    /// The field list goes to `self.fields`.
    #[allow(clippy::type_complexity)]
    fn parse_header<E>(
        &mut self,
        text: &str,
        br: usize,
        ce: usize,
    ) -> Result<Result<Header, Malformed>, Stop<E>> {
        let b = text.as_bytes();
        let close = match memchr::memchr(b']', &b[br..ce]) {
            Some(i) => br + i,
            None => {
                return Ok(Err(malformed(
                    codes::BAD_HEADER,
                    "unterminated bracket segment",
                    br,
                )))
            }
        };
        let mut inner = &b[br + 1..close];
        let mut delim = b',';
        if let Some(&d @ (b'\t' | b'|')) = inner.last() {
            delim = d;
            inner = &inner[..inner.len() - 1];
        }
        let keyed = inner.last() == Some(&b':');
        if keyed {
            inner = &inner[..inner.len() - 1];
        }
        if !scalars::is_length(inner) {
            if inner.is_empty() {
                return Ok(Err(malformed(
                    codes::BAD_LENGTH,
                    "bracket segment without a length",
                    br,
                )));
            }
            // (the Python engine's message quotes the whole bracket segment)
            let segment = String::from_utf8_lossy(&b[br + 1..close]);
            return Ok(Err(malformed(
                codes::BAD_LENGTH,
                format!("invalid length [{segment}]"),
                br,
            )));
        }
        if inner.len() > MAX_LENGTH_DIGITS {
            return Ok(Err(malformed(
                codes::BAD_LENGTH,
                "declared length too large",
                br,
            )));
        }
        // 19 digits always fit a u64
        let length = inner.iter().fold(0u64, |acc, &d| {
            acc.saturating_mul(10).saturating_add(u64::from(d - b'0'))
        });
        let mut pos = close + 1;
        let mut has_fields = false;
        let mut width = 0;
        if b.get(pos) == Some(&b'{') && pos < ce {
            let slot = match delim {
                b',' => 0,
                b'\t' => 1,
                _ => 2,
            };
            let rest = &b[pos..ce];
            let cached = self.fields_cache[slot].get(rest).cloned();
            let (fields, w, len) = match cached {
                Some(c) => c,
                None => {
                    self.fields.clear();
                    match self.parse_fields(text, pos, ce, delim)? {
                        Ok((w, end)) => {
                            let fields: Arc<[FieldOp]> =
                                Arc::from(std::mem::take(&mut self.fields));
                            let cache = &mut self.fields_cache[slot];
                            if cache.len() >= FIELDS_CACHE_SIZE {
                                cache.clear();
                            }
                            let entry = (fields, w, end - pos);
                            cache.insert(rest.into(), entry.clone());
                            entry
                        }
                        Err(m) => return Ok(Err(m)),
                    }
                }
            };
            self.header_fields = fields;
            width = w;
            pos += len;
            has_fields = true;
        }
        if pos >= ce || b[pos] != b':' {
            return Ok(Err(malformed(
                codes::BAD_HEADER,
                "unexpected characters in header before ':'",
                pos,
            )));
        }
        if keyed && !has_fields {
            return Ok(Err(malformed(
                codes::BAD_HEADER,
                "a keyed header needs a field list",
                pos,
            )));
        }
        Ok(Ok(Header {
            length,
            keyed,
            delim,
            has_fields,
            width,
            rest: pos + 1,
        }))
    }

    /// Parse a fields segment at `text[pos] == '{'`, nested groups included
    /// (§6, §9.3), into `self.fields`.  Returns (leaf count, offset after the
    /// closing brace).  Iterative: a count of open groups, no recursion.
    #[allow(clippy::type_complexity)]
    fn parse_fields<E>(
        &mut self,
        text: &str,
        pos: usize,
        ce: usize,
        delim: u8,
    ) -> Result<Result<(usize, usize), Malformed>, Stop<E>> {
        let b = text.as_bytes();
        let n = ce;
        let mut open = 1usize; // groups open
        let mut group_len: Vec<usize> = vec![0]; // entries in each open group
        let mut i = pos + 1;
        let mut width = 0usize;
        loop {
            // ---- a field entry: a name, then "{" (nested group) or an end of entry
            while i < n && b[i] == b' ' {
                i += 1;
            }
            let name: String = if i < n && b[i] == b'"' {
                let (name, end) =
                    scalars::quoted_str(text, i, n).map_err(|f| self.located(f, text))?;
                i = end;
                while i < n && b[i] == b' ' {
                    i += 1;
                }
                name.into_owned()
            } else {
                let start = i;
                while i < n && !matches!(b[i], b'{' | b'}' | b'"') && b[i] != delim {
                    i += 1;
                }
                let (s, e) = scalars::trim_spaces(b, start, i);
                if s == e {
                    if i < n && b[i] == b'}' && group_len.last() == Some(&0) {
                        return Ok(Err(malformed(codes::BAD_FIELDS, "empty field list", start)));
                    }
                    return Ok(Err(malformed(codes::BAD_FIELDS, "empty field name", start)));
                }
                let name = &b[s..e];
                for d in [b',', b'\t', b'|'] {
                    if d != delim && name.contains(&d) {
                        return Ok(Err(malformed(
                            codes::DELIMITER_MISMATCH,
                            "field list uses a different delimiter than its bracket segment",
                            start,
                        )));
                    }
                }
                if name.contains(&b':') {
                    return Ok(Err(malformed(
                        codes::BAD_FIELDS,
                        "unmatched brace in field list",
                        start,
                    )));
                }
                text[s..e].to_owned()
            };
            if let Some(g) = group_len.last_mut() {
                *g += 1;
            }
            if i < n && b[i] == b'{' {
                if open >= self.lim.max_depth {
                    // a limit: an error in every mode
                    return Err(Stop::Decode(self.err(
                        codes::TOO_DEEP,
                        format!(
                            "field groups nested deeper than max_depth ({})",
                            self.lim.max_depth
                        ),
                        text,
                        i,
                    )));
                }
                self.fields.push(FieldOp::Open(name));
                open += 1;
                group_len.push(0);
                i += 1;
                continue;
            }
            self.fields.push(FieldOp::Leaf(name));
            width += 1;
            if width > self.lim.max_fields {
                return Err(Stop::Decode(self.err(
                    codes::TOO_MANY_FIELDS,
                    format!(
                        "more than max_fields ({}) fields in a header",
                        self.lim.max_fields
                    ),
                    text,
                    i,
                )));
            }
            // ---- after an entry: delimiter, or closing braces
            loop {
                if i >= n {
                    return Ok(Err(malformed(
                        codes::BAD_FIELDS,
                        "unmatched brace in field list",
                        n,
                    )));
                }
                let ch = b[i];
                if ch == delim {
                    i += 1;
                    break;
                }
                if ch == b'}' {
                    i += 1;
                    open -= 1;
                    if group_len.pop() == Some(0) {
                        return Ok(Err(malformed(codes::BAD_FIELDS, "empty field list", i - 1)));
                    }
                    if open == 0 {
                        if self.lim.strict {
                            self.check_duplicate_fields(text)?;
                        }
                        return Ok(Ok((width, i)));
                    }
                    self.fields.push(FieldOp::Close);
                    continue;
                }
                return Ok(Err(malformed(
                    codes::BAD_FIELDS,
                    "unexpected character in field list",
                    i,
                )));
            }
        }
    }

    /// Strict mode: no duplicate names within one brace group (§9.3, §14.3).
    fn check_duplicate_fields<E>(&self, text: &str) -> R<E> {
        let mut groups: Vec<HashSet<&str>> = vec![HashSet::new()];
        for op in &self.fields {
            let name = match op {
                FieldOp::Leaf(n) | FieldOp::Open(n) => n.as_str(),
                FieldOp::Close => {
                    groups.pop();
                    continue;
                }
            };
            if let Some(g) = groups.last_mut() {
                if !g.insert(name) {
                    return self.fail(
                        codes::DUPLICATE_KEY,
                        format!("duplicate field name {name:?}"),
                        text,
                        self.col_base,
                    );
                }
            }
            if matches!(op, FieldOp::Open(_)) {
                groups.push(HashSet::new());
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------ lists

    /// A line at an expanded list's item depth: must be a list item (§9.4, §10).
    fn list_line<S: Sink>(
        &mut self,
        text: &str,
        cs: usize,
        ce: usize,
        depth: usize,
        sink: &mut S,
    ) -> R<S::Error> {
        let b = text.as_bytes();
        let c = &b[cs..ce];
        if c == b"-" {
            // §10 empty object item
            self.count_item(text, cs)?;
            emit!(sink.start_object());
            emit!(sink.end_object());
            return Ok(());
        }
        if !c.starts_with(b"- ") {
            return self.fail(
                codes::EXPECTED_LIST_ITEM,
                "expected a list item ('- ...')",
                text,
                cs,
            );
        }
        self.count_item(text, cs)?;
        let mut rs = cs + 2;
        while rs < ce && b[rs] == b' ' {
            rs += 1;
        }
        let cs = rs; // the item's content: errors are located from here
        self.col_base = cs;
        let rest = &b[cs..ce];
        if rest == b"[]" {
            // §9.2 empty inner array
            emit!(sink.start_array(0));
            emit!(sink.end_array());
            return Ok(());
        }
        let colon = scalars::find_unquoted(b, b':', cs, ce);
        if colon.is_none() {
            // a primitive item
            return self.scalar(text, cs, ce, sink);
        }
        if rest.first() == Some(&b'[') {
            let m = match self.parse_header(text, cs, ce)? {
                Ok(h) if !h.has_fields => {
                    // §9.2/§9.4 an array item; a nested list's items are one level down
                    return self.open_header(text, &h, depth + 1, cs, sink);
                }
                Ok(_) => malformed(
                    codes::KEYLESS_HEADER,
                    "a tabular header without a key is only valid at the root",
                    cs,
                ),
                Err(m) => m,
            };
            if self.lim.strict {
                return self.fail(m.code, m.message, text, m.at);
            }
        }
        // §10: an object whose first field sits on the hyphen line, at depth + 1
        emit!(sink.start_object());
        self.push::<S::Error>(Kind::Object, depth + 1, text, cs, (0, b',', 0))?;
        self.object_line(text, cs, ce, depth + 1, sink)
    }

    // ------------------------------------------------------------ tables

    /// Convert the cells `spans` (untrimmed) into `self.toks`.
    fn convert_cells<E>(&mut self, text: &str, spans: &[(usize, usize)]) -> R<E> {
        let b = text.as_bytes();
        self.toks.clear();
        self.scratch.clear();
        for &(s, e) in spans {
            let (s, e) = scalars::trim_spaces(b, s, e);
            match scalars::convert(text, s, e, self.lim.max_number_length, &mut self.scratch) {
                Ok(t) => self.toks.push(t),
                Err(f) => return Err(Stop::Decode(self.located(f, text))),
            }
        }
        Ok(())
    }

    /// A line at a tabular array's row depth (§9.3).
    fn table_line<S: Sink>(
        &mut self,
        text: &str,
        cs: usize,
        ce: usize,
        sink: &mut S,
    ) -> R<S::Error> {
        let b = text.as_bytes();
        let (delim, width) = match self.stack.last() {
            Some(f) => (f.delim, f.width),
            None => return Ok(()),
        };
        if scalars::find_byte(b':', &b[cs..ce]).is_some() {
            if let Some(colon) = scalars::find_unquoted(b, b':', cs, ce) {
                let d = scalars::find_unquoted(b, delim, cs, ce);
                if d.is_none_or(|d| colon < d) {
                    // §9.3 disambiguation says "key-value line, end of rows"; but
                    // at row depth no enclosing object can hold it.
                    return self.fail(
                        codes::OVER_INDENTED,
                        "key-value line at row depth (rows ended, but the line belongs to no object)",
                        text,
                        cs,
                    );
                }
            }
        }
        let mut spans = std::mem::take(&mut self.spans);
        scalars::split_cells(b, cs, ce, delim, &mut spans);
        let r = (|| {
            if spans.len() != width {
                return self.fail(
                    codes::WIDTH_MISMATCH,
                    format!(
                        "row has {} cells, header declares {width} fields",
                        spans.len()
                    ),
                    text,
                    cs,
                );
            }
            self.count_item(text, cs)?;
            self.convert_cells(text, &spans)?;
            emit!(sink.row(&Cells {
                line: text,
                scratch: &self.scratch,
                toks: &self.toks
            }));
            Ok(())
        })();
        self.spans = spans;
        r
    }

    /// A line at a keyed table's entry depth: `entrykey: cells` (§9.5).
    fn keyed_line<S: Sink>(
        &mut self,
        text: &str,
        cs: usize,
        ce: usize,
        sink: &mut S,
    ) -> R<S::Error> {
        let b = text.as_bytes();
        let colon = match scalars::find_unquoted(b, b':', cs, ce) {
            Some(k) => k,
            None => return self.fail(codes::MISSING_COLON, "entry row without a colon", text, cs),
        };
        let (ks, ke) = scalars::trim_spaces(b, cs, colon);
        let key = scalars::decode_key(text, ks, ke).map_err(|f| self.located(f, text))?;
        let (delim, width) = match self.stack.last() {
            Some(f) => (f.delim, f.width),
            None => return Ok(()),
        };
        let mut spans = std::mem::take(&mut self.spans);
        spans.clear();
        let (rs, re) = scalars::trim_spaces(b, colon + 1, ce);
        if rs < re {
            scalars::split_cells(b, colon + 1, ce, delim, &mut spans);
        }
        let r = (|| {
            if spans.len() != width {
                return self.fail(
                    codes::WIDTH_MISMATCH,
                    format!(
                        "entry row has {} cells, header declares {width} fields",
                        spans.len()
                    ),
                    text,
                    colon + 1,
                );
            }
            let top = self.stack.len().wrapping_sub(1); // (an empty stack: no frame, no check)
            self.claim_key(top, &key, text, cs)?;
            self.count_item(text, cs)?;
            self.convert_cells(text, &spans)?;
            emit!(sink.entry(
                &key,
                &Cells {
                    line: text,
                    scratch: &self.scratch,
                    toks: &self.toks
                }
            ));
            Ok(())
        })();
        self.spans = spans;
        r
    }
}

/// The first `:`, `"` or `[` of a field line's content: a byte loop over
/// the first [`scalars::SHORT_SCAN`] bytes (a key is short), `memchr3` past them.
fn find_key_end(c: &[u8]) -> Option<usize> {
    const SHORT: usize = scalars::SHORT_SCAN;
    let head = &c[..c.len().min(SHORT)];
    match head.iter().position(|&b| matches!(b, b':' | b'"' | b'[')) {
        Some(i) => Some(i),
        None if c.len() > SHORT => {
            memchr::memchr3(b':', b'"', b'[', &c[SHORT..]).map(|i| SHORT + i)
        }
        None => None,
    }
}

/// `end` of a header's rest: the line without trailing spaces (the machine's
/// content end).  Split cells end there; the last cell is trimmed anyway.
fn trim_end(b: &[u8], start: usize) -> usize {
    let mut e = b.len();
    while e > start && b[e - 1] == b' ' {
        e -= 1;
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lines::LineSplitter;
    use crate::scalars::Scalar;

    /// Counts calls; keeps nothing.
    #[derive(Default)]
    struct Count {
        calls: usize,
        rows: usize,
    }

    impl Sink for Count {
        type Error = DecodeError;
        fn start_object(&mut self) -> Result<(), DecodeError> {
            self.calls += 1;
            Ok(())
        }
        fn end_object(&mut self) -> Result<(), DecodeError> {
            self.calls += 1;
            Ok(())
        }
        fn key(&mut self, _: &str) -> Result<(), DecodeError> {
            self.calls += 1;
            Ok(())
        }
        fn scalar(&mut self, _: Scalar<'_>) -> Result<(), DecodeError> {
            self.calls += 1;
            Ok(())
        }
        fn start_array(&mut self, _: u64) -> Result<(), DecodeError> {
            self.calls += 1;
            Ok(())
        }
        fn values(&mut self, _: &Cells<'_>) -> Result<(), DecodeError> {
            self.calls += 1;
            Ok(())
        }
        fn end_array(&mut self) -> Result<(), DecodeError> {
            self.calls += 1;
            Ok(())
        }
        fn start_table(&mut self, _: &Table<'_>) -> Result<(), DecodeError> {
            self.calls += 1;
            Ok(())
        }
        fn row(&mut self, _: &Cells<'_>) -> Result<(), DecodeError> {
            self.rows += 1;
            Ok(())
        }
        fn entry(&mut self, _: &str, _: &Cells<'_>) -> Result<(), DecodeError> {
            self.rows += 1;
            Ok(())
        }
        fn end_table(&mut self, _: bool) -> Result<(), DecodeError> {
            self.calls += 1;
            Ok(())
        }
    }

    fn limits() -> Limits {
        Limits {
            indent_size: 2,
            strict: true,
            max_depth: 10_000,
            max_number_length: 10_000,
            max_fields: 10_000,
        }
    }

    #[test]
    fn key_set_finds_duplicates_short_long_and_past_the_linear_part() {
        let mut k = KeySet::default();
        let keys: Vec<String> = (0..40)
            .map(|i| match i % 4 {
                0 => format!("k{i}"),
                1 => format!("a_longer_key_{i}"),
                2 => "é".repeat(i % 5) + &i.to_string(),
                _ => format!("abcdefg{i}"),
            })
            .chain([
                "".to_string(),
                "abcdefg".to_string(),
                "abcdefgh".to_string(),
            ])
            .collect();
        for (n, key) in keys.iter().enumerate() {
            assert!(k.insert(key), "{key:?} is new");
            // every key so far is a duplicate now, whether the set is linear or hashed
            for old in &keys[..=n] {
                assert!(!k.insert(old), "{old:?} after {n} keys");
            }
        }
        k.clear();
        assert!(k.insert("abcdefg") && k.insert("abcdefh") && !k.insert("abcdefg"));
    }

    #[test]
    fn key_set_tells_keys_with_the_same_hash_apart() {
        // Two different keys whose hashes are equal (forced: the index maps
        // the second key's hash to the first key): both are kept, each
        // found again, neither taken for the other.
        let mut k = KeySet::default();
        for i in 0..20 {
            assert!(k.insert(&format!("key_number_{i}")));
        }
        let big = k.big.as_mut().expect("hashed past the linear part");
        let h = big.hash("other_key".as_bytes());
        big.first.insert(h, 3); // ("key_number_3" has that hash now)
        assert!(k.insert("other_key"));
        assert!(!k.insert("other_key"));
        assert!(!k.insert("key_number_3"));
        assert!(k.insert("short") && !k.insert("short"));
        let big = k.big.as_mut().expect("hashed");
        assert_eq!(big.more.len(), 1);
        let h = big.hash("x".as_bytes());
        big.first.insert(h, 21); // (the span of "short": two short keys)
        assert!(k.insert("x") && !k.insert("x") && !k.insert("other_key"));
    }

    #[test]
    fn state_does_not_grow_with_the_document() {
        let mut m = Machine::new(limits());
        let mut lines = LineSplitter::new(1 << 20, 1);
        let mut sink = Count::default();
        let n = 50_000;
        let mut feed = |data: &[u8], m: &mut Machine, sink: &mut Count| {
            lines
                .feed(data, &mut |no, l| m.line(no, l, sink))
                .map_err(|e| match e {
                    Stop::Decode(e) => e,
                    Stop::Sink(e) => e,
                })
        };
        feed(
            format!("rows[{n}]{{id,name,\"x y\"}}:\n").as_bytes(),
            &mut m,
            &mut sink,
        )
        .unwrap();
        for i in 0..n {
            // rows split mid-line, with quoted and escaped cells
            let row = format!("  {i},\"n\\t{i}\",{}.5\n", i % 7);
            let (a, b) = row.as_bytes().split_at(row.len() / 2);
            feed(a, &mut m, &mut sink).unwrap();
            feed(b, &mut m, &mut sink).unwrap();
            assert!(m.open_scopes() <= 2);
        }
        feed(format!("items[{n}]:\n").as_bytes(), &mut m, &mut sink).unwrap();
        for i in 0..n {
            feed(
                format!("  - a: {i}\n    b:\n      c: x\n").as_bytes(),
                &mut m,
                &mut sink,
            )
            .unwrap();
            assert!(m.open_scopes() <= 4);
        }
        m.close(&mut sink).unwrap();
        assert_eq!(sink.rows, n);
        // the reusable buffers hold one line's worth, not the document's
        assert!(m.toks.capacity() < 64 && m.spans.capacity() < 64 && m.scratch.capacity() < 256);
        assert!(lines.at_line_boundary());
    }
}
