//! toolscan side by side with the peer crate `tool-parser` 1.10.0 and with a
//! bare `memchr2` scan, on the same bytes cut at the same places.
//!
//! Run with `cd benches/peer && cargo bench` (three to four minutes, one
//! of them the peer on the 64 KB argument), then `cargo run --release` for the
//! markdown tables of that run. Times are the benchmarking thread's CPU
//! time (`PEER_BENCH_WALL_TIME=1` for wall-clock time); see `cpu_time` in
//! `src/lib.rs`.
//!
//! Groups (every one reports `Throughput::Bytes` of the whole input, and
//! every iteration is one whole response: a fresh toolscan parser, or the
//! peer's parser after `reset()`, fed every chunk and then finished):
//!
//! - `prose_64KiB_chunks`: 64 MiB of marker-free prose in 64 KiB chunks.
//!   `memchr2` looks for `<` or `[` in each chunk and counts the hits: no
//!   parser that has to see those bytes can beat it, so it is the ceiling.
//! - `prose_4B_chunks`: 1 MiB of the same prose in chunks of 4 bytes
//!   (extended to 5 to 7 bytes where a character would be split): per-call
//!   overhead at about one token per chunk.
//! - `arg_4KB_4B` and `arg_64KB_4B`: one hermes call writing a 4 KiB or
//!   64 KiB `content` string (with escapes and non-ASCII) in 4-byte chunks.
//!   For a parser that does the same work per byte, the 64 KB time is 16
//!   times the 4 KB time; one that re-reads what it has buffered on every
//!   chunk takes about 256 times.
//! - `xml_256KB_4B`: one Qwen3-Coder call (`<parameter=content>` raw text)
//!   with a 256 KiB `content`, in 4-byte chunks; toolscan only (the peer
//!   would take hours).
//! - In the prose groups, toolscan's `feed` rows use the convenience
//!   `Parser::feed` (a new `Events` list for every chunk: its first event
//!   inline, no allocation); the `vec` rows reuse one `Vec` (`feed_into`).
//!
//! Before timing, every contender's output is checked: the prose comes back
//! as text unchanged and no call, the call comes back with its name and the
//! exact content. A failed toolscan check aborts; a failed peer check is
//! printed (`CHECK FAILED`) and the peer is still timed.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::measurement::Measurement;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};
use toolscan_core::Grammar;
use toolscan_peer_bench::cpu_time::ThreadCpuTime;
use toolscan_peer_bench::input::{self, cuts, slices};
use toolscan_peer_bench::ours::{self, Run};
use toolscan_peer_bench::peer::{self, Peer};

/// Samples per benchmark (criterion's minimum is 10). Short samples, many of
/// them: on a shared machine the fastest samples are the ones no other
/// process interrupted, and the report shows them next to the mean.
const SAMPLES: usize = 30;

/// The peer's parsers timed on prose, with the model id or name that picks
/// them in its factory: Qwen's parser (the hermes format), its generic JSON
/// parser, and what it gives a model it does not know.
fn peer_parsers() -> Vec<(&'static str, Peer)> {
    vec![
        ("peer_qwen", Peer::for_model(peer::QWEN_MODEL)),
        ("peer_json", Peer::named("json")),
        ("peer_passthrough", Peer::for_model(peer::UNKNOWN_MODEL)),
    ]
}

/// Checks that toolscan gives `text` back as text and finds no call.
fn check_ours_prose(format: &str, text: &str, chunks: &[&str]) {
    let events = ours::collect(&ours::grammar(format), chunks.iter().map(|c| c.as_bytes()));
    let (got, calls) = ours::summarize(&events);
    assert!(calls.is_empty(), "toolscan {format}: found a call in prose");
    assert!(got == text, "toolscan {format}: prose text changed");
}

