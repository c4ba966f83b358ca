//! A Chat Completions `usage` object as a Responses `usage` object.

use serde_json::{json, Value};

/// `usage` of a Responses object from a Chat Completions `usage`:
/// `prompt_tokens` → `input_tokens` (its `prompt_tokens_details.cached_tokens`
/// → `input_tokens_details.cached_tokens`), `completion_tokens` →
/// `output_tokens` (`completion_tokens_details.reasoning_tokens` →
/// `output_tokens_details.reasoning_tokens`), `total_tokens` kept (their sum
/// when the upstream gave none). A count the upstream left out is 0.
/// `None` when `usage` is not an object.
pub(crate) fn from_chat(usage: &Value) -> Option<Value> {
    let u = usage.as_object()?;
    let count = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    let input = count(u.get("prompt_tokens"));
    let output = count(u.get("completion_tokens"));
    let total = u
        .get("total_tokens")
        .and_then(Value::as_u64)
        .unwrap_or(input + output);
    let cached = count(usage.pointer("/prompt_tokens_details/cached_tokens"));
    let reasoning = count(usage.pointer("/completion_tokens_details/reasoning_tokens"));
    Some(json!({
        "input_tokens": input,
        "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": total,
    }))
}

/// The `usage` of an answer whose upstream reported none: every count 0.
/// A final response always carries a `usage` object: clients such as the
/// AI SDK's `@ai-sdk/openai` refuse a response (or miss the end of a
/// stream) without one.
pub(crate) fn unknown() -> Value {
    from_chat(&json!({})).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_usage_maps_to_input_and_output_tokens() {
        let chat = json!({"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42,
            "prompt_tokens_details": {"cached_tokens": 8},
            "completion_tokens_details": {"reasoning_tokens": 20}});
        assert_eq!(
            from_chat(&chat),
            Some(json!({"input_tokens": 12,
                "input_tokens_details": {"cached_tokens": 8, "cache_write_tokens": 0},
                "output_tokens": 30, "output_tokens_details": {"reasoning_tokens": 20},
                "total_tokens": 42}))
        );
    }

    #[test]
    fn missing_counts_are_zero_and_the_total_their_sum() {
        let u = from_chat(&json!({"prompt_tokens": 3, "completion_tokens": 4})).unwrap_or_default();
        assert_eq!(u["total_tokens"], 7);
        assert_eq!(u["output_tokens_details"]["reasoning_tokens"], 0);
        assert_eq!(from_chat(&Value::Null), None);
        assert_eq!(unknown()["input_tokens"], 0);
        assert_eq!(unknown()["total_tokens"], 0);
    }
}
