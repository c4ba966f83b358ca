//! The vLLM plugin's streaming path (`toolscan.vllm`), in native code.
//!
//! vLLM calls a tool parser's `extract_tool_calls_streaming` once per
//! delta and wants one of its pydantic `DeltaMessage`s back (holding
//! `DeltaToolCall`s holding `DeltaFunctionCall`s), or `None`. Built in
//! Python, the three objects cost several times what parsing the delta
//! does; here they are built without leaving Rust.
//!
//! - `VllmBuilders` holds vLLM's three classes, given once, and builds
//!   their objects the way pydantic's `model_construct` leaves them
//!   (`object.__new__`, then `__dict__`, `__pydantic_fields_set__`,
//!   `__pydantic_extra__` and `__pydantic_private__` set through the slots
//!   of pydantic's `BaseModel`), without validation. The plugin checks its
//!   objects against validated ones at import and does not use it if they
//!   differ.
//! - `VllmStream` owns the toolscan `Parser` of one request; its
//!   `extract_tool_calls_streaming` takes vLLM's arguments (it reads only
//!   `delta_text`) and answers with the objects, as the plugin's Python
//!   path does. It keeps the state vLLM reads from the tool parser
//!   (`prev_tool_call_arr`, `streamed_args_for_tool`, `current_tool_id`,
//!   `current_tool_name_sent`) in the tool parser's own attributes,
//!   touched only when a call starts or ends.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySet, PyString};
use pyo3::{PyTraverseError, PyVisit};
use toolscan_core::{Diagnostic as CoreDiagnostic, EventRef, Sink};

use crate::parser::Parser;

/// vLLM's three delta classes, by their place in `VllmBuilders::classes`.
#[derive(Clone, Copy)]
enum Kind {
    Message = 0,
    ToolCall = 1,
    Function = 2,
}

/// The field names, made once.
struct Names {
    content: Py<PyString>,
    tool_calls: Py<PyString>,
    id: Py<PyString>,
    type_: Py<PyString>,
    index: Py<PyString>,
    function: Py<PyString>,
    name: Py<PyString>,
    arguments: Py<PyString>,
}

/// Builds vLLM's `DeltaMessage`, `DeltaToolCall` and `DeltaFunctionCall`
/// without pydantic's validation: `VllmBuilders(DeltaMessage,
/// DeltaToolCall, DeltaFunctionCall)`. The methods take what the plugin's
/// Python builders take, so the plugin can compare their objects with
/// validated ones.
#[pyclass(module = "toolscan", name = "VllmBuilders", frozen)]
pub struct VllmBuilders {
    classes: [Py<PyAny>; 3],
    /// Whether each class allows extra fields (its `__pydantic_extra__`
    /// is then `{}`, else `None`).
    extra: [bool; 3],
    /// `object.__new__`.
    new: Py<PyAny>,
    /// The `__set__` of `BaseModel`'s slots: `__dict__`,
    /// `__pydantic_fields_set__`, `__pydantic_extra__`,
    /// `__pydantic_private__`.
    set_dict: Py<PyAny>,
    set_fields: Py<PyAny>,
    set_extra: Py<PyAny>,
    set_private: Py<PyAny>,
    names: Names,
    /// Each class's fields, all None, in their order.
    blanks: [Py<PyDict>; 3],
    /// `"function"`, the `type` of a call's first entry.
    function_type: Py<PyString>,
}

