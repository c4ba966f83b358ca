//! The output items of a response, as the Responses API writes them:
//! `reasoning`, `message` (one `output_text` part) and `function_call`.
//! The whole answer and the event stream build their items here, so an
//! item looks the same either way.

use serde_json::{json, Value};

/// A `reasoning` item whose text is `text` (as one `reasoning_text`
/// content part; no summary: the upstream's reasoning is the model's own
/// text, not a summary of it). `status`: `in_progress` while it streams.
pub(crate) fn reasoning(id: &str, text: Option<&str>, status: &str) -> Value {
    let content = match text {
        Some(t) => json!([reasoning_part(t)]),
        None => json!([]),
    };
    json!({"id": id, "type": "reasoning", "summary": [], "content": content, "status": status})
}

/// A reasoning item's content part.
pub(crate) fn reasoning_part(text: &str) -> Value {
    json!({"type": "reasoning_text", "text": text})
}

/// An assistant `message` item whose content is `parts`.
pub(crate) fn message(id: &str, parts: Vec<Value>, status: &str) -> Value {
    json!({"id": id, "type": "message", "role": "assistant", "status": status,
        "content": parts})
}

/// An `output_text` content part.
pub(crate) fn output_text(text: &str) -> Value {
    json!({"type": "output_text", "text": text, "annotations": [], "logprobs": []})
}

/// A `refusal` content part.
pub(crate) fn refusal(text: &str) -> Value {
    json!({"type": "refusal", "refusal": text})
}

/// A `function_call` item: `call_id` is the Chat Completions call's id
/// (what the client answers with in `function_call_output`), `id` the
/// item's own.
pub(crate) fn function_call(
    id: &str,
    call_id: &str,
    name: &str,
    arguments: &str,
    status: &str,
) -> Value {
    json!({"id": id, "type": "function_call", "status": status, "call_id": call_id,
        "name": name, "arguments": arguments})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_function_call_item_carries_the_chat_call_id() {
        let item = function_call("fc_1", "call_a", "f", "{}", "completed");
        assert_eq!(item["call_id"], "call_a");
        assert_eq!(item["id"], "fc_1");
        assert_eq!(item["type"], "function_call");
    }

    #[test]
    fn a_message_has_one_output_text_part_without_annotations() {
        let item = message("msg_1", vec![output_text("hi")], "completed");
        assert_eq!(
            item["content"][0],
            json!({"type": "output_text", "text": "hi",
            "annotations": [], "logprobs": []})
        );
        assert_eq!(item["role"], "assistant");
    }
}
