//! The encoder's walk over Python objects ([`PyModel`], a [`Model`]): the
//! exact built-in types by type pointer, dict items as borrowed references
//! ([`crate::pyobj`]), each primitive written as the reference writes it.
//! `dumps`, `list_items` and `table_rows` walk with it.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use toonstream_native::format::{decimal_text, quote, unquoted_key, write_float, write_str_cell};

use crate::encode::{Kind, Model, Stop, R};
use crate::pyobj::{dict_next, int_value, str_text, DictItems};
use crate::pystr::StrBuf;

/// The decoders' default `max_number_length`: the reference refuses a longer
/// number token (`_numbers._checked_length`), so such an int is left to it.
const MAX_NUMBER_LENGTH: usize = 10_000;
/// Slots of the key cache.
const KEY_CACHE: usize = 64;

/// The exact built-in types, by type object (compared by pointer: a
/// subclass has another type object, so it is `Other`).
pub(crate) struct Types {
    str_: *mut ffi::PyTypeObject,
    int: *mut ffi::PyTypeObject,
    float: *mut ffi::PyTypeObject,
    bool_: *mut ffi::PyTypeObject,
    none: *mut ffi::PyTypeObject,
    dict: *mut ffi::PyTypeObject,
    list: *mut ffi::PyTypeObject,
    tuple: *mut ffi::PyTypeObject,
    /// `decimal.Decimal`, `datetime.datetime`/`date`/`time` and `uuid.UUID`
    /// (null where a module does not import: no value has that type)
    decimal: *mut ffi::PyTypeObject,
    datetime: [*mut ffi::PyTypeObject; 3],
    uuid: *mut ffi::PyTypeObject,
}

impl Types {
    pub(crate) fn new(py: Python<'_>) -> Self {
        Types {
            str_: py.get_type::<PyString>().as_type_ptr(),
            int: py.get_type::<PyInt>().as_type_ptr(),
            float: py.get_type::<PyFloat>().as_type_ptr(),
            bool_: py.get_type::<PyBool>().as_type_ptr(),
            none: py.None().bind(py).get_type_ptr(),
            dict: py.get_type::<PyDict>().as_type_ptr(),
            list: py.get_type::<PyList>().as_type_ptr(),
            tuple: py.get_type::<PyTuple>().as_type_ptr(),
            decimal: type_ptr(py, "decimal", "Decimal"),
            datetime: [
                type_ptr(py, "datetime", "datetime"),
                type_ptr(py, "datetime", "date"),
                type_ptr(py, "datetime", "time"),
            ],
            uuid: type_ptr(py, "uuid", "UUID"),
        }
    }

    #[inline]
    pub(crate) fn kind(&self, v: &Bound<'_, PyAny>) -> Kind {
        let t = v.get_type_ptr();
        if t == self.str_ {
            Kind::Str
        } else if t == self.int {
            Kind::Int
        } else if t == self.float {
            Kind::Float
        } else if t == self.dict {
            Kind::Dict
        } else if t == self.bool_ {
            Kind::Bool
        } else if t == self.none {
            Kind::Null
        } else if t == self.list {
            Kind::List
        } else if t == self.tuple {
            Kind::Tuple
        } else if t == self.decimal {
            Kind::Decimal
        } else if self.datetime.contains(&t) {
            Kind::Iso
        } else if t == self.uuid {
            Kind::Uuid
        } else {
            Kind::Other
        }
    }
}

/// The type object `module.name`, or null if it does not import (the
/// module keeps it alive: only its address is compared).
fn type_ptr(py: Python<'_>, module: &str, name: &str) -> *mut ffi::PyTypeObject {
    py.import(module)
        .and_then(|m| m.getattr(name))
        .map_or(std::ptr::null_mut(), |t| t.as_ptr().cast())
}

