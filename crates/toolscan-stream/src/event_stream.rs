//! [`EventStream`]: the adapter from a stream of byte chunks to a stream of
//! events.

use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::ready;
use futures_core::stream::{FusedStream, Stream};
use pin_project_lite::pin_project;
use toolscan_core::{Event, EventRef, Parser, Sink};

use crate::bytes_events::ByteEvents;
#[cfg(doc)]
use crate::bytes_events::{ByteEvent, Bytes};
use crate::error::StreamError;
use crate::queue::{Decode, Queue};

pin_project! {
    /// A stream of [`Event`]s parsed from a stream of byte chunks.
    ///
    /// Built with [`EventStream::new`] or
    /// [`EventStreamExt::tool_events`](crate::EventStreamExt::tool_events)
    /// from any stream `S` of `Result<B, E>` where `B: AsRef<[u8]>`; it
    /// yields `Result<Event, StreamError<E>>`.
    ///
    /// # How it polls
    ///
    /// As tokio-util's `FramedRead` does with a decoder:
    ///
    /// - The events of a chunk are queued and yielded one per poll; the
    ///   inner stream is polled again only once the queue is empty. Chunks
    ///   that complete no event are consumed in the same poll, until one
    ///   does or the inner stream is pending.
    /// - When the inner stream is pending, so is this one: the inner stream
    ///   has registered the waker, and nothing here spins.
    /// - When the inner stream ends, [`Parser::finish`] runs once and its
    ///   events (ending with [`Event::Done`]) are yielded; after that this
    ///   stream returns `None` forever and never polls the inner stream
    ///   again (it is a [`FusedStream`]).
    /// - A poll consumes at most 32 chunks in a row that complete no event;
    ///   then it wakes its own task and returns `Pending`, so an inner
    ///   stream that is always ready cannot starve the executor.
    ///
    /// # Back-pressure and memory
    ///
    /// Nothing is read ahead: a chunk is taken from the inner stream only
    /// when the consumer has taken every event of the chunk before it. A
    /// consumer that stops polling therefore stops the reads, and a
    /// producer behind a bounded channel (or a TCP window) waits for it.
    /// What the adapter holds at any time is the events of one chunk (plus
    /// the parser's own state, bounded by its
    /// [`Limits`](toolscan_core::Limits)); the queue's allocation is reused
    /// from chunk to chunk.
    ///
    /// # What owned events cost
    ///
    /// Chunks are fed through the parser's sink API
    /// ([`Parser::feed_with`]) straight into the queue: no intermediate
    /// `Vec`, and a delta that continues the previous event of the same
    /// chunk is appended to it, so a chunk gives exactly the events
    /// [`Parser::feed`] gives. The events own their text (the chunk is
    /// gone by the time they are yielded), but a delta of up to 24 bytes
    /// is stored inline in its [`Delta`](toolscan_core::Delta): a
    /// token-sized chunk of plain text is one event, one copy of a few
    /// bytes, and no allocation. Larger deltas cost one allocation each.
    /// To avoid even that copy, feed chunks to a [`Parser`] by hand with
    /// [`Parser::feed_with`] and a [`Sink`] of your own.
    ///
    /// # Dropping
    ///
    /// Dropping an `EventStream` drops the inner stream (closing the
    /// connection or channel behind it), the parser and any queued events;
    /// nothing is left running.
    ///
    /// # Transport errors
    ///
    /// An `Err(e)` from the inner stream comes out as
    /// `Err(StreamError::Transport(e))`, after every event of the chunks
    /// before it, and then the stream ends **without** calling
    /// [`Parser::finish`]: a broken connection is not the end of the
    /// response, and an [`Event::Done`] (with its `finish_reason`) would
    /// tell the consumer that it was. A consumer who wants the events of the
    /// partial response anyway (the text held back, the call that was cut)
    /// can finish the parser itself:
    ///
    /// ```
    /// use futures::{executor::block_on, stream, StreamExt};
    /// use toolscan_core::{Event, Parser};
    /// use toolscan_stream::{EventStreamExt, StreamError};
    ///
    /// let chunks = stream::iter([
    ///     Ok(&b"partial answ"[..]),
    ///     Err(std::io::Error::other("connection reset")),
    /// ]);
    /// let mut events = chunks.tool_events(Parser::for_format("hermes").unwrap());
    /// block_on(async {
    ///     while let Some(item) = events.next().await {
    ///         if let Err(StreamError::Transport(e)) = item {
    ///             eprintln!("transport failed: {e}");
    ///         }
    ///     }
    /// });
    /// let rest = events.parser_mut().finish();
    /// assert!(matches!(rest.last(), Some(Event::Done { .. })));
    /// ```
    #[must_use = "streams do nothing unless polled"]
    pub struct EventStream<S, D = OwnedEvents> {
        #[pin]
        inner: S,
        parser: Parser,
        // Decoded events not yet yielded: the events of one chunk at most
        // (the inner stream is polled only when it is empty). The parser
        // writes into it directly, and its allocation is kept from chunk to
        // chunk (up to `RETAINED_CAPACITY` events).
        queue: D,
        // The inner stream ended or failed: never poll it again.
        terminated: bool,
    }
}

