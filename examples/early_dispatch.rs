//! Early dispatch: start each tool the moment its call closes, while the
//! model is still writing the rest of the response.
//!
//! ```text
//! cargo run --example early_dispatch
//! ```
//!
//! A "server" thread plays the model: it sends the Qwen3 response of
//! `examples/data/qwen3-weather.txt` a few bytes at a time, with a pause
//! between tokens, into a channel. The channel's receiver is an ordinary
//! `Stream` of `Result<Bytes, io::Error>` chunks, as an HTTP client would
//! give; [`EventStreamExt::tool_events`] turns it into a stream of events.
//! Every [`Event::ToolCallEnd`] spawns the tool at once (here a fake
//! `get_weather` that takes a while), and the timeline printed shows the
//! first tool starting — and even finishing — before the stream ends.

use std::io;
use std::thread;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::channel::mpsc;
use futures::StreamExt;
use serde_json::{Map, Value};
use toolscan::stream::EventStreamExt;
use toolscan::{Event, Options, Parser, Registry};

/// The simulated model output.
const RESPONSE: &str = include_str!("data/qwen3-weather.txt");
/// Bytes per simulated token.
const TOKEN_BYTES: usize = 4;
/// Pause between tokens (a brisk 200 tokens per second).
const TOKEN_DELAY: Duration = Duration::from_millis(5);
/// How long a tool takes to run.
const TOOL_TIME: Duration = Duration::from_millis(150);

fn ms(start: Instant) -> String {
    format!("{:7.1} ms", start.elapsed().as_secs_f64() * 1e3)
}

/// The "model": sends the response in small chunks from another thread.
fn simulated_model() -> mpsc::UnboundedReceiver<Result<Bytes, io::Error>> {
    let (tx, rx) = mpsc::unbounded();
    thread::spawn(move || {
        for token in RESPONSE.as_bytes().chunks(TOKEN_BYTES) {
            thread::sleep(TOKEN_DELAY);
            if tx
                .unbounded_send(Ok(Bytes::copy_from_slice(token)))
                .is_err()
            {
                return; // the consumer went away
            }
        }
        // Dropping `tx` ends the stream.
    });
    rx
}

/// A fake tool. It blocks (as a real one might on I/O or a subprocess), so
/// it runs on tokio's blocking pool.
fn get_weather(arguments: &Map<String, Value>) -> String {
    thread::sleep(TOOL_TIME);
    let city = arguments.get("city").and_then(Value::as_str).unwrap_or("?");
    let (temp, sky) = match city {
        "Zürich" => (17, "light rain"),
        "東京" => (26, "sunny"),
        _ => (20, "unknown"),
    };
    format!("{city}: {temp} °C, {sky}")
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let start = Instant::now();
    let parser = Parser::new(
        Registry::builtin().grammar("hermes")?,
        Options::default().with_reasoning(true),
    );
    let mut events = simulated_model().tool_events(parser);

    let mut tools = Vec::new();
    let mut first_dispatch = None;
    let mut text = String::new();
    while let Some(event) = events.next().await {
        match event? {
            Event::Text { delta } => text.push_str(&delta),
            Event::Reasoning { .. } => {}
            Event::ToolCallStart { index, name, .. } => {
                println!("[{}] call {index} ({name}) started streaming", ms(start));
            }
            Event::ToolCallArgs { .. } => {}
            Event::ToolCallEnd {
                index,
                name,
                arguments,
                ..
            } => {
                println!(
                    "[{}] call {index} complete: dispatching {name}({})",
                    ms(start),
                    arguments.compact()
                );
                // Parsed only here, by the code that needs a value.
                let arguments = arguments.parse().unwrap_or_default();
                first_dispatch.get_or_insert_with(Instant::now);
                tools.push(tokio::task::spawn_blocking(move || {
                    println!("[{}]     tool {index} running", ms(start));
                    let result = get_weather(&arguments);
                    println!("[{}]     tool {index} finished: {result}", ms(start));
                    (index, result)
                }));
            }
            Event::Diagnostic(d) => println!("[{}] diagnostic: {d}", ms(start)),
            Event::Done { finish_reason } => {
                println!(
                    "[{}] stream done ({}), text: {:?}",
                    ms(start),
                    finish_reason.as_str(),
                    text.trim()
                );
            }
            _ => {}
        }
    }
    let stream_end = Instant::now();

    for tool in tools {
        let (index, result) = tool.await?;
        println!("result of call {index}: {result}");
    }
    match first_dispatch {
        Some(t) => println!(
            "the first tool was dispatched {:.1} ms before the stream ended",
            (stream_end - t).as_secs_f64() * 1e3
        ),
        None => println!("no tool call in the response"),
    }
    Ok(())
}
