//! The adapter adds no allocation per chunk where the core needs none:
//! token-sized chunks of prose through an `EventStream`, polled by hand,
//! allocate nothing once the queue has its room. Counted by a global
//! allocator keeping per-thread counts (the test kit's, which the
//! workspace's `tests/memory.rs` uses too).

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::stream::{self, Stream};
use futures::task::noop_waker_ref;
use toolscan_core::Event;
use toolscan_stream::EventStreamExt;
use toolscan_testkit::alloc::{allocations as allocs, Counting};

#[global_allocator]
static ALLOC: Counting = Counting;

/// Prose with characters that may start a marker (`<`, `[`) and
/// non-ASCII text, cut into 4-byte chunks (some inside a character).
fn chunks() -> Vec<&'static [u8]> {
    let prose: &'static str = Box::leak(
        "The model said <b>hello</b> [1] to Zürich — and 東京, then went on. "
            .repeat(200)
            .into_boxed_str(),
    );
    prose.as_bytes().chunks(4).collect()
}

#[test]
fn token_sized_chunks_of_text_allocate_nothing_per_chunk() {
    let chunks = chunks();
    let n = chunks.len();
    let inner = stream::iter(chunks.into_iter().map(Ok::<_, Infallible>));
    let mut events = inner.tool_events(toolscan_testkit::chunk::seeded("hermes"));
    let mut cx = Context::from_waker(noop_waker_ref());

    // Warm up: the queue gets its room.
    let mut text = 0;
    for _ in 0..64 {
        match Pin::new(&mut events).poll_next(&mut cx) {
            Poll::Ready(Some(Ok(Event::Text { delta }))) => text += delta.len(),
            other => panic!("unexpected {other:?}"),
        }
    }
    let before = allocs();
    let mut polled = 0;
    loop {
        match Pin::new(&mut events).poll_next(&mut cx) {
            Poll::Ready(Some(Ok(Event::Text { delta }))) => text += delta.len(),
            Poll::Ready(Some(Ok(Event::Done { .. }))) => break,
            other => panic!("unexpected {other:?}"),
        }
        polled += 1;
    }
    let during = allocs() - before;
    assert!(polled > n / 2, "only {polled} events for {n} chunks");
    assert_eq!(during, 0, "{during} allocations over {polled} events");
    assert!(text > 0);
}
