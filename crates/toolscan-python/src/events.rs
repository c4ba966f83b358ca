//! The event classes, and the sink that turns the core's `EventRef`s into
//! them.
//!
//! Each class is a frozen `pyclass` holding Python objects made once from
//! the `&str` the core hands over (no `Event` is allocated on the way).
//! Equality, hashing, `repr` and `__match_args__` come from one macro, over
//! the tuple of the class's fields.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use toolscan_core::{EventRef, Sink};

/// `json.loads(text)`.
pub(crate) fn json_loads<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.getattr("loads")?.call1((text,))
}

/// Declares an event class: its fields (each with `#[pyo3(get)]`), a
/// constructor taking them in order, `type`, `__repr__`, `__eq__`,
/// `__hash__`, `__match_args__` and `to_dict`, plus the methods given in
/// `extra { … }`. `dict_args` names the field whose JSON text `to_dict`
/// parses (only `ToolCallEnd`'s `arguments`).
macro_rules! event_class {
    (
        $(#[$doc:meta])*
        $name:ident, $pyname:literal, $type:literal,
        { $($field:ident : $fty:ty => $aty:ty),* $(,)? }
        $(dict_args: $args:ident,)?
        extra { $($extra:tt)* }
    ) => {
        $(#[$doc])*
        #[pyclass(module = "toolscan", name = $pyname, frozen)]
        pub struct $name {
            $(#[pyo3(get)] pub(crate) $field: $fty,)*
        }

        impl $name {
            /// The fields, in order, as Python objects.
            fn fields<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
                Ok(vec![$(self.$field.clone_ref_any(py)?,)*])
            }
        }

        #[pymethods]
        impl $name {
            #[new]
            fn py_new($($field: $aty),*) -> Self {
                $name { $($field: FromArg::from_arg($field),)* }
            }

            /// The contract's name of this event.
            #[getter(r#type)]
            fn event_type(&self) -> &'static str {
                $type
            }

            #[classattr]
            fn __match_args__(py: Python<'_>) -> PyResult<Py<PyTuple>> {
                Ok(PyTuple::new(py, [$(stringify!($field)),*])?.unbind())
            }

            fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
                let names: &[&str] = &[$(stringify!($field)),*];
                let mut parts = Vec::with_capacity(names.len());
                for (name, value) in names.iter().zip(self.fields(py)?) {
                    parts.push(format!("{name}={}", value.repr()?.to_cow()?));
                }
                Ok(format!("{}({})", $pyname, parts.join(", ")))
            }

            fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                let Ok(other) = other.cast::<$name>() else {
                    return Ok(py.NotImplemented());
                };
                let other = other.get();
                let equal = PyTuple::new(py, self.fields(py)?)?
                    .eq(PyTuple::new(py, other.fields(py)?)?)?;
                Ok(pyo3::types::PyBool::new(py, equal).to_owned().into_any().unbind())
            }

            fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
                let mut all = vec![PyString::new(py, $type).into_any()];
                all.extend(self.fields(py)?);
                PyTuple::new(py, all)?.hash()
            }

            /// The JSON object `toolscan parse --output events` writes for
            /// this event, as a dict (a call's arguments parsed).
            fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
                let d = PyDict::new(py);
                d.set_item("type", $type)?;
                $(d.set_item(stringify!($field), self.$field.clone_ref_any(py)?)?;)*
                $(d.set_item(stringify!($args), json_loads(py, self.$args.bind(py))?)?;)?
                Ok(d)
            }

            $($extra)*
        }
    };
}

/// A field's value as a Python object.
pub(crate) trait CloneRefAny {
    fn clone_ref_any<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>>;
}

impl CloneRefAny for Py<PyString> {
    fn clone_ref_any<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.bind(py).clone().into_any())
    }
}

impl CloneRefAny for usize {
    fn clone_ref_any<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.into_pyobject(py)?.into_any())
    }
}

impl CloneRefAny for u64 {
    fn clone_ref_any<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.into_pyobject(py)?.into_any())
    }
}

/// A constructor argument into its field.
pub(crate) trait FromArg<A> {
    fn from_arg(a: A) -> Self;
}

impl FromArg<Bound<'_, PyString>> for Py<PyString> {
    fn from_arg(a: Bound<'_, PyString>) -> Self {
        a.unbind()
    }
}

impl FromArg<usize> for usize {
    fn from_arg(a: usize) -> Self {
        a
    }
}

impl FromArg<u64> for u64 {
    fn from_arg(a: u64) -> Self {
        a
    }
}

