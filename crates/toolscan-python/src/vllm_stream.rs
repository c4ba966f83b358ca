//! The vLLM plugin's streaming path (`toolscan.vllm`): one request's
//! parser, its deltas taken from the OpenAI delta rules of `toolscan-sse`
//! ([`Deltas`], the rules `toolscan sse`, the proxy and
//! `toolscan.openai` follow), and vLLM's delta objects built from them.
//!
//! vLLM calls a tool parser's `extract_tool_calls_streaming` once per
//! delta and wants one of its pydantic `DeltaMessage`s back (holding
//! `DeltaToolCall`s holding `DeltaFunctionCall`s), or `None`. The objects
//! come from the native builders ([`VllmBuilders`]) where they pass the
//! plugin's import-time check, else from the plugin's Python builders:
//! the rules are the same either way.
//!
//! `VllmStream` keeps the state vLLM reads from the tool parser
//! (`prev_tool_call_arr`, `streamed_args_for_tool`, `current_tool_id`,
//! `current_tool_name_sent`) in the tool parser's own attributes, touched
//! only when a call's entry goes out or a call ends.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};
use toolscan_core::Diagnostic as CoreDiagnostic;
use toolscan_sse::{Delta, Deltas, Entry};

use crate::parser::Parser;
use crate::vllm::VllmBuilders;

/// Where vLLM's delta objects come from.
enum Builders {
    /// The native builders (checked against validated objects at import).
    Native(Py<VllmBuilders>),
    /// The plugin's Python callables: `message(content, tool_calls)`,
    /// `tool_call(index, function, id, type)`, `function(name, arguments)`.
    Python {
        message: Py<PyAny>,
        tool_call: Py<PyAny>,
        function: Py<PyAny>,
    },
}

impl Builders {
    /// The builders given to `VllmStream(...)`: a `VllmBuilders`, or a
    /// tuple of the three Python callables.
    fn from_py(builders: &Bound<'_, PyAny>) -> PyResult<Builders> {
        if let Ok(native) = builders.cast::<VllmBuilders>() {
            return Ok(Builders::Native(native.clone().unbind()));
        }
        let tuple = builders.cast::<PyTuple>().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(
                "builders: a VllmBuilders, or a tuple (message, tool_call, function)",
            )
        })?;
        let [message, tool_call, function] =
            <[Py<PyAny>; 3]>::try_from(tuple.iter().map(Bound::unbind).collect::<Vec<_>>())
                .map_err(|_| {
                    pyo3::exceptions::PyTypeError::new_err(
                        "builders: a tuple of three callables (message, tool_call, function)",
                    )
                })?;
        Ok(Builders::Python {
            message,
            tool_call,
            function,
        })
    }

    /// One `tool_calls` entry as a `DeltaToolCall`: a call's first entry
    /// with its id, `type="function"` and name (and the arguments that
    /// came with it), an argument entry with its arguments.
    fn entry<'py>(&self, py: Python<'py>, entry: &Entry) -> PyResult<Bound<'py, PyAny>> {
        let text = |s: &str| PyString::new(py, s).into_any();
        let (index, id, name, arguments) = match entry {
            Entry::Start {
                index,
                id,
                name,
                arguments,
            } => (*index, Some(id), Some(name), arguments),
            Entry::Args { index, arguments } => (*index, None, None, arguments),
        };
        // An index counts the calls of one answer: it fits.
        let index = index as usize;
        let name = name.map(|n| text(n));
        let arguments = (!arguments.is_empty()).then(|| text(arguments));
        let id = id.map(|i| text(i));
        match self {
            Builders::Native(b) => {
                let b = b.get();
                let f = b.build_function(py, name, arguments)?;
                let kind = id.as_ref().map(|_| b.function_type(py));
                b.build_tool_call(py, index, f, id, kind)
            }
            Builders::Python {
                tool_call,
                function,
                ..
            } => {
                let f = function.bind(py).call1((name, arguments))?;
                let kind = id.as_ref().map(|_| text("function"));
                tool_call.bind(py).call1((index, f, id, kind))
            }
        }
    }

    /// The `DeltaMessage` of `content` and `calls`.
    fn message<'py>(
        &self,
        py: Python<'py>,
        content: Option<Bound<'py, PyAny>>,
        calls: Option<Bound<'py, PyList>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Builders::Native(b) => b.get().build_message(py, content, calls),
            Builders::Python { message, .. } => message.bind(py).call1((content, calls)),
        }
    }
}

/// A change to the state vLLM reads, made once the delta is built.
enum Effect {
    /// A call's first entry went out.
    Start { index: usize, name: String },
    /// A call ended: its name, its arguments, and what was sent of them.
    End {
        index: usize,
        name: String,
        arguments: String,
        streamed: String,
    },
    /// A diagnostic, for the plugin's `_diagnostic`.
    Diagnostic(CoreDiagnostic),
}

