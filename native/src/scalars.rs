//! Tokens to values: one implementation of each lexical rule, next to the
//! spec section it implements (the Python twins are `_grammar.py`,
//! `_scalars.py` and `_numbers.py`).  Pure functions over byte offsets of one line; errors are
//! [`Fail`]s at a byte offset of that line.

use std::borrow::Cow;

use crate::error::{codes, Fail};

/// A primitive value as the sink receives it.  Strings are already unescaped;
/// numbers keep their text where a builder needs it for exact conversion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar<'a> {
    Null,
    Bool(bool),
    /// An integer token that fits an `i64`, but `-0`.
    Int(i64),
    /// The integer token `-0`: the integer 0 (§4), apart from [`Scalar::Int`]
    /// only for a `parse_int` hook, which is given the token's text.
    NegZero,
    /// An integer token beyond `i64`: its exact decimal text (no leading
    /// zeros, optional `-`), for an exact big-int conversion.
    BigInt(&'a str),
    /// A number with a fraction or an exponent: its text.  See
    /// [`float_value`] for the Python engine's float policy.
    Float(&'a str),
    Str(&'a str),
}

/// What a float token becomes under the default policy (Python `float()`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FloatValue {
    /// Correctly rounded; `-0.0` already normalized to `0.0` (§4).
    Finite(f64),
    /// Overflows an f64 (`1e400`): the Python engine returns
    /// `Decimal(text)`, exact; a builder does the same from the text.
    Overflow,
}

/// The default conversion of a [`Scalar::Float`] text, as the Python engine
/// does it: `float(tok)`, `-0.0 -> 0.0`, overflow reported (not `inf`).
/// Underflow (`1e-400`) gives `0.0`, like `float()`.
pub fn float_value(text: &str) -> FloatValue {
    if let Some(f) = short_decimal(text.as_bytes()) {
        return FloatValue::Finite(f + 0.0);
    }
    match text.parse::<f64>() {
        Ok(f) if f.is_infinite() => FloatValue::Overflow,
        // (`+ 0.0` turns -0.0 into 0.0 and leaves every other value alone)
        Ok(f) => FloatValue::Finite(f + 0.0),
        // Cannot happen for a token of the §4 grammar; be total anyway.
        Err(_) => FloatValue::Overflow,
    }
}

/// Exact powers of ten as f64 (10^22 is the largest one).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Clinger's fast path for `-?digits.digits` (no exponent) of at most 15
/// digits: the digits as an integer are exact in an f64 (below 2^53), so is
/// 10^fraction_digits, and one IEEE division rounds their quotient
/// correctly: the same f64 as `str::parse`.  None for any other text.
fn short_decimal(t: &[u8]) -> Option<f64> {
    let (neg, digits) = match t.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, t),
    };
    if digits.len() > 16 {
        return None; // (15 digits and a point at most)
    }
    let mut m: u64 = 0;
    let mut frac: Option<usize> = None;
    for (i, &c) in digits.iter().enumerate() {
        match c {
            b'0'..=b'9' => m = m * 10 + u64::from(c - b'0'),
            b'.' if frac.is_none() && i > 0 => frac = Some(digits.len() - i - 1),
            _ => return None,
        }
    }
    let k = frac.filter(|&k| k > 0)?;
    let v = m as f64 / POW10[k];
    Some(if neg { -v } else { v })
}

/// A converted token, as spans (no lifetimes: a row's tokens live in a
/// reusable buffer).  `Str` spans the line; `Unescaped` spans the scratch
/// string the machine keeps for unescaped cells.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Tok {
    Null,
    Bool(bool),
    Int(i64),
    /// `-0` (see [`Scalar::NegZero`]).
    NegZero,
    BigInt(usize, usize),
    Float(usize, usize),
    Str(usize, usize),
    Unescaped(usize, usize),
}

impl Tok {
    pub(crate) fn scalar<'a>(self, line: &'a str, scratch: &'a str) -> Scalar<'a> {
        match self {
            Tok::Null => Scalar::Null,
            Tok::Bool(b) => Scalar::Bool(b),
            Tok::Int(i) => Scalar::Int(i),
            Tok::NegZero => Scalar::NegZero,
            Tok::BigInt(s, e) => Scalar::BigInt(line.get(s..e).unwrap_or("")),
            Tok::Float(s, e) => Scalar::Float(line.get(s..e).unwrap_or("")),
            Tok::Str(s, e) => Scalar::Str(line.get(s..e).unwrap_or("")),
            Tok::Unescaped(s, e) => Scalar::Str(scratch.get(s..e).unwrap_or("")),
        }
    }
}

