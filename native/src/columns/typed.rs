//! A planned split's writer (see [`super::split_planned`]): each column's
//! values written in place as the rows are split, into one room per column
//! for the whole run, each half of the run into its share of it
//! ([`Fill`]); then joined ([`join`]).  And the Arrow string views of
//! both paths ([`string_view`]: the cells' `Columns::write_views` too).

use super::{find_delim, float, int, int128, kind, Cell, Layout, Plan, Typed, Values, POW10};
use super::{FLOAT_EXACT, K_BOOL, K_FLOAT, K_HUGE, K_INT, K_NULL, K_STR, K_WIDE};
use crate::pool;

impl Values {
    /// Room for `rows` values of `layout`, zeroed (slices of it are written
    /// in place): memory a released column gave back, if any ([`pool`]).
    pub(super) fn room(layout: Layout, rows: usize) -> Values {
        match layout {
            Layout::Int64 => Values::Int64(pool::take_zeroed(rows)),
            Layout::Float64 => Values::Float64(pool::take_zeroed(rows)),
            Layout::Decimal128 => Values::Decimal128(pool::take_zeroed(rows)),
            Layout::Bool => Values::Bool(pool::take_zeroed(rows)),
            Layout::Views | Layout::Tokens => Values::Views {
                views: pool::take_zeroed(rows),
                long: Vec::new(),
            },
            Layout::Skip => Values::Skip,
        }
    }

    /// Its room split at row `at`: the sinks of the two halves of a run.
    pub(super) fn sinks(&mut self, at: usize) -> (Sink<'_>, Sink<'_>) {
        fn halves<T>(v: &mut [T], at: usize) -> (&mut [T], &mut [T]) {
            v.split_at_mut(at.min(v.len()))
        }
        match self {
            Values::Int64(v) => {
                let (a, b) = halves(v, at);
                (Sink::Int64(a), Sink::Int64(b))
            }
            Values::Float64(v) => {
                let (a, b) = halves(v, at);
                (Sink::Float64(a), Sink::Float64(b))
            }
            Values::Decimal128(v) => {
                let (a, b) = halves(v, at);
                (Sink::Decimal128(a), Sink::Decimal128(b))
            }
            Values::Bool(v) => {
                let (a, b) = halves(v, at);
                (Sink::Bool(a), Sink::Bool(b))
            }
            Values::Views { views, .. } => {
                let (a, b) = halves(views, at);
                (Sink::Views(a), Sink::Views(b))
            }
            Values::Skip => (Sink::Skip, Sink::Skip),
        }
    }

    /// The `rows` values written from `from` on moved to `to` (the second
    /// half's rows right after the first half's), the rest dropped.
    fn close_gap(&mut self, from: usize, to: usize, rows: usize) {
        fn close<T: Copy>(v: &mut Vec<T>, from: usize, to: usize, rows: usize) {
            if from > to {
                v.copy_within(from..from + rows, to);
            }
            v.truncate(to + rows);
        }
        match self {
            Values::Int64(v) => close(v, from, to, rows),
            Values::Float64(v) => close(v, from, to, rows),
            Values::Decimal128(v) => close(v, from, to, rows),
            Values::Bool(v) => close(v, from, to, rows),
            Values::Views { views, .. } => close(views, from, to, rows),
            Values::Skip => {}
        }
    }
}

