//! JSON Lines to the rows of one TOON table, with no values in between: the
//! native side of `toonstream.encode_jsonl` for its common case, a file of
//! flat records with one set of keys.
//!
//! Sans-I/O and push-based like the decoder: [`TableEncoder::feed`] takes
//! bytes in any chunks and appends the finished row lines of the complete
//! input lines to a `String`; [`TableEncoder::finish`] ends the input.  The
//! caller (the Python driver) keeps the rows in a spool and, once the input
//! is done, writes the header from [`TableEncoder::fields`] and
//! [`TableEncoder::rows`], then the spool: exactly the bytes the reference's
//! `_ArrayPlan` spools for a flat table.
//!
//! It takes the records the reference would make a flat table of, and
//! *declines* everything else ([`Decline`]), before any output is used: a
//! line that is not an object of primitives, keys that differ from the
//! first record's, anything the stdlib JSON reader would reject or read
//! with more care than a plain token (NaN, lone surrogate escapes, numbers
//! whose value the reference keeps as an exact `Decimal` only after checks
//! this module does not repeat, over-long integers, duplicate keys).  The
//! driver then runs the reference encoder over the input from the start,
//! so its errors, messages and line numbers stay the only ones.
//!
//! Memory: the partial last line of a chunk and the first record's keys.
//!
//! ```
//! use toonstream_native::jsonl::TableEncoder;
//! let mut t = TableEncoder::new(b',', 2);
//! let mut out = String::new();
//! t.feed(b"{\"id\": 1, \"tag\": \"a b\"}\n{\"tag\": \"\", \"id\": 2.50}\n", &mut out).unwrap();
//! t.finish(&mut out).unwrap();
//! assert_eq!(t.fields().unwrap(), ["id", "tag"]);
//! assert_eq!((t.rows(), out.as_str()), (2, "\n  1,a b\n  2.5,\"\""));
//! ```

use std::collections::HashMap;

use crate::format::{
    decimal_text, python_repr, write_float, write_plain_decimal, write_str_cell, MAX_NUMBER_LENGTH,
};

/// Why a line cannot be a row of the table written here.  The driver only
/// needs to know that it declined (the reference then does the whole
/// input); the reason is for tests and diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decline {
    /// not valid UTF-8 (the reference reports where)
    Utf8,
    /// not one JSON value, or a token the plain reader here does not take
    /// (NaN, Infinity, a malformed number or string)
    Syntax,
    /// not an object, an empty object, or a nested value in it
    NotFlat,
    /// keys other than the first record's (or a key twice)
    Keys,
    /// a number the reference writes through checks or refusals not
    /// repeated here (a very long integer or exponent)
    Number,
    /// a `\uXXXX` escape of a lone surrogate (no UTF-8 for it)
    Surrogate,
}

/// Longest integer token written as is; above it the reference reads the
/// number through `Decimal` (CPython's `int(str)` digit limit) and may
/// refuse it (`encode_int`): left to it.
const MAX_PLAIN_INT: usize = 4000;
/// The reference's `_json_float` refuses an exponent part (the `e` and what
/// follows) longer than this.
const MAX_EXPONENT_PART: usize = 19;
/// [`count_values`]: the longest number token it takes (longer ones the
/// reference reads through `Decimal`, or refuses, with checks of its own).
const MAX_CHECKED_NUMBER: usize = 100;
/// [`count_values`]: the deepest nesting it takes (the stdlib reader
/// recurses; deeper values are the reference's to judge).
pub(crate) const MAX_CHECKED_DEPTH: usize = 200;
/// Lines of more than this are split over two threads (each half at least
/// this long: less is not worth a thread).
const SPLIT_AT: usize = 1 << 20;

/// The table's fields, from the first record.
#[derive(Debug)]
struct Fields {
    /// the keys, unescaped
    names: Vec<String>,
    /// the keys as written between the quotes in the first record (a later
    /// record that writes them alike, in the same order, needs no lookup)
    raw: Vec<Vec<u8>>,
    index: HashMap<String, usize>,
}

/// The push encoder of JSON Lines into TOON table rows (see the module
/// documentation).
#[derive(Debug)]
pub struct TableEncoder {
    delim: u8,
    indent: String,
    threads: usize,
    fields: Option<Fields>,
    rows: u64,
    /// the start of a line whose end has not been fed yet
    partial: Vec<u8>,
    /// no line seen yet (a UTF-8 BOM may start the first)
    at_start: bool,
    declined: Option<Decline>,
}

