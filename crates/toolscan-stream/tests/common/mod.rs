//! Helpers shared by the integration tests (each test binary uses a subset).
#![allow(dead_code)]

use std::error::Error;
use std::fmt;

use toolscan_core::{Event, IdMint, Options, Parser, Registry};

/// A Hermes response: text, then one complete tool call.
pub const INPUT: &str = "Hi <tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>";

/// A Hermes parser with seeded call ids, so that two parsers given the same
/// input give equal events (the default mints ids from a random seed).
pub fn seeded_parser() -> Parser {
    let grammar = Registry::builtin()
        .grammar("hermes")
        .expect("hermes is built in");
    Parser::new(grammar, Options::new().with_ids(IdMint::Seeded(7)))
}

/// The events of feeding `chunks` to `parser` directly, then finishing it.
pub fn direct<'a>(mut parser: Parser, chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<Event> {
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(parser.feed(chunk));
    }
    events.extend(parser.finish());
    events
}

/// The concatenation of every text delta.
pub fn text_of(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Text { delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}

/// Asserts that `Done` is the last event and the only one.
pub fn assert_done_last(events: &[Event]) {
    assert!(
        matches!(events.last(), Some(Event::Done { .. })),
        "Done is not last: {events:?}"
    );
    let dones = events
        .iter()
        .filter(|e| matches!(e, Event::Done { .. }))
        .count();
    assert_eq!(dones, 1, "more than one Done: {events:?}");
}

/// The event with its call id blanked (ids minted from a random seed differ
/// between parsers).
pub fn without_id(event: Event) -> Event {
    match event {
        Event::ToolCallStart { index, name, .. } => Event::ToolCallStart {
            index,
            id: String::new(),
            name,
        },
        Event::ToolCallEnd {
            index,
            name,
            arguments,
            ..
        } => Event::ToolCallEnd {
            index,
            id: String::new(),
            name,
            arguments,
        },
        other => other,
    }
}

/// A transport error that compares equal to itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Boom(pub &'static str);

impl fmt::Display for Boom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl Error for Boom {}
