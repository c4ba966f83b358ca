//! How the proxy serves, end to end on loopback: its own `/health` and
//! `/ready` on the serving port (or the upstream's, forwarded), and the
//! bounds it keeps against hostile or broken upstreams and clients. The
//! upstreams are small axum routers or raw TCP servers in this process.

mod logs;

use std::future::Future;
use std::time::Duration;

use axum::routing::get;
use logs::{logged, logs};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use toolscan_proxy::{serve, ProxyConfig};

// ---------------------------------------------------------------- harness

/// Reads one HTTP/1.1 request (its head, and a `Content-Length` body) off
/// `tcp`: the head as text.
async fn read_request(tcp: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = tcp.read(&mut chunk).await.unwrap_or(0);
        if n == 0 {
            return String::from_utf8_lossy(&buf).into_owned();
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = tcp.read(&mut chunk).await.unwrap_or(0);
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    head
}

/// A misbehaving upstream, raw TCP on loopback: each connection's request
/// is read, then `answer` does what it likes with the connection. Its URL.
async fn raw_upstream<F, Fut>(answer: F) -> String
where
    F: Fn(TcpStream, String) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let answer = answer.clone();
            tokio::spawn(async move {
                let head = read_request(&mut tcp).await;
                answer(tcp, head).await;
            });
        }
    });
    url
}

/// The head of an SSE answer, for a raw upstream.
const SSE_HEAD: &str =
    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\n";

/// One chunk of a streamed completion, as an SSE event.
fn sse_chunk(index: u64, content: &str) -> String {
    let chunk = json!({"id": "c", "object": "chat.completion.chunk", "model": "m",
        "choices": [{"index": index, "delta": {"content": content}, "finish_reason": null}]});
    format!("data: {chunk}\n\n")
}

