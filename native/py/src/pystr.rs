//! Python `str` objects from Rust strings, ASCII ones without a second
//! decode.
//!
//! `PyString::new` goes through `PyUnicode_FromStringAndSize`, which decodes
//! the UTF-8 again to find the widest character before copying it.  Most
//! keys and values are ASCII: for those a compact ASCII string is allocated
//! at its final size and the bytes copied in once (what orjson does).  This
//! module holds the binding's only `unsafe` besides the Arrow C interface
//! reader ([`crate::arrow`]).
//!
//! [`StrBuf`] is a `str` written in pieces (`dumps`): its text goes straight
//! into the string's own buffer, so a big document is held once, not built
//! in a Rust `String` and then copied into the `str` (two copies at the
//! peak: 1M events, +297 MB -> +151 MB; the time did not change, the
//! allocator was reusing the `String`'s pages).

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

/// A `str` written in pieces, in order: ASCII text straight into a compact
/// ASCII string's buffer (grown by `PyUnicode_Resize`, which reallocates in
/// place when it can); once a piece is not ASCII, everything in a `String`
/// (a compact string's kind is fixed when it is made).
pub(crate) struct StrBuf<'py> {
    py: Python<'py>,
    /// A compact ASCII str of `cap` characters whose first `len` are written
    /// (the rest not yet), owned by this (its only reference), never seen
    /// by Python code; null before the first piece.
    obj: *mut ffi::PyObject,
    len: usize,
    cap: usize,
    /// All the text so far, once a piece was not ASCII (`obj` then null).
    utf8: Option<String>,
}

impl<'py> StrBuf<'py> {
    pub(crate) fn new(py: Python<'py>) -> Self {
        StrBuf {
            py,
            obj: std::ptr::null_mut(),
            len: 0,
            cap: 0,
            utf8: None,
        }
    }

    /// Whether any text was taken.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0 && self.utf8.is_none()
    }

    pub(crate) fn push(&mut self, s: &str) -> PyResult<()> {
        if let Some(text) = &mut self.utf8 {
            text.push_str(s);
            return Ok(());
        }
        if !s.is_ascii() {
            let mut text = String::with_capacity(self.len + s.len());
            text.push_str(self.ascii());
            text.push_str(s);
            self.release();
            self.utf8 = Some(text);
            return Ok(());
        }
        let need = self.len + s.len();
        if need > self.cap {
            self.grow(need)?;
        }
        #[allow(unsafe_code)]
        // SAFETY: the GIL is held (`py`); `obj` is a live compact ASCII
        // string of `cap >= len + s.len()` characters (`grow`), owned here,
        // so its data has room for `s` at `len`; `s` is ASCII (checked), as
        // its maxchar of 127 requires.
        unsafe {
            let data = ffi::PyUnicode_1BYTE_DATA(self.obj).add(self.len);
            std::ptr::copy_nonoverlapping(s.as_ptr(), data, s.len());
        }
        self.len = need;
        Ok(())
    }

    /// The text taken so far (ASCII mode).
    fn ascii(&self) -> &str {
        if self.obj.is_null() {
            return "";
        }
        #[allow(unsafe_code)]
        // SAFETY: `obj` is a live compact ASCII string whose first `len`
        // bytes were written by `push` from ASCII `&str`s (so valid UTF-8);
        // the slice borrows `self`, which owns the object.
        unsafe {
            let bytes = std::slice::from_raw_parts(ffi::PyUnicode_1BYTE_DATA(self.obj), self.len);
            std::str::from_utf8_unchecked(bytes)
        }
    }

    /// Room for at least `need` characters: doubling, from 1 MiB.
    fn grow(&mut self, need: usize) -> PyResult<()> {
        let cap = need.max(self.cap.saturating_mul(2)).max(1 << 20);
        self.resize(cap)?;
        self.cap = cap;
        Ok(())
    }

    fn resize(&mut self, cap: usize) -> PyResult<()> {
        let n = ffi::Py_ssize_t::try_from(cap)
            .map_err(|_| pyo3::exceptions::PyMemoryError::new_err("the output is too long"))?;
        #[allow(unsafe_code)]
        // SAFETY: the GIL is held.  A new string: `PyUnicode_New(n, 127)`
        // gives a compact ASCII str of `n` characters (a new reference) or
        // NULL with an exception set.  A resize: `obj` is ours alone (one
        // reference, no hash, not interned, never returned), which is what
        // `PyUnicode_Resize` needs to resize it in place; on success it
        // stores the (possibly moved) object in `obj`, with the first
        // `min(len, n)` characters kept; on failure it leaves `obj` as it was
        // and sets an exception.
        unsafe {
            if self.obj.is_null() {
                let obj = ffi::PyUnicode_New(n, 127);
                if obj.is_null() {
                    return Err(PyErr::fetch(self.py));
                }
                self.obj = obj;
            } else if ffi::PyUnicode_Resize(&mut self.obj, n) != 0 {
                return Err(PyErr::fetch(self.py));
            }
        }
        Ok(())
    }

    fn release(&mut self) {
        if !self.obj.is_null() {
            #[allow(unsafe_code)]
            // SAFETY: the GIL is held; `obj` is the reference this owns.
            unsafe {
                ffi::Py_DECREF(self.obj);
            }
            self.obj = std::ptr::null_mut();
        }
        self.len = 0;
        self.cap = 0;
    }

    /// The whole text, `rest` after what was taken, as a `str`.
    pub(crate) fn finish(mut self, rest: &str) -> PyResult<Bound<'py, PyString>> {
        if self.is_empty() {
            return Ok(new_str(self.py, rest));
        }
        self.push(rest)?;
        if let Some(text) = self.utf8.take() {
            return Ok(PyString::new(self.py, &text));
        }
        self.resize(self.len)?; // (its length is the text's: the rest of the buffer given back)
        let obj = std::mem::replace(&mut self.obj, std::ptr::null_mut());
        #[allow(unsafe_code)]
        // SAFETY: `obj` is a live compact ASCII string of exactly `len`
        // characters, all written (ASCII), NUL-terminated by the resize;
        // its one reference moves into the `Bound`.
        unsafe {
            Ok(Bound::from_owned_ptr(self.py, obj).cast_into_unchecked())
        }
    }
}

impl Drop for StrBuf<'_> {
    fn drop(&mut self) {
        self.release();
    }
}
