//! A run of a table's row lines split into columns in one pass, the §4
//! grammar checked while splitting: the native side of the frame reader's
//! fast path (`toonstream/_frames.py`, `TableScan._plain_run`).
//!
//! [`split`] takes complete lines at the row indentation and decides, line
//! by line, what the Python reference decides with byte searches, its row
//! splitter and the grammar's column converter:
//!
//! * which lines the decoder must read itself (a quote, colon, backslash,
//!   CR or NUL anywhere, a comment marker or tab after the indentation),
//!   except *simple* quoted rows (quoted cells right against the
//!   delimiters, whose escapes are §7.1's: `\\`, `\"`, `\n`, `\r`, `\t`
//!   and `\uXXXX` but for surrogates), which are split here, the escaped
//!   cells unescaped into `Columns::escaped`;
//! * each plain cell's §4 kind ([`K_NULL`] ... [`K_WIDE`], the bits of
//!   `_frames.value_kind` of the value the reference decodes), on the cell
//!   trimmed of spaces;
//! * the outcome the reference gives for the whole run when it is not all
//!   plain rows ([`Split::NotIndented`], [`Split::NotPlain`]), and
//!   [`Split::Unhandled`] for what only the reference decides (an "odd"
//!   number token, invalid UTF-8, a blank line, marker bytes).
//!
//! The cells are kept as spans of the input; [`Columns`] then makes typed
//! column buffers (Arrow layouts: values, validity bitmap, offsets) for any
//! range of rows, and the raw tokens the reference's string frame holds.
//!
//! ```
//! use toonstream_native::columns::{split, Fixed, Split, K_INT, K_STR};
//! let Split::Columns(c) = split(b"  1,a\n  2,b\n", 2, b',', 2, usize::MAX) else { panic!() };
//! assert_eq!((c.rows(), c.bits(0, 0, 2), c.bits(1, 0, 2)), (2, K_INT, K_STR));
//! let mut ints = [0u8; 16];
//! c.write_fixed(b"  1,a\n  2,b\n", 0, 0, 2, Fixed::Int64, &mut ints);
//! assert_eq!(ints, [1i64.to_le_bytes(), 2i64.to_le_bytes()].concat()[..]);
//! ```

use std::sync::Mutex;

use memchr::{memchr, memchr2};

mod typed;
use typed::Fill;

/// Kind bits of a cell, as `_frames.py` numbers them.
pub const K_NULL: u8 = 1;
pub const K_BOOL: u8 = 2;
pub const K_INT: u8 = 4;
pub const K_BIG: u8 = 8;
pub const K_FLOAT: u8 = 16;
pub const K_HUGE: u8 = 32;
pub const K_STR: u8 = 64;
/// An integer of more than 15 digits (a flag on INT/BIG/HUGE).
pub const K_WIDE: u8 = 128;

/// A number token longer than this (or with an exponent of 17+ digits) is
/// "odd": the reference types it value by value (`_frames.NATIVE_NUMBER_LEN`).
const ODD_LEN: usize = 40;
const ODD_EXP_DIGITS: usize = 17;
/// Digits of an integer a float always holds exactly.
const FLOAT_EXACT: usize = 15;
/// An integer token of at most this many digits fits int64.
const LONG: usize = 18;
/// Stand-ins of the reference's marked quoted tokens (`_frames.QUOTED`,
/// `DELIM_IN_QUOTES`).
const QUOTED: u8 = 0x01;
const DELIM_IN_QUOTES: u8 = 0x02;

#[derive(Clone, Copy, Debug)]
struct Cell {
    /// End of the raw cell (its delimiter or the line end).
    raw_end: u32,
    /// The token: trimmed of spaces, or a quoted cell's content (with
    /// `escaped`: its unescaped text, in [`Columns::escaped`]).
    start: u32,
    end: u32,
    kind: u8,
    quoted: bool,
    escaped: bool,
}

/// The plain rows of a run, column by column.
#[derive(Debug)]
pub struct Columns {
    width: usize,
    /// Per plain row: the offset of its line (the raw start of cell 0).
    line_starts: Vec<u32>,
    cols: Vec<Vec<Cell>>,
    /// Per column, the kinds of all its cells, or-ed (as split).
    kinds: Vec<u8>,
    /// A planned split's typed columns (see [`split_planned`]); empty
    /// otherwise, and then every column's cells are in `cols`.
    typed: Vec<Typed>,
    /// Lines the decoder reads: (line index in the run, start, end after the LF).
    pub specials: Vec<(usize, usize, usize)>,
    /// Lines in the run.
    pub lines: usize,
    /// Some row had quoted cells (split here as simple rows).
    pub quoted: bool,
    /// The unescaped contents of quoted cells with escapes (§7.1), one
    /// after the other (a cell with `escaped` names its range).
    escaped: Vec<u8>,
    /// The run's bytes (its lines end there).
    pub end: usize,
    /// Rows of a keyed table (§9.5): column 0 holds the entry keys.
    keyed: bool,
    /// A keyed run's entry keys, one per plain row (kept even when a
    /// planned split keeps no cells: the reader checks them for duplicates).
    keys: Vec<Cell>,
}

/// What [`split`] found.
#[derive(Debug)]
pub enum Split {
    Columns(Columns),
    /// A line is not exactly at the row indentation (the reference's
    /// `False`, or `None` when it re-checks a cut run).  `quoted`: simple
    /// quoted rows were seen first (the reference then marks its scan as
    /// holding quoted tokens).
    NotIndented {
        quoted: bool,
    },
    /// Not plain rows after all (a row of another width): the reference's
    /// `None`, the decoder reads it.
    NotPlain {
        quoted: bool,
    },
    /// Only the reference can tell: it runs instead.
    Unhandled,
}

/// Arrow-layout buffers of one column (a validity bitmap only with nulls).
#[derive(Debug, Default)]
pub struct Buffers<T> {
    pub values: Vec<T>,
    pub validity: Option<Vec<u8>>,
    pub nulls: usize,
}

/// The fixed-width layouts of [`Columns::write_fixed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fixed {
    Int64,
    Float64,
    /// Decimal(38, 0): integers of at most 38 digits, as i128.
    Decimal128,
}

impl Fixed {
    /// Bytes per value.
    pub fn width(self) -> usize {
        match self {
            Fixed::Decimal128 => 16,
            _ => 8,
        }
    }
}

/// A string column: i32 offsets into `data`.
#[derive(Debug, Default)]
pub struct Strings {
    pub offsets: Vec<i32>,
    pub data: Vec<u8>,
    pub validity: Option<Vec<u8>>,
    pub nulls: usize,
}

/// How [`split_planned`] keeps a column's cells: as values of one Arrow
/// layout, written while splitting (no cells kept, no second pass), or
/// not at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Int64,
    Float64,
    /// Integers of at most 38 digits (Decimal(38, 0)), as i128.
    Decimal128,
    /// 0 or 1 per row (packed into a bitmap on export).
    Bool,
    /// Arrow string views (16 bytes each, shorter strings inline).
    Views,
    /// Views of the tokens as written: a number keeps its digits (not
    /// its canonical text), for a column cast from them exactly (a Decimal
    /// type with a scale).
    Tokens,
    /// Kinds checked, nothing kept (a column not selected, or of nulls).
    Skip,
}

impl Layout {
    /// The layout that holds cells of kinds `bits` as the frame reader
    /// types them without a schema (ints; ints beyond int64; numbers;
    /// booleans; strings, with numbers as their canonical text, see
    /// `typed::number_text`).
    pub fn of_kinds(bits: u8) -> Layout {
        if bits & !(K_INT | K_NULL) == 0 {
            Layout::Int64
        } else if bits & !(K_INT | K_BIG | K_WIDE | K_NULL) == 0 {
            Layout::Decimal128
        } else if bits & !(K_INT | K_FLOAT | K_NULL) == 0 {
            Layout::Float64
        } else if bits & !(K_BOOL | K_NULL) == 0 {
            Layout::Bool
        } else {
            Layout::Views
        }
    }
}

/// A column's place in a plan: its layout and the kinds its cells may
/// have (bits of [`K_NULL`] ...); a cell of another kind is a misfit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    pub layout: Layout,
    pub allowed: u8,
}

/// The values of a planned column, one per plain row.
#[derive(Debug)]
pub enum Values {
    Int64(Vec<i64>),
    Float64(Vec<f64>),
    Decimal128(Vec<i128>),
    Bool(Vec<u8>),
    /// Views whose longer strings are in `long[b]` (`b`: the view's buffer
    /// index; one buffer per half of a run split on two threads).
    Views {
        views: Vec<u128>,
        long: Vec<Vec<u8>>,
    },
    Skip,
}

/// A planned column: its values and the rows holding `null` (ascending).
#[derive(Debug)]
pub struct Typed {
    pub allowed: u8,
    pub values: Values,
    pub nulls: Vec<u32>,
}

/// The Arrow validity bitmap of `n` rows with nulls at `nulls` (None: no nulls).
pub fn validity_bitmap(nulls: &[u32], n: usize) -> Option<Vec<u8>> {
    if nulls.is_empty() {
        return None;
    }
    let mut v = all_valid(n);
    for &r in nulls {
        if (r as usize) < n {
            clear_bit(&mut v, r as usize);
        }
    }
    Some(v)
}

/// 0/1 bytes packed into an Arrow bitmap.
pub fn pack_bits(flags: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; flags.len().div_ceil(8)];
    for (byte, chunk) in out.iter_mut().zip(flags.chunks(8)) {
        for (i, &f) in chunk.iter().enumerate() {
            *byte |= (f & 1) << i;
        }
    }
    out
}

/// Cell vectors of dropped [`Columns`], for the next runs: a fresh vector
/// of a few hundred KB is new memory each time, and its page faults cost
/// more than splitting the cells.
static POOL: Mutex<Vec<Vec<Cell>>> = Mutex::new(Vec::new());
/// At most this many vectors are kept (a few runs' worth).
const POOL_SIZE: usize = 32;

fn recycled(capacity: usize) -> Vec<Cell> {
    let v = POOL.lock().ok().and_then(|mut pool| pool.pop());
    match v {
        Some(mut v) => {
            v.clear();
            v.reserve(capacity);
            v
        }
        None => Vec::with_capacity(capacity),
    }
}

impl Drop for Columns {
    fn drop(&mut self) {
        if let Ok(mut pool) = POOL.lock() {
            for v in self.cols.drain(..) {
                if pool.len() < POOL_SIZE && v.capacity() > 0 {
                    pool.push(v);
                }
            }
        }
    }
}

