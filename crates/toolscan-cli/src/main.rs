//! `toolscan`: the command line of toolscan.
//!
//! - `toolscan parse` reads model output and writes tool-call events as JSON
//!   Lines, coalesced or not, or the final response object ([`parse`]);
//! - `toolscan sse` rewrites an OpenAI `chat.completions` SSE stream so that
//!   text tool calls become `delta.tool_calls` ([`sse`]);
//! - `toolscan formats` lists the known formats ([`formats`]);
//! - `toolscan render` writes a response in a format, the inverse of
//!   `parse --output final` ([`render`]);
//! - `toolscan manifest` writes the system-prompt section that tells a
//!   model its tools in a format ([`manifest`]);
//! - `toolscan proxy` serves an OpenAI-compatible proxy ([`proxy`]);
//! - `toolscan replay` serves recorded completions, to try the proxy with
//!   ([`replay`]);
//! - `toolscan health URL` asks a URL, for a container's `HEALTHCHECK`
//!   ([`health`]);
//! - `toolscan demo` replays a bundled stream at token pace and shows each
//!   tool starting before the stream ends ([`demo`]);
//! - `toolscan bench` measures a live server's head start ([`bench`]).
//!
//! Modules: [`args`] (clap definitions), [`chunking`] (`--chunk` plans),
//! [`failure`] (exit statuses and stderr messages), [`setup`] (format,
//! tools and input, as `parse` and `sse` read them).
#![forbid(unsafe_code)]

mod args;
mod bench;
mod chunking;
mod demo;
mod failure;
mod formats;
mod health;
mod logging;
mod manifest;
mod parse;
mod proxy;
mod render;
mod replay;
mod runtime;
mod setup;
mod sse;

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser as _;

use crate::args::{Cli, Command};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_failure(&e),
    };
    // The proxy logs its requests; the other subcommands only warnings
    // (their output is on stdout).
    match &cli.command {
        Command::Proxy(args) => logging::init("info", args.log_format),
        Command::Replay(_) => logging::init("info", args::LogFormat::Text),
        _ => logging::init("warn", args::LogFormat::Text),
    }
    let result = match cli.command {
        Command::Parse(args) => parse::run(args),
        Command::Sse(args) => sse::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Proxy(args) => proxy::run(*args),
        Command::Formats(args) => formats::run(args),
        Command::Render(args) => render::run(args),
        Command::Manifest(args) => manifest::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Health(args) => health::run(&args),
        Command::Bench(args) => bench::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report(),
    }
}

/// Handles what clap could not parse: `--help` and `--version` print as
/// usual (exit 0); a missing subcommand prints the help on stderr; any other
/// usage error becomes a one-line message. Those exit with clap's usage
/// status, 2.
fn clap_failure(e: &clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // Writes to stdout or stderr as appropriate; a closed stream is
            // not worth a panic.
            let _ = e.print();
        }
        _ => {
            // The first paragraph of clap's message: its first line and the
            // lines that continue it (the arguments a "required arguments
            // were not provided:" line lists), folded into one.
            let rendered = e.to_string();
            let first: Vec<&str> = rendered
                .lines()
                .map(str::trim)
                .skip_while(|l| l.is_empty())
                .take_while(|l| !l.is_empty())
                .collect();
            let first = first.join(" ");
            let first = first.strip_prefix("error: ").unwrap_or(&first);
            let first = if first.is_empty() {
                "invalid usage"
            } else {
                first
            };
            failure::error(&format!("{first} (see `toolscan --help`)"));
        }
    }
    ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2))
}