impl TableEncoder {
    /// `delim`: the table's delimiter (`,`, tab or `|`); rows are indented
    /// by `indent_size` spaces (depth 1).
    pub fn new(delim: u8, indent_size: usize) -> Self {
        TableEncoder {
            delim,
            indent: " ".repeat(indent_size),
            threads: 1,
            fields: None,
            rows: 0,
            partial: Vec::new(),
            at_start: true,
            declined: None,
        }
    }

    /// Split big chunks over this many threads (1 or 2); the output is the
    /// same.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.clamp(1, 2);
        self
    }

    /// The first record's keys, once one was read.
    pub fn fields(&self) -> Option<&[String]> {
        self.fields.as_ref().map(|f| f.names.as_slice())
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Feed input bytes: the rows of the lines they complete are appended
    /// to `out`, each as `"\n" + indent + cells`.  After a decline every
    /// call declines again.
    pub fn feed(&mut self, data: &[u8], out: &mut String) -> Result<(), Decline> {
        if let Some(d) = self.declined {
            return Err(d);
        }
        let r = self.feed_lines(data, out);
        self.keep(r)
    }

    /// End of input: the last line, if it has no line feed.
    pub fn finish(&mut self, out: &mut String) -> Result<(), Decline> {
        if let Some(d) = self.declined {
            return Err(d);
        }
        let line = std::mem::take(&mut self.partial);
        let r = match std::str::from_utf8(&line) {
            Ok(s) => self.line(s, out),
            Err(_) => Err(Decline::Utf8),
        };
        self.keep(r)
    }

    fn keep(&mut self, r: Result<(), Decline>) -> Result<(), Decline> {
        if let Err(d) = r {
            self.declined = Some(d);
            self.partial = Vec::new();
        }
        r
    }

    fn feed_lines(&mut self, mut data: &[u8], out: &mut String) -> Result<(), Decline> {
        if !self.partial.is_empty() {
            let Some(nl) = memchr::memchr(b'\n', data) else {
                self.partial.extend_from_slice(data);
                return Ok(());
            };
            let mut line = std::mem::take(&mut self.partial);
            line.extend_from_slice(&data[..nl]);
            let s = std::str::from_utf8(&line).map_err(|_| Decline::Utf8)?;
            self.line(s, out)?;
            data = &data[nl + 1..];
        }
        let Some(last) = memchr::memrchr(b'\n', data) else {
            self.partial.extend_from_slice(data);
            return Ok(());
        };
        self.partial.extend_from_slice(&data[last + 1..]);
        // (one validation for the whole block: the reference declines the
        // same inputs, whichever line holds the bad byte)
        let block = crate::utf8(&data[..last]).map_err(|_| Decline::Utf8)?;
        self.block(block, out)
    }

    /// Complete lines (without the last one's line feed).
    fn block(&mut self, mut block: &str, out: &mut String) -> Result<(), Decline> {
        // The first record sets the fields: until then, a line at a time.
        while self.fields.is_none() || self.at_start {
            let (line, rest) = match block.find('\n') {
                Some(i) => (&block[..i], Some(&block[i + 1..])),
                None => (block, None),
            };
            self.line(line, out)?;
            match rest {
                Some(r) => block = r,
                None => return Ok(()),
            }
        }
        let Some(fields) = &self.fields else {
            return Ok(());
        };
        let (delim, indent) = (self.delim, self.indent.as_str());
        if self.threads < 2 || block.len() < 2 * SPLIT_AT {
            self.rows += rows(fields, delim, indent, block, out)?;
            return Ok(());
        }
        // Two halves, cut at a line feed; the second is written by another
        // thread into its own buffer and appended after the first: the same
        // text in the same order.
        // (a byte search: the middle may fall inside a character)
        let mid = block.len() / 2;
        let cut = memchr::memchr(b'\n', &block.as_bytes()[mid..]).map_or(block.len(), |i| mid + i);
        if cut >= block.len() {
            self.rows += rows(fields, delim, indent, block, out)?;
            return Ok(());
        }
        let (first, second) = (&block[..cut], &block[cut + 1..]);
        let mut other = String::with_capacity(second.len());
        let (a, b) = std::thread::scope(|s| {
            let h = s.spawn(|| rows(fields, delim, indent, second, &mut other));
            let a = rows(fields, delim, indent, first, out);
            // (a panic in the other thread is a bug: a decline, never a crash)
            (a, h.join().unwrap_or(Err(Decline::Syntax)))
        });
        self.rows += a? + b?;
        out.push_str(&other);
        Ok(())
    }

    /// One line (no line feed) before the fields are known, or the first.
    fn line(&mut self, mut line: &str, out: &mut String) -> Result<(), Decline> {
        if self.at_start {
            self.at_start = false;
            line = line.strip_prefix('\u{feff}').unwrap_or(line);
        }
        if blank(line) {
            return Ok(());
        }
        match &self.fields {
            Some(fields) => {
                row(fields, self.delim, &self.indent, line, out)?;
            }
            None => {
                self.fields = Some(first_row(self.delim, &self.indent, line, out)?);
            }
        }
        self.rows += 1;
        Ok(())
    }
}