/// Checks the same for a peer parser; reports instead of aborting.
fn check_peer_prose(name: &str, p: &mut Peer, text: &str, chunks: &[&str]) {
    let got = p.collect(chunks.iter().copied());
    if got.text != text || !got.calls.is_empty() || got.errors > 0 {
        eprintln!(
            "CHECK FAILED {name}: prose came back as {} of {} bytes, {} calls, {} errors",
            got.text.len(),
            text.len(),
            got.calls.len(),
            got.errors
        );
    }
}

fn prose_64k<M: Measurement>(c: &mut Criterion<M>) {
    let text = input::prose(input::PROSE_BIG, input::PROSE_SEED);
    let cut = cuts(&text, input::BIG_CHUNK);
    let chunks = slices(&text, &cut);
    let hermes = ours::grammar("hermes");
    let auto = ours::grammar("auto");
    let mut peers = peer_parsers();
    check_ours_prose("hermes", &text, &chunks);
    check_ours_prose("auto", &text, &chunks);
    for (name, p) in &mut peers {
        check_peer_prose(name, p, &text, &chunks);
    }

    let mut g = c.benchmark_group("prose_64KiB_chunks");
    g.throughput(Throughput::Bytes(text.len() as u64))
        .sampling_mode(SamplingMode::Flat)
        .sample_size(SAMPLES)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));

    g.bench_function("memchr2", |b| {
        b.iter(|| {
            let mut hits = 0usize;
            for c in &chunks {
                hits += memchr::memchr2_iter(b'<', b'[', c.as_bytes()).count();
            }
            black_box(hits)
        })
    });
    for (name, p) in &mut peers {
        g.bench_function(*name, |b| {
            b.iter(|| black_box(p.run(chunks.iter().copied())))
        });
    }
    for (format, grammar) in [("hermes", &hermes), ("auto", &auto)] {
        toolscan_contenders(&mut g, format, grammar, &chunks);
    }
    g.finish();
}

/// toolscan's three entry points on one format: the sink API on bytes and
/// on `&str`, and the `Vec` API.
fn toolscan_contenders<M: Measurement>(
    g: &mut BenchmarkGroup<'_, M>,
    format: &str,
    grammar: &Arc<Grammar>,
    chunks: &[&str],
) {
    toolscan_contender(g, format, "bytes", grammar, chunks, |run, c| {
        run.feed_bytes(c.as_bytes())
    });
    toolscan_contender(g, format, "str", grammar, chunks, |run, c| run.feed_str(c));
    toolscan_contender(g, format, "vec", grammar, chunks, |run, c| {
        run.feed_vec(c.as_bytes())
    });
    toolscan_contender(g, format, "feed", grammar, chunks, |run, c| {
        run.feed_new_vec(c.as_bytes())
    });
}

/// One toolscan contender; `feed` is monomorphised, so each entry point is
/// timed as a caller would inline it.
fn toolscan_contender<M: Measurement>(
    g: &mut BenchmarkGroup<'_, M>,
    format: &str,
    api: &str,
    grammar: &Arc<Grammar>,
    chunks: &[&str],
    feed: impl Fn(&mut Run, &str),
) {
    g.bench_function(format!("toolscan_{format}_{api}"), |b| {
        b.iter(|| {
            let mut run = Run::new(grammar);
            for c in chunks {
                feed(&mut run, c);
            }
            black_box(run.finish())
        })
    });
}

