//! `toolscan proxy` as a process, as a deployment runs it: flags from the
//! environment, JSON log lines on stderr (one access line per request),
//! metrics and health on an address of their own. The upstream is the
//! replay server, served in this test on loopback.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use toolscan_proxy::replay::Replay;

const BIN: &str = env!("CARGO_BIN_EXE_toolscan");

/// A free loopback port (bound, then released for the child to bind).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_process_logs_json_access_lines_and_serves_metrics() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/sse");
    let replay = Replay::new()
        .load_dir(&data)
        .expect("recordings")
        .with_delay(Duration::from_millis(0));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, replay.router()).await });

    let (port, metrics_port) = (free_port(), free_port());
    let mut child = Command::new(BIN)
        .arg("proxy")
        .env("TOOLSCAN_UPSTREAM", &upstream)
        .env("TOOLSCAN_LISTEN", format!("127.0.0.1:{port}"))
        .env(
            "TOOLSCAN_METRICS_LISTEN",
            format!("127.0.0.1:{metrics_port}"),
        )
        .env("TOOLSCAN_LOG_FORMAT", "json")
        // One thread: the current-thread runtime serves it all.
        .env("TOOLSCAN_WORKERS", "1")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolscan proxy starts");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    // Wait for both listeners.
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let health = format!("http://127.0.0.1:{metrics_port}/health");
    let mut up = false;
    for _ in 0..200 {
        if client
            .get(&health)
            .send()
            .await
            .is_ok_and(|r| r.status() == 200)
        {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(up, "the health check answers");
    // The main thread, and at most one of the blocking pool (the
    // listeners' address lookups): no worker threads.
    #[cfg(target_os = "linux")]
    {
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
        let threads: usize = status
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0);
        assert!((1..=2).contains(&threads), "{threads} threads");
    }

    let request = json!({
        "model": "Qwen/Qwen3-8B",
        "stream": true,
        "messages": [{"role": "user", "content": "Weather?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}],
    });
    let body = client
        .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
        .header("content-type", "application/json")
        .body(request.to_string())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(body.contains("\"tool_calls\""), "{body}");

    // The access line: JSON, with the upstream's status and the calls.
    let mut access = None;
    for _ in 0..100 {
        match tokio::time::timeout(Duration::from_millis(100), rx.recv()).await {
            Ok(Some(line)) => {
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("a log line that is not JSON ({e}): {line}"));
                if v["target"] == "toolscan_proxy::access" {
                    access = Some(v);
                    break;
                }
            }
            Ok(None) => break,
            Err(_) => {}
        }
    }
    let access = access.expect("an access line");
    assert_eq!(access["fields"]["status"], 200, "{access}");
    assert_eq!(access["fields"]["upstream_status"], 200, "{access}");
    assert_eq!(access["fields"]["calls"], 2, "{access}");
    assert_eq!(access["span"]["path"], "/v1/chat/completions", "{access}");

    let metrics = client
        .get(format!("http://127.0.0.1:{metrics_port}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("toolscan_proxy_tool_calls_total 2"),
        "{metrics}"
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// `toolscan health URL` (the container's `HEALTHCHECK`): exit 0 on a 2xx,
/// 1 on any other status, an unreachable URL or one that does not answer
/// within `--timeout`; the proxy's own `/health` and `/ready` on its
/// serving port answer it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn toolscan_health_exits_0_on_2xx_and_1_otherwise() {
    use axum::routing::get;
    let app = axum::Router::new()
        .route("/ok", get(|| async { "ok" }))
        .route(
            "/down",
            get(|| async { (axum::http::StatusCode::SERVICE_UNAVAILABLE, "down") }),
        )
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                "late"
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    // A proxy over that server (`/v1/models` there is a 404: the upstream
    // answers, so the proxy is ready), and one over a closed port.
    let proxy = serve_proxy(&base).await;
    let dead = serve_proxy(&format!("http://127.0.0.1:{}", free_port())).await;

    let status = |args: Vec<String>| {
        tokio::task::spawn_blocking(move || {
            let out = Command::new(BIN)
                .arg("health")
                .args(&args)
                .stdin(Stdio::null())
                .output()
                .expect("toolscan health runs");
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        })
    };
    let closed = format!("http://127.0.0.1:{}/health", free_port());
    for (url, want) in [
        (format!("{base}/ok"), 0),
        (format!("{base}/down"), 1),
        (format!("{base}/missing"), 1),
        (closed, 1),
        (format!("{proxy}/health"), 0),
        (format!("{proxy}/ready"), 0),
        (format!("{dead}/health"), 0),
        (format!("{dead}/ready"), 1),
    ] {
        let (code, stderr) = status(vec![url.clone()]).await.unwrap();
        assert_eq!(code, Some(want), "{url}: {stderr}");
    }
    let began = std::time::Instant::now();
    let (code, stderr) = status(vec![
        format!("{base}/slow"),
        "--timeout".into(),
        "0.3".into(),
    ])
    .await
    .unwrap();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("did not answer within"), "{stderr}");
    assert!(began.elapsed() < Duration::from_secs(10));
}

/// The proxy to `upstream`, served in this process: its URL.
async fn serve_proxy(upstream: &str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let config = toolscan_proxy::ProxyConfig::new(upstream);
    tokio::spawn(toolscan_proxy::serve(
        listener,
        config,
        std::future::pending(),
    ));
    url
}
