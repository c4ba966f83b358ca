//! What an [`EventStream`](crate::EventStream) keeps between chunks and
//! how it feeds the parser: sealed (the two queues of this crate are the
//! only ones), so that the stream's polling is written once for both.

use toolscan_core::Parser;

/// A queue of decoded events.
pub trait Queue {
    /// Events queued.
    fn len(&self) -> usize;
    /// Gives back the room of more than `keep` events.
    fn trim(&mut self, keep: usize);
}

/// How chunks of type `B` become the queue's items.
pub trait Decode<B>: Queue {
    /// What the stream yields.
    type Item;
    /// Feeds one chunk; its events are queued.
    fn feed(&mut self, parser: &mut Parser, chunk: B);
    /// Ends the parser; its last events are queued.
    fn finish(&mut self, parser: &mut Parser);
    /// The next item, if any.
    fn pop(&mut self) -> Option<Self::Item>;
}
