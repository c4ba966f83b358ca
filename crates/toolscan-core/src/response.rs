//! Collecting events into the final response object (`--output final`), and
//! the one-shot [`parse`](crate::parse) built on it.

use serde::Serialize;

use crate::event::{Arguments, Diagnostic, Event, EventRef, FinishReason};
use crate::sink::Sink;

/// One completed call of a [`Response`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolCall {
    /// The call id.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments object.
    pub arguments: Arguments,
    /// The diagnostics about this call sent between its `tool_call_start`
    /// and its `tool_call_end`: those of the schema check
    /// ([`Options::check_calls`](crate::Options::check_calls)). They are
    /// in [`Response::diagnostics`] too. Serialised only when there are
    /// some.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<Diagnostic>,
}

/// A whole response: what collecting every event of a stream gives.
///
/// Serialises to the object `toolscan parse --output final` prints:
/// `{"text", "tool_calls", "diagnostics", "finish_reason"}` (plus
/// `"reasoning"` when reasoning separation produced any).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Response {
    /// All text deltas, concatenated.
    pub text: String,
    /// All reasoning deltas, concatenated (reasoning separation only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// The completed calls, in index order.
    pub tool_calls: Vec<ToolCall>,
    /// Every diagnostic, in order.
    pub diagnostics: Vec<Diagnostic>,
    /// From the `done` event (`stop` if there was none).
    pub finish_reason: FinishReason,
    /// While a call is open (after its `tool_call_start`): how many
    /// diagnostics there were before it.
    #[serde(skip)]
    open_call: Option<usize>,
}

impl Default for Response {
    fn default() -> Self {
        Response {
            text: String::new(),
            reasoning: None,
            tool_calls: Vec::new(),
            diagnostics: Vec::new(),
            finish_reason: FinishReason::Stop,
            open_call: None,
        }
    }
}

impl Response {
    /// Folds one event in.
    pub fn push(&mut self, event: &Event) {
        self.event(event.as_ref());
    }

    /// Collects a sequence of events.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Event>) -> Response {
        let mut r = Response::default();
        for e in events {
            r.push(e);
        }
        r
    }
}

/// A response is a sink: it folds in every event it receives.
impl Sink for Response {
    fn event(&mut self, event: EventRef<'_>) {
        match event {
            EventRef::Text(t) => self.text.push_str(t),
            EventRef::Reasoning(t) => self.reasoning.get_or_insert_with(String::new).push_str(t),
            EventRef::ToolCallEnd {
                id,
                name,
                arguments,
                ..
            } => {
                let from = self.open_call.take().unwrap_or(self.diagnostics.len());
                self.tool_calls.push(ToolCall {
                    id: id.into(),
                    name: name.into(),
                    arguments: Arguments::from_validated(arguments.into()),
                    diagnostics: self.diagnostics.get(from..).unwrap_or_default().to_vec(),
                })
            }
            EventRef::ToolCallStart { .. } => self.open_call = Some(self.diagnostics.len()),
            EventRef::Diagnostic(d) => self.diagnostics.push(d.clone()),
            EventRef::Done { finish_reason } => self.finish_reason = finish_reason,
            EventRef::ToolCallArgs { .. } => {}
        }
    }
}

/// Merges consecutive `text` deltas, consecutive `reasoning` deltas and
/// consecutive `tool_call_args` deltas of the same index: the form in which
/// chunking invariance is stated: any split of the input gives the same
/// coalesced events.
pub fn coalesce(events: impl IntoIterator<Item = Event>) -> Vec<Event> {
    let mut out: Vec<Event> = Vec::new();
    for e in events {
        match (out.last_mut(), e) {
            (Some(Event::Text { delta: a }), Event::Text { delta: b }) => a.push_str(&b),
            (Some(Event::Reasoning { delta: a }), Event::Reasoning { delta: b }) => a.push_str(&b),
            (
                Some(Event::ToolCallArgs { index: i, delta: a }),
                Event::ToolCallArgs { index: j, delta: b },
            ) if *i == j => a.push_str(&b),
            (_, e) => out.push(e),
        }
    }
    out
}