/// The tool parser's attributes the stream updates, and the callback of
/// its diagnostics (held apart: the tool parser holds the stream, and
/// `__clear__` drops these to break the cycle).
struct Owner {
    /// The tool parser's `__dict__`.
    attrs: Py<PyDict>,
    on_diagnostic: Py<PyAny>,
}

/// The streaming path of one request of the vLLM plugin:
/// `VllmStream(parser, builders, tool_parser, on_diagnostic,
/// stream_arguments=False)`.
///
/// `extract_tool_calls_streaming(...)` takes vLLM's arguments and feeds
/// `delta_text` to `parser`; it returns the `DeltaMessage` of what the
/// delta decided, or None. A call's one entry (id, name, all its
/// arguments) goes out in the delta that completes it, and a block that
/// fails never gives one (its text comes back as content); with
/// `stream_arguments` a call's first entry goes out at its start and its
/// arguments as they come. `builders` makes vLLM's objects: a
/// `VllmBuilders`, or the tuple `(message, tool_call, function)` of Python
/// callables. It keeps `tool_parser.prev_tool_call_arr`,
/// `streamed_args_for_tool`, `current_tool_id` and
/// `current_tool_name_sent` as vLLM's parsers do, and calls
/// `on_diagnostic` with each `Diagnostic`. `finish()` ends the stream.
#[pyclass(module = "toolscan", name = "VllmStream")]
pub struct VllmStream {
    parser: Py<Parser>,
    builders: Builders,
    owner: Option<Owner>,
    /// The delta rules.
    deltas: Deltas,
    /// The argument text sent so far, per call (by output index).
    args_sent: Vec<String>,
    finished: bool,
}

impl VllmStream {
    /// The state changes of `delta`, with the argument text it sends
    /// added to `args_sent`.
    fn effects(&mut self, delta: &mut Delta) -> Vec<Effect> {
        /// The slot of call `index` in `sent`, made if need be.
        fn slot(sent: &mut Vec<String>, index: u64) -> usize {
            // An index counts the calls of one answer: it fits.
            let index = index as usize;
            if index >= sent.len() {
                sent.resize_with(index + 1, String::new);
            }
            index
        }
        let mut effects = Vec::new();
        let sent = &mut self.args_sent;
        for entry in &delta.entries {
            match entry {
                Entry::Start {
                    index,
                    name,
                    arguments,
                    ..
                } => {
                    let index = slot(sent, *index);
                    sent[index].push_str(arguments);
                    effects.push(Effect::Start {
                        index,
                        name: name.clone(),
                    });
                }
                Entry::Args { index, arguments } => {
                    let index = slot(sent, *index);
                    sent[index].push_str(arguments);
                }
            }
        }
        for call in delta.calls.drain(..) {
            let index = slot(sent, call.index);
            effects.push(Effect::End {
                index,
                name: call.name,
                arguments: call.arguments,
                streamed: sent[index].clone(),
            });
        }
        effects.extend(delta.diagnostics.drain(..).map(Effect::Diagnostic));
        effects
    }

    /// Applies a delta's state changes, and builds its message.
    fn respond<'py>(
        &mut self,
        py: Python<'py>,
        mut delta: Delta,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let effects = self.effects(&mut delta);
        if !effects.is_empty() {
            self.apply(py, effects)?;
        }
        if delta.entries.is_empty() && delta.text.is_empty() {
            return Ok(None);
        }
        let calls = if delta.entries.is_empty() {
            None
        } else {
            let calls = PyList::empty(py);
            for entry in &delta.entries {
                calls.append(self.builders.entry(py, entry)?)?;
            }
            Some(calls)
        };
        let text = (!delta.text.is_empty()).then(|| PyString::new(py, &delta.text).into_any());
        self.builders.message(py, text, calls).map(Some)
    }

    /// The tool parser's `__dict__` and diagnostics callback.
    fn owner<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyAny>)> {
        match &self.owner {
            Some(o) => Ok((o.attrs.bind(py).clone(), o.on_diagnostic.bind(py).clone())),
            None => Err(pyo3::exceptions::PyRuntimeError::new_err(
                "VllmStream used after it was cleared",
            )),
        }
    }

    /// The list attribute `name` of the tool parser.
    fn list<'py>(attrs: &Bound<'py, PyDict>, name: &str) -> PyResult<Bound<'py, PyList>> {
        match attrs.get_item(name)? {
            Some(v) => Ok(v.cast_into::<PyList>()?),
            None => Err(pyo3::exceptions::PyAttributeError::new_err(format!(
                "the tool parser has no list {name}"
            ))),
        }
    }

    fn apply(&self, py: Python<'_>, effects: Vec<Effect>) -> PyResult<()> {
        let (attrs, on_diagnostic) = self.owner(py)?;
        let prev = Self::list(&attrs, "prev_tool_call_arr")?;
        let streamed_args = Self::list(&attrs, "streamed_args_for_tool")?;
        let slot = |index: usize| -> PyResult<()> {
            while prev.len() <= index {
                prev.append(PyDict::new(py))?;
            }
            while streamed_args.len() <= index {
                streamed_args.append("")?;
            }
            Ok(())
        };
        let call = |name: &str, arguments: &str| -> PyResult<Bound<'_, PyDict>> {
            let d = PyDict::new(py);
            d.set_item("name", name)?;
            d.set_item("arguments", arguments)?;
            Ok(d)
        };
        for effect in effects {
            match effect {
                Effect::Start { index, name } => {
                    slot(index)?;
                    prev.set_item(index, call(&name, "")?)?;
                    attrs.set_item("current_tool_id", index)?;
                    attrs.set_item("current_tool_name_sent", true)?;
                }
                Effect::End {
                    index,
                    name,
                    arguments,
                    streamed,
                } => {
                    slot(index)?;
                    streamed_args.set_item(index, streamed)?;
                    prev.set_item(index, call(&name, &arguments)?)?;
                }
                Effect::Diagnostic(d) => {
                    let d = Py::new(py, crate::events::diagnostic(py, &d))?;
                    on_diagnostic.call1((d,))?;
                }
            }
        }
        Ok(())
    }
}

