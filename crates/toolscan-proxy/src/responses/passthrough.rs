//! `--responses passthrough`: an upstream that serves `/v1/responses`
//! itself, its answer rewritten as the chat route rewrites a chat answer.
//! The text of its `message` items goes through the same rewrite
//! ([`toolscan_sse::ChunkRewriter`], fed the text as chat chunks), so a
//! call the model wrote as text becomes a `function_call` item, its
//! reasoning markup a `reasoning` item; every other item (the upstream's
//! own reasoning and function calls, built-in tools' items) and event is
//! passed on, renumbered: its `output_index` is its place among the items
//! sent, each event's `sequence_number` its place in the stream sent.
//!
//! One upstream message can become several items (text, a call, more
//! text): the message's own events (`content_part.*`, `output_text.*`,
//! annotations) are not passed on but written anew for the items it
//! became, and the final response's `output` lists the items sent.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{json, Map, Value};
use toolscan_sse::{ChunkRewriter, Config, Emit};

use super::event::Event;
use super::items;
use super::writer::Writer;

/// What an upstream output item became.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Became {
    /// A message: its text is rewritten into items of its own.
    Message,
    /// Any other item: passed on at this `output_index`.
    Item(usize),
}

/// The rewrite of one upstream Responses event stream.
#[derive(Debug)]
pub(crate) struct Passthrough {
    /// The rewrite's configuration (format, the request's tools…).
    config: Config,
    writer: Writer,
    /// Each upstream item (by its `output_index`) and what it became.
    items: HashMap<u64, Became>,
    /// The rewrite of the message being read: its upstream index, and
    /// the rewriter its text goes through.
    message: Option<(u64, ChunkRewriter)>,
    /// The final event was passed on.
    ended: bool,
    /// The response object of the last lifecycle event
    /// (`response.created`, `.in_progress`), for a `response.failed` the
    /// proxy writes itself.
    response: Option<Value>,
}

impl Passthrough {
    /// A rewrite of a stream read with `config`.
    pub(crate) fn new(config: Config) -> Passthrough {
        Passthrough {
            config,
            writer: Writer::default(),
            items: HashMap::new(),
            message: None,
            ended: false,
            response: None,
        }
    }

    /// The upstream failed, or ended its stream before its final event
    /// (`message` says which): `response.failed`, its response the last
    /// one the upstream sent, with the items sent so far (the open one
    /// `incomplete`) and the error. Nothing once the final event was
    /// passed on.
    pub(crate) fn fail(&mut self, message: &str, out: &mut Vec<Event>) {
        if self.ended {
            return;
        }
        self.ended = true;
        self.message = None;
        self.writer.abandon();
        let mut response = self.response.take().unwrap_or_else(|| json!({}));
        response["status"] = "failed".into();
        response["error"] = json!({"code": "server_error", "message": message});
        response["output"] = Value::Array(self.writer.output().to_vec());
        self.writer
            .emit("response.failed", json!({"response": response}), out);
    }

    /// Whether the final event (`response.completed`, `.incomplete`,
    /// `.failed`) was passed on.
    pub(crate) fn ended(&self) -> bool {
        self.ended
    }

    /// Feeds one upstream event's `data` (JSON text). Not JSON, or not an
    /// object with a `type`: dropped, with a warning.
    pub(crate) fn event_json(&mut self, data: &str, out: &mut Vec<Event>) {
        match serde_json::from_str::<Value>(data) {
            Ok(Value::Object(event)) => self.event(event, out),
            _ => tracing::warn!("responses passthrough: an event is not a JSON object; dropped"),
        }
    }

    /// An upstream item begins: a message's text is rewritten from here
    /// on; any other item is passed on at its place among those sent.
    fn item_added(
        &mut self,
        kind: String,
        mut event: Map<String, Value>,
        upstream_index: Option<u64>,
        out: &mut Vec<Event>,
    ) {
        let Some(index) = upstream_index else {
            return self.pass(kind, event, out);
        };
        self.end_message(None, out);
        self.writer.close("completed", out);
        if event
            .get("item")
            .and_then(|i| i.get("type"))
            .and_then(Value::as_str)
            == Some("message")
        {
            self.items.insert(index, Became::Message);
            self.message = Some((index, ChunkRewriter::new(self.config.clone())));
            return;
        }
        let ours = self.writer.index();
        self.items.insert(index, Became::Item(ours));
        event.insert("output_index".into(), ours.into());
        self.pass(kind, event, out);
    }

