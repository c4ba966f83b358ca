//! A client connection as hyper reads and writes it ([`ClientIo`]), and
//! its watch ([`watch`]): whether a client that closed its side before
//! its answer began has left, or only half-closed to wait for the answer.
//!
//! The two look the same on TCP (a FIN). hyper either takes every EOF for
//! a departure (a half-closing client then gets no answer) or, with
//! half-closes allowed, notices none (an upstream request then runs on
//! for a client long gone). So half-closes are allowed, and on an EOF
//! before the answer began, the watch sends an interim
//! `HTTP/1.1 100 Continue` — which an HTTP/1.1 client must accept before
//! any final answer (RFC 9110 §15.2) — and looks for the reset a closed
//! socket answers data with: then the client has left, and the
//! connection (its request, the upstream's) is dropped.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::Notify;

/// How often a half-closed connection is looked at for a reset.
const PEEK_EVERY: Duration = Duration::from_millis(200);

/// What the connection's reads and writes showed, for its watch.
#[derive(Debug, Default)]
struct Seen {
    /// Bytes went out since the request's bytes came: its answer began.
    answering: bool,
    /// The current request's first line, as far as it came (8 KiB at
    /// most); empty before the first request.
    line: Vec<u8>,
}

impl Seen {
    /// Bytes of a request came; whether they began a new one.
    fn read(&mut self, bytes: &[u8]) -> bool {
        if bytes.is_empty() {
            return false;
        }
        let new = std::mem::take(&mut self.answering) || self.line.is_empty();
        if new {
            self.line.clear();
        }
        if !self.line.ends_with(b"\n") && self.line.len() < 8192 {
            let end = memchr::memchr(b'\n', bytes).map_or(bytes.len(), |at| at + 1);
            self.line.extend_from_slice(&bytes[..end]);
        }
        new
    }

    /// A request came whose answer has not begun.
    fn waiting(&self) -> bool {
        !self.answering && !self.line.is_empty()
    }

    /// The request is HTTP/1.1 (a 1xx answer must not go to HTTP/1.0).
    fn http11(&self) -> bool {
        self.line.trim_ascii_end().ends_with(b" HTTP/1.1")
    }
}

/// The connection hyper serves: its reads and writes, seen.
pub(crate) struct ClientIo {
    tcp: Arc<TcpStream>,
    seen: Arc<Mutex<Seen>>,
    /// Notified when a request begins.
    started: Arc<Notify>,
}

/// The connection, and its watch: a future that resolves when the client
/// has left before its answer began (then drop the connection).
pub(crate) fn watched(tcp: TcpStream) -> (ClientIo, impl std::future::Future<Output = ()>) {
    let tcp = Arc::new(tcp);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let started = Arc::new(Notify::new());
    let io = ClientIo {
        tcp: Arc::clone(&tcp),
        seen: Arc::clone(&seen),
        started: Arc::clone(&started),
    };
    (io, watch(tcp, seen, started))
}

fn seen(seen: &Mutex<Seen>) -> std::sync::MutexGuard<'_, Seen> {
    seen.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Resolves once the client is known to have left before its answer:
/// while a request waits for its answer, the socket is peeked at (without
/// reading) every [`PEEK_EVERY`]; after an EOF, the probe goes out once;
/// a closed client's socket answers it with a reset, after which a write
/// (of no bytes) fails: that ends the watch.
async fn watch(tcp: Arc<TcpStream>, state: Arc<Mutex<Seen>>, started: Arc<Notify>) {
    let mut byte = [0u8; 1];
    loop {
        loop {
            let notified = started.notified();
            if seen(&state).waiting() {
                break;
            }
            notified.await;
        }
        let mut probed = false;
        while seen(&state).waiting() {
            tokio::time::sleep(PEEK_EVERY).await;
            if probed {
                // A socket the probe found closed fails any write, one of
                // no bytes too (EPIPE), where reads only see the EOF.
                match tcp.try_write(&[]) {
                    Err(e) if e.kind() != io::ErrorKind::WouldBlock => {
                        tracing::debug!(
                            "the client left before its answer: its request is cancelled"
                        );
                        return;
                    }
                    _ => continue,
                }
            }
            // (Polled once: `Ready` if the socket is readable, which after
            // an EOF it always is.)
            let peeked = tokio::time::timeout(Duration::ZERO, tcp.peek(&mut byte)).await;
            match peeked {
                Ok(Err(_)) => return,
                Ok(Ok(0)) if seen(&state).http11() => {
                    if tcp.try_write(b"HTTP/1.1 100 Continue\r\n\r\n").is_err() {
                        return;
                    }
                    probed = true;
                }
                _ => {}
            }
        }
    }
}

impl AsyncRead for ClientIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            ready!(self.tcp.poll_read_ready(cx))?;
            match self.tcp.try_read(buf.initialize_unfilled()) {
                Ok(n) => {
                    let filled = buf.filled().len();
                    buf.advance(n);
                    if seen(&self.seen).read(&buf.filled()[filled..]) {
                        self.started.notify_one();
                    }
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl AsyncWrite for ClientIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.tcp.poll_write_ready(cx))?;
            match self.tcp.try_write(buf) {
                Ok(n) => {
                    if n > 0 {
                        seen(&self.seen).answering = true;
                    }
                    return Poll::Ready(Ok(n));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// The socket closes when the connection and its watch are dropped,
    /// which follows at once.
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
