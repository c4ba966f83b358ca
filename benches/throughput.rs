//! Throughput of the streaming parser, in bytes of model output per second.
//!
//! Run with `cargo bench --bench throughput` (add
//! `-- --warm-up-time 1 --measurement-time 2` for a quick pass of about two
//! minutes). Every benchmark reports [`Throughput::Bytes`] of the whole input,
//! so the numbers of different chunk sizes and input sizes compare directly.
//! Inputs are generated deterministically (no randomness between runs); the
//! grammars are compiled once, outside the timed closures, and each iteration
//! builds a fresh [`Parser`] (cheap) and feeds the whole input, then
//! finishes it.
//!
//! Groups:
//!
//! - `text_only/{whole,4B,1B}`: about 64 KB of prose (paragraphs, punctuation,
//!   `<` and `[` characters, non-ASCII text) without any tool-call marker,
//!   through an `auto` parser. Measures the text path: the marker automaton of
//!   every format at once, and the release of text as it can no longer start
//!   a marker. `whole` feeds the input at once, `4B` in 4-byte chunks (about
//!   a token each), `1B` one byte at a time (the worst case for per-feed
//!   overhead).
//! - `arg_64k/{whole,4B,1B}`: one hermes call
//!   `<tool_call>{"name": "write_file", "arguments": {"path": …, "content": …}}</tool_call>`
//!   whose `content` is a 64 KB string with escapes (`\"`, `\\`, `\n`),
//!   non-ASCII text and braces. Measures the argument path: the incremental
//!   JSON scanner and the `tool_call_args` deltas. Before timing, a check
//!   that the call completes with the full content.
//! - `arg_scaling/{16K,64K,256K}`: the same call with 16, 64 and 256 KB of
//!   content, in 4-byte chunks. The parser is O(bytes fed), so the time per
//!   iteration should grow linearly with the size and the throughput stay
//!   roughly constant across the three.
//! - `deepseek_10_calls/4B`: ten DeepSeek V3.1 calls
//!   (`<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>`)
//!   after a sentence of text, through a `deepseek-v3.1` parser in 4-byte
//!   chunks: multi-byte markers split across chunks, several calls in one
//!   block.
//! - `baseline_requery/4B`: not toolscan. A naive reference for the 16 KB
//!   call of `arg_scaling/16K`, in the same 4-byte chunks: it accumulates
//!   the chunks and, on every chunk, re-runs `serde_json::from_slice` over
//!   everything after `<tool_call>` (minus a trailing `</tool_call>`), as
//!   the "re-parse the whole buffer on every delta" parsers do. Its cost is
//!   quadratic in the argument size; compare its time with
//!   `arg_scaling/16K` from the same run.
//! - `sink_api/{vec,bytes,str}/{4B,64KiB}`: the prose of `text_only` (1 MB)
//!   through `auto`, by the `Vec` API (`feed_into`, owned events), the sink
//!   API on bytes (`feed_with`: UTF-8 checked once per chunk) and on text
//!   (`feed_str_with`), with a sink that only counts text bytes. Chunks are
//!   cut at character boundaries (4–7 bytes, or 64 KiB) so all three see
//!   the same pieces. The per-chunk cost of the text path, and what owned
//!   events cost on top of it.
//! - `auto_vs_single/{hermes,auto}/{4B,64KiB}`: 1 MB of the prose of
//!   `text_only` through a `hermes` parser and through `auto` (every
//!   built-in format's markers at once), by the sink API on bytes, in
//!   4-byte (token-sized) and 64 KiB chunks. `auto` stays one pass over the
//!   bytes whatever the number of formats: the ratio auto ÷ hermes is what
//!   format detection costs (target: at most 1.5).
//! - `qwen_xml_string/{16K,64K,256K}`: one `qwen3-coder` call
//!   (`<tool_call><function=write_file><parameter=content>…</parameter>…`)
//!   whose `content` parameter — a string by the tools schema — holds 16, 64
//!   and 256 KB of source-like text, in 4-byte chunks. A raw value streams
//!   out as a JSON string while it arrives: before timing, a check that the
//!   first argument delta holding value bytes comes within the value's first
//!   64 bytes and that the value arrives in many deltas, not one at the end;
//!   the time should grow linearly with the size (256K / 16K ≈ 16).

