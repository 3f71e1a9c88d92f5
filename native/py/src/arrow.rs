//! `arrow_rows`: the row lines of an Arrow record batch of a flat table
//! (the engine seam's `arrow_rows`, called by `toonstream._arrow_encode`).
//!
//! The batch is read through the Arrow C data interface: its
//! `__arrow_c_array__()` gives an `arrow_schema` and an `arrow_array`
//! PyCapsule (a struct array whose children are the columns), read in place
//! while the capsules are alive (their destructors release them; nothing is
//! moved out).  The column buffers become borrowed slices
//! ([`toonstream_native::arrow::Column`]) and the rows are written by the
//! core with the GIL released.  A column type or value the core does not
//! write is `NotImplemented`, decided before anything is returned: the
//! reference formats that batch.
//!
//! The other way, [`ArrowColumn`]: a column the frame reader typed
//! (`frames.rs`) handed to Polars through the same interface, as an object
//! with `__arrow_c_array__()` (the PyCapsule interface, so no pyarrow is
//! needed); its buffers are shared with each exported array and freed when
//! the last consumer releases it.
//!
//! The binding's `unsafe` for the C data interface is here, in [`ffi`]:
//! reading the C structs, making slices of their buffers, and the release
//! callbacks of the exported ones.

use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyTuple};
use toonstream_native::arrow::{
    fixed_zone, write_rows, Bits, Column, Decline, Offsets, Unit, Values,
};

use crate::guarded;
use toonstream_native::pool;

/// The Arrow C data interface's structs and safe views of them.
#[allow(unsafe_code)]
mod ffi {
    use super::*;

    /// `struct ArrowSchema` (the Arrow C data interface, stable ABI).
    #[repr(C)]
    pub struct Schema {
        format: *const c_char,
        name: *const c_char,
        metadata: *const c_char,
        flags: i64,
        n_children: i64,
        children: *mut *mut Schema,
        dictionary: *mut Schema,
        release: Option<unsafe extern "C" fn(*mut Schema)>,
        private_data: *mut c_void,
    }

    /// `struct ArrowArray`.
    #[repr(C)]
    pub struct Array {
        pub length: i64,
        pub null_count: i64,
        pub offset: i64,
        n_buffers: i64,
        n_children: i64,
        buffers: *mut *const c_void,
        children: *mut *mut Array,
        dictionary: *mut Array,
        release: Option<unsafe extern "C" fn(*mut Array)>,
        private_data: *mut c_void,
    }

    /// Types every bit pattern of which is a value (what a buffer may be read as).
    pub trait Plain: Copy {}
    impl Plain for u8 {}
    impl Plain for i8 {}
    impl Plain for i16 {}
    impl Plain for u16 {}
    impl Plain for i32 {}
    impl Plain for u32 {}
    impl Plain for i64 {}
    impl Plain for u64 {}
    impl Plain for f32 {}
    impl Plain for f64 {}
    impl Plain for [u8; 16] {}
    impl Plain for [u8; 32] {}

    /// Entry `i` of one of a struct's C arrays of `count` pointers
    /// (`children`, `buffers`).
    fn entry<T: Copy>(list: *mut T, count: i64, i: usize) -> Result<T, Decline> {
        if list.is_null() || i >= usize::try_from(count).unwrap_or(0) {
            return Err(Decline);
        }
        // SAFETY: a live struct's array `list` (non-null) holds `count`
        // entries, and `i` is below that count.
        Ok(unsafe { *list.add(i) })
    }

    /// The struct `p` points to (None if null): a child or dictionary, owned
    /// by `owner` (a live struct) and released with it, so borrowed for as long.
    fn owned<T, O>(p: *mut T, _owner: &O) -> Option<&T> {
        // SAFETY: `p` is null or points to a valid struct that lives as long
        // as its owner does (the C data interface's ownership rules).
        unsafe { p.as_ref() }
    }