fn prose_4b<M: Measurement>(c: &mut Criterion<M>) {
    let text = input::prose(input::PROSE_SMALL, input::PROSE_SEED);
    let cut = cuts(&text, input::SMALL_CHUNK);
    let chunks = slices(&text, &cut);
    let hermes = ours::grammar("hermes");
    let auto = ours::grammar("auto");
    let mut peers: Vec<_> = peer_parsers()
        .into_iter()
        .filter(|(name, _)| *name != "peer_passthrough")
        .collect();
    check_ours_prose("hermes", &text, &chunks);
    check_ours_prose("auto", &text, &chunks);
    for (name, p) in &mut peers {
        check_peer_prose(name, p, &text, &chunks);
    }
    eprintln!(
        "prose_4B_chunks: {} bytes in {} chunks",
        text.len(),
        chunks.len()
    );

    let mut g = c.benchmark_group("prose_4B_chunks");
    g.throughput(Throughput::Bytes(text.len() as u64))
        .sampling_mode(SamplingMode::Flat)
        .sample_size(SAMPLES)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for (name, p) in &mut peers {
        g.bench_function(*name, |b| {
            b.iter(|| black_box(p.run(chunks.iter().copied())))
        });
    }
    for (format, grammar) in [("hermes", &hermes), ("auto", &auto)] {
        toolscan_contenders(&mut g, format, grammar, &chunks);
    }
    g.finish();
}

/// One argument group: the call with `size` bytes of content, 4-byte chunks.
fn arg_group<M: Measurement>(c: &mut Criterion<M>, group: &str, size: usize) {
    let content = input::content(size);
    // Qwen's chat template puts a newline on each side of the JSON; the
    // peer's Qwen parser needs them (without, it returns the call as text).
    let call = input::hermes_call(&content, true);
    let cut = cuts(&call, input::SMALL_CHUNK);
    let chunks = slices(&call, &cut);
    let hermes = ours::grammar("hermes");
    let mut qwen = Peer::for_model(peer::QWEN_MODEL);

    let events = ours::collect(&hermes, chunks.iter().map(|c| c.as_bytes()));
    let (_, calls) = ours::summarize(&events);
    assert_eq!(calls.len(), 1, "toolscan hermes: one call");
    assert_eq!(calls[0].0, "write_file");
    let got = calls[0].1["content"].as_str().unwrap_or_default();
    assert_eq!(got.len(), content.len(), "toolscan hermes: content length");
    assert!(got == content, "toolscan hermes: content");

    let got = qwen.collect(chunks.iter().copied());
    let peer_content = got.calls.first().and_then(|(_, args)| {
        let v: serde_json::Value = serde_json::from_str(args).ok()?;
        v["content"].as_str().map(str::to_owned)
    });
    let peer_name = got.calls.first().and_then(|(n, _)| n.clone());
    if got.calls.len() != 1
        || peer_name.as_deref() != Some("write_file")
        || peer_content.as_deref() != Some(&content)
    {
        eprintln!(
            "CHECK FAILED peer_qwen {group}: {} calls, name {peer_name:?}, content {:?} of {} bytes",
            got.calls.len(),
            peer_content.as_ref().map(String::len),
            content.len()
        );
    }
    eprintln!("{group}: {} bytes in {} chunks", call.len(), chunks.len());

    // Not timed: the same call without the newlines around the JSON
    // (`<tool_call>{…}</tool_call>`), which toolscan's hermes reads too.
    let bare = input::hermes_call(&content, false);
    let bare_cut = cuts(&bare, input::SMALL_CHUNK);
    let bare_chunks = slices(&bare, &bare_cut);
    let events = ours::collect(&hermes, bare_chunks.iter().map(|c| c.as_bytes()));
    let (_, calls) = ours::summarize(&events);
    assert!(
        calls.len() == 1 && calls[0].1["content"].as_str() == Some(content.as_str()),
        "toolscan hermes: the call without newlines"
    );
    let got = qwen.collect(bare_chunks.iter().copied());
    eprintln!(
        "NOTE {group} without newlines around the JSON: peer_qwen finds {} calls \
         and returns {} of {} bytes as text",
        got.calls.len(),
        got.text.len(),
        bare.len()
    );

    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Bytes(call.len() as u64))
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    // The peer re-parses its whole buffer on every chunk: at 64 KB one
    // response takes seconds, so it gets criterion's minimum (10 samples of
    // one iteration each, after one warm-up iteration).
    g.bench_function("peer_qwen", |b| {
        b.iter(|| black_box(qwen.run(chunks.iter().copied())))
    });
    g.sample_size(SAMPLES);
    g.bench_function("toolscan_hermes_bytes", |b| {
        b.iter(|| {
            let mut run = Run::new(&hermes);
            for c in &chunks {
                run.feed_bytes(c.as_bytes());
            }
            black_box(run.finish())
        })
    });
    g.bench_function("toolscan_hermes_str", |b| {
        b.iter(|| {
            let mut run = Run::new(&hermes);
            for c in &chunks {
                run.feed_str(c);
            }
            black_box(run.finish())
        })
    });
    g.finish();
}