use std::hint::black_box;
use std::sync::Arc;

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, Criterion, SamplingMode, Throughput,
};
use toolscan::{Event, EventRef, Grammar, Options, Parser, Registry};
use toolscan_testkit::prose::{pieces, prose};

// ---------------------------------------------------------------------------
// Input generation
// ---------------------------------------------------------------------------

/// The test kit's deterministic generator (SplitMix64), so inputs are the
/// same on every run and every machine.
struct Rng(toolscan_testkit::rng::Rng);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(toolscan_testkit::rng::Rng::new(seed))
    }

    fn below(&mut self, n: usize) -> usize {
        self.0.below(n)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// A `len`-byte string with everything JSON must escape or can carry:
/// quotes, backslashes, newlines, tabs, non-ASCII text and braces.
fn content(len: usize) -> String {
    const PIECES: &[&str] = &[
        "fn main() {\n    println!(\"hello, {}\", name);\n}\n",
        "let path = \"C:\\\\Users\\\\me\\\\file.txt\";\n",
        "// Grüße aus Zürich — 東京 ☂️\n",
        "{\"nested\": {\"json\": [1, 2, 3]}}\n",
        "\tif a < b && c > d { return; }\n",
        "Plain prose line with some words in it.\n",
        "regex: ^\\d+\\.\\d*$ and a quote \" inside\n",
        "<tool_call> inside a string is not a marker\n",
    ];
    let mut rng = Rng::new(len as u64);
    let mut s = String::with_capacity(len + 64);
    while s.len() < len {
        s.push_str(rng.pick(PIECES));
    }
    // Cut back to `len` bytes at a character boundary.
    let mut cut = len;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    s
}

/// One hermes call writing `content` to a file.
fn hermes_call(content: &str) -> String {
    let args = serde_json::json!({ "path": "a.txt", "content": content });
    format!(
        "<tool_call>{{\"name\": \"write_file\", \"arguments\": {}}}</tool_call>",
        serde_json::to_string(&args).unwrap()
    )
}

/// Ten DeepSeek V3.1 calls in one block, after a sentence of text.
fn deepseek_calls() -> String {
    let mut s = String::from("I'll look these up for you in parallel.\n\n<｜tool▁calls▁begin｜>");
    let cities = [
        "Zürich",
        "東京",
        "São Paulo",
        "Москва",
        "Reykjavík",
        "Paris",
        "القاهرة",
        "New York",
        "Kraków",
        "서울",
    ];
    for (i, city) in cities.iter().enumerate() {
        let (name, args) = if i % 2 == 0 {
            (
                "get_weather",
                serde_json::json!({ "city": city, "unit": "c", "days": i + 1 }),
            )
        } else {
            (
                "search",
                serde_json::json!({
                    "query": format!("best café \"{city}\" {{open late}}"),
                    "filters": { "tags": ["food", "coffee"], "max": i, "open_now": true },
                }),
            )
        };
        s.push_str("<｜tool▁call▁begin｜>");
        s.push_str(name);
        s.push_str("<｜tool▁sep｜>");
        s.push_str(&serde_json::to_string(&args).unwrap());
        s.push_str("<｜tool▁call▁end｜>");
    }
    s.push_str("<｜tool▁calls▁end｜>");
    s
}

// ---------------------------------------------------------------------------
// Runners
// ---------------------------------------------------------------------------

/// Feeds `input` to a fresh parser in `chunk`-byte pieces (`0`: at once),
/// finishes it, and returns how many events came out. `out` is cleared after
/// every feed, as a consumer handling events as they come would.
fn run(grammar: &Arc<Grammar>, input: &[u8], chunk: usize, out: &mut Vec<Event>) -> usize {
    let mut p = Parser::new(Arc::clone(grammar), Options::default());
    let mut n = 0;
    let size = if chunk == 0 {
        input.len().max(1)
    } else {
        chunk
    };
    for piece in input.chunks(size) {
        p.feed_into(piece, out);
        n += out.len();
        out.clear();
    }
    p.finish_into(out);
    n += out.len();
    out.clear();
    n
}

/// Every event of a run, for the checks outside the timed loops.
fn events(grammar: &Arc<Grammar>, input: &[u8], chunk: usize) -> Vec<Event> {
    let mut p = Parser::new(Arc::clone(grammar), Options::default());
    let mut out = Vec::new();
    for piece in input.chunks(chunk.max(1)) {
        p.feed_into(piece, &mut out);
    }
    p.finish_into(&mut out);
    out
}

/// Checks that `input` gives exactly one completed `write_file` call whose
/// content is `content`, and no text, whatever the chunking.
fn check_call(grammar: &Arc<Grammar>, input: &[u8], content: &str, chunk: usize) {
    let ev = events(grammar, input, chunk);
    let ends: Vec<_> = ev
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallEnd {
                name, arguments, ..
            } => Some((name, arguments)),
            _ => None,
        })
        .collect();
    assert_eq!(ends.len(), 1, "one call, chunk {chunk}");
    let (name, args) = ends[0];
    assert_eq!(name, "write_file");
    let args = args.parse().expect("arguments are an object");
    let got = args["content"].as_str().expect("content is a string");
    assert_eq!(got.len(), content.len(), "content length, chunk {chunk}");
    assert!(got == content, "content, chunk {chunk}");
    assert!(
        !ev.iter().any(|e| matches!(e, Event::Text { .. })),
        "no text around the call"
    );
}

