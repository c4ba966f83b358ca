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
        self.reference.feed(chunk.as_bytes()).into_vec()
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
        self.reference.finish().into_vec()
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
    assert_contract(&[events, rest.into_vec()].concat());
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

/// A stream of chunks that sets a flag when it is dropped.
struct DropFlag<S> {
    inner: S,
    dropped: Arc<std::sync::atomic::AtomicBool>,
}

impl<S: Stream + Unpin> Stream for DropFlag<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.inner.poll_next_unpin(cx)
    }
}

impl<S> Drop for DropFlag<S> {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::SeqCst);
    }
}

/// A producer behind a bounded channel (room for one chunk) that sends
/// `chunks` and counts what it sent; it stops, and says so, when the
/// receiver is gone.
fn bounded_producer(
    chunks: Vec<&'static str>,
) -> (
    Spawn<impl std::future::Future<Output = Result<(), ()>>>,
    futures::channel::mpsc::Receiver<Chunk>,
    Arc<AtomicUsize>,
) {
    use futures::SinkExt;
    let (mut tx, rx) = futures::channel::mpsc::channel::<Chunk>(0);
    let sent = Arc::new(AtomicUsize::new(0));
    let counter = sent.clone();
    let producer = spawn(async move {
        for chunk in chunks {
            // `feed`: in the channel, not yet taken (`send` would also wait
            // for the receiver to take it).
            tx.feed(Ok(Bytes::from_static(chunk.as_bytes())))
                .await
                .map_err(|_| ())?;
            counter.fetch_add(1, Ordering::SeqCst);
        }
        Ok(())
    });
    (producer, rx, sent)
}

const CALL: &str = "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>";

#[test]
fn a_consumer_that_does_not_poll_blocks_a_producer_behind_a_bounded_channel() {
    let chunks = vec!["Hi ", CALL, " and ", CALL, " bye"];
    let (mut producer, rx, sent) = bounded_producer(chunks.clone());
    let polls = Arc::new(AtomicUsize::new(0));
    let inner = Counted {
        inner: rx,
        polls: polls.clone(),
    };
    let mut consumer = spawn(inner.tool_events(seeded_parser()));
    let mut reference = seeded_parser();

    // The producer fills the channel and blocks: the consumer has not
    // polled. However often it is polled, it stays blocked.
    assert_pending!(producer.poll());
    assert_eq!(sent.load(Ordering::SeqCst), 1);
    for _ in 0..5 {
        assert_pending!(producer.poll());
    }
    assert_eq!(sent.load(Ordering::SeqCst), 1);
    assert!(!producer.is_woken());

    // The consumer takes "Hi ": one event; the freed room wakes the
    // producer, which sends the call chunk and blocks again.
    let expected = reference.feed(chunks[0].as_bytes());
    assert_eq!(expected.len(), 1);
    assert_ready_eq!(consumer.poll_next(), Some(Ok(expected[0].clone())));
    assert!(producer.is_woken());
    assert_pending!(producer.poll());
    assert_eq!(sent.load(Ordering::SeqCst), 2);

    // The consumer takes the call chunk (several events) and yields only
    // its first event: the rest are queued, the inner stream is not
    // polled again, the producer stays blocked on its third chunk.
    let expected = reference.feed(chunks[1].as_bytes());
    assert!(expected.len() > 2, "{expected:?}");
    assert_ready_eq!(consumer.poll_next(), Some(Ok(expected[0].clone())));
    assert!(producer.is_woken());
    assert_pending!(producer.poll());
    assert_eq!(sent.load(Ordering::SeqCst), 3);
    let inner_polls = polls.load(Ordering::SeqCst);
    for event in &expected[1..] {
        // Producer: still blocked, though polled.
        assert_pending!(producer.poll());
        assert_eq!(sent.load(Ordering::SeqCst), 3);
        assert_ready_eq!(consumer.poll_next(), Some(Ok(event.clone())));
    }
    assert_eq!(
        polls.load(Ordering::SeqCst),
        inner_polls,
        "the inner stream was polled while events were queued"
    );
    assert!(!producer.is_woken());

    // Drain everything, alternating; the producer finishes, then the end.
    let mut expected: Vec<Event> = chunks[2..]
        .iter()
        .flat_map(|c| reference.feed(c.as_bytes()))
        .collect();
    expected.extend(reference.finish());
    let mut got = Vec::new();
    let mut finished = false;
    loop {
        if !finished {
            if let Poll::Ready(result) = producer.poll() {
                assert_eq!(result, Ok(()));
                finished = true;
            }
        }
        match consumer.poll_next() {
            Poll::Ready(Some(item)) => got.push(item.unwrap()),
            Poll::Ready(None) => break,
            Poll::Pending => assert!(!finished, "pending after the producer finished"),
        }
    }
    assert_eq!(got, expected);
    assert_eq!(sent.load(Ordering::SeqCst), chunks.len());
}

