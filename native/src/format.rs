//! TOON text of scalars as the Python encoders write them: the §7.2 quoting
//! rule and §7.1 escapes (`_quoting.NEEDS_QUOTE`, `_quoting.quote`), §7.3
//! keys, and §2 canonical numbers (`_numbers.encode_float`,
//! `encode_decimal`, `encode_int`'s refusals). One implementation for every
//! native writer: `dumps` (Python values), the JSON writer (numbers from
//! TOON tokens) and the JSON Lines table encoder (numbers from JSON tokens).

/// A number the Python encoders refuse (`ToonEncodeError` there): the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumberError(pub String);

// ---------------------------------------------------------------- strings

/// Whether `c` makes a string need quotes wherever it is (§7.2): a C0
/// control, `:`, `"`, `[`, `\\`, `]`, `{`, `}` or the delimiter.  Written
/// with comparisons only (no early exit) so that a scan over a block of
/// bytes compiles to vector compares; short strings read it from a table.
#[inline(always)]
pub const fn special(c: u8, delim: u8) -> bool {
    (c < 0x20)
        | (c == b':')
        | (c == b'"')
        | (c.wrapping_sub(b'[') < 3)
        | (c == b'{')
        | (c == b'}')
        | (c == delim)
}

/// Whether `test` holds for any of 16 bytes: a fixed-size block with no
/// early exit, the verdicts gathered as byte masks, which LLVM turns into
/// SSE2 byte compares (x86_64's baseline) for a test made of comparisons:
/// about 30 instructions per block for `special`, against ~2.4 per byte for
/// a word-at-a-time test.
#[inline(always)]
fn any_in_block(block: &[u8; 16], test: impl Fn(u8) -> bool) -> bool {
    let mut m = [0u8; 16];
    for (m, &c) in m.iter_mut().zip(block) {
        *m = if test(c) { 0xff } else { 0 };
    }
    u128::from_ne_bytes(m) != 0
}

/// Whether `test` holds for any byte of `b`: by blocks of 16, or through
/// `table` (`test` as a table) for a string too short for a block.
#[inline(always)]
fn any_byte(b: &[u8], table: &[bool; 256], test: impl Fn(u8) -> bool + Copy) -> bool {
    if b.len() < 16 {
        return b.iter().any(|&c| table[usize::from(c)]);
    }
    let mut blocks = b.chunks_exact(16);
    for w in &mut blocks {
        if <&[u8; 16]>::try_from(w).is_ok_and(|x| any_in_block(x, test)) {
            return true;
        }
    }
    // the last 16 bytes again (overlapping the blocks: a byte tested twice
    // gives the same verdict)
    !blocks.remainder().is_empty()
        && <&[u8; 16]>::try_from(&b[b.len() - 16..]).is_ok_and(|x| any_in_block(x, test))
}

/// A byte test as a table.
const fn table_of(delim: u8, escape: bool) -> [bool; 256] {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = if escape {
            needs_escape(c as u8)
        } else {
            special(c as u8, delim)
        };
        c += 1;
    }
    t
}
static SPECIAL_COMMA: [bool; 256] = table_of(b',', false);
static SPECIAL_TAB: [bool; 256] = table_of(b'\t', false);
static SPECIAL_PIPE: [bool; 256] = table_of(b'|', false);
static ESCAPE: [bool; 256] = table_of(0, true);

/// Whether any byte of `b` is `special`.
#[inline]
fn has_special(b: &[u8], delim: u8) -> bool {
    let table = match delim {
        b',' => &SPECIAL_COMMA,
        b'\t' => &SPECIAL_TAB,
        b'|' => &SPECIAL_PIPE,
        _ => return b.iter().any(|&c| special(c, delim)),
    };
    any_byte(b, table, |c| special(c, delim))
}

/// Whether a byte is escaped inside quotes (§7.1): `"`, `\\` or a C0 control.
#[inline(always)]
const fn needs_escape(c: u8) -> bool {
    (c < 0x20) | (c == b'"') | (c == b'\\')
}

/// `_quoting.NEEDS_QUOTE[d]`: empty, leading or trailing whitespace, a
/// leading "-", "#" or U+FEFF (a decoder skips a document's leading BOM), a
/// special byte, a keyword, or numeric-like
/// (`[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?`, wider than a §4 number).
pub fn needs_quote(s: &str, delim: u8) -> bool {
    let b = s.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return true;
    };
    if matches!(first, b' ' | b'\t' | b'-' | b'#')
        || matches!(last, b' ' | b'\t')
        || s.starts_with('\u{feff}')
    {
        return true;
    }
    if has_special(b, delim) {
        return true;
    }
    if matches!(first, b't' | b'f' | b'n') && matches!(s, "true" | "false" | "null") {
        return true;
    }
    (first.is_ascii_digit() || first == b'+') && numeric_like(b)
}

