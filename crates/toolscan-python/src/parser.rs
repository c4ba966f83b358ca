//! `toolscan.Parser`: one answer, fed chunk by chunk.

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyString};
use toolscan_core::Parser as CoreParser;

use crate::config::Args;
use crate::errors::FinishedError;
use crate::events::Collect;

/// A streaming parser for one answer.
///
/// `feed(chunk)` takes the next piece of the model's output (`str`, or
/// `bytes`, in which a character may be split across chunks) and returns
/// the events it decides, in order; `finish()` returns the last ones,
/// ending with `Done`. Any chunking of the same output gives the same
/// events once consecutive deltas are merged.
#[pyclass(module = "toolscan", name = "Parser")]
pub struct Parser {
    pub(crate) inner: CoreParser,
    format: String,
    pub(crate) finished: bool,
}

#[pymethods]
impl Parser {
    #[new]
    #[pyo3(signature = (
        format = None, *, model = None, tools = None, reasoning = false,
        starts_in_reasoning = false, calls_in_reasoning = None, check_calls = None,
        complete_at_stop = false, max_calls = None, only_tool = None, normalize_tool_names = false,
        ids = None, seed = None,
        max_call_bytes = None, max_depth = None, max_holdback = None, max_name_bytes = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new<'py>(
        py: Python<'py>,
        format: Option<String>,
        model: Option<String>,
        tools: Option<Bound<'py, PyAny>>,
        reasoning: bool,
        starts_in_reasoning: bool,
        calls_in_reasoning: Option<String>,
        check_calls: Option<String>,
        complete_at_stop: bool,
        max_calls: Option<Bound<'py, PyAny>>,
        only_tool: Option<String>,
        normalize_tool_names: bool,
        ids: Option<String>,
        seed: Option<Bound<'py, PyAny>>,
        max_call_bytes: Option<Bound<'py, PyAny>>,
        max_depth: Option<Bound<'py, PyAny>>,
        max_holdback: Option<Bound<'py, PyAny>>,
        max_name_bytes: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Self> {
        let config = Args {
            format,
            model,
            tools,
            reasoning,
            starts_in_reasoning,
            calls_in_reasoning,
            check_calls,
            complete_at_stop,
            max_calls,
            only_tool,
            normalize_tool_names,
            ids,
            seed,
            max_call_bytes,
            max_depth,
            max_holdback,
            max_name_bytes,
        }
        .build(py)?;
        Ok(Parser {
            inner: CoreParser::new(config.grammar, config.options),
            format: config.name,
            finished: false,
        })
    }

    /// Feeds the next chunk (`str` or `bytes`); returns this chunk's events.
    ///
    /// Raises `FinishedError` after `finish()`.
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        chunk: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        if self.finished {
            return Err(FinishedError::new_err("feed() after finish()"));
        }
        let mut sink = Collect::new(py);
        if let Ok(s) = chunk.cast::<PyString>() {
            self.inner.feed_str_with(&s.to_cow()?, &mut sink);
        } else if let Ok(b) = chunk.cast::<PyBytes>() {
            self.inner.feed_with(b.as_bytes(), &mut sink);
        } else if let Ok(b) = chunk.cast::<PyByteArray>() {
            let bytes = b.to_vec();
            self.inner.feed_with(&bytes, &mut sink);
        } else {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "feed() takes str or bytes, not {}",
                chunk.get_type().name()?
            )));
        }
        sink.into_list()
    }

    /// Ends the answer; returns the last events, the last of which is
    /// `Done`. With `at_stop=True` (the server stopped at a stop sequence)
    /// and the `complete_at_stop` option, a call whose closing markup the
    /// stop sequence cut is completed. A second `finish()` returns `[]`.
    #[pyo3(signature = (*, at_stop = false))]
    fn finish<'py>(&mut self, py: Python<'py>, at_stop: bool) -> PyResult<Bound<'py, PyList>> {
        if self.finished {
            return Ok(PyList::empty(py));
        }
        self.finished = true;
        let mut sink = Collect::new(py);
        if at_stop {
            self.inner.finish_at_stop_with(&mut sink);
        } else {
            self.inner.finish_with(&mut sink);
        }
        sink.into_list()
    }

    /// The format this parser reads (its canonical name, or `"auto"`).
    #[getter]
    fn format(&self) -> &str {
        &self.format
    }

    /// How many bytes were fed so far.
    #[getter]
    fn offset(&self) -> u64 {
        self.inner.offset()
    }

    /// Whether `finish()` was called.
    #[getter]
    fn finished(&self) -> bool {
        self.finished
    }

    fn __repr__(&self) -> String {
        format!(
            "Parser(format={:?}, offset={}, finished={})",
            self.format,
            self.inner.offset(),
            if self.finished { "True" } else { "False" }
        )
    }
}
