//! Helpers of the toolscan-sse tests: running a rewrite over chunked
//! input, decoding the SSE output (with `sse-stream`, never by hand), and
//! reassembling it the way an OpenAI client does.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io;

use bytes::Bytes;
use futures::StreamExt;
use serde_json::{json, Value};
use toolscan_core::{IdMint, Options, Registry};
use toolscan_sse::{rewrite_stream, Config, RewriteError};
use toolscan_testkit::chunk::Plan;

/// The bundled recordings.
pub const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/sse");

/// A bundled recording.
pub fn recording(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DATA}/{name}")).expect("bundled recording")
}

/// `format`, reproducible ids.
pub fn config(format: &str) -> Config {
    Config::new(Registry::builtin().grammar(format).unwrap())
        .with_options(Options::new().with_ids(IdMint::Seeded(7)))
}

/// Runs the rewrite over `items`; every item of the output.
pub fn run_items(
    items: Vec<Result<Bytes, io::Error>>,
    config: Config,
) -> Vec<Result<Bytes, RewriteError<io::Error>>> {
    futures::executor::block_on(rewrite_stream(futures::stream::iter(items), config).collect())
}

/// Runs the rewrite over `input` cut by `plan`; the output bytes (every
/// item must be `Ok`).
pub fn rewrite(input: &[u8], plan: &Plan, config: Config) -> Vec<u8> {
    let items = plan
        .pieces(input)
        .into_iter()
        .map(|p| Ok(Bytes::copy_from_slice(p)))
        .collect();
    let mut out = Vec::new();
    for item in run_items(items, config) {
        out.extend_from_slice(&item.expect("no error"));
    }
    out
}

/// The `data` of every SSE event of `sse`, decoded by `sse-stream`.
pub fn data_of(sse: &[u8]) -> Vec<String> {
    let input = futures::stream::iter([Ok::<_, io::Error>(Bytes::copy_from_slice(sse))]);
    let events: Vec<_> =
        futures::executor::block_on(sse_stream::SseByteStream::new(input).collect());
    events
        .into_iter()
        .filter_map(|e| e.expect("the output is valid SSE").data)
        .collect()
}

/// The JSON chunks of `sse` (data that is JSON).
pub fn chunks_of(sse: &[u8]) -> Vec<Value> {
    data_of(sse)
        .iter()
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect()
}

/// One call as a client reassembles it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CallOut {
    pub id: String,
    pub name: String,
    pub arguments: String,
    /// Entries that carried an id (must be 1).
    pub starts: usize,
}

/// One choice as a client reassembles it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChoiceOut {
    pub content: String,
    pub reasoning: String,
    pub calls: BTreeMap<u64, CallOut>,
    /// Every non-null finish_reason seen, in order.
    pub finish_reasons: Vec<String>,
}

/// A whole output stream as a client reassembles it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reassembled {
    pub choices: BTreeMap<u64, ChoiceOut>,
    /// Every non-null `usage`.
    pub usage: Vec<Value>,
    /// How many `[DONE]`.
    pub done: usize,
    /// Whether the last event is `[DONE]`.
    pub done_last: bool,
    /// Data that is not JSON.
    pub not_json: Vec<String>,
}

/// Reassembles an output stream.
pub fn reassemble(sse: &[u8]) -> Reassembled {
    let data = data_of(sse);
    let mut r = Reassembled {
        done_last: data.last().is_some_and(|d| d == "[DONE]"),
        ..Reassembled::default()
    };
    for d in &data {
        if d == "[DONE]" {
            r.done += 1;
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(d) else {
            r.not_json.push(d.clone());
            continue;
        };
        if !v["usage"].is_null() {
            r.usage.push(v["usage"].clone());
        }
        for (pos, c) in v["choices"].as_array().into_iter().flatten().enumerate() {
            let index = c["index"].as_u64().unwrap_or(pos as u64);
            let out = r.choices.entry(index).or_default();
            let delta = &c["delta"];
            if let Some(t) = delta["content"].as_str() {
                out.content.push_str(t);
            }
            if let Some(t) = delta["reasoning_content"].as_str() {
                out.reasoning.push_str(t);
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let i = call["index"].as_u64().expect("every entry has an index");
                let entry = out.calls.entry(i).or_default();
                if let Some(id) = call["id"].as_str() {
                    entry.id = id.to_owned();
                    entry.starts += 1;
                    assert_eq!(call["type"], "function", "{call}");
                }
                if let Some(name) = call["function"]["name"].as_str() {
                    entry.name.push_str(name);
                }
                if let Some(a) = call["function"]["arguments"].as_str() {
                    entry.arguments.push_str(a);
                }
            }
            if let Some(f) = c["finish_reason"].as_str() {
                out.finish_reasons.push(f.to_owned());
            }
        }
    }
    r
}

/// One `chat.completion.chunk` event for choice `index`.
pub fn chunk(index: u64, delta: Value, finish: Option<&str>) -> String {
    let c = json!({
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "test-model",
        "choices": [{"index": index, "delta": delta, "logprobs": null, "finish_reason": finish}],
    });
    format!("data: {c}\n\n")
}

/// A stream of one choice whose content comes in `pieces`, ended with
/// `finish`, then `[DONE]`.
pub fn stream_of(pieces: &[&str], finish: &str) -> String {
    let mut s = chunk(0, json!({"role": "assistant", "content": ""}), None);
    for (i, p) in pieces.iter().enumerate() {
        let last = i + 1 == pieces.len();
        s.push_str(&chunk(0, json!({"content": p}), last.then_some(finish)));
    }
    s.push_str("data: [DONE]\n\n");
    s
}
