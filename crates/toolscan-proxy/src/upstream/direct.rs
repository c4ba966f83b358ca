//! The proxy's HTTP/1.1 client for an `http://` upstream ([`Direct`]):
//! a request written in one write, the answer's head read with
//! `httparse`, its body ([`DirectBody`]) read from the socket by whoever
//! polls it, the connection kept for the next request when the answer
//! allows it ([`Pool`]).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::http::{Method, Response, StatusCode};
use bytes::{Buf, Bytes, BytesMut};
use hyper::body::{Body, Frame, SizeHint};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::error::UpstreamError;
use super::framing::{self, Chunk, Decoded, Framing};
use super::pool::{Conn, Pool};
use crate::redact::redact;
use crate::ConfigError;

/// The most an answer's head (status line and headers) may take.
const MAX_HEAD: usize = 64 * 1024;
/// The most headers an answer's head may have.
const MAX_HEADERS: usize = 128;
/// How much room a read is given.
const READ_SIZE: usize = 8 * 1024;
/// A request body up to this size goes in the head's write; a larger
/// one in a write of its own.
const COPY_BODY: usize = 64 * 1024;

/// The client for one `http://` upstream.
pub(crate) struct Direct {
    /// The host to connect to: a name, or an address (an IPv6 one without
    /// its brackets).
    host: String,
    port: u16,
    /// The `Host` header of every request: the URL's host, and its port
    /// unless it is 80.
    host_header: HeaderValue,
    /// The URL's user and password, as reqwest writes them (`Basic`).
    auth: Option<HeaderValue>,
    /// The base URL's path without its trailing `/`: before each
    /// request's path.
    prefix: String,
    connect_timeout: Duration,
    pool: Arc<Pool>,
}

impl Direct {
    /// The client for `base`, if it is an `http://` URL (`https://` is
    /// reqwest's).
    pub(crate) fn new(
        reqwest: &reqwest::Client,
        base: &str,
        connect_timeout: Duration,
    ) -> Result<Option<Direct>, ConfigError> {
        let refuse = |reason: String| ConfigError::Upstream {
            url: redact(base),
            reason,
        };
        let url = reqwest::Url::parse(base).map_err(|e| refuse(e.to_string()))?;
        if url.scheme() != "http" {
            return Ok(None);
        }
        let host_str = url.host_str().unwrap_or_default();
        if host_str.is_empty() {
            return Err(refuse("no host".into()));
        }
        // An IPv6 address is connected to without its brackets.
        let host = host_str
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let host_header = match url.port() {
            Some(port) => format!("{host_str}:{port}"),
            None => host_str.to_owned(),
        };
        let host_header = HeaderValue::from_str(&host_header).map_err(|e| refuse(e.to_string()))?;
        // The `Authorization` reqwest makes of the URL's user and
        // password: the same bytes whichever client sends.
        let auth = reqwest
            .get(url.clone())
            .build()
            .map_err(ConfigError::Client)?
            .headers()
            .get(header::AUTHORIZATION)
            .cloned();
        Ok(Some(Direct {
            host,
            port: url.port_or_known_default().unwrap_or(80),
            host_header,
            auth,
            prefix: url.path().trim_end_matches('/').to_owned(),
            connect_timeout,
            pool: Arc::default(),
        }))
    }

    /// Sends a request (`path`: its path and query); the answer once its
    /// head came. A kept connection the upstream had closed is left for a
    /// new one, the request sent again: nothing of it was answered.
    pub(crate) async fn send(
        &self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
        body: Option<Bytes>,
    ) -> Result<Response<DirectBody>, UpstreamError> {
        let head = self.head(method, path, headers, body.as_ref().map(Bytes::len));
        loop {
            let (mut conn, kept) = match self.pool.take() {
                Some(conn) => (conn, true),
                None => (self.connect().await?, false),
            };
            match exchange(&mut conn, &head, body.as_deref()).await {
                Ok(answer) => return self.reply(conn, answer, method == Method::HEAD),
                Err(Failure::Unanswered(_)) if kept => continue,
                Err(Failure::Unanswered(e)) => return Err(UpstreamError::Io(e)),
                Err(Failure::Failed(e)) => return Err(e),
            }
        }
    }

    /// A new connection, within the connect timeout.
    async fn connect(&self) -> Result<Conn, UpstreamError> {
        let connect = TcpStream::connect((self.host.as_str(), self.port));
        let io = match tokio::time::timeout(self.connect_timeout, connect).await {
            Ok(Ok(io)) => io,
            Ok(Err(e)) => return Err(UpstreamError::Connect(e)),
            Err(_) => return Err(UpstreamError::Timeout(self.connect_timeout)),
        };
        io.set_nodelay(true).map_err(UpstreamError::Connect)?;
        Ok(Conn {
            io,
            buf: BytesMut::with_capacity(READ_SIZE),
        })
    }

