//! The upstream's body on its way to the SSE rewrite, with its lines and
//! events bounded: an SSE decoder buffers a line until it ends, and an
//! event's `data` lines until the blank line that ends it, so one endless
//! line, or one event of endless lines, would take all the memory it is
//! given. A line or an event longer than its bound ends the body with an
//! error instead.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::Stream;

use crate::upstream::UpstreamError;

/// The upstream body's chunks, their transport errors as `io::Error`s
/// (`TimedOut` for the idle timeout or a read that timed out), and a
/// line over `max_line` bytes or an event over `max_event` bytes as an
/// `InvalidData` error.
pub(crate) struct LineGuard<S> {
    inner: S,
    max_line: usize,
    max_event: usize,
    /// Bytes since the last line end.
    line: usize,
    /// Bytes of the event's lines before the current one (their ends
    /// included): the event so far is `event + line`.
    event: usize,
    /// The last byte was a `\r`: a `\n` next is the same line end.
    after_cr: bool,
    /// The guard tripped, or the body failed: nothing more is read.
    over: bool,
}

impl<S> LineGuard<S> {
    pub(crate) fn new(inner: S, max_line: usize, max_event: usize) -> LineGuard<S> {
        LineGuard {
            inner,
            max_line,
            max_event,
            line: 0,
            event: 0,
            after_cr: false,
            over: false,
        }
    }

    /// Counts `chunk`'s lines and events; the error if one is over its
    /// bound. (`\r\n`, `\n` and `\r` end an SSE line; an empty line ends
    /// an event.)
    ///
    /// The common chunk is whole events, ending in a blank line (`\n\n`):
    /// when the event so far and all of the chunk fit in both bounds, no
    /// line or event in it can pass one, and after it a new event begins,
    /// so it is not read line by line.
    fn count(&mut self, chunk: &[u8]) -> Result<(), io::Error> {
        let fits = self
            .event
            .saturating_add(self.line)
            .saturating_add(chunk.len())
            <= self.max_line.min(self.max_event);
        if fits && chunk.ends_with(b"\n\n") {
            (self.line, self.event, self.after_cr) = (0, 0, false);
            return Ok(());
        }
        self.count_lines(chunk)
    }

    /// [`LineGuard::count`], line by line.
    fn count_lines(&mut self, chunk: &[u8]) -> Result<(), io::Error> {
        let mut from = 0;
        for at in memchr::memchr2_iter(b'\n', b'\r', chunk) {
            let run = at - from;
            let end = chunk[at];
            from = at + 1;
            if run == 0 && self.after_cr && end == b'\n' {
                self.after_cr = false;
                continue;
            }
            self.line += run;
            self.check()?;
            if self.line == 0 {
                self.event = 0;
            } else {
                self.event += self.line + 1;
            }
            self.line = 0;
            self.check()?;
            self.after_cr = end == b'\r';
        }
        if from < chunk.len() {
            self.after_cr = false;
            self.line = self.line.saturating_add(chunk.len() - from);
        }
        self.check()
    }

    fn check(&self) -> Result<(), io::Error> {
        let (bound, flag, what) = if self.line > self.max_line {
            (self.max_line, "--max-sse-line", "line")
        } else if self.event.saturating_add(self.line) > self.max_event {
            (self.max_event, "--max-sse-event", "event")
        } else {
            return Ok(());
        };
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("an SSE {what} longer than {bound} bytes ({flag})"),
        ))
    }
}

impl<S> Stream for LineGuard<S>
where
    S: Stream<Item = Result<Bytes, UpstreamError>> + Unpin,
{
    type Item = Result<Bytes, io::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.over {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                if let Err(e) = this.count(&chunk) {
                    this.over = true;
                    return Poll::Ready(Some(Err(e)));
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
                Poll::Ready(Some(Err(io::Error::new(kind, e))))
            }
            other => other.map(|o| o.map(|r| r.map_err(io::Error::other))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(max_line: usize, max_event: usize) -> LineGuard<()> {
        LineGuard::new((), max_line, max_event)
    }

    #[test]
    fn lines_and_events_are_counted_across_chunks_and_line_ends() {
        let mut g = guard(10, 25);
        // A line and its end are 9 bytes: two fit in an event of 25 bytes,
        // three (27) do not.
        assert!(g.count(b"data: ab\ndata: cd\n\n").is_ok());
        assert!(g.count(b"data: ab\r\n").is_ok());
        assert!(g.count(b"data: cd\r").is_ok());
        assert!(
            g.count(b"\n\r\n").is_ok(),
            "CRLF split, then the blank line"
        );
        assert_eq!((g.line, g.event), (0, 0));
        assert!(g.count(b"data: ab\ndata: cd\ndata:").is_ok());
        let e = g.count(b" ef\n").unwrap_err();
        assert!(e.to_string().contains("--max-sse-event"), "{e}");
        let mut g = guard(10, 100);
        let e = g.count(b"data: 0123456789").unwrap_err();
        assert!(e.to_string().contains("--max-sse-line"), "{e}");
    }

    /// A chunk taken whole (it ends in a blank line and fits) leaves the
    /// guard as counting its lines does, and trips it where that does:
    /// random chunks of line ends and bytes, under small bounds.
    #[test]
    fn a_chunk_taken_whole_counts_as_its_lines_do() {
        let bytes = [b'\n', b'\r', b'x', b'x', b'x'];
        let mut rng = toolscan_testkit::rng::Rng::new(0x853c_49e6_748f_ea9b);
        let mut next = move |n: usize| rng.below(n);
        let mut whole = 0;
        for _ in 0..20_000 {
            let (max_line, max_event) = (1 + next(12), 1 + next(30));
            let (mut fast, mut slow) = (guard(max_line, max_event), guard(max_line, max_event));
            for _ in 0..1 + next(6) {
                let mut chunk: Vec<u8> = (0..next(14)).map(|_| bytes[next(5)]).collect();
                if next(2) == 0 {
                    chunk.extend_from_slice(b"\n\n");
                }
                let state = |g: &LineGuard<()>| (g.line, g.event, g.after_cr);
                let before = state(&fast);
                let (a, b) = (fast.count(&chunk).is_ok(), slow.count_lines(&chunk).is_ok());
                assert_eq!(
                    a, b,
                    "{chunk:?} after {before:?}, bounds {max_line}, {max_event}"
                );
                if !a {
                    break;
                }
                assert_eq!(state(&fast), state(&slow), "{chunk:?} after {before:?}");
                whole += usize::from(chunk.ends_with(b"\n\n"));
            }
        }
        assert!(whole > 5_000);
    }
}