/// The P17 reference: accumulate, and on every chunk re-parse everything
/// after the opening marker with `serde_json`. Returns the call's
/// `(name, arguments)` once a chunk makes the buffer parse.
fn requery(input: &[u8], chunk: usize) -> Option<(String, serde_json::Value)> {
    const OPEN: &[u8] = b"<tool_call>";
    const CLOSE: &[u8] = b"</tool_call>";
    let mut buf: Vec<u8> = Vec::new();
    let mut start: Option<usize> = None;
    let mut done = None;
    for piece in input.chunks(chunk) {
        buf.extend_from_slice(piece);
        if start.is_none() {
            start = buf
                .windows(OPEN.len())
                .position(|w| w == OPEN)
                .map(|i| i + OPEN.len());
        }
        let Some(s) = start else { continue };
        if done.is_some() {
            continue;
        }
        let mut body = &buf[s..];
        if let Some(stripped) = body.strip_suffix(CLOSE) {
            body = stripped;
        }
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) {
            let name = v["name"].as_str().unwrap_or_default().to_string();
            done = Some((name, v["arguments"].clone()));
        }
    }
    done
}

// ---------------------------------------------------------------------------
// Benchmarks
// ---------------------------------------------------------------------------

const KB: usize = 1024;

/// Benchmarks `input` fed whole, in 4-byte and in 1-byte chunks.
fn whole_4b_1b(group: &mut BenchmarkGroup<'_, WallTime>, g: &Arc<Grammar>, input: &[u8]) {
    let mut out = Vec::new();
    for (id, chunk) in [("whole", 0), ("4B", 4), ("1B", 1)] {
        group.bench_function(id, |b| b.iter(|| run(g, black_box(input), chunk, &mut out)));
    }
}

