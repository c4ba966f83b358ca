//! Early dispatch: start each tool the moment its call closes, while the
//! model is still writing the rest of the response, and measure what it
//! saves.
//!
//! ```text
//! cargo run --example early_dispatch
//! ```
//!
//! The "model" replays the recorded Qwen3 response of
//! `examples/data/qwen3-weather.txt` (two `get_weather` calls, then a
//! closing sentence) at a realistic rate: one 4-byte token every 20 ms
//! (50 tokens per second). The tool takes 800 ms, as a weather API over
//! the network might.
//!
//! The same replay runs twice, side by side on one runtime:
//!
//! - **early**: the chunks go through
//!   [`EventStreamExt::tool_events`] into a [`Dispatcher`], which starts
//!   `get_weather` in the very poll that yields each `tool_call_end`;
//! - **after the stream**: the events are collected until the response
//!   ends, and only then is the same dispatcher run over them (the "parse
//!   the whole response, then call the tools" way).
//!
//! Each prints its wall time from the first byte to the last tool result;
//! the difference is the tool time hidden behind the streaming (at most the
//! time the model spends writing after the last call).

use std::convert::Infallible;
use std::io;
use std::time::Duration;

use bytes::Bytes;
use futures::stream::{self, Stream, StreamExt, TryStreamExt};
use serde_json::Value;
use tokio::time::Instant;
use toolscan::stream::{CallOutput, Dispatched, Dispatcher, EventStreamExt};
use toolscan::{Event, Options, Parser, Registry, ToolCall};

/// The recorded model output.
const RESPONSE: &str = include_str!("data/qwen3-weather.txt");
/// Bytes per simulated token.
const TOKEN_BYTES: usize = 4;
/// Time between tokens (50 tokens per second).
const TOKEN_DELAY: Duration = Duration::from_millis(20);
/// How long a tool takes.
const TOOL_TIME: Duration = Duration::from_millis(800);
/// Tools that may run at once.
const MAX_CONCURRENT: usize = 4;

/// The "model": the response, one token every `TOKEN_DELAY`, as an HTTP
/// client would hand it over.
fn replay() -> impl Stream<Item = Result<Bytes, io::Error>> {
    stream::iter(RESPONSE.as_bytes().chunks(TOKEN_BYTES)).then(|token| async move {
        tokio::time::sleep(TOKEN_DELAY).await;
        Ok(Bytes::copy_from_slice(token))
    })
}

fn parser() -> Result<Parser, toolscan::Error> {
    Ok(Parser::new(
        Registry::builtin().grammar("hermes")?,
        Options::default().with_reasoning(true),
    ))
}

/// The tool: a fake weather API that takes `TOOL_TIME`.
async fn get_weather(call: ToolCall) -> Result<String, String> {
    if call.name != "get_weather" {
        return Err(format!("unknown tool {}", call.name));
    }
    let arguments = call.arguments.parse().map_err(|e| e.to_string())?;
    let city = arguments
        .get("city")
        .and_then(Value::as_str)
        .ok_or("no city")?
        .to_string();
    tokio::time::sleep(TOOL_TIME).await;
    let (temp, sky) = match city.as_str() {
        "Zürich" => (17, "light rain"),
        "東京" => (26, "sunny"),
        _ => (20, "unknown"),
    };
    Ok(format!("{city}: {temp} °C, {sky}"))
}

fn ms(d: Duration) -> String {
    format!("{:6.0} ms", d.as_secs_f64() * 1e3)
}

/// Dispatches each call as soon as it is complete; prints a timeline.
async fn early() -> Result<(Duration, Vec<CallOutput<String, String>>), Box<dyn std::error::Error>>
{
    let start = Instant::now();
    let events = replay().tool_events(parser()?);
    // Pinned: the replay stream (`then`) is not `Unpin`.
    let mut dispatch =
        std::pin::pin!(Dispatcher::new(get_weather, MAX_CONCURRENT).dispatch(events));
    let mut outputs = Vec::new();
    while let Some(item) = dispatch.next().await {
        match item? {
            Dispatched::Event(Event::ToolCallEnd {
                index,
                name,
                arguments,
                ..
            }) => println!(
                "[{}] early: call {index} complete, {name}({}) started",
                ms(start.elapsed()),
                arguments.compact()
            ),
            Dispatched::Event(Event::Done { finish_reason }) => println!(
                "[{}] early: the response ended ({})",
                ms(start.elapsed()),
                finish_reason.as_str()
            ),
            Dispatched::Event(_) => {}
            Dispatched::Output(output) => {
                println!(
                    "[{}] early: result of call {}: {:?}",
                    ms(start.elapsed()),
                    output.index,
                    output.result
                );
                outputs.push(output);
            }
        }
    }
    Ok((start.elapsed(), outputs))
}

/// Collects the whole response first, then dispatches its calls.
async fn after_stream(
) -> Result<(Duration, Vec<CallOutput<String, String>>), Box<dyn std::error::Error>> {
    let start = Instant::now();
    let events: Vec<Event> = replay().tool_events(parser()?).try_collect().await?;
    let outputs = Dispatcher::new(get_weather, MAX_CONCURRENT)
        .dispatch(stream::iter(events.into_iter().map(Ok::<_, Infallible>)))
        .results()
        .await?;
    Ok((start.elapsed(), outputs))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tokens = RESPONSE.len().div_ceil(TOKEN_BYTES);
    println!(
        "replaying {} bytes as {tokens} tokens, one every {} ms; each tool takes {} ms",
        RESPONSE.len(),
        TOKEN_DELAY.as_millis(),
        TOOL_TIME.as_millis()
    );
    let (early, late) = tokio::join!(early(), after_stream());
    let (early_time, early_outputs) = early?;
    let (late_time, late_outputs) = late?;
    // Both ways give the same results (the call ids differ: the parser
    // mints them at random).
    let results = |outputs: &[CallOutput<String, String>]| {
        outputs
            .iter()
            .map(|o| (o.index, o.name.clone(), o.result.clone()))
            .collect::<Vec<_>>()
    };
    if results(&early_outputs) != results(&late_outputs) {
        return Err("the two runs gave different results".into());
    }

    for output in &early_outputs {
        println!(
            "call {} ({}, {}): {:?}",
            output.index, output.name, output.id, output.result
        );
    }
    println!("wall time, early dispatch:        {}", ms(early_time));
    println!("wall time, dispatch after stream: {}", ms(late_time));
    println!(
        "saved: {} ({:.0}%)",
        ms(late_time.saturating_sub(early_time)),
        100.0 * (1.0 - early_time.as_secs_f64() / late_time.as_secs_f64())
    );
    Ok(())
}
