//! The dispatcher, driven poll by poll (`tokio_test::task::spawn`) over an
//! event stream fed from a channel, with handlers the test finishes by hand
//! (each waits on a oneshot "gate"), and on a paused tokio clock.

mod common;

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use futures::channel::mpsc::{unbounded, UnboundedReceiver, UnboundedSender};
use futures::channel::oneshot;
use futures::stream::{self, FusedStream, StreamExt};
use tokio_test::assert_ready;
use tokio_test::task::{spawn, Spawn};
use toolscan_core::{Event, ToolCall};
use toolscan_stream::{
    CallOutput, Dispatch, Dispatched, Dispatcher, EventStream, EventStreamExt, StreamError,
};

use common::{seeded_parser, Boom};

/// A complete Hermes call to the tool `name`.
fn call(name: &str) -> String {
    format!(
        "<tool_call>{{\"name\": \"{name}\", \"arguments\": {{\"n\": \"{name}\"}}}}</tool_call>\n"
    )
}

/// Counts of the handlers: started, running now (a guard in each handler's
/// future, so a dropped handler counts as stopped), the most ever running
/// at once.
#[derive(Default)]
struct Stats {
    started: Mutex<Vec<String>>,
    running: AtomicUsize,
    max_running: AtomicUsize,
}

struct Guard(Arc<Stats>);

impl Guard {
    fn new(stats: &Arc<Stats>) -> Guard {
        let now = stats.running.fetch_add(1, Ordering::SeqCst) + 1;
        stats.max_running.fetch_max(now, Ordering::SeqCst);
        Guard(stats.clone())
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
    }
}

type Gate = oneshot::Sender<Result<String, String>>;
type HandlerFuture = std::pin::Pin<Box<dyn Future<Output = Result<String, String>> + Send>>;

/// Handlers that each wait for the test to open their gate, and the
/// gates, by tool name.
struct Gated {
    stats: Arc<Stats>,
    gates: Arc<Mutex<HashMap<String, Gate>>>,
}

impl Gated {
    fn new() -> Gated {
        Gated {
            stats: Arc::default(),
            gates: Arc::default(),
        }
    }

    fn handler(&self) -> impl FnMut(ToolCall) -> HandlerFuture + Send + 'static {
        let stats = self.stats.clone();
        let gates = self.gates.clone();
        move |call: ToolCall| {
            let (tx, rx) = oneshot::channel();
            gates.lock().unwrap().insert(call.name.clone(), tx);
            let stats = stats.clone();
            Box::pin(async move {
                let _guard = Guard::new(&stats);
                stats.started.lock().unwrap().push(call.name.clone());
                match rx.await {
                    Ok(result) => result,
                    Err(_) => Err("gate dropped".to_string()),
                }
            })
        }
    }

    /// Finishes the handler of `name` with `result`.
    fn open(&self, name: &str, result: Result<&str, &str>) {
        let gate = self
            .gates
            .lock()
            .unwrap()
            .remove(name)
            .expect("handler started");
        let _ = gate.send(result.map(str::to_string).map_err(str::to_string));
    }

    fn started(&self) -> Vec<String> {
        self.stats.started.lock().unwrap().clone()
    }

    fn running(&self) -> usize {
        self.stats.running.load(Ordering::SeqCst)
    }

    fn max_running(&self) -> usize {
        self.stats.max_running.load(Ordering::SeqCst)
    }
}

type Chunks = UnboundedReceiver<Result<Bytes, Boom>>;
type Item = Result<Dispatched<String, String>, StreamError<Boom>>;

type Tx = UnboundedSender<Result<Bytes, Boom>>;
type Handler = Box<dyn FnMut(ToolCall) -> HandlerFuture + Send>;
type GatedTask = Spawn<Dispatch<EventStream<Chunks>, Handler, HandlerFuture>>;

/// A dispatch over an event stream fed from a channel.
fn gated_dispatch(gated: &Gated, max: usize) -> (GatedTask, Tx) {
    let (tx, rx) = unbounded();
    let events = rx.tool_events(seeded_parser());
    let handler: Handler = Box::new(gated.handler());
    let task = spawn(Dispatcher::new(handler, max).dispatch(events));
    (task, tx)
}

fn send(tx: &Tx, text: &str) {
    tx.unbounded_send(Ok(Bytes::from(text.to_string())))
        .unwrap();
}

