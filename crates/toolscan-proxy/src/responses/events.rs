//! A streamed Chat Completions answer (its chunks, already rewritten:
//! text calls are `delta.tool_calls`, reasoning is
//! `delta.reasoning_content`) as the Responses event stream.
//!
//! [`EventStream`] is fed the chunks one by one and told when the
//! upstream ended (or failed); it writes the events of the Responses
//! grammar with increasing `sequence_number`s:
//!
//! ```text
//! response.created, response.in_progress
//! for each output item, in order:
//!   response.output_item.added
//!   reasoning: content_part.added, reasoning_text.delta…, reasoning_text.done, content_part.done
//!   message:   content_part.added, output_text.delta…, output_text.done, content_part.done
//!   call:      function_call_arguments.delta…, function_call_arguments.done
//!   response.output_item.done
//! response.completed | response.incomplete | response.failed
//! ```
//!
//! One item is open at a time: a piece of another kind (text after
//! reasoning, a new call after text…) closes it and opens the next. A
//! call's entry that brings complete JSON arguments (the rewrite's
//! default: a call's one entry arrives whole at its end) is closed at
//! once; a call whose arguments come in pieces (live arguments, or an
//! upstream's own streamed calls) stays open for its argument deltas
//! until anything else comes.

use serde_json::{json, Map, Value};

use super::echo::{self, Echo};
use super::ids::{mint, Ids};
use super::{items, usage};

/// One Responses stream event: its name (its `type`) and its JSON, which
/// carries `type` and `sequence_number`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Event {
    /// The event's `type`, also its SSE `event:` name.
    pub(crate) name: &'static str,
    /// The event object.
    pub(crate) data: Value,
}

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

/// The translation of one streamed answer into Responses events.
#[derive(Debug)]
pub(crate) struct EventStream {
    echo: Echo,
    ids: Ids,
    /// The next event's `sequence_number`.
    sequence: u64,
    /// `response.created` and `response.in_progress` were written.
    started: bool,
    /// The final event was written: nothing more is.
    ended: bool,
    /// The closed output items, in order; the open one's `output_index` is
    /// their count.
    output: Vec<Value>,
    open: Option<Open>,
    /// The choice's `finish_reason`, once it came.
    finish_reason: Option<String>,
    /// The answer's usage, mapped, once it came.
    usage: Option<Value>,
}

impl EventStream {
    /// The events of the answer to the request `echo` repeats, as
    /// response `ids`.
    pub(crate) fn new(echo: Echo, ids: Ids) -> EventStream {
        EventStream {
            echo,
            ids,
            sequence: 0,
            started: false,
            ended: false,
            output: Vec::new(),
            open: None,
            finish_reason: None,
            usage: None,
        }
    }

    /// The response's id.
    pub(crate) fn response_id(&self) -> &str {
        &self.ids.response
    }

    /// The output items closed so far (all of them once the stream ended),
    /// to keep for `previous_response_id`.
    pub(crate) fn output(&self) -> &[Value] {
        &self.output
    }

    /// Whether the final event was written.
    pub(crate) fn ended(&self) -> bool {
        self.ended
    }

    /// Feeds one chunk's JSON text (an SSE event's `data`). `[DONE]` and
    /// text that is not JSON are ignored (the end comes with
    /// [`end`](EventStream::end)).
    pub(crate) fn chunk_json(&mut self, data: &str, out: &mut Vec<Event>) {
        if data.trim() == "[DONE]" {
            return;
        }
        match serde_json::from_str::<Value>(data) {
            Ok(chunk) => self.chunk(&chunk, out),
            Err(e) => tracing::warn!(error = %e, "responses: a chunk is not JSON; ignored"),
        }
    }

