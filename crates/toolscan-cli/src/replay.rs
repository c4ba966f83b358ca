//! `toolscan replay`: the replay upstream of `toolscan_proxy::replay`
//! (what the `toolscan-replay` test server serves), with the bundled
//! recordings unless `--dir` names others.

use std::io::Write;
use std::time::Duration;

use toolscan_proxy::replay::Replay;

use crate::args::ReplayArgs;
use crate::failure::Failure;

/// Serves the recordings until SIGINT or SIGTERM; the URL is the first
/// line of stdout.
pub fn run(args: ReplayArgs) -> Result<(), Failure> {
    let recordings = match &args.dir {
        Some(dir) => Replay::new().load_dir(dir).map_err(|e| {
            Failure::Usage(format!(
                "cannot read recordings in `{}`: {e}",
                dir.display()
            ))
        })?,
        None => Replay::bundled(),
    };
    let mut replay = recordings.with_delay(Duration::from_millis(args.delay_ms));
    if let Some(name) = &args.default {
        replay = replay.with_default(name);
    }
    let runtime = crate::runtime::server_runtime(None)?;
    runtime.block_on(async {
        let listener = crate::runtime::listen(&args.listen).await?;
        let addr = listener
            .local_addr()
            .map_err(|e| Failure::Usage(format!("cannot listen on `{}`: {e}", args.listen)))?;
        {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "http://{addr}");
            let _ = out.flush();
        }
        axum::serve(listener, replay.router())
            .with_graceful_shutdown(toolscan_proxy::shutdown_signal())
            .await
            .map_err(|e| Failure::Usage(format!("the replay server stopped: {e}")))
    })
}
