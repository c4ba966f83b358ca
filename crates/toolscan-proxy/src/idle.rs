//! The upstream's idle timeout (`--upstream-idle-timeout`): how long the
//! upstream may send nothing, before its answer begins ([`send`]) or
//! between two reads of it ([`Idle`], every body read from the upstream).
//!
//! reqwest's own `read_timeout` makes a new timer for every read of a
//! body: created, put in the runtime's timer wheel, taken out again when
//! the read comes (about 700 instructions an upstream event, 8 % of a
//! forwarded one, under callgrind). Here an answer has one timer, a tick
//! of an eighth of the timeout, and a read only sets a flag: no clock is
//! read and no timer moved for it. Each tick looks at the flag; eight
//! ticks in a row with no read end the body. The upstream is so given up
//! on between 1 and 1⅛ timeouts after its last read, never sooner; a
//! stream that keeps sending wakes its timer eight times a timeout, not
//! once an event (reading the clock at every read cost about 280
//! instructions an event, callgrind).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

use crate::upstream::{Reply, ReplyBody, UpstreamError};

/// The upstream's answer (`send`, the request on its way), once its head
/// came within `idle`.
pub(crate) async fn send(
    send: impl Future<Output = Result<Reply, UpstreamError>>,
    idle: Duration,
) -> Result<Reply, UpstreamError> {
    match tokio::time::timeout(idle, send).await {
        Ok(sent) => sent,
        Err(_) => Err(UpstreamError::Idle(idle)),
    }
}

/// The body of `reply`, each read within `idle` of the one before (or
/// of now, for the first).
pub(crate) fn body(reply: Reply, idle: Duration) -> Idle {
    Idle::new(reply.body, idle)
}

/// How many ticks a timeout is: the body ends after this many ticks in a
/// row with no read.
const TICKS: u32 = 8;

/// An upstream body whose reads may be at most `timeout` apart; past it
/// (by at most an eighth of it), the body ends with
/// [`UpstreamError::Idle`].
pub(crate) struct Idle<B = ReplyBody> {
    inner: B,
    timeout: Duration,
    /// `timeout / TICKS`.
    tick: Duration,
    /// Set for the end of the current tick.
    sleep: Pin<Box<Sleep>>,
    /// A read came in the current tick.
    read: bool,
    /// Ticks in a row that ended with no read in them; `< TICKS` while the
    /// body is read.
    quiet: u32,
    /// The waker the timer has, once it was polled: it is polled again
    /// only when the task's waker changed, or when it fired.
    armed: Option<Waker>,
    /// The body ended (or failed): nothing more is read.
    done: bool,
}

impl<B> Idle<B> {
    fn new(inner: B, timeout: Duration) -> Idle<B> {
        let tick = timeout / TICKS;
        Idle {
            inner,
            timeout,
            tick,
            sleep: Box::pin(tokio::time::sleep_until(after(Instant::now(), tick))),
            read: false,
            quiet: 0,
            armed: None,
            done: false,
        }
    }

    /// The upstream sent nothing this time: whether it has been too long.
    /// Else the timer has this task's waker and is set for the end of the
    /// current tick.
    fn timed_out(&mut self, cx: &mut Context<'_>) -> bool {
        let fresh = self.armed.as_ref().is_some_and(|w| w.will_wake(cx.waker()));
        if fresh && !self.sleep.is_elapsed() {
            return false;
        }
        loop {
            match self.sleep.as_mut().poll(cx) {
                Poll::Pending => {
                    self.armed = Some(cx.waker().clone());
                    return false;
                }
                // A tick ended.
                Poll::Ready(()) => {
                    self.quiet = if std::mem::take(&mut self.read) {
                        0
                    } else {
                        self.quiet + 1
                    };
                    if self.quiet >= TICKS {
                        return true;
                    }
                    let next = after(Instant::now(), self.tick);
                    self.sleep.as_mut().reset(next);
                }
            }
        }
    }
}

impl<B> Body for Idle<B>
where
    B: Body<Data = Bytes, Error = UpstreamError> + Unpin,
{
    type Data = Bytes;
    type Error = UpstreamError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, UpstreamError>>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                this.read = true;
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => {
                this.done = true;
                Poll::Ready(Some(Err(e)))
            }
            Poll::Ready(None) => {
                this.done = true;
                Poll::Ready(None)
            }
            Poll::Pending if this.timed_out(cx) => {
                this.done = true;
                tracing::debug!(
                    timeout_s = this.timeout.as_secs_f64(),
                    "the upstream went quiet"
                );
                Poll::Ready(Some(Err(UpstreamError::Idle(this.timeout))))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// `span` after `at` (a year after it if that is past what an `Instant`
/// holds: a timeout that large never fires in practice).
fn after(at: Instant, span: Duration) -> Instant {
    at.checked_add(span)
        .unwrap_or_else(|| at + Duration::from_secs(365 * 24 * 3600))
}

/// The next chunk of `body`'s data (trailers skipped), `None` at its end.
pub(crate) async fn chunk(body: &mut Idle) -> Result<Option<Bytes>, UpstreamError> {
    use http_body_util::BodyExt;
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            return Ok(Some(data));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use tokio::sync::mpsc;

    /// A body whose frames the test sends; it ends when the sender is
    /// dropped.
    struct Chan(mpsc::UnboundedReceiver<Bytes>);

    impl Body for Chan {
        type Data = Bytes;
        type Error = UpstreamError;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, UpstreamError>>> {
            self.0.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
        }
    }

    /// Reads `body` to its end: when it ended after `start`, and whether
    /// it ended with the idle error.
    async fn read_out(mut body: Idle<Chan>, start: Instant) -> (Duration, bool) {
        loop {
            match body.frame().await {
                Some(Ok(_)) => {}
                Some(Err(UpstreamError::Idle(_))) => return (start.elapsed(), true),
                Some(Err(e)) => panic!("{e}"),
                None => return (start.elapsed(), false),
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_upstream_is_given_up_on_within_an_eighth_past_the_timeout() {
        let timeout = Duration::from_secs(80);
        let (_tx, rx) = mpsc::unbounded_channel();
        let start = Instant::now();
        let (took, idle) = read_out(Idle::new(Chan(rx), timeout), start).await;
        assert!(idle);
        assert!(took >= timeout && took <= timeout + timeout / 8, "{took:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn reads_keep_the_body_alive_and_the_timeout_counts_from_the_last() {
        let timeout = Duration::from_secs(80);
        let (tx, rx) = mpsc::unbounded_channel();
        let start = Instant::now();
        let reader = tokio::spawn(read_out(Idle::new(Chan(rx), timeout), start));
        // Reads 0.9 timeouts apart for ten timeouts: never cut.
        for _ in 0..11 {
            tokio::time::sleep(timeout * 9 / 10).await;
            tx.send(Bytes::from_static(b"data: x\n\n")).unwrap();
        }
        let last = start.elapsed();
        let (took, idle) = reader.await.unwrap();
        assert!(idle);
        let quiet = took - last;
        assert!(
            quiet >= timeout && quiet <= timeout + timeout / 8,
            "{quiet:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_ends_ends_without_the_idle_error() {
        let (tx, rx) = mpsc::unbounded_channel();
        tx.send(Bytes::from_static(b"x")).unwrap();
        drop(tx);
        let (_, idle) = read_out(Idle::new(Chan(rx), Duration::from_secs(1)), Instant::now()).await;
        assert!(!idle);
    }
}