#[pymethods]
impl VllmStream {
    #[new]
    #[pyo3(signature = (parser, builders, tool_parser, on_diagnostic, stream_arguments = false))]
    fn py_new(
        parser: Py<Parser>,
        builders: &Bound<'_, PyAny>,
        tool_parser: &Bound<'_, PyAny>,
        on_diagnostic: Py<PyAny>,
        stream_arguments: bool,
    ) -> PyResult<Self> {
        let attrs = tool_parser.getattr("__dict__")?.cast_into::<PyDict>()?;
        Ok(VllmStream {
            parser,
            builders: Builders::from_py(builders)?,
            owner: Some(Owner {
                attrs: attrs.unbind(),
                on_diagnostic,
            }),
            // What a format marks as reasoning itself (Harmony's analysis
            // channel) stays content, in its place: vLLM's reasoning
            // parser does reasoning.
            deltas: Deltas::new(stream_arguments).with_reasoning_as_text(),
            args_sent: Vec::new(),
            finished: false,
        })
    }

    /// vLLM's `ToolParser.extract_tool_calls_streaming`: feeds `delta_text`
    /// (the other arguments are not read) and returns the `DeltaMessage`
    /// of what it decided, or None (also after `finish()`).
    #[allow(clippy::too_many_arguments, unused_variables)]
    fn extract_tool_calls_streaming<'py>(
        &mut self,
        py: Python<'py>,
        previous_text: &Bound<'py, PyAny>,
        current_text: &Bound<'py, PyAny>,
        delta_text: &Bound<'py, PyAny>,
        previous_token_ids: &Bound<'py, PyAny>,
        current_token_ids: &Bound<'py, PyAny>,
        delta_token_ids: &Bound<'py, PyAny>,
        request: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        if self.finished || delta_text.is_none() {
            return Ok(None);
        }
        let text = delta_text.cast::<PyString>()?.to_cow()?;
        if text.is_empty() {
            return Ok(None);
        }
        let mut delta = Delta::keeping();
        self.parser
            .bind(py)
            .borrow_mut()
            .inner
            .feed_str_with(&text, &mut self.deltas.sink(&mut delta));
        self.respond(py, delta)
    }

    /// The end of the stream: the `DeltaMessage` of what the parser held
    /// back and the calls it could only close now, or None. With
    /// `stream_arguments`, a call that never ended keeps, in
    /// `streamed_args_for_tool` and `prev_tool_call_arr`, the arguments
    /// sent of it.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        if self.finished {
            return Ok(None);
        }
        self.finished = true;
        let mut delta = Delta::keeping();
        {
            let mut parser = self.parser.bind(py).borrow_mut();
            parser.finished = true;
            parser.inner.finish_with(&mut self.deltas.sink(&mut delta));
        }
        let message = self.respond(py, delta)?;
        if self.args_sent.iter().any(|s| !s.is_empty()) {
            let (attrs, _) = self.owner(py)?;
            let prev = Self::list(&attrs, "prev_tool_call_arr")?;
            let streamed_args = Self::list(&attrs, "streamed_args_for_tool")?;
            for (index, sent) in self.args_sent.iter().enumerate() {
                if !sent.is_empty() && !streamed_args.get_item(index)?.is_truthy()? {
                    // A call that never ended: what was sent of it.
                    streamed_args.set_item(index, sent)?;
                    prev.get_item(index)?.set_item("arguments", sent)?;
                }
            }
        }
        Ok(message)
    }

    /// Whether `finish()` was called.
    #[getter]
    fn finished(&self) -> bool {
        self.finished
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.parser)?;
        match &self.builders {
            Builders::Native(b) => visit.call(b)?,
            Builders::Python {
                message,
                tool_call,
                function,
            } => {
                visit.call(message)?;
                visit.call(tool_call)?;
                visit.call(function)?;
            }
        }
        if let Some(o) = &self.owner {
            visit.call(&o.attrs)?;
            visit.call(&o.on_diagnostic)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.owner = None;
    }
}
