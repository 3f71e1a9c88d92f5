//! `fill_elements`: the elements of an ijson event stream's streamed array,
//! built from the events in Rust (the engine seam's `fill_elements`, called
//! by `toonstream.streaming.Encoder.send_all`).
//!
//! The reference (`Encoder.send`, `_build`, `_attach` in
//! `toonstream/streaming.py`) takes one Python call per event; this takes
//! the events straight from the iterator, as the reference does, into the
//! same containers: `stack` (the open containers, innermost last) and
//! `keys` (each open container's pending key) are the encoder's own lists,
//! changed in place.  It is called with an element open (`stack` not
//! empty); once that element is complete, inside a streamed array
//! (`in_array`) it goes on with the next elements, as `send` takes them at
//! that level: a `start_map`/`start_array` opens one, a scalar event is one.
//! It returns `(status, elements, event, deepest)`, `elements` the list of
//! those completed, when:
//!
//! * `limit` elements are complete, or one outside an array: `DONE`;
//! * an event is not the usual `(prefix, event, value)` triple or
//!   `(event, value)` pair of an exact `str` event name (and, for
//!   `map_key`, an exact `str` key), or one the array's level leaves to the
//!   encoder (its end, anything unexpected), or one the reference's checks
//!   refuse (an unknown event, a `map_key` in an array, an end that is not
//!   the open container's, a value in an object without its key): `HANDED_BACK` with that
//!   `event`, taken by `send` after the elements (with its own errors);
//! * the events run out: `ENDED`.
//!
//! `deepest` is the longest the stack got inside an element here (0: no
//! inner container opened), which the encoder keeps as `_deepest`.  An
//! exception from the iterator passes through, as from the reference's
//! `for` loop (the elements completed before it are dropped with the
//! encoder, which cannot go on).
//!
//! ```python
//! stack, keys = [{}], [None]
//! events = [("", "map_key", "a"), ("", "integer", 1), ("", "end_map", None), ("", "integer", 2)]
//! _native.fill_elements(iter(events), stack, keys, True, 100)   # (2, [{'a': 1}, 2], None, 0)
//! ```

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyIterator, PyList, PyString, PyTuple};

/// Statuses of [`fill_elements`].
const DONE: u8 = 0;
const HANDED_BACK: u8 = 1;
const ENDED: u8 = 2;

/// Events between checks for Ctrl-C.
const SIGNAL_EVERY: u32 = 1 << 14;

/// What one event is.
enum Step {
    Key,
    Open {
        map: bool,
    },
    Close {
        map: bool,
    },
    /// One of the reference's `_SCALARS` (its value taken as it is).
    Scalar,
}

/// The step and value of an ordinary event, or None (handed back).
fn event<'py>(ev: &Bound<'py, PyAny>) -> PyResult<Option<(Step, Bound<'py, PyAny>)>> {
    let Ok(t) = ev.cast_exact::<PyTuple>() else {
        return Ok(None);
    };
    let (name, value) = match t.len() {
        3 => (t.get_item(1)?, t.get_item(2)?),
        2 => (t.get_item(0)?, t.get_item(1)?),
        _ => return Ok(None),
    };
    let Ok(name) = name.cast_exact::<PyString>() else {
        return Ok(None);
    };
    let Ok(name) = name.to_str() else {
        return Ok(None);
    };
    let step = match name {
        "map_key" if value.is_exact_instance_of::<PyString>() => Step::Key,
        "start_map" => Step::Open { map: true },
        "start_array" => Step::Open { map: false },
        "end_map" => Step::Close { map: true },
        "end_array" => Step::Close { map: false },
        "null" | "boolean" | "integer" | "double" | "number" | "string" => Step::Scalar,
        _ => return Ok(None),
    };
    Ok(Some((step, value)))
}