impl<S> EventStream<S> {
    /// An event stream that parses the chunks of `inner` with `parser`.
    pub fn new(inner: S, parser: Parser) -> EventStream<S> {
        EventStream {
            inner,
            parser,
            queue: OwnedEvents(VecDeque::new()),
            terminated: false,
        }
    }

    /// The inner stream, the parser and the events decoded but not yet
    /// yielded, in order.
    pub fn into_parts(self) -> (S, Parser, Vec<Event>) {
        (self.inner, self.parser, self.queue.0.into())
    }
}

impl<S> EventStream<S, ByteEvents> {
    /// A stream of [`ByteEvent`]s that parses the [`Bytes`] chunks of
    /// `inner` with `parser` (see [`ByteEvent`]).
    pub fn from_bytes(inner: S, parser: Parser) -> EventStream<S, ByteEvents> {
        EventStream {
            inner,
            parser,
            queue: ByteEvents(VecDeque::new()),
            terminated: false,
        }
    }
}

impl<S, D: Queue> EventStream<S, D> {
    /// The inner stream of chunks.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner stream of chunks, mutably.
    ///
    /// Taking chunks out of it directly skips the parser.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The inner stream of chunks, pinned.
    ///
    /// Taking chunks out of it directly skips the parser.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut S> {
        self.project().inner
    }

    /// The parser.
    pub fn parser(&self) -> &Parser {
        &self.parser
    }

    /// The parser, mutably: for instance to
    /// [`finish`](Parser::finish) it after a transport error.
    ///
    /// Events it returns when called directly do not go through this
    /// stream. Once it is finished, the chunks still to come produce no
    /// events and the end of the inner stream adds none.
    pub fn parser_mut(&mut self) -> &mut Parser {
        &mut self.parser
    }

    /// Events decoded but not yet yielded.
    pub fn queued_events(&self) -> usize {
        self.queue.len()
    }

    /// The inner stream of chunks; the parser and any queued events are
    /// dropped.
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// The parser; the inner stream and any queued events are dropped.
    pub fn into_parser(self) -> Parser {
        self.parser
    }
}

impl<S, B, E, D> Stream for EventStream<S, D>
where
    S: Stream<Item = Result<B, E>>,
    D: Decode<B>,
{
    type Item = Result<D::Item, StreamError<E>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        let mut silent_chunks = 0;
        loop {
            if let Some(event) = this.queue.pop() {
                return Poll::Ready(Some(Ok(event)));
            }
            if *this.terminated {
                return Poll::Ready(None);
            }
            if silent_chunks == SILENT_CHUNK_BUDGET {
                // The inner stream keeps having chunks ready that complete
                // no event: give the executor back, and ask to be polled
                // again at once.
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            // One huge chunk made many events: do not keep that much for
            // every chunk after it.
            this.queue.trim(RETAINED_CAPACITY);
            // The queue is empty: only now is the inner stream polled. When
            // it is pending, it has registered `cx`'s waker.
            match ready!(this.inner.as_mut().poll_next(cx)) {
                Some(Ok(chunk)) => this.queue.feed(this.parser, chunk),
                Some(Err(e)) => {
                    // Not a normal end: no `finish` (see the type's docs).
                    *this.terminated = true;
                    return Poll::Ready(Some(Err(StreamError::Transport(e))));
                }
                None => {
                    *this.terminated = true;
                    // Does nothing if the parser was finished by hand.
                    this.queue.finish(this.parser);
                }
            }
            silent_chunks += 1;
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let queued = self.queue.len();
        if self.terminated {
            (queued, Some(queued))
        } else {
            (queued, None)
        }
    }
}

/// Chunks that complete no event consumed in one poll, at most, before the
/// stream yields to the executor (and wakes itself): an inner stream that
/// always has a chunk ready must not starve the other tasks of its thread.
const SILENT_CHUNK_BUDGET: usize = 32;

/// Events whose room the queue keeps between chunks. A token-sized chunk
/// makes one to a few events; a chunk that made more leaves a larger
/// allocation, given back before the next chunk is fed.
const RETAINED_CAPACITY: usize = 64;

/// The queue of an [`EventStream`] that yields owned [`Event`]s (the
/// default).
#[derive(Debug, Default)]
pub struct OwnedEvents(VecDeque<Event>);

impl Queue for OwnedEvents {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn trim(&mut self, keep: usize) {
        if self.0.capacity() > keep {
            self.0.shrink_to(keep);
        }
    }
}

impl<B: AsRef<[u8]>> Decode<B> for OwnedEvents {
    type Item = Event;

    fn feed(&mut self, parser: &mut Parser, chunk: B) {
        parser.feed_with(chunk.as_ref(), &mut QueueSink(&mut self.0));
    }

    fn finish(&mut self, parser: &mut Parser) {
        parser.finish_with(&mut QueueSink(&mut self.0));
    }

    fn pop(&mut self) -> Option<Event> {
        self.0.pop_front()
    }
}

/// The parser's sink: owned events appended to the queue, a delta that
/// continues the last event merged into it (as the `Vec<Event>` sink does),
/// so a chunk gives the same events as [`Parser::feed`].
struct QueueSink<'a>(&'a mut VecDeque<Event>);