/// A line of JSON white space only (`json.loads`' four): the reference
/// skips it (`streaming._blank`).
pub fn blank(line: &str) -> bool {
    line.bytes()
        .all(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
}

/// The rows of complete lines (after the first record); returns their count.
fn rows(
    fields: &Fields,
    delim: u8,
    indent: &str,
    block: &str,
    out: &mut String,
) -> Result<u64, Decline> {
    let mut n = 0;
    let mut from = 0;
    let ends = memchr::memchr_iter(b'\n', block.as_bytes()).chain(std::iter::once(block.len()));
    for end in ends {
        // (a line feed is a character boundary)
        let line = &block[from..end];
        from = end + 1;
        if blank(line) {
            continue;
        }
        row(fields, delim, indent, line, out)?;
        n += 1;
    }
    Ok(n)
}

/// The first record: its row, and its keys as the table's fields.
fn first_row(delim: u8, indent: &str, line: &str, out: &mut String) -> Result<Fields, Decline> {
    let mut p = Parser::new(line);
    let mut fields = Fields {
        names: Vec::new(),
        raw: Vec::new(),
        index: HashMap::new(),
    };
    let mut key = String::new();
    out.push('\n');
    out.push_str(indent);
    p.open()?;
    loop {
        let (raw, plain) = p.key(&mut key)?;
        let name = if plain { raw } else { key.as_str() };
        if fields
            .index
            .insert(name.to_owned(), fields.names.len())
            .is_some()
        {
            return Err(Decline::Keys);
        }
        if !fields.names.is_empty() {
            out.push(char::from(delim));
        }
        fields.names.push(name.to_owned());
        fields.raw.push(raw.as_bytes().to_vec());
        p.cell(delim, out)?;
        if p.end()? {
            return Ok(fields);
        }
    }
}

/// A later record: its cells in the fields' order.
fn row(
    fields: &Fields,
    delim: u8,
    indent: &str,
    line: &str,
    out: &mut String,
) -> Result<(), Decline> {
    let start = out.len();
    out.push('\n');
    out.push_str(indent);
    let mut p = Parser::new(line);
    let mut key = String::new();
    p.open()?;
    // The usual record: the first record's keys, written alike, in order.
    for (i, raw) in fields.raw.iter().enumerate() {
        if p.same_key(raw) {
            p.expect(b':')?;
        } else if p.key(&mut key)?.0.as_bytes() != raw.as_slice() {
            out.truncate(start);
            return row_by_name(fields, delim, indent, line, out);
        }
        if i > 0 {
            out.push(char::from(delim));
        }
        p.cell(delim, out)?;
        let last = p.end()?;
        if last != (i + 1 == fields.raw.len()) {
            return Err(Decline::Keys); // fewer keys, or more
        }
    }
    Ok(())
}

/// A record whose keys come in another order (or are written with other
/// escapes): each cell is placed by its key's name.
fn row_by_name(
    fields: &Fields,
    delim: u8,
    indent: &str,
    line: &str,
    out: &mut String,
) -> Result<(), Decline> {
    let mut p = Parser::new(line);
    p.open()?;
    let width = fields.names.len();
    let mut cells = String::new();
    let mut spans: Vec<Option<(usize, usize)>> = vec![None; width];
    let mut key = String::new();
    let mut seen = 0;
    loop {
        let (raw, plain) = p.key(&mut key)?;
        let name = if plain { raw } else { key.as_str() };
        let i = *fields.index.get(name).ok_or(Decline::Keys)?;
        let a = cells.len();
        p.cell(delim, &mut cells)?;
        if spans[i].replace((a, cells.len())).is_some() {
            return Err(Decline::Keys);
        }
        seen += 1;
        if p.end()? {
            break;
        }
    }
    if seen != width {
        return Err(Decline::Keys);
    }
    out.push('\n');
    out.push_str(indent);
    for (i, span) in spans.iter().enumerate() {
        let (a, b) = span.ok_or(Decline::Keys)?;
        if i > 0 {
            out.push(char::from(delim));
        }
        out.push_str(&cells[a..b]);
    }
    Ok(())
}

/// A cursor over one line's JSON text (RFC 8259 as the stdlib reads it;
/// whatever it does not take plainly is a [`Decline`]).
pub(crate) struct Parser<'a> {
    pub(crate) s: &'a str,
    pub(crate) at: usize,
    scratch: String,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(s: &'a str) -> Self {
        Parser {
            s,
            at: 0,
            scratch: String::new(),
        }
    }

    pub(crate) fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.at).copied()
    }

    pub(crate) fn ws(&mut self) {
        let b = self.s.as_bytes();
        while self.at < b.len() && matches!(b[self.at], b' ' | b'\t' | b'\r' | b'\n') {
            self.at += 1;
        }
    }

    pub(crate) fn expect(&mut self, c: u8) -> Result<(), Decline> {
        self.ws();
        if self.peek() != Some(c) {
            return Err(Decline::Syntax);
        }
        self.at += 1;
        Ok(())
    }

    /// `{` of a record that has a key (an empty object is not a row).
    fn open(&mut self) -> Result<(), Decline> {
        self.ws();
        match self.peek() {
            Some(b'{') => self.at += 1,
            Some(b'[' | b'"' | b't' | b'f' | b'n' | b'-' | b'0'..=b'9') => {
                return Err(Decline::NotFlat)
            }
            _ => return Err(Decline::Syntax),
        }
        self.ws();
        if self.peek() == Some(b'}') {
            return Err(Decline::NotFlat);
        }
        Ok(())
    }

    /// A key and its colon: the key as written (between the quotes), and
    /// whether that is its contents too (no escapes); if not, `key` holds
    /// the contents.
    pub(crate) fn key(&mut self, key: &mut String) -> Result<(&'a str, bool), Decline> {
        self.expect(b'"')?;
        let a = self.at;
        key.clear();
        let plain = self.string_into(key)?;
        let raw = &self.s[a..self.at - 1];
        self.expect(b':')?;
        Ok((raw, plain))
    }

    /// Whether the next key is written exactly as `raw` (a key without
    /// escapes, as the first record wrote it); if so, it is consumed (its
    /// colon is not).  (`raw` holds no quote or backslash, so the bytes `"raw"`
    /// are that key and nothing else.)
    fn same_key(&mut self, raw: &[u8]) -> bool {
        self.ws();
        let b = &self.s.as_bytes()[self.at..];
        let n = raw.len();
        if b.len() < n + 2
            || b[0] != b'"'
            || b[n + 1] != b'"'
            || &b[1..=n] != raw
            || raw.contains(&b'\\')
        {
            return false;
        }
        self.at += n + 2;
        true
    }

    /// After a value: `,` (false) or the record's `}` and the end of the
    /// line (true).
    fn end(&mut self) -> Result<bool, Decline> {
        self.ws();
        match self.peek() {
            Some(b',') => {
                self.at += 1;
                Ok(false)
            }
            Some(b'}') => {
                self.at += 1;
                self.ws();
                if self.at != self.s.len() {
                    return Err(Decline::Syntax); // more after the record
                }
                Ok(true)
            }
            _ => Err(Decline::Syntax),
        }
    }

    /// A primitive value, written as a cell.
    fn cell(&mut self, delim: u8, out: &mut String) -> Result<(), Decline> {
        self.ws();
        let b = self.s.as_bytes();
        let rest = &b[self.at..];
        match rest.first() {
            Some(b'"') => {
                self.at += 1;
                let a = self.at;
                let mut text = std::mem::take(&mut self.scratch);
                text.clear();
                let plain = self.string_into(&mut text)?;
                let s = if plain {
                    &self.s[a..self.at - 1]
                } else {
                    text.as_str()
                };
                write_str_cell(out, s, delim);
                self.scratch = text;
            }
            Some(b't') if rest.starts_with(b"true") => self.literal(out, "true"),
            Some(b'f') if rest.starts_with(b"false") => self.literal(out, "false"),
            Some(b'n') if rest.starts_with(b"null") => self.literal(out, "null"),
            Some(b'-' | b'0'..=b'9') => self.number(out)?,
            Some(b'{' | b'[') => return Err(Decline::NotFlat),
            _ => return Err(Decline::Syntax),
        }
        Ok(())
    }

    fn literal(&mut self, out: &mut String, text: &str) {
        out.push_str(text);
        self.at += text.len();
    }

    /// A string's contents after its opening quote, up to and past the
    /// closing one.  True: no escapes (the contents are the text as
    /// written, left for the caller to take); false: unescaped into `out`.
    pub(crate) fn string_into(&mut self, out: &mut String) -> Result<bool, Decline> {
        let b = self.s.as_bytes();
        let mut i = self.at;
        let mut from = i;
        let mut plain = true;
        loop {
            // (strings are short: 8 bytes at a time beats a vector search's
            // set-up; a word with a quote, a backslash or a control byte
            // is left to the byte loop)
            while let Some(w) = b.get(i..i + 8) {
                let mut word = [0u8; 8];
                word.copy_from_slice(w);
                let x = u64::from_le_bytes(word);
                let stop = crate::scalars::zero_bytes(x ^ QUOTES)
                    | crate::scalars::zero_bytes(x ^ BACKSLASHES)
                    | crate::scalars::zero_bytes(x & CONTROL);
                if stop != 0 {
                    i += (stop.trailing_zeros() / 8) as usize;
                    break;
                }
                i += 8;
            }
            while i < b.len() && !STRING_STOP[usize::from(b[i])] {
                i += 1;
            }
            match b.get(i) {
                None => return Err(Decline::Syntax),
                // (the stdlib's strict mode: no raw control characters)
                Some(&c) if c < 0x20 => return Err(Decline::Syntax),
                _ => {}
            }
            if b[i] == b'"' {
                if !plain {
                    out.push_str(&self.s[from..i]);
                }
                self.at = i + 1;
                return Ok(plain);
            }
            plain = false;
            out.push_str(&self.s[from..i]);
            let c = match b.get(i + 1) {
                Some(b'"') => '"',
                Some(b'\\') => '\\',
                Some(b'/') => '/',
                Some(b'b') => '\u{8}',
                Some(b'f') => '\u{c}',
                Some(b'n') => '\n',
                Some(b'r') => '\r',
                Some(b't') => '\t',
                Some(b'u') => {
                    let hi = hex4(b, i + 2)?;
                    i += 4;
                    if (0xDC00..0xE000).contains(&hi) {
                        return Err(Decline::Surrogate);
                    }
                    if (0xD800..0xDC00).contains(&hi) {
                        if b.get(i + 2) != Some(&b'\\') || b.get(i + 3) != Some(&b'u') {
                            return Err(Decline::Surrogate);
                        }
                        let lo = hex4(b, i + 4)?;
                        if !(0xDC00..0xE000).contains(&lo) {
                            return Err(Decline::Surrogate);
                        }
                        i += 6;
                        let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                        char::from_u32(cp).ok_or(Decline::Surrogate)?
                    } else {
                        char::from_u32(hi).ok_or(Decline::Surrogate)?
                    }
                }
                _ => return Err(Decline::Syntax),
            };
            out.push(c);
            i += 2;
            from = i;
        }
    }

    /// A number token (the stdlib's `-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?`),
    /// written as the reference writes the value it reads.
    pub(crate) fn number(&mut self, out: &mut String) -> Result<(), Decline> {
        let (token, float, exp_at) = self.number_token()?;
        if !float {
            // Python's int: its str() is the token, but for "-0"
            if token.len() > MAX_PLAIN_INT {
                return Err(Decline::Number);
            }
            out.push_str(if token == "-0" { "0" } else { token });
            return Ok(());
        }
        if token.len() > MAX_NUMBER_LENGTH {
            // (the reference refuses such a number, "number too long", with
            // checks of its own on its digits and text: left to it)
            return Err(Decline::Number);
        }
        match exp_at {
            // Without an exponent the reference's float and Decimal paths
            // write the same text: the token, plain, without the fraction's
            // trailing zeros (a float whose repr is the token is in repr's
            // fixed range, where encode_float writes those digits), or
            // encode_decimal's exponent form out of [1e-6, 1e21), where no
            // float's repr is plain.  No float is parsed.
            None if write_plain_decimal(out, token) => Ok(()),
            None => decimal_cell(token, out),
            Some(e) if token.len() - e > MAX_EXPONENT_PART => Err(Decline::Number),
            Some(_) => float_cell(token, out),
        }
    }

    /// The number token at the cursor, consumed: its text, whether it has
    /// a fraction or an exponent, and where its exponent starts (in the
    /// token).
    fn number_token(&mut self) -> Result<(&'a str, bool, Option<usize>), Decline> {
        let b = self.s.as_bytes();
        let a = self.at;
        let mut i = a + usize::from(b[a] == b'-');
        let digits = |i: usize| b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        let int = digits(i);
        if int == 0 || (int > 1 && b[i] == b'0') {
            return Err(Decline::Syntax); // "-", "-x", "01" (the stdlib: extra data)
        }
        i += int;
        let mut float = false;
        if b.get(i) == Some(&b'.') {
            let n = digits(i + 1);
            if n == 0 {
                return Err(Decline::Syntax);
            }
            i += 1 + n;
            float = true;
        }
        let mut exp_at = None;
        if matches!(b.get(i), Some(b'e' | b'E')) {
            exp_at = Some(i - a);
            let mut j = i + 1;
            if matches!(b.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            let n = digits(j);
            if n == 0 {
                return Err(Decline::Syntax);
            }
            i = j + n;
            float = true;
        }
        self.at = i;
        Ok((&self.s[a..i], float, exp_at))
    }

    /// One JSON value of any shape, checked and skipped (nothing is
    /// written): the grammar of the cells above, with objects and arrays
    /// kept on an explicit stack, at most [`MAX_CHECKED_DEPTH`] deep.
    /// Strings and keys are unescaped into `scratch` (for their checks only).
    fn skip_value(&mut self, scratch: &mut String) -> Result<(), Decline> {
        // the open containers: true for an object
        let mut open: Vec<bool> = Vec::new();
        loop {
            // a value
            self.ws();
            let b = self.s.as_bytes();
            let rest = &b[self.at..];
            match rest.first() {
                Some(b'"') => {
                    self.at += 1;
                    scratch.clear();
                    self.string_into(scratch)?;
                }
                Some(b't') if rest.starts_with(b"true") => self.at += 4,
                Some(b'f') if rest.starts_with(b"false") => self.at += 5,
                Some(b'n') if rest.starts_with(b"null") => self.at += 4,
                Some(b'-' | b'0'..=b'9') => {
                    let (token, _, exp_at) = self.number_token()?;
                    // (what the reference reads with more care: see `number`)
                    if token.len() > MAX_CHECKED_NUMBER
                        || exp_at.is_some_and(|e| token.len() - e > MAX_EXPONENT_PART)
                    {
                        return Err(Decline::Number);
                    }
                }
                Some(&c @ (b'{' | b'[')) => {
                    if open.len() >= MAX_CHECKED_DEPTH {
                        return Err(Decline::NotFlat);
                    }
                    self.at += 1;
                    self.ws();
                    let object = c == b'{';
                    let close = if object { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.at += 1; // empty: a finished value
                    } else {
                        open.push(object);
                        if object {
                            self.key(scratch)?;
                        }
                        continue;
                    }
                }
                _ => return Err(Decline::Syntax),
            }
            // after a value: the next member or item, or the ends of containers
            loop {
                let Some(&object) = open.last() else {
                    return Ok(());
                };
                self.ws();
                match (self.peek(), object) {
                    (Some(b','), _) => {
                        self.at += 1;
                        if object {
                            self.key(scratch)?;
                        }
                        break;
                    }
                    (Some(b'}'), true) | (Some(b']'), false) => {
                        self.at += 1;
                        open.pop();
                    }
                    _ => return Err(Decline::Syntax),
                }
            }
        }
    }
}