/// A chat request that offers a tool (so the proxy reads the answer).
fn chat_request(stream: bool) -> Value {
    json!({
        "model": "m", "stream": stream,
        "messages": [{"role": "user", "content": "Weather?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}],
    })
}

/// `body` posted raw to the proxy's chat path (HTTP/1.1, closing).
fn chat_bytes(path: &str, body: &Value) -> Vec<u8> {
    let body = body.to_string();
    format!(
        "POST {path} HTTP/1.1\r\nHost: proxy\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Sends `request` to the proxy and reads until it closes (or `within`).
async fn raw(proxy: &Proxy, request: &[u8], within: Duration) -> String {
    let addr = proxy.url.trim_start_matches("http://");
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(request).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(within, tcp.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

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
    /// Sending (or dropping) it is the shutdown signal.
    stop: oneshot::Sender<()>,
}

async fn proxy(config: ProxyConfig) -> Proxy {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = oneshot::channel::<()>();
    tokio::spawn(serve(listener, config, async {
        let _ = rx.await;
    }));
    Proxy { url, stop: tx }
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

// ------------------------------------------------ bounds on the upstream

/// A whole answer larger than `--max-response-bytes`, sized or chunked, is
/// a `502` saying so, not read into memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_answer_over_max_response_bytes_is_a_502() {
    logs();
    let content = "x".repeat(300_000);
    let body = json!({"id": "c", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": "stop"}]})
    .to_string();
    let sized = {
        let body = body.clone();
        raw_upstream(move |mut tcp, _| {
            let body = body.clone();
            async move {
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                    body.len()
                );
                let _ = tcp.write_all(head.as_bytes()).await;
                let _ = tcp.write_all(body.as_bytes()).await;
            }
        })
        .await
    };
    let chunked = raw_upstream(move |mut tcp, _| {
        let body = body.clone();
        async move {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                        transfer-encoding: chunked\r\n\r\n";
            let _ = tcp.write_all(head.as_bytes()).await;
            for piece in body.as_bytes().chunks(10_000) {
                let _ = tcp
                    .write_all(format!("{:x}\r\n", piece.len()).as_bytes())
                    .await;
                let _ = tcp.write_all(piece).await;
                let _ = tcp.write_all(b"\r\n").await;
            }
            let _ = tcp.write_all(b"0\r\n\r\n").await;
        }
    })
    .await;
    for up in [sized, chunked] {
        let mut config = ProxyConfig::new(up);
        config.max_response_bytes = 100_000;
        let p = proxy(config).await;
        let r = client()
            .post(format!("{}/v1/chat/completions", p.url))
            .header("content-type", "application/json")
            .body(chat_request(false).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 502);
        let text = r.text().await.unwrap();
        assert!(text.contains("--max-response-bytes"), "{text}");
    }
    assert!(logged().contains("larger than 100000 bytes"));
}

/// An upstream that keeps the stream open after `events`.
async fn sse_upstream(events: String) -> String {
    raw_upstream(move |mut tcp, _| {
        let events = events.clone();
        async move {
            let _ = tcp.write_all(SSE_HEAD.as_bytes()).await;
            let _ = tcp.write_all(events.as_bytes()).await;
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
    })
    .await
}

/// The streamed answer to a chat request, read until the proxy ends it (or
/// 10 s).
async fn streamed(p: &Proxy) -> String {
    let r = client()
        .post(format!("{}/v1/chat/completions", p.url))
        .header("content-type", "application/json")
        .body(chat_request(true).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let mut r = r;
    let mut text = String::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), async {
        while let Ok(Some(chunk)) = r.chunk().await {
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await;
    text
}

/// One SSE event of many `data:` lines, each under `--max-sse-line`, is
/// bounded by `--max-sse-event`: the stream ends with an error event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_sse_event_of_many_data_lines_ends_the_stream() {
    let mut events = sse_chunk(0, "Hi");
    let line = format!("data: {}\n", "x".repeat(1_000));
    for _ in 0..200 {
        events.push_str(&line);
    }
    let mut config = ProxyConfig::new(sse_upstream(events).await).with_max_sse_line(10_000);
    config.max_sse_event = 50_000;
    let p = proxy(config).await;
    let text = streamed(&p).await;
    assert!(text.contains("\"Hi\""), "{text}");
    assert!(text.contains("--max-sse-event"), "{text}");
    assert!(!text.contains("[DONE]"), "{text}");
}

/// More distinct choices than `--max-choices` (one parser each) end the
/// stream with an error event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_choices_than_max_choices_end_the_stream() {
    let events: String = (0..20).map(|i| sse_chunk(i, "Hi")).collect();
    let mut config = ProxyConfig::new(sse_upstream(events).await);
    config.max_choices = 8;
    let p = proxy(config).await;
    let text = streamed(&p).await;
    assert!(text.contains("\"index\":7"), "{text}");
    assert!(!text.contains("\"index\":8,"), "{text}");
    assert!(
        text.contains("more than 8 choices (--max-choices)"),
        "{text}"
    );
}

// ------------------------------------------------------------ userinfo

/// A user and password in the upstream's URL are printed nowhere: not in
/// the start line, nor the API-base line, nor errors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upstreams_userinfo_is_never_printed() {
    logs();
    let up = upstream(upstream_app()).await;
    let with_secret = up.replace("http://", "http://admin:S3CRET@") + "/v1";
    let p = proxy(ProxyConfig::new(with_secret)).await;
    assert_eq!(get_text(&format!("{}/v1/models", p.url)).await.0, 200);
    let dead = closed_port().replace("http://", "http://admin:S3CRET@");
    let d = proxy(ProxyConfig::new(dead)).await;
    let r = client()
        .post(format!("{}/v1/chat/completions", d.url))
        .header("content-type", "application/json")
        .body(chat_request(true).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 502);
    assert!(!r.text().await.unwrap().contains("S3CRET"));
    let bad = ProxyConfig::new("ftp://admin:S3CRET@h")
        .validate()
        .unwrap_err();
    assert!(!bad.to_string().contains("S3CRET"), "{bad}");
    let logs = logged();
    assert!(
        logs.contains("forwarding to http://***@127.0.0.1"),
        "{logs}"
    );
    assert!(!logs.contains("S3CRET"), "{logs}");
}

// ------------------------------------------------------ client connections

/// A client that sends no (or half a) request head is closed after
/// `--header-read-timeout`; so is a keep-alive connection idle that long.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_and_idle_clients_are_closed_after_the_header_read_timeout() {
    let mut config = ProxyConfig::new(upstream(upstream_app()).await);
    config.header_read_timeout = Duration::from_millis(300);
    let p = proxy(config).await;
    let addr = p.url.trim_start_matches("http://").to_owned();
    let closed_within = |mut tcp: TcpStream, within: Duration| async move {
        let mut buf = [0u8; 1024];
        let began = std::time::Instant::now();
        let read = tokio::time::timeout(within, async {
            loop {
                match tcp.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        })
        .await;
        read.is_ok().then(|| began.elapsed())
    };
    let silent = TcpStream::connect(&addr).await.unwrap();
    assert!(closed_within(silent, Duration::from_secs(5))
        .await
        .is_some());
    let mut slow = TcpStream::connect(&addr).await.unwrap();
    slow.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    assert!(closed_within(slow, Duration::from_secs(5)).await.is_some());
    // Keep-alive: one answer, then idle.
    let mut idle = TcpStream::connect(&addr).await.unwrap();
    idle.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 1024];
    let n = idle.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    let after = closed_within(idle, Duration::from_secs(5)).await;
    assert!(
        after.is_some_and(|t| t >= Duration::from_millis(200)),
        "{after:?}"
    );
}

/// Connections over `--max-connections` are answered `503` and closed;
/// once one closes, a new one is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_max_connections_get_a_503() {
    let mut config = ProxyConfig::new(upstream(upstream_app()).await);
    config.max_connections = Some(2);
    let p = proxy(config).await;
    let addr = p.url.trim_start_matches("http://").to_owned();
    let first = TcpStream::connect(&addr).await.unwrap();
    let _second = TcpStream::connect(&addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let over = raw(
        &p,
        b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n",
        Duration::from_secs(5),
    )
    .await;
    assert!(over.starts_with("HTTP/1.1 503"), "{over}");
    assert!(over.contains("--max-connections"), "{over}");
    drop(first);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let served = raw(
        &p,
        b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        Duration::from_secs(5),
    )
    .await;
    assert!(served.starts_with("HTTP/1.1 200"), "{served}");
    assert!(logged().contains("over --max-connections"));
}

// ---------------------------------------------------------------- paths

/// Dot segments, plain or percent-encoded, are refused before they reach
/// the upstream (which would resolve them out of its prefix, or onto the
/// chat path unread); unreserved escapes are decoded, so
/// `/v1/chat/%63ompletions` is the chat path, read as it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dot_segments_are_refused_and_escaped_paths_routed_as_decoded() {
    let (seen_tx, mut seen) = mpsc::unbounded_channel::<String>();
    let up = raw_upstream(move |mut tcp, head| {
        let seen_tx = seen_tx.clone();
        async move {
            let _ = seen_tx.send(head);
            let body = r#"{"ok": true}"#;
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            let _ = tcp.write_all(answer.as_bytes()).await;
        }
    })
    .await;
    let p = proxy(ProxyConfig::new(format!("{up}/api/llm"))).await;
    let within = Duration::from_secs(5);
    for target in [
        "/../../admin/secret",
        "/%2e%2e/%2e%2e/admin/secret",
        "/v1/%2E%2E/%2e./admin",
        "/v1/x%2f..%2fadmin",
    ] {
        let request = format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        let answer = raw(&p, request.as_bytes(), within).await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{target}: {answer}");
        assert!(answer.contains("dot segment"), "{answer}");
    }
    let answer = raw(
        &p,
        &chat_bytes("/v1/x/../chat/completions", &chat_request(false)),
        within,
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(
        seen.try_recv().is_err(),
        "the upstream saw a refused request"
    );

    let answer = raw(
        &p,
        &chat_bytes("/v1/chat/%63ompletions", &chat_request(false)),
        within,
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let head = seen.recv().await.unwrap();
    assert!(
        head.starts_with("POST /api/llm/v1/chat/completions "),
        "{head}"
    );
    // Read, so asked for `identity`.
    assert!(
        head.to_ascii_lowercase()
            .contains("accept-encoding: identity"),
        "{head}"
    );
}

// ---------------------------------------------------------- cancellation

/// A client that leaves before the answer begins cancels the upstream
/// request: the upstream sees its connection close.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_leaves_before_the_answer_cancels_the_upstream_request() {
    let (closed_tx, mut closed) = mpsc::unbounded_channel::<()>();
    let up = raw_upstream(move |mut tcp, _| {
        let closed_tx = closed_tx.clone();
        async move {
            // A long prefill: nothing sent; the proxy's close is seen.
            let mut buf = [0u8; 64];
            let read = tokio::time::timeout(Duration::from_secs(20), tcp.read(&mut buf)).await;
            if matches!(read, Ok(Ok(0) | Err(_))) {
                let _ = closed_tx.send(());
            }
        }
    })
    .await;
    let p = proxy(ProxyConfig::new(up)).await;
    for stream in [true, false] {
        let addr = p.url.trim_start_matches("http://");
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.write_all(&chat_bytes("/v1/chat/completions", &chat_request(stream)))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        drop(tcp);
        let seen = tokio::time::timeout(Duration::from_secs(5), closed.recv()).await;
        assert!(seen.is_ok(), "stream {stream}: the upstream request ran on");
    }
}

/// A client that half-closes after sending its request still gets the
/// answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_half_closes_after_its_request_gets_the_answer() {
    let up = raw_upstream(|mut tcp, _| async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let body = json!({"id": "c", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Sunny."},
                         "finish_reason": "stop"}]})
        .to_string();
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        let _ = tcp.write_all(answer.as_bytes()).await;
    })
    .await;
    let p = proxy(ProxyConfig::new(up)).await;
    let addr = p.url.trim_start_matches("http://");
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(&chat_bytes("/v1/chat/completions", &chat_request(false)))
        .await
        .unwrap();
    tcp.shutdown().await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut out)).await;
    let out = String::from_utf8_lossy(&out);
    // (An interim `100 Continue` may come first: see `client_io.rs`.)
    let out = out
        .strip_prefix("HTTP/1.1 100 Continue\r\n\r\n")
        .unwrap_or(&out);
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    assert!(out.contains("Sunny."), "{out}");
}

