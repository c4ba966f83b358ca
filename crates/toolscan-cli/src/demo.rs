//! `toolscan demo`: latency you can see. A recorded Qwen3 response (two
//! tool calls, then more text), bundled in the binary, is replayed at token
//! pace as an OpenAI `chat.completions` stream and rewritten as the proxy
//! rewrites it ([`toolscan_sse::rewrite_stream`]); what a client of the
//! proxy receives is printed with timestamps. Each call's tool starts the
//! moment its arguments are complete — while the model is still writing —
//! and the summary says how long before the end of the stream the tools
//! were done.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::io::{self, Write};
use std::pin::pin;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::Value;
use toolscan_core::{Options, Registry};
use toolscan_sse::{rewrite_stream, Config};

use crate::args::DemoArgs;
use crate::failure::Failure;

/// The recording: a vLLM-style stream of a Qwen3 (hermes format) server.
const RECORDING: &str = include_str!("../../../examples/data/sse/demo.sse");

/// Runs `toolscan demo`.
pub fn run(args: DemoArgs) -> Result<(), Failure> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|e| Failure::Usage(format!("cannot start the async runtime: {e}")))?;
    let delay = Duration::from_millis(args.delay_ms);
    let tool = Duration::from_millis(args.tool_ms);
    runtime.block_on(demo(delay, tool, io::stdout()))
}

/// One tool call as the client reassembles it from `delta.tool_calls`.
#[derive(Default)]
struct Call {
    name: String,
    arguments: String,
    dispatched: bool,
}

async fn demo(delay: Duration, tool: Duration, out: impl Write) -> Result<(), Failure> {
    let mut out = Printer {
        out,
        start: Instant::now(),
    };
    // The upstream: one recorded event per token, `delay` apart.
    let events: Vec<Bytes> = RECORDING
        .split_inclusive("\n\n")
        .map(|e| Bytes::copy_from_slice(e.as_bytes()))
        .collect();
    out.say(&format!(
        "A recorded Qwen3 stream ({} events, two tool calls) replayed at {} ms per token, \
         rewritten as `toolscan proxy` rewrites it. What the client receives:",
        events.len(),
        delay.as_millis()
    ))?;
    let upstream = futures_util::stream::iter(events).then(move |e| async move {
        tokio::time::sleep(delay).await;
        Ok::<_, Infallible>(e)
    });
    let grammar = Registry::builtin()
        .grammar("hermes")
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let config = Config::new(grammar).with_options(Options::new().with_reasoning(true));
    let rewritten = rewrite_stream(upstream, config);
    let mut sse = pin!(sse_stream::SseByteStream::new(rewritten));
    out.start = Instant::now();

    let mut calls: BTreeMap<u64, Call> = BTreeMap::new();
    let mut line = String::new();
    let mut reasoning = false;
    let mut tools = tokio::task::JoinSet::new();
    let mut tools_done: Vec<Duration> = Vec::new();
    let mut first_dispatch = None;
    loop {
        let next = tokio::select! {
            event = sse.next() => event,
            Some(done) = tools.join_next(), if !tools.is_empty() => {
                if let Ok((name, at)) = done {
                    out.at(at, &format!("tool        {name} returned its result"))?;
                    tools_done.push(at);
                }
                continue;
            }
        };
        let Some(event) = next else { break };
        let event = event.map_err(|e| Failure::Usage(format!("the demo stream broke: {e}")))?;
        let Some(data) = event.data else { continue };
        if data == "[DONE]" {
            flush_line(&mut out, &mut line, reasoning)?;
            out.now("[DONE]      the stream ended")?;
            break;
        }
        let Ok(chunk) = serde_json::from_str::<Value>(&data) else {
            continue;
        };
        let Some(choice) = chunk["choices"].get(0) else {
            continue;
        };
        let delta = &choice["delta"];
        for (text, is_reasoning) in [
            (delta["reasoning_content"].as_str(), true),
            (delta["content"].as_str(), false),
        ] {
            let Some(text) = text.filter(|t| !t.is_empty()) else {
                continue;
            };
            if is_reasoning != reasoning {
                flush_line(&mut out, &mut line, reasoning)?;
                reasoning = is_reasoning;
            }
            for c in text.chars() {
                if c == '\n' {
                    flush_line(&mut out, &mut line, reasoning)?;
                } else {
                    line.push(c);
                }
            }
        }
        for tc in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = tc["index"].as_u64().unwrap_or(0);
            let call = calls.entry(index).or_default();
            if let Some(name) = tc["function"]["name"].as_str() {
                flush_line(&mut out, &mut line, reasoning)?;
                call.name = name.to_string();
                out.now(&format!("tool_calls  #{index} {name} begins"))?;
            }
            if let Some(args) = tc["function"]["arguments"].as_str() {
                call.arguments.push_str(args);
            }
            // The arguments are exact prefixes of the final JSON: the call
            // can be run as soon as they parse.
            if !call.dispatched && serde_json::from_str::<Value>(&call.arguments).is_ok() {
                call.dispatched = true;
                let at = out.start.elapsed();
                first_dispatch.get_or_insert(at);
                out.at(
                    at,
                    &format!(
                        "tool_calls  #{index} {} {} complete: tool started",
                        call.name, call.arguments
                    ),
                )?;
                let (name, start) = (call.name.clone(), out.start);
                tools.spawn(async move {
                    tokio::time::sleep(tool).await;
                    (name, start.elapsed())
                });
            }
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            flush_line(&mut out, &mut line, reasoning)?;
            out.now(&format!("finish      finish_reason: {reason}"))?;
        }
    }
    let ended = out.start.elapsed();
    while let Some(done) = tools.join_next().await {
        if let Ok((name, at)) = done {
            out.at(at, &format!("tool        {name} returned its result"))?;
            tools_done.push(at);
        }
    }
    let last_tool = tools_done.iter().max().copied().unwrap_or_default();
    if let Some(first) = first_dispatch {
        // Run after the stream instead, all at once, the tools would have
        // been done at `ended + tool`.
        let late = ended + tool;
        out.say(&format!(
            "\nThe first tool started {:.2} s into a {:.2} s stream, and every result was in \
             at {:.2} s. Started only after the stream ended, the same tools would have been \
             done at {:.2} s: {:.2} s later.",
            first.as_secs_f64(),
            ended.as_secs_f64(),
            last_tool.as_secs_f64(),
            late.as_secs_f64(),
            late.saturating_sub(last_tool).as_secs_f64(),
        ))?;
    }
    Ok(())
}

fn flush_line(
    out: &mut Printer<impl Write>,
    line: &mut String,
    reasoning: bool,
) -> Result<(), Failure> {
    if line.trim().is_empty() {
        line.clear();
        return Ok(());
    }
    let what = if reasoning { "reasoning" } else { "content" };
    out.now(&format!("{what:<11} {line}"))?;
    line.clear();
    Ok(())
}

/// Lines with the time since the stream began.
struct Printer<W> {
    out: W,
    start: Instant,
}

impl<W: Write> Printer<W> {
    fn say(&mut self, s: &str) -> Result<(), Failure> {
        writeln!(self.out, "{s}").map_err(Failure::Output)?;
        self.out.flush().map_err(Failure::Output)
    }

    fn now(&mut self, s: &str) -> Result<(), Failure> {
        let at = self.start.elapsed();
        self.at(at, s)
    }

    fn at(&mut self, at: Duration, s: &str) -> Result<(), Failure> {
        self.say(&format!("+{:>6.3}s  {s}", at.as_secs_f64()))
    }
}
