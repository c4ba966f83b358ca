//! No phantom calls (issue 29, item 1): a call's `tool_calls` entry goes
//! out whole in the chunk where its end is confirmed, and a block that
//! breaks after it began — malformed JSON, a stray closer, the token limit
//! — never produces one: its markup is `content`, as the upstream sent it.
//! `Config::stream_arguments` brings back the live argument deltas.

mod common;

use common::*;
use serde_json::Value;
use toolscan_testkit::chunk::{self, Plan};

/// A Hermes answer (the Qwen3 template's `<tool_call>` lines) streamed a
/// few bytes of content per chunk, ended with `finish`.
fn hermes_stream(content: &str, finish: &str) -> String {
    let pieces: Vec<&str> = split_every(content, 5);
    stream_of(&pieces, finish)
}

/// `s` cut every `n` bytes, on character boundaries.
fn split_every(s: &str, n: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < s.len() {
        let mut end = (start + n).min(s.len());
        while !s.is_char_boundary(end) {
            end += 1;
        }
        out.push(&s[start..end]);
        start = end;
    }
    out
}

/// Every tool-call entry of the output, in order.
fn entries(sse: &[u8]) -> Vec<Value> {
    chunks_of(sse)
        .iter()
        .flat_map(|c| {
            c["choices"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|ch| {
                    ch["delta"]["tool_calls"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default()
                })
        })
        .collect()
}

/// The same rewrite under every standard cut of the upstream bytes.
fn every_cut(input: &[u8], config: impl Fn() -> toolscan_sse::Config) -> Vec<u8> {
    let want = rewrite(input, &Plan::whole(input.len()), config());
    for plan in chunk::standard(input.len()) {
        assert_eq!(
            rewrite(input, &plan, config()),
            want,
            "{plan:?}: the output depends on where the upstream was cut"
        );
    }
    want
}

const BROKEN: [(&str, &str); 3] = [
    (
        "malformed JSON",
        "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": ]}\n</tool_call>\nDone.",
    ),
    (
        "a stray closer",
        "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": </tool_call>\nDone.",
    ),
    (
        "no arguments object",
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": 7}\n</tool_call>",
    ),
];

#[test]
fn a_call_that_breaks_after_it_began_never_reaches_the_client() {
    for (what, content) in BROKEN {
        let input = hermes_stream(content, "stop");
        let out = every_cut(input.as_bytes(), || config("hermes"));
        assert_eq!(
            entries(&out),
            Vec::<Value>::new(),
            "{what}: no entry at all"
        );
        let r = reassemble(&out);
        let c = &r.choices[&0];
        assert_eq!(c.content, content, "{what}: the markup is content, whole");
        assert_eq!(c.finish_reasons, ["stop"], "{what}");
    }
}

#[test]
fn a_call_cut_by_the_token_limit_is_content_with_length() {
    let content = "Sure.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par";
    let input = hermes_stream(content, "length");
    let out = every_cut(input.as_bytes(), || config("hermes"));
    assert_eq!(entries(&out), Vec::<Value>::new());
    let c = &reassemble(&out).choices[&0];
    assert_eq!(c.content, content);
    assert_eq!(c.finish_reasons, ["length"]);
}

/// A complete call is one entry (id, name, all its arguments) in the chunk
/// that brings its closing markup — not at the end of the stream — and
/// the choice's end follows in a chunk of its own.
#[test]
fn a_complete_call_is_one_entry_in_the_chunk_that_closes_it() {
    let call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    let content = format!("{call}\nAnd more text after it, in later chunks.");
    let input = hermes_stream(&content, "stop");
    let out = every_cut(input.as_bytes(), || config("hermes"));
    let entries = entries(&out);
    assert_eq!(entries.len(), 1, "{entries:?}");
    let e = &entries[0];
    assert_eq!(e["index"], 0);
    assert_eq!(e["type"], "function");
    assert!(e["id"].as_str().is_some_and(|id| id.starts_with("call_")));
    assert_eq!(e["function"]["name"], "get_weather");
    assert_eq!(e["function"]["arguments"], r#"{"city": "Paris"}"#);

    // Which upstream chunk carried the closer's last byte: the entry comes
    // in the rewritten chunk of that one, and text after the call follows.
    let chunks = chunks_of(&out);
    let at = chunks
        .iter()
        .position(|c| !c["choices"][0]["delta"]["tool_calls"].is_null())
        .unwrap();
    let later: String = chunks[at + 1..]
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(later, "\nAnd more text after it, in later chunks.");
    let reasons: Vec<&Value> = chunks
        .iter()
        .map(|c| &c["choices"][0]["finish_reason"])
        .filter(|r| !r.is_null())
        .collect();
    assert_eq!(reasons, ["tool_calls"]);
}

/// Between a broken call and a good one, only the good one is an entry,
/// and it keeps the index a client expects (0: the first it sees).
#[test]
fn the_call_after_a_broken_one_is_the_first_entry() {
    let content = "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": </tool_call>\n\
        <tool_call>\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call>";
    let input = hermes_stream(content, "stop");
    let out = every_cut(input.as_bytes(), || config("hermes"));
    let entries = entries(&out);
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["function"]["name"], "b");
    let c = &reassemble(&out).choices[&0];
    assert_eq!(
        c.content,
        "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": </tool_call>\n"
    );
}

/// `stream_arguments`: the call's first entry comes before its end, its
/// arguments in pieces; a call that then breaks has sent what it sent (so
/// says the option's documentation).
#[test]
fn stream_arguments_sends_the_deltas_live() {
    let call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    let input = hermes_stream(call, "stop");
    let out = every_cut(input.as_bytes(), || {
        config("hermes").with_stream_arguments(true)
    });
    let live = entries(&out);
    assert!(live.len() > 2, "live pieces: {live:?}");
    assert_eq!(live[0]["function"]["name"], "get_weather");
    let args: String = live
        .iter()
        .filter_map(|e| e["function"]["arguments"].as_str())
        .collect();
    assert_eq!(args, r#"{"city": "Paris"}"#);

    let (_, broken) = BROKEN[1];
    let out = every_cut(hermes_stream(broken, "stop").as_bytes(), || {
        config("hermes").with_stream_arguments(true)
    });
    let sent = entries(&out);
    assert_eq!(sent[0]["function"]["name"], "get_weather");
    let c = &reassemble(&out).choices[&0];
    assert_eq!(c.content, broken, "its markup follows as content");
}

/// The whole-body rewrite never had partial calls; it agrees with the
/// stream on a broken call.
#[test]
fn the_body_rewrite_agrees() {
    for (what, content) in BROKEN {
        let body = serde_json::json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]
        });
        let body = serde_json::to_vec(&body).unwrap();
        let out: Value =
            serde_json::from_slice(&toolscan_sse::rewrite_body(&body, &config("hermes")).unwrap())
                .unwrap();
        let m = &out["choices"][0]["message"];
        assert!(m["tool_calls"].is_null(), "{what}: {m}");
        assert_eq!(m["content"], content, "{what}");
    }
}
