//! The request target, made safe before routing (a layer, [`normalise`]):
//! percent-encoded unreserved characters are decoded (RFC 3986 §6.2.2.2:
//! `/v1/chat/%63ompletions` is the chat path, and is routed as it), and a
//! path with a dot segment — `.` or `..`, plain or percent-encoded
//! (`%2e%2e`), also between `\` or encoded slashes, or before a `;` — is
//! refused with `400`: resolved by the upstream, it would escape the
//! upstream's path prefix, or reach a route read here unread
//! (`/v1/x/../chat/completions`). `CONNECT` is `405` (the proxy is not a
//! tunnel), and the `*` target is for `OPTIONS` only (`400`).

use std::borrow::Cow;

use axum::extract::Request;
use axum::http::header::{self, HeaderValue};
use axum::http::uri::PathAndQuery;
use axum::http::{Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::errors::invalid_request;

/// The layer.
pub(crate) async fn normalise(mut request: Request, next: Next) -> Response {
    if request.method() == Method::CONNECT {
        let mut r = invalid_request(
            StatusCode::METHOD_NOT_ALLOWED,
            "CONNECT is not served: this is not a tunnel",
        );
        r.headers_mut().insert(
            header::ALLOW,
            HeaderValue::from_static("GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"),
        );
        return r;
    }
    if request.uri() == "*" {
        if request.method() == Method::OPTIONS {
            return next.run(request).await;
        }
        let message = format!("the target `*` is for OPTIONS, not {}", request.method());
        return invalid_request(StatusCode::BAD_REQUEST, &message);
    }
    let path = request.uri().path();
    if has_dot_segment(path) {
        return invalid_request(
            StatusCode::BAD_REQUEST,
            "the path has a dot segment (`.` or `..`), which the proxy does not resolve",
        );
    }
    if let Cow::Owned(decoded) = decode_unreserved(path) {
        match with_path(request.uri(), &decoded) {
            Some(uri) => *request.uri_mut() = uri,
            None => return StatusCode::BAD_REQUEST.into_response(),
        }
    }
    next.run(request).await
}

/// `uri` with its path replaced (its query kept; origin form).
fn with_path(uri: &Uri, path: &str) -> Option<Uri> {
    let target = match uri.query() {
        Some(q) => format!("{path}?{q}"),
        None => path.to_owned(),
    };
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = Some(PathAndQuery::try_from(target).ok()?);
    Uri::from_parts(parts).ok()
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// The byte `%XX` at `at` stands for, if it is one.
fn escaped(path: &[u8], at: usize) -> Option<u8> {
    if path.get(at) != Some(&b'%') {
        return None;
    }
    Some(hex(*path.get(at + 1)?)? << 4 | hex(*path.get(at + 2)?)?)
}

fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// `path` with `%XX` of unreserved characters decoded (the others kept).
fn decode_unreserved(path: &str) -> Cow<'_, str> {
    let bytes = path.as_bytes();
    if !bytes.contains(&b'%') {
        return Cow::Borrowed(path);
    }
    let mut out = String::with_capacity(path.len());
    let mut at = 0;
    let mut changed = false;
    while at < bytes.len() {
        match escaped(bytes, at).filter(|&b| unreserved(b)) {
            Some(b) => {
                out.push(char::from(b));
                at += 3;
                changed = true;
            }
            None => {
                let len = path[at..].chars().next().map_or(1, char::len_utf8);
                out.push_str(&path[at..at + len]);
                at += len;
            }
        }
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(path)
    }
}

/// Whether `path`, fully percent-decoded, has a segment `.` or `..` (a
/// segment ends at `/` or `\`; `;` starts its parameters).
fn has_dot_segment(path: &str) -> bool {
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        match escaped(bytes, at) {
            Some(b) => {
                decoded.push(b);
                at += 3;
            }
            None => {
                decoded.push(bytes[at]);
                at += 1;
            }
        }
    }
    decoded
        .split(|&b| b == b'/' || b == b'\\')
        .map(|segment| segment.split(|&b| b == b';').next().unwrap_or(segment))
        .any(|segment| segment == b"." || segment == b"..")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_segments_are_found_however_written() {
        for path in [
            "/v1/x/../chat/completions",
            "/../../admin/secret",
            "/%2e%2e/%2E%2E/admin/secret",
            "/v1/.%2e/x",
            "/v1/./models",
            "/v1/x%2f..%2fchat/completions",
            "/v1\\..\\admin",
            "/..;/admin",
            "/v1/..",
        ] {
            assert!(has_dot_segment(path), "{path}");
        }
        for path in ["/v1/models", "/v1/a..b/c", "/.well-known/x", "/v1/...", "/"] {
            assert!(!has_dot_segment(path), "{path}");
        }
    }

    #[test]
    fn only_unreserved_escapes_are_decoded() {
        assert_eq!(
            decode_unreserved("/v1/chat/%63ompletions"),
            "/v1/chat/completions"
        );
        assert_eq!(decode_unreserved("/a%2Fb%20c%7e"), "/a%2Fb%20c~");
        assert!(matches!(decode_unreserved("/plain/ü"), Cow::Borrowed(_)));
        assert_eq!(decode_unreserved("/%zz%4"), "/%zz%4");
    }
}