    /// The struct a capsule of the Arrow PyCapsule interface holds (`name`
    /// checked), borrowed for as long as the capsule is.
    pub fn schema<'a>(capsule: &'a Bound<'_, PyCapsule>) -> PyResult<&'a Schema> {
        let p = capsule.pointer_checked(Some(c"arrow_schema"))?;
        // SAFETY: a capsule named "arrow_schema" holds a valid `ArrowSchema`
        // (the PyCapsule interface's contract), owned by the capsule until
        // its destructor runs, which cannot happen while `capsule` is
        // borrowed; nothing here writes to it.
        Ok(unsafe { p.cast::<Schema>().as_ref() })
    }

    pub fn array<'a>(capsule: &'a Bound<'_, PyCapsule>) -> PyResult<&'a Array> {
        let p = capsule.pointer_checked(Some(c"arrow_array"))?;
        // SAFETY: as for `schema`, with "arrow_array" and `ArrowArray`.
        Ok(unsafe { p.cast::<Array>().as_ref() })
    }

    // ---- export ----

    /// Holds an exported array's buffers (shared with its column) and
    /// their pointer list; the array's `private_data`.
    struct Private {
        _owner: Arc<Vec<super::Buffer>>,
        pointers: Vec<*const c_void>,
    }

    /// The release callback of an exported array: frees its private data
    /// (once: the consumer calls it once, on the struct it moved out, and
    /// marks the struct released).
    unsafe extern "C" fn release_array(array: *mut Array) {
        // SAFETY: the interface calls this with a pointer to a live array
        // this module made (or a move of it), not concurrently with any
        // other use of that array.
        let Some(a) = (unsafe { array.as_mut() }) else {
            return;
        };
        if !a.private_data.is_null() {
            // SAFETY: `private_data` is the `Box<Private>` made by
            // `ExportedArray::new`, freed only here (then nulled).
            drop(unsafe { Box::from_raw(a.private_data.cast::<Private>()) });
            a.private_data = std::ptr::null_mut();
        }
        a.release = None;
    }

    /// The release callback of an exported schema (its strings are static).
    unsafe extern "C" fn release_schema(schema: *mut Schema) {
        // SAFETY: as for `release_array`.
        if let Some(s) = unsafe { schema.as_mut() } {
            s.release = None;
        }
    }

    /// An exported `ArrowSchema`, as a capsule holds it: released when the
    /// capsule dies unless a consumer moved it out (and marked this one
    /// released, as the interface asks).
    #[repr(transparent)]
    pub struct ExportedSchema(Schema);

    /// An exported `ArrowArray`, likewise.
    #[repr(transparent)]
    pub struct ExportedArray(Array);

    // SAFETY: the structs' pointers are to static strings and to buffers
    // owned by their private data (an `Arc` of plain vectors, `Send` and
    // `Sync`), never to thread-bound data; the release callbacks may run on
    // any thread, as the interface allows.
    unsafe impl Send for ExportedSchema {}
    // SAFETY: as for `ExportedSchema`.
    unsafe impl Send for ExportedArray {}

    impl ExportedSchema {
        pub fn new(format: &'static CStr) -> Self {
            const NULLABLE: i64 = 2; // ARROW_FLAG_NULLABLE
            ExportedSchema(Schema {
                format: format.as_ptr(),
                name: c"".as_ptr(),
                metadata: std::ptr::null(),
                flags: NULLABLE,
                n_children: 0,
                children: std::ptr::null_mut(),
                dictionary: std::ptr::null_mut(),
                release: Some(release_schema),
                private_data: std::ptr::null_mut(),
            })
        }
    }

    impl ExportedArray {
        pub fn new(
            offset: usize,
            length: usize,
            null_count: usize,
            pointers: Vec<*const c_void>,
            owner: Arc<Vec<super::Buffer>>,
        ) -> Self {
            let mut private = Box::new(Private {
                _owner: owner,
                pointers,
            });
            let n_buffers = private.pointers.len() as i64;
            // (the vector's heap block does not move with the box)
            let buffers = private.pointers.as_mut_ptr();
            ExportedArray(Array {
                length: length as i64,
                null_count: null_count as i64,
                offset: offset as i64,
                n_buffers,
                n_children: 0,
                buffers,
                children: std::ptr::null_mut(),
                dictionary: std::ptr::null_mut(),
                release: Some(release_array),
                private_data: Box::into_raw(private).cast(),
            })
        }
    }

