//! A read answer on its way to the client: a stream rewritten chunk by
//! chunk ([`relay_stream`], its body a [`Relay`]), or a whole answer read
//! and rewritten at once ([`rewrite_whole`]).

use std::convert::Infallible;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use http_body_util::BodyDataStream;
use toolscan_sse::{RewriteError, Tally};
use tracing::{info, warn, Span};

use crate::access::{elapsed_ms, tagged, UpstreamSaid};
use crate::cut::CutWatch;
use crate::errors::{error_event, rewrite_error_message, upstream_error, upstream_failed};
use crate::headers::{response_headers, with_parts};
use crate::idle;
use crate::line_guard::LineGuard;
use crate::state::Proxy;
use crate::upstream::{Reply, UpstreamError};
use crate::Metrics;

pub(crate) type RewrittenStream =
    Pin<Box<dyn Stream<Item = Result<Bytes, RewriteError<io::Error>>> + Send>>;

/// The upstream's answer and what the client gets of it.
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    /// The headers the client gets.
    pub(crate) headers: HeaderMap,
    pub(crate) response: Reply,
    pub(crate) upstream: UpstreamSaid,
}

/// A streaming answer: rewritten chunk by chunk. Nothing is sent before the
/// first rewritten chunk, so an upstream that fails before it is a `502`.
pub(crate) async fn relay_stream(
    proxy: &Proxy,
    answer: Answer,
    config: toolscan_sse::Config,
    model: String,
    start: Instant,
) -> Response {
    let body = guarded(proxy, answer.response);
    let rewritten: RewrittenStream = Box::pin(toolscan_sse::rewrite_stream(body, config));
    let stream = Streamed {
        status: answer.status,
        headers: answer.headers,
        upstream: answer.upstream,
        model,
    };
    relay(proxy, stream, rewritten, start).await
}

/// What a relayed stream's response is: its status and headers, what the
/// upstream said (for the access line), the request's model (for the
/// timeline histograms).
pub(crate) struct Streamed {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) upstream: UpstreamSaid,
    pub(crate) model: String,
}

/// The upstream's answer to a read request if it succeeded, with whether
/// it is SSE; else what the client gets: a 5xx is a `502`, a 4xx (bad key,
/// bad request) the client's to see as it came, an answer encoded although
/// `identity` was asked for (it is read: it cannot be) a `502`.
pub(crate) async fn succeeded(
    response: Reply,
    upstream: &UpstreamSaid,
    idle: Duration,
) -> Result<(Reply, bool), Response> {
    let status = response.status;
    if status.is_server_error() {
        return Err(upstream_failed(response, idle).await);
    }
    if !status.is_success() {
        let headers = response_headers(&response.headers, false);
        let body = Body::new(idle::body(response, idle));
        return Err(tagged(with_parts(status, headers, body), upstream.clone()));
    }
    let encoding = response
        .headers
        .get(header::CONTENT_ENCODING)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .filter(|v| !v.trim().eq_ignore_ascii_case("identity"));
    if let Some(encoding) = encoding {
        let message = format!(
            "the upstream sent its answer encoded (`{encoding}`) although asked for `identity`"
        );
        return Err(upstream_error(false, &message, upstream.clone()));
    }
    let is_sse = response
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    Ok((response, is_sse))
}

/// The upstream's streamed body, its lines and events bounded
/// (`max_sse_line`, `max_sse_event`).
pub(crate) fn guarded(
    proxy: &Proxy,
    response: Reply,
) -> LineGuard<impl Stream<Item = Result<Bytes, UpstreamError>>> {
    let settings = &proxy.settings;
    let body = idle::body(response, settings.upstream_idle_timeout);
    LineGuard::new(
        BodyDataStream::new(body),
        settings.max_sse_line,
        settings.max_sse_event,
    )
}

/// Relays `rewritten` to the client once its first piece came (an error
/// before it is a `502`).
pub(crate) async fn relay(
    proxy: &Proxy,
    stream: Streamed,
    mut rewritten: RewrittenStream,
    start: Instant,
) -> Response {
    let Streamed {
        status,
        headers,
        upstream,
        model,
    } = stream;
    let metrics = proxy.metrics.clone();
    let relay = match rewritten.next().await {
        Some(Ok(first)) => {
            let mut relay = Relay::new(Some(first), Some(rewritten), start, metrics);
            relay.cut = Some(proxy.cut.watch());
            relay.timed = proxy.settings.metrics.is_some();
            relay.timing = upstream.tally.clone().map(|t| (model, t));
            relay
        }
        Some(Err(e)) => {
            let timed_out =
                matches!(&e, RewriteError::Upstream(e) if e.kind() == io::ErrorKind::TimedOut);
            let message = format!(
                "the upstream failed before its answer began: {}",
                rewrite_error_message(e)
            );
            return upstream_error(timed_out, &message, upstream);
        }
        None => Relay::new(None, None, start, metrics),
    };
    let body = Body::from_stream(relay);
    tagged(with_parts(status, headers, body), upstream)
}

