//! `toolscan proxy`: an OpenAI-compatible HTTP proxy in front of a server
//! that writes tool calls as text ([`toolscan_proxy`]): its
//! `/v1/chat/completions` answers, streaming or not, come back with proper
//! `tool_calls`; other routes are forwarded untouched. Stops gracefully on
//! SIGINT or SIGTERM.

use crate::args::ProxyArgs;
use crate::failure::Failure;
use crate::setup::registry_with;
use toolscan_proxy::{serve, shutdown_signal, ProxyConfig};

/// Runs `toolscan proxy` until a signal stops it.
pub fn run(args: ProxyArgs) -> Result<(), Failure> {
    let upstream = args.upstream.clone();
    let (registry, described) = registry_with(args.format_file.as_deref())?;
    let mut config = ProxyConfig::new(args.upstream)
        .with_reasoning(args.reasoning)
        .with_calls_in_reasoning(args.calls_in_reasoning.core())
        .with_starts_in_reasoning(args.starts_in_reasoning)
        .with_parse_always(args.parse_always)
        .with_limits(args.limits.limits())
        .with_registry(registry);
    if let Some(format) = args.format.or(described) {
        config = config.with_format(format);
    }
    if let Some(path) = &args.model_map {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", path.display())))?;
        let map = ProxyConfig::parse_model_map(&text)
            .map_err(|e| Failure::Usage(format!("`{}`: {e}", path.display())))?;
        config = config.with_model_map(map);
    }
    config
        .validate()
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Usage(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(&args.listen)
            .await
            .map_err(|e| Failure::Usage(format!("cannot listen on `{}`: {e}", args.listen)))?;
        if let Ok(addr) = listener.local_addr() {
            eprintln!("toolscan proxy: listening on http://{addr}, forwarding to {upstream}");
        }
        serve(listener, config, shutdown_signal())
            .await
            .map_err(|e| Failure::Usage(format!("the proxy stopped: {e}")))
    })
}
