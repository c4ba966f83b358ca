//! The output items of a Responses event stream, written one at a time:
//! each item's added, delta, done events, and the items once closed.
//! The translator (`events.rs`) writes a chat answer's items with it; the
//! passthrough the items it parses out of an upstream's own message text.

use std::borrow::Cow;

use serde_json::{json, Map, Value};

use super::event::Event;
use super::ids::mint;
use super::items;

/// The output item being written.
#[derive(Debug)]
enum Open {
    Reasoning {
        id: String,
        text: String,
    },
    Message {
        id: String,
        text: String,
    },
    Call {
        id: String,
        call_id: String,
        name: String,
        arguments: String,
        /// Its chat `tool_calls` index (argument deltas name it).
        index: u64,
    },
}

/// The events of a stream's output items, and the items once closed.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    /// The next event's `sequence_number`.
    sequence: u64,
    /// The closed output items, in order; the open one's `output_index` is
    /// their count.
    output: Vec<Value>,
    open: Option<Open>,
}

impl Writer {
    /// The output items closed so far.
    pub(crate) fn output(&self) -> &[Value] {
        &self.output
    }

    /// Adds an item closed elsewhere (written by the upstream itself) at
    /// the next `output_index`; the open item must have been closed.
    pub(crate) fn push(&mut self, item: Value) {
        self.output.push(item);
    }

    /// Ends the open item, if any, as `incomplete` without its done events
    /// (the stream failed).
    pub(crate) fn abandon(&mut self) {
        if let Some(open) = self.open.take() {
            self.output.push(item_of(&open, "incomplete"));
        }
    }

    /// A chat `delta`'s pieces, in order: `reasoning_content` (or
    /// `reasoning`), `content`, each `tool_calls` entry.
    pub(crate) fn delta(&mut self, delta: &Map<String, Value>, out: &mut Vec<Event>) {
        let text = |k: &str| {
            delta
                .get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        if let Some(r) = text("reasoning_content").or_else(|| text("reasoning")) {
            self.reasoning(r, out);
        }
        if let Some(t) = text("content") {
            self.text(t, out);
        }
        for entry in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.call_entry(entry, out);
        }
    }

