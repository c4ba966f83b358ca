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

use serde_json::{json, Value};

use super::echo::{self, Echo};
pub(crate) use super::event::Event;
use super::ids::Ids;
use super::usage;
use super::writer::Writer;

/// The translation of one streamed answer into Responses events.
#[derive(Debug)]
pub(crate) struct EventStream {
    echo: Echo,
    ids: Ids,
    /// The output items and their events.
    writer: Writer,
    /// `response.created` and `response.in_progress` were written.
    started: bool,
    /// The final event was written: nothing more is.
    ended: bool,
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
            writer: Writer::default(),
            started: false,
            ended: false,
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
        self.writer.output()
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
            self.writer.delta(delta, out);
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_owned());
            let status = echo::item_status(Some(reason));
            self.writer.close(status, out);
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
        let status = echo::item_status(self.finish_reason.as_deref());
        self.writer.close(status, out);
        self.ended = true;
        let output = self.writer.output().to_vec();
        let mut response = self.echo.response(&self.ids, "completed", output);
        echo::finish(&mut response, self.finish_reason.as_deref(), echo::now());
        response["usage"] = self.usage.clone().unwrap_or_else(usage::unknown);
        let name = if response["status"] == "completed" {
            "response.completed"
        } else {
            "response.incomplete"
        };
        self.writer.emit(name, json!({"response": response}), out);
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
        self.writer.abandon();
        self.ended = true;
        let output = self.writer.output().to_vec();
        let mut response = self.echo.response(&self.ids, "failed", output);
        response["error"] = json!({"code": "server_error", "message": message});
        response["usage"] = self.usage.clone().unwrap_or_else(usage::unknown);
        self.writer
            .emit("response.failed", json!({"response": response}), out);
    }

    /// Writes `response.created` and `response.in_progress`, once.
    fn start(&mut self, out: &mut Vec<Event>) {
        if std::mem::replace(&mut self.started, true) {
            return;
        }
        let response = self.echo.response(&self.ids, "in_progress", Vec::new());
        self.writer.emit(
            "response.created",
            json!({"response": response.clone()}),
            out,
        );
        self.writer
            .emit("response.in_progress", json!({"response": response}), out);
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

    fn names(events: &[Event]) -> Vec<&str> {
        events.iter().map(|e| e.name.as_ref()).collect()
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
    fn a_stream_without_usage_ends_with_zero_counts() {
        let mut s = stream();
        let mut out = Vec::new();
        s.chunk(&delta(json!({"content": "a"})), &mut out);
        s.end(&mut out);
        assert!(out[0].data["response"]["usage"].is_null());
        let last = out.last().map(|e| e.data.clone()).unwrap_or_default();
        assert_eq!(last["response"]["usage"]["input_tokens"], 0);
        assert_eq!(last["response"]["usage"]["output_tokens"], 0);
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

    #[test]
    fn chunks_of_any_shape_never_break_the_grammar() {
        let mut s = stream();
        let mut out = Vec::new();
        for chunk in [
            json!(null),
            json!([1, 2]),
            json!({"choices": "no"}),
            json!({"choices": [null, 3]}),
            json!({"choices": [{"index": 0, "delta": "text"}]}),
            json!({"choices": [{"index": 0, "delta": {"content": 7, "tool_calls": "x"}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [null, {"index": -1},
                {"index": 0, "function": {"arguments": "{"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": 5}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "c",
                "function": {"name": null, "arguments": null}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": 4}]}),
            json!({"usage": "lots", "choices": []}),
        ] {
            s.chunk(&chunk, &mut out);
        }
        s.chunk_json("not json", &mut out);
        s.end(&mut out);
        assert_eq!(
            out.last().map(|e| e.name.as_ref()),
            Some("response.completed")
        );
        // Every item added was done, in order.
        let added = out
            .iter()
            .filter(|e| e.name == "response.output_item.added")
            .count();
        let done = out
            .iter()
            .filter(|e| e.name == "response.output_item.done")
            .count();
        assert_eq!((added, done), (2, 2), "{out:#?}");
        for (i, e) in out.iter().enumerate() {
            assert_eq!(e.data["sequence_number"], i);
        }
    }
}