fn args<M: Measurement>(c: &mut Criterion<M>) {
    arg_group(c, "arg_4KB_4B", input::ARG_SMALL);
    arg_group(c, "arg_64KB_4B", input::ARG_BIG);
    xml_group(c);
}

/// A Qwen3-Coder call whose 256 KiB `content` parameter (raw text, not
/// JSON) streams in 4-byte chunks. toolscan only: the peer re-reads its
/// buffer on every chunk (a quarter of a minute a response at 64 KB in
/// the hermes format), which would take hours here.
fn xml_group<M: Measurement>(c: &mut Criterion<M>) {
    let content = input::content(input::XML_BIG);
    let call = input::qwen3_coder_call(&content);
    let cut = cuts(&call, input::SMALL_CHUNK);
    let chunks = slices(&call, &cut);
    let grammar = ours::grammar("qwen3-coder");
    let options = ours::write_file_options;
    let events = ours::collect_with(&grammar, options(), chunks.iter().map(|c| c.as_bytes()));
    let (_, calls) = ours::summarize(&events);
    assert_eq!(calls.len(), 1, "toolscan qwen3-coder: one call");
    assert!(
        calls[0].1["content"].as_str() == Some(content.as_str()),
        "toolscan qwen3-coder: content"
    );
    // The value streams: most chunks bring an argument delta.
    let mut parser = toolscan_core::Parser::new(grammar.clone(), options());
    let with_delta = chunks
        .iter()
        .filter(|c| {
            parser
                .feed(c.as_bytes())
                .iter()
                .any(|e| matches!(e, toolscan_core::Event::ToolCallArgs { .. }))
        })
        .count();
    assert!(
        with_delta > chunks.len() / 2,
        "toolscan qwen3-coder: the value streams"
    );
    eprintln!(
        "xml_256KB_4B: {} bytes in {} chunks",
        call.len(),
        chunks.len()
    );

    let mut g = c.benchmark_group("xml_256KB_4B");
    g.throughput(Throughput::Bytes(call.len() as u64))
        .sampling_mode(SamplingMode::Flat)
        .sample_size(SAMPLES)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    g.bench_function("toolscan_qwen3coder_bytes", |b| {
        b.iter(|| {
            let mut run = Run::with(&grammar, options());
            for c in &chunks {
                run.feed_bytes(c.as_bytes());
            }
            black_box(run.finish())
        })
    });
    g.bench_function("toolscan_qwen3coder_str", |b| {
        b.iter(|| {
            let mut run = Run::with(&grammar, options());
            for c in &chunks {
                run.feed_str(c);
            }
            black_box(run.finish())
        })
    });
    g.finish();
}

fn all<M: Measurement>(c: &mut Criterion<M>) {
    prose_64k(c);
    prose_4b(c);
    args(c);
}

/// Times the thread's CPU time by default (see `cpu_time`): the numbers
/// hold on a machine shared with other work. `PEER_BENCH_WALL_TIME=1`
/// times wall-clock time instead (criterion's default).
fn main() {
    if std::env::var_os("PEER_BENCH_WALL_TIME").is_some() {
        let mut c = Criterion::default().configure_from_args();
        all(&mut c);
        c.final_summary();
    } else {
        let mut c = Criterion::default()
            .with_measurement(ThreadCpuTime)
            .configure_from_args();
        all(&mut c);
        c.final_summary();
    }
}
