//! End to end without HTTP: a Responses request translated, a model's
//! answer written as hermes text (`qwen2.5` chat template's
//! `<tool_call>\n{"name": …, "arguments": …}\n</tool_call>`) rewritten by
//! `toolscan_sse` exactly as the chat route rewrites it, then translated
//! into Responses events and objects.
//!
//! `RESPONSES_FLOW_DUMP`, `RESPONSES_EVENTS_DUMP` and
//! `RESPONSES_OBJECTS_DUMP` (paths) write what the tests produced, for
//! checking against OpenAI's own types.

use serde_json::{json, Value};
use toolscan_core::{IdMint, Options, Registry, Tools};
use toolscan_sse::{ChunkRewriter, Config, Emit};

use super::*;

/// The rewrite the chat route would run for `chat` (its tools typed).
fn config(chat: &Value) -> Config {
    let grammar = match Registry::builtin().grammar("hermes") {
        Ok(g) => g,
        Err(e) => panic!("{e}"),
    };
    let mut options = Options::new().with_ids(IdMint::Seeded(7));
    if let Some(tools) = chat.get("tools").and_then(|t| Tools::from_json(t).ok()) {
        options = options.with_tools(tools);
    }
    Config::new(grammar).with_options(options)
}

fn request() -> Value {
    json!({"model": "qwen", "stream": true, "instructions": "Use the tools.",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]}],
        "tools": [{"type": "function", "name": "get_weather", "description": "Weather of a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                "required": ["city"]}, "strict": true}]})
}

/// What a hermes model streams: text, a call as text, `stop`, the usage
/// chunk.
fn upstream_chunks() -> Vec<String> {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "qwen",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
    };
    vec![
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        chunk(json!({"content": "Let me check."}), Value::Null),
        chunk(json!({"content": "\n<tool_call>\n{\"name\": \"get_weather\", "}), Value::Null),
        chunk(json!({"content": "\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"}), Value::Null),
        chunk(json!({}), "stop".into()),
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "qwen",
            "choices": [], "usage": {"prompt_tokens": 40, "completion_tokens": 25, "total_tokens": 65}})
        .to_string(),
        "[DONE]".into(),
    ]
}

/// The upstream's chunks through the rewrite and the event stream.
fn stream_events(translated: &Translated) -> (Vec<Event>, EventStream) {
    let mut rewriter = ChunkRewriter::new(config(&translated.chat));
    let mut events = EventStream::new(translated.echo.clone(), Ids::new());
    let mut out = Vec::new();
    for data in upstream_chunks() {
        if data == "[DONE]" {
            let mut emits = Vec::new();
            rewriter.end(&mut emits);
            for e in emits {
                if let Emit::Added(s) | Emit::Rewritten(s) = e {
                    events.chunk_json(&s, &mut out);
                }
            }
            events.end(&mut out);
            break;
        }
        let mut emits = Vec::new();
        rewriter.chunk(&data, &mut emits);
        for e in emits {
            match e {
                Emit::Upstream => events.chunk_json(&data, &mut out),
                Emit::Rewritten(s) | Emit::Added(s) => events.chunk_json(&s, &mut out),
                _ => {}
            }
        }
    }
    (out, events)
}

