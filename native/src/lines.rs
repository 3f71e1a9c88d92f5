//! Bytes in, complete lines out (the Python twin is `toonstream/_reference/lines.py`).
//!
//! Owns: UTF-8 validation (incremental, strict: a multi-byte sequence split
//! across feeds is carried, at most 3 bytes), the line terminator (LF; a CR
//! right before it, or at the very end of input, belongs to it, §12), one
//! leading byte-order mark, and the line-length limit (in characters, the
//! partial line included).  Knows nothing of TOON: comments, blanks and
//! indentation are the machine's business.
//!
//! Memory: only the current partial line is kept.  Lines that are complete
//! inside one feed are handed over as slices of the input, not copied.
//!
//! Errors come in document order however the input is chunked: each line
//! is handed over (and so processed by the machine) before anything after
//! it is checked.

use crate::error::{codes, DecodeError, Stop};

const BOM: char = '\u{feff}';

pub(crate) struct LineSplitter {
    /// The current partial line (valid UTF-8, BOM already skipped).
    partial: String,
    /// The characters in `partial[..counted]` (`max_line_length` counts characters).  Counted
    /// only once the partial line has more bytes than the limit allows characters: a shorter
    /// one cannot break it, and counting every small feed's tail was a fifth of its cost.
    partial_chars: usize,
    counted: usize,
    /// An incomplete UTF-8 sequence from the end of the last feed.
    carry: [u8; 4],
    carry_len: usize,
    max_line: usize,
    /// Lines handed over so far (plus `start_line - 1`).
    pub(crate) lines_emitted: u64,
    started: bool,
    closed: bool,
}