/// Polls until pending or the end; returns what came out and whether the
/// stream ended.
fn drain<S>(task: &mut Spawn<S>) -> (Vec<Item>, bool)
where
    S: futures::Stream<Item = Item> + Unpin,
{
    let mut out = Vec::new();
    loop {
        match task.poll_next() {
            Poll::Ready(Some(item)) => out.push(item),
            Poll::Ready(None) => return (out, true),
            Poll::Pending => return (out, false),
        }
    }
}

fn outputs(items: &[Item]) -> Vec<(usize, String, Result<String, String>)> {
    items
        .iter()
        .filter_map(|item| match item {
            Ok(Dispatched::Output(CallOutput {
                index,
                name,
                result,
                ..
            })) => Some((*index, name.clone(), result.clone())),
            _ => None,
        })
        .collect()
}

fn has_done(items: &[Item]) -> bool {
    items
        .iter()
        .any(|item| matches!(item, Ok(Dispatched::Event(Event::Done { .. }))))
}

#[test]
fn a_handler_starts_in_the_poll_that_yields_its_call_end_while_the_stream_goes_on() {
    let gated = Gated::new();
    let (mut task, tx) = gated_dispatch(&gated, 4);

    send(&tx, "Let me check. ");
    send(&tx, &call("a"));
    // Events up to and including the call's end come out; the handler has
    // started (and been polled) by the time `tool_call_end` is yielded.
    loop {
        match assert_ready!(task.poll_next()) {
            Some(Ok(Dispatched::Event(Event::ToolCallEnd { name, .. }))) => {
                assert_eq!(name, "a");
                assert_eq!(
                    gated.started(),
                    ["a"],
                    "started before its end event came out"
                );
                break;
            }
            Some(Ok(Dispatched::Event(_))) => assert!(gated.started().is_empty()),
            other => panic!("unexpected {other:?}"),
        }
    }
    let (items, ended) = drain(&mut task);
    assert!(!ended && !has_done(&items), "the stream is still open");
    assert_eq!(gated.running(), 1);

    // The handler finishes while the model is still "writing": its result
    // comes out at once (the handler's wake-up wakes the task).
    gated.open("a", Ok("sunny"));
    assert!(task.is_woken(), "a finished handler must wake the task");
    let (items, ended) = drain(&mut task);
    assert_eq!(outputs(&items), [(0, "a".into(), Ok("sunny".into()))]);
    assert!(!ended);

    // More text, then the end.
    send(&tx, "Done.");
    drop(tx);
    assert!(task.is_woken());
    let (items, ended) = drain(&mut task);
    assert!(ended && has_done(&items));
    assert!(outputs(&items).is_empty());
    assert!(task.is_terminated());
}

#[test]
fn never_more_than_max_concurrent_handlers_and_results_in_call_order() {
    let gated = Gated::new();
    let (mut task, tx) = gated_dispatch(&gated, 2);
    let names = ["c0", "c1", "c2", "c3", "c4"];
    send(&tx, &names.map(call).concat());
    drop(tx);

    let (items, ended) = drain(&mut task);
    assert!(
        !ended && has_done(&items),
        "all events are out, handlers run"
    );
    assert_eq!(gated.started(), ["c0", "c1"]);
    assert_eq!(task.running(), 2);
    assert_eq!(task.waiting(), 3);

    // Later calls finish first: each finished one frees a slot for the
    // next waiting call, but no result is yielded before c0's.
    gated.open("c1", Ok("r1"));
    assert!(task.is_woken());
    let (items, _) = drain(&mut task);
    assert!(
        items.is_empty(),
        "c1's result came out before c0's: {items:?}"
    );
    assert_eq!(gated.started(), ["c0", "c1", "c2"]);
    gated.open("c2", Ok("r2"));
    let _ = drain(&mut task);
    gated.open("c3", Ok("r3"));
    let (items, _) = drain(&mut task);
    assert!(items.is_empty());
    assert_eq!(gated.started(), ["c0", "c1", "c2", "c3", "c4"]);
    assert_eq!(gated.max_running(), 2);

    gated.open("c0", Ok("r0"));
    let (items, ended) = drain(&mut task);
    assert!(!ended, "c4 still runs");
    assert_eq!(
        outputs(&items),
        [
            (0, "c0".into(), Ok("r0".into())),
            (1, "c1".into(), Ok("r1".into())),
            (2, "c2".into(), Ok("r2".into())),
            (3, "c3".into(), Ok("r3".into())),
        ]
    );
    gated.open("c4", Ok("r4"));
    let (items, ended) = drain(&mut task);
    assert!(ended);
    assert_eq!(outputs(&items), [(4, "c4".into(), Ok("r4".into()))]);
    assert_eq!(gated.max_running(), 2, "more than 2 handlers ran at once");
    assert_eq!(gated.running(), 0);
}

