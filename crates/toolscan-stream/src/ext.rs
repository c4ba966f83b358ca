//! The extension trait that turns a stream of chunks into an
//! [`EventStream`].

use futures_core::Stream;
use toolscan_core::Parser;

use crate::bytes_events::ByteEvents;
use crate::event_stream::EventStream;

/// Adds [`tool_events`](EventStreamExt::tool_events) to every stream of
/// `Result<B, E>` chunks where `B: AsRef<[u8]>` (`bytes::Bytes`, `Vec<u8>`,
/// `&[u8]`, `String`, …).
///
/// ```
/// use futures::{executor::block_on, stream, StreamExt};
/// use toolscan_core::{Event, Parser};
/// use toolscan_stream::EventStreamExt;
///
/// let chunks = stream::iter([Ok::<_, std::io::Error>("Hello, "), Ok("world")]);
/// let mut events = chunks.tool_events(Parser::for_format("hermes").unwrap());
/// let last = block_on(async {
///     let mut last = None;
///     while let Some(event) = events.next().await {
///         last = Some(event.unwrap());
///     }
///     last
/// });
/// assert!(matches!(last, Some(Event::Done { .. })));
/// ```
pub trait EventStreamExt: Stream {
    /// Parses this stream of chunks with `parser`: see [`EventStream`].
    fn tool_events(self, parser: Parser) -> EventStream<Self>
    where
        Self: Sized,
    {
        EventStream::new(self, parser)
    }

    /// Parses this stream of [`Bytes`](bytes::Bytes) chunks with
    /// `parser`, yielding [`ByteEvent`](crate::ByteEvent)s whose deltas
    /// are slices of the chunks (no copy where the parser read a delta
    /// straight from one chunk).
    fn tool_byte_events(self, parser: Parser) -> EventStream<Self, ByteEvents>
    where
        Self: Sized,
    {
        EventStream::from_bytes(self, parser)
    }
}

impl<S, B, E> EventStreamExt for S
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
}