fn is_special(b: u8) -> bool {
    matches!(b, b'"' | b':' | b'\\' | b'\r' | 0)
}

/// Split the run of the first `cap` lines of `data` (complete lines, each
/// ending with LF): rows at indentation `plen`, `width` cells separated by
/// `delim`.  [`Columns::end`] says where the run ends.
pub fn split(data: &[u8], plen: usize, delim: u8, width: usize, cap: usize) -> Split {
    split_run(data, plen, delim, width, cap, PARALLEL_RUN, None, false)
}

/// [`split`] (or [`split_planned`], with a plan) for the entry rows of a
/// keyed table (§9.5), `entrykey: cells` with `width` cells: column 0 of
/// the result holds the entry keys (strings, [`Columns::key`]), columns
/// `1..=width` the cells.  An entry row is split here when its key is bare
/// (no quote, backslash, CR or NUL before the first colon) or a quoted key
/// right against its colon with §7.1's escapes, and its cells are
/// those of a plain or simple row; any other line at the indentation is
/// the decoder's (a special line).
///
/// ```
/// use toonstream_native::columns::{split_entries, Split, K_INT, K_STR};
/// let data = b"  a: 1,x\n  \"b c\": 2,y\n";
/// let Split::Columns(c) = split_entries(data, 2, b',', 2, usize::MAX, None) else { panic!() };
/// assert_eq!((c.rows(), c.bits(0, 0, 2), c.bits(1, 0, 2)), (2, K_STR, K_INT));
/// assert_eq!((c.key(data, 0), c.key(data, 1)), (&b"a"[..], &b"b c"[..]));
/// ```
pub fn split_entries(
    data: &[u8],
    plen: usize,
    delim: u8,
    width: usize,
    cap: usize,
    plan: Option<&[Plan]>,
) -> Split {
    let run = |plan| split_run(data, plen, delim, width + 1, cap, PARALLEL_RUN, plan, true);
    if let Some(plan) = plan.filter(|p| p.len() == width + 1) {
        if let Split::Columns(c) = run(Some(plan)) {
            return Split::Columns(c);
        }
    }
    run(None)
}

/// [`split`] with the column types known: each column's cells are written
/// as it is split, in the layout `plan` gives it ([`Columns::take_typed`]),
/// and no cells are kept.  Whatever the plan cannot take (a cell of a kind
/// it does not allow, a run that is not all plain rows) gives [`split`]'s
/// outcome instead, cells and all.
///
/// ```
/// use toonstream_native::columns::{split_planned, Layout, Plan, Split, Values, K_INT, K_NULL, K_STR};
/// let plan = [Plan { layout: Layout::Int64, allowed: K_INT | K_NULL }; 2];
/// let Split::Columns(mut c) = split_planned(b"  1,2\n  3,null\n", 2, b',', 2, usize::MAX, &plan) else { panic!() };
/// let typed = c.take_typed();
/// assert!(matches!(&typed[1].values, Values::Int64(v) if v == &[2, 0]));
/// assert_eq!(typed[1].nulls, [1]);
/// let plan = [Plan { layout: Layout::Int64, allowed: K_INT }; 2];
/// let Split::Columns(mut c) = split_planned(b"  1,a\n", 2, b',', 2, usize::MAX, &plan) else { panic!() };
/// assert!(c.take_typed().is_empty());     // a misfit: split's cells
/// assert_eq!(c.bits(1, 0, 1), K_STR);
/// ```
pub fn split_planned(
    data: &[u8],
    plen: usize,
    delim: u8,
    width: usize,
    cap: usize,
    plan: &[Plan],
) -> Split {
    if plan.len() == width {
        if let Split::Columns(c) = split_run(
            data,
            plen,
            delim,
            width,
            cap,
            PARALLEL_RUN,
            Some(plan),
            false,
        ) {
            return Split::Columns(c);
        }
    }
    split(data, plen, delim, width, cap)
}

