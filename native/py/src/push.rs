//! The push driver of the decoders that return outputs per feed (`rows`,
//! `parse`, `items`/`kvitems`): feed chunks (bytes or str, split anywhere)
//! and get the outputs they completed; `close()` gives the rest.
//!
//! What comes before an error is fixed by the document, not by the
//! chunking, and is the Python engine's: the outputs of every line before
//! the failing one (a failing line's own outputs are dropped; at the end,
//! the last line's outputs are kept and the scope ends before a failing
//! count check are not).  Those come first; the error is raised by the next
//! call, and by every call after it.

use pyo3::exceptions::{PyBaseException, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::PyList;
use pyo3::{PyTraverseError, PyVisit};
use toonstream_native::{Decoder, Sink};

use crate::builder::BindError;
use crate::guarded;

/// A consumer's state: the sink it lends the core, and its outputs so far.
pub(crate) trait Collect {
    type Sink<'a, 'py>: Sink<Error = BindError>
    where
        Self: 'a;

    fn sink<'a, 'py>(&'a mut self, py: Python<'py>) -> Self::Sink<'a, 'py>;

    fn out(&mut self) -> &mut Vec<Py<PyAny>>;

    /// The outputs so far (shown to the garbage collector).
    fn outputs(&self) -> &[Py<PyAny>];

    /// The state a sink of it lends out.
    fn state<'s, 'a, 'py>(sink: &'s mut Self::Sink<'a, 'py>) -> &'s mut Self
    where
        Self: 'a;

    /// An error the consumer raises itself, once the line that caused it is
    /// done (so that a decode error on the same line wins): rows' refusal of
    /// a non-tabular value.  `line` is the number of the last line decoded,
    /// `text` its text ("" where it is not at hand).
    fn refusal(&mut self, _py: Python<'_>, _line: u64, _text: &str) -> Option<PyErr> {
        None
    }

    /// For the class's `__traverse__`: the Python objects the state holds,
    /// besides its outputs, that could lead back to the decoder (callables,
    /// the value being built; not its strings and constant tuples).
    fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError>;

    /// For the class's `__clear__`: drop those (no call follows).
    fn clear(&mut self);
}

/// The items of an `impl Collect` for a state whose sink is `$sink { py, s }`
/// and whose outputs are its `out` field.
macro_rules! collect_into_out {
    ($sink:ident) => {
        type Sink<'a, 'py> = $sink<'a, 'py>;

        fn sink<'a, 'py>(&'a mut self, py: Python<'py>) -> $sink<'a, 'py> {
            $sink { py, s: self }
        }

        fn out(&mut self) -> &mut Vec<Py<PyAny>> {
            &mut self.out
        }

        fn outputs(&self) -> &[Py<PyAny>] {
            &self.out
        }

        fn state<'s, 'a, 'py>(sink: &'s mut $sink<'a, 'py>) -> &'s mut Self
        where
            Self: 'a,
        {
            sink.s
        }
    };
}
pub(crate) use collect_into_out;

/// The `#[pymethods]` of a `#[pyclass]` newtype over a [`Push`]: the given
/// constructor, and `feed`/`close` returning lists of `$what`.
macro_rules! push_class {
    ($class:ident, $what:literal, $($new:tt)*) => {
        #[pymethods]
        impl $class {
            $($new)*

            #[doc = concat!("Add a chunk; returns the ", $what, " it completed.")]
            fn feed<'py>(
                &mut self,
                py: Python<'py>,
                chunk: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyList>> {
                self.0.feed(py, chunk)
            }

            #[doc = concat!("End of input: the rest of the ", $what, " (the count checks run); `[]` once done.")]
            fn close<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
                self.0.close(py)
            }

            fn __traverse__(
                &self,
                visit: pyo3::PyVisit<'_>,
            ) -> Result<(), pyo3::PyTraverseError> {
                self.0.traverse(&visit)
            }

            fn __clear__(&mut self) {
                self.0.clear();
            }
        }
    };
}
pub(crate) use push_class;

