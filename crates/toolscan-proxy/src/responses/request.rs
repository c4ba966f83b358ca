//! A Responses request (`POST /v1/responses`) as the Chat Completions
//! request that asks the upstream the same thing. The mapping is in the
//! [module documentation](super).

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::echo::Echo;
use super::error::RequestError;
use super::store::{ResponseStore, Turn};

/// A Responses request, translated.
#[derive(Debug)]
pub(crate) struct Translated {
    /// The Chat Completions request to send upstream. Its `tools`,
    /// `tool_choice` and `parallel_tool_calls` are in Chat Completions
    /// shape, so the rules that decide how a chat answer is read apply to
    /// it unchanged.
    pub(crate) chat: Value,
    /// What the response objects repeat of the request.
    pub(crate) echo: Echo,
    /// Whether the client asked for a stream of events.
    pub(crate) stream: bool,
    /// The conversation `previous_response_id` continues (to keep with
    /// this response, see [`ResponseStore::put`]).
    pub(crate) history: Option<Arc<Turn>>,
    /// This request's input as items (a string `input` becomes one user
    /// message), to keep with this response's output items.
    pub(crate) input: Vec<Value>,
    /// Whether the response may be kept for a later
    /// `previous_response_id`: the request did not say `store: false`.
    pub(crate) keep: bool,
}

/// Request fields that need the server to keep state: refused.
const STATEFUL: [&str; 2] = ["conversation", "prompt"];

/// Chat Completions fields that are not part of the Responses API but that
/// clients send to local servers (`extra_body`): passed on as they came.
const EXTRA: [&str; 12] = [
    "stop",
    "seed",
    "frequency_penalty",
    "presence_penalty",
    "logit_bias",
    "top_k",
    "min_p",
    "repetition_penalty",
    "chat_template_kwargs",
    "skip_special_tokens",
    "n_probs",
    "cache_prompt",
];