/// [`split`], on two threads for a run of at least `parallel` bytes
/// (`keyed`: entry rows, `width` counting the key's column).
#[allow(clippy::too_many_arguments)]
fn split_run(
    data: &[u8],
    plen: usize,
    delim: u8,
    width: usize,
    cap: usize,
    parallel: usize,
    plan: Option<&[Plan]>,
    keyed: bool,
) -> Split {
    // A long run is walked in two halves at once (a line boundary near the
    // middle), the second half's rows then appended to the first's.  Each
    // half checks its own bytes (a line boundary is a character boundary).
    // Their lines are counted (fast SIMD passes), to make room for: most
    // lines are rows.
    let halves = |data: &[u8]| {
        let mid = if data.len() >= parallel {
            memchr(b'\n', &data[data.len() / 2..]).map_or(data.len(), |i| data.len() / 2 + i + 1)
        } else {
            data.len()
        };
        let lines1 = memchr::memchr_iter(b'\n', &data[..mid]).count();
        (
            mid,
            lines1,
            lines1 + memchr::memchr_iter(b'\n', &data[mid..]).count(),
        )
    };
    let (mut mid, mut lines1, mut lines) = halves(data);
    let mut data = data;
    if lines > cap {
        // (the lines past `cap` are not the run's: the next may be an error;
        // this search makes a call per line, only when the cap cuts the run)
        if let Some(i) = memchr::memchr_iter(b'\n', data).nth(cap.max(1) - 1) {
            data = &data[..if cap == 0 { 0 } else { i + 1 }];
            (mid, lines1, lines) = halves(data);
        }
    }
    let lines2 = lines - lines1;
    let end = data.len();
    if width == 0 || data.last() != Some(&b'\n') || u32::try_from(data.len()).is_err() {
        return Split::Unhandled;
    }
    // A planned split writes each column's values into one room for the
    // run, the second half's from its line `lines1` on: no copy when the
    // halves join (but for the few lines that were not rows).
    let mut rooms: Vec<Values> = plan
        .map(|plan| plan.iter().map(|p| Values::room(p.layout, lines)).collect())
        .unwrap_or_default();
    let mut fills1 = Vec::with_capacity(rooms.len());
    let mut fills2 = Vec::with_capacity(rooms.len());
    for (room, p) in rooms.iter_mut().zip(plan.unwrap_or_default()) {
        let (a, b) = room.sinks(lines1);
        fills1.push(Fill::new(*p, a, 0));
        fills2.push(Fill::new(*p, b, 1));
    }
    let half = |upto: usize, from: usize, lines: usize, fills: &mut [Fill]| {
        split_half(
            &data[..upto],
            from,
            lines,
            plen,
            delim,
            width,
            fills,
            end,
            keyed,
        )
    };
    let (out, flags, second) = if mid < data.len() {
        let (first, second) = std::thread::scope(|scope| {
            let other = scope.spawn(|| {
                let got = half(data.len(), mid, lines2, &mut fills2);
                (got, fills2)
            });
            let first = half(mid, 0, lines1, &mut fills1);
            match other.join() {
                Ok(second) => (first, second),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        });
        let (Some((mut out, mut flags)), (Some((mut more, flags2)), fills2)) = (first, second)
        else {
            return Split::Unhandled;
        };
        let rows1 = out.rows();
        out.append(&mut more);
        flags.or(&flags2);
        (out, flags, Some((rows1, fills2)))
    } else {
        drop(fills2);
        match half(data.len(), 0, lines1, &mut fills1) {
            Some((out, flags)) => (out, flags, None),
            None => return Split::Unhandled,
        }
    };
    let mut out = out;
    if plan.is_some() {
        // (the sinks given back first: they borrow the rooms)
        let firsts = fills1.into_iter().map(Fill::into_parts).collect();
        let second = second
            .map(|(rows1, fills2)| (rows1, fills2.into_iter().map(Fill::into_parts).collect()));
        out.typed = typed::join(rooms, firsts, second, lines1, out.rows());
    }
    let Flags {
        special_bad,
        not_plain,
        plain_bad,
    } = flags;
    let quoted = out.quoted;
    if special_bad {
        // (the reference stops at the decoder lines' check, before any rewriting)
        Split::NotIndented { quoted: false }
    } else if not_plain {
        Split::NotPlain { quoted }
    } else if plain_bad {
        Split::NotIndented { quoted }
    } else {
        Split::Columns(out)
    }
}

/// The lines of `data[from..]` (complete lines) split into a [`Columns`]
/// of their own (line indices from 0, offsets `data`'s); None: only the
/// reference can tell (see [`Split::Unhandled`]).
#[allow(clippy::too_many_arguments)]
fn split_half(
    data: &[u8],
    from: usize,
    lines: usize,
    plen: usize,
    delim: u8,
    width: usize,
    fills: &mut [Fill],
    end: usize,
    keyed: bool,
) -> Option<(Columns, Flags)> {
    let part = &data[from..];
    if memchr2(QUOTED, DELIM_IN_QUOTES, part).is_some() || crate::utf8(part).is_err() {
        return None;
    }
    let mut out = Columns::new(width, lines, end, !fills.is_empty());
    out.keyed = keyed;
    out.quoted = keyed; // (a key's token is marked as a quoted one)
    let mut flags = Flags::default();
    if !walk(data, from, plen, delim, &mut out, &mut flags, fills) {
        return None;
    }
    out.lines = lines;
    Some((out, flags))
}

/// A run at least this long is split on two threads.
const PARALLEL_RUN: usize = 1 << 20;

/// What decides the verdict on a run (see [`split`]): a decoder line off
/// the indentation; rows of another width; rows off the indentation.
#[derive(Default)]
struct Flags {
    special_bad: bool,
    not_plain: bool,
    plain_bad: bool,
}

impl Flags {
    fn or(&mut self, other: &Flags) {
        self.special_bad |= other.special_bad;
        self.not_plain |= other.not_plain;
        self.plain_bad |= other.plain_bad;
    }
}

impl Columns {
    fn new(width: usize, lines: usize, end: usize, planned: bool) -> Columns {
        // (a planned split keeps no cells)
        let cols = (0..width)
            .map(|_| if planned { Vec::new() } else { recycled(lines) })
            .collect();
        Columns {
            width,
            line_starts: Vec::with_capacity(lines),
            cols,
            kinds: vec![0; width],
            typed: Vec::new(),
            specials: Vec::new(),
            lines: 0,
            quoted: false,
            escaped: Vec::new(),
            end,
            keyed: false,
            keys: Vec::new(),
        }
    }

    /// Cell `j` of the row being split (cells past the width are left for
    /// the row's width check), into `fills[j]` for a planned split, else
    /// kept; false: a misfit of a planned column.
    #[inline(always)]
    fn put(&mut self, fills: &mut [Fill], j: usize, data: &[u8], cell: Cell) -> bool {
        let Some(k) = self.kinds.get_mut(j) else {
            return true;
        };
        *k |= cell.kind;
        if fills.is_empty() {
            if let Some(col) = self.cols.get_mut(j) {
                col.push(cell);
            }
            return true;
        }
        let row = self.line_starts.len();
        let source = self.source(data, &cell);
        fills.get_mut(j).is_none_or(|f| f.put(source, &cell, row))
    }

    /// A planned split's typed columns (moved out; empty for [`split`]'s
    /// cells).  [`Columns::bits`] of them still gives each column's kinds,
    /// the whole run's.
    pub fn take_typed(&mut self) -> Vec<Typed> {
        std::mem::take(&mut self.typed)
    }

    /// The rows of `other` (the lines after this one's) after this one's.
    fn append(&mut self, other: &mut Columns) {
        self.line_starts.append(&mut other.line_starts);
        // (the other half's unescaped contents follow this half's)
        let moved = if other.escaped.is_empty() {
            0
        } else {
            self.escaped.len() as u32
        };
        let shift = |cells: &mut Vec<Cell>| {
            if moved > 0 {
                for c in cells.iter_mut().filter(|c| c.escaped) {
                    c.start += moved;
                    c.end += moved;
                }
            }
        };
        for (col, more) in self.cols.iter_mut().zip(other.cols.iter_mut()) {
            shift(more);
            col.append(more);
        }
        shift(&mut other.keys);
        self.keys.append(&mut other.keys);
        self.escaped.append(&mut other.escaped);
        let shift = self.lines;
        self.specials
            .extend(other.specials.drain(..).map(|(k, s, e)| (k + shift, s, e)));
        self.lines += other.lines;
        self.quoted |= other.quoted;
        for (k, more) in self.kinds.iter_mut().zip(&other.kinds) {
            *k |= more;
        }
    }
}

/// The lines of `data` from offset `from` (a line start) to the end, into
/// `out` (offsets are `data`'s, line indices from 0); false: only the
/// reference can tell (see [`Split::Unhandled`]).
fn walk(
    data: &[u8],
    from: usize,
    plen: usize,
    delim: u8,
    out: &mut Columns,
    flags: &mut Flags,
    fills: &mut [Fill],
) -> bool {
    // Where the bytes that send a line to the decoder are (few: SIMD
    // searches, then one cursor while walking the lines).
    let part = &data[from..];
    let mut marks: Vec<usize> = memchr::memchr3_iter(b'"', b':', b'\\', part)
        .chain(memchr::memchr2_iter(b'\r', 0, part))
        .map(|i| from + i)
        .collect();
    marks.sort_unstable();
    let mut mark = 0;
    let mut s = from;
    for (k, e) in (0..).zip(memchr::memchr_iter(b'\n', part).map(|i| from + i)) {
        let line = &data[s..e];
        if line.is_empty() {
            return false; // (what Polars' tokenizer makes of it is its own)
        }
        if out.keyed {
            if !entry(
                out,
                fills,
                data,
                (k, s, e),
                plen,
                delim,
                &marks,
                &mut mark,
                flags,
            ) {
                return false;
            }
            s = e + 1;
            continue;
        }
        let indented = line.len() > plen && line[..plen].iter().all(|&b| b == b' ');
        // Leading-only specials: after the indentation, as the reference's
        // byte searches find them (the run's first line: at offset `plen`).
        let lead = if s == 0 {
            data.get(plen)
        } else if indented {
            line.get(plen)
        } else {
            None
        };
        let leading = matches!(lead, Some(b'#' | b'\t'));
        while mark < marks.len() && marks[mark] < s {
            mark += 1;
        }
        let special = leading || (mark < marks.len() && marks[mark] < e);
        let indented = indented && line[plen] != b' ';
        if special {
            if !indented {
                flags.special_bad = true;
            } else if !leading && simple(line, plen, delim) {
                out.quoted = true;
                if !row(out, fills, data, (s, e), plen, delim, true, flags, None) {
                    return false;
                }
            } else {
                out.specials.push((k, s, e + 1));
            }
        } else if !row(out, fills, data, (s, e), plen, delim, false, flags, None) {
            return false;
        }
        s = e + 1;
    }
    true
}

/// Entry row `k` of a keyed run, the line `data[s..e]` (see
/// [`split_entries`]): its key, then its cells as [`row`] splits a row's;
/// or a special line, the decoder's (a comment, a key that is not bare or
/// simply quoted, no cells, cells that are not plain or simple).  `marks`
/// and `mark`: [`walk`]'s.  False: only the reference can tell.
#[allow(clippy::too_many_arguments)]
fn entry(
    out: &mut Columns,
    fills: &mut [Fill],
    data: &[u8],
    (k, s, e): (usize, usize, usize),
    plen: usize,
    delim: u8,
    marks: &[usize],
    mark: &mut usize,
    flags: &mut Flags,
) -> bool {
    let line = &data[s..e];
    if !(line.len() > plen && line[..plen].iter().all(|&b| b == b' ') && line[plen] != b' ') {
        flags.plain_bad = true; // (the run is cut before it: see Split::NotIndented)
        return true;
    }
    let special = |out: &mut Columns| {
        out.specials.push((k, s, e + 1));
        true
    };
    let at = s + plen;
    while *mark < marks.len() && marks[*mark] < s {
        *mark += 1;
    }
    let (key, colon) = match data[at] {
        b'#' | b'\t' => return special(out),
        b'"' => {
            // a quoted key right against its colon (§7.4: unescaped per §7.1)
            let Some(q) = closing_quote(&data[..e], at + 1) else {
                return special(out);
            };
            let content = &data[at + 1..q];
            if data.get(q + 1) != Some(&b':')
                || q + 1 >= e
                || content.iter().any(|&b| matches!(b, b'\r' | 0))
            {
                return special(out);
            }
            let escaped = memchr(b'\\', content).is_some();
            let (start, stop) = if escaped {
                let from = out.escaped.len();
                unescape(content, &mut out.escaped);
                (from, out.escaped.len())
            } else {
                (at + 1, q)
            };
            let key = Cell {
                raw_end: (q + 1) as u32,
                start: start as u32,
                end: stop as u32,
                kind: K_STR,
                quoted: true,
                escaped,
            };
            (key, q + 1)
        }
        _ => {
            // a bare key: all before the first colon, with no other mark
            // (quote, backslash, CR, NUL) before it, trimmed (§7.4)
            let colon = match marks.get(*mark) {
                Some(&c) if c < e && data[c] == b':' && c > at => c,
                _ => return special(out),
            };
            let (ts, te) = crate::scalars::trim_spaces(data, at, colon);
            let key = Cell {
                raw_end: colon as u32,
                start: ts as u32,
                end: te as u32,
                kind: K_STR, // (a key is a string, whatever it looks like)
                quoted: true,
                escaped: false,
            };
            (key, colon)
        }
    };
    while *mark < marks.len() && marks[*mark] <= colon {
        *mark += 1;
    }
    // The cells, from the first after the colon's spaces: none (a blank
    // rest) is the decoder's width error.
    let mut first = colon + 1;
    while first < e && data[first] == b' ' {
        first += 1;
    }
    if first >= e {
        return special(out);
    }
    let quotes = *mark < marks.len() && marks[*mark] < e;
    if quotes && !simple(&data[..e], first, delim) {
        return special(out);
    }
    row(
        out,
        fills,
        data,
        (s, e),
        plen,
        delim,
        quotes,
        flags,
        Some((key, first)),
    )
}

/// A simple row after the indentation (the reference's `_SIMPLE_ROW`, and
/// escapes): cells that are quoted strings right against the delimiters,
/// without CR or NUL, whose escapes are `\\`, `\"`, `\n`, `\r` or `\t`
/// (any other, `\u` included, is the decoder's to read or reject), or bare
/// tokens without quotes, colons, backslashes, CR, NUL.
fn simple(line: &[u8], plen: usize, delim: u8) -> bool {
    let mut p = plen;
    loop {
        if line.get(p) == Some(&b'"') {
            let Some(q) = closing_quote(line, p + 1) else {
                return false;
            };
            if line[p + 1..q].iter().any(|&b| matches!(b, b'\r' | 0)) {
                return false;
            }
            p = q + 1;
        } else {
            while p < line.len() && line[p] != delim {
                if is_special(line[p]) {
                    return false;
                }
                p += 1;
            }
        }
        match line.get(p) {
            None => return true,
            Some(&b) if b == delim => p += 1,
            Some(_) => return false,
        }
    }
}

/// The closing quote of the quoted string whose content starts at
/// `line[p]`: past §7.1's escapes (`\\`, `\"`, `\n`, `\r`, `\t`, and
/// `\uXXXX` of a character that is not a surrogate); None if there is
/// none, or another escape comes first (the decoder's to reject).
fn closing_quote(line: &[u8], mut p: usize) -> Option<usize> {
    loop {
        let i = p + memchr2(b'"', b'\\', line.get(p..)?)?;
        if line[i] == b'"' {
            return Some(i);
        }
        p = match line.get(i + 1) {
            Some(b'\\' | b'"' | b'n' | b'r' | b't') => i + 2,
            Some(b'u') => {
                unicode_escape(line.get(i + 2..i + 6)?)?;
                i + 6
            }
            _ => return None,
        };
    }
}

/// The character of a `\uXXXX` escape's four hex digits (either case),
/// or None: not four hex digits, or a surrogate (§7.1 rejects those,
/// paired or not).
fn unicode_escape(hex: &[u8]) -> Option<char> {
    let text = std::str::from_utf8(hex).ok()?;
    if text.len() != 4 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    char::from_u32(u32::from_str_radix(text, 16).ok()?)
}

/// The content `raw` of a quoted string (its escapes checked by
/// [`closing_quote`]) unescaped per §7.1, appended to `out`.
fn unescape(raw: &[u8], out: &mut Vec<u8>) {
    let mut rest = raw;
    while let Some(i) = memchr(b'\\', rest) {
        out.extend_from_slice(&rest[..i]);
        let mut next = i + 2;
        match rest.get(i + 1) {
            Some(b'n') => out.push(b'\n'),
            Some(b'r') => out.push(b'\r'),
            Some(b't') => out.push(b'\t'),
            Some(b'u') => {
                // (checked by closing_quote: four hex digits, no surrogate)
                let c = rest
                    .get(i + 2..i + 6)
                    .and_then(unicode_escape)
                    .unwrap_or('\u{fffd}');
                out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                next = i + 6;
            }
            Some(&b) => out.push(b), // (a backslash or a quote)
            None => out.push(b'\\'),
        }
        rest = rest.get(next..).unwrap_or(&[]);
    }
    out.extend_from_slice(rest);
}

/// Split one row line `data[s..e]` into its cells (an entry row's: `key`,
/// its key cell and where its first cell starts, checked by [`entry`]);
/// false: a token only the reference types (an "odd" number).
#[allow(clippy::too_many_arguments)]
fn row(
    out: &mut Columns,
    fills: &mut [Fill],
    data: &[u8],
    (s, e): (usize, usize),
    plen: usize,
    delim: u8,
    quotes: bool,
    flags: &mut Flags,
    key: Option<(Cell, usize)>,
) -> bool {
    let line = &data[s..e];
    // The reference's indentation test on the first raw cell: the
    // indentation, then neither a space nor an empty first cell.
    let indented = key.is_some()
        || line.len() > plen
            && line[..plen].iter().all(|&b| b == b' ')
            && line[plen] != b' '
            && line[plen] != delim;
    if !indented {
        flags.plain_bad = true;
    }
    let start_len = out.cols[0].len();
    let mut j = 0;
    let mut first = s + plen.min(line.len());
    if let Some((cell, at)) = key {
        if !out.put(fills, 0, data, cell) {
            return false;
        }
        j = 1;
        first = at;
    }
    if quotes {
        let mut p = first;
        loop {
            let raw_start = p;
            let (cell, next) = if data.get(raw_start) == Some(&b'"') {
                // (a simple row: the closing quote is there, then a delimiter or the end)
                let line = &data[..e];
                let q = closing_quote(line, raw_start + 1).unwrap_or(e);
                let end = (q + 1).min(e);
                let content = &data[raw_start + 1..q];
                let escaped = memchr(b'\\', content).is_some();
                let (start, stop) = if escaped {
                    let at = out.escaped.len();
                    unescape(content, &mut out.escaped);
                    (at, out.escaped.len())
                } else {
                    (raw_start + 1, q)
                };
                (
                    Cell {
                        raw_end: end as u32,
                        start: start as u32,
                        end: stop as u32,
                        kind: K_STR,
                        quoted: true,
                        escaped,
                    },
                    end,
                )
            } else {
                let end = memchr(delim, &data[raw_start.min(e)..e]).map_or(e, |i| raw_start + i);
                let Some(cell) = bare(data, raw_start.min(end), end) else {
                    return false;
                };
                (cell, end)
            };
            if !out.put(fills, j, data, cell) {
                return false;
            }
            j += 1;
            if next >= e {
                break;
            }
            p = next + 1; // past the delimiter
        }
    } else {
        // A plain line: every delimiter ends a cell (the first cell's
        // token starts after the indentation, or at a delimiter within it:
        // such a line is refused anyway).  In a planned run a cell of its
        // column's commonest shape is typed as its end is found
        // (`Fill::put_fast`); the others take the cell path.
        let (mut token, mut p) = if key.is_some() {
            (first, first)
        } else {
            ((s + plen).min(e), s)
        };
        while p <= e {
            let fast = match fills.get_mut(j) {
                Some(f) if indented => f.put_fast(data, token, e, delim),
                _ => None,
            };
            if let Some((end, kind)) = fast {
                out.kinds[j] |= kind;
                p = end;
            } else {
                // (8 bytes at a time: cells are too short for a SIMD search to pay)
                p = find_delim(data, p, e, delim);
                let start = if j == 0 { token.min(p) } else { token };
                let Some(cell) = bare(data, start, p) else {
                    return false;
                };
                if !out.put(fills, j, data, cell) {
                    return false;
                }
            }
            j += 1;
            p += 1;
            token = p;
        }
    }
    if j != out.width {
        if !fills.is_empty() {
            return false; // (split's outcome then tells what it is)
        }
        flags.not_plain = true;
        // keep the columns rectangular (the run is refused anyway)
        for col in out.cols.iter_mut() {
            col.truncate(start_len);
        }
        return true;
    }
    out.line_starts.push(s as u32);
    if let Some((cell, _)) = key {
        out.keys.push(cell);
    }
    true
}

/// The first `delim` in `data[p..e]`, or `e`: a word at a time (the exact
/// zero-byte test on the word XOR the delimiter, the first match from its
/// trailing zeros), the last bytes one by one.
#[inline(always)]
fn find_delim(data: &[u8], mut p: usize, e: usize, delim: u8) -> usize {
    let pattern = u64::from_ne_bytes([delim; 8]);
    while let Some(w) = data.get(p..p + 8).filter(|_| p + 8 <= e) {
        let mut word = [0u8; 8];
        word.copy_from_slice(w);
        let x = u64::from_le_bytes(word) ^ pattern;
        let zero = crate::scalars::zero_bytes(x);
        if zero != 0 {
            return p + (zero.trailing_zeros() / 8) as usize;
        }
        p += 8;
    }
    while p < e && data[p] != delim {
        p += 1;
    }
    p
}

/// The bare cell `data[s..e]` (its delimiter or the line end at `e`):
/// trimmed, its kind; None for an "odd" number token.
#[inline(always)]
fn bare(data: &[u8], s: usize, e: usize) -> Option<Cell> {
    let (ts, te) = crate::scalars::trim_spaces(data, s, e);
    Some(Cell {
        raw_end: e as u32,
        start: ts as u32,
        end: te as u32,
        kind: kind(&data[ts..te])?,
        quoted: false,
        escaped: false,
    })
}

/// A trimmed plain token's kind bits; None for an "odd" number token.
#[inline(always)]
fn kind(tok: &[u8]) -> Option<u8> {
    match tok.first() {
        Some(b'n') if tok == b"null" => return Some(K_NULL),
        Some(b't') if tok == b"true" => return Some(K_BOOL),
        Some(b'f') if tok == b"false" => return Some(K_BOOL),
        // (the commonest number: a short int without a leading zero)
        Some(b'1'..=b'9') if tok.len() <= FLOAT_EXACT && tok.iter().all(u8::is_ascii_digit) => {
            return Some(K_INT)
        }
        Some(b'-' | b'0'..=b'9') => {}
        _ => return Some(K_STR),
    }
    let Some((frac, exp)) = crate::scalars::number_shape(tok) else {
        return Some(K_STR);
    };
    // (exponent chars: "e", an optional sign, the digits)
    let exp_digits = if exp > 0 {
        exp - 1 - usize::from(matches!(tok[tok.len() - exp + 1], b'+' | b'-'))
    } else {
        0
    };
    if tok.len() > ODD_LEN || exp_digits >= ODD_EXP_DIGITS {
        return None;
    }
    if frac || exp > 0 {
        // Without an exponent a token of at most 40 characters is finite.
        if exp > 0 && float(tok).is_infinite() {
            return Some(K_HUGE);
        }
        return Some(K_FLOAT);
    }
    let digits = tok.len() - usize::from(tok[0] == b'-');
    let wide = if digits > FLOAT_EXACT { K_WIDE } else { 0 };
    if digits <= LONG || int(tok).is_some() {
        Some(K_INT | wide)
    } else if digits > 38 {
        Some(K_HUGE | wide)
    } else {
        Some(K_BIG | wide)
    }
}

/// A §4 integer token's value, if it fits int64.
fn int(tok: &[u8]) -> Option<i64> {
    let (neg, digits) = match tok.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, tok),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    // (accumulated negative: -9223372036854775808 fits, its opposite does not)
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_sub(i64::from(d - b'0'))?;
    }
    if neg {
        Some(v)
    } else {
        v.checked_neg()
    }
}

