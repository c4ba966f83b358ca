//! `toolscan render`: a response — the object `parse --output final`
//! writes — written in a format, as the model would write it
//! (`Format::render`); or tool results — `tool` messages — as the format's
//! chat template writes them (`Format::render_tool_results`), printed as
//! the chat messages that carry them.

use std::io::{self, Read, Write};

use serde_json::Value;
use toolscan_core::render::RenderOptions;
use toolscan_core::{Arguments, Call, ToolResult};

use crate::args::RenderArgs;
use crate::failure::Failure;
use crate::setup::{format_named, open_input, read_tools, registry_with, Input};

pub fn run(args: RenderArgs) -> Result<(), Failure> {
    let frame = RenderOptions {
        before: args.frame_before.clone(),
        text_sep: args.frame_text_sep.clone(),
        lead: args.frame_lead.clone(),
        tail: args.frame_tail.clone(),
    };
    let (registry, _) = registry_with(args.format_file.as_deref())?;
    let name = args.format.as_str();
    let format = format_named(&registry, name)?;
    let tools = args.tools.as_deref().map(read_tools).transpose()?;
    let input = open_input(args.input.as_deref())?;
    let label = input.name().to_owned();
    let mut bytes = Vec::new();
    let read = match input {
        Input::Stdin => io::stdin().lock().read_to_end(&mut bytes),
        Input::File(mut f, _) => f.read_to_end(&mut bytes),
    };
    read.map_err(|e| Failure::Usage(format!("cannot read `{label}`: {e}")))?;
    let value: Value = serde_json::from_slice(&bytes)
        .map_err(|e| Failure::Usage(format!("{label}: not JSON: {e}")))?;
    let out = match tool_results(&value) {
        Some(results) => {
            let results = results.map_err(|e| Failure::Usage(format!("{label}: {e}")))?;
            let written = format
                .render_tool_results(&results)
                .map_err(|e| Failure::Failed(format!("cannot render in `{name}`: {e}")))?;
            let messages: Vec<Value> = written
                .messages
                .into_iter()
                .map(|content| serde_json::json!({"role": written.role, "content": content}))
                .collect();
            format!("{}\n", Value::Array(messages))
        }
        None => {
            let (text, calls) =
                response(value).map_err(|e| Failure::Usage(format!("{label}: {e}")))?;
            format
                .render_with(&text, &calls, tools.as_ref(), &frame)
                .map_err(|e| Failure::Failed(format!("cannot render in `{name}`: {e}")))?
        }
    };
    let stdout = io::stdout();
    let mut w = stdout.lock();
    w.write_all(out.as_bytes())
        .and_then(|()| w.flush())
        .map_err(Failure::Output)
}

/// The text and calls of a final response object.
fn response(v: Value) -> Result<(String, Vec<Call>), String> {
    let Value::Object(o) = v else {
        return Err("expected an object with `text` and `tool_calls`".into());
    };
    let text = match o.get("text") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err("`text` must be a string".into()),
    };
    let mut calls = Vec::new();
    let items = match o.get("tool_calls") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(a)) => a.as_slice(),
        Some(_) => return Err("`tool_calls` must be an array".into()),
    };
    for (i, c) in items.iter().enumerate() {
        // The OpenAI shape (`{"function": {"name", "arguments"}}`) or the
        // flat one `parse` writes.
        let f = c.get("function").unwrap_or(c);
        let name = f
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("tool_calls[{i}] has no string `name`"))?;
        let arguments = match f.get("arguments") {
            None | Some(Value::Null) => Arguments::empty(),
            Some(Value::String(s)) => Arguments::new(s.clone())
                .map_err(|e| format!("tool_calls[{i}].arguments: not JSON: {e}"))?,
            Some(v) => Arguments::new(v.to_string())
                .map_err(|e| format!("tool_calls[{i}].arguments: {e}"))?,
        };
        calls.push(Call {
            name: name.to_owned(),
            arguments,
            id: c.get("id").and_then(Value::as_str).map(str::to_owned),
        });
    }
    Ok((text, calls))
}

/// Tool results, if the input is a `tool` message or an array of them:
/// `None` for anything else (a response).
fn tool_results(v: &Value) -> Option<Result<Vec<ToolResult>, String>> {
    let is_tool = |m: &Value| m.get("role").and_then(Value::as_str) == Some("tool");
    let messages: Vec<&Value> = match v {
        Value::Object(_) if is_tool(v) => vec![v],
        Value::Array(items) if !items.is_empty() && items.iter().any(is_tool) => {
            items.iter().collect()
        }
        _ => return None,
    };
    Some(
        messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                if !is_tool(m) {
                    return Err(format!("[{i}] is not a message with \"role\": \"tool\""));
                }
                let content = match m.get("content") {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(s)) => s.clone(),
                    // Parts of text, joined.
                    Some(Value::Array(parts)) => parts
                        .iter()
                        .filter_map(|p| {
                            p.get("text").and_then(Value::as_str).or_else(|| p.as_str())
                        })
                        .collect(),
                    Some(other) => other.to_string(),
                };
                let name = m.get("name").and_then(Value::as_str).unwrap_or("");
                let mut r = ToolResult::new(name, content);
                r.id = m
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                Ok(r)
            })
            .collect(),
    )
}