impl VllmBuilders {
    /// A new `__dict__` for an object of `kind`: its fields, all None
    /// (a copy of a dict made once, cheaper than a new one).
    fn blank<'py>(&self, py: Python<'py>, kind: Kind) -> PyResult<Bound<'py, PyDict>> {
        self.blanks[kind as usize].bind(py).copy()
    }

    /// A new object of `kind` with `dict` as its fields, `fields` as the
    /// ones set.
    fn make<'py>(
        &self,
        py: Python<'py>,
        kind: Kind,
        dict: Bound<'py, PyDict>,
        fields: &[&Py<PyString>],
    ) -> PyResult<Bound<'py, PyAny>> {
        let k = kind as usize;
        let obj = self.new.bind(py).call1((self.classes[k].bind(py),))?;
        self.set_dict.bind(py).call1((&obj, dict))?;
        let set = PySet::new(py, fields.iter().map(|n| n.bind(py)))?;
        self.set_fields.bind(py).call1((&obj, set))?;
        let extra = if self.extra[k] {
            PyDict::new(py).into_any()
        } else {
            py.None().into_bound(py)
        };
        self.set_extra.bind(py).call1((&obj, extra))?;
        self.set_private.bind(py).call1((&obj, py.None()))?;
        Ok(obj)
    }

    /// `DeltaFunctionCall(name=name)`, or `(arguments=arguments)` when
    /// there are arguments.
    fn build_function<'py>(
        &self,
        py: Python<'py>,
        name: Option<Bound<'py, PyAny>>,
        arguments: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let n = &self.names;
        let set = if arguments.is_none() {
            &n.name
        } else {
            &n.arguments
        };
        let d = self.blank(py, Kind::Function)?;
        if let Some(name) = name {
            d.set_item(n.name.bind(py), name)?;
        }
        if let Some(arguments) = arguments {
            d.set_item(n.arguments.bind(py), arguments)?;
        }
        self.make(py, Kind::Function, d, &[set])
    }

    /// `DeltaToolCall(index=index, function=function)`, plus `id` and
    /// `type` when there is an id.
    fn build_tool_call<'py>(
        &self,
        py: Python<'py>,
        index: usize,
        function: Bound<'py, PyAny>,
        id: Option<Bound<'py, PyAny>>,
        type_: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let n = &self.names;
        let with_id = id.is_some();
        let d = self.blank(py, Kind::ToolCall)?;
        if let Some(id) = id {
            d.set_item(n.id.bind(py), id)?;
        }
        if let Some(type_) = type_ {
            d.set_item(n.type_.bind(py), type_)?;
        }
        d.set_item(n.index.bind(py), index)?;
        d.set_item(n.function.bind(py), function)?;
        if with_id {
            self.make(
                py,
                Kind::ToolCall,
                d,
                &[&n.index, &n.function, &n.id, &n.type_],
            )
        } else {
            self.make(py, Kind::ToolCall, d, &[&n.index, &n.function])
        }
    }

    /// `DeltaMessage(content=content)`, plus `tool_calls` when there are
    /// some.
    fn build_message<'py>(
        &self,
        py: Python<'py>,
        content: Option<Bound<'py, PyAny>>,
        tool_calls: Option<Bound<'py, PyList>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let n = &self.names;
        let calls = match tool_calls {
            Some(list) if !list.is_empty() => Some(list),
            _ => None,
        };
        let with_calls = calls.is_some();
        let d = self.blank(py, Kind::Message)?;
        if let Some(content) = content {
            d.set_item(n.content.bind(py), content)?;
        }
        d.set_item(
            n.tool_calls.bind(py),
            calls.unwrap_or_else(|| PyList::empty(py)),
        )?;
        if with_calls {
            self.make(py, Kind::Message, d, &[&n.content, &n.tool_calls])
        } else {
            self.make(py, Kind::Message, d, &[&n.content])
        }
    }
}

/// The `__set__` of the slot `name` of the class in `cls`'s MRO that
/// declares it (pydantic's `BaseModel`).
fn slot_setter<'py>(cls: &Bound<'py, PyAny>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    for base in cls.getattr("__mro__")?.try_iter()? {
        let base = base?;
        if let Ok(descr) = base.getattr("__dict__")?.get_item(name) {
            return descr.getattr("__set__");
        }
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "{} has no slot {name} (not a pydantic model)",
        cls.repr()?
    )))
}