/// A list or a tuple: the reference writes a tuple as the list of its items.
#[derive(Clone)]
pub(crate) enum Seq<'py> {
    List(Bound<'py, PyList>),
    Tuple(Bound<'py, PyTuple>),
}

/// Python objects as the encoder's [`Model`].
pub(crate) struct PyModel<'py> {
    py: Python<'py>,
    types: Types,
    /// Keys seen, by address, with their `unquoted_key` verdict.
    keys: Vec<Option<(Bound<'py, PyString>, bool)>>,
    /// The `str` the walk's text goes into (`take_text`, `finish_str`).
    text: StrBuf<'py>,
}

impl<'py> PyModel<'py> {
    pub(crate) fn new(py: Python<'py>) -> Self {
        PyModel {
            py,
            types: Types::new(py),
            keys: vec![None; KEY_CACHE],
            text: StrBuf::new(py),
        }
    }

    /// The walk's whole text as a `str`: what was taken, then `rest`.
    pub(crate) fn finish_str(&mut self, rest: &str) -> PyResult<Bound<'py, PyString>> {
        std::mem::replace(&mut self.text, StrBuf::new(self.py)).finish(rest)
    }

    #[inline]
    fn int(out: &mut String, v: &Bound<'py, PyAny>) -> R<()> {
        if let Some(i) = v.cast::<PyInt>().ok().and_then(int_value) {
            let mut b = itoa::Buffer::new();
            out.push_str(b.format(i));
            return Ok(());
        }
        Self::big_int(out, v)
    }

    #[inline(never)]
    fn big_int(out: &mut String, v: &Bound<'py, PyAny>) -> R<()> {
        // Beyond 64 bits: int's own decimal conversion (C code).  It fails
        // past the interpreter's digit limit, and a token longer than the
        // decoders' max_number_length is refused by the reference: both are
        // the reference's to handle.
        let text = v.str()?;
        let text = text.to_str()?;
        if text.len() > MAX_NUMBER_LENGTH {
            return Err(Stop::Decline);
        }
        out.push_str(text);
        Ok(())
    }

    /// `prim` of the host types the reference maps.
    #[inline(never)]
    fn prim_other(out: &mut String, v: &Bound<'py, PyAny>, kind: Kind, delim: u8) -> R<()> {
        match kind {
            Kind::Decimal => Self::decimal(out, v)?,
            // (`_normalize._host`: the exact types' own methods, C code for
            // datetime; the text is then an ordinary string cell)
            Kind::Iso => {
                let text = v.call_method0("isoformat")?;
                let text = text.cast::<PyString>().map_err(|_| Stop::Decline)?;
                write_str_cell(out, text.to_str()?, delim);
            }
            Kind::Uuid => {
                let text = v.str()?;
                write_str_cell(out, text.to_str()?, delim);
            }
            _ => return Err(Stop::Decline),
        }
        Ok(())
    }

    /// `_numbers.encode_decimal`: from the Decimal's own `str` (C code,
    /// exact: its sign, digits and exponent), `null` for NaN and the
    /// infinities; a number it refuses (too long, an exponent of too many
    /// digits) is the reference's to report.
    fn decimal(out: &mut String, v: &Bound<'py, PyAny>) -> R<()> {
        let text = v.str()?;
        let text = text.to_str()?;
        let magnitude = text.trim_start_matches('-');
        if magnitude.starts_with("NaN") || magnitude.starts_with("sNaN") || magnitude == "Infinity"
        {
            out.push_str("null");
            return Ok(());
        }
        let canonical = decimal_text(text).map_err(|_| Stop::Decline)?;
        out.push_str(&canonical);
        Ok(())
    }
}

impl<'py> Model for PyModel<'py> {
    type V = Bound<'py, PyAny>;
    type Item<'a>
        = Borrowed<'a, 'py, PyAny>
    where
        Self: 'a;
    type K = Bound<'py, PyString>;
    type D = Bound<'py, PyDict>;
    type S = Seq<'py>;

    #[inline(always)]
    fn kind(&self, v: &Self::V) -> Kind {
        self.types.kind(v)
    }

    fn take_text(&mut self, text: &str) -> R<bool> {
        self.text.push(text).map_err(Stop::Err)?;
        Ok(true)
    }

    fn signals(&self) -> R<()> {
        self.py.check_signals().map_err(Stop::Err)
    }

    /// The common kinds inline (a table's cells come here), the others out
    /// of line.
    #[inline(always)]
    fn prim(&mut self, out: &mut String, v: &Self::V, kind: Kind, delim: u8) -> R<()> {
        match kind {
            Kind::Str => {
                let s = v.cast::<PyString>().map_err(|_| Stop::Decline)?;
                // a lone surrogate is not UTF-8: the reference reports it
                write_str_cell(out, str_text(s)?, delim);
            }
            Kind::Int => Self::int(out, v)?,
            Kind::Float => {
                let x = v.cast::<PyFloat>().map_err(|_| Stop::Decline)?.value();
                write_float(out, x);
            }
            Kind::Bool => {
                let b = v.cast::<PyBool>().map_err(|_| Stop::Decline)?.is_true();
                out.push_str(if b { "true" } else { "false" });
            }
            Kind::Null => out.push_str("null"),
            _ => Self::prim_other(out, v, kind, delim)?,
        }
        Ok(())
    }