pub(crate) struct Push<C> {
    decoder: Decoder,
    pub(crate) state: C,
    /// a panic happened inside a call: nothing here can be trusted any more
    broken: bool,
    /// The error every later call raises, kept as the exception object (which
    /// `traverse` shows the garbage collector: once raised, its traceback
    /// holds the caller's frames, which may hold this decoder and its file).
    pending: Option<Py<PyBaseException>>,
    closed: bool,
}

impl<C: Collect> Push<C> {
    pub(crate) fn new(decoder: Decoder, state: C) -> Self {
        Push {
            decoder,
            state,
            broken: false,
            pending: None,
            closed: false,
        }
    }

    /// Add a chunk; returns the outputs it completed.
    pub(crate) fn feed<'py>(
        &mut self,
        py: Python<'py>,
        chunk: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.check(py)?;
        let data = crate::chunk(chunk)?;
        let (decoder, state) = (&mut self.decoder, &mut self.state);
        let r = guarded(&mut self.broken, || {
            let bytes = data.bytes()?;
            // The mark moves after each line the machine is done with, so a
            // failing line's outputs are exactly those after it; a refusal
            // is raised once its line is done, that line's outputs kept.
            let mut mark = state.out().len();
            let r = decoder.feed_lines(bytes, &mut state.sink(py), |line, text, sink| {
                let state = C::state(sink);
                mark = state.out().len();
                state
                    .refusal(py, line, text)
                    .map_or(Ok(()), |e| Err(BindError::Py(e)))
            });
            if let Err(e) = r {
                state.out().truncate(mark);
                return Err(e.into_py(py));
            }
            Ok(())
        });
        self.finish(py, r)
    }

    /// End of input: the rest of the outputs (the count checks run); `[]` once done.
    pub(crate) fn close<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.check(py)?;
        if self.closed {
            return Ok(PyList::empty(py));
        }
        let (decoder, state) = (&mut self.decoder, &mut self.state);
        let r = guarded(&mut self.broken, || {
            // (the last line, one without a terminator: a refusal of it quotes it)
            let mut last_line: Option<(u64, String)> = None;
            for last in [false, true] {
                let mark = state.out().len();
                let r = {
                    let mut sink = state.sink(py);
                    if last {
                        decoder.close(&mut sink)
                    } else {
                        decoder.end_input_lines(&mut sink, |no, text| {
                            last_line = Some((no, text.to_owned()));
                        })
                    }
                };
                if let Err(e) = r {
                    state.out().truncate(mark);
                    return Err(e.into_py(py));
                }
                let line = decoder.line();
                let text = match &last_line {
                    Some((no, text)) if *no == line => text.as_str(),
                    _ => "",
                };
                if let Some(e) = state.refusal(py, line, text) {
                    return Err(e);
                }
            }
            Ok(())
        });
        let out = self.finish(py, r)?;
        self.closed = true;
        Ok(out)
    }

    /// For the class's `__traverse__`: the kept error, the outputs not yet
    /// returned and what else the state holds.
    pub(crate) fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.pending)?;
        for o in self.state.outputs() {
            visit.call(o)?;
        }
        self.state.traverse(visit)
    }

    /// For the class's `__clear__` (the decoder is unreachable: no call follows).
    pub(crate) fn clear(&mut self) {
        self.pending = None;
        self.state.out().clear();
        self.state.clear();
    }

    fn check(&self, py: Python<'_>) -> PyResult<()> {
        if let Some(e) = &self.pending {
            return Err(PyErr::from_value(e.bind(py).clone().into_any()));
        }
        if self.broken {
            return Err(PyRuntimeError::new_err(
                "toonstream._native: this decoder failed with an internal error",
            ));
        }
        Ok(())
    }

    fn finish<'py>(&mut self, py: Python<'py>, r: PyResult<()>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::new(py, std::mem::take(self.state.out()))?;
        let Err(e) = r else { return Ok(out) };
        // every later call raises this error again
        self.pending = Some(e.value(py).clone().unbind());
        if out.is_empty() {
            Err(e)
        } else {
            Ok(out)
        }
    }
}