/// `value` into the innermost open container: appended to a list, else
/// set under the container's pending key, which is then spent (the
/// reference's `_attach`).  False (nothing done) when an object has no
/// pending key: the reference refuses the event.
fn attach<'py>(
    stack: &Bound<'py, PyList>,
    keys: &Bound<'py, PyList>,
    value: Bound<'py, PyAny>,
) -> PyResult<bool> {
    let top = stack.get_item(stack.len().saturating_sub(1))?;
    if let Ok(list) = top.cast_exact::<PyList>() {
        list.append(value)?;
        return Ok(true);
    }
    let at = keys.len().saturating_sub(1);
    let key = keys.get_item(at)?;
    if key.is_none() {
        return Ok(false);
    }
    match top.cast_exact::<PyDict>() {
        Ok(d) => d.set_item(key, value)?,
        Err(_) => top.set_item(key, value)?,
    }
    keys.set_item(at, top.py().None())?;
    Ok(true)
}

/// Whether the innermost open container is an object.
fn in_map(stack: &Bound<'_, PyList>) -> PyResult<bool> {
    Ok(stack
        .get_item(stack.len() - 1)?
        .is_exact_instance_of::<PyDict>())
}

fn container(py: Python<'_>, map: bool) -> Bound<'_, PyAny> {
    if map {
        PyDict::new(py).into_any()
    } else {
        PyList::empty(py).into_any()
    }
}

/// See the module docs.
#[pyfunction]
pub fn fill_elements<'py>(
    py: Python<'py>,
    events: &Bound<'py, PyIterator>,
    stack: &Bound<'py, PyList>,
    keys: &Bound<'py, PyList>,
    in_array: bool,
    limit: usize,
) -> PyResult<(u8, Bound<'py, PyList>, Py<PyAny>, usize)> {
    crate::guarded(&mut false, || {
        fill(py, events, stack, keys, in_array, limit)
    })
}

/// [`fill_elements`]'s work, a panic of which the guard turns into a `RuntimeError`.
fn fill<'py>(
    py: Python<'py>,
    events: &Bound<'py, PyIterator>,
    stack: &Bound<'py, PyList>,
    keys: &Bound<'py, PyList>,
    in_array: bool,
    limit: usize,
) -> PyResult<(u8, Bound<'py, PyList>, Py<PyAny>, usize)> {
    let done = PyList::empty(py);
    let mut deepest = 0;
    let mut count: u32 = 0;
    let back = |ev: Bound<'py, PyAny>, done, deepest| Ok((HANDED_BACK, done, ev.unbind(), deepest));
    for ev in events.clone() {
        let ev = ev?;
        count = count.wrapping_add(1);
        if count.is_multiple_of(SIGNAL_EVERY) {
            py.check_signals()?;
        }
        if keys.len() != stack.len() {
            // (not the encoder's state: it takes the event)
            return back(ev, done, deepest);
        }
        let Some((step, value)) = event(&ev)? else {
            return back(ev, done, deepest);
        };
        if stack.is_empty() {
            // At the array's level, between elements (as `send` there).
            match step {
                Step::Open { map } => {
                    stack.append(container(py, map))?;
                    keys.append(py.None())?;
                }
                Step::Scalar => {
                    done.append(value)?;
                    if done.len() >= limit {
                        return Ok((DONE, done, py.None(), deepest));
                    }
                }
                _ => return back(ev, done, deepest),
            }
            continue;
        }
        match step {
            Step::Key => {
                // (in an array, or after a key still without its value: the reference refuses it)
                if !in_map(stack)? || !keys.get_item(keys.len() - 1)?.is_none() {
                    return back(ev, done, deepest);
                }
                keys.set_item(keys.len() - 1, value)?
            }
            Step::Open { map } => {
                let new = container(py, map);
                if !attach(stack, keys, new.clone())? {
                    return back(ev, done, deepest);
                }
                stack.append(new)?;
                keys.append(py.None())?;
                deepest = deepest.max(stack.len());
            }
            Step::Close { map } => {
                if map != in_map(stack)? || !keys.get_item(keys.len() - 1)?.is_none() {
                    return back(ev, done, deepest);
                }
                let element = stack.get_item(stack.len() - 1)?;
                stack.del_item(stack.len() - 1)?;
                keys.del_item(keys.len() - 1)?;
                if stack.is_empty() {
                    done.append(element)?;
                    if !in_array || done.len() >= limit {
                        return Ok((DONE, done, py.None(), deepest));
                    }
                }
            }
            Step::Scalar => {
                if !attach(stack, keys, value)? {
                    return back(ev, done, deepest);
                }
            }
        }
    }
    Ok((ENDED, done, py.None(), deepest))
}
