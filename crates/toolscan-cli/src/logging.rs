//! Log lines on stderr: `tracing`'s events, filtered by `RUST_LOG` (or a
//! subcommand's default level), as text or JSON lines.

use tracing_subscriber::EnvFilter;

use crate::args::LogFormat;

/// Installs the subscriber: `RUST_LOG` if set (e.g.
/// `RUST_LOG=toolscan_proxy=debug`), else `default` (a level or a filter
/// directive). A `RUST_LOG` that does not parse is reported and `default`
/// used.
pub fn init(default: &str, format: LogFormat) {
    let filter = match std::env::var("RUST_LOG") {
        Ok(spec) if !spec.trim().is_empty() => EnvFilter::try_new(&spec).unwrap_or_else(|e| {
            crate::failure::error(&format!("RUST_LOG `{spec}` is ignored: {e}"));
            EnvFilter::new(default)
        }),
        _ => EnvFilter::new(default),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    // Another subscriber already installed (none is, in the binary) is
    // not worth failing for.
    let _ = match format {
        LogFormat::Text => builder
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