#[pymethods]
impl VllmBuilders {
    #[new]
    fn py_new<'py>(
        py: Python<'py>,
        message: Bound<'py, PyAny>,
        tool_call: Bound<'py, PyAny>,
        function: Bound<'py, PyAny>,
    ) -> PyResult<Self> {
        let classes = [message, tool_call, function];
        let mut extra = [false; 3];
        for (allows, cls) in extra.iter_mut().zip(&classes) {
            let config = cls.getattr("model_config")?;
            *allows = match config.get_item("extra") {
                Ok(v) => v.eq("allow")?,
                Err(_) => false,
            };
        }
        let base = &classes[0];
        let s = |t: &str| PyString::intern(py, t).unbind();
        let blank = |fields: &[&str]| -> PyResult<Py<PyDict>> {
            let d = PyDict::new(py);
            for f in fields {
                d.set_item(PyString::intern(py, f), py.None())?;
            }
            Ok(d.unbind())
        };
        let blanks = [
            blank(&["role", "content", "reasoning", "tool_calls"])?,
            blank(&["id", "type", "index", "function"])?,
            blank(&["name", "arguments"])?,
        ];
        Ok(VllmBuilders {
            blanks,
            new: py.get_type::<PyAny>().getattr("__new__")?.unbind(),
            set_dict: slot_setter(base, "__dict__")?.unbind(),
            set_fields: slot_setter(base, "__pydantic_fields_set__")?.unbind(),
            set_extra: slot_setter(base, "__pydantic_extra__")?.unbind(),
            set_private: slot_setter(base, "__pydantic_private__")?.unbind(),
            classes: classes.map(Bound::unbind),
            extra,
            names: Names {
                content: s("content"),
                tool_calls: s("tool_calls"),
                id: s("id"),
                type_: s("type"),
                index: s("index"),
                function: s("function"),
                name: s("name"),
                arguments: s("arguments"),
            },
            function_type: s("function"),
        })
    }

    /// `DeltaMessage(content=content)`, with `tool_calls` if not empty.
    #[pyo3(signature = (content, tool_calls = None))]
    fn message<'py>(
        &self,
        py: Python<'py>,
        content: Option<Bound<'py, PyAny>>,
        tool_calls: Option<Bound<'py, PyList>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.build_message(py, content, tool_calls)
    }

    /// `DeltaToolCall(index=index, function=function)`, with `id` and
    /// `type` if `id` is given.
    #[pyo3(signature = (index, function, id = None, r#type = None))]
    fn tool_call<'py>(
        &self,
        py: Python<'py>,
        index: usize,
        function: Bound<'py, PyAny>,
        id: Option<Bound<'py, PyAny>>,
        r#type: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.build_tool_call(py, index, function, id, r#type)
    }

    /// `DeltaFunctionCall(name=name)`, or `(arguments=arguments)`.
    #[pyo3(signature = (name = None, arguments = None))]
    fn function<'py>(
        &self,
        py: Python<'py>,
        name: Option<Bound<'py, PyAny>>,
        arguments: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.build_function(py, name, arguments)
    }

    /// `message(content)`.
    fn text_message<'py>(
        &self,
        py: Python<'py>,
        content: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.build_message(py, Some(content), None)
    }

    /// `message(None, [tool_call(index, function(arguments=arguments))])`.
    fn args_message<'py>(
        &self,
        py: Python<'py>,
        index: usize,
        arguments: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let f = self.build_function(py, None, Some(arguments))?;
        let c = self.build_tool_call(py, index, f, None, None)?;
        self.build_message(py, None, Some(PyList::new(py, [c])?))
    }
}

/// One entry of the `tool_calls` of the message being built.
enum Entry {
    /// A call's first: index, id, name (and `type="function"`).
    Start {
        index: usize,
        id: String,
        name: String,
    },
    /// Argument text of a call (a run of its deltas).
    Args { index: usize, arguments: String },
}

