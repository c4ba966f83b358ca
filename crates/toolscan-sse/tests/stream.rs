//! The streaming rewrite, end to end: SSE bytes in (cut anywhere), SSE
//! bytes out, reassembled the way an OpenAI client does.

mod common;

use std::io;

use bytes::Bytes;
use common::*;
use serde_json::{json, Value};
use toolscan_core::Options;
use toolscan_sse::RewriteError;
use toolscan_testkit::chunk::{self, Plan};

const THINK: &str = "<think>\nThe user wants the current weather in Paris. I have a get_weather tool that takes a city, so I'll call it.\n</think>\n\n";
const LEAD: &str = "Let me check the current weather in Paris for you.\n\n";

fn whole(input: &[u8], config: toolscan_sse::Config) -> Vec<u8> {
    rewrite(input, &Plan::whole(input.len()), config)
}

#[test]
fn qwen3_recording_becomes_a_tool_call() {
    let input = recording("qwen3-weather.sse");
    let r = reassemble(&whole(&input, config("hermes")));
    assert_eq!(r.done, 1);
    assert!(r.done_last);
    assert_eq!(r.choices.len(), 1);
    let c = &r.choices[&0];
    assert_eq!(c.content, format!("{THINK}{LEAD}"));
    assert_eq!(c.calls.len(), 1);
    let call = &c.calls[&0];
    assert_eq!(call.starts, 1);
    assert_eq!(call.name, "get_weather");
    assert!(
        call.id.starts_with("call_") && call.id.len() == 29,
        "{}",
        call.id
    );
    let args: Value = serde_json::from_str(&call.arguments).unwrap();
    assert_eq!(args, json!({"city": "Paris"}));
    assert_eq!(c.finish_reasons, ["tool_calls"]);
    assert_eq!(
        r.usage,
        [json!({"prompt_tokens": 312, "total_tokens": 371, "completion_tokens": 59})]
    );
}

/// Cutting the upstream bytes anywhere (inside `data:`, inside JSON,
/// inside UTF-8) changes nothing: the SSE decoder sees the same events.
#[test]
fn upstream_byte_cuts_do_not_change_the_output() {
    for name in [
        "qwen3-weather.sse",
        "qwen3-weather-stop.sse",
        "two-choices.sse",
    ] {
        let input = recording(name);
        let want = whole(&input, config("hermes"));
        for plan in chunk::standard(input.len()) {
            let got = rewrite(&input, &plan, config("hermes"));
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&want),
                "{name}, {plan}"
            );
        }
    }
}