event_class! {
    /// Text of the answer: `Text(delta)`, type `"text"`.
    Text, "Text", "text",
    { delta: Py<PyString> => Bound<'_, PyString> }
    extra {}
}

event_class! {
    /// Reasoning (with reasoning separation on; Harmony's analysis channel
    /// always): `Reasoning(delta)`, type `"reasoning"`.
    Reasoning, "Reasoning", "reasoning",
    { delta: Py<PyString> => Bound<'_, PyString> }
    extra {}
}

event_class! {
    /// A call begins: `ToolCallStart(index, id, name)`, type
    /// `"tool_call_start"`.
    ToolCallStart, "ToolCallStart", "tool_call_start",
    {
        index: usize => usize,
        id: Py<PyString> => Bound<'_, PyString>,
        name: Py<PyString> => Bound<'_, PyString>,
    }
    extra {}
}

event_class! {
    /// A piece of a call's arguments (JSON text): `ToolCallArgs(index,
    /// delta)`, type `"tool_call_args"`. The pieces of a call add up to its
    /// `ToolCallEnd.arguments`.
    ToolCallArgs, "ToolCallArgs", "tool_call_args",
    {
        index: usize => usize,
        delta: Py<PyString> => Bound<'_, PyString>,
    }
    extra {}
}

event_class! {
    /// A call is complete: `ToolCallEnd(index, id, name, arguments)`, type
    /// `"tool_call_end"`. `arguments` is the JSON text of an object as the
    /// model wrote it; `parsed()` gives it as a dict.
    ToolCallEnd, "ToolCallEnd", "tool_call_end",
    {
        index: usize => usize,
        id: Py<PyString> => Bound<'_, PyString>,
        name: Py<PyString> => Bound<'_, PyString>,
        arguments: Py<PyString> => Bound<'_, PyString>,
    }
    dict_args: arguments,
    extra {
        /// The arguments as a dict (`json.loads(arguments)`, a new one on
        /// each call).
        fn parsed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            json_loads(py, self.arguments.bind(py))
        }
    }
}

event_class! {
    /// Something was not as the format says: `Diagnostic(kind, offset,
    /// message)`, type `"diagnostic"`. `kind` is the contract's name
    /// (`"malformed"`, `"truncated"`, `"limit"`, …), `offset` the byte
    /// offset in the whole input.
    Diagnostic, "Diagnostic", "diagnostic",
    {
        kind: Py<PyString> => Bound<'_, PyString>,
        offset: u64 => u64,
        message: Py<PyString> => Bound<'_, PyString>,
    }
    extra {}
}

event_class! {
    /// The end of the answer, always the last event: `Done(finish_reason)`,
    /// type `"done"`; `finish_reason` is `"stop"`, `"tool_calls"` or
    /// `"length"`.
    Done, "Done", "done",
    { finish_reason: Py<PyString> => Bound<'_, PyString> }
    extra {}
}

/// A diagnostic of the core as the Python class.
pub(crate) fn diagnostic(py: Python<'_>, d: &toolscan_core::Diagnostic) -> Diagnostic {
    Diagnostic {
        kind: PyString::intern(py, d.kind.as_str()).unbind(),
        offset: d.offset,
        message: PyString::new(py, &d.message).unbind(),
    }
}

/// The Python object of one event.
/// `None` for a kind of event this build of the bindings does not know.
pub(crate) fn to_py(py: Python<'_>, e: EventRef<'_>) -> PyResult<Option<Py<PyAny>>> {
    let s = |t: &str| PyString::new(py, t).unbind();
    Ok(Some(match e {
        EventRef::Text(delta) => Py::new(py, Text { delta: s(delta) })?.into_any(),
        EventRef::Reasoning(delta) => Py::new(py, Reasoning { delta: s(delta) })?.into_any(),
        EventRef::ToolCallStart { index, id, name } => Py::new(
            py,
            ToolCallStart {
                index,
                id: s(id),
                name: s(name),
            },
        )?
        .into_any(),
        EventRef::ToolCallArgs { index, delta } => Py::new(
            py,
            ToolCallArgs {
                index,
                delta: s(delta),
            },
        )?
        .into_any(),
        EventRef::ToolCallEnd {
            index,
            id,
            name,
            arguments,
        } => Py::new(
            py,
            ToolCallEnd {
                index,
                id: s(id),
                name: s(name),
                arguments: s(arguments),
            },
        )?
        .into_any(),
        EventRef::Diagnostic(d) => Py::new(py, diagnostic(py, d))?.into_any(),
        EventRef::Done { finish_reason } => Py::new(
            py,
            Done {
                finish_reason: PyString::intern(py, finish_reason.as_str()).unbind(),
            },
        )?
        .into_any(),
        _ => return Ok(None),
    }))
}

/// A sink that makes each event a Python object. A failure to make one (out
/// of memory) is kept, and the events after it are dropped: the caller
/// raises it.
pub(crate) struct Collect<'py> {
    py: Python<'py>,
    out: Vec<Py<PyAny>>,
    err: Option<PyErr>,
}

impl<'py> Collect<'py> {
    pub(crate) fn new(py: Python<'py>) -> Self {
        Collect {
            py,
            out: Vec::new(),
            err: None,
        }
    }

    /// The events as a list, or the error met while making them.
    pub(crate) fn into_list(self) -> PyResult<Bound<'py, PyList>> {
        match self.err {
            Some(e) => Err(e),
            None => PyList::new(self.py, self.out),
        }
    }
}

impl Sink for Collect<'_> {
    fn event(&mut self, event: EventRef<'_>) {
        if self.err.is_some() {
            return;
        }
        match to_py(self.py, event) {
            Ok(Some(o)) => self.out.push(o),
            Ok(None) => {}
            Err(e) => self.err = Some(e),
        }
    }
}
