//! C-level reads of exact built-in objects for the encoder's walk
//! ([`crate::encode`]): a dict's items as borrowed references and a compact
//! ASCII str's own bytes.
//!
//! PyO3's dict iterator takes a new reference to every key and value (and
//! drops it again) and re-checks the dict's size on each step; `to_str`
//! calls `PyUnicode_AsUTF8AndSize` for a string whose ASCII bytes already
//! sit after its header.  On a flat table those were about a tenth of
//! `dumps`' instructions.  This module holds the `unsafe` those two need,
//! each use commented.
//!
//! The rule a caller keeps: a borrowed item is used before any Python code
//! runs (a signal handler in `check_signals`, a `__str__`): the dict holds
//! the only references the walk relies on, and Python code could change it.
//! The encoder checks for signals between items, never while it holds one.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyString};

/// The items of a dict in its order, as borrowed references (see the
/// module docs for the rule that keeps them valid).
pub(crate) struct DictItems<'a, 'py> {
    dict: &'a Bound<'py, PyDict>,
    pos: ffi::Py_ssize_t,
}

impl<'a, 'py> DictItems<'a, 'py> {
    /// From the first item.
    #[inline]
    pub(crate) fn new(dict: &'a Bound<'py, PyDict>) -> Self {
        DictItems { dict, pos: 0 }
    }
}

impl<'a, 'py> Iterator for DictItems<'a, 'py> {
    type Item = (Borrowed<'a, 'py, PyAny>, Borrowed<'a, 'py, PyAny>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        dict_next(self.dict, &mut self.pos)
    }
}

/// The item of `dict` at or after `pos` (which it moves past it), borrowed
/// (see the module docs), or `None` past the last.
#[inline]
pub(crate) fn dict_next<'a, 'py>(
    dict: &'a Bound<'py, PyDict>,
    pos: &mut ffi::Py_ssize_t,
) -> Option<(Borrowed<'a, 'py, PyAny>, Borrowed<'a, 'py, PyAny>)> {
    let py = dict.py();
    let mut key = std::ptr::null_mut();
    let mut value = std::ptr::null_mut();
    #[allow(unsafe_code)]
    // SAFETY: the GIL is held (`py`) and `dict` is a live dict.
    // `PyDict_Next` bounds-checks `pos` against the dict's current entries
    // (a dict changed meanwhile only yields other items, never a dangling
    // one) and, when it returns true, has stored two non-null borrowed
    // references owned by the dict, which `'a` (the borrow of the dict)
    // bounds; the caller uses them before any Python code runs (module
    // docs), so the dict still holds them.
    unsafe {
        if ffi::PyDict_Next(dict.as_ptr(), pos, &mut key, &mut value) == 0 {
            return None;
        }
        Some((Borrowed::from_ptr(py, key), Borrowed::from_ptr(py, value)))
    }
}

/// The text of a str: a compact ASCII string's own bytes (no call), else
/// its UTF-8 form as `to_str` gives it (an error for lone surrogates).
#[inline]
pub(crate) fn str_text<'a>(s: &'a Bound<'_, PyString>) -> PyResult<&'a str> {
    let p = s.as_ptr();
    #[allow(unsafe_code)]
    // SAFETY: the GIL is held (the `Bound`) and `p` is a live str.  A compact
    // ASCII str (CPython's flag, read by the macro PyO3 mirrors) keeps its
    // `PyUnicode_GET_LENGTH` one-byte characters, all below 128, at
    // `PyUnicode_DATA`; str objects are immutable, and the slice borrows
    // `s` (`'a`), which keeps the object alive.  ASCII bytes are UTF-8.
    unsafe {
        if ffi::PyUnicode_IS_COMPACT_ASCII(p) != 0 {
            let len = usize::try_from(ffi::PyUnicode_GET_LENGTH(p)).unwrap_or(0);
            let data = ffi::PyUnicode_DATA(p).cast::<u8>();
            return Ok(std::str::from_utf8_unchecked(std::slice::from_raw_parts(
                data, len,
            )));
        }
    }
    s.to_str()
}

/// An int's value if it fits 64 bits (`None` beyond: the caller writes its
/// decimal text instead), without the exception `extract` raises then.
#[inline]
pub(crate) fn int_value(v: &Bound<'_, PyInt>) -> Option<i64> {
    let mut overflow = 0;
    #[allow(unsafe_code)]
    // SAFETY: the GIL is held (the `Bound`) and `v` is a live int;
    // `PyLong_AsLongAndOverflow` reports a value beyond `long` through
    // `overflow` instead of an exception.
    let x = unsafe { ffi::PyLong_AsLongAndOverflow(v.as_ptr(), &mut overflow) };
    if overflow != 0 {
        return None;
    }
    if x == -1 {
        // (an int never fails here; were it to, its error is taken and the
        // value left to the slow path, which reports it)
        if let Some(e) = PyErr::take(v.py()) {
            drop(e);
            return None;
        }
    }
    #[allow(clippy::useless_conversion)] // (a C long is 32 bits on some platforms)
    i64::try_from(x).ok()
}

/// The cyclic garbage collector paused while a value is built, restored
/// (to enabled only if it was) when this is dropped.
///
/// A value under construction holds only new containers reachable from the
/// builder's stack: none of them can be garbage, and no cycle can form
/// before the value is handed back.  Yet each container allocated trips the
/// collector's counters, and on nested data its passes over the half-built
/// value were about half of `loads`' time (100k orders: 0.44 s with the
/// collector, 0.22 s without).  CPython pauses it the same way while it
/// converts an AST to Python objects (gh-153568), and msgpack's docs advise
/// it for large unpacks.  The objects built are then collected once as a
/// young generation, at the next allocation after the call, instead of
/// being traversed again and again during it.
///
/// Only while the GIL is held (the `'py` marker), so other threads run no
/// Python code during the build, except while a `parse_float` hook runs
/// Python code and the interpreter switches threads: those threads then
/// see the collector paused for that moment, as they would under
/// `gc.disable()` (and a `gc.disable()` one of them calls meanwhile is
/// undone when the build ends: the state restored is the one found).  (A module built by PyO3 declares that it needs the
/// GIL, so a free-threaded interpreter that imports it turns the GIL back
/// on.)
pub(crate) struct GcPause<'py> {
    _py: Python<'py>,
    was_enabled: bool,
}

impl<'py> GcPause<'py> {
    /// Pause the collector now.
    pub(crate) fn new(py: Python<'py>) -> Self {
        #[allow(unsafe_code)]
        // SAFETY: the GIL is held (`py`); `PyGC_Disable` (Python 3.10+) only
        // clears the interpreter's flag and returns its previous state.
        let was_enabled = unsafe { ffi::PyGC_Disable() } != 0;
        GcPause {
            _py: py,
            was_enabled,
        }
    }
}

impl Drop for GcPause<'_> {
    fn drop(&mut self) {
        if self.was_enabled {
            #[allow(unsafe_code)]
            // SAFETY: the GIL is still held (the `'py` lifetime this value
            // cannot outlive); `PyGC_Enable` only sets the flag back.
            unsafe {
                ffi::PyGC_Enable();
            }
        }
    }
}
