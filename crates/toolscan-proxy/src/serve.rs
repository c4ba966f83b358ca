//! Running the proxy: [`serve`] until a shutdown future resolves, with a
//! grace period for the requests in flight; [`shutdown_signal`].

use std::future::{Future, IntoFuture};
use std::io;

use tracing::{info, warn};

use crate::{try_router, Settings};

/// Serves the proxy on `listener` until `shutdown` resolves, then stops
/// accepting connections and returns once the requests in flight (streams
/// included) have finished, or [`Settings::shutdown_grace`] has passed.
///
/// A configuration that does not [validate](Settings::validate) is an
/// error of kind [`io::ErrorKind::InvalidInput`], before anything is served.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// use toolscan_proxy::{serve, shutdown_signal, ProxyConfig};
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// let config = ProxyConfig::new("http://127.0.0.1:8000").with_format("hermes");
/// serve(listener, config, shutdown_signal()).await
/// # }
/// ```
pub async fn serve<F>(
    listener: tokio::net::TcpListener,
    config: Settings,
    shutdown: F,
) -> io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    let grace = config.shutdown_grace;
    let upstream = config.upstream.clone();
    let app = try_router(config).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    if let Ok(addr) = listener.local_addr() {
        info!(%addr, %upstream, "toolscan proxy: listening on http://{addr}, forwarding to {upstream}");
    }
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        // Chunks are small and latency matters: no Nagle.
        let _ = tcp.set_nodelay(true);
    });
    // The signal starts the grace period; requests still in flight at its
    // end are cut.
    let (signalled, on_signal) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        shutdown.await;
        let _ = signalled.send(());
    };
    let server = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .into_future();
    let deadline = async move {
        match on_signal.await {
            Ok(()) => tokio::time::sleep(grace).await,
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        served = server => served?,
        () = deadline => warn!(
            grace_s = grace.as_secs_f64(),
            "requests still in flight at the end of the shutdown grace period are cut"
        ),
    }
    info!("proxy stopped");
    Ok(())
}

/// Resolves on SIGINT (Ctrl-C) or, on Unix, SIGTERM. A signal whose handler
/// cannot be installed is simply never awaited. The handlers are installed
/// when the future is first polled ([`serve`] polls it at once, from a task
/// of its own).
pub async fn shutdown_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => info!("SIGINT: shutting down"),
        () = terminate => info!("SIGTERM: shutting down"),
    }
}