/// Translates `request` (a Responses request object). `store`: the kept
/// responses `previous_response_id` may name (`None`: none are kept, and
/// `previous_response_id` is an error).
pub(crate) fn translate(
    request: &Value,
    store: Option<&ResponseStore>,
) -> Result<Translated, RequestError> {
    let r = request.as_object().ok_or(RequestError::NotAnObject)?;
    let get = |k: &str| r.get(k).filter(|v| !v.is_null());
    refuse_stateful(r)?;
    let input = resolve_references(input_items(get("input"))?, store)?;
    let history = match get("previous_response_id") {
        None => None,
        Some(id) => {
            let id = id
                .as_str()
                .ok_or_else(|| bad("previous_response_id", "a string"))?;
            let store = store.ok_or(RequestError::NoStore)?;
            let kept = store.get(id);
            Some(kept.ok_or_else(|| RequestError::UnknownPrevious { id: id.into() })?)
        }
    };
    if input.is_empty() && history.is_none() {
        return Err(RequestError::NoInput);
    }
    let mut chat = Map::new();
    if let Some(model) = get("model") {
        chat.insert("model".into(), model.clone());
    }
    let messages = conversation(get("instructions"), history.as_ref(), &input)?;
    chat.insert("messages".into(), Value::Array(messages));
    add_tools(r, &mut chat)?;
    add_parameters(r, &mut chat)?;
    let stream = get("stream").and_then(Value::as_bool).unwrap_or(false);
    if stream {
        chat.insert("stream".into(), true.into());
        chat.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Ok(Translated {
        chat: Value::Object(chat),
        echo: Echo::new(request),
        stream,
        history,
        input,
        keep: get("store").and_then(Value::as_bool) != Some(false),
    })
}

/// Refuses the fields that need state kept by the server.
fn refuse_stateful(r: &Map<String, Value>) -> Result<(), RequestError> {
    for field in STATEFUL {
        if r.get(field).is_some_and(|v| !v.is_null()) {
            return Err(RequestError::UnsupportedField { field });
        }
    }
    if r.get("background").and_then(Value::as_bool) == Some(true) {
        return Err(RequestError::UnsupportedField {
            field: "background",
        });
    }
    Ok(())
}

/// The chat messages: `instructions`, the kept conversation, the input.
fn conversation(
    instructions: Option<&Value>,
    history: Option<&Arc<Turn>>,
    input: &[Value],
) -> Result<Vec<Value>, RequestError> {
    let mut messages = Vec::new();
    match instructions {
        None => {}
        Some(Value::String(s)) => messages.push(json!({"role": "system", "content": s})),
        Some(_) => return Err(bad("instructions", "a string")),
    }
    if let Some(h) = history {
        for (i, item) in h.history().iter().enumerate() {
            add_item(&mut messages, item, i)?;
        }
    }
    for (i, item) in input.iter().enumerate() {
        add_item(&mut messages, item, i)?;
    }
    merge_leading_system(&mut messages);
    Ok(messages)
}

/// `tools`, `tool_choice`, `parallel_tool_calls` in chat shape.
fn add_tools(r: &Map<String, Value>, chat: &mut Map<String, Value>) -> Result<(), RequestError> {
    let get = |k: &str| r.get(k).filter(|v| !v.is_null());
    let mut tools = match get("tools") {
        None => Vec::new(),
        Some(Value::Array(tools)) => tools
            .iter()
            .enumerate()
            .map(|(i, t)| chat_tool(t, i))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(bad("tools", "an array")),
    };
    if let Some(choice) = get("tool_choice") {
        let choice = chat_tool_choice(choice, &mut tools)?;
        chat.insert("tool_choice".into(), choice);
    }
    if !tools.is_empty() {
        chat.insert("tools".into(), Value::Array(tools));
    }
    if let Some(p) = get("parallel_tool_calls") {
        chat.insert("parallel_tool_calls".into(), p.clone());
    }
    Ok(())
}

/// The token limit, sampling parameters, output format and reasoning
/// effort.
fn add_parameters(
    r: &Map<String, Value>,
    chat: &mut Map<String, Value>,
) -> Result<(), RequestError> {
    let get = |k: &str| r.get(k).filter(|v| !v.is_null());
    if let Some(n) = get("max_output_tokens") {
        chat.insert("max_tokens".into(), n.clone());
    }
    for k in ["temperature", "top_p", "user", "service_tier"]
        .into_iter()
        .chain(EXTRA)
    {
        if let Some(v) = get(k) {
            chat.insert(k.into(), v.clone());
        }
    }
    if let Some(n) = get("top_logprobs") {
        chat.insert("logprobs".into(), true.into());
        chat.insert("top_logprobs".into(), n.clone());
    }
    if let Some(text) = get("text") {
        if let Some(format) = text.get("format").filter(|f| !f.is_null()) {
            if let Some(f) = response_format(format)? {
                chat.insert("response_format".into(), f);
            }
        }
        if let Some(v) = text.get("verbosity").filter(|v| !v.is_null()) {
            chat.insert("verbosity".into(), v.clone());
        }
    }
    let effort = get("reasoning").and_then(|r| r.get("effort"));
    if let Some(effort) = effort.filter(|e| !e.is_null()) {
        chat.insert("reasoning_effort".into(), effort.clone());
    }
    Ok(())
}

fn bad(param: impl Into<String>, expected: &'static str) -> RequestError {
    RequestError::BadField {
        param: param.into(),
        expected,
    }
}

/// `input` as items: a string is one user message.
fn input_items(input: Option<&Value>) -> Result<Vec<Value>, RequestError> {
    match input {
        None => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![
            json!({"type": "message", "role": "user", "content": s}),
        ]),
        Some(Value::Array(items)) => Ok(items.clone()),
        Some(_) => Err(bad("input", "a string or an array of items")),
    }
}

/// `input` with each `item_reference` replaced by the kept item it names
/// (clients that rely on the server keeping their earlier outputs, such
/// as the AI SDK with `store: true`, send those).
fn resolve_references(
    items: Vec<Value>,
    store: Option<&ResponseStore>,
) -> Result<Vec<Value>, RequestError> {
    let reference = |item: &Value| match item.get("type").and_then(Value::as_str) {
        Some("item_reference") => true,
        // Its `type` may be left out: an item with an id and nothing else.
        None => item.get("role").is_none() && item.get("id").is_some(),
        Some(_) => false,
    };
    items
        .into_iter()
        .enumerate()
        .map(|(index, item)| {
            if !reference(&item) {
                return Ok(item);
            }
            let id = item
                .get("id")
                .and_then(Value::as_str)
                .ok_or_else(|| bad(format!("input[{index}].id"), "a string"))?;
            let store = store.ok_or(RequestError::ItemReferenceNoStore { index })?;
            store
                .item(id)
                .ok_or_else(|| RequestError::UnknownItemReference {
                    index,
                    id: id.into(),
                })
        })
        .collect()
}

