//! Events whose deltas are [`Bytes`] slices of the chunks they came in:
//! what an HTTP client hands out (`reqwest`'s `bytes_stream`, hyper's
//! frames) goes on to the consumer without a copy.

use std::collections::VecDeque;

pub use bytes::Bytes;
use toolscan_core::{Event, EventRef, Parser, Sink};

use crate::queue::{Decode, Queue};

/// An event of an [`EventStream`](crate::EventStream) over [`Bytes`]
/// chunks ([`EventStreamExt::tool_byte_events`](crate::EventStreamExt::tool_byte_events)).
///
/// A text, reasoning or argument delta that the parser passes on straight
/// from one chunk is a slice of that chunk (`Bytes::slice`: a reference
/// count, no copy); one it assembled (a marker held back across chunks, an
/// escape decoded, a character cut between chunks — and, today, every
/// argument delta, which the parser builds in its own buffer) is copied
/// into a `Bytes` of its own. Deltas are UTF-8 ([`ByteEvent::delta_str`]).
/// Consecutive deltas are merged only when they are contiguous in one
/// chunk, so a consumer concatenates deltas as with [`Event`]s.
///
/// ```
/// use bytes::Bytes;
/// use futures::{executor::block_on, stream, StreamExt};
/// use toolscan_core::Parser;
/// use toolscan_stream::{ByteEvent, EventStreamExt};
///
/// let chunk = Bytes::from_static(b"Hello <tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>");
/// let chunks = stream::iter([Ok::<_, std::io::Error>(chunk.clone())]);
/// let events: Vec<ByteEvent> = block_on(
///     chunks.tool_byte_events(Parser::for_format("hermes").unwrap())
///         .map(Result::unwrap)
///         .collect(),
/// );
/// let ByteEvent::Text(text) = &events[0] else { panic!() };
/// assert_eq!(&text[..], b"Hello ");
/// // The same memory as the chunk: no copy.
/// assert_eq!(text.as_ptr(), chunk.as_ptr());
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ByteEvent {
    /// Text (UTF-8).
    Text(Bytes),
    /// Reasoning (UTF-8).
    Reasoning(Bytes),
    /// A piece of a call's arguments (UTF-8).
    ToolCallArgs {
        /// The call's index.
        index: usize,
        /// The piece.
        delta: Bytes,
    },
    /// Any other event, owned.
    Event(Event),
}

impl ByteEvent {
    /// The delta of a text, reasoning or argument event as text (checked:
    /// deltas are always UTF-8).
    pub fn delta_str(&self) -> Option<&str> {
        match self {
            ByteEvent::Text(b)
            | ByteEvent::Reasoning(b)
            | ByteEvent::ToolCallArgs { delta: b, .. } => std::str::from_utf8(b).ok(),
            ByteEvent::Event(_) => None,
        }
    }
}

/// The queue of an [`EventStream`](crate::EventStream) that yields
/// [`ByteEvent`]s.
#[derive(Debug, Default)]
pub struct ByteEvents(pub(crate) VecDeque<ByteEvent>);

impl Queue for ByteEvents {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn trim(&mut self, keep: usize) {
        if self.0.capacity() > keep {
            self.0.shrink_to(keep);
        }
    }
}

impl Decode<Bytes> for ByteEvents {
    type Item = ByteEvent;

    fn feed(&mut self, parser: &mut Parser, chunk: Bytes) {
        parser.feed_with(
            &chunk,
            &mut ByteSink {
                queue: &mut self.0,
                chunk: &chunk,
            },
        );
    }

    fn finish(&mut self, parser: &mut Parser) {
        let empty = Bytes::new();
        parser.finish_with(&mut ByteSink {
            queue: &mut self.0,
            chunk: &empty,
        });
    }

    fn pop(&mut self) -> Option<ByteEvent> {
        self.0.pop_front()
    }
}

/// The parser's sink for one chunk.
struct ByteSink<'a> {
    queue: &'a mut VecDeque<ByteEvent>,
    chunk: &'a Bytes,
}

impl ByteSink<'_> {
    /// Where `b` lies in the chunk, if it does.
    fn range(&self, b: &[u8]) -> Option<(usize, usize)> {
        let at = (b.as_ptr() as usize).checked_sub(self.chunk.as_ptr() as usize)?;
        (at + b.len() <= self.chunk.len()).then_some((at, at + b.len()))
    }

    /// `s` as `Bytes`: a slice of the chunk if it is one, else a copy; and
    /// `prev` extended instead when `s` follows it in the chunk.
    fn delta(&self, s: &str, prev: Option<&mut Bytes>) -> Option<Bytes> {
        let Some((from, to)) = self.range(s.as_bytes()) else {
            return Some(Bytes::copy_from_slice(s.as_bytes()));
        };
        if let Some(prev) = prev {
            if let Some((pf, pt)) = self.range(prev) {
                if pt == from {
                    *prev = self.chunk.slice(pf..to);
                    return None;
                }
            }
        }
        Some(self.chunk.slice(from..to))
    }
}

impl Sink for ByteSink<'_> {
    fn event(&mut self, event: EventRef<'_>) {
        let (kind, index, s) = match event {
            EventRef::Text(t) => (0, 0, t),
            EventRef::Reasoning(t) => (1, 0, t),
            EventRef::ToolCallArgs { index, delta } => (2, index, delta),
            e => {
                self.queue.push_back(ByteEvent::Event(e.to_owned()));
                return;
            }
        };
        if s.is_empty() {
            return;
        }
        let mut queue = std::mem::take(self.queue);
        let prev = match (queue.back_mut(), kind) {
            (Some(ByteEvent::Text(b)), 0) | (Some(ByteEvent::Reasoning(b)), 1) => Some(b),
            (Some(ByteEvent::ToolCallArgs { index: i, delta }), 2) if *i == index => Some(delta),
            _ => None,
        };
        if let Some(b) = self.delta(s, prev) {
            queue.push_back(match kind {
                0 => ByteEvent::Text(b),
                1 => ByteEvent::Reasoning(b),
                _ => ByteEvent::ToolCallArgs { index, delta: b },
            });
        }
        *self.queue = queue;
    }
}