// ------------------------------------------------------------- §4 numbers

/// The fast int path of the reference's `make_converter`: all ASCII digits, no
/// leading zero, at most 18 characters (and at most `max_number_length`: a
/// lower limit still applies to the shortest ints).
const FAST_INT_DIGITS: usize = 18;
/// An exponent of more than 17 significant digits (leading zeros do not
/// count) is `number_out_of_range` (beyond Python's `Decimal` too), as
/// `_numbers.exponent_in_range` rules.
const MAX_EXPONENT_DIGITS: usize = 17;

/// Whether an exponent part (`e`, an optional sign, digits) has at most
/// [`MAX_EXPONENT_DIGITS`] significant digits.
fn exponent_in_range(exp: &[u8]) -> bool {
    if exp.len() <= MAX_EXPONENT_DIGITS + 1 {
        return true; // (the common case: nothing to count)
    }
    let digits = exp.get(1..).unwrap_or(&[]);
    let digits = digits
        .strip_prefix(b"+")
        .or_else(|| digits.strip_prefix(b"-"))
        .unwrap_or(digits);
    digits.iter().skip_while(|&&d| d == b'0').count() <= MAX_EXPONENT_DIGITS
}

/// The §4 number grammar `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
/// (ASCII digits, whole token).  Returns `(has_fraction, exponent_chars)`
/// (`exponent_chars` counts "e", the sign and the digits; 0 if none).
pub(crate) fn number_shape(tok: &[u8]) -> Option<(bool, usize)> {
    let n = tok.len();
    let mut i = 0;
    if tok.first() == Some(&b'-') {
        i = 1;
    }
    match tok.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while i < n && tok[i].is_ascii_digit() {
                i += 1;
            }
        }
        _ => return None,
    }
    let mut frac = false;
    if tok.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while i < n && tok[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
        frac = true;
    }
    let mut exp = 0;
    if matches!(tok.get(i), Some(b'e' | b'E')) {
        let e = i;
        i += 1;
        if matches!(tok.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let start = i;
        while i < n && tok[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
        exp = i - e;
    }
    if i == n {
        Some((frac, exp))
    } else {
        None
    }
}

/// Decode one trimmed value token `line[s..e]` (§4, §7.1).  Unescaped
/// strings are appended to `scratch` (the token spans it).
pub(crate) fn convert(
    line: &str,
    s: usize,
    e: usize,
    max_number_length: usize,
    scratch: &mut String,
) -> Result<Tok, Fail> {
    let bytes = line.as_bytes();
    let tok = match bytes.get(s..e) {
        Some(t) => t,
        None => return Ok(Tok::Str(s, s)),
    };
    let first = match tok.first() {
        Some(&c) => c,
        None => return Ok(Tok::Str(s, e)),
    };
    if first == b'"' {
        let (span, end) = scan_quoted(line, s, e, scratch)?;
        if end != e {
            return Err(Fail::new(
                codes::TRAILING_CHARACTERS,
                "unexpected characters after closing quote",
                end,
            ));
        }
        return Ok(span);
    }
    if first == b'-' || first.is_ascii_digit() {
        let n = tok.len();
        if n <= FAST_INT_DIGITS.min(max_number_length)
            && tok.iter().all(u8::is_ascii_digit)
            && (first != b'0' || n == 1)
        {
            let mut v: i64 = 0;
            for &d in tok {
                v = v * 10 + i64::from(d - b'0'); // 18 digits cannot overflow
            }
            return Ok(Tok::Int(v));
        }
        if let Some((frac, exp)) = number_shape(tok) {
            if n > max_number_length {
                return Err(Fail::new(
                    codes::NUMBER_TOO_LONG,
                    format!("number token longer than max_number_length ({max_number_length})"),
                    s,
                ));
            }
            if !frac && exp == 0 {
                // (the text is ASCII digits: parse cannot fail but overflow)
                return Ok(match line.get(s..e).and_then(|t| t.parse::<i64>().ok()) {
                    Some(0) if first == b'-' => Tok::NegZero,
                    Some(v) => Tok::Int(v),
                    None => Tok::BigInt(s, e),
                });
            }
            if !exponent_in_range(&tok[n - exp..]) {
                return Err(Fail::new(
                    codes::NUMBER_OUT_OF_RANGE,
                    format!("number exponent out of range (more than {MAX_EXPONENT_DIGITS} significant digits)"),
                    s,
                ));
            }
            return Ok(Tok::Float(s, e));
        }
        return Ok(Tok::Str(s, e));
    }
    Ok(match tok {
        b"true" => Tok::Bool(true),
        b"false" => Tok::Bool(false),
        b"null" => Tok::Null,
        _ => Tok::Str(s, e),
    })
}

// ---------------------------------------------------------- §7.1 strings

/// Given `line[q] == '"'`, the offset just past the closing quote, or None
/// (unterminated).  A backslash protects the next byte (Appendix B.3);
/// whether the escape is valid is checked when the token is decoded.  (UTF-8
/// continuation bytes are never `"` or `\`, so a byte scan is exact.)
pub(crate) fn skip_quoted(line: &[u8], q: usize, end: usize) -> Option<usize> {
    let end = end.min(line.len());
    let mut i = q + 1;
    while i < end {
        let k = i + memchr::memchr2(b'"', b'\\', &line[i..end])?;
        if line[k] == b'"' {
            return Some(k + 1);
        }
        i = k + 2;
    }
    None
}

/// The first `ch` in `line[start..end]` outside double quotes (an
/// unterminated quote hides everything after it).
pub(crate) fn find_unquoted(line: &[u8], ch: u8, start: usize, end: usize) -> Option<usize> {
    let end = end.min(line.len());
    let mut i = start;
    while i < end {
        let b = line[i];
        if b == ch {
            return Some(i);
        }
        if b == b'"' {
            i = skip_quoted(line, i, end)?;
        } else {
            i += 1;
        }
    }
    None
}

/// Up to this many bytes a byte loop finds a byte faster than `memchr`,
/// whose vector search costs more to set up than a short cell or key takes.
pub(crate) const SHORT_SCAN: usize = 32;

/// The first `x` in `hay` (a byte loop when `hay` is short).
#[inline]
pub(crate) fn find_byte(x: u8, hay: &[u8]) -> Option<usize> {
    if hay.len() <= SHORT_SCAN {
        hay.iter().position(|&c| c == x)
    } else {
        memchr::memchr(x, hay)
    }
}

/// Split `line[s..e]` on unquoted `delim` into untrimmed cell spans (§11.2).
pub(crate) fn split_cells(
    line: &[u8],
    s: usize,
    e: usize,
    delim: u8,
    out: &mut Vec<(usize, usize)>,
) {
    out.clear();
    let e = e.min(line.len());
    let s = s.min(e);
    if split_plain(&line[s..e], s, delim, out) {
        return;
    }
    // a quote: delimiters inside quoted cells do not split
    out.clear();
    let mut start = s;
    loop {
        match find_unquoted(line, delim, start, e) {
            Some(i) => {
                out.push((start, i));
                start = i + 1;
            }
            None => {
                out.push((start, e));
                return;
            }
        }
    }
}

/// The high bit of each byte of `x` that is zero, and no other bit: the
/// exact zero-byte test (no borrow across bytes, unlike the classic
/// `(x - 0x01..) & !x & 0x80..`), for word-at-a-time byte searches (XOR the
/// word with the byte repeated, then the first match from the trailing zeros).
#[inline(always)]
pub(crate) fn zero_bytes(x: u64) -> u64 {
    const LO7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((x & LO7) + LO7) | x | LO7)
}

