//! The OpenAI delta rules for the `toolscan.openai` wrapper: the chunk
//! rewrite of `toolscan-sse` ([`toolscan_sse::ChunkRewriter`], the code
//! `toolscan sse` and the proxy run), over each chunk's JSON text. The
//! wrapper turns its chunk objects into JSON and back; the rules live
//! here once.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use toolscan_sse::{ChunkRewriter as CoreRewriter, Config, Emit};

use crate::config::Args;
use crate::errors::OptionsError;

/// What the keyword options of `ChunkRewriter` and `rewrite_body` set: the
/// parser's options (as `Parser` takes them), and the rewrite's own.
fn config_of<'py>(
    py: Python<'py>,
    format: Option<String>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Config> {
    let mut complete_at_stop = true;
    let mut stream_arguments = false;
    let mut args = Args::new(format);
    if let Some(options) = options {
        for (key, value) in options.iter() {
            let key = key.cast::<PyString>()?.to_cow()?.into_owned();
            match key.as_str() {
                "complete_at_stop" => complete_at_stop = flag(&key, &value)?,
                "stream_arguments" => stream_arguments = flag(&key, &value)?,
                _ => args.set(&key, value)?,
            }
        }
    }
    let built = args.build(py)?;
    Ok(Config::new(built.grammar)
        .with_options(built.options)
        .with_complete_at_stop(complete_at_stop)
        .with_stream_arguments(stream_arguments))
}

/// A `True`/`False` option.
fn flag(key: &str, value: &Bound<'_, PyAny>) -> PyResult<bool> {
    if let Ok(b) = value.cast::<pyo3::types::PyBool>() {
        return Ok(b.is_true());
    }
    Err(OptionsError::new_err(format!(
        "{key} must be True or False (got {})",
        value.repr()?.to_cow()?
    )))
}

/// The rewrite of one streamed `chat.completions` answer, chunk by chunk:
/// `chunk(json)` takes the next chunk's JSON text and returns what to send
/// in its place, in order — `None` for the chunk as it came, else a
/// chunk's JSON text; `end()` what the choices still held when the stream
/// ended. The options are `Parser`'s, plus `complete_at_stop` (default
/// `True`) and `stream_arguments` (default `False`: a call's entry goes
/// out whole once the call ended; a call that breaks never produces one).
#[pyclass(module = "toolscan", name = "ChunkRewriter")]
pub struct ChunkRewriter {
    inner: CoreRewriter,
    /// The last call's output, kept to reuse its allocation.
    emits: Vec<Emit>,
}

#[pymethods]
impl ChunkRewriter {
    #[new]
    #[pyo3(signature = (format = None, **options))]
    fn new(
        py: Python<'_>,
        format: Option<String>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        Ok(ChunkRewriter {
            inner: CoreRewriter::new(config_of(py, format, options)?),
            emits: Vec::new(),
        })
    }

    /// Rewrites the next chunk (its JSON text).
    fn chunk<'py>(&mut self, py: Python<'py>, data: &str) -> PyResult<Bound<'py, PyList>> {
        self.inner.chunk(data, &mut self.emits);
        self.drain(py)
    }

    /// Ends every choice still open: what they held, as added chunks.
    fn end<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.inner.end(&mut self.emits);
        self.drain(py)
    }
}

impl ChunkRewriter {
    fn drain<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for emit in self.emits.drain(..) {
            match emit {
                Emit::Upstream => out.append(py.None())?,
                Emit::Rewritten(data) | Emit::Added(data) => out.append(data)?,
                _ => {
                    return Err(PyTypeError::new_err(
                        "toolscan: a rewrite output this build cannot pass on",
                    ))
                }
            }
        }
        Ok(out)
    }
}

/// Rewrites a whole `chat.completion` (its JSON text): the JSON text of the
/// rewritten completion, or `None` when it has no text calls (nothing
/// changed). The options are `ChunkRewriter`'s.
#[pyfunction]
#[pyo3(signature = (data, format = None, **options))]
pub fn rewrite_body(
    py: Python<'_>,
    data: &str,
    format: Option<String>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Option<String>> {
    let config = config_of(py, format, options)?;
    let out = toolscan_sse::rewrite_body(data.as_bytes(), &config)
        .map_err(|e| PyValueError::new_err(format!("not a chat completion: {e}")))?;
    if out == data.as_bytes() {
        return Ok(None);
    }
    String::from_utf8(out)
        .map(Some)
        .map_err(|e| PyTypeError::new_err(format!("toolscan: rewritten body is not UTF-8: {e}")))
}
