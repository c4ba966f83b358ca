//! The async adapter's costs.
//!
//! Run with `cargo bench --bench stream` (add
//! `-- --warm-up-time 1 --measurement-time 2` for a quick pass).
//!
//! - `stream_overhead/{core_sink,core_vec,event_stream}`: about 64 KB of
//!   prose (with `<`, `[` and non-ASCII text, no call) in 4-byte chunks
//!   through a `hermes` parser: fed directly with `Parser::feed_with` to a
//!   sink that counts text bytes (the core, borrowed events); fed with
//!   `Parser::feed_into` into a reused `Vec` (owned events, no adapter);
//!   and through an `EventStream` over a `stream::iter` of the chunks,
//!   polled by hand with a no-op waker (owned events plus the adapter's
//!   queue and poll). `event_stream − core_vec` is the adapter's own
//!   per-chunk overhead, `core_vec − core_sink` that of owned events.
//! - then, outside criterion, **dispatch latency**: a producer thread
//!   sends a response of 1000 calls (text, then a Hermes call, in 4-byte
//!   chunks) through a `futures` mpsc channel; before the chunk holding a
//!   call's last byte it pauses (so the consumer has caught up and is
//!   waiting, as it would on a network), notes the time and sends it. The
//!   consumer, on another thread, runs an `EventStream` over the receiver
//!   with `futures::executor::block_on` and notes the time each
//!   `tool_call_end` reaches it. The p50, p99 and maximum of the
//!   differences are printed: the time from the completing byte leaving
//!   the producer to the call in the consumer's hands, thread wake-up
//!   included.

use std::convert::Infallible;
use std::hint::black_box;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::thread;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{criterion_group, Criterion, Throughput};
use futures::channel::mpsc;
use futures::executor::block_on;
use futures::stream::{self, Stream, StreamExt};
use futures::task::noop_waker_ref;
use toolscan::stream::EventStreamExt;
use toolscan::{sink, Event, EventRef, Parser};

/// Deterministic prose of about `len` bytes, no tool call.
fn prose(len: usize) -> String {
    const PARAGRAPH: &str = "The model thinks about the question <b>carefully</b> and cites [1] \
        a source; then it compares Zürich with 東京 — weather, prices, trains — and \
        writes a short answer, with a list: a < b, c > d, e = f.\n\n";
    let mut s = String::with_capacity(len + PARAGRAPH.len());
    while s.len() < len {
        s.push_str(PARAGRAPH);
    }
    s
}

fn parser() -> Parser {
    toolscan_testkit::chunk::seeded("hermes")
}

fn overhead(c: &mut Criterion) {
    let text = prose(64 * 1024);
    let chunks: Vec<&[u8]> = text.as_bytes().chunks(4).collect();
    let mut group = c.benchmark_group("stream_overhead");
    group.throughput(Throughput::Bytes(text.len() as u64));

    group.bench_function("core_sink", |b| {
        b.iter(|| {
            let mut p = parser();
            let mut bytes = 0usize;
            let mut s = sink::from_fn(|e: EventRef<'_>| {
                if let EventRef::Text(t) = e {
                    bytes += t.len();
                }
            });
            for chunk in &chunks {
                p.feed_with(chunk, &mut s);
            }
            p.finish_with(&mut s);
            black_box(bytes)
        })
    });

    group.bench_function("core_vec", |b| {
        let mut events = Vec::new();
        b.iter(|| {
            let mut p = parser();
            let mut n = 0usize;
            for chunk in &chunks {
                p.feed_into(chunk, &mut events);
                n += events.len();
                events.clear();
            }
            p.finish_into(&mut events);
            n += events.len();
            events.clear();
            black_box(n)
        })
    });

    group.bench_function("event_stream", |b| {
        let mut cx = Context::from_waker(noop_waker_ref());
        b.iter(|| {
            let inner = stream::iter(chunks.iter().map(|c| Ok::<&[u8], Infallible>(c)));
            let mut events = inner.tool_events(parser());
            let mut n = 0usize;
            loop {
                match Pin::new(&mut events).poll_next(&mut cx) {
                    Poll::Ready(Some(Ok(event))) => {
                        n += 1;
                        black_box(event);
                    }
                    // (No error: the chunks are all `Ok`.)
                    Poll::Ready(Some(Err(_)) | None) => break,
                    // `stream::iter` is never pending; the adapter yields
                    // to the executor only after many silent chunks.
                    Poll::Pending => {}
                }
            }
            black_box(n)
        })
    });
    group.finish();
}

/// The dispatch latency summary (see the module docs).
fn latency_report() {
    const CALLS: usize = 1000;
    const PAUSE: Duration = Duration::from_micros(100);

    let (tx, rx) = mpsc::unbounded::<Result<Bytes, Infallible>>();
    let producer = thread::spawn(move || {
        let mut sent_at = Vec::with_capacity(CALLS);
        for i in 0..CALLS {
            let segment = format!(
                "Checking item {i}. <tool_call>{{\"name\": \"lookup\", \"arguments\": \
                 {{\"id\": {i}, \"city\": \"Zürich\"}}}}</tool_call>\n"
            );
            let chunks: Vec<&[u8]> = segment.as_bytes().chunks(4).collect();
            let (last, rest) = chunks.split_last().expect("a segment is never empty");
            for chunk in rest {
                if tx
                    .unbounded_send(Ok(Bytes::copy_from_slice(chunk)))
                    .is_err()
                {
                    return sent_at;
                }
            }
            thread::sleep(PAUSE);
            sent_at.push(Instant::now());
            if tx.unbounded_send(Ok(Bytes::copy_from_slice(last))).is_err() {
                return sent_at;
            }
        }
        sent_at
    });

    let received_at = block_on(async {
        let mut events = rx.tool_events(parser());
        let mut received_at = Vec::with_capacity(CALLS);
        while let Some(event) = events.next().await {
            if let Ok(Event::ToolCallEnd { .. }) = event {
                received_at.push(Instant::now());
            }
        }
        received_at
    });
    let sent_at = producer.join().expect("the producer does not panic");
    assert_eq!(sent_at.len(), received_at.len(), "every call arrived");

    let mut latencies: Vec<Duration> = sent_at
        .iter()
        .zip(&received_at)
        .map(|(sent, received)| received.saturating_duration_since(*sent))
        .collect();
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
    println!(
        "dispatch_latency (completing byte sent -> tool_call_end at the consumer, {} calls, \
         cross-thread): p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        latencies.len(),
        at(0.50).as_secs_f64() * 1e6,
        at(0.99).as_secs_f64() * 1e6,
        at(1.0).as_secs_f64() * 1e6,
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = overhead
}

fn main() {
    benches();
    latency_report();
    Criterion::default().configure_from_args().final_summary();
}
