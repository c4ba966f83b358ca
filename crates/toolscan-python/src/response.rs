//! `toolscan.parse`: a whole answer at once, as a `Response`.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use toolscan_core::{EventRef, Parser as CoreParser, Response as CoreResponse, Sink};

use crate::config::Args;
use crate::events::{diagnostic, json_loads, Diagnostic};

/// One completed call of a `Response`.
#[pyclass(module = "toolscan", name = "ToolCall", frozen)]
pub struct ToolCall {
    /// The call's index among the answer's calls (as in its events).
    #[pyo3(get)]
    index: usize,
    /// The call id (the format's, or one minted for it).
    #[pyo3(get)]
    id: Py<PyString>,
    /// The tool's name.
    #[pyo3(get)]
    name: Py<PyString>,
    /// The arguments: the JSON text of an object, as the model wrote it.
    #[pyo3(get)]
    arguments: Py<PyString>,
    /// The schema check's diagnostics about this call (`check_calls`).
    diagnostics: Vec<Py<Diagnostic>>,
}

impl ToolCall {
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(
            py,
            [
                self.index.into_pyobject(py)?.into_any(),
                self.id.bind(py).clone().into_any(),
                self.name.bind(py).clone().into_any(),
                self.arguments.bind(py).clone().into_any(),
                PyList::new(py, self.diagnostics.iter().map(|d| d.clone_ref(py)))?.into_any(),
            ],
        )
    }
}

#[pymethods]
impl ToolCall {
    /// The schema check's diagnostics about this call (`check_calls`).
    #[getter]
    fn diagnostics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.diagnostics.iter().map(|d| d.clone_ref(py)))
    }

    /// The arguments as a dict (`json.loads(arguments)`).
    fn parsed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_loads(py, self.arguments.bind(py))
    }

    /// `{"id", "name", "arguments"}` (arguments parsed), plus
    /// `"diagnostics"` when there are some: a call of `--output final`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("id", self.id.bind(py))?;
        d.set_item("name", self.name.bind(py))?;
        d.set_item("arguments", self.parsed(py)?)?;
        if !self.diagnostics.is_empty() {
            let list = PyList::empty(py);
            for x in &self.diagnostics {
                list.append(x.bind(py).call_method0("to_dict")?)?;
            }
            d.set_item("diagnostics", list)?;
        }
        Ok(d)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "ToolCall(index={}, id={}, name={}, arguments={})",
            self.index,
            self.id.bind(py).repr()?.to_cow()?,
            self.name.bind(py).repr()?.to_cow()?,
            self.arguments.bind(py).repr()?.to_cow()?,
        ))
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let Ok(other) = other.cast::<ToolCall>() else {
            return Ok(py.NotImplemented());
        };
        let equal = self.fields(py)?.eq(other.get().fields(py)?)?;
        Ok(pyo3::types::PyBool::new(py, equal)
            .to_owned()
            .into_any()
            .unbind())
    }

    #[classattr]
    fn __hash__(py: Python<'_>) -> Py<PyAny> {
        py.None()
    }
}

/// A whole answer: its text, reasoning, completed calls, diagnostics and
/// finish reason.
#[pyclass(module = "toolscan", name = "Response", frozen)]
pub struct Response {
    /// Every text delta, concatenated.
    #[pyo3(get)]
    text: Py<PyString>,
    /// Every reasoning delta, concatenated, or None when there was none
    /// (reasoning separation off, or no reasoning; Harmony's analysis
    /// channel is reasoning either way).
    #[pyo3(get)]
    reasoning: Option<Py<PyString>>,
    calls: Vec<Py<ToolCall>>,
    diagnostics: Vec<Py<Diagnostic>>,
    /// `"stop"`, `"tool_calls"` or `"length"`.
    #[pyo3(get)]
    finish_reason: Py<PyString>,
    /// The core's response, for `to_dict`.
    core: CoreResponse,
}

#[pymethods]
impl Response {
    /// The completed calls, in order.
    #[getter]
    fn tool_calls<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.calls.iter().map(|c| c.clone_ref(py)))
    }

    /// Every diagnostic, in order.
    #[getter]
    fn diagnostics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.diagnostics.iter().map(|d| d.clone_ref(py)))
    }

    /// The object `toolscan parse --output final` prints, as a dict.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let json = serde_json::to_string(&self.core)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        json_loads(py, PyString::new(py, &json).as_any())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let reasoning = match &self.reasoning {
            Some(r) => r.bind(py).repr()?.to_cow()?.into_owned(),
            None => "None".into(),
        };
        Ok(format!(
            "Response(text={}, reasoning={reasoning}, tool_calls={}, diagnostics={}, finish_reason={})",
            self.text.bind(py).repr()?.to_cow()?,
            self.tool_calls(py)?.repr()?.to_cow()?,
            self.diagnostics(py)?.repr()?.to_cow()?,
            self.finish_reason.bind(py).repr()?.to_cow()?,
        ))
    }
}

/// The core's response, and the index of each completed call.
#[derive(Default)]
struct Collect {
    response: CoreResponse,
    indices: Vec<usize>,
}

impl Sink for Collect {
    fn event(&mut self, event: EventRef<'_>) {
        if let EventRef::ToolCallEnd { index, .. } = event {
            self.indices.push(index);
        }
        self.response.event(event);
    }
}

/// Parses the input, whole, into a `Response`.
pub(crate) fn parse_whole(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    args: Args<'_>,
) -> PyResult<Response> {
    let config = args.build(py)?;
    let mut parser = CoreParser::new(config.grammar, config.options);
    let mut sink = Collect::default();
    if let Ok(s) = text.cast::<PyString>() {
        parser.feed_str_with(&s.to_cow()?, &mut sink);
    } else if let Ok(b) = text.cast::<PyBytes>() {
        parser.feed_with(b.as_bytes(), &mut sink);
    } else {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "parse() takes str or bytes, not {}",
            text.get_type().name()?
        )));
    }
    parser.finish_with(&mut sink);
    let Collect { response, indices } = sink;
    let diag = |d: &toolscan_core::Diagnostic| Py::new(py, diagnostic(py, d));
    let calls = response
        .tool_calls
        .iter()
        .zip(indices)
        .map(|(c, index)| {
            Py::new(
                py,
                ToolCall {
                    index,
                    id: PyString::new(py, &c.id).unbind(),
                    name: PyString::new(py, &c.name).unbind(),
                    arguments: PyString::new(py, c.arguments.as_str()).unbind(),
                    diagnostics: c.diagnostics.iter().map(diag).collect::<PyResult<_>>()?,
                },
            )
        })
        .collect::<PyResult<_>>()?;
    Ok(Response {
        text: PyString::new(py, &response.text).unbind(),
        reasoning: response
            .reasoning
            .as_deref()
            .map(|r| PyString::new(py, r).unbind()),
        calls,
        diagnostics: response
            .diagnostics
            .iter()
            .map(diag)
            .collect::<PyResult<_>>()?,
        finish_reason: PyString::intern(py, response.finish_reason.as_str()).unbind(),
        core: response,
    })
}