#[test]
fn a_handler_error_is_the_result_of_that_call_only() {
    let gated = Gated::new();
    let (mut task, tx) = gated_dispatch(&gated, 8);
    send(&tx, &[call("x"), call("y"), call("z")].concat());
    drop(tx);
    let _ = drain(&mut task);
    gated.open("y", Err("tool failed"));
    gated.open("z", Ok("ok z"));
    gated.open("x", Ok("ok x"));
    let (items, ended) = drain(&mut task);
    assert!(ended);
    assert_eq!(
        outputs(&items),
        [
            (0, "x".into(), Ok("ok x".into())),
            (1, "y".into(), Err("tool failed".into())),
            (2, "z".into(), Ok("ok z".into())),
        ]
    );
}

#[test]
fn a_stream_error_cancels_every_handler_and_comes_out_typed() {
    let gated = Gated::new();
    let (mut task, tx) = gated_dispatch(&gated, 2);
    send(&tx, &[call("a"), call("b"), call("c")].concat());
    let _ = drain(&mut task);
    assert_eq!(gated.running(), 2);
    assert_eq!(task.waiting(), 1);

    tx.unbounded_send(Err(Boom("connection reset"))).unwrap();
    assert!(task.is_woken());
    let error = assert_ready!(task.poll_next());
    match error {
        Some(Err(StreamError::Transport(Boom(msg)))) => assert_eq!(msg, "connection reset"),
        other => panic!("expected the transport error, got {other:?}"),
    }
    // Cancelled before the error came out: no handler runs, the waiting
    // one never started, the gates see their handlers gone.
    assert_eq!(gated.running(), 0);
    assert_eq!(gated.started(), ["a", "b"]);
    assert!(gated
        .gates
        .lock()
        .unwrap()
        .values()
        .all(oneshot::Sender::is_canceled));
    assert!(assert_ready!(task.poll_next()).is_none());
    assert!(task.is_terminated());
    assert_eq!(task.running(), 0);
}

#[test]
fn dropping_the_dispatch_drops_every_handler_at_once() {
    let gated = Gated::new();
    let (mut task, tx) = gated_dispatch(&gated, 8);
    send(&tx, &[call("a"), call("b")].concat());
    let _ = drain(&mut task);
    assert_eq!(gated.running(), 2);
    drop(task);
    assert_eq!(gated.running(), 0, "a handler outlived the dispatch");
    assert!(tx.is_closed(), "the chunk stream outlived the dispatch");
}