    /// The request line and headers: `Host`, the URL's credentials, the
    /// request's end-to-end headers, the body's length.
    fn head(
        &self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
        body: Option<usize>,
    ) -> Vec<u8> {
        let mut head = Vec::with_capacity(256 + 64 * headers.len());
        for part in [method.as_str(), " ", &self.prefix, path, " HTTP/1.1\r\n"] {
            head.extend_from_slice(part.as_bytes());
        }
        let mut line = |name: &[u8], value: &[u8]| {
            for part in [name, b": ", value, b"\r\n"] {
                head.extend_from_slice(part);
            }
        };
        line(b"host", self.host_header.as_bytes());
        for (name, value) in headers {
            // The length is the body's own, written below.
            if name != header::HOST
                && name != header::CONTENT_LENGTH
                && name != header::TRANSFER_ENCODING
            {
                line(name.as_str().as_bytes(), value.as_bytes());
            }
        }
        if let Some(auth) = &self.auth {
            line(b"authorization", auth.as_bytes());
        }
        if let Some(n) = body {
            line(b"content-length", n.to_string().as_bytes());
        }
        head.extend_from_slice(b"\r\n");
        head
    }

    /// The answer whose head is `answer`, on `conn`.
    fn reply(
        &self,
        mut conn: Conn,
        answer: Answer,
        head_request: bool,
    ) -> Result<Response<DirectBody>, UpstreamError> {
        let (framing, reuse) = framing::of_answer(
            head_request,
            answer.status.as_u16(),
            answer.minor,
            &answer.headers,
        )
        .map_err(UpstreamError::Protocol)?;
        let body = if framing == Framing::Length(0) {
            // Nothing to read: the connection is free at once.
            if reuse && conn.buf.is_empty() {
                self.pool.put(conn);
            }
            DirectBody::empty()
        } else {
            conn.buf.reserve(READ_SIZE);
            DirectBody {
                conn: Some(conn),
                framing,
                reuse,
                eof: false,
                pool: Arc::clone(&self.pool),
            }
        };
        let mut response = Response::new(body);
        *response.status_mut() = answer.status;
        *response.headers_mut() = answer.headers;
        Ok(response)
    }
}

/// An answer's head.
struct Answer {
    status: StatusCode,
    /// The `x` of `HTTP/1.x`.
    minor: u8,
    headers: HeaderMap,
}

/// Why an exchange gave no answer.
enum Failure {
    /// The connection ended before a byte of the answer came (on a kept
    /// connection: the upstream had closed it).
    Unanswered(io::Error),
    Failed(UpstreamError),
}

/// Writes the request on `conn` and reads the answer's head (an interim
/// `1xx` skipped); the bytes after the head stay in `conn.buf`.
async fn exchange(conn: &mut Conn, head: &[u8], body: Option<&[u8]>) -> Result<Answer, Failure> {
    let written = match body {
        Some(body) if body.len() <= COPY_BODY => {
            let mut all = Vec::with_capacity(head.len() + body.len());
            all.extend_from_slice(head);
            all.extend_from_slice(body);
            conn.io.write_all(&all).await
        }
        Some(body) => match conn.io.write_all(head).await {
            Ok(()) => conn.io.write_all(body).await,
            Err(e) => Err(e),
        },
        None => conn.io.write_all(head).await,
    };
    written.map_err(Failure::Unanswered)?;
    let mut answered = false;
    loop {
        if let Some(answer) = parse_head(&mut conn.buf).map_err(Failure::Failed)? {
            return Ok(answer);
        }
        conn.buf.reserve(READ_SIZE);
        match conn.io.read_buf(&mut conn.buf).await {
            Ok(0) if !answered => {
                let closed = io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the upstream closed the connection before answering",
                );
                return Err(Failure::Unanswered(closed));
            }
            Ok(0) => {
                return Err(Failure::Failed(UpstreamError::Protocol(
                    "the upstream closed the connection within its answer's head",
                )))
            }
            Ok(_) => answered = true,
            Err(e) if !answered && e.kind() == io::ErrorKind::ConnectionReset => {
                return Err(Failure::Unanswered(e))
            }
            Err(e) => return Err(Failure::Failed(UpstreamError::Io(e))),
        }
    }
}

