//! Arrow columns to TOON row lines: the hot part of `encode_arrow`
//! (`toonstream/_arrow_encode.py`, the reference) for a flat table.
//!
//! The binding reads a record batch through the Arrow C data interface and
//! hands its columns here as borrowed slices ([`Column`]); [`write_rows`]
//! writes `"\n" + indent + cells` per row, exactly as `dumps(rows)` writes
//! them: numbers and strings through [`crate::format`] (one §2 / §7.2
//! implementation), dates and naive timestamps as `isoformat()` writes the
//! values `to_pylist` gives.  Anything this module does not write exactly
//! (a value outside Python's date range, nanoseconds that are not whole
//! microseconds, invalid UTF-8, offsets out of bounds) is a [`Decline`]
//! before any output is kept: the caller then runs the reference for the
//! batch.
//!
//! ```
//! use toonstream_native::arrow::{write_rows, Column, Offsets, Values};
//! let ids = Column::new(Values::I64(&[1, 2]), None, 0);
//! let offsets = [0i32, 3, 11];
//! let names = Values::utf8(Offsets::Small(&offsets), b"AdaBob, Jr.", 0, 2).unwrap();
//! let names = Column::new(names, None, 0);
//! let mut out = String::new();
//! write_rows(&[ids, names], 2, b',', 2, &mut out).unwrap();
//! assert_eq!(out, "\n  1,Ada\n  2,\"Bob, Jr.\"");
//! ```

use crate::format::{write_float, write_str_cell};

/// The batch holds something written only by the reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decline;

/// A bitmap (validity or booleans): bit `i` of `bytes`, least significant first.
#[derive(Clone, Copy, Debug)]
pub struct Bits<'a>(pub &'a [u8]);

impl Bits<'_> {
    #[inline]
    fn get(&self, i: usize) -> Result<bool, Decline> {
        let byte = self.0.get(i >> 3).ok_or(Decline)?;
        Ok(byte >> (i & 7) & 1 == 1)
    }
}

/// The unit of a timestamp's `i64` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Second,
    Milli,
    Micro,
    Nano,
}