/// A §4 integer token's value, if it has at most 38 digits (a Decimal(38,
/// 0) holds it; `kind` calls a longer one `K_HUGE`).
fn int128(tok: &[u8]) -> Option<i128> {
    if let Some(v) = int(tok) {
        return Some(v.into());
    }
    let (neg, digits) = tok.strip_prefix(b"-").map_or((false, tok), |d| (true, d));
    if digits.is_empty() || digits.len() > 38 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // (38 digits: below i128::MAX)
    let v = digits
        .iter()
        .fold(0i128, |v, &d| v * 10 + i128::from(d - b'0'));
    Some(if neg { -v } else { v })
}

/// Powers of ten a float holds exactly.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// A §4 number token's float value, correctly rounded (as Rust's and
/// Polars' parsers give it).  The common short forms take Clinger's fast
/// path: a mantissa below 2^53 and a power of ten of at most 22 are both
/// exact, so one multiplication or division rounds once, correctly.
fn float(tok: &[u8]) -> f64 {
    let (neg, body) = match tok.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, tok),
    };
    let mut mantissa: u64 = 0;
    let mut digits = 0;
    let mut scale: i32 = 0;
    let mut i = 0;
    let mut point = false;
    while i < body.len() {
        match body[i] {
            d @ b'0'..=b'9' => {
                if digits < 19 {
                    mantissa = mantissa * 10 + u64::from(d - b'0');
                    if mantissa != 0 {
                        digits += 1;
                    }
                } else {
                    digits += 1;
                }
                if point {
                    scale -= 1;
                }
            }
            b'.' => point = true,
            _ => break,
        }
        i += 1;
    }
    let mut exp: i32 = 0;
    if i < body.len() {
        // an exponent: "e", a sign, digits (at most 16 of them: longer is "odd")
        let e = &body[i + 1..];
        let (eneg, ed) = match e.split_first() {
            Some((b'-', r)) => (true, r),
            Some((b'+', r)) => (false, r),
            _ => (false, e),
        };
        if ed.len() > 4 {
            return slow_float(tok);
        }
        for &d in ed {
            exp = exp * 10 + i32::from(d.wrapping_sub(b'0'));
        }
        if eneg {
            exp = -exp;
        }
    }
    let total = scale + exp;
    if digits > 15 || mantissa >= (1 << 53) || !(-22..=22).contains(&total) {
        return slow_float(tok);
    }
    let m = mantissa as f64;
    let f = if total >= 0 {
        m * POW10[total as usize]
    } else {
        m / POW10[(-total) as usize]
    };
    if neg {
        -f
    } else {
        f
    }
}

fn slow_float(tok: &[u8]) -> f64 {
    std::str::from_utf8(tok)
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        .unwrap_or(f64::NAN)
}

fn set_bit(bits: &mut [u8], i: usize) {
    bits[i >> 3] |= 1 << (i & 7);
}