/// Adds input item `item` (at `index`) to the chat `messages`.
fn add_item(messages: &mut Vec<Value>, item: &Value, index: usize) -> Result<(), RequestError> {
    let Some(o) = item.as_object() else {
        return Err(bad(format!("input[{index}]"), "an object"));
    };
    let kind = o.get("type").and_then(Value::as_str);
    match kind {
        // An easy input message has a role and no type.
        Some("message") => messages.push(message(o, index)?),
        None if o.contains_key("role") => messages.push(message(o, index)?),
        Some("function_call") => {
            let call = tool_call(o, index)?;
            // Consecutive calls, and calls right after the assistant's
            // text, are one assistant message.
            match messages.last_mut().and_then(Value::as_object_mut) {
                Some(last) if last.get("role").and_then(Value::as_str) == Some("assistant") => {
                    match last.get_mut("tool_calls") {
                        Some(Value::Array(calls)) => calls.push(call),
                        _ => {
                            last.insert("tool_calls".into(), json!([call]));
                        }
                    }
                }
                _ => messages.push(json!({"role": "assistant", "content": null,
                    "tool_calls": [call]})),
            }
        }
        Some("function_call_output") => {
            let call_id = o
                .get("call_id")
                .and_then(Value::as_str)
                .ok_or_else(|| bad(format!("input[{index}].call_id"), "a string"))?;
            let content = match o.get("output") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(parts)) => tool_output_text(parts, index)?,
                _ => {
                    return Err(bad(
                        format!("input[{index}].output"),
                        "a string or an array of content parts",
                    ))
                }
            };
            messages.push(json!({"role": "tool", "tool_call_id": call_id, "content": content}));
        }
        // The model's reasoning of an earlier turn: Chat Completions has
        // no field every upstream takes for it (chat templates drop it
        // from earlier turns), so it is left out.
        Some("reasoning") => {}
        Some(other) => {
            return Err(RequestError::UnsupportedItem {
                index,
                kind: other.into(),
            })
        }
        None => {
            return Err(bad(
                format!("input[{index}]"),
                "an item with a `type` or a `role`",
            ))
        }
    }
    Ok(())
}

/// Makes the system messages that open the conversation (`instructions`,
/// then `system` and `developer` items) one: many chat templates accept a
/// system message only first (Qwen3.5's raises "System message must be at
/// the beginning."). Their texts are joined by a blank line; a system
/// message with other than text parts is left as it is.
fn merge_leading_system(messages: &mut Vec<Value>) {
    let leading = messages
        .iter()
        .take_while(|m| m.get("role").and_then(Value::as_str) == Some("system"))
        .count();
    if leading < 2 {
        return;
    }
    let mut texts = Vec::with_capacity(leading);
    for m in &messages[..leading] {
        match m.get("content") {
            Some(Value::String(s)) => texts.push(s.clone()),
            Some(Value::Array(parts)) => {
                let mut text = String::new();
                for p in parts {
                    match (
                        p.get("type").and_then(Value::as_str),
                        p.get("text").and_then(Value::as_str),
                    ) {
                        (Some("text"), Some(t)) => text.push_str(t),
                        _ => return,
                    }
                }
                texts.push(text);
            }
            _ => return,
        }
    }
    messages.splice(
        ..leading,
        [json!({"role": "system", "content": texts.join("\n\n")})],
    );
}