/// One half's share of a planned column's room (see [`Values::sinks`]).
pub(super) enum Sink<'a> {
    Int64(&'a mut [i64]),
    Float64(&'a mut [f64]),
    Decimal128(&'a mut [i128]),
    Bool(&'a mut [u8]),
    Views(&'a mut [u128]),
    Skip,
}

/// A planned column's values of one half of a run, written in place into
/// the run's room: its rows, nulls, and longer strings.
pub(super) struct Fill<'a> {
    allowed: u8,
    sink: Sink<'a>,
    /// Values written.
    n: usize,
    /// Rows (of this half) holding `null`.
    nulls: Vec<u32>,
    /// The strings of more than 12 bytes, and this buffer's index.
    long: Vec<u8>,
    buffer: u32,
    /// A number's canonical text in a string column (see [`number_text`]).
    text: String,
    /// Numbers as their tokens ([`Layout::Tokens`]).
    raw: bool,
}

/// `x` into `sink[*n]`; false: no room (not reached: a half has no more
/// rows than lines).
#[inline(always)]
fn store<T>(sink: &mut [T], n: &mut usize, x: T) -> bool {
    match sink.get_mut(*n) {
        Some(slot) => {
            *slot = x;
            *n += 1;
            true
        }
        None => false,
    }
}

impl<'a> Fill<'a> {
    pub(super) fn new(plan: Plan, sink: Sink<'a>, buffer: u32) -> Fill<'a> {
        Fill {
            allowed: plan.allowed,
            sink,
            n: 0,
            nulls: Vec::new(),
            long: Vec::new(),
            buffer,
            text: String::new(),
            raw: plan.layout == Layout::Tokens,
        }
    }

    /// The cell of plain row `row`, as its layout keeps it; false: a misfit.
    #[inline(always)]
    pub(super) fn put(&mut self, data: &[u8], c: &Cell, row: usize) -> bool {
        if c.kind & !self.allowed != 0 {
            return false;
        }
        let null = c.kind == K_NULL && !c.quoted;
        if null {
            self.nulls.push(row as u32);
        }
        let tok = data.get(c.start as usize..c.end as usize).unwrap_or(&[]);
        let n = &mut self.n;
        match &mut self.sink {
            Sink::Int64(v) => store(v, n, if null { 0 } else { int(tok).unwrap_or(0) }),
            Sink::Float64(v) => store(v, n, if null { 0.0 } else { unsigned_zero(float(tok)) }),
            Sink::Decimal128(v) => store(v, n, if null { 0 } else { int128(tok).unwrap_or(0) }),
            // ("true" or "false": the length tells)
            Sink::Bool(v) => store(v, n, u8::from(!null && tok.len() == 4)),
            Sink::Views(v) => {
                let view = if null {
                    0
                } else {
                    match string_view(
                        data,
                        c,
                        self.raw,
                        &mut self.text,
                        &mut self.long,
                        self.buffer,
                    ) {
                        Some(view) => view,
                        None => return false, // (the reference's text: a misfit of the plan)
                    }
                };
                store(v, n, view)
            }
            Sink::Skip => true,
        }
    }

    /// The cell at `data[p..]` of a plain row (its line ends at `e`), when
    /// it has the commonest shape of this column's layout (a short int, a
    /// short decimal, a boolean, a string that is no other kind): its value
    /// written in the same pass that finds its end, without a [`Cell`].
    /// Returns the cell's end (a delimiter or `e`) and kind; None, having
    /// written nothing: [`Fill::put`] decides (nulls, spaces, exponents,
    /// long numbers, misfits).
    #[inline(always)]
    pub(super) fn put_fast(
        &mut self,
        data: &[u8],
        p: usize,
        e: usize,
        delim: u8,
    ) -> Option<(usize, u8)> {
        let rest = data.get(p..e)?;
        let allowed = self.allowed;
        let n = &mut self.n;
        let (end, kind, stored) = match &mut self.sink {
            Sink::Int64(v) if allowed & K_INT != 0 => {
                let (x, _, len) = lead_number(rest, delim, false)?;
                (p + len, K_INT, store(v, n, x))
            }
            Sink::Decimal128(v) if allowed & K_INT != 0 => {
                // (a short int: longer ones, K_BIG, take the cell path)
                let (x, _, len) = lead_number(rest, delim, false)?;
                (p + len, K_INT, store(v, n, i128::from(x)))
            }
            Sink::Float64(v) => {
                let (m, frac, len) = lead_number(rest, delim, true)?;
                let kind = if frac > 0 { K_FLOAT } else { K_INT };
                if kind & !allowed != 0 {
                    return None;
                }
                // (as `float`: a mantissa of at most 15 digits and at most
                // 22 decimals are exact, one division rounds once)
                let f = m.unsigned_abs() as f64 / POW10[frac];
                let f = unsigned_zero(if m < 0 { -f } else { f });
                (p + len, kind, store(v, n, f))
            }
            Sink::Bool(v) if allowed & K_BOOL != 0 => {
                let (x, len) = match rest.first() {
                    Some(b't') if rest.starts_with(b"true") => (1, 4),
                    Some(b'f') if rest.starts_with(b"false") => (0, 5),
                    _ => return None,
                };
                if rest.get(len).is_some_and(|&b| b != delim) {
                    return None;
                }
                (p + len, K_BOOL, store(v, n, x))
            }
            Sink::Views(v) if allowed & K_STR != 0 => {
                let end = find_delim(data, p, e, delim);
                let tok = data.get(p..end)?;
                let (&first, &last) = (tok.first()?, tok.last()?);
                // (spaces are trimmed, numbers and keywords are other kinds)
                if first == b' ' || last == b' ' {
                    return None;
                }
                if matches!(first, b'n' | b't' | b'f' | b'-' | b'0'..=b'9') && kind(tok)? != K_STR {
                    return None;
                }
                let view = view_of(data, p, tok, &mut self.long, self.buffer);
                (end, K_STR, store(v, n, view))
            }
            _ => return None,
        };
        // (no room: the cell path then says no too)
        stored.then_some((end, kind))
    }
}

/// -0 as 0, as §4 decodes it.
#[inline(always)]
fn unsigned_zero(f: f64) -> f64 {
    if f == 0.0 {
        0.0
    } else {
        f
    }
}

/// The text a String column holds for the plain cell `c` whose token is
/// `tok`, as the reference's `text_of` writes its exact value: a number's
/// canonical text, any other token as it is.  Returns None for the token
/// itself, or Some(written) with the text in `buf`: `-0` is `0`, a token
/// with a fraction or an exponent (`K_FLOAT`, or `K_HUGE` beyond float
/// range) is `format::decimal_value_text` of it, the exact digits in §2
/// form (`1.50` is `1.5`, `1e5` is `100000`, `123456789012345678.99`
/// stays so: a String column keeps what was written, not its float), an
/// integer token is already canonical.  Err: not met (a token that is not
/// UTF-8 is not a number).
fn number_text(tok: &[u8], c: &Cell, buf: &mut String) -> Result<Option<()>, ()> {
    if c.quoted {
        return Ok(None);
    }
    Ok(match c.kind & !K_WIDE {
        K_INT if tok == b"-0" => {
            buf.clear();
            buf.push('0');
            Some(())
        }
        K_FLOAT | K_HUGE if tok.iter().any(|&b| matches!(b, b'.' | b'e' | b'E')) => {
            let token = std::str::from_utf8(tok).map_err(|_| ())?;
            *buf = crate::format::decimal_value_text(token);
            Some(())
        }
        _ => None,
    })
}

/// The Arrow string view of the cell `c` of a String column (`data`: the
/// buffer its range is in): its token, or (unless `raw`) a number's
/// canonical text (see [`number_text`], written in `text`); longer strings
/// go into `long`, buffer `buffer` of the column (see [`view_of`]).
#[inline(always)]
pub(super) fn string_view(
    data: &[u8],
    c: &Cell,
    raw: bool,
    text: &mut String,
    long: &mut Vec<u8>,
    buffer: u32,
) -> Option<u128> {
    let tok = data.get(c.start as usize..c.end as usize).unwrap_or(&[]);
    Some(if !raw && number_text(tok, c, text).ok()?.is_some() {
        let text = text.as_bytes();
        view_of(text, 0, text, long, buffer)
    } else {
        view_of(data, c.start as usize, tok, long, buffer)
    })
}

/// The Arrow string view of `tok` (at `data[start..]`, a string's
/// content): inline up to 12 bytes, else a reference into `long`, buffer
/// `buffer` of the column, to which it is appended.
#[inline(always)]
fn view_of(data: &[u8], start: usize, tok: &[u8], long: &mut Vec<u8>, buffer: u32) -> u128 {
    let len = tok.len();
    if len <= 12 {
        // (16 bytes loaded at once where the run has them, the token's
        // kept: no copy of a variable length)
        let body = match data.get(start..start + 16) {
            Some(w) => {
                let mut b = [0u8; 16];
                b.copy_from_slice(w);
                u128::from_le_bytes(b) & ((1u128 << (8 * len)) - 1)
            }
            None => {
                let mut b = [0u8; 16];
                b[..len].copy_from_slice(tok);
                u128::from_le_bytes(b)
            }
        };
        return len as u128 | body << 32;
    }
    let prefix = u32::from_le_bytes([tok[0], tok[1], tok[2], tok[3]]);
    let view =
        len as u128 | (prefix as u128) << 32 | (buffer as u128) << 64 | (long.len() as u128) << 96;
    pool::push_bytes(long, tok);
    view
}

/// The §4 number at the start of `rest` that ends at a `delim` or at the
/// end, when it is short and plain: an optional minus, `0` or a digit
/// string without a leading zero, and with `point` an optional `.` and
/// decimals; at most 15 digits in all (exact in a float and an int64).
/// Returns its digits as an integer (signed), the number of decimals and
/// its length; None for any other token (an exponent, a leading zero,
/// spaces, more digits: the kind rules decide those).
#[inline(always)]
fn lead_number(rest: &[u8], delim: u8, point: bool) -> Option<(i64, usize, usize)> {
    let neg = rest.first() == Some(&b'-');
    let mut i = usize::from(neg);
    let mut m: i64 = 0;
    let mut digits = 0;
    match rest.get(i) {
        Some(b'0') => {
            i += 1;
            digits = 1;
        }
        Some(b'1'..=b'9') => {
            while let Some(&d) = rest.get(i).filter(|d| d.is_ascii_digit()) {
                m = m.wrapping_mul(10).wrapping_add(i64::from(d - b'0'));
                i += 1;
                digits += 1;
            }
        }
        _ => return None,
    }
    let mut frac = 0;
    if point && rest.get(i) == Some(&b'.') {
        i += 1;
        while let Some(&d) = rest.get(i).filter(|d| d.is_ascii_digit()) {
            m = m.wrapping_mul(10).wrapping_add(i64::from(d - b'0'));
            i += 1;
            frac += 1;
        }
        if frac == 0 {
            return None;
        }
    }
    // (checked once: more digits may have wrapped `m`, it is not used then)
    if digits + frac > FLOAT_EXACT || rest.get(i).is_some_and(|&b| b != delim) {
        return None;
    }
    Some((if neg { -m } else { m }, frac, i))
}

/// What a [`Fill`] leaves once written: its column's allowed kinds, its
/// null rows and its longer strings (the sink given back).
pub(super) struct Parts {
    allowed: u8,
    nulls: Vec<u32>,
    long: Vec<u8>,
}

impl Fill<'_> {
    pub(super) fn into_parts(self) -> Parts {
        Parts {
            allowed: self.allowed,
            nulls: self.nulls,
            long: self.long,
        }
    }
}

/// The typed columns of a run from its rooms: the first half's values
/// (`rows1` of its `lines1` lines were rows), the second half's moved right
/// after them, its nulls shifted and its longer strings as buffer 1.
/// `second`: the second half's row count and parts (None: one half).
pub(super) fn join(
    rooms: Vec<Values>,
    firsts: Vec<Parts>,
    second: Option<(usize, Vec<Parts>)>,
    lines1: usize,
    rows: usize,
) -> Vec<Typed> {
    let (rows1, seconds) = second.unwrap_or((rows, Vec::new()));
    let mut seconds = seconds.into_iter();
    rooms
        .into_iter()
        .zip(firsts)
        .map(|(mut values, first)| {
            values.close_gap(lines1, rows1, rows - rows1);
            let mut nulls = first.nulls;
            let mut buffers = vec![first.long];
            if let Some(more) = seconds.next() {
                nulls.extend(more.nulls.iter().map(|&r| r + rows1 as u32));
                buffers.push(more.long);
            }
            if let Values::Views { long, .. } = &mut values {
                *long = buffers;
            }
            Typed {
                allowed: first.allowed,
                values,
                nulls,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lead_numbers() {
        // (digits as an integer, decimals, length): up to the delimiter or the end
        assert_eq!(lead_number(b"42,x", b',', false), Some((42, 0, 2)));
        assert_eq!(lead_number(b"-42", b',', false), Some((-42, 0, 3)));
        assert_eq!(lead_number(b"0", b',', false), Some((0, 0, 1)));
        assert_eq!(lead_number(b"-0", b',', false), Some((0, 0, 2)));
        assert_eq!(lead_number(b"802.265|", b'|', true), Some((802265, 3, 7)));
        assert_eq!(lead_number(b"-0.25", b',', true), Some((-25, 2, 5)));
        assert_eq!(
            lead_number(b"123456789012345", b',', false),
            Some((123456789012345, 0, 15))
        );
        assert_eq!(
            lead_number(b"1.23456789012345", b',', true),
            Some((123456789012345, 14, 16))
        );
        // the kind rules' cases: none of these
        for tok in [
            &b"05"[..],
            b"-05",
            b"1.5",
            b"1.",
            b".5",
            b"1e5",
            b"+5",
            b"-",
            b"",
            b" 1",
            b"1 ",
            b"1234567890123456",
            b"1.234567890123456",
            b"12,5x",
        ] {
            let point = tok != b"1.5";
            let want = if tok == b"12,5x" {
                Some((12, 0, 2))
            } else {
                None
            };
            assert_eq!(
                lead_number(tok, b',', point),
                want,
                "{:?}",
                String::from_utf8_lossy(tok)
            );
        }
        assert_eq!(lead_number(b"1.5", b',', false), None); // (not an int)
    }

    #[test]
    fn views_name_their_buffer() {
        let mut long = Vec::new();
        let data = b"short,a string longer than twelve";
        let short = view_of(data, 0, &data[..5], &mut long, 1);
        assert_eq!(short & 0xffff_ffff, 5);
        assert_eq!((short >> 32).to_le_bytes()[..5], *b"short");
        assert!(long.is_empty());
        let tok = &data[6..];
        let view = view_of(data, 6, tok, &mut long, 1);
        let b = view.to_le_bytes();
        assert_eq!(
            u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize,
            tok.len()
        );
        assert_eq!(&b[4..8], &tok[..4]);
        assert_eq!(u32::from_le_bytes([b[8], b[9], b[10], b[11]]), 1); // buffer
        assert_eq!(u32::from_le_bytes([b[12], b[13], b[14], b[15]]), 0); // offset
        assert_eq!(long, tok);
    }
}
