//! Poll-level behaviour of `EventStream`, driven by hand with
//! `tokio_test::task::spawn` over an inner stream the test controls.
//!
//! Every expectation comes from a second, identical parser fed the same
//! chunks directly, so these tests hold whatever events the engine emits.

mod common;

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::channel::mpsc::{unbounded, UnboundedReceiver, UnboundedSender};
use futures::stream::{FusedStream, Stream, StreamExt};
use tokio_test::task::{spawn, Spawn};
use tokio_test::{assert_pending, assert_ready, assert_ready_eq};
use toolscan_core::{Event, Parser};
use toolscan_stream::{EventStream, EventStreamExt, StreamError};

use common::{assert_contract, seeded_parser, Boom, INPUT};

type Chunk = Result<Bytes, Boom>;
type Item = Result<Event, StreamError<Boom>>;

/// A stream that counts how often it is polled.
struct Counted<S> {
    inner: S,
    polls: Arc<AtomicUsize>,
}

impl<S: Stream + Unpin> Stream for Counted<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        self.inner.poll_next_unpin(cx)
    }
}

/// An event stream over a channel, plus a reference parser fed the same
/// chunks directly.
struct Harness {
    task: Spawn<EventStream<Counted<UnboundedReceiver<Chunk>>>>,
    tx: Option<UnboundedSender<Chunk>>,
    reference: Parser,
    polls: Arc<AtomicUsize>,
}

impl Harness {
    fn new() -> Harness {
        let (tx, rx) = unbounded();
        let polls = Arc::new(AtomicUsize::new(0));
        let inner = Counted {
            inner: rx,
            polls: polls.clone(),
        };
        Harness {
            task: spawn(inner.tool_events(seeded_parser())),
            tx: Some(tx),
            reference: seeded_parser(),
            polls,
        }
    }

    /// Sends a chunk; returns the events the reference parser gives for it.
    fn send(&mut self, chunk: &'static str) -> Vec<Event> {
        self.send_raw(Ok(Bytes::from_static(chunk.as_bytes())));
        self.reference.feed(chunk.as_bytes())
    }

    /// Sends an item without feeding the reference parser.
    fn send_raw(&mut self, item: Chunk) {
        self.tx
            .as_ref()
            .expect("channel still open")
            .unbounded_send(item)
            .expect("receiver alive");
    }

    /// Ends the input; returns the events the reference parser's `finish`
    /// gives.
    fn close(&mut self) -> Vec<Event> {
        self.tx = None;
        self.reference.finish()
    }

    fn poll(&mut self) -> Poll<Option<Item>> {
        self.task.poll_next()
    }

    fn inner_polls(&self) -> usize {
        self.polls.load(Ordering::SeqCst)
    }

    /// Polls until the stream ends; every poll must be ready.
    fn collect_to_end(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        while let Some(item) = assert_ready!(self.poll()) {
            events.push(item.expect("no transport error"));
        }
        events
    }
}

#[test]
fn pending_inner_stream_gives_pending_and_a_chunk_wakes_the_task() {
    let mut h = Harness::new();

    assert_pending!(h.poll());
    assert_eq!(h.inner_polls(), 1);
    assert!(!h.task.is_woken());

    // Polling again without a wake-up polls the inner stream once more and
    // nothing else: no spinning, no event.
    assert_pending!(h.poll());
    assert_eq!(h.inner_polls(), 2);

    let expected = h.send("Hello, world. ");
    assert!(h.task.is_woken(), "sending a chunk must wake the task");

    for event in expected {
        assert_ready_eq!(h.poll(), Some(Ok(event)));
    }
    assert_pending!(h.poll());
    assert!(!h.task.is_woken());
}

#[test]
fn chunks_that_complete_no_event_do_not_end_the_poll() {
    let mut h = Harness::new();
    // An empty chunk completes nothing: the same poll goes on to the next
    // chunk (here: none yet, so the inner stream is pending and has the
    // waker).
    let expected = h.send("");
    assert!(expected.is_empty(), "an empty chunk completed {expected:?}");
    assert_pending!(h.poll());
    assert_eq!(h.inner_polls(), 2);

    h.send("");
    let expected = h.send("more text");
    assert!(h.task.is_woken());
    for event in expected {
        assert_ready_eq!(h.poll(), Some(Ok(event)));
    }
    assert_pending!(h.poll());
}