/// A message item as a chat message. `developer` becomes `system` (the
/// role chat templates know).
fn message(o: &Map<String, Value>, index: usize) -> Result<Value, RequestError> {
    let role = o.get("role").and_then(Value::as_str).unwrap_or_default();
    let role = match role {
        "user" | "assistant" | "system" => role,
        "developer" => "system",
        other => {
            return Err(RequestError::UnsupportedRole {
                index,
                role: other.into(),
            })
        }
    };
    let content = match o.get("content") {
        Some(Value::String(s)) => Value::String(s.clone()),
        Some(Value::Array(parts)) => {
            let parts = parts
                .iter()
                .enumerate()
                .map(|(j, p)| content_part(p, index, j))
                .collect::<Result<Vec<_>, _>>()?;
            chat_content(role, parts)
        }
        _ => {
            return Err(bad(
                format!("input[{index}].content"),
                "a string or an array of content parts",
            ))
        }
    };
    Ok(json!({"role": role, "content": content}))
}

/// A message's chat content from its parts: one text part is a string, as
/// is an assistant's text in several parts (the pieces of one answer);
/// anything else the array of parts.
fn chat_content(role: &str, parts: Vec<Value>) -> Value {
    let text = |p: &Value| {
        (p.get("type").and_then(Value::as_str) == Some("text")).then(|| {
            p.get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        })
    };
    let texts: Option<Vec<String>> = parts.iter().map(text).collect();
    match texts {
        Some(t) if t.len() == 1 || (role == "assistant" && !t.is_empty()) => t.concat().into(),
        _ => Value::Array(parts),
    }
}

/// A content part as a chat content part.
fn content_part(part: &Value, index: usize, j: usize) -> Result<Value, RequestError> {
    let param = || format!("input[{index}].content[{j}]");
    let kind = part.get("type").and_then(Value::as_str).unwrap_or_default();
    let field = |k: &str| part.get(k).filter(|v| !v.is_null());
    let unsupported = || RequestError::UnsupportedContent {
        param: param(),
        kind: kind.into(),
    };
    match kind {
        "input_text" | "output_text" | "text" => {
            let text = field("text")
                .and_then(Value::as_str)
                .ok_or_else(|| bad(format!("{}.text", param()), "a string"))?;
            Ok(json!({"type": "text", "text": text}))
        }
        "refusal" => {
            let text = field("refusal").and_then(Value::as_str).unwrap_or_default();
            Ok(json!({"type": "text", "text": text}))
        }
        "input_image" => {
            let url = field("image_url").ok_or_else(unsupported)?;
            let mut image = json!({"url": url});
            if let Some(d) = field("detail") {
                image["detail"] = d.clone();
            }
            Ok(json!({"type": "image_url", "image_url": image}))
        }
        "input_file" => {
            let mut file = Map::new();
            for k in ["file_data", "file_id", "filename"] {
                if let Some(v) = field(k) {
                    file.insert(k.into(), v.clone());
                }
            }
            if !file.contains_key("file_data") && !file.contains_key("file_id") {
                return Err(unsupported());
            }
            Ok(json!({"type": "file", "file": file}))
        }
        "input_audio" => {
            let audio = field("input_audio").ok_or_else(unsupported)?;
            Ok(json!({"type": "input_audio", "input_audio": audio}))
        }
        _ => Err(unsupported()),
    }
}

/// A `function_call_output`'s output given as parts: its text parts, one
/// after the other (a chat tool message holds text).
fn tool_output_text(parts: &[Value], index: usize) -> Result<String, RequestError> {
    let mut text = String::new();
    for (j, p) in parts.iter().enumerate() {
        match p.get("type").and_then(Value::as_str) {
            Some("input_text" | "output_text" | "text") => {
                text.push_str(p.get("text").and_then(Value::as_str).unwrap_or_default());
            }
            other => {
                return Err(RequestError::UnsupportedContent {
                    param: format!("input[{index}].output[{j}]"),
                    kind: other.unwrap_or_default().into(),
                })
            }
        }
    }
    Ok(text)
}

/// A `function_call` item as a chat `tool_calls` entry: its `call_id` is
/// the entry's `id`.
fn tool_call(o: &Map<String, Value>, index: usize) -> Result<Value, RequestError> {
    let string = |k: &str| {
        o.get(k)
            .and_then(Value::as_str)
            .ok_or_else(|| bad(format!("input[{index}].{k}"), "a string"))
    };
    Ok(json!({"id": string("call_id")?, "type": "function",
        "function": {"name": string("name")?, "arguments": string("arguments")?}}))
}