    /// Feeds one chunk: an error object fails the response; otherwise its
    /// first choice's `delta` (`reasoning_content` or `reasoning`,
    /// `content`, `tool_calls`, in that order), its `finish_reason` and
    /// the chunk's `usage` are read. Other choices are ignored (the
    /// Responses API has no `n`).
    pub(crate) fn chunk(&mut self, chunk: &Value, out: &mut Vec<Event>) {
        if self.ended {
            return;
        }
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_owned);
            self.fail(&message, out);
            return;
        }
        if !self.started {
            self.echo
                .with_model_fallback(chunk.get("model").and_then(Value::as_str));
            self.start(out);
        }
        if let Some(u) = chunk.get("usage").and_then(usage::from_chat) {
            self.usage = Some(u);
        }
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| {
                c.iter()
                    .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
            })
        else {
            return;
        };
        if let Some(delta) = choice.get("delta").and_then(Value::as_object) {
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
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_owned());
            self.close(out);
        }
    }

    /// The upstream ended (`[DONE]`, or the end of its body): the open item
    /// is closed and `response.completed` written (`response.incomplete`
    /// when the answer was cut by the token limit or a content filter),
    /// with every output item and the usage. A second call writes nothing.
    pub(crate) fn end(&mut self, out: &mut Vec<Event>) {
        if self.ended {
            return;
        }
        self.start(out);
        self.close(out);
        self.ended = true;
        let mut response = self
            .echo
            .response(&self.ids, "completed", self.output.clone());
        echo::finish(&mut response, self.finish_reason.as_deref(), echo::now());
        response["usage"] = self.usage.clone().unwrap_or(Value::Null);
        let name = if response["status"] == "completed" {
            "response.completed"
        } else {
            "response.incomplete"
        };
        self.emit(name, json!({"response": response}), out);
    }

    /// The upstream failed mid-stream (`message` says how): the open item
    /// ends `incomplete`, without its done events, and `response.failed`
    /// is written with the error. A second call, or one after the end,
    /// writes nothing.
    pub(crate) fn fail(&mut self, message: &str, out: &mut Vec<Event>) {
        if self.ended {
            return;
        }
        self.start(out);
        if let Some(open) = self.open.take() {
            self.output.push(item_of(&open, "incomplete"));
        }
        self.ended = true;
        let mut response = self.echo.response(&self.ids, "failed", self.output.clone());
        response["error"] = json!({"code": "server_error", "message": message});
        response["usage"] = self.usage.clone().unwrap_or(Value::Null);
        self.emit("response.failed", json!({"response": response}), out);
    }

    /// Writes `response.created` and `response.in_progress`, once.
    fn start(&mut self, out: &mut Vec<Event>) {
        if std::mem::replace(&mut self.started, true) {
            return;
        }
        let response = self.echo.response(&self.ids, "in_progress", Vec::new());
        self.emit(
            "response.created",
            json!({"response": response.clone()}),
            out,
        );
        self.emit("response.in_progress", json!({"response": response}), out);
    }

    /// Writes one event: `fields` with its `type` and `sequence_number`.
    fn emit(&mut self, name: &'static str, fields: Value, out: &mut Vec<Event>) {
        let mut data = match fields {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        data.insert("type".into(), name.into());
        data.insert("sequence_number".into(), self.sequence.into());
        self.sequence += 1;
        out.push(Event {
            name,
            data: Value::Object(data),
        });
    }

    /// The open item's `output_index`.
    fn index(&self) -> usize {
        self.output.len()
    }

    fn reasoning(&mut self, delta: &str, out: &mut Vec<Event>) {
        if !matches!(self.open, Some(Open::Reasoning { .. })) {
            self.close(out);
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

    fn text(&mut self, delta: &str, out: &mut Vec<Event>) {
        if !matches!(self.open, Some(Open::Message { .. })) {
            self.close(out);
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
    /// once when its arguments are already complete JSON); without, more
    /// arguments of the open call of its `index`.
    fn call_entry(&mut self, entry: &Value, out: &mut Vec<Event>) {
        let index = entry.get("index").and_then(Value::as_u64).unwrap_or(0);
        let field = |p: &str| entry.pointer(p).and_then(Value::as_str);
        let arguments = field("/function/arguments").unwrap_or_default();
        match field("/id").filter(|id| !id.is_empty()) {
            Some(call_id) => {
                self.close(out);
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
                if serde_json::from_str::<Value>(arguments).is_ok() {
                    self.close(out);
                }
            }
            None => match &self.open {
                Some(Open::Call { index: open, .. }) if *open == index => {
                    self.arguments(arguments, out);
                }
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

    /// Closes the open item, if any, with its done events. Its status is
    /// `incomplete` when the answer was cut by the token limit.
    fn close(&mut self, out: &mut Vec<Event>) {
        let Some(open) = self.open.take() else {
            return;
        };
        let status = match self.finish_reason.as_deref() {
            Some("length" | "content_filter") => "incomplete",
            _ => "completed",
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

#[cfg(test)]
mod tests {
    use super::*;

    fn stream() -> EventStream {
        let echo = Echo::new(&json!({"model": "m", "input": "x"}));
        EventStream::new(
            echo,
            Ids {
                response: "resp_t".into(),
                created_at: 1,
            },
        )
    }

    fn names(events: &[Event]) -> Vec<&'static str> {
        events.iter().map(|e| e.name).collect()
    }

    fn delta(delta: Value) -> Value {
        json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
    }

    fn finish(reason: &str) -> Value {
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
    }

    #[test]
    fn text_is_one_message_item_with_one_output_text_part() {
        let mut s = stream();
        let mut out = Vec::new();
        s.chunk(
            &delta(json!({"role": "assistant", "content": ""})),
            &mut out,
        );
        s.chunk(&delta(json!({"content": "Hel"})), &mut out);
        s.chunk(&delta(json!({"content": "lo"})), &mut out);
        s.chunk(&finish("stop"), &mut out);
        s.end(&mut out);
        assert_eq!(
            names(&out),
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.completed",
            ]
        );
        let seq: Vec<_> = out
            .iter()
            .map(|e| e.data["sequence_number"].clone())
            .collect();
        assert_eq!(seq, (0..10).map(Value::from).collect::<Vec<_>>());
        assert_eq!(out[6].data["text"], "Hello");
        let done = &out[9].data["response"];
        assert_eq!(done["status"], "completed");
        assert_eq!(done["output"][0]["content"][0]["text"], "Hello");
        assert_eq!(out[2].data["item"]["id"], done["output"][0]["id"]);
        assert_eq!(out[4].data["item_id"], done["output"][0]["id"]);
    }

    #[test]
    fn a_whole_call_entry_gives_all_its_events_at_once() {
        let mut s = stream();
        let mut out = Vec::new();
        s.chunk(
            &delta(
                json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                "function": {"name": "get", "arguments": "{\"c\":\"Paris\"}"}}]}),
            ),
            &mut out,
        );
        assert_eq!(
            names(&out)[2..],
            [
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
            ]
        );
        assert_eq!(out[2].data["item"]["arguments"], "");
        assert_eq!(out[2].data["item"]["status"], "in_progress");
        assert_eq!(out[3].data["delta"], "{\"c\":\"Paris\"}");
        assert_eq!(out[4].data["arguments"], "{\"c\":\"Paris\"}");
        assert_eq!(out[5].data["item"]["call_id"], "call_a");
        assert_eq!(out[5].data["item"]["status"], "completed");
    }

    #[test]
    fn live_argument_deltas_stay_in_the_open_call_until_the_end() {
        let mut s = stream();
        let mut out = Vec::new();
        s.chunk(
            &delta(
                json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                "function": {"name": "get", "arguments": ""}}]}),
            ),
            &mut out,
        );
        for piece in ["{\"c\":", "\"Paris\"}"] {
            s.chunk(
                &delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})),
                &mut out,
            );
        }
        s.chunk(&finish("tool_calls"), &mut out);
        s.end(&mut out);
        assert_eq!(
            names(&out)[2..],
            [
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.completed",
            ]
        );
        assert_eq!(out[5].data["arguments"], "{\"c\":\"Paris\"}");
        assert_eq!(
            out[7].data["response"]["output"][0]["arguments"],
            "{\"c\":\"Paris\"}"
        );
    }

    #[test]
    fn reasoning_then_text_are_two_items() {
        let mut s = stream();
        let mut out = Vec::new();
        s.chunk(&delta(json!({"reasoning_content": "think"})), &mut out);
        s.chunk(&delta(json!({"content": "ok"})), &mut out);
        s.end(&mut out);
        assert_eq!(
            names(&out)[2..],
            [
                "response.output_item.added",
                "response.content_part.added",
                "response.reasoning_text.delta",
                "response.reasoning_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.completed",
            ]
        );
        let output = &out[14].data["response"]["output"];
        assert_eq!(output[0]["type"], "reasoning");
        assert_eq!(output[0]["content"][0]["text"], "think");
        assert_eq!(output[1]["type"], "message");
        assert_eq!(out[8].data["output_index"], 1);
    }

    #[test]
    fn length_ends_with_response_incomplete() {
        let mut s = stream();
        let mut out = Vec::new();
        s.chunk(&delta(json!({"content": "Once"})), &mut out);
        s.chunk(&finish("length"), &mut out);
        s.end(&mut out);
        let last = out.last().map(|e| e.data.clone()).unwrap_or_default();
        assert_eq!(last["type"], "response.incomplete");
        assert_eq!(last["response"]["status"], "incomplete");
        assert_eq!(
            last["response"]["incomplete_details"]["reason"],
            "max_output_tokens"
        );
        assert_eq!(last["response"]["output"][0]["status"], "incomplete");
    }

    #[test]
    fn an_upstream_error_mid_stream_fails_the_response() {
        let mut s = stream();
        let mut out = Vec::new();
        s.chunk(&delta(json!({"content": "Once"})), &mut out);
        s.chunk(
            &json!({"error": {"message": "upstream went away", "type": "upstream_error"}}),
            &mut out,
        );
        s.end(&mut out);
        let last = out.last().map(|e| e.data.clone()).unwrap_or_default();
        assert_eq!(last["type"], "response.failed");
        assert_eq!(last["response"]["status"], "failed");
        assert_eq!(last["response"]["error"]["message"], "upstream went away");
        assert_eq!(last["response"]["output"][0]["status"], "incomplete");
        assert_eq!(
            out.iter()
                .filter(|e| e.name.starts_with("response.failed"))
                .count(),
            1
        );
        assert!(!out.iter().any(|e| e.name == "response.completed"));
    }

    #[test]
    fn usage_of_the_usage_chunk_is_in_the_final_response() {
        let mut s = stream();
        let mut out = Vec::new();
        s.chunk_json(
            r#"{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}"#,
            &mut out,
        );
        s.chunk_json(
            r#"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}"#,
            &mut out,
        );
        s.chunk_json("[DONE]", &mut out);
        s.end(&mut out);
        let last = out.last().map(|e| e.data.clone()).unwrap_or_default();
        assert_eq!(last["response"]["usage"]["input_tokens"], 3);
        assert_eq!(last["response"]["usage"]["output_tokens"], 1);
        assert_eq!(last["response"]["usage"]["total_tokens"], 4);
        assert!(s.ended());
        assert_eq!(s.output().len(), 1);
    }

    #[test]
    fn an_empty_stream_still_has_its_lifecycle() {
        let mut s = stream();
        let mut out = Vec::new();
        s.end(&mut out);
        s.end(&mut out);
        assert_eq!(
            names(&out),
            [
                "response.created",
                "response.in_progress",
                "response.completed"
            ]
        );
    }
}
