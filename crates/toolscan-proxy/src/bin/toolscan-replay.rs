//! `toolscan-replay`: an OpenAI-style upstream that plays recorded
//! completions back (see `toolscan_proxy::replay` for its routes).
//!
//! ```text
//! toolscan-replay [--dir DIR] [--delay-ms N] [--default NAME]
//!                 [--die-after N] [--stamp] [--listen ADDR]
//! ```
//!
//! Prints the URL it serves on (`http://127.0.0.1:PORT`) as the first line
//! of its standard output, then serves until SIGINT or SIGTERM.
#![forbid(unsafe_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use toolscan_proxy::replay::Replay;

/// An OpenAI-style upstream that plays recorded completions back, at token
/// pace: for the proxy's tests, demos, load measurements, and trying the
/// proxy without a model server.
#[derive(Parser, Debug)]
#[command(
    name = "toolscan-replay",
    version,
    after_help = "Routes: POST /v1/chat/completions plays the recording named by the \
request's model, or else the default one (`\"stream\": true`: NAME.sse, one event every \
--delay-ms; otherwise NAME.json). The models fail-500, die-midway and die-at-start misbehave \
on purpose. Also GET /v1/models, /echo and /echo-headers, GET /stats.\n\n\
Prints the URL it serves on as the first line of its standard output, then serves until \
SIGINT or SIGTERM."
)]
struct Args {
    /// The recordings: NAME.sse (streamed answers) and NAME.json (whole
    /// answers) [default: the recordings of examples/data/sse, built into
    /// the binary].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Milliseconds between two events of a stream (a request's own
    /// `replay_delay_ms` field overrides it).
    #[arg(long, value_name = "N", default_value_t = 20)]
    delay_ms: u64,
    /// The recording played for a model that has none of its own
    /// [default: proxy-qwen3-weather].
    #[arg(long, value_name = "NAME")]
    default: Option<String>,
    /// How many events the model `die-midway` sends before it breaks the
    /// connection [default: 5].
    #[arg(long, value_name = "N")]
    die_after: Option<usize>,
    /// Adds the time each event was sent (`replay_sent_us`, microseconds
    /// since the Unix epoch) to its JSON object.
    #[arg(long)]
    stamp: bool,
    /// The address to listen on (port 0: a free port, printed at start).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    listen: String,
}

fn main() -> ExitCode {
    // Bad usage: a message on stderr and exit status 2; `--help` and
    // `--version` on stdout, status 0.
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("toolscan-replay: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolscan-replay: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> std::io::Result<()> {
    let recordings = match &args.dir {
        Some(dir) => Replay::new()
            .load_dir(dir)
            .map_err(|e| std::io::Error::new(e.kind(), format!("--dir {}: {e}", dir.display())))?,
        None => Replay::bundled(),
    };
    let mut replay = recordings
        .with_delay(Duration::from_millis(args.delay_ms))
        .with_stamp(args.stamp);
    if let Some(name) = &args.default {
        replay = replay.with_default(name);
    }
    if let Some(n) = args.die_after {
        replay = replay.with_die_after(n);
    }
    let listener = tokio::net::TcpListener::bind(&args.listen).await?;
    let addr = listener.local_addr()?;
    // The handlers are in place before the address is printed: a signal
    // sent as soon as the address is read stops the server gracefully.
    let shutdown = shutdown()?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "http://{addr}")?;
        out.flush()?;
    }
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, replay.router())
        .with_graceful_shutdown(shutdown)
        .await
}

#[cfg(unix)]
fn shutdown() -> std::io::Result<impl std::future::Future<Output = ()> + Send + 'static> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

#[cfg(not(unix))]
fn shutdown() -> std::io::Result<impl std::future::Future<Output = ()> + Send + 'static> {
    Ok(toolscan_proxy::shutdown_signal())
}