    impl Drop for ExportedSchema {
        fn drop(&mut self) {
            if let Some(release) = self.0.release {
                // SAFETY: an unreleased schema made by `new`, released once.
                unsafe { release(&mut self.0) }
            }
        }
    }

    impl Drop for ExportedArray {
        fn drop(&mut self) {
            if let Some(release) = self.0.release {
                // SAFETY: an unreleased array made by `new`, released once.
                unsafe { release(&mut self.0) }
            }
        }
    }

    impl Schema {
        pub fn released(&self) -> bool {
            self.release.is_none()
        }

        pub fn format(&self) -> Result<&str, Decline> {
            if self.format.is_null() {
                return Err(Decline);
            }
            // SAFETY: a live schema's `format` is a NUL-terminated string
            // (checked non-null) that lives as long as the schema.
            let s = unsafe { CStr::from_ptr(self.format) };
            s.to_str().map_err(|_| Decline)
        }

        pub fn n_children(&self) -> usize {
            usize::try_from(self.n_children).unwrap_or(0)
        }

        pub fn child(&self, i: usize) -> Result<&Schema, Decline> {
            owned(entry(self.children, self.n_children, i)?, self).ok_or(Decline)
        }

        pub fn dictionary(&self) -> Option<&Schema> {
            owned(self.dictionary, self)
        }
    }

    impl Array {
        pub fn released(&self) -> bool {
            self.release.is_none()
        }

        pub fn n_children(&self) -> usize {
            usize::try_from(self.n_children).unwrap_or(0)
        }

        pub fn n_buffers(&self) -> usize {
            usize::try_from(self.n_buffers).unwrap_or(0)
        }

        pub fn child(&self, i: usize) -> Result<&Array, Decline> {
            owned(entry(self.children, self.n_children, i)?, self).ok_or(Decline)
        }

        pub fn dictionary(&self) -> Option<&Array> {
            owned(self.dictionary, self)
        }

        /// Buffer `i`'s pointer (null for an absent validity bitmap).
        pub fn buffer_ptr(&self, i: usize) -> Result<*const c_void, Decline> {
            entry(self.buffers, self.n_buffers, i)
        }

        /// Buffer `i` as `len` values of `T` (an empty slice for a null
        /// buffer of no values; a null or misaligned buffer otherwise declines).
        pub fn buffer<T: Plain>(&self, i: usize, len: usize) -> Result<&[T], Decline> {
            let p = self.buffer_ptr(i)?.cast::<T>();
            if len == 0 {
                return Ok(&[]);
            }
            if p.is_null()
                || !p.is_aligned()
                || len
                    .checked_mul(size_of::<T>())
                    .is_none_or(|b| b > isize::MAX as usize)
            {
                return Err(Decline);
            }
            // SAFETY: a live array's buffer holds at least the bytes its
            // type and `offset + length` imply, which is what the callers
            // ask for (`len` computed from them); `T: Plain` takes any bit
            // pattern; the pointer is non-null and aligned; the buffer is
            // immutable and outlives the borrow of the array.
            Ok(unsafe { std::slice::from_raw_parts(p, len) })
        }
    }
}

use ffi::Array;
use ffi::Schema;

/// One buffer of an exported column: absent (a validity bitmap without
/// nulls), bytes, or i32 offsets.  Bytes are handed out where they are if
/// 16-aligned (the interface asks for 8; Rust's allocator gives 16 for
/// buffers of 16 bytes and more on the platforms built for), else copied
/// into `u128`s once; an empty buffer still gets a valid aligned pointer.
pub(crate) enum Buffer {
    Absent,
    Bytes(Vec<u8>),
    Wide(Vec<u128>),
    Offsets(Vec<i32>),
    Int64(Vec<i64>),
    Float64(Vec<f64>),
    Int128(Vec<i128>),
}

/// A released column's buffers go back to the core's pool for the next
/// runs (memory already mapped: see `toonstream_native::pool`).
impl Drop for Buffer {
    fn drop(&mut self) {
        match self {
            Buffer::Absent | Buffer::Offsets(_) => {}
            Buffer::Bytes(v) => pool::give(std::mem::take(v)),
            Buffer::Wide(v) => pool::give(std::mem::take(v)),
            Buffer::Int64(v) => pool::give(std::mem::take(v)),
            Buffer::Float64(v) => pool::give(std::mem::take(v)),
            Buffer::Int128(v) => pool::give(std::mem::take(v)),
        }
    }
}

