//! The whole-response rewrite: `rewrite_body`.

mod common;

use common::config;
use serde_json::{json, Value};
use toolscan_sse::{rewrite_body, BodyError};

fn completion(content: Value, finish: &str) -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "Qwen/Qwen3-8B",
        "system_fingerprint": "fp_x",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content, "x_msg": [1, 2]},
            "logprobs": null,
            "finish_reason": finish,
            "stop_reason": null,
        }],
        "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
        "x_top": {"kept": true},
    })
}

fn run(body: &Value, cfg: &toolscan_sse::Config) -> Value {
    let out = rewrite_body(body.to_string().as_bytes(), cfg).unwrap();
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn text_calls_become_tool_calls() {
    let body = completion(
        json!("Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>"),
        "stop",
    );
    let out = run(&body, &config("hermes"));
    let choice = &out["choices"][0];
    let msg = &choice["message"];
    assert_eq!(msg["content"], "Let me check.\n\n");
    let calls = msg["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["type"], "function");
    assert_eq!(calls[0]["function"]["name"], "get_weather");
    assert_eq!(calls[0]["function"]["arguments"], r#"{"city": "Paris"}"#);
    assert_eq!(calls[1]["function"]["name"], "get_time");
    assert_eq!(calls[1]["function"]["arguments"], "{}");
    let ids: Vec<&str> = calls.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert!(ids.iter().all(|id| id.starts_with("call_")));
    assert_ne!(ids[0], ids[1]);
    assert_eq!(choice["finish_reason"], "tool_calls");
    // Everything else kept, in its place.
    for key in [
        "id",
        "object",
        "created",
        "model",
        "system_fingerprint",
        "usage",
        "x_top",
    ] {
        assert_eq!(out[key], body[key], "{key}");
    }
    assert_eq!(msg["x_msg"], json!([1, 2]));
    assert_eq!(msg["role"], "assistant");
    assert!(choice.as_object().unwrap().contains_key("stop_reason"));
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&out), keys(&body));
}

#[test]
fn only_calls_leave_null_content() {
    let body = completion(
        json!("<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>"),
        "stop",
    );
    let out = run(&body, &config("hermes"));
    assert!(out["choices"][0]["message"]["content"].is_null());
    assert_eq!(
        out["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
        "f"
    );
}

#[test]
fn a_body_without_calls_is_returned_byte_for_byte() {
    // Spacing and number spelling that re-serialising would change.
    let body = br#"{ "id": "x", "choices": [ {"index": 0, "message": {"role": "assistant", "content": "Just text < 3."}, "finish_reason": "stop"} ], "n": 1.50 }"#;
    assert_eq!(
        rewrite_body(body, &config("hermes")).unwrap(),
        body.to_vec()
    );
    let not_a_completion = br#"{"error": {"message": "nope"}}"#;
    assert_eq!(
        rewrite_body(not_a_completion, &config("hermes")).unwrap(),
        not_a_completion.to_vec()
    );
}

#[test]
fn not_json_is_an_error() {
    let err = rewrite_body(b"{nope", &config("hermes")).unwrap_err();
    assert!(matches!(err, BodyError::NotJson(_)), "{err:?}");
    assert!(err.to_string().starts_with("response body is not JSON"));
}

#[test]
fn stop_sequence_completes_and_length_does_not() {
    let cut = json!("<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}");
    let out = run(&completion(cut.clone(), "stop"), &config("hermes"));
    assert_eq!(out["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(
        out["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
        r#"{"a": 1}"#
    );
    let body = completion(cut.clone(), "length");
    let out = run(&body, &config("hermes"));
    assert_eq!(out, body, "a truncated call stays text; length is kept");
    let out = run(
        &completion(cut.clone(), "stop"),
        &config("hermes").with_complete_at_stop(false),
    );
    assert_eq!(out["choices"][0]["message"]["content"], cut);
    assert_eq!(out["choices"][0]["finish_reason"], "stop");
}

#[test]
fn reasoning_goes_to_reasoning_content() {
    let cfg = config("hermes");
    let cfg = cfg.clone().with_options(cfg.options.with_reasoning(true));
    let out = run(
        &completion(json!("<think>hmm</think>Answer."), "stop"),
        &cfg,
    );
    let msg = &out["choices"][0]["message"];
    assert_eq!(msg["reasoning_content"], "hmm");
    assert_eq!(msg["content"], "Answer.");
    assert_eq!(out["choices"][0]["finish_reason"], "stop");
}

#[test]
fn native_tool_calls_are_kept_first() {
    let mut body = completion(
        json!("<tool_call>{\"name\": \"g\", \"arguments\": {}}</tool_call>"),
        "tool_calls",
    );
    body["choices"][0]["message"]["tool_calls"] = json!([{
        "id": "call_native", "type": "function",
        "function": {"name": "f", "arguments": "{}"}
    }]);
    let out = run(&body, &config("hermes"));
    let calls = out["choices"][0]["message"]["tool_calls"]
        .as_array()
        .unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0], body["choices"][0]["message"]["tool_calls"][0]);
    assert_eq!(calls[1]["function"]["name"], "g");
}

#[test]
fn every_choice_is_rewritten() {
    let mut body = completion(
        json!("<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>"),
        "stop",
    );
    let mut second = body["choices"][0].clone();
    second["index"] = json!(1);
    second["message"]["content"] = json!("no call here");
    body["choices"].as_array_mut().unwrap().push(second);
    let out = run(&body, &config("hermes"));
    assert_eq!(out["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(out["choices"][1]["finish_reason"], "stop");
    assert_eq!(out["choices"][1]["message"]["content"], "no call here");
    assert!(out["choices"][1]["message"].get("tool_calls").is_none());
}
