//! The upstream's body on its way to the SSE rewrite, with its lines
//! bounded: an SSE decoder buffers a line until it ends, so one endless
//! line would take all the memory it is given. A line longer than the
//! bound ends the body with an error instead.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::Stream;

/// The upstream body's chunks, their transport errors as `io::Error`s
/// (`TimedOut` for a read that timed out; no URL in the message), and a
/// line over `max_line` bytes as an `InvalidData` error.
pub(crate) struct LineGuard<S> {
    inner: S,
    max_line: usize,
    /// Bytes since the last line end.
    run: usize,
    /// The guard tripped, or the body failed: nothing more is read.
    over: bool,
}

impl<S> LineGuard<S> {
    pub(crate) fn new(inner: S, max_line: usize) -> LineGuard<S> {
        LineGuard {
            inner,
            max_line,
            run: 0,
            over: false,
        }
    }
}

impl<S> Stream for LineGuard<S>
where
    S: Stream<Item = Result<Bytes, reqwest::Error>> + Unpin,
{
    type Item = Result<Bytes, io::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.over {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                // (`\r` alone ends an SSE line too.)
                this.run = match memchr::memrchr2(b'\n', b'\r', &chunk) {
                    Some(at) => chunk.len() - at - 1,
                    None => this.run.saturating_add(chunk.len()),
                };
                if this.run > this.max_line {
                    this.over = true;
                    return Poll::Ready(Some(Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "an SSE line longer than {} bytes (--max-sse-line)",
                            this.max_line
                        ),
                    ))));
                }
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Ready(Some(Err(e))) => {
                this.over = true;
                let kind = if e.is_timeout() {
                    io::ErrorKind::TimedOut
                } else {
                    io::ErrorKind::Other
                };
                Poll::Ready(Some(Err(io::Error::new(kind, e.without_url()))))
            }
            other => other.map(|o| o.map(|r| r.map_err(io::Error::other))),
        }
    }
}