/// The usual row, with no quote: every delimiter of `cells` (which starts
/// at offset `at` of its line) splits.  Pushes the cell spans and returns
/// true, or returns false at the first quote (the spans pushed so far are
/// the caller's to drop).  One pass, a word at a time: the bytes equal to
/// the delimiter and to a quote found with [`zero_bytes`] on the word XOR
/// each (as `columns::find_delim`), then each delimiter from the
/// mask's trailing zeros.  A row's cells are short: a `memchr` per cell
/// cost more to set up than to search (~70 instructions a cell; this, ~20).
#[inline]
fn split_plain(cells: &[u8], at: usize, delim: u8, out: &mut Vec<(usize, usize)>) -> bool {
    let delims = u64::from_ne_bytes([delim; 8]);
    let quotes = u64::from_ne_bytes([b'"'; 8]);
    let mut start = at;
    let mut base = at;
    let mut words = cells.chunks_exact(8);
    for w in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(w);
        let x = u64::from_le_bytes(word);
        if zero_bytes(x ^ quotes) != 0 {
            return false;
        }
        let mut m = zero_bytes(x ^ delims);
        while m != 0 {
            let j = (m.trailing_zeros() / 8) as usize;
            out.push((start, base + j));
            start = base + j + 1;
            m &= m - 1;
        }
        base += 8;
    }
    for (j, &c) in words.remainder().iter().enumerate() {
        if c == delim {
            out.push((start, base + j));
            start = base + j + 1;
        } else if c == b'"' {
            return false;
        }
    }
    out.push((start, at + cells.len()));
    true
}

