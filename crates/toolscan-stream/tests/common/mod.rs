//! Helpers shared by the adapter's integration tests (each test binary uses
//! a subset). Chunk plans, feeding a parser directly and the event-contract
//! checks come from the workspace's test kit, `toolscan_testkit`.
#![allow(dead_code)]

use std::error::Error;
use std::fmt;

use toolscan_core::{Event, Parser};
use toolscan_testkit::chunk::{self, Api, Plan};

/// A Hermes response: text, then one complete tool call.
pub const INPUT: &str = "Hi <tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>";

/// A Hermes parser with seeded call ids, so that two parsers given the same
/// input give equal events (the default mints ids from a random seed).
pub fn seeded_parser() -> Parser {
    chunk::seeded("hermes")
}

/// The events of feeding `input`, cut by `plan`, to `parser` directly with
/// `Parser::feed` (as the adapter does: one `Vec` a chunk), then finishing
/// it.
pub fn direct(parser: Parser, input: &str, plan: &Plan) -> Vec<Event> {
    chunk::feed(parser, Api::Feed, input.as_bytes(), plan)
}

/// Checks the event contract on the events of a whole run (`finish`
/// included): `done` last and once, calls well formed.
pub fn assert_contract(events: &[Event]) {
    if let Err(e) = toolscan_testkit::check::check_events(events) {
        panic!("{e}: {events:?}");
    }
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
