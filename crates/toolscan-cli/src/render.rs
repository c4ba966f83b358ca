//! `toolscan render`: a response — the object `parse --output final`
//! writes — written in a format, as the model would write it
//! (`Format::render`).

use std::io::{self, Read, Write};

use serde_json::Value;
use toolscan_core::{Arguments, Call};

use crate::args::RenderArgs;
use crate::failure::Failure;
use crate::setup::{open_input, read_tools, registry_with, Input};

pub fn run(args: RenderArgs) -> Result<(), Failure> {
    let (registry, _) = registry_with(args.format_file.as_deref())?;
    let name = args.format.as_str();
    let format = registry.get(name).ok_or_else(|| {
        Failure::Usage(
            registry
                .grammar(name)
                .err()
                .map_or_else(|| format!("`{name}` is not one format"), |e| e.to_string()),
        )
    })?;
    let tools = args.tools.as_deref().map(read_tools).transpose()?;
    let input = open_input(args.input.as_deref())?;
    let label = input.name().to_owned();
    let mut bytes = Vec::new();
    let read = match input {
        Input::Stdin => io::stdin().lock().read_to_end(&mut bytes),
        Input::File(mut f, _) => f.read_to_end(&mut bytes),
    };
    read.map_err(|e| Failure::Usage(format!("cannot read `{label}`: {e}")))?;
    let (text, calls) = response(&bytes).map_err(|e| Failure::Usage(format!("{label}: {e}")))?;
    let out = format
        .render(&text, &calls, tools.as_ref())
        .map_err(|e| Failure::Failed(format!("cannot render in `{name}`: {e}")))?;
    let stdout = io::stdout();
    let mut w = stdout.lock();
    w.write_all(out.as_bytes())
        .and_then(|()| w.flush())
        .map_err(Failure::Output)
}

/// The text and calls of a final response object.
fn response(bytes: &[u8]) -> Result<(String, Vec<Call>), String> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
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
