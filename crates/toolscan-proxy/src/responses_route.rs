//! `POST /v1/responses` ([`ResponsesMode::Translate`], the default): the
//! Responses request translated into a chat request
//! ([`responses::translate`]), sent to the upstream's
//! `/v1/chat/completions`, its answer read for calls as the chat route
//! reads one (`options_for`: only when tools are offered), and translated
//! back — whole ([`responses::answer::from_chat`]) or as the Responses
//! event stream ([`responses::EventStream`]). A finished response is kept
//! for `previous_response_id` when `--responses-store` keeps any.
//!
//! With [`ResponsesMode::Passthrough`], the request is forwarded as it
//! came to an upstream that serves `/v1/responses` itself, and its
//! answer's text calls are rewritten ([`responses::Passthrough`] for its events,
//! [`responses::passthrough::rewrite_whole`] for a whole response), read
//! by the same rules ([`responses::parse_view`]: only when function tools
//! are offered).
//!
//! [`ResponsesMode::Translate`]: crate::ResponsesMode::Translate
//! [`ResponsesMode::Passthrough`]: crate::ResponsesMode::Passthrough

use std::io;
use std::pin::Pin;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, request, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use serde_json::Value;
use sse_stream::SseByteStream;
use toolscan_sse::{RewriteError, Tally};
use tracing::{warn, Span};

use crate::access::{tagged, Started, UpstreamSaid};
use crate::chat::{emulated, request_json};
use crate::emulate;
use crate::errors::{json_response, rewrite_error_message, unreachable_upstream, upstream_error};
use crate::forward::pass_through;
use crate::headers::request_headers;
use crate::idle;
use crate::relay::{guarded, read_whole, relay, succeeded, RewrittenStream, Streamed};
use crate::responses::error::RequestError;
use crate::responses::{
    self, answer, passthrough, sse, EventStream, Ids, Passthrough, ResponseStore, Translated,
};
use crate::state::{path_of, Proxy};
use crate::upstream::{Outgoing, Reply};

/// A stream of SSE bytes, its errors as text.
type SseBytes = Pin<Box<dyn Stream<Item = Result<Bytes, io::Error>> + Send>>;

/// `POST /v1/responses`, translated to and from the upstream's chat
/// completions.
pub(crate) async fn responses(
    State(proxy): State<Arc<Proxy>>,
    Extension(Started(start)): Extension<Started>,
    parts: request::Parts,
    bytes: Bytes,
) -> Response {
    let json = match request_json(&bytes) {
        Ok(Some(json)) => json,
        Ok(None) => return bad_request(&RequestError::NotAnObject.body()),
        Err(refused) => return refused.into_response(),
    };
    let translated = match responses::translate(&json, proxy.responses.as_deref()) {
        Ok(t) => t,
        Err(e) => return bad_request(&e.body()),
    };
    let model = translated.chat.get("model").and_then(Value::as_str);
    let settings = proxy.model_settings(model);
    let (mut format, mut grammar) = proxy.grammar_for(model);
    let mut body = Bytes::from(translated.chat.to_string());
    if settings.emulate_tools && emulate::wanted(&translated.chat) {
        match emulated(&proxy, &translated.chat, &mut format, &mut grammar) {
            Ok(emulated) => body = emulated,
            Err(refused) => return refused.into_response(),
        }
    }
    let span = Span::current();
    span.record("format", format.as_str());
    span.record("stream", translated.stream);
    let tally = Arc::new(Tally::default());
    let config = proxy
        .options_for(Some(&translated.chat))
        .map(|options| proxy.rewrite_config(grammar, options, &settings, &tally));
    span.record("parse", if config.is_some() { "calls" } else { "off" });
    let chat = Outgoing::post(crate::CHAT_COMPLETIONS, chat_headers(&parts.headers), body);
    let request = proxy.client.send(chat);
    let response = match idle::send(request, proxy.settings.upstream_idle_timeout).await {
        Ok(response) => response,
        Err(e) => return unreachable_upstream(e),
    };
    let answer = Answer {
        proxy: &proxy,
        translated,
        config,
        upstream: UpstreamSaid {
            status: Some(response.status.as_u16()),
            failed: false,
            tally: Some(tally),
        },
    };
    answer.send(response, start).await
}

/// What the client sends, for the chat request: its headers (its key
/// among them) with the body's type and length those of the chat body.
fn chat_headers(headers: &HeaderMap) -> HeaderMap {
    let mut headers = request_headers(headers, false);
    headers.remove(header::CONTENT_LENGTH);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers
}