/// A validity bitmap for `n` values, all valid.
fn all_valid(n: usize) -> Vec<u8> {
    let mut v = vec![0xffu8; n.div_ceil(8)];
    if !n.is_multiple_of(8) {
        if let Some(last) = v.last_mut() {
            *last = (1u8 << (n % 8)) - 1;
        }
    }
    v
}

fn clear_bit(bits: &mut [u8], i: usize) {
    bits[i >> 3] &= !(1 << (i & 7));
}

impl Columns {
    /// Plain rows (simple quoted rows included).
    pub fn rows(&self) -> usize {
        self.line_starts.len()
    }

    /// The entry key of plain row `i` of a keyed run ([`split_entries`];
    /// `data`: the run), unescaped; empty for another run.
    pub fn key<'a>(&'a self, data: &'a [u8], i: usize) -> &'a [u8] {
        self.keys.get(i).map_or(&[], |c| self.tok(data, c))
    }

    /// Where plain row `i`'s line starts in the run.
    pub fn row_start(&self, i: usize) -> Option<usize> {
        self.line_starts.get(i).map(|&s| s as usize)
    }

    /// The kinds of column `col`'s cells in rows `lo..hi`, or-ed.
    pub fn bits(&self, col: usize, lo: usize, hi: usize) -> u8 {
        let all = self.kinds.get(col).copied().unwrap_or(0);
        if lo == 0 && hi >= self.rows() {
            return all; // (the whole run: known from the split)
        }
        self.cells(col, lo, hi).iter().fold(0, |b, c| b | c.kind)
    }

    /// Whether column `col` has a `null` token anywhere in the run.
    fn has_nulls(&self, col: usize) -> bool {
        self.kinds.get(col).is_none_or(|&k| k & K_NULL != 0)
    }

    fn cells(&self, col: usize, lo: usize, hi: usize) -> &[Cell] {
        let cells = self.cols.get(col).map_or(&[][..], |c| c.as_slice());
        let hi = hi.min(cells.len());
        cells.get(lo.min(hi)..hi).unwrap_or(&[])
    }

    /// The buffer cell `c`'s range is in: `data` (the run), or the
    /// unescaped contents.
    fn source<'a>(&'a self, data: &'a [u8], c: &Cell) -> &'a [u8] {
        if c.escaped {
            &self.escaped
        } else {
            data
        }
    }

    /// The token of cell `c` (`data`: the run), or its unescaped content.
    fn tok<'a>(&'a self, data: &'a [u8], c: &Cell) -> &'a [u8] {
        let source = self.source(data, c);
        source.get(c.start as usize..c.end as usize).unwrap_or(&[])
    }

    /// `validity` of `cells`, rows of column `col`: none without a pass
    /// over them when the whole run has no `null` there.
    fn validity_of(&self, col: usize, cells: &[Cell]) -> (Option<Vec<u8>>, usize) {
        if !self.has_nulls(col) {
            return (None, 0);
        }
        Self::validity(cells)
    }

    /// Nulls where the cell is the token `null` (the other kinds are the
    /// caller's to have checked).
    fn validity(cells: &[Cell]) -> (Option<Vec<u8>>, usize) {
        let nulls: Vec<u32> = (0..)
            .zip(cells)
            .filter(|(_, c)| c.kind == K_NULL)
            .map(|(i, _)| i)
            .collect();
        (validity_bitmap(&nulls, cells.len()), nulls.len())
    }

    /// Cells of column `col`, rows `lo..hi`.
    pub fn len(&self, col: usize, lo: usize, hi: usize) -> usize {
        self.cells(col, lo, hi).len()
    }

    /// The validity bitmap of column `col`, rows `lo..hi` (None: no nulls),
    /// and the null count: nulls where the cell is the token `null`.
    pub fn nulls(&self, col: usize, lo: usize, hi: usize) -> (Option<Vec<u8>>, usize) {
        self.validity_of(col, self.cells(col, lo, hi))
    }

    /// Column `col`, rows `lo..hi`, as fixed-width little-endian values
    /// written into `out` (`kind.width()` bytes per cell; the caller has
    /// checked that the cells' kinds fit, other cells get zeros):
    ///
    /// * [`Fixed::Int64`]: the INT cells;
    /// * [`Fixed::Float64`]: the number cells (-0 as 0, as §4 decodes it).
    ///
    /// Written in place: a fresh output buffer costs its page faults once,
    /// not twice.
    pub fn write_fixed(
        &self,
        data: &[u8],
        col: usize,
        lo: usize,
        hi: usize,
        kind: Fixed,
        out: &mut [u8],
    ) {
        let cells = self.cells(col, lo, hi);
        // (one loop per layout: the slot width is then a constant)
        match kind {
            Fixed::Int64 => {
                for (slot, c) in out.chunks_exact_mut(8).zip(cells) {
                    let v = if c.kind & K_INT != 0 {
                        int(self.tok(data, c)).unwrap_or(0)
                    } else {
                        0
                    };
                    slot.copy_from_slice(&v.to_le_bytes());
                }
            }
            Fixed::Decimal128 => {
                for (slot, c) in out.chunks_exact_mut(16).zip(cells) {
                    let v = if c.kind & (K_INT | K_BIG) != 0 {
                        int128(self.tok(data, c)).unwrap_or(0)
                    } else {
                        0
                    };
                    slot.copy_from_slice(&v.to_le_bytes());
                }
            }
            Fixed::Float64 => {
                for (slot, c) in out.chunks_exact_mut(8).zip(cells) {
                    let mut f = 0.0;
                    // (a number beyond float range is inf, in a column given a float type)
                    if c.kind & (K_INT | K_FLOAT | K_BIG | K_HUGE) != 0 {
                        f = float(self.tok(data, c));
                        if f == 0.0 {
                            f = 0.0;
                        }
                    }
                    slot.copy_from_slice(&f.to_le_bytes());
                }
            }
        }
    }

    /// The strings of column `col`, rows `rows`, as Arrow string views
    /// (16 bytes each, into `out`), numbers as their canonical text (see
    /// `typed::string_view`), or as their tokens if `raw`; the strings longer than 12 bytes go one after the
    /// other into `long`, the views' buffer 0 (shorter ones sit in their
    /// views): the frames then hold the strings, not the whole run.
    /// Returns false, having written part of it, where a cell's text is the
    /// reference's to write (see `typed::number_text`: not met).
    pub fn write_views(
        &self,
        data: &[u8],
        col: usize,
        rows: std::ops::Range<usize>,
        out: &mut [u8],
        long: &mut Vec<u8>,
        raw: bool,
    ) -> bool {
        let mut text = String::new();
        for (slot, c) in out
            .chunks_exact_mut(16)
            .zip(self.cells(col, rows.start, rows.end))
        {
            let mut view = 0;
            if c.kind != K_NULL || c.quoted {
                match typed::string_view(self.source(data, c), c, raw, &mut text, long, 0) {
                    Some(v) => view = v,
                    None => return false,
                }
            }
            slot.copy_from_slice(&view.to_le_bytes());
        }
        true
    }

    /// Booleans, as a bitmap (`values`) of `true` cells.
    pub fn boolean(&self, col: usize, lo: usize, hi: usize) -> Buffers<u8> {
        let cells = self.cells(col, lo, hi);
        let mut values = vec![0u8; cells.len().div_ceil(8)];
        for (i, c) in cells.iter().enumerate() {
            // ("true" or "false": the length tells)
            if c.kind == K_BOOL && c.end - c.start == 4 {
                set_bit(&mut values, i);
            }
        }
        let (validity, nulls) = self.validity_of(col, cells);
        Buffers {
            values,
            validity,
            nulls,
        }
    }