impl Sink for QueueSink<'_> {
    fn event(&mut self, event: EventRef<'_>) {
        match (self.0.back_mut(), event) {
            (Some(Event::Text { delta }), EventRef::Text(t))
            | (Some(Event::Reasoning { delta }), EventRef::Reasoning(t)) => delta.push_str(t),
            (
                Some(Event::ToolCallArgs { index: i, delta }),
                EventRef::ToolCallArgs { index, delta: d },
            ) if *i == index => delta.push_str(d),
            (_, EventRef::Text(t)) => self.0.push_back(Event::Text { delta: t.into() }),
            (_, e) => self.0.push_back(e.to_owned()),
        }
    }
}

impl<S, B, E, D> FusedStream for EventStream<S, D>
where
    S: Stream<Item = Result<B, E>>,
    D: Decode<B>,
{
    fn is_terminated(&self) -> bool {
        self.terminated && self.queue.len() == 0
    }
}

impl<S: fmt::Debug, D: Queue> fmt::Debug for EventStream<S, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventStream")
            .field("inner", &self.inner)
            .field("queued_events", &self.queue.len())
            .field("terminated", &self.terminated)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use toolscan_core::FinishReason;

    /// A stream of chunks that counts how often it is polled.
    struct Counted<S> {
        inner: S,
        polls: Arc<AtomicUsize>,
    }

    impl<S: Stream + Unpin> Stream for Counted<S> {
        type Item = S::Item;
        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
            self.polls.fetch_add(1, Ordering::SeqCst);
            Pin::new(&mut self.inner).poll_next(cx)
        }
    }

    fn text(s: &str) -> Event {
        Event::Text { delta: s.into() }
    }

    fn parser() -> Parser {
        Parser::for_format("hermes").expect("hermes is built in")
    }

    #[test]
    fn queued_events_are_yielded_without_polling_the_inner_stream() {
        let polls = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = futures::channel::mpsc::unbounded::<Result<&'static [u8], ()>>();
        let inner = Counted {
            inner: rx,
            polls: polls.clone(),
        };
        let mut stream = EventStream::new(inner, parser());
        stream.queue.0.extend([text("a"), text("b"), text("c")]);
        assert_eq!(stream.size_hint(), (3, None));
        let mut task = tokio_test::task::spawn(stream);
        for expected in ["a", "b", "c"] {
            tokio_test::assert_ready_eq!(task.poll_next(), Some(Ok(text(expected))));
        }
        assert_eq!(polls.load(Ordering::SeqCst), 0);
        tokio_test::assert_pending!(task.poll_next());
        assert_eq!(polls.load(Ordering::SeqCst), 1);
        drop(tx);
    }

    #[test]
    fn queued_events_come_out_before_the_end() {
        let chunks = futures::stream::iter(Vec::<Result<Vec<u8>, ()>>::new());
        let mut stream = EventStream::new(chunks, parser());
        stream.queue.0.push_back(text("left over"));
        let mut task = tokio_test::task::spawn(stream);
        tokio_test::assert_ready_eq!(task.poll_next(), Some(Ok(text("left over"))));
        match tokio_test::assert_ready!(task.poll_next()) {
            Some(Ok(Event::Done { .. })) => {}
            other => panic!("expected Done, got {other:?}"),
        }
        assert!(task.is_terminated());
        assert_eq!(task.size_hint(), (0, Some(0)));
        tokio_test::assert_ready_eq!(task.poll_next(), None);
    }

    #[test]
    fn into_parts_keeps_queued_events() {
        let mut stream =
            EventStream::new(futures::stream::empty::<Result<Vec<u8>, ()>>(), parser());
        let done = Event::Done {
            finish_reason: FinishReason::Stop,
        };
        stream.queue.0.extend([text("x"), done.clone()]);
        assert_eq!(stream.queued_events(), 2);
        let (_inner, _parser, queued) = stream.into_parts();
        assert_eq!(queued, vec![text("x"), done]);
    }

    #[test]
    fn debug_shows_the_inner_stream_and_state() {
        let stream = EventStream::new(futures::stream::empty::<Result<Vec<u8>, ()>>(), parser());
        let debug = format!("{stream:?}");
        assert!(debug.starts_with("EventStream {"), "{debug}");
        assert!(debug.contains("queued_events: 0"), "{debug}");
        assert!(debug.contains("terminated: false"), "{debug}");
    }
}