    fn key(&self, k: &Self::V) -> R<Self::K> {
        if self.types.kind(k) != Kind::Str {
            return Err(Stop::Decline); // the reference's key rules
        }
        k.cast::<PyString>().cloned().map_err(|_| Stop::Decline)
    }

    #[inline]
    fn key_value<'k>(&self, k: &'k Self::K) -> &'k Self::V {
        k.as_any()
    }

    fn write_key(&mut self, out: &mut String, k: &Self::V) -> R<()> {
        if self.types.kind(k) != Kind::Str {
            return Err(Stop::Decline);
        }
        let k = k.cast::<PyString>().map_err(|_| Stop::Decline)?;
        let s = str_text(k)?;
        // The same key objects come back in every record: their verdict is
        // kept by object (the entry holds a reference, so its address is
        // not reused while the cache has it).
        let slot = (k.as_ptr() as usize >> 4) % KEY_CACHE;
        let unquoted = match &self.keys[slot] {
            Some((cached, verdict)) if cached.is(k) => *verdict,
            _ => {
                let verdict = unquoted_key(s);
                self.keys[slot] = Some((k.clone(), verdict));
                verdict
            }
        };
        if unquoted {
            out.push_str(s);
        } else {
            quote(out, s);
        }
        Ok(())
    }

    fn key_text<'s>(&'s self, k: &'s Self::K) -> R<&'s str> {
        Ok(k.to_str()?)
    }

    #[inline(always)]
    fn same_key(&self, k: &Self::V, name: &Self::K) -> bool {
        k.is(name)
    }

    #[inline]
    fn dict(&self, v: &Self::V) -> R<Self::D> {
        Ok(v.cast::<PyDict>().map_err(|_| Stop::Decline)?.clone())
    }

    #[inline]
    fn dict_len(&self, d: &Self::D) -> usize {
        d.len()
    }

    #[inline(always)]
    fn dict_next<'a>(
        &self,
        d: &'a Self::D,
        pos: &mut isize,
    ) -> Option<(Self::Item<'a>, Self::Item<'a>)> {
        dict_next(d, pos)
    }

    #[inline]
    fn get(&self, d: &Self::D, k: &Self::K) -> R<Option<Self::V>> {
        Ok(d.get_item(k)?)
    }

    /// Every key of `d` is an exact str, so a lookup in it compares strs
    /// only: a key of another type could run its own `__eq__` (Python code,
    /// which this walk never calls).  Such an object is the reference's.
    fn plain_keys(&self, d: &Self::D) -> R<()> {
        for (k, _) in DictItems::new(d) {
            if self.types.kind(&k) != Kind::Str {
                return Err(Stop::Decline);
            }
        }
        Ok(())
    }

    #[inline]
    fn dict_id(&self, d: &Self::D) -> usize {
        d.as_ptr() as usize
    }

    fn seq(&self, v: &Self::V, kind: Kind) -> R<Self::S> {
        Ok(match kind {
            Kind::List => Seq::List(v.cast::<PyList>().map_err(|_| Stop::Decline)?.clone()),
            Kind::Tuple => Seq::Tuple(v.cast::<PyTuple>().map_err(|_| Stop::Decline)?.clone()),
            _ => return Err(Stop::Decline),
        })
    }

    #[inline]
    fn seq_len(&self, s: &Self::S) -> usize {
        match s {
            Seq::List(l) => l.len(),
            Seq::Tuple(t) => t.len(),
        }
    }

    #[inline]
    fn seq_get(&self, s: &Self::S, i: usize) -> R<Self::V> {
        Ok(match s {
            Seq::List(l) => l.get_item(i)?,
            Seq::Tuple(t) => t.get_item(i)?,
        })
    }

    #[inline]
    fn seq_id(&self, s: &Self::S) -> usize {
        match s {
            Seq::List(l) => l.as_ptr() as usize,
            Seq::Tuple(t) => t.as_ptr() as usize,
        }
    }
}