fn text_only(c: &mut Criterion) {
    let g = Registry::builtin().grammar("auto").unwrap();
    let input = prose(64 * KB);
    let input = input.as_bytes();
    // Outside the timed loop: the text comes back unchanged, no call.
    let ev = events(&g, input, 4);
    let text: String = ev
        .iter()
        .filter_map(|e| match e {
            Event::Text { delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert!(text.as_bytes() == input, "text_only: the text round-trips");

    let mut group = c.benchmark_group("text_only");
    group.throughput(Throughput::Bytes(input.len() as u64));
    whole_4b_1b(&mut group, &g, input);
    group.finish();
}

fn arg_64k(c: &mut Criterion) {
    let g = Registry::builtin().grammar("hermes").unwrap();
    let body = content(64 * KB);
    let input = hermes_call(&body);
    let input = input.as_bytes();
    for chunk in [usize::MAX, 4, 1] {
        check_call(&g, input, &body, chunk);
    }

    let mut group = c.benchmark_group("arg_64k");
    group.throughput(Throughput::Bytes(input.len() as u64));
    whole_4b_1b(&mut group, &g, input);
    group.finish();
}

fn arg_scaling(c: &mut Criterion) {
    let g = Registry::builtin().grammar("hermes").unwrap();
    let mut group = c.benchmark_group("arg_scaling");
    group.sampling_mode(SamplingMode::Flat);
    let mut out = Vec::new();
    for (id, size) in [("16K", 16 * KB), ("64K", 64 * KB), ("256K", 256 * KB)] {
        let body = content(size);
        let input = hermes_call(&body);
        let input = input.as_bytes();
        check_call(&g, input, &body, 4);
        group.throughput(Throughput::Bytes(input.len() as u64));
        group.bench_function(id, |b| b.iter(|| run(&g, black_box(input), 4, &mut out)));
    }
    group.finish();
}

fn deepseek_10_calls(c: &mut Criterion) {
    let g = Registry::builtin().grammar("deepseek-v3.1").unwrap();
    let input = deepseek_calls();
    let input = input.as_bytes();
    let ev = events(&g, input, 4);
    let ends = ev
        .iter()
        .filter(|e| matches!(e, Event::ToolCallEnd { .. }))
        .count();
    assert_eq!(ends, 10, "deepseek_10_calls: ten calls complete");

    let mut group = c.benchmark_group("deepseek_10_calls");
    group.throughput(Throughput::Bytes(input.len() as u64));
    let mut out = Vec::new();
    group.bench_function("4B", |b| b.iter(|| run(&g, black_box(input), 4, &mut out)));
    group.finish();
}

fn baseline_requery(c: &mut Criterion) {
    let body = content(16 * KB);
    let input = hermes_call(&body);
    let input = input.as_bytes();
    let (name, args) = requery(input, 4).expect("the baseline completes the call");
    assert_eq!(name, "write_file");
    assert_eq!(args["content"].as_str().map(str::len), Some(body.len()));

    let mut group = c.benchmark_group("baseline_requery");
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Bytes(input.len() as u64));
    group.bench_function("4B", |b| b.iter(|| requery(black_box(input), 4)));
    group.finish();
}

/// Feeds `pieces` to a fresh parser by the sink API (`feed_str_with` if
/// `str`, else `feed_with`) and finishes it; returns the bytes of text the
/// sink received.
fn text_through_sink(g: &Arc<Grammar>, pieces: &[&str], str: bool) -> usize {
    let mut p = Parser::new(Arc::clone(g), Options::default());
    let mut n = 0usize;
    let mut s = toolscan::sink::from_fn(|e: EventRef<'_>| {
        if let EventRef::Text(t) = e {
            n += t.len();
        }
    });
    for piece in pieces {
        if str {
            p.feed_str_with(piece, &mut s);
        } else {
            p.feed_with(piece.as_bytes(), &mut s);
        }
    }
    p.finish_with(&mut s);
    n
}

fn sink_api(c: &mut Criterion) {
    let text = prose(1 << 20);
    let g = Registry::builtin().grammar("auto").expect("auto");
    let mut group = c.benchmark_group("sink_api");
    group.throughput(Throughput::Bytes(text.len() as u64));
    for (label, size) in [("4B", 4), ("64KiB", 64 << 10)] {
        let pieces = pieces(&text, size);
        let mut out = Vec::new();
        group.bench_function(format!("vec/{label}"), |b| {
            b.iter(|| {
                let mut p = Parser::new(Arc::clone(&g), Options::default());
                let mut n = 0;
                for piece in &pieces {
                    p.feed_into(piece.as_bytes(), &mut out);
                    n += out.len();
                    out.clear();
                }
                n
            })
        });
        for api in ["bytes", "str"] {
            group.bench_function(format!("{api}/{label}"), |b| {
                b.iter(|| text_through_sink(&g, &pieces, api == "str"))
            });
        }
    }
    group.finish();
}

/// One `qwen3-coder` call writing `content` to a file.
fn qwen_call(content: &str) -> String {
    format!(
        "<tool_call>\n<function=write_file>\n<parameter=path>\na.txt\n</parameter>\n\
         <parameter=content>\n{content}\n</parameter>\n</function>\n</tool_call>"
    )
}

/// The tools of the `write_file` call: both parameters are strings.
fn write_file_tools() -> Options {
    let tools = toolscan::Tools::from_json(&serde_json::json!([{
        "type": "function",
        "function": {"name": "write_file", "parameters": {"type": "object", "properties": {
            "path": {"type": "string"}, "content": {"type": "string"}}}}
    }]))
    .unwrap();
    Options::default().with_tools(tools)
}

/// Checks that the string parameter streams: the first argument delta
/// that holds value bytes comes within the value's first 64 input bytes,
/// the value arrives in many deltas, and the call completes with it.
fn check_streams(grammar: &Arc<Grammar>, input: &str, content: &str) {
    let value_at = input.find("<parameter=content>\n").unwrap() + "<parameter=content>\n".len();
    let mut p = Parser::new(Arc::clone(grammar), write_file_tools());
    let (mut first, mut deltas, mut args, mut fed) = (None, 0usize, String::new(), 0usize);
    let mut done = None;
    for piece in input.as_bytes().chunks(4) {
        fed += piece.len();
        for e in p.feed(piece) {
            match e {
                Event::ToolCallArgs { delta, .. } => {
                    args.push_str(&delta);
                    deltas += 1;
                    if first.is_none() && args.contains("\"content\":\"") && !args.ends_with(":\"")
                    {
                        first = Some(fed);
                    }
                }
                Event::ToolCallEnd { arguments, .. } => done = Some(arguments),
                _ => {}
            }
        }
    }
    p.finish();
    let first = first.expect("value bytes were streamed");
    assert!(
        first <= value_at + 64,
        "first value delta after {} value bytes",
        first - value_at
    );
    assert!(deltas > content.len() / 64, "{deltas} deltas for the value");
    let args = done.expect("the call completes").parse().unwrap();
    assert!(args["content"] == content, "content arrives exactly");
}

fn qwen_xml_string(c: &mut Criterion) {
    let g = Registry::builtin().grammar("qwen3-coder").unwrap();
    let opts = write_file_tools();
    let mut group = c.benchmark_group("qwen_xml_string");
    group.sampling_mode(SamplingMode::Flat);
    let mut out = Vec::new();
    for (id, size) in [("16K", 16 * KB), ("64K", 64 * KB), ("256K", 256 * KB)] {
        let body = content(size);
        let input = qwen_call(&body);
        check_streams(&g, &input, &body);
        let input = input.as_bytes();
        group.throughput(Throughput::Bytes(input.len() as u64));
        group.bench_function(id, |b| {
            b.iter(|| {
                let mut p = Parser::new(Arc::clone(&g), opts.clone());
                let mut n = 0;
                for piece in black_box(input).chunks(4) {
                    p.feed_into(piece, &mut out);
                    n += out.len();
                    out.clear();
                }
                p.finish_into(&mut out);
                n + out.len()
            })
        });
    }
    group.finish();
}

/// `auto` (every built-in format's markers at once) against one format on
/// the same 1 MB of prose, by the sink API on bytes: what detecting the
/// format costs on the path every response takes.
fn auto_vs_single(c: &mut Criterion) {
    let text = prose(1 << 20);
    let mut group = c.benchmark_group("auto_vs_single");
    group.throughput(Throughput::Bytes(text.len() as u64));
    for (label, size) in [("4B", 4), ("64KiB", 64 << 10)] {
        let pieces = pieces(&text, size);
        for format in ["hermes", "auto"] {
            let g = Registry::builtin().grammar(format).expect("grammar");
            assert_eq!(
                text_through_sink(&g, &pieces, false),
                text.len(),
                "{format}: the prose comes back as text"
            );
            group.bench_function(format!("{format}/{label}"), |b| {
                b.iter(|| text_through_sink(&g, &pieces, false))
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = text_only, arg_64k, arg_scaling, deepseek_10_calls, baseline_requery, sink_api,
        qwen_xml_string, auto_vs_single
}
criterion_main!(benches);