#[test]
fn a_streamed_text_call_becomes_the_responses_event_grammar() {
    let translated = match translate(&request(), None) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(translated.chat["stream_options"]["include_usage"], true);
    let (events, stream) = stream_events(&translated);
    if let Ok(path) = std::env::var("RESPONSES_FLOW_DUMP") {
        let data: Vec<Value> = events.iter().map(|e| e.data.clone()).collect();
        let _ = std::fs::write(path, Value::Array(data).to_string() + "\n");
    }
    let names: Vec<_> = events.iter().map(|e| e.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            // "Let me check.", then the newline held back as a possible
            // start of the call's markup.
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed",
        ],
        "{events:#?}"
    );
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.data["sequence_number"], i, "{e:?}");
        assert_eq!(e.data["type"], e.name.as_ref());
    }
    // The text before the call, without the markup (the newline that
    // separates it is the text's).
    assert_eq!(events[4].data["delta"], "Let me check.");
    let text = events[6].data["text"].as_str().unwrap_or_default();
    assert_eq!(text.trim_end(), "Let me check.");
    assert!(!text.contains("<tool_call>"), "{text}");
    let args: Value = serde_json::from_str(events[11].data["arguments"].as_str().unwrap_or(""))
        .unwrap_or_default();
    assert_eq!(args, json!({"city": "Paris"}));
    let response = &events[13].data["response"];
    assert_eq!(response["status"], "completed");
    assert_eq!(response["model"], "qwen");
    assert_eq!(response["id"], stream.response_id());
    assert_eq!(response["id"], events[0].data["response"]["id"]);
    let output = response["output"].as_array().cloned().unwrap_or_default();
    assert_eq!(output.len(), 2);
    assert_eq!(output[0]["type"], "message");
    assert_eq!(output[0]["id"], events[2].data["item"]["id"]);
    assert_eq!(output[1]["type"], "function_call");
    assert_eq!(output[1]["name"], "get_weather");
    assert_eq!(output[1]["id"], events[9].data["item"]["id"]);
    assert!(output[1]["call_id"]
        .as_str()
        .is_some_and(|c| c.starts_with("call_")));
    assert_eq!(events[10].data["output_index"], 1);
    assert_eq!(
        response["usage"],
        json!({"input_tokens": 40, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": 25, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 65})
    );
    assert_eq!(response["tools"][0]["name"], "get_weather");
    assert_eq!(response["instructions"], "Use the tools.");
}

#[test]
fn the_second_turn_answers_the_call_through_the_store() {
    let store = ResponseStore::new(8, std::time::Duration::from_secs(60));
    let first = match translate(&request(), Some(&store)) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    };
    let (_, stream) = stream_events(&first);
    keep(&store, stream.response_id(), &first, stream.output());
    let call_id = stream.output()[1]["call_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let second = json!({"model": "qwen", "previous_response_id": stream.response_id(),
        "input": [{"type": "function_call_output", "call_id": call_id, "output": "21C"}],
        "tools": request()["tools"]});
    let translated = match translate(&second, Some(&store)) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    };
    let messages = translated.chat["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let roles: Vec<_> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap_or(""))
        .collect();
    // The first turn's instructions are not carried over (as the API
    // does); its input and output are.
    assert_eq!(roles, ["user", "assistant", "tool"]);
    assert_eq!(messages[1]["tool_calls"][0]["id"], call_id.as_str());
    assert_eq!(
        messages[1]["tool_calls"][0]["function"]["name"],
        "get_weather"
    );
    assert_eq!(
        messages[1]["content"].as_str().map(str::trim_end),
        Some("Let me check.")
    );
    assert_eq!(messages[2]["tool_call_id"], call_id.as_str());
}

#[test]
fn a_whole_text_call_becomes_a_function_call_item() {
    let mut request = request();
    request["stream"] = false.into();
    let translated = match translate(&request, None) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    };
    assert!(translated.chat.get("stream").is_none());
    let completion = json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1,
        "model": "qwen", "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant",
            "content": "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"}}],
        "usage": {"prompt_tokens": 40, "completion_tokens": 20, "total_tokens": 60}});
    let rewritten =
        toolscan_sse::rewrite_body(completion.to_string().as_bytes(), &config(&translated.chat));
    let rewritten: Value = match rewritten.map(|b| serde_json::from_slice(&b)) {
        Ok(Ok(v)) => v,
        other => panic!("{other:?}"),
    };
    let response = match from_chat(&rewritten, &translated.echo, &Ids::new()) {
        Some(r) => r,
        None => panic!("{rewritten}"),
    };
    let output = response["output"].as_array().cloned().unwrap_or_default();
    assert_eq!(output.len(), 1, "{response}");
    assert_eq!(output[0]["type"], "function_call");
    assert_eq!(output[0]["name"], "get_weather");
    let args: Value =
        serde_json::from_str(output[0]["arguments"].as_str().unwrap_or("")).unwrap_or_default();
    assert_eq!(args, json!({"city": "Paris"}));
    assert_eq!(response["status"], "completed");
    assert_eq!(response["usage"]["output_tokens"], 20);
}

