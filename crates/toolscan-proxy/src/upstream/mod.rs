//! The upstream: a request sent ([`Outgoing`]) and its answer ([`Reply`]),
//! over the proxy's own HTTP/1.1 client for an `http://` upstream
//! ([`direct`]) or over reqwest for `https://` and for request bodies
//! streamed from the client.
//!
//! Why a client of its own: through reqwest, each upstream event is read
//! by hyper's client connection task and handed through a channel to the
//! task that serves the client (a wake-up and a second task poll an
//! event), and the body is wrapped twice on its way. A [`direct`] answer's
//! body is read from the upstream's socket by whoever polls it: the
//! serving connection's own task, as a plain reverse proxy does.

mod direct;
mod error;
mod framing;
mod pool;

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::http::{HeaderMap, Method, StatusCode};
use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

use crate::ConfigError;
pub(crate) use error::{error_chain, UpstreamError};

/// How the proxy reaches its upstream.
pub(crate) struct Client {
    /// The upstream's base URL (no trailing `/`): a request's path and
    /// query are appended.
    base: String,
    /// Every request without a streamed body, when the upstream is
    /// `http://`.
    direct: Option<direct::Direct>,
    /// The rest: `https://`, request bodies streamed from the client.
    reqwest: reqwest::Client,
}

/// A request for the upstream.
pub(crate) struct Outgoing {
    pub(crate) method: Method,
    /// The path and query, appended to the upstream's base URL.
    pub(crate) path: String,
    pub(crate) headers: HeaderMap,
    pub(crate) body: OutBody,
    /// The most the whole request may take (`None`: as long as the idle
    /// timeout allows).
    pub(crate) timeout: Option<Duration>,
}

/// An [`Outgoing`] request's body.
pub(crate) enum OutBody {
    None,
    /// Sent with its length.
    Full(Bytes),
    /// The client's body as it comes (sent by reqwest, chunked).
    Stream(axum::body::Body),
}

impl Outgoing {
    /// A request without a body.
    pub(crate) fn new(method: Method, path: &str, headers: HeaderMap) -> Outgoing {
        Outgoing {
            method,
            path: path.to_owned(),
            headers,
            body: OutBody::None,
            timeout: None,
        }
    }

    /// A `POST` of `body`.
    pub(crate) fn post(path: &str, headers: HeaderMap, body: Bytes) -> Outgoing {
        Outgoing {
            body: OutBody::Full(body),
            ..Outgoing::new(Method::POST, path, headers)
        }
    }
}

/// The upstream's answer: its head, and its body as it comes.
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: ReplyBody,
}

impl Reply {
    /// The direct client's answer.
    fn direct(response: axum::http::Response<direct::DirectBody>) -> Reply {
        let (head, body) = response.into_parts();
        Reply {
            status: head.status,
            headers: head.headers,
            body: ReplyBody::Direct(body),
        }
    }

    /// The body's length, when the upstream said it.
    pub(crate) fn content_length(&self) -> Option<u64> {
        self.body.size_hint().exact()
    }
}

/// An answer's body, read by whoever polls it.
pub(crate) enum ReplyBody {
    Direct(direct::DirectBody),
    Reqwest(reqwest::Body),
}

impl Client {
    /// The client for the upstream at `base` (its URL, no trailing `/`).
    pub(crate) fn new(base: &str, connect_timeout: Duration) -> Result<Client, ConfigError> {
        let reqwest = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(connect_timeout)
            // No `read_timeout`: the idle timeout is `idle.rs`'s, one timer
            // an answer rather than one a read.
            .tcp_nodelay(true)
            .build()
            .map_err(ConfigError::Client)?;
        let direct = direct::Direct::new(&reqwest, base, connect_timeout)?;
        Ok(Client {
            base: base.to_owned(),
            direct,
            reqwest,
        })
    }

    /// Sends `request`; the answer once its head came.
    pub(crate) async fn send(&self, request: Outgoing) -> Result<Reply, UpstreamError> {
        let Outgoing {
            method,
            path,
            headers,
            body,
            timeout,
        } = request;
        let body = match (body, &self.direct) {
            (OutBody::None, Some(direct)) => {
                let sent = direct.send(&method, &path, &headers, None);
                return within(timeout, sent).await.map(Reply::direct);
            }
            (OutBody::Full(bytes), Some(direct)) => {
                let sent = direct.send(&method, &path, &headers, Some(bytes));
                return within(timeout, sent).await.map(Reply::direct);
            }
            (body, _) => body,
        };
        let mut builder = self
            .reqwest
            .request(method, format!("{}{path}", self.base))
            .headers(headers);
        builder = match body {
            OutBody::None => builder,
            OutBody::Full(bytes) => builder.body(bytes),
            OutBody::Stream(body) => {
                builder.body(reqwest::Body::wrap_stream(body.into_data_stream()))
            }
        };
        if let Some(timeout) = timeout {
            builder = builder.timeout(timeout);
        }
        let response = axum::http::Response::from(builder.send().await?);
        let (head, body) = response.into_parts();
        Ok(Reply {
            status: head.status,
            headers: head.headers,
            body: ReplyBody::Reqwest(body),
        })
    }
}

/// `send`, cut at `timeout` if there is one.
async fn within<T>(
    timeout: Option<Duration>,
    send: impl std::future::Future<Output = Result<T, UpstreamError>>,
) -> Result<T, UpstreamError> {
    match timeout {
        None => send.await,
        Some(after) => tokio::time::timeout(after, send)
            .await
            .unwrap_or(Err(UpstreamError::Timeout(after))),
    }
}

impl Body for ReplyBody {
    type Data = Bytes;
    type Error = UpstreamError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, UpstreamError>>> {
        match self.get_mut() {
            ReplyBody::Direct(body) => Pin::new(body).poll_frame(cx),
            ReplyBody::Reqwest(body) => Pin::new(body)
                .poll_frame(cx)
                .map(|f| f.map(|f| f.map_err(UpstreamError::from))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ReplyBody::Direct(body) => body.is_end_stream(),
            ReplyBody::Reqwest(body) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ReplyBody::Direct(body) => body.size_hint(),
            ReplyBody::Reqwest(body) => body.size_hint(),
        }
    }
}