    /// The raw tokens the reference's string frame holds for these rows
    /// (`TableScan._split`): cells as split, the first with the row
    /// indentation, empty ones null, quoted ones marked (`_unquote`).
    pub fn tokens(&self, data: &[u8], col: usize, lo: usize, hi: usize, delim: u8) -> Strings {
        let cells = self.cells(col, lo, hi);
        let mut out = Strings {
            offsets: Vec::with_capacity(cells.len() + 1),
            ..Strings::default()
        };
        out.offsets.push(0);
        let mut empty: Vec<u32> = Vec::new();
        for (i, c) in (0..).zip(cells) {
            let r = lo + i as usize;
            if self.keyed && col == 0 {
                // An entry key, always a string: marked as a quoted token
                // (after the indentation), its content as written.
                let line = self.line_starts.get(r).copied().unwrap_or(0) as usize;
                let raw = data.get(line..c.raw_end as usize).unwrap_or(&[]);
                let indent = raw.iter().take_while(|&&b| b == b' ').count();
                let content = if raw.get(indent) == Some(&b'"') {
                    raw.get(indent + 1..raw.len().saturating_sub(1))
                        .unwrap_or(&[])
                } else {
                    data.get(c.start as usize..c.end as usize).unwrap_or(&[])
                };
                out.data.extend_from_slice(&raw[..indent]);
                out.data.push(QUOTED);
                out.data.extend(
                    content
                        .iter()
                        .map(|&b| if b == delim { DELIM_IN_QUOTES } else { b }),
                );
                out.offsets.push(out.data.len() as i32);
                continue;
            }
            let mut raw_start = if col == 0 {
                self.line_starts.get(r).copied().unwrap_or(0)
            } else {
                self.cols[col - 1].get(r).map_or(0, |p| p.raw_end + 1)
            } as usize;
            if self.keyed && col == 1 {
                // (an entry row's first cell from its token: the spaces after
                // the key's colon are not the cell's, and a quoted cell's
                // token must start with its mark, as a table's cells do)
                while raw_start < c.raw_end as usize && data.get(raw_start) == Some(&b' ') {
                    raw_start += 1;
                }
            }
            let raw_end = c.raw_end as usize;
            if c.quoted {
                // (before the opening quote: the first cell's indentation)
                let quote = if c.escaped {
                    let raw = data.get(raw_start..raw_end).unwrap_or(&[]);
                    raw_start + memchr(b'"', raw).unwrap_or(0)
                } else {
                    (c.start as usize).saturating_sub(1)
                };
                out.data
                    .extend_from_slice(data.get(raw_start..quote).unwrap_or(&[]));
                out.data.push(QUOTED);
                // (the content as written, escapes and all: the frame reader
                // unescapes a token's value, and rebuilds a row's line from them)
                let content = data
                    .get(quote + 1..raw_end.saturating_sub(1))
                    .unwrap_or(&[]);
                out.data.extend(content.iter().map(
                    |&b| {
                        if b == delim {
                            DELIM_IN_QUOTES
                        } else {
                            b
                        }
                    },
                ));
            } else if raw_end > raw_start {
                out.data
                    .extend_from_slice(data.get(raw_start..raw_end).unwrap_or(&[]));
            } else {
                empty.push(i);
            }
            out.offsets.push(out.data.len() as i32);
        }
        out.validity = validity_bitmap(&empty, cells.len());
        out.nulls = empty.len();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(data: &[u8], plen: usize, width: usize) -> Columns {
        match split(data, plen, b',', width, usize::MAX) {
            Split::Columns(c) => c,
            other => panic!("{other:?}"),
        }
    }

    fn fixed(c: &Columns, data: &[u8], col: usize, kind: Fixed) -> Vec<u8> {
        let mut out = vec![0xaa; c.rows() * kind.width()];
        c.write_fixed(data, col, 0, c.rows(), kind, &mut out);
        out
    }

    #[test]
    fn numbers_as_rust_parses_them() {
        let mut toks: Vec<String> = [
            "0",
            "-0",
            "-0.0",
            "1",
            "1.5",
            "802.265",
            "0.1",
            "0.3",
            "123456789012345",
            "1234567890123456",
            "9007199254740993",
            "1e22",
            "1e23",
            "1.7976931348623157e308",
            "2.2250738585072014e-308",
            "4.9e-324",
            "1e-400",
            "1e400",
            "123.456e-7",
            "-5E+3",
            "0.000000000000000000001",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
        ]
        .iter()
        .map(|t| t.to_string())
        .collect();
        let mut x: u64 = 88172645463325252;
        for _ in 0..20000 {
            // (xorshift: digits, a point, an exponent)
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = format!("{}", x % 10u64.pow((x % 19) as u32 + 1));
            let cut = (x >> 40) as usize % (digits.len() + 1);
            let mut t = digits[..cut].to_string();
            if cut < digits.len() {
                t = format!("{}.{}", if t.is_empty() { "0" } else { &t }, &digits[cut..]);
            }
            if x & 1 == 1 {
                t = format!("{t}e{}", (x >> 20) as i64 % 40 - 20);
            }
            if x & 2 == 2 {
                t = format!("-{t}");
            }
            toks.push(t);
        }
        for t in &toks {
            let want: f64 = t.parse().unwrap();
            assert_eq!(float(t.as_bytes()).to_bits(), want.to_bits(), "{t}");
            if let Ok(i) = t.parse::<i64>() {
                assert_eq!(int(t.as_bytes()), Some(i), "{t}");
            } else if !t.contains(['.', 'e']) {
                assert_eq!(int(t.as_bytes()), None, "{t}");
            }
        }
    }

    /// The same outcome, walked in one piece or two.
    fn same_split(data: &[u8], width: usize) {
        same_split_as(data, width, false);
    }

    /// [`same_split`], of table rows or (`keyed`) entry rows (`width`
    /// counting the keys' column); the keys, too.
    fn same_split_as(data: &[u8], width: usize, keyed: bool) {
        let one = split_run(data, 2, b',', width, usize::MAX, usize::MAX, None, keyed);
        let two = split_run(data, 2, b',', width, usize::MAX, 1, None, keyed);
        match (&one, &two) {
            (Split::Columns(a), Split::Columns(b)) => {
                assert_eq!(
                    (a.rows(), a.lines, a.quoted, &a.specials),
                    (b.rows(), b.lines, b.quoted, &b.specials)
                );
                for r in 0..a.rows() {
                    assert_eq!(a.key(data, r), b.key(data, r));
                    assert_eq!(a.row_start(r), b.row_start(r));
                }
                for col in 0..width {
                    let (ta, tb) = (
                        a.tokens(data, col, 0, a.rows(), b','),
                        b.tokens(data, col, 0, b.rows(), b','),
                    );
                    assert_eq!(
                        (ta.offsets, ta.data, ta.validity),
                        (tb.offsets, tb.data, tb.validity)
                    );
                    assert_eq!(a.bits(col, 0, a.rows()), b.bits(col, 0, b.rows()));
                }
            }
            _ => assert_eq!(format!("{one:?}"), format!("{two:?}")),
        }
    }

    /// A view's string (None: null), its longer strings in `long`.
    fn view_str(view: u128, long: &[Vec<u8>]) -> Vec<u8> {
        let b = view.to_le_bytes();
        let len = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
        if len <= 12 {
            return b[4..4 + len].to_vec();
        }
        let index = u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize;
        let offset = u32::from_le_bytes([b[12], b[13], b[14], b[15]]) as usize;
        let s = long[index][offset..offset + len].to_vec();
        assert_eq!(&s[..4], &b[4..8]);
        s
    }

    /// A planned split (in one piece and in two) gives the values the
    /// cells give, for the plan their kinds allow; a misfit gives the cells.
    fn same_typed(data: &[u8], width: usize) {
        same_typed_as(data, width, false);
    }

    /// [`same_typed`], of table rows or (`keyed`) entry rows.
    fn same_typed_as(data: &[u8], width: usize, keyed: bool) {
        let planned = |parallel, plan: &[Plan]| {
            split_run(
                data,
                2,
                b',',
                width,
                usize::MAX,
                parallel,
                Some(plan),
                keyed,
            )
        };
        let Split::Columns(cells) =
            split_run(data, 2, b',', width, usize::MAX, PARALLEL_RUN, None, keyed)
        else {
            for parallel in [usize::MAX, 1] {
                let plan = vec![
                    Plan {
                        layout: Layout::Skip,
                        allowed: 0xff
                    };
                    width
                ];
                let got = planned(parallel, &plan);
                assert!(!matches!(got, Split::Columns(_)));
            }
            return;
        };
        let n = cells.rows();
        let plan: Vec<Plan> = (0..width)
            .map(|col| {
                let bits = cells.bits(col, 0, n);
                Plan {
                    layout: Layout::of_kinds(bits),
                    allowed: bits,
                }
            })
            .collect();
        for parallel in [usize::MAX, 1] {
            let Split::Columns(mut c) = planned(parallel, &plan) else {
                panic!("a planned split that fits gave no columns");
            };
            assert_eq!(
                (c.rows(), c.lines, c.quoted, &c.specials),
                (n, cells.lines, cells.quoted, &cells.specials)
            );
            let typed = c.take_typed();
            for (col, t) in typed.iter().enumerate() {
                assert_eq!(c.bits(col, 0, n), cells.bits(col, 0, n));
                let (validity, nulls) = cells.nulls(col, 0, n);
                if !matches!(t.values, Values::Skip) {
                    assert_eq!(validity_bitmap(&t.nulls, n), validity);
                    assert_eq!(t.nulls.len(), nulls);
                }
                match &t.values {
                    Values::Int64(v) => {
                        let mut want = vec![0u8; n * 8];
                        cells.write_fixed(data, col, 0, n, Fixed::Int64, &mut want);
                        let got: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                        assert_eq!(got, want);
                    }
                    Values::Float64(v) => {
                        let mut want = vec![0u8; n * 8];
                        cells.write_fixed(data, col, 0, n, Fixed::Float64, &mut want);
                        let got: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                        assert_eq!(got, want);
                    }
                    Values::Decimal128(v) => {
                        let mut want = vec![0u8; n * 16];
                        cells.write_fixed(data, col, 0, n, Fixed::Decimal128, &mut want);
                        let got: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                        assert_eq!(got, want);
                    }
                    Values::Bool(v) => assert_eq!(pack_bits(v), cells.boolean(col, 0, n).values),
                    Values::Views { views, long } => {
                        let mut want = vec![0u8; n * 16];
                        let mut want_long = Vec::new();
                        assert!(cells.write_views(
                            data,
                            col,
                            0..n,
                            &mut want,
                            &mut want_long,
                            false
                        ));
                        for (r, view) in views.iter().enumerate() {
                            let w =
                                u128::from_le_bytes(want[r * 16..r * 16 + 16].try_into().unwrap());
                            assert_eq!(
                                view_str(*view, long),
                                view_str(w, &[want_long.clone()]),
                                "row {r}"
                            );
                        }
                        assert_eq!(views.len(), n);
                    }
                    Values::Skip => {}
                }
            }
            // A plan that one cell does not fit: the cells.
            for col in 0..width {
                let bits = cells.bits(col, 0, n);
                if bits.count_ones() > 1 {
                    let mut tight = plan.clone();
                    tight[col].allowed = bits & (bits - 1); // (its lowest kind left out)
                    let Split::Columns(mut c) = planned(parallel, &tight) else {
                        continue; // (split_planned then splits into cells)
                    };
                    assert!(c.take_typed().is_empty(), "a misfit was typed");
                }
            }
        }
    }

    #[test]
    fn decimal128_columns() {
        // Ints of up to 38 digits, beyond int64 among them, as i128, by the
        // plan (short ones typed as split, longer ones by the cell path) and
        // by the cells' export alike.
        let big = "99999999999999999999999999999999999999"; // (38 digits)
        let data = format!(
            "  1,{big}\n  -0,-{big}\n  null,9223372036854775808\n  -9223372036854775809,12\n"
        );
        let data = data.as_bytes();
        let want: [i128; 8] = [
            1,
            10i128.pow(38) - 1,
            0,
            1 - 10i128.pow(38),
            0,
            1 << 63,
            -(1 << 63) - 1,
            12,
        ];
        let allowed = K_INT | K_BIG | K_WIDE | K_NULL;
        let plan = [Plan {
            layout: Layout::Decimal128,
            allowed,
        }; 2];
        let Split::Columns(mut c) = split_planned(data, 2, b',', 2, usize::MAX, &plan) else {
            panic!("not split");
        };
        let typed = c.take_typed();
        for (col, t) in typed.iter().enumerate() {
            let Values::Decimal128(v) = &t.values else {
                panic!("not decimal128");
            };
            let expect: Vec<i128> = want.iter().skip(col).step_by(2).copied().collect();
            assert_eq!(v, &expect);
        }
        assert_eq!(typed[0].nulls, vec![2]);
        let Split::Columns(cells) = split(data, 2, b',', 2, usize::MAX) else {
            panic!("not split");
        };
        let mut bytes = vec![0u8; 4 * 16];
        cells.write_fixed(data, 1, 0, 4, Fixed::Decimal128, &mut bytes);
        let got: Vec<i128> = bytes
            .chunks_exact(16)
            .map(|b| i128::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(got, [want[1], want[3], want[5], want[7]]);
        // (39 digits: beyond the layout, a misfit of the plan)
        let data = format!("  1,{big}9\n");
        let got = split_planned(data.as_bytes(), 2, b',', 2, usize::MAX, &plan);
        assert!(!matches!(got, Split::Columns(ref c) if !c.typed.is_empty()));
        assert_eq!(int128(b"-"), None);
        assert_eq!(int128(b"12a"), None);
    }

    #[test]
    fn planned_splits_agree() {
        let mut x: u64 = 0x9e3779b97f4a7c15;
        let cells = [
            "1",
            "-7",
            "0",
            "123456789012",
            "2.5",
            "-0.0",
            "1e5",
            "true",
            "false",
            "null",
            "x",
            "a much longer string",
            "\"q,r\"",
            "\"null\"",
            " sp ",
            "é日本語の長い文字列です",
            "",
            "12345678901234567890",
            // (beyond int64 up to 38 digits; beyond float range)
            "-99999999999999999999999999999999999999",
            "1e400",
            "-1.50E+400",
            "1234567890123456789012345678901234567890",
            // (the shapes around Typed::put_fast's: leading zeros, -0,
            // 15 and 16 digits, decimals, keywords' neighbours, dates)
            "05",
            "-0",
            "-12",
            "123456789012345",
            "1234567890123456",
            "-0.25",
            "0.000000000000001",
            "1.123456789012345",
            "12.5e3",
            "1.",
            "-",
            "2017-08-16",
            "nothing",
            "tru",
            "truex",
            "false ",
            "x ",
        ];
        for round in 0..600 {
            let width = 1 + round % 4;
            // per column a few kinds, so that many columns fit a layout
            let pools: Vec<Vec<&str>> = (0..width)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (0..1 + x % 3)
                        .map(|k| cells[((x >> (8 * k)) % cells.len() as u64) as usize])
                        .collect()
                })
                .collect();
            let rows: Vec<String> = (0..50 + round)
                .map(|i| {
                    let r: Vec<&str> = pools.iter().map(|p| p[(i * 7 + i / 3) % p.len()]).collect();
                    if i % 41 == 40 && round % 3 == 0 {
                        "  # note".to_string()
                    } else {
                        format!("  {}", r.join(","))
                    }
                })
                .collect();
            same_typed((rows.join("\n") + "\n").as_bytes(), width);
        }
    }