#[test]
fn a_response_without_calls_passes_its_events_through() {
    let gated = Gated::new();
    let (mut task, tx) = gated_dispatch(&gated, 1);
    send(&tx, "just text, ");
    send(&tx, "no call");
    drop(tx);
    let (items, ended) = drain(&mut task);
    assert!(ended && has_done(&items));
    assert!(outputs(&items).is_empty());
    assert!(gated.started().is_empty());
    let text: String = items
        .iter()
        .filter_map(|i| match i {
            Ok(Dispatched::Event(Event::Text { delta })) => Some(delta.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "just text, no call");
}

#[test]
fn results_collects_outputs_in_order() {
    let response = [call("a"), call("b"), call("c")].concat();
    let events = stream::iter([Ok::<_, Infallible>(response)]).tool_events(seeded_parser());
    let dispatch = Dispatcher::new(
        |call: ToolCall| async move {
            if call.name == "b" {
                Err(format!("no {}", call.name))
            } else {
                Ok(call.arguments.as_str().to_string())
            }
        },
        0, // taken as 1
    )
    .dispatch(events);
    let outputs = futures::executor::block_on(dispatch.results()).unwrap();
    let got: Vec<_> = outputs.into_iter().map(|o| (o.index, o.result)).collect();
    assert_eq!(
        got,
        [
            (0, Ok("{\"n\": \"a\"}".to_string())),
            (1, Err("no b".to_string())),
            (2, Ok("{\"n\": \"c\"}".to_string())),
        ]
    );
}

#[test]
fn results_returns_the_stream_error() {
    let chunks = stream::iter([
        Ok(Bytes::from(call("a"))),
        Err(Boom("gone")),
        Ok(Bytes::from(call("b"))),
    ]);
    let events = chunks.tool_events(seeded_parser());
    let dispatch = Dispatcher::new(|_: ToolCall| async { Ok::<_, ()>(()) }, 1).dispatch(events);
    let result = futures::executor::block_on(dispatch.results());
    assert_eq!(result.unwrap_err(), StreamError::Transport(Boom("gone")));
}

// ---------------------------------------------------------------------------
// On a tokio runtime, with a paused clock: real timers, no real waiting.
// ---------------------------------------------------------------------------

/// Chunks of `response`, `bytes` at a time, one every `every` (tokio time).
fn paced(
    response: String,
    bytes: usize,
    every: Duration,
) -> impl futures::Stream<Item = Result<Bytes, Infallible>> {
    let chunks: Vec<Bytes> = response
        .as_bytes()
        .chunks(bytes)
        .map(Bytes::copy_from_slice)
        .collect();
    stream::iter(chunks).then(move |chunk| async move {
        tokio::time::sleep(every).await;
        Ok(chunk)
    })
}

#[tokio::test(start_paused = true)]
async fn early_dispatch_overlaps_the_tools_with_the_stream() {
    // Call 0 is complete a quarter of the way in; the response takes
    // 1 s to stream; each tool takes 600 ms.
    let response = format!("{}{}", call("first"), "x".repeat(3 * call("first").len()));
    let chunk_count = response.len().div_ceil(4) as u64;
    let every = Duration::from_millis(1000 / chunk_count);
    let stream_time = every * chunk_count as u32;
    let start = tokio::time::Instant::now();
    let events = paced(response, 4, every).tool_events(seeded_parser());
    let dispatch = Dispatcher::new(
        |call: ToolCall| async move {
            tokio::time::sleep(Duration::from_millis(600)).await;
            Ok::<_, Infallible>((call.name, tokio::time::Instant::now()))
        },
        4,
    )
    .dispatch(events);
    let outputs = dispatch.results().await.unwrap();
    let elapsed = start.elapsed();
    assert_eq!(outputs.len(), 1);
    let (name, finished_at) = outputs.into_iter().next().unwrap().result.unwrap();
    assert_eq!(name, "first");
    // The tool finished while the stream was still going: it started at
    // about 250 ms, not after the stream's 1 s.
    assert!(
        finished_at - start < stream_time,
        "tool finished at {:?}, stream took {stream_time:?}",
        finished_at - start
    );
    assert!(
        elapsed < stream_time + Duration::from_millis(50),
        "{elapsed:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn no_handler_outlives_an_aborted_consumer_task() {
    let witness = Arc::new(());
    let started = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = unbounded::<Result<Bytes, Infallible>>();
    let handler = {
        let witness = witness.clone();
        let started = started.clone();
        move |_: ToolCall| {
            let witness = witness.clone();
            started.fetch_add(1, Ordering::SeqCst);
            async move {
                let _held = witness;
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok::<_, Infallible>(())
            }
        }
    };
    let consumer = tokio::spawn(async move {
        let mut dispatch = Dispatcher::new(handler, 4).dispatch(rx.tool_events(seeded_parser()));
        while let Some(item) = dispatch.next().await {
            item.unwrap();
        }
    });
    tx.unbounded_send(Ok(Bytes::from([call("a"), call("b")].concat())))
        .unwrap();
    // Let the consumer take the chunk and start both handlers.
    while started.load(Ordering::SeqCst) < 2 {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_millis(10)).await;
    // The test, the handler closure and its two futures.
    assert_eq!(
        Arc::strong_count(&witness),
        4,
        "both handlers hold the witness"
    );

    consumer.abort();
    let join = consumer.await;
    assert!(join.unwrap_err().is_cancelled());
    assert_eq!(
        Arc::strong_count(&witness),
        1,
        "a handler outlived its dispatch"
    );
    assert!(tx.is_closed(), "the chunk stream outlived its dispatch");
}
