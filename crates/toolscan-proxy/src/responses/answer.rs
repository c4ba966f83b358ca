//! A whole Chat Completions answer (`chat.completion`, already rewritten:
//! text calls are `tool_calls`, reasoning is `reasoning_content`) as a
//! Responses `response` object.

use serde_json::Value;

use super::echo::{self, Echo};
use super::ids::{mint, Ids};
use super::{items, usage};

/// The response object for `completion`, the answer to the request
/// `echo` repeats, with the ids `ids`. Output items in the order the model
/// wrote them: `reasoning` (from `reasoning_content`, or `reasoning` as
/// some servers name it), `message` (its `content`, and its `refusal`),
/// then one `function_call` per `tool_calls` entry. `None`: `completion`
/// has no `choices[0]` (not a chat completion).
pub(crate) fn from_chat(completion: &Value, echo: &Echo, ids: &Ids) -> Option<Value> {
    let choice = completion.pointer("/choices/0")?;
    let message = choice.get("message").unwrap_or(&Value::Null);
    let text = |k: &str| {
        message
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let mut output = Vec::new();
    if let Some(r) = text("reasoning_content").or_else(|| text("reasoning")) {
        output.push(items::reasoning(&mint("rs"), Some(r), "completed"));
    }
    let mut parts = Vec::new();
    if let Some(t) = text("content") {
        parts.push(items::output_text(t));
    }
    if let Some(r) = text("refusal") {
        parts.push(items::refusal(r));
    }
    if !parts.is_empty() {
        output.push(items::message(&mint("msg"), parts, "completed"));
    }
    for call in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let field = |p: &str| call.pointer(p).and_then(Value::as_str).unwrap_or_default();
        output.push(items::function_call(
            &mint("fc"),
            field("/id"),
            field("/function/name"),
            field("/function/arguments"),
            "completed",
        ));
    }
    let mut echo = echo.clone();
    echo.with_model_fallback(completion.get("model").and_then(Value::as_str));
    let mut response = echo.response(ids, "completed", output);
    let finish_reason = choice.get("finish_reason").and_then(Value::as_str);
    echo::finish(&mut response, finish_reason, echo::now());
    response["usage"] = completion
        .get("usage")
        .and_then(usage::from_chat)
        .unwrap_or_else(usage::unknown);
    Some(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ids() -> Ids {
        Ids {
            response: "resp_t".into(),
            created_at: 1,
        }
    }

    fn answer(completion: Value, request: Value) -> Value {
        match from_chat(&completion, &Echo::new(&request), &ids()) {
            Some(r) => r,
            None => panic!("not a completion: {completion}"),
        }
    }

    #[test]
    fn reasoning_text_and_calls_become_output_items_in_order() {
        let completion = json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "qwen",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "Checking.", "reasoning_content": "think",
                "tool_calls": [{"id": "call_a", "type": "function",
                    "function": {"name": "get", "arguments": "{\"c\":\"Paris\"}"}}]}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}});
        let request = json!({"model": "m", "input": "x",
            "tools": [{"type": "function", "name": "get", "parameters": {}, "strict": false}]});
        let r = answer(completion, request);
        assert_eq!(r["id"], "resp_t");
        assert_eq!(r["object"], "response");
        assert_eq!(r["status"], "completed");
        assert_eq!(r["model"], "m");
        let output = r["output"].as_array().cloned().unwrap_or_default();
        assert_eq!(output.len(), 3, "{r}");
        assert_eq!(output[0]["type"], "reasoning");
        assert_eq!(
            output[0]["content"],
            json!([{"type": "reasoning_text", "text": "think"}])
        );
        assert_eq!(output[1]["type"], "message");
        assert_eq!(output[1]["content"][0]["text"], "Checking.");
        assert_eq!(output[1]["content"][0]["annotations"], json!([]));
        assert_eq!(output[2]["type"], "function_call");
        assert_eq!(output[2]["call_id"], "call_a");
        assert_eq!(output[2]["name"], "get");
        assert_eq!(output[2]["arguments"], "{\"c\":\"Paris\"}");
        assert_eq!(output[2]["status"], "completed");
        assert!(output[2]["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("fc_")));
        assert_eq!(r["usage"]["input_tokens"], 10);
        assert_eq!(r["usage"]["output_tokens"], 5);
        assert_eq!(r["usage"]["total_tokens"], 15);
        assert_eq!(r["tools"][0]["name"], "get");
    }

    #[test]
    fn a_length_cut_answer_is_incomplete() {
        let completion = json!({"choices": [{"index": 0, "finish_reason": "length",
            "message": {"role": "assistant", "content": "Once upon"}}]});
        let r = answer(completion, json!({"input": "x", "max_output_tokens": 2}));
        assert_eq!(r["status"], "incomplete");
        assert_eq!(r["incomplete_details"]["reason"], "max_output_tokens");
        assert_eq!(r["max_output_tokens"], 2);
        // No usage from the upstream: zeros, never null.
        assert_eq!(r["usage"]["output_tokens"], 0);
    }

    #[test]
    fn an_empty_answer_has_no_items_and_an_error_body_is_none() {
        let completion = json!({"choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": ""}}]});
        assert_eq!(
            answer(completion, json!({"input": "x"}))["output"],
            json!([])
        );
        let error = json!({"error": {"message": "bad"}});
        assert!(from_chat(&error, &Echo::new(&json!({})), &ids()).is_none());
    }
}