// ------------------------------------------------------------ low items

/// `CONNECT` is `405` (not a tunnel), `GET *` a `400`: neither reaches the
/// upstream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_and_get_star_are_refused_here() {
    let p = proxy(ProxyConfig::new(upstream(upstream_app()).await)).await;
    let within = Duration::from_secs(5);
    let connect = raw(
        &p,
        b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
        within,
    )
    .await;
    assert!(connect.starts_with("HTTP/1.1 405"), "{connect}");
    let star = raw(
        &p,
        b"GET * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        within,
    )
    .await;
    assert!(star.starts_with("HTTP/1.1 400"), "{star}");
    assert!(star.contains("OPTIONS"), "{star}");
}

/// An upstream that compresses an answer the proxy asked for as
/// `identity` (it reads it) is a `502` saying so, not gzip bytes passed
/// on without their `Content-Encoding`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compressed_answer_to_an_identity_request_is_a_502() {
    let up = raw_upstream(|mut tcp, _| async move {
        let body = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xab\xae\x05\x00\x43\xbf\xa6\xa3\x02\x00\x00\x00";
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n\
             content-length: {}\r\n\r\n",
            body.len()
        );
        let _ = tcp.write_all(head.as_bytes()).await;
        let _ = tcp.write_all(body).await;
    })
    .await;
    let p = proxy(ProxyConfig::new(up)).await;
    for stream in [false, true] {
        let r = client()
            .post(format!("{}/v1/chat/completions", p.url))
            .header("content-type", "application/json")
            .body(chat_request(stream).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 502);
        let text = r.text().await.unwrap();
        assert!(text.contains("encoded (`gzip`)"), "{text}");
    }
}

/// Streams still open at the end of the shutdown grace get an SSE error
/// event before the close, and are logged as cut by the shutdown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_open_at_the_end_of_the_grace_get_an_error_event() {
    logs();
    let up = sse_upstream(sse_chunk(0, "Hi")).await;
    let p = proxy(ProxyConfig::new(up).with_shutdown_grace(Duration::from_millis(300))).await;
    let mut r = client()
        .post(format!("{}/v1/chat/completions", p.url))
        .header("content-type", "application/json")
        .body(chat_request(true).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let first = r.chunk().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("Hi"));
    let _ = p.stop.send(());
    let mut rest = String::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), async {
        while let Ok(Some(chunk)) = r.chunk().await {
            rest.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await;
    assert!(rest.contains("shutting down"), "{rest}");
    assert!(rest.contains("\"error\""), "{rest}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let logs = logged();
    let access = logs
        .lines()
        .filter(|l| {
            l.contains("toolscan_proxy::access: access ") && l.contains("outcome=\"shutdown\"")
        })
        .count();
    assert_eq!(access, 1, "{logs}");
}