#[test]
fn queued_events_never_exceed_the_events_of_one_chunk() {
    // Many chunks ready at once, each with its own number of events: at
    // every step, the queue holds what is left of the current chunk only.
    let mut h = Harness::new();
    let pieces = [
        CALL,
        "text ",
        "<tool_call>{\"name\": \"g\", ",
        "\"arguments\": {}}</tool_call> and <tool_call>{\"name\": \"h\", \"arguments\": {}}</tool_call>",
        CALL,
    ];
    let per_chunk: Vec<Vec<Event>> = pieces.iter().map(|p| h.send(p)).collect();
    let finish = h.close();
    for events in per_chunk.into_iter().chain([finish]) {
        let n = events.len();
        for (i, event) in events.into_iter().enumerate() {
            assert_ready_eq!(h.poll(), Some(Ok(event)));
            assert_eq!(h.task.queued_events(), n - i - 1);
        }
    }
    assert_ready_eq!(h.poll(), None);
}

#[test]
fn dropping_the_stream_mid_way_drops_the_inner_stream_and_frees_the_producer() {
    let (mut producer, rx, sent) = bounded_producer(vec![CALL, CALL, CALL]);
    let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let inner = DropFlag {
        inner: rx,
        dropped: dropped.clone(),
    };
    let mut consumer = spawn(inner.tool_events(seeded_parser()));
    assert_pending!(producer.poll());
    // One event out, more queued: mid-way.
    assert_ready!(consumer.poll_next());
    assert!(consumer.queued_events() > 0);
    assert!(!dropped.load(Ordering::SeqCst));

    drop(consumer);
    assert!(
        dropped.load(Ordering::SeqCst),
        "the inner stream outlived the stream"
    );
    // The producer learns the receiver is gone and stops cleanly instead
    // of waiting forever.
    assert!(producer.is_woken());
    assert_ready_eq!(producer.poll(), Err(()));
    assert!(sent.load(Ordering::SeqCst) < 3);
}

#[test]
fn an_always_ready_inner_stream_of_silent_chunks_yields_to_the_executor() {
    // Empty chunks complete no event. An inner stream that always has one
    // ready must not keep the poll going forever: after a bounded number,
    // the stream returns pending and wakes itself.
    let polls = Arc::new(AtomicUsize::new(0));
    let inner = Counted {
        inner: futures::stream::repeat(Ok::<_, Boom>(Bytes::new())),
        polls: polls.clone(),
    };
    let mut task = spawn(inner.tool_events(seeded_parser()));
    assert_pending!(task.poll_next());
    assert!(task.is_woken(), "it must ask to be polled again");
    let first = polls.load(Ordering::SeqCst);
    assert!(first > 1 && first <= 64, "{first} chunks in one poll");
    assert_pending!(task.poll_next());
    assert_eq!(polls.load(Ordering::SeqCst), 2 * first);
}

#[test]
fn the_parser_is_finished_exactly_once() {
    let mut h = Harness::new();
    let mut expected = h.send("Hi ");
    expected.extend(h.send(CALL));
    assert!(!h.task.parser().is_finished());
    expected.extend(h.close());
    let events = h.collect_to_end();
    assert_eq!(events, expected);
    let dones = events
        .iter()
        .filter(|e| matches!(e, Event::Done { .. }))
        .count();
    assert_eq!(dones, 1);
    assert!(h.task.parser().is_finished());
    // Polled again and again: nothing more, not even a second `done`.
    for _ in 0..3 {
        assert_ready_eq!(h.poll(), None);
    }

    // Finished by hand before the end: the end adds nothing.
    let mut h = Harness::new();
    let _ = h.send("Hi ");
    assert_ready!(h.poll());
    let by_hand = h.task.parser_mut().finish();
    assert!(matches!(by_hand.last(), Some(Event::Done { .. })));
    let _ = h.send("ignored, the parser is finished");
    h.close();
    assert_eq!(h.collect_to_end(), Vec::<Event>::new());
}
