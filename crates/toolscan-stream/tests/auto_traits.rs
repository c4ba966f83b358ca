//! `EventStream` is `Send` and `Unpin` when its inner stream is, so it can
//! be spawned on a multi-threaded runtime and polled with `StreamExt::next`.

use std::convert::Infallible;

use bytes::Bytes;
use futures::channel::mpsc::UnboundedReceiver;
use toolscan_stream::{EventStream, StreamError};

fn assert_send<T: Send>() {}
fn assert_unpin<T: Unpin>() {}
fn assert_error<T: std::error::Error + Send + Sync + 'static>() {}

#[test]
fn event_stream_is_send_and_unpin() {
    assert_send::<EventStream<UnboundedReceiver<Result<Bytes, std::io::Error>>>>();
    assert_unpin::<EventStream<UnboundedReceiver<Result<Bytes, Infallible>>>>();
}

#[test]
fn stream_error_is_a_thread_safe_error() {
    assert_error::<StreamError<std::io::Error>>();
}

type BoxedHandlerFuture =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), std::io::Error>> + Send>>;
type HandlerFn = fn(toolscan_core::ToolCall) -> BoxedHandlerFuture;
type EventsOf<E> = EventStream<UnboundedReceiver<Result<Bytes, E>>>;

#[test]
fn dispatch_is_send_and_unpin_when_its_parts_are() {
    use toolscan_stream::Dispatch;
    assert_send::<Dispatch<EventsOf<std::io::Error>, HandlerFn, BoxedHandlerFuture>>();
    assert_unpin::<Dispatch<EventsOf<Infallible>, HandlerFn, BoxedHandlerFuture>>();
}
