//! The streaming parser (placeholder body while the engine lands).

use crate::error::Error;
use crate::event::{Event, FinishReason};
use crate::options::Options;

/// A streaming tool-call parser for one response.
pub struct Parser {
    done: bool,
    _options: Options,
}

impl Parser {
    /// A parser for a compiled grammar.
    pub fn new(grammar: std::sync::Arc<crate::Grammar>, options: Options) -> Parser {
        let _ = grammar;
        Parser { done: false, _options: options }
    }

    /// A parser for a built-in format name (or `auto`).
    pub fn for_format(name: &str) -> Result<Parser, Error> {
        let _ = name;
        Ok(Parser { done: false, _options: Options::default() })
    }

    /// Feeds the next chunk; returns the events it completes.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Event> {
        let mut out = Vec::new();
        self.feed_into(chunk, &mut out);
        out
    }

    /// Feeds the next chunk, appending events to `out`.
    pub fn feed_into(&mut self, chunk: &[u8], out: &mut Vec<Event>) {
        if !self.done && !chunk.is_empty() {
            out.push(Event::Text { delta: String::from_utf8_lossy(chunk).into_owned() });
        }
    }

    /// Ends the stream; returns the remaining events, `done` last.
    pub fn finish(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        self.finish_into(&mut out);
        out
    }

    /// Ends the stream, appending the remaining events to `out`.
    pub fn finish_into(&mut self, out: &mut Vec<Event>) {
        if !self.done {
            self.done = true;
            out.push(Event::Done { finish_reason: FinishReason::Stop });
        }
    }
}
