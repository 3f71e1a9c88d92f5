//! toonstream's native decoder core: a sans-I/O push decoder for TOON 4.0.
//!
//! ```text
//! bytes ─► lines (UTF-8, CRLF, BOM, line limit) ─► machine (frame stack) ─► Sink calls
//!                                                                   └─► ValueBuilder (tests),
//!                                                                       PyO3 builders (later)
//! ```
//!
//! Feed bytes in any chunks, then close; the decoder calls a [`Sink`] as it
//! recognises values.  It mirrors the Python engine (`toonstream/_reference/lines.py`,
//! `_machine.py`, `_scalars.py`, `_numbers.py`) decision for decision: the same error codes,
//! lines, columns (in characters) and line texts, however the input is
//! chunked.  Memory is bounded by the longest line plus the open scopes (and
//! the keys of open objects in strict mode, as in Python).  No recursion, no
//! `unsafe`, no panics on any input.
//!
//! ```
//! use toonstream_native::{Decoder, Options, value::{Value, ValueBuilder}};
//! let mut d = Decoder::new(Options::default()).unwrap();
//! let mut b = ValueBuilder::new();
//! d.feed(b"tags[2]: a,", &mut b).unwrap();
//! d.feed(b"b\n", &mut b).unwrap();
//! d.close(&mut b).unwrap();
//! assert_eq!(
//!     b.into_value(),
//!     Some(Value::Object(vec![(
//!         "tags".into(),
//!         Value::Array(vec![Value::Str("a".into()), Value::Str("b".into())])
//!     )]))
//! );
//! ```

#![forbid(unsafe_code)]
// No panics on input: no unwrap/expect/panic outside tests (indexes are
// guarded by the checks next to them; the fuzz-style tests cover the rest).
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod arrow;
pub mod columns;
pub mod error;
pub mod events;
pub mod format;
pub mod json;
pub mod jsonl;
pub mod jsontree;
pub mod keys;
mod lines;
mod machine;
pub mod pool;
pub mod prefix;
pub mod scalars;
mod split;
pub use split::TWO_THREADS_MIN;
pub mod value;

pub use error::{codes, DecodeError};
pub use events::{Cells, FieldOp, ForkRows, Sink, Table};
pub use scalars::{float_value, FloatValue, Scalar};

use error::Stop;
use lines::LineSplitter;
use machine::{Limits, Machine};

pub const DEFAULT_MAX_LINE_LENGTH: usize = 64 * 1024 * 1024;
pub const DEFAULT_MAX_DEPTH: usize = 10_000;
pub const DEFAULT_MAX_NUMBER_LENGTH: usize = 10_000;
pub const DEFAULT_MAX_FIELDS: usize = 10_000;

/// The Python `Decoder`'s options (same names and defaults; `parse_float`
/// is a builder's business: the sink gets the number's text).
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// spaces per indentation level (>= 1)
    pub indent_size: usize,
    /// enforce §14 (counts, indentation, blank lines, duplicate keys, headers)
    pub strict: bool,
    /// nesting of scopes and of field groups (`too_deep`)
    pub max_depth: usize,
    /// characters per line, the partial line included (`line_too_long`)
    pub max_line_length: usize,
    /// characters per number token (`number_too_long`)
    pub max_number_length: usize,
    /// leaf fields per header (`too_many_fields`)
    pub max_fields: usize,
    /// number of the first line (a document inside a larger text)
    pub start_line: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            indent_size: 2,
            strict: true,
            max_depth: DEFAULT_MAX_DEPTH,
            max_line_length: DEFAULT_MAX_LINE_LENGTH,
            max_number_length: DEFAULT_MAX_NUMBER_LENGTH,
            max_fields: DEFAULT_MAX_FIELDS,
            start_line: 1,
        }
    }
}

/// An option out of range (Python raises `ValueError`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionError(pub &'static str);

impl std::fmt::Display for OptionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for OptionError {}

/// A push decoder: feed chunks, then close.  Does no I/O.
///
/// Chunks may split anywhere (inside a UTF-8 sequence, between CR and LF,
/// inside a quoted string).  After an error every later call returns the
/// same error, as in Python.
pub struct Decoder {
    lines: LineSplitter,
    machine: Machine,
    failed: Option<DecodeError>,
    /// the sink failed: the machine may be mid-line
    poisoned: bool,
    /// rows read on a second thread ([`Decoder::feed_two_threads`])
    forked_rows: u64,
}

impl Decoder {
    pub fn new(options: Options) -> Result<Self, OptionError> {
        if options.indent_size < 1 {
            return Err(OptionError("indent_size must be >= 1"));
        }
        Ok(Decoder {
            lines: LineSplitter::new(options.max_line_length, options.start_line),
            machine: Machine::new(Limits {
                indent_size: options.indent_size,
                strict: options.strict,
                max_depth: options.max_depth,
                max_number_length: options.max_number_length,
                max_fields: options.max_fields,
            }),
            failed: None,
            poisoned: false,
            forked_rows: 0,
        })
    }