/// Every kind of stream and whole answer, written to
/// `RESPONSES_EVENTS_DUMP` (events, one stream a line, as a JSON array)
/// and `RESPONSES_OBJECTS_DUMP` (whole responses, one a line) when set:
/// what was checked against OpenAI's own types.
/// Chat chunks of every kind of stream, each with the failure that ends
/// it (`None`: it ends).
fn every_kind_of_stream() -> Vec<(Vec<Value>, Option<&'static str>)> {
    let chunk = |delta: Value, finish: Value| json!({"model": "qwen", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    let call = |id: Option<&str>, args: &str| {
        let mut entry = json!({"index": 0, "function": {"arguments": args}});
        if let Some(id) = id {
            entry["id"] = id.into();
            entry["type"] = "function".into();
            entry["function"]["name"] = "get_weather".into();
        }
        chunk(json!({"tool_calls": [entry]}), Value::Null)
    };
    vec![
        // Reasoning, text, a whole call, usage.
        (
            vec![
                chunk(json!({"reasoning_content": "The user wants"}), Value::Null),
                chunk(json!({"reasoning_content": " the weather."}), Value::Null),
                chunk(json!({"content": "Checking."}), Value::Null),
                call(Some("call_1"), "{\"city\": \"Paris\"}"),
                chunk(json!({}), "tool_calls".into()),
                json!({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11}}),
            ],
            None,
        ),
        // Live arguments, two calls.
        (
            vec![
                call(Some("call_1"), ""),
                call(None, "{\"city\": "),
                call(None, "\"Paris\"}"),
                call(Some("call_2"), "{\"city\": \"Rome\"}"),
                chunk(json!({}), "tool_calls".into()),
            ],
            None,
        ),
        // Cut by the token limit.
        (
            vec![
                chunk(json!({"content": "Once upon"}), Value::Null),
                chunk(json!({}), "length".into()),
            ],
            None,
        ),
        // The upstream fails mid-stream.
        (
            vec![chunk(json!({"content": "Once upon"}), Value::Null)],
            Some("the upstream closed the connection"),
        ),
    ]
}

#[test]
fn dump_every_kind_for_the_openai_types() {
    let echo = match translate(&request(), None) {
        Ok(t) => t.echo,
        Err(e) => panic!("{e}"),
    };
    let mut lines = Vec::new();
    for (chunks, failure) in every_kind_of_stream() {
        let mut s = EventStream::new(echo.clone(), Ids::new());
        let mut out = Vec::new();
        for c in &chunks {
            s.chunk(c, &mut out);
        }
        match failure {
            Some(message) => s.fail(message, &mut out),
            None => s.end(&mut out),
        }
        let last = out.last().map(|e| e.name.as_ref());
        assert!(
            matches!(
                last,
                Some("response.completed" | "response.incomplete" | "response.failed")
            ),
            "{last:?}"
        );
        lines.push(Value::Array(out.into_iter().map(|e| e.data).collect()).to_string());
    }
    let whole = [
        json!({"model": "qwen", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "Checking.", "reasoning_content": "think",
            "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11,
                "prompt_tokens_details": {"cached_tokens": 2}}}),
        json!({"model": "qwen", "choices": [{"index": 0, "finish_reason": "length",
            "message": {"role": "assistant", "content": "Once upon"}}]}),
        json!({"model": "qwen", "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": null, "refusal": "I cannot."}}]}),
    ];
    let objects: Vec<String> = whole
        .iter()
        .filter_map(|c| from_chat(c, &echo, &Ids::new()))
        .map(|r| r.to_string())
        .collect();
    assert_eq!(objects.len(), whole.len());
    if let Ok(path) = std::env::var("RESPONSES_EVENTS_DUMP") {
        let _ = std::fs::write(path, lines.join("\n") + "\n");
    }
    if let Ok(path) = std::env::var("RESPONSES_OBJECTS_DUMP") {
        let _ = std::fs::write(path, objects.join("\n") + "\n");
    }
}

/// `text` streamed five characters a chunk by a model read in `format`
/// (with reasoning separation when `reasoning`), through the rewrite and
/// the event stream; the final response.
fn stream_in(format: &str, text: &str, reasoning: bool) -> Value {
    let out = events_in(format, text, reasoning, false);
    out.last()
        .map(|e| e.data["response"].clone())
        .unwrap_or_default()
}

/// The events of [`stream_in`], arguments streamed live when `live`.
fn events_in(format: &str, text: &str, reasoning: bool, live: bool) -> Vec<Event> {
    let grammar = match Registry::builtin().grammar(format) {
        Ok(g) => g,
        Err(e) => panic!("{format}: {e}"),
    };
    let tools = Tools::from_json(
        &json!([{"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"},
            "location": {"type": "string"}}}}}]),
    );
    let mut options = Options::new().with_reasoning(reasoning);
    if let Ok(t) = tools {
        options = options.with_tools(t);
    }
    let config = Config::new(grammar)
        .with_options(options)
        .with_stream_arguments(live);
    let mut rewriter = ChunkRewriter::new(config);
    let echo = Echo::new(&json!({"model": format, "input": "x"}));
    let mut events = EventStream::new(echo, Ids::new());
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut chunks: Vec<String> = chars
        .chunks(5)
        .map(|c| {
            let piece: String = c.iter().collect();
            json!({"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": null}]})
                .to_string()
        })
        .collect();
    chunks
        .push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}).to_string());
    for data in &chunks {
        let mut emits = Vec::new();
        rewriter.chunk(data, &mut emits);
        for e in emits {
            match e {
                Emit::Upstream => events.chunk_json(data, &mut out),
                Emit::Rewritten(s) | Emit::Added(s) => events.chunk_json(&s, &mut out),
                _ => {}
            }
        }
    }
    events.end(&mut out);
    for (i, e) in out.iter().enumerate() {
        assert_eq!(e.data["sequence_number"], i, "{format}");
    }
    out
}