    /// `n` rows of 3 cells: quoted cells, a colon in a cell (the
    /// decoder's), comments, spaced cells.
    fn sample_rows(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| match i % 7 {
                0 => format!("  {i},\"q,{i}\",x"),
                1 => format!("  {i},a:b,y"),
                2 => "  # note".to_string(),
                _ => format!("  {i}, {i}.5 ,z{i}"),
            })
            .collect()
    }

    #[test]
    fn halves_agree() {
        let rows = sample_rows(400);
        let text = rows.join("\n") + "\n";
        same_split(text.as_bytes(), 3);
        // a verdict in either half, and both
        for bad in ["  1,2", "   1,2,3", "k: v", "  ,1,2", "  1,2,3,4"] {
            for at in [3, 390] {
                let mut r = rows.clone();
                r[at] = bad.to_string();
                same_split((r.join("\n") + "\n").as_bytes(), 3);
            }
        }
        let mut r = rows.clone();
        r[5] = "k: v".to_string();
        r[395] = "  1,2".to_string();
        same_split((r.join("\n") + "\n").as_bytes(), 3);
    }

    #[test]
    fn entry_rows() {
        let data: &[u8] = b"  a: 1,x\n  \"b\\tc\": 2,\"y,z\"\n  null : 3,q\n  # note\n  \"d\"x: 4,r\n  e:\n  f: 5,s:t\n  k,l: 6,u\n  m 7,v\n";
        let Split::Columns(c) = split_entries(data, 2, b',', 2, usize::MAX, None) else {
            panic!()
        };
        // (specials: the comment, a quoted key not against its colon, no
        // cells, a colon in a cell, no colon at all)
        assert_eq!(
            c.specials.iter().map(|s| s.0).collect::<Vec<_>>(),
            vec![3, 4, 5, 6, 8]
        );
        assert_eq!(c.rows(), 4);
        assert!(c.quoted);
        let keys: Vec<&[u8]> = (0..4).map(|r| c.key(data, r)).collect();
        assert_eq!(keys, [&b"a"[..], b"b\tc", b"null", b"k,l"]);
        assert_eq!(
            (c.bits(0, 0, 4), c.bits(1, 0, 4), c.bits(2, 0, 4)),
            (K_STR, K_INT, K_STR)
        );
        assert_eq!(c.row_start(1), Some(9));
        let t = c.tokens(data, 0, 0, 4, b',');
        assert_eq!(t.data, b"  \x01a  \x01b\\tc  \x01null  \x01k\x02l");
        let t = c.tokens(data, 1, 0, 4, b',');
        assert_eq!(t.data, b"1236"); // (from each first cell, past the spaces after the colon)
        let t = c.tokens(data, 2, 0, 4, b',');
        assert_eq!(t.data, b"x\x01y\x02zqu");
        let mut v = vec![0; 64];
        assert!(c.write_views(data, 0, 0..4, &mut v, &mut Vec::new(), false));
        assert_eq!(&v[16..24], b"\x03\0\0\0b\tc\0");
        // Verdicts: off the indentation; a row of another width.
        for (text, want) in [
            (&b"  a: 1,x\n b: 2,y\n"[..], "NotIndented"),
            (b"  a: 1,x\n  b: 2\n", "NotPlain"),
            (b"  a: 1,x\n    b: 2,y\n", "NotIndented"),
        ] {
            let got = format!("{:?}", split_entries(text, 2, b',', 2, usize::MAX, None));
            assert!(got.starts_with(want), "{got}");
        }
        // A planned split keeps the keys; one or two halves agree.  (The
        // sample rows as entry rows: quoted keys with escapes, bare, spaced.)
        let rows: Vec<String> = (0..300)
            .zip(sample_rows(300))
            .map(|(i, r)| match (i % 3, r.trim_start()) {
                (_, r) if r.starts_with('#') => format!("  {r}"),
                (0, r) => format!("  \"k\\\"{i}\": {r}"),
                (1, r) => format!("  k{i}: {r}"),
                (_, r) => format!("  k {i} : {r}"),
            })
            .collect();
        let text = rows.join("\n") + "\n";
        same_split_as(text.as_bytes(), 4, true);
        same_typed_as(text.as_bytes(), 4, true);
        let plan = [
            Plan {
                layout: Layout::Views,
                allowed: K_STR,
            },
            Plan {
                layout: Layout::Int64,
                allowed: K_INT,
            },
            Plan {
                layout: Layout::Views,
                allowed: K_STR | K_FLOAT,
            },
            Plan {
                layout: Layout::Views,
                allowed: K_STR,
            },
        ];
        let Split::Columns(mut c) =
            split_entries(text.as_bytes(), 2, b',', 3, usize::MAX, Some(&plan))
        else {
            panic!()
        };
        assert_eq!(c.take_typed().len(), 4);
        assert_eq!(
            (c.key(text.as_bytes(), 0), c.key(text.as_bytes(), 2)),
            (&b"k\"0"[..], &b"k4"[..])
        );
    }

    #[test]
    fn tokens_keep_the_digits() {
        // (a Decimal type with a scale is cast from these: "1.50" is not its float's text)
        let data = b"  1.50,a\n  -0,b\n  1e2,c\n  null,d\n  \"q,r\",e\n  12345678901234567.891,f\n";
        let want: [&[u8]; 6] = [
            b"1.50",
            b"-0",
            b"1e2",
            b"",
            b"q,r",
            b"12345678901234567.891",
        ];
        let plan = [
            Plan {
                layout: Layout::Tokens,
                allowed: 0xff,
            },
            Plan {
                layout: Layout::Views,
                allowed: K_STR,
            },
        ];
        for parallel in [usize::MAX, 1] {
            let Split::Columns(mut c) =
                split_run(data, 2, b',', 2, usize::MAX, parallel, Some(&plan), false)
            else {
                panic!("no columns")
            };
            let typed = c.take_typed();
            let Values::Views { views, long } = &typed[0].values else {
                panic!("not views")
            };
            let got: Vec<Vec<u8>> = views.iter().map(|v| view_str(*v, long)).collect();
            assert_eq!(got, want.map(<[u8]>::to_vec));
            assert_eq!(typed[0].nulls, [3]);
        }
        // The cells' views: the same if raw, canonical text if not.
        let Split::Columns(cells) = split(data, 2, b',', 2, usize::MAX) else {
            panic!("no columns")
        };
        for (raw, second) in [(true, &b"-0"[..]), (false, &b"0"[..])] {
            let (mut v, mut long) = (vec![0u8; 6 * 16], Vec::new());
            assert!(cells.write_views(data, 0, 0..6, &mut v, &mut long, raw));
            let view = u128::from_le_bytes(v[16..32].try_into().unwrap());
            assert_eq!(view_str(view, &[long]), second);
        }
    }

    #[test]
    fn kinds() {
        assert_eq!(kind(b"null"), Some(K_NULL));
        assert_eq!(kind(b"true"), Some(K_BOOL));
        assert_eq!(kind(b"05"), Some(K_STR));
        assert_eq!(kind(b"-0"), Some(K_INT));
        assert_eq!(kind(b"1.5e3"), Some(K_FLOAT));
        assert_eq!(kind(b"1e400"), Some(K_HUGE));
        assert_eq!(kind(b"1234567890123456"), Some(K_INT | K_WIDE));
        assert_eq!(kind(b"9223372036854775808"), Some(K_BIG | K_WIDE));
        assert_eq!(kind(b"-9223372036854775808"), Some(K_INT | K_WIDE));
        assert_eq!(kind(&[b'1'; 39]), Some(K_HUGE | K_WIDE));
        assert_eq!(kind(&[b'1'; 41]), None);
        assert_eq!(kind(b"1e00000000000000001"), None);
        assert_eq!(kind(b"1."), Some(K_STR));
        assert_eq!(kind(b""), Some(K_STR));
    }

    #[test]
    fn rows_and_specials() {
        let data = b"  1, a ,\"x,y\"\n  2,b:c,z\n  # note\n  3,null,\"\"\n";
        let c = cols(data, 2, 3);
        assert_eq!(c.rows(), 2);
        assert_eq!(c.lines, 4);
        assert_eq!(
            c.specials.iter().map(|s| s.0).collect::<Vec<_>>(),
            vec![1, 2]
        );
        assert!(c.quoted);
        assert_eq!(c.nulls(1, 0, 2), (Some(vec![0b01]), 1));
        let t = c.tokens(data, 2, 0, 2, b',');
        assert_eq!(t.data, b"\x01x\x02y\x01");
        let t0 = c.tokens(data, 0, 0, 2, b',');
        assert_eq!(t0.data, b"  1  3");
        assert_eq!(
            fixed(&c, data, 0, Fixed::Float64),
            [1f64.to_le_bytes(), 3f64.to_le_bytes()].concat()
        );
        let mut v = vec![0xaa; 32];
        assert!(c.write_views(data, 2, 0..2, &mut v, &mut Vec::new(), false));
        assert_eq!(v[..7], [3, 0, 0, 0, b'x', b',', b'y']);
        assert_eq!(v[16..], [0; 16]);
        let long = b"  abcdefghijklmnop,1\n  qrstuvwxyz0123,2\n";
        let c = cols(long, 2, 2);
        let mut v = vec![0; 32];
        let mut buf = Vec::new();
        assert!(c.write_views(long, 0, 0..2, &mut v, &mut buf, false));
        assert_eq!(buf, b"abcdefghijklmnopqrstuvwxyz0123");
        assert_eq!(
            (v[..4].to_vec(), &v[4..8], v[12]),
            (vec![16, 0, 0, 0], &b"abcd"[..], 0)
        );
        assert_eq!((v[16], &v[20..24], v[28]), (14, &b"qrst"[..], 16));
    }

    #[test]
    fn escaped_cells() {
        assert_eq!(closing_quote(b"\"a\\\"b\",", 1), Some(5));
        assert_eq!(closing_quote(b"\"a\\\\\",", 1), Some(4));
        assert_eq!(closing_quote(b"\"a\\x\"", 1), None); // (not an escape of §7.1's)
        assert_eq!(closing_quote(b"\"a\\u0041\\u001B\"", 1), Some(14));
        for bad in [
            &b"\"\\uD800\""[..],
            b"\"\\udfff\"",
            b"\"\\u00\"",
            b"\"\\u00g1\"",
            b"\"\\u+041\"",
        ] {
            assert_eq!(closing_quote(bad, 1), None, "{bad:?}"); // (the decoder's error)
        }
        assert_eq!(closing_quote(b"\"a\\\"", 1), None); // (unterminated)
        let mut out = Vec::new();
        unescape(br#"q\"\\\n\r\tz\u0041\u00e9\u001b\u0000"#, &mut out);
        assert_eq!(out, "q\"\\\n\r\tzA\u{e9}\u{1b}\0".as_bytes());
        // A run long enough for two halves, escaped cells in both: each cell's text (the
        // second half's moved past the first's), its token as written, and a planned split.
        let mut data = Vec::new();
        let mut want = Vec::new();
        let mut i = 0;
        while data.len() < 3 << 20 {
            let (cell, text) = match i % 3 {
                0 => (format!("\"a\\\"{i}\\\\\""), format!("a\"{i}\\")),
                1 => (format!("\"tab\\t{i},x\""), format!("tab\t{i},x")),
                _ => (format!("w{i}"), format!("w{i}")),
            };
            data.extend_from_slice(format!("  {i},{cell}\n").as_bytes());
            want.push((cell, text));
            i += 1;
        }
        let c = cols(&data, 2, 2);
        let n = c.rows();
        assert_eq!(n, want.len());
        let (mut views, mut long) = (vec![0u8; n * 16], Vec::new());
        assert!(c.write_views(&data, 1, 0..n, &mut views, &mut long, false));
        let tokens = c.tokens(&data, 1, 0, n, b',');
        let plan = [
            Plan {
                layout: Layout::Int64,
                allowed: K_INT,
            },
            Plan {
                layout: Layout::Views,
                allowed: K_STR,
            },
        ];
        let Split::Columns(mut planned) = split_planned(&data, 2, b',', 2, usize::MAX, &plan)
        else {
            panic!("not planned");
        };
        let typed = planned.take_typed();
        let Values::Views {
            views: pv,
            long: plong,
        } = &typed[1].values
        else {
            panic!("not views");
        };
        for (r, (cell, text)) in want.iter().enumerate() {
            let view = u128::from_le_bytes(views[r * 16..r * 16 + 16].try_into().unwrap());
            assert_eq!(
                view_str(view, std::slice::from_ref(&long)),
                text.as_bytes(),
                "row {r}"
            );
            assert_eq!(view_str(pv[r], plong), text.as_bytes(), "row {r}");
            let o = &tokens.offsets;
            let tok = &tokens.data[o[r] as usize..o[r + 1] as usize];
            let raw: Vec<u8> = match cell.strip_prefix('"') {
                Some(body) => [&[QUOTED][..], body.trim_end_matches('"').as_bytes()]
                    .concat()
                    .iter()
                    .map(|&b| if b == b',' { DELIM_IN_QUOTES } else { b })
                    .collect(),
                None => cell.as_bytes().to_vec(),
            };
            assert_eq!(tok, raw, "row {r}");
        }
    }

    #[test]
    fn numbers_as_text() {
        // A string column's numbers, as the reference's `text_of` writes their exact values
        // (the digits written, in canonical form: not their floats'); a quoted cell as
        // written; both paths (cells, and a planned split).
        let cells: [(&[u8], &[u8]); 18] = [
            (b"1.50", b"1.5"),
            // (beyond float range: the decoder's exact Decimal, as encode_decimal writes it;
            // beyond 38 digits, an int as it is)
            (b"1e400", b"1e+400"),
            (b"-1.50E+400", b"-1.5e+400"),
            (b"123.456e1000", b"1.23456e+1002"),
            (b"100e999", b"1e+1001"),
            (
                b"123456789012345678901234567890123456789",
                b"123456789012345678901234567890123456789",
            ),
            (b"-0", b"0"),
            (b"-0.0", b"0"),
            (b"1e3", b"1000"),
            (b"1E-7", b"1e-7"),
            (b"2.5e+10", b"25000000000"),
            (b"-12345678901234567890", b"-12345678901234567890"),
            (
                b"0.1000000000000000055511151231257827",
                b"0.1000000000000000055511151231257827",
            ),
            (b"123456789012345678.990", b"123456789012345678.99"),
            (b"7", b"7"),
            (b"x", b"x"),
            (b"true", b"true"),
            (b"\"1.50\"", b"1.50"),
        ];
        let mut data = b"  ".to_vec();
        for (i, (tok, _)) in cells.iter().enumerate() {
            data.extend_from_slice(if i > 0 { b"," } else { b"" });
            data.extend_from_slice(tok);
        }
        data.push(b'\n');
        let c = cols(&data, 2, cells.len());
        let plan = [Plan {
            layout: Layout::Views,
            allowed: 0xff,
        }; 18];
        let Split::Columns(mut planned) = split_planned(&data, 2, b',', 18, usize::MAX, &plan)
        else {
            panic!("not planned");
        };
        let typed = planned.take_typed();
        for (col, (tok, want)) in cells.iter().enumerate() {
            let (mut v, mut long) = (vec![0u8; 16], Vec::new());
            assert!(c.write_views(&data, col, 0..1, &mut v, &mut long, false));
            let view = u128::from_le_bytes(v.try_into().unwrap());
            assert_eq!(
                view_str(view, &[long]),
                *want,
                "{:?}",
                std::str::from_utf8(tok)
            );
            let Values::Views { views, long } = &typed[col].values else {
                panic!("not views");
            };
            assert_eq!(
                view_str(views[0], long),
                *want,
                "{:?}",
                std::str::from_utf8(tok)
            );
        }
    }

    #[test]
    fn verdicts() {
        assert!(matches!(
            split(b"  1,2\n  3\n", 2, b',', 2, usize::MAX),
            Split::NotPlain { .. }
        ));
        assert!(matches!(
            split(b"  1,2\n   3,4\n", 2, b',', 2, usize::MAX),
            Split::NotIndented { .. }
        ));
        assert!(matches!(
            split(b"  1,2\n  ,4\n", 2, b',', 2, usize::MAX),
            Split::NotIndented { .. }
        ));
        assert!(matches!(
            split(b"  1,2\n ,4\n", 2, b',', 2, usize::MAX),
            Split::NotIndented { .. }
        ));
        assert!(matches!(
            split(b"  1,2\n ,4\n", 2, b',', 3, usize::MAX),
            Split::NotPlain { .. }
        ));
        assert!(matches!(
            split(b"  1,2\nk: v\n", 2, b',', 2, usize::MAX),
            Split::NotIndented { .. }
        ));
        assert!(matches!(
            split(b"  1,2\n\n", 2, b',', 2, usize::MAX),
            Split::Unhandled
        ));
        assert!(matches!(
            split(b"  1,\xff\n", 2, b',', 2, usize::MAX),
            Split::Unhandled
        ));
        assert!(matches!(
            split(b"  1,2", 2, b',', 2, usize::MAX),
            Split::Unhandled
        ));
        // (only the first `cap` lines: what follows is not looked at)
        let Split::Columns(c) = split(b"  1,2\n  3,4\nk: v\n", 2, b',', 2, 2) else {
            panic!()
        };
        assert_eq!((c.rows(), c.lines, c.end), (2, 2, 12));
        // ... in two halves, planned, the cap in either half
        let text: String = (0..300).map(|i| format!("  {i},{}\n", i * 2)).collect();
        let plan = [Plan {
            layout: Layout::Int64,
            allowed: K_INT,
        }; 2];
        for cap in [1, 137, 151, 299, 300, 301] {
            let got = split_run(text.as_bytes(), 2, b',', 2, cap, 1, Some(&plan), false);
            let Split::Columns(mut c) = got else { panic!() };
            let n = cap.min(300);
            let end = text.lines().take(n).map(|l| l.len() + 1).sum::<usize>();
            assert_eq!((c.rows(), c.lines, c.end), (n, n, end));
            let typed = c.take_typed();
            let want: Vec<i64> = (0..n as i64).map(|i| i * 2).collect();
            assert!(matches!(&typed[1].values, Values::Int64(v) if *v == want));
        }
        assert!(matches!(
            split_run(text.as_bytes(), 2, b',', 2, 0, 1, Some(&plan), false),
            Split::Unhandled
        ));
        let c = cols(b"  true,null\n  false,x\n", 2, 2);
        let b = c.boolean(0, 0, 2);
        assert_eq!(b.values, vec![1]);
        assert_eq!(c.bits(1, 0, 2), K_NULL | K_STR);
        assert_eq!(c.bits(1, 1, 2), K_STR);
    }
}
