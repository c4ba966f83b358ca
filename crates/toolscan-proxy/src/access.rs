//! One access line per request and the metrics it updates: a layer
//! ([`access`], `axum::middleware::from_fn`) around every route, which
//! opens the request's span, and counts its response body on the way out
//! ([`Counted`]) to write the line when the body ends or the client
//! leaves.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::Response;
use bytes::Bytes;
use toolscan_sse::Tally;
use tracing::{field, info, info_span, Instrument, Span};

use crate::cut::Cut;
use crate::state::Proxy;
use crate::woken::Woken;
use crate::{Metrics, CHAT_COMPLETIONS};

/// When the proxy got the request (in its extensions, for the handlers).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Started(pub(crate) Instant);

/// What the upstream said to a request, kept in its response's extensions
/// for the access line.
#[derive(Clone, Debug, Default)]
pub(crate) struct UpstreamSaid {
    /// Its status, if it answered.
    pub(crate) status: Option<u16>,
    /// It could not be reached or failed (the proxy answered `502`).
    pub(crate) failed: bool,
    /// What the rewrite of its answer found.
    pub(crate) tally: Option<Arc<Tally>>,
}

/// Marks `response` with what the upstream said.
pub(crate) fn tagged(mut response: Response, said: UpstreamSaid) -> Response {
    response.extensions_mut().insert(said);
    response
}

/// Milliseconds since `start`, to the microsecond.
pub(crate) fn elapsed_ms(start: Instant) -> f64 {
    (start.elapsed().as_secs_f64() * 1e6).round() / 1e3
}

/// The layer: the request's span (method and path: never its headers, nor
/// its query, which may hold a key), the `responded` line, and the access
/// line once its body went out.
pub(crate) async fn access(
    State(proxy): State<Arc<Proxy>>,
    mut request: Request,
    next: Next,
) -> Response {
    let start = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let chat = method == Method::POST && path == CHAT_COMPLETIONS;
    let span = info_span!(
        "request",
        %method,
        %path,
        status = field::Empty,
        format = field::Empty,
        stream = field::Empty,
        parse = field::Empty,
    );
    request.extensions_mut().insert(Started(start));
    async move {
        let response = next.run(request).await;
        let status = response.status();
        Span::current().record("status", status.as_u16());
        // (Not the access target, which is the access line's alone.)
        info!(
            target: "toolscan_proxy",
            status = status.as_u16(),
            elapsed_ms = elapsed_ms(start),
            "responded"
        );
        let upstream = response.extensions().get::<UpstreamSaid>().cloned();
        if upstream.as_ref().is_some_and(|u| u.failed) {
            proxy.metrics.upstream_error();
        }
        let access = Access {
            cut: proxy.cut.clone(),
            span: Span::current(),
            metrics: proxy.metrics.clone(),
            chat,
            status: status.as_u16(),
            upstream,
            start,
            bytes: 0,
            length: None,
            logged: false,
        };
        access.body(response)
    }
    .instrument(span)
    .await
}

/// One request's access line: written once, when its response body has
/// been sent (or the client went away), with the metrics updated then.
struct Access {
    /// The proxy's shutdown cut: a stream that ends once it is cancelled
    /// was cut (logged `shutdown`).
    cut: Cut,
    span: Span,
    metrics: Metrics,
    chat: bool,
    status: u16,
    upstream: Option<UpstreamSaid>,
    start: Instant,
    bytes: u64,
    /// The body's length, if its headers say it (the server stops polling
    /// a body once that many bytes went out).
    length: Option<u64>,
    logged: bool,
}

impl Access {
    /// The response, its body counted: a body of known size is logged at
    /// once, a streamed one when it ends.
    fn body(mut self, response: Response) -> Response {
        use axum::body::HttpBody as _;
        if let Some(n) = response.body().size_hint().exact() {
            self.bytes = n;
            self.log("complete");
            return response;
        }
        self.metrics.stream_opened();
        self.length = response
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok());
        let (parts, body) = response.into_parts();
        let counted = Counted {
            inner: body,
            access: self,
        };
        Response::from_parts(parts, Body::new(Woken::new(counted)))
    }

    fn log(&mut self, outcome: &str) {
        if self.logged {
            return;
        }
        self.logged = true;
        let u = self.upstream.take().unwrap_or_default();
        let tally = u.tally.as_deref();
        self.metrics.request(self.chat, self.status, tally);
        info!(
            target: "toolscan_proxy::access",
            parent: &self.span,
            status = self.status,
            upstream_status = u.status,
            outcome,
            bytes = self.bytes,
            latency_ms = elapsed_ms(self.start),
            calls = tally.map_or(0, Tally::calls),
            diagnostics = tally.map_or(0, Tally::all_diagnostics),
            "access"
        );
    }

    /// The streamed body ended (`outcome`): logged, the stream counted
    /// closed.
    fn end(&mut self, outcome: &str) {
        if !self.logged {
            self.log(outcome);
            self.metrics.stream_closed();
        }
    }
}

/// A streamed response body on its way out, counted (a body around the
/// body, frame by frame: no stream in between). It never says its end
/// ahead (`is_end_stream`), so the server polls it to the end, where the
/// line is written.
struct Counted {
    inner: Body,
    access: Access,
}

impl axum::body::HttpBody for Counted {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(chunk) = frame.data_ref() {
                    this.access.bytes += chunk.len() as u64;
                    if Some(this.access.bytes) == this.access.length {
                        this.access.end("complete");
                    }
                }
            }
            Poll::Ready(Some(Err(_))) => this.access.end("error"),
            Poll::Ready(None) if this.access.cut.is_cut() => this.access.end("shutdown"),
            Poll::Ready(None) => this.access.end("complete"),
            Poll::Pending => {}
        }
        polled
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.access.end("client_disconnected");
    }
}
