//! The upstream's idle timeout (`--upstream-idle-timeout`): how long the
//! upstream may send nothing, before its answer begins ([`send`]) or
//! between two reads of it ([`Idle`], every body read from the upstream).
//!
//! reqwest's own `read_timeout` makes a new timer for every read of a
//! body: created, put in the runtime's timer wheel, taken out again when
//! the read comes (about 700 instructions an upstream event, 8 % of a
//! forwarded one, under callgrind). Here an answer has one timer, which is
//! moved only when it fires: a read notes the time it came, and the timer,
//! when its deadline passes, checks whether a read came since and is set
//! again from that read's time. A stream that keeps sending wakes it once
//! per timeout, not once per event.

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

/// An upstream body whose reads may be at most `timeout` apart; past it,
/// the body ends with [`UpstreamError::Idle`].
pub(crate) struct Idle {
    inner: ReplyBody,
    timeout: Duration,
    /// When the last read came (or the body was made): the deadline is
    /// `last + timeout`.
    last: Instant,
    /// Set for a deadline at or before `last + timeout`; when it passes,
    /// the deadline is checked and the timer set again.
    sleep: Pin<Box<Sleep>>,
    /// The waker the timer has, once it was polled: it is polled again
    /// only when the task's waker changed, or when it fired.
    armed: Option<Waker>,
    /// The body ended (or failed): nothing more is read.
    done: bool,
}

impl Idle {
    fn new(inner: ReplyBody, timeout: Duration) -> Idle {
        let last = Instant::now();
        Idle {
            inner,
            timeout,
            last,
            sleep: Box::pin(tokio::time::sleep_until(deadline(last, timeout))),
            armed: None,
            done: false,
        }
    }

    /// The upstream sent nothing this time: whether it has been too long.
    /// Else the timer has this task's waker and a deadline no later than
    /// the real one.
    fn timed_out(&mut self, cx: &mut Context<'_>) -> bool {
        let fresh = self.armed.as_ref().is_some_and(|w| w.will_wake(cx.waker()));
        if fresh && !self.sleep.is_elapsed() {
            return false;
        }
        let deadline = deadline(self.last, self.timeout);
        if self.sleep.deadline() != deadline {
            // A read came since the timer was set: set it from that read.
            self.sleep.as_mut().reset(deadline);
        }
        match self.sleep.as_mut().poll(cx) {
            Poll::Pending => {
                self.armed = Some(cx.waker().clone());
                false
            }
            // The deadline of the last read passed: nothing came.
            Poll::Ready(()) => true,
        }
    }
}

impl Body for Idle {
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
                this.last = Instant::now();
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

/// `timeout` after `last` (a year after it if that is past what an
/// `Instant` holds: a timeout that large never fires in practice).
fn deadline(last: Instant, timeout: Duration) -> Instant {
    last.checked_add(timeout)
        .unwrap_or_else(|| last + Duration::from_secs(365 * 24 * 3600))
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
