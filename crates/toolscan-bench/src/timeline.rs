//! What happened to one request, as it happened: the moments, in
//! microseconds since the request was sent, that the client (`client.rs`)
//! and the call detection (`detect.rs`) write down. Its finished,
//! serialisable form is a request's record (`record.rs`).

use serde::{Deserialize, Serialize};

use crate::error::RequestError;

/// Microseconds since the request was sent.
pub type Micros = u64;

/// How a call reached the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallKind {
    /// Written as text in `delta.content` and read by toolscan: ready is
    /// the moment toolscan emitted the call's end (`tool_call_end`).
    Text,
    /// Sent by the server as `delta.tool_calls`: ready is the moment the
    /// server sent the call's last argument delta (known only once the
    /// stream has moved past it).
    Native,
}

impl CallKind {
    /// The JSON name: `text` or `native`.
    pub fn name(self) -> &'static str {
        match self {
            CallKind::Text => "text",
            CallKind::Native => "native",
        }
    }
}

/// One call's moments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallTiming {
    /// Its place among the request's calls of its kind (from 0: toolscan's
    /// call index, or `delta.tool_calls[].index`).
    pub index: usize,
    /// Text or native.
    pub kind: CallKind,
    /// The tool's name (empty until known).
    pub name: String,
    /// When the call began: toolscan's `tool_call_start`, or the first
    /// `delta.tool_calls` entry of its index.
    pub start: Micros,
    /// When it was whole and could be dispatched (see [`CallKind`]);
    /// `None` for a text call that never closed.
    pub ready: Option<Micros>,
}

/// One request's moments, as recorded.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// The HTTP status, once the answer began.
    pub status: Option<u16>,
    /// The first byte of the answer's body.
    pub first_byte: Option<Micros>,
    /// Each chunk that carried generated tokens (content, reasoning or a
    /// tool-call delta), in order; the first is the TTFT.
    pub tokens: Vec<Micros>,
    /// The calls, in the order they began.
    pub calls: Vec<CallTiming>,
    /// The chunk with the first `finish_reason`.
    pub finish: Option<Micros>,
    /// That `finish_reason`.
    pub finish_reason: Option<String>,
    /// `data: [DONE]`, or the end of the body when the stream ended
    /// cleanly without it (then [`Timeline::done_marker`] is false).
    pub done: Option<Micros>,
    /// Whether the server sent `[DONE]`.
    pub done_marker: bool,
    /// `usage.completion_tokens`, when the server sent usage.
    pub completion_tokens: Option<u64>,
    /// Why the request failed, if it did.
    pub error: Option<RequestError>,
}

impl Timeline {
    /// Time to first token: the first chunk with generated tokens.
    pub fn ttft(&self) -> Option<Micros> {
        self.tokens.first().copied()
    }
}
