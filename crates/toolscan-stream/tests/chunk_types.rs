//! Any `AsRef<[u8]>` chunk type works, and gives what feeding the same
//! chunks to a parser directly gives.

mod common;

use std::convert::Infallible;

use bytes::Bytes;
use futures::executor::block_on;
use futures::stream::{self, TryStreamExt};
use toolscan_core::Event;
use toolscan_stream::{EventStream, EventStreamExt};

use common::{assert_contract, direct, seeded_parser, INPUT};
use toolscan_testkit::chunk::Plan;

/// `INPUT` cut into 5-byte pieces.
fn pieces() -> Vec<&'static [u8]> {
    INPUT.as_bytes().chunks(5).collect()
}

fn expected() -> Vec<Event> {
    direct(seeded_parser(), INPUT, &Plan::fixed(INPUT.len(), 5))
}

fn check(events: Vec<Event>) {
    assert_contract(&events);
    assert_eq!(events, expected());
}

#[test]
fn bytes_chunks() {
    let chunks = pieces()
        .into_iter()
        .map(|p| Ok::<_, Infallible>(Bytes::copy_from_slice(p)));
    check(
        block_on(
            stream::iter(chunks)
                .tool_events(seeded_parser())
                .try_collect(),
        )
        .unwrap(),
    );
}

#[test]
fn vec_chunks() {
    let chunks = pieces()
        .into_iter()
        .map(|p| Ok::<_, Infallible>(p.to_vec()));
    check(
        block_on(
            stream::iter(chunks)
                .tool_events(seeded_parser())
                .try_collect(),
        )
        .unwrap(),
    );
}

#[test]
fn static_slice_chunks() {
    let chunks = pieces().into_iter().map(Ok::<&'static [u8], Infallible>);
    check(
        block_on(
            stream::iter(chunks)
                .tool_events(seeded_parser())
                .try_collect(),
        )
        .unwrap(),
    );
}

#[test]
fn borrowed_slice_chunks() {
    let owned = INPUT.as_bytes().to_vec();
    let chunks = owned.chunks(5).map(Ok::<&[u8], Infallible>);
    check(
        block_on(
            stream::iter(chunks)
                .tool_events(seeded_parser())
                .try_collect(),
        )
        .unwrap(),
    );
}

#[test]
fn string_chunks() {
    let chunks = pieces()
        .into_iter()
        .map(|p| Ok::<_, Infallible>(String::from_utf8(p.to_vec()).unwrap()));
    check(
        block_on(
            stream::iter(chunks)
                .tool_events(seeded_parser())
                .try_collect(),
        )
        .unwrap(),
    );
}

#[test]
fn multibyte_utf8_split_across_chunks() {
    let input =
        "héllo wörld — ✓ <tool_call>{\"name\": \"f\", \"arguments\": {\"a\": \"é\"}}</tool_call>";
    let pieces: Vec<&[u8]> = input.as_bytes().chunks(1).collect();
    let chunks = pieces.clone().into_iter().map(Ok::<_, Infallible>);
    let events: Vec<Event> = block_on(
        stream::iter(chunks)
            .tool_events(seeded_parser())
            .try_collect(),
    )
    .unwrap();
    assert_contract(&events);
    let plan = Plan::fixed(input.len(), 1);
    assert_eq!(events, direct(seeded_parser(), input, &plan));
}

#[test]
fn new_is_the_same_as_tool_events() {
    let chunks = || pieces().into_iter().map(Ok::<_, Infallible>);
    let a: Vec<Event> =
        block_on(EventStream::new(stream::iter(chunks()), seeded_parser()).try_collect()).unwrap();
    let b: Vec<Event> = block_on(
        stream::iter(chunks())
            .tool_events(seeded_parser())
            .try_collect(),
    )
    .unwrap();
    assert_eq!(a, b);
}
