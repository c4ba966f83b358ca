//! Streams a file of model output through a [`Parser`] in small chunks, as
//! if it were arriving token by token, and prints every event as one JSON
//! line on stdout.
//!
//! ```text
//! cargo run --example stream_file                       # examples/data/qwen3-weather.txt
//! cargo run --example stream_file -- examples/data/deepseek-v3.1.txt
//! cargo run --example stream_file -- examples/data/mistral-v11.txt --format mistral-v11 --chunk 1
//! cargo run --example stream_file -- --reasoning        # <think> content as `reasoning` events
//! ```
//!
//! Options: `--format NAME` (default `auto`), `--chunk N` bytes per feed
//! (default 4, about one token), `--reasoning` (reasoning separation on).
//!
//! On stderr, a note marks the moment each call can be dispatched: the
//! chunk whose bytes completed it, long before the end of the input. A
//! program would start the tool right there instead of waiting for the
//! response to end.

use std::process::ExitCode;

use toolscan::{Event, Options, Parser, Registry};

struct Args {
    path: String,
    format: String,
    chunk: usize,
    reasoning: bool,
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("{msg}");
    eprintln!("usage: stream_file [FILE] [--format NAME|auto] [--chunk N] [--reasoning]");
    ExitCode::from(2)
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        path: concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/data/qwen3-weather.txt"
        )
        .into(),
        format: "auto".into(),
        chunk: 4,
        reasoning: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--format" => args.format = it.next().ok_or("--format needs a name")?,
            "--chunk" => {
                args.chunk = it
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|&n| n > 0)
                    .ok_or("--chunk needs a positive number")?;
            }
            "--reasoning" => args.reasoning = true,
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            path => args.path = path.into(),
        }
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(msg) => return usage(&msg),
    };
    let input = match std::fs::read(&args.path) {
        Ok(bytes) => bytes,
        Err(e) => return usage(&format!("cannot read {}: {e}", args.path)),
    };
    let grammar = match Registry::builtin().grammar(&args.format) {
        Ok(g) => g,
        Err(e) => return usage(&e.to_string()),
    };
    let mut parser = Parser::new(grammar, Options::default().with_reasoning(args.reasoning));
    eprintln!(
        "# {} ({} bytes), format {}, {}-byte chunks",
        args.path,
        input.len(),
        args.format,
        args.chunk
    );

    let mut events = Vec::new();
    for chunk in input.chunks(args.chunk) {
        parser.feed_into(chunk, &mut events);
        report(&mut events, parser.offset(), input.len());
    }
    parser.finish_into(&mut events);
    report(&mut events, parser.offset(), input.len());
    ExitCode::SUCCESS
}

/// Prints the events of one feed and empties the buffer.
fn report(events: &mut Vec<Event>, fed: u64, total: usize) {
    for event in events.drain(..) {
        println!(
            "{}",
            serde_json::to_string(&event).expect("events serialise")
        );
        if let Event::ToolCallEnd {
            index, name, id, ..
        } = &event
        {
            eprintln!(
                "# byte {fed}/{total}: call {index} ({name}, {id}) is complete: dispatch it now \
                 ({} bytes of the response still to come)",
                total as u64 - fed
            );
        }
    }
}