pub fn numeric_like(b: &[u8]) -> bool {
    let digits = |i: usize| b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut i = usize::from(matches!(b[0], b'+' | b'-'));
    let n = digits(i);
    if n == 0 {
        return false;
    }
    i += n;
    if i < b.len() && b[i] == b'.' {
        let n = digits(i + 1);
        if n == 0 {
            return false;
        }
        i += 1 + n;
    }
    if i < b.len() && matches!(b[i], b'e' | b'E') {
        i += 1;
        if i < b.len() && matches!(b[i], b'+' | b'-') {
            i += 1;
        }
        let n = digits(i);
        if n == 0 {
            return false;
        }
        i += n;
    }
    i == b.len()
}

/// `_grammar.UNQUOTED_KEY`: `[A-Za-z_][A-Za-z0-9_.]*` (§7.3).
pub fn unquoted_key(s: &str) -> bool {
    let b = s.as_bytes();
    match b.first() {
        Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {}
        _ => return false,
    }
    b[1..].iter().all(|&c| KEY_CHAR[usize::from(c)])
}

/// `[A-Za-z0-9_.]`, as a table.
static KEY_CHAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || b == b'_' || b == b'.';
        c += 1;
    }
    t
};

/// A string cell or value as the encoders write it: as is, or quoted when
/// [`needs_quote`] says so.
#[inline]
pub fn write_str_cell(out: &mut String, s: &str, delim: u8) {
    if needs_quote(s, delim) {
        quote(out, s);
    } else {
        out.push_str(s);
    }
}