/// The output items' types, and each call's name, arguments and call id.
fn summary(response: &Value) -> (Vec<String>, Vec<(String, Value, String)>) {
    let output = response["output"].as_array().cloned().unwrap_or_default();
    let kinds = output
        .iter()
        .map(|i| i["type"].as_str().unwrap_or("").to_owned())
        .collect();
    let calls = output
        .iter()
        .filter(|i| i["type"] == "function_call")
        .map(|i| {
            let args =
                serde_json::from_str(i["arguments"].as_str().unwrap_or("")).unwrap_or_default();
            (
                i["name"].as_str().unwrap_or("").to_owned(),
                args,
                i["call_id"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    (kinds, calls)
}

#[test]
fn calls_written_in_four_notations_become_function_call_items() {
    // hermes: Qwen-Qwen2.5-7B-Instruct.jinja's <tool_call> JSON.
    let hermes = stream_in(
        "hermes",
        "Sure.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
        false,
    );
    let (kinds, calls) = summary(&hermes);
    assert_eq!(kinds, ["message", "function_call"], "{hermes}");
    assert_eq!(calls[0].0, "get_weather");
    assert_eq!(calls[0].1, json!({"city": "Paris"}));
    // qwen3-coder: Qwen3-Coder.jinja's XML parameters (corpus qwen3-coder-basic).
    let coder = stream_in(
        "qwen3-coder",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
        false,
    );
    let (kinds, calls) = summary(&coder);
    assert_eq!(kinds, ["function_call"], "{coder}");
    assert_eq!(calls[0].1, json!({"city": "Paris"}));
    // mistral-v11: the [CALL_ID] of corpus mistral-v11-catalogue-call-ids is the call_id.
    let mistral = stream_in(
        "mistral-v11",
        "[TOOL_CALLS]get_weather[CALL_ID]abcDEF123[ARGS]{\"city\": \"Zürich\"}[TOOL_CALLS]get_weather[CALL_ID]xyzXYZ789[ARGS]{\"city\": \"Bern\"}",
        false,
    );
    let (kinds, calls) = summary(&mistral);
    assert_eq!(kinds, ["function_call", "function_call"], "{mistral}");
    assert_eq!(calls[0].2, "abcDEF123");
    assert_eq!(calls[1].1, json!({"city": "Bern"}));
    // harmony: openai/harmony's docs example (corpus harmony-docs-example),
    // its analysis channel as reasoning.
    let harmony = stream_in(
        "harmony",
        "<|channel|>analysis<|message|>Need to use function get_weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"San Francisco\"}<|call|>",
        true,
    );
    let (kinds, calls) = summary(&harmony);
    assert_eq!(kinds, ["reasoning", "function_call"], "{harmony}");
    assert_eq!(
        harmony["output"][0]["content"][0]["text"],
        "Need to use function get_weather."
    );
    assert_eq!(calls[0].0, "get_weather");
    assert_eq!(calls[0].1, json!({"location": "San Francisco"}));
    for r in [&hermes, &coder, &mistral, &harmony] {
        assert_eq!(r["status"], "completed");
    }
}

#[test]
fn live_arguments_from_the_rewrite_are_argument_deltas_of_one_item() {
    let text = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    let out = events_in("hermes", text, false, true);
    let names: Vec<&str> = out.iter().map(|e| e.name.as_ref()).collect();
    let deltas = names
        .iter()
        .filter(|n| **n == "response.function_call_arguments.delta")
        .count();
    assert!(deltas > 1, "{names:?}");
    assert_eq!(
        names
            .iter()
            .filter(|n| **n == "response.output_item.added")
            .count(),
        1
    );
    let joined: String = out
        .iter()
        .filter(|e| e.name == "response.function_call_arguments.delta")
        .filter_map(|e| e.data["delta"].as_str())
        .collect();
    let done = out
        .iter()
        .find(|e| e.name == "response.function_call_arguments.done");
    assert_eq!(
        done.map(|e| e.data["arguments"].clone()),
        Some(joined.clone().into())
    );
    assert_eq!(
        serde_json::from_str::<Value>(&joined).ok(),
        Some(json!({"city": "Paris"}))
    );
    let last = out.last().map(|e| e.data.clone()).unwrap_or_default();
    assert_eq!(last["response"]["output"][0]["arguments"], joined.as_str());
}