    /// Feeds one upstream event.
    pub(crate) fn event(&mut self, mut event: Map<String, Value>, out: &mut Vec<Event>) {
        let Some(kind) = event.get("type").and_then(Value::as_str).map(str::to_owned) else {
            tracing::warn!("responses passthrough: an event without a type; dropped");
            return;
        };
        let upstream_index = event.get("output_index").and_then(Value::as_u64);
        let became = upstream_index.and_then(|i| self.items.get(&i).copied());
        match kind.as_str() {
            "response.output_item.added" => self.item_added(kind, event, upstream_index, out),
            "response.output_text.delta" if became == Some(Became::Message) => {
                let delta = event
                    .get("delta")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                self.feed(delta, out);
            }
            "response.output_item.done" if became == Some(Became::Message) => {
                let status = event
                    .get("item")
                    .and_then(|i| i.get("status"))
                    .and_then(Value::as_str);
                self.end_message(status, out);
            }
            "response.output_item.done" => {
                if let Some(Became::Item(ours)) = became {
                    event.insert("output_index".into(), ours.into());
                }
                let item = event.get("item").cloned();
                self.pass(kind, event, out);
                if let Some(item) = item {
                    self.writer.push(item);
                }
            }
            "response.created" | "response.in_progress" | "response.queued" => {
                self.response = event.get("response").cloned();
                self.pass(kind, event, out);
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                if kind == "response.failed" {
                    self.message = None;
                    self.writer.abandon();
                } else {
                    self.end_message(None, out);
                    self.writer.close("completed", out);
                }
                if let Some(Value::Object(r)) = event.get_mut("response") {
                    r.insert("output".into(), Value::Array(self.writer.output().to_vec()));
                }
                self.ended = true;
                self.pass(kind, event, out);
            }
            // The message's own events: written anew for what it became.
            _ if became == Some(Became::Message) => {}
            _ => {
                if let Some(Became::Item(ours)) = became {
                    event.insert("output_index".into(), ours.into());
                }
                self.pass(kind, event, out);
            }
        }
    }

    /// Passes an upstream event on, with the next `sequence_number`.
    fn pass(&mut self, kind: String, event: Map<String, Value>, out: &mut Vec<Event>) {
        self.writer.pass(Cow::Owned(kind), event, out);
    }

    /// More text of the message being read, through its rewrite.
    fn feed(&mut self, text: &str, out: &mut Vec<Event>) {
        let Some((_, rewriter)) = &mut self.message else {
            return;
        };
        let chunk =
            json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]})
                .to_string();
        let mut emits = Vec::new();
        rewriter.chunk(&chunk, &mut emits);
        for emit in emits {
            match emit {
                Emit::Upstream => self.writer.text(text, out),
                Emit::Rewritten(c) | Emit::Added(c) => self.apply(&c, out),
                _ => {}
            }
        }
    }

    /// Writes a rewritten chunk's delta.
    fn apply(&mut self, chunk: &str, out: &mut Vec<Event>) {
        let Ok(chunk) = serde_json::from_str::<Value>(chunk) else {
            return;
        };
        if let Some(delta) = chunk.pointer("/choices/0/delta").and_then(Value::as_object) {
            self.writer.delta(delta, out);
        }
    }

    /// Ends the message being read, if any: what its rewrite still held
    /// is written, and its last item closed with `status` (the upstream
    /// message's, `completed` by default).
    fn end_message(&mut self, status: Option<&str>, out: &mut Vec<Event>) {
        let Some((_, mut rewriter)) = self.message.take() else {
            return;
        };
        let mut emits = Vec::new();
        rewriter.end(&mut emits);
        for emit in emits {
            if let Emit::Rewritten(c) | Emit::Added(c) = emit {
                self.apply(&c, out);
            }
        }
        let status = match status {
            Some("incomplete") => "incomplete",
            _ => "completed",
        };
        self.writer.close(status, out);
    }
}

/// Rewrites a whole upstream response object: each `message` item's text
/// goes through the chat rewrite (`toolscan_sse::rewrite_body`), and an
/// item whose text held calls or reasoning is replaced by the items it
/// became (`reasoning`, the `message` with the rest of its text, one
/// `function_call` per call); the others are kept as they came.
pub(crate) fn rewrite_whole(response: &mut Value, config: &Config) {
    let cut = response.get("status").and_then(Value::as_str) == Some("incomplete");
    let Some(Value::Array(output)) = response.get_mut("output") else {
        return;
    };
    let mut rewritten = Vec::with_capacity(output.len());
    for item in output.drain(..) {
        if item.get("type").and_then(Value::as_str) == Some("message") {
            rewritten.extend(rewrite_message(item, config, cut));
        } else {
            rewritten.push(item);
        }
    }
    *output = rewritten;
}

