//! `object_hook` / `object_pairs_hook` (as in `json.loads`) over a value the
//! [`crate::builder::Builder`] finished: every object, inner ones first, in
//! document order, as the Python engine's `finish_objects` calls them.
//!
//! ```python
//! _native.loads(b"a:\n  b: 1", object_pairs_hook=tuple)   # (('a', (('b', 1),)),)
//! ```
//!
//! The hooks run once the whole document has decoded (none on a document
//! that fails), which is why they are a pass over the finished value and not
//! calls from the sink.  The pass enters only dicts and lists, and so
//! assumes that every dict and list in the value is one the builder made:
//! true without `parse_float` (whose results could be anything), which the
//! binding therefore refuses alongside a hook.  And it assumes that an
//! object's pairs are its dict's items, every value reached: true in strict
//! mode (a repeated key is an error), where alone the binding takes hooks
//! (outside it, a repeated key's earlier value is an object the Python
//! engine finishes too, and its pairs hook sees both pairs).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::builder::Ticker;

/// What finishes an object: `object_hook(dict)`, or `object_pairs_hook(pairs)`.
pub(crate) enum Hook {
    Object(Py<PyAny>),
    Pairs(Py<PyAny>),
}

/// A container whose children are being finished.
enum Open<'py> {
    /// The dict, its pairs (taken when it was entered), the next pair's index.
    Dict(
        Bound<'py, PyDict>,
        Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
        usize,
    ),
    /// The list and its next element's index.
    List(Bound<'py, PyList>, usize),
}

fn enter<'py>(v: &Bound<'py, PyAny>) -> Option<Open<'py>> {
    if let Ok(d) = v.cast_exact::<PyDict>() {
        let pairs = d.iter().collect();
        return Some(Open::Dict(d.clone(), pairs, 0));
    }
    if let Ok(l) = v.cast_exact::<PyList>() {
        return Some(Open::List(l.clone(), 0));
    }
    None
}

/// `value` with every dict in it finished by `hook`, each after the dicts
/// inside it.  Iterative (depth costs heap, not stack); a hook's exception
/// ends the pass as it is.
pub(crate) fn finish_objects<'py>(
    py: Python<'py>,
    value: Bound<'py, PyAny>,
    hook: &Hook,
    ticker: &mut Ticker,
) -> PyResult<Bound<'py, PyAny>> {
    let mut stack: Vec<Open<'py>> = match enter(&value) {
        Some(open) => vec![open],
        None => return Ok(value),
    };
    while let Some(top) = stack.last_mut() {
        let child = match top {
            Open::Dict(_, pairs, i) => pairs.get(*i).map(|(_, v)| v.clone()),
            Open::List(l, i) => (*i < l.len()).then(|| l.get_item(*i)).transpose()?,
        };
        if let Some(child) = child {
            match top {
                Open::Dict(_, _, i) | Open::List(_, i) => *i += 1,
            }
            if let Some(open) = enter(&child) {
                stack.push(open);
            }
            continue;
        }
        let finished = match stack.pop() {
            Some(Open::Dict(d, pairs, _)) => {
                ticker.tick(py)?;
                match hook {
                    Hook::Object(f) => f.bind(py).call1((d,))?,
                    Hook::Pairs(f) => {
                        let pairs = pairs
                            .into_iter()
                            .map(|(k, v)| PyTuple::new(py, [k, v]))
                            .collect::<PyResult<Vec<_>>>()?;
                        f.bind(py).call1((PyList::new(py, pairs)?,))?
                    }
                }
            }
            Some(Open::List(l, _)) => l.into_any(),
            None => break,
        };
        // the finished child takes its place in its parent (the index was advanced past it)
        match stack.last_mut() {
            None => return Ok(finished),
            Some(Open::Dict(d, pairs, i)) => {
                let slot = &mut pairs[*i - 1];
                if matches!(hook, Hook::Object(_)) {
                    d.set_item(&slot.0, &finished)?;
                }
                slot.1 = finished;
            }
            Some(Open::List(l, i)) => l.set_item(*i - 1, finished)?,
        }
    }
    Ok(value)
}
