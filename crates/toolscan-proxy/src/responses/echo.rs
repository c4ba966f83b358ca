//! What a response object repeats of its request (`model`, `tools`,
//! `tool_choice`, `parallel_tool_calls`, sampling parameters…), with the
//! defaults the Responses API reports when the request left them out, and
//! the response object itself built around its output.

use serde_json::{json, Map, Value};

use super::ids::Ids;

/// The fields of a Responses request its response objects repeat, read
/// once from the request. Every value is what the response reports: the
/// request's, or the API's default when it had none.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Echo {
    /// The response object's fields taken from the request, in the shape
    /// the response reports them (`tools` flat, as the request gave them).
    fields: Map<String, Value>,
}

/// Request fields repeated as they came, `null` when absent.
const AS_GIVEN: [&str; 12] = [
    "instructions",
    "max_output_tokens",
    "max_tool_calls",
    "previous_response_id",
    "temperature",
    "top_p",
    "top_logprobs",
    "user",
    "safety_identifier",
    "prompt_cache_key",
    "service_tier",
    "background",
];

impl Echo {
    /// The echo of `request` (a Responses request object).
    pub(crate) fn new(request: &Value) -> Echo {
        let get = |k: &str| request.get(k).filter(|v| !v.is_null());
        let mut fields = Map::new();
        fields.insert(
            "model".into(),
            get("model").cloned().unwrap_or_else(|| "".into()),
        );
        for k in AS_GIVEN {
            fields.insert(k.into(), get(k).cloned().unwrap_or(Value::Null));
        }
        fields.insert(
            "metadata".into(),
            get("metadata").cloned().unwrap_or_else(|| json!({})),
        );
        fields.insert(
            "parallel_tool_calls".into(),
            get("parallel_tool_calls")
                .cloned()
                .unwrap_or(Value::Bool(true)),
        );
        fields.insert(
            "tool_choice".into(),
            get("tool_choice").cloned().unwrap_or_else(|| "auto".into()),
        );
        let tools = get("tools")
            .and_then(Value::as_array)
            .map(|tools| tools.iter().map(echoed_tool).collect())
            .unwrap_or_default();
        fields.insert("tools".into(), Value::Array(tools));
        fields.insert(
            "text".into(),
            get("text")
                .cloned()
                .unwrap_or_else(|| json!({"format": {"type": "text"}})),
        );
        let reasoning = get("reasoning").and_then(Value::as_object);
        let field = |k: &str| reasoning.and_then(|r| r.get(k)).cloned();
        fields.insert(
            "reasoning".into(),
            json!({
                "effort": field("effort").unwrap_or(Value::Null),
                "summary": field("summary").unwrap_or(Value::Null),
            }),
        );
        fields.insert(
            "truncation".into(),
            get("truncation")
                .cloned()
                .unwrap_or_else(|| "disabled".into()),
        );
        Echo { fields }
    }

    /// The model the response names: the request's, else the upstream's
    /// (`fallback`), when the request named none.
    pub(crate) fn with_model_fallback(&mut self, fallback: Option<&str>) {
        let empty = self
            .fields
            .get("model")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty);
        if let (true, Some(model)) = (empty, fallback) {
            self.fields.insert("model".into(), model.into());
        }
    }

    /// A response object: `ids`, `status`, `output`, `usage`, and the
    /// request's fields; `incomplete_details` and `error` `null` (see
    /// [`finish`]).
    pub(crate) fn response(&self, ids: &Ids, status: &str, output: Vec<Value>) -> Value {
        let mut r = Map::new();
        r.insert("id".into(), ids.response.clone().into());
        r.insert("object".into(), "response".into());
        r.insert("created_at".into(), ids.created_at.into());
        r.insert("status".into(), status.into());
        r.insert("error".into(), Value::Null);
        r.insert("incomplete_details".into(), Value::Null);
        r.insert("output".into(), Value::Array(output));
        r.insert("usage".into(), Value::Null);
        for (k, v) in &self.fields {
            r.insert(k.clone(), v.clone());
        }
        Value::Object(r)
    }
}