/// The items one message item becomes.
fn rewrite_message(item: Value, config: &Config, cut: bool) -> Vec<Value> {
    let parts = item.get("content").and_then(Value::as_array);
    let text: String = parts
        .into_iter()
        .flatten()
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("output_text"))
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect();
    let completion = json!({"choices": [{"index": 0, "finish_reason": if cut { "length" } else { "stop" },
        "message": {"role": "assistant", "content": text}}]});
    let Ok(body) = toolscan_sse::rewrite_body(completion.to_string().as_bytes(), config) else {
        return vec![item];
    };
    let Ok(rewritten) = serde_json::from_slice::<Value>(&body) else {
        return vec![item];
    };
    let message = rewritten
        .pointer("/choices/0/message")
        .unwrap_or(&Value::Null);
    let string = |k: &str| {
        message
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let calls = message.get("tool_calls").and_then(Value::as_array);
    let reasoning = string("reasoning_content");
    if calls.is_none_or(Vec::is_empty) && reasoning.is_none() {
        // Nothing to take out: the item as it came (annotations, logprobs).
        return vec![item];
    }
    let mut out = Vec::new();
    if let Some(r) = reasoning {
        out.push(items::reasoning(
            &super::ids::mint("rs"),
            Some(r),
            "completed",
        ));
    }
    // The rest of its text, and its other parts (refusals), in the message.
    let mut content: Vec<Value> = string("content")
        .map(items::output_text)
        .into_iter()
        .collect();
    content.extend(
        parts
            .into_iter()
            .flatten()
            .filter(|p| p.get("type").and_then(Value::as_str) != Some("output_text"))
            .cloned(),
    );
    if !content.is_empty() {
        let mut m = item.clone();
        m["content"] = Value::Array(content);
        out.push(m);
    }
    let status = item
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or("completed");
    for call in calls.into_iter().flatten() {
        let field = |p: &str| call.pointer(p).and_then(Value::as_str).unwrap_or_default();
        out.push(items::function_call(
            &super::ids::mint("fc"),
            field("/id"),
            field("/function/name"),
            field("/function/arguments"),
            status,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolscan_core::{IdMint, Options, Registry, Tools};

    /// Hermes (`qwen2.5` chat template), typed by a `get_weather` tool.
    fn config() -> Config {
        let grammar = match Registry::builtin().grammar("hermes") {
            Ok(g) => g,
            Err(e) => panic!("{e}"),
        };
        let tools = Tools::from_json(
            &json!([{"type": "function", "function": {"name": "get_weather",
            "parameters": {"type": "object"}}}]),
        );
        let mut options = Options::new().with_ids(IdMint::Seeded(1));
        if let Ok(t) = tools {
            options = options.with_tools(t);
        }
        Config::new(grammar).with_options(options)
    }

    /// What an upstream that serves `/v1/responses` streams for a model
    /// that writes its call as text, with a reasoning item of its own
    /// first.
    fn upstream() -> Vec<Value> {
        let response = |status: &str, output: Value| {
            json!({"id": "resp_up", "object": "response", "created_at": 1, "model": "qwen",
                "status": status, "output": output, "tools": [], "tool_choice": "auto",
                "parallel_tool_calls": true})
        };
        let msg = json!({"id": "msg_up", "type": "message", "role": "assistant",
            "status": "in_progress", "content": []});
        let text = "Checking.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
        let mut events = vec![
            json!({"type": "response.created", "sequence_number": 0, "response": response("in_progress", json!([]))}),
            json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
                "item": {"id": "rs_up", "type": "reasoning", "summary": [], "content": []}}),
            json!({"type": "response.reasoning_text.delta", "sequence_number": 2, "output_index": 0,
                "item_id": "rs_up", "content_index": 0, "delta": "hmm"}),
            json!({"type": "response.output_item.done", "sequence_number": 3, "output_index": 0,
                "item": {"id": "rs_up", "type": "reasoning", "summary": [],
                    "content": [{"type": "reasoning_text", "text": "hmm"}], "status": "completed"}}),
            json!({"type": "response.output_item.added", "sequence_number": 4, "output_index": 1, "item": msg}),
            json!({"type": "response.content_part.added", "sequence_number": 5, "output_index": 1,
                "item_id": "msg_up", "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": []}}),
        ];
        // The text cut anywhere: three bytes a delta.
        let bytes: Vec<char> = text.chars().collect();
        for piece in bytes.chunks(3) {
            let delta: String = piece.iter().collect();
            events.push(
                json!({"type": "response.output_text.delta", "sequence_number": 0,
                "output_index": 1, "item_id": "msg_up", "content_index": 0, "delta": delta,
                "logprobs": []}),
            );
        }
        let done_msg = json!({"id": "msg_up", "type": "message", "role": "assistant",
            "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}]});
        events.push(
            json!({"type": "response.output_text.done", "sequence_number": 0, "output_index": 1,
            "item_id": "msg_up", "content_index": 0, "text": text, "logprobs": []}),
        );
        events.push(
            json!({"type": "response.output_item.done", "sequence_number": 0,
            "output_index": 1, "item": done_msg}),
        );
        let final_output = json!([events[3]["item"].clone(), done_msg]);
        events.push(json!({"type": "response.completed", "sequence_number": 0,
            "response": response("completed", final_output)}));
        events
    }

    #[test]
    fn a_text_call_in_an_upstream_message_becomes_a_function_call_item() {
        let mut p = Passthrough::new(config());
        let mut out = Vec::new();
        for e in upstream() {
            p.event_json(&e.to_string(), &mut out);
        }
        if let Ok(path) = std::env::var("RESPONSES_PASSTHROUGH_DUMP") {
            let data: Vec<Value> = out.iter().map(|e| e.data.clone()).collect();
            let _ = std::fs::write(path, Value::Array(data).to_string() + "\n");
        }
        let names: Vec<&str> = out.iter().map(|e| e.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "response.created",
                "response.output_item.added",
                "response.reasoning_text.delta",
                "response.output_item.done",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.delta",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.completed",
            ],
            "{out:#?}"
        );
        for (i, e) in out.iter().enumerate() {
            assert_eq!(e.data["sequence_number"], i);
        }
        let text = out[9].data["text"].as_str().unwrap_or_default();
        assert_eq!(text, "Checking.");
        assert_eq!(out[12].data["output_index"], 2);
        let output = out[16].data["response"]["output"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let kinds: Vec<_> = output
            .iter()
            .map(|i| i["type"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(kinds, ["reasoning", "message", "function_call"]);
        assert_eq!(output[0]["id"], "rs_up");
        assert_eq!(output[2]["name"], "get_weather");
        let args = output[2]["arguments"].as_str().unwrap_or_default();
        assert_eq!(
            serde_json::from_str::<Value>(args).ok(),
            Some(json!({"city": "Paris"}))
        );
        assert_eq!(out[16].data["response"]["id"], "resp_up");
        assert!(p.ended());
    }

    #[test]
    fn an_upstream_that_stops_midway_gets_a_failed_response() {
        let mut p = Passthrough::new(config());
        let mut out = Vec::new();
        for e in upstream().iter().take(8) {
            p.event_json(&e.to_string(), &mut out);
        }
        p.fail(
            "the upstream ended its stream before the response completed",
            &mut out,
        );
        p.fail("twice", &mut out);
        let last = out.last().map(|e| e.data.clone()).unwrap_or_default();
        assert_eq!(last["type"], "response.failed");
        assert_eq!(last["response"]["id"], "resp_up");
        assert_eq!(last["response"]["status"], "failed");
        let output = last["response"]["output"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(output.len(), 2, "{last}");
        assert_eq!(output[1]["status"], "incomplete");
        assert_eq!(
            out.iter().filter(|e| e.name == "response.failed").count(),
            1
        );
    }

    #[test]
    fn a_whole_upstream_response_gets_its_text_calls_as_items() {
        let mut response = upstream()
            .pop()
            .map(|e| e["response"].clone())
            .unwrap_or_default();
        rewrite_whole(&mut response, &config());
        let output = response["output"].as_array().cloned().unwrap_or_default();
        let kinds: Vec<_> = output
            .iter()
            .map(|i| i["type"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(
            kinds,
            ["reasoning", "message", "function_call"],
            "{response}"
        );
        assert_eq!(output[1]["id"], "msg_up");
        assert_eq!(output[1]["content"][0]["text"], "Checking.");
        assert_eq!(output[2]["name"], "get_weather");
    }

    #[test]
    fn a_message_without_calls_is_kept_as_it_came() {
        let item = json!({"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "Hello", "annotations": [{"type": "url_citation"}]}]});
        let mut response = json!({"status": "completed", "output": [item.clone()]});
        rewrite_whole(&mut response, &config());
        assert_eq!(response["output"], json!([item]));
    }
}