/// A change to the state vLLM reads, made once the chunk is parsed.
enum Effect {
    /// `prev_tool_call_arr` and `streamed_args_for_tool` get room for this
    /// index.
    Slot(usize),
    /// A call started.
    Start { index: usize, name: String },
    /// A call ended: its name, its arguments, and what was streamed of
    /// them.
    End {
        index: usize,
        name: String,
        arguments: String,
        streamed: String,
    },
    /// A diagnostic, for the plugin's `_diagnostic`.
    Diagnostic(CoreDiagnostic),
}

/// The sink of one chunk: its text, its call entries (consecutive argument
/// deltas of a call joined into one entry), and the state changes.
struct Collect<'a> {
    /// The argument text sent so far, per call.
    args_sent: &'a mut Vec<String>,
    content: String,
    entries: Vec<Entry>,
    /// Whether the last entry takes the next argument delta of its call.
    open_args: bool,
    effects: Vec<Effect>,
}

impl<'a> Collect<'a> {
    fn new(args_sent: &'a mut Vec<String>) -> Self {
        Collect {
            args_sent,
            content: String::new(),
            entries: Vec::new(),
            open_args: false,
            effects: Vec::new(),
        }
    }

    fn slot(&mut self, index: usize) {
        if index >= self.args_sent.len() {
            self.args_sent.resize_with(index + 1, String::new);
            self.effects.push(Effect::Slot(index));
        }
    }
}

impl Sink for Collect<'_> {
    fn event(&mut self, event: EventRef<'_>) {
        if let EventRef::ToolCallArgs { index, delta } = event {
            self.slot(index);
            self.args_sent[index].push_str(delta);
            if self.open_args {
                if let Some(Entry::Args {
                    index: i,
                    arguments,
                }) = self.entries.last_mut()
                {
                    if *i == index {
                        arguments.push_str(delta);
                        return;
                    }
                }
            }
            self.entries.push(Entry::Args {
                index,
                arguments: delta.to_owned(),
            });
            self.open_args = true;
            return;
        }
        self.open_args = false;
        match event {
            EventRef::Text(delta) => self.content.push_str(delta),
            EventRef::ToolCallStart { index, id, name } => {
                self.slot(index);
                self.effects.push(Effect::Start {
                    index,
                    name: name.to_owned(),
                });
                self.entries.push(Entry::Start {
                    index,
                    id: id.to_owned(),
                    name: name.to_owned(),
                });
            }
            EventRef::ToolCallEnd {
                index,
                name,
                arguments,
                ..
            } => {
                self.slot(index);
                let sent = &mut self.args_sent[index];
                if arguments != sent.as_str() && arguments.starts_with(sent.as_str()) {
                    // The contract says the deltas add up to the
                    // arguments; should they fall short, send the rest.
                    let rest = &arguments[sent.len()..];
                    sent.push_str(rest);
                    self.entries.push(Entry::Args {
                        index,
                        arguments: rest.to_owned(),
                    });
                }
                let streamed = sent.clone();
                self.effects.push(Effect::End {
                    index,
                    name: name.to_owned(),
                    arguments: arguments.to_owned(),
                    streamed,
                });
            }
            EventRef::Diagnostic(d) => self.effects.push(Effect::Diagnostic(d.clone())),
            // Reasoning separation is not asked for (vLLM's reasoning
            // parser does that); what a format marks as reasoning itself
            // (Harmony's analysis channel) comes anyway, and stays content
            // here, so nothing is lost.
            EventRef::Reasoning(delta) => self.content.push_str(delta),
            // `Done` carries nothing vLLM reads.
            _ => {}
        }
    }
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
/// `VllmStream(parser, builders, tool_parser, on_diagnostic)`.
///
/// `extract_tool_calls_streaming(...)` takes vLLM's arguments and feeds
/// `delta_text` to `parser`; it returns the `DeltaMessage` of what the
/// delta decided (built by `builders`), or None. It keeps
/// `tool_parser.prev_tool_call_arr`, `streamed_args_for_tool`,
/// `current_tool_id` and `current_tool_name_sent` as vLLM's parsers do,
/// and calls `on_diagnostic` with each `Diagnostic`. `finish()` ends the
/// stream.
#[pyclass(module = "toolscan", name = "VllmStream")]
pub struct VllmStream {
    parser: Py<Parser>,
    builders: Py<VllmBuilders>,
    owner: Option<Owner>,
    /// The argument text sent so far, per call.
    args_sent: Vec<String>,
    finished: bool,
}