/// A Responses tool (flat: `{type, name, description, parameters,
/// strict}`) as a chat tool (`{type, function: {…}}`); anything but a
/// function is refused.
fn chat_tool(tool: &Value, index: usize) -> Result<Value, RequestError> {
    let kind = tool.get("type").and_then(Value::as_str).unwrap_or_default();
    if kind != "function" {
        return Err(RequestError::BuiltinTool {
            index,
            kind: kind.into(),
        });
    }
    let name = tool
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| bad(format!("tools[{index}].name"), "a string"))?;
    let mut function = Map::new();
    function.insert("name".into(), name.into());
    for k in ["description", "parameters", "strict"] {
        if let Some(v) = tool.get(k).filter(|v| !v.is_null()) {
            function.insert(k.into(), v.clone());
        }
    }
    Ok(json!({"type": "function", "function": function}))
}

/// A Responses `tool_choice` in chat shape. `allowed_tools` keeps only
/// the tools it names (so every upstream honours it) and becomes its
/// mode, `auto` or `required`.
fn chat_tool_choice(choice: &Value, tools: &mut Vec<Value>) -> Result<Value, RequestError> {
    if let Some(s) = choice.as_str() {
        return match s {
            "auto" | "none" | "required" => Ok(s.into()),
            _ => Err(bad(
                "tool_choice",
                "`auto`, `none`, `required` or an object",
            )),
        };
    }
    let kind = choice
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match kind {
        "function" => {
            let name = choice
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("tool_choice.name", "a string"))?;
            Ok(json!({"type": "function", "function": {"name": name}}))
        }
        "allowed_tools" => {
            let mut names = Vec::new();
            for t in choice
                .get("tools")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                match (
                    t.get("type").and_then(Value::as_str),
                    t.get("name").and_then(Value::as_str),
                ) {
                    (Some("function"), Some(name)) => names.push(name.to_owned()),
                    (kind, _) => {
                        return Err(RequestError::BuiltinToolChoice {
                            kind: kind.unwrap_or_default().into(),
                        })
                    }
                }
            }
            tools.retain(|t| {
                t.pointer("/function/name")
                    .and_then(Value::as_str)
                    .is_some_and(|n| names.iter().any(|k| k == n))
            });
            match choice.get("mode").and_then(Value::as_str) {
                Some("required") => Ok("required".into()),
                _ => Ok("auto".into()),
            }
        }
        other => Err(RequestError::BuiltinToolChoice { kind: other.into() }),
    }
}

/// `text.format` as a chat `response_format` (`None`: plain text, the
/// default).
fn response_format(format: &Value) -> Result<Option<Value>, RequestError> {
    match format.get("type").and_then(Value::as_str) {
        Some("text") => Ok(None),
        Some("json_object") => Ok(Some(json!({"type": "json_object"}))),
        Some("json_schema") => {
            let mut schema = Map::new();
            for k in ["name", "schema", "description", "strict"] {
                if let Some(v) = format.get(k).filter(|v| !v.is_null()) {
                    schema.insert(k.into(), v.clone());
                }
            }
            Ok(Some(json!({"type": "json_schema", "json_schema": schema})))
        }
        _ => Err(bad(
            "text.format.type",
            "`text`, `json_object` or `json_schema`",
        )),
    }
}

