//! The events a [`Parser`](crate::Parser) emits, and how they serialise.
//!
//! Serialised with `serde_json`, every event is one JSON object with a `type`
//! field — exactly the JSON Lines the `toolscan parse` command writes
//! (contract §3):
//!
//! ```
//! use toolscan_core::Event;
//! let e = Event::ToolCallArgs { index: 0, delta: "{\"city\"".into() };
//! assert_eq!(
//!     serde_json::to_string(&e).unwrap(),
//!     r#"{"type":"tool_call_args","index":0,"delta":"{\"city\""}"#
//! );
//! ```

use serde::Serialize;
use serde_json::{Map, Value};

/// One event of the output stream, in input order.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// Content outside tool calls. Always valid UTF-8 cut at character
    /// boundaries.
    Text {
        /// The text.
        delta: String,
    },
    /// Content of a reasoning block (only with reasoning separation on).
    Reasoning {
        /// The reasoning text.
        delta: String,
    },
    /// A call began and its name is known. Sent once per `index`.
    ToolCallStart {
        /// 0-based ordinal of the call in this response.
        index: usize,
        /// The call id: taken from the text when the format carries one,
        /// minted otherwise.
        id: String,
        /// The tool name.
        name: String,
    },
    /// A piece of the call's arguments. The concatenation of all deltas of
    /// one index is exactly the final arguments JSON text.
    ToolCallArgs {
        /// The call's index.
        index: usize,
        /// The next piece of the arguments JSON text.
        delta: String,
    },
    /// The call is complete and may be dispatched now.
    ToolCallEnd {
        /// The call's index.
        index: usize,
        /// The call id (same as in [`Event::ToolCallStart`]).
        id: String,
        /// The tool name (same as in [`Event::ToolCallStart`]).
        name: String,
        /// The parsed arguments object (`{}` for a call without arguments).
        arguments: Map<String, Value>,
    },
    /// Something was not as the format says.
    Diagnostic(Diagnostic),
    /// The last event, emitted by [`Parser::finish`](crate::Parser::finish).
    Done {
        /// Why the response ended.
        finish_reason: FinishReason,
    },
}

/// Why a response ended, as OpenAI's `finish_reason`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// No call completed.
    Stop,
    /// At least one call completed and the stream did not end inside a call.
    ToolCalls,
    /// The stream ended inside a call (it was not dispatched).
    Length,
}

impl FinishReason {
    /// The OpenAI spelling: `stop`, `tool_calls` or `length`.
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::Length => "length",
        }
    }
}

/// A note that something was not as the format says, with the byte offset
/// in the input where it was found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// What kind of problem this is.
    pub kind: DiagnosticKind,
    /// Byte offset in the whole input (not in the chunk).
    pub offset: u64,
    /// A human-readable explanation.
    pub message: String,
}

/// The kinds of [`Diagnostic`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DiagnosticKind {
    /// A block that opened like a call did not parse; its bytes came back as
    /// text.
    Malformed,
    /// The stream ended inside a call; its bytes came back as text.
    Truncated,
    /// A configured limit (call size, nesting depth, hold-back) was hit.
    Limit,
    /// The call names a tool that is not in the `tools` list.
    UnknownTool,
}

impl DiagnosticKind {
    /// The snake_case name used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticKind::Malformed => "malformed",
            DiagnosticKind::Truncated => "truncated",
            DiagnosticKind::Limit => "limit",
            DiagnosticKind::UnknownTool => "unknown_tool",
        }
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} at byte {}: {}",
            self.kind.as_str(),
            self.offset,
            self.message
        )
    }
}