#[test]
fn the_events_of_one_chunk_are_drained_before_the_inner_stream_is_polled_again() {
    let mut h = Harness::new();
    // With the real engine this one chunk completes several events (text,
    // call start, argument deltas, call end).
    let expected = h.send(INPUT);
    assert!(!expected.is_empty());
    // A second chunk is ready too: it must not be taken before the first
    // one's events are all out.
    let later = h.send(" bye");

    let n = expected.len();
    for (i, event) in expected.into_iter().enumerate() {
        assert_ready_eq!(h.poll(), Some(Ok(event)));
        assert_eq!(
            h.inner_polls(),
            1,
            "inner stream polled while events were queued"
        );
        assert_eq!(h.task.queued_events(), n - i - 1);
    }

    for event in later {
        assert_ready_eq!(h.poll(), Some(Ok(event)));
    }
    assert_pending!(h.poll());
}

#[test]
fn end_of_input_finishes_with_done_last_and_stays_ended() {
    let mut h = Harness::new();
    let mut expected = h.send("Hi <tool_");
    expected.extend(h.send("call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>"));
    expected.extend(h.close());

    let events = h.collect_to_end();
    assert_eq!(events, expected);
    assert_contract(&events);

    let polls = h.inner_polls();
    for _ in 0..3 {
        assert_ready_eq!(h.poll(), None);
    }
    assert_eq!(h.inner_polls(), polls, "inner stream polled after its end");
    assert!(h.task.is_terminated());
    assert_eq!(h.task.size_hint(), (0, Some(0)));
}

#[test]
fn empty_input_gives_the_finish_events_only() {
    let mut h = Harness::new();
    assert_pending!(h.poll());
    let expected = h.close();
    assert!(h.task.is_woken(), "closing the channel must wake the task");

    let events = h.collect_to_end();
    assert_eq!(events, expected);
    assert_contract(&events);
    assert_ready_eq!(h.poll(), None);
}

#[test]
fn a_transport_error_comes_out_typed_and_ends_the_stream_without_finish() {
    let mut h = Harness::new();
    let expected = h.send("Hello <tool_call>{\"name\": ");
    h.send_raw(Err(Boom("connection reset")));
    // Still queued in the open channel: must never be read.
    h.send_raw(Ok(Bytes::from_static(b"after the error")));

    let mut events = Vec::new();
    let error = loop {
        match assert_ready!(h.poll()) {
            Some(Ok(event)) => events.push(event),
            Some(Err(e)) => break e,
            None => panic!("ended before the transport error"),
        }
    };
    assert_eq!(events, expected);
    assert_eq!(error, StreamError::Transport(Boom("connection reset")));
    assert!(
        !events.iter().any(|e| matches!(e, Event::Done { .. })),
        "finish ran on a transport error: {events:?}"
    );

    let polls = h.inner_polls();
    for _ in 0..3 {
        assert_ready_eq!(h.poll(), None);
    }
    assert_eq!(
        h.inner_polls(),
        polls,
        "inner stream polled after the error"
    );
    assert!(h.task.is_terminated());

    // The partial response can still be finished by hand.
    let rest = h.task.parser_mut().finish();
    assert_eq!(rest, h.reference.finish());
    assert_contract(&[events, rest].concat());
}

#[test]
fn a_transport_error_is_the_typed_inner_error() {
    use std::error::Error as _;
    use std::io;

    let chunks = futures::stream::iter([
        Ok(Bytes::from_static(b"partial")),
        Err(io::Error::new(
            io::ErrorKind::ConnectionReset,
            "reset by peer",
        )),
    ]);
    let mut task = spawn(chunks.tool_events(seeded_parser()));
    let error = loop {
        match assert_ready!(task.poll_next()) {
            Some(Ok(_)) => {}
            Some(Err(e)) => break e,
            None => panic!("ended before the transport error"),
        }
    };
    let source = error.source().and_then(|s| s.downcast_ref::<io::Error>());
    assert_eq!(
        source.map(io::Error::kind),
        Some(io::ErrorKind::ConnectionReset)
    );
    match error {
        StreamError::Transport(e) => assert_eq!(e.to_string(), "reset by peer"),
        other => panic!("unexpected error {other:?}"),
    }
    assert!(assert_ready!(task.poll_next()).is_none());
}

#[test]
fn accessors_reach_the_inner_stream_and_the_parser() {
    let (tx, rx) = unbounded::<Chunk>();
    let mut stream = EventStream::new(rx, seeded_parser());
    assert!(!stream.get_ref().is_terminated());
    stream.get_mut().close();
    let _: &Parser = stream.parser();
    assert_eq!(stream.queued_events(), 0);
    let mut parser = stream.into_parser();
    assert_contract(&parser.finish());
    drop(tx);
}