/// A `400` with the OpenAI error object `body`.
fn bad_request(body: &Value) -> Response {
    json_response(StatusCode::BAD_REQUEST, body)
}

/// A translated request's answer on its way back.
struct Answer<'a> {
    proxy: &'a Proxy,
    translated: Translated,
    /// How the chat answer is read for calls (`None`: it is not).
    config: Option<toolscan_sse::Config>,
    upstream: UpstreamSaid,
}

/// The headers of a stream of events the proxy writes.
fn sse_headers() -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers
}

impl Answer<'_> {
    /// The upstream's answer, translated (streamed or whole).
    async fn send(self, response: Reply, start: std::time::Instant) -> Response {
        let idle = self.proxy.settings.upstream_idle_timeout;
        let (response, is_sse) = match succeeded(response, &self.upstream, idle).await {
            Ok(ok) => ok,
            Err(refused) => return refused,
        };
        if is_sse {
            self.stream(response, start).await
        } else {
            self.whole(response).await
        }
    }

    /// A whole answer: read (within `max_response_bytes`), its calls read,
    /// translated into a `response`.
    async fn whole(self, response: Reply) -> Response {
        let settings = &self.proxy.settings;
        let (max, idle) = (settings.max_response_bytes, settings.upstream_idle_timeout);
        let body = match read_whole(response, max, idle).await {
            Ok(body) => body,
            Err((timed_out, message)) => return upstream_error(timed_out, &message, self.upstream),
        };
        let body = match &self.config {
            Some(config) => match toolscan_sse::rewrite_body(&body, config) {
                Ok(rewritten) => Bytes::from(rewritten),
                Err(e) => {
                    warn!(error = ?e, "the answer is not a chat.completion");
                    body
                }
            },
            None => body,
        };
        let ids = Ids::new();
        let translated = serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|completion| answer::from_chat(&completion, &self.translated.echo, &ids));
        let Some(out) = translated else {
            let message = "the upstream's answer is not a chat.completion";
            return upstream_error(false, message, self.upstream);
        };
        if let Some(store) = &self.proxy.responses {
            let output = out.get("output").and_then(Value::as_array);
            let output = output.map_or(&[][..], Vec::as_slice);
            responses::keep(store, &ids.response, &self.translated, output);
        }
        tagged(json_response(StatusCode::OK, &out), self.upstream)
    }

    /// A streamed answer: its chunks rewritten (when calls are read), then
    /// translated into Responses events, sent as they come.
    async fn stream(self, response: Reply, start: std::time::Instant) -> Response {
        let model = self.translated.chat.get("model").and_then(Value::as_str);
        let model = model.unwrap_or_default().to_owned();
        let body = guarded(self.proxy, response);
        let chunks: SseBytes = match self.config {
            Some(config) => Box::pin(
                toolscan_sse::rewrite_stream(body, config)
                    .map(|r| r.map_err(|e| io::Error::other(rewrite_error_message(e)))),
            ),
            None => Box::pin(body),
        };
        let events = EventStream::new(self.translated.echo.clone(), Ids::new());
        let keep = self
            .proxy
            .responses
            .clone()
            .map(|store| (store, self.translated));
        let stream: RewrittenStream = Box::pin(events_of(chunks, events, keep));
        let streamed = Streamed {
            status: StatusCode::OK,
            headers: sse_headers(),
            upstream: self.upstream,
            model,
        };
        relay(self.proxy, streamed, stream, start).await
    }
}

/// The state of [`events_of`].
struct Translating {
    chunks: Pin<Box<SseByteStream<SseBytes>>>,
    events: EventStream,
    /// Where the finished response is kept, and its request.
    keep: Option<(Arc<ResponseStore>, Translated)>,
    ended: bool,
}

impl Translating {
    /// The events of one upstream SSE event (`None`: the stream is
    /// over).
    fn event(&mut self, item: Option<Result<sse_stream::Sse, sse_stream::Error>>) -> Vec<u8> {
        let mut out = Vec::new();
        match item {
            Some(Ok(sse)) => match sse.data.as_deref().map(str::trim) {
                Some("[DONE]") => self.events.end(&mut out),
                Some(data) => self.events.chunk_json(data, &mut out),
                None => {}
            },
            Some(Err(e)) => {
                let message = format!("the upstream failed mid-stream: {e}");
                warn!(%message, "upstream failed");
                self.events.fail(&message, &mut out);
            }
            None => self.events.end(&mut out),
        }
        if self.events.ended() {
            self.ended = true;
            if let Some((store, translated)) = self.keep.take() {
                let id = self.events.response_id().to_owned();
                responses::keep(&store, &id, &translated, self.events.output());
            }
        }
        let mut bytes = Vec::new();
        for event in &out {
            sse::write(event, &mut bytes);
        }
        bytes
    }
}