/// `_quoting.quote`: always quoted, escapes per §7.1 (other C0 controls as
/// lowercase `\u00xx`).
pub fn quote(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let b = s.as_bytes();
    if !any_byte(b, &ESCAPE, needs_escape) {
        // (most quoted strings: nothing to escape)
        out.push_str(s);
        out.push('"');
        return;
    }
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        let esc: &str = match c {
            b'\\' => "\\\\",
            b'"' => "\\\"",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..=0x1f => "",
            _ => continue,
        };
        // (an ASCII byte: a char boundary on both sides)
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            out.push_str("\\u00");
            out.push(HEX[(c >> 4) as usize] as char);
            out.push(HEX[(c & 15) as usize] as char);
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// `_numbers.encode_float`: Python's `repr` digits (shortest round trip),
/// written as the reference writes them: `null` for NaN and infinities, "0"
/// for both zeros, no ".0" on integral values, exact integer digits for
/// 1e16 <= |x| < 1e21, plain decimals down to 1e-6, else `d.ddde<sign>N`.
pub fn write_float(out: &mut String, x: f64) {
    if !x.is_finite() {
        out.push_str("null");
        return;
    }
    if x == 0.0 {
        out.push('0');
        return;
    }
    let ax = x.abs();
    if x < 0.0 {
        out.push('-');
    }
    // The common case: the formatter's own text is plain decimal (it is for
    // 1e-5 <= |x| < 1e16), which is exactly what the rules below write
    // there (the shortest digits, plain), but for a trailing ".0".
    let mut buf = zmij::Buffer::new();
    let text = buf.format_finite(ax);
    // (zmij writes plain decimals for decimal exponents -5..=15: no need to
    // look for an "e" well inside that range)
    if (1e-5..1e15).contains(&ax) || (ax >= 1e-6 && !text.contains('e')) {
        out.push_str(text.strip_suffix(".0").unwrap_or(text));
        return;
    }
    write_float_digits(out, ax, text);
}

/// `write_float` of a positive finite float from the formatter's text
/// (the sign already written): the rules of `encode_float` on its shortest
/// digits.
fn write_float_digits(out: &mut String, ax: f64, text: &str) {
    let mut digit_buf = [0u8; 32];
    let (len, e) = shortest(text, &mut digit_buf);
    let digits = std::str::from_utf8(&digit_buf[..len]).unwrap_or("0");
    if (-4..16).contains(&e) {
        fixed(out, digits, e, false); // repr's own fixed notation, ".0" dropped
        return;
    }
    if (9_007_199_254_740_992.0..1e21).contains(&ax) {
        // integral (every float this large is): its exact digits, so the
        // decoded int equals the float (shortest digits would not)
        let mut b = itoa::Buffer::new();
        out.push_str(b.format(ax as u128));
        return;
    }
    if (1e-6..1e21).contains(&ax) {
        small_plain(out, digits, e);
        return;
    }
    scientific(out, digits, e, 1);
}

/// Python's `repr` of a finite float: the shortest round-trip digits, in
/// fixed notation with at least one fractional digit for a scientific
/// exponent in -4..16, else `d.ddde±XX` (at least two exponent digits).
pub fn python_repr(out: &mut String, x: f64) {
    if x.is_sign_negative() {
        out.push('-');
    }
    if x == 0.0 {
        out.push_str("0.0");
        return;
    }
    let mut digit_buf = [0u8; 32];
    let (digits, e) = shortest_digits(x.abs(), &mut digit_buf);
    if (-4..16).contains(&e) {
        fixed(out, digits, e, true);
    } else {
        scientific(out, digits, e, 2);
    }
}

/// The shortest round-trip digits of a positive finite float and their
/// scientific exponent (`d.ddd * 10**e`).
fn shortest_digits(ax: f64, digit_buf: &mut [u8; 32]) -> (&str, i32) {
    let mut buf = zmij::Buffer::new();
    let (len, e) = shortest(buf.format_finite(ax), digit_buf);
    (std::str::from_utf8(&digit_buf[..len]).unwrap_or("0"), e)
}

/// `digits * 10**(e - len + 1)` without an exponent (`e` in -4..16, repr's
/// fixed range); an integral value gets ".0" only with `point_zero`.
fn fixed(out: &mut String, digits: &str, e: i32, point_zero: bool) {
    if e < 0 {
        small_plain(out, digits, e);
        return;
    }
    let int = (e + 1) as usize;
    if digits.len() <= int {
        out.push_str(digits);
        out.extend(std::iter::repeat_n('0', int - digits.len()));
        if point_zero {
            out.push_str(".0");
        }
    } else {
        out.push_str(&digits[..int]);
        out.push('.');
        out.push_str(&digits[int..]);
    }
}

/// `d.ddde±N`, the exponent written with at least `exp_digits` digits.
fn scientific(out: &mut String, digits: &str, e: i32, exp_digits: usize) {
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    out.push('e');
    out.push(if e >= 0 { '+' } else { '-' });
    let mut b = itoa::Buffer::new();
    let text = b.format(e.unsigned_abs());
    out.extend(std::iter::repeat_n(
        '0',
        exp_digits.saturating_sub(text.len()),
    ));
    out.push_str(text);
}

/// `0.000ddd` for a scientific exponent `e < 0`.
pub fn small_plain(out: &mut String, digits: &str, e: i32) {
    out.push_str("0.");
    out.extend(std::iter::repeat_n('0', (-e - 1) as usize));
    out.push_str(digits);
}

/// The significant digits (no leading or trailing zeros; written to `buf`,
/// their count returned) and the scientific exponent (`d.ddd * 10**e`) of a
/// positive finite float's shortest text, whatever notation the formatter
/// chose ("1.5", "1e21", "5e-324", "1.0").
pub fn shortest(text: &str, buf: &mut [u8; 32]) -> (usize, i32) {
    let (mant, exp) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], text[i + 1..].parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    let (int, frac) = match mant.find('.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, ""),
    };
    let mut point = int.len() as i32 + exp;
    // (a stack buffer: a float at most has 17 significant digits)
    let mut n = 0;
    for &c in int.as_bytes().iter().chain(frac.as_bytes()) {
        if n == 0 && c == b'0' {
            point -= 1;
        } else if n < buf.len() {
            buf[n] = c;
            n += 1;
        }
    }
    while n > 1 && buf[n - 1] == b'0' {
        n -= 1;
    }
    if n == 0 {
        buf[0] = b'0';
        n = 1;
    }
    (n, point - 1)
}

// ---------------------------------------------------------------- numbers

/// The Python encoders refuse a number whose text is longer than this (the
/// decoders' default `max_number_length`), and an exponent of more digits
/// than [`MAX_EXPONENT_DIGITS`] (`_numbers.MAX_NUMBER_LENGTH`, `MAX_EXPONENT_DIGITS`).
pub const MAX_NUMBER_LENGTH: usize = 10_000;
pub const MAX_EXPONENT_DIGITS: usize = 17;

pub fn too_long(size: Option<usize>) -> NumberError {
    let has = match size {
        None => format!("more than {MAX_NUMBER_LENGTH}"),
        Some(n) => n.to_string(),
    };
    NumberError(format!(
        "number too long: its token would have {has} characters, more than the decoders' \
         default max_number_length ({MAX_NUMBER_LENGTH}): loads() could not read it back"
    ))
}