/// What decides how the answer to a Responses request forwarded as it is
/// (the passthrough) is read, in chat shape: its `model`, its function
/// `tools`, `tool_choice` (a named function, or `none`…) and
/// `parallel_tool_calls`, so the chat route's rules (parse only when
/// tools are offered…) apply to it. Tools of other types are the
/// upstream's to run: left out.
pub(crate) fn parse_view(request: &Value) -> Value {
    let mut view = Map::new();
    let get = |k: &str| request.get(k).filter(|v| !v.is_null());
    if let Some(m) = get("model") {
        view.insert("model".into(), m.clone());
    }
    let mut tools: Vec<Value> = get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, t)| chat_tool(t, i).ok())
        .collect();
    if let Some(choice) = get("tool_choice") {
        if let Ok(c) = chat_tool_choice(choice, &mut tools) {
            view.insert("tool_choice".into(), c);
        }
    }
    if !tools.is_empty() {
        view.insert("tools".into(), Value::Array(tools));
    }
    if let Some(p) = get("parallel_tool_calls") {
        view.insert("parallel_tool_calls".into(), p.clone());
    }
    Value::Object(view)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn chat(request: Value) -> Value {
        match translate(&request, None) {
            Ok(t) => t.chat,
            Err(e) => panic!("{e}"),
        }
    }

    fn refused(request: Value) -> RequestError {
        match translate(&request, None) {
            Ok(t) => panic!("translated: {}", t.chat),
            Err(e) => e,
        }
    }

    #[test]
    fn a_string_input_is_one_user_message_after_the_instructions() {
        let c = chat(json!({"model": "m", "input": "Hi", "instructions": "Be brief."}));
        assert_eq!(
            c,
            json!({"model": "m", "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Hi"}]})
        );
    }

    #[test]
    fn message_items_keep_their_roles_and_text_parts() {
        let c = chat(json!({"input": [
            {"role": "developer", "content": "rules"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"}]},
            {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
             "content": [{"type": "output_text", "text": "b", "annotations": []},
                         {"type": "output_text", "text": "c", "annotations": []}]},
            {"role": "user", "content": [{"type": "input_text", "text": "d"},
                {"type": "input_image", "image_url": "http://x/i.png", "detail": "low"}]}]}));
        assert_eq!(
            c["messages"],
            json!([
                {"role": "system", "content": "rules"},
                {"role": "user", "content": "a"},
                {"role": "assistant", "content": "bc"},
                {"role": "user", "content": [{"type": "text", "text": "d"},
                    {"type": "image_url", "image_url": {"url": "http://x/i.png", "detail": "low"}}]}])
        );
    }

    #[test]
    fn consecutive_function_calls_are_one_assistant_message_and_outputs_tool_messages() {
        let c = chat(json!({"input": [
            {"role": "user", "content": "weather?"},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Checking."}]},
            {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "get", "arguments": "{\"c\":\"Paris\"}"},
            {"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "get", "arguments": "{\"c\":\"Rome\"}"},
            {"type": "function_call_output", "call_id": "call_a", "output": "21C"},
            {"type": "function_call_output", "call_id": "call_b",
             "output": [{"type": "input_text", "text": "25C"}]}]}));
        assert_eq!(
            c["messages"],
            json!([
                {"role": "user", "content": "weather?"},
                {"role": "assistant", "content": "Checking.", "tool_calls": [
                    {"id": "call_a", "type": "function", "function": {"name": "get", "arguments": "{\"c\":\"Paris\"}"}},
                    {"id": "call_b", "type": "function", "function": {"name": "get", "arguments": "{\"c\":\"Rome\"}"}}]},
                {"role": "tool", "tool_call_id": "call_a", "content": "21C"},
                {"role": "tool", "tool_call_id": "call_b", "content": "25C"}])
        );
    }

    #[test]
    fn a_function_call_without_text_before_it_is_an_assistant_message_of_its_own() {
        let c = chat(json!({"input": [
            {"role": "user", "content": "x"},
            {"type": "function_call", "call_id": "call_a", "name": "f", "arguments": "{}"}]}));
        assert_eq!(
            c["messages"][1],
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]})
        );
    }

    #[test]
    fn function_tools_choice_and_parameters_take_the_chat_shape() {
        let c = chat(json!({"model": "m", "input": "x", "stream": true,
            "tools": [{"type": "function", "name": "get", "description": "d",
                "parameters": {"type": "object"}, "strict": true}],
            "tool_choice": {"type": "function", "name": "get"}, "parallel_tool_calls": false,
            "max_output_tokens": 100, "temperature": 0.5, "top_p": 0.9, "user": "u",
            "metadata": {"k": "v"}, "store": false, "reasoning": {"effort": "low", "summary": "auto"},
            "text": {"format": {"type": "json_schema", "name": "s", "schema": {"type": "object"}, "strict": true}},
            "top_k": 20}));
        assert_eq!(
            c,
            json!({"model": "m", "messages": [{"role": "user", "content": "x"}],
                "tools": [{"type": "function", "function": {"name": "get", "description": "d",
                    "parameters": {"type": "object"}, "strict": true}}],
                "tool_choice": {"type": "function", "function": {"name": "get"}},
                "parallel_tool_calls": false, "max_tokens": 100, "temperature": 0.5,
                "top_p": 0.9, "user": "u", "reasoning_effort": "low", "top_k": 20,
                "response_format": {"type": "json_schema", "json_schema": {"name": "s",
                    "schema": {"type": "object"}, "strict": true}},
                "stream": true, "stream_options": {"include_usage": true}})
        );
    }

    #[test]
    fn allowed_tools_keeps_only_the_tools_it_names() {
        let c = chat(json!({"input": "x", "tools": [
                {"type": "function", "name": "a"}, {"type": "function", "name": "b"}],
            "tool_choice": {"type": "allowed_tools", "mode": "required",
                "tools": [{"type": "function", "name": "b"}]}}));
        assert_eq!(
            c["tools"],
            json!([{"type": "function", "function": {"name": "b"}}])
        );
        assert_eq!(c["tool_choice"], "required");
    }

    #[test]
    fn builtin_tools_are_refused_by_name() {
        let e = refused(json!({"input": "x", "tools": [
            {"type": "function", "name": "f"}, {"type": "web_search"}]}));
        assert_eq!(
            e,
            RequestError::BuiltinTool {
                index: 1,
                kind: "web_search".into()
            }
        );
        for kind in [
            "file_search",
            "computer_use_preview",
            "code_interpreter",
            "image_generation",
            "mcp",
            "custom",
        ] {
            let e = refused(json!({"input": "x", "tools": [{"type": kind}]}));
            assert!(e.to_string().contains(kind), "{e}");
        }
        let e = refused(json!({"input": "x", "tool_choice": {"type": "file_search"}}));
        assert_eq!(
            e,
            RequestError::BuiltinToolChoice {
                kind: "file_search".into()
            }
        );
    }

    #[test]
    fn unknown_items_and_stateful_fields_are_refused() {
        let e = refused(json!({"input": [{"type": "web_search_call", "id": "ws_1"}]}));
        assert_eq!(
            e,
            RequestError::UnsupportedItem {
                index: 0,
                kind: "web_search_call".into()
            }
        );
        let e = refused(json!({"input": [{"type": "item_reference", "id": "msg_1"}]}));
        assert_eq!(e, RequestError::ItemReferenceNoStore { index: 0 });
        assert!(e.to_string().contains("store = false"), "{e}");
        let e = refused(json!({"input": [{"role": "tool", "content": "x"}]}));
        assert_eq!(
            e,
            RequestError::UnsupportedRole {
                index: 0,
                role: "tool".into()
            }
        );
        let e = refused(json!({"input": "x", "conversation": "conv_1"}));
        assert_eq!(
            e,
            RequestError::UnsupportedField {
                field: "conversation"
            }
        );
        let e = refused(json!({"input": "x", "background": true}));
        assert_eq!(
            e,
            RequestError::UnsupportedField {
                field: "background"
            }
        );
        let e = refused(json!({"input": [{"role": "user", "content": [
            {"type": "input_image", "file_id": "file_1"}]}]}));
        assert_eq!(e.param().as_deref(), Some("input[0].content[0]"));
        assert_eq!(refused(json!({"model": "m"})), RequestError::NoInput);
        assert_eq!(refused(json!([1])), RequestError::NotAnObject);
    }

    #[test]
    fn previous_response_id_needs_a_store_that_kept_it() {
        let request = json!({"input": "next", "previous_response_id": "resp_1"});
        assert_eq!(refused(request.clone()), RequestError::NoStore);
        let store = ResponseStore::new(4, Duration::from_secs(60));
        let e = translate(&request, Some(&store)).map(|t| t.chat);
        assert_eq!(
            e,
            Err(RequestError::UnknownPrevious {
                id: "resp_1".into()
            })
        );
        store.put(
            "resp_1".into(),
            None,
            vec![
                json!({"type": "message", "role": "user", "content": "weather?"}),
                json!({"type": "function_call", "id": "fc_1", "call_id": "call_a",
                    "name": "get", "arguments": "{}", "status": "completed"}),
            ],
        );
        let request = json!({"instructions": "sys", "previous_response_id": "resp_1", "input": [
            {"type": "function_call_output", "call_id": "call_a", "output": "21C"}]});
        let t = translate(&request, Some(&store)).map_err(|e| e.to_string());
        let Ok(t) = t else { panic!("{t:?}") };
        assert_eq!(
            t.chat["messages"],
            json!([
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "weather?"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_a", "type": "function", "function": {"name": "get", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_a", "content": "21C"}])
        );
        assert!(t.history.is_some());
        assert_eq!(t.input.len(), 1);
        assert!(t.keep);
        let t = translate(&json!({"input": "x", "store": false}), None);
        assert!(t.is_ok_and(|t| !t.keep));
    }

    #[test]
    fn a_previous_response_alone_is_enough_input() {
        let store = ResponseStore::new(4, Duration::from_secs(60));
        store.put(
            "resp_1".into(),
            None,
            vec![json!({"role": "user", "content": "hi"})],
        );
        let t = translate(&json!({"previous_response_id": "resp_1"}), Some(&store));
        assert!(t.is_ok_and(|t| t.chat["messages"].as_array().is_some_and(|m| m.len() == 1)));
    }

    #[test]
    fn the_passthrough_view_keeps_the_function_tools_in_chat_shape() {
        let view = parse_view(&json!({"model": "m", "input": "x", "tools": [
            {"type": "web_search"}, {"type": "function", "name": "f"}],
            "tool_choice": {"type": "function", "name": "f"}, "parallel_tool_calls": false}));
        assert_eq!(
            view,
            json!({"model": "m", "tools": [{"type": "function", "function": {"name": "f"}}],
                "tool_choice": {"type": "function", "function": {"name": "f"}},
                "parallel_tool_calls": false})
        );
    }

    #[test]
    fn instructions_and_leading_system_items_are_one_system_message() {
        // Qwen3.5-4B.jinja: "System message must be at the beginning."
        let c = chat(json!({"instructions": "A.", "input": [
            {"role": "developer", "content": "B."},
            {"role": "system", "content": [{"type": "input_text", "text": "C."}]},
            {"role": "user", "content": "hi"},
            {"role": "system", "content": "later"}]}));
        assert_eq!(
            c["messages"],
            json!([
                {"role": "system", "content": "A.\n\nB.\n\nC."},
                {"role": "user", "content": "hi"},
                {"role": "system", "content": "later"}])
        );
    }

    #[test]
    fn item_references_are_the_kept_items_they_name() {
        // @ai-sdk/openai with `store: true` (its default) sends an earlier
        // answer's items as `{"type": "item_reference", "id"}`.
        let store = ResponseStore::new(4, Duration::from_secs(60));
        store.put(
            "resp_1".into(),
            None,
            vec![
                json!({"role": "user", "content": "weather?"}),
                json!({"id": "rs_1", "type": "reasoning", "summary": [], "content": []}),
                json!({"type": "function_call", "id": "fc_1", "call_id": "call_a",
                    "name": "get", "arguments": "{}", "status": "completed"}),
            ],
        );
        let request = json!({"input": [
            {"role": "user", "content": "weather?"},
            {"type": "item_reference", "id": "rs_1"},
            {"id": "fc_1"},
            {"type": "function_call_output", "call_id": "call_a", "output": "21C"}]});
        let t = translate(&request, Some(&store)).map_err(|e| e.to_string());
        let Ok(t) = t else { panic!("{t:?}") };
        assert_eq!(
            t.chat["messages"],
            json!([
                {"role": "user", "content": "weather?"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_a", "type": "function", "function": {"name": "get", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_a", "content": "21C"}])
        );
        // What is kept with this response is the items, not the references.
        assert_eq!(t.input[2]["type"], "function_call");
        let e = translate(
            &json!({"input": [{"type": "item_reference", "id": "fc_9"}]}),
            Some(&store),
        );
        assert_eq!(
            e.map(|t| t.chat),
            Err(RequestError::UnknownItemReference {
                index: 0,
                id: "fc_9".into()
            })
        );
    }
}
