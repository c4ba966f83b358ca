//! Which headers go on to the next hop, both ways: end-to-end ones only
//! (RFC 9110 §7.6.1), less `Host` upstream; and the length and encoding of
//! a body the proxy reads or rewrites.

use axum::body::Body;
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::http::StatusCode;
use axum::response::Response;

/// Headers that belong to one connection, never forwarded (RFC 9110 §7.6.1).
const HOP_BY_HOP: [HeaderName; 8] = [
    header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("proxy-connection"),
    header::PROXY_AUTHENTICATE,
    header::PROXY_AUTHORIZATION,
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
];

/// The headers of `headers` that go on to the next hop: all but hop-by-hop
/// ones (those listed, those the `Connection` header names, `Upgrade`).
fn end_to_end(headers: &HeaderMap) -> HeaderMap {
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    let mut out = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        if HOP_BY_HOP.contains(name) || name == header::UPGRADE || named.contains(name) {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    out
}

/// A request's headers as the upstream gets them: end-to-end ones, less
/// `Host` (the client names the proxy). `untouched`: the body goes as it
/// came (its length too); else the body is re-sent whole (its length is
/// set anew) and asked for uncompressed, since it is read.
pub(crate) fn request_headers(headers: &HeaderMap, untouched: bool) -> HeaderMap {
    let mut out = end_to_end(headers);
    out.remove(header::HOST);
    if !untouched {
        out.remove(header::CONTENT_LENGTH);
        out.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_static("identity"),
        );
    }
    out
}

/// A response's headers as the client gets them: end-to-end ones;
/// `rewritten`: less the length and encoding of a body that changes.
pub(crate) fn response_headers(headers: &HeaderMap, rewritten: bool) -> HeaderMap {
    let mut out = end_to_end(headers);
    if rewritten {
        out.remove(header::CONTENT_LENGTH);
        out.remove(header::CONTENT_ENCODING);
    }
    out
}

/// A response of these parts.
pub(crate) fn with_parts(status: StatusCode, headers: HeaderMap, body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_headers_and_host_stop_here() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("proxy:8080"));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer k"));
        h.insert(
            header::CONNECTION,
            HeaderValue::from_static("keep-alive, X-Hop"),
        );
        h.insert("x-hop", HeaderValue::from_static("1"));
        h.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        h.insert(header::TE, HeaderValue::from_static("trailers"));
        h.insert(
            header::PROXY_AUTHORIZATION,
            HeaderValue::from_static("Basic x"),
        );
        h.insert(header::CONTENT_LENGTH, HeaderValue::from_static("12"));
        h.insert(header::ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
        h.append("x-many", HeaderValue::from_static("1"));
        h.append("x-many", HeaderValue::from_static("2"));

        let untouched = request_headers(&h, true);
        let mut names: Vec<&str> = untouched.keys().map(HeaderName::as_str).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "accept-encoding",
                "authorization",
                "content-length",
                "x-many"
            ]
        );
        assert_eq!(untouched.get_all("x-many").iter().count(), 2);

        let read = request_headers(&h, false);
        assert!(read.get(header::CONTENT_LENGTH).is_none());
        assert_eq!(read[header::ACCEPT_ENCODING], "identity");
        assert_eq!(read[header::AUTHORIZATION], "Bearer k");

        let mut r = HeaderMap::new();
        r.insert(header::CONTENT_LENGTH, HeaderValue::from_static("99"));
        r.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        r.insert(
            header::TRANSFER_ENCODING,
            HeaderValue::from_static("chunked"),
        );
        let out = response_headers(&r, true);
        assert_eq!(out.len(), 1);
        assert_eq!(response_headers(&r, false).len(), 2);
    }
}