pub fn checked_length(text: String) -> Result<String, NumberError> {
    if text.len() > MAX_NUMBER_LENGTH {
        return Err(too_long(Some(text.len())));
    }
    Ok(text)
}

/// `encode_int`'s refusals for an integer's text (`-?digits`, no leading
/// zeros): above 33,220 bits it is refused without counting; otherwise by
/// its text's length.
pub fn check_int_length(t: &str) -> Result<(), NumberError> {
    if t.len() <= MAX_NUMBER_LENGTH {
        return Ok(());
    }
    let digits = t.trim_start_matches('-');
    // 2**33220 has 10,001 digits: fewer digits is fewer bits, more is more
    let over = match digits.len().cmp(&10_001) {
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Equal => digits >= two_to_33220().as_str(),
    };
    Err(too_long(if over { None } else { Some(t.len()) }))
}

/// The decimal digits of 2**33220 (made on the rare path that needs them).
pub fn two_to_33220() -> String {
    // little-endian limbs of 10**9
    let mut limbs: Vec<u32> = vec![1];
    for _ in 0..33_220 {
        let mut carry = 0u32;
        for l in limbs.iter_mut() {
            let v = *l * 2 + carry;
            *l = v % 1_000_000_000;
            carry = v / 1_000_000_000;
        }
        if carry > 0 {
            limbs.push(carry);
        }
    }
    let mut s = String::new();
    for (i, l) in limbs.iter().rev().enumerate() {
        if i == 0 {
            s.push_str(&l.to_string());
        } else {
            s.push_str(&format!("{l:09}"));
        }
    }
    s
}

/// The common case of [`decimal_text`], written in place: a token without
/// an exponent whose value is written plain (a magnitude in [1e-6, 1e21):
/// at most 21 integer digits, or at most 5 zeros after the point of a
/// fraction below 1).  Its text is the token without the fraction's
/// trailing zeros.  Returns false (nothing written) for any other token.
pub fn write_plain_decimal<T: Text>(out: &mut T, token: &str) -> bool {
    if token.contains(['e', 'E']) {
        return false;
    }
    let (negative, rest) = match token.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, token),
    };
    let Some((int_part, frac)) = rest.split_once('.') else {
        return false;
    };
    let frac = frac.trim_end_matches('0');
    if int_part == "0" {
        if frac.is_empty() {
            out.put("0"); // (zero, -0.0 included)
            return true;
        }
        if frac.len() - frac.trim_start_matches('0').len() > 5 {
            return false;
        }
    } else if int_part.len() > 21 || int_part.starts_with('0') {
        return false;
    }
    if negative {
        out.put("-");
    }
    out.put(int_part);
    if !frac.is_empty() {
        out.put(".");
        out.put(frac);
    }
    true
}

/// A buffer the writers here append UTF-8 text to.
pub trait Text {
    fn put(&mut self, s: &str);
}

impl Text for String {
    #[inline]
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }
}

impl Text for Vec<u8> {
    #[inline]
    fn put(&mut self, s: &str) {
        self.extend_from_slice(s.as_bytes());
    }
}

/// `encode_decimal(decimal_float(token))`: the exact §2 text of a number
/// token with a fraction or an exponent.  Zero is `0`; a magnitude in
/// [1e-6, 1e21) is written plain, without trailing zeros; others as
/// `d.ddde±N`.
/// A number token as a decoder's output writes it (JSON, a String column):
/// [`decimal_text`]'s form without its limits (an exponent of at most 17
/// digits, a token of at most `max_number_length` characters: TOON's
/// decoders', not JSON's), as `numbers.decimal_value_text` writes the
/// `Decimal`: `-15.0e99999999999999999` is `-1.5e+100000000000000000`.
pub fn decimal_value_text(token: &str) -> String {
    match decimal_text_with(token, false) {
        Ok(text) => text,
        Err(_) => token.to_owned(), // (not met: only the limits refuse)
    }
}

/// `encode_decimal`'s text of a number token (its exact `Decimal`), or the
/// refusal of one TOON's decoders could not read back.
pub fn decimal_text(token: &str) -> Result<String, NumberError> {
    decimal_text_with(token, true)
}

