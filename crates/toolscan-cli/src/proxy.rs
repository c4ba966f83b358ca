//! `toolscan proxy`: an OpenAI-compatible HTTP proxy in front of a server
//! that writes tool calls as text ([`toolscan_proxy`]): its
//! `/v1/chat/completions` answers, streaming or not, come back with proper
//! `tool_calls`; other routes are forwarded untouched. Stops gracefully on
//! SIGINT or SIGTERM.

use crate::args::ProxyArgs;
use crate::failure::Failure;
use crate::setup::registry_with;

use toolscan_proxy::{serve, shutdown_signal, Metrics, ProxyConfig};

/// Runs `toolscan proxy` until a signal stops it.
pub fn run(args: ProxyArgs) -> Result<(), Failure> {
    let (registry, described) = registry_with(args.format_file.as_deref())?;
    let mut config = args
        .settings
        .with_limits(args.limits.limits())
        .with_registry(registry);
    if config.format.is_none() {
        config.format = described;
    }
    if let Some(path) = &args.model_map {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", path.display())))?;
        let routes = ProxyConfig::parse_routes(&text)
            .map_err(|e| Failure::Usage(format!("`{}`: {e}", path.display())))?;
        config = config.with_routes(routes);
    }
    let metrics = args.metrics_listen.as_ref().map(|_| Metrics::new());
    if let Some(m) = &metrics {
        config = config.with_metrics(m.clone());
    }
    config
        .validate()
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let runtime = crate::runtime::server_runtime(args.workers)?;
    runtime.block_on(async {
        let listener = crate::runtime::listen(&args.listen).await?;
        // (`serve` says where it listens and forwards to.)
        // Metrics and health on their own address, until the proxy stops.
        let metrics_task = match (&args.metrics_listen, metrics) {
            (Some(addr), Some(m)) => {
                let l = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
                    Failure::Usage(format!("cannot listen on `{addr}` for metrics: {e}"))
                })?;
                if let Ok(a) = l.local_addr() {
                    tracing::info!(addr = %a, "metrics on http://{a}/metrics, health on http://{a}/health");
                }
                Some(tokio::spawn(async move {
                    let _ = axum::serve(l, m.router()).await;
                }))
            }
            _ => None,
        };
        let served = serve(listener, config, shutdown_signal())
            .await
            .map_err(|e| Failure::Usage(format!("the proxy stopped: {e}")));
        if let Some(t) = metrics_task {
            t.abort();
        }
        served
    })
}
