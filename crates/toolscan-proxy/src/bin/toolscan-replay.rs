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

use toolscan_proxy::replay::Replay;

const USAGE: &str = "usage: toolscan-replay [--dir DIR] [--delay-ms N] [--default NAME] \
[--die-after N] [--stamp] [--listen ADDR]

Serves the recordings of DIR (NAME.sse streams, NAME.json whole answers;
default examples/data/sse) on POST /v1/chat/completions, by the request's
model or else the default recording (proxy-qwen3-weather), one event every
--delay-ms (default 20). Models fail-500, die-midway (dies after --die-after
events, default 5) and die-at-start misbehave on purpose. Also GET /v1/models,
/echo and /echo-headers, GET /stats. Listens on --listen (default
127.0.0.1:0) and prints its URL as the first line of stdout.";

struct Args {
    dir: PathBuf,
    delay_ms: u64,
    default: Option<String>,
    die_after: Option<usize>,
    stamp: bool,
    listen: String,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        dir: PathBuf::from("examples/data/sse"),
        delay_ms: 20,
        default: None,
        die_after: None,
        stamp: false,
        listen: "127.0.0.1:0".into(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--dir" => args.dir = PathBuf::from(value("--dir")?),
            "--delay-ms" => {
                args.delay_ms = value("--delay-ms")?
                    .parse()
                    .map_err(|e| format!("--delay-ms: {e}"))?
            }
            "--default" => args.default = Some(value("--default")?),
            "--die-after" => {
                args.die_after = Some(
                    value("--die-after")?
                        .parse()
                        .map_err(|e| format!("--die-after: {e}"))?,
                )
            }
            "--stamp" => args.stamp = true,
            "--listen" => args.listen = value("--listen")?,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(why) if why.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(why) => {
            eprintln!("toolscan-replay: {why}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
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
    let mut replay = Replay::new()
        .load_dir(&args.dir)?
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