/// A column's values (whole buffers: row `i` is at index `offset + i`).
#[derive(Debug)]
pub enum Values<'a> {
    /// the null type: every cell `null`
    Null,
    Bool(Bits<'a>),
    I8(&'a [i8]),
    I16(&'a [i16]),
    I32(&'a [i32]),
    I64(&'a [i64]),
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
    /// float16, as its bits
    F16(&'a [u16]),
    F32(&'a [f32]),
    F64(&'a [f64]),
    /// utf8 and large_utf8 (made by [`Values::utf8`]): value `i` is
    /// `text[offsets[i] - base..offsets[i + 1] - base]`
    Utf8 {
        offsets: Offsets<'a>,
        base: usize,
        text: &'a str,
    },
    /// 16-byte views: the length, then the bytes inline (up to 12) or a
    /// prefix, a buffer index and an offset
    Utf8View {
        views: &'a [[u8; 16]],
        buffers: Vec<&'a [u8]>,
    },
    /// days since 1970-01-01
    Date32(&'a [i32]),
    /// naive (`zone` None) or at a fixed UTC offset of `zone` minutes
    /// (`UTC`, `+05:30`)
    Timestamp {
        values: &'a [i64],
        unit: Unit,
        zone: Option<i32>,
    },
    /// time of day: time32 (seconds, milliseconds) and time64 (micro-, nanoseconds)
    Time32(&'a [i32], Unit),
    Time64(&'a [i64], Unit),
    /// decimal128 (any precision): little-endian i128 values of `value *
    /// 10**scale` (a negative scale allowed)
    Decimal128 {
        values: &'a [[u8; 16]],
        scale: i32,
    },
    /// decimal256: the same with little-endian 256-bit values
    Decimal256 {
        values: &'a [[u8; 32]],
        scale: i32,
    },
    /// integer indices (as i64) into dictionary values of any kind here
    Dictionary {
        indices: Box<Column<'a>>,
        values: Box<Column<'a>>,
    },
}

/// The offsets of a string column.
#[derive(Clone, Copy, Debug)]
pub enum Offsets<'a> {
    Small(&'a [i32]),
    Large(&'a [i64]),
}

impl Offsets<'_> {
    #[inline]
    fn get(&self, i: usize) -> Option<usize> {
        match self {
            Offsets::Small(o) => o.get(i).and_then(|&v| usize::try_from(v).ok()),
            Offsets::Large(o) => o.get(i).and_then(|&v| usize::try_from(v).ok()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Offsets::Small(o) => o.len(),
            Offsets::Large(o) => o.len(),
        }
    }
}

impl<'a> Values<'a> {
    /// A string column's values for rows `offset..offset + n`: the bytes
    /// they span are checked to be UTF-8 once, here (a value then only needs
    /// its ends to be character boundaries).
    pub fn utf8(
        offsets: Offsets<'a>,
        data: &'a [u8],
        offset: usize,
        n: usize,
    ) -> Result<Self, Decline> {
        let (base, end) = (offsets.get(offset), offsets.get(offset + n));
        let (Some(base), Some(end)) = (base, end) else {
            return Err(Decline);
        };
        let bytes = data.get(base..end).ok_or(Decline)?;
        let text = std::str::from_utf8(bytes).map_err(|_| Decline)?;
        Ok(Values::Utf8 {
            offsets,
            base,
            text,
        })
    }
}

/// One column: its values, validity (None: no nulls) and offset.
#[derive(Debug)]
pub struct Column<'a> {
    values: Values<'a>,
    validity: Option<Bits<'a>>,
    offset: usize,
}

impl<'a> Column<'a> {
    pub fn new(values: Values<'a>, validity: Option<Bits<'a>>, offset: usize) -> Self {
        Column {
            values,
            validity,
            offset,
        }
    }
}

/// Python's datetime range: days since the epoch of 0001-01-01 and 9999-12-31.
const MIN_DAY: i64 = -719_162;
const MAX_DAY: i64 = 2_932_896;
const DAY_US: i64 = 86_400_000_000;
/// ... and in microseconds since the epoch: 0001-01-01T00:00:00, 9999-12-31T23:59:59.999999
const MIN_US: i64 = -62_135_596_800_000_000;
const MAX_US: i64 = 253_402_300_799_999_999;

/// The cell texts of a column whose cells are formatted once and then copied
/// (dictionary values): `text[ends[i-1]..ends[i]]`.
struct Texts {
    text: String,
    ends: Vec<usize>,
}

/// A column ready to write: dictionaries have their values formatted.
enum Ready<'c, 'a> {
    Plain(&'c Column<'a>),
    Dictionary(&'c Column<'a>, Texts),
}

/// Append the row lines of `n` rows of `columns` (at least one) to `out`:
/// `"\n"`, `indent` spaces, the cells joined by `delim`.  On [`Decline`]
/// `out` is left as it was.
pub fn write_rows(
    columns: &[Column<'_>],
    n: usize,
    delim: u8,
    indent: usize,
    out: &mut String,
) -> Result<(), Decline> {
    let start = out.len();
    let mut write = || -> Result<(), Decline> {
        if columns.is_empty() {
            return Err(Decline);
        }
        let mut ready = Vec::with_capacity(columns.len());
        for c in columns {
            ready.push(match &c.values {
                Values::Dictionary { values, .. } => {
                    let Some(len) = len(&values.values) else {
                        return Err(Decline);
                    };
                    let mut t = Texts {
                        text: String::new(),
                        ends: Vec::with_capacity(len),
                    };
                    for i in 0..len.saturating_sub(values.offset) {
                        cell(values, i, delim, &mut t.text)?;
                        t.ends.push(t.text.len());
                    }
                    Ready::Dictionary(c, t)
                }
                _ => Ready::Plain(c),
            });
        }
        let per_row: usize = 1 + indent + ready.iter().map(|c| width(c, n) + 1).sum::<usize>();
        out.reserve(per_row.saturating_mul(n));
        let d = char::from(delim);
        let lead: String = std::iter::once('\n')
            .chain(std::iter::repeat_n(' ', indent))
            .collect();
        for row in 0..n {
            out.push_str(&lead);
            for (j, c) in ready.iter().enumerate() {
                if j > 0 {
                    out.push(d);
                }
                match c {
                    Ready::Plain(c) => cell(c, row, delim, out)?,
                    Ready::Dictionary(c, t) => dictionary_cell(c, t, row, out)?,
                }
            }
        }
        Ok(())
    };
    let r = write();
    if r.is_err() {
        out.truncate(start);
    }
    r
}

/// A guess at a column's mean cell length (to reserve the output once).
fn width(c: &Ready<'_, '_>, n: usize) -> usize {
    let c = match c {
        Ready::Dictionary(_, t) => return t.text.len() / t.ends.len().max(1),
        Ready::Plain(c) => c,
    };
    let span = |a: Option<usize>, z: Option<usize>| match (a, z) {
        (Some(a), Some(z)) if z >= a => (z - a) / n.max(1),
        _ => 0,
    };
    let (a, z) = (c.offset, c.offset + n);
    match &c.values {
        Values::Null | Values::Bool(_) => 5,
        Values::I8(_) | Values::U8(_) | Values::I16(_) | Values::U16(_) => 4,
        Values::I32(_) | Values::U32(_) | Values::I64(_) | Values::U64(_) => 8,
        Values::F16(_) | Values::F32(_) | Values::F64(_) | Values::Decimal128 { .. } => 12,
        Values::Decimal256 { .. } => 24,
        Values::Date32(_) => 10,
        Values::Timestamp { .. } => 28,
        Values::Time32(..) | Values::Time64(..) => 10,
        Values::Utf8 { offsets, .. } => span(offsets.get(a), offsets.get(z)),
        Values::Utf8View { .. } | Values::Dictionary { .. } => 12,
    }
}

/// The number of values of a dictionary's values array (its buffers' length).
fn len(v: &Values<'_>) -> Option<usize> {
    Some(match v {
        Values::Null | Values::Bool(_) | Values::Dictionary { .. } => return None,
        Values::I8(s) => s.len(),
        Values::I16(s) => s.len(),
        Values::I32(s) | Values::Date32(s) | Values::Time32(s, _) => s.len(),
        Values::I64(s) | Values::Timestamp { values: s, .. } | Values::Time64(s, _) => s.len(),
        Values::U8(s) => s.len(),
        Values::U16(s) | Values::F16(s) => s.len(),
        Values::U32(s) => s.len(),
        Values::U64(s) => s.len(),
        Values::F32(s) => s.len(),
        Values::F64(s) => s.len(),
        Values::Utf8 { offsets, .. } => offsets.len().saturating_sub(1),
        Values::Utf8View { views, .. } => views.len(),
        Values::Decimal128 { values, .. } => values.len(),
        Values::Decimal256 { values, .. } => values.len(),
    })
}

fn dictionary_cell(c: &Column<'_>, t: &Texts, row: usize, out: &mut String) -> Result<(), Decline> {
    let Values::Dictionary { indices, .. } = &c.values else {
        return Err(Decline);
    };
    if let Some(v) = &c.validity {
        if !v.get(c.offset + row)? {
            out.push_str("null");
            return Ok(());
        }
    }
    let k = usize::try_from(index(indices, row)?).map_err(|_| Decline)?;
    let end = *t.ends.get(k).ok_or(Decline)?;
    let start = if k == 0 { 0 } else { t.ends[k - 1] };
    out.push_str(t.text.get(start..end).ok_or(Decline)?);
    Ok(())
}

/// A dictionary index (its own validity is the dictionary column's).
fn index(c: &Column<'_>, row: usize) -> Result<i64, Decline> {
    let i = c.offset + row;
    let at = |o: Option<i64>| o.ok_or(Decline);
    match &c.values {
        Values::I8(s) => at(s.get(i).map(|&v| i64::from(v))),
        Values::I16(s) => at(s.get(i).map(|&v| i64::from(v))),
        Values::I32(s) => at(s.get(i).map(|&v| i64::from(v))),
        Values::I64(s) => at(s.get(i).copied()),
        Values::U8(s) => at(s.get(i).map(|&v| i64::from(v))),
        Values::U16(s) => at(s.get(i).map(|&v| i64::from(v))),
        Values::U32(s) => at(s.get(i).map(|&v| i64::from(v))),
        Values::U64(s) => at(s.get(i).and_then(|&v| i64::try_from(v).ok())),
        _ => Err(Decline),
    }
}

/// The cell of `row`.
#[inline]
fn cell(c: &Column<'_>, row: usize, delim: u8, out: &mut String) -> Result<(), Decline> {
    let i = c.offset + row;
    if let Some(v) = &c.validity {
        if !v.get(i)? {
            out.push_str("null");
            return Ok(());
        }
    }
    match &c.values {
        Values::Null => out.push_str("null"),
        Values::Bool(bits) => out.push_str(if bits.get(i)? { "true" } else { "false" }),
        Values::I8(s) => int(s, i, out)?,
        Values::I16(s) => int(s, i, out)?,
        Values::I32(s) => int(s, i, out)?,
        Values::I64(s) => int(s, i, out)?,
        Values::U8(s) => int(s, i, out)?,
        Values::U16(s) => int(s, i, out)?,
        Values::U32(s) => int(s, i, out)?,
        Values::U64(s) => int(s, i, out)?,
        // (`to_pylist` gives a float16 or float32 as the Python float of the same value)
        Values::F16(s) => write_float(out, half(*s.get(i).ok_or(Decline)?)),
        Values::F32(s) => write_float(out, f64::from(*s.get(i).ok_or(Decline)?)),
        Values::F64(s) => write_float(out, *s.get(i).ok_or(Decline)?),
        Values::Utf8 {
            offsets,
            base,
            text,
        } => {
            let a = offsets.get(i).and_then(|a| a.checked_sub(*base));
            let z = offsets.get(i + 1).and_then(|z| z.checked_sub(*base));
            let (Some(a), Some(z)) = (a, z) else {
                return Err(Decline);
            };
            write_str_cell(out, text.get(a..z).ok_or(Decline)?, delim);
        }
        Values::Utf8View { views, buffers } => {
            let v = views.get(i).ok_or(Decline)?;
            let word = |k: usize| u32::from_le_bytes([v[k], v[k + 1], v[k + 2], v[k + 3]]) as usize;
            let n = word(0);
            if n <= 12 {
                string(&v[4..], 0, n, delim, out)?;
            } else {
                let data = buffers.get(word(8)).ok_or(Decline)?;
                let a = word(12);
                string(data, a, a.checked_add(n).ok_or(Decline)?, delim, out)?;
            }
        }
        Values::Date32(s) => {
            let mut text = String::with_capacity(10);
            date(&mut text, i64::from(*s.get(i).ok_or(Decline)?))?;
            write_str_cell(out, &text, delim);
        }
        Values::Timestamp { values, unit, zone } => {
            let mut text = String::with_capacity(32);
            timestamp(&mut text, *values.get(i).ok_or(Decline)?, *unit, *zone)?;
            write_str_cell(out, &text, delim);
        }
        Values::Time32(s, unit) => time(out, i64::from(*s.get(i).ok_or(Decline)?), *unit, delim)?,
        Values::Time64(s, unit) => time(out, *s.get(i).ok_or(Decline)?, *unit, delim)?,
        Values::Decimal128 { values, scale } => {
            let v = i128::from_le_bytes(*values.get(i).ok_or(Decline)?);
            let mut b = itoa::Buffer::new();
            decimal(out, v < 0, b.format(v.unsigned_abs()).as_bytes(), *scale)?
        }
        Values::Decimal256 { values, scale } => {
            let mut digits = [0u8; 80];
            let (negative, digits) = i256_digits(values.get(i).ok_or(Decline)?, &mut digits);
            decimal(out, negative, digits, *scale)?
        }
        Values::Dictionary { .. } => return Err(Decline),
    }
    Ok(())
}

/// A float16's value (exact in an f64).
fn half(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let mant = f64::from(h & 0x3ff);
    match (h >> 10) & 0x1f {
        0 => sign * mant * 2f64.powi(-24), // (subnormals, and ±0)
        31 if mant == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        e => sign * (1.0 + mant / 1024.0) * 2f64.powi(i32::from(e) - 15),
    }
}

fn int<T: itoa::Integer + Copy>(s: &[T], i: usize, out: &mut String) -> Result<(), Decline> {
    let mut b = itoa::Buffer::new();
    out.push_str(b.format(*s.get(i).ok_or(Decline)?));
    Ok(())
}

/// A decimal value `±digits * 10**-scale` (`digits`: the magnitude's
/// decimal digits, no leading zeros) as `dumps` writes the `Decimal`
/// `to_pylist` gives (`encode_decimal`: exact, trailing zeros dropped,
/// exponent form below 1e-6 and from 1e21): its token (the digits, the
/// point at `scale`), through `format`'s plain fast path or, for the
/// other magnitudes, `decimal_text`.
fn decimal(out: &mut String, negative: bool, digits: &[u8], scale: i32) -> Result<(), Decline> {
    if scale == 0 && digits.len() <= 21 {
        if negative {
            out.push('-');
        }
        // (an integer below 1e21: its digits)
        out.push_str(std::str::from_utf8(digits).map_err(|_| Decline)?);
        return Ok(());
    }
    // The token: at most a sign, 77 digits (decimal256's), "0." and 76
    // zeros (a scale of at most 76, its precision), else with an exponent.
    let mut token = [0u8; 160];
    let mut n = 0;
    let mut put = |s: &[u8]| -> Result<(), Decline> {
        token
            .get_mut(n..n + s.len())
            .ok_or(Decline)?
            .copy_from_slice(s);
        n += s.len();
        Ok(())
    };
    if negative {
        put(b"-")?;
    }
    match usize::try_from(scale) {
        Ok(k @ 1..=76) if digits.len() > k => {
            put(&digits[..digits.len() - k])?;
            put(b".")?;
            put(&digits[digits.len() - k..])?;
        }
        Ok(k @ 1..=76) => {
            put(b"0.")?;
            for _ in digits.len()..k {
                put(b"0")?;
            }
            put(digits)?;
        }
        _ => {
            put(digits)?;
            put(b"e")?;
            put(itoa::Buffer::new().format(-i64::from(scale)).as_bytes())?;
        }
    }
    let token = std::str::from_utf8(&token[..n]).map_err(|_| Decline)?;
    if !crate::format::write_plain_decimal(out, token) {
        out.push_str(&crate::format::decimal_text(token).map_err(|_| Decline)?);
    }
    Ok(())
}

/// A little-endian two's complement 256-bit value: its sign and the
/// decimal digits of its magnitude (in `buf`: at most 78 of them).
fn i256_digits<'b>(le: &[u8; 32], buf: &'b mut [u8; 80]) -> (bool, &'b [u8]) {
    let mut limbs = [0u64; 4];
    for (limb, bytes) in limbs.iter_mut().zip(le.chunks_exact(8)) {
        let mut word = [0u8; 8];
        word.copy_from_slice(bytes);
        *limb = u64::from_le_bytes(word);
    }
    let negative = limbs[3] >> 63 == 1;
    if negative {
        // (the magnitude: invert and add one, the carry rippling up)
        let mut carry = true;
        for limb in &mut limbs {
            let (v, c) = (!*limb).overflowing_add(u64::from(carry));
            *limb = v;
            carry = c;
        }
    }
    // Digits from the right, 19 at a time (the remainders of dividing the
    // limbs, most significant first, by 10**19).
    const TEN19: u128 = 10_000_000_000_000_000_000;
    let mut at = buf.len();
    loop {
        let mut rem: u128 = 0;
        for limb in limbs.iter_mut().rev() {
            let cur = rem << 64 | u128::from(*limb);
            *limb = (cur / TEN19) as u64; // (< 2**64: rem < 10**19)
            rem = cur % TEN19;
        }
        let done = limbs == [0; 4];
        let mut chunk = rem as u64;
        for _ in 0..19 {
            at -= 1;
            buf[at] = b'0' + (chunk % 10) as u8;
            chunk /= 10;
            if done && chunk == 0 {
                break;
            }
        }
        if done {
            break;
        }
    }
    (negative, &buf[at..])
}

fn string(data: &[u8], a: usize, z: usize, delim: u8, out: &mut String) -> Result<(), Decline> {
    let bytes = data.get(a..z).ok_or(Decline)?;
    let s = std::str::from_utf8(bytes).map_err(|_| Decline)?;
    write_str_cell(out, s, delim);
    Ok(())
}

/// `date.isoformat()` of a day count since 1970-01-01: `YYYY-MM-DD`, in
/// Python's range (years 1..9999) only.
fn date(out: &mut String, days: i64) -> Result<(), Decline> {
    if !(MIN_DAY..=MAX_DAY).contains(&days) {
        return Err(Decline);
    }
    // civil_from_days (H. Hinnant): eras of 400 years from 0000-03-01
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    pad(out, year, 4);
    out.push('-');
    pad(out, month, 2);
    out.push('-');
    pad(out, day, 2);
    Ok(())
}

/// `datetime.isoformat()` of a timestamp as `to_pylist` gives it:
/// `YYYY-MM-DD`, `T`, the [`clock`], then the offset `+HH:MM` when zoned
/// (the local time is written).  Times outside Python's range are declined;
/// a zoned one also within two days of the range's ends, as the reference
/// does.
fn timestamp(out: &mut String, v: i64, unit: Unit, zone: Option<i32>) -> Result<(), Decline> {
    let us = micros(v, unit)?;
    let local = match zone {
        None => us,
        Some(minutes) => {
            if !(MIN_US + 2 * DAY_US..=MAX_US - 2 * DAY_US).contains(&us) {
                return Err(Decline);
            }
            us + i64::from(minutes) * 60_000_000
        }
    };
    let days = local.div_euclid(DAY_US);
    let rest = local.rem_euclid(DAY_US);
    date(out, days)?;
    out.push('T');
    clock(out, rest);
    if let Some(minutes) = zone {
        out.push(if minutes < 0 { '-' } else { '+' });
        let m = i64::from(minutes.unsigned_abs());
        pad(out, m / 60, 2);
        out.push(':');
        pad(out, m % 60, 2);
    }
    Ok(())
}

/// A value in `unit` as microseconds: declined on overflow, and for
/// nanoseconds that are not whole microseconds (`to_pylist` gives another type).
fn micros(v: i64, unit: Unit) -> Result<i64, Decline> {
    match unit {
        Unit::Second => v.checked_mul(1_000_000),
        Unit::Milli => v.checked_mul(1_000),
        Unit::Micro => Some(v),
        Unit::Nano => (v % 1_000 == 0).then_some(v / 1_000),
    }
    .ok_or(Decline)
}

/// `HH:MM:SS`, then `.ffffff` unless the microseconds are zero, for
/// `us` microseconds since midnight (`time.isoformat()`).
fn clock(out: &mut String, us: i64) {
    let secs = us / 1_000_000;
    pad(out, secs / 3600, 2);
    out.push(':');
    pad(out, secs / 60 % 60, 2);
    out.push(':');
    pad(out, secs % 60, 2);
    if us % 1_000_000 != 0 {
        out.push('.');
        pad(out, us % 1_000_000, 6);
    }
}

/// A time of day cell: `time.isoformat()` (quoted: it holds `:`), in a day's range.
fn time(out: &mut String, v: i64, unit: Unit, delim: u8) -> Result<(), Decline> {
    let us = micros(v, unit)?;
    if !(0..DAY_US).contains(&us) {
        return Err(Decline);
    }
    let mut text = String::with_capacity(15);
    clock(&mut text, us);
    write_str_cell(out, &text, delim);
    Ok(())
}

/// A time zone the reference writes as a fixed offset, in minutes: `UTC`,
/// `Etc/UTC`, `+HH:MM` / `-HH:MM` (less than a day; not `-00:00`).
pub fn fixed_zone(tz: &str) -> Option<i32> {
    if matches!(tz, "UTC" | "Etc/UTC") {
        return Some(0);
    }
    let b = tz.as_bytes();
    if b.len() != 6 || b[3] != b':' || !matches!(b[0], b'+' | b'-') {
        return None;
    }
    let two = |i: usize| -> Option<i32> {
        let (h, l) = (b[i], b[i + 1]);
        (h.is_ascii_digit() && l.is_ascii_digit())
            .then(|| i32::from(h - b'0') * 10 + i32::from(l - b'0'))
    };
    let (h, m) = (two(1)?, two(4)?);
    if h > 23 || m > 59 || (b[0] == b'-' && h == 0 && m == 0) {
        return None;
    }
    Some(if b[0] == b'-' {
        -(h * 60 + m)
    } else {
        h * 60 + m
    })
}

/// `v` (>= 0) in decimal, zero-padded to `width` digits.
fn pad(out: &mut String, v: i64, width: usize) {
    let mut b = itoa::Buffer::new();
    let t = b.format(v);
    out.extend(std::iter::repeat_n('0', width.saturating_sub(t.len())));
    out.push_str(t);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(
        values: Values<'_>,
        validity: Option<Bits<'_>>,
        offset: usize,
        n: usize,
    ) -> Result<String, Decline> {
        let mut out = String::new();
        write_rows(
            &[Column::new(values, validity, offset)],
            n,
            b',',
            1,
            &mut out,
        )?;
        Ok(out)
    }

    #[test]
    fn numbers_nulls_and_offsets() {
        let v = [i64::MIN, -1, 0, i64::MAX];
        assert_eq!(
            one(Values::I64(&v), Some(Bits(&[0b1101])), 1, 3).unwrap(),
            "\n null\n 0\n 9223372036854775807"
        );
        assert_eq!(
            one(Values::U64(&[u64::MAX]), None, 0, 1).unwrap(),
            "\n 18446744073709551615"
        );
        let f = [
            0.1,
            -0.0,
            f64::NAN,
            f64::INFINITY,
            1e21,
            1e-7,
            5e-324,
            1e16,
            123456789.0,
        ];
        assert_eq!(
            one(Values::F64(&f), None, 0, f.len()).unwrap(),
            "\n 0.1\n 0\n null\n null\n 1e+21\n 1e-7\n 5e-324\n 10000000000000000\n 123456789"
        );
        assert_eq!(
            one(Values::F32(&[0.1]), None, 0, 1).unwrap(),
            "\n 0.10000000149011612"
        );
        // float16: 1.5, 0.1 (nearest), 65504, -0, the smallest subnormal, inf, NaN
        let h = [0x3e00, 0x2e66, 0x7bff, 0x8000, 0x0001, 0x7c00, 0x7e00];
        assert_eq!(
            one(Values::F16(&h), None, 0, h.len()).unwrap(),
            "\n 1.5\n 0.0999755859375\n 65504\n 0\n 5.960464477539063e-8\n null\n null"
        );
        assert_eq!(
            one(Values::Bool(Bits(&[0b10])), None, 0, 2).unwrap(),
            "\n false\n true"
        );
    }

    #[test]
    fn i256_digits_of_every_size() {
        // (a value as 256 bits from its i128 halves: the high half its sign extension or given)
        let le = |lo: u128, hi: u128| {
            let mut b = [0u8; 32];
            b[..16].copy_from_slice(&lo.to_le_bytes());
            b[16..].copy_from_slice(&hi.to_le_bytes());
            b
        };
        let text = |b: [u8; 32]| {
            let mut buf = [0u8; 80];
            let (neg, d) = i256_digits(&b, &mut buf);
            format!(
                "{}{}",
                if neg { "-" } else { "" },
                std::str::from_utf8(d).unwrap()
            )
        };
        for v in [
            0i128,
            1,
            -1,
            9,
            10_i128.pow(19),
            10_i128.pow(19) - 1,
            i128::MAX,
            i128::MIN,
        ] {
            let hi = if v < 0 { u128::MAX } else { 0 };
            assert_eq!(text(le(v as u128, hi)), v.to_string());
        }
        let max = "57896044618658097711785492504343953926634992332820282019728792003956564819967";
        assert_eq!(text(le(u128::MAX, u128::MAX >> 1)), max);
        let min = "-57896044618658097711785492504343953926634992332820282019728792003956564819968";
        assert_eq!(text(le(0, 1 << 127)), min);
        assert_eq!(text(le(0, 1)), "340282366920938463463374607431768211456"); // 2**128
    }

    #[test]
    fn decimals() {
        let v: Vec<[u8; 16]> = [150i128, -150, 0, 5, -(10i128.pow(38) - 1), 10i128.pow(21)]
            .iter()
            .map(|x| x.to_le_bytes())
            .collect();
        let dec = |scale| one(Values::Decimal128 { values: &v, scale }, None, 0, v.len()).unwrap();
        assert_eq!(
            dec(2),
            "\n 1.5\n -1.5\n 0\n 0.05\n -9.9999999999999999999999999999999999999e+35\n 10000000000000000000"
        );
        assert_eq!(
            dec(0),
            "\n 150\n -150\n 0\n 5\n -9.9999999999999999999999999999999999999e+37\n 1e+21"
        );
        assert_eq!(
            dec(-3),
            "\n 150000\n -150000\n 0\n 5000\n -9.9999999999999999999999999999999999999e+40\n 1e+24"
        );
        assert_eq!(
            dec(9),
            "\n 1.5e-7\n -1.5e-7\n 0\n 5e-9\n -9.9999999999999999999999999999999999999e+28\n 1000000000000"
        );
    }

    #[test]
    fn strings_quoted_per_delimiter() {
        let offsets = [0i32, 1, 2, 3, 7, 9, 9];
        let data = b"a,|true12";
        let col = || {
            Column::new(
                Values::utf8(Offsets::Small(&offsets), data, 0, 6).unwrap(),
                None,
                0,
            )
        };
        let mut out = String::new();
        write_rows(&[col()], 6, b'|', 0, &mut out).unwrap();
        assert_eq!(out, "\na\n,\n\"|\"\n\"true\"\n\"12\"\n\"\"");
        let mut out = String::new();
        write_rows(&[col(), col()], 2, b',', 0, &mut out).unwrap();
        assert_eq!(out, "\na,a\n\",\",\",\"");
    }

    #[test]
    fn views_inline_and_in_buffers() {
        let mut short = [0u8; 16];
        short[0] = 2;
        short[4..6].copy_from_slice(b"hi");
        let mut long = [0u8; 16];
        long[0] = 13;
        long[8] = 0; // buffer 0
        long[12] = 1; // offset 1
        let data: &[u8] = b"xthirteen bytes";
        let views = [short, long];
        let v = Values::Utf8View {
            views: &views,
            buffers: vec![data],
        };
        assert_eq!(one(v, None, 0, 2).unwrap(), "\n hi\n thirteen byte");
    }

    #[test]
    fn dates_and_timestamps() {
        let d = [0, -719_162, 2_932_896, 19_724];
        assert_eq!(
            one(Values::Date32(&d), None, 0, 4).unwrap(),
            "\n 1970-01-01\n 0001-01-01\n 9999-12-31\n 2024-01-02"
        );
        assert_eq!(one(Values::Date32(&[2_932_897]), None, 0, 1), Err(Decline));
        let t = [0, -1, 1_704_164_645_000_006];
        assert_eq!(
            one(Values::Timestamp { values: &t, unit: Unit::Micro, zone: None }, None, 0, 3).unwrap(),
            "\n \"1970-01-01T00:00:00\"\n \"1969-12-31T23:59:59.999999\"\n \"2024-01-02T03:04:05.000006\""
        );
        assert_eq!(
            one(
                Values::Timestamp {
                    values: &[1_001],
                    unit: Unit::Nano,
                    zone: None,
                },
                None,
                0,
                1
            ),
            Err(Decline)
        );
    }

    #[test]
    fn times_of_day() {
        let t = [0, 86_399_999_999, 3_723_000_001];
        assert_eq!(
            one(Values::Time64(&t, Unit::Micro), None, 0, 3).unwrap(),
            "\n \"00:00:00\"\n \"23:59:59.999999\"\n \"01:02:03.000001\""
        );
        assert_eq!(
            one(Values::Time32(&[3723], Unit::Second), None, 0, 1).unwrap(),
            "\n \"01:02:03\""
        );
        assert_eq!(
            one(Values::Time64(&[1], Unit::Nano), None, 0, 1),
            Err(Decline)
        );
        assert_eq!(
            one(Values::Time32(&[86_400], Unit::Second), None, 0, 1),
            Err(Decline)
        );
    }

    #[test]
    fn zoned_timestamps() {
        assert_eq!(fixed_zone("UTC"), Some(0));
        assert_eq!(fixed_zone("+05:30"), Some(330));
        assert_eq!(fixed_zone("-09:00"), Some(-540));
        for tz in ["-00:00", "+24:00", "Europe/Oslo", "+0530", "+5:30"] {
            assert_eq!(fixed_zone(tz), None, "{tz}");
        }
        let t = [0, 1_704_164_645_000_006];
        let zoned = |zone| Values::Timestamp {
            values: &t,
            unit: Unit::Micro,
            zone: Some(zone),
        };
        assert_eq!(
            one(zoned(-90), None, 0, 2).unwrap(),
            "\n \"1969-12-31T22:30:00-01:30\"\n \"2024-01-02T01:34:05.000006-01:30\""
        );
        assert_eq!(
            one(zoned(0), None, 0, 1).unwrap(),
            "\n \"1970-01-01T00:00:00+00:00\""
        );
        let edge = [MAX_US - DAY_US];
        let v = Values::Timestamp {
            values: &edge,
            unit: Unit::Micro,
            zone: Some(0),
        };
        assert_eq!(one(v, None, 0, 1), Err(Decline));
    }

    #[test]
    fn dictionaries_and_bad_input_decline() {
        let values = Values::utf8(Offsets::Large(&[0, 1, 3]), b"a:b", 0, 2).unwrap();
        let values = Column::new(values, None, 0);
        let idx = Column::new(Values::I32(&[1, 0, 1]), None, 0);
        let dict = Values::Dictionary {
            indices: Box::new(idx),
            values: Box::new(values),
        };
        assert_eq!(
            one(dict, Some(Bits(&[0b101])), 0, 3).unwrap(),
            "\n \":b\"\n null\n \":b\""
        );
        // offsets out of bounds, invalid UTF-8, a value ending inside a character
        let bad = Values::utf8(Offsets::Small(&[0, 5]), b"ab", 0, 1);
        assert_eq!(bad.err(), Some(Decline));
        let bad = Values::utf8(Offsets::Small(&[0, 1]), b"\xff", 0, 1);
        assert_eq!(bad.err(), Some(Decline));
        let split = Values::utf8(Offsets::Small(&[0, 1, 2]), "é".as_bytes(), 0, 2).unwrap();
        let mut out = String::from("kept");
        let r = write_rows(&[Column::new(split, None, 0)], 2, b',', 2, &mut out);
        assert_eq!((r, out.as_str()), (Err(Decline), "kept"));
        assert_eq!(one(Values::I8(&[1]), None, 0, 2), Err(Decline));
    }
}