impl Buffer {
    pub(crate) fn bytes(bytes: Vec<u8>) -> Buffer {
        if !bytes.is_empty() && bytes.as_ptr().align_offset(16) == 0 {
            return Buffer::Bytes(bytes);
        }
        let mut wide = vec![0u128; bytes.len().div_ceil(16).max(1)];
        for (slot, chunk) in wide.iter_mut().zip(bytes.chunks(16)) {
            let mut b = [0u8; 16];
            b[..chunk.len()].copy_from_slice(chunk);
            *slot = u128::from_ne_bytes(b);
        }
        Buffer::Wide(wide)
    }

    pub(crate) fn validity(bits: Option<Vec<u8>>) -> Buffer {
        bits.map_or(Buffer::Absent, Buffer::bytes)
    }

    fn pointer(&self) -> *const c_void {
        match self {
            Buffer::Absent => std::ptr::null(),
            Buffer::Bytes(v) => v.as_ptr().cast(),
            Buffer::Wide(v) => v.as_ptr().cast(),
            Buffer::Offsets(v) => v.as_ptr().cast(),
            Buffer::Int64(v) => v.as_ptr().cast(),
            Buffer::Float64(v) => v.as_ptr().cast(),
            Buffer::Int128(v) => v.as_ptr().cast(),
        }
    }
}

/// A typed column of the frame reader, exported through the Arrow
/// PyCapsule interface: `pl.Series(column)` takes it without a copy.
///
/// ```python
/// c = _native.table_columns(b"  1,a\n  2,b\n", 0, 12, 2, ",", 2, 10)
/// pl.Series(c.arrow(0, 0, 2, "int64")).to_list()     # [1, 2]
/// ```
#[pyclass(module = "toonstream._native", frozen)]
pub(crate) struct ArrowColumn {
    /// The Arrow format string ("l", "g", "d:38,0", "b", "u", "vu").
    format: &'static CStr,
    /// The column is rows `offset..offset + len` of the buffers.
    offset: usize,
    len: usize,
    nulls: usize,
    /// In the interface's order (validity first; a view column's variadic
    /// buffers and their sizes last).
    buffers: Arc<Vec<Buffer>>,
}

impl ArrowColumn {
    pub(crate) fn new(
        format: &'static CStr,
        len: usize,
        nulls: usize,
        buffers: Vec<Buffer>,
    ) -> Self {
        ArrowColumn::slice(format, 0, len, nulls, Arc::new(buffers))
    }

    /// Rows `offset..offset + len` of buffers shared with other columns
    /// (`nulls` of them null).
    pub(crate) fn slice(
        format: &'static CStr,
        offset: usize,
        len: usize,
        nulls: usize,
        buffers: Arc<Vec<Buffer>>,
    ) -> Self {
        ArrowColumn {
            format,
            offset,
            len,
            nulls,
            buffers,
        }
    }
}

#[pymethods]
impl ArrowColumn {
    /// The `(arrow_schema, arrow_array)` capsules of the column; a
    /// `requested_schema` is a hint the interface lets a producer ignore
    /// (the column has one type).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema;
        let pointers = self.buffers.iter().map(Buffer::pointer).collect();
        let schema = ffi::ExportedSchema::new(self.format);
        let array = ffi::ExportedArray::new(
            self.offset,
            self.len,
            self.nulls,
            pointers,
            self.buffers.clone(),
        );
        Ok((
            PyCapsule::new_with_value(py, schema, c"arrow_schema")?,
            PyCapsule::new_with_value(py, array, c"arrow_array")?,
        ))
    }

    fn __len__(&self) -> usize {
        self.len
    }

    #[getter]
    fn null_count(&self) -> usize {
        self.nulls
    }
}

fn size(v: i64) -> Result<usize, Decline> {
    usize::try_from(v).map_err(|_| Decline)
}