/// Byte length of the UTF-8 sequence a lead byte starts (carried bytes are a
/// valid incomplete prefix, so their lead byte is a multi-byte lead).
fn seq_len(lead: u8) -> usize {
    match lead {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

fn strip_cr(line: &str) -> &str {
    line.strip_suffix('\r').unwrap_or(line)
}

impl LineSplitter {
    pub(crate) fn new(max_line_length: usize, start_line: u64) -> Self {
        LineSplitter {
            partial: String::new(),
            partial_chars: 0,
            counted: 0,
            carry: [0; 4],
            carry_len: 0,
            max_line: max_line_length,
            lines_emitted: start_line.saturating_sub(1),
            started: false,
            closed: false,
        }
    }

    /// A splitter for lines that continue this document from a line
    /// boundary (on another thread: no byte-order mark is skipped there),
    /// numbered from 1.
    pub(crate) fn fork(&self) -> Self {
        let mut fork = LineSplitter::new(self.max_line, 1);
        fork.started = true;
        fork
    }

    /// `n` complete lines were read elsewhere (by a fork, from a line boundary).
    pub(crate) fn skip_lines(&mut self, n: u64) {
        self.started = true;
        self.lines_emitted += n;
    }

    /// True when no partial line or UTF-8 sequence is pending.
    pub(crate) fn at_line_boundary(&self) -> bool {
        self.partial.is_empty() && self.carry_len == 0 && !self.closed
    }

    /// One leading BOM is skipped (documented policy): only at the very
    /// first decoded character of the document.
    fn skip_bom<'s>(&mut self, s: &'s str) -> &'s str {
        if self.started || s.is_empty() {
            return s;
        }
        self.started = true;
        s.strip_prefix(BOM).unwrap_or(s)
    }

    /// Empty the partial line and its character count (which is derived from it).
    fn clear_partial(&mut self) {
        self.partial.clear();
        self.partial_chars = 0;
        self.counted = 0;
    }

    fn too_long(&mut self) -> DecodeError {
        self.closed = true;
        self.clear_partial();
        DecodeError::new(
            codes::LINE_TOO_LONG,
            format!(
                "line longer than max_line_length ({} characters)",
                self.max_line
            ),
            self.lines_emitted + 1,
            self.max_line as u64 + 1,
            "",
        )
    }

    /// `reason` is what Python's UTF-8 codec says ([`utf8_reason`]); the
    /// Python engine's message quotes it.
    fn invalid_utf8(&mut self, reason: &str) -> DecodeError {
        self.closed = true;
        self.carry_len = 0;
        let e = DecodeError::new(
            codes::INVALID_UTF8,
            format!("invalid UTF-8 ({reason})"),
            self.lines_emitted + 1,
            self.partial.chars().count() as u64 + 1,
            &self.partial,
        );
        self.clear_partial();
        e
    }

    #[inline]
    fn append_partial(&mut self, s: &str) -> Result<(), DecodeError> {
        if s.is_empty() {
            return Ok(());
        }
        let s = self.skip_bom(s);
        self.partial.push_str(s);
        // A CR at the end of the partial line may be the first half of a CRLF (or the final
        // CR at the end of input), which is not part of the line: it is not counted until the
        // next character shows it is content, so the verdict does not depend on the chunking.
        let cr = usize::from(self.partial.ends_with('\r'));
        if self.partial.len() - cr <= self.max_line {
            return Ok(()); // (no more characters than bytes)
        }
        self.count_partial(cr)
    }

    /// [`Self::append_partial`] past the byte limit (out of line: most feeds never get here).
    #[cold]
    fn count_partial(&mut self, cr: usize) -> Result<(), DecodeError> {
        // (only the part not counted yet: a long partial line is counted once in all)
        let new = self.partial.get(self.counted..).unwrap_or("");
        self.partial_chars += new.chars().count();
        self.counted = self.partial.len();
        if self.partial_chars - cr > self.max_line {
            return Err(self.too_long());
        }
        Ok(())
    }

    /// Hand the complete line `seg` (the text before an LF, after the
    /// partial line) to `on_line`.
    fn complete_str<E>(
        &mut self,
        seg: &str,
        on_line: &mut impl FnMut(u64, &str) -> Result<(), Stop<E>>,
    ) -> Result<(), Stop<E>> {
        // (the LF itself is a character: the document has started)
        let seg = self.skip_bom(seg);
        self.started = true;
        let line_no = self.lines_emitted + 1;
        if self.partial.is_empty() {
            let line = strip_cr(seg);
            if line.len() > self.max_line && line.chars().count() > self.max_line {
                return Err(self.too_long().into());
            }
            self.lines_emitted = line_no;
            on_line(line_no, line)
        } else {
            let mut partial = std::mem::take(&mut self.partial);
            partial.push_str(seg);
            self.clear_partial(); // (the taken buffer comes back below, emptied)
            let line = strip_cr(&partial);
            if line.len() > self.max_line && line.chars().count() > self.max_line {
                return Err(self.too_long().into());
            }
            self.lines_emitted = line_no;
            let r = on_line(line_no, line);
            // keep the allocation for the next partial line
            partial.clear();
            self.partial = partial;
            r
        }
    }

    /// Split `data`; every complete line goes to `on_line(line_number, text)`.
    pub(crate) fn feed<E>(
        &mut self,
        mut data: &[u8],
        on_line: &mut impl FnMut(u64, &str) -> Result<(), Stop<E>>,
    ) -> Result<(), Stop<E>> {
        if self.closed {
            return Err(DecodeError::new(
                codes::CLOSED,
                "data fed after close()",
                self.lines_emitted + 1,
                1,
                "",
            )
            .into());
        }
        if self.carry_len > 0 {
            // finish the multi-byte sequence the last feed ended inside
            let need = seq_len(self.carry[0]).saturating_sub(self.carry_len);
            let take = need.min(data.len());
            for &b in &data[..take] {
                if self.carry_len < 4 {
                    self.carry[self.carry_len] = b;
                    self.carry_len += 1;
                }
            }
            data = &data[take..];
            let carry = self.carry;
            match std::str::from_utf8(&carry[..self.carry_len]) {
                Ok(s) => {
                    self.carry_len = 0;
                    self.append_partial(s)?;
                }
                Err(e) if e.error_len().is_none() => return Ok(()), // still incomplete
                Err(_) => return Err(self.invalid_utf8(utf8_reason(Some(carry[0]))).into()),
            }
        }
        // One UTF-8 validation for the whole feed (a small feed paid one per piece before): the
        // valid prefix's complete lines are handed over first, so that an invalid sequence is
        // reported after the lines before it, located in its own line as before.
        let (text, bad) = match crate::utf8(data) {
            Ok(s) => (s, None),
            Err(e) => (
                std::str::from_utf8(&data[..e.valid_up_to()]).unwrap_or(""),
                Some(e),
            ),
        };
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', text.as_bytes()) {
            // (an LF is always a character boundary)
            self.complete_str(text.get(start..nl).unwrap_or(""), on_line)?;
            start = nl + 1;
        }
        self.append_partial(text.get(start..).unwrap_or(""))?;
        if let Some(e) = bad {
            let v = e.valid_up_to();
            if e.error_len().is_some() {
                return Err(self.invalid_utf8(utf8_reason(data.get(v).copied())).into());
            }
            // an incomplete sequence at the end: carried to the next feed
            let tail = &data[v..];
            self.carry_len = tail.len().min(4);
            self.carry[..self.carry_len].copy_from_slice(&tail[..self.carry_len]);
        }
        Ok(())
    }

    /// End of input: the last, unterminated line (if any) goes to `on_line`.
    pub(crate) fn close<E>(
        &mut self,
        on_line: &mut impl FnMut(u64, &str) -> Result<(), Stop<E>>,
    ) -> Result<(), Stop<E>> {
        if self.closed {
            return Ok(());
        }
        if self.carry_len > 0 {
            // truncated sequence at the end
            return Err(self.invalid_utf8("unexpected end of data").into());
        }
        self.closed = true;
        if self.partial.is_empty() {
            return Ok(());
        }
        let partial = std::mem::take(&mut self.partial);
        self.lines_emitted += 1;
        on_line(self.lines_emitted, strip_cr(&partial))
    }
}