impl VllmStream {
    /// Applies a chunk's state changes, and builds its message.
    fn respond<'py>(
        &self,
        py: Python<'py>,
        content: String,
        entries: Vec<Entry>,
        effects: Vec<Effect>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        if !effects.is_empty() {
            self.apply(py, effects)?;
        }
        let b = self.builders.get();
        if entries.is_empty() {
            if content.is_empty() {
                return Ok(None);
            }
            let text = PyString::new(py, &content).into_any();
            return b.build_message(py, Some(text), None).map(Some);
        }
        let calls = PyList::empty(py);
        for entry in entries {
            let call = match entry {
                Entry::Start { index, id, name } => {
                    let f =
                        b.build_function(py, Some(PyString::new(py, &name).into_any()), None)?;
                    b.build_tool_call(
                        py,
                        index,
                        f,
                        Some(PyString::new(py, &id).into_any()),
                        Some(b.function_type.bind(py).clone().into_any()),
                    )?
                }
                Entry::Args { index, arguments } => {
                    let args = PyString::new(py, &arguments).into_any();
                    let f = b.build_function(py, None, Some(args))?;
                    b.build_tool_call(py, index, f, None, None)?
                }
            };
            calls.append(call)?;
        }
        let text = (!content.is_empty()).then(|| PyString::new(py, &content).into_any());
        b.build_message(py, text, Some(calls)).map(Some)
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
                Effect::Slot(index) => slot(index)?,
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
    fn py_new(
        parser: Py<Parser>,
        builders: Py<VllmBuilders>,
        tool_parser: &Bound<'_, PyAny>,
        on_diagnostic: Py<PyAny>,
    ) -> PyResult<Self> {
        let attrs = tool_parser.getattr("__dict__")?.cast_into::<PyDict>()?;
        Ok(VllmStream {
            parser,
            builders,
            owner: Some(Owner {
                attrs: attrs.unbind(),
                on_diagnostic,
            }),
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
        if self.finished {
            return Ok(None);
        }
        if delta_text.is_none() {
            return Ok(None);
        }
        let delta = delta_text.cast::<PyString>()?.to_cow()?;
        if delta.is_empty() {
            return Ok(None);
        }
        let mut sink = Collect::new(&mut self.args_sent);
        self.parser
            .bind(py)
            .borrow_mut()
            .inner
            .feed_str_with(&delta, &mut sink);
        let Collect {
            content,
            entries,
            effects,
            ..
        } = sink;
        self.respond(py, content, entries, effects)
    }

    /// The end of the stream: the `DeltaMessage` of what the parser held
    /// back and the calls it could only close now, or None. A call that
    /// never ended keeps, in `streamed_args_for_tool` and
    /// `prev_tool_call_arr`, the arguments sent of it.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        if self.finished {
            return Ok(None);
        }
        self.finished = true;
        let mut sink = Collect::new(&mut self.args_sent);
        {
            let mut parser = self.parser.bind(py).borrow_mut();
            parser.finished = true;
            parser.inner.finish_with(&mut sink);
        }
        let Collect {
            content,
            entries,
            effects,
            ..
        } = sink;
        let message = self.respond(py, content, entries, effects)?;
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
        visit.call(&self.builders)?;
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
