//! A tool described in the style of its format's notation: its JSON
//! Schema for JSON formats, a list of parameters for formats that write
//! raw parameter values, a Python signature for Python-call formats.

use std::fmt::Write;

use serde_json::{Map, Value};

use crate::manifest::example::{alternative, main_type, required};
use crate::manifest::notation::Notation;
use crate::tools::Tool;

/// How a format that writes raw parameter values writes a list or an
/// object (found by rendering one: see `Manifest`'s probe).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Nesting {
    /// A list parameter is written as JSON text (`Some(false)`: item by
    /// item, in markup; `None`: unknown).
    pub lists_as_json: Option<bool>,
    /// An object parameter is written as JSON text.
    pub objects_as_json: Option<bool>,
}

/// The description of `tool` (without its example), ending in a newline.
pub(crate) fn tool(notation: Notation, tool: &Tool, nesting: Nesting) -> String {
    let mut out = String::new();
    match notation {
        Notation::Json => json(&mut out, tool),
        Notation::Parameters => parameters(&mut out, tool, nesting),
        Notation::Python => python(&mut out, tool),
    }
    out
}

/// What a notation's tool descriptions are, said once before them.
pub(crate) fn preamble(notation: Notation, nesting: Nesting) -> String {
    match notation {
        Notation::Json => {
            "Each tool's parameters are given as a JSON Schema; a call's arguments are a JSON \
             object that follows it."
                .to_owned()
        }
        Notation::Parameters => {
            let mut s = "Each tool's parameters are listed with their types; a call writes each \
                         parameter by its name, its value as plain text, as the examples show."
                .to_owned();
            match nesting.lists_as_json {
                Some(true) => s.push_str(
                    " A list is written as a JSON array (`[\"a\", \"b\"]`) inside its parameter.",
                ),
                Some(false) => s.push_str(
                    " A list is written item by item, each item in its own element inside the \
                     parameter, as the examples show.",
                ),
                None => {}
            }
            match nesting.objects_as_json {
                Some(true) => s.push_str(
                    " An object is written as a JSON object (`{\"key\": \"value\"}`) inside its \
                     parameter.",
                ),
                Some(false) => s.push_str(
                    " An object is written member by member, each in its own element inside the \
                     parameter, as the examples show.",
                ),
                None => {}
            }
            s
        }
        Notation::Python => "Each tool is given as a Python function signature; a call passes \
                             every argument by keyword."
            .to_owned(),
    }
}

fn heading(out: &mut String, tool: &Tool) {
    let _ = writeln!(out, "## {}", tool.name);
    if !tool.description.trim().is_empty() {
        let _ = writeln!(out, "{}", tool.description.trim());
    }
}

fn has_params(tool: &Tool) -> bool {
    tool.parameters
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty())
}

fn json(out: &mut String, tool: &Tool) {
    heading(out, tool);
    if !has_params(tool) {
        out.push_str("Parameters: none.\n");
        return;
    }
    let schema = serde_json::to_string(&tool.parameters).unwrap_or_default();
    let _ = writeln!(out, "Parameters (JSON Schema):\n{schema}");
}

fn parameters(out: &mut String, tool: &Tool, nesting: Nesting) {
    heading(out, tool);
    let Some(props) = tool
        .parameters
        .get("properties")
        .and_then(Value::as_object)
        .filter(|p| !p.is_empty())
    else {
        out.push_str("Parameters: none.\n");
        return;
    };
    out.push_str("Parameters:\n");
    param_list(out, props, &required(&tool.parameters), 0, nesting);
}

/// One line a parameter, its members and items indented below it.
fn param_list(
    out: &mut String,
    props: &Map<String, Value>,
    required: &[&str],
    depth: usize,
    nesting: Nesting,
) {
    for (key, schema) in props {
        let indent = "  ".repeat(depth);
        let need = if required.contains(&key.as_str()) {
            "required"
        } else {
            "optional"
        };
        let _ = write!(out, "{indent}- {key} ({}, {need})", kind(schema));
        match (description(schema), enum_values(schema)) {
            (Some(d), Some(e)) => {
                let _ = write!(out, ": {d} One of: {e}.");
            }
            (Some(d), None) => {
                let _ = write!(out, ": {d}");
            }
            (None, Some(e)) => {
                let _ = write!(out, ": one of {e}.");
            }
            (None, None) => {}
        }
        out.push('\n');
        nested(out, schema, depth + 1, nesting);
    }
}

/// The members of an object, or of a list's items, below its line.
fn nested(out: &mut String, schema: &Value, depth: usize, nesting: Nesting) {
    if depth > 6 {
        return;
    }
    let schema = resolved(schema);
    match main_type(schema) {
        Some("object") => {
            if let Some(p) = schema.get("properties").and_then(Value::as_object) {
                param_list(out, p, &required(schema), depth, nesting);
            }
        }
        Some("array") => {
            let Some(items) = schema.get("items") else {
                return;
            };
            let items = resolved(items);
            let indent = "  ".repeat(depth);
            let mut line = format!("{indent}- each item: {}", kind(items));
            if let Some(d) = description(items) {
                let _ = write!(line, ", {d}");
            }
            if let Some(e) = enum_values(items) {
                let _ = write!(line, ", one of {e}");
            }
            let _ = writeln!(out, "{line}");
            if main_type(items) == Some("object") {
                if let Some(p) = items.get("properties").and_then(Value::as_object) {
                    param_list(out, p, &required(items), depth + 1, nesting);
                }
            }
        }
        _ => {}
    }
}

