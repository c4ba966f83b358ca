//! The pass-through: every route but the ones the proxy reads goes to the
//! upstream untouched, both ways, streamed ([`forward`], the router's
//! fallback); and a chat request the proxy does not read
//! ([`pass_through`]).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{self, HeaderValue};
use axum::http::{request, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

use crate::access::{tagged, UpstreamSaid};
use crate::errors::unreachable_upstream;
use crate::headers::{request_headers, response_headers, with_parts};
use crate::idle;
use crate::state::{path_of, Proxy};
use crate::upstream::{OutBody, Outgoing};

/// Any route the proxy does not read: both ways untouched, streamed.
/// `OPTIONS *` asks about the server itself: answered here (the upstream's
/// URL has no `*` to forward it to).
pub(crate) async fn forward(State(proxy): State<Arc<Proxy>>, request: Request) -> Response {
    if request.method() == Method::OPTIONS && request.uri() == "*" {
        let mut r = StatusCode::NO_CONTENT.into_response();
        r.headers_mut().insert(
            header::ALLOW,
            HeaderValue::from_static("GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"),
        );
        return r;
    }
    let (parts, body) = request.into_parts();
    let has_body = parts.headers.contains_key(header::CONTENT_LENGTH)
        || parts.headers.contains_key(header::TRANSFER_ENCODING);
    let headers = request_headers(&parts.headers, true);
    let mut upstream = Outgoing::new(parts.method, path_of(&parts.uri), headers);
    if has_body {
        upstream.body = OutBody::Stream(body);
    }
    untouched(&proxy, upstream).await
}

/// Sends `upstream` and passes its answer on as it comes, streamed.
pub(crate) async fn untouched(proxy: &Proxy, upstream: Outgoing) -> Response {
    let idle = proxy.settings.upstream_idle_timeout;
    match idle::send(proxy.client.send(upstream), idle).await {
        Ok(response) => {
            let status = response.status;
            let headers = response_headers(&response.headers, false);
            let upstream = UpstreamSaid {
                status: Some(status.as_u16()),
                ..UpstreamSaid::default()
            };
            // The upstream's body as it is (with the idle timeout), not
            // through a stream of its bytes.
            let body = Body::new(idle::body(response, idle));
            tagged(with_parts(status, headers, body), upstream)
        }
        Err(e) => unreachable_upstream(e),
    }
}

/// A chat completion that is not read (no `tools`, `tool_choice: none`,
/// no reasoning separation): forwarded, its answer passed on as it comes.
///
/// `untouched_body`: the body is the client's own (else its length is
/// set anew).
pub(crate) async fn pass_through(
    proxy: &Proxy,
    parts: &request::Parts,
    body: Bytes,
    untouched_body: bool,
) -> Response {
    let mut headers = request_headers(&parts.headers, true);
    if !untouched_body {
        headers.remove(header::CONTENT_LENGTH);
    }
    untouched(proxy, Outgoing::post(path_of(&parts.uri), headers, body)).await
}
