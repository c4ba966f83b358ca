//! `toolscan sse`: read a recorded OpenAI `chat.completions` stream (SSE),
//! write it rewritten by `toolscan-sse` — text tool calls as
//! `delta.tool_calls` — as SSE on stdout.
//!
//! The input is read asynchronously on a current-thread tokio runtime and
//! every rewritten event is written and flushed as soon as the input event
//! that produced it has arrived, so a live stream piped in streams out.
//! Everything that can fail because of the user's arguments is checked
//! before the first byte is read.

use std::io::{self, Write};
use std::pin::{pin, Pin};

use futures_util::StreamExt;
use tokio::io::AsyncRead;
use tokio_util::io::ReaderStream;
use toolscan_sse::{rewrite_stream, Config, RewriteError};

use crate::args::SseArgs;
use crate::failure::Failure;
use crate::setup::{grammar_and_options, open_input, Input};

/// Runs `toolscan sse`.
pub fn run(args: SseArgs) -> Result<(), Failure> {
    let (grammar, options) = grammar_and_options(&args.content)?;
    let config = Config::new(grammar)
        .with_options(options)
        .with_stream_arguments(args.stream_arguments);
    let input = open_input(args.input.as_deref())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| Failure::Usage(format!("cannot start the async runtime: {e}")))?;
    let result = runtime.block_on(stream(input, config, io::stdout().lock()));
    // Reading stdin blocks a thread that cannot be cancelled: after
    // `[DONE]` the rest of the input is not waited for.
    runtime.shutdown_background();
    result
}

/// Rewrites the input into `out`, flushing after every item.
async fn stream(input: Input, config: Config, mut out: impl Write) -> Result<(), Failure> {
    let name = input.name().to_owned();
    let reader: Pin<Box<dyn AsyncRead + Send>> = match input {
        Input::Stdin => Box::pin(tokio::io::stdin()),
        Input::File(file, _) => Box::pin(tokio::fs::File::from_std(file)),
    };
    let mut events = pin!(rewrite_stream(ReaderStream::new(reader), config));
    while let Some(item) = events.next().await {
        match item {
            Ok(bytes) => {
                out.write_all(&bytes).map_err(Failure::Output)?;
                out.flush().map_err(Failure::Output)?;
            }
            Err(RewriteError::Upstream(e)) => {
                return Err(Failure::Usage(format!("cannot read `{name}`: {e}")));
            }
            Err(e) => return Err(Failure::Usage(format!("`{name}`: {e}"))),
        }
    }
    out.flush().map_err(Failure::Output)
}