    /// Writes one event: `fields` with its `type` and `sequence_number`.
    pub(crate) fn emit(&mut self, name: &'static str, fields: Value, out: &mut Vec<Event>) {
        let fields = match fields {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        self.pass(Cow::Borrowed(name), fields, out);
    }

    /// Writes event `name` (its other fields `fields`) with the next
    /// `sequence_number`.
    pub(crate) fn pass(
        &mut self,
        name: Cow<'static, str>,
        mut fields: Map<String, Value>,
        out: &mut Vec<Event>,
    ) {
        fields.insert("type".into(), name.as_ref().into());
        fields.insert("sequence_number".into(), self.sequence.into());
        self.sequence += 1;
        out.push(Event {
            name,
            data: Value::Object(fields),
        });
    }

    /// The open item's `output_index`.
    pub(crate) fn index(&self) -> usize {
        self.output.len()
    }

    /// More reasoning text: in the open reasoning item, or a new one.
    pub(crate) fn reasoning(&mut self, delta: &str, out: &mut Vec<Event>) {
        if !matches!(self.open, Some(Open::Reasoning { .. })) {
            self.close("completed", out);
            let id = mint("rs");
            let index = self.index();
            let item = items::reasoning(&id, None, "in_progress");
            self.emit(
                "response.output_item.added",
                json!({"output_index": index, "item": item}),
                out,
            );
            self.emit(
                "response.content_part.added",
                json!({"item_id": id, "output_index": index, "content_index": 0,
                    "part": items::reasoning_part("")}),
                out,
            );
            self.open = Some(Open::Reasoning {
                id,
                text: String::new(),
            });
        }
        let index = self.index();
        if let Some(Open::Reasoning { id, text }) = &mut self.open {
            text.push_str(delta);
            let id = id.clone();
            self.emit(
                "response.reasoning_text.delta",
                json!({"item_id": id, "output_index": index, "content_index": 0, "delta": delta}),
                out,
            );
        }
    }

    /// More answer text: in the open message item, or a new one.
    pub(crate) fn text(&mut self, delta: &str, out: &mut Vec<Event>) {
        if !matches!(self.open, Some(Open::Message { .. })) {
            self.close("completed", out);
            let id = mint("msg");
            let index = self.index();
            let item = items::message(&id, Vec::new(), "in_progress");
            self.emit(
                "response.output_item.added",
                json!({"output_index": index, "item": item}),
                out,
            );
            self.emit(
                "response.content_part.added",
                json!({"item_id": id, "output_index": index, "content_index": 0,
                    "part": items::output_text("")}),
                out,
            );
            self.open = Some(Open::Message {
                id,
                text: String::new(),
            });
        }
        let index = self.index();
        if let Some(Open::Message { id, text }) = &mut self.open {
            text.push_str(delta);
            let id = id.clone();
            self.emit(
                "response.output_text.delta",
                json!({"item_id": id, "output_index": index, "content_index": 0,
                    "delta": delta, "logprobs": []}),
                out,
            );
        }
    }

    /// One `delta.tool_calls` entry: with an `id`, a new call (closed at
    /// once when its arguments are already a whole JSON object); without,
    /// more arguments of the open call of its `index`.
    pub(crate) fn call_entry(&mut self, entry: &Value, out: &mut Vec<Event>) {
        let index = entry.get("index").and_then(Value::as_u64).unwrap_or(0);
        let field = |p: &str| entry.pointer(p).and_then(Value::as_str);
        let arguments = field("/function/arguments").unwrap_or_default();
        match field("/id").filter(|id| !id.is_empty()) {
            Some(call_id) => {
                self.close("completed", out);
                let id = mint("fc");
                let name = field("/function/name").unwrap_or_default().to_owned();
                let output_index = self.index();
                let item = items::function_call(&id, call_id, &name, "", "in_progress");
                self.emit(
                    "response.output_item.added",
                    json!({"output_index": output_index, "item": item}),
                    out,
                );
                self.open = Some(Open::Call {
                    id,
                    call_id: call_id.to_owned(),
                    name,
                    arguments: String::new(),
                    index,
                });
                self.arguments(arguments, out);
                // A whole JSON object: nothing can follow it.
                if matches!(serde_json::from_str(arguments), Ok(Value::Object(_))) {
                    self.close("completed", out);
                }
            }
            None => match &self.open {
                Some(Open::Call { index: open, .. }) if *open == index => {
                    self.arguments(arguments, out);
                }
                _ if arguments.is_empty() => {}
                _ => tracing::warn!(
                    index,
                    "responses: arguments for a call that is not open; dropped"
                ),
            },
        }
    }

    /// More arguments of the open call.
    fn arguments(&mut self, delta: &str, out: &mut Vec<Event>) {
        if delta.is_empty() {
            return;
        }
        let index = self.index();
        if let Some(Open::Call { id, arguments, .. }) = &mut self.open {
            arguments.push_str(delta);
            let id = id.clone();
            self.emit(
                "response.function_call_arguments.delta",
                json!({"item_id": id, "output_index": index, "delta": delta}),
                out,
            );
        }
    }

    /// Closes the open item, if any, with its done events and `status`
    /// (`completed`; `incomplete` when the answer was cut).
    pub(crate) fn close(&mut self, status: &str, out: &mut Vec<Event>) {
        let Some(open) = self.open.take() else {
            return;
        };
        let index = self.index();
        match &open {
            Open::Reasoning { id, text } => {
                self.emit(
                    "response.reasoning_text.done",
                    json!({"item_id": id, "output_index": index, "content_index": 0, "text": text}),
                    out,
                );
                self.emit(
                    "response.content_part.done",
                    json!({"item_id": id, "output_index": index, "content_index": 0,
                        "part": items::reasoning_part(text)}),
                    out,
                );
            }
            Open::Message { id, text } => {
                self.emit(
                    "response.output_text.done",
                    json!({"item_id": id, "output_index": index, "content_index": 0,
                        "text": text, "logprobs": []}),
                    out,
                );
                self.emit(
                    "response.content_part.done",
                    json!({"item_id": id, "output_index": index, "content_index": 0,
                        "part": items::output_text(text)}),
                    out,
                );
            }
            Open::Call { id, arguments, .. } => {
                self.emit(
                    "response.function_call_arguments.done",
                    json!({"item_id": id, "output_index": index, "arguments": arguments}),
                    out,
                );
            }
        }
        let item = item_of(&open, status);
        self.emit(
            "response.output_item.done",
            json!({"output_index": index, "item": item.clone()}),
            out,
        );
        self.output.push(item);
    }
}

/// The item `open` is, with `status`.
fn item_of(open: &Open, status: &str) -> Value {
    match open {
        Open::Reasoning { id, text } => items::reasoning(id, Some(text), status),
        Open::Message { id, text } => items::message(id, vec![items::output_text(text)], status),
        Open::Call {
            id,
            call_id,
            name,
            arguments,
            ..
        } => items::function_call(id, call_id, name, arguments, status),
    }
}
