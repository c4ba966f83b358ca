//! How the proxy serves, end to end on loopback: its own `/health` and
//! `/ready` on the serving port (or the upstream's, forwarded), and the
//! bounds it keeps against hostile or broken upstreams and clients. The
//! upstreams are small axum routers or raw TCP servers in this process.

use std::time::Duration;

use axum::routing::get;
use tokio::sync::oneshot;
use toolscan_proxy::{serve, ProxyConfig};

/// `app` on a loopback port: its URL.
async fn upstream(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// A loopback URL nothing listens on.
fn closed_port() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    format!("http://127.0.0.1:{port}")
}

/// The proxy, served on a loopback port until dropped.
struct Proxy {
    url: String,
    _stop: oneshot::Sender<()>,
}

async fn proxy(config: ProxyConfig) -> Proxy {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = oneshot::channel::<()>();
    tokio::spawn(serve(listener, config, async {
        let _ = rx.await;
    }));
    Proxy { url, _stop: tx }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

async fn get_text(url: &str) -> (u16, String) {
    let r = client().get(url).send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

/// An upstream with health and models routes of its own.
fn upstream_app() -> axum::Router {
    axum::Router::new()
        .route("/health", get(|| async { "the upstream's health" }))
        .route("/ready", get(|| async { "the upstream's ready" }))
        .route("/v1/models", get(|| async { r#"{"data": []}"# }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_and_ready_are_answered_on_the_serving_port() {
    let up = upstream(upstream_app()).await;
    let p = proxy(ProxyConfig::new(up.clone())).await;
    assert_eq!(
        get_text(&format!("{}/health", p.url)).await,
        (200, "ok".into())
    );
    assert_eq!(
        get_text(&format!("{}/ready", p.url)).await,
        (200, "ready".into())
    );
    let head = client()
        .head(format!("{}/health", p.url))
        .send()
        .await
        .unwrap();
    assert_eq!(head.status(), 200);
    // Other routes still go upstream.
    let (status, models) = get_text(&format!("{}/v1/models", p.url)).await;
    assert_eq!((status, models.as_str()), (200, r#"{"data": []}"#));

    // An upstream that cannot be reached: alive, not ready.
    let dead = proxy(ProxyConfig::new(closed_port())).await;
    assert_eq!(get_text(&format!("{}/health", dead.url)).await.0, 200);
    let (status, why) = get_text(&format!("{}/ready", dead.url)).await;
    assert_eq!(status, 503, "{why}");
    assert!(why.contains("cannot reach the upstream"), "{why}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forward_health_hands_health_and_ready_to_the_upstream() {
    let up = upstream(upstream_app()).await;
    let mut config = ProxyConfig::new(up);
    config.forward_health = true;
    let p = proxy(config).await;
    assert_eq!(
        get_text(&format!("{}/health", p.url)).await,
        (200, "the upstream's health".into())
    );
    assert_eq!(
        get_text(&format!("{}/ready", p.url)).await,
        (200, "the upstream's ready".into())
    );
}