    /// Add a chunk of input; the sink is called for every line it completes.
    pub fn feed<S: Sink>(&mut self, data: &[u8], sink: &mut S) -> Result<(), S::Error> {
        self.feed_lines(data, sink, |_, _, _| Ok(()))
    }

    /// [`Decoder::feed`], calling `after_line(line_number, text, sink)` each time
    /// the machine is done with a line (before the next is looked at): a
    /// consumer that keeps what each line produced marks there, so that of
    /// an error it drops exactly the failing line's output, however the
    /// input is chunked.  An error of `after_line` stops the feed as a
    /// sink error does.
    pub fn feed_lines<S: Sink>(
        &mut self,
        data: &[u8],
        sink: &mut S,
        mut after_line: impl FnMut(u64, &str, &mut S) -> Result<(), S::Error>,
    ) -> Result<(), S::Error> {
        self.check()?;
        let machine = &mut self.machine;
        let r = self.lines.feed(data, &mut |no, line| {
            machine.line(no, line, sink)?;
            after_line(no, line, sink).map_err(Stop::Sink)
        });
        self.finish(r)
    }

    /// End of input: the last line, then every open scope is closed (count
    /// checks run).  Calling it again does nothing.
    pub fn close<S: Sink>(&mut self, sink: &mut S) -> Result<(), S::Error> {
        self.end_input(sink)?;
        let r = self.machine.close(sink);
        self.finish(r)
    }

    /// The first half of [`Decoder::close`]: the last line (one without a
    /// terminator) is handed to the machine, but no scope is closed yet.  A
    /// consumer that keeps what each line produced (ijson events) marks
    /// here, so that of an error at the end it keeps the last line's output
    /// and drops the scope ends before the failing check, as the Python
    /// engine does.  Calling it again (or `close` after it) does not repeat it.
    pub fn end_input<S: Sink>(&mut self, sink: &mut S) -> Result<(), S::Error> {
        self.end_input_lines(sink, |_, _| {})
    }

    /// [`Decoder::end_input`], calling `last_line(line_number, text)` with
    /// the last line if there is one (a consumer's error of that line
    /// quotes it).
    pub fn end_input_lines<S: Sink>(
        &mut self,
        sink: &mut S,
        mut last_line: impl FnMut(u64, &str),
    ) -> Result<(), S::Error> {
        self.check()?;
        let machine = &mut self.machine;
        let r = self.lines.close(&mut |no, line| {
            machine.line(no, line, sink)?;
            last_line(no, line);
            Ok(())
        });
        self.finish(r)
    }

    /// The number of the last line handed to the machine.
    pub fn line(&self) -> u64 {
        self.lines.lines_emitted
    }

    /// Rows read on a second thread so far (by [`Decoder::feed_two_threads`]).
    pub fn forked_rows(&self) -> u64 {
        self.forked_rows
    }

    /// True when nothing of a partial line or UTF-8 sequence is pending.
    pub fn at_line_boundary(&self) -> bool {
        self.lines.at_line_boundary()
    }

    #[inline]
    fn check(&self) -> Result<(), DecodeError> {
        if self.failed.is_none() && !self.poisoned {
            return Ok(()); // (every feed asks: the usual answer stays inline)
        }
        self.refuse()
    }

    #[cold]
    fn refuse(&self) -> Result<(), DecodeError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.poisoned {
            return Err(DecodeError::new(
                codes::POISONED,
                "the decoder's sink failed earlier",
                self.lines.lines_emitted + 1,
                1,
                "",
            ));
        }
        Ok(())
    }

    #[inline]
    fn finish<E: From<DecodeError>>(&mut self, r: Result<(), Stop<E>>) -> Result<(), E> {
        match r {
            Ok(()) => Ok(()),
            Err(stop) => self.stopped(stop),
        }
    }

    #[cold]
    fn stopped<E: From<DecodeError>>(&mut self, stop: Stop<E>) -> Result<(), E> {
        match stop {
            Stop::Decode(e) => {
                self.failed = Some(e.clone());
                Err(e.into())
            }
            Stop::Sink(e) => {
                self.poisoned = true;
                Err(e)
            }
        }
    }
}

/// `bytes` as UTF-8 text: validated with SIMD (simdutf8, several times
/// std's speed on text with non-ASCII characters), std's validation
/// only to locate an error.
pub fn utf8(bytes: &[u8]) -> Result<&str, std::str::Utf8Error> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(_) => std::str::from_utf8(bytes),
    }
}
