//! One request, sent and read to its end: the SSE stream's events timed
//! as they arrive and written into a [`Timeline`].
//!
//! `--timeout` is an idle limit: the seconds the server may send nothing,
//! before its answer begins or between two reads of it. A request that
//! fails keeps what was recorded before the failure, with its
//! [`RequestError`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::Value;

use crate::detect::Detector;
use crate::error::{ErrorKind, RequestError};
use crate::timeline::{Micros, Timeline};

/// Where and how to send a request.
#[derive(Clone, Copy, Debug)]
pub struct Sender<'a> {
    /// The HTTP client (connections are pooled across requests).
    pub http: &'a reqwest::Client,
    /// The chat completions URL.
    pub url: &'a str,
    /// Sent as `Authorization: Bearer …`.
    pub api_key: Option<&'a str>,
    /// The idle limit.
    pub timeout: Duration,
}

/// The longest part of an error answer quoted in a message.
const QUOTED: usize = 300;

impl Sender<'_> {
    /// Sends `body` and reads the answer to its end, calls read by
    /// `detector`.
    pub async fn run(self, body: Vec<u8>, mut detector: Detector) -> Timeline {
        let sent = Instant::now();
        let mut t = Timeline::default();
        let mut request = self
            .http
            .post(self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .body(body);
        if let Some(key) = self.api_key {
            request = request.bearer_auth(key);
        }
        let response = match tokio::time::timeout(self.timeout, request.send()).await {
            Err(_) => {
                t.error = Some(RequestError::new(
                    ErrorKind::Timeout,
                    format!("no answer within {} (--timeout)", seconds(self.timeout)),
                ));
                return t;
            }
            Ok(Err(e)) => {
                t.error = Some(send_error(&e, self.url));
                return t;
            }
            Ok(Ok(r)) => r,
        };
        let status = response.status();
        t.status = Some(status.as_u16());
        if !status.is_success() {
            let body = tokio::time::timeout(self.timeout, response.bytes()).await;
            let said = match body {
                Ok(Ok(bytes)) => server_message(&bytes),
                _ => String::new(),
            };
            let reason = status.canonical_reason().unwrap_or("");
            let mut message = format!("HTTP {} {reason}", status.as_u16());
            if !said.is_empty() {
                message.push_str(": ");
                message.push_str(&said);
            }
            t.error = Some(RequestError::new(ErrorKind::Status, message));
            return t;
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        if !content_type
            .to_ascii_lowercase()
            .starts_with("text/event-stream")
        {
            let shown = if content_type.is_empty() {
                "none".to_owned()
            } else {
                content_type
            };
            let said = match tokio::time::timeout(self.timeout, response.bytes()).await {
                Ok(Ok(bytes)) => server_message(&bytes),
                _ => String::new(),
            };
            let mut message = format!("the answer is not an SSE stream (content-type: {shown})");
            if !said.is_empty() {
                message.push_str(": ");
                message.push_str(&said);
            }
            t.error = Some(RequestError::new(ErrorKind::NotSse, message));
            return t;
        }
        let first_byte = Arc::new(AtomicU64::new(u64::MAX));
        let seen = Arc::clone(&first_byte);
        let bytes = response.bytes_stream().inspect(move |chunk| {
            if chunk.is_ok() {
                let _ = seen.compare_exchange(
                    u64::MAX,
                    micros(sent),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
            }
        });
        let mut events = std::pin::pin!(sse_stream::SseByteStream::new(bytes));
        loop {
            let next = tokio::time::timeout(self.timeout, events.next()).await;
            let at = micros(sent);
            let event = match next {
                Err(_) => {
                    t.error = Some(RequestError::new(
                        ErrorKind::Timeout,
                        format!(
                            "the stream stalled: nothing for {} (--timeout)",
                            seconds(self.timeout)
                        ),
                    ));
                    break;
                }
                Ok(None) => {
                    if t.finish.is_some() {
                        t.done = Some(at);
                    } else {
                        t.error = Some(RequestError::new(
                            ErrorKind::Unfinished,
                            "the stream ended with neither [DONE] nor a finish_reason",
                        ));
                    }
                    break;
                }
                Ok(Some(Err(e))) => {
                    t.error = Some(RequestError::new(
                        ErrorKind::Broken,
                        format!("the stream broke: {}", error_chain(&e)),
                    ));
                    break;
                }
                Ok(Some(Ok(event))) => event,
            };
            let Some(data) = event.data else { continue };
            let data = data.trim();
            if data == "[DONE]" {
                t.done = Some(at);
                t.done_marker = true;
                break;
            }
            let Ok(chunk) = serde_json::from_str::<Value>(data) else {
                continue;
            };
            if let Some(error) = chunk.get("error") {
                t.error = Some(RequestError::new(
                    ErrorKind::Upstream,
                    format!("the stream carried an error: {}", error_message(error)),
                ));
                break;
            }
            read_chunk(&chunk, at, &mut t, &mut detector);
        }
        let end = t.done.unwrap_or_else(|| micros(sent));
        detector.finish(end);
        t.calls = detector.into_calls();
        let first = first_byte.load(Ordering::Relaxed);
        t.first_byte = (first != u64::MAX).then_some(first);
        t
    }
}

/// One `chat.completion.chunk`: its tokens, calls, finish and usage.
fn read_chunk(chunk: &Value, at: Micros, t: &mut Timeline, detector: &mut Detector) {
    if let Some(n) = chunk
        .get("usage")
        .and_then(|u| u.get("completion_tokens"))
        .and_then(Value::as_u64)
    {
        t.completion_tokens = Some(n);
    }
    let Some(choice) = chunk
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| {
            c.iter()
                .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        })
    else {
        return;
    };
    let mut token = false;
    if let Some(delta) = choice.get("delta") {
        for key in ["reasoning_content", "reasoning"] {
            if delta
                .get(key)
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty())
            {
                token = true;
            }
        }
        if let Some(content) = delta.get("content").and_then(Value::as_str) {
            if !content.is_empty() {
                token = true;
                detector.content(content, at);
            }
        }
        if let Some(entries) = delta.get("tool_calls").and_then(Value::as_array) {
            for entry in entries {
                token = true;
                detector.native(entry, at);
            }
        }
    }
    if token {
        t.tokens.push(at);
    }
    if t.finish.is_none() {
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            t.finish = Some(at);
            t.finish_reason = Some(reason.to_owned());
        }
    }
}

