//! vLLM's delta objects, built in native code for the vLLM plugin
//! (`toolscan.vllm`; its streaming path is `vllm_stream.rs`).
//!
//! Built in Python, vLLM's `DeltaMessage`, `DeltaToolCall` and
//! `DeltaFunctionCall` cost several times what parsing a delta does.
//! `VllmBuilders` holds vLLM's three classes, given once, and builds their
//! objects the way pydantic's `model_construct` leaves them
//! (`object.__new__`, then `__dict__`, `__pydantic_fields_set__`,
//! `__pydantic_extra__` and `__pydantic_private__` set through the slots of
//! pydantic's `BaseModel`), without validation. The plugin checks its
//! objects against validated ones at import and does not use it if they
//! differ.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySet, PyString};

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
    /// `"function"`, the `type` of a call's first entry.
    pub(crate) fn function_type<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.function_type.bind(py).clone().into_any()
    }

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

    /// `DeltaFunctionCall(name=name, arguments=arguments)`, each field set
    /// only when given.
    pub(crate) fn build_function<'py>(
        &self,
        py: Python<'py>,
        name: Option<Bound<'py, PyAny>>,
        arguments: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let n = &self.names;
        let d = self.blank(py, Kind::Function)?;
        let mut set = Vec::with_capacity(2);
        if let Some(name) = name {
            d.set_item(n.name.bind(py), name)?;
            set.push(&n.name);
        }
        if let Some(arguments) = arguments {
            d.set_item(n.arguments.bind(py), arguments)?;
            set.push(&n.arguments);
        }
        self.make(py, Kind::Function, d, &set)
    }

    /// `DeltaToolCall(index=index, function=function)`, plus `id` and
    /// `type` when there is an id.
    pub(crate) fn build_tool_call<'py>(
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
    pub(crate) fn build_message<'py>(
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

    /// `DeltaFunctionCall(name=name, arguments=arguments)`, the fields
    /// given.
    #[pyo3(signature = (name = None, arguments = None))]
    fn function<'py>(
        &self,
        py: Python<'py>,
        name: Option<Bound<'py, PyAny>>,
        arguments: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.build_function(py, name, arguments)
    }
}
