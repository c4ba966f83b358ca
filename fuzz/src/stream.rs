//! Running a `Stream` whose source never waits, without an executor.

use std::pin::pin;
use std::task::{Context, Poll, Waker};

use futures_core::Stream;

/// Every item of `stream`, polled with a waker that does nothing.
///
/// # Panics
///
/// If the stream is ever pending: with an upstream that is always ready,
/// nothing may make it wait.
pub fn drain<S: Stream>(stream: S) -> Vec<S::Item> {
    let mut stream = pin!(stream);
    let mut cx = Context::from_waker(Waker::noop());
    let mut out = Vec::new();
    loop {
        match stream.as_mut().poll_next(&mut cx) {
            Poll::Ready(Some(item)) => out.push(item),
            Poll::Ready(None) => return out,
            Poll::Pending => panic!("the stream waits though its upstream is always ready"),
        }
    }
}