/// The Responses events of the (rewritten) chat chunks in `chunks`, each
/// upstream event's in one piece.
fn events_of(
    chunks: SseBytes,
    events: EventStream,
    keep: Option<(Arc<ResponseStore>, Translated)>,
) -> impl Stream<Item = Result<Bytes, RewriteError<io::Error>>> + Send {
    let state = Translating {
        chunks: Box::pin(SseByteStream::new(chunks)),
        events,
        keep,
        ended: false,
    };
    futures_util::stream::unfold(state, |mut st| async move {
        while !st.ended {
            let item = st.chunks.next().await;
            let out = st.event(item);
            if !out.is_empty() {
                return Some((Ok(Bytes::from(out)), st));
            }
        }
        None
    })
}

/// `POST /v1/responses` with `--responses passthrough`: forwarded as it
/// came; the answer's text calls rewritten when the request offers
/// function tools.
pub(crate) async fn passthrough(
    State(proxy): State<Arc<Proxy>>,
    Extension(Started(start)): Extension<Started>,
    parts: request::Parts,
    bytes: Bytes,
) -> Response {
    let json = match request_json(&bytes) {
        Ok(json) => json,
        Err(refused) => return refused.into_response(),
    };
    let view = json.as_ref().map(responses::parse_view);
    let model = view
        .as_ref()
        .and_then(|v| v.get("model"))
        .and_then(Value::as_str);
    let settings = proxy.model_settings(model);
    let (format, grammar) = proxy.grammar_for(model);
    let span = Span::current();
    span.record("format", format.as_str());
    let Some(options) = proxy.options_for(view.as_ref()) else {
        span.record("parse", "off");
        return pass_through(&proxy, &parts, bytes, true).await;
    };
    span.record("parse", "calls");
    let tally = Arc::new(Tally::default());
    let config = proxy.rewrite_config(grammar, options, &settings, &tally);
    let headers = request_headers(&parts.headers, false);
    let request = proxy
        .client
        .send(Outgoing::post(path_of(&parts.uri), headers, bytes));
    let response = match idle::send(request, proxy.settings.upstream_idle_timeout).await {
        Ok(response) => response,
        Err(e) => return unreachable_upstream(e),
    };
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
    if !is_sse {
        let max = proxy.settings.max_response_bytes;
        let body = match read_whole(response, max, idle).await {
            Ok(body) => body,
            Err((timed_out, message)) => return upstream_error(timed_out, &message, upstream),
        };
        let Ok(mut out) = serde_json::from_slice::<Value>(&body) else {
            let message = "the upstream's answer is not a Responses object";
            return upstream_error(false, message, upstream);
        };
        passthrough::rewrite_whole(&mut out, &config);
        return tagged(json_response(StatusCode::OK, &out), upstream);
    }
    let body: SseBytes = Box::pin(guarded(&proxy, response));
    let stream: RewrittenStream = Box::pin(rewritten_events(body, Passthrough::new(config)));
    let streamed = Streamed {
        status: StatusCode::OK,
        headers: sse_headers(),
        upstream,
        model: model.unwrap_or_default().to_owned(),
    };
    relay(&proxy, streamed, stream, start).await
}

/// The upstream's Responses events in `body`, their text calls rewritten.
fn rewritten_events(
    body: SseBytes,
    rewrite: Passthrough,
) -> impl Stream<Item = Result<Bytes, RewriteError<io::Error>>> + Send {
    let state = (Box::pin(SseByteStream::new(body)), rewrite);
    futures_util::stream::unfold(state, |(mut body, mut rewrite)| async move {
        while !rewrite.ended() {
            let mut out = Vec::new();
            match body.next().await {
                Some(Ok(sse)) => match sse.data.as_deref().map(str::trim) {
                    Some("[DONE]") | None => {}
                    Some(data) => rewrite.event_json(data, &mut out),
                },
                Some(Err(e)) => {
                    let message = format!("the upstream failed mid-stream: {e}");
                    warn!(%message, "upstream failed");
                    rewrite.fail(&message, &mut out);
                }
                None => rewrite.fail(
                    "the upstream ended its stream before its final event",
                    &mut out,
                ),
            }
            let mut bytes = Vec::new();
            for event in &out {
                sse::write(event, &mut bytes);
            }
            if !bytes.is_empty() {
                return Some((Ok(Bytes::from(bytes)), (body, rewrite)));
            }
        }
        None
    })
}
