//! The requests a run sends: chat completion request bodies, one JSON
//! object a line (`messages`, `tools`, any other field the server takes),
//! from a file or the bundled default ([`Workload::bundled`]).
//!
//! Every body is sent as written, except that `stream` is set to `true`
//! and `model` to the run's model when one is given (`--model`); a line
//! without `model` gets the run's. Request `i` of a run is line
//! `i % lines` of the workload.

use serde_json::{Map, Value};
use toolscan_core::Tools;

use crate::error::SetupError;

/// The bundled workload: a few prompts whose answers call tools (weather
/// in two cities, a web search, reading a file and running tests, a
/// currency conversion), each with its `tools`.
pub const BUNDLED: &str = include_str!("../data/default.jsonl");

/// The requests of a run, in order.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Never empty.
    requests: Vec<WorkRequest>,
}

/// One line of a workload.
#[derive(Clone, Debug)]
pub struct WorkRequest {
    /// The request body, a JSON object.
    pub body: Map<String, Value>,
    /// Its `tools`, read for the parser (schema-aware formats type the
    /// parameters by them); `None` when it has none or they do not read.
    pub tools: Option<Tools>,
    /// Its line number in the workload (from 1).
    pub line: usize,
}

impl Workload {
    /// The bundled workload ([`BUNDLED`]).
    pub fn bundled() -> Workload {
        // The bundled file is checked by a test: it always reads.
        Workload::from_jsonl(BUNDLED, "the bundled workload").unwrap_or(Workload {
            requests: Vec::new(),
        })
    }

    /// Reads JSON Lines of request objects; blank lines and lines that
    /// begin with `//` are skipped. `origin` names the input in errors.
    ///
    /// ```
    /// use toolscan_bench::Workload;
    /// let w = Workload::from_jsonl(r#"{"messages": [{"role": "user", "content": "hi"}]}"#, "x").unwrap();
    /// assert_eq!(w.len(), 1);
    /// assert!(Workload::from_jsonl("[1]", "x").is_err());
    /// ```
    pub fn from_jsonl(text: &str, origin: &str) -> Result<Workload, SetupError> {
        let mut requests = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line_no = n + 1;
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with("//") {
                continue;
            }
            let value: Value = serde_json::from_str(trimmed)
                .map_err(|e| SetupError(format!("{origin}, line {line_no}: not JSON: {e}")))?;
            let Value::Object(body) = value else {
                return Err(SetupError(format!(
                    "{origin}, line {line_no}: a request must be a JSON object"
                )));
            };
            if !body.get("messages").is_some_and(Value::is_array) {
                return Err(SetupError(format!(
                    "{origin}, line {line_no}: a chat request needs a `messages` array"
                )));
            }
            let tools = body
                .get("tools")
                .and_then(|t| Tools::from_json(t).ok())
                .filter(|t| !t.is_empty());
            requests.push(WorkRequest {
                body,
                tools,
                line: line_no,
            });
        }
        if requests.is_empty() {
            return Err(SetupError(format!("{origin} holds no request")));
        }
        Ok(Workload { requests })
    }

    /// How many requests (lines) it has.
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    /// Whether it has none (never true of a workload that was read).
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// Request `i` of a run: line `i % len`.
    pub fn get(&self, i: usize) -> Option<&WorkRequest> {
        self.requests.get(i % self.requests.len().max(1))
    }

    /// Whether every line names its own `model`.
    pub fn all_have_model(&self) -> bool {
        self.requests
            .iter()
            .all(|r| r.body.get("model").is_some_and(Value::is_string))
    }
}

impl WorkRequest {
    /// The body to send: `stream: true`, and `model` set to `model` when
    /// given (else the line's own).
    pub fn body_for(&self, model: Option<&str>) -> Vec<u8> {
        let mut body = self.body.clone();
        body.insert("stream".into(), Value::Bool(true));
        if let Some(model) = model {
            body.insert("model".into(), Value::String(model.to_owned()));
        }
        serde_json::to_vec(&Value::Object(body)).unwrap_or_default()
    }

    /// The model this request names (after [`WorkRequest::body_for`]'s
    /// override).
    pub fn model<'a>(&'a self, model: Option<&'a str>) -> Option<&'a str> {
        model.or_else(|| self.body.get("model").and_then(Value::as_str))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_workload_reads_with_tools() {
        let w = Workload::from_jsonl(BUNDLED, "bundled").unwrap();
        assert!(w.len() >= 3);
        for i in 0..w.len() {
            let r = w.get(i).unwrap();
            assert!(r.tools.is_some(), "line {} has tools", r.line);
        }
    }

    #[test]
    fn body_is_streamed_with_the_model() {
        let w = Workload::bundled();
        let body: Value = serde_json::from_slice(&w.get(0).unwrap().body_for(Some("m"))).unwrap();
        assert_eq!(body["stream"], true);
        assert_eq!(body["model"], "m");
        assert!(body["tools"].is_array());
    }

    #[test]
    fn bad_lines_name_their_number() {
        let e = Workload::from_jsonl("\n{\"messages\": []}\n{\"x\": 1}\n", "f.jsonl").unwrap_err();
        assert_eq!(
            e.0,
            "f.jsonl, line 3: a chat request needs a `messages` array"
        );
        assert!(Workload::from_jsonl("\n\n", "f").is_err());
    }
}
