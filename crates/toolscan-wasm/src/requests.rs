//! The one-shot functions of the package (`parse`, `formats`,
//! `formatForModel`, `manifest`, `render`, `renderToolResults`): a request
//! in the input buffer, an answer in the output buffer, both JSON.

use serde::Deserialize;
use serde_json::{json, Value};
use toolscan_core::{Arguments, Call, Format, Notation, Registry, ToolResult};

use crate::buffers::{answer, with_input};
use crate::json::{write_value, Failure, JsResponse};
use crate::options;

/// `parse(text, options)`: the options' JSON, then the answer's bytes.
pub const PARSE: u32 = 1;
/// `formats()`: no input.
pub const FORMATS: u32 = 2;
/// `formatForModel(id)`: the model id's bytes.
pub const FORMAT_FOR_MODEL: u32 = 3;
/// `manifest(format, tools)`: `{"format", "tools"}`.
pub const MANIFEST: u32 = 4;
/// `render(format, response)`: `{"format", "text", "calls", "tools"}`.
pub const RENDER: u32 = 5;
/// `renderToolResults(format, results)`: `{"format", "results"}`.
pub const RENDER_TOOL_RESULTS: u32 = 6;
/// The crate's version: no input.
pub const VERSION: u32 = 7;

/// Runs request `op` on `len` bytes of the input buffer (`split`: where
/// [`PARSE`]'s options end).
pub(crate) fn run(op: u32, len: usize, split: usize) -> i32 {
    let result = with_input(len, |input| match op {
        PARSE => parse(input, split),
        FORMATS => Ok(formats()),
        FORMAT_FOR_MODEL => Ok(format_for_model(input)),
        MANIFEST => read(input).and_then(manifest),
        RENDER => read(input).and_then(render),
        RENDER_TOOL_RESULTS => read(input).and_then(render_tool_results),
        VERSION => Ok(Value::from(env!("CARGO_PKG_VERSION"))),
        other => Err(Failure::Request(format!("no request {other}"))),
    });
    answer(|out| match result {
        Ok(value) => write_value(out, &value),
        Err(f) => f.write(out),
    })
}

/// A request's JSON.
fn read<'a, T: Deserialize<'a>>(input: &'a [u8]) -> Result<T, Failure> {
    serde_json::from_slice(input).map_err(|e| Failure::Options(e.to_string()))
}

fn parse(input: &[u8], split: usize) -> Result<Value, Failure> {
    let (json, text) = input.split_at(split.min(input.len()));
    let config = options::read(json)?;
    if config.strict_utf8 {
        if let Err(e) = std::str::from_utf8(text) {
            return Err(Failure::InvalidUtf8(e.valid_up_to() as u64));
        }
    }
    let response = toolscan_core::parse(config.grammar, config.options, text);
    serde_json::to_value(JsResponse(&response)).map_err(|e| Failure::Request(e.to_string()))
}

fn formats() -> Value {
    Registry::builtin()
        .formats()
        .iter()
        .map(|f| json!({"name": f.name(), "models": f.models(), "description": f.description()}))
        .collect()
}

fn format_for_model(input: &[u8]) -> Value {
    let model = String::from_utf8_lossy(input);
    options::builtin_for_model(&model).map_or(Value::Null, Value::from)
}

/// Runs `write` with a built-in format, by name (not `auto`, which
/// writes nothing).
fn with_format<T>(
    name: &str,
    write: impl FnOnce(&Format) -> Result<T, Failure>,
) -> Result<T, Failure> {
    if name == "auto" {
        return Err(Failure::Options(
            "`auto` is not a format to write in: name the model's format".into(),
        ));
    }
    let registry = Registry::builtin();
    let f = registry
        .get(name)
        .ok_or_else(|| Failure::UnknownFormat(format!("unknown format `{name}`")))?;
    write(f)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestRequest {
    format: String,
    tools: Value,
}

fn manifest(r: ManifestRequest) -> Result<Value, Failure> {
    let tools = options::tools(&r.tools)?;
    let m = with_format(&r.format, |f| {
        f.manifest(&tools)
            .map_err(|e| Failure::Manifest(e.to_string()))
    })?;
    let notation = match m.notation {
        Notation::Json => "json",
        Notation::Parameters => "parameters",
        Notation::Python => "python",
        _ => "other",
    };
    Ok(json!({"text": m.text, "notation": notation, "examples": m.examples}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RenderRequest {
    format: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    calls: Vec<CallRequest>,
    tools: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallRequest {
    name: String,
    /// JSON text of an object, or the object.
    arguments: Option<Value>,
    id: Option<String>,
}

fn render(r: RenderRequest) -> Result<Value, Failure> {
    let tools = match r.tools.as_ref().filter(|t| !t.is_null()) {
        Some(t) => Some(options::tools(t)?),
        None => None,
    };
    let mut calls = Vec::with_capacity(r.calls.len());
    for (i, c) in r.calls.into_iter().enumerate() {
        let text = match c.arguments {
            None | Some(Value::Null) => "{}".to_owned(),
            Some(Value::String(s)) => s,
            Some(v @ Value::Object(_)) => v.to_string(),
            Some(_) => return Err(arguments_error(i)),
        };
        let arguments = Arguments::new(text)
            .ok()
            .filter(|a| a.as_str().trim_start().starts_with('{'))
            .ok_or_else(|| arguments_error(i))?;
        let mut call = Call::new(c.name, arguments);
        call.id = c.id;
        calls.push(call);
    }
    with_format(&r.format, |f| {
        f.render(&r.text, &calls, tools.as_ref())
            .map(Value::from)
            .map_err(|e| Failure::Render(e.to_string()))
    })
}

fn arguments_error(i: usize) -> Failure {
    Failure::Render(format!(
        "calls[{i}].arguments must be a JSON object or its JSON text"
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResultsRequest {
    format: String,
    results: Vec<ResultRequest>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResultRequest {
    name: String,
    id: Option<String>,
    content: String,
}

fn render_tool_results(r: ResultsRequest) -> Result<Value, Failure> {
    let results: Vec<ToolResult> = r
        .results
        .into_iter()
        .map(|x| ToolResult {
            name: x.name,
            id: x.id,
            content: x.content,
        })
        .collect();
    let written = with_format(&r.format, |f| Ok(f.write_tool_results(&results)))?;
    Ok(json!({"role": written.role, "messages": written.messages}))
}
