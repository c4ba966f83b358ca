//! Where the proxy's time per token goes, the network aside: the SSE
//! rewrite of a recorded vLLM-style stream (token-sized `delta.content`
//! events, a `<tool_call>` in them), per upstream event.
//!
//! Run with `cargo bench --bench sse` (add
//! `-- --warm-up-time 1 --measurement-time 2` for a quick pass).
//!
//! - `sse_rewrite/whole`: `toolscan_sse::rewrite_stream` over the
//!   recording, one upstream chunk per event (SSE decoding, the JSON of
//!   each chunk parsed and written again when it changed, the parser);
//! - `sse_rewrite/json_only`: only `serde_json` parsing each event's data
//!   into a `Value` and writing it back (what the rewrite does to a chunk
//!   it changes);
//! - `sse_rewrite/parser_only`: only the parser fed the same content
//!   pieces.
//!
//! Per event: the time divided by the events (printed as throughput in
//! "elements").

use std::hint::black_box;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use futures::executor::block_on;
use futures::stream::{self, StreamExt};
use serde_json::{json, Value};
use toolscan::{sink, Registry};

/// A stream of `tokens` content events (prose, then a tool call, split as
/// a tokenizer would), each in its own upstream chunk.
fn recording(tokens: usize) -> (Vec<Bytes>, Vec<String>) {
    let call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    let mut pieces: Vec<String> = Vec::new();
    let prose = "The weather in Paris tomorrow looks mild with some clouds and light wind ";
    let mut words = prose.split_inclusive(' ').cycle();
    while pieces.len() + call.len() / 4 < tokens {
        pieces.push(words.next().unwrap_or(" ").to_string());
    }
    pieces.extend(
        call.as_bytes()
            .chunks(4)
            .map(|c| String::from_utf8_lossy(c).into_owned()),
    );
    let event = |delta: Value, finish: Value| {
        let v = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
            "model": "Qwen/Qwen3-8B",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]});
        Bytes::from(format!("data: {v}\n\n"))
    };
    let mut chunks: Vec<Bytes> = pieces
        .iter()
        .map(|p| event(json!({"content": p}), Value::Null))
        .collect();
    chunks.push(event(json!({}), json!("stop")));
    chunks.push(Bytes::from_static(b"data: [DONE]\n\n"));
    (chunks, pieces)
}

fn bench(c: &mut Criterion) {
    let (chunks, pieces) = recording(200);
    let grammar = Registry::builtin().grammar("hermes").expect("hermes");
    let mut g = c.benchmark_group("sse_rewrite");
    g.throughput(Throughput::Elements(chunks.len() as u64));
    g.bench_function("whole", |b| {
        b.iter(|| {
            let owned: Vec<Bytes> = chunks.clone();
            let upstream = stream::iter(owned.into_iter().map(Ok::<_, std::io::Error>));
            let config = toolscan_sse::Config::new(grammar.clone());
            let out = toolscan_sse::rewrite_stream(upstream, config);
            let n: usize = block_on(
                out.map(|b| b.map_or(0, |b| b.len()))
                    .fold(0, |a, n| async move { a + n }),
            );
            black_box(n)
        })
    });
    let data: Vec<&str> = chunks
        .iter()
        .filter_map(|c| std::str::from_utf8(c).ok()?.strip_prefix("data: "))
        .map(str::trim_end)
        .filter(|d| *d != "[DONE]")
        .collect();
    g.bench_function("json_only", |b| {
        b.iter(|| {
            let mut n = 0;
            for d in &data {
                let v: Value = serde_json::from_str(d).expect("JSON");
                n += v.to_string().len();
            }
            black_box(n)
        })
    });
    g.bench_function("parser_only", |b| {
        b.iter(|| {
            let mut p = toolscan::Parser::new(grammar.clone(), toolscan::Options::new());
            let mut s = sink::Discard;
            for piece in &pieces {
                p.feed_str_with(piece, &mut s);
            }
            p.finish_with(&mut s);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