/// Cutting the *content* differently across chunks (1 byte per chunk,
/// random sizes, inside markers and characters) gives the same
/// reassembled text, calls and finish reasons.
#[test]
fn content_cuts_do_not_change_the_meaning() {
    let content = "Zürich first 東京 then.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>\nDone ☂️ < not a marker <tool";
    let reference = {
        let s = stream_of(&[content], "stop");
        reassemble(&whole(s.as_bytes(), config("hermes")))
    };
    let c = &reference.choices[&0];
    assert_eq!(
        c.content,
        "Zürich first 東京 then.\n\n\nDone ☂️ < not a marker <tool"
    );
    assert_eq!(c.calls.len(), 2);
    assert_eq!(c.calls[&0].name, "get_weather");
    assert_eq!(c.calls[&0].arguments, r#"{"city": "Zürich"}"#);
    assert_eq!(c.calls[&1].name, "get_time");
    assert_eq!(c.calls[&1].arguments, "{}");
    assert_ne!(c.calls[&0].id, c.calls[&1].id);
    assert_eq!(c.finish_reasons, ["tool_calls"]);
    for plan in chunk::standard(content.len()) {
        let pieces = plan.str_pieces(content);
        let s = stream_of(&pieces, "stop");
        let out = whole(s.as_bytes(), config("hermes"));
        assert_eq!(reassemble(&out), reference, "{plan}");
        // And cut once more on the way in.
        let cut = rewrite(
            s.as_bytes(),
            &Plan::random(s.len(), 9, 13),
            config("hermes"),
        );
        assert_eq!(cut, out, "{plan}");
    }
}

#[test]
fn two_choices_each_have_their_own_parser() {
    let input = recording("two-choices.sse");
    let r = reassemble(&whole(&input, config("hermes")));
    assert_eq!(r.choices.len(), 2);
    let (a, b) = (&r.choices[&0], &r.choices[&1]);
    assert_eq!(a.content, "I'll look that up.\n");
    assert_eq!(a.calls.len(), 1);
    assert_eq!(
        serde_json::from_str::<Value>(&a.calls[&0].arguments).unwrap(),
        json!({"city": "Paris", "unit": "celsius"})
    );
    assert_eq!(a.finish_reasons, ["tool_calls"]);
    assert_eq!(
        b.content,
        "Paris is usually mild in June: around 20 °C by day, with the odd shower."
    );
    assert!(b.calls.is_empty());
    assert_eq!(b.finish_reasons, ["stop"]);
    assert_eq!(r.done, 1);
    assert!(r.done_last);
}

#[test]
fn two_choices_with_calls_get_distinct_ids() {
    let call = |city: &str| {
        format!("<tool_call>{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"{city}\"}}}}</tool_call>")
    };
    let (c0, c1) = (call("Paris"), call("Lyon"));
    let mut s = String::new();
    // Interleaved, in halves.
    let (h0, h1) = (c0.len() / 2, c1.len() / 2);
    s.push_str(&chunk(1, json!({"content": &c1[..h1]}), None));
    s.push_str(&chunk(0, json!({"content": &c0[..h0]}), None));
    s.push_str(&chunk(0, json!({"content": &c0[h0..]}), Some("stop")));
    s.push_str(&chunk(1, json!({"content": &c1[h1..]}), Some("stop")));
    s.push_str("data: [DONE]\n\n");
    let r = reassemble(&whole(s.as_bytes(), config("hermes")));
    let (a, b) = (&r.choices[&0].calls[&0], &r.choices[&1].calls[&0]);
    assert_eq!(a.arguments, r#"{"city": "Paris"}"#);
    assert_eq!(b.arguments, r#"{"city": "Lyon"}"#);
    assert_ne!(a.id, b.id);
    assert_eq!(r.choices[&0].finish_reasons, ["tool_calls"]);
    assert_eq!(r.choices[&1].finish_reasons, ["tool_calls"]);
}

#[test]
fn native_tool_calls_pass_through_unchanged() {
    let mut s = chunk(0, json!({"role": "assistant", "content": null}), None);
    s.push_str(&chunk(
        0,
        json!({"tool_calls": [{"index": 0, "id": "call_native", "type": "function",
                               "function": {"name": "get_weather", "arguments": ""}}]}),
        None,
    ));
    s.push_str(&chunk(
        0,
        json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\": \"Paris\"}"}}]}),
        None,
    ));
    s.push_str(&chunk(0, json!({}), Some("tool_calls")));
    s.push_str("data: [DONE]\n\n");
    let out = whole(s.as_bytes(), config("hermes"));
    // Nothing to rewrite: every event passed on as it came.
    assert_eq!(String::from_utf8(out).unwrap(), s);
}