fn decimal_text_with(token: &str, limits: bool) -> Result<String, NumberError> {
    let (negative, rest) = match token.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, token),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    let (int_part, frac) = match mantissa.find('.') {
        Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
        None => (mantissa, ""),
    };
    let exp10: i128 = if exponent.is_empty() {
        0
    } else {
        // (the decoder refuses exponents of more than 17 digits)
        exponent.parse::<i128>().unwrap_or(0)
    };
    // Decimal's coefficient: the digits without leading zeros
    let all: String = [int_part, frac].concat();
    let digits = all.trim_start_matches('0');
    if digits.is_empty() {
        return Ok("0".to_owned());
    }
    // (its trailing zeros are not written: 1.000 is 1)
    if limits && digits.trim_end_matches('0').len() > MAX_NUMBER_LENGTH {
        return Err(too_long(None));
    }
    let exp = exp10 - frac.len() as i128; // value = digits * 10**exp
    let adjusted = exp + digits.len() as i128 - 1; // the leading digit's power of ten
    let sign = if negative { "-" } else { "" };
    if (-6..=20).contains(&adjusted) {
        let plain = if exp >= 0 {
            format!("{digits}{}", "0".repeat(exp as usize))
        } else {
            let point = digits.len() as i128 + exp; // digits before the point
            let (ip, fp) = if point > 0 {
                let p = point as usize;
                (digits[..p].to_owned(), digits[p..].to_owned())
            } else {
                (
                    "0".to_owned(),
                    format!("{}{digits}", "0".repeat((-point) as usize)),
                )
            };
            let fp = fp.trim_end_matches('0');
            if fp.is_empty() {
                ip
            } else {
                format!("{ip}.{fp}")
            }
        };
        let text = format!("{sign}{plain}");
        return if limits {
            checked_length(text)
        } else {
            Ok(text)
        };
    }
    let ds = digits.trim_end_matches('0');
    let e = adjusted;
    if limits && e.unsigned_abs().to_string().len() > MAX_EXPONENT_DIGITS {
        return Err(NumberError(format!(
            "number exponent out of range: {} has more than {MAX_EXPONENT_DIGITS} digits, \
             which TOON decoders refuse (number_out_of_range)",
            e.unsigned_abs()
        )));
    }
    let mant = if ds.len() > 1 {
        format!("{}.{}", &ds[..1], &ds[1..])
    } else {
        ds.to_owned()
    };
    let text = format!(
        "{sign}{mant}e{}{}",
        if e >= 0 { '+' } else { '-' },
        e.unsigned_abs()
    );
    if limits {
        checked_length(text)
    } else {
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A xorshift64 sequence from `state` (deterministic, no dependency).
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// The plain fast path of `write_float` writes what the general rules write.
    #[test]
    fn float_fast_path_is_the_general_rules() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let mut xs: Vec<f64> = (0..200_000).map(|_| f64::from_bits(next())).collect();
        for e in -330..310 {
            for m in [1.0, 1.5, 9.999_999_999_999_999, 2.5] {
                let x: f64 = format!("{m}e{e}").parse().unwrap_or(1.0);
                xs.extend([x, x.next_up(), x.next_down()]);
            }
        }
        for x in xs {
            let ax = x.abs();
            if !ax.is_finite() || ax == 0.0 {
                continue;
            }
            let (mut fast, mut general) = (String::new(), String::new());
            write_float(&mut fast, ax);
            let mut buf = zmij::Buffer::new();
            write_float_digits(&mut general, ax, buf.format_finite(ax));
            assert_eq!(fast, general, "{ax:e}");
        }
    }

    /// The block and table scans find a special byte (or one to escape)
    /// wherever it is, for every length and delimiter, as a byte loop does.
    #[test]
    fn scans_agree_with_a_byte_loop() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        for len in 0..80usize {
            for _ in 0..400 {
                let mut b: Vec<u8> = (0..len).map(|_| b'a' + (next() % 26) as u8).collect();
                if len > 0 && !next().is_multiple_of(3) {
                    let at = (next() % len as u64) as usize;
                    b[at] = (next() % 128) as u8;
                }
                for delim in [b',', b'\t', b'|'] {
                    let expected = b.iter().any(|&c| special(c, delim));
                    assert_eq!(has_special(&b, delim), expected, "{b:?} {delim}");
                }
                let escape = b.iter().any(|&c| needs_escape(c));
                assert_eq!(any_byte(&b, &ESCAPE, needs_escape), escape, "{b:?}");
                let s = String::from_utf8_lossy(&b).into_owned();
                let mut fast = String::new();
                quote(&mut fast, &s);
                let mut slow = String::from("\"");
                for c in s.chars() {
                    match c {
                        '\\' => slow.push_str("\\\\"),
                        '"' => slow.push_str("\\\""),
                        '\n' => slow.push_str("\\n"),
                        '\r' => slow.push_str("\\r"),
                        '\t' => slow.push_str("\\t"),
                        c if (c as u32) < 0x20 => slow.push_str(&format!("\\u{:04x}", c as u32)),
                        c => slow.push(c),
                    }
                }
                slow.push('"');
                assert_eq!(fast, slow);
            }
        }
    }
}