/// The JSON values in a block of JSON Lines (one per line that is not
/// blank), each checked: pass one of `encode_jsonl` needs only their count
/// once an array's shape can no longer change.  `Err` for a block with
/// anything the reference reads with more care than this grammar (a
/// malformed line, NaN, a lone surrogate escape, a long number, deep
/// nesting, invalid UTF-8): the reference then parses that block, and
/// names its error.  (A BOM is the caller's: the first line's is removed
/// before.)
///
/// ```
/// use toonstream_native::jsonl::count_values;
/// assert_eq!(count_values(b"{\"a\": [1, {\"b\": null}]}\n\n[]\n\"x\"").unwrap(), 3);
/// assert!(count_values(b"{\"a\": 1,}\n").is_err());
/// ```
pub fn count_values(block: &[u8]) -> Result<u64, Decline> {
    let text = crate::utf8(block).map_err(|_| Decline::Utf8)?;
    let mut scratch = String::new();
    let mut n = 0;
    for line in text.split('\n') {
        if blank(line) {
            continue;
        }
        let mut p = Parser::new(line);
        p.skip_value(&mut scratch)?;
        p.ws();
        if p.at != line.len() {
            return Err(Decline::Syntax); // more after the value
        }
        n += 1;
    }
    Ok(n)
}