#[test]
fn native_and_text_calls_do_not_collide() {
    let text_call = r#"<tool_call>{"name": "get_time", "arguments": {}}</tool_call>"#;
    let mut s = String::new();
    // A native call 0 first: kept; the text call gets 1.
    s.push_str(&chunk(
        0,
        json!({"tool_calls": [{"index": 0, "id": "call_native0", "type": "function",
                               "function": {"name": "a", "arguments": "{}"}}]}),
        None,
    ));
    s.push_str(&chunk(0, json!({"content": text_call}), None));
    // A native call 1 after the text call: 1 is taken, it becomes 2.
    s.push_str(&chunk(
        0,
        json!({"tool_calls": [{"index": 1, "id": "call_native1", "type": "function",
                               "function": {"name": "b", "arguments": "{\"x\""}}]}),
        None,
    ));
    s.push_str(&chunk(
        0,
        json!({"tool_calls": [{"index": 1, "function": {"arguments": ": 1}"}}]}),
        None,
    ));
    s.push_str(&chunk(0, json!({}), Some("tool_calls")));
    s.push_str("data: [DONE]\n\n");
    let r = reassemble(&whole(s.as_bytes(), config("hermes")));
    let calls = &r.choices[&0].calls;
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert_eq!(
        (calls[&0].id.as_str(), calls[&0].name.as_str()),
        ("call_native0", "a")
    );
    assert_eq!(calls[&1].name, "get_time");
    assert!(calls[&1].id.starts_with("call_"));
    assert_eq!(
        (calls[&2].id.as_str(), calls[&2].name.as_str()),
        ("call_native1", "b")
    );
    assert_eq!(calls[&2].arguments, r#"{"x": 1}"#);
    assert!(calls.values().all(|c| c.starts == 1));
    assert_eq!(r.choices[&0].finish_reasons, ["tool_calls"]);
}

#[test]
fn reasoning_goes_to_reasoning_content() {
    let input = recording("qwen3-weather.sse");
    let cfg = config("hermes");
    let cfg = cfg.clone().with_options(cfg.options.with_reasoning(true));
    let r = reassemble(&whole(&input, cfg));
    let c = &r.choices[&0];
    assert_eq!(
        c.reasoning,
        "\nThe user wants the current weather in Paris. I have a get_weather tool that takes a city, so I'll call it.\n"
    );
    assert_eq!(c.content, format!("\n\n{LEAD}"));
    assert_eq!(c.calls[&0].name, "get_weather");
    // Without reasoning separation, none.
    let r = reassemble(&whole(&input, config("hermes")));
    assert_eq!(r.choices[&0].reasoning, "");
}

/// A call whose closing markup a stop sequence cut: with `"stop"` it
/// completes; with `"length"` it was cut short.
#[test]
fn stop_sequence_completes_a_call_and_length_does_not() {
    let input = recording("qwen3-weather-stop.sse");
    let r = reassemble(&whole(&input, config("hermes")));
    let c = &r.choices[&0];
    assert_eq!(c.calls.len(), 1);
    assert_eq!(c.calls[&0].arguments, r#"{"city": "Paris"}"#);
    assert_eq!(c.finish_reasons, ["tool_calls"]);
    assert!(!c.content.contains("<tool_call>"), "{:?}", c.content);

    // The same stream, cut by the length limit instead.
    let text = String::from_utf8(input.clone()).unwrap();
    let length = text.replace(r#""finish_reason":"stop""#, r#""finish_reason":"length""#);
    assert_ne!(length, text);
    let r = reassemble(&whole(length.as_bytes(), config("hermes")));
    let c = &r.choices[&0];
    assert_eq!(c.finish_reasons, ["length"]);
    assert!(
        c.content.ends_with(
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
        ),
        "{:?}",
        c.content
    );

    // `"stop"` with completion at stop turned off: cut short too.
    let r = reassemble(&whole(
        &input,
        config("hermes").with_complete_at_stop(false),
    ));
    let c = &r.choices[&0];
    assert_eq!(c.finish_reasons, ["stop"]);
    assert!(c.content.contains("<tool_call>"), "{:?}", c.content);
}

#[test]
fn done_is_sent_once_and_last() {
    let mut s = stream_of(
        &["Hello <tool", "_call>{\"name\": \"f\", \"arguments\": {}}"],
        "stop",
    );
    // A second [DONE] and an event after it.
    s.push_str("data: [DONE]\n\n");
    s.push_str(&chunk(0, json!({"content": "late"}), None));
    let r = reassemble(&whole(s.as_bytes(), config("hermes")));
    assert_eq!(r.done, 1);
    assert!(r.done_last);
    assert!(!r.choices[&0].content.contains("late"));
    assert_eq!(r.choices[&0].calls[&0].name, "f");
}

#[test]
fn without_done_upstream_none_is_added_and_held_text_is_flushed() {
    // No finish_reason, no [DONE]: the stream just ends, with `<tool`
    // held back.
    let mut s = chunk(0, json!({"role": "assistant", "content": ""}), None);
    s.push_str(&chunk(0, json!({"content": "Hi <tool"}), None));
    let out = whole(s.as_bytes(), config("hermes"));
    let r = reassemble(&out);
    assert_eq!(r.done, 0);
    assert_eq!(r.choices[&0].content, "Hi <tool");
    // The flushed text came in a chunk with the upstream's envelope.
    let last = chunks_of(&out).pop().unwrap();
    assert_eq!(last["id"], "chatcmpl-test");
    assert_eq!(last["model"], "test-model");
    assert_eq!(last["created"], 1_700_000_000);
    assert_eq!(last["choices"][0]["delta"]["content"], "<tool");
}

#[test]
fn unknown_fields_are_kept() {
    let call = r#"<tool_call>{"name": "f", "arguments": {"a": [1, 2.50]}}</tool_call>"#;
    let extra = |c: &str, finish: Option<&str>| {
        json!({
            "id": "chatcmpl-x",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "system_fingerprint": "fp_1",
            "x_top": {"nested": [1, "two", null, 3.5e300]},
            "choices": [{
                "index": 0,
                "delta": {"role": "assistant", "content": c, "x_delta": 42},
                "logprobs": {"content": [{"token": "t", "logprob": -0.25}]},
                "x_choice": true,
                "finish_reason": finish,
            }],
            "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
        })
    };
    let upstream = [extra(&call[..20], None), extra(&call[20..], Some("stop"))];
    let s: String = upstream
        .iter()
        .map(|c| format!("data: {c}\n\n"))
        .chain(["data: [DONE]\n\n".to_owned()])
        .collect();
    let out = chunks_of(&whole(s.as_bytes(), config("hermes")));
    assert_eq!(
        out.len(),
        3,
        "no chunk is dropped (each has logprobs and usage), and the end of \
         the choice comes in a chunk of its own"
    );
    for (got, want) in out.iter().zip(&upstream) {
        for key in [
            "id",
            "object",
            "created",
            "model",
            "system_fingerprint",
            "x_top",
            "usage",
        ] {
            assert_eq!(got[key], want[key], "{key}");
        }
        let (g, w) = (&got["choices"][0], &want["choices"][0]);
        for key in ["index", "logprobs", "x_choice"] {
            assert_eq!(g[key], w[key], "{key}");
        }
        assert_eq!(g["delta"]["role"], "assistant");
        assert_eq!(g["delta"]["x_delta"], 42);
        // Key order kept: the rewritten chunk lists its keys as upstream.
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(got), keys(want));
        assert_eq!(keys(g), keys(w));
    }
    assert_eq!(out[1]["choices"][0]["finish_reason"], Value::Null);
    assert_eq!(out[2]["id"], "chatcmpl-x");
    assert_eq!(out[2]["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(out[2]["choices"][0]["delta"], json!({}));
    let r = reassemble(&whole(s.as_bytes(), config("hermes")));
    assert_eq!(r.choices[&0].calls[&0].arguments, r#"{"a": [1, 2.50]}"#);
}

#[test]
fn chunks_held_back_entirely_are_skipped() {
    let s = stream_of(
        &[
            "Hi",
            " <",
            "tool",
            "_call",
            ">{\"name\": \"f\"",
            ", \"arguments\": {}}</tool_call>",
        ],
        "stop",
    );
    let out = whole(s.as_bytes(), config("hermes"));
    let chunks = chunks_of(&out);
    // `<`, `tool`, `_call` and the call's opening are held back: their
    // chunks carry nothing and are not sent.
    for c in &chunks {
        let ch = &c["choices"][0];
        let delta = &ch["delta"];
        let meaningful = delta["role"].is_string()
            || delta["content"].as_str().is_some_and(|s| !s.is_empty())
            || delta["tool_calls"].is_array()
            || ch["finish_reason"].is_string();
        assert!(meaningful, "an empty chunk was sent: {c}");
    }
    assert!(chunks.len() < 7, "{} chunks", chunks.len());
    let r = reassemble(&out);
    assert_eq!(r.choices[&0].content, "Hi ");
    assert_eq!(r.choices[&0].calls[&0].name, "f");
}

#[test]
fn malformed_data_is_passed_through() {
    let mut s = chunk(0, json!({"content": "a"}), None);
    s.push_str("data: {not json\n\n");
    s.push_str("data: {\"error\": {\"message\": \"x\"}}\n\n");
    s.push_str(&chunk(0, json!({"content": "b"}), Some("stop")));
    s.push_str("data: [DONE]\n\n");
    let out = whole(s.as_bytes(), config("hermes"));
    let data = data_of(&out);
    assert_eq!(data[1], "{not json");
    assert_eq!(data[2], "{\"error\": {\"message\": \"x\"}}");
    let r = reassemble(&out);
    assert_eq!(r.not_json, ["{not json"]);
    assert_eq!(r.choices[&0].content, "ab");
    assert_eq!(r.done, 1);
    assert!(r.done_last);
}

#[derive(Debug)]
struct Boom;

impl std::fmt::Display for Boom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection reset")
    }
}

impl std::error::Error for Boom {}

#[test]
fn upstream_error_ends_the_stream_without_done() {
    let first = chunk(0, json!({"content": "Hello"}), None);
    let items: Vec<Result<Bytes, Boom>> = vec![
        Ok(Bytes::from(first.clone())),
        Ok(Bytes::from_static(b"data: {\"choi")),
        Err(Boom),
        Ok(Bytes::from_static(b"data: [DONE]\n\n")),
    ];
    let out: Vec<_> = futures::executor::block_on(futures::StreamExt::collect::<Vec<_>>(
        toolscan_sse::rewrite_stream(futures::stream::iter(items), config("hermes")),
    ));
    assert_eq!(out.len(), 2, "{out:?}");
    let Ok(bytes) = &out[0] else {
        panic!("{:?}", out[0]);
    };
    assert_eq!(data_of(bytes), data_of(first.as_bytes()));
    match &out[1] {
        Err(RewriteError::Upstream(Boom)) => {}
        other => panic!("{other:?}"),
    }
    let err = out.into_iter().nth(1).unwrap().unwrap_err();
    assert_eq!(err.to_string(), "upstream body failed: connection reset");
    assert!(std::error::Error::source(&err).is_some());
}

#[test]
fn io_errors_are_typed_too() {
    let items = vec![
        Ok(Bytes::from(chunk(0, json!({"content": "x"}), None))),
        Err(io::Error::new(io::ErrorKind::ConnectionReset, "reset")),
    ];
    let out = run_items(items, config("hermes"));
    assert!(
        matches!(out.last(), Some(Err(RewriteError::Upstream(e))) if e.kind() == io::ErrorKind::ConnectionReset)
    );
}

#[test]
fn the_stream_is_send_and_static() {
    fn assert_send<T: Send + 'static>(_: &T) {}
    let s = toolscan_sse::rewrite_stream(
        futures::stream::iter(Vec::<Result<Bytes, io::Error>>::new()),
        config("auto").with_options(Options::default()),
    );
    assert_send(&s);
}

/// What the stream helper of OpenAI's Python client makes of a stream, as
/// far as the ends of calls go: it reads one `tool_calls` entry per index
/// per chunk; an entry of another index than the call being read finishes
/// that call (`tool_calls.function.arguments.done`); a `finish_reason`
/// finishes the call being read *before* the chunk's own entries are
/// read, so a call whose entries share the chunk that ends the choice is
/// never finished. The names of the calls it finishes, in order.
fn calls_the_stream_helper_finishes(chunks: &[Value]) -> Vec<String> {
    let mut done = Vec::new();
    let mut names: std::collections::HashMap<u64, String> = Default::default();
    let mut current: Option<u64> = None;
    for chunk in chunks {
        let choice = &chunk["choices"][0];
        let entries: Vec<&Value> = choice["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .collect();
        let mut indices: Vec<u64> = entries.iter().filter_map(|e| e["index"].as_u64()).collect();
        indices.sort_unstable();
        indices.dedup();
        assert_eq!(
            indices.len(),
            entries.len(),
            "one entry per index per chunk: {chunk}"
        );
        if !choice["finish_reason"].is_null() {
            if let Some(i) = current.take() {
                done.push(names[&i].clone());
            }
        }
        for e in entries {
            let i = e["index"].as_u64().unwrap();
            if let Some(name) = e["function"]["name"].as_str() {
                names.insert(i, name.to_owned());
            }
            if current != Some(i) {
                if let Some(prev) = current.replace(i) {
                    done.push(names[&prev].clone());
                }
            }
        }
    }
    done
}

/// A Mistral list of two calls in one upstream chunk that also ends the
/// choice, and Hermes calls whose last bytes come with `finish_reason`:
/// every call's end is seen by OpenAI's stream helper (the end of the
/// choice comes in a chunk of its own, after the last call delta), and no
/// chunk holds two entries of one call.
#[test]
fn openai_stream_helper_sees_every_call_end() {
    let mistral = stream_of(
        &["[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {\"x\": 1}}, {\"name\": \"b\", \"arguments\": {}}]"],
        "stop",
    );
    let hermes = stream_of(
        &[
            "Sure. <tool_call>{\"name\": \"a\", ",
            "\"arguments\": {\"x\": 1}}</tool_call><tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>",
        ],
        "stop",
    );
    // With no `finish_reason` at all: the rewrite ends the choice at
    // `[DONE]`.
    let unfinished = stream_of(
        &["<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>"],
        "x",
    )
    .replace(",\"finish_reason\":\"x\"", ",\"finish_reason\":null");
    for (format, input, want) in [
        ("mistral", &mistral, vec!["a", "b"]),
        ("hermes", &hermes, vec!["a", "b"]),
        ("hermes", &unfinished, vec!["a"]),
    ] {
        let out = chunks_of(&whole(input.as_bytes(), config(format)));
        assert_eq!(
            calls_the_stream_helper_finishes(&out),
            want,
            "{format}: {out:?}"
        );
    }
}

/// The chunk the rewrite adds at the end (here: the end of a choice the
/// upstream never ended, after a call) takes the envelope of the last
/// upstream chunk, also when that chunk went out untouched (read without
/// building its JSON).
#[test]
fn an_added_chunk_takes_the_last_chunks_envelope() {
    let event = |created: u64, content: &str| {
        let c = json!({"id": "chatcmpl-e", "object": "chat.completion.chunk", "created": created,
            "model": "m", "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": null}]});
        format!("data: {c}\n\n")
    };
    let s = [
        event(1, "<tool_call>{\"name\": \"f\", "),
        event(2, "\"arguments\": {}}</tool_call>"),
        event(3, " Done"),
        event(4, " here."),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat();
    let out = chunks_of(&whole(s.as_bytes(), config("hermes")));
    let last = out.last().expect("chunks");
    assert_eq!(last["choices"][0]["finish_reason"], "tool_calls", "{out:?}");
    assert_eq!(last["created"], 4, "{out:?}");
    // The text chunks after the call went out as they came.
    assert!(out
        .iter()
        .any(|c| c["created"] == 3 && c["choices"][0]["delta"]["content"] == " Done"));
}

/// One parser is kept per choice: a chunk that brings more distinct
/// choices than `Config::max_choices` ends the stream with an error after
/// what came before it, and is not passed on (nor anything after it).
#[test]
fn more_choices_than_max_choices_end_the_stream_with_an_error() {
    let mut input = String::new();
    for i in 0..5 {
        input.push_str(&chunk(i, json!({"content": "Hi"}), None));
    }
    input.push_str("data: [DONE]\n\n");
    let len = input.len();
    for plan in [
        Plan::whole(len),
        Plan::fixed(len, 7),
        Plan::random(len, 3, 40),
    ] {
        let items = plan
            .pieces(input.as_bytes())
            .into_iter()
            .map(|p| Ok(Bytes::copy_from_slice(p)))
            .collect();
        let out = run_items(items, config("hermes").with_max_choices(3));
        let (last, sent) = out.split_last().unwrap();
        assert!(
            matches!(last, Err(RewriteError::TooManyChoices(3))),
            "{last:?}"
        );
        let sent: Vec<u8> = sent
            .iter()
            .flat_map(|b| b.as_ref().unwrap().to_vec())
            .collect();
        let data = data_of(&sent);
        assert_eq!(data.len(), 3, "{data:?}");
        assert!(!data.iter().any(|d| d == "[DONE]"));
    }
    let within = run_items(
        vec![Ok(Bytes::from(input))],
        config("hermes").with_max_choices(5),
    );
    assert!(within.iter().all(Result::is_ok));
    let e: RewriteError<io::Error> = RewriteError::TooManyChoices(3);
    assert_eq!(e.to_string(), "the upstream sent more than 3 choices");
}

/// What the rewrite leaves alone reaches the client as the upstream wrote
/// it (CRLF line ends, a comment inside an event, `data:` without its
/// space, an event without data), under any cut; what it rewrites keeps
/// the event's other fields.
#[test]
fn events_left_alone_are_sent_as_they_came() {
    let plain = chunk(0, json!({"content": "Hi"}), None).replace("data: ", "data:");
    let plain = plain.trim_end().to_owned() + "\r\n: a note\r\n\r\n";
    let ping = "event: ping\r\nid: 3\r\n\r\n";
    let call = chunk(
        0,
        json!({"content": "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>"}),
        Some("stop"),
    );
    let call = format!("event: message\nid: 4\n{call}");
    let input = format!("{plain}{ping}{call}data: [DONE]\n\n");
    for plan in chunk::standard(input.len()) {
        let out =
            String::from_utf8(rewrite(input.as_bytes(), &plan, config("hermes"))).expect("UTF-8");
        assert!(
            out.starts_with(&format!("{plain}{ping}")),
            "{plan:?}: {out:?}"
        );
        assert!(out.contains("event: message\ndata: {"), "{out:?}");
        assert!(out.contains("\"tool_calls\""), "{out:?}");
        assert!(out.contains("}\nid: 4\n\n"), "{out:?}");
        assert!(out.ends_with("data: [DONE]\n\n"), "{out:?}");
    }
}

/// A field that is not UTF-8 ends the stream with a decoding error, after
/// the events before it.
#[test]
fn a_field_not_utf8_is_a_decode_error() {
    let first = chunk(0, json!({"content": "Hi"}), None);
    let items = vec![
        Ok(Bytes::from(first.clone())),
        Ok(Bytes::from_static(b"data: \xff\n\ndata: [DONE]\n\n")),
    ];
    let out = run_items(items, config("hermes"));
    assert_eq!(out.len(), 2, "{out:?}");
    assert!(
        matches!(&out[0], Ok(b) if b[..] == *first.as_bytes()),
        "{out:?}"
    );
    let Some(Err(RewriteError::Decode(e))) = out.last() else {
        panic!("{out:?}");
    };
    assert!(e.to_string().contains("not UTF-8"), "{e}");
}
