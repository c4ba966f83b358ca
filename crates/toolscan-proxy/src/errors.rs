//! The proxy's error answers: OpenAI error objects (`{"error": {"message",
//! "type", "param", "code"}}`), as a response before the answer began, or
//! as an SSE event after.

use std::io;
use std::time::Duration;

use axum::http::header::{self, HeaderValue};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{json, Value};
use toolscan_sse::RewriteError;
use tracing::warn;

use crate::access::{tagged, UpstreamSaid};
use crate::idle;
use crate::upstream::{error_chain, Reply, UpstreamError};

/// An OpenAI error object.
pub(crate) fn error_response(status: StatusCode, message: &str, kind: &str) -> Response {
    let body = json!({"error": {"message": message, "type": kind, "param": null, "code": null}});
    json_response(status, &body)
}

/// A client's mistake: `status` with an `invalid_request_error`.
pub(crate) fn invalid_request(status: StatusCode, message: &str) -> Response {
    error_response(status, message, "invalid_request_error")
}

/// A request the proxy refuses: `status` with an `invalid_request_error`
/// saying why (a small `Err` for the handlers' helpers).
pub(crate) struct Refused(pub(crate) StatusCode, pub(crate) String);

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        invalid_request(self.0, &self.1)
    }
}

/// A JSON response.
pub(crate) fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body.to_string(),
    )
        .into_response()
}

/// The SSE event OpenAI sends when a stream fails.
pub(crate) fn error_event(message: &str) -> Bytes {
    let event = json!({"error": {"message": message, "type": "upstream_error", "param": null, "code": null}});
    Bytes::from(format!("data: {event}\n\n"))
}

/// What a failed rewrite says.
pub(crate) fn rewrite_error_message(e: RewriteError<io::Error>) -> String {
    match e {
        RewriteError::Upstream(e) => error_chain(&e),
        RewriteError::TooManyChoices(max) => {
            format!("the upstream sent more than {max} choices (--max-choices)")
        }
        other => other.to_string(),
    }
}

/// The upstream failed before the answer began: `504` if it timed out,
/// else `502`, logged, tagged for the access line.
pub(crate) fn upstream_error(
    timed_out: bool,
    message: &str,
    mut upstream: UpstreamSaid,
) -> Response {
    warn!(%message, "upstream failed");
    upstream.failed = true;
    let status = if timed_out {
        StatusCode::GATEWAY_TIMEOUT
    } else {
        StatusCode::BAD_GATEWAY
    };
    tagged(error_response(status, message, "upstream_error"), upstream)
}

/// The upstream could not be reached (or did not answer): `502`.
pub(crate) fn unreachable_upstream(e: UpstreamError) -> Response {
    let timed_out = e.is_timeout();
    let message = format!("cannot reach the upstream: {e}");
    warn!(%message, "upstream unreachable");
    let upstream = UpstreamSaid {
        failed: true,
        ..UpstreamSaid::default()
    };
    let status = if timed_out {
        StatusCode::GATEWAY_TIMEOUT
    } else {
        StatusCode::BAD_GATEWAY
    };
    tagged(error_response(status, &message, "upstream_error"), upstream)
}

/// The upstream answered 5xx: `502`, with the start of what it said.
pub(crate) async fn upstream_failed(response: Reply, idle: Duration) -> Response {
    const KEEP: usize = 2048;
    let status = response.status;
    let mut body = idle::body(response, idle);
    let mut said = Vec::new();
    while said.len() < KEEP {
        match idle::chunk(&mut body).await {
            Ok(Some(chunk)) => said.extend_from_slice(&chunk),
            _ => break,
        }
    }
    said.truncate(KEEP);
    let said = String::from_utf8_lossy(&said);
    let said = serde_json::from_str::<Value>(&said)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| said.trim().to_owned());
    let message = if said.is_empty() {
        format!("the upstream answered {status}")
    } else {
        format!("the upstream answered {status}: {said}")
    };
    warn!(upstream_status = status.as_u16(), "upstream failed");
    let upstream = UpstreamSaid {
        status: Some(status.as_u16()),
        failed: true,
        tally: None,
    };
    tagged(
        error_response(StatusCode::BAD_GATEWAY, &message, "upstream_error"),
        upstream,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_event_is_openai_s() {
        let event = error_event("boom \"quoted\"");
        let text = std::str::from_utf8(&event).unwrap();
        let data = text
            .strip_prefix("data: ")
            .unwrap()
            .strip_suffix("\n\n")
            .unwrap();
        let v: Value = serde_json::from_str(data).unwrap();
        assert_eq!(v["error"]["message"], "boom \"quoted\"");
        assert_eq!(v["error"]["type"], "upstream_error");
    }
}