/// `line[s..e]` without surrounding U+0020 (§12 token trimming).
pub(crate) fn trim_spaces(line: &[u8], mut s: usize, mut e: usize) -> (usize, usize) {
    e = e.min(line.len());
    while s < e && line[s] == b' ' {
        s += 1;
    }
    while e > s && line[e - 1] == b' ' {
        e -= 1;
    }
    (s, e)
}

/// Decode the quoted string at `line[q] == '"'` (within `..end`).  Returns
/// its token (a span of `line` when it has no escapes, else of `scratch`,
/// to which the unescaped text is appended) and the offset past the quote.
pub(crate) fn scan_quoted(
    line: &str,
    q: usize,
    end: usize,
    scratch: &mut String,
) -> Result<(Tok, usize), Fail> {
    let bytes = line.as_bytes();
    // (the usual string: no backslash before its closing quote, one scan)
    let plain = memchr::memchr2(
        b'"',
        b'\\',
        bytes.get(q + 1..end.min(bytes.len())).unwrap_or(&[]),
    )
    .filter(|&i| bytes[q + 1 + i] == b'"');
    if let Some(i) = plain {
        return Ok((Tok::Str(q + 1, q + 1 + i), q + 2 + i));
    }
    let close = match skip_quoted(bytes, q, end) {
        Some(c) => c,
        None => {
            return Err(Fail::new(
                codes::UNTERMINATED_STRING,
                "unterminated string",
                q,
            ))
        }
    };
    let (bs, be) = (q + 1, close - 1);
    let body = line.get(bs..be).unwrap_or("");
    let start = scratch.len();
    unescape_into(body, bs, scratch)?;
    Ok((Tok::Unescaped(start, scratch.len()), close))
}

/// A quoted string or key as an owned-or-borrowed `str` (for keys, field
/// names and single scalars, which do not share a row's scratch).
pub(crate) fn quoted_str(line: &str, q: usize, end: usize) -> Result<(Cow<'_, str>, usize), Fail> {
    let mut scratch = String::new();
    let (tok, close) = scan_quoted(line, q, end, &mut scratch)?;
    Ok(match tok {
        Tok::Str(s, e) => (Cow::Borrowed(line.get(s..e).unwrap_or("")), close),
        _ => (Cow::Owned(scratch), close),
    })
}

/// §7.1 unescaping of `body` (which starts at byte `base` of the line).
fn unescape_into(body: &str, base: usize, out: &mut String) -> Result<(), Fail> {
    let b = body.as_bytes();
    let mut i = 0;
    loop {
        let j = match memchr::memchr(b'\\', &b[i..]) {
            Some(k) => i + k,
            None => {
                out.push_str(body.get(i..).unwrap_or(""));
                return Ok(());
            }
        };
        out.push_str(body.get(i..j).unwrap_or(""));
        let simple = match b.get(j + 1) {
            Some(b'\\') => Some('\\'),
            Some(b'"') => Some('"'),
            Some(b'n') => Some('\n'),
            Some(b'r') => Some('\r'),
            Some(b't') => Some('\t'),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            i = j + 2;
            continue;
        }
        match b.get(j + 1) {
            Some(b'u') => {
                let hex = b
                    .get(j + 2..j + 6)
                    .filter(|h| h.iter().all(u8::is_ascii_hexdigit));
                let cp = match hex {
                    Some(h) => h.iter().fold(0u32, |acc, &d| {
                        acc * 16 + (d as char).to_digit(16).unwrap_or(0)
                    }),
                    None => {
                        return Err(Fail::new(
                            codes::INVALID_ESCAPE,
                            "\\u needs four hex digits",
                            base + j,
                        ))
                    }
                };
                // §7.1: surrogate escapes are rejected, paired or not.
                match char::from_u32(cp) {
                    Some(c) => out.push(c),
                    None => {
                        return Err(Fail::new(
                            codes::INVALID_ESCAPE,
                            "surrogate \\u escape",
                            base + j,
                        ))
                    }
                }
                i = j + 6;
            }
            Some(_) => {
                let c = body
                    .get(j + 1..)
                    .and_then(|t| t.chars().next())
                    .unwrap_or('?');
                return Err(Fail::new(
                    codes::INVALID_ESCAPE,
                    format!("invalid escape \\{c}"),
                    base + j,
                ));
            }
            // (cannot happen after skip_quoted, kept for totality)
            None => {
                return Err(Fail::new(
                    codes::INVALID_ESCAPE,
                    "unterminated escape",
                    base + j,
                ))
            }
        }
    }
}