/// Rows `skip..skip + n` of one column (the parent's offset `skip`).
fn column<'a>(s: &'a Schema, a: &'a Array, skip: usize, n: usize) -> Result<Column<'a>, Decline> {
    if s.released() || a.released() {
        return Err(Decline);
    }
    let length = size(a.length)?;
    if skip.checked_add(n).is_none_or(|e| e > length) {
        return Err(Decline);
    }
    let offset = size(a.offset)?;
    let end = offset.checked_add(length).ok_or(Decline)?; // the buffers' extent
    let offset = offset + skip;
    let format = s.format()?;
    if format == "n" {
        return Ok(Column::new(Values::Null, None, offset));
    }
    let validity = if a.buffer_ptr(0)?.is_null() || a.null_count == 0 {
        None
    } else {
        Some(Bits(a.buffer::<u8>(0, end.div_ceil(8))?))
    };
    if let (Some(ds), Some(da)) = (s.dictionary(), a.dictionary()) {
        let values = column(ds, da, 0, size(da.length)?)?;
        let indices = Column::new(primitive(format, a, end)?, None, offset);
        let dictionary = Values::Dictionary {
            indices: Box::new(indices),
            values: Box::new(values),
        };
        return Ok(Column::new(dictionary, validity, offset));
    }
    let values = match format {
        "b" => Values::Bool(Bits(a.buffer::<u8>(1, end.div_ceil(8))?)),
        "u" => {
            let offsets = a.buffer::<i32>(1, end + 1)?;
            let used = offsets.last().map_or(Ok(0), |&z| size(i64::from(z)))?;
            Values::utf8(Offsets::Small(offsets), a.buffer::<u8>(2, used)?, offset, n)?
        }
        "U" => {
            let offsets = a.buffer::<i64>(1, end + 1)?;
            let used = offsets.last().map_or(Ok(0), |&z| size(z))?;
            Values::utf8(Offsets::Large(offsets), a.buffer::<u8>(2, used)?, offset, n)?
        }
        "vu" => {
            let nb = a.n_buffers();
            let variadic = nb.checked_sub(3).ok_or(Decline)?;
            let sizes = a.buffer::<i64>(nb - 1, variadic)?;
            let mut buffers = Vec::with_capacity(variadic);
            for (k, &len) in sizes.iter().enumerate() {
                buffers.push(a.buffer::<u8>(2 + k, size(len)?)?);
            }
            Values::Utf8View {
                views: a.buffer::<[u8; 16]>(1, end)?,
                buffers,
            }
        }
        "tdD" => Values::Date32(a.buffer::<i32>(1, end)?),
        _ if format.starts_with("ts") && format.get(3..4) == Some(":") => {
            let unit = match format.as_bytes()[2] {
                b's' => Unit::Second,
                b'm' => Unit::Milli,
                b'u' => Unit::Micro,
                b'n' => Unit::Nano,
                _ => return Err(Decline),
            };
            let tz = &format[4..];
            let zone = if tz.is_empty() {
                None
            } else {
                Some(fixed_zone(tz).ok_or(Decline)?)
            };
            Values::Timestamp {
                values: a.buffer::<i64>(1, end)?,
                unit,
                zone,
            }
        }
        "tts" => Values::Time32(a.buffer::<i32>(1, end)?, Unit::Second),
        "ttm" => Values::Time32(a.buffer::<i32>(1, end)?, Unit::Milli),
        "ttu" => Values::Time64(a.buffer::<i64>(1, end)?, Unit::Micro),
        "ttn" => Values::Time64(a.buffer::<i64>(1, end)?, Unit::Nano),
        _ if format.starts_with("d:") => match decimal_scale(&format[2..]).ok_or(Decline)? {
            (scale, 128) => Values::Decimal128 {
                values: a.buffer::<[u8; 16]>(1, end)?,
                scale,
            },
            (scale, _) => Values::Decimal256 {
                values: a.buffer::<[u8; 32]>(1, end)?,
                scale,
            },
        },
        _ => primitive(format, a, end)?,
    };
    Ok(Column::new(values, validity, offset))
}

