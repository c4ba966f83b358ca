//! The schema check of a completed call ([`Check`](crate::options::Check)):
//! its name against the tools list, its arguments against the tool's JSON
//! Schema. It runs once per call, when the call is dispatched, never on
//! the per-chunk path.
//!
//! What is checked is the part of JSON Schema a tool definition uses:
//! `type` (a name or a list of names, read as the parameter typing reads
//! them, `anyOf`/`oneOf` members' types and `nullable` included;
//! `integer` is a number without a fractional part), `required`,
//! `properties` of nested objects, `items` of arrays (one schema), `enum`
//! and `const`. Anything else (`$ref`, `pattern`, bounds,
//! `additionalProperties`) is not checked: a call is only flagged for what
//! the schema plainly says.

use serde_json::{Map, Value};

use crate::event::DiagnosticKind;
use crate::read::typing::Declared;
use crate::tools::Tools;

/// The most problems reported for one call (a long array of wrong items
/// would otherwise give a diagnostic each).
pub(crate) const MAX_PROBLEMS: usize = 16;

/// How deep the check follows nested schemas (the arguments' own depth is
/// bounded by the parser's limits; this bounds a schema's).
const MAX_DEPTH: usize = 64;

/// One thing a call does wrong: its kind, and the words that say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    pub kind: DiagnosticKind,
    pub message: String,
}

/// What is wrong with the call `name(arguments)` given `tools`: nothing
/// when the call fits (or the arguments are not JSON, which the parser
/// never dispatches).
pub(crate) fn check(tools: &Tools, index: usize, name: &str, arguments: &str) -> Vec<Problem> {
    let mut out = Checker {
        index,
        problems: Vec::new(),
    };
    let Some(tool) = tools.resolve(name) else {
        out.push(
            DiagnosticKind::UnknownTool,
            format_args!("names `{name}`, which is not one of the tools"),
        );
        return out.problems;
    };
    if !tool.parameters.is_object() {
        return out.problems;
    }
    let Ok(args) = serde_json::from_str::<Value>(arguments) else {
        return out.problems;
    };
    out.value(&tool.parameters, &args, &mut String::new(), 0);
    out.problems
}

struct Checker {
    index: usize,
    problems: Vec<Problem>,
}

impl Checker {
    fn full(&self) -> bool {
        self.problems.len() >= MAX_PROBLEMS
    }

    fn push(&mut self, kind: DiagnosticKind, what: std::fmt::Arguments<'_>) {
        if !self.full() {
            self.problems.push(Problem {
                kind,
                message: format!("call #{} {what}", self.index),
            });
        }
    }

    /// Checks `value`, found at `path` (empty: the arguments object),
    /// against `schema`.
    fn value(&mut self, whole: &Value, value: &Value, path: &mut String, depth: usize) {
        let Some(schema) = whole.as_object() else {
            return;
        };
        if self.full() || depth > MAX_DEPTH {
            return;
        }
        // Types as the parameter typing reads them; a schema that declares
        // none (an `enum` alone, say) is left to its other keys.
        let typed = ["type", "anyOf", "oneOf"]
            .iter()
            .any(|k| schema.contains_key(*k));
        let declared = Declared::from_schema(whole);
        if typed && !declared.is_untyped() && !declared.intersects(type_of(value)) {
            let at = shown(path);
            self.push(
                DiagnosticKind::WrongType,
                format_args!(
                    "has {at} of type {}, where its schema wants {}",
                    type_word(value),
                    wanted(schema)
                ),
            );
            return;
        }
        let allowed = match (schema.get("enum"), schema.get("const")) {
            (Some(Value::Array(values)), _) => Some(values.iter().any(|v| same(v, value))),
            (_, Some(c)) => Some(same(c, value)),
            _ => None,
        };
        if allowed == Some(false) {
            let at = shown(path);
            self.push(
                DiagnosticKind::NotInEnum,
                format_args!(
                    "has {at} = {value}, which is not one of the values its schema allows"
                ),
            );
            return;
        }
        match value {
            Value::Object(members) => self.object(schema, members, path, depth),
            Value::Array(items) => {
                let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) else {
                    return;
                };
                for (i, item) in items.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    self.value(item_schema, item, path, depth + 1);
                    path.truncate(len);
                    if self.full() {
                        return;
                    }
                }
            }
            _ => {}
        }
    }

    /// An object's `required` members and its `properties`.
    fn object(
        &mut self,
        schema: &Map<String, Value>,
        members: &Map<String, Value>,
        path: &mut String,
        depth: usize,
    ) {
        if let Some(Value::Array(required)) = schema.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !members.contains_key(name) {
                    let len = path.len();
                    push_key(path, name);
                    let at = shown(path);
                    self.push(
                        DiagnosticKind::MissingParameter,
                        format_args!("lacks the required {at}"),
                    );
                    path.truncate(len);
                }
            }
        }
        let Some(Value::Object(properties)) = schema.get("properties") else {
            return;
        };
        for (key, v) in members {
            let Some(sub) = properties.get(key) else {
                continue;
            };
            let len = path.len();
            push_key(path, key);
            self.value(sub, v, path, depth + 1);
            path.truncate(len);
            if self.full() {
                return;
            }
        }
    }
}

fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

/// Where a value is, in words.
fn shown(path: &str) -> String {
    if path.is_empty() {
        "arguments".to_owned()
    } else {
        format!("`{path}`")
    }
}

/// The one type flag of a JSON value (an integer is also a number).
fn type_of(value: &Value) -> Declared {
    match value {
        Value::Null => Declared::NULL,
        Value::Bool(_) => Declared::BOOLEAN,
        Value::Number(n) if is_integer(n) => Declared::INTEGER | Declared::NUMBER,
        Value::Number(_) => Declared::NUMBER,
        Value::String(_) => Declared::STRING,
        Value::Array(_) => Declared::ARRAY,
        Value::Object(_) => Declared::OBJECT,
    }
}

fn is_integer(n: &serde_json::Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

fn type_word(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if is_integer(n) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The schema's `type` as written (or `anyOf`/`oneOf`), for a message.
fn wanted(schema: &Map<String, Value>) -> String {
    match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(t @ Value::Array(_)) => t.to_string(),
        _ => "one of the types of its `anyOf`/`oneOf`".to_owned(),
    }
}

/// JSON equality, numbers compared by value (`1` is `1.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}