/// Decode a trimmed key token `line[s..e]`: quoted keys are unescaped,
/// others literal (§7.4).
pub(crate) fn decode_key(line: &str, s: usize, e: usize) -> Result<Cow<'_, str>, Fail> {
    if line.as_bytes().get(s) == Some(&b'"') {
        let (k, end) = quoted_str(line, s, e)?;
        if end != e {
            return Err(Fail::new(
                codes::TRAILING_CHARACTERS,
                "unexpected characters after quoted key",
                end,
            ));
        }
        return Ok(k);
    }
    Ok(Cow::Borrowed(line.get(s..e).unwrap_or("")))
}

// ------------------------------------------------------------ §6, §7.3

/// §7.3 / §6 `unquoted-key`: `[A-Za-z_][A-Za-z0-9_.]*`.
pub(crate) fn is_unquoted_key(k: &[u8]) -> bool {
    match k.split_first() {
        Some((&c, rest)) => {
            (c.is_ascii_alphabetic() || c == b'_')
                && rest
                    .iter()
                    .all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
        }
        None => false,
    }
}

/// §6 bracket-segment length: `0` or a non-zero digit followed by digits.
pub(crate) fn is_length(t: &[u8]) -> bool {
    match t.split_first() {
        Some((b'0', rest)) => rest.is_empty(),
        Some((c, rest)) => (b'1'..=b'9').contains(c) && rest.iter().all(u8::is_ascii_digit),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(t: &str) -> Result<Tok, Fail> {
        let mut s = String::new();
        convert(t, 0, t.len(), 10_000, &mut s)
    }

    #[test]
    fn number_grammar() {
        for ok in ["0", "-0", "12", "1.5", "-1E+03", "0e1", "-0.5", "1e-6"] {
            assert!(number_shape(ok.as_bytes()).is_some(), "{ok}");
        }
        for no in [
            "05", "-05", ".5", "1.", "+5", "1e", "1e+", "0x10", "1_000", "-", "", "--1",
        ] {
            assert!(number_shape(no.as_bytes()).is_none(), "{no}");
        }
        assert_eq!(conv("-0"), Ok(Tok::NegZero));
        assert_eq!(conv("0"), Ok(Tok::Int(0)));
        assert_eq!(conv("9223372036854775807"), Ok(Tok::Int(i64::MAX)));
        assert_eq!(conv("-9223372036854775808"), Ok(Tok::Int(i64::MIN)));
        assert_eq!(conv("9223372036854775808"), Ok(Tok::BigInt(0, 19)));
        assert_eq!(conv("05"), Ok(Tok::Str(0, 2)));
        assert_eq!(conv("1.5"), Ok(Tok::Float(0, 3)));
        let long_exp = "1e+123456789012345678";
        assert_eq!(conv(long_exp).unwrap_err().code, codes::NUMBER_OUT_OF_RANGE);
        // significant digits count, not characters (as `_numbers.exponent_in_range`)
        assert_eq!(
            conv("1e100000000000000000").unwrap_err().code,
            codes::NUMBER_OUT_OF_RANGE
        );
        assert!(conv("1e10000000000000000").is_ok());
        let zeros = "1e-00000000000000000000001";
        assert_eq!(conv(zeros), Ok(Tok::Float(0, zeros.len())));
        assert_eq!(float_value("-0.0"), FloatValue::Finite(0.0));
        // the short fast path gives what `str::parse` gives
        for t in [
            "0.1",
            "108.96",
            "-2.50",
            "0.000000000000001",
            "999999999999999.9",
            "12345678.1234567",
            "9007199254740.993",
            "1.7976931348623157",
            "-0.000",
            "3.14159265358979",
            "0.3",
            "123456789012345.6",
            "1234567890123456.7",
            "1.",
            ".5",
            "1.2.3",
            "1e5",
            "00.5",
        ] {
            let want = t.parse::<f64>().ok().map(|f| FloatValue::Finite(f + 0.0));
            if let Some(f) = short_decimal(t.as_bytes()) {
                assert_eq!(Some(FloatValue::Finite(f + 0.0)), want, "{t}");
                assert_eq!(
                    f.to_bits(),
                    t.parse::<f64>().unwrap_or(f64::NAN).to_bits(),
                    "{t}"
                );
            }
        }
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = (x % 15 + 1) as usize;
            let m = x >> 8;
            let text = format!("{:0width$}", m % 10u64.pow(digits as u32), width = digits);
            let point = (x >> 4) as usize % digits;
            let t = format!("{}.{}", &text[..digits - point], &text[digits - point..]);
            if let Some(f) = short_decimal(t.as_bytes()) {
                assert_eq!(
                    f.to_bits(),
                    t.parse::<f64>().unwrap_or(f64::NAN).to_bits(),
                    "{t}"
                );
            }
        }
        assert_eq!(float_value("1e400"), FloatValue::Overflow);
        assert_eq!(float_value("1e-400"), FloatValue::Finite(0.0));
    }

    #[test]
    fn escapes() {
        let mut s = String::new();
        let line = r#""a\n\u00e9\"""#;
        let (tok, end) = scan_quoted(line, 0, line.len(), &mut s).unwrap();
        assert_eq!(end, line.len());
        assert_eq!(tok.scalar(line, &s), Scalar::Str("a\n\u{e9}\""));
        for (bad, at) in [(r#""\x""#, 1), (r#""ab\u12""#, 3), (r#""\ud800""#, 1)] {
            let e = scan_quoted(bad, 0, bad.len(), &mut s).unwrap_err();
            assert_eq!((e.code, e.at), (codes::INVALID_ESCAPE, at), "{bad}");
        }
        assert_eq!(
            conv(r#""abc"#).unwrap_err().code,
            codes::UNTERMINATED_STRING
        );
        assert_eq!(
            conv(r#""a"b"#).unwrap_err().code,
            codes::TRAILING_CHARACTERS
        );
    }

    #[test]
    fn splitting() {
        let line = br#"a,"b,c",d"#;
        let mut out = Vec::new();
        split_cells(line, 0, line.len(), b',', &mut out);
        assert_eq!(out, vec![(0, 1), (2, 7), (8, 9)]);
        assert_eq!(find_unquoted(br#""a:b":c"#, b':', 0, 7), Some(5));
        assert_eq!(find_unquoted(br#""a:b"#, b':', 0, 4), None);
    }

    /// The word-at-a-time split against a byte loop: every delimiter and
    /// quote position across word boundaries, at offsets into a line.
    #[test]
    fn splitting_plain_matches_byte_loop() {
        for delim in [b',', b'|', b'\t'] {
            for len in 0..40usize {
                for at in [0usize, 3] {
                    for mark in 0..len.max(1) {
                        for every in [1usize, 2, 7, 9] {
                            let mut line = vec![b'x'; at + len];
                            for i in (mark..len).step_by(every) {
                                line[at + i] = delim;
                            }
                            let mut out = Vec::new();
                            split_cells(&line, at, line.len(), delim, &mut out);
                            let mut want = Vec::new();
                            let mut start = at;
                            for (i, &c) in line.iter().enumerate().skip(at) {
                                if c == delim {
                                    want.push((start, i));
                                    start = i + 1;
                                }
                            }
                            want.push((start, line.len()));
                            assert_eq!(out, want, "{delim} {len} {at} {mark} {every}");
                            if len > 0 {
                                // a quote anywhere hands the row to the quoted split
                                let q = at + (mark * 5 + 3) % len;
                                line[q] = b'"';
                                let mut plain = Vec::new();
                                assert!(!split_plain(&line[at..], at, delim, &mut plain));
                            }
                        }
                    }
                }
            }
        }
    }
}