/// The answer's head at the front of `buf`, taken from it, once it is
/// whole (`None`: read more); an interim `1xx` head is taken and skipped.
fn parse_head(buf: &mut BytesMut) -> Result<Option<Answer>, UpstreamError> {
    loop {
        let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut parsed = httparse::Response::new(&mut slots);
        let used = match parsed.parse(buf) {
            Ok(httparse::Status::Complete(used)) if used <= MAX_HEAD => used,
            Ok(httparse::Status::Partial) if buf.len() <= MAX_HEAD => return Ok(None),
            Ok(_) => {
                return Err(UpstreamError::Protocol(
                    "the upstream's answer has a head larger than 64 KiB",
                ))
            }
            Err(httparse::Error::TooManyHeaders) => {
                return Err(UpstreamError::Protocol(
                    "the upstream's answer has more than 128 headers",
                ))
            }
            Err(_) => {
                return Err(UpstreamError::Protocol(
                    "the upstream's answer is not HTTP/1.1",
                ))
            }
        };
        let code = parsed.code.unwrap_or_default();
        let status = StatusCode::from_u16(code)
            .map_err(|_| UpstreamError::Protocol("the upstream's answer has an invalid status"))?;
        if code == 101 {
            return Err(UpstreamError::Protocol(
                "the upstream switched protocols unasked",
            ));
        }
        let mut headers = HeaderMap::with_capacity(parsed.headers.len());
        for h in parsed.headers.iter() {
            let name = HeaderName::from_bytes(h.name.as_bytes());
            let value = HeaderValue::from_bytes(h.value);
            match (name, value) {
                (Ok(name), Ok(value)) => headers.append(name, value),
                _ => {
                    return Err(UpstreamError::Protocol(
                        "the upstream's answer has an invalid header",
                    ))
                }
            };
        }
        let minor = parsed.version.unwrap_or(1);
        buf.advance(used);
        if !status.is_informational() {
            return Ok(Some(Answer {
                status,
                minor,
                headers,
            }));
        }
    }
}

/// An answer's body from a [`Direct`] connection, read as it is polled.
/// At its end the connection goes back to the pool when the answer
/// allowed it and nothing more came; dropped before its end, it closes
/// the connection (the upstream sees the request cancelled).
pub(crate) struct DirectBody {
    /// `None` once the body is over (or failed).
    conn: Option<Conn>,
    framing: Framing,
    /// The connection may carry another request after this answer.
    reuse: bool,
    /// The upstream closed the connection.
    eof: bool,
    pool: Arc<Pool>,
}

impl DirectBody {
    fn empty() -> DirectBody {
        DirectBody {
            conn: None,
            framing: Framing::Length(0),
            reuse: false,
            eof: false,
            pool: Arc::default(),
        }
    }

    /// The body is over: the connection back to the pool if it may carry
    /// another request and nothing more came on it, else closed.
    fn release(&mut self) {
        if let Some(conn) = self.conn.take() {
            if self.reuse && !self.eof && conn.buf.is_empty() {
                self.pool.put(conn);
            }
        }
    }
}

impl Body for DirectBody {
    type Data = Bytes;
    type Error = UpstreamError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, UpstreamError>>> {
        let this = self.get_mut();
        loop {
            let Some(conn) = this.conn.as_mut() else {
                return Poll::Ready(None);
            };
            match this.framing.decode(&mut conn.buf, this.eof) {
                Decoded::Data(data) => {
                    if this.framing == Framing::Length(0) {
                        // Its last byte: the body says it is over
                        // (`is_end_stream`) and may not be polled again.
                        this.release();
                    }
                    return Poll::Ready(Some(Ok(Frame::data(data))));
                }
                Decoded::End => {
                    this.release();
                    return Poll::Ready(None);
                }
                Decoded::Invalid(why) => {
                    this.conn = None;
                    return Poll::Ready(Some(Err(UpstreamError::Protocol(why))));
                }
                Decoded::More => {}
            }
            if conn.buf.capacity() - conn.buf.len() < READ_SIZE / 8 {
                conn.buf.reserve(READ_SIZE);
            }
            match tokio_util::io::poll_read_buf(Pin::new(&mut conn.io), cx, &mut conn.buf) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Ok(0)) => this.eof = true,
                Poll::Ready(Ok(_)) => {}
                Poll::Ready(Err(e)) => {
                    this.conn = None;
                    return Poll::Ready(Some(Err(UpstreamError::Io(e))));
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.conn.is_none()
            || matches!(
                self.framing,
                Framing::Length(0) | Framing::Chunked(Chunk::Done)
            )
    }

    fn size_hint(&self) -> SizeHint {
        match self.framing {
            Framing::Length(left) => SizeHint::with_exact(left),
            _ => SizeHint::default(),
        }
    }
}

#[cfg(test)]
#[path = "direct_tests.rs"]
mod tests;
