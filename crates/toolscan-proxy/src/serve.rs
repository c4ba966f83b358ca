//! Running the proxy: [`serve`] accepts connections itself (hyper's
//! HTTP/1 server, which `axum::serve` does not let one configure): a
//! header-read timeout that is also the keep-alive idle timeout, clients
//! that half-close after their request still answered, a cap on open
//! connections, and a shutdown with a grace period, after which streams
//! still open get an error event; [`shutdown_signal`].

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::AbortHandle;
use tracing::{info, warn};

use crate::cut::Cut;
use crate::drain::Draining;
use crate::redact::redact;
use crate::Settings;

/// How long the streams cut at the end of the grace period have to send
/// their error event.
const CUT_FLUSH: Duration = Duration::from_secs(2);

/// Serves the proxy on `listener` until `shutdown` resolves, then stops
/// accepting connections and returns once the requests in flight (streams
/// included) have finished, or [`Settings::shutdown_grace`] has passed:
/// streams still open then get an SSE error event and end (logged with
/// the outcome `shutdown`).
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
pub async fn serve<F>(listener: TcpListener, config: Settings, shutdown: F) -> io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    let grace = config.shutdown_grace;
    let upstream = redact(&config.upstream);
    let cap = config
        .max_connections
        .unwrap_or_else(default_max_connections);
    let (app, cut) =
        crate::build(config.clone()).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    if let Ok(addr) = listener.local_addr() {
        info!(%addr, %upstream, max_connections = cap, "toolscan proxy: listening on http://{addr}, forwarding to {upstream}");
    }
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_read_timeout)
        // A client that closes its side after its request still gets the
        // answer; one that left is seen by its watch (`client_io.rs`).
        .half_close(true);
    // Set when the shutdown begins: each connection drains.
    let draining = Cut::default();
    let permits = Arc::new(Semaphore::new(cap));
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (tcp, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, say: wait, do not spin.
                    warn!(error = %e, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
            warn!(
                max_connections = cap,
                "a connection over --max-connections refused: 503"
            );
            tokio::spawn(refuse(tcp));
            continue;
        };
        // Chunks are small and latency matters: no Nagle.
        let _ = tcp.set_nodelay(true);
        let (io, left) = crate::client_io::watched(tcp);
        let service = TowerToHyperService::new(app.clone());
        let conn = builder.serve_connection(TokioIo::new(io), service);
        let conn = Draining::new(conn, draining.watch());
        spawn_watched(conn, left, permit);
    }
    drop(listener);
    draining.cancel();
    finish(&permits, cap, cut, grace).await;
    info!("proxy stopped");
    Ok(())
}

/// Runs a connection in a task of its own, and its watch in another: when
/// the watch finds the client gone before its answer, it aborts the
/// connection's task (dropping the connection drops its request, and the
/// upstream's); when the connection ends, its task aborts the watch. Two
/// tasks, not one `select!` over both, so that the connection's every wake
/// (one or two an upstream event) does not poll the watch too. `permit`
/// (the connection's place under `--max-connections`) is released with
/// the connection's task.
fn spawn_watched<C, W>(conn: C, left: W, permit: OwnedSemaphorePermit)
where
    C: Future + Send + 'static,
    W: Future<Output = ()> + Send + 'static,
{
    let (watch_tx, watch_rx) = tokio::sync::oneshot::channel::<AbortHandle>();
    let serving = tokio::spawn(async move {
        let _ = conn.await;
        drop(permit);
        if let Ok(watch) = watch_rx.await {
            watch.abort();
        }
    });
    let abort = serving.abort_handle();
    let watch = tokio::spawn(async move {
        left.await;
        abort.abort();
    });
    // (Fails only when the connection's task already ended and took the
    // receiver with it: then the watch is aborted here.)
    if let Err(watch) = watch_tx.send(watch.abort_handle()) {
        watch.abort();
    }
}

/// After the signal, the connections draining: they finish (idle ones
/// close at once) within `grace`, each giving its place under the cap
/// back (`permits`, `cap` of them); then the streams still open are cut,
/// with an error event each, and get a moment to send it.
async fn finish(permits: &Semaphore, cap: usize, cut: Cut, grace: Duration) {
    let all = u32::try_from(cap).unwrap_or(u32::MAX);
    let mut done = std::pin::pin!(permits.acquire_many(all));
    if tokio::time::timeout(grace, &mut done).await.is_ok() {
        return;
    }
    warn!(
        grace_s = grace.as_secs_f64(),
        "requests still in flight at the end of the shutdown grace period are cut"
    );
    cut.cancel();
    let _ = tokio::time::timeout(CUT_FLUSH, done).await;
}

/// A connection over the cap: a `503` and the close.
async fn refuse(mut tcp: TcpStream) {
    let body = r#"{"error":{"message":"the proxy has too many connections open (--max-connections); try again","type":"server_error","param":null,"code":null}}"#;
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\nretry-after: 1\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        let _ = tcp.write_all(answer.as_bytes()).await;
        let _ = tcp.shutdown().await;
    })
    .await;
}

/// Half the soft open-files limit (Linux: `/proc/self/limits`), else 512.
fn default_max_connections() -> usize {
    std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|limits| {
            let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
            let soft = line.split_whitespace().nth(3)?;
            soft.parse::<usize>().ok()
        })
        .map_or(512, |soft| (soft / 2).max(1))
}

/// Resolves on SIGINT (Ctrl-C) or, on Unix, SIGTERM. A signal whose handler
/// cannot be installed is simply never awaited. The handlers are installed
/// when the future is first polled ([`serve`] polls it at once).
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