/// A tool as the response repeats it: a function tool with every field
/// the API reports (`description`, `parameters`, `strict`), `null` where
/// the request left one out; any other tool as given.
fn echoed_tool(tool: &Value) -> Value {
    let Some(t) = tool.as_object() else {
        return tool.clone();
    };
    if t.get("type").and_then(Value::as_str) != Some("function") {
        return tool.clone();
    }
    let mut out = t.clone();
    for k in ["description", "parameters", "strict"] {
        out.entry(k).or_insert(Value::Null);
    }
    Value::Object(out)
}

/// How a response ended, from the upstream's `finish_reason`: its
/// `status` and `incomplete_details`.
pub(crate) fn status_of(finish_reason: Option<&str>) -> (&'static str, Value) {
    match finish_reason {
        Some("length") => ("incomplete", json!({"reason": "max_output_tokens"})),
        Some("content_filter") => ("incomplete", json!({"reason": "content_filter"})),
        _ => ("completed", Value::Null),
    }
}

/// The status of the item open when an answer ended with
/// `finish_reason`: `incomplete` when it was cut (token limit, content
/// filter), else `completed`.
pub(crate) fn item_status(finish_reason: Option<&str>) -> &'static str {
    match status_of(finish_reason).0 {
        "incomplete" => "incomplete",
        _ => "completed",
    }
}

/// Sets a response object's `status` and `incomplete_details` for
/// `finish_reason` (and `completed_at` when it completed, at `now`).
pub(crate) fn finish(response: &mut Value, finish_reason: Option<&str>, now: u64) {
    let (status, details) = status_of(finish_reason);
    if let Some(r) = response.as_object_mut() {
        r.insert("status".into(), status.into());
        r.insert("incomplete_details".into(), details);
        if status == "completed" {
            r.insert("completed_at".into(), now.into());
        }
    }
}

/// Seconds since the Unix epoch.
pub(crate) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids() -> Ids {
        Ids {
            response: "resp_1".into(),
            created_at: 7,
        }
    }

    #[test]
    fn a_bare_request_gets_the_api_defaults() {
        let r =
            Echo::new(&json!({"model": "m", "input": "hi"})).response(&ids(), "completed", vec![]);
        assert_eq!(r["id"], "resp_1");
        assert_eq!(r["object"], "response");
        assert_eq!(r["created_at"], 7);
        assert_eq!(r["model"], "m");
        assert_eq!(r["tool_choice"], "auto");
        assert_eq!(r["parallel_tool_calls"], true);
        assert_eq!(r["tools"], json!([]));
        assert_eq!(r["text"], json!({"format": {"type": "text"}}));
        assert_eq!(r["reasoning"], json!({"effort": null, "summary": null}));
        assert_eq!(r["metadata"], json!({}));
        assert!(r["temperature"].is_null() && r["usage"].is_null());
    }

    #[test]
    fn function_tools_are_repeated_with_every_field() {
        let request = json!({"model": "m", "tools": [{"type": "function", "name": "f"}],
            "tool_choice": "required", "parallel_tool_calls": false, "temperature": 0.2});
        let r = Echo::new(&request).response(&ids(), "completed", vec![]);
        assert_eq!(
            r["tools"],
            json!([{"type": "function", "name": "f", "description": null,
                "parameters": null, "strict": null}])
        );
        assert_eq!(r["tool_choice"], "required");
        assert_eq!(r["parallel_tool_calls"], false);
        assert_eq!(r["temperature"], 0.2);
    }

    #[test]
    fn length_is_incomplete_for_max_output_tokens() {
        let mut r = Echo::new(&json!({})).response(&ids(), "in_progress", vec![]);
        finish(&mut r, Some("length"), 9);
        assert_eq!(r["status"], "incomplete");
        assert_eq!(
            r["incomplete_details"],
            json!({"reason": "max_output_tokens"})
        );
        finish(&mut r, Some("tool_calls"), 9);
        assert_eq!(r["status"], "completed");
        assert_eq!(r["completed_at"], 9);
        assert!(r["incomplete_details"].is_null());
    }

    #[test]
    fn the_upstream_model_names_a_response_whose_request_named_none() {
        let mut echo = Echo::new(&json!({}));
        echo.with_model_fallback(Some("qwen"));
        assert_eq!(echo.response(&ids(), "completed", vec![])["model"], "qwen");
        let mut echo = Echo::new(&json!({"model": "mine"}));
        echo.with_model_fallback(Some("qwen"));
        assert_eq!(echo.response(&ids(), "completed", vec![])["model"], "mine");
    }
}
