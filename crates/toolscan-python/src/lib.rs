//! Python bindings of toolscan: the `toolscan._native` extension module of
//! the `toolscan` wheel (built with maturin; the Python package around it
//! is in `python/toolscan/`).
//!
//! An edge crate over `toolscan-core`, like the command line: it reads
//! Python's arguments into the core's `Options`, feeds the core through its
//! sink API and makes each `EventRef` a small frozen Python object, its
//! text a `str` made once from the `&str` the core hands over. It adds no
//! parsing of its own.

use pyo3::prelude::*;
use pyo3::types::PyString;
use toolscan_core::Registry;

mod config;
mod errors;
mod events;
mod openai;
mod parser;
mod response;
mod vllm;
mod vllm_stream;

use config::{builtin_for_model, Args};

/// A built-in format: its name, the models that write it, and what it is.
#[pyclass(module = "toolscan", name = "FormatInfo", frozen)]
pub struct FormatInfo {
    /// The format's name (what `Parser(format=...)` takes).
    #[pyo3(get)]
    name: Py<PyString>,
    /// The models that write it.
    #[pyo3(get)]
    models: Py<PyString>,
    /// One line about the format.
    #[pyo3(get)]
    description: Py<PyString>,
}

#[pymethods]
impl FormatInfo {
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str, &'static str) {
        ("name", "models", "description")
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "FormatInfo(name={}, models={}, description={})",
            self.name.bind(py).repr()?.to_cow()?,
            self.models.bind(py).repr()?.to_cow()?,
            self.description.bind(py).repr()?.to_cow()?,
        ))
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let Ok(other) = other.cast::<FormatInfo>() else {
            return Ok(py.NotImplemented());
        };
        let o = other.get();
        let same = |a: &Py<PyString>, b: &Py<PyString>| a.bind(py).as_any().eq(b.bind(py));
        let equal = same(&self.name, &o.name)?
            && same(&self.models, &o.models)?
            && same(&self.description, &o.description)?;
        Ok(pyo3::types::PyBool::new(py, equal)
            .to_owned()
            .into_any()
            .unbind())
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        self.name.bind(py).hash()
    }
}

/// The built-in formats, in `auto`'s order of precedence.
#[pyfunction]
fn formats(py: Python<'_>) -> PyResult<Vec<FormatInfo>> {
    Ok(Registry::builtin()
        .formats()
        .iter()
        .map(|f| FormatInfo {
            name: PyString::new(py, f.name()).unbind(),
            models: PyString::new(py, f.models()).unbind(),
            description: PyString::new(py, f.description()).unbind(),
        })
        .collect())
}

/// The built-in format a model writes, from its id (a Hugging Face repo
/// id, a served model name: `"Qwen/Qwen3-8B"`), or None when it is not
/// known (then `"auto"` detects the format from the content).
#[pyfunction]
fn format_for_model(model: &str) -> Option<&'static str> {
    builtin_for_model(model)
}

/// Parses a whole answer (`str` or `bytes`) into a `Response`; takes the
/// options `Parser` takes.
#[pyfunction]
#[pyo3(signature = (
    text, format = None, *, model = None, tools = None, reasoning = false,
    starts_in_reasoning = false, calls_in_reasoning = None, check_calls = None,
    complete_at_stop = false, max_calls = None, only_tool = None, normalize_tool_names = false,
        ids = None, seed = None,
    max_call_bytes = None, max_depth = None, max_holdback = None, max_name_bytes = None,
))]
#[allow(clippy::too_many_arguments)]
fn parse<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
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
) -> PyResult<response::Response> {
    let args = Args {
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
    };
    response::parse_whole(py, text, args)
}

/// The extension module `toolscan._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<parser::Parser>()?;
    m.add_class::<events::Text>()?;
    m.add_class::<events::Reasoning>()?;
    m.add_class::<events::ToolCallStart>()?;
    m.add_class::<events::ToolCallArgs>()?;
    m.add_class::<events::ToolCallEnd>()?;
    m.add_class::<events::Diagnostic>()?;
    m.add_class::<events::Done>()?;
    m.add_class::<response::Response>()?;
    m.add_class::<response::ToolCall>()?;
    m.add_class::<FormatInfo>()?;
    m.add_class::<vllm::VllmBuilders>()?;
    m.add_class::<vllm_stream::VllmStream>()?;
    m.add_class::<openai::ChunkRewriter>()?;
    m.add_function(wrap_pyfunction!(openai::rewrite_body, m)?)?;
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    m.add_function(wrap_pyfunction!(formats, m)?)?;
    m.add_function(wrap_pyfunction!(format_for_model, m)?)?;
    m.add("ToolscanError", py.get_type::<errors::ToolscanError>())?;
    m.add(
        "UnknownFormatError",
        py.get_type::<errors::UnknownFormatError>(),
    )?;
    m.add("OptionsError", py.get_type::<errors::OptionsError>())?;
    m.add("FinishedError", py.get_type::<errors::FinishedError>())?;
    Ok(())
}