fn micros(since: Instant) -> Micros {
    u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX)
}

fn seconds(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

fn send_error(e: &reqwest::Error, url: &str) -> RequestError {
    if e.is_timeout() {
        return RequestError::new(ErrorKind::Timeout, format!("no answer from {url}"));
    }
    let kind = if e.is_connect() {
        ErrorKind::Connect
    } else {
        ErrorKind::Broken
    };
    let what = if e.is_connect() {
        "cannot connect to"
    } else {
        "the request failed:"
    };
    RequestError::new(kind, format!("{what} {url}: {}", error_chain(e)))
}

/// An error and its sources, `: `-joined (reqwest's own message says
/// little: "error sending request").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}

/// What an error answer says: its `error.message` (OpenAI), `message` or
/// `detail` (FastAPI), else the start of its text.
fn server_message(body: &[u8]) -> String {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        let said = v
            .get("error")
            .map(error_message)
            .or_else(|| v.get("message").and_then(Value::as_str).map(str::to_owned))
            .or_else(|| {
                v.get("detail")
                    .map(|d| d.as_str().map_or(d.to_string(), str::to_owned))
            });
        if let Some(said) = said {
            return cut(&said);
        }
    }
    cut(String::from_utf8_lossy(body).trim())
}

fn error_message(error: &Value) -> String {
    match error {
        Value::String(s) => s.clone(),
        v => v
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| v.to_string(), str::to_owned),
    }
}

fn cut(s: &str) -> String {
    match s.char_indices().nth(QUOTED) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_messages_are_read_from_the_usual_shapes() {
        assert_eq!(
            server_message(br#"{"error": {"message": "bad key"}}"#),
            "bad key"
        );
        assert_eq!(server_message(br#"{"error": "nope"}"#), "nope");
        assert_eq!(server_message(br#"{"detail": "Not Found"}"#), "Not Found");
        assert_eq!(server_message(b"plain text\n"), "plain text");
        assert_eq!(server_message(&[b'x'; 400]).chars().count(), QUOTED + 1);
    }
}
