//! Python `str` objects from Rust strings, ASCII ones without a second
//! decode.
//!
//! `PyString::new` goes through `PyUnicode_FromStringAndSize`, which decodes
//! the UTF-8 again to find the widest character before copying it.  Most
//! keys and values are ASCII: for those a compact ASCII string is allocated
//! at its final size and the bytes copied in once (what orjson does).  This
//! module holds the binding's only `unsafe` besides the Arrow C interface
//! reader ([`crate::arrow`]).

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

/// `s` as a Python `str` (the same object `PyString::new` makes).
#[inline]
pub(crate) fn new_str<'py>(py: Python<'py>, s: &str) -> Bound<'py, PyString> {
    if !s.is_ascii() {
        return PyString::new(py, s);
    }
    let Ok(len) = ffi::Py_ssize_t::try_from(s.len()) else {
        return PyString::new(py, s);
    };
    #[allow(unsafe_code)]
    // SAFETY: the GIL is held (`py`).  `PyUnicode_New(len, 127)` returns a
    // new reference to a compact ASCII string with room for `len` one-byte
    // characters (its NUL terminator already written), or NULL with an
    // exception set, which `from_owned_ptr` turns into a panic exactly as
    // `PyString::new` does (the binding's `guarded` reports it).  The `len`
    // bytes copied into its data are ASCII (checked above), which is what a
    // maxchar of 127 promises; no hash is cached yet, and nothing else holds
    // the object before it is returned.
    unsafe {
        let obj = ffi::PyUnicode_New(len, 127);
        let bound = Bound::from_owned_ptr(py, obj);
        std::ptr::copy_nonoverlapping(s.as_ptr(), ffi::PyUnicode_1BYTE_DATA(obj), s.len());
        bound.cast_into_unchecked()
    }
}
