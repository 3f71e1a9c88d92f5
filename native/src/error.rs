//! The one decode error type, with the Python engine's codes and location
//! conventions (`toonstream/_errors.py`).
//!
//! - `line` is 1-based (counted from `Options::start_line`);
//! - `column` is 1-based and counts characters (Unicode scalar values), not
//!   bytes, as Python's `str` indexes do;
//! - `line_text` is the source line without its terminator; it is empty for
//!   the errors Python reports with `line_text=""` (`line_too_long`,
//!   `blank_line`, `closed`).
//!
//! Helpers below the machine return a [`Fail`] with a byte offset inside the
//! current line; the machine turns it into a located [`DecodeError`].

use std::fmt;

/// The error codes, spelled exactly as the Python engine spells them.
pub mod codes {
    // lines (bytes -> lines)
    pub const CLOSED: &str = "closed";
    pub const LINE_TOO_LONG: &str = "line_too_long";
    pub const INVALID_UTF8: &str = "invalid_utf8";
    // structure (the machine)
    pub const TAB_INDENT: &str = "tab_indent";
    pub const BAD_INDENT: &str = "bad_indent";
    pub const TOO_DEEP: &str = "too_deep";
    pub const BLANK_LINE: &str = "blank_line";
    pub const TRAILING_CONTENT: &str = "trailing_content";
    pub const DEPTH_JUMP: &str = "depth_jump";
    pub const OVER_INDENTED: &str = "over_indented";
    pub const COUNT_MISMATCH: &str = "count_mismatch";
    pub const WIDTH_MISMATCH: &str = "width_mismatch";
    pub const MISSING_COLON: &str = "missing_colon";
    pub const DUPLICATE_KEY: &str = "duplicate_key";
    pub const EXPECTED_LIST_ITEM: &str = "expected_list_item";
    pub const KEYLESS_HEADER: &str = "keyless_header";
    pub const CONTENT_AFTER_HEADER: &str = "content_after_header";
    pub const BAD_HEADER: &str = "bad_header";
    pub const BAD_LENGTH: &str = "bad_length";
    pub const BAD_FIELDS: &str = "bad_fields";
    pub const DELIMITER_MISMATCH: &str = "delimiter_mismatch";
    pub const TOO_MANY_FIELDS: &str = "too_many_fields";
    // tokens (scalars)
    pub const UNTERMINATED_STRING: &str = "unterminated_string";
    pub const INVALID_ESCAPE: &str = "invalid_escape";
    pub const TRAILING_CHARACTERS: &str = "trailing_characters";
    pub const NUMBER_TOO_LONG: &str = "number_too_long";
    pub const NUMBER_OUT_OF_RANGE: &str = "number_out_of_range";
    /// Native only: a call after the sink failed (the Python engine has no
    /// sink that can fail inside the decoder).
    pub const POISONED: &str = "poisoned";

    /// Every code the core can raise, for parity tests.
    pub const ALL: &[&str] = &[
        CLOSED,
        LINE_TOO_LONG,
        INVALID_UTF8,
        TAB_INDENT,
        BAD_INDENT,
        TOO_DEEP,
        BLANK_LINE,
        TRAILING_CONTENT,
        DEPTH_JUMP,
        OVER_INDENTED,
        COUNT_MISMATCH,
        WIDTH_MISMATCH,
        MISSING_COLON,
        DUPLICATE_KEY,
        EXPECTED_LIST_ITEM,
        KEYLESS_HEADER,
        CONTENT_AFTER_HEADER,
        BAD_HEADER,
        BAD_LENGTH,
        BAD_FIELDS,
        DELIMITER_MISMATCH,
        TOO_MANY_FIELDS,
        UNTERMINATED_STRING,
        INVALID_ESCAPE,
        TRAILING_CHARACTERS,
        NUMBER_TOO_LONG,
        NUMBER_OUT_OF_RANGE,
    ];
}

/// The input is not valid TOON (or breaks a configured limit).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub code: &'static str,
    pub message: String,
    pub line: u64,
    pub column: u64,
    pub line_text: String,
}

impl DecodeError {
    pub(crate) fn new(
        code: &'static str,
        message: impl Into<String>,
        line: u64,
        column: u64,
        line_text: &str,
    ) -> Self {
        DecodeError {
            code,
            message: message.into(),
            line,
            column,
            line_text: line_text.to_owned(),
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (line {}, column {})",
            self.message, self.line, self.column
        )
    }
}

impl std::error::Error for DecodeError {}

/// An error from a helper, not yet located: `at` is a byte offset inside the
/// line the helper was given (the machine converts it to a column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Fail {
    pub code: &'static str,
    pub message: String,
    pub at: usize,
}

impl Fail {
    pub(crate) fn new(code: &'static str, message: impl Into<String>, at: usize) -> Self {
        Fail {
            code,
            message: message.into(),
            at,
        }
    }
}

/// The 1-based character column of byte offset `at` in `text`.
pub(crate) fn column_of(text: &str, at: usize) -> u64 {
    let at = at.min(text.len());
    // Offsets come from ASCII positions or token ends, so they sit on char
    // boundaries; count the bytes that start a char to be safe either way.
    let chars = text.as_bytes()[..at]
        .iter()
        .filter(|&&b| (b & 0xC0) != 0x80)
        .count();
    chars as u64 + 1
}

/// Why `feed`/`close` stopped: a decode error, or the sink's own error.
#[derive(Debug)]
pub(crate) enum Stop<E> {
    Decode(DecodeError),
    Sink(E),
}

impl<E> From<DecodeError> for Stop<E> {
    fn from(e: DecodeError) -> Self {
        Stop::Decode(e)
    }
}
