//! `POST /v1/chat/completions`: the request read whole ([`read_body`], a
//! layer: its size and time bounded), emulated tool calling written into it
//! ([`emulate`](crate::emulate)), sent upstream, and the answer rewritten
//! ([`chat`], then [`relay`](crate::relay)).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, request, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Extension;
use bytes::Bytes;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde_json::Value;
use toolscan_core::Grammar;
use toolscan_sse::Tally;
use tracing::Span;

use crate::access::{Started, UpstreamSaid};
use crate::emulate;
use crate::errors::{invalid_request, unreachable_upstream, Refused};
use crate::forward::pass_through;
use crate::headers::{request_headers, response_headers};
use crate::idle;
use crate::relay::{relay_stream, rewrite_whole, succeeded, Answer};
use crate::state::{path_of, Proxy};
use crate::upstream::{Outgoing, Reply};

/// The layer before [`chat`]: the body read whole within
/// `max_request_bytes` (a larger declared `Content-Length` is refused
/// before any of it is read: `413`) and `request_body_timeout` (`408`).
pub(crate) async fn read_body(
    State(proxy): State<Arc<Proxy>>,
    request: Request,
    next: Next,
) -> Response {
    let max = proxy.settings.max_request_bytes;
    let too_large = || {
        invalid_request(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!("the request body is larger than {max} bytes"),
        )
    };
    let (parts, body) = request.into_parts();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return too_large();
    }
    let timeout = proxy.settings.request_body_timeout;
    let read = Limited::new(body, max).collect();
    let bytes = match tokio::time::timeout(timeout, read).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.is::<LengthLimitError>() => return too_large(),
        Ok(Err(e)) => {
            let message = format!("cannot read the request body: {e}");
            return invalid_request(StatusCode::BAD_REQUEST, &message);
        }
        Err(_) => {
            let message = format!(
                "the request body did not arrive within {} s",
                timeout.as_secs_f64()
            );
            return invalid_request(StatusCode::REQUEST_TIMEOUT, &message);
        }
    };
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// The request's JSON, `None` if it is not JSON (the upstream's to
/// refuse); JSON nested deeper than the reader goes (128 levels) could be
/// neither emulated nor read for calls: refused, not passed on unread.
pub(crate) fn request_json(bytes: &[u8]) -> Result<Option<Value>, Refused> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => Err(Refused(
            StatusCode::BAD_REQUEST,
            "the request body nests JSON deeper than 128 levels, more than the proxy reads".into(),
        )),
        Err(_) => Ok(None),
    }
}

/// Tool calling for a model served without it: the request rewritten, in a
/// format that can be written (`auto` cannot: `hermes` then).
pub(crate) fn emulated(
    proxy: &Proxy,
    request: &Value,
    format: &mut String,
    grammar: &mut Arc<Grammar>,
) -> Result<Bytes, Refused> {
    if format == "auto" {
        if let Ok(g) = proxy.settings.registry.grammar("hermes") {
            (*format, *grammar) = ("hermes".to_owned(), g);
        }
    }
    let Some(f) = proxy.settings.registry.get(format) else {
        let message = format!("tool calling cannot be emulated in `{format}`");
        return Err(Refused(StatusCode::BAD_REQUEST, message));
    };
    match emulate::rewrite(request, f) {
        Ok(body) => Ok(Bytes::from(body.to_string())),
        Err(e) => {
            let message = format!("tool calling cannot be emulated in `{format}`: {e}");
            Err(Refused(StatusCode::BAD_REQUEST, message))
        }
    }
}

/// `POST /v1/chat/completions`: forwarded, its answer rewritten.
pub(crate) async fn chat(
    State(proxy): State<Arc<Proxy>>,
    Extension(Started(start)): Extension<Started>,
    parts: request::Parts,
    bytes: Bytes,
) -> Response {
    let json = match request_json(&bytes) {
        Ok(json) => json,
        Err(refused) => return refused.into_response(),
    };
    let field = |name: &str| json.as_ref().and_then(|r| r.get(name));
    let wants_stream = field("stream").and_then(Value::as_bool).unwrap_or(false);
    let model = field("model").and_then(Value::as_str);
    let settings = proxy.model_settings(model);
    let (mut format, mut grammar) = proxy.grammar_for(model);
    let mut body = bytes;
    let mut rewritten = false;
    if let Some(request) = json
        .as_ref()
        .filter(|r| settings.emulate_tools && emulate::wanted(r))
    {
        match emulated(&proxy, request, &mut format, &mut grammar) {
            Ok(emulated) => (body, rewritten) = (emulated, true),
            Err(refused) => return refused.into_response(),
        }
    }
    let span = Span::current();
    span.record("format", format.as_str());
    span.record("stream", wants_stream);
    let Some(options) = proxy.options_for(json.as_ref()) else {
        span.record("parse", "off");
        return pass_through(&proxy, &parts, body, !rewritten).await;
    };
    let reads_calls = options.admit.max_calls != Some(0);
    span.record("parse", if reads_calls { "calls" } else { "reasoning" });
    let tally = Arc::new(Tally::default());
    let config = proxy.rewrite_config(grammar, options, &settings, &tally);
    // Identity: the rewrite reads the bytes.
    let headers = request_headers(&parts.headers, false);
    let request = proxy
        .client
        .send(Outgoing::post(path_of(&parts.uri), headers, body));
    let response = match idle::send(request, proxy.settings.upstream_idle_timeout).await {
        Ok(response) => response,
        Err(e) => return unreachable_upstream(e),
    };
    let model = model.unwrap_or_default().to_owned();
    answer(&proxy, response, config, tally, model, start).await
}

/// The upstream's answer to a read chat request: a 5xx is a `502`, a 4xx
/// the client's to see as it came, a success rewritten (streamed or
/// whole).
async fn answer(
    proxy: &Proxy,
    response: Reply,
    config: toolscan_sse::Config,
    tally: Arc<Tally>,
    model: String,
    start: std::time::Instant,
) -> Response {
    let upstream = UpstreamSaid {
        status: Some(response.status.as_u16()),
        failed: false,
        tally: Some(tally),
    };
    let idle = proxy.settings.upstream_idle_timeout;
    let (response, is_sse) = match succeeded(response, &upstream, idle).await {
        Ok(ok) => ok,
        Err(refused) => return refused,
    };
    let status = response.status;
    let headers = response_headers(&response.headers, true);
    let answer = Answer {
        status,
        headers,
        response,
        upstream,
    };
    if is_sse {
        relay_stream(proxy, answer, config, model, start).await
    } else {
        rewrite_whole(proxy, answer, &config).await
    }
}