/// The bytes `"` and `\\` repeated, and the mask whose zero bytes are the
/// control characters (below 0x20), for [`crate::scalars::zero_bytes`].
const QUOTES: u64 = u64::from_ne_bytes([b'"'; 8]);
const BACKSLASHES: u64 = u64::from_ne_bytes([b'\\'; 8]);
const CONTROL: u64 = u64::from_ne_bytes([0xe0; 8]);

/// The bytes that end a run of plain string contents: the closing quote, a
/// backslash, and the control characters (an error in JSON).
static STRING_STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 0x20 {
        t[c] = true;
        c += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

fn hex4(b: &[u8], at: usize) -> Result<u32, Decline> {
    let h = b.get(at..at + 4).ok_or(Decline::Syntax)?;
    let mut v = 0;
    for &c in h {
        let d = (c as char).to_digit(16).ok_or(Decline::Syntax)?;
        v = v * 16 + d;
    }
    Ok(v)
}

/// A JSON number with a fraction or an exponent, as the reference writes
/// it: `_json_float` reads a float when the token is that float's `repr`,
/// else the exact `Decimal`; then `encode_float` or `encode_decimal`.
fn float_cell(token: &str, out: &mut String) -> Result<(), Decline> {
    if let Ok(x) = token.parse::<f64>() {
        if x.is_finite() {
            let mut repr = String::with_capacity(32);
            python_repr(&mut repr, x);
            if repr == token {
                write_float(out, x);
                return Ok(());
            }
        }
    }
    decimal_cell(token, out)
}

/// `encode_decimal(Decimal(token))`; a number it refuses is left to the
/// reference (which raises its error).
fn decimal_cell(token: &str, out: &mut String) -> Result<(), Decline> {
    let text = decimal_text(token).map_err(|_| Decline::Number)?;
    if text.len() > MAX_NUMBER_LENGTH {
        return Err(Decline::Number);
    }
    out.push_str(&text);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(input: &[u8], chunk: usize) -> Result<(Vec<String>, u64, String), Decline> {
        let mut t = TableEncoder::new(b',', 2);
        let mut out = String::new();
        for c in input.chunks(chunk.max(1)) {
            t.feed(c, &mut out)?;
        }
        t.finish(&mut out)?;
        let fields = t.fields().map(|f| f.to_vec()).unwrap_or_default();
        Ok((fields, t.rows(), out))
    }

    #[test]
    fn rows_in_the_first_records_order() {
        let input = b"\xef\xbb\xbf{\"a\": 1, \"b\": \"x,y\"}\n\n  \n{\"b\": null, \"a\": -0}\r\n{\"a\":true,\"b\":\"\\u00e9\\ud83d\\ude00\"}";
        for chunk in [1, 2, 3, 7, 1000] {
            let (f, n, out) = run(input, chunk).unwrap();
            assert_eq!(f, ["a", "b"]);
            assert_eq!(n, 3);
            assert_eq!(out, "\n  1,\"x,y\"\n  0,null\n  true,é😀");
        }
    }

    #[test]
    fn numbers_as_the_reference_writes_them() {
        for (tok, want) in [
            ("1.0", "1"),
            ("-0.0", "0"),
            ("2.50", "2.5"),
            ("1e+16", "10000000000000000"),
            ("1e-05", "0.00001"),
            ("1e-7", "1e-7"),
            ("1E2", "100"),
            ("0.10000000000000001", "0.10000000000000001"),
            ("0.1", "0.1"),
            ("1e400", "1e+400"),
            (
                "123456789012345678901234567890",
                "123456789012345678901234567890",
            ),
            ("6.517366420032157e+16", "65173664200321568"),
        ] {
            let line = format!("{{\"n\": {tok}}}");
            let (_, _, out) = run(line.as_bytes(), 100).unwrap();
            assert_eq!(out, format!("\n  {want}"), "{tok}");
        }
    }

    #[test]
    fn python_repr_forms() {
        for (x, want) in [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (-2.5e300, "-2.5e+300"),
            (-0.0, "-0.0"),
        ] {
            let mut s = String::new();
            python_repr(&mut s, x);
            assert_eq!(s, want);
        }
    }

    #[test]
    fn declines() {
        for (input, why) in [
            (&b"[1]"[..], Decline::NotFlat),
            (b"{}", Decline::NotFlat),
            (b"{\"a\": [1]}", Decline::NotFlat),
            (b"{\"a\": 1}\n{\"b\": 1}", Decline::Keys),
            (b"{\"a\": 1}\n{\"a\": 1, \"b\": 2}", Decline::Keys),
            (b"{\"a\": 1, \"b\": 2}\n{\"a\": 1}", Decline::Keys),
            (b"{\"a\": 1, \"a\": 2}", Decline::Keys),
            (b"{\"a\": NaN}", Decline::Syntax),
            (b"{\"a\": 01}", Decline::Syntax),
            (b"{\"a\": 1.}", Decline::Syntax),
            (b"{\"a\": 1} x", Decline::Syntax),
            (b"{\"a\": \"\\ud800\"}", Decline::Surrogate),
            (b"{\"a\": \"\x01\"}", Decline::Syntax),
            (b"{\"a\": \"\xff\"}", Decline::Utf8),
            (b"{\"a\": 1e-00000000000000000001}", Decline::Number),
        ] {
            for chunk in [1, 5, 100] {
                assert_eq!(run(input, chunk).map(|_| ()), Err(why), "{input:?}");
            }
        }
        // a plain decimal longer than the reference takes (it raises "number too long")
        for long in [
            format!("1.{}", "0".repeat(10_000)),
            format!("0.{}", "1".repeat(10_000)),
        ] {
            let input = format!("{{\"a\": {long}}}\n{{\"a\": 1}}\n");
            assert_eq!(
                run(input.as_bytes(), 4096).map(|_| ()),
                Err(Decline::Number)
            );
        }
    }

    #[test]
    fn count_values_checks_every_value() {
        let ok: &[(&[u8], u64)] = &[
            (b"", 0),
            (b"\n \t\r\n", 0),
            (b"1\n-0.5e+3\n\"s\"\ntrue\nfalse\nnull\n", 6),
            (b"{}\n[]\n{\"a\": {}}\n[[], [[]]]\r\n", 4),
            (
                b" {\"a\" : [1, {\"b\": [null, \"\\u00e9\\n\"]}], \"c\": {\"d\": -1}} ",
                1,
            ),
            (b"{\"a\": 1, \"a\": 2}", 1),
        ];
        for (input, n) in ok {
            assert_eq!(count_values(input), Ok(*n), "{input:?}");
        }
        let deep = format!(
            "{}{}",
            "[".repeat(MAX_CHECKED_DEPTH),
            "]".repeat(MAX_CHECKED_DEPTH)
        );
        assert_eq!(count_values(deep.as_bytes()), Ok(1));
        let deeper = format!("[{deep}]");
        assert_eq!(count_values(deeper.as_bytes()), Err(Decline::NotFlat));
        let long = format!("[1{}]", "0".repeat(MAX_CHECKED_NUMBER));
        assert_eq!(count_values(long.as_bytes()), Err(Decline::Number));
        for (input, why) in [
            (&b"[1, 2"[..], Decline::Syntax),
            (b"[1, 2]]", Decline::Syntax),
            (b"[1,]", Decline::Syntax),
            (b"{\"a\": 1,}", Decline::Syntax),
            (b"{\"a\" 1}", Decline::Syntax),
            (b"{\"a\": [}", Decline::Syntax),
            (b"{\"a\": {\"b\": 1]}", Decline::Syntax),
            (b"[1] [2]", Decline::Syntax),
            (b"\x0c1", Decline::Syntax),
            // (a form feed is no JSON white space: its line is not blank)
            (b"1\n\x0c\n", Decline::Syntax),
            (b" \x0b\n", Decline::Syntax),
            (b"[NaN]", Decline::Syntax),
            (b"[tru]", Decline::Syntax),
            (b"[\"\\ud800\"]", Decline::Surrogate),
            (b"[\"\xff\"]", Decline::Utf8),
            (b"[1e-00000000000000000001]", Decline::Number),
        ] {
            assert_eq!(count_values(input), Err(why), "{input:?}");
        }
    }

    #[test]
    fn two_threads_write_the_same_rows() {
        let mut input = String::new();
        for i in 0..200_000 {
            // (multi-byte text everywhere: the cut must not fall inside a character)
            input.push_str(&format!("{{\"i\": {i}, \"s\": \"ã{i}é\", \"f\": {i}.5}}\n"));
        }
        let one = run(input.as_bytes(), 1 << 22).unwrap();
        let mut t = TableEncoder::new(b',', 2).with_threads(2);
        let mut out = String::new();
        for c in input.as_bytes().chunks(1 << 22) {
            t.feed(c, &mut out).unwrap();
        }
        t.finish(&mut out).unwrap();
        assert_eq!((t.rows(), out), (one.1, one.2));
    }
}
