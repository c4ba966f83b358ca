//! End to end on a real tokio runtime: a response cut into 1-byte chunks
//! gives, once coalesced, what parsing it in one piece gives.

mod common;

use std::convert::Infallible;

use bytes::Bytes;
use futures::channel::mpsc;
use futures::stream::{self, StreamExt, TryStreamExt};
use toolscan_core::{coalesce, Event, Parser};
use toolscan_stream::EventStreamExt;

use common::{assert_contract, direct, seeded_parser, without_id, INPUT};
use toolscan_testkit::check::text_of;
use toolscan_testkit::chunk::Plan;

fn one_byte_chunks() -> impl Iterator<Item = Result<Bytes, Infallible>> {
    INPUT
        .as_bytes()
        .chunks(1)
        .map(|b| Ok(Bytes::copy_from_slice(b)))
}

fn check_against_direct(streamed: Vec<Event>) {
    let whole = direct(seeded_parser(), INPUT, &Plan::whole(INPUT.len()));
    assert_contract(&streamed);
    assert_contract(&whole);
    assert_eq!(text_of(&streamed), text_of(&whole));
    assert_eq!(coalesce(streamed), coalesce(whole));
}

#[tokio::test]
async fn one_byte_chunks_match_direct_parse() {
    let events: Vec<Event> = stream::iter(one_byte_chunks())
        .tool_events(seeded_parser())
        .try_collect()
        .await
        .unwrap();
    check_against_direct(events);
}

#[tokio::test]
async fn chunks_from_a_producer_task_match_direct_parse() {
    // Every chunk crosses a channel from another task, so the event stream
    // really goes pending and is woken between chunks.
    let (tx, rx) = mpsc::channel::<Result<Bytes, Infallible>>(1);
    let producer = tokio::spawn(async move {
        let mut sink = tx;
        for chunk in one_byte_chunks() {
            futures::SinkExt::send(&mut sink, chunk).await.unwrap();
            tokio::task::yield_now().await;
        }
    });
    let events: Vec<Event> = rx.tool_events(seeded_parser()).try_collect().await.unwrap();
    producer.await.unwrap();
    check_against_direct(events);
}

#[tokio::test]
async fn for_format_parser_matches_direct_parse_up_to_minted_ids() {
    // `for_format` mints call ids from a random seed, so two parsers agree on
    // everything but the ids.
    let parser = || Parser::for_format("hermes").unwrap();
    let streamed: Vec<Event> = stream::iter(one_byte_chunks())
        .tool_events(parser())
        .try_collect()
        .await
        .unwrap();
    let whole = direct(parser(), INPUT, &Plan::whole(INPUT.len()));
    assert_contract(&streamed);
    assert_eq!(text_of(&streamed), text_of(&whole));
    let strip = |events: Vec<Event>| coalesce(events.into_iter().map(without_id));
    assert_eq!(strip(streamed), strip(whole));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_is_consumed_on_a_worker_thread() {
    let (tx, rx) = mpsc::unbounded::<Result<Bytes, Infallible>>();
    let consumer = tokio::spawn(async move {
        let mut events = rx.tool_events(seeded_parser());
        let mut out = Vec::new();
        while let Some(event) = events.next().await {
            out.push(event.unwrap());
        }
        out
    });
    for chunk in one_byte_chunks() {
        tx.unbounded_send(chunk).unwrap();
        tokio::task::yield_now().await;
    }
    drop(tx);
    check_against_direct(consumer.await.unwrap());
}