/// The scale and bit width of a decimal format's
/// `precision,scale[,bitwidth]`: decimal128 and decimal256 with a scale of
/// -38 to their precision's most (38, 76); none for another bit width or
/// scale (`to_pylist` has no Decimal for some values of a scale below -38:
/// the reference reports them).
fn decimal_scale(spec: &str) -> Option<(i32, u32)> {
    let mut parts = spec.split(',');
    let (_precision, scale) = (parts.next()?, parts.next()?.parse().ok()?);
    let bits = match parts.next() {
        None | Some("128") => 128,
        Some("256") => 256,
        _ => return None,
    };
    let most = if bits == 128 { 38 } else { 76 };
    ((-38..=most).contains(&scale) && parts.next().is_none()).then_some((scale, bits))
}

/// A numeric column's values (also dictionary indices).
fn primitive<'a>(format: &str, a: &'a Array, end: usize) -> Result<Values<'a>, Decline> {
    Ok(match format {
        "c" => Values::I8(a.buffer(1, end)?),
        "s" => Values::I16(a.buffer(1, end)?),
        "i" => Values::I32(a.buffer(1, end)?),
        "l" => Values::I64(a.buffer(1, end)?),
        "C" => Values::U8(a.buffer(1, end)?),
        "S" => Values::U16(a.buffer(1, end)?),
        "I" => Values::U32(a.buffer(1, end)?),
        "L" => Values::U64(a.buffer(1, end)?),
        "e" => Values::F16(a.buffer(1, end)?),
        "f" => Values::F32(a.buffer(1, end)?),
        "g" => Values::F64(a.buffer(1, end)?),
        _ => return Err(Decline),
    })
}

/// The columns of a record batch's struct array, and its row count.
fn columns<'a>(s: &'a Schema, a: &'a Array) -> Result<(Vec<Column<'a>>, usize), Decline> {
    if s.released() || a.released() || s.format()? != "+s" || a.null_count != 0 {
        return Err(Decline);
    }
    let (n, skip) = (size(a.length)?, size(a.offset)?);
    let width = s.n_children();
    if width == 0 || a.n_children() != width {
        return Err(Decline);
    }
    let mut cols = Vec::with_capacity(width);
    for i in 0..width {
        cols.push(column(s.child(i)?, a.child(i)?, skip, n)?);
    }
    Ok((cols, n))
}

/// The row lines (`"\n" + indent + cells` each, UTF-8 bytes) of a record
/// batch of a flat table, as `encode_arrow`'s reference writes them, or
/// `NotImplemented` for a batch with a column type or value it does not
/// write (nothing done: the reference formats that batch).
///
/// ```python
/// >>> _native.arrow_rows(pa.record_batch({"a": [1, None]}), delimiter=",", indent_size=2)
/// b'\n  1\n  null'
/// ```
#[pyfunction]
#[pyo3(signature = (batch, *, delimiter, indent_size))]
pub fn arrow_rows<'py>(
    py: Python<'py>,
    batch: &Bound<'py, PyAny>,
    delimiter: &str,
    indent_size: usize,
) -> PyResult<Py<PyAny>> {
    let delim = match delimiter.as_bytes() {
        [d @ (b',' | b'\t' | b'|')] => *d,
        _ => return Ok(py.NotImplemented()),
    };
    let pair = batch.call_method0("__arrow_c_array__")?;
    let pair = pair.cast::<PyTuple>()?;
    let schema_capsule = pair.get_item(0)?.cast_into::<PyCapsule>()?;
    let array_capsule = pair.get_item(1)?.cast_into::<PyCapsule>()?;
    guarded(&mut false, || {
        let (s, a) = (ffi::schema(&schema_capsule)?, ffi::array(&array_capsule)?);
        let Ok((cols, n)) = columns(s, a) else {
            return Ok(py.NotImplemented());
        };
        // (the capsules stay alive, held here, while the rows are written)
        let text = py.detach(|| {
            let mut out = String::new();
            write_rows(&cols, n, delim, indent_size, &mut out).map(|()| out)
        });
        Ok(match text {
            Ok(t) => PyBytes::new(py, t.as_bytes()).into_any().unbind(),
            Err(Decline) => py.NotImplemented(),
        })
    })
}