/// CPython's reason for a bad UTF-8 sequence that is not cut off by the end
/// of input: a byte that cannot start a sequence, or a lead byte whose
/// sequence breaks (overlong forms, surrogates and code points past U+10FFFF
/// are reported at the continuation byte, as CPython does).
fn utf8_reason(lead: Option<u8>) -> &'static str {
    match lead {
        Some(0x80..=0xC1 | 0xF5..=0xFF) => "invalid start byte",
        _ => "invalid continuation byte",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed `chunks`, collect (line number, text) or the error.
    fn split(chunks: &[&[u8]], max: usize) -> Result<Vec<(u64, String)>, DecodeError> {
        let mut s = LineSplitter::new(max, 1);
        let mut out = Vec::new();
        let mut push = |n: u64, l: &str| -> Result<(), Stop<()>> {
            out.push((n, l.to_owned()));
            Ok(())
        };
        let r = (|| {
            for c in chunks {
                s.feed(c, &mut push)?;
            }
            s.close(&mut push)
        })();
        match r {
            Ok(()) => Ok(out),
            Err(Stop::Decode(e)) => Err(e),
            Err(Stop::Sink(())) => unreachable!(),
        }
    }

    fn lines(v: &[&str]) -> Vec<(u64, String)> {
        v.iter()
            .enumerate()
            .map(|(i, s)| (i as u64 + 1, s.to_string()))
            .collect()
    }

    /// Every way to cut `data` in two, and one byte at a time, agree with whole.
    fn all_splits(data: &[u8], max: usize) -> Result<Vec<(u64, String)>, DecodeError> {
        let whole = split(&[data], max);
        for i in 0..=data.len() {
            assert_eq!(split(&[&data[..i], &data[i..]], max), whole, "split at {i}");
        }
        let bytes: Vec<&[u8]> = data.chunks(1).collect();
        assert_eq!(split(&bytes, max), whole, "byte by byte");
        whole
    }

    #[test]
    fn crlf_and_final_cr() {
        assert_eq!(
            all_splits(b"a\r\nb\r\n\r\nc\r", 100),
            Ok(lines(&["a", "b", "", "c"]))
        );
        // a lone CR inside a line is content
        assert_eq!(all_splits(b"a\rb\n", 100), Ok(lines(&["a\rb"])));
    }

    #[test]
    fn bom_only_once_at_start() {
        assert_eq!(
            all_splits("\u{feff}a\n\u{feff}b".as_bytes(), 100),
            Ok(lines(&["a", "\u{feff}b"]))
        );
        assert_eq!(
            all_splits("\n\u{feff}b".as_bytes(), 100),
            Ok(lines(&["", "\u{feff}b"]))
        );
    }

    #[test]
    fn utf8_split_across_feeds_and_error_column() {
        let text = "é€😀x\nü";
        assert_eq!(all_splits(text.as_bytes(), 100), Ok(lines(&["é€😀x", "ü"])));
        // invalid byte after 3 characters of line 2: column 4, in every chunking
        let e = all_splits(b"ok\nab\xc3\xa9\xff rest", 100).unwrap_err();
        assert_eq!((e.code, e.line, e.column), (codes::INVALID_UTF8, 2, 4));
        assert_eq!(e.line_text, "ab\u{e9}");
        // truncated at the end of input
        let e = all_splits(b"a\nxy\xe2\x82", 100).unwrap_err();
        assert_eq!((e.code, e.line, e.column), (codes::INVALID_UTF8, 2, 3));
        // an incomplete sequence right before LF, surrogates, overlongs
        for bad in [&b"ab\xe2\n"[..], b"ab\xed\xa0\x80", b"ab\xc0\x80"] {
            let e = all_splits(bad, 100).unwrap_err();
            assert_eq!(
                (e.code, e.line, e.column),
                (codes::INVALID_UTF8, 1, 3),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn utf8_error_messages_give_cpythons_reason() {
        for (bad, reason) in [
            (&b"a\xff"[..], "invalid start byte"),
            (b"a\x80b", "invalid start byte"),
            (b"a\xc0\x80", "invalid start byte"),
            (b"a\xe2\x82x", "invalid continuation byte"),
            (b"a\xe2\n", "invalid continuation byte"),
            (b"a\xed\xa0\x80", "invalid continuation byte"),
            (b"a\xf4\x90\x80\x80", "invalid continuation byte"),
            (b"a\xe2\x82", "unexpected end of data"),
        ] {
            let e = all_splits(bad, 100).unwrap_err();
            assert_eq!(e.message, format!("invalid UTF-8 ({reason})"), "{bad:?}");
        }
    }

    #[test]
    fn long_lines_bounded_while_partial() {
        // characters, not bytes: 4 two-byte chars fit a limit of 4
        assert_eq!(all_splits("éééé\n".as_bytes(), 4), Ok(lines(&["éééé"])));
        let e = all_splits(b"ok\n12345\n", 4).unwrap_err();
        assert_eq!((e.code, e.line, e.column), (codes::LINE_TOO_LONG, 2, 5));
        // the partial line is bounded before its LF arrives
        let mut s = LineSplitter::new(4, 1);
        let mut sink = |_: u64, _: &str| -> Result<(), Stop<()>> { Ok(()) };
        assert!(s.feed(b"123", &mut sink).is_ok());
        match s.feed(b"45", &mut sink) {
            Err(Stop::Decode(e)) => assert_eq!(e.code, codes::LINE_TOO_LONG),
            _ => panic!("expected line_too_long"),
        }
        // CR of a CRLF does not count for a complete line
        assert_eq!(split(&[b"1234\r\n"], 4), Ok(lines(&["1234"])));
        // a too-long line before invalid UTF-8 is the error
        let e = split(&[b"123456\xff"], 4).unwrap_err();
        assert_eq!(e.code, codes::LINE_TOO_LONG);
    }

    /// The partial line is counted in characters only once it has more bytes than the limit,
    /// and then only its new part: the verdict is the same in every chunking.
    #[test]
    fn multibyte_partial_lines_counted_once_past_the_byte_limit() {
        assert_eq!(all_splits("éééééé\n".as_bytes(), 6), Ok(lines(&["éééééé"])));
        let e = all_splits("ok\néééééé€\n".as_bytes(), 6).unwrap_err();
        assert_eq!((e.code, e.line, e.column), (codes::LINE_TOO_LONG, 2, 7));
        // a partial line past the byte limit, then an invalid byte: the column counts characters
        let e = all_splits(b"\xc3\xa9\xc3\xa9\xc3\xa9x\xff", 4).unwrap_err();
        assert_eq!((e.code, e.line, e.column), (codes::INVALID_UTF8, 1, 5));
        assert_eq!(e.line_text, "\u{e9}\u{e9}\u{e9}x");
    }

    /// A line of exactly `max_line_length` characters ending in CRLF fits,
    /// wherever a feed ends (a trailing CR is not counted while partial).
    #[test]
    fn crlf_at_the_limit_does_not_depend_on_chunking() {
        assert_eq!(split(&[b"1234\r\n"], 4), Ok(lines(&["1234"])));
        assert_eq!(split(&[b"1234\r", b"\n"], 4), Ok(lines(&["1234"])));
        assert_eq!(split(&[b"12", b"34\r"], 4), Ok(lines(&["1234"])));
        // a CR followed by content is content, and counts
        let e = split(&[b"1234\r", b"x\n"], 4).unwrap_err();
        assert_eq!((e.code, e.line, e.column), (codes::LINE_TOO_LONG, 1, 5));
    }

    #[test]
    fn feed_after_close() {
        let mut s = LineSplitter::new(10, 1);
        let mut sink = |_: u64, _: &str| -> Result<(), Stop<()>> { Ok(()) };
        assert!(s.close(&mut sink).is_ok());
        match s.feed(b"x", &mut sink) {
            Err(Stop::Decode(e)) => assert_eq!((e.code, e.line), (codes::CLOSED, 1)),
            _ => panic!("expected closed"),
        }
    }
}