/// The whole body of `response`, at most `max` bytes: else why not (and
/// whether it timed out).
pub(crate) async fn read_whole(
    response: Reply,
    max: usize,
    idle: Duration,
) -> Result<Bytes, (bool, String)> {
    let over =
        || format!("the upstream's answer is larger than {max} bytes (--max-response-bytes)");
    if response.content_length().is_some_and(|n| n > max as u64) {
        return Err((false, over()));
    }
    let mut from = idle::body(response, idle);
    let mut body = Vec::new();
    loop {
        match idle::chunk(&mut from).await {
            Ok(Some(chunk)) if body.len() + chunk.len() > max => return Err((false, over())),
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) => return Ok(Bytes::from(body)),
            Err(e) => {
                let timed_out = e.is_timeout();
                let message = format!("the upstream failed while sending its answer: {e}");
                return Err((timed_out, message));
            }
        }
    }
}

/// A whole answer: read (within `max_response_bytes`), rewritten, sent. A
/// body that is not a `chat.completion` is passed on as it came.
pub(crate) async fn rewrite_whole(
    proxy: &Proxy,
    answer: Answer,
    config: &toolscan_sse::Config,
) -> Response {
    let metrics = &proxy.metrics;
    let settings = &proxy.settings;
    let body = match read_whole(
        answer.response,
        settings.max_response_bytes,
        settings.upstream_idle_timeout,
    )
    .await
    {
        Ok(body) => body,
        Err((timed_out, message)) => return upstream_error(timed_out, &message, answer.upstream),
    };
    let began = Instant::now();
    let body = match toolscan_sse::rewrite_body(&body, config) {
        Ok(rewritten) => Bytes::from(rewritten),
        Err(e) => {
            warn!(error = ?e, "the answer is not a chat.completion; passed on as is");
            body
        }
    };
    metrics.added(began.elapsed());
    let response = with_parts(answer.status, answer.headers, Body::from(body));
    tagged(response, answer.upstream)
}

/// The rewritten stream on its way to the client: an upstream failure
/// becomes an error event and the end of the body; the end of the stream,
/// whichever way it comes (done, failed, client gone), is logged.
pub(crate) struct Relay {
    first: Option<Bytes>,
    inner: Option<RewrittenStream>,
    /// Resolves at the end of the shutdown grace period: the stream then
    /// ends with an error event.
    cut: Option<CutWatch>,
    span: Span,
    start: Instant,
    /// The latency each chunk adds is observed (metrics are served):
    /// else no clock is read per chunk.
    timed: bool,
    /// When the last chunk went, if the last poll sent one (and `timed`).
    sent: Option<Instant>,
    bytes: u64,
    metrics: Metrics,
    /// The model of a read stream, and what its rewrite found: observed
    /// into the timeline histograms when the stream completes.
    timing: Option<(String, Arc<Tally>)>,
}

impl Relay {
    fn new(
        first: Option<Bytes>,
        inner: Option<RewrittenStream>,
        start: Instant,
        metrics: Metrics,
    ) -> Relay {
        let relay = Relay {
            first,
            inner,
            cut: None,
            span: Span::current(),
            start,
            timed: false,
            sent: None,
            bytes: 0,
            metrics,
            timing: None,
        };
        if relay.first.is_none() && relay.inner.is_none() {
            relay.closed("complete");
        }
        relay
    }

    /// The stream completed: its timeline observed.
    fn completed(&mut self) {
        if let Some((model, tally)) = self.timing.take() {
            self.metrics
                .timeline(&model, self.start, Instant::now(), &tally);
        }
        self.closed("complete");
    }

    fn closed(&self, outcome: &str) {
        info!(
            parent: &self.span,
            outcome,
            bytes = self.bytes,
            elapsed_ms = elapsed_ms(self.start),
            "stream closed"
        );
    }
}

impl Stream for Relay {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(first) = this.first.take() {
            this.bytes += first.len() as u64;
            return Poll::Ready(Some(Ok(first)));
        }
        let Some(inner) = this.inner.as_mut() else {
            return Poll::Ready(None);
        };
        if this.cut.as_mut().is_some_and(|cut| cut.poll_cut(cx)) {
            // Dropping the upstream stream closes its connection.
            this.inner = None;
            let message = "the proxy is shutting down: the stream is cut";
            warn!(parent: &this.span, "{message}");
            this.closed("shutdown");
            return Poll::Ready(Some(Ok(error_event(message))));
        }
        // The time a poll that finds upstream bytes takes is the time the
        // rewrite holds them: the latency the proxy adds. The poll right
        // after a chunk went (which mostly finds nothing) reads no clock:
        // it counts from that chunk's time. Without metrics, no clock.
        let began = match this.sent.take() {
            None if this.timed => Some(Instant::now()),
            began => began,
        };
        match inner.as_mut().poll_next(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(Ok(chunk))) => {
                if let Some(began) = began {
                    let now = Instant::now();
                    this.metrics.added(now.saturating_duration_since(began));
                    this.sent = Some(now);
                }
                this.bytes += chunk.len() as u64;
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Ready(Some(Err(e))) => {
                // Dropping the upstream stream closes its connection.
                this.inner = None;
                let message = format!(
                    "the upstream failed mid-stream: {}",
                    rewrite_error_message(e)
                );
                warn!(parent: &this.span, %message, "upstream failed");
                this.metrics.upstream_error();
                this.closed("upstream_error");
                Poll::Ready(Some(Ok(error_event(&message))))
            }
            Poll::Ready(None) => {
                this.inner = None;
                this.completed();
                Poll::Ready(None)
            }
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        if self.inner.is_some() || self.first.is_some() {
            // The client went away: dropping `inner` cancels the upstream.
            self.closed("client_disconnected");
        }
    }
}