/// The schema, or its first alternative that is not null.
fn resolved(schema: &Value) -> &Value {
    if schema.get("type").is_none() {
        if let Some(a) = alternative(schema) {
            return a;
        }
    }
    schema
}

/// `string`, `integer`, `list of strings`, `object`…
fn kind(schema: &Value) -> String {
    let schema = resolved(schema);
    match main_type(schema) {
        Some("array") => match schema.get("items").map(resolved).and_then(main_type) {
            Some("array") => "list of lists".to_owned(),
            Some("object") => "list of objects".to_owned(),
            Some(t) => format!("list of {t}s"),
            None => "list".to_owned(),
        },
        Some(t) => t.to_owned(),
        None => "any".to_owned(),
    }
}

fn description(schema: &Value) -> Option<&str> {
    schema
        .get("description")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|d| !d.is_empty())
}

/// `"a", "b"`: an enum's values as JSON.
fn enum_values(schema: &Value) -> Option<String> {
    let e = resolved(schema).get("enum")?.as_array()?;
    Some(
        e.iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    )
}

fn python(out: &mut String, tool: &Tool) {
    let props = tool
        .parameters
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let required = required(&tool.parameters);
    let (req, opt): (Vec<_>, Vec<_>) = props
        .iter()
        .partition(|(k, _)| required.contains(&k.as_str()));
    let mut args: Vec<String> = req
        .iter()
        .map(|(k, s)| format!("{k}: {}", py_type(s, 0)))
        .collect();
    args.extend(
        opt.iter()
            .map(|(k, s)| format!("{k}: {} = None", py_type(s, 0))),
    );
    let _ = writeln!(out, "def {}({}):", tool.name, args.join(", "));
    let mut doc = Vec::new();
    if !tool.description.trim().is_empty() {
        doc.push(tool.description.trim().to_owned());
    }
    let documented: Vec<_> = req
        .iter()
        .chain(&opt)
        .filter(|(_, s)| description(s).is_some() || py_members(s).is_some())
        .collect();
    if !documented.is_empty() {
        if !doc.is_empty() {
            doc.push(String::new());
        }
        doc.push("Args:".to_owned());
        for (k, s) in documented {
            let said: Vec<String> = description(s)
                .map(str::to_owned)
                .into_iter()
                .chain(py_members(s))
                .collect();
            if !said.is_empty() {
                doc.push(format!("    {k}: {}", said.join(" ")));
            }
        }
    }
    match doc.as_slice() {
        [] => {
            out.push_str("    ...\n");
            return;
        }
        [one] => {
            let _ = writeln!(out, "    \"\"\"{one}\"\"\"");
            return;
        }
        _ => {}
    }
    out.push_str("    \"\"\"");
    for (i, line) in doc.iter().enumerate() {
        if i > 0 {
            out.push('\n');
            if !line.is_empty() {
                out.push_str("    ");
            }
        }
        out.push_str(line);
    }
    out.push_str("\n    \"\"\"\n");
}

/// A Python annotation: `str`, `int`, `list[str]`, `Literal["a", "b"]`,
/// `dict`.
fn py_type(schema: &Value, depth: usize) -> String {
    let schema = resolved(schema);
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        let vals: Vec<String> = e.iter().map(py_literal).collect();
        return format!("Literal[{}]", vals.join(", "));
    }
    match main_type(schema) {
        Some("string") => "str".into(),
        Some("integer") => "int".into(),
        Some("number") => "float".into(),
        Some("boolean") => "bool".into(),
        Some("null") => "None".into(),
        Some("array") if depth < 6 => match schema.get("items") {
            Some(items) => format!("list[{}]", py_type(items, depth + 1)),
            None => "list".into(),
        },
        Some("array") => "list".into(),
        Some("object") => "dict".into(),
        _ => "Any".into(),
    }
}

/// A JSON value as a Python literal.
fn py_literal(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        other => other.to_string(),
    }
}

/// The keys of a `dict` argument (or of the dicts of a list), said in
/// words: `A dict with keys: name (str, required), lat (float).`
fn py_members(schema: &Value) -> Option<String> {
    let schema = resolved(schema);
    let (obj, what) = match main_type(schema) {
        Some("object") => (schema, "A dict"),
        Some("array") => {
            let items = resolved(schema.get("items")?);
            (items, "Each item a dict")
        }
        _ => return None,
    };
    if main_type(obj) != Some("object") {
        return None;
    }
    let props = obj.get("properties")?.as_object()?;
    let req = required(obj);
    let keys: Vec<String> = props
        .iter()
        .map(|(k, s)| {
            let need = if req.contains(&k.as_str()) {
                ", required"
            } else {
                ""
            };
            format!("{k} ({}{need})", py_type(s, 1))
        })
        .collect();
    Some(format!("{what} with keys: {}.", keys.join(", ")))
}
